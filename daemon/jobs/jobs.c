/*
 * Outgoing jobs: the table (submission order), the queue, watchers and
 * retention. State changes go through jobs_set_state() so the counters
 * never drift, and states only move forward within an attempt
 * (job_states). Starting queued jobs and pruning old ones run from a
 * deferred event, so a done callback never re-enters the engine or
 * unlinks a job under somebody's feet. An attempt at the engine and the
 * retries after it are jobs-attempt.c's, a job's files jobs-feed.c's, a
 * chain's account jobs-chain.c's, what a job may be asked jobs-spec.c's.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>

#include "auth.h"
#include "clock.h"
#include "engine.h"
#include "jobs-int.h"
#include "log.h"

struct job_watcher {
        job_watch_fn fn;                /* NULL: removed while notifying */
        void *userdata;
        struct job_watcher *next;
};

#define JOB_STATE_BIT(s)        (1u << (s))
#define JOB_STATES_FINAL        (JOB_STATE_BIT(JOB_DONE) | JOB_STATE_BIT(JOB_FAILED) | \
                                 JOB_STATE_BIT(JOB_CANCELLED))

/* Each state's name, and where it may go (jobs.h, job_state_transition_ok()). */
static const struct {
        const char *name;
        unsigned int next;
} job_states[_JOB_STATE_MAX] = {
        [JOB_QUEUED] = { "queued", JOB_STATE_BIT(JOB_CONNECTING) | JOB_STATE_BIT(JOB_SENDING) |
                                   JOB_STATE_BIT(JOB_VERIFYING) | JOB_STATES_FINAL },
        [JOB_CONNECTING] = { "connecting", JOB_STATE_BIT(JOB_SENDING) | JOB_STATE_BIT(JOB_VERIFYING) |
                                           JOB_STATES_FINAL | JOB_STATE_BIT(JOB_RETRYING) },
        [JOB_SENDING] = { "sending", JOB_STATE_BIT(JOB_VERIFYING) | JOB_STATES_FINAL |
                                     JOB_STATE_BIT(JOB_RETRYING) },
        [JOB_VERIFYING] = { "verifying", JOB_STATES_FINAL | JOB_STATE_BIT(JOB_RETRYING) },
        [JOB_DONE] = { "done", 0 },
        [JOB_FAILED] = { "failed", 0 },
        [JOB_CANCELLED] = { "cancelled", 0 },
        [JOB_RETRYING] = { "retrying", JOB_STATE_BIT(JOB_QUEUED) | JOB_STATES_FINAL },
};

const char *job_state_str(enum job_state state)
{
        return (unsigned int)state < _JOB_STATE_MAX ? job_states[state].name : "unknown";
}

bool job_state_final(enum job_state state)
{
        return (unsigned int)state < _JOB_STATE_MAX && (JOB_STATES_FINAL & JOB_STATE_BIT(state));
}

bool job_state_active(enum job_state state)
{
        return state == JOB_CONNECTING || state == JOB_SENDING || state == JOB_VERIFYING;
}

bool job_state_transition_ok(enum job_state from, enum job_state to)
{
        return (unsigned int)from < _JOB_STATE_MAX && (unsigned int)to < _JOB_STATE_MAX &&
               (job_states[from].next & JOB_STATE_BIT(to));
}

static bool job_is_active(const struct job *job)
{
        return job_state_active(job->state);
}

void job_items_clear(struct job *job)
{
        for (uint32_t i = 0; i < job->n_items; i++)
                free(job->items[i].name);
        job->n_items = job->items_lost = 0;
}

void job_entry_free(struct job_entry *e)
{
        struct job_watcher *w;

        if (!e)
                return;
        job_ahead_drop(e);
        safe_close(e->cur.fd);
        job_file_let_go(&e->cur);
        job_items_clear(&e->job);
        free(e->job.items);
        free(e->ahead);
        while ((w = e->watchers)) {
                e->watchers = w->next;
                free(w);
        }
        if (e->retry_ev)
                event_free(e->retry_ev);
        safe_close(e->job.fd);
        job_chain_free(e);
        free(e->land);
        free(e->rules);
        free(e);
}

static unsigned int *jobs_counter(struct jobs *jobs, enum job_state state)
{
        if (job_state_final(state))
                return &jobs->n_final;
        if (state == JOB_QUEUED)
                return &jobs->n_queued;
        if (state == JOB_RETRYING)
                return &jobs->n_retrying;
        return &jobs->n_active;
}

