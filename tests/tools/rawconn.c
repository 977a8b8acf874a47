/*
 * The plumbing of rawpeer: one blocking rdma_cm RC connection to an
 * rdmaxferd receiver, speaking the peer protocol through common/wire.h.
 * poll() on the CM channel and the completion channel, no event loop.
 */

#include "rawconn.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "macro.h"

#define RAWCONN_CM_MS           5000    /* address, route, connect */
#define RAWCONN_WRID_RECV       (1ull << 62)

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int remaining_ms(uint64_t deadline)
{
        uint64_t now = now_ms();

        return now >= deadline ? 0 : (int)MIN(deadline - now, (uint64_t)INT32_MAX);
}

void rawconn_deinit(struct rawconn *c)
{
        if (c->id && c->id->qp)
                rdma_destroy_qp(c->id);
        if (c->smr)
                ibv_dereg_mr(c->smr);
        if (c->rmr)
                ibv_dereg_mr(c->rmr);
        free(c->sbuf);
        free(c->rbuf);
        if (c->cq) {
                if (c->cq_unacked)
                        ibv_ack_cq_events(c->cq, c->cq_unacked);
                ibv_destroy_cq(c->cq);
        }
        if (c->chan)
                ibv_destroy_comp_channel(c->chan);
        if (c->pd)
                ibv_dealloc_pd(c->pd);
        if (c->id)
                rdma_destroy_id(c->id);
        if (c->listen_id)
                rdma_destroy_id(c->listen_id);
        if (c->ec)
                rdma_destroy_event_channel(c->ec);
        auth_key_clear(&c->key);
        auth_session_clear(&c->session);
        *c = RAWCONN_NULL;
}

/* ---- rdma_cm ----------------------------------------------------------- */

/* Wait for the next CM event (acked here; private data copied out). */
static int rawconn_cm_event(struct rawconn *c, int timeout_ms, enum rdma_cm_event_type *type,
                            int *status, uint8_t *pdata, size_t *plen)
{
        struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
        struct rdma_cm_event *ev;
        int r;

        r = poll(&pfd, 1, timeout_ms);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        if (rdma_get_cm_event(c->ec, &ev))
                return -errno;
        *type = ev->event;
        *status = ev->status;
        if (pdata && plen) {
                size_t n = MIN((size_t)ev->param.conn.private_data_len, *plen);

                if (ev->param.conn.private_data && n)
                        memcpy(pdata, ev->param.conn.private_data, n);
                else
                        n = 0;
                *plen = n;
        }
        rdma_ack_cm_event(ev);
        return 0;
}

/* Wait for exactly @want; anything else is reported and fails. */
static int rawconn_cm_expect(struct rawconn *c, enum rdma_cm_event_type want)
{
        enum rdma_cm_event_type type;
        int status, r;

        r = rawconn_cm_event(c, RAWCONN_CM_MS, &type, &status, NULL, NULL);
        if (r < 0) {
                fprintf(stderr, "rawpeer: waiting for %s: %s\n", rdma_event_str(want), strerror(-r));
                return r;
        }
        if (type != want) {
                fprintf(stderr, "rawpeer: got %s (status %d), wanted %s\n", rdma_event_str(type),
                        status, rdma_event_str(want));
                return -EPROTO;
        }
        return 0;
}

static int rawconn_post_recv(struct rawconn *c, unsigned int i)
{
        struct ibv_sge sge = {
                .addr = (uintptr_t)(c->rbuf + (size_t)i * WIRE_CTRL_MAX),
                .length = WIRE_CTRL_MAX,
                .lkey = c->rmr->lkey,
        };
        struct ibv_recv_wr wr = { .wr_id = RAWCONN_WRID_RECV | i, .sg_list = &sge, .num_sge = 1 };
        struct ibv_recv_wr *bad;

        return ibv_post_recv(c->id->qp, &wr, &bad) ? -(errno ?: EIO) : 0;
}

static int parse_addr(const char *host, unsigned int port, struct addrinfo **out)
{
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        char service[8];
        int r;

        snprintf(service, sizeof(service), "%u", port);
        r = getaddrinfo(host, service, &hints, out);
        if (r != 0) {
                fprintf(stderr, "rawpeer: %s: %s\n", host, gai_strerror(r));
                return -EINVAL;
        }
        return 0;
}

