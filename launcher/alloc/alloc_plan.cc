// scimesh-alloc's decision: cover the uncovered demand with the jobs it has,
// submit for the rest within the limits, cancel the pending jobs nothing needs.
#include "launcher/alloc/alloc_plan.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace scimesh::alloc {
namespace {

// A job (held or planned) and the node-seconds it still has for demand.
struct Cover {
  const OurJob* job = nullptr;  // null: a job this plan submits
  Shape shape;
  double left = 0;  // node-seconds
  bool used = false;
};

// The node-seconds one step of `g` takes on `shape`: the share of the
// allocation's at-once slots it holds, for its walltime.
double StepCost(const Shape& shape, const DemandGroup& g) {
  const int64_t at_once = StepsAtOnce(shape, g.resources);
  return static_cast<double>(shape.nodes) * static_cast<double>(g.walltime_s) / static_cast<double>(at_once);
}

double Budget(const Shape& shape, int64_t margin_s) {
  return static_cast<double>(shape.nodes) * static_cast<double>(std::max<int64_t>(shape.time_s - margin_s, 0));
}

// A held job's shape: the configured shape of its nodes and time limit, else
// one made of them (cores and GPUs as the first shape of those nodes).
Shape ShapeOf(const OurJob& job, const std::vector<Shape>& shapes) {
  for (const auto& s : shapes) {
    if (s.nodes == job.nodes && s.time_s == job.time_limit_s) return s;
  }
  Shape shape{job.nodes, job.time_limit_s, 0, 0};
  for (const auto& s : shapes) {
    if (s.nodes == job.nodes) {
      shape.cores_per_node = s.cores_per_node;
      shape.gpus_per_node = s.gpus_per_node;
      break;
    }
  }
  return shape;
}

// Takes up to `need` steps of `g` from `covers`; returns how many it took.
int64_t Consume(std::vector<Cover>& covers, const DemandGroup& g, int64_t need, int64_t margin_s) {
  int64_t taken = 0;
  for (auto& c : covers) {
    if (taken == need) break;
    if (!WhyNotFits(c.shape, g.resources, g.walltime_s, margin_s).empty()) continue;
    const double cost = StepCost(c.shape, g);
    const auto fit = static_cast<int64_t>(std::floor(c.left / cost + 1e-9));
    const int64_t take = std::min(need - taken, fit);
    if (take <= 0) continue;
    c.left -= static_cast<double>(take) * cost;
    c.used = true;
    taken += take;
  }
  return taken;
}

// The fitting shape that runs `need` steps of `g` in the fewest jobs, then
// the fewest node-seconds, among those `usable` accepts; shapes.size() when
// none does.
template <typename Usable>
size_t BestShape(const std::vector<Shape>& shapes, const DemandGroup& g, int64_t need, int64_t margin_s,
                 Usable usable) {
  size_t best = shapes.size();
  double best_jobs = 0, best_cost = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!usable(shapes[i]) || !WhyNotFits(shapes[i], g.resources, g.walltime_s, margin_s).empty()) continue;
    const double per_job = std::floor(Budget(shapes[i], margin_s) / StepCost(shapes[i], g) + 1e-9);
    const double jobs = std::ceil(static_cast<double>(need) / std::max(per_job, 1.0));
    const double cost = jobs * Budget(shapes[i], margin_s);
    if (best == shapes.size() || jobs < best_jobs || (jobs == best_jobs && cost < best_cost)) {
      best = i, best_jobs = jobs, best_cost = cost;
    }
  }
  return best;
}

struct Tally {
  int64_t jobs = 0, nodes = 0, pending = 0;
};

// Why one more job of `shape` would break a limit; empty when it would not.
std::string Limit(const Tally& t, const Shape& shape, const PlanLimits& limits) {
  if (t.jobs + 1 > limits.max_jobs) return "--max-jobs " + std::to_string(limits.max_jobs) + " reached";
  if (t.nodes + shape.nodes > limits.max_nodes) {
    return "--max-nodes " + std::to_string(limits.max_nodes) + " would be passed";
  }
  if (t.pending + 1 > limits.backlog) return "--backlog " + std::to_string(limits.backlog) + " reached";
  return {};
}

}  // namespace

