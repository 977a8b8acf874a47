/*
 * rdmaxfer-lander's requests (landmsg.h): each done in a session
 * (lander-session.c) as its user, on the file system layer (fs/landfs.h),
 * beneath DEST or the job's staging directory; answered, never failing.
 */

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "incoming.h"
#include "lander-int.h"
#include "walker.h"
#include "xattrs.h"

/* @ns since the epoch as utimensat's atime and mtime. */
static void ns_timespec(uint64_t ns, struct timespec ts[2])
{
        ts[0].tv_sec = ts[1].tv_sec = (time_t)(ns / 1000000000u);
        ts[0].tv_nsec = ts[1].tv_nsec = (long)(ns % 1000000000u);
}

static void walk_error(const struct lander *l, struct landmsg *reply, int r, const char *where)
{
        switch (r) {
        case LANDFS_OUTSIDE_ROOTS:
                lander_error_reply(reply, EPERM, (unsigned int)r, where, "not beneath this node's landing_roots (%s)",
                            l->s.roots_text);
                break;
        case LANDFS_FOREIGN_SYMLINK:
                lander_error_reply(reply, EPERM, (unsigned int)r, where,
                            "a symlink that neither you nor root owns: not followed");
                break;
        default:
                lander_error_reply(reply, -r, 0, where, "%s", strerror(-r));
        }
}

/*
 * The directory @dir as the session's user: its O_PATH fd, or -1 with the
 * ERROR in @reply. The caller has become the user.
 */
static int open_dir(struct lander *l, const struct lander_session *ss, const char *dir, bool create, mode_t mode,
                    struct landmsg *reply)
{
        char where[LANDFS_PATH_MAX];
        int fd = -1, r = landfs_open_dir(&l->s.roots, &ss->who, dir, create, mode, &fd, where);

        if (r != LANDFS_OK) {
                walk_error(l, reply, r, where);
                return -1;
        }
        return fd;
}

/* The staging directory @flags name: beside DEST, or in it (LANDMSG_OP_INTO). */
static const char *stage_of(const struct lander_session *ss, uint32_t flags)
{
        return (flags & LANDMSG_OP_INTO) ? ss->stage_in : ss->stage;
}

/* DEST or the staging directory (@flags LANDMSG_OP_STAGE), then /@rel
 * unless "": 0, -ENAMETOOLONG, or -EXDEV when the job has no staging
 * directory (DEST is a landing root). */
static int full_path(const struct lander_session *ss, uint32_t flags, const char *rel,
                     char out[static LANDFS_PATH_MAX])
{
        const char *base = (flags & LANDMSG_OP_STAGE) ? stage_of(ss, flags) :
                           (flags & LANDMSG_OP_PARENT) ? ss->parent : ss->dest;
        int n;

        if (!base[0])
                return (flags & LANDMSG_OP_PARENT) ? -EISDIR : (flags & LANDMSG_OP_INTO) ? -ENAMETOOLONG : -EXDEV;
        n = rel[0] ? snprintf(out, LANDFS_PATH_MAX, "%s/%s", base, rel) : snprintf(out, LANDFS_PATH_MAX, "%s", base);
        return n < 0 || n >= LANDFS_PATH_MAX ? -ENAMETOOLONG : 0;
}

/* full_path's refusal, said. */
static void path_error(const struct lander_session *ss, struct landmsg *reply, int r)
{
        if (r == -EXDEV)
                lander_error_reply(reply, EXDEV, 0, ss->dest, "a tree cannot land as a landing root itself: name a "
                            "directory beneath it");
        else if (r == -EISDIR)
                lander_error_reply(reply, EISDIR, 0, ss->dest, "a landing root is a directory: a file lands in it, "
                            "not as it");
        else
                lander_error_reply(reply, -r, 0, ss->dest, "%s", strerror(-r));
}

/*
 * Hold the staging directory @ss->stage_name in @pfd (DEST's parent, or
 * DEST with @into), walked to as the user from a landing root: opened
 * without following its name, and only a directory of the user's. The
 * session keeps it until PUBLISH or DISCARD; what a later request does in
 * the tree starts from it (SECURITY.md, "A held staging directory"). Its
 * fd (the session's: not to be closed), or -1 with the ERROR in @reply.
 */
static int stage_hold(struct lander_session *ss, int pfd, bool into, const char *path, struct landmsg *reply)
{
        _cleanup_(closep) int fd = openat(pfd, ss->stage_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;

        if (fd < 0) {
                lander_error_reply(reply, errno, 0, path, "%s", errno == ENOTDIR ? "the staging directory is no "
                            "directory (a symlink?): not followed" : strerror(errno));
                return -1;
        }
        if (fstat(fd, &st) < 0 || st.st_uid != ss->who.uid) {
                lander_error_reply(reply, EPERM, 0, path, "the staging directory is not %s's", ss->user);
                return -1;
        }
        lander_stage_release(ss);
        ss->stage_into = into;
        ss->stage_dev = st.st_dev;
        ss->stage_ino = st.st_ino;
        ss->stage_fd = TAKE_FD(fd);
        return ss->stage_fd;
}

/* The staging directory @flags name, held (stage_hold): the session's fd,
 * or -1 with the ERROR in @reply. */
static int stage_dir(struct lander *l, struct lander_session *ss, uint32_t flags, const char *path,
                     struct landmsg *reply)
{
        const bool into = flags & LANDMSG_OP_INTO;
        _cleanup_(closep) int pfd = -1;

        if (ss->stage_fd >= 0 && ss->stage_into == into)
                return ss->stage_fd;
        /* Not made by this session (it always is, first): found by its name. */
        pfd = open_dir(l, ss, into ? ss->dest : ss->parent, false, 0, reply);
        return pfd < 0 ? -1 : stage_hold(ss, pfd, into, path, reply);
}

/* OPEN_READ's, WALK's and LOOK's LANDMSG_OP_XATTRS, _ACLS: what to read (xattrs.h's XATTRS_*). */
static unsigned int read_which(uint32_t flags)
{
        return ((flags & LANDMSG_OP_XATTRS) ? XATTRS_USER : 0) | ((flags & LANDMSG_OP_ACLS) ? XATTRS_ACL : 0);
}

/* @fd's attributes of @which into @reply's FD, as the user: 0, or -1 with
 * the ERROR in @reply (@path names it). */
static int read_attrs(int fd, unsigned int which, const char *path, struct landmsg *reply)
{
        char bad[256];
        size_t need;
        int n = xattrs_read(fd, which, reply->fd.xattrs, sizeof(reply->fd.xattrs), &need, bad);

        if (n == -E2BIG) {
                lander_error_reply(reply, E2BIG, 0, path, "its extended attributes and ACLs take %zu bytes, more "
                                   "than the %u that go with an entry", need, LANDMSG_XATTRS_MAX);
                return -1;
        }
        if (n < 0) {
                lander_error_reply(reply, -n, 0, path, "reading its attributes%s%s: %s", bad[0] ? " " : "", bad,
                                   strerror(-n));
                return -1;
        }
        reply->fd.xattrs_len = (uint16_t)n;
        return 0;
}

/* chmod(2) of what the O_PATH descriptor @fd names: 0 or -1 (errno). */
static int chmod_path_fd(int fd, mode_t mode)
{
        char proc[32];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return chmod(proc, mode);
}

/*
 * The directory of a request: @path (full_path's of @rel) walked as the
 * user, made with @mode where @create; beneath a staging directory
 * (@flags LANDMSG_OP_STAGE), @rel beneath the one the session holds
 * (stage_dir), without following anything (incoming_open_beneath): the
 * tree's own symlinks are made there, by what a peer sent, and no later
 * request may go through one. Making one there makes its last component
 * only (@mode): its parent must be there. The caller has become the user.
 * The directory's fd, *@hold the fd to close after (-1: the session's,
 * when @rel is the staging directory itself); or -1 with the ERROR in
 * @reply.
 */
static int op_dir(struct lander *l, struct lander_session *ss, uint32_t flags, const char *rel, bool create,
                  mode_t mode, const char *path, int *hold, struct landmsg *reply)
{
        char dir[LANDFS_PATH_MAX];
        const char *slash = strrchr(rel, '/'), *leaf;
        _cleanup_(closep) int pfd = -1;
        int sfd, fd;

        *hold = -1;
        if (!(flags & LANDMSG_OP_STAGE))
                return *hold = open_dir(l, ss, path, create, mode, reply);
        sfd = stage_dir(l, ss, flags, path, reply);
        if (sfd < 0 || !rel[0])
                return sfd;
        if (!create) {
                fd = incoming_open_beneath(sfd, rel, false);
                if (fd < 0)
                        lander_error_reply(reply, -fd, 0, path, "%s", fd == -ELOOP ? "a symlink of the tree: not followed"
                                                                            : strerror(-fd));
                return fd < 0 ? -1 : (*hold = fd);
        }
        leaf = slash ? slash + 1 : rel;
        if (slash) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
                pfd = incoming_open_beneath(sfd, dir, false);
                if (pfd < 0) {
                        lander_error_reply(reply, -pfd, 0, path, "%s",
                                    pfd == -ELOOP ? "a symlink of the tree: not followed" : strerror(-pfd));
                        return -1;
                }
        }
        if (mkdirat(slash ? pfd : sfd, leaf, mode & 01777) < 0) {
                lander_error_reply(reply, errno, 0, path, "%s", strerror(errno));
                return -1;
        }
        fd = incoming_open_beneath(slash ? pfd : sfd, leaf, false);
        if (fd < 0) {
                lander_error_reply(reply, -fd, 0, path, "%s", strerror(-fd));
                return -1;
        }
        /* The mode asked, whatever a default ACL of its parent's made of
         * it (one whose user:: lacks x would keep what is to be made in it
         * out): the O_PATH descriptor's, through /proc. */
        if (chmod_path_fd(fd, mode & 01777) < 0) {
                lander_error_reply(reply, errno, 0, path, "setting its mode: %s", strerror(errno));
                safe_close(fd);
                return -1;
        }
        return *hold = fd;
}

