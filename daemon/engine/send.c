/*
 * Senders: one per running job. The file (a descriptor the client passed)
 * is read by io_uring into this job's buffers from the preregistered send
 * pool (a share, or more while it is the only job: common/ring.h), hashed
 * in order, and posted as SEND_WITH_IMM work requests as long as the
 * receiver has granted credits. Work requests are signalled every few
 * posts (and always the last of a batch), so one completion retires a run
 * of buffers; reads for the freed buffers go out at once, keeping both the
 * disk and the wire busy.
 *
 * A large file is striped over the lanes the receiver grants (common/wire.h):
 * lane 0 offers; once accepted, the other lanes connect with the offer's
 * token, and each lane reads, hashes, posts and ends its own run of chunks
 * with its own buffers and credits. The job is done when a RESULT of "ok"
 * comes back after every lane has posted its END.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>

#include "clock.h"
#include "conn.h"
#include "daemon.h"
#include "digest.h"
#include "engine.h"
#include "engine-private.h"
#include "io.h"
#include "jobs.h"
#include "journal.h"
#include "log.h"
#include "wire.h"
#include "send.h"

static const char *const send_state_names[] = {
        [SEND_RESOLVING] = "resolving",
        [SEND_CONNECTING] = "connecting",
        [SEND_OFFERED] = "offered",
        [SEND_DATA] = "data",
        [SEND_VERIFYING] = "verifying",
        [SEND_CLOSING] = "closing",
};

void send_set_state(struct sender *s, enum send_state state)
{
        static const uint8_t legal[] = {
                [SEND_RESOLVING] = 1u << SEND_CONNECTING | 1u << SEND_CLOSING,
                [SEND_CONNECTING] = 1u << SEND_OFFERED | 1u << SEND_CLOSING,
                [SEND_OFFERED] = 1u << SEND_DATA | 1u << SEND_CLOSING,
                [SEND_DATA] = 1u << SEND_VERIFYING | 1u << SEND_CLOSING,
                [SEND_VERIFYING] = 1u << SEND_CLOSING,
                [SEND_CLOSING] = 0,
        };

        if (s->state == state)
                return;
        if (!(legal[s->state] & (1u << state))) {
                log_err("%s: illegal send state change %s -> %s", s->job->peer,
                        send_state_names[s->state], send_state_names[state]);
                abort();
        }
        log_debug("%s: job %" PRIu64 " %s -> %s", s->job->peer, s->job->id,
                  send_state_names[s->state], send_state_names[state]);
        s->state = state;
}

struct sender *sender_next(struct sender *s)
{
        return s->next;
}

void send_arm_timer(struct sender *s, int sec);

/* Admit lane @idx to the send pool (lane 0) or join it (the others):
 * allocate the per-buffer arrays and take the first buffers. 0, or -errno
 * (-EBUSY: the pool admits no more jobs). */
int send_bufs_admit(struct send_lane *l, struct ring *pool)
{
        int n;

        l->bufs = calloc(pool->count, sizeof(*l->bufs));
        l->spare = calloc(pool->count, sizeof(*l->spare));
        l->inflight = calloc(pool->count, sizeof(*l->inflight));
        if (!l->bufs || !l->spare || !l->inflight)
                return -ENOMEM;
        if (l->idx == 0) {
                n = ring_hold_admit(&l->hold, pool);
                if (n <= 0)
                        return n < 0 ? n : -EBUSY;
        } else {
                n = ring_hold_join(&l->hold, pool);
                if (n < 0)
                        return n;
        }
        ring_hold_set_lanes(&l->hold, l->s->nlanes);
        for (uint32_t i = pool->count; i-- > 0;) {
                l->bufs[i].l = l;
                if (i < (uint32_t)n)
                        l->spare[l->nspare++] = i;
        }
        return 0;
}

void send_lane_free(struct send_lane *l)
{
        if (!l)
                return;
        ring_hold_free(&l->hold);
        digest_deinit(&l->digest);
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
        return ring_hold_grow(&l->hold, &l->s->e->send_ring, out);
}

/* A buffer is done with: kept, or given back if this lane holds more than
 * its due now that other jobs run. */
static void send_buf_put(struct send_lane *l, uint32_t i)
{
        struct ring *pool = &l->s->e->send_ring;

        l->bufs[i].state = BUF_FREE;
        if (ring_hold_over(&l->hold, pool))
                ring_hold_release(&l->hold, pool, i);
        else
                l->spare[l->nspare++] = i;
}

