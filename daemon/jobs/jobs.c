/*
 * Outgoing jobs: the table (submission order), the queue, retries,
 * watchers and retention. State changes go through jobs_set_state() so the
 * counters never drift, and states only move forward within an attempt.
 * The engine runs a job through engine.h and answers through
 * jobs_send_ops; starting queued jobs and pruning old ones run from a
 * deferred event, and a retry from the job's own timer, so a done
 * callback never re-enters the engine or unlinks a job under somebody's
 * feet.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "auth.h"
#include "clock.h"
#include "config.h"
#include "engine.h"
#include "jobs.h"
#include "log.h"
#include "macro.h"
#include "stats.h"
#include "wire.h"

struct job_watcher {
        job_watch_fn fn;                /* NULL: removed while notifying */
        void *userdata;
        struct job_watcher *next;
};

/* A file handed over, not yet taken by the engine. */
struct job_file {
        int fd;
        bool dir;
        bool link;                      /* a tree's symlink: fd holds its target */
        uint32_t mode;
        uint64_t mtime_ns;
        uint64_t size;
        char name[CTL_NAME_MAX + 1];
};

struct job_entry {
        struct job job;
        /* A job of several files: a ring of the ones ahead (grown as it
         * fills, up to job_ahead_max()), its feeder. */
        struct job_file *ahead;
        unsigned int ahead_first, ahead_n, ahead_cap;
        bool want_next;                 /* the engine waits (ENGINE_NEXT_LATER) */
        /* Its client's connection failed before the last file (jobs_feeder_gone): why. */
        char feed_why[CTL_TEXT_MAX + 1];
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
        job_feed_fn feed_fn;
        void *feed_userdata;
        struct job_watcher *watchers;
        unsigned int notifying;
        bool cancelling;                /* engine_send_cancel() already asked (this attempt) */
        struct event *retry_ev;         /* RETRYING: the next attempt; made at the first retry */
        /* The peer, resolved when the job starts; lives as long as the job,
         * so it outlives the engine's use of it whatever the engine keeps. */
        struct sockaddr_storage dst;
        socklen_t dst_len;
        /* A chain's route, resolved with it, for as long: job.nodes - 1
         * hops, allocated with job.route (NULL: no chain). */
        struct wire_hop *route;
        unsigned int route_hops;
};

/* A SUBMIT's route is what engine_send_req.route and a ROUTE carry
 * (wire.h's WIRE_ROUTE_MAX is ENGINE_ROUTE_MAX, 511, once the engine has
 * caught up; the engine refuses what its wire cannot carry). */
static_assert(CTL_ROUTE_HOPS_MAX == ENGINE_ROUTE_MAX, "a chain's progress has a count per hop");
static_assert(WIRE_ROUTE_MAX <= CTL_ROUTE_HOPS_MAX, "every route a ROUTE carries can be submitted");
static_assert(CTL_NODES_MAX == 1 + ENGINE_ROUTE_MAX, "engine_result.hop_missing bit k is node k + 2");

struct jobs {
        struct event_base *base;
        const struct config *cfg;
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
};

static struct job_entry *job_entry(struct job *job)
{
        return container_of(job, struct job_entry, job);
}

/* A chain's every node, as nodes_missing has them; none for no chain. */
static struct nodeset job_nodes_all(const struct job *job)
{
        return nodeset_first_n(job->nodes);
}

/* What a chain job allocates (job_route_set), on a job of any kind. */
static void job_chain_free(struct job_entry *e)
{
        free(e->job.route);
        free(e->job.node_bytes);
        free(e->route);
        e->job.route = NULL;
        e->job.node_bytes = NULL;
        e->route = NULL;
}

static bool job_is_active(const struct job *job)
{
        return job->state == CTL_JOB_CONNECTING || job->state == CTL_JOB_SENDING ||
               job->state == CTL_JOB_VERIFYING;
}

/* Close the files handed over that the engine never took. */
static void job_ahead_drop(struct job_entry *e)
{
        while (e->ahead_n > 0) {
                safe_close(e->ahead[e->ahead_first].fd);
                e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
                e->ahead_n--;
        }
}

/* The ring's front entry of a tree, acknowledged (or kept by the receiver
 * from an earlier attempt, @skipped: its bytes count as sent). */
static void job_ring_pop(struct job *job, bool skipped)
{
        struct job_entry *e = job_entry(job);
        struct job_file *a = &e->ahead[e->ahead_first];

        if (skipped) {
                e->published += a->size;
                e->base_bytes += a->size;
        }
        safe_close(a->fd);
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        if (e->given > 0)
                e->given--;
        job->files_done = MAX(job->files_done, e->ring_index + 1);
        e->ring_index++;
}

static void job_entry_free(struct job_entry *e)
{
        struct job_watcher *w;

        if (!e)
                return;
        job_ahead_drop(e);
        safe_close(e->cur.fd);
        free(e->ahead);
        while ((w = e->watchers)) {
                e->watchers = w->next;
                free(w);
        }
        if (e->retry_ev)
                event_free(e->retry_ev);
        safe_close(e->job.fd);
        job_chain_free(e);
        free(e);
}

static unsigned int *jobs_counter(struct jobs *jobs, enum ctl_job_state state)
{
        if (ctl_job_state_final(state))
                return &jobs->n_final;
        if (state == CTL_JOB_QUEUED)
                return &jobs->n_queued;
        if (state == CTL_JOB_RETRYING)
                return &jobs->n_retrying;
        return &jobs->n_active;
}

/* The one place a job's state changes. */
static void jobs_set_state(struct job *job, enum ctl_job_state state)
{
        struct jobs *jobs = job->jobs;
        enum ctl_job_state old = job->state;

        /* Forward within an attempt (VERIFYING may follow CONNECTING for 0
         * bytes), RETRYING back to QUEUED, never out of a final state. */
        assert(ctl_job_transition_ok(old, state));

        (*jobs_counter(jobs, old))--;
        (*jobs_counter(jobs, state))++;
        job->state = state;
        log_debug("job %" PRIu64 ": %s -> %s", job->id, ctl_job_state_str(old),
                  ctl_job_state_str(state));
}

static void jobs_notify(struct job *job)
{
        struct job_entry *e = job_entry(job);
        struct job_watcher **p;

        e->notifying++;
        for (struct job_watcher *w = e->watchers; w; w = w->next)
                if (w->fn)
                        w->fn(job, w->userdata);
        e->notifying--;
        if (e->notifying)
                return;
        /* Sweep the watchers that unwatched from inside their callback. */
        for (p = &e->watchers; *p;) {
                struct job_watcher *w = *p;

                if (w->fn) {
                        p = &w->next;
                        continue;
                }
                *p = w->next;
                free(w);
        }
}

