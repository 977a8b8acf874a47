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
#include "recv.h"
#include "wire.h"

static const char *const recv_state_names[] = {
        [RECV_CONNECTING] = "connecting",
        [RECV_OFFER_WAIT] = "offer-wait",
        [RECV_DATA] = "data",
        [RECV_FINISHING] = "finishing",
        [RECV_CLOSING] = "closing",
};

void recv_set_state(struct recv_xfer *x, enum recv_state state)
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
                log_err("%s: illegal receive state change %s -> %s", x->peer,
                        recv_state_names[x->state], recv_state_names[state]);
                abort();
        }
        log_debug("%s: receive %s -> %s", x->peer, recv_state_names[x->state],
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

struct recv_lane *recv_lane_new(struct recv_xfer *x, unsigned int idx, int *err)
{
        struct ring *ring = &x->e->ring;
        struct recv_lane *l;
        int r;

        l = calloc(1, sizeof(*l));
        if (!l) {
                *err = -ENOMEM;
                return NULL;
        }
        l->x = x;
        l->idx = idx;
        l->digest = DIGEST_NULL;
        l->rs = calloc(ring->count, sizeof(*l->rs));
        r = l->rs ? digest_init(&l->digest) : -ENOMEM;
        if (r == 0)
                r = idx == 0 ? ring_hold_admit(&l->hold, ring) : ring_hold_join(&l->hold, ring);
        if (r < 0 || (idx == 0 && r == 0)) {
                *err = r;
                recv_lane_free(l);
                return NULL;
        }
        ring_hold_set_lanes(&l->hold, x->nlanes);
        return l;
}

void recv_lane_free(struct recv_lane *l)
{
        if (!l)
                return;
        digest_deinit(&l->digest);
        ring_hold_free(&l->hold);
        free(l->rs);
        free(l);
}

static uint8_t *recv_slot_mem(struct recv_lane *l, uint32_t i)
{
        return l->x->e->ring_mem + (size_t)l->hold.slot[i] * l->x->e->slot_size;
}

int recv_post_slot(struct recv_lane *l, uint32_t i)
{
        struct ibv_recv_wr wr = { 0 }, *bad;
        struct ibv_sge sge;

        sge.addr = (uintptr_t)recv_slot_mem(l, i);
        sge.length = l->x->e->slot_size;
        sge.lkey = l->x->e->ring_mr->lkey;
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(l->conn.id->qp, &wr, &bad))
                return -errno ?: -EIO;
        return 0;
}

static void recv_log(struct recv_xfer *x)
{
        char hex[DIGEST_HEX_SIZE];
        uint64_t usec = x->t_last > x->t_start ? x->t_last - x->t_start : 0;

        /* Connections that never made an offer are not transfers. */
        if (x->logged || !x->offer.name[0])
                return;
        x->logged = true;
        if (x->status == WIRE_OK)
                digest_hex(x->digest, hex);
        journal_xfer(&(struct journal_xfer){
                .direction = "recv",
                .id = x->offer.transfer_id,
                .peer = x->peer,
                .file = x->offer.name,
                .bytes = x->status == WIRE_OK ? x->offer.size : x->bytes_recv,
                .usec = usec,
                .status = x->status,
                .text = x->text[0] ? x->text : NULL,
                .digest = x->status == WIRE_OK ? hex : NULL,
                .lanes = x->t_start ? x->nlanes : 0,
        });
}

/* Hang up every lane, and reap each once it is down. */
static void recv_drop(struct recv_xfer *x)
{
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                struct recv_lane *l = x->lane[k];

                if (!l)
                        continue;
                conn_disconnect(&l->conn);
                conn_reap(&l->conn);
        }
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
                        recv_abort(x, WIRE_E_PROTOCOL, x->nlive < x->nlanes ?
                                   "granted lanes did not connect within 60 s" :
                                   "sender stalled for 60 s");
                        return;
                }
                x->stall_mark = x->bytes_recv;
                evtimer_add(x->timer, &tv);
                return;
        }
        /* Lingering after the verdict: the peer did not hang up. */
        recv_drop(x);
}

void recv_arm_timer(struct recv_xfer *x, int sec)
{
        struct timeval tv = { .tv_sec = sec };

        if (x->timer)
                evtimer_add(x->timer, &tv);
}

/* Send the verdict (REFUSE before data, RESULT after) on every lane, then
 * wait for the hang-up. */
