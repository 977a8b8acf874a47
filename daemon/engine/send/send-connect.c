/*
 * Starting an outgoing transfer and connecting its lanes: lane 0 resolves
 * the peer, connects with a plain hello and makes the offer; once the
 * receiver grants lanes, the others connect with the offer's token. With
 * a key, the offer proves it and derives the session key; the receiver
 * must prove it in its ACCEPT before any data goes out, and each lane
 * hello carries a tag under the session key (wire.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "acl.h"
#include "auth.h"
#include "clock.h"
#include "log.h"
#include "send-int.h"

static void send_lane_drop(struct send_lane *l);

/* Check the receiver's welcome on any lane; 0 or -1 after send_fail. */
static int send_welcome(struct send_lane *l, const void *pdata, size_t plen, struct wire_welcome *w)
{
        struct engine_send *s = sender_of(l->base.x);
        int r;

        r = wire_decode_welcome(pdata, plen, w);
        if (r < 0) {
                send_fail_permanent(s, r == -EPROTONOSUPPORT ? WIRE_E_VERSION : WIRE_E_PROTOCOL,
                                    r == -EPROTONOSUPPORT ? "peer speaks protocol version %u" :
                                    "peer's accept is not an rdmaxfer welcome", w->version);
                return -1;
        }
        /* Lanes may start with nothing: credits follow as the ring lends. */
        if ((l->base.idx == 0 && !l->rejoin && w->credits == 0) || w->slot_size == 0) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "peer granted no credits");
                return -1;
        }
        l->credits = w->credits;
        return 0;
}

/* Whether a new transfer's lanes may go over rail @d: up, its port
 * active, and no lane failed to connect over it lately (send_rail_avoid). */
static bool send_rail_ok(const struct device *d)
{
        return device_usable(d) && d->have_src && d->avoid_until <= clock_usec(CLOCK_MONOTONIC);
}

/* This node's rails that carry connections now. */
static unsigned int send_rails_up(const struct send_env *e)
{
        unsigned int n = 0;

        for (unsigned int i = 0; i < e->ndev; i++)
                n += send_rail_ok(&e->dev[i]);
        return n;
}

/*
 * A later lane of @l's transfer could not connect over its rail (not
 * lane 0's): new transfers leave the rail out for SEND_RAIL_AVOID_SEC, so
 * that the job's retry goes over the rails that work. Its port says it
 * is up, but the way to the peer over it does not (a switch port, a
 * route, a peer that refuses that address of ours). Whether it was such a
 * lane.
 */
static bool send_rail_avoid(struct send_lane *l, const char *what)
{
        struct engine_send *s = sender_of(l->base.x);
        const struct send_env *e = s->env;
        struct device *d;
        char to[80];

        /* A lane joining again goes lane 0's way: nothing to leave out. */
        if (l->base.idx == 0 || s->npairs == 0 || l->rejoin)
                return false;
        d = &e->dev[s->pair[s->lane_pair[l->base.idx]].local];
        if (s->base.lane[0] && d == s->base.lane[0]->conn.env->dev)
                return false;
        d->avoid_until = clock_usec(CLOCK_MONOTONIC) + SEND_RAIL_AVOID_SEC * 1000000ull;
        conn_format_addr((const struct sockaddr *)&s->rail_dst[s->pair[s->lane_pair[l->base.idx]].remote],
                         to, sizeof(to));
        log_warning("rail %s: lane %u of transfer %" PRIu64 " could not connect to %s (%s): new transfers "
                    "leave the rail out for %u s", d->name, l->base.idx, s->id, to, what, SEND_RAIL_AVOID_SEC);
        return true;
}

static bool send_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
        return acl_same_addr((const struct sockaddr *)a, (const struct sockaddr *)b);
}

/* @peer's entry in the rails cache, or NULL. */
static struct send_peer_rails *send_rails_find(struct send_env *e, const struct sockaddr_storage *peer)
{
        for (unsigned int k = 0; k < SEND_PEER_RAILS_MAX && e->peer_rails[k].peer.ss_family; k++)
                if (send_same_addr(&e->peer_rails[k].peer, peer))
                        return &e->peer_rails[k];
        return NULL;
}

/* Remember @peer's rails (an ACCEPT's), most recent first; what the pairs
 * to a rail it still names delivered stays. */
static struct send_peer_rails *send_rails_remember(struct send_env *e, const struct sockaddr_storage *peer,
                                                   const struct sockaddr_storage *rails, unsigned int n)
{
        struct send_peer_rails *t = e->peer_rails, was;
        unsigned int i;

        for (i = 0; i < SEND_PEER_RAILS_MAX - 1; i++)
                if (t[i].peer.ss_family == 0 || send_same_addr(&t[i].peer, peer))
                        break;
        was = t[i].peer.ss_family && send_same_addr(&t[i].peer, peer) ? t[i] : (struct send_peer_rails){ 0 };
        memmove(&t[1], &t[0], i * sizeof(t[0]));
        t[0] = (struct send_peer_rails){ .peer = *peer, .nrails = MIN(n, (unsigned int)RAILS_MAX) };
        memcpy(t[0].rail, rails, t[0].nrails * sizeof(rails[0]));
        for (unsigned int j = 0; j < t[0].nrails; j++)
                for (unsigned int w = 0; w < was.nrails; w++)
                        if (send_same_addr(&was.rail[w], &t[0].rail[j]))
                                for (unsigned int l = 0; l < RAILS_MAX; l++)
                                        t[0].rate[l][j] = was.rate[l][w];
        return &t[0];
}

/*
 * Lane 0's way while our first rail carries nothing (its port down): from
 * another rail of ours up, to a rail of the peer's in its subnet, as the
 * peer named them in an earlier ACCEPT. 0, or -ENOENT (lane 0 goes as
 * ever, and fails as a single rail would).
 */
static int send_rails_detour(const struct engine_send *s, const struct device **src,
                             const struct sockaddr_storage **dst)
{
        const struct send_env *e = s->env;

        if (e->ndev < 2 || send_rail_ok(&e->dev[0]))
                return -ENOENT;
        for (unsigned int k = 0; k < SEND_PEER_RAILS_MAX && e->peer_rails[k].peer.ss_family; k++) {
                const struct send_peer_rails *p = &e->peer_rails[k];

                if (!acl_same_addr((const struct sockaddr *)&p->peer, (const struct sockaddr *)&s->dst))
                        continue;
                for (unsigned int i = 1; i < e->ndev; i++) {
                        const struct device *d = &e->dev[i];

                        if (!send_rail_ok(d))
                                continue;
                        for (unsigned int j = 0; j < p->nrails; j++) {
                                if (rails_same_subnet((const struct sockaddr *)&d->src,
                                                      (const struct sockaddr *)&p->rail[j], d->prefix)) {
                                        *src = d;
                                        *dst = &p->rail[j];
                                        return 0;
                                }
                        }
                }
                return -ENOENT;
        }
        return -ENOENT;
}

