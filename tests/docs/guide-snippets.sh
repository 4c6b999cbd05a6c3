#!/usr/bin/env bash
# guide-snippets.sh: the C, C++ and Fortran steps of docs/user-guide.md (and scimesh_step(3)'s example) compile warning-free and run as real steps.
#
#   guide-snippets.sh compile    extract pi_step.c/.cc/.f90 from the guide, and the
#                                C example of scimesh_step(3), and build them
#   guide-snippets.sh run        also run each as a 2-rank step: coordinator +
#                                scimesh-launch (local backend) + mpirun, and
#                                check the outputs and the uploaded artifact
#
# Environment (tests/docs/CMakeLists.txt): SCIMESH_SOURCE_DIR, SCIMESH_MPI_LIB_DIR,
# SCIMESH_MPI_FORTRAN_LIB_DIR, SCIMESH_MPI_FORTRAN_MODULE_DIR, MPI_C_COMPILER,
# MPI_CXX_COMPILER, MPI_Fortran_COMPILER;
# for run also SCIMESH_COORDINATOR_BIN, SCIMESH_LAUNCH_BIN, SCIMESH_TEST_WORK.
mode=${1:?usage: $0 compile|run}
: "${SCIMESH_TEST_WORK:=$(mktemp -d)}"
source "$(dirname "$0")/../lib/harness.sh"
harness_init "docs-guide-$mode"
lsan_without_tls_roots
guide=${SCIMESH_SOURCE_DIR:?}/docs/user-guide.md

source "$(dirname "$0")/guide-lib.sh"
guide_extract_steps "$WORK"
# The C example of scimesh_step(3): the .EX block that includes scimesh/step.h.
awk '/^\.EX$/ { inside = 1; text = ""; next }
     /^\.EE$/ { if (text ~ /#include <scimesh\/step.h>/) printf "%s", text; inside = 0; next }
     inside { text = text $0 "\n" }' "$SCIMESH_SOURCE_DIR/docs/man/scimesh_step.3" |
  sed -e 's/\\e/\\/g; s/\\-/-/g; s/\\(aq/'"'"'/g; s/\\(dq/"/g; s/\\&//g' >"$WORK/man_example.c"
[[ -s $WORK/man_example.c ]] || fail "scimesh_step(3) has no C example"

lib=${SCIMESH_MPI_LIB_DIR:?} flib=${SCIMESH_MPI_FORTRAN_LIB_DIR:?} include=$SCIMESH_SOURCE_DIR/mpi/include
link=(-L"$lib" -Wl,-rpath,"$lib")
# A sanitizer build's library needs its runtime first: compile the snippets
# with the same -fsanitize flags (SCIMESH_SANITIZE_FLAGS is empty otherwise).
read -ra san <<<"${SCIMESH_SANITIZE_FLAGS:-}"
cd "$WORK"
"${MPI_C_COMPILER:?}" "${san[@]}" -Wall -Wextra -Werror -O2 -I"$include" pi_step.c -o pi_step_c "${link[@]}" -lscimesh_mpi -lm ||
  fail "the guide's C step does not compile"
"$MPI_C_COMPILER" "${san[@]}" -Wall -Wextra -Werror -O2 -I"$include" man_example.c -o man_example "${link[@]}" -lscimesh_mpi ||
  fail "the C example of scimesh_step(3) does not compile"
"${MPI_CXX_COMPILER:?}" "${san[@]}" -Wall -Wextra -Werror -O2 -DOMPI_SKIP_MPICXX=1 -I"$include" pi_step.cc -o pi_step_cxx \
  "${link[@]}" -lscimesh_mpi || fail "the guide's C++ step does not compile"
"${MPI_Fortran_COMPILER:?}" "${san[@]}" -Wall -Werror -O2 -I"${SCIMESH_MPI_FORTRAN_MODULE_DIR:?}" pi_step.f90 -o pi_step_f \
  -L"$flib" -Wl,-rpath,"$flib" "${link[@]}" -lscimesh_mpi_fortran -lscimesh_mpi || fail "the guide's Fortran step does not compile"
note "the guide's C, C++ and Fortran steps and the example of scimesh_step(3) compile with -Wall -Werror"
[[ $mode == run ]] || exit 0

coordinator_start --heartbeat-ms 1000
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
cat >pi.json <<'JSON'
{"workflow": "pi", "version": "1", "steps": [
  {"id": "c", "input": {"intervals": "{{input.intervals}}"}, "max_attempts": 1,
   "resources": {"nodes": 1, "ranks_per_node": 2}, "run": {"argv": ["./pi_step_c"], "native": true}},
  {"id": "cxx", "input": {"intervals": "{{input.intervals}}"}, "max_attempts": 1,
   "resources": {"nodes": 1, "ranks_per_node": 2}, "run": {"argv": ["./pi_step_cxx"], "native": true}},
  {"id": "fortran", "input": {"intervals": "{{input.intervals}}"}, "max_attempts": 1,
   "resources": {"nodes": 1, "ranks_per_node": 2}, "run": {"argv": ["./pi_step_f"], "native": true}}]}
JSON
SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "${SCIMESH_LAUNCH_BIN:?}" --backend local --definitions pi.json \
  --spool "$WORK/spool" --idle-exit 3 --wait-ms 1000 >"$WORK/launcher.log" 2>&1 &
launcher=$!
CLEANUP_PIDS+=("$launcher")
registered() { grep -q registered "$WORK/launcher.log"; }
wait_for "the launcher registered pi" 20 registered

run=$(run_start pi '{"intervals": 20000000}')
status=$(wait_run "$run" 120)
show=$(api GET "/runs/$run")
[[ $status == completed ]] || fail "the run of the guide's steps ended $status: $show"
for step in c cxx fortran; do
  out=$(jq -c --arg s "$step" '.steps[] | select(.step_id == $s) | .output' <<<"$show")
  jq -e '(.pi - 3.141592653589793 | fabs) < 1e-9 and .ranks == 2 and .intervals == 20000000' <<<"$out" >/dev/null ||
    fail "step $step: wrong output $out"
  sha=$(jq -r --arg s "$step" '.steps[] | select(.step_id == $s) | .artifacts[] | select(.name == "pi.txt") | .sha256' <<<"$show")
  file=$(find "$WORK/spool/$run/$step" -path '*/artifacts/pi.txt' | head -n1)
  [[ -n $file && $sha == $(sha256sum "$file" | cut -d' ' -f1) ]] || fail "step $step: pi.txt at the coordinator differs"
  note "step $step: $out"
done
wait "$launcher" || fail "the launcher exited non-zero"
note "the guide's steps run: OK"
