#!/usr/bin/env bash
# workstation.sh EXAMPLE: an example's "On a workstation" recipe, read from its
# README and run as written, twice in a row (a second try must work too), the
# way a user runs it: from the top of a checkout whose build tree is
# build/dev, HOME a fresh directory, the local backend, a real coordinator on
# its default port. Then what the user would look at is checked: the run
# completed on one node with 2 ranks, and its results are right. The block
# is read from the README, so the test breaks when the README or the files
# it names drift (a 2-node step on a 1-node machine stays queued: the block
# times out).
#
# EXAMPLE: heat-case, heat-py, poisson, worker-hello (their README.md),
# mesh-study or fill (examples/README.md). Environment (tests/demo/CMakeLists.txt):
# SCIMESH_SOURCE_DIR, SCIMESH_BUILD_DIR, SCIMESH_COORDINATOR_BIN, SCIMESH_TEST_WORK;
# for heat-py SCIMESH_PYTHON, the python3 with numpy and mpi4py.
source "$(dirname "$0")/../lib/harness.sh"
example=${1:?heat-case, heat-py, poisson, worker-hello, mesh-study or fill}
harness_init "demo-workstation-$example"
lsan_without_tls_roots
src=${SCIMESH_SOURCE_DIR:?} build=${SCIMESH_BUILD_DIR:?}
case $example in
  heat-case|heat-py|poisson|worker-hello) readme=examples/$example/README.md heading='## On a workstation' ;;
  mesh-study) readme=examples/README.md heading='## On a workstation: the mesh study' ;;
  fill) readme=examples/README.md heading='## On a workstation: fill.sbatch' ;;
  *) fail "no such example: $example" ;;
esac
guide=$src/$readme
# A sanitizer build's libscimesh_mpi cannot load into an uninstrumented
# python3 unless its runtimes are preloaded (tests/python/python-lib.sh),
# which the recipe, as written for users, does not do: skipped there.
if [[ $example == heat-py && ${SCIMESH_SANITIZE_FLAGS:-} == *address* ]]; then
  note "heat-py: skipped in a sanitizer build (python3 would need the ASan runtime preloaded)"
  exit 77
fi
source "$(dirname "$0")/../docs/guide-lib.sh"

# The checkout as the user has it: examples/ of the source tree, this build as build/dev.
top=$WORK/checkout
mkdir -p "$top/build" "$WORK/home"
ln -s "$src/examples" "$top/examples"
ln -s "$build" "$top/build/dev"
export HOME=$WORK/home

# The build lines the recipe relies on name targets of this build (a dry run).
while IFS= read -r line; do
  targets=$(sed -n 's/.*cmake --build build\/dev --target //p' <<<"$line")
  [[ -n $targets ]] || continue
  # shellcheck disable=SC2086 # the target list, split as the README's line splits it
  cmake --build "$build" --target $targets -- -n >"$WORK/dry-run.txt" 2>&1 ||
    fail "$readme names a target this build does not have: $line: $(tail -n 2 "$WORK/dry-run.txt")"
done < <(grep -h 'cmake --build build/dev --target' "$guide")

# The recipe: the last sh block of its section, as written.
block=0
while [[ -n $(guide_sh_block "$heading" $((block + 1))) ]]; do block=$((block + 1)); done
((block > 0)) || fail "$readme has no sh block under '$heading'"
{
  echo 'set -e'
  echo 'export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # as the README says, for root'
  # heat-py: the README's `python3` is one with numpy and mpi4py. The one
  # first on this machine's PATH may lack them (a pyenv build): the user's
  # python3 is SCIMESH_PYTHON here (Debian's), first on PATH as `python3`.
  if [[ $example == heat-py ]]; then
    mkdir -p "$WORK/python-bin" && ln -sf "${SCIMESH_PYTHON:?set by CTest}" "$WORK/python-bin/python3"
    echo "export PATH=$WORK/python-bin:\$PATH"
  fi
  guide_sh_block "$heading" "$block"
} >"$WORK/recipe.sh"
guide_recipe_reruns "$WORK/recipe.sh" "the recipe under '$heading' in $readme"
# The coordinator listens on its default port (8470): as root, each try runs
# in a network namespace of its own, so no other coordinator is in the way.
if [[ $(id -u) == 0 ]] && unshare -n true 2>/dev/null; then
  runner=(unshare -n bash -c 'ip link set lo up && exec bash "$0"' "$WORK/recipe.sh")
