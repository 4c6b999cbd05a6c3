#!/usr/bin/env bash
# Wide steps on the dev cluster restarted with 32 cpus per node: a native
# (libscimesh_mpi) step and a wrapped (scimesh-rank) step of RANKS ranks over
# n1 and n2, started by scimesh-launch placing on 32 cores per node
# (--topology: this machine has fewer):
#   - their lease is heartbeated over exactly one connection while rank 0
#     holds it: one peer in the coordinator's request log, owned by a process
#     of the step (read back with ss);
#   - each rank's affinity (/proc/<pid>/status) is its cpus in placement.json
#     where this machine has them, and placement.json gives no cpu twice on
#     a node;
#   - every rank has TRACEPARENT, its lease's trace context;
#   - cancelling the run: every native rank sees cancelled(), every wrapped
#     rank is stopped, no process of the step is left on either node;
#   - lease loss with ranks that never poll (a second launcher, which finds the plugin):
#     the SPANK plugin kills all of them, on both nodes.
# Usage: wide-e2e.sh RANKS (even, at most 64)
source "$(dirname "$0")/../lib/harness.sh"
source "$(dirname "$0")/wide-lib.sh"
harness_init "wide-${1:?usage: wide-e2e.sh RANKS}"
wide_setup "$1"

# one_heartbeat_stream: while rank 0 holds the lease, its heartbeats come
# over one connection, and it is a connection of a process of the step.
one_heartbeat_stream() {
  local from seq0 peers owners
  # From two beats after rank 0 took the lease: the launcher has stopped by then.
  seq0=$(jq .seq "$DIR/lease.state")
  beats() { (( $(jq .seq "$DIR/lease.state") >= seq0 + $1 )); }
  wait_for "2 heartbeats from rank 0" 60 beats 2
  from=$(wc -l <"$WORK/coordinator.log")
  wait_for "4 more heartbeats from rank 0" 60 beats 6
  ss -Htnp state established "( dport = :$port )" >"$WORK/ss.txt"
  peers=$(tail -n +"$((from + 1))" "$WORK/coordinator.log" | grep "POST /v1/api/steps/$LEASE/heartbeat" |
    sed 's/.* from //' | sort -u)
  [[ $(wc -l <<<"$peers") == 1 && -n $peers ]] || fail "heartbeats of $LEASE came from: $(echo $peers)"
  # The peer's connection, as the client side sees it: its owner is a step process.
  owners=$(awk -v p="$peers" '$3 == p {print $0}' "$WORK/ss.txt" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u)
  [[ -n $owners ]] || fail "no process holds the heartbeat connection $peers: $(cat "$WORK/ss.txt")"
  local steps o
  steps=$(rank_pids)
  rank_pids >"$WORK/step-pids.txt"
  for o in $owners; do grep -qx "$o" <<<"$steps" || fail "connection $peers is held by pid $o, not by a rank"; done
  # ...and no other rank talks to the coordinator.
  local conns=0 line pid
  while read -r line; do
    pid=$(grep -o 'pid=[0-9]*' <<<"$line" | head -n1 | cut -d= -f2)
    [[ -n $pid ]] && grep -qx "$pid" <<<"$steps" && conns=$((conns + 1))
  done <"$WORK/ss.txt"
  [[ $conns == 1 ]] || fail "the ranks hold $conns connections to the coordinator"
  note "heartbeats: one connection ($peers, pid $owners) for $ranks ranks"
}

