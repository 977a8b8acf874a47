/*
 * An attempt at a job (jobs.h): handed to the engine from the queue, its
 * progress asked of it, its phases and its end heard from it (jobs_send_ops),
 * and after a transient failure the next attempt's wait (RETRYING): 1 s,
 * doubling, capped, with jitter, as long as attempts and retry_window allow.
 */

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>

#include "clock.h"
#include "engine.h"
#include "jobs-int.h"
#include "log.h"

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
        memcpy(job->rails, p.rails, sizeof(job->rails));
        /* A pull: its file's size once it comes back (job_spec's is 0). */
        if (job->pull && p.total)
                job->size = job->first_size = p.total;
        if (job->nodes)
                job_nodes_refresh(job, &p);
}

/* A non-final state change of a running job. */
static void job_set_state(struct job *job, enum job_state state)
{
        assert(!job_state_final(state));
        jobs_set_state(job, state);
        if (state == JOB_SENDING) {
                job_refresh(job);
                job->rate_bytes = job->bytes_done;
                job->rate_usec = clock_usec(CLOCK_MONOTONIC);
        }
        jobs_notify(job);
}

static void jobs_on_phase(void *owner, enum engine_phase phase)
{
        struct job *job = owner;
        enum job_state state;

        switch (phase) {
        case ENGINE_PHASE_SENDING:
                state = JOB_SENDING;
                break;
        case ENGINE_PHASE_VERIFYING:
                state = JOB_VERIFYING;
                break;
        default:
                log_err("job %" PRIu64 ": unknown engine phase %d", job->id, (int)phase);
                return;
        }
        /* The engine only moves forward, but a job must never move back. */
        if (!job_state_active(job->state) || !job_state_transition_ok(job->state, state)) {
                log_err("job %" PRIu64 ": engine phase %s while %s, ignored", job->id,
                        job_state_str(state), job_state_str(job->state));
                return;
        }
        job_set_state(job, state);
}

unsigned int job_attempts(const struct job *job)
{
        /* A receiver that was busy (max_transfers, max_transfers_per_host)
         * said nothing about the transfer: that attempt is given back. */
        return 1 + (job->retries >= 0 ? (unsigned int)job->retries : job->jobs->cfg.retry_max) + job->busy_waits;
}

uint64_t job_retry_in(const struct job *job)
{
        uint64_t now;

        if (job->state != JOB_RETRYING)
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
        uint64_t cap = (uint64_t)jobs->cfg.retry_delay_max * 1000000u;
        uint64_t d = cap;

        if (failed - 1 < 32)
                d = MIN(cap, (uint64_t)JOBS_RETRY_FIRST_USEC << (failed - 1));
        return d - jobs_random(jobs) % (d / 4 + 1);
}

/* RETRYING's delay is over: the next attempt queues like a new job would. */
static void jobs_retry_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct job *job = userdata;

        if (job->state != JOB_RETRYING)
                return;
        /* Each attempt starts from what was published (job_first_file;
         * resuming the rest is the receiver's to offer), shown so from
         * now on, not from the next refresh: a chain's first node has
         * those bytes, the relays' hops start over. */
        job->status = WIRE_OK;
        job->text[0] = '\0';
        job->usec = job->rate = 0;
        job->bytes_done = job_entry(job)->published;
        if (job->node_bytes) {
                memset(job->node_bytes, 0, job->nodes * sizeof(job->node_bytes[0]));
                job->node_bytes[0] = MIN(job->bytes_done, job->size);
        }
        log_debug("job %" PRIu64 ": attempt %u queued", job->id, job->attempt);
        jobs_set_state(job, JOB_QUEUED);
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
        end = job->first_fail_usec + (uint64_t)jobs->cfg.retry_window * 1000000u;
        /* A busy receiver is asked again, uncounted, unless the job may
         * not retry at all (retries 0). */
        if (job->attempt >= max && (status != WIRE_E_BUSY || max == 1 + job->busy_waits)) {
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
                         job->attempt, jobs->cfg.retry_window);
                return false;
        }
        if (!e->retry_ev)
                e->retry_ev = evtimer_new(jobs->base, jobs_retry_cb, job);
        if (!e->retry_ev) {
                snprintf(why, whylen, " (cannot wait to retry: out of memory)");
                return false;
        }
        /* The last attempt may start as the window closes, not after; a
         * busy receiver is asked again soon, within retry_window still. */
        delay = MIN(jobs_backoff_usec(jobs, status == WIRE_E_BUSY ? MIN(job->busy_waits + 1, 3u) :
                                                                    job->attempt - job->busy_waits),
                    end - now);
        tv = (struct timeval){ .tv_sec = (time_t)(delay / 1000000u),
                               .tv_usec = (suseconds_t)(delay % 1000000u) };
        if (evtimer_add(e->retry_ev, &tv) < 0) {
                snprintf(why, whylen, " (cannot wait to retry)");
                return false;
        }
        if (status == WIRE_E_BUSY)
                job->busy_waits++;
        log_notice("job %" PRIu64 ": attempt %u of %u failed: %s; retrying in %.1f s%s", job->id,
                   job->attempt, job_attempts(job), text, (double)delay / 1e6,
                   status == WIRE_E_BUSY ? " (a busy receiver does not count)" : "");
        job->attempt++;
        job->retry_usec = now + delay;
        job->status = (uint16_t)status;
        snprintf(job->text, sizeof(job->text), "%s", text);
        job->rate = 0;
        jobs_set_state(job, JOB_RETRYING);
        jobs_notify(job);
        /* Its place in max_transfers is free now. */
        jobs_kick(jobs);
        return true;
}