else
  runner=(bash "$WORK/recipe.sh")
fi
for try in 1 2; do
  (cd "$top" && timeout "$(scaled 150)" "${runner[@]}" >"$WORK/recipe-$try.out" 2>"$WORK/recipe-$try.log") ||
    fail "try $try: the recipe under '$heading' in $readme fails as written (exit $?): $(tail -n 8 "$WORK/recipe-$try.log")"
  note "try $try: the recipe ran; it printed:"
  cat "$WORK/recipe-$try.out"
done
out=$WORK/recipe-2.out

# One node, 2 ranks: what the launcher placed (events file of the try directory).
placed_on_one_node() {
  local events=$1 want=$2 got
  got=$(jq -r 'select(.event=="place") | [.nodes[] | "\(.ranks)"] | join(",")' "$events" | sort -u | paste -sd' ')
  [[ $got == "$want" ]] || fail "steps were placed as '$got' ranks per node, not '$want': $events"
}
# The report's table: 3 rows, each order past the first in [1.8, 2.2].
orders_are_second() {
  awk '!/^#/ && NF == 5 { rows++; if ($5 != "-" && ($5 < 1.8 || $5 > 2.2)) bad = 1 }
       END { exit !(rows == 3 && !bad) }' "$1" || fail "not a 3-row table of second-order errors: $(cat "$1")"
}

case $example in
  heat-case)
    line=$(grep '"parts"' "$out" | tail -n 1)
    jq -e '.parts == 2 and (.hosts | length) == 2 and .max_error < 1e-4' <<<"$line" >/dev/null ||
      fail "the heat case's output is not 2 accurate parts: $line"
    grep -q '200 points in 2 parts' "$out" || fail "setup.out was not shown"
    placed_on_one_node "$HOME/heat-try/events.jsonl" 2
    ;;
  heat-py)
    line=$(grep '"parts"' "$out" | tail -n 1)
    jq -e '.parts == 2 and (.hosts | length) == 2 and .max_error < 1e-4' <<<"$line" >/dev/null ||
      fail "the Python heat case's output is not 2 accurate parts: $line"
    grep -q '"solve_s"' "$out" || fail "the step's usage was not shown"
    grep -q '200 points in 2 parts' "$out" || fail "setup.out was not shown"
    grep -q 'max error' "$out" || fail "finish.out was not shown"
    placed_on_one_node "$HOME/heat-py-try/events.jsonl" 2
    ;;
  poisson)
    for n in 8 16 32; do
      jq -e ".n == $n and .ranks == 2 and .converged" "$HOME/poisson-try/solve-$n.json" >/dev/null ||
        fail "solve-$n.json is not a converged 2-rank solve: $(cat "$HOME/poisson-try/solve-$n.json")"
    done
    orders_are_second "$HOME/poisson-try/convergence.txt"
    ;;
  worker-hello)
    grep -qx '{"greeting":"hello, mesh"}' "$out" || fail "no greeting in the run's output"
    grep -q 'served one step' "$out" || fail "worker-hello did not exit 0"
    ;;
  mesh-study)
    grep -q 'completed' "$out" || fail "run watch did not say completed"
    awk '/^#     n/ { t = "" } { t = t $0 "\n" } END { printf "%s", t }' "$out" >"$WORK/convergence.txt"
    orders_are_second "$WORK/convergence.txt"
    placed_on_one_node "$HOME/mesh-try/events.jsonl" "1 2"
    ;;
  fill)
    grep -q 'completed' "$out" || fail "run watch did not say completed"
    grep -q '^timeline: timeline.svg' "$out" || fail "the report made no timeline"
    [[ -s $HOME/fill-try/timeline.svg ]] || fail "no timeline.svg"
    placed_on_one_node "$HOME/fill-try/scimesh-events-local.jsonl" "1 2"
    # The guide quotes the template: its copy must be the file, comments aside.
    strip() { grep -v -e '^# ' -e '^#$' -e '^$'; }
    guide=$src/docs/user-guide.md
    diff <(awk '/^## 4\. /{u=1} u && /^```bash$/{i=1; next} i && /^```$/{exit} i' "$guide" | strip) \
      <(strip <"$src/examples/fill.sbatch") >"$WORK/fill-diff.txt" ||
      fail "docs/user-guide.md quotes a fill.sbatch that is not examples/fill.sbatch: $(cat "$WORK/fill-diff.txt")"
    ;;
esac
note "$example: the workstation recipe in $readme, as written, twice: OK"
