/*
 * A pull (wire.h, Pulls; xferctl get PEER:/PATH DEST): the peer asks for
 * the file at PATH, read as the user its MUNGE credential proves, and
 * this side sends it to the node the pull names (the asking one for
 * xferctl get, another for a copy between two peers), where it lands as
 * that user. The offer is the ask, a file of nothing; it is answered
 * only once the way back has ended:
 *
 *   offer:      SESSION {PULL, the landing}   -> the user it proved
 *               OPEN_READ {PATH}              -> a descriptor, read-only, as the user
 *               statx (a regular file, its size and mode; with
 *               WIRE_LAND_TREE, a directory: its mode and mtime)
 *   a tree:     WALK                          -> the walker's socket (landmsg.h):
 *               its count, then its entries as the send asks for them
 *   meanwhile:  an empty CREDIT every second (recv_tick_start)
 *   back:       a send of that file or tree (send_start), landing as the
 *               user at the asking node (its own landing: back_*), which
 *               lands it
 *   verdict:    that send done: ACCEPT SKIP + RESULT "ok";
 *               failed: REFUSE with its status and reason
 *
 * The send back is this side's own, as a relay's downstream is: the
 * asking side holds its job and retries it; a pull whose asker hangs up
 * cancels its send (recv_pull_detach).
 */

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "landc.h"
#include "landmsg.h"
#include "log.h"
#include "recv-int.h"
#include "recv-publish.h"

/* Entries of a pulled tree read from its walker ahead of the send, at most. */
#define RECV_PULL_AHEAD         64

/* One of them, as the send will take it (engine_send_file). */
struct recv_pull_entry {
        uint8_t kind;                   /* enum landmsg_walk_kind */
        uint32_t mode;
        uint64_t size, mtime_ns;
        int fd;                         /* a FILE's */
        char *name;                     /* "DEST/a/b" */
        char *target;                   /* a symlink's; a hard link's, "DEST/..." */
        uint8_t *xattrs;                /* a FILE's or DIR's attributes (get -X, -A); NULL: none */
        uint16_t xattrs_len;
};

/* The send back; outlives its transfer until the send's done. */
struct recv_pull {
        struct recv_xfer *x;            /* NULL once the pull ended first */
        struct engine_send *down;
        char peer[WIRE_HOP_STR_MAX];
        /* A tree's (get -r): the walker's socket, read as the send takes
         * entries; its count (files: entries + DEST), those read and
         * those taken; whether it said OK; whether next() waits. */
        int walk_fd;
        struct event *walk_ev;
        bool walk_head, walk_end, walk_paused, waiting;
        uint32_t files, read, taken;
        uint64_t job_bytes;
        struct recv_pull_entry ahead[RECV_PULL_AHEAD];
        unsigned int first, n;
        char *cur_name;                 /* the entry next() gave last, and its attributes */
        uint8_t *cur_xattrs;
        char leaf[WIRE_PATH_MAX + 1];   /* DEST's name: the pull's offer's */
        /* Why the tree's send was cancelled here (the walker's word), for
         * the verdict: "" when it was not. */
        unsigned int why_status;
        char why[WIRE_TEXT_MAX + 1];
        struct landmsg m;
};

static void recv_pull_entry_clear(struct recv_pull_entry *en)
{
        safe_close(en->fd);
        free(en->name);
        free(en->target);
        free(en->xattrs);
        *en = (struct recv_pull_entry){ .fd = -1 };
}

static void recv_pull_free(struct recv_pull *p)
{
        while (p->n > 0) {
                recv_pull_entry_clear(&p->ahead[p->first]);
                p->first = (p->first + 1) % RECV_PULL_AHEAD;
                p->n--;
        }
        if (p->walk_ev)
                event_free(p->walk_ev);
        safe_close(p->walk_fd);
        free(p->cur_name);
        free(p->cur_xattrs);
        free(p);
}

/* The attributes the pull asks for (get -X, -A), as the lander's read flags. */
static uint32_t recv_pull_read_flags(const struct recv_xfer *x)
{
        return ((x->landing->flags & WIRE_LAND_XATTRS) ? LANDMSG_OP_XATTRS : 0) |
               ((x->landing->flags & WIRE_LAND_ACLS) ? LANDMSG_OP_ACLS : 0);
}

static bool recv_pull_opening(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state == XFER_OFFER;
}

