/*
 * Disk I/O through io_uring (daemon/engine/transport/io.c) on a real event_base with
 * temporary files: results, short reads, continuations, more requests than
 * the ring holds, and io_uring_submit failing (-Wl,--wrap=io_uring_submit):
 * a request io.c accepted runs its callback exactly once, one it refused
 * never runs, and io_free returns. Under ASan a refused request is freed at
 * once, so one that runs later is a heap-use-after-free report.
 */

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "io.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifndef TEST_ASAN
#define TEST_ASAN 0
#endif

/* ---- fault injection: io.c's calls to io_uring_submit() land here ---- */

int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring);

static int fault_fail;          /* submits still to fail, with -fault_errno */
static int fault_errno;
static int fault_short;         /* submits still to hand the kernel one SQE only */
static int submits;             /* calls, whatever they did */

/* What liburing does before io_uring_enter(): the SQEs become the kernel's
 * to take, whatever the syscall then says. */
static void publish_sq(struct io_uring *ring)
{
        ring->sq.sqe_head = ring->sq.sqe_tail;
        __atomic_store_n(ring->sq.ktail, ring->sq.sqe_tail, __ATOMIC_RELEASE);
}

int __wrap_io_uring_submit(struct io_uring *ring)
{
        submits++;
        if (fault_fail > 0) {
                fault_fail--;
                publish_sq(ring);
                return -fault_errno;
        }
        if (fault_short > 0 && io_uring_sq_ready(ring) > 1) {
                fault_short--;
                publish_sq(ring);
                return io_uring_enter((unsigned int)ring->ring_fd, 1, 0, 0, NULL);
        }
        return __real_io_uring_submit(ring);
}

static void faults_off(void)
{
        fault_fail = 0;
        fault_short = 0;
}

/* ---- a hang (io_free waiting for a CQE that cannot come) fails the test ---- */

static const char *volatile watch_what = "";

static void on_alarm(int sig)
{
        static const char a[] = "not ok - hung: ", b[] = "\n";

        (void)sig;
        (void)!write(STDOUT_FILENO, a, sizeof(a) - 1);
        (void)!write(STDOUT_FILENO, watch_what, strlen(watch_what));
        (void)!write(STDOUT_FILENO, b, sizeof(b) - 1);
        _exit(1);
}

static void watch(const char *what, unsigned int sec)
{
        watch_what = what;
        alarm(sec);
}

/* ---- requests and their callbacks ---- */

struct treq {
        struct io_req req;
        int runs;
        int64_t res;
        int64_t want;
};

#define TALLY_MAX 600

struct tally {
        unsigned int accepted, refused;
        struct treq *acc[TALLY_MAX];
        struct treq *ref[TALLY_MAX];    /* without ASan, kept to see they never run */
};

static struct event_base *base;
static unsigned int n_runs;

static void on_done(struct io_req *req, int64_t res)
{
        struct treq *t = (struct treq *)req;

        t->runs++;
        t->res = res;
        n_runs++;
}

static struct treq *treq_new(int64_t want)
{
        struct treq *t = calloc(1, sizeof(*t));

        if (!t)
                abort();
        t->req.done = on_done;
        t->want = want;
        return t;
}

/* Files the outcome of queueing @t (@r from io_read & co.). 0 or @r. */
static int tally_add(struct tally *tl, struct treq *t, int r)
{
        if (r == 0) {
                tl->acc[tl->accepted++] = t;
                return 0;
        }
        if (TEST_ASAN) {
                free(t);
                t = NULL;
        }
        tl->ref[tl->refused++] = t;
        return r;
}

static int queue_read(struct io *io, struct tally *tl, int fd, void *buf, size_t len,
                      uint64_t off, int64_t want)
{
        struct treq *t = treq_new(want);

        return tally_add(tl, t, io_read(io, &t->req, fd, buf, len, off));
}

static uint64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs the loop until @want callbacks have run (true) or @ms have passed. */
static bool run_until(unsigned int want, unsigned int ms)
{
        uint64_t end = now_ms() + ms;

        while (n_runs < want && now_ms() < end)
                event_base_loop(base, EVLOOP_ONCE);
        return n_runs >= want;
}

/* Runs the loop a while longer: a callback that was not due would show. */
static void settle(unsigned int ms)
{
        uint64_t end = now_ms() + ms;

        while (now_ms() < end)
                event_base_loop(base, EVLOOP_ONCE);
}

