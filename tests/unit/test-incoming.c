/* Publication in the incoming directory: nameless until complete, never
 * clobbering, never following a symlink planted under the name. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "incoming.h"
#include "tap.h"

static char dir[] = "/tmp/rdmaxfer-test-incoming.XXXXXX";
static int dirfd_ = -1;

static int count_entries(void)
{
        char cmd[128];
        FILE *f;
        int n = -1;

        snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
        f = popen(cmd, "r");
        if (f) {
                if (fscanf(f, "%d", &n) != 1)
                        n = -1;
                pclose(f);
        }
        return n;
}

static void read_back(const char *name, char *buf, size_t len)
{
        int fd = openat(dirfd_, name, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

        buf[n > 0 ? n : 0] = '\0';
        if (fd >= 0)
                close(fd);
}

/* The daemon's sequence: open nameless, reserve, write, fsync. */
static int make_complete(const char *content)
{
        enum incoming_verdict v;
        int fd = incoming_open(dirfd_, strlen(content), &v);

        if (fd >= 0 && incoming_reserve_verdict(fallocate(fd, 0, 0, strlen(content)) < 0 ? -errno : 0) != INCOMING_OK) {
                close(fd);
                return -ENOSPC;
        }

        if (fd >= 0 && (pwrite(fd, content, strlen(content), 0) != (ssize_t)strlen(content) || fsync(fd) < 0)) {
                close(fd);
                return -EIO;
        }
        return fd;
}

static void test_nameless_until_published(void)
{
        char buf[64];
        int fd = make_complete("hello");
        struct stat st;

        ok(fd >= 0, "create a nameless file");
        is_int(count_entries(), 0, "nothing visible while it is written");
        ok(fstat(fd, &st) == 0 && st.st_size == 5, "size reserved and written");
        is_int(incoming_publish(dirfd_, fd, "a.dat", false, 1), 0, "publish");
        read_back("a.dat", buf, sizeof(buf));
        is_str(buf, "hello", "published content");
        is_int(count_entries(), 1, "exactly one entry, no temporary left");
        close(fd);

        fd = make_complete("dropped");
        close(fd);
        is_int(count_entries(), 1, "an abandoned transfer leaves nothing behind");
}

static void test_no_clobber(void)
{
        char buf[64];
        int fd = make_complete("second");

        is_int(incoming_exists(dirfd_, "a.dat"), 1, "exists");
        is_int(incoming_exists(dirfd_, "b.dat"), 0, "does not exist");
        is_int(incoming_publish(dirfd_, fd, "a.dat", false, 2), -EEXIST, "no overwrite: EEXIST");
        read_back("a.dat", buf, sizeof(buf));
        is_str(buf, "hello", "original untouched");
        is_int(incoming_publish(dirfd_, fd, "a.dat", true, 2), 0, "overwrite allowed: replaced");
        read_back("a.dat", buf, sizeof(buf));
        is_str(buf, "second", "replacement content");
        is_int(count_entries(), 1, "no .part file left by the atomic replace");
        close(fd);
}

static void test_symlink_not_followed(void)
{
        char target[256], buf[64];
        int fd;

        snprintf(target, sizeof(target), "%s-target", dir);
        unlink(target);
        ok(symlinkat(target, dirfd_, "evil.dat") == 0, "plant a symlink pointing outside");
        is_int(incoming_exists(dirfd_, "evil.dat"), 1, "a dangling symlink counts as existing");
        fd = make_complete("payload");
        is_int(incoming_publish(dirfd_, fd, "evil.dat", false, 3), -EEXIST, "refused without overwrite");
        is_int(incoming_publish(dirfd_, fd, "evil.dat", true, 3), 0, "with overwrite the link itself is replaced");
        ok(access(target, F_OK) != 0, "nothing written through the symlink");
        read_back("evil.dat", buf, sizeof(buf));
        is_str(buf, "payload", "the name now holds the file");
        close(fd);
}

static void test_no_space(void)
{
        enum incoming_verdict v;
        int fd = incoming_open(dirfd_, UINT64_MAX / 2, &v);

        ok(fd < 0 && v == INCOMING_NO_SPACE, "an impossible size is a no-space refusal (%d)", fd);
        is_int(count_entries(), 2, "and leaves nothing");
        is_int(incoming_reserve_verdict(0), INCOMING_OK, "reserved");
        is_int(incoming_reserve_verdict(-EOPNOTSUPP), INCOMING_OK, "cannot reserve: carry on");
        is_int(incoming_reserve_verdict(-ENOSPC), INCOMING_NO_SPACE, "ENOSPC: no space");
        is_int(incoming_reserve_verdict(-EDQUOT), INCOMING_NO_SPACE, "EDQUOT: no space");
        is_int(incoming_reserve_verdict(-EIO), INCOMING_IO, "EIO: an I/O error");
}

int main(void)
{
        if (!mkdtemp(dir)) {
                printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
                return 0;
        }
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        test_nameless_until_published();
        test_no_clobber();
        test_symlink_not_followed();
        test_no_space();
        close(dirfd_);
        {
                char cmd[128];

                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        diag("could not remove %s", dir);
        }
        return done_testing();
}