void jobs_set_state(struct job *job, enum job_state state)
{
        struct jobs *jobs = job->jobs;
        enum job_state old = job->state;

        /* Forward within an attempt (VERIFYING may follow CONNECTING for 0
         * bytes), RETRYING back to QUEUED, never out of a final state. */
        assert(job_state_transition_ok(old, state));

        (*jobs_counter(jobs, old))--;
        (*jobs_counter(jobs, state))++;
        job->state = state;
        if (state == JOB_CONNECTING && !job->started_us)
                job->started_us = clock_usec(CLOCK_REALTIME);
        if (state == JOB_DONE || state == JOB_FAILED || state == JOB_CANCELLED)
                job->ended_us = clock_usec(CLOCK_REALTIME);
        log_debug("job %" PRIu64 ": %s -> %s", job->id, job_state_str(old),
                  job_state_str(state));
}

void jobs_notify(struct job *job)
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

void jobs_kick(struct jobs *jobs)
{
        event_active(jobs->schedule_ev, 0, 0);
}

void jobs_schedule(struct jobs *jobs)
{
        jobs_kick(jobs);
}

void job_finish(struct job *job, enum job_state state, unsigned int status, const char *text)
{
        struct job_entry *e = job_entry(job);
        bool fed = e->fed;

        assert(job_state_final(state));
        assert(!job->xfer);
        if (e->retry_ev)
                evtimer_del(e->retry_ev);
        job->fd = safe_close(job->fd);
        job_ahead_drop(e);
        /* A final job runs no more: its ring (up to JOBS_FILES_AHEAD_MAX
         * entries of a few hundred bytes each) goes now, not when the job
         * leaves the JOBS_RETAIN_FINAL kept for its owner to see. */
        free(e->ahead);
        e->ahead = NULL;
        e->ahead_first = e->ahead_cap = 0;
        e->cur.fd = safe_close(e->cur.fd);
        e->fed = false;
        job->status = (uint16_t)status;
        snprintf(job->text, sizeof(job->text), "%s", text ? text : "");
        /* A chain that failed failed at its first node, and then none
         * has the file; a cancelled one is said to have reached none
         * either (job_chain_done() says how far a done one got). */
        if (job->nodes && state != JOB_DONE) {
                job->nodes_missing = job_nodes_all(job);
                job->nodes_ok = 0;
                job->node_failed = state == JOB_FAILED;
                job->node_status = state == JOB_FAILED ? job->status : WIRE_OK;
                snprintf(job->node_peer, sizeof(job->node_peer), "%s", state == JOB_FAILED ? job->peer : "");
                snprintf(job->node_text, sizeof(job->node_text), "%s", state == JOB_FAILED ? job->text : "");
        }
        /* A finished job shows its average rate, not the last second's. */
        job->rate = job->usec ? job->bytes_done * 1000000u / job->usec : 0;
        /* Whatever ended it, the engine or before the engine had it; a failure always has a reason. */
        /* One transfer, its files as the receiver counts them. */
        stats_tally_add_files(&job->jobs->tally, state == JOB_CANCELLED,
                              state == JOB_DONE ? WIRE_OK : status ? status : WIRE_E_INTERNAL, job->size, job->usec,
                              job->files_done);
        jobs_set_state(job, state);
        /* A client still handing files over must not wait for room that
         * never comes: its feeder hears once more, the job final. */
        if (fed && job->jobs->want_more)
                job->jobs->want_more(job->jobs->feeder, job);
        jobs_notify(job);
        jobs_kick(job->jobs);
}

static struct job *jobs_next_queued(struct jobs *jobs)
{
        for (struct job *job = jobs->head; job; job = job->next)
                if (job->state == JOB_QUEUED && job_first_file(job))
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

