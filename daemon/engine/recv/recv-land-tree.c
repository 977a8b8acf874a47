/*
 * A tree that lands as its user (xferctl send -r DIR PEER:/PATH; wire.h,
 * Landing as the user).
 *
 * As the drop box's trees do (recv-file.c), it lands whole or not at all:
 * it is built in a staging directory of its own and renamed into place in
 * one step at the end. Here the staging directory is the user's, and
 * every entry in it is made by rdmaxfer-lander as that user (landmsg.h);
 * this process writes the data into the descriptors it hands back.
 *
 *   DEST's offer:   SESSION, then MKDIR of the staging directory in PATH,
 *                   to be PATH/DEST (LANDMSG_OP_INTO: that name refused now
 *                   if taken). PATH not there, or no directory, and not
 *                   asked for as one: beside PATH, to be PATH itself (as
 *                   cp -r and scp -r do)
 *   a directory:    MKDIR, 0700 (its own mode and mtime at the end: the
 *                   tree's list, recv_tree_attr_add)
 *   a file:         TMPFILE (in the staging directory: its own directory
 *                   is made when the entry before it is published, maybe
 *                   after this offer) -> written here -> LINK in its
 *                   directory with
 *                   its mode, mtime and digest xattr; no fsync of its own
 *                   (PUBLISH syncs the file system once, for every entry)
 *   a symlink or    its target read back here and listed, as the drop
 *   a hard link:    box's are (recv_tree_link_keep)
 *   the last entry: from the list, in batches that the lander takes back
 *                   to back: each HARDLINK and SYMLINK in order, then each
 *                   directory's SETATTR, the deepest first; then PUBLISH,
 *                   then DEST's own mode and mtime
 *   failed:         DISCARD (then END: recv_land_gone)
 *
 * Nothing beneath the staging directory is followed by the lander, so
 * the tree's own symlinks (made at the end anyway) cannot take a later
 * request elsewhere. A landing's tree is never kept for a retry (it would
 * be the user's files in our partial_dir: the attempt after starts
 * afresh, the lander removing what the last one staged). Its small files
 * come in packs, made by the lander a chunk at a time (below).
 *
 * Kept up to date (--sync, --skip-existing; wire version 26): a file
 * offered alone is first looked at where the tree there has its path
 * (recv_land_look: LOOK, as the user); one found the same is kept
 * (recv_sync_skip), not staged. A packed file's data comes whatever is
 * there; its LINK (LANDMSG_LINK_KEEP_*) has the lander keep the file
 * there instead where it is the same; a symlink's SYMLINK at the end
 * keeps the symlink there where it points where the sent one does (the
 * same flags; --skip-existing: any symlink there). The PUBLISH then merges the staged
 * tree into the one there (LANDMSG_PUBLISH_MERGE): what the staged tree
 * lacks, the files kept by LOOK among it, is linked in by the lander, as
 * the user, before the two are exchanged; deleting, each file kept is
 * linked in by its own name (recv_land_tree_keep), and PUBLISH_DELETE
 * puts the staged tree in the old one's place.
 *
 * Each request is one of the transfer's disk requests (xfer_io_start): a
 * lander that stalls fails the transfer at io_timeout.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "landc.h"
#include "landmsg.h"
#include "log.h"
#include "name.h"
#include "pack.h"
#include "recv-int.h"
#include "recv-publish.h"

/* The end's requests, a batch at a time: their names in the arena. */
#define RECV_LAND_BATCH         128
#define RECV_LAND_ARENA         (256 * 1024)

struct recv_land_item {
        uint16_t type;          /* LANDMSG_HARDLINK, _SYMLINK, _SETATTR */
        uint32_t mode;
        uint64_t mtime_ns;
        size_t rel, target;     /* offsets of NUL-terminated strings in the arena */
};

struct recv_land_end {
        struct io_req req;
        struct recv_xfer *x;
        uint64_t off;           /* the list's next record */
        bool links_done;        /* every link asked for: the directories now */
        uint64_t *attr_at;      /* the offsets of the directories' records */
        size_t nattr, cap;
        struct recv_land_item item[RECV_LAND_BATCH];
        size_t n, waiting, used;
        char arena[RECV_LAND_ARENA];
};

/* @rel (DEST, then what follows it) in the staging directory: "" for DEST. */
static const char *recv_land_srel(const struct recv_xfer *x, const char *rel)
{
        size_t n = strlen(x->dest);

        return rel[n] == '/' ? rel + n + 1 : rel + n;
}