/*
 * The first ACCEPT named the receiver's rails: pair ours with them
 * (rails_pair), lane 0's way first, for the later lanes to connect over.
 * No pairs beyond lane 0's (a rail of ours down, theirs in no subnet of
 * ours): every lane goes lane 0's way, as with one rail.
 */
/* "0101": the pair each of @n lanes goes over, into @buf. */
static const char *send_lane_pairs_str(const struct engine_send *s, unsigned int n, char buf[WIRE_LANES_MAX + 1])
{
        n = MIN(n, (unsigned int)WIRE_LANES_MAX);
        for (unsigned int k = 0; k < n; k++)
                buf[k] = (char)('0' + s->lane_pair[k]);
        buf[n] = '\0';
        return buf;
}

static void send_rails_pair(struct engine_send *s, const struct wire_accept *a)
{
        struct send_env *e = s->env;
        const struct device *d0 = s->base.lane[0]->conn.env->dev;
        struct rails_local local[RAILS_MAX];
        unsigned int nlocal = MIN(e->ndev, (unsigned int)RAILS_MAX), nremote = 0;
        struct send_peer_rails *known;
        uint64_t rate[RAILS_MAX];
        char lanes[WIRE_LANES_MAX + 1];

        s->npairs = 0;
        /* Rails we did not ask for are not ours to connect to. */
        if (!(a->flags & WIRE_ACCEPT_RAILS) || !(s->offer.flags & WIRE_OFFER_RAILS) || !d0)
                return;
        for (unsigned int i = 0; i < nlocal; i++)
                local[i] = (struct rails_local){ .addr = e->dev[i].src, .prefix = e->dev[i].prefix,
                                                 .up = send_rail_ok(&e->dev[i]) };
        for (unsigned int j = 0; j < a->nrails && j < RAILS_MAX; j++)
                wire_hop_sockaddr(&a->rails[j], &s->rail_dst[nremote++]);
        known = send_rails_remember(s->env, &s->dst, s->rail_dst, nremote);
        s->npairs = rails_pair(local, nlocal, d0->idx, s->rail_dst, nremote, s->pair);
        /* Lane 0's way is where it is connected: the address it went to. */
        if (s->npairs > 0) {
                const struct sockaddr *pa = rdma_get_peer_addr(s->base.lane[0]->conn.id);

                memset(&s->rail_dst[s->pair[0].remote], 0, sizeof(s->rail_dst[0]));
                memcpy(&s->rail_dst[s->pair[0].remote], pa,
                       pa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
        }
        if (s->npairs < 2) {
                s->npairs = 0;
                log_debug("%s: transfer %" PRIu64 ": one rail pair of %u rail(s) here and %u there", s->base.peer,
                          s->id, nlocal, nremote);
                return;
        }
        /* Lanes by what each pair delivered (its receiver's rail named
         * by address: the cache keeps what the pairs to it measured). */
        for (unsigned int p = 0; p < s->npairs; p++)
                rate[p] = known->rate[s->pair[p].local][s->pair[p].remote];
        rails_assign(rate, s->npairs, MIN(a->lanes, (unsigned int)WIRE_LANES_MAX), s->lane_pair);
        log_debug("%s: transfer %" PRIu64 ": %u rail pairs of %u rail(s) here and %u there; lanes over pairs %s",
                  s->base.peer, s->id, s->npairs, nlocal, nremote, send_lane_pairs_str(s, a->lanes, lanes));
}

/* Whether another send moves data beside @s's. */
static bool send_rails_shared(const struct engine_send *s)
{
        for (const struct xfer *x = s->env->xe->xfers[XFER_SEND]; x; x = x->next)
                if (x != &s->base && (x->state == XFER_DATA || x->state == XFER_FINISHING))
                        return true;
        return false;
}

/*
 * A file's lanes are all acknowledged: what each rail pair delivered,
 * its lanes' bytes over the time from its first lane's first chunk to
 * its last lane's last acknowledgement (a lane's connecting is not the
 * rail's speed), into the peer's rails, as an average leaning on the
 * newest: a rail that slowed down gets fewer lanes from the next transfer
 * on. Lanes that move data as fast as each other (the CPU, not the
 * links, the limit) deliver in proportion to their number: the split
 * stays, and costs nothing there. Only files that gave each pair
 * SEND_RAILS_MEASURE_MIN bytes (the others say more about latency than
 * about the rails), and that no other send shared the rails with when
 * they began or ended (what they delivered would say as much about the
 * others' lanes).
 */
void send_rails_measure(struct engine_send *s)
{
        uint64_t bytes[RAILS_MAX] = { 0 }, begin[RAILS_MAX], end[RAILS_MAX] = { 0 };
        const struct xfer *b = &s->base;
        struct send_peer_rails *known;

        if (s->npairs < 2 || s->rails_shared || send_rails_shared(s) ||
            !(known = send_rails_find(s->env, &s->dst)))
                return;
        for (unsigned int p = 0; p < RAILS_MAX; p++)
                begin[p] = UINT64_MAX;
        for (unsigned int k = 0; k < b->nlanes; k++) {
                const struct send_lane *l = b->lane[k] ? send_lane_of(b->lane[k]) : NULL;
                unsigned int p = s->lane_pair[k];

                if (!l)
                        return;
                if (l->t_begin)
                        begin[p] = MIN(begin[p], l->t_begin);
                bytes[p] += l->file_bytes;
                end[p] = MAX(end[p], l->t_acked);
        }
        for (unsigned int p = 0; p < s->npairs; p++)
                if (bytes[p] < SEND_RAILS_MEASURE_MIN || end[p] <= begin[p])
                        return;
        for (unsigned int p = 0; p < s->npairs; p++) {
                uint64_t *r = &known->rate[s->pair[p].local][s->pair[p].remote];
                uint64_t now = bytes[p] * 1000000 / (end[p] - begin[p]);

                *r = *r ? (*r + 3 * now) / 4 : now;
                log_debug("transfer %" PRIu64 ": rail pair %u (%s) delivered %" PRIu64 " bytes at %" PRIu64
                          " KB/s; its rate is %" PRIu64 " KB/s now", s->id, p, s->env->dev[s->pair[p].local].name,
                          bytes[p], now / 1000, *r / 1000);
        }
}

static void send_offer(struct send_lane *l, const void *pdata, size_t plen)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        struct send_env *e = s->env;
        struct wire_offer *o = &s->offer;
        struct wire_welcome w;
        unsigned int sending = 0, rails;

        if (send_welcome(l, pdata, plen, &w) < 0)
                return;
        if ((w.flags & WIRE_WELCOME_AUTH) && e->key->len == 0) {
                send_fail_permanent(s, WIRE_E_AUTH, "peer requires a pre-shared key and key_file is not set");
                return;
        }
        /* Ours would check nothing: not a receiver we can trust with a key's worth of proof. */
        if (!(w.flags & WIRE_WELCOME_AUTH) && e->key->len > 0) {
                send_fail_permanent(s, WIRE_E_AUTH, "receiver failed authentication: it asks for no key proof "
                                    "(is key_file set there?)");
                return;
        }
        s->chunk = MIN(e->slot_size, w.slot_size);
        /* A power of two (ours is, 16 MiB at most), so chunks tile the
         * 1 MiB digest blocks, or blocks the chunks, whatever slot size the
         * receiver names. */
        while (s->chunk & (s->chunk - 1))
                s->chunk &= s->chunk - 1;
        /* The burst is counted in chunks (bucket.h): now we know them. */
        xfer_pace_set(b, s->bwlimit, s->chunk);
        b->size = s->size;
        b->chunk = s->chunk;
        b->nchunks = DIV_ROUND_UP(s->size, s->chunk);
        if (b->nchunks > UINT32_MAX) {
                send_fail_permanent(s, WIRE_E_TOO_LARGE, "file needs more than 2^32 chunks of %u bytes",
                                    s->chunk);
                return;
        }
        memcpy(b->nonce, w.nonce, sizeof(b->nonce));

        *o = (struct wire_offer){
                .transfer_id = s->id,
                .size = s->size,
                .chunk_size = s->chunk,
                /* A tree's first offer says whether the session compares digests. */
                .flags = (uint16_t)((s->tree ? WIRE_OFFER_TREE : 0) | (s->dir ? WIRE_OFFER_DIR : 0) |
                                    (s->relayed ? WIRE_OFFER_RELAYED : 0) |
                                    send_sync_flags(s, s->tree || s->pull || send_sync_wants_digest(s))),
                .file = 0,
                .job_files = s->files,
                .job_bytes = s->job_bytes,
                .mode = s->mode,
                .mtime_ns = s->mtime_ns,
        };
        /* The receiver may grant fewer. */
        for (struct xfer *x = xfer_first(e->xe, XFER_SEND); x; x = x->next)
                sending += x->state != XFER_CLOSING;
        /* A lane with no block of the job's own would carry nothing. With
         * rails, a lane for each at least, however many transfers share
         * the lanes: each transfer then has a lane on every rail. */
        rails = send_rails_up(e);
        xfer_set_lanes(b, (unsigned int)MAX(1u, MIN((uint64_t)MAX(xfer_lanes_share(e->xe, sending),
                                                                  rails > 1 ? rails : 1u),
                                                     wire_blocks(s->job_bytes))));
        o->lanes = (uint16_t)b->nlanes;
        memcpy(o->token, s->token, WIRE_TOKEN_SIZE);
        memcpy(o->source, s->source, WIRE_SOURCE_SIZE);
        if (o->flags & WIRE_OFFER_DIGEST)
                memcpy(o->digest, s->file_digest, WIRE_DIGEST_SIZE);
        send_sparse_offer(s, o);
        /* More rails than lane 0's: the receiver is to name its own. */
        s->npairs = 0;
        if (rails > 1)
                o->flags |= WIRE_OFFER_RAILS;
        /* A deleting tree's rules go first, their hash under the MAC. */
        if (s->rules) {
                o->rules_len = s->rules_len;
                crypto_hash_sha256(o->rules_hash, s->rules, s->rules_len);
                s->rules_sent = 0;
        }
        /* The landing goes first, its hash under the offer's MAC. */
        if (s->land) {
                o->flags |= WIRE_OFFER_LAND;
                memcpy(o->land_hash, s->land_hash, WIRE_LAND_HASH_SIZE);
                s->land_sent = 0;
        }
        /* The route goes first, its hash in the offer, under the MAC. */
        if (s->route_hops) {
                o->flags |= WIRE_OFFER_ROUTE;
                wire_route_hash(s->route, s->route_hops, o->route_hash);
                s->route_pending = true;
                s->route_sent = 0;
        }
        snprintf(o->name, sizeof(o->name), "%s", s->name);
        if (e->key->len) {
                struct rdma_cm_id *id = l->base.conn.id;
                struct wire_binding bd;

                if (wire_binding_set(&bd, rdma_get_local_addr(id), rdma_get_peer_addr(id)) < 0) {
                        send_fail_permanent(s, WIRE_E_INTERNAL, "the connection's addresses are not IP addresses");
                        return;
                }
                auth_nonce(o->nonce);
                auth_offer_mac(e->key, b->nonce, &bd, o, o->mac);
                if (auth_session_derive(&b->session, e->key, b->nonce, o) < 0) {
                        send_fail(s, WIRE_E_INTERNAL, "deriving the session key failed");
                        return;
                }
        }
        xfer_set_state(b, XFER_OFFER);
        xfer_arm_deadline(b);
        send_post_offer(s);
}

