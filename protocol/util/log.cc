// scimesh loggers and the redacting sink in front of every log destination.
#include "protocol/util/log.h"

#include <cctype>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace scimesh::log {
namespace {

constexpr const char* kPattern = "[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] %v";

std::shared_mutex& SecretsMutex() {
  static auto* mu = new std::shared_mutex();
  return *mu;
}

std::vector<std::string>& Secrets() {
  static auto* secrets = new std::vector<std::string>();
  return *secrets;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// Replaces the credential after every case-insensitive "bearer " with [redacted].
std::string RedactBearer(std::string s) {
  static constexpr std::string_view kBearer = "bearer";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    bool match = i + kBearer.size() < s.size();
    for (size_t k = 0; match && k < kBearer.size(); ++k) {
      match = std::tolower(static_cast<unsigned char>(s[i + k])) == kBearer[k];
    }
    if (match && IsSpace(s[i + kBearer.size()])) {
      size_t j = i + kBearer.size();
      while (j < s.size() && IsSpace(s[j])) ++j;
      if (j < s.size()) {
        out.append(s, i, j - i);
        out += "[redacted]";
        while (j < s.size() && !IsSpace(s[j]) && s[j] != '"' && s[j] != '\'') ++j;
        i = j;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

// Sits in front of the real sink: redacts the payload, then forwards.
class RedactingSink final : public spdlog::sinks::sink {
 public:
  RedactingSink() { SetInner(std::make_shared<spdlog::sinks::stderr_color_sink_mt>()); }

  void SetInner(spdlog::sink_ptr inner) {
    inner->set_pattern(kPattern);
    std::lock_guard<std::mutex> lock(mu_);
    inner_ = std::move(inner);
  }

  void log(const spdlog::details::log_msg& msg) override {
    const std::string redacted = EscapeForLog(Redact(std::string_view(msg.payload.data(), msg.payload.size())));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(redacted.data(), redacted.size());
    Inner()->log(copy);
  }
  void flush() override { Inner()->flush(); }
  void set_pattern(const std::string& pattern) override { Inner()->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override { Inner()->set_formatter(std::move(f)); }

 private:
  spdlog::sink_ptr Inner() {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_;
  }
  std::mutex mu_;
  spdlog::sink_ptr inner_;
};

struct Registry {
  std::mutex mu;
  std::shared_ptr<RedactingSink> sink = std::make_shared<RedactingSink>();
  std::map<std::string, std::shared_ptr<spdlog::logger>, std::less<>> loggers;
  spdlog::level::level_enum level = spdlog::level::info;
};

Registry& Reg() {
  static auto* r = new Registry();  // never destroyed: threads may log during exit
  return *r;
}

}  // namespace

std::shared_ptr<spdlog::logger> For(std::string_view component) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.loggers.find(component);
  if (it != r.loggers.end()) return it->second;
  auto logger = std::make_shared<spdlog::logger>(std::string(component), r.sink);
  logger->set_level(r.level);
  logger->flush_on(spdlog::level::warn);
  r.loggers.emplace(std::string(component), logger);
  return logger;
}

void SetSink(spdlog::sink_ptr sink) { Reg().sink->SetInner(std::move(sink)); }

void SetLevel(spdlog::level::level_enum level) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> lock(r.mu);
  r.level = level;
  for (auto& [name, logger] : r.loggers) logger->set_level(level);
}

void AddSecret(std::string secret) {
  if (secret.empty()) return;
  std::unique_lock<std::shared_mutex> lock(SecretsMutex());
  for (const auto& s : Secrets()) {
    if (s == secret) return;
  }
  Secrets().push_back(std::move(secret));
}

std::string Redact(std::string_view line) {
  std::string out(line);
  {
    std::shared_lock<std::shared_mutex> lock(SecretsMutex());
    for (const auto& secret : Secrets()) {
      for (size_t pos = out.find(secret); pos != std::string::npos; pos = out.find(secret, pos)) {
        out.replace(pos, secret.size(), "[redacted]");
        pos += 10;
      }
    }
  }
  return RedactBearer(std::move(out));
}

std::string EscapeForLog(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace scimesh::log
