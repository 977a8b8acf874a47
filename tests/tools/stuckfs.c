/*
 * stuckfs: a tiny FUSE file system whose files stop answering one user,
 * for the testbed's stuck-file scenario. Every request from any other
 * user is answered, so xferctl (run as root) can open and stat the files
 * and hand them to the daemon; the daemon's own requests (its uid, on
 * io_uring's workers) are where the files get stuck:
 *
 *   ok          1 MiB of a pattern; always answers
 *   stuck-stat  getattr never answers that user (no attribute caching);
 *               an interrupt (io_uring's cancel) ends it with EINTR
 *   stuck-read  reads never answer that user; an interrupt ends them
 *   hard-read   reads never answer that user, and interrupts are ignored:
 *               only aborting the connection (killing stuckfs) ends them,
 *               as with a FUSE server that hangs
 *
 * Reads are direct (FOPEN_DIRECT_IO): each one is a request of the reader's
 * own, not page-cache readahead, so the reader is the one that waits.
 *
 * usage: stuckfs MOUNTPOINT UID   (runs in the foreground; root, allow_other)
 */

#define FUSE_USE_VERSION 35

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define STUCK_SIZE      (1u << 20)

enum { INO_ROOT = 1, INO_OK, INO_STUCK_STAT, INO_STUCK_READ, INO_HARD_READ, INO_END };

static const char *const names[INO_END] = {
        [INO_OK] = "ok",
        [INO_STUCK_STAT] = "stuck-stat",
        [INO_STUCK_READ] = "stuck-read",
        [INO_HARD_READ] = "hard-read",
};

static uid_t stuck_uid;
static unsigned long held;      /* requests never answered, for the log */

static bool is_stuck_user(fuse_req_t req)
{
        return fuse_req_ctx(req)->uid == stuck_uid;
}

static void stuck_attr(fuse_ino_t ino, struct stat *st)
{
        memset(st, 0, sizeof(*st));
        st->st_ino = ino;
        if (ino == INO_ROOT) {
                st->st_mode = S_IFDIR | 0755;
                st->st_nlink = 2;
                return;
        }
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = STUCK_SIZE;
}

/* stuck-stat's attributes are never cached: every stat asks. */
static double stuck_timeout(fuse_ino_t ino)
{
        return ino == INO_STUCK_STAT ? 0.0 : 3600.0;
}

static void on_interrupt(fuse_req_t req, void *data)
{
        fprintf(stderr, "stuckfs: interrupted: answering EINTR\n");
        fuse_reply_err(req, EINTR);
}

/* Never answer @req; with @interruptible, an interrupt answers EINTR. */
static void hold(fuse_req_t req, const char *what, bool interruptible)
{
        held++;
        fprintf(stderr, "stuckfs: holding %s from uid %u (%lu held)%s\n", what,
                (unsigned int)fuse_req_ctx(req)->uid, held,
                interruptible ? "" : ", deaf to interrupts");
        if (interruptible)
                fuse_req_interrupt_func(req, on_interrupt, NULL);
}

static void stuck_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
        struct fuse_entry_param e = { 0 };

        for (fuse_ino_t ino = INO_OK; ino < INO_END; ino++) {
                if (parent != INO_ROOT || strcmp(name, names[ino]) != 0)
                        continue;
                e.ino = ino;
                e.attr_timeout = stuck_timeout(ino);
                e.entry_timeout = 3600.0;
                stuck_attr(ino, &e.attr);
                fuse_reply_entry(req, &e);
                return;
        }
        fuse_reply_err(req, ENOENT);
}

static void stuck_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        struct stat st;

        if (ino >= INO_END) {
                fuse_reply_err(req, ENOENT);
                return;
        }
        if (ino == INO_STUCK_STAT && is_stuck_user(req)) {
                hold(req, "getattr of stuck-stat", true);
                return;
        }
        stuck_attr(ino, &st);
        fuse_reply_attr(req, &st, stuck_timeout(ino));
}

static void stuck_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
        if (ino == INO_ROOT || ino >= INO_END) {
                fuse_reply_err(req, ino == INO_ROOT ? EISDIR : ENOENT);
                return;
        }
        if ((fi->flags & O_ACCMODE) != O_RDONLY) {
                fuse_reply_err(req, EACCES);
                return;
        }
        fi->direct_io = 1;
        fuse_reply_open(req, fi);
}

static void stuck_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
        static char buf[128 * 1024];
        size_t n;

        if (is_stuck_user(req) && (ino == INO_STUCK_READ || ino == INO_HARD_READ)) {
                hold(req, names[ino], ino == INO_STUCK_READ);
                return;
        }
        if (off >= (off_t)STUCK_SIZE) {
                fuse_reply_buf(req, NULL, 0);
                return;
        }
        n = size < sizeof(buf) ? size : sizeof(buf);
        if (n > STUCK_SIZE - (size_t)off)
                n = STUCK_SIZE - (size_t)off;
        for (size_t i = 0; i < n; i++)
                buf[i] = (char)((off + (off_t)i) * 7);
        fuse_reply_buf(req, buf, n);
}

static void stuck_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                          struct fuse_file_info *fi)
{
        char buf[1024];
        size_t used = 0;

        if (ino != INO_ROOT) {
                fuse_reply_err(req, ENOTDIR);
                return;
        }
        for (fuse_ino_t i = INO_OK + (fuse_ino_t)off; i < INO_END; i++) {
                struct stat st;
                size_t n;

                stuck_attr(i, &st);
                n = fuse_add_direntry(req, buf + used, sizeof(buf) - used, names[i], &st,
                                      (off_t)(i - INO_OK + 1));
                if (n > sizeof(buf) - used || used + n > size)
                        break;
                used += n;
        }
        fuse_reply_buf(req, buf, used);
}

/* Direct reads wait in the reader, as requests of its own (with asynchronous
 * direct I/O the kernel would queue them and return). */
static void stuck_init(void *userdata, struct fuse_conn_info *conn)
{
        conn->want &= ~FUSE_CAP_ASYNC_DIO;
}

static const struct fuse_lowlevel_ops stuck_ops = {
        .init = stuck_init,
        .lookup = stuck_lookup,
        .getattr = stuck_getattr,
        .open = stuck_open,
        .read = stuck_read,
        .readdir = stuck_readdir,
};

int main(int argc, char **argv)
{
        char *fargv[] = { argv[0], "-o", "allow_other,default_permissions,fsname=stuckfs", NULL };
        struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
        struct fuse_session *se;
        char *end;
        int r;

        if (argc != 3) {
                fprintf(stderr, "usage: %s MOUNTPOINT UID\n", argv[0]);
                return 2;
        }
        stuck_uid = (uid_t)strtoul(argv[2], &end, 10);
        if (*end || !argv[2][0]) {
                fprintf(stderr, "stuckfs: bad uid '%s'\n", argv[2]);
                return 2;
        }
        se = fuse_session_new(&args, &stuck_ops, sizeof(stuck_ops), NULL);
        if (!se)
                return 1;
        if (fuse_session_mount(se, argv[1]) != 0) {
                fuse_session_destroy(se);
                return 1;
        }
        fuse_set_signal_handlers(se);
        fprintf(stderr, "stuckfs: mounted on %s, stuck for uid %u\n", argv[1],
                (unsigned int)stuck_uid);
        /* One thread: a request held is just one not answered, nothing waits on it. */
        r = fuse_session_loop(se);
        fuse_remove_signal_handlers(se);
        fuse_session_unmount(se);
        fuse_session_destroy(se);
        return r < 0 ? 1 : 0;
}
