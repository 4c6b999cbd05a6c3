// Keys file parsing, token identification in constant time, and `keys add`.
#include "coordinator/keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include "coordinator/id_generator.h"
#include "protocol/util/atomic_file.h"
#include "protocol/util/sha256.h"
#include "protocol/wire/identifiers.h"

namespace scimesh::coordinator {

Result<unsigned> ParseScopes(std::string_view text) {
  unsigned scopes = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view s = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (s == "worker") {
      scopes |= kScopeWorker;
    } else if (s == "execute") {
      scopes |= kScopeExecute;
    } else if (s == "admin") {
      scopes |= kScopeAdmin;
    } else if (s == "read") {
      scopes |= kScopeRead;
    } else {
      return Status::InvalidArgument("unknown scope '" + std::string(s) + "' (worker, execute, admin, read)");
    }
  }
  if (scopes == 0) return Status::InvalidArgument("no scope given (worker, execute, admin, read)");
  return scopes;
}

std::string ScopesText(unsigned scopes) {
  std::string out;
  for (auto [bit, name] : {std::pair{kScopeWorker, "worker"}, std::pair{kScopeExecute, "execute"},
                           std::pair{kScopeAdmin, "admin"}, std::pair{kScopeRead, "read"}}) {
    if ((scopes & bit) == 0) continue;
    if (!out.empty()) out += ',';
    out += name;
  }
  return out;
}

Result<std::vector<std::string>> ParseWorkflowGlobs(std::string_view text) {
  std::vector<std::string> globs;
  while (!text.empty() || globs.empty()) {
    size_t comma = text.find(',');
    std::string_view g = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    bool valid = !g.empty() && g.size() <= 64;
    for (char c : g) {
      valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._-*?", c) != nullptr);
    }
    if (!valid) {
      return Status::InvalidArgument("workflow globs are 1-64 characters of [A-Za-z0-9._-*?], comma-separated");
    }
    if (globs.size() == 32) return Status::InvalidArgument("at most 32 workflow globs");
    globs.emplace_back(g);
  }
  return globs;
}

Result<std::vector<KeyRing::Entry>> KeyRing::ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Io(std::string("cannot read it: ") + std::strerror(errno));
  std::vector<Entry> entries;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, scopes, hash, option, extra;
    fields >> name >> scopes >> hash >> option;
    if (name.empty()) continue;
    const std::string where = "line " + std::to_string(lineno);
    constexpr std::string_view kWorkflows = "workflows=";
    if (!CheckIdentifier(name, "name").ok() || hash.empty() || (fields >> extra) ||
        (!option.empty() && option.rfind(kWorkflows, 0) != 0)) {
      return Status::InvalidArgument(where + ": expected 'NAME SCOPES SHA256 [workflows=GLOB,..]'");
    }
    auto bits = ParseScopes(scopes);
    if (!bits.ok()) return bits.status().WithContext(where);
    if (!CheckSha256(hash, "sha256").ok()) return Status::InvalidArgument(where + ": the hash must be 64 lowercase hex digits");
    for (const auto& e : entries) {
      if (e.id.name == name) return Status::InvalidArgument(where + ": key name '" + name + "' repeats");
    }
    std::vector<std::string> globs;
    if (!option.empty()) {
      auto parsed = ParseWorkflowGlobs(std::string_view(option).substr(kWorkflows.size()));
      if (!parsed.ok()) return parsed.status().WithContext(where);
      globs = std::move(parsed).value();
    }
    entries.push_back(Entry{KeyIdentity{name, *bits, std::move(globs)}, hash});
  }
  return entries;
}

Result<KeyRing::FileStamp> KeyRing::Stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::Io(std::string("cannot read it: ") + std::strerror(errno));
  return FileStamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                   static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
}

Result<std::unique_ptr<KeyRing>> KeyRing::Load(const std::string& path, const Clock& clock) {
  auto stamp = Stamp(path);
  if (!stamp.ok()) return stamp.status();
  auto entries = ReadFile(path);
  if (!entries.ok()) return entries.status();
  std::unique_ptr<KeyRing> ring(new KeyRing(path, clock));
  ring->entries_ = std::move(entries).value();
  ring->stamp_ = *stamp;
  ring->last_check_ = clock.Now();
  return ring;
}

