/*
 * Incoming transfers: one per connection. The connection is granted a share
 * of the preregistered receive ring; every slot of the share is posted as a
 * receive, and the sender gets one credit per posted slot, so it can never
 * send into an empty receive queue. A data message lands in a slot, is
 * hashed in arrival order (RC keeps order), written to the file at its
 * offset by io_uring, and only then is the slot posted again and its credit
 * returned. A transfer that has the ring to itself borrows one more slot
 * per completed write (common/ring.h) and, when others arrive, gives back
 * what it holds over its due, one per completed write and without a
 * credit. The file has no name until it is complete, verified and fsynced
 * (common/incoming.h), so an abort at any point leaves nothing behind.
 *
 * A transfer may be striped over several lanes (common/wire.h): each lane
 * is a connection with its own slots, credits, run of chunks and digest;
 * the file, the byte counts, the timers and the verdict are the
 * transfer's. Any lane lost loses the transfer; every lane gets its RESULT.
 *
 * With cfg rate_limit, credits are what is paced: a slot is posted again
 * at once, but its credit goes back only when the direction's bucket
 * allows a chunk (recv_credits_take); the sender cannot send faster.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "auth.h"
#include "clock.h"
#include "conn.h"
#include "digest.h"
#include "filter.h"
#include "incoming.h"
#include "io.h"
#include "config.h"
#include "journal.h"
#include "log.h"
#include "recv-int.h"
#include "recv-publish.h"
#include "recv-partial.h"
#include "relay.h"
#include "wire.h"


static void recv_feed(struct xfer_lane *l);
static void recv_timeout(struct xfer *x);
static void recv_log(struct xfer *x);
static void recv_lane_free(struct xfer_lane *l);
static void recv_cancel_io(struct xfer *x);
static void recv_gone(struct xfer *x);
static void recv_paced(struct xfer *x, unsigned int first);
static bool recv_rail_lost(struct xfer *x, const struct conn_env *on, const char *text);
static void recv_rail_silent(struct xfer_lane *l, unsigned int status, const char *text);

static const struct xfer_ops recv_xfer_ops = {
        .feed = recv_feed,
        .timeout = recv_timeout,
        .log = recv_log,
        .lane_free = recv_lane_free,
        .cancel_io = recv_cancel_io,
        .gone = recv_gone,
        .paced = recv_paced,
        .rail_lost = recv_rail_lost,
        .rail_silent = recv_rail_silent,
};

int recv_lane_new(struct recv_xfer *x, unsigned int idx, struct recv_lane **out)
{
        struct recv_lane *l;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        /* Nobody holds a share of the ring before its offer is valid
         * (recv_admit); later lanes only ever borrow. */
        r = xfer_lane_init(&l->base, &x->base, idx, false);
        if (r == 0) {
                l->rs = calloc(x->base.ring->count, sizeof(*l->rs));
                if (!l->rs) {
                        ring_hold_leave(&l->base.hold, x->base.ring);
                        r = -ENOMEM;
                }
        }
        if (r != 0) {
                recv_lane_free(&l->base);
                return r;
        }
        *out = l;
        return 0;
}

static void recv_lane_free(struct xfer_lane *b)
{
        struct recv_lane *l = recv_lane_of(b);

        xfer_lane_deinit(&l->base);
        free(l->rs);
        free(l);
}

int recv_xfer_new(struct recv_env *e, const char *peer, struct recv_xfer **out)
{
        struct recv_xfer *x;
        struct recv_lane *l;
        int r;

        x = calloc(1, sizeof(*x));
        if (!x)
                return -ENOMEM;
        for (unsigned int i = 0; i < ARRAY_SIZE(x->files); i++) {
                x->files[i].x = x;
                x->files[i].fd = -1;
                x->files[i].pack_mem_fd = -1;
        }
        x->cur = &x->files[0];
        x->stage_fd = -1;
        x->top_fd = -1;
        x->ents_fd = -1;
        x->links_fd = -1;
        x->early.fd = -1;
        x->sync_fd = -1;
        x->pull_fd = -1;
        x->dry_walk_fd = -1;
        x->sync_rh = REHASH_NULL;
        x->pj = PARTIAL_JOB_NULL;
        x->keep_pj = PARTIAL_JOB_NULL;
        x->env = e;
        r = xfer_init(&x->base, e->xe, XFER_RECV, &recv_xfer_ops, peer);
        if (r < 0) {
                free(x);
                return r;
        }
        r = recv_lane_new(x, 0, &l);
        if (r != 0) {
                xfer_discard(&x->base);
                free(x);
                return r;
        }
        xfer_lane_add(&l->base);
        auth_nonce(x->base.nonce);
        *out = x;
        return 0;
}

static uint8_t *recv_slot_mem(struct recv_lane *l, uint32_t i)
{
        struct recv_env *e = recv_xfer_of(l->base.x)->env;

        return e->ring_mem + (size_t)l->base.hold.slot[i] * e->slot_size;
}

static int recv_post_slot(struct recv_lane *l, uint32_t i)
{
        struct recv_env *e = recv_xfer_of(l->base.x)->env;
        struct ibv_recv_wr wr = { 0 }, *bad;
        struct ibv_sge sge;

        if (!l->base.conn.id || !l->base.conn.id->qp)
                return -ENOTCONN;
        sge.addr = (uintptr_t)recv_slot_mem(l, i);
        sge.length = e->slot_size;
        sge.lkey = device_lkey(l->base.conn.env->dev, e->ring_idx);
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(l->base.conn.id->qp, &wr, &bad))
                return -errno ?: -EIO;
        return 0;
}

/*
 * File @f of the transfer is decided (@status): counted, and its own journal
 * entry written, unless it is one of a session of several, where that is
 * only at log_level debug (a job of 100,000 files must not flood the
 * journal; the job has one entry of its own, recv_journal_job).
 */
void recv_journal(struct recv_xfer *x, const struct recv_file *f, unsigned int status)
{
        struct xfer *b = &x->base;
        char hex[DIGEST_HEX_SIZE];
        bool ok = status == WIRE_OK;
        bool pull = x->landing && x->landing->direction == WIRE_LAND_PULL;
        char rails[RAILS_MAX * 66], rail_lanes[RAILS_MAX * 4], lost[RAILS_MAX * 66];
        /* Its first-to-last data time; a file never accepted took none. */
        uint64_t usec = f->usec ?: (f->t_file && b->t_last > f->t_file ? b->t_last - f->t_file : 0);

        /* A session of several is one transfer, counted when it is decided
         * (recv_journal_job), in files as its sender counts it. */
        if (x->job_files <= 1)
                stats_tally_add(&recv_xfer_of(b)->env->recv_tally, false, status, f->skip ? 0 : f->offer.size,
                                usec);
        else if (ok && !f->skip)
                x->published_bytes += (f->offer.flags & WIRE_OFFER_PACK) ? f->pack_moved : f->offer.size;
        if (ok)
                x->files_published += recv_file_span(f);
        if (ok && !x->published_match && x->part_of == f)
                x->files_resumed += x->resumed;
        if (ok && (f->offer.flags & WIRE_OFFER_PACK))
                x->packs++;
        if (x->job_files > 1 && recv_xfer_of(b)->env->cfg.log_level < CONFIG_LOG_DEBUG)
                return;
        if (ok && !f->skip)
                digest_hex(f->digest, hex);
        device_names(x->env->dev, x->env->ndev, b->rails, rails, sizeof(rails));
        device_lane_counts(b->rail_lanes, x->env->ndev, b->rails, rail_lanes, sizeof(rail_lanes));
        device_names(x->env->dev, x->env->ndev, b->rails_lost, lost, sizeof(lost));
        journal_xfer(&(struct journal_xfer){
                .direction = "recv",
                .id = f->offer.transfer_id,
                .peer = b->peer,
                .file = f->offer.name,
                /* Kept bytes of a resumed file count, as in the RESULT; a
                 * pull's are what went back, in the time that took. */
                .bytes = pull ? x->pull_bytes : ok && !f->skip ? f->offer.size : f->file_bytes,
                .resumed = x->part_of == f ? x->resumed : 0,
                .holes = f->holes,
                .usec = pull ? x->pull_usec : usec,
                .status = status,
                .text = ok || !b->text[0] ? NULL : b->text,
                .digest = ok && !f->skip ? hex : NULL,
                .lanes = f->t_file ? b->nlanes : 0,
                .rails = rails,
                .rail_lanes = rail_lanes,
                .rails_lost = lost,
                .skipped = ok && f->skip && !pull,
                .relay = x->relay ? relay_next(x->relay) : NULL,
                .land_path = x->landing && x->land_session ? x->landing->path : NULL,
                .land_user = x->land_user,
                .land_uid = x->land_uid,
                .pull = pull,
        });
}