                if (!job_state_final(job->state) || e->watchers || e->notifying) {
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

static void jobs_schedule_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct jobs *jobs = userdata;
        struct job *job;

        jobs_prune(jobs);

        while (!jobs->stopping && jobs->n_active < jobs->cfg.max_transfers &&
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
static unsigned int jobs_size_ahead(const struct jobs_cfg *cfg)
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

int jobs_new(struct jobs **out, struct event_base *base, struct engine *engine, const struct jobs_cfg *cfg)
{
        static const struct timeval second = { 1, 0 };
        struct jobs *jobs;

        jobs = calloc(1, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        jobs->base = base;
        jobs->cfg = *cfg;
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

void jobs_reconfigure(struct jobs *jobs, const struct jobs_cfg *cfg)
{
        jobs->cfg = *cfg;
        /* max_transfers may have grown: queued jobs may start. */
        jobs_kick(jobs);
}

unsigned int jobs_queued_by(const struct jobs *jobs, uid_t uid)
{
        unsigned int n = 0;

        for (const struct job *job = jobs->head; job; job = job->next)
                n += (job->state == JOB_QUEUED || job->state == JOB_RETRYING) &&
                     job->uid == uid;
        return n;
}

/* The first file that came with a submit: a tree's DEST with none, a file
 * regular with a descriptor, no bigger than the job. */
static int jobs_first_check(const struct job_spec *s, int fd, uint64_t size, char *why, size_t whylen)
{
        bool pull = s->land && s->land->direction == WIRE_LAND_PULL;

        if (s->tree && (fd >= 0 || size != 0)) {
                snprintf(why, whylen, "a tree comes with no descriptor, and its entries by FILE");
                return -EINVAL;
        }
        /* A pull asks the peer for its file: none goes from here. */
        if (pull && (fd >= 0 || size != 0 || s->files > 1)) {
                snprintf(why, whylen, "a pull comes with no descriptor, and is of one file");
                return -EINVAL;
        }
        if (!s->tree && !pull && fd < 0) {
                snprintf(why, whylen, "no file descriptor came with the request");
                return -EINVAL;
        }
        if (s->files > 1 && s->job_bytes < size) {
                snprintf(why, whylen, "the job's %" PRIu64 " bytes are fewer than its first file's %" PRIu64,
                         s->job_bytes, size);
                return -EINVAL;
        }
        return 0;
}

int jobs_submit(struct jobs *jobs, const struct job_spec *s, int fd_in, uint64_t size, struct job **out,
                char *why, size_t whylen)
{
        _cleanup_(closep) int fd = fd_in;
        struct job_entry *e;
        struct job *job;
        int r;

        why[0] = '\0';
        if (jobs->stopping) {
                snprintf(why, whylen, "daemon is shutting down");
                return -ESHUTDOWN;
        }
        r = jobs_first_check(s, fd, size, why, whylen);
        if (r < 0)
                return r;
        e = calloc(1, sizeof(*e));
        if (!e) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        job = &e->job;
        r = jobs_spec_apply(jobs, s, e, why, whylen);
        if (r >= 0 && jobs->n_queued + jobs->n_retrying >= JOBS_QUEUED_MAX) {
                snprintf(why, whylen, "too many jobs queued (%u)", JOBS_QUEUED_MAX);
                r = -EBUSY;
        } else if (r >= 0 && jobs_queued_by(jobs, s->uid) >= jobs->cfg.max_queued_per_user) {
                /* One user cannot take the whole queue (each place holds a client's fd). */
                snprintf(why, whylen, "too many jobs queued for your user (%u)", jobs->cfg.max_queued_per_user);
                r = JOBS_USER_QUEUE_FULL;
        }
        if (r != 0) {
                job_chain_free(e);
                free(e->land);
                free(e->rules);
                free(e);
                return r;
        }
        job->jobs = jobs;
        job->id = jobs->next_id++;
        job->created_us = clock_usec(CLOCK_REALTIME);
        job->state = JOB_QUEUED;
        job->fd = TAKE_FD(fd);
        job->first_size = size;
        job->size = s->files > 1 ? s->job_bytes : size;
        job->files = MAX(s->files, 1u);
        job->tree = s->tree;
        if (job->tree) {
                job->mode = s->mode & 07777;
                job->mtime_ns = s->mtime_ns;
        } else if (s->land) {
                job->mode = s->mode & 07777;    /* the first file's, to land with */
        }
        job->sync = s->sync;
        job->delete = s->delete;
        job->dry_run = s->dry_run;
        job->files_in = 1;
        e->fed = job->files > 1;
        e->bytes_in = size;
        e->cur.fd = -1;
        job->bwlimit = s->bwlimit;
        job->no_sparse = s->no_sparse;
        job->uid = s->uid;
        job->attempt = 1;
        job->retries = s->own_retries ? (int)s->retries : -1;
        /* Several files: a retry starts from the first one not published
         * (job_first_file); a tree from DEST again, continuing where the
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
        *out = job;
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
        if (job_state_final(job->state))
                return -EALREADY;
        /* Waiting, it holds nothing of the engine's: it ends at once. */
        if (job->state == JOB_QUEUED || job->state == JOB_RETRYING) {
                log_info("job %" PRIu64 ": cancelled while %s", job->id, job_state_str(job->state));
                job_finish(job, JOB_CANCELLED, WIRE_OK, "cancelled");
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
                if (job->state == JOB_QUEUED || job->state == JOB_RETRYING)
                        job_finish(job, JOB_CANCELLED, WIRE_OK, "daemon shutting down");
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
