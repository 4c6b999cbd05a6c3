// scimesh-rank: pin, then exec (ranks > 0) or supervise the program (rank 0).
#include "mpi/rank_wrapper.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <ctime>
#include <optional>
#include <vector>

#include "mpi/pinning.h"
#include "mpi/rank_assignment.h"
#include "protocol/util/index_list.h"
#include "protocol/util/child_process.h"
#include "protocol/util/token.h"

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
    const std::vector<int> assigned((*assignment)->cpus.begin(), (*assignment)->cpus.end());
    Say(rank, "bound to cpus " + pinned->bound_to + " (assigned " + FormatIndexList(assigned) + ", allowed " +
                  pinned->allowed + ")");
  }
}

// Ends this process the way the child ended, so srun sees the same thing.
int PassOn(int rank, const ChildExit& exit) {
  if (!exit.signaled) return exit.code;
  const int sig = exit.code;
  Say(rank, "program killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")");
  signal(sig, SIG_DFL);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  raise(sig);
  return 128 + sig;
}

int Supervise(const RankWrapperOptions& o, const std::string& dir, const LeaseKeeperFactory& take_over) {
  sigset_t watched, previous;
  sigemptyset(&watched);
  sigaddset(&watched, SIGCHLD);
  for (int s : kForwarded) sigaddset(&watched, s);
  // Blocked before the keeper's thread starts, so only sigtimedwait sees them.
  sigprocmask(SIG_BLOCK, &watched, &previous);

  // The program gets this environment without the key (filtered rather than
  // unsetenv'd: the keeper's thread may be reading the environment, as
  // libcurl does). It inherits the MPI runtime's descriptors (srun's PMI_FD)
  // and none of this wrapper's own, which are all close-on-exec.
  ChildSpec spec;
  spec.argv = o.argv;
  spec.unset = IsTokenVariable;
  spec.stdin_fd = STDIN_FILENO;
  spec.stdout_fd = STDOUT_FILENO;
  spec.stderr_fd = STDERR_FILENO;
  spec.pass_descriptors = true;
  if (Status p = ProtectKeyHolder(); !p.ok()) Say(0, "cannot protect the key: " + p.ToString());
  auto spawned = SpawnChild(spec);
  if (!spawned.ok()) {
    // Worded as ranks > 0 word it ("cannot run 'prog': ..."), which the launcher reads.
    std::string why = spawned.status().message();
    if (why.starts_with("cannot start ")) why = "cannot run " + why.substr(13);
    Say(0, why);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return 127;
  }
  const pid_t child = *spawned;

  // The take-over (lease.json, the key, a client, the heartbeat thread) runs
  // while the program starts, not before it: the launcher heartbeats until
  // lease.state names rank 0, so the lease is never without a holder.
  std::unique_ptr<LeaseKeeper> keeper;
  if (take_over) {
    auto k = take_over(dir);
    if (k.ok()) keeper = std::move(*k);
    else Say(0, "could not take the lease over (" + k.status().ToString() + "); the launcher keeps it");
  }

  ChildExit exit;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  for (;;) {
    // Wakes at least every 200 ms, and when the SIGKILL is due.
    auto step = std::chrono::milliseconds(200);
    if (kill_at) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*kill_at - std::chrono::steady_clock::now());
      step = std::clamp(left, std::chrono::milliseconds(1), step);
    }
    timespec wait = {0, static_cast<long>(step.count()) * 1000 * 1000};
    int sig = sigtimedwait(&watched, nullptr, &wait);
    if (sig > 0 && sig != SIGCHLD) kill(child, sig);  // forward
    if (auto done = PollChild(child)) {
      exit = *done;
      break;
    }
    if (keeper && keeper->lost()) {
      const auto now = std::chrono::steady_clock::now();
      if (!kill_at) {
        Say(0, "lease lost: stopping the program (SIGTERM, then SIGKILL after " + std::to_string(o.kill_grace.count()) +
                   " ms)");
        kill(child, SIGTERM);
        kill_at = now + o.kill_grace;
      } else if (now >= *kill_at) {
        kill(child, SIGKILL);
      }
    }
  }
  if (keeper) {
    Status released = keeper->Release();
    if (!released.ok()) Say(0, "handing the lease back: " + released.ToString());
  }
  return PassOn(0, exit);
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
