// Fork, pin, redirect, exec -- and the exec's failure reported, not guessed.
#include "launcher/agent/step_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/agent/exec_args.h"

extern char** environ;

namespace scimesh::agent {
namespace {

// Where the child failed; sent with errno through the report pipe.
enum Stage : int { kPin = 1, kStdin, kStdout, kStderr, kCwd, kExec };

struct Report {
  int stage = 0;
  int error = 0;
};

Status Describe(const Report& r, const AgentStart& start) {
  const std::string why = std::strerror(r.error);
  const std::string program = start.argv[0].substr(start.argv[0].rfind('/') + 1);
  switch (r.stage) {
    case kPin: return Status::InvalidArgument("cannot pin to the given cpus: " + why);
    case kStdin: return Status::Io("cannot open /dev/null: " + why);
    case kStdout: return Status::Io("cannot create the stdout file: " + why);
    case kStderr: return Status::Io("cannot create the stderr file: " + why);
    case kCwd: return Status::NotFound("cannot enter the working directory: " + why);
    default:
      if (r.error == EACCES) return Status::PermissionDenied("cannot start '" + program + "': " + why);
      return Status::NotFound("cannot start '" + program + "': " + why);
  }
}

[[noreturn]] void Fail(int report, Stage stage) {
  Report r{stage, errno};
  (void)!::write(report, &r, sizeof r);
  ::_exit(127);
}

// Opens `path` (or /dev/null when empty) onto `target`.
bool Redirect(const std::string& path, int target) {
  int fd = path.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                        : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  if (::dup2(fd, target) < 0) return false;
  ::close(fd);
  return true;
}

// The child, between fork and exec: async-signal-safe calls only (the
// strings were built before fork).
[[noreturn]] void Child(const AgentStart& start, pid_t agent, int go, int report, const cpu_set_t* cpus,
                        const rlimit* nofile, char** argv, char** envp) {
  ::setpgid(0, 0);
  // The leader dies with the agent (its descendants are the keeper's job);
  // the agent may have died before this line, hence the parent check.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != agent) ::_exit(127);
  // Wait until the agent has recorded the group with the keeper (it closes
  // its end of `go` then; EOF also when it died, which PDEATHSIG covers).
  char byte;
  while (::read(go, &byte, 1) < 0 && errno == EINTR) {
  }
  // The step starts with default signal handling, nothing blocked: the
  // agent blocks TERM/INT/HUP for its signalfd and ignores SIGPIPE.
  for (int sig = 1; sig < NSIG; ++sig) (void)::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (cpus != nullptr && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) Fail(report, kPin);
  if (nofile != nullptr) ::setrlimit(RLIMIT_NOFILE, nofile);  // lowering cannot fail
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0 || ::dup2(null, 0) < 0) Fail(report, kStdin);
  if (!Redirect(start.stdout_path, 1)) Fail(report, kStdout);
  if (!Redirect(start.stderr_path, 2)) Fail(report, kStderr);
  if (!start.cwd.empty() && ::chdir(start.cwd.c_str()) != 0) Fail(report, kCwd);
  ::execvpe(argv[0], argv, envp);
  Fail(report, kExec);
}

bool Matches(std::string_view pattern, std::string_view name) {
  return pattern.ends_with('*') ? name.starts_with(pattern.substr(0, pattern.size() - 1)) : name == pattern;
}

// `name` is one of the variables removed from the agent's environment: srun's
// task identity and PMI always (kAgentStepUnset), and what `start` names.
bool Unset(const AgentStart& start, std::string_view name) {
  for (std::string_view u : kAgentStepUnset) {
    if (Matches(u, name)) return true;
  }
  for (std::string_view u : start.unset) {
    if (Matches(u, name)) return true;
  }
  return false;
}

}  // namespace

Result<SpawnedStep> SpawnStep(const AgentStart& start, Keeper& keeper, const rlimit* nofile) {
  if (start.argv.empty()) return Status::InvalidArgument("no command to run");
  // Everything the child needs is built before fork.
  ExecArgs exec(start.argv, start.env, [&start](std::string_view name) { return Unset(start, name); });
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : start.cpus) CPU_SET(c, &cpus);

  int go[2], report[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return Status::Io(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(report, O_CLOEXEC) != 0) {
    ::close(go[0]);
    ::close(go[1]);
    return Status::Io(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t agent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {go[0], go[1], report[0], report[1]}) ::close(fd);
    return Status::Unavailable(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(report[0]);
    Child(start, agent, go[0], report[1], start.cpus.empty() ? nullptr : &cpus, nofile, exec.argv(), exec.envp());
  }
  ::setpgid(pid, pid);  // also here: the group exists before Track, whoever runs first
  SpawnedStep step;
  step.pid = pid;
  // Opened before any wait: the pid cannot be reused while we hold it.
  step.pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const int pidfd_errno = errno;
  if (!keeper.Track(pid)) {
    (void)std::fprintf(stderr, "scimesh-agent: the keeper is gone: step %d is not protected against the agent's death\n",
                 static_cast<int>(pid));
  }
  ::close(go[0]);
  ::close(go[1]);  // the child may go on
  ::close(report[1]);
  Report r;
  ssize_t n;
  do {
    n = ::read(report[0], &r, sizeof r);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof r)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    keeper.Forget(pid);
    return Describe(r, start);
  }
  if (!step.pidfd.valid()) {
    // Without a pidfd the agent cannot see the exit in its loop (Linux < 5.3).
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    keeper.Forget(pid);
    return pidfd_errno == ENOSYS
               ? Status::Unavailable("pidfd_open is not supported by this kernel (Linux 5.3 or later needed)")
               : Status::Unavailable(std::string("pidfd_open: ") + std::strerror(pidfd_errno));
  }
  return step;
}

}  // namespace scimesh::agent
