#!/usr/bin/env bash
# The plugin's package for a SLURM built from source: configured with
# -DSLURM_ROOT (the headers of one release in ../shared/slurm, unpacked by
# scripts/build-slurm --headers), it depends on that major release of
# SchedMD's packages (slurm-smd), says which release in its description, and
# apt refuses it on this machine, whose SLURM is Debian's 22.05.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/harness.sh
source "$repo/tests/lib/harness.sh"
harness_init packaging-plugin-for-release
trap harness_cleanup EXIT
release=${SCIMESH_PACKAGE_SLURM:-25.11}
sources=${SCIMESH_SLURM_SOURCES:-$(cd "$repo/.." && pwd)/shared/slurm}
if ! compgen -G "$sources/slurm-${release//./-}-*.tar.xz" >/dev/null; then
  echo "SKIP: no SLURM $release sources in $sources (../shared/slurm)"; exit 77
fi
root=$("$repo/scripts/build-slurm" --headers "$release")
note "the plugin alone, built for SLURM $release ($root)"
export CCACHE_BASEDIR=$repo CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
(cd "$repo" && cmake --preset dev -B "$WORK/tree" "${launcher[@]}" -DSLURM_ROOT="$root" -DSCIMESH_BUILD_BENCHMARKS=OFF \
  -DCMAKE_INSTALL_PREFIX=/usr) >"$WORK/configure.log" 2>&1 || fail "configure failed: $(tail -n 20 "$WORK/configure.log")"
cmake --build "$WORK/tree" -j "$(nproc)" --target spank_scimesh >"$WORK/build.log" 2>&1 ||
  fail "the plugin does not build: $(grep -m 5 error "$WORK/build.log")"
cpack --config "$WORK/tree/CPackConfig.cmake" -B "$WORK/cpack" -D CPACK_COMPONENTS_ALL=plugin >"$WORK/cpack.log" 2>&1 ||
  fail "cpack failed: $(tail -n 20 "$WORK/cpack.log")"
deb=$(ls "$WORK"/cpack/scimesh-spank-plugin_*.deb) || fail "cpack made no scimesh-spank-plugin package"
next=$(awk -F. '{printf "%s.%02d", $1, $2 + 1}' <<<"$release")
depends=$(dpkg-deb -f "$deb" Depends)
note "Depends: $depends"
[[ $depends == "slurm-smd (>= $release), slurm-smd (<< $next)"* ]] ||
  fail "the package does not pin SLURM $release: Depends: $depends"
dpkg-deb -f "$deb" Description | grep -q "Built for Slurm $release\." || fail "the description does not name SLURM $release"
note "apt refuses it where SLURM $release is not installed"
if apt-get install --simulate --no-download "$deb" >"$WORK/apt.log" 2>&1; then
  fail "apt would install a plugin built for SLURM $release here: $(cat "$WORK/apt.log")"
fi
grep -q 'slurm-smd' "$WORK/apt.log" || fail "apt refused for another reason: $(cat "$WORK/apt.log")"
note "ok: a package for SLURM $release, refused elsewhere"
