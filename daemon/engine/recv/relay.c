/*
 * Relay chains (relay.h, wire.h): the downstream transfer of a receiver
 * whose offer named a route, gated on what the upstream has written.
 */

#include <errno.h>
#include <ifaddrs.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <event2/event.h>

#include "acl.h"
#include "entlist.h"
#include "incoming.h"
#include "log.h"
#include "pack.h"
#include "recv-int.h"
#include "recv-publish.h"
#include "relay.h"
#include "send.h"

/* Writes of one upstream lane complete out of order only among the slots
 * it holds (at most slot_count, config.c): a window that wide past the
 * first unwritten chunk covers every one in flight. */
#define RELAY_WINDOW            4096u

/* An upstream slot whose chunk, written, the downstream is to send. */
struct relay_held {
        uint64_t seq;
        uint32_t slot;                  /* the upstream lane's index (recv_lane.rs) */
        uint32_t file;                  /* a tree's entry it is of (0 for a file) */
        bool on;
};

/* An entry of a relayed tree, staged here: what the next hop's session
 * offers as its entry of the same index. */
struct relay_entry {
        char *name;                     /* "DEST/a/b" */
        char *target;                   /* a symlink's, or a hard link's name; NULL otherwise */
        uint64_t size, mtime_ns;
        uint32_t mode;
        bool dir;
        bool hard;                      /* with target: a hard link */
};

/* A regular file of a relayed tree, opened on a worker beneath the
 * staging directory (its own descriptor of it): it outlives the relay
 * should the relay go first (r NULL then, and the result is closed). */
struct relay_open {
        struct io_req req;
        struct relay *r;
        int dirfd;
        uint32_t index;
        char rel[WIRE_PATH_MAX + 1];
};

/* One upstream lane's run, and how far it is written; the slots held for
 * the downstream lane of the same run, by seq % nmap (twice the ring:
 * what one lane can have in slots, and in the downstream's buffers). */
struct relay_lane {
        uint64_t first, end;
        uint64_t low;                   /* every chunk of the run before it is written */
        uint64_t win[RELAY_WINDOW / 64];        /* written chunks from low on, by seq % RELAY_WINDOW */
        struct recv_lane *ul;
        struct relay_held *held;        /* NULL until the first is held */
        uint32_t nmap, nheld;
};

struct relay {
        struct recv_env *e;
        struct relay *next;             /* the engine's relays */
        struct recv_xfer *up;           /* NULL once the upstream transfer ended */
        struct engine_send *down;       /* NULL between attempts, once settled, or never started */
        /* What every attempt sends: our own duplicate of the file, and the
         * route after us (total hops, of which have came so far: the
         * first part before the offer, the rest after it; route_hash the
         * offer's), of which the downstream goes to hop[at]. */
        int fd;
        uint64_t id, size;
        uint32_t mode;                  /* a tree's DEST: the upstream offer's */
        uint64_t mtime_ns;
        char name[WIRE_NAME_MAX + 1];
        char peer[XFER_TEXT_MAX + 1];   /* the upstream's, for logs */
        struct wire_hop *hop;
        unsigned int total, have;
        uint8_t route_hash[WIRE_ROUTE_HASH_SIZE];
        unsigned int at;
        char next_hop[WIRE_HOP_STR_MAX];        /* hop[at]'s */
        char first_hop[WIRE_HOP_STR_MAX];       /* hop[0]'s, for the journal */
        uint32_t chunk;                 /* the upstream's */
        uint8_t source[WIRE_SOURCE_SIZE];       /* the upstream offer's: the origin's */
        unsigned int nlanes;
        struct relay_lane lane[WIRE_LANES_MAX];
        bool verified;
        bool settled;
        /* The route's outcome so far (wire_result's hop fields). */
        uint16_t hops, hop_failed, hop_status;
        struct nodeset missing;
        char text[WIRE_TEXT_MAX + 1];
        /* How far each hop got (total of them), told upstream a window
         * a second, from hop window_at on (PROGRESS). */
        uint64_t *hop_bytes;
        unsigned int window_at;
        struct event *tick;
        uint32_t nheld;                 /* upstream slots held, every lane's */
        /* A tree (relay_tree_*): fd is the staging directory; its entries
         * 1 .. nent as they are staged here (ent[i - 1]), of files; the
         * downstream waits (ENGINE_NEXT_LATER) for entry want; a regular
         * file opening, or opened (open_fd, for entry open_index). */
        bool tree;
        bool source_set;                /* the origin gave a token (source not zero) */
        uint32_t files, nent, cap;
        uint64_t job_bytes;
        struct relay_entry *ent;
        uint32_t want;
        struct relay_open *opening;
        int open_fd;
        uint32_t open_index;
        int open_err;
        /* A tree's lone large entry while it comes in (relay_tree_stream):
         * entry stream_index (0: none), its own descriptor of the
         * receiver's file and its offer's fields. The downstream may take
         * it before it is staged, and reads what the lanes' gates say is
         * written; its ENDs wait until it is verified (stream_done). */
        uint32_t stream_index;
        bool stream_done;
        int stream_fd;
        struct relay_entry stream;
        char stream_name[WIRE_PATH_MAX + 1];
        /* A file that lands as its user (wire.h, Landing as the user):
         * the landing, passed on unchanged, and the file's mode; NULL:
         * the drop box. */
        struct wire_landing *land;
};