/* @srel's directory into @dir ("": the staging directory), and its last component. */
static const char *recv_land_split(const char *srel, char dir[static LANDMSG_PATH_MAX + 1])
{
        const char *slash = strrchr(srel, '/');
        size_t n = slash ? MIN((size_t)(slash - srel), (size_t)LANDMSG_PATH_MAX) : 0;

        memcpy(dir, srel, n);
        dir[n] = '\0';
        return slash ? slash + 1 : srel;
}

/* An op of the tree's, in its staging directory: @srel's directory, and its leaf. */
static void recv_land_stage_op(const struct recv_xfer *x, uint16_t type, const char *srel, struct landmsg *req)
{
        *req = (struct landmsg){ .type = type };
        req->op.session = x->land_session;
        req->op.flags = LANDMSG_OP_STAGE | (x->land_into ? LANDMSG_OP_INTO : 0);
        snprintf(req->op.leaf, sizeof(req->op.leaf), "%s", recv_land_split(srel, req->op.path));
}

/* A refusal that says the sender broke the tree's order, or the lander's. */
static void recv_land_entry_refused(struct recv_xfer *x, const char *doing, const struct landmsg *reply)
{
        if (reply->type == LANDMSG_ERROR && reply->error.verdict != LANDC_UNREACHABLE) {
                switch (reply->error.err) {
                case EEXIST:
                        recv_fail(x, WIRE_E_PROTOCOL, "an entry of the tree came twice");
                        return;
                case ENOENT:
                case ENOTDIR:
                        recv_fail(x, WIRE_E_PROTOCOL, "an entry of the tree came before its directory");
                        return;
                }
        }
        recv_land_refused(x, doing, reply);
}

/* An answer for cur, still opening (in OFFER): false when the transfer moved on. */
static bool recv_land_tree_opening(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state == XFER_OFFER;
}

/* ... for fin, or the end, still publishing. */
static bool recv_land_tree_publishing(struct recv_xfer *x)
{
        return xfer_io_done(&x->base) && x->base.state != XFER_CLOSING && x->fin;
}

/* A worker's @res for the tree while it publishes: true when it went
 * well; else false, the transfer failed (@doing and the error) or ended
 * meanwhile. */
static bool recv_land_tree_io_ok(struct recv_xfer *x, int64_t res, const char *doing)
{
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_land_tree_publishing(x))
                return false;
        if (res >= 0)
                return true;
        snprintf(text, sizeof(text), "%s: %s", doing, strerror((int)-res));
        recv_fail(x, wire_status_of_errno((int)-res), text);
        return false;
}

/*
 * The head of a lander's answer to a tree's request while it publishes:
 * @fd closed (none is asked for); true when the transfer still publishes
 * and @reply is @want, else false, with the refusal of @doing said (NULL:
 * fin's, making a directory or publishing a file; with @entry, what it
 * says of the tree's order too: recv_land_entry_refused).
 */
static bool recv_land_tree_answered(struct recv_xfer *x, const struct landmsg *reply, int fd, uint16_t want,
                                    bool entry, const char *doing)
{
        safe_close(fd);
        if (!recv_land_tree_publishing(x))
                return false;
        if (reply->type == want)
                return true;
        if (!doing)
                doing = (x->fin->offer.flags & WIRE_OFFER_DIR) ? "making a directory" : "publishing";
        if (entry)
                recv_land_entry_refused(x, doing, reply);
        else
                recv_land_refused(x, doing, reply);
        return false;
}

/* On a worker: the directory @arg (a struct recv_file: DEST, or fin), its
 * mode and mtime listed for the end. */
static int64_t recv_land_dir_list(void *arg)
{
        struct recv_file *f = arg;

        return recv_tree_attr_add(f->x, f->rel, S_IFDIR | recv_tree_mode(f->offer.mode), f->offer.mtime_ns);
}

/* @f's directory listed on a worker, then @done: false when it could not start. */
static bool recv_land_dir_list_start(struct recv_xfer *x, struct recv_file *f, io_done_fn done)
{
        f->req.done = done;
        if (io_call(x->env->io, &f->req, recv_land_dir_list, f) < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "the tree's list: cannot queue it");
                return false;
        }
        xfer_io_start(&x->base, "listing a directory");
        return true;
}

/* The listing's @res: true when it is in, else the transfer failed. */
static bool recv_land_listed(struct recv_xfer *x, int64_t res)
{
        char text[WIRE_TEXT_MAX + 1];

        if (res >= 0)
                return true;
        snprintf(text, sizeof(text), "the tree's list: %s", strerror((int)-res));
        recv_fail(x, wire_status_of_errno((int)-res), text);
        return false;
}

/* ---- opening ---- */

static void recv_land_on_top_listed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (recv_land_tree_opening(x) && recv_land_listed(x, res))
                recv_accept(x);
}

static void recv_land_stage(struct recv_xfer *x);

