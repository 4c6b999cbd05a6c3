#!/usr/bin/env bash
# System test of the Debian packages: cpack in the built tree (into a temp dir),
# each .deb's metadata and contents, a real `dpkg -i` of all of them into a
# private root whose admindir is a copy of this machine's (so Depends and file
# conflicts are checked against what is installed here, and the real system is
# never touched), removal and purge, then out-of-tree consumers built against
# the private root (CMake find_package in C, C++ and Fortran; pkg-config with
# mpicc), and the installed binaries' --help and --version.
#
# Needs (set by CTest): SCIMESH_BUILD_DIR, SCIMESH_SOURCE_DIR, SCIMESH_TEST_WORK,
# SCIMESH_COORDINATOR_BIN, SCIMESH_INSTALLED_FILES (':'-separated built files).
source "$(dirname "$0")/../lib/harness.sh"
harness_init packaging
: "${SCIMESH_BUILD_DIR:?set by CTest}" "${SCIMESH_SOURCE_DIR:?set by CTest}" "${SCIMESH_INSTALLED_FILES:?set by CTest}"
BUILD=$SCIMESH_BUILD_DIR
SRC=$SCIMESH_SOURCE_DIR
HERE=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
phase() { note "[$SECONDS s] $*"; }

# cpack installs what is built and never builds: say so before it fails obscurely.
IFS=: read -ra built <<<"$SCIMESH_INSTALLED_FILES"
for f in "${built[@]}"; do
  [[ -f $f ]] || fail "$(basename "$f") is not built: build the tree first (cmake --build)"
done

cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
version=$(cache CMAKE_PROJECT_VERSION)-1
plugin_dir=$(cache SCIMESH_SLURM_PLUGIN_DIR)
conf_dir=$(cache SCIMESH_SLURM_CONF_DIR)
[[ -n $version && -n $plugin_dir && -n $conf_dir ]] || fail "cannot read the build's cache"
slurm_release=$(sed -n 's/^#define SLURM_VERSION_NUMBER 0x\(..\)\(..\)..$/\1 \2/p' /usr/include/slurm/slurm_version.h |
  { read -r ma mi; printf '%d.%02d' "0x$ma" "0x$mi"; })

phase "cpack -G DEB (version $version)"
cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/cpack" >"$WORK/cpack.log" 2>&1 || fail "cpack failed"
packages=(scimesh-spank-plugin scimesh-launcher libscimesh-mpi0 libscimesh-mpi-dev python3-scimesh scimesh-coordinator
  scimesh-examples scimesh-doc)
declare -A deb
for p in "${packages[@]}"; do
  arch=amd64
  [[ $p == scimesh-doc || $p == python3-scimesh ]] && arch=all
  deb[$p]=$WORK/cpack/${p}_${version}_${arch}.deb
  [[ -f ${deb[$p]} ]] || fail "cpack made no $(basename "${deb[$p]}")"
done
count=$(find "$WORK/cpack" -maxdepth 1 -name '*.deb' | wc -l)
[[ $count == "${#packages[@]}" ]] || fail "cpack made $count packages, expected ${#packages[@]}"

# --- metadata and contents, package by package ----------------------------------
field() { dpkg-deb -f "${deb[$1]}" "$2"; }
has() {  # has PACKAGE PATH...: each path (relative to /) is in the package
  local p=$1 f; shift
  for f in "$@"; do grep -qxF "./$f" "$WORK/$p.contents" || fail "$p lacks /$f"; done
}
lacks() {  # lacks PACKAGE REGEX: no path in the package matches
  if grep -qE "$2" "$WORK/$1.contents"; then fail "$1 holds $(grep -m1 -E "$2" "$WORK/$1.contents")"; fi
}
depends_on() {
  # No `| grep -q` anywhere: grep leaving early would SIGPIPE the writer (pipefail).
  grep -qxF "$2" <<<"$(field "$1" Depends | tr ',' '\n' | sed 's/^ *//')" || fail "$1 Depends lacks '$2': $(field "$1" Depends)"
}
for p in "${packages[@]}"; do
  # Files and links only: directories such as /usr/bin are shared by packages.
  dpkg-deb -c "${deb[$p]}" | awk '$1 !~ /^d/ {print $6}' | sort >"$WORK/$p.contents"
  dpkg-deb -I "${deb[$p]}" >"$WORK/$p.info"
  [[ $(field "$p" Package) == "$p" ]] || fail "$p: Package is '$(field "$p" Package)'"
  [[ $(field "$p" Version) == "$version" ]] || fail "$p: Version is '$(field "$p" Version)'"
  for f in Maintainer Section Description; do
    [[ -n $(field "$p" "$f") ]] || fail "$p has no $f"
  done
  [[ $(field "$p" Maintainer) == *'<'*@*'>' ]] || fail "$p: Maintainer is not 'Name <email>'"
  [[ $(field "$p" Description | wc -l) -ge 3 ]] || fail "$p: Description has no long description"
  field "$p" Description | sed -n 1p >>"$WORK/synopses"
