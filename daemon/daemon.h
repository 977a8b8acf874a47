#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <event2/event.h>

#include "auth.h"
#include "config.h"
#include "fdcheck.h"

struct engine;
struct io;
struct jobs;
struct control;
struct metrics;
struct stats_snapshot;

struct daemon {
        struct event_base *base;
        const char *config_path;
        struct config cfg;
        struct auth_key key;            /* from cfg.key_file; len 0 when none */
        /* Disk I/O off the loop (io_uring and a worker pool), for the
         * engine and for control's checks of clients' descriptors. */
        struct io *io;
        struct fdchecks fdchecks;       /* control's, let go after the io drained */
        struct engine *engine;
        struct jobs *jobs;
        struct control *control;
        struct metrics *metrics;        /* the Prometheus textfile (cfg.metrics_file) */
        bool stopping;
        uint64_t start_usec;            /* CLOCK_MONOTONIC, for the uptime */
        uint64_t rate_in, rate_out;     /* bytes/s over the last second, as STATUS= says */
        char no_device[160];            /* why the RDMA device is gone; "" while it is there */
};

/*
 * Parse nothing, run everything: the daemon's whole life. Returns an exit
 * code. @config_path NULL means CONFIG_DEFAULT_PATH, where a missing file
 * means built-in defaults; a file named explicitly must exist.
 *
 * SIGHUP replaces d->cfg and d->key in place (runtime-safe keys only), so
 * other modules read them when they need them rather than caching copies.
 */
int daemon_run(const char *config_path);

/*
 * The counters since start (`xferctl stats`, the metrics file), the
 * engine's and the jobs' together: aggregate numbers only, no job, peer
 * or file.
 */
void daemon_stats(struct daemon *d, struct stats_snapshot *s);

enum daemon_config_source {
        DAEMON_CONFIG_FILE = 0,         /* read from the file */
        DAEMON_CONFIG_DEFAULTS = 1,     /* default path absent: built-in defaults */
};

/* The systemd credential that holds the key when key_file is unset. */
#define DAEMON_KEY_CREDENTIAL   "rdmaxfer.key"

/*
 * Defaults, then @path over them (NULL: the default path), then the key
 * file it names, or without one the credential DAEMON_KEY_CREDENTIAL in
 * $CREDENTIALS_DIRECTORY if it is there. Returns an enum daemon_config_source, or -errno with one
 * line in @err naming the file, line and key.
 */
int daemon_load_config(const char *path, struct config *cfg, struct auth_key *key,
                       char *err, size_t errlen);
