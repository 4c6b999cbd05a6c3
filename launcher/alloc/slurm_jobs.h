// scimesh-alloc's jobs in SLURM: the sbatch, squeue and scancel command
// lines, what they print, and the interface the allocation loop drives
// (a fake in tests, the real commands in the program).
//
// Every job carries the tag as its name (--job-name), so a restarted
// scimesh-alloc finds (adopts) the jobs it had submitted: squeue --me --name.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/alloc/alloc_plan.h"
#include "launcher/alloc/alloc_shape.h"
#include "protocol/util/status.h"

namespace scimesh::alloc {

// What one sbatch asks for.
struct JobRequest {
  std::string tag;                       // the job name
  Shape shape;                           // cores_per_node and gpus_per_node already known
  std::string partition, account, qos;   // empty: not passed
  std::vector<std::string> extra_args;   // --sbatch-arg words, passed as given, before the script
  int64_t signal_s = 180;                // --signal=B:USR1@signal_s
  std::string output;                    // -o pattern ("%j" allowed)
  std::string script;                    // the batch script's path
};

// InvalidArgument naming the field when sbatch could read a field as
// something else: a tag that is empty, longer than 128 or not made of
// letters, digits, '.', '_', '+' and '-' (squeue --name takes a comma list),
// a partition, account, qos, output or script holding a control character or
// starting with '-', an empty script, an extra arg holding a newline or NUL,
// a shape out of range (nodes 1.., time 60 s.., cores and gpus 0..), a signal
// time out of 0..65535.
Status CheckJobRequest(const JobRequest& request);

// sbatch's argv: --parsable (or --test-only), --job-name, --nodes,
// --ntasks-per-node (when cores_per_node > 0), --gres=gpu:N (when
// gpus_per_node > 0), --time (FormatSlurmTime), --signal, --partition,
// --account, --qos and --output when set (always as --name=value), extra
// args, the script. Checks nothing: CheckJobRequest does.
std::vector<std::string> SbatchArgv(const JobRequest& request, bool test_only);
// `sbatch --parsable` prints "JOBID" or "JOBID;CLUSTER": the job id, digits
// only (an array's "12_3" is refused).
Result<std::string> ParseSbatchJobId(std::string_view output);

// squeue's argv listing this user's jobs named `tag`:
// squeue -h --me --name=TAG -o "%i|%T|%D|%l|%M"
std::vector<std::string> SqueueArgv(const std::string& tag);
// The jobs in squeue's output with that format: PENDING, CONFIGURING (and
// REQUEUED, REQUEUE_HOLD, SUSPENDED...) are pending; RUNNING, COMPLETING are
// running with %M as running_s; ended ones (COMPLETED, CANCELLED, FAILED,
// TIMEOUT...) are left out; a line out of the format or with a state not
// known is refused (InvalidArgument, the line's first 120 characters
// quoted). %l "UNLIMITED" or "NOT_SET" gives time_limit_s 0, %M "INVALID"
// running_s 0. Sorted by job id (numerically): pending ones in submission
// order.
Result<std::vector<OurJob>> ParseSqueue(std::string_view text);

// scancel --state=PENDING JOB: a job that started since squeue listed it is
// left to run (its launcher ends itself through --idle-exit).
std::vector<std::string> ScancelArgv(const std::string& job_id);

class SlurmJobs {
 public:
  virtual ~SlurmJobs() = default;
  // This user's jobs named `tag`.
  virtual Result<std::vector<OurJob>> List(const std::string& tag) = 0;
  // Submits; the job id. A request CheckJobRequest refuses fails
  // InvalidArgument before anything runs. A refusal fails Unavailable with
  // sbatch's own words: its error lines, the decisive last one whole (e.g.
  // "sbatch: error: Batch job submission failed: Invalid account or
  // account/partition combination specified").
  virtual Result<std::string> Submit(const JobRequest& request) = 0;
  // sbatch --test-only: OK when SLURM would take the request; failures as
  // Submit's.
  virtual Status Test(const JobRequest& request) = 0;
  // NotFound when SLURM no longer knows the job ("Invalid job id
  // specified"); InvalidArgument for a job id that is not digits.
  virtual Status Cancel(const std::string& job_id) = 0;
};

// The real one: runs sbatch, squeue and scancel (found in PATH; no shell),
// each with a 60 s timeout.
std::unique_ptr<SlurmJobs> CommandSlurmJobs();

}  // namespace scimesh::alloc
