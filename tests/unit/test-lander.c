/*
 * rdmaxfer-lander's service (lander/lander.c) against a real munged of its
 * own (a private socket and key in a temporary directory): credentials made
 * by a real user (nobody) through that munged, decoded by the lander; what
 * a session lets that user do, as that user, beneath two landing roots;
 * and every refusal: a forged credential, one made for another job or
 * other nodes, a replay that is no retry, root, a DEST outside the roots,
 * munged gone, a file that is no nameless one of the user's, reading in a
 * landing session, another connection's session; a pulled tree's walker
 * (what it sends, what it refuses).
 *
 * Needs root (to be other users, and to start munged as root) and munged:
 * without either, a SKIP that says which.
 */
#include <errno.h>
#include <fcntl.h>
#include <munge.h>
#include <pwd.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lander.h"
#include "macro.h"
#include "munge-fixture.h"
#include "posix-acl.h"
#include "tap.h"
#include "tmptree.h"
#include "xattrs.h"

#define base tmptree_base
static char sock[LANDFS_PATH_MAX + 32];
static uid_t nobody_uid;
static gid_t nobody_gid;

static void session_fill(struct landmsg_session *s, uint8_t direction, const char *dest_rel, const char *addr)
{
        memset(s, 0, sizeof(*s));
        s->direction = direction;
        s->naddrs = 1;
        randombytes_buf(s->token, sizeof(s->token));
        s->addrs[0][10] = s->addrs[0][11] = 0xff;
        if (sscanf(addr, "%hhu.%hhu.%hhu.%hhu", &s->addrs[0][12], &s->addrs[0][13], &s->addrs[0][14],
                   &s->addrs[0][15]) != 4)
                abort();
        snprintf(s->dest, sizeof(s->dest), "%s", at(dest_rel));
}

static struct landmsg req, reply;

static int ask(struct lander *l, unsigned int conn, int fd, int *rfd)
{
        int dummy;

        req.id++;
        /* The lander takes the descriptor it is given (its copy, over a socket). */
        lander_handle(l, conn, &req, fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1, &reply, rfd ? rfd : &dummy);
        /* As the lander's loop does when nothing more waits: the checks
         * that follow are root's. */
        lander_idle(l);
        if (!rfd)
                safe_close(dummy);
        if (reply.id != req.id)
                return -999;
        return reply.type == LANDMSG_ERROR ? -(int)reply.error.err : 0;
}

static uint64_t open_session(struct lander *l, unsigned int conn)
{
        req.type = LANDMSG_SESSION;
        if (ask(l, conn, -1, NULL) < 0) {
                diag("session refused: %s", reply.error.text);
                return 0;
        }
        return reply.session_ok.session;
}

static int op(struct lander *l, unsigned int conn, uint16_t type, uint64_t session, const char *path, mode_t mode,
              const char *leaf, int fd, int *rfd)
{
        req.type = type;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = session;
        req.op.mode = mode;
        snprintf(req.op.path, sizeof(req.op.path), "%s", path);
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%s", leaf ? leaf : "");
        return ask(l, conn, fd, rfd);
}

