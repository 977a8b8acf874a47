/*
 * A dry run (wire.h, version 17, Dry runs): every offer is held to the
 * rules a real session's would meet, and nothing is made.
 *
 *   DEST, or a single file without sync: a worker looks at the name (and
 *   at DEST's parent, which a real session renames into); a tree's entry
 *   merged into an existing DEST, or a file that syncs: the sync probe
 *   (recv-sync.c), whose verdict is the real one's; an entry of a tree
 *   that is not merged: nothing is there, it would be created.
 *
 * Each is answered as a kept entry is (ACCEPT SKIP, then its RESULT),
 * the RESULT saying the verdict; a refusal is the real one's. A link's
 * target is its data: it comes as ever, is judged when a real session
 * would add it to the tree's list (recv-file.c), and goes nowhere.
 *
 * With WIRE_OFFER_DELETE and a DEST merged into, the names offered are
 * kept (at most job_files of them); once the last entry is judged, a
 * worker walks the old DEST for what a real session would remove
 * (incoming_dry_gone), and each goes to the sender in a GONE, a control
 * buffer at a time, before the session's last RESULT ("deleted N"). A
 * landing's DEST is the user's, walked by the lander's walker as the user
 * (landmsg.h, Deleting, dry): a worker reads its names and holds them
 * against those offered the same way (recv_dry_read_names).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "auth.h"
#include "filter.h"
#include "incoming.h"
#include "landmsg.h"
#include "log.h"
#include "recv-int.h"
#include "recv-publish.h"
#include "xattrs.h"

/* Names listed in GONEs at most; beyond, counted only ("deleted N" says all). */
#define RECV_DRY_GONE_MAX       100000u

static bool recv_dry_deleting(const struct recv_xfer *x)
{
        return x->tree && (x->sync & WIRE_OFFER_DELETE);
}

/* An offered entry's name, its kind first ('d' a directory, 'f' another). */
static void recv_dry_keep_name(struct recv_xfer *x, const struct wire_offer *o)
{
        size_t n = strlen(o->name);
        char *s;

        if (x->dry_oom)
                return;
        if (x->dry_n == x->dry_cap) {
                /* Twice the room, up to one a job's entry (and a few): an
                 * offer past the job's entries never comes this far. */
                uint64_t cap = MIN(x->dry_cap ? 2ull * x->dry_cap : 64u, (uint64_t)x->job_files + 64u);
                char **v = cap > x->dry_cap ? realloc(x->dry_names, cap * sizeof(*v)) : NULL;

                if (!v) {
                        x->dry_oom = true;
                        return;
                }
                x->dry_names = v;
                x->dry_cap = (uint32_t)cap;
        }
        s = malloc(n + 2);
        if (!s) {
                x->dry_oom = true;
                return;
        }
        s[0] = (o->flags & WIRE_OFFER_DIR) ? 'd' : 'f';
        memcpy(s + 1, o->name, n + 1);
        x->dry_names[x->dry_n++] = s;
}

static int recv_dry_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

void recv_dry_free(struct recv_xfer *x)
{
        for (uint32_t i = 0; i < x->dry_n; i++)
                free(x->dry_names[i]);
        free(x->dry_names);
        x->dry_names = NULL;
        x->dry_n = x->dry_cap = 0;
        x->dry_walk_fd = safe_close(x->dry_walk_fd);
        free(x->dry_gone);
        x->dry_gone = NULL;
        x->dry_gone_len = x->dry_gone_cap = x->dry_gone_off = 0;
        free(x->dry_replaced);
        x->dry_replaced = NULL;
        x->dry_replaced_n = x->dry_replaced_cap = 0;
        x->dry_replaced_full = false;
}

/* Files with other names that a dry run would replace, at most; beyond,
 * every hard link is said to be replaced too. */
#define RECV_DRY_REPLACED_MAX   65536u

static struct recv_dry_ino *recv_dry_ino_slot(struct recv_dry_ino *v, uint32_t cap, uint64_t dev, uint64_t ino)
{
        uint64_t h = (ino * 0x9e3779b97f4a7c15ull) ^ (dev * 0xc2b2ae3d27d4eb4full);
        uint32_t i = (uint32_t)(h >> 32) & (cap - 1);