/* PD, CQ, QP on c->id, the receive buffers posted. 0 or -errno. */
static int rawconn_setup_qp(struct rawconn *c)
{
        struct ibv_qp_init_attr attr = { 0 };
        int r;

        c->pd = ibv_alloc_pd(c->id->verbs);
        c->chan = c->pd ? ibv_create_comp_channel(c->id->verbs) : NULL;
        c->cq = c->chan ? ibv_create_cq(c->id->verbs, RAWCONN_SQ_DEPTH + RAWCONN_RECVS, NULL, c->chan, 0)
                        : NULL;
        if (!c->cq || ibv_req_notify_cq(c->cq, 0)) {
                r = -(errno ?: EIO);
                fprintf(stderr, "rawpeer: PD/CQ: %m\n");
                return r;
        }
        attr.send_cq = c->cq;
        attr.recv_cq = c->cq;
        attr.qp_type = IBV_QPT_RC;
        attr.cap.max_send_wr = RAWCONN_SQ_DEPTH;
        attr.cap.max_recv_wr = RAWCONN_RECVS;
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        if (rdma_create_qp(c->id, c->pd, &attr)) {
                r = -errno;
                fprintf(stderr, "rawpeer: rdma_create_qp: %m\n");
                return r;
        }
        if (posix_memalign((void **)&c->rbuf, 4096, RAWCONN_RECVS * WIRE_CTRL_MAX)) {
                r = -ENOMEM;
                return r;
        }
        c->rmr = ibv_reg_mr(c->pd, c->rbuf, RAWCONN_RECVS * WIRE_CTRL_MAX, IBV_ACCESS_LOCAL_WRITE);
        if (!c->rmr) {
                r = -errno;
                fprintf(stderr, "rawpeer: ibv_reg_mr: %m\n");
                return r;
        }
        for (unsigned int i = 0; i < RAWCONN_RECVS; i++) {
                r = rawconn_post_recv(c, i);
                if (r < 0) {
                        fprintf(stderr, "rawpeer: ibv_post_recv: %s\n", strerror(-r));
                        return r;
                }
        }
        return 0;
}

int rawconn_setup(struct rawconn *c, const char *src_addr, const char *dst_addr, unsigned int port)
{
        struct addrinfo *src = NULL, *dst = NULL;
        int r;

        if (parse_addr(src_addr, 0, &src) < 0 || parse_addr(dst_addr, port, &dst) < 0) {
                r = -EINVAL;
                goto out;
        }
        c->ec = rdma_create_event_channel();
        if (!c->ec || rdma_create_id(c->ec, &c->id, NULL, RDMA_PS_TCP)) {
                r = -errno;
                fprintf(stderr, "rawpeer: rdma_cm: %m\n");
                goto out;
        }
        if (rdma_resolve_addr(c->id, src->ai_addr, dst->ai_addr, RAWCONN_CM_MS)) {
                r = -errno;
                fprintf(stderr, "rawpeer: rdma_resolve_addr: %m\n");
                goto out;
        }
        r = rawconn_cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED);
        if (r < 0)
                goto out;
        if (rdma_resolve_route(c->id, RAWCONN_CM_MS)) {
                r = -errno;
                fprintf(stderr, "rawpeer: rdma_resolve_route: %m\n");
                goto out;
        }
        r = rawconn_cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
        if (r < 0)
                goto out;

        if (wire_binding_set(&c->binding, rdma_get_local_addr(c->id), rdma_get_peer_addr(c->id)) < 0) {
                r = -EAFNOSUPPORT;
                goto out;
        }
        r = rawconn_setup_qp(c);
        if (r < 0)
                goto out;
        r = 0;
out:
        if (src)
                freeaddrinfo(src);
        if (dst)
                freeaddrinfo(dst);
        return r;
}

