/*
 * The daemon's life: configuration, the event loop and its signals and
 * timers, start-up order (io, engine, jobs, control, metrics, then
 * READY=1), SIGHUP reload and the two-step SIGTERM stop. It composes the
 * layers: each gets what it works with and its own copy of the
 * configuration, and the daemon's counters through a query of its own
 * (daemon_stats).
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#include "clock.h"
#include "config-build.h"
#include "control.h"
#include "daemon.h"
#include "daemon-config.h"
#include "engine.h"
#include "fdcheck.h"
#include "io.h"
#include "jobs.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "metrics.h"
#include "msgid.h"
#include "stats.h"

enum daemon_phase {
        DAEMON_RUNNING,
        DAEMON_STOPPING,        /* first SIGTERM: waiting for engine_stop()'s callback */
        DAEMON_STOPPED,         /* the engine is idle: leave the loop, exit 0 */
        DAEMON_ABORTED,         /* second signal while stopping: leave now, exit 1 */
};

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
        uint64_t start_time_usec;       /* CLOCK_REALTIME, the same moment (the metrics' start time) */
        uint64_t rate_in, rate_out;     /* bytes/s over the last second, as STATUS= says */
        char no_device[160];            /* why the RDMA device is gone; "" while it is there */
};

struct daemon_ctx {
        struct daemon d;
        enum daemon_phase phase;
        uint32_t max_transfers_start;   /* the engine sized its send pool for this many */
        struct event *sigterm_ev, *sigint_ev, *sighup_ev;
        struct event *status_ev, *watchdog_ev;
        char status[256];       /* last STATUS= sent, to skip repeats */
};

static void fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
        if (bytes && bytes % (1ull << 30) == 0)
                snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
        else if (bytes && bytes % (1ull << 20) == 0)
                snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
        else if (bytes && bytes % (1ull << 10) == 0)
                snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
        else
                snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}

static void fmt_listen(char *buf, size_t len, const struct config *cfg)
{
        if (!cfg->listen_addr[0])
                snprintf(buf, len, "*:%u", cfg->port);
        else if (strchr(cfg->listen_addr, ':'))
                snprintf(buf, len, "[%s]:%u", cfg->listen_addr, cfg->port);
        else
                snprintf(buf, len, "%s:%u", cfg->listen_addr, cfg->port);
}

/* "idle", or "2 incoming (104.2 MB/s), 1 outgoing (51.0 MB/s), 3 queued, 1 retrying"
 * (10^6 bytes/s). */
static void daemon_status_text(struct daemon *d, char *buf, size_t len)
{
        unsigned int in = d->engine ? engine_recv_active(d->engine) : 0, out = 0, queued = 0;
        unsigned int retrying = 0;
        uint64_t in_rate = d->engine ? engine_recv_rate(d->engine) : 0, out_rate = 0;
        size_t o = 0;

        if (d->jobs) {
                jobs_counts(d->jobs, &out, &queued);
                retrying = jobs_retrying(d->jobs);
                out_rate = jobs_rate_total(d->jobs);
        }
        /* engine_recv_rate() measures since its previous call: keep what it said for `stats`. */
        d->rate_in = in_rate;
        d->rate_out = out_rate;
        buf[0] = '\0';
        if (d->no_device[0] && !d->stopping)
                o += (size_t)snprintf(buf + o, len - o, "no RDMA device (%s), waiting for it%s",
                                      d->no_device, in || out || queued || retrying ? "; " : "");
        else if (d->stopping)
                o += (size_t)snprintf(buf + o, len - o, "stopping%s", in || out || queued || retrying ? ": " : "");
        else if (!in && !out && !queued && !retrying)
                o += (size_t)snprintf(buf + o, len - o, "idle");
        o = MIN(o, len);
        if (in && o < len)
                o += (size_t)snprintf(buf + o, len - o, "%u incoming (%.1f MB/s)", in,
                                      (double)in_rate / 1e6);
        if (out && o < len)
                o += (size_t)snprintf(buf + o, len - o, "%s%u outgoing (%.1f MB/s)",
                                      in ? ", " : "", out, (double)out_rate / 1e6);
        if (queued && o < len)
                o += (size_t)snprintf(buf + o, len - o, "%s%u queued", in || out ? ", " : "", queued);
        if (retrying && o < len)
                snprintf(buf + o, len - o, "%s%u retrying", in || out || queued ? ", " : "", retrying);
}