static void recv_land_on_staged(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        safe_close(fd);
        if (!recv_land_tree_opening(x))
                return;
        if (recv_land_as_path(x, reply)) {
                recv_land_stage(x);
                return;
        }
        if (reply->type != LANDMSG_OK) {
                recv_land_refused(x, "staging the tree", reply);
                return;
        }
        x->land_staged = true;
        log_info("%s: the tree %s lands as %s at %s%s%s", x->base.peer, x->dest, x->land_user, x->landing->path,
                 x->land_into ? "/" : "", x->land_into ? x->dest : "");
        (void)recv_land_dir_list_start(x, x->cur, recv_land_on_top_listed);
}

/* The staging directory, made afresh, in PATH (land_into) or beside it,
 * the name it is to have refused now if it is taken. */
static void recv_land_stage(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_MKDIR };

        req.op.session = x->land_session;
        req.op.mode = 0700;
        req.op.flags = LANDMSG_OP_STAGE | (x->land_into ? LANDMSG_OP_INTO : 0);
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%s",
                 x->land_into ? x->dest : strrchr(x->landing->path, '/') + 1);
        /* DEST's attributes (the landing's), on it from the start. */
        recv_land_op_attrs(x, &x->cur->offer, &req.op);
        recv_land_ask(x, &req, -1, recv_land_on_staged, "staging the tree as its user");
}

static void recv_land_on_tmpfile(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (!recv_land_tree_opening(x)) {
                safe_close(fd);
                return;
        }
        if (reply->type == LANDMSG_FD && fd >= 0) {
                recv_file_opened(x, fd);
                return;
        }
        safe_close(fd);
        recv_land_entry_refused(x, "making the file", reply);
}

void recv_land_tree_open(struct recv_xfer *x)
{
        const struct wire_offer *o = &x->cur->offer;
        struct landmsg req;

        if (!x->land_session) {
                recv_land_open(x);      /* the session first; then here again */
                return;
        }
        if (o->file == 0) {
                x->land_into = true;
                recv_land_stage(x);
                return;
        }
        /* A directory is made when it is published, in order. */
        if (o->flags & WIRE_OFFER_DIR) {
                recv_accept(x);
                return;
        }
        /* Sync: what the tree there has at its path first (recv-land.c). */
        if (x->sync && !x->sync_probed) {
                recv_land_look(x);
                return;
        }
        /* In the staging directory itself, not in its own: that one is
         * made when the entry before it is published (a directory's MKDIR,
         * a pack's BATCH), which may be after this offer came. Nameless,
         * the file is linked into its directory at LINK, in order. */
        recv_land_stage_op(x, LANDMSG_TMPFILE, "", &req);
        req.op.mode = 0600;     /* only the user, while it is written */
        req.op.leaf[0] = '\0';
        recv_land_ask(x, &req, -1, recv_land_on_tmpfile, "making the file as its user");
}

/* ---- publishing an entry ---- */

static void recv_land_on_entry(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (recv_land_tree_answered(x, reply, fd, LANDMSG_OK, true, NULL))
                recv_tree_entry_done(x);
}

static void recv_land_on_kept(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (recv_land_tree_answered(x, reply, fd, LANDMSG_OK, false, "keeping the file there"))
                recv_tree_entry_done(x);
}

void recv_land_tree_keep(struct recv_xfer *x)
{
        const char *srel = recv_land_srel(x, x->fin->rel);
        struct landmsg req;

        /* A hard link to itself: the staged tree lacks it, so the lander
         * links the one the tree there has (landmsg.h, Mirrored). */
        recv_land_stage_op(x, LANDMSG_HARDLINK, srel, &req);
        snprintf(req.op.target, sizeof(req.op.target), "%s", srel);
        recv_land_ask(x, &req, -1, recv_land_on_kept, "keeping the file there as its user");
}

static void recv_land_on_dir_listed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct landmsg lreq;

        if (!recv_land_tree_publishing(x) || !recv_land_listed(x, res))
                return;
        /* The directory itself: op.path is its path, with no leaf. */
        lreq = (struct landmsg){ .type = LANDMSG_MKDIR };
        lreq.op.session = x->land_session;
        lreq.op.flags = LANDMSG_OP_STAGE | (x->land_into ? LANDMSG_OP_INTO : 0);
        lreq.op.mode = 0700;
        snprintf(lreq.op.path, sizeof(lreq.op.path), "%s", recv_land_srel(x, x->fin->rel));
        recv_land_op_attrs(x, &x->fin->offer, &lreq.op);
        recv_land_ask(x, &lreq, -1, recv_land_on_entry, "making a directory as its user");
}

