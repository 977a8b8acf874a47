#include "landfs.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "incoming.h"
#include "macro.h"

bool landfs_path_check(const char *path)
{
        size_t len, comp = 0;

        if (!path || path[0] != '/')
                return false;
        len = strnlen(path, LANDFS_PATH_MAX);
        if (len >= LANDFS_PATH_MAX || len < 2 || path[len - 1] == '/')
                return false;
        for (size_t i = 1; i <= len; i++) {
                if (i < len && path[i] != '/') {
                        comp++;
                        continue;
                }
                /* The end of a component: path[i - comp .. i). */
                if (comp == 0 || comp > 255)
                        return false;
                if (path[i - comp] == '.' && (comp == 1 || (comp == 2 && path[i - 1] == '.')))
                        return false;
                comp = 0;
        }
        return true;
}

/* Is @a, of @alen bytes, @b or a directory above it? */
static bool path_holds(const char *a, size_t alen, const char *b)
{
        return strncmp(a, b, alen) == 0 && (b[alen] == '\0' || b[alen] == '/');
}

int landfs_roots_add(struct landfs_roots *roots, const char *path)
{
        char proc[64], real[LANDFS_PATH_MAX];
        size_t len;
        ssize_t n;
        int fd;

        if (!landfs_path_check(path))
                return -EINVAL;
        if (roots->n >= LANDFS_ROOTS_MAX)
                return -E2BIG;
        len = strlen(path);
        for (size_t i = 0; i < roots->n; i++)
                if (path_holds(roots->root[i].path, roots->root[i].len, path) ||
                    path_holds(path, len, roots->root[i].path))
                        return -EEXIST;
        fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* The walk treats the root's path as the directory it opened: a
         * symlink above it (/home -> /export/home) would make the two
         * differ, so the admin names the real path. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, real, sizeof(real) - 1);
        if (n < 0 || (size_t)n != len || memcmp(real, path, len) != 0) {
                safe_close(fd);
                return n < 0 ? -errno : -ELOOP;
        }
        roots->root[roots->n].path = strdup(path);
        if (!roots->root[roots->n].path) {
                safe_close(fd);
                return -ENOMEM;
        }
        roots->root[roots->n].len = len;
        roots->root[roots->n].fd = fd;
        roots->n++;
        return 0;
}

void landfs_roots_free(struct landfs_roots *roots)
{
        for (size_t i = 0; i < roots->n; i++) {
                free(roots->root[i].path);
                safe_close(roots->root[i].fd);
        }
        roots->n = 0;
}

const struct landfs_root *landfs_roots_find(const struct landfs_roots *roots, const char *path)
{
        for (size_t i = 0; i < roots->n; i++)
                if (path_holds(roots->root[i].path, roots->root[i].len, path))
                        return &roots->root[i];
        return NULL;
}

int landfs_become(const struct landfs_id *id)
{
        int r;

        if (id->uid == (uid_t)-1 || id->gid == (gid_t)-1 || id->ngroups > LANDFS_GROUPS_MAX)
                return -EINVAL;
        /* Groups and gid first, while the fsuid still carries the
         * capabilities; the fsuid last. setfs[ug]id() say nothing of a
         * failure: asking with -1 reads back what is in force. */
        if (setgroups(id->ngroups, id->groups) < 0)
                return -errno;
        setfsgid(id->gid);
        if ((gid_t)setfsgid((gid_t)-1) != id->gid) {
                r = -EPERM;
                goto out_back;
        }
        setfsuid(id->uid);
        if ((uid_t)setfsuid((uid_t)-1) != id->uid) {
                r = -EPERM;
                goto out_back;
        }
        return 0;

out_back:
        landfs_unbecome();
        return r;
}

int landfs_become_for_good(const struct landfs_id *id)
{
        uid_t ru, eu, su;
        gid_t rg, eg, sg;

        if (id->uid == (uid_t)-1 || id->gid == (gid_t)-1 || id->ngroups > LANDFS_GROUPS_MAX)
                return -EINVAL;
        if (setgroups(id->ngroups, id->groups) < 0 || setresgid(id->gid, id->gid, id->gid) < 0 ||
            setresuid(id->uid, id->uid, id->uid) < 0)
                return -errno;
        /* Read back: nothing of the lander's identity is left. */
        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != id->uid || eu != id->uid ||
            su != id->uid || rg != id->gid || eg != id->gid || sg != id->gid ||
            (uid_t)setfsuid((uid_t)-1) != id->uid || (gid_t)setfsgid((gid_t)-1) != id->gid)
                return -EPERM;
        return 0;
}

