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
 *
 * Nothing here blocks the loop: what io_uring has an operation for goes to
 * io_uring (the path operations are always run by its workers), and the one
 * call it has none for (fstatvfs) goes to a small pool of threads through
 * io_call(). A request may never complete (a FUSE server that does not
 * answer, a hard NFS mount): its owner stops waiting by its own deadline,
 * keeps the request's memory, and lets the late callback find nothing to do.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

struct event_base;
struct io;
struct io_req;
struct statx;

typedef void (*io_done_fn)(struct io_req *req, int64_t res);
/* Runs on a worker thread: touches only what @arg points at. >= 0 or -errno. */
typedef int64_t (*io_call_fn)(void *arg);

struct io_req {
        io_done_fn done;
        int op;                 /* private */
        int fd;
        void *buf;
        size_t len;
        uint64_t off;
        size_t moved;           /* private: bytes done so far */
        struct io_req *next;    /* private: waiting for an SQE, or for a worker */
        /* private: the path operations and io_call() */
        int fd2, flags;
        unsigned int mode;
        const char *path, *path2;
        io_call_fn fn;
        int64_t res;
};

/* @depth: the most requests in flight at once. 0 or -errno. */
int io_new(struct io **out, struct event_base *base, unsigned int depth);
/*
 * Cancels what the kernel is doing for us and waits for it, and for the
 * calls workers are running, at most IO_DRAIN_MS in all (the buffers are
 * the caller's); drops the rest (calls not started). No callback runs. Not from a callback. Returns how many requests are still out (the
 * kernel would not cancel them, or a worker is stuck in its call): their
 * memory, and the buffers they read into or write from, must never be
 * freed or reused, since they may still be written when they return.
 */
#define IO_DRAIN_MS     2000
unsigned int io_free(struct io *io);

/*
 * Between io_hold() and io_release() requests are queued but not handed
 * to the kernel (unless the SQ fills): io_release() submits them with one
 * system call. For a callback that queues many (a control connection's
 * batch of records, a statx each). Nests; callbacks of completions run
 * inside one already.
 */
void io_hold(struct io *io);
void io_release(struct io *io);

/*
 * Queue a request; @req must stay valid until its callback. 0, or -EBUSY
 * when the ring is full and the kernel takes nothing now.
 */
int io_read(struct io *io, struct io_req *req, int fd, void *buf, size_t len, uint64_t off);
int io_write(struct io *io, struct io_req *req, int fd, const void *buf, size_t len, uint64_t off);
int io_fsync(struct io *io, struct io_req *req, int fd);
/* fallocate(@fd, 0, 0, @len): reserve the blocks of a file about to be written. */
int io_fallocate(struct io *io, struct io_req *req, int fd, uint64_t len);

/*
 * The path operations: the strings and @stx must stay valid until the
 * callback. Their result is the syscall's (openat: the new fd, which the
 * callback then owns; a callback that does not run leaves the fd to the
 * process). Never refused: with the ring full they wait for room (0).
 */
int io_statx(struct io *io, struct io_req *req, int dirfd, const char *path, int flags,
             struct statx *stx);
int io_openat(struct io *io, struct io_req *req, int dirfd, const char *path, int flags,
              unsigned int mode);
int io_linkat(struct io *io, struct io_req *req, int olddirfd, const char *oldpath, int newdirfd,
              const char *newpath, int flags);
int io_renameat(struct io *io, struct io_req *req, int olddirfd, const char *oldpath,
                int newdirfd, const char *newpath);
int io_unlinkat(struct io *io, struct io_req *req, int dirfd, const char *path, int flags);

/*
 * @fn(@arg) on a worker thread (for calls io_uring has no operation for);
 * its result is the callback's. 0 or -errno (no thread could be started).
 */
int io_call(struct io *io, struct io_req *req, io_call_fn fn, void *arg);

/*
 * Blocking, for an io_call worker: @fd's @size bytes from offset 0 into
 * @buf, the file still @size bytes long: one preadv(2) asks a byte past
 * the end, so a file that grew since its size was taken shows it without
 * an fstat, and one that shrank ends early. 0; -ESTALE when it grew or
 * shrank; or -errno of the read.
 */
int io_read_whole(int fd, void *buf, uint64_t size);
/* Blocking, for a worker: the digest (digest.h) of @fd's @size bytes,
 * read whole as io_read_whole() does (at most a pack's file: they are
 * held in memory). 0, -ENOMEM, or io_read_whole()'s error. */
int io_digest_whole(int fd, uint64_t size, uint8_t out[WIRE_DIGEST_SIZE]);

/*
 * Ask the kernel to give up on @req (accepted, callback not yet run): its
 * callback still runs once, with -ECANCELED or whatever it got to. A call
 * on a worker, or a request the kernel cannot interrupt, just completes
 * when it completes.
 */
void io_cancel(struct io *io, struct io_req *req);
/* The same for every request on @fd (reads and writes of one file). */
void io_cancel_fd(struct io *io, int fd);
