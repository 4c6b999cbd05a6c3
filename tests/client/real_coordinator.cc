// Starting and stopping the real coordinator binary for tests.
#include "tests/client/real_coordinator.h"

#include <algorithm>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace scimesh::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const std::map<std::string, std::string>& env,
                                                          const std::string& log_path) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string s(*e);
    if (env.count(s.substr(0, s.find('='))) == 0) env_strings.push_back(s);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  auto child = std::make_unique<ChildProcess>();
  const int rc = posix_spawn(&child->pid_, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Status::Io("cannot start " + argv[0]);
  return child;
}

ChildProcess::~ChildProcess() { Terminate(); }

std::optional<int> ChildProcess::Wait(int timeout_ms) {
  if (status_) return status_;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // waitpid has no timeout
  }
}

void ChildProcess::Terminate() {
  if (pid_ <= 0 || status_) return;
  ::kill(pid_, SIGTERM);
  if (!Wait(10000)) {
    ::kill(pid_, SIGKILL);
    Wait(10000);
  }
}

Result<std::unique_ptr<RealCoordinator>> RealCoordinator::Start(const std::vector<std::string>& extra_flags) {
  auto c = std::make_unique<RealCoordinator>();
  std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-real-XXXXXX").string();
  c->dir_ = ::mkdtemp(tmpl.data());
  const std::string bin = SCIMESH_COORDINATOR_BIN;
  const std::string log = c->dir_ + "/coordinator.log";
  c->token_file_ = c->dir_ + "/token";
  {
    auto keys = ChildProcess::Spawn({bin, "keys", "add", "tests", "--scope", "worker,execute", "--workflows", "*",
                                     "--keys", c->dir_ + "/keys", "--secret-out", c->token_file_},
                                    {}, log);
    if (!keys.ok()) return keys.status();
    auto rc = (*keys)->Wait(30000);
    if (rc != 0) return Status::Internal("keys add failed: " + ReadAll(log));
  }
  c->token_ = ReadAll(c->token_file_);
  while (!c->token_.empty() && (c->token_.back() == '\n' || c->token_.back() == '\r')) c->token_.pop_back();
  std::vector<std::string> argv = {bin,      "serve",  "--db",          c->dir_ + "/db", "--listen",
                                   "127.0.0.1:0", "--port-file", c->dir_ + "/port", "--keys", c->dir_ + "/keys"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  auto p = ChildProcess::Spawn(argv, {}, log);
  if (!p.ok()) return p.status();
  c->process_ = std::move(*p);
  // The port file appears (atomically) once the coordinator listens.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string port;
  while ((port = ReadAll(c->dir_ + "/port")).empty()) {
    if (c->process_->Wait(0)) return Status::Internal("the coordinator exited: " + ReadAll(log));
    if (std::chrono::steady_clock::now() >= end) return Status::Timeout("no port file: " + ReadAll(log));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  while (!port.empty() && (port.back() == '\n' || port.back() == ' ')) port.pop_back();
  const bool tls = std::find(extra_flags.begin(), extra_flags.end(), "--tls-cert") != extra_flags.end();
  c->url_ = (tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + port;
  return c;
}

RealCoordinator::~RealCoordinator() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string RealCoordinator::Log() const { return ReadAll(dir_ + "/coordinator.log"); }

}  // namespace scimesh::testing
