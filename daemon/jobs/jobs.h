#pragma once

/*
 * Outgoing send jobs: the table, the queue (at most cfg.max_transfers run
 * at once), watchers, and retention of finished jobs (the last 64) so a
 * job's owner can still see them. The model is the jobs' own: what a job
 * is asked to do (struct job_spec), its states (enum job_state); whoever
 * speaks a protocol translates at its edge (control, ctl.h).
 *
 * Within an attempt states only move forward (job_state_transition_ok()).
 * A job the engine cannot admit yet (its send pool is full) stays QUEUED
 * until a running one ends; if none of ours is running, the pool never
 * frees and the job fails instead of waiting.
 *
 * An attempt that fails transiently (engine_result.transient) is tried
 * again, from the start (a job of several files: from its first file not
 * published; a tree never), with the same transfer id (so a receiver that
 * resumes can tell it): the job waits in RETRYING for its backoff (1 s,
 * doubling, capped at cfg.retry_delay_max, up to a quarter less at
 * random), then goes back to QUEUED. It gives up (FAILED) after
 * 1 + retry_max attempts (or the job's own retries), or once
 * cfg.retry_window has passed since its first failure. A RETRYING job
 * holds its client's file descriptor and nothing of the engine's; it does
 * not count against max_transfers, but does against the queue limits.
 *
 * A job of several files (a tree: DEST, then its entries) gets its files
 * after the submit, in order, from one feeder (jobs_set_feeder()), which
 * hands over what jobs_add_file() takes and waits for want_more when the
 * job holds enough; jobs alone hands them to the engine.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nodeset.h"

struct wire_landing;

struct engine;
struct stats_tally;
struct engine_send;
struct event_base;
struct jobs;

/* A job's texts, at their longest (bytes, no NUL). */
#define JOB_HOST_MAX            63      /* a numeric IPv4 or IPv6 address */
#define JOB_PEER_MAX            (JOB_HOST_MAX + 6)      /* "HOST:PORT", "[IPV6]:PORT" */
#define JOB_NAME_MAX            255
#define JOB_PATH_MAX            4095    /* a tree's entry, "DEST/a/b" (PATH_MAX less its NUL) */
#define JOB_TEXT_MAX            255
#define JOB_RETRIES_MAX         100     /* a job's own retries: attempts after the first */
/* A chain: the hops after the peer at most (engine.h's ENGINE_ROUTE_MAX),
 * so JOB_NODES_MAX nodes in all, as many as a struct nodeset holds. */
#define JOB_ROUTE_HOPS_MAX      511
#define JOB_NODES_MAX           (1 + JOB_ROUTE_HOPS_MAX)

enum job_state {
        JOB_QUEUED,
        JOB_CONNECTING,
        JOB_SENDING,
        JOB_VERIFYING,                  /* all data sent, waiting for the receiver's verdict */
        JOB_DONE,
        JOB_FAILED,
        JOB_CANCELLED,
        JOB_RETRYING,                   /* an attempt failed transiently; the next one waits its delay */
        _JOB_STATE_MAX,
};

/* "queued", "connecting", ...: for logs. */
const char *job_state_str(enum job_state state);
/* DONE, FAILED, CANCELLED. */
bool job_state_final(enum job_state state);
/* CONNECTING, SENDING, VERIFYING: the engine runs the job. */
bool job_state_active(enum job_state state);
/*
 * Whether a job may move from @from to @to: within an attempt forward
 * only (QUEUED, CONNECTING, SENDING, VERIFYING, either middle one may be
 * skipped), then a final state or RETRYING (not from QUEUED: only an
 * attempt that ran fails transiently); RETRYING to QUEUED (the next
 * attempt) or to a final state; nothing out of a final state.
 */
bool job_state_transition_ok(enum job_state from, enum job_state to);

/* How a job treats what the receiver has already (engine.h's engine_sync). */
enum job_sync {
        JOB_SYNC_NONE,
        JOB_SYNC_SKIP_EXISTING,         /* an entry whose name exists is kept */
        JOB_SYNC_SIZE,                  /* a regular file of the same size is kept, another replaced */
        JOB_SYNC_DIGEST,                /* ... of the same size and digest */
};

