/*
 * The data path of an outgoing transfer. The file (our duplicate of the
 * descriptor the owner handed over) is read by io_uring into this
 * transfer's buffers from the preregistered send pool (a share, or more
 * while it is the only one sending: common/ring.h), hashed in order, and
 * posted as SEND_WITH_IMM work requests as long as the receiver has
 * granted credits. Work requests are signalled every few posts (and
 * always the last of a batch), so one completion retires a run of
 * buffers; reads for the freed buffers go out at once, keeping both the
 * disk and the wire busy.
 *
 * Each lane (xfer.h) reads, hashes, posts and ends its own run of chunks
 * with its own buffers and credits. The transfer is done when a RESULT of
 * "ok" comes back after every lane has posted its END.
 *
 * With a limit (cfg rate_limit, the job's bwlimit), a chunk is posted only
 * when the buckets allow (xfer_pace_take): reads still run ahead into the
 * free buffers, and a lane held back waits for the transfer's pace timer.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "clock.h"
#include "digest.h"
#include "journal.h"
#include "log.h"
#include "send-int.h"

int send_lane_new(struct engine_send *s, unsigned int idx, struct send_lane **out)
{
        struct ring *pool = s->base.ring;
        struct send_lane *l;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        /* Lane 0 is admitted (or not) before anything else happens. */
        r = xfer_lane_init(&l->base, &s->base, idx, idx == 0);
        if (r == 0) {
                l->bufs = calloc(pool->count, sizeof(*l->bufs));
                l->spare = calloc(pool->count, sizeof(*l->spare));
                l->inflight = calloc(pool->count, sizeof(*l->inflight));
                if (!l->bufs || !l->spare || !l->inflight) {
                        ring_hold_leave(&l->base.hold, pool);
                        r = -ENOMEM;
                }
        }
        if (r != 0) {
                send_lane_free(&l->base);
                return r;
        }
        for (uint32_t i = pool->count; i-- > 0;) {
                l->bufs[i].l = l;
                if (i < l->base.hold.held)
                        l->spare[l->nspare++] = i;
        }
        *out = l;
        return 0;
}

void send_lane_free(struct xfer_lane *b)
{
        struct send_lane *l = send_lane_of(b);

        xfer_lane_deinit(&l->base);
        rehash_deinit(&l->rh);
        free(l->bufs);
        free(l->spare);
        free(l->inflight);
        free(l);
}

/* A free buffer for the next read: a spare one, or one more from the pool
 * while it has some to lend. false when there is none. */
static bool send_buf_get(struct send_lane *l, uint32_t *out)
{
        if (l->nspare > 0) {
                *out = l->spare[--l->nspare];
                return true;
        }
        return ring_hold_grow(&l->base.hold, l->base.x->ring, out);
}

/* A buffer is done with: kept, or given back if this lane holds more than
 * its due now that other transfers run. */
static void send_buf_put(struct send_lane *l, uint32_t i)
{
        struct ring *pool = l->base.x->ring;
        struct send_buf *buf = &l->bufs[i];
        const struct engine_send *s = sender_of(l->base.x);

        /* Sent from a relay's receive slot: that slot may go back upstream. */
        if (buf->fwd) {
                buf->fwd = NULL;
                s->src_ops->sent(s->src, l->base.idx, buf->seq);
        }
        buf->state = BUF_FREE;
        if (ring_hold_over(&l->base.hold, pool))
                ring_hold_release(&l->base.hold, pool, i);
        else
                l->spare[l->nspare++] = i;
}

static uint8_t *send_buf_mem(struct send_lane *l, uint32_t i)
{
        const struct send_env *e = sender_of(l->base.x)->env;

        return e->pool + (size_t)l->base.hold.slot[i] * e->slot_size;
}

/* A starved lane (xfer_feed_starved): a pump reads into what it can get. */
static_assert(ENGINE_ROUTE_MAX == WIRE_ROUTE_MAX, "engine_progress has a hop's bytes per route hop");

static void send_feed(struct xfer_lane *b)
{
        send_pump(send_lane_of(b));
}

static void send_log(struct xfer *b)
{
        struct engine_send *s = sender_of(b);
        char hex[DIGEST_HEX_SIZE], failed[WIRE_HOP_STR_MAX + 2 * WIRE_TEXT_MAX + 8] = "";
        char rails[RAILS_MAX * 66], rail_lanes[RAILS_MAX * 4], lost[RAILS_MAX * 66];
        bool ok = b->outcome == ENGINE_DONE;

        if (ok && s->hop_failed) {
                wire_hop_str(&s->route[s->hop_failed - 1], failed, WIRE_HOP_STR_MAX);
                snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed), ": %s%s%s",
                         wire_status_str(s->hop_status), s->hop_text[0] ? ": " : "", s->hop_text);
                log_warning("transfer %" PRIu64 ": %s reached %u of the %u nodes after %s; the first that "
                            "did not: %s", s->id, s->name, s->hops, s->route_hops, b->peer, failed);
        }

        if (ok && s->files > 1)
                log_info("transfer %" PRIu64 ": sent %u files to %s, the last %s", s->id, s->files,
                         b->peer, s->name);
        else if (ok)
                log_info("transfer %" PRIu64 ": sent %s to %s", s->id, s->name, b->peer);
        else if (s->files > 1)
                log_warning("transfer %" PRIu64 ": send of file %u of %u, %s, to %s %s: %s", s->id,
                            s->file + 1, s->files, s->name, b->peer,
                            b->outcome == ENGINE_CANCELLED ? "cancelled" : "failed", b->text);
        else
                log_warning("transfer %" PRIu64 ": send of %s to %s %s: %s", s->id, s->name, b->peer,
                            b->outcome == ENGINE_CANCELLED ? "cancelled" : "failed", b->text);
        /* A job of several files has no one digest: the receiver logs each file's. */
        if (ok && s->files == 1 && !s->skipping)
                digest_hex(s->digest, hex);
        device_names(s->env->dev, s->env->ndev, b->rails, rails, sizeof(rails));
        device_lane_counts(b->rail_lanes, s->env->ndev, b->rails, rail_lanes, sizeof(rail_lanes));
        device_names(s->env->dev, s->env->ndev, b->rails_lost, lost, sizeof(lost));
        journal_xfer(&(struct journal_xfer){
                .direction = "send",
                .id = s->id,
                .attempt = s->attempt,
                .peer = b->peer,
                .file = s->name,
                .bytes = b->bytes,
                .resumed = s->resumed,
                .holes = s->holes,
                .usec = b->t_last > b->t_start ? b->t_last - b->t_start : 0,
                .status = ok ? WIRE_OK : (b->status ?: WIRE_E_INTERNAL),
                .text = b->text[0] ? b->text : NULL,
                .digest = ok && s->files == 1 && !s->skipping ? hex : NULL,
                .lanes = b->t_start ? b->nlanes : 0,
                .rails = rails,
                .rail_lanes = rail_lanes,
                .rails_lost = lost,
                .files = s->files_ok,
                .files_total = s->files,
                .skipped = s->skipped,
                .deleted = s->deleted,
                .cancelled = b->outcome == ENGINE_CANCELLED,
                .hops = s->route_hops,
                .hops_ok = ok ? 1u + s->hops : 0,
                .hop_failed = failed[0] ? failed : NULL,
                .relayed = s->relayed,
                .forwarded = s->forwarded,
        });
}

