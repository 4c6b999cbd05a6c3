// Plugin logging into the SLURM process that hosts it.
#include "plugin/spank_log.h"

#include <cstdio>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "plugin/slurm_calls.h"
#include "protocol/util/log.h"

namespace scimesh::spank {
namespace {

class SlurmSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string line = "protocol: " + std::string(msg.payload.data(), msg.payload.size());
    Log(msg.level >= spdlog::level::err ? LogLevel::kError
        : msg.level >= spdlog::level::info ? LogLevel::kInfo
                                            : LogLevel::kDebug,
        line);
  }
  void flush_() override {}
};

}  // namespace

void Log(LogLevel level, std::string_view line) {
  // Fields in these lines come from files users write: no control character
  // reaches slurmd's log (a forged line, a terminal escape).
  const std::string text = log::EscapeForLog(line);
  if (WriteSlurmLog(level, text) || level == LogLevel::kDebug) return;
  std::fprintf(stderr, "spank_scimesh: %s\n", text.c_str());
}

void RouteLibraryLogs() {
  static std::once_flag once;
  std::call_once(once, [] { log::SetSink(std::make_shared<SlurmSink>()); });
}

}  // namespace scimesh::spank
