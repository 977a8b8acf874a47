#pragma once

/*
 * What the jobs' files share: a job's private part (its files, its
 * resolved peer and route, its watchers) and the table. jobs.c holds the
 * table, states, the queue and retries; jobs-feed.c the files a job of
 * several is handed and gives the engine; jobs-attempt.c an attempt at
 * the engine and the retries after one; jobs-chain.c what a chain
 * reports; jobs-spec.c what a job may be asked to do.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "jobs.h"
#include "macro.h"
#include "stats.h"
#include "wire.h"

struct engine_progress;
struct engine_result;
struct engine_send_file;
struct job_watcher;

/* A file handed over, not yet taken by the engine (or, in a tree, not yet
 * acknowledged by the receiver). */
struct job_file {
        int fd;
        enum job_file_kind kind;
        uint32_t mode;
        uint64_t mtime_ns;
        uint64_t size;
        /* Up to JOB_NAME_MAX bytes here; a tree's longer path (JOB_PATH_MAX
         * at most) in lname, ours to free (job_file_name()). */
        char name[JOB_NAME_MAX + 1];
        char *lname;
        /* -X, -A: its attributes (xattrs.h), ours to free; NULL: none. */
        uint8_t *xattrs;
        uint16_t xattrs_len;
};

/* What @a holds besides its descriptor: its long name, its attributes. */
static inline void job_file_let_go(struct job_file *a)
{
        free(a->lname);
        a->lname = NULL;
        free(a->xattrs);
        a->xattrs = NULL;
        a->xattrs_len = 0;
}

static inline const char *job_file_name(const struct job_file *a)
{
        return a->lname ? a->lname : a->name;
}

struct job_entry {
        struct job job;
        /* A job of several files: a ring of the ones ahead (grown as it
         * fills, up to job_ahead_max()). */
        struct job_file *ahead;
        unsigned int ahead_first, ahead_n, ahead_cap;
        bool want_next;                 /* the engine waits (ENGINE_NEXT_LATER) */
        bool fed;                       /* files are still to come from the feeder */
        /* Its feeder failed before the last file (jobs_feed_end): why. */
        char feed_why[JOB_TEXT_MAX + 1];
        /*
         * The file the engine is on, with a descriptor of our own (fd -1:
         * none): what a later attempt starts from when this one fails
         * after some files were published (not in a tree: each attempt
         * starts from DEST, the ring below keeps what is not acknowledged).
         */
        struct job_file cur;
        uint32_t cur_index;             /* cur's index in the job */
        /*
         * A tree keeps every entry in the ring until the receiver has it:
         * the front ones, from index ring_index on, went to the engine
         * (given of them in this attempt, as duplicates), so an attempt
         * after a failure offers them again, or skips those the receiver
         * kept (engine.h, tree_token).
         */
        uint32_t ring_index;
        unsigned int given;
        uint8_t token[WIRE_SOURCE_SIZE];        /* the tree's, every attempt's */
        struct job_file first;          /* the first attempt's first file: the job's own */
        uint32_t base;                  /* the attempt's first file's index in the job */
        uint64_t published;             /* bytes of the files published, every attempt's */
        uint64_t base_bytes;            /* published before this attempt began */
        uint32_t base_skipped;          /* skipped before this attempt began */
        uint64_t bytes_in;              /* of the files handed over */
        struct job_watcher *watchers;
        unsigned int notifying;
        bool cancelling;                /* engine_send_cancel() already asked (this attempt) */
        struct event *retry_ev;         /* RETRYING: the next attempt; made at the first retry */
        /* The peer, resolved at the submit (numeric: nothing is asked of
         * the network); lives as long as the job, so it outlives the
         * engine's use of it whatever the engine keeps. */
        struct sockaddr_storage dst;
        socklen_t dst_len;
        /* A chain's route, resolved with it, for as long: job.nodes - 1
         * hops, allocated with job.route (NULL: no chain). */
        struct wire_hop *route;
        unsigned int route_hops;
        /* Landing as the submitter (job_spec.land), copied: NULL, none. */
        struct wire_landing *land;
        /* A deleting tree's rules (job_spec.rules), copied: NULL, none. */
        char *rules;
};