/*
 * Decide the outcome (first decision wins) and start hanging up. The
 * owner hears of it once every lane is reaped (send_gone).
 */
void send_abort(struct xfer *b, enum engine_outcome outcome, unsigned int status, const char *text)
{
        xfer_decide(b, outcome, status, text);
        if (b->state == XFER_CLOSING)
                return;
        xfer_hangup(b);
        /* The timer covers a peer that never answers the hang-up. */
        xfer_arm_timer(b, SEND_LINGER_SEC);
}

_printf_(4, 0)
static void send_failv(struct engine_send *s, bool transient, unsigned int status, const char *fmt,
                       va_list ap)
{
        char text[XFER_TEXT_MAX + 1];

        vsnprintf(text, sizeof(text), fmt, ap);
        if (transient)
                xfer_decide_transient(&s->base, status, text);
        send_abort(&s->base, ENGINE_FAILED, status, text);
}

void send_fail(struct engine_send *s, unsigned int status, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        send_failv(s, true, status, fmt, ap);
        va_end(ap);
}

void send_fail_permanent(struct engine_send *s, unsigned int status, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        send_failv(s, false, status, fmt, ap);
        va_end(ap);
}

void send_fail_peer(struct engine_send *s, unsigned int status, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        send_failv(s, wire_status_transient(status), status, fmt, ap);
        va_end(ap);
}

/* Our own file: another attempt would read the same. */
static void send_disk_fail(struct engine_send *s)
{
        char text[XFER_TEXT_MAX + 1];

        xfer_disk_text(&s->base, text, sizeof(text));
        send_fail_permanent(s, WIRE_E_IO, "%s", text);
}

/* The deadline (xfer_arm_deadline), the verdict's, or the linger. */
static void send_timeout(struct xfer *b)
{
        struct engine_send *s = sender_of(b);
        unsigned int sec = xfer_peer_timeout(b);
        char why[XFER_TEXT_MAX + 1];

        /* Reading the file for its digest (sync) first: our own disk is
         * the hold-up, not the peer (whom WAIT keeps informed, send-sync.c). */
        if (s->digest_busy && b->state != XFER_CLOSING) {
                if (xfer_disk_stalled(b))
                        send_disk_fail(s);
                else
                        xfer_arm_timer(b, (int)sec);
                return;
        }
        switch (b->state) {
        case XFER_CLOSING:
                xfer_reap_all(b);
                return;
        case XFER_RESOLVING:
        case XFER_CONNECTING:
                send_fail(s, WIRE_E_INTERNAL, "no connection to the receiver within %u s", sec);
                return;
        case XFER_OFFER:
                /* A receiver reading its copy for a digest (sync) says so
                 * every second, with an empty CREDIT: that is progress,
                 * for as long as reading the file at min_rate would take. */
                if (!xfer_peer_silent(b)) {
                        if (!s->t_offer || !xfer_wait_overdue(b, s->t_offer, s->size))
                                return;
                        send_fail(s, WIRE_E_PROTOCOL, "receiver did not answer the offer of %" PRIu64
                                  " bytes in the time reading it allows", s->size);
                        return;
                }
                send_fail(s, WIRE_E_PROTOCOL, "receiver did not answer the offer within %u s", sec);
                return;
        case XFER_FINISHING:
                /* Every END posted: the receiver verifies and publishes,
                 * and says so every second (an empty CREDIT, wire.h). */
                if (b->nended == b->nlanes) {
                        uint64_t times = s->route_hops ? 2u * (1u + s->route_hops) : 1u;

                        if (xfer_peer_silent(b)) {
                                send_fail(s, WIRE_E_PROTOCOL, "receiver did not answer within %u s", sec);
                                return;
                        }
                        /* Saying so is not a verdict: it comes within what
                         * verifying and publishing the job's bytes takes
                         * (xfer_wait_limit). On a chain the verdict waits
                         * for the route's, whose every hop may fail and be
                         * gone around on deadlines of its own: twice that
                         * for each node, from the route's last move on. */
                        if (s->t_ended &&
                            clock_usec(CLOCK_MONOTONIC) - s->t_ended > times * xfer_wait_limit(b, s->job_bytes))
                                send_fail(s, WIRE_E_PROTOCOL, "receiver gave no verdict on %s in the time "
                                          "verifying %" PRIu64 " bytes allows", s->name, s->job_bytes);
                        return;
                }
                /* ENDs still to post, credits still to come: every byte is
                 * acknowledged, so only silence counts (and our own disk). */
                switch (xfer_stalled(b)) {
                case XFER_STALL_DISK:
                        send_disk_fail(s);
                        return;
                case XFER_STALL_PEER:
                        send_fail(s, WIRE_E_PROTOCOL, "no progress from receiver for %u s", sec);
                        return;
                default:
                        return;
                }
        case XFER_DATA:
        default:
                /* A receiver that grants a credit now and then is no faster
                 * than a sender that trickles: the same floor. */
                switch (xfer_check_pace(b, why, sizeof(why))) {
                case XFER_PACE_OK:
                        return;
                case XFER_PACE_DISK:
                        /* Our own file: another attempt would meet it too. */
                        send_disk_fail(s);
                        return;
                case XFER_PACE_SLOW:
                        send_fail(s, WIRE_E_PROTOCOL, "receiver too slow: %s", why);
                        return;
                case XFER_PACE_SILENT:
                        send_fail(s, WIRE_E_PROTOCOL, "no progress from receiver for %u s", sec);
                        return;
                }
                return;
        }
}

