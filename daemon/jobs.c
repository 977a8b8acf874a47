/*
 * Outgoing jobs: the table (submission order), the queue, watchers and
 * retention. State changes go through jobs_set_state() so the counters
 * never drift. Starting queued jobs and pruning old ones run from a
 * deferred event, so job_finish() (called from deep inside the engine)
 * never re-enters the engine or unlinks a job under somebody's feet.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <event2/event.h>

#include "daemon.h"
#include "engine.h"
#include "clock.h"
#include "jobs.h"
#include "log.h"
#include "macro.h"
#include "wire.h"

struct job_watcher {
        job_watch_fn fn;                /* NULL: removed while notifying */
        void *userdata;
        struct job_watcher *next;
};

struct job_entry {
        struct job job;
        struct job_watcher *watchers;
        unsigned int notifying;
        bool cancelling;                /* engine_cancel() already asked */
};

struct jobs {
        struct daemon *d;
        struct job *head, *tail;
        uint64_t next_id;
        unsigned int n_active, n_queued, n_final;
        bool stopping;
        struct event *schedule_ev;      /* deferred: start queued jobs, prune */
        struct event *rate_ev;          /* 1 s: job->rate */
};

static struct job_entry *job_entry(struct job *job)
{
        return container_of(job, struct job_entry, job);
}

static bool job_is_active(const struct job *job)
{
        return job->state == CTL_JOB_CONNECTING || job->state == CTL_JOB_SENDING ||
               job->state == CTL_JOB_VERIFYING;
}

static void job_entry_free(struct job_entry *e)
{
        struct job_watcher *w;

        if (!e)
                return;
        while ((w = e->watchers)) {
                e->watchers = w->next;
                free(w);
        }
        safe_close(e->job.fd);
        free(e);
}

/* The one place a job's state changes. */
static void jobs_set_state(struct job *job, enum ctl_job_state state)
{
        struct jobs *jobs = job->jobs;
        enum ctl_job_state old = job->state;

        /* Only forward, never out of a final state (VERIFYING may follow CONNECTING for 0 bytes). */
        assert(!ctl_job_state_final(old));
        assert(state > old);

        if (old == CTL_JOB_QUEUED)
                jobs->n_queued--;
        else
                jobs->n_active--;
        if (ctl_job_state_final(state))
                jobs->n_final++;
        else
                jobs->n_active++;
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

static void jobs_finish_job(struct job *job, enum ctl_job_state state, unsigned int status,
                            const char *text)
{
        job->fd = safe_close(job->fd);
        job->status = (uint16_t)status;
        snprintf(job->text, sizeof(job->text), "%s", text ? text : "");
        /* A finished job shows its average rate, not the last second's. */
        job->rate = job->usec ? job->bytes_done * 1000000u / job->usec : 0;
        jobs_set_state(job, state);
        jobs_notify(job);
        jobs_kick(job->jobs);
}

void job_set_state(struct job *job, enum ctl_job_state state)
{
        assert(!ctl_job_state_final(state));
        if (state == job->state)
                return;
        jobs_set_state(job, state);
        if (state == CTL_JOB_SENDING) {
                job->rate_bytes = job->bytes_done;
                job->rate_usec = clock_usec(CLOCK_MONOTONIC);
        }
        jobs_notify(job);
}

void job_finish(struct job *job, enum ctl_job_state state, unsigned int status, const char *text)
{
        assert(ctl_job_state_final(state));
        if (ctl_job_state_final(job->state)) {
                log_err("job %" PRIu64 ": finished twice (%s, then %s)", job->id,
                        ctl_job_state_str(job->state), ctl_job_state_str(state));
                return;
        }
        if (job->sender)
                log_warning("job %" PRIu64 ": finished while the engine still holds it", job->id);
        jobs_finish_job(job, state, status, text);
}

/* The one way back: a job the engine could not take yet waits again. */
static void jobs_requeue(struct job *job)
{
        struct jobs *jobs = job->jobs;

        assert(job->state == CTL_JOB_CONNECTING);
        jobs->n_active--;
        jobs->n_queued++;
        job->state = CTL_JOB_QUEUED;
        log_debug("job %" PRIu64 ": connecting -> queued (no send buffers free)", job->id);
        jobs_notify(job);
}

static struct job *jobs_next_queued(struct jobs *jobs)
{
        for (struct job *job = jobs->head; job; job = job->next)
                if (job->state == CTL_JOB_QUEUED)
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

static void jobs_schedule_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct jobs *jobs = userdata;
        struct daemon *d = jobs->d;
        struct job *job;

        jobs_prune(jobs);

        while (!jobs->stopping && jobs->n_active < d->cfg.max_transfers &&
               (job = jobs_next_queued(jobs))) {
                int r;

                jobs_set_state(job, CTL_JOB_CONNECTING);
                job->rate = 0;
                jobs_notify(job);
                r = engine_send(d->engine, job);
                if (r == -EBUSY && !job->sender && job->state == CTL_JOB_CONNECTING &&
                    jobs->n_active > 1) {
                        /* The engine's send pool is full: wait for a running job to end. */
                        jobs_requeue(job);
                        break;
                }
                if (r >= 0) {
                        log_info("job %" PRIu64 ": sending %s (%" PRIu64 " bytes) to %s", job->id,
                                 job->name, job->size, job->peer);
                } else if (!ctl_job_state_final(job->state)) {
                        char text[CTL_TEXT_MAX + 1];

                        snprintf(text, sizeof(text), "cannot start: %s", strerror(-r));
                        log_warning("job %" PRIu64 ": %s", job->id, text);
                        jobs_finish_job(job, CTL_JOB_FAILED, WIRE_E_INTERNAL, text);
                }
        }
}

static void jobs_rate_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct jobs *jobs = userdata;
        uint64_t now = clock_usec(CLOCK_MONOTONIC);

        for (struct job *job = jobs->head; job; job = job->next) {
                if (!job_is_active(job))
                        continue;
                if (job->rate_usec && now > job->rate_usec && job->bytes_done >= job->rate_bytes)
                        job->rate = (job->bytes_done - job->rate_bytes) * 1000000u /
                                    (now - job->rate_usec);
                else
                        job->rate = 0;
                job->rate_bytes = job->bytes_done;
                job->rate_usec = now;
        }
}

