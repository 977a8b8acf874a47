#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <event2/event.h>

#include "io.h"
#include "log.h"
#include "macro.h"

enum { IO_OP_READ = 1, IO_OP_WRITE, IO_OP_FSYNC, IO_OP_FALLOCATE };

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
struct io {
        struct io_uring ring;
        bool ring_ok;
        int efd;
        struct event *ev;
        struct event *retry;            /* offers the SQ again after a failed submit */
        unsigned int retry_ms;
        int submit_err;                 /* the last one, logged once */
        unsigned int sqes;              /* filled, their CQE not yet reaped */
        struct io_req *waiting, **waiting_tail;
        bool reaping;                   /* in io_on_event: it submits once, at its end */
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
        if (!io->reaping)
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

        if (res < 0) {
                req->done(req, res);
                return;
        }
        if (rw && res > 0) {
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

static void io_on_event(evutil_socket_t fd, short what, void *arg)
{
        struct io *io = arg;
        struct io_uring_cqe *cqe;
        uint64_t n;

        if (read(io->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
                log_warning("io: reading eventfd: %m");

        /* What the callbacks queue is submitted once, after them. */
        io->reaping = true;
        while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
                struct io_req *req = io_uring_cqe_get_data(cqe);
                int res = cqe->res;

                io_uring_cqe_seen(&io->ring, cqe);
                /* Every CQE is an SQE we filled: only io_fill counts up. */
                assert(io->sqes > 0);
                io->sqes--;
                io_complete(io, req, res);
        }
        io->reaping = false;
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

/*
 * Waits for the CQE of every SQE the kernel took: their buffers belong to
 * the caller's MRs, about to go. SQEs it never took need no wait and go
 * with the ring; so do continuations still waiting for an SQE.
 */
static void io_drain(struct io *io)
{
        unsigned int taken = io->sqes - io_uring_sq_ready(&io->ring);
        struct io_uring_sync_cancel_reg cancel = {
                .fd = -1,
                .flags = IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_ALL,
                .timeout = { .tv_sec = 1 },
        };
        int r;

        if (taken == 0)
                return;
        /* Best effort (Linux 6.0): a read blocked on a pipe or a stuck
         * device comes back at once; I/O already running completes. */
        r = io_uring_register_sync_cancel(&io->ring, &cancel);
        if (r < 0 && r != -ENOENT)
                log_debug("io: cancelling %u requests: %s", taken, strerror(-r));
        while (taken > 0) {
                struct io_uring_cqe *cqe;

                r = io_uring_wait_cqe(&io->ring, &cqe);
                if (r == -EINTR)
                        continue;
                if (r < 0) {
                        log_err("io: waiting for %u requests: %s", taken, strerror(-r));
                        return;
                }
                io_uring_cqe_seen(&io->ring, cqe);
                taken--;
        }
}

void io_free(struct io *io)
{
        if (!io)
                return;
        if (io->ev)
                event_free(io->ev);
        if (io->retry)
                event_free(io->retry);
        if (io->ring_ok) {
                io_drain(io);
                io_uring_queue_exit(&io->ring);
        }
        safe_close(io->efd);
        free(io);
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