static void jobs_kick(struct jobs *jobs)
{
        event_active(jobs->schedule_ev, 0, 0);
}

void jobs_schedule(struct jobs *jobs)
{
        jobs_kick(jobs);
}

/*
 * A running chain's bytes per node: node 1's are the session's own, each
 * later node's what the relays last said of its hop (engine.h): bytes
 * of the whole job, a tree's every entry as a file's. None is shown past
 * the job's size, whatever a relay claims.
 */
static void job_nodes_refresh(struct job *job, const struct engine_progress *p)
{
        unsigned int hops = MIN(p->hops, (unsigned int)ENGINE_ROUTE_MAX);

        job->node_bytes[0] = MIN(job->bytes_done, job->size);
        for (unsigned int k = 0; k + 1u < job->nodes; k++)
                job->node_bytes[k + 1] = k < hops ? MIN(p->hop_bytes[k], job->size) : 0;
}

void job_refresh(struct job *job)
{
        struct engine_progress p = { 0 };

        if (!job->xfer)
                return;
        engine_send_progress(job->xfer, &p);
        /* This attempt's session counts from its own first file. */
        job->bytes_done = job_entry(job)->base_bytes + p.bytes;
        job->files_skipped = job_entry(job)->base_skipped + p.skipped;
        job->usec = p.usec;
        if (job->nodes)
                job_nodes_refresh(job, &p);
}

/* A non-final state change of a running job. */
static void job_set_state(struct job *job, enum ctl_job_state state)
{
        assert(!ctl_job_state_final(state));
        jobs_set_state(job, state);
        if (state == CTL_JOB_SENDING) {
                job_refresh(job);
                job->rate_bytes = job->bytes_done;
                job->rate_usec = clock_usec(CLOCK_MONOTONIC);
        }
        jobs_notify(job);
}

/* The end of a job that is not final yet: closes the fd, wakes watchers,
 * starts the next queued job (from the loop). */
static void job_finish(struct job *job, enum ctl_job_state state, unsigned int status,
                       const char *text)
{
        struct job_entry *e = job_entry(job);
        job_feed_fn feed = e->feed_fn;

        assert(ctl_job_state_final(state));
        assert(!job->xfer);
        if (e->retry_ev)
                evtimer_del(e->retry_ev);
        job->fd = safe_close(job->fd);
        job_ahead_drop(e);
        e->cur.fd = safe_close(e->cur.fd);
        e->feed_fn = NULL;
        job->status = (uint16_t)status;
        snprintf(job->text, sizeof(job->text), "%s", text ? text : "");
        /* A chain that failed failed at its first node, and then none
         * has the file; a cancelled one is said to have reached none
         * either (job_chain_done() says how far a done one got). */
        if (job->nodes && state != CTL_JOB_DONE) {
                job->nodes_missing = job_nodes_all(job);
                job->nodes_ok = 0;
                job->node_failed = state == CTL_JOB_FAILED;
                job->node_status = state == CTL_JOB_FAILED ? job->status : WIRE_OK;
                snprintf(job->node_peer, sizeof(job->node_peer), "%s", state == CTL_JOB_FAILED ? job->peer : "");
                snprintf(job->node_text, sizeof(job->node_text), "%s", state == CTL_JOB_FAILED ? job->text : "");
        }
        /* A finished job shows its average rate, not the last second's. */
        job->rate = job->usec ? job->bytes_done * 1000000u / job->usec : 0;
        /* Whatever ended it, the engine or before the engine had it; a failure always has a reason. */
        stats_tally_add(&job->jobs->tally, state == CTL_JOB_CANCELLED,
                        state == CTL_JOB_DONE ? WIRE_OK : status ? status : WIRE_E_INTERNAL, job->size);
        jobs_set_state(job, state);
        /* A client still handing files over must not wait for room that
         * never comes: its feeder hears once more, the job final. */
        if (feed)
                feed(job, e->feed_userdata);
        jobs_notify(job);
        jobs_kick(job->jobs);
}

static void jobs_on_phase(void *owner, enum engine_phase phase)
{
        struct job *job = owner;
        enum ctl_job_state state;

        switch (phase) {
        case ENGINE_PHASE_SENDING:
                state = CTL_JOB_SENDING;
                break;
        case ENGINE_PHASE_VERIFYING:
                state = CTL_JOB_VERIFYING;
                break;
        default:
                log_err("job %" PRIu64 ": unknown engine phase %d", job->id, (int)phase);
                return;
        }
        /* The engine only moves forward, but a job must never move back. */
        if (!job_is_active(job) || state <= job->state) {
                log_err("job %" PRIu64 ": engine phase %s while %s, ignored", job->id,
                        ctl_job_state_str(state), ctl_job_state_str(job->state));
                return;
        }
        job_set_state(job, state);
}

unsigned int job_attempts(const struct job *job)
{
        return 1 + (job->retries >= 0 ? (unsigned int)job->retries : job->jobs->cfg->retry_max);
}

uint64_t job_retry_in(const struct job *job)
{
        uint64_t now;

        if (job->state != CTL_JOB_RETRYING)
                return 0;
        now = clock_usec(CLOCK_MONOTONIC);
        return job->retry_usec > now ? job->retry_usec - now : 0;
}

static uint64_t jobs_random(struct jobs *jobs)
{
        uint64_t x = jobs->rand;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        jobs->rand = x;
        return x;
}

/* After @failed failed attempts: 1 s doubling, capped at retry_delay_max,
 * less up to a quarter at random so that jobs that failed together (a
 * link went down) do not all come back at once. */
static uint64_t jobs_backoff_usec(struct jobs *jobs, unsigned int failed)
{
        uint64_t cap = (uint64_t)jobs->cfg->retry_delay_max * 1000000u;
        uint64_t d = cap;

        if (failed - 1 < 32)
                d = MIN(cap, (uint64_t)JOBS_RETRY_FIRST_USEC << (failed - 1));
        return d - jobs_random(jobs) % (d / 4 + 1);
}

/* RETRYING's delay is over: the next attempt queues like a new job would. */
static void jobs_retry_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct job *job = userdata;

        if (job->state != CTL_JOB_RETRYING)
                return;
        /* Each attempt starts from nothing (resuming is the receiver's to offer). */
        job->status = WIRE_OK;
        job->text[0] = '\0';
        job->bytes_done = job->usec = job->rate = 0;
        if (job->node_bytes)
                memset(job->node_bytes, 0, job->nodes * sizeof(job->node_bytes[0]));
        log_debug("job %" PRIu64 ": attempt %u queued", job->id, job->attempt);
        jobs_set_state(job, CTL_JOB_QUEUED);
        jobs_notify(job);
        jobs_kick(job->jobs);
}

