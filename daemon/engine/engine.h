#pragma once

/*
 * The transfer engine: the rdma_cm listener, the device's PD, the
 * preregistered receive ring and send pool, incoming transfers and the
 * outgoing ones its owner starts. Everything runs on the owner's
 * event_base.
 *
 * The interface is one-way: the owner calls in (start, cancel, ask for
 * progress, stop), the engine answers only through the callbacks it was
 * handed. It never sees the owner's job table or control protocol, and
 * the owner never sees a connection.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nodeset.h"
#include "stats.h"

struct auth_key;
struct config;
struct event_base;
struct engine;
struct engine_send;
struct wire_hop;

/* What the engine tells its owner about itself (from the loop). */
struct engine_ops {
        /*
         * The RDMA device went away (@up false; @text says why: every
         * transfer on it has failed already, engine_send answers
         * ENGINE_SEND_NODEV) or a device carries the listen address again
         * and the engine listens there (@up true; @text is its name).
         */
        void (*device)(void *owner, bool up, const char *text);
};

struct engine_params {
        struct event_base *base;
        /* Read when needed, never copied: the owner may replace what they
         * point at between events (SIGHUP does), but not the pointers. */
        const struct config *cfg;
        const struct auth_key *key;
        const struct engine_ops *ops;   /* may be NULL */
        void *owner;
};

/*
 * Bind and listen on cfg->listen_addr:cfg->port, open the device behind
 * it, allocate the PD, register the receive ring and the send pool.
 * 0 or -errno (the cause is logged). READY=1 may follow a success.
 */
int engine_new(struct engine **out, const struct engine_params *p);

/*
 * Release everything, at any time, whatever is still running: queue pairs
 * before completion queues before memory regions before the PD. Transfers
 * still in progress end unpublished and no callback is called. Safe on NULL.
 */
void engine_free(struct engine *e);

/*
 * The owner replaced what cfg points at (a reload): apply what can change
 * at run time. max_transfers limits admission in both directions at once
 * (up to what the rings were sized for at start); transfers already in
 * are never evicted. rate_limit applies at once, to the transfers running
 * too. The other keys are read when they are needed.
 */
void engine_reconfigure(struct engine *e);

/*
 * Begin shutdown: stop listening, fail every incoming transfer (nothing is
 * published) and every outgoing one ("daemon shutting down"; each one's
 * done callback follows). @done(@userdata) runs from the loop once no
 * connection is left.
 */
void engine_stop(struct engine *e, void (*done)(void *userdata), void *userdata);

/* For STATUS=: incoming transfers in progress, and their summed rate in
 * bytes/s since the previous call. */
unsigned int engine_recv_active(const struct engine *e);
uint64_t engine_recv_rate(struct engine *e);

/* What only the engine knows, for the owner's counters (`xferctl stats`). */
struct engine_stats {
        /* Incoming transfers since engine_new, counted once their verdict is
         * decided; a connection that never made an offer is not a transfer. */
        struct stats_tally recv;
        unsigned int recv_active;       /* as engine_recv_active() */
        uint32_t ring_held, ring_slots; /* receive ring: slots held by transfers, in all */
        uint32_t pool_held, pool_slots; /* send pool: the same */
};

/* A snapshot; changes nothing (unlike engine_recv_rate()). */
void engine_stats(const struct engine *e, struct engine_stats *s);

/* ---- the owner's files ---- */

struct engine_fstat;

/* @res: 0 or -errno; then what the file is. @fd is the caller's again. */
typedef void (*engine_fstat_fn)(void *userdata, int fd, int res, bool regular, uint64_t size);

/*
 * What @fd is, asked off the loop (statx through io_uring: a file on a
 * FUSE or NFS mount may take long to answer, or never). @fd is the
 * engine's from the call on, whatever it returns: the kernel resolves it
 * only when it gets to the request, so no one may close it before. @fn
 * (@userdata, @fd, ...) hands it back, once, from the loop, never from
 * inside this call, unless cancelled (the engine closes it then); *@out
 * is the handle until then. 0 or -errno.
 */
int engine_fstat(struct engine *e, int fd, engine_fstat_fn fn, void *userdata,
                 struct engine_fstat **out);
/* The owner stops waiting (its own deadline, or it went away): @fn never
 * runs. The kernel's request may stay out; the engine keeps its memory. */
void engine_fstat_cancel(struct engine_fstat *f);
/*
 * Around a burst of engine_fstat() calls from one callback (a batch of
 * control records): their requests go to the kernel together, in one
 * system call, at engine_io_release(). In pairs; they nest.
 */