done
[[ $(sort -u "$WORK/synopses" | wc -l) == "${#packages[@]}" ]] || fail "packages share a synopsis: $(sort "$WORK/synopses" | uniq -d)"
if grep -q 'built using CMake' "$WORK/synopses"; then fail "CPack's default synopsis: $(cat "$WORK/synopses")"; fi

has scimesh-spank-plugin "${plugin_dir#/}/spank_scimesh.so" "${conf_dir#/}/plugstack.conf.d/scimesh.conf"
[[ -f $plugin_dir/task_none.so ]] || fail "$plugin_dir is not SLURM's PluginDir on this machine"
depends_on scimesh-spank-plugin "slurm-wlm-basic-plugins (>= $slurm_release)"
grep -q 'libcurl' <<<"$(field scimesh-spank-plugin Depends)" || fail "no shared-library Depends (dpkg-shlibdeps)"
grep -qE '^ +[0-9]+ bytes, +[0-9]+ lines +conffiles' "$WORK/scimesh-spank-plugin.info" || fail "no conffiles"
[[ $(dpkg-deb -I "${deb[scimesh-spank-plugin]}" conffiles) == "$conf_dir/plugstack.conf.d/scimesh.conf" ]] ||
  fail "the plugstack snippet is not the plugin's only conffile"
lacks scimesh-spank-plugin '^\./usr/(bin|include)'

has scimesh-launcher usr/bin/scimesh-launch usr/bin/scimesh-rank usr/bin/scimesh-agent usr/share/man/man1/scimesh-agent.1.gz \
  usr/bin/scimesh-alloc usr/share/man/man1/scimesh-alloc.1.gz usr/lib/systemd/user/scimesh-alloc@.service
grep -q 'libhwloc' <<<"$(field scimesh-launcher Depends)" || fail "scimesh-launcher does not depend on hwloc (placement)"
unit=$(dpkg-deb --fsys-tarfile "${deb[scimesh-launcher]}" | tar -xO ./usr/lib/systemd/user/scimesh-alloc@.service)
grep -q '^ExecStart=/usr/bin/scimesh-alloc ' <<<"$unit" || fail "the unit does not start /usr/bin/scimesh-alloc: $unit"

