#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "filter.h"
#include "incoming.h"
#include "macro.h"
#include "name.h"

#define INCOMING_PART_PREFIX    INCOMING_RESERVED_PREFIX
#define INCOMING_PART_SUFFIX    ".part"

enum incoming_verdict incoming_space_verdict(uint64_t avail, uint64_t size, uint64_t min_free)
{
        if (size > avail || avail - size < min_free)
                return INCOMING_NO_SPACE;
        return INCOMING_OK;
}

enum incoming_verdict incoming_reserve_verdict(int r)
{
        if (r >= 0 || r == -EOPNOTSUPP)
                return INCOMING_OK;
        if (r == -ENOSPC || r == -EDQUOT || r == -EFBIG)
                return INCOMING_NO_SPACE;
        return INCOMING_IO;
}

void incoming_part_name(char buf[static INCOMING_PART_MAX], uint64_t tag)
{
        snprintf(buf, INCOMING_PART_MAX, INCOMING_PART_PREFIX "%" PRIu64 INCOMING_PART_SUFFIX, tag);
}

bool incoming_is_part(const char *name)
{
        size_t pre = strlen(INCOMING_PART_PREFIX), suf = strlen(INCOMING_PART_SUFFIX);
        size_t n = strlen(name), digits;

        if (n <= pre + suf || strncmp(name, INCOMING_PART_PREFIX, pre) != 0 ||
            strcmp(name + n - suf, INCOMING_PART_SUFFIX) != 0)
                return false;
        digits = n - pre - suf;
        /* A uint64_t has at most 20 digits. */
        return digits <= 20 && strspn(name + pre, "0123456789") == digits;
}

/*
 * Remove every entry directly beneath @dirfd that @match() names, with
 * @remove(); @removed() hears of each. The number removed, or -errno.
 */
static int incoming_sweep(int dirfd, bool (*match)(const char *name),
                          int (*remove)(int dirfd, const char *name),
                          void (*removed)(const char *name, int r))
{
        struct dirent *de;
        DIR *d;
        int fd, n = 0;

        /* fdopendir takes the fd it is given: a duplicate, from the start. */
        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                int r = -errno;

                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                int r;

                if (!match(de->d_name))
                        continue;
                r = remove(dirfd, de->d_name);
                n += r == 0;
                if (removed)
                        removed(de->d_name, r);
        }
        closedir(d);
        if (n > 0 && fsync(dirfd) < 0)
                return -errno;
        return n;
}

static int incoming_unlink(int dirfd, const char *name)
{
        return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
}

int incoming_clean_parts(int dirfd, void (*removed)(const char *name, int r))
{
        return incoming_sweep(dirfd, incoming_is_part, incoming_unlink, removed);
}

/* Set once openat2 answered ENOSYS or EPERM; any thread may read it. */
static atomic_bool incoming_no_openat2;

int incoming_openat2(int dirfd, const char *path, const struct open_how *how)
{
        long fd;

        if (atomic_load_explicit(&incoming_no_openat2, memory_order_relaxed))
                return -ENOSYS;
        fd = syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
        if (fd >= 0)
                return (int)fd;
        if (errno == ENOSYS || errno == EPERM) {
                atomic_store_explicit(&incoming_no_openat2, true, memory_order_relaxed);
                return -ENOSYS;
        }
        return -errno;
}

/* One component beneath @dirfd, never through a symlink or a mount. */
static int incoming_open_step(int dirfd, const char *name)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                           RESOLVE_NO_XDEV,
        };
        int fd = incoming_openat2(dirfd, name, &how);

        /* Without openat2 (an older kernel, or a seccomp filter that does not
         * know it): @name is one component name_path_check() passed, so
         * O_NOFOLLOW | O_DIRECTORY is the same walk, mounts aside. */
        if (fd == -ENOSYS) {
                fd = openat(dirfd, name, (int)how.flags);
                if (fd < 0)
                        return -errno;
        }
        return fd;
}

