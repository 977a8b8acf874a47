/*
 * A pulled tree's walker (landmsg.h, "A tree pulled"; xferctl get -r): a
 * child of the lander that becomes the session's user for good and walks
 * DEST as that user would (common/walk.h), writing what it finds on its
 * end of a SOCK_SEQPACKET pair: the count, then each entry with its
 * descriptor, then OK; or an ERROR that names the entry. A dry run's
 * (send -n --delete) walks once, for names: each entry's kind and path,
 * a directory's end after its entries, then OK. It holds no
 * privilege from the moment it starts walking, so what it reads is what
 * the user could read, whatever its code got wrong.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hardlinks.h"
#include "landmsg.h"
#include "macro.h"
#include "name.h"
#include "walk.h"
#include "walker.h"
#include "xattrs.h"

struct walker {
        int sock;
        size_t leaf_len;                /* of DEST's leaf, where the walk's paths start */
        bool feeding;                   /* the second walk: entries go */
        bool names;                     /* one walk, names only (walker.h) */
        uint32_t entries, counted;
        uint64_t bytes;
        struct hardlinks *hard;
        unsigned int which;             /* the attributes each file and directory carries (xattrs.h) */
        struct landmsg m;               /* 12 KiB: not on the stack */
};

/* w->m an empty WALK_ENTRY: what its encoder reads cleared, not the
 * whole message (some 14 KiB, once an entry: under TCG a memset that size
 * costs more than the entry's own system calls). */
static void walker_entry_clear(struct walker *w)
{
        struct landmsg_walk_entry *e = &w->m.walk_entry;

        w->m.type = LANDMSG_WALK_ENTRY;
        w->m.id = 0;
        e->kind = 0;
        e->mode = 0;
        e->size = e->mtime_ns = 0;
        e->path[0] = e->target[0] = '\0';
        e->xattrs_len = 0;
}

/* Say why the walk stops, and stop it. */
_printf_(4, 5)
static int walker_error(struct walker *w, int err, const char *path, const char *fmt, ...)
{
        struct landmsg_error *e = &w->m.error;
        va_list ap;

        memset(&w->m, 0, sizeof(w->m));
        w->m.type = LANDMSG_ERROR;
        e->err = (uint32_t)(err < 0 ? -err : err);
        snprintf(e->where, sizeof(e->where), "%s", path ? path : "");
        va_start(ap, fmt);
        vsnprintf(e->text, sizeof(e->text), fmt, ap);
        va_end(ap);
        (void)landmsg_send(w->sock, &w->m, -1);
        return -ECANCELED;
}

/* A names-only walk's entry (landmsg.h, "Deleting, dry"): its kind and
 * path, a symlink's @target too. */
static int walker_name(struct walker *w, const char *path, uint8_t kind, const char *target)
{
        const char *rel = path + w->leaf_len + 1;
        size_t len = strlen(rel);

        if (name_path_check(rel, len, NULL) != NAME_OK || w->leaf_len + 1 + len > LANDMSG_PATH_MAX)
                return walker_error(w, ENAMETOOLONG, path, "a name that cannot be said (%s)",
                                    name_path_check(rel, len, NULL) == NAME_OK ? "its path is too long"
                                    : name_verdict_str(name_path_check(rel, len, NULL)));
        walker_entry_clear(w);
        w->m.walk_entry.kind = kind;
        snprintf(w->m.walk_entry.path, sizeof(w->m.walk_entry.path), "%s", rel);
        if (target) {
                snprintf(w->m.walk_entry.target, sizeof(w->m.walk_entry.target), "%s", target);
                w->m.walk_entry.size = strlen(w->m.walk_entry.target);
        }
        return landmsg_send(w->sock, &w->m, -1);
}

