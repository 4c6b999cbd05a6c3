// SpawnChild on both of its paths (posix_spawn, and fork for what needs code
// before the exec): what the child inherits, how failures read, and waits.
#include "protocol/util/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "protocol/util/unique_fd.h"
#include "tests/support/test_dir.h"

namespace scimesh {
namespace {

enum class Path { kPosixSpawn, kFork };

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

std::string FileText(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

// Runs `spec` with stdout to a pipe; its output once it has ended.
std::string Output(ChildSpec spec, ChildExit* exit = nullptr) {
  int p[2];
  EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  spec.stdout_fd = w.get();
  auto pid = SpawnChild(spec);
  EXPECT_TRUE(pid.ok()) << pid.status().ToString();
  if (!pid.ok()) return "";
  w.Reset();
  std::string out = ReadAll(r.get());
  auto e = WaitChild(*pid);
  EXPECT_TRUE(e.has_value());
  if (exit != nullptr && e) *exit = *e;
  return out;
}

class ChildProcessTest : public ::testing::TestWithParam<Path> {
 protected:
  ChildSpec Spec(std::vector<std::string> argv) {
    ChildSpec spec;
    spec.argv = std::move(argv);
    if (GetParam() == Path::kFork) spec.before_exec = [](pid_t) {};  // forces the fork path
    return spec;
  }

  TestDir dir_;
};

// The attack: the launcher's keep-alive sockets and files reached every step.
TEST_P(ChildProcessTest, OnlyStdioIsInherited) {
  UniqueFd file(::open("/dev/null", O_RDONLY));  // not close-on-exec, as libcurl's sockets were
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  // ls, a process of its own, lists the shell's descriptors.
  EXPECT_EQ(Output(Spec({"/bin/sh", "-c", "ls /proc/$$/fd; true"})), "0\n1\n2\n");
}

// scimesh-rank passes the MPI runtime's descriptors on (srun's PMI_FD).
TEST_P(ChildProcessTest, ATransparentWrapperPassesDescriptorsOn) {
  UniqueFd inherited(::open("/dev/null", O_RDONLY));
  ChildSpec spec = Spec({"/bin/sh", "-c", "test -e /proc/$$/fd/" + std::to_string(inherited.get()) + " && echo kept"});
  spec.pass_descriptors = true;
  EXPECT_EQ(Output(spec), "kept\n");
}

TEST_P(ChildProcessTest, AMissingProgramIsNamedWithoutItsPath) {
  auto pid = SpawnChild(Spec({dir_.path() + "/no-such-solver"}));
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), Code::kNotFound);
  EXPECT_EQ(pid.status().message(), "cannot start 'no-such-solver': No such file or directory");
}

TEST_P(ChildProcessTest, AProgramThatMayNotRunIsPermissionDenied) {
  const std::string path = dir_.path() + "/not-executable";
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), 0644);
  auto pid = SpawnChild(Spec({path}));
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(pid.status().message(), "cannot start 'not-executable': Permission denied");
}

TEST_P(ChildProcessTest, AMissingWorkingDirectoryIsNamedAsSuch) {
  ChildSpec spec = Spec({"/bin/true"});
  spec.cwd = dir_.path() + "/gone";
  auto pid = SpawnChild(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().message(), "cannot enter the working directory: No such file or directory");
}

TEST_P(ChildProcessTest, EnvironmentIsSetAndUnsetAndTheWorkingDirectoryEntered) {
  ::setenv("SCIMESH_CHILD_TEST_DROP", "secret", 1);
  ::setenv("SCIMESH_CHILD_TEST_KEEP", "kept", 1);
  ChildSpec spec = Spec({"/bin/sh", "-c", "echo \"$SCIMESH_CHILD_TEST_DROP|$SCIMESH_CHILD_TEST_KEEP|$SET|$(pwd)\""});
  spec.env = {{"SET", "value"}};
  spec.unset = [](std::string_view name) { return name == "SCIMESH_CHILD_TEST_DROP"; };
  spec.cwd = dir_.path();
  EXPECT_EQ(Output(spec), "|kept|value|" + dir_.path() + "\n");
  ::unsetenv("SCIMESH_CHILD_TEST_DROP");
  ::unsetenv("SCIMESH_CHILD_TEST_KEEP");
}

