#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <event2/event.h>

#include "digest.h"
#include "io.h"
#include "log.h"
#include "macro.h"

enum {
        IO_OP_READ = 1, IO_OP_WRITE, IO_OP_FSYNC, IO_OP_FALLOCATE,
        IO_OP_STATX, IO_OP_OPENAT, IO_OP_LINKAT, IO_OP_RENAMEAT, IO_OP_UNLINKAT,
        IO_OP_CALL,
};

/* Threads for io_call(): few calls need one (a free-space check per offer),
 * but one stuck in a dead NFS server must not hold up the rest. */
#define IO_WORKERS_MAX  4

/* The kernel's cap on one read or write (MAX_RW_COUNT); a CQE's res is an int. */
#define IO_RW_MAX       0x7ffff000u
#define IO_RETRY_MIN_MS 1u
#define IO_RETRY_MAX_MS 128u

/*
 * Once an SQE is filled, its request is accepted: liburing publishes it to
 * the kernel before io_uring_enter(), so even a failed submit leaves it in
 * the SQ for the next one to take. Such SQEs are offered again from a timer
 * until the kernel takes them; nothing takes them back. A continuation that
 * finds the SQ full waits in a list for an SQE. Either way its callback runs
 * once, later.
 */
/*
 * io_call()'s workers. Shared with the threads and freed by the last one
 * out: io_free() cannot wait for a call that never returns, so it only
 * drops its reference, and a thread that comes back later finds the pool
 * closing and leaves its request alone (its owner was told not to free it).
 */
struct io_pool {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct io_req *todo, **todo_tail;
        struct io_req *done, **done_tail;
        unsigned int threads, idle, running;
        unsigned int refs;              /* the io's, and one per thread */
        bool closing;
        int efd;                        /* our own duplicate of io->efd */
};

struct io {
        struct io_uring ring;
        struct io_pool *pool;
        bool ring_ok;
        int efd;
        struct event *ev;
        struct event *retry;            /* offers the SQ again after a failed submit */
        unsigned int retry_ms;
        int submit_err;                 /* the last one, logged once */
        unsigned int sqes;              /* filled, their CQE not yet reaped */
        struct io_req *waiting, **waiting_tail;
        /* io_hold()s, and io_on_event while it reaps: what is queued meanwhile
         * is submitted once, at the end (unless the SQ fills first). */
        unsigned int held;
};

static void io_fill(struct io *io, struct io_uring_sqe *sqe, struct io_req *req)
{
        size_t n = MIN(req->len - req->moved, (size_t)IO_RW_MAX);

        switch (req->op) {
        case IO_OP_READ:
                io_uring_prep_read(sqe, req->fd, (char *)req->buf + req->moved, (unsigned int)n,
                                   req->off + req->moved);
                /* Straight to an io-wq worker: the copy out of the page
                 * cache must not run on the event loop thread, which is
                 * the one posting work requests and polling CQs. */
                io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
                break;
        case IO_OP_WRITE:
                io_uring_prep_write(sqe, req->fd, (char *)req->buf + req->moved, (unsigned int)n,
                                    req->off + req->moved);
                io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
                break;
        case IO_OP_FALLOCATE:
                io_uring_prep_fallocate(sqe, req->fd, 0, 0, (off_t)req->len);
                break;
        /* The kernel runs these from its workers (they may sleep in a file
         * system), never in io_uring_enter() on our thread. */
        case IO_OP_STATX:
                io_uring_prep_statx(sqe, req->fd, req->path, req->flags, STATX_BASIC_STATS,
                                    req->buf);
                break;
        case IO_OP_OPENAT:
                io_uring_prep_openat(sqe, req->fd, req->path, req->flags, req->mode);
                io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
                break;
        case IO_OP_LINKAT:
                io_uring_prep_linkat(sqe, req->fd, req->path, req->fd2, req->path2, req->flags);
                break;
        case IO_OP_RENAMEAT:
                io_uring_prep_renameat(sqe, req->fd, req->path, req->fd2, req->path2, 0);
                break;
        case IO_OP_UNLINKAT:
                io_uring_prep_unlinkat(sqe, req->fd, req->path, req->flags);
                break;
        default:
                io_uring_prep_fsync(sqe, req->fd, 0);
                break;
        }
        io_uring_sqe_set_data(sqe, req);
        io->sqes++;
}

