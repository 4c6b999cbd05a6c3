#!/usr/bin/env bash
# version-lines.sh: every program the build installs on PATH answers --version with one line naming this build.
#
# Installs the whole build tree (cmake --install, DESTDIR under the test's
# work directory, as the packages are made), then runs each executable in
# bin/ and sbin/ with --version: exit 0, nothing on stderr, and exactly
#   NAME VERSION (commit COMMIT, SLURM RELEASE)
# where VERSION is the project's, RELEASE the SLURM release this tree was
# configured for, and COMMIT the source tree's HEAD (or "unknown" outside a
# git work tree). The example programs (libexec/scimesh/examples) are step
# programs of the examples, not commands, and are not asked.
#
# Environment (tests/version/CMakeLists.txt): SCIMESH_BUILD_DIR,
# SCIMESH_SOURCE_DIR, SCIMESH_TEST_WORK, SCIMESH_PROJECT_VERSION,
# SCIMESH_SLURM_RELEASE.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
build=${SCIMESH_BUILD_DIR:?} src=${SCIMESH_SOURCE_DIR:?} version=${SCIMESH_PROJECT_VERSION:?}
slurm=${SCIMESH_SLURM_RELEASE:-}
[[ -n $slurm ]] || slurm=none
work=${SCIMESH_TEST_WORK:?}/version_lines
rm -rf "$work"
mkdir -p "$work"

# The commit the binaries must name: HEAD's, when the sources are the top of a git work tree.
commit=unknown
if top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
   [[ $(realpath "$top") == $(realpath "$src") ]]; then
  commit=$(git -C "$src" rev-parse --short HEAD)
fi

DESTDIR=$work/root cmake --install "$build" --prefix /usr >"$work/install.log" 2>&1 ||
  { tail -n 20 "$work/install.log" >&2; fail "cmake --install failed (build the whole tree first)"; }

programs=()
for dir in "$work/root/usr/bin" "$work/root/usr/sbin"; do
  [[ -d $dir ]] || continue
  for f in "$dir"/*; do
    [[ -f $f && -x $f ]] && programs+=("$f")
  done
done
names=$(for p in "${programs[@]}"; do basename "$p"; done | sort | tr '\n' ' ')
for expected in scimesh-agent scimesh-coordinator scimesh-launch scimesh-rank; do
  [[ " $names" == *" $expected "* ]] || fail "$expected is not installed in bin/ (installed: $names)"
done

# check_line NAME WHAT OUT ERR RC: the answer of one --version call.
check_line() {
  local name=$1 what=$2 out=$3 err=$4 rc=$5 want
  [[ $rc == 0 ]] || fail "'$what' exited $rc: $out $err"
  [[ -z $err ]] || fail "'$what' wrote to stderr: $err"
  [[ $(printf '%s\n' "$out" | wc -l) == 1 ]] || fail "'$what' printed more than one line: $out"
  [[ $out =~ ^$name\ [0-9]+\.[0-9]+\.[0-9]+\ \(commit\ ([0-9a-f]{7,40}|unknown),\ SLURM\ ([0-9]+\.[0-9]{2}\.[0-9]+|none)\)$ ]] ||
    fail "'$what' printed '$out', not '$name VERSION (commit COMMIT, SLURM RELEASE)'"
  want="$name $version (commit $commit, SLURM $slurm)"
  [[ $out == "$want" ]] || fail "'$what' printed '$out', this build is '$want' (a stale binary? rebuild)"
  echo "ok: $what: $out"
}

for p in "${programs[@]}"; do
  name=$(basename "$p")
  rc=0
  out=$(timeout 10 "$p" --version 2>"$work/err") || rc=$?
  check_line "$name" "$name --version" "$out" "$(cat "$work/err")" "$rc"
done

# The coordinator takes commands: `version` is the same as --version.
rc=0
out=$(timeout 10 "$work/root/usr/bin/scimesh-coordinator" version 2>"$work/err") || rc=$?
check_line scimesh-coordinator "scimesh-coordinator version" "$out" "$(cat "$work/err")" "$rc"
rc=0
timeout 10 "$work/root/usr/bin/scimesh-coordinator" version extra >/dev/null 2>"$work/err" || rc=$?
[[ $rc == 2 ]] || fail "'scimesh-coordinator version extra' exited $rc, not 2 (usage)"
echo "ok: 'scimesh-coordinator version extra' is a usage error"

# The man pages' headers name the same version.
for page in "$src"/docs/man/*.[1-8]; do
  grep -q "^\.TH .* \"scimesh $version\" " "$page" ||
    fail "$(basename "$page")'s .TH line does not name \"scimesh $version\": $(grep '^\.TH' "$page")"
done
echo "ok: every man page's header names scimesh $version"
