#!/usr/bin/env bash
# guide-workstation.sh: docs/user-guide.md's "Building" lines and its "Try it
# on your workstation" section, run as written against this build tree (after
# `. <build>/scimesh-env.sh`, as the guide says): each link line makes a
# program whose libraries resolve, and the section's run completes with pi.
# The blocks are read from the guide, so the test breaks when the guide drifts.
#
# Environment (tests/docs/CMakeLists.txt): SCIMESH_SOURCE_DIR, SCIMESH_BUILD_DIR,
# SCIMESH_TEST_WORK, SCIMESH_SANITIZE_FLAGS. The section's coordinator listens
# on its default port (8470): where this runs as root, it runs in a network
# namespace of its own, so no other coordinator on this machine is in the way.
source "$(dirname "$0")/../lib/harness.sh"
harness_init docs-guide-workstation
lsan_without_tls_roots
guide=${SCIMESH_SOURCE_DIR:?}/docs/user-guide.md
source "$(dirname "$0")/guide-lib.sh"
if [[ -n ${SCIMESH_SANITIZE_FLAGS:-} ]]; then
  echo "skipped: the guide's link lines do not add a sanitizer's flags"
  exit 77
fi
env_file=${SCIMESH_BUILD_DIR:?}/scimesh-env.sh
[[ -r $env_file ]] || fail "the build tree has no scimesh-env.sh"
# shellcheck source=/dev/null
. "$env_file"

export HOME=$WORK/home
try=$HOME/pi-try
mkdir -p "$try"
guide_extract_steps "$try"

# "Building": every command of the block (continuation lines joined), each
# run as written in ~/pi-try; what it links must find its libraries.
guide_sh_block '### Building' 1 | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -v '^ *#' >"$WORK/building.txt"
(( $(wc -l <"$WORK/building.txt") >= 3 )) || fail "the guide's Building block has fewer than 3 commands"
cd "$try"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  rm -f pi_step
  bash -euc "$line" >"$WORK/build-$n.log" 2>&1 || fail "Building line $n fails as written: $line: $(tail -n 5 "$WORK/build-$n.log")"
  ldd ./pi_step >"$WORK/ldd-$n.txt" || fail "line $n made no program: $line"
  ! grep 'not found' "$WORK/ldd-$n.txt" || fail "line $n: a library is not found at run time: $line"
  mv pi_step "pi_step.$n"
  note "Building line $n: OK ($(grep -o 'libscimesh[^ ]* => [^ ]*' "$WORK/ldd-$n.txt" | tr '\n' ' '))"
done <"$WORK/building.txt"
cp pi_step.1 pi_step  # the C step

# "Try it on your workstation": the block as written; then the launcher is
# stopped rather than left to its 30 s idle exit.
{
  echo 'set -e'
  echo 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # as the guide says, for root'
  guide_sh_block '### Try it on your workstation (no SLURM)' 1
  echo 'kill %2 2>/dev/null || true'
  echo 'wait'
} >"$WORK/workstation.sh"
grep -q 'scimesh-launch' "$WORK/workstation.sh" || fail "the guide's workstation block was not found"
guide_recipe_reruns "$WORK/workstation.sh" "the guide's workstation block"
cd "$WORK"
if [[ $(id -u) == 0 ]] && unshare -n true 2>/dev/null; then
  runner=(unshare -n bash -c 'ip link set lo up && exec bash "$0"' "$WORK/workstation.sh")
else
  runner=(bash "$WORK/workstation.sh")
fi
# Twice in a row in the same directory: the second run keeps the keys and
# reopens the database, and completes as the first did.
for round in 1 2; do
  timeout 180 "${runner[@]}" >"$WORK/workstation.out" 2>"$WORK/workstation.log" ||
    fail "the workstation section fails as written in round $round (exit $?): $(tail -n 5 "$WORK/workstation.log"; tail -n 5 "$try/launcher.log")"
  cat "$WORK/workstation.out"
  grep -qE '"pi": 3\.14159' "$WORK/workstation.out" || fail "round $round: the run's output has no pi"
  grep -qE '"ranks": 2' "$WORK/workstation.out" || fail "round $round: the run's output is not from 2 ranks"
  note "the guide's workstation section, as written, round $round: OK"
done

# Port 8470 taken: the block stops at its wait loop, within seconds, showing
# the coordinator's reason (it used to wait forever).
if [[ ${runner[0]} == unshare ]]; then
  {
    echo 'python3 -c "import socket, time; s = socket.socket(); s.bind((\"127.0.0.1\", 8470)); s.listen(); time.sleep(120)" &'
    echo 'trap "kill \$(jobs -p) 2>/dev/null" EXIT'
    # Until the listener is up (a fixed sleep lost the race on a loaded machine).
    echo 'for _ in $(seq 200); do (: </dev/tcp/127.0.0.1/8470) 2>/dev/null && break; sleep 0.05; done'
    cat "$WORK/workstation.sh"
  } >"$WORK/port-taken.sh"
  runner[-1]=$WORK/port-taken.sh
  rc=0
  started=$SECONDS
  timeout 60 "${runner[@]}" >"$WORK/port-taken.out" 2>"$WORK/port-taken.log" || rc=$?
  ((rc != 0 && rc != 124)) || fail "with port 8470 taken the block did not stop on its own (exit $rc)"
  grep -q 'Address already in use' "$WORK/port-taken.out" ||
    fail "with port 8470 taken the block did not say why: $(tail -n 5 "$WORK/port-taken.out")"
  # The coordinator exits at once; the loop looks every 0.5 s (the launcher
  # alone would wait out its 30 s call timeout on a listener that never answers).
  ((SECONDS - started <= 10)) || fail "with port 8470 taken the block took $((SECONDS - started)) s to stop"
  note "the workstation section with port 8470 taken: stopped after $((SECONDS - started)) s, saying why: OK"
else
  note "skipped the port-taken case: it needs its own network namespace (root)"
fi