void send_pump(struct send_lane *l);

/*
 * A lane that joined when the pool had nothing to lend holds no buffer, so
 * no completion of its own will ever pump it: after buffers come back to
 * the pool, pump each such lane once.
 */
void send_feed_starved(struct engine *e)
{
        for (struct sender *s = e->senders; s; s = s->next) {
                if (s->state != SEND_DATA)
                        continue;
                for (unsigned int k = 0; k < s->nlanes; k++) {
                        struct send_lane *l = s->lane[k];

                        if (l && l->hold.held == 0 && l->next_read < l->end_seq)
                                send_pump(l);
                }
        }
}

static uint8_t *send_buf_mem(struct send_lane *l, uint32_t i)
{
        return l->s->e->send_mem + (size_t)l->hold.slot[i] * l->s->e->slot_size;
}

static void send_log(struct sender *s)
{
        char hex[DIGEST_HEX_SIZE];
        uint8_t d[WIRE_DIGEST_SIZE];
        bool ok = s->final == CTL_JOB_DONE;

        if (ok) {
                digest_lanes(s->digest, s->nlanes, d);
                digest_hex(d, hex);
        }
        journal_xfer(&(struct journal_xfer){
                .direction = "send",
                .id = s->job->id,
                .peer = s->job->peer,
                .file = s->job->name,
                .bytes = s->job->bytes_done,
                .usec = s->t_last > s->t_start ? s->t_last - s->t_start : 0,
                .status = ok ? WIRE_OK : (s->status ?: WIRE_E_INTERNAL),
                .text = s->text[0] ? s->text : NULL,
                .digest = ok ? hex : NULL,
                .lanes = s->t_start ? s->nlanes : 0,
                .cancelled = s->final == CTL_JOB_CANCELLED,
        });
}

/* Hang up one lane: reaped on DISCONNECTED, or at once if never connected. */
static void send_lane_hangup(struct send_lane *l)
{
        if (l->established)
                conn_disconnect(&l->conn);
        else
                conn_reap(&l->conn);
}

/*
 * Decide the job's outcome (first decision wins) and start hanging up.
 * The job itself is finished once every lane is reaped.
 */
void sender_abort(struct sender *s, int final, unsigned int status, const char *text)
{
        if (!s->decided) {
                s->decided = true;
                s->final = final;
                s->status = status;
                snprintf(s->text, sizeof(s->text), "%s", text ?: "");
                if (final == CTL_JOB_DONE)
                        log_info("job %" PRIu64 ": sent %s to %s", s->job->id, s->job->name, s->job->peer);
                else
                        log_warning("job %" PRIu64 ": send of %s to %s %s: %s", s->job->id,
                                    s->job->name, s->job->peer,
                                    final == CTL_JOB_CANCELLED ? "cancelled" : "failed", s->text);
                send_log(s);
        }
        if (s->state == SEND_CLOSING)
                return;
        send_set_state(s, SEND_CLOSING);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (s->lane[k])
                        send_lane_hangup(s->lane[k]);
        /* The timer covers a peer that never answers the hang-up. */
        send_arm_timer(s, SEND_LINGER_SEC);
}

void send_fail(struct sender *s, unsigned int status, const char *fmt, ...)
{
        char text[CTL_TEXT_MAX + 1];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        sender_abort(s, CTL_JOB_FAILED, status, text);
}

void send_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct sender *s = arg;

        if (s->state == SEND_CLOSING) {
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        if (s->lane[k])
                                conn_reap(&s->lane[k]->conn);
                return;
        }
        send_fail(s, WIRE_E_PROTOCOL, "receiver did not answer within %d s",
                  s->state == SEND_OFFERED ? SEND_OFFER_SEC : SEND_VERDICT_SEC);
}

void send_arm_timer(struct sender *s, int sec)
{
        struct timeval tv = { .tv_sec = sec };

        evtimer_add(s->timer, &tv);
}

static void send_on_read(struct io_req *req, int64_t res)
{
        struct send_buf *b = (struct send_buf *)req;
        struct send_lane *l = b->l;
        struct sender *s = l->s;

        conn_unhold(&l->conn);
        if (s->state == SEND_CLOSING)
                return;
        if (res < 0) {
                send_fail(s, WIRE_E_IO, "reading the file at offset %" PRIu64 ": %s", req->off,
                          strerror((int)-res));
                return;
        }
        if ((uint64_t)res != b->len) {
                send_fail(s, WIRE_E_SIZE, "the file shrank while being sent");
                return;
        }
        b->state = BUF_READY;
        send_pump(l);
}

