/*
 * A connection request becomes an incoming transfer: the peer's hello and
 * address are checked, a share of the receive ring is taken and posted (the
 * full share, or less while another transfer is lending slots), and
 * the accept carries the credits, the slot size and a fresh nonce for the
 * key proof. Anything refused is refused with a reason in the REJ.
 */

#include <errno.h>
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

void recv_on_connect_request(struct engine *e, struct rdma_cm_id *id, const void *pdata, size_t plen)
{
        struct daemon *d = e->d;
        struct rdma_conn_param param = { 0 };
        struct wire_welcome w = { 0 };
        struct wire_hello h;
        uint8_t wbuf[WIRE_WELCOME_SIZE];
        struct recv_xfer *x;
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

        x = calloc(1, sizeof(*x));
        if (!x) {
                recv_reject(id, WIRE_E_INTERNAL);
                return;
        }
        x->fd = -1;
        x->digest = DIGEST_NULL;
        r = recv_slots_admit(x, &e->ring);
        if (r <= 0) {
                if (r == 0)
                        log_notice("%s: refused: %u transfers already receiving", peer,
                                   e->ring.conns_max);
                recv_slots_free(x);
                free(x);
                recv_reject(id, r == 0 ? WIRE_E_BUSY : WIRE_E_INTERNAL);
                return;
        }
        conn_init(&x->conn, e, &recv_ops, id);
        snprintf(x->conn.peer, sizeof(x->conn.peer), "%s", peer);
        x->next = e->recvs;
        e->recvs = x;
        x->timer = evtimer_new(e->base, recv_on_timer, x);

        /* From here on a failure rejects and then reaps, which returns the slots. */
        /* Room for every slot it may grow to. */
        r = x->timer ? conn_setup_qp(&x->conn, CONN_CTRL_BUFS + 2, x->hold.cap + 1, 0) : -ENOMEM;
        for (uint32_t i = 0; r == 0 && i < x->hold.held; i++)
                r = recv_post_slot(x, i);
        if (r < 0) {
                log_err("%s: setting up the queue pair: %s", peer, strerror(-r));
                goto fail;
        }

        auth_nonce(x->nonce);
        w.magic = WIRE_MAGIC;
        w.version = WIRE_VERSION;
        w.flags = d->key.len ? WIRE_WELCOME_AUTH : 0;
        w.credits = x->hold.held;
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
        recv_arm_timer(x, RECV_OFFER_TIMEOUT_SEC);
        log_debug("%s: accepted connection, %u credits of %u bytes", peer, x->hold.held, e->slot_size);
        return;

fail:
        {
                uint8_t buf[WIRE_REJECT_SIZE];
                struct wire_reject rj = { .magic = WIRE_MAGIC, .version = WIRE_VERSION,
                                          .status = WIRE_E_INTERNAL };

                wire_encode_reject(buf, &rj);
                rdma_reject(id, buf, sizeof(buf));
        }
        x->state = RECV_CLOSING;
        conn_reap(&x->conn);
}
