#pragma once

/*
 * Hashing a lane's kept prefix again, for a resumed transfer: both sides
 * feed the bytes of a lane's run that are not sent again into the lane's
 * digest, in file order, before its first new chunk, so that END's digest
 * still covers the whole run. The bytes are read through io_uring in
 * REHASH_BUF pieces, one read out at a time per lane; the deadline on them
 * is the transfer's io_timeout (xfer_io_start), like any disk request. A
 * piece not written yet (a relay's file, @ready) waits, without a read
 * out, until its writer says so (rehash_kick), under the transfer's own
 * deadlines as its other reads of such a file are.
 *
 * A sparse file (fewer blocks than its length; never a file still being
 * written, @ready) is not read in its holes: SEEK_DATA finds them, on a
 * worker as the file system may not answer, and their zeros go to the
 * digest as such (digest_zeros).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "digest.h"
#include "io.h"

#define REHASH_BUF      (4u << 20)

struct xfer;
struct rehash;

/* 0 when all the bytes were hashed; else -errno (-EIO for a file shorter
 * than @end). Not called when the transfer ended meanwhile. */
typedef void (*rehash_done_fn)(struct rehash *h, int r);
/* Whether [@off, @off + @len) may be read now: a relay's file is still
 * being written (relay.h). */
typedef bool (*rehash_ready_fn)(struct rehash *h, uint64_t off, uint64_t len);

struct rehash {
        struct io_req io;       /* first */
        struct xfer *x;
        struct digest *d;
        int fd;
        uint64_t off, end;
        uint8_t *buf;           /* REHASH_BUF, or less for a short range */
        size_t cap;             /* bytes a read asks for */
        size_t alloc;           /* bytes buf holds */
        unsigned int idx;       /* the lane's, for the caller */
        rehash_done_fn done;
        /* Optional: asked before each read; a read not ready waits for
         * rehash_kick(). */
        rehash_ready_fn ready;
        bool parked;
        int holes;              /* the file has holes, skipped, not read: 1; 0: none
                                 * (or a file still being written); -1: not asked yet */
        uint64_t data_end;      /* with holes: data known up to here */
        off_t seek_data, seek_hole;     /* rehash_seek's answer */
};

#define REHASH_NULL ((struct rehash){ .fd = -1 })

/*
 * Hash [@off, @end) of @fd into @d, then @done (from the loop, never from
 * inside this call). @h must stay put until @done, or until the transfer's
 * disk requests are all back (its owner's gone op: rehash_deinit). 0, or
 * -errno when nothing could start (then @done never runs); -EINVAL for an
 * empty range (nothing to do).
 */
int rehash_start(struct rehash *h, struct xfer *x, struct digest *d, int fd, uint64_t off,
                 uint64_t end, rehash_done_fn done);
/* The bytes @h->ready said were not there may be now: ask again, and read
 * them if so (@done may run from inside this call). Nothing when @h does
 * not wait. */
void rehash_kick(struct rehash *h);
/* Free the buffer; safe on REHASH_NULL. Only once no read is out. */
void rehash_deinit(struct rehash *h);
