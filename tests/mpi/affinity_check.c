/* An unmodified MPI program for system tests: each rank reads its own entry of
 * placement.json (its cpus, as the launcher assigned them) and compares it
 * with its affinity (sched_getaffinity), which scimesh-rank set before exec.
 * Rank 0 writes output.json {"ranks": N, "mismatches": M, "hosts": [...]}. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The "cpus" list of rank `rank` in placement.json, as a cpu_set_t (a tiny
 * scanner: the file is the launcher's own, one rank object per entry). */
static int AssignedCpus(int rank, cpu_set_t* set) {
  FILE* f = fopen("placement.json", "r");
  if (f == NULL) return -1;
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char key[32];
  snprintf(key, sizeof key, "\"rank\":%d,", rank);
  char* at = strstr(text, key);
  if (at == NULL) return -1;
  char* cpus = strstr(at, "\"cpus\":[");
  if (cpus == NULL) return -1;
  CPU_ZERO(set);
  for (char* p = cpus + 8; *p != ']';) {
    CPU_SET((int)strtol(p, &p, 10), set);
    if (*p == ',') ++p;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cpu_set_t want, have;
  int mismatch = 1;
  if (AssignedCpus(rank, &want) == 0 && sched_getaffinity(0, sizeof have, &have) == 0) {
    mismatch = CPU_EQUAL(&want, &have) ? 0 : 1;
  }
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  int mismatches = 0;
  MPI_Reduce(&mismatch, &mismatches, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  char* hosts = rank == 0 ? malloc((size_t)size * 64) : NULL;
  MPI_Gather(host, 64, MPI_CHAR, hosts, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    FILE* out = fopen("output.json", "w");
    fprintf(out, "{\"ranks\":%d,\"mismatches\":%d,\"hosts\":[", size, mismatches);
    for (int r = 0; r < size; ++r) fprintf(out, "%s\"%s\"", r ? "," : "", hosts + r * 64);
    fprintf(out, "]}\n");
    fclose(out);
    free(hosts);
  }
  MPI_Finalize();
  return 0;
}