/*
 * The counters since start (`xferctl stats`, the metrics file), the
 * engine's and the jobs' together: aggregate numbers only, no job, peer
 * or file. Control and metrics ask through their env.stats.
 */
static void daemon_stats(void *owner, struct stats_snapshot *s)
{
        struct daemon *d = owner;
        struct engine_stats es = { 0 };
        unsigned int active = 0, queued = 0;

        memset(s, 0, sizeof(*s));
        if (d->engine)
                engine_stats(d->engine, &es);
        if (d->jobs) {
                jobs_counts(d->jobs, &active, &queued);
                queued = jobs_waiting(d->jobs);
                jobs_tally(d->jobs, &s->dir[STATS_DIR_SEND].tally);
        }
        s->uptime_usec = clock_usec(CLOCK_MONOTONIC) - d->start_usec;
        s->start_time_usec = d->start_time_usec;
        s->version = RDMAXFER_VERSION;
        s->dir[STATS_DIR_RECV].tally = es.recv;
        s->dir[STATS_DIR_RECV].wire_bytes = es.recv_wire_bytes;
        s->dir[STATS_DIR_SEND].wire_bytes = es.send_wire_bytes;
        s->dir[STATS_DIR_RECV].rate = d->rate_in;
        s->dir[STATS_DIR_RECV].active = es.recv_active;
        s->dir[STATS_DIR_SEND].rate = d->rate_out;
        s->dir[STATS_DIR_SEND].active = active;
        s->queued = queued;
        s->ring_held = es.ring_held;
        s->ring_slots = es.ring_slots;
        s->pool_held = es.pool_held;
        s->pool_slots = es.pool_slots;
        s->nrails = MIN(es.nrails, (unsigned int)ARRAY_SIZE(s->rail));
        for (unsigned int i = 0; i < s->nrails; i++) {
                snprintf(s->rail[i].name, sizeof(s->rail[i].name), "%s", es.rail[i].name);
                s->rail[i].wire_bytes[STATS_DIR_RECV] = es.rail[i].bytes_in;
                s->rail[i].wire_bytes[STATS_DIR_SEND] = es.rail[i].bytes_out;
                s->rail[i].up = es.rail[i].up;
        }
}

static void daemon_status_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct daemon_ctx *x = userdata;
        char text[sizeof(x->status)];

        daemon_status_text(&x->d, text, sizeof(text));
        if (strcmp(text, x->status) == 0)
                return;
        snprintf(x->status, sizeof(x->status), "%s", text);
        sd_notifyf(0, "STATUS=%s", text);
}

/* The engine lost its device or found it again; it logged the details. */
static void daemon_on_device(void *owner, bool up, const char *text)
{
        struct daemon_ctx *x = owner;

        if (up) {
                x->d.no_device[0] = '\0';
                /* Jobs that waited for the device go out now. */
                if (x->d.jobs)
                        jobs_schedule(x->d.jobs);
        } else {
                snprintf(x->d.no_device, sizeof(x->d.no_device), "%s", text);
        }
        daemon_status_cb(-1, 0, x);
}

static const struct engine_ops daemon_engine_ops = {
        .device = daemon_on_device,
};

static void daemon_watchdog_cb(evutil_socket_t fd, short what, void *userdata)
{
        sd_notify(0, "WATCHDOG=1");
}

/* Start-up failed: say why in the log and in `systemctl status`. */
static void daemon_fail(const char *fmt, ...) _printf_(1, 2);