lib=$(grep -m1 -E '/libscimesh_mpi\.so\.0$' "$WORK/libscimesh-mpi0.contents") || fail "libscimesh-mpi0 lacks libscimesh_mpi.so.0"
libdir=${lib#./}
libdir=${libdir%/*}
has libscimesh-mpi0 "$libdir/libscimesh_mpi.so.0" "$libdir/libscimesh_mpi_fortran.so.0"
lacks libscimesh-mpi0 '(\.so$|/include/|/cmake/|pkgconfig)'
[[ $(dpkg-deb -I "${deb[libscimesh-mpi0]}" shlibs) == "libscimesh_mpi 0 libscimesh-mpi0 (>= "* ]] ||
  fail "libscimesh-mpi0 has no shlibs entry for libscimesh_mpi"
[[ $(field libscimesh-mpi0 Section) == libs ]] || fail "libscimesh-mpi0 is not in section libs"

has libscimesh-mpi-dev usr/include/scimesh/step.h usr/include/scimesh/step.hpp \
  usr/include/scimesh/fortran/scimesh_step.mod "$libdir/libscimesh_mpi.so" "$libdir/libscimesh_mpi_fortran.so" \
  "$libdir/cmake/scimesh/scimeshConfig.cmake" "$libdir/cmake/scimesh/scimeshConfigVersion.cmake" \
  "$libdir/cmake/scimesh/scimeshTargets.cmake" "$libdir/pkgconfig/scimesh-mpi.pc"
depends_on libscimesh-mpi-dev "libscimesh-mpi0 (= $version)"
depends_on libscimesh-mpi-dev "libopenmpi-dev"

has python3-scimesh usr/lib/python3/dist-packages/scimesh/__init__.py usr/lib/python3/dist-packages/scimesh/step.py \
  usr/lib/python3/dist-packages/scimesh/_library.py
depends_on python3-scimesh "libscimesh-mpi0 (= $version)"
depends_on python3-scimesh "python3-mpi4py"
has scimesh-coordinator usr/bin/scimesh-coordinator
has scimesh-examples usr/libexec/scimesh/examples/poisson usr/libexec/scimesh/examples/convergence_report \
  usr/share/scimesh/examples/mesh-study.json usr/share/scimesh/examples/mesh-study-workstation.json \
  usr/share/scimesh/examples/fill.sbatch usr/share/scimesh/examples/README.md \
  usr/share/scimesh/examples/worker-hello/main.cc usr/share/scimesh/examples/poisson/README.md \
  usr/share/scimesh/examples/poisson/solve.cc
lacks scimesh-examples '_test\.cc$'
depends_on scimesh-examples "libscimesh-mpi0 (= $version)"
has scimesh-doc usr/share/doc/scimesh/protocol.md usr/share/doc/scimesh/admin.md usr/share/doc/scimesh/install.md \
  usr/share/doc/scimesh/protocol/claim.response.json

# Every man page in docs/man, whatever their number, is in a package, in its section, gzipped.
pages=0
for page in "$SRC"/docs/man/*.[1-8]; do
  [[ -f $page ]] || continue
  name=${page##*/}
  grep -qxF "./usr/share/man/man${name##*.}/$name.gz" "$WORK"/*.contents || fail "man page $name is in no package (gzipped)"
  pages=$((pages + 1))
done
phase "metadata and contents checked ($pages man pages)"

# Every file `cmake --install` installs is in exactly one package: an install
# rule without a packaged component would ship nowhere.
DESTDIR=$WORK/staged cmake --install "$BUILD" --prefix /usr >"$WORK/cmake-install.log" 2>&1 || fail "cmake --install failed"
(cd "$WORK/staged" && find . ! -type d | sort) >"$WORK/installed.list"
cat "$WORK"/*.contents | sort >"$WORK/packaged.list"
missing=$(comm -23 "$WORK/installed.list" "$WORK/packaged.list")
[[ -z $missing ]] || fail "installed but in no package: $missing"
dups=$(uniq -d "$WORK/packaged.list")
[[ -z $dups ]] || fail "in more than one package: $dups"
phase "every installed file is in exactly one package"

# --- dpkg -i into a private root ------------------------------------------------
# The admindir starts as a copy of this machine's: Depends are resolved against
# what is really installed here (no --force-depends), and dpkg refuses a file
# that another installed package owns. The real /var/lib/dpkg is only read.
ROOT=$WORK/root
ADMIN=$ROOT/var/lib/dpkg
mkdir -p "$ADMIN/info" "$ADMIN/updates" "$ADMIN/triggers"
cp /var/lib/dpkg/status "$ADMIN/status"
cp /var/lib/dpkg/info/*.list "$ADMIN/info/"
touch "$ADMIN/available"
# dpkg runs maintainer scripts chrooted into the root (CPack's postinst/postrm
# of libscimesh-mpi0 call ldconfig): give it a shell and ldconfig (static) there.
mkdir -p "$ROOT/bin" "$ROOT/sbin" "$ROOT/lib64" "$ROOT/lib/x86_64-linux-gnu" "$ROOT/etc"
cp "$(readlink -f /bin/sh)" "$ROOT/bin/sh"
cp /sbin/ldconfig "$ROOT/sbin/ldconfig"
cp "$(readlink -f /lib64/ld-linux-x86-64.so.2)" "$ROOT/lib64/ld-linux-x86-64.so.2"
cp "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)" "$ROOT/lib/x86_64-linux-gnu/libc.so.6"
as_root=()
[[ $(id -u) == 0 ]] || as_root=(unshare --map-root-user)  # chroot needs (namespaced) root
dpkg_private() { "${as_root[@]}" dpkg --instdir="$ROOT" --admindir="$ADMIN" "$@"; }
query() { dpkg-query --admindir="$ADMIN" "$@"; }
debs=()
for p in "${packages[@]}"; do debs+=("${deb[$p]}"); done
dpkg_private -i "${debs[@]}" >"$WORK/dpkg-install.log" 2>&1 || fail "dpkg -i into the private root failed"
for p in "${packages[@]}"; do
  [[ $(query -W -f='${Status}' "$p") == "install ok installed" ]] || fail "$p is not installed: $(query -W -f='${Status}' "$p")"
done
grep -q "$conf_dir/plugstack.conf.d/scimesh.conf [0-9a-f]\{32\}" <<<"$(query -W -f='${Conffiles}\n' scimesh-spank-plugin)" ||
  fail "dpkg did not register the plugstack snippet as a conffile"
snippet=$ROOT$conf_dir/plugstack.conf.d/scimesh.conf
grep -qE '^# *optional +spank_scimesh\.so ' "$snippet" || fail "the snippet lacks the commented plugin line"
if grep -vE '^[[:space:]]*(#|$)' "$snippet"; then fail "the installed snippet enables the plugin by itself"; fi
# The postinst ran ldconfig inside the root: the loader cache there knows the library.
grep -q 'libscimesh_mpi\.so\.0 ' <<<"$(ldconfig -C "$ROOT/etc/ld.so.cache" -p)" ||
  fail "the private root's ld.so.cache lacks libscimesh_mpi.so.0 (postinst ldconfig)"
phase "installed with dpkg into the private root"

R_LIB=$ROOT/$libdir
# Stripped: no debug sections left in what the packages install.
for f in "$ROOT/usr/bin/scimesh-launch" "$ROOT/usr/bin/scimesh-coordinator" "$R_LIB/libscimesh_mpi.so.0" \
  "$ROOT$plugin_dir/spank_scimesh.so"; do
  if grep -qE '\.debug_info|\.symtab' <<<"$(readelf -S "$f")"; then fail "${f##*/} is not stripped"; fi
