// The batch script scimesh-alloc submits: the launcher's command line, every
// word single-quoted, the token file's path exported (never a token).
#include "launcher/alloc/alloc_script.h"

#include <string_view>

namespace scimesh::alloc {
namespace {

// 'word', with each ' as '\'' : the shell reads it back as the same bytes.
std::string Quote(std::string_view word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

Status CheckWord(std::string_view field, std::string_view word) {
  if (word.find_first_of(std::string_view("\n\r\0", 3)) != std::string_view::npos) {
    return Status::InvalidField(std::string(field), "holds a newline or NUL");
  }
  return Status::Ok();
}

Status CheckPath(std::string_view field, std::string_view path) {
  SCIMESH_RETURN_IF_ERROR(CheckWord(field, path));
  if (path.empty()) return Status::InvalidField(std::string(field), "empty");
  if (path[0] != '/') return Status::InvalidField(std::string(field), "'" + std::string(path) + "' is not absolute");
  return Status::Ok();
}

}  // namespace

std::string BatchScript(const LaunchSettings& s) {
  std::string script =
      "#!/bin/bash\n"
      "# Submitted by scimesh-alloc: one allocation that fills itself with steps\n"
      "# leased from the coordinator (examples/fill.sbatch is the template).\n"
      "export SCIMESH_URL=" + Quote(s.url) + "\n";
  if (!s.token_file.empty()) script += "export SCIMESH_TOKEN_FILE=" + Quote(s.token_file) + "\n";
  script += "# exec: the batch shell's SIGUSR1 goes straight to the launcher.\n";
  script += "exec " + Quote(s.launcher) + " --definitions " + Quote(s.definitions) + " --spool " + Quote(s.spool) +
            " --events " + Quote(s.events_dir + "/scimesh-events-") + "\"$SLURM_JOB_ID\"" + Quote(".jsonl") +
            " --drain-margin " + std::to_string(s.drain_margin_s) + " --drain-grace " +
            std::to_string(s.drain_grace_s) + " --idle-exit " + std::to_string(s.idle_exit_s);
  for (const auto& arg : s.launcher_args) script += " " + Quote(arg);
  return script + "\n";
}

Status CheckLaunchSettings(const LaunchSettings& s) {
  SCIMESH_RETURN_IF_ERROR(CheckPath("launcher", s.launcher));
  SCIMESH_RETURN_IF_ERROR(CheckPath("definitions", s.definitions));
  SCIMESH_RETURN_IF_ERROR(CheckPath("spool", s.spool));
  SCIMESH_RETURN_IF_ERROR(CheckPath("events_dir", s.events_dir));
  if (!s.token_file.empty()) SCIMESH_RETURN_IF_ERROR(CheckPath("token_file", s.token_file));
  SCIMESH_RETURN_IF_ERROR(CheckWord("url", s.url));
  if (s.url.empty()) return Status::InvalidField("url", "empty");
  for (const auto& arg : s.launcher_args) SCIMESH_RETURN_IF_ERROR(CheckWord("launcher_args", arg));
  if (s.idle_exit_s < 0 || s.drain_margin_s < 0 || s.drain_grace_s < 0) {
    return Status::InvalidArgument("idle_exit_s, drain_margin_s and drain_grace_s must not be negative");
  }
  return Status::Ok();
}

}  // namespace scimesh::alloc
