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
        INCOMING_NO_SPACE,      /* fewer free bytes than @size */
        INCOMING_IO,            /* see the returned -errno */
};

/*
 * Create a nameless file beneath @dirfd for @size bytes and reserve the
 * space. Returns the fd, or -errno with *@verdict saying whether it was a
 * lack of space (-ENOSPC) or another failure.
 */
int incoming_create(int dirfd, uint64_t size, enum incoming_verdict *verdict);

/*
 * Give the (fsynced) nameless file @fd the name @name beneath @dirfd, then
 * fsync the directory. Without @overwrite an existing name is never
 * replaced (-EEXIST); with it, the file is linked under a temporary
 * ".rdmaxfer-@tag.part" name and renamed over, so the replacement is atomic.
 * Returns 0 or -errno.
 */
int incoming_publish(int dirfd, int fd, const char *name, bool overwrite, uint64_t tag);