/* A session of several files is decided: its one journal entry. */
static void recv_journal_job(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        bool ok = b->status == WIRE_OK;
        char rails[RAILS_MAX * 66], rail_lanes[RAILS_MAX * 4], lost[RAILS_MAX * 66];

        stats_tally_add_files(&x->env->recv_tally, false, b->status, x->published_bytes,
                              b->t_last > b->t_start ? b->t_last - b->t_start : 0, x->files_published);
        device_names(x->env->dev, x->env->ndev, b->rails, rails, sizeof(rails));
        device_lane_counts(b->rail_lanes, x->env->ndev, b->rails, rail_lanes, sizeof(rail_lanes));
        device_names(x->env->dev, x->env->ndev, b->rails_lost, lost, sizeof(lost));

        journal_xfer(&(struct journal_xfer){
                .direction = "recv",
                .id = recv_named(x)->offer.transfer_id,
                .peer = b->peer,
                /* A tree is its DEST; MESSAGE counts the files either way. */
                .file = x->tree ? x->dest : recv_named(x)->offer.name,
                /* As a resumed file's: the kept bytes count, and take no time. */
                .bytes = b->bytes + x->tree_kept_bytes,
                .usec = b->t_last > b->t_start ? b->t_last - b->t_start : 0,
                .status = b->status,
                .text = ok || !b->text[0] ? NULL : b->text,
                .lanes = b->t_start ? b->nlanes : 0,
                .rails = rails,
                .rail_lanes = rail_lanes,
                .rails_lost = lost,
                .files = x->files_published,
                .files_total = x->job_files,
                .packs = x->packs,
                .skipped = x->files_skipped,
                .deleted = x->deleted,
                /* A tree continued from a kept one: the bytes staged
                 * before; and what its files' partials held. */
                .resumed = x->tree_kept_bytes + x->files_resumed,
                .holes = x->holes,
                .relay = x->relay ? relay_next(x->relay) : NULL,
                .land_path = x->landing && x->land_session ? x->landing->path : NULL,
                .land_user = x->land_user,
                .land_uid = x->land_uid,
        });
}

static void recv_log(struct xfer *b)
{
        struct recv_xfer *x = recv_xfer_of(b);

        /* Connections that never made an offer are not transfers; the file
         * offered when it was decided is (none between two of a session),
         * the one being published first. */
        /* A dry run received nothing: the log says what it judged. */
        if (x->dry)
                log_info("%s: dry run of %s: %s%s%s", b->peer, x->tree ? x->dest : recv_named(x)->offer.name,
                         wire_status_str(b->status), b->text[0] ? ": " : "", b->text);
        else if (recv_named(x)->offer.name[0])
                recv_journal(x, recv_named(x), b->status);
        if (x->job_files > 1 && !x->dry)
                recv_journal_job(x);
        /* Decided: a downstream still running goes with it (relay.h), and
         * a pull's send back (recv-pull.c). */
        relay_detach(x);
        recv_pull_detach(x);
}

/* The deadline (xfer_arm_deadline) or the linger after the verdict. */
static void recv_timeout(struct xfer *b)
{
        struct recv_xfer *x = recv_xfer_of(b);
        unsigned int sec = xfer_peer_timeout(b);
        char text[XFER_TEXT_MAX + 1], why[XFER_TEXT_MAX + 1];

        switch (b->state) {
        case XFER_CONNECTING:
        case XFER_OFFER:
                if (x->part_waiting) {
                        recv_partial_wait_over(x);
                        return;
                }
                if (x->cur->offer.name[0]) {
                        /* Offered: the wait is on our own disk (recv-file.c). */
                        if (xfer_disk_stalled(b)) {
                                xfer_disk_text(b, text, sizeof(text));
                                recv_abort(b, WIRE_E_IO, text);
                        }
                        return;
                }
                if (x->next_file > 0) {
                        /* The file before may be published meanwhile: our
                         * own disk first. */
                        if (b->ios > 0 && xfer_disk_stalled(b)) {
                                xfer_disk_text(b, text, sizeof(text));
                                recv_abort(b, WIRE_E_IO, text);
                                return;
                        }
                        /* Between two files of a session: a sender reading
                         * the next one for its digest says so (WAIT), for
                         * as long as the job's bytes left take to read,
                         * at most XFER_WAIT_MAX times peer_timeout. */
                        if (!xfer_peer_silent(b)) {
                                if (!xfer_wait_overdue(b, x->t_between, x->job_bytes - MIN(x->offered,
                                                                                              x->job_bytes)))
                                        return;
                                snprintf(text, sizeof(text), "no offer of file %u in the time reading "
                                         "it allows", x->next_file + 1);
                                recv_abort(b, WIRE_E_PROTOCOL, text);
                                return;
                        }
                        snprintf(text, sizeof(text), "no offer of file %u within %u s", x->next_file + 1,
                                 sec);
                } else {
                        snprintf(text, sizeof(text), "no offer within %u s", recv_offer_timeout(x));
                }
                recv_abort(b, WIRE_E_PROTOCOL, text);
                return;
        case XFER_FINISHING:
                /* fsync of a large file can take a while; that is not a
                 * stall, unless the disk does nothing for io_timeout. */
                if (xfer_disk_stalled(b)) {
                        xfer_disk_text(b, text, sizeof(text));
                        recv_abort(b, WIRE_E_IO, text);
                } else if (b->ios == 0) {
                        xfer_arm_deadline(b);
                }
                return;
        case XFER_DATA:
                switch (xfer_check_pace(b, why, sizeof(why))) {
                case XFER_PACE_OK:
                        return;
                case XFER_PACE_DISK:
                        recv_abort(b, WIRE_E_IO, why);
                        return;
                case XFER_PACE_SLOW:
                        snprintf(text, sizeof(text), "sender too slow: %.*s", XFER_TEXT_MAX - 17, why);
                        break;
                case XFER_PACE_SILENT:
                        snprintf(text, sizeof(text), b->nlive < b->nlanes ?
                                 "granted lanes did not connect within %u s" :
                                 "no progress from sender for %u s", sec);
                        break;
                }
                recv_abort(b, WIRE_E_PROTOCOL, text);
                return;
        default:
                /* Lingering after the verdict: the peer did not hang up. */
                xfer_hangup(b);
                return;
        }
}

