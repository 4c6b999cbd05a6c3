/* scimesh/step.h: the C API of libscimesh_mpi, the in-job runtime of a step.
 * SPDX-License-Identifier: MIT
 *
 * A step is one lease, however many ranks run it. Rank 0 heartbeats the lease
 * for the whole job; when the lease is lost (fenced, run over, deadline
 * passed) every rank's scimesh_step_cancelled() turns true within one poll.
 * The final report (complete/fail) is sent by the launcher after the job
 * exits, from the files this API writes into the attempt directory
 * (failure.json, when a rank called scimesh_step_fail, comes first).
 *
 * Conventions:
 *  - Every function returns an int: SCIMESH_OK (0) or an error code;
 *    scimesh_strerror() names it, scimesh_step_last_error() says why.
 *  - Buffers are caller-owned. Functions that fill a buffer take its size and
 *    report the size needed (including the terminating NUL) through `needed`;
 *    a buffer too small gives SCIMESH_ERR_TRUNCATED and is left untouched.
 *  - Collective functions (begin, end) must be called by every rank of the
 *    communicator. The others are local and may be called by any rank; the
 *    output, state patch and usage of rank 0 are the step's (calls on other
 *    ranks succeed and are ignored); artifacts may be added, and the step
 *    failed, by any rank.
 *  - A handle is used by one thread at a time (the thread that called MPI).
 *  - No function throws, aborts or calls exit().
 */
#ifndef SCIMESH_STEP_H
#define SCIMESH_STEP_H

#include <mpi.h>
#include <stddef.h>

#if defined(__GNUC__)
#define SCIMESH_API __attribute__((visibility("default")))
#else
#define SCIMESH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum scimesh_error {
  SCIMESH_OK = 0,
  SCIMESH_ERR_INVALID = 1,     /* a bad argument (NULL handle, malformed JSON) */
  SCIMESH_ERR_NO_LEASE = 2,    /* no attempt directory, or no valid lease in it */
  SCIMESH_ERR_IO = 3,          /* reading or writing a file failed */
  SCIMESH_ERR_MPI = 4,         /* an MPI call failed */
  SCIMESH_ERR_TRUNCATED = 5,   /* the caller's buffer is too small */
  SCIMESH_ERR_STATE = 6,       /* called in the wrong order (e.g. after end) */
  SCIMESH_ERR_LEASE_LOST = 7,  /* the lease is lost; the step should stop */
  SCIMESH_ERR_INTERNAL = 8     /* a bug in scimesh; please report it */
};

/* The opaque per-rank handle of a running step. */
typedef struct scimesh_step scimesh_step;

/* A static, human-readable name of an error code. Never NULL. */
SCIMESH_API const char* scimesh_strerror(int code);

/* Why the last call on this thread failed (a static or thread-local string,
 * valid until the next scimesh call on this thread). Never NULL. */
SCIMESH_API const char* scimesh_step_last_error(void);

/* Begins the step on `comm` (collective). `attempt_dir` is the attempt
 * directory the launcher made; NULL means $SCIMESH_ATTEMPT_DIR. Reads the lease,
 * pins this rank to the cores assigned to it (placement.json, when present),
 * and on rank 0 takes the lease over from the launcher and heartbeats it on a
 * thread of its own. On success *step is a new handle owned by the caller and
 * released by scimesh_step_end(). */
SCIMESH_API int scimesh_step_begin(MPI_Comm comm, const char* attempt_dir, scimesh_step** step);

/* Fortran binding helper: the same with a Fortran communicator handle. */
SCIMESH_API int scimesh_step_begin_f(MPI_Fint comm, const char* attempt_dir, scimesh_step** step);

/* The step's rendered input (a JSON text) into `buf`. */
SCIMESH_API int scimesh_step_input(const scimesh_step* step, char* buf, size_t size, size_t* needed);

/* The outputs of the steps this one needs, as a JSON object keyed by step id. */
SCIMESH_API int scimesh_step_previous(const scimesh_step* step, char* buf, size_t size, size_t* needed);

/* Sets *cancelled to 1 once the lease is lost, else 0. Cheap (no blocking, no
 * collective): poll it every iteration. Monotonic: once 1, always 1. Every
 * rank sees 1 within one poll after the news reaches it (an O(log N)
 * nonblocking broadcast from rank 0, driven by these polls). */
SCIMESH_API int scimesh_step_cancelled(scimesh_step* step, int* cancelled);

/* Collective agreement: *cancelled is 1 on every rank iff any rank has seen the
 * cancellation. Costs one allreduce; use it where all ranks must leave a loop
 * at the same iteration. */
SCIMESH_API int scimesh_step_cancelled_all(scimesh_step* step, int* cancelled);

/* Progress (a JSON object, <= 4 KiB) sent with rank 0's next heartbeat. */
SCIMESH_API int scimesh_step_progress(scimesh_step* step, const char* json);

/* The step's output (a JSON object), its run-state patch (a JSON object) and
 * the usage it measured (a JSON object of numbers). Rank 0's values count. */
SCIMESH_API int scimesh_step_set_output(scimesh_step* step, const char* json);
SCIMESH_API int scimesh_step_set_state_patch(scimesh_step* step, const char* json);
SCIMESH_API int scimesh_step_set_usage(scimesh_step* step, const char* json);

/* Adds the file at `path` as an output artifact named `name` (1-128 chars of
 * [A-Za-z0-9._-], not starting with '.'), copying it into the attempt
 * directory's artifacts/. `media_type` may be NULL (application/octet-stream).
 * The launcher uploads it before reporting the step complete. */
SCIMESH_API int scimesh_step_add_artifact(scimesh_step* step, const char* name, const char* path,
                              const char* media_type);

/* Records that the step failed, with a class and a message (any rank; local,
 * not collective). The first failure recorded by any rank of the step wins;
 * later calls, on any rank, return SCIMESH_OK and change nothing. The step
 * then ends as usual (scimesh_step_end, collective) and exits, or, when other
 * ranks cannot reach the end (they wait in a collective), calls MPI_Abort: the
 * launcher reports this failure either way, whatever the exit status.
 * `failure_class`: "retryable", "timeout", "invalid_output", "input_checksum"
 * or "fatal" (docs/protocol.md, the table under /fail); any other is
 * SCIMESH_ERR_INVALID. `message`: one line (<= 4 KiB is sent), no secrets. */
SCIMESH_API int scimesh_step_fail(scimesh_step* step, const char* failure_class, const char* message);

/* Ends the step (collective) and releases *step (set to NULL). Rank 0 stops
 * heartbeating and hands the lease back to the launcher, which uploads the
 * artifacts and sends the one final report. Returns SCIMESH_ERR_LEASE_LOST
 * when the lease was lost (the launcher reports nothing more for it). */
SCIMESH_API int scimesh_step_end(scimesh_step** step);

#ifdef __cplusplus
}
#endif

#endif /* SCIMESH_STEP_H */
