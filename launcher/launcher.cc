// The launcher's claim loop, lease threads and drain.
#include "launcher/launcher.h"

#include <unistd.h>

#include <algorithm>

#include "launcher/allocation/command_output.h"
#include "launcher/allocation/node_probe.h"
#include "launcher/placement/claim_order.h"
#include "launcher/placement/unfittable_steps.h"
#include "protocol/util/host_name.h"
#include "protocol/util/log.h"
#include "protocol/util/version.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }

// The long-poll time while steps run (see ClaimLoop).
constexpr int64_t kBusyWaitMs = 2000;

}  // namespace

Result<std::unique_ptr<Launcher>> Launcher::Create(LauncherConfig config) {
  std::unique_ptr<Launcher> l(new Launcher(std::move(config)));
  SCIMESH_RETURN_IF_ERROR(l->Prepare());
  return l;
}

Launcher::~Launcher() {
  engine_.reset();  // preempts what still runs and waits for every report
}

void Launcher::StopNow() {
  if (engine_) engine_->PreemptAll();
}

Status Launcher::Prepare() {
  SCIMESH_RETURN_IF_ERROR(DiscoverAllocation());
  SCIMESH_RETURN_IF_ERROR(ResolveLaunch());
  SCIMESH_RETURN_IF_ERROR(CreatePlacer());

  auto commands = StepCommands::Load(config_.definitions_path);
  if (!commands.ok()) return commands.status();
  commands_ = std::move(*commands);

  auto events = EventsLog::Open(config_.events_path);
  if (!events.ok()) return events.status();
  events_ = std::move(*events);

  SCIMESH_RETURN_IF_ERROR(CreateClaimClient());
  return CreateEngine();
}

Status Launcher::DiscoverAllocation() {
  AllocationOptions opts;
  opts.hostname = HostName();
  opts.walltime = config_.walltime;
  auto alloc = AllocationFromEnvironment(ProcessEnvironment(), opts);
  if (!alloc.ok()) return alloc.status().WithContext("allocation");
  allocation_ = std::move(*alloc);
  if (allocation_.under_slurm && !allocation_.end) {
    auto end = QuerySlurmJobEnd(allocation_.job_id, std::chrono::seconds(10));
    if (end.ok()) allocation_.end = *end;
    else Log()->warn("time left unknown ({}); claiming as if unlimited", end.status().ToString());
  }
  return Status::Ok();
}

Status Launcher::ResolveLaunch() {
  if (!config_.backend) config_.backend = allocation_.under_slurm ? Backend::kSlurm : Backend::kLocal;
  config_.launch.backend = *config_.backend;
  std::string spank_note;
  auto srun_help = [this] { return CommandOutput({config_.launch.srun, "--help"}, std::chrono::seconds(10)); };
  auto spank = ResolveSpankUse(config_.spank, config_.launch.backend, srun_help, &spank_note);
  if (!spank.ok()) return spank.status();
  config_.launch.spank_option = *spank;
  if (!spank_note.empty()) Log()->info("{}", spank_note);
  if (config_.worker_id.empty()) {
    config_.worker_id = allocation_.under_slurm
                            ? "slurm/" + allocation_.job_id + "/" + allocation_.this_node
                            : HostName() + "/" + std::to_string(::getpid());
  }
  return Status::Ok();
}

Status Launcher::CreatePlacer() {
  auto local = Topology::FromSource(config_.topology);
  if (!local.ok()) return local.status().WithContext("topology");
  // HWLOC_SYNTHETIC / HWLOC_XMLFILE stood in for this machine: its PU
  // indices name nothing to bind to (scimesh-rank's hwloc binding was a
  // no-op there too).
  if (config_.topology.empty() && !(*local)->this_system()) config_.launch.bind = false;
  std::map<std::string, std::shared_ptr<const Topology>> probed;
  // Mixed node types: each other node's own hardware, probed once (not with
  // --topology, which says what every node is).
  if (config_.launch.backend == Backend::kSlurm && config_.topology.empty() && allocation_.nodes.size() > 1) {
    auto run = [](const std::vector<std::string>& argv) {
      return CommandOutput(argv, std::chrono::seconds(60), size_t{256} << 20);
    };
    ProbedNodes nodes = ProbeNodes(allocation_, config_.launch.srun, run);
    for (const auto& problem : nodes.problems) Log()->warn("topology probe: {}", problem);
    for (const auto& [name, topology] : nodes.topologies) Log()->info("node {}: {}", name, topology->Summary());
    probed = std::move(nodes.topologies);
  }
  auto placer = Placer::Create(NodeSpecsFor(allocation_, *local, probed));
  if (!placer.ok()) return placer.status().WithContext("placement");
  placer_ = std::move(*placer);
  return Status::Ok();
}