static void daemon_fail(const char *fmt, ...)
{
        char text[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        log_err("%s", text);
        sd_notifyf(0, "STATUS=failed: %s", text);
}

static void daemon_stopped(void *userdata)
{
        struct daemon_ctx *x = userdata;
        struct daemon *d = &x->d;

        /* Free nothing here: this runs inside the engine. Leave the loop, free after. */
        if (x->phase == DAEMON_STOPPING)
                x->phase = DAEMON_STOPPED;
        event_base_loopbreak(d->base);
}

static void daemon_signal_stop_cb(evutil_socket_t sig, short what, void *userdata)
{
        struct daemon_ctx *x = userdata;
        struct daemon *d = &x->d;

        if (x->phase != DAEMON_RUNNING) {
                log_warning("%s again while stopping: exiting now", sigabbrev_np((int)sig));
                x->phase = DAEMON_ABORTED;
                event_base_loopbreak(d->base);
                return;
        }
        log_notice("%s: stopping (a second one exits at once)", sigabbrev_np((int)sig));
        x->phase = DAEMON_STOPPING;
        d->stopping = true;
        sd_notify(0, "STOPPING=1\nSTATUS=stopping");
        snprintf(x->status, sizeof(x->status), "stopping");
        control_stop_accepting(d->control);
        jobs_stop(d->jobs);
        engine_stop(d->engine, daemon_stopped, x);
}

/* Each layer takes its copy of what it uses of d->cfg, replacing its own
 * whole: none reads the daemon's while it is rewritten. */
static void daemon_reconfigure(struct daemon *d)
{
        struct jobs_cfg jobs_cfg;
        struct control_cfg control_cfg;
        struct metrics_cfg metrics_cfg;

        engine_reconfigure(d->engine, &d->cfg);
        daemon_jobs_cfg(&d->cfg, &jobs_cfg);
        jobs_reconfigure(d->jobs, &jobs_cfg);
        daemon_control_cfg(&d->cfg, &control_cfg);
        control_reconfigure(d->control, &control_cfg);
        daemon_metrics_cfg(&d->cfg, &metrics_cfg);
        metrics_reconfigure(d->metrics, &metrics_cfg);
}

static bool acl_equal(const struct acl *a, const struct acl *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->entries[i].family != b->entries[i].family ||
                    a->entries[i].prefix != b->entries[i].prefix ||
                    memcmp(a->entries[i].addr, b->entries[i].addr, sizeof(a->entries[i].addr)))
                        return false;
        return true;
}

static void changed_add(char *buf, size_t len, const char *key)
{
        size_t o = strlen(buf);

        snprintf(buf + o, len - o, "%s%s", o ? ", " : "", key);
}

/*
 * Keys that shape what was set up at start (sockets, the registered ring,
 * the incoming directory) keep their running values; the rest apply now.
 */
static void daemon_reload(struct daemon_ctx *x)
{
        struct daemon *d = &x->d;
        struct config cfg;
        struct auth_key key = { 0 };
        char err[1024], applied[512] = "", restart[256] = "";
        int r;

        sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, clock_usec(CLOCK_MONOTONIC));
        r = daemon_load_config(d->config_path, &cfg, &key, err, sizeof(err));
        if (r < 0) {
                log_err("reload: %s; keeping the running configuration", err);
                goto out;
        }

#define KEEP_STR(f, name) \
        if (strcmp(cfg.f, d->cfg.f)) { \
                changed_add(restart, sizeof(restart), name); \
                memcpy(cfg.f, d->cfg.f, sizeof(cfg.f)); \
        }
#define KEEP_NUM(f, name) \
        if (cfg.f != d->cfg.f) { \
                changed_add(restart, sizeof(restart), name); \
                cfg.f = d->cfg.f; \
        }
        if (cfg.nrails != d->cfg.nrails || memcmp(cfg.rails, d->cfg.rails, sizeof(cfg.rails))) {
                changed_add(restart, sizeof(restart), "listen");
                memcpy(cfg.rails, d->cfg.rails, sizeof(cfg.rails));
                memcpy(cfg.listen_addr, d->cfg.listen_addr, sizeof(cfg.listen_addr));
                cfg.nrails = d->cfg.nrails;
        }
        KEEP_NUM(port, "port");
        KEEP_NUM(slot_size, "slot_size");
        KEEP_NUM(slot_count, "slot_count");
        KEEP_NUM(send_slots, "send_slots");
        KEEP_STR(control_socket, "control_socket");
        KEEP_STR(incoming_dir, "incoming_dir");
        KEEP_STR(partial_dir, "partial_dir");
