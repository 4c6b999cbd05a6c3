#!/usr/bin/env bash
# System test: directory artifacts through the real coordinator and
# scimesh-launch (local backend). A step leaves a directory under
# artifacts/; it is uploaded as one archive with its SHA-256 and the
# directory media type, and the step that needs it finds it unpacked as
# inputs/<step>/<name>/. A directory holding a symlink is refused, named.
source "$(dirname "$0")/../lib/harness.sh"
harness_init launcher-directory-artifacts
coordinator_start --lease-ttl-ms "$(scaled 4000)" --heartbeat-ms 500 --grace-ms "$(scaled 1000)" --retry-base-ms 100

cat >"$WORK/defs.json" <<'JSON'
{"workflows": [
  {"workflow": "dirs", "version": "1", "steps": [
    {"id": "produce", "max_attempts": 1,
     "run": {"argv": ["mkdir -p artifacts/case/sub artifacts/case/empty && echo 200 > artifacts/case/mesh.txt && head -c 3000 /dev/zero > artifacts/case/sub/field.bin && echo '{}' > output.json"], "shell": true}},
    {"id": "consume", "needs": ["produce"], "max_attempts": 1,
     "run": {"argv": ["jq -n --arg mesh \"$(cat inputs/produce/case/mesh.txt)\" --arg bytes \"$(wc -c < inputs/produce/case/sub/field.bin)\" --arg empty \"$(test -d inputs/produce/case/empty && echo yes)\" '{mesh: $mesh, bytes: $bytes, empty: $empty}' > output.json"], "shell": true}}]},
  {"workflow": "linked", "version": "1", "steps": [
    {"id": "s", "max_attempts": 1,
     "run": {"argv": ["mkdir -p artifacts/d && ln -s /etc/passwd artifacts/d/pw && echo '{}' > output.json"], "shell": true}}]}
]}
JSON

SCIMESH_TOKEN_FILE=$WORKER_TOKEN_FILE "$SCIMESH_LAUNCH_BIN" --definitions "$WORK/defs.json" --backend local \
  --spool "$WORK/spool" --idle-exit 4 --wait-ms 1000 >"$WORK/launcher.log" 2>&1 &
CLEANUP_PIDS+=("$!")
registered() { grep -q ' registered ' "$WORK/launcher.log"; }
wait_for "the launcher registered its workflows" 20 registered

r1=$(run_start dirs '{}')
r2=$(run_start linked '{}')
[[ $(wait_run "$r1" 60) == completed ]] || fail "the dirs run did not complete: $(api GET "/runs/$r1")"
[[ $(wait_run "$r2" 60) == failed ]] || fail "the linked run did not fail"

show=$(api GET "/runs/$r1")
out=$(jq -c '.steps[] | select(.step_id=="consume") | .output' <<<"$show")
note "consume saw: $out"
[[ $out == '{"mesh":"200","bytes":"3000","empty":"yes"}' ]] || fail "the directory did not arrive whole: $out"

art=$(jq -c '.steps[] | select(.step_id=="produce") | .artifacts[0]' <<<"$show")
note "produce's artifact: $art"
[[ $(jq -r '.name' <<<"$art") == case && $(jq -r '.media_type' <<<"$art") == application/vnd.scimesh.directory+tar ]] ||
  fail "the directory was not uploaded as one directory artifact: $art"
archive=$(find "$WORK/spool/$r1/produce" -path '*/artifacts/case' -type f | head -n1)
[[ -n $archive && $(jq -r .sha256 <<<"$art") == $(sha256sum "$archive" | cut -d' ' -f1) ]] ||
  fail "the archive's SHA-256 differs from the coordinator's"
# A standard ustar archive: GNU tar reads it.
[[ $(tar -tf "$archive" | tr '\n' ' ') == "empty/ mesh.txt sub/ sub/field.bin " ]] || fail "tar lists: $(tar -tf "$archive")"

msg=$(api GET "/runs/$r2" | jq -r '.steps[0].attempts[-1].error | "\(.class): \(.message)"')
note "linked: $msg"
[[ $msg == "invalid_output: artifact d: 'pw': a symbolic link (only files and directories are packed)" ]] ||
  fail "a symlink in a directory artifact was not refused by name: $msg"
note "directory artifacts, local backend: OK"