unsigned int recv_pull_check(struct recv_xfer *x, const struct wire_offer *o, char *text, size_t len)
{
        const struct wire_landing *l = x->landing;
        struct wire_hop from;
        bool listed = false;

        /* Its sync flags (version 26) are the send back's: how the node
         * it goes to keeps what it has. */
        if ((o->flags & ~(WIRE_OFFER_LAND | WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST |
                          WIRE_OFFER_DELETE)) ||
            ((o->flags & WIRE_OFFER_DELETE) && !(l->flags & WIRE_LAND_TREE)) ||
            o->job_files != 1 || o->size != 0 ||
            memcmp(o->source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) != 0 ||
            memcmp(o->digest, (uint8_t[WIRE_DIGEST_SIZE]){ 0 }, WIRE_DIGEST_SIZE) != 0) {
                snprintf(text, len, "a pull asks for one file, with nothing else");
                return WIRE_E_PROTOCOL;
        }
        /* Only to a node the user's credential names: the lander checks
         * that the landing's addresses are the credential's. */
        for (unsigned int k = 0; k < l->naddrs; k++)
                listed |= memcmp(l->addrs[k], l->back_addr, WIRE_ADDR_SIZE) == 0;
        if (!listed) {
                snprintf(text, len, "a pull's credential does not name the node the file is to go to");
                return WIRE_E_PERMISSION;
        }
        /* To another node than the one asking (a copy between two peers):
         * this node passes a file on, as a relay does, under the same
         * policy (relay, relay_peers). */
        if (wire_hop_set(&from, rdma_get_peer_addr(x->base.lane[0]->conn.id)) < 0 ||
            memcmp(from.addr, l->back_addr, WIRE_ADDR_SIZE) != 0) {
                struct wire_hop to = { .port = l->back_port };
                struct sockaddr_storage ss;

                const struct recv_cfg *c = &x->env->cfg;

                memcpy(to.addr, l->back_addr, WIRE_ADDR_SIZE);
                wire_hop_sockaddr(&to, &ss);
                /* relay = peers: among the named hosts, the asker included. */
                if (c->relay == CONFIG_RELAY_NO || wire_hop_refused(&to) ||
                    !acl_allows(&c->relay_peers, (const struct sockaddr *)&ss) ||
                    (c->relay == CONFIG_RELAY_PEERS &&
                     (c->relay_peers.n == 0 ||
                      !acl_allows(&c->relay_peers, rdma_get_peer_addr(x->base.lane[0]->conn.id))))) {
                        snprintf(text, len, "this node sends a file on to another node only as a relay may "
                                 "(relay, relay_peers)");
                        return WIRE_E_DENIED;
                }
        }
        return WIRE_OK;
}

static void recv_pull_on_done(void *owner, const struct engine_result *res)
{
        struct recv_pull *p = owner;
        struct recv_xfer *x = p->x;
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */

        p->down = NULL;
        if (!x) {
                recv_pull_free(p);
                return;
        }
        x->pull = NULL;
        if (x->base.state != XFER_OFFER) {
                recv_pull_free(p);
                return;
        }
        if (res->outcome == ENGINE_DONE) {
                recv_pull_free(p);
                x->pull_bytes = res->bytes;
                x->pull_usec = res->usec;
                /* What the send back kept and deleted there: the pull's
                 * RESULT says so, as a tree's would (wire.h, Pulls). */
                x->pull_skipped = res->skipped;
                x->deleted = res->deleted;
                recv_answer_skip(x);
                return;
        }
        /* Cancelled here for what the walker said: that is why. */
        if (p->why[0])
                snprintf(text, sizeof(text), "%s", p->why);
        else
                snprintf(text, sizeof(text), "sending %s back: %s", x->landing->path,
                         res->outcome == ENGINE_CANCELLED ? "cancelled" : res->text);
        recv_fail(x, p->why[0] ? p->why_status : res->outcome == ENGINE_CANCELLED ? WIRE_E_INTERNAL : res->status,
                  text);
        recv_pull_free(p);
}

static const struct engine_send_ops recv_pull_ops = {
        .done = recv_pull_on_done,
};

static int recv_pull_tree_next(void *owner, uint32_t index, struct engine_send_file *f);

static const struct engine_send_ops recv_pull_tree_ops = {
        .next = recv_pull_tree_next,
        .done = recv_pull_on_done,
};

