/*
 * The control socket: one SOCK_SEQPACKET datagram per message (ctl.h).
 * Each client connection is an event on the daemon's loop. Nothing is
 * buffered per connection: a progress update that does not fit the socket
 * is dropped (the next one carries newer numbers), a reply that does not fit
 * closes the connection, and a LIST resumes from a job id when the socket
 * drains. Connections are freed from a deferred event, never from inside
 * their own callbacks.
 *
 * Per user (SO_PEERCRED's uid): at most cfg.max_clients_per_user
 * connections and cfg.max_queued_per_user queued jobs, so one member of
 * the socket's group cannot take all CONTROL_CONN_MAX connections or the
 * whole queue; a connection with no request in progress and no watch is
 * closed after cfg.client_idle_timeout. A client sees (LIST, STATUS,
 * WATCH, CANCEL) only its own jobs, unless it is root, the daemon's user
 * or in cfg.admin_group; to the others another user's job does not exist.
 * STATS is for every client: aggregate numbers only (bytes, counts by
 * reason, rates, occupancy), nothing that names a job, peer, file or user.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/event.h>

#include "bucket.h"
#include "fdcheck.h"
#include "io.h"
#include "control.h"
#include "control-socket.h"
#include "ctl.h"
#include "daemon.h"
#include "engine.h"
#include "jobs.h"
#include "log.h"
#include "macro.h"
#include "name.h"
#include "stats.h"

#define CONTROL_TICK_USEC       250000          /* progress for watchers */
#define CONTROL_LIST_END        UINT64_MAX      /* list cursor: only LIST_END left */
/* A refused client gets its answer after its request is in (closing with
 * the request unread would reset the connection before the answer is
 * read); this many wait at once, each at most CONTROL_REFUSE_WAIT_SEC. */
#define CONTROL_REFUSING_MAX    16
#define CONTROL_REFUSE_WAIT_SEC 1

/* A job of several files: how many of its FILEs' descriptors may be
 * checked off the loop at once (control_file). */
#define CONTROL_CHECKS_MAX      32
/* Records read in one wake-up of a connection, at most (conn_read_cb). */
#define CONTROL_READ_BATCH      32

/* One FILE whose descriptor is being checked: it becomes the job's once it
 * and every FILE before it checked out (a directory needs no check). */
struct control_check {
        struct control_conn *conn;
        struct fdcheck *h;         /* while the kernel has it, with the descriptor */
        struct ctl_file file;
        int fd;                         /* handed back by the check; -1 until then */
        bool done;
        bool regular;
        int res;
        uint64_t size;
};

struct control_conn {
        struct control *c;
        int fd;
        struct ucred cred;
        struct event *read_ev;
        struct event *write_ev;         /* armed only while a LIST waits for room */
        struct event *idle_ev;          /* client_idle_timeout; for a refused one, its wait */
        struct job *watch;              /* job this client WATCHes, or NULL */
        bool sees_all;                  /* root, the daemon's user or admin_group: every job */
        bool refusing;                  /* over a limit: gets @refusal once its request is in */
        struct ctl_error refusal;       /* not a whole ctl_msg: 32 KiB a connection */
        bool listing;
        uint64_t list_next;             /* id of the next job to LIST (ids rise in table order) */
        bool dead;                      /* closed; freed by reap_ev */
        /* A SUBMIT whose file is being checked off the loop (a FUSE or NFS
         * file may never answer): reading waits, idle_ev is its deadline.
         * Its copy is allocated for as long (a route makes it 28 KiB). */
        struct fdcheck *checking;  /* has the SUBMIT's descriptor */
        struct ctl_submit *submit;
        /* The job of several files this client hands its files to (ctl.h):
         * reading waits while the job holds JOBS_FILES_AHEAD of them. */
        uint64_t feed_id;
        const char *feed_why;           /* why the feed ended, when not the client's doing */
        /* Its FILEs in order, a ring of CONTROL_CHECKS_MAX (allocated with
         * the first): reading waits while it is full, or holds as many as
         * the job has room for; io_timeout without an answer ends them. */
        struct control_check *checks;
        unsigned int checks_first, checks_n;
        bool eof;                       /* the client is done: closed once they are in */
        struct ctl_file file;           /* the one being given to the job */
        struct control_conn *next;
};

struct control {
        struct daemon *d;
        struct control_socket sock;
        bool accepting;                 /* SUBMIT allowed */
        struct event *accept_ev;
        struct event *accept_retry_ev;  /* after EMFILE: pause instead of spinning */
        struct event *tick_ev;
        struct event *reap_ev;
        struct control_conn *conns;
        unsigned int n_conns, n_watching;
        unsigned int n_refusing;        /* refused connections waiting for their request */
};

static void control_watch_cb(struct job *job, void *userdata);
static void control_feed_cb(struct job *job, void *userdata);

/* Live progress: a running job's numbers are asked of the engine here. */
static void control_job_msg(struct ctl_msg *m, struct job *job)
{
        job_refresh(job);
        memset(m, 0, sizeof(*m));
        m->type = CTL_JOB;
        m->job.id = job->id;
        m->job.state = (uint8_t)job->state;
        m->job.status = job->status;
        m->job.bytes_done = job->bytes_done;
        m->job.bytes_total = job->size;
        m->job.usec = job->usec;
        m->job.rate = job->rate;
        m->job.bwlimit = job->bwlimit;
        m->job.attempt = (uint16_t)MIN(job->attempt, UINT16_MAX);
        m->job.attempts = (uint16_t)MIN(job_attempts(job), UINT16_MAX);
        m->job.retry_usec = job_retry_in(job);
        m->job.files_done = job->files_done;
        m->job.files_total = job->files;
        m->job.files_skipped = job->files_skipped;
        snprintf(m->job.peer, sizeof(m->job.peer), "%s", job->peer);
        snprintf(m->job.name, sizeof(m->job.name), "%s", job->name);
        snprintf(m->job.text, sizeof(m->job.text), "%s", job->text);
        m->job.nodes = job->nodes;
        m->job.nodes_ok = job->nodes_ok;
        m->job.node_failed = job->node_failed;
        m->job.node_status = job->node_status;
        m->job.nodes_missing = job->nodes_missing;
        snprintf(m->job.route, sizeof(m->job.route), "%s", job->route ? job->route : "");
        snprintf(m->job.node_peer, sizeof(m->job.node_peer), "%s", job->node_peer);
        snprintf(m->job.node_text, sizeof(m->job.node_text), "%s", job->node_text);
        if (job->node_bytes)
                memcpy(m->job.node_bytes, job->node_bytes, job->nodes * sizeof(job->node_bytes[0]));
}

