/* The incoming directory's pure rules: the free-space floor (min_free), the
 * reservation's verdict, and the temporary names an interrupted overwrite
 * may leave, removed at start-up. The publish sequence itself runs through
 * io_uring (daemon/engine/recv-file.c; its calls in test-io.c). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdint.h>

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

/* min_free: an offer never eats into the floor, whatever the numbers. */
static void test_space(void)
{
        const uint64_t G = 1ull << 30;

        is_int(incoming_space_verdict(10 * G, G, G), INCOMING_OK, "10G free, 1G file, 1G floor: ok");
        is_int(incoming_space_verdict(10 * G, 9 * G, G), INCOMING_OK, "exactly the floor left: ok");
        is_int(incoming_space_verdict(10 * G, 9 * G + 1, G), INCOMING_NO_SPACE,
               "one byte into the floor: refused");
        is_int(incoming_space_verdict(10 * G, 11 * G, 0), INCOMING_NO_SPACE,
               "larger than the free space: refused, floor or not");
        is_int(incoming_space_verdict(10 * G, 10 * G, 0), INCOMING_OK, "no floor: every byte may go");
        is_int(incoming_space_verdict(0, 0, 0), INCOMING_OK, "an empty file on a full disk, no floor");
        is_int(incoming_space_verdict(0, 0, 1), INCOMING_NO_SPACE, "below the floor already: refused");
        is_int(incoming_space_verdict(G, UINT64_MAX, G), INCOMING_NO_SPACE, "a hostile size does not wrap");
        is_int(incoming_space_verdict(UINT64_MAX, 1, UINT64_MAX), INCOMING_NO_SPACE,
               "the largest floor does not wrap");
        is_int(incoming_space_verdict(UINT64_MAX, UINT64_MAX, 0), INCOMING_OK, "the largest numbers");
}

static void test_reserve(void)
{
        is_int(incoming_reserve_verdict(0), INCOMING_OK, "reserved");
        is_int(incoming_reserve_verdict(-EOPNOTSUPP), INCOMING_OK, "cannot reserve: carry on");
        is_int(incoming_reserve_verdict(-ENOSPC), INCOMING_NO_SPACE, "ENOSPC: no space");
        is_int(incoming_reserve_verdict(-EDQUOT), INCOMING_NO_SPACE, "EDQUOT: no space");
        is_int(incoming_reserve_verdict(-EIO), INCOMING_IO, "EIO: an I/O error");
}

static void test_part_names(void)
{
        char buf[INCOMING_PART_MAX];

        incoming_part_name(buf, 42);
        is_str(buf, ".rdmaxfer-42.part", "the temporary name of transfer 42");
        ok(incoming_is_part(buf), "is ours");
        incoming_part_name(buf, UINT64_MAX);
        is_str(buf, ".rdmaxfer-18446744073709551615.part", "the longest one");
        ok(incoming_is_part(buf), "the longest one is ours");
        ok(!incoming_is_part(".rdmaxfer-.part"), "no digits: not ours");
        ok(!incoming_is_part(".rdmaxfer-12a.part"), "not only digits: not ours");
        ok(!incoming_is_part(".rdmaxfer-123456789012345678901.part"), "21 digits: not ours");
        ok(!incoming_is_part("rdmaxfer-1.part"), "no leading dot: not ours");
        ok(!incoming_is_part("x.rdmaxfer-1.part"), "a prefix before it: not ours");
        ok(!incoming_is_part(".rdmaxfer-1.part.x"), "a suffix after it: not ours");
        ok(!incoming_is_part(".rdmaxfer-1.par"), "cut short: not ours");
        ok(!incoming_is_part(""), "empty: not ours");
}

static unsigned int n_removed;

static void on_removed(const char *name, int r)
{
        n_removed += r == 0 && incoming_is_part(name);
}

static void touch(const char *name)
{
        int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

        if (fd >= 0)
                close(fd);
}

/* What a crash between the overwrite's link and rename leaves is removed
 * at start-up, and nothing else. */
