// Starting a program with nothing inherited but its stdio, and waiting for it.
#include "protocol/util/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/util/unique_fd.h"

extern char** environ;

namespace scimesh {

ExecArgs::ExecArgs(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                   const std::function<bool(std::string_view name)>& drop)
    : args_(argv) {
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (env.count(name) == 0 && !(drop && drop(name))) env_.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) env_.push_back(k + "=" + v);
  for (auto& s : env_) envp_.push_back(s.data());
  envp_.push_back(nullptr);
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
}

ChildExit ChildExit::FromWaitStatus(int status) {
  ChildExit e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.code = WTERMSIG(status);
  } else {
    e.code = WEXITSTATUS(status);
  }
  return e;
}

std::string ChildExit::Describe() const {
  if (!signaled) return "exit status " + std::to_string(code);
  const char* name = strsignal(code);
  return "killed by signal " + std::to_string(code) + " (" + (name != nullptr ? name : "unknown") + ")";
}

std::optional<ChildExit> WaitChild(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid) return std::nullopt;
  return ChildExit::FromWaitStatus(status);
}

std::optional<ChildExit> PollChild(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (r != pid) return std::nullopt;
  return ChildExit::FromWaitStatus(status);
}

void KillGroupAndReap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(-pid, SIGKILL);
  (void)WaitChild(pid);
}

namespace {

// Where a forked child failed; sent with errno through the report pipe.
enum Stage : int { kStdio = 1, kCwd, kExec };

struct Report {
  int stage = 0;
  int error = 0;
};

std::string ProgramName(const ChildSpec& spec) { return spec.argv[0].substr(spec.argv[0].rfind('/') + 1); }

Status StartFailure(const ChildSpec& spec, int error) {
  const std::string what = "cannot start '" + ProgramName(spec) + "': " + std::strerror(error);
  if (error == EAGAIN || error == ENOMEM) return Status::Unavailable(what);
  if (error == EACCES || error == EPERM) return Status::PermissionDenied(what);
  return Status::NotFound(what);
}

Status Describe(const ChildSpec& spec, const Report& r) {
  const std::string why = std::strerror(r.error);
  switch (r.stage) {
    case kStdio: return Status::Io("cannot give the program its stdin, stdout and stderr: " + why);
    case kCwd: return Status::NotFound("cannot enter the working directory: " + why);
    default: return StartFailure(spec, r.error);
  }
}

// The three stdio sources, each a close-on-exec descriptor 3 or above (a
// source among 0-2 would be overwritten by an earlier dup2).
class Stdio {
 public:
  Status Prepare(const ChildSpec& spec) {
    const int want[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
    for (int i = 0; i < 3; ++i) {
      int fd = want[i];
      if (fd >= 0 && fd < 3) {
        owned_[i] = UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
        fd = owned_[i].valid() ? owned_[i].get() : kDevNull;  // closed here: /dev/null there
      }
      if (fd == kDevNull) {
        if (!null_.valid()) null_ = UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC));
        if (!null_.valid()) return Status::Io(std::string("cannot open /dev/null: ") + std::strerror(errno));
        fd = null_.get();
      }
      fds_[i] = fd;
    }
    return Status::Ok();
  }
  int operator[](int i) const { return fds_[i]; }

 private:
  UniqueFd null_, owned_[3];
  int fds_[3] = {-1, -1, -1};
};

// The calling thread bound to `cpus` until destroyed: the child inherits
// the binding before its program runs.
class ThreadPin {
 public:
  Status Bind(const std::optional<cpu_set_t>& cpus) {
    if (!cpus) return Status::Ok();
    if (::sched_getaffinity(0, sizeof saved_, &saved_) != 0 || ::sched_setaffinity(0, sizeof *cpus, &*cpus) != 0) {
      return Status::InvalidArgument(std::string("cannot pin to the given cpus: ") + std::strerror(errno));
    }
    active_ = true;
    return Status::Ok();
  }
  ~ThreadPin() {
    if (active_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
  }

 private:
  cpu_set_t saved_{};
  bool active_ = false;
};

// posix_spawn's attributes and file actions, released on every path.
class SpawnActions {
 public:
  SpawnActions() {
    ok_ = ::posix_spawnattr_init(&attr_) == 0;
    ok_ = ::posix_spawn_file_actions_init(&actions_) == 0 && ok_;
  }
  ~SpawnActions() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;