/* A node of a chain after the peer. */
struct job_hop {
        char host[JOB_HOST_MAX + 1];    /* a numeric IPv4 or IPv6 address (jobs checks it) */
        uint16_t port;                  /* 0: cfg.port */
};

/* What a job is asked to do (jobs_submit() copies what it keeps). */
struct job_spec {
        char host[JOB_HOST_MAX + 1];    /* the peer: a numeric IPv4 or IPv6 address */
        uint16_t port;                  /* 0: cfg.port */
        /* The first file's leaf name to publish under; a tree's DEST, a
         * relative path (the tree's top directory, no descriptor). */
        char name[JOB_NAME_MAX + 1];
        uint32_t files;                 /* in the job (0 or 1: the first alone); a tree: DEST and its
                                         * entries, 2 or more */
        uint64_t job_bytes;             /* files > 1: every file's size summed */
        bool tree;
        uint32_t mode;                  /* a tree's DEST: its source directory's mode (07777 bits kept);
                                         * a landing: the first file's */
        uint64_t mtime_ns;              /* ... and mtime (0: none) */
        enum job_sync sync;
        bool delete;                    /* with a tree's sync: DEST ends with only its entries */
        /* With delete: the rules the tree left entries out by, as text
         * (filter.h, filter_list_text), whose excluded entries the peer
         * keeps (wire.h, Deleting); NULL: none. Never with land. */
        const char *rules;
        bool dry_run;                   /* judge every entry, move nothing; never a chain */
        uint64_t bwlimit;               /* bytes/s, 0: none */
        bool no_sparse;                 /* a sparse file's holes sent as any bytes */
        bool own_retries;               /* retries is the job's own; else cfg.retry_max */
        unsigned int retries;           /* attempts after the first, up to JOB_RETRIES_MAX */
        /* A relay chain (engine.h): the nodes after the peer, in order
         * (NULL, 0: none). One regular file or one tree, never with sync;
         * no node twice. */
        const struct job_hop *route;
        unsigned int route_hops;
        uid_t uid;                      /* the submitter; only it or root may cancel */
        /* Its files land as the submitter on the peer (xferctl send FILE
         * PEER:/PATH; wire.h, Landing as the user): who (its MUNGE
         * credential) and where, for the peer's lander. NULL: the peer's
         * drop box. Regular files only: no tree, chain, sync or dry run.
         * A pull (xferctl get; direction WIRE_LAND_PULL): the peer reads
         * the file and sends it back; no descriptor, size 0, one file. */
        const struct wire_landing *land;
};

/* What a file handed over is (jobs_add_file()). */
enum job_file_kind {
        JOB_FILE_REGULAR,
        JOB_FILE_DIR,                   /* in a tree: a directory (no descriptor, size 0) */
        JOB_FILE_LINK,                  /* in a tree: a symlink; its descriptor's file holds its
                                         * target (size bytes, 1 .. NAME_LINK_MAX) */
        JOB_FILE_HARDLINK,              /* in a tree: another name of an earlier regular file;
                                         * its descriptor's file holds that one's name ("DEST/a/b",
                                         * size bytes, 1 .. JOB_PATH_MAX) */
};

struct job_file_spec {
        const char *name;               /* the leaf name to publish under; in a tree "DEST/a/b" */
        enum job_file_kind kind;
        uint64_t size;
        uint32_t mode;                  /* in a tree or a landing: permission bits to keep (07777) */
        uint64_t mtime_ns;              /* in a tree: a file's mtime, ns since the epoch, 0: none */
        /* -X, -A (a landing's, wire.h Attributes): xattrs.h's records; NULL, 0: none. */
        const uint8_t *xattrs;
        uint16_t xattrs_len;
};

/* A dry run's verdict on one entry (the engine's, translated). */
enum job_verdict {
        JOB_WOULD_CREATE,
        JOB_WOULD_REPLACE,
        JOB_WOULD_KEEP,
        JOB_WOULD_MERGE,
        JOB_WOULD_DELETE,
};

enum job_item_kind {
        JOB_ITEM_FILE,
        JOB_ITEM_DIR,
        JOB_ITEM_LINK,
        JOB_ITEM_HARD,
        JOB_ITEM_OTHER,
};

struct job_item {
        enum job_verdict verdict;
        enum job_item_kind kind;
        char changes[6];                /* WOULD_REPLACE: c, s, t, a, x or '.' each */
        uint64_t size;                  /* the entry's bytes, as offered (0 for a deletion) */
        char *name;
};

