// The hub's thread: timers for every lease, and their beats on one multi handle.
#include "protocol/runtime/heartbeat_hub.h"

#include <sys/prctl.h>

#include <atomic>
#include <deque>
#include <queue>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "protocol/client/coordinator_call.h"
#include "protocol/runtime/heartbeat_hub_core.h"
#include "protocol/runtime/heartbeat_hub_lease.h"
#include "protocol/util/log.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("heartbeat"); }

// Beats in flight at once (so kept-alive connections at most). More wait in
// the hub's own first-come-first-served queue: a try's timeout starts when it
// is sent, and no lease waits behind leases that beat after it.
constexpr size_t kMaxConnections = 8;
// The longest sleep with nothing due (a wake-up an hour costs nothing).
constexpr Millis kLongestSleep = std::chrono::hours(1);
// How long the answers to a batch of tries are left unread: those that come
// within it are read in one round. A few ms is nothing to a beat (deadlines
// are seconds away and have their own timers; a try's timeout runs from its
// send) and about what a loopback or LAN coordinator takes to answer a batch.
// It bounds the hub at 8 answers per nap (2,000 beats/s) when answers come
// faster than that.
constexpr Millis kAnswerNap{4};

using LeasePtr = std::shared_ptr<HubLease>;

}  // namespace

class HeartbeatHub::Runner {
 public:
  Runner(ClientOptions options, std::shared_ptr<HubCore> core)
      : options_(std::move(options)), clock_(ClockOr(options_.clock)), session_(SessionOptions(options_)),
        core_(std::move(core)), rng_(std::random_device{}()) {}
  ~Runner() {
    for (CURL* e : idle_easy_) curl_easy_cleanup(e);
    curl_multi_cleanup(core_->multi);
  }

  // The thread: until the hub ends.
  void Run();
  Counts counts() const { return Counts{wakeups_.load(), beats_.load(), beat_rounds_.load()}; }

 private:
  struct Timer {
    MonoTime at;
    HubLease* lease;
    uint64_t id;
    bool operator>(const Timer& o) const { return at > o.at; }
  };

  bool Step();  // one round of work and sleep; false once the hub ends
  // Until the next timer, libcurl's next timeout, or a Poke(). Right after a
  // batch was sent, a nap with the batch's sockets unwatched.
  void Sleep();
  // The lease's next move at `now` (lease.mu held, `lease` kept alive by the caller).
  void Service(const LeasePtr& lease, MonoTime now);
  void BeginBeat(HubLease& l, MonoTime now);
  // Queues the try behind every lease already waiting; StartQueued sends.
  void StartTry(HubLease& l, MonoTime now);
  void StartQueued(MonoTime now);  // the queue's head onto freed connections
  void Send(HubLease& l, MonoTime now);
  void TryDone(HubLease& l, CURLcode code, MonoTime now);
  void EndBeat(HubLease& l, const Result<HttpResponse>& r);
  void Abandon(HubLease& l);  // a try in flight is dropped
  void Arm(HubLease& l, MonoTime at);
  void Locked(HubLease* key, MonoTime now, const CURLcode* done);

  const ClientOptions options_;
  const Clock& clock_;  // of every lease's deadline and cadence
  const HttpSessionOptions session_;
  const std::shared_ptr<HubCore> core_;
  std::unordered_map<HubLease*, LeasePtr> leases_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t next_timer_ = 0;
  std::vector<CURL*> idle_easy_;
  size_t in_flight_ = 0;
  std::deque<HubLease*> waiting_;  // kQueued leases, first come first
  std::mt19937_64 rng_;
  bool sent_ = false;   // tries were handed to libcurl since the last nap
  bool began_ = false;  // this round began a beat
  std::atomic<int64_t> wakeups_{0};
  std::atomic<int64_t> beats_{0};
  std::atomic<int64_t> beat_rounds_{0};
};

