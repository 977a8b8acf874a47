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
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>

#include "auth.h"
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

#define SEND_CTRL_RECVS         16
#define SEND_RESOLVE_MS         5000
#define SEND_LINGER_SEC         5
/* A receiver that accepted must answer END within this long (it fsyncs). */
#define SEND_VERDICT_SEC        300
/* ...and answer an OFFER within this long. */
#define SEND_OFFER_SEC          30

enum send_state {
        SEND_RESOLVING,         /* address, then route (lane 0) */
        SEND_CONNECTING,
        SEND_OFFERED,
        SEND_DATA,
        SEND_VERIFYING,         /* every lane's END posted, waiting for RESULT */
        SEND_CLOSING,
};

static const char *const send_state_names[] = {
        [SEND_RESOLVING] = "resolving",
        [SEND_CONNECTING] = "connecting",
        [SEND_OFFERED] = "offered",
        [SEND_DATA] = "data",
        [SEND_VERIFYING] = "verifying",
        [SEND_CLOSING] = "closing",
};

enum send_buf_state { BUF_FREE, BUF_READING, BUF_READY, BUF_POSTED };

struct send_lane;

struct send_buf {
        struct io_req io;
        struct send_lane *l;
        uint64_t seq;
        uint32_t len;
        enum send_buf_state state;
};

/*
 * One connection of the job: lane 0 offers, the others join with the
 * offer's token. Each reads, hashes and posts its own run of chunks.
 */
struct send_lane {
        struct conn conn;       /* first: the conn callbacks are handed this */
        struct sender *s;
        unsigned int idx;
        bool established;
        /* Buffers, by index: hold gives each its pool slot; the free ones
         * that have a slot are stacked in spare. The buffer of chunk seq,
         * next_done <= seq < next_read, is inflight[seq % hold.cap]. */
        struct ring_hold hold;
        struct send_buf *bufs;
        uint32_t *spare;
        uint32_t nspare;
        uint32_t *inflight;
        uint64_t first_seq, end_seq;    /* its run of chunks */
        uint64_t next_read, next_post, next_done;
        uint32_t credits;
        uint32_t unsignaled;
        bool end_posted;
        struct digest digest;   /* over its run, in order */
};

struct sender {
        struct engine *e;
        struct sender *next;
        struct job *job;
        enum send_state state;
        struct send_lane *lane[WIRE_LANES_MAX];
        unsigned int nlanes;    /* granted (1 until the ACCEPT) */
        unsigned int nlive;     /* lanes not yet reaped */
        unsigned int ndone;     /* lanes whose every chunk is acknowledged */
        unsigned int nended;    /* lanes whose END is posted */
        struct sockaddr_storage dst;
        uint8_t token[WIRE_TOKEN_SIZE];
        uint32_t chunk;
        uint64_t nchunks;
        uint32_t signal_every;
        uint8_t nonce[WIRE_NONCE_SIZE];
        uint64_t t_start, t_last;
        struct event *timer;
        uint8_t digest[WIRE_LANES_MAX][WIRE_DIGEST_SIZE];
        /* The outcome, once known; job_finish gets it after teardown. */
        bool decided;
        enum ctl_job_state final;
        unsigned int status;
        char text[CTL_TEXT_MAX + 1];
};

static void send_set_state(struct sender *s, enum send_state state)
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

static void send_arm_timer(struct sender *s, int sec);

/* Admit lane @idx to the send pool (lane 0) or join it (the others):
 * allocate the per-buffer arrays and take the first buffers. 0, or -errno
 * (-EBUSY: the pool admits no more jobs). */
static int send_bufs_admit(struct send_lane *l, struct ring *pool)
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

static void send_lane_free(struct send_lane *l)
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

static void send_pump(struct send_lane *l);

/*
 * A lane that joined when the pool had nothing to lend holds no buffer, so
 * no completion of its own will ever pump it: after buffers come back to
 * the pool, pump each such lane once.
 */
static void send_feed_starved(struct engine *e)
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