/* Decide, send the verdict (REFUSE before data, RESULT after) on every
 * lane, then wait for the hang-up. */
void recv_verdict(struct recv_xfer *x, unsigned int status, const char *text)
{
        struct xfer *b = &x->base;
        struct wire_msg m = { 0 };
        struct wire_result hops = { 0 };
        bool refuse = b->state == XFER_OFFER;

        /* What became of the rest of the route, before deciding lets it go. */
        if (status == WIRE_OK && x->relay)
                relay_result(x->relay, &hops);
        if (!xfer_decide(b, status == WIRE_OK ? ENGINE_DONE : ENGINE_FAILED, status, text))
                return;
        if (refuse) {
                m.type = WIRE_REFUSE;
                m.refuse.status = status;
                snprintf(m.refuse.text, sizeof(m.refuse.text), "%.*s", WIRE_TEXT_MAX, b->text);
        } else {
                /* The file being published is the older one in flight. */
                const struct recv_file *f = recv_named(x);

                m.type = WIRE_RESULT;
                m.result.status = status;
                m.result.file = f->offer.file;
                m.result.bytes = status == WIRE_OK && !f->skip ? f->offer.size : f->file_bytes;
                m.result.usec = f->usec ?: (b->t_last > f->t_file ? b->t_last - f->t_file : 0);
                snprintf(m.result.text, sizeof(m.result.text), "%.*s", WIRE_TEXT_MAX,
                         status == WIRE_OK && f->skip ? "skipped" : b->text);
                if (status == WIRE_OK && (f->offer.flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) && f->pack_skipped)
                        snprintf(m.result.text, sizeof(m.result.text), "skipped %u", f->pack_skipped);
                /* A pull's: what its send back found there already. */
                if (status == WIRE_OK && x->landing && x->landing->direction == WIRE_LAND_PULL)
                        snprintf(m.result.text, sizeof(m.result.text), "skipped %u", x->pull_skipped);
                if (status == WIRE_OK && x->dry)
                        snprintf(m.result.text, sizeof(m.result.text), "%s", recv_dry_text(f));
                m.result.hops = hops.hops;
                m.result.hop_failed = hops.hop_failed;
                m.result.hop_status = hops.hop_status;
                m.result.hop_missing = hops.hop_missing;
                if (hops.hop_failed)
                        memcpy(m.result.text, hops.text, sizeof(m.result.text));
                /* A tree published with --delete says what went (wire.h, Deleting). */
                if (status == WIRE_OK && x->deleted) {
                        size_t n = strlen(m.result.text);

                        snprintf(m.result.text + n, sizeof(m.result.text) - n, "%sdeleted %" PRIu64,
                                 n ? "; " : "", x->deleted);
                }
        }
        xfer_set_state(b, XFER_CLOSING);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                struct recv_lane *l = recv_lane(x, k);
                int r;

                /* Not on a lane whose rail was lost (wire.h, Rails). */
                if (!l || l->base.conn.reaping || l->detached || l->base.broken)
                        continue;
                /* The sender counts only a RESULT that proves the key. */
                if (m.type == WIRE_RESULT && b->session.on)
                        auth_result_mac(&b->session, k, &m.result, m.result.mac);
                r = conn_send_ctrl(&l->base.conn, &m);
                if (r < 0) {
                        log_warning("%s: cannot send verdict: %s", b->peer, strerror(-r));
                        conn_disconnect(&l->base.conn);
                }
        }
        xfer_arm_timer(b, RECV_LINGER_SEC);
}

void recv_abort(struct xfer *b, unsigned int status, const char *text)
{
        struct recv_xfer *x = recv_xfer_of(b);

        if (b->state == XFER_CLOSING)
                return;
        if (status == WIRE_OK)
                status = WIRE_E_INTERNAL;
        recv_partial_final(x);
        if (recv_named(x)->offer.name[0])
                log_warning("%s: receive of %s failed: %s%s%s", b->peer, recv_named(x)->offer.name,
                            wire_status_str(status), text ? ": " : "", text ?: "");
        else
                log_notice("%s: connection refused: %s%s%s", b->peer, wire_status_str(status),
                           text ? ": " : "", text ?: "");
        if (b->state == XFER_CONNECTING) {
                /* Nothing to tell a peer that has not connected yet. */
                xfer_decide(b, ENGINE_FAILED, status, text);
                xfer_hangup(b);
                return;
        }
        recv_verdict(x, status, text);
}

void recv_fail(struct recv_xfer *x, unsigned int status, const char *text)
{
        recv_abort(&x->base, status, text);
}

/* Lost a lane without a verdict on the wire: the transfer is lost with it. */
static void recv_lost(struct recv_lane *l, const char *why)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        char text[XFER_TEXT_MAX + 1];

        if (b->state != XFER_CLOSING) {
                recv_partial_final(x);
                if (b->nlanes > 1)
                        snprintf(text, sizeof(text), "lane %u: %s", l->base.idx, why);
                else
                        snprintf(text, sizeof(text), "%s", why);
                if (recv_named(x)->offer.name[0])
                        log_warning("%s: receive of %s aborted: %s; nothing published",
                                    b->peer, recv_named(x)->offer.name, text);
                xfer_decide(b, ENGINE_FAILED, WIRE_E_PROTOCOL, text);
        }
        xfer_hangup(b);
}

/* Lane @l's connection broke (@why): a lane on another rail than lane
 * 0's, which the sender may join again over another (wire.h, Rails), is
 * kept for it (the transfer's deadline stands if it never does); any
 * other ends the transfer (recv_lost). */
static void recv_lane_broke(struct recv_lane *l, const char *why)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);

        if (l->detached || !b->lane[0] || !recv_may_rejoin(x, l->base.idx)) {
                recv_lost(l, why);
                return;
        }
        if (l->base.idx > 0 && l->base.conn.env != b->lane[0]->conn.env) {
                recv_lane_detach(l, why);
                return;
        }
        /* On lane 0's rail: only its port or device fails the rail
         * (recv_rail_lost), and their word may come a little after the
         * break. Where another rail carries a lane, it is waited for. */
        for (unsigned int k = 0; k < b->nlanes; k++) {
                const struct recv_lane *o = recv_lane(x, k);

                if (o && !o->detached && o->base.conn.env != l->base.conn.env && o->base.conn.id) {
                        xfer_lane_wait_rail(&l->base, WIRE_E_PROTOCOL, why);
                        return;
                }
        }
        recv_lost(l, why);
}

static void recv_rail_silent(struct xfer_lane *l, unsigned int status, const char *text)
{
        recv_lost(recv_lane_of(l), text);
}

