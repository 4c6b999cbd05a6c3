// The C API of libscimesh_mpi (include/scimesh/step.h) over StepRuntime.
// Every entry point catches everything: no exception crosses into C.
#include <cstring>
#include <exception>
#include <string>

#include "mpi/include/scimesh/step.h"
#include "mpi/step_runtime.h"

struct scimesh_step {
  std::unique_ptr<scimesh::mpi::StepRuntime> runtime;
};

namespace {

thread_local std::string last_error;

int CodeOf(const scimesh::Status& s) {
  using scimesh::Code;
  switch (s.code()) {
    case Code::kOk: return SCIMESH_OK;
    case Code::kInvalidArgument: return SCIMESH_ERR_INVALID;
    case Code::kNotFound: return SCIMESH_ERR_NO_LEASE;
    case Code::kIo:
    case Code::kPermissionDenied: return SCIMESH_ERR_IO;
    case Code::kUnavailable: return SCIMESH_ERR_MPI;
    case Code::kCancelled: return SCIMESH_ERR_LEASE_LOST;
    default: return SCIMESH_ERR_INTERNAL;
  }
}

int Fail(const scimesh::Status& s) {
  last_error = s.ToString();
  return CodeOf(s);
}

int Succeed() {
  last_error.clear();
  return SCIMESH_OK;
}

template <typename Fn>
int Guard(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
  } catch (...) {
    last_error = "internal error";
  }
  return SCIMESH_ERR_INTERNAL;
}

int CopyOut(const std::string& text, char* buf, size_t size, size_t* needed) {
  if (needed != nullptr) *needed = text.size() + 1;
  if (buf == nullptr || size < text.size() + 1) {
    last_error = "buffer too small: " + std::to_string(text.size() + 1) + " bytes needed";
    return SCIMESH_ERR_TRUNCATED;
  }
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return Succeed();
}

int FromStatus(const scimesh::Status& s) { return s.ok() ? Succeed() : Fail(s); }

bool Usable(const scimesh_step* step) {
  if (step == nullptr || step->runtime == nullptr) {
    last_error = "NULL or ended step handle";
    return false;
  }
  return true;
}

// A yes/no answer of the runtime into `*out` (1 or 0).
template <typename Ask>
int AnswerFlag(const scimesh_step* step, int* out, Ask&& ask) {
  return Guard([&]() -> int {
    if (!Usable(step) || out == nullptr) return SCIMESH_ERR_INVALID;
    scimesh::Result<bool> r = ask();
    if (!r.ok()) return Fail(r.status());
    *out = *r ? 1 : 0;
    return Succeed();
  });
}

}  // namespace

extern "C" {

const char* scimesh_strerror(int code) {
  switch (code) {
    case SCIMESH_OK: return "success";
    case SCIMESH_ERR_INVALID: return "invalid argument";
    case SCIMESH_ERR_NO_LEASE: return "no lease in the attempt directory";
    case SCIMESH_ERR_IO: return "file input/output error";
    case SCIMESH_ERR_MPI: return "MPI call failed";
    case SCIMESH_ERR_TRUNCATED: return "buffer too small";
    case SCIMESH_ERR_STATE: return "call out of order";
    case SCIMESH_ERR_LEASE_LOST: return "the lease is lost";
    case SCIMESH_ERR_INTERNAL: return "internal error in scimesh";
    default: return "unknown scimesh error code";
  }
}

const char* scimesh_step_last_error(void) { return last_error.c_str(); }

int scimesh_step_begin(MPI_Comm comm, const char* attempt_dir, scimesh_step** step) {
  return Guard([&]() -> int {
    if (step == nullptr) return Fail(scimesh::Status::InvalidArgument("step must not be NULL"));
    *step = nullptr;
    auto rt = scimesh::mpi::StepRuntime::Begin(comm, attempt_dir != nullptr ? attempt_dir : "",
                                               scimesh::mpi::TakeOverLease);
    if (!rt.ok()) return Fail(rt.status());
    *step = new scimesh_step{std::move(*rt)};
    return Succeed();
  });
}

int scimesh_step_begin_f(MPI_Fint comm, const char* attempt_dir, scimesh_step** step) {
  return scimesh_step_begin(MPI_Comm_f2c(comm), attempt_dir, step);
}

int scimesh_step_input(const scimesh_step* step, char* buf, size_t size, size_t* needed) {
  return Guard([&]() -> int { return Usable(step) ? CopyOut(step->runtime->input_json(), buf, size, needed) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_previous(const scimesh_step* step, char* buf, size_t size, size_t* needed) {
  return Guard([&]() -> int { return Usable(step) ? CopyOut(step->runtime->previous_json(), buf, size, needed) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_cancelled(scimesh_step* step, int* cancelled) {
  return AnswerFlag(step, cancelled, [&] { return step->runtime->Cancelled(); });
}

int scimesh_step_cancelled_all(scimesh_step* step, int* cancelled) {
  return AnswerFlag(step, cancelled, [&] { return step->runtime->CancelledAll(); });
}

int scimesh_step_progress(scimesh_step* step, const char* json) {
  return Guard([&]() -> int { return Usable(step) && json ? FromStatus(step->runtime->Progress(json)) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_set_output(scimesh_step* step, const char* json) {
  return Guard([&]() -> int { return Usable(step) && json ? FromStatus(step->runtime->SetOutput(json)) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_set_state_patch(scimesh_step* step, const char* json) {
  return Guard([&]() -> int { return Usable(step) && json ? FromStatus(step->runtime->SetStatePatch(json)) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_set_usage(scimesh_step* step, const char* json) {
  return Guard([&]() -> int { return Usable(step) && json ? FromStatus(step->runtime->SetUsage(json)) : SCIMESH_ERR_INVALID; });
}

int scimesh_step_add_artifact(scimesh_step* step, const char* name, const char* path, const char* media_type) {
  return Guard([&]() -> int {
    if (!Usable(step) || name == nullptr || path == nullptr) return SCIMESH_ERR_INVALID;
    return FromStatus(step->runtime->AddArtifact(name, path, media_type != nullptr ? media_type : ""));
  });
}

int scimesh_step_fail(scimesh_step* step, const char* failure_class, const char* message) {
  return Guard([&]() -> int {
    if (!Usable(step) || failure_class == nullptr || message == nullptr) return SCIMESH_ERR_INVALID;
    return FromStatus(step->runtime->Fail(failure_class, message));
  });
}

int scimesh_step_end(scimesh_step** step) {
  return Guard([&]() -> int {
    if (step == nullptr || !Usable(*step)) return SCIMESH_ERR_INVALID;
    auto lost = (*step)->runtime->End();
    delete *step;
    *step = nullptr;
    if (!lost.ok()) return Fail(lost.status());
    if (*lost) return Fail(scimesh::Status::Cancelled("the lease was lost while the step ran"));
    return Succeed();
  });
}

}  // extern "C"