static int walker_entry(void *userdata, struct walk_entry *e)
{
        struct walker *w = userdata;
        struct landmsg_walk_entry *we = &w->m.walk_entry;
        const char *rel = e->path + w->leaf_len + 1, *first = NULL;
        size_t len;
        int r, fd = -1;

        if (e->depth == 0 && e->kind != WALK_DIR && e->kind != WALK_DIR_END)
                return walker_error(w, ENOTDIR, e->path, "not a directory (any more)");
        /* DEST itself: its mode and mtime the daemon has (OPEN_READ). */
        if (e->depth == 0)
                return 0;
        if (w->names)
                return walker_name(w, e->path, e->kind == WALK_DIR ? LANDMSG_WALK_DIR :
                                               e->kind == WALK_DIR_END ? LANDMSG_WALK_DIR_END :
                                               e->kind != WALK_SYMLINK ? LANDMSG_WALK_FILE :
                                               e->target[0] ? LANDMSG_WALK_SYMLINK : LANDMSG_WALK_OTHER,
                                   e->kind == WALK_SYMLINK && e->target[0] ? e->target : NULL);
        if (e->kind == WALK_DIR_END)
                return 0;
        len = strlen(rel);
        /* As the entry's name will be on the way: "LEAF/REL". */
        if (name_path_check(rel, len, NULL) != NAME_OK || w->leaf_len + 1 + len > LANDMSG_PATH_MAX)
                return walker_error(w, ENAMETOOLONG, e->path, "a name the receiver could not take (%s)",
                                    name_path_check(rel, len, NULL) == NAME_OK ? "its path is too long"
                                    : name_verdict_str(name_path_check(rel, len, NULL)));
        if (e->kind == WALK_SYMLINK && name_link_check(e->target, strlen(e->target), e->depth - 1) == NAME_LINK_BAD)
                return walker_error(w, EINVAL, e->path, "a symlink whose target cannot be sent");
        if (e->kind == WALK_FILE && e->st.st_nlink > 1 && w->hard) {
                /* Keyed by its name on the way, as xferctl's: "LEAF/REL". */
                r = hardlinks_seen(w->hard, e->st.st_dev, e->st.st_ino, e->path, &first);
                if (r < 0)
                        return walker_error(w, ENOMEM, e->path, "out of memory");
        }
        if (!w->feeding) {
                uint64_t size = first ? strlen(first) : e->kind == WALK_SYMLINK ? strlen(e->target) :
                                e->kind == WALK_FILE ? (uint64_t)e->st.st_size : 0;

                if (size > UINT64_MAX - w->bytes || w->entries == UINT32_MAX - 1)
                        return walker_error(w, E2BIG, e->path, "too many entries or bytes in one tree");
                w->bytes += size;
                w->entries++;
                return 0;
        }
        if (w->entries == w->counted)
                return walker_error(w, EAGAIN, e->path, "the tree changed while it was read (%u entries counted, "
                                    "then more)", w->counted);
        walker_entry_clear(w);
        snprintf(we->path, sizeof(we->path), "%s", rel);
        if (first) {
                we->kind = LANDMSG_WALK_HARDLINK;
                snprintf(we->target, sizeof(we->target), "%s", first + w->leaf_len + 1);
        } else if (e->kind == WALK_SYMLINK) {
                we->kind = LANDMSG_WALK_SYMLINK;
                snprintf(we->target, sizeof(we->target), "%s", e->target);
                we->size = strlen(e->target);
                we->mtime_ns = walk_mtime_ns(&e->st);
        } else {
                we->kind = e->kind == WALK_DIR ? LANDMSG_WALK_DIR : LANDMSG_WALK_FILE;
                we->mode = (uint32_t)(e->st.st_mode & 07777);
                we->size = e->kind == WALK_FILE ? (uint64_t)e->st.st_size : 0;
                we->mtime_ns = walk_mtime_ns(&e->st);
                fd = e->kind == WALK_FILE ? e->fd : -1;
                /* Its attributes (xferctl get -X, -A), read as the user. */
                if (w->which) {
                        char bad[256];
                        size_t need;
                        int n = xattrs_read(e->attr_fd, w->which, we->xattrs, sizeof(we->xattrs), &need, bad);

                        if (n == -E2BIG)
                                return walker_error(w, E2BIG, e->path, "its extended attributes and ACLs take %zu "
                                                    "bytes, more than the %u that go with an entry", need,
                                                    LANDMSG_XATTRS_MAX);
                        if (n < 0)
                                return walker_error(w, n, e->path, "reading its attributes%s%s: %s", bad[0] ? " " : "",
                                                    bad, strerror(-n));
                        we->xattrs_len = (uint16_t)n;
                }
        }
        r = landmsg_send(w->sock, &w->m, fd);
        if (r < 0)
                return r;       /* the daemon let go: nothing to say to anyone */
        w->entries++;
        return 0;
}