/* Waiting continuations into free SQEs, oldest first. */
static void io_fill_waiting(struct io *io)
{
        struct io_uring_sqe *sqe;

        while (io->waiting && (sqe = io_uring_get_sqe(&io->ring))) {
                struct io_req *req = io->waiting;

                io->waiting = req->next;
                if (!io->waiting)
                        io->waiting_tail = &io->waiting;
                req->next = NULL;
                io_fill(io, sqe, req);
        }
}

static void io_submit_failed(struct io *io, int r)
{
        /* Transient: out of request memory, completions to reap first, a signal. */
        bool transient = r == -EAGAIN || r == -EBUSY || r == -EINTR || r == -ENOMEM;

        if (r != io->submit_err)
                log_msg(transient ? LOG_DEBUG : LOG_ERR,
                        "io: io_uring_submit: %s (%u requests wait, retrying)", strerror(-r),
                        io_uring_sq_ready(&io->ring));
        io->submit_err = r;
}

/*
 * Hands the kernel the SQ and the continuations waiting for room in it.
 * What it does not take stays and is offered again from the retry timer.
 */
static void io_submit(struct io *io)
{
        for (;;) {
                int r;

                io_fill_waiting(io);
                if (io_uring_sq_ready(&io->ring) == 0)
                        break;
                r = io_uring_submit(&io->ring);
                if (r < 0) {
                        io_submit_failed(io, r);
                        break;
                }
                io->submit_err = 0;
                /* Room again: the continuations waiting for it go in too. */
                if (r == 0 || !io->waiting)
                        break;
        }
        if (io_uring_sq_ready(&io->ring) > 0 || io->waiting) {
                if (!evtimer_pending(io->retry, NULL)) {
                        struct timeval tv = { .tv_usec = io->retry_ms * 1000 };

                        if (evtimer_add(io->retry, &tv) < 0)
                                log_err("io: cannot arm the submit retry");
                        io->retry_ms = MIN(io->retry_ms * 2, IO_RETRY_MAX_MS);
                }
        } else {
                io->retry_ms = IO_RETRY_MIN_MS;
        }
}

static void io_on_retry(evutil_socket_t fd, short what, void *arg)
{
        io_submit(arg);
}

/* A new request: accepted once it has an SQE, refused (untouched) without. */
static int io_queue(struct io *io, struct io_req *req)
{
        struct io_uring_sqe *sqe;

        req->next = NULL;
        io_fill_waiting(io);
        sqe = io->waiting ? NULL : io_uring_get_sqe(&io->ring);
        if (!sqe) {
                /* Full of SQEs the kernel has not taken yet: offer them now. */
                io_submit(io);
                sqe = io->waiting ? NULL : io_uring_get_sqe(&io->ring);
                if (!sqe)
                        return -EBUSY;
        }
        io_fill(io, sqe, req);
        if (!io->held)
                io_submit(io);
        return 0;
}

/* The rest of a short read or write: accepted already, so it cannot fail. */
static void io_continue(struct io *io, struct io_req *req)
{
        struct io_uring_sqe *sqe = io->waiting ? NULL : io_uring_get_sqe(&io->ring);

        if (sqe) {
                io_fill(io, sqe, req);
                return;
        }
        req->next = NULL;
        *io->waiting_tail = req;
        io->waiting_tail = &req->next;
}