static void jobs_on_done(void *owner, const struct engine_result *r)
{
        struct job *job = owner;
        enum job_state state;
        unsigned int status = r->status;
        char text[JOB_TEXT_MAX + 1], why[96] = "";
        const char *reason = r->text ? r->text : "";

        /* The handle is gone once this returns: never ask it anything again. */
        job->xfer = NULL;
        /* A file its client could not hand over: that is the reason. */
        if (r->outcome == ENGINE_FAILED && job_entry(job)->feed_why[0]) {
                reason = job_entry(job)->feed_why;
                status = WIRE_E_INTERNAL;
        }
        if (job_state_final(job->state)) {
                log_err("job %" PRIu64 ": finished twice (%s, then outcome %d)", job->id,
                        job_state_str(job->state), (int)r->outcome);
                return;
        }
        switch (r->outcome) {
        case ENGINE_DONE:
                state = JOB_DONE;
                break;
        case ENGINE_FAILED:
                state = JOB_FAILED;
                break;
        case ENGINE_CANCELLED:
                state = JOB_CANCELLED;
                break;
        default:
                log_err("job %" PRIu64 ": unknown engine outcome %d", job->id, (int)r->outcome);
                state = JOB_FAILED;
                status = WIRE_E_INTERNAL;
                break;
        }
        /* A tree whose receiver had every entry kept: DEST's verdict was
         * the last, and what the ring holds counts as sent. */
        if (state == JOB_DONE && job->tree) {
                while (job_entry(job)->ahead_n > 0)
                        job_ring_pop(job, true);
                job->files_done = job->files;
        }
        job->bytes_done = job_entry(job)->base_bytes + r->bytes;
        /* A pull done: what came back is the file (it landed). */
        if (job->pull && state == JOB_DONE)
                job->bytes_done = job->size;
        job->files_skipped = job_entry(job)->base_skipped + r->skipped;
        job->deleted = r->deleted;
        job->usec = r->usec;
        /* A chain's nodes keep the bytes they had, the peer's the result's. */
        if (job->nodes)
                job->node_bytes[0] = MIN(job->bytes_done, job->size);
        if (state == JOB_DONE && job->nodes)
                job_chain_done(job, r);
        /* Not with a file its client could not hand over: no attempt would get it. */
        if (r->outcome == ENGINE_FAILED && r->transient && !job_entry(job)->feed_why[0] &&
            job_retry(job, status, reason, why, sizeof(why)))
                return;
        if (state == JOB_FAILED && !why[0] && job->attempt > 1)
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

static void jobs_fail_start(struct job *job, const char *why)
{
        char text[JOB_TEXT_MAX + 1];

        snprintf(text, sizeof(text), "cannot start: %s", why);
        log_warning("job %" PRIu64 ": %s", job->id, text);
        job_finish(job, JOB_FAILED, WIRE_E_INTERNAL, text);
}

static unsigned int job_engine_sync(enum job_sync sync)
{
        switch (sync) {
        case JOB_SYNC_NONE:
                return ENGINE_SYNC_NONE;
        case JOB_SYNC_SKIP_EXISTING:
                return ENGINE_SYNC_SKIP_EXISTING;
        case JOB_SYNC_SIZE:
                return ENGINE_SYNC_SIZE;
        case JOB_SYNC_DIGEST:
                return ENGINE_SYNC_DIGEST;
        }
        return ENGINE_SYNC_NONE;        /* jobs_spec_check() took none other */
}

/* A dry run's verdict on an entry: kept for the job's client (ctl ITEM). */
static void jobs_on_item(void *owner, const struct engine_item *it)
{
        static const enum job_verdict verdicts[] = {
                [ENGINE_WOULD_CREATE] = JOB_WOULD_CREATE,   [ENGINE_WOULD_REPLACE] = JOB_WOULD_REPLACE,
                [ENGINE_WOULD_KEEP] = JOB_WOULD_KEEP,       [ENGINE_WOULD_MERGE] = JOB_WOULD_MERGE,
                [ENGINE_WOULD_DELETE] = JOB_WOULD_DELETE,
        };
        static const enum job_item_kind kinds[] = {
                [ENGINE_ITEM_FILE] = JOB_ITEM_FILE, [ENGINE_ITEM_DIR] = JOB_ITEM_DIR,
                [ENGINE_ITEM_LINK] = JOB_ITEM_LINK, [ENGINE_ITEM_HARD] = JOB_ITEM_HARD,
                [ENGINE_ITEM_OTHER] = JOB_ITEM_OTHER,
        };
        struct job *job = owner;
        struct job_item *i;

        if (job->n_items >= (uint64_t)job->files + JOB_ITEMS_DELETED_MAX) {
                job->items_lost++;
                return;
        }
        if (job->n_items == job->cap_items) {
                uint32_t cap = job->cap_items ? 2 * job->cap_items : 64;
                struct job_item *v = realloc(job->items, cap * sizeof(*v));

                if (!v) {
                        job->items_lost++;
                        return;
                }
                job->items = v;
                job->cap_items = cap;
        }
        i = &job->items[job->n_items];
        *i = (struct job_item){ .verdict = verdicts[it->verdict], .kind = kinds[it->kind], .size = it->size };
        memcpy(i->changes, it->changes, sizeof(i->changes));
        i->name = strdup(it->name);
        if (!i->name) {
                job->items_lost++;
                return;
        }
        job->n_items++;
}

static const struct engine_send_ops jobs_send_ops = {
        .item = jobs_on_item,
        .phase = jobs_on_phase,
        .next = jobs_on_next,
        .file_done = jobs_on_file_done,
        .done = jobs_on_done,
};

/*
 * Hand one QUEUED job to the engine. The engine decides admission before
 * anything changes, so the job leaves QUEUED only forward: to CONNECTING
 * when started, to FAILED when it cannot be. Returns ENGINE_SEND_FULL when
 * the job stays queued (start no more now: the pool is full or the device
 * is gone), else 0.
 */
int jobs_start(struct jobs *jobs, struct job *job)
{
        struct job_entry *e = job_entry(job);
        struct engine_send *xfer = NULL;
        struct engine_send_req req;
        const struct job_file *first;
        _cleanup_(freep) struct wire_landing *land = NULL;
        int r;

        first = job_first_file(job);
        /* Not QUEUED without one (jobs_next_queued). */
        assert(first);
        /* A landing's attributes are its first file's: a retry's, a
         * later file's (wire.h, Attributes; engine_send copies it). */
        if (e->land && (e->land->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS)) && !job->tree && job->files_done > 0) {
                land = malloc(sizeof(*land));
                if (!land) {
                        jobs_fail_start(job, "out of memory");
                        return 0;
                }
                *land = *e->land;
                land->xattrs_len = first->xattrs_len;
                if (first->xattrs_len)
                        memcpy(land->xattrs, first->xattrs, first->xattrs_len);
        }
        req = (struct engine_send_req){
                .id = job->id,
                .fd = first->fd,
                .size = first->size,
                .name = first->name,
                .files = job->tree ? job->files : job->files - job->files_done,
                .job_bytes = job->tree ? job->size : job->size - e->published,
                .tree = job->tree,
                /* A landing's retry may start from a later file: its own mode. */
                .mode = job->tree || job->files_done == 0 ? job->mode : first->mode,
                .mtime_ns = job->mtime_ns,
                /* A landing's tree is never kept for a retry (recv-land-tree.c). */
                .tree_token = job->tree && !e->land ? e->token : NULL,
                .dst = (const struct sockaddr *)&e->dst,
                .dst_len = e->dst_len,
                .peer = job->peer,
                .attempt = job->attempt,
                .bwlimit = job->bwlimit,
                .sync = job_engine_sync(job->sync),
                .no_sparse = job->no_sparse,
                .delete = job->delete,
                .rules = e->rules,
                .rules_len = e->rules ? strlen(e->rules) : 0,
                .dry_run = job->dry_run,
                .route = e->route_hops ? e->route : NULL,
                .route_hops = e->route_hops,
                .land = land ? land : e->land,
        };
        /* A dry run's verdicts are this attempt's. */
        job_items_clear(job);
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
        job_set_state(job, JOB_CONNECTING);
        return 0;
}