static void relay_free_lanes(struct relay *r)
{
        for (unsigned int k = 0; k < r->nlanes; k++)
                free(r->lane[k].held);
        free(r->hop);
        free(r->hop_bytes);
        for (uint32_t i = 0; i < r->nent; i++) {
                free(r->ent[i].name);
                free(r->ent[i].target);
        }
        free(r->ent);
        /* An open still on a worker closes what it opens (relay_on_open). */
        if (r->opening)
                r->opening->r = NULL;
        safe_close(r->open_fd);
        safe_close(r->stream_fd);
        free(r->land);
        r->land = NULL;
}

static void relay_free(struct relay *r)
{
        for (struct relay **p = &r->e->relays; *p; p = &(*p)->next) {
                if (*p == r) {
                        *p = r->next;
                        break;
                }
        }
        safe_close(r->fd);
        if (r->tick)
                event_free(r->tick);
        relay_free_lanes(r);
        free(r);
}

/*
 * Every slot held goes back to the upstream (@give_back: the downstream
 * that was to send from them is gone, its queue pairs with it), or is
 * forgotten (the upstream is closing: its lanes' slots go back with them).
 */
static void relay_unhold(struct relay *r, bool give_back)
{
        for (unsigned int k = 0; k < r->nlanes && r->nheld; k++) {
                struct relay_lane *rl = &r->lane[k];

                for (uint32_t j = 0; rl->held && j < rl->nmap; j++) {
                        if (!rl->held[j].on)
                                continue;
                        rl->held[j].on = false;
                        rl->nheld--;
                        r->nheld--;
                        if (give_back && r->up)
                                recv_slot_forwarded(rl->ul, rl->held[j].slot);
                }
        }
}

/* The downstream's lanes look again at what they may read, or END; a
 * resumed one may be waiting to read back what its receiver kept. */
static void relay_pump(struct relay *r)
{
        struct xfer *b;

        if (!r->down)
                return;
        b = &r->down->base;
        for (unsigned int k = 0; k < b->nlanes && b->state != XFER_CLOSING; k++) {
                struct send_lane *l = b->lane[k] ? send_lane_of(b->lane[k]) : NULL;

                if (l && l->rehashing)
                        rehash_kick(&l->rh);
                else if (l)
                        send_pump(l);
        }
}

/* Hop @k did not publish; the first such one says why. */
static void relay_missing(struct relay *r, unsigned int k, unsigned int status, const char *text)
{
        nodeset_add(&r->missing, k);
        if (r->hop_failed)
                return;
        r->hop_failed = (uint16_t)(k + 1);
        r->hop_status = (uint16_t)(status ?: WIRE_E_INTERNAL);
        snprintf(r->text, sizeof(r->text), "%.*s", WIRE_TEXT_MAX, text && text[0] ? text : "failed");
}

/* Every second while the route is at it: how far each hop got, to the
 * upstream sender (wire.h, PROGRESS), for its owner's display. */
static void relay_on_tick(evutil_socket_t fd, short what, void *arg)
{
        static const struct timeval second = { .tv_sec = 1 };
        struct relay *r = arg;
        struct wire_msg m = { .type = WIRE_PROGRESS };
        struct recv_lane *l0;
        struct engine_progress p;

        if (!r->up || r->settled)
                return;
        if (r->down) {
                send_progress(r->down, &p);
                r->hop_bytes[r->at] = p.bytes;
                for (unsigned int k = 0; k < p.hops && r->at + 1 + k < r->total; k++)
                        r->hop_bytes[r->at + 1 + k] = p.hop_bytes[k];
        }
        l0 = recv_lane(r->up, 0);
        if (l0 && !l0->base.conn.reaping && conn_ctrl_free(&l0->base.conn) >= 2 &&
            (r->up->base.state == XFER_DATA || r->up->base.state == XFER_FINISHING)) {
                m.progress.total = (uint16_t)r->total;
                m.progress.first = (uint16_t)r->window_at;
                m.progress.hops = (uint16_t)MIN(r->total - r->window_at, (unsigned int)WIRE_PROGRESS_PART_MAX);
                memcpy(m.progress.bytes, r->hop_bytes + r->window_at, m.progress.hops * sizeof(*r->hop_bytes));
                if (conn_send_ctrl(&l0->base.conn, &m) == 0)
                        r->window_at = r->window_at + m.progress.hops < r->total ? r->window_at + m.progress.hops : 0;
        }
        evtimer_add(r->tick, &second);
}

static void relay_settle(struct relay *r)
{
        r->settled = true;
        if (r->up)
                recv_relay_settled(r->up);
        else
                relay_free(r);
}

