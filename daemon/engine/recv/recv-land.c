/*
 * A session that lands as its user (wire.h, Landing as the user).
 *
 * This process talks RDMA and parses what peers send: it never switches
 * uid nor holds a capability. What a user's file needs done as that user,
 * rdmaxfer-lander does (landmsg.h), and proves the user itself, from the
 * MUNGE credential the user's xferctl made: this side only carries it.
 *
 *   first offer:  SESSION {the landing}           -> the uid and user it proved
 *   sync:         LOOK {its name}                 -> what is there, read-only: kept
 *                 (its size, its digest) or sent again
 *   each file:    TMPFILE {PATH, or PATH's parent} -> a nameless file of theirs,
 *                 written here as any (recv_file_opened: space, reserve, ACCEPT)
 *   verified:     fsync (here) -> LINK {its name, its mode and digest
 *                 xattr, SYNC, REPLACE when asked}
 *   gone:         END
 *
 * One file to PATH (not asked for as a directory) lands in PATH when PATH
 * is a directory there, else as PATH itself, in its parent; the lander
 * says which by the first TMPFILE's answer (ENOTDIR or ENOENT at PATH).
 * A user's file alone (its offer names its source) is kept for the job's
 * next attempt, its nameless file held open here (recv-partial.c, a
 * user's file): that attempt, once its SESSION has proven the same user
 * again and its TMPFILE has checked the name, takes it instead of the new
 * one.
 *
 * Each request is a disk request of the transfer's (xfer_io_start): its
 * answer may come after the transfer ended, and then only lets it go.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "digest.h"
#include "landc.h"
#include "landmsg.h"
#include "log.h"
#include "name.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"
#include "xattrs.h"

/* The lander's connection, made when a landing first needs it. */
static struct landc *recv_landc(struct recv_env *e)
{
        if (!e->landc && landc_new(&e->landc, e->base, e->cfg.lander_socket) < 0)
                e->landc = NULL;
        return e->landc;
}

/* A lander's refusal as a wire status: what the user must change is not retried. */
unsigned int recv_land_status(uint32_t err)
{
        switch (err) {
        case EEXIST:
                return WIRE_E_EXISTS;
        case EPERM:
        case EACCES:
        case EROFS:
        case ETIME:
        /* What the file system there cannot take (an attribute, O_TMPFILE),
         * and attributes over what an entry carries: no retry changes it. */
        case EOPNOTSUPP:
        case E2BIG:
                return WIRE_E_PERMISSION;
        case ENOENT:
        case ENOTDIR:
        case EISDIR:
        case ELOOP:
        case EXDEV:
        case EINVAL:
        case ENAMETOOLONG:
                return WIRE_E_NAME;
        default:
                return wire_status_of_errno((int)err);
        }
}

void recv_land_refused(struct recv_xfer *x, const char *doing, const struct landmsg *reply)
{
        /* Cut to WIRE_TEXT_MAX by recv_fail. */
        char text[LANDMSG_PATH_MAX + 2 * LANDMSG_TEXT_MAX + 64];
        const struct landmsg_error *er = &reply->error;

        if (reply->type != LANDMSG_ERROR) {
                snprintf(text, sizeof(text), "%s: rdmaxfer-lander answered with message %u", doing,
                         (unsigned int)reply->type);
                recv_fail(x, WIRE_E_INTERNAL, text);
                return;
        }
        /* The lander gone or not there: ours, not the user's, and maybe
         * for a moment (restarted: its socket starts another). No session
         * (ESRCH): the one that held it went away between two requests,
         * and a new one answered; the job tries again, as well. */
        if (er->verdict == LANDC_UNREACHABLE) {
                snprintf(text, sizeof(text), "%s: %s", doing, er->text);
                recv_fail(x, WIRE_E_IO, text);
                return;
        }
        if (er->err == ESRCH) {
                snprintf(text, sizeof(text), "%s: rdmaxfer-lander went away (a new one does not know the session)",
                         doing);
                recv_fail(x, WIRE_E_IO, text);
                return;
        }
        if (er->where[0] && !strstr(er->text, er->where))
                snprintf(text, sizeof(text), "%s%s%s: %s: %s", doing, x->land_user[0] ? " as " : "", x->land_user,
                         er->where, er->text);
        else
                snprintf(text, sizeof(text), "%s%s%s: %s", doing, x->land_user[0] ? " as " : "", x->land_user,
                         er->text);
        recv_fail(x, recv_land_status(er->err), text);
}

bool recv_land_asked(struct recv_xfer *x, int r, const char *what)
{
        char text[WIRE_TEXT_MAX + 1];

        if (r < 0) {
                snprintf(text, sizeof(text), "%s: asking rdmaxfer-lander: %s", what, strerror(-r));
                recv_fail(x, r == -EBUSY ? WIRE_E_BUSY : WIRE_E_INTERNAL, text);
                return false;
        }
        xfer_io_start(&x->base, what);
        return true;
}

