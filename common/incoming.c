#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "incoming.h"
#include "macro.h"

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

int incoming_clean_parts(int dirfd, void (*removed)(const char *name, int r))
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

                if (!incoming_is_part(de->d_name))
                        continue;
                r = unlinkat(dirfd, de->d_name, 0) < 0 ? -errno : 0;
                n += r == 0;
                if (removed)
                        removed(de->d_name, r);
        }
        closedir(d);
        if (n > 0 && fsync(dirfd) < 0)
                return -errno;
        return n;
}
