# man-lib.sh: reading hand-written man(7) pages as data, for the docs/man checks (sourced, not run).
#
# A page is roff; these helpers turn the parts the checks need into plain
# text: a section's lines, the tags of its .TP entries, an entry's body.

# Plain text of roff input on stdin: macro names, quotes and font escapes
# removed, \- as -, \e as \. Arguments of alternating-font macros (.BR, .IR,
# ...) are joined without spaces, as they render.
roff_plain() {
  sed -E \
    -e 's/\\f(\[[^]]*\]|\(..|.)//g' \
    -e 's/\\-/-/g; s/\\\(aq/'"'"'/g; s/\\\(dq/"/g; s/\\\(lq/"/g; s/\\\(rq/"/g' \
    -e 's/^\\&/ /; s/\\&//g; s/\\\|//g; s/\\ / /g; s/\\e/\\/g' |
  awk '
    /^\.(BR|RB|IR|RI|BI|IB)( |$)/ {
      line = substr($0, 5); out = ""
      # split into arguments: quoted strings or unquoted words
      while (length(line) > 0) {
        sub(/^[ \t]+/, "", line)
        if (line == "") break
        if (substr(line, 1, 1) == "\"") {
          rest = substr(line, 2); i = index(rest, "\"")
          if (i == 0) { out = out rest; line = "" } else { out = out substr(rest, 1, i - 1); line = substr(rest, i + 1) }
        } else {
          i = match(line, /[ \t]/)
          if (i == 0) { out = out line; line = "" } else { out = out substr(line, 1, i - 1); line = substr(line, i) }
        }
      }
      print out; next
    }
    /^\.(B|I|SM|SB|OP|SY)( |$)/ { sub(/^\.[A-Z]+ ?/, ""); gsub(/"/, ""); print; next }
    { print }'
}

# The lines of section NAME (.SH NAME, up to the next .SH), raw roff.
# NAME may be quoted in the page or not.
roff_section() {
  local page=$1 name=$2
  awk -v want="$name" '
    /^\.SH / { h = substr($0, 5); gsub(/"/, "", h); inside = (h == want); next }
    inside { print }' "$page"
}

# The raw lines of subsection .SS NAME of the page (up to the next .SS or .SH).
roff_subsection() {
  local page=$1 name=$2
  awk -v want="$name" '
    /^\.SH / { inside = 0; next }
    /^\.SS / { h = substr($0, 5); gsub(/"/, "", h); inside = (h == want); next }
    inside { print }' "$page"
}

# Every .TP entry of roff on stdin as one line "TAG<TAB>BODY", both plain
# text; an entry ends at the next .TP, .IP, .SH, .SS or paragraph macro.
roff_entries() {
  roff_plain | awk '
    function flush() { if (have) print tag "\t" body; have = 0; tag = ""; body = "" }
    /^\.(SH|SS|PP|LP|P|IP)( |$)/ { flush(); tp = 0; next }
    /^\.TP( |$)/ { flush(); tp = 1; next }
    tp == 1 { tag = $0; tp = 2; have = 1; next }
    /^\./ { next }
    have { body = body " " $0 }
    END { flush() }'
}

# Long options (--name) in text on stdin, one per line, sorted, unique.
long_options() {
  grep -oE -- '(^|[^A-Za-z0-9_-])--[a-z][a-z0-9-]*' | sed -E 's/^[^-]//' | sort -u
}