Status Launcher::CreateClaimClient() {
  // An idle launcher whose coordinator is unreachable should leave the
  // allocation after --idle-exit, not after the client's whole retry budget.
  ClientOptions claim_options = config_.client;
  if (config_.idle_exit.count() > 0) {
    const Millis idle = std::chrono::duration_cast<Millis>(config_.idle_exit);
    claim_options.retry_budget = std::min(claim_options.retry_budget, std::max(idle, Millis(10000)));
  }
  auto client = Client::Create(std::move(claim_options));
  if (!client.ok()) return client.status();
  claim_client_ = std::move(*client);
  return Status::Ok();
}

Status Launcher::CreateEngine() {
  EngineConfig engine;
  engine.client = config_.client;
  engine.setup = {config_.worker_id, config_.spool_dir, config_.client.coordinator_url};
  engine.launch.launch = config_.launch;
  engine.launch.launch.env["SCIMESH_WORKER_ID"] = config_.worker_id;
  engine.launch.launch.env["SCIMESH_URL"] = config_.client.coordinator_url;
  // The SPANK plugin gives a run cancelled by its owner this grace too.
  engine.launch.launch.env["SCIMESH_KILL_GRACE_MS"] = std::to_string(config_.kill_grace.count());
  // Rank 0 calls the same coordinator: it needs the same transport consent.
  if (config_.client.allow_insecure_http) engine.launch.launch.env["SCIMESH_ALLOW_INSECURE_HTTP"] = "1";
  engine.launch.events = events_.get();
  engine.launch.allocation_ending = [this] {
    allocation_end_.Mark();
    RequestDrain("srun found the allocation ending");
  };
  if (allocation_.under_slurm) engine.launch.allocation_end = &allocation_end_;
  engine.launch.kill_grace = config_.kill_grace;
  if (config_.agents && config_.launch.backend == Backend::kSlurm) {
    for (const auto& node : allocation_.nodes) engine.agent_nodes.push_back(node.name);
    engine.agent_argv = [this](const std::string& node) { return AgentArgv(node); };
  }
  auto created = LeaseEngine::Create(std::move(engine));
  if (!created.ok()) return created.status();
  engine_ = std::move(*created);
  return Status::Ok();
}

// One task on `node` with every cpu the job has there, overlapping every
// other step (so it blocks none); no PMI, no binding: the agent pins each
// step it forks.
std::vector<std::string> Launcher::AgentArgv(const std::string& node) const {
  std::vector<std::string> argv = {config_.launch.srun, "--overlap", "--nodes=1", "--ntasks=1",
                                   "--nodelist=" + node, "--mpi=none", "--cpu-bind=none",
                                   "--job-name=scimesh-agent", "--quiet"};
  for (const auto& n : allocation_.nodes) {
    if (n.name == node && n.cpus > 0) argv.push_back("--cpus-per-task=" + std::to_string(n.cpus));
  }
  const auto grace = std::chrono::duration_cast<std::chrono::milliseconds>(config_.kill_grace).count();
  argv.insert(argv.end(), {config_.agent, "--kill-grace-ms", std::to_string(grace)});
  return argv;
}

std::optional<std::chrono::seconds> Launcher::TimeLeftNow() const {
  return TimeLeft(allocation_, std::chrono::system_clock::now());
}