        while (v[i].ino && (v[i].ino != ino || v[i].dev != dev))
                i = (i + 1) & (cap - 1);
        return &v[i];
}

/* @st, a file there that has other names, would be replaced: kept in x->dry_replaced. */
static void recv_dry_replacing(struct recv_xfer *x, const struct stat *st)
{
        struct recv_dry_ino *slot;

        if (x->dry_replaced_full || st->st_ino == 0)
                return;
        /* Half full at most: grown twice as large, every pair moved. */
        if (2 * (x->dry_replaced_n + 1) > x->dry_replaced_cap) {
                uint32_t cap = x->dry_replaced_cap ? 2 * x->dry_replaced_cap : 64;
                struct recv_dry_ino *v;

                v = x->dry_replaced_n < RECV_DRY_REPLACED_MAX ? calloc(cap, sizeof(*v)) : NULL;
                if (!v) {
                        x->dry_replaced_full = true;
                        return;
                }
                for (uint32_t i = 0; i < x->dry_replaced_cap; i++)
                        if (x->dry_replaced[i].ino)
                                *recv_dry_ino_slot(v, cap, x->dry_replaced[i].dev, x->dry_replaced[i].ino) =
                                        x->dry_replaced[i];
                free(x->dry_replaced);
                x->dry_replaced = v;
                x->dry_replaced_cap = cap;
        }
        slot = recv_dry_ino_slot(x->dry_replaced, x->dry_replaced_cap, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
        if (!slot->ino) {
                *slot = (struct recv_dry_ino){ .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino };
                x->dry_replaced_n++;
        }
}

bool recv_dry_replaced(const struct recv_xfer *x, const struct stat *st)
{
        if (x->dry_replaced_full)
                return true;
        return x->dry_replaced_cap &&
               recv_dry_ino_slot(x->dry_replaced, x->dry_replaced_cap, (uint64_t)st->st_dev, (uint64_t)st->st_ino)
                       ->ino != 0;
}

const char *recv_dry_text(const struct recv_file *f)
{
        if (f->dry[0])
                return f->dry;
        /* A link kept as it was (recv_sync_link said so). */
        return f->skip || f->pack_skipped ? "skipped" : "would create";
}

/* What a real session would do with the entry the probe or the look found
 * (x->sync_had, sync_st): make it, merge into it, or replace it. */
static void recv_dry_say(struct recv_xfer *x, struct recv_file *f)
{
        const struct wire_offer *o = &f->offer;
        const struct stat *st = &x->sync_st;
        uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
        bool reg = S_ISREG(st->st_mode), dir = o->flags & WIRE_OFFER_DIR;

        if (!x->sync_had) {
                snprintf(f->dry, sizeof(f->dry), "would create");
                return;
        }
        /* A directory merged into; DEST replaced whole (overwrite, no sync). */
        if (dir && S_ISDIR(st->st_mode) && !(o->file == 0 && !x->merge)) {
                snprintf(f->dry, sizeof(f->dry), "exists");
                return;
        }
        /* A file there with other names: a hard link to it is not kept. */
        if (reg && st->st_nlink > 1)
                recv_dry_replacing(x, st);
        /* The digests were compared only where the sizes are the same;
         * the attributes where they were sent (a landing's -A, -X). */
        snprintf(f->dry, sizeof(f->dry), "would replace %c%c%c%c%c",
                 (x->sync & WIRE_OFFER_DIGEST) && reg && (uint64_t)st->st_size == o->size ? 'c' : '.',
                 !dir && (!reg || (uint64_t)st->st_size != o->size) ? 's' : '.',
                 o->mtime_ns && mtime != o->mtime_ns ? 't' : '.', (x->dry_attrs & XATTRS_ACL) ? 'a' : '.',
                 (x->dry_attrs & XATTRS_USER) ? 'x' : '.');
}

void recv_dry_sent(struct recv_xfer *x)
{
        recv_dry_say(x, x->cur);
        recv_answer_skip(x);
}

/* DEST's parent, which a real session makes as needed and renames into:
 * one that is there must let us. 0 or -errno. */
static int recv_dry_parent(int dirfd, const char *name)
{
        const char *slash = strrchr(name, '/');
        char parent[WIRE_PATH_MAX + 1];
        int pfd, r = 0;

        if (!slash)
                return 0;
        snprintf(parent, sizeof(parent), "%.*s", (int)(slash - name), name);
        pfd = incoming_open_beneath(dirfd, parent, false);
        if (pfd == -ENOENT)
                return 0;
        if (pfd < 0)
                return pfd;
        if (faccessat(pfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
                r = -errno;
        close(pfd);
        return r;
}

/* On a worker: DEST, or a single file without sync, looked at as a real
 * session's first steps do (recv_tree_begin, recv_on_lookup). Writes
 * x->sync_had, sync_st, merge, dry_status, sync_why. */
static int64_t recv_dry_look(void *arg)
{
        struct recv_xfer *x = arg;
        const struct wire_offer *o = &x->cur->offer;
        int dirfd = x->env->incoming_fd;
        struct stat st;
        int r;

        x->dry_status = WIRE_OK;
        r = incoming_stat_beneath(dirfd, o->name, &st);
        if (r < 0 && r != -ENOENT)
                return r;
        x->sync_had = r == 0;
        if (r == 0)
                x->sync_st = st;
        if (!x->tree) {
                if (x->sync_had && !x->overwrite)
                        x->dry_status = WIRE_E_EXISTS;
                return 0;
        }
        if (x->sync_had && (x->sync & (WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC))) {
                if (!S_ISDIR(st.st_mode)) {
                        snprintf(x->sync_why, sizeof(x->sync_why), "the destination exists as a file");
                        x->dry_status = WIRE_E_EXISTS;
                        return 0;
                }
                x->merge = true;
        } else if (x->sync_had && !x->overwrite) {
                snprintf(x->sync_why, sizeof(x->sync_why), "the destination exists");
                x->dry_status = WIRE_E_EXISTS;
                return 0;
        }
        return recv_dry_parent(dirfd, o->name);
}

static void recv_dry_on_looked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!xfer_io_done(&x->base) || x->base.state != XFER_OFFER)
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "looking at %.*s: %s", WIRE_TEXT_MAX - 60, x->cur->offer.name,
                         strerror((int)-res));
                recv_fail(x, res == -ENOTDIR || res == -ELOOP ? WIRE_E_NAME : wire_status_of_errno((int)-res),
                          text);
                return;
        }
        if (x->dry_status != WIRE_OK) {
                recv_fail(x, x->dry_status, x->sync_why[0] ? x->sync_why : NULL);
                return;
        }
        recv_dry_sent(x);
}

