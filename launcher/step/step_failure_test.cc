// Failure messages lead with the cause, and a program that cannot start is
// not retried. The step.err texts are what srun (Slurm 22.05), mpirun (Open
// MPI 4.1), scimesh-rank and dash printed on the dev cluster and this host.
#include "launcher/step/step_failure.h"

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

constexpr char kSrunExit7[] =
    "srun: error: n2: task 3: Exited with exit code 7\n"
    "slurmstepd-n1: error: *** STEP 1.0 ON n1 CANCELLED AT 2026-12-01T17:59:14 ***\n"
    "srun: error: n2: task 2: Terminated\n"
    "srun: error: n1: tasks 0-1: Terminated\n";

constexpr char kMpirunExit7[] =
    "--------------------------------------------------------------------------\n"
    "mpirun detected that one or more processes exited with non-zero status, thus causing\n"
    "the job to be terminated. The first process to do so was:\n"
    "\n"
    "  Process name: [[9491,1],3]\n"
    "  Exit code:    7\n"
    "--------------------------------------------------------------------------\n";

constexpr char kMpirunMissing[] =
    "mpirun was unable to find the specified executable file, and therefore\n"
    "did not launch the job.  This error was first reported for process\n"
    "rank 0; it may have occurred for other processes as well.\n\n"
    "Node:       vm\n"
    "Executable: nosuchprog\n";

StepCommand Command(std::string program, bool shell = false) {
  StepCommand c;
  c.argv = {std::move(program)};
  c.shell = shell;
  return c;
}

StepResult Describe(ExitInfo exit, const std::string& err, const StepCommand& cmd, std::string by = "srun") {
  return DescribeFailedLaunch({exit, err, &cmd, std::move(by)});
}

// What the launcher's own spawn says (protocol/util/child_process.cc) for a
// single-rank step it forks: worded like a rank's exec failure.
TEST(StepFailure, ASingleRankThatCannotStartIsNamedLikeARanksExecFailure) {
  auto missing = DescribeNotStarted(Status::NotFound("cannot start 'solvr': No such file or directory"), "n1");
  EXPECT_EQ(missing.error_class(), FailClass::kFatal);
  EXPECT_EQ(missing.message(),
            "the step failed: 'solvr' not found (rank 0 on n1: No such file or directory); a retry cannot help: "
            "check the step's command and its PATH on the nodes");
  auto denied = DescribeNotStarted(Status::PermissionDenied("cannot start 'run.sh': Permission denied"), "n1");
  EXPECT_EQ(denied.error_class(), FailClass::kFatal);
  EXPECT_NE(denied.message().find("'run.sh' cannot execute (rank 0 on n1: Permission denied)"), std::string::npos)
      << denied.message();
  // The node agent's report of the same (its "failed" event) comes as text.
  auto agent = DescribeNotStarted(Status::Io("cannot start 'solvr': No such file or directory"), "n2");
  EXPECT_EQ(agent.message().rfind("the step failed: 'solvr' not found (rank 0 on n2: ", 0), 0u) << agent.message();
  auto busy = DescribeNotStarted(Status::Unavailable("cannot start 'solver': Resource temporarily unavailable"), "n1");
  EXPECT_EQ(busy.error_class(), FailClass::kRetryable) << "no process slots now is not the step's fault";
  auto other = DescribeNotStarted(Status::NotFound("cannot enter the working directory: No such file or directory"), "n1");
  EXPECT_EQ(other.error_class(), FailClass::kFatal);
  EXPECT_EQ(other.message(), "cannot enter the working directory: No such file or directory");
}

TEST(StepFailure, TheFirstFailingRanksExitComesFirstUnderSrun) {
  const StepCommand cmd = Command("/opt/app/bin/solver");
  StepResult r = Describe({false, 143}, kSrunExit7, cmd);
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
  EXPECT_EQ(r.message(),
            "the step failed: task 3 on n2: exit code 7; then srun ended with exit status 143 (a rank was killed by "
            "signal 15 (Terminated)) (see step.err in its attempt directory)");
}

