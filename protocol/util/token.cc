// Loading the bearer token from a 0600 file or the environment.
#include "protocol/util/token.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "protocol/util/log.h"

namespace scimesh {
namespace {

// Visible ASCII only: a token with CR/LF or spaces could split an HTTP header.
Result<Token> Validate(std::string text, const char* source) {
  auto first = text.find_first_not_of(" \t\r\n");
  auto last = text.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidArgument(std::string(source) + " holds no token");
  text = text.substr(first, last - first + 1);
  for (char c : text) {
    if (c < 0x21 || c > 0x7e) {
      return Status::InvalidArgument(std::string(source) + ": the token must be one word of visible ASCII");
    }
  }
  return Token(std::move(text));
}

}  // namespace

Token::Token(std::string secret) : secret_(std::move(secret)) {
  if (!secret_.empty()) log::AddSecret(secret_);
}

Result<Token> LoadTokenFile(const std::string& path) {
  // The user named this file (SCIMESH_TOKEN_FILE): say which and why.
  const std::string file = "the token file " + path + " (SCIMESH_TOKEN_FILE)";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    const std::string m = "cannot open " + file + ": " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(m) : Status::PermissionDenied(m);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(file + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    (void)std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::PermissionDenied(file + " is accessible by group or others (mode " + mode + "); chmod 600 it");
  }
  if (st.st_size > 4096) {
    ::close(fd);
    return Status::InvalidArgument(file + " is larger than 4 KiB");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t n = ::read(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n < 0) return Status::Io("cannot read " + file + ": " + std::strerror(err));
  text.resize(static_cast<size_t>(n));
  return Validate(std::move(text), file.c_str());
}

Result<Token> LoadTokenFromEnvironment() {
  if (const char* file = std::getenv("SCIMESH_TOKEN_FILE"); file != nullptr && *file != '\0') {
    return LoadTokenFile(file);
  }
  if (const char* token = std::getenv("SCIMESH_TOKEN"); token != nullptr && *token != '\0') {
    return Validate(token, "SCIMESH_TOKEN");
  }
  return Status::NotFound("no token: set SCIMESH_TOKEN_FILE (a chmod 600 file) or SCIMESH_TOKEN");
}

bool IsTokenVariable(std::string_view entry) {
  const std::string_view name = entry.substr(0, entry.find('='));
  for (const char* v : kTokenVariables) {
    if (name == v) return true;
  }
  return false;
}

Status ProtectKeyHolder() {
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return Status::Internal("prctl(PR_SET_DUMPABLE, 0) failed");
  return Status::Ok();
}

}  // namespace scimesh
