#!/usr/bin/env bash
# version-commit-script.sh: cmake/version_commit.cmake writes HEAD's short hash, "unknown" outside a work tree's top, and rewrites only on change.
#
#   version-commit-script.sh CMAKE SCRIPT CXX
#
# Each case runs the script as the build does (cmake -DSOURCE_DIR -DOUTPUT -P)
# on a directory made here: a fresh git repository, the same after a new
# commit, a plain directory (a tarball) and a plain directory inside a git
# repository (a tarball unpacked in someone's checkout).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake=$1 script=$2 cxx=$3
work=${SCIMESH_TEST_WORK:?}/version_commit_script
rm -rf "$work"
mkdir -p "$work"
git_() { git -C "$1" -c user.name=test -c user.email=test@example.invalid -c commit.gpgsign=false "${@:2}"; }

# run SOURCE_DIR OUTPUT: the script as the build runs it.
run() { "$cmake" -DSOURCE_DIR="$1" -DOUTPUT="$2" -P "$script" || fail "the script failed on $1"; }
# commit_in OUTPUT: the commit the generated source holds.
commit_in() { sed -n 's/^const char kBuildCommit\[\] = "\(.*\)";$/\1/p' "$1"; }

repo=$work/repo
mkdir -p "$repo"
git_ "$repo" init -q
echo one >"$repo/file"
git_ "$repo" add file
git_ "$repo" commit -q -m one
out=$work/repo.cc
run "$repo" "$out"
[[ $(commit_in "$out") == $(git_ "$repo" rev-parse --short HEAD) ]] ||
  fail "in a git work tree the commit is '$(commit_in "$out")', not HEAD's $(git_ "$repo" rev-parse --short HEAD)"
echo "ok: a git work tree: $(commit_in "$out")"

# Unchanged HEAD: the file is left alone (same inode, same time), so nothing rebuilds.
before=$(stat -c '%i %y' "$out")
sleep 0.05
run "$repo" "$out"
[[ $(stat -c '%i %y' "$out") == "$before" ]] || fail "the script rewrote the file though the commit did not change"
echo "ok: same commit: the file is not touched"

echo two >"$repo/file"
git_ "$repo" commit -q -am two
run "$repo" "$out"
[[ $(commit_in "$out") == $(git_ "$repo" rev-parse --short HEAD) ]] ||
  fail "after a new commit the file says '$(commit_in "$out")', not $(git_ "$repo" rev-parse --short HEAD)"
echo "ok: a new commit: $(commit_in "$out")"

plain=$work/tarball
mkdir -p "$plain"
run "$plain" "$work/plain.cc"
[[ $(commit_in "$work/plain.cc") == unknown ]] || fail "outside git the commit is '$(commit_in "$work/plain.cc")', not unknown"
echo "ok: no git: unknown"

mkdir -p "$repo/unpacked"
run "$repo/unpacked" "$work/nested.cc"
[[ $(commit_in "$work/nested.cc") == unknown ]] ||
  fail "sources inside another repository got its commit '$(commit_in "$work/nested.cc")', not unknown"
echo "ok: sources inside another repository: unknown"

# The generated source compiles on its own (the build compiles it with -Werror).
"$cxx" -std=c++20 -Wall -Wextra -Wpedantic -Werror -c "$out" -o "$work/repo.o" || fail "the generated source does not compile"
echo "ok: the generated source compiles"
