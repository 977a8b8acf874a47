#pragma once

/*
 * The types of the engine's interface (engine.h): a transfer's outcome and
 * result, what an owner asks of a send and hears back. Here, at the
 * transfer layer, so that the layers that carry them out use the very
 * types the owner sees without reaching up to engine.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "nodeset.h"

struct wire_hop;

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
        uint64_t deleted;               /* a tree with delete: entries the receiver removed */
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
        uint64_t bytes;                 /* acknowledged so far; a pull's: come back so far */
        uint64_t total;                 /* a pull's: the file's size once it comes (0: not yet) */
        uint64_t usec;                  /* since the first post */
        uint32_t skipped;               /* entries the receiver kept so far (sync) */
        char rails[4 * 64];             /* the RDMA devices its lanes went over, "rxe_a,rxe_b"; "" */
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
        bool hard;                      /* with link: a hard link; fd's file holds the name
                                         * ("DEST/a/b", 1..WIRE_NAME_MAX bytes) of an earlier
                                         * regular file of the tree */
        uint32_t mode;                  /* in a tree: permission bits to keep, 0: none */
        uint64_t mtime_ns;              /* in a tree: a file's mtime (ns since the epoch), 0: none */
        /* A landing's with attributes (wire.h, Attributes): xattrs.h's
         * records, the owner's until its next call; NULL, 0: none. */
        const uint8_t *xattrs;
        uint16_t xattrs_len;
};

/* A dry run's word on one entry (engine_send_req.dry_run; wire.h, Dry runs). */
enum engine_verdict {
        ENGINE_WOULD_CREATE = 0,
        ENGINE_WOULD_REPLACE,
        ENGINE_WOULD_KEEP,              /* sync: the receiver has it (skipped) */
        ENGINE_WOULD_MERGE,             /* a directory there, merged into */
        ENGINE_WOULD_DELETE,            /* --delete: the receiver's, beyond the tree */
};

enum engine_item_kind {
        ENGINE_ITEM_FILE = 0,
        ENGINE_ITEM_DIR,
        ENGINE_ITEM_LINK,               /* a symlink */
        ENGINE_ITEM_HARD,               /* a hard link */
        ENGINE_ITEM_OTHER,              /* a device, fifo, socket (only deleted) */
};

struct engine_item {
        uint32_t index;                 /* the entry's in the job; a deletion's: the last entry's */
        enum engine_verdict verdict;
        enum engine_item_kind kind;
        /* WOULD_REPLACE: 'c' the digests differ, 's' the sizes, 't' the
         * mtimes, 'a' the ACLs, 'x' the user.* attributes, each else
         * '.'; "....." otherwise. */
        char changes[6];
        uint64_t size;                  /* the entry's bytes as offered (a deletion's: 0) */
        const char *name;               /* "DEST/a/b", or a single file's name */
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
        /* A dry run (optional): the receiver's verdict on an entry, once
         * its RESULT "ok" came (before its file_done), and each entry a
         * --delete would remove, before the last file_done. */
        void (*item)(void *owner, const struct engine_item *it);
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
                                         * directory's (0: none); a landing: the first
                                         * file's mode (ops->next gives the others') */
        uint64_t mtime_ns;
        const struct sockaddr *dst;     /* the peer's daemon, resolved by the owner */
        socklen_t dst_len;
        const char *peer;               /* "host:port", for logs */
        unsigned int attempt;           /* the owner's attempt at this transfer (1, 2, ...), for
                                         * the journal; 0: not counted */
        uint64_t bwlimit;               /* bytes/s for this transfer, 0: none (cfg rate_limit
                                         * applies either way; the lower wins) */
        unsigned int sync;              /* enum engine_sync */
        bool no_sparse;                 /* send a sparse file's holes too (wire.h, Sparse files) */
        bool delete;                    /* with a tree's sync: the receiver removes what DEST
                                         * holds beyond the tree's entries (wire.h, Deleting) */
        bool dry_run;                   /* judge every entry, move nothing (wire.h, Dry runs;
                                         * ops->item says each verdict); never in a chain */
        /* With delete: the rules the tree left entries out by, as text
         * (filter.h, filter_list_text; 1 .. WIRE_RULES_MAX bytes), for the
         * receiver to keep what they exclude (wire.h, Deleting); NULL: none. */
        const char *rules;
        size_t rules_len;
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
        /* The files land as a user on the peer (wire.h, Landing as the
         * user): regular files only, nothing resumable (no source token),
         * never with a tree, a route, sync or a dry run. NULL: the peer's
         * drop box. */
        const struct wire_landing *land;
};

/* engine_send()'s named outcomes: no transfer was started. */
enum {
        ENGINE_SEND_FULL = 1,
        ENGINE_SEND_NODEV,
};

/* ops->next's "not yet". */
enum { ENGINE_NEXT_LATER = 1 };
