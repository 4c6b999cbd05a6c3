#!/usr/bin/env bash
# scimesh-launch refuses a definitions file with a typo or a JSON syntax
# error before it does anything else, and says where and what was meant
# (the typos a new user made, issue 18): exit 1, the message on stderr.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-definitions
export SCIMESH_TOKEN=definitions-test-token

# refused NAME FILE_TEXT EXPECTED_MESSAGE
refused() {
  printf '%s' "$2" >"$WORK/$1.json"
  local rc=0
  "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/$1.json" --backend local --spool "$WORK/spool" \
    --url http://127.0.0.1:9 >"$WORK/$1.out" 2>&1 || rc=$?
  [[ $rc == 1 ]] || fail "$1: exit $rc, not 1: $(<"$WORK/$1.out")"
  grep -qF "scimesh-launch: $3" "$WORK/$1.out" || fail "$1: expected 'scimesh-launch: $3', got: $(<"$WORK/$1.out")"
  note "$1: $(tail -n1 "$WORK/$1.out")"
}
step() { echo "{\"workflows\": [{\"workflow\": \"w\", \"version\": \"1\", \"steps\": [{\"id\": \"a\", $1}]}]}"; }
refused ranks_per_nodes "$(step '"resources": {"nodes": 2, "ranks_per_nodes": 2}, "run": {"argv": ["true"]}')" \
  "definitions file: workflows[0].steps[0].resources.ranks_per_nodes: unknown field; did you mean 'ranks_per_node'?"
refused nativ "$(step '"run": {"argv": ["true"], "nativ": true}')" \
  "definitions file: workflows[0].steps[0].run.nativ: unknown field; did you mean 'native'?"
refused walltime "$(step '"walltime": 600, "run": {"argv": ["true"]}')" \
  "definitions file: workflows[0].steps[0].walltime: unknown field; did you mean 'walltime_s'?"
refused resource "$(step '"resource": {"nodes": 2}, "run": {"argv": ["true"]}')" \
  "definitions file: workflows[0].steps[0].resource: unknown field; did you mean 'resources'?"
refused setup "$(step '"run": {"argv": ["true"], "setup": {"argv": ["mesh"], "mpi": "none"}}')" \
  "definitions file: workflows[0].steps[0].run.setup.mpi: unknown field"
# column 23: the quote that opens "run", where a comma was due
refused syntax $'{"workflow": "w",\n "version": "1",\n "steps": [{"id": "a" "run": {}}]}' \
  "definitions file: invalid JSON at line 3, column 23: Missing a comma or '}' after an object member."
note "definitions files with typos refused, each naming the field"