uint32_t recv_credits_take(struct recv_lane *l)
{
        struct xfer *b = l->base.x;
        uint32_t n = l->credits_pending;

        /* Nothing may arrive on a lane before its digest has the kept part. */
        if (recv_xfer_of(b)->rh_busy[l->base.idx])
                return 0;
        if (xfer_pace_on(b)) {
                /* A credit is a chunk's worth: one slot, whatever lands in it. */
                uint32_t chunk = recv_xfer_of(b)->chunk;

                /*
                 * A lane that has its whole run (END came) uses no credit
                 * until the session's next file (recv_lanes_flush then), so
                 * it takes none of the bucket's: taking them starved the
                 * lanes still receiving. Runs differ by up to a block, and
                 * lanes took turns at the bucket, so the longer run went on
                 * at half the limit once the short one was done.
                 */
                if (l->base.ended)
                        return 0;

                for (n = 0; n < l->credits_pending && xfer_pace_take(b, chunk); n++)
                        ;
        }
        l->credits_pending -= n;
        return n;
}

static void recv_flush_credits(struct recv_lane *l, bool force)
{
        struct xfer *b = l->base.x;
        struct wire_msg m = { .type = WIRE_CREDIT };

        /* After every END too: a session's next offer needs one (wire.h). */
        if ((b->state != XFER_DATA && b->state != XFER_FINISHING) || l->credits_pending == 0 || l->base.broken)
                return;
        /* Batched, but never in batches as large as what the sender holds
         * when it is down to a few slots: it would wait for ever. */
        if (!force && l->credits_pending < MAX(1u, MIN(b->ring->share, l->base.hold.held) / 4))
                return;
        /* Keep one buffer for the verdict. */
        if (conn_ctrl_free(&l->base.conn) < 2)
                return;
        m.credits = recv_credits_take(l);
        if (m.credits == 0)
                return;         /* the pace timer brings them */
        if (conn_send_ctrl(&l->base.conn, &m) < 0)
                l->credits_pending += m.credits;
}

void recv_credits_flush(struct recv_lane *l)
{
        if (l->base.established && !l->base.conn.reaping)
                recv_flush_credits(l, true);
}

/* The bucket allows more: every lane's credits that waited, @first first. */
static void recv_paced(struct xfer *b, unsigned int first)
{
        struct recv_xfer *x = recv_xfer_of(b);

        for (unsigned int k = 0; k < b->nlanes && b->state == XFER_DATA; k++) {
                struct recv_lane *l = recv_lane(x, (first + k) % b->nlanes);

                if (l && !l->base.conn.reaping)
                        recv_flush_credits(l, true);
        }
}

/*
 * Borrow more slots while the ring has some to lend and this lane has more
 * chunks (or its END) to come than slots posted: at most @max at a time (one per
 * completed write, so a transfer grows only as fast as it actually uses
 * what it has).
 */
static void recv_lane_grow(struct recv_lane *l, unsigned int max)
{
        struct xfer *b = l->base.x;
        /* What is left of its run, and one for its END at least: a lane
         * whose run is empty (a directory, a file of fewer blocks than
         * lanes) still needs a slot and a credit to say so. In a session,
         * one more: the next file's END may go before this one's credit
         * comes back (wire.h, Pipelining), else every file of a tree
         * waits a round trip for it. */
        uint64_t want = MAX(l->base.end_seq - l->next_seq, (uint64_t)1) + (recv_xfer_of(b)->job_files > 1);
        uint32_t i;

        for (unsigned int n = 0; n < max; n++) {
                if (b->state != XFER_DATA || l->base.ended || l->base.conn.reaping || l->detached ||
                    want <= l->base.hold.held ||
                    !ring_hold_grow(&l->base.hold, b->ring, &i))
                        return;
                if (recv_post_slot(l, i) < 0) {
                        ring_hold_release(&l->base.hold, b->ring, i);
                        return;
                }
                l->credits_pending++;
        }
}

int recv_lane_post_all(struct recv_lane *l)
{
        bool rejoin = l->detached;
        int r;

        for (uint32_t i = 0; i < l->base.hold.held; i++) {
                /* A lane joined again: its slots but those still being
                 * written (posted once written), each with a credit. */
                if (rejoin && l->rs[i].writing)
                        continue;
                r = recv_post_slot(l, i);
                if (r < 0)
                        return r;
                l->credits_pending += rejoin;
        }
        l->detached = false;
        if (l->base.idx > 0 || rejoin) {
                /* What the ring lends now goes into the welcome's credits
                 * (as pacing allows: recv_credits_take); more comes as the
                 * other lanes write. */
                recv_lane_grow(l, UINT_MAX);
        }
        return 0;
}

int recv_admit(struct recv_xfer *x)
{
        struct recv_lane *l0 = recv_lane(x, 0);
        int r;

        r = xfer_lane_admit(&l0->base);
        if (r != 0)
                return r;
        x->admitted = true;
        r = recv_lane_post_all(l0);
        if (r < 0)
                return r;
        /* They go to the sender with the ACCEPT. */
        l0->credits_pending = l0->base.hold.held;
        return 0;
}

unsigned int recv_offer_timeout(const struct recv_xfer *x)
{
        return MIN((unsigned int)RECV_OFFER_SEC, xfer_peer_timeout(&x->base));
}

/* A starved lane (xfer_feed_starved): one slot, credited at once. */
static void recv_feed(struct xfer_lane *b)
{
        struct recv_lane *l = recv_lane_of(b);

        recv_lane_grow(l, 1);
        recv_flush_credits(l, true);
}

struct recv_xfer *recv_of_file_req(struct io_req *req)
{
        return container_of(req, struct recv_file, req)->x;
}

void recv_lanes_flush(struct recv_xfer *x)
{
        for (unsigned int k = 1; k < x->base.nlanes && x->base.state == XFER_DATA; k++) {
                struct recv_lane *l = recv_lane(x, k);

                if (l && !l->base.conn.reaping)
                        recv_flush_credits(l, true);
        }
}

/* A retry of a transfer published already: the sender's digests must be
 * those verified then, or another file has that name. */
static void recv_finish_published(struct recv_xfer *x)
{
        struct xfer *b = &x->base;

        for (unsigned int k = 0; k < b->nlanes; k++)
                if (memcmp(recv_lane(x, k)->end.digest, x->found.digest[k], WIRE_DIGEST_SIZE) != 0) {
                        recv_abort(b, WIRE_E_EXISTS, "another file was published under this name");
                        return;
                }
        memcpy(x->cur->digest, x->found.file_digest, WIRE_DIGEST_SIZE);
        log_info("%s: %s: published already by this transfer; answering ok", b->peer, x->cur->offer.name);
        recv_verdict(x, WIRE_OK, NULL);
}

void recv_finish(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        uint8_t d[WIRE_DIGEST_SIZE];

        /* Verified already, it waits for the file before (recv-session.c). */
        if (b->state != XFER_FINISHING || x->writes > 0 || x->fin_waiting)
                return;
        /* A checkpoint's store must not land after the partial is replaced. */
        if (x->ckpt_busy) {
                x->finish_waiting = true;
                return;
        }
        if (x->published_match) {
                recv_finish_published(x);
                return;
        }
        if (x->bytes_written != x->cur->offer.size) {
                recv_partial_drop(x);
                recv_abort(b, WIRE_E_SIZE, "short write");
                return;
        }
        for (unsigned int k = 0; k < b->nlanes; k++) {
                struct recv_lane *l = recv_lane(x, k);

                digest_final(&l->base.digest, d);
                if (memcmp(d, l->end.digest, WIRE_DIGEST_SIZE) != 0) {
                        /* Kept bytes or new ones, the partial is no good. */
                        recv_partial_drop(x);
                        recv_abort(b, WIRE_E_CHECKSUM, x->resumed ? "with the kept part" : NULL);
                        return;
                }
        }
        /* Every lane verified, so every block hash is the sender's. */
        (void)xfer_digest(b, x->cur->digest);
        if (x->relay)
                relay_verified(x->relay);
        recv_verified(x);
}