static struct recv_pull *recv_pull_new(void)
{
        struct recv_pull *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->walk_fd = -1;
        for (unsigned int k = 0; k < RECV_PULL_AHEAD; k++)
                p->ahead[k].fd = -1;
        return p;
}

/* The file (@fd), or with @p's walk the tree, is read: send it back.
 * false when it could not be (@x failed, @p freed). */
static bool recv_pull_send(struct recv_xfer *x, struct recv_pull *p, int fd)
{
        const struct wire_landing *l = x->landing;
        const bool tree = p->walk_fd >= 0;
        struct wire_landing *back;
        struct engine_send_req req;
        struct sockaddr_storage ss;
        struct wire_hop hop = { .port = l->back_port };
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */
        int r;

        back = calloc(1, sizeof(*back));
        if (!back) {
                x->pull = NULL;
                recv_pull_free(p);
                recv_fail(x, WIRE_E_INTERNAL, "out of memory for a pull");
                return false;
        }
        /* Its own landing there: as the user, by the credential the
         * user made for this (a PUSH for that node), at the path they said. */
        back->direction = WIRE_LAND_PUSH;
        back->flags = l->back_flags;
        /* get -X, -A: the send back carries them, the file's or the tree's
         * own in its landing (read as the user with it). */
        if (l->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS)) {
                back->flags |= l->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS);
                back->xattrs_len = x->pull_xattrs_len;
                memcpy(back->xattrs, x->pull_xattrs, x->pull_xattrs_len);
        }
        back->naddrs = 1;
        memcpy(back->addrs[0], l->back_addr, WIRE_ADDR_SIZE);
        memcpy(back->token, l->token, WIRE_TOKEN_SIZE);
        snprintf(back->cred, sizeof(back->cred), "%s", l->back_cred);
        snprintf(back->path, sizeof(back->path), "%s", l->back_path);
        memcpy(hop.addr, l->back_addr, WIRE_ADDR_SIZE);
        wire_hop_str(&hop, p->peer, sizeof(p->peer));
        req = (struct engine_send_req){
                .id = x->cur->offer.transfer_id,
                .fd = fd,
                .size = x->stx.stx_size,
                .name = x->cur->offer.name,
                .files = 1,
                .job_bytes = x->stx.stx_size,
                .mode = x->stx.stx_mode & 07777,
                .dst = (const struct sockaddr *)&ss,
                .dst_len = wire_hop_sockaddr(&hop, &ss),
                .peer = p->peer,
                .bwlimit = l->back_bwlimit,
                .land = back,
                /* Kept up to date there, as the pull asked. */
                .sync = (x->sync & WIRE_OFFER_SKIP_EXISTING) ? ENGINE_SYNC_SKIP_EXISTING :
                        (x->sync & WIRE_OFFER_DIGEST)        ? ENGINE_SYNC_DIGEST :
                        (x->sync & WIRE_OFFER_SYNC)          ? ENGINE_SYNC_SIZE : ENGINE_SYNC_NONE,
        };
        /* A tree mirrored there (version 27): what it has beyond the tree goes. */
        req.delete = tree && (x->sync & WIRE_OFFER_DELETE);
        if (tree) {
                /* DEST, then the walker's entries beneath it as "DEST/...". */
                req.fd = -1;
                req.size = 0;
                req.tree = true;
                req.files = p->files;
                req.job_bytes = p->job_bytes;
                req.mtime_ns = (uint64_t)x->stx.stx_mtime.tv_sec * 1000000000u + x->stx.stx_mtime.tv_nsec;
        }
        p->x = x;
        r = send_start(x->env->send, &req, tree ? &recv_pull_tree_ops : &recv_pull_ops, p, NULL, NULL, &p->down);
        free(back);
        if (r != 0) {
                x->pull = NULL;
                recv_pull_free(p);
                snprintf(text, sizeof(text), "cannot send %s back: %s", l->path,
                         r == ENGINE_SEND_FULL ? "no room in the send pool" :
                         r == ENGINE_SEND_NODEV ? "the RDMA device is gone" : strerror(-r));
                recv_fail(x, r == ENGINE_SEND_FULL ? WIRE_E_BUSY : WIRE_E_INTERNAL, text);
                return false;
        }
        x->pull = p;
        if (tree)
                log_info("%s: %s (%" PRIu32 " entries, %" PRIu64 " bytes) read as %s (uid %u), going back to %s:%s",
                         x->base.peer, l->path, p->files - 1, p->job_bytes, x->land_user,
                         (unsigned int)x->land_uid, p->peer, l->back_path);
        else
                log_info("%s: %s (%" PRIu64 " bytes) read as %s (uid %u), going back to %s:%s", x->base.peer,
                         l->path, (uint64_t)x->stx.stx_size, x->land_user, (unsigned int)x->land_uid, p->peer,
                         l->back_path);
        /* The asker waits for the ACCEPT: it hears that we are at it. */
        recv_tick_start(x);
        return true;
}