static void io_complete(struct io *io, struct io_req *req, int res)
{
        bool rw = req->op == IO_OP_READ || req->op == IO_OP_WRITE;

        if (res < 0 || !rw) {
                /* An error, or a result of its own (openat's fd). */
                req->done(req, res);
                return;
        }
        if (res > 0) {
                req->moved += (size_t)res;
                if (req->moved < req->len) {
                        io_continue(io, req);
                        return;
                }
        }
        /* A write that moves nothing would move nothing again. */
        if (req->op == IO_OP_WRITE && req->moved < req->len) {
                req->done(req, -ENOSPC);
                return;
        }
        req->done(req, (int64_t)req->moved);
}

/* The calls the workers finished, in order. */
static void io_reap_calls(struct io *io)
{
        struct io_req *done;

        if (!io->pool)
                return;
        pthread_mutex_lock(&io->pool->lock);
        done = io->pool->done;
        io->pool->done = NULL;
        io->pool->done_tail = &io->pool->done;
        pthread_mutex_unlock(&io->pool->lock);
        while (done) {
                struct io_req *req = done;

                done = req->next;
                req->next = NULL;
                req->done(req, req->res);
        }
}

static void io_on_event(evutil_socket_t fd, short what, void *arg)
{
        struct io *io = arg;
        struct io_uring_cqe *cqe;
        uint64_t n;

        if (read(io->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
                log_warning("io: reading eventfd: %m");

        /* What the callbacks queue is submitted once, after them. */
        io->held++;
        while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
                struct io_req *req = io_uring_cqe_get_data(cqe);
                int res = cqe->res;

                io_uring_cqe_seen(&io->ring, cqe);
                /* Every CQE is an SQE we filled: only io_fill and
                 * io_cancel count up. A cancel's own has no request. */
                assert(io->sqes > 0);
                io->sqes--;
                if (req)
                        io_complete(io, req, res);
        }
        io_reap_calls(io);
        io_release(io);
}

void io_hold(struct io *io)
{
        io->held++;
}

void io_release(struct io *io)
{
        assert(io->held > 0);
        if (--io->held == 0)
                io_submit(io);
}

int io_new(struct io **out, struct event_base *base, unsigned int depth)
{
        struct io *io;
        int r;

        io = calloc(1, sizeof(*io));
        if (!io)
                return -ENOMEM;
        io->efd = -1;
        io->waiting_tail = &io->waiting;
        io->retry_ms = IO_RETRY_MIN_MS;

        /* CLAMP: a large ring config is worth a smaller ring, not a failed start. */
        r = io_uring_queue_init(MAX(depth, 8u), &io->ring, IORING_SETUP_CLAMP);
        if (r < 0) {
                log_err("io_uring_queue_init(%u): %s", depth, strerror(-r));
                io_free(io);
                return r;
        }
        io->ring_ok = true;

        io->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (io->efd < 0) {
                r = -errno;
                io_free(io);
                return r;
        }
        r = io_uring_register_eventfd(&io->ring, io->efd);
        if (r < 0) {
                io_free(io);
                return r;
        }
        io->retry = evtimer_new(base, io_on_retry, io);
        io->ev = event_new(base, io->efd, EV_READ | EV_PERSIST, io_on_event, io);
        if (!io->retry || !io->ev || event_add(io->ev, NULL) < 0) {
                io_free(io);
                return -ENOMEM;
        }
        *out = io;
        return 0;
}

static uint64_t io_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Waits for the CQE of every SQE the kernel took: their buffers belong to
 * the caller's MRs, about to go. SQEs it never took need no wait and go
 * with the ring; so do continuations still waiting for an SQE. A request
 * the kernel will not give up (a FUSE server that ignores interrupts, a
 * hard NFS mount) is waited for until @deadline (io_now_ms()) at most:
 * returns how many are still out.
 */
static unsigned int io_drain(struct io *io, uint64_t deadline)
{
        unsigned int taken = io->sqes - io_uring_sq_ready(&io->ring);
        struct io_uring_sync_cancel_reg cancel = {
                .fd = -1,
                .flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
                .timeout = { .tv_sec = 1 },
        };
        int r;

        if (taken == 0)
                return 0;
        /* Best effort (Linux 6.0): a read blocked on a pipe or a stuck
         * device comes back at once; I/O already running completes. */
        r = io_uring_register_sync_cancel(&io->ring, &cancel);
        if (r < 0 && r != -ENOENT)
                log_debug("io: cancelling %u requests: %s", taken, strerror(-r));
        while (taken > 0) {
                struct io_uring_cqe *cqe;
                uint64_t now = io_now_ms();
                struct __kernel_timespec ts;

                if (now >= deadline)
                        break;
                ts.tv_sec = (long long)((deadline - now) / 1000u);
                ts.tv_nsec = (long long)((deadline - now) % 1000u) * 1000000;
                r = io_uring_wait_cqe_timeout(&io->ring, &cqe, &ts);
                if (r == -EINTR)
                        continue;
                if (r == -ETIME)
                        break;
                if (r < 0) {
                        log_err("io: waiting for %u requests: %s", taken, strerror(-r));
                        break;
                }
                io_uring_cqe_seen(&io->ring, cqe);
                taken--;
        }
        return taken;
}

static void io_pool_unref(struct io_pool *pool)
{
        pthread_mutex_destroy(&pool->lock);
        pthread_cond_destroy(&pool->cond);
        safe_close(pool->efd);
        free(pool);
}

/*
 * Drop the io's reference. A call still running is waited for until
 * @deadline (io_now_ms()): one that is merely busy (a start-up sweep, an
 * fstatvfs) finishes and its owner may free it; one still running then is
 * stuck, and left to its thread. Returns how many were left.
 */
static unsigned int io_pool_close(struct io_pool *pool, uint64_t deadline)
{
        unsigned int running;
        bool last;

        if (!pool)
                return 0;
        pthread_mutex_lock(&pool->lock);
        pool->closing = true;
        /* Never started: their owners may free them. */
        pool->todo = NULL;
        pool->todo_tail = &pool->todo;
        while (pool->running > 0) {
                uint64_t now = io_now_ms(), wait;
                struct timespec ts;

                if (now >= deadline)
                        break;
                /* The condition variable keeps CLOCK_REALTIME: wait relative to it. */
                wait = deadline - now;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += (time_t)(wait / 1000u);
                ts.tv_nsec += (long)(wait % 1000u) * 1000000L;
                if (ts.tv_nsec >= 1000000000L) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&pool->cond, &pool->lock, &ts);
        }
        running = pool->running;
        last = --pool->refs == 0;
        pthread_cond_broadcast(&pool->cond);
        pthread_mutex_unlock(&pool->lock);
        if (last)
                io_pool_unref(pool);
        return running;
}

