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

/* The last piece that is read of a hole at the end: something is read
 * always, so that @done comes from the loop. */
#define REHASH_TAIL     4096u

/*
 * A hole at h->off: its zeros hashed, h->off past it; h->data_end where
 * the data from there ends. Blocking lseeks, each on a file's extent
 * list: one pair per extent of data. 0 or -errno.
 */
static int rehash_hole(struct rehash *h)
{
        uint64_t data;
        off_t d, e;

        if (!h->holes || h->off < h->data_end)
                return 0;
        d = lseek(h->fd, (off_t)h->off, SEEK_DATA);
        if (d < 0 && errno != ENXIO)
                return -errno;
        data = d < 0 ? h->end : MIN((uint64_t)d, h->end);
        if (data == h->end)
                data -= MIN(h->end - h->off, (uint64_t)REHASH_TAIL);
        if (data > h->off) {
                if (digest_zeros(h->d, data - h->off) < 0)
                        return -ENOMEM;
                h->off = data;
        }
        if (d >= 0 && (uint64_t)d < h->end) {
                e = lseek(h->fd, d, SEEK_HOLE);
                h->data_end = e > d ? (uint64_t)e : h->end;
        }
        return 0;
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
        r = rehash_hole(h);
        if (r < 0)
                return r;
        len = (size_t)MIN((uint64_t)h->cap, h->end - h->off);
        /* Up to the next hole, which is skipped when it comes. */
        if (h->holes && h->data_end > h->off)
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
        struct stat st;
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
        /* A file still being written has holes that are not zeros yet. */
        h->holes = !h->ready && fstat(fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size;
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
