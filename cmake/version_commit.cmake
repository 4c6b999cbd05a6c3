# Writes the C++ source that holds the git commit a build is made from
# (protocol/util/version.h), rewriting it only when the commit changed.
#
#   cmake -DSOURCE_DIR=DIR -DOUTPUT=FILE -P version_commit.cmake
#
# Run at every build by the scimesh_version_commit target (protocol/
# CMakeLists.txt): a new commit recompiles this one file and relinks the
# programs; an unchanged one leaves FILE's time alone, so nothing rebuilds.
# The commit is HEAD's short hash when SOURCE_DIR is the top of a git work
# tree, and "unknown" otherwise: a tarball, or a tarball unpacked inside some
# other repository, whose HEAD says nothing about these sources.
if(NOT SOURCE_DIR OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=DIR -DOUTPUT=FILE -P version_commit.cmake")
endif()

set(commit "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --show-toplevel
    OUTPUT_VARIABLE top RESULT_VARIABLE top_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(REAL_PATH "${SOURCE_DIR}" source_real)
  if(top_rc EQUAL 0)
    file(REAL_PATH "${top}" top)
  endif()
  if(top_rc EQUAL 0 AND top STREQUAL source_real)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" rev-parse --short HEAD
      OUTPUT_VARIABLE head RESULT_VARIABLE head_rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(head_rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
      set(commit "${head}")
    endif()
  endif()
endif()

set(text "// Generated at build time by cmake/version_commit.cmake: the commit this build is made from.
namespace scimesh::version::internal {
extern const char kBuildCommit[];
const char kBuildCommit[] = \"${commit}\";
}  // namespace scimesh::version::internal
")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${text}")