static void relay_on_done(void *owner, const struct engine_result *res);
static int relay_tree_next(void *owner, uint32_t index, struct engine_send_file *f);
static int relay_ents_load(struct relay *r, const uint8_t *buf, size_t len);

static const struct send_source_ops relay_source_ops;

static const struct engine_send_ops relay_send_ops = {
        .done = relay_on_done,
};

/* A tree's downstream is a session of its own, asking for each entry. */
static const struct engine_send_ops relay_tree_ops = {
        .next = relay_tree_next,
        .done = relay_on_done,
};

/*
 * Send to hop[at] with the rest of the route; one that cannot even start
 * is missing, and the next is tried. Settled once none is left.
 */
static void relay_try(struct relay *r)
{
        struct engine_send_req req;
        struct sockaddr_storage ss;
        char text[WIRE_TEXT_MAX + 1];
        int rc;

        for (; r->at < r->total; r->at++) {
                wire_hop_str(&r->hop[r->at], r->next_hop, sizeof(r->next_hop));
                req = (struct engine_send_req){
                        .id = r->id,
                        .fd = r->fd,
                        .size = r->size,
                        .name = r->name,
                        .files = 1,
                        .job_bytes = r->size,
                        .dst = (const struct sockaddr *)&ss,
                        .dst_len = wire_hop_sockaddr(&r->hop[r->at], &ss),
                        .peer = r->next_hop,
                        .route = r->at + 1 < r->total ? &r->hop[r->at + 1] : NULL,
                        .route_hops = r->total - r->at - 1,
                        .relay_source = r->source,
                };
                /* A landing goes on as it came: the user's, resuming nothing. */
                if (r->land) {
                        req.land = r->land;
                        req.mode = r->mode;
                        req.relay_source = NULL;
                }
                /* A tree goes as its own session, each entry once staged
                 * here, or a large one while it comes in (relay_tree_next),
                 * offered relayed with the origin's token: a node that
                 * kept what the hop before it staged (around a failed hop,
                 * or a retry) continues after that, and is asked for the
                 * entries from there on. */
                if (r->tree) {
                        req.fd = -1;
                        req.tree = true;
                        req.files = r->files;
                        req.job_bytes = r->job_bytes;
                        req.mode = r->mode;
                        req.mtime_ns = r->mtime_ns;
                        if (!r->source_set)
                                req.relay_source = NULL;
                        r->want = 0;
                }
                rc = send_start(r->e->send, &req, r->tree ? &relay_tree_ops : &relay_send_ops, r, &relay_source_ops,
                                r, &r->down);
                if (rc == 0) {
                        log_info("%s: relaying %s to %s (%u hop%s after it)", r->peer, r->name, r->next_hop,
                                 req.route_hops, req.route_hops == 1 ? "" : "s");
                        return;
                }
                r->down = NULL;
                snprintf(text, sizeof(text), "cannot relay to it: %s",
                         rc == ENGINE_SEND_FULL ? "no room in the send pool" :
                         rc == ENGINE_SEND_NODEV ? "the RDMA device is gone" : strerror(-rc));
                log_warning("%s: %s: %s", r->peer, r->next_hop, text);
                relay_missing(r, r->at, rc == ENGINE_SEND_FULL ? WIRE_E_BUSY : WIRE_E_INTERNAL, text);
        }
        relay_settle(r);
}

static void relay_on_done(void *owner, const struct engine_result *res)
{
        struct relay *r = owner;

        /* Before down is cleared: should giving a slot back fail the
         * upstream, relay_detach() then leaves r to us (the cancel of a
         * send that has ended does nothing). */
        relay_unhold(r, true);
        r->down = NULL;
        if (res->outcome == ENGINE_DONE) {
                /* hop[at] has it; what became of the hops after it is its word. */
                r->hops = (uint16_t)(r->hops + 1 + res->hops);
                for (unsigned int k = 0; k + r->at + 1 < r->total; k++)
                        if (nodeset_has(&res->hop_missing, k))
                                relay_missing(r, r->at + 1 + k, res->hop_status,
                                              k + 1 == res->hop_failed ? res->hop_text : "not reached");
                relay_settle(r);
                return;
        }
        relay_missing(r, r->at, res->outcome == ENGINE_CANCELLED ? WIRE_E_INTERNAL : res->status,
                      res->outcome == ENGINE_CANCELLED ? "cancelled" : res->text);
        /* Our own transfer failed (we cancelled): the rest is not reached. */
        if (res->outcome == ENGINE_CANCELLED || !r->up) {
                for (unsigned int k = r->at + 1; k < r->total; k++)
                        relay_missing(r, k, WIRE_E_INTERNAL, "not reached");
                relay_settle(r);
                return;
        }
        /* Around the hop that failed, to the one after it. */
        if (r->at + 1 < r->total)
                log_warning("%s: relaying %s to %s failed (%s); going around it", r->peer, r->name,
                            r->next_hop, res->text);
        r->at++;
        relay_try(r);
}

/* The gates of cur's chunks, as the upstream's lanes split them: nothing
 * written yet but what an earlier attempt left in the file. */
