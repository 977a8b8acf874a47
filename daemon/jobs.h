#pragma once

/*
 * Outgoing send jobs submitted over the control socket: the table, the
 * queue (at most cfg.max_transfers run at once), watchers, and retention of
 * finished jobs (the last 64) so `xferctl status` can still see them.
 *
 * States only move forward. A job the engine cannot admit yet (its send
 * pool is full) stays QUEUED until a running one ends; if none of ours is
 * running, the pool never frees and the job fails instead of waiting.
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
        uint16_t status;                /* enum wire_status once FAILED */
        int fd;                         /* the client's file, owned by the job until final */
        uint64_t size;
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
        struct job *next;               /* table order */
};

struct jobs;

#define JOBS_QUEUED_MAX         256     /* each holds a client fd */
#define JOBS_RETAIN_FINAL       64

/* @cfg is read when needed (SIGHUP may replace what it points at);
 * @engine runs the jobs. */
int jobs_new(struct jobs **out, struct event_base *base, const struct config *cfg,
             struct engine *engine);
/* Closes fds, no callbacks. The engine's callbacks point at the jobs it
 * runs: engine_free() (which calls none) must come first. */
void jobs_free(struct jobs *jobs);

/* jobs_submit()'s named outcome: @uid already has cfg.max_queued_per_user jobs waiting. */
enum {
        JOBS_USER_QUEUE_FULL = 1,
};

/*
 * Takes @fd, a regular file of @size bytes (the caller asked, off the
 * loop: jobs never stat a client's file). Queues the job for @uid (the
 * submitter, from SO_PEERCRED) and starts it (from the loop) if a slot is
 * free. 0, JOBS_USER_QUEUE_FULL, -ESHUTDOWN while stopping, -EBUSY when
 * JOBS_QUEUED_MAX are waiting, or -errno.
 */
int jobs_submit(struct jobs *jobs, const struct ctl_submit *s, uid_t uid, int fd, uint64_t size,
                uint64_t *id);
/* Jobs of @uid waiting in the queue (what cfg.max_queued_per_user limits). */
unsigned int jobs_queued_by(const struct jobs *jobs, uid_t uid);
struct job *jobs_find(struct jobs *jobs, uint64_t id);
struct job *jobs_first(struct jobs *jobs);     /* iterate with ->next */
/* Cancel a queued or running job; 0, -ENOENT, or -EALREADY when final. */
int jobs_cancel(struct jobs *jobs, uint64_t id);
unsigned int jobs_active(const struct jobs *jobs);
/* For STATUS=: jobs running and waiting, and the running ones' summed rate (bytes/s). */
void jobs_counts(const struct jobs *jobs, unsigned int *active, unsigned int *queued);
uint64_t jobs_rate_total(const struct jobs *jobs);
/* Every job that ended since jobs_new(), by outcome: done (with its size),
 * cancelled (queued or running), or failed by wire status (a job that
 * could not start at all is "internal"). */
void jobs_tally(const struct jobs *jobs, struct stats_tally *t);
/* Start queued jobs if slots are free, from the loop (after max_transfers changed). */
void jobs_schedule(struct jobs *jobs);
/* Shutdown: refuse new jobs, cancel the queued ones ("daemon shutting down"), start none. */
void jobs_stop(struct jobs *jobs);

/* Bring bytes_done and usec up to date from the engine (running jobs). */
void job_refresh(struct job *job);

/* Watchers: a control connection that gets every change of @job. */
typedef void (*job_watch_fn)(struct job *job, void *userdata);
int job_watch(struct job *job, job_watch_fn fn, void *userdata);
void job_unwatch(struct job *job, job_watch_fn fn, void *userdata);
