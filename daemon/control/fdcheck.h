#pragma once

/*
 * What a client's descriptor is, asked off the loop (statx through the
 * daemon's io: a file on a dead NFS server must not stall the daemon).
 * The checks of one owner (control) are kept together, so that they can
 * be let go at teardown: once the owner's io has drained (io_free), each
 * check still out is released, or, when a request never came back, left
 * to it.
 */

#include <stdbool.h>
#include <stdint.h>

struct fdcheck;
struct io;

struct fdchecks {
        struct io *io;
        struct fdcheck *list;           /* out: the kernel has their descriptors */
};

/* @res: 0 or -errno; then what the file is (@mode: its type and
 * permission bits, st_mode's), its size. @fd is the caller's again. */
typedef void (*fdcheck_fn)(void *userdata, int fd, int res, uint32_t mode, uint64_t size);

/*
 * Ask what @fd is: @fn(@userdata, ...) from the loop, once. The check
 * takes @fd (closing it on failure); 0 with *@out set (for a cancel), or
 * -errno.
 */
int fdcheck_start(struct fdchecks *cs, int fd, fdcheck_fn fn, void *userdata, struct fdcheck **out);
/* Call nothing back; the descriptor is closed when the kernel is done. */
void fdcheck_cancel(struct fdcheck *f);
/* After the io drained (io_free): the checks left, released, or with
 * @keep (a request that never came back) left to the kernel. */
void fdchecks_free(struct fdchecks *cs, bool keep);
