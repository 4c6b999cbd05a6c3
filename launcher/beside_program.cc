// Sibling programs: beside this one, or where the build tree puts them.
#include "launcher/beside_program.h"

namespace scimesh::launcher {

std::string BesideThisProgram(const std::string& name, const std::filesystem::path& build_dir) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (auto candidate : {self.parent_path() / name, (self.parent_path() / build_dir / name).lexically_normal()}) {
      if (std::filesystem::exists(candidate, ec)) return candidate.string();
    }
  }
  return name;
}

}  // namespace scimesh::launcher