/*
 * Idle means no request in progress and no watch: the clock restarts with
 * every request and stops while the client watches a job. A LIST the
 * client stops reading is not progress either.
 */
static void conn_idle_arm(struct control_conn *conn)
{
        struct timeval tv = { .tv_sec = conn->c->d->cfg.client_idle_timeout };

        if (conn->dead || conn->refusing)
                return;
        if (conn->checking || conn->checks_n > 0) {
                tv.tv_sec = conn->c->d->cfg.io_timeout;
                evtimer_add(conn->idle_ev, &tv);
                return;
        }
        /* Handing files over waits on the job, not on the client. */
        if (conn->feed_id) {
                evtimer_del(conn->idle_ev);
                return;
        }
        if (conn->watch)
                evtimer_del(conn->idle_ev);
        else
                evtimer_add(conn->idle_ev, &tv);
}

static void conn_unwatch(struct control_conn *conn)
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

/* Stop waiting for the files' checks: the engine keeps what the kernel may write. */
static void conn_check_drop(struct control_conn *conn)
{
        if (conn->checking)
                fdcheck_cancel(conn->checking);
        conn->checking = NULL;
        free(conn->submit);
        conn->submit = NULL;
        for (; conn->checks_n > 0; conn->checks_n--) {
                struct control_check *k = &conn->checks[conn->checks_first];

                if (k->h)
                        fdcheck_cancel(k->h);
                k->h = NULL;
                k->fd = safe_close(k->fd);
                conn->checks_first = (conn->checks_first + 1) % CONTROL_CHECKS_MAX;
        }
}

/* This client hands @job no more files: done, gone, or (conn->feed_why) failed. */
static void conn_feed_end(struct control_conn *conn)
{
        struct job *job;

        if (!conn->feed_id)
                return;
        job = jobs_find(conn->c->d->jobs, conn->feed_id);
        conn->feed_id = 0;
        if (!job)
                return;
        job_set_feeder(job, NULL, NULL);
        /* Before its last file: the job cannot finish, so it is cancelled,
         * or fails when it was not the client's doing. */
        jobs_feeder_gone(job, conn->feed_why);
}

static void conn_close(struct control_conn *conn)
{
        struct control *c = conn->c;

        if (conn->dead)
                return;
        conn->dead = true;
        conn_check_drop(conn);
        conn_feed_end(conn);
        /* The client going away never cancels its job: it only stops watching. */
        conn_unwatch(conn);
        event_del(conn->read_ev);
        if (conn->write_ev)
                event_del(conn->write_ev);
        if (conn->idle_ev)
                evtimer_del(conn->idle_ev);
        conn->fd = safe_close(conn->fd);
        if (conn->refusing)
                c->n_refusing--;
        else
                c->n_conns--;
        event_active(c->reap_ev, 0, 0);
}

static void conn_free(struct control_conn *conn)
{
        if (!conn)
                return;
        conn_check_drop(conn);
        free(conn->checks);
        if (conn->read_ev)
                event_free(conn->read_ev);
        if (conn->write_ev)
                event_free(conn->write_ev);
        if (conn->idle_ev)
                event_free(conn->idle_ev);
        safe_close(conn->fd);
        free(conn);
}

/* A reply the client waits for: if it cannot be sent, the connection is useless. */
static int conn_reply(struct control_conn *conn, const struct ctl_msg *m)
{
        int r = ctl_send(conn->fd, m, -1);

        if (r < 0) {
                log_debug("control: closing client pid %d: cannot send reply: %s",
                          (int)conn->cred.pid, strerror(-r));
                conn_close(conn);
        }
        return r;
}

/* A progress update: dropped when the socket is full, the next one is newer. */
static void conn_update(struct control_conn *conn, struct job *job)
{
        struct ctl_msg m;
        int r;

        if (conn->listing)      /* keep a LIST's stream clean; the next tick comes soon */
                return;
        control_job_msg(&m, job);
        r = ctl_send(conn->fd, &m, -1);
        if (r < 0 && r != -EAGAIN && r != -EWOULDBLOCK) {
                log_debug("control: closing client pid %d: %s", (int)conn->cred.pid,
                          strerror(-r));
                conn_close(conn);
        }
}

_printf_(3, 0)
static void control_error_msg(struct ctl_msg *m, int code, const char *fmt, va_list ap)
{
        memset(m, 0, sizeof(*m));
        m->type = CTL_ERROR;
        m->error.code = code;
        vsnprintf(m->error.text, sizeof(m->error.text), fmt, ap);
}

static int conn_error(struct control_conn *conn, int code, const char *fmt, ...) _printf_(3, 4);

static int conn_error(struct control_conn *conn, int code, const char *fmt, ...)
{
        struct ctl_msg m;
        va_list ap;

        va_start(ap, fmt);
        control_error_msg(&m, code, fmt, ap);
        va_end(ap);
        return conn_reply(conn, &m);
}

/* An ERROR nobody asked for (an idle close): best effort, then the caller closes. */
_printf_(3, 4)
static void control_say(int fd, int code, const char *fmt, ...)
{
        struct ctl_msg m;
        va_list ap;

        va_start(ap, fmt);
        control_error_msg(&m, code, fmt, ap);
        va_end(ap);
        (void)ctl_send(fd, &m, -1);
}

/* Another user's job is "no such job" to a client that does not see all. */
static bool conn_may_see(const struct control_conn *conn, const struct job *job)
{
        return conn->sees_all || job->uid == conn->cred.uid;
}

