// scimesh-alloc's options: flags over a config file over defaults -> AllocOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/alloc/alloc_plan.h"
#include "launcher/alloc/alloc_script.h"
#include "launcher/alloc/alloc_shape.h"
#include "protocol/util/status.h"

namespace scimesh::alloc {

struct AllocOptions {
  std::string url;                     // --url, else $SCIMESH_URL, else http://127.0.0.1:8470
  bool allow_insecure_http = false;    // --allow-insecure-http
  std::vector<std::string> workflows;  // --workflow (at least one)
  std::vector<Shape> shapes;           // --shape (at least one)
  std::string name;                    // --name, else the workflows joined by '+'
  std::string partition, account, qos;
  std::vector<std::string> sbatch_args;  // --sbatch-arg
  PlanLimits limits;                     // --max-jobs, --max-nodes, --backlog, --drain-margin
  int64_t interval_s = 30;               // --interval
  int64_t failure_limit = 3;             // --failure-limit
  int64_t pause_s = 300;                 // --pause
  LaunchSettings launch;                 // --definitions, --spool, --idle-exit, --drain-grace, --launcher, --launcher-arg
  std::string state_dir;                 // --state-dir, else $HOME/.scimesh/alloc/<name>
  bool dry_run = false;                  // --dry-run
  bool once = false;                     // --once
  bool verbose = false;                  // -v
  bool help = false;                     // -h: nothing after it was read
  bool version = false;                  // --version
};

// Reads argv[1..argc) (and the --config file it names, whose lines are
// "option value" with the long option's name: command-line flags given
// after it win, list options add up). InvalidArgument with the message to
// print after "scimesh-alloc: " for an unknown option, a bad value, a
// missing --workflow, --shape or --definitions, or an unsafe --name.
// Paths (definitions, spool, state dir, launcher) come back absolute.
Result<AllocOptions> ParseAllocOptions(int argc, char** argv);

// The tag of the jobs: "scimesh-alloc-<name>".
std::string JobTag(const AllocOptions& options);

const char* AllocUsage();

}  // namespace scimesh::alloc