static void test_push(struct lander *l)
{
        static struct landmsg_session job;
        struct stat st;
        uint64_t s1, s2;
        int fd = -1, r;

        session_fill(&req.session, LANDMSG_PUSH, "scratch/nobody/run1", "127.0.0.1");
        req.session.flags = LANDMSG_SESSION_REPLACE;
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        ok(strncmp(req.session.cred, "MUNGE:", 6) == 0, "nobody made a credential for the job (--overwrite)");
        job = req.session;      /* the requests below share its memory */
        s1 = open_session(l, 1);
        ok(s1 != 0 && reply.session_ok.uid == nobody_uid && reply.session_ok.gid == nobody_gid &&
           strcmp(reply.session_ok.user, "nobody") == 0, "the lander proves it: uid %u, nobody", (unsigned)nobody_uid);
        is_int(lander_sessions(l), 1, "one session");

        is_int(op(l, 1, LANDMSG_MKDIR, s1, "sub/deeper", 0750, NULL, -1, NULL), 0, "MKDIR of DEST/sub/deeper");
        ok(stat(at("scratch/nobody/run1/sub"), &st) == 0 && st.st_uid == nobody_uid && (st.st_mode & 07777) == 0750,
           "DEST and beneath made as nobody, mode 0750");
        r = op(l, 1, LANDMSG_TMPFILE, s1, "sub", 0644, NULL, -1, &fd);
        ok(r == 0 && reply.type == LANDMSG_FD && fd >= 0, "TMPFILE: a descriptor");
        ok(fd >= 0 && write(fd, "hello\n", 6) == 6, "the daemon's side writes into it");
        is_int(op(l, 1, LANDMSG_LINK, s1, "sub", 0, "hello.txt", fd, NULL), 0, "LINK as hello.txt");
        ok(stat(at("scratch/nobody/run1/sub/hello.txt"), &st) == 0 && st.st_uid == nobody_uid &&
           st.st_gid == nobody_gid && (st.st_mode & 07777) == 0644 && st.st_size == 6,
           "hello.txt: nobody's, 0644, 6 bytes");
        /* Its metadata, as nobody: only nobody (or root) may set them. */
        req.type = LANDMSG_SETATTR;
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.setattr.session = s1;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_XATTR;
        req.setattr.mode = 0444;
        req.setattr.mtime_ns = 981173106123456789ull;
        strcpy(req.setattr.xname, "user.rdmaxfer.digest");
        req.setattr.xlen = 5;
        memcpy(req.setattr.xvalue, "abcde", 5);
        is_int(ask(l, 1, fd, NULL), 0, "SETATTR: mode 0444, an mtime, user.rdmaxfer.digest");
        char xv[16] = "";
        ok(stat(at("scratch/nobody/run1/sub/hello.txt"), &st) == 0 && (st.st_mode & 07777) == 0444 &&
           st.st_mtim.tv_sec == 981173106 && st.st_mtim.tv_nsec == 123456789 &&
           getxattr(at("scratch/nobody/run1/sub/hello.txt"), "user.rdmaxfer.digest", xv, sizeof(xv)) == 5 &&
           memcmp(xv, "abcde", 5) == 0, "all three set on hello.txt");
        safe_close(fd);
        /* Replacing: a new file renamed over the name, syncing the directory. */
        r = op(l, 1, LANDMSG_TMPFILE, s1, "sub", 0600, NULL, -1, &fd);
        ok(r == 0 && fd >= 0 && write(fd, "v2\n", 3) == 3, "another nameless file");
        is_int(op(l, 1, LANDMSG_LINK, s1, "sub", 0, "hello.txt", fd, NULL), -EEXIST, "LINK over hello.txt: EEXIST");
        req.op.flags = LANDMSG_LINK_REPLACE | LANDMSG_LINK_SYNC;
        is_int(ask(l, 1, fd, NULL), 0, "LINK with REPLACE and SYNC");
        ok(stat(at("scratch/nobody/run1/sub/hello.txt"), &st) == 0 && st.st_size == 3 && st.st_uid == nobody_uid,
           "hello.txt is the new file");
        DIR *dir = opendir(at("scratch/nobody/run1/sub"));
        struct dirent *de;
        int parts = 0;
        while (dir && (de = readdir(dir)))
                parts += strstr(de->d_name, ".part") != NULL;
        if (dir)
                closedir(dir);
        is_int(parts, 0, "no temporary name left behind");
        safe_close(fd);
        fd = open(at("scratch/nobody/run1/sub/hello.txt"), O_RDONLY | O_CLOEXEC);
        is_int(op(l, 1, LANDMSG_LINK, s1, "sub", 0, "again.txt", fd, NULL), -EBADF,
               "LINK of a file that has a name: EBADF (only a nameless file of the user's)");
        safe_close(fd);
        is_int(op(l, 1, LANDMSG_LINK, s1, "sub", 0, "none.txt", -1, NULL), -EBADF, "LINK without a file: EBADF");
        fd = open(at("scratch/daemon"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        req.type = LANDMSG_SETATTR;
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.setattr.session = s1;
        req.setattr.flags = LANDMSG_SET_MODE;
        req.setattr.mode = 0777;
        is_int(ask(l, 1, fd, NULL), -EBADF, "SETATTR on another user's directory: EBADF");
        safe_close(fd);
        ok(stat(at("scratch/daemon"), &st) == 0 && (st.st_mode & 07777) == 0700, "its mode unchanged");
        is_int(op(l, 1, LANDMSG_OPEN_READ, s1, "sub/hello.txt", 0, NULL, -1, &fd), -EPERM,
               "OPEN_READ in a landing session: refused");
        is_int(op(l, 2, LANDMSG_MKDIR, s1, "x", 0755, NULL, -1, NULL), -ESRCH,
               "another connection's session: ESRCH");

        /* nobody may not write in bob's directory, nor walk through
         * a symlink another user planted. */
        is_int(op(l, 1, LANDMSG_MKDIR, s1, "", 0755, NULL, -1, NULL), 0, "MKDIR of DEST itself (there): fine");
        if (symlink(at("scratch/daemon"), at("scratch/nobody/run1/planted")) < 0 ||
            lchown(at("scratch/nobody/run1/planted"), 1, 1) < 0)
                abort();
        is_int(op(l, 1, LANDMSG_MKDIR, s1, "planted/x", 0755, NULL, -1, NULL), -EPERM,
               "through a symlink another user planted: refused");
        ok(reply.error.verdict == LANDFS_FOREIGN_SYMLINK && strstr(reply.error.where, "/planted") &&
           strstr(reply.error.text, "neither you nor root"), "saying so: %s: %s", reply.error.where, reply.error.text);

        /* The next attempt of the same job presents the same credential:
         * munged calls it replayed, the lander knows it. */
        req.session = job;
        s2 = open_session(l, 1);
        ok(s2 != 0 && s2 != s1 && reply.session_ok.uid == nobody_uid, "the same job's retry: a new session");
        {
                /* The lander killed and started again: the retry after it gets in as well. */
                struct lander_settings s = { .munge_socket = sock };
                struct lander *l2 = NULL;

                req.session = job;
                ok(landfs_roots_add(&s.roots, at("scratch")) == 0 && lander_new(&l2, &s) == 0 &&
                   open_session(l2, 1) != 0 && reply.session_ok.uid == nobody_uid,
                   "the same job's retry at a new lander: a session, as nobody");
                lander_free(l2);
                landfs_roots_free(&s.roots);
        }
        is_int(op(l, 1, LANDMSG_END, s1, "", 0, NULL, -1, NULL), 0, "END");
        is_int(op(l, 1, LANDMSG_MKDIR, s1, "y", 0755, NULL, -1, NULL), -ESRCH, "an ended session: ESRCH");
        lander_conn_closed(l, 1);
        is_int(lander_sessions(l), 0, "a connection gone: its sessions too");

        /* The same credential for another DEST: refused. */
        req.session = job;
        snprintf(req.session.dest, sizeof(req.session.dest), "%s", at("scratch/nobody/run2"));
        ok(open_session(l, 1) == 0 && reply.error.err == EPERM && strstr(reply.error.text, "replayed"),
           "a used credential for another DEST: refused as replayed");
        ok(lstat(at("scratch/nobody/run2"), &st) < 0, "nothing made");
}

static void test_refusals(struct lander *l)
{
        static struct landmsg_session other;
        struct stat st;

        session_fill(&req.session, LANDMSG_PUSH, "scratch/nobody/run3", "127.0.0.1");
        other = req.session;
        snprintf(other.dest, sizeof(other.dest), "%s", at("scratch/nobody/elsewhere"));
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, &other);
        ok(open_session(l, 1) == 0 && reply.error.err == EPERM && strstr(reply.error.text, "another job"),
           "a fresh credential made for another DEST: refused (%s)", reply.error.text);

        session_fill(&req.session, LANDMSG_PUSH, "scratch/nobody/run3", "203.0.113.9");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        ok(open_session(l, 1) == 0 && strstr(reply.error.text, "none of this node's addresses"),
           "a credential for another node: refused (%s)", reply.error.text);

        session_fill(&req.session, LANDMSG_PUSH, "scratch/nobody/run3", "127.0.0.1");
        strcpy(req.session.cred, "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7yforged:");
        ok(open_session(l, 1) == 0 && strstr(reply.error.text, "MUNGE refused"),
           "a forged credential: refused (%s)", reply.error.text);

        session_fill(&req.session, LANDMSG_PUSH, "scratch/root", "127.0.0.1");
        munge_fixture_cred(&req.session, 0, 0, NULL);
        ok(open_session(l, 1) == 0 && strstr(reply.error.text, "allow_root_landing"),
           "root's credential: refused (%s)", reply.error.text);

        session_fill(&req.session, LANDMSG_PUSH, "outside/x", "127.0.0.1");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        ok(open_session(l, 1) == 0 && reply.error.verdict == LANDFS_OUTSIDE_ROOTS &&
           strstr(reply.error.text, "landing_roots"), "a DEST outside the roots: refused (%s)", reply.error.text);

        session_fill(&req.session, LANDMSG_PUSH, "scratch/daemon/x", "127.0.0.1");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        uint64_t s = open_session(l, 1);
        ok(s != 0, "a DEST in another user's directory: a session (the walk decides)");
        is_int(op(l, 1, LANDMSG_MKDIR, s, "", 0755, NULL, -1, NULL), -EACCES, "MKDIR there: EACCES");
        ok(strcmp(reply.error.where, at("scratch/daemon/x")) == 0, "naming the path: %s", reply.error.where);
        ok(lstat(at("scratch/daemon/x"), &st) < 0, "nothing made");
        lander_conn_closed(l, 1);
}

/* A job that outlived its credential's TTL (SECURITY.md, Waiting past the
 * TTL): its binding still proves it within landing_max_age, between
 * daemons with a key, and nowhere else. */
static void test_expired(void)
{
        static struct landmsg_session job;
        struct lander_settings set = { .munge_socket = sock };
        struct lander *plain = NULL, *keyed = NULL, *young = NULL;

        session_fill(&job, LANDMSG_PUSH, "scratch/nobody/late", "127.0.0.1");
        munge_fixture_cred_ttl(&job, nobody_uid, nobody_gid, NULL, 1);
        /* munged calls it expired once its TTL and a second of skew are past. */
        sleep(3);
        if (landfs_roots_add(&set.roots, at("scratch")) < 0 || lander_new(&plain, &set) < 0)
                abort();
        req.session = job;
        ok(open_session(plain, 1) == 0 && reply.error.err == ETIME && strstr(reply.error.text, "key_file"),
           "past its TTL, no key_file: refused, saying why (%s)", reply.error.text);
        set.keyed = true;
        set.max_age = 3600;
        if (landfs_roots_add(&set.roots, at("scratch")) < 0 || lander_new(&keyed, &set) < 0)
                abort();
        req.session = job;
        ok(open_session(keyed, 1) != 0 && reply.session_ok.uid == nobody_uid,
           "past its TTL, keyed, within landing_max_age: the job's session, as nobody");
        req.session = job;
        snprintf(req.session.dest, sizeof(req.session.dest), "%s", at("scratch/nobody/other"));
        ok(open_session(keyed, 1) == 0 && reply.error.err == EPERM,
           "the same expired credential for another DEST: refused (%s)", reply.error.text);
        set.max_age = 2;
        if (landfs_roots_add(&set.roots, at("scratch")) < 0 || lander_new(&young, &set) < 0)
                abort();
        req.session = job;
        ok(open_session(young, 1) == 0 && reply.error.err == ETIME && strstr(reply.error.text, "landing_max_age"),
           "made longer ago than landing_max_age: refused (%s)", reply.error.text);
        lander_free(plain);
        lander_free(keyed);
        lander_free(young);
        landfs_roots_free(&set.roots);
}

static void test_pull(struct lander *l)
{
        uint64_t s;
        int fd = -1;
        char buf[16] = "";

        session_fill(&req.session, LANDMSG_PULL, "scratch/nobody/run1/sub/hello.txt", "127.0.0.1");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        s = open_session(l, 1);
        ok(s != 0, "a reading session for one file");
        ok(op(l, 1, LANDMSG_OPEN_READ, s, "", 0, NULL, -1, &fd) == 0 && fd >= 0 && read(fd, buf, sizeof(buf)) == 3 &&
           memcmp(buf, "v2\n", 3) == 0, "OPEN_READ: the file (replaced: v2), read through the descriptor");
        safe_close(fd);
        is_int(op(l, 1, LANDMSG_TMPFILE, s, "", 0600, NULL, -1, &fd), -EPERM, "TMPFILE in a reading session: refused");
        is_int(op(l, 1, LANDMSG_LOOK, s, "", 0, "x", -1, &fd), -EPERM, "LOOK in a reading session: refused");
        lander_conn_closed(l, 1);

        /* The daemon user's 0600 file: not nobody's to read. */
        int wfd = open(at("scratch/daemon/secret"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (wfd < 0 || write(wfd, "s", 1) != 1 || fchown(wfd, 1, 1) < 0)
                abort();
        close(wfd);
        chmod(at("scratch/daemon"), 0755);
        session_fill(&req.session, LANDMSG_PULL, "scratch/daemon/secret", "127.0.0.1");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        s = open_session(l, 1);
        is_int(op(l, 1, LANDMSG_OPEN_READ, s, "", 0, NULL, -1, &fd), -EACCES, "another user's 0600 file: EACCES");
        ok(fd == -1, "and no descriptor");
        lander_conn_closed(l, 1);
}

/* A file @rel of @data, @mode, nobody's (the tree a pull walks). */
static void mkfile(const char *rel, const char *data, mode_t mode, uid_t uid)
{
        int fd = open(at(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data) || fchown(fd, uid, uid == 1 ? 1 : nobody_gid) < 0 ||
            fchmod(fd, mode) < 0)
                abort();
        close(fd);
}

/* A TREE session for DEST @rel: OPEN_READ it, then WALK it. The walker's
 * socket, or -1 (@r the refusal). */
static uint32_t walker_flags;   /* the next walker_of's OPEN_READ and WALK read these (get -X, -A) */

static int walker_of(struct lander *l, const char *rel, bool tree, int *r, int *dirfd)
{
        uint64_t s;
        int fd = -1;

        session_fill(&req.session, LANDMSG_PULL, rel, "127.0.0.1");
        req.session.flags = tree ? LANDMSG_SESSION_TREE : 0;
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        s = open_session(l, 1);
        req.type = LANDMSG_OPEN_READ;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = walker_flags;
        *r = ask(l, 1, -1, dirfd);
        if (*r < 0)
                return -1;
        req.type = LANDMSG_WALK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = walker_flags;
        *r = ask(l, 1, -1, &fd);
        return *r < 0 ? -1 : fd;
}

static void test_pull_tree(struct lander *l)
{
        static struct landmsg m;
        struct stat st;
        char seen[16384] = "", buf[16];
        int ws, dfd = -1, fd, r, files = 0, entries = 0;

        mk("scratch/nobody/pt", 0750, nobody_uid, nobody_gid);
        mk("scratch/nobody/pt/.hidden", 0700, nobody_uid, nobody_gid);
        mkfile("scratch/nobody/pt/.hidden/ro.txt", "ro\n", 0444, nobody_uid);
        mkfile("scratch/nobody/pt/a.dat", "abcd", 0640, nobody_uid);
        if (link(at("scratch/nobody/pt/a.dat"), at("scratch/nobody/pt/.hidden/a-again")) < 0 ||
            symlink("a.dat", at("scratch/nobody/pt/l")) < 0 || lchown(at("scratch/nobody/pt/l"), nobody_uid, nobody_gid) < 0)
                abort();

        /* Without -r in the credential: a directory is neither opened nor walked. */
        ws = walker_of(l, "scratch/nobody/pt", false, &r, &dfd);
        ok(ws < 0 && r == -EISDIR && strstr(reply.error.text, "get -r"), "a directory in a file's pull: EISDIR (%s)",
           reply.error.text);
        lander_conn_closed(l, 1);

        ws = walker_of(l, "scratch/nobody/pt", true, &r, &dfd);
        ok(ws >= 0 && dfd >= 0 && fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode),
           "with -r: OPEN_READ gives the directory, WALK the walker's socket");
        safe_close(dfd);
        ok(ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_HEAD && fd < 0 &&
           m.walk_head.entries == 5 && (m.walk_head.bytes == 3 + 4 + 5 + strlen("pt/a.dat") ||
                                        m.walk_head.bytes == 3 + 4 + 5 + strlen("pt/.hidden/a-again")),
           "the count first: 5 entries, their bytes (a hard link's: its file's name)");
        while (ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_ENTRY) {
                const struct landmsg_walk_entry *e = &m.walk_entry;

                entries++;
                if (e->kind == LANDMSG_WALK_FILE && fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                    (size_t)pread(fd, buf, sizeof(buf), 0) == e->size)
                        files++;
                snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%d:%s:%o%s%s", entries > 1 ? " " : "",
                         e->kind, e->path, (unsigned int)e->mode, e->target[0] ? ">" : "", e->target);
                safe_close(fd);
        }
        /* readdir order is the file system's: look for each. */
        ok(ws >= 0 && m.type == LANDMSG_OK && entries == 5 && files == 2, "then 5 entries (2 files, readable "
           "through their descriptors), then OK: %s", seen);
        ok(strstr(seen, "2:.hidden:700") && strstr(seen, "1:.hidden/ro.txt:444") && strstr(seen, "3:l:0>a.dat") &&
           ((strstr(seen, "1:a.dat:640") && strstr(seen, "4:.hidden/a-again:0>a.dat")) ||
            (strstr(seen, "1:.hidden/a-again:640") && strstr(seen, "4:a.dat:0>.hidden/a-again"))),
           "a dotted directory, a read-only file, a symlink and a hard link, as they are");
        safe_close(ws);
        lander_conn_closed(l, 1);

        /* What the user may not read, found while counting: nothing goes. */
        mkfile("scratch/nobody/pt/theirs", "x", 0600, 1);
        ws = walker_of(l, "scratch/nobody/pt", true, &r, &dfd);
        safe_close(dfd);
        ok(ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_ERROR && m.error.err == EACCES &&
           strstr(m.error.where, "pt/theirs"), "another user's 0600 file in it: ERROR EACCES before the count (%s)",
           m.error.where);
        safe_close(ws);
        lander_conn_closed(l, 1);
        unlink(at("scratch/nobody/pt/theirs"));
        if (mkfifo(at("scratch/nobody/pt/fifo"), 0644) < 0 || lchown(at("scratch/nobody/pt/fifo"), nobody_uid, nobody_gid) < 0)
                abort();
        ws = walker_of(l, "scratch/nobody/pt", true, &r, &dfd);
        safe_close(dfd);
        ok(ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_ERROR && strstr(m.error.where, "pt/fifo") &&
           strstr(m.error.text, "a FIFO"), "a FIFO in it: refused, named (%s: %s)", m.error.where, m.error.text);
        safe_close(ws);
        lander_conn_closed(l, 1);
        unlink(at("scratch/nobody/pt/fifo"));

        /* WALK of a file's session: refused. */
        session_fill(&req.session, LANDMSG_PULL, "scratch/nobody/pt/a.dat", "127.0.0.1");
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        is_int(op(l, 1, LANDMSG_WALK, open_session(l, 1), "", 0, NULL, -1, &fd), -EPERM,
               "WALK without -r in the credential: EPERM");
        lander_conn_closed(l, 1);
}


static uint8_t push_flags;      /* the next push_session's (LANDMSG_SESSION_*) */
/* A tree into DEST as "inner" (LANDMSG_OP_INTO), kept up to date: its
 * staging directory (MKDIR) or its merging PUBLISH. */
static int into_op(struct lander *l, uint16_t type, uint64_t session)
{
        req.type = type;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = session;
        req.op.mode = type == LANDMSG_MKDIR ? 0700 : 0;
        req.op.flags = LANDMSG_OP_INTO | (type == LANDMSG_MKDIR ? LANDMSG_OP_STAGE
                                                                : LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_REPLACE);
        strcpy(req.op.leaf, "inner");
        return ask(l, 1, -1, NULL);
}

static uint64_t push_session(struct lander *l, const char *dest_rel);

/* A dry run's WALK (send -n --delete, version 8): the names there, as the user. */
static void test_dry_names(struct lander *l)
{
        static struct landmsg m;
        char seen[4096] = "";
        uint64_t s;
        int ws = -1, fd, n = 0;

        mk("scratch/nobody/dl", 0755, nobody_uid, nobody_gid);
        mk("scratch/nobody/dl/sub", 0700, nobody_uid, nobody_gid);
        mk("scratch/nobody/dl/sub/deeper", 0500, nobody_uid, nobody_gid);
        mkfile("scratch/nobody/dl/a.txt", "a", 0444, nobody_uid);
        mkfile("scratch/nobody/dl/sub/theirs", "t", 0600, 1);
        if (mkfifo(at("scratch/nobody/dl/fifo"), 0644) < 0 ||
            lchown(at("scratch/nobody/dl/fifo"), nobody_uid, nobody_gid) < 0 ||
            symlink("a.txt", at("scratch/nobody/dl/ln")) < 0 ||
            lchown(at("scratch/nobody/dl/ln"), nobody_uid, nobody_gid) < 0)
                abort();
        push_flags = LANDMSG_SESSION_DRY | LANDMSG_SESSION_SYNC | LANDMSG_SESSION_DELETE;
        s = push_session(l, "scratch/nobody");
        push_flags = 0;
        ok(op(l, 1, LANDMSG_WALK, s, "dl", 0, NULL, -1, &ws) == 0 && reply.type == LANDMSG_FD && ws >= 0,
           "WALK dl in a dry run made for --delete: the walker's socket (%s)", reply.error.text);
        while (ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_ENTRY) {
                n++;
                snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), " %d:%.64s%s%.64s", m.walk_entry.kind,
                         m.walk_entry.path, m.walk_entry.target[0] ? ">" : "", m.walk_entry.target);
                if (fd >= 0)
                        n += 100;       /* no descriptor ever comes */
                safe_close(fd);
        }
        /* readdir's order: look for each, and each directory's end after its entries. */
        ok(m.type == LANDMSG_OK && n == 8, "8 names (no count, no descriptor), then OK:%s", seen);
        strcat(seen, " ");
        ok(strstr(seen, " 1:a.txt ") && strstr(seen, " 5:fifo ") && strstr(seen, " 3:ln>a.txt ") &&
           strstr(seen, " 1:sub/theirs ") && strstr(seen, " 2:sub/deeper 6:sub/deeper ") &&
           strstr(seen, " 2:sub ") && strstr(seen, " 6:sub ") > strstr(seen, " 1:sub/theirs ") &&
           strstr(seen, " 6:sub ") > strstr(seen, " 6:sub/deeper "),
           "a read-only file, a FIFO, a symlink, another's file it may not read, a directory it may not write");
        safe_close(ws);
        /* One it may not list: what is in it is unknown, and said. */
        if (chmod(at("scratch/nobody/dl/sub"), 0300) < 0)
                abort();
        ok(op(l, 1, LANDMSG_WALK, s, "dl", 0, NULL, -1, &ws) == 0 && ws >= 0, "WALK dl again, sub not readable");
        while (ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_ENTRY)
                safe_close(fd);
        ok(m.type == LANDMSG_ERROR && m.error.err == EACCES && strstr(m.error.where, "dl/sub"),
           "ERROR EACCES naming dl/sub (%s: %s)", m.error.where, m.error.text);
        safe_close(ws);
        is_int(op(l, 1, LANDMSG_WALK, s, "dl/../..", 0, NULL, -1, &ws), -EINVAL, "WALK of dl/../..: refused");
        lander_conn_closed(l, 1);
        if (chmod(at("scratch/nobody/dl/sub"), 0700) < 0)
                abort();
}