static struct job *conn_find_job(struct control_conn *conn, uint64_t id)
{
        struct job *job = jobs_find(conn->c->d->jobs, id);

        return job && conn_may_see(conn, job) ? job : NULL;
}

static void control_watch_cb(struct job *job, void *userdata)
{
        struct control_conn *conn = userdata;
        struct ctl_msg m;

        if (!ctl_job_state_final(job->state)) {
                conn_update(conn, job);
                return;
        }
        /* The final message must arrive, or the client would wait forever. */
        control_job_msg(&m, job);
        if (conn_reply(conn, &m) >= 0)
                conn_unwatch(conn);
}

static void control_tick_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control *c = userdata;

        for (struct control_conn *conn = c->conns; conn; conn = conn->next) {
                struct job *job = conn->watch;

                if (conn->dead || !job)
                        continue;
                if (job->state == CTL_JOB_CONNECTING || job->state == CTL_JOB_SENDING ||
                    job->state == CTL_JOB_VERIFYING)
                        conn_update(conn, job);
        }
}

static bool host_is_numeric(const char *host)
{
        unsigned char buf[sizeof(struct in6_addr)];

        return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* A node of a chain: 16 address bytes (IPv4 mapped, as wire.h has
 * it), the port, and where it is in the chain (0: the peer). */
struct control_node {
        uint8_t addr[16];
        uint16_t port;
        uint16_t index;
};

/* @host as a node: false when it is not a numeric address. */
static bool control_node_set(struct control_node *node, const char *host, uint16_t port, unsigned int index)
{
        memset(node, 0, sizeof(*node));
        if (inet_pton(AF_INET, host, node->addr + 12) == 1)
                node->addr[10] = node->addr[11] = 0xff;
        else if (inet_pton(AF_INET6, host, node->addr) != 1)
                return false;
        node->port = port;
        node->index = (uint16_t)index;
        return true;
}

/* By address and port, then by place in the chain. */
static int control_node_cmp(const void *a, const void *b)
{
        const struct control_node *x = a, *y = b;
        int r = memcmp(x->addr, y->addr, sizeof(x->addr));

        if (r)
                return r;
        if (x->port != y->port)
                return x->port < y->port ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * A chain's SUBMIT (ctl.h): one plain file or one tree, without sync, at
 * most CTL_ROUTE_HOPS_MAX hops after the peer, each a numeric address,
 * and no node twice (it would receive the job while it relays it to
 * itself). Says why not.
 * Up to 512 nodes: they are sorted to find a twin, on the heap (10 KiB).
 */
static bool control_route_ok(struct control_conn *conn, const struct ctl_submit *s)
{
        uint16_t dport = conn->c->d->cfg.port;
        _cleanup_(freep) struct control_node *nodes = NULL;
        const struct control_node *twin = NULL;
        struct ctl_route_iter it;
        struct ctl_hop hop;
        char text[INET6_ADDRSTRLEN];
        int n;

        if (!ctl_submit_chain_ok(s)) {
                conn_error(conn, -EINVAL, "a chain carries one regular file or one tree (-r), without "
                           "--skip-existing or --sync");
                return false;
        }
        n = ctl_route_parse(s->route, NULL, CTL_ROUTE_HOPS_MAX);
        if (n == -E2BIG) {
                conn_error(conn, -E2BIG, "a chain has at most %u nodes (the peer and %u more)",
                           CTL_NODES_MAX, CTL_ROUTE_HOPS_MAX);
                return false;
        }
        if (n < 0) {
                conn_error(conn, -EINVAL, "bad chain route: expected ADDR:PORT or [IPV6]:PORT, comma separated");
                return false;
        }
        nodes = calloc((size_t)n + 1, sizeof(*nodes));
        if (!nodes) {
                conn_error(conn, -ENOMEM, "out of memory");
                return false;
        }
        if (!control_node_set(&nodes[0], s->host, s->port ? s->port : dport, 0)) {
                conn_error(conn, -EINVAL, "not a numeric IPv4 or IPv6 address: %s", s->host);
                return false;
        }
        it = CTL_ROUTE_ITER(s->route);
        for (int i = 1; i <= n && ctl_route_next(&it, &hop) > 0; i++) {
                if (!control_node_set(&nodes[i], hop.host, hop.port ? hop.port : dport, (unsigned int)i)) {
                        conn_error(conn, -EINVAL, "not a numeric IPv4 or IPv6 address in the chain: %s",
                                   hop.host);
                        return false;
                }
        }
        /* The twin named is the first node in chain order that repeats an earlier one. */
        qsort(nodes, (size_t)n + 1, sizeof(*nodes), control_node_cmp);
        for (int i = 1; i <= n; i++)
                if (memcmp(nodes[i - 1].addr, nodes[i].addr, sizeof(nodes[i].addr)) == 0 &&
                    nodes[i - 1].port == nodes[i].port && (!twin || nodes[i].index < twin->index))
                        twin = &nodes[i];
        if (twin) {
                bool v4 = IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)twin->addr);

                if (v4)
                        inet_ntop(AF_INET, twin->addr + 12, text, sizeof(text));
                else
                        inet_ntop(AF_INET6, twin->addr, text, sizeof(text));
                conn_error(conn, -EINVAL, "the chain names a node twice: %s, port %u (node %u)", text,
                           (unsigned int)twin->port, twin->index + 1u);
                return false;
        }
        return true;
}

