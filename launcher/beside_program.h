// Where a scimesh program finds its sibling programs: installed beside it,
// or where the build tree puts them.
#pragma once

#include <filesystem>
#include <string>

namespace scimesh::launcher {

// `name` beside this program (/proc/self/exe), else in `build_dir` relative
// to this program's directory (the build tree); else the bare name, for a
// search in PATH.
std::string BesideThisProgram(const std::string& name, const std::filesystem::path& build_dir);

}  // namespace scimesh::launcher
