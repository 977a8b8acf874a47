/*
 * A connection request becomes an incoming transfer: the peer's hello and
 * address are checked, a share of the receive ring is taken and posted (the
 * full share, or less while another transfer is lending slots), and
 * the accept carries the credits, the slot size and a fresh nonce for the
 * key proof. A hello that names a lane joins the accepted transfer whose
 * offer carried its token, from the same host, with what the ring lends.
 * Anything refused is refused with a reason in the REJ. Then the offer is
 * checked (name, key proof, size, space), the file opened and its space
 * reserved, and the transfer accepted with the lanes it is granted.
 */

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>
#include <sodium.h>

#include "acl.h"
#include "auth.h"
#include "clock.h"
#include "daemon.h"
#include "engine-private.h"
#include "incoming.h"
#include "io.h"
#include "log.h"
#include "name.h"
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
                /* Constant time: the token is the only secret a lane shows. */
                if (x->state != RECV_DATA || !x->lane[0] ||
                    sodium_memcmp(x->offer.token, h->token, WIRE_TOKEN_SIZE) != 0)
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

/*
 * How many lanes to grant: as many as asked for, but about *lanes* queue
 * pairs in all, split between the transfers receiving now (this one
 * included), and only while each lane still gets a fair run of chunks.
 * Concurrent transfers already use several queue pairs; striping them too
 * would only shrink every lane's window.
 */
static unsigned int recv_lanes_grant(const struct recv_xfer *x)
{
        uint64_t by_size = x->nchunks / RECV_LANE_MIN_CHUNKS;
        unsigned int share = x->e->d->cfg.lanes / MAX(x->e->ring.conns, 1u);
        unsigned int n = MIN((unsigned int)x->offer.lanes, share);

        return (unsigned int)MAX(1u, MIN((uint64_t)n, by_size));
}

/* The space is reserved (or the file system cannot reserve): accept. */
static void recv_accept(struct recv_xfer *x, int64_t res)
{
        const struct wire_offer *o = &x->offer;
        struct recv_lane *l0 = x->lane[0];
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

        x->nchunks = DIV_ROUND_UP(o->size, o->chunk_size);
        x->nlanes = recv_lanes_grant(x);
        wire_lane_range(x->nchunks, x->nlanes, 0, &l0->first_seq, &l0->end_seq);
        l0->next_seq = l0->first_seq;
        /* Lane 0 keeps what it has; it is due its part of the transfer's. */
        ring_hold_set_lanes(&l0->hold, x->nlanes);
        recv_set_state(x, RECV_DATA);
        m.accept.lanes = (uint16_t)x->nlanes;
        m.credits = l0->credits_pending;
        r = conn_send_ctrl(&l0->conn, &m);
        if (r < 0) {
                recv_abort(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        l0->credits_pending = 0;
        x->t_start = x->t_last = clock_usec(CLOCK_MONOTONIC);
        recv_arm_timer(x, RECV_STALL_SEC);
        log_info("%s: receiving %s (%" PRIu64 " bytes, %" PRIu64 " chunks of %u over %u lane%s, transfer %" PRIu64 ")",
                 x->peer, o->name, o->size, x->nchunks, o->chunk_size, x->nlanes,
                 x->nlanes == 1 ? "" : "s", o->transfer_id);
}

static void recv_on_reserved(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        conn_unhold(&x->lane[0]->conn);
        if (x->lane[0]->conn.reaping || x->state != RECV_OFFER_WAIT)
                return;
        recv_accept(x, res);
}

void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o)
{
        struct daemon *d = x->e->d;
        enum incoming_verdict iv;
        enum name_verdict nv;
        char text[WIRE_TEXT_MAX + 1];
        int dirfd = x->e->incoming_fd, r;

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
        if (o->chunk_size == 0 || o->chunk_size > x->e->slot_size) {
                recv_abort(x, WIRE_E_PROTOCOL, "chunk size out of range");
                return;
        }
        /* Not DIV_ROUND_UP: size + chunk - 1 would wrap for a hostile size. */
        if (o->size / o->chunk_size + (o->size % o->chunk_size != 0) > UINT32_MAX) {
                recv_abort(x, WIRE_E_TOO_LARGE, "more than 2^32 chunks");
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
        r = io_fallocate(x->e->io, &x->file_req, x->fd, o->size);
        if (r < 0) {
                recv_abort(x, WIRE_E_INTERNAL, strerror(-r));
                return;
        }
        conn_hold(&x->lane[0]->conn);
}