/* Every accepted request ran once with its result; no refused one ran. */
static void tally_check(struct tally *tl, const char *what)
{
        unsigned int once = 0, wrong = 0, refused_ran = 0;

        for (unsigned int i = 0; i < tl->accepted; i++) {
                once += tl->acc[i]->runs == 1;
                if (tl->acc[i]->runs > 0 && tl->acc[i]->res != tl->acc[i]->want) {
                        if (wrong++ == 0)
                                diag("%s: request %u: result %lld, not %lld", what, i,
                                     (long long)tl->acc[i]->res, (long long)tl->acc[i]->want);
                }
        }
        for (unsigned int i = 0; i < tl->refused; i++)
                refused_ran += tl->ref[i] && tl->ref[i]->runs > 0;
        is_int(once, tl->accepted, "%s: each of %u accepted requests ran exactly once", what,
               tl->accepted);
        is_int(wrong, 0, "%s: each with its result", what);
        is_int(refused_ran, 0, "%s: none of %u refused requests ran", what, tl->refused);
        is_int(n_runs, tl->accepted, "%s: no callback beyond those", what);
}

static void tally_clear(struct tally *tl)
{
        for (unsigned int i = 0; i < tl->accepted; i++)
                free(tl->acc[i]);
        for (unsigned int i = 0; i < tl->refused; i++)
                free(tl->ref[i]);
        memset(tl, 0, sizeof(*tl));
        n_runs = 0;
}

static void io_free_watched(struct io *io, const char *what)
{
        watch(what, 20);
        io_free(io);
        alarm(0);
        ok(true, "%s: io_free returned", what);
}

/* ---- fixtures ---- */

static char dir[] = "/tmp/test-io.XXXXXX";
static bool have_sync_cancel;
static int dfd = -1;

#define FILE_SIZE (1u << 20)

static uint8_t pattern(uint64_t off)
{
        return (uint8_t)(off * 7 + (off >> 12));
}

/* A file of @size bytes of pattern(), opened O_RDWR. */
static int make_file(const char *name, size_t size)
{
        uint8_t *b = malloc(size ? size : 1);
        int fd;

        if (!b)
                abort();
        for (size_t i = 0; i < size; i++)
                b[i] = pattern(i);
        fd = openat(dfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || pwrite(fd, b, size, 0) != (ssize_t)size)
                abort();
        free(b);
        return fd;
}

static bool is_pattern(const uint8_t *b, size_t len, uint64_t off)
{
        for (size_t i = 0; i < len; i++)
                if (b[i] != pattern(off + i))
                        return false;
        return true;
}

static void safe_close_fd(int fd)
{
        if (fd >= 0)
                close(fd);
}

/* ---- the cases ---- */

static void test_basic(void)
{
        struct tally tl = { 0 };
        static uint8_t wbuf[8192], rbuf[8192], rbuf2[4096], rbuf3[16];
        struct io *io = NULL;
        struct treq *w, *f, *r, *s, *e, *a, *bad, *ro;
        struct stat st;
        int fd = make_file("basic", 0), fd2 = make_file("alloc", 0);
        int rofd = openat(dfd, "basic", O_RDONLY | O_CLOEXEC);

        is_int(io_new(&io, base, 8), 0, "basic: io_new");
        for (size_t i = 0; i < sizeof(wbuf); i++)
                wbuf[i] = pattern(i);

        w = treq_new(sizeof(wbuf));
        is_int(tally_add(&tl, w, io_write(io, &w->req, fd, wbuf, sizeof(wbuf), 0)), 0,
               "basic: write queued");
        ok(run_until(1, 5000), "basic: write completed");
        is_int(w->res, sizeof(wbuf), "basic: write of 8192 bytes");

        f = treq_new(0);
        is_int(tally_add(&tl, f, io_fsync(io, &f->req, fd)), 0, "basic: fsync queued");
        a = treq_new(0);
        is_int(tally_add(&tl, a, io_fallocate(io, &a->req, fd2, FILE_SIZE)), 0,
               "basic: fallocate queued");
        ok(run_until(3, 5000), "basic: fsync and fallocate completed");
        is_int(f->res, 0, "basic: fsync result");
        is_int(a->res, 0, "basic: fallocate result");
        ok(fstat(fd2, &st) == 0 && st.st_size == FILE_SIZE, "basic: fallocate sized the file");

        r = treq_new(sizeof(rbuf));
        is_int(tally_add(&tl, r, io_read(io, &r->req, fd, rbuf, sizeof(rbuf), 0)), 0,
               "basic: read queued");
        s = treq_new(8192 - 6000);
        is_int(tally_add(&tl, s, io_read(io, &s->req, fd, rbuf2, sizeof(rbuf2), 6000)), 0,
               "basic: read across EOF queued");
        e = treq_new(0);
        is_int(tally_add(&tl, e, io_read(io, &e->req, fd, rbuf3, sizeof(rbuf3), 8192)), 0,
               "basic: read at EOF queued");
        bad = treq_new(-EBADF);
        is_int(tally_add(&tl, bad, io_read(io, &bad->req, -1, rbuf3, sizeof(rbuf3), 0)), 0,
               "basic: read of fd -1 queued");
        ro = treq_new(-EBADF);
        is_int(tally_add(&tl, ro, io_write(io, &ro->req, rofd, wbuf, 16, 0)), 0,
               "basic: write to a read-only fd queued");
        ok(run_until(8, 5000), "basic: reads completed");
        is_int(r->res, sizeof(rbuf), "basic: read of 8192 bytes");
        ok(is_pattern(rbuf, sizeof(rbuf), 0), "basic: read what was written");
        is_int(s->res, 8192 - 6000, "basic: short read at EOF: the bytes before it");
        ok(is_pattern(rbuf2, 8192 - 6000, 6000), "basic: and the right ones");
        is_int(e->res, 0, "basic: read at EOF: 0");
        is_int(bad->res, -EBADF, "basic: fd -1: -EBADF");
        is_int(ro->res, -EBADF, "basic: read-only fd: -EBADF");
        settle(20);
        tally_check(&tl, "basic");
        io_free_watched(io, "basic");
        tally_clear(&tl);
        close(fd);
        close(fd2);
        close(rofd);
}

