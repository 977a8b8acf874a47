#include <errno.h>
#include <stdlib.h>

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

/* The next piece, or (all read) the caller's callback. */
static int rehash_next(struct rehash *h)
{
        size_t len;
        int r;

        if (h->off == h->end) {
                h->done(h, 0);
                return 0;
        }
        len = (size_t)MIN((uint64_t)h->cap, h->end - h->off);
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
