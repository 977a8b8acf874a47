/*
 * A session's files in flight (wire.h, version 8): once file i is
 * verified, it is published (x->fin: fsync, link, or staging, unpacking,
 * each a disk step of recv-file.c and recv-pack.c) while the next file's
 * offer is answered and its data flows (x->cur). The sender offers file
 * i + 1 as soon as it has posted file i's ENDs, so that offer may come
 * while file i is still receiving or being verified: it is kept until
 * then, its file opened meanwhile (recv_early_open). A file that kept a
 * partial holds the next offer until it is published (the partial state
 * is one file's at a time). At most two files are in flight: a third
 * offer, before file i's RESULT, is a protocol error. RESULTs go in
 * order: file i + 1, verified, waits for file i's (fin_waiting). A
 * failure of either fails the session.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"
#include "relay.h"

/* The next offer may be answered: not while the file being published
 * holds the partial state (recv.h), one file's at a time. */
static bool recv_next_may_go(const struct recv_xfer *x)
{
        return !x->fin || x->part_of != x->fin;
}

/* Cur's data is all in: the next offer may be kept until it is verified
 * (not if one is kept already, or the file before cur is still being
 * published: that would be three in flight, or if cur is the last). */
static bool recv_next_may_wait(const struct recv_xfer *x)
{
        const struct xfer *b = &x->base;
        const struct recv_lane *l0 = b->lane[0] ? recv_lane_of(b->lane[0]) : NULL;

        return (b->state == XFER_DATA || b->state == XFER_FINISHING) && x->next_file > 0 &&
               x->next_file < x->job_files && x->cur->offer.name[0] && !x->fin && !x->next_on &&
               l0 && l0->base.ended;
}

/* A WAIT names the next file, not yet offered: it was the sender's to
 * offer next whatever cur's state (its owner may hold it up while cur's
 * data still flows, wire.h). */
bool recv_wait_ok(const struct recv_xfer *x, uint32_t file)
{
        return x->next_file > 0 && x->next_file < x->job_files && file == x->next_file && !x->next_on;
}

void recv_offer_in(struct recv_xfer *x, const struct wire_offer *o)
{
        if (x->base.state == XFER_OFFER && !x->cur->offer.name[0] && !x->next_on) {
                if (recv_next_may_go(x)) {
                        recv_on_offer(x, o);
                        return;
                }
                x->next = *o;
                x->next_on = true;
                recv_early_open(x);
                return;
        }
        if (recv_next_may_wait(x)) {
                x->next = *o;
                x->next_on = true;
                /* Its file opened meanwhile: its ACCEPT waits for no disk. */
                recv_early_open(x);
                return;
        }
        recv_fail(x, WIRE_E_PROTOCOL, x->next_file > 0 && x->next_file < x->job_files ?
                  "an offer while two files of the session are in flight" : "unexpected control message");
}

/* The other file of the pair becomes cur, empty: the lanes start afresh
 * and lane 0's credits go back, so the next offer has one. 0, or the
 * transfer has failed. */
int recv_session_next(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->cur == &x->files[0] ? &x->files[1] : &x->files[0];
        uint64_t id = x->cur->offer.transfer_id;

        recv_pack_mem_free(f);
        *f = (struct recv_file){ .x = x, .fd = -1, .pack_mem_fd = -1 };
        f->offer.transfer_id = id;
        x->cur = f;
        x->bytes_written = 0;
        b->nended = 0;
        for (unsigned int k = 0; k < b->nlanes; k++) {
                struct recv_lane *l = recv_lane(x, k);

                if (!l)
                        continue;
                memset(&l->end, 0, sizeof(l->end));
                if (xfer_lane_next_file(&l->base) < 0) {
                        recv_fail(x, WIRE_E_INTERNAL, "out of memory");
                        return -ENOMEM;
                }
        }
        xfer_set_state(b, XFER_OFFER);
        xfer_arm_deadline(b);
        x->t_between = clock_usec(CLOCK_MONOTONIC);
        if (b->lane[0])
                recv_credits_return(recv_lane(x, 0));
        return 0;
}