void recv_land_tree_publish(struct recv_xfer *x)
{
        struct recv_file *f = x->fin;
        struct landmsg req;

        /* DEST itself was made with the staging directory. */
        if ((f->offer.flags & WIRE_OFFER_DIR) && f->offer.file == 0) {
                recv_tree_entry_done(x);
                return;
        }
        if (f->offer.flags & WIRE_OFFER_DIR) {
                (void)recv_land_dir_list_start(x, f, recv_land_on_dir_listed);
                return;
        }
        /* A file, whole and verified: its mode, mtime and digest as the
         * user, then its name, in one round trip (landmsg.h, LINK). */
        recv_land_stage_op(x, LANDMSG_LINK, recv_land_srel(x, f->rel), &req);
        req.op.flags |= LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | (f->offer.mtime_ns ? LANDMSG_LINK_MTIME : 0);
        req.op.mode = recv_tree_mode(f->offer.mode);
        req.op.mtime_ns = f->offer.mtime_ns;
        digest_hex(f->digest, req.op.target);
        recv_land_op_attrs(x, &f->offer, &req.op);
        recv_land_ask(x, &req, f->fd, recv_land_on_entry, "publishing as its user");
}

/* ---- a pack ---- */

/*
 * A pack's directories and files, in its order, made by the lander a
 * chunk at a time (a pack holds up to PACK_ENTRIES_MAX). The pack came
 * into a sealed memfd (recv_pack_mem_new), which the lander is handed
 * once (MEM); a chunk is one BATCH of MKDIRs and CREATEs (as many as fit
 * one, LANDMSG_BATCH_MAX at most; each directory made before what it
 * holds: the lander does them in order), each CREATE its file's place in
 * that memory with its mode, mtime and digest: the lander makes each file
 * whole, as the user. One round trip a chunk, and no descriptor crossing
 * the socket (there were two round trips a chunk, a TMPFILE's descriptor
 * back and a LINK's out again for each file). A chunk's BATCH is built
 * on a worker, its files' digests computed there; while the lander makes
 * one chunk, the worker builds the next (RECV_LAND_CHUNKS under way at
 * once). Symlinks and hard links are in the tree's list by then, made at
 * the end as any (recv_pack_make).
 */
#define RECV_LAND_CHUNKS        2

struct recv_land_op {
        bool dir;
        uint32_t mode;
        uint64_t mtime_ns;
        uint64_t off, size;     /* its data, in fin's pack_mem */
        const char *name;       /* the entry's, DEST first, not NUL-terminated */
        size_t name_len;
        const uint8_t *xattrs;  /* in fin's pack_mem: its attributes (xattrs_len bytes) */
        uint16_t xattrs_len;
};

struct recv_land_pack;

struct recv_land_chunk {
        struct io_req req;      /* its BATCH, built on a worker */
        struct recv_land_pack *lp;
        size_t first, count;    /* its entries */
        struct landmsg batch;
};

struct recv_land_pack {
        struct recv_xfer *x;
        const uint8_t *mem;     /* fin's pack_mem */
        size_t n, cap;
        size_t next;            /* the first entry no chunk took yet */
        bool building;          /* a chunk's BATCH on a worker */
        bool mem_handed;        /* the lander took the memory (MEM answered) */
        /* Chunks built (each asked as soon as it is) and answered; chunk
         * k is chunk[k % RECV_LAND_CHUNKS]. */
        size_t built, answered;
        struct recv_land_chunk chunk[RECV_LAND_CHUNKS];
        struct recv_land_op op[];
};

int recv_land_pack_new(struct recv_xfer *x)
{
        size_t cap = MAX(x->fin->offer.pack_entries, 1u);

        recv_land_pack_free(x);
        x->land_pack = calloc(1, sizeof(*x->land_pack) + cap * sizeof(x->land_pack->op[0]));
        if (!x->land_pack)
                return -ENOMEM;
        x->land_pack->x = x;
        x->land_pack->cap = cap;
        for (size_t k = 0; k < RECV_LAND_CHUNKS; k++)
                x->land_pack->chunk[k].lp = x->land_pack;
        return 0;
}

void recv_land_pack_free(struct recv_xfer *x)
{
        free(x->land_pack);
        x->land_pack = NULL;
}

int recv_land_pack_plan(struct recv_xfer *x, const struct pack_entry *e, const char *rel)
{
        struct recv_land_pack *lp = x->land_pack;
        int r;

        if (lp->n == lp->cap)
                return -E2BIG;
        if (e->type == PACK_DIR) {
                r = recv_tree_attr_add(x, rel, S_IFDIR | recv_tree_mode(e->mode), e->mtime_ns);
                if (r < 0)
                        return r;
        }
        lp->op[lp->n++] = (struct recv_land_op){ .dir = e->type == PACK_DIR, .mode = recv_tree_mode(e->mode),
                                                 .mtime_ns = e->mtime_ns,
                                                 .off = e->data ? (uint64_t)(e->data - x->fin->pack_mem) : 0,
                                                 .size = e->size, .name = e->name, .name_len = e->name_len,
                                                 .xattrs = e->xattrs, .xattrs_len = e->xattrs_len };
        return 0;
}

