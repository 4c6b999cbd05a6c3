#!/usr/bin/env bash
# check-man-plugstack.sh: spank_scimesh(8) documents exactly the plugstack arguments, option and variables the plugin's code knows.
#
#   check-man-plugstack.sh PAGE PROBE SNIPPET
#
# PROBE is plugstack_probe (the plugin's own parsers); SNIPPET the
# plugstack.conf.d file shipped with the plugin. Checks: the keys of the
# PLUGSTACK ARGUMENTS entries are the keys the parser knows; each documented
# default is accepted; each documented range "from LO to HI" is exactly the
# accepted range; each documented choice (a|b) is accepted and another value
# is not; the srun option is an OPTIONS entry and the variables it reads are
# ENVIRONMENT entries; the shipped snippet's line is in the page and valid.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/man-lib.sh"

[[ $# == 3 ]] || { echo "usage: $0 PAGE PROBE SNIPPET" >&2; exit 2; }
page=$1 probe=$2 snippet=$3
[[ -r $page && -r $snippet ]] || { echo "FAIL: cannot read $page or $snippet" >&2; exit 1; }
[[ -x $probe ]] || { echo "FAIL: $probe is not an executable (build it first)" >&2; exit 1; }

status=0
fail() { echo "FAIL: $(basename "$page"): $*" >&2; status=1; }
accepts() { "$probe" "$@" 2>/dev/null; }

entries=$(roff_section "$page" "PLUGSTACK ARGUMENTS" | roff_entries)
[[ -n $entries ]] || { fail "no PLUGSTACK ARGUMENTS entries"; exit 1; }
page_keys=$(cut -f1 <<<"$entries" | sed -nE 's/^([a-z_]+)=.*/\1/p' | sort -u)
code_keys=$("$probe" --known | sort -u)
for k in $(comm -23 <(echo "$code_keys") <(echo "$page_keys")); do fail "does not document the plugstack argument $k="; done
for k in $(comm -13 <(echo "$code_keys") <(echo "$page_keys")); do fail "documents $k=, which the plugin does not know"; done

checks=0
while IFS=$'\t' read -r tag body; do
  key=${tag%%=*} spec=${tag#*=}
  grep -qx -- "$key" <<<"$code_keys" || continue
  if [[ $body =~ Default:\ ([^ ]+)\. ]]; then
    default=${BASH_REMATCH[1]}
    if [[ $default != none ]]; then
      accepts "$key=$default" || fail "$key: the documented default '$default' is refused by the plugin"
      checks=$((checks + 1))
    fi
  else
    fail "$key: the entry states no 'Default: X.'"
  fi
  if [[ $body =~ from\ ([0-9]+)\ to\ ([0-9]+) ]]; then
    lo=${BASH_REMATCH[1]} hi=${BASH_REMATCH[2]}
    accepts "$key=$lo" || fail "$key: the documented lowest value $lo is refused"
    accepts "$key=$hi" || fail "$key: the documented highest value $hi is refused"
    ! accepts "$key=$((lo - 1))" || fail "$key: $((lo - 1)), below the documented range, is accepted"
    ! accepts "$key=$((hi + 1))" || fail "$key: $((hi + 1)), above the documented range, is accepted"
    checks=$((checks + 4))
  fi
  if [[ $spec == *"|"* && $spec =~ ^[a-z0-9_|]+$ ]]; then
    for choice in ${spec//|/ }; do
      accepts "$key=$choice" || fail "$key: the documented choice '$choice' is refused"
      checks=$((checks + 1))
    done
    ! accepts "$key=not_a_documented_choice" || fail "$key: a value outside '$spec' is accepted"
  fi
done <<<"$entries"

# The srun option and the variables the plugin reads.
mapfile -t names < <("$probe" --option)
option_tags=$(roff_section "$page" OPTIONS | roff_entries | cut -f1 | long_options)
grep -qx -- "${names[0]}" <<<"$option_tags" || fail "OPTIONS has no entry for ${names[0]}"
env_tags=$(roff_section "$page" ENVIRONMENT | roff_entries | cut -f1 | tr ', ' '\n\n')
for v in "${names[@]:1}"; do
  grep -qx -- "$v" <<<"$env_tags" || fail "ENVIRONMENT has no entry for $v"
done

# The snippet admins install: valid, and shown as it is.
line=$(grep -vE '^\s*(#|$)' "$snippet" | head -n1)
read -r -a words <<<"$line"
[[ ${words[1]:-} == spank_scimesh.so ]] || fail "$(basename "$snippet") does not load spank_scimesh.so: '$line'"
accepts "${words[@]:2}" || fail "the shipped $(basename "$snippet") has arguments the plugin refuses: '$line'"
roff_plain <"$page" | grep -qxF -- "$line" || fail "does not show the shipped snippet's line '$line'"

[[ $status == 0 ]] && echo "ok: $(basename "$page") matches the plugin's $(wc -w <<<"$code_keys") plugstack keys ($checks values probed), its option and snippet"
exit $status
