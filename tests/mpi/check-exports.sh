#!/usr/bin/env bash
# libscimesh_mpi.so must export only scimesh_* symbols: no libcurl, spdlog,
# RapidJSON or C++ runtime symbol may leak into an MPI application.
set -euo pipefail
lib=${1:?usage: check-exports.sh libscimesh_mpi.so}
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sed 's/@.*//' | sort -u)
[[ -n $exported ]] || { echo "FAIL: no exported symbols found"; exit 1; }
bad=$(grep -v '^scimesh_' <<<"$exported" | grep -v '^SCIMESH_MPI_' || true)
echo "exported: $(wc -l <<<"$exported") symbols"
if [[ -n $bad ]]; then
  echo "FAIL: symbols outside scimesh_*:"
  echo "$bad" | head -20
  exit 1
fi
grep -q '^scimesh_step_begin$' <<<"$exported" || { echo "FAIL: scimesh_step_begin is not exported"; exit 1; }
echo "OK: only scimesh_* symbols"
