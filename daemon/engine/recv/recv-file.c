/*
 * The received file in the incoming directory, off the loop: every call
 * that touches the directory or the file is a disk request (io_uring, or a
 * worker for fstatvfs), and each one's completion starts the next step. A
 * step whose transfer has closed meanwhile (its deadline, a cancel, a
 * stop) does nothing more; what it opened is closed.
 *
 * Opening:    statx the name -> openat O_TMPFILE -> fstatvfs -> fallocate
 * Publishing: fsetxattr user.rdmaxfer.digest -> fsync -> linkat ->
 *             (overwrite: unlinkat .part -> linkat .part -> renameat) ->
 *             fsync the directory
 *
 * A tree (wire.h) is built in a staging directory (common/incoming.h):
 * DEST's offer makes it (a worker: DEST must not exist unless overwrite,
 * then mkdir the staging directory and DEST's top in it); a directory
 * entry is a mkdir in it (once the entry before it is in); a file is opened as any, and linked into it
 * once verified, with no fsync of its own (recv_tree_file). A symlink's
 * target arrives as a file's data; once verified, a worker holds it to
 * tree_symlinks and appends it to the job's list of links (an O_TMPFILE):
 * no symlink exists in the staging directory while entries are still
 * being made there, so no later entry can be put through one. After the
 * last entry, a worker makes the links (each in its directory opened
 * without following any symlink), syncs the file system and renames the
 * tree into place (incoming_stage_publish): the one sync covers every entry.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>

#include "auth.h"
#include "incoming.h"
#include "log.h"
#include "name.h"
#include "pack.h"
#include "config.h"
#include "recv-int.h"
#include "recv-publish.h"
#include "recv-partial.h"

static struct io *recv_io(struct recv_xfer *x)
{
        return x->env->io;
}

static int recv_dirfd(struct recv_xfer *x)
{
        return x->env->incoming_fd;
}

/* Queue failed (the ring is full): the step cannot even start. */
static void recv_queue_failed(struct recv_xfer *x, const char *what, int r)
{
        char text[WIRE_TEXT_MAX + 1];

        snprintf(text, sizeof(text), "%s: %s", what, strerror(-r));
        recv_fail(x, WIRE_E_INTERNAL, text);
}

/* Start a step: 0, or the transfer has failed. Its deadline is io_timeout
 * (xfer_io_start arms the timer): the sender waits for us, not we for it. */
static int recv_step(struct recv_xfer *x, const char *what, int r)
{
        if (r < 0) {
                recv_queue_failed(x, what, r);
                return r;
        }
        xfer_io_start(&x->base, what);
        return 0;
}

/* A step's completion: false when the transfer has moved on without it.
 * Opening is cur's, in OFFER; publishing (@state FINISHING) is fin's,
 * whatever cur does meanwhile (recv.h). */
static bool recv_step_done(struct recv_xfer *x, enum xfer_state state)
{
        if (!xfer_io_done(&x->base))
                return false;
        if (state == XFER_FINISHING)
                return x->base.state != XFER_CLOSING && x->fin;
        return x->base.state == state;
}

/* ---- opening ---- */

static void recv_on_reserved(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        enum incoming_verdict iv = incoming_reserve_verdict((int)res);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_OFFER))
                return;
        if (iv != INCOMING_OK) {
                snprintf(text, sizeof(text), "reserving %" PRIu64 " bytes: %s", x->cur->offer.size,
                         strerror((int)-res));
                recv_fail(x, iv == INCOMING_NO_SPACE ? WIRE_E_NO_SPACE : wire_status_of_errno((int)-res), text);
                return;
        }
        recv_accept(x);
}

/* On a worker: a sparse file is made its size, holes and all, with
 * nothing reserved (wire.h, Sparse files). Touches only x->cur->fd, offer. */
static int64_t recv_truncate(void *arg)
{
        struct recv_xfer *x = arg;

        return ftruncate(x->cur->fd, (off_t)x->cur->offer.size) < 0 ? -errno : 0;
}

static void recv_reserve(struct recv_xfer *x)
{
        /* A pack is received into memory (recv.c): its entries take the room. */
        /* A dry run's link reserves nothing (wire.h, Dry runs). */
        if (x->cur->offer.size == 0 || (x->cur->offer.flags & WIRE_OFFER_PACK) || x->dry) {
                recv_accept(x);
                return;
        }
        if (x->cur->offer.flags & WIRE_OFFER_SPARSE) {
                x->cur->req.done = recv_on_reserved;
                recv_step(x, "sizing the sparse file", io_call(recv_io(x), &x->cur->req, recv_truncate, x));
                return;
        }
        /* Reserving can mean allocating (tmpfs zeroes pages): not on the loop. */
        x->cur->req.done = recv_on_reserved;
        recv_step(x, "reserving space", io_fallocate(recv_io(x), &x->cur->req, x->cur->fd,
                                                      x->cur->offer.size));
}

/* On a worker: io_uring has no statfs. Touches only x->cur->fd, x->vfs, x->vfs_err. */
static int64_t recv_statvfs(void *arg)
{
        struct recv_xfer *x = arg;

        x->vfs_err = fstatvfs(x->cur->fd, &x->vfs) < 0 ? -errno : 0;
        return x->vfs_err;
}

static void recv_on_space(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        const struct recv_cfg *cfg = &x->env->cfg;
        char text[WIRE_TEXT_MAX + 1];
        uint64_t avail, need;

        if (!recv_step_done(x, XFER_OFFER))
                return;
        if (res < 0) {
                /* Not every file system can tell; fallocate and the writes still will. */
                log_debug("%s: free space of the incoming directory: %s", x->base.peer,
                          strerror((int)-res));
                recv_reserve(x);
                return;
        }
        avail = (uint64_t)x->vfs.f_bavail * x->vfs.f_frsize;
        /* What is kept already takes no more room; a sparse file's holes take none. */
        need = x->cur->offer.size - x->resumed;
        if (x->cur->offer.flags & WIRE_OFFER_SPARSE)
                need = MIN(need, x->cur->offer.data_bytes);
        if (incoming_space_verdict(avail, need, cfg->min_free) != INCOMING_OK) {
                if (need > avail)
                        snprintf(text, sizeof(text), "%" PRIu64 " bytes, %" PRIu64 " free", need, avail);
                else
                        snprintf(text, sizeof(text), "%" PRIu64 " bytes would leave less than "
                                 "min_free (%" PRIu64 ") of the %" PRIu64 " free", need,
                                 cfg->min_free, avail);
                recv_fail(x, WIRE_E_NO_SPACE, text);
                return;
        }
        recv_reserve(x);
}

static void recv_on_open(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_OFFER)) {
                /* Nameless: closing it is all the cleaning up it needs. */
                if (res >= 0)
                        safe_close((int)res);
                return;
        }
        if (res < 0) {
                snprintf(text, sizeof(text), "%" PRIu64 " bytes: %s", x->cur->offer.size,
                         strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        recv_file_opened(x, (int)res);
}

void recv_file_opened(struct recv_xfer *x, int fd)
{
        x->cur->fd = fd;
        snprintf(x->cur->proc_path, sizeof(x->cur->proc_path), "/proc/self/fd/%d", x->cur->fd);
        x->cur->req.done = recv_on_space;
        recv_step(x, "checking free space", io_call(recv_io(x), &x->cur->req, recv_statvfs, x));
}

static void recv_on_lookup(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_OFFER))
                return;
        if (res == 0 && !x->env->cfg.overwrite) {
                recv_fail(x, WIRE_E_EXISTS, NULL);
                return;
        }
        if (res < 0 && res != -ENOENT) {
                snprintf(text, sizeof(text), "checking name: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        if (x->cur->fd >= 0) {
                /* Resuming: the partial's file is open already. */
                x->cur->req.done = recv_on_space;
                recv_step(x, "checking free space", io_call(recv_io(x), &x->cur->req, recv_statvfs, x));
                return;
        }
        x->cur->req.done = recv_on_open;
        recv_step(x, "creating the file",
                  io_openat(recv_io(x), &x->cur->req, recv_dirfd(x), ".",
                            O_TMPFILE | O_CLOEXEC | (x->route_on ? O_RDWR : O_WRONLY), 0640));
}

