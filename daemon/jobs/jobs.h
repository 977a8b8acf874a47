#pragma once

/*
 * Outgoing send jobs submitted over the control socket: the table, the
 * queue (at most cfg.max_transfers run at once), watchers, and retention of
 * finished jobs (the last 64) so `xferctl status` can still see them.
 *
 * Within an attempt states only move forward (ctl_job_transition_ok()).
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
 * 1 + retry_max attempts (or the job's own --retries), or once
 * cfg.retry_window has passed since its first failure. A RETRYING job
 * holds its client's file descriptor and nothing of the engine's; it does
 * not count against max_transfers, but does against the queue limits.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl.h"

struct config;
struct engine;
struct stats_tally;
struct engine_send;
struct event_base;

struct job {
        struct jobs *jobs;
        uint64_t id;                    /* > 0, unique for the daemon's lifetime */
        enum ctl_job_state state;
        uint16_t status;                /* enum wire_status once FAILED; RETRYING: the last failure's */
        int fd;                         /* the client's (first) file, owned by the job until final */
        uint64_t size;                  /* bytes in the job: every file's */
        uint64_t first_size;            /* the first file's */
        /* A job of several files (ctl.h): one session to the peer. */
        uint32_t files;                 /* in the job, >= 1 */
        uint32_t files_in;              /* handed over by the client so far (the first included) */
        uint32_t files_done;            /* published by the receiver */
        bool tree;                      /* CTL_SUBMIT_TREE: name is DEST, fd -1; its entries follow */
        uint32_t mode;                  /* a tree's DEST: its source directory's mode and mtime */
        uint64_t mtime_ns;
        unsigned int sync;              /* enum engine_sync, from the CTL_SUBMIT sync flags; every
                                         * attempt keeps it */
        uint32_t files_skipped;         /* of files_done, kept by the receiver (sync) */
        /* A relay chain (ctl.h), of a file or a tree: the nodes after the
         * peer, each with its port, allocated with the job (NULL: no
         * chain); every attempt sends the whole job to the whole chain.
         * Up to CTL_ROUTE_MAX bytes, so only a chain pays for its own. */
        char *route;
        uint16_t nodes;                 /* 1 + the route's hops; 0: no chain */
        /* As ctl_job has them: those not published (bit k: node k + 1;
         * every one until final), how many did, the first that did not
         * once final (1 is the peer; 0: none failed), its status, address, why. */
        struct nodeset nodes_missing;
        uint16_t nodes_ok;
        uint16_t node_failed;
        uint16_t node_status;
        char node_peer[CTL_HOST_MAX + 1 + 6];
        char node_text[CTL_TEXT_MAX + 1];
        /* As ctl_job has them: each node's bytes, [k] node k + 1's (job_refresh
         * while it runs; once DONE, the size for those that published);
         * nodes of them, allocated with the route (NULL: no chain). */
        uint64_t *node_bytes;
        char name[CTL_NAME_MAX + 1];
        char host[CTL_HOST_MAX + 1];
        uint16_t port;
        char peer[CTL_HOST_MAX + 1 + 6];/* "host:port", for logs */
        uint64_t bwlimit;               /* bytes/s, 0: none (xferctl send --bwlimit) */
        /* Progress: asked of the engine while it runs the job (job_refresh),
         * its result once done. */
        uint64_t bytes_done;
        uint64_t usec;
        char text[CTL_TEXT_MAX + 1];
        uint64_t rate;                  /* bytes/s over the last interval */
        uint64_t rate_bytes, rate_usec; /* sample at the last rate update */
        struct engine_send *xfer;       /* the engine's handle while it runs the job */
        uid_t uid;                      /* submitter (SO_PEERCRED); only it or root may cancel */
        unsigned int attempt;           /* running (or next, while RETRYING); 1 is the first */
        int retries;                    /* xferctl send --retries, or -1: cfg.retry_max */
        uint64_t first_fail_usec;       /* CLOCK_MONOTONIC: when its first attempt failed; 0 = not yet */
        uint64_t retry_usec;            /* CLOCK_MONOTONIC: RETRYING until then */
        struct job *next;               /* table order */
};

struct jobs;

#define JOBS_QUEUED_MAX         256     /* waiting (QUEUED or RETRYING): each holds a client fd */
#define JOBS_RETRY_FIRST_USEC   1000000 /* the first retry's delay; doubling from there */
#define JOBS_RETAIN_FINAL       64
/* A job of several files holds at most this many of its client's files
 * that the engine has not taken yet (ctl.h) while it waits; a running one
 * up to JOBS_FILES_AHEAD_MAX, as the descriptor limit allows (jobs.c),
 * so the engine can fill its packs. */
#define JOBS_FILES_AHEAD        16
#define JOBS_FILES_AHEAD_MAX    1024
/* Descriptors kept for all but the running jobs' files: the waiting jobs'
 * (JOBS_QUEUED_MAX * JOBS_FILES_AHEAD) and 1024 more. */