bool recv_land_ask(struct recv_xfer *x, const struct landmsg *req, int fd, landc_done_fn done,
                          const char *what)
{
        struct landc *c = recv_landc(x->env);

        return recv_land_asked(x, c ? landc_ask(c, req, fd, done, x) : -ENOMEM, what);
}

/* An answer for a transfer still opening (cur, in OFFER): false when it moved on. */
static bool recv_land_opening(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state == XFER_OFFER;
}

/* ... still publishing (fin). */
static bool recv_land_publishing(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state != XFER_CLOSING && x->fin;
}

void recv_land_part(struct recv_lane *l, const struct wire_land *p)
{
        struct recv_xfer *x = recv_xfer_of(l->base.x);
        struct wire_msg m = { .type = WIRE_CREDIT, .credits = 1 };

        if (!x->land_buf) {
                x->land_buf = malloc(WIRE_LAND_MAX);
                if (!x->land_buf) {
                        recv_abort(&x->base, WIRE_E_INTERNAL, "out of memory for a landing");
                        return;
                }
                x->land_total = p->total;
        }
        if (p->offset != x->land_len || p->total != x->land_total) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, "a part of a landing out of order");
                return;
        }
        memcpy(x->land_buf + p->offset, p->bytes, p->len);
        x->land_len = (uint16_t)(x->land_len + p->len);
        /* Its buffer back for the next part, or the offer (as a ROUTE's). */
        if (conn_repost_ctrl(&l->base.conn, CONN_WRID_CTRL | CONN_CTRL_BUFS) < 0 ||
            conn_send_ctrl(&l->base.conn, &m) < 0)
                recv_abort(&x->base, WIRE_E_INTERNAL, "cannot take the next part of a landing");
}

bool recv_land_offer(struct recv_xfer *x, struct wire_offer *o)
{
        if (!(o->flags & WIRE_OFFER_LAND)) {
                if (!x->land_buf)
                        return true;
                recv_abort(&x->base, WIRE_E_PROTOCOL, "a landing, and an offer that lands nothing");
                return false;
        }
        if (!x->land_buf || x->land_len != x->land_total) {
                recv_abort(&x->base, WIRE_E_PROTOCOL, "an offer to land as a user before its whole landing");
                return false;
        }
        /* The MAC (with a key) covers what came: checked with the offer. */
        wire_land_hash(x->land_buf, x->land_len, o->land_hash);
        x->landing = malloc(sizeof(*x->landing));
        if (!x->landing || wire_land_decode(x->land_buf, x->land_len, x->landing) < 0) {
                bool oom = !x->landing;

                /* No landing, then: nothing later takes the session for one. */
                free(x->landing);
                x->landing = NULL;
                recv_abort(&x->base, oom ? WIRE_E_INTERNAL : WIRE_E_PROTOCOL,
                           oom ? "out of memory for a landing" : "a malformed landing");
                return false;
        }
        free(x->land_buf);
        x->land_buf = NULL;
        return true;
}

unsigned int recv_land_check(struct recv_xfer *x, const struct wire_offer *o, char *text, size_t len)
{
        if (!x->landing)
                return WIRE_OK;
        if (!x->env->cfg.user_landing) {
                snprintf(text, len, "this node lands no user's files (its landing_roots is empty); "
                         "send without :/PATH for its drop box");
                return WIRE_E_PERMISSION;
        }
        if (x->landing->direction == WIRE_LAND_PULL)
                return recv_pull_check(x, o, text, len);
        if ((o->flags & WIRE_OFFER_DELETE) && !(o->flags & WIRE_OFFER_TREE)) {
                snprintf(text, len, "deleting is for a tree, not a file");
                return WIRE_E_PROTOCOL;
        }
        /* A tree lands as one directory, as sent: merged into the one
         * there when it syncs, or put in its place when it deletes too
         * (wire_decode holds that to a sync), relayed nowhere
         * (recv-land-tree.c). */
        if ((o->flags & WIRE_OFFER_TREE) &&
            ((o->flags & (WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED)) || strchr(o->name, '/'))) {
                snprintf(text, len, "a tree that lands as its user is one directory, not relayed");
                return WIRE_E_PROTOCOL;
        }
        return WIRE_OK;
}

/* PATH's own leaf: one file that is PATH. */
static const char *recv_land_leaf(const struct recv_xfer *x)
{
        return strrchr(x->landing->path, '/') + 1;
}

static void recv_land_on_tmpfile(void *arg, const struct landmsg *reply, int fd);

/* A TMPFILE for the file named @name: in PATH, or (land_parent) as PATH. */
static void recv_land_tmpfile_req(const struct recv_xfer *x, const char *name, struct landmsg *req)
{
        *req = (struct landmsg){ .type = LANDMSG_TMPFILE };
        req->op.session = x->land_session;
        /* Only the user, while it is written; its own mode once it is whole. */
        req->op.mode = 0600;
        req->op.flags = x->land_parent ? LANDMSG_OP_PARENT : 0;
        /* Refused now, before any data, where it must be new. */
        if (!(x->landing->flags & WIRE_LAND_REPLACE))
                snprintf(req->op.leaf, sizeof(req->op.leaf), "%.*s", LANDMSG_LEAF_MAX,
                         x->land_parent ? recv_land_leaf(x) : name);
}