/* The name a tree is published under: DEST, or DEST/@leaf (@into). */
static const char *published_name(const struct lander_session *ss, bool into, const char *leaf,
                                  char out[static LANDFS_PATH_MAX])
{
        if (!into || snprintf(out, LANDFS_PATH_MAX, "%s/%s", ss->dest, leaf) >= LANDFS_PATH_MAX)
                snprintf(out, LANDFS_PATH_MAX, "%s", ss->dest);
        return out;
}

/*
 * MKDIR of the staging directory itself (@op: LANDMSG_OP_STAGE, path ""):
 * made afresh, 0700, beside DEST or in it (LANDMSG_OP_INTO), whatever
 * this job's earlier attempt left there removed first; with a leaf, the
 * name it is to be published under refused now if it is there (unless
 * the user asked to replace it), before any data comes. The caller has
 * become the user. 0, or -1 with the ERROR in @reply.
 */
static int make_stage(struct lander *l, struct lander_session *ss, const struct landmsg_op *op,
                      const char *path, struct landmsg *reply)
{
        const bool into = op->flags & LANDMSG_OP_INTO;
        char target[LANDFS_PATH_MAX];
        _cleanup_(closep) int pfd = -1;
        struct stat st;
        int r;

        if (!into && op->leaf[0] && strcmp(op->leaf, ss->leaf) != 0) {
                lander_error_reply(reply, EPERM, 0, path, "%s is not %s: the credential names %s only", op->leaf,
                            ss->leaf, ss->dest);
                return -1;
        }
        pfd = open_dir(l, ss, into ? ss->dest : ss->parent, false, 0, reply);
        if (pfd < 0)
                return -1;
        lander_stage_release(ss);
        r = landfs_remove_tree(pfd, ss->stage_name, ss->who.uid);
        if (r < 0) {
                lander_error_reply(reply, -r, 0, path, "removing what an earlier attempt left: %s", strerror(-r));
                return -1;
        }
        /* Kept up to date (SYNC), a tree is merged into a directory
         * there (PUBLISH_MERGE), and into nothing else. */
        if (op->leaf[0] && (ss->flags & LANDMSG_SESSION_SYNC) &&
            fstatat(pfd, op->leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
                lander_error_reply(reply, EEXIST, 0, published_name(ss, into, op->leaf, target),
                            "exists and is no directory: a tree is not merged into it");
                return -1;
        }
        if (op->leaf[0] && !(ss->flags & (LANDMSG_SESSION_REPLACE | LANDMSG_SESSION_SYNC)) &&
            fstatat(pfd, op->leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                lander_error_reply(reply, EEXIST, 0, published_name(ss, into, op->leaf, target),
                            "exists (and replacing it was not asked for)");
                return -1;
        }
        if (mkdirat(pfd, ss->stage_name, 0700) < 0) {
                lander_error_reply(reply, errno, 0, path, "%s", strerror(errno));
                return -1;
        }
        if (stage_hold(ss, pfd, into, path, reply) < 0)
                return -1;
        /* 0700 whatever a default ACL where it is made made of it (op_dir). */
        if (chmod_path_fd(ss->stage_fd, 0700) < 0) {
                lander_error_reply(reply, errno, 0, path, "setting its mode: %s", strerror(errno));
                return -1;
        }
        snprintf(ss->stage_leaf, sizeof(ss->stage_leaf), "%s", op->leaf);
        return 0;
}

/* fsync the directory @dirfd (O_PATH: its own descriptor is opened for it). */
static int fsync_dir(int dirfd)
{
        int d = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        if (d < 0)
                return -errno;
        r = fsync(d) < 0 ? -errno : 0;
        safe_close(d);
        return r;
}

/*
 * LINK: @fd named @leaf in @dirfd, as the user the caller became. With
 * LANDMSG_LINK_REPLACE, under a random temporary name first
 * (".rdmaxfer-XXXXXXXX.part", another tried while one is taken) and
 * renamed over @leaf; with LANDMSG_LINK_SYNC, the directory fsynced after.
 * 0 or -errno.
 */
/*
 * LINK's LANDMSG_LINK_DIGEST and LANDMSG_LINK_MODE on @fd (@st its
 * fstat), as the user the caller became, the xattr first (a read-only
 * mode would refuse it), then the sender's attributes (LANDMSG_OP_XATTRS,
 * _ACLS: its ACLs last), the mode only where the file has another (a
 * tree's file made with its own mode: one system call a file fewer), then
 * with LANDMSG_LINK_SYNC an fsync, so that they are on disk before the
 * name is (the data is: the daemon fsynced it). A file system without
 * user xattrs takes the file without its digest. 0 or -errno, *@what
 * saying which.
 */
static int link_attrs_as_user(int fd, const struct stat *st, const struct landmsg_op *op, const char **what)
{
        static char bad[256 + 32];
        bool changed = false, attrs = op->flags & (LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS);
        int r;

        *what = "";
        if (op->flags & LANDMSG_LINK_DIGEST) {
                *what = DIGEST_XATTR;
                if (fsetxattr(fd, DIGEST_XATTR, op->target, strlen(op->target), 0) < 0 && errno != EOPNOTSUPP)
                        return -errno;
                changed = true;
        }
        /* The sender's attributes next, while the file is still its
         * owner's to write (a TMPFILE's mode lets it): an access ACL,
         * last of them, rewrites the mode, which is set again below. */
        if (attrs) {
                char name[256];

                r = xattrs_apply(fd, op->xattrs, op->xattrs_len, (op->flags & LANDMSG_OP_ACLS) ? XATTRS_ACL : 0, name);
                if (r < 0) {
                        snprintf(bad, sizeof(bad), "extended attribute %s", name);
                        *what = bad;
                        return r;
                }
                changed = true;
        }
        if ((op->flags & LANDMSG_LINK_MODE) && (attrs || (st->st_mode & 07777) != (op->mode & 01777))) {
                *what = "mode";
                if (fchmod(fd, op->mode & 01777) < 0)
                        return -errno;
                changed = true;
        }
        if (op->flags & LANDMSG_LINK_MTIME) {
                struct timespec ts[2];

                *what = "mtime";
                ns_timespec(op->mtime_ns, ts);
                if (futimens(fd, ts) < 0)
                        return -errno;
                changed = true;
        }
        *what = "metadata (fsync)";
        if (changed && (op->flags & LANDMSG_LINK_SYNC) && fsync(fd) < 0)
                return -errno;
        return 0;
}

/* MKDIR's LANDMSG_OP_XATTRS and _ACLS on the directory @dfd (O_PATH) just
 * made, as the user; its mode (0700 until the tree's end) lets them. An
 * access ACL rewrites the mode (a read-only directory's would keep what
 * is to be made in it out): 0700 again after it, the ACL's named entries
 * kept; the tree's end sets the sender's mode, and with it the ACL's
 * mask, as the sender has them. */
static void dir_attrs_as_user(int dfd, const struct landmsg_op *op, const char *path, struct landmsg *reply)
{
        _cleanup_(closep) int d = -1;
        char name[256];
        int r;

        if (!(op->flags & (LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS)))
                return;
        /* Its owner's to read and search first (op_dir made it so, the
         * staging directory is). */
        d = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = d < 0 ? -errno : xattrs_apply(d, op->xattrs, op->xattrs_len, (op->flags & LANDMSG_OP_ACLS) ? XATTRS_ACL : 0,
                                         name);
        if (r == 0 && fchmod(d, 0700) < 0) {
                r = -errno;
                snprintf(name, sizeof(name), "its mode");
        }
        if (r < 0)
                lander_error_reply(reply, -r, 0, path, "setting %s%s: %s", d < 0 ? "its attributes" : "extended attribute ",
                                   d < 0 ? "" : name, strerror(-r));
}

/* SYMLINK: @op's target named @op->leaf in @dirfd, with @op's mtime (the
 * link's own) unless 0. */
static int kept_dir_held(struct lander *l, struct lander_session *ss, const char *tdir);

/* SYMLINK's LANDMSG_LINK_KEEP_*: the symlink the tree there has at the
 * same path (kept_dir's @op->path, @op->leaf), where it points to
 * @op->target (KEEP_ANY: anywhere), linked as @op->leaf in @dfd
 * instead. 1 kept; 0 not (nothing there, another type, another target,
 * it cannot be linked: the new one is made); or -errno. */
static int symlink_keep(struct lander *l, struct lander_session *ss, const struct landmsg_op *op, int dfd)
{
        int kdir = kept_dir_held(l, ss, op->path);
        char have[LANDMSG_PATH_MAX + 1];
        ssize_t n;

        if (kdir < 0)
                return 0;
        n = readlinkat(kdir, op->leaf, have, sizeof(have));
        if (n < 0 || (size_t)n >= sizeof(have))
                return 0;       /* not there, no symlink (EINVAL), too long */
        if (!(op->flags & LANDMSG_LINK_KEEP_ANY) && ((size_t)n != strlen(op->target) ||
                                                     memcmp(have, op->target, (size_t)n) != 0))
                return 0;
        /* Without AT_SYMLINK_FOLLOW: the symlink itself. */
        if (linkat(kdir, op->leaf, dfd, op->leaf, 0) < 0)
                return errno == EEXIST ? -EEXIST : 0;
        return 1;
}

static void symlink_as_user(struct lander *l, struct lander_session *ss, int dirfd, const struct landmsg_op *op,
                            const char *path, struct landmsg *reply)
{
        struct timespec ts[2];
        int r;

        if (op->flags & _LANDMSG_LINK_KEEP) {
                r = symlink_keep(l, ss, op, dirfd);
                if (r < 0) {
                        lander_error_reply(reply, r, 0, path, "%s: %s", op->leaf, strerror(-r));
                        return;
                }
                if (r > 0) {
                        reply->type = LANDMSG_FDS;
                        reply->fds = (struct landmsg_fds){ .count = 0, .kept = 1 };
                        return;
                }
        }
        if (symlinkat(op->target, dirfd, op->leaf) < 0) {
                lander_error_reply(reply, errno, 0, path, "%s: %s", op->leaf, strerror(errno));
                return;
        }
        ns_timespec(op->mtime_ns, ts);
        if (op->mtime_ns && utimensat(dirfd, op->leaf, ts, AT_SYMLINK_NOFOLLOW) < 0)
                lander_error_reply(reply, errno, 0, path, "%s: its mtime: %s", op->leaf, strerror(errno));
}

static int link_as_user(struct lander *l, int dirfd, int fd, const char *leaf, uint32_t flags)
{
        char tmp[64];
        int r;

        (void)l;
        if (!(flags & LANDMSG_LINK_REPLACE)) {
                r = landfs_link(fd, dirfd, leaf);
        } else {
                do {
                        snprintf(tmp, sizeof(tmp), ".rdmaxfer-%08x.part", randombytes_random());
                        r = landfs_link(fd, dirfd, tmp);
                } while (r == -EEXIST);
                if (r == 0 && renameat(dirfd, tmp, dirfd, leaf) < 0) {
                        r = -errno;
                        unlinkat(dirfd, tmp, 0);
                }
        }
        if (r < 0 || !(flags & LANDMSG_LINK_SYNC))
                return r;
        return fsync_dir(dirfd);
}

/*
 * The directory @tdir (a path in the staging directory) as the tree there
 * has it, the tree the staged one is to be merged into or replace (DEST,
 * or DEST/stage_leaf), walked as LOOK walks, nothing followed: its fd, or
 * -errno (-ENOENT: it, or a directory on its way, is not there or no
 * directory).
 */
static int kept_dir(struct lander *l, struct lander_session *ss, const char *tdir)
{
        char rel[LANDFS_PATH_MAX];
        struct landmsg err = { .type = LANDMSG_OK };
        _cleanup_(closep) int base = -1;
        int n, fd;

        if (ss->stage_into && !ss->stage_leaf[0])
                return -ENOENT;
        n = snprintf(rel, sizeof(rel), "%s%s%s", ss->stage_into ? ss->stage_leaf : "",
                     ss->stage_into && tdir[0] ? "/" : "", tdir);
        if (n < 0 || n >= (int)sizeof(rel))
                return -ENAMETOOLONG;
        base = open_dir(l, ss, ss->dest, false, 0, &err);
        if (base < 0)
                return -ENOENT;
        if (!rel[0])
                return TAKE_FD(base);
        fd = incoming_open_beneath(base, rel, false);
        return fd == -ENOTDIR || fd == -ELOOP ? -ENOENT : fd;
}

/*
 * kept_dir(@tdir), held by the session for the next request that looks
 * in the same directory (a pack's files come a directory at a time):
 * borrowed, not to be closed; let go of with the staging directory
 * (lander_stage_release). Only a directory found is held.
 */
static int kept_dir_held(struct lander *l, struct lander_session *ss, const char *tdir)
{
        int fd;

        if (ss->kept_fd >= 0 && strcmp(ss->kept_path, tdir) == 0)
                return ss->kept_fd;
        fd = kept_dir(l, ss, tdir);
        if (fd < 0)
                return fd;
        safe_close(ss->kept_fd);
        ss->kept_fd = fd;
        snprintf(ss->kept_path, sizeof(ss->kept_path), "%s", tdir);
        return fd;
}

/*
 * A hard link's target @tdir/@tleaf as the tree there has it (kept_dir),
 * linked as @leaf in @dfd; only a regular file. 0 or -errno (-ENOENT:
 * not there either).
 */
static int hardlink_kept(struct lander *l, struct lander_session *ss, const char *tdir, const char *tleaf, int dfd,
                         const char *leaf)
{
        _cleanup_(closep) int tfd = kept_dir(l, ss, tdir);
        struct stat st;

        if (tfd < 0)
                return tfd;
        if (fstatat(tfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT;
        return linkat(tfd, tleaf, dfd, leaf, 0) < 0 ? -errno : 0;
}

/* Whether @a and @b (regular files of @size bytes) hold the same bytes:
 * 1, 0, or -errno. */
static int same_bytes(int a, int b, off_t size)
{
        static uint8_t ba[64 * 1024], bb[64 * 1024];
        off_t off = 0;

        while (off < size) {
                size_t want = (size_t)MIN((off_t)sizeof(ba), size - off);
                ssize_t na = pread(a, ba, want, off), nb = pread(b, bb, want, off);

                if (na < 0 || nb < 0)
                        return -errno;
                if ((size_t)na != want || (size_t)nb != want)
                        return 0;       /* changed meanwhile */
                if (memcmp(ba, bb, want) != 0)
                        return 0;
                off += (off_t)want;
        }
        return 1;
}

/* Whether @a (a regular file) holds the @size bytes at @mem: 1, 0, or -errno. */
static int same_as_mem(int a, const uint8_t *mem, off_t size)
{
        static uint8_t ba[64 * 1024];
        off_t off = 0;

        while (off < size) {
                size_t want = (size_t)MIN((off_t)sizeof(ba), size - off);
                ssize_t na = pread(a, ba, want, off);

                if (na < 0)
                        return -errno;
                if ((size_t)na != want || memcmp(ba, mem + off, want) != 0)
                        return 0;
                off += (off_t)want;
        }
        return 1;
}

/*
 * LINK's or CREATE's LANDMSG_LINK_KEEP_*: the file the tree there has at
 * the same path (kept_dir's @op->path, @op->leaf), when it is the same as
 * the new one by @op's way, linked as @op->leaf in @dfd instead. The new
 * one is @fd (a LINK's), or a CREATE's bytes, @op->data_len of them at
 * @mem. 1 kept; 0 not (nothing there, another type, it differs, its
 * attributes differ from @op's, the user may not read or link it: the new
 * one is made as ever); or -errno.
 */
static int link_keep(struct lander *l, struct lander_session *ss, const struct landmsg_op *op, int fd,
                     const uint8_t *mem, int dfd)
{
        const unsigned int which = ((op->flags & LANDMSG_LINK_KEEP_XATTRS) ? XATTRS_USER : 0) |
                                   ((op->flags & LANDMSG_OP_ACLS) && !(op->flags & LANDMSG_LINK_KEEP_ANY) ? XATTRS_ACL : 0);
        int kdir = kept_dir_held(l, ss, op->path);
        _cleanup_(closep) int old = -1;
        uint8_t have[LANDMSG_XATTRS_MAX];
        char bad[256];
        struct stat ks, ns;
        int r;

        if (kdir < 0 || fstatat(kdir, op->leaf, &ks, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(ks.st_mode))
                return 0;
        if (!(op->flags & LANDMSG_LINK_KEEP_ANY)) {
                if (fd < 0)
                        ns.st_size = (off_t)op->data_len;
                else if (fstat(fd, &ns) < 0)
                        return -errno;
                if (ks.st_size != ns.st_size)
                        return 0;
        }
        if (op->flags & LANDMSG_LINK_KEEP_BYTES) {
                /* O_NONBLOCK: had it become a FIFO since, the open must not hang. */
                old = openat(kdir, op->leaf, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (old < 0 || fstat(old, &ks) < 0 || !S_ISREG(ks.st_mode) || ks.st_size != ns.st_size)
                        return 0;
                r = fd < 0 ? same_as_mem(old, mem, ns.st_size) : same_bytes(old, fd, ns.st_size);
                if (r <= 0)
                        return r == 0 || r == -EACCES ? 0 : r;
        }
        /* -X, -A: its attributes as sent, or it is not the same file. */
        if (which) {
                if (old < 0)
                        old = openat(kdir, op->leaf, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (old < 0 || fstat(old, &ks) < 0 || !S_ISREG(ks.st_mode))
                        return 0;
                r = xattrs_read(old, which, have, sizeof(have), NULL, bad);
                if (r < 0 || !xattrs_same(have, (size_t)r, (op->flags & LANDMSG_OP_XATTRS) ? op->xattrs : NULL,
                                          (op->flags & LANDMSG_OP_XATTRS) ? op->xattrs_len : 0))
                        return 0;
        }
        if (linkat(kdir, op->leaf, dfd, op->leaf, 0) < 0)
                return errno == EEXIST ? -EEXIST : 0;
        return 1;
}

/* @len bytes at @p into the file @fd: 0 or -errno. */
static int write_all(int fd, const uint8_t *p, uint64_t len)
{
        uint64_t off = 0;

        while (off < len) {
                ssize_t w = write(fd, p + off, (size_t)MIN(len - off, (uint64_t)(1u << 30)));

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                off += (uint64_t)w;
        }
        return 0;
}

/*
 * CREATE: @op's file made in @dfd (@path) from the session's memory, as
 * the user. Keeping (LANDMSG_LINK_KEEP_*), the file the tree there has
 * is linked instead where it is the same as those bytes (link_keep, as a
 * LINK: nothing made). Else by its name (O_EXCL, nothing followed), its
 * data written, then what a LINK sets (link_attrs_as_user). Made with its
 * own mode where that lets its owner write (the xattrs need it), else
 * 0600 until its mode is set.
 */
static void create_as_user(struct lander *l, struct lander_session *ss, const struct landmsg_op *op, int dfd,
                           const char *path, struct landmsg *reply)
{
        const mode_t mode = (op->mode & 01200) == 0200 ? op->mode & 0777 : 0600;
        _cleanup_(closep) int fd = -1;
        const uint8_t *data;
        const char *what = "data";
        struct stat st;
        int r;

        if (op->data_len > ss->mem_size || op->data_off > ss->mem_size - op->data_len) {
                lander_error_reply(reply, EINVAL, 0, path, "%s: its data lies beyond the memory handed over "
                                   "(%zu bytes)", op->leaf, ss->mem_size);
                return;
        }
        /* None handed over, only an empty file can be made. */
        data = ss->mem ? ss->mem + op->data_off : (const uint8_t *)"";
        if (op->flags & _LANDMSG_LINK_KEEP) {
                r = link_keep(l, ss, op, -1, data, dfd);
                if (r < 0) {
                        lander_error_reply(reply, r, 0, path, "%s: %s", op->leaf, strerror(-r));
                        return;
                }
                if (r > 0) {
                        l->kept++;
                        return;
                }
        }
        fd = openat(dfd, op->leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0) {
                lander_error_reply(reply, errno, 0, path, "%s: %s", op->leaf, strerror(errno));
                return;
        }
        r = write_all(fd, data, op->data_len);
        if (r == 0) {
                what = "metadata";
                r = fstat(fd, &st) < 0 ? -errno : link_attrs_as_user(fd, &st, op, &what);
        }
        if (r < 0) {
                (void)unlinkat(dfd, op->leaf, 0);
                lander_error_reply(reply, r, 0, path, "%s: setting its %s: %s", op->leaf, what, strerror(-r));
        }
}

/* HARDLINK: @req's target (beneath the same base) named @req->op.leaf
 * in @dfd (@path), without following it. */
static void hardlink_as_user(struct lander *l, struct lander_session *ss, const struct landmsg *req, int dfd,
                             const char *path, struct landmsg *reply)
{
        const char *tslash = strrchr(req->op.target, '/');
        char src[LANDFS_PATH_MAX], tdir[LANDFS_PATH_MAX], *slash;
        _cleanup_(closep) int shold = -1;
        int sfd, r = full_path(ss, req->op.flags, req->op.target, src);

        if (r < 0) {
                path_error(ss, reply, r);
                return;
        }
        /* The target's directory, beneath the same base, walked as op_dir walks. */
        snprintf(tdir, sizeof(tdir), "%.*s", tslash ? (int)(tslash - req->op.target) : 0, req->op.target);
        slash = strrchr(src, '/');
        *slash = '\0';
        sfd = op_dir(l, ss, req->op.flags, tdir, false, 0, src, &shold, reply);
        *slash = '/';
        if (sfd < 0)
                return;
        if (linkat(sfd, slash + 1, dfd, req->op.leaf, 0) == 0)
                return;
        r = -errno;
        /* Kept up to date, the target may be one the tree there kept (LOOK
         * showed it the same, and it was not sent): linked from there. */
        if (r == -ENOENT && (req->op.flags & LANDMSG_OP_STAGE) && (ss->flags & LANDMSG_SESSION_SYNC))
                r = hardlink_kept(l, ss, tdir, slash + 1, dfd, req->op.leaf);
        if (r < 0)
                lander_error_reply(reply, -r, 0, path, "%s (to %s): %s", req->op.leaf, req->op.target, strerror(-r));
}

/*
 * PUBLISH with LANDMSG_PUBLISH_MERGE: the staged tree merged into @leaf
 * beneath @pfd, when it is a directory (not followed: a symlink there is
 * no tree to merge into), its file system synced first (the links are
 * metadata, the data the daemon wrote is not synced yet). -ENOENT when
 * nothing has the name: published as any tree. With @deleted
 * (LANDMSG_PUBLISH_DELETE), nothing is linked in: the staged tree is all
 * the new one holds, and what the old one has beyond it is counted into
 * *@deleted as it is removed (incoming.h). Either way, first: -EISDIR
 * where a name is a directory in one tree and not in the other (its path
 * beneath @leaf in @conflict), nothing changed: neither a directory's
 * contents nor a file is lost to an entry of another type.
 */
static int publish_merge(const struct lander_session *ss, int pfd, const char *leaf, uint64_t *deleted,
                         char *conflict, size_t conflict_len)
{
        _cleanup_(closep) int d = -1;
        struct stat st;
        int r;

        if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        /* @pfd is O_PATH: what syncs and fsyncs it needs it opened. */
        d = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
                return -errno;
        r = incoming_merge_conflict(d, leaf, d, ss->stage_name, conflict, conflict_len);
        if (r < 0)
                return r == -EEXIST ? -EISDIR : r;
        r = deleted ? 0 : incoming_merge_link(d, leaf, d, ss->stage_name);
        if (r < 0)
                return r;
        if (syncfs(d) < 0)
                return -errno;
        return incoming_merge_publish_of(d, d, ss->stage_name, leaf, deleted, ss->who.uid);
}

/*
 * PUBLISH: the file system synced (the daemon wrote the tree's data and
 * synced none of it: one syncfs covers every entry), then the staging
 * directory renamed to @leaf beneath @pfd (DEST's parent, and DEST's
 * leaf; or DEST, and the name the tree is to have in it), @pfd then
 * fsynced. Only the directory the session holds, still under its name
 * there (the user moved it, or put another in its place: -ESTALE). What
 * is there: -EEXIST, or with LANDMSG_PUBLISH_REPLACE exchanged and the
 * old tree removed.
 */
static int publish_as_user(const struct lander_session *ss, int pfd, const char *leaf, uint32_t flags,
                           uint64_t *deleted, char *conflict, size_t conflict_len)
{
        int d = openat(pfd, ss->stage_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), r = 0;
        struct stat st;

        if (d < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ESTALE : -errno;
        if (fstat(d, &st) < 0)
                r = -errno;
        else if (ss->stage_fd < 0 || st.st_dev != ss->stage_dev || st.st_ino != ss->stage_ino)
                r = -ESTALE;
        else if (syncfs(d) < 0)
                r = -errno;
        safe_close(d);
        if (r < 0)
                return r;
        /* Kept up to date (LANDMSG_PUBLISH_MERGE): merged into what has
         * the name, a directory (incoming.h: the old tree's entries the
         * staged one lacks linked in, then the two exchanged). */
        if (flags & (LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_DELETE)) {
                r = publish_merge(ss, pfd, leaf, (flags & LANDMSG_PUBLISH_DELETE) ? deleted : NULL, conflict,
                                  conflict_len);
                if (r != -ENOENT)
                        return r;
                r = 0;          /* nothing has the name: published as any tree */
        }
        if (renameat2(pfd, ss->stage_name, pfd, leaf, RENAME_NOREPLACE) < 0) {
                r = -errno;
                if (r == -EEXIST && (flags & LANDMSG_PUBLISH_REPLACE)) {
                        r = renameat2(pfd, ss->stage_name, pfd, leaf, RENAME_EXCHANGE) < 0 ? -errno : 0;
                        /* The old tree now has the staging directory's name. */
                        if (r == 0)
                                r = landfs_remove_tree(pfd, ss->stage_name, ss->who.uid);
                }
        }
        return r < 0 ? r : fsync_dir(pfd);
}

/* LOOK of a symlink (LANDMSG_LOOK_LINK): @leaf in @dirfd, whose stat is
 * @st, answered with its target and mtime as a WALK_ENTRY. */
static void look_link(int dirfd, const char *leaf, const char *where, const struct stat *st,
                      struct landmsg *reply)
{
        struct landmsg_walk_entry *e = &reply->walk_entry;
        ssize_t n = readlinkat(dirfd, leaf, e->target, sizeof(e->target));

        if (n < 0 || n == 0 || (size_t)n >= sizeof(e->target)) {
                int err = n < 0 ? errno : n == 0 ? EINVAL : ENAMETOOLONG;

                lander_error_reply(reply, err, 0, where, "reading the symlink: %s", strerror(err));
                return;
        }
        e->target[n] = '\0';
        e->kind = LANDMSG_WALK_SYMLINK;
        e->mode = 0;
        e->size = (uint64_t)n;
        e->mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
        snprintf(e->path, sizeof(e->path), "%s", leaf);
        e->xattrs_len = 0;
        reply->type = LANDMSG_WALK_ENTRY;
}

/* LOOK: what has @leaf's name in @dirfd (@dir), as the user the caller
 * became; with @which (-X, -A), its attributes in the FD answer; with
 * @links, a symlink's target. In a dry run (@dry), nothing there: whether
 * the user could make it. */
static void look_as_user(int dirfd, const char *leaf, const char *dir, unsigned int which, bool links, bool dry,
                         struct landmsg *reply, int *reply_fd)
{
        char where[LANDFS_PATH_MAX + LANDMSG_LEAF_MAX + 2];
        struct stat st;
        int fd;

        snprintf(where, sizeof(where), "%s/%s", dir, leaf);
        if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno != ENOENT)
                        lander_error_reply(reply, errno, 0, where, "%s", strerror(errno));
                else if (dry && faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
                        lander_error_reply(reply, errno, 0, dir, "%s could not be made in it: %s", leaf,
                                           strerror(errno));
                return;         /* OK: nothing has the name */
        }
        if (S_ISDIR(st.st_mode)) {
                lander_error_reply(reply, EEXIST, 0, where, "%s", LANDMSG_LOOK_DIR);
                return;
        }
        if (S_ISLNK(st.st_mode) && links) {
                look_link(dirfd, leaf, where, &st, reply);
                return;
        }
        if (!S_ISREG(st.st_mode)) {
                lander_error_reply(reply, EEXIST, 0, where, "exists as %s",
                                   S_ISLNK(st.st_mode) ? "a symlink" : "something other than a file");
                return;
        }
        /* O_NONBLOCK: had it become a FIFO since, the open must not hang. */
        fd = openat(dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                int err = fd < 0 ? errno : EEXIST;

                safe_close(fd);
                lander_error_reply(reply, err, 0, where, "%s", err == EEXIST ? "exists as something other than a "
                                   "file" : strerror(err));
                return;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (which && read_attrs(fd, which, where, reply) < 0) {
                safe_close(fd);
                return;
        }
        reply->type = LANDMSG_FD;
        *reply_fd = fd;
}

/*
 * LOOK's directory @rel beneath DEST (a tree's entry, landmsg.h): DEST
 * walked as the user, @rel beneath it without following anything. Its fd
 * (in *@hold), or -1: with the ERROR in @reply, or with @reply left OK
 * where @rel is not there, or not all directories (nothing has the name).
 */
static int look_dir(struct lander *l, struct lander_session *ss, const char *rel, const char *path, int *hold,
                    struct landmsg *reply)
{
        _cleanup_(closep) int dfd = open_dir(l, ss, ss->dest, false, 0, reply);
        int fd;

        *hold = -1;
        if (dfd < 0)
                return -1;
        fd = incoming_open_beneath(dfd, rel, false);
        if (fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP)
                return -1;
        if (fd < 0) {
                lander_error_reply(reply, -fd, 0, path, "%s", strerror(-fd));
                return -1;
        }
        return *hold = fd;
}

static void lander_op(struct lander *l, struct lander_session *ss, const struct landmsg *req, int fd,
                      struct landmsg *reply, int *reply_fd)
{
        char path[LANDFS_PATH_MAX], *slash;
        _cleanup_(closep) int hold = -1;
        const char *what;
        char conflict[LANDMSG_PATH_MAX + 1];
        uint64_t deleted;
        struct stat st;
        bool into;
        int r, nfd, dfd;
        /* A dry run's list of the names there, for what --delete would remove. */
        const bool names_walk = req->type == LANDMSG_WALK && ss->direction == LANDMSG_PUSH &&
                                (ss->flags & LANDMSG_SESSION_DRY) && (ss->flags & LANDMSG_SESSION_DELETE);

        r = full_path(ss, req->type == LANDMSG_PUBLISH || req->type == LANDMSG_DISCARD
                                  ? LANDMSG_OP_STAGE | (req->op.flags & LANDMSG_OP_INTO)
                                  : req->op.flags,
                      req->op.path, path);
        if (r < 0) {
                path_error(ss, reply, r);
                return;
        }
        if ((req->type == LANDMSG_OPEN_READ || (req->type == LANDMSG_WALK && !names_walk)) !=
                    (ss->direction == LANDMSG_PULL) ||
            (req->type == LANDMSG_LOOK && ss->direction != LANDMSG_PUSH)) {
                lander_error_reply(reply, EPERM, 0, path, "not what this session's credential was made for (%s)",
                            ss->direction == LANDMSG_PULL ? "reading" : "landing");
                return;
        }
        /* A dry run looks, and makes nothing (xferctl send --dry-run). */
        if ((ss->flags & LANDMSG_SESSION_DRY) && req->type != LANDMSG_LOOK && !names_walk) {
                lander_error_reply(reply, EPERM, 0, path, "a dry run makes nothing (xferctl send --dry-run)");
                return;
        }
        /* Looking at what is there (read-only) too: xferctl send --sync, --dry-run. */
        if (req->type == LANDMSG_LOOK && !(ss->flags & (LANDMSG_SESSION_SYNC | LANDMSG_SESSION_DRY))) {
                lander_error_reply(reply, EPERM, 0, path, "looking at what is there was not asked for "
                            "(xferctl send --sync or --dry-run)");
                return;
        }
        /* Replacing is the user's to allow, in the credential (xferctl send --overwrite). */
        if (((req->type == LANDMSG_LINK && (req->op.flags & LANDMSG_LINK_REPLACE)) ||
             (req->type == LANDMSG_PUBLISH && (req->op.flags & LANDMSG_PUBLISH_REPLACE))) &&
            !(ss->flags & LANDMSG_SESSION_REPLACE)) {
                lander_error_reply(reply, EPERM, 0, path, "replacing what is there was not asked for "
                            "(xferctl send --overwrite)");
                return;
        }
        /* Keeping the file there is keeping it up to date (xferctl send --sync). */
        if ((req->type == LANDMSG_LINK || req->type == LANDMSG_CREATE || req->type == LANDMSG_SYMLINK) &&
            (req->op.flags & _LANDMSG_LINK_KEEP) &&
            !(ss->flags & LANDMSG_SESSION_SYNC)) {
                lander_error_reply(reply, EPERM, 0, path, "keeping what is there was not asked for "
                            "(xferctl send --sync)");
                return;
        }
        /* Merging into what is there, or mirroring it, is keeping it up
         * to date (xferctl send -r --sync [--delete]). */
        if (req->type == LANDMSG_PUBLISH && (req->op.flags & (LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_DELETE)) &&
            !(ss->flags & LANDMSG_SESSION_SYNC)) {
                lander_error_reply(reply, EPERM, 0, path, "merging into what is there was not asked for "
                            "(xferctl send --sync)");
                return;
        }
        /* Deleting what the sent tree lacks is the user's to ask (xferctl send --delete). */
        if (req->type == LANDMSG_PUBLISH && (req->op.flags & LANDMSG_PUBLISH_DELETE) &&
            !(ss->flags & LANDMSG_SESSION_DELETE)) {
                lander_error_reply(reply, EPERM, 0, path, "deleting what the sent tree lacks was not asked for "
                            "(xferctl send --delete)");
                return;
        }
        /* In DEST's parent, only DEST's own name: the credential names no sibling. */
        if ((req->type == LANDMSG_LINK || req->type == LANDMSG_LOOK) && (req->op.flags & LANDMSG_OP_PARENT) &&
            strcmp(req->op.leaf, ss->leaf) != 0) {
                lander_error_reply(reply, EPERM, 0, path, "%s is not %s: the credential names %s only", req->op.leaf,
                            ss->leaf, ss->dest);
                return;
        }
        if (req->type == LANDMSG_LINK &&
            (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 0 || st.st_uid != ss->who.uid)) {
                /* Only a nameless file made for this user (TMPFILE). */
                lander_error_reply(reply, EBADF, 0, path, "not a nameless file of %s's", ss->user);
                return;
        }
        if (!lander_as(l, ss, reply))
                return;
        reply->type = LANDMSG_OK;
        switch (req->type) {
        case LANDMSG_MKDIR:
                if ((req->op.flags & LANDMSG_OP_STAGE) && !req->op.path[0])
                        dfd = make_stage(l, ss, &req->op, path, reply) < 0 ? -1 : ss->stage_fd;
                else
                        dfd = op_dir(l, ss, req->op.flags, req->op.path, true, req->op.mode, path, &hold, reply);
                if (dfd >= 0)
                        dir_attrs_as_user(dfd, &req->op, path, reply);
                break;
        case LANDMSG_TMPFILE:
                dfd = op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd < 0)
                        break;
                /* The name it is to have, where it must be new: refused
                 * now, before any data comes for it. */
                if (req->op.leaf[0] && fstatat(dfd, req->op.leaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                        lander_error_reply(reply, EEXIST, 0, path, "%s exists", req->op.leaf);
                        break;
                }
                if (req->op.leaf[0] && errno != ENOENT) {
                        lander_error_reply(reply, errno, 0, path, "%s: %s", req->op.leaf, strerror(errno));
                        break;
                }
                nfd = landfs_tmpfile(dfd, req->op.mode);
                if (nfd < 0) {
                        lander_error_reply(reply, nfd, 0, path, "%s", strerror(-nfd));
                        break;
                }
                reply->type = LANDMSG_FD;
                *reply_fd = nfd;
                break;
        case LANDMSG_LINK:
                dfd = op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd < 0)
                        break;
                if (req->op.flags & _LANDMSG_LINK_KEEP) {
                        r = link_keep(l, ss, &req->op, fd, NULL, dfd);
                        if (r < 0) {
                                lander_error_reply(reply, r, 0, path, "%s: %s", req->op.leaf, strerror(-r));
                                break;
                        }
                        if (r > 0) {
                                l->kept++;
                                break;
                        }
                }
                r = link_attrs_as_user(fd, &st, &req->op, &what);
                if (r < 0) {
                        lander_error_reply(reply, r, 0, path, "%s: setting its %s: %s", req->op.leaf, what, strerror(-r));
                        break;
                }
                r = link_as_user(l, dfd, fd, req->op.leaf, req->op.flags);
                if (r < 0)
                        lander_error_reply(reply, r, 0, path, "%s: %s", req->op.leaf, strerror(-r));
                break;
        case LANDMSG_CREATE:
                dfd = op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd >= 0)
                        create_as_user(l, ss, &req->op, dfd, path, reply);
                break;
        case LANDMSG_SYMLINK:
                dfd = op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd >= 0)
                        symlink_as_user(l, ss, dfd, &req->op, path, reply);
                break;
        case LANDMSG_LOOK:
                dfd = req->op.path[0] ? look_dir(l, ss, req->op.path, path, &hold, reply)
                                      : op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd >= 0)
                        look_as_user(dfd, req->op.leaf, path, read_which(req->op.flags),
                                     req->op.flags & LANDMSG_LOOK_LINK, ss->flags & LANDMSG_SESSION_DRY, reply,
                                     reply_fd);
                break;
        case LANDMSG_HARDLINK:
                dfd = op_dir(l, ss, req->op.flags, req->op.path, false, 0, path, &hold, reply);
                if (dfd >= 0)
                        hardlink_as_user(l, ss, req, dfd, path, reply);
                break;
        case LANDMSG_PUBLISH:
        case LANDMSG_DISCARD:
                into = req->op.flags & LANDMSG_OP_INTO;
                dfd = hold = open_dir(l, ss, into ? ss->dest : ss->parent, false, 0, reply);
                if (dfd < 0)
                        break;
                if (req->type == LANDMSG_DISCARD)
                        lander_stage_release(ss);
                deleted = 0;
                conflict[0] = '\0';
                r = req->type == LANDMSG_PUBLISH
                            ? publish_as_user(ss, dfd, into ? req->op.leaf : ss->leaf, req->op.flags, &deleted,
                                              conflict, sizeof(conflict))
                            : landfs_remove_tree(dfd, ss->stage_name, ss->who.uid);
                if (r == 0)
                        lander_stage_release(ss);      /* it is DEST's now, or gone */
                if (r == 0 && req->type == LANDMSG_PUBLISH && (req->op.flags & LANDMSG_PUBLISH_DELETE)) {
                        reply->type = LANDMSG_PUBLISHED;
                        reply->published.deleted = deleted;
                }
                if ((r == -EEXIST || r == -ENOTDIR || r == -EISDIR) && req->type == LANDMSG_PUBLISH)
                        (void)published_name(ss, into, req->op.leaf, path);
                if (r == -EISDIR) {
                        lander_error_reply(reply, EEXIST, 0, path, "%s: a directory in one of the tree there and "
                                    "the tree sent, and not in the other: neither merged nor replaced (nothing "
                                    "changed)", conflict[0] ? conflict + 1 : ".");
                        break;
                }
                if (r < 0)
                        lander_error_reply(reply, r, 0, path, "%s",
                                    r == -EEXIST ? "exists (and replacing it was not asked for)"
                                    : r == -ENOTDIR ? "exists and is no directory: a tree is not merged into it"
                                    : r == -ESTALE ? "the staging directory was moved or replaced while the tree "
                                                     "landed: not published"
                                    : strerror(-r));
                break;
        case LANDMSG_OPEN_READ:
        case LANDMSG_WALK:
                if (req->type == LANDMSG_WALK && !(ss->flags & LANDMSG_SESSION_TREE) && !names_walk) {
                        lander_error_reply(reply, EPERM, 0, path, "a tree is read only for xferctl get -r "
                                           "(or listed for send -n --delete)");
                        break;
                }
                /* The file's directory walked as the user; the file itself
                 * opened without following a symlink. */
                slash = strrchr(path, '/');
                *slash = '\0';
                dfd = hold = path[0] ? open_dir(l, ss, path, false, 0, reply) : -1;
                *slash = '/';
                if (dfd < 0) {
                        if (reply->type == LANDMSG_OK)
                                lander_error_reply(reply, EPERM, LANDFS_OUTSIDE_ROOTS, path, "not a file beneath a landing root");
                        break;
                }
                if (req->type == LANDMSG_WALK) {
                        /* Beneath it, the walker: the user for good. */
                        r = walker_start(&ss->who, dfd, slash + 1, names_walk ? 0 : read_which(req->op.flags),
                                         names_walk, &nfd);
                        if (r < 0) {
                                lander_error_reply(reply, r, 0, path, "cannot start walking it: %s", strerror(-r));
                                break;
                        }
                        reply->type = LANDMSG_FD;
                        *reply_fd = nfd;
                        break;
                }
                nfd = openat(dfd, slash + 1, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                if (nfd < 0 || fstat(nfd, &st) < 0 ||
                    !(S_ISREG(st.st_mode) || (S_ISDIR(st.st_mode) && (ss->flags & LANDMSG_SESSION_TREE)))) {
                        r = nfd < 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
                        safe_close(nfd);
                        lander_error_reply(reply, r, 0, path, "%s", r == ELOOP ? "a symlink: name the file it points to"
                                                             : r == EISDIR ? "a directory: xferctl get -r fetches a tree"
                                                             : r == EINVAL ? "not a regular file" : strerror(r));
                        break;
                }
                /* O_NONBLOCK was for the open (a FIFO planted there); reads block. */
                fcntl(nfd, F_SETFL, fcntl(nfd, F_GETFL) & ~O_NONBLOCK);
                /* Its attributes, as the user reads them (xferctl get -X, -A). */
                if (read_which(req->op.flags) && read_attrs(nfd, read_which(req->op.flags), path, reply) < 0) {
                        safe_close(nfd);
                        break;
                }
                reply->type = LANDMSG_FD;
                *reply_fd = nfd;
                break;
        }
}

/* SETATTR on @fd, or on @proc (a /proc/self/fd name) where @fd is -1, as
 * the user the caller became. 0 or -errno, *@what saying which. */
static int setattr_as_user(const char *proc, int fd, const struct landmsg_setattr *a, const char **what)
{
        if (a->flags & LANDMSG_SET_XATTR) {
                *what = a->xname;
                if ((fd >= 0 ? fsetxattr(fd, a->xname, a->xvalue, a->xlen, 0)
                             : setxattr(proc, a->xname, a->xvalue, a->xlen, 0)) < 0)
                        return -errno;
        }
        if (a->flags & LANDMSG_SET_MODE) {
                *what = "mode";
                if ((fd >= 0 ? fchmod(fd, a->mode & 01777) : chmod(proc, a->mode & 01777)) < 0)
                        return -errno;
        }
        if (a->flags & LANDMSG_SET_MTIME) {
                struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
                                          { .tv_sec = (time_t)(a->mtime_ns / 1000000000u),
                                            .tv_nsec = (long)(a->mtime_ns % 1000000000u) } };

                *what = "mtime";
                if ((fd >= 0 ? futimens(fd, ts) : utimensat(AT_FDCWD, proc, ts, 0)) < 0)
                        return -errno;
        }
        return 0;
}

static void lander_setattr(struct lander *l, struct lander_session *ss, const struct landmsg_setattr *a, int fd,
                           struct landmsg *reply)
{
        char path[LANDFS_PATH_MAX], proc[64];
        const char *what = "";
        _cleanup_(closep) int hold = -1;
        struct stat st;
        int r, dfd;

        if (ss->direction != LANDMSG_PUSH) {
                lander_error_reply(reply, EPERM, 0, NULL, "not what this session's credential was made for (reading)");
                return;
        }
        if (a->flags & LANDMSG_SET_AT_PATH) {
                r = full_path(ss, a->flags, a->path, path);
                if (r < 0) {
                        path_error(ss, reply, r);
                        return;
                }
        } else if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != ss->who.uid) {
                /* Only a file of the session's user: one TMPFILE made for it. */
                lander_error_reply(reply, EBADF, 0, NULL, "not a file of %s's", ss->user);
                return;
        }
        if (!lander_as(l, ss, reply))
                return;
        reply->type = LANDMSG_OK;
        if (a->flags & LANDMSG_SET_AT_PATH) {
                /* A directory, walked to as the user; set through its
                 * O_PATH descriptor's /proc name (fchmod cannot take one). */
                dfd = op_dir(l, ss, a->flags, a->path, false, 0, path, &hold, reply);
                if (dfd >= 0) {
                        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dfd);
                        r = setattr_as_user(proc, -1, a, &what);
                        if (r < 0)
                                lander_error_reply(reply, r, 0, path, "setting %s: %s", what, strerror(-r));
                }
        } else {
                r = setattr_as_user(NULL, fd, a, &what);
                if (r < 0)
                        lander_error_reply(reply, r, 0, NULL, "setting %s: %s", what, strerror(-r));
        }
}

void lander_handle_batch(struct lander *l, unsigned int conn, const struct landmsg *req, int *fds, size_t nfds,
                         struct landmsg *reply, int *reply_fds, size_t *nreply)
{
        const struct landmsg_batch *b = &req->batch;
        struct lander_session *ss;
        size_t off = 0, k = 0;

        memset(reply, 0, sizeof(*reply));
        reply->id = req->id;
        *nreply = 0;
        l->kept = 0;
        ss = req->type == LANDMSG_BATCH ? lander_session_find(l, conn, b->session) : NULL;
        if (req->type != LANDMSG_BATCH)
                lander_error_reply(reply, EPROTO, 0, NULL, "not a batch");
        else if (!ss)
                lander_error_reply(reply, ESRCH, 0, NULL, "no session %llu", (unsigned long long)b->session);
        else if (nfds != b->links)
                lander_error_reply(reply, EBADF, 0, NULL, "a batch of %u LINKs came with %zu descriptors",
                            (unsigned int)b->links, nfds);
        if (reply->type == LANDMSG_ERROR)
                goto out_close;
        /* Each as if asked alone, in order, until the first refused. */
        while (landmsg_batch_next(b, &off, &l->sub.type, &l->sub.op) == 1) {
                int fd = l->sub.type == LANDMSG_LINK ? fds[k++] : -1, rfd = -1;

                l->sub.id = req->id;
                /* Not cleared whole (16 KiB an op): lander_op sets the type,
                 * and an ERROR's fields (lander_error_reply). */
                l->sub_reply.type = 0;
                lander_op(l, ss, &l->sub, fd, &l->sub_reply, &rfd);
                if (l->sub_reply.type == LANDMSG_FD)
                        reply_fds[(*nreply)++] = rfd;
                else
                        safe_close(rfd);
                if (l->sub_reply.type == LANDMSG_ERROR) {
                        *reply = l->sub_reply;
                        reply->id = req->id;
                        while (*nreply > 0)
                                safe_close(reply_fds[--*nreply]);
                        goto out_close;
                }
        }
        reply->type = LANDMSG_FDS;
        reply->fds.count = (uint16_t)*nreply;
        reply->fds.kept = (uint16_t)l->kept;
out_close:
        for (size_t i = 0; i < nfds; i++)
                safe_close(fds[i]);
}

void lander_handle(struct lander *l, unsigned int conn, const struct landmsg *req, int fd, struct landmsg *reply,
                   int *reply_fd)
{
        _cleanup_(closep) int passed = fd;
        struct lander_session *ss;

        memset(reply, 0, sizeof(*reply));
        reply->id = req->id;
        *reply_fd = -1;
        switch (landmsg_is_op(req->type) ? 0 : req->type) {
        case LANDMSG_SESSION:
                lander_session_open(l, conn, &req->session, reply);
                return;
        case LANDMSG_SETATTR:
                ss = lander_session_find(l, conn, req->setattr.session);
                if (!ss) {
                        lander_error_reply(reply, ESRCH, 0, NULL, "no session %llu", (unsigned long long)req->setattr.session);
                        return;
                }
                if (ss->flags & LANDMSG_SESSION_DRY) {
                        lander_error_reply(reply, EPERM, 0, NULL, "a dry run makes nothing (xferctl send --dry-run)");
                        return;
                }
                lander_setattr(l, ss, &req->setattr, passed, reply);
                return;
        case 0:         /* an op (landmsg_is_op) */
                ss = lander_session_find(l, conn, req->op.session);
                if (!ss) {
                        lander_error_reply(reply, ESRCH, 0, NULL, "no session %llu", (unsigned long long)req->op.session);
                        return;
                }
                if (req->type == LANDMSG_END) {
                        lander_session_end(l, ss);
                        reply->type = LANDMSG_OK;
                        return;
                }
                if (req->type == LANDMSG_MEM) {
                        lander_mem(ss, passed, reply);
                        return;
                }
                lander_op(l, ss, req, passed, reply, reply_fd);
                return;
        default:
                lander_error_reply(reply, EPROTO, 0, NULL, "not a request");
        }
}
