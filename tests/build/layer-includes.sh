#!/usr/bin/env bash
# The layering of docs/architecture.md holds at compile time: a source
# compiled with a component's include directories (as CMake gives them to it)
# reaches the headers of what it may use, and an include of anything above
# it is "No such file or directory". Each case is one compile of a one-line
# source with the project's C++ compiler.
#
# Usage: layer-includes.sh CXX NAME=DIRS... (DIRS: that target's include
# directories, joined with ':'; CTest passes them from the targets).
set -euo pipefail
cxx=$1
shift
declare -A dirs
for arg in "$@"; do dirs[${arg%%=*}]=${arg#*=}; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# compiles TARGET HEADER: 0 when HEADER is reachable from TARGET's include dirs.
compiles() {
  local flags=() d
  IFS=: read -ra ds <<<"${dirs[$1]}"
  for d in "${ds[@]}"; do [[ -n $d ]] && flags+=(-I "$d"); done
  printf '#include "%s"\n' "$2" >"$work/probe.cc"
  "$cxx" -std=c++20 -fsyntax-only "${flags[@]}" "$work/probe.cc" 2>"$work/err"
}
expect() {  # expect reach|refuse TARGET HEADER
  if compiles "$2" "$3"; then
    [[ $1 == reach ]] && echo "ok: $2 reaches $3" || { echo "FAIL: $2 reaches $3"; failed=1; }
  else
    if [[ $1 == refuse ]] && grep -q "No such file or directory" "$work/err"; then
      echo "ok: $2 cannot include $3: $(grep -m1 -o 'fatal error: .*' "$work/err")"
    else
      echo "FAIL: $2 and $3:"; cat "$work/err"; failed=1
    fi
  fi
}

expect reach util protocol/util/status.h
expect refuse util protocol/wire/wire.h
expect refuse util protocol/client/client.h
expect reach wire protocol/wire/wire_json.h
expect refuse wire protocol/client/client.h
expect refuse wire protocol/attempt/attempt_files.h
expect reach client protocol/client/client.h
expect refuse client protocol/attempt/lease_state.h
expect refuse client protocol/runtime/worker.h
expect reach attempt protocol/attempt/lease_state.h
expect refuse attempt protocol/client/client.h
expect refuse attempt protocol/runtime/heartbeat_hub.h
expect reach runtime protocol/runtime/worker.h
expect reach coordinator coordinator/ledger.h
expect refuse coordinator protocol/runtime/worker.h
expect refuse coordinator protocol/attempt/attempt_dir.h
expect refuse coordinator launcher/launcher.h
expect reach plugin plugin/lease_watch.h
expect refuse plugin protocol/runtime/heartbeat_loop.h
expect refuse plugin launcher/launcher.h
exit $failed