/* The file checked out: queue the job. Takes @fd_in. */
static void control_submit_checked(struct control_conn *conn, const struct ctl_submit *s,
                                   int fd_in, uint64_t size)
{
        _cleanup_(closep) int fd = fd_in;
        struct control *c = conn->c;
        struct ctl_msg m = { .type = CTL_SUBMITTED };
        struct job *job;
        uint64_t id;
        int r;

        /* The check took a while: the daemon may be stopping now. */
        if (!c->accepting || c->d->stopping) {
                conn_error(conn, -ESHUTDOWN, "daemon is shutting down");
                return;
        }
        r = jobs_submit(c->d->jobs, s, conn->cred.uid, TAKE_FD(fd), size, &id);
        if (r == JOBS_USER_QUEUE_FULL) {
                conn_error(conn, -EDQUOT, "too many jobs queued for your user (%u)",
                           c->d->cfg.max_queued_per_user);
                return;
        }
        if (r == -EBUSY) {
                conn_error(conn, r, "too many jobs queued (%u)", JOBS_QUEUED_MAX);
                return;
        }
        if (r == -ESHUTDOWN) {
                conn_error(conn, r, "daemon is shutting down");
                return;
        }
        if (r < 0) {
                conn_error(conn, r, "cannot queue the job: %s", strerror(-r));
                return;
        }
        job = jobs_find(c->d->jobs, id);
        if (job && job->files > 1) {
                log_info("job %" PRIu64 ": %u files (%" PRIu64 " bytes), the first %s, to %s submitted by "
                         "uid %u pid %d", id, job->files, job->size, s->name, job->peer,
                         (unsigned int)conn->cred.uid, (int)conn->cred.pid);
                conn->feed_id = id;
                job_set_feeder(job, control_feed_cb, conn);
        } else if (s->bwlimit > 0)
                log_info("job %" PRIu64 ": %s (%" PRIu64 " bytes) to %s submitted by uid %u pid %d, "
                         "bwlimit %" PRIu64 " bytes/s", id, s->name, size, job ? job->peer : s->host,
                         (unsigned int)conn->cred.uid, (int)conn->cred.pid, s->bwlimit);
        else
                log_info("job %" PRIu64 ": %s (%" PRIu64 " bytes) to %s submitted by uid %u pid %d",
                         id, s->name, size, job ? job->peer : s->host,
                         (unsigned int)conn->cred.uid, (int)conn->cred.pid);
        m.id = id;
        conn_reply(conn, &m);
}

/* The job took a file of this client's: it may hand over the next. Or
 * the job ended: reading the next FILE answers it with an ERROR that says
 * so (control_file_checked), so a client blocked handing files over is
 * let go, not left waiting for room that never comes. */
static void control_feed_cb(struct job *job, void *userdata)
{
        struct control_conn *conn = userdata;

        if (conn->dead || conn->eof || conn->checking || conn->checks_n >= CONTROL_CHECKS_MAX ||
            (job_files_room(job) <= conn->checks_n && !ctl_job_state_final(job->state)))
                return;
        event_add(conn->read_ev, NULL);
}

/* Back to reading requests after a check, whatever its end. */
static void conn_check_end(struct control_conn *conn)
{
        conn->checking = NULL;
        if (conn->dead)
                return;
        event_add(conn->read_ev, NULL);
        conn_idle_arm(conn);
}

/* A FILE's descriptor checked out (or not): the job's, or the job fails. */
static void control_file_checked(struct control_conn *conn, int fd_in, int res, bool regular,
                                 uint64_t size)
{
        _cleanup_(closep) int fd = fd_in;
        struct job *job = jobs_find(conn->c->d->jobs, conn->feed_id);
        char why[CTL_TEXT_MAX + CTL_NAME_MAX + 64];
        int r;

        if (!job || ctl_job_state_final(job->state)) {
                if (job && job->text[0])
                        conn_error(conn, -ECANCELED, "job %" PRIu64 " %s before its file %s: %s", job->id,
                                   ctl_job_state_str(job->state), conn->file.name, job->text);
                else
                        conn_error(conn, -ECANCELED, "the job ended before its file %s", conn->file.name);
                conn_close(conn);
                return;
        }
        if (res < 0)
                snprintf(why, sizeof(why), "cannot stat %s: %s", conn->file.name, strerror(-res));
        else if (!regular)
                snprintf(why, sizeof(why), "%s is not a regular file", conn->file.name);
        else if (size != conn->file.size && !(conn->file.flags & CTL_FILE_DIR))
                snprintf(why, sizeof(why), "%s: %" PRIu64 " bytes, the client said %" PRIu64,
                         conn->file.name, size, conn->file.size);
        else if ((r = jobs_add_file(job, TAKE_FD(fd), size, conn->file.name, conn->file.flags,
                                    conn->file.mode, conn->file.mtime_ns)) < 0)
                snprintf(why, sizeof(why), "%s: %s", conn->file.name,
                         r == -E2BIG ? "more files or bytes than the job announced" : strerror(-r));
        else
                why[0] = '\0';
        if (why[0]) {
                /* The job cannot be what the client announced: it ends here. */
                conn_error(conn, -EINVAL, "%s", why);
                conn_close(conn);
                return;
        }
        if (job_files_complete(job)) {
                job_set_feeder(job, NULL, NULL);
                conn->feed_id = 0;
                conn_idle_arm(conn);
        } else if (job_files_room(job) <= conn->checks_n) {
                event_del(conn->read_ev);
        }
}

/* The FILEs checked, oldest first, to the job, up to the first still out;
 * then reading goes on while there is room. */
static void control_checks_drain(struct control_conn *conn)
{
        struct job *job;

        while (!conn->dead && conn->checks_n > 0 && conn->checks[conn->checks_first].done) {
                struct control_check k = conn->checks[conn->checks_first];

                conn->checks_first = (conn->checks_first + 1) % CONTROL_CHECKS_MAX;
                conn->checks_n--;
                conn->file = k.file;
                control_file_checked(conn, k.fd, k.res, k.regular, k.size);
        }
        if (conn->dead)
                return;
        /* The client handed its last FILE over and went: it is done now. */
        if (conn->eof && conn->checks_n == 0) {
                conn_close(conn);
                return;
        }
        conn_idle_arm(conn);
        job = conn->feed_id ? jobs_find(conn->c->d->jobs, conn->feed_id) : NULL;
        if (job && !conn->eof && !conn->checking && conn->checks_n < CONTROL_CHECKS_MAX &&
            job_files_room(job) > conn->checks_n)
                event_add(conn->read_ev, NULL);
}

static void control_on_file_fstat(void *userdata, int fd, int res, bool regular, uint64_t size)
{
        struct control_check *k = userdata;

        k->h = NULL;
        k->fd = fd;
        k->done = true;
        k->res = res;
        k->regular = regular;
        k->size = size;
        control_checks_drain(k->conn);
}