int rawconn_connect(struct rawconn *c, enum rawconn_hello hello, struct wire_reject *rj)
{
        struct rdma_conn_param param = { .rnr_retry_count = 7, .retry_count = 7 };
        struct wire_hello h = { .magic = WIRE_MAGIC, .version = WIRE_VERSION };
        uint8_t hbuf[WIRE_HELLO_SIZE], pdata[256];
        size_t plen = sizeof(pdata);
        enum rdma_cm_event_type type;
        int status, r;

        if (c->key.len || c->claim_key)
                h.flags |= WIRE_HELLO_KEY;
        if (hello == HELLO_LANE) {
                h.flags |= WIRE_HELLO_LANE;
                h.lane = c->lane ? c->lane : 1;
                if (c->lane)
                        memcpy(h.token, c->token, sizeof(h.token));
                else    /* a transfer nobody offered: a token out of thin air */
                        memset(h.token, 0x5a, sizeof(h.token));
                if (c->session.on) {
                        auth_lane_tag(&c->session, &c->binding, &h, h.tag);
                        if (c->bad_tag)
                                h.tag[0] ^= 0x01;
                }
        }
        wire_encode_hello(hbuf, &h);
        if (hello == HELLO_VERSION) {
                /* The encoder always writes WIRE_VERSION; a newer peer would not. */
                hbuf[4] = 99;
                hbuf[5] = 0;
        } else if (hello == HELLO_GARBAGE) {
                memset(hbuf, '!', sizeof(hbuf));
                memcpy(hbuf, "GARBAGE", 7);
        }
        if (hello != HELLO_NONE) {
                param.private_data = hbuf;
                param.private_data_len = sizeof(hbuf);
        }
        if (rdma_connect(c->id, &param)) {
                fprintf(stderr, "rawpeer: rdma_connect: %m\n");
                return -errno;
        }
        r = rawconn_cm_event(c, RAWCONN_CM_MS, &type, &status, pdata, &plen);
        if (r < 0) {
                fprintf(stderr, "rawpeer: waiting for the receiver's answer: %s\n", strerror(-r));
                return r;
        }
        if (type == RDMA_CM_EVENT_REJECTED) {
                r = wire_decode_reject(pdata, plen, rj);
                if (r < 0 && rj->magic != WIRE_MAGIC) {
                        printf("rawpeer: REJECT without rdmaxfer private data (cm status %d)\n", status);
                        return -ECONNREFUSED;
                }
                printf("rawpeer: REJECT status %u (%s)\n", rj->status, wire_status_str(rj->status));
                return RAWCONN_REJECTED;
        }
        if (type != RDMA_CM_EVENT_ESTABLISHED) {
                fprintf(stderr, "rawpeer: connect: %s (status %d)\n", rdma_event_str(type), status);
                return -ECONNREFUSED;
        }
        c->established = true;
        r = wire_decode_welcome(pdata, plen, &c->welcome);
        if (r < 0) {
                fprintf(stderr, "rawpeer: established, but the welcome does not decode (%zu bytes): %s\n",
                        plen, strerror(-r));
                return r;
        }
        c->credits = c->welcome.credits;
        printf("rawpeer: connected: %u credits, slot size %u%s\n", c->welcome.credits,
               c->welcome.slot_size, c->welcome.flags & WIRE_WELCOME_AUTH ? ", key required" : "");
        return 0;
}

/* ---- the passive side -------------------------------------------------- */

int rawconn_listen(struct rawconn *c, const char *addr, unsigned int port)
{
        struct addrinfo *ai = NULL;
        int r;

        if (parse_addr(addr, port, &ai) < 0)
                return -EINVAL;
        c->ec = rdma_create_event_channel();
        if (!c->ec || rdma_create_id(c->ec, &c->listen_id, NULL, RDMA_PS_TCP) ||
            rdma_bind_addr(c->listen_id, ai->ai_addr) || rdma_listen(c->listen_id, 4)) {
                r = -(errno ?: EIO);
                fprintf(stderr, "rawpeer: listening on %s:%u: %m\n", addr, port);
                freeaddrinfo(ai);
                return r;
        }
        freeaddrinfo(ai);
        return 0;
}

