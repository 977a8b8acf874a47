/*
 * The lander's file system layer (lander/fs/landfs.c) on this machine's
 * real kernel: paths walked as two test users beneath two landing roots in
 * a temporary directory, what they make owned by them, what they may not
 * touch refused, symlinks another user planted never followed. Needs root
 * (CAP_SETUID, CAP_SETGID, chown) to be those users: without it, a SKIP
 * that says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landfs.h"
#include "macro.h"
#include "tap.h"
#include "tmptree.h"

#define ALICE   61001
#define BOB     61002
#define SHARED  61100   /* a group alice is in */
#define STAFF   61200   /* a group nobody is in */

#define base tmptree_base
static struct landfs_roots roots = LANDFS_ROOTS_NULL;

static struct landfs_id id_of(uid_t uid, size_t ngroups, gid_t group)
{
        struct landfs_id id = { .uid = uid, .gid = uid, .ngroups = ngroups };

        if (ngroups)
                id.groups[0] = group;
        return id;
}

/* Where an O_PATH fd is, by /proc. */
static const char *fd_path(int fd)
{
        static char buf[LANDFS_PATH_MAX];
        char proc[64];
        ssize_t n;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, buf, sizeof(buf) - 1);
        buf[n < 0 ? 0 : n] = '\0';
        return buf;
}

/* landfs_open_dir as @id, become and back around it. */
static int open_as(const struct landfs_id *id, const char *rel, bool create, int *fd, char *where)
{
        int r = landfs_become(id);

        if (r < 0)
                return r;
        r = landfs_open_dir(&roots, id, at(rel), create, 0750, fd, where);
        if (landfs_unbecome() < 0) {
                fprintf(stderr, "landfs_unbecome: %m\n");
                exit(1);
        }
        return r;
}

static void test_path_check(void)
{
        char longname[300];

        ok(landfs_path_check("/a") && landfs_path_check("/scratch/alice/run 1") &&
           landfs_path_check("/home/alice/.cache") && landfs_path_check("/a/..." ) &&
           landfs_path_check("/a/.x/..y"), "absolute paths in normal form, dotfiles included");
        ok(!landfs_path_check("/") && !landfs_path_check("") && !landfs_path_check("a/b") &&
           !landfs_path_check("/a/") && !landfs_path_check("/a//b") && !landfs_path_check("/a/./b") &&
           !landfs_path_check("/a/../b") && !landfs_path_check("/..") && !landfs_path_check("/a/.") &&
           !landfs_path_check(NULL), "'/', relative, a trailing or doubled '/', '.', '..': refused");
        memset(longname, 'x', sizeof(longname));
        longname[0] = '/';
        longname[257] = '\0';
        ok(!landfs_path_check(longname), "a component of 256 bytes: refused");
        longname[256] = '\0';
        ok(landfs_path_check(longname), "one of 255: fine");
}

static void test_roots(void)
{
        struct landfs_roots r = LANDFS_ROOTS_NULL;

        is_int(landfs_roots_add(&r, at("none")), -ENOENT, "a root that is not there: ENOENT");
        is_int(landfs_roots_add(&r, at("scratch/../home")), -EINVAL, "a root not in normal form: EINVAL");
        is_int(landfs_roots_add(&r, at("via-link")), -ENOTDIR, "a root that is a symlink: refused");
        is_int(landfs_roots_add(&r, at("via-link/alice")), -ELOOP,
               "a root through a symlink: ELOOP (the admin names the real path)");
        is_int(landfs_roots_add(&r, at("scratch")), 0, "a root");
        is_int(landfs_roots_add(&r, at("scratch/alice")), -EEXIST, "a root inside another: EEXIST");
        is_int(landfs_roots_add(&r, base), -EEXIST, "a root around another: EEXIST");
        ok(landfs_roots_find(&r, at("scratch/alice/x")) == &r.root[0] && landfs_roots_find(&r, at("scratch")) &&
           !landfs_roots_find(&r, at("scratchy/x")) && !landfs_roots_find(&r, base),
           "the root that holds a path, its own included; none for a sibling of the same prefix");
        landfs_roots_free(&r);
}