/*
 * A pulled tree's walker (landmsg.h, "A tree pulled"): what it writes is
 * read as the send takes it, RECV_PULL_AHEAD entries ahead at most (the
 * walker waits meanwhile). Nothing it says is trusted beyond its form: it
 * is the user's walk.
 */

/* Stop: before the send, the pull fails here; after, the send is
 * cancelled and its verdict says @text. */
static void recv_pull_walk_fail(struct recv_pull *p, unsigned int status, const char *text)
{
        struct recv_xfer *x = p->x;

        if (p->walk_ev)
                event_del(p->walk_ev);
        if (p->down) {
                if (!p->why[0]) {
                        snprintf(p->why, sizeof(p->why), "%s", text);
                        p->why_status = status;
                }
                send_cancel(p->down);
                return;
        }
        if (x)
                x->pull = NULL;
        recv_pull_free(p);
        if (x)
                recv_fail(x, status, text);
}

/* An entry read: kept for next(). -errno or 0. */
static int recv_pull_keep(struct recv_pull *p, const struct landmsg_walk_entry *we, int fd)
{
        const char *leaf = p->leaf;
        struct recv_pull_entry *en = &p->ahead[(p->first + p->n) % RECV_PULL_AHEAD];

        if ((we->kind == LANDMSG_WALK_FILE) != (fd >= 0))
                return -EBADF;
        *en = (struct recv_pull_entry){ .kind = we->kind, .mode = we->mode, .size = we->size,
                                         .mtime_ns = we->mtime_ns, .fd = fd };
        if (asprintf(&en->name, "%s/%s", leaf, we->path) < 0)
                en->name = NULL;
        if (we->kind == LANDMSG_WALK_HARDLINK) {
                if (asprintf(&en->target, "%s/%s", leaf, we->target) < 0)
                        en->target = NULL;
                else
                        en->size = strlen(en->target);
        } else if (we->kind == LANDMSG_WALK_SYMLINK) {
                en->target = strdup(we->target);
        }
        if (we->xattrs_len) {
                en->xattrs = malloc(we->xattrs_len);
                if (en->xattrs) {
                        memcpy(en->xattrs, we->xattrs, we->xattrs_len);
                        en->xattrs_len = we->xattrs_len;
                }
        }
        if (!en->name || (we->target[0] && !en->target) || (we->xattrs_len && !en->xattrs)) {
                en->fd = -1;    /* the caller's still */
                recv_pull_entry_clear(en);
                return -ENOMEM;
        }
        p->n++;
        p->read++;
        return 0;
}

