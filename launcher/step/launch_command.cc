// Building srun / mpirun / direct command lines for a placed step.
#include "launcher/step/launch_command.h"

#include "launcher/step/step_environment.h"
#include "protocol/attempt/rank_environment.h"

namespace scimesh::launcher {
namespace {

// The program as each rank runs it: through scimesh-rank unless the program
// speaks the protocol itself (native), and through a shell only when asked.
std::vector<std::string> RankArgv(const LaunchContext& ctx, const StepCommand& cmd, bool wrapped) {
  std::vector<std::string> out;
  if (wrapped) out = {ctx.rank_wrapper, "--"};
  if (cmd.shell) {
    out.insert(out.end(), {"/bin/sh", "-c", cmd.argv.front()});
  } else {
    out.insert(out.end(), cmd.argv.begin(), cmd.argv.end());
  }
  return out;
}

// One rank forked on its host: what scimesh-rank would have done for it.
LaunchPlan SingleRank(const LaunchContext& ctx, const StepCommand& cmd, const RankPlacement& rank,
                      LaunchPlan plan) {
  plan.argv = RankArgv(ctx, cmd, false);
  if (cmd.native) return plan;  // it takes the lease over itself, and binds itself
  if (ctx.bind) plan.pin = rank.cpus;
  plan.keyless = true;
  for (const RankVariable& v : RankEnvironment(rank.cpus, rank.gpus)) {
    const bool users = plan.env.count(v.name) > 0 || (ctx.inherits && ctx.inherits(v.name));
    if (v.overrides || !users) plan.env[v.name] = v.value;
  }
  return plan;
}

std::string NodeList(const Placement& p) {
  std::string out;
  for (const auto& n : p.nodes) out += (out.empty() ? "" : ",") + n.name;
  return out;
}

}  // namespace

Result<LaunchPlan> BuildLaunch(const LaunchContext& ctx, const StepCommand& cmd, const Lease& lease,
                               const Placement& placement) {
  if (cmd.argv.empty()) return Status::InvalidArgument("the step's command is empty");
  if (placement.nodes.empty() || placement.ranks.empty()) return Status::InvalidArgument("empty placement");
  LaunchPlan plan;
  plan.env = StepEnvironment(ctx.env, cmd, lease, ctx.attempt_dir);

  const auto ranks = std::to_string(placement.ranks.size());
  const auto& r = lease.resources;
  const bool multi_rank = placement.ranks.size() > 1;
  std::vector<std::string> rank_argv = RankArgv(ctx, cmd, !cmd.native);

  if (ctx.backend == Backend::kSlurm) {
    // --exact: the step gets exactly what it asks for, so steps share the
    // allocation; the launcher's own accounting keeps every srun placeable
    // at once, so no srun waits for "step creation temporarily disabled".
    plan.argv = {ctx.srun,
                 "--exact",
                 "--nodes=" + std::to_string(placement.nodes.size()),
                 "--nodelist=" + NodeList(placement),
                 "--ntasks=" + ranks,
                 "--ntasks-per-node=" + std::to_string(r.ranks_per_node),
                 "--cpus-per-task=" + std::to_string(r.cpus_per_rank),
                 "--kill-on-bad-exit=1",
                 "--job-name=" + lease.step_id,
                 "--quiet"};
    if (r.gpus_per_rank > 0) plan.argv.push_back("--gpus-per-task=" + std::to_string(r.gpus_per_rank));
    // Even one rank of an MPI program needs the PMI plugin under srun.
    if (cmd.mpi != "none") plan.argv.push_back("--mpi=" + cmd.mpi);
    if (ctx.spank_option) plan.argv.push_back("--scimesh-lease=" + ctx.attempt_dir);
    plan.argv.insert(plan.argv.end(), rank_argv.begin(), rank_argv.end());
    return plan;
  }

  if (!multi_rank) return SingleRank(ctx, cmd, placement.ranks.front(), std::move(plan));
  // One host: the ranks pin themselves from placement.json, so mpirun must
  // not bind them; the environment is forwarded explicitly with -x.
  plan.argv = {ctx.mpirun, "-np", ranks, "--oversubscribe", "--bind-to", "none"};
  for (const auto& [k, v] : plan.env) {
    plan.argv.push_back("-x");
    plan.argv.push_back(k);
  }
  plan.argv.insert(plan.argv.end(), rank_argv.begin(), rank_argv.end());
  return plan;
}

}  // namespace scimesh::launcher