#undef KEEP_STR
#undef KEEP_NUM

        /*
         * max_transfers * 2 <= slot_count must hold for the ring actually
         * registered, and the send pool was sized for the start-up value:
         * lowering applies now, raising past that needs a restart.
         */
        if (cfg.max_transfers > d->cfg.slot_count / 2) {
                log_warning("reload: max_transfers = %u needs slot_count >= %u, the running ring has %u; keeping %u",
                            cfg.max_transfers, cfg.max_transfers * 2, d->cfg.slot_count,
                            d->cfg.max_transfers);
                cfg.max_transfers = d->cfg.max_transfers;
        } else if (cfg.max_transfers > x->max_transfers_start) {
                log_warning("reload: max_transfers = %u exceeds the %u the send buffers were sized for at start; using %u until a restart",
                            cfg.max_transfers, x->max_transfers_start, x->max_transfers_start);
                cfg.max_transfers = x->max_transfers_start;
        }

        if (cfg.log_level != d->cfg.log_level)
                changed_add(applied, sizeof(applied), "log_level");
        if (!acl_equal(&cfg.allow_peers, &d->cfg.allow_peers))
                changed_add(applied, sizeof(applied), "allow_peers");
        if (cfg.relay_peers_set != d->cfg.relay_peers_set || !acl_equal(&cfg.relay_peers, &d->cfg.relay_peers))
                changed_add(applied, sizeof(applied), "relay_peers");
        if (cfg.overwrite != d->cfg.overwrite)
                changed_add(applied, sizeof(applied), "overwrite");
        if (cfg.relay != d->cfg.relay)
                changed_add(applied, sizeof(applied), "relay");
        if (cfg.tree_symlinks != d->cfg.tree_symlinks)
                changed_add(applied, sizeof(applied), "tree_symlinks");
        if (cfg.tree_delete != d->cfg.tree_delete)
                changed_add(applied, sizeof(applied), "tree_delete");
        if (cfg.names != d->cfg.names)
                changed_add(applied, sizeof(applied), "names");
        if (cfg.max_file_size != d->cfg.max_file_size)
                changed_add(applied, sizeof(applied), "max_file_size");
        if (cfg.max_job_files != d->cfg.max_job_files)
                changed_add(applied, sizeof(applied), "max_job_files");
        if (cfg.max_job_bytes != d->cfg.max_job_bytes)
                changed_add(applied, sizeof(applied), "max_job_bytes");
        if (strcmp(cfg.key_file, d->cfg.key_file) || key.len != d->key.len ||
            memcmp(key.bytes, d->key.bytes, key.len))
                changed_add(applied, sizeof(applied), "key_file");
        if (cfg.max_transfers != d->cfg.max_transfers)
                changed_add(applied, sizeof(applied), "max_transfers");
        if (cfg.max_transfers_per_host != d->cfg.max_transfers_per_host)
                changed_add(applied, sizeof(applied), "max_transfers_per_host");
        if (cfg.lanes != d->cfg.lanes)
                changed_add(applied, sizeof(applied), "lanes");
        if (cfg.peer_timeout != d->cfg.peer_timeout)
                changed_add(applied, sizeof(applied), "peer_timeout");
        if (cfg.min_rate != d->cfg.min_rate)
                changed_add(applied, sizeof(applied), "min_rate");
        if (cfg.io_timeout != d->cfg.io_timeout)
                changed_add(applied, sizeof(applied), "io_timeout");
        if (cfg.rate_limit != d->cfg.rate_limit)
                changed_add(applied, sizeof(applied), "rate_limit");
        /* New outgoing connections; the listener keeps its own until a restart. */
        if (cfg.tos != d->cfg.tos)
                changed_add(applied, sizeof(applied), "tos");
        if (cfg.min_free != d->cfg.min_free)
                changed_add(applied, sizeof(applied), "min_free");
        if (cfg.max_clients_per_user != d->cfg.max_clients_per_user)
                changed_add(applied, sizeof(applied), "max_clients_per_user");
        if (cfg.max_queued_per_user != d->cfg.max_queued_per_user)
                changed_add(applied, sizeof(applied), "max_queued_per_user");
        if (cfg.client_idle_timeout != d->cfg.client_idle_timeout)
                changed_add(applied, sizeof(applied), "client_idle_timeout");
        if (strcmp(cfg.admin_group, d->cfg.admin_group))
                changed_add(applied, sizeof(applied), "admin_group");
        if (strcmp(cfg.peer_names, d->cfg.peer_names))
                changed_add(applied, sizeof(applied), "peer_names");
        if (cfg.retry_max != d->cfg.retry_max)
                changed_add(applied, sizeof(applied), "retry_max");
        if (cfg.retry_window != d->cfg.retry_window)
                changed_add(applied, sizeof(applied), "retry_window");
        if (cfg.retry_delay_max != d->cfg.retry_delay_max)
                changed_add(applied, sizeof(applied), "retry_delay_max");
        if (strcmp(cfg.metrics_file, d->cfg.metrics_file))
                changed_add(applied, sizeof(applied), "metrics_file");
        if (cfg.metrics_interval != d->cfg.metrics_interval)
                changed_add(applied, sizeof(applied), "metrics_interval");

        config_deinit(&d->cfg);
        d->cfg = cfg;
        auth_key_clear(&d->key);
        d->key = key;
        log_set_level(d->cfg.log_level);
        daemon_reconfigure(d);

        log_notice("reloaded %s%s: %s%s", d->config_path,
                   r == DAEMON_CONFIG_DEFAULTS ? " (absent: built-in defaults)" : "",
                   applied[0] ? "applied " : "no runtime changes", applied);
        if (restart[0])
                log_warning("reload: %s changed; takes effect after a restart", restart);
