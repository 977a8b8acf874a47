#pragma once

/*
 * A small text file rewritten now and then (the metrics file), written
 * off the loop by one thread of its own through a single-slot mailbox:
 * posting replaces whatever text still waits, so memory stays one text
 * however long the file system takes, and the loop never waits for it
 * (the lock is held only to copy a text in or out, never across I/O).
 *
 * Why a thread and not the engine's io_uring: the file is the daemon's,
 * not a transfer's; it must keep being written while the RDMA device is
 * gone (when the numbers matter most) and the engine's ring is the
 * engine's to use. A thread stuck in a dead NFS mount costs one thread,
 * and nothing else waits on it.
 */

#include <stddef.h>
#include <stdint.h>

#include "stats.h"

#define TEXTFILE_TEXT_MAX       STATS_TEXT_MAX

struct textfile;

/* The writer; its thread starts with the first post. 0 or -ENOMEM. */
int textfile_new(struct textfile **out);

/*
 * Hand @text (@len bytes, at most TEXTFILE_TEXT_MAX) for @path (absolute)
 * to the writer, replacing a text it has not started on. 0, -EINVAL, or
 * -errno when the thread cannot start.
 */
int textfile_post(struct textfile *t, const char *path, const char *text, size_t len);

/*
 * The last write that finished: 0 (or none yet), or -errno with the step
 * that failed in *@what ("creating", "writing", "renaming"). *@busy_usec:
 * how long the write in progress has run, 0 when none is.
 */
int textfile_state(struct textfile *t, const char **what, uint64_t *busy_usec);

/* Stop the thread; a write in progress is left to finish and then frees
 * the writer itself. Never waits on the file system. Safe on NULL. */
void textfile_free(struct textfile *t);

/*
 * The write itself, synchronous: @text into ".NAME.tmp" beside @path, mode
 * 0644 whatever the umask (a collector running as another user reads it),
 * then renamed over @path. Nothing is left half-written: readers see the
 * old file or the new one. 0, or -errno with the step in *@what.
 */
int textfile_write(const char *path, const char *text, size_t len, const char **what);