static void send_on_read(struct io_req *req, int64_t res)
{
        struct send_buf *buf = (struct send_buf *)req;
        struct send_lane *l = buf->l;
        struct engine_send *s = sender_of(l->base.x);

        if (!xfer_io_done(&s->base) || s->base.state == XFER_CLOSING)
                return;
        if (res < 0) {
                send_fail_permanent(s, WIRE_E_IO, "reading the file at offset %" PRIu64 ": %s", req->off,
                          strerror((int)-res));
                return;
        }
        if ((uint64_t)res != buf->len) {
                send_fail_permanent(s, WIRE_E_SIZE, "the file shrank while being sent");
                return;
        }
        buf->state = BUF_READY;
        if (l->rewind_waiting) {
                send_lane_rewind_ready(l);
                return;
        }
        send_pump(l);
}

void send_post_end(struct send_lane *l)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        struct wire_msg m = { .type = WIRE_END };
        int r;

        /* END costs a credit like any message; without one it waits for
         * the next CREDIT (send_pump). */
        if (l->credits == 0 || l->base.ended || l->base.broken)
                return;
        /* A relay vouches only for what it verified (relay.h). */
        if (s->src_ops && !s->src_ops->may_end(s->src))
                return;
        m.end.file = s->file;
        m.end.bytes = wire_run_bytes(s->size, s->chunk, l->base.first_seq, l->base.end_seq);
        digest_final(&l->base.digest, m.end.digest);
        if (b->session.on)
                auth_end_mac(&b->session, l->base.idx, &m.end, m.end.mac);
        r = conn_send_ctrl(&l->base.conn, &m);
        if (r == -ENOBUFS)
                return;         /* retried after the next completion */
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting END: %s", strerror(-r));
                return;
        }
        l->credits--;
        l->base.ended = true;
        if (++b->nended == b->nlanes) {
                /* Every lane is still here: each waits for the RESULT. */
                s->t_ended = clock_usec(CLOCK_MONOTONIC);
                (void)xfer_digest(b, s->digest);
                xfer_arm_deadline(b);
                /* The next offer may go (send_sent). */
                send_sent(s);
        }
}

/* Reads into every free buffer, in sequence order. false after a failure. */
static bool send_read_ahead(struct send_lane *l)
{
        struct engine_send *s = sender_of(l->base.x);

        while (l->next_read < l->base.end_seq) {
                struct send_buf *buf;
                uint64_t off;
                const uint8_t *fwd;
                uint32_t i;
                int r;

                /* A sparse file's hole is left out (send-sparse.c). */
                if (!send_sparse_skip(l))
                        return s->base.state != XFER_CLOSING;
                if (l->next_read == l->base.end_seq)
                        break;
                off = l->next_read * s->chunk;

                /* A relay sends a chunk from the upstream's receive slot
                 * that still holds it, or else reads it back from its file
                 * once it is written there (relay.h). */
                fwd = s->src_ops ? s->src_ops->slot(s->src, l->base.idx, l->next_read) : NULL;
                if (s->src_ops && !fwd && !s->src_ops->readable(s->src, off, MIN((uint64_t)s->chunk, s->size - off)))
                        break;
                if (!send_buf_get(l, &i))
                        break;
                buf = &l->bufs[i];
                l->inflight[l->next_read % l->base.hold.cap] = i;
                buf->seq = l->next_read;
                buf->len = MIN((uint64_t)s->chunk, s->size - off);
                if (fwd) {
                        buf->fwd = fwd;
                        buf->state = BUF_READY;
                        s->forwarded += buf->len;
                        l->next_read++;
                        continue;
                }
                /* A pack is in memory (send-pack.c): copied, ready at once. */
                if (s->pack_mem) {
                        memcpy(send_buf_mem(l, i), s->pack_mem + off, buf->len);
                        buf->state = BUF_READY;
                        l->next_read++;
                        continue;
                }
                buf->io.done = send_on_read;
                r = io_read(s->env->xe->io, &buf->io, s->fd, send_buf_mem(l, i), buf->len, off);
                if (r < 0) {
                        send_buf_put(l, i);
                        send_fail(s, WIRE_E_IO, "queueing a read: %s", strerror(-r));
                        return false;
                }
                buf->state = BUF_READING;
                xfer_io_start(&s->base, "reading the file");
                l->next_read++;
        }
        return true;
}

/* The next part of the route: from hop route_sent on. */
static void send_route_part(const struct engine_send *s, struct wire_msg *m)
{
        unsigned int n = MIN((unsigned int)(s->route_hops - s->route_sent), (unsigned int)WIRE_ROUTE_PART_MAX);

        *m = (struct wire_msg){ .type = WIRE_ROUTE };
        m->route.total = s->route_hops;
        m->route.first = s->route_sent;
        m->route.hops = (uint16_t)n;
        memcpy(m->route.hop, s->route + s->route_sent, n * sizeof(*s->route));
}

