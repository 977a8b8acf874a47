/*
 * Sparse files (wire.h, Sparse files, version 16). A regular file whose
 * blocks cover less than its length, as statx said before its offer, is
 * mapped on a worker (common/sparse.h); its offer then says
 * WIRE_OFFER_SPARSE and the bytes that will go, and each lane leaves out
 * the chunks of its run that lie wholly in a hole: not read, not sent, not
 * paced nor counted as wire bytes, their zeros fed to the lane's digest.
 *
 * A lane skips a hole only once every chunk before it is acknowledged
 * (next_done == next_read): the chunk sequence in flight stays one
 * contiguous window, as the rest of the data path expects. Between two
 * extents that costs one round trip, nothing per chunk.
 *
 * Not sparse: packs (small files, in memory), a relay's downstream (its
 * file is still being written, so a hole there may be data not come yet)
 * and a chain's origin (a relay would have to forward the holes).
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "log.h"
#include "send-int.h"

bool send_sparse_wanted(const struct engine_send *s)
{
        return !s->no_sparse && !s->src_ops && !s->route_hops && !s->relayed && !s->dir && !s->link &&
               s->size > WIRE_BLOCK_SIZE && (s->stx.stx_mask & STATX_BLOCKS) &&
               s->stx.stx_blocks * 512 < s->size;
}

/* On a worker: touches only s->fd, size and sparse (no lane reads the
 * file meanwhile: the one before is all read, this one not yet offered). */
static int64_t send_sparse_map(void *arg)
{
        struct engine_send *s = arg;

        return sparse_map_build(s->fd, s->size, &s->sparse);
}

int send_sparse_start(struct engine_send *s, void (*done)(struct io_req *req, int64_t res))
{
        int r;

        s->src_req.done = done;
        r = io_call(s->env->xe->io, &s->src_req, send_sparse_map, s);
        if (r < 0)
                return r;
        xfer_io_start(&s->base, "finding the holes of the file");
        return 0;
}

void send_sparse_mapped(struct engine_send *s, int64_t res)
{
        s->sparse_mapped = res == 0;
        if (res < 0)
                log_debug("transfer %" PRIu64 ": %s: its holes: %s; sent whole", s->id, s->name,
                          strerror((int)-res));
}

void send_sparse_offer(struct engine_send *s, struct wire_offer *o)
{
        uint64_t bytes;

        if (!s->sparse_mapped)
                return;
        bytes = sparse_chunk_bytes(&s->sparse, s->chunk, s->size);
        /* Holes smaller than a chunk leave nothing out. */
        if (bytes >= s->size)
                return;
        o->flags |= WIRE_OFFER_SPARSE;
        o->data_bytes = bytes;
}

bool send_sparse_skip(struct send_lane *l)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        uint64_t seq, from, to;

        if (!(s->offer.flags & WIRE_OFFER_SPARSE))
                return true;
        seq = MIN(sparse_next_data(&s->sparse, &l->sparse_cur, l->next_read, s->chunk, s->size), l->base.end_seq);
        if (seq == l->next_read)
                return true;
        /* Every chunk before the hole acknowledged first. */
        if (l->next_done != l->next_read)
                return false;
        from = l->next_read * s->chunk;
        to = MIN(seq * s->chunk, s->size);
        if (digest_zeros(&l->base.digest, to - from) < 0) {
                send_fail(s, WIRE_E_INTERNAL, "no memory for the digest");
                return false;
        }
        /* Done as acknowledged bytes are (progress, the journal), but
         * never on the wire (wire_bytes). */
        s->holes += to - from;
        b->bytes += to - from;
        l->next_read = l->next_post = l->next_done = seq;
        if (seq == l->base.end_seq)
                send_lane_acked(l);
        return b->state == XFER_DATA || b->state == XFER_FINISHING;
}
