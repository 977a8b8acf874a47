#include "landc.h"

#include <endian.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "macro.h"
#include "scm.h"

struct landc_req {
        struct landc_req *next;
        uint32_t id;
        uint16_t type;
        uint64_t t_asked;               /* usec, CLOCK_MONOTONIC: for the debug log's round trip */
        bool sent;
        size_t nfds;                    /* to go with it: a request's one, a BATCH's LINKs' */
        int *fds;                       /* in the same allocation, after buf */
        size_t len;
        landc_done_fn done;             /* or, for a BATCH, */
        landc_batch_fn done_batch;
        void *arg;
        uint8_t buf[];                  /* the encoded request */
};

static void landc_req_close_fds(struct landc_req *r)
{
        while (r->nfds > 0)
                safe_close(r->fds[--r->nfds]);
}

struct landc {
        struct event_base *base;
        struct sockaddr_un sa;
        int sock;
        struct event *ev_io;            /* on sock: readable, and writable while something is unsent */
        struct event *ev_fail;          /* fails what is waiting, from the loop */
        int fail_err;
        bool failing;                   /* ev_fail is on its way: no connecting until it ran */
        struct landc_req *head, *tail;  /* in the order they were asked: the sent ones first */
        unsigned int pending;
        uint32_t next_id;
        struct landmsg reply;           /* 14 KiB: not on the stack of every callback */
};

static void landc_io_cb(evutil_socket_t fd, short what, void *arg);

/* The event stays allocated (a disconnect may come from its own
 * callback); a connection assigns it again. */
static void landc_disconnect(struct landc *c)
{
        if (c->sock >= 0)
                event_del(c->ev_io);
        c->sock = safe_close(c->sock);
}

static struct landc_req *landc_pop(struct landc *c)
{
        struct landc_req *r = c->head;

        if (!r)
                return NULL;
        c->head = r->next;
        if (!c->head)
                c->tail = NULL;
        c->pending--;
        return r;
}

static void landc_kick(struct landc *c);

/*
 * Every request waiting, sent or not, answered with an ERROR of @err; the
 * list is taken first, so what a callback asks meanwhile waits for a
 * connection of its own (landc_kick, after).
 */
static void landc_fail_all(struct landc *c, int err, const char *text)
{
        struct landc_req *r = c->head, *next;

        c->head = c->tail = NULL;
        for (; r; r = next) {
                next = r->next;
                c->pending--;
                memset(&c->reply, 0, sizeof(c->reply));
                c->reply.type = LANDMSG_ERROR;
                c->reply.id = r->id;
                c->reply.error.err = (uint32_t)err;
                c->reply.error.verdict = LANDC_UNREACHABLE;
                snprintf(c->reply.error.text, sizeof(c->reply.error.text), "%s", text);
                landc_req_close_fds(r);
                if (r->done_batch)
                        r->done_batch(r->arg, &c->reply, NULL, 0);
                else
                        r->done(r->arg, &c->reply, -1);
                free(r);
        }
        landc_kick(c);
}

static void landc_fail_cb(evutil_socket_t fd, short what, void *arg)
{
        struct landc *c = arg;
        char text[LANDMSG_TEXT_MAX + 1];

        (void)fd;
        (void)what;
        c->failing = false;
        snprintf(text, sizeof(text), "cannot reach rdmaxfer-lander at %s: %s", c->sa.sun_path, strerror(c->fail_err));
        landc_disconnect(c);
        landc_fail_all(c, c->fail_err, text);
}

/* What is waiting fails from the loop, with @err. */
static void landc_fail_later(struct landc *c, int err)
{
        landc_disconnect(c);
        c->fail_err = err;
        c->failing = true;
        event_active(c->ev_fail, 0, 0);
}

static int landc_connect(struct landc *c)
{
        int r;

        c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->sock < 0)
                return -errno;
        if (connect(c->sock, (struct sockaddr *)&c->sa, sizeof(c->sa)) < 0) {
                r = -errno;
                c->sock = safe_close(c->sock);
                return r;
        }
        if (event_assign(c->ev_io, c->base, c->sock, EV_READ | EV_PERSIST, landc_io_cb, c) < 0 ||
            event_add(c->ev_io, NULL) < 0) {
                landc_disconnect(c);
                return -ENOMEM;
        }
        return 0;
}

