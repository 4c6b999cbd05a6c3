# Debian packages, one per install component (the table is in cmake/install.cmake):
# `cpack -G DEB` in a built tree (docs/install.md).
# The default is a well-formed placeholder in the reserved .invalid domain.
set(SCIMESH_PACKAGE_MAINTAINER "scimesh-hpc packagers <packagers@scimesh-hpc.invalid>" CACHE STRING
  "Maintainer field of the Debian packages (\"Name <email>\"): set it to your site's packager")
# A tree configured before kept the old default, which lintian refuses (bogus-mail-host).
if(SCIMESH_PACKAGE_MAINTAINER STREQUAL "scimesh-hpc maintainers <scimesh-hpc@invalid>")
  set_property(CACHE SCIMESH_PACKAGE_MAINTAINER PROPERTY VALUE "scimesh-hpc packagers <packagers@scimesh-hpc.invalid>")
endif()

set(CPACK_PACKAGE_NAME scimesh)
set(CPACK_PACKAGE_VENDOR scimesh-hpc)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${SCIMESH_PACKAGE_MAINTAINER}")
# Each package's synopsis is the first line of its own description below; an
# empty summary keeps CPack from putting the project's in front of all seven.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL plugin launcher runtime development python coordinator examples doc)
# cpack first builds the `preinstall` target, which depends on `all` (every test
# and benchmark): without that dependency it packages what is built, as
# `cmake --install` does. (The install/package targets then do not build either.)
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SCIMESH_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends on shared libraries from dpkg-shlibdeps (dpkg-dev); Depends between
# our own packages pin the exact version (CPACK_COMPONENT_*_DEPENDS below).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# poisson links libscimesh_mpi.so.0 from the runtime package, which is not
# installed while the packages are made: let dpkg-shlibdeps find it here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}/mpi")

# --- scimesh-spank-plugin: every compute node and every submit host ----------
# SLURM loads a SPANK plugin only into the release it was built for (docs/admin.md,
# Upgrades): pin slurm-wlm-basic-plugins, which also owns /etc/slurm/plugstack.conf.
file(STRINGS "${SLURM_INCLUDE_DIR}/slurm/slurm_version.h" _scimesh_slurm_version
  REGEX "^#define SLURM_VERSION_NUMBER ")
string(REGEX REPLACE ".*0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])[0-9a-fA-F][0-9a-fA-F].*" "\\1;\\2"
  _scimesh_slurm_version "${_scimesh_slurm_version}")
list(GET _scimesh_slurm_version 0 _scimesh_slurm_major)
list(GET _scimesh_slurm_version 1 _scimesh_slurm_minor)
math(EXPR _scimesh_slurm_major "0x${_scimesh_slurm_major}")
math(EXPR _scimesh_slurm_minor "0x${_scimesh_slurm_minor}")
math(EXPR _scimesh_slurm_next "${_scimesh_slurm_minor} + 1")
set(SCIMESH_SLURM_RELEASE "${_scimesh_slurm_major}.${_scimesh_slurm_minor}")
if(_scimesh_slurm_minor LESS 10)
  set(SCIMESH_SLURM_RELEASE "${_scimesh_slurm_major}.0${_scimesh_slurm_minor}")
endif()
set(_scimesh_slurm_after "${_scimesh_slurm_major}.${_scimesh_slurm_next}")
if(_scimesh_slurm_next LESS 10)
  set(_scimesh_slurm_after "${_scimesh_slurm_major}.0${_scimesh_slurm_next}")
endif()

# The snippet is a conffile: an admin's edit (enabling it) survives upgrades.
file(WRITE "${PROJECT_BINARY_DIR}/packaging/plugin/conffiles"
  "${SCIMESH_SLURM_CONF_DIR}/plugstack.conf.d/scimesh.conf\n")

set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME scimesh-spank-plugin)
set(CPACK_DEBIAN_PLUGIN_PACKAGE_SECTION admin)
# The Debian package that carries the SLURM the plugin is built for: Debian's
# own (slurm-wlm-basic-plugins) for the system's SLURM, SchedMD's (slurm-smd,
# built from the release's debian/ folder) for one under -DSLURM_ROOT.
if(SLURM_ROOT)
  set(_scimesh_slurm_package_default slurm-smd)
else()
  set(_scimesh_slurm_package_default slurm-wlm-basic-plugins)
endif()
set(SCIMESH_SLURM_PACKAGE "${_scimesh_slurm_package_default}" CACHE STRING
  "Debian package of the SLURM the plugin is built for; the plugin's package depends on its major release")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_DEPENDS
  "${SCIMESH_SLURM_PACKAGE} (>= ${SCIMESH_SLURM_RELEASE}), ${SCIMESH_SLURM_PACKAGE} (<< ${_scimesh_slurm_after})")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_EXTRA "${PROJECT_BINARY_DIR}/packaging/plugin/conffiles")
set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_COMPONENT_PLUGIN_DESCRIPTION
  "scimesh SPANK plugin: cancels job steps whose lease is lost
spank_scimesh.so adds --scimesh-lease to srun and sbatch. On the node of rank
0 it watches the step's lease and cancels the step on every node when the
lease is lost; it reports SLURM's own endings (scancel, time limit, node
failure) to the coordinator. Install it on every compute node and submit
host. The plugstack snippet is installed disabled: uncomment its line in
${SCIMESH_SLURM_CONF_DIR}/plugstack.conf.d/scimesh.conf.
Built for Slurm ${SCIMESH_SLURM_RELEASE}.")

