// StepRuntime: begin, poll, report and end a step on every rank.
#include "mpi/step_runtime.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mpi/pinning.h"
#include "mpi/rank_assignment.h"
#include "protocol/util/index_list.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/lease_file.h"
#include "protocol/util/host_name.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/fail_message.h"

namespace scimesh::mpi {
namespace {

// Broadcasts a string from rank 0 (two collectives: length, bytes).
Status BcastString(MPI_Comm comm, int rank, std::string& s) {
  unsigned long long len = rank == 0 ? s.size() : 0;
  if (MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm) != MPI_SUCCESS) {
    return Status::Unavailable("MPI_Bcast of a length failed");
  }
  if (rank != 0) s.assign(len, '\0');
  if (len > 0 && MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, 0, comm) != MPI_SUCCESS) {
    return Status::Unavailable("MPI_Bcast of a payload failed");
  }
  return Status::Ok();
}

// lease.json and placement.json with the safe reader: the attempt directory
// is the user's alone, and its files are never followed through a symlink.
// Sets `error` when lease.json cannot be read; placement.json may be absent.
void ReadAttemptInputs(const std::string& dir, std::string* lease, std::string* placement, std::string* error) {
  const uid_t me = ::geteuid();
  auto fd = OpenPrivateDirectory(dir, me, "attempt directory");
  if (!fd.ok()) {
    *error = fd.status().message();
    return;
  }
  auto l = ReadAttemptFile(fd->get(), kLeaseFileName, me, kMaxLeaseFileBytes);
  if (!l.ok()) {
    *error = l.status().message();
    return;
  }
  *lease = std::move(*l);
  auto p = ReadAttemptFile(fd->get(), kPlacementFileName, me, kMaxPlacementFileBytes);
  if (p.ok()) *placement = std::move(*p);
  else if (p.status().code() != Code::kNotFound) *error = p.status().message();
}

void Log(int rank, const std::string& what) {
  std::fprintf(stderr, "scimesh-mpi[rank %d]: %s\n", rank, what.c_str());
}

}  // namespace

Result<std::unique_ptr<StepRuntime>> StepRuntime::Begin(MPI_Comm comm, std::string attempt_dir,
                                                        const LeaseKeeperFactory& take_over) {
  if (attempt_dir.empty()) {
    const char* env = std::getenv("SCIMESH_ATTEMPT_DIR");
    if (env != nullptr) attempt_dir = env;
  }
  int rank = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return Status::InvalidArgument("invalid communicator");

  // Rank 0 reads; everyone receives the same bytes, or the same error.
  std::string error, lease_text, placement_text;
  if (rank == 0) {
    if (attempt_dir.empty()) {
      error = "no attempt directory: pass one or set SCIMESH_ATTEMPT_DIR";
    } else {
      ReadAttemptInputs(attempt_dir, &lease_text, &placement_text, &error);
    }
  }
  SCIMESH_RETURN_IF_ERROR(BcastString(comm, rank, error));
  if (!error.empty()) return Status::NotFound(error);
  SCIMESH_RETURN_IF_ERROR(BcastString(comm, rank, lease_text));
  SCIMESH_RETURN_IF_ERROR(BcastString(comm, rank, placement_text));
  SCIMESH_RETURN_IF_ERROR(BcastString(comm, rank, attempt_dir));

  Result<LeaseFile> lease = ParseLeaseFile(lease_text);
  if (!lease.ok()) return lease.status();

  std::unique_ptr<StepRuntime> rt(new StepRuntime(comm, StepFiles(attempt_dir)));
  rt->rank_ = rank;
  rt->lease_ = std::move(lease->lease);

  // Pin by global rank: placement.json is written per rank of the whole job.
  int world_rank = rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (!placement_text.empty()) {
    auto assignment = ParseRankAssignment(placement_text, world_rank);
    if (!assignment.ok()) return assignment.status();
    if (assignment->has_value()) {
      auto pinned = PinProcess(**assignment);
      if (!pinned.ok()) return pinned.status().WithContext("pinning");
      ExportRankEnvironment(**assignment);
      rt->pinned_to_ = pinned->bound_to;
      if (!pinned->assignment_honoured) {
        const std::vector<int> assigned((*assignment)->cpus.begin(), (*assignment)->cpus.end());
        Log(rank, "assigned cpus " + FormatIndexList(assigned) + " are not all allowed here (allowed " +
                      pinned->allowed + "); bound to " + pinned->bound_to);
      }
    }
  }

  if (rank == 0 && take_over) {
    auto keeper = take_over(attempt_dir);
    if (keeper.ok()) {
      rt->keeper_ = std::move(*keeper);
    } else {
      // The launcher keeps heartbeating until rank 0 holds the lease, so the
      // step still runs; only the in-job cancellation is lost. Say it loudly.
      Log(rank, "could not take the lease over (" + keeper.status().ToString() +
                    "); the launcher keeps heartbeating and cancellation reaches ranks only by signal");
    }
  }

  auto fanout = CancelFanout::Open(comm);
  if (!fanout.ok()) return fanout.status();
  rt->fanout_ = std::move(*fanout);
  return rt;
}

