// scimesh-rank: pin, then exec (ranks > 0) or supervise the program (rank 0).
#include "mpi/rank_wrapper.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "mpi/pinning.h"
#include "mpi/rank_assignment.h"
#include "protocol/token.h"

extern char** environ;

namespace scimesh::mpi {
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};

void Say(int rank, const std::string& what) {
  std::fprintf(stderr, "scimesh-rank[%d]: %s\n", rank, what.c_str());
}

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// The key stays with scimesh-rank: the program (third-party code) never
// inherits SCIMESH_TOKEN or SCIMESH_TOKEN_FILE. Single-threaded callers only.
void DropKeyFromEnvironment() {
  for (const char* v : kTokenVariables) ::unsetenv(v);
}

// Pins this process when placement.json assigns this rank cores.
void PinFromPlacement(const std::string& dir, int rank, bool verbose) {
  auto assignment = ReadRankAssignment(dir, rank);
  if (!assignment.ok()) {
    Say(rank, "placement ignored: " + assignment.status().ToString());
    return;
  }
  if (!assignment->has_value()) return;
  auto pinned = PinProcess(**assignment);
  if (!pinned.ok()) {
    Say(rank, "pinning failed: " + pinned.status().ToString());
    return;
  }
  ExportRankEnvironment(**assignment);
  if (verbose || !pinned->assignment_honoured) {
    Say(rank, "bound to cpus " + pinned->bound_to + " (assigned " + FormatCpuList((*assignment)->cpus) +
                  ", allowed " + pinned->allowed + ")");
  }
}

// Ends this process the way the child ended, so srun sees the same thing.
int PassOn(int rank, int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    Say(rank, std::string("program killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")");
    signal(sig, SIG_DFL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
    raise(sig);
    return 128 + sig;
  }
  return 1;
}

int Supervise(const RankWrapperOptions& o, const std::string& dir, const LeaseKeeperFactory& take_over) {
  sigset_t watched, previous;
  sigemptyset(&watched);
  sigaddset(&watched, SIGCHLD);
  for (int s : kForwarded) sigaddset(&watched, s);
  // Blocked before the keeper's thread starts, so only sigtimedwait sees them.
  sigprocmask(SIG_BLOCK, &watched, &previous);

  // The program gets this environment without the key, built here (after
  // fork only async-signal-safe calls); filtered rather than unsetenv'd, as
  // the keeper's thread may be reading the environment (libcurl does).
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!IsTokenVariable(*e)) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  auto argv = CArgv(o.argv);
  // Non-dumpable before the fork: until exec the child is a copy of this
  // process, environment (and so the key) included.
  if (Status p = ProtectKeyHolder(); !p.ok()) Say(0, "cannot protect the key: " + p.ToString());

  pid_t child = fork();
  if (child < 0) {
    Say(0, std::string("fork failed: ") + std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "scimesh-rank[0]: cannot run '%s': %s\n", o.argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }

  // The take-over (lease.json, the key, a client, the heartbeat thread) runs
  // while the program starts, not before it: the launcher heartbeats until
  // lease.state names rank 0, so the lease is never without a holder.
  std::unique_ptr<LeaseKeeper> keeper;
  if (take_over) {
    auto k = take_over(dir);
    if (k.ok()) keeper = std::move(*k);
    else Say(0, "could not take the lease over (" + k.status().ToString() + "); the launcher keeps it");
  }

  int wstatus = 0;
  time_t kill_at = 0;
  for (;;) {
    timespec wait = {0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&watched, nullptr, &wait);
    if (sig > 0 && sig != SIGCHLD) kill(child, sig);  // forward
    pid_t done = waitpid(child, &wstatus, WNOHANG);
    if (done == child) break;
    if (keeper && keeper->lost()) {
      time_t now = time(nullptr);
      if (kill_at == 0) {
        Say(0, "lease lost: stopping the program (SIGTERM, then SIGKILL after " + std::to_string(o.kill_grace_s) + " s)");
        kill(child, SIGTERM);
        kill_at = now + o.kill_grace_s;
      } else if (now >= kill_at) {
        kill(child, SIGKILL);
      }
    }
  }
  if (keeper) {
    Status released = keeper->Release();
    if (!released.ok()) Say(0, "handing the lease back: " + released.ToString());
  }
  return PassOn(0, wstatus);
}

}  // namespace

int RunRankWrapper(const RankWrapperOptions& o, const LeaseKeeperFactory& take_over) {
  if (o.argv.empty()) {
    std::fprintf(stderr, "scimesh-rank: no program given (usage: scimesh-rank [options] -- program [args])\n");
    return 2;
  }
  std::string dir = o.attempt_dir;
  if (dir.empty()) {
    const char* env = std::getenv("SCIMESH_ATTEMPT_DIR");
    if (env != nullptr) dir = env;
  }
  const int rank = GlobalRankFromEnv().value_or(0);
  if (!dir.empty()) PinFromPlacement(dir, rank, o.verbose);
  if (rank != 0 || dir.empty()) {
    if (dir.empty() && rank == 0) Say(0, "no attempt directory (SCIMESH_ATTEMPT_DIR): running without a lease");
    DropKeyFromEnvironment();
    auto argv = CArgv(o.argv);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "scimesh-rank[%d]: cannot run '%s': %s\n", rank, o.argv[0].c_str(), std::strerror(errno));
    return 127;
  }
  return Supervise(o, dir, take_over);
}

}  // namespace scimesh::mpi