  bool Prepare(const ChildSpec& spec, const Stdio& stdio) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (spec.own_group) flags |= POSIX_SPAWN_SETPGROUP;
    bool ok = ok_ && ::posix_spawnattr_setflags(&attr_, flags) == 0 && ::posix_spawnattr_setpgroup(&attr_, 0) == 0 &&
              ::posix_spawnattr_setsigdefault(&attr_, &all) == 0 && ::posix_spawnattr_setsigmask(&attr_, &none) == 0;
    for (int i = 0; i < 3 && ok; ++i) ok = ::posix_spawn_file_actions_adddup2(&actions_, stdio[i], i) == 0;
    if (ok && !spec.cwd.empty()) ok = ::posix_spawn_file_actions_addchdir_np(&actions_, spec.cwd.c_str()) == 0;
    if (ok && !spec.pass_descriptors) ok = ::posix_spawn_file_actions_addclosefrom_np(&actions_, 3) == 0;
    return ok;
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  bool ok_ = false;
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// posix_spawn shares this process's memory until the exec (vfork): fork
// would copy the page tables of a large threaded launcher and make every
// thread pay copy-on-write faults afterwards.
Result<pid_t> Spawn(const ChildSpec& spec, const Stdio& stdio, ExecArgs& exec) {
  SpawnActions actions;
  if (!actions.Prepare(spec, stdio)) return Status::Internal("cannot prepare posix_spawn");
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, exec.argv()[0], actions.actions(), actions.attr(), exec.argv(), exec.envp());
  if (rc != 0) return StartFailure(spec, rc);
  return pid;
}

[[noreturn]] void Fail(int report, Stage stage) {
  Report r{stage, errno};
  (void)!::write(report, &r, sizeof r);
  ::_exit(127);
}

// Every descriptor from 3 up but `keep`.
void CloseAllBut(int keep) {
  if (::close_range(3, static_cast<unsigned>(keep) - 1, 0) == 0 &&
      ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0) == 0) {
    return;
  }
  rlimit lim{};
  const rlim_t top = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536 ? lim.rlim_cur : 65536;
  for (int fd = 3; fd < static_cast<int>(top); ++fd) {
    if (fd != keep) ::close(fd);
  }
}

// The child between fork and exec: async-signal-safe calls only (everything
// was built before the fork).
[[noreturn]] void Child(const ChildSpec& spec, const Stdio& stdio, pid_t parent, int go, int report, ExecArgs& exec) {
  if (spec.own_group) ::setpgid(0, 0);
  if (spec.dies_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the line above
  }
  if (go >= 0) {
    // EOF once the parent's before_exec is done (or the parent died).
    char byte;
    while (::read(go, &byte, 1) < 0 && errno == EINTR) {
    }
  }
  for (int sig = 1; sig < NSIG; ++sig) (void)::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (spec.nofile != nullptr) ::setrlimit(RLIMIT_NOFILE, spec.nofile);
  for (int i = 0; i < 3; ++i) {
    if (::dup2(stdio[i], i) < 0) Fail(report, kStdio);
  }
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) Fail(report, kCwd);
  if (!spec.pass_descriptors) CloseAllBut(report);  // the report pipe closes at the exec
  ::execvpe(exec.argv()[0], exec.argv(), exec.envp());
  Fail(report, kExec);
}

Result<pid_t> Fork(const ChildSpec& spec, const Stdio& stdio, ExecArgs& exec) {
  int go[2] = {-1, -1}, report[2];
  if (spec.before_exec && ::pipe2(go, O_CLOEXEC) != 0) return Status::Io(std::string("pipe: ") + std::strerror(errno));
  UniqueFd go_r(go[0]), go_w(go[1]);
  if (::pipe2(report, O_CLOEXEC) != 0) return Status::Io(std::string("pipe: ") + std::strerror(errno));
  UniqueFd report_r(report[0]), report_w(report[1]);
  // Blocked across the fork: no handler of this process runs in the child
  // before it resets them all.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (go_w.valid()) ::close(go_w.get());
    ::close(report_r.get());
    Child(spec, stdio, parent, go_r.get(), report_w.get(), exec);
  }
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return Status::Unavailable(std::string("fork: ") + std::strerror(fork_errno));
  if (spec.own_group) ::setpgid(pid, pid);  // here too: the group exists when before_exec runs
  report_w.Reset();
  go_r.Reset();
  if (spec.before_exec) spec.before_exec(pid);
  go_w.Reset();  // the child may go on
  Report r;
  ssize_t n;
  while ((n = ::read(report_r.get(), &r, sizeof r)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof r)) {
    (void)WaitChild(pid);
    return Describe(spec, r);
  }
  return pid;
}

// Said before the spawn: posix_spawn reports a failed chdir as the exec's.
Status CheckWorkingDirectory(const std::string& cwd) {
  if (cwd.empty()) return Status::Ok();
  struct stat st {};
  const int error = ::stat(cwd.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (error == 0) return Status::Ok();
  return Status::NotFound(std::string("cannot enter the working directory: ") + std::strerror(error));
}

}  // namespace

Result<pid_t> SpawnChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("no command to run");
  if (Status s = CheckWorkingDirectory(spec.cwd); !s.ok()) return s;
  ExecArgs exec(spec.argv, spec.env, spec.unset);
  Stdio stdio;
  if (Status s = stdio.Prepare(spec); !s.ok()) return s;
  ThreadPin pin;
  if (Status s = pin.Bind(spec.cpus); !s.ok()) return s;
  const bool needs_fork = spec.nofile != nullptr || spec.dies_with_parent || spec.before_exec;
  return needs_fork ? Fork(spec, stdio, exec) : Spawn(spec, stdio, exec);
}

}  // namespace scimesh