static void relay_gates(struct relay *r, const struct recv_xfer *x)
{
        const struct xfer *b = &x->base;

        r->chunk = x->cur->offer.chunk_size;
        for (unsigned int k = 0; k < r->nlanes; k++) {
                struct relay_lane *rl = &r->lane[k];

                wire_lane_range(b->nchunks, r->chunk, r->nlanes, k, &rl->first, &rl->end);
                rl->low = MIN(rl->first + x->resume[k], rl->end);
                memset(rl->win, 0, sizeof(rl->win));
        }
}

void relay_start(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct wire_offer *o = &x->cur->offer;
        struct recv_env *e = recv_xfer_of(b)->env;
        struct relay *r;

        r = calloc(1, sizeof(*r));
        if (r) {
                r->open_fd = -1;
                r->stream_fd = -1;
                r->hop = calloc(x->route.total, sizeof(*r->hop));
                r->hop_bytes = calloc(x->route.total, sizeof(*r->hop_bytes));
        }
        if (!r || !r->hop || !r->hop_bytes) {
                if (r)
                        relay_free_lanes(r);
                free(r);
                recv_fail(x, WIRE_E_INTERNAL, "no memory to relay the file");
                return;
        }
        r->e = e;
        r->up = x;
        r->fd = -1;
        r->id = o->transfer_id;
        r->size = o->size;
        /* The session's first offer: a name of WIRE_NAME_MAX bytes at most. */
        snprintf(r->name, sizeof(r->name), "%.*s", WIRE_NAME_MAX, o->name);
        snprintf(r->peer, sizeof(r->peer), "%s", b->peer);
        /* The first part; the rest follows (relay_route_in). */
        r->total = x->route.total;
        r->have = x->route.hops;
        memcpy(r->hop, x->route.hop, r->have * sizeof(*r->hop));
        memcpy(r->route_hash, o->route_hash, WIRE_ROUTE_HASH_SIZE);
        memcpy(r->source, o->source, WIRE_SOURCE_SIZE);
        r->nlanes = b->nlanes;
        r->next = e->relays;
        e->relays = r;
        x->relay = r;
        wire_hop_str(&r->hop[0], r->first_hop, sizeof(r->first_hop));
        relay_gates(r, x);
        /* A tree's entries are opened beneath its top directory (DEST),
         * which stays the same directory when the tree is renamed into
         * place. */
        r->tree = x->tree;
        for (unsigned int i = 0; i < WIRE_SOURCE_SIZE; i++)
                r->source_set |= r->source[i] != 0;
        if (r->tree) {
                r->files = x->job_files;
                r->job_bytes = x->job_bytes;
                r->mode = o->mode;
                r->mtime_ns = o->mtime_ns;
                /* What an earlier attempt kept here goes on first, under
                 * its indices (recv-partial-tree.c read it back). */
                if (x->ents_lost)
                        log_warning("%s: %s: the list of entries kept with the tree holds fewer than its "
                                    "record counts: the tree is not relayed", r->peer, r->name);
                else if (x->top_fd >= 0 && relay_ents_load(r, x->ents_kept.buf, x->ents_kept.len) == 0)
                        r->fd = fcntl(x->top_fd, F_DUPFD_CLOEXEC, 3);
                entlist_free(&x->ents_kept);
        } else if (!x->published_match && x->cur->fd >= 0) {
                r->fd = fcntl(x->cur->fd, F_DUPFD_CLOEXEC, 3);
                if (x->landing) {
                        r->land = malloc(sizeof(*r->land));
                        if (r->land)
                                *r->land = *x->landing;
                        else
                                r->fd = safe_close(r->fd);
                        r->mode = o->mode;
                }
        }
        r->tick = evtimer_new(e->base, relay_on_tick, r);
        if (r->tick)
                evtimer_add(r->tick, &(const struct timeval){ .tv_sec = 1 });
        if (r->fd < 0) {
                for (unsigned int k = 0; k < r->total; k++)
                        relay_missing(r, k, WIRE_E_INTERNAL, k ? "not reached" :
                                      x->published_match || x->tree_again ?
                                                           "published here by an earlier attempt: not relayed" :
                                      x->ents_lost ? "the list of entries kept with the tree here was lost: not relayed" :
                                      r->tree ? "the tree's directory could not be opened again: not relayed" :
                                                           "the file could not be had again: not relayed");
                r->settled = true;
                return;
        }
        if (r->have == r->total)
                relay_try(r);
}

/* Whether @h is this node: one of its addresses (a rail's listen address,
 * or with the wildcard any address it has), and its port. */
static bool relay_hop_is_self(const struct recv_env *e, const struct wire_hop *h)
{
        struct sockaddr_storage ss;
        struct ifaddrs *ifs, *i;
        bool self = false;

        if (h->port != e->dev[0].cfg.port)
                return false;
        wire_hop_sockaddr(h, &ss);
        if (e->dev[0].have_src) {
                for (unsigned int k = 0; k < e->ndev; k++)
                        if (e->dev[k].have_src &&
                            acl_same_addr((const struct sockaddr *)&ss, (const struct sockaddr *)&e->dev[k].src))
                                return true;
                return false;
        }
        if (getifaddrs(&ifs) < 0)
                return false;
        for (i = ifs; i && !self; i = i->ifa_next)
                self = i->ifa_addr && acl_same_addr((const struct sockaddr *)&ss, i->ifa_addr);
        freeifaddrs(ifs);
        return self;
}