static void control_on_fstat(void *userdata, int fd, int res, bool regular, uint64_t size)
{
        struct control_conn *conn = userdata;
        _cleanup_(freep) struct ctl_submit *s = TAKE_PTR(conn->submit);

        conn_check_end(conn);
        if (res < 0) {
                safe_close(fd);
                conn_error(conn, res, "cannot stat the file: %s", strerror(-res));
                return;
        }
        if (!regular) {
                safe_close(fd);
                conn_error(conn, -EINVAL, "not a regular file");
                return;
        }
        control_submit_checked(conn, s, fd, size);
}

/* The file did not answer within io_timeout. */
static void conn_check_timeout(struct control_conn *conn)
{
        unsigned int t = conn->c->d->cfg.io_timeout;

        log_warning("control: the file of uid %u pid %d did not answer a stat within %u s",
                    (unsigned int)conn->cred.uid, (int)conn->cred.pid, t);
        conn_check_drop(conn);
        conn_check_end(conn);
        conn_error(conn, -ETIMEDOUT, "checking the file: no answer within %u s", t);
}

/* A FILE of a job of several did not answer within io_timeout: the job
 * cannot go on without it. */
static void conn_checks_timeout(struct control_conn *conn)
{
        unsigned int t = conn->c->d->cfg.io_timeout;
        struct control_check *k = &conn->checks[conn->checks_first];

        log_warning("control: a file of uid %u pid %d did not answer a stat within %u s",
                    (unsigned int)conn->cred.uid, (int)conn->cred.pid, t);
        /* First: saying it to a client that has gone closes the connection. */
        conn->feed_why = "a file handed over did not answer a stat within io_timeout";
        conn_error(conn, -ETIMEDOUT, "checking %s: no answer within %u s", k->file.name, t);
        conn_close(conn);
}

/* A tree's SUBMIT: DEST and the job's totals; no file to check. */
static void control_submit_tree(struct control_conn *conn, const struct ctl_submit *s, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        enum name_verdict v = name_path_check(s->name, strlen(s->name), NULL);

        if (fd >= 0 || s->files < 2) {
                conn_error(conn, -EINVAL, "a tree comes with no descriptor, and its entries by FILE");
                return;
        }
        if (v != NAME_OK) {
                conn_error(conn, -EINVAL, "bad destination: %s", name_verdict_str(v));
                return;
        }
        if (!host_is_numeric(s->host)) {
                conn_error(conn, -EINVAL, "not a numeric IPv4 or IPv6 address: %s", s->host);
                return;
        }
        if (s->flags & ~_CTL_SUBMIT_FLAGS) {
                conn_error(conn, -EINVAL, "unknown submit flags 0x%x", (unsigned int)s->flags);
                return;
        }
        control_submit_checked(conn, s, -1, 0);
}