static void send_post_end(struct send_lane *l)
{
        struct sender *s = l->s;
        struct wire_msg m = { .type = WIRE_END };
        int r;

        m.end.bytes = wire_run_bytes(s->job->size, s->chunk, l->first_seq, l->end_seq);
        digest_final(&l->digest, m.end.digest);
        r = conn_send_ctrl(&l->conn, &m);
        if (r == -ENOBUFS)
                return;         /* retried after the next completion */
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting END: %s", strerror(-r));
                return;
        }
        memcpy(s->digest[l->idx], m.end.digest, WIRE_DIGEST_SIZE);
        l->credits--;
        l->end_posted = true;
        if (++s->nended == s->nlanes)
                send_arm_timer(s, SEND_VERDICT_SEC);
}

void send_pump(struct send_lane *l)
{
        struct sender *s = l->s;
        struct ibv_send_wr wrs[64], *bad;
        struct ibv_sge sges[64];
        unsigned int n = 0;
        int r;

        if ((s->state != SEND_DATA && s->state != SEND_VERIFYING) || !l->established ||
            l->conn.reaping)
                return;

        /* Reads into every free buffer, in sequence order. */
        while (l->next_read < l->end_seq) {
                struct send_buf *b;
                uint64_t off = l->next_read * s->chunk;
                uint32_t i;

                if (!send_buf_get(l, &i))
                        break;
                b = &l->bufs[i];
                l->inflight[l->next_read % l->hold.cap] = i;
                b->seq = l->next_read;
                b->len = MIN((uint64_t)s->chunk, s->job->size - off);
                b->io.done = send_on_read;
                r = io_read(s->e->io, &b->io, s->job->fd, send_buf_mem(l, i), b->len, off);
                if (r < 0) {
                        send_fail(s, WIRE_E_IO, "queueing a read: %s", strerror(-r));
                        return;
                }
                b->state = BUF_READING;
                conn_hold(&l->conn);
                l->next_read++;
        }

        /* Post what is ready, in order, as far as credits allow, as one chain. */
        while (l->credits > 0 && l->next_post < l->next_read && n < ARRAY_SIZE(wrs)) {
                struct send_buf *b = &l->bufs[l->inflight[l->next_post % l->hold.cap]];
                uint8_t *mem = send_buf_mem(l, b - l->bufs);

                if (b->state != BUF_READY)
                        break;
                digest_update(&l->digest, mem, b->len);
                sges[n] = (struct ibv_sge){
                        .addr = (uintptr_t)mem,
                        .length = b->len,
                        .lkey = s->e->send_mr->lkey,
                };
                wrs[n] = (struct ibv_send_wr){
                        .wr_id = b->seq,
                        .sg_list = &sges[n],
                        .num_sge = 1,
                        .opcode = IBV_WR_SEND_WITH_IMM,
                        .imm_data = htobe32((uint32_t)b->seq),
                };
                if (++l->unsignaled >= s->signal_every) {
                        wrs[n].send_flags = IBV_SEND_SIGNALED;
                        l->unsignaled = 0;
                }
                if (n > 0)
                        wrs[n - 1].next = &wrs[n];
                b->state = BUF_POSTED;
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
                if (s->t_start == 0)
                        s->t_start = clock_usec(CLOCK_MONOTONIC);
                if (ibv_post_send(l->conn.id->qp, wrs, &bad)) {
                        send_fail(s, WIRE_E_INTERNAL, "ibv_post_send: %m");
                        return;
                }
        }

        if (l->next_post == l->end_seq && !l->end_posted && l->credits > 0)
                send_post_end(l);
}

static void send_on_data_done(struct send_lane *l, uint64_t seq)
{
        struct sender *s = l->s;
        struct job *job = s->job;
        bool was_done = l->next_done == l->end_seq;
        uint32_t held = l->hold.held;

        /* A signalled completion retires every earlier post on this QP. */
        while (l->next_done <= seq && l->next_done < l->next_post) {
                uint32_t i = l->inflight[l->next_done % l->hold.cap];

                job->bytes_done += l->bufs[i].len;
                send_buf_put(l, i);
                l->next_done++;
        }
        if (l->hold.held < held)
                send_feed_starved(s->e);
        s->t_last = clock_usec(CLOCK_MONOTONIC);
        job->usec = s->t_last - s->t_start;
        if (!was_done && l->next_done == l->end_seq && ++s->ndone == s->nlanes &&
            s->state == SEND_DATA) {
                send_set_state(s, SEND_VERIFYING);
                job_set_state(job, CTL_JOB_VERIFYING);
        }
}