unsigned int relay_route_refused(const struct recv_env *e, const struct wire_hop *hops, unsigned int from,
                                 unsigned int to, char *text, size_t len)
{
        struct sockaddr_storage ss;
        char where[WIRE_HOP_STR_MAX];
        const char *why;

        for (unsigned int k = from; k < to; k++) {
                wire_hop_str(&hops[k], where, sizeof(where));
                wire_hop_sockaddr(&hops[k], &ss);
                if ((why = wire_hop_refused(&hops[k])))
                        snprintf(text, len, "the route's hop %u, %s, is %s", k + 1, where, why);
                else if (wire_route_repeats(hops, k))
                        snprintf(text, len, "the route names %s twice", where);
                else if (relay_hop_is_self(e, &hops[k]))
                        snprintf(text, len, "the route's hop %u, %s, is this node", k + 1, where);
                else if (!acl_allows(&e->cfg.relay_peers, (const struct sockaddr *)&ss))
                        snprintf(text, len, "the route's hop %u, %s, is not in relay_peers here", k + 1, where);
                else
                        continue;
                return WIRE_E_DENIED;
        }
        return WIRE_OK;
}

void relay_route_in(struct relay *r, const struct wire_route *part)
{
        struct recv_xfer *x = r->up;
        uint8_t hash[WIRE_ROUTE_HASH_SIZE];
        char text[WIRE_TEXT_MAX + 1];
        unsigned int status;

        if (!x)
                return;
        /* wire_decode() checked first + hops <= total. */
        if (part->total != r->total || part->first != r->have) {
                snprintf(text, sizeof(text), "a part of the route out of order (hop %u on, of %u; "
                         "expected hop %u on, of %u)", part->first, part->total, r->have, r->total);
                recv_fail(x, WIRE_E_PROTOCOL, text);
                return;
        }
        memcpy(r->hop + r->have, part->hop, part->hops * sizeof(*r->hop));
        status = relay_route_refused(r->e, r->hop, r->have, r->have + part->hops, text, sizeof(text));
        if (status != WIRE_OK) {
                recv_fail(x, status, text);
                return;
        }
        r->have += part->hops;
        if (r->have < r->total)
                return;
        wire_route_hash(r->hop, r->total, hash);
        if (memcmp(hash, r->route_hash, sizeof(hash)) != 0) {
                recv_fail(x, x->env->key->len > 0 ? WIRE_E_AUTH : WIRE_E_PROTOCOL,
                          "the route is not the one the offer names");
                return;
        }
        log_debug("%s: the whole route of %s came: %u hops", r->peer, r->name, r->total);
        if (!r->settled)
                relay_try(r);
}

bool relay_route_whole(const struct relay *r)
{
        return r->have == r->total;
}

/* ---- a tree ---- */

/* On a worker: entry open->index's file, beneath the tree's top
 * directory, without following a symlink on the way (none is made in
 * the tree until every entry is in, and none is followed after). */
static int64_t relay_open_call(void *arg)
{
        struct relay_open *op = arg;
        char dir[WIRE_PATH_MAX + 1];
        const char *slash = strrchr(op->rel, '/'), *leaf = slash ? slash + 1 : op->rel;
        int dfd = op->dirfd, fd;

        if (slash) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - op->rel), op->rel);
                dfd = incoming_open_beneath(op->dirfd, dir, false);
                if (dfd < 0)
                        return dfd;
        }
        fd = openat(dfd, leaf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        fd = fd < 0 ? -errno : fd;
        if (slash)
                close(dfd);
        return fd;
}

static int relay_open_start(struct relay *r, uint32_t index);

static void relay_on_open(struct io_req *req, int64_t res)
{
        struct relay_open *op = container_of(req, struct relay_open, req);
        struct relay *r = op->r;

        close(op->dirfd);
        if (!r) {
                if (res >= 0)
                        close((int)res);
                free(op);
                return;
        }
        r->opening = NULL;
        r->open_index = op->index;
        if (res >= 0)
                r->open_fd = (int)res;
        else
                r->open_err = (int)res;
        free(op);
        if (!r->down || !r->want)
                return;
        /* A new attempt (around a failed hop) asks for another entry. */
        if (r->want != r->open_index) {
                int rc;

                safe_close(r->open_fd);
                r->open_fd = -1;
                r->open_index = r->want;
                rc = relay_open_start(r, r->want);
                r->open_err = rc < 0 ? rc : 0;
                if (rc == 0)
                        return;
        }
        send_resume(r->down);
}