/* Cur's file made early (recv_land_early): true when it is taken, or
 * still being made (recv_land_open() runs again once it is). */
static bool recv_land_early_take(struct recv_xfer *x)
{
        /* Refused, or not made: asked again, and its refusal said as cur's. */
        int fd = recv_early_claim(x);

        if (fd == RECV_EARLY_WAIT)
                return true;
        if (fd < 0)
                return false;
        recv_file_opened(x, fd);
        return true;
}

/* Cur's nameless file, in PATH or (land_parent) as PATH. */
static void recv_land_tmpfile(struct recv_xfer *x)
{
        struct landmsg req;

        /* Sync: what is there first. */
        if (x->sync && !x->sync_probed) {
                recv_land_look(x);
                return;
        }
        if (recv_land_early_take(x))
                return;
        recv_land_tmpfile_req(x, x->cur->offer.name, &req);
        recv_land_ask(x, &req, -1, recv_land_on_tmpfile, "making the file as its user");
}

static void recv_land_on_early(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (!xfer_io_done(&x->base)) {
                safe_close(fd);
                return;
        }
        if (x->base.state == XFER_CLOSING) {
                safe_close(fd);
                x->early.state = RECV_EARLY_NONE;
                return;
        }
        if (reply->type == LANDMSG_FD && fd >= 0) {
                x->early.fd = fd;
        } else {
                safe_close(fd);
                x->early.failed = true;
        }
        x->early.state = RECV_EARLY_READY;
        if (x->early.waiting && x->base.state == XFER_OFFER) {
                x->early.waiting = false;
                recv_land_tmpfile(x);
        }
}

/*
 * While fin is published, the next file's nameless file, before its offer
 * comes: asked right behind fin's LINK, so that it is there when the offer
 * is (for small files the sender offers the next one only once this one
 * is answered, and a round trip to the lander per file would be on the
 * path). For a file of at most RECV_LAND_AHEAD_MAX only (recv_early_claim).
 */
static void recv_land_ahead(struct recv_xfer *x)
{
        struct landmsg req;

        /* Not while syncing: the next file may be kept. */
        if (x->tree || x->sync || x->land_parent || x->early.state != RECV_EARLY_NONE || x->next_on ||
            x->cur->offer.name[0] ||
            x->next_file >= x->job_files || !x->env->landc)
                return;
        x->early = (struct recv_early){ .state = RECV_EARLY_BUSY, .fd = -1, .file = x->next_file, .ahead = true };
        recv_land_tmpfile_req(x, "", &req);
        req.op.leaf[0] = '\0';
        if (landc_ask(x->env->landc, &req, -1, recv_land_on_early, x) < 0) {
                x->early.state = RECV_EARLY_NONE;
                return;
        }
        xfer_io_start(&x->base, "making the next file as its user");
}

void recv_land_early(struct recv_xfer *x)
{
        const struct wire_offer *o = &x->next;
        struct landmsg req;

        /* Into PATH, a directory, once the session is open; what its
         * offer's checks would refuse is not made (recv-offer.c). */
        if (x->tree || x->sync || !x->land_session || x->land_parent || x->early.state != RECV_EARLY_NONE ||
            o->file != x->next_file ||
            o->size > x->job_bytes - x->offered ||
            (x->env->cfg.max_file_size && o->size > x->env->cfg.max_file_size) ||
            name_check(o->name, strlen(o->name)) != NAME_OK)
                return;
        x->early = (struct recv_early){ .state = RECV_EARLY_BUSY, .fd = -1, .file = o->file, .size = o->size };
        recv_land_tmpfile_req(x, o->name, &req);
        if (!x->env->landc || landc_ask(x->env->landc, &req, -1, recv_land_on_early, x) < 0) {
                x->early.state = RECV_EARLY_NONE;
                return;
        }
        xfer_io_start(&x->base, "making the file as its user");
}

/* The lander's refusal @reply says PATH is no directory (not there, or a
 * file), where one file may be PATH itself: x->land_parent now, and
 * true (ask again, in PATH's parent). */
static bool recv_land_path_is_file(struct recv_xfer *x, const struct landmsg *reply)
{
        const struct landmsg_error *er = &reply->error;

        if (reply->type != LANDMSG_ERROR || x->land_parent || (x->landing->flags & WIRE_LAND_DIR) ||
            x->job_files != 1 || (er->err != ENOENT && er->err != ENOTDIR) ||
            strcmp(er->where, x->landing->path) != 0)
                return false;
        x->land_parent = true;
        return true;
}