/* Lane @k's run of this file, from @resume chunks in; it is started (a
 * new lane connects). 0, -errno, or 1 when the transfer failed already. */
static int send_lane_start(struct engine_send *s, unsigned int k, uint32_t resume)
{
        struct xfer *b = &s->base;
        struct send_lane *n = b->lane[k] ? send_lane_of(b->lane[k]) : NULL;
        int r;

        if (!n) {
                r = send_lane_new(s, k, &n);
                if (r != 0)
                        return r;
                xfer_lane_add(&n->base);
                r = xfer_lane_run(&n->base);
                if (r == 0 && send_lane_resume(n, resume) < 0)
                        return 1;
                if (r == 0)
                        r = send_lane_connect(n);
                if (r < 0)
                        send_lane_drop(n);
                return r;
        }
        r = xfer_lane_run(&n->base);
        if (r < 0)
                return r;
        return send_lane_resume(n, resume) < 0 ? 1 : 0;
}

void send_on_accept(struct send_lane *l, const struct wire_accept *a)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        uint64_t kept = 0;
        bool has_source;
        int r;

        /* Nothing goes out before the receiver proved the key too. */
        if (!s->accept_waiting && b->session.on && auth_accept_verify(&b->session, a) < 0) {
                send_fail_permanent(s, WIRE_E_AUTH, "receiver failed authentication: its accept does not prove "
                                    "the pre-shared key");
                return;
        }
        if (a->file != s->file) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver accepted file %u, file %u was offered",
                                    a->file + 1, s->file + 1);
                return;
        }
        if (a->file == 0 && !s->accept_waiting)
                send_rails_pair(s, a);
        /* A later file's lanes start afresh once the file before is all
         * acknowledged: its offer may go before (send_sent); then this
         * runs again, from send.c. */
        if (s->file > 0 && s->ndone < b->nlanes) {
                s->accept = *a;
                s->accept_waiting = true;
                return;
        }
        s->accept_waiting = false;
        /* Every lane must have a block of its own to carry, over the job;
         * the session's later files keep the lanes the first was granted. */
        if (s->file == 0 ? a->lanes == 0 || a->lanes > b->nlanes || a->lanes > MAX(wire_blocks(s->job_bytes), 1u) :
            a->lanes != b->nlanes) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver granted %u lanes of %u", a->lanes,
                                    b->nlanes);
                return;
        }
        /* A tree the receiver kept from an earlier attempt: DEST's ACCEPT
         * says how many of its entries are there (wire.h). */
        if (a->flags & WIRE_ACCEPT_RESUMED) {
                if (!s->tree || s->file != 0 || a->resume[0] == 0 || a->resume[0] > s->files ||
                    memcmp(s->source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) == 0) {
                        send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver continues a tree at entry %u of %u",
                                            a->resume[0] + 1, s->files);
                        return;
                }
                s->span = a->resume[0];
                if (s->span == s->files)
                        log_info("transfer %" PRIu64 ": %s: the receiver has all %u entries from an earlier "
                                 "attempt (published; its last RESULT was lost)", s->id, s->name, s->files);
                else
                        log_info("transfer %" PRIu64 ": %s: the receiver kept %u of %u entries from an earlier "
                                 "attempt; sending the rest", s->id, s->name, s->span, s->files);
                goto accepted;
        }
        /* Published already: a job of one file only (a session goes on). */
        if (s->files > 1 && (a->flags & ~WIRE_ACCEPT_SKIP) != 0) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver resumes file %u of a job of several",
                                    s->file + 1);
                return;
        }
        /* Where each lane resumes: within its run, only a file whose offer
         * named its source; all of it when published already. */
        has_source = memcmp(s->offer.source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) != 0;
        for (unsigned int k = 0; k < a->lanes; k++) {
                uint64_t first, end;

                wire_lane_range(b->nchunks, s->chunk, a->lanes, k, &first, &end);
                if (a->resume[k] > end - first || (!has_source && a->resume[k] != 0) ||
                    ((a->flags & WIRE_ACCEPT_PUBLISHED) && a->resume[k] != end - first)) {
                        send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver resumes lane %u at chunk %u of %" PRIu64,
                                            k, a->resume[k], end - first);
                        return;
                }
                kept += wire_run_bytes(s->size, s->chunk, first, first + a->resume[k]);
        }
        s->resumed += kept;
        if (kept)
                log_info("transfer %" PRIu64 ": %s: the receiver kept %" PRIu64 " of %" PRIu64 " bytes%s",
                         s->id, s->name, kept, s->size,
                         a->flags & WIRE_ACCEPT_PUBLISHED ? " (published already)" : "; sending the rest");
