# Where scimesh installs, and what lets other projects use the MPI runtime:
# find_package(scimesh CONFIG) and pkg-config scimesh-mpi (docs/install.md).
#
# Included from the top CMakeLists.txt before the components, which install
# their own targets into the components below; packaging.cmake turns each
# component into one Debian package.
#
#   component     package               what
#   plugin        scimesh-spank-plugin  spank_scimesh.so, plugstack snippet (conffile)
#   launcher      scimesh-launcher      scimesh-launch, scimesh-rank, scimesh-agent
#   runtime       libscimesh-mpi0       libscimesh_mpi.so.0, libscimesh_mpi_fortran.so.0
#   development   libscimesh-mpi-dev    headers, Fortran module, .so links, CMake config, .pc
#   python        python3-scimesh       the Python package scimesh (mpi/python)
#   coordinator   scimesh-coordinator   scimesh-coordinator
#   examples      scimesh-examples      poisson, convergence_report, sources, workflow, sbatch
#   doc           scimesh-doc           docs/*.md, the protocol's example JSON
include(CMakePackageConfigHelpers)

set(SCIMESH_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/scimesh")
set(SCIMESH_INSTALL_EXAMPLESDIR "${CMAKE_INSTALL_DATADIR}/scimesh/examples")

# --- SLURM's own directories ------------------------------------------------
# SLURM loads plugins only from its PluginDir and reads plugstack.conf from its
# configuration directory, whatever our CMAKE_INSTALL_PREFIX is, so both are
# absolute. dependencies.cmake's default plugin dir (<our libdir>/slurm-wlm) is
# SLURM's only for prefix /usr; while the cache still holds that default, use
# the directory beside libslurm (Debian: <multiarch libdir>/slurm-wlm).
get_filename_component(_scimesh_slurm_libdir "${SLURM_LIBRARY}" DIRECTORY)
# A SLURM built from SchedMD's sources (-DSLURM_ROOT) keeps its plugins in
# <libdir>/slurm.
if(SCIMESH_SLURM_PLUGIN_DIR STREQUAL "${CMAKE_INSTALL_FULL_LIBDIR}/slurm-wlm"
   AND IS_DIRECTORY "${_scimesh_slurm_libdir}/slurm-wlm")
  set_property(CACHE SCIMESH_SLURM_PLUGIN_DIR PROPERTY VALUE "${_scimesh_slurm_libdir}/slurm-wlm")
elseif(SCIMESH_SLURM_PLUGIN_DIR STREQUAL "${CMAKE_INSTALL_FULL_LIBDIR}/slurm-wlm" AND SLURM_ROOT
       AND IS_DIRECTORY "${_scimesh_slurm_libdir}/slurm")
  set_property(CACHE SCIMESH_SLURM_PLUGIN_DIR PROPERTY VALUE "${_scimesh_slurm_libdir}/slurm")
endif()
unset(_scimesh_slurm_libdir)
set(SCIMESH_SLURM_CONF_DIR "/etc/slurm" CACHE PATH
  "SLURM's configuration directory: the plugstack snippet goes to its plugstack.conf.d/")

# The snippet as installed: the plugin's sample (plugin/plugstack.conf.d) with
# every directive commented out. Debian's plugstack.conf includes
# plugstack.conf.d/*.conf, so an active line would enable the plugin on every
# node the moment the package lands; the admin opts in by uncommenting it.
set(_scimesh_snippet_src "${PROJECT_SOURCE_DIR}/plugin/plugstack.conf.d/scimesh.conf")
set(SCIMESH_PLUGSTACK_SNIPPET "${PROJECT_BINARY_DIR}/plugstack.conf.d/scimesh.conf")
file(READ "${_scimesh_snippet_src}" _scimesh_snippet)
string(REGEX REPLACE "\n([^#\n])" "\n# \\1" _scimesh_snippet "\n${_scimesh_snippet}")
string(SUBSTRING "${_scimesh_snippet}" 1 -1 _scimesh_snippet)
file(WRITE "${SCIMESH_PLUGSTACK_SNIPPET}.tmp"
  "# Installed disabled: uncomment the spank_scimesh.so line below (on every node\n"
  "# and submit host) to enable the plugin. See docs/admin.md and docs/install.md.\n"
  "${_scimesh_snippet}")
file(COPY_FILE "${SCIMESH_PLUGSTACK_SNIPPET}.tmp" "${SCIMESH_PLUGSTACK_SNIPPET}" ONLY_IF_DIFFERENT)
file(REMOVE "${SCIMESH_PLUGSTACK_SNIPPET}.tmp")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_scimesh_snippet_src}")
unset(_scimesh_snippet)
unset(_scimesh_snippet_src)

