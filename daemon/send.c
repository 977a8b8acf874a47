/*
 * Senders: one per running job. The file (a descriptor the client passed)
 * is read by io_uring into this job's buffers from the preregistered send
 * pool (a share, or more while it is the only job: common/ring.h), hashed
 * in order, and posted as SEND_WITH_IMM work requests as long as the
 * receiver has granted credits. Work requests are signalled every few
 * posts (and always the last of a batch), so one completion retires a run
 * of buffers; reads for the freed buffers go out at once, keeping both the
 * disk and the wire busy.
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
        SEND_RESOLVING,         /* address, then route */
        SEND_CONNECTING,
        SEND_OFFERED,
        SEND_DATA,
        SEND_VERIFYING,         /* END posted, waiting for RESULT */
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

struct send_buf {
        struct io_req io;
        struct sender *s;
        uint64_t seq;
        uint32_t len;
        enum send_buf_state state;
};

struct sender {
        struct conn conn;
        struct sender *next;
        struct job *job;
        enum send_state state;
        bool established;
        /* Buffers, by index: hold gives each its pool slot; the free ones
         * that have a slot are stacked in spare. The buffer of chunk seq,
         * next_done <= seq < next_read, is inflight[seq % hold.cap]. */
        struct ring_hold hold;
        struct send_buf *bufs;
        uint32_t *spare;
        uint32_t nspare;
        uint32_t *inflight;
        uint32_t chunk;
        uint64_t nchunks;
        uint32_t credits;
        uint64_t next_read, next_post, next_done;
        uint32_t signal_every;
        uint32_t unsignaled;
        bool end_posted;
        struct digest digest;
        uint8_t nonce[WIRE_NONCE_SIZE];
        uint64_t t_start, t_last;
        struct event *timer;
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
                log_err("%s: illegal send state change %s -> %s", s->conn.peer,
                        send_state_names[s->state], send_state_names[state]);
                abort();
        }
        log_debug("%s: job %" PRIu64 " %s -> %s", s->conn.peer, s->job->id,
                  send_state_names[s->state], send_state_names[state]);
        s->state = state;
}

struct sender *sender_next(struct sender *s)
{
        return s->next;
}

static void send_arm_timer(struct sender *s, int sec);

/* Admit to the send pool: allocate the per-buffer arrays and take the
 * first buffers. 0, or -errno (-EBUSY: the pool admits no more jobs). */
static int send_bufs_admit(struct sender *s, struct ring *pool)
{
        int n;

        s->bufs = calloc(pool->count, sizeof(*s->bufs));
        s->spare = calloc(pool->count, sizeof(*s->spare));
        s->inflight = calloc(pool->count, sizeof(*s->inflight));
        if (!s->bufs || !s->spare || !s->inflight)
                return -ENOMEM;
        n = ring_hold_admit(&s->hold, pool);
        if (n <= 0)
                return n < 0 ? n : -EBUSY;
        for (uint32_t i = pool->count; i-- > 0;) {
                s->bufs[i].s = s;
                if (i < (uint32_t)n)
                        s->spare[s->nspare++] = i;
        }
        return 0;
}

static void send_bufs_free(struct sender *s)
{
        ring_hold_free(&s->hold);
        free(s->bufs);
        free(s->spare);
        free(s->inflight);
}

/* A free buffer for the next read: a spare one, or one more from the pool
 * while it has some to lend. false when there is none. */
static bool send_buf_get(struct sender *s, uint32_t *out)
{
        if (s->nspare > 0) {
                *out = s->spare[--s->nspare];
                return true;
        }
        return ring_hold_grow(&s->hold, &s->conn.e->send_ring, out);
}

/* A buffer is done with: kept, or given back if this job holds more than
 * its due now that other jobs run. */
static void send_buf_put(struct sender *s, uint32_t i)
{
        struct ring *pool = &s->conn.e->send_ring;

        s->bufs[i].state = BUF_FREE;
        if (ring_hold_over(&s->hold, pool))
                ring_hold_release(&s->hold, pool, i);
        else
                s->spare[s->nspare++] = i;
}

static uint8_t *send_buf_mem(struct sender *s, uint32_t i)
{
        return s->conn.e->send_mem + (size_t)s->hold.slot[i] * s->conn.e->slot_size;
}

static void send_log(struct sender *s)
{
        char hex[DIGEST_HEX_SIZE];
        uint8_t d[WIRE_DIGEST_SIZE];
        bool ok = s->final == CTL_JOB_DONE;

        if (ok) {
                digest_final(&s->digest, d);
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
                .cancelled = s->final == CTL_JOB_CANCELLED,
        });
}