accepted:
        if (s->file > 0) {
                b->nended = 0;
                for (unsigned int k = 0; k < b->nlanes; k++) {
                        if (b->lane[k] && xfer_lane_next_file(b->lane[k]) < 0) {
                                send_fail(s, WIRE_E_INTERNAL, "file %u: out of memory", s->file + 1);
                                return;
                        }
                }
        }
        /* From here the deadline is on acknowledgements and credits. */
        xfer_arm_deadline(b);
        xfer_grace(b, kept);
        xfer_set_lanes(b, a->lanes);
        xfer_set_state(b, XFER_DATA);
        if (s->file == 0 && s->ops->phase)
                s->ops->phase(s->owner, ENGINE_PHASE_SENDING);
        /* The owner may have cancelled from its callback. */
        if (b->state != XFER_DATA)
                return;
        if (a->flags & WIRE_ACCEPT_SKIP) {
                (void)send_sync_skipped(s, a);
                return;
        }
        s->ndone = 0;
        s->rails_shared = send_rails_shared(s);
        for (unsigned int k = 0; k < b->nlanes && b->state == XFER_DATA; k++) {
                /* RESUMED's resume[0] counts a tree's entries, not DEST's chunks. */
                r = send_lane_start(s, k, a->flags & WIRE_ACCEPT_RESUMED ? 0 : a->resume[k]);
                if (r == 1)
                        return;
                if (r != 0) {
                        send_fail(s, WIRE_E_INTERNAL, "starting lane %u: %s", k, strerror(-r));
                        return;
                }
                /* A run of nothing (a file of fewer chunks than lanes): only its END. */
                if (b->lane[k]->first_seq == b->lane[k]->end_seq)
                        s->ndone++;
        }
        if (b->state != XFER_DATA)
                return;
        if (b->t_start == 0 && s->ndone == b->nlanes)
                b->t_start = b->t_last = clock_usec(CLOCK_MONOTONIC);
        /* A sparse file's lane may find its whole run a hole, and the
         * last of them make the file FINISHING: every lane still posts its END. */
        for (unsigned int k = 0; k < b->nlanes && (b->state == XFER_DATA || b->state == XFER_FINISHING); k++)
                send_pump(send_lane_of(b->lane[k]));
        /* Last: the owner may cancel from its callback. */
        if (s->ndone == b->nlanes && b->state == XFER_DATA) {
                send_verifying(s);
                send_sent(s);
        }
}

/* A lane other than 0 is up: it sends its run as credits come. */
static void send_lane_up(struct send_lane *l, const void *pdata, size_t plen)
{
        struct wire_welcome w;

        if (send_welcome(l, pdata, plen, &w) < 0)
                return;
        xfer_progress(l->base.x);
        if (l->rejoin) {
                if (w.flags & WIRE_WELCOME_ENDED) {
                        send_lane_rejoined_ended(l, w.resume);
                        return;
                }
                /* Its END, and chunks before it, went with the rail (what
                 * was posted but not yet taken in there): the run goes on
                 * from where the receiver has it, and its END again. */
                if (l->base.ended) {
                        l->base.ended = false;
                        l->base.x->nended--;
                }
                (void)send_lane_rewind(l, w.resume);
                return;
        }
        log_debug("%s: transfer %" PRIu64 " lane %u up, %u credits", l->base.x->peer,
                  sender_of(l->base.x)->id, l->base.idx, l->credits);
        send_pump(l);
}

