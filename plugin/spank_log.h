// Log lines of the plugin, through the host process's SLURM log
// (slurm_error/slurm_info/slurm_debug, prefixed "spank_scimesh: "); on
// stderr where no SLURM process hosts the code (unit tests).
//
// Thread-safe (SLURM's log functions lock). Callers never pass a token or a
// full path of the user's files.
#pragma once

#include <string_view>

namespace scimesh::spank {

enum class LogLevel { kError, kInfo, kDebug };

void Log(LogLevel level, std::string_view line);
inline void LogError(std::string_view line) { Log(LogLevel::kError, line); }
inline void LogInfo(std::string_view line) { Log(LogLevel::kInfo, line); }
inline void LogDebug(std::string_view line) { Log(LogLevel::kDebug, line); }

// Routes the protocol library's spdlog lines (already redacted) to Log().
void RouteLibraryLogs();

}  // namespace scimesh::spank