/* 256 reads, then 256 writes, on a ring of 8 (a CQ of 16): all in flight at once. */
static void test_many(void)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        uint8_t *buf = malloc(FILE_SIZE);
        int fd = make_file("many", FILE_SIZE), out = make_file("many-out", 0);
        unsigned int refused = 0;

        if (!buf)
                abort();
        is_int(io_new(&io, base, 8), 0, "many: io_new");
        for (unsigned int i = 0; i < 256; i++)
                refused += queue_read(io, &tl, fd, buf + i * 4096, 4096, i * 4096, 4096) < 0;
        is_int(refused, 0, "many: 256 reads accepted on a ring of 8");
        ok(run_until(tl.accepted, 10000), "many: all reads completed");
        ok(is_pattern(buf, FILE_SIZE, 0), "many: the file read right");
        refused = 0;
        for (unsigned int i = 0; i < 256; i++) {
                struct treq *t = treq_new(4096);

                refused += tally_add(&tl, t, io_write(io, &t->req, out, buf + i * 4096, 4096,
                                                      (uint64_t)i * 4096)) < 0;
        }
        is_int(refused, 0, "many: 256 writes accepted");
        ok(run_until(tl.accepted, 10000), "many: all writes completed");
        memset(buf, 0, FILE_SIZE);
        ok(pread(out, buf, FILE_SIZE, 0) == FILE_SIZE && is_pattern(buf, FILE_SIZE, 0),
           "many: the file written right");
        settle(20);
        tally_check(&tl, "many");
        io_free_watched(io, "many");
        tally_clear(&tl);
        free(buf);
        close(fd);
        close(out);
}

/*
 * One io_uring_submit fails after liburing published the SQE. Whatever io.c
 * answers must hold: accepted runs once (even with no later request to carry
 * it in), refused never runs, also when a later submit succeeds.
 */
static void test_submit_fails(int err, const char *name)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        static uint8_t buf[3][4096];
        int fd = make_file("fails", FILE_SIZE);
        char what[64];

        snprintf(what, sizeof(what), "submit -%s", name);
        is_int(io_new(&io, base, 8), 0, "%s: io_new", what);

        /* Alone: nothing else would submit it. */
        fault_errno = err;
        fault_fail = 1;
        queue_read(io, &tl, fd, buf[0], 4096, 0, 4096);
        ok(run_until(tl.accepted, 2000), "%s: a lone accepted request completed", what);

        /* Then a request that submits fine: it must not carry a refused one along. */
        fault_fail = 1;
        queue_read(io, &tl, fd, buf[1], 4096, 4096, 4096);
        is_int(queue_read(io, &tl, fd, buf[2], 4096, 8192, 4096), 0,
               "%s: the next request accepted", what);
        ok(run_until(tl.accepted, 2000), "%s: accepted requests completed", what);
        settle(50);
        faults_off();
        diag("%s: %u accepted, %u refused", what, tl.accepted, tl.refused);
        tally_check(&tl, what);
        io_free_watched(io, what);
        tally_clear(&tl);
        close(fd);
}

