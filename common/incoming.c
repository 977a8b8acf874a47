#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "incoming.h"
#include "macro.h"
#include "name.h"

#define INCOMING_PART_PREFIX    ".rdmaxfer-"
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

/* One component beneath @dirfd, never through a symlink or a mount. */
static int incoming_open_step(int dirfd, const char *name)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                           RESOLVE_NO_XDEV,
        };
        long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

        /* Without openat2 (an older kernel, or a seccomp filter that does not
         * know it): @name is one component name_path_check() passed, so
         * O_NOFOLLOW | O_DIRECTORY is the same walk, mounts aside. */
        if (fd < 0 && (errno == ENOSYS || errno == EPERM))
                fd = openat(dirfd, name, how.flags);
        return fd < 0 ? -errno : (int)fd;
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

#define INCOMING_STAGE_PREFIX   ".rdmaxfer-stage-"
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

static int incoming_remove_at(int atfd, const char *name, unsigned int depth)
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
                q = incoming_remove_at(dirfd(d), de->d_name, depth + 1);
                if (q < 0 && r == 0)
                        r = q;
        }
        closedir(d);
        if (unlinkat(atfd, name, AT_REMOVEDIR) < 0 && r == 0 && errno != ENOENT)
                r = -errno;
        return r;
}

int incoming_remove_tree(int dirfd, const char *name)
{
        return incoming_remove_at(dirfd, name, 0);
}

int incoming_stage_publish(int dirfd, int stagefd, const char *leaf, const char *path, bool overwrite)
{
        const char *slash = strrchr(path, '/');
        char parent[NAME_PATH_MAX + 1];
        int pfd, r = 0;

        if (name_path_check(path, strlen(path), NULL) != NAME_OK)
                return -EINVAL;
        if (slash) {
                snprintf(parent, sizeof(parent), "%.*s", (int)(slash - path), path);
                pfd = incoming_open_beneath(dirfd, parent, true);
                if (pfd < 0)
                        return pfd;
        } else {
                pfd = dirfd;
        }
        if (renameat2(stagefd, leaf, pfd, slash ? slash + 1 : path, RENAME_NOREPLACE) < 0) {
                r = -errno;
                if (r == -EEXIST && overwrite) {
                        /* The old DEST comes back to the staging directory, and goes. */
                        r = renameat2(stagefd, leaf, pfd, slash ? slash + 1 : path, RENAME_EXCHANGE) < 0 ?
                                -errno : 0;
                        if (r == 0)
                                (void)incoming_remove_tree(stagefd, leaf);
                }
        }
        if (r == 0 && fsync(pfd) < 0)
                r = -errno;
        if (slash)
                close(pfd);
        return r;
}

int incoming_clean_stages(int dirfd, void (*removed)(const char *name, int r))
{
        return incoming_sweep(dirfd, incoming_is_stage, incoming_remove_tree, removed);
}
