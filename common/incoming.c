#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "incoming.h"
#include "macro.h"

int incoming_exists(int dirfd, const char *name)
{
        struct open_how how = {
                .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        struct stat st;
        int fd;

        fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
        if (fd >= 0) {
                close(fd);
                return 1;
        }
        if (errno == ENOENT)
                return 0;
        /* A symlink under that name exists, even if we won't follow it. */
        if (errno == ELOOP)
                return 1;
        /* openat2 can be missing (old kernel) or filtered: systemd's
         * RestrictSUIDSGID= answers ENOSYS, since seccomp cannot see the
         * mode inside struct open_how. The name is a checked leaf, so a
         * no-follow stat beneath the directory decides the same. */
        if (errno == ENOSYS || errno == EPERM) {
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return 1;
                return errno == ENOENT ? 0 : -errno;
        }
        return -errno;
}

int incoming_open(int dirfd, uint64_t size, enum incoming_verdict *verdict)
{
        _cleanup_(closep) int fd = -1;
        struct statvfs vfs;

        *verdict = INCOMING_IO;
        fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0640);
        if (fd < 0)
                return -errno;
        /* Refuse up front: a full disk becomes a refusal, not a failure at 90 %. */
        if (fstatvfs(fd, &vfs) == 0 && (uint64_t)vfs.f_bavail * vfs.f_frsize < size) {
                *verdict = INCOMING_NO_SPACE;
                return -ENOSPC;
        }
        *verdict = INCOMING_OK;
        return TAKE_FD(fd);
}

enum incoming_verdict incoming_reserve_verdict(int r)
{
        if (r >= 0 || r == -EOPNOTSUPP)
                return INCOMING_OK;
        if (r == -ENOSPC || r == -EDQUOT || r == -EFBIG)
                return INCOMING_NO_SPACE;
        return INCOMING_IO;
}

int incoming_publish(int dirfd, int fd, const char *name, bool overwrite, uint64_t tag)
{
        char path[64], tmp[64];
        int r;

        /* linkat() of an O_TMPFILE through /proc needs no privilege (the
         * AT_EMPTY_PATH form needs CAP_DAC_READ_SEARCH), and link() never
         * replaces an existing name. */
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        r = linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
        if (r < 0 && errno == EEXIST && overwrite) {
                snprintf(tmp, sizeof(tmp), ".rdmaxfer-%" PRIu64 ".part", tag);
                unlinkat(dirfd, tmp, 0);
                r = linkat(AT_FDCWD, path, dirfd, tmp, AT_SYMLINK_FOLLOW);
                if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0) {
                        r = -errno;
                        unlinkat(dirfd, tmp, 0);
                        return r;
                }
        }
        if (r < 0)
                return -errno;
        /* The name itself must survive a crash too. */
        if (fsync(dirfd) < 0)
                return -errno;
        return 0;
}
