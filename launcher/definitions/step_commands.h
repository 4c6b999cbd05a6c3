// StepCommands: the launcher's definitions file -- the workflows it holds (as
// registered with the coordinator) and, for each step, the command that runs
// it. See docs/launcher.md "Definitions file".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// A serial command run once for a step, as one process on its first node in
// the attempt directory: `run.setup` before the launch, `run.finish` after.
struct StepPartCommand {
  std::vector<std::string> argv;             // program and arguments (no shell)
  std::map<std::string, std::string> env;    // on top of the step's environment
  bool shell = false;                        // run argv[0] with /bin/sh -c
};

// How one step is started on its ranks.
struct StepCommand {
  std::vector<std::string> argv;             // program and arguments (no shell)
  std::map<std::string, std::string> env;    // added to the step's environment
  bool shell = false;     // run argv[0] with /bin/sh -c (only when asked)
  bool native = false;    // linked with libscimesh_mpi: no scimesh-rank wrapper
  std::string mpi = "pmix";  // srun --mpi=<mpi> for multi-rank steps ("none": no MPI)
  std::optional<StepPartCommand> setup;   // before the launch; its failure fails the step
  std::optional<StepPartCommand> finish;  // after the launch, whether it succeeded or not
};

// Immutable after parsing; thread-safe to read.
class StepCommands {
 public:
  // Parses the file's JSON: {"workflows":[{workflow, version, steps:[{...,
  // "run":{argv, env, shell, native, mpi, setup, finish}}]}]} (a single
  // workflow object is accepted too). A field the launcher does not know is
  // refused by its path; invalid JSON by line and column. Relative program
  // paths resolve against `base_dir`.
  static Result<StepCommands> Parse(std::string_view json, const std::string& base_dir);
  static Result<StepCommands> Load(const std::string& path);

  const std::vector<WorkflowDefinition>& definitions() const { return definitions_; }

  // The command for a step, or nullptr when this launcher does not hold it
  // (the lease is then failed `unservable`).
  const StepCommand* Find(std::string_view workflow, std::string_view version, std::string_view step) const;

 private:
  std::vector<WorkflowDefinition> definitions_;
  std::map<std::tuple<std::string, std::string, std::string>, StepCommand> commands_;
};

}  // namespace scimesh::launcher
