// NodeAgents: the launcher's node agents (docs/agent.md), one per node of
// the allocation, each an AgentChannel watched by the event loop. It starts
// them, says which are ready, sends `start`/`signal` for the steps the lease
// engine gives them and turns their events into calls of Hooks.
//
// Each agent is asked to connect back over TCP (the direct channel,
// docs/agent.md): AgentRendezvous proves the connection, and the channel
// moves onto it; an agent that cannot connect stays on srun's stdio.
//
// An agent whose channel ends (it died, or its srun did) is gone for good:
// every step it had started is reported ended (killed by SIGKILL: its
// keeper kills what is left), and later steps of that node go through srun.
//
// Thread-safety: Ready() from any thread; everything else on the loop's
// thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "launcher/event_loop.h"
#include "launcher/step/agent_channel.h"
#include "launcher/step/agent_rendezvous.h"
#include "launcher/step/step_process.h"

namespace scimesh::launcher {

class NodeAgents {
 public:
  struct Hooks {
    std::function<void(const std::string& id)> started;
    std::function<void(const std::string& id, const std::string& error)> failed;
    std::function<void(const std::string& id, const ExitInfo& exit)> exited;
  };

  NodeAgents(EventLoop& loop, Hooks hooks) : loop_(loop), hooks_(std::move(hooks)) {}
  ~NodeAgents();  // closes every channel (the agents stop their steps and exit)

  // Starts `argv_for(node)` for each node (with `--connect` added and the
  // port and secret as its first stdin line when the rendezvous port is
  // open); each is used once it says ready.
  void Launch(const std::vector<std::string>& nodes,
              const std::function<std::vector<std::string>(const std::string&)>& argv_for);
  bool Ready(const std::string& node) const;

  // The agent of `node` forks the step `start.id`; an error: it is gone.
  Status Start(const std::string& node, const agent::AgentStart& start);
  // To the step's whole process group.
  void Signal(const std::string& node, const std::string& id, int sig);

  // Closes every agent's stdin and waits up to `grace` for each to exit.
  void CloseAll(std::chrono::milliseconds grace);

 private:
  struct Agent {
    std::unique_ptr<AgentChannel> channel;
    std::set<std::string> steps;  // started or being started
  };
  void OnReadable(const std::string& node);
  void OnDirect(const std::string& node, UniqueFd socket);
  void Unwatch(const Agent& a);
  void Gone(const std::string& node, const std::string& why);

  EventLoop& loop_;
  const Hooks hooks_;
  std::map<std::string, Agent> agents_;
  std::unique_ptr<AgentRendezvous> rendezvous_;  // null: no direct channels
  mutable std::mutex mu_;
  std::set<std::string> ready_;
};

}  // namespace scimesh::launcher