/* @op's path in the staging directory, NUL-terminated. */
static void recv_land_op_srel(const struct recv_xfer *x, const struct recv_land_op *op,
                              char out[static WIRE_PATH_MAX + 1])
{
        size_t dlen = strlen(x->dest) + 1;      /* DEST and its '/': recv_pack_make held it */

        snprintf(out, WIRE_PATH_MAX + 1, "%.*s", (int)(op->name_len - dlen), op->name + dlen);
}

/* Kept up to date, a packed file's CREATE keeps the file there when it
 * is the same by the sync's rule (landmsg.h, LANDMSG_LINK_KEEP_*): its
 * data came all the same, the comparison is the lander's; with -X, its
 * user.* too (-A: its ACLs, LANDMSG_OP_ACLS). */
static uint32_t recv_land_keep_flag(const struct recv_xfer *x)
{
        uint32_t keep;

        if (x->sync & WIRE_OFFER_SKIP_EXISTING)
                return LANDMSG_LINK_KEEP_ANY;
        keep = (x->sync & WIRE_OFFER_DIGEST) ? LANDMSG_LINK_KEEP_BYTES : x->sync ? LANDMSG_LINK_KEEP_SIZE : 0;
        if (keep && (x->landing->flags & WIRE_LAND_XATTRS))
                keep |= LANDMSG_LINK_KEEP_XATTRS;
        return keep;
}

/*
 * On a worker: chunk @arg's BATCH, from its first entry on, as many as
 * fit one: a directory's MKDIR (0700 until the tree's end; its
 * attributes as it is made), a file's CREATE (its data's place in the
 * pack, its mode, mtime, digest and attributes). 0, or -EINVAL where a
 * request does not encode. Touches the chunk only.
 */
static int64_t recv_land_chunk_build(void *arg)
{
        struct recv_land_chunk *c = arg;
        const struct recv_land_pack *lp = c->lp;
        const struct recv_xfer *x = lp->x;
        char srel[WIRE_PATH_MAX + 1];
        struct landmsg_op one;
        size_t i;

        landmsg_batch_init(&c->batch, x->land_session);
        for (i = c->first; i < lp->n; i++) {
                const struct recv_land_op *op = &lp->op[i];
                uint8_t sum[WIRE_DIGEST_SIZE];
                int r;

                recv_land_op_srel(x, op, srel);
                landmsg_op_init(&one, x->land_session);
                one.flags = LANDMSG_OP_STAGE | (x->land_into ? LANDMSG_OP_INTO : 0);
                if (op->dir) {
                        snprintf(one.path, sizeof(one.path), "%s", srel);
                        one.mode = 0700;
                } else {
                        snprintf(one.leaf, sizeof(one.leaf), "%.*s", LANDMSG_LEAF_MAX, recv_land_split(srel, one.path));
                        one.flags |= LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST |
                                     (op->mtime_ns ? LANDMSG_LINK_MTIME : 0) | recv_land_keep_flag(x);
                        one.mode = op->mode;
                        one.mtime_ns = op->mtime_ns;
                        one.data_off = op->off;
                        one.data_len = op->size;
                        digest_buffer(lp->mem + op->off, op->size, sum);
                        digest_hex(sum, one.target);
                }
                recv_land_op_attrs_of(x, &one, op->xattrs, op->xattrs_len);
                r = landmsg_batch_add(&c->batch, op->dir ? LANDMSG_MKDIR : LANDMSG_CREATE, &one);
                if (r == -ENOSPC && i > c->first)
                        break;          /* the chunk ends here */
                if (r < 0)
                        return -EINVAL;
        }
        c->count = i - c->first;
        return 0;
}

static void recv_land_pack_step(struct recv_xfer *x);

static struct recv_land_chunk *recv_land_chunk_of(struct recv_land_pack *lp, size_t k)
{
        return &lp->chunk[k % RECV_LAND_CHUNKS];
}

static void recv_land_on_chunk_made(void *arg, const struct landmsg *reply, int *fds, size_t nfds)
{
        struct recv_xfer *x = arg;
        bool extra = nfds > 0;

        while (nfds > 0)
                safe_close(fds[--nfds]);
        if (!recv_land_tree_answered(x, reply, -1, LANDMSG_FDS, true, "making packed files"))
                return;
        if (extra) {
                recv_fail(x, WIRE_E_INTERNAL, "making packed files: rdmaxfer-lander answered with descriptors");
                return;
        }
        /* The files kept, as a pack's skipped ones are counted (recv-pack.c). */
        x->fin->pack_skipped += reply->fds.kept;
        x->files_skipped += reply->fds.kept;
        x->land_pack->answered++;
        recv_land_pack_step(x);
}