/*
 * The rest of a long route, on lane 0 once the offer is accepted and
 * before any of its data (wire.h, Relay chains), each part a credit.
 * True once every part is posted.
 */
static bool send_post_route_rest(struct send_lane *l)
{
        struct engine_send *s = sender_of(l->base.x);
        struct wire_msg m;
        int r;

        while (s->route_sent < s->route_hops) {
                if (l->credits == 0)
                        return false;
                send_route_part(s, &m);
                r = conn_send_ctrl(&l->base.conn, &m);
                if (r == -ENOBUFS)
                        return false;   /* retried after the next completion */
                if (r < 0) {
                        send_fail(s, WIRE_E_INTERNAL, "posting the route: %s", strerror(-r));
                        return false;
                }
                s->route_sent = (uint16_t)(s->route_sent + m.route.hops);
                l->credits--;
        }
        return true;
}

void send_pump(struct send_lane *l)
{
        struct engine_send *s = sender_of(l->base.x);
        struct ibv_send_wr wrs[64], *bad;
        struct ibv_sge sges[64];
        unsigned int n = 0;

        /* A lane joining again posts nothing before it went back to where
         * the receiver has its run (send_lane_rewind). */
        if ((s->base.state != XFER_DATA && s->base.state != XFER_FINISHING) ||
            !l->base.established || l->base.conn.reaping || l->rehashing || l->rejoin || l->base.broken)
                return;
        if (l->base.idx == 0 && s->route_sent < s->route_hops && !send_post_route_rest(l))
                return;
        if (!send_read_ahead(l))
                return;

        /* Post what is ready, in order, as far as credits allow, as one chain. */
        while (l->credits > 0 && l->next_post < l->next_read && n < ARRAY_SIZE(wrs)) {
                struct send_buf *buf = &l->bufs[l->inflight[l->next_post % l->base.hold.cap]];
                /* The receive ring and the send pool are registered on every rail. */
                const uint8_t *mem = buf->fwd ?: send_buf_mem(l, buf - l->bufs);

                if (buf->state != BUF_READY)
                        break;
                if (!xfer_pace_take(&s->base, buf->len))
                        break;
                digest_update(&l->base.digest, mem, buf->len);
                sges[n] = (struct ibv_sge){
                        .addr = (uintptr_t)mem,
                        .length = buf->len,
                        .lkey = device_lkey(l->base.conn.env->dev, buf->fwd ? s->env->ring_mem : s->env->pool_mem),
                };
                wrs[n] = (struct ibv_send_wr){
                        .wr_id = buf->seq,
                        .sg_list = &sges[n],
                        .num_sge = 1,
                        .opcode = IBV_WR_SEND_WITH_IMM,
                        .imm_data = htobe32((uint32_t)buf->seq),
                };
                if (++l->unsignaled >= s->signal_every) {
                        wrs[n].send_flags = IBV_SEND_SIGNALED;
                        l->unsignaled = 0;
                }
                if (n > 0)
                        wrs[n - 1].next = &wrs[n];
                buf->state = BUF_POSTED;
                l->credits--;
                l->next_post++;
                n++;
        }
        if (n > 0) {
                /* The last of a batch is always signalled: nothing waits on a
                 * completion that will never be generated. */
                if (!(wrs[n - 1].send_flags & IBV_SEND_SIGNALED)) {
                        wrs[n - 1].send_flags = IBV_SEND_SIGNALED;
                        l->unsignaled = 0;
                }
                if (s->base.t_start == 0)
                        s->base.t_start = clock_usec(CLOCK_MONOTONIC);
                if (l->t_begin == 0)
                        l->t_begin = clock_usec(CLOCK_MONOTONIC);
                if (ibv_post_send(l->base.conn.id->qp, wrs, &bad)) {
                        send_fail(s, WIRE_E_INTERNAL, "ibv_post_send: %m");
                        return;
                }
        }

        if (l->next_post == l->base.end_seq && !l->base.ended && l->credits > 0)
                send_post_end(l);
}

/* The buckets allow more: every lane posts what it can, @first first. */
static void send_paced(struct xfer *b, unsigned int first)
{
        for (unsigned int k = 0; k < b->nlanes && b->state != XFER_CLOSING; k++) {
                struct xfer_lane *l = b->lane[(first + k) % b->nlanes];

                if (l)
                        send_pump(send_lane_of(l));
        }
}

void send_verifying(struct engine_send *s)
{
        xfer_set_state(&s->base, XFER_FINISHING);
        if (s->ops->phase && s->file + s->span == s->files)
                s->ops->phase(s->owner, ENGINE_PHASE_VERIFYING);
}

/* Posts @m, one of an offer's control messages (NAME, ROUTE, OFFER), on
 * lane 0 @l, spending a credit: 1 when posted; 0 when no buffer is free
 * (the next completion posts it again); -1 when the transfer failed,
 * @what naming the message. */
static int send_offer_msg(struct engine_send *s, struct send_lane *l, const struct wire_msg *m,
                          const char *what)
{
        int r = conn_send_ctrl(&l->base.conn, m);

        if (r == -ENOBUFS)
                return 0;
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting %s: %s", what, strerror(-r));
                return -1;
        }
        l->credits--;
        return 1;
}

/*
 * What is left of @bytes (@total), from *@sent on, in @type parts (a
 * LAND's layout: total, offset, len, bytes) before the offer, each a
 * credit: true once every part is posted; false when one waits for a
 * credit (*@sent says where it goes on) or the transfer failed.
 */