/*
 * Attempt job->attempt failed transiently with @status and @text: wait in
 * RETRYING for the next one. false when the job must end instead (its
 * attempts or retry_window are used up, it is being cancelled, the daemon
 * stops), with what to add to the text in @why ("" for nothing).
 */
static bool job_retry(struct job *job, unsigned int status, const char *text, char *why,
                      size_t whylen)
{
        struct jobs *jobs = job->jobs;
        struct job_entry *e = job_entry(job);
        uint64_t now = clock_usec(CLOCK_MONOTONIC), end, delay;
        unsigned int max = job_attempts(job);
        struct timeval tv;

        why[0] = '\0';
        if (jobs->stopping || e->cancelling)
                return false;
        if (!job->first_fail_usec)
                job->first_fail_usec = now;
        end = job->first_fail_usec + (uint64_t)jobs->cfg->retry_window * 1000000u;
        if (job->attempt >= max) {
                if (max > 1)
                        snprintf(why, whylen, " (gave up after %u attempts)", job->attempt);
                return false;
        }
        /*
         * The attempt that was set to start as the window closed is the
         * last, even if its timer (libevent's coarse clock) let it start a
         * few ms early and it failed before the end.
         */
        if (now >= end || job->retry_usec >= end) {
                snprintf(why, whylen, " (gave up after %u attempts: retry_window %u s is over)",
                         job->attempt, jobs->cfg->retry_window);
                return false;
        }
        if (!e->retry_ev)
                e->retry_ev = evtimer_new(jobs->base, jobs_retry_cb, job);
        if (!e->retry_ev) {
                snprintf(why, whylen, " (cannot wait to retry: out of memory)");
                return false;
        }
        /* The last attempt may start as the window closes, not after. */
        delay = MIN(jobs_backoff_usec(jobs, job->attempt), end - now);
        tv = (struct timeval){ .tv_sec = (time_t)(delay / 1000000u),
                               .tv_usec = (suseconds_t)(delay % 1000000u) };
        if (evtimer_add(e->retry_ev, &tv) < 0) {
                snprintf(why, whylen, " (cannot wait to retry)");
                return false;
        }
        log_notice("job %" PRIu64 ": attempt %u of %u failed: %s; retrying in %.1f s", job->id,
                   job->attempt, max, text, (double)delay / 1e6);
        job->attempt++;
        job->retry_usec = now + delay;
        job->status = (uint16_t)status;
        snprintf(job->text, sizeof(job->text), "%s", text);
        job->rate = 0;
        jobs_set_state(job, CTL_JOB_RETRYING);
        jobs_notify(job);
        /* Its place in max_transfers is free now. */
        jobs_kick(jobs);
        return true;
}

/*
 * A chain whose peer published: which of the route's hops did not
 * (engine.h; a relay goes around a hop that fails, so any may have), and
 * why the first of those did not. Where the engine's numbers do not add
 * up, a hop is missing if anything it says makes it so: its bit, being
 * hop_failed, or lying past the count, in route order, of those the bits
 * leave published (the first of those then failed unheard of).
 */
static void job_chain_done(struct job *job, const struct engine_result *r)
{
        struct job_entry *e = job_entry(job);
        struct nodeset missing = { { 0 } };
        const char *why = r->hop_text ? r->hop_text : "";
        unsigned int status = r->hop_status, failed, left;

        /* Bits past the route are none of its hops: left out. */
        for (unsigned int k = 0; k < e->route_hops; k++)
                if (nodeset_has(&r->hop_missing, k))
                        nodeset_add(&missing, k);
        if (r->hop_failed > 0 && r->hop_failed <= e->route_hops)
                nodeset_add(&missing, r->hop_failed - 1);
        left = r->hops;
        for (unsigned int k = 0; k < e->route_hops; k++) {
                if (nodeset_has(&missing, k))
                        continue;
                if (left > 0)
                        left--;
                else
                        nodeset_add(&missing, k);
        }
        failed = (unsigned int)(nodeset_first(&missing) + 1);
        if (!nodeset_equal(&missing, &r->hop_missing) || failed != r->hop_failed ||
            r->hops + nodeset_count(&missing) != e->route_hops)
                log_warning("job %" PRIu64 ": the engine's account of the chain does not add up (%" PRIu32
                            " of %u hops published, %u missing, hop_failed %" PRIu32 "): taken as %u "
                            "missing, hop_failed %u", job->id, r->hops, e->route_hops,
                            nodeset_count(&r->hop_missing), r->hop_failed, nodeset_count(&missing), failed);
        if (failed && failed != r->hop_failed) {
                status = WIRE_E_INTERNAL;
                why = "no word from it";
        }
        /* The engine logged how far it got (RDMAXFER_NODES_OK): this is for the client.
         * A node that published has every byte; the others keep what
         * the last refresh saw (the engine's result has no bytes per hop).
         * Route hop k is node k + 2: bit k + 1 of nodes_missing, the
         * peer's bit 0 clear (it published: the job is DONE). */
        job->nodes_missing = (struct nodeset){ { 0 } };
        for (unsigned int k = 0; k < e->route_hops; k++)
                if (nodeset_has(&missing, k))
                        nodeset_add(&job->nodes_missing, k + 1);
        for (unsigned int k = 0; k < job->nodes; k++)
                if (!nodeset_has(&job->nodes_missing, k))
                        job->node_bytes[k] = job->size;
        job->nodes_ok = (uint16_t)(job->nodes - nodeset_count(&job->nodes_missing));
        job->node_failed = 0;
        job->node_status = WIRE_OK;
        job->node_peer[0] = job->node_text[0] = '\0';
        if (!failed)
                return;
        job->node_failed = (uint16_t)(1 + failed);
        job->node_status = (uint16_t)(status ? status : WIRE_E_INTERNAL);
        wire_hop_str(&e->route[failed - 1], job->node_peer, sizeof(job->node_peer));
        snprintf(job->node_text, sizeof(job->node_text), "%s", why);
}