static void test_clean_parts(void)
{
        touch(".rdmaxfer-7.part");
        touch(".rdmaxfer-18446744073709551615.part");
        touch("keep.dat");
        touch(".rdmaxfer-x.part");
        touch("a.rdmaxfer-1.part");
        ok(symlinkat("/nonexistent", dirfd_, ".rdmaxfer-9.part") == 0, "a symlink under our pattern");
        is_int(incoming_clean_parts(dirfd_, on_removed), 3, "three of ours removed");
        is_int(n_removed, 3, "each one reported");
        is_int(count_entries(), 3, "the others stay");
        ok(faccessat(dirfd_, "keep.dat", F_OK, 0) == 0, "a received file stays");
        ok(faccessat(dirfd_, ".rdmaxfer-x.part", F_OK, 0) == 0, "not our pattern: stays");
        is_int(incoming_clean_parts(dirfd_, on_removed), 0, "a second pass finds nothing");
        is_int(incoming_clean_parts(-1, NULL), -EBADF, "an unreadable directory is an error");
}

/* DEST beneath the incoming directory: made as needed, never through a symlink. */
static void test_open_beneath(void)
{
        char outside[] = "/tmp/rdmaxfer-test-outside.XXXXXX";
        struct stat st;
        int fd, fd2, f;

        if (!mkdtemp(outside)) {
                ok(1, "# SKIP mkdtemp: %s", strerror(errno));
                return;
        }
        fd = incoming_open_beneath(dirfd_, "runs/2024/données", true);
        ok(fd >= 0, "a 3-level destination is made");
        ok(fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == (0755 & ~022 & 07777),
           "a directory, mode 0755 (less the umask)");
        fd2 = incoming_open_beneath(dirfd_, "runs/2024/données", false);
        ok(fd2 >= 0, "and opens again without making anything");
        close(fd2);
        close(fd);
        is_int(incoming_open_beneath(dirfd_, "runs/none", false), -ENOENT, "without create, a missing one is -ENOENT");

        /* A symlink planted on the path, to a place outside or inside. */
        ok(symlinkat(outside, dirfd_, "runs/out") == 0 && symlinkat("2024", dirfd_, "runs/in") == 0,
           "symlinks planted in the incoming directory");
        is_int(incoming_open_beneath(dirfd_, "runs/out/x", true), -ELOOP, "through a symlink out: -ELOOP");
        is_int(incoming_open_beneath(dirfd_, "runs/in/x", true), -ELOOP, "through a symlink within: -ELOOP too");
        is_int(incoming_open_beneath(dirfd_, "runs/out", true), -ELOOP, "a symlink as the last component: -ELOOP");
        ok(rmdir(outside) == 0, "nothing was made through it (the place it points at is still empty)");
        f = openat(dirfd_, "runs/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ok(f >= 0, "a file on the way");
        close(f);
        is_int(incoming_open_beneath(dirfd_, "runs/file/x", true), -ENOTDIR, "a file where a directory should be");
        is_int(incoming_open_beneath(dirfd_, "../x", true), -EINVAL, "'../x' is refused");
        is_int(incoming_open_beneath(dirfd_, "/abs", true), -EINVAL, "'/abs' is refused");
        is_int(incoming_open_beneath(dirfd_, "a/../../b", true), -EINVAL, "'a/../../b' is refused");
        is_int(incoming_open_beneath(dirfd_, "", true), -EINVAL, "'' is refused");
        ok(faccessat(dirfd_, "a", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "and nothing of it was made");
}

int main(void)
{
        if (!mkdtemp(dir)) {
                printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
                return 0;
        }
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        test_space();
        test_reserve();
        test_part_names();
        test_clean_parts();
        test_open_beneath();
        unlinkat(dirfd_, "keep.dat", 0);
        unlinkat(dirfd_, ".rdmaxfer-x.part", 0);
        unlinkat(dirfd_, "a.rdmaxfer-1.part", 0);
        unlinkat(dirfd_, "runs/2024/données", AT_REMOVEDIR);
        unlinkat(dirfd_, "runs/2024", AT_REMOVEDIR);
        unlinkat(dirfd_, "runs/out", 0);
        unlinkat(dirfd_, "runs/in", 0);
        unlinkat(dirfd_, "runs/file", 0);
        unlinkat(dirfd_, "runs", AT_REMOVEDIR);
        close(dirfd_);
        rmdir(dir);
        return done_testing();
}