static void send_connect(struct send_lane *l)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        struct send_env *e = s->env;
        struct rdma_conn_param param;
        struct wire_hello h = { .magic = WIRE_MAGIC, .version = WIRE_VERSION };
        uint8_t hbuf[WIRE_HELLO_SIZE];
        struct device *rail;
        int r;

        rail = device_of_verbs(e->dev, e->ndev, l->base.conn.id->verbs);
        if (!rail) {
                send_rail_avoid(l, "routed through another device");
                send_fail(s, WIRE_E_INTERNAL, "peer is reached through device %s, which carries no listen "
                          "address of this daemon (%s%s)", ibv_get_device_name(l->base.conn.id->verbs->device),
                          e->dev[0].name, e->ndev > 1 ? ", ..." : "");
                return;
        }
        /* Its rail's PD, keys and reaper from now on. */
        l->base.conn.env = rail->env;
        b->rails |= 1u << rail->idx;
        b->rail_lanes[rail->idx]++;
        /* Room for every buffer it may grow to. */
        r = conn_setup_qp(&l->base.conn, l->base.hold.cap + CONN_CTRL_BUFS + 2, SEND_CTRL_RECVS + 1,
                          SEND_CTRL_RECVS);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "setting up the queue pair: %s", strerror(-r));
                return;
        }
        if (l->base.idx == 0 && !l->rejoin ? e->key->len > 0 : b->session.on)
                h.flags |= WIRE_HELLO_KEY;
        /* A lane joining the transfer: any but lane 0, or lane 0 again. */
        if (l->base.idx > 0 || l->rejoin) {
                h.flags |= WIRE_HELLO_LANE | (l->rejoin ? WIRE_HELLO_REJOIN : 0);
                h.lane = (uint16_t)l->base.idx;
                memcpy(h.token, s->token, WIRE_TOKEN_SIZE);
        }
        if ((l->base.idx > 0 || l->rejoin) && b->session.on) {
                struct wire_binding bd;

                if (wire_binding_set(&bd, rdma_get_local_addr(l->base.conn.id),
                                     rdma_get_peer_addr(l->base.conn.id)) < 0) {
                        send_fail_permanent(s, WIRE_E_INTERNAL, "lane %u's addresses are not IP addresses",
                                            l->base.idx);
                        return;
                }
                auth_lane_tag(&b->session, &bd, &h, h.tag);
        }
        wire_encode_hello(hbuf, &h);
        conn_param(&param, hbuf, sizeof(hbuf));
        if (rdma_connect(l->base.conn.id, &param)) {
                send_fail(s, WIRE_E_INTERNAL, "rdma_connect: %m");
                return;
        }
        if (l->base.idx == 0 && !l->rejoin)
                xfer_set_state(b, XFER_CONNECTING);
}

static void send_on_cm(struct conn *c, enum rdma_cm_event_type type, int status,
                       const void *pdata, size_t plen)
{
        struct send_lane *l = (struct send_lane *)c;
        struct engine_send *s = sender_of(l->base.x);
        struct wire_reject rj = { 0 };

        if (s->base.state == XFER_CLOSING) {
                if (type == RDMA_CM_EVENT_DISCONNECTED || !l->base.established)
                        conn_reap(c);
                return;
        }
        switch (type) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
                if (rdma_resolve_route(c->id, SEND_RESOLVE_MS))
                        send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_route: %m");
                return;
        case RDMA_CM_EVENT_ROUTE_RESOLVED:
                /* The offer carries the source token (and the sync digest):
                 * lane 0 waits for it. */
                if (l->base.idx == 0 && (!s->src_ready || s->digest_busy)) {
                        s->connect_waiting = true;
                        return;
                }
                send_connect(l);
                return;
        case RDMA_CM_EVENT_ESTABLISHED:
                l->base.established = true;
                if (l->base.idx == 0 && !l->rejoin)
                        send_offer(l, pdata, plen);
                else
                        send_lane_up(l, pdata, plen);
                return;
        case RDMA_CM_EVENT_REJECTED:
                /* A lane over another rail than lane 0's refused (the
                 * peer's allow_peers naming only one of our addresses, say):
                 * the rail is left out and the job retries without it. */
                if ((wire_decode_reject(pdata, plen, &rj) == 0 || rj.magic == WIRE_MAGIC) &&
                    send_rail_avoid(l, wire_status_str(rj.status))) {
                        send_fail(s, WIRE_E_INTERNAL, "refused by peer on a lane over another rail: %s",
                                  wire_status_str(rj.status));
                        return;
                }
                if (wire_decode_reject(pdata, plen, &rj) == 0 || rj.magic == WIRE_MAGIC) {
                        /* Before any offer, the only reason is who holds a key. */
                        if (rj.status == WIRE_E_AUTH && l->base.idx == 0)
                                send_fail_peer(s, rj.status, "refused by peer: %s: %s", wire_status_str(rj.status),
                                               s->env->key->len ?
                                               "the receiver has no pre-shared key, and key_file is set here" :
                                               "the receiver requires a pre-shared key, and key_file is not set here");
                        else
                                send_fail_peer(s, rj.status, "refused by peer: %s", wire_status_str(rj.status));
                        return;
                }
                /* Nobody listens there (yet): a daemon restarting, or not started. */
                send_rail_avoid(l, "connection refused");
                send_fail(s, WIRE_E_INTERNAL, "connection refused (is rdmaxferd listening on %s?)",
                          s->base.peer);
                return;
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_CONNECT_ERROR:
                send_rail_avoid(l, rdma_event_str(type));
                send_fail(s, WIRE_E_INTERNAL, "peer unreachable: %s (%s)%s", rdma_event_str(type),
                          strerror(status < 0 ? -status : status),
                          l->base.idx > 0 && s->npairs > 0 ? " on a lane over another rail" : "");
                return;
        case RDMA_CM_EVENT_DISCONNECTED:
                /* A lane the receiver let go (its rail failed there): joins again. */
                if (send_lane_lost(l, WIRE_E_PROTOCOL, "peer disconnected"))
                        return;
                l->base.established = false;
                send_fail(s, WIRE_E_PROTOCOL, "peer disconnected");
                return;
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
                send_fail(s, WIRE_E_INTERNAL, "RDMA device removed");
                return;
        default:
                return;
        }
}

const struct conn_ops send_conn_ops = {
        .cm_event = send_on_cm,
        .wc = send_on_wc,
        .wc_batch_end = send_on_batch_end,
        .reaped = xfer_lane_reaped,
};

/*
 * Lane @l's rail is gone (@why): its connection torn down here, it joins
 * again over rail pair @pair (WIRE_HELLO_REJOIN), and the receiver's
 * WELCOME says where its run goes on (send_lane_rewind). Its buffers stay
 * as they are until then: what was posted is not known to have arrived.
 */