static void jobs_on_done(void *owner, const struct engine_result *r)
{
        struct job *job = owner;
        enum ctl_job_state state;
        unsigned int status = r->status;
        char text[CTL_TEXT_MAX + 1], why[96] = "";
        const char *reason = r->text ? r->text : "";

        /* The handle is gone once this returns: never ask it anything again. */
        job->xfer = NULL;
        /* A file its client could not hand over: that is the reason. */
        if (r->outcome == ENGINE_FAILED && job_entry(job)->feed_why[0]) {
                reason = job_entry(job)->feed_why;
                status = WIRE_E_INTERNAL;
        }
        if (ctl_job_state_final(job->state)) {
                log_err("job %" PRIu64 ": finished twice (%s, then outcome %d)", job->id,
                        ctl_job_state_str(job->state), (int)r->outcome);
                return;
        }
        switch (r->outcome) {
        case ENGINE_DONE:
                state = CTL_JOB_DONE;
                break;
        case ENGINE_FAILED:
                state = CTL_JOB_FAILED;
                break;
        case ENGINE_CANCELLED:
                state = CTL_JOB_CANCELLED;
                break;
        default:
                log_err("job %" PRIu64 ": unknown engine outcome %d", job->id, (int)r->outcome);
                state = CTL_JOB_FAILED;
                status = WIRE_E_INTERNAL;
                break;
        }
        /* A tree whose receiver had every entry kept: DEST's verdict was
         * the last, and what the ring holds counts as sent. */
        if (state == CTL_JOB_DONE && job->tree) {
                while (job_entry(job)->ahead_n > 0)
                        job_ring_pop(job, true);
                job->files_done = job->files;
        }
        job->bytes_done = job_entry(job)->base_bytes + r->bytes;
        job->files_skipped = job_entry(job)->base_skipped + r->skipped;
        job->usec = r->usec;
        /* A chain's nodes keep the bytes they had, the peer's the result's. */
        if (job->nodes)
                job->node_bytes[0] = MIN(job->bytes_done, job->size);
        if (state == CTL_JOB_DONE && job->nodes)
                job_chain_done(job, r);
        /* Not with a file its client could not hand over: no attempt would get it. */
        if (r->outcome == ENGINE_FAILED && r->transient && !job_entry(job)->feed_why[0] &&
            job_retry(job, status, reason, why, sizeof(why)))
                return;
        if (state == CTL_JOB_FAILED && !why[0] && job->attempt > 1)
                snprintf(why, sizeof(why), " (attempt %u)", job->attempt);
        if (why[0]) {
                int room = (int)(sizeof(text) - 1 - strlen(why));

                /* The reason loses its tail, never the count. */
                snprintf(text, sizeof(text), "%.*s%s", room, reason, why);
                reason = text;
                log_warning("job %" PRIu64 ": %s", job->id, text);
        }
        job_finish(job, state, status, reason);
}

/*
 * How many of its client's files a job may hold that the engine has not
 * taken: every one is a descriptor. A running job, whose tree's small
 * files the engine packs (engine.h), gets jobs->ahead_max; a waiting one
 * only JOBS_FILES_AHEAD, so JOBS_QUEUED_MAX of them stay within the
 * reserve jobs_new() sized ahead_max around.
 */
static unsigned int job_ahead_max(const struct job *job)
{
        return job->xfer ? job->jobs->ahead_max : JOBS_FILES_AHEAD;
}

/* The ring full: twice the room, in order from 0. */
static int job_ahead_grow(struct job_entry *e)
{
        unsigned int cap = e->ahead_cap ? 2 * e->ahead_cap : JOBS_FILES_AHEAD;
        struct job_file *a = calloc(cap, sizeof(*a));

        if (!a)
                return -ENOMEM;
        for (unsigned int i = 0; i < e->ahead_n; i++)
                a[i] = e->ahead[(e->ahead_first + i) % e->ahead_cap];
        free(e->ahead);
        e->ahead = a;
        e->ahead_cap = cap;
        e->ahead_first = 0;
        return 0;
}

/* A tree's entry @index for the engine: entries before it that the
 * receiver kept are let go; the entry stays ours until acknowledged. */
static int jobs_on_next_entry(struct job *job, uint32_t index, struct engine_send_file *f)
{
        struct job_entry *e = job_entry(job);
        struct job_file *a;
        int fd = -1;

        if (index < e->ring_index) {
                /* Acknowledged, let go, and now asked for again: the
                 * receiver lost what it held. Not transient: jobs_on_done. */
                snprintf(e->feed_why, sizeof(e->feed_why),
                         "the receiver no longer holds entries %u to %u it had acknowledged "
                         "(its kept tree expired or was lost); send the tree again",
                         index + 1, e->ring_index);
                return -ESTALE;
        }
        /* The attempt's first after DEST: what the receiver kept goes. */
        if (e->given == 0)
                while (e->ring_index < index && e->ahead_n > 0)
                        job_ring_pop(job, true);
        if (e->given != index - e->ring_index && !(e->given == 0 && e->ahead_n == 0))
                return -EINVAL;         /* the engine asks in order */
        if (e->given >= e->ahead_n) {
                if (e->feed_why[0])
                        return -EMFILE; /* never coming: jobs_on_done says why */
                e->want_next = true;
                return ENGINE_NEXT_LATER;
        }
        a = &e->ahead[(e->ahead_first + e->given) % e->ahead_cap];
        if (a->fd >= 0) {
                fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
        }
        *f = (struct engine_send_file){ .fd = fd, .size = a->size, .name = a->name, .dir = a->dir,
                                        .link = a->link, .mode = a->mode, .mtime_ns = a->mtime_ns };
        log_debug("job %" PRIu64 ": entry %u of %u, %s (%" PRIu64 " bytes)", job->id, index + 1, job->files,
                  a->name, a->size);
        e->given++;
        if (e->feed_fn)
                e->feed_fn(job, e->feed_userdata);
        return 0;
}

/* The engine asks for file @index of a job of several. */
static int jobs_on_next(void *owner, uint32_t index, struct engine_send_file *f)
{
        struct job *job = owner;
        struct job_entry *e = job_entry(job);
        struct job_file *a;
        int fd;

        if (job->tree)
                return jobs_on_next_entry(job, index, f);
        if (e->ahead_n == 0 && e->feed_why[0])
                return -EMFILE; /* never coming: jobs_on_done says why */
        if (e->ahead_n == 0) {
                e->want_next = true;
                return ENGINE_NEXT_LATER;
        }
        a = &e->ahead[e->ahead_first];
        /* Ours too, until it is published: a retry starts from it. */
        fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        safe_close(e->cur.fd);
        e->cur = *a;
        e->cur.fd = fd;
        e->cur_index = e->base + index;
        *f = (struct engine_send_file){ .fd = a->fd, .size = a->size, .name = a->name, .dir = a->dir,
                                        .link = a->link, .mode = a->mode, .mtime_ns = a->mtime_ns };
        log_debug("job %" PRIu64 ": file %u of %u, %s (%" PRIu64 " bytes)", job->id, e->base + index + 1,
                  job->files, a->name, a->size);
        /* The engine takes the descriptor. */
        a->fd = -1;
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        if (e->feed_fn)
                e->feed_fn(job, e->feed_userdata);
        return 0;
}

