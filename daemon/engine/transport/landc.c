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
        int fd;                         /* to go with it, -1: none */
        size_t len;
        landc_done_fn done;
        void *arg;
        uint8_t buf[];                  /* the encoded request */
};

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
                safe_close(r->fd);
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
                e = scm_send(c->sock, r->buf, r->len, r->fd, MSG_DONTWAIT);
                if (e == -EAGAIN) {
                        landc_want_write(c, true);
                        return 0;
                }
                if (e < 0)
                        return e;
                r->sent = true;
                r->fd = safe_close(r->fd);
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
                struct landc_req *req;
                int rfd = -1;

                r = landmsg_recv(c->sock, &c->reply, &rfd);
                if (r == -EAGAIN)
                        return;
                if (r < 0) {
                        landc_gone(c, ECONNRESET, r == -ECONNRESET ? "closed" : strerror(-r));
                        return;
                }
                req = c->head;
                if (!req || !req->sent || c->reply.id != req->id) {
                        safe_close(rfd);
                        landc_gone(c, ECONNRESET, "an answer to no request of ours");
                        return;
                }
                landc_pop(c);
                log_debug("lander: request %u (type %u) answered (type %u) in %" PRIu64 " us, %u waiting", req->id,
                          (unsigned int)req->type, (unsigned int)c->reply.type,
                          clock_usec(CLOCK_MONOTONIC) - req->t_asked, c->pending);
                req->done(req->arg, &c->reply, rfd);
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
                safe_close(r->fd);
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

int landc_ask(struct landc *c, const struct landmsg *req, int fd, landc_done_fn done, void *arg)
{
        static uint8_t buf[LANDMSG_MSG_MAX];
        struct landc_req *r;
        uint32_t id_le;
        int len;

        if (c->pending >= LANDC_PENDING_MAX)
                return -EBUSY;
        len = landmsg_encode(buf, sizeof(buf), req);
        if (len < 0)
                return len == -ENOBUFS ? -EINVAL : len;
        r = malloc(sizeof(*r) + (size_t)len);
        if (!r)
                return -ENOMEM;
        *r = (struct landc_req){ .id = c->next_id++, .type = req->type, .t_asked = clock_usec(CLOCK_MONOTONIC),
                                 .fd = -1, .len = (size_t)len, .done = done, .arg = arg };
        memcpy(r->buf, buf, (size_t)len);
        /* The id is ours: the header's bytes 8..11 (landmsg.h). */
        id_le = htole32(r->id);
        memcpy(r->buf + 8, &id_le, sizeof(id_le));
        if (fd >= 0) {
                r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                if (r->fd < 0) {
                        free(r);
                        return -errno;
                }
        }
        if (c->tail)
                c->tail->next = r;
        else
                c->head = r;
        c->tail = r;
        c->pending++;
        landc_kick(c);
        return 0;
}