static void send_lane_rejoin(struct send_lane *l, unsigned int pair, const char *why)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        const struct device *lost = l->base.conn.env->dev, *via = &s->env->dev[s->pair[pair].local];

        log_notice("%s: transfer %" PRIu64 ": lane %u lost rail %s (%s); it joins again over %s", b->peer, s->id,
                   l->base.idx, lost->name, why, via->name);
        b->rails_lost |= 1u << lost->idx;
        conn_teardown(&l->base.conn);
        l->base.conn.env = via->env;
        l->base.established = false;
        l->base.broken = false;
        l->credits = 0;
        l->unsignaled = 0;
        l->rejoin = true;
        s->lane_pair[l->base.idx] = (uint8_t)pair;
        if (send_lane_connect(l) < 0)
                send_fail(s, WIRE_E_INTERNAL, "lane %u could not join again: %m", l->base.idx);
}

static bool send_rail_may_rejoin(const struct engine_send *s, const struct conn_env *on);

bool send_lane_lost(struct send_lane *l, unsigned int status, const char *why)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);

        if (!b->lane[0] || s->rejoins >= 2 * b->nlanes || l->rejoin)
                return false;
        /* Waiting already: what follows the break is the same break. */
        if (l->base.broken)
                return true;
        /* Lane 0's rail fails it only by its port or device (send_rail_lost
         * from the device layer), whose word may come a little after the
         * break: the lane waits for it where other rails could stand in. */
        if (l->base.idx == 0 || l->base.conn.env == b->lane[0]->conn.env) {
                if (!send_rail_may_rejoin(s, l->base.conn.env))
                        return false;
                xfer_lane_wait_rail(&l->base, status, why);
                return true;
        }
        return send_rail_lost(b, l->base.conn.env, why);
}

void send_rail_silent(struct xfer_lane *b, unsigned int status, const char *text)
{
        send_fail(sender_of(b->x), status, "%s", text);
}

/* A rail pair whose rail here is not @on's and is up: the way lanes
 * lost with @on join again (lane 0's first); -1 if none. */
static int send_rejoin_pair(const struct engine_send *s, const struct conn_env *on)
{
        const struct send_env *e = s->env;
        unsigned int p0 = s->lane_pair[0];

        for (unsigned int i = 0; i < s->npairs; i++) {
                unsigned int p = (p0 + i) % s->npairs;
                const struct device *d = &e->dev[s->pair[p].local];

                if (d->env != on && send_rail_ok(d))
                        return (int)p;
        }
        return -1;
}

/* One file's data (not a session's, a relay's, a chain's, a sparse
 * file's), over more than one rail pair, one not @on's still up: lanes
 * lost with @on may join again. */
static bool send_rail_may_rejoin(const struct engine_send *s, const struct conn_env *on)
{
        return s->base.state == XFER_DATA && s->files == 1 && !s->tree && !s->src_ops && !s->pack_mem &&
               !s->route_hops && !(s->offer.flags & WIRE_OFFER_SPARSE) && s->npairs >= 2 &&
               send_rejoin_pair(s, on) >= 0;
}

bool send_rail_lost(struct xfer *b, const struct conn_env *on, const char *text)
{
        struct engine_send *s = sender_of(b);
        int p;

        /* Every lane's run and END sent, the verdict to come on lane 0,
         * which is not on the rail lost: nothing more goes on the others. */
        if (b->state == XFER_FINISHING && s->files == 1 && b->lane[0] && b->lane[0]->conn.env != on &&
            b->lane[0]->established && s->npairs >= 2) {
                for (unsigned int k = 1; k < b->nlanes; k++) {
                        if (b->lane[k] && b->lane[k]->conn.env == on) {
                                b->rails_lost |= 1u << b->lane[k]->conn.env->dev->idx;
                                conn_teardown(&b->lane[k]->conn);
                                b->lane[k]->conn.env = b->lane[0]->conn.env;
                                b->lane[k]->established = false;
                                b->lane[k]->broken = false;
                        }
                }
                log_notice("%s: transfer %" PRIu64 ": lost a rail (%s) with every chunk sent; waiting for the "
                           "verdict on lane 0", b->peer, s->id, text);
                return true;
        }
        if (!send_rail_may_rejoin(s, on))
                return false;
        p = send_rejoin_pair(s, on);
        /* A lane that ended, or is joining or reading back: as before. */
        for (unsigned int k = 0; k < b->nlanes; k++) {
                const struct send_lane *l = b->lane[k] ? send_lane_of(b->lane[k]) : NULL;

                if (!l || (l->base.conn.env == on && (l->rejoin || l->rehashing || !l->base.established)))
                        return false;
        }
        for (unsigned int k = 0; k < b->nlanes && b->state == XFER_DATA; k++) {
                if (b->lane[k]->conn.env == on) {
                        s->rejoins++;
                        send_lane_rejoin(send_lane_of(b->lane[k]), (unsigned int)p, text);
                }
        }
        return true;
}

/* A lane whose connection could not even be created: gone at once. */
static void send_lane_drop(struct send_lane *l)
{
        struct xfer *b = l->base.x;

        b->lane[l->base.idx] = NULL;
        b->nlive--;
        ring_hold_leave(&l->base.hold, b->ring);
        send_lane_free(&l->base);
}

int send_lane_connect(struct send_lane *l)
{
        struct xfer *b = l->base.x;
        struct engine_send *s = sender_of(b);
        struct send_env *e = s->env;
        const struct device *src = &e->dev[0];
        const struct sockaddr_storage *dst = &s->dst;
        struct rdma_cm_id *id;

        if (rdma_create_id(e->ch, &id, NULL, RDMA_PS_TCP))
                return -errno;
        conn_init(&l->base.conn, e->xe->conn, &send_conn_ops, id);
        snprintf(l->base.conn.peer, sizeof(l->base.conn.peer), "%s", b->peer);
        /* Before the route is resolved: the route's traffic class (RoCE)
         * or QoS class (InfiniBand) is taken from it then. */
        if (e->cfg.tos >= 0) {
                uint8_t tos = (uint8_t)e->cfg.tos;

                if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos))) {
                        send_fail(s, WIRE_E_INTERNAL, "setting tos %u on the connection: %m", tos);
                        return 0;
                }
        }
        /* Leave from our own address, so the route uses our device: lane
         * 0 from the first rail, the others over their pair's. */
        if ((l->base.idx > 0 || l->rejoin) && s->npairs > 0) {
                const struct rails_pair *p = &s->pair[s->lane_pair[l->base.idx]];

                src = &e->dev[p->local];
                dst = &s->rail_dst[p->remote];
        } else if (l->base.idx > 0 && s->way_src) {
                src = s->way_src;
                dst = &s->way_dst;
        } else if (l->base.idx == 0) {
                if (send_rails_detour(s, &src, &dst) == 0) {
                        char to[80];

                        conn_format_addr((const struct sockaddr *)dst, to, sizeof(to));
                        log_notice("%s: transfer %" PRIu64 ": rail %s is down; connecting over %s to %s",
                                   b->peer, s->id, e->dev[0].name, src->name, to);
                }
                s->way_src = src;
                memcpy(&s->way_dst, dst, sizeof(s->way_dst));
        }
        if (rdma_resolve_addr(id, src->have_src ? (struct sockaddr *)&src->src : NULL,
                              (struct sockaddr *)dst, SEND_RESOLVE_MS))
                send_fail(s, WIRE_E_INTERNAL, "rdma_resolve_addr: %m");
        return 0;
}