void KeyRing::MaybeReload() {
  const MonoTime now = clock_.Now();
  if (now - last_check_ < std::chrono::seconds(1)) return;
  last_check_ = now;
  auto stamp = Stamp(path_);
  if (!stamp.ok() || *stamp == stamp_) return;
  auto entries = ReadFile(path_);
  if (!entries.ok()) {
    spdlog::warn("keys: the keys file changed but cannot be used; keeping the previous keys: {}",
                 entries.status().message());
    return;
  }
  entries_ = std::move(entries).value();
  stamp_ = *stamp;
  spdlog::info("keys: reloaded the keys file ({} keys)", entries_.size());
}

std::optional<KeyIdentity> KeyRing::Identify(std::string_view token) {
  const std::string digest = Sha256Hex(token);
  std::lock_guard<std::mutex> lock(mu_);
  MaybeReload();
  // Compare against every key, without stopping at a match.
  const Entry* match = nullptr;
  for (const Entry& e : entries_) {
    bool equal = CRYPTO_memcmp(e.sha256_hex.data(), digest.data(), digest.size()) == 0;
    if (equal && match == nullptr) match = &e;
  }
  if (match == nullptr) return std::nullopt;
  return match->id;
}

size_t KeyRing::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

Result<std::string> AddKey(const std::string& keys_path, const std::string& name, const std::string& scopes,
                           const std::string& secret_out, const std::string& workflows) {
  if (!CheckIdentifier(name, "name").ok()) return Status::InvalidArgument("the key name must be 1-64 characters of [A-Za-z0-9._-]");
  auto bits = ParseScopes(scopes);
  if (!bits.ok()) return bits.status();
  // Without globs a worker key could register any workflow nobody has yet,
  // and so receive the input of runs another team starts under that name.
  if ((*bits & kScopeWorker) != 0 && workflows.empty()) {
    return Status::InvalidArgument(
        "a worker key needs --workflows GLOBS: the workflows it may serve (e.g. \"chem-*\"), or '*' for every "
        "workflow on a single-tenant site");
  }
  if (!workflows.empty()) {
    auto globs = ParseWorkflowGlobs(workflows);
    if (!globs.ok()) return globs.status();
  }
  if (::access(keys_path.c_str(), F_OK) == 0) {
    auto existing = KeyRing::Load(keys_path);
    if (!existing.ok()) return existing.status().WithContext("the keys file " + keys_path + " (--keys)");
    // Probe by name through a fresh read (Identify works on secrets only).
    std::ifstream in(keys_path);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string n;
      fields >> n;
      if (n == name) return Status::AlreadyExists("a key named '" + name + "' is already in the keys file");
    }
  }
  const std::string secret = "smk_" + RandomHex(32);

  int sfd = ::open(secret_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (sfd < 0) {
    return Status::Io("cannot create the secret file " + secret_out + " (--secret-out): " + std::strerror(errno));
  }
  Status s = ::fchmod(sfd, 0600) == 0 ? WriteAll(sfd, secret + "\n") : Status::Io("chmod the secret file");
  if (s.ok() && ::fsync(sfd) != 0) s = Status::Io("fsync the secret file");
  ::close(sfd);
  if (!s.ok()) return s;

  int kfd = ::open(keys_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (kfd < 0) {
    const int err = errno;
    ::unlink(secret_out.c_str());  // a secret no key matches would only mislead
    return Status::Io("cannot open the keys file " + keys_path + " (--keys): " + std::strerror(err));
  }
  s = WriteAll(kfd, name + " " + ScopesText(*bits) + " " + Sha256Hex(secret) +
                        (workflows.empty() ? "" : " workflows=" + workflows) + "\n");
  if (s.ok() && ::fsync(kfd) != 0) s = Status::Io("fsync the keys file");
  ::close(kfd);
  if (!s.ok()) return s;
  return "added key " + name + " (" + ScopesText(*bits) + ")";
}

}  // namespace scimesh::coordinator
