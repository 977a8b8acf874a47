/*
 * Lane 0's offer: the name, the key proof, the chunk size and the size
 * are checked; only then is the transfer admitted to the receive ring (a
 * connection that has not made a valid offer holds no share and does not
 * count against max_transfers). The file is opened (O_TMPFILE), its free
 * space checked and reserved off the loop (recv-file.c); then the transfer
 * is accepted with the lanes it is granted, or refused with the reason.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "engine-private.h"
#include "incoming.h"
#include "log.h"
#include "name.h"
#include "pace.h"
#include "recv.h"

/*
 * How many lanes to grant: as many as asked for, but about *lanes* queue
 * pairs in all, split between the transfers receiving now (this one
 * included), and only while each lane still gets a fair run of chunks and
 * a 64 MiB block of its own (runs start on block boundaries, wire.h).
 * Concurrent transfers already use several queue pairs; striping them too
 * would only shrink every lane's window.
 */
static unsigned int recv_lanes_grant(const struct recv_xfer *x)
{
        const struct xfer *b = &x->base;
        uint64_t by_size = MIN(b->nchunks / RECV_LANE_MIN_CHUNKS, wire_blocks(b->size));
        unsigned int n = MIN((unsigned int)x->offer.lanes, xfer_lanes_share(b->e, b->ring->conns));

        return (unsigned int)MAX(1u, MIN((uint64_t)n, by_size));
}

/* The file is open and its space reserved (or the file system cannot reserve). */
void recv_accept(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct wire_offer *o = &x->offer;
        struct recv_lane *l0 = recv_lane(x, 0);
        struct wire_msg m = { .type = WIRE_ACCEPT };
        int r;

        b->size = o->size;
        b->chunk = o->chunk_size;
        b->nchunks = DIV_ROUND_UP(o->size, o->chunk_size);
        /* Lane 0 keeps what it has; it is due its part of the transfer's. */
        xfer_set_lanes(b, recv_lanes_grant(x));
        if (xfer_lane_run(&l0->base) < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "no memory for the block digests");
                return;
        }
        l0->next_seq = l0->base.first_seq;
        xfer_set_state(b, XFER_DATA);
        m.accept.lanes = (uint16_t)b->nlanes;
        if (b->session.on)
                auth_accept_mac(&b->session, &m.accept, m.accept.mac);
        m.credits = recv_credits_take(l0);
        r = conn_send_ctrl(&l0->base.conn, &m);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        b->t_start = b->t_last = clock_usec(CLOCK_MONOTONIC);
        xfer_arm_deadline(b);
        log_info("%s: receiving %s (%" PRIu64 " bytes, %" PRIu64 " chunks of %u over %u lane%s, transfer %" PRIu64 ")",
                 b->peer, o->name, o->size, b->nchunks, o->chunk_size, b->nlanes,
                 b->nlanes == 1 ? "" : "s", o->transfer_id);
}

/* The offer's own fields: WIRE_OK, or the refusal's status and @text. */
static unsigned int recv_check_offer(struct recv_xfer *x, const struct wire_offer *o,
                                     char *text, size_t len)
{
        const struct engine *e = x->base.e;
        enum name_verdict nv = name_check(o->name, strlen(o->name));
        struct rdma_cm_id *id = x->base.lane[0]->conn.id;
        struct wire_binding bd;

        text[0] = '\0';
        /* The proof first: an unproven peer learns nothing of our rules. */
        if (e->key->len > 0 &&
            (wire_binding_set(&bd, rdma_get_peer_addr(id), rdma_get_local_addr(id)) < 0 ||
             auth_offer_verify(e->key, x->base.nonce, &bd, o) < 0 ||
             auth_session_derive(&x->base.session, e->key, x->base.nonce, o) < 0)) {
                snprintf(text, len, "pre-shared key proof does not match "
                         "(another key, or an offer made for another connection)");
                if (nv != NAME_OK)
                        snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                return WIRE_E_AUTH;
        }
        if (nv != NAME_OK) {
                /* Don't echo a hostile name into logs as if it were a file. */
                snprintf(text, len, "%s", name_verdict_str(nv));
                snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                return WIRE_E_NAME;
        }
        if (o->chunk_size < RECV_CHUNK_MIN || o->chunk_size > e->slot_size) {
                snprintf(text, len, "chunk size out of range");
                return WIRE_E_PROTOCOL;
        }
        /* Lanes start on digest block boundaries, which must be chunk boundaries. */
        if (WIRE_BLOCK_SIZE % o->chunk_size != 0) {
                snprintf(text, len, "chunk size %u does not divide the %u-byte digest block",
                         o->chunk_size, WIRE_BLOCK_SIZE);
                return WIRE_E_PROTOCOL;
        }
        /* Not DIV_ROUND_UP: size + chunk - 1 would wrap for a hostile size. */
        if (o->size / o->chunk_size + (o->size % o->chunk_size != 0) > UINT32_MAX) {
                snprintf(text, len, "more than 2^32 chunks");
                return WIRE_E_TOO_LARGE;
        }
        if (e->cfg->max_file_size && o->size > e->cfg->max_file_size) {
                char limit[32];

                pace_fmt_bytes(limit, sizeof(limit), e->cfg->max_file_size);
                snprintf(text, len, "%" PRIu64 " bytes is over the receiver's max_file_size of %s",
                         o->size, limit);
                return WIRE_E_TOO_LARGE;
        }
        return WIRE_OK;
}

void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o)
{
        struct engine *e = x->base.e;
        char text[WIRE_TEXT_MAX + 1];
        unsigned int status;
        int r;

        x->offer = *o;
        evtimer_del(x->base.timer);
        status = recv_check_offer(x, o, text, sizeof(text));
        if (status != WIRE_OK) {
                recv_fail(x, status, text[0] ? text : NULL);
                return;
        }
        /* Only now, the offer valid (and proven, with a key), does the
         * transfer count against max_transfers and take its share. */
        r = recv_admit(x);
        if (r == XFER_FULL) {
                snprintf(text, sizeof(text), "%u transfers already receiving", e->ring.conns_max);
                recv_fail(x, WIRE_E_BUSY, text);
                return;
        }
        if (r < 0) {
                snprintf(text, sizeof(text), "posting receives: %s", strerror(-r));
                recv_fail(x, WIRE_E_INTERNAL, text);
                return;
        }
        /* Then the incoming directory, one disk request at a time. */
        recv_file_open(x);
}
