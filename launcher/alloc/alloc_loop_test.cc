// scimesh-alloc's tick against a fake SLURM: submissions, adoption,
// cancellation, refusals paused on, and a silent coordinator.
#include "launcher/alloc/alloc_loop.h"

#include <gtest/gtest.h>

namespace scimesh::alloc {
namespace {

class FakeSlurm : public SlurmJobs {
 public:
  Result<std::vector<OurJob>> List(const std::string& tag) override {
    tags.push_back(tag);
    if (!list_error.empty()) return Status(Code::kUnavailable, list_error);
    return jobs;
  }
  Result<std::string> Submit(const JobRequest& request) override {
    submits += 1;
    if (!refusal.empty()) return Status(Code::kUnavailable, refusal);
    const std::string id = std::to_string(next_id++);
    jobs.push_back({id, true, request.shape.nodes, request.shape.time_s, 0});
    return id;
  }
  Status Test(const JobRequest&) override { return Status::Ok(); }
  Status Cancel(const std::string& id) override {
    cancels.push_back(id);
    std::erase_if(jobs, [&](const OurJob& j) { return j.job_id == id; });
    return Status::Ok();
  }
  std::vector<OurJob> jobs;
  std::vector<std::string> tags, cancels;
  std::string refusal, list_error;
  int submits = 0, next_id = 100;
};

DemandGroup Steps(int64_t runnable) {
  DemandGroup g;
  g.workflow = "mesh";
  g.version = "1";
  g.step_id = "solve";
  g.walltime_s = 60;
  g.runnable = runnable;
  g.claimable_by_live_workers = 0;
  return g;
}

struct Rig {
  FakeSlurm slurm;
  ManualClock clock;
  Result<QueuedDemand> demand = QueuedDemand{};
  LoopSettings settings;
  Rig() {
    settings.shapes = {Shape{1, 600, 2, 0}};  // 16 steps of 60 s each
    settings.limits = {.max_jobs = 3, .max_nodes = 3, .backlog = 3, .margin_s = 120};
    settings.job.tag = "scimesh-alloc-mesh";
    settings.failure_limit = 2;
    settings.pause_s = 100;
  }
  void Queue(int64_t runnable) { demand = QueuedDemand{{Steps(runnable)}, false, ""}; }
  AllocLoop Loop() {
    return AllocLoop(settings, [this] { return demand; }, slurm, clock);
  }
};

TEST(AllocLoop, SubmitsForTheDemandAndAdoptsWhatItHasOnTheNextTick) {
  Rig rig;
  rig.Queue(30);
  auto loop = rig.Loop();
  EXPECT_EQ(loop.Tick(),
            "demand runnable=30 uncovered=30 waiting=0 unfittable=0; jobs pending=0 running=0 nodes=0"
            "; submitted job 100 [1 node x 00:10:00 x 2 cores for mesh/1/solve]"
            "; submitted job 101 [1 node x 00:10:00 x 2 cores for mesh/1/solve]");
  EXPECT_EQ(rig.slurm.tags.front(), "scimesh-alloc-mesh");
  loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 2);  // the pending two cover it
  // A restarted scimesh-alloc sees the same jobs: nothing more submitted.
  auto again = rig.Loop();
  again.Tick();
  EXPECT_EQ(rig.slurm.submits, 2);
  EXPECT_EQ(again.state().jobs.size(), 2u);
}

TEST(AllocLoop, CancelsPendingJobsWhenTheQueueEmpties) {
  Rig rig;
  rig.Queue(30);
  auto loop = rig.Loop();
  loop.Tick();
  rig.slurm.jobs[0].pending = false;  // 100 started
  rig.Queue(0);
  EXPECT_NE(loop.Tick().find("; cancelled 101 (no demand left for them)"), std::string::npos) << loop.state().line;
  EXPECT_EQ(rig.slurm.cancels, std::vector<std::string>{"101"});
}

TEST(AllocLoop, RefusalsPauseAfterTheLimitAndNeverLoop) {
  Rig rig;
  rig.Queue(30);
  rig.slurm.refusal = "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified";
  auto loop = rig.Loop();
  loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 1);  // one try per tick
  EXPECT_EQ(loop.state().last_refusal, rig.slurm.refusal);
  const std::string line = loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 2);
  EXPECT_NE(line.find("; paused 100 s more after 2 sbatch refusals in a row"), std::string::npos) << line;
  for (int i = 0; i < 5; ++i) loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 2);  // paused
  rig.clock.Advance(std::chrono::seconds(101));
  loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 3);  // tries again, refused: the next pause doubles
  EXPECT_NE(loop.state().line.find("paused 200 s more"), std::string::npos) << loop.state().line;
  rig.clock.Advance(std::chrono::seconds(201));
  rig.slurm.refusal.clear();
  loop.Tick();
  EXPECT_EQ(loop.state().refusals_in_row, 0);
  EXPECT_EQ(loop.state().submitted.size(), 2u);
  EXPECT_FALSE(loop.state().paused_until.has_value());
}

TEST(AllocLoop, ASilentCoordinatorOrSqueueChangesNothing) {
  Rig rig;
  rig.Queue(30);
  auto loop = rig.Loop();
  loop.Tick();
  rig.demand = Status(Code::kUnavailable, "cannot connect to the coordinator");
  EXPECT_NE(loop.Tick().find("; coordinator: cannot connect to the coordinator"), std::string::npos);
  EXPECT_TRUE(rig.slurm.cancels.empty());
  EXPECT_EQ(rig.slurm.submits, 2);
  rig.Queue(0);
  rig.slurm.list_error = "squeue: slurm_load_jobs error: Unable to contact slurm controller";
  EXPECT_NE(loop.Tick().find("; squeue: squeue: slurm_load_jobs error"), std::string::npos);
  EXPECT_TRUE(rig.slurm.cancels.empty());  // never cancels on what it could not see
}

TEST(AllocLoop, DryRunDecidesAndDoesNothing) {
  Rig rig;
  rig.settings.dry_run = true;
  rig.Queue(30);
  rig.slurm.jobs = {{"7", true, 1, 600, 0}};
  auto loop = rig.Loop();
  const std::string line = loop.Tick();
  EXPECT_EQ(rig.slurm.submits, 0);
  EXPECT_NE(line.find("; would submit [1 node x 00:10:00 x 2 cores for mesh/1/solve]"), std::string::npos) << line;
  rig.Queue(0);
  EXPECT_NE(loop.Tick().find("; would cancel 1"), std::string::npos);
  EXPECT_TRUE(rig.slurm.cancels.empty());
}

TEST(AllocLoop, NeverPassesMaxJobsWhateverTheDemand) {
  Rig rig;
  rig.Queue(1000);
  auto loop = rig.Loop();
  for (int i = 0; i < 5; ++i) {
    loop.Tick();
    for (auto& j : rig.slurm.jobs) j.pending = false, j.running_s = 600;
  }
  EXPECT_EQ(rig.slurm.submits, 3);
  EXPECT_NE(loop.state().line.find("held back: --max-jobs 3 reached"), std::string::npos) << loop.state().line;
}

}  // namespace
}  // namespace scimesh::alloc