/* send_start() failed after admission: no id, nothing on the wire, no
 * callback. */
/*
 * The source identity token: the file's device, inode, size and
 * modification time as they are now, hashed. A receiver resumes only a
 * partial made from the same token, so a file changed in between (a new
 * mtime, or replaced: a new inode) is sent whole.
 */
void send_source_token(const struct statx *stx, uint64_t size, uint8_t out[WIRE_SOURCE_SIZE])
{
        uint64_t f[7];

        f[0] = stx->stx_dev_major;
        f[1] = stx->stx_dev_minor;
        f[2] = stx->stx_ino;
        f[3] = stx->stx_size;
        f[4] = (uint64_t)stx->stx_mtime.tv_sec;
        f[5] = stx->stx_mtime.tv_nsec;
        f[6] = size;
        crypto_generichash(out, WIRE_SOURCE_SIZE, (const uint8_t *)f, sizeof(f), NULL, 0);
}

/* The source token is in, and the holes mapped: lane 0 may connect. */
static void send_source_ready(struct engine_send *s)
{
        struct send_lane *l0;

        s->src_ready = true;
        l0 = s->base.lane[0] ? send_lane_of(s->base.lane[0]) : NULL;
        if (s->connect_waiting && l0 && !s->digest_busy) {
                s->connect_waiting = false;
                send_connect(l0);
        }
}

static void send_on_mapped(struct io_req *req, int64_t res)
{
        struct engine_send *s = container_of(req, struct engine_send, src_req);

        if (!xfer_io_done(&s->base) || s->base.state == XFER_CLOSING)
                return;
        send_sparse_mapped(s, res);
        send_source_ready(s);
}

static void send_on_source(struct io_req *req, int64_t res)
{
        struct engine_send *s = container_of(req, struct engine_send, src_req);

        if (!xfer_io_done(&s->base) || s->base.state == XFER_CLOSING)
                return;
        if (res == 0 && s->land && (s->tree || s->files > 1 || s->route_hops)) {
                /* A landing's tree, files or chain: nothing to resume by
                 * (wire.h, Landing as the user; its mode came with it). */
                if (send_sparse_wanted(s) && send_sparse_start(s, send_on_mapped) == 0)
                        return;
        } else if (res == 0) {
                send_source_token(&s->stx, s->size, s->source);
                if (send_sparse_wanted(s) && send_sparse_start(s, send_on_mapped) == 0)
                        return;
        } else {
                log_debug("transfer %" PRIu64 ": statx of the file: %s; it cannot resume", s->id,
                          strerror((int)-res));
        }
        send_source_ready(s);
}

/* The first file's digest (sync) is in: connect, if that waited for it. */
static void send_on_first_digest(struct engine_send *s)
{
        struct send_lane *l0 = s->base.lane[0] ? send_lane_of(s->base.lane[0]) : NULL;

        /* The receiver's wait starts now, not when the reading did. */
        xfer_arm_deadline(&s->base);
        if (s->connect_waiting && l0 && s->src_ready) {
                s->connect_waiting = false;
                send_connect(l0);
        }
}

static void send_source_start(struct engine_send *s)
{
        static const char empty[] = "";

        s->src_req.done = send_on_source;
        if (io_statx(s->env->xe->io, &s->src_req, s->fd, empty, AT_EMPTY_PATH,
                     &s->stx) < 0) {
                s->src_ready = true;    /* no token: sent whole */
                return;
        }
        xfer_io_start(&s->base, "looking at the file");
}

static void send_undo(struct engine_send *s, struct send_lane *l)
{
        if (l)
                send_lane_drop(l);
        xfer_discard(&s->base);
        safe_close(s->fd);
        send_route_free(s);
        free(s);
}