/*
 * A sparse file's lane @l jumps to chunk @seq (its next, or its run's end
 * for END): the chunks left out are a hole, zeros in the digest, and
 * already what the file holds there (recv_truncate). 0, or -1 after a
 * failure.
 */
static int recv_hole(struct recv_lane *l, uint64_t seq)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        uint64_t chunk = x->cur->offer.chunk_size, size = x->cur->offer.size;
        uint64_t from = MIN(l->next_seq * chunk, size), to = MIN(seq * chunk, size);

        if (to <= from)
                return 0;
        if (digest_zeros(&l->base.digest, to - from) < 0) {
                recv_abort(b, WIRE_E_INTERNAL, "no memory for the digest");
                return -1;
        }
        x->cur->file_bytes += to - from;
        x->cur->holes += to - from;
        x->holes += to - from;
        x->bytes_written += to - from;
        b->bytes += to - from;
        l->next_seq = seq;
        return 0;
}

static void recv_on_end(struct recv_lane *l, const struct wire_end *end)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        char text[64];

        /* The digest is not a MAC: only the key makes it the sender's. */
        if (b->session.on && auth_end_verify(&b->session, l->base.idx, end) < 0) {
                snprintf(text, sizeof(text), "lane %u: END does not prove the session key", l->base.idx);
                recv_abort(b, WIRE_E_AUTH, text);
                return;
        }
        /* A sparse file's run may end in a hole. */
        if ((x->cur->offer.flags & WIRE_OFFER_SPARSE) && !l->base.ended && end->file == x->cur->offer.file &&
            recv_hole(l, l->base.end_seq) < 0)
                return;
        if (l->base.ended || end->file != x->cur->offer.file || l->next_seq != l->base.end_seq ||
            end->bytes != wire_run_bytes(x->cur->offer.size, x->cur->offer.chunk_size, l->base.first_seq,
                                         l->base.end_seq)) {
                recv_abort(b, WIRE_E_SIZE, "sender's byte count differs");
                return;
        }
        l->end = *end;
        l->base.ended = true;
        if (++b->nended < b->nlanes)
                return;
        if (x->cur->file_bytes != x->cur->offer.size) {
                recv_abort(b, WIRE_E_SIZE, "sender's byte count differs");
                return;
        }
        xfer_set_state(b, XFER_FINISHING);
        /* The sender waits for the verdict, held to peer_timeout of silence. */
        recv_tick_start(x);
        recv_finish(x);
}

static void recv_slot_written(struct recv_lane *l, uint32_t i);

static void recv_on_write(struct io_req *req, int64_t res)
{
        struct recv_slot *rs = (struct recv_slot *)req;
        struct recv_lane *l = rs->l;
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);

        x->writes--;
        rs->writing = false;
        if (!xfer_io_done(b) || l->base.conn.reaping || b->state == XFER_CLOSING)
                return;
        if (res < 0) {
                char text[WIRE_TEXT_MAX + 1];

                snprintf(text, sizeof(text), "write at offset %" PRIu64 ": %s", req->off,
                         strerror((int)-res));
                recv_abort(b, wire_status_of_errno((int)-res), text);
                return;
        }
        recv_slot_written(l, (uint32_t)(rs - l->rs));
}

/* Slot @i goes back: posted again with a credit, or given back to the
 * ring. 0, or -1 when the transfer failed. */
static int recv_slot_return(struct recv_lane *l, uint32_t i)
{
        struct xfer *b = l->base.x;

        if (ring_hold_over(&l->base.hold, b->ring)) {
                /* Lent while it was alone: give it back, without a credit. */
                ring_hold_release(&l->base.hold, b->ring, i);
                xfer_feed_starved(b->env, XFER_RECV);
                return 0;
        }
        /* Its lane has no connection now: posted when it joins again. */
        if (l->detached)
                return 0;
        if (recv_post_slot(l, i) < 0) {
                recv_abort(b, WIRE_E_INTERNAL, "cannot repost a receive");
                return -1;
        }
        l->credits_pending++;
        recv_lane_grow(l, 1);
        return 0;
}

/* Slot @i's data is in the file, or in the pack's memory: the slot goes
 * back, unless a relay's downstream is to send the chunk from it first
 * (relay_hold: it comes back through recv_slot_forwarded). */
static void recv_slot_written(struct recv_lane *l, uint32_t i)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        bool held = false;

        x->bytes_written += l->rs[i].len;
        if (x->relay) {
                /* Held before the downstream hears the chunk is written, so
                 * that it sends from the slot rather than reading it back. */
                held = relay_hold(x->relay, l, i, l->rs[i].seq);
                relay_written(x->relay, l->rs[i].seq);
        }
        if (!held && recv_slot_return(l, i) < 0)
                return;
        if (b->state == XFER_FINISHING)
                recv_finish(x);
        else
                recv_partial_checkpoint(x);
        /* Credits go out in wc_batch_end or here, batched. */
        recv_flush_credits(l, false);
}

void recv_slot_forwarded(struct recv_lane *l, uint32_t i)
{
        struct xfer *b = l->base.x;

        /* Closing: the lane's slots go back with it. */
        if (b->state == XFER_CLOSING || l->base.conn.reaping)
                return;
        if (recv_slot_return(l, i) == 0)
                recv_flush_credits(l, false);
}

const uint8_t *recv_slot_data(const struct recv_lane *l, uint32_t i)
{
        const struct recv_env *e = recv_xfer_of(l->base.x)->env;

        return e->ring_mem + (size_t)l->base.hold.slot[i] * e->slot_size;
}

static void recv_on_data(struct recv_lane *l, uint32_t i, uint32_t seq, uint32_t len)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        struct recv_slot *rs = &l->rs[i];
        uint64_t off = (uint64_t)seq * x->cur->offer.chunk_size;
        uint64_t want;
        int r;

        if (b->state != XFER_DATA) {
                recv_abort(b, WIRE_E_PROTOCOL, "data outside a transfer");
                return;
        }
        want = MIN((uint64_t)x->cur->offer.chunk_size, x->cur->offer.size - MIN(off, x->cur->offer.size));
        /* A sparse file's chunks may skip a hole, forward only, within the run. */
        if ((x->cur->offer.flags & WIRE_OFFER_SPARSE) && seq > l->next_seq && seq < l->base.end_seq &&
            recv_hole(l, seq) < 0)
                return;
        if (seq != (uint32_t)l->next_seq || l->next_seq >= l->base.end_seq || len != want) {
                recv_abort(b, WIRE_E_PROTOCOL, "data chunk out of sequence or of wrong length");
                return;
        }
        if ((x->cur->offer.flags & WIRE_OFFER_SPARSE) &&
            (x->cur->data_in += len) > x->cur->offer.data_bytes) {
                recv_abort(b, WIRE_E_SIZE, "more data than the sparse file's offer announced");
                return;
        }
        l->next_seq++;
        b->bytes += len;
        b->env->wire_bytes[XFER_RECV] += len;
        l->base.conn.env->dev->bytes_in += len;
        x->cur->file_bytes += len;
        /* One clock read per chunk: data is progress too. */
        b->t_last = b->t_progress = clock_usec(CLOCK_MONOTONIC);

        rs->l = l;
        rs->len = len;
        rs->seq = seq;
        /* A pack (at most PACK_BYTES_MAX, recv-offer.c) is unpacked from
         * memory: copied there, the slot is free at once. */
        if (x->cur->offer.flags & WIRE_OFFER_PACK) {
                if (!x->cur->pack_mem && recv_pack_mem_new(x) < 0) {
                        recv_abort(b, WIRE_E_INTERNAL, "no memory for a pack");
                        return;
                }
                digest_update(&l->base.digest, recv_slot_mem(l, i), len);
                memcpy(x->cur->pack_mem + off, recv_slot_mem(l, i), len);
                recv_slot_written(l, i);
                return;
        }
        rs->io.done = recv_on_write;
        r = io_write(recv_xfer_of(b)->env->io, &rs->io, x->cur->fd, recv_slot_mem(l, i), len, off);
        if (r < 0) {
                recv_abort(b, WIRE_E_IO, strerror(-r));
                return;
        }
        x->writes++;
        rs->writing = true;
        xfer_io_start(b, "writing the file");
        /* Hash while the kernel copies the slot out: both only read it, and
         * its completion (which frees the slot) is handled on this loop later. */
        digest_update(&l->base.digest, recv_slot_mem(l, i), len);
}