static bool send_offer_parts(struct engine_send *s, struct send_lane *l, uint16_t type, const uint8_t *bytes,
                             uint16_t total, uint16_t *sent, const char *what)
{
        struct wire_msg m;

        while (*sent < total) {
                uint16_t n = (uint16_t)MIN((size_t)(total - *sent), (size_t)WIRE_LAND_PART_MAX);

                m = (struct wire_msg){ .type = type };
                /* An XATTR's is a LAND's (wire.h: the union's same struct). */
                m.land.total = total;
                m.land.offset = *sent;
                m.land.len = n;
                memcpy(m.land.bytes, bytes + *sent, n);
                if (send_offer_msg(s, l, &m, what) <= 0)
                        return false;
                *sent = (uint16_t)(*sent + n);
                if (l->credits == 0)
                        return false;
        }
        return true;
}

void send_post_offer(struct engine_send *s)
{
        struct xfer *b = &s->base;
        struct send_lane *l = b->lane[0] ? send_lane_of(b->lane[0]) : NULL;
        struct wire_msg m = { .type = WIRE_OFFER };

        s->offer_pending = true;
        if (!l || l->credits == 0)
                return;         /* a CREDIT brings one (send_on_batch_end) */
        /* Its attributes first, in XATTR parts, each a credit (wire.h,
         * Attributes); then a long path, in NAME parts (Long paths); what
         * is posted of them is kept across the waits for a credit. */
        if (!send_offer_parts(s, l, WIRE_XATTR, s->xattrs, s->offer.xattrs_len, &s->xattrs_sent,
                              "the entry's attributes"))
                return;
        /* A long path first, in NAME parts, each a credit (wire.h, Long
         * paths); what is posted of it is kept across the waits for one. */
        if (s->offer.flags & WIRE_OFFER_LONG_NAME) {
                size_t len = strlen(s->offer.name);

                while (s->name_sent < len) {
                        uint16_t n = (uint16_t)MIN(len - s->name_sent, (size_t)WIRE_NAME_PART_MAX);

                        m = (struct wire_msg){ .type = WIRE_NAME };
                        m.name.total = (uint16_t)len;
                        m.name.offset = s->name_sent;
                        m.name.len = n;
                        memcpy(m.name.bytes, s->offer.name + s->name_sent, n);
                        if (send_offer_msg(s, l, &m, "the offer's path") <= 0)
                                return;
                        s->name_sent = (uint16_t)(s->name_sent + n);
                        if (l->credits == 0)
                                return;
                }
                m = (struct wire_msg){ .type = WIRE_OFFER };
        }
        /* A deleting tree's rules before its first offer, in RULES parts,
         * each a credit as a LAND's is (wire.h, Deleting). */
        if (s->offer.file == 0 && s->rules &&
            !send_offer_parts(s, l, WIRE_RULES, s->rules, s->rules_len, &s->rules_sent, "the tree's rules"))
                return;
        /* A landing's LAND parts before the session's first offer: each
         * in the receiver's one control buffer, given back with a CREDIT
         * (wire.h, Landing as the user). */
        if (s->offer.file == 0 && s->land &&
            !send_offer_parts(s, l, WIRE_LAND, s->land, s->land_len, &s->land_sent, "the landing"))
                return;
        /* A chain's ROUTE first: the receiver has one control buffer
         * before the offer, and gives it back with a CREDIT. */
        if (s->route_pending) {
                send_route_part(s, &m);
                if (send_offer_msg(s, l, &m, "the route") <= 0)
                        return;
                s->route_pending = false;
                s->route_sent = m.route.hops;
                if (l->credits == 0)
                        return;
                m = (struct wire_msg){ .type = WIRE_OFFER };
        }
        m.offer = s->offer;
        if (send_offer_msg(s, l, &m, "the offer") <= 0)
                return;
        s->offer_pending = false;
        s->name_sent = 0;
        s->xattrs_sent = 0;
        s->t_offer = clock_usec(CLOCK_MONOTONIC);
}

/* The last RESULT "ok": what it says of the route's hops, which must add
 * up (the receiver's word, under the MAC with a key). 0, or -1 when the
 * transfer failed. */
static int send_route_result(struct engine_send *s, const struct wire_result *r)
{
        unsigned int n = s->route_hops;

        /* wire_decode() checked that hop_failed is the first missing one. */
        if (n == 0 ? r->hops || r->hop_failed || r->hop_status || !nodeset_empty(&r->hop_missing) :
                     r->hops + nodeset_count(&r->hop_missing) != n || !nodeset_below(&r->hop_missing, n)) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver's account of the route does not add up "
                                    "(%u of %u hops, %u missing)", r->hops, n, nodeset_count(&r->hop_missing));
                return -1;
        }
        s->hops = r->hops;
        s->hop_missing = r->hop_missing;
        s->hop_failed = r->hop_failed;
        s->hop_status = r->hop_failed ? r->hop_status : WIRE_OK;
        snprintf(s->hop_text, sizeof(s->hop_text), "%s", r->hop_failed ? r->text : "");
        return 0;
}

/* A RESULT "ok" of s->prev, not the session's last: settled; the file
 * sent since may go on to be prev now. */
static void send_prev_done(struct engine_send *s, const struct wire_result *r)
{
        struct xfer *b = &s->base;

        send_sync_result(s, &s->prev, r);
        s->files_ok += s->prev.span;
        s->prev.on = false;
        /* An index pack the receiver had every file of: on to the next
         * (the RESULT of the offer before it does not say so). */
        if (s->indexing && s->prev.file == s->index_file) {
                s->indexing = false;
                /* Its files' descriptors, kept in case it lacked some. */
                send_pack_release(s);
        }
        send_span_done(s, &s->prev);
        /* The owner may have cancelled from its callback. */
        if (b->state == XFER_CLOSING)
                return;
        /* Waiting for the owner now, not for the receiver. */
        if (s->want_next)
                evtimer_del(b->timer);
        send_sent(s);
}

void send_resume(struct engine_send *s)
{
        if (s->want_next && s->base.state != XFER_CLOSING)
                send_take_next(s);
}

