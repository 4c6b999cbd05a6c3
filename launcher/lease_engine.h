// LeaseEngine: runs the leases a launcher claimed without a thread per
// lease. Each lease is a LeaseJob that moves between
//   the heartbeat hub -- every lease's heartbeats, one thread, one libcurl
//                     multi handle (protocol/heartbeat_hub.h);
//   the work pool  -- LeaseSession::Begin (dir, inputs, `started`),
//                     LaunchedStep::Prepare (setup, the launch command),
//                     the spawn;
//   the event loop -- StepWatch while the processes run: the exit through
//                     a pidfd, lease.state through inotify (a short poll on
//                     network filesystems), the token's cancellation,
//                     walltime, drain and kill-grace timers;
//   the work pool  -- LaunchedStep::Conclude (finish, collect) and
//                     LeaseSession::Finish (uploads, complete or fail),
// and ends in exactly one LeaseReport handed to the caller's Done.
// Design: docs/architecture.md "The launcher's engine".
//
// Thread-safety: Submit(), PreemptAll() and held() from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "launcher/event_loop.h"
#include "launcher/step/launched_step.h"
#include "launcher/step/node_agents.h"
#include "launcher/work_pool.h"
#include "protocol/runtime/heartbeat_hub.h"
#include "protocol/runtime/lease_session.h"

namespace scimesh::launcher {

struct EngineConfig {
  ClientOptions client;
  LeaseRunSetup setup;  // worker id, spool, coordinator URL
  // The launch of every step: tools, SCIMESH_* environment, events,
  // allocation_ending, kill_grace, poll. command, placement and preempt are
  // set per lease.
  StepLaunch launch;
  int threads = 8;  // the work pool: how many blocking lease calls run at once
  // Node agents (docs/agent.md): one per node named here, started with
  // agent_argv(node). Single-rank steps on a node whose agent is ready are
  // forked by it; everything else goes through the launch command. Empty:
  // no agents.
  std::vector<std::string> agent_nodes;
  std::function<std::vector<std::string>(const std::string& node)> agent_argv;
};

struct LeaseJob;

class LeaseEngine {
 public:
  using Done = std::function<void(const LeaseReport& report)>;

  static Result<std::unique_ptr<LeaseEngine>> Create(EngineConfig config);
  // Preempts what still runs and waits until every lease has its report.
  ~LeaseEngine();

  // Runs `lease` placed at `placement`. `command` null: this launcher does
  // not hold the step or cannot place it (the lease fails unservable).
  // `done` runs once, on a pool thread, after the lease's final report.
  void Submit(const Lease& lease, MonoTime claim_sent_at, const StepCommand* command, Placement placement,
              Done done);

  // Running steps are stopped and fail `preempted`; steps not yet launched
  // fail `preempted` before they start. One-way.
  void PreemptAll();

  size_t held() const;

 private:
  explicit LeaseEngine(EngineConfig config) : config_(std::move(config)) {}
  Status Init();
  void StartAgents();
  void Prepare(const std::shared_ptr<LeaseJob>& job, Client& client);
  bool OnAgent(const LeaseJob& job) const;
  void StartOnAgent(const std::shared_ptr<LeaseJob>& job);
  void AgentEnded(const std::string& id, const ExitInfo& exit);
  void AgentFailed(const std::string& id, const std::string& error);
  void Watch(const std::shared_ptr<LeaseJob>& job);
  void Ended(const std::shared_ptr<LeaseJob>& job);
  void Conclude(const std::shared_ptr<LeaseJob>& job, Client& client, const StepResult& result);
  void Finished(const std::shared_ptr<LeaseJob>& job, LeaseReport report);
  void PollExit(const std::weak_ptr<LeaseJob>& job, bool again);
  void OnInotify();

  EngineConfig config_;
  std::atomic<bool> preempt_{false};
  std::unique_ptr<HeartbeatHub> hub_;  // every lease's heartbeats, one thread
  std::unique_ptr<WorkPool> pool_;
  std::unique_ptr<EventLoop> loop_;
  UniqueFd inotify_;
  // Loop thread only: the watched steps, by inotify watch descriptor, and all.
  std::map<int, std::weak_ptr<LeaseJob>> by_wd_;
  std::map<LeaseJob*, std::shared_ptr<LeaseJob>> watched_;  // owned here while they run
  std::map<std::string, std::shared_ptr<LeaseJob>> on_agent_;  // sent to an agent, by lease id
  std::unique_ptr<NodeAgents> agents_;                          // null: none

  mutable std::mutex mu_;
  std::condition_variable idle_;
  size_t held_ = 0;
};

}  // namespace scimesh::launcher