void recv_credits_return(struct recv_lane *l)
{
        struct wire_msg m = { .type = WIRE_CREDIT };

        if (l->credits_pending == 0 || conn_ctrl_free(&l->base.conn) < 2)
                return;
        m.credits = l->credits_pending;
        l->credits_pending = 0;
        if (conn_send_ctrl(&l->base.conn, &m) < 0)
                l->credits_pending = m.credits;
}

/*
 * A chain's first ROUTE part, before the first offer (wire.h, Relay
 * chains), in lane 0's one control buffer: kept for the offer, whose
 * route hash must be its own (once the route is whole: relay_route_in),
 * and the buffer given back for that offer with a CREDIT. It holds
 * nothing the connection did not have already.
 */
static void recv_on_route(struct recv_lane *l, const struct wire_route *route)
{
        struct recv_xfer *x = recv_xfer_of(l->base.x);
        struct wire_msg m = { .type = WIRE_CREDIT, .credits = 1 };

        x->route = *route;
        x->route_on = true;
        if (conn_repost_ctrl(&l->base.conn, CONN_WRID_CTRL | CONN_CTRL_BUFS) < 0 ||
            conn_send_ctrl(&l->base.conn, &m) < 0)
                recv_abort(&x->base, WIRE_E_INTERNAL, "cannot take the offer after a route");
}

/* A part of the next offer's long path: from where the last one ended,
 * of the same whole (wire_decode() held it within WIRE_PATH_MAX). */
/* A part of a whole that comes in parts (a path, an entry's attributes)
 * into @buf: from where the last one ended (*@have), of the same whole
 * (*@total); wire_decode() held it within @buf. False: out of order. */
static bool recv_part_take(void *buf, uint16_t *have, uint16_t *total, uint16_t p_total, uint16_t offset,
                           const void *bytes, uint16_t len)
{
        if (offset != *have || (*have > 0 && p_total != *total))
                return false;
        *total = p_total;
        memcpy((char *)buf + offset, bytes, len);
        *have = (uint16_t)(*have + len);
        return true;
}

static void recv_on_name(struct recv_xfer *x, const struct wire_name *n)
{
        if (!recv_part_take(x->lname, &x->lname_len, &x->lname_total, n->total, n->offset, n->bytes, n->len))
                recv_abort(&x->base, WIRE_E_PROTOCOL, "a part of a path out of order");
}

/* A part of the next offer's attributes, in a landing that carries them. */
static void recv_on_xattr(struct recv_xfer *x, const struct wire_land *p)
{
        if (!x->landing || !(x->landing->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS))) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, "attributes in a session that carries none");
                return;
        }
        if (!recv_part_take(x->xattrs, &x->xattrs_len, &x->xattrs_total, p->total, p->offset, p->bytes, p->len))
                recv_abort(&x->base, WIRE_E_PROTOCOL, "a part of an entry's attributes out of order");
}

/* A part of a deleting tree's rules, before its first offer (wire.h,
 * Deleting): its buffer back, and a CREDIT for the next, as a LAND's. */
static void recv_on_rules(struct recv_lane *l, const struct wire_land *p)
{
        struct recv_xfer *x = recv_xfer_of(l->base.x);
        struct wire_msg m = { .type = WIRE_CREDIT, .credits = 1 };

        if (!x->rules_buf && !(x->rules_buf = malloc(WIRE_RULES_MAX))) {
                recv_abort(&x->base, WIRE_E_INTERNAL, "out of memory for a tree's rules");
                return;
        }
        if (!recv_part_take(x->rules_buf, &x->rules_len, &x->rules_total, p->total, p->offset, p->bytes, p->len)) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, "a part of a tree's rules out of order");
                return;
        }
        if (conn_repost_ctrl(&l->base.conn, CONN_WRID_CTRL | CONN_CTRL_BUFS) < 0 ||
            conn_send_ctrl(&l->base.conn, &m) < 0)
                recv_abort(&x->base, WIRE_E_INTERNAL, "cannot take the next part of a tree's rules");
}

/* The rules before @o, DEST's offer, whole, as @o's (their hash, which
 * the MAC covers) and the session's (x->protect): false when they are
 * not (the transfer failed). */
static bool recv_offer_rules(struct recv_xfer *x, struct wire_offer *o)
{
        char why[300], text[WIRE_TEXT_MAX + 1];

        if (!x->rules_buf || x->next_file != 0)
                return true;
        if (x->rules_len != x->rules_total || x->protect ||
            (o->flags & (WIRE_OFFER_TREE | WIRE_OFFER_DELETE | WIRE_OFFER_LAND)) !=
                    (WIRE_OFFER_TREE | WIRE_OFFER_DELETE)) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, "rules, but not whole before a deleting tree's first offer");
                return false;
        }
        o->rules_len = x->rules_len;
        crypto_hash_sha256(o->rules_hash, (const uint8_t *)x->rules_buf, x->rules_len);
        x->protect = filter_list_new();
        if (!x->protect) {
                recv_abort(&x->base, WIRE_E_INTERNAL, "out of memory for a tree's rules");
                return false;
        }
        if (filter_list_parse(x->protect, x->rules_buf, x->rules_len, why, sizeof(why)) < 0) {
                snprintf(text, sizeof(text), "a tree's rules that do not parse: %.150s", why);
                recv_abort(&x->base, WIRE_E_PROTOCOL, text);
                return false;
        }
        return true;
}

/* The attributes before @o, whole, as @o's (not on the wire: wire.h):
 * false when they are not (the transfer failed). */
static bool recv_offer_xattrs(struct recv_xfer *x, struct wire_offer *o)
{
        if (x->xattrs_len == 0)
                return true;
        if (x->xattrs_len != x->xattrs_total || (o->flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) ||
            !wire_land_xattrs_ok(x->landing->flags, x->xattrs, x->xattrs_len)) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, x->xattrs_len != x->xattrs_total
                                                              ? "an offer before the last part of its attributes"
                                                              : "attributes on a pack or a link, or malformed");
                return false;
        }
        memcpy(o->xattrs, x->xattrs, x->xattrs_len);
        o->xattrs_len = x->xattrs_len;
        crypto_hash_sha256(o->xattrs_hash, o->xattrs, o->xattrs_len);
        x->xattrs_len = 0;
        return true;
}

