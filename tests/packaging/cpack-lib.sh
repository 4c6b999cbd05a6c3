# Helpers for the package tests (source after tests/lib/harness.sh and
# harness_init): the .debs of the built tree, made once per test with cpack.
# Needs SCIMESH_BUILD_DIR and SCIMESH_INSTALLED_FILES (':'-separated built files).

SCIMESH_PACKAGES=(scimesh-spank-plugin scimesh-launcher libscimesh-mpi0 libscimesh-mpi-dev python3-scimesh
  scimesh-coordinator scimesh-examples scimesh-doc)

# build_debs: cpack -G DEB into $WORK/cpack; sets DEB[package] to each .deb's
# path and DEBS to all of them. Fails when a built file or a package is missing.
build_debs() {
  : "${SCIMESH_BUILD_DIR:?set by CTest}" "${SCIMESH_INSTALLED_FILES:?set by CTest}"
  local f p arch version
  IFS=: read -ra built <<<"$SCIMESH_INSTALLED_FILES"
  for f in "${built[@]}"; do
    [[ -f $f ]] || fail "$(basename "$f") is not built: build the tree first (cmake --build)"
  done
  version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$SCIMESH_BUILD_DIR/CMakeCache.txt")-1
  cpack --config "$SCIMESH_BUILD_DIR/CPackConfig.cmake" -B "$WORK/cpack" >"$WORK/cpack.log" 2>&1 || fail "cpack failed"
  declare -gA DEB=()
  DEBS=()
  for p in "${SCIMESH_PACKAGES[@]}"; do
    arch=amd64
    [[ $p == scimesh-doc || $p == python3-scimesh ]] && arch=all
    DEB[$p]=$WORK/cpack/${p}_${version}_${arch}.deb
    [[ -f ${DEB[$p]} ]] || fail "cpack made no $(basename "${DEB[$p]}")"
    DEBS+=("${DEB[$p]}")
  done
}
