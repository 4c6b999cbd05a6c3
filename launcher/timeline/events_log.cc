// Writing the launcher's events file.
#include "launcher/timeline/events_log.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>

#include "protocol/util/json_io.h"

namespace scimesh::launcher {
namespace {

std::string IntList(const std::vector<int>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

std::string LeaseFields(const Lease& l) {
  return "\"lease_id\":" + JsonString(l.lease_id) + ",\"run_id\":" + JsonString(l.run_id) +
         ",\"workflow\":" + JsonString(l.workflow) + ",\"step_id\":" + JsonString(l.step_id) +
         ",\"attempt\":" + std::to_string(l.attempt);
}

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// How long repeats of one condition are held back at most.
constexpr double kRepeatsFlushS = 60;

}  // namespace

std::string JsonString(std::string_view text) {
  // A detail can carry a server's bytes: the file stays valid JSON lines.
  std::string valid;
  if (!IsWellFormedUtf8(text)) {
    for (char c : text) valid += static_cast<unsigned char>(c) < 0x80 ? c : '?';
    text = valid;
  }
  std::string_view s = text;
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          (void)std::snprintf(buf, sizeof buf, "\\u%04x", c);  // always 6 characters
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

Result<std::unique_ptr<EventsLog>> EventsLog::Open(const std::string& path) {
  if (path.empty()) return std::unique_ptr<EventsLog>(new EventsLog(nullptr));
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (f == nullptr) return Status::Io("cannot open the events file for appending");
  return std::unique_ptr<EventsLog>(new EventsLog(f));
}

EventsLog::~EventsLog() {
  // Every line was flushed, and checked, when written: closing loses nothing
  // but the repeats still counted.
  std::lock_guard<std::mutex> lock(mu_);
  FlushRepeatsLocked();
  if (file_ != nullptr) (void)std::fclose(file_);
}

void EventsLog::Write(std::string_view event, const std::string& fields) {
  if (file_ == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  WriteLocked(Now(), event, fields);
}

void EventsLog::WriteCondition(std::string_view event, const std::string& fields, bool repeatable) {
  if (file_ == nullptr) return;
  const double t = Now();
  std::lock_guard<std::mutex> lock(mu_);
  if (repeatable && event == condition_event_ && fields == condition_fields_) {
    ++repeats_;
    last_repeat_t_ = t;
    if (t - condition_written_t_ >= kRepeatsFlushS) FlushRepeatsLocked();
    return;
  }
  FlushRepeatsLocked();
  WriteLocked(t, event, fields);
  condition_event_ = repeatable ? std::string(event) : std::string();
  condition_fields_ = repeatable ? fields : std::string();
  condition_written_t_ = t;
}

void EventsLog::FlushRepeatsLocked() {
  if (repeats_ == 0) return;
  WriteLocked(last_repeat_t_, condition_event_, condition_fields_ + ",\"repeated\":" + std::to_string(repeats_));
  repeats_ = 0;
  condition_written_t_ = last_repeat_t_;
}

void EventsLog::WriteLocked(double t, std::string_view event, const std::string& fields) {
  if (file_ == nullptr) return;
  const bool written = std::fprintf(file_, "{\"t\":%.6f,\"event\":\"%.*s\"%s%s}\n", t, static_cast<int>(event.size()),
                                   event.data(), fields.empty() ? "" : ",", fields.c_str()) >= 0;
  const bool flushed = std::fflush(file_) == 0;
  if (!written || !flushed)
    spdlog::warn("launcher: cannot write the '{}' event to the events file: {}", event, std::strerror(errno));
}

void EventsLog::Allocation(const std::vector<NodeFree>& nodes, std::string_view worker_id) {
  std::string list = "[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    list += std::string(i ? "," : "") + "{\"name\":" + JsonString(nodes[i].name) +
            ",\"cpus\":" + std::to_string(nodes[i].cpus) + ",\"gpus\":" + std::to_string(nodes[i].gpus) + "}";
  }
  Write("allocation", "\"worker_id\":" + JsonString(worker_id) + ",\"nodes\":" + list + "]");
}

void EventsLog::Claim(int offered, int max) {
  WriteCondition("claim", "\"offered\":" + std::to_string(offered) + ",\"max\":" + std::to_string(max), offered == 0);
}

void EventsLog::ClaimFailed(std::string_view reason) {
  WriteCondition("claim_failed", "\"error\":" + JsonString(reason), true);
}

void EventsLog::Place(const Lease& lease, const Placement& p) {
  std::string nodes = "[";
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    nodes += std::string(i ? "," : "") + "{\"name\":" + JsonString(p.nodes[i].name) +
             ",\"ranks\":" + std::to_string(p.nodes[i].ranks) + ",\"cpus\":" + IntList(p.nodes[i].cpus) +
             ",\"gpus\":" + IntList(p.nodes[i].gpus) + "}";
  }
  Write("place", LeaseFields(lease) + ",\"nodes\":" + nodes + "]");
}

void EventsLog::Start(const Lease& lease) { Write("start", LeaseFields(lease)); }

void EventsLog::End(const Lease& lease, std::string_view how) {
  Write("end", LeaseFields(lease) + ",\"exit\":" + JsonString(how));
}

void EventsLog::Outcome(const Lease& lease, std::string_view outcome, std::string_view detail) {
  Write("outcome", LeaseFields(lease) + ",\"outcome\":" + JsonString(outcome) + ",\"detail\":" + JsonString(detail));
}

}  // namespace scimesh::launcher