void HeartbeatHub::Runner::Run() {
  ::prctl(PR_SET_NAME, "scimesh-hub", 0, 0, 0);  // for top -H and perf
  try {
    while (Step()) {
    }
  } catch (const std::exception& e) {
    // A thread entry point: nothing may escape. Without beats every lease
    // will expire; say so now rather than leave the bodies running blind.
    Log()->error("heartbeat hub stopped by an unexpected error: {}", e.what());
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->running = false;
    }
    for (auto& [key, lease] : leases_) {
      std::lock_guard<std::mutex> lock(lease->mu);
      lease->st.MarkLost(CancelReason::kExpired);
    }
  }
  for (auto& [key, lease] : leases_) {
    std::lock_guard<std::mutex> lock(lease->mu);
    Abandon(*lease);
  }
  leases_.clear();
}

bool HeartbeatHub::Runner::Step() {
  std::vector<LeasePtr> changed;
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    if (!core_->running) return false;
    changed.swap(core_->changed);
  }
  MonoTime now = clock_.Now();
  for (LeasePtr& lease : changed) {
    leases_.emplace(lease.get(), lease);
    Locked(lease.get(), now, nullptr);
  }

  int running = 0;
  curl_multi_perform(core_->multi, &running);
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(core_->multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    HubLease* key = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &key);
    CURLcode code = msg->data.result;
    Locked(key, clock_.Now(), &code);
  }

  now = clock_.Now();
  while (!timers_.empty() && timers_.top().at <= now) {
    const Timer t = timers_.top();
    timers_.pop();
    auto it = leases_.find(t.lease);
    if (it == leases_.end() || it->second->timer != t.id) continue;  // stale
    it->second->timer = 0;
    Locked(t.lease, now, nullptr);
  }
  StartQueued(now);
  if (std::exchange(began_, false)) ++beat_rounds_;
  Sleep();
  return true;
}

void HeartbeatHub::Runner::Sleep() {
  Millis sleep = kLongestSleep;
  if (!timers_.empty()) {
    sleep = std::min(sleep, std::chrono::ceil<Millis>(timers_.top().at - clock_.Now()));
  }
  sleep = std::max(Millis(0), sleep);
  long curl_ms = -1;  // libcurl's next timeout; 0: a handle was just added, to be sent now
  curl_multi_timeout(core_->multi, &curl_ms);
  if (curl_ms == 0 || sleep == Millis(0)) return;
  ++wakeups_;
  // A batch just went out: let its answers gather rather than wake for each.
  // Once per batch, so a hung transfer is never polled. Queued beats wait
  // the nap too, and then get the freed connections in their order
  // (StartQueued): the nap delays them, it never reorders them.
  if (std::exchange(sent_, false) && in_flight_ > 0) {
    if (curl_ms > 0) sleep = std::min(sleep, Millis(curl_ms));
    std::unique_lock<std::mutex> lock(core_->mu);
    core_->napping = true;
    core_->woken.wait_for(lock, std::min(sleep, kAnswerNap),
                          [&] { return !core_->running || !core_->changed.empty(); });
    core_->napping = false;
    return;
  }
  // Also wakes for libcurl's own timeouts and sockets, and for Poke().
  curl_multi_poll(core_->multi, nullptr, 0, static_cast<int>(sleep.count()), nullptr);
}

void HeartbeatHub::Runner::Locked(HubLease* key, MonoTime now, const CURLcode* done) {
  auto it = leases_.find(key);
  if (it == leases_.end()) return;
  const LeasePtr lease = it->second;  // Service may erase the table's copy
  std::lock_guard<std::mutex> lock(lease->mu);
  if (done != nullptr) TryDone(*lease, *done, now);
  Service(lease, now);
}

void HeartbeatHub::Runner::StartQueued(MonoTime now) {
  while (in_flight_ < kMaxConnections && !waiting_.empty()) {
    HubLease* key = waiting_.front();
    waiting_.pop_front();
    auto it = leases_.find(key);
    if (it == leases_.end()) continue;
    const LeasePtr lease = it->second;
    std::lock_guard<std::mutex> lock(lease->mu);
    if (lease->phase != HubLease::Phase::kQueued || lease->st.stop) continue;  // stale entry
    Send(*lease, now);
    Service(lease, now);
  }
}

