/*
 * Connecting a job's lanes: lane 0 resolves the peer, connects with a plain
 * hello and makes the offer; once the receiver grants lanes (send.c), the
 * others connect with the offer's token. Also teardown: a job is finished
 * once its last lane is reaped.
 */

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "auth.h"
#include "conn.h"
#include "daemon.h"
#include "digest.h"
#include "engine.h"
#include "engine-private.h"
#include "jobs.h"
#include "log.h"
#include "wire.h"
#include "send.h"

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
        /* About *lanes* queue pairs in all, split between the jobs sending
         * now (this one included); the receiver may grant fewer. */
        {
                unsigned int jobs = 0;

                for (struct sender *o = s->e->senders; o; o = o->next)
                        jobs += o->state != SEND_CLOSING;
                s->nlanes = MAX(1u, s->e->d->cfg.lanes / MAX(jobs, 1u));
                ring_hold_set_lanes(&l->hold, s->nlanes);
        }
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

const struct conn_ops send_ops = {
        .cm_event = send_on_cm,
        .wc = send_on_wc,
        .wc_batch_end = send_on_batch_end,
        .reaped = send_on_reaped,
};

int send_lane_new(struct sender *s, unsigned int idx)
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
