/* A native step (libscimesh_mpi) that stops on its own when its run is
 * cancelled, for tests/plugin/owner-cancel.sh. Every rank writes running.<rank>
 * in the attempt directory and polls scimesh_step_cancelled() every 20 ms.
 * Cancelled: it writes cancelled.<rank>, takes argv[1] ms (a checkpoint),
 * writes stopped.<rank> and exits 0. A SIGTERM writes sigterm.<rank> and ends
 * the rank (exit 143): the test fails on that file. Never cancelled within
 * 120 s: exit 2. */
#include <fcntl.h>
#include <mpi.h>
#include <scimesh/step.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char sigterm_file[32];

static void Touch(const char* name) {
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) close(fd);
}

static void OnSigterm(int sig) {
  (void)sig;
  Touch(sigterm_file); /* open/close: async-signal-safe */
  _exit(143);
}

static void Mark(const char* what, int rank) {
  char name[32];
  snprintf(name, sizeof name, "%s.%d", what, rank);
  Touch(name);
}

static void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long checkpoint_ms = argc > 1 ? atol(argv[1]) : 2000;
  snprintf(sigterm_file, sizeof sigterm_file, "sigterm.%d", rank);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnSigterm;
  sigaction(SIGTERM, &sa, NULL);

  scimesh_step* step = NULL;
  if (scimesh_step_begin(MPI_COMM_WORLD, NULL, &step) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  Mark("running", rank);
  int cancelled = 0;
  for (int i = 0; i < 6000 && !cancelled; ++i) {
    scimesh_step_cancelled(step, &cancelled);
    if (!cancelled) SleepMs(20);
  }
  if (!cancelled) {
    scimesh_step_end(&step);
    MPI_Finalize();
    return 2;
  }
  Mark("cancelled", rank);
  SleepMs(checkpoint_ms);
  Mark("stopped", rank);
  scimesh_step_end(&step);
  MPI_Finalize();
  return 0;
}