/* stage_op TYPE SESSION PATH LEAF TARGET MODE: an op in the staging directory. */
static int stage_op(struct lander *l, uint16_t type, uint64_t session, const char *path, const char *leaf,
                    const char *target, mode_t mode, int fd, int *rfd)
{
        req.type = type;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = session;
        req.op.flags = type == LANDMSG_PUBLISH || type == LANDMSG_DISCARD ? 0 : LANDMSG_OP_STAGE;
        req.op.mode = mode;
        snprintf(req.op.path, sizeof(req.op.path), "%s", path);
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%s", leaf ? leaf : "");
        snprintf(req.op.target, sizeof(req.op.target), "%s", target ? target : "");
        return ask(l, 1, fd, rfd);
}

static uint64_t push_session(struct lander *l, const char *dest_rel)
{
        session_fill(&req.session, LANDMSG_PUSH, dest_rel, "127.0.0.1");
        req.session.flags = push_flags;
        munge_fixture_cred(&req.session, nobody_uid, nobody_gid, NULL);
        return open_session(l, 1);
}

/* The staging directory of the session whose token is in @token. */
static bool a_stage_is_there(void)
{
        DIR *d = opendir(at("scratch/nobody"));
        struct dirent *de;
        bool found = false;

        while (d && (de = readdir(d)))
                found = found || strncmp(de->d_name, ".rdmaxfer-stage-", 16) == 0;
        if (d)
                closedir(d);
        return found;
}

/* PUBLISH of session @s with @flags: ask()'s answer. */
static int publish(struct lander *l, uint64_t s, uint32_t flags)
{
        req.type = LANDMSG_PUBLISH;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = flags;
        return ask(l, 1, -1, NULL);
}

/* The staged directory @path of session @s made read-only (0555), its
 * mtime 1234567890, as the end of a tree does: ask()'s answer. */
static int stage_dir_readonly(struct lander *l, uint64_t s, const char *path)
{
        req.type = LANDMSG_SETATTR;
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.setattr.session = s;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE;
        req.setattr.mode = 0555;
        req.setattr.mtime_ns = 1000000000ull * 1234567890;
        snprintf(req.setattr.path, sizeof(req.setattr.path), "%s", path);
        return ask(l, 1, -1, NULL);
}

static void test_tree(struct lander *l)
{
        struct stat st, st2;
        char target[64] = "";
        uint64_t s;
        int fd = -1;

        s = push_session(l, "scratch/nobody/tree1");
        ok(s != 0, "a session for a tree, DEST scratch/nobody/tree1");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL), 0, "its staging directory made");
        ok(a_stage_is_there(), "beside DEST, named .rdmaxfer-stage-...");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "a/b", NULL, NULL, 0755, -1, NULL), -ENOENT,
               "a/b before a: ENOENT (an entry's directory comes first)");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "a", NULL, NULL, 0755, -1, NULL), 0, "a in it");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "a/b", NULL, NULL, 0755, -1, NULL), 0, "a/b in it");
        ok(stage_op(l, LANDMSG_TMPFILE, s, "a/b", NULL, NULL, 0640, -1, &fd) == 0 && fd >= 0 &&
           write(fd, "tree\n", 5) == 5, "a file's data");
        req.op.flags = LANDMSG_OP_STAGE;
        is_int(stage_op(l, LANDMSG_LINK, s, "a/b", "f", NULL, 0, fd, NULL), 0, "linked as a/b/f");
        safe_close(fd);
        is_int(stage_op(l, LANDMSG_SYMLINK, s, "a", "l", "b/f", 0, -1, NULL), 0, "a symlink a/l -> b/f");
        is_int(stage_op(l, LANDMSG_HARDLINK, s, "a", "h", "a/b/f", 0, -1, NULL), 0, "a hard link a/h to a/b/f");
        is_int(stage_dir_readonly(l, s, "a/b"), 0, "a/b made read-only, its mtime set, by its path");
        ok(lstat(at("scratch/nobody/tree1"), &st) < 0, "nothing at DEST before PUBLISH");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), 0, "PUBLISH");
        ok(!a_stage_is_there(), "the staging directory is DEST now");
        ok(stat(at("scratch/nobody/tree1/a/b/f"), &st) == 0 && st.st_uid == nobody_uid && st.st_size == 5,
           "DEST/a/b/f, nobody's");
        ok(lstat(at("scratch/nobody/tree1/a/h"), &st2) == 0 && st2.st_ino == st.st_ino && st2.st_nlink == 2,
           "DEST/a/h is the same file");
        ok(lstat(at("scratch/nobody/tree1/a/l"), &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid == nobody_uid &&
           readlink(at("scratch/nobody/tree1/a/l"), target, sizeof(target) - 1) == 3 && strcmp(target, "b/f") == 0,
           "DEST/a/l a symlink of nobody's to b/f");
        ok(stat(at("scratch/nobody/tree1/a/b"), &st) == 0 && (st.st_mode & 07777) == 0555 &&
           st.st_mtim.tv_sec == 1234567890, "DEST/a/b 0555, its mtime");
        lander_conn_closed(l, 1);

        /* Another job to the same DEST: refused unless replacing. */
        s = push_session(l, "scratch/nobody/tree1");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", "tree1", NULL, 0700, -1, NULL), -EEXIST,
               "its staging directory, to be named tree1: EEXIST, before any data");
        ok(strcmp(reply.error.where, at("scratch/nobody/tree1")) == 0, "naming DEST: %s", reply.error.where);
        stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL);
        stage_op(l, LANDMSG_MKDIR, s, "new", NULL, NULL, 0755, -1, NULL);
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), -EEXIST, "PUBLISH over DEST: EEXIST");
        ok(strcmp(reply.error.where, at("scratch/nobody/tree1")) == 0 && strstr(reply.error.text, "replacing"),
           "naming DEST: %s", reply.error.text);
        ok(stat(at("scratch/nobody/tree1/a/b/f"), &st) == 0, "DEST as it was");
        req.op.flags = LANDMSG_PUBLISH_REPLACE;
        is_int(ask(l, 1, -1, NULL), -EPERM, "PUBLISH with REPLACE, the credential not allowing it: EPERM");
        ok(strstr(reply.error.text, "--overwrite") != NULL, "saying so: %s", reply.error.text);
        is_int(stage_op(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "that job given up");
        lander_conn_closed(l, 1);
        push_flags = LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/tree1");
        push_flags = 0;
        stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL);
        stage_op(l, LANDMSG_MKDIR, s, "new", NULL, NULL, 0755, -1, NULL);
        is_int(publish(l, s, LANDMSG_PUBLISH_REPLACE), 0,
               "PUBLISH with REPLACE, the credential allowing it (--overwrite)");
        ok(stat(at("scratch/nobody/tree1/new"), &st) == 0 && lstat(at("scratch/nobody/tree1/a"), &st) < 0,
           "DEST is the new tree");
        ok(!a_stage_is_there(), "and the old one (a read-only directory in it) is gone");
        lander_conn_closed(l, 1);

        /* A job given up: its staging directory goes, however locked. */
        s = push_session(l, "scratch/nobody/tree2");
        stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL);
        stage_op(l, LANDMSG_MKDIR, s, "x", NULL, NULL, 0755, -1, NULL);
        stage_op(l, LANDMSG_MKDIR, s, "x/y", NULL, NULL, 0755, -1, NULL);
        req.type = LANDMSG_SETATTR;
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.setattr.session = s;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE;
        strcpy(req.setattr.path, "x");
        ask(l, 1, -1, NULL);
        ok(a_stage_is_there(), "a staging directory with a directory of mode 0000 in it");
        is_int(stage_op(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "DISCARD");
        ok(!a_stage_is_there() && lstat(at("scratch/nobody/tree2"), &st) < 0, "gone, and nothing at DEST");
        lander_conn_closed(l, 1);

        /* DEST a landing root itself: no sibling to stage in. */
        s = push_session(l, "scratch");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL), -EXDEV,
               "a tree as the landing root itself: EXDEV (%s)", reply.error.text);
        lander_conn_closed(l, 1);
}

/* The staging directory's name beneath scratch/nobody into @out, or false. */
static bool stage_name_of(char out[static 256])
{
        DIR *d = opendir(at("scratch/nobody"));
        struct dirent *de;
        bool found = false;

        while (d && !found && (de = readdir(d)))
                if (strncmp(de->d_name, ".rdmaxfer-stage-", 16) == 0) {
                        snprintf(out, 256, "%s", de->d_name);
                        found = true;
                }
        if (d)
                closedir(d);
        return found;
}

/*
 * The staging directory is held by the session: the user moving it away
 * (here root plays the user) takes what follows with it, never anywhere
 * else, and PUBLISH refuses what is under its name then: another
 * directory, a symlink, nothing. And the lander stays the user between
 * one session's requests, itself again once idle.
 */