static void recv_verdict(struct recv_xfer *x, unsigned int status, const char *text)
{
        struct wire_msg m = { 0 };
        bool refuse = x->state == RECV_OFFER_WAIT;

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
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                struct recv_lane *l = x->lane[k];
                int r;

                if (!l || l->conn.reaping)
                        continue;
                r = conn_send_ctrl(&l->conn, &m);
                if (r < 0) {
                        log_warning("%s: cannot send verdict: %s", x->peer, strerror(-r));
                        conn_disconnect(&l->conn);
                }
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
                log_warning("%s: receive of %s failed: %s%s%s", x->peer, x->offer.name,
                            wire_status_str(status), text ? ": " : "", text ?: "");
        else
                log_notice("%s: connection refused: %s%s%s", x->peer, wire_status_str(status),
                           text ? ": " : "", text ?: "");
        if (x->state == RECV_CONNECTING) {
                x->status = status;
                recv_set_state(x, RECV_CLOSING);
                recv_drop(x);
                return;
        }
        recv_verdict(x, status, text);
}

/* Lost a lane (or told to drop it) without a verdict on the wire: the
 * transfer is lost with it. */
static void recv_lost(struct recv_lane *l, const char *why)
{
        struct recv_xfer *x = l->x;

        if (x->state != RECV_CLOSING) {
                x->status = WIRE_E_PROTOCOL;
                if (x->nlanes > 1)
                        snprintf(x->text, sizeof(x->text), "lane %u: %s", l->idx, why);
                else
                        snprintf(x->text, sizeof(x->text), "%s", why);
                if (x->offer.name[0])
                        log_warning("%s: receive of %s aborted: %s; nothing published",
                                    x->peer, x->offer.name, x->text);
                recv_set_state(x, RECV_CLOSING);
                recv_log(x);
        }
        recv_drop(x);
}

static void recv_flush_credits(struct recv_lane *l, bool force)
{
        struct wire_msg m = { .type = WIRE_CREDIT };

        if (l->x->state != RECV_DATA || l->credits_pending == 0)
                return;
        /* Batched, but never in batches as large as what the sender holds
         * when it is down to a few slots: it would wait for ever. */
        if (!force && l->credits_pending < MAX(1u, MIN(l->x->e->ring.share, l->hold.held) / 4))
                return;
        /* Keep one buffer for the verdict. */
        if (conn_ctrl_free(&l->conn) < 2)
                return;
        m.credits = l->credits_pending;
        if (conn_send_ctrl(&l->conn, &m) == 0)
                l->credits_pending = 0;
}

/*
 * Borrow more slots while the ring has some to lend and this lane has more
 * chunks to come than slots posted: at most @max at a time (one per
 * completed write, so a transfer grows only as fast as it actually uses
 * what it has).
 */
static void recv_lane_grow_by(struct recv_lane *l, unsigned int max)
{
        struct ring *ring = &l->x->e->ring;
        uint32_t i;

        for (unsigned int n = 0; n < max; n++) {
                if (l->x->state != RECV_DATA || l->ended || l->conn.reaping ||
                    l->end_seq - l->next_seq <= l->hold.held || !ring_hold_grow(&l->hold, ring, &i))
                        return;
                if (recv_post_slot(l, i) < 0) {
                        ring_hold_release(&l->hold, ring, i);
                        return;
                }
                l->credits_pending++;
        }
}

void recv_lane_grow(struct recv_lane *l)
{
        recv_lane_grow_by(l, UINT_MAX);
}

/*
 * A lane that joined when the ring had nothing to lend holds no slot, so no
 * write of its own will ever make it grow: after slots come back to the
 * ring (a release, a lane gone; nothing else frees one), offer each such
 * lane one.
 */
static void recv_feed_starved(struct engine *e)
{
        for (struct recv_xfer *x = e->recvs; x; x = x->next) {
                if (x->state != RECV_DATA)
                        continue;
                for (unsigned int k = 0; k < x->nlanes; k++) {
                        struct recv_lane *l = x->lane[k];

                        if (!l || l->hold.held > 0)
                                continue;
                        recv_lane_grow_by(l, 1);
                        recv_flush_credits(l, true);
                }
        }
}

struct recv_xfer *recv_of_file_req(struct io_req *req)
{
        return (struct recv_xfer *)((char *)req - offsetof(struct recv_xfer, file_req));
}

