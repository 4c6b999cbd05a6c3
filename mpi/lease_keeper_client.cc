// TakeOverLease: rank 0 holds the step's lease through the client library's
// HeartbeatLoop, as holder "rank0" of the lease state file.
#include <rapidjson/document.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "mpi/lease_keeper.h"
#include "protocol/client.h"
#include "protocol/heartbeat_loop.h"
#include "protocol/host_name.h"
#include "protocol/lease_state.h"
#include "protocol/wire_json.h"

namespace scimesh::mpi {
namespace {


class ClientLeaseKeeper : public LeaseKeeper {
 public:
  ClientLeaseKeeper(std::unique_ptr<Client> client, std::shared_ptr<CancellationToken> token, std::string state_path)
      : client_(std::move(client)), token_(std::move(token)), state_path_(std::move(state_path)) {}

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
    auto state = ReadLeaseState(state_path_);
    if (!state.ok()) return state.status();
    state->holder = "launcher";
    state->pid = ::getpid();
    state->seq += 1;
    return WriteLeaseState(state_path_, *state);
  }

 private:
  std::unique_ptr<Client> client_;
  std::shared_ptr<CancellationToken> token_;
  std::string state_path_;
  std::unique_ptr<HeartbeatLoop> loop_;
  bool released_ = false;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path.substr(path.rfind('/') + 1) + " in the attempt directory");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Result<std::unique_ptr<LeaseKeeper>> TakeOverLease(const std::string& attempt_dir) {
  SCIMESH_ASSIGN_OR_RETURN(std::string text, ReadFile(attempt_dir + "/lease.json"));
  SCIMESH_ASSIGN_OR_RETURN(Lease lease, ParseLease(text));
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  if (!doc.IsObject() || !doc.HasMember("coordinator_url") || !doc["coordinator_url"].IsString()) {
    return Status::InvalidArgument("lease.json has no coordinator_url");
  }
  const char* worker_id = std::getenv("SCIMESH_WORKER_ID");
  if (worker_id == nullptr || *worker_id == '\0') {
    return Status::InvalidArgument("SCIMESH_WORKER_ID is not set (the launcher sets it)");
  }
  ClientOptions options;
  options.coordinator_url = doc["coordinator_url"].GetString();
  SCIMESH_ASSIGN_OR_RETURN(options.token, LoadTokenFromEnvironment());
  if (const char* insecure = std::getenv("SCIMESH_ALLOW_INSECURE_HTTP"); insecure && *insecure == '1') {
    options.allow_insecure_http = true;
  }
  SCIMESH_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Create(options));

  const std::string state_path = attempt_dir + "/lease.state";
  HeartbeatConfig config;
  config.call = {lease.lease_id, lease.attempt, worker_id, std::nullopt};
  config.interval = Millis(lease.heartbeat_ms > 0 ? lease.heartbeat_ms : 10000);
  config.state_path = state_path;
  config.holder = "rank0";
  // Start from the launcher's deadline when it was measured on this host;
  // otherwise a conservative one heartbeat interval. The first beat is
  // immediate and replaces it either way.
  const MonoTime now = std::chrono::steady_clock::now();
  config.deadline = LeaseDeadline::At(now + config.interval);
  if (auto state = ReadLeaseState(state_path); state.ok()) {
    config.lease_expires_at = state->lease_expires_at;
    if (state->host == HostName() && state->deadline_mono_ms > 0) {
      config.deadline = LeaseDeadline::At(MonoTime(std::chrono::milliseconds(state->deadline_mono_ms)));
    }
  }
  auto token = std::make_shared<CancellationToken>();
  auto keeper = std::make_unique<ClientLeaseKeeper>(std::move(client), token, state_path);
  SCIMESH_RETURN_IF_ERROR(keeper->Start(std::move(config)));
  return std::unique_ptr<LeaseKeeper>(std::move(keeper));
}

}  // namespace scimesh::mpi