done
# Stripping kept the dynamic exports: only scimesh_* and slurm_spank_* (the components' own checks).
"$SRC/tests/mpi/check-exports.sh" "$R_LIB/libscimesh_mpi.so.0" >"$WORK/exports.log" 2>&1 || fail "libscimesh_mpi exports"
"$SRC/plugin/check-exports.sh" "$ROOT$plugin_dir/spank_scimesh.so" >>"$WORK/exports.log" 2>&1 || fail "plugin exports"

# The installed commands run, with no library missing, and name the packages' version.
for b in scimesh-launch scimesh-rank scimesh-agent scimesh-coordinator; do
  if grep 'not found' <<<"$(LD_LIBRARY_PATH=$R_LIB ldd "$ROOT/usr/bin/$b")"; then fail "$b: a library is missing"; fi
  "$ROOT/usr/bin/$b" --help >"$WORK/help-$b.log" 2>&1 || fail "$b --help exited $?"
  grep -qi "usage" "$WORK/help-$b.log" || fail "$b --help printed no usage"
  line=$("$ROOT/usr/bin/$b" --version) || fail "$b --version exited $?"
  [[ $line == "$b ${version%-*} (commit "* ]] || fail "$b --version printed '$line', not '$b ${version%-*} (commit ...'"
done
if grep 'not found' <<<"$(LD_LIBRARY_PATH=$R_LIB ldd "$ROOT/usr/libexec/scimesh/examples/poisson")"; then
  fail "poisson: a library is missing"
fi

