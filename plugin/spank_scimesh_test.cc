// The real spank_scimesh.so, loaded the way slurmstepd loads it, with the
// spank_* and slurm_* functions it calls provided by this test (a stand-in for
// slurmstepd and slurmctld), declared as the SLURM release the plugin is
// built for declares them. SLURM calls --scimesh-lease's callback twice in
// remote context up to 23.11, and from 24.05 on once or not at all: the value
// used is the one SLURM holds (spank_option_getopt), else the last one given,
// never an accumulation; and the plugin, without url=, still kills the step
// on loss. Each test loads its own copy of the module (its own globals).
#include <dlfcn.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <filesystem>

#include <gtest/gtest.h>

extern "C" {
#include <slurm/spank.h>
}
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurm_version.h>

#include "protocol/attempt/lease_state.h"
#include "protocol/util/host_name.h"
#include "protocol/util/version.h"
#include "protocol/wire/wire_json.h"
#include "tests/support/test_dir.h"
#include "tests/support/test_lease.h"

namespace {

std::mutex g_mu;
std::vector<std::string> g_logs;
std::vector<int> g_kills;
spank_option* g_option = nullptr;
uint32_t g_task_global_id = 0;
std::string g_getopt_value;  // what spank_option_getopt answers; empty: "not given"

void Record(const char* format, va_list ap) {
  char buf[4096];
  std::vsnprintf(buf, sizeof buf, format, ap);
  std::lock_guard l(g_mu);
  g_logs.emplace_back(buf);
}

}  // namespace