void HeartbeatHub::Runner::Service(const LeasePtr& lease, MonoTime now) {
  HubLease& l = *lease;
  HeartbeatState& st = l.st;
  for (;;) {
    if (st.stop || st.finished) {
      Abandon(l);
      leases_.erase(&l);
      return;
    }
    switch (l.phase) {
      case HubLease::Phase::kIdle: {
        if (st.paused) return;  // Resume() pokes
        // On the shared grid: leases due close together beat in one wake-up.
        const MonoTime next = NextBeatOnGrid(st.last_sent, st.config.interval, st.deadline);
        if (now < next) return Arm(l, next);
        if (st.Yield()) continue;
        if (st.deadline.PassedAt(now)) {
          st.MarkLost(CancelReason::kExpired);
          continue;
        }
        BeginBeat(l, now);
        continue;
      }
      case HubLease::Phase::kQueued:
        if (!l.deadline.PassedAt(now)) return Arm(l, l.deadline.at());
        EndBeat(l, Status::Timeout(l.name + ": the lease deadline passed"));
        continue;
      case HubLease::Phase::kInFlight:
        // The hub's own timer, not the transfer, ends a beat at its deadline.
        if (!l.deadline.PassedAt(now)) return Arm(l, l.deadline.at());
        Abandon(l);
        EndBeat(l, Status::Timeout(l.name + ": the lease deadline passed"));
        continue;
      case HubLease::Phase::kBackoff:
        if (l.deadline.PassedAt(now)) {
          EndBeat(l, Status::Timeout(l.name + ": the lease deadline passed"));
          continue;
        }
        if (now < l.retry_at) return Arm(l, std::min(l.retry_at, l.deadline.at()));
        StartTry(l, now);
        continue;
    }
  }
}

void HeartbeatHub::Runner::BeginBeat(HubLease& l, MonoTime now) {
  const LeaseCall& call = l.st.config.call;
  std::optional<std::string> progress = l.st.TakeProgress();
  if (l.name.empty()) {
    l.name = LeaseCallName("heartbeat", call);
    l.request = ExtendRequest(options_, "heartbeat", call, progress);
  } else if (progress || l.progress_in_body) {
    l.request.body = ExtendBody(call, progress);
  }
  l.progress_in_body = progress.has_value();
  l.deadline = l.st.deadline;
  l.tries = 0;
  ++beats_;
  began_ = true;
  StartTry(l, now);
}

void HeartbeatHub::Runner::StartTry(HubLease& l, MonoTime now) {
  // Straight to a connection only when no one waits for one: a lease whose
  // beat was just answered is often due again at once (the coordinator is
  // slower than its interval), and must not take the connection it freed
  // from the leases queued before it.
  if (in_flight_ < kMaxConnections && waiting_.empty()) return Send(l, now);
  l.phase = HubLease::Phase::kQueued;
  waiting_.push_back(&l);
}

void HeartbeatHub::Runner::Send(HubLease& l, MonoTime now) {
  ++l.tries;
  const Millis left = l.deadline.RemainingAt(now);
  if (left <= Millis(0)) return EndBeat(l, Status::Timeout(l.name + ": the lease deadline passed"));
  l.request.timeout = std::min(options_.call_timeout, left);
  CURL* e = nullptr;
  if (!idle_easy_.empty()) {
    e = idle_easy_.back();
    idle_easy_.pop_back();
    curl_easy_reset(e);
  } else if ((e = curl_easy_init()) == nullptr) {
    return EndBeat(l, Status::Unavailable(l.name + ": curl_easy_init failed"));
  }
  l.exchange = std::make_unique<HttpExchange>(e, session_, l.request, nullptr);
  curl_easy_setopt(e, CURLOPT_PRIVATE, &l);
  // One request per kept-alive connection, sent at once (no Nagle delay).
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
  l.easy = e;
  if (Status s = l.exchange->Prepare(); !s.ok()) {
    Abandon(l);
    return EndBeat(l, s);
  }
  curl_multi_add_handle(core_->multi, e);
  sent_ = true;
  ++in_flight_;
  l.phase = HubLease::Phase::kInFlight;
}

