// An agent-run step started through the process module, recorded with the
// keeper before its program may run.
#include "launcher/agent/step_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "protocol/util/child_process.h"

namespace scimesh::agent {
namespace {

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

// `path` (relative to `dir`) opened for the step's output; /dev/null when empty.
Result<UniqueFd> OpenOutput(int dir, const std::string& path, const char* which) {
  UniqueFd fd(path.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                           : ::openat(dir, path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) return Status::Io(std::string("cannot create the ") + which + " file: " + std::strerror(errno));
  return fd;
}

}  // namespace

Result<SpawnedStep> SpawnStep(const AgentStart& start, Keeper& keeper, const rlimit* nofile) {
  if (start.argv.empty()) return Status::InvalidArgument("no command to run");
  // Relative output paths name files in the step's working directory.
  UniqueFd cwd;
  if (!start.cwd.empty()) cwd = UniqueFd(::open(start.cwd.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!start.cwd.empty() && !cwd.valid()) {
    return Status::NotFound(std::string("cannot enter the working directory: ") + std::strerror(errno));
  }
  const int dir = cwd.valid() ? cwd.get() : AT_FDCWD;
  auto out = OpenOutput(dir, start.stdout_path, "stdout");
  if (!out.ok()) return out.status();
  auto err = OpenOutput(dir, start.stderr_path, "stderr");
  if (!err.ok()) return err.status();

  ChildSpec spec;
  spec.argv = start.argv;
  spec.env = start.env;
  spec.unset = [&start](std::string_view name) { return Unset(start, name); };
  spec.stdout_fd = out->get();
  spec.stderr_fd = err->get();
  spec.cwd = start.cwd;
  spec.own_group = true;
  if (!start.cpus.empty()) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int c : start.cpus) CPU_SET(c, &cpus);
    spec.cpus = cpus;
  }
  spec.nofile = nofile;
  // The leader dies with the agent; its descendants are the keeper's job.
  spec.dies_with_parent = true;
  // No instant in which the step runs unprotected: the group is recorded
  // with the keeper before the program may start.
  SpawnedStep step;
  int pidfd_errno = 0;
  pid_t tracked = -1;
  spec.before_exec = [&](pid_t pid) {
    tracked = pid;
    // Opened before any wait: the pid cannot be reused while we hold it.
    step.pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    pidfd_errno = errno;
    if (!keeper.Track(pid)) {
      (void)std::fprintf(stderr,
                         "scimesh-agent: the keeper is gone: step %d is not protected against the agent's death\n",
                         static_cast<int>(pid));
    }
  };
  auto pid = SpawnChild(spec);
  if (!pid.ok()) {
    if (tracked > 0) keeper.Forget(tracked);  // reaped already
    return pid.status();
  }
  step.pid = *pid;
  if (!step.pidfd.valid()) {
    // Without a pidfd the agent cannot see the exit in its loop (Linux < 5.3).
    KillGroupAndReap(step.pid);
    keeper.Forget(step.pid);
    return pidfd_errno == ENOSYS
               ? Status::Unavailable("pidfd_open is not supported by this kernel (Linux 5.3 or later needed)")
               : Status::Unavailable(std::string("pidfd_open: ") + std::strerror(pidfd_errno));
  }
  return step;
}

}  // namespace scimesh::agent
