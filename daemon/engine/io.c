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

struct io {
        struct io_uring ring;
        bool ring_ok;
        int efd;
        struct event *ev;
        unsigned int inflight;
};

static int io_prep(struct io *io, struct io_req *req)
{
        struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
        int r;

        if (!sqe) {
                /* The ring is sized for the daemon's bounded work; flush and retry once. */
                io_uring_submit(&io->ring);
                sqe = io_uring_get_sqe(&io->ring);
                if (!sqe)
                        return -EBUSY;
        }
        switch (req->op) {
        case IO_OP_READ:
                io_uring_prep_read(sqe, req->fd, (char *)req->buf + req->moved,
                                   req->len - req->moved, req->off + req->moved);
                /* Straight to an io-wq worker: the copy out of the page
                 * cache must not run on the event loop thread, which is
                 * the one posting work requests and polling CQs. */
                io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
                break;
        case IO_OP_WRITE:
                io_uring_prep_write(sqe, req->fd, (char *)req->buf + req->moved,
                                    req->len - req->moved, req->off + req->moved);
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
        r = io_uring_submit(&io->ring);
        if (r < 0)
                return r;
        io->inflight++;
        return 0;
}

static void io_complete(struct io *io, struct io_req *req, int res)
{
        if (res > 0 && (req->op == IO_OP_READ || req->op == IO_OP_WRITE)) {
                req->moved += res;
                if (req->moved < req->len && io_prep(io, req) == 0)
                        return;
                if (req->moved < req->len && req->op == IO_OP_WRITE) {
                        req->done(req, -EIO);
                        return;
                }
                req->done(req, req->moved);
                return;
        }
        if (res == 0 && req->op == IO_OP_WRITE) {
                req->done(req, -ENOSPC);
                return;
        }
        req->done(req, res < 0 ? res : (int64_t)req->moved);
}

static void io_on_event(evutil_socket_t fd, short what, void *arg)
{
        struct io *io = arg;
        struct io_uring_cqe *cqe;
        uint64_t n;

        if (read(io->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
                log_warning("io: reading eventfd: %m");

        while (io_uring_peek_cqe(&io->ring, &cqe) == 0) {
                struct io_req *req = io_uring_cqe_get_data(cqe);
                int res = cqe->res;

                io_uring_cqe_seen(&io->ring, cqe);
                io->inflight--;
                io_complete(io, req, res);
        }
}

int io_new(struct io **out, struct event_base *base, unsigned int depth)
{
        struct io *io;
        int r;

        io = calloc(1, sizeof(*io));
        if (!io)
                return -ENOMEM;
        io->efd = -1;

        r = io_uring_queue_init(MAX(depth, 8u), &io->ring, 0);
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
        io->ev = event_new(base, io->efd, EV_READ | EV_PERSIST, io_on_event, io);
        if (!io->ev || event_add(io->ev, NULL) < 0) {
                io_free(io);
                return -ENOMEM;
        }
        *out = io;
        return 0;
}

void io_free(struct io *io)
{
        if (!io)
                return;
        if (io->ev)
                event_free(io->ev);
        if (io->ring_ok) {
                /* Buffers of requests in flight belong to the caller's MRs:
                 * let the kernel finish with them before those go away. */
                while (io->inflight > 0) {
                        struct io_uring_cqe *cqe;

                        if (io_uring_wait_cqe(&io->ring, &cqe) < 0)
                                break;
                        io_uring_cqe_seen(&io->ring, cqe);
                        io->inflight--;
                }
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
        return io_prep(io, req);
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
