// Spawning, awaiting (inotify on the port file), stopping and killing the
// real coordinator binary.
#include "coordinator_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace scimesh::coordinator::testing {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// fork + exec `argv` with `env` added to this process's environment, stdout
// to `out_fd` (or /dev/null), stderr appended to `log`. Everything the child
// needs is prepared before fork: the test process may have other threads.
pid_t Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, int out_fd,
            const std::string& log) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    if (!env.count(entry.substr(0, entry.find('=')))) env_strings.push_back(entry);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (err >= 0) ::dup2(err, 2);
    ::dup2(out_fd >= 0 ? out_fd : devnull, 1);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  if (err >= 0) ::close(err);
  if (devnull >= 0) ::close(devnull);
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

CoordinatorProcess::CoordinatorProcess(Options options) : options_(std::move(options)) {
  char tmpl[] = "/tmp/scimesh-coordinator-test-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) std::abort();
  dir_ = tmpl;
  struct TestKey {
    const char* name;
    const char* scope;
    const char* workflows;
  };
  // w1 and w3 are keys as older releases wrote them, without workflows=
  // (first come, first served: the tenancy tests' subject); `keys add` makes
  // them with '*' and the line loses it below.
  for (const TestKey& k : {TestKey{"w1", "worker", ""}, TestKey{"w2", "worker", "*"}, TestKey{"w3", "worker", ""},
                           TestKey{"exec", "execute", ""}, TestKey{"exec2", "execute", ""},
                           TestKey{"root", "admin", ""}, TestKey{"reader", "read", ""}}) {
    const std::string name = k.name;
    std::vector<std::string> args = {"keys", "add", name, "--scope", k.scope, "--keys", keys_file(),
                                     "--secret-out", token_file(name)};
    const bool legacy = std::string_view(k.scope) == "worker" && *k.workflows == '\0';
    if (*k.workflows != '\0' || legacy) args.insert(args.end(), {"--workflows", legacy ? "*" : k.workflows});
    std::string out;
    int rc = RunCli(args, {}, &out);
    if (rc != 0) std::abort();
    if (legacy) {
      std::string keys = Slurp(keys_file());
      const std::string suffix = " workflows=*\n";
      if (keys.size() < suffix.size() || keys.compare(keys.size() - suffix.size(), suffix.size(), suffix) != 0) {
        std::abort();
      }
      keys.replace(keys.size() - suffix.size(), suffix.size(), "\n");
      std::ofstream(keys_file(), std::ios::trunc) << keys;
    }
    std::string token = Slurp(token_file(name));
    while (!token.empty() && token.back() == '\n') token.pop_back();
    tokens_[name] = token;
  }
}

CoordinatorProcess::~CoordinatorProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    // Bounded: a coordinator that does not stop in 10 s is killed.
    for (int i = 0; i < 1000 && ::waitpid(pid_, nullptr, WNOHANG) == 0; ++i) ::usleep(10000);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string cmd = "rm -rf '" + dir_ + "'";
  if (std::system(cmd.c_str()) != 0) {
  }
}

std::string CoordinatorProcess::log() const { return Slurp(dir_ + "/coordinator.log"); }

std::string CoordinatorProcess::Start() {
  const std::string port_file = dir_ + "/port";
  ::unlink(port_file.c_str());
  int ino = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (ino < 0 || ::inotify_add_watch(ino, dir_.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) return "inotify failed";
  std::vector<std::string> argv = {options_.binary.empty() ? SCIMESH_COORDINATOR_BIN : options_.binary,
                                   "serve",
                                   "--db",
                                   db(),
                                   "--keys",
                                   keys_file(),
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--port-file",
                                   port_file,
                                   "--lease-ttl-ms",
                                   std::to_string(options_.lease_ttl_ms),
                                   "--heartbeat-ms",
                                   std::to_string(options_.heartbeat_ms),
                                   "--grace-ms",
                                   std::to_string(options_.grace_ms),
                                   "--retry-base-ms",
                                   std::to_string(options_.retry_base_ms),
                                   "--retry-cap-ms",
                                   std::to_string(options_.retry_cap_ms)};
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  pid_ = Spawn(argv, {}, -1, dir_ + "/coordinator.log");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string why;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) break;
    port_ = 0;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      why = "the coordinator exited during startup";
      break;
    }
    pollfd p{ino, POLLIN, 0};
    ::poll(&p, 1, 100);  // wakes when the port file is renamed into place
    char buf[4096];
    while (::read(ino, buf, sizeof buf) > 0) {
    }
  }
  ::close(ino);
  if (port_ == 0 && why.empty()) why = "no port file within 20 s";
  if (port_ == 0) return why + "; log:\n" + log();
  return "";
}

void CoordinatorProcess::Kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  WaitExit(pid_);
  pid_ = -1;
}

int CoordinatorProcess::Terminate() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int rc = WaitExit(pid_);
  pid_ = -1;
  return rc;
}

int CoordinatorProcess::RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                               std::string* out) const {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::vector<std::string> argv = {SCIMESH_COORDINATOR_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_t pid = Spawn(argv, env, fds[1], dir_ + "/cli.log");
  ::close(fds[1]);
  out->clear();
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  return WaitExit(pid);
}

}  // namespace scimesh::coordinator::testing