# pinned_as_placed: /proc affinity against placement.json, rank by rank.
pinned_as_placed() {
  local online f host rank pid want have checked=0 unpinnable=0 cpu pinnable
  online=$(expand_list "$(</sys/devices/system/cpu/online)")
  jq -e '[.ranks[].node] | unique == ["n1", "n2"]' "$DIR/placement.json" >/dev/null || fail "placement.json: not n1 and n2"
  jq -e --argjson n "$ranks" '.ranks | length == $n' "$DIR/placement.json" >/dev/null || fail "placement.json: not $ranks ranks"
  jq -e '[.ranks | group_by(.node)[] | [.[].cpus[]] | (length == (unique | length))] | all' "$DIR/placement.json" \
    >/dev/null || fail "placement.json gives a cpu to two ranks of one node"
  for f in "$DIR"/pids/*; do
    host=${f##*/}; host=${host%.*}; rank=${f##*.}; pid=$(<"$f")
    jq -e --argjson r "$rank" --arg h "$host" '.ranks[] | select(.rank == $r) | .node == $h' "$DIR/placement.json" \
      >/dev/null || fail "rank $rank runs on $host, not where placement.json put it"
    want=$(jq -r --argjson r "$rank" '.ranks[] | select(.rank == $r) | .cpus | map(tostring) | join(",")' "$DIR/placement.json")
    have=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$pid/status") || fail "rank $rank (pid $pid) is gone"
    pinnable=1
    for cpu in ${want//,/ }; do grep -qx "$cpu" <<<"${online//,/$'\n'}" || pinnable=0; done
    if (( pinnable )); then
      [[ $(expand_list "$have") == "$want" ]] || fail "rank $rank on $host: affinity $have, placed on $want"
      checked=$((checked + 1))
    else
      # A cpu this machine does not have cannot be pinned to: the rank runs
      # on the cpus it was started with.
      [[ $(expand_list "$have") == "$online" ]] || fail "rank $rank on $host: placed on cpus $want this machine lacks, yet bound to $have"
      unpinnable=$((unpinnable + 1))
    fi
  done
  # Ranks pinned as placed never share a cpu on a node (placement.json's cpus are distinct).
  note "affinity: $checked ranks bound as placed; $unpinnable placed on cpus past this machine's ($online): unbound"
}

expand_list() {  # "0-2,5" -> "0,1,2,5"
  local part out=()
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then out+=($(seq "${part%-*}" "${part#*-}")); else out+=("$part"); fi
  done
  printf '%s\n' "${out[@]}" | sort -n | paste -sd,
}

# Cancellation, the plugin not watching (it would SIGTERM the ranks as soon as
# rank 0 writes the loss, racing their own cancelled()): --spank=no, since the
# launcher would find it in the dev cluster's plugstack.conf.
launcher cancel "$WORK/cancel.json" --idle-exit 600 --spank=no  # the checks between runs take a while
for workflow in native wrapped; do
  start "$workflow"
  one_heartbeat_stream
  pinned_as_placed
  # Every rank on both nodes has the run's trace context, from its lease.
  want=$(jq -r '"00-\(.trace_id)-\(.span_id)-01"' "$DIR/lease.json")
  [[ $(cat "$DIR"/traceparent/* | sort | uniq -c | awk '{print $1, $2}') == "$ranks $want" ]] ||
    fail "TRACEPARENT of the ranks: $(cat "$DIR"/traceparent/* | sort | uniq -c) (lease: $want)"
  api POST "/runs/$RUN/cancel" -d '{}' >/dev/null
  wait_for "no process of the $workflow step left on n1 or n2" 120 none_left
  if [[ $workflow == native ]]; then
    seen=$(grep -c 'cancelled=1' "$DIR/step.out" || true)
    [[ $seen == "$ranks" ]] || fail "$seen of $ranks native ranks saw cancelled()"
  fi
  [[ $(wait_run "$RUN" 60) == cancelled ]] || fail "run $RUN is not cancelled"
  note "$workflow: cancelled; all $ranks ranks stopped, none left"
done

scancel "$JOB"
wait_for "the first launcher (job $JOB) gone" 120 job_gone

# Lease loss, ranks that never poll: only the plugin can end them (the
# launcher would wait 60 s).
launcher deaf "$WORK/deaf.json" --kill-grace 3 --idle-exit 600
start deaf
rank_pids >"$WORK/step-pids.txt"
api POST "/runs/$RUN/cancel" -d '{}' >/dev/null
wait_for "no process of the deaf step left on n1 or n2" 120 none_left
# A run cancelled by its owner keeps the launcher's --kill-grace (3 s) in the
# plugin too; then it signals the ranks, which ignore SIGTERM, and kills them.
grep -q "cancelling the step of lease $LEASE: " "$SCIMESH_CLUSTER_DIR"/log/slurmd-n*.log ||
  fail "the plugin did not cancel the step of lease $LEASE"
note "deaf: the plugin killed all $ranks ranks after the lease was lost"
note "ok: $ranks ranks"