static void recv_pull_on_walk(evutil_socket_t sock, short what, void *arg)
{
        struct recv_pull *p = arg;
        char text[WIRE_PATH_MAX + 512];        /* recv_fail and why cut it to WIRE_TEXT_MAX */
        bool more = false;
        int fd, r;

        while (p->n < RECV_PULL_AHEAD && !p->walk_end) {
                r = landmsg_recv(p->walk_fd, &p->m, &fd);
                if (r == -EAGAIN)
                        break;
                if (r < 0) {
                        snprintf(text, sizeof(text), "%s: the walk of the tree %s", p->x->landing->path,
                                 r == -ECONNRESET ? "ended early" : "said what it may not");
                        recv_pull_walk_fail(p, WIRE_E_INTERNAL, text);
                        return;
                }
                if (p->m.type == LANDMSG_ERROR) {
                        safe_close(fd);
                        snprintf(text, sizeof(text), "%s: %s",
                                 p->m.error.where[0] ? p->m.error.where : p->x->landing->path, p->m.error.text);
                        recv_pull_walk_fail(p, recv_land_status(p->m.error.err), text);
                        return;
                }
                if (!p->walk_head) {
                        safe_close(fd);
                        if (p->m.type != LANDMSG_WALK_HEAD) {
                                recv_pull_walk_fail(p, WIRE_E_INTERNAL, "the walk of the tree did not count first");
                                return;
                        }
                        p->walk_head = true;
                        p->files = p->m.walk_head.entries + 1;
                        p->job_bytes = p->m.walk_head.bytes;
                        /* Failed, p freed; or it runs: entries next. */
                        if (!recv_pull_send(p->x, p, -1))
                                return;
                        continue;
                }
                if (p->m.type == LANDMSG_OK && fd < 0 && p->read == p->files - 1) {
                        p->walk_end = true;
                        break;
                }
                if (p->m.type != LANDMSG_WALK_ENTRY || p->read == p->files - 1) {
                        safe_close(fd);
                        recv_pull_walk_fail(p, WIRE_E_INTERNAL, "the walk of the tree gave other entries than it "
                                            "counted");
                        return;
                }
                r = recv_pull_keep(p, &p->m.walk_entry, fd);
                if (r < 0) {
                        safe_close(fd);
                        recv_pull_walk_fail(p, WIRE_E_INTERNAL, r == -ENOMEM ? "out of memory for a pulled tree"
                                            : "the walk of the tree gave a file without its descriptor");
                        return;
                }
                more = true;
        }
        /* Full, or done: read again once next() took one. */
        p->walk_paused = p->n == RECV_PULL_AHEAD || p->walk_end;
        if (p->walk_paused)
                event_del(p->walk_ev);
        if (more && p->waiting && p->down) {
                p->waiting = false;
                send_resume(p->down);
        }
}

static int recv_pull_tree_next(void *owner, uint32_t index, struct engine_send_file *f)
{
        struct recv_pull *p = owner;
        struct recv_pull_entry *en;

        /* Asked in order, once each: nothing resumes (no tree token). */
        if (index != p->taken + 1 || index >= p->files)
                return -EINVAL;
        if (p->n == 0) {
                if (p->walk_end)
                        return -EINVAL;
                p->waiting = true;
                return ENGINE_NEXT_LATER;
        }
        en = &p->ahead[p->first];
        free(p->cur_name);
        free(p->cur_xattrs);
        p->cur_name = TAKE_PTR(en->name);
        p->cur_xattrs = TAKE_PTR(en->xattrs);
        *f = (struct engine_send_file){ .fd = en->fd, .size = en->size, .name = p->cur_name,
                                        .dir = en->kind == LANDMSG_WALK_DIR,
                                        .link = en->kind == LANDMSG_WALK_SYMLINK || en->kind == LANDMSG_WALK_HARDLINK,
                                        .hard = en->kind == LANDMSG_WALK_HARDLINK,
                                        .mode = en->mode, .mtime_ns = en->mtime_ns, .xattrs = p->cur_xattrs,
                                        .xattrs_len = p->cur_xattrs ? en->xattrs_len : 0 };
        en->fd = -1;
        /* A link's target (a hard link's: its file's name) is its data. */
        if (f->link)
                f->fd = recv_link_fd(en->target);
        recv_pull_entry_clear(en);
        p->first = (p->first + 1) % RECV_PULL_AHEAD;
        p->n--;
        p->taken++;
        if (p->walk_paused && !p->walk_end) {
                p->walk_paused = false;
                event_add(p->walk_ev, NULL);
        }
        return f->fd < 0 && f->link ? f->fd : 0;
}

