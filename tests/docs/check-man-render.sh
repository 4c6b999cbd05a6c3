#!/usr/bin/env bash
# check-man-render.sh: every page in docs/man renders without a warning and has the sections a man page needs.
#
#   check-man-render.sh MAN_DIR
#
# For each MAN_DIR/*.[1-8]: groff -man -ww (all warnings) at terminal width
# and `man --warnings -l` print nothing on stderr; lexgrog (whatis) parses
# its NAME line; .TH names the file and its section; the sections of its kind
# are present; every scimesh page it cites as name(N) exists. Exit 77 (CTest
# skip) when groff is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/man-lib.sh"

dir=${1:?usage: $0 MAN_DIR}
if ! command -v groff >/dev/null; then
  echo "SKIP: groff is not installed (Debian package groff-base)"
  exit 77
fi
shopt -s nullglob
pages=("$dir"/*.[1-8])
[[ ${#pages[@]} -gt 0 ]] || { echo "FAIL: no man pages in $dir" >&2; exit 1; }

status=0
fail() { echo "FAIL: $*" >&2; status=1; }
# man-db's man, not a stub (minimized container images replace it).
have_man=0
man --version 2>/dev/null | grep -q '^man' && have_man=1

for page in "${pages[@]}"; do
  file=$(basename "$page")
  name=${file%.*} section=${file##*.}

  warnings=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$page" 2>&1 >/dev/null || echo "groff exited non-zero")
  [[ -z $warnings ]] || fail "$file: groff -man -ww: $warnings"
  if [[ $have_man == 1 ]]; then
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null ||
               echo "man exited non-zero")
    [[ -z $warnings ]] || fail "$file: man --warnings: $warnings"
  fi
  if command -v lexgrog >/dev/null; then
    lexgrog "$page" >/dev/null 2>&1 || fail "$file: lexgrog cannot parse its NAME section (whatis would miss it)"
  fi

  th=$(grep -m1 '^\.TH ' "$page" || true)
  th_name=$(printf '%s\n' "$th" | awk '{print $2}' | sed 's/\\-/-/g')
  th_section=$(printf '%s\n' "$th" | awk '{print $3}')
  [[ $th_name == "${name^^}" ]] || fail "$file: .TH names '$th_name', expected '${name^^}'"
  [[ $th_section == "$section" ]] || fail "$file: .TH section '$th_section', expected $section"
  grep -q '^\.\\"' <(head -n1 "$page") || fail "$file: the first line must be a comment saying what the page is for"

  case $section in
    1) required=("NAME" "SYNOPSIS" "DESCRIPTION" "OPTIONS" "ENVIRONMENT" "FILES" "EXIT STATUS" "SIGNALS" "EXAMPLES" "SEE ALSO") ;;
    3) required=("NAME" "SYNOPSIS" "DESCRIPTION" "RETURN VALUE" "ERRORS" "ENVIRONMENT" "FILES" "EXAMPLES" "SEE ALSO") ;;
    *) required=("NAME" "SYNOPSIS" "DESCRIPTION" "OPTIONS" "ENVIRONMENT" "FILES" "EXAMPLES" "SEE ALSO") ;;
  esac
  headings=$(grep '^\.SH ' "$page" | sed -E 's/^\.SH +//; s/"//g')
  for h in "${required[@]}"; do
    grep -qx -- "$h" <<<"$headings" || fail "$file: no section $h"
  done
  # "name - what it is", or "name, other, names - what it is" (each listed
  # name becomes a whatis entry).
  name_line=$(roff_section "$page" NAME | roff_plain | tr '\n' ' ')
  grep -qE "^$name(, [A-Za-z0-9_.:-]+)* - [^ ]" <<<"$name_line" ||
    fail "$file: NAME must read '$name - what it is', not '$name_line'"

  # Cross references to the project's own pages must resolve.
  for ref in $(roff_plain <"$page" | grep -oE '\b(scimesh[a-z_-]*|spank_scimesh)\([1-8]\)' | sort -u); do
    target=${ref%(*}.${ref: -2:1}
    [[ -e $dir/$target ]] || fail "$file: cites $ref, but there is no $target"
  done
done

[[ $status == 0 ]] && echo "ok: ${#pages[@]} pages render without warnings and have their sections"
exit $status