static void test_stage_held(struct lander *l)
{
        char name[256], from[LANDFS_PATH_MAX], to[LANDFS_PATH_MAX];
        struct stat st;
        uint64_t s;
        int fd = -1;

        s = push_session(l, "scratch/nobody/tree3");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL), 0, "a tree staged");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "a", NULL, NULL, 0755, -1, NULL), 0, "a in it");
        ok(stage_name_of(name), "its staging directory: %s", name);
        snprintf(from, sizeof(from), "%s", at("scratch/nobody"));
        snprintf(from + strlen(from), sizeof(from) - strlen(from), "/%s", name);
        snprintf(to, sizeof(to), "%s", at("scratch/nobody/moved"));
        ok(rename(from, to) == 0, "the user moves it away");
        ok(stage_op(l, LANDMSG_TMPFILE, s, "a", NULL, NULL, 0600, -1, &fd) == 0 && fd >= 0 &&
           write(fd, "m\n", 2) == 2, "a file made in a, where the staging directory is now");
        is_int(stage_op(l, LANDMSG_LINK, s, "a", "f", NULL, 0, fd, NULL), 0, "linked as a/f");
        safe_close(fd);
        ok(stat(at("scratch/nobody/moved/a/f"), &st) == 0 && st.st_uid == nobody_uid,
           "in the moved directory, nobody's: the held one, not one by its old name");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), -ESTALE,
               "PUBLISH with nothing under the staging name: ESTALE");
        ok(mkdir(from, 0700) == 0 && chown(from, nobody_uid, nobody_gid) == 0, "another directory of the user's "
           "under the staging name");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), -ESTALE,
               "PUBLISH of it: ESTALE (%s)", reply.error.text);
        ok(rmdir(from) == 0 && symlink("moved", from) == 0, "a symlink to the held one under the staging name");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), -ESTALE,
               "PUBLISH through it: ESTALE, not followed");
        ok(lstat(at("scratch/nobody/tree3"), &st) < 0, "nothing at DEST");
        ok(unlink(from) == 0 && rename(to, from) == 0, "moved back");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), 0, "PUBLISH: the held one again");
        ok(stat(at("scratch/nobody/tree3/a/f"), &st) == 0, "DEST/a/f");

        /* One session's requests back to back: the user between them. */
        s = push_session(l, "scratch/nobody/tree4");
        req.type = LANDMSG_MKDIR;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE;
        req.op.mode = 0700;
        lander_handle(l, 1, &req, -1, &reply, &fd);
        ok(reply.type == LANDMSG_OK && (uid_t)setfsuid((uid_t)-1) == nobody_uid &&
           (gid_t)setfsgid((gid_t)-1) == nobody_gid, "after a request, still nobody (fsuid, fsgid)");
        lander_idle(l);
        ok(setfsuid((uid_t)-1) == 0 && setfsgid((gid_t)-1) == 0 && getgroups(0, NULL) == 0,
           "idle: root again, no supplementary groups");
        lander_handle(l, 1, &req, -1, &reply, &fd);
        lander_conn_closed(l, 1);
        ok(setfsuid((uid_t)-1) == 0, "a session that ends leaves the lander itself");
}

/* A tree's op for a BATCH of session @s: @type in @dir, named @leaf. */
static uint32_t batch_link_flags;       /* more of a LINK's flags (LANDMSG_LINK_KEEP_*) */

static void batch_add(uint64_t s, uint16_t type, const char *dir, const char *leaf, mode_t mode)
{
        static struct landmsg_op op;

        memset(&op, 0, sizeof(op));
        op.session = s;
        op.flags = LANDMSG_OP_STAGE |
                   (type == LANDMSG_LINK ? LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | batch_link_flags : 0);
        op.mode = mode;
        snprintf(op.path, sizeof(op.path), "%s", dir);
        snprintf(op.leaf, sizeof(op.leaf), "%s", leaf ? leaf : "");
        if (type == LANDMSG_LINK)
                strcpy(op.target, "0123abcd");
        if (landmsg_batch_add(&req, type, &op) < 0)
                abort();
}

/* A BATCH: a chunk's MKDIRs and TMPFILEs in one request, its LINKs in another. */
static void test_batch(struct lander *l)
{
        int fds[LANDMSG_BATCH_MAX], rfds[LANDMSG_BATCH_MAX], out[LANDMSG_BATCH_MAX];
        size_t n = 0;
        struct stat st;
        char name[16], hex[16] = "";
        bool all = true;
        uint64_t s;

        s = push_session(l, "scratch/nobody/tree5");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL), 0, "a tree staged");
        landmsg_batch_init(&req, s);
        batch_add(s, LANDMSG_MKDIR, "d", NULL, 0700);
        /* Half made with their final mode already (the LINK leaves it), half 0600. */
        for (int i = 0; i < 100; i++)
                batch_add(s, LANDMSG_TMPFILE, i % 2 ? "d" : "", NULL, i % 2 ? 0640 : 0600);
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 0, &reply, rfds, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_FDS && reply.fds.count == 100 && n == 100 && reply.id == req.id,
           "a BATCH of a MKDIR and 100 TMPFILEs: FDS, 100 descriptors");
        ok(stat(at("scratch/nobody/tree5"), &st) < 0, "(nothing at DEST yet)");
        landmsg_batch_init(&req, s);
        for (int i = 0; i < 100; i++) {
                snprintf(name, sizeof(name), "f%03d", i);
                all = all && write(rfds[i], name, 4) == 4;
                batch_add(s, LANDMSG_LINK, i % 2 ? "d" : "", name, 0640);
                fds[i] = fcntl(rfds[i], F_DUPFD_CLOEXEC, 3);
        }
        ok(all, "written");
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 99, &reply, out, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_ERROR && reply.error.err == EBADF && n == 0, "its LINKs with a descriptor short: "
           "EBADF (%s)", reply.error.text);
        for (int i = 0; i < 100; i++)
                fds[i] = fcntl(rfds[i], F_DUPFD_CLOEXEC, 3);
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 100, &reply, out, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_FDS && reply.fds.count == 0 && n == 0, "the LINKs with theirs: FDS, none");
        for (int i = 0; i < 100; i++)
                safe_close(rfds[i]);
        all = true;
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), 0, "PUBLISH");
        for (int i = 0; i < 100; i++) {
                char p[64];

                snprintf(p, sizeof(p), "scratch/nobody/tree5/%sf%03d", i % 2 ? "d/" : "", i);
                all = all && stat(at(p), &st) == 0 && st.st_uid == nobody_uid && st.st_size == 4 &&
                      (st.st_mode & 07777) == 0640;
        }
        ok(all, "every file in place, nobody's, 0640, its data");
        ok(getxattr(at("scratch/nobody/tree5/d/f001"), "user.rdmaxfer.digest", hex, sizeof(hex) - 1) == 8 ||
           errno == ENOTSUP, "with its digest: %s", hex);
        lander_conn_closed(l, 1);

        /* Refused midway: what came before is made, nothing after, no descriptor. */
        s = push_session(l, "scratch/nobody/tree6");
        stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL);
        landmsg_batch_init(&req, s);
        batch_add(s, LANDMSG_MKDIR, "a", NULL, 0700);
        batch_add(s, LANDMSG_TMPFILE, "a", NULL, 0600);
        batch_add(s, LANDMSG_MKDIR, "a", NULL, 0700);
        batch_add(s, LANDMSG_MKDIR, "b", NULL, 0700);
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 0, &reply, rfds, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_ERROR && reply.error.err == EEXIST && n == 0,
           "a BATCH making a twice: the second's EEXIST, no descriptor (%s)", reply.error.where);
        landmsg_batch_init(&req, s);
        batch_add(s, LANDMSG_MKDIR, "b", NULL, 0700);
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 0, &reply, rfds, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_FDS, "b was not made: made now");
        req.id++;
        lander_handle_batch(l, 2, &req, fds, 0, &reply, rfds, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_ERROR && reply.error.err == ESRCH, "another connection's session: ESRCH");
        lander_conn_closed(l, 1);
}

/* stage_into TYPE SESSION PATH LEAF TARGET MODE: an op in a staging directory in DEST. */
static int stage_into(struct lander *l, uint16_t type, uint64_t session, const char *path, const char *leaf,
                      const char *target, mode_t mode, int fd, int *rfd)
{
        req.type = type;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = session;
        req.op.flags = LANDMSG_OP_INTO | (type == LANDMSG_PUBLISH || type == LANDMSG_DISCARD ? 0 : LANDMSG_OP_STAGE);
        req.op.mode = mode;
        snprintf(req.op.path, sizeof(req.op.path), "%s", path);
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%s", leaf ? leaf : "");
        snprintf(req.op.target, sizeof(req.op.target), "%s", target ? target : "");
        return ask(l, 1, fd, rfd);
}

/*
 * A tree landing in DEST, a directory (xferctl send -r run1 PEER:/DEST):
 * staged in DEST, published as DEST/run1; the name refused before any
 * data when taken; an earlier attempt's staging directory cleared; the
 * tree's own symlinks never followed by a later request; mtimes of files
 * and symlinks as sent.
 */
static void test_tree_into(struct lander *l)
{
        const uint64_t t = 1000000000ull * 1234567890 + 5;
        char target[64] = "";
        struct stat st;
        uint64_t s;
        int fd = -1;

        mk("scratch/nobody/in", 0755, nobody_uid, nobody_gid);
        mk("scratch/nobody/in/taken", 0755, nobody_uid, nobody_gid);
        s = push_session(l, "scratch/nobody/in");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "", "taken", NULL, 0700, -1, NULL), -EEXIST,
               "a tree to be DEST/taken, which is there: EEXIST before any data");
        ok(strcmp(reply.error.where, at("scratch/nobody/in/taken")) == 0, "naming DEST/taken: %s",
           reply.error.where);
        is_int(stage_into(l, LANDMSG_MKDIR, s, "", "run1", NULL, 0700, -1, NULL), 0, "staged in DEST, to be run1");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "d", NULL, NULL, 0700, -1, NULL), 0, "d in it");
        is_int(stage_into(l, LANDMSG_SYMLINK, s, "", "esc", "/", 0, -1, NULL), 0, "a symlink esc -> /");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "esc/x", NULL, NULL, 0700, -1, NULL), -ELOOP,
               "MKDIR through it: ELOOP (%s)", reply.error.text);
        is_int(stage_into(l, LANDMSG_TMPFILE, s, "esc", NULL, NULL, 0600, -1, &fd), -ELOOP,
               "a file through it: ELOOP");
        ok(fd == -1, "and no descriptor");
        is_int(stage_into(l, LANDMSG_SYMLINK, s, "esc", "y", "z", 0, -1, NULL), -ELOOP, "a symlink through it: ELOOP");
        ok(stage_into(l, LANDMSG_TMPFILE, s, "d", NULL, NULL, 0600, -1, &fd) == 0 && fd >= 0 &&
           write(fd, "in\n", 3) == 3, "a file's data");
        req.type = LANDMSG_LINK;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO | LANDMSG_LINK_MODE | LANDMSG_LINK_MTIME;
        req.op.mode = 0444;
        req.op.mtime_ns = t;
        snprintf(req.op.leaf, sizeof(req.op.leaf), "f");
        is_int(ask(l, 1, fd, NULL), 0, "linked as d/f, read-only, its mtime");
        safe_close(fd);
        is_int(stage_into(l, LANDMSG_HARDLINK, s, "", "h", "esc/f", 0, -1, NULL), -ELOOP,
               "a hard link to a file through the symlink: ELOOP");
        is_int(stage_into(l, LANDMSG_HARDLINK, s, "", "h", "d/f", 0, -1, NULL), 0, "a hard link h to d/f");
        req.type = LANDMSG_SYMLINK;
        snprintf(req.op.leaf, sizeof(req.op.leaf), "l");
        snprintf(req.op.target, sizeof(req.op.target), "d/f");
        req.op.mtime_ns = t;
        is_int(ask(l, 1, -1, NULL), 0, "a symlink l -> d/f with its mtime");
        req.type = LANDMSG_SETATTR;
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.setattr.session = s;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE | LANDMSG_OP_INTO;
        req.setattr.mode = 0500;
        strcpy(req.setattr.path, "d");
        is_int(ask(l, 1, -1, NULL), 0, "d made 0500, by its path");
        ok(lstat(at("scratch/nobody/in/run1"), &st) < 0, "nothing at DEST/run1 before PUBLISH");
        is_int(stage_into(l, LANDMSG_PUBLISH, s, "", "run1", NULL, 0, -1, NULL), 0, "PUBLISH as run1");
        ok(stat(at("scratch/nobody/in/run1/d/f"), &st) == 0 && st.st_uid == nobody_uid &&
           (st.st_mode & 07777) == 0444 && st.st_mtim.tv_sec == 1234567890 && st.st_mtim.tv_nsec == 5 &&
           st.st_nlink == 2, "DEST/run1/d/f nobody's, 0444, its mtime, two names");
        ok(lstat(at("scratch/nobody/in/run1/l"), &st) == 0 && S_ISLNK(st.st_mode) &&
           st.st_mtim.tv_sec == 1234567890 &&
           readlink(at("scratch/nobody/in/run1/l"), target, sizeof(target) - 1) == 3, "DEST/run1/l, its mtime");
        ok(stat(at("scratch/nobody/in/run1/d"), &st) == 0 && (st.st_mode & 07777) == 0500, "DEST/run1/d 0500");
        lander_conn_closed(l, 1);

        /* The same job again, an earlier attempt's staging directory left: made afresh. */
        s = push_session(l, "scratch/nobody/in");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "", "run2", NULL, 0700, -1, NULL), 0, "run2 staged");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "old", NULL, NULL, 0700, -1, NULL), 0, "an entry in it");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "", "run2", NULL, 0700, -1, NULL), 0, "staged again");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "old", NULL, NULL, 0700, -1, NULL), 0, "the entry made anew: "
               "the last attempt's is gone");
        is_int(stage_into(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "DISCARD");
        ok(lstat(at("scratch/nobody/in/run2"), &st) < 0, "nothing published");
        lander_conn_closed(l, 1);

        /* DEST not there: nothing to stage in. */
        s = push_session(l, "scratch/nobody/none");
        is_int(stage_into(l, LANDMSG_MKDIR, s, "", "run1", NULL, 0700, -1, NULL), -ENOENT,
               "a tree into a DEST that is not there: ENOENT");
        ok(strcmp(reply.error.where, at("scratch/nobody/none")) == 0, "at DEST: %s", reply.error.where);
        ok(lstat(at("scratch/nobody/none"), &st) < 0, "and DEST not made");
        lander_conn_closed(l, 1);
}