static void control_submit(struct control_conn *conn, const struct ctl_submit *s, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        _cleanup_(freep) struct ctl_submit *copy = NULL;
        struct control *c = conn->c;
        enum name_verdict v;
        int fl, r;

        if (!c->accepting || c->d->stopping) {
                conn_error(conn, -ESHUTDOWN, "daemon is shutting down");
                return;
        }
        if (s->route[0] && !control_route_ok(conn, s))
                return;
        if (s->flags & CTL_SUBMIT_TREE) {
                control_submit_tree(conn, s, TAKE_FD(fd));
                return;
        }
        if (fd < 0) {
                conn_error(conn, -EINVAL, "no file descriptor came with the request");
                return;
        }
        /* The descriptor's own flags: no file system is asked. */
        fl = fcntl(fd, F_GETFL);
        if (fl < 0) {
                conn_error(conn, -errno, "cannot inspect the file descriptor: %s", strerror(errno));
                return;
        }
        if ((fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY) {
                conn_error(conn, -EBADF, "file descriptor is not open for reading");
                return;
        }
        v = name_check(s->name, strlen(s->name));
        if (v != NAME_OK) {
                conn_error(conn, -EINVAL, "bad name: %s", name_verdict_str(v));
                return;
        }
        if (!host_is_numeric(s->host)) {
                conn_error(conn, -EINVAL, "not a numeric IPv4 or IPv6 address: %s", s->host);
                return;
        }
        if (s->flags & ~_CTL_SUBMIT_FLAGS) {
                conn_error(conn, -EINVAL, "unknown submit flags 0x%x", (unsigned int)s->flags);
                return;
        }
        if ((s->flags & CTL_SUBMIT_RETRIES) && s->retries > CTL_RETRIES_MAX) {
                conn_error(conn, -EINVAL, "retries: %u is more than %u", (unsigned int)s->retries,
                           CTL_RETRIES_MAX);
                return;
        }
        /* Slower, and the receiver would hear nothing for longer than its
         * peer_timeout between two chunks (if it is set like ours). */
        if (s->bwlimit > 0 && s->bwlimit < bucket_rate_min(c->d->cfg.slot_size, c->d->cfg.peer_timeout)) {
                conn_error(conn, -EINVAL, "bwlimit %" PRIu64 " bytes/s is too low: one chunk (up to %u "
                           "bytes) must go within peer_timeout (%u s); at least %" PRIu64,
                           s->bwlimit, c->d->cfg.slot_size, c->d->cfg.peer_timeout,
                           bucket_rate_min(c->d->cfg.slot_size, c->d->cfg.peer_timeout));
                return;
        }

        copy = malloc(sizeof(*copy));
        if (!copy) {
                conn_error(conn, -ENOMEM, "out of memory");
                return;
        }
        *copy = *s;
        /* What the file is (regular, its size) is the file system's to
         * answer, off the loop; this client's requests wait meanwhile. */
        r = fdcheck_start(&c->d->fdchecks, TAKE_FD(fd), control_on_fstat, conn, &conn->checking);
        if (r < 0) {
                conn_error(conn, r, "cannot stat the file: %s", strerror(-r));
                return;
        }
        conn->submit = TAKE_PTR(copy);
        event_del(conn->read_ev);
}

/* The next file of this client's job of several (ctl.h). */
static void control_file(struct control_conn *conn, const struct ctl_file *f, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        struct control_check *k;
        enum name_verdict v;
        int fl, r;

        struct job *job = conn->feed_id ? jobs_find(conn->c->d->jobs, conn->feed_id) : NULL;

        if (!job || f->id != conn->feed_id) {
                conn_error(conn, -EINVAL, "FILE for job %" PRIu64 ", which takes no files from this "
                           "connection", f->id);
                conn_close(conn);
                return;
        }
        /* In a tree, "DEST/a/b": the receiver checks it is beneath DEST. */
        v = job->tree ? name_path_check(f->name, strlen(f->name), NULL) : name_check(f->name, strlen(f->name));
        if ((f->flags & ~_CTL_FILE_FLAGS) || ((f->flags & CTL_FILE_DIR) && (!job->tree || fd >= 0)) ||
            ((f->flags & CTL_FILE_LINK) && (!job->tree || (f->flags & CTL_FILE_DIR) || f->size == 0 ||
                                            f->size > NAME_LINK_MAX))) {
                conn_error(conn, -EINVAL, "%s: bad FILE flags 0x%x", f->name[0] ? f->name : "(no name)",
                           (unsigned int)f->flags);
                conn_close(conn);
                return;
        }
        if (v != NAME_OK) {
                conn_error(conn, -EINVAL, "%s: %s", f->name[0] ? f->name : "(no name)", name_verdict_str(v));
                conn_close(conn);
                return;
        }
        if (!(f->flags & CTL_FILE_DIR)) {
                fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
                if (fl < 0 || (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY) {
                        conn_error(conn, -EINVAL, "%s: no descriptor open for reading",
                                   f->name[0] ? f->name : "(no name)");
                        conn_close(conn);
                        return;
                }
        }
        if (!conn->checks)
                conn->checks = calloc(CONTROL_CHECKS_MAX, sizeof(*conn->checks));
        if (!conn->checks || conn->checks_n >= CONTROL_CHECKS_MAX) {
                conn_error(conn, -ENOMEM, "%s: no room to check it", f->name);
                conn_close(conn);
                return;
        }
        /* In order behind the FILEs still checked; a directory needs no check. */
        k = &conn->checks[(conn->checks_first + conn->checks_n) % CONTROL_CHECKS_MAX];
        *k = (struct control_check){ .conn = conn, .file = *f, .fd = -1, .done = f->flags & CTL_FILE_DIR,
                                     .regular = true };
        if (!k->done) {
                r = fdcheck_start(&conn->c->d->fdchecks, TAKE_FD(fd), control_on_file_fstat, k, &k->h);
                if (r < 0) {
                        conn_error(conn, r, "cannot stat %s: %s", f->name, strerror(-r));
                        conn_close(conn);
                        return;
                }
        }
        conn->checks_n++;
        if (conn->checks_n >= CONTROL_CHECKS_MAX || job_files_room(job) <= conn->checks_n)
                event_del(conn->read_ev);
        control_checks_drain(conn);
}

static void control_status(struct control_conn *conn, uint64_t id)
{
        struct job *job = conn_find_job(conn, id);
        struct ctl_msg m;

        if (!job) {
                conn_error(conn, -ENOENT, "no such job");
                return;
        }
        control_job_msg(&m, job);
        conn_reply(conn, &m);
}

static void control_watch(struct control_conn *conn, uint64_t id)
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
        control_job_msg(&m, job);
        if (conn_reply(conn, &m) < 0 || ctl_job_state_final(job->state))
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

static void control_cancel(struct control_conn *conn, uint64_t id)
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
        r = jobs_cancel(c->d->jobs, id);
        if (r == -EALREADY) {
                conn_error(conn, r, "job already %s", ctl_job_state_str(job->state));
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

/* Send LIST entries from conn->list_next on; stop reading requests while the socket is full. */
static void control_list_continue(struct control_conn *conn)
{
        struct ctl_msg m;
        int r;

        if (conn->list_next != CONTROL_LIST_END) {
                for (struct job *job = jobs_first(conn->c->d->jobs); job; job = job->next) {
                        if (job->id < conn->list_next || !conn_may_see(conn, job))
                                continue;
                        control_job_msg(&m, job);
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

/* The daemon's counters as a STATS_INFO: -E2BIG when some failure
 * reasons did not fit (the rest is in). */
static int control_stats_msg(struct ctl_msg *m, const struct stats_snapshot *s)
{
        static const unsigned int dirs[_STATS_DIR_MAX] = {
                [STATS_DIR_RECV] = CTL_DIR_RECV,
                [STATS_DIR_SEND] = CTL_DIR_SEND,
        };
        int r = 0;

        memset(m, 0, sizeof(*m));
        m->type = CTL_STATS_INFO;
        m->stats.uptime_usec = s->uptime_usec;
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++) {
                m->stats.dir[dirs[d]].rate = s->dir[d].rate;
                m->stats.dir[dirs[d]].active = s->dir[d].active;
                if (stats_tally_export(&m->stats, dirs[d], &s->dir[d].tally) < 0)
                        r = -E2BIG;
        }
        m->stats.queued = s->queued;
        m->stats.ring_held = s->ring_held;
        m->stats.ring_slots = s->ring_slots;
        m->stats.pool_held = s->pool_held;
        m->stats.pool_slots = s->pool_slots;
        return r;
}

static void control_stats(struct control_conn *conn)
{
        struct stats_snapshot s;
        struct ctl_msg m;

        daemon_stats(conn->c->d, &s);
        if (control_stats_msg(&m, &s) < 0)
                log_debug("control: stats: some failure reasons left out");
        conn_reply(conn, &m);
}

static void control_list(struct control_conn *conn)
{
        conn->list_next = 0;
        control_list_continue(conn);
}

static void conn_write_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control_conn *conn = userdata;

        if (!conn->dead && conn->listing)
                control_list_continue(conn);
}

static void conn_refuse_finish(struct control_conn *conn)
{
        struct ctl_msg m = { .type = CTL_ERROR, .error = conn->refusal };

        control_socket_refuse(conn->fd, &m);
        conn_close(conn);
}

static void conn_idle_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control_conn *conn = userdata;
        unsigned int t = conn->c->d->cfg.client_idle_timeout;

        if (conn->dead)
                return;
        if (conn->refusing) {
                /* Its request never came: answer anyway. */
                conn_refuse_finish(conn);
                return;
        }
        if (conn->checking) {
                conn_check_timeout(conn);
                return;
        }
        if (conn->checks_n > 0) {
                conn_checks_timeout(conn);
                return;
        }
        if (conn->watch)
                return;
        log_debug("control: closing client uid %u pid %d: no request for %u s",
                  (unsigned int)conn->cred.uid, (int)conn->cred.pid, t);
        control_say(conn->fd, -ETIMEDOUT, "closing the connection: no request for %u s", t);
        conn_close(conn);
}

/* One record of @conn's: false when nothing was there to read. */
static bool conn_read_one(struct control_conn *conn)
{
        struct ctl_msg m;
        int r, pfd = -1;

        r = ctl_recv(conn->fd, &m, &pfd);
        if (r == -EAGAIN || r == -EWOULDBLOCK || r == -EINTR)
                return false;
        if (r == -ECONNRESET && conn->checks_n > 0) {
                /* Its FILEs still checked are its job's all the same. */
                conn->eof = true;
                event_del(conn->read_ev);
                return true;
        }
        if (r == -ECONNRESET) {
                conn_close(conn);
                return true;
        }
        if (r == -EPROTONOSUPPORT) {
                conn_error(conn, r, "control protocol version not supported (rdmaxferd speaks %u)",
                           CTL_VERSION);
                conn_close(conn);
                return true;
        }
        if (r == -EBADMSG) {
                conn_error(conn, r, "malformed control message");
                conn_close(conn);
                return true;
        }
        if (r == -EMFILE) {
                /* Its job cannot go on without the file: it ends here, said. */
                log_warning("control: client pid %d: a descriptor it passed was lost: rdmaxferd is out of "
                            "file descriptors (LimitNOFILE)", (int)conn->cred.pid);
                conn->feed_why = "rdmaxferd ran out of file descriptors taking it from xferctl (LimitNOFILE)";
                conn_error(conn, r, "rdmaxferd could not take the file's descriptor: it is out of file "
                           "descriptors (LimitNOFILE, rdmaxferd(8))");
                conn_close(conn);
                return true;
        }
        if (r < 0) {
                log_debug("control: closing client pid %d: %s", (int)conn->cred.pid, strerror(-r));
                conn_close(conn);
                return true;
        }

        /* Only SUBMIT and FILE carry a descriptor; any other one is not ours to keep. */
        if (m.type != CTL_SUBMIT && m.type != CTL_FILE)
                pfd = safe_close(pfd);

        switch (m.type) {
        case CTL_SUBMIT:
                control_submit(conn, &m.submit, pfd);
                break;
        case CTL_FILE:
                control_file(conn, &m.file, pfd);
                break;
        case CTL_STATUS:
                control_status(conn, m.id);
                break;
        case CTL_WATCH:
                control_watch(conn, m.id);
                break;
        case CTL_LIST:
                control_list(conn);
                break;
        case CTL_CANCEL:
                control_cancel(conn, m.id);
                break;
        case CTL_STATS:
                control_stats(conn);
                break;
        default:
                conn_error(conn, -EBADMSG, "unexpected message type %u", m.type);
                conn_close(conn);
                break;
        }
        conn_idle_arm(conn);
        return true;
}

/*
 * Records that are already queued are read in one wake-up, up to
 * CONTROL_READ_BATCH (xferctl hands a tree over as one FILE record an
 * entry): a loop pass a record would cost an epoll_wait each, and their
 * checks an io_uring_enter each. It stops as soon as the connection stops
 * reading (closed, refused, or waiting for its checks: the read event was
 * taken off).
 */
static void conn_read_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control_conn *conn = userdata;
        struct io *io = conn->c->d->io;

        if (conn->dead)
                return;
        if (conn->refusing) {
                conn_refuse_finish(conn);
                return;
        }
        /* The batch's checks (a statx each) go to the kernel together. */
        io_hold(io);
        for (unsigned int i = 0; i < CONTROL_READ_BATCH; i++)
                if (!conn_read_one(conn) || conn->dead || conn->refusing ||
                    !event_pending(conn->read_ev, EV_READ, NULL))
                        break;
        io_release(io);
}

static void control_reap_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control *c = userdata;

        for (struct control_conn **p = &c->conns; *p;) {
                struct control_conn *conn = *p;

                if (!conn->dead) {
                        p = &conn->next;
                        continue;
                }
                *p = conn->next;
                conn_free(conn);
        }
}

/* Live connections of @uid (refused ones waiting for their answer do not count). */
static unsigned int control_conns_of(const struct control *c, uid_t uid)
{
        unsigned int n = 0;

        for (const struct control_conn *conn = c->conns; conn; conn = conn->next)
                n += !conn->dead && !conn->refusing && conn->cred.uid == uid;
        return n;
}

/* A connection with its events (reading armed), not yet linked; NULL without memory. Takes no fd. */
static struct control_conn *control_conn_alloc(struct control *c, int fd, const struct ucred *cred)
{
        struct control_conn *conn = calloc(1, sizeof(*conn));

        if (!conn)
                return NULL;
        conn->c = c;
        conn->fd = -1;
        conn->cred = *cred;
        conn->read_ev = event_new(c->d->base, fd, EV_READ | EV_PERSIST, conn_read_cb, conn);
        conn->write_ev = event_new(c->d->base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, conn);
        conn->idle_ev = evtimer_new(c->d->base, conn_idle_cb, conn);
        if (!conn->read_ev || !conn->write_ev || !conn->idle_ev || event_add(conn->read_ev, NULL) < 0) {
                conn_free(conn);
                return NULL;
        }
        return conn;
}

/* Over a limit: an answer that says so, then close (not a silent drop). Takes @fd_in. */
_printf_(6, 7)
static void control_refuse(struct control *c, int fd_in, const struct ucred *cred, int level,
                           int code, const char *fmt, ...)
{
        static const struct timeval wait = { .tv_sec = CONTROL_REFUSE_WAIT_SEC };
        _cleanup_(closep) int fd = fd_in;
        struct control_conn *conn;
        struct ctl_msg m;
        va_list ap;

        va_start(ap, fmt);
        control_error_msg(&m, code, fmt, ap);
        va_end(ap);
        control_socket_refuse_log(&c->sock, level, cred, m.error.text);

        /* Usually the request is in already; if not, wait for it, briefly and boundedly. */
        conn = c->n_refusing < CONTROL_REFUSING_MAX ? control_conn_alloc(c, fd, cred) : NULL;
        if (!conn) {
                /* A client that has not sent its request yet may see only EPIPE. */
                control_socket_refuse(fd, &m);
                return;
        }
        conn->refusing = true;
        conn->refusal = m.error;
        conn->fd = TAKE_FD(fd);
        evtimer_add(conn->idle_ev, &wait);
        conn->next = c->conns;
        c->conns = conn;
        c->n_refusing++;
}

static int control_conn_new(struct control *c, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        unsigned int per_user = c->d->cfg.max_clients_per_user;
        struct control_conn *conn;
        socklen_t len = sizeof(struct ucred);
        struct ucred cred;
        int r;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        /* The user's own limit first: when it is reached, it is the one to name. Root too:
         * its clients are mostly unattended scripts, the likeliest to run away. */
        if (control_conns_of(c, cred.uid) >= per_user) {
                control_refuse(c, TAKE_FD(fd), &cred, LOG_NOTICE, -EMFILE,
                               "too many connections for your user (%u)", per_user);
                return 0;
        }
        if (c->n_conns >= CONTROL_CONN_MAX) {
                control_refuse(c, TAKE_FD(fd), &cred, LOG_WARNING, -EBUSY,
                               "too many clients connected (%u); try again later", CONTROL_CONN_MAX);
                return 0;
        }

        /* A JOB of a long chain is 32 KiB: room for it whatever wmem_default says. */
        r = ctl_socket_setup(fd);
        if (r < 0)
                log_warning("control: cannot raise the send buffer of client uid %u pid %d: %s",
                            (unsigned int)cred.uid, (int)cred.pid, strerror(-r));
        conn = control_conn_alloc(c, fd, &cred);
        if (!conn)
                return -ENOMEM;
        conn->sees_all = control_socket_sees_all(&c->sock, c->d->cfg.admin_group, fd, &cred);
        conn->fd = TAKE_FD(fd);
        conn->next = c->conns;
        c->conns = conn;
        c->n_conns++;
        conn_idle_arm(conn);
        log_debug("control: client uid %u pid %d connected%s", (unsigned int)cred.uid,
                  (int)cred.pid, conn->sees_all ? " (sees every user's jobs)" : "");
        return 0;
}

static void control_accept_retry_cb(evutil_socket_t fd, short what, void *userdata)
{
        struct control *c = userdata;

        event_add(c->accept_ev, NULL);
}

static void control_accept_cb(evutil_socket_t lfd, short what, void *userdata)
{
        static const struct timeval pause = { 1, 0 };
        struct control *c = userdata;

        /* A bounded batch, so a flood of connects cannot starve transfers. */
        for (int i = 0; i < 16; i++) {
                int fd, r;

                fd = accept4(c->sock.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
                            errno == ECONNABORTED)
                                return;
                        log_warning("control: accept: %s; pausing for a second", strerror(errno));
                        event_del(c->accept_ev);
                        evtimer_add(c->accept_retry_ev, &pause);
                        return;
                }
                r = control_conn_new(c, fd);
                if (r < 0)
                        log_warning("control: cannot set up client: %s", strerror(-r));
        }
}

