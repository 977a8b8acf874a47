/*
 * The queries (ctl.h): STATUS, WATCH (a JOB on every change of the job,
 * and its progress every CONTROL_TICK_USEC while it runs), LIST (resumed
 * from a job id when the socket drains), CANCEL, STATS and SETTINGS. A
 * client sees only its own jobs unless it sees all
 * (control_socket_sees_all()); to it another user's job does not exist.
 * STATS is aggregate numbers only, SETTINGS the configuration's word to
 * clients.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>

#include "control-int.h"
#include "jobs.h"
#include "log.h"
#include "stats.h"

#define CONTROL_TICK_USEC       250000          /* progress for watchers */
#define CONTROL_LIST_END        UINT64_MAX      /* list cursor: only LIST_END left */

/* Live progress: a running job's numbers are asked of the engine here. */
static void conn_job_msg(struct ctl_msg *m, struct job *job)
{
        job_refresh(job);
        control_job_msg(m, job);
}

/* A progress update: dropped when the socket is full, the next one is newer. */
static void conn_update(struct control_conn *conn, struct job *job)
{
        struct ctl_msg m;
        int r;

        if (conn->listing)      /* keep a LIST's stream clean; the next tick comes soon */
                return;
        conn_job_msg(&m, job);
        r = ctl_send(conn->fd, &m, -1);
        if (r < 0 && r != -EAGAIN && r != -EWOULDBLOCK) {
                log_debug("control: closing client pid %d: %s", (int)conn->cred.pid, strerror(-r));
                conn_close(conn);
        }
}

static void control_watch_cb(struct job *job, void *userdata)
{
        struct control_conn *conn = userdata;
        struct ctl_msg m;

        if (!job_state_final(job->state)) {
                conn_update(conn, job);
                return;
        }
        /* The final message must arrive, or the client would wait forever. */
        conn_job_msg(&m, job);
        if (conn_reply(conn, &m) >= 0)
                conn_unwatch(conn);
}

void conn_unwatch(struct control_conn *conn)
{
        struct control *c = conn->c;

        if (!conn->watch)
                return;
        job_unwatch(conn->watch, control_watch_cb, conn);
        conn->watch = NULL;
        if (--c->n_watching == 0)
                evtimer_del(c->tick_ev);
        conn_idle_arm(conn);
}

void control_tick_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control *c = userdata;

        for (struct control_conn *conn = c->conns; conn; conn = conn->next) {
                struct job *job = conn->watch;

                if (conn->dead || !job)
                        continue;
                if (job_state_active(job->state))
                        conn_update(conn, job);
        }
}

/* Another user's job is "no such job" to a client that does not see all. */
static bool conn_may_see(const struct control_conn *conn, const struct job *job)
{
        return conn->sees_all || job->uid == conn->cred.uid;
}

static struct job *conn_find_job(struct control_conn *conn, uint64_t id)
{
        struct job *job = jobs_find(conn->c->env.jobs, id);

        return job && conn_may_see(conn, job) ? job : NULL;
}

void control_status(struct control_conn *conn, uint64_t id)
{
        struct job *job = conn_find_job(conn, id);
        struct ctl_msg m;

        if (!job) {
                conn_error(conn, -ENOENT, "no such job");
                return;
        }
        conn_job_msg(&m, job);
        conn_reply(conn, &m);
}

void control_watch(struct control_conn *conn, uint64_t id)
{
        struct control *c = conn->c;
        struct job *job = conn_find_job(conn, id);
        struct ctl_msg m;
        int r;

        if (!job) {
                conn_error(conn, -ENOENT, "no such job");
                return;
        }
        conn_unwatch(conn);
        conn_job_msg(&m, job);
        if (conn_reply(conn, &m) < 0 || job_state_final(job->state))
                return;
        r = job_watch(job, control_watch_cb, conn);
        if (r < 0) {
                conn_error(conn, r, "cannot watch: %s", strerror(-r));
                return;
        }
        conn->watch = job;
        if (c->n_watching++ == 0) {
                static const struct timeval tick = { 0, CONTROL_TICK_USEC };

                evtimer_add(c->tick_ev, &tick);
        }
}

