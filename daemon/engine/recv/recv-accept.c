/*
 * A connection request on the listener: the peer's hello and address are
 * checked, then it becomes lane 0 of a new incoming transfer or, when the
 * hello names a lane, joins the accepted transfer whose offer carried its
 * token, from the same host, with what the ring lends.
 *
 * A new transfer holds no share of the ring and does not count against
 * max_transfers until its offer is valid (recv-offer.c): its accept grants
 * one credit, for the offer, into a control buffer of its own. Until then
 * it is "pending": at most RECV_PENDING_PER_HOST from one host and
 * RECV_PENDING_MAX in all, each with RECV_OFFER_SEC to make its offer.
 * The accept carries the credits, the slot size and a fresh nonce for the
 * key proof. A sender must hold a key exactly when this side does, and a
 * lane of a keyed transfer must prove the session key (wire.h). Anything
 * refused is refused with a reason in the REJ.
 */

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "acl.h"
#include "log.h"
#include "reaper.h"
#include "recv-int.h"
#include "recv-partial.h"

/* Refuse with @status in the REJ; the caller still owns @id. */
static void recv_reject(struct rdma_cm_id *id, unsigned int status)
{
        struct wire_reject rj = { .magic = WIRE_MAGIC, .version = WIRE_VERSION, .status = status };
        uint8_t buf[WIRE_REJECT_SIZE];

        wire_encode_reject(buf, &rj);
        if (rdma_reject(id, buf, sizeof(buf)))
                log_warning("rdma_reject: %m");
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

/* Connections that have not made a valid offer yet: in all, and from
 * @peer's host. */
static void recv_count_pending(struct recv_env *e, const struct sockaddr *peer,
                               unsigned int *all, unsigned int *host)
{
        *all = *host = 0;
        for (struct xfer *b = xfer_first(e->xe, XFER_RECV); b; b = b->next) {
                if (recv_xfer_of(b)->admitted || b->state == XFER_CLOSING || !b->lane[0])
                        continue;
                (*all)++;
                if (recv_same_host(peer, rdma_get_peer_addr(b->lane[0]->conn.id)))
                        (*host)++;
        }
}

unsigned int recv_admitted_from(struct recv_env *e, const struct sockaddr *peer)
{
        unsigned int n = 0;

        for (struct xfer *b = xfer_first(e->xe, XFER_RECV); b; b = b->next)
                if (recv_xfer_of(b)->admitted && b->state != XFER_CLOSING && b->lane[0] &&
                    recv_same_host(peer, rdma_get_peer_addr(b->lane[0]->conn.id)))
                        n++;
        return n;
}

/* Who may connect at all: WIRE_OK, or the status to refuse with. */
static unsigned int recv_admit_peer(struct recv_env *e, const struct device *rail, struct rdma_cm_id *id,
                                    const char *peer, const void *pdata, size_t plen, struct wire_hello *h)
{
        int r = wire_decode_hello(pdata, plen, h);

        if (r < 0) {
                log_notice("%s: refused: %s", peer,
                           r == -EPROTONOSUPPORT ? "protocol version mismatch" : "not an rdmaxfer peer");
                return r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL;
        }
        if (!acl_allows(&e->cfg.allow_peers, rdma_get_peer_addr(id))) {
                log_notice("%s: refused: address not in allow_peers", peer);
                return WIRE_E_DENIED;
        }
        /* Both sides say whether they hold a key: a mismatch is named here,
         * before anything else happens, not taken for a wrong key later. */
        if (!(h->flags & WIRE_HELLO_KEY) != !e->key->len) {
                log_notice("%s: refused: %s", peer, e->key->len ?
                           "the sender has no pre-shared key, and key_file is set here" :
                           "the sender uses a pre-shared key, and key_file is not set here");
                return WIRE_E_AUTH;
        }
        if (e->stopping)
                return WIRE_E_SHUTDOWN;
        if (!(h->flags & WIRE_HELLO_LANE)) {
                unsigned int all, host;

                recv_count_pending(e, rdma_get_peer_addr(id), &all, &host);
                if (host >= RECV_PENDING_PER_HOST || all >= RECV_PENDING_MAX) {
                        log_notice("%s: refused: %u connections %s have not made an offer yet", peer,
                                   host >= RECV_PENDING_PER_HOST ? host : all,
                                   host >= RECV_PENDING_PER_HOST ? "from this host" : "in all");
                        return WIRE_E_BUSY;
                }
        }
        if (id->verbs != rail->verbs) {
                log_warning("%s: refused: arrived on device %s, the listener of %s is on %s", peer,
                            ibv_get_device_name(id->verbs->device), rail->cfg.listen_addr, rail->name);
                return WIRE_E_INTERNAL;
        }
        return WIRE_OK;
}

/* The transfer a lane hello asks to join: accepted, from the same host
 * (or, where the offer said the sender has rails, from any of its
 * addresses: wire.h, Rails), with the offer's token, the lane granted and
 * not yet connected. */
static struct recv_xfer *recv_find_lane(struct recv_env *e, struct rdma_cm_id *id,
                                        const struct wire_hello *h)
{
        for (struct xfer *b = xfer_first(e->xe, XFER_RECV); b; b = b->next) {
                struct recv_xfer *x = recv_xfer_of(b);

                /* Constant time: the token is the only secret a lane shows. */
                if (b->state != XFER_DATA || !b->lane[0] ||
                    sodium_memcmp(x->token, h->token, WIRE_TOKEN_SIZE) != 0)
                        continue;
                /* A lane joins once, or again where its rail was lost. */
                if ((h->flags & WIRE_HELLO_REJOIN) ? !recv_may_rejoin(x, h->lane) :
                    h->lane >= b->nlanes || b->lane[h->lane] ||
                    (!x->rails && !recv_same_host(rdma_get_peer_addr(id), rdma_get_peer_addr(b->lane[0]->conn.id))))
                        return NULL;
                return x;
        }
        return NULL;
}

/* Lane 0 of a new transfer, or a lane joining one: NULL after a refusal. */
static struct recv_lane *recv_lane_for(struct recv_env *e, struct rdma_cm_id *id, const char *peer,
                                       const struct wire_hello *h)
{
        struct recv_xfer *x;
        struct recv_lane *l;
        int r;

        if (!(h->flags & WIRE_HELLO_LANE)) {
                r = recv_xfer_new(e, peer, &x);
                if (r != 0) {
                        recv_reject(id, WIRE_E_INTERNAL);
                        return NULL;
                }
                return recv_lane(x, 0);
        }
        x = recv_find_lane(e, id, h);
        if (!x) {
                log_notice("%s: refused: lane %u of no transfer in progress", peer, h->lane);
                recv_reject(id, WIRE_E_PROTOCOL);
                return NULL;
        }
        if (x->base.session.on) {
                struct wire_binding bd;

                /* The token travels in the clear: only the tag proves the
                 * lane is the sender's. The transfer goes on: the real lane
                 * may still come. */
                if (wire_binding_set(&bd, rdma_get_peer_addr(id), rdma_get_local_addr(id)) < 0 ||
                    auth_lane_verify(&x->base.session, &bd, h) < 0) {
                        log_notice("%s: refused: lane %u does not prove the session key", peer, h->lane);
                        recv_reject(id, WIRE_E_AUTH);
                        return NULL;
                }
        }
        /* Joining again: the lane as it is, its connection (if it still
         * has one: the sender saw the rail go first) replaced. */
        if (h->flags & WIRE_HELLO_REJOIN) {
                l = recv_lane(x, h->lane);
                if (!l->detached)
                        recv_lane_detach(l, "the sender joins it again");
                return l;
        }
        r = recv_lane_new(x, h->lane, &l);
        if (r == 0 && xfer_lane_run(&l->base) < 0) {
                x->base.ops->lane_free(&l->base);
                r = -ENOMEM;
        }
        if (r != 0) {
                recv_reject(id, WIRE_E_INTERNAL);
                recv_fail(x, WIRE_E_INTERNAL, "no memory for a lane");
                return NULL;
        }
        xfer_lane_add(&l->base);
        recv_partial_lane(x, l);
        return l;
}

/* Queue pair, posted slots, the welcome: 0 or -errno (logged). */
static int recv_lane_accept(struct recv_lane *l)
{
        struct xfer *b = l->base.x;
        struct recv_env *e = recv_xfer_of(b)->env;
        struct rdma_conn_param param;
        struct wire_welcome w = { 0 };
        uint8_t wbuf[WIRE_WELCOME_SIZE];
        bool rejoin = l->detached;
        int r;

        /* Room for every slot it may grow to; lane 0's offer comes into a
         * control buffer of its own (not when it joins again: data comes
         * first then). */
        r = conn_setup_qp(&l->base.conn, CONN_CTRL_BUFS + 2, l->base.hold.cap + 2,
                          l->base.idx == 0 && !rejoin ? 1 : 0);
        if (r == 0)
                r = recv_lane_post_all(l);
        if (r < 0) {
                log_err("%s: setting up the queue pair: %s", l->base.conn.peer, strerror(-r));
                return r;
        }
        w.magic = WIRE_MAGIC;
        w.version = WIRE_VERSION;
        w.flags = e->key->len ? WIRE_WELCOME_AUTH : 0;
        /* Lane 0's one is for the offer; a later lane's are paced like any. */
        w.credits = l->base.idx == 0 && !rejoin ? 1 : recv_credits_take(l);
        w.slot_size = e->slot_size;
        /* A lane joined again goes on where its run stands here, or is
         * done: its END came. */
        w.resume = (uint32_t)(l->next_seq - l->base.first_seq);
        if (rejoin && l->base.ended)
                w.flags |= WIRE_WELCOME_ENDED;
        memcpy(w.nonce, b->nonce, sizeof(w.nonce));
        wire_encode_welcome(wbuf, &w);
        conn_param(&param, wbuf, sizeof(wbuf));
        if (rdma_accept(l->base.conn.id, &param)) {
                r = -errno;
                log_err("%s: rdma_accept: %m", l->base.conn.peer);
                return r;
        }
        return 0;
}

void recv_on_connect_request(struct recv_env *e, struct device *rail, struct rdma_cm_id *id,
                             const void *pdata, size_t plen)
{
        struct wire_hello h;
        struct recv_lane *l;
        unsigned int status;
        bool rejoin;
        char peer[80];

        conn_format_addr(rdma_get_peer_addr(id), peer, sizeof(peer));
        status = recv_admit_peer(e, rail, id, peer, pdata, plen, &h);
        if (status != WIRE_OK) {
                recv_reject(id, status);
                reaper_destroy_id(rail->reaper, id, false);
                return;
        }
        l = recv_lane_for(e, id, peer, &h);
        if (!l) {
                reaper_destroy_id(rail->reaper, id, false);
                return;
        }
        /* On its rail: that device's PD, keys and reaper. */
        rejoin = l->detached;
        conn_init(&l->base.conn, rail->env, &recv_conn_ops, id);
        l->base.x->rails |= 1u << rail->idx;
        l->base.x->rail_lanes[rail->idx]++;
        snprintf(l->base.conn.peer, sizeof(l->base.conn.peer), "%s", peer);

        if (recv_lane_accept(l) < 0) {
                /* The lane owns the id now: reaping returns its slots too. */
                recv_reject(id, WIRE_E_INTERNAL);
                conn_reap(&l->base.conn);
                if (l->base.idx == 0 && !rejoin) {
                        xfer_decide(l->base.x, ENGINE_FAILED, WIRE_E_INTERNAL, NULL);
                        xfer_set_state(l->base.x, XFER_CLOSING);
                } else {
                        recv_fail(recv_xfer_of(l->base.x), WIRE_E_INTERNAL, "setting up a lane failed");
                }
                return;
        }
        if (l->base.idx == 0 && !rejoin)
                xfer_arm_timer(l->base.x, (int)recv_offer_timeout(recv_xfer_of(l->base.x)));
        if (rejoin)
                log_notice("%s: lane %u joined again over %s, at chunk %" PRIu64 " of its run", peer, l->base.idx,
                           rail->name, l->next_seq - l->base.first_seq);
        log_debug("%s: accepted %s %u, %u credits of %u bytes", peer,
                  l->base.idx ? "lane" : "connection", l->base.idx, l->base.hold.held, e->slot_size);
}