/*
 * Decide the job's outcome (first decision wins) and start hanging up.
 * The job itself is finished once the connection is reaped.
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
        if (s->established) {
                conn_disconnect(&s->conn);
                /* DISCONNECTED reaps; the timer covers a peer that never answers. */
                send_arm_timer(s, SEND_LINGER_SEC);
        } else {
                conn_reap(&s->conn);
        }
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
                conn_reap(&s->conn);
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

static void send_pump(struct sender *s);

static void send_on_read(struct io_req *req, int64_t res)
{
        struct send_buf *b = (struct send_buf *)req;
        struct sender *s = b->s;

        conn_unhold(&s->conn);
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
        send_pump(s);
}

static void send_post_end(struct sender *s)
{
        struct wire_msg m = { .type = WIRE_END };
        int r;

        m.end.bytes = s->job->size;
        digest_final(&s->digest, m.end.digest);
        r = conn_send_ctrl(&s->conn, &m);
        if (r == -ENOBUFS)
                return;         /* retried after the next completion */
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting END: %s", strerror(-r));
                return;
        }
        s->credits--;
        s->end_posted = true;
        send_arm_timer(s, SEND_VERDICT_SEC);
}

static void send_pump(struct sender *s)
{
        struct ibv_send_wr wrs[64], *bad;
        struct ibv_sge sges[64];
        unsigned int n = 0;
        int r;

        if (s->state != SEND_DATA)
                return;

        /* Reads into every free buffer, in sequence order. */
        while (s->next_read < s->nchunks) {
                struct send_buf *b;
                uint64_t off = s->next_read * s->chunk;
                uint32_t i;

                if (!send_buf_get(s, &i))
                        break;
                b = &s->bufs[i];
                s->inflight[s->next_read % s->hold.cap] = i;
                b->seq = s->next_read;
                b->len = MIN((uint64_t)s->chunk, s->job->size - off);
                b->io.done = send_on_read;
                r = io_read(s->conn.e->io, &b->io, s->job->fd, send_buf_mem(s, b - s->bufs), b->len, off);
                if (r < 0) {
                        send_fail(s, WIRE_E_IO, "queueing a read: %s", strerror(-r));
                        return;
                }
                b->state = BUF_READING;
                conn_hold(&s->conn);
                s->next_read++;
        }

        /* Post what is ready, in order, as far as credits allow, as one chain. */
        while (s->credits > 0 && s->next_post < s->next_read && n < ARRAY_SIZE(wrs)) {
                struct send_buf *b = &s->bufs[s->inflight[s->next_post % s->hold.cap]];
                uint8_t *mem = send_buf_mem(s, b - s->bufs);

                if (b->state != BUF_READY)
                        break;
                digest_update(&s->digest, mem, b->len);
                sges[n] = (struct ibv_sge){
                        .addr = (uintptr_t)mem,
                        .length = b->len,
                        .lkey = s->conn.e->send_mr->lkey,
                };
                wrs[n] = (struct ibv_send_wr){
                        .wr_id = b->seq,
                        .sg_list = &sges[n],
                        .num_sge = 1,
                        .opcode = IBV_WR_SEND_WITH_IMM,
                        .imm_data = htobe32((uint32_t)b->seq),
                };
                if (++s->unsignaled >= s->signal_every) {
                        wrs[n].send_flags = IBV_SEND_SIGNALED;
                        s->unsignaled = 0;
                }
                if (n > 0)
                        wrs[n - 1].next = &wrs[n];
                b->state = BUF_POSTED;
                s->credits--;
                s->next_post++;
                n++;
        }
        if (n > 0) {
                /* The last of a batch is always signalled: nothing waits on a
                 * completion that will never be generated. */
                if (!(wrs[n - 1].send_flags & IBV_SEND_SIGNALED)) {
                        wrs[n - 1].send_flags = IBV_SEND_SIGNALED;
                        s->unsignaled = 0;
                }
                if (s->t_start == 0)
                        s->t_start = clock_usec(CLOCK_MONOTONIC);
                if (ibv_post_send(s->conn.id->qp, wrs, &bad)) {
                        send_fail(s, WIRE_E_INTERNAL, "ibv_post_send: %m");
                        return;
                }
        }

        if (s->next_post == s->nchunks && !s->end_posted && s->credits > 0)
                send_post_end(s);
}