/*
 * One file, as xferctl send FILE PEER:/PATH lands it: into DEST when it is
 * a directory; else as DEST itself, made in DEST's parent under DEST's own
 * name and no other; a name that exists refused before any data.
 */
static void test_file_dest(struct lander *l)
{
        struct stat st;
        uint64_t s;
        int fd = -1, r;

        mk("scratch/nobody/inbox", 0755, nobody_uid, nobody_gid);
        s = push_session(l, "scratch/nobody/inbox");
        r = op(l, 1, LANDMSG_TMPFILE, s, "", 0600, "a.dat", -1, &fd);
        ok(r == 0 && fd >= 0, "DEST a directory: TMPFILE in it, its name a.dat free");
        req.type = LANDMSG_LINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        strcpy(req.op.leaf, "a.dat");
        req.op.flags = LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_LINK_SYNC;
        req.op.mode = 04444;
        strcpy(req.op.target, "00112233445566778899aabbccddeeff");
        is_int(ask(l, 1, fd, NULL), 0, "linked as DEST/a.dat with mode 04444 and a digest, synced");
        {
                char xv[40] = "";

                ok(stat(at("scratch/nobody/inbox/a.dat"), &st) == 0 && (st.st_mode & 07777) == 0444 &&
                   st.st_uid == nobody_uid, "a.dat: nobody's, read-only, the setuid bit dropped");
                ok(getxattr(at("scratch/nobody/inbox/a.dat"), "user.rdmaxfer.digest", xv, sizeof(xv)) == 32 &&
                   memcmp(xv, "00112233445566778899aabbccddeeff", 32) == 0,
                   "its digest xattr, set before the read-only mode");
        }
        safe_close(fd);
        is_int(op(l, 1, LANDMSG_TMPFILE, s, "", 0600, "a.dat", -1, &fd), -EEXIST,
               "again with the name a.dat: EEXIST, before any data");
        ok(fd < 0 && strstr(reply.error.text, "a.dat exists"), "saying so: %s", reply.error.text);
        ok(op(l, 1, LANDMSG_TMPFILE, s, "", 0600, NULL, -1, &fd) == 0 && fd >= 0, "a file without a name yet");
        req.type = LANDMSG_LINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_LINK_REPLACE;
        strcpy(req.op.leaf, "a.dat");
        is_int(ask(l, 1, fd, NULL), -EPERM, "LINK over a.dat with REPLACE, not in the credential: EPERM");
        safe_close(fd);
        /* Sync: what has a name there, as nobody sees it; only where
         * the credential says --sync. */
        is_int(op(l, 1, LANDMSG_LOOK, s, "", 0, "a.dat", -1, &fd), -EPERM,
               "LOOK without --sync in the credential: EPERM");
        is_int(op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL), 0, "END");
        push_flags = LANDMSG_SESSION_SYNC;
        s = push_session(l, "scratch/nobody/inbox");
        push_flags = 0;
        ok(s != 0, "a session whose credential says --sync");
        r = op(l, 1, LANDMSG_LOOK, s, "", 0, "a.dat", -1, &fd);
        ok(r == 0 && reply.type == LANDMSG_FD && fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY, "LOOK a.dat: the file, read-only");
        safe_close(fd);
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "none.dat", -1, &fd) == 0 && reply.type == LANDMSG_OK && fd < 0,
           "LOOK none.dat: OK, nothing has the name");
        mk("scratch/nobody/inbox/sub", 0755, nobody_uid, nobody_gid);
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "sub", -1, &fd) == -EEXIST && strstr(reply.error.text, "a directory"),
           "LOOK sub: EEXIST, %s", reply.error.text);
        if (chmod(at("scratch/nobody/inbox/a.dat"), 0) < 0)
                abort();
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "a.dat", -1, &fd) == -EACCES &&
           strcmp(reply.error.where, at("scratch/nobody/inbox/a.dat")) == 0,
           "LOOK of a file nobody may not read: EACCES, where is the file (%s)", reply.error.where);
        if (chmod(at("scratch/nobody/inbox/a.dat"), 0444) < 0)
                abort();
        req.type = LANDMSG_LOOK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_PARENT;
        strcpy(req.op.leaf, "nobody");
        is_int(ask(l, 1, -1, &fd), -EPERM, "LOOK in DEST's parent at another name than DEST's: EPERM");
        is_int(op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL), 0, "END");

        /* A dry run (xferctl send -n, version 7): it looks, and makes nothing. */
        push_flags = LANDMSG_SESSION_DRY;
        s = push_session(l, "scratch/nobody/inbox");
        push_flags = 0;
        ok(s != 0, "a session whose credential says --dry-run");
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "a.dat", -1, &fd) == 0 && reply.type == LANDMSG_FD && fd >= 0,
           "LOOK a.dat in a dry run: the file");
        safe_close(fd);
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "none.dat", -1, &fd) == 0 && reply.type == LANDMSG_OK,
           "LOOK none.dat: nothing there, and nobody could make it");
        /* A symlink there (version 10): its target and mtime where asked
         * (LANDMSG_LOOK_LINK), for the dry run to compare; else EEXIST. */
        if (symlink("../elsewhere/a.dat", at("scratch/nobody/inbox/sl")) < 0 ||
            lstat(at("scratch/nobody/inbox/sl"), &st) < 0)
                abort();
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "sl", -1, &fd) == -EEXIST && strstr(reply.error.text, "a symlink"),
           "LOOK sl: EEXIST, %s", reply.error.text);
        req.type = LANDMSG_LOOK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_LOOK_LINK;
        strcpy(req.op.leaf, "sl");
        ok(ask(l, 1, -1, &fd) == 0 && reply.type == LANDMSG_WALK_ENTRY && fd < 0 &&
           reply.walk_entry.kind == LANDMSG_WALK_SYMLINK && strcmp(reply.walk_entry.target, "../elsewhere/a.dat") == 0 &&
           reply.walk_entry.size == 18 && strcmp(reply.walk_entry.path, "sl") == 0 &&
           reply.walk_entry.mtime_ns == (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec,
           "LOOK sl with LANDMSG_LOOK_LINK: its target and mtime");
        strcpy(req.op.leaf, "a.dat");
        ok(ask(l, 1, -1, &fd) == 0 && reply.type == LANDMSG_FD && fd >= 0,
           "LOOK a.dat with LANDMSG_LOOK_LINK: the file, as without");
        safe_close(fd);
        if (unlink(at("scratch/nobody/inbox/sl")) < 0)
                abort();
        is_int(op(l, 1, LANDMSG_TMPFILE, s, "", 0600, "x", -1, &fd), -EPERM, "TMPFILE in a dry run: EPERM (%s)",
               reply.error.text);
        is_int(op(l, 1, LANDMSG_MKDIR, s, "newdir", 0700, NULL, -1, NULL), -EPERM, "MKDIR in a dry run: EPERM");
        ok(lstat(at("scratch/nobody/inbox/newdir"), &st) < 0 && errno == ENOENT, "nothing made");
        memset(&req.setattr, 0, sizeof(req.setattr));
        req.type = LANDMSG_SETATTR;
        req.setattr.session = s;
        req.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH;
        req.setattr.mode = 0777;
        strcpy(req.setattr.path, "sub");
        is_int(ask(l, 1, -1, NULL), -EPERM, "SETATTR in a dry run: EPERM");
        ok(stat(at("scratch/nobody/inbox/sub"), &st) == 0 && (st.st_mode & 0777) == 0755, "sub's mode as it was");
        /* Where nobody may not write, a name that is not there could not be made. */
        if (chmod(at("scratch/nobody/inbox/sub"), 0555) < 0)
                abort();
        ok(op(l, 1, LANDMSG_LOOK, s, "sub", 0, "none.dat", -1, &fd) == -EACCES &&
           strcmp(reply.error.where, at("scratch/nobody/inbox/sub")) == 0,
           "LOOK sub/none.dat, sub read-only: EACCES where is sub, not the file (%s: %s)", reply.error.where,
           reply.error.text);
        if (chmod(at("scratch/nobody/inbox/sub"), 0755) < 0)
                abort();
        is_int(op(l, 1, LANDMSG_WALK, s, "", 0, NULL, -1, &fd), -EPERM,
               "WALK in a dry run not made for --delete: EPERM (%s)", reply.error.text);
        is_int(op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL), 0, "END");
        test_dry_names(l);

        s = push_session(l, "scratch/nobody/inbox/b.dat");
        is_int(op(l, 1, LANDMSG_TMPFILE, s, "", 0600, "x", -1, &fd), -ENOENT,
               "DEST no directory (not there): its TMPFILE fails with ENOENT");
        ok(strcmp(reply.error.where, at("scratch/nobody/inbox/b.dat")) == 0, "at DEST itself: %s", reply.error.where);
        req.type = LANDMSG_TMPFILE;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.mode = 0640;
        req.op.flags = LANDMSG_OP_PARENT;
        strcpy(req.op.leaf, "b.dat");
        r = ask(l, 1, -1, &fd);
        ok(r == 0 && fd >= 0, "TMPFILE in DEST's parent (OP_PARENT), DEST's name free");
        req.type = LANDMSG_LINK;
        strcpy(req.op.leaf, "c.dat");
        req.op.mode = 0;
        is_int(ask(l, 1, fd, NULL), -EPERM, "LINK in the parent under another name than DEST's: refused");
        ok(strstr(reply.error.text, "the credential names"), "saying why: %s", reply.error.text);
        strcpy(req.op.leaf, "b.dat");
        is_int(ask(l, 1, fd, NULL), 0, "LINK under DEST's own name");
        ok(stat(at("scratch/nobody/inbox/b.dat"), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == nobody_uid &&
           lstat(at("scratch/nobody/inbox/c.dat"), &st) < 0, "DEST is the file, nobody's; no c.dat");
        safe_close(fd);
        is_int(op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL), 0, "END");

        s = push_session(l, "scratch");
        req.type = LANDMSG_TMPFILE;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_PARENT;
        ok(s == 0 || ask(l, 1, -1, &fd) == -EISDIR, "DEST a landing root: never a file in its parent");
        if (s)
                op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL);
}

