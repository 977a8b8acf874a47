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
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "auth.h"
#include "clock.h"
#include "conn.h"
#include "daemon.h"
#include "digest.h"
#include "engine.h"
#include "engine-private.h"
#include "incoming.h"
#include "io.h"
#include "journal.h"
#include "log.h"
#include "name.h"
#include "recv.h"
#include "wire.h"

static const char *const recv_state_names[] = {
        [RECV_CONNECTING] = "connecting",
        [RECV_OFFER_WAIT] = "offer-wait",
        [RECV_DATA] = "data",
        [RECV_FINISHING] = "finishing",
        [RECV_CLOSING] = "closing",
};

static void recv_set_state(struct recv_xfer *x, enum recv_state state)
{
        static const uint8_t legal[] = {
                [RECV_CONNECTING] = 1u << RECV_OFFER_WAIT | 1u << RECV_CLOSING,
                [RECV_OFFER_WAIT] = 1u << RECV_DATA | 1u << RECV_CLOSING,
                [RECV_DATA] = 1u << RECV_FINISHING | 1u << RECV_CLOSING,
                [RECV_FINISHING] = 1u << RECV_CLOSING,
                [RECV_CLOSING] = 0,
        };

        if (x->state == state)
                return;
        if (!(legal[x->state] & (1u << state))) {
                log_err("%s: illegal receive state change %s -> %s", x->conn.peer,
                        recv_state_names[x->state], recv_state_names[state]);
                abort();
        }
        log_debug("%s: receive %s -> %s", x->conn.peer, recv_state_names[x->state],
                  recv_state_names[state]);
        x->state = state;
}

struct recv_xfer *recv_next(struct recv_xfer *x)
{
        return x->next;
}

unsigned int engine_recv_active(const struct engine *e)
{
        unsigned int n = 0;

        for (const struct recv_xfer *x = e->recvs; x; x = x->next)
                n += x->state == RECV_DATA || x->state == RECV_FINISHING;
        return n;
}

uint64_t engine_recv_rate(const struct engine *e)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC), sum = 0;

        /* Rate since the previous call (STATUS= asks about once a second). */
        for (struct recv_xfer *x = e->recvs; x; x = x->next) {
                if (x->state != RECV_DATA)
                        continue;
                if (x->rate_t && now > x->rate_t)
                        sum += (x->bytes_recv - x->rate_bytes) * 1000000u / (now - x->rate_t);
                x->rate_bytes = x->bytes_recv;
                x->rate_t = now;
        }
        return sum;
}

int recv_slots_admit(struct recv_xfer *x, struct ring *ring)
{
        x->rs = calloc(ring->count, sizeof(*x->rs));
        if (!x->rs)
                return -ENOMEM;
        return ring_hold_admit(&x->hold, ring);
}

void recv_slots_free(struct recv_xfer *x)
{
        ring_hold_free(&x->hold);
        free(x->rs);
}

static uint8_t *recv_slot_mem(struct recv_xfer *x, uint32_t i)
{
        return x->conn.e->ring_mem + (size_t)x->hold.slot[i] * x->conn.e->slot_size;
}

int recv_post_slot(struct recv_xfer *x, uint32_t i)
{
        struct ibv_recv_wr wr = { 0 }, *bad;
        struct ibv_sge sge;

        sge.addr = (uintptr_t)recv_slot_mem(x, i);
        sge.length = x->conn.e->slot_size;
        sge.lkey = x->conn.e->ring_mr->lkey;
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(x->conn.id->qp, &wr, &bad))
                return -errno ?: -EIO;
        return 0;
}