static void recv_land_on_chunk_built(struct io_req *req, int64_t res)
{
        struct recv_land_chunk *c = container_of(req, struct recv_land_chunk, req);
        struct recv_land_pack *lp = c->lp;
        struct recv_xfer *x = lp->x;
        int r;

        if (res == -EINVAL) {
                if (recv_land_tree_publishing(x))
                        recv_fail(x, WIRE_E_INTERNAL, "making packed files: a request that does not encode");
                return;
        }
        if (!recv_land_tree_io_ok(x, res, "making packed files"))
                return;
        lp->building = false;
        lp->next = c->first + c->count;
        lp->built++;
        r = x->env->landc ? landc_ask_batch(x->env->landc, &c->batch, NULL, 0, recv_land_on_chunk_made, x) : -ENOTCONN;
        if (!recv_land_asked(x, r, "making packed files as their user"))
                return;
        recv_land_pack_step(x);
}

static void recv_land_on_mem(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        if (!recv_land_tree_answered(x, reply, fd, LANDMSG_OK, false, "handing rdmaxfer-lander the pack"))
                return;
        x->land_pack->mem_handed = true;
        recv_land_pack_step(x);
}

/*
 * What can go on now: the next chunk's BATCH built on a worker, one at a
 * time, while fewer than RECV_LAND_CHUNKS are with the lander (each is
 * asked once built: in order, as the lander answers); once the memory is
 * handed over and every chunk answered, the entry done.
 */
static void recv_land_pack_step(struct recv_xfer *x)
{
        struct recv_land_pack *lp = x->land_pack;
        struct recv_land_chunk *c;

        if (lp->building)
                return;
        if (lp->next < lp->n && lp->built - lp->answered < RECV_LAND_CHUNKS) {
                c = recv_land_chunk_of(lp, lp->built);
                c->first = lp->next;
                c->count = 0;
                c->req.done = recv_land_on_chunk_built;
                if (io_call(x->env->io, &c->req, recv_land_chunk_build, c) < 0) {
                        recv_fail(x, WIRE_E_INTERNAL, "making packed files: cannot queue it");
                        return;
                }
                lp->building = true;
                xfer_io_start(&x->base, "preparing packed files");
                return;
        }
        if (lp->mem_handed && lp->next == lp->n && lp->answered == lp->built) {
                recv_land_pack_free(x);
                recv_tree_entry_done(x);
        }
}

void recv_land_pack_go(struct recv_xfer *x)
{
        struct recv_land_pack *lp = x->land_pack;
        struct landmsg req = { .type = LANDMSG_MEM };

        lp->next = lp->built = lp->answered = 0;
        lp->building = lp->mem_handed = false;
        lp->mem = x->fin->pack_mem;
        if (x->fin->pack_mem_fd < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "making packed files: the pack is not in memory the lander can be handed");
                return;
        }
        /* The lander reads the files' data from the pack's memory itself;
         * it answers in order, so the chunks need not wait for this. */
        landmsg_op_init(&req.op, x->land_session);
        if (!recv_land_ask(x, &req, x->fin->pack_mem_fd, recv_land_on_mem, "handing rdmaxfer-lander the pack"))
                return;
        recv_land_pack_step(x);
}

/* ---- the end ---- */

/* The batch's next request, from a record: 0 when the batch is full. */
static int recv_land_end_add(struct recv_land_end *le, uint16_t type, const struct recv_link_rec *rec,
                             const char *rel, const char *target)
{
        size_t rl = strlen(rel) + 1, tl = strlen(target) + 1;
        struct recv_land_item *it;

        if (le->n == RECV_LAND_BATCH || le->used + rl + tl > sizeof(le->arena))
                return 0;
        it = &le->item[le->n++];
        *it = (struct recv_land_item){ .type = type, .mode = rec->mode, .mtime_ns = rec->mtime_ns,
                                       .rel = le->used, .target = le->used + rl };
        memcpy(le->arena + it->rel, rel, rl);
        memcpy(le->arena + it->target, target, tl);
        le->used += rl + tl;
        return 1;
}

/*
 * On a worker: the end's next batch from the tree's list: its links in
 * the order they came, then its directories' modes and mtimes, the last
 * first (each directory's once everything beneath it has its own); DEST's
 * own noted for after PUBLISH (x->dest_attr). The batch's size, 0 when
 * nothing is left, or -errno. Touches le, x->links_fd, links_len and
 * dest_attr, dest_mode, dest_mtime_ns.
 */