int rawconn_accept_req(struct rawconn *c, int timeout_ms, struct wire_hello *h)
{
        struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
        struct rdma_cm_event *ev;
        int r;

        r = poll(&pfd, 1, timeout_ms);
        if (r <= 0) {
                fprintf(stderr, "rawpeer: no connection request within %d s\n", timeout_ms / 1000);
                return r < 0 ? -errno : -ETIMEDOUT;
        }
        if (rdma_get_cm_event(c->ec, &ev))
                return -errno;
        if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
                fprintf(stderr, "rawpeer: got %s, wanted a connection request\n", rdma_event_str(ev->event));
                rdma_ack_cm_event(ev);
                return -EPROTO;
        }
        c->id = ev->id;
        r = wire_decode_hello(ev->param.conn.private_data, ev->param.conn.private_data_len, h);
        rdma_ack_cm_event(ev);
        if (r < 0) {
                fprintf(stderr, "rawpeer: the connection request carries no hello we speak\n");
                return r;
        }
        if (wire_binding_set(&c->binding, rdma_get_peer_addr(c->id), rdma_get_local_addr(c->id)) < 0)
                return -EAFNOSUPPORT;
        return rawconn_setup_qp(c);
}

int rawconn_accept(struct rawconn *c, const struct wire_welcome *w)
{
        struct rdma_conn_param param = { .rnr_retry_count = 7, .retry_count = 7 };
        uint8_t wbuf[WIRE_WELCOME_SIZE];
        int r;

        wire_encode_welcome(wbuf, w);
        param.private_data = wbuf;
        param.private_data_len = sizeof(wbuf);
        param.responder_resources = 1;
        param.initiator_depth = 1;
        if (rdma_accept(c->id, &param)) {
                fprintf(stderr, "rawpeer: rdma_accept: %m\n");
                return -errno;
        }
        r = rawconn_cm_expect(c, RDMA_CM_EVENT_ESTABLISHED);
        if (r < 0)
                return r;
        c->established = true;
        return 0;
}

int rawconn_alloc_send(struct rawconn *c, size_t data_len)
{
        c->sbuf_len = RAWCONN_SQ_DEPTH * WIRE_CTRL_MAX + data_len;
        if (posix_memalign((void **)&c->sbuf, 4096, c->sbuf_len))
                return -ENOMEM;
        if (getrandom(c->sbuf, c->sbuf_len, 0) != (ssize_t)c->sbuf_len)
                memset(c->sbuf, 0xa5, c->sbuf_len);
        c->smr = ibv_reg_mr(c->pd, c->sbuf, c->sbuf_len, 0);
        if (!c->smr) {
                fprintf(stderr, "rawpeer: ibv_reg_mr: %m\n");
                return -errno;
        }
        return 0;
}

/* ---- completions and the receiver's messages --------------------------- */

static void rawconn_on_recv(struct rawconn *c, const struct ibv_wc *wc)
{
        unsigned int i = wc->wr_id & ~RAWCONN_WRID_RECV;
        struct wire_msg m;
        int r;

        /* Whatever the peer sent counts, also what did not fit a buffer. */
        if (wc->status != IBV_WC_WR_FLUSH_ERR)
                c->nrecv++;
        if (wc->status != IBV_WC_SUCCESS) {
                if (wc->status != IBV_WC_WR_FLUSH_ERR)
                        printf("rawpeer: receive completion: %s\n", ibv_wc_status_str(wc->status));
                return;
        }
        if (wc->wc_flags & IBV_WC_WITH_IMM)
                printf("rawpeer: a data message (%u bytes)\n", wc->byte_len);
        r = wire_decode(c->rbuf + (size_t)i * WIRE_CTRL_MAX, wc->byte_len, &m);
        if (rawconn_post_recv(c, i) < 0)
                fprintf(stderr, "rawpeer: cannot repost a receive\n");
        if (r < 0) {
                printf("rawpeer: undecodable message from the receiver (%u bytes)\n", wc->byte_len);
                return;
        }
        c->credits += m.credits;
        if (m.type == WIRE_CREDIT)
                return;
        if (c->inbox_len == RAWCONN_INBOX) {
                fprintf(stderr, "rawpeer: inbox full, dropping a message of type %u\n", m.type);
                return;
        }
        c->inbox[(c->inbox_head + c->inbox_len++) % RAWCONN_INBOX] = m;
}