// What slurmstepd provides to the plugin (exported from this executable).
extern "C" {
spank_context_t spank_context(void) { return S_CTX_REMOTE; }
const char* spank_strerror(spank_err_t) { return "stub"; }
spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  g_option = opt;
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
spank_err_t spank_option_getopt(spank_t, struct spank_option*, char** value) {
  if (g_getopt_value.empty()) return static_cast<spank_err_t>(ESPANK_ERROR);
  *value = g_getopt_value.data();
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
spank_err_t spank_getenv(spank_t, const char*, char*, int) { return static_cast<spank_err_t>(ESPANK_ENV_NOEXIST); }
spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list ap;
  va_start(ap, item);
  switch (item) {
    case S_JOB_UID: *va_arg(ap, uid_t*) = ::getuid(); break;
    case S_JOB_GID: *va_arg(ap, gid_t*) = ::getgid(); break;
    case S_JOB_ID: *va_arg(ap, uint32_t*) = 7; break;
    case S_JOB_STEPID: *va_arg(ap, uint32_t*) = 0; break;
    case S_JOB_LOCAL_TASK_COUNT: *va_arg(ap, uint32_t*) = 1; break;
    case S_TASK_GLOBAL_ID: *va_arg(ap, uint32_t*) = g_task_global_id; break;
    default: va_end(ap); return static_cast<spank_err_t>(ESPANK_BAD_ARG);
  }
  va_end(ap);
  return static_cast<spank_err_t>(ESPANK_SUCCESS);
}
void slurm_error(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Record(format, ap);
  va_end(ap);
}
void slurm_info(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Record(format, ap);
  va_end(ap);
}
void slurm_debug(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  Record(format, ap);
  va_end(ap);
}
// The stand-in's definition must match the header's declaration: a wrong one
// fails to compile here, as a wrong call fails in plugin/slurm_calls.cc.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
int slurm_kill_job_step(slurm_step_id_t* id, uint16_t signal, uint16_t flags) {
  EXPECT_EQ(id->job_id, 7u);
  EXPECT_EQ(id->step_id, 0u);
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
int slurm_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal, uint16_t flags) {
  EXPECT_EQ(job_id, 7u);
  EXPECT_EQ(step_id, 0u);
#else
int slurm_kill_job_step(uint32_t job_id, uint32_t step_id, uint16_t signal) {
  const uint16_t flags = 0;
  EXPECT_EQ(job_id, 7u);
  EXPECT_EQ(step_id, 0u);
#endif
  EXPECT_EQ(flags, 0) << "no KILL_* flag is meant";
  std::lock_guard l(g_mu);
  g_kills.push_back(signal);
  return 0;
}
}

namespace scimesh {
namespace {

using Hook = int (*)(spank_t, int, char**);

std::string Logs() {
  std::lock_guard l(g_mu);
  std::string all;
  for (const auto& s : g_logs) all += s + "\n";
  return all;
}

size_t Kills() {
  std::lock_guard l(g_mu);
  return g_kills.size();
}

// The module's hooks, as slurmstepd looks them up.
struct Module {
  void* handle = nullptr;
  Hook init = nullptr, user_init = nullptr, post_fork = nullptr, exit_hook = nullptr;
  bool ok() const { return handle && init && user_init && post_fork && exit_hook; }
};

// A copy of the module of its own: dlopen of another file is another
// instance, with fresh globals, as each slurmstepd has.
Module LoadModule(const TestDir& dir) {
  std::filesystem::copy_file(SCIMESH_SPANK_MODULE, dir / "spank_scimesh_copy.so");
  Module m;
  m.handle = ::dlopen((dir / "spank_scimesh_copy.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(m.handle, nullptr) << ::dlerror();
  if (m.handle == nullptr) return m;
  m.init = reinterpret_cast<Hook>(::dlsym(m.handle, "slurm_spank_init"));
  m.user_init = reinterpret_cast<Hook>(::dlsym(m.handle, "slurm_spank_user_init"));
  m.post_fork = reinterpret_cast<Hook>(::dlsym(m.handle, "slurm_spank_task_post_fork"));
  m.exit_hook = reinterpret_cast<Hook>(::dlsym(m.handle, "slurm_spank_exit"));
  return m;
}

void Reset() {
  std::lock_guard l(g_mu);
  g_logs.clear();
  g_kills.clear();
  g_option = nullptr;
  g_getopt_value.clear();
}

void WriteState(const TestDir& dir, LeaseHold hold, std::optional<CancelReason> reason, int64_t seq) {
  LeaseState s;
  s.lease_id = "l_0c8e51d2a4b94f17";
  s.attempt = 1;
  s.holder = LeaseHolder::kRank0;
  s.host = HostName();
  s.pid = 1;
  s.state = hold;
  s.reason = reason;
  s.seq = seq;
  s.deadline_mono_ms = int64_t{1} << 50;
  ASSERT_TRUE(WriteLeaseState(dir / "lease.state", s).ok());
}

void WriteAttemptDir(const TestDir& dir) {
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
  TestDir::Write(dir / "lease.json", SerializeLease(TestLease(), std::string_view("http://127.0.0.1:1")));
  ASSERT_EQ(::chmod((dir / "lease.json").c_str(), 0600), 0);
  WriteState(dir, LeaseHold::kHeld, std::nullopt, 1);
}

// Each test: a fresh stand-in, an attempt directory whose lease is held, and
// a fresh copy of the module.
class SpankModule : public ::testing::Test {
 protected:
  void SetUp() override {
    Reset();
    WriteAttemptDir(dir);
    m = LoadModule(dir);
    ASSERT_TRUE(m.ok());
  }
  TestDir dir;
  Module m;
};

TEST_F(SpankModule, TheOptionCallbackRunTwiceInRemoteContextKeepsTheLastValue) {

  // No url=: the plugin must still watch and kill, and never open a connection.
  char a0[] = "grace_s=1", a1[] = "poll_ms=20";
  char* args[] = {a0, a1};
  ASSERT_EQ(m.init(nullptr, 2, args), 0);
  ASSERT_NE(g_option, nullptr);
  ASSERT_NE(g_option->cb, nullptr);
  // slurmstepd delivers the option again (remote=1), possibly more than once.
  EXPECT_EQ(g_option->cb(g_option->val, "relative/stale-value", 1), 0);  // never fails a remote hook
  EXPECT_EQ(g_option->cb(g_option->val, dir.path().c_str(), 1), 0);
  EXPECT_EQ(g_option->cb(g_option->val, dir.path().c_str(), 1), 0);
  ASSERT_EQ(m.user_init(nullptr, 0, nullptr), 0);
  ASSERT_EQ(m.post_fork(nullptr, 0, nullptr), 0);  // task 0, the only local task: the watcher starts
  EXPECT_NE(Logs().find("watching lease l_0c8e51d2a4b94f17 attempt 1 for step 7.0"), std::string::npos) << Logs();
  EXPECT_EQ(Logs().find("unwatched"), std::string::npos) << Logs();

  WriteState(dir, LeaseHold::kLost, CancelReason::kFenced, 2);
  for (int i = 0; i < 1000 && Kills() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(Kills(), 1u) << Logs();
  EXPECT_EQ(m.exit_hook(nullptr, 0, nullptr), 0);  // the step ended: SIGKILL at once, watcher joined
  std::lock_guard l(g_mu);
  EXPECT_EQ(g_kills, (std::vector<int>{SIGTERM, SIGKILL}));
}

// slurmstepd's log names the plugin's version, commit and SLURM release once,
// as it loads, on the line that says how it is configured.
TEST_F(SpankModule, InitLogsTheVersionCommitAndSlurmReleaseOnce) {
  char a0[] = "grace_s=1", a1[] = "poll_ms=20";
  char* args[] = {a0, a1};
  ASSERT_EQ(m.init(nullptr, 2, args), 0);
  g_getopt_value = dir.path();
  ASSERT_EQ(m.user_init(nullptr, 0, nullptr), 0);
  ASSERT_EQ(m.post_fork(nullptr, 0, nullptr), 0);
  EXPECT_EQ(m.exit_hook(nullptr, 0, nullptr), 0);
  const std::string logs = Logs();
  const std::string line = "spank_scimesh: " + VersionLine("spank_scimesh") + ", configured: ";
  size_t count = 0;
  for (size_t at = logs.find(line); at != std::string::npos; at = logs.find(line, at + 1)) ++count;
  EXPECT_EQ(count, 1u) << logs;
  EXPECT_NE(logs.find("SLURM " + std::string(ThisBuild().slurm) + ")"), std::string::npos) << logs;
}

// 24.05+: a remote option callback may never run when the option came in the
// launch message; the lease still reaches the watcher through getopt.
TEST_F(SpankModule, WithoutARemoteCallbackTheLeaseComesFromSlurmsOptionValue) {
  char a0[] = "grace_s=1", a1[] = "poll_ms=20";
  char* args[] = {a0, a1};
  ASSERT_EQ(m.init(nullptr, 2, args), 0);
  g_getopt_value = dir.path();  // no callback: SLURM only holds the value
  ASSERT_EQ(m.user_init(nullptr, 0, nullptr), 0);
  ASSERT_EQ(m.post_fork(nullptr, 0, nullptr), 0);
  EXPECT_NE(Logs().find("watching lease l_0c8e51d2a4b94f17 attempt 1 for step 7.0"), std::string::npos) << Logs();
  WriteState(dir, LeaseHold::kLost, CancelReason::kFenced, 2);
  for (int i = 0; i < 1000 && Kills() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(Kills(), 1u) << Logs();
  EXPECT_EQ(m.exit_hook(nullptr, 0, nullptr), 0);
}

// A bad plugstack line never fails a hook in slurmstepd (23.11+ would fail
// the step; a failing init drains the node), and on 25.05+ a failing init of
// a `required` plugin would fail the job, not the node.
TEST_F(SpankModule, RemoteHooksNeverFailAndInitFailureNeverDrainsTheNode) {
  char a0[] = "no_such_key=1";
  char* args[] = {a0};
  EXPECT_EQ(m.init(nullptr, 1, args), 0);
  EXPECT_NE(Logs().find("invalid plugstack arguments"), std::string::npos) << Logs();
  g_getopt_value = dir.path();
  EXPECT_EQ(m.user_init(nullptr, 0, nullptr), 0);
  EXPECT_NE(Logs().find("step runs unwatched"), std::string::npos) << Logs();
  EXPECT_EQ(m.exit_hook(nullptr, 0, nullptr), 0);
  auto* mode = static_cast<int*>(::dlsym(m.handle, "slurm_spank_init_failure_mode"));
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
  ASSERT_NE(mode, nullptr) << "slurm_spank_init_failure_mode is not exported";
  EXPECT_EQ(*mode, ESPANK_JOB_FAILURE);
#else
  EXPECT_EQ(mode, nullptr) << "this release does not read slurm_spank_init_failure_mode";
#endif
}

}  // namespace
}  // namespace scimesh