struct jobs {
        struct event_base *base;
        struct jobs_cfg cfg;
        struct engine *engine;
        struct job *head, *tail;
        uint64_t next_id;
        unsigned int n_active, n_queued, n_retrying, n_final;
        bool stopping;
        uint64_t rand;                  /* xorshift64 state: the backoff's jitter */
        struct stats_tally tally;       /* every job that ended, since start */
        struct event *schedule_ev;      /* deferred: start queued jobs, prune */
        struct event *rate_ev;          /* 1 s: job->rate */
        unsigned int ahead_max;         /* files a running job may hold ahead (job_ahead_max) */
        jobs_want_more_fn want_more;    /* the feeder's (jobs_set_feeder) */
        void *feeder;
};

static inline struct job_entry *job_entry(struct job *job)
{
        return container_of(job, struct job_entry, job);
}

static inline const struct job_entry *job_entry_const(const struct job *job)
{
        return container_of(job, const struct job_entry, job);
}

/* jobs.c */
/* The one place a job's state changes (watchers are told by the caller). */
void jobs_set_state(struct job *job, enum job_state state);
/* Tell @job's watchers it changed. */
void jobs_notify(struct job *job);
/* Start queued jobs and prune, from a deferred event. */
void jobs_kick(struct jobs *jobs);
/* The end of a job that is not final yet: closes its files, tells its
 * feeder and watchers, starts the next queued job (from the loop). */
void job_finish(struct job *job, enum job_state state, unsigned int status, const char *text);
void job_entry_free(struct job_entry *e);

/* jobs-attempt.c */
/*
 * Hand one QUEUED job to the engine: to CONNECTING when started, to
 * FAILED when it cannot be. ENGINE_SEND_FULL when it stays queued (start
 * no more now), else 0.
 */
int jobs_start(struct jobs *jobs, struct job *job);

/* jobs-feed.c */
/* Close the files handed over that the engine never took. */
void job_ahead_drop(struct job_entry *e);
/* A tree's front entry acknowledged (or kept by the receiver from an
 * earlier attempt, @skipped: its bytes count as sent). */
void job_ring_pop(struct job *job, bool skipped);
/* What an attempt starts from (NULL: not handed over yet). */
const struct job_file *job_first_file(struct job *job);
/* The engine's ops->next and ops->file_done (engine.h). */
int jobs_on_next(void *owner, uint32_t index, struct engine_send_file *f);
void jobs_on_file_done(void *owner, uint32_t index, uint64_t bytes);
/* A dry run's items: let go of them all (a new attempt says them anew). */
void job_items_clear(struct job *job);

/* jobs-chain.c */
/* A chain's every node, as nodes_missing has them; none for no chain. */
struct nodeset job_nodes_all(const struct job *job);
/* A running chain's bytes per node, from the engine's progress. */
void job_nodes_refresh(struct job *job, const struct engine_progress *p);
/* A chain whose peer published: which nodes did not, and why. */
void job_chain_done(struct job *job, const struct engine_result *r);
/* A chain's route for the journal. */
void job_log_chain(const struct job *job);
/* What a chain job allocates (its route, bytes per node, hops), on a job of any kind. */
void job_chain_free(struct job_entry *e);

/* jobs-spec.c */
/*
 * @spec checked (jobs_spec_check()) and, with @e, its peer and chain into
 * @e: dst, the route's hops and text, the bytes per node, nodes, peer,
 * host and port. 0 or -errno with the reason in @why.
 */
int jobs_spec_apply(const struct jobs *jobs, const struct job_spec *spec, struct job_entry *e, char *why,
                    size_t whylen);
