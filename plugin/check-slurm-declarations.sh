#!/usr/bin/env bash
# Fails on a SLURM function declared outside SLURM's own headers: a
# hand-written prototype compiles against every release and passes garbage on
# those that changed it (slurm_kill_job_step changed twice since 22.05).
# Every slurm_* function is called through <slurm/*.h>; a weak reference needs
# `#pragma weak NAME` after the header, never a prototype. Test stand-ins
# (*_test.cc) define these functions on purpose and are not checked; nor are
# the plugin's own hooks (slurm_spank_*, which spank.h declares).
# Usage: check-slurm-declarations.sh [FILE...]  (default: every tracked source)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ $# -gt 0 ]]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.c' '*.cc' '*.h' | grep -v -E '_test\.cc$')
fi
# A type (or extern/extern "C"), then slurm_NAME( : a declaration or a definition.
pattern='^[[:space:]]*(extern[[:space:]]+("C"[[:space:]]+)?)?(const[[:space:]]+)?(unsigned[[:space:]]+|struct[[:space:]]+)?[A-Za-z_][A-Za-z0-9_]*[[:space:]*&]+slurm_[a-z0-9_]+[[:space:]]*\('
found=$(grep -n -H -E "$pattern" "${files[@]}" 2>/dev/null | grep -v -E 'slurm_spank_[a-z_]+[[:space:]]*\(' |
  grep -v -E '^[^:]+:[0-9]+:[[:space:]]*(return|else|case)[[:space:]]' || true)
if [[ -n $found ]]; then
  echo "FAIL: SLURM functions declared outside SLURM's headers (include <slurm/slurm.h>; weak: #pragma weak NAME):" >&2
  echo "$found" >&2
  exit 1
fi
echo "ok: no slurm_* function declared outside SLURM's headers (${#files[@]} files)"