/* Open entry @index's file on a worker; its result comes to next() again. */
static int relay_open_start(struct relay *r, uint32_t index)
{
        const struct relay_entry *en = &r->ent[index - 1];
        struct relay_open *op;
        const char *dest = r->name;
        size_t dlen = strlen(dest);
        int rc;

        if (r->opening)
                return 0;       /* one at a time: next() asks for them in order */
        /* The receiver held every entry beneath DEST before it staged it. */
        if (strncmp(en->name, dest, dlen) != 0 || en->name[dlen] != '/')
                return -EINVAL;
        op = calloc(1, sizeof(*op));
        if (!op)
                return -ENOMEM;
        op->dirfd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
        if (op->dirfd < 0) {
                rc = -errno;
                free(op);
                return rc;
        }
        op->r = r;
        op->index = index;
        /* Beneath DEST: what follows "DEST/" in the entry's name. */
        snprintf(op->rel, sizeof(op->rel), "%s", en->name + dlen + 1);
        op->req.done = relay_on_open;
        rc = io_call(r->e->io, &op->req, relay_open_call, op);
        if (rc < 0) {
                close(op->dirfd);
                free(op);
                return rc;
        }
        r->opening = op;
        return 0;
}

int recv_link_fd(const char *target)
{
        size_t len = strlen(target);
        int fd = memfd_create("rdmaxfer-link", MFD_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (write(fd, target, len) != (ssize_t)len) {
                close(fd);
                return -EIO;
        }
        return fd;
}

/* The downstream session asks for entry @index (1 .. files - 1). */
static int relay_tree_next(void *owner, uint32_t index, struct engine_send_file *f)
{
        struct relay *r = owner;
        const struct relay_entry *en;
        int fd, rc;

        if (index == 0 || index >= r->files)
                return -EINVAL;
        if (index > r->nent && index == r->stream_index) {
                /* Coming in: read as far as it is written (relay_readable). */
                fd = fcntl(r->stream_fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
                en = &r->stream;
                *f = (struct engine_send_file){ .fd = fd, .size = en->size, .name = en->name, .mode = en->mode,
                                                .mtime_ns = en->mtime_ns };
                log_debug("%s: relaying %s while it comes in", r->peer, en->name);
                return 0;
        }
        if (index > r->nent) {
                r->want = index;
                return ENGINE_NEXT_LATER;
        }
        en = &r->ent[index - 1];
        *f = (struct engine_send_file){
                .fd = -1,
                .size = en->size,
                .name = en->name,
                .dir = en->dir,
                .link = en->target != NULL,
                .hard = en->hard,
                .mode = en->mode,
                .mtime_ns = en->mtime_ns,
        };
        if (en->dir)
                return 0;
        if (en->target) {
                fd = recv_link_fd(en->target);
                if (fd < 0)
                        return fd;
                f->fd = fd;
                return 0;
        }
        if (r->open_index == index && (r->open_fd >= 0 || r->open_err)) {
                rc = r->open_err;
                f->fd = r->open_fd;
                r->open_fd = -1;
                r->open_err = 0;
                r->open_index = 0;
                return rc < 0 ? rc : 0;
        }
        /* Another entry's, left by an attempt that ended: not this one. */
        safe_close(r->open_fd);
        r->open_fd = -1;
        r->open_err = 0;
        r->open_index = 0;
        rc = relay_open_start(r, index);
        if (rc < 0)
                return rc;
        r->want = index;
        return ENGINE_NEXT_LATER;
}

static int relay_entry_add(struct relay *r, const struct entlist_entry *e)
{
        const char *target = e->type == PACK_LINK ? e->target : NULL;
        struct relay_entry *en;

        if (r->nent + 1 >= r->files)
                return -EMSGSIZE;
        if (r->nent == r->cap) {
                uint32_t cap = r->cap ? 2 * r->cap : 64;
                struct relay_entry *n = reallocarray(r->ent, cap, sizeof(*n));

                if (!n)
                        return -ENOMEM;
                r->ent = n;
                r->cap = cap;
        }
        en = &r->ent[r->nent];
        *en = (struct relay_entry){ .size = e->size, .mode = e->mode, .mtime_ns = e->mtime_ns,
                                    .dir = e->type == PACK_DIR, .hard = (e->flags & PACK_F_HARD) != 0 };
        en->name = strndup(e->name, e->name_len);
        if (target)
                en->target = strndup(target, (size_t)e->size);
        if (!en->name || (target && !en->target)) {
                free(en->name);
                free(en->target);
                return -ENOMEM;
        }
        r->nent++;
        return 0;
}

int relay_ents_add(struct entlist *out, const struct recv_file *f)
{
        const struct wire_offer *o = &f->offer;
        struct entlist_entry en = { .name = o->name, .name_len = strlen(o->name), .mode = o->mode,
                                    .mtime_ns = o->mtime_ns, .size = o->size, .type = PACK_FILE };
        int rc = 0;

        if (o->flags & WIRE_OFFER_PACK) {
                struct pack_reader pr;
                struct pack_entry pe;

                /* recv-pack.c checked it whole before it unpacked it. */
                pack_reader_init(&pr, f->pack_mem, o->size, o->pack_entries);
                while (rc == 0 && pack_next(&pr, &pe) == PACK_ENTRY) {
                        en = (struct entlist_entry){ .type = pe.type, .flags = pe.flags, .mode = pe.mode,
                                                     .mtime_ns = pe.mtime_ns,
                                                     .size = pe.size, .name = pe.name, .name_len = pe.name_len,
                                                     .target = pe.type == PACK_LINK ? (const char *)pe.data : NULL };
                        rc = entlist_put(out, &en);
                }
                return rc;
        }
        if (o->flags & WIRE_OFFER_LINK) {
                en.type = PACK_LINK;
                en.flags = o->flags & WIRE_OFFER_HARD ? PACK_F_HARD : 0;
                en.mode = 0;
                en.size = strlen(f->link_target);
                en.target = f->link_target;
        } else if (o->flags & WIRE_OFFER_DIR) {
                en.type = PACK_DIR;
                en.size = 0;
        }
        return entlist_put(out, &en);
}

/* Every record of @buf (@len bytes), as the tree's next entries. */
static int relay_ents_load(struct relay *r, const uint8_t *buf, size_t len)
{
        struct entlist_entry en;
        size_t off = 0;
        int rc;

        while ((rc = entlist_next(buf, len, &off, &en)) == 1) {
                rc = relay_entry_add(r, &en);
                if (rc < 0)
                        return rc;
        }
        return rc;
}

void relay_tree_staged(struct relay *r, const struct recv_file *f)
{
        struct entlist one = ENTLIST_NULL;
        int rc;

        if (!r->tree || !r->up || f->offer.file == 0)
                return;
        rc = relay_ents_add(&one, f);
        if (rc == 0)
                rc = relay_ents_load(r, one.buf, one.len);
        entlist_free(&one);
        if (rc < 0) {
                char text[WIRE_TEXT_MAX + 1];

                snprintf(text, sizeof(text), "cannot keep the tree's entries for the next node: %s",
                         strerror(-rc));
                recv_fail(r->up, WIRE_E_INTERNAL, text);
                return;
        }
        if (r->down && r->want && r->want <= r->nent)
                send_resume(r->down);
}

void relay_tree_stream(struct relay *r)
{
        struct recv_xfer *x = r->up;
        const struct recv_file *f = x ? x->cur : NULL;
        const struct wire_offer *o = f ? &f->offer : NULL;
        int fd;

        /* A regular file the next hop's session would offer alone (one a
         * pack would take is read whole by a worker: it waits until it is
         * staged), opened for reading too (recv-file.c). */
        if (!r->tree || !o || r->settled || r->fd < 0 || o->file == 0 || f->skip || f->fd < 0 ||
            (o->flags & (WIRE_OFFER_DIR | WIRE_OFFER_LINK | WIRE_OFFER_PACK)) || o->size <= PACK_FILE_MAX ||
            (fcntl(f->fd, F_GETFL) & O_ACCMODE) != O_RDWR)
                return;
        fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return;
        safe_close(r->stream_fd);
        r->stream_fd = fd;
        r->stream_index = o->file;
        r->stream_done = false;
        snprintf(r->stream_name, sizeof(r->stream_name), "%s", o->name);
        r->stream = (struct relay_entry){ .name = r->stream_name, .size = o->size, .mode = o->mode,
                                          .mtime_ns = o->mtime_ns };
        relay_gates(r, x);
        if (r->down && r->want == o->file)
                send_resume(r->down);
}

/* Whether the downstream's file is one whose bytes are still coming in:
 * a file's, or a tree's entry taken while it streams (the rest of a tree
 * is staged: whole and verified). */
static bool relay_gated(const struct relay *r)
{
        return !r->tree || (r->stream_index && !r->stream_done && r->down && r->down->file == r->stream_index);
}

static bool relay_bit(const struct relay_lane *rl, uint64_t seq)
{
        return rl->win[seq % RELAY_WINDOW / 64] >> (seq % 64) & 1;
}

void relay_written(struct relay *r, uint64_t seq)
{
        struct relay_lane *rl = NULL;
        uint64_t low;

        /* A tree's entries go once staged (relay_tree_staged), but for
         * one taken while it comes in (relay_tree_stream): cur. */
        if (r->tree && (!r->stream_index || r->stream_done || !r->up || r->up->cur->offer.file != r->stream_index))
                return;
        for (unsigned int k = 0; k < r->nlanes; k++)
                if (seq >= r->lane[k].first && seq < r->lane[k].end)
                        rl = &r->lane[k];
        if (!rl || seq < rl->low || seq - rl->low >= RELAY_WINDOW)
                return;
        rl->win[seq % RELAY_WINDOW / 64] |= 1ull << (seq % 64);
        low = rl->low;
        while (rl->low < rl->end && relay_bit(rl, rl->low)) {
                rl->win[rl->low % RELAY_WINDOW / 64] &= ~(1ull << (rl->low % 64));
                rl->low++;
        }
        if (rl->low != low)
                relay_pump(r);
}

bool relay_hold(struct relay *r, struct recv_lane *l, uint32_t i, uint64_t seq)
{
        unsigned int k = l->base.idx;
        struct relay_lane *rl = &r->lane[k];
        struct engine_send *d = r->down;
        struct xfer_lane *dl;
        struct relay_held *h;

        /* Only into a downstream lane whose run is this lane's (the same
         * chunk size and lanes: wire_lane_range), that reads it yet; a
         * tree's downstream, only while it sends the entry coming in (it
         * reads the rest from what is staged). */
        if ((r->tree && !relay_gated(r)) || !d || !r->up || d->base.state != XFER_DATA || d->chunk != r->chunk ||
            d->base.nlanes != r->nlanes || k >= r->nlanes)
                return false;
        dl = d->base.lane[k];
        if (!dl || dl->conn.reaping || dl->first_seq != rl->first || dl->end_seq != rl->end ||
            seq < send_lane_of(dl)->next_read)
                return false;
        /* At most half of the lane's slots: the rest keep its sender going
         * at its own pace while the downstream lags, or stalls until its
         * own deadlines fail it (what lags is read back later instead). */
        if ((rl->nheld + 1) * 2 > l->base.hold.held)
                return false;
        if (!rl->held) {
                rl->nmap = 2 * l->base.x->ring->count;
                rl->held = calloc(rl->nmap, sizeof(*rl->held));
                if (!rl->held)
                        return false;
        }
        h = &rl->held[seq % rl->nmap];
        if (h->on)
                return false;   /* read back from the file, then */
        *h = (struct relay_held){ .seq = seq, .slot = i, .file = r->tree ? r->stream_index : 0, .on = true };
        rl->ul = l;
        rl->nheld++;
        r->nheld++;
        return true;
}

static const uint8_t *relay_slot(void *src, unsigned int k, uint64_t seq)
{
        const struct relay *r = src;
        const struct relay_lane *rl = &r->lane[k];
        const struct relay_held *h;

        if (k >= r->nlanes || !rl->held)
                return NULL;
        h = &rl->held[seq % rl->nmap];
        /* A tree's: held for the entry the downstream sends now (every
         * one held is read before it takes the next: send_on_accept). */
        if (r->tree && (!r->down || h->file != r->down->file))
                return NULL;
        return h->on && h->seq == seq ? recv_slot_data(rl->ul, h->slot) : NULL;
}

static void relay_sent(void *src, unsigned int k, uint64_t seq)
{
        struct relay *r = src;
        struct relay_lane *rl = &r->lane[k];
        struct relay_held *h;

        if (k >= r->nlanes || !rl->held)
                return;
        h = &rl->held[seq % rl->nmap];
        if (!h->on || h->seq != seq)
                return;
        h->on = false;
        rl->nheld--;
        r->nheld--;
        if (r->up)
                recv_slot_forwarded(rl->ul, h->slot);
}

static bool relay_readable(void *src, uint64_t off, uint64_t len)
{
        const struct relay *r = src;
        uint64_t c0 = off / r->chunk, c1 = (off + MAX(len, 1u) - 1) / r->chunk;

        if (!relay_gated(r))
                return true;
        for (unsigned int k = 0; k < r->nlanes; k++) {
                const struct relay_lane *rl = &r->lane[k];

                if (rl->end <= c0 || rl->first > c1)
                        continue;
                if (rl->low < MIN(c1 + 1, rl->end))
                        return false;
        }
        return true;
}

void relay_verified(struct relay *r)
{
        if (!r->tree)
                r->verified = true;
        else if (r->up && r->up->cur->offer.file == r->stream_index)
                r->stream_done = true;
        else
                return;
        relay_pump(r);
}

static bool relay_may_end(void *src)
{
        const struct relay *r = src;

        return r->tree ? !relay_gated(r) : r->verified;
}

/* What the downstream reads through (send.h). */
static const struct send_source_ops relay_source_ops = {
        .readable = relay_readable,
        .slot = relay_slot,
        .sent = relay_sent,
        .may_end = relay_may_end,
};

bool relay_settled(const struct relay *r)
{
        return r->settled;
}

void relay_result(const struct relay *r, struct wire_result *m)
{
        m->hops = r->hops;
        m->hop_missing = r->missing;
        m->hop_failed = r->hop_failed;
        m->hop_status = r->hop_failed ? r->hop_status : 0;
        if (r->hop_failed)
                snprintf(m->text, sizeof(m->text), "%s", r->text);
}

const char *relay_next(const struct relay *r)
{
        return r->first_hop;
}

void relay_detach(struct recv_xfer *x)
{
        struct relay *r = x->relay;

        if (!r)
                return;
        x->relay = NULL;
        r->up = NULL;
        relay_unhold(r, false);
        if (r->down)
                send_cancel(r->down);    /* its done frees r */
        else
                relay_free(r);
}

void relay_free_all(struct recv_env *e)
{
        while (e->relays) {
                struct relay *r = e->relays;

                e->relays = r->next;
                safe_close(r->fd);
                if (r->tick)
                        event_free(r->tick);
                relay_free_lanes(r);
                free(r);
        }
}