/*
 * Submits keep failing: the SQ fills (published, not taken), io_uring_get_sqe
 * gives NULL and requests are refused. Then submits work again.
 */
static void test_sq_full(void)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        static uint8_t buf[33][4096];
        int fd = make_file("full", FILE_SIZE);

        is_int(io_new(&io, base, 8), 0, "sq full: io_new");
        fault_errno = EAGAIN;
        fault_fail = 1000;
        for (unsigned int i = 0; i < 32; i++)
                queue_read(io, &tl, fd, buf[i], 4096, i * 4096, 4096);
        settle(20);
        diag("sq full: %u accepted, %u refused while every submit failed", tl.accepted,
             tl.refused);
        ok(tl.refused > 0, "sq full: requests refused once the SQ is full");
        is_int(n_runs, 0, "sq full: nothing ran while submits failed");
        faults_off();
        is_int(queue_read(io, &tl, fd, buf[32], 4096, 32 * 4096, 4096), 0,
               "sq full: accepted again once submits work");
        ok(run_until(tl.accepted, 2000), "sq full: accepted requests completed");
        settle(50);
        tally_check(&tl, "sq full");
        io_free_watched(io, "sq full");
        tally_clear(&tl);
        close(fd);
}

/*
 * A path operation is never refused (io.h): with the SQ full and every
 * submit failing, a statx of a client's descriptor (how the daemon checks
 * a FILE handed over) is accepted, waits, and completes once, with the
 * file's size, when submits work again; so does an openat behind it.
 */
static void test_sq_full_path(void)
{
        struct tally tl = { 0 };
        struct treq *st = treq_new(0), *op = treq_new(0);
        struct io *io = NULL;
        static uint8_t buf[32][4096];
        struct statx stx;
        unsigned int before;
        int fd = make_file("fullpath", FILE_SIZE);

        is_int(io_new(&io, base, 8), 0, "sq full, path: io_new");
        fault_errno = EBUSY;
        fault_fail = 1000;
        for (unsigned int i = 0; i < 32; i++)
                queue_read(io, &tl, fd, buf[i], 4096, i * 4096, 4096);
        ok(tl.refused > 0, "sq full, path: reads refused, the SQ is full");
        memset(&stx, 0, sizeof(stx));
        is_int(io_statx(io, &st->req, fd, "", AT_EMPTY_PATH, &stx), 0, "sq full, path: statx accepted");
        is_int(io_openat(io, &op->req, dfd, "fullpath", O_RDONLY | O_CLOEXEC, 0), 0,
               "sq full, path: openat accepted");
        settle(20);
        is_int(st->runs + op->runs, 0, "sq full, path: nothing ran while submits failed");
        faults_off();
        before = n_runs;
        ok(run_until(before + tl.accepted + 2, 3000) && st->runs == 1 && op->runs == 1,
           "sq full, path: both ran once submits worked");
        ok(st->res == 0 && S_ISREG(stx.stx_mode) && stx.stx_size == FILE_SIZE,
           "sq full, path: statx gave the file's size (%lld)", (long long)st->res);
        ok(op->res >= 0, "sq full, path: openat gave a descriptor (%lld)", (long long)op->res);
        if (op->res >= 0)
                close((int)op->res);
        settle(20);
        ok(st->runs == 1 && op->runs == 1, "sq full, path: each ran exactly once");
        io_free_watched(io, "sq full, path");
        tally_clear(&tl);
        free(st);
        free(op);
        close(fd);
}

/* The kernel takes one SQE per io_uring_enter: the rest must still go in. */
static void test_short_submit(void)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        static uint8_t buf[6][4096];
        int fd = make_file("short", FILE_SIZE);

        is_int(io_new(&io, base, 8), 0, "short submit: io_new");
        fault_errno = EBUSY;
        fault_fail = 5;
        fault_short = 1000;
        for (unsigned int i = 0; i < 6; i++)
                queue_read(io, &tl, fd, buf[i], 4096, i * 4096, 4096);
        ok(run_until(tl.accepted, 2000), "short submit: accepted requests completed");
        settle(50);
        faults_off();
        tally_check(&tl, "short submit");
        io_free_watched(io, "short submit");
        tally_clear(&tl);
        close(fd);
}

/*
 * A pipe gives short reads on demand: 100 bytes, then the rest. The
 * continuation's submit fails (@full: and the SQ is full, so it has no SQE);
 * the read must still complete once, with all 300 bytes.
 */