static void send_fail(struct sender *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
static void send_fail(struct sender *s, unsigned int status, const char *fmt, ...)
{
        char text[CTL_TEXT_MAX + 1];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        sender_abort(s, CTL_JOB_FAILED, status, text);
}

static void send_on_timer(evutil_socket_t fd, short what, void *arg)
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

static void send_arm_timer(struct sender *s, int sec)
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

/* The bytes of chunks [first, end) of the file. */
static uint64_t send_run_bytes(const struct sender *s, uint64_t first, uint64_t end)
{
        return MIN(end * s->chunk, s->job->size) - MIN(first * s->chunk, s->job->size);
}

static void send_post_end(struct send_lane *l)
{
        struct sender *s = l->s;
        struct wire_msg m = { .type = WIRE_END };
        int r;

        m.end.bytes = send_run_bytes(s, l->first_seq, l->end_seq);
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

static void send_pump(struct send_lane *l)
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

static int send_lane_new(struct sender *s, unsigned int idx);

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

static void send_on_wc(struct conn *c, const struct ibv_wc *wc)
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

static void send_on_batch_end(struct conn *c)
{
        send_pump((struct send_lane *)c);
}

/* Check the receiver's welcome on any lane; 0 or -1 after send_fail. */
static int send_welcome(struct send_lane *l, const void *pdata, size_t plen, struct wire_welcome *w)
{
        struct sender *s = l->s;
        int r;

        r = wire_decode_welcome(pdata, plen, w);
        if (r < 0) {
                send_fail(s, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                          r == -EPROTONOSUPPORT ? "peer speaks protocol version %u" :
                          "peer's accept is not an rdmaxfer welcome", w->version);
                return -1;
        }
        /* Lanes may start with nothing: credits follow as the ring lends. */
        if ((l->idx == 0 && w->credits == 0) || w->slot_size == 0) {
                send_fail(s, WIRE_E_PROTOCOL, "peer granted no credits");
                return -1;
        }
        l->credits = w->credits;
        return 0;
}

static void send_offer(struct send_lane *l, const void *pdata, size_t plen)
{
        struct sender *s = l->s;
        struct daemon *d = s->e->d;
        struct wire_msg m = { .type = WIRE_OFFER };
        struct wire_welcome w;
        int r;

        if (send_welcome(l, pdata, plen, &w) < 0)
                return;
        if ((w.flags & WIRE_WELCOME_AUTH) && d->key.len == 0) {
                send_fail(s, WIRE_E_AUTH, "peer requires a pre-shared key and key_file is not set");
                return;
        }
        s->chunk = MIN(s->e->slot_size, w.slot_size);
        s->nchunks = DIV_ROUND_UP(s->job->size, s->chunk);
        if (s->nchunks > UINT32_MAX) {
                send_fail(s, WIRE_E_TOO_LARGE, "file needs more than 2^32 chunks of %u bytes", s->chunk);
                return;
        }
        memcpy(s->nonce, w.nonce, sizeof(s->nonce));

        m.offer.transfer_id = s->job->id;
        m.offer.size = s->job->size;
        m.offer.chunk_size = s->chunk;
        m.offer.lanes = (uint16_t)s->nlanes;
        memcpy(m.offer.token, s->token, WIRE_TOKEN_SIZE);
        snprintf(m.offer.name, sizeof(m.offer.name), "%s", s->job->name);
        if (d->key.len)
                auth_offer_mac(&d->key, s->nonce, &m.offer, m.offer.mac);
        r = conn_send_ctrl(&l->conn, &m);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting the offer: %s", strerror(-r));
                return;
        }
        l->credits--;
        send_set_state(s, SEND_OFFERED);
        send_arm_timer(s, SEND_OFFER_SEC);
}

/* A lane other than 0 is up: it sends its run as credits come. */
static void send_lane_up(struct send_lane *l, const void *pdata, size_t plen)
{
        struct wire_welcome w;

        if (send_welcome(l, pdata, plen, &w) < 0)
                return;
        log_debug("%s: job %" PRIu64 " lane %u up, %u credits", l->s->job->peer, l->s->job->id,
                  l->idx, l->credits);
        send_pump(l);
}

static void send_connect(struct send_lane *l)
{
        struct sender *s = l->s;
        struct engine *e = s->e;
        struct rdma_conn_param param = { 0 };
        struct wire_hello h = { .magic = WIRE_MAGIC, .version = WIRE_VERSION };
        uint8_t hbuf[WIRE_HELLO_SIZE];
        int r;

        if (l->conn.id->verbs != e->verbs) {
                send_fail(s, WIRE_E_INTERNAL, "peer is reached through device %s, this daemon's ring is on %s",
                          ibv_get_device_name(l->conn.id->verbs->device),
                          ibv_get_device_name(e->verbs->device));
                return;
        }
        /* Room for every buffer it may grow to. */
        r = conn_setup_qp(&l->conn, l->hold.cap + CONN_CTRL_BUFS + 2, SEND_CTRL_RECVS + 1, SEND_CTRL_RECVS);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "setting up the queue pair: %s", strerror(-r));
                return;
        }
        if (l->idx > 0) {
                h.flags = WIRE_HELLO_LANE;
                h.lane = (uint16_t)l->idx;
                memcpy(h.token, s->token, WIRE_TOKEN_SIZE);
        }
        wire_encode_hello(hbuf, &h);
        param.private_data = hbuf;
        param.private_data_len = sizeof(hbuf);
        param.rnr_retry_count = 7;
        param.retry_count = 7;
        if (rdma_connect(l->conn.id, &param)) {
                send_fail(s, WIRE_E_INTERNAL, "rdma_connect: %m");
                return;
        }
        if (l->idx == 0)
                send_set_state(s, SEND_CONNECTING);
}