static void test_land(void)
{
        struct landfs_id alice = id_of(ALICE, 1, SHARED), bob = id_of(BOB, 0, 0);
        char where[LANDFS_PATH_MAX];
        struct stat st;
        int dfd = -1, fd, r;

        r = open_as(&alice, "scratch/alice/run1/sub", true, &dfd, where);
        is_int(r, LANDFS_OK, "alice opens scratch/alice/run1/sub, making what is missing");
        is_str(fd_path(dfd), at("scratch/alice/run1/sub"), "the fd is that directory");
        ok(stat(at("scratch/alice/run1"), &st) == 0 && st.st_uid == ALICE && st.st_gid == ALICE &&
           (st.st_mode & 07777) == 0750, "the directories made are alice's, mode 0750");

        ok(landfs_become(&alice) == 0, "become alice");
        ok((uid_t)setfsuid((uid_t)-1) == ALICE && (gid_t)setfsgid((gid_t)-1) == ALICE, "fsuid and fsgid are alice's");
        fd = landfs_tmpfile(dfd, 04640);
        ok(fd >= 0, "a nameless file in it");
        ok(write(fd, "data\n", 5) == 5, "written");
        is_int(landfs_link(fd, dfd, "data.bin"), 0, "named data.bin");
        is_int(landfs_link(fd, dfd, "data.bin"), -EEXIST, "named again: EEXIST, never replaced");
        is_int(landfs_link(fd, dfd, "../x"), -EINVAL, "a name with a '/': EINVAL");
        is_int(landfs_link(fd, dfd, ".."), -EINVAL, "'..': EINVAL");
        ok(landfs_unbecome() == 0, "back");
        ok((uid_t)setfsuid((uid_t)-1) == 0 && (gid_t)setfsgid((gid_t)-1) == 0, "fsuid and fsgid are root's again");
        ok(getgroups(0, NULL) == 0, "and no supplementary groups");
        ok(stat(at("scratch/alice/run1/sub/data.bin"), &st) == 0 && st.st_uid == ALICE && st.st_gid == ALICE &&
           (st.st_mode & 07777) == 0640 && st.st_size == 5,
           "data.bin is alice's, mode 0640 (setuid dropped), 5 bytes");
        safe_close(fd);
        safe_close(dfd);

        r = open_as(&bob, "scratch/alice/bobs", true, &dfd, where);
        is_int(r, -EACCES, "bob opening a place in alice's 0700 directory: EACCES");
        is_str(where, at("scratch/alice/bobs"), "the error names the path it stopped at");
        ok(dfd == -1 && lstat(at("scratch/alice/bobs"), &st) < 0 && errno == ENOENT, "nothing made");

        /* Bob plants a symlink in the sticky, world-writable root. */
        ln("alice", "scratch/evil", BOB);
        r = open_as(&alice, "scratch/evil/run2", true, &dfd, where);
        is_int(r, LANDFS_FOREIGN_SYMLINK, "alice landing through bob's symlink: refused");
        is_str(where, at("scratch/evil"), "the error names the symlink");
        ok(lstat(at("scratch/alice/run2"), &st) < 0, "nothing made where it pointed");

        ln("run1", "scratch/alice/cur", ALICE);
        r = open_as(&alice, "scratch/alice/cur/sub", false, &dfd, where);
        is_int(r, LANDFS_OK, "alice's own symlink: followed");
        is_str(fd_path(dfd), at("scratch/alice/run1/sub"), "to where it points");
        safe_close(dfd);

        ln("alice", "scratch/rootlink", 0);
        r = open_as(&alice, "scratch/rootlink/run1", false, &dfd, where);
        is_int(r, LANDFS_OK, "a symlink root owns: followed");
        safe_close(dfd);

        ln(at("home/alice"), "scratch/alice/tohome", ALICE);
        r = open_as(&alice, "scratch/alice/tohome/in", true, &dfd, where);
        is_int(r, LANDFS_OK, "an absolute symlink into another landing root: followed");
        is_str(fd_path(dfd), at("home/alice/in"), "to there");
        safe_close(dfd);

        ln("../../outside", "scratch/alice/esc", ALICE);
        r = open_as(&alice, "scratch/alice/esc/x", true, &dfd, where);
        is_int(r, LANDFS_OUTSIDE_ROOTS, "a symlink whose '..' leaves the roots: refused");
        ok(lstat(at("outside/x"), &st) < 0, "nothing made outside");
        ln("/etc", "scratch/alice/etc", ALICE);
        r = open_as(&alice, "scratch/alice/etc", false, &dfd, where);
        is_int(r, LANDFS_OUTSIDE_ROOTS, "an absolute symlink outside the roots: refused");
        is_str(where, "/etc", "the error names where it led");

        r = open_as(&alice, "outside/x", true, &dfd, where);
        is_int(r, LANDFS_OUTSIDE_ROOTS, "a path outside the roots: refused");
        ok(lstat(at("outside/x"), &st) < 0, "nothing made");
        r = landfs_become(&alice);
        r = r ?: landfs_open_dir(&roots, &alice, base, false, 0750, &dfd, where);
        landfs_unbecome();
        is_int(r, LANDFS_OUTSIDE_ROOTS, "a path above the roots: refused");
        r = open_as(&alice, "scratchy", true, &dfd, where);
        is_int(r, LANDFS_OUTSIDE_ROOTS, "a sibling of a root that shares its prefix: refused");

        /* Out of one root by "..", into the other. */
        ln("../../home/alice", "scratch/alice/up", ALICE);
        r = open_as(&alice, "scratch/alice/up", false, &dfd, where);
        is_int(r, LANDFS_OK, "a symlink whose '..' leave one root for another: followed");
        is_str(fd_path(dfd), at("home/alice"), "to there");
        safe_close(dfd);
        ln("/", "scratch/alice/slash", ALICE);
        r = open_as(&alice, "scratch/alice/slash/tmp", false, &dfd, where);
        is_int(r, LANDFS_OUTSIDE_ROOTS, "a symlink to '/': refused");
        /* The kernel's own bound on links: 40 followed, the 41st refused. */
        char name[32], next[32];
        for (int i = 0; i <= 40; i++) {
                snprintf(name, sizeof(name), "scratch/alice/c%d", i);
                snprintf(next, sizeof(next), "c%d", i + 1);
                ln(i == 40 ? "run1" : next, name, ALICE);
        }
        r = open_as(&alice, "scratch/alice/c1/sub", false, &dfd, where);
        is_int(r, LANDFS_OK, "a chain of 40 symlinks: followed");
        safe_close(dfd);
        r = open_as(&alice, "scratch/alice/c0/sub", false, &dfd, where);
        is_int(r, -ELOOP, "a chain of 41: ELOOP");
        /* A path as long as a path may be. */
        char deep[LANDFS_PATH_MAX];
        size_t n = (size_t)snprintf(deep, sizeof(deep), "%s", at("scratch/alice/run1"));
        while (n + 1 + 200 < LANDFS_PATH_MAX - 1) {
                deep[n++] = '/';
                memset(deep + n, 'd', 200);
                n += 200;
        }
        deep[n] = '\0';
        landfs_become(&alice);
        r = landfs_open_dir(&roots, &alice, deep, true, 0750, &dfd, where);
        landfs_unbecome();
        ok(r == LANDFS_OK && strcmp(fd_path(dfd), deep) == 0, "a path of %zu bytes, made and opened", n);
        safe_close(dfd);
        ln(deep, "scratch/alice/far", ALICE);
        char far[300];
        snprintf(far, sizeof(far), "scratch/alice/far/%0250d", 7);
        r = open_as(&alice, far, true, &dfd, where);
        is_int(r, -ENAMETOOLONG, "through a symlink to it, a path too long: ENAMETOOLONG");

        ln("loop", "scratch/alice/loop", ALICE);
        r = open_as(&alice, "scratch/alice/loop/x", true, &dfd, where);
        is_int(r, -ELOOP, "a symlink to itself: ELOOP");
        r = open_as(&alice, "scratch/alice/run1/sub/data.bin/x", true, &dfd, where);
        is_int(r, -ENOTDIR, "a file on the way: ENOTDIR");
        r = open_as(&alice, "scratch/alice/nothere/x", false, &dfd, where);
        is_int(r, -ENOENT, "a missing directory without create: ENOENT");
}