out:
        auth_key_clear(&key);
        sd_notify(0, "READY=1");
}

static void daemon_signal_hup_cb(evutil_socket_t sig, short what, void *userdata)
{
        struct daemon_ctx *x = userdata;

        if (x->phase != DAEMON_RUNNING) {
                log_notice("SIGHUP while stopping: ignored");
                return;
        }
        daemon_reload(x);
}

static void daemon_log_started(const struct daemon *d)
{
        char listen[96], slot[32], ring[32], msg[256];

        fmt_listen(listen, sizeof(listen), &d->cfg);
        fmt_bytes(slot, sizeof(slot), d->cfg.slot_size);
        fmt_bytes(ring, sizeof(ring), (uint64_t)d->cfg.slot_size * d->cfg.slot_count);
        snprintf(msg, sizeof(msg), "rdmaxferd %s listening on %s, ring %u x %s (%s) registered",
                 RDMAXFER_VERSION, listen, d->cfg.slot_count, slot, ring);
        sd_journal_send("MESSAGE=%s", msg,
                        "MESSAGE_ID=" MSGID_STARTED,
                        "PRIORITY=%d", LOG_NOTICE,
                        "SYSLOG_IDENTIFIER=%s", program_invocation_short_name,
                        "RDMAXFER_LISTEN=%s", listen,
                        "RDMAXFER_SLOT_SIZE=%u", d->cfg.slot_size,
                        "RDMAXFER_SLOT_COUNT=%u", d->cfg.slot_count,
                        NULL);
        if (!log_journal_stream())
                log_notice("%s", msg);
}

static void daemon_log_stopped(int code)
{
        const char *msg = code == 0 ? "rdmaxferd stopped" :
                          "rdmaxferd stopped at once on a second signal; unfinished transfers were aborted";

        sd_journal_send("MESSAGE=%s", msg,
                        "MESSAGE_ID=" MSGID_STOPPED,
                        "PRIORITY=%d", code == 0 ? LOG_NOTICE : LOG_WARNING,
                        "SYSLOG_IDENTIFIER=%s", program_invocation_short_name,
                        "RDMAXFER_EXIT_CODE=%d", code,
                        NULL);
        if (!log_journal_stream())
                log_notice("%s", msg);
}