/*
 * A control message from the sender: in lane 0's one control buffer (the
 * offer, before the transfer holds any slot: @slot is -1), or in a slot of
 * the ring, which goes straight back with a credit.
 */
static void recv_on_ctrl(struct recv_lane *l, const void *buf, uint32_t len, int64_t slot)
{
        struct xfer *b = l->base.x;
        struct recv_xfer *x = recv_xfer_of(b);
        struct wire_msg m;
        int r;

        r = wire_decode(buf, len, &m);
        if (r < 0) {
                recv_abort(b, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                           "undecodable control message");
                return;
        }
        if (slot >= 0) {
                if (recv_post_slot(l, (uint32_t)slot) < 0) {
                        recv_abort(b, WIRE_E_INTERNAL, "cannot repost a receive");
                        return;
                }
                l->credits_pending++;
        }
        xfer_progress(b);

        /* The first message can beat our own ESTABLISHED event. */
        if (b->state == XFER_CONNECTING)
                xfer_set_state(b, XFER_OFFER);
        if (m.type == WIRE_OFFER && l->base.idx == 0 && b->state != XFER_CONNECTING) {
                /* The session's landing came before its first offer, whole (wire.h). */
                if (x->next_file == 0 && !x->landing && !recv_land_offer(x, &m.offer))
                        return;
                if (m.offer.flags & WIRE_OFFER_LAND && (x->next_file != 0 || !x->landing)) {
                        recv_abort(b, WIRE_E_PROTOCOL, "a later offer that lands as a user");
                        return;
                }
                /* Its long path came before it, whole (wire.h, Long paths). */
                if ((m.offer.flags & WIRE_OFFER_LONG_NAME) ?
                    x->lname_len == 0 || x->lname_len != x->lname_total : x->lname_len != 0) {
                        recv_abort(b, WIRE_E_PROTOCOL, (m.offer.flags & WIRE_OFFER_LONG_NAME) ?
                                   "an offer before the last part of its path" :
                                   "a path's parts before an offer without one");
                        return;
                }
                if (m.offer.flags & WIRE_OFFER_LONG_NAME) {
                        memcpy(m.offer.name, x->lname, x->lname_len);
                        m.offer.name[x->lname_len] = '\0';
                        x->lname_len = 0;
                }
                if (!recv_offer_xattrs(x, &m.offer) || !recv_offer_rules(x, &m.offer))
                        return;
                recv_offer_in(x, &m.offer);
        } else if (m.type == WIRE_NAME && slot >= 0 && l->base.idx == 0 && x->next_file > 0)
                recv_on_name(x, &m.name);
        else if (m.type == WIRE_XATTR && slot >= 0 && l->base.idx == 0 && x->next_file > 0)
                recv_on_xattr(x, &m.xattr);
        else if (m.type == WIRE_LAND && slot < 0 && l->base.idx == 0 && b->state == XFER_OFFER &&
                 x->next_file == 0 && !x->landing && !x->cur->offer.name[0] && !x->route_on)
                recv_land_part(l, &m.land);
        else if (m.type == WIRE_RULES && slot < 0 && l->base.idx == 0 && b->state == XFER_OFFER &&
                 x->next_file == 0 && !x->cur->offer.name[0] && !x->protect)
                recv_on_rules(l, &m.rules);
        else if (m.type == WIRE_ROUTE && slot < 0 && b->state == XFER_OFFER && !x->route_on &&
                 x->next_file == 0 && !x->cur->offer.name[0] && m.route.first == 0)
                recv_on_route(l, &m.route);
        else if (m.type == WIRE_ROUTE && slot >= 0 && l->base.idx == 0 && b->state == XFER_DATA && x->relay)
                relay_route_in(x->relay, &m.route);
        else if (m.type == WIRE_END && b->state == XFER_DATA && l->base.idx == 0 && x->relay &&
                 !relay_route_whole(x->relay))
                recv_abort(b, WIRE_E_PROTOCOL, "lane 0's END before the route's last part");
        else if (m.type == WIRE_WAIT && l->base.idx == 0 && recv_wait_ok(x, m.wait.file))
                /* The next offer is coming (wire.h, WAIT): its credit goes
                 * straight back, and the message itself was progress. */
                recv_credits_return(l);
        else if (m.type == WIRE_END && b->state == XFER_DATA)
                recv_on_end(l, &m.end);
        else
                recv_abort(b, WIRE_E_PROTOCOL, "unexpected control message");
}

static void recv_on_wc(struct conn *c, const struct ibv_wc *wc)
{
        struct recv_lane *l = (struct recv_lane *)c;

        if ((wc->wr_id & CONN_WRID_CTRL) && (wc->wr_id & ~CONN_WRID_CTRL) < CONN_CTRL_BUFS) {
                conn_ctrl_send_done(c, wc->wr_id);
                if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR) {
                        recv_lane_broke(l, ibv_wc_status_str(wc->status));
                        return;
                }
                /* A dry run's GONEs wait for a buffer (recv-dry.c), an index's NEED too. */
                if (l->base.idx == 0 && l->base.x) {
                        recv_dry_pump(recv_xfer_of(l->base.x));
                        recv_need_pump(recv_xfer_of(l->base.x));
                }
                return;
        }
        if ((wc->wr_id & CONN_WRID_CTRL) && wc->status != IBV_WC_SUCCESS &&
            wc->status != IBV_WC_WR_FLUSH_ERR) {
                char text[WIRE_TEXT_MAX + 1];

                /* Before the offer there is only lane 0's control buffer: a
                 * chunk of data does not fit (rxe says "remote invalid
                 * request", others "local length"), and the queue pair is
                 * in error now, so the refusal may not reach the peer. */
                snprintf(text, sizeof(text), "data outside a transfer (before any offer: %s)",
                         ibv_wc_status_str(wc->status));
                recv_abort(l->base.x, WIRE_E_PROTOCOL, text);
                return;
        }
        if (wc->status != IBV_WC_SUCCESS) {
                /* Flushes follow the first real error or our own teardown. */
                if (wc->status != IBV_WC_WR_FLUSH_ERR) {
                        char text[WIRE_TEXT_MAX + 1];

                        snprintf(text, sizeof(text), "receive completion: %s",
                                 ibv_wc_status_str(wc->status));
                        recv_lane_broke(l, text);
                }
                return;
        }
        if (l->base.x->state == XFER_CLOSING)
                return;
        if (wc->wr_id & CONN_WRID_CTRL) {
                /* Lane 0's control buffer: the offer; it is not posted again. */
                recv_on_ctrl(l, conn_ctrl_buf(c, wc->wr_id), wc->byte_len, -1);
                return;
        }
        if (wc->wr_id >= l->base.hold.cap || l->base.hold.slot[wc->wr_id] == RING_NO_SLOT) {
                recv_lost(l, "completion for an unknown slot");
                return;
        }
        if (wc->wc_flags & IBV_WC_WITH_IMM)
                recv_on_data(l, wc->wr_id, be32toh(wc->imm_data), wc->byte_len);
        else
                recv_on_ctrl(l, recv_slot_mem(l, wc->wr_id), wc->byte_len, (int64_t)wc->wr_id);
}