/* Items a dry run's job keeps at most: its files, and this many deletions. */
#define JOB_ITEMS_DELETED_MAX   100000u

struct job {
        struct jobs *jobs;
        uint64_t id;                    /* > 0, unique for the daemon's lifetime */
        enum job_state state;
        uint16_t status;                /* enum wire_status once FAILED; RETRYING: the last failure's */
        int fd;                         /* the client's (first) file, owned by the job until final */
        uint64_t size;                  /* bytes in the job: every file's */
        uint64_t first_size;            /* the first file's */
        /* A job of several files: one session to the peer. */
        uint32_t files;                 /* in the job, >= 1 */
        uint32_t files_in;              /* handed over so far (the first included) */
        uint32_t files_done;            /* published by the receiver */
        bool tree;                      /* name is DEST, fd -1; its entries follow */
        uint32_t mode;                  /* a tree's DEST: its source directory's mode and mtime */
        uint64_t mtime_ns;
        enum job_sync sync;             /* every attempt keeps it */
        bool delete;                    /* ... and this (job_spec's) */
        uint64_t deleted;               /* DONE: what the receiver removed (delete) */
        /* A dry run: the receiver's verdicts, in the order they came (each
         * attempt's anew), kept until the job goes; items_lost: verdicts
         * past the bound or out of memory, not kept. */
        bool dry_run;
        struct job_item *items;
        uint32_t n_items, cap_items, items_lost;
        uint32_t files_skipped;         /* of files_done, kept by the receiver (sync) */
        char rails[4 * 64];             /* the RDMA devices the running attempt's lanes use (engine_progress) */
        /* A relay chain, of a file or a tree: the nodes after the peer,
         * each "ADDR:PORT" or "[IPV6]:PORT" with its port fixed, comma
         * separated, allocated with the job (NULL: no chain); every
         * attempt sends the whole job to the whole chain. */
        char *route;
        uint16_t nodes;                 /* 1 + the route's hops; 0: no chain */
        /* Those not published (bit k: node k + 1; every one until final),
         * how many did, the first that did not once final (1 is the peer;
         * 0: none failed), its status, address, why. */
        struct nodeset nodes_missing;
        uint16_t nodes_ok;
        uint16_t node_failed;
        uint16_t node_status;
        char node_peer[JOB_PEER_MAX + 1];
        char node_text[JOB_TEXT_MAX + 1];
        /* Each node's bytes, [k] node k + 1's (job_refresh while it runs;
         * once DONE, the size for those that published); nodes of them,
         * allocated with the route (NULL: no chain). */
        uint64_t *node_bytes;
        char name[JOB_NAME_MAX + 1];
        char host[JOB_HOST_MAX + 1];
        uint16_t port;
        char peer[JOB_PEER_MAX + 1];    /* "host:port", for logs */
        uint64_t bwlimit;               /* bytes/s, 0: none */
        bool no_sparse;                 /* the spec's */
        /* CLOCK_REALTIME, microseconds since the epoch (0: not yet): when
         * it was submitted, when its first attempt began to connect, when
         * it became final (jobs_set_state). For people and the JSON. */
        uint64_t created_us, started_us, ended_us;
        /* Progress: asked of the engine while it runs the job (job_refresh),
         * its result once done. */
        uint64_t bytes_done;
        uint64_t usec;
        char text[JOB_TEXT_MAX + 1];    /* why it failed (RETRYING: the last failure), or "" */
        uint64_t rate;                  /* bytes/s over the last interval */
        uint64_t rate_bytes, rate_usec; /* sample at the last rate update */
        struct engine_send *xfer;       /* the engine's handle while it runs the job */
        uid_t uid;                      /* submitter; only it or root may cancel */
        const char *land_path;          /* its files land as uid there on the peer; NULL: drop box */
        bool pull;                      /* land_path is read as uid on the peer and sent back here */
        const char *back_path;          /* a pull's: where it lands as uid (here, or a copy's node) */
        unsigned int attempt;           /* running (or next, while RETRYING); 1 is the first */
        int retries;                    /* the job's own, or -1: cfg.retry_max */
        uint64_t first_fail_usec;       /* CLOCK_MONOTONIC: when its first attempt failed; 0 = not yet */
        unsigned int busy_waits;        /* attempts the receiver refused as busy: not counted
                                         * against retries (job_attempts) */
        uint64_t retry_usec;            /* CLOCK_MONOTONIC: RETRYING until then */
        struct job *next;               /* table order */
};