#define JOBS_FD_RESERVE         (JOBS_QUEUED_MAX * JOBS_FILES_AHEAD + 1024)

/* @cfg is read when needed (SIGHUP may replace what it points at);
 * @engine runs the jobs. */
int jobs_new(struct jobs **out, struct event_base *base, const struct config *cfg,
             struct engine *engine);
/* Closes fds, no callbacks. The engine's callbacks point at the jobs it
 * runs: engine_free() (which calls none) must come first. */
void jobs_free(struct jobs *jobs);

/* jobs_submit()'s named outcome: @uid already has cfg.max_queued_per_user jobs waiting
 * (QUEUED or RETRYING). */
enum {
        JOBS_USER_QUEUE_FULL = 1,
};

/*
 * Takes @fd, a regular file of @size bytes (the caller asked, off the
 * loop: jobs never stat a client's file). Queues the job for @uid (the
 * submitter, from SO_PEERCRED) and starts it (from the loop) if a slot is
 * free. With CTL_SUBMIT_RETRIES in @s->flags, @s->retries (at most
 * CTL_RETRIES_MAX) replaces cfg.retry_max for this job. A route in @s
 * makes it a relay chain (one plain file or one tree, no sync:
 * ctl_submit_chain_ok(); numeric hosts, control.c checked them); a hop
 * without a port gets cfg.port, as the peer does. 0,
 * JOBS_USER_QUEUE_FULL, -ESHUTDOWN while stopping, -EBUSY when
 * JOBS_QUEUED_MAX are waiting, -EINVAL for a bad @s, or -errno.
 */
int jobs_submit(struct jobs *jobs, const struct ctl_submit *s, uid_t uid, int fd, uint64_t size,
                uint64_t *id);
/*
 * The next file of a job of several (CTL_FILE), in order: takes @fd, a
 * regular file of @size bytes (checked off the loop, as for a submit); in
 * a tree only, with CTL_FILE_DIR in @flags a directory (@fd -1, @size 0),
 * with CTL_FILE_LINK a symlink whose target @fd holds (@size bytes). In a
 * tree, @mode and @mtime_ns (0: none) go to the receiver.
 * 0, -ENOSPC when the job holds as many as it may already (job_files_room()
 * says when), -E2BIG when it has every file or @size is more than the
 * job's bytes left, -EALREADY when the job is final, -EINVAL for a bad
 * name.
 */
int jobs_add_file(struct job *job, int fd, uint64_t size, const char *name, unsigned int flags,
                  uint32_t mode, uint64_t mtime_ns);
/* Whether the job takes another file now (0: wait for the feed callback). */
unsigned int job_files_room(const struct job *job);
/* Whether every file of the job is handed over. */
bool job_files_complete(const struct job *job);
/* The connection that hands @job its files: @fn(@job, @userdata) when it
 * has room again, and once more when the job ends before its last file
 * (final then: the connection tells its client); NULL to forget. */
typedef void (*job_feed_fn)(struct job *job, void *userdata);
void job_set_feeder(struct job *job, job_feed_fn fn, void *userdata);
/* That connection went away before the last file: the job is cancelled
 * (the receiver publishes nothing more of it). With @why (the connection
 * failed, not its client: a descriptor it passed was lost), the job fails
 * instead, "file N: WHY", once the engine has sent the files it holds. */
void jobs_feeder_gone(struct job *job, const char *why);

/* Jobs of @uid waiting, QUEUED or RETRYING (what cfg.max_queued_per_user limits). */
unsigned int jobs_queued_by(const struct jobs *jobs, uid_t uid);
struct job *jobs_find(struct jobs *jobs, uint64_t id);
struct job *jobs_first(struct jobs *jobs);     /* iterate with ->next */
/* Cancel a queued, retrying or running job; 0, -ENOENT, or -EALREADY when final. */
int jobs_cancel(struct jobs *jobs, uint64_t id);
unsigned int jobs_active(const struct jobs *jobs);
/* For STATUS=: jobs running and queued, and the running ones' summed rate (bytes/s). */
void jobs_counts(const struct jobs *jobs, unsigned int *active, unsigned int *queued);
/* Jobs waiting to retry. */
unsigned int jobs_retrying(const struct jobs *jobs);
/* For `stats`: jobs waiting to be sent, QUEUED or RETRYING (a retrying job
 * is one the daemon will still send). */
unsigned int jobs_waiting(const struct jobs *jobs);
uint64_t jobs_rate_total(const struct jobs *jobs);
/* Every job that ended since jobs_new(), by outcome: done (with its size),
 * cancelled (queued or running), or failed by wire status (a job that
 * could not start at all is "internal"). */
void jobs_tally(const struct jobs *jobs, struct stats_tally *t);
/* Start queued jobs if slots are free, from the loop (after max_transfers changed). */
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

/* Watchers: a control connection that gets every change of @job. */
typedef void (*job_watch_fn)(struct job *job, void *userdata);
int job_watch(struct job *job, job_watch_fn fn, void *userdata);
void job_unwatch(struct job *job, job_watch_fn fn, void *userdata);