static int walker_skip(void *userdata, const char *path, mode_t mode, int err)
{
        struct walker *w = userdata;

        /* Listing names: what is there, read or not, but a directory
         * that cannot be listed (what is in it is unknown), and what went
         * away meanwhile (nothing to remove). */
        if (w->names && err == -ENOENT)
                return 0;
        if (w->names && (err == 0 || (err == -EACCES && S_ISREG(mode))))
                return walker_name(w, path, err ? LANDMSG_WALK_FILE : LANDMSG_WALK_OTHER, NULL);
        if (w->names)
                return walker_error(w, err, path, "cannot list it%s: %s", S_ISDIR(mode) ? "" : " (an entry)",
                                    strerror(-err));

        if (err == 0)
                return walker_error(w, EINVAL, path, "%s: a pull sends regular files, directories and symlinks "
                                    "only", walk_type_str(mode));
        return walker_error(w, err, path, "%s", strerror(-err));
}

/* The walks, in the child, as the user. Its exit status. */
static int walker_run(int sock, int pfd, const char *leaf, unsigned int which, bool names)
{
        struct walker *w = calloc(1, sizeof(*w));
        struct walk_ops ops = { .entry = walker_entry, .skip = walker_skip, .no_open = true };
        int r;

        if (!w)
                return 1;
        w->sock = sock;
        w->leaf_len = strlen(leaf);
        w->which = which;
        w->names = names;
        w->hard = hardlinks_new();
        if (!w->hard) {
                walker_error(w, ENOMEM, leaf, "out of memory");
                return 1;
        }
        r = walk_tree(pfd, leaf, &ops, w);
        /* Said already, or the daemon let go (nobody to tell). */
        if (r == -ECANCELED || (w->names && (r == -EPIPE || r == -ECONNRESET)))
                return 1;
        if (r < 0) {
                walker_error(w, r, leaf, "%s", strerror(-r));
                return 1;
        }
        if (w->names) {
                memset(&w->m, 0, sizeof(w->m));
                w->m.type = LANDMSG_OK;
                return landmsg_send(sock, &w->m, -1) < 0;
        }
        memset(&w->m, 0, sizeof(w->m));
        w->m.type = LANDMSG_WALK_HEAD;
        w->m.walk_head = (struct landmsg_walk_head){ .entries = w->entries, .bytes = w->bytes };
        if (landmsg_send(sock, &w->m, -1) < 0)
                return 1;
        /* Again, each entry with its descriptor: both walks meet them in
         * the same order, and the same files with several names. */
        w->counted = w->entries;
        w->entries = 0;
        w->feeding = true;
        hardlinks_clear(w->hard);
        ops.no_open = false;
        r = walk_tree(pfd, leaf, &ops, w);
        /* Said already, or the daemon let go (nobody to tell). */
        if (r == -ECANCELED || r == -EPIPE || r == -ECONNRESET)
                return 1;
        if (r < 0) {
                walker_error(w, r, leaf, "%s", strerror(-r));
                return 1;
        }
        if (w->entries != w->counted) {
                walker_error(w, EAGAIN, leaf, "the tree changed while it was read (%u entries counted, then %u)",
                             w->counted, w->entries);
                return 1;
        }
        memset(&w->m, 0, sizeof(w->m));
        w->m.type = LANDMSG_OK;
        return landmsg_send(sock, &w->m, -1) < 0;
}

int walker_start(const struct landfs_id *who, int pfd, const char *leaf, unsigned int which, bool names, int *out)
{
        int sv[2];
        pid_t pid;

        *out = -1;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(sv[0]);
                close(sv[1]);
                return r;
        }
        if (pid == 0) {
                /* Nothing of the lander's but the directory and our end:
                 * its connections, its listening socket and munged's
                 * context stay with it. */
                int dfd = fcntl(pfd, F_DUPFD, 10), sfd = fcntl(sv[1], F_DUPFD, 10);

                if (dfd < 0 || sfd < 0 || dup2(dfd, 3) < 0 || dup2(sfd, 4) < 0 || close_range(5, ~0u, 0) < 0)
                        _exit(1);
                signal(SIGTERM, SIG_DFL);
                signal(SIGINT, SIG_DFL);
                if (landfs_become_for_good(who) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                        _exit(1);
                _exit(walker_run(4, 3, leaf, which, names));
        }
        close(sv[1]);
        *out = sv[0];
        return 0;
}
