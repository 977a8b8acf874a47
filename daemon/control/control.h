#pragma once

/*
 * The local control socket (AF_UNIX SOCK_SEQPACKET, see ctl.h): taken from
 * rdmaxferd.socket when socket-activated, else bound at the given path
 * with mode 0660. Serves xferctl: SUBMIT, STATUS, WATCH, LIST, CANCEL,
 * STATS (aggregate counters, for every user of the socket), SETTINGS (what
 * the configuration says to clients, for every user too). It speaks the
 * control protocol and the job table's model (jobs.h), translating at
 * this edge; the daemon's counters it asks for through env.stats.
 *
 * Per uid: cfg.max_clients_per_user connections (then a refusal that says
 * so), the job table's queue limits, cfg.client_idle_timeout; each user
 * sees only its own jobs unless root or in cfg.admin_group.
 */

#include <stdint.h>

#include "config.h"

struct control;
struct event_base;
struct fdchecks;
struct io;
struct jobs;
struct stats_snapshot;

#define CONTROL_CONN_MAX        64

/* Control's configuration, copied: control_reconfigure() replaces it whole. */
struct control_cfg {
        uint32_t max_clients_per_user;  /* connections per uid */
        uint32_t client_idle_timeout;   /* s without a request before a client is closed */
        uint32_t io_timeout;            /* s a client's file may take to answer a stat */
        char admin_group[CONFIG_GROUP_MAX + 1]; /* group name or gid whose members see every job; "" none */
        char peer_names[PEERNAME_PATTERN_MAX + 1];      /* told to clients (SETTINGS); "" none */
        char listen[64];                /* listen_addr, told to clients (SETTINGS); "" any */
};

/* What control works with; the daemon owns each of them, and they outlive control. */
struct control_env {
        struct event_base *base;
        /* The daemon's disk I/O, on base: the checks of clients'
         * descriptors (fdchecks, through it) go out in batches. */
        struct io *io;
        struct fdchecks *fdchecks;
        struct jobs *jobs;
        /* STATS: the daemon's counters now, into @s. */
        void (*stats)(void *owner, struct stats_snapshot *s);
        void *owner;
        const char *socket_path;        /* read during control_new() */
        struct control_cfg cfg;         /* copied by control_new() */
};

/* Listen and start serving on env->base; control feeds the job table its
 * jobs' files (jobs_set_feeder()). 0 or -errno (cause logged). */
int control_new(struct control **out, const struct control_env *env);
/* Closes every client connection (their jobs go on) and the socket. */
void control_free(struct control *c);
/* Shutdown: SUBMIT is answered -ESHUTDOWN; queries and watches still work. */
void control_stop_accepting(struct control *c);
/* A reload: @cfg replaces control's copy; admin_group is looked up again
 * (for new connections), the limits and the timeout apply at once. */
void control_reconfigure(struct control *c, const struct control_cfg *cfg);