void recv_dry_offer(struct recv_xfer *x)
{
        const struct wire_offer *o = &x->cur->offer;
        int r;

        x->cur->dry[0] = '\0';
        x->sync_had = false;
        x->dry_attrs = 0;
        if (recv_dry_deleting(x) && o->file > 0)
                recv_dry_keep_name(x, o);
        /* As its user: the lander looks (recv-land.c). */
        if (x->landing) {
                recv_land_dry(x);
                return;
        }
        /* A link's target is its data, judged once it is here. */
        if (o->flags & WIRE_OFFER_LINK) {
                recv_file_open(x);
                return;
        }
        if (x->tree && o->file > 0 && !x->merge) {
                recv_dry_sent(x);
                return;
        }
        if (x->tree ? o->file > 0 : (x->sync & (WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC)) != 0) {
                recv_sync_probe_start(x);
                return;
        }
        x->sync_why[0] = '\0';
        /* The worker reads this copy, not cfg (a reload may replace it). */
        x->overwrite = x->env->cfg.overwrite;
        x->cur->req.done = recv_dry_on_looked;
        r = io_call(x->env->io, &x->cur->req, recv_dry_look, x);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "looking at the destination: no room for a disk request");
                return;
        }
        xfer_io_start(&x->base, "looking at the destination");
}

void recv_dry_link_said(struct recv_file *f, const struct stat *there)
{
        uint64_t mtime;

        if (!there) {
                snprintf(f->dry, sizeof(f->dry), "would create");
                return;
        }
        mtime = (uint64_t)there->st_mtim.tv_sec * 1000000000u + (uint64_t)there->st_mtim.tv_nsec;
        snprintf(f->dry, sizeof(f->dry), "would replace c.%c..",
                 f->offer.mtime_ns && mtime != f->offer.mtime_ns ? 't' : '.');
}