static void jobs_on_file_done(void *owner, uint32_t index, uint64_t bytes)
{
        struct job *job = owner;
        struct job_entry *e = job_entry(job);

        e->published += bytes;
        if (job->tree) {
                /* DEST (index 0) is not in the ring. */
                while (e->ahead_n > 0 && e->ring_index <= index)
                        job_ring_pop(job, false);
                job->files_done = MAX(job->files_done, index + 1);
                return;
        }
        job->files_done = e->base + index + 1;
        if (e->cur.fd >= 0 && e->cur_index < job->files_done)
                e->cur.fd = safe_close(e->cur.fd);
}

static const struct engine_send_ops jobs_send_ops = {
        .phase = jobs_on_phase,
        .next = jobs_on_next,
        .file_done = jobs_on_file_done,
        .done = jobs_on_done,
};

int jobs_add_file(struct job *job, int fd_in, uint64_t size, const char *name, unsigned int flags,
                  uint32_t mode, uint64_t mtime_ns)
{
        _cleanup_(closep) int fd = fd_in;
        struct job_entry *e = job_entry(job);
        bool dir = flags & CTL_FILE_DIR, link = flags & CTL_FILE_LINK;
        struct job_file *a;

        if (ctl_job_state_final(job->state))
                return -EALREADY;
        if (job->files_in >= job->files || size > job->size - e->bytes_in)
                return -E2BIG;
        if (e->ahead_n - e->given >= job_ahead_max(job))
                return -ENOSPC;
        if (!name[0] || strlen(name) > CTL_NAME_MAX || (flags & ~(unsigned int)_CTL_FILE_FLAGS) ||
            (dir && (!job->tree || link || size != 0 || fd >= 0)) || (link && (!job->tree || size == 0)) ||
            (!dir && fd < 0))
                return -EINVAL;
        if (e->ahead_n == e->ahead_cap && job_ahead_grow(e) < 0)
                return -ENOMEM;
        a = &e->ahead[(e->ahead_first + e->ahead_n) % e->ahead_cap];
        a->fd = TAKE_FD(fd);
        a->dir = dir;
        a->link = link;
        a->mode = mode;
        a->mtime_ns = mtime_ns;
        a->size = size;
        snprintf(a->name, sizeof(a->name), "%s", name);
        e->ahead_n++;
        e->bytes_in += size;
        job->files_in++;
        if (e->want_next && job->xfer) {
                e->want_next = false;
                engine_send_resume(job->xfer);
        }
        /* A retry may have waited for the file it starts from. */
        if (job->state == CTL_JOB_QUEUED && job->files_done > 0)
                jobs_kick(job->jobs);
        return 0;
}

unsigned int job_files_room(const struct job *job)
{
        const struct job_entry *e = container_of(job, struct job_entry, job);

        if (ctl_job_state_final(job->state) || job->files_in >= job->files)
                return 0;
        /* A tree's entries given to the engine stay until acknowledged: not counted. */
        return job_ahead_max(job) > e->ahead_n - e->given ? job_ahead_max(job) - (e->ahead_n - e->given) : 0;
}

bool job_files_complete(const struct job *job)
{
        return job->files_in >= job->files;
}

void job_set_feeder(struct job *job, job_feed_fn fn, void *userdata)
{
        struct job_entry *e = job_entry(job);

        e->feed_fn = fn;
        e->feed_userdata = userdata;
}

void jobs_feeder_gone(struct job *job, const char *why)
{
        struct job_entry *e = job_entry(job);

        e->feed_fn = NULL;
        if (ctl_job_state_final(job->state) || job_files_complete(job))
                return;
        if (!why) {
                log_notice("job %" PRIu64 ": its client went away after %u of %u files; cancelling", job->id,
                           job->files_in, job->files);
                (void)jobs_cancel(job->jobs, job->id);
                return;
        }
        /* Not the user's doing: the job fails, with the reason, once the
         * engine has sent what it holds (and asks for what never comes). */
        snprintf(e->feed_why, sizeof(e->feed_why), "file %u: %s", job->files_in + 1, why);
        log_warning("job %" PRIu64 ": %s", job->id, e->feed_why);
        if (!job->xfer) {
                job_finish(job, CTL_JOB_FAILED, WIRE_E_INTERNAL, e->feed_why);
                return;
        }
        if (e->want_next) {
                e->want_next = false;
                engine_send_resume(job->xfer);
        }
}

/*
 * What an attempt starts from: the job's first file; in a retry after
 * some files were published, the first one not published (the one the
 * engine was on, or the next the client handed over). NULL while the
 * client has not handed that one over yet: jobs_add_file kicks then.
 */
static const struct job_file *jobs_first_file(struct job *job)
{
        struct job_entry *e = job_entry(job);

        e->base = job->files_done;
        e->base_bytes = e->published;
        e->base_skipped = job->files_skipped;
        /* A tree starts from DEST every time: the receiver says what it
         * kept, the ring has the rest (jobs_on_next_entry). */
        if (job->tree) {
                e->base = 0;
                e->given = 0;
        }
        if (job->files_done == 0 || job->tree) {
                e->first = (struct job_file){ .fd = job->fd, .size = job->first_size };
                snprintf(e->first.name, sizeof(e->first.name), "%s", job->name);
                return &e->first;
        }
        if (e->cur.fd >= 0 && e->cur_index == job->files_done)
                return &e->cur;
        e->cur.fd = safe_close(e->cur.fd);
        if (e->ahead_n == 0)
                return NULL;
        /* The engine takes it as its first file: keep ours as cur. */
        e->cur = e->ahead[e->ahead_first];
        e->cur_index = job->files_done;
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        if (e->feed_fn)
                e->feed_fn(job, e->feed_userdata);
        return &e->cur;
}

static struct job *jobs_next_queued(struct jobs *jobs)
{
        for (struct job *job = jobs->head; job; job = job->next)
                if (job->state == CTL_JOB_QUEUED && jobs_first_file(job))
                        return job;
        return NULL;
}

/* Drop the oldest final jobs nobody watches, down to JOBS_RETAIN_FINAL. */
static void jobs_prune(struct jobs *jobs)
{
        struct job **p = &jobs->head, *prev = NULL;

        while (jobs->n_final > JOBS_RETAIN_FINAL && *p) {
                struct job *job = *p;
                struct job_entry *e = job_entry(job);

                if (!ctl_job_state_final(job->state) || e->watchers || e->notifying) {
                        prev = job;
                        p = &job->next;
                        continue;
                }
                *p = job->next;
                if (jobs->tail == job)
                        jobs->tail = prev;
                jobs->n_final--;
                job_entry_free(e);
        }
}

