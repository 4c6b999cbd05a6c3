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

# SLURM: headers for the SPANK plugin, libslurm for slurm_kill_job_step.
find_path(SLURM_INCLUDE_DIR slurm/spank.h)
find_library(SLURM_LIBRARY slurm)
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

# Every target includes by path from the repository root: "protocol/status.h".
set(SCIMESH_SOURCE_ROOT "${PROJECT_SOURCE_DIR}")