static void recv_land_on_tmpfile(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (!recv_land_opening(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type == LANDMSG_FD && fd >= 0) {
                /* What an earlier attempt kept of it, if any, rather than
                 * the new one: asked all the same, so that the name is
                 * checked before any data, as for any file. */
                int kept = recv_land_kept_take(x);

                if (kept >= 0) {
                        safe_close(fd);
                        fd = kept;
                }
                recv_file_opened(x, fd);
                return;
        }
        safe_close(fd);
        if (recv_land_path_is_file(x, reply)) {
                recv_land_tmpfile(x);
                return;
        }
        recv_land_refused(x, "making the file", reply);
}

/* -X, -A kept up to date (not --skip-existing, which keeps what is there
 * whatever it is): LOOK reads the file's attributes too, for
 * recv_land_attrs_differ. */
static uint32_t recv_land_look_attrs(const struct recv_xfer *x)
{
        if (x->sync & WIRE_OFFER_SKIP_EXISTING)
                return 0;
        return ((x->landing->flags & WIRE_LAND_XATTRS) ? LANDMSG_OP_XATTRS : 0) |
               ((x->landing->flags & WIRE_LAND_ACLS) ? LANDMSG_OP_ACLS : 0);
}

/* The file there has other attributes than cur's, as sent (LOOK's FD
 * answer with them): it is not the same file, and is sent. */
static bool recv_land_attrs_differ(struct recv_xfer *x, const struct landmsg *reply)
{
        const struct wire_offer *o = &x->cur->offer;
        bool first = o->file == 0;

        if (!recv_land_look_attrs(x))
                return false;
        /* Which, for a dry run's verdict. */
        x->dry_attrs = xattrs_differ(first ? x->landing->xattrs : o->xattrs,
                                     first ? x->landing->xattrs_len : o->xattrs_len, reply->fd.xattrs,
                                     reply->fd.xattrs_len);
        return x->dry_attrs != 0;
}

/* A tree's entry @rel (DEST's leaf, then its path beneath it) as LOOK
 * names it: at its path beneath PATH, where the tree there has it
 * (PATH/DEST with land_into). */
static void recv_land_look_rel(const struct recv_xfer *x, const char *rel, struct landmsg *req)
{
        const char *slash;

        if (!x->land_into)
                rel += strlen(x->dest) + 1;
        slash = strrchr(rel, '/');
        snprintf(req->op.path, sizeof(req->op.path), "%.*s", slash ? (int)(slash - rel) : 0, rel);
        snprintf(req->op.leaf, sizeof(req->op.leaf), "%.*s", LANDMSG_LEAF_MAX, slash ? slash + 1 : rel);
}

/* The LOOK at what has cur's name: in PATH (or as PATH, land_parent);
 * a tree's entry as recv_land_look_rel() says. */
static void recv_land_look_req(const struct recv_xfer *x, struct landmsg *req)
{
        *req = (struct landmsg){ .type = LANDMSG_LOOK };
        req->op.session = x->land_session;
        req->op.flags = (x->land_parent ? LANDMSG_OP_PARENT : 0) | recv_land_look_attrs(x);
        if (!x->tree) {
                snprintf(req->op.leaf, sizeof(req->op.leaf), "%.*s", LANDMSG_LEAF_MAX,
                         x->land_parent ? recv_land_leaf(x) : x->cur->offer.name);
                return;
        }
        recv_land_look_rel(x, x->cur->rel, req);
}

/* Cur made as ever: nothing there, or what is there differs (a dry
 * run: said to be). */
static void recv_land_make(struct recv_xfer *x)
{
        if (x->dry)
                recv_dry_sent(x);
        else if (x->tree)
                recv_land_tree_open(x);
        else
                recv_land_tmpfile(x);
}

/* Where LOOK looked for cur, for the user's eyes (and its ERRORs' where). */
static void recv_land_look_where(const struct recv_xfer *x, char *text, size_t len)
{
        struct landmsg req;

        recv_land_look_req(x, &req);
        if (x->land_parent)
                snprintf(text, len, "%s", x->landing->path);
        else
                snprintf(text, len, "%s/%s%s%s", x->landing->path, req.op.path, req.op.path[0] ? "/" : "",
                         req.op.leaf);
}

/*
 * A dry run (recv_land_dry): what a real send would do with cur, where
 * the look found @there at @where (S_IFREG a file, S_IFDIR a directory,
 * S_IFLNK a symlink or another type), as the publish would: a directory
 * merged into where one is offered; a name of one kind in one tree and of
 * the other in the other refused (the publish's conflict); a link, or a
 * file of a tree merged into, replaced; a file sent alone replaced with
 * --overwrite (or --sync), else refused.
 */
static void recv_land_dry_there(struct recv_xfer *x, mode_t there, const char *where)
{
        const bool dir = x->cur->offer.flags & WIRE_OFFER_DIR;
        char text[2 * WIRE_PATH_MAX + 512];

        x->sync_had = true;
        if (there != S_IFREG) {
                memset(&x->sync_st, 0, sizeof(x->sync_st));
                x->sync_st.st_mode = there;
        }
        if (dir != (there == S_IFDIR)) {
                snprintf(text, sizeof(text), "%s: exists as %s, where %s is offered", where,
                         there == S_IFDIR ? "a directory" : there == S_IFREG ? "a file" : "no directory",
                         dir ? "a directory" : "a file");
                recv_fail(x, WIRE_E_EXISTS, text);
                return;
        }
        if (dir || x->tree || x->sync || (x->landing->flags & WIRE_LAND_REPLACE)) {
                recv_dry_sent(x);
                return;
        }
        snprintf(text, sizeof(text), "%s: exists (and replacing it was not asked for: --overwrite)", where);
        recv_fail(x, WIRE_E_EXISTS, text);
}

/* What has cur's name, as the lander sees it for the user (LOOK): the
 * sync's verdict on it, as the drop box's (recv-sync.c) on what it has. */
static void recv_land_on_look(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        const struct wire_offer *o = &x->cur->offer;
        const struct landmsg_error *er = &reply->error;
        const bool other = o->flags & (WIRE_OFFER_DIR | WIRE_OFFER_LINK);
        char text[2 * WIRE_PATH_MAX + 512];   /* recv_fail cuts it to WIRE_TEXT_MAX */
        struct stat st = { 0 };

        if (!recv_land_opening(x)) {
                safe_close(fd);
                return;
        }
        recv_land_look_where(x, text, sizeof(text));
        /* Nothing there: the file is made as ever. So for a tree's entry
         * where PATH, or a directory on its way, is not (yet) there. */
        if (reply->type == LANDMSG_OK ||
            (x->tree && reply->type == LANDMSG_ERROR && (er->err == ENOENT || er->err == ENOTDIR))) {
                recv_land_make(x);
                return;
        }
        if (reply->type == LANDMSG_FD && fd >= 0) {
                bool same_size = fstat(fd, &st) == 0 && (uint64_t)st.st_size == o->size;

                x->sync_had = true;
                x->sync_st = st;
                if (x->dry && (!x->sync || other)) {
                        safe_close(fd);
                        recv_land_dry_there(x, S_IFREG, text);
                } else if (recv_land_attrs_differ(x, reply)) {
                        safe_close(fd);
                        recv_land_make(x);
                } else if ((x->sync & WIRE_OFFER_SKIP_EXISTING) ||
                    (same_size && (!(x->sync & WIRE_OFFER_DIGEST) || o->size == 0))) {
                        safe_close(fd);
                        recv_sync_skip(x);
                } else if (!same_size) {
                        safe_close(fd);
                        recv_land_make(x);
                } else {
                        /* Its bytes' digest says (its xattr is the user's
                         * to read, not this daemon's). */
                        x->sync_fd = fd;
                        recv_sync_hash(x);
                }
                return;
        }
        safe_close(fd);
        if (recv_land_path_is_file(x, reply)) {
                recv_land_look(x);
                return;
        }
        /* A file there that the user may not read (or whose attributes
         * are more than a sender's can be): it differs, as far as anyone
         * can tell, and is replaced (--skip-existing: kept). */
        if (reply->type == LANDMSG_ERROR && (er->err == EACCES || (er->err == E2BIG && recv_land_look_attrs(x))) &&
            strcmp(er->where, text) == 0) {
                if (x->dry && (!x->sync || other))
                        recv_land_dry_there(x, S_IFREG, text);
                else if (x->sync & WIRE_OFFER_SKIP_EXISTING)
                        recv_sync_skip(x);
                else
                        recv_land_make(x);
                return;
        }
        if (reply->type == LANDMSG_ERROR && er->err == EEXIST) {
                /* A dry run's directory or link: the publish's verdict. */
                if (x->dry && other) {
                        recv_land_dry_there(x, strcmp(er->text, LANDMSG_LOOK_DIR) == 0 ? S_IFDIR : S_IFLNK,
                                            er->where);
                        return;
                }
                snprintf(text, sizeof(text), "%s: %s", er->where, er->text);
                recv_fail(x, WIRE_E_EXISTS, text);
                return;
        }
        recv_land_refused(x, "looking at what is there", reply);
}

void recv_land_look(struct recv_xfer *x)
{
        struct landmsg req;

        x->sync_probed = true;
        x->sync_had = false;
        /* What differs is replaced: the user asked for it (--sync). */
        x->overwrite = x->landing->flags & WIRE_LAND_REPLACE;
        recv_land_look_req(x, &req);
        recv_land_ask(x, &req, -1, recv_land_on_look, "looking at what is there as its user");
}

/* ---- a dry run (wire.h, Dry runs; landmsg.h, LANDMSG_SESSION_DRY) ---- */

bool recv_land_as_path(struct recv_xfer *x, const struct landmsg *reply)
{
        const struct landmsg_error *er = &reply->error;

        /* PATH is no directory there: the tree is PATH itself, unless PATH was asked for as one. */
        if (reply->type != LANDMSG_ERROR || !x->land_into || (x->landing->flags & WIRE_LAND_DIR) ||
            (er->err != ENOENT && er->err != ENOTDIR) || strcmp(er->where, x->landing->path) != 0)
                return false;
        x->land_into = false;
        return true;
}

static void recv_land_dry_dest(struct recv_xfer *x);

/* What has the tree's DEST's name (in PATH, land_into; or PATH itself):
 * nothing (all of it would be made); a directory (merged into with a
 * sync, its entries looked at; replaced whole with --overwrite); else as
 * a real send's staging would say. */
static void recv_land_on_dry_dest(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        const struct landmsg_error *er = &reply->error;
        const bool replace = x->landing->flags & WIRE_LAND_REPLACE;
        char where[2 * WIRE_PATH_MAX + 2], text[2 * WIRE_PATH_MAX + 128];
        bool dir, file;

        safe_close(fd);
        if (!recv_land_opening(x))
                return;
        if (recv_land_as_path(x, reply)) {
                recv_land_dry_dest(x);
                return;
        }
        if (x->land_into)
                snprintf(where, sizeof(where), "%s/%s", x->landing->path, x->dest);
        else
                snprintf(where, sizeof(where), "%s", x->landing->path);
        dir = reply->type == LANDMSG_ERROR && er->err == EEXIST && strcmp(er->text, LANDMSG_LOOK_DIR) == 0;
        file = reply->type == LANDMSG_FD || (reply->type == LANDMSG_ERROR && strcmp(er->where, where) == 0 &&
                                              (er->err == EEXIST || er->err == EACCES) && !dir);
        x->merge = false;
        if (reply->type == LANDMSG_OK) {
                recv_dry_sent(x);       /* would create */
                return;
        }
        if (!dir && !file) {
                recv_land_refused(x, "looking at what is there", reply);
                return;
        }
        x->sync_had = true;
        memset(&x->sync_st, 0, sizeof(x->sync_st));
        x->sync_st.st_mode = dir ? S_IFDIR : S_IFREG;
        if (dir && x->sync) {
                x->merge = true;
                recv_dry_sent(x);       /* exists: merged into */
                return;
        }
        if (replace && !x->sync) {
                recv_dry_sent(x);       /* would replace, whole */
                return;
        }
        snprintf(text, sizeof(text), "%s: %s", where,
                 x->sync && !dir ? "exists and is no directory: a tree is not merged into it"
                                 : "exists (and replacing it was not asked for: --overwrite)");
        recv_fail(x, WIRE_E_EXISTS, text);
}

static void recv_land_dry_dest(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_LOOK };

        req.op.session = x->land_session;
        req.op.flags = x->land_into ? 0 : LANDMSG_OP_PARENT;
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%.*s", LANDMSG_LEAF_MAX,
                 x->land_into ? x->dest : recv_land_leaf(x));
        recv_land_ask(x, &req, -1, recv_land_on_dry_dest, "looking at what is there as its user");
}