int recv_dry_link(struct recv_xfer *x, bool same)
{
        struct recv_file *f = x->fin;
        struct stat st;

        if (same) {
                snprintf(f->dry, sizeof(f->dry), "skipped");
                return 1;
        }
        x->sync_had = x->merge && incoming_stat_beneath(x->env->incoming_fd, f->offer.name, &st) == 0;
        recv_dry_link_said(f, x->sync_had ? &st : NULL);
        return 0;
}

bool recv_dry_hard_same(struct recv_xfer *x, const char *target, size_t len)
{
        struct recv_file *f = x->fin;
        char file[WIRE_PATH_MAX + 1];
        struct stat have, want;

        if (incoming_stat_beneath(x->env->incoming_fd, f->offer.name, &have) < 0 || !S_ISREG(have.st_mode))
                return false;
        snprintf(file, sizeof(file), "%.*s", (int)MIN(len, (size_t)WIRE_PATH_MAX), target);
        if (incoming_stat_beneath(x->env->incoming_fd, file, &want) < 0 || have.st_dev != want.st_dev ||
            have.st_ino != want.st_ino)
                return false;
        recv_dry_link_said(f, &have);
        f->link_there = have;
        return true;
}

/* ---- what --delete would remove ---- */

bool recv_protected(const struct recv_xfer *x, const char *path, bool is_dir)
{
        size_t n = strlen(x->dest);

        if (!x->protect || strncmp(path, x->dest, n) != 0 || path[n] != '/')
                return false;
        return filter_match(x->protect, path + n + 1, is_dir) == FILTER_EXCLUDE;
}

static int recv_dry_kept(void *arg, const char *path, mode_t mode)
{
        struct recv_xfer *x = arg;
        const char *key = path;
        char **hit;

        /* recv_dry_cmp looks past the kind: the key gets one too. */
        char buf[INCOMING_GONE_PATH_MAX + 1];

        snprintf(buf, sizeof(buf), "?%s", key);
        key = buf;
        hit = bsearch(&key, x->dry_names, x->dry_n, sizeof(*x->dry_names), recv_dry_cmp);
        if (hit)
                return (*hit)[0] == 'd' ? INCOMING_KEPT_DIR : INCOMING_KEPT;
        /* Not offered, and what the rules leave out: kept (wire.h, Deleting). */
        return recv_protected(x, path, S_ISDIR(mode)) ? INCOMING_KEPT : INCOMING_GONE;
}

static uint8_t recv_dry_kind(mode_t mode)
{
        return S_ISREG(mode) ? WIRE_GONE_FILE : S_ISDIR(mode) ? WIRE_GONE_DIR :
               S_ISLNK(mode) ? WIRE_GONE_LINK : WIRE_GONE_OTHER;
}

static void recv_dry_gone(void *arg, const char *path, mode_t mode)
{
        struct recv_xfer *x = arg;
        size_t n = strlen(path);

        x->deleted++;
        /* Counted, not named: one a GONE cannot carry, or past the bound. */
        if (n > WIRE_NAME_MAX || x->deleted > RECV_DRY_GONE_MAX)
                return;
        if (x->dry_gone_len + n + 2 > x->dry_gone_cap) {
                size_t cap = MAX(2 * x->dry_gone_cap, (size_t)4096);
                char *b = realloc(x->dry_gone, cap);

                if (!b)
                        return;
                x->dry_gone = b;
                x->dry_gone_cap = cap;
        }
        x->dry_gone[x->dry_gone_len] = (char)recv_dry_kind(mode);
        memcpy(x->dry_gone + x->dry_gone_len + 1, path, n + 1);
        x->dry_gone_len += n + 2;
}

static const struct incoming_gone_ops recv_dry_gone_ops = {
        .kept = recv_dry_kept,
        .gone = recv_dry_gone,
};

/* On a worker: the old DEST against the names offered. Touches x->dest,
 * dry_names (sorted), deleted, dry_gone. */
static int64_t recv_dry_walk(void *arg)
{
        struct recv_xfer *x = arg;

        return incoming_dry_gone(x->env->incoming_fd, x->dest, &recv_dry_gone_ops, x);
}