void recv_verified(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->cur;

        if (b->state != XFER_FINISHING)
                return;
        if (x->fin) {
                /* The file before is still being published: its RESULT first. */
                x->fin_waiting = true;
                return;
        }
        x->fin_waiting = false;
        f->usec = b->t_last > f->t_file ? b->t_last - f->t_file : 0;
        x->fin = f;
        if (!recv_is_last(x, f) && recv_session_next(x) < 0)
                return;
        recv_file_publish(x);
        if (b->state != XFER_CLOSING && x->next_on && recv_next_may_go(x)) {
                x->next_on = false;
                recv_on_offer(x, &x->next);
        }
}

/* Fin is published, and more of the session is to come: its RESULT on
 * lane 0 (with what credits lane 0 holds), then cur may follow it. */
static void recv_fin_result(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->fin;
        struct recv_lane *l0 = recv_lane(x, 0);
        struct wire_msg m = { .type = WIRE_RESULT };
        int r;

        /* A dry run received nothing: no journal entry of a file. */
        if (!x->dry)
                recv_journal(x, f, WIRE_OK);
        m.credits = l0->credits_pending;
        l0->credits_pending = 0;
        m.result.status = WIRE_OK;
        m.result.file = f->offer.file;
        /* A skipped file moved nothing; a pack says how many it kept (wire.h). */
        m.result.bytes = f->skip ? 0 : f->offer.size;
        if (x->dry)
                snprintf(m.result.text, sizeof(m.result.text), "%s", recv_dry_text(f));
        else if (f->skip)
                snprintf(m.result.text, sizeof(m.result.text), "skipped");
        else if ((f->offer.flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) && f->pack_skipped)
                snprintf(m.result.text, sizeof(m.result.text), "skipped %u", f->pack_skipped);
        m.result.usec = f->usec;
        if (b->session.on)
                auth_result_mac(&b->session, 0, &m.result, m.result.mac);
        r = conn_send_ctrl(&l0->base.conn, &m);
        if (r < 0) {
                l0->credits_pending += m.credits;
                recv_fail(x, WIRE_E_INTERNAL, "cannot send the result");
                return;
        }
        /* Published under its name: our descriptor is no longer needed. */
        safe_close(f->fd);
        f->fd = -1;
        recv_pack_mem_free(f);
        f->offer.name[0] = '\0';
        x->fin = NULL;
}

void recv_published(struct recv_xfer *x)
{
        /* A relayed tree's next hop may have the entry now (relay.h). */
        if (x->relay)
                relay_tree_staged(x->relay, x->fin);
        /* A kept tree's record says the entry is held before its RESULT goes. */
        if (recv_keep_due(x)) {
                recv_keep_record(x);
                return;
        }
        recv_published_now(x);
}

void recv_published_now(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct recv_file *f = x->fin;

        if (!recv_is_last(x, f)) {
                log_debug("%s: received %s (%" PRIu64 " bytes, file %u of %u)", b->peer, f->offer.name,
                          f->offer.size, f->offer.file + 1, x->job_files);
                recv_fin_result(x);
                if (b->state == XFER_CLOSING)
                        return;
                /* Held while fin had the partial state (recv_next_may_go). */
                if (x->next_on && b->state == XFER_OFFER && !x->cur->offer.name[0]) {
                        x->next_on = false;
                        recv_on_offer(x, &x->next);
                        return;
                }
                if (x->fin_waiting)
                        recv_verified(x);
                return;
        }
        /* A relay answers once the rest of the route has (relay.h); the
         * sender hears that it is at it meanwhile (recv_tick_start). */
        if (x->relay && !relay_settled(x->relay)) {
                x->relay_waiting = true;
                return;
        }
        /* A relayed tree's modes wait for the relay, which reads its entries. */
        if (recv_tree_finish(x))
                return;
        if (x->tree_again)
                log_info("%s: %s: every entry is here already; answering ok", b->peer, x->dest);
        else if (x->job_files > 1)
                log_info("%s: received %u files, the last %s (%" PRIu64 " bytes)", b->peer, x->job_files,
                         f->offer.name, f->offer.size);
        else
                log_info("%s: received %s (%" PRIu64 " bytes)", b->peer, f->offer.name, f->offer.size);
        recv_verdict(x, WIRE_OK, NULL);
}

void recv_relay_settled(struct recv_xfer *x)
{
        if (!x->relay_waiting || x->base.state != XFER_FINISHING)
                return;
        x->relay_waiting = false;
        recv_published_now(x);
}