unsigned int io_free(struct io *io)
{
        uint64_t deadline = io_now_ms() + IO_DRAIN_MS;
        unsigned int left = 0;

        if (!io)
                return 0;
        if (io->ev)
                event_free(io->ev);
        if (io->retry)
                event_free(io->retry);
        /* One deadline for both: a worker's call and the kernel's requests. */
        left = io_pool_close(io->pool, deadline);
        if (io->ring_ok) {
                left += io_drain(io, deadline);
                /* The kernel keeps what it still runs for us; closing does not wait. */
                io_uring_queue_exit(&io->ring);
        }
        if (left > 0)
                log_warning("io: %u disk request%s still out (not given up by the kernel within "
                            "%u ms, or stuck in a worker); %s memory is left to %s", left,
                            left == 1 ? "" : "s", IO_DRAIN_MS, left == 1 ? "its" : "their",
                            left == 1 ? "it" : "them");
        safe_close(io->efd);
        free(io);
        return left;
}

static int io_start(struct io *io, struct io_req *req, int op, int fd, void *buf,
                    size_t len, uint64_t off)
{
        req->op = op;
        req->fd = fd;
        req->buf = buf;
        req->len = len;
        req->off = off;
        req->moved = 0;
        return io_queue(io, req);
}

int io_read(struct io *io, struct io_req *req, int fd, void *buf, size_t len, uint64_t off)
{
        return io_start(io, req, IO_OP_READ, fd, buf, len, off);
}

