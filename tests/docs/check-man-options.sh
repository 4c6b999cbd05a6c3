#!/usr/bin/env bash
# check-man-options.sh: a command's man page documents exactly the long options its --help prints, with the same defaults.
#
#   check-man-options.sh PAGE BINARY [--foreign a,b,..] HELP_ARGS...
#
# HELP_ARGS are word-split argument lists, one per help text ("--help",
# "serve --help"). An option of this command is any --name in those texts,
# except the --foreign ones (other programs' options the help mentions, such
# as srun's --exact). An option the page documents is a long option in the
# tag of a .TP entry. Fails when one set lacks a member of the other, or when
# a default the help states (an option line's "(default X" with a number,
# path, URL or variable) is not the "Default: X" of that option's entry.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/man-lib.sh"

[[ $# -ge 3 ]] || { echo "usage: $0 PAGE BINARY [--foreign a,b] HELP_ARGS..." >&2; exit 2; }
page=$1 bin=$2
shift 2
foreign=""
if [[ $1 == --foreign ]]; then foreign=$2; shift 2; fi
[[ -r $page ]] || { echo "FAIL: no man page $page" >&2; exit 1; }
[[ -x $bin ]] || { echo "FAIL: $bin is not an executable (build it first)" >&2; exit 1; }

help=""
for args in "$@"; do
  # shellcheck disable=SC2086  # one help invocation's arguments, split on purpose
  if ! text=$("$bin" $args 2>&1); then
    echo "FAIL: '$(basename "$bin") $args' exited non-zero:" >&2
    printf '%s\n' "$text" >&2
    exit 1
  fi
  help+=$text$'\n'
done

help_options=$(printf '%s' "$help" | long_options)
for f in ${foreign//,/ }; do
  help_options=$(printf '%s\n' "$help_options" | grep -vx -- "--$f" || true)
done
entries=$(roff_entries <"$page")
page_options=$(printf '%s\n' "$entries" | cut -f1 | long_options)

status=0
missing=$(comm -23 <(printf '%s\n' "$help_options") <(printf '%s\n' "$page_options") | sed '/^$/d')
extra=$(comm -13 <(printf '%s\n' "$help_options") <(printf '%s\n' "$page_options") | sed '/^$/d')
for o in $missing; do
  echo "FAIL: $(basename "$page") has no .TP entry for $o, which '$(basename "$bin") --help' prints" >&2
  status=1
done
for o in $extra; do
  echo "FAIL: $(basename "$page") documents $o, which '$(basename "$bin") --help' does not print" >&2
  status=1
done

# Defaults: "(default X" on an option's line or its continuation lines.
defaults=$(printf '%s' "$help" | awk '
  function flush() {
    if (opt != "" && match(text, /\(default:? [^,;)]*/)) {
      d = substr(text, RSTART, RLENGTH); sub(/^\(default:? /, "", d); split(d, w, " ")
      if (w[1] ~ /[^A-Za-z]/) print opt "\t" w[1]
    }
    opt = ""; text = ""
  }
  /^[ \t]+(-[A-Za-z], )?--[a-z]/ {
    flush(); line = $0; sub(/^[ \t]+(-[A-Za-z], )?/, "", line)
    opt = line; sub(/[ \t=].*/, "", opt); text = line; next
  }
  /^[ \t]+[^ \t-]/ && opt != "" { text = text " " $0; next }
  { flush() }
  END { flush() }')
checked=0
while IFS=$'\t' read -r opt value; do
  [[ -n $opt ]] || continue
  bodies=$(printf '%s\n' "$entries" | awk -F'\t' -v o="$opt" '
    { n = split($1, w, /[ ,=]+/); for (i = 1; i <= n; i++) if (w[i] == o) { print $2; break } }')
  if [[ -z $bodies ]]; then
    continue  # already reported as missing
  fi
  # The entry must say "Default: VALUE" with nothing more of a word after it
  # (so 10 does not pass for 100).
  pattern="Default:$(printf '%s' "$value" | sed -E 's/[][\.*^$+?(){}|/]/\\&/g')([^A-Za-z0-9_]|\$)"
  if ! printf '%s' "$bodies" | tr -d ' \t\n' | grep -qE -- "$pattern"; then
    echo "FAIL: $(basename "$page"): the entry of $opt does not say 'Default: $value' as --help does" >&2
    status=1
  fi
  checked=$((checked + 1))
done <<<"$defaults"

if [[ $status == 0 ]]; then
  echo "ok: $(basename "$page") documents the $(printf '%s\n' "$help_options" | grep -c .) options of $(basename "$bin") --help ($checked defaults compared)"
fi
exit $status
