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
 * included), and only while each lane still gets a fair run of chunks.
 * Concurrent transfers already use several queue pairs; striping them too
 * would only shrink every lane's window.
 */
static unsigned int recv_lanes_grant(const struct recv_xfer *x)
{
        const struct xfer *b = &x->base;
        /* The lanes serve the whole session: the job's bytes decide. */
        uint64_t chunks = x->job_bytes / x->offer.chunk_size + (x->job_bytes % x->offer.chunk_size != 0);
        uint64_t by_size = chunks / RECV_LANE_MIN_CHUNKS;
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

        b->nchunks = DIV_ROUND_UP(o->size, o->chunk_size);
        /* Lane 0 keeps what it has; it is due its part of the transfer's.
         * A later file of the session keeps the lanes (wire.h). */
        if (o->file == 0)
                xfer_set_lanes(b, recv_lanes_grant(x));
        for (unsigned int k = 0; k < b->nlanes; k++) {
                struct recv_lane *l = recv_lane(x, k);

                if (!l)
                        continue;       /* joins later, and takes its run then */
                xfer_lane_run(&l->base);
                l->next_seq = l->base.first_seq;
        }
        xfer_set_state(b, XFER_DATA);
        m.accept.lanes = (uint16_t)b->nlanes;
        m.accept.file = o->file;
        if (b->session.on)
                auth_accept_mac(&b->session, &m.accept, m.accept.mac);
        m.credits = recv_credits_take(l0);
        r = conn_send_ctrl(&l0->base.conn, &m);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        x->t_file = b->t_last = clock_usec(CLOCK_MONOTONIC);
        if (o->file == 0)
                b->t_start = x->t_file;
        xfer_arm_deadline(b);
        if (o->file > 0) {
                recv_lanes_flush(x);
                log_debug("%s: receiving %s (%" PRIu64 " bytes, file %u of %u, transfer %" PRIu64 ")",
                          b->peer, o->name, o->size, o->file + 1, o->job_files, o->transfer_id);
                return;
        }
        log_info("%s: receiving %s (%" PRIu64 " bytes, %" PRIu64 " chunks of %u over %u lane%s, transfer %" PRIu64 ")",
                 b->peer, o->name, o->size, b->nchunks, o->chunk_size, b->nlanes,
                 b->nlanes == 1 ? "" : "s", o->transfer_id);
}

/* The offer's own fields: WIRE_OK, or the refusal's status and @text. */
static unsigned int recv_check_offer(struct recv_xfer *x, const struct wire_offer *o,
                                     char *text, size_t len)
{
        const struct engine *e = x->base.e;
        bool tree = o->flags & WIRE_OFFER_TREE;
        enum name_verdict nv = tree ? name_path_check(o->name, strlen(o->name), NULL) :
                                      name_check(o->name, strlen(o->name));
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
        if (o->file != 0 || o->size > o->job_bytes) {
                snprintf(text, len, "the first offer of a session is not its first file");
                return WIRE_E_PROTOCOL;
        }
        /* A tree starts with DEST, a directory, in a session of more. */
        if (o->flags & ~(WIRE_OFFER_TREE | WIRE_OFFER_DIR) ||
            (tree ? o->flags != (WIRE_OFFER_TREE | WIRE_OFFER_DIR) || o->size != 0 || o->job_files < 2 :
                    o->flags != 0)) {
                snprintf(text, len, "offer flags 0x%x not understood", (unsigned int)o->flags);
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
        /* A job's totals, before any data moves (after the file's own,
         * whose reasons a single file's sender knows; a single file is held
         * to max_file_size only). */
        if (o->job_files > 1 && e->cfg->max_job_files && o->job_files > e->cfg->max_job_files) {
                snprintf(text, len, "%" PRIu32 " files in one job is over the receiver's max_job_files of %" PRIu32,
                         o->job_files, e->cfg->max_job_files);
                return WIRE_E_TOO_LARGE;
        }
        if (o->job_files > 1 && e->cfg->max_job_bytes && o->job_bytes > e->cfg->max_job_bytes) {
                char limit[32];

                pace_fmt_bytes(limit, sizeof(limit), e->cfg->max_job_bytes);
                snprintf(text, len, "%" PRIu64 " bytes in one job is over the receiver's max_job_bytes of %s",
                         o->job_bytes, limit);
                return WIRE_E_TOO_LARGE;
        }
        return WIRE_OK;
}

/* A later offer of the session: WIRE_OK, or the refusal's status and @text. */
static unsigned int recv_check_next_offer(struct recv_xfer *x, const struct wire_offer *o,
                                          char *text, size_t len)
{
        const struct xfer *b = &x->base;
        const struct engine *e = b->e;
        size_t dlen = strlen(x->dest);
        enum name_verdict nv = x->tree ? name_path_check(o->name, strlen(o->name), NULL) :
                                         name_check(o->name, strlen(o->name));

        text[0] = '\0';
        if (b->session.on && auth_next_offer_verify(&b->session, o) < 0) {
                snprintf(text, len, "the offer of file %u does not prove the session key", x->next_file + 1);
                if (nv != NAME_OK)
                        snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                return WIRE_E_AUTH;
        }
        if (o->file != x->next_file || o->job_files != x->job_files || o->job_bytes != x->job_bytes ||
            o->chunk_size != x->chunk || o->lanes != b->nlanes) {
                snprintf(text, len, "offer of file %u does not follow the session's", x->next_file + 1);
                if (nv != NAME_OK)
                        snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                return WIRE_E_PROTOCOL;
        }
        if (nv != NAME_OK) {
                snprintf(text, len, "%s", name_verdict_str(nv));
                snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                return WIRE_E_NAME;
        }
        /* In a tree, every entry is beneath DEST; outside one, no flags. */
        if (x->tree ? (o->flags & ~WIRE_OFFER_DIR) != WIRE_OFFER_TREE ||
                      ((o->flags & WIRE_OFFER_DIR) && o->size != 0) ||
                      strncmp(o->name, x->dest, dlen) != 0 || o->name[dlen] != '/' :
                      o->flags != 0) {
                snprintf(text, len, "entry %u is not beneath the job's destination", x->next_file + 1);
                return WIRE_E_NAME;
        }
        if (o->size > x->job_bytes - x->offered) {
                snprintf(text, len, "file %u: more bytes than the job announced", x->next_file + 1);
                return WIRE_E_PROTOCOL;
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
        if (x->next_file > 0) {
                /* The session's next file: admitted, the lanes up. */
                status = recv_check_next_offer(x, o, text, sizeof(text));
                if (status != WIRE_OK) {
                        recv_fail(x, status, text[0] ? text : NULL);
                        return;
                }
                x->offered += o->size;
                x->next_file++;
                recv_file_open(x);
                return;
        }
        status = recv_check_offer(x, o, text, sizeof(text));
        if (status != WIRE_OK) {
                recv_fail(x, status, text[0] ? text : NULL);
                return;
        }
        x->job_files = o->job_files;
        x->job_bytes = o->job_bytes;
        x->chunk = o->chunk_size;
        memcpy(x->token, o->token, WIRE_TOKEN_SIZE);
        x->tree = o->flags & WIRE_OFFER_TREE;
        if (x->tree)
                snprintf(x->dest, sizeof(x->dest), "%s", o->name);
        x->offered = o->size;
        x->next_file = 1;
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