Result<bool> StepRuntime::Cancelled() {
  if (ended_) return Status(Code::kInternal, "the step has ended");
  return fanout_->Poll(keeper_ != nullptr && keeper_->lost());
}

Result<bool> StepRuntime::CancelledAll() {
  Result<bool> mine = Cancelled();
  if (!mine.ok()) return mine;
  int local = *mine ? 1 : 0, any = 0;
  if (MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm_) != MPI_SUCCESS) {
    return Status::Unavailable("MPI_Allreduce failed");
  }
  return any == 1;
}

Status StepRuntime::Progress(std::string_view json) {
  if (rank_ == 0 && keeper_ != nullptr) keeper_->SetProgress(std::string(json));
  return Status::Ok();
}

Status StepRuntime::SetOutput(std::string_view json) {
  return rank_ == 0 ? files_.WriteOutput(json) : Status::Ok();
}

Status StepRuntime::SetStatePatch(std::string_view json) {
  return rank_ == 0 ? files_.WriteStatePatch(json) : Status::Ok();
}

Status StepRuntime::SetUsage(std::string_view json) {
  return rank_ == 0 ? files_.WriteUsage(json) : Status::Ok();
}

Status StepRuntime::AddArtifact(std::string_view name, const std::string& path, std::string_view media_type) {
  return files_.AddArtifact(name, path, media_type);
}

Status StepRuntime::Fail(std::string_view failure_class, std::string_view message) {
  const auto cls = ParseFailClass(failure_class);
  if (!cls || !StepMayReport(*cls)) {
    return Status::InvalidArgument("failure class '" + TruncateUtf8(failure_class, 64) +
                                   "' is not one a step may report (retryable, timeout, invalid_output, "
                                   "input_checksum, fatal)");
  }
  auto wrote = files_.WriteFailure({*cls, std::string(message), rank_, HostName()});
  if (!wrote.ok()) return wrote.status();
  if (*wrote) Log(rank_, "the step failed (" + std::string(FailClassName(*cls)) + "): " + SanitizeFailMessage(message));
  return Status::Ok();
}

Result<bool> StepRuntime::End() {
  if (ended_) return Status(Code::kInternal, "the step has already ended");
  ended_ = true;
  // Rank 0 may learn of a loss only now; announce it before closing.
  if (rank_ == 0 && keeper_ != nullptr && keeper_->lost()) {
    auto polled = fanout_->Poll(true);
    if (!polled.ok()) return polled.status();
  }
  Result<bool> cancelled = fanout_->Close();
  if (!cancelled.ok()) return cancelled;
  if (keeper_ != nullptr) {
    Status released = keeper_->Release();
    if (!released.ok()) Log(rank_, "releasing the lease to the launcher: " + released.ToString());
  }
  if (MPI_Barrier(comm_) != MPI_SUCCESS) return Status::Unavailable("MPI_Barrier failed");
  return *cancelled;
}

}  // namespace scimesh::mpi