static int64_t recv_land_end_fill(void *arg)
{
        struct recv_land_end *le = arg;
        struct recv_xfer *x = le->x;
        char rel[WIRE_PATH_MAX + 1], target[NAME_LINK_MAX + 1];
        struct recv_link_rec rec;
        int64_t next;

        le->n = le->used = 0;
        while (!le->links_done) {
                if (le->off >= x->links_len) {
                        le->links_done = true;
                        break;
                }
                next = recv_tree_list_read(x, le->off, &rec, rel, target);
                if (next < 0)
                        return next;
                if (rec.target_len == 0) {
                        if (le->nattr == le->cap) {
                                size_t cap = le->cap ? 2 * le->cap : 64;
                                uint64_t *more = reallocarray(le->attr_at, cap, sizeof(*more));

                                if (!more)
                                        return -ENOMEM;
                                le->attr_at = more;
                                le->cap = cap;
                        }
                        le->attr_at[le->nattr++] = le->off;
                } else if (!recv_land_end_add(le, rec.mode == S_IFREG ? LANDMSG_HARDLINK : LANDMSG_SYMLINK, &rec,
                                              rel, target)) {
                        return (int64_t)le->n;  /* full: this record heads the next batch */
                }
                le->off = (uint64_t)next;
        }
        while (le->nattr > 0) {
                if (recv_tree_list_read(x, le->attr_at[le->nattr - 1], &rec, rel, target) < 0)
                        return -EIO;
                if (!strchr(rel, '/')) {
                        x->dest_attr = true;
                        x->dest_mode = rec.mode;
                        x->dest_mtime_ns = rec.mtime_ns;
                } else if (!S_ISDIR(rec.mode) || !recv_land_end_add(le, LANDMSG_SETATTR, &rec, rel, "")) {
                        if (!S_ISDIR(rec.mode))
                                return -EIO;    /* a landing lists no file's mode */
                        break;
                }
                le->nattr--;
        }
        return (int64_t)le->n;
}

static void recv_land_end_next(struct recv_xfer *x);

static void recv_land_on_end_answer(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        /* A symlink the tree there has, kept (LANDMSG_LINK_KEEP_*). Not
         * counted as kept: the RESULT of its pack, or its own, said what
         * came, before the end (the sender's count and the journal's agree). */
        if (reply->type == LANDMSG_FDS && reply->fds.count == 0 && reply->fds.kept == 1) {
                safe_close(fd);
                if (!recv_land_tree_publishing(x))
                        return;
        } else if (!recv_land_tree_answered(x, reply, fd, LANDMSG_OK, false, "finishing the tree")) {
                return;
        }
        if (--x->land_end->waiting == 0)
                recv_land_end_next(x);
}

/* The batch to the lander, every request at once (it answers in order). */
static void recv_land_end_ask(struct recv_xfer *x)
{
        struct recv_land_end *le = x->land_end;
        struct landmsg req;

        le->waiting = le->n;
        for (size_t i = 0; i < le->n; i++) {
                const struct recv_land_item *it = &le->item[i];
                const char *srel = recv_land_srel(x, le->arena + it->rel), *target = le->arena + it->target;

                if (it->type == LANDMSG_SETATTR) {
                        req = (struct landmsg){ .type = LANDMSG_SETATTR };
                        req.setattr.session = x->land_session;
                        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE |
                                            (it->mtime_ns ? LANDMSG_SET_MTIME : 0) |
                                            (x->land_into ? LANDMSG_OP_INTO : 0);
                        req.setattr.mode = recv_tree_mode(it->mode);
                        req.setattr.mtime_ns = it->mtime_ns;
                        snprintf(req.setattr.path, sizeof(req.setattr.path), "%s", srel);
                } else {
                        recv_land_stage_op(x, it->type, srel, &req);
                        /* A hard link's file by its staged name; a symlink's target as sent,
                         * the one the tree there has kept where it points there too (a sync). */
                        snprintf(req.op.target, sizeof(req.op.target), "%s",
                                 it->type == LANDMSG_HARDLINK ? recv_land_srel(x, target) : target);
                        req.op.mtime_ns = it->type == LANDMSG_SYMLINK ? it->mtime_ns : 0;
                        if (it->type == LANDMSG_SYMLINK)
                                req.op.flags |= recv_land_keep_flag(x) & _LANDMSG_LINK_KEEP;
                }
                if (!recv_land_ask(x, &req, -1, recv_land_on_end_answer, "finishing the tree as its user"))
                        return;
        }
}