static void send_on_data_done(struct sender *s, uint64_t seq)
{
        struct job *job = s->job;

        /* A signalled completion retires every earlier post on this QP. */
        while (s->next_done <= seq && s->next_done < s->next_post) {
                uint32_t i = s->inflight[s->next_done % s->hold.cap];

                job->bytes_done += s->bufs[i].len;
                send_buf_put(s, i);
                s->next_done++;
        }
        s->t_last = clock_usec(CLOCK_MONOTONIC);
        job->usec = s->t_last - s->t_start;
        if (s->next_done == s->nchunks && s->state == SEND_DATA) {
                send_set_state(s, SEND_VERIFYING);
                job_set_state(job, CTL_JOB_VERIFYING);
        }
}

static void send_on_msg(struct sender *s, const struct wire_msg *m)
{
        struct job *job = s->job;

        s->credits += m->credits;
        switch (m->type) {
        case WIRE_ACCEPT:
                if (s->state != SEND_OFFERED)
                        break;
                evtimer_del(s->timer);
                send_set_state(s, SEND_DATA);
                job_set_state(job, CTL_JOB_SENDING);
                if (s->nchunks == 0) {
                        s->t_start = s->t_last = clock_usec(CLOCK_MONOTONIC);
                        send_set_state(s, SEND_VERIFYING);
                        job_set_state(job, CTL_JOB_VERIFYING);
                        send_post_end(s);
                        return;
                }
                send_pump(s);
                return;
        case WIRE_REFUSE:
                if (s->state != SEND_OFFERED)
                        break;
                send_fail(s, m->refuse.status, "refused by peer: %s%s%s", wire_status_str(m->refuse.status),
                          m->refuse.text[0] ? ": " : "", m->refuse.text);
                return;
        case WIRE_CREDIT:
                if (s->state == SEND_DATA)
                        send_pump(s);
                else if (s->state == SEND_VERIFYING && !s->end_posted)
                        send_post_end(s);
                return;
        case WIRE_RESULT:
                if (s->state != SEND_DATA && s->state != SEND_VERIFYING)
                        break;
                if (m->result.status == WIRE_OK && s->end_posted && s->next_done == s->nchunks) {
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
        struct sender *s = (struct sender *)c;
        uint64_t idx = wc->wr_id & ~CONN_WRID_CTRL;

        if (wc->status != IBV_WC_SUCCESS) {
                if (wc->status != IBV_WC_WR_FLUSH_ERR && s->state != SEND_CLOSING)
                        send_fail(s, WIRE_E_INTERNAL, "work completion: %s", ibv_wc_status_str(wc->status));
                if ((wc->wr_id & CONN_WRID_CTRL) && idx < CONN_CTRL_BUFS)
                        conn_ctrl_send_done(c, wc->wr_id);
                return;
        }
        if (!(wc->wr_id & CONN_WRID_CTRL)) {
                send_on_data_done(s, wc->wr_id);
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
                send_on_msg(s, &m);
        }
}

static void send_on_batch_end(struct conn *c)
{
        send_pump((struct sender *)c);
}

static void send_offer(struct sender *s, const void *pdata, size_t plen)
{
        struct daemon *d = s->conn.e->d;
        struct wire_msg m = { .type = WIRE_OFFER };
        struct wire_welcome w;
        int r;

        r = wire_decode_welcome(pdata, plen, &w);
        if (r < 0) {
                send_fail(s, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                          r == -EPROTONOSUPPORT ? "peer speaks protocol version %u" :
                          "peer's accept is not an rdmaxfer welcome", w.version);
                return;
        }
        if (w.credits == 0 || w.slot_size == 0) {
                send_fail(s, WIRE_E_PROTOCOL, "peer granted no credits");
                return;
        }
        if ((w.flags & WIRE_WELCOME_AUTH) && d->key.len == 0) {
                send_fail(s, WIRE_E_AUTH, "peer requires a pre-shared key and key_file is not set");
                return;
        }
        s->credits = w.credits;
        s->chunk = MIN(s->conn.e->slot_size, w.slot_size);
        s->nchunks = DIV_ROUND_UP(s->job->size, s->chunk);
        if (s->nchunks > UINT32_MAX) {
                send_fail(s, WIRE_E_TOO_LARGE, "file needs more than 2^32 chunks of %u bytes", s->chunk);
                return;
        }
        memcpy(s->nonce, w.nonce, sizeof(s->nonce));

        m.offer.transfer_id = s->job->id;
        m.offer.size = s->job->size;
        m.offer.chunk_size = s->chunk;
        snprintf(m.offer.name, sizeof(m.offer.name), "%s", s->job->name);
        if (d->key.len)
                auth_offer_mac(&d->key, s->nonce, &m.offer, m.offer.mac);
        r = conn_send_ctrl(&s->conn, &m);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "posting the offer: %s", strerror(-r));
                return;
        }
        s->credits--;
        send_set_state(s, SEND_OFFERED);
        send_arm_timer(s, SEND_OFFER_SEC);
}

