/* The incoming directory's pure rules: the free-space floor (min_free), the
 * reservation's verdict, and the temporary names an interrupted overwrite
 * may leave, removed at start-up. The publish sequence itself runs through
 * io_uring (daemon/engine/recv/recv-file.c; its calls in test-io.c). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdint.h>

#include "filter.h"
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

        /* A pack's entries share their directory: opened once, not walked for each. */
        {
                struct incoming_dircache c;
                int a, b;

                incoming_dircache_init(&c, dirfd_);
                a = incoming_dircache_open(&c, "runs/2024/données");
                b = incoming_dircache_open(&c, "runs/2024/données");
                ok(a >= 0 && a == b, "the cache: the same directory, the same descriptor, not opened again");
                ok(a >= 0 && fstat(a, &st) == 0 && S_ISDIR(st.st_mode), "and it is the directory");
                is_int(incoming_dircache_open(&c, "runs/in/données"), -ELOOP,
                       "the cache walks as incoming_open_beneath does: through a symlink, -ELOOP");
                is_int(incoming_dircache_open(&c, "runs/none"), -ENOENT, "a missing one: -ENOENT");
                b = incoming_dircache_open(&c, "runs/2024/données");
                ok(b >= 0 && fstat(b, &st) == 0 && S_ISDIR(st.st_mode), "a failure kept nothing: opens again");
                b = incoming_dircache_open(&c, "runs/2024");
                ok(b >= 0 && fcntl(b, F_GETFD) >= 0, "another directory: the cache holds that one");
                incoming_dircache_done(&c);
                ok(fcntl(b, F_GETFD) < 0 && errno == EBADF, "done: closed");
        }

        /* A DEST looked at as a receiver does: never through a symlink. */
        is_int(incoming_stat_beneath(dirfd_, "runs/2024/données", &st), 0, "stat beneath: a directory there");
        ok(S_ISDIR(st.st_mode), "and it says so");
        is_int(incoming_stat_beneath(dirfd_, "runs/in", &st), 0, "a symlink as the last component: itself");
        ok(S_ISLNK(st.st_mode), "not followed");
        is_int(incoming_stat_beneath(dirfd_, "runs/in/données", &st), -ELOOP,
               "through a symlink to a directory that has the name: -ELOOP, not what it points at");
        is_int(incoming_stat_beneath(dirfd_, "runs/none/x", &st), -ENOENT, "a missing directory on the way: -ENOENT");
        is_int(incoming_stat_beneath(dirfd_, "runs/file/x", &st), -ENOTDIR, "a file on the way: -ENOTDIR");
}

static int n_stages;

static void on_stage(const char *name, int r)
{
        n_stages++;
        if (r < 0)
                diag("%s: %s", name, strerror(-r));
}