static void recv_on_fsync(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct daemon *d = x->e->d;
        char text[WIRE_TEXT_MAX + 1];
        int r;

        conn_unhold(&x->lane[0]->conn);
        if (x->state != RECV_FINISHING)
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "fsync: %s", strerror((int)-res));
                recv_abort(x, WIRE_E_IO, text);
                return;
        }

        r = incoming_publish(x->e->incoming_fd, x->fd, x->offer.name, d->cfg.overwrite,
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
        log_info("%s: received %s (%" PRIu64 " bytes)", x->peer, x->offer.name, x->offer.size);
        recv_verdict(x, WIRE_OK, NULL);
}

static void recv_finish(struct recv_xfer *x)
{
        uint8_t d[WIRE_LANES_MAX][WIRE_DIGEST_SIZE];
        int r;

        if (x->state != RECV_FINISHING || x->writes > 0)
                return;
        if (x->bytes_written != x->offer.size) {
                recv_abort(x, WIRE_E_SIZE, "short write");
                return;
        }
        for (unsigned int k = 0; k < x->nlanes; k++) {
                digest_final(&x->lane[k]->digest, d[k]);
                if (memcmp(d[k], x->lane[k]->end.digest, WIRE_DIGEST_SIZE) != 0) {
                        recv_abort(x, WIRE_E_CHECKSUM, NULL);
                        return;
                }
        }
        digest_lanes(d, x->nlanes, x->digest);
        r = io_fsync(x->e->io, &x->file_req, x->fd);
        if (r < 0) {
                recv_abort(x, WIRE_E_IO, strerror(-r));
                return;
        }
        x->file_req.done = recv_on_fsync;
        conn_hold(&x->lane[0]->conn);
}

static void recv_on_end(struct recv_lane *l, const struct wire_end *end)
{
        struct recv_xfer *x = l->x;

        if (l->ended || l->next_seq != l->end_seq ||
            end->bytes != wire_run_bytes(x->offer.size, x->offer.chunk_size, l->first_seq, l->end_seq)) {
                recv_abort(x, WIRE_E_SIZE, "sender's byte count differs");
                return;
        }
        l->end = *end;
        l->ended = true;
        if (++x->nended < x->nlanes)
                return;
        if (x->bytes_recv != x->offer.size) {
                recv_abort(x, WIRE_E_SIZE, "sender's byte count differs");
                return;
        }
        recv_set_state(x, RECV_FINISHING);
        recv_finish(x);
}

static void recv_on_write(struct io_req *req, int64_t res)
{
        struct recv_slot *rs = (struct recv_slot *)req;
        struct recv_lane *l = rs->l;
        struct recv_xfer *x = l->x;
        uint32_t i = rs - l->rs;

        x->writes--;
        conn_unhold(&l->conn);
        if (l->conn.reaping || x->state == RECV_CLOSING)
                return;
        if (res < 0) {
                char text[WIRE_TEXT_MAX + 1];

                snprintf(text, sizeof(text), "write at offset %" PRIu64 ": %s", req->off,
                         strerror((int)-res));
                recv_abort(x, res == -ENOSPC ? WIRE_E_NO_SPACE : WIRE_E_IO, text);
                return;
        }
        x->bytes_written += rs->len;
        if (ring_hold_over(&l->hold, &x->e->ring)) {
                /* Lent while it was alone: give it back, without a credit. */
                ring_hold_release(&l->hold, &x->e->ring, i);
                recv_feed_starved(x->e);
        } else {
                if (recv_post_slot(l, i) < 0) {
                        recv_abort(x, WIRE_E_INTERNAL, "cannot repost a receive");
                        return;
                }
                l->credits_pending++;
                recv_lane_grow_by(l, 1);
        }
        if (x->state == RECV_FINISHING)
                recv_finish(x);
        /* Credits go out in wc_batch_end or here, batched. */
        recv_flush_credits(l, false);
}

