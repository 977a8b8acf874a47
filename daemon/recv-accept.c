/*
 * A connection request becomes an incoming transfer: the peer's hello and
 * address are checked, a share of the receive ring is taken and posted (the
 * full share, or less while another transfer is lending slots), and
 * the accept carries the credits, the slot size and a fresh nonce for the
 * key proof. A hello that names a lane joins the accepted transfer whose
 * offer carried its token, from the same host, with what the ring lends.
 * Anything refused is refused with a reason in the REJ.
 */

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "acl.h"
#include "auth.h"
#include "daemon.h"
#include "engine-private.h"
#include "log.h"
#include "recv.h"

static void recv_reject(struct rdma_cm_id *id, unsigned int status)
{
        struct wire_reject rj = { .magic = WIRE_MAGIC, .version = WIRE_VERSION, .status = status };
        uint8_t buf[WIRE_REJECT_SIZE];

        wire_encode_reject(buf, &rj);
        if (rdma_reject(id, buf, sizeof(buf)))
                log_warning("rdma_reject: %m");
        rdma_destroy_id(id);
}

/* Same address, port aside: lanes of one transfer come from one host. */
static bool recv_same_host(const struct sockaddr *a, const struct sockaddr *b)
{
        if (a->sa_family != b->sa_family)
                return false;
        if (a->sa_family == AF_INET)
                return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
                       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
        if (a->sa_family == AF_INET6)
                return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                               &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
        return false;
}

/* The transfer a lane hello asks to join: accepted, from the same host,
 * with the offer's token, the lane granted and not yet connected. */
static struct recv_xfer *recv_find_lane(struct engine *e, struct rdma_cm_id *id, const struct wire_hello *h)
{
        for (struct recv_xfer *x = e->recvs; x; x = x->next) {
                if (x->state != RECV_DATA || !x->lane[0] ||
                    memcmp(x->offer.token, h->token, WIRE_TOKEN_SIZE) != 0)
                        continue;
                if (h->lane >= x->nlanes || x->lane[h->lane] ||
                    !recv_same_host(rdma_get_peer_addr(id), rdma_get_peer_addr(x->lane[0]->conn.id)))
                        return NULL;
                return x;
        }
        return NULL;
}

/* A new transfer around lane 0, admitted to the ring; NULL after a REJ. */
static struct recv_xfer *recv_xfer_new(struct engine *e, struct rdma_cm_id *id, const char *peer)
{
        struct recv_xfer *x;
        int r = -ENOMEM;

        x = calloc(1, sizeof(*x));
        if (x) {
                x->e = e;
                x->fd = -1;
                x->nlanes = 1;
                snprintf(x->peer, sizeof(x->peer), "%s", peer);
                x->timer = evtimer_new(e->base, recv_on_timer, x);
                x->lane[0] = x->timer ? recv_lane_new(x, 0, &r) : NULL;
        }
        if (!x || !x->lane[0]) {
                if (r == 0)
                        log_notice("%s: refused: %u transfers already receiving", peer,
                                   e->ring.conns_max);
                if (x && x->timer)
                        event_free(x->timer);
                free(x);
                recv_reject(id, r == 0 ? WIRE_E_BUSY : WIRE_E_INTERNAL);
                return NULL;
        }
        x->nlive = 1;
        x->next = e->recvs;
        e->recvs = x;
        auth_nonce(x->nonce);
        return x;
}