int send_start(struct send_env *e, const struct engine_send_req *req, const struct engine_send_ops *ops,
               void *owner, const struct send_source_ops *src_ops, void *src, struct engine_send **out)
{
        bool relay = src_ops != NULL;
        bool pull = req->land && req->land->direction == WIRE_LAND_PULL;
        struct engine_send *s;
        struct send_lane *l;
        int r;

        if (req->dst_len > sizeof(s->dst) || !ops || !ops->done || (req->files > 1 && !ops->next) ||
            (req->files > 1 && req->job_bytes < req->size))
                return -EINVAL;
        /* A tree starts with DEST, a directory: nothing to read. */
        if (req->tree && (req->size != 0 || req->files < 2 || !ops->next))
                return -EINVAL;
        /* Deleting is a synced tree's (wire.h, Deleting), or a pulled
         * one's, which the send back deletes with (Pulls). */
        if (req->delete && ((!req->tree && !(req->land && req->land->direction == WIRE_LAND_PULL &&
                                             (req->land->flags & WIRE_LAND_TREE))) ||
                            req->sync == ENGINE_SYNC_NONE))
                return -EINVAL;
        /* A dry run is judged by the receiver itself, never along a chain. */
        if (req->dry_run && (req->route_hops || req->relay_source))
                return -EINVAL;
        /* A chain carries one regular file (wire.h, Relay chains). */
        if (req->route_hops > WIRE_ROUTE_MAX || (req->route_hops && !req->route) ||
            (req->route_hops && ((!req->tree && req->files > 1) || req->sync != ENGINE_SYNC_NONE)))
                return -EINVAL;
        /* Only a relay speaks for another's source (its offer says
         * RELAYED): a file's relay gates on what it has written, a tree's
         * on what it has of the entry coming in (the rest is staged) and
         * gives the origin's token. */
        if (relay && ((!req->tree && req->files > 1) || req->sync != ENGINE_SYNC_NONE))
                return -EINVAL;
        if (req->relay_source && ((!relay && !req->tree) || req->tree_token || req->sync != ENGINE_SYNC_NONE))
                return -EINVAL;
        /* A landing is of regular files, or one tree, to one peer; one
         * regular file may go down a chain, resuming nothing; files to one
         * peer may sync, and a push be a dry run, deleting too (wire.h). */
        if (req->land && (((relay || req->route_hops) && (req->tree || req->files > 1)) ||
                          (req->sync != ENGINE_SYNC_NONE && (relay || req->route_hops)) ||
                          (req->dry_run && req->land->direction != WIRE_LAND_PUSH) ||
                          req->relay_source || req->tree_token))
                return -EINVAL;
        /* A pull asks for the peer's file: one, of nothing here (wire.h, Pulls). */
        if (pull && (req->tree || req->files > 1 || req->size != 0 || req->fd >= 0))
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = req->tree || pull ? -1 : fcntl(req->fd, F_DUPFD_CLOEXEC, 3);
        if (!req->tree && !pull && s->fd < 0) {
                r = -errno;
                free(s);
                return r;
        }
        s->tree = req->tree;
        s->dir = req->tree;
        s->pull = pull;
        if (s->tree) {
                s->mode = req->mode & 07777;
                s->mtime_ns = req->mtime_ns;
        } else if (req->land) {
                s->mode = req->mode & 07777;    /* the first file's, to land with */
        }
        s->ops = ops;
        s->owner = owner;
        s->id = req->id;
        s->attempt = req->attempt;
        s->size = req->size;
        s->files = MAX(req->files, 1u);
        s->job_bytes = s->files > 1 ? req->job_bytes : req->size;
        snprintf(s->name, sizeof(s->name), "%s", req->name);
        if (s->tree)
                snprintf(s->dest, sizeof(s->dest), "%s", req->name);
        s->span = 1;
        s->span_bytes = req->size;
        s->sync = req->sync;
        s->no_sparse = req->no_sparse;
        s->delete = req->delete;
        s->dry = req->dry_run;
        s->sync_rh = REHASH_NULL;
        s->pack.held.fd = -1;
        s->env = e;
        s->src_ops = src_ops;
        s->src = src;
        s->relayed = relay || req->relay_source;
        if (req->route_hops) {
                s->route = malloc(req->route_hops * sizeof(*s->route));
                s->hop_bytes = calloc(req->route_hops, sizeof(*s->hop_bytes));
                if (!s->route || !s->hop_bytes) {
                        safe_close(s->fd);
                        send_route_free(s);
                        free(s);
                        return -ENOMEM;
                }
                memcpy(s->route, req->route, req->route_hops * sizeof(*req->route));
                s->route_hops = (uint16_t)req->route_hops;
        }
        if (req->rules) {
                bool ok = req->delete && req->tree && !req->land && req->rules_len > 0 &&
                          req->rules_len <= WIRE_RULES_MAX;

                s->rules = ok ? malloc(req->rules_len) : NULL;
                if (!s->rules) {
                        safe_close(s->fd);
                        send_route_free(s);
                        free(s);
                        return ok ? -ENOMEM : -EINVAL;
                }
                memcpy(s->rules, req->rules, req->rules_len);
                s->rules_len = (uint16_t)req->rules_len;
        }
        if (req->land) {
                uint8_t buf[WIRE_LAND_MAX];
                int n = wire_land_encode(buf, sizeof(buf), req->land);

                s->land = n > 0 ? malloc((size_t)n) : NULL;
                if (!s->land) {
                        safe_close(s->fd);
                        send_route_free(s);
                        free(s);
                        return n < 0 ? n : -ENOMEM;
                }
                memcpy(s->land, buf, (size_t)n);
                s->land_len = (uint16_t)n;
                s->land_xattrs = req->land->direction == WIRE_LAND_PUSH &&
                                 (req->land->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS));
                wire_land_hash(s->land, (size_t)n, s->land_hash);
        }
        /* A tree synced into the peer's drop box: its small files are
         * indexed first, and only those the receiver lacks are sent
         * (wire.h, Index packs). */
        s->index_mode = s->tree && s->sync != ENGINE_SYNC_NONE && !s->dry && !s->land && !s->route_hops &&
                        !s->src_ops && !s->relayed;
        memcpy(&s->dst, req->dst, req->dst_len);
        /* The lanes' token: unguessable, so a random nonce's worth. */
        {
                uint8_t nonce[WIRE_NONCE_SIZE];

                auth_nonce(nonce);
                memcpy(s->token, nonce, WIRE_TOKEN_SIZE);
        }
        s->signal_every = MAX(1u, e->xe->ring[XFER_SEND]->share / 4);
        r = xfer_init(&s->base, e->xe, XFER_SEND, &send_xfer_ops, req->peer);
        if (r < 0) {
                safe_close(s->fd);
                send_route_free(s);
                free(s);
                return r;
        }
        xfer_set_lanes(&s->base, e->xe->cfg.lanes);
        s->bwlimit = req->bwlimit;
        xfer_pace_set(&s->base, s->bwlimit, e->slot_size);
        /* Admission first: nothing has happened if the pool is full. */
        r = send_lane_new(s, 0, &l);
        if (r != 0) {
                send_undo(s, NULL);
                return r == XFER_FULL ? ENGINE_SEND_FULL : r;
        }
        xfer_lane_add(&l->base);
        r = send_lane_connect(l);
        if (r < 0) {
                send_undo(s, l);
                return r;
        }
        /* A tree's DEST carries the job's token (wire.h); a session's
         * first file its source only when it is large enough to resume
         * (send_source_wanted), as every later one. */
        if (req->tree) {
                if (req->tree_token || req->relay_source)
                        memcpy(s->source, req->tree_token ?: req->relay_source, WIRE_SOURCE_SIZE);
                s->src_ready = true;
        } else if (pull) {
                s->src_ready = true;
        } else if (s->src_ops) {
                /* Its file is new in every attempt: the origin's token says
                 * which file it is (wire.h, Relay chains). */
                if (req->relay_source)
                        memcpy(s->source, req->relay_source, WIRE_SOURCE_SIZE);
                s->src_ready = true;
        } else if (s->files > 1 && !send_source_wanted(s)) {
                s->src_ready = true;
        } else {
                send_source_start(s);
        }
        /* Sync by digest: the first file's, before its offer. */
        r = send_sync_digest(s, send_on_first_digest);
        if (r < 0)
                send_fail_permanent(s, WIRE_E_IO, "%s: its digest: %s", s->name, strerror(-r));
        /* Resolving and connecting have their own limits; this one covers
         * a receiver that never answers at all. */
        xfer_arm_deadline(&s->base);
        *out = s;
        return 0;
}
