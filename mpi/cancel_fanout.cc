// CancelFanout: one nonblocking broadcast carries the cancellation to every rank.
#include "mpi/cancel_fanout.h"

#include <string>

namespace scimesh::mpi {
namespace {

Status MpiError(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Status::Unavailable(std::string(what) + ": " + std::string(text, static_cast<size_t>(len)));
}

}  // namespace

Result<std::unique_ptr<CancelFanout>> CancelFanout::Open(MPI_Comm comm) {
  std::unique_ptr<CancelFanout> f(new CancelFanout());
  int rc = MPI_Comm_dup(comm, &f->comm_);
  if (rc != MPI_SUCCESS) return MpiError("MPI_Comm_dup", rc);
  MPI_Comm_rank(f->comm_, &f->rank_);
  if (f->rank_ != 0) {
    rc = MPI_Ibcast(&f->value_, 1, MPI_INT, 0, f->comm_, &f->request_);
    if (rc != MPI_SUCCESS) return MpiError("MPI_Ibcast", rc);
    f->posted_ = true;
  }
  return f;
}

CancelFanout::~CancelFanout() {
  // Close() is collective, so a destructor cannot complete it safely; a handle
  // dropped without Close leaks the duplicate communicator rather than hang.
  if (!closed_ && comm_ != MPI_COMM_NULL && posted_ && !completed_) {
    MPI_Request_free(&request_);
  }
}

Status CancelFanout::PostRoot(int value) {
  value_ = value;
  int rc = MPI_Ibcast(&value_, 1, MPI_INT, 0, comm_, &request_);
  if (rc != MPI_SUCCESS) return MpiError("MPI_Ibcast", rc);
  posted_ = true;
  return Status::Ok();
}

Result<bool> CancelFanout::Poll(bool root_lost) {
  if (closed_) return cancelled_;
  if (rank_ == 0) {
    if (root_lost && !posted_) {
      SCIMESH_RETURN_IF_ERROR(PostRoot(1));
      cancelled_ = true;
    }
  }
  if (posted_ && !completed_) {
    int done = 0;
    int rc = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return MpiError("MPI_Test", rc);
    if (done) {
      completed_ = true;
      if (value_ == 1) cancelled_ = true;
    }
  }
  return cancelled_;
}

Result<bool> CancelFanout::Close() {
  if (closed_) return cancelled_;
  if (rank_ == 0 && !posted_) SCIMESH_RETURN_IF_ERROR(PostRoot(0));
  if (!completed_) {
    int rc = MPI_Wait(&request_, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return MpiError("MPI_Wait", rc);
    completed_ = true;
    if (value_ == 1) cancelled_ = true;
  }
  MPI_Comm_free(&comm_);
  closed_ = true;
  return cancelled_;
}

}  // namespace scimesh::mpi