void recv_land_dry(struct recv_xfer *x)
{
        const struct wire_offer *o = &x->cur->offer;

        if (!x->land_session) {
                recv_land_open(x);      /* the session first; then here again */
                return;
        }
        x->sync_had = false;
        if (!x->tree) {
                recv_land_look(x);
                return;
        }
        recv_tree_rel(x);
        if (o->file == 0) {
                x->land_into = true;
                recv_land_dry_dest(x);
                return;
        }
        /* A link's target is its data: it comes, is held to the rules,
         * and what is there is looked at then (recv_land_dry_link). */
        if (o->flags & WIRE_OFFER_LINK) {
                recv_file_open(x);
                return;
        }
        /* In a tree that is not there, or is replaced whole, all is new. */
        if (!x->merge) {
                recv_dry_sent(x);
                return;
        }
        recv_land_look(x);
}

/* ---- a dry run's link, its target here (landmsg.h, Dry runs) ---- */

/* Fin, a link, judged: kept (@same), or what a real session would make
 * of it over @there (NULL: nothing there); its RESULT follows. */
static void recv_land_dry_linked(struct recv_xfer *x, bool same, const struct stat *there)
{
        struct recv_file *f = x->fin;

        if (same) {
                snprintf(f->dry, sizeof(f->dry), "skipped");
                f->pack_skipped = 1;
                x->files_skipped++;
        } else {
                recv_dry_link_said(f, there);
        }
        recv_tree_entry_done(x);
}

