// HubHandle: a hub lease's owner's calls, applied under the lease's lock; the
// hub's thread is poked when its timing may have changed.
#include "protocol/runtime/heartbeat_hub_lease.h"

#include "protocol/runtime/heartbeat_hub_core.h"

namespace scimesh {

HubHandle::HubHandle(std::shared_ptr<HubLease> lease, std::shared_ptr<HubCore> core)
    : lease_(std::move(lease)), core_(std::move(core)) {}

HubHandle::~HubHandle() { Stop(); }

Status HubHandle::Start() {
  std::lock_guard<std::mutex> lock(lease_->mu);
  if (lease_->started || lease_->st.stop) return Status::Internal("heartbeat lease started twice");
  lease_->st.Write(LeaseHold::kHeld, std::nullopt);
  if (!core_->Poke(lease_)) return Status::Internal("the heartbeat hub is gone");
  lease_->started = true;
  return Status::Ok();
}

void HubHandle::Extend(const LeaseExtension& extension) {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.Extend(extension);
  if (lease_->started) core_->Poke(lease_);
}

void HubHandle::SetProgress(std::string progress_json) {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.progress = std::move(progress_json);
}

LeaseDeadline HubHandle::deadline() const {
  std::lock_guard<std::mutex> lock(lease_->mu);
  return lease_->st.deadline;
}

int64_t HubHandle::beats() const {
  std::lock_guard<std::mutex> lock(lease_->mu);
  return lease_->st.beats;
}

void HubHandle::Pause() {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.paused = true;  // the hub's thread sees it at the next beat due
}

void HubHandle::HoldAlone() {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.alone = true;
}

void HubHandle::Resume(std::optional<LeaseDeadline> deadline) {
  std::lock_guard<std::mutex> lock(lease_->mu);
  if (lease_->st.Resume(deadline) && lease_->started) core_->Poke(lease_);
}

void HubHandle::Stop() {
  std::lock_guard<std::mutex> lock(lease_->mu);
  if (lease_->st.stop) return;
  // The hub's thread checks `stop` under this lock before it writes or
  // beats: from here on it only drops the lease (and its beat in flight).
  lease_->st.stop = true;
  if (lease_->started) core_->Poke(lease_);
}

void HubHandle::MarkDone() {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.MarkDone();
  if (lease_->started) core_->Poke(lease_);
}

void HubHandle::MarkLost(CancelReason reason) {
  std::lock_guard<std::mutex> lock(lease_->mu);
  lease_->st.MarkLost(reason);
  if (lease_->started) core_->Poke(lease_);
}

}  // namespace scimesh
