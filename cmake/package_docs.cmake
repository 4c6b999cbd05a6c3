# What Debian policy wants in every binary package's /usr/share/doc/<package>:
# the copyright file (DEP-5, cmake/debian/copyright) and changelog.Debian.gz.
# Included from packaging.cmake, which names the packages (one per component).
#
# The changelog is written and compressed (gzip -9n: no name, no timestamp,
# so the bytes depend on the version and maintainer only) at configure time.
set(SCIMESH_DEB_VERSION "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
# A fixed date per release, not the build's: rebuilding gives the same package.
set(SCIMESH_DEB_DATE "Tue, 01 Dec 2026 00:00:00 +0000")
set(_scimesh_debdoc "${PROJECT_BINARY_DIR}/packaging/doc")
configure_file("${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in" "${_scimesh_debdoc}/changelog.Debian" @ONLY)
find_program(SCIMESH_GZIP gzip REQUIRED)
execute_process(COMMAND "${SCIMESH_GZIP}" -9n -c "${_scimesh_debdoc}/changelog.Debian"
  OUTPUT_FILE "${_scimesh_debdoc}/changelog.Debian.gz" RESULT_VARIABLE _scimesh_gzip_rc)
if(NOT _scimesh_gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip of changelog.Debian failed (${_scimesh_gzip_rc})")
endif()

foreach(_component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER "${_component}" _upper)
  set(_package "${CPACK_DEBIAN_${_upper}_PACKAGE_NAME}")
  if(NOT _package)
    message(FATAL_ERROR "component ${_component} has no Debian package name")
  endif()
  install(FILES "${PROJECT_SOURCE_DIR}/cmake/debian/copyright" "${_scimesh_debdoc}/changelog.Debian.gz"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}" COMPONENT ${_component})
endforeach()
unset(_component)
unset(_upper)
unset(_package)
unset(_scimesh_gzip_rc)
unset(_scimesh_debdoc)
