#pragma once

/*
 * Files arriving in the incoming directory. A transfer writes into a file
 * with no name (O_TMPFILE), reserved to its full size up front, and gets a
 * name only once it is complete: nothing half-written is ever visible, and
 * an abort at any point (or a crash) leaves nothing behind. Names here are
 * leaves already checked by name_check().
 */

#include <stdbool.h>
#include <stdint.h>

/*
 * Is there anything called @name directly beneath @dirfd (a symlink counts,
 * and is not followed)? 1, 0, or -errno.
 */
int incoming_exists(int dirfd, const char *name);

enum incoming_verdict {
        INCOMING_OK = 0,
        INCOMING_NO_SPACE,      /* not enough free space (or quota) */
        INCOMING_IO,            /* any other failure: see the -errno */
};

/*
 * Open a nameless file beneath @dirfd for @size bytes, after checking the
 * file system has that much free. Returns the fd, or -errno with *@verdict
 * set. The caller then reserves the space with fallocate(@fd, 0, 0, @size)
 * (the daemon does it through io_uring: on some file systems it is slow).
 */
int incoming_open(int dirfd, uint64_t size, enum incoming_verdict *verdict);

/* What fallocate's result means for the transfer: a file system that
 * cannot reserve (-EOPNOTSUPP) is fine, write errors will still tell. */
enum incoming_verdict incoming_reserve_verdict(int r);

/*
 * Give the (fsynced) nameless file @fd the name @name beneath @dirfd, then
 * fsync the directory. Without @overwrite an existing name is never
 * replaced (-EEXIST); with it, the file is linked under a temporary
 * ".rdmaxfer-@tag.part" name and renamed over, so the replacement is atomic.
 * Returns 0 or -errno.
 */
int incoming_publish(int dirfd, int fd, const char *name, bool overwrite, uint64_t tag);