int io_write(struct io *io, struct io_req *req, int fd, const void *buf, size_t len, uint64_t off)
{
        return io_start(io, req, IO_OP_WRITE, fd, (void *)buf, len, off);
}

int io_fsync(struct io *io, struct io_req *req, int fd)
{
        return io_start(io, req, IO_OP_FSYNC, fd, NULL, 0, 0);
}

int io_fallocate(struct io *io, struct io_req *req, int fd, uint64_t len)
{
        return io_start(io, req, IO_OP_FALLOCATE, fd, NULL, len, 0);
}

/*
 * A path operation is never refused: without an SQE it waits with the
 * continuations for one (io_submit's retry timer). Its callers cannot
 * hold it back and ask again as the data path does with its slots: a
 * client's FILE checked, a publish's linkat; refusing those failed a
 * user's job for a ring that was merely full for a moment.
 */
static int io_path(struct io *io, struct io_req *req, int op, int fd, const char *path, int fd2,
                   const char *path2, int flags, unsigned int mode, void *buf)
{
        req->fd2 = fd2;
        req->path = path;
        req->path2 = path2;
        req->flags = flags;
        req->mode = mode;
        if (io_start(io, req, op, fd, buf, 0, 0) == 0)
                return 0;
        req->next = NULL;
        *io->waiting_tail = req;
        io->waiting_tail = &req->next;
        io_submit(io);
        return 0;
}

int io_statx(struct io *io, struct io_req *req, int dirfd, const char *path, int flags,
             struct statx *stx)
{
        return io_path(io, req, IO_OP_STATX, dirfd, path, -1, NULL, flags, 0, stx);
}

int io_openat(struct io *io, struct io_req *req, int dirfd, const char *path, int flags,
              unsigned int mode)
{
        return io_path(io, req, IO_OP_OPENAT, dirfd, path, -1, NULL, flags, mode, NULL);
}

int io_linkat(struct io *io, struct io_req *req, int olddirfd, const char *oldpath, int newdirfd,
              const char *newpath, int flags)
{
        return io_path(io, req, IO_OP_LINKAT, olddirfd, oldpath, newdirfd, newpath, flags, 0, NULL);
}

int io_renameat(struct io *io, struct io_req *req, int olddirfd, const char *oldpath,
                int newdirfd, const char *newpath)
{
        return io_path(io, req, IO_OP_RENAMEAT, olddirfd, oldpath, newdirfd, newpath, 0, 0, NULL);
}

int io_unlinkat(struct io *io, struct io_req *req, int dirfd, const char *path, int flags)
{
        return io_path(io, req, IO_OP_UNLINKAT, dirfd, path, -1, NULL, flags, 0, NULL);
}

static void *io_worker(void *arg)
{
        struct io_pool *pool = arg;
        bool last;

        pthread_mutex_lock(&pool->lock);
        for (;;) {
                struct io_req *req;
                int64_t res;

                while (!pool->todo && !pool->closing) {
                        pool->idle++;
                        pthread_cond_wait(&pool->cond, &pool->lock);
                        pool->idle--;
                }
                if (!pool->todo)
                        break;
                req = pool->todo;
                pool->todo = req->next;
                if (!pool->todo)
                        pool->todo_tail = &pool->todo;
                pool->running++;
                pthread_mutex_unlock(&pool->lock);

                res = req->fn(req->buf);

                pthread_mutex_lock(&pool->lock);
                pool->running--;
                /* Closing: io_pool_close waits for this one (and told its
                 * owner it was still out if it came back too late); nobody
                 * reads a result any more. */
                if (pool->closing) {
                        pthread_cond_broadcast(&pool->cond);
                        continue;
                }
                req->res = res;
                req->next = NULL;
                *pool->done_tail = req;
                pool->done_tail = &req->next;
                if (eventfd_write(pool->efd, 1) < 0)
                        log_warning("io: waking the loop: %m");
        }
        pool->threads--;
        last = --pool->refs == 0;
        pthread_mutex_unlock(&pool->lock);
        if (last)
                io_pool_unref(pool);
        return NULL;
}

