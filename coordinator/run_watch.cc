// run watch: the poll loop, what is new in each poll, and unreachability.
#include "coordinator/run_watch.h"

#include <chrono>
#include <map>
#include <thread>
#include <utility>

#include "coordinator/run_view_text.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {
namespace {

// What has been printed already.
struct Printed {
  int64_t seq = 0;                                               // the last journal event
  std::map<std::pair<std::string, int64_t>, std::string> progress;  // by (step, attempt)
  std::map<std::string, std::string> unfittable;                 // by step: its reason
};

std::string NowText() {
  const auto ms = std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch());
  return FormatWireTime(ms.count());
}

bool Transient(const Status& s) { return s.code() == Code::kUnavailable || s.code() == Code::kTimeout; }

// Progress of the attempts still under way, and steps no worker can fit,
// when they differ from what was printed. Ended attempts are left to the
// journal, whose events carry their last progress.
void PrintNews(const RunView& run, Printed& printed, std::ostream& out) {
  for (const StepView& s : run.steps) {
    for (const AttemptView& a : s.attempts) {
      const bool open = a.status == "leased" || a.status == "running" || a.status == "orphaned";
      if (!open || a.progress_json == "null") continue;
      std::string& last = printed.progress[{s.step_id, a.attempt}];
      if (last == a.progress_json) continue;
      last = a.progress_json;
      PrintProgress(NowText(), s.step_id, a.attempt, a.progress_json, out);
    }
    if (!s.unfittable) {
      printed.unfittable.erase(s.step_id);  // said again if it becomes unfittable again
    } else if (printed.unfittable[s.step_id] != s.unfittable->reason) {
      printed.unfittable[s.step_id] = s.unfittable->reason;
      PrintUnfittable(NowText(), s.step_id, s.unfittable->reason, out);
    }
  }
}

// One poll: the journal's new events, then (while the run runs) the run's
// progress and unfittable steps. The run's end state once it ended, else "".
Result<std::string> PollOnce(Client& client, const std::string& run_id, Printed& printed, std::ostream& out) {
  SCIMESH_ASSIGN_OR_RETURN(Journal journal, client.RunJournal(run_id));
  std::string end;
  for (const auto& e : journal.events) {
    if (e.seq > printed.seq) {
      PrintJournalEvent(e, out);
      printed.seq = e.seq;
    }
    if (!RunEndOf(e).empty()) end = std::string(RunEndOf(e));
  }
  if (!end.empty()) return end;
  SCIMESH_ASSIGN_OR_RETURN(RunView run, client.ShowRun(run_id));
  PrintNews(run, printed, out);
  out.flush();
  return std::string();
}

int64_t Seconds(Millis d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

// The cause of a failed poll without what the note says already: the call
// and the coordinator's origin before it, the "(gave up after 1 try)" after.
std::string CauseOf(const Status& s, const Url& url) {
  std::string m = s.message();
  const size_t gave_up = m.rfind(" (gave up after ");
  if (gave_up != std::string::npos) m.erase(gave_up);
  const std::string origin = url.scheme + "://" + url.host + ":" + std::to_string(url.port) + ": ";
  const size_t at = m.find(origin);
  return at == std::string::npos ? m : m.substr(at + origin.size());
}

// The URL as the person gave it, without a trailing slash.
std::string Shown(const Url& url) {
  std::string text = url.text;
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

Result<bool> WatchRun(Client& client, const std::string& run_id, const WatchOptions& options, std::ostream& out,
                      std::ostream& err) {
  Printed printed;
  const std::string url = Shown(client.coordinator());
  bool unreachable = false;
  MonoTime unreachable_since{}, next_note{};
  for (;;) {
    auto end = PollOnce(client, run_id, printed, out);
    const MonoTime now = std::chrono::steady_clock::now();
    if (!end.ok()) {
      if (!Transient(end.status())) return end.status();
      if (!unreachable) {
        unreachable = true;
        unreachable_since = next_note = now;
      }
      const Millis so_far = std::chrono::duration_cast<Millis>(now - unreachable_since);
      if (so_far >= options.budget) {
        return Status(end.status().code(), "cannot reach " + url + " for " + std::to_string(Seconds(so_far)) +
                                               " s; gave up: " + CauseOf(end.status(), client.coordinator()));
      }
      if (now >= next_note) {
        err << "scimesh-coordinator run watch: cannot reach " << url << " (retrying, " << Seconds(so_far)
            << " s so far): " << CauseOf(end.status(), client.coordinator()) << std::endl;
        next_note = now + options.note_every;
      }
      std::this_thread::sleep_for(options.retry);
      continue;
    }
    if (unreachable) {
      err << "scimesh-coordinator run watch: reached " << url << " again" << std::endl;
      unreachable = false;
    }
    if (!end->empty()) {
      out << "run " << run_id << ": " << *end << std::endl;
      return *end == "completed";
    }
    std::this_thread::sleep_for(options.poll);
  }
}

}  // namespace scimesh::coordinator