static int daemon_events(struct daemon_ctx *x)
{
        static const struct timeval second = { 1, 0 };
        struct event_base *base = x->d.base;
        uint64_t wd_usec = 0;

        x->sigterm_ev = evsignal_new(base, SIGTERM, daemon_signal_stop_cb, x);
        x->sigint_ev = evsignal_new(base, SIGINT, daemon_signal_stop_cb, x);
        x->sighup_ev = evsignal_new(base, SIGHUP, daemon_signal_hup_cb, x);
        x->status_ev = event_new(base, -1, EV_PERSIST, daemon_status_cb, x);
        if (!x->sigterm_ev || !x->sigint_ev || !x->sighup_ev || !x->status_ev ||
            evsignal_add(x->sigterm_ev, NULL) < 0 || evsignal_add(x->sigint_ev, NULL) < 0 ||
            evsignal_add(x->sighup_ev, NULL) < 0 || event_add(x->status_ev, &second) < 0)
                return -ENOMEM;

        if (sd_watchdog_enabled(0, &wd_usec) > 0 && wd_usec > 0) {
                struct timeval half = {
                        .tv_sec = (time_t)(wd_usec / 2 / 1000000u),
                        .tv_usec = (suseconds_t)(wd_usec / 2 % 1000000u),
                };

                x->watchdog_ev = event_new(base, -1, EV_PERSIST, daemon_watchdog_cb, x);
                if (!x->watchdog_ev || event_add(x->watchdog_ev, &half) < 0)
                        return -ENOMEM;
                log_debug("watchdog: WATCHDOG=1 every %" PRIu64 " ms", wd_usec / 2 / 1000);
        }
        return 0;
}

static void daemon_events_free(struct daemon_ctx *x)
{
        struct event **evs[] = { &x->sigterm_ev, &x->sigint_ev, &x->sighup_ev, &x->status_ev,
                                 &x->watchdog_ev };

        for (size_t i = 0; i < ARRAY_SIZE(evs); i++)
                if (*evs[i]) {
                        event_free(*evs[i]);
                        *evs[i] = NULL;
                }
}

/*
 * Every file a tree job holds ahead is a descriptor (jobs.h): the soft
 * RLIMIT_NOFILE (1024 by default) up to the hard one (the units set
 * LimitNOFILE=65536). Nothing here uses select(), which the limit once
 * protected. The jobs size their look-ahead from what this leaves.
 */
static void daemon_raise_nofile(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_notice("cannot raise the open file limit to %" PRIu64 ": %s", (uint64_t)rl.rlim_max,
                           strerror(errno));
}

/*
 * The engine and the disk I/O they share go together: the engine's queue
 * pairs first (nothing more is written into memory about to go), then the
 * io drains (a request that never comes back keeps what it may touch),
 * then what the engine and control's checks still hold.
 */
static void daemon_free_io(struct daemon *d)
{
        bool keep;

        engine_quiesce(d->engine);
        keep = d->io && io_free(d->io) > 0;
        d->io = NULL;
        fdchecks_free(&d->fdchecks, keep);
        engine_free(d->engine, keep);
        d->engine = NULL;
}

/* The layers on the engine: jobs, control, metrics. 0, or -errno (said). */
static int daemon_layers_new(struct daemon *d)
{
        struct jobs_cfg jobs_cfg;
        struct control_env control = {
                .base = d->base,
                .io = d->io,
                .fdchecks = &d->fdchecks,
                .stats = daemon_stats,
                .owner = d,
                .socket_path = d->cfg.control_socket,
        };
        struct metrics_env metrics = {
                .base = d->base,
                .stats = daemon_stats,
                .owner = d,
        };
        int r;

        daemon_jobs_cfg(&d->cfg, &jobs_cfg);
        r = jobs_new(&d->jobs, d->base, d->engine, &jobs_cfg);
        if (r < 0) {
                daemon_fail("cannot set up the job table: %s", strerror(-r));
                return r;
        }
        control.jobs = d->jobs;
        daemon_control_cfg(&d->cfg, &control.cfg);
        r = control_new(&d->control, &control);
        if (r < 0) {
                daemon_fail("cannot open the control socket: %s", strerror(-r));
                return r;
        }
        daemon_metrics_cfg(&d->cfg, &metrics.cfg);
        r = metrics_new(&d->metrics, &metrics);
        if (r < 0) {
                daemon_fail("cannot set up the metrics file: %s", strerror(-r));
                return r;
        }
        return 0;
}