static int io_pool_new(struct io *io)
{
        struct io_pool *pool;

        pool = calloc(1, sizeof(*pool));
        if (!pool)
                return -ENOMEM;
        pool->efd = fcntl(io->efd, F_DUPFD_CLOEXEC, 3);
        if (pool->efd < 0) {
                free(pool);
                return -errno;
        }
        pthread_mutex_init(&pool->lock, NULL);
        pthread_cond_init(&pool->cond, NULL);
        pool->todo_tail = &pool->todo;
        pool->done_tail = &pool->done;
        pool->refs = 1;
        io->pool = pool;
        return 0;
}

/* One more thread, with every signal blocked: they are the loop's. Under the lock. */
static int io_pool_grow(struct io_pool *pool)
{
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t t;
        int r;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* Calls are small: a stat, not a recursion. */
        pthread_attr_setstacksize(&attr, 256 * 1024);
        r = pthread_create(&t, &attr, io_worker, pool);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
                return -r;
        pool->threads++;
        pool->refs++;
        return 0;
}

int io_call(struct io *io, struct io_req *req, io_call_fn fn, void *arg)
{
        struct io_pool *pool;
        int r = 0;

        if (!io->pool) {
                r = io_pool_new(io);
                if (r < 0)
                        return r;
        }
        pool = io->pool;
        req->op = IO_OP_CALL;
        req->fn = fn;
        req->buf = arg;
        req->res = 0;
        req->next = NULL;
        pthread_mutex_lock(&pool->lock);
        if (pool->idle == 0 && pool->threads < IO_WORKERS_MAX) {
                r = io_pool_grow(pool);
                /* With a thread already there, the call waits for it. */
                if (r < 0 && pool->threads > 0)
                        r = 0;
        }
        if (r == 0) {
                *pool->todo_tail = req;
                pool->todo_tail = &req->next;
                pthread_cond_signal(&pool->cond);
        }
        pthread_mutex_unlock(&pool->lock);
        return r;
}

int io_read_whole(int fd, void *buf, uint64_t size)
{
        uint8_t *p = buf;
        uint64_t got = 0;

        for (;;) {
                uint8_t past;
                struct iovec iov[2] = { { p ? p + got : NULL, (size_t)(size - got) }, { &past, 1 } };
                ssize_t n = preadv(fd, iov, 2, (off_t)got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if ((uint64_t)n > size - got || (n == 0 && got < size))
                        return -ESTALE;
                got += (uint64_t)n;
                /* The end, or all of it where a read stopped at the end
                 * without looking past it (a FUSE file may). */
                if (n == 0 || got == size)
                        return 0;
        }
}

int io_digest_whole(int fd, uint64_t size, uint8_t out[WIRE_DIGEST_SIZE])
{
        uint8_t *buf = malloc(MAX(size, (uint64_t)1));
        int r;

        if (!buf)
                return -ENOMEM;
        r = io_read_whole(fd, buf, size);
        if (r == 0)
                digest_buffer(buf, size, out);
        free(buf);
        return r;
}

/* Best effort: without an SQE now, what is out completes when it completes. */
static void io_queue_cancel(struct io *io, struct io_req *req, int fd)
{
        struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);

        if (!sqe)
                return;
        if (req)
                io_uring_prep_cancel64(sqe, (uint64_t)(uintptr_t)req, 0);
        else
                io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data(sqe, NULL);
        io->sqes++;
        if (!io->held)
                io_submit(io);
}

void io_cancel(struct io *io, struct io_req *req)
{
        if (req->op != IO_OP_CALL)
                io_queue_cancel(io, req, -1);
}

void io_cancel_fd(struct io *io, int fd)
{
        io_queue_cancel(io, NULL, fd);
}
