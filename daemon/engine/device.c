/*
 * The engine's hold on its RDMA device: the listener, the PD, the ring's
 * and the send pool's registrations, and the device's async events. The
 * memory behind the registrations lives as long as the engine; only the
 * registrations come and go with the device.
 *
 * A port that goes down (IBV_EVENT_PORT_ERR) fails every transfer at once
 * and keeps the rest: the listener stays, and connections work again when
 * the port does. A device that goes away (RDMA_CM_EVENT_DEVICE_REMOVAL on
 * any id, IBV_EVENT_DEVICE_FATAL, or the listen address moving:
 * ADDR_CHANGE) is let go of entirely: transfers fail, the listener goes,
 * and once the last connection's id is destroyed (reaper.c) the
 * registrations, the PD and librdmacm's context for it are released. The
 * kernel waits for exactly that before it finishes removing the device
 * (rxe cannot disassociate a context that is still open). Then a timer
 * tries to bind the listen address again, with backoff, until a device
 * carries it, and the engine listens there as at start-up.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <event2/event.h>

#include "clock.h"
#include "engine-private.h"
#include "log.h"
#include "reaper.h"
#include "recv.h"
#include "send.h"

#define ENGINE_BACKLOG          64
/* Looking for the device again: first after this, doubling up to the cap. */
#define DEVICE_RETRY_MIN_MS     500u
#define DEVICE_RETRY_MAX_MS     5000u
/* Waiting this long for ids to be destroyed is worth saying once. */
#define DEVICE_STUCK_USEC       (10 * 1000000ull)

static void device_format_listen(const struct engine *e, char *buf, size_t len)
{
        const struct config *cfg = e->cfg;

        snprintf(buf, len, "%s:%u", cfg->listen_addr[0] ? cfg->listen_addr : "*", cfg->port);
}

/* @quiet: a retry; say nothing about the expected failure to bind. */
static int device_bind(struct engine *e, bool quiet)
{
        const struct config *cfg = e->cfg;
        struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
        struct addrinfo *ai = NULL;
        char port[8], where[96];
        int r;

        snprintf(port, sizeof(port), "%u", cfg->port);
        r = getaddrinfo(cfg->listen_addr[0] ? cfg->listen_addr : "0.0.0.0", port, &hints, &ai);
        if (r != 0) {
                log_err("listen address %s: %s", cfg->listen_addr, gai_strerror(r));
                return -EINVAL;
        }
        if (rdma_bind_addr(e->listen_id, ai->ai_addr)) {
                r = -errno;
                device_format_listen(e, where, sizeof(where));
                if (!quiet)
                        log_err("cannot bind RDMA listener to %s: %s%s", where, strerror(-r),
                                r == -EADDRNOTAVAIL || r == -ENODEV ?
                                " (no RDMA device has that address; see `rdma link show`)" : "");
                else
                        log_debug("binding the RDMA listener to %s: %s", where, strerror(-r));
                freeaddrinfo(ai);
                return r;
        }
        if (cfg->listen_addr[0]) {
                /* Outgoing connections leave from here too; port 0, the
                 * listener owns the real one. */
                memcpy(&e->src, ai->ai_addr, ai->ai_addrlen);
                if (e->src.ss_family == AF_INET)
                        ((struct sockaddr_in *)&e->src)->sin_port = 0;
                else
                        ((struct sockaddr_in6 *)&e->src)->sin6_port = 0;
                e->have_src = true;
        }
        freeaddrinfo(ai);
        return 0;
}

static int device_pick(struct engine *e)
{
        struct ibv_context **list;
        int n = 0;

        if (e->listen_id->verbs) {
                e->verbs = e->listen_id->verbs;
                return 0;
        }
        /* Listening on the wildcard: the ring goes on the only device. */
        list = rdma_get_devices(&n);
        if (!list || n == 0) {
                if (list)
                        rdma_free_devices(list);
                return -ENODEV;
        }
        if (n > 1)
                log_warning("listen address is a wildcard and there are %d RDMA devices; using %s "
                            "(run one instance per device with `listen =` set)", n,
                            ibv_get_device_name(list[0]->device));
        e->verbs = list[0];
        rdma_free_devices(list);
        return 0;
}

static int device_register(struct engine *e, void *mem, size_t bytes, struct ibv_mr **mr,
                           const char *what)
{
        struct rlimit rl;
        char hint[128] = "";
        int r;

        /* Local access only: peers never get an rkey, so no remote side can
         * touch this memory except through receives we posted. */
        *mr = ibv_reg_mr(e->pd, mem, bytes, IBV_ACCESS_LOCAL_WRITE);
        if (*mr)
                return 0;
        r = -errno;
        getrlimit(RLIMIT_MEMLOCK, &rl);
        if (r == -ENOMEM && rl.rlim_cur != RLIM_INFINITY)
                snprintf(hint, sizeof(hint), " (RLIMIT_MEMLOCK is %llu MiB for both rings "
                         "and the queues: raise LimitMEMLOCK=, see rdmaxferd(8))",
                         (unsigned long long)(rl.rlim_cur >> 20));
        log_err("cannot register %s (%zu MiB): %s%s", what, bytes >> 20, strerror(-r), hint);
        return r;
}