static void send_connect(struct sender *s)
{
        struct engine *e = s->conn.e;
        struct rdma_conn_param param = { 0 };
        struct wire_hello h = { .magic = WIRE_MAGIC, .version = WIRE_VERSION };
        uint8_t hbuf[WIRE_HELLO_SIZE];
        int r;

        if (s->conn.id->verbs != e->verbs) {
                send_fail(s, WIRE_E_INTERNAL, "peer is reached through device %s, this daemon's ring is on %s",
                          ibv_get_device_name(s->conn.id->verbs->device),
                          ibv_get_device_name(e->verbs->device));
                return;
        }
        /* Room for every buffer it may grow to. */
        r = conn_setup_qp(&s->conn, s->hold.cap + CONN_CTRL_BUFS + 2, SEND_CTRL_RECVS + 1, SEND_CTRL_RECVS);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "setting up the queue pair: %s", strerror(-r));
                return;
        }
        wire_encode_hello(hbuf, &h);
        param.private_data = hbuf;
        param.private_data_len = sizeof(hbuf);
        param.rnr_retry_count = 7;
        param.retry_count = 7;
        if (rdma_connect(s->conn.id, &param)) {
                send_fail(s, WIRE_E_INTERNAL, "rdma_connect: %m");
                return;
        }
        send_set_state(s, SEND_CONNECTING);
}

static void send_on_cm(struct conn *c, enum rdma_cm_event_type type, int status,
                       const void *pdata, size_t plen)
{
        struct sender *s = (struct sender *)c;
        struct wire_reject rj = { 0 };

        if (s->state == SEND_CLOSING) {
                if (type == RDMA_CM_EVENT_DISCONNECTED || !s->established)
                        conn_reap(c);
                return;
        }
        switch (type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
                if (rdma_resolve_route(c->id, SEND_RESOLVE_MS))
                        send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_route: %m");
                return;
        case RDMA_CM_EVENT_ROUTE_RESOLVED:
                send_connect(s);
                return;
        case RDMA_CM_EVENT_ESTABLISHED:
                s->established = true;
                send_offer(s, pdata, plen);
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
                s->established = false;
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
        struct sender *s = (struct sender *)c;
        struct engine *e = c->e;
        struct job *job = s->job;

        for (struct sender **p = &e->senders; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        break;
                }
        ring_hold_leave(&s->hold, &e->send_ring);
        digest_deinit(&s->digest);
        if (s->timer)
                event_free(s->timer);
        send_bufs_free(s);
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

int engine_send(struct engine *e, struct job *job)
{
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        struct rdma_cm_id *id = NULL;
        struct sender *s;
        char port[8];
        int r;

        if (e->stopping)
                return -ESHUTDOWN;
        snprintf(port, sizeof(port), "%u", job->port ? job->port : e->d->cfg.port);
        r = getaddrinfo(job->host, port, &hints, &ai);
        if (r != 0)
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s) {
                freeaddrinfo(ai);
                return -ENOMEM;
        }
        s->digest = DIGEST_NULL;
        s->timer = evtimer_new(e->base, send_on_timer, s);
        if (!s->timer || digest_init(&s->digest) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        r = send_bufs_admit(s, &e->send_ring);
        if (r < 0)
                goto fail;
        s->signal_every = MAX(1u, e->send_ring.share / 4);

        if (rdma_create_id(e->ch, &id, NULL, RDMA_PS_TCP)) {
                r = -errno;
                ring_hold_leave(&s->hold, &e->send_ring);
                goto fail;
        }
        conn_init(&s->conn, e, &send_ops, id);
        s->job = job;
        job->sender = s;
        snprintf(s->conn.peer, sizeof(s->conn.peer), "%s", job->peer);
        s->next = e->senders;
        e->senders = s;
        job_set_state(job, CTL_JOB_CONNECTING);

        /* Leave from our own address, so the route uses the ring's device. */
        if (rdma_resolve_addr(id, e->have_src ? (struct sockaddr *)&e->src : NULL, ai->ai_addr,
                              SEND_RESOLVE_MS))
                send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_addr: %m");
        freeaddrinfo(ai);
        return 0;

fail:
        freeaddrinfo(ai);
        if (s->timer)
                event_free(s->timer);
        digest_deinit(&s->digest);
        send_bufs_free(s);
        free(s);
        return r;
}

void engine_cancel(struct engine *e, struct job *job)
{
        if (job->sender)
                sender_abort(job->sender, CTL_JOB_CANCELLED, WIRE_OK, "cancelled");
}