static void test_continuation(bool full)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        static uint8_t src[300], dst[300], buf[16][4096];
        const char *what = full ? "continuation, SQ full" : "continuation, submit fails";
        int fd = make_file("cont", FILE_SIZE);
        struct treq *t;
        int p[2];

        for (size_t i = 0; i < sizeof(src); i++)
                src[i] = pattern(i);
        memset(dst, 0, sizeof(dst));
        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        is_int(io_new(&io, base, 8), 0, "%s: io_new", what);
        t = treq_new(sizeof(dst));
        is_int(tally_add(&tl, t, io_read(io, &t->req, p[0], dst, sizeof(dst), 0)), 0,
               "%s: pipe read queued", what);
        settle(20);

        fault_errno = EAGAIN;
        fault_fail = full ? 1000 : 1;
        if (full)
                for (unsigned int i = 0; i < 16; i++)
                        queue_read(io, &tl, fd, buf[i], 4096, i * 4096, 4096);
        if (write(p[1], src, 100) != 100)
                abort();
        settle(50);
        faults_off();
        if (write(p[1], src + 100, 200) != 200)
                abort();
        /* One more request, which submits whatever is left in the SQ. */
        queue_read(io, &tl, fd, buf[0], 4096, 0, 4096);
        ok(run_until(tl.accepted, 2000), "%s: accepted requests completed", what);
        settle(50);
        is_int(t->runs, 1, "%s: the pipe read ran once", what);
        is_int(t->res, sizeof(dst), "%s: with all 300 bytes", what);
        ok(memcmp(dst, src, sizeof(dst)) == 0, "%s: in order", what);
        tally_check(&tl, what);
        io_free_watched(io, what);
        tally_clear(&tl);
        close(p[0]);
        close(p[1]);
        close(fd);
}

/*
 * io_free with requests the kernel never took (submits failing) and with
 * one that would wait forever (a read of an empty pipe): it returns, and
 * runs no callback.
 */
static void test_free_pending(void)
{
        struct tally tl = { 0 };
        struct io *io = NULL;
        static uint8_t buf[4][4096];
        int fd = make_file("pending", FILE_SIZE);
        int p[2];

        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        is_int(io_new(&io, base, 8), 0, "free pending: io_new");
        /* Without IORING_REGISTER_SYNC_CANCEL nothing would end that read. */
        if (have_sync_cancel)
                is_int(queue_read(io, &tl, p[0], buf[0], 4096, 0, 4096), 0,
                       "free pending: read of an empty pipe queued");
        else
                diag("free pending: no synchronous cancel here, no pipe read");
        settle(20);
        fault_errno = EAGAIN;
        fault_fail = 1000;
        for (unsigned int i = 1; i < 4; i++)
                queue_read(io, &tl, fd, buf[i], 4096, i * 4096, 4096);
        settle(20);
        io_free_watched(io, "free pending");
        faults_off();
        is_int(n_runs, 0, "free pending: no callback ran");
        tally_clear(&tl);
        close(p[0]);
        close(p[1]);
        close(fd);
}

/* Queue @t through @r (from io_statx & co.) and run it: its result. */
static int64_t run_one(struct treq *t, int r, const char *what)
{
        unsigned int before = n_runs;

        if (r != 0) {
                diag("%s: refused: %s", what, strerror(-r));
                return INT64_MIN;
        }
        if (!run_until(before + 1, 5000)) {
                diag("%s: no callback", what);
                return INT64_MIN;
        }
        return t->res;
}

/*
 * The path operations the receiver publishes with (daemon/engine/recv/recv-file.c),
 * through io_uring: a no-follow lookup sees a planted symlink, a nameless file
 * is linked through /proc and never over an existing name, renamed over one
 * (a symlink is replaced, not followed), and the directory fsynced.
 */