TEST(StepFailure, MpirunsFirstProcessWithItsExitCode) {
  const StepCommand cmd = Command("solver");
  StepResult r = Describe({false, 7}, kMpirunExit7, cmd, "mpirun");
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
  // mpirun passes the rank's code on: nothing to add after the cause.
  EXPECT_EQ(r.message(), "the step failed: rank 3: exit code 7 (see step.err in its attempt directory)");
}

TEST(StepFailure, MpirunsSignalledRankIsTheWholeMessage) {
  const StepCommand cmd = Command("solver");
  StepResult r = Describe(
      {false, 139}, "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 (Segmentation fault).\n",
      cmd, "mpirun");
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
  EXPECT_EQ(r.message(),
            "the step failed: rank 1 on vm: signal 11 (Segmentation fault) (see step.err in its attempt directory)");
}

TEST(StepFailure, ASignalledRankComesBeforeTheRanksStoppedBecauseOfIt) {
  auto f = FirstRankFailure(
      "srun: error: n1: tasks 0-1: Terminated\nsrun: error: n2: task 2: Segmentation fault\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Describe(), "task 2 on n2: Segmentation fault");
  EXPECT_FALSE(f->exit_code.has_value());
  f = FirstRankFailure(
      "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 (Segmentation fault).\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Describe(), "rank 1 on vm: signal 11 (Segmentation fault)");
  EXPECT_FALSE(FirstRankFailure("nothing here").has_value());
}

TEST(StepFailure, OnlyStoppedRanksAreStillNamed) {
  auto f = FirstRankFailure("srun: error: n1: tasks 0-1: Killed\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->Describe(), "tasks 0-1 on n1: Killed");
}

TEST(StepFailure, ASingleProcessKeepsItsExitStatus) {
  const StepCommand cmd = Command("solver");
  EXPECT_EQ(Describe({false, 3}, "", cmd, "solver").message(),
            "the step failed: exit status 3 (see step.err in its attempt directory)");
  StepResult r = Describe({false, 139}, "", cmd, "solver");
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
  EXPECT_EQ(r.message(),
            "the step failed: exit status 139 (a rank was killed by signal 11 (Segmentation fault)) (see step.err in "
            "its attempt directory)");
}

TEST(StepFailure, ExitStatus127IsNotFoundAndFatal) {
  const StepCommand cmd = Command("/home/alice/bin/solvr");
  StepResult r = Describe({false, 127}, "", cmd, "solvr");
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_EQ(r.message(),
            "the step failed: 'solvr' not found (exit status 127); a retry cannot help: check the step's command and "
            "its PATH on the nodes (see step.err in its attempt directory)");
  EXPECT_EQ(r.message().find("/home/alice"), std::string::npos);
}

TEST(StepFailure, ExitStatus126IsCannotExecuteAndFatal) {
  const StepCommand cmd = Command("run.sh");
  StepResult r = Describe({false, 126}, "", cmd, "run.sh");
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'run.sh' cannot execute"), std::string::npos) << r.message();
}

TEST(StepFailure, ScimeshRankNamesTheProgramItCouldNotRun) {
  const StepCommand cmd = Command("solver");
  StepResult r = Describe({false, 127},
                          "scimesh-rank[0]: cannot run '/x/solver': No such file or directory\n"
                          "srun: error: n1: tasks 0-1: Exited with exit code 127\n",
                          cmd);
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_EQ(r.message(),
            "the step failed: 'solver' not found (tasks 0-1 on n1: exit code 127); a retry cannot help: check the "
            "step's command and its PATH on the nodes (see step.err in its attempt directory)");
}

TEST(StepFailure, SrunsExecveErrorIsFatalThoughItsExitCodeIsNot127) {
  const StepCommand cmd = Command("nosuchprog");
  StepResult r = Describe({false, 2},
                          "slurmstepd-n1: error: execve(): nosuchprog: No such file or directory\n"
                          "srun: error: n1: tasks 0-1: Exited with exit code 2\n",
                          cmd);
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'nosuchprog' not found (tasks 0-1 on n1: exit code 2)"), std::string::npos)
      << r.message();
  r = Describe({false, 13},
               "slurmstepd-n1: error: execve(): /work/x/noexec: Permission denied\n"
               "srun: error: n1: tasks 0-1: Exited with exit code 13\n",
               cmd);
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'noexec' cannot execute"), std::string::npos) << r.message();
  // 25.11 prints slurmstepd's line with a timestamp instead of its name.
  r = Describe({false, 2},
               "[2026-12-03T01:10:11.021] error: execve(): /no/such/nosuchprog: No such file or directory\n"
               "srun: error: n1: task 0: Exited with exit code 2\n",
               cmd);
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'nosuchprog' not found (task 0 on n1: exit code 2)"), std::string::npos) << r.message();
}

TEST(StepFailure, MpirunsMissingExecutableIsNotASignal) {
  // mpirun exits 134 (or 132) here: read as a signal, it said "Illegal instruction".
  const StepCommand cmd = Command("nosuchprog");
  StepResult r = Describe({false, 134}, kMpirunMissing, cmd, "mpirun");
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'nosuchprog' not found (exit status 134)"), std::string::npos) << r.message();
}

TEST(StepFailure, MpirunsCouldNotAccessOrExecuteIsToldApartByTheProgramsPath) {
  const std::string err =
      "mpirun was unable to launch the specified application as it could not access\n"
      "or execute an executable:\n\nExecutable: /somewhere/bin/solvr\nNode: vm\n";
  TestDir dir;
  const std::string path = dir / "solvr";
  auto f = FindExecFailure(err, std::nullopt, path);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->not_found);
  EXPECT_EQ(f->program, "solvr");
  TestDir::Write(dir / "solvr", "not a program");  // there, but cannot execute
  f = FindExecFailure(err, std::nullopt, path);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->not_found);
  const StepCommand cmd = Command(path);
  EXPECT_EQ(Describe({false, 132}, err, cmd, "mpirun").message(),
            "the step failed: 'solvr' cannot execute (exit status 132); a retry cannot help: check the step's "
            "command and its PATH on the nodes (see step.err in its attempt directory)");
}

TEST(StepFailure, AShellNamesTheCommandItCouldNotFind) {
  const StepCommand cmd = Command("cd data && solvr --n 4", /*shell=*/true);
  StepResult r = Describe({false, 127}, "sh: 1: solvr: not found\n", cmd, "sh");
  EXPECT_EQ(r.error_class(), FailClass::kFatal);
  EXPECT_NE(r.message().find("'solvr' not found"), std::string::npos) << r.message();
  // Without the shell's line, the command's first word.
  EXPECT_NE(Describe({false, 127}, "", cmd, "sh").message().find("'cd' not found"), std::string::npos);
}

TEST(StepFailure, ANotFoundLineTheStepSurvivedDoesNotMakeItFatal) {
  // The script went on after a missing command and failed later, for another reason.
  const StepCommand cmd = Command("optional-tool; solver", /*shell=*/true);
  StepResult r = Describe({false, 1}, "sh: 1: optional-tool: not found\nsolver: diverged\n", cmd, "sh");
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
  EXPECT_EQ(r.message(), "the step failed: exit status 1 (see step.err in its attempt directory)");
  r = Describe({false, 1}, "scimesh-rank[1]: cannot run 'x': No such file or directory\n", Command("x"), "x");
  EXPECT_EQ(r.error_class(), FailClass::kRetryable);
}

TEST(StepFailure, ProgramNamesFromStepErrAreShortAndPrintable) {
  auto f = FindExecFailure("execve(): /a/" + std::string(200, 'x') + ": No such file or directory\n", 2, "p");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->program, std::string(80, 'x'));
  f = FindExecFailure("execve(): /a/x\x1b[2Jy: Permission denied\n", 13, "p");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->program, "x?[2Jy");
  EXPECT_FALSE(f->not_found);
  EXPECT_FALSE(FindExecFailure("all fine", 1, "p").has_value());
}

}  // namespace
}  // namespace scimesh::launcher
