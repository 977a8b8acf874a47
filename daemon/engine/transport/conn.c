#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "conn.h"
#include "log.h"
#include "macro.h"
#include "reaper.h"

/* Completions handled per callback before yielding to other events. */
#define CONN_WC_BUDGET          256
#define CONN_WC_BATCH           32
#define CONN_ACK_BATCH          32

void conn_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
        char host[INET6_ADDRSTRLEN] = "?";
        unsigned int port = 0;

        if (sa && sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const void *)sa;
                inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
                port = ntohs(in->sin_port);
                snprintf(buf, len, "%s:%u", host, port);
        } else if (sa && sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const void *)sa;
                inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
                port = ntohs(in6->sin6_port);
                snprintf(buf, len, "[%s]:%u", host, port);
        } else {
                snprintf(buf, len, "?");
        }
}

void conn_param(struct rdma_conn_param *p, const void *pdata, size_t plen)
{
        *p = (struct rdma_conn_param){
                .private_data = pdata,
                .private_data_len = (uint8_t)plen,
                .rnr_retry_count = 7,
                .retry_count = 7,
        };
}

void conn_init(struct conn *c, const struct conn_env *env, const struct conn_ops *ops,
               struct rdma_cm_id *id)
{
        memset(c, 0, sizeof(*c));
        c->ops = ops;
        c->env = env;
        c->id = id;
        id->context = c;
}

static void conn_on_cq(evutil_socket_t fd, short what, void *arg)
{
        struct conn *c = arg;
        struct ibv_wc wc[CONN_WC_BATCH];
        struct ibv_cq *cq;
        void *ctx;
        unsigned int handled = 0;
        int n;

        /* Drain channel events (the fd is non-blocking), re-arm, then poll:
         * anything arriving after the poll raises a new event. */
        while (ibv_get_cq_event(c->chan, &cq, &ctx) == 0)
                c->cq_unacked++;
        if (c->cq_unacked >= CONN_ACK_BATCH) {
                ibv_ack_cq_events(c->cq, c->cq_unacked);
                c->cq_unacked = 0;
        }
        if (ibv_req_notify_cq(c->cq, 0)) {
                log_err("%s: ibv_req_notify_cq failed", c->peer);
                return;
        }

        /* A callback may tear the connection down (a lane that lost its
         * rail, to join again: no CQ then) or reap it. */
        while (!c->reaping && c->cq && handled < CONN_WC_BUDGET &&
               (n = ibv_poll_cq(c->cq, CONN_WC_BATCH, wc)) > 0) {
                for (int i = 0; i < n && !c->reaping && c->cq; i++) {
                        /* The QP is in error now: conn_disconnect says why that matters. */
                        if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR)
                                c->wc_error = true;
                        c->ops->wc(c, &wc[i]);
                }
                handled += n;
        }
        if (!c->reaping && c->cq && c->ops->wc_batch_end)
                c->ops->wc_batch_end(c);
        /* Budget spent with work left: come back after other events ran. */
        if (!c->reaping && c->cq && handled >= CONN_WC_BUDGET)
                event_active(c->cq_ev, EV_READ, 0);
}