static void recv_log(struct recv_xfer *x)
{
        char hex[DIGEST_HEX_SIZE];
        uint8_t d[WIRE_DIGEST_SIZE];
        uint64_t usec = x->t_last > x->t_start ? x->t_last - x->t_start : 0;

        /* Connections that never made an offer are not transfers. */
        if (x->logged || !x->offer.name[0])
                return;
        x->logged = true;
        if (x->status == WIRE_OK) {
                digest_final(&x->digest, d);
                digest_hex(d, hex);
        }
        journal_xfer(&(struct journal_xfer){
                .direction = "recv",
                .id = x->offer.transfer_id,
                .peer = x->conn.peer,
                .file = x->offer.name,
                .bytes = x->status == WIRE_OK ? x->offer.size : x->bytes_recv,
                .usec = usec,
                .status = x->status,
                .text = x->text[0] ? x->text : NULL,
                .digest = x->status == WIRE_OK ? hex : NULL,
        });
}

void recv_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct recv_xfer *x = arg;

        if (x->state == RECV_OFFER_WAIT || x->state == RECV_CONNECTING) {
                recv_abort(x, WIRE_E_PROTOCOL, "no offer within 30 s");
                return;
        }
        if (x->state == RECV_FINISHING) {
                struct timeval tv = { .tv_sec = RECV_STALL_SEC };

                /* fsync of a large file can take a while; that is not a stall. */
                evtimer_add(x->timer, &tv);
                return;
        }
        if (x->state == RECV_DATA) {
                struct timeval tv = { .tv_sec = RECV_STALL_SEC };

                if (x->bytes_recv == x->stall_mark) {
                        recv_abort(x, WIRE_E_PROTOCOL, "sender stalled for 60 s");
                        return;
                }
                x->stall_mark = x->bytes_recv;
                evtimer_add(x->timer, &tv);
                return;
        }
        /* Lingering after the verdict: the peer did not hang up. */
        conn_disconnect(&x->conn);
        conn_reap(&x->conn);
}

void recv_arm_timer(struct recv_xfer *x, int sec)
{
        struct timeval tv = { .tv_sec = sec };

        if (x->timer)
                evtimer_add(x->timer, &tv);
}

/* Send the verdict (REFUSE before data, RESULT after), then wait for the hang-up. */
static void recv_verdict(struct recv_xfer *x, unsigned int status, const char *text)
{
        struct wire_msg m = { 0 };
        bool refuse = x->state == RECV_OFFER_WAIT;
        int r;

        x->status = status;
        snprintf(x->text, sizeof(x->text), "%s", text ?: "");
        if (refuse) {
                m.type = WIRE_REFUSE;
                m.refuse.status = status;
                snprintf(m.refuse.text, sizeof(m.refuse.text), "%s", x->text);
        } else {
                m.type = WIRE_RESULT;
                m.result.status = status;
                m.result.bytes = status == WIRE_OK ? x->offer.size : x->bytes_recv;
                m.result.usec = x->t_last > x->t_start ? x->t_last - x->t_start : 0;
                snprintf(m.result.text, sizeof(m.result.text), "%s", x->text);
        }
        if (x->state != RECV_CLOSING)
                recv_set_state(x, RECV_CLOSING);
        r = conn_send_ctrl(&x->conn, &m);
        if (r < 0) {
                log_warning("%s: cannot send verdict: %s", x->conn.peer, strerror(-r));
                conn_disconnect(&x->conn);
        }
        recv_log(x);
        recv_arm_timer(x, RECV_LINGER_SEC);
}

void recv_abort(struct recv_xfer *x, unsigned int status, const char *text)
{
        if (x->state == RECV_CLOSING)
                return;
        if (status == WIRE_OK)
                status = WIRE_E_INTERNAL;
        if (x->offer.name[0])
                log_warning("%s: receive of %s failed: %s%s%s", x->conn.peer, x->offer.name,
                            wire_status_str(status), text ? ": " : "", text ?: "");
        else
                log_notice("%s: connection refused: %s%s%s", x->conn.peer, wire_status_str(status),
                           text ? ": " : "", text ?: "");
        if (x->state == RECV_CONNECTING) {
                x->status = status;
                recv_set_state(x, RECV_CLOSING);
                conn_disconnect(&x->conn);
                conn_reap(&x->conn);
                return;
        }
        recv_verdict(x, status, text);
}