/* A landing's DEST, listed as its user: what a directory's entries get
 * from it (recv_dry_read_names). */
enum {
        RECV_DRY_IN_KEPT,       /* a directory the sent tree has: each entry judged */
        RECV_DRY_IN_GONE,       /* one it lacks: everything in it goes, then it */
        RECV_DRY_IN_SKIP,       /* one the sent tree has as another kind: left to the publish */
};

/* Deeper than a walk goes (walk.h's WALK_DEPTH_MAX), with room. */
#define RECV_DRY_NAMES_DEPTH    160
/* How long the walker may take to say the next name. */
#define RECV_DRY_WALK_WAIT_S    30

static mode_t recv_dry_walk_mode(uint8_t kind)
{
        return kind == LANDMSG_WALK_DIR ? S_IFDIR : kind == LANDMSG_WALK_SYMLINK ? S_IFLNK :
               kind == LANDMSG_WALK_FILE ? S_IFREG : S_IFIFO;
}

/* On a worker: the walker's names, in its order (a directory, its
 * entries, its end), against the names offered, as incoming_dry_gone
 * holds a drop box's DEST against them. Touches x->dest, dry_walk_fd,
 * dry_names (sorted), deleted, dry_gone, sync_why. 0 or -errno. */
static int64_t recv_dry_read_names(void *arg)
{
        struct recv_xfer *x = arg;
        _cleanup_(freep) struct landmsg *m = malloc(sizeof(*m));
        char path[INCOMING_GONE_PATH_MAX + 1];
        uint8_t in[RECV_DRY_NAMES_DEPTH];
        unsigned int sp = 0;
        bool any = false;
        int fd, r;

        if (!m)
                return -ENOMEM;
        in[0] = RECV_DRY_IN_KEPT;
        for (;;) {
                const struct landmsg_walk_entry *e = &m->walk_entry;
                int n;

                r = landmsg_recv(x->dry_walk_fd, m, &fd);
                safe_close(fd);
                if (r == -EAGAIN || r == -EWOULDBLOCK) {
                        snprintf(x->sync_why, sizeof(x->sync_why), "the lander's walker said nothing for %d s",
                                 RECV_DRY_WALK_WAIT_S);
                        return -ETIMEDOUT;
                }
                if (r < 0) {
                        snprintf(x->sync_why, sizeof(x->sync_why), "the lander's walker stopped before the end");
                        return -EIO;
                }
                if (m->type == LANDMSG_OK)
                        return sp == 0 ? 0 : -EPROTO;
                if (m->type == LANDMSG_ERROR) {
                        /* The tree there is gone since: nothing would be removed. */
                        if (m->error.err == ENOENT && !any)
                                return -ENOENT;
                        snprintf(x->sync_why, sizeof(x->sync_why), "%.*s%s%.*s", WIRE_TEXT_MAX / 2 - 1,
                                 m->error.where, m->error.where[0] ? ": " : "", WIRE_TEXT_MAX / 2 - 1,
                                 m->error.text);
                        return m->error.err ? -(int64_t)m->error.err : -EIO;
                }
                if (m->type != LANDMSG_WALK_ENTRY)
                        return -EPROTO;
                any = true;
                n = snprintf(path, sizeof(path), "%s/%s", x->dest, e->path);
                if (n < 0 || (size_t)n >= sizeof(path) - 1)
                        return -ENAMETOOLONG;
                if (e->kind == LANDMSG_WALK_DIR_END) {
                        if (sp == 0)
                                return -EPROTO;
                        if (in[sp--] == RECV_DRY_IN_GONE)
                                recv_dry_gone(x, path, S_IFDIR);
                        continue;
                }
                if (in[sp] == RECV_DRY_IN_GONE ||
                    (in[sp] == RECV_DRY_IN_KEPT &&
                     recv_dry_kept(x, path, recv_dry_walk_mode(e->kind)) == INCOMING_GONE)) {
                        if (e->kind != LANDMSG_WALK_DIR)
                                recv_dry_gone(x, path, recv_dry_walk_mode(e->kind));
                        else if (sp + 1 < RECV_DRY_NAMES_DEPTH)
                                in[++sp] = RECV_DRY_IN_GONE;
                        else
                                return -ELOOP;
                        continue;
                }
                if (e->kind != LANDMSG_WALK_DIR)
                        continue;
                if (sp + 1 >= RECV_DRY_NAMES_DEPTH)
                        return -ELOOP;
                /* Beneath a kept directory, each entry is judged; beneath
                 * one offered as a file (or in a skipped one), none. */
                in[sp + 1] = in[sp] == RECV_DRY_IN_KEPT && recv_dry_kept(x, path, S_IFDIR) == INCOMING_KEPT_DIR
                             ? RECV_DRY_IN_KEPT : RECV_DRY_IN_SKIP;
                sp++;
        }
}