// This process's ignored and blocked signals are not the program's.
TEST_P(ChildProcessTest, TheProgramStartsWithDefaultSignalsNoneBlocked) {
  struct sigaction ignore {}, old_usr1 {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR1, &ignore, &old_usr1);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  const std::string out = Output(Spec({"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"}));
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  ::sigaction(SIGUSR1, &old_usr1, nullptr);
  // The masks of signals 1-31 (grep reads its own: a shell's changes as it forks). glibc's posix_spawn leaves its own two
  // (32, 33) ignored, which no program but glibc's own runtime uses.
  auto mask = [&out](const std::string& name) {
    const size_t at = out.find(name + ":\t");
    return at == std::string::npos ? ~0ULL : std::stoull(out.substr(at + name.size() + 2, 16), nullptr, 16) & 0x7fffffffULL;
  };
  EXPECT_EQ(mask("SigBlk"), 0U) << out;
  EXPECT_EQ(mask("SigIgn"), 0U) << out;
}

// A source among 0-2 is not overwritten by an earlier dup2: this process's
// stdout given as the child's stderr stays itself.
TEST_P(ChildProcessTest, ThisProcesssStdoutCanBeTheChildsStderr) {
  const std::string mine = dir_.path() + "/mine", theirs = dir_.path() + "/theirs";
  UniqueFd mine_fd(::open(mine.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  UniqueFd theirs_fd(::open(theirs.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  ::fflush(stdout);
  UniqueFd saved(::dup(STDOUT_FILENO));
  ::dup2(mine_fd.get(), STDOUT_FILENO);
  ChildSpec spec = Spec({"/bin/sh", "-c", "echo out; echo err >&2"});
  spec.stdout_fd = theirs_fd.get();
  spec.stderr_fd = STDOUT_FILENO;
  auto pid = SpawnChild(spec);
  ::dup2(saved.get(), STDOUT_FILENO);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  ASSERT_TRUE(WaitChild(*pid).has_value());
  EXPECT_EQ(FileText(theirs), "out\n");
  EXPECT_EQ(FileText(mine), "err\n");
}

TEST_P(ChildProcessTest, TheProgramRunsOnTheGivenCpu) {
  cpu_set_t allowed, cpus;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;  // the first this process may use
  CPU_ZERO(&cpus);
  CPU_SET(cpu, &cpus);
  ChildSpec spec = Spec({"/bin/sh", "-c", "grep Cpus_allowed_list /proc/$$/status"});
  spec.cpus = cpus;
  EXPECT_EQ(Output(spec), "Cpus_allowed_list:\t" + std::to_string(cpu) + "\n");
}

TEST_P(ChildProcessTest, ItsOwnGroupIsKilledWholeAndTheExitDescribed) {
  ChildSpec spec = Spec({"/bin/sh", "-c", "sleep 30 & wait"});
  spec.own_group = true;
  auto pid = SpawnChild(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_FALSE(PollChild(*pid).has_value());
  ::kill(-*pid, SIGKILL);
  auto e = WaitChild(*pid);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->Describe(), "killed by signal 9 (Killed)");
  EXPECT_EQ(e->ShellStatus(), 137);
  EXPECT_FALSE(WaitChild(*pid).has_value()) << "reaped once";
  ChildExit three;
  Output(Spec({"/bin/sh", "-c", "exit 3"}), &three);
  EXPECT_EQ(three.Describe(), "exit status 3");
}

INSTANTIATE_TEST_SUITE_P(Paths, ChildProcessTest, ::testing::Values(Path::kPosixSpawn, Path::kFork),
                         [](const ::testing::TestParamInfo<Path>& param) {
                           return param.param == Path::kFork ? "Fork" : "PosixSpawn";
                         });

// The fork path's own parts: before_exec runs while the child waits, and a
// lower RLIMIT_NOFILE is set before the exec.
TEST(ChildProcessFork, BeforeExecRunsBeforeTheProgram) {
  TestDir dir;
  const std::string marker = dir.path() + "/marker";
  pid_t seen = -1;
  ChildSpec spec;
  spec.argv = {"/bin/cat", marker};
  spec.before_exec = [&](pid_t pid) {
    seen = pid;
    std::ofstream(marker) << "written before the exec\n";
  };
  EXPECT_EQ(Output(spec), "written before the exec\n");
  EXPECT_GT(seen, 0) << "before_exec was given the child's pid";
}

TEST(ChildProcessFork, ALowerOpenFileLimitIsTheChilds) {
  rlimit nofile{64, 64};
  rlimit mine{};
  ::getrlimit(RLIMIT_NOFILE, &mine);
  if (mine.rlim_max < 64) GTEST_SKIP() << "this process may open fewer than 64 files";
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "ulimit -n"};
  spec.nofile = &nofile;
  EXPECT_EQ(Output(spec), "64\n");
}

}  // namespace
}  // namespace scimesh