/* @rel's content (up to 63 bytes), "" when it cannot be read. */
static const char *content(const char *rel)
{
        static char buf[64];
        int fd = open(at(rel), O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

        safe_close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

/* How many staging directories scratch/nobody holds (earlier tests' too). */
static int stages(void)
{
        DIR *d = opendir(at("scratch/nobody"));
        struct dirent *de;
        int n = 0;

        while (d && (de = readdir(d)))
                n += strncmp(de->d_name, ".rdmaxfer-stage-", 16) == 0;
        if (d)
                closedir(d);
        return n;
}

/*
 * A tree kept up to date (xferctl send -r --sync DIR PEER:/PATH): LOOK at
 * a tree's entry beneath DEST, nothing followed; the staged tree, less
 * what LOOK showed the same, merged into the one there by PUBLISH_MERGE:
 * what the staged tree lacks kept (the same inode), what it has in its
 * place; only where the credential says --sync.
 */
static void test_tree_merge(struct lander *l)
{
        struct stat st, kept, extra, lnk;
        int fd = -1, nstages;
        uint64_t s;

        mk("scratch/nobody/mt", 0755, nobody_uid, nobody_gid);
        mk("scratch/nobody/mt/sub", 0755, nobody_uid, nobody_gid);
        mkfile("scratch/nobody/mt/same.txt", "same\n", 0444, nobody_uid);
        mkfile("scratch/nobody/mt/differs.txt", "old\n", 0644, nobody_uid);
        mkfile("scratch/nobody/mt/sub/extra.txt", "extra\n", 0600, nobody_uid);
        ln("../same.txt", "scratch/nobody/mt/sub/ln", nobody_uid);
        mk("scratch/nobody/elsewhere", 0755, nobody_uid, nobody_gid);
        mkfile("scratch/nobody/elsewhere/f", "f\n", 0644, nobody_uid);
        ln("../elsewhere", "scratch/nobody/mt/via", nobody_uid);
        if (lstat(at("scratch/nobody/mt/same.txt"), &kept) < 0 ||
            lstat(at("scratch/nobody/mt/sub/extra.txt"), &extra) < 0)
                abort();

        s = push_session(l, "scratch/nobody/mt");
        is_int(op(l, 1, LANDMSG_LOOK, s, "sub", 0, "extra.txt", -1, &fd), -EPERM,
               "LOOK beneath DEST without --sync in the credential: EPERM");
        stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL);
        is_int(publish(l, s, LANDMSG_PUBLISH_MERGE), -EPERM,
               "PUBLISH_MERGE without --sync in the credential: EPERM (%s)", reply.error.text);
        is_int(stage_op(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "that job given up");
        lander_conn_closed(l, 1);

        nstages = stages();
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        ok(s != 0, "a session whose credential says --sync, for a tree");
        ok(op(l, 1, LANDMSG_LOOK, s, "sub", 0, "extra.txt", -1, &fd) == 0 && reply.type == LANDMSG_FD && fd >= 0 &&
           fstat(fd, &st) == 0 && st.st_ino == extra.st_ino, "LOOK sub/extra.txt: the file there, read-only");
        safe_close(fd);
        ok(op(l, 1, LANDMSG_LOOK, s, "new/deeper", 0, "x", -1, &fd) == 0 && reply.type == LANDMSG_OK && fd < 0,
           "LOOK where a directory of the path is not there: OK, nothing has the name");
        ok(op(l, 1, LANDMSG_LOOK, s, "via", 0, "f", -1, &fd) == 0 && reply.type == LANDMSG_OK && fd < 0,
           "LOOK through a symlink of DEST's (via -> ../elsewhere), nobody's own: not followed, nothing there");
        ok(op(l, 1, LANDMSG_LOOK, s, "same.txt", 0, "x", -1, &fd) == 0 && reply.type == LANDMSG_OK && fd < 0,
           "LOOK beneath a file: OK, nothing there");
        ok(op(l, 1, LANDMSG_LOOK, s, "", 0, "sub", -1, &fd) == -EEXIST, "LOOK sub: EEXIST, a directory");

        /* The sync's tree: same.txt kept (not staged), differs.txt sent
         * again, new.txt new, sub made as sent (its extra.txt not). */
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", "mt", NULL, 0700, -1, NULL), 0,
               "its staging directory, to be named mt (there, a directory): made");
        stage_op(l, LANDMSG_MKDIR, s, "sub", NULL, NULL, 0755, -1, NULL);
        ok(stage_op(l, LANDMSG_TMPFILE, s, "", NULL, NULL, 0600, -1, &fd) == 0 && write(fd, "new\n", 4) == 4,
           "differs.txt's new data");
        is_int(stage_op(l, LANDMSG_LINK, s, "", "differs.txt", NULL, 0, fd, NULL), 0, "staged");
        safe_close(fd);
        ok(stage_op(l, LANDMSG_TMPFILE, s, "", NULL, NULL, 0600, -1, &fd) == 0 && write(fd, "n\n", 2) == 2 &&
           stage_op(l, LANDMSG_LINK, s, "sub", "new.txt", NULL, 0, fd, NULL) == 0, "sub/new.txt staged");
        safe_close(fd);
        /* Packed files: their LINKs keep the file there that has the same bytes. */
        {
                int fds[2] = { -1, -1 }, out[LANDMSG_BATCH_MAX];
                size_t n = 0;

                for (int i = 0; i < 2; i++)
                        if (stage_op(l, LANDMSG_TMPFILE, s, "", NULL, NULL, 0600, -1, &fds[i]) < 0)
                                abort();
                ok(write(fds[0], "extra\n", 6) == 6 && write(fds[1], "fresh\n", 6) == 6, "two packed files' data");
                landmsg_batch_init(&req, s);
                batch_link_flags = LANDMSG_LINK_KEEP_BYTES;
                batch_add(s, LANDMSG_LINK, "sub", "extra.txt", 0644);
                batch_add(s, LANDMSG_LINK, "sub", "fresh.txt", 0644);
                batch_link_flags = 0;
                req.id++;
                lander_handle_batch(l, 1, &req, fds, 2, &reply, out, &n);
                lander_idle(l);
                ok(reply.type == LANDMSG_FDS && reply.fds.kept == 1 && n == 0,
                   "their LINKs with KEEP_BYTES: sub/extra.txt, the same, kept (FDS kept %u)", reply.fds.kept);
        }
        is_int(stage_op(l, LANDMSG_HARDLINK, s, "sub", "same-again", "same.txt", 0, -1, NULL), 0,
               "a hard link to same.txt, kept there and not staged: linked to the one there");
        is_int(stage_op(l, LANDMSG_HARDLINK, s, "sub", "gone-again", "gone.txt", 0, -1, NULL), -ENOENT,
               "one to a file neither has: ENOENT");
        /* Symlinks (version 10): the one there that points where the
         * sent one does is linked in its place (the same inode); another
         * target is made anew. */
        if (lstat(at("scratch/nobody/mt/sub/ln"), &lnk) < 0)
                abort();
        req.type = LANDMSG_SYMLINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE;
        strcpy(req.op.path, "sub");
        strcpy(req.op.leaf, "ln");
        strcpy(req.op.target, "../same.txt");
        ok(ask(l, 1, -1, NULL) == 0 && reply.type == LANDMSG_FDS && reply.fds.count == 0 && reply.fds.kept == 1,
           "SYMLINK sub/ln -> ../same.txt with KEEP_SIZE: the one there kept (FDS kept 1)");
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE;
        strcpy(req.op.leaf, "via");
        strcpy(req.op.target, "sub");
        ok(ask(l, 1, -1, NULL) == 0 && reply.type == LANDMSG_OK, "SYMLINK via -> sub, there -> ../elsewhere: made");
        /* Its directories' modes and mtimes are set before PUBLISH: sub read-only. */
        is_int(stage_dir_readonly(l, s, "sub"), 0, "sub made read-only, its mtime set");
        is_int(publish(l, s, LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_REPLACE), 0,
               "PUBLISH_MERGE: merged into the tree there (%s)", reply.error.text);
        {
                char t[64] = "";

                ok(lstat(at("scratch/nobody/mt/sub/ln"), &st) == 0 && st.st_ino == lnk.st_ino &&
                   readlink(at("scratch/nobody/mt/via"), t, sizeof(t) - 1) == 3 && strcmp(t, "sub") == 0,
                   "sub/ln the very symlink it was; via -> sub, the sent one");
        }
        is_int(stages(), nstages, "nothing staged is left (the old tree's rest removed)");
        ok(lstat(at("scratch/nobody/mt/same.txt"), &st) == 0 && st.st_ino == kept.st_ino && st.st_nlink == 2 &&
           (st.st_mode & 07777) == 0444, "same.txt kept: the same file, read-only as it was, its two names");
        ok(lstat(at("scratch/nobody/mt/sub/same-again"), &st) == 0 && st.st_ino == kept.st_ino,
           "sub/same-again its other name");
        ok(lstat(at("scratch/nobody/mt/sub/extra.txt"), &st) == 0 && st.st_ino == extra.st_ino,
           "sub/extra.txt, sent the same, kept: the same file");
        is_str(content("scratch/nobody/mt/sub/fresh.txt"), "fresh\n", "sub/fresh.txt, packed and new, in");
        ok(lstat(at("scratch/nobody/mt/sub"), &st) == 0 && (st.st_mode & 07777) == 0555 &&
           st.st_mtim.tv_sec == 1234567890, "sub as sent: 0555, its mtime");
        is_str(content("scratch/nobody/mt/differs.txt"), "new\n", "differs.txt replaced by the sent one");
        is_str(content("scratch/nobody/mt/sub/new.txt"), "n\n", "sub/new.txt new");
        ok(lstat(at("scratch/nobody/mt/sub/ln"), &st) == 0 && S_ISLNK(st.st_mode) &&
           lstat(at("scratch/nobody/mt/via"), &st) == 0 && S_ISLNK(st.st_mode), "the symlinks there kept as symlinks");
        ok(stat(at("scratch/nobody/elsewhere/f"), &st) == 0 && lstat(at("scratch/nobody/elsewhere/x"), &st) < 0,
           "nothing beyond DEST's symlink touched");
        lander_conn_closed(l, 1);

        /* A sync's credential alone deletes nothing (version 8: --delete is the user's to say). */
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        stage_op(l, LANDMSG_MKDIR, s, "", "mt", NULL, 0700, -1, NULL);
        is_int(publish(l, s, LANDMSG_PUBLISH_DELETE | LANDMSG_PUBLISH_REPLACE), -EPERM,
               "PUBLISH_DELETE, the credential without --delete: EPERM (%s)", reply.error.text);
        ok(lstat(at("scratch/nobody/mt/differs.txt"), &st) == 0 && lstat(at("scratch/nobody/mt/sub/extra.txt"), &st) == 0,
           "the tree there as it was");
        is_int(stage_op(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "that job given up");
        lander_conn_closed(l, 1);

        /* Mirrored (--delete): the kept file linked in by its own name,
         * the rest of the tree there deleted, and counted. */
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE | LANDMSG_SESSION_DELETE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        stage_op(l, LANDMSG_MKDIR, s, "", "mt", NULL, 0700, -1, NULL);
        stage_op(l, LANDMSG_MKDIR, s, "sub", NULL, NULL, 0755, -1, NULL);
        is_int(stage_op(l, LANDMSG_HARDLINK, s, "", "same.txt", "same.txt", 0, -1, NULL), 0,
               "same.txt kept: a hard link to itself, linked from the tree there");
        ok(publish(l, s, LANDMSG_PUBLISH_DELETE | LANDMSG_PUBLISH_REPLACE) == 0 && reply.type == LANDMSG_PUBLISHED,
           "PUBLISH_DELETE: PUBLISHED (%s)", reply.type == LANDMSG_ERROR ? reply.error.text : "");
        /* differs.txt, via; sub/: extra.txt, fresh.txt, ln, new.txt, same-again. */
        ok(reply.published.deleted == 7, "7 entries deleted (%llu)", (unsigned long long)reply.published.deleted);
        ok(lstat(at("scratch/nobody/mt/same.txt"), &st) == 0 && st.st_ino == kept.st_ino && st.st_nlink == 1,
           "same.txt the same file, its one name");
        ok(lstat(at("scratch/nobody/mt/differs.txt"), &st) < 0 && lstat(at("scratch/nobody/mt/via"), &st) < 0 &&
           lstat(at("scratch/nobody/mt/sub/extra.txt"), &st) < 0, "what the source lacks is gone");
        ok(stat(at("scratch/nobody/elsewhere/f"), &st) == 0, "the symlink via removed as itself, its target kept");
        is_int(stages(), nstages, "nothing staged is left");
        lander_conn_closed(l, 1);

        /* A name that is a directory there and a file in the sent tree:
         * neither merged nor mirrored, nothing changed. */
        mkfile("scratch/nobody/mt/sub/keep.txt", "keep\n", 0644, nobody_uid);
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE | LANDMSG_SESSION_DELETE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        stage_op(l, LANDMSG_MKDIR, s, "", "mt", NULL, 0700, -1, NULL);
        ok(stage_op(l, LANDMSG_TMPFILE, s, "", NULL, NULL, 0600, -1, &fd) == 0 &&
           stage_op(l, LANDMSG_LINK, s, "", "sub", NULL, 0, fd, NULL) == 0, "a file sub staged, where mt has a "
           "directory sub");
        safe_close(fd);
        is_int(publish(l, s, LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_REPLACE), -EEXIST,
               "PUBLISH_MERGE: EEXIST (%s)", reply.error.text);
        ok(strncmp(reply.error.text, "sub: a directory", 16) == 0 &&
           strcmp(reply.error.where, at("scratch/nobody/mt")) == 0, "naming sub in mt (%s)", reply.error.where);
        is_int(publish(l, s, LANDMSG_PUBLISH_DELETE | LANDMSG_PUBLISH_REPLACE), -EEXIST,
               "PUBLISH_DELETE: EEXIST too");
        is_str(content("scratch/nobody/mt/sub/keep.txt"), "keep\n", "mt/sub and what is in it as they were");
        is_int(stage_op(l, LANDMSG_DISCARD, s, "", NULL, NULL, 0, -1, NULL), 0, "that job given up");
        lander_conn_closed(l, 1);

        /* Into DEST (a directory), where nothing has the tree's name yet:
         * published as any tree. */
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        is_int(into_op(l, LANDMSG_MKDIR, s), 0, "a staging directory in mt, to be mt/inner (%s)", reply.error.text);
        is_int(into_op(l, LANDMSG_PUBLISH, s), 0, "PUBLISH_MERGE into mt as inner, nothing there yet: published (%s)",
               reply.error.text);
        ok(lstat(at("scratch/nobody/mt/inner"), &st) == 0 && S_ISDIR(st.st_mode), "mt/inner the tree");
        lander_conn_closed(l, 1);
        /* Into DEST again, the tree there with a symlink: kept (version 10). */
        ln("t", "scratch/nobody/mt/inner/s", nobody_uid);
        if (lstat(at("scratch/nobody/mt/inner/s"), &lnk) < 0)
                abort();
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/mt");
        push_flags = 0;
        is_int(into_op(l, LANDMSG_MKDIR, s), 0, "a staging directory in mt, to be merged into mt/inner (%s)", reply.error.text);
        req.type = LANDMSG_SYMLINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO | LANDMSG_LINK_KEEP_SIZE;
        strcpy(req.op.leaf, "s");
        strcpy(req.op.target, "t");
        ok(ask(l, 1, -1, NULL) == 0 && reply.type == LANDMSG_FDS && reply.fds.kept == 1,
           "SYMLINK s -> t into mt/inner with KEEP_SIZE: the one there kept (type %u: %s)", reply.type,
           reply.type == LANDMSG_ERROR ? reply.error.text : "");
        is_int(into_op(l, LANDMSG_PUBLISH, s), 0, "PUBLISH_MERGE into mt/inner (%s)", reply.error.text);
        ok(lstat(at("scratch/nobody/mt/inner/s"), &st) == 0 && st.st_ino == lnk.st_ino, "inner/s the very symlink");
        lander_conn_closed(l, 1);

        /* A file where the tree would be merged: refused before any data. */
        mkfile("scratch/nobody/mt-file", "x", 0644, nobody_uid);
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/mt-file");
        push_flags = 0;
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", "mt-file", NULL, 0700, -1, NULL), -EEXIST,
               "a tree synced onto a file: EEXIST (%s)", reply.error.text);
        ok(strstr(reply.error.text, "no directory") != NULL && strcmp(content("scratch/nobody/mt-file"), "x") == 0,
           "saying it is no directory; the file as it was");
        lander_conn_closed(l, 1);
}

/* -X, -A (landmsg version 6): a MKDIR's and a LINK's attributes set as
 * the user, a read-only file's before its mode, ACLs the records lack
 * removed. */
static void test_attrs(struct lander *l)
{
        uint8_t acl[POSIX_ACL_BYTES], ro[POSIX_ACL_BYTES], got[128];
        size_t alen = posix_acl_bytes(acl, 4242, 6);
        struct stat st;
        uint64_t s;
        int fd = -1;

        s = push_session(l, "scratch/nobody/xt");
        ok(s != 0, "a session for a tree with attributes");
        req.type = LANDMSG_MKDIR;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        req.op.mode = 0700;
        (void)xattrs_put(req.op.xattrs, sizeof(req.op.xattrs), &(size_t){ 0 }, "user.top", "T", 1);
        req.op.xattrs_len = 3 + 8 + 1;
        is_int(ask(l, 1, -1, NULL), 0, "the staging directory (DEST) made with its user.* attribute");
        req.type = LANDMSG_MKDIR;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        req.op.mode = 0700;
        strcpy(req.op.path, "d");
        {
                size_t n = 0;

                (void)xattrs_put(req.op.xattrs, sizeof(req.op.xattrs), &n, XATTRS_ACL_DEFAULT, acl, alen);
                req.op.xattrs_len = (uint16_t)n;
        }
        is_int(ask(l, 1, -1, NULL), 0, "d made with a default ACL");
        /* A read-only directory's access ACL (user::r-x): what is to be
         * made in it still can be. */
        req.type = LANDMSG_MKDIR;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        req.op.mode = 0700;
        strcpy(req.op.path, "d/rodir");
        {
                size_t n = 0;

                (void)posix_acl_bytes(ro, 4242, 5);
                (void)xattrs_put(req.op.xattrs, sizeof(req.op.xattrs), &n, XATTRS_ACL_ACCESS, ro, alen);
                req.op.xattrs_len = (uint16_t)n;
        }
        is_int(ask(l, 1, -1, NULL), 0, "d/rodir made with a read-only access ACL (user::r-x)");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "d/rodir/in", NULL, NULL, 0700, -1, NULL), 0,
               "and a directory made in it all the same");
        is_int(stage_dir_readonly(l, s, "d/rodir"), 0, "d/rodir then given its mode (0555), as the tree's end does");
        /* A file made in d inherits its default ACL; -A with none of its
         * own takes it away again. */
        ok(stage_op(l, LANDMSG_TMPFILE, s, "d", NULL, NULL, 0600, -1, &fd) == 0 && fd >= 0 && write(fd, "x", 1) == 1,
           "a file in d");
        ok(fgetxattr(fd, XATTRS_ACL_ACCESS, got, sizeof(got)) > 0, "which d's default ACL gave an access ACL");
        req.type = LANDMSG_LINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_ACLS | LANDMSG_LINK_MODE;
        req.op.mode = 0640;
        strcpy(req.op.path, "d");
        strcpy(req.op.leaf, "plain");
        is_int(ask(l, 1, fd, NULL), 0, "linked with ACLs carried and none of its own");
        ok(fgetxattr(fd, XATTRS_ACL_ACCESS, got, sizeof(got)) < 0 && errno == ENODATA && fstat(fd, &st) == 0 &&
           (st.st_mode & 0777) == 0640, "its inherited ACL gone, its mode the sender's");
        safe_close(fd);
        /* A read-only file with a user.* attribute and an ACL. */
        ok(stage_op(l, LANDMSG_TMPFILE, s, "d", NULL, NULL, 0600, -1, &fd) == 0 && fd >= 0, "another file");
        req.type = LANDMSG_LINK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS | LANDMSG_LINK_MODE |
                       LANDMSG_LINK_DIGEST;
        req.op.mode = 0440;
        strcpy(req.op.path, "d");
        strcpy(req.op.leaf, "ro");
        strcpy(req.op.target, "00112233445566778899aabbccddeeff");
        {
                size_t n = 0;

                /* The ACL first, user::r-- as its mode 0440 says: the user.* must still be set. */
                (void)posix_acl_bytes(ro, 4242, 4);
                (void)xattrs_put(req.op.xattrs, sizeof(req.op.xattrs), &n, XATTRS_ACL_ACCESS, ro, alen);
                (void)xattrs_put(req.op.xattrs, sizeof(req.op.xattrs), &n, "user.k", "v", 1);
                req.op.xattrs_len = (uint16_t)n;
        }
        is_int(ask(l, 1, fd, NULL), 0, "a read-only file linked with an ACL and a user.* attribute");
        safe_close(fd);
        is_int(publish(l, s, 0), 0, "PUBLISH");
        ok(getxattr(at("scratch/nobody/xt"), "user.top", got, sizeof(got)) == 1 && got[0] == 'T',
           "DEST has its attribute");
        ok(getxattr(at("scratch/nobody/xt/d"), XATTRS_ACL_DEFAULT, got, sizeof(got)) == (ssize_t)alen &&
           memcmp(got, acl, alen) == 0, "d its default ACL");
        ok(getxattr(at("scratch/nobody/xt/d/ro"), "user.k", got, sizeof(got)) == 1 && got[0] == 'v',
           "ro its user.* attribute");
        ok(getxattr(at("scratch/nobody/xt/d/ro"), XATTRS_ACL_ACCESS, got, sizeof(got)) == (ssize_t)alen &&
           memcmp(got, ro, alen) == 0, "and its ACL, byte for byte");
        ok(getxattr(at("scratch/nobody/xt/d/ro"), "user.rdmaxfer.digest", got, sizeof(got)) == 32,
           "and its digest");
        ok(stat(at("scratch/nobody/xt/d/ro"), &st) == 0 && (st.st_mode & 0777) == 0440 && st.st_uid == nobody_uid,
           "read-only (0440), nobody's");
        (void)posix_acl_bytes(ro, 4242, 5);
        ok(getxattr(at("scratch/nobody/xt/d/rodir"), XATTRS_ACL_ACCESS, got, sizeof(got)) == (ssize_t)alen &&
           stat(at("scratch/nobody/xt/d/rodir/in"), &st) == 0, "d/rodir: its ACL, and what was made in it");
        is_int(op(l, 1, LANDMSG_END, s, "", 0, NULL, -1, NULL), 0, "END");

        /* Read back as the user (get -X -A): the tree's own with OPEN_READ,
         * each entry's with the walker's. */
        {
                static struct landmsg m;
                int ws, dfd = -1, r, with = 0;

                fd = -1;
                walker_flags = LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
                ws = walker_of(l, "scratch/nobody/xt", true, &r, &dfd);
                walker_flags = 0;
                safe_close(dfd);
                ok(ws >= 0 && reply.type == LANDMSG_FD, "a pull of the tree that reads them");
                ok(ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_HEAD, "its count");
                while (ws >= 0 && landmsg_recv(ws, &m, &fd) == 0 && m.type == LANDMSG_WALK_ENTRY) {
                        const struct landmsg_walk_entry *e = &m.walk_entry;
                        unsigned int which = 0;

                        if (!strcmp(e->path, "d/ro") && xattrs_check(e->xattrs, e->xattrs_len, &which) == 0 &&
                            which == (XATTRS_USER | XATTRS_ACL))
                                with++;
                        if (!strcmp(e->path, "d") && e->xattrs_len > 0)
                                with++;
                        safe_close(fd);
                }
                ok(with == 2 && m.type == LANDMSG_OK, "d/ro's user.* and ACL, d's default ACL, as the user read them");
                safe_close(ws);
                lander_conn_closed(l, 1);
        }
}