void Launcher::AllocationSignalled(std::string_view signal) {
  if (allocation_.under_slurm && !allocation_end_.marked()) {
    // A node that died ends the job too (NODE_FAIL): ask which of ours SLURM
    // marked down before the steps are classed (one RPC, bounded).
    std::vector<std::string> ours;
    for (const auto& n : allocation_.nodes) ours.push_back(n.name);
    auto sinfo = CommandOutput({"sinfo", "-h", "-N", "-o", "%N %t"}, std::chrono::seconds(2));
    std::vector<std::string> dead = sinfo.ok() ? DeadNodesIn(*sinfo, ours) : std::vector<std::string>{};
    allocation_end_.SetDeadNodes(dead);
    allocation_end_.Mark();
    if (dead.empty()) {
      Log()->info("{}: the allocation is ending; steps that fail from now on fail preempted", signal);
    } else {
      std::string names;
      for (const std::string& n : dead) names += (names.empty() ? "" : ",") + n;
      Log()->info("{}: the allocation is ending: node(s) {} died; their steps fail node_failure, others preempted",
                  signal, names);
    }
  }
  RequestDrain(signal);
}

void Launcher::RequestDrain(std::string_view why) {
  if (!draining_.exchange(true)) {
    Log()->info("draining ({}): no more claims; running steps get {} s", why, config_.drain_grace.count());
  }
  if (claim_client_) claim_client_->Interrupt();
  changed_.notify_all();
}

int Launcher::Run() {
  RegisterRequest reg;
  reg.worker_id = config_.worker_id;
  reg.host = allocation_.this_node;
  reg.version = "scimesh-launch " + std::string(ThisBuild().version);
  reg.concurrency = config_.policy.concurrency;
  reg.definitions = commands_->definitions();
  auto registered = claim_client_->Register(reg, std::chrono::duration_cast<Millis>(config_.register_retry));
  if (!registered.ok()) {
    Log()->error("{}", registered.status().message());  // "register: <what failed and why>"
    return 1;
  }
  lease_ttl_ms_ = registered->lease_ttl_ms;
  // A lease claimed at the end of a long poll must keep most of its TTL.
  config_.wait_ms = std::min<int64_t>(config_.wait_ms, registered->lease_ttl_ms / 2);
  // The spool is said here, never sent: `run show` names attempt directories
  // as <spool>/RUN/STEP/N on this host.
  Log()->info("worker {} registered {} workflow(s); {} node(s), backend {}, spool {}", config_.worker_id,
              reg.definitions.size(), allocation_.nodes.size(),
              config_.launch.backend == Backend::kSlurm ? "slurm" : "local", config_.spool_dir);
  events_->Allocation(placer_->Free(), config_.worker_id);
  // Steps the whole allocation can never take stay queued: say so now.
  unfittable_ = UnfittableSteps(reg.definitions, ComputeClaimCapacity(placer_->Free(), TimeLeftNow(), 0,
                                                                       config_.policy).free);
  for (const std::string& step : unfittable_) Log()->warn("cannot fit this allocation: step {}", step);
  ClaimLoop();
  Drain();
  Log()->info("launcher done; {} lease(s) ended without success", outcomes_failed_);
  return 0;
}

void Launcher::ClaimLoop() {
  idle_since_ = std::chrono::steady_clock::now();
  while (!draining_) {
    auto left = TimeLeftNow();
    if (left && *left <= config_.policy.drain_margin) {
      RequestDrain("walltime margin reached");
      break;
    }
    size_t held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held = held_;
    }
    ClaimCapacity cap = ComputeClaimCapacity(placer_->Free(), left, held, config_.policy);
    if (held > 0) idle_since_ = std::chrono::steady_clock::now();
    // How long an idle launcher may still wait for an offer before it leaves.
    std::optional<Millis> idle_left;
    if (config_.idle_exit.count() > 0 && held == 0) {
      const auto idle_for = std::chrono::steady_clock::now() - idle_since_;
      idle_left = std::chrono::duration_cast<Millis>(config_.idle_exit - idle_for);
    }
    if (idle_left && *idle_left <= Millis(0)) {
      Log()->info("idle for {} s with nothing offered: exiting{}", config_.idle_exit.count(),
                  UnfittableTail(unfittable_));
      break;
    }
    Millis pause = cap.max == 0 ? Millis(1000) : ClaimOnce(cap, held, idle_left);
    if (idle_left) pause = std::min(pause, *idle_left);
    if (pause > Millis(0) && !draining_) {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait_for(lock, pause);
    }
  }
}

