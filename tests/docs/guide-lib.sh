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

# guide_recipe_reruns FILE WHAT: the recipe in FILE can be run again at
# once, in the same directory.
# - A wait `until grep -q registered LOG` reads a LOG emptied (`: >LOG`)
#   before the program writing it starts. `2>LOG &` truncates LOG in the
#   child, which may run after the wait's first grep: that grep would read
#   the earlier try's "registered", and the run would be started at a
#   coordinator that is not listening yet.
# - `kill $coordinator` is followed by `wait $coordinator`: a coordinator
#   still stopping holds the database, and the next try's coordinator
#   refuses to start ("another coordinator is using the database").
guide_recipe_reruns() {
  local file=$1 what=$2 log
  while IFS= read -r log; do
    awk -v f="$log" '
      $0 ~ "^: *>" f "( |$)" { emptied = 1 }
      index($0, "grep -q registered " f) { exit !emptied }' "$file" ||
      fail "$what waits for 'registered' in $log without emptying it first (': >$log' before the program starts): a second try reads the first try's line"
  done < <(grep -o 'grep -q registered [^ ;]*' "$file" | awk '{ print $4 }')
  if grep -q 'kill \$coordinator' "$file" && ! grep -q 'kill \$coordinator; wait \$coordinator' "$file"; then
    fail "$what stops the coordinator without waiting for it ('kill \$coordinator; wait \$coordinator'): a second try finds the database still held"
  fi
}
