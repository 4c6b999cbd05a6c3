#!/usr/bin/env bash
# scimesh-launch refuses a spool another user or the group could write in
# (they could plant lease.json or lease.state), and creates a new one 0700.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-spool
echo '{"workflows": []}' >"$WORK/defs.json"
export SCIMESH_TOKEN=spool-test-token

mkdir -m 0770 "$WORK/shared-spool"
chmod 0770 "$WORK/shared-spool"
rc=0
"$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --spool "$WORK/shared-spool" --url http://127.0.0.1:9 \
  >"$WORK/out.txt" 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "a group-writable spool was accepted (exit $rc): $(<"$WORK/out.txt")"
grep -q "spool directory $WORK/shared-spool is writable by group or others" "$WORK/out.txt" ||
  fail "the refusal does not name the spool: $(<"$WORK/out.txt")"

(umask 002; timeout 5 "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --spool "$WORK/new-spool" \
  --url http://127.0.0.1:9 --idle-exit 1 >"$WORK/out2.txt" 2>&1 || true)
[[ $(stat -c %a "$WORK/new-spool") == 700 ]] || fail "a new spool is $(stat -c %a "$WORK/new-spool"), not 700"
note "group-writable spool refused; new spool 0700"