static void device_on_async(evutil_socket_t fd, short what, void *arg);

/* Everything device_open() set up, in reverse; safe on a partial open. */
static void device_close(struct engine *e)
{
        struct ibv_context **list;

        if (e->async_ev)
                event_free(e->async_ev);
        e->async_ev = NULL;
        if (e->send_mr && ibv_dereg_mr(e->send_mr))
                log_err("ibv_dereg_mr (send pool): %m");
        e->send_mr = NULL;
        if (e->ring_mr && ibv_dereg_mr(e->ring_mr))
                log_err("ibv_dereg_mr (receive ring): %m");
        e->ring_mr = NULL;
        if (e->pd) {
                errno = ibv_dealloc_pd(e->pd);
                if (errno)
                        log_err("ibv_dealloc_pd: %m");
        }
        e->pd = NULL;
        /* A listener has no disconnect to wait for: destroyed here, so the
         * port is free at once for whoever binds it next. */
        if (e->listen_id)
                rdma_destroy_id(e->listen_id);
        e->listen_id = NULL;
        e->verbs = NULL;
        e->env.verbs = NULL;
        e->env.pd = NULL;
        e->have_src = false;
        /* librdmacm keeps a context per device until its last id is gone
         * and it has noticed the device is: rescanning makes it close a
         * removed one now rather than at the next connection. */
        if (e->dev_state != ENGINE_DEV_UP) {
                list = rdma_get_devices(NULL);
                if (list)
                        rdma_free_devices(list);
        }
}