static void rawconn_drain_cq(struct rawconn *c)
{
        struct ibv_wc wc[16];
        int n;

        while ((n = ibv_poll_cq(c->cq, ARRAY_SIZE(wc), wc)) > 0)
                for (int i = 0; i < n; i++) {
                        if (wc[i].wr_id & RAWCONN_WRID_RECV) {
                                rawconn_on_recv(c, &wc[i]);
                                continue;
                        }
                        c->sends_out--;
                        /* Flushes only follow a hang-up or an earlier error. */
                        if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR &&
                            !c->send_failed) {
                                c->send_failed = true;
                                c->send_error = wc[i].status;
                                printf("rawpeer: send completion: %s\n", ibv_wc_status_str(wc[i].status));
                        }
                }
}

/* Handle whatever arrives within @timeout_ms (CQ events and CM events). */
static void rawconn_pump(struct rawconn *c, int timeout_ms)
{
        struct pollfd pfd[2] = {
                { .fd = c->chan->fd, .events = POLLIN },
                { .fd = c->ec->fd, .events = POLLIN },
        };

        /* Arm, then poll: a completion after the poll raises an event. */
        rawconn_drain_cq(c);
        if (c->inbox_len || c->send_failed || c->disconnected)
                return;
        if (poll(pfd, 2, timeout_ms) <= 0)
                return;
        if (pfd[0].revents) {
                struct ibv_cq *cq;
                void *ctx;

                if (ibv_get_cq_event(c->chan, &cq, &ctx) == 0)
                        c->cq_unacked++;
                ibv_req_notify_cq(c->cq, 0);
                rawconn_drain_cq(c);
        }
        if (pfd[1].revents) {
                enum rdma_cm_event_type type;
                int status;

                if (rawconn_cm_event(c, 0, &type, &status, NULL, NULL) == 0) {
                        /* A receiver that hangs up before its own side saw the
                         * connection established (a message of ours came first)
                         * answers with a REJ: a hang-up all the same. */
                        if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_REJECTED) {
                                if (type == RDMA_CM_EVENT_REJECTED)
                                        printf("rawpeer: hung up before it was established (REJ, status %d)\n",
                                               status);
                                /* Completions already in the CQ still count. */
                                rawconn_drain_cq(c);
                                c->disconnected = true;
                        } else {
                                printf("rawpeer: CM event %s (status %d)\n", rdma_event_str(type), status);
                        }
                }
        }
}

static void print_msg(const struct wire_msg *m)
{
        switch (m->type) {
        case WIRE_ACCEPT:
                printf("rawpeer: ACCEPT (+%u credits)\n", m->credits);
                break;
        case WIRE_REFUSE:
                printf("rawpeer: REFUSE status %u (%s): %s\n", m->refuse.status,
                       wire_status_str(m->refuse.status), m->refuse.text);
                break;
        case WIRE_RESULT:
                printf("rawpeer: RESULT status %u (%s), %" PRIu64 " bytes written: %s\n", m->result.status,
                       wire_status_str(m->result.status), m->result.bytes, m->result.text);
                break;
        default:
                printf("rawpeer: message of type %u\n", m->type);
                break;
        }
}

enum rawconn_event rawconn_wait(struct rawconn *c, int timeout_ms)
{
        uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

        for (;;) {
                /* A verdict that came before the hang-up is reported first. */
                if (c->inbox_len)
                        return RAWCONN_MSG;
                if (c->send_failed)
                        return RAWCONN_SEND_ERROR;
                if (c->disconnected)
                        return RAWCONN_DISCONNECTED;
                if (remaining_ms(deadline) == 0)
                        return RAWCONN_TIMEOUT;
                rawconn_pump(c, remaining_ms(deadline));
        }
}

const struct wire_msg *rawconn_peek(const struct rawconn *c)
{
        return c->inbox_len ? &c->inbox[c->inbox_head] : NULL;
}

enum rawconn_event rawconn_next(struct rawconn *c, int timeout_ms, struct wire_msg *m)
{
        enum rawconn_event ev = rawconn_wait(c, timeout_ms);