std::string GroupKey(const DemandGroup& g) { return g.workflow + "/" + g.version + "/" + g.step_id; }

std::string WhyNoShapeFits(const std::vector<Shape>& shapes, const DemandGroup& g, int64_t margin_s) {
  if (shapes.empty()) return "no shape is configured";
  const Shape* largest = &shapes.front();
  for (const auto& s : shapes) {
    if (WhyNotFits(s, g.resources, g.walltime_s, margin_s).empty()) return {};
    if (std::tie(s.nodes, s.time_s) > std::tie(largest->nodes, largest->time_s)) largest = &s;
  }
  return WhyNotFits(*largest, g.resources, g.walltime_s, margin_s);
}

Plan MakePlan(const PlanInput& in) {
  Plan plan;
  const auto& limits = in.limits;
  Tally tally;
  std::vector<Cover> held;  // its jobs: running ones, the least time left first, then pending ones in order
  std::vector<Cover> planned;  // the jobs this plan submits
  for (const auto& job : in.jobs) {
    if (job.pending) continue;
    const Shape shape = ShapeOf(job, in.shapes);
    const int64_t left_s = std::max<int64_t>(job.time_limit_s - job.running_s - limits.margin_s, 0);
    held.push_back({&job, shape, static_cast<double>(shape.nodes) * static_cast<double>(left_s), false});
  }
  std::stable_sort(held.begin(), held.end(), [](const Cover& a, const Cover& b) { return a.left < b.left; });
  for (const auto& job : in.jobs) {
    if (!job.pending) continue;
    const Shape shape = ShapeOf(job, in.shapes);
    held.push_back({&job, shape, Budget(shape, limits.margin_s), false});
  }
  for (const auto& job : in.jobs) {
    tally.jobs += 1;
    tally.nodes += job.nodes;
    tally.pending += job.pending ? 1 : 0;
  }
  // Wide steps first: they need whole shapes; narrow ones fill what is left.
  std::vector<const DemandGroup*> order;
  for (const auto& g : in.demand) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(),
                   [](const DemandGroup* a, const DemandGroup* b) { return a->resources.nodes > b->resources.nodes; });
  for (const DemandGroup* g : order) {
    plan.runnable += g->runnable;
    plan.waiting += g->waiting;
    int64_t need = g->runnable;
    if (need <= 0) continue;
    if (auto why = WhyNoShapeFits(in.shapes, *g, limits.margin_s); !why.empty()) {
      plan.unfittable.push_back({GroupKey(*g), why, g->runnable});
      continue;
    }
    need -= Consume(held, *g, need, limits.margin_s);
    plan.uncovered += need;
    need -= Consume(planned, *g, need, limits.margin_s);
    while (need > 0) {
      const auto within_limits = [&](const Shape& shape) { return Limit(tally, shape, limits).empty(); };
      const size_t best = BestShape(in.shapes, *g, need, limits.margin_s, within_limits);
      if (best == in.shapes.size()) {  // say the limit the best shape of all would pass
        const size_t unlimited = BestShape(in.shapes, *g, need, limits.margin_s, [](const Shape&) { return true; });
        if (plan.held_back.empty()) plan.held_back = Limit(tally, in.shapes[unlimited], limits);
        break;
      }
      const Shape& shape = in.shapes[best];
      plan.submit.push_back({best, GroupKey(*g)});
      tally.jobs += 1, tally.nodes += shape.nodes, tally.pending += 1;
      planned.push_back({nullptr, shape, Budget(shape, limits.margin_s), false});
      need -= Consume(planned, *g, need, limits.margin_s);
    }
  }
  for (const auto& c : held) {
    if (c.job->pending && !c.used) {
      plan.cancel.push_back({c.job->job_id, "no demand left for it"});
    }
  }
  return plan;
}

}  // namespace scimesh::alloc