static void send_on_cm(struct conn *c, enum rdma_cm_event_type type, int status,
                       const void *pdata, size_t plen)
{
        struct send_lane *l = (struct send_lane *)c;
        struct sender *s = l->s;
        struct wire_reject rj = { 0 };

        if (s->state == SEND_CLOSING) {
                if (type == RDMA_CM_EVENT_DISCONNECTED || !l->established)
                        conn_reap(c);
                return;
        }
        switch (type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
                if (rdma_resolve_route(c->id, SEND_RESOLVE_MS))
                        send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_route: %m");
                return;
        case RDMA_CM_EVENT_ROUTE_RESOLVED:
                send_connect(l);
                return;
        case RDMA_CM_EVENT_ESTABLISHED:
                l->established = true;
                if (l->idx == 0)
                        send_offer(l, pdata, plen);
                else
                        send_lane_up(l, pdata, plen);
                return;
        case RDMA_CM_EVENT_REJECTED:
                if (wire_decode_reject(pdata, plen, &rj) == 0 || rj.magic == WIRE_MAGIC) {
                        send_fail(s, rj.status, "refused by peer: %s", wire_status_str(rj.status));
                        return;
                }
                send_fail(s, WIRE_E_INTERNAL, "connection rejected (is rdmaxferd listening on %s?)",
                          s->job->peer);
                return;
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR:
                send_fail(s, WIRE_E_INTERNAL, "peer unreachable: %s (%s)", rdma_event_str(type),
                          strerror(status < 0 ? -status : status));
                return;
        case RDMA_CM_EVENT_DISCONNECTED:
                l->established = false;
                send_fail(s, WIRE_E_PROTOCOL, "peer disconnected");
                return;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
                send_fail(s, WIRE_E_INTERNAL, "RDMA device removed");
                return;
        default:
                return;
        }
}

static void send_on_reaped(struct conn *c)
{
        struct send_lane *l = (struct send_lane *)c;
        struct sender *s = l->s;
        struct engine *e = s->e;
        struct job *job = s->job;

        ring_hold_leave(&l->hold, &e->send_ring);
        s->lane[l->idx] = NULL;
        send_lane_free(l);
        send_feed_starved(e);
        if (--s->nlive > 0)
                return;

        for (struct sender **p = &e->senders; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        break;
                }
        if (s->timer)
                event_free(s->timer);
        job->sender = NULL;
        if (!s->decided) {
                s->final = CTL_JOB_FAILED;
                s->status = WIRE_E_INTERNAL;
                snprintf(s->text, sizeof(s->text), "connection torn down");
        }
        {
                enum ctl_job_state final = s->final;
                unsigned int status = s->status;
                char text[CTL_TEXT_MAX + 1];

                snprintf(text, sizeof(text), "%s", s->text);
                free(s);
                job_finish(job, final, status, text);
        }
        engine_conn_gone(e);
}

