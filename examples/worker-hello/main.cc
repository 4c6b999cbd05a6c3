// worker-hello: serves one step of workflow "hello" (version 1) with the
// Worker API, then exits 0 if the coordinator recorded it as completed.
//
//   export SCIMESH_URL=http://127.0.0.1:8470 SCIMESH_TOKEN_FILE=$HOME/.scimesh/token
//   worker-hello [--spool DIR] [--forever]
//
// Start a run with input {"name": "mesh"} and the step answers
// {"greeting": "hello, mesh"}, with the greeting uploaded as greeting.txt.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "protocol/runtime/worker.h"
#include "protocol/util/json_io.h"

namespace {

using scimesh::StepContext;
using scimesh::StepResult;

// The body: what a real step would compute, here a greeting.
StepResult Greet(StepContext& ctx) {
  const auto& input = ctx.input();
  if (!input.IsObject() || !input.HasMember("name") || !input["name"].IsString()) {
    return StepResult::Fatal("input must be an object with a string 'name'");
  }
  const std::string greeting = std::string("hello, ") + input["name"].GetString();
  if (auto s = ctx.WriteArtifact("greeting.txt", greeting + "\n", "text/plain"); !s.ok()) {
    return StepResult::Retryable(s.message());
  }
  ctx.SetUsage("greetings", 1);
  rapidjson::StringBuffer out;  // a writer, so any name makes valid JSON
  scimesh::JsonWriter w(out);
  w.StartObject();
  scimesh::WriteString(w, "greeting", greeting);
  w.EndObject();
  return StepResult::Output(scimesh::JsonText(out));
}

scimesh::WorkflowDefinition HelloWorkflow() {
  scimesh::StepDefinition greet;
  greet.id = "greet";
  greet.input_json = R"({"name": "{{input.name}}"})";
  greet.walltime_s = 60;
  return scimesh::WorkflowDefinition{"hello", "1", {greet}};
}

int Run(int argc, char** argv) {
  std::string spool = "scimesh-spool";
  bool forever = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--spool") == 0 && i + 1 < argc) spool = argv[++i];
    else if (std::strcmp(argv[i], "--forever") == 0) forever = true;
    else {
      (void)std::fprintf(stderr, "usage: worker-hello [--spool DIR] [--forever]\n"
                                 "  token from SCIMESH_TOKEN_FILE or SCIMESH_TOKEN, URL from SCIMESH_URL\n");
      return 2;
    }
  }
  auto token = scimesh::LoadTokenFromEnvironment();
  if (!token.ok()) {
    (void)std::fprintf(stderr, "worker-hello: %s\n", token.status().ToString().c_str());
    return 2;
  }
  ::mkdir(spool.c_str(), 0700);

  scimesh::WorkerOptions options;
  const char* url = std::getenv("SCIMESH_URL");
  options.client.coordinator_url = url != nullptr ? url : "http://127.0.0.1:8470";
  options.client.token = *token;
  options.spool_dir = spool;
  bool completed = false;
  scimesh::Worker* self = nullptr;
  options.on_lease_finished = [&](const scimesh::LeaseReport& report) {
    completed = report.end == scimesh::LeaseEnd::kCompleted;
    if (!forever) self->Stop();  // one step served: done
  };
  scimesh::Worker worker(options);
  self = &worker;
  if (auto s = worker.Register(HelloWorkflow(), {{"greet", Greet}}); !s.ok()) {
    (void)std::fprintf(stderr, "worker-hello: %s\n", s.ToString().c_str());
    return 1;
  }

  // SIGINT/SIGTERM stop the worker cleanly (running leases finish first).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    worker.Stop();
  });

  const scimesh::Status served = worker.Serve();
  // Release the waiter: the waiter blocks SIGTERM and takes it with sigwait, so
  // this wakes it and terminates nothing.
  pthread_kill(waiter.native_handle(), SIGTERM);  // NOLINT(bugprone-bad-signal-to-kill-thread,cert-pos44-c)
  waiter.join();
  if (!served.ok()) {
    (void)std::fprintf(stderr, "worker-hello: %s\n", served.ToString().c_str());
    return 1;
  }
  return completed || forever ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "worker-hello: unexpected error: %s\n", e.what());
    return 1;
  }
}