/*
 * -X, -A kept up to date (landmsg version 7): LOOK reads the file's
 * attributes for the daemon to compare; a packed file's LINK keeps the
 * one there only where its attributes are the sent ones too.
 */
static void test_tree_merge_attrs(struct lander *l)
{
        uint8_t same[64], other[64], got[16];
        int fd = -1, fds[2] = { -1, -1 }, out[LANDMSG_BATCH_MAX];
        size_t sl = 0, ol = 0, n = 0;
        struct stat st, a0, b0;
        uint64_t s;

        mk("scratch/nobody/ma", 0755, nobody_uid, nobody_gid);
        mkfile("scratch/nobody/ma/a.txt", "a\n", 0644, nobody_uid);
        mkfile("scratch/nobody/ma/b.txt", "b\n", 0644, nobody_uid);
        if (setxattr(at("scratch/nobody/ma/a.txt"), "user.k", "v", 1, 0) < 0 ||
            setxattr(at("scratch/nobody/ma/b.txt"), "user.k", "v", 1, 0) < 0 ||
            lstat(at("scratch/nobody/ma/a.txt"), &a0) < 0 || lstat(at("scratch/nobody/ma/b.txt"), &b0) < 0)
                abort();
        (void)xattrs_put(same, sizeof(same), &sl, "user.k", "v", 1);
        (void)xattrs_put(other, sizeof(other), &ol, "user.k", "w", 1);

        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/ma");
        push_flags = 0;
        req.type = LANDMSG_LOOK;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = s;
        req.op.flags = LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        strcpy(req.op.leaf, "a.txt");
        ok(ask(l, 1, -1, &fd) == 0 && reply.type == LANDMSG_FD && fd >= 0 &&
           xattrs_same(reply.fd.xattrs, reply.fd.xattrs_len, same, sl),
           "LOOK with -X -A: the file, and its attributes as the user read them");
        safe_close(fd);

        is_int(stage_op(l, LANDMSG_MKDIR, s, "", "ma", NULL, 0700, -1, NULL), 0, "a tree staged to merge into ma");
        for (int i = 0; i < 2; i++)
                if (stage_op(l, LANDMSG_TMPFILE, s, "", NULL, NULL, 0600, -1, &fds[i]) < 0)
                        abort();
        ok(write(fds[0], "a\n", 2) == 2 && write(fds[1], "b\n", 2) == 2, "two packed files' data, as there");
        landmsg_batch_init(&req, s);
        for (int i = 0; i < 2; i++) {
                static struct landmsg_op op;

                memset(&op, 0, sizeof(op));
                op.session = s;
                op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS | LANDMSG_LINK_MODE |
                           LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_XATTRS;
                op.mode = 0644;
                strcpy(op.leaf, i ? "b.txt" : "a.txt");
                memcpy(op.xattrs, i ? other : same, i ? ol : sl);
                op.xattrs_len = (uint16_t)(i ? ol : sl);
                if (landmsg_batch_add(&req, LANDMSG_LINK, &op) < 0)
                        abort();
        }
        req.id++;
        lander_handle_batch(l, 1, &req, fds, 2, &reply, out, &n);
        lander_idle(l);
        ok(reply.type == LANDMSG_FDS && reply.fds.kept == 1 && n == 0,
           "KEEP_SIZE with KEEP_XATTRS: a.txt, its attribute the same, kept; b.txt, its attribute another, not "
           "(FDS kept %u)", reply.fds.kept);
        is_int(publish(l, s, LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_REPLACE), 0, "PUBLISH_MERGE (%s)",
               reply.error.text);
        ok(lstat(at("scratch/nobody/ma/a.txt"), &st) == 0 && st.st_ino == a0.st_ino, "a.txt: the same file");
        ok(lstat(at("scratch/nobody/ma/b.txt"), &st) == 0 && st.st_ino != b0.st_ino &&
           getxattr(at("scratch/nobody/ma/b.txt"), "user.k", got, sizeof(got)) == 1 && got[0] == 'w',
           "b.txt: the new one, with the attribute sent");
        lander_conn_closed(l, 1);
}