int landfs_unbecome(void)
{
        setfsuid(geteuid());
        setfsgid(getegid());
        if ((uid_t)setfsuid((uid_t)-1) != geteuid() || (gid_t)setfsgid((gid_t)-1) != getegid())
                return -EPERM;
        return setgroups(0, NULL) < 0 ? -errno : 0;
}

/*
 * The walk's state. Above every root (the start, or after an absolute
 * symlink or a ".." out of a root) it is lexical: @where grows by names
 * that lead to a root and enters it when it gets there. Inside, @fd[i] is
 * the directory at @where's first @wlen[i] bytes, @fd[0] a root's.
 */
struct walk {
        const struct landfs_roots *roots;
        const struct landfs_id *id;
        size_t depth;
        int *fd;
        size_t *wlen;
        char *where;
        size_t len;
};

#define WALK_DEPTH_MAX  (LANDFS_PATH_MAX / 2)

static void walk_pop_all(struct walk *w)
{
        while (w->depth > 0)
                safe_close(w->fd[--w->depth]);
}

/* @where += "/" + @name (@n bytes). */
static int walk_append(struct walk *w, const char *name, size_t n)
{
        if (w->len + 1 + n >= LANDFS_PATH_MAX)
                return -ENAMETOOLONG;
        w->where[w->len++] = '/';
        memcpy(w->where + w->len, name, n);
        w->len += n;
        w->where[w->len] = '\0';
        return 0;
}

static void walk_up(struct walk *w)
{
        if (w->depth > 0)
                safe_close(w->fd[--w->depth]);
        if (w->depth > 0) {
                w->len = w->wlen[w->depth - 1];
        } else {
                /* Lexically, above the roots: "/" has no parent. */
                while (w->len > 0 && w->where[w->len - 1] != '/')
                        w->len--;
                if (w->len > 0)
                        w->len--;
        }
        w->where[w->len] = '\0';
}

/* A name while above every root: it leads to one, or it is outside. */
static int walk_lexical(struct walk *w, const char *name, size_t n)
{
        int r = walk_append(w, name, n);

        if (r < 0)
                return r;
        for (size_t i = 0; i < w->roots->n; i++) {
                const struct landfs_root *root = &w->roots->root[i];

                if (root->len == w->len && memcmp(root->path, w->where, w->len) == 0) {
                        int fd = fcntl(root->fd, F_DUPFD_CLOEXEC, 3);

                        if (fd < 0)
                                return -errno;
                        w->fd[0] = fd;
                        w->wlen[0] = w->len;
                        w->depth = 1;
                        return LANDFS_OK;
                }
                if (path_holds(w->where, w->len, root->path))
                        return LANDFS_OK;       /* on the way to it */
        }
        return LANDFS_OUTSIDE_ROOTS;
}

/*
 * One name beneath the directory on top. A symlink's target, when one
 * may be followed, is put in @link (LANDFS_PATH_MAX bytes) and 1
 * returned; the caller walks it before what follows.
 */