/* Lost the connection (or told to drop it) without a verdict on the wire. */
static void recv_lost(struct recv_xfer *x, const char *why)
{
        if (x->state != RECV_CLOSING) {
                x->status = WIRE_E_PROTOCOL;
                snprintf(x->text, sizeof(x->text), "%s", why);
                if (x->offer.name[0])
                        log_warning("%s: receive of %s aborted: %s; nothing published",
                                    x->conn.peer, x->offer.name, why);
                recv_set_state(x, RECV_CLOSING);
                recv_log(x);
        }
        conn_disconnect(&x->conn);
        conn_reap(&x->conn);
}

static void recv_flush_credits(struct recv_xfer *x, bool force)
{
        struct wire_msg m = { .type = WIRE_CREDIT };

        if (x->state != RECV_DATA || x->credits_pending == 0)
                return;
        /* Batched, but never in batches as large as what the sender holds
         * when it is down to a few slots: it would wait for ever. */
        if (!force && x->credits_pending < MAX(1u, MIN(x->conn.e->ring.share, x->hold.held) / 4))
                return;
        /* Keep one buffer for the verdict. */
        if (conn_ctrl_free(&x->conn) < 2)
                return;
        m.credits = x->credits_pending;
        if (conn_send_ctrl(&x->conn, &m) == 0)
                x->credits_pending = 0;
}

static struct recv_xfer *recv_of_file_req(struct io_req *req)
{
        return (struct recv_xfer *)((char *)req - offsetof(struct recv_xfer, file_req));
}