# --- scimesh-launcher: compute nodes (the batch step runs it) and login nodes --
set(CPACK_DEBIAN_LAUNCHER_PACKAGE_NAME scimesh-launcher)
set(CPACK_DEBIAN_LAUNCHER_PACKAGE_SECTION science)
# lstopo-no-graphics (hwloc-nox or hwloc): the launcher probes each node's hardware with it.
set(CPACK_DEBIAN_LAUNCHER_PACKAGE_RECOMMENDS "openmpi-bin, slurm-client, hwloc-nox | hwloc")
set(CPACK_DEBIAN_LAUNCHER_PACKAGE_SUGGESTS "scimesh-spank-plugin")
set(CPACK_COMPONENT_LAUNCHER_DESCRIPTION
  "scimesh launcher: fills a SLURM allocation with leased workflow steps
scimesh-launch registers with a lease coordinator, claims steps sized to the
allocation's free capacity, places their ranks (hwloc) and runs them with
srun --exact (or mpirun/fork without SLURM), then reports each outcome.
scimesh-rank wraps an unmodified MPI program as a step.")

# --- libscimesh-mpi0 / libscimesh-mpi-dev: compute nodes / where steps are built --
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libscimesh-mpi0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# Policy 8.1.1: a shared library activates the ldconfig trigger (CPack's own
# postinst/postrm also call ldconfig: a lintian warning, docs/install.md).
file(WRITE "${PROJECT_BINARY_DIR}/packaging/runtime/triggers" "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${PROJECT_BINARY_DIR}/packaging/runtime/triggers")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "scimesh MPI runtime: a multi-node MPI job as one leased step
libscimesh_mpi lets an MPI program be one scimesh step: rank 0 heartbeats the
lease for the whole job, every rank sees a cooperative cancellation, and the
step's input, progress, output and artifacts go through the attempt
directory. C API, with a Fortran module in libscimesh_mpi_fortran.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libscimesh-mpi-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS runtime)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "libopenmpi-dev")
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_RECOMMENDS "pkg-config | pkgconf")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
  "scimesh MPI runtime: development files
Headers (scimesh/step.h, scimesh/step.hpp), the gfortran module scimesh_step,
the CMake package (find_package(scimesh CONFIG): scimesh::mpi,
scimesh::mpi_fortran) and the pkg-config file scimesh-mpi.")

# --- python3-scimesh: compute nodes where Python steps run ----------------------
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-scimesh)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
set(CPACK_DEBIAN_PYTHON_PACKAGE_ARCHITECTURE all)
set(CPACK_COMPONENT_PYTHON_DEPENDS runtime)
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.9), python3-mpi4py")
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-numpy")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION
  "scimesh MPI runtime: Python steps (import scimesh)
The Python package scimesh lets an mpi4py program (or a single Python
process) be one scimesh step: input and previous outputs as dicts, progress,
cooperative cancellation, output, usage and artifacts, and exceptions as the
attempt's failure class. ctypes over libscimesh_mpi.")

# --- scimesh-coordinator: the coordinator host ----------------------------------
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME scimesh-coordinator)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_SECTION science)
# Its settings file is the admin's (coordinator/systemd/coordinator.conf).
file(WRITE "${PROJECT_BINARY_DIR}/packaging/coordinator/conffiles" "/etc/scimesh-coordinator/coordinator.conf\n")
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_CONTROL_EXTRA "${PROJECT_BINARY_DIR}/packaging/coordinator/conffiles")
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_COMPONENT_COORDINATOR_DESCRIPTION
  "scimesh reference lease coordinator
scimesh-coordinator holds workflow runs and hands their steps out as leases
over the worker protocol (HTTP, bearer keys), with SQLite storage, an
artifact store and an audit log. For demos, tests and small sites. A
hardened systemd unit, scimesh-coordinator.service, runs it as a service
(not enabled: docs/install.md).")

# --- scimesh-examples: where users run the example workflow ---------------------
set(CPACK_DEBIAN_EXAMPLES_PACKAGE_NAME scimesh-examples)
set(CPACK_DEBIAN_EXAMPLES_PACKAGE_SECTION science)
set(CPACK_COMPONENT_EXAMPLES_DEPENDS runtime)
# heat-py/heat_py.py is a python3 script (policy: its interpreter is a Depends).
set(CPACK_DEBIAN_EXAMPLES_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_EXAMPLES_PACKAGE_RECOMMENDS "scimesh-launcher, python3-scimesh, python3-numpy")
set(CPACK_COMPONENT_EXAMPLES_DESCRIPTION
  "scimesh examples: a 3D Poisson mesh study
poisson (a multi-node conjugate-gradient solve as one step) and
convergence_report in /usr/libexec/scimesh/examples; the mesh-study workflow,
the fill.sbatch allocation template and the example sources in
/usr/share/scimesh/examples, with heat-py, the heat case as a Python step
(numpy, mpi4py and python3-scimesh).")

# --- scimesh-doc -----------------------------------------------------------------
set(CPACK_DEBIAN_DOC_PACKAGE_NAME scimesh-doc)
set(CPACK_DEBIAN_DOC_PACKAGE_SECTION doc)
set(CPACK_DEBIAN_DOC_PACKAGE_ARCHITECTURE all)
set(CPACK_COMPONENT_DOC_DESCRIPTION
  "scimesh documentation
The user guide, the administrator's guide, the architecture and the worker
protocol with its example messages.")

include("${CMAKE_CURRENT_LIST_DIR}/package_docs.cmake")

unset(_scimesh_slurm_version)
unset(_scimesh_slurm_major)
unset(_scimesh_slurm_minor)
unset(_scimesh_slurm_next)
unset(_scimesh_slurm_after)
unset(_scimesh_slurm_package_default)

include(CPack)