#define JOBS_QUEUED_MAX         256     /* waiting (QUEUED or RETRYING): each holds a client fd */
#define JOBS_RETRY_FIRST_USEC   1000000 /* the first retry's delay; doubling from there */
#define JOBS_RETAIN_FINAL       64
/* A job of several files holds at most this many of its client's files
 * that the engine has not taken yet while it waits; a running one up to
 * JOBS_FILES_AHEAD_MAX, as the descriptor limit allows (jobs.c), so the
 * engine can fill its packs. */
#define JOBS_FILES_AHEAD        16
#define JOBS_FILES_AHEAD_MAX    1024
/* Descriptors kept for all but the running jobs' files: the waiting jobs'
 * (JOBS_QUEUED_MAX * JOBS_FILES_AHEAD) and 1024 more. */
#define JOBS_FD_RESERVE         (JOBS_QUEUED_MAX * JOBS_FILES_AHEAD + 1024)

/* The jobs' configuration, copied: jobs_reconfigure() replaces it whole. */
struct jobs_cfg {
        uint16_t port;                  /* a peer's or hop's when the spec names none */
        uint32_t max_transfers;         /* jobs running at once */
        uint32_t max_queued_per_user;   /* jobs waiting (QUEUED or RETRYING) per uid */
        uint32_t retry_max;             /* attempts after the first, unless the job says */
        uint32_t retry_window;          /* s after a job's first failure */
        uint32_t retry_delay_max;       /* s, the backoff's cap */
        /* The lowest bwlimit a job may ask for: one chunk of slot_size
         * must go within the receiver's peer_timeout (if it is set like
         * ours). */
        uint32_t slot_size;
        uint32_t peer_timeout;
};

/* @engine runs the jobs. */
int jobs_new(struct jobs **out, struct event_base *base, struct engine *engine, const struct jobs_cfg *cfg);
/* Closes fds, no callbacks. The engine's callbacks point at the jobs it
 * runs: engine_free() (which calls none) must come first. */
void jobs_free(struct jobs *jobs);
/* A reload: @cfg replaces the jobs' copy; what applies to waiting jobs
 * (max_transfers) applies from the loop. The look-ahead stays as
 * jobs_new() sized it. */
void jobs_reconfigure(struct jobs *jobs, const struct jobs_cfg *cfg);

/*
 * Whether @spec is a job jobs_submit() takes, as the configuration stands:
 * the peer and a chain's every node numeric, no node twice, a chain one
 * regular file or one tree without sync, a tree DEST and its entries, the
 * name one the receiver takes, the retries and bwlimit in bounds. 0, or
 * -EINVAL (-E2BIG: a chain of more than JOB_NODES_MAX nodes; -ENOMEM) with
 * the reason, for the submitter, in @why. Nothing is asked of the network.
 */
int jobs_spec_check(const struct jobs *jobs, const struct job_spec *spec, char *why, size_t whylen);

/* jobs_submit()'s named outcome: the submitter already has
 * cfg.max_queued_per_user jobs waiting (QUEUED or RETRYING). */
enum {
        JOBS_USER_QUEUE_FULL = 1,
};

/*
 * Queue @spec's job and start it (from the loop) if a slot is free. Takes
 * @fd, the first file, regular, of @size bytes (the caller asked, off the
 * loop: jobs never stat a client's file); a tree's DEST comes with none
 * (-1, 0). 0 with the job in *@out, or, with the reason in @why:
 * JOBS_USER_QUEUE_FULL, -ESHUTDOWN while stopping, -EBUSY when
 * JOBS_QUEUED_MAX are waiting, -EINVAL for a bad @spec (jobs_spec_check())
 * or first file, or -errno.
 */
int jobs_submit(struct jobs *jobs, const struct job_spec *spec, int fd, uint64_t size, struct job **out,
                char *why, size_t whylen);

/*
 * The feeder of jobs of several files: @want_more(@owner, @job) whenever
 * the engine took one of @job's files (it may have room again:
 * job_files_room()), and once more when it ends (final then) before its
 * last file, so the feeder can let its client go. Never for a job with
 * every file in or whose feed ended. Registered once; NULL to forget.
 */