static void recv_dry_on_walked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 64];        /* recv_fail cuts it to WIRE_TEXT_MAX */

        x->dry_walk_fd = safe_close(x->dry_walk_fd);
        if (!xfer_io_done(&x->base) || x->base.state == XFER_CLOSING || !x->fin)
                return;
        /* DEST gone since: a real session would remove nothing either. */
        if (res < 0 && res != -ENOENT) {
                snprintf(text, sizeof(text), "looking for what deleting would remove: %s",
                         x->sync_why[0] ? x->sync_why : strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        x->dry_pumping = true;
        x->dry_gone_off = 0;
        recv_dry_pump(x);
}

void recv_dry_pump(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_lane *l0 = recv_lane(x, 0);
        int r;

        if (!x->dry_pumping || b->state == XFER_CLOSING || !l0 || !x->fin)
                return;
        while (x->dry_gone_off < x->dry_gone_len) {
                struct wire_msg m = { .type = WIRE_GONE };
                const char *rec = x->dry_gone + x->dry_gone_off;

                /* One buffer stays free for the RESULT and the tick's CREDIT. */
                if (conn_ctrl_free(&l0->base.conn) < 3)
                        return;
                m.gone.file = x->fin->offer.file;
                m.gone.seq = x->dry_gone_seq;
                m.gone.kind = (uint8_t)rec[0];
                snprintf(m.gone.name, sizeof(m.gone.name), "%s", rec + 1);
                if (b->session.on)
                        auth_gone_mac(&b->session, &m.gone, m.gone.mac);
                r = conn_send_ctrl(&l0->base.conn, &m);
                if (r == -ENOBUFS)
                        return;
                if (r < 0) {
                        recv_fail(x, WIRE_E_INTERNAL, "cannot send what deleting would remove");
                        return;
                }
                x->dry_gone_off += strlen(rec + 1) + 2;
                x->dry_gone_seq++;
        }
        x->dry_pumping = false;
        recv_published(x);
}

void recv_dry_end(struct recv_xfer *x)
{
        int r;

        if (!recv_dry_deleting(x) || !x->merge) {
                recv_published(x);
                return;
        }
        if (x->dry_oom) {
                recv_fail(x, WIRE_E_INTERNAL, "no memory for the names offered, to judge deleting");
                return;
        }
        qsort(x->dry_names, x->dry_n, sizeof(*x->dry_names), recv_dry_cmp);
        x->sync_why[0] = '\0';
        /* The user's tree, listed as the user (recv_dry_names next). */
        if (x->landing) {
                recv_land_dry_walk(x);
                return;
        }
        x->fin->req.done = recv_dry_on_walked;
        r = io_call(x->env->io, &x->fin->req, recv_dry_walk, x);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "looking for what deleting would remove: no room for a disk "
                          "request");
                return;
        }
        xfer_io_start(&x->base, "looking for what deleting would remove");
}

void recv_dry_names(struct recv_xfer *x, int fd)
{
        const struct timeval wait = { .tv_sec = RECV_DRY_WALK_WAIT_S };
        int r;

        safe_close(x->dry_walk_fd);
        x->dry_walk_fd = fd;
        /* A worker waits on it: never for good. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "listing what deleting would remove: cannot bound the wait");
                return;
        }
        x->fin->req.done = recv_dry_on_walked;
        r = io_call(x->env->io, &x->fin->req, recv_dry_read_names, x);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "looking for what deleting would remove: no room for a disk "
                          "request");
                return;
        }
        xfer_io_start(&x->base, "looking for what deleting would remove");
}