void control_cancel(struct control_conn *conn, uint64_t id)
{
        struct control *c = conn->c;
        struct job *job = conn_find_job(conn, id);
        struct ctl_msg m = { .type = CTL_OK };
        uid_t uid = conn->cred.uid;
        int r;

        if (!job) {
                conn_error(conn, -ENOENT, "no such job");
                return;
        }
        /* admin_group sees every job, but only root cancels another user's. */
        if (uid != 0 && uid != geteuid() && uid != job->uid) {
                conn_error(conn, -EPERM, "job %" PRIu64 " belongs to another user", id);
                return;
        }
        r = jobs_cancel(c->env.jobs, id);
        if (r == -EALREADY) {
                conn_error(conn, r, "job already %s", ctl_job_state_str(control_job_state(job->state)));
                return;
        }
        if (r < 0) {
                conn_error(conn, r, "cannot cancel: %s", strerror(-r));
                return;
        }
        log_info("job %" PRIu64 ": cancel requested by uid %u pid %d", id, (unsigned int)uid,
                 (int)conn->cred.pid);
        conn_reply(conn, &m);
}

/* A dry run's items from items_next on, while the socket takes them:
 * true when every one went (or the connection is gone: @r). */
static bool control_items_more(struct control_conn *conn, int *r)
{
        struct job *job = conn_find_job(conn, conn->items_id);
        struct ctl_msg m;

        /* Gone meanwhile (retention): what went is all there is. */
        while (job && conn->items_next < job->n_items) {
                control_item_msg(&m, job, conn->items_next);
                *r = ctl_send(conn->fd, &m, -1);
                if (*r == -EAGAIN || *r == -EWOULDBLOCK)
                        return false;
                if (*r < 0)
                        return true;
                conn->items_next++;
        }
        *r = 0;
        return true;
}

void control_list_continue(struct control_conn *conn)
{
        struct ctl_msg m;
        int r;

        if (conn->items_id) {
                if (!control_items_more(conn, &r))
                        goto wait;
                if (r < 0) {
                        conn_close(conn);
                        return;
                }
                conn->items_id = 0;
                conn->list_next = CONTROL_LIST_END;
        }
        if (conn->list_next != CONTROL_LIST_END) {
                for (struct job *job = jobs_first(conn->c->env.jobs); job; job = job->next) {
                        if (job->id < conn->list_next || !conn_may_see(conn, job))
                                continue;
                        conn_job_msg(&m, job);
                        r = ctl_send(conn->fd, &m, -1);
                        if (r == -EAGAIN || r == -EWOULDBLOCK) {
                                conn->list_next = job->id;
                                goto wait;
                        }
                        if (r < 0) {
                                conn_close(conn);
                                return;
                        }
                }
                conn->list_next = CONTROL_LIST_END;
        }

        memset(&m, 0, sizeof(m));
        m.type = CTL_LIST_END;
        r = ctl_send(conn->fd, &m, -1);
        if (r == -EAGAIN || r == -EWOULDBLOCK)
                goto wait;
        if (r < 0) {
                conn_close(conn);
                return;
        }
        if (conn->listing) {
                conn->listing = false;
                event_del(conn->write_ev);
                event_add(conn->read_ev, NULL);
                conn_idle_arm(conn);
        }
        return;

wait:
        log_debug("control: LIST to pid %d paused: socket full", (int)conn->cred.pid);
        if (!conn->listing) {
                conn->listing = true;
                event_del(conn->read_ev);
                event_add(conn->write_ev, NULL);
        }
}

void control_items(struct control_conn *conn, uint64_t id)
{
        struct job *job = conn_find_job(conn, id);

        if (!job) {
                conn_error(conn, -ENOENT, "no such job");
                return;
        }
        if (!job->dry_run) {
                conn_error(conn, -EINVAL, "job %" PRIu64 " is no dry run: it has no items", id);
                return;
        }
        conn->items_id = id;
        conn->items_next = 0;
        control_list_continue(conn);
}

void control_list(struct control_conn *conn)
{
        conn->list_next = 0;
        control_list_continue(conn);
}

void control_stats(struct control_conn *conn)
{
        struct control *c = conn->c;
        struct stats_snapshot s;
        struct ctl_msg m;

        c->env.stats(c->env.owner, &s);
        if (control_stats_msg(&m, &s) < 0)
                log_debug("control: stats: some failure reasons left out");
        conn_reply(conn, &m);
}

void control_settings(struct control_conn *conn)
{
        struct ctl_msg m = { .type = CTL_SETTINGS_INFO };

        /* Checked by the configuration's parser, as the codec wants it. */
        snprintf(m.settings.peer_names, sizeof(m.settings.peer_names), "%s",
                 conn->c->env.cfg.peer_names);
        snprintf(m.settings.listen, sizeof(m.settings.listen), "%s", conn->c->env.cfg.listen);
        conn_reply(conn, &m);
}
