#!/usr/bin/env bash
# System test: each CLI mistake a new user makes gets one message that says
# what failed, where (the URL, the path) and why (libcurl's reason, errno),
# from the real scimesh-launch and scimesh-coordinator binaries.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-cli-errors
coordinator_start
port=$(<"$WORK/port")
echo '{"workflow":"cli","version":"1","steps":[{"id":"a","run":{"argv":["true"]}}]}' >"$WORK/defs.json"
launch() {
  "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local --spool "$WORK/spool" --idle-exit 1 \
    --wait-ms 500 "$@"
}
# expect NAME EXIT_CODE MESSAGE COMMAND...: the command exits EXIT_CODE and its
# output holds MESSAGE (a fixed string) exactly once.
expect() {
  local name=$1 want_rc=$2 message=$3
  shift 3
  local rc=0
  "$@" >"$WORK/$name.log" 2>&1 || rc=$?
  ((rc == want_rc)) || fail "$name: exit $rc, not $want_rc: $(tail -n 3 "$WORK/$name.log")"
  local n
  n=$(grep -cF -- "$message" "$WORK/$name.log" || true)
  ((n == 1)) || fail "$name: '$message' appears $n times in: $(tail -n 3 "$WORK/$name.log")"
  note "$name: $(grep -F -- "$message" "$WORK/$name.log")"
}

# Token mistakes: the path and the system's reason, no doubled prefix.
expect missing-token 2 \
  "scimesh-launch: cannot open the token file $WORK/no-such-token (SCIMESH_TOKEN_FILE): No such file or directory" \
  env SCIMESH_TOKEN_FILE="$WORK/no-such-token" "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --spool "$WORK/spool"
cp "$WORKER_TOKEN_FILE" "$WORK/open.token"
chmod 0644 "$WORK/open.token"
expect open-token 2 \
  "scimesh-launch: the token file $WORK/open.token (SCIMESH_TOKEN_FILE) is accessible by group or others (mode 0644); chmod 600 it" \
  env SCIMESH_TOKEN_FILE="$WORK/open.token" "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --spool "$WORK/spool"
expect no-token 2 "scimesh-launch: no token: set SCIMESH_TOKEN_FILE (a chmod 600 file) or SCIMESH_TOKEN" \
  env -u SCIMESH_TOKEN_FILE -u SCIMESH_TOKEN "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --spool "$WORK/spool"
grep -q "no token: no token" "$WORK/no-token.log" && fail "a doubled prefix: $(<"$WORK/no-token.log")"

# Unreachable coordinators: the URL and libcurl's reason, in the final error.
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect wrong-port 1 \
  "[error] register: cannot reach the coordinator at http://127.0.0.1:$closed: Failed to connect to 127.0.0.1 port $closed" \
  env SCIMESH_TOKEN_FILE="$WORKER_TOKEN_FILE" "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --idle-exit 1 --url "http://127.0.0.1:$closed"
expect https-to-http 1 "[error] register: cannot reach the coordinator at https://127.0.0.1:$port: " \
  env SCIMESH_TOKEN_FILE="$WORKER_TOKEN_FILE" "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --idle-exit 1 --url "https://127.0.0.1:$port"
grep "\[error\]" "$WORK/https-to-http.log" | grep -q "SSL" || fail "no TLS reason: $(tail -n 1 "$WORK/https-to-http.log")"

# The coordinator's own commands name the file and the reason.
expect serve-no-keys 1 "cannot start: the keys file $WORK/no-keys (--keys): cannot read it: No such file or directory" \
  "$SCIMESH_COORDINATOR_BIN" serve --db "$WORK/other.db" --keys "$WORK/no-keys" --listen 127.0.0.1:0
expect keys-add-no-dir 1 \
  "scimesh-coordinator keys add: cannot create the secret file $WORK/no-dir/secret (--secret-out): No such file or directory" \
  "$SCIMESH_COORDINATOR_BIN" keys add bob --scope worker --workflows '*' --keys "$WORK/keys2" --secret-out "$WORK/no-dir/secret"
expect keys-add-no-keys-dir 1 \
  "scimesh-coordinator keys add: cannot open the keys file $WORK/no-dir/keys (--keys): No such file or directory" \
  "$SCIMESH_COORDINATOR_BIN" keys add bob --scope worker --workflows '*' --keys "$WORK/no-dir/keys" --secret-out "$WORK/bob.secret"
# A worker key that could squat any unregistered workflow is never a default.
expect keys-add-worker-no-workflows 1 \
  "scimesh-coordinator keys add: a worker key needs --workflows GLOBS: the workflows it may serve (e.g. \"chem-*\"), or '*' for every workflow on a single-tenant site" \
  "$SCIMESH_COORDINATOR_BIN" keys add bob --scope worker --keys "$WORK/keys3" --secret-out "$WORK/bob3.secret"
[[ ! -e $WORK/keys3 && ! -e $WORK/bob3.secret ]] || fail "a refused keys add left a file behind"
[[ ! -e $WORK/bob.secret ]] || fail "keys add left a secret behind for a key it did not add"
# scimesh-rank's grace: decimals are taken, anything else is refused by name.
for bad in abc -1 10s 7200; do
  expect "rank-grace-$bad" 2 "scimesh-rank: --kill-grace needs seconds from 0 to 3600 (e.g. 10 or 0.5), not '$bad'" \
    "$SCIMESH_RANK_BIN" --kill-grace "$bad" -- true
done
"$SCIMESH_RANK_BIN" --kill-grace 0.5 -- true || fail "scimesh-rank refused a grace of 0.5 s"
note "CLI errors: OK"
