#!/usr/bin/env bash
# check-man-api.sh: scimesh_step(3) documents exactly the C API of scimesh/step.h, its error codes, the C++ class and the Fortran module.
#
#   check-man-api.sh PAGE STEP_H STEP_HPP STEP_F90
#
# C: the SCIMESH_API functions of the header are the functions of the page's
# SYNOPSIS, and each is listed in NAME and has an entry in DESCRIPTION; the error codes of the
# header are the entries of ERRORS. C++: every public method of scimesh::Step
# is named in the page. Fortran: every public name of the module is named in
# the page. Any scimesh_* or SCIMESH_OK/SCIMESH_ERR_* name in the page must
# exist in one of the sources (a renamed or misspelt call fails).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/man-lib.sh"

[[ $# == 4 ]] || { echo "usage: $0 PAGE STEP_H STEP_HPP STEP_F90" >&2; exit 2; }
page=$1 header=$2 hpp=$3 f90=$4
for f in "$page" "$header" "$hpp" "$f90"; do [[ -r $f ]] || { echo "FAIL: cannot read $f" >&2; exit 1; }; done

status=0
fail() { echo "FAIL: $(basename "$page"): $*" >&2; status=1; }
sorted() { sed '/^$/d' | sort -u; }
# Members of $1 (lines) missing from $2 (lines).
missing() { comm -23 <(printf '%s\n' "$1" | sorted) <(printf '%s\n' "$2" | sorted); }

plain=$(roff_plain <"$page")

# --- C functions ---
api=$(grep 'SCIMESH_API' "$header" | grep -oE '\bscimesh_[a-z_]+ *\(' | tr -d ' (' | sorted)
[[ -n $api ]] || { echo "FAIL: no SCIMESH_API functions found in $header" >&2; exit 1; }
synopsis=$(roff_section "$page" SYNOPSIS | roff_plain | grep -oE '\bscimesh_[a-z_]+\(' | tr -d '(' | sorted)
described=$(roff_section "$page" DESCRIPTION | roff_entries | cut -f1 | grep -oE '^scimesh_[a-z_]+\(\)$' | tr -d '()' | sorted)
for f in $(missing "$api" "$synopsis"); do fail "the SYNOPSIS lacks $f() of $(basename "$header")"; done
for f in $(missing "$synopsis" "$api"); do fail "the SYNOPSIS declares $f(), which $(basename "$header") does not export"; done
for f in $(missing "$api" "$described"); do fail "DESCRIPTION has no entry for $f()"; done
named=$(roff_section "$page" NAME | roff_plain | sed 's/ - .*//' | tr ', ' '\n\n' | sorted)
for f in $(missing "$api" "$named"); do fail "NAME does not list $f (whatis and man $f would miss it)"; done

# --- error codes ---
codes=$(sed -n '/enum scimesh_error/,/};/p' "$header" | grep -oE '\bSCIMESH_(OK|ERR_[A-Z_]+)\b' | sorted)
errors=$(roff_section "$page" ERRORS | roff_entries | cut -f1 | grep -oE '^SCIMESH_ERR_[A-Z_]+$' | sorted)
for c in $(missing "$(grep -v '^SCIMESH_OK$' <<<"$codes")" "$errors"); do fail "ERRORS has no entry for $c"; done
for c in $(missing "$errors" "$codes"); do fail "ERRORS documents $c, which $(basename "$header") does not define"; done

# --- C++ class ---
methods=$(grep -oE '^  (bool|int|std::string) [a-z_]+\(' "$hpp" | awk '{print $2}' | tr -d '(' | sorted)
[[ -n $methods ]] || { echo "FAIL: no public methods found in $hpp" >&2; exit 1; }
for m in $methods; do
  grep -qE "(^|[^A-Za-z_])$m\(" <<<"$plain" || fail "the C++ method Step::$m() of $(basename "$hpp") is not named"
done

# --- Fortran module ---
fortran=$(grep -iE '^\s*(public ::|[a-z].*, *public *::)' "$f90" |
          sed -E 's/.*:://; s/=.*//' | tr ',' '\n' | tr -d ' ' | sorted)
[[ -n $fortran ]] || { echo "FAIL: no public names found in $f90" >&2; exit 1; }
for n in $fortran; do
  grep -qw -- "$n" <<<"$plain" || fail "the Fortran name $n of $(basename "$f90") is not named"
done

# --- nothing invented ---
for n in $(grep -oE '\bscimesh_[a-z_]+\b' <<<"$plain" | sorted); do
  grep -qw -- "$n" "$header" "$hpp" "$f90" || fail "names $n, which none of the API sources defines"
done
for n in $(grep -oE '\bSCIMESH_(OK|ERR_[A-Z_]+)\b' <<<"$plain" | sorted); do
  grep -qw -- "$n" "$header" "$f90" || fail "names $n, which neither $(basename "$header") nor the module defines"
done

if [[ $status == 0 ]]; then
  echo "ok: $(basename "$page") documents $(wc -w <<<"$api") C functions, $(wc -w <<<"$codes") codes," \
       "$(wc -w <<<"$methods") C++ methods and $(wc -w <<<"$fortran") Fortran names"
fi
exit $status