static void test_groups(void)
{
        struct landfs_id alice = id_of(ALICE, 1, SHARED), alone = id_of(ALICE, 0, 0);
        char where[LANDFS_PATH_MAX];
        struct stat st;
        int dfd = -1, fd;

        is_int(open_as(&alone, "scratch/shared/a", true, &dfd, where), -EACCES,
               "alice without her group: the group's directory is closed to her");
        is_int(open_as(&alice, "scratch/shared/a", true, &dfd, where), LANDFS_OK,
               "with her supplementary group: she makes a directory in it");
        safe_close(dfd);
        is_int(open_as(&alice, "scratch/sgid", false, &dfd, where), LANDFS_OK, "a setgid directory");
        landfs_become(&alice);
        fd = landfs_tmpfile(dfd, 0600);
        ok(fd >= 0 && landfs_link(fd, dfd, "f") == 0, "a file made in it");
        landfs_unbecome();
        ok(stat(at("scratch/sgid/f"), &st) == 0 && st.st_uid == ALICE && st.st_gid == SHARED,
           "owned by alice, its group the directory's");
        safe_close(fd);
        safe_close(dfd);
        struct landfs_id bad = { .uid = (uid_t)-1, .gid = 1 };
        is_int(landfs_become(&bad), -EINVAL, "uid -1: EINVAL");
}

int main(void)
{
        char tmpl[] = "/tmp/test-landfs.XXXXXX";

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root to act as other users (CAP_SETUID, CAP_SETGID, chown)\n");
                return 0;
        }
        umask(0);
        if (tmptree_make(tmpl) < 0) {
                perror("mkdtemp");
                return 1;
        }
        chmod(base, 0755);
        mk("scratch", 01777, 0, 0);
        mk("scratch/alice", 0700, ALICE, ALICE);
        mk("scratch/shared", 0770, 0, SHARED);
        mk("scratch/sgid", 02770, 0, SHARED);
        mk("scratchy", 0777, 0, 0);
        mk("home", 0755, 0, 0);
        mk("home/alice", 0755, ALICE, ALICE);
        mk("outside", 0777, 0, 0);
        ln("scratch", "via-link", 0);

        test_path_check();
        test_roots();
        if (landfs_roots_add(&roots, at("scratch")) < 0 || landfs_roots_add(&roots, at("home")) < 0) {
                perror("landfs_roots_add");
                return 1;
        }
        test_land();
        test_groups();
        landfs_roots_free(&roots);

        tmptree_remove();
        return done_testing();
}