/* The directory is open (@fd): its walker, as the user. */
static void recv_pull_on_walker(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        struct recv_pull *p;

        if (!recv_pull_opening(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type != LANDMSG_FD || fd < 0) {
                safe_close(fd);
                recv_land_refused(x, "walking the tree", reply);
                return;
        }
        p = recv_pull_new();
        if (!p || fcntl(fd, F_SETFL, O_NONBLOCK) < 0) {
                free(p);
                safe_close(fd);
                recv_fail(x, WIRE_E_INTERNAL, "out of memory for a pulled tree");
                return;
        }
        p->x = x;
        p->walk_fd = fd;
        snprintf(p->leaf, sizeof(p->leaf), "%s", x->cur->offer.name);
        p->walk_ev = event_new(x->env->base, fd, EV_READ | EV_PERSIST, recv_pull_on_walk, p);
        if (!p->walk_ev || event_add(p->walk_ev, NULL) < 0) {
                recv_pull_free(p);
                recv_fail(x, WIRE_E_INTERNAL, "out of memory for a pulled tree");
                return;
        }
        /* Counting may take a while: the asker hears that we are at it. */
        x->pull = p;
        recv_tick_start(x);
}

static void recv_pull_on_stat(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct recv_pull *p;
        int fd = x->pull_fd;
        char text[WIRE_PATH_MAX + 128];       /* recv_fail cuts it to WIRE_TEXT_MAX */

        x->pull_fd = -1;
        if (!recv_pull_opening(x)) {
                safe_close(fd);
                return;
        }
        if (res < 0) {
                safe_close(fd);
                snprintf(text, sizeof(text), "%s: %s", x->landing->path, strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        if (S_ISDIR(x->stx.stx_mode) && (x->landing->flags & WIRE_LAND_TREE)) {
                struct landmsg walk = { .type = LANDMSG_WALK };

                safe_close(fd);
                walk.op.session = x->land_session;
                walk.op.flags = recv_pull_read_flags(x);
                recv_land_ask(x, &walk, -1, recv_pull_on_walker, "walking the tree as its user");
                return;
        }
        if (!S_ISREG(x->stx.stx_mode)) {
                safe_close(fd);
                snprintf(text, sizeof(text), "%s: not a regular file%s", x->landing->path,
                         S_ISDIR(x->stx.stx_mode) ? " (xferctl get -r fetches a tree)" : "");
                recv_fail(x, WIRE_E_NAME, text);
                return;
        }
        p = recv_pull_new();
        if (!p) {
                safe_close(fd);
                recv_fail(x, WIRE_E_INTERNAL, "out of memory for a pull");
                return;
        }
        (void)recv_pull_send(x, p, fd);
        safe_close(fd);
}

static void recv_pull_on_open(void *arg, const struct landmsg *reply, int fd)
{
        static const char empty[] = "";
        struct recv_xfer *x = arg;

        if (!recv_pull_opening(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type != LANDMSG_FD || fd < 0) {
                safe_close(fd);
                recv_land_refused(x, "reading the file", reply);
                return;
        }
        /* Its own attributes (get -X, -A), for the send back's landing. */
        x->pull_xattrs_len = reply->fd.xattrs_len;
        memcpy(x->pull_xattrs, reply->fd.xattrs, reply->fd.xattrs_len);
        x->pull_fd = fd;
        x->cur->req.done = recv_pull_on_stat;
        if (io_statx(x->env->io, &x->cur->req, fd, empty, AT_EMPTY_PATH, &x->stx) < 0) {
                x->pull_fd = -1;
                safe_close(fd);
                recv_fail(x, WIRE_E_INTERNAL, "looking at the file: cannot queue it");
                return;
        }
        xfer_io_start(&x->base, "looking at the file");
}

void recv_pull_open(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_OPEN_READ };

        req.op.session = x->land_session;
        req.op.flags = recv_pull_read_flags(x);
        recv_land_ask(x, &req, -1, recv_pull_on_open, "opening the file as its user");
}

bool recv_pull_waiting(const struct recv_xfer *x)
{
        return x->pull != NULL;
}

void recv_pull_detach(struct recv_xfer *x)
{
        struct recv_pull *p = x->pull;

        if (!p)
                return;
        x->pull = NULL;
        p->x = NULL;
        /* Still walking: nothing to cancel. */
        if (!p->down) {
                recv_pull_free(p);
                return;
        }
        if (p->walk_ev)
                event_del(p->walk_ev);
        /* Its done callback frees it, from the loop. */
        send_cancel(p->down);
}

void recv_pull_progress(struct recv_env *e, uint64_t id, const struct sockaddr *from, uint64_t *bytes,
                        uint64_t *total)
{
        struct wire_hop want, got;

        if (wire_hop_set(&want, from) < 0)
                return;
        for (struct xfer *b = e->xe->xfers[XFER_RECV]; b; b = b->next) {
                struct recv_xfer *x = recv_xfer_of(b);

                if (!x->cur || x->cur->offer.transfer_id != id || !x->landing || !b->lane[0] ||
                    wire_hop_set(&got, rdma_get_peer_addr(b->lane[0]->conn.id)) < 0 ||
                    memcmp(got.addr, want.addr, WIRE_ADDR_SIZE) != 0)
                        continue;
                *bytes = b->bytes;
                *total = x->job_bytes;
                return;
        }
}
