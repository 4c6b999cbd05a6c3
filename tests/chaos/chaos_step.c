/* The chaos campaign's native step (linked with libscimesh_mpi): input
 * {"ms": N}. Every rank appends its wall-clock ms to alive.<rank> in the
 * attempt directory every 100 ms (the checker's view of when the body ran)
 * and polls cancelled() every 20 ms, for N ms; then rank 0 writes the
 * artifact out.bin (bytes unique to this attempt) and the output. Cancelled:
 * it stops and exits 1, as a well-behaved program should. */
#include <mpi.h>
#include <scimesh/step.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static long long NowMs(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void Tick(int rank) {
  char path[32];
  snprintf(path, sizeof path, "alive.%d", rank);
  FILE* f = fopen(path, "a");
  if (f == NULL) return;
  fprintf(f, "%lld\n", NowMs());
  fclose(f);
}

/* out.bin: <run>/<step>/<attempt> (the attempt directory's last three
 * names, never the full path), pid and time, then 4 KiB of pattern. */
static int WriteArtifact(scimesh_step* step) {
  char cwd[512] = {0};
  if (getcwd(cwd, sizeof cwd - 1) == NULL) return 1;
  FILE* f = fopen("out.bin", "w");
  if (f == NULL) return 1;
  const char* name = cwd + strlen(cwd);
  for (int slashes = 0; name > cwd && slashes < 3; --name) slashes += name[-1] == '/';
  fprintf(f, "%s %d %lld\n", name, (int)getpid(), NowMs());
  unsigned x = (unsigned)getpid() * 2654435761u ^ (unsigned)NowMs();
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    fputc((int)(x >> 16) & 0xff, f);
  }
  fclose(f);
  return scimesh_step_add_artifact(step, "out.bin", "out.bin", "application/octet-stream") != SCIMESH_OK;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  scimesh_step* step = NULL;
  if (scimesh_step_begin(MPI_COMM_WORLD, NULL, &step) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 3);
  char input[1024];
  size_t needed = 0;
  if (scimesh_step_input(step, input, sizeof input, &needed) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 4);
  const char* p = strstr(input, "\"ms\":");
  long long ms = p ? atoll(p + 5) : 1000;

  long long start = NowMs(), last_tick = 0;
  int cancelled = 0;
  while (!cancelled && NowMs() - start < ms) {
    if (NowMs() - last_tick >= 100) {
      Tick(rank);
      last_tick = NowMs();
    }
    scimesh_step_cancelled(step, &cancelled);
    if (!cancelled) usleep(20000);
  }
  Tick(rank);
  int rc = 0;
  if (!cancelled && rank == 0) {
    char out[64];
    snprintf(out, sizeof out, "{\"ok\":true,\"ms\":%lld}", ms);
    rc = WriteArtifact(step) || scimesh_step_set_output(step, out) != SCIMESH_OK;
  }
  int end = scimesh_step_end(&step);
  MPI_Finalize();
  return cancelled || rc || end != SCIMESH_OK;
}
