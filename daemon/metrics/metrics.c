/*
 * The Prometheus textfile (metrics.h): a timer on the loop renders the
 * daemon's counters (a snapshot it asks for) and posts them to textfile.c's writer thread; what the writer
 * reports back is logged from here, once per change, so a path that keeps
 * failing is one warning, not one per interval.
 */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "stats.h"
#include "textfile.h"

struct metrics {
        struct metrics_env env;         /* env.cfg: the metrics' own copy */
        struct event *tick_ev;
        struct textfile *writer;
        unsigned int interval;          /* the timer's, 0: stopped */
        char path[PATH_MAX];            /* what the last post was for */
        int said_err;                   /* the last write error logged; 0: none */
        bool said_stuck;
        char text[STATS_TEXT_MAX];
};

static void metrics_check_writer(struct metrics *m)
{
        const char *what;
        uint64_t busy;
        unsigned int limit = m->env.cfg.io_timeout;
        int r = textfile_state(m->writer, &what, &busy);

        if (busy / 1000000 >= limit) {
                if (!m->said_stuck)
                        log_warning("metrics: writing %s has not finished for %" PRIu64 " s; "
                                    "newer numbers wait for it", m->path, busy / 1000000);
                m->said_stuck = true;
        } else if (m->said_stuck && !busy) {
                log_notice("metrics: writing %s finished", m->path);
                m->said_stuck = false;
        }
        if (r == m->said_err)
                return;
        if (r < 0)
                log_warning("metrics: cannot write %s: %s: %s%s", m->path, what, strerror(-r),
                            r == -EACCES || r == -EROFS || r == -EPERM ?
                            " (the unit may write only under ReadWritePaths=; see rdmaxferd(8), METRICS)" : "");
        else
                log_notice("metrics: writing %s again", m->path);
        m->said_err = r;
}

static void metrics_tick_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct metrics *m = userdata;
        const char *path = m->env.cfg.path;
        struct stats_snapshot s;
        int len, r;

        if (!path[0])
                return;
        if (strcmp(path, m->path) != 0) {
                const char *w;
                uint64_t busy;

                /* What the writer says now is about the old path: not news. */
                snprintf(m->path, sizeof(m->path), "%s", path);
                m->said_err = textfile_state(m->writer, &w, &busy);
                m->said_stuck = false;
        }
        metrics_check_writer(m);

        m->env.stats(m->env.owner, &s);
        len = stats_prometheus(m->text, sizeof(m->text), &s);
        if (len < 0) {
                log_err("metrics: the text does not fit %zu bytes", sizeof(m->text));
                return;
        }
        r = textfile_post(m->writer, m->path, m->text, (size_t)len);
        if (r < 0 && r != m->said_err) {
                log_warning("metrics: cannot hand %s to its writer: %s", m->path, strerror(-r));
                m->said_err = r;
        }
}

/* The timer as m->env.cfg asks: stopped, or every interval, the first file now. */
static void metrics_apply(struct metrics *m)
{
        const struct metrics_cfg *cfg = &m->env.cfg;
        unsigned int interval = cfg->path[0] ? cfg->interval : 0;

        if (interval == 0) {
                if (m->interval)
                        log_info("metrics: no longer writing %s", m->path);
                event_del(m->tick_ev);
                m->interval = 0;
                return;
        }
        if (interval != m->interval || strcmp(cfg->path, m->path) != 0) {
                struct timeval tv = { .tv_sec = interval };

                log_info("metrics: writing %s every %u s", cfg->path, interval);
                event_add(m->tick_ev, &tv);
                m->interval = interval;
                /* The first file now, not an interval from now. */
                event_active(m->tick_ev, EV_TIMEOUT, 0);
        }
}

void metrics_reconfigure(struct metrics *m, const struct metrics_cfg *cfg)
{
        if (!m)
                return;
        m->env.cfg = *cfg;
        metrics_apply(m);
}

int metrics_new(struct metrics **out, const struct metrics_env *env)
{
        struct metrics *m = calloc(1, sizeof(*m));
        int r;

        if (!m)
                return -ENOMEM;
        m->env = *env;
        r = textfile_new(&m->writer);
        if (r < 0) {
                free(m);
                return r;
        }
        m->tick_ev = event_new(env->base, -1, EV_PERSIST, metrics_tick_cb, m);
        if (!m->tick_ev) {
                metrics_free(m);
                return -ENOMEM;
        }
        metrics_apply(m);
        *out = m;
        return 0;
}

void metrics_free(struct metrics *m)
{
        if (!m)
                return;
        if (m->tick_ev)
                event_free(m->tick_ev);
        textfile_free(m->writer);
        free(m);
}