static const struct conn_ops send_ops = {
        .cm_event = send_on_cm,
        .wc = send_on_wc,
        .wc_batch_end = send_on_batch_end,
        .reaped = send_on_reaped,
};

/*
 * A new lane: buffers from the pool, an rdma_cm id, address resolution
 * started. 0 or -errno (-EBUSY: the pool admits no more jobs); on failure
 * nothing of the lane is left.
 */
static int send_lane_new(struct sender *s, unsigned int idx)
{
        struct engine *e = s->e;
        struct send_lane *l;
        struct rdma_cm_id *id;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->s = s;
        l->idx = idx;
        l->digest = DIGEST_NULL;
        r = digest_init(&l->digest);
        if (r == 0)
                r = send_bufs_admit(l, &e->send_ring);
        if (r < 0) {
                send_lane_free(l);
                return r;
        }
        if (rdma_create_id(e->ch, &id, NULL, RDMA_PS_TCP)) {
                r = -errno;
                ring_hold_leave(&l->hold, &e->send_ring);
                send_lane_free(l);
                return r;
        }
        conn_init(&l->conn, e, &send_ops, id);
        snprintf(l->conn.peer, sizeof(l->conn.peer), "%s", s->job->peer);
        s->lane[idx] = l;
        s->nlive++;
        if (idx > 0) {
                wire_lane_range(s->nchunks, s->nlanes, idx, &l->first_seq, &l->end_seq);
                l->next_read = l->next_post = l->next_done = l->first_seq;
        }
        /* Leave from our own address, so the route uses the ring's device. */
        if (rdma_resolve_addr(id, e->have_src ? (struct sockaddr *)&e->src : NULL,
                              (struct sockaddr *)&s->dst, SEND_RESOLVE_MS))
                send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_addr: %m");
        return 0;
}

int engine_send(struct engine *e, struct job *job)
{
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        struct sender *s;
        char port[8];
        int r;

        if (e->stopping)
                return -ESHUTDOWN;
        snprintf(port, sizeof(port), "%u", job->port ? job->port : e->d->cfg.port);
        r = getaddrinfo(job->host, port, &hints, &ai);
        if (r != 0)
                return -EINVAL;
        if (ai->ai_addrlen > sizeof(struct sockaddr_storage)) {
                freeaddrinfo(ai);
                return -EINVAL;
        }

        s = calloc(1, sizeof(*s));
        if (!s) {
                freeaddrinfo(ai);
                return -ENOMEM;
        }
        s->e = e;
        s->job = job;
        s->nlanes = e->d->cfg.lanes;
        memcpy(&s->dst, ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(ai);
        {
                uint8_t nonce[WIRE_NONCE_SIZE];

                auth_nonce(nonce);
                memcpy(s->token, nonce, WIRE_TOKEN_SIZE);
        }
        s->timer = evtimer_new(e->base, send_on_timer, s);
        if (!s->timer) {
                free(s);
                return -ENOMEM;
        }
        s->signal_every = MAX(1u, e->send_ring.share / 4);
        job->sender = s;
        s->next = e->senders;
        e->senders = s;
        job_set_state(job, CTL_JOB_CONNECTING);
        r = send_lane_new(s, 0);
        if (r < 0) {
                e->senders = s->next;
                job->sender = NULL;
                event_free(s->timer);
                free(s);
                return r;
        }
        return 0;
}

void engine_cancel(struct engine *e, struct job *job)
{
        if (job->sender)
                sender_abort(job->sender, CTL_JOB_CANCELLED, WIRE_OK, "cancelled");
}
