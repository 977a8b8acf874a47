#pragma once

/*
 * The Prometheus textfile: every cfg.interval seconds the daemon's
 * counters (env.stats) in the text format (stats_prometheus), written to
 * cfg.path atomically (a temporary file beside it, renamed over it), as
 * node_exporter's textfile collector expects. Empty path: nothing is
 * written. Metric names: rdmaxferd(8), METRICS.
 *
 * The file is written by a thread of its own, never by the loop: a path
 * on a stuck NFS mount would otherwise freeze every transfer. A write
 * that does not finish is logged after cfg.io_timeout; newer numbers wait
 * for it, replacing each other.
 */

#include <limits.h>
#include <stdint.h>

struct event_base;
struct metrics;
struct stats_snapshot;

/* The metrics' configuration, copied: metrics_reconfigure() replaces it whole. */
struct metrics_cfg {
        char path[PATH_MAX];            /* absolute; "": no file */
        uint32_t interval;              /* s between writes */
        uint32_t io_timeout;            /* s a write may take before it is logged as stuck */
};

struct metrics_env {
        struct event_base *base;
        /* The daemon's counters now, into @s. */
        void (*stats)(void *owner, struct stats_snapshot *s);
        void *owner;
        struct metrics_cfg cfg;         /* copied by metrics_new() */
};

/* Start writing if env->cfg asks for it (the first file at once). 0 or -errno. */
int metrics_new(struct metrics **out, const struct metrics_env *env);
/* A reload: @cfg replaces the metrics' copy; a new path or interval applies now. */
void metrics_reconfigure(struct metrics *m, const struct metrics_cfg *cfg);
/* Stop. A write in progress is left to finish on its own (and then to free
 * what it used), so this never waits on the file system. Safe on NULL. */
void metrics_free(struct metrics *m);