static int walk_step(struct walk *w, const char *name, size_t n, bool create, mode_t mode, char *link)
{
        char comp[256];
        struct stat st;
        int fd, r;

        memcpy(comp, name, n);
        comp[n] = '\0';
        r = walk_append(w, name, n);
        if (r < 0)
                return r;
        fd = openat(w->fd[w->depth - 1], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create) {
                if (mkdirat(w->fd[w->depth - 1], comp, mode & 01777) < 0 && errno != EEXIST)
                        return -errno;
                fd = openat(w->fd[w->depth - 1], comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        if (S_ISLNK(st.st_mode)) {
                ssize_t len;

                if (st.st_uid != w->id->uid && st.st_uid != 0) {
                        safe_close(fd);
                        return LANDFS_FOREIGN_SYMLINK;
                }
                len = readlinkat(fd, "", link, LANDFS_PATH_MAX);
                r = len < 0 ? -errno : len >= LANDFS_PATH_MAX ? -ENAMETOOLONG : len == 0 ? -ENOENT : 1;
                safe_close(fd);
                if (r == 1) {
                        link[len] = '\0';
                        /* The link's own name goes: its target takes its place. */
                        w->len -= n + 1;
                        w->where[w->len] = '\0';
                }
                return r;
        }
        if (!S_ISDIR(st.st_mode)) {
                safe_close(fd);
                return -ENOTDIR;
        }
        if (w->depth >= WALK_DEPTH_MAX) {
                safe_close(fd);
                return -ENAMETOOLONG;
        }
        w->fd[w->depth] = fd;
        w->wlen[w->depth] = w->len;
        w->depth++;
        return LANDFS_OK;
}

int landfs_open_dir(const struct landfs_roots *roots, const struct landfs_id *id, const char *path,
                    bool create, mode_t mode, int *fd, char *where)
{
        /* What is left to walk: @path, then a symlink's target in front of
         * what followed it. Twice a path: the target and the rest. */
        _cleanup_(freep) char *rest = malloc(2 * LANDFS_PATH_MAX + 2);
        _cleanup_(freep) char *link = malloc(LANDFS_PATH_MAX);
        _cleanup_(freep) int *fds = calloc(WALK_DEPTH_MAX, sizeof(int));
        _cleanup_(freep) size_t *wlen = calloc(WALK_DEPTH_MAX, sizeof(size_t));
        struct walk w = { .roots = roots, .id = id, .where = where };
        unsigned links = 0;
        size_t pos = 0;
        int r = LANDFS_OK;

        *fd = -1;
        where[0] = '\0';
        if (!rest || !link || !fds || !wlen)
                return -ENOMEM;
        if (!landfs_path_check(path))
                return -EINVAL;
        w.fd = fds;
        w.wlen = wlen;
        strcpy(rest, path);
        while (rest[pos]) {
                const char *name;
                size_t n;

                if (rest[pos] == '/') {
                        pos++;
                        continue;
                }
                name = rest + pos;
                n = strcspn(name, "/");
                pos += n;
                if (n == 1 && name[0] == '.')
                        continue;
                if (n == 2 && name[0] == '.' && name[1] == '.') {
                        walk_up(&w);
                        continue;
                }
                if (n > 255) {
                        r = -ENAMETOOLONG;
                        break;
                }
                if (w.depth == 0) {
                        r = walk_lexical(&w, name, n);
                        if (r != LANDFS_OK)
                                break;
                        continue;
                }
                r = walk_step(&w, name, n, create, mode, link);
                if (r < 0 || r == LANDFS_FOREIGN_SYMLINK)
                        break;
                if (r == 1) {
                        size_t tlen = strlen(link), left = strlen(rest + pos);

                        if (++links > LANDFS_LINKS_MAX) {
                                r = -ELOOP;
                                break;
                        }
                        if (tlen + 1 + left + 1 > 2 * LANDFS_PATH_MAX + 2) {
                                r = -ENAMETOOLONG;
                                break;
                        }
                        /* The target, then what followed the link. */
                        memmove(rest + tlen + 1, rest + pos, left + 1);
                        memcpy(rest, link, tlen);
                        rest[tlen] = '/';
                        pos = 0;
                        if (link[0] == '/') {
                                walk_pop_all(&w);
                                w.len = 0;
                                where[0] = '\0';
                        }
                        r = LANDFS_OK;
                }
        }
        if (r == LANDFS_OK && w.depth == 0)
                r = LANDFS_OUTSIDE_ROOTS;       /* it ended above every root */
        if (r == LANDFS_OK) {
                *fd = w.fd[w.depth - 1];
                w.depth--;
        }
        walk_pop_all(&w);
        if (w.len == 0 && r != LANDFS_OK)
                strcpy(where, "/");
        return r;
}

int landfs_tmpfile(int dirfd, mode_t mode)
{
        int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode & 0777);

        return fd < 0 ? -errno : fd;
}

int landfs_link(int fd, int dirfd, const char *leaf)
{
        char proc[64];

        if (!leaf[0] || strchr(leaf, '/') || strcmp(leaf, ".") == 0 || strcmp(leaf, "..") == 0 ||
            strlen(leaf) > 255)
                return -EINVAL;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return linkat(AT_FDCWD, proc, dirfd, leaf, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

int landfs_remove_tree(int dirfd, const char *name, uid_t owner)
{
        return incoming_remove_tree_of(dirfd, name, owner);
}