static void test_paths(void)
{
        struct io *io = NULL;
        struct treq t = { .req.done = on_done };
        struct statx stx;
        char proc[32], target[256], buf[16] = "";
        int fd = make_file("paths", 4096), tmp = -1, rfd;

        snprintf(target, sizeof(target), "%s-target", dir);
        unlink(target);
        is_int(io_new(&io, base, 8), 0, "paths: io_new");
        memset(&stx, 0, sizeof(stx));
        is_int(run_one(&t, io_statx(io, &t.req, fd, "", AT_EMPTY_PATH, &stx), "statx fd"), 0,
               "paths: statx of a descriptor (AT_EMPTY_PATH)");
        ok(S_ISREG(stx.stx_mode) && stx.stx_size == 4096, "paths: a regular file of 4096 bytes");
        is_int(run_one(&t, io_statx(io, &t.req, dfd, "missing", AT_SYMLINK_NOFOLLOW, &stx), "statx"),
               -ENOENT, "paths: no such name");
        ok(symlinkat(target, dfd, "ln") == 0, "paths: plant a symlink pointing outside");
        is_int(run_one(&t, io_statx(io, &t.req, dfd, "ln", AT_SYMLINK_NOFOLLOW, &stx), "statx ln"),
               0, "paths: a dangling symlink exists, not followed");
        ok(S_ISLNK(stx.stx_mode), "paths: seen as the symlink itself");

        tmp = (int)run_one(&t, io_openat(io, &t.req, dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0640),
                           "openat");
        ok(tmp >= 0, "paths: a nameless file (O_TMPFILE): fd %d", tmp);
        if (tmp < 0)
                goto out;
        ok(pwrite(tmp, "fresh", 5, 0) == 5, "paths: written");
        is_int(run_one(&t, io_fsync(io, &t.req, tmp), "fsync"), 0, "paths: fsync");
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", tmp);
        is_int(run_one(&t, io_linkat(io, &t.req, AT_FDCWD, proc, dfd, "paths", AT_SYMLINK_FOLLOW),
                       "linkat over"), -EEXIST, "paths: link never replaces a name");
        is_int(run_one(&t, io_linkat(io, &t.req, AT_FDCWD, proc, dfd, ".rdmaxfer-1.part",
                                     AT_SYMLINK_FOLLOW), "linkat part"), 0,
               "paths: linked under a temporary name");
        is_int(run_one(&t, io_renameat(io, &t.req, dfd, ".rdmaxfer-1.part", dfd, "ln"), "renameat"),
               0, "paths: renamed over the symlink");
        ok(access(target, F_OK) != 0, "paths: nothing written through the symlink");
        rfd = openat(dfd, "ln", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ok(rfd >= 0 && read(rfd, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "fresh") == 0,
           "paths: the name holds the new file");
        if (rfd >= 0)
                close(rfd);
        is_int(run_one(&t, io_unlinkat(io, &t.req, dfd, ".rdmaxfer-1.part", 0), "unlinkat"), -ENOENT,
               "paths: no temporary name left");
        is_int(run_one(&t, io_fsync(io, &t.req, dfd), "fsync dir"), 0, "paths: fsync of the directory");
        is_int(run_one(&t, io_unlinkat(io, &t.req, dfd, "ln", 0), "unlinkat ln"), 0, "paths: unlinkat");
out:
        io_free_watched(io, "paths");
        n_runs = 0;
        safe_close_fd(tmp);
        close(fd);
}

static int64_t call_answer(void *arg)
{
        return *(int64_t *)arg;
}

/* Set by call_stuck's thread once it runs: until then io_free would drop
 * the call as never started, which is not what test_call looks at. */
static atomic_bool call_entered;

/* Blocks until the pipe @arg reads from has data: a call that does not return. */
static int64_t call_stuck(void *arg)
{
        char c;

        atomic_store(&call_entered, true);
        return read(*(int *)arg, &c, 1) == 1 ? 1 : -errno;
}

/* A call that is busy, not stuck: it returns 300 ms after it starts. */
static atomic_bool busy_entered;

static int64_t call_busy(void *arg)
{
        atomic_store(&busy_entered, true);
        usleep(300000);
        return 7;
}

/* io_free() while a worker's call is merely busy (a start-up sweep): it
 * waits for it, and nothing is left out (a daemon that fails to start
 * right after engine_new must not leak what a worker held). */
static void test_call_busy(void)
{
        static struct treq t = { .req.done = on_done };
        struct io *io = NULL;
        uint64_t t0;

        is_int(io_new(&io, base, 8), 0, "busy call: io_new");
        is_int(io_call(io, &t.req, call_busy, NULL), 0, "busy call: queued");
        for (t0 = now_ms(); !atomic_load(&busy_entered) && now_ms() - t0 < 10000;)
                settle(10);
        t0 = now_ms();
        is_int(io_free(io), 0, "busy call: io_free waits for it: nothing left out");
        ok(now_ms() - t0 < IO_DRAIN_MS, "busy call: within IO_DRAIN_MS (%llu ms)",
           (unsigned long long)(now_ms() - t0));
        is_int(t.runs, 0, "busy call: its callback never runs");
}

/* io_call(): results from a worker, in the loop; one stuck in its call is
 * left to its thread by io_free, which says so after IO_DRAIN_MS. */
static void test_call(void)
{
        static struct treq t[3] = { [0 ... 2] = { .req.done = on_done } };
        static int64_t answer = 42, fail = -EIO;
        static int p[2];
        struct io *io = NULL;
        uint64_t t0;
        unsigned int left;

        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        is_int(io_new(&io, base, 8), 0, "call: io_new");
        is_int(run_one(&t[0], io_call(io, &t[0].req, call_answer, &answer), "call"), 42,
               "call: the worker's result");
        is_int(run_one(&t[1], io_call(io, &t[1].req, call_answer, &fail), "call fails"), -EIO,
               "call: an error");
        n_runs = 0;
        is_int(io_call(io, &t[2].req, call_stuck, &p[0]), 0, "call: one that does not return");
        /* A loaded machine may start the worker late: wait for it, bounded. */
        for (t0 = now_ms(); !atomic_load(&call_entered) && now_ms() - t0 < 10000;)
                settle(10);
        ok(atomic_load(&call_entered), "call: a worker runs it");
        settle(50);
        is_int(n_runs, 0, "call: no callback while it is stuck");
        t0 = now_ms();
        watch("call: io_free", 20);
        left = io_free(io);
        alarm(0);
        is_int(left, 1, "call: io_free says one request is still out");
        ok(now_ms() - t0 < IO_DRAIN_MS + 1000, "call: and waits for it IO_DRAIN_MS at most (%llu ms)",
           (unsigned long long)(now_ms() - t0));
        /* The thread comes back to a closed pool and leaves t[2] alone. */
        ok(write(p[1], "x", 1) == 1, "call: the stuck call is let go");
        settle(50);
        is_int(t[2].runs, 0, "call: its callback never runs");
        n_runs = 0;
        close(p[0]);
        close(p[1]);
}

/* io_cancel(): a read the kernel can interrupt (an empty pipe) comes back
 * at once, its callback run once. */
static void test_cancel(void)
{
        static struct treq t = { .req.done = on_done };
        static uint8_t buf[64];
        struct io *io = NULL;
        int p[2];

        if (pipe2(p, O_CLOEXEC) < 0)
                abort();
        is_int(io_new(&io, base, 8), 0, "cancel: io_new");
        n_runs = 0;
        is_int(io_read(io, &t.req, p[0], buf, sizeof(buf), 0), 0, "cancel: read of an empty pipe");
        settle(20);
        is_int(n_runs, 0, "cancel: it waits");
        io_cancel(io, &t.req);
        ok(run_until(1, 5000), "cancel: its callback ran");
        ok(t.res == -ECANCELED || t.res == -EINTR, "cancel: with -ECANCELED (%lld)", (long long)t.res);
        n_runs = 0;
        is_int(io_read(io, &t.req, p[0], buf, sizeof(buf), 0), 0, "cancel: another read");
        settle(20);
        io_cancel_fd(io, p[0]);
        ok(run_until(1, 5000), "cancel by fd: its callback ran");
        is_int(t.runs, 2, "cancel: each read ran once");
        n_runs = 0;
        io_free_watched(io, "cancel");
        close(p[0]);
        close(p[1]);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
}

static const char *only;

/* `test-io NAME` runs the cases whose name contains NAME. */
static bool want(const char *name)
{
        return !only || strstr(name, only);
}

/* Requests queued while held go to the kernel together, at the release. */
static void test_hold(void)
{
        struct tally tl = { 0 };
        static uint8_t buf[12][512];
        struct io *io = NULL;
        int fd = make_file("hold", 8192), before;
        bool data = true;

        is_int(io_new(&io, base, 8), 0, "hold: io_new");
        io_hold(io);
        before = submits;
        for (int i = 0; i < 4; i++)
                queue_read(io, &tl, fd, buf[i], 512, (uint64_t)i * 512, 512);
        is_int(submits - before, 0, "hold: four reads queued, none handed to the kernel");
        io_hold(io);
        queue_read(io, &tl, fd, buf[4], 512, 4 * 512, 512);
        io_release(io);
        is_int(submits - before, 0, "hold: nested: the inner release hands nothing over");
        io_release(io);
        is_int(submits - before, 1, "hold: the outer release: all five in one submit");
        ok(run_until(5, 5000), "hold: all five completed");

        /* More than the SQ holds (8): the full SQ goes over, held or not. */
        io_hold(io);
        before = submits;
        for (int i = 0; i < 12; i++)
                queue_read(io, &tl, fd, buf[i], 512, (uint64_t)i * 512, 512);
        ok(submits - before >= 1, "hold: twelve queued, the SQ handed over when full (%d submits)",
           submits - before);
        io_release(io);
        ok(run_until(17, 5000), "hold: the twelve completed");
        for (int i = 0; i < 12; i++)
                data = data && is_pattern(buf[i], 512, (uint64_t)i * 512);
        ok(data, "hold: every read read its own bytes");
        settle(20);
        tally_check(&tl, "hold");
        io_free_watched(io, "hold");
        tally_clear(&tl);
        close(fd);
}

/* A worker's read of a small file whole, and the size it must still have. */
static void test_read_whole(void)
{
        static uint8_t data[5000], buf[sizeof(data) + 1];
        int fd, wfd, pfd[2];

        for (size_t i = 0; i < sizeof(data); i++)
                data[i] = (uint8_t)(i * 7 + 3);
        fd = openat(dfd, "whole", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t)sizeof(data))
                abort();
        memset(buf, 0, sizeof(buf));
        is_int(io_read_whole(fd, buf, sizeof(data)), 0, "read_whole: a file of the size given: 0");
        ok(memcmp(buf, data, sizeof(data)) == 0, "read_whole: its bytes, all of them");
        is_int(io_read_whole(fd, buf, sizeof(data) - 1), -ESTALE, "read_whole: a file longer than said (it grew): -ESTALE");
        is_int(io_read_whole(fd, buf, sizeof(data) + 1), -ESTALE, "read_whole: a file shorter than said (it shrank): -ESTALE");
        if (ftruncate(fd, 0) < 0)
                abort();
        is_int(io_read_whole(fd, NULL, 0), 0, "read_whole: an empty file said empty: 0");
        if (write(fd, "x", 1) != 1)
                abort();
        is_int(io_read_whole(fd, NULL, 0), -ESTALE, "read_whole: an empty file that has a byte now: -ESTALE");
        close(fd);
        wfd = openat(dfd, "whole", O_WRONLY | O_CLOEXEC);
        is_int(io_read_whole(wfd, buf, 1), -EBADF, "read_whole: a descriptor not open for reading: -EBADF");
        close(wfd);
        if (pipe(pfd) < 0)
                abort();
        is_int(io_read_whole(pfd[0], buf, 1), -ESPIPE, "read_whole: a pipe: -ESPIPE");
        close(pfd[0]);
        close(pfd[1]);
}