/*
 * What LOOK found at fin's name, where it is no link to compare: nothing
 * (true, *@there NULL); a file, or another type, that a real session
 * replaces (true, @there: its stat, the mtime where known); or false, fin
 * failed: a directory (the publish's conflict) or the lander's refusal.
 */
static bool recv_land_dry_link_there(struct recv_xfer *x, const struct landmsg *reply, int fd, struct stat *st,
                                     const struct stat **there)
{
        const struct landmsg_error *er = &reply->error;
        char text[2 * WIRE_PATH_MAX + 128];

        *there = NULL;
        memset(st, 0, sizeof(*st));
        if (reply->type == LANDMSG_OK ||
            (reply->type == LANDMSG_ERROR && (er->err == ENOENT || er->err == ENOTDIR)))
                return true;
        if (reply->type == LANDMSG_FD && fd >= 0 && fstat(fd, st) == 0) {
                *there = st;
                return true;
        }
        if (reply->type == LANDMSG_ERROR && er->err == EEXIST && strcmp(er->text, LANDMSG_LOOK_DIR) == 0) {
                snprintf(text, sizeof(text), "%s: exists as a directory, where a file is offered", er->where);
                recv_fail(x, WIRE_E_EXISTS, text);
                return false;
        }
        /* Another type (a FIFO, a symlink where a hard link is offered),
         * or a file the user may not read: replaced. */
        if (reply->type == LANDMSG_WALK_ENTRY || (reply->type == LANDMSG_ERROR && (er->err == EEXIST ||
                                                                                  er->err == EACCES))) {
                st->st_mode = S_IFLNK;
                if (reply->type == LANDMSG_WALK_ENTRY) {
                        st->st_mtim.tv_sec = (time_t)(reply->walk_entry.mtime_ns / 1000000000u);
                        st->st_mtim.tv_nsec = (long)(reply->walk_entry.mtime_ns % 1000000000u);
                }
                *there = st;
                return true;
        }
        recv_land_refused(x, "looking at what is there", reply);
        return false;
}