typedef void (*jobs_want_more_fn)(void *owner, struct job *job);
void jobs_set_feeder(struct jobs *jobs, jobs_want_more_fn want_more, void *owner);

/*
 * Whether @f is a file @job takes (its kind and name for the job, a
 * symlink's size), before its descriptor is checked: 0, or -EINVAL with
 * "NAME: why" in @why.
 */
int jobs_file_check(const struct job *job, const struct job_file_spec *f, char *why, size_t whylen);
/*
 * The next file of a job of several, in order: takes @fd (-1 for a
 * directory), whose file is @f (checked off the loop, as for a submit).
 * Returns how many more the job takes now (0: wait for want_more, or none
 * at all once it has every file: job_files_complete()), or -EALREADY when
 * the job is final, -E2BIG when it has every file or @f is more than the
 * job's bytes left, -EINVAL
 * for a file jobs_file_check() refuses or a descriptor that does not fit
 * its kind, -ENOMEM.
 */
int jobs_add_file(struct job *job, int fd, const struct job_file_spec *f);
/*
 * How many more files the job takes now (0: wait for want_more): the
 * feeder's pace. It shrinks when an attempt ends (a waiting job holds
 * fewer ahead than a running one, and a tree's entries the engine held
 * count again), so a file read while there was room is taken all the
 * same: the feeder holds at most its checks in flight beyond it.
 */
unsigned int job_files_room(const struct job *job);
/* Whether every file of the job is handed over. */
bool job_files_complete(const struct job *job);
/* The feeder hands @job no more files. Before its last file: the job is
 * cancelled (the receiver publishes nothing more of it); with @why (the
 * feeder failed, not its client: a descriptor it passed was lost), the job
 * fails instead, "file N: WHY", once the engine has sent the files it
 * holds. */
void jobs_feed_end(struct job *job, const char *why);

/* Jobs of @uid waiting, QUEUED or RETRYING (what cfg.max_queued_per_user limits). */
unsigned int jobs_queued_by(const struct jobs *jobs, uid_t uid);
struct job *jobs_find(struct jobs *jobs, uint64_t id);
struct job *jobs_first(struct jobs *jobs);     /* iterate with ->next */
/* Cancel a queued, retrying or running job; 0, -ENOENT, or -EALREADY when final. */
int jobs_cancel(struct jobs *jobs, uint64_t id);
unsigned int jobs_active(const struct jobs *jobs);
/* For STATUS=: jobs running and queued. */
void jobs_counts(const struct jobs *jobs, unsigned int *active, unsigned int *queued);
/* Jobs waiting to retry. */
unsigned int jobs_retrying(const struct jobs *jobs);
/* For `stats`: jobs waiting to be sent, QUEUED or RETRYING (a retrying job
 * is one the daemon will still send). */
unsigned int jobs_waiting(const struct jobs *jobs);
/* The running ones' summed rate (bytes/s). */
uint64_t jobs_rate_total(const struct jobs *jobs);
/* Every job that ended since jobs_new(), by outcome: done (with its size),
 * cancelled (queued or running), or failed by wire status (a job that
 * could not start at all is "internal"). */
void jobs_tally(const struct jobs *jobs, struct stats_tally *t);
/* Start queued jobs if slots are free, from the loop (the device is back). */
void jobs_schedule(struct jobs *jobs);
/* Shutdown: refuse new jobs, cancel the queued and retrying ones ("daemon shutting
 * down"), start none, retry none. */
void jobs_stop(struct jobs *jobs);

/* Bring bytes_done, usec and a chain's node_bytes up to date from the
 * engine (running jobs). */
void job_refresh(struct job *job);
/* The most attempts @job gets as the configuration stands now (1 + retries). */
unsigned int job_attempts(const struct job *job);
/* RETRYING: microseconds until the next attempt; else 0. */
uint64_t job_retry_in(const struct job *job);

/* Watchers: @fn(@job, @userdata) on every change of @job. */
typedef void (*job_watch_fn)(struct job *job, void *userdata);
int job_watch(struct job *job, job_watch_fn fn, void *userdata);
void job_unwatch(struct job *job, job_watch_fn fn, void *userdata);
