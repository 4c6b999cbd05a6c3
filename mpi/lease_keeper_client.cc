// TakeOverLease: rank 0 holds the step's lease through the client library's
// HeartbeatLoop, as holder rank0 of the lease state file, talking only to the
// coordinator its configuration names (SCIMESH_URL, set by the launcher).
#include <unistd.h>

#include <cstdlib>

#include "mpi/lease_keeper.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/lease_file.h"
#include "protocol/attempt/lease_state.h"
#include "protocol/client/client.h"
#include "protocol/runtime/heartbeat_loop.h"
#include "protocol/util/host_name.h"

namespace scimesh::mpi {
namespace {

class ClientLeaseKeeper : public LeaseKeeper {
 public:
  ClientLeaseKeeper(std::unique_ptr<Client> client, std::shared_ptr<CancellationToken> token, UniqueFd dir,
                    std::string state_path, LeaseHolder hand_back_to)
      : client_(std::move(client)), token_(std::move(token)), dir_(std::move(dir)),
        state_path_(std::move(state_path)), hand_back_to_(hand_back_to) {}

  Status Start(HeartbeatConfig config) {
    loop_ = std::make_unique<HeartbeatLoop>(*client_, std::move(config), token_);
    return loop_->Start();
  }

  bool lost() const override { return token_->cancelled(); }

  void SetProgress(std::string json) override { loop_->SetProgress(std::move(json)); }

  Status Release() override {
    if (released_) return Status::Ok();
    released_ = true;
    loop_->Stop();
    if (token_->cancelled()) return Status::Ok();  // the state file already says lost
    // Hand back: the launcher resumes heartbeating and sends the final report.
    auto state = ReadLeaseStateAt(dir_.get(), ::geteuid());
    if (!state.ok()) return state.status();
    if (!HeldBy(*state, LeaseHolder::kRank0)) return Status::Ok();  // lost or done: nothing to give back
    return WriteLeaseState(state_path_, HandedBack(*state, hand_back_to_, ::getpid()));
  }

 private:
  std::unique_ptr<Client> client_;
  std::shared_ptr<CancellationToken> token_;
  UniqueFd dir_;
  std::string state_path_;
  LeaseHolder hand_back_to_;
  std::unique_ptr<HeartbeatLoop> loop_;
  bool released_ = false;
};

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

}  // namespace

Result<std::unique_ptr<LeaseKeeper>> TakeOverLease(const std::string& attempt_dir) {
  const uid_t me = ::geteuid();
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenPrivateDirectory(attempt_dir, me, "attempt directory"));
  SCIMESH_ASSIGN_OR_RETURN(LeaseFile file, ReadLeaseFileAt(dir.get(), me));
  // The URL comes from configuration: lease.json is in a directory the
  // step's own code can write, and the key follows the URL.
  const std::string url = EnvOr("SCIMESH_URL", "");
  if (url.empty()) return Status::InvalidArgument("SCIMESH_URL is not set (the launcher sets it)");
  SCIMESH_RETURN_IF_ERROR(CheckLeaseFileOrigin(file, url));
  const std::string worker_id = EnvOr("SCIMESH_WORKER_ID", "");
  if (worker_id.empty()) return Status::InvalidArgument("SCIMESH_WORKER_ID is not set (the launcher sets it)");
  ClientOptions options;
  options.coordinator_url = url;
  options.allow_insecure_http = EnvOr("SCIMESH_ALLOW_INSECURE_HTTP", "") == "1";
  // The lease's own token, from lease.json; the worker key from the
  // environment only when the coordinator issued none.
  if (!file.lease.lease_token.empty()) {
    options.token = Token(file.lease.lease_token);
  } else {
    SCIMESH_ASSIGN_OR_RETURN(options.token, LoadTokenFromEnvironment());
  }
  // This process holds a credential now: keep it out of core dumps and ptrace.
  SCIMESH_RETURN_IF_ERROR(ProtectKeyHolder());
  SCIMESH_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Create(options));

  const Lease& lease = file.lease;
  const std::string state_path = attempt_dir + "/" + kLeaseStateFileName;
  HeartbeatConfig config;
  config.call = {lease.lease_id, lease.attempt, worker_id, std::nullopt};
  config.interval = Millis(lease.heartbeat_ms > 0 ? lease.heartbeat_ms : 10000);
  config.state_path = state_path;
  config.holder = LeaseHolder::kRank0;
  // Start from the holder's deadline when it was measured on this host;
  // otherwise a conservative one heartbeat interval. The first beat is
  // immediate and replaces it either way.
  config.deadline = LeaseDeadline::At(std::chrono::steady_clock::now() + config.interval);
  LeaseHolder hand_back_to = LeaseHolder::kWorker;
  if (auto state = ReadLeaseStateAt(dir.get(), me); state.ok()) {
    if (state->state != LeaseHold::kHeld) {
      return Status::Conflict("the lease is " + std::string(LeaseHoldName(state->state)) + " already");
    }
    config.lease_expires_at = state->lease_expires_at;
    if (auto d = DeadlineOnHost(*state, HostName())) config.deadline = *d;
    if (state->holder != LeaseHolder::kRank0) hand_back_to = state->holder;
  }
  auto token = std::make_shared<CancellationToken>();
  auto keeper =
      std::make_unique<ClientLeaseKeeper>(std::move(client), token, std::move(dir), state_path, hand_back_to);
  SCIMESH_RETURN_IF_ERROR(keeper->Start(std::move(config)));
  return std::unique_ptr<LeaseKeeper>(std::move(keeper));
}

}  // namespace scimesh::mpi