void HeartbeatHub::Runner::TryDone(HubLease& l, CURLcode code, MonoTime now) {
  if (l.phase != HubLease::Phase::kInFlight || l.exchange == nullptr) return;
  Result<HttpResponse> r = l.exchange->Finish(code);
  Abandon(l);
  if (l.st.stop) return;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  TryVerdict v = JudgeTry(l.name, std::move(r), BackoffDelay(options_.backoff, l.tries, unit(rng_)));
  if (v.result) return EndBeat(l, *v.result);
  if (now + v.wait >= l.deadline.at()) return EndBeat(l, GaveUp(v.failure, l.tries));
  Log()->warn("{}; retry {} in {} ms", v.failure.message(), l.tries, v.wait.count());
  l.phase = HubLease::Phase::kBackoff;
  l.retry_at = now + v.wait;
}

void HeartbeatHub::Runner::EndBeat(HubLease& l, const Result<HttpResponse>& r) {
  l.phase = HubLease::Phase::kIdle;
  l.st.BeatAnswered(ExtensionAnswer(l.name, r));
}

void HeartbeatHub::Runner::Abandon(HubLease& l) {
  if (l.easy != nullptr) {
    if (l.phase == HubLease::Phase::kInFlight) --in_flight_;
    curl_multi_remove_handle(core_->multi, l.easy);
    l.exchange.reset();
    idle_easy_.push_back(l.easy);
    l.easy = nullptr;
  }
  if (l.phase == HubLease::Phase::kInFlight || l.phase == HubLease::Phase::kQueued) {
    l.phase = HubLease::Phase::kIdle;
  }
}

void HeartbeatHub::Runner::Arm(HubLease& l, MonoTime at) {
  l.timer = ++next_timer_;
  timers_.push(Timer{at, &l, l.timer});
}

HeartbeatHub::HeartbeatHub(const Clock& clock, std::shared_ptr<HubCore> core, std::unique_ptr<Runner> runner)
    : clock_(clock), core_(std::move(core)), runner_(std::move(runner)) {
  // A clock that jumps (a test's ManualClock) wakes the thread to look again.
  watch_ = clock_.Watch([core = core_] {
    std::lock_guard<std::mutex> lock(core->mu);
    if (core->running) core->Wake();
  });
}

Result<std::unique_ptr<HeartbeatHub>> HeartbeatHub::Create(ClientOptions options) {
  SCIMESH_RETURN_IF_ERROR(CheckCoordinatorUrl(options).status());
  CurlGlobalInit();
  auto core = std::make_shared<HubCore>();
  core->multi = curl_multi_init();
  if (core->multi == nullptr) return Status::Internal("curl_multi_init failed");
  curl_multi_setopt(core->multi, CURLMOPT_MAXCONNECTS, static_cast<long>(kMaxConnections));
  const Clock& clock = ClockOr(options.clock);
  auto runner = std::make_unique<Runner>(std::move(options), core);
  std::unique_ptr<HeartbeatHub> hub(new HeartbeatHub(clock, core, std::move(runner)));
  try {
    hub->thread_ = std::thread([h = hub.get()] { h->runner_->Run(); });
  } catch (const std::exception& e) {
    return Status::Internal(std::string("cannot start the heartbeat hub's thread: ") + e.what());
  }
  return hub;
}

HeartbeatHub::~HeartbeatHub() {
  clock_.Unwatch(watch_);
  {
    std::lock_guard<std::mutex> lock(core_->mu);
    core_->running = false;
    core_->Wake();
  }
  if (thread_.joinable()) thread_.join();
  runner_.reset();  // frees the multi handle
  std::lock_guard<std::mutex> lock(core_->mu);
  core_->multi = nullptr;
}

HeartbeatHub::Counts HeartbeatHub::counts() const { return runner_->counts(); }

std::unique_ptr<HeartbeatControl> HeartbeatHub::Add(HeartbeatConfig config,
                                                    std::shared_ptr<CancellationToken> token) {
  return std::make_unique<HubHandle>(std::make_shared<HubLease>(clock_, std::move(config), std::move(token)), core_);
}

}  // namespace scimesh
