#pragma once

/*
 * Disk I/O off the event loop: io_uring, with its completions delivered
 * through an eventfd that is one more event on the loop. Short reads and
 * writes are continued here, so a request completes with its full length,
 * the bytes before EOF (reads), or -errno.
 *
 * A request io_read() & co. accepted (0) runs its callback exactly once,
 * from the loop, never from inside the call that queued it; one they
 * refused (-errno) never runs and was never shown to the kernel.
 */

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct io;
struct io_req;

typedef void (*io_done_fn)(struct io_req *req, int64_t res);

struct io_req {
        io_done_fn done;
        int op;                 /* private */
        int fd;
        void *buf;
        size_t len;
        uint64_t off;
        size_t moved;           /* private: bytes done so far */
        struct io_req *next;    /* private: waiting for an SQE */
};

/* @depth: the most requests in flight at once. 0 or -errno. */
int io_new(struct io **out, struct event_base *base, unsigned int depth);
/*
 * Cancels what the kernel is doing for us and waits for it (the buffers are
 * the caller's); drops the rest. No callback runs. Not from a callback.
 */
void io_free(struct io *io);

/*
 * Queue a request; @req must stay valid until its callback. 0, or -EBUSY
 * when the ring is full and the kernel takes nothing now.
 */
int io_read(struct io *io, struct io_req *req, int fd, void *buf, size_t len, uint64_t off);
int io_write(struct io *io, struct io_req *req, int fd, const void *buf, size_t len, uint64_t off);
int io_fsync(struct io *io, struct io_req *req, int fd);
/* fallocate(@fd, 0, 0, @len): reserve the blocks of a file about to be written. */
int io_fallocate(struct io *io, struct io_req *req, int fd, uint64_t len);
