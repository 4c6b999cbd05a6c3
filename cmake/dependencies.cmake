# Finds every third-party dependency once, from Debian 12 packages
# (scripts/install-deps installs them). Components link the imported targets.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(CURL REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(SQLite3 REQUIRED)
find_package(spdlog REQUIRED)
find_package(MPI REQUIRED COMPONENTS C CXX Fortran)
find_package(RapidJSON REQUIRED CONFIG)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
# The coordinator's event-driven HTTP front end (docs/coordinator.md "Why
# libmicrohttpd").
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)

if(NOT TARGET RapidJSON::RapidJSON)
  add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
  set_target_properties(RapidJSON::RapidJSON PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${RAPIDJSON_INCLUDE_DIRS}")
endif()

# SLURM: the release the plugin is built for. Its headers declare every SLURM
# function the plugin calls (plugin/slurm_calls.cc); slurmd loads a plugin only
# into the major release it was built for. -DSLURM_ROOT=PREFIX picks a SLURM
# installed under PREFIX (scripts/build-slurm VERSION prints one); the default
# is the system's (Debian's libslurm-dev).
set(SLURM_ROOT "" CACHE PATH "SLURM install to build the SPANK plugin for (PREFIX/include/slurm); empty: the system's")
if(SLURM_ROOT)
  # A changed SLURM_ROOT must not keep the headers found for the last one.
  if(SLURM_INCLUDE_DIR AND NOT SLURM_INCLUDE_DIR STREQUAL "${SLURM_ROOT}/include")
    unset(SLURM_INCLUDE_DIR CACHE)
    unset(SLURM_LIBRARY CACHE)
  endif()
  find_path(SLURM_INCLUDE_DIR slurm/spank.h PATHS "${SLURM_ROOT}/include" NO_DEFAULT_PATH REQUIRED)
  find_library(SLURM_LIBRARY slurm PATHS "${SLURM_ROOT}/lib" NO_DEFAULT_PATH)
else()
  find_path(SLURM_INCLUDE_DIR slurm/spank.h REQUIRED)
  find_library(SLURM_LIBRARY slurm)
endif()
if(NOT EXISTS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
  message(FATAL_ERROR "${SLURM_INCLUDE_DIR}/slurm has no slurm_version.h: not an installed SLURM (scripts/build-slurm)")
endif()
file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _scimesh_slurm_version_line
  REGEX "^#define SLURM_VERSION_NUMBER ")
# SCIMESH_SLURM_RELEASE: that release as MAJOR.MINOR.MICRO (22.05.8), what
# every program's --version names (protocol/util/version.h).
string(REGEX REPLACE "^#define SLURM_VERSION_NUMBER +" "" _scimesh_slurm_number "${_scimesh_slurm_version_line}")
math(EXPR _scimesh_slurm_major "(${_scimesh_slurm_number} >> 16) & 255")
math(EXPR _scimesh_slurm_minor "(${_scimesh_slurm_number} >> 8) & 255")
math(EXPR _scimesh_slurm_micro "${_scimesh_slurm_number} & 255")
if(_scimesh_slurm_minor LESS 10)
  set(_scimesh_slurm_minor "0${_scimesh_slurm_minor}")
endif()
set(SCIMESH_SLURM_RELEASE "${_scimesh_slurm_major}.${_scimesh_slurm_minor}.${_scimesh_slurm_micro}")
message(STATUS "SPANK plugin built for SLURM ${SCIMESH_SLURM_RELEASE}: ${SLURM_INCLUDE_DIR}")
unset(_scimesh_slurm_version_line)
unset(_scimesh_slurm_number)
unset(_scimesh_slurm_major)
unset(_scimesh_slurm_minor)
unset(_scimesh_slurm_micro)
set(SCIMESH_SLURM_PLUGIN_DIR "${CMAKE_INSTALL_FULL_LIBDIR}/slurm-wlm"
  CACHE PATH "Where the SPANK plugin is installed (SLURM's PluginDir)")

if(SCIMESH_BUILD_TESTS)
  find_package(GTest REQUIRED)
  # Only the hand-written HTTP peers of tests: no installed binary links it
  # (`scimesh-coordinator run` uses protocol/'s client).
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
endif()
if(SCIMESH_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# Every target includes by path from the repository root: "protocol/util/status.h"
# (the protocol layers and the coordinator and plugin through include roots of
# their own: protocol/CMakeLists.txt).
set(SCIMESH_SOURCE_ROOT "${PROJECT_SOURCE_DIR}")
