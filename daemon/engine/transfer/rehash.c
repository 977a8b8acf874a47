#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "macro.h"
#include "rehash.h"
#include "io.h"
#include "xfer.h"

static int rehash_next(struct rehash *h);

static void rehash_on_read(struct io_req *req, int64_t res)
{
        struct rehash *h = (struct rehash *)req;
        int r;

        if (!xfer_io_done(h->x) || h->x->state == XFER_CLOSING)
                return;
        if (res < 0 || (uint64_t)res != req->len) {
                h->done(h, res < 0 ? (int)res : -EIO);
                return;
        }
        digest_update(h->d, h->buf, (size_t)res);
        h->off += (uint64_t)res;
        r = rehash_next(h);
        if (r < 0)
                h->done(h, r);
}

/*
 * On a worker (seeking asks the file system, which may not answer: never
 * on the loop): the first time, whether the file has holes at all (fewer
 * blocks than bytes); then where the data from h->off starts and ends.
 * Touches only h->fd, off, holes, seek_data and seek_hole.
 */
static int64_t rehash_seek(void *arg)
{
        struct rehash *h = arg;
        struct stat st;

        if (h->holes < 0)
                h->holes = fstat(h->fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size;
        if (!h->holes)
                return 0;
        h->seek_data = lseek(h->fd, (off_t)h->off, SEEK_DATA);
        if (h->seek_data < 0)
                return errno == ENXIO ? 0 : -errno;     /* ENXIO: no data from here on */
        h->seek_hole = lseek(h->fd, h->seek_data, SEEK_HOLE);
        return 0;
}

/* Where the data is, known: the hole before it hashed as its zeros, and
 * the reads go up to the next hole. */
static void rehash_on_seek(struct io_req *req, int64_t res)
{
        struct rehash *h = (struct rehash *)req;
        uint64_t data;
        int r;

        if (!xfer_io_done(h->x) || h->x->state == XFER_CLOSING)
                return;
        if (res < 0) {
                h->done(h, (int)res);
                return;
        }
        if (h->holes) {
                data = h->seek_data < 0 ? h->end : MIN((uint64_t)h->seek_data, h->end);
                if (data > h->off && digest_zeros(h->d, data - h->off) < 0) {
                        h->done(h, -ENOMEM);
                        return;
                }
                h->off = MAX(h->off, data);
                h->data_end = h->seek_data >= 0 && h->seek_hole > h->seek_data ? (uint64_t)h->seek_hole : h->end;
        }
        r = rehash_next(h);
        if (r < 0)
                h->done(h, r);
}

/* The next piece, or (all read) the caller's callback. */
static int rehash_next(struct rehash *h)
{
        size_t len;
        int r;

        if (h->off == h->end) {
                h->done(h, 0);
                return 0;
        }
        /* Past the data known: where the next is, first (a hole's zeros). */
        if (h->holes && h->off >= h->data_end) {
                h->io.done = rehash_on_seek;
                r = io_call(h->x->env->io, &h->io, rehash_seek, h);
                if (r < 0)
                        return r;
                xfer_io_start(h->x, "looking for the holes of the kept part");
                return 0;
        }
        len = (size_t)MIN((uint64_t)h->cap, h->end - h->off);
        /* Up to the next hole, which is skipped when it comes. */
        if (h->holes > 0)
                len = (size_t)MIN((uint64_t)len, h->data_end - h->off);
        if (h->ready && !h->ready(h, h->off, len)) {
                h->parked = true;
                return 0;
        }
        h->io.done = rehash_on_read;
        r = io_read(h->x->env->io, &h->io, h->fd, h->buf, len, h->off);
        if (r < 0)
                return r;
        xfer_io_start(h->x, "reading back the kept part");
        return 0;
}

int rehash_start(struct rehash *h, struct xfer *x, struct digest *d, int fd, uint64_t off,
                 uint64_t end, rehash_done_fn done)
{
        int r;

        if (off >= end)
                return -EINVAL;         /* nothing to hash: the caller knows without us */
        h->x = x;
        h->d = d;
        h->fd = fd;
        h->off = off;
        h->end = end;
        h->done = done;
        h->parked = false;
        /* A file still being written has holes that are not zeros yet;
         * any other is asked whether it has any (rehash_seek, on a worker). */
        h->holes = h->ready ? 0 : -1;
        h->data_end = off;
        h->cap = (size_t)MIN((uint64_t)REHASH_BUF, MAX(end - off, (uint64_t)1));
        /* A lane's next file may keep a longer part than its last did. */
        if (h->buf && h->alloc < h->cap)
                rehash_deinit(h);
        if (!h->buf) {
                h->buf = malloc(h->cap);
                if (!h->buf)
                        return -ENOMEM;
                h->alloc = h->cap;
        }
        r = rehash_next(h);
        return r;
}

void rehash_kick(struct rehash *h)
{
        int r;

        if (!h->parked || h->x->state == XFER_CLOSING)
                return;
        h->parked = false;
        r = rehash_next(h);
        if (r < 0)
                h->done(h, r);
}

void rehash_deinit(struct rehash *h)
{
        free(h->buf);
        h->buf = NULL;
        h->alloc = 0;
}
