// The batch script scimesh-alloc submits: examples/fill.sbatch's launcher
// line, generated from its settings, every word shell-quoted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::alloc {

struct LaunchSettings {
  std::string launcher;      // scimesh-launch's path
  std::string definitions;   // --definitions
  std::string spool;         // --spool
  std::string events_dir;    // --events <events_dir>/scimesh-events-$SLURM_JOB_ID.jsonl
  std::string url;           // exported as SCIMESH_URL
  std::string token_file;    // exported as SCIMESH_TOKEN_FILE (the path, never a token); empty: not exported
  int64_t idle_exit_s = 120;
  int64_t drain_margin_s = 120;
  int64_t drain_grace_s = 60;
  std::vector<std::string> launcher_args;  // --launcher-arg words, appended as given
};

// "#!/bin/bash" ... "exec '<launcher>' --definitions ... --idle-exit N ...".
// A word holding a newline or NUL is refused by the caller's checks before
// (CheckLaunchSettings); here every word is single-quoted.
std::string BatchScript(const LaunchSettings& settings);

// InvalidArgument naming the field when a word holds a newline (\n or \r)
// or NUL, a path is empty or relative (launcher, definitions, spool,
// events_dir, token_file when set), the url is empty, or a time is negative.
Status CheckLaunchSettings(const LaunchSettings& settings);

}  // namespace scimesh::alloc