static void recv_land_on_dry_symlink(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        const struct landmsg_walk_entry *e = &reply->walk_entry;
        const struct stat *there;
        struct stat st;
        bool same;

        if (!recv_land_publishing(x)) {
                safe_close(fd);
                return;
        }
        same = reply->type == LANDMSG_WALK_ENTRY && e->kind == LANDMSG_WALK_SYMLINK &&
               strcmp(e->target, x->fin->link_target) == 0;
        if (recv_land_dry_link_there(x, reply, fd, &st, &there))
                recv_land_dry_linked(x, same, there);
        safe_close(fd);
}

/* A hard link's file (its target): the very file its name has there,
 * and one this dry run keeps? */
static void recv_land_on_dry_hard_target(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        const struct stat *there = &x->fin->link_there;
        struct stat st;

        if (!recv_land_publishing(x)) {
                safe_close(fd);
                return;
        }
        recv_land_dry_linked(x,
                             reply->type == LANDMSG_FD && fd >= 0 && fstat(fd, &st) == 0 &&
                                     st.st_dev == there->st_dev && st.st_ino == there->st_ino &&
                                     !recv_dry_replaced(x, there),
                             there);
        safe_close(fd);
}

static void recv_land_on_dry_hard(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        const struct stat *there;
        struct landmsg req;

        if (!recv_land_publishing(x)) {
                safe_close(fd);
                return;
        }
        if (!recv_land_dry_link_there(x, reply, fd, &x->fin->link_there, &there)) {
                safe_close(fd);
                return;
        }
        safe_close(fd);
        /* A file has the name: is it the one the link's file names there? */
        if (!there || !S_ISREG(there->st_mode)) {
                recv_land_dry_linked(x, false, there);
                return;
        }
        req = (struct landmsg){ .type = LANDMSG_LOOK };
        req.op.session = x->land_session;
        recv_land_look_rel(x, x->fin->link_target, &req);
        recv_land_ask(x, &req, -1, recv_land_on_dry_hard_target, "looking at what is there as its user");
}

void recv_land_dry_link(struct recv_xfer *x)
{
        struct recv_file *f = x->fin;
        const bool hard = f->offer.flags & WIRE_OFFER_HARD;
        struct landmsg req = { .type = LANDMSG_LOOK };

        req.op.session = x->land_session;
        req.op.flags = hard ? 0 : LANDMSG_LOOK_LINK;
        recv_land_look_rel(x, f->rel, &req);
        recv_land_ask(x, &req, -1, hard ? recv_land_on_dry_hard : recv_land_on_dry_symlink,
                      "looking at what is there as its user");
}

/* The lander's walker of the tree there (landmsg.h, Deleting, dry). */
static void recv_land_on_dry_walker(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (!recv_land_publishing(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type != LANDMSG_FD || fd < 0) {
                safe_close(fd);
                recv_land_refused(x, "listing what deleting would remove", reply);
                return;
        }
        recv_dry_names(x, fd);
}

void recv_land_dry_walk(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_WALK };

        req.op.session = x->land_session;
        /* The tree: DEST's leaf in PATH, or PATH itself. */
        if (x->land_into)
                snprintf(req.op.path, sizeof(req.op.path), "%s", x->dest);
        recv_land_ask(x, &req, -1, recv_land_on_dry_walker, "listing the tree there as its user");
}

static void recv_land_on_session(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        safe_close(fd);
        if (!recv_land_opening(x))
                return;
        if (reply->type != LANDMSG_SESSION_OK) {
                recv_land_refused(x, "landing as its user", reply);
                return;
        }
        x->land_session = reply->session_ok.session;
        x->land_uid = reply->session_ok.uid;
        snprintf(x->land_user, sizeof(x->land_user), "%s", reply->session_ok.user);
        if (x->landing->direction == WIRE_LAND_PULL) {
                recv_pull_open(x);
                return;
        }
        if (x->dry) {
                log_info("%s: dry run of %s as %s (uid %u) at %s", x->base.peer, x->cur->offer.name, x->land_user,
                         (unsigned int)x->land_uid, x->landing->path);
                recv_land_dry(x);
                return;
        }
        log_info("%s: %s lands as %s (uid %u) at %s", x->base.peer, x->cur->offer.name, x->land_user,
                 (unsigned int)x->land_uid, x->landing->path);
        if (x->tree)
                recv_land_tree_open(x);
        else
                recv_land_tmpfile(x);
}

