# guide-lib.sh: reading docs/user-guide.md's code blocks for the tests in
# tests/docs/ (bash; source it after tests/lib/harness.sh). Needs $guide.

# guide_extract_steps DIR: pi_step.c, pi_step.cc and pi_step.f90 from the
# guide's C, C++ and Fortran blocks (each block's first line names its file).
guide_extract_steps() {
  awk -v dir="$1" '
    /^```(c|cpp|fortran)$/ { inside = 1; text = ""; next }
    /^```$/ && inside {
      inside = 0
      if (match(text, /pi_step\.(c|cc|f90):/)) { f = dir "/" substr(text, RSTART, RLENGTH - 1); printf "%s", text > f; close(f) }
      next
    }
    inside { text = text $0 "\n" }' "$guide"
  local f
  for f in pi_step.c pi_step.cc pi_step.f90; do
    [[ -s $1/$f ]] || fail "docs/user-guide.md has no code block starting with '$f:'"
  done
}

# guide_sh_block HEADING N: the Nth ```sh block under the line HEADING (up
# to the next heading), as the guide writes it.
guide_sh_block() {
  awk -v h="$1" -v n="$2" '
    $0 == h { under = 1; k = 0; next }
    under && !inside && /^#/ { under = 0 }
    under && !inside && /^```sh$/ { inside = 1; k++; next }
    inside && /^```$/ { inside = 0; next }
    inside && k == n { print }' "$guide"
}