/* @host:@port, numeric only, as getaddrinfo() answers: never blocks. */
static int job_addr(const char *host, uint16_t port, struct addrinfo **ai)
{
        struct addrinfo hints = {
                .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
                .ai_socktype = SOCK_STREAM,
        };
        char service[8];

        snprintf(service, sizeof(service), "%u", port);
        return getaddrinfo(host, service, &hints, ai) != 0 ? -EINVAL : 0;
}

/* host:port and a chain's route, numeric only (control.c checked the
 * hosts), into the job's entry. */
static int job_resolve(struct job *job)
{
        struct job_entry *e = job_entry(job);
        struct ctl_route_iter it;
        struct ctl_hop hop;
        struct addrinfo *ai = NULL;
        unsigned int n = 0;
        int r;

        if (job_addr(job->host, job->port, &ai) < 0)
                return -EINVAL;
        if (ai->ai_addrlen > sizeof(e->dst)) {
                freeaddrinfo(ai);
                return -EINVAL;
        }
        memcpy(&e->dst, ai->ai_addr, ai->ai_addrlen);
        e->dst_len = ai->ai_addrlen;
        freeaddrinfo(ai);

        e->route_hops = 0;
        if (!job->route)
                return 0;
        /* A hop at a time, into what job_route_set() sized for them. */
        it = CTL_ROUTE_ITER(job->route);
        while ((r = ctl_route_next(&it, &hop)) > 0) {
                if (n + 1u >= job->nodes || job_addr(hop.host, hop.port, &ai) < 0)
                        return -EINVAL;
                r = wire_hop_set(&e->route[n], ai->ai_addr);
                freeaddrinfo(ai);
                if (r < 0)
                        return r;
                n++;
        }
        if (r < 0 || n + 1u != job->nodes)
                return -EINVAL;
        e->route_hops = n;
        return 0;
}

/* A chain's route for the journal: whole while short, else its ends
 * (512 nodes' addresses would make a 28 KiB line; `xferctl status`
 * lists them). */
static void job_log_chain(const struct job *job)
{
        const char *first_end = strchr(job->route, ','), *last = strrchr(job->route, ',');

        if (job->nodes <= 8 || !first_end || !last)
                log_info("job %" PRIu64 ": a chain of %u nodes: %s relays it to %s", job->id,
                         (unsigned int)job->nodes, job->peer, job->route);
        else
                log_info("job %" PRIu64 ": a chain of %u nodes: %s relays it to %.*s, and on to %s (%u hops "
                         "between)", job->id, (unsigned int)job->nodes, job->peer, (int)(first_end - job->route),
                         job->route, last + 1, (unsigned int)job->nodes - 3);
}

static void jobs_fail_start(struct job *job, const char *why)
{
        char text[CTL_TEXT_MAX + 1];

        snprintf(text, sizeof(text), "cannot start: %s", why);
        log_warning("job %" PRIu64 ": %s", job->id, text);
        job_finish(job, CTL_JOB_FAILED, WIRE_E_INTERNAL, text);
}

/*
 * Hand one QUEUED job to the engine. The engine decides admission before
 * anything changes, so the job leaves QUEUED only forward: to CONNECTING
 * when started, to FAILED when it cannot be. Returns ENGINE_SEND_FULL when
 * the job stays queued (start no more now: the pool is full or the device
 * is gone), else 0.
 */
static int jobs_start(struct jobs *jobs, struct job *job)
{
        struct job_entry *e = job_entry(job);
        struct engine_send *xfer = NULL;
        struct engine_send_req req;
        const struct job_file *first;
        int r;

        if (job_resolve(job) < 0) {
                jobs_fail_start(job, job->nodes ? "invalid address in the chain" : "invalid peer address");
                return 0;
        }
        first = jobs_first_file(job);
        /* Not QUEUED without one (jobs_next_queued). */
        assert(first);
        req = (struct engine_send_req){
                .id = job->id,
                .fd = first->fd,
                .size = first->size,
                .name = first->name,
                .files = job->tree ? job->files : job->files - job->files_done,
                .job_bytes = job->tree ? job->size : job->size - e->published,
                .tree = job->tree,
                .mode = job->mode,
                .mtime_ns = job->mtime_ns,
                .tree_token = job->tree ? e->token : NULL,
                .dst = (const struct sockaddr *)&e->dst,
                .dst_len = e->dst_len,
                .peer = job->peer,
                .attempt = job->attempt,
                .bwlimit = job->bwlimit,
                .sync = job->sync,
                .route = e->route_hops ? e->route : NULL,
                .route_hops = e->route_hops,
        };
        r = engine_send(jobs->engine, &req, &jobs_send_ops, job, &xfer);
        if (r == ENGINE_SEND_NODEV) {
                /* The engine says when the device is back (jobs_schedule). */
                log_debug("job %" PRIu64 ": waits, no RDMA device", job->id);
                return ENGINE_SEND_FULL;
        }
        if (r == ENGINE_SEND_FULL) {
                /*
                 * The send pool frees up when one of our running jobs ends,
                 * and that kicks us again. With none running it never will
                 * (max_transfers above what the engine's pool was sized
                 * for): fail rather than wait forever.
                 */
                if (jobs->n_active > 0) {
                        log_debug("job %" PRIu64 ": waits, the send pool is full", job->id);
                        return ENGINE_SEND_FULL;
                }
                jobs_fail_start(job, "the send pool admits no transfer even with none running "
                                     "(is max_transfers above what the daemon started with?)");
                return 0;
        }
        if (r < 0) {
                jobs_fail_start(job, strerror(-r));
                return 0;
        }
        assert(r == 0 && xfer);

        job->xfer = xfer;
        job->rate = 0;
        e->cancelling = false;
        if (job->attempt > 1 && job->files_done > 0)
                log_info("job %" PRIu64 ": sending files %u to %u of %s (%" PRIu64 " bytes left, "
                         "from %s) to %s, attempt %u of %u", job->id, job->files_done + 1, job->files,
                         job->name, job->size - e->published, first->name, job->peer, job->attempt,
                         job_attempts(job));
        else if (job->attempt > 1)
                log_info("job %" PRIu64 ": sending %s (%" PRIu64 " bytes) to %s, attempt %u of %u",
                         job->id, job->name, job->size, job->peer, job->attempt, job_attempts(job));
        else
                log_info("job %" PRIu64 ": sending %s (%" PRIu64 " bytes) to %s", job->id, job->name,
                         job->size, job->peer);
        if (e->route_hops)
                job_log_chain(job);
        /* No callback can have come yet: they come only from the loop. */
        job_set_state(job, CTL_JOB_CONNECTING);
        return 0;
}