static void send_on_data_done(struct send_lane *l, uint64_t seq)
{
        struct xfer *b = l->base.x;
        bool was_done = l->next_done == l->base.end_seq;
        uint32_t held = l->base.hold.held;

        /* A signalled completion retires every earlier post on this QP. */
        while (l->next_done <= seq && l->next_done < l->next_post) {
                uint32_t i = l->inflight[l->next_done % l->base.hold.cap];

                b->bytes += l->bufs[i].len;
                l->file_bytes += l->bufs[i].len;
                b->env->wire_bytes[XFER_SEND] += l->bufs[i].len;
                l->base.conn.env->dev->bytes_out += l->bufs[i].len;
                send_buf_put(l, i);
                l->next_done++;
        }
        if (l->base.hold.held < held)
                xfer_feed_starved(b->env, XFER_SEND);
        /* One clock read per completion: an acknowledgement is progress too. */
        b->t_last = b->t_progress = clock_usec(CLOCK_MONOTONIC);
        if (!was_done && l->next_done == l->base.end_seq) {
                l->t_acked = b->t_last;
                send_lane_acked(l);
        }
}

void send_lane_acked(struct send_lane *l)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);

        if (++s->ndone < b->nlanes)
                return;
        send_rails_measure(s);
        if (b->state == XFER_DATA)
                send_verifying(s);
        send_sent(s);
        /* The next file, offered meanwhile, was accepted already. */
        if (s->accept_waiting && b->state == XFER_OFFER)
                send_on_accept(send_lane_of(b->lane[0]), &s->accept);
}

static void send_on_rehashed(struct rehash *h, int r)
{
        struct send_lane *l = container_of(h, struct send_lane, rh);
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);

        if (r < 0) {
                send_fail_permanent(s, WIRE_E_IO, "reading back the part the receiver kept: %s",
                                    strerror(-r));
                return;
        }
        l->rehashing = false;
        /* A lane the receiver had whole has nothing to wait for but its END. */
        if (l->next_done == l->base.end_seq && ++s->ndone == b->nlanes) {
                if (!s->base.t_start)
                        s->base.t_start = s->base.t_last = clock_usec(CLOCK_MONOTONIC);
                if (b->state == XFER_DATA)
                        send_verifying(s);
                send_sent(s);
                if (b->state == XFER_CLOSING)
                        return;
        }
        send_pump(l);
}

/* A relay's kept chunks are read back as its other reads are: once
 * written there (relay.h); relay_written() kicks the lane again. */
static bool send_rehash_ready(struct rehash *h, uint64_t off, uint64_t len)
{
        const struct engine_send *s = sender_of(h->x);

        return s->src_ops->readable(s->src, off, len);
}

int send_lane_resume(struct send_lane *l, uint32_t from)
{
        struct engine_send *s = sender_of(l->base.x);
        uint64_t seq = l->base.first_seq + from;
        int r;

        l->next_read = l->next_post = l->next_done = seq;
        l->sparse_cur = 0;
        l->file_bytes = l->t_begin = l->t_acked = 0;
        if (from == 0)
                return 0;
        s->base.bytes += wire_run_bytes(s->size, s->chunk, l->base.first_seq, seq);
        l->rehashing = true;
        l->rh.ready = s->src_ops ? send_rehash_ready : NULL;
        r = rehash_start(&l->rh, &s->base, &l->base.digest, s->fd, l->base.first_seq * s->chunk,
                         MIN(seq * s->chunk, s->size), send_on_rehashed);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "reading back the part the receiver kept: %s", strerror(-r));
                return r;
        }
        return 0;
}

/*
 * A lane that joined again over another rail (send_lane_rejoin) goes on
 * from chunk @from of its run, where the receiver has it (its WELCOME):
 * what it had read or posted beyond is given back, its digest hashed
 * again up to there (send_lane_resume), what it counted done uncounted.
 * Reads still out into its buffers are waited for first. 0, or -1 when
 * the transfer failed.
 */
int send_lane_rewind(struct send_lane *l, uint32_t from)
{
        struct engine_send *s = sender_of(l->base.x);
        struct xfer *b = &s->base;

        /* It cannot have more than was posted (acknowledgements lag:
         * only every signal_every-th post is signalled). */
        if (l->base.first_seq + from > l->next_post) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver rejoins lane %u at chunk %u, of %" PRIu64
                                    " sent", l->base.idx, from, l->next_post - l->base.first_seq);
                return -1;
        }
        l->rewind_from = from;
        for (uint64_t seq = l->next_done; seq < l->next_read; seq++) {
                if (l->bufs[l->inflight[seq % l->base.hold.cap]].state == BUF_READING) {
                        l->rewind_waiting = true;
                        return 0;
                }
        }
        l->rewind_waiting = false;
        for (uint64_t seq = l->next_done; seq < l->next_read; seq++)
                send_buf_put(l, l->inflight[seq % l->base.hold.cap]);
        /* Counted again from the kept part on (send_lane_resume). */
        b->bytes -= wire_run_bytes(s->size, s->chunk, l->base.first_seq, l->next_done);
        if (l->next_done == l->base.end_seq && s->ndone > 0)
                s->ndone--;
        l->rejoin = false;
        if (xfer_lane_run(&l->base) < 0) {
                send_fail(s, WIRE_E_INTERNAL, "lane %u: out of memory", l->base.idx);
                return -1;
        }
        if (send_lane_resume(l, from) < 0)
                return -1;
        log_info("transfer %" PRIu64 ": lane %u goes on from chunk %u of %" PRIu64 " of its run", s->id,
                 l->base.idx, from, l->base.end_seq - l->base.first_seq);
        send_pump(l);
        return 0;
}