/* The space is reserved (or the file system cannot reserve): accept. */
static void recv_accept(struct recv_xfer *x, int64_t res)
{
        const struct wire_offer *o = &x->offer;
        struct wire_msg m = { .type = WIRE_ACCEPT };
        enum incoming_verdict iv = incoming_reserve_verdict((int)res);
        char text[WIRE_TEXT_MAX + 1];
        int r;

        if (iv != INCOMING_OK) {
                snprintf(text, sizeof(text), "reserving %" PRIu64 " bytes: %s", o->size,
                         strerror((int)-res));
                recv_abort(x, iv == INCOMING_NO_SPACE ? WIRE_E_NO_SPACE : WIRE_E_IO, text);
                return;
        }
        r = digest_init(&x->digest);
        if (r < 0) {
                recv_abort(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }

        x->nchunks = DIV_ROUND_UP(o->size, o->chunk_size);
        recv_set_state(x, RECV_DATA);
        m.credits = x->credits_pending;
        r = conn_send_ctrl(&x->conn, &m);
        if (r < 0) {
                recv_abort(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        x->credits_pending = 0;
        x->t_start = x->t_last = clock_usec(CLOCK_MONOTONIC);
        recv_arm_timer(x, RECV_STALL_SEC);
        log_info("%s: receiving %s (%" PRIu64 " bytes, %" PRIu64 " chunks of %u, transfer %" PRIu64 ")",
                 x->conn.peer, o->name, o->size, x->nchunks, o->chunk_size, o->transfer_id);
}

static void recv_on_reserved(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        conn_unhold(&x->conn);
        if (x->conn.reaping || x->state != RECV_OFFER_WAIT)
                return;
        recv_accept(x, res);
}

static void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o)
{
        struct daemon *d = x->conn.e->d;
        enum incoming_verdict iv;
        enum name_verdict nv;
        char text[WIRE_TEXT_MAX + 1];
        int dirfd = x->conn.e->incoming_fd, r;

        x->offer = *o;
        nv = name_check(o->name, strlen(o->name));
        if (nv != NAME_OK) {
                /* Don't echo a hostile name into logs as if it were a file. */
                snprintf(text, sizeof(text), "%s", name_verdict_str(nv));
                snprintf(x->offer.name, sizeof(x->offer.name), "(rejected name)");
                recv_abort(x, WIRE_E_NAME, text);
                return;
        }
        if (d->key.len > 0 && auth_offer_verify(&d->key, x->nonce, o) < 0) {
                recv_abort(x, WIRE_E_AUTH, "pre-shared key proof does not match");
                return;
        }
        if (o->chunk_size == 0 || o->chunk_size > x->conn.e->slot_size) {
                recv_abort(x, WIRE_E_PROTOCOL, "chunk size out of range");
                return;
        }
        if (d->cfg.max_file_size && o->size > d->cfg.max_file_size) {
                snprintf(text, sizeof(text), "%" PRIu64 " bytes is over the limit of %" PRIu64,
                         o->size, d->cfg.max_file_size);
                recv_abort(x, WIRE_E_TOO_LARGE, text);
                return;
        }
        r = incoming_exists(dirfd, x->offer.name);
        if (r > 0 && !d->cfg.overwrite) {
                recv_abort(x, WIRE_E_EXISTS, NULL);
                return;
        }
        if (r < 0) {
                snprintf(text, sizeof(text), "checking name: %s", strerror(-r));
                recv_abort(x, WIRE_E_IO, text);
                return;
        }
        x->fd = incoming_open(dirfd, o->size, &iv);
        if (x->fd < 0) {
                snprintf(text, sizeof(text), "%" PRIu64 " bytes: %s", o->size, strerror(-x->fd));
                x->fd = -1;
                recv_abort(x, iv == INCOMING_NO_SPACE ? WIRE_E_NO_SPACE : WIRE_E_IO, text);
                return;
        }
        evtimer_del(x->timer);
        if (o->size == 0) {
                recv_accept(x, 0);
                return;
        }
        /* Reserving can mean allocating (tmpfs zeroes pages): not on the loop. */
        x->file_req.done = recv_on_reserved;
        r = io_fallocate(x->conn.e->io, &x->file_req, x->fd, o->size);
        if (r < 0) {
                recv_abort(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        conn_hold(&x->conn);
}

static void recv_finish(struct recv_xfer *x);

static void recv_on_fsync(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct daemon *d = x->conn.e->d;
        char text[WIRE_TEXT_MAX + 1];
        int r;

        conn_unhold(&x->conn);
        if (x->state != RECV_FINISHING)
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "fsync: %s", strerror((int)-res));
                recv_abort(x, WIRE_E_IO, text);
                return;
        }

        r = incoming_publish(x->conn.e->incoming_fd, x->fd, x->offer.name, d->cfg.overwrite,
                             x->offer.transfer_id);
        if (r == -EEXIST) {
                recv_abort(x, WIRE_E_EXISTS, "appeared during the transfer");
                return;
        }
        if (r < 0) {
                snprintf(text, sizeof(text), "publishing: %s", strerror(-r));
                recv_abort(x, WIRE_E_IO, text);
                return;
        }
        log_info("%s: received %s (%" PRIu64 " bytes)", x->conn.peer, x->offer.name, x->offer.size);
        recv_verdict(x, WIRE_OK, NULL);
}

static void recv_finish(struct recv_xfer *x)
{
        uint8_t d[WIRE_DIGEST_SIZE];
        int r;

        if (x->state != RECV_FINISHING || x->writes > 0)
                return;
        if (x->bytes_written != x->offer.size) {
                recv_abort(x, WIRE_E_SIZE, "short write");
                return;
        }
        digest_final(&x->digest, d);
        if (memcmp(d, x->end.digest, sizeof(d)) != 0) {
                recv_abort(x, WIRE_E_CHECKSUM, NULL);
                return;
        }
        r = io_fsync(x->conn.e->io, &x->file_req, x->fd);
        if (r < 0) {
                recv_abort(x, WIRE_E_IO, strerror(-r));
                return;
        }
        x->file_req.done = recv_on_fsync;
        conn_hold(&x->conn);
}

static void recv_on_end(struct recv_xfer *x, const struct wire_end *end)
{
        if (x->next_seq != x->nchunks || end->bytes != x->offer.size || x->bytes_recv != x->offer.size) {
                recv_abort(x, WIRE_E_SIZE, "sender's byte count differs");
                return;
        }
        x->end = *end;
        recv_set_state(x, RECV_FINISHING);
        recv_finish(x);
}

/*
 * Borrow one more slot while the ring has some to lend and this transfer
 * has more chunks to come than slots posted: one per completed write, so a
 * transfer grows only as fast as it actually uses what it has.
 */
static void recv_grow(struct recv_xfer *x)
{
        struct ring *ring = &x->conn.e->ring;
        uint32_t i;

        if (x->state != RECV_DATA || x->nchunks - x->next_seq <= x->hold.held ||
            !ring_hold_grow(&x->hold, ring, &i))
                return;
        if (recv_post_slot(x, i) < 0) {
                ring_hold_release(&x->hold, ring, i);
                return;
        }
        x->credits_pending++;
}

static void recv_on_write(struct io_req *req, int64_t res)
{
        struct recv_slot *rs = (struct recv_slot *)req;
        struct recv_xfer *x = rs->x;
        uint32_t i = rs - x->rs;

        x->writes--;
        conn_unhold(&x->conn);
        if (x->conn.reaping || x->state == RECV_CLOSING)
                return;
        if (res < 0) {
                char text[WIRE_TEXT_MAX + 1];

                snprintf(text, sizeof(text), "write at offset %" PRIu64 ": %s", req->off,
                         strerror((int)-res));
                recv_abort(x, res == -ENOSPC ? WIRE_E_NO_SPACE : WIRE_E_IO, text);
                return;
        }
        x->bytes_written += rs->len;
        if (ring_hold_over(&x->hold, &x->conn.e->ring)) {
                /* Lent while we were alone: give it back, without a credit. */
                ring_hold_release(&x->hold, &x->conn.e->ring, i);
        } else {
                if (recv_post_slot(x, i) < 0) {
                        recv_abort(x, WIRE_E_INTERNAL, "cannot repost a receive");
                        return;
                }
                x->credits_pending++;
                recv_grow(x);
        }
        if (x->state == RECV_FINISHING)
                recv_finish(x);
        /* Credits go out in wc_batch_end or here, batched. */
        recv_flush_credits(x, false);
}

static void recv_on_data(struct recv_xfer *x, uint32_t i, uint32_t seq, uint32_t len)
{
        struct recv_slot *rs = &x->rs[i];
        uint64_t off = (uint64_t)seq * x->offer.chunk_size;
        uint64_t want;
        int r;

        if (x->state != RECV_DATA) {
                recv_abort(x, WIRE_E_PROTOCOL, "data outside a transfer");
                return;
        }
        want = MIN((uint64_t)x->offer.chunk_size, x->offer.size - MIN(off, x->offer.size));
        if (seq != (uint32_t)x->next_seq || x->next_seq >= x->nchunks || len != want) {
                recv_abort(x, WIRE_E_PROTOCOL, "data chunk out of sequence or of wrong length");
                return;
        }
        x->next_seq++;
        x->bytes_recv += len;
        x->t_last = clock_usec(CLOCK_MONOTONIC);

        rs->x = x;
        rs->len = len;
        rs->io.done = recv_on_write;
        r = io_write(x->conn.e->io, &rs->io, x->fd, recv_slot_mem(x, i), len, off);
        if (r < 0) {
                recv_abort(x, WIRE_E_IO, strerror(-r));
                return;
        }
        x->writes++;
        conn_hold(&x->conn);
        /* Hash while the kernel copies the slot out: both only read it, and
         * its completion (which frees the slot) is handled on this loop later. */
        digest_update(&x->digest, recv_slot_mem(x, i), len);
}

static void recv_on_ctrl(struct recv_xfer *x, uint32_t i, uint32_t len)
{
        struct wire_msg m;
        int r;

        r = wire_decode(recv_slot_mem(x, i), len, &m);
        if (r < 0) {
                recv_abort(x, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                           "undecodable control message");
                return;
        }
        /* A control message used a slot too: it goes straight back. */
        if (recv_post_slot(x, i) < 0) {
                recv_abort(x, WIRE_E_INTERNAL, "cannot repost a receive");
                return;
        }
        x->credits_pending++;

        /* The first message can beat our own ESTABLISHED event. */
        if (x->state == RECV_CONNECTING)
                recv_set_state(x, RECV_OFFER_WAIT);
        if (m.type == WIRE_OFFER && x->state == RECV_OFFER_WAIT && !x->offer.name[0])
                recv_on_offer(x, &m.offer);
        else if (m.type == WIRE_END && x->state == RECV_DATA)
                recv_on_end(x, &m.end);
        else
                recv_abort(x, WIRE_E_PROTOCOL, "unexpected control message");
}

static void recv_on_wc(struct conn *c, const struct ibv_wc *wc)
{
        struct recv_xfer *x = (struct recv_xfer *)c;

        if (wc->wr_id & CONN_WRID_CTRL) {
                conn_ctrl_send_done(c, wc->wr_id);
                if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
                        recv_lost(x, ibv_wc_status_str(wc->status));
                return;
        }
        if (wc->status != IBV_WC_SUCCESS) {
                /* Flushes follow the first real error or our own teardown. */
                if (wc->status != IBV_WC_WR_FLUSH_ERR) {
                        char text[WIRE_TEXT_MAX + 1];

                        snprintf(text, sizeof(text), "receive completion: %s",
                                 ibv_wc_status_str(wc->status));
                        recv_lost(x, text);
                }
                return;
        }
        if (x->state == RECV_CLOSING)
                return;
        if (wc->wr_id >= x->hold.cap || x->hold.slot[wc->wr_id] == RING_NO_SLOT) {
                recv_lost(x, "completion for an unknown slot");
                return;
        }
        if (wc->wc_flags & IBV_WC_WITH_IMM)
                recv_on_data(x, wc->wr_id, be32toh(wc->imm_data), wc->byte_len);
        else
                recv_on_ctrl(x, wc->wr_id, wc->byte_len);
}

static void recv_on_batch_end(struct conn *c)
{
        recv_flush_credits((struct recv_xfer *)c, false);
}

static void recv_on_cm(struct conn *c, enum rdma_cm_event_type type, int status,
                       const void *pdata, size_t plen)
{
        struct recv_xfer *x = (struct recv_xfer *)c;

        switch (type) {
        case RDMA_CM_EVENT_ESTABLISHED:
                if (x->state == RECV_CONNECTING)
                        recv_set_state(x, RECV_OFFER_WAIT);
                break;
        case RDMA_CM_EVENT_DISCONNECTED:
                recv_lost(x, "peer disconnected");
                break;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
                recv_lost(x, "RDMA device removed");
                break;
        default:
                /* CONNECT_ERROR, UNREACHABLE, REJECTED (accept failed) ... */
                recv_lost(x, rdma_event_str(type));
                break;
        }
}

static void recv_on_reaped(struct conn *c)
{
        struct recv_xfer *x = (struct recv_xfer *)c;
        struct engine *e = c->e;

        for (struct recv_xfer **p = &e->recvs; *p; p = &(*p)->next)
                if (*p == x) {
                        *p = x->next;
                        break;
                }
        /* Only admitted connections are ever reaped. */
        ring_hold_leave(&x->hold, &e->ring);
        /* Closing the O_TMPFILE without linking it frees its blocks. */
        safe_close(x->fd);
        digest_deinit(&x->digest);
        if (x->timer)
                event_free(x->timer);
        recv_slots_free(x);
        free(x);
        engine_conn_gone(e);
}

const struct conn_ops recv_ops = {
        .cm_event = recv_on_cm,
        .wc = recv_on_wc,
        .wc_batch_end = recv_on_batch_end,
        .reaped = recv_on_reaped,
};