static void jobs_schedule_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct jobs *jobs = userdata;
        struct job *job;

        jobs_prune(jobs);

        while (!jobs->stopping && jobs->n_active < jobs->cfg->max_transfers &&
               (job = jobs_next_queued(jobs)))
                if (jobs_start(jobs, job) == ENGINE_SEND_FULL)
                        break;
}

static void jobs_rate_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct jobs *jobs = userdata;
        uint64_t now = clock_usec(CLOCK_MONOTONIC);

        for (struct job *job = jobs->head; job; job = job->next) {
                if (!job_is_active(job))
                        continue;
                job_refresh(job);
                if (job->rate_usec && now > job->rate_usec && job->bytes_done >= job->rate_bytes)
                        job->rate = (job->bytes_done - job->rate_bytes) * 1000000u /
                                    (now - job->rate_usec);
                else
                        job->rate = 0;
                job->rate_bytes = job->bytes_done;
                job->rate_usec = now;
        }
}

/*
 * The look-ahead of a running job, from the descriptors the process may
 * hold (RLIMIT_NOFILE, which rdmaxferd raises to its hard limit at
 * start): JOBS_FD_RESERVE for everything else (waiting jobs' files,
 * control connections, the engine's own), the rest shared by
 * max_transfers running jobs, each holding up to three times its
 * look-ahead (the files ahead, a pack the engine builds from them and, in
 * a tree, the entries in flight kept until acknowledged). Between
 * JOBS_FILES_AHEAD and JOBS_FILES_AHEAD_MAX.
 */
static unsigned int jobs_size_ahead(const struct config *cfg)
{
        struct rlimit rl;
        uint64_t n;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return JOBS_FILES_AHEAD_MAX;
        n = rl.rlim_cur > JOBS_FD_RESERVE ? (rl.rlim_cur - JOBS_FD_RESERVE) / (3 * MAX(cfg->max_transfers, 1u)) : 0;
        n = MAX(MIN(n, (uint64_t)JOBS_FILES_AHEAD_MAX), (uint64_t)JOBS_FILES_AHEAD);
        log_debug("a running job holds up to %" PRIu64 " files ahead (RLIMIT_NOFILE %" PRIu64 ")", n,
                  (uint64_t)rl.rlim_cur);
        return (unsigned int)n;
}

int jobs_new(struct jobs **out, struct event_base *base, const struct config *cfg,
             struct engine *engine)
{
        static const struct timeval second = { 1, 0 };
        struct jobs *jobs;