# The installed Python package imports and loads the installed library by its soname.
source "$SRC/tests/python/python-lib.sh"
mapfile -t py_san < <(python_sanitizer_env)  # a sanitizer build's library in an uninstrumented python3
loaded=$(env "${py_san[@]}" LD_LIBRARY_PATH=$R_LIB PYTHONPATH=$ROOT/usr/lib/python3/dist-packages /usr/bin/python3 -c '
import scimesh, scimesh._native as n
n.lib()
print(scimesh.__file__)
print(next(l.split()[-1] for l in open("/proc/self/maps") if "libscimesh_mpi.so" in l))' 2>&1) ||
  fail "python3-scimesh: import scimesh failed: $loaded"
[[ $(sed -n 1p <<<"$loaded") == "$ROOT/usr/lib/python3/dist-packages/scimesh/__init__.py" &&
   $(sed -n 2p <<<"$loaded") -ef $R_LIB/libscimesh_mpi.so.0 ]] ||
  fail "python3-scimesh did not import from the package or load the installed library: $loaded"

# --- consumers, built against the private root only -------------------------------
phase "find_package(scimesh) consumer (C, C++, Fortran)"
# In a sanitizer build the packaged library needs its runtime first: the
# consumers are compiled with the same -fsanitize flags (empty otherwise).
san=${SCIMESH_SANITIZE_FLAGS:-}
cmake -S "$HERE/consumer" -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$ROOT/usr" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_Fortran_FLAGS="$san" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$WORK/consumer-configure.log" 2>&1 || fail "consumer: configure failed"
grep -qF "scimesh_DIR=$ROOT/$libdir/cmake/scimesh" "$WORK/consumer-configure.log" ||
  fail "consumer: scimesh was not found in the private root"
cmake --build "$WORK/consumer" -j2 >"$WORK/consumer-build.log" 2>&1 || fail "consumer: build failed"
# LD_LIBRARY_PATH stands in for the default library path the packages install
# into: libscimesh_mpi_fortran finds libscimesh_mpi.so.0 there (it has no RUNPATH).
for c in c cxx fortran; do
  exe=$WORK/consumer/consumer_$c
  grep -qF "$R_LIB/libscimesh_mpi.so.0" <<<"$(LD_LIBRARY_PATH=$R_LIB ldd "$exe")" ||
    fail "consumer_$c does not load the installed library"
  LD_LIBRARY_PATH=$R_LIB "$exe" >"$WORK/consumer-$c.log" 2>&1 || fail "consumer_$c: $(cat "$WORK/consumer-$c.log")"
  grep -q "begin -> 2 " "$WORK/consumer-$c.log" || fail "consumer_$c: unexpected output"
done

phase "pkg-config scimesh-mpi consumers (mpicc, mpicxx, mpif90)"
export PKG_CONFIG_PATH=$R_LIB/pkgconfig
[[ $(pkg-config --modversion scimesh-mpi) == "${version%-*}" ]] || fail "pkg-config: wrong version"
[[ $(pkg-config --variable=libdir scimesh-mpi) -ef $R_LIB ]] || fail "pkg-config: libdir is not the installed one"
mpicc $san "$HERE/consumer/step_c.c" $(pkg-config --cflags --libs scimesh-mpi) -o "$WORK/pc_consumer" \
  >"$WORK/pc-build.log" 2>&1 || fail "mpicc with pkg-config failed"
LD_LIBRARY_PATH=$R_LIB "$WORK/pc_consumer" >"$WORK/pc-run.log" 2>&1 || fail "pc_consumer: $(cat "$WORK/pc-run.log")"
grep -qF "$R_LIB/libscimesh_mpi.so.0" <<<"$(LD_LIBRARY_PATH=$R_LIB ldd "$WORK/pc_consumer")" ||
  fail "pc_consumer does not load the installed library"
# C++ and Fortran the way docs/user-guide.md shows them (the Fortran module directory from the .pc file).
mpicxx $san "$HERE/consumer/step_cxx.cc" $(pkg-config --cflags --libs scimesh-mpi) -o "$WORK/pc_consumer_cxx" \
  >"$WORK/pc-build-cxx.log" 2>&1 || fail "mpicxx with pkg-config failed"
LD_LIBRARY_PATH=$R_LIB "$WORK/pc_consumer_cxx" >"$WORK/pc-run-cxx.log" 2>&1 || fail "pc_consumer_cxx: $(cat "$WORK/pc-run-cxx.log")"
mpif90 $san "$HERE/consumer/step_fortran.f90" -I"$(pkg-config --variable=fortranmoddir scimesh-mpi)" \
  -L"$(pkg-config --variable=libdir scimesh-mpi)" -lscimesh_mpi_fortran -lscimesh_mpi -o "$WORK/pc_consumer_f" \
  >"$WORK/pc-build-f.log" 2>&1 || fail "mpif90 with pkg-config failed"
LD_LIBRARY_PATH=$R_LIB "$WORK/pc_consumer_f" >"$WORK/pc-run-f.log" 2>&1 || fail "pc_consumer_f: $(cat "$WORK/pc-run-f.log")"

# --- removal and purge ----------------------------------------------------------
echo "optional spank_scimesh.so grace_s=5" >>"$snippet"  # the admin enables it
dpkg_private -r "${packages[@]}" >"$WORK/dpkg-remove.log" 2>&1 || fail "dpkg -r failed"
[[ -f $snippet ]] || fail "removal deleted the admin's edited conffile"
# Conffiles stay until purge: the snippet and the coordinator's settings file.
coordinator_conf=$ROOT/etc/scimesh-coordinator/coordinator.conf
[[ -f $coordinator_conf ]] || fail "removal deleted the coordinator's settings file (a conffile)"
left=$(cd "$ROOT" && find usr etc lib ! -type d \( -path '*scimesh*' -o -name 'spank_scimesh*' \) |
  grep -vxF -e "${snippet#"$ROOT/"}" -e "${coordinator_conf#"$ROOT/"}" || true)
[[ -z $left ]] || fail "left after removal: $left"
dpkg_private --purge scimesh-spank-plugin scimesh-coordinator >>"$WORK/dpkg-remove.log" 2>&1 || fail "dpkg --purge failed"
[[ ! -e $snippet && ! -e $coordinator_conf ]] || fail "purge left a conffile"
phase "PASS: ${#packages[@]} packages built, checked, installed, used and removed"