void send_lane_rejoined_ended(struct send_lane *l, uint32_t resume)
{
        struct engine_send *s = sender_of(l->base.x);

        if (!l->base.ended || resume != l->base.end_seq - l->base.first_seq) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver says lane %u ended at chunk %u of %" PRIu64,
                                    l->base.idx, resume, l->base.end_seq - l->base.first_seq);
                return;
        }
        /* What was not acknowledged yet arrived: the END says so. No read
         * is out (every chunk was posted before the END). */
        send_on_data_done(l, l->base.end_seq - 1);
        l->rejoin = false;
        log_info("transfer %" PRIu64 ": lane %u had sent its run and END; nothing more goes on it", s->id,
                 l->base.idx);
}

void send_lane_rewind_ready(struct send_lane *l)
{
        /* FINISHING too: every other lane's run acknowledged meanwhile. */
        if (l->base.x->state == XFER_DATA || l->base.x->state == XFER_FINISHING)
                (void)send_lane_rewind(l, l->rewind_from);
}

static void send_on_msg(struct send_lane *l, const struct wire_msg *m)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);

        l->credits += m->credits;
        switch (m->type) {
        case WIRE_ACCEPT:
                if (b->state != XFER_OFFER || l->base.idx != 0)
                        break;
                send_on_accept(l, &m->accept);
                return;
        case WIRE_REFUSE:
                /* Version 7: the next offer may be refused while the one
                 * before awaits its RESULT (DATA or FINISHING, the offer
                 * after it being built meanwhile). */
                if (b->state != XFER_OFFER && b->state != XFER_DATA && b->state != XFER_FINISHING)
                        break;
                /* A later offer's refusal comes on every lane: lane 0's says it. */
                if (l->base.idx != 0)
                        return;
                send_fail_peer(s, m->refuse.status, "refused by peer: %s%s%s", wire_status_str(m->refuse.status),
                          m->refuse.text[0] ? ": " : "", m->refuse.text);
                return;
        case WIRE_CREDIT:
                send_pump(l);
                return;
        case WIRE_PROGRESS:
                /* A relay's word on a window of its route, for display
                 * (wire.h; wire_decode() checked first + hops <= total).
                 * A tree's may cross the offer of its next entry. */
                if (l->base.idx != 0 || m->progress.total != s->route_hops ||
                    (b->state != XFER_OFFER && b->state != XFER_DATA && b->state != XFER_FINISHING))
                        break;
                for (unsigned int k = 0; k < m->progress.hops; k++) {
                        /* The route moving on restarts the verdict's wait. */
                        if (m->progress.bytes[k] > s->hop_bytes[m->progress.first + k])
                                s->t_ended = s->t_ended ? clock_usec(CLOCK_MONOTONIC) : 0;
                        s->hop_bytes[m->progress.first + k] = m->progress.bytes[k];
                }
                return;
        case WIRE_NEED:
                /* An index pack's, before its RESULT would come (wire.h, Index packs). */
                if (l->base.idx != 0 || (b->state != XFER_DATA && b->state != XFER_FINISHING))
                        break;
                if (b->session.on && auth_need_verify(&b->session, &m->need) < 0) {
                        send_fail_permanent(s, WIRE_E_AUTH, "receiver failed authentication: its NEED does "
                                            "not prove the pre-shared key");
                        return;
                }
                (void)send_need(s, &m->need);
                return;
        case WIRE_GONE:
                /* A dry run's, before the last RESULT (wire.h, Dry runs). */
                if (l->base.idx != 0 || (b->state != XFER_OFFER && b->state != XFER_DATA &&
                                         b->state != XFER_FINISHING))
                        break;
                if (b->session.on && auth_gone_verify(&b->session, &m->gone) < 0) {
                        send_fail_permanent(s, WIRE_E_AUTH, "receiver failed authentication: its GONE does "
                                            "not prove the pre-shared key");
                        return;
                }
                /* The verdict's wait restarts: the receiver is at it. */
                s->t_ended = s->t_ended ? clock_usec(CLOCK_MONOTONIC) : 0;
                (void)send_dry_gone(s, &m->gone);
                return;
        case WIRE_RESULT:
                /* Version 7: s->prev's may come while the next is offered. */
                if (b->state != XFER_OFFER && b->state != XFER_DATA && b->state != XFER_FINISHING)
                        break;
                /* Only a receiver that holds the key can say "ok". */
                if (b->session.on && auth_result_verify(&b->session, l->base.idx, &m->result) < 0) {
                        send_fail_permanent(s, WIRE_E_AUTH, "receiver failed authentication: its result (%s) does "
                                            "not prove the pre-shared key", wire_status_str(m->result.status));
                        return;
                }
                if (m->result.status != WIRE_OK) {
                        send_fail_peer(s, m->result.status, "receiver: %s%s%s", wire_status_str(m->result.status),
                                       m->result.text[0] ? ": " : "", m->result.text);
                        return;
                }
                /* In order: the oldest file sent whose every END went. */
                if (!s->prev.on || m->result.file != s->prev.file) {
                        /* The last file's RESULT comes on every lane. Lane
                         * 0's follows its ACCEPT and the RESULTs before it;
                         * another lane's may be polled before those (QPs
                         * are not ordered between them): lane 0's says it. */
                        if (l->base.idx != 0 && m->result.file == s->file && s->file + s->span >= s->files)
                                return;
                        send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver answered for file %u, file %u "
                                            "was sent", m->result.file + 1, (s->prev.on ? s->prev.file : s->file) + 1);
                        return;
                }
                if (s->prev.file + s->prev.span < s->files) {
                        /* The session goes on: only lane 0 hears of it. */
                        if (l->base.idx != 0)
                                break;
                        send_prev_done(s, &m->result);
                        return;
                }
                /* The last, on every lane: the first ends the session. The
                 * other lanes' last acknowledgements may not be polled yet. */
                if (send_route_result(s, &m->result) < 0)
                        return;
                send_sync_result(s, &s->prev, &m->result);
                /* A dry run named at most what its "deleted N" counts. */
                if (s->dry && s->gone_seen > s->deleted) {
                        send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver named %u entries to delete and "
                                            "counted %" PRIu64, s->gone_seen, s->deleted);
                        return;
                }
                s->files_ok += s->prev.span;
                if (b->t_last == 0)
                        b->t_last = clock_usec(CLOCK_MONOTONIC);
                send_abort(b, ENGINE_DONE, WIRE_OK, NULL);
                send_span_done(s, &s->prev);
                return;
        default:
                break;
        }
        send_fail_permanent(s, WIRE_E_PROTOCOL, "unexpected message %u from receiver", m->type);
}