static void recv_land_on_dest_attr(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;

        safe_close(fd);
        if (!recv_land_tree_publishing(x))
                return;
        /* Published whatever they do, as the drop box's DEST. */
        if (reply->type != LANDMSG_OK)
                log_warning("%s: %s: published, but its own mode and mtime could not be set: %s", x->base.peer,
                            reply->type == LANDMSG_ERROR ? reply->error.where : x->landing->path,
                            reply->type == LANDMSG_ERROR ? reply->error.text : "no answer");
        recv_published(x);
}

static void recv_land_on_published(void *arg, const struct landmsg *reply, int fd)
{
        struct recv_xfer *x = arg;
        struct landmsg req = { .type = LANDMSG_SETATTR };

        /* Deleting, the lander says how many entries went (PUBLISHED). */
        if (!recv_land_tree_answered(x, reply, fd, recv_land_deleting(x) ? LANDMSG_PUBLISHED : LANDMSG_OK, false,
                                     "publishing the tree"))
                return;
        if (recv_land_deleting(x))
                x->deleted = reply->published.deleted;
        x->published_tree = true;
        x->land_staged = false;
        if (!x->dest_attr) {
                recv_published(x);
                return;
        }
        /* DEST's own mode and mtime, in place (its parent is the same). */
        req.setattr.session = x->land_session;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | (x->dest_mtime_ns ? LANDMSG_SET_MTIME : 0);
        req.setattr.mode = recv_tree_mode(x->dest_mode);
        req.setattr.mtime_ns = x->dest_mtime_ns;
        snprintf(req.setattr.path, sizeof(req.setattr.path), "%s", x->land_into ? x->dest : "");
        recv_land_ask(x, &req, -1, recv_land_on_dest_attr, "setting the tree's own mode as its user");
}

/* Every entry made: the staging directory synced and renamed into place. */
static void recv_land_publish_tree(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_PUBLISH };

        req.op.session = x->land_session;
        /* Kept up to date: merged into the tree there, or (deleting)
         * put in its place, what it kept linked in already (landmsg.h). */
        req.op.flags = (x->land_into ? LANDMSG_OP_INTO : 0) |
                       ((x->landing->flags & WIRE_LAND_REPLACE) ? LANDMSG_PUBLISH_REPLACE : 0) |
                       (recv_land_deleting(x) ? LANDMSG_PUBLISH_DELETE : x->sync ? LANDMSG_PUBLISH_MERGE : 0);
        if (x->land_into)
                snprintf(req.op.leaf, sizeof(req.op.leaf), "%s", x->dest);
        recv_land_ask(x, &req, -1, recv_land_on_published, "publishing the tree as its user");
}

static void recv_land_on_filled(struct io_req *req, int64_t res)
{
        struct recv_land_end *le = container_of(req, struct recv_land_end, req);
        struct recv_xfer *x = le->x;

        if (!recv_land_tree_io_ok(x, res, "the tree's list"))
                return;
        if (res == 0)
                recv_land_publish_tree(x);
        else
                recv_land_end_ask(x);
}

static void recv_land_end_next(struct recv_xfer *x)
{
        struct recv_land_end *le = x->land_end;
        int r;

        le->req.done = recv_land_on_filled;
        r = io_call(x->env->io, &le->req, recv_land_end_fill, le);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "the tree's list: cannot queue it");
                return;
        }
        xfer_io_start(&x->base, "reading the tree's list");
}

void recv_land_tree_end(struct recv_xfer *x)
{
        x->land_end = calloc(1, sizeof(*x->land_end));
        if (!x->land_end) {
                recv_fail(x, WIRE_E_INTERNAL, "out of memory to finish the tree");
                return;
        }
        x->land_end->x = x;
        recv_land_end_next(x);
}

static void recv_land_on_discarded(void *arg, const struct landmsg *reply, int fd)
{
        safe_close(fd);
        /* ESRCH: the lander that held the session is gone; the job's next
         * attempt clears what it staged (MKDIR of the staging directory). */
        if (reply->type == LANDMSG_ERROR && reply->error.verdict != LANDC_UNREACHABLE && reply->error.err != ESRCH)
                log_warning("a landing's staging directory was not removed: %s: %s", reply->error.where,
                            reply->error.text);
}

void recv_land_tree_gone(struct recv_xfer *x)
{
        struct landmsg req = { .type = LANDMSG_DISCARD };

        /* What it staged goes (the lander's END comes after: it answers in order). */
        if (x->land_staged && x->land_session && x->env->landc && !x->env->freeing) {
                req.op.session = x->land_session;
                req.op.flags = x->land_into ? LANDMSG_OP_INTO : 0;
                (void)landc_ask(x->env->landc, &req, -1, recv_land_on_discarded, NULL);
        }
        if (x->land_end)
                free(x->land_end->attr_at);
        free(x->land_end);
        x->land_end = NULL;
        recv_land_pack_free(x);
}
