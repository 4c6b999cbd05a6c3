/* A small step written in C against scimesh/step.h (system test program).
 * Input {"terms": N, "wait_for_cancel": bool}: every rank sums its share of
 * 1..N, polling cancelled() each iteration; rank 0 writes {"sum": S, "ranks": R,
 * "language": "c"} and a small artifact. With wait_for_cancel it reports the
 * progress {"phase": "waiting"} and loops until the lease is lost. With
 * {"fail_rank": R, "fail_class": C, "fail_message": M} rank R fails the step
 * with scimesh_step_fail(C, M) first; with "fail_abort": true it then calls
 * MPI_Abort while the others wait in a barrier, else the step goes on and
 * ends as usual (output and exit 0). */
#include <mpi.h>
#include <scimesh/step.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static long TermsOf(const char* input) {
  const char* p = strstr(input, "\"terms\":");
  return p ? atol(p + 8) : 1000;
}

/* The string value of "key" in the (compact) input, into out; "" if absent. */
static void StringOf(const char* input, const char* key, char* out, size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char* p = strstr(input, pattern);
  out[0] = '\0';
  if (p == NULL) return;
  p += strlen(pattern);
  size_t n = strcspn(p, "\"");
  if (n >= size) n = size - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

/* Rank fail_rank fails the step as the input says; with fail_abort, aborts. */
static void FailAsAsked(scimesh_step* step, const char* input, int rank) {
  const char* at = strstr(input, "\"fail_rank\":");
  if (at == NULL) return;
  char cls[64], message[256];
  StringOf(input, "fail_class", cls, sizeof cls);
  StringOf(input, "fail_message", message, sizeof message);
  const int abort_after = strstr(input, "\"fail_abort\":true") != NULL;
  if (rank == atoi(at + 12)) {
    int rc = scimesh_step_fail(step, cls, message);
    if (rc != SCIMESH_OK) {
      fprintf(stderr, "rank %d: fail: %s (%s)\n", rank, scimesh_strerror(rc), scimesh_step_last_error());
      MPI_Abort(MPI_COMM_WORLD, 7);
    }
    if (abort_after) MPI_Abort(MPI_COMM_WORLD, 9);
  }
  if (abort_after) MPI_Barrier(MPI_COMM_WORLD); /* never completes: MPI_Abort ends this rank */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  scimesh_step* step = NULL;
  int rc = scimesh_step_begin(MPI_COMM_WORLD, NULL, &step);
  if (rc != SCIMESH_OK) {
    fprintf(stderr, "rank %d: begin: %s (%s)\n", rank, scimesh_strerror(rc), scimesh_step_last_error());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  char input[4096];
  size_t needed = 0;
  rc = scimesh_step_input(step, input, sizeof input, &needed);
  if (rc != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 4);
  int wait_for_cancel = strstr(input, "\"wait_for_cancel\":true") != NULL;
  FailAsAsked(step, input, rank);

  if (wait_for_cancel) {
    scimesh_step_progress(step, "{\"phase\":\"waiting\"}"); /* sent with the next heartbeat */
    double t0 = MPI_Wtime();
    int cancelled = 0;
    while (!cancelled && MPI_Wtime() - t0 < 120) {
      scimesh_step_cancelled(step, &cancelled);
      if (!cancelled) usleep(2000);
    }
    struct timeval now;
    gettimeofday(&now, NULL);
    printf("rank %d: cancelled=%d at %ld.%06ld\n", rank, cancelled, (long)now.tv_sec, (long)now.tv_usec);
    fflush(stdout);
    rc = scimesh_step_end(&step);
    MPI_Finalize();
    return rc == SCIMESH_ERR_LEASE_LOST ? 0 : 1;
  }

  long terms = TermsOf(input), local = 0, sum = 0;
  for (long i = rank + 1; i <= terms; i += size) {
    local += i;
    int cancelled = 0;
    scimesh_step_cancelled(step, &cancelled);
    if (cancelled) break;
  }
  MPI_Reduce(&local, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  scimesh_step_progress(step, "{\"phase\":\"reduced\"}");
  if (rank == 0) {
    char out[256];
    snprintf(out, sizeof out, "{\"sum\":%ld,\"ranks\":%d,\"language\":\"c\"}", sum, size);
    if (scimesh_step_set_output(step, out) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 5);
    FILE* f = fopen("sum.txt", "w");
    fprintf(f, "%ld\n", sum);
    fclose(f);
    if (scimesh_step_add_artifact(step, "sum.txt", "sum.txt", "text/plain") != SCIMESH_OK) {
      fprintf(stderr, "add_artifact: %s\n", scimesh_step_last_error());
      MPI_Abort(MPI_COMM_WORLD, 6);
    }
  }
  rc = scimesh_step_end(&step);
  MPI_Finalize();
  return rc == SCIMESH_OK ? 0 : 1;
}
