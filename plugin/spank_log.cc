// Plugin logging into the SLURM process that hosts it.
#include "plugin/spank_log.h"

#include <cstdio>
#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

#include "protocol/log.h"

// Provided by slurmstepd/srun/sbatch (libslurmfull); weak so that unit tests
// link without SLURM and the plugin never links libslurm itself.
extern "C" {
void slurm_error(const char* format, ...) __attribute__((weak, format(printf, 1, 2)));
void slurm_info(const char* format, ...) __attribute__((weak, format(printf, 1, 2)));
void slurm_debug(const char* format, ...) __attribute__((weak, format(printf, 1, 2)));
}

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
  switch (level) {
    case LogLevel::kError:
      if (slurm_error) return slurm_error("spank_scimesh: %s", text.c_str());
      break;
    case LogLevel::kInfo:
      if (slurm_info) return slurm_info("spank_scimesh: %s", text.c_str());
      break;
    case LogLevel::kDebug:
      if (slurm_debug) return slurm_debug("spank_scimesh: %s", text.c_str());
      return;
  }
  std::fprintf(stderr, "spank_scimesh: %s\n", text.c_str());
}

void RouteLibraryLogs() {
  static std::once_flag once;
  std::call_once(once, [] { log::SetSink(std::make_shared<SlurmSink>()); });
}

}  // namespace scimesh::spank
