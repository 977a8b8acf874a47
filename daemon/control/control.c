/*
 * The control socket's connections: one SOCK_SEQPACKET datagram per
 * message (ctl.h). Each client connection is an event on the daemon's
 * loop. Nothing is buffered per connection: a progress update that does
 * not fit the socket is dropped (the next one carries newer numbers), a
 * reply that does not fit closes the connection, and a LIST resumes from a
 * job id when the socket drains. Connections are freed from a deferred
 * event, never from inside their own callbacks.
 *
 * Per user (SO_PEERCRED's uid): at most cfg.max_clients_per_user
 * connections (and the job table's limit of queued jobs), so one member of
 * the socket's group cannot take all CONTROL_CONN_MAX connections or the
 * whole queue; a connection with no request in progress and no watch is
 * closed after cfg.client_idle_timeout. A client sees (LIST, STATUS,
 * WATCH, CANCEL) only its own jobs, unless it is root, the daemon's user
 * or in cfg.admin_group; to the others another user's job does not exist.
 * STATS is for every client: aggregate numbers only (bytes, counts by
 * reason, rates, occupancy), nothing that names a job, peer, file or user;
 * so is SETTINGS, what the configuration says to clients.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <event2/event.h>

#include "control-int.h"
#include "io.h"
#include "jobs.h"
#include "log.h"

/* A refused client gets its answer after its request is in (closing with
 * the request unread would reset the connection before the answer is
 * read); this many wait at once, each at most CONTROL_REFUSE_WAIT_SEC. */
#define CONTROL_REFUSING_MAX    16
#define CONTROL_REFUSE_WAIT_SEC 1

/* Records read in one wake-up of a connection, at most (conn_read_cb). */
#define CONTROL_READ_BATCH      32

/*
 * Idle means no request in progress and no watch: the clock restarts with
 * every request and stops while the client watches a job. A LIST the
 * client stops reading is not progress either.
 */
void conn_idle_arm(struct control_conn *conn)
{
        struct timeval tv = { .tv_sec = conn->c->env.cfg.client_idle_timeout };

        if (conn->dead || conn->refusing)
                return;
        if (conn->checking || conn->checks_n > 0) {
                tv.tv_sec = conn->c->env.cfg.io_timeout;
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

void conn_close(struct control_conn *conn)
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
int conn_reply(struct control_conn *conn, const struct ctl_msg *m)
{
        int r = ctl_send(conn->fd, m, -1);

        if (r < 0) {
                log_debug("control: closing client pid %d: cannot send reply: %s",
                          (int)conn->cred.pid, strerror(-r));
                conn_close(conn);
        }
        return r;
}

_printf_(3, 0)
static void control_error_msg(struct ctl_msg *m, int code, const char *fmt, va_list ap)
{
        memset(m, 0, sizeof(*m));
        m->type = CTL_ERROR;
        m->error.code = code;
        vsnprintf(m->error.text, sizeof(m->error.text), fmt, ap);
}

int conn_error(struct control_conn *conn, int code, const char *fmt, ...)
{
        struct ctl_msg m;
        va_list ap;

        va_start(ap, fmt);
        control_error_msg(&m, code, fmt, ap);
        va_end(ap);
        /* Refused while handing a job's files over: the job fails with
         * this, whether or not the client is still there to read it (it
         * may have handed everything over and gone to watch). */
        if (conn->feed_id && !conn->feed_why) {
                snprintf(conn->feed_text, sizeof(conn->feed_text), "%s", m.error.text);
                conn->feed_why = conn->feed_text;
        }
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
        unsigned int t = conn->c->env.cfg.client_idle_timeout;

        if (conn->dead)
                return;
        if (conn->refusing) {
                /* Its request never came: answer anyway. */
                conn_refuse_finish(conn);
                return;
        }
        if (conn->checking || conn->checks_n > 0) {
                conn_check_timeout(conn);
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
                /* Not the client's doing: a job it was handing over fails, said. */
                if (conn->feed_id) {
                        log_warning("control: client pid %d: reading its next file: %s", (int)conn->cred.pid,
                                    strerror(-r));
                        snprintf(conn->feed_text, sizeof(conn->feed_text),
                                 "rdmaxferd could not read it from xferctl: %s", strerror(-r));
                        conn->feed_why = conn->feed_text;
                } else {
                        log_debug("control: closing client pid %d: %s", (int)conn->cred.pid, strerror(-r));
                }
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
        case CTL_SETTINGS:
                control_settings(conn);
                break;
        case CTL_ITEMS:
                control_items(conn, m.id);
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
        struct io *io = conn->c->env.io;

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
        conn->read_ev = event_new(c->env.base, fd, EV_READ | EV_PERSIST, conn_read_cb, conn);
        conn->write_ev = event_new(c->env.base, fd, EV_WRITE | EV_PERSIST, conn_write_cb, conn);
        conn->idle_ev = evtimer_new(c->env.base, conn_idle_cb, conn);
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
        unsigned int per_user = c->env.cfg.max_clients_per_user;
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
        conn->sees_all = control_socket_sees_all(&c->sock, c->env.cfg.admin_group, fd, &cred);
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

int control_new(struct control **out, const struct control_env *env)
{
        _cleanup_(control_freep) struct control *c = NULL;
        struct event_base *base = env->base;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->env = *env;
        c->env.socket_path = NULL;
        c->sock = CONTROL_SOCKET_NULL;
        c->accepting = true;
        /* NSS may block: once here, again on reload, never per client. */
        control_socket_admin_update(&c->sock, c->env.cfg.admin_group, true);

        r = control_socket_open(&c->sock, env->socket_path);
        if (r < 0)
                return r;

        c->accept_ev = event_new(base, c->sock.fd, EV_READ | EV_PERSIST, control_accept_cb, c);
        c->accept_retry_ev = evtimer_new(base, control_accept_retry_cb, c);
        c->tick_ev = event_new(base, -1, EV_PERSIST, control_tick_cb, c);
        c->reap_ev = event_new(base, -1, 0, control_reap_cb, c);
        if (!c->accept_ev || !c->accept_retry_ev || !c->tick_ev || !c->reap_ev ||
            event_add(c->accept_ev, NULL) < 0)
                return -ENOMEM;
        /* The jobs this control's clients hand files to say when they take more. */
        jobs_set_feeder(c->env.jobs, control_want_more, c);

        *out = TAKE_PTR(c);
        return 0;
}

void control_stop_accepting(struct control *c)
{
        if (c)
                c->accepting = false;
}

void control_reconfigure(struct control *c, const struct control_cfg *cfg)
{
        if (!c)
                return;
        c->env.cfg = *cfg;
        control_socket_admin_update(&c->sock, c->env.cfg.admin_group, true);
}

void control_free(struct control *c)
{
        struct control_conn *conn;

        if (!c)
                return;
        if (c->env.jobs)
                jobs_set_feeder(c->env.jobs, NULL, NULL);
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