int jobs_new(struct jobs **out, struct daemon *d)
{
        static const struct timeval second = { 1, 0 };
        struct jobs *jobs;

        jobs = calloc(1, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        jobs->d = d;
        /* Ids stay unique across restarts, so logs of two runs never share one. */
        jobs->next_id = clock_usec(CLOCK_REALTIME);
        jobs->schedule_ev = event_new(d->base, -1, 0, jobs_schedule_cb, jobs);
        jobs->rate_ev = event_new(d->base, -1, EV_PERSIST, jobs_rate_cb, jobs);
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

int jobs_submit(struct jobs *jobs, const struct ctl_submit *s, int fd_in, uint64_t *id)
{
        _cleanup_(closep) int fd = fd_in;
        struct job_entry *e;
        struct job *job;
        struct stat st;
        bool v6;
        int n;

        if (jobs->stopping)
                return -ESHUTDOWN;
        if (jobs->n_queued >= JOBS_QUEUED_MAX)
                return -EBUSY;
        if (fstat(fd, &st) < 0)
                return -errno;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        job = &e->job;
        snprintf(job->host, sizeof(job->host), "%s", s->host);
        job->port = s->port ? s->port : jobs->d->cfg.port;
        v6 = strchr(job->host, ':');
        n = snprintf(job->peer, sizeof(job->peer), "%s%s%s:%u", v6 ? "[" : "", job->host,
                     v6 ? "]" : "", job->port);
        if (n < 0 || (size_t)n >= sizeof(job->peer)) {
                free(e);
                return -EINVAL;
        }
        job->jobs = jobs;
        job->id = jobs->next_id++;
        job->state = CTL_JOB_QUEUED;
        job->fd = TAKE_FD(fd);
        job->size = (uint64_t)st.st_size;
        job->uid = (uid_t)-1;
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
        if (job->state == CTL_JOB_QUEUED) {
                log_info("job %" PRIu64 ": cancelled while queued", job->id);
                jobs_finish_job(job, CTL_JOB_CANCELLED, WIRE_OK, "cancelled");
                return 0;
        }
        e = job_entry(job);
        if (!e->cancelling) {
                e->cancelling = true;
                log_info("job %" PRIu64 ": cancelling", job->id);
                engine_cancel(jobs->d->engine, job);
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
                if (job->state == CTL_JOB_QUEUED)
                        jobs_finish_job(job, CTL_JOB_CANCELLED, WIRE_OK, "daemon shutting down");
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
