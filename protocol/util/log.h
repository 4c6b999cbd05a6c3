// Logging for every scimesh component: spdlog loggers named by component,
// all writing through one sink that redacts secrets.
//
// Every line passes Redact() before any sink sees it: registered secrets
// (tokens, registered when loaded) and anything after "Bearer " become
// "[redacted]". So a token cannot reach a log even if a peer echoes it in an
// error message. All functions are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>
#include <spdlog/sinks/sink.h>

namespace scimesh::log {

// The logger for `component` ("client", "worker", "heartbeat", ...),
// created on first use and shared afterwards. Never null.
std::shared_ptr<spdlog::logger> For(std::string_view component);

// Replaces where redacted lines go (default: stderr). Tests install a
// capturing sink here. `sink` must be thread-safe (an spdlog *_mt sink).
void SetSink(spdlog::sink_ptr sink);

// The level of every scimesh logger (default: info).
void SetLevel(spdlog::level::level_enum level);

// Adds a secret to redact from every line from now on. Empty is ignored.
void AddSecret(std::string secret);

// `line` with registered secrets and bearer credentials replaced by "[redacted]".
std::string Redact(std::string_view line);

// `text` with every control character (below 0x20, and 0x7f) written as an
// escape ("\n", "\r", "\t", "\x1b"), so a field someone else wrote (a
// step's message, a host name, a lease.state reason) cannot forge log lines
// or drive a terminal. Every line through this
// module's sink is escaped so; other sinks (SLURM's log, the coordinator's)
// call it on the fields they print.
std::string EscapeForLog(std::string_view text);

}  // namespace scimesh::log