void recv_on_connect_request(struct engine *e, struct rdma_cm_id *id, const void *pdata, size_t plen)
{
        struct daemon *d = e->d;
        struct rdma_conn_param param = { 0 };
        struct wire_welcome w = { 0 };
        struct wire_hello h;
        uint8_t wbuf[WIRE_WELCOME_SIZE];
        struct recv_xfer *x;
        struct recv_lane *l;
        char peer[80];
        int r;

        conn_format_addr(rdma_get_peer_addr(id), peer, sizeof(peer));

        r = wire_decode_hello(pdata, plen, &h);
        if (r < 0) {
                log_notice("%s: refused: %s", peer,
                           r == -EPROTONOSUPPORT ? "protocol version mismatch" : "not an rdmaxfer peer");
                recv_reject(id, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL);
                return;
        }
        if (!acl_allows(&d->cfg.allow_peers, rdma_get_peer_addr(id))) {
                log_notice("%s: refused: address not in allow_peers", peer);
                recv_reject(id, WIRE_E_DENIED);
                return;
        }
        if (e->stopping) {
                recv_reject(id, WIRE_E_SHUTDOWN);
                return;
        }
        if (id->verbs != e->verbs) {
                log_warning("%s: refused: arrived on device %s, ring is on %s", peer,
                            ibv_get_device_name(id->verbs->device),
                            ibv_get_device_name(e->verbs->device));
                recv_reject(id, WIRE_E_INTERNAL);
                return;
        }

        if (h.flags & WIRE_HELLO_LANE) {
                x = recv_find_lane(e, id, &h);
                if (!x) {
                        log_notice("%s: refused: lane %u of no transfer in progress", peer, h.lane);
                        recv_reject(id, WIRE_E_PROTOCOL);
                        return;
                }
                l = recv_lane_new(x, h.lane, &r);
                if (!l) {
                        recv_reject(id, WIRE_E_INTERNAL);
                        recv_abort(x, WIRE_E_INTERNAL, "no memory for a lane");
                        return;
                }
                x->lane[h.lane] = l;
                x->nlive++;
                wire_lane_range(x->nchunks, x->nlanes, l->idx, &l->first_seq, &l->end_seq);
                l->next_seq = l->first_seq;
        } else {
                x = recv_xfer_new(e, id, peer);
                if (!x)
                        return;
                l = x->lane[0];
        }
        conn_init(&l->conn, e, &recv_ops, id);
        snprintf(l->conn.peer, sizeof(l->conn.peer), "%s", peer);

        /* From here on a failure rejects and then reaps, which returns the slots. */
        /* Room for every slot it may grow to. */
        r = conn_setup_qp(&l->conn, CONN_CTRL_BUFS + 2, l->hold.cap + 1, 0);
        for (uint32_t i = 0; r == 0 && i < l->hold.held; i++)
                r = recv_post_slot(l, i);
        if (r < 0) {
                log_err("%s: setting up the queue pair: %s", peer, strerror(-r));
                goto fail;
        }
        if (l->idx > 0) {
                /* Slots the ring lends now; more come as the other lanes write. */
                recv_lane_grow(l);
                l->credits_pending = 0;
        }

        w.magic = WIRE_MAGIC;
        w.version = WIRE_VERSION;
        w.flags = d->key.len ? WIRE_WELCOME_AUTH : 0;
        w.credits = l->hold.held;
        w.slot_size = e->slot_size;
        memcpy(w.nonce, x->nonce, sizeof(w.nonce));
        wire_encode_welcome(wbuf, &w);
        param.private_data = wbuf;
        param.private_data_len = sizeof(wbuf);
        param.rnr_retry_count = 7;
        param.retry_count = 7;
        if (rdma_accept(id, &param)) {
                log_err("%s: rdma_accept: %m", peer);
                goto fail;
        }
        if (l->idx == 0)
                recv_arm_timer(x, RECV_OFFER_TIMEOUT_SEC);
        log_debug("%s: accepted %s %u, %u credits of %u bytes", peer, l->idx ? "lane" : "connection",
                  l->idx, l->hold.held, e->slot_size);
        return;

fail:
        {
                uint8_t buf[WIRE_REJECT_SIZE];
                struct wire_reject rj = { .magic = WIRE_MAGIC, .version = WIRE_VERSION,
                                          .status = WIRE_E_INTERNAL };

                wire_encode_reject(buf, &rj);
                rdma_reject(id, buf, sizeof(buf));
        }
        conn_reap(&l->conn);
        if (l->idx == 0)
                x->state = RECV_CLOSING;
        else
                recv_abort(x, WIRE_E_INTERNAL, "setting up a lane failed");
}