int main(int argc, char **argv)
{
        static const char *files[] = { "basic", "alloc", "many", "many-out", "fails", "full",
                                       "short", "cont", "pending", "paths", "whole", "hold" };
        struct io_uring_sync_cancel_reg probe_cancel = {
                .fd = -1,
                .flags = IORING_ASYNC_CANCEL_ANY,
        };
        struct timeval tv = { .tv_usec = 2000 };
        struct event *tick;
        struct io_uring probe;

        signal(SIGALRM, on_alarm);
        signal(SIGPIPE, SIG_IGN);
        if (io_uring_queue_init(8, &probe, 0) < 0) {
                printf("1..0 # SKIP io_uring is not available here\n");
                return 0;
        }
        /* Where the kernel has it (6.0): nothing to cancel, 0 cancelled. */
        have_sync_cancel = io_uring_register_sync_cancel(&probe, &probe_cancel) >= 0;
        io_uring_queue_exit(&probe);
        if (!mkdtemp(dir))
                abort();
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        base = event_base_new();
        /* EVLOOP_ONCE returns at least this often. */
        tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
        if (dfd < 0 || !base || !tick || event_add(tick, &tv) < 0)
                abort();

        only = argc > 1 ? argv[1] : NULL;
        if (want("basic"))
                test_basic();
        if (want("many"))
                test_many();
        if (want("submit-eagain"))
                test_submit_fails(EAGAIN, "EAGAIN");
        if (want("submit-ebusy"))
                test_submit_fails(EBUSY, "EBUSY");
        if (want("submit-eintr"))
                test_submit_fails(EINTR, "EINTR");
        if (want("sq-full"))
                test_sq_full();
        if (want("sq-full-path"))
                test_sq_full_path();
        if (want("short-submit"))
                test_short_submit();
        if (want("continuation-fails"))
                test_continuation(false);
        if (want("continuation-full"))
                test_continuation(true);
        if (want("free-pending"))
                test_free_pending();
        if (want("paths"))
                test_paths();
        if (want("call"))
                test_call();
        test_call_busy();
        if (want("cancel"))
                test_cancel();
        if (want("read-whole"))
                test_read_whole();
        if (want("hold"))
                test_hold();

        event_free(tick);
        event_base_free(base);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                unlinkat(dfd, files[i], 0);
        close(dfd);
        rmdir(dir);
        return done_testing();
}
