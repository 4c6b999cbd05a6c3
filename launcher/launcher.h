// Launcher: scimesh-launch's work inside one allocation (or on a plain host).
// Registers the definitions it holds, long-polls claims sized to its free
// nodes, cores and remaining walltime, places each lease on exact cores,
// runs it through the client library's lease rules with the step launched as
// processes, and drains cleanly when the allocation ends or is signalled.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "launcher/allocation/allocation.h"
#include "launcher/allocation_end.h"
#include "launcher/claim_pacing.h"
#include "launcher/definitions/step_commands.h"
#include "launcher/lease_engine.h"
#include "launcher/placement/capacity.h"
#include "launcher/placement/placement.h"
#include "launcher/step/launch_command.h"
#include "launcher/step/spank_use.h"
#include "launcher/timeline/events_log.h"
#include "protocol/client/client.h"

namespace scimesh::launcher {

struct LauncherConfig {
  ClientOptions client;                 // coordinator URL and token
  std::string definitions_path;
  std::string spool_dir;                // attempt directories go here (shared by all nodes)
  std::optional<Backend> backend;       // default: slurm inside an allocation, else local
  std::string worker_id;                // default <cluster>/<job id>/<host> or <host>/<pid>
  std::string events_path;              // empty: none
  std::chrono::seconds idle_exit{300};  // exit after this long with nothing held or offered; 0: never
  std::chrono::seconds register_retry{15};  // how long registration retries an unreachable coordinator
  ClaimPolicy policy;                   // drain margin, concurrency
  std::chrono::seconds drain_grace{60}; // on drain, how long running steps may still finish
  std::optional<std::chrono::seconds> walltime;  // --walltime: the allocation ends this long from now
  int64_t wait_ms = 20000;
  std::optional<std::string> run_id;    // claim only this run's steps
  LaunchContext launch;                 // srun/mpirun/scimesh-rank paths
  SpankUse spank = SpankUse::kAuto;     // --spank: sets launch.spank_option in Create()
  // --agents: a node agent per node forks single-rank steps (slurm backend
  // only; docs/agent.md). `agent` is its program.
  bool agents = true;
  std::string agent = "scimesh-agent";
  std::chrono::milliseconds kill_grace{10000};
  // Empty: hwloc on this node. Else an hwloc XML file or "synthetic:<description>",
  // the hardware placement assumes for every node (ranks pin to what exists).
  std::string topology;
};

// Thread-safety: Run() once, from one thread; RequestDrain() from any thread
// (a signal-handling thread).
class Launcher {
 public:
  static Result<std::unique_ptr<Launcher>> Create(LauncherConfig config);
  ~Launcher();

  // Serves until drained, idle or the run is over; returns the exit code
  // (0: clean end, including a drain).
  int Run();

  // Stop claiming; running steps get drain_grace, then fail `preempted`.
  void RequestDrain(std::string_view why);

  // SIGTERM: under SLURM, the allocation is ending (scancel, time limit,
  // preemption signal the steps at the same moment), so a step that fails
  // from now on fails `preempted`, not retryable; then RequestDrain(signal).
  void AllocationSignalled(std::string_view signal);

  // Stop running steps now (they fail `preempted`); implies a drain.
  void StopNow();

 private:
  explicit Launcher(LauncherConfig config) : config_(std::move(config)) {}
  // Create's steps, in this order: the allocation (SLURM's or this host),
  // the backend, SPANK use and worker id, the topologies and the Placer,
  // then the definitions and events file, the claim client and the engine.
  Status Prepare();
  Status DiscoverAllocation();
  Status ResolveLaunch();
  Status CreatePlacer();
  Status CreateClaimClient();
  Status CreateEngine();
  void ClaimLoop();
  // One claim sized to `cap`: starts what it offers; returns how long to
  // pause before the next (claim_pacing_). `idle_left`: time until --idle-exit.
  Millis ClaimOnce(const ClaimCapacity& cap, size_t held, std::optional<Millis> idle_left);
  void StartLease(const Lease& lease, MonoTime claim_sent_at);
  void LeaseEnded(const Lease& lease, const LeaseReport& report, std::optional<uint64_t> placement_id);
  void Drain();
  std::optional<std::chrono::seconds> TimeLeftNow() const;
  std::vector<std::string> AgentArgv(const std::string& node) const;

  LauncherConfig config_;
  Allocation allocation_;
  AllocationEnd allocation_end_;  // marked by AllocationSignalled or srun's refusal; outlives engine_
  std::unique_ptr<Placer> placer_;
  std::optional<StepCommands> commands_;
  std::unique_ptr<EventsLog> events_;
  std::unique_ptr<Client> claim_client_;
  std::unique_ptr<LeaseEngine> engine_;  // every claimed lease runs here
  int64_t lease_ttl_ms_ = 30000;
  std::vector<std::string> unfittable_;  // registered steps the allocation can never take
  // The claim loop's own state (its thread only): pauses between claims,
  // and since when nothing was held or offered (--idle-exit).
  ClaimPacing claim_pacing_;
  std::chrono::steady_clock::time_point idle_since_;

  std::atomic<bool> draining_{false};
  std::mutex mu_;
  std::condition_variable changed_;  // a lease finished
  size_t held_ = 0;
  int outcomes_failed_ = 0;
};

}  // namespace scimesh::launcher