/* Watch for writable as well while something is unsent. */
static void landc_want_write(struct landc *c, bool want)
{
        short events = EV_READ | EV_PERSIST | (want ? EV_WRITE : 0);

        if (c->sock < 0 || event_get_events(c->ev_io) == events)
                return;
        event_del(c->ev_io);
        event_assign(c->ev_io, c->base, c->sock, events, landc_io_cb, c);
        event_add(c->ev_io, NULL);
}

/* Send what is unsent, in order, as far as the socket takes it. 0 or -errno. */
static int landc_flush(struct landc *c)
{
        for (struct landc_req *r = c->head; r; r = r->next) {
                int e;

                if (r->sent)
                        continue;
                e = scm_send_fds(c->sock, r->buf, r->len, r->fds, r->nfds, MSG_DONTWAIT);
                if (e == -EAGAIN) {
                        landc_want_write(c, true);
                        return 0;
                }
                if (e < 0)
                        return e;
                r->sent = true;
                landc_req_close_fds(r);
        }
        landc_want_write(c, false);
        return 0;
}

/* Connect if need be, and send what waits; a failure fails it all from
 * the loop (a caller of landc_ask never hears of it from within). */
static void landc_kick(struct landc *c)
{
        int e;

        if (!c->head || c->failing)
                return;
        if (c->sock < 0) {
                e = landc_connect(c);
                if (e < 0) {
                        landc_fail_later(c, -e);
                        return;
                }
        }
        if (landc_flush(c) < 0)
                landc_fail_later(c, ECONNRESET);
}

static void landc_gone(struct landc *c, int err, const char *why)
{
        char text[LANDMSG_TEXT_MAX + 1];

        snprintf(text, sizeof(text), "rdmaxfer-lander went away (%s)", why);
        landc_disconnect(c);
        landc_fail_all(c, err, text);
}

static void landc_io_cb(evutil_socket_t fd, short what, void *arg)
{
        struct landc *c = arg;
        int r, sock = c->sock;

        (void)fd;
        if (what & EV_WRITE) {
                r = landc_flush(c);
                if (r < 0) {
                        landc_gone(c, ECONNRESET, strerror(-r));
                        return;
                }
        }
        if (!(what & EV_READ))
                return;
        /* Every answer there is now; each to the request at the head. */
        for (;;) {
                int rfds[LANDMSG_BATCH_MAX];
                struct landc_req *req;
                size_t nr = 0;
                bool fits;

                r = landmsg_recv_fds(c->sock, &c->reply, rfds, LANDMSG_BATCH_MAX, &nr);
                if (r == -EAGAIN)
                        return;
                if (r < 0) {
                        landc_gone(c, ECONNRESET, r == -ECONNRESET ? "closed" : strerror(-r));
                        return;
                }
                req = c->head;
                /* A request's answer brings one descriptor at most; a
                 * BATCH's, as many as its FDS says. */
                fits = req && (req->done_batch ? c->reply.type != LANDMSG_FDS || c->reply.fds.count == nr
                                               : nr <= 1);
                if (!req || !req->sent || c->reply.id != req->id || !fits) {
                        while (nr > 0)
                                safe_close(rfds[--nr]);
                        landc_gone(c, ECONNRESET, "an answer to no request of ours");
                        return;
                }
                landc_pop(c);
                log_debug("lander: request %u (type %u) answered (type %u) in %" PRIu64 " us, %u waiting", req->id,
                          (unsigned int)req->type, (unsigned int)c->reply.type,
                          clock_usec(CLOCK_MONOTONIC) - req->t_asked, c->pending);
                if (req->done_batch)
                        req->done_batch(req->arg, &c->reply, rfds, nr);
                else
                        req->done(req->arg, &c->reply, nr ? rfds[0] : -1);
                free(req);
                if (c->sock != sock)
                        return;         /* gone meanwhile (and maybe connected anew) */
        }
}