int daemon_run(const char *config_path)
{
        static struct daemon_ctx ctx;   /* one per process; the signal events point at it */
        struct daemon_ctx *x = &ctx;
        struct daemon *d = &x->d;
        struct sigaction sa = { .sa_handler = SIG_IGN };
        char err[1024];
        int r, code = 1;

        d->config_path = config_path ? config_path : CONFIG_DEFAULT_PATH;
        d->start_usec = clock_usec(CLOCK_MONOTONIC);
        d->start_time_usec = clock_usec(CLOCK_REALTIME);
        r = daemon_load_config(config_path, &d->cfg, &d->key, err, sizeof(err));
        if (r < 0) {
                daemon_fail("%s", err);
                goto out;
        }
        log_set_level(d->cfg.log_level);
        if (r == DAEMON_CONFIG_DEFAULTS)
                log_notice("%s not found, using built-in defaults", d->config_path);

        /* A client or peer vanishing mid-write is an error return, not a signal. */
        sigaction(SIGPIPE, &sa, NULL);
        daemon_raise_nofile();

        d->base = event_base_new();
        if (!d->base) {
                daemon_fail("cannot create the event loop");
                goto out;
        }
        r = daemon_events(x);
        if (r < 0) {
                daemon_fail("cannot set up signals and timers: %s", strerror(-r));
                goto out;
        }

        x->max_transfers_start = d->cfg.max_transfers;

        r = io_new(&d->io, d->base, engine_io_depth(&d->cfg));
        if (r < 0) {
                daemon_fail("cannot set up io_uring: %s", strerror(-r));
                goto out;
        }
        d->fdchecks = (struct fdchecks){ .io = d->io };

        /* Order matters: READY=1 only once the ring is registered and both sockets listen. */
        r = engine_new(&d->engine, &(struct engine_params){
                .base = d->base,
                .io = d->io,
                .cfg = &d->cfg,
                .key = &d->key,
                .ops = &daemon_engine_ops,
                .owner = x,
        });
        if (r < 0) {
                daemon_fail("cannot start the RDMA engine: %s", strerror(-r));
                goto out;
        }
        r = daemon_layers_new(d);
        if (r < 0)
                goto out;

        snprintf(x->status, sizeof(x->status), "idle");
        sd_notify(0, "READY=1\nSTATUS=idle");
        daemon_log_started(d);

        x->phase = DAEMON_RUNNING;
        if (event_base_dispatch(d->base) < 0)
                log_err("event loop failed");

        if (x->phase == DAEMON_STOPPED) {
                code = 0;
        } else {
                if (x->phase != DAEMON_ABORTED)
                        log_err("event loop ended unexpectedly");
                /*
                 * Transfers may still be running: the engine releases them
                 * without calling back, so the jobs go after it.
                 */
                metrics_free(d->metrics);
                d->metrics = NULL;
                control_free(d->control);
                d->control = NULL;
                daemon_free_io(d);
        }
        daemon_log_stopped(code);

out:
        metrics_free(d->metrics);
        d->metrics = NULL;
        control_free(d->control);
        d->control = NULL;
        jobs_free(d->jobs);
        d->jobs = NULL;
        daemon_free_io(d);
        daemon_events_free(x);
        if (d->base)
                event_base_free(d->base);
        d->base = NULL;
        auth_key_clear(&d->key);
        config_deinit(&d->cfg);
        return code;
}
