// scimesh/step.hpp: a C++ RAII wrapper over the C API in scimesh/step.h.
// SPDX-License-Identifier: MIT
// Header-only; throws nothing: check ok() / the returned codes, and
// scimesh_strerror(code) / scimesh_step_last_error() for the reason.
#pragma once

#include <scimesh/step.h>

#include <string>
#include <utility>

namespace scimesh {

class Step {
 public:
  // Collective over `comm`: begins the step (see scimesh_step_begin).
  explicit Step(MPI_Comm comm, const char* attempt_dir = nullptr)
      : error_(scimesh_step_begin(comm, attempt_dir, &handle_)) {}

  // Ends the step if end() was not called. end() is collective: every rank
  // must reach it, so call end() explicitly on the normal path.
  ~Step() {
    if (handle_ != nullptr) scimesh_step_end(&handle_);
  }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  Step(Step&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)), error_(other.error_) {}

  bool ok() const { return handle_ != nullptr; }
  int error() const { return error_; }  // the code begin returned

  // The rendered input / previous outputs as JSON text ("" on error).
  std::string input() const { return Text(&scimesh_step_input); }
  std::string previous() const { return Text(&scimesh_step_previous); }

  // Cheap local poll; true once the lease is lost.
  bool cancelled() {
    int flag = 0;
    return handle_ != nullptr && scimesh_step_cancelled(handle_, &flag) == SCIMESH_OK && flag != 0;
  }
  // Collective: the same answer on every rank.
  bool cancelled_all() {
    int flag = 0;
    return handle_ != nullptr && scimesh_step_cancelled_all(handle_, &flag) == SCIMESH_OK && flag != 0;
  }

  int progress(const std::string& json) { return scimesh_step_progress(handle_, json.c_str()); }
  int set_output(const std::string& json) { return scimesh_step_set_output(handle_, json.c_str()); }
  int set_state_patch(const std::string& json) { return scimesh_step_set_state_patch(handle_, json.c_str()); }
  int set_usage(const std::string& json) { return scimesh_step_set_usage(handle_, json.c_str()); }
  int add_artifact(const std::string& name, const std::string& path, const char* media_type = nullptr) {
    return scimesh_step_add_artifact(handle_, name.c_str(), path.c_str(), media_type);
  }

  // Any rank, local: the step failed with class `cls` ("fatal", "retryable",
  // ...); the first failure any rank records wins (see scimesh_step_fail).
  int fail(const std::string& cls, const std::string& message) {
    return scimesh_step_fail(handle_, cls.c_str(), message.c_str());
  }

  // Collective. SCIMESH_ERR_LEASE_LOST when the lease was lost.
  int end() { return scimesh_step_end(&handle_); }

 private:
  using TextFn = int (*)(const scimesh_step*, char*, size_t, size_t*);
  std::string Text(TextFn fn) const {
    if (handle_ == nullptr) return {};
    size_t needed = 0;
    fn(handle_, nullptr, 0, &needed);
    std::string out(needed, '\0');
    if (fn(handle_, out.data(), out.size(), &needed) != SCIMESH_OK) return {};
    out.resize(needed - 1);
    return out;
  }

  scimesh_step* handle_ = nullptr;
  int error_ = SCIMESH_OK;
};

}  // namespace scimesh
