#include "launcher/agent/agent_wire.h"

#include <gtest/gtest.h>

namespace scimesh::agent {
namespace {

TEST(AgentWire, AStartCommandRoundTrips) {
  AgentStart s;
  s.id = "run-1/step.a/3";
  s.argv = {"sh", "-c", "echo \"hi\"\n"};
  s.env = {{"OMP_NUM_THREADS", "2"}, {"EMPTY", ""}};
  s.unset = {"SLURM_*", "PMI_RANK"};
  s.cwd = "/spool/a";
  s.stdout_path = "/spool/a/out";
  s.stderr_path = "/spool/a/err";
  s.cpus = {0, 3};
  const std::string line = AgentCommandLine(s);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line, whatever the strings hold
  auto parsed = ParseAgentCommand(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& p = std::get<AgentStart>(*parsed);
  EXPECT_EQ(p.id, s.id);
  EXPECT_EQ(p.argv, s.argv);
  EXPECT_EQ(p.env, s.env);
  EXPECT_EQ(p.unset, s.unset);
  EXPECT_EQ(p.cwd, s.cwd);
  EXPECT_EQ(p.stdout_path, s.stdout_path);
  EXPECT_EQ(p.stderr_path, s.stderr_path);
  EXPECT_EQ(p.cpus, s.cpus);
}

// A short line: srun forwards one over 1,024 bytes in pieces, ~40 ms apart.
TEST(AgentWire, OutputFileNamesAreInTheWorkingDirectory) {
  auto c = ParseAgentCommand(R"({"op":"start","id":"a","argv":["ls"],"cwd":"/s/r/1","stdout":"step.out","stderr":"/e"})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const auto& s = std::get<AgentStart>(*c);
  EXPECT_EQ(s.stdout_path, "/s/r/1/step.out");
  EXPECT_EQ(s.stderr_path, "/e");
}

TEST(AgentWire, SignalStopAndPingRoundTrip) {
  auto sig = ParseAgentCommand(AgentCommandLine(AgentSignal{"a", 10}));
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(std::get<AgentSignal>(*sig).signal, 10);
  auto stop = ParseAgentCommand(AgentCommandLine(AgentStop{"a", 2500}));
  ASSERT_TRUE(stop.ok()) << stop.status().ToString();
  EXPECT_EQ(std::get<AgentStop>(*stop).grace_ms, 2500);
  auto ping = ParseAgentCommand(AgentCommandLine(AgentPing{}));
  ASSERT_TRUE(ping.ok());
  EXPECT_TRUE(std::holds_alternative<AgentPing>(*ping));
}

// Attack: every line on the agent's stdin is hostile. Each of these must be
// refused with a message naming the problem (never accepted, never a crash).
TEST(AgentWire, HostileCommandsAreRefusedWithTheReason) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "malformed JSON"},
      {"[1,2]", "must be an object"},
      {R"({"op":"format_disk"})", "unknown op 'format_disk'"},
      {R"({"op":7})", "op: must be a string"},
      {R"({"op":"ping","extra":1})", "unknown field 'extra'"},
      {R"({"op":"start","id":"a","argv":"ls"})", "argv: must be an array"},
      {R"({"op":"start","id":"a","argv":[]})", "argv: must hold 1 to 4096"},
      {R"({"op":"start","id":"a","argv":["ls",3]})", "argv: must hold strings only"},
      {R"({"op":"start","id":"a","argv":["l\u0000s"]})", "NUL"},
      {R"({"op":"start","id":"a b","argv":["ls"]})", "id: only printable ASCII"},
      {R"({"op":"start","id":"","argv":["ls"]})", "id: must be 1 to 128"},
      {R"({"op":"start","id":"a","argv":["ls"],"cwd":"rel/dir"})", "cwd: must be an absolute path"},
      {R"({"op":"start","id":"a","argv":["ls"],"stdout":5})", "stdout: must be a string"},
      {R"({"op":"start","id":"a","argv":["ls"],"stdout":"out.log"})", "stdout: must be an absolute path, or a file name in cwd"},
      {R"({"op":"start","id":"a","argv":["ls"],"cwd":"/d","stderr":"../e"})", "stderr: must be an absolute path, or a file name"},
      {R"({"op":"start","id":"a","argv":["ls"],"cwd":"/d","stderr":".."})", "stderr: must be an absolute path, or a file name"},
      {R"({"op":"start","id":"a","argv":["ls"],"env":{"A=B":"c"}})", "env: a variable name"},
      {R"({"op":"start","id":"a","argv":["ls"],"env":{"A":1}})", "env.A: must be a string"},
      {R"({"op":"start","id":"a","argv":["ls"],"unset":["A*B"]})", "unset: each must be a variable name"},
      {R"({"op":"start","id":"a","argv":["ls"],"unset":["A=B"]})", "unset: each must be a variable name"},
      {R"({"op":"start","id":"a","argv":["ls"],"unset":"SLURM_*"})", "unset: must be an array"},
      {R"({"op":"start","id":"a","argv":["ls"],"cpus":[-1]})", "cpus: each must be an integer from 0 to 1023"},
      {R"({"op":"start","id":"a","argv":["ls"],"cpus":[1024]})", "cpus: each must be"},
      {R"({"op":"start","id":"a","argv":["ls"],"cpus":[1.5]})", "cpus: each must be"},
      {R"({"op":"signal","id":"a","signal":0})", "signal: must be an integer from 1 to 64"},
      {R"({"op":"signal","id":"a","signal":"TERM"})", "signal: must be an integer"},
      {R"({"op":"stop","id":"a","grace_ms":-5})", "grace_ms: must be an integer from 0"},
      {R"({"op":"stop","id":"a","grace_ms":1e400})", "Number too big"},
      {R"({"op":"ping","op":"ping"})", "a key repeats"},
      {std::string(200, '[') + std::string(200, ']'), "nested deeper"},
  };
  for (const auto& [line, reason] : cases) {
    auto r = ParseAgentCommand(line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_NE(r.status().message().find(reason), std::string::npos) << line << " -> " << r.status().message();
  }
}

// Attack: a long multi-byte name in an unknown op. The error that echoes
// part of it must still be well-formed UTF-8, or the error event itself
// would be a malformed line for the launcher.
TEST(AgentWire, AnEchoedNameIsCutOnACharacterBoundary) {
  std::string op;
  for (int i = 0; i < 50; ++i) op += "\u20ac";  // the euro sign, three bytes in UTF-8
  auto r = ParseAgentCommand(R"({"op":")" + op + R"("})");
  ASSERT_FALSE(r.ok());
  AgentEvent e{AgentEvent::Kind::kError, "", 0, false, 0, r.status().message(), "", ""};
  const std::string line = AgentEventLine(e);
  auto back = ParseAgentEvent(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_NE(back->error.find("unknown op '\xe2\x82\xac"), std::string::npos) << back->error;
}

TEST(AgentWire, EveryEventRoundTrips) {
  using K = AgentEvent::Kind;
  AgentEvent exited{K::kExited, "s1", 4242, true, 9, "", "", ""};
  AgentEvent ready{K::kReady, "", 17, false, 0, "", "n1", "0.1.0"};
  AgentEvent failed{K::kFailed, "s2", 0, false, 0, "cannot start 'x': No such file or directory", "", ""};
  AgentEvent error{K::kError, "", 0, false, 0, "unknown op 'x'", "", ""};
  for (const AgentEvent& e : {exited, ready, failed, error}) {
    const std::string line = AgentEventLine(e);
    auto p = ParseAgentEvent(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_TRUE(p.ok()) << line << p.status().ToString();
    EXPECT_EQ(p->kind, e.kind);
    EXPECT_EQ(p->id, e.id);
    EXPECT_EQ(p->pid, e.pid);
    EXPECT_EQ(p->signaled, e.signaled);
    EXPECT_EQ(p->code, e.code);
    EXPECT_EQ(p->error, e.error);
    EXPECT_EQ(p->host, e.host);
    EXPECT_EQ(p->version, e.version);
  }
}

TEST(AgentWire, AnUnknownOrMalformedEventIsAnError) {
  EXPECT_FALSE(ParseAgentEvent(R"({"ev":"exploded"})").ok());
  EXPECT_FALSE(ParseAgentEvent(R"({"ev":"exited","id":"a","pid":1,"signaled":"no","code":0})").ok());
  EXPECT_FALSE(ParseAgentEvent("garbage").ok());
}

}  // namespace
}  // namespace scimesh::agent
