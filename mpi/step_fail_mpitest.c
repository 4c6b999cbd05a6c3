/* MPI test of scimesh_step_fail through the C API, compiled as C (run under
 * mpirun with 4 ranks): an unknown class is SCIMESH_ERR_INVALID and writes
 * nothing; rank 3's failure is the one in failure.json, and a second call on
 * rank 3 and a later one on rank 1 change nothing; when every rank fails at
 * once, exactly one failure is written whole. Exit 0 only when all hold. */
#include <mpi.h>
#include <scimesh/step.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char kLease[] =
    "{\"lease_id\":\"l_0c8e51d2a4b94f17\",\"run_id\":\"r_6f1c2a9e0b7d4c35\",\"step_id\":\"solve\","
    "\"workflow\":\"mesh\",\"version\":\"1\",\"attempt\":1,\"input\":{},\"previous\":{},\"run_state\":{},"
    "\"idempotency_key\":\"r_6f1c2a9e0b7d4c35/solve\",\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\","
    "\"span_id\":\"00f067aa0ba902b7\",\"delivery\":\"at_least_once\",\"resources\":{\"nodes\":1,"
    "\"ranks_per_node\":4,\"cpus_per_rank\":1,\"gpus_per_rank\":0},\"walltime_s\":60,\"input_artifacts\":[],"
    "\"lease_ttl_ms\":30000,\"heartbeat_ms\":10000,\"lease_expires_at\":\"2026-11-29T08:00:41.300Z\"}";

static int failures = 0;
static int rank = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "rank %d: FAILED: %s (%s)\n", rank, what, scimesh_step_last_error());
    ++failures;
  }
}

/* The whole of `path` in a static buffer ("" when absent). */
static const char* slurp(const char* path) {
  static char buf[8192];
  buf[0] = '\0';
  FILE* f = fopen(path, "r");
  if (f == NULL) return buf;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* Rank 0 makes an attempt directory with lease.json; every rank gets its path. */
static void make_attempt_dir(char* dir, size_t size) {
  if (rank == 0) {
    snprintf(dir, size, "/tmp/scimesh-step-fail-XXXXXX");
    if (mkdtemp(dir) == NULL) MPI_Abort(MPI_COMM_WORLD, 2);
    char path[512];
    snprintf(path, sizeof path, "%s/lease.json", dir);
    FILE* f = fopen(path, "w");
    fputs(kLease, f);
    fclose(f);
  }
  MPI_Bcast(dir, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void remove_attempt_dir(const char* dir) {
  if (rank != 0) return;
  char path[512];
  snprintf(path, sizeof path, "%s/lease.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/failure.json", dir);
  unlink(path);
  rmdir(dir);
}

static void first_failure_wins(const char* host) {
  char dir[256], path[512];
  make_attempt_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/failure.json", dir);
  scimesh_step* step = NULL;
  expect(scimesh_step_begin(MPI_COMM_WORLD, dir, &step) == SCIMESH_OK, "begin");
  if (step == NULL) MPI_Abort(MPI_COMM_WORLD, 3);

  const char* refused[] = {"Fatal", "unservable", "preempted", "cancelled", ""};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; ++i) {
    expect(scimesh_step_fail(step, refused[i], "x") == SCIMESH_ERR_INVALID, refused[i]);
  }
  expect(scimesh_step_fail(step, NULL, "x") == SCIMESH_ERR_INVALID, "NULL class");
  expect(scimesh_step_fail(step, "fatal", NULL) == SCIMESH_ERR_INVALID, "NULL message");
  expect(scimesh_step_fail(NULL, "fatal", "x") == SCIMESH_ERR_INVALID, "NULL step");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) expect(access(path, F_OK) != 0, "a refused class wrote failure.json");
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 3) {
    expect(scimesh_step_fail(step, "fatal", "bad mesh: 0 cells") == SCIMESH_OK, "rank 3 fails");
    expect(scimesh_step_fail(step, "retryable", "second call") == SCIMESH_OK, "rank 3 fails again");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) expect(scimesh_step_fail(step, "timeout", "rank 1 after") == SCIMESH_OK, "rank 1 fails after");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    char want[512];
    snprintf(want, sizeof want, "{\"class\":\"fatal\",\"message\":\"bad mesh: 0 cells\",\"rank\":3,\"host\":\"%s\"}\n",
             host);
    const char* got = slurp(path);
    if (strcmp(got, want) != 0) fprintf(stderr, "failure.json: %s\nwanted:       %s", got, want);
    expect(strcmp(got, want) == 0, "failure.json holds rank 3's failure");
  }
  expect(scimesh_step_end(&step) == SCIMESH_OK, "end");
  remove_attempt_dir(dir);
}

/* Every rank fails at once: one file, whole, from one of them. */
static void one_of_many_at_once(void) {
  char dir[256], path[512], message[64];
  make_attempt_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/failure.json", dir);
  scimesh_step* step = NULL;
  expect(scimesh_step_begin(MPI_COMM_WORLD, dir, &step) == SCIMESH_OK, "begin");
  if (step == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  snprintf(message, sizeof message, "from rank %d", rank);
  MPI_Barrier(MPI_COMM_WORLD);
  expect(scimesh_step_fail(step, "retryable", message) == SCIMESH_OK, "every rank fails");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const char* got = slurp(path);
    int writer = -1, named = -2;
    const char* m = strstr(got, "\"message\":\"from rank ");
    const char* r = strstr(got, "\"rank\":");
    if (m != NULL) named = atoi(m + strlen("\"message\":\"from rank "));
    if (r != NULL) writer = atoi(r + strlen("\"rank\":"));
    if (writer != named) fprintf(stderr, "failure.json: %s", got);
    expect(writer == named && writer >= 0 && writer < 4, "one rank's failure, whole");
  }
  expect(scimesh_step_end(&step) == SCIMESH_OK, "end");
  remove_attempt_dir(dir);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* No coordinator here: rank 0 does not take the lease over (it says so). */
  unsetenv("SCIMESH_URL");
  unsetenv("SCIMESH_ATTEMPT_DIR");
  char host[256] = "";
  gethostname(host, sizeof host);
  first_failure_wins(host);
  one_of_many_at_once();
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("step_fail: %s\n", total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