# --- find_package(scimesh CONFIG) ------------------------------------------
# The mpi component adds scimesh_mpi and scimesh_mpi_fortran to this export set.
install(EXPORT scimeshTargets
  NAMESPACE scimesh::
  FILE scimeshTargets.cmake
  DESTINATION "${SCIMESH_INSTALL_CMAKEDIR}"
  COMPONENT development)
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/scimeshConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/scimeshConfig.cmake"
  INSTALL_DESTINATION "${SCIMESH_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/scimeshConfigVersion.cmake"
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/scimeshConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/scimeshConfigVersion.cmake"
  DESTINATION "${SCIMESH_INSTALL_CMAKEDIR}"
  COMPONENT development)

# Consumers see scimesh::mpi and scimesh::mpi_fortran, the names of the build
# tree's aliases. The targets exist only once mpi/ is processed: name them then.
function(_scimesh_name_exported_targets)
  set_target_properties(scimesh_mpi PROPERTIES EXPORT_NAME mpi)
  set_target_properties(scimesh_mpi_fortran PROPERTIES EXPORT_NAME mpi_fortran)
endfunction()
cmake_language(DEFER CALL _scimesh_name_exported_targets)

# --- pkg-config scimesh-mpi -------------------------------------------------
# The prefix is computed from the .pc file's own directory, so the same file is
# right for cmake --install --prefix anywhere and for the Debian packages.
set(_scimesh_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
file(RELATIVE_PATH SCIMESH_PC_PREFIX_FROM_PCDIR "/prefix/${_scimesh_pcdir}" "/prefix")
string(REGEX REPLACE "/$" "" SCIMESH_PC_PREFIX_FROM_PCDIR "${SCIMESH_PC_PREFIX_FROM_PCDIR}")
# The pkg-config name of the MPI the library was built with (Debian: the
# mpi-c alternative; OpenMPI's own ompi-c otherwise).
pkg_check_modules(_scimesh_pc_mpi QUIET mpi-c)
if(_scimesh_pc_mpi_FOUND)
  set(SCIMESH_PC_MPI_MODULE mpi-c)
else()
  set(SCIMESH_PC_MPI_MODULE ompi-c)
endif()
# Kept out of the build tree's top: <build>/scimesh-mpi.pc is the build tree's
# own (cmake/build_tree.cmake), which resolves where this one would not.
configure_file("${PROJECT_SOURCE_DIR}/mpi/scimesh-mpi.pc.in" "${PROJECT_BINARY_DIR}/for-install/scimesh-mpi.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/for-install/scimesh-mpi.pc" DESTINATION "${_scimesh_pcdir}" COMPONENT development)
unset(_scimesh_pcdir)

# --- man pages --------------------------------------------------------------
# docs/man/NAME.N goes to man/manN, into the package of the command it documents.
# CONFIGURE_DEPENDS: a page added later re-runs the configure step at build time.
file(GLOB _scimesh_man_pages CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/man/*.[1-8]")
foreach(_page IN LISTS _scimesh_man_pages)
  get_filename_component(_name "${_page}" NAME)
  string(REGEX REPLACE "^.*\\.([1-8])$" "\\1" _section "${_name}")
  if(_name MATCHES "^scimesh-(launch|rank|agent|alloc)[.-]")
    set(_component launcher)
  elseif(_name MATCHES "^scimesh-coordinator[.-]")
    set(_component coordinator)
  elseif(_name MATCHES "^spank[_-]scimesh")
    set(_component plugin)
  elseif(_section STREQUAL "3")
    set(_component development)
  else()
    set(_component doc)
  endif()
  # Installed compressed (Debian policy 12.1), gzip -9n: no name, no timestamp.
  # An edited page re-runs the configure step, which compresses it again.
  set(_gz "${PROJECT_BINARY_DIR}/man/${_name}.gz")
  file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/man")
  execute_process(COMMAND gzip -9n -c "${_page}" OUTPUT_FILE "${_gz}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "gzip ${_name} failed (${_rc})")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_page}")
  install(FILES "${_gz}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${_section}" COMPONENT ${_component})
endforeach()
unset(_gz)
unset(_rc)
unset(_scimesh_man_pages)

# --- documentation ------------------------------------------------------------
file(GLOB _scimesh_docs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
install(FILES ${_scimesh_docs} "${PROJECT_SOURCE_DIR}/README.md"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT doc)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/protocol"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}" COMPONENT doc
  FILES_MATCHING PATTERN "*.json")
unset(_scimesh_docs)