static int mkfile(int at, const char *name, const char *content)
{
        int fd = openat(at, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

        if (fd < 0)
                return -1;
        if (content && write(fd, content, strlen(content)) < 0) {
                close(fd);
                return -1;
        }
        return close(fd);
}

/* A tree staged out of sight, published in one rename; a failed one removed whole. */
static void test_stage(void)
{
        char name[INCOMING_STAGE_MAX], buf[8] = "";
        char outside[] = "/tmp/rdmaxfer-test-outside.XXXXXX";
        struct stat st;
        int st_fd, d, f;

        incoming_stage_name(name, 42);
        is_str(name, ".rdmaxfer-stage-42", "a staging directory's name");
        ok(incoming_is_stage(name) && !incoming_is_stage(".rdmaxfer-stage-") &&
           !incoming_is_stage(".rdmaxfer-stage-4x") && !incoming_is_stage("rdmaxfer-stage-4") &&
           !incoming_is_stage(".rdmaxfer-7.part"), "only ours are recognised");
        st_fd = incoming_stage_make(dirfd_, name);
        ok(st_fd >= 0 && fstat(st_fd, &st) == 0 && (st.st_mode & 07777) == 0700, "made, mode 0700");
        is_int(incoming_stage_make(dirfd_, name), -EEXIST, "never twice");

        /* The job's tree, built inside. */
        ok(mkdirat(st_fd, "set", 0755) == 0, "the tree's top directory, staged");
        d = openat(st_fd, "set", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ok(d >= 0 && mkdirat(d, "sub", 0755) == 0 && mkfile(d, "a.txt", "aaa") == 0 && mkfile(d, "sub/b", "b") == 0,
           "with files and a subdirectory");
        close(d);
        ok(faccessat(dirfd_, "out/set", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "nothing visible under DEST yet");
        is_int(incoming_stage_publish(dirfd_, st_fd, "set", "out/set", false), 0, "published as out/set");
        f = openat(dirfd_, "out/set/a.txt", O_RDONLY | O_CLOEXEC);
        ok(f >= 0 && read(f, buf, sizeof(buf)) == 3 && !strcmp(buf, "aaa"), "the whole tree is there");
        if (f >= 0)
                close(f);
        ok(faccessat(dirfd_, "out/set/sub/b", F_OK, 0) == 0, "subdirectories included");

        /* DEST exists: refused without overwrite, swapped with. */
        ok(mkdirat(st_fd, "set", 0755) == 0 && mkfile(st_fd, "set/new", "n") == 0, "a second tree staged");
        is_int(incoming_stage_publish(dirfd_, st_fd, "set", "out/set", false), -EEXIST,
               "an existing DEST is refused without overwrite");
        ok(faccessat(dirfd_, "out/set/a.txt", F_OK, 0) == 0 && faccessat(dirfd_, "out/set/new", F_OK, 0) != 0,
           "and left as it was");
        is_int(incoming_stage_publish(dirfd_, st_fd, "set", "out/set", true), 0, "with overwrite, replaced");
        ok(faccessat(dirfd_, "out/set/new", F_OK, 0) == 0 && faccessat(dirfd_, "out/set/a.txt", F_OK, 0) != 0,
           "by the new tree");
        ok(faccessat(st_fd, "set", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "the old one is gone from the staging directory");

        /* Hostile DESTs. */
        ok(mkdirat(st_fd, "x", 0755) == 0, "one more staged");
        is_int(incoming_stage_publish(dirfd_, st_fd, "x", "../x", false), -EINVAL, "'../x' is refused");
        is_int(incoming_stage_publish(dirfd_, st_fd, "x", "/abs", false), -EINVAL, "'/abs' is refused");
        if (mkdtemp(outside)) {
                ok(symlinkat(outside, dirfd_, "planted") == 0, "a symlink planted where DEST's parent would be");
                is_int(incoming_stage_publish(dirfd_, st_fd, "x", "planted/x", false), -ELOOP,
                       "publishing through it is refused");
                ok(rmdir(outside) == 0, "nothing went through it");
                unlinkat(dirfd_, "planted", 0);
        }

        /* A failed job: its staging directory goes, whatever is in it, symlinks not followed. */
        ok(symlinkat("/etc", st_fd, "x/etc") == 0 && mkfile(st_fd, "x/f", "f") == 0, "the staged tree holds a symlink");
        close(st_fd);
        n_stages = 0;
        is_int(incoming_clean_stages(dirfd_, on_stage), 1, "start-up removes the stale staging directory");
        ok(faccessat(dirfd_, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0 && faccessat(AT_FDCWD, "/etc/passwd", F_OK, 0) == 0,
           "with its contents, not what a symlink in it points at");
        is_int(incoming_clean_stages(dirfd_, on_stage), 0, "a second pass finds nothing");
        is_int(incoming_remove_tree(dirfd_, "out"), 0, "incoming_remove_tree removes a published tree too");
        ok(faccessat(dirfd_, "out", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "gone");
        is_int(incoming_remove_tree(dirfd_, "none"), 0, "nothing to remove is fine");
}

/* @name's bytes beneath @at, or "" */
static const char *slurp(int at, const char *name)
{
        static char buf[64];
        int fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n;

        buf[0] = '\0';
        if (fd < 0)
                return buf;
        n = read(fd, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
        return buf;
}

/* Sync into an existing DEST: extras kept, sent entries win, a symlink
 * stays one, what appears meanwhile is kept, a failure changes nothing. */
static void test_merge(void)
{
        char name[INCOMING_STAGE_MAX], link[64];
        struct stat a, b;
        int st_fd;
        ssize_t n;

        /* The old DEST, as earlier jobs and local users left it. */
        ok(mkdirat(dirfd_, "m", 0755) == 0 && mkdirat(dirfd_, "m/dest", 0755) == 0 &&
           mkdirat(dirfd_, "m/dest/sub", 0750) == 0 && mkdirat(dirfd_, "m/dest/only-old", 0711) == 0 &&
           mkfile(dirfd_, "m/dest/replaced", "old") == 0 && mkfile(dirfd_, "m/dest/skipped", "kept") == 0 &&
           mkfile(dirfd_, "m/dest/sub/extra", "x") == 0 && mkfile(dirfd_, "m/dest/only-old/deep", "d") == 0 &&
           symlinkat("/etc", dirfd_, "m/dest/sub/link") == 0, "an old DEST with files, directories and a symlink");
        ok(fstatat(dirfd_, "m/dest/skipped", &a, 0) == 0, "the skipped file's inode");

        /* The job sent "replaced" and "sub/new"; "skipped" it skipped. */
        incoming_stage_name(name, 7);
        st_fd = incoming_stage_make(dirfd_, name);
        ok(st_fd >= 0 && mkdirat(st_fd, "dest", 0755) == 0 && mkdirat(st_fd, "dest/sub", 0755) == 0 &&
           mkfile(st_fd, "dest/replaced", "new") == 0 && mkfile(st_fd, "dest/sub/new", "n") == 0,
           "the staged tree holds only what was sent");
        is_int(incoming_merge_link(dirfd_, "m/dest", st_fd, "dest"), 0, "link step");
        ok(faccessat(st_fd, "dest/sub/extra", F_OK, 0) == 0 && faccessat(st_fd, "dest/only-old/deep", F_OK, 0) == 0,
           "the old DEST's extras are linked into the staged tree, a missing directory made");
        ok(fstatat(st_fd, "dest/only-old", &b, AT_SYMLINK_NOFOLLOW) == 0 && (b.st_mode & 07777) == 0711,
           "with the old directory's mode");
        is_str(slurp(st_fd, "dest/replaced"), "new", "a sent file is not replaced by the old one");
        is_str(slurp(dirfd_, "m/dest/replaced"), "old", "the old DEST is untouched so far");

        /* Someone writes into the old DEST between the two steps. */
        ok(mkfile(dirfd_, "m/dest/sub/late", "late") == 0, "a file appears in the old DEST after the link step");
        is_int(incoming_merge_publish(dirfd_, st_fd, "dest", "m/dest", NULL), 0, "publish step");
        is_str(slurp(dirfd_, "m/dest/replaced"), "new", "the replaced file is the sent one");
        is_str(slurp(dirfd_, "m/dest/sub/new"), "n", "a new file is there");
        is_str(slurp(dirfd_, "m/dest/skipped"), "kept", "a skipped file is kept");
        ok(fstatat(dirfd_, "m/dest/skipped", &b, 0) == 0 && a.st_ino == b.st_ino, "the same inode, not a copy");
        is_str(slurp(dirfd_, "m/dest/sub/extra"), "x", "an extra file is kept (nothing is deleted)");
        is_str(slurp(dirfd_, "m/dest/only-old/deep"), "d", "and an extra directory with its contents");
        n = readlinkat(dirfd_, "m/dest/sub/link", link, sizeof(link) - 1);
        ok(n == 4 && !memcmp(link, "/etc", 4) && fstatat(dirfd_, "m/dest/sub/link", &b, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISLNK(b.st_mode), "the symlink is kept as a symlink, not followed");
        is_str(slurp(dirfd_, "m/dest/sub/late"), "late", "the file that appeared meanwhile is moved over");
        ok(faccessat(st_fd, "dest", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "the old tree is gone from the staging directory");

        /* A DEST that is a symlink: refused, nothing changes. */
        ok(symlinkat("dest", dirfd_, "m/alias") == 0 && mkdirat(st_fd, "alias", 0755) == 0 &&
           mkfile(st_fd, "alias/f", "f") == 0, "a staged tree for a DEST that is a symlink");
        is_int(incoming_merge_link(dirfd_, "m/alias", st_fd, "alias"), -ELOOP, "the link step refuses it");
        ok(readlinkat(dirfd_, "m/alias", link, sizeof(link)) == 4 && faccessat(dirfd_, "m/dest/f", F_OK, 0) != 0,
           "and the old DEST is as it was");
        is_int(incoming_merge_link(dirfd_, "m/none", st_fd, "alias"), 0, "a DEST that is not there is nothing to merge");
        is_int(incoming_merge_publish(dirfd_, st_fd, "alias", "m/none", NULL), 0, "published as a plain rename");
        is_str(slurp(dirfd_, "m/none/f"), "f", "there");
        close(st_fd);
        is_int(incoming_remove_tree(dirfd_, name), 0, "cleaned up the staging directory");
        is_int(incoming_remove_tree(dirfd_, "m"), 0, "cleaned up the merged trees");
}

/* Deleting (xferctl send --delete): kept entries linked in one by one,
 * no link step, and the old DEST's extras, counted, gone; nothing
 * outside DEST touched, no symlink followed. */
static void test_merge_delete(void)
{
        char name[INCOMING_STAGE_MAX], link[64];
        uint64_t deleted = 0;
        struct stat a, b;
        int st_fd, ofd, nfd;

        ok(mkdirat(dirfd_, "d", 0755) == 0 && mkdirat(dirfd_, "d/dest", 0755) == 0 &&
           mkdirat(dirfd_, "d/dest/sub", 0755) == 0 && mkdirat(dirfd_, "d/dest/gone", 0700) == 0 &&
           mkdirat(dirfd_, "d/dest/gone/deeper", 0500) == 0 && mkdirat(dirfd_, "d/sibling", 0755) == 0 &&
           mkfile(dirfd_, "d/dest/kept", "kept") == 0 && mkfile(dirfd_, "d/dest/replaced", "old") == 0 &&
           mkfile(dirfd_, "d/dest/.dot", "dot") == 0 && mkfile(dirfd_, "d/dest/sub/extra", "x") == 0 &&
           mkfile(dirfd_, "d/dest/gone/f", "f") == 0 && mkfile(dirfd_, "d/sibling/s", "s") == 0 &&
           mkfile(dirfd_, "d/outside", "o") == 0 && symlinkat("../sibling", dirfd_, "d/dest/sub/link") == 0 &&
           symlinkat("/etc", dirfd_, "d/dest/kept-link") == 0,
           "an old DEST with extras, a sibling beside it and a file outside");
        ok(fchmodat(dirfd_, "d/dest/.dot", 0444, 0) == 0, "a read-only extra");
        ok(fstatat(dirfd_, "d/dest/kept", &a, 0) == 0, "the kept file's inode");

        /* The job sent "replaced" and "sub/new", kept "kept". */
        incoming_stage_name(name, 8);
        st_fd = incoming_stage_make(dirfd_, name);
        ok(st_fd >= 0 && mkdirat(st_fd, "dest", 0755) == 0 && mkdirat(st_fd, "dest/sub", 0755) == 0 &&
           mkfile(st_fd, "dest/replaced", "new") == 0 && mkfile(st_fd, "dest/sub/new", "n") == 0,
           "the staged tree holds what was sent");
        ofd = incoming_open_beneath(dirfd_, "d/dest", false);
        nfd = incoming_open_beneath(st_fd, "dest", false);
        ok(ofd >= 0 && nfd >= 0, "both DESTs open");
        is_int(incoming_keep_link(ofd, "kept", nfd, "kept", false), 0, "a kept file is linked into the stage");
        is_int(incoming_keep_link(ofd, "kept", nfd, "kept", false), 0, "again: the same file there is fine");
        is_int(incoming_keep_link(ofd, "replaced", nfd, "replaced", false), -EEXIST,
               "another entry under the name is not replaced");
        is_int(incoming_keep_link(ofd, "replaced", nfd, "replaced", true), 0, "... unless a kept tree continues");
        is_str(slurp(nfd, "replaced"), "old", "then it is");
        ok(unlinkat(nfd, "replaced", 0) == 0 && mkfile(st_fd, "dest/replaced", "new") == 0, "the sent one back");
        is_int(incoming_keep_link(ofd, "kept-link", nfd, "kept-link", false), -ELOOP,
               "a symlink is the caller's to make at the end");
        is_int(incoming_keep_link(ofd, "sub", nfd, "sub2", false), -EISDIR, "a directory is never kept whole");
        is_int(incoming_keep_link(ofd, "none", nfd, "none", false), -ENOENT, "nothing there");
        ok(faccessat(nfd, "kept-link", F_OK, AT_SYMLINK_NOFOLLOW) != 0 && faccessat(nfd, "sub2", F_OK, 0) != 0,
           "and nothing made for them");
        close(ofd);
        close(nfd);

        is_int(incoming_merge_publish(dirfd_, st_fd, "dest", "d/dest", &deleted), 0, "publish step, deleting");
        /* .dot, kept-link, sub/extra, sub/link, gone, gone/f, gone/deeper. */
        is_int(deleted, 7, "seven entries of the old DEST deleted, a directory's contents counted");
        is_str(slurp(dirfd_, "d/dest/kept"), "kept", "the kept file is there");
        ok(fstatat(dirfd_, "d/dest/kept", &b, 0) == 0 && a.st_ino == b.st_ino, "the same inode, not a copy");
        is_str(slurp(dirfd_, "d/dest/replaced"), "new", "the sent file replaced the old");
        is_str(slurp(dirfd_, "d/dest/sub/new"), "n", "a new file is there");
        ok(faccessat(dirfd_, "d/dest/.dot", F_OK, AT_SYMLINK_NOFOLLOW) != 0 &&
           faccessat(dirfd_, "d/dest/sub/extra", F_OK, AT_SYMLINK_NOFOLLOW) != 0 &&
           faccessat(dirfd_, "d/dest/sub/link", F_OK, AT_SYMLINK_NOFOLLOW) != 0 &&
           faccessat(dirfd_, "d/dest/kept-link", F_OK, AT_SYMLINK_NOFOLLOW) != 0 &&
           faccessat(dirfd_, "d/dest/gone", F_OK, AT_SYMLINK_NOFOLLOW) != 0,
           "every extra is gone: a dotfile, a read-only file, a symlink, a nested directory");
        is_str(slurp(dirfd_, "d/sibling/s"), "s", "the sibling directory, a symlink in DEST pointed at, survives");
        is_str(slurp(dirfd_, "d/outside"), "o", "and the file outside DEST");
        ok(readlinkat(dirfd_, "d/dest/sub/new", link, sizeof(link)) < 0, "no symlink where a file was sent");
        ok(faccessat(st_fd, "dest", F_OK, AT_SYMLINK_NOFOLLOW) != 0, "the old tree is gone from the staging directory");
        close(st_fd);
        is_int(incoming_remove_tree(dirfd_, name), 0, "cleaned up the staging directory");
        is_int(incoming_remove_tree(dirfd_, "d"), 0, "cleaned up");
}

/* A dry run's view of what deleting removes: every path it names, and
 * what is kept of the offered names (none here but DEST's own). */
static char gone_names[1024];
static const struct filter_list *gone_rules;

static int gone_kept(void *arg, const char *path, mode_t mode)
{
        (void)arg;
        return filter_match(gone_rules, path + strlen("p/dest/"), S_ISDIR(mode)) == FILTER_EXCLUDE ? INCOMING_KEPT
                                                                                                 : INCOMING_GONE;
}

static void gone_one(void *arg, const char *path, mode_t mode)
{
        (void)arg;
        (void)mode;
        snprintf(gone_names + strlen(gone_names), sizeof(gone_names) - strlen(gone_names), "%s ",
                 path + strlen("p/dest/"));
}

/* Deleting with rules (--delete --exclude): what they exclude stays, an
 * excluded directory whole, a gone directory where it holds one; the
 * rest goes, and only it is counted; a dry run names the same. */
static void test_merge_protect(void)
{
        static const struct incoming_gone_ops ops = { .kept = gone_kept, .gone = gone_one };
        struct filter_list rules = FILTER_LIST_NULL;
        char name[INCOMING_STAGE_MAX], err[128];
        uint64_t deleted = 0;
        struct stat a, b, c;
        int st_fd;

        ok(filter_add(&rules, FILTER_EXCLUDE, "*.o", err, sizeof(err)) == 0 &&
           filter_add(&rules, FILTER_EXCLUDE, "/cache/", err, sizeof(err)) == 0, "rules: *.o, /cache/");
        ok(mkdirat(dirfd_, "p", 0755) == 0 && mkdirat(dirfd_, "p/dest", 0755) == 0 &&
           mkdirat(dirfd_, "p/dest/src", 0755) == 0 && mkdirat(dirfd_, "p/dest/cache", 0700) == 0 &&
           mkdirat(dirfd_, "p/dest/cache/deep", 0755) == 0 && mkdirat(dirfd_, "p/dest/old", 0750) == 0 &&
           mkdirat(dirfd_, "p/dest/old/sub", 0755) == 0 && mkdirat(dirfd_, "p/dest/bare", 0755) == 0 &&
           mkfile(dirfd_, "p/dest/src/a.c", "a") == 0 && mkfile(dirfd_, "p/dest/src/a.o", "ao") == 0 &&
           mkfile(dirfd_, "p/dest/src/extra.c", "x") == 0 && mkfile(dirfd_, "p/dest/top.o", "to") == 0 &&
           mkfile(dirfd_, "p/dest/cache/deep/blob", "b") == 0 && mkfile(dirfd_, "p/dest/old/sub/k.o", "k") == 0 &&
           mkfile(dirfd_, "p/dest/old/sub/drop.c", "d") == 0 && mkfile(dirfd_, "p/dest/bare/f", "f") == 0 &&
           symlinkat("a.o", dirfd_, "p/dest/src/l.o") == 0,
           "an old DEST: a.o and top.o excluded, cache/ excluded whole, old/ not sent holding k.o");
        ok(fstatat(dirfd_, "p/dest/src/a.o", &a, 0) == 0 && fstatat(dirfd_, "p/dest/old", &b, 0) == 0,
           "a.o's inode, old's mode and mtime");

        gone_rules = &rules;
        gone_names[0] = '\0';
        /* What is kept of the offered names is the caller's (recv_dry_kept): none here, so
         * every name not excluded goes, and old, old/sub stay for k.o. */
        is_int(incoming_dry_gone(dirfd_, "p/dest", &ops, NULL), 0, "a dry run's walk");
        ok(strstr(gone_names, "src/a.c ") && strstr(gone_names, "src/extra.c ") && strstr(gone_names, "src ") == NULL &&
           strstr(gone_names, "old/sub/drop.c ") && strstr(gone_names, "bare/f ") && strstr(gone_names, "bare ") &&
           !strstr(gone_names, ".o ") && !strstr(gone_names, "cache") && !strstr(gone_names, "old ") &&
           !strstr(gone_names, "old/sub "), "it names what goes, not what the rules keep, nor their directories: %s",
           gone_names);

        /* The job sent src/a.c (the same: kept, linked in by the caller). */
        incoming_stage_name(name, 9);
        st_fd = incoming_stage_make(dirfd_, name);
        ok(st_fd >= 0 && mkdirat(st_fd, "dest", 0755) == 0 && mkdirat(st_fd, "dest/src", 0555) == 0,
           "the staged tree: dest/src, read-only already");
        ok(linkat(dirfd_, "p/dest/src/a.c", st_fd, "dest/src/a.c", 0) == 0 ||
           (fchmodat(st_fd, "dest/src", 0755, 0) == 0 && linkat(dirfd_, "p/dest/src/a.c", st_fd, "dest/src/a.c", 0) == 0 &&
            fchmodat(st_fd, "dest/src", 0555, 0) == 0), "src/a.c kept");
        is_int(incoming_merge_protect(dirfd_, "p/dest", st_fd, "dest", &rules), 0, "the protect step");
        is_int(incoming_merge_publish(dirfd_, st_fd, "dest", "p/dest", &deleted), 0, "publish step, deleting");
        /* src/extra.c, old/sub/drop.c, bare, bare/f. */
        is_int(deleted, 4, "four entries deleted, none the rules keep");
        ok(fstatat(dirfd_, "p/dest/src/a.o", &c, 0) == 0 && c.st_ino == a.st_ino, "src/a.o kept, the same file");
        ok(faccessat(dirfd_, "p/dest/src/l.o", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
           faccessat(dirfd_, "p/dest/top.o", F_OK, 0) == 0, "src/l.o (a symlink) and top.o kept");
        is_str(slurp(dirfd_, "p/dest/cache/deep/blob"), "b", "cache/ kept whole");
        ok(fstatat(dirfd_, "p/dest/cache", &c, 0) == 0 && (c.st_mode & 07777) == 0700, "its mode as it was");
        is_str(slurp(dirfd_, "p/dest/old/sub/k.o"), "k", "old/sub/k.o kept");
        ok(fstatat(dirfd_, "p/dest/old", &c, 0) == 0 && (c.st_mode & 07777) == 0750 &&
           c.st_mtim.tv_sec == b.st_mtim.tv_sec && c.st_mtim.tv_nsec == b.st_mtim.tv_nsec,
           "old, which holds it, stays with its mode and mtime");
        ok(faccessat(dirfd_, "p/dest/old/sub/drop.c", F_OK, 0) != 0 && faccessat(dirfd_, "p/dest/bare", F_OK, 0) != 0 &&
           faccessat(dirfd_, "p/dest/src/extra.c", F_OK, 0) != 0, "the rest of it gone");
        ok(fstatat(dirfd_, "p/dest/src", &c, 0) == 0 && (c.st_mode & 07777) == 0555, "src's sent mode kept");
        close(st_fd);
        is_int(incoming_remove_tree(dirfd_, name), 0, "cleaned up the staging directory");
        ok(fchmodat(dirfd_, "p/dest/src", 0755, 0) == 0 && incoming_remove_tree(dirfd_, "p") == 0, "cleaned up");
        filter_list_deinit(&rules);
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
        test_stage();
        test_merge();
        test_merge_delete();
        test_merge_protect();
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