/* ---- a tree ---- */

/* @ns since the epoch, as futimens() takes it (atime and mtime). */
static void recv_timespec(uint64_t ns, struct timespec ts[2])
{
        ts[0].tv_sec = ts[1].tv_sec = (time_t)(ns / 1000000000u);
        ts[0].tv_nsec = ts[1].tv_nsec = (long)(ns % 1000000000u);
}

/* The entry's path in the staging directory: DEST's last component, then
 * what follows DEST in its name. */
void recv_tree_rel(struct recv_xfer *x)
{
        snprintf(x->cur->rel, sizeof(x->cur->rel), "%s%s", name_leaf(x->dest), x->cur->offer.name + strlen(x->dest));
}

/* On a worker: DEST free (unless overwrite), the staging directory made,
 * DEST's top in it. Touches x->dest, stage_name, stage_fd, rel, overwrite. */
static int64_t recv_tree_begin(void *arg)
{
        struct recv_xfer *x = arg;
        int dirfd = x->env->incoming_fd, fd, r;
        struct stat st;

        /* incoming_stage_publish() checks again when it renames. Sync
         * merges into a DEST that is a directory. Never through a symlink. */
        if (x->sync && incoming_stat_beneath(dirfd, x->dest, &st) == 0) {
                if (!S_ISDIR(st.st_mode)) {
                        snprintf(x->sync_why, sizeof(x->sync_why), "the destination exists as a file");
                        return -EEXIST;
                }
                x->merge = true;
        } else if (!x->overwrite && incoming_stat_beneath(dirfd, x->dest, &st) == 0) {
                return -EEXIST;
        }
        /* Kept for the job's next attempt: in the partial directory (recv-partial-tree.c). */
        if (x->tree_part)
                return recv_keep_stage(x);
        fd = incoming_stage_make(dirfd, x->stage_name);
        if (fd < 0)
                return fd;
        x->stage_fd = fd;
        r = recv_tree_mkdir_at(x, x->cur->rel, x->cur->offer.mode, x->cur->offer.mtime_ns);
        if (r < 0)
                return r;
        /* A relay reads the tree's entries beneath its top (relay.c). */
        if (x->route_on) {
                x->top_fd = openat(fd, x->cur->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (x->top_fd < 0)
                        return -errno;
        }
        return 0;
}

mode_t recv_tree_mode(uint32_t mode)
{
        return (mode_t)(mode & 01777);
}

mode_t recv_tree_staged_mode(mode_t mode, bool dir)
{
        return mode | (dir ? 0700 : 0600);
}

int recv_tree_mkdir_at(struct recv_xfer *x, const char *rel, uint32_t mode, uint64_t mtime_ns)
{
        mode_t want = recv_tree_mode(mode);
        struct stat st;

        if (mkdirat(x->stage_fd, rel, 0700) < 0 &&
            (errno != EEXIST || !x->tree_resumed || fstatat(x->stage_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
             !S_ISDIR(st.st_mode)))
                return -errno;
        return recv_tree_attr_add(x, rel, S_IFDIR | want, mtime_ns);
}

/* On a worker: a directory entry of the tree, published (@arg is fin). */
static int64_t recv_tree_mkdir(void *arg)
{
        struct recv_xfer *x = arg;

        return recv_tree_mkdir_at(x, x->fin->rel, x->fin->offer.mode, x->fin->offer.mtime_ns);
}

/* On a worker: a file of the tree, all its data in: its mode and mtime
 * (a mode the staged file may not have yet: at the end). */
static int64_t recv_tree_meta(void *arg)
{
        struct recv_xfer *x = arg;
        mode_t want = recv_tree_mode(x->fin->offer.mode), staged = recv_tree_staged_mode(want, false);
        struct timespec ts[2];
        int r;

        if (fchmod(x->fin->fd, staged) < 0)
                return -errno;
        if (staged != want && (r = recv_tree_attr_add(x, x->fin->rel, S_IFREG | want, 0)) < 0)
                return r;
        if (x->fin->offer.mtime_ns) {
                recv_timespec(x->fin->offer.mtime_ns, ts);
                if (futimens(x->fin->fd, ts) < 0)
                        return -errno;
        }
        return 0;
}


int recv_tree_symlinks(const struct recv_xfer *x)
{
        return x->landing ? CONFIG_SYMLINKS_ANY : x->env->cfg.tree_symlinks;
}

const char *recv_tree_link_refused(const char *rel, const char *target, size_t len, int symlinks)
{
        enum name_link_verdict v;
        unsigned int depth = 0;

        /* The link's depth beneath DEST is its slashes less one. */
        for (const char *p = rel; *p; p++)
                depth += *p == '/';
        if (depth == 0)
                return "its name is not beneath the destination";
        v = name_link_check(target, len, depth - 1);
        if (v == NAME_LINK_BAD)
                return "its target is not a path";
        if (symlinks == CONFIG_SYMLINKS_NONE)
                return "tree_symlinks is none here";
        if (v != NAME_LINK_SAFE && symlinks != CONFIG_SYMLINKS_ANY)
                return "it points outside the tree, and tree_symlinks is safe here";
        return NULL;
}

static int recv_tree_list_add(struct recv_xfer *x, const char *rel, const char *target, size_t len, uint32_t mode,
                              uint64_t mtime_ns)
{
        struct recv_link_rec rec = { .rel_len = (uint16_t)strlen(rel), .target_len = (uint16_t)len,
                                     .mode = mode, .mtime_ns = mtime_ns };
        struct iovec iov[3];
        ssize_t n;

        if (x->links_fd < 0) {
                /* A kept tree's list is kept with it (recv-partial-tree.c). */
                x->links_fd = x->tree_part ? openat(x->stage_fd, RECV_KEEP_LINKS,
                                                    O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) :
                                             openat(x->env->incoming_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
                if (x->links_fd < 0)
                        return -errno;
        }
        iov[0] = (struct iovec){ &rec, sizeof(rec) };
        iov[1] = (struct iovec){ (void *)rel, rec.rel_len };
        iov[2] = (struct iovec){ (void *)target, len };
        n = pwritev(x->links_fd, iov, 3, (off_t)x->links_len);
        if (n < 0)
                return -errno;
        if ((size_t)n != sizeof(rec) + rec.rel_len + rec.target_len)
                return -EIO;
        x->links_len += (uint64_t)n;
        return 0;
}

int recv_tree_link_add(struct recv_xfer *x, const char *rel, const char *target, size_t len, uint64_t mtime_ns)
{
        return recv_tree_list_add(x, rel, target, len, 0, mtime_ns);
}

const char *recv_tree_hard_refused(const struct recv_xfer *x, const char *name, const char *target, size_t len,
                                   int names, char trel[static WIRE_PATH_MAX + 1])
{
        size_t dlen = strlen(x->dest);

        if (len <= dlen + 1 || memcmp(target, x->dest, dlen) != 0 || target[dlen] != '/')
                return "its file is not beneath the destination";
        if (memchr(target, '\0', len) || name_path_check_rules(target, len, NULL, names) != NAME_OK)
                return "its file's name is not acceptable";
        if (strlen(name) == len && memcmp(name, target, len) == 0)
                return "it names itself";
        /* DEST's leaf, then what follows DEST: no longer than @target. */
        snprintf(trel, WIRE_PATH_MAX + 1, "%s%.*s", name_leaf(x->dest), (int)(len - dlen), target + dlen);
        return NULL;
}

int recv_tree_hard_add(struct recv_xfer *x, const char *rel, const char *trel)
{
        return recv_tree_list_add(x, rel, trel, strlen(trel), S_IFREG, 0);
}

int recv_tree_attr_add(struct recv_xfer *x, const char *rel, mode_t mode, uint64_t mtime_ns)
{
        return recv_tree_list_add(x, rel, "", 0, (uint32_t)mode, mtime_ns);
}

/* On a worker: a hard link's @target ("DEST/c/d", @len bytes) held to the
 * rules and added to the list, as recv_tree_link_keep() does a symlink's. */
static int recv_tree_hard_keep(struct recv_xfer *x, const char *target, size_t len)
{
        char trel[WIRE_PATH_MAX + 1];
        const char *why = recv_tree_hard_refused(x, x->fin->offer.name, target, len, x->fin->pack_names, trel);

        if (why) {
                snprintf(x->fin->link_text, sizeof(x->fin->link_text), "hard link %.*s: %s", 100,
                         x->fin->offer.name, why);
                return -EPERM;
        }
        /* A dry run landing as its user, into a tree there: the lander
         * looks at both names once the worker is done (recv-land.c). */
        if (x->dry && x->landing && x->merge) {
                snprintf(x->fin->link_target, sizeof(x->fin->link_target), "%s", trel);
                return RECV_LINK_LOOK;
        }
        if (x->merge) {
                int r = recv_sync_hard(x, x->fin->offer.name, target, len);

                if (r == -EEXIST)
                        snprintf(x->fin->link_text, sizeof(x->fin->link_text),
                                 "%.*s: exists and differs; overwrite is off on the receiver", WIRE_TEXT_MAX - 60,
                                 x->fin->offer.name);
                if (r < 0)
                        return r;
        }
        /* Both names there one file: kept, unless the dry run replaces
         * that file (known on the loop: recv_on_link_kept). */
        if (x->dry)
                return x->merge && recv_dry_hard_same(x, target, len) ? RECV_LINK_SAME : recv_dry_link(x, false);
        return recv_tree_hard_add(x, x->fin->rel, trel);
}

/* On a worker: a symlink entry's target, verified, read back from its
 * file, held to tree_symlinks and added to the list of links. -EPERM or
 * -EEXIST with x->fin->link_text when refused. Touches x->fin->fd, rel,
 * offer, pack_symlinks (tree_symlinks when it began), links_fd, links_len. */
static int64_t recv_tree_link_keep(void *arg)
{
        struct recv_xfer *x = arg;
        char target[NAME_LINK_MAX + 1];
        const char *why;
        ssize_t n;

        n = pread(x->fin->fd, target, (size_t)x->fin->offer.size, 0);
        if (n < 0)
                return -errno;
        if ((uint64_t)n != x->fin->offer.size)
                return -EIO;
        target[n] = '\0';
        /* For the next hop, and the list of entries a kept tree keeps. */
        if (x->route_on)
                memcpy(x->fin->link_target, target, (size_t)n + 1);
        if (x->fin->offer.flags & WIRE_OFFER_HARD)
                return recv_tree_hard_keep(x, target, (size_t)n);
        why = recv_tree_link_refused(x->fin->rel, target, (size_t)n, x->fin->pack_symlinks);
        if (why) {
                snprintf(x->fin->link_text, sizeof(x->fin->link_text), "symlink %.*s: %s", 100,
                         x->fin->offer.name, why);
                return -EPERM;
        }
        if (x->dry && x->landing && x->merge) {
                memcpy(x->fin->link_target, target, (size_t)n + 1);
                return RECV_LINK_LOOK;
        }
        /* Merged into an existing DEST: the same symlink there is kept
         * (deleting, made again at the end: the new DEST is the stage's). */
        if (x->merge) {
                int r = recv_sync_link(x, x->fin->offer.name, target, (size_t)n);

                if (r == -EEXIST)
                        snprintf(x->fin->link_text, sizeof(x->fin->link_text),
                                 "%.*s: exists and differs; overwrite is off on the receiver", WIRE_TEXT_MAX - 60,
                                 x->fin->offer.name);
                if (r == 1 && recv_deleting(x)) {
                        r = recv_sync_keep(x, x->fin->offer.name, NULL);
                        return r < 0 ? r : 1;
                }
                if (r < 0 || (r == 1 && !x->dry))
                        return r;
                if (x->dry)
                        return recv_dry_link(x, r == 1);
        }
        if (x->dry)
                return recv_dry_link(x, false);
        return recv_tree_link_add(x, x->fin->rel, target, (size_t)n, x->fin->offer.mtime_ns);
}

/* Whether the symlink at @dfd/@leaf is @target: one a kept tree's earlier
 * attempt made before it ended (it was publishing, the last entry not
 * recorded), which the list has again. */
static bool recv_tree_link_made(int dfd, const char *leaf, const char *target, size_t len)
{
        char have[NAME_LINK_MAX + 1];
        ssize_t n = readlinkat(dfd, leaf, have, sizeof(have));

        return n >= 0 && (size_t)n == len && memcmp(have, target, len) == 0;
}

/* The list's record at @off into @rec, @rel and @target (NUL-terminated):
 * the next record's offset, or -EIO for a list that does not hold one. */
int64_t recv_tree_list_read(const struct recv_xfer *x, uint64_t off, struct recv_link_rec *rec,
                            char rel[static WIRE_PATH_MAX + 1], char target[static NAME_LINK_MAX + 1])
{
        if (pread(x->links_fd, rec, sizeof(*rec), (off_t)off) != (ssize_t)sizeof(*rec) || rec->rel_len == 0 ||
            rec->rel_len > WIRE_PATH_MAX || rec->target_len > NAME_LINK_MAX ||
            (rec->target_len == 0 && !S_ISDIR(rec->mode) && !S_ISREG(rec->mode)) ||
            (rec->target_len > 0 && rec->mode != 0 && rec->mode != S_IFREG) ||
            pread(x->links_fd, rel, rec->rel_len, (off_t)(off + sizeof(*rec))) != rec->rel_len ||
            pread(x->links_fd, target, rec->target_len, (off_t)(off + sizeof(*rec) + rec->rel_len)) !=
                    rec->target_len)
                return -EIO;
        rel[rec->rel_len] = '\0';
        target[rec->target_len] = '\0';
        return (int64_t)(off + sizeof(*rec) + rec->rel_len + rec->target_len);
}

/* Staged name @trel's file: its directory opened beneath the staging
 * directory, or, merged into an old DEST that kept the file (sync), the
 * old DEST's, without following any symlink; *@leaf its last component,
 * *@st what it is. The directory's descriptor, or -errno. */
static int recv_tree_hard_file(struct recv_xfer *x, const char *trel, const char **leaf, struct stat *st)
{
        const char *slash = strrchr(trel, '/'), *below;
        char dir[WIRE_PATH_MAX + 1], old[WIRE_PATH_MAX + 1];
        int dfd;

        if (!slash)
                return -EINVAL;
        *leaf = slash + 1;
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - trel), trel);
        dfd = incoming_open_beneath(x->stage_fd, dir, false);
        if (dfd >= 0 && fstatat(dfd, *leaf, st, AT_SYMLINK_NOFOLLOW) == 0)
                return dfd;
        if (dfd >= 0 && errno != ENOENT) {
                int r = -errno;

                close(dfd);
                return r;
        }
        if (dfd >= 0)
                close(dfd);
        if ((dfd < 0 && dfd != -ENOENT) || !x->merge)
                return dfd < 0 ? dfd : -ENOENT;
        /* DEST, then what follows DEST's leaf. */
        below = dir + strlen(name_leaf(x->dest));
        if (snprintf(old, sizeof(old), "%s%s", x->dest, below) >= (int)sizeof(old))
                return -ENAMETOOLONG;
        dfd = incoming_open_beneath(x->env->incoming_fd, old, false);
        if (dfd >= 0 && fstatat(dfd, *leaf, st, AT_SYMLINK_NOFOLLOW) < 0) {
                int r = -errno;

                close(dfd);
                return r;
        }
        return dfd;
}

/* Hard link @rel (in @dfd, named @leaf) to staged name @trel's file: only
 * a regular file of the tree (-ENOLINK for anything else, or nothing
 * there). Merged into an old DEST that keeps both the file and the name
 * as one already, nothing to make. 0 or -errno. */
static int recv_tree_make_hard(struct recv_xfer *x, int dfd, const char *leaf, const char *trel)
{
        _cleanup_(closep) int tfd = -1;
        const char *tleaf;
        struct stat st, have;

        tfd = recv_tree_hard_file(x, trel, &tleaf, &st);
        if (tfd == -ENOENT)
                return -ENOLINK;
        if (tfd < 0)
                return tfd;
        if (!S_ISREG(st.st_mode))
                return -ENOLINK;
        if (linkat(tfd, tleaf, dfd, leaf, 0) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        /* The same file under that name: an earlier attempt's, or the old
         * DEST's, which the merge links in. Anything else is another entry. */
        if (fstatat(dfd, leaf, &have, AT_SYMLINK_NOFOLLOW) == 0 && have.st_dev == st.st_dev &&
            have.st_ino == st.st_ino && x->tree_resumed)
                return 0;
        return -EEXIST;
}

/* Whether hard link @rel is, in the old DEST, the same file as @trel,
 * which the staging directory does not have: the merge links both in. */
static bool recv_tree_hard_kept(struct recv_xfer *x, const char *rel, const char *trel)
{
        const char *leaf = name_leaf(x->dest);
        char name[WIRE_PATH_MAX + 1], file[WIRE_PATH_MAX + 1];
        struct stat a, b;

        if (!x->merge || incoming_stat_beneath(x->stage_fd, trel, &a) == 0)
                return false;
        snprintf(name, sizeof(name), "%s%s", x->dest, rel + strlen(leaf));
        snprintf(file, sizeof(file), "%s%s", x->dest, trel + strlen(leaf));
        return incoming_stat_beneath(x->env->incoming_fd, name, &a) == 0 &&
               incoming_stat_beneath(x->env->incoming_fd, file, &b) == 0 && S_ISREG(a.st_mode) &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* On a worker, at the end: every symlink and hard link of the list, each
 * made in its directory opened beneath the staging directory without
 * following any symlink (so a hostile list cannot put one through
 * another), a symlink with its mtime. 0 or -errno. */
static int recv_tree_make_links(struct recv_xfer *x)
{
        char rel[WIRE_PATH_MAX + 1], target[NAME_LINK_MAX + 1];
        struct recv_link_rec rec;
        int64_t off = 0;

        while ((uint64_t)off < x->links_len) {
                struct timespec ts[2];
                char *slash;
                int dfd, r = 0;

                off = recv_tree_list_read(x, (uint64_t)off, &rec, rel, target);
                if (off < 0)
                        return (int)off;
                if (rec.target_len == 0)
                        continue;       /* a mode and mtime: recv_tree_set_attrs */
                slash = strrchr(rel, '/');
                if (!slash)
                        return -EINVAL;
                *slash = '\0';
                if (rec.mode == S_IFREG) {
                        *slash = '/';
                        if (recv_tree_hard_kept(x, rel, target))
                                continue;
                        *slash = '\0';
                }
                dfd = incoming_open_beneath(x->stage_fd, rel, false);
                if (dfd < 0)
                        return dfd;
                if (rec.mode == S_IFREG) {
                        r = recv_tree_make_hard(x, dfd, slash + 1, target);
                        close(dfd);
                        if (r < 0)
                                return r;
                        continue;
                }
                /* Anything else of its name is another entry (-EEXIST). */
                if (symlinkat(target, dfd, slash + 1) < 0 &&
                    (errno != EEXIST || !x->tree_resumed ||
                     !recv_tree_link_made(dfd, slash + 1, target, rec.target_len)))
                        r = -errno;
                if (r == 0 && rec.mtime_ns) {
                        recv_timespec(rec.mtime_ns, ts);
                        if (utimensat(dfd, slash + 1, ts, AT_SYMLINK_NOFOLLOW) < 0)
                                r = -errno;
                }
                close(dfd);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Entry @rel's staged mode back (recv_tree_staged_mode), if it is there. */
static int recv_tree_restage_mode(struct recv_xfer *x, const char *rel, mode_t mode)
{
        char dir[WIRE_PATH_MAX + 1];
        const char *slash = strrchr(rel, '/'), *leaf = slash ? slash + 1 : rel;
        _cleanup_(closep) int pfd = -1;
        struct stat st;

        if (slash) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
                pfd = incoming_open_beneath(x->stage_fd, dir, false);
                if (pfd < 0)
                        return pfd == -ENOENT || pfd == -ENOTDIR || pfd == -ELOOP ? 0 : pfd;
        }
        if (fstatat(slash ? pfd : x->stage_fd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if ((st.st_mode & S_IFMT) != (mode & S_IFMT))
                return 0;
        if (fchmodat(slash ? pfd : x->stage_fd, leaf, recv_tree_staged_mode(mode & 07777, S_ISDIR(mode)),
                     AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

int recv_tree_unpublish(struct recv_xfer *x)
{
        char rel[WIRE_PATH_MAX + 1], target[NAME_LINK_MAX + 1];
        struct recv_link_rec rec;
        int64_t off;
        int r;

        /* Modes first, parents before what they hold: the daemon must be
         * able to look into, and fill, every directory again. */
        for (off = 0; (uint64_t)off < x->links_len;) {
                off = recv_tree_list_read(x, (uint64_t)off, &rec, rel, target);
                /* A list cut short by a crash: what it names is all there is. */
                if (off < 0)
                        break;
                if (rec.target_len == 0 && (r = recv_tree_restage_mode(x, rel, (mode_t)rec.mode)) < 0)
                        return r;
        }
        for (off = 0; (uint64_t)off < x->links_len;) {
                struct stat st;
                char *slash;
                int dfd;

                off = recv_tree_list_read(x, (uint64_t)off, &rec, rel, target);
                if (off < 0)
                        break;
                if (rec.target_len == 0 || !(slash = strrchr(rel, '/')))
                        continue;
                *slash = '\0';
                dfd = incoming_open_beneath(x->stage_fd, rel, false);
                if (dfd == -ENOENT || dfd == -ENOTDIR || dfd == -ELOOP)
                        continue;
                if (dfd < 0)
                        return dfd;
                r = 0;
                if (rec.mode == S_IFREG) {
                        struct stat file;

                        /* A hard link made: the same file as its first name. */
                        if (fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
                            incoming_stat_beneath(x->stage_fd, target, &file) == 0 && file.st_dev == st.st_dev &&
                            file.st_ino == st.st_ino && unlinkat(dfd, slash + 1, 0) < 0)
                                r = -errno;
                } else if (fstatat(dfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
                           unlinkat(dfd, slash + 1, 0) < 0) {
                        r = -errno;
                }
                close(dfd);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The entry @path beneath @dirfd ("." for @dirfd itself) gets @mode
 * (with its type, which it must have) and @mtime_ns (0: left alone),
 * every directory on the way opened without following a symlink, and
 * the entry itself too. 0 or -errno. */
static int recv_tree_attr_set(int dirfd, const char *path, mode_t mode, uint64_t mtime_ns)
{
        char dir[WIRE_PATH_MAX + 1];
        const char *slash = strrchr(path, '/'), *leaf = slash ? slash + 1 : path;
        _cleanup_(closep) int pfd = -1, fd = -1;
        struct timespec ts[2];
        struct stat st;

        if (slash) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
                pfd = incoming_open_beneath(dirfd, dir, false);
                if (pfd < 0)
                        return pfd;
        }
        fd = openat(slash ? pfd : dirfd, leaf,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (S_ISDIR(mode) ? O_DIRECTORY : 0));
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if ((st.st_mode & S_IFMT) != (mode & S_IFMT))
                return -EINVAL;
        if (fchmod(fd, mode & 07777) < 0)
                return -errno;
        if (mtime_ns) {
                recv_timespec(mtime_ns, ts);
                if (futimens(fd, ts) < 0)
                        return -errno;
        }
        return 0;
}

/*
 * On a worker, at the very end, once nothing more is made in the tree:
 * the modes and mtimes of the list, the last first, so that every
 * directory gets its own only after every entry beneath it has its own
 * (a sender offers a directory before what it holds): a directory without
 * write or search permission for its owner, or a file without read or
 * write, is ours to fill until then, and making entries in a directory
 * would change its mtime. @dirfd is the staging directory (@top NULL),
 * or DEST itself once published, whose records' names start "@top/".
 * In the staging directory DEST's own are only noted (x->dest_attr): it
 * keeps u+w until it is renamed into place, which moving a directory to
 * another parent needs (its ".." changes), and the rename changes it.
 */
int recv_tree_set_attrs(struct recv_xfer *x, int dirfd, const char *top)
{
        char rel[WIRE_PATH_MAX + 1], target[NAME_LINK_MAX + 1];
        size_t skip = top ? strlen(top) : 0;
        _cleanup_(freep) uint64_t *at = NULL;
        size_t n = 0, cap = 0;
        struct recv_link_rec rec;
        int64_t off = 0;

        while ((uint64_t)off < x->links_len) {
                int64_t next = recv_tree_list_read(x, (uint64_t)off, &rec, rel, target);

                if (next < 0)
                        return (int)next;
                if (rec.target_len == 0) {
                        if (n == cap) {
                                uint64_t *more = reallocarray(at, cap ? 2 * cap : 64, sizeof(*at));

                                if (!more)
                                        return -ENOMEM;
                                at = more;
                                cap = cap ? 2 * cap : 64;
                        }
                        at[n++] = (uint64_t)off;
                }
                off = next;
        }
        while (n > 0) {
                const char *path;
                int r;

                if (recv_tree_list_read(x, at[--n], &rec, rel, target) < 0)
                        return -EIO;
                path = rel;
                if (!top && !strchr(rel, '/')) {
                        x->dest_attr = true;
                        x->dest_mode = rec.mode;
                        x->dest_mtime_ns = rec.mtime_ns;
                        continue;
                }
                if (top) {
                        if (strncmp(rel, top, skip) != 0 || (rel[skip] != '\0' && rel[skip] != '/'))
                                return -EINVAL;
                        path = rel[skip] ? rel + skip + 1 : ".";
                }
                r = recv_tree_attr_set(dirfd, path, (mode_t)rec.mode, rec.mtime_ns);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* On a worker: every entry is in; its symlinks made, the tree goes into
 * place in one rename. */
static int64_t recv_tree_publish(void *arg)
{
        struct recv_xfer *x = arg;
        int dirfd = x->env->incoming_fd, r;

        if (x->links_fd >= 0 && (r = recv_tree_make_links(x)) < 0)
                return r == -EEXIST ? -EMLINK : r;
        /* Sync: what the old DEST has beyond what was sent stays
         * (incoming.h); deleting, only what was kept, linked in already. */
        if (x->merge && !recv_deleting(x) &&
            (r = incoming_merge_link(dirfd, x->dest, x->stage_fd, name_leaf(x->dest))) < 0)
                return r;
        /* Deleting by rules: what they leave out stays (wire.h, Deleting). */
        if (x->merge && recv_deleting(x) && x->protect &&
            (r = incoming_merge_protect(dirfd, x->dest, x->stage_fd, name_leaf(x->dest), x->protect)) < 0)
                return r;
        /* A relay still reads the entries beneath DEST: its modes once the
         * relay is done (recv_tree_finish). */
        if (x->links_fd >= 0 && !x->route_on && (r = recv_tree_set_attrs(x, x->stage_fd, NULL)) < 0)
                return r;
        if (syncfs(x->stage_fd) < 0)
                return -errno;
        if (x->merge)
                r = incoming_merge_publish(dirfd, x->stage_fd, name_leaf(x->dest), x->dest,
                                           recv_deleting(x) ? &x->deleted : NULL);
        else
                r = incoming_stage_publish(dirfd, x->stage_fd, name_leaf(x->dest), x->dest, x->overwrite);
        if (r < 0)
                return r;
        /* In place: DEST's own mode and mtime, the last of the tree's. The
         * tree is published whatever they do (recv_on_tree_published says). */
        if (x->dest_attr)
                x->dest_attr_err = recv_tree_attr_set(dirfd, x->dest, (mode_t)x->dest_mode, x->dest_mtime_ns);
        if (x->tree_part)
                recv_keep_published(x);
        else
                (void)unlinkat(dirfd, x->stage_name, AT_REMOVEDIR);
        return 0;
}

static void recv_on_tree_ready(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_OFFER))
                return;
        if (res == -EEXIST && x->cur->offer.file == 0) {
                recv_fail(x, WIRE_E_EXISTS, x->sync_why[0] ? x->sync_why : "the destination exists");
                return;
        }
        if (res == -EEXIST) {
                recv_fail(x, WIRE_E_PROTOCOL, "an entry of the tree came twice");
                return;
        }
        if (res < 0) {
                snprintf(text, sizeof(text), "making a directory: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        recv_accept(x);
}

/* ---- the next file, opened early ---- */

static void recv_early_drop(struct recv_xfer *x)
{
        safe_close(x->early.fd);
        x->early.fd = -1;
        x->early.failed = true;
}

static void recv_tree_open(struct recv_xfer *x);

/* A step of the early opening is back (xfer_io_done said so): false when
 * nothing more is to be done with it. Once cur's opening waits for it, it
 * carries on. */
static bool recv_early_go(struct recv_xfer *x, int64_t res)
{
        if (x->base.state == XFER_CLOSING) {
                recv_early_drop(x);
                x->early.state = RECV_EARLY_NONE;
                return false;
        }
        if (res < 0 || x->early.failed) {
                recv_early_drop(x);
                x->early.state = RECV_EARLY_READY;
        }
        if (x->early.state == RECV_EARLY_READY && x->early.waiting) {
                x->early.waiting = false;
                recv_tree_open(x);
                return false;
        }
        return x->early.state == RECV_EARLY_BUSY;
}

static bool recv_early_step(struct recv_xfer *x, int64_t res)
{
        return xfer_io_done(&x->base) && recv_early_go(x, res);
}

static void recv_early_on_reserved(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, early.req);

        if (!xfer_io_done(&x->base))
                return;
        x->early.state = RECV_EARLY_READY;
        (void)recv_early_go(x, res);
}

/* On a worker: as recv_statvfs(), for the early file. */
static int64_t recv_early_statvfs(void *arg)
{
        struct recv_xfer *x = arg;

        return fstatvfs(x->early.fd, &x->early.vfs) < 0 ? -errno : 0;
}

static void recv_early_on_space(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, early.req);
        uint64_t avail = (uint64_t)x->early.vfs.f_bavail * x->early.vfs.f_frsize;

        /* Short of room, or not told: the opening as ever says so. */
        if (res == 0 && incoming_space_verdict(avail, x->early.size, x->env->cfg.min_free) != INCOMING_OK)
                x->early.failed = true;
        if (!recv_early_step(x, res))
                return;
        if (x->early.pack) {
                x->early.state = RECV_EARLY_READY;
                (void)recv_early_go(x, 0);
                return;
        }
        x->early.req.done = recv_early_on_reserved;
        if (io_fallocate(recv_io(x), &x->early.req, x->early.fd, x->early.size) < 0) {
                recv_early_drop(x);
                x->early.state = RECV_EARLY_READY;
                return;
        }
        xfer_io_start(&x->base, "reserving space");
}

static void recv_early_on_open(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, early.req);

        if (!xfer_io_done(&x->base)) {
                /* Nameless: closing it is all the cleaning up it needs. */
                if (res >= 0)
                        safe_close((int)res);
                return;
        }
        if (res >= 0)
                x->early.fd = (int)res;
        if (!recv_early_go(x, res))
                return;
        x->early.req.done = recv_early_on_space;
        if (io_call(recv_io(x), &x->early.req, recv_early_statvfs, x) < 0) {
                recv_early_drop(x);
                x->early.state = RECV_EARLY_READY;
                return;
        }
        xfer_io_start(&x->base, "checking free space");
}

void recv_early_open(struct recv_xfer *x)
{
        const struct wire_offer *o = &x->next;
        uint16_t kind = o->flags & (WIRE_OFFER_DIR | WIRE_OFFER_LINK | WIRE_OFFER_PACK);

        if (x->landing) {
                recv_land_early(x);
                return;
        }
        /* A file that may resume, or be skipped, has steps of its own;
         * nothing is reserved that its offer's checks would refuse
         * (recv-offer.c: the job's bytes, a pack's bound, max_file_size). */
        if (!x->tree || x->sync || x->dry || x->early.state != RECV_EARLY_NONE ||
            (o->flags & (WIRE_OFFER_DIR | WIRE_OFFER_SPARSE)) ||
            o->size == 0 || o->file != x->next_file ||
            ((o->flags & WIRE_OFFER_PACK) ? o->size > PACK_BYTES_MAX : o->size > x->job_bytes - x->offered) ||
            (x->env->cfg.max_file_size && o->size > x->env->cfg.max_file_size) ||
            memcmp(o->source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) != 0)
                return;
        x->early = (struct recv_early){ .state = RECV_EARLY_BUSY, .fd = -1, .file = o->file, .size = o->size,
                                        .pack = o->flags & WIRE_OFFER_PACK };
        x->early.req.done = recv_early_on_open;
        if (io_openat(recv_io(x), &x->early.req, recv_dirfd(x), ".",
                      O_TMPFILE | O_CLOEXEC |
                      ((kind & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) || x->route_on ? O_RDWR : O_WRONLY),
                      0640) < 0) {
                x->early.state = RECV_EARLY_NONE;
                return;
        }
        xfer_io_start(&x->base, "creating the file");
}

int recv_early_claim(struct recv_xfer *x)
{
        const struct recv_file *f = x->cur;

        if (x->early.state == RECV_EARLY_NONE || x->early.file != f->offer.file)
                return -1;
        /* A landing's made ahead, for a file too large for it: not used. */
        if (x->early.ahead && f->offer.size > RECV_LAND_AHEAD_MAX) {
                if (x->early.state == RECV_EARLY_READY) {
                        recv_early_drop(x);
                        x->early.state = RECV_EARLY_NONE;
                }
                return -1;
        }
        if (!x->early.ahead && x->early.size != f->offer.size)
                return -1;
        if (x->early.state == RECV_EARLY_BUSY) {
                x->early.waiting = true;
                return RECV_EARLY_WAIT;
        }
        x->early.state = RECV_EARLY_NONE;
        if (x->early.failed || x->early.fd < 0) {
                recv_early_drop(x);
                return -1;
        }
        return TAKE_FD(x->early.fd);
}

/* Cur's file, opened early: true when it is taken (or still being
 * opened: then recv_tree_open() runs again once it is). */
static bool recv_early_take(struct recv_xfer *x)
{
        struct recv_file *f = x->cur;
        int fd = recv_early_claim(x);

        if (fd == RECV_EARLY_WAIT)
                return true;
        if (fd < 0)
                return false;
        f->fd = fd;
        snprintf(f->proc_path, sizeof(f->proc_path), "/proc/self/fd/%d", f->fd);
        recv_accept(x);
        return true;
}

/* A tree's entry: its directory made now, or its file opened as any. */
static void recv_tree_open(struct recv_xfer *x)
{
        uint8_t r[WIRE_NONCE_SIZE];
        uint64_t id;

        recv_tree_rel(x);
        /* As the user: a symlink's target, and a pack, still come into a
         * file of ours (a pack's entries are the lander's to make). */
        if (x->landing && !(x->cur->offer.flags & (WIRE_OFFER_LINK | WIRE_OFFER_PACK))) {
                recv_land_tree_open(x);
                return;
        }
        if (x->cur->fd >= 0) {
                /* Resuming: the partial's file is open already. */
                x->cur->req.done = recv_on_space;
                recv_step(x, "checking free space", io_call(recv_io(x), &x->cur->req, recv_statvfs, x));
                return;
        }
        if (!(x->cur->offer.flags & WIRE_OFFER_DIR)) {
                if (recv_early_take(x))
                        return;
                /* A pack is read back to be unpacked (recv-pack.c), a
                 * symlink's target once verified, a relayed entry by the
                 * relay while it comes in (relay_tree_stream). */
                x->cur->req.done = recv_on_open;
                recv_step(x, "creating the file",
                          io_openat(recv_io(x), &x->cur->req, recv_dirfd(x), ".",
                                    O_TMPFILE | O_CLOEXEC |
                                    ((x->cur->offer.flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) || x->route_on ?
                                             O_RDWR : O_WRONLY),
                                    0640));
                return;
        }
        /* A directory entry is made when it is published, in order: the
         * entry before it, being published meanwhile, may be a pack that
         * makes its parent (recv-session.c). */
        if (x->cur->offer.file > 0) {
                recv_accept(x);
                return;
        }
        x->cur->req.done = recv_on_tree_ready;
        if (x->tree_part) {
                x->overwrite = x->env->cfg.overwrite;
                recv_step(x, x->tree_resumed ? "opening the kept tree" : "making the staging directory",
                          io_call(recv_io(x), &x->cur->req, recv_tree_begin, x));
                return;
        }
        /* Random: two senders' job ids may be the same number. */
        auth_nonce(r);
        memcpy(&id, r, sizeof(id));
        incoming_stage_name(x->stage_name, id);
        x->overwrite = x->env->cfg.overwrite;
        recv_step(x, "making the staging directory", io_call(recv_io(x), &x->cur->req, recv_tree_begin, x));
}

void recv_file_open(struct recv_xfer *x)
{
        /* Sync: held against what is there first (recv-sync.c). */
        if (recv_sync_wanted(x)) {
                recv_sync_probe_start(x);
                return;
        }
        if (x->tree) {
                recv_tree_open(x);
                return;
        }
        if (x->landing) {
                recv_land_open(x);
                return;
        }
        /* The name is a leaf name_check() passed (no "/", not "." or ".."),
         * so a no-follow lookup beneath the directory cannot leave it; a
         * symlink under the name counts as existing. */
        x->cur->req.done = recv_on_lookup;
        recv_step(x, "checking the incoming directory",
                  io_statx(recv_io(x), &x->cur->req, recv_dirfd(x), x->cur->offer.name,
                           AT_SYMLINK_NOFOLLOW, &x->stx));
}

/* ---- publishing ---- */

static void recv_on_tree_linked(struct io_req *req, int64_t res);

static void recv_publish_failed(struct recv_xfer *x, int r)
{
        char text[WIRE_TEXT_MAX + 1];

        snprintf(text, sizeof(text), "publishing %.*s: %s", WIRE_TEXT_MAX - 80, recv_named(x)->offer.name,
                 strerror(-r));
        recv_fail(x, wire_status_of_errno(-r), text);
}

/* What an errno of a publishing step means there: a status and a text. */
struct recv_step_err {
        int err;
        unsigned int status;
        const char *text;               /* NULL: "@what: strerror" */
};

/*
 * A publishing step's result @res: true when it succeeded. Else the
 * transfer fails, by the first of @errs (ending with { 0 }) that names
 * -@res, or by what the errno says (recv_publish_failed).
 */
static bool recv_step_ok(struct recv_xfer *x, int64_t res, const char *what, const struct recv_step_err *errs)
{
        char text[WIRE_TEXT_MAX + 1];

        if (res >= 0)
                return true;
        for (; errs && errs->err; errs++) {
                if (errs->err != -res)
                        continue;
                if (!errs->text)
                        snprintf(text, sizeof(text), "%s: %s", what, strerror((int)-res));
                recv_fail(x, errs->status, errs->text ?: text);
                return false;
        }
        recv_publish_failed(x, (int)res);
        return false;
}

static void recv_on_dir_synced(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        /* The name itself must survive a crash too. */
        if (res < 0) {
                recv_publish_failed(x, (int)res);
                return;
        }
        recv_partial_published(x);
}

static void recv_sync_dir(struct recv_xfer *x)
{
        x->fin->req.done = recv_on_dir_synced;
        recv_step(x, "syncing the incoming directory",
                  io_fsync(recv_io(x), &x->fin->req, recv_dirfd(x)));
}

/* The .part of a failed rename is gone (or could not go): now fail. */
static void recv_on_part_removed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        recv_publish_failed(x, x->fin->publish_err);
}

static void recv_on_renamed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res < 0) {
                x->fin->publish_err = (int)res;
                x->fin->req.done = recv_on_part_removed;
                recv_step(x, "removing the temporary name",
                          io_unlinkat(recv_io(x), &x->fin->req, recv_dirfd(x), x->fin->part, 0));
                return;
        }
        recv_sync_dir(x);
}

static void recv_on_part_linked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res < 0) {
                recv_publish_failed(x, (int)res);
                return;
        }
        x->fin->req.done = recv_on_renamed;
        recv_step(x, "publishing", io_renameat(recv_io(x), &x->fin->req, recv_dirfd(x), x->fin->part,
                                               recv_dirfd(x), x->fin->offer.name));
}

/* A .part of the same transfer id left by a crash is in the way: gone first. */
static void recv_on_stale_part(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        x->fin->req.done = recv_on_part_linked;
        recv_step(x, "publishing", io_linkat(recv_io(x), &x->fin->req, AT_FDCWD, x->fin->proc_path,
                                             recv_dirfd(x), x->fin->part, AT_SYMLINK_FOLLOW));
}

static void recv_on_linked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res == -EEXIST && x->env->cfg.overwrite) {
                incoming_part_name(x->fin->part, x->fin->offer.transfer_id);
                x->fin->req.done = recv_on_stale_part;
                recv_step(x, "publishing",
                          io_unlinkat(recv_io(x), &x->fin->req, recv_dirfd(x), x->fin->part, 0));
                return;
        }
        if (!recv_step_ok(x, res, "publishing",
                          (const struct recv_step_err[]){ { EEXIST, WIRE_E_EXISTS, "appeared during the transfer" },
                                                          { 0 } }))
                return;
        recv_sync_dir(x);
}

static void recv_on_fsync(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "fsync: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        /* linkat() of an O_TMPFILE through /proc needs no privilege (the
         * AT_EMPTY_PATH form needs CAP_DAC_READ_SEARCH), and link() never
         * replaces an existing name. */
        x->fin->req.done = recv_on_linked;
        recv_step(x, "publishing", io_linkat(recv_io(x), &x->fin->req, AT_FDCWD, x->fin->proc_path,
                                             recv_dirfd(x), x->fin->offer.name, AT_SYMLINK_FOLLOW));
}

/* On a worker: a relayed tree's modes and mtimes, beneath DEST published. */
static int64_t recv_tree_finish_worker(void *arg)
{
        struct recv_xfer *x = arg;

        return recv_tree_set_attrs(x, x->top_fd, name_leaf(x->dest));
}

static void recv_on_tree_finished(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "modes and mtimes of the tree: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        recv_published_now(x);
}

bool recv_tree_finish(struct recv_xfer *x)
{
        if (!x->tree || !x->route_on || x->attrs_set || x->links_fd < 0 || x->top_fd < 0 || !x->published_tree)
                return false;
        x->attrs_set = true;
        x->fin->req.done = recv_on_tree_finished;
        recv_step(x, "setting the tree's modes", io_call(recv_io(x), &x->fin->req, recv_tree_finish_worker, x));
        return true;
}

static void recv_on_tree_published(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (!recv_step_ok(x, res, "the destination's way", (const struct recv_step_err[]){
                        { EEXIST, WIRE_E_EXISTS, "the destination appeared during the transfer" },
                        { EMLINK, WIRE_E_PROTOCOL, "a link of the tree has the name of another entry" },
                        { ENOLINK, WIRE_E_PROTOCOL, "a hard link of the tree names no regular file of it" },
                        { ELOOP, WIRE_E_NAME, NULL },
                        { ENOTDIR, WIRE_E_NAME, NULL },
                        { EXDEV, WIRE_E_NAME, NULL },
                        { 0 } }))
                return;
        x->published_tree = true;
        if (x->dest_attr_err < 0)
                log_warning("%s: %s: published, but its own mode and mtime could not be set: %s", x->base.peer,
                            x->dest, strerror(-x->dest_attr_err));
        recv_published(x);
}

/* An entry of the tree is in place in the staging directory: the next, or
 * after the last, the whole tree into place. */
void recv_tree_entry_done(struct recv_xfer *x)
{
        if (!recv_is_last(x, x->fin) || x->tree_again) {
                recv_published(x);
                return;
        }
        /* A dry run publishes nothing: what --delete would remove, then its verdict. */
        if (x->dry) {
                recv_dry_end(x);
                return;
        }
        if (x->landing) {
                recv_land_tree_end(x);
                return;
        }
        x->fin->req.done = recv_on_tree_published;
        recv_step(x, "publishing the tree", io_call(recv_io(x), &x->fin->req, recv_tree_publish, x));
}

/* Fin staged under its name (@res of the link). */
static void recv_tree_linked(struct recv_xfer *x, int64_t res)
{
        /* A sender offers every directory before what it holds (and a
         * symlink is not made until the end, so nothing goes through one). */
        if (!recv_step_ok(x, res, "staging", (const struct recv_step_err[]){
                        { EEXIST, WIRE_E_PROTOCOL, "an entry of the tree came twice" },
                        { ENOENT, WIRE_E_PROTOCOL, "an entry of the tree came before its directory" },
                        { ENOTDIR, WIRE_E_PROTOCOL, "an entry of the tree came before its directory" },
                        { 0 } }))
                return;
        recv_partial_staged(x);
}

static void recv_on_tree_linked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        recv_tree_linked(x, res);
}

/* On a worker, continuing a kept tree: the file under its name in the
 * staging directory, replacing one staged after the last record. */
static int64_t recv_tree_restage(void *arg)
{
        struct recv_xfer *x = arg;
        const struct recv_file *f = x->fin;

        if (linkat(AT_FDCWD, f->proc_path, x->stage_fd, f->rel, AT_SYMLINK_FOLLOW) == 0)
                return 0;
        if (errno != EEXIST || unlinkat(x->stage_fd, f->rel, 0) < 0)
                return -errno;
        return linkat(AT_FDCWD, f->proc_path, x->stage_fd, f->rel, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* ---- a tree's file, in one trip ---- */

enum { RECV_FILED_XATTR = 1, RECV_FILED_META, RECV_FILED_LINK };

/*
 * On a worker: a tree's file, verified, published: its digest xattr, its
 * mode and mtime, staged under its name, then the kept
 * tree's record when one is due (recv-partial-tree.c). One trip off the loop for
 * what were four: a busy host makes each trip cost more than its system
 * calls, and the next entries wait for this one's RESULT (wire.h,
 * Pipelining). Touches fin, stage_fd and keep_pj (prepared on the loop).
 *
 * Staged into the staging directory (ours, 0700, no symlink in it) with
 * no fsync of its own: nothing in the staging directory is visible, and
 * recv_tree_publish() syncs the file system once before the tree's one
 * rename, so a crash before it publishes nothing and one after it loses
 * nothing.
 */
static int64_t recv_tree_file_worker(void *arg)
{
        struct recv_xfer *x = arg;
        struct recv_file *f = x->fin;
        char hex[DIGEST_HEX_SIZE];
        int64_t r;

        f->step = RECV_FILED_XATTR;
        digest_hex(f->digest, hex);
        if (fsetxattr(f->fd, DIGEST_XATTR, hex, strlen(hex), 0) < 0) {
                if (errno != EOPNOTSUPP)
                        return -errno;
                f->no_xattr = true;
        }
        f->step = RECV_FILED_META;
        r = recv_tree_meta(x);
        if (r < 0)
                return r;
        f->step = RECV_FILED_LINK;
        if (x->tree_resumed)
                r = recv_tree_restage(x);
        else if (linkat(AT_FDCWD, f->proc_path, x->stage_fd, f->rel, AT_SYMLINK_FOLLOW) < 0)
                r = -errno;
        if (r < 0)
                return r;
        if (f->record) {
                /* What the entry listed just now (its mode, for the end) is
                 * the record's too: a resumed attempt does not send it again. */
                x->keep_pj.rec.tree.links_len = x->links_len;
                f->record_res = (int)recv_keep_store(x);
        }
        return 0;
}

static void recv_said_no_xattr(struct recv_xfer *x)
{
        struct recv_env *e = x->env;

        /* The digest is a convenience (xferctl sum --cached): the file is whole without it. */
        if (!e->xattr_said)
                log_debug("%s: the incoming directory's file system takes no user xattrs: "
                          "files are published without " DIGEST_XATTR, x->base.peer);
        e->xattr_said = true;
}

static void recv_on_tree_filed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct recv_file *f;
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        f = x->fin;
        if (f->no_xattr)
                recv_said_no_xattr(x);
        if (res < 0 && f->step != RECV_FILED_LINK) {
                snprintf(text, sizeof(text), "%s of %.*s: %s",
                         f->step == RECV_FILED_XATTR ? "storing " DIGEST_XATTR : "mode and mtime",
                         WIRE_TEXT_MAX - 80, f->offer.name, strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        if (res == 0 && f->record)
                recv_keep_stored(x, f->record_res);
        recv_tree_linked(x, res);
}

static void recv_tree_file(struct recv_xfer *x)
{
        struct recv_file *f = x->fin;

        /* With its own partial, the record waits for that to go (recv_partial_staged). */
        f->record = x->part_of != f && recv_keep_due(x);
        if (f->record)
                recv_keep_prepare(x);
        f->req.done = recv_on_tree_filed;
        recv_step(x, "staging", io_call(recv_io(x), &f->req, recv_tree_file_worker, x));
}

/* On a worker: IORING_OP_FSETXATTR needs Linux 5.19, a worker's
 * fsetxattr any kernel, and it is once per file. Touches only x->fin->fd and
 * x->fin->digest. */
static int64_t recv_set_digest(void *arg)
{
        struct recv_xfer *x = arg;
        char hex[DIGEST_HEX_SIZE];

        digest_hex(x->fin->digest, hex);
        return fsetxattr(x->fin->fd, DIGEST_XATTR, hex, strlen(hex), 0) < 0 ? -errno : 0;
}

static void recv_on_digest_set(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res == -EOPNOTSUPP) {
                recv_said_no_xattr(x);
        } else if (res < 0) {
                snprintf(text, sizeof(text), "storing " DIGEST_XATTR ": %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        x->fin->req.done = recv_on_fsync;
        recv_step(x, "fsync of the file", io_fsync(recv_io(x), &x->fin->req, x->fin->fd));
}

static void recv_on_link_kept(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res == -EPERM || res == -EEXIST) {
                recv_fail(x, res == -EPERM ? WIRE_E_NAME : WIRE_E_EXISTS, x->fin->link_text);
                return;
        }
        if (res < 0) {
                snprintf(text, sizeof(text), "keeping a symlink: %s", strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
        /* A dry run landing as its user: the lander says what is there. */
        if (res == RECV_LINK_LOOK) {
                recv_land_dry_link(x);
                return;
        }
        if (res == RECV_LINK_SAME) {
                res = !recv_dry_replaced(x, &x->fin->link_there);
                if (res == 1)
                        snprintf(x->fin->dry, sizeof(x->fin->dry), "skipped");
        }
        /* The same symlink was there: kept, and its RESULT says so (wire.h). */
        x->fin->pack_skipped = res == 1;
        x->files_skipped += x->fin->pack_skipped;
        recv_tree_entry_done(x);
}

/* On a worker, deleting: a kept entry (fin) into the staging directory. */
static int64_t recv_tree_keep(void *arg)
{
        struct recv_xfer *x = arg;

        return recv_sync_keep(x, x->fin->offer.name, NULL);
}

static void recv_on_kept(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        char text[WIRE_TEXT_MAX + 1];

        if (!recv_step_done(x, XFER_FINISHING))
                return;
        if (res < 0) {
                snprintf(text, sizeof(text), "keeping the existing %.*s: %s", WIRE_TEXT_MAX - 60,
                         x->fin->offer.name, strerror((int)-res));
                recv_fail(x, res == -EEXIST ? WIRE_E_PROTOCOL : wire_status_of_errno((int)-res), text);
                return;
        }
        recv_tree_entry_done(x);
}

/* The digest goes on before the name: the file never appears without it,
 * and the fsync (a tree's syncfs) covers both. A tree's directory entry
 * has no data and no digest; a symlink's data is its target, kept for the
 * end; a pack's, its entries. */
void recv_file_publish(struct recv_xfer *x)
{
        /* Kept as it was (sync): nothing to make, only its RESULT;
         * deleting, the old entry into the staging directory first. */
        if (x->fin->skip && x->tree && recv_deleting(x)) {
                x->fin->req.done = recv_on_kept;
                recv_step(x, "keeping the existing entry", io_call(recv_io(x), &x->fin->req, recv_tree_keep, x));
                return;
        }
        if (x->fin->skip && recv_land_deleting(x)) {
                recv_land_tree_keep(x);
                return;
        }
        if (x->fin->skip && x->tree) {
                recv_tree_entry_done(x);
                return;
        }
        if (x->fin->skip) {
                recv_published(x);
                return;
        }
        /* As the user: made by the lander (a symlink's target read as any,
         * a pack unpacked as any, its entries then made by the lander). */
        if (x->tree && x->landing && !(x->fin->offer.flags & (WIRE_OFFER_LINK | WIRE_OFFER_PACK))) {
                recv_land_tree_publish(x);
                return;
        }
        /* DEST itself was made with the staging directory (recv_tree_begin). */
        if (x->tree && (x->fin->offer.flags & WIRE_OFFER_DIR) && x->fin->offer.file == 0) {
                recv_tree_entry_done(x);
                return;
        }
        if (x->tree && (x->fin->offer.flags & WIRE_OFFER_DIR)) {
                x->fin->req.done = recv_on_tree_linked;
                recv_step(x, "making a directory", io_call(recv_io(x), &x->fin->req, recv_tree_mkdir, x));
                return;
        }
        if (x->tree && (x->fin->offer.flags & WIRE_OFFER_LINK)) {
                x->fin->req.done = recv_on_link_kept;
                /* The worker reads these copies, not cfg (a reload may replace it). */
                x->fin->pack_symlinks = recv_tree_symlinks(x);
                x->fin->pack_names = x->env->cfg.names;
                recv_step(x, "checking a symlink", io_call(recv_io(x), &x->fin->req, recv_tree_link_keep, x));
                return;
        }
        if (x->fin->offer.flags & WIRE_OFFER_PACK) {
                recv_pack_unpack(x);
                return;
        }
        if (x->tree) {
                recv_tree_file(x);
                return;
        }
        if (x->landing) {
                recv_land_publish(x);
                return;
        }
        x->fin->req.done = recv_on_digest_set;
        recv_step(x, "storing the digest", io_call(recv_io(x), &x->fin->req, recv_set_digest, x));
}
