#!/bin/sh
# The chaos campaign's wrapped step (an unmodified program under
# scimesh-rank; it never polls cancellation): input {"ms": N}. Rank 0 first
# records the SHA-256 of every input artifact it reads (consumed.txt:
# "<producer> <name> <sha256>"); every rank appends its wall-clock ms to
# alive.<rank> every 100 ms for N ms; then rank 0 writes artifacts/out.bin
# (bytes unique to this attempt) and output.json.
set -eu
cd "$SCIMESH_ATTEMPT_DIR"
rank=${SLURM_PROCID:-0}
ms=$(jq -r .input.ms lease.json)
if [ "$rank" = 0 ] && [ -d inputs ]; then
  for f in inputs/*/*; do
    [ -f "$f" ] || continue
    producer=$(basename "$(dirname "$f")")
    printf '%s %s %s\n' "$producer" "$(basename "$f")" "$(sha256sum <"$f" | cut -d' ' -f1)" >>consumed.txt
  done
fi
now() { date +%s%3N; }
end=$(($(now) + ms))
while [ "$(now)" -lt "$end" ]; do
  now >>"alive.$rank"
  sleep 0.1
done
now >>"alive.$rank"
if [ "$rank" = 0 ]; then
  { jq -r '"\(.run_id)/\(.step_id)/\(.attempt)"' lease.json; echo "$$ $(now)"; head -c 4096 /dev/urandom; } >artifacts/out.bin
  printf '{"ok":true,"ms":%s}\n' "$ms" >output.json
fi
