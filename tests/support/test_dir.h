// A temporary directory for unit tests, removed with everything in it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace scimesh {

class TestDir {
 public:
  TestDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-unit-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  static std::string Read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void Write(const std::string& p, const std::string& content) {
    std::ofstream(p, std::ios::binary) << content;
  }

 private:
  std::string path_;
};

}  // namespace scimesh