static void send_on_accept(struct send_lane *l, const struct wire_accept *a)
{
        struct sender *s = l->s;
        struct job *job = s->job;
        int r;

        /* Every lane must have a run of its own to carry. */
        if (a->lanes == 0 || a->lanes > s->nlanes || a->lanes > MAX(s->nchunks, 1u)) {
                send_fail(s, WIRE_E_PROTOCOL, "receiver granted %u lanes of %u", a->lanes, s->nlanes);
                return;
        }
        evtimer_del(s->timer);
        s->nlanes = a->lanes;
        wire_lane_range(s->nchunks, s->nlanes, 0, &l->first_seq, &l->end_seq);
        l->next_read = l->next_post = l->next_done = l->first_seq;
        ring_hold_set_lanes(&l->hold, s->nlanes);
        send_set_state(s, SEND_DATA);
        job_set_state(job, CTL_JOB_SENDING);
        if (s->nchunks == 0) {
                s->t_start = s->t_last = clock_usec(CLOCK_MONOTONIC);
                s->ndone = s->nlanes;
                send_set_state(s, SEND_VERIFYING);
                job_set_state(job, CTL_JOB_VERIFYING);
                send_post_end(l);
                return;
        }
        for (unsigned int k = 1; k < s->nlanes && s->state == SEND_DATA; k++) {
                r = send_lane_new(s, k);
                if (r < 0) {
                        send_fail(s, WIRE_E_INTERNAL, "starting lane %u: %s", k, strerror(-r));
                        return;
                }
        }
        send_pump(l);
}

static void send_on_msg(struct send_lane *l, const struct wire_msg *m)
{
        struct sender *s = l->s;

        l->credits += m->credits;
        switch (m->type) {
        case WIRE_ACCEPT:
                if (s->state != SEND_OFFERED || l->idx != 0)
                        break;
                send_on_accept(l, &m->accept);
                return;
        case WIRE_REFUSE:
                if (s->state != SEND_OFFERED || l->idx != 0)
                        break;
                send_fail(s, m->refuse.status, "refused by peer: %s%s%s", wire_status_str(m->refuse.status),
                          m->refuse.text[0] ? ": " : "", m->refuse.text);
                return;
        case WIRE_CREDIT:
                send_pump(l);
                return;
        case WIRE_RESULT:
                if (s->state != SEND_DATA && s->state != SEND_VERIFYING)
                        break;
                /* The receiver verified the lot; the other lanes' last
                 * acknowledgements may not be polled yet. */
                if (m->result.status == WIRE_OK && s->nended == s->nlanes) {
                        s->job->bytes_done = s->job->size;
                        if (s->t_last == 0)
                                s->t_last = clock_usec(CLOCK_MONOTONIC);
                        sender_abort(s, CTL_JOB_DONE, WIRE_OK, NULL);
                        return;
                }
                send_fail(s, m->result.status ?: WIRE_E_PROTOCOL, "receiver: %s%s%s",
                          wire_status_str(m->result.status), m->result.text[0] ? ": " : "",
                          m->result.text);
                return;
        default:
                break;
        }
        send_fail(s, WIRE_E_PROTOCOL, "unexpected message %u from receiver", m->type);
}

void send_on_wc(struct conn *c, const struct ibv_wc *wc)
{
        struct send_lane *l = (struct send_lane *)c;
        struct sender *s = l->s;
        uint64_t idx = wc->wr_id & ~CONN_WRID_CTRL;

        if (wc->status != IBV_WC_SUCCESS) {
                if (wc->status != IBV_WC_WR_FLUSH_ERR && s->state != SEND_CLOSING)
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
        {
                struct wire_msg m;
                int r = wire_decode(conn_ctrl_buf(c, wc->wr_id), wc->byte_len, &m);

                if (conn_repost_ctrl(c, wc->wr_id) < 0) {
                        send_fail(s, WIRE_E_INTERNAL, "cannot repost a receive");
                        return;
                }
                if (s->state == SEND_CLOSING)
                        return;
                if (r < 0) {
                        send_fail(s, WIRE_E_PROTOCOL, "undecodable message from receiver");
                        return;
                }
                send_on_msg(l, &m);
        }
}

void send_on_batch_end(struct conn *c)
{
        send_pump((struct send_lane *)c);
}