int conn_setup_qp(struct conn *c, unsigned int send_wr, unsigned int recv_wr, unsigned int ctrl_recvs)
{
        const struct conn_env *e = c->env;
        struct ibv_qp_init_attr attr = { 0 };
        int flags;

        c->chan = ibv_create_comp_channel(e->verbs);
        if (!c->chan)
                return -errno;
        flags = fcntl(c->chan->fd, F_GETFL);
        if (flags < 0 || fcntl(c->chan->fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;

        c->cq = ibv_create_cq(e->verbs, send_wr + recv_wr, c, c->chan, 0);
        if (!c->cq)
                return -errno;
        if (ibv_req_notify_cq(c->cq, 0))
                return -EIO;

        attr.send_cq = c->cq;
        attr.recv_cq = c->cq;
        attr.qp_type = IBV_QPT_RC;
        attr.cap.max_send_wr = send_wr;
        attr.cap.max_recv_wr = recv_wr;
        attr.cap.max_send_sge = 1;
        attr.cap.max_recv_sge = 1;
        attr.sq_sig_all = 0;
        if (rdma_create_qp(c->id, e->pd, &attr))
                return -errno;

        if (posix_memalign((void **)&c->ctrl, 4096, (CONN_CTRL_BUFS + ctrl_recvs) * WIRE_CTRL_MAX))
                return -ENOMEM;
        c->ctrl_mr = ibv_reg_mr(e->pd, c->ctrl, (CONN_CTRL_BUFS + ctrl_recvs) * WIRE_CTRL_MAX,
                                IBV_ACCESS_LOCAL_WRITE);
        if (!c->ctrl_mr)
                return -errno;
        c->ctrl_recvs = ctrl_recvs;
        for (unsigned int i = 0; i < ctrl_recvs; i++) {
                int r = conn_repost_ctrl(c, CONN_WRID_CTRL | (CONN_CTRL_BUFS + i));
                if (r < 0)
                        return r;
        }

        c->cq_ev = event_new(e->base, c->chan->fd, EV_READ | EV_PERSIST, conn_on_cq, c);
        if (!c->cq_ev || event_add(c->cq_ev, NULL) < 0)
                return -ENOMEM;
        return 0;
}

unsigned int conn_ctrl_free(const struct conn *c)
{
        return CONN_CTRL_BUFS - __builtin_popcount(c->ctrl_busy);
}

int conn_send_ctrl(struct conn *c, const struct wire_msg *m)
{
        struct ibv_send_wr wr = { 0 }, *bad;
        struct ibv_sge sge;
        unsigned int i;
        int len;

        if (!c->ctrl || c->ctrl_busy == (1u << CONN_CTRL_BUFS) - 1)
                return -ENOBUFS;
        i = __builtin_ctz(~c->ctrl_busy);
        len = wire_encode(c->ctrl[i], WIRE_CTRL_MAX, m);
        if (len < 0)
                return len;

        sge.addr = (uintptr_t)c->ctrl[i];
        sge.length = len;
        sge.lkey = c->ctrl_mr->lkey;
        wr.wr_id = CONN_WRID_CTRL | i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        if (ibv_post_send(c->id->qp, &wr, &bad))
                return -errno ?: -EIO;
        c->ctrl_busy |= 1u << i;
        return 0;
}

const void *conn_ctrl_buf(struct conn *c, uint64_t wr_id)
{
        return c->ctrl[wr_id & ~CONN_WRID_CTRL];
}

void conn_ctrl_send_done(struct conn *c, uint64_t wr_id)
{
        c->ctrl_busy &= ~(1u << (wr_id & ~CONN_WRID_CTRL));
}

int conn_repost_ctrl(struct conn *c, uint64_t wr_id)
{
        struct ibv_recv_wr wr = { 0 }, *bad;
        struct ibv_sge sge;

        sge.addr = (uintptr_t)c->ctrl[wr_id & ~CONN_WRID_CTRL];
        sge.length = WIRE_CTRL_MAX;
        sge.lkey = c->ctrl_mr->lkey;
        wr.wr_id = wr_id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(c->id->qp, &wr, &bad))
                return -errno ?: -EIO;
        return 0;
}

void conn_disconnect(struct conn *c)
{
        /* Torn down already: a lane its transfer keeps for disk requests. */
        if (c->disconnecting || !c->id)
                return;
        c->disconnecting = true;
        /* At once, even on a port that is down: there the DREQ fails fast
         * (no route) and the id goes to timewait. Left for the destroy
         * after the port is back, an established id's DREQ never completed
         * on 6.1 rxe after a link flap (cm_destroy_id_wait_timeout, state
         * DREQ_SENT), and the device's removal waited for it for ever.
         * But not the moment a completion failed: a link going down errors
         * the QPs on it before its routes go and the port says PORT_ERR,
         * and a DREQ sent in that window is lost on the wire, retried into
         * the flap and never completes either. The reaper sends it once
         * the port has settled (reaper.h), before it asks the port. */
        if (c->wc_error) {
                c->disconnect_late = true;
                return;
        }
        /* Fails with EINVAL when never connected; reap is then up to the caller. */
        if (rdma_disconnect(c->id) && errno != EINVAL)
                log_debug("%s: rdma_disconnect: %m", c->peer);
}

void conn_destroy_qp(struct conn *c)
{
        if (c->id && c->id->qp)
                rdma_destroy_qp(c->id);
}

/* In verbs order: QP, then the MR its work requests used, the CQ, the
 * channel, and the id last. */
void conn_teardown(struct conn *c)
{
        if (c->cq_ev)
                event_free(c->cq_ev);
        conn_destroy_qp(c);
        if (c->ctrl_mr)
                ibv_dereg_mr(c->ctrl_mr);
        free(c->ctrl);
        if (c->cq) {
                if (c->cq_unacked)
                        ibv_ack_cq_events(c->cq, c->cq_unacked);
                ibv_destroy_cq(c->cq);
        }
        if (c->chan)
                ibv_destroy_comp_channel(c->chan);
        if (c->id)
                reaper_destroy_id(c->env->reaper, c->id, c->disconnect_late);
        if (c->reap_ev)
                event_free(c->reap_ev);
        c->cq_ev = NULL;
        c->ctrl_mr = NULL;
        c->ctrl = NULL;
        c->cq = NULL;
        c->chan = NULL;
        c->id = NULL;
        c->reap_ev = NULL;
}

static void conn_on_reap(evutil_socket_t fd, short what, void *arg)
{
        struct conn *c = arg;

        if (c->holds > 0)
                return;         /* conn_unhold re-arms us */
        /* The QP goes first (conn_teardown) so no more completions touch
         * buffers that the owner is about to hand back. */
        conn_teardown(c);
        c->ops->reaped(c);
}

void conn_reap(struct conn *c)
{
        if (c->reaping)
                return;
        c->reaping = true;
        if (c->cq_ev)
                event_del(c->cq_ev);
        c->reap_ev = event_new(c->env->base, -1, 0, conn_on_reap, c);
        if (!c->reap_ev) {
                log_err("%s: out of memory scheduling teardown", c->peer);
                abort();
        }
        event_active(c->reap_ev, 0, 0);
}

void conn_hold(struct conn *c)
{
        c->holds++;
}

void conn_unhold(struct conn *c)
{
        c->holds--;
        if (c->holds == 0 && c->reaping && c->reap_ev)
                event_active(c->reap_ev, 0, 0);
}
