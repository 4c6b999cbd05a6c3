#!/usr/bin/env bash
# seed-corpus.sh: (re)writes the seeds of fuzz/corpus/ from the examples in
# docs/protocol/ (each seed is "<parser>\n<body>", see fuzz/fuzz_input.h),
# plus a few hand-written ones. Findings added under fuzz/corpus/*/ by hand
# (regressions) are kept. Run from anywhere: fuzz/seed-corpus.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
examples=$here/../docs/protocol

seed() {  # seed HARNESS NAME PARSER FILE|-   (- : the body on stdin)
  local dir=$here/corpus/$1
  mkdir -p "$dir"
  { printf '%s\n' "$3"; if [[ $4 == - ]]; then cat; else cat "$4"; fi; } >"$dir/$2"
}

r=coordinator_requests_fuzzer
for call in register claim started heartbeat complete fail; do
  seed $r "$call" "$call" "$examples/$call.request.json"
done
seed $r run.create run.create "$examples/run.create.request.json"
printf '%s' '{"x":"{{input.a}}","y":"n={{steps.a.output.n}} {{run.id}}","z":["{{run.state}}"]}
{"a":[1,{"b":null}],"n":2.5}' | seed $r template template -
printf 'n1/42\n3' | seed $r artifact_query artifact_query -

c=client_responses_fuzzer
seed $c register.response register.response "$examples/register.response.json"
seed $c claim.response claim.response "$examples/claim.response.json"
jq '.leases[0] + {coordinator_url: "https://coordinator.example:8443"}' "$examples/claim.response.json" |
  seed $c lease lease -
seed $c extend.started extend.response "$examples/started.response.json"
seed $c extend.heartbeat extend.response "$examples/heartbeat.response.json"
seed $c complete.response complete.response "$examples/complete.response.json"
seed $c fail.response fail.response "$examples/fail.response.json"
seed $c artifact.response artifact.response "$examples/artifact.response.json"
for e in error.400 error.409 error.409.already_applied; do seed $c "$e" error "$examples/$e.json"; done
seed $c run.create.response run.status "$examples/run.create.response.json"
seed $c run.cancel.response run.status "$examples/run.cancel.response.json"
seed $c run.show run.show "$examples/run.show.response.json"
seed $c run.journal run.journal "$examples/run.journal.response.json"
seed $c run.list run.list "$examples/run.list.response.json"
printf '%s' 'https://coordinator.example:8443/v1/api/artifacts/ab?x=1#f' | seed $c url url -
printf '%s' '../../other/path' | seed $c url.relative url -
printf '%s' '120' | seed $c retry_after retry_after -
printf '%s' 'Wed, 21 Oct 2026 07:28:00 GMT' | seed $c retry_after.date retry_after -
