#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

struct walk {
        const struct walk_ops *ops;
        void *userdata;
        char path[2 * PATH_MAX];        /* the root as given, then what is below it */
        size_t root_len;        /* of the root's name, where path goes on beneath it */
};

const char *walk_type_str(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFDIR:  return "a directory";
        case S_IFREG:  return "a regular file";
        case S_IFLNK:  return "a symlink";
        case S_IFCHR:  return "a character device";
        case S_IFBLK:  return "a block device";
        case S_IFIFO:  return "a FIFO";
        case S_IFSOCK: return "a socket";
        default:       return "of an unknown type";
        }
}

static int walk_skip(struct walk *w, mode_t mode, int err)
{
        return w->ops->skip ? w->ops->skip(w->userdata, w->path, mode, err) : 0;
}

/* Append @name to w->path; the old length to restore, or -ENAMETOOLONG. */
static int walk_push(struct walk *w, const char *name, unsigned int depth)
{
        size_t len = strlen(w->path);
        int n;

        n = snprintf(w->path + len, sizeof(w->path) - len, "%s%s", depth > 0 ? "/" : "", name);
        if (n < 0 || (size_t)n >= sizeof(w->path) - len) {
                w->path[len] = '\0';
                return -ENAMETOOLONG;
        }
        return (int)len;
}

/* Whether the entry at w->path, beneath the root, is excluded by the rules. */
static bool walk_excluded(const struct walk *w, unsigned int depth, bool is_dir)
{
        const char *rel = w->path + w->root_len;

        if (depth == 0 || !w->ops->filters)
                return false;
        rel += strspn(rel, "/");
        return filter_match(w->ops->filters, rel, is_dir) == FILTER_EXCLUDE;
}

static int walk_at(struct walk *w, int dirfd, const char *name, unsigned char type, unsigned int depth);

static int walk_dir(struct walk *w, int fd_in, const char *name, unsigned int depth,
                    const struct stat *st)
{
        struct walk_entry e = { .kind = WALK_DIR, .depth = depth, .name = name, .path = w->path,
                                .fd = -1, .attr_fd = fd_in, .st = *st };
        _cleanup_(closep) int fd = fd_in;
        DIR *d;
        int r;

        if (depth >= WALK_DEPTH_MAX)
                return -ELOOP;
        r = w->ops->entry(w->userdata, &e);
        if (r < 0 || r == WALK_SKIP)
                return r < 0 ? r : 0;
        d = fdopendir(fd);
        if (!d)
                return walk_skip(w, S_IFDIR, -errno);
        fd = -1;        /* the stream owns it */
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = errno ? walk_skip(w, S_IFDIR, -errno) : 0;
                        break;
                }
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                r = walk_at(w, dirfd(d), de->d_name, de->d_type, depth + 1);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0)
                return r;
        e.kind = WALK_DIR_END;
        e.attr_fd = -1;
        return w->ops->entry(w->userdata, &e);
}

/* @name beneath @dirfd: whatever it is (@type: readdir's d_type, or
 * DT_UNKNOWN), never following it. */
static int walk_at(struct walk *w, int dirfd, const char *name, unsigned char type, unsigned int depth)
{
        struct walk_entry e = { .depth = depth, .name = name, .path = w->path, .fd = -1, .attr_fd = -1 };
        char target[PATH_MAX];
        int old, fd, r;
        ssize_t n;

        old = walk_push(w, name, depth);
        if (old < 0)
                return old;
        /* A file or a directory by readdir's word: opened without a look
         * first, O_NOFOLLOW (and O_DIRECTORY), and its fstat is what counts. */
        if (type == DT_DIR || (type == DT_REG && !w->ops->no_open)) {
                e.st.st_mode = type == DT_DIR ? S_IFDIR : S_IFREG;
        } else if (fstatat(dirfd, name, &e.st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = -errno;
                /* What it was is unknown: matched as a file would be. */
                r = walk_excluded(w, depth, false) ? 0 : walk_skip(w, 0, r);
                goto out;
        }
        /* Before it is opened: what the user left out is never read. */
        if (walk_excluded(w, depth, S_ISDIR(e.st.st_mode))) {
                r = 0;
                goto out;
        }
        switch (e.st.st_mode & S_IFMT) {
        case S_IFLNK:
                n = readlinkat(dirfd, name, target, sizeof(target) - 1);
                if (n < 0) {
                        r = walk_skip(w, S_IFLNK, -errno);
                        break;
                }
                target[n] = '\0';
                e.kind = WALK_SYMLINK;
                e.target = target;
                r = w->ops->entry(w->userdata, &e);
                break;
        case S_IFDIR:
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        r = walk_skip(w, S_IFDIR, -errno);
                        break;
                }
                /* What was opened is what is listed (it may have changed since the stat). */
                if (fstat(fd, &e.st) < 0) {
                        r = walk_skip(w, S_IFDIR, -errno);
                        safe_close(fd);
                        break;
                }
                r = walk_dir(w, fd, name, depth, &e.st);
                break;
        case S_IFREG:
                if (w->ops->no_open) {
                        /* Counting: whether it could be read is enough. */
                        if (faccessat(dirfd, name, R_OK, AT_EACCESS) < 0) {
                                r = walk_skip(w, S_IFREG, -errno);
                                break;
                        }
                        e.kind = WALK_FILE;
                        r = w->ops->entry(w->userdata, &e);
                        break;
                }
                /* O_NONBLOCK: had it become a FIFO, the open must not hang.
                 * It is the only flag F_SETFL could change that we set. */
                fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0) {
                        r = walk_skip(w, S_IFREG, -errno);
                        break;
                }
                if (fstat(fd, &e.st) < 0 || !S_ISREG(e.st.st_mode) || fcntl(fd, F_SETFL, 0) < 0) {
                        r = walk_skip(w, e.st.st_mode & S_IFMT, S_ISREG(e.st.st_mode) ? -errno : 0);
                        safe_close(fd);
                        break;
                }
                e.kind = WALK_FILE;
                e.fd = e.attr_fd = fd;
                r = w->ops->entry(w->userdata, &e);
                safe_close(e.fd);
                break;
        default:
                /* Devices, FIFOs, sockets: never opened. */
                r = walk_skip(w, e.st.st_mode & S_IFMT, 0);
                break;
        }
out:
        w->path[old] = '\0';
        return r;
}

uint64_t walk_mtime_ns(const struct stat *st)
{
        if (st->st_mtim.tv_sec <= 0 || (uint64_t)st->st_mtim.tv_sec >= UINT64_MAX / 1000000000u)
                return 0;
        return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

int walk_tree(int dirfd, const char *name, const struct walk_ops *ops, void *userdata)
{
        struct walk *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->ops = ops;
        w->userdata = userdata;
        w->root_len = strlen(name);
        r = walk_at(w, dirfd, name, DT_UNKNOWN, 0);
        free(w);
        return r;
}