void send_on_wc(struct conn *c, const struct ibv_wc *wc)
{
        struct send_lane *l = (struct send_lane *)c;
        struct engine_send *s = sender_of(l->base.x);
        uint64_t idx = wc->wr_id & ~CONN_WRID_CTRL;
        struct wire_msg m;
        int r;

        if (wc->status != IBV_WC_SUCCESS) {
                /* On another rail than lane 0's: the rail may be what
                 * failed; its lanes join again over lane 0's. */
                if (wc->status != IBV_WC_WR_FLUSH_ERR && s->base.state != XFER_CLOSING) {
                        char text[XFER_TEXT_MAX + 1];

                        snprintf(text, sizeof(text), "work completion: %s", ibv_wc_status_str(wc->status));
                        if (send_lane_lost(l, WIRE_E_INTERNAL, text))
                                return;
                }
                if (wc->status != IBV_WC_WR_FLUSH_ERR && s->base.state != XFER_CLOSING)
                        send_fail(s, WIRE_E_INTERNAL, "work completion: %s", ibv_wc_status_str(wc->status));
                if ((wc->wr_id & CONN_WRID_CTRL) && idx < CONN_CTRL_BUFS)
                        conn_ctrl_send_done(c, wc->wr_id);
                return;
        }
        if (!(wc->wr_id & CONN_WRID_CTRL)) {
                send_on_data_done(l, wc->wr_id);
                return;
        }
        if (idx < CONN_CTRL_BUFS) {
                conn_ctrl_send_done(c, wc->wr_id);
                return;
        }
        /* A control message from the receiver. */
        r = wire_decode(conn_ctrl_buf(c, wc->wr_id), wc->byte_len, &m);
        if (conn_repost_ctrl(c, wc->wr_id) < 0) {
                send_fail(s, WIRE_E_INTERNAL, "cannot repost a receive");
                return;
        }
        if (s->base.state == XFER_CLOSING)
                return;
        xfer_progress(&s->base);
        if (r < 0) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "undecodable message from receiver");
                return;
        }
        send_on_msg(l, &m);
}

void send_on_batch_end(struct conn *c)
{
        struct send_lane *l = (struct send_lane *)c;
        struct engine_send *s = sender_of(l->base.x);

        if (s->offer_pending && l->base.idx == 0 && s->base.state == XFER_OFFER)
                send_post_offer(s);
        send_pump(l);
}

/* Every lane is reaped: tell the owner, who may start the next one. The
 * handle is the owner's no more, whatever reads are still out. */
static void send_ended(struct xfer *b)
{
        struct engine_send *s = sender_of(b);
        struct engine_result r;

        xfer_decide_transient(b, WIRE_E_INTERNAL, "connection torn down");
        r = (struct engine_result){
                .outcome = b->outcome,
                .status = b->status,
                .transient = b->outcome == ENGINE_FAILED && b->transient,
                .text = b->text,
                .bytes = b->bytes,
                .usec = b->t_last > b->t_start ? b->t_last - b->t_start : 0,
                .files = s->files_ok,
                .skipped = s->skipped,
                .deleted = s->deleted,
                .hops = s->hops,
                .hop_missing = s->hop_missing,
                .hop_failed = s->hop_failed,
                .hop_status = s->hop_status,
                .hop_text = s->hop_text,
        };
        s->ops->done(s->owner, &r);
}

/* A read blocked in a file system that can be interrupted comes back now. */
static void send_cancel_io(struct xfer *b)
{
        io_cancel_fd(sender_of(b)->env->xe->io, sender_of(b)->fd);
}

static void send_gone(struct xfer *b)
{
        struct engine_send *s = sender_of(b);

        safe_close(s->fd);
        send_pack_free(s);
        send_sync_free(s);
        send_route_free(s);
        sparse_map_free(&s->sparse);
        free(s->prev.sizes);
        free(s);
}

void send_route_free(struct engine_send *s)
{
        free(s->route);
        free(s->hop_bytes);
        free(s->land);
        free(s->rules);
        s->route = NULL;
        s->hop_bytes = NULL;
        s->land = NULL;
        s->rules = NULL;
        s->route_hops = 0;
}

const struct xfer_ops send_xfer_ops = {
        .feed = send_feed,
        .timeout = send_timeout,
        .log = send_log,
        .lane_free = send_lane_free,
        .ended = send_ended,
        .cancel_io = send_cancel_io,
        .gone = send_gone,
        .paced = send_paced,
        .rail_lost = send_rail_lost,
        .rail_silent = send_rail_silent,
};

void send_cancel(struct engine_send *s)
{
        send_abort(&s->base, ENGINE_CANCELLED, WIRE_OK, "cancelled");
}

void send_progress(const struct engine_send *s, struct engine_progress *p)
{
        const struct xfer *x = &s->base;

        p->bytes = x->bytes;
        p->total = 0;
        p->usec = x->t_last > x->t_start ? x->t_last - x->t_start : 0;
        p->skipped = s->skipped;
        p->hops = s->route_hops;
        memset(p->hop_bytes, 0, sizeof(p->hop_bytes));
        if (s->route_hops)
                memcpy(p->hop_bytes, s->hop_bytes, s->route_hops * sizeof(*s->hop_bytes));
}
