#include "launcher/step/agent_channel.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

using namespace std::chrono_literals;

// A stand-in agent: a shell that prints `lines` and then waits for stdin.
AgentChannel FakeAgent(const std::string& lines) {
  auto channel = AgentChannel::Spawn({"/bin/sh", "-c", "printf '" + lines + "'; cat >/dev/null"});
  EXPECT_TRUE(channel.ok()) << channel.status().ToString();
  return std::move(*channel);
}

// Collects what ReadEvents returns until `want` events and errors came or the
// bound passed.
void Collect(AgentChannel& c, size_t want, std::vector<AgentEvent>& events, std::vector<Status>& errors) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (events.size() + errors.size() < want && std::chrono::steady_clock::now() < until) {
    auto got = c.WaitEvents(1s);
    if (!got.ok()) {
      errors.push_back(got.status());
      continue;
    }
    events.insert(events.end(), got->begin(), got->end());
  }
}

// Attack: an agent (or whatever answers through srun) prints garbage. Each
// bad line is a Status for the launcher, never a crash, and the good lines
// around it are still delivered in order.
TEST(AgentChannel, AMalformedEventLineIsAStatusAndTheRestIsServed) {
  AgentChannel c = FakeAgent(R"({"ev":"pong"}\nnot json\n{"ev":"unheard"}\n{"ev":"pong"}\n)");
  std::vector<AgentEvent> events;
  std::vector<Status> errors;
  Collect(c, 4, events, errors);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, AgentEvent::Kind::kPong);
  EXPECT_EQ(events[1].kind, AgentEvent::Kind::kPong);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].message().find("malformed JSON"), std::string::npos) << errors[0].ToString();
  EXPECT_NE(errors[1].message().find("unknown ev 'unheard'"), std::string::npos) << errors[1].ToString();
}

TEST(AgentChannel, AMissingAgentProgramIsNotFound) {
  auto c = AgentChannel::Spawn({"/nonexistent/scimesh-agent"});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kNotFound);
  EXPECT_NE(c.status().message().find("cannot start the agent 'scimesh-agent'"), std::string::npos);
}

// Failure modelled: the agent died. Writing to it must be a Status -- a
// SIGPIPE would kill the launcher (and this test) -- and the end of the
// channel is seen.
TEST(AgentChannel, WritingToADeadAgentIsAStatusNotASignal) {
  auto c = AgentChannel::Spawn({"/bin/true"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->WaitExit(20s), 0);
  auto events = c->WaitEvents(5s);
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(c->closed());
  Status s;
  for (int i = 0; i < 3 && s.ok(); ++i) s = c->Ping();  // the first send may still be buffered
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
}

// Closing the channel is the agent's EOF: a child reading stdin ends.
TEST(AgentChannel, CloseEndsTheAgentsStdin) {
  auto c = AgentChannel::Spawn({"/bin/sh", "-c", "cat >/dev/null; exit 7"});
  ASSERT_TRUE(c.ok());
  c->Close();
  EXPECT_EQ(c->WaitExit(20s), 7);
  EXPECT_EQ(c->Ping().code(), Code::kCancelled);
}

}  // namespace
}  // namespace scimesh::launcher
