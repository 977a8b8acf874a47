#pragma once

/*
 * The Prometheus textfile: every cfg.metrics_interval seconds the daemon's
 * counters (daemon_stats) in the text format (stats_prometheus), written
 * to cfg.metrics_file atomically (a temporary file beside it, renamed
 * over it), as node_exporter's textfile collector expects. Empty
 * metrics_file: nothing is written. Metric names: rdmaxferd(8), METRICS.
 *
 * The file is written by a thread of its own, never by the loop: a path
 * on a stuck NFS mount would otherwise freeze every transfer. A write
 * that does not finish is logged after cfg.io_timeout; newer numbers wait
 * for it, replacing each other.
 */

struct daemon;
struct metrics;

/* Start writing if d->cfg asks for it (the first file at once). 0 or -errno. */
int metrics_new(struct metrics **out, struct daemon *d);
/* After a reload replaced d->cfg: a new path or interval applies now. */
void metrics_reconfigure(struct metrics *m);
/* Stop. A write in progress is left to finish on its own (and then to free
 * what it used), so this never waits on the file system. Safe on NULL. */
void metrics_free(struct metrics *m);