        jobs = calloc(1, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        jobs->base = base;
        jobs->cfg = cfg;
        jobs->engine = engine;
        /* Ids stay unique across restarts, so logs of two runs never share one. */
        jobs->next_id = clock_usec(CLOCK_REALTIME);
        /* Jitter needs no secret, only daemons that do not march in step. */
        jobs->rand = (jobs->next_id ^ clock_usec(CLOCK_MONOTONIC) ^ (uint64_t)getpid() << 32) | 1;
        jobs->ahead_max = jobs_size_ahead(cfg);
        jobs->schedule_ev = event_new(base, -1, 0, jobs_schedule_cb, jobs);
        jobs->rate_ev = event_new(base, -1, EV_PERSIST, jobs_rate_cb, jobs);
        if (!jobs->schedule_ev || !jobs->rate_ev || event_add(jobs->rate_ev, &second) < 0) {
                jobs_free(jobs);
                return -ENOMEM;
        }
        *out = jobs;
        return 0;
}

void jobs_free(struct jobs *jobs)
{
        struct job *job;

        if (!jobs)
                return;
        while ((job = jobs->head)) {
                jobs->head = job->next;
                job_entry_free(job_entry(job));
        }
        if (jobs->schedule_ev)
                event_free(jobs->schedule_ev);
        if (jobs->rate_ev)
                event_free(jobs->rate_ev);
        free(jobs);
}

unsigned int jobs_queued_by(const struct jobs *jobs, uid_t uid)
{
        unsigned int n = 0;

        for (const struct job *job = jobs->head; job; job = job->next)
                n += (job->state == CTL_JOB_QUEUED || job->state == CTL_JOB_RETRYING) &&
                     job->uid == uid;
        return n;
}

/*
 * A SUBMIT's route into @job's, every hop with its port: @port (cfg.port)
 * where it names none, fixed now as the peer's is. A chain's route, bytes
 * per node and resolved hops are allocated here, as long as its own
 * (nothing for no chain). 0, -EINVAL or -ENOMEM; job_chain_free() undoes it.
 */
static int job_route_set(struct job_entry *e, const char *route, uint16_t port)
{
        struct job *job = &e->job;
        _cleanup_(freep) char *full = NULL;
        struct ctl_route_iter it = CTL_ROUTE_ITER(route);
        struct ctl_hop hop;
        unsigned int n = 0;
        int r;

        if (!route[0])
                return 0;
        full = malloc(CTL_ROUTE_MAX + 1);
        if (!full)
                return -ENOMEM;
        full[0] = '\0';
        while ((r = ctl_route_next(&it, &hop)) > 0) {
                /* ctl_route_add() refuses a hop past CTL_ROUTE_HOPS_MAX. */
                if (ctl_route_add(full, CTL_ROUTE_MAX + 1, hop.host, hop.port ? hop.port : port) < 0)
                        return -EINVAL;
                n++;
        }
        if (r < 0)
                return -EINVAL;
        job->route = strdup(full);
        job->node_bytes = calloc(1 + n, sizeof(job->node_bytes[0]));
        e->route = calloc(n, sizeof(e->route[0]));
        if (!job->route || !job->node_bytes || !e->route)
                return -ENOMEM;
        job->nodes = (uint16_t)(1 + n);
        job->nodes_missing = job_nodes_all(job);
        return 0;
}

int jobs_submit(struct jobs *jobs, const struct ctl_submit *s, uid_t uid, int fd_in, uint64_t size,
                uint64_t *id)
{
        _cleanup_(closep) int fd = fd_in;
        struct job_entry *e;
        struct job *job;
        bool v6;
        int n, r;

        if (jobs->stopping)
                return -ESHUTDOWN;
        if ((s->flags & ~_CTL_SUBMIT_FLAGS) ||
            ((s->flags & CTL_SUBMIT_RETRIES) && s->retries > CTL_RETRIES_MAX) ||
            (s->files > 1 && s->job_bytes < size) ||
            ((s->flags & CTL_SUBMIT_TREE) ? fd >= 0 || size != 0 || s->files < 2 : fd < 0) ||
            __builtin_popcount(s->flags & CTL_SUBMIT_SYNC_MASK) > 1 ||
            (s->route[0] && !ctl_submit_chain_ok(s)))
                return -EINVAL;
        if (jobs->n_queued + jobs->n_retrying >= JOBS_QUEUED_MAX)
                return -EBUSY;
        /* One user cannot take the whole queue (each place holds a client's fd). */
        if (jobs_queued_by(jobs, uid) >= jobs->cfg->max_queued_per_user)
                return JOBS_USER_QUEUE_FULL;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        job = &e->job;
        snprintf(job->host, sizeof(job->host), "%s", s->host);
        job->port = s->port ? s->port : jobs->cfg->port;
        v6 = strchr(job->host, ':');
        n = snprintf(job->peer, sizeof(job->peer), "%s%s%s:%u", v6 ? "[" : "", job->host,
                     v6 ? "]" : "", job->port);
        if (n < 0 || (size_t)n >= sizeof(job->peer)) {
                free(e);
                return -EINVAL;
        }
        r = job_route_set(e, s->route, jobs->cfg->port);
        if (r < 0) {
                job_chain_free(e);
                free(e);
                return r;
        }
        job->jobs = jobs;
        job->id = jobs->next_id++;
        job->state = CTL_JOB_QUEUED;
        job->fd = TAKE_FD(fd);
        job->first_size = size;
        job->size = s->files > 1 ? s->job_bytes : size;
        job->files = MAX(s->files, 1u);
        job->tree = s->flags & CTL_SUBMIT_TREE;
        if (job->tree) {
                job->mode = s->mode & 07777;
                job->mtime_ns = s->mtime_ns;
        }
        job->sync = s->flags & CTL_SUBMIT_SKIP_EXISTING ? ENGINE_SYNC_SKIP_EXISTING :
                    s->flags & CTL_SUBMIT_SYNC_SIZE     ? ENGINE_SYNC_SIZE :
                    s->flags & CTL_SUBMIT_SYNC_DIGEST   ? ENGINE_SYNC_DIGEST : ENGINE_SYNC_NONE;
        job->files_in = 1;
        e->bytes_in = size;
        e->cur.fd = -1;
        job->bwlimit = s->bwlimit;
        job->uid = uid;
        job->attempt = 1;
        job->retries = (s->flags & CTL_SUBMIT_RETRIES) ? (int)s->retries : -1;
        /* Several files: a retry starts from the first one not published
         * (jobs_first_file); a tree from DEST again, continuing where the
         * receiver kept it (its token names the job to it). */
        if (job->tree) {
                uint8_t nonce[WIRE_NONCE_SIZE];

                auth_nonce(nonce);
                memcpy(e->token, nonce, sizeof(e->token));
                e->ring_index = 1;
        }
        snprintf(job->name, sizeof(job->name), "%s", s->name);

        if (jobs->tail)
                jobs->tail->next = job;
        else
                jobs->head = job;
        jobs->tail = job;
        jobs->n_queued++;

        log_debug("job %" PRIu64 ": queued %s (%" PRIu64 " bytes) for %s", job->id, job->name,
                  job->size, job->peer);
        jobs_kick(jobs);
        *id = job->id;
        return 0;
}

struct job *jobs_find(struct jobs *jobs, uint64_t id)
{
        for (struct job *job = jobs->head; job; job = job->next)
                if (job->id == id)
                        return job;
        return NULL;
}

struct job *jobs_first(struct jobs *jobs)
{
        return jobs->head;
}

int jobs_cancel(struct jobs *jobs, uint64_t id)
{
        struct job *job = jobs_find(jobs, id);
        struct job_entry *e;

        if (!job)
                return -ENOENT;
        if (ctl_job_state_final(job->state))
                return -EALREADY;
        /* Waiting, it holds nothing of the engine's: it ends at once. */
        if (job->state == CTL_JOB_QUEUED || job->state == CTL_JOB_RETRYING) {
                log_info("job %" PRIu64 ": cancelled while %s", job->id, ctl_job_state_str(job->state));
                job_finish(job, CTL_JOB_CANCELLED, WIRE_OK, "cancelled");
                return 0;
        }
        /* Running: the engine decides, and its done callback ends the job. */
        e = job_entry(job);
        assert(job->xfer);
        if (!e->cancelling) {
                e->cancelling = true;
                log_info("job %" PRIu64 ": cancelling", job->id);
                engine_send_cancel(job->xfer);
        }
        return 0;
}

unsigned int jobs_active(const struct jobs *jobs)
{
        return jobs->n_active;
}

void jobs_counts(const struct jobs *jobs, unsigned int *active, unsigned int *queued)
{
        *active = jobs->n_active;
        *queued = jobs->n_queued;
}

unsigned int jobs_retrying(const struct jobs *jobs)
{
        return jobs->n_retrying;
}

unsigned int jobs_waiting(const struct jobs *jobs)
{
        return jobs->n_queued + jobs->n_retrying;
}

void jobs_tally(const struct jobs *jobs, struct stats_tally *t)
{
        *t = jobs->tally;
}

uint64_t jobs_rate_total(const struct jobs *jobs)
{
        uint64_t sum = 0;

        for (const struct job *job = jobs->head; job; job = job->next)
                if (job_is_active(job))
                        sum += job->rate;
        return sum;
}

void jobs_stop(struct jobs *jobs)
{
        jobs->stopping = true;
        /* Finishing never unlinks (pruning is deferred), so walking on is safe. */
        for (struct job *job = jobs->head; job; job = job->next)
                if (job->state == CTL_JOB_QUEUED || job->state == CTL_JOB_RETRYING)
                        job_finish(job, CTL_JOB_CANCELLED, WIRE_OK, "daemon shutting down");
}

int job_watch(struct job *job, job_watch_fn fn, void *userdata)
{
        struct job_entry *e = job_entry(job);
        struct job_watcher *w;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        w->next = e->watchers;
        e->watchers = w;
        return 0;
}

void job_unwatch(struct job *job, job_watch_fn fn, void *userdata)
{
        struct job_entry *e = job_entry(job);

        for (struct job_watcher **p = &e->watchers; *p; p = &(*p)->next) {
                struct job_watcher *w = *p;

                if (w->fn != fn || w->userdata != userdata)
                        continue;
                if (e->notifying) {
                        w->fn = NULL;
                } else {
                        *p = w->next;
                        free(w);
                }
                return;
        }
}