static void recv_on_batch_end(struct conn *c)
{
        recv_flush_credits((struct recv_lane *)c, false);
}

static void recv_on_cm(struct conn *c, enum rdma_cm_event_type type, int status,
                       const void *pdata, size_t plen)
{
        struct recv_lane *l = (struct recv_lane *)c;

        switch (type) {
        case RDMA_CM_EVENT_ESTABLISHED:
                l->base.established = true;
                if (l->base.x->state == XFER_CONNECTING)
                        xfer_set_state(l->base.x, XFER_OFFER);
                /* A lane that joined while pacing held its welcome's credits
                 * back may not have been able to send them before now. */
                recv_flush_credits(l, true);
                break;
        case RDMA_CM_EVENT_DISCONNECTED:
                recv_lane_broke(l, "peer disconnected");
                break;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
                recv_lost(l, "RDMA device removed");
                break;
        default:
                /* CONNECT_ERROR, UNREACHABLE, REJECTED (accept failed) ... */
                recv_lost(l, rdma_event_str(type));
                break;
        }
}

/* Writes, fallocate and fsync are on the file; a path step is file_req. */
static void recv_cancel_io(struct xfer *b)
{
        struct recv_xfer *x = recv_xfer_of(b);

        for (unsigned int i = 0; i < ARRAY_SIZE(x->files); i++) {
                struct recv_file *f = &x->files[i];

                /* Not while a checkpoint syncs: its fsync is what keeps the progress. */
                if (f->fd >= 0 && !x->ckpt_busy)
                        io_cancel_fd(recv_xfer_of(b)->env->io, f->fd);
                io_cancel(recv_xfer_of(b)->env->io, &f->req);
        }
        if (x->early.fd >= 0)
                io_cancel_fd(recv_xfer_of(b)->env->io, x->early.fd);
        io_cancel(recv_xfer_of(b)->env->io, &x->early.req);
}

/* A tree job that did not publish: its staging directory goes, off the loop. */
struct recv_unstage {
        struct io_req req;      /* first */
        int dirfd;
        char name[INCOMING_STAGE_MAX];
};

static int64_t recv_unstage(void *arg)
{
        struct recv_unstage *u = arg;

        return incoming_remove_tree(u->dirfd, u->name);
}

static void recv_on_unstaged(struct io_req *req, int64_t res)
{
        struct recv_unstage *u = (struct recv_unstage *)req;

        if (res < 0)
                log_warning("incoming_dir: removing %s: %s (the next start will)", u->name,
                            strerror((int)-res));
        free(u);
}

static void recv_gone(struct xfer *b)
{
        struct recv_xfer *x = recv_xfer_of(b);
        struct recv_env *e = recv_xfer_of(b)->env;

        /* Closing the O_TMPFILE without linking it frees its blocks; one
         * linked into the partial directory stays there. */
        for (unsigned int i = 0; i < ARRAY_SIZE(x->files); i++) {
                safe_close(x->files[i].fd);
                recv_pack_mem_free(&x->files[i]);
        }
        safe_close(x->early.fd);
        x->early.fd = -1;
        safe_close(x->stage_fd);
        safe_close(x->top_fd);
        safe_close(x->ents_fd);
        entlist_free(&x->ents_new);
        entlist_free(&x->ents_kept);
        safe_close(x->links_fd);
        recv_keep_gone(x);
        if (!e->freeing)
                relay_detach(x);
        if (x->stage_name[0] && !x->published_tree && e->io && !e->freeing) {
                struct recv_unstage *u = calloc(1, sizeof(*u));

                /* Hidden either way; without memory or a worker, the next start removes it. */
                if (u) {
                        u->req.done = recv_on_unstaged;
                        u->dirfd = e->incoming_fd;
                        snprintf(u->name, sizeof(u->name), "%s", x->stage_name);
                        if (io_call(e->io, &u->req, recv_unstage, u) < 0)
                                free(u);
                }
        }
        recv_land_gone(x);
        safe_close(x->pj.data_fd);
        safe_close(x->keep_pj.data_fd);
        recv_partial_released(x);
        recv_sync_free(x);
        recv_dry_free(x);
        free(x->rules_buf);
        x->rules_buf = NULL;
        x->protect = filter_list_free(x->protect);
        recv_partial_free(x);
        free(x);
}

const struct conn_ops recv_conn_ops = {
        .cm_event = recv_on_cm,
        .wc = recv_on_wc,
        .wc_batch_end = recv_on_batch_end,
        .reaped = xfer_lane_reaped,
};

/* ---- a rail lost under a transfer (wire.h, Rails) ---- */

void recv_lane_detach(struct recv_lane *l, const char *why)
{
        struct xfer *b = l->base.x;
        const struct conn_env *on = l->base.conn.env;
        const struct device *lost = on->dev;

        log_notice("%s: lane %u of %s lost rail %s (%s); waiting for it to join again", b->peer, l->base.idx,
                   recv_named(recv_xfer_of(b))->offer.name, lost->name, why);
        b->rails_lost |= 1u << lost->idx;
        conn_teardown(&l->base.conn);
        /* Not on the lost rail any more (a rail's reset waits for the
         * transfers on it): on a lane's that is still connected. */
        for (unsigned int k = 0; k < b->nlanes; k++)
                if (b->lane[k] && b->lane[k]->conn.env != on && b->lane[k]->conn.id)
                        l->base.conn.env = b->lane[k]->conn.env;
        l->base.established = false;
        l->credits_pending = 0;
        l->detached = true;
        l->base.broken = false;
}

bool recv_may_rejoin(const struct recv_xfer *x, unsigned int lane)
{
        const struct xfer *b = &x->base;
        const struct recv_lane *l = lane < b->nlanes ? recv_lane((struct recv_xfer *)x, lane) : NULL;

        /* Every END in, the file being verified or published: a lane but
         * lane 0 (which carries the verdict) has nothing more to carry. */
        if (b->state == XFER_FINISHING && lane > 0 && l && l->base.ended && x->rails && x->job_files == 1 &&
            !x->tree && !x->relay && !x->route_on && b->lane[0] && b->lane[0]->conn.env != l->base.conn.env)
                return true;
        /* One file's data from a sender with rails, not a relay's (a lane
         * that ended too: its WELCOME says so). */
        return b->state == XFER_DATA && l && !l->base.conn.reaping && x->rails &&
               x->job_files == 1 && !x->tree && !x->relay && !x->route_on && b->lane[0];
}

static bool recv_rail_lost(struct xfer *b, const struct conn_env *on, const char *text)
{
        struct recv_xfer *x = recv_xfer_of(b);
        bool other = false;

        /* Lane 0's too, where another rail still carries a lane of it:
         * the sender joins them again over that one. */
        for (unsigned int k = 0; k < b->nlanes; k++) {
                const struct recv_lane *l = recv_lane(x, k);

                if (!l)
                        return false;
                if (l->base.conn.env != on)
                        other |= !l->detached;
                else if (!l->detached && !recv_may_rejoin(x, k))
                        return false;
        }
        if (!other)
                return false;
        for (unsigned int k = 0; k < b->nlanes; k++)
                if (b->lane[k]->conn.env == on && !recv_lane(x, k)->detached)
                        recv_lane_detach(recv_lane(x, k), text);
        return true;
}
