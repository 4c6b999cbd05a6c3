// StepWatch: a launched step's processes while they run, on the event loop.
// It decides when the launcher stops them and why (StopCause): the lease
// lost (the heartbeat keeper cancelled the token, or rank 0 wrote `lost` to
// lease.state), the walltime up, the allocation draining, rank 0 silent for
// a lease TTL. It follows rank 0's take-over of heartbeating (lease.state
// holder rank0: this worker's heartbeats pause) and stops the processes
// like a signal from the terminal would: SIGTERM to the step's process
// group, SIGKILL after the grace. It does not wait for the exit itself: the
// owner feeds it OnExit() (from a pidfd or a node agent's report).
//
// Thread-safety: the loop's thread only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>

#include "launcher/event_loop.h"
#include "launcher/step/step_part.h"
#include "launcher/step/step_process.h"
#include "protocol/runtime/step_context.h"

namespace scimesh::launcher {

struct WatchParams {
  StepContext* ctx = nullptr;  // the lease's context (heartbeat pause, lost news); outlives the watch
  int dir_fd = -1;             // the attempt directory, where lease.state lives
  EventLoop::Clock::time_point walltime_end;
  std::chrono::milliseconds kill_grace{10000};     // SIGTERM -> SIGKILL
  std::chrono::milliseconds silence_limit{30000};  // rank 0 holding and writing nothing this long: silent
  // lease.state is read when inotify says it changed; with a poll interval
  // (network filesystems, or no inotify) it is read that often too.
  std::optional<std::chrono::milliseconds> state_poll;
};

struct WatchEnd {
  StopCause cause = StopCause::kNone;
  ExitInfo exit;
  bool rank0_held = false;  // rank 0 took heartbeating over at some point
};

class StepWatch {
 public:
  using Signal = std::function<void(int sig)>;  // to the step's whole process group
  using Done = std::function<void(const WatchEnd&)>;

  StepWatch(EventLoop& loop, WatchParams params, Signal signal, Done done);
  ~StepWatch();  // cancels its timers
  StepWatch(const StepWatch&) = delete;
  StepWatch& operator=(const StepWatch&) = delete;

  // Arms the walltime and the state poll; reads lease.state once.
  void Begin();
  // The step's process (srun, mpirun, the program) ended: Done runs now.
  void OnExit(const ExitInfo& exit);
  // lease.state may have changed.
  void OnStateChanged();
  // The token was cancelled (the lease is lost).
  void OnCancelled() { StopFor(StopCause::kLeaseLost); }
  // The allocation is ending: stop now, fail it preempted.
  void Preempt() { StopFor(StopCause::kPreempted); }

 private:
  void StopFor(StopCause cause);
  void Terminate();
  void ArmSilence();
  void SchedulePoll();
  void Disarm(uint64_t& timer);

  EventLoop& loop_;
  const WatchParams p_;
  const Signal signal_;
  const Done done_;
  StopCause cause_ = StopCause::kNone;
  bool rank0_holds_ = false;
  bool ended_ = false;
  int64_t last_seq_ = -1;
  uint64_t walltime_timer_ = 0, poll_timer_ = 0, silence_timer_ = 0, stop_timer_ = 0;
};

}  // namespace scimesh::launcher