int landc_new(struct landc **out, struct event_base *base, const char *path)
{
        struct landc *c;

        if (strlen(path) >= sizeof(c->sa.sun_path))
                return -ENAMETOOLONG;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->base = base;
        c->sock = -1;
        c->next_id = 1;
        c->sa.sun_family = AF_UNIX;
        strcpy(c->sa.sun_path, path);
        c->ev_fail = event_new(base, -1, 0, landc_fail_cb, c);
        c->ev_io = event_new(base, -1, 0, landc_io_cb, c);
        if (!c->ev_fail || !c->ev_io) {
                if (c->ev_fail)
                        event_free(c->ev_fail);
                if (c->ev_io)
                        event_free(c->ev_io);
                free(c);
                return -ENOMEM;
        }
        *out = c;
        return 0;
}

void landc_free(struct landc *c)
{
        struct landc_req *r;

        if (!c)
                return;
        while ((r = landc_pop(c))) {
                landc_req_close_fds(r);
                free(r);
        }
        landc_disconnect(c);
        event_free(c->ev_io);
        event_free(c->ev_fail);
        free(c);
}

unsigned int landc_pending(const struct landc *c)
{
        return c->pending;
}

/* Queue @req with the @nfds descriptors @fds (taken, whatever happens),
 * @done or @done_batch told of its answer. */
static int landc_queue(struct landc *c, const struct landmsg *req, int *fds, size_t nfds, landc_done_fn done,
                       landc_batch_fn done_batch, void *arg)
{
        static uint8_t buf[LANDMSG_MSG_MAX];
        size_t at;
        struct landc_req *r;
        uint32_t id_le;
        int len;

        if (c->pending >= LANDC_PENDING_MAX || nfds > LANDMSG_BATCH_MAX) {
                len = nfds > LANDMSG_BATCH_MAX ? -EINVAL : -EBUSY;
                goto out_close;
        }
        len = landmsg_encode(buf, sizeof(buf), req);
        if (len < 0) {
                len = len == -ENOBUFS ? -EINVAL : len;
                goto out_close;
        }
        /* The descriptors after the request's bytes, aligned for an int. */
        at = ((size_t)len + sizeof(int) - 1) / sizeof(int) * sizeof(int);
        r = malloc(sizeof(*r) + at + nfds * sizeof(int));
        if (!r) {
                len = -ENOMEM;
                goto out_close;
        }
        *r = (struct landc_req){ .id = c->next_id++, .type = req->type, .t_asked = clock_usec(CLOCK_MONOTONIC),
                                 .nfds = nfds, .fds = (int *)(void *)(r->buf + at), .len = (size_t)len,
                                 .done = done, .done_batch = done_batch, .arg = arg };
        memcpy(r->buf, buf, (size_t)len);
        memcpy(r->fds, fds, nfds * sizeof(int));
        /* The id is ours: the header's bytes 8..11 (landmsg.h). */
        id_le = htole32(r->id);
        memcpy(r->buf + 8, &id_le, sizeof(id_le));
        if (c->tail)
                c->tail->next = r;
        else
                c->head = r;
        c->tail = r;
        c->pending++;
        landc_kick(c);
        return 0;

out_close:
        for (size_t i = 0; i < nfds; i++)
                safe_close(fds[i]);
        return len;
}

int landc_ask(struct landc *c, const struct landmsg *req, int fd, landc_done_fn done, void *arg)
{
        int dup = -1;

        if (req->type == LANDMSG_BATCH)
                return -EINVAL;
        if (fd >= 0) {
                dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (dup < 0)
                        return -errno;
        }
        return landc_queue(c, req, &dup, dup >= 0 ? 1 : 0, done, NULL, arg);
}

int landc_ask_batch(struct landc *c, const struct landmsg *req, int *fds, size_t nfds, landc_batch_fn done,
                    void *arg)
{
        if (req->type != LANDMSG_BATCH) {
                for (size_t i = 0; i < nfds; i++)
                        safe_close(fds[i]);
                return -EINVAL;
        }
        return landc_queue(c, req, fds, nfds, NULL, done, arg);
}