static void test_munged_gone(struct lander *l)
{
        munge_fixture_stop();
        session_fill(&req.session, LANDMSG_PUSH, "scratch/nobody/run4", "127.0.0.1");
        strcpy(req.session.cred, "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7y:");
        ok(open_session(l, 1) == 0 && reply.error.err == EHOSTDOWN && strstr(reply.error.text, "munged is not reachable"),
           "munged stopped: %s", reply.error.text);
}

/* A memfd holding @data, sealed against resizing when @sealed (MEM's). */
static int mem_of(const char *data, bool sealed)
{
        int fd = memfd_create("test-pack", MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data) ||
            (sealed && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0))
                abort();
        return fd;
}

/* A pack's CREATE for a BATCH of session @s: @leaf in @dir, @len bytes at @off. */
static void batch_create(uint64_t s, const char *dir, const char *leaf, mode_t mode, uint64_t off, uint64_t len)
{
        static struct landmsg_op op;

        landmsg_op_init(&op, s);
        op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_LINK_MTIME | batch_link_flags;
        op.mode = mode;
        op.mtime_ns = 1234567890ull * 1000000000ull;
        snprintf(op.path, sizeof(op.path), "%s", dir);
        snprintf(op.leaf, sizeof(op.leaf), "%s", leaf);
        strcpy(op.target, "0123abcd");
        op.data_off = off;
        op.data_len = len;
        if (landmsg_batch_add(&req, LANDMSG_CREATE, &op) < 0)
                abort();
}

/* A BATCH of session @s at hand, asked: 0 or its ERROR's -errno. */
static int batch_ask(struct lander *l)
{
        int fds[1], rfds[LANDMSG_BATCH_MAX];
        size_t n = 0;

        req.id++;
        lander_handle_batch(l, 1, &req, fds, 0, &reply, rfds, &n);
        lander_idle(l);
        while (n > 0)
                safe_close(rfds[--n]);
        return reply.type == LANDMSG_ERROR ? -(int)reply.error.err : 0;
}

/* A file's bytes, up to 63, or "" where it cannot be read. */
static const char *bytes_of(const char *rel)
{
        static char got[64];
        int fd = open(at(rel), O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, got, sizeof(got) - 1);

        safe_close(fd);
        got[n > 0 ? n : 0] = '\0';
        return got;
}

/* MEM and CREATE (version 9): a pack's files made whole from the memory
 * the daemon hands over, with every mode, as the user; refused where the
 * memory could change size, or a file's data lies beyond it. */
static void test_create(struct lander *l)
{
        static const char data[] = "hello" "world!" "same\n";
        struct stat st, old, oldro;
        char hex[16] = "";
        int mem, unsealed;
        uint64_t s;

        s = push_session(l, "scratch/nobody/packed");
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", NULL, NULL, 0700, -1, NULL), 0, "a tree staged");
        unsealed = mem_of(data, false);
        req.type = LANDMSG_MEM;
        landmsg_op_init(&req.op, s);
        is_int(ask(l, 1, unsealed, NULL), -EPERM, "MEM of a memfd that may shrink: EPERM (%s)", reply.error.text);
        is_int(ask(l, 1, -1, NULL), -EBADF, "MEM without one: EBADF");
        landmsg_batch_init(&req, s);
        batch_create(s, "", "a", 0644, 0, 5);
        is_int(batch_ask(l), -EINVAL, "a CREATE before any memory: EINVAL (%s)", reply.error.text);
        mem = mem_of(data, true);
        req.type = LANDMSG_MEM;
        landmsg_op_init(&req.op, s);
        is_int(ask(l, 1, mem, NULL), 0, "MEM of a sealed memfd: OK");

        landmsg_batch_init(&req, s);
        batch_add(s, LANDMSG_MKDIR, "d", NULL, 0700);
        batch_create(s, "d", "ro", 0444, 0, 5);
        batch_create(s, "", ".none", 0, 5, 6);
        batch_create(s, "d", "empty", 0640, 0, 0);
        ok(batch_ask(l) == 0 && reply.type == LANDMSG_FDS && reply.fds.count == 0 && reply.fds.kept == 0,
           "a BATCH of a MKDIR and three CREATEs: FDS, no descriptor");
        landmsg_batch_init(&req, s);
        batch_create(s, "d", "ro", 0644, 0, 5);
        is_int(batch_ask(l), -EEXIST, "a CREATE of a name taken: EEXIST");
        landmsg_batch_init(&req, s);
        batch_create(s, "", "past", 0644, sizeof(data) - 3, 3);
        is_int(batch_ask(l), -EINVAL, "data past the memory's end: EINVAL (%s)", reply.error.text);
        ok(stat(at("scratch/nobody/packed"), &st) < 0, "(nothing at DEST yet)");
        is_int(stage_op(l, LANDMSG_PUBLISH, s, "", NULL, NULL, 0, -1, NULL), 0, "PUBLISH");
        ok(lstat(at("scratch/nobody/packed/d/ro"), &st) == 0 && st.st_uid == nobody_uid && (st.st_mode & 07777) == 0444 &&
           st.st_mtime == 1234567890 && strcmp(bytes_of("scratch/nobody/packed/d/ro"), "hello") == 0,
           "d/ro: nobody's, 0444, its mtime, its bytes from the memory");
        ok(getxattr(at("scratch/nobody/packed/d/ro"), "user.rdmaxfer.digest", hex, sizeof(hex) - 1) == 8 ||
           errno == ENOTSUP, "with its digest, though read-only: %s", hex);
        ok(lstat(at("scratch/nobody/packed/.none"), &st) == 0 && (st.st_mode & 07777) == 0 && st.st_size == 6 &&
           strcmp(bytes_of("scratch/nobody/packed/.none"), "world!") == 0,
           ".none: mode 000, its 6 bytes from offset 5");
        ok(lstat(at("scratch/nobody/packed/d/empty"), &st) == 0 && st.st_size == 0 && (st.st_mode & 07777) == 0640,
           "d/empty: no bytes, 0640");
        ok(lstat(at("scratch/nobody/packed/past"), &st) < 0, "what was refused is not there");
        lander_conn_closed(l, 1);

        /* Kept up to date: a CREATE that finds the same file there keeps it. */
        mkfile("scratch/nobody/packed/same", "same\n", 0644, nobody_uid);
        mkfile("scratch/nobody/packed/sz", "abcde", 0644, nobody_uid);
        if (lstat(at("scratch/nobody/packed/same"), &old) < 0 || lstat(at("scratch/nobody/packed/d/ro"), &oldro) < 0)
                abort();
        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        s = push_session(l, "scratch/nobody/packed");
        push_flags = 0;
        is_int(stage_op(l, LANDMSG_MKDIR, s, "", "packed", NULL, 0700, -1, NULL), 0, "a sync's tree staged");
        req.type = LANDMSG_MEM;
        landmsg_op_init(&req.op, s);
        is_int(ask(l, 1, mem, NULL), 0, "its MEM");
        landmsg_batch_init(&req, s);
        batch_link_flags = LANDMSG_LINK_KEEP_BYTES;
        batch_create(s, "", "same", 0644, 11, 5);
        batch_create(s, "", "grown", 0644, 0, 11);
        batch_create(s, "", "sz", 0644, 0, 5);
        batch_link_flags = 0;
        batch_add(s, LANDMSG_MKDIR, "d", NULL, 0700);
        batch_link_flags = LANDMSG_LINK_KEEP_BYTES;
        batch_create(s, "d", "ro", 0444, 0, 5);
        batch_create(s, "d", "empty", 0640, 0, 0);
        batch_link_flags = 0;
        ok(batch_ask(l) == 0 && reply.type == LANDMSG_FDS && reply.fds.kept == 3,
           "CREATEs keeping the same bytes, in two directories: FDS, three kept (%s)",
           reply.type == LANDMSG_ERROR ? reply.error.text : "");
        is_int(publish(l, s, LANDMSG_PUBLISH_MERGE), 0, "merged");
        ok(lstat(at("scratch/nobody/packed/same"), &st) == 0 && st.st_ino == old.st_ino &&
           lstat(at("scratch/nobody/packed/d/ro"), &st) == 0 && st.st_ino == oldro.st_ino,
           "the same files there kept, their inodes (same, d/ro)");
        ok(strcmp(bytes_of("scratch/nobody/packed/grown"), "helloworld!") == 0 &&
           strcmp(bytes_of("scratch/nobody/packed/sz"), "hello") == 0,
           "the new one made, and the one of the same size whose bytes differ made anew");
        ok(strcmp(bytes_of("scratch/nobody/packed/.none"), "world!") == 0 &&
           lstat(at("scratch/nobody/packed/.none"), &st) == 0 && st.st_size == 6, "what the sync did not send still there");
        lander_conn_closed(l, 1);

        push_flags = LANDMSG_SESSION_SYNC | LANDMSG_SESSION_DRY;
        s = push_session(l, "scratch/nobody/packed");
        push_flags = 0;
        req.type = LANDMSG_MEM;
        landmsg_op_init(&req.op, s);
        is_int(ask(l, 1, mem, NULL), -EPERM, "MEM in a dry run: EPERM");
        lander_conn_closed(l, 1);
        safe_close(mem);
        safe_close(unsealed);
}

int main(void)
{
        char tmpl[] = "/tmp/test-lander.XXXXXX";
        struct lander_settings s = { .allow_root = false };
        struct lander *l = NULL;
        struct passwd *pw;

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root to act as other users and to start munged\n");
                return 0;
        }
        if (system("command -v munged >/dev/null") != 0) {
                printf("1..0 # SKIP no munged here (Debian's munge package)\n");
                return 0;
        }
        pw = getpwnam("nobody");
        if (!pw || sodium_init() < 0)
                return 1;
        nobody_uid = pw->pw_uid;
        nobody_gid = pw->pw_gid;
        umask(0);
        if (tmptree_make(tmpl) < 0)
                return 1;
        mk("scratch", 01777, 0, 0);
        mk("scratch/nobody", 0700, nobody_uid, nobody_gid);
        mk("scratch/daemon", 0700, 1, 1);
        mk("outside", 0777, 0, 0);
        if (!munge_fixture_start(at("munge"), sock, sizeof(sock))) {
                printf("not ok 1 - munged started on %s\n", sock);
                munge_fixture_stop();
                return 1;
        }
        if (landfs_roots_add(&s.roots, at("scratch")) < 0)
                return 1;
        snprintf(s.roots_text, sizeof(s.roots_text), "%s", at("scratch"));
        s.munge_socket = sock;
        ok(lander_new(&l, &s) == 0, "a lander");

        test_push(l);
        test_refusals(l);
        test_expired();
        test_pull(l);
        test_pull_tree(l);
        test_tree(l);
        test_tree_into(l);
        test_stage_held(l);
        test_batch(l);
        test_create(l);
        test_file_dest(l);
        test_tree_merge(l);
        test_attrs(l);
        test_tree_merge_attrs(l);
        test_munged_gone(l);

        lander_free(l);
        munge_fixture_stop();
        tmptree_remove();
        return done_testing();
}
