// sbatch, squeue and scancel for scimesh-alloc: their command lines, the
// parsing of what they print, and the real SlurmJobs that runs them.
#include "launcher/alloc/slurm_jobs.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>

#include "launcher/allocation/command_output.h"

namespace scimesh::alloc {
namespace {

constexpr size_t kQuotedLine = 120;

bool AllDigits(std::string_view text) {
  return !text.empty() && text.size() <= 20 && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

bool HasControl(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

Status CheckWord(std::string_view field, std::string_view value) {
  if (HasControl(value)) return Status::InvalidField(std::string(field), "holds a control character");
  if (!value.empty() && value[0] == '-') return Status::InvalidField(std::string(field), "starts with '-'");
  return Status::Ok();
}

Status BadSqueueLine(std::string_view line, std::string_view why) {
  return Status::InvalidArgument("squeue line '" + std::string(line.substr(0, kQuotedLine)) + "': " + std::string(why));
}

// What a job in this state is to the plan: pending, running or gone.
enum class Phase { kPending, kRunning, kEnded, kUnknown };

Phase PhaseOf(std::string_view state) {
  static const std::set<std::string_view> pending = {"PENDING",      "CONFIGURING",   "REQUEUED",  "REQUEUE_HOLD",
                                                     "REQUEUE_FED",  "RESV_DEL_HOLD", "SUSPENDED", "STOPPED"};
  static const std::set<std::string_view> running = {"RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING"};
  static const std::set<std::string_view> ended = {"COMPLETED", "CANCELLED",     "FAILED",  "TIMEOUT",      "NODE_FAIL",
                                                   "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "SPECIAL_EXIT",
                                                   "REVOKED"};
  if (pending.count(state)) return Phase::kPending;
  if (running.count(state)) return Phase::kRunning;
  if (ended.count(state)) return Phase::kEnded;
  return Phase::kUnknown;
}

// One squeue line "%i|%T|%D|%l|%M"; nullopt for a job that has ended.
Result<std::optional<OurJob>> ParseSqueueLine(std::string_view line) {
  std::vector<std::string_view> f;
  size_t start = 0;
  for (size_t bar = line.find('|'); bar != std::string_view::npos; bar = line.find('|', start)) {
    f.push_back(line.substr(start, bar - start));
    start = bar + 1;
  }
  f.push_back(line.substr(start));
  if (f.size() != 5) return BadSqueueLine(line, "not JOBID|STATE|NODES|TIME_LIMIT|TIME");
  if (!AllDigits(f[0])) return BadSqueueLine(line, "the job id is not a number");
  const Phase phase = PhaseOf(f[1]);
  if (phase == Phase::kUnknown) return BadSqueueLine(line, "state not known");
  if (phase == Phase::kEnded) return std::optional<OurJob>();
  OurJob job;
  job.job_id = std::string(f[0]);
  job.pending = phase == Phase::kPending;
  auto [end, ec] = std::from_chars(f[2].data(), f[2].data() + f[2].size(), job.nodes);
  if (f[2].empty() || ec != std::errc() || end != f[2].data() + f[2].size() || job.nodes < 0) {
    return BadSqueueLine(line, "the node count is not a number");
  }
  if (f[3] != "UNLIMITED" && f[3] != "NOT_SET") {
    auto limit = ParseSlurmTime(f[3]);
    if (!limit.ok()) return BadSqueueLine(line, limit.status().message());
    job.time_limit_s = *limit;
  }
  if (f[4] != "INVALID") {
    auto ran = ParseSlurmTime(f[4]);
    if (!ran.ok()) return BadSqueueLine(line, ran.status().message());
    if (!job.pending) job.running_s = *ran;
  }
  return std::optional<OurJob>(std::move(job));
}

std::vector<std::string_view> OutputLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) lines.push_back(line);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

}  // namespace

Status CheckJobRequest(const JobRequest& r) {
  if (r.tag.empty() || r.tag.size() > 128 || r.tag[0] == '-' ||
      !std::all_of(r.tag.begin(), r.tag.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '+' || c == '-';
      })) {
    return Status::InvalidField("tag", "'" + r.tag.substr(0, kQuotedLine) +
                                           "' is not 1 to 128 letters, digits, '.', '_', '+' or '-' (not first)");
  }
  for (const auto& [field, value] : {std::pair<std::string_view, std::string_view>{"partition", r.partition},
                                     {"account", r.account},
                                     {"qos", r.qos},
                                     {"output", r.output},
                                     {"script", r.script}}) {
    SCIMESH_RETURN_IF_ERROR(CheckWord(field, value));
  }
  if (r.script.empty()) return Status::InvalidField("script", "empty");
  for (const auto& arg : r.extra_args) {
    if (arg.find_first_of(std::string_view("\n\0", 2)) != std::string::npos) {
      return Status::InvalidField("extra_args", "a word holds a newline or NUL");
    }
  }
  const Shape& s = r.shape;
  if (s.nodes < 1 || s.time_s < 60 || s.cores_per_node < 0 || s.gpus_per_node < 0) {
    return Status::InvalidField("shape", "out of range: " + ShapeText(s));
  }
  if (r.signal_s < 0 || r.signal_s > 65535) return Status::InvalidField("signal_s", "not 0..65535");
  return Status::Ok();
}

std::vector<std::string> SbatchArgv(const JobRequest& r, bool test_only) {
  std::vector<std::string> argv = {"sbatch", test_only ? "--test-only" : "--parsable", "--job-name=" + r.tag,
                                   "--nodes=" + std::to_string(r.shape.nodes)};
  if (r.shape.cores_per_node > 0) argv.push_back("--ntasks-per-node=" + std::to_string(r.shape.cores_per_node));
  if (r.shape.gpus_per_node > 0) argv.push_back("--gres=gpu:" + std::to_string(r.shape.gpus_per_node));
  argv.push_back("--time=" + FormatSlurmTime(r.shape.time_s));
  argv.push_back("--signal=B:USR1@" + std::to_string(r.signal_s));
  if (!r.partition.empty()) argv.push_back("--partition=" + r.partition);
  if (!r.account.empty()) argv.push_back("--account=" + r.account);
  if (!r.qos.empty()) argv.push_back("--qos=" + r.qos);
  if (!r.output.empty()) argv.push_back("--output=" + r.output);
  argv.insert(argv.end(), r.extra_args.begin(), r.extra_args.end());
  argv.push_back(r.script);
  return argv;
}

Result<std::string> ParseSbatchJobId(std::string_view output) {
  const auto lines = OutputLines(output);
  std::string_view id = lines.empty() ? std::string_view() : lines.back();
  id = id.substr(0, id.find(';'));  // "JOBID;CLUSTER"
  if (!AllDigits(id)) {
    return Status::InvalidArgument("sbatch --parsable printed '" + std::string(output.substr(0, kQuotedLine)) +
                                   "', not a job id");
  }
  return std::string(id);
}

std::vector<std::string> SqueueArgv(const std::string& tag) {
  return {"squeue", "-h", "--me", "--name=" + tag, "-o", "%i|%T|%D|%l|%M"};
}

Result<std::vector<OurJob>> ParseSqueue(std::string_view text) {
  std::vector<OurJob> jobs;
  for (auto line : OutputLines(text)) {
    SCIMESH_ASSIGN_OR_RETURN(auto job, ParseSqueueLine(line));
    if (job) jobs.push_back(std::move(*job));
  }
  // Digits only, so a shorter id is a smaller number.
  std::stable_sort(jobs.begin(), jobs.end(), [](const OurJob& a, const OurJob& b) {
    return a.job_id.size() != b.job_id.size() ? a.job_id.size() < b.job_id.size() : a.job_id < b.job_id;
  });
  return jobs;
}

std::vector<std::string> ScancelArgv(const std::string& job_id) { return {"scancel", "--state=PENDING", job_id}; }

namespace {

constexpr auto kCommandTimeout = std::chrono::seconds(60);
constexpr size_t kMessageBytes = 600;

// Why a command failed, in its own words: its error lines ("sbatch: error:
// ..."; every line when none says "error:"), joined, the last (SLURM's
// decisive "Batch job submission failed: ...") always kept whole.
Status Refusal(const std::string& program, const launcher::CommandRun& run) {
  std::vector<std::string_view> lines = OutputLines(run.err), errors;
  for (auto line : lines) {
    if (line.find("error:") != std::string_view::npos) errors.push_back(line);
  }
  if (errors.empty()) errors = lines;
  std::string words;
  for (auto it = errors.rbegin(); it != errors.rend(); ++it) {
    const std::string_view line = it->substr(0, kMessageBytes / 2);
    if (!words.empty() && words.size() + line.size() + 2 > kMessageBytes) break;
    if (!words.empty()) words.insert(0, "; ");
    words.insert(0, line);
  }
  std::string how = run.exit.signaled ? "killed by signal " + std::to_string(run.exit.code)
                                      : "exited " + std::to_string(run.exit.code);
  if (!run.exit.signaled && run.exit.code == 127 && words.empty()) how = "not found or cannot run";
  return Status::Unavailable(program + " " + how + (words.empty() ? "" : ": " + words));
}

// Runs argv; its standard output when it exits 0, else Refusal.
Result<std::string> Run(const std::vector<std::string>& argv) {
  SCIMESH_ASSIGN_OR_RETURN(auto run, launcher::RunCommand(argv, kCommandTimeout));
  if (run.exit.signaled || run.exit.code != 0) return Refusal(argv[0], run);
  return std::move(run.out);
}

class CommandJobs final : public SlurmJobs {
 public:
  Result<std::vector<OurJob>> List(const std::string& tag) override {
    SCIMESH_ASSIGN_OR_RETURN(auto out, Run(SqueueArgv(tag)));
    return ParseSqueue(out);
  }

  Result<std::string> Submit(const JobRequest& request) override {
    SCIMESH_RETURN_IF_ERROR(CheckJobRequest(request));
    SCIMESH_ASSIGN_OR_RETURN(auto out, Run(SbatchArgv(request, false)));
    return ParseSbatchJobId(out);
  }

  Status Test(const JobRequest& request) override {
    SCIMESH_RETURN_IF_ERROR(CheckJobRequest(request));
    // "sbatch: Job 123 to start at ..." goes to stderr; the exit status says it all.
    return Run(SbatchArgv(request, true)).status();
  }

  Status Cancel(const std::string& job_id) override {
    if (!AllDigits(job_id)) return Status::InvalidArgument("job id '" + job_id.substr(0, kQuotedLine) + "' is not a number");
    auto out = Run(ScancelArgv(job_id));
    if (!out.ok() && out.status().message().find("Invalid job id") != std::string::npos) {
      return Status::NotFound(out.status().message());
    }
    return out.status();
  }
};

}  // namespace

std::unique_ptr<SlurmJobs> CommandSlurmJobs() { return std::make_unique<CommandJobs>(); }

}  // namespace scimesh::alloc
