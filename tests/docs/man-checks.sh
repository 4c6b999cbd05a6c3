#!/usr/bin/env bash
# man-checks.sh: the docs/man checks as CTest runs them, one per name, plus a self-test that each check catches a planted error.
#
#   man-checks.sh render|launch|agent|rank|coordinator|alloc|plugin|api|checks_fail
#
# Environment (set by tests/docs/CMakeLists.txt): SCIMESH_MAN_DIR,
# SCIMESH_SOURCE_DIR, SCIMESH_LAUNCH_BIN, SCIMESH_AGENT_BIN, SCIMESH_RANK_BIN,
# SCIMESH_COORDINATOR_BIN, SCIMESH_ALLOC_BIN, SCIMESH_PLUGSTACK_PROBE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
man_dir=${SCIMESH_MAN_DIR:?}
src=${SCIMESH_SOURCE_DIR:?}

# Runs check $1 against the pages in directory $2.
run_check() {
  local check=$1 dir=$2
  case $check in
    render) "$here/check-man-render.sh" "$dir" ;;
    launch)
      # --help mentions srun's --exact, sbatch's --signal and the plugin's
      # --scimesh-lease: other programs' options, not the launcher's.
      "$here/check-man-options.sh" "$dir/scimesh-launch.1" "${SCIMESH_LAUNCH_BIN:?}" \
        --foreign exact,signal,scimesh-lease --help "report --help" ;;
    agent)
      # --help shows the srun line that starts it: --overlap is srun's.
      "$here/check-man-options.sh" "$dir/scimesh-agent.1" "${SCIMESH_AGENT_BIN:?}" --foreign overlap --help ;;
    rank) "$here/check-man-options.sh" "$dir/scimesh-rank.1" "${SCIMESH_RANK_BIN:?}" --help ;;
    coordinator)
      "$here/check-man-options.sh" "$dir/scimesh-coordinator.1" "${SCIMESH_COORDINATOR_BIN:?}" \
        --help "serve --help" "run --help" "keys --help" ;;
    alloc)
      # --help mentions sbatch's --constraint (an --sbatch-arg example) and
      # --test-only (what --dry-run runs): sbatch's options, not scimesh-alloc's.
      "$here/check-man-options.sh" "$dir/scimesh-alloc.1" "${SCIMESH_ALLOC_BIN:?}" \
        --foreign constraint,test-only --help "status --help" ;;
    plugin)
      "$here/check-man-plugstack.sh" "$dir/spank_scimesh.8" "${SCIMESH_PLUGSTACK_PROBE:?}" \
        "$src/plugin/plugstack.conf.d/scimesh.conf" ;;
    api)
      "$here/check-man-api.sh" "$dir/scimesh_step.3" "$src/mpi/include/scimesh/step.h" \
        "$src/mpi/include/scimesh/step.hpp" "$src/mpi/scimesh_step.f90" ;;
    *) echo "man-checks.sh: unknown check '$check'" >&2; return 2 ;;
  esac
}

# Plants one error (a sed script) in a copy of page $2, runs check $1 on the
# copy and requires it to fail with a message matching $4.
expect_failure() {
  local check=$1 page=$2 edit=$3 expected=$4 work out result=0
  work=$(mktemp -d)
  cp "$man_dir"/*.[1-8] "$work/"
  sed -i -e "$edit" "$work/$page"
  if cmp -s "$man_dir/$page" "$work/$page"; then
    echo "FAIL: the planted error '$edit' did not change $page; update man-checks.sh" >&2
    result=1
  elif out=$(run_check "$check" "$work" 2>&1); then
    echo "FAIL: check '$check' passed with '$edit' planted in $page:" >&2
    printf '%s\n' "$out" >&2
    result=1
  elif ! grep -qE -- "$expected" <<<"$out"; then
    echo "FAIL: check '$check' failed with '$edit' planted in $page, but without /$expected/:" >&2
    printf '%s\n' "$out" >&2
    result=1
  else
    echo "ok: '$check' catches: $expected"
  fi
  rm -rf "$work"
  return $result
}

self_test() {
  local s=0
  expect_failure launch scimesh-launch.1 's/^\.BI \\-\\-drain\\-grace " S"$/.BI \\-\\-drain\\-graze " S"/' \
    'no .TP entry for --drain-grace,' || s=1
  expect_failure launch scimesh-launch.1 's/^\.BI \\-\\-drain\\-grace " S"$/.BI \\-\\-drain\\-graze " S"/' \
    'documents --drain-graze, which' || s=1
  expect_failure launch scimesh-launch.1 '/^\.BI \\-\\-drain\\-margin/,/^\.TP/s/^Default: 120\.$/Default: 180./' \
    "entry of --drain-margin does not say 'Default: 120'" || s=1
  expect_failure agent scimesh-agent.1 '/^\.BI \\-\\-kill\\-grace\\-ms/,/^\.TP/s/^Default: 2000\.$/Default: 200./' \
    "entry of --kill-grace-ms does not say 'Default: 2000'" || s=1
  expect_failure rank scimesh-rank.1 's/^\.SH ENVIRONMENT$/.TP\n.B \\-\\-bogus\\-flag\nNot an option.\n.SH ENVIRONMENT/' \
    'documents --bogus-flag, which' || s=1
  expect_failure coordinator scimesh-coordinator.1 's/^\.B \\-\\-json$/.B \\-\\-jsonl/' 'no .TP entry for --json,' || s=1
  expect_failure alloc scimesh-alloc.1 '/^\.BI \\-\\-backlog/,/^\.TP/s/^Default: 1\.$/Default: 2./' \
    "entry of --backlog does not say 'Default: 1'" || s=1
  expect_failure alloc scimesh-alloc.1 's/^\.B \\-\\-dry\\-run$/.B \\-\\-dry\\-runs/' 'no .TP entry for --dry-run,' || s=1
  expect_failure plugin spank_scimesh.8 's/from 0 to 600;/from 0 to 900;/' 'highest value 900 is refused' || s=1
  expect_failure plugin spank_scimesh.8 's/^\.BI poll_ms= N$/.BI poll_s= N/' 'argument poll_ms=' || s=1
  expect_failure api scimesh_step.3 's/"int scimesh_step_set_usage(/"int scimesh_step_set_use(/' \
    'lacks scimesh_step_set_usage' || s=1
  if command -v groff >/dev/null; then  # else the render check skips itself
    expect_failure render scimesh-rank.1 '$a .XX planted' "macro 'XX' not defined" || s=1
    expect_failure render scimesh-coordinator.1 's/^\.SH EXIT STATUS$/.SH "EXIT CODES"/' 'no section EXIT STATUS' || s=1
  fi
  return $s
}

case ${1:-} in
  checks_fail) self_test ;;
  "") echo "usage: $0 render|launch|agent|rank|coordinator|alloc|plugin|api|checks_fail" >&2; exit 2 ;;
  *) run_check "$1" "$man_dir" ;;
esac