void engine_io_hold(struct engine *e);
void engine_io_release(struct engine *e);

/* ---- outgoing transfers ---- */

enum engine_phase {
        ENGINE_PHASE_SENDING = 1,       /* the receiver accepted: data flows */
        ENGINE_PHASE_VERIFYING,         /* every byte acknowledged, waiting for the verdict */
};

enum engine_outcome {
        ENGINE_DONE = 0,                /* the receiver verified and published every file */
        ENGINE_FAILED,
        ENGINE_CANCELLED,
};

struct engine_result {
        enum engine_outcome outcome;
        unsigned int status;            /* enum wire_status: WIRE_OK unless FAILED */
        /*
         * FAILED: another attempt at the same transfer may succeed (the
         * fabric, the peer not listening or busy or restarting, a timeout,
         * data that arrived damaged), decided where the failure was seen.
         * False for what any attempt would meet again: the receiver refused
         * this file or this sender, our own file could not be read.
         */
        bool transient;
        const char *text;               /* why, for people; "" when nothing to say */
        uint64_t bytes;                 /* acknowledged by the receiver, every file's */
        uint64_t usec;                  /* first post to last completion */
        uint32_t files;                 /* files the receiver verified and published, or kept */
        uint32_t skipped;               /* of those, kept: it had them already (sync) */
        /*
         * A chain (engine_send_req.route): of the route's hops, how many
         * published the file too (DONE says only that the first receiver
         * did); those that did not, bit k for route[k] (a relay goes
         * around a hop that fails: the ones after it may have it); the
         * first of those, 1 .. route_hops (0: none), its enum wire_status
         * and why ("" when none).
         */
        uint32_t hops;
        struct nodeset hop_missing;
        uint32_t hop_failed;
        unsigned int hop_status;
        const char *hop_text;
};

/* Hops a chain's route holds at most (wire.h's WIRE_ROUTE_MAX). */
#define ENGINE_ROUTE_MAX        511

struct engine_progress {
        uint64_t bytes;                 /* acknowledged so far */
        uint64_t usec;                  /* since the first post */
        uint32_t skipped;               /* entries the receiver kept so far (sync) */
        /* A chain: the route's hops (engine_send_req.route_hops), and the
         * bytes each has acknowledged, as the relays last said (about
         * once a second; 0 before they have; a hop gone around starts
         * again from 0 at the one after it). */
        unsigned int hops;
        uint64_t hop_bytes[ENGINE_ROUTE_MAX];
};

/* One file of a job: engine_send_req's first, ops->next's after it. */
struct engine_send_file {
        int fd;                         /* ops->next's: the engine takes it (and closes it);
                                         * -1 for a directory */
        uint64_t size;
        const char *name;               /* name to publish under; in a tree, "DEST/a/b" */
        bool dir;                       /* in a tree: a directory (size 0, no fd) */
        bool link;                      /* in a tree: a symlink; fd's file holds its target
                                         * (size bytes, 1..NAME_LINK_MAX), sent as its data */
        uint32_t mode;                  /* in a tree: permission bits to keep, 0: none */
        uint64_t mtime_ns;              /* in a tree: a file's mtime (ns since the epoch), 0: none */
};

/* The owner may call engine_send_cancel() and engine_send_progress() from
 * inside phase, file_done and next; after done, the handle is gone. */
struct engine_send_ops {
        /* The transfer moved on (SENDING with the first file's data, then
         * VERIFYING once the last file's is all acknowledged; both may be
         * skipped). */
        void (*phase)(void *owner, enum engine_phase phase);
        /*
         * A job of several files (engine_send_req.files > 1) is one session
         * over the same connections (wire.h), one file at a time. Once
         * file @index - 1 is published, the engine asks for file @index
         * (1 .. files - 1): fill @f (copied during the call) and return 0;
         * or ENGINE_NEXT_LATER when it has none yet, and call
         * engine_send_resume() once it has (the receiver waits for the
         * next offer for its peer_timeout); or -errno to fail the job there
         * (not transient: the result's text says "file N: ..."). Required
         * when files > 1. A tree whose receiver kept entries 1 .. n - 1
         * from an earlier attempt (tree_token) is asked for @index n after
         * DEST, and DEST's file_done says @index n - 1 (every entry up to it
         * settled); one that holds them all (its RESULT was lost after it
         * published the tree) is asked for none.
         */
        int (*next)(void *owner, uint32_t index, struct engine_send_file *f);
        /* File @index (0 .. files - 1) was verified and published by the
         * receiver, @bytes long, or kept by it (sync: @bytes 0, except in a
         * pack, whose data moves anyway) (optional). Before done for the last. */
        void (*file_done)(void *owner, uint32_t index, uint64_t bytes);
        /* Exactly once, from the loop, after the transfer released every
         * connection: the handle is gone when this returns. Buffers a
         * disk request that never came back reads into stay held until
         * it does (io_timeout, rdmaxferd(8)). */
        void (*done)(void *owner, const struct engine_result *r);
};