void recv_land_open(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_SESSION };
        const struct wire_landing *l = x->landing;

        if (x->land_session) {
                if (x->dry)
                        recv_land_dry(x);
                else
                        recv_land_tmpfile(x);
                return;
        }
        req.session.direction = l->direction == WIRE_LAND_PULL ? LANDMSG_PULL : LANDMSG_PUSH;
        req.session.flags = ((l->flags & WIRE_LAND_REPLACE) ? LANDMSG_SESSION_REPLACE : 0) |
                            ((l->flags & WIRE_LAND_TREE) ? LANDMSG_SESSION_TREE : 0) |
                            (x->sync && l->direction == WIRE_LAND_PUSH ? LANDMSG_SESSION_SYNC : 0) |
                            (x->dry ? LANDMSG_SESSION_DRY : 0) |
                            ((x->sync & WIRE_OFFER_DELETE) && l->direction == WIRE_LAND_PUSH ? LANDMSG_SESSION_DELETE
                                                                                            : 0);
        req.session.naddrs = l->naddrs;
        memcpy(req.session.token, l->token, sizeof(req.session.token));
        memcpy(req.session.addrs, l->addrs, (size_t)l->naddrs * sizeof(l->addrs[0]));
        snprintf(req.session.cred, sizeof(req.session.cred), "%s", l->cred);
        snprintf(req.session.dest, sizeof(req.session.dest), "%s", l->path);
        recv_land_ask(x, &req, -1, recv_land_on_session, "proving the user to rdmaxfer-lander");
}

/* ---- publishing ---- */

static void recv_land_on_linked(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        safe_close(fd);
        if (!recv_land_publishing(x))
                return;
        if (reply->type != LANDMSG_OK) {
                recv_land_refused(x, "publishing", reply);
                return;
        }
        recv_partial_published(x);
}

void recv_land_op_attrs_of(const struct recv_xfer *x, struct landmsg_op *op, const uint8_t *xattrs, uint16_t len)
{
        if (!x->landing || !(x->landing->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS)))
                return;
        if (x->landing->flags & WIRE_LAND_ACLS)
                op->flags |= LANDMSG_OP_ACLS;
        if (len) {
                op->flags |= LANDMSG_OP_XATTRS;
                memcpy(op->xattrs, xattrs, len);
                op->xattrs_len = len;
        }
}

void recv_land_op_attrs(const struct recv_xfer *x, const struct wire_offer *o, struct landmsg_op *op)
{
        if (o->file == 0 && x->landing)
                recv_land_op_attrs_of(x, op, x->landing->xattrs, x->landing->xattrs_len);
        else
                recv_land_op_attrs_of(x, op, o->xattrs, o->xattrs_len);
}

static void recv_land_on_fsync(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct landmsg lreq = { .type = LANDMSG_LINK };
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_land_publishing(x))
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "fsync: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        /* Its mode as sent, less setuid and setgid, and its digest as the
         * drop box's files have it: set as the user, synced, then its name
         * (landmsg.h, LANDMSG_LINK_MODE and _DIGEST), one round trip. */
        lreq.op.session = x->land_session;
        lreq.op.flags = LANDMSG_LINK_SYNC | LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST |
                        (x->land_parent ? LANDMSG_OP_PARENT : 0) |
                        ((x->landing->flags & WIRE_LAND_REPLACE) ? LANDMSG_LINK_REPLACE : 0);
        lreq.op.mode = x->fin->offer.mode & 01777;
        digest_hex(x->fin->digest, lreq.op.target);
        snprintf(lreq.op.leaf, sizeof(lreq.op.leaf), "%.*s", LANDMSG_LEAF_MAX,
                 x->land_parent ? recv_land_leaf(x) : x->fin->offer.name);
        /* -X, -A: the sender's attributes, set before its mode. */
        recv_land_op_attrs(x, &x->fin->offer, &lreq.op);
        if (recv_land_ask(x, &lreq, x->fin->fd, recv_land_on_linked, "publishing as its user"))
                recv_land_ahead(x);
}

/* Its data on disk first (here, where it was written: the lander's
 * fsync then has only the mode and xattr to write). */
void recv_land_publish(struct recv_xfer *x)
{
        int r;

        x->fin->req.done = recv_land_on_fsync;
        r = io_fsync(x->env->io, &x->fin->req, x->fin->fd);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "fsync of the file: cannot queue it");
                return;
        }
        xfer_io_start(&x->base, "fsync of the file");
}

static void recv_land_on_end(void *arg, const struct landmsg *reply, int fd)
{
        safe_close(fd);
}

void recv_land_gone(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_END };

        free(x->land_buf);
        x->land_buf = NULL;
        recv_pull_detach(x);
        recv_land_tree_gone(x);
        /* The lander forgets the session: nothing waits for the answer. */
        if (x->land_session && x->env->landc && !x->env->freeing) {
                req.op.session = x->land_session;
                (void)landc_ask(x->env->landc, &req, -1, recv_land_on_end, NULL);
        }
        free(x->landing);
        x->landing = NULL;
}
