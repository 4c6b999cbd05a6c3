// scimesh-alloc's tick: demand and jobs in, submissions and cancellations
// out, within the plan; sbatch refusals counted and paused on.
#include "launcher/alloc/alloc_loop.h"

#include <algorithm>

#include "protocol/util/log.h"

namespace scimesh::alloc {
namespace {

auto Log() { return log::For("alloc"); }

std::string Joined(const std::vector<std::string>& ids) {
  std::string text;
  for (const auto& id : ids) text += (text.empty() ? "" : " ") + id;
  return text;
}

}  // namespace

AllocLoop::AllocLoop(LoopSettings settings, DemandSource demand, SlurmJobs& slurm, const Clock& clock)
    : settings_(std::move(settings)), demand_(std::move(demand)), slurm_(slurm), clock_(clock) {}

const std::string& AllocLoop::Tick() {
  state_.submitted.clear();
  state_.cancelled.clear();
  state_.trouble.clear();
  state_.plan = Plan{};
  auto demand = demand_();
  if (!demand.ok()) {
    state_.trouble = "coordinator: " + demand.status().message();
  } else {
    state_.demand = std::move(*demand);
    auto jobs = slurm_.List(settings_.job.tag);
    if (!jobs.ok()) {
      state_.trouble = "squeue: " + jobs.status().message();
    } else {
      state_.jobs = std::move(*jobs);
      Act();
    }
  }
  if (!state_.trouble.empty() && state_.trouble != last_trouble_) {
    Log()->warn("{}; nothing submitted or cancelled until it answers", state_.trouble);
  }
  last_trouble_ = state_.trouble;
  state_.line = Line();
  return state_.line;
}

void AllocLoop::Act() {
  const PlanInput input{state_.demand->groups, state_.jobs, settings_.shapes, settings_.limits};
  state_.plan = MakePlan(input);
  for (const auto& u : state_.plan.unfittable) {
    if (reported_unfittable_.insert(u.key).second) {
      Log()->warn("step {} ({} runnable) fits no --shape: {}; nothing is submitted for it", u.key, u.runnable,
                  u.reason);
    }
  }
  for (const auto& c : state_.plan.cancel) {
    if (settings_.dry_run) continue;
    if (Status s = slurm_.Cancel(c.job_id); !s.ok()) {
      Log()->warn("scancel of pending job {} failed: {}", c.job_id, s.message());
    } else {
      state_.cancelled.push_back(c.job_id);
    }
  }
  for (const auto& sub : state_.plan.submit) {
    if (settings_.dry_run || Paused()) break;
    JobRequest request = settings_.job;
    request.shape = settings_.shapes[sub.shape];
    auto id = slurm_.Submit(request);
    if (!id.ok()) {
      Refused(id.status().message());
      break;  // one refusal per tick: never a submission loop
    }
    state_.submitted.push_back(*id);
    state_.refusals_in_row = 0;
    state_.pauses = 0;
    state_.paused_until.reset();
  }
}

bool AllocLoop::Paused() const { return state_.paused_until && clock_.Now() < *state_.paused_until; }

void AllocLoop::Refused(const std::string& words) {
  state_.refusals_in_row += 1;
  state_.last_refusal = words;
  Log()->error("sbatch refused ({} in a row): {}", state_.refusals_in_row, words);
  if (state_.refusals_in_row < settings_.failure_limit) return;
  const int64_t pause = settings_.pause_s << std::min<int64_t>(state_.pauses, 4);
  state_.pauses += 1;
  state_.paused_until = clock_.Now() + std::chrono::seconds(pause);
  Log()->error("paused for {} s after {} refusals in a row: check the options sbatch gets (scimesh-alloc --dry-run)",
               pause, state_.refusals_in_row);
}

std::string AllocLoop::Line() const {
  const Plan& p = state_.plan;
  int64_t pending = 0, running = 0, nodes = 0;
  for (const auto& j : state_.jobs) {
    (j.pending ? pending : running) += 1;
    nodes += j.nodes;
  }
  std::string line = "demand runnable=" + std::to_string(p.runnable) + " uncovered=" + std::to_string(p.uncovered) +
                     " waiting=" + std::to_string(p.waiting) + " unfittable=" + std::to_string(p.unfittable.size()) +
                     "; jobs pending=" + std::to_string(pending) + " running=" + std::to_string(running) +
                     " nodes=" + std::to_string(nodes);
  if (!state_.trouble.empty()) return line + "; " + state_.trouble;
  if (settings_.dry_run && !p.submit.empty()) {
    line += "; would submit";
    for (const auto& s : p.submit) line += " [" + ShapeText(settings_.shapes[s.shape]) + " for " + s.for_key + "]";
  }
  for (size_t i = 0; i < state_.submitted.size(); ++i) {  // submitted[i] is the plan's submit[i]
    line += "; submitted job " + state_.submitted[i] + " [" + ShapeText(settings_.shapes[p.submit[i].shape]) +
            " for " + p.submit[i].for_key + "]";
  }
  if (!state_.cancelled.empty()) line += "; cancelled " + Joined(state_.cancelled) + " (no demand left for them)";
  if (settings_.dry_run && !p.cancel.empty()) line += "; would cancel " + std::to_string(p.cancel.size());
  if (!p.held_back.empty()) line += "; held back: " + p.held_back;
  if (Paused()) {
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(*state_.paused_until - clock_.Now()).count();
    line += "; paused " + std::to_string(left) + " s more after " + std::to_string(state_.refusals_in_row) +
            " sbatch refusals in a row";
  }
  return line;
}

}  // namespace scimesh::alloc