int incoming_open_beneath(int dirfd, const char *path, bool create)
{
        char comp[256];
        size_t len = path ? strlen(path) : 0, start = 0;
        int fd = -1, r;

        if (name_path_check(path, len, NULL) != NAME_OK)
                return -EINVAL;
        while (start < len) {
                const char *slash = memchr(path + start, '/', len - start);
                size_t end = slash ? (size_t)(slash - path) : len;
                int at = fd >= 0 ? fd : dirfd, next;

                /* name_path_check() capped each component at 255 bytes. */
                memcpy(comp, path + start, end - start);
                comp[end - start] = '\0';
                next = incoming_open_step(at, comp);
                if (next == -ENOENT && create) {
                        if (mkdirat(at, comp, 0755) < 0 && errno != EEXIST) {
                                r = -errno;
                                safe_close(fd);
                                return r;
                        }
                        next = incoming_open_step(at, comp);
                }
                /* O_DIRECTORY | O_NOFOLLOW on a symlink says "not a directory":
                 * name it for what it is. */
                if (next == -ENOTDIR) {
                        struct stat st;

                        if (fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                                next = -ELOOP;
                }
                safe_close(fd);
                if (next < 0)
                        return next;
                fd = next;
                start = end + 1;
        }
        return fd;
}

#define INCOMING_STAGE_PREFIX   INCOMING_RESERVED_PREFIX "stage-"
#define INCOMING_TREE_DEPTH_MAX 256

void incoming_stage_name(char buf[static INCOMING_STAGE_MAX], uint64_t id)
{
        snprintf(buf, INCOMING_STAGE_MAX, INCOMING_STAGE_PREFIX "%" PRIu64, id);
}

bool incoming_is_stage(const char *name)
{
        size_t n = strlen(INCOMING_STAGE_PREFIX);

        if (strncmp(name, INCOMING_STAGE_PREFIX, n) != 0 || !name[n])
                return false;
        for (const char *p = name + n; *p; p++)
                if (*p < '0' || *p > '9')
                        return false;
        return true;
}

int incoming_stage_make(int dirfd, const char *name)
{
        int fd;

        if (mkdirat(dirfd, name, 0700) < 0)
                return -errno;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int incoming_remove_at(int atfd, const char *name, unsigned int depth, uid_t owner)
{
        struct dirent *de;
        struct stat st;
        DIR *d;
        int fd, r = 0;

        if (fstatat(atfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(atfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (depth >= INCOMING_TREE_DEPTH_MAX)
                return -ELOOP;
        /* A directory of ours without read, write or search permission
         * for us (a tree's, as it was sent) is ours to empty; if we cannot
         * give ourselves those, its chmod's error is the one that says why. */
        if ((st.st_mode & 0700) != 0700 && st.st_uid == owner &&
            fchmodat(atfd, name, (st.st_mode | 0700) & 07777, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        fd = openat(atfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                int q;

                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                q = incoming_remove_at(dirfd(d), de->d_name, depth + 1, owner);
                if (q < 0 && r == 0)
                        r = q;
        }
        closedir(d);
        if (unlinkat(atfd, name, AT_REMOVEDIR) < 0 && r == 0 && errno != ENOENT)
                r = -errno;
        return r;
}

void incoming_dircache_init(struct incoming_dircache *c, int root)
{
        c->root = root;
        c->fd = -1;
        c->path[0] = '\0';
}

int incoming_dircache_open(struct incoming_dircache *c, const char *path)
{
        int fd;

        if (c->fd >= 0 && strcmp(c->path, path) == 0)
                return c->fd;
        fd = incoming_open_beneath(c->root, path, false);
        if (fd < 0)
                return fd;
        if (strlen(path) >= sizeof(c->path)) {
                close(fd);
                return -ENAMETOOLONG;
        }
        safe_close(c->fd);
        c->fd = fd;
        strcpy(c->path, path);
        return fd;
}

void incoming_dircache_done(struct incoming_dircache *c)
{
        c->fd = safe_close(c->fd);
        c->path[0] = '\0';
}

int incoming_stat_beneath(int dirfd, const char *path, struct stat *st)
{
        const char *slash = strrchr(path, '/');
        char parent[NAME_PATH_MAX + 1];
        int pfd = dirfd, r = 0;

        if (slash) {
                snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
                pfd = incoming_open_beneath(dirfd, parent, false);
                if (pfd < 0)
                        return pfd;
        }
        if (fstatat(pfd, slash ? slash + 1 : path, st, AT_SYMLINK_NOFOLLOW) < 0)
                r = -errno;
        if (pfd != dirfd)
                close(pfd);
        return r;
}

int incoming_remove_tree(int dirfd, const char *name)
{
        return incoming_remove_at(dirfd, name, 0, geteuid());
}

int incoming_remove_tree_of(int dirfd, const char *name, uid_t owner)
{
        return incoming_remove_at(dirfd, name, 0, owner);
}

/* DEST's parent directory beneath @dirfd, made as needed (@dirfd itself
 * for a DEST of one component), and DEST's last component in *@last. */
static int incoming_dest_parent(int dirfd, const char *path, const char **last)
{
        const char *slash = strrchr(path, '/');
        char parent[NAME_PATH_MAX + 1];

        if (name_path_check(path, strlen(path), NULL) != NAME_OK)
                return -EINVAL;
        *last = slash ? slash + 1 : path;
        if (!slash)
                return dirfd;
        snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
        return incoming_open_beneath(dirfd, parent, true);
}

/*
 * renameat2(RENAME_EXCHANGE) of the staged @leaf and DEST @last beneath
 * @pfd: moving the old DEST, a directory, to another parent changes its
 * "..", which needs write permission on it; one of ours without (a tree
 * sent read-only) gets u+w for the move, and back on failure (it goes
 * once swapped out). 0 or -errno.
 */
static int incoming_exchange(int stagefd, const char *leaf, int pfd, const char *last)
{
        struct stat st;
        bool made_writable = false;
        int r;

        if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) && !(st.st_mode & S_IWUSR) &&
            st.st_uid == geteuid())
                made_writable = fchmodat(pfd, last, (st.st_mode | S_IWUSR) & 07777, AT_SYMLINK_NOFOLLOW) == 0;
        r = renameat2(stagefd, leaf, pfd, last, RENAME_EXCHANGE) < 0 ? -errno : 0;
        if (r < 0 && made_writable && fchmodat(pfd, last, st.st_mode & 07777, AT_SYMLINK_NOFOLLOW) < 0) {
                /* DEST keeps u+w: the rename's error stays the one to report
                 * (it is why nothing was published), and a retry's exchange
                 * needs the bit anyway. */
        }
        return r;
}

int incoming_stage_publish(int dirfd, int stagefd, const char *leaf, const char *path, bool overwrite)
{
        const char *last;
        int pfd, r = 0;

        pfd = incoming_dest_parent(dirfd, path, &last);
        if (pfd < 0)
                return pfd;
        if (renameat2(stagefd, leaf, pfd, last, RENAME_NOREPLACE) < 0) {
                r = -errno;
                if (r == -EEXIST && overwrite) {
                        /* The old DEST comes back to the staging directory, and goes. */
                        r = incoming_exchange(stagefd, leaf, pfd, last);
                        if (r == 0)
                                (void)incoming_remove_tree(stagefd, leaf);
                }
        }
        if (r == 0 && fsync(pfd) < 0)
                r = -errno;
        if (pfd != dirfd)
                close(pfd);
        return r;
}

int incoming_clean_stages(int dirfd, void (*removed)(const char *name, int r))
{
        return incoming_sweep(dirfd, incoming_is_stage, incoming_remove_tree, removed);
}

/* A directory entry beneath @atfd, opened without following a symlink. */
static int incoming_open_dir_at(int atfd, const char *name)
{
        int fd = openat(atfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        return fd < 0 ? -errno : fd;
}

/* A directory's entries, one by one, from a duplicate of @fd (fdopendir
 * takes the fd it is given). NULL with errno set. */
static DIR *incoming_opendir(int fd)
{
        int dup = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;

        if (dup < 0)
                return NULL;
        d = fdopendir(dup);
        if (!d) {
                int e = errno;

                close(dup);
                errno = e;
        }
        return d;
}

static bool incoming_dot(const char *name)
{
        return !strcmp(name, ".") || !strcmp(name, "..");
}

/*
 * Into directory @name of both walks (the link step's, the protect
 * step's): made in @newfd where the staged tree lacks it (!@have_new:
 * 0700, to be filled; its old mode and mtime the caller's to set), or
 * given u+rwx where the staged one (@ns) lacks them (*@unlocked: its mode
 * the caller's to put back); then both opened into *@o and *@n. 0; 1
 * where the old one was replaced meanwhile (nothing open, the mode put
 * back); or -errno.
 */
static int incoming_pair_enter(int oldfd, int newfd, const char *name, bool have_new, const struct stat *ns,
                               bool *unlocked, int *o, int *n)
{
        *unlocked = false;
        if (!have_new && mkdirat(newfd, name, 0700) < 0)
                return -errno;
        /* A sent directory whose mode is set already (a landing's:
         * rdmaxfer-lander merges last) and lacks u+rwx: given them to be
         * filled, its mode back after. */
        *unlocked = have_new && (ns->st_mode & 0700) != 0700;
        if (*unlocked && fchmodat(newfd, name, (ns->st_mode & 07777) | 0700, 0) < 0)
                return -errno;
        *o = incoming_open_dir_at(oldfd, name);
        *n = *o >= 0 ? incoming_open_dir_at(newfd, name) : -EBADF;
        if (*o >= 0 && *n >= 0)
                return 0;
        if (*unlocked)
                (void)fchmodat(newfd, name, ns->st_mode & 07777, 0);
        if (*o >= 0) {
                *o = safe_close(*o);
                return *n;
        }
        return *o == -ENOENT || *o == -ENOTDIR || *o == -ELOOP ? 1 : *o;
}

/* The link step's walk: @old's entries missing in @new linked into it;
 * @strict (a --delete's protected entries, which no move step takes
 * over): one that may not be linked fails it. */
static int incoming_merge_link_at(int oldfd, int newfd, unsigned int depth, bool strict)
{
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (depth >= INCOMING_MERGE_DEPTH)
                return -ELOOP;
        d = incoming_opendir(oldfd);
        if (!d)
                return -errno;
        while (r == 0 && (de = readdir(d))) {
                struct stat os, ns;
                bool have_new, unlocked;
                int o, n;

                if (incoming_dot(de->d_name))
                        continue;
                if (fstatat(oldfd, de->d_name, &os, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)    /* gone meanwhile: nothing to keep */
                                r = -errno;
                        continue;
                }
                have_new = fstatat(newfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) == 0;
                if (!have_new && errno != ENOENT) {
                        r = -errno;
                        break;
                }
                if (!S_ISDIR(os.st_mode)) {
                        /* Without AT_SYMLINK_FOLLOW: a symlink is linked as
                         * itself. One we may not link (EPERM: another
                         * user's file we may not write, under
                         * fs.protected_hardlinks; an immutable one; a file
                         * system without hard links) is left where it is:
                         * the move step takes it over after the exchange. */
                        if (!have_new && linkat(oldfd, de->d_name, newfd, de->d_name, 0) < 0 &&
                            errno != ENOENT && (errno != EPERM || strict))
                                r = -errno;
                        continue;
                }
                if (have_new && !S_ISDIR(ns.st_mode))
                        continue;       /* a sent entry took the name */
                /* Made ours to fill (its old mode and mtime once filled),
                 * or a sent one unlocked; replaced meanwhile: the move
                 * step sees it. */
                r = incoming_pair_enter(oldfd, newfd, de->d_name, have_new, &ns, &unlocked, &o, &n);
                if (r == 1) {
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                r = incoming_merge_link_at(o, n, depth + 1, strict);
                /* A sent directory as it was: its mtime (what was linked
                 * in changed it), its mode. */
                if (have_new && (futimens(n, (struct timespec[2]){ ns.st_atim, ns.st_mtim }) < 0 ||
                                 (unlocked && fchmod(n, ns.st_mode & 07777) < 0)) && r == 0)
                        r = -errno;
                if (r == 0 && !have_new &&
                    (fchmod(n, os.st_mode & 07777) < 0 || futimens(n, (struct timespec[2]){ os.st_atim,
                                                                                           os.st_mtim }) < 0))
                        r = -errno;
                close(o);
                close(n);
        }
        closedir(d);
        return r;
}

/* The conflict walk: beneath @oldfd and @newfd, a name that is a
 * directory in one and something else in the other; @path (@len bytes
 * used) the names on the way. */
static int incoming_conflict_at(int oldfd, int newfd, char *path, size_t len, size_t cap, unsigned int depth)
{
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (depth >= INCOMING_MERGE_DEPTH)
                return -ELOOP;
        d = incoming_opendir(newfd);
        if (!d)
                return -errno;
        while (r == 0 && (de = readdir(d))) {
                size_t n = strlen(de->d_name);
                struct stat os, ns;
                int o, nf;

                if (incoming_dot(de->d_name) || fstatat(newfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) < 0 ||
                    fstatat(oldfd, de->d_name, &os, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;       /* only one has it */
                if (len + 1 + n >= cap) {
                        r = -ENAMETOOLONG;
                        break;
                }
                path[len] = '/';
                memcpy(path + len + 1, de->d_name, n + 1);
                if (!S_ISDIR(os.st_mode) != !S_ISDIR(ns.st_mode)) {
                        r = -EEXIST;
                        break;
                }
                if (S_ISDIR(os.st_mode)) {
                        o = incoming_open_dir_at(oldfd, de->d_name);
                        nf = o >= 0 ? incoming_open_dir_at(newfd, de->d_name) : -1;
                        if (o >= 0 && nf >= 0)
                                r = incoming_conflict_at(o, nf, path, len + 1 + n, cap, depth + 1);
                        safe_close(o);
                        safe_close(nf);
                }
                if (r == 0)
                        path[len] = '\0';
        }
        closedir(d);
        return r;
}

/* The old DEST (@path beneath @dirfd) and the staged tree (@leaf in
 * @stagefd), opened without following a symlink into *@oldfd, *@newfd:
 * 1, or 0 where there is no old DEST (any more), or -errno. */
static int incoming_merge_pair(int dirfd, const char *path, int stagefd, const char *leaf, int *oldfd, int *newfd)
{
        *oldfd = incoming_open_beneath(dirfd, path, false);
        if (*oldfd < 0)
                return *oldfd == -ENOENT ? 0 : *oldfd;
        *newfd = incoming_open_dir_at(stagefd, leaf);
        if (*newfd < 0) {
                close(*oldfd);
                return *newfd;
        }
        return 1;
}

int incoming_merge_conflict(int dirfd, const char *path, int stagefd, const char *leaf, char *where,
                            size_t wherelen)
{
        int oldfd, newfd, r;

        if (wherelen == 0)
                return -EINVAL;
        where[0] = '\0';
        r = incoming_merge_pair(dirfd, path, stagefd, leaf, &oldfd, &newfd);
        if (r <= 0)
                return r;
        r = incoming_conflict_at(oldfd, newfd, where, 0, wherelen, 0);
        close(oldfd);
        close(newfd);
        return r;
}

int incoming_merge_link(int dirfd, const char *path, int stagefd, const char *leaf)
{
        int oldfd, newfd, r;

        r = incoming_merge_pair(dirfd, path, stagefd, leaf, &oldfd, &newfd);
        if (r <= 0)
                return r;
        r = incoming_merge_link_at(oldfd, newfd, 0, false);
        close(oldfd);
        close(newfd);
        return r;
}

/* A directory @name of @newfd, filled: its mode and times as @st's.
 * 0 or -errno. */
static int incoming_dir_as(int newfd, const char *name, const struct stat *st)
{
        if (fchmodat(newfd, name, st->st_mode & 07777, 0) < 0 ||
            utimensat(newfd, name, (struct timespec[2]){ st->st_atim, st->st_mtim }, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        return 0;
}

/*
 * The protect step's walk (incoming_merge_protect): beneath @oldfd, at
 * @rel (@len bytes of @cap), what @rules exclude and @newfd lacks linked
 * into @newfd, a directory whole; a directory neither has nor excludes
 * walked, made only where it holds such an entry. How many entries it
 * linked or made (>= 0), or -errno.
 */
static int64_t incoming_protect_at(int oldfd, int newfd, char *rel, size_t len, size_t cap,
                                   const struct filter_list *rules, unsigned int depth)
{
        struct dirent *de;
        int64_t kept = 0, r = 0;
        DIR *d;

        if (depth >= INCOMING_MERGE_DEPTH)
                return -ELOOP;
        d = incoming_opendir(oldfd);
        if (!d)
                return -errno;
        while (r >= 0 && (de = readdir(d))) {
                size_t n = strlen(de->d_name);
                struct stat os, ns;
                bool have_new, dir, unlocked;
                int o, nf;

                if (incoming_dot(de->d_name))
                        continue;
                if (fstatat(oldfd, de->d_name, &os, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno != ENOENT)
                                r = -errno;
                        continue;
                }
                if (len + 1 + n >= cap) {
                        r = -ENAMETOOLONG;
                        break;
                }
                snprintf(rel + len, cap - len, "%s%s", len ? "/" : "", de->d_name);
                have_new = fstatat(newfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) == 0;
                if (!have_new && errno != ENOENT) {
                        r = -errno;
                        break;
                }
                dir = S_ISDIR(os.st_mode);
                /* The sent tree has the name: a directory in both is walked. */
                if (have_new && !(dir && S_ISDIR(ns.st_mode)))
                        continue;
                if (!have_new && !dir && filter_match(rules, rel, false) != FILTER_EXCLUDE)
                        continue;       /* not sent, not protected: deleted */
                if (!have_new && !dir) {
                        /* Without AT_SYMLINK_FOLLOW: a symlink as itself. */
                        if (linkat(oldfd, de->d_name, newfd, de->d_name, 0) < 0) {
                                if (errno != ENOENT)
                                        r = -errno;
                                continue;
                        }
                        kept++;
                        continue;
                }
                r = incoming_pair_enter(oldfd, newfd, de->d_name, have_new, &ns, &unlocked, &o, &nf);
                if (r == 1) {
                        /* Replaced meanwhile: nothing of it to keep. */
                        if (!have_new)
                                (void)unlinkat(newfd, de->d_name, AT_REMOVEDIR);
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                /* Excluded, not sent: kept whole. Else walked for what is. */
                if (!have_new && filter_match(rules, rel, true) == FILTER_EXCLUDE) {
                        int e = incoming_merge_link_at(o, nf, depth + 1, true);

                        r = e < 0 ? e : 1;
                } else
                        r = incoming_protect_at(o, nf, rel, len + 1 + n - (len ? 0 : 1), cap, rules, depth + 1);
                if (r >= 0 && have_new)
                        r = futimens(nf, (struct timespec[2]){ ns.st_atim, ns.st_mtim }) < 0 ||
                            (unlocked && fchmod(nf, ns.st_mode & 07777) < 0) ? -errno : r;
                close(o);
                close(nf);
                if (r > 0 && !have_new)
                        r = incoming_dir_as(newfd, de->d_name, &os) < 0 ? -errno : r + 1;
                else if (r == 0 && !have_new && unlinkat(newfd, de->d_name, AT_REMOVEDIR) < 0)
                        r = -errno;
                if (r > 0)
                        kept += r;
        }
        rel[len] = '\0';
        closedir(d);
        return r < 0 ? r : kept;
}

int incoming_merge_protect(int dirfd, const char *path, int stagefd, const char *leaf,
                           const struct filter_list *rules)
{
        char rel[INCOMING_GONE_PATH_MAX] = "";
        int oldfd, newfd, r;
        int64_t n;

        r = incoming_merge_pair(dirfd, path, stagefd, leaf, &oldfd, &newfd);
        if (r <= 0)
                return r;
        n = incoming_protect_at(oldfd, newfd, rel, 0, sizeof(rel), rules, 0);
        close(oldfd);
        close(newfd);
        return n < 0 ? (int)n : 0;
}

/* The move step's walk: what @old has and @new lacks goes over. Best
 * effort: an entry that cannot move stays in the old tree, and goes with it. */
static void incoming_merge_move_at(int oldfd, int newfd, unsigned int depth)
{
        struct dirent *de;
        DIR *d;

        if (depth >= INCOMING_MERGE_DEPTH || !(d = incoming_opendir(oldfd)))
                return;
        while ((de = readdir(d))) {
                struct stat os, ns;
                int o, n;

                if (incoming_dot(de->d_name) || fstatat(oldfd, de->d_name, &os, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (fstatat(newfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                (void)renameat2(oldfd, de->d_name, newfd, de->d_name, RENAME_NOREPLACE);
                        continue;
                }
                /* Hard links of the same file (the link step's): nothing to do. */
                if (!S_ISDIR(os.st_mode) || !S_ISDIR(ns.st_mode))
                        continue;
                o = incoming_open_dir_at(oldfd, de->d_name);
                if (o < 0)
                        continue;
                n = incoming_open_dir_at(newfd, de->d_name);
                if (n >= 0) {
                        incoming_merge_move_at(o, n, depth + 1);
                        close(n);
                }
                close(o);
        }
        closedir(d);
}

/* Entries beneath directory @fd, all levels, counted into *@n. */
static void incoming_count_in(int fd, unsigned int depth, uint64_t *n)
{
        struct dirent *de;
        DIR *d;

        if (depth >= INCOMING_TREE_DEPTH_MAX || !(d = incoming_opendir(fd)))
                return;
        while ((de = readdir(d))) {
                int sub;

                if (incoming_dot(de->d_name))
                        continue;
                (*n)++;
                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
                        continue;
                sub = incoming_open_dir_at(dirfd(d), de->d_name);
                if (sub >= 0) {
                        incoming_count_in(sub, depth + 1, n);
                        close(sub);
                }
        }
        closedir(d);
}

/* Deleting: what @old has and @new lacks, counted into *@n (a directory
 * with what it holds); directories in both are recursed into. */
static void incoming_count_gone(int oldfd, int newfd, unsigned int depth, uint64_t *n)
{
        struct dirent *de;
        DIR *d;

        if (depth >= INCOMING_TREE_DEPTH_MAX || !(d = incoming_opendir(oldfd)))
                return;
        while ((de = readdir(d))) {
                struct stat os, ns;
                int o, nfd;

                if (incoming_dot(de->d_name) || fstatat(oldfd, de->d_name, &os, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (fstatat(newfd, de->d_name, &ns, AT_SYMLINK_NOFOLLOW) < 0) {
                        (*n)++;
                        if (S_ISDIR(os.st_mode) && (o = incoming_open_dir_at(oldfd, de->d_name)) >= 0) {
                                incoming_count_in(o, depth + 1, n);
                                close(o);
                        }
                        continue;
                }
                if (!S_ISDIR(os.st_mode) || !S_ISDIR(ns.st_mode))
                        continue;
                o = incoming_open_dir_at(oldfd, de->d_name);
                if (o < 0)
                        continue;
                nfd = incoming_open_dir_at(newfd, de->d_name);
                if (nfd >= 0) {
                        incoming_count_gone(o, nfd, depth + 1, n);
                        close(nfd);
                }
                close(o);
        }
        closedir(d);
}

/* Everything beneath directory @fd (at @path, @len bytes of @buf) that
 * @ops->kept does not keep (a --delete's protected entries), then @path
 * itself unless something beneath it was kept, to @gone: what a
 * directory holds before it (a dry run's). Whether @path went. */
static bool incoming_gone_all(int fd, char *buf, size_t len, mode_t mode, unsigned int depth,
                              const struct incoming_gone_ops *ops, void *arg)
{
        struct dirent *de;
        bool all = true;
        DIR *d;

        if (S_ISDIR(mode) && fd >= 0 && depth < INCOMING_TREE_DEPTH_MAX && (d = incoming_opendir(fd))) {
                while ((de = readdir(d))) {
                        size_t n = strlen(de->d_name);
                        struct stat st;
                        int sub = -1;

                        if (incoming_dot(de->d_name) || len + 1 + n >= INCOMING_GONE_PATH_MAX ||
                            fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        buf[len] = '/';
                        memcpy(buf + len + 1, de->d_name, n + 1);
                        if (ops->kept(arg, buf, st.st_mode) != INCOMING_GONE) {
                                all = false;
                                continue;
                        }
                        if (S_ISDIR(st.st_mode))
                                sub = incoming_open_dir_at(dirfd(d), de->d_name);
                        if (!incoming_gone_all(sub, buf, len + 1 + n, st.st_mode, depth + 1, ops, arg))
                                all = false;
                        safe_close(sub);
                }
                closedir(d);
        }
        buf[len] = '\0';
        if (all)
                ops->gone(arg, buf, mode);
        return all;
}

static void incoming_gone_at(int fd, char *buf, size_t len, unsigned int depth, const struct incoming_gone_ops *ops,
                             void *arg)
{
        struct dirent *de;
        DIR *d;

        if (depth >= INCOMING_TREE_DEPTH_MAX || !(d = incoming_opendir(fd)))
                return;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);
                struct stat st;
                int kept, sub = -1;

                if (incoming_dot(de->d_name) || len + 1 + n >= INCOMING_GONE_PATH_MAX ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                buf[len] = '/';
                memcpy(buf + len + 1, de->d_name, n + 1);
                kept = ops->kept(arg, buf, st.st_mode);
                if (S_ISDIR(st.st_mode) && kept != INCOMING_KEPT)
                        sub = incoming_open_dir_at(dirfd(d), de->d_name);
                if (kept == INCOMING_GONE)
                        (void)incoming_gone_all(sub, buf, len + 1 + n, st.st_mode, depth + 1, ops, arg);
                else if (kept == INCOMING_KEPT_DIR && sub >= 0)
                        incoming_gone_at(sub, buf, len + 1 + n, depth + 1, ops, arg);
                safe_close(sub);
                buf[len] = '\0';
        }
        closedir(d);
}

int incoming_dry_gone(int dirfd, const char *path, const struct incoming_gone_ops *ops, void *arg)
{
        char buf[INCOMING_GONE_PATH_MAX];
        size_t len = strlen(path);
        int fd;

        if (len >= sizeof(buf))
                return -ENAMETOOLONG;
        fd = incoming_open_beneath(dirfd, path, false);
        if (fd < 0)
                return fd;
        memcpy(buf, path, len + 1);
        incoming_gone_at(fd, buf, len, 0, ops, arg);
        close(fd);
        return 0;
}

int incoming_keep_link(int oldfd, const char *leaf, int newfd, const char *newleaf, bool replace)
{
        struct stat os, ns;

        if (fstatat(oldfd, leaf, &os, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISDIR(os.st_mode))
                return -EISDIR;
        if (S_ISLNK(os.st_mode))
                return -ELOOP;
        /* Without AT_SYMLINK_FOLLOW: what the name holds, never followed. */
        if (linkat(oldfd, leaf, newfd, newleaf, 0) < 0) {
                if (errno != EEXIST)
                        return -errno;
                if (fstatat(newfd, newleaf, &ns, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (ns.st_dev == os.st_dev && ns.st_ino == os.st_ino)
                        return 0;
                if (!replace || S_ISDIR(ns.st_mode))
                        return -EEXIST;
                if (unlinkat(newfd, newleaf, 0) < 0 || linkat(oldfd, leaf, newfd, newleaf, 0) < 0)
                        return -errno;
        }
        /* The name may have been given to another entry (a symlink, say)
         * between the look above and the link: only that entry is kept. */
        if (fstatat(newfd, newleaf, &ns, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (ns.st_dev != os.st_dev || ns.st_ino != os.st_ino) {
                (void)unlinkat(newfd, newleaf, 0);
                return -ESTALE;
        }
        return 0;
}

int incoming_merge_publish(int dirfd, int stagefd, const char *leaf, const char *path, uint64_t *deleted)
{
        return incoming_merge_publish_of(dirfd, stagefd, leaf, path, deleted, geteuid());
}

int incoming_merge_publish_of(int dirfd, int stagefd, const char *leaf, const char *path, uint64_t *deleted,
                              uid_t owner)
{
        const char *last;
        int pfd, oldfd, newfd, r = 0;

        pfd = incoming_dest_parent(dirfd, path, &last);
        if (pfd < 0)
                return pfd;
        r = incoming_exchange(stagefd, leaf, pfd, last);
        if (r < 0) {
                /* DEST went away since the link step: the new tree is all there is. */
                if (r == -ENOENT)
                        r = renameat2(stagefd, leaf, pfd, last, RENAME_NOREPLACE) < 0 ? -errno : 0;
                if (r == 0 && fsync(pfd) < 0)
                        r = -errno;
                goto out_close_parent;
        }
        /* The old tree is in the staging directory now, under @leaf. */
        oldfd = incoming_open_dir_at(stagefd, leaf);
        newfd = incoming_open_dir_at(pfd, last);
        if (oldfd >= 0 && newfd >= 0 && !deleted)
                incoming_merge_move_at(oldfd, newfd, 0);
        /* Deleting: the rest of the old tree is what goes. */
        if (oldfd >= 0 && newfd >= 0 && deleted)
                incoming_count_gone(oldfd, newfd, 0, deleted);
        safe_close(oldfd);
        safe_close(newfd);
        if (fsync(pfd) < 0)
                r = -errno;
        (void)incoming_remove_tree_of(stagefd, leaf, owner);
out_close_parent:
        if (pfd != dirfd)
                close(pfd);
        return r;
}
