// The node agents' channels on the event loop.
#include "launcher/step/node_agents.h"

#include <signal.h>

#include "protocol/util/log.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }

}  // namespace

NodeAgents::~NodeAgents() { CloseAll(std::chrono::milliseconds(0)); }

void NodeAgents::Launch(const std::vector<std::string>& nodes,
                        const std::function<std::vector<std::string>(const std::string&)>& argv_for) {
  if (!rendezvous_ && !nodes.empty()) {
    auto opened = AgentRendezvous::Open(loop_, [this](const std::string& node, UniqueFd socket) {
      OnDirect(node, std::move(socket));
    });
    if (opened.ok()) rendezvous_ = std::move(*opened);
    else Log()->warn("node agents: no direct channel ({}); they use srun's stdio", opened.status().message());
  }
  for (const std::string& node : nodes) {
    std::vector<std::string> argv = argv_for(node);
    std::optional<std::string> hello;
    if (rendezvous_) {
      if (auto s = rendezvous_->Expect(node); s.ok()) {
        // The port travels with the secret on stdin: argv is world-readable.
        hello = std::to_string(rendezvous_->port()) + " " + *s;
        argv.emplace_back("--connect");
      }
    }
    auto channel = AgentChannel::Spawn(argv);
    if (!channel.ok()) {
      Log()->warn("node agent of {}: cannot start it ({}); its steps go through srun", node,
                  channel.status().message());
      if (rendezvous_) rendezvous_->Forget(node);
      continue;
    }
    Agent& a = agents_[node];
    a.channel = std::make_unique<AgentChannel>(std::move(*channel));
    Status s = loop_.Watch(a.channel->fd(), [this, node] { OnReadable(node); });
    if (s.ok() && hello) s = a.channel->SendLine(*hello);
    if (!s.ok()) Gone(node, s.message());
  }
}

void NodeAgents::OnDirect(const std::string& node, UniqueFd socket) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;  // gone meanwhile: the socket closes
  AgentChannel& channel = *it->second.channel;
  channel.AttachDirect(std::move(socket));
  if (Status s = loop_.Watch(channel.direct_fd(), [this, node] { OnReadable(node); }); !s.ok()) {
    return Gone(node, s.message());
  }
  Log()->debug("node agent of {}: direct channel up", node);
  OnReadable(node);  // what it sent after its secret
}

void NodeAgents::Unwatch(const Agent& a) {
  loop_.Unwatch(a.channel->fd());
  if (a.channel->direct_fd() >= 0) loop_.Unwatch(a.channel->direct_fd());
}

bool NodeAgents::Ready(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_.count(node) > 0;
}

Status NodeAgents::Start(const std::string& node, const agent::AgentStart& start) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return Status::Unavailable("the node agent of " + node + " is gone");
  if (Status s = it->second.channel->Start(start); !s.ok()) {
    Gone(node, s.message());
    return Status::Unavailable("the node agent of " + node + " is gone");
  }
  it->second.steps.insert(start.id);
  return Status::Ok();
}

void NodeAgents::Signal(const std::string& node, const std::string& id, int sig) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;  // gone: its keeper killed the step
  if (Status s = it->second.channel->Signal(id, sig); !s.ok()) Gone(node, s.message());
}

void NodeAgents::OnReadable(const std::string& node) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;
  Agent& a = it->second;
  auto events = a.channel->ReadEvents();
  if (!events.ok()) {
    // A malformed line: the agent (or what stands in its place) is not to
    // be trusted with more steps.
    return Gone(node, events.status().message());
  }
  for (const AgentEvent& ev : *events) {
    switch (ev.kind) {
      case AgentEvent::Kind::kReady: {
        const bool direct = a.channel->direct_fd() >= 0;
        // Ready on stdio: it could not connect back, and never will.
        if (!direct && rendezvous_) rendezvous_->Forget(node);
        std::lock_guard<std::mutex> lock(mu_);
        ready_.insert(node);
        Log()->info("node agent of {} ready (pid {}, {})", node, ev.pid, direct ? "direct channel" : "srun's stdio");
        break;
      }
      case AgentEvent::Kind::kStarted:
        if (a.steps.count(ev.id)) hooks_.started(ev.id);
        break;
      case AgentEvent::Kind::kFailed:
        if (a.steps.erase(ev.id)) hooks_.failed(ev.id, ev.error);
        break;
      case AgentEvent::Kind::kExited:
        if (a.steps.erase(ev.id)) hooks_.exited(ev.id, ExitInfo{ev.signaled, ev.code, ev.memory_limit_mib});
        break;
      case AgentEvent::Kind::kError:
        // About a step we sent: it was refused before it started.
        if (!ev.id.empty() && a.steps.erase(ev.id)) hooks_.failed(ev.id, ev.error);
        else Log()->warn("node agent of {}: {}", node, ev.error);
        break;
      case AgentEvent::Kind::kPong:
        break;
    }
  }
  if (a.channel->closed()) Gone(node, "its channel ended");
}

void NodeAgents::Gone(const std::string& node, const std::string& why) {
  auto it = agents_.find(node);
  if (it == agents_.end()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.erase(node);
  }
  Log()->warn("node agent of {} is gone ({}); its steps were killed, later ones go through srun", node, why);
  if (rendezvous_) rendezvous_->Forget(node);
  Unwatch(it->second);
  const std::set<std::string> steps = std::move(it->second.steps);
  agents_.erase(it);  // kills the agent process if it is still there
  for (const std::string& id : steps) hooks_.exited(id, ExitInfo{true, SIGKILL});
}

void NodeAgents::CloseAll(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.clear();
  }
  rendezvous_.reset();
  for (auto& [node, a] : agents_) {
    Unwatch(a);
    a.channel->Close();
  }
  for (auto& [node, a] : agents_) (void)a.channel->WaitExit(grace);
  agents_.clear();
}

}  // namespace scimesh::launcher