        if (ev == RAWCONN_MSG) {
                *m = c->inbox[c->inbox_head];
                c->inbox_head = (c->inbox_head + 1) % RAWCONN_INBOX;
                c->inbox_len--;
                print_msg(m);
        } else if (ev == RAWCONN_DISCONNECTED) {
                printf("rawpeer: disconnected\n");
        }
        return ev;
}

/* Post @len bytes at @off of the send MR, with an immediate (data) or without (control). */
static int rawconn_post(struct rawconn *c, size_t off, uint32_t len, bool data, uint32_t seq)
{
        struct ibv_sge sge = { .addr = (uintptr_t)(c->sbuf + off), .length = len, .lkey = c->smr->lkey };
        struct ibv_send_wr wr = {
                .wr_id = off,
                .sg_list = &sge,
                .num_sge = 1,
                .opcode = data ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
                .send_flags = IBV_SEND_SIGNALED,
                .imm_data = data ? htobe32(seq) : 0,
        };
        struct ibv_send_wr *bad;
        uint64_t deadline = now_ms() + 10000;

        while (c->credits == 0 || c->sends_out >= RAWCONN_SQ_DEPTH) {
                if (c->inbox_len)
                        return RAWCONN_MSG;
                if (c->send_failed)
                        return RAWCONN_SEND_ERROR;
                if (c->disconnected)
                        return RAWCONN_DISCONNECTED;
                if (remaining_ms(deadline) == 0) {
                        fprintf(stderr, "rawpeer: no credit or send queue entry within 10 s\n");
                        return RAWCONN_TIMEOUT;
                }
                rawconn_pump(c, remaining_ms(deadline));
        }
        if (ibv_post_send(c->id->qp, &wr, &bad))
                return -(errno ?: EIO);
        c->credits--;
        c->sends_out++;
        return 0;
}

int rawconn_send_ctrl(struct rawconn *c, const struct wire_msg *m)
{
        /* In-order send completions: with at most SQ_DEPTH outstanding, the
         * buffer used SQ_DEPTH sends ago is free again. */
        size_t off = (size_t)(c->ctrl_next++ % RAWCONN_SQ_DEPTH) * WIRE_CTRL_MAX;
        int len = wire_encode(c->sbuf + off, WIRE_CTRL_MAX, m);

        if (len < 0) {
                fprintf(stderr, "rawpeer: wire_encode: %s\n", strerror(-len));
                return len;
        }
        return rawconn_post(c, off, (uint32_t)len, false, 0);
}

int rawconn_send_raw(struct rawconn *c, const void *bytes, uint32_t len)
{
        size_t off = (size_t)(c->ctrl_next++ % RAWCONN_SQ_DEPTH) * WIRE_CTRL_MAX;

        memcpy(c->sbuf + off, bytes, MIN(len, (uint32_t)WIRE_CTRL_MAX));
        return rawconn_post(c, off, MIN(len, (uint32_t)WIRE_CTRL_MAX), false, 0);
}

int rawconn_send_data(struct rawconn *c, size_t off, uint32_t len, uint32_t seq)
{
        return rawconn_post(c, RAWCONN_SQ_DEPTH * WIRE_CTRL_MAX + off, len, true, seq);
}

int rawconn_send_chunk(struct rawconn *c, uint64_t size, uint32_t chunk, uint32_t seq)
{
        uint64_t off = (uint64_t)seq * chunk;
        uint32_t len = (uint32_t)MIN((uint64_t)chunk, size - MIN(off, size));

        return rawconn_send_data(c, off, len, seq);
}

const uint8_t *rawconn_data(const struct rawconn *c)
{
        return c->sbuf + RAWCONN_SQ_DEPTH * WIRE_CTRL_MAX;
}

uint8_t *rawconn_data_fill(struct rawconn *c)
{
        return c->sbuf + RAWCONN_SQ_DEPTH * WIRE_CTRL_MAX;
}

int rawconn_flush_sends(struct rawconn *c, int timeout_ms)
{
        uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

        while (c->sends_out > 0 && !c->send_failed && !c->disconnected && remaining_ms(deadline) > 0)
                rawconn_pump(c, remaining_ms(deadline));
        return c->sends_out == 0 && !c->send_failed ? 0 : -EIO;
}