static void recv_on_data(struct recv_lane *l, uint32_t i, uint32_t seq, uint32_t len)
{
        struct recv_xfer *x = l->x;
        struct recv_slot *rs = &l->rs[i];
        uint64_t off = (uint64_t)seq * x->offer.chunk_size;
        uint64_t want;
        int r;

        if (x->state != RECV_DATA) {
                recv_abort(x, WIRE_E_PROTOCOL, "data outside a transfer");
                return;
        }
        want = MIN((uint64_t)x->offer.chunk_size, x->offer.size - MIN(off, x->offer.size));
        if (seq != (uint32_t)l->next_seq || l->next_seq >= l->end_seq || len != want) {
                recv_abort(x, WIRE_E_PROTOCOL, "data chunk out of sequence or of wrong length");
                return;
        }
        l->next_seq++;
        x->bytes_recv += len;
        x->t_last = clock_usec(CLOCK_MONOTONIC);

        rs->l = l;
        rs->len = len;
        rs->io.done = recv_on_write;
        r = io_write(x->e->io, &rs->io, x->fd, recv_slot_mem(l, i), len, off);
        if (r < 0) {
                recv_abort(x, WIRE_E_IO, strerror(-r));
                return;
        }
        x->writes++;
        conn_hold(&l->conn);
        /* Hash while the kernel copies the slot out: both only read it, and
         * its completion (which frees the slot) is handled on this loop later. */
        digest_update(&l->digest, recv_slot_mem(l, i), len);
}

static void recv_on_ctrl(struct recv_lane *l, uint32_t i, uint32_t len)
{
        struct recv_xfer *x = l->x;
        struct wire_msg m;
        int r;

        r = wire_decode(recv_slot_mem(l, i), len, &m);
        if (r < 0) {
                recv_abort(x, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                           "undecodable control message");
                return;
        }
        /* A control message used a slot too: it goes straight back. */
        if (recv_post_slot(l, i) < 0) {
                recv_abort(x, WIRE_E_INTERNAL, "cannot repost a receive");
                return;
        }
        l->credits_pending++;

        /* The first message can beat our own ESTABLISHED event. */
        if (x->state == RECV_CONNECTING)
                recv_set_state(x, RECV_OFFER_WAIT);
        if (m.type == WIRE_OFFER && l->idx == 0 && x->state == RECV_OFFER_WAIT && !x->offer.name[0])
                recv_on_offer(x, &m.offer);
        else if (m.type == WIRE_END && x->state == RECV_DATA)
                recv_on_end(l, &m.end);
        else
                recv_abort(x, WIRE_E_PROTOCOL, "unexpected control message");
}

static void recv_on_wc(struct conn *c, const struct ibv_wc *wc)
{
        struct recv_lane *l = (struct recv_lane *)c;

        if (wc->wr_id & CONN_WRID_CTRL) {
                conn_ctrl_send_done(c, wc->wr_id);
                if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
                        recv_lost(l, ibv_wc_status_str(wc->status));
                return;
        }
        if (wc->status != IBV_WC_SUCCESS) {
                /* Flushes follow the first real error or our own teardown. */
                if (wc->status != IBV_WC_WR_FLUSH_ERR) {
                        char text[WIRE_TEXT_MAX + 1];

                        snprintf(text, sizeof(text), "receive completion: %s",
                                 ibv_wc_status_str(wc->status));
                        recv_lost(l, text);
                }
                return;
        }
        if (l->x->state == RECV_CLOSING)
                return;
        if (wc->wr_id >= l->hold.cap || l->hold.slot[wc->wr_id] == RING_NO_SLOT) {
                recv_lost(l, "completion for an unknown slot");
                return;
        }
        if (wc->wc_flags & IBV_WC_WITH_IMM)
                recv_on_data(l, wc->wr_id, be32toh(wc->imm_data), wc->byte_len);
        else
                recv_on_ctrl(l, wc->wr_id, wc->byte_len);
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
                if (l->x->state == RECV_CONNECTING)
                        recv_set_state(l->x, RECV_OFFER_WAIT);
                break;
        case RDMA_CM_EVENT_DISCONNECTED:
                recv_lost(l, "peer disconnected");
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

static void recv_on_reaped(struct conn *c)
{
        struct recv_lane *l = (struct recv_lane *)c;
        struct recv_xfer *x = l->x;
        struct engine *e = x->e;

        ring_hold_leave(&l->hold, &e->ring);
        x->lane[l->idx] = NULL;
        recv_lane_free(l);
        recv_feed_starved(e);
        if (--x->nlive > 0)
                return;
        for (struct recv_xfer **p = &e->recvs; *p; p = &(*p)->next)
                if (*p == x) {
                        *p = x->next;
                        break;
                }
        /* Closing the O_TMPFILE without linking it frees its blocks. */
        safe_close(x->fd);
        if (x->timer)
                event_free(x->timer);
        free(x);
        engine_conn_gone(e);
}

const struct conn_ops recv_ops = {
        .cm_event = recv_on_cm,
        .wc = recv_on_wc,
        .wc_batch_end = recv_on_batch_end,
        .reaped = recv_on_reaped,
};