Millis Launcher::ClaimOnce(const ClaimCapacity& cap, size_t held, std::optional<Millis> idle_left) {
  ClaimRequest req;
  req.worker_id = config_.worker_id;
  req.max = cap.max;
  // While steps run, a long poll would keep the `free` it was sent with
  // after they end: poll briefly so freed cores are offered soon.
  req.wait_ms = held > 0 ? std::min<int64_t>(config_.wait_ms, kBusyWaitMs) : config_.wait_ms;
  req.run_id = config_.run_id;
  req.free = cap.free;
  // An idle launcher leaves at --idle-exit, also in the middle of retrying
  // an unreachable coordinator.
  std::optional<Millis> budget;
  if (idle_left) budget = std::max(*idle_left, Millis(1000));
  const auto asked_at = std::chrono::steady_clock::now();
  auto claimed = claim_client_->Claim(req, budget);
  if (!claimed.ok()) {
    if (draining_) return Millis(0);
    bool first = false;
    const Millis pause = claim_pacing_.Failed(claimed.status().message(), &first);
    // Said once per distinct failure; the events file has one line for it too.
    Log()->log(first ? spdlog::level::warn : spdlog::level::debug, "{}; claiming again in {} ms",
               claimed.status().message(), pause.count());
    events_->ClaimFailed(claimed.status().message());
    return pause;
  }
  const int offered = static_cast<int>(claimed->response.leases.size());
  events_->Claim(offered, cap.max);
  if (offered > 0) idle_since_ = std::chrono::steady_clock::now();
  const Millis held_for = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - asked_at);
  std::vector<Lease> leases = std::move(claimed->response.leases);
  OrderForPlacement(leases);  // the set fits as a whole only when placed widest first
  for (const Lease& lease : leases) StartLease(lease, claimed->sent_at);
  return claim_pacing_.Answered(offered, held_for, Millis(req.wait_ms));
}

void Launcher::StartLease(const Lease& lease, MonoTime claim_sent_at) {
  const StepCommand* command = commands_->Find(lease.workflow, lease.version, lease.step_id);
  Result<Placement> placement = Status::Unavailable("not placed");
  if (command != nullptr) placement = placer_->Place(ResourcesOf(lease));
  if (command != nullptr && placement.ok()) events_->Place(lease, *placement);
  if (command != nullptr && !placement.ok()) {
    Log()->warn("lease {} (step {}): cannot place it: {}", lease.lease_id, lease.step_id, placement.status().message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++held_;
  }
  // command null: this launcher does not hold the step, or cannot place it.
  const StepCommand* cmd = placement.ok() ? command : nullptr;
  std::optional<uint64_t> placed;
  if (cmd != nullptr) placed = placement->id;
  engine_->Submit(lease, claim_sent_at, cmd, placement.ok() ? *placement : Placement{},
                  [this, lease, placed](const LeaseReport& report) { LeaseEnded(lease, report, placed); });
}

void Launcher::LeaseEnded(const Lease& lease, const LeaseReport& report, std::optional<uint64_t> placement_id) {
  if (placement_id) (void)placer_->Release(*placement_id);
  const std::string outcome = report.end == LeaseEnd::kCompleted   ? "completed"
                              : report.end == LeaseEnd::kFailed    ? "failed"
                              : report.end == LeaseEnd::kAbandoned ? "abandoned"
                                                                   : "unreported";
  const std::string detail = report.fail_class ? std::string(FailClassName(*report.fail_class)) : report.detail;
  events_->Outcome(lease, outcome, detail);
  std::lock_guard<std::mutex> lock(mu_);
  if (report.end != LeaseEnd::kCompleted) ++outcomes_failed_;
  --held_;
  changed_.notify_all();
}

void Launcher::Drain() {
  const auto until = std::chrono::steady_clock::now() + config_.drain_grace;
  {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_until(lock, until, [&] { return held_ == 0; });
    if (held_ > 0) {
      Log()->info("drain grace over: stopping {} running step(s) as preempted", held_);
      engine_->PreemptAll();
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [&] { return held_ == 0; });
}

}  // namespace scimesh::launcher