/* How a job treats what the receiver has already (wire.h, Sync). */
enum engine_sync {
        ENGINE_SYNC_NONE = 0,
        ENGINE_SYNC_SKIP_EXISTING,      /* an entry whose name exists is kept */
        ENGINE_SYNC_SIZE,               /* a regular file of the same size is kept, another replaced */
        ENGINE_SYNC_DIGEST,             /* ... of the same size and digest */
};

/* Everything is copied: the pointers need to live only during the call. */
struct engine_send_req {
        uint64_t id;                    /* the transfer id the receiver logs; an owner's retry
                                         * offers the same id again */
        int fd;                         /* the (first) file; the engine duplicates it */
        uint64_t size;
        const char *name;               /* leaf name to publish under */
        uint32_t files;                 /* files in the job, ops->next gives the others; 0: 1 */
        bool tree;                      /* the job is a tree (wire.h): name is DEST, a directory
                                         * (fd -1, size 0); ops->next gives its entries, each
                                         * "DEST/..." */
        uint64_t job_bytes;             /* every file's size summed, announced to the receiver
                                         * (its limits); with files <= 1: size */
        uint32_t mode;                  /* a tree's DEST: its mode and mtime, the source
                                         * directory's (0: none) */
        uint64_t mtime_ns;
        const struct sockaddr *dst;     /* the peer's daemon, resolved by the owner */
        socklen_t dst_len;
        const char *peer;               /* "host:port", for logs */
        unsigned int attempt;           /* the owner's attempt at this transfer (1, 2, ...), for
                                         * the journal; 0: not counted */
        uint64_t bwlimit;               /* bytes/s for this transfer, 0: none (cfg rate_limit
                                         * applies either way; the lower wins) */
        unsigned int sync;              /* enum engine_sync */
        /* A tree's job token (WIRE_SOURCE_SIZE bytes, the same in every
         * attempt of the job; NULL: not resumable): its DEST offer carries
         * it, so a receiver that kept what an earlier attempt staged
         * continues from there (wire.h, Resuming a tree). */
        const uint8_t *tree_token;
        /* A relay chain (wire.h, Relay chains): the nodes after the peer,
         * in order; the peer relays the file to route[0], which relays it
         * to route[1], and so on. One regular file (files <= 1) or one
         * tree, never with sync. NULL, 0: the peer keeps it. */
        const struct wire_hop *route;
        unsigned int route_hops;        /* <= WIRE_ROUTE_MAX */
        /* The engine's own relays only (engine_send() refuses it): the
         * source token (WIRE_SOURCE_SIZE bytes) of the offer relayed, the
         * origin's, offered in place of the file's own (a tree's: as its
         * DEST's token, without tree_token), so that the next hop may
         * continue a partial, or a kept tree, the hop before it left. */
        const uint8_t *relay_source;
};

/* engine_send()'s named outcomes: no transfer was started. */
enum {
        ENGINE_SEND_FULL = 1,
        ENGINE_SEND_NODEV,
};

/*
 * Start sending. Admission is decided before anything changes:
 *   0                  started; *@out is the handle until ops->done,
 *   ENGINE_SEND_FULL   the send pool admits no more transfers now (a running
 *                      one must end first; with none running, it never will:
 *                      max_transfers outgrew the pool); nothing started,
 *   ENGINE_SEND_NODEV  the RDMA device is gone; ops->device says when it is
 *                      back; nothing started,
 *   -errno             nothing started (-ESHUTDOWN once stopping).
 * Callbacks come only from the loop, never from inside this call.
 */
int engine_send(struct engine *e, const struct engine_send_req *req,
                const struct engine_send_ops *ops, void *owner, struct engine_send **out);

/* ops->next's "not yet". */
enum { ENGINE_NEXT_LATER = 1 };

/* After ops->next answered ENGINE_NEXT_LATER: ask again now (from the loop,
 * not from inside a callback of this transfer). Nothing when it waits for
 * nothing. */
void engine_send_resume(struct engine_send *s);

/* Abort: ops->done follows from the loop with ENGINE_CANCELLED, unless
 * the outcome was already decided. */
void engine_send_cancel(struct engine_send *s);

void engine_send_progress(const struct engine_send *s, struct engine_progress *p);