static void control_freep(struct control **c)
{
        control_free(*c);
}

int control_new(struct control **out, struct daemon *d)
{
        _cleanup_(control_freep) struct control *c = NULL;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->d = d;
        c->sock = CONTROL_SOCKET_NULL;
        c->accepting = true;
        /* NSS may block: once here, again on reload, never per client. */
        control_socket_admin_update(&c->sock, d->cfg.admin_group, true);

        r = control_socket_open(&c->sock, d->cfg.control_socket);
        if (r < 0)
                return r;

        c->accept_ev = event_new(d->base, c->sock.fd, EV_READ | EV_PERSIST, control_accept_cb, c);
        c->accept_retry_ev = evtimer_new(d->base, control_accept_retry_cb, c);
        c->tick_ev = event_new(d->base, -1, EV_PERSIST, control_tick_cb, c);
        c->reap_ev = event_new(d->base, -1, 0, control_reap_cb, c);
        if (!c->accept_ev || !c->accept_retry_ev || !c->tick_ev || !c->reap_ev ||
            event_add(c->accept_ev, NULL) < 0)
                return -ENOMEM;

        *out = TAKE_PTR(c);
        return 0;
}

void control_stop_accepting(struct control *c)
{
        if (c)
                c->accepting = false;
}

void control_reconfigure(struct control *c)
{
        if (c)
                control_socket_admin_update(&c->sock, c->d->cfg.admin_group, true);
}

void control_free(struct control *c)
{
        struct control_conn *conn;

        if (!c)
                return;
        while ((conn = c->conns)) {
                c->conns = conn->next;
                if (!conn->dead) {
                        conn->dead = true;      /* unwatching must not re-arm its idle timer */
                        conn_unwatch(conn);
                        if (conn->refusing)
                                c->n_refusing--;
                        else
                                c->n_conns--;
                }
                conn_free(conn);
        }
        if (c->accept_ev)
                event_free(c->accept_ev);
        if (c->accept_retry_ev)
                event_free(c->accept_retry_ev);
        if (c->tick_ev)
                event_free(c->tick_ev);
        if (c->reap_ev)
                event_free(c->reap_ev);
        control_socket_close(&c->sock);
        free(c);
}