int engine_device_open(struct engine *e, bool quiet)
{
        int flags, r;

        if (rdma_create_id(e->ch, &e->listen_id, NULL, RDMA_PS_TCP)) {
                r = -errno;
                log_err("rdma_create_id: %m");
                return r;
        }
        /* What connections accepted here inherit on iWARP; on InfiniBand
         * and RoCE they take the connecting side's class (rdmaxferd.conf(5), tos). */
        if (e->cfg->tos >= 0) {
                uint8_t tos = (uint8_t)e->cfg->tos;

                if (rdma_set_option(e->listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)))
                        log_warning("setting tos %u on the listener: %m", tos);
        }
        r = device_bind(e, quiet);
        if (r < 0)
                goto fail;
        r = device_pick(e);
        if (r < 0) {
                if (!quiet)
                        log_err("no RDMA device found (is a driver loaded? `rdma link show`)");
                goto fail;
        }
        snprintf(e->dev_name, sizeof(e->dev_name), "%s", ibv_get_device_name(e->verbs->device));
        /* 0 on the wildcard: every port of the device is ours. */
        e->port_num = e->listen_id->port_num;
        e->pd = ibv_alloc_pd(e->verbs);
        if (!e->pd) {
                r = -errno;
                log_err("ibv_alloc_pd: %m");
                goto fail;
        }
        e->env.verbs = e->verbs;
        e->env.pd = e->pd;
        r = device_register(e, e->ring_mem, e->ring_bytes, &e->ring_mr, "receive ring");
        if (r < 0)
                goto fail;
        r = device_register(e, e->send_mem, e->send_bytes, &e->send_mr, "send pool");
        if (r < 0)
                goto fail;

        flags = fcntl(e->verbs->async_fd, F_GETFL);
        if (flags < 0 || fcntl(e->verbs->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                goto fail;
        }
        e->async_ev = event_new(e->base, e->verbs->async_fd, EV_READ | EV_PERSIST,
                                device_on_async, e);
        if (!e->async_ev || event_add(e->async_ev, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        /* Last: nobody connects before the memory is registered. */
        if (rdma_listen(e->listen_id, ENGINE_BACKLOG)) {
                r = -errno;
                log_err("rdma_listen: %m");
                goto fail;
        }
        return 0;

fail:
        device_close(e);
        return r;
}

/* Fail every transfer, in both directions, with @text. */
static unsigned int device_kill_all(struct engine *e, const char *text)
{
        unsigned int n = 0;

        for (int dir = 0; dir < XFER_DIRS; dir++) {
                struct xfer *x, *xn;

                /* Reaping is deferred, so nothing leaves the list under us. */
                for (x = e->xfers[dir]; x; x = xn) {
                        xn = x->next;
                        n += !x->decided;
                        xfer_kill(x, WIRE_E_INTERNAL, text);
                }
        }
        return n;
}

static void device_arm_retry(struct engine *e, unsigned int ms)
{
        struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

        evtimer_add(e->dev_timer, &tv);
}

/* Lost and nothing left on the device: let go of it, then look for it. */
void engine_device_check(struct engine *e)
{
        if (e->dev_state != ENGINE_DEV_LOST || e->stopping || e->freeing)
                return;
        if (e->xfers[XFER_RECV] || e->xfers[XFER_SEND] || reaper_pending(e->reaper))
                return;
        device_close(e);
        e->dev_state = ENGINE_DEV_DOWN;
        log_notice("released RDMA device %s; waiting for a device with the listen address",
                   e->dev_name);
        e->dev_backoff_ms = DEVICE_RETRY_MIN_MS;
        device_arm_retry(e, 0);
}

void engine_device_lost(struct engine *e, const char *fmt, ...)
{
        char text[XFER_TEXT_MAX + 1];
        unsigned int n;
        va_list ap;

        if (e->dev_state != ENGINE_DEV_UP || e->stopping)
                return;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        e->dev_state = ENGINE_DEV_LOST;
        e->dev_lost_usec = clock_usec(CLOCK_MONOTONIC);
        /* The kernel has closed the ids of a removed device itself. */
        reaper_park(e->reaper, false);
        e->dev_stuck_said = false;
        if (e->async_ev)
                event_del(e->async_ev);
        /* No new connections on a device that is going. */
        if (e->listen_id)
                rdma_destroy_id(e->listen_id);
        e->listen_id = NULL;
        n = device_kill_all(e, text);
        log_err("%s: failed %u transfer(s); releasing the device", text, n);
        if (e->ops && e->ops->device)
                e->ops->device(e->owner, false, text);
        engine_device_check(e);
        /* Something still holds the device: check back while we wait. */
        if (e->dev_state == ENGINE_DEV_LOST)
                device_arm_retry(e, 1000);
}

static void device_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct engine *e = arg;
        char where[96];

        if (e->stopping)
                return;
        if (e->dev_state == ENGINE_DEV_LOST) {
                uint64_t now = clock_usec(CLOCK_MONOTONIC);

                if (!e->dev_stuck_said && now - e->dev_lost_usec > DEVICE_STUCK_USEC) {
                        e->dev_stuck_said = true;
                        log_warning("still releasing RDMA device %s after %.0f s: %u connection(s) "
                                    "being destroyed in the kernel, %s transfer(s) finishing",
                                    e->dev_name, (double)(now - e->dev_lost_usec) / 1e6,
                                    reaper_pending(e->reaper),
                                    e->xfers[XFER_RECV] || e->xfers[XFER_SEND] ? "some" : "no");
                }
                device_arm_retry(e, 1000);
                return;
        }
        if (e->dev_state != ENGINE_DEV_DOWN)
                return;
        if (engine_device_open(e, true) < 0) {
                device_arm_retry(e, e->dev_backoff_ms);
                e->dev_backoff_ms = MIN(e->dev_backoff_ms * 2, DEVICE_RETRY_MAX_MS);
                return;
        }
        e->dev_state = ENGINE_DEV_UP;
        device_format_listen(e, where, sizeof(where));
        log_notice("RDMA device %s is back: listening on %s again", e->dev_name, where);
        if (e->ops && e->ops->device)
                e->ops->device(e->owner, true, e->dev_name);
}

static void device_port_down(struct engine *e, unsigned int port)
{
        char text[XFER_TEXT_MAX + 1];
        unsigned int n;

        snprintf(text, sizeof(text), "RDMA port %s/%u went down", e->dev_name, port);
        /* Their ids wait for the port (reaper.h says why). */
        reaper_park(e->reaper, true);
        n = device_kill_all(e, text);
        log_err("%s: failed %u transfer(s)", text, n);
}

static void device_on_async(evutil_socket_t fd, short what, void *arg)
{
        struct engine *e = arg;
        struct ibv_async_event ev;

        while (e->verbs && e->dev_state == ENGINE_DEV_UP && ibv_get_async_event(e->verbs, &ev) == 0) {
                enum ibv_event_type type = ev.event_type;
                unsigned int port = (unsigned int)ev.element.port_num;

                /* Acked at once: destroying a QP waits for its events' acks. */
                ibv_ack_async_event(&ev);
                switch (type) {
                case IBV_EVENT_PORT_ERR:
                        /* Another port of a multi-port device is not ours. */
                        if (e->port_num && port != e->port_num)
                                log_notice("RDMA port %s/%u is down", e->dev_name, port);
                        else
                                device_port_down(e, port);
                        break;
                case IBV_EVENT_PORT_ACTIVE:
                        log_notice("RDMA port %s/%u is active", e->dev_name, port);
                        reaper_park(e->reaper, false);
                        break;
                case IBV_EVENT_DEVICE_FATAL:
                        engine_device_lost(e, "RDMA device %s failed (fatal device event)", e->dev_name);
                        return;
                default:
                        log_debug("RDMA device %s: async event %s", e->dev_name, ibv_event_type_str(type));
                        break;
                }
        }
}

int engine_device_init(struct engine *e)
{
        e->dev_timer = evtimer_new(e->base, device_on_timer, e);
        return e->dev_timer ? 0 : -ENOMEM;
}

void engine_device_deinit(struct engine *e)
{
        if (e->dev_timer)
                event_free(e->dev_timer);
        e->dev_timer = NULL;
        device_close(e);
}
