// A thread started with every signal blocked.
#include "plugin/quiet_thread.h"

#include <pthread.h>
#include <signal.h>

#include <exception>
#include <string>

namespace scimesh::spank {

Result<std::thread> StartQuietThread(std::function<void()> body) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread thread;
  std::string error;
  try {
    thread = std::thread(std::move(body));
  } catch (const std::exception& e) {
    error = e.what();
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!thread.joinable()) return Status::Internal("cannot start a thread: " + error);
  return thread;
}

}  // namespace scimesh::spank
