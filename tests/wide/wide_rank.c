/* A rank of the wide-step system tests (tests/wide). Every rank writes its
 * pid to pids/<host>.<rank> and its TRACEPARENT to traceparent/<host>.<rank>
 * in its working directory (the attempt directory), then waits for the end:
 *   native (linked with libscimesh_mpi), input {"mode":"cancel"}: polls
 *     cancelled() and prints "rank R: cancelled=1 at <epoch s>" when it turns;
 *   native, input {"mode":"ignore"}: never polls; only the SPANK plugin ends it;
 *   built without SCIMESH_NATIVE (an unmodified program for scimesh-rank):
 *     sleeps until a signal ends it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#ifdef SCIMESH_NATIVE
#include <scimesh/step.h>
#endif

/* Writes `text` and a newline to DIR/<host>.<rank>. */
static void WriteRankFile(const char* dir, int rank, const char* text) {
  char host[64] = {0}, path[160];
  gethostname(host, sizeof host - 1);
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/%s.%d", dir, host, rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
  fprintf(f, "%s\n", text);
  fclose(f);
}

/* The rank's TRACEPARENT to traceparent/, then its pid to pids/ (last: the
 * tests wait for every pid file). */
static void WritePid(int rank) {
  const char* traceparent = getenv("TRACEPARENT");
  WriteRankFile("traceparent", rank, traceparent != NULL ? traceparent : "(unset)");
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  WriteRankFile("pids", rank, pid);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#ifdef SCIMESH_NATIVE
  scimesh_step* step = NULL;
  if (scimesh_step_begin(MPI_COMM_WORLD, NULL, &step) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  char input[1024];
  size_t needed = 0;
  if (scimesh_step_input(step, input, sizeof input, &needed) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 4);
  WritePid(rank);
  if (strstr(input, "\"mode\":\"ignore\"") != NULL) {
    for (;;) sleep(60);
  }
  int cancelled = 0;
  while (!cancelled) {
    scimesh_step_cancelled(step, &cancelled);
    if (!cancelled) usleep(20000);
  }
  struct timeval now;
  gettimeofday(&now, NULL);
  printf("rank %d: cancelled=1 at %ld.%06ld\n", rank, (long)now.tv_sec, (long)now.tv_usec);
  fflush(stdout);
  scimesh_step_end(&step);
#else
  WritePid(rank);
  for (;;) sleep(60);
#endif
  MPI_Finalize();
  return 0;
}
