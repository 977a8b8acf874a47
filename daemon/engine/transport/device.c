/*
 * The RDMA device, its listener, PD, registered memory and async events
 * (device.h).
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <event2/event.h>

#include "acl.h"
#include "clock.h"
#include "device.h"
#include "log.h"
#include "rails.h"
#include "reaper.h"

#define DEVICE_BACKLOG          64
/* Looking for the device again: first after this, doubling up to the cap. */
#define DEVICE_RETRY_MIN_MS     500u
#define DEVICE_RETRY_MAX_MS     5000u
/* Waiting this long for ids to be destroyed is worth saying once. */
#define DEVICE_STUCK_USEC       (10 * 1000000ull)

void device_names(const struct device *devs, unsigned int n, unsigned int mask, char *buf, size_t len)
{
        size_t off = 0;

        if (len)
                buf[0] = '\0';
        for (unsigned int i = 0; i < n && off < len; i++) {
                if (!(mask & (1u << i)))
                        continue;
                off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", devs[i].name);
        }
}

void device_lane_counts(const uint8_t *counts, unsigned int n, unsigned int mask, char *buf, size_t len)
{
        size_t off = 0;

        if (len)
                buf[0] = '\0';
        if (__builtin_popcount(mask) < 2)
                return;
        for (unsigned int i = 0; i < n && off < len; i++)
                if (mask & (1u << i))
                        off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? "," : "", counts[i]);
}

void device_listen_str(const struct device *d, char *buf, size_t len)
{
        snprintf(buf, len, "%s:%u", d->cfg.listen_addr[0] ? d->cfg.listen_addr : "*", d->cfg.port);
}

/* The prefix length of the subnet of the interface that holds @sa: rails
 * pair by it (rails.h). 0 when no interface has it. */
static unsigned int device_prefix(const struct sockaddr *sa)
{
        struct ifaddrs *list, *i;
        unsigned int n = 0;

        if (getifaddrs(&list) < 0)
                return 0;
        for (i = list; i; i = i->ifa_next) {
                if (!i->ifa_addr || !i->ifa_netmask || !acl_same_addr(i->ifa_addr, sa))
                        continue;
                n = rails_prefix_of(i->ifa_netmask);
                break;
        }
        freeifaddrs(list);
        return n;
}

/* @quiet: a retry; say nothing about the expected failure to bind. */
static int device_bind(struct device *d, bool quiet)
{
        const struct device_cfg *cfg = &d->cfg;
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
        if (rdma_bind_addr(d->listen_id, ai->ai_addr)) {
                r = -errno;
                device_listen_str(d, where, sizeof(where));
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
                memcpy(&d->src, ai->ai_addr, ai->ai_addrlen);
                d->prefix = device_prefix(ai->ai_addr);
                if (d->src.ss_family == AF_INET)
                        ((struct sockaddr_in *)&d->src)->sin_port = 0;
                else
                        ((struct sockaddr_in6 *)&d->src)->sin6_port = 0;
                d->have_src = true;
        }
        freeaddrinfo(ai);
        return 0;
}

static int device_pick(struct device *d)
{
        struct ibv_context **list;
        int n = 0;

        if (d->listen_id->verbs) {
                d->verbs = d->listen_id->verbs;
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
        d->verbs = list[0];
        rdma_free_devices(list);
        return 0;
}

static int device_register(struct device *d, struct device_mem *m)
{
        struct rlimit rl;
        char hint[128] = "";
        int r;

        /* Local access only: peers never get an rkey, so no remote side can
         * touch this memory except through receives we posted. */
        m->mr = ibv_reg_mr(d->pd, m->mem, m->bytes, IBV_ACCESS_LOCAL_WRITE);
        if (m->mr)
                return 0;
        r = -errno;
        getrlimit(RLIMIT_MEMLOCK, &rl);
        if (r == -ENOMEM && rl.rlim_cur != RLIM_INFINITY)
                snprintf(hint, sizeof(hint), " (RLIMIT_MEMLOCK is %llu MiB for both rings "
                         "on every rail and the queues: raise LimitMEMLOCK=, see rdmaxferd(8))",
                         (unsigned long long)(rl.rlim_cur >> 20));
        log_err("cannot register %s (%zu MiB): %s%s", m->what, m->bytes >> 20, strerror(-r), hint);
        return r;
}

static void device_on_async(evutil_socket_t fd, short what, void *arg);

/* Everything device_open() set up, in reverse; safe on a partial open. */
static void device_close(struct device *d)
{
        struct ibv_context **list;

        if (d->async_ev)
                event_free(d->async_ev);
        d->async_ev = NULL;
        for (unsigned int i = d->nmem; i-- > 0;) {
                if (d->mem[i].mr && ibv_dereg_mr(d->mem[i].mr))
                        log_err("ibv_dereg_mr (%s): %m", d->mem[i].what);
                d->mem[i].mr = NULL;
        }
        if (d->pd) {
                errno = ibv_dealloc_pd(d->pd);
                if (errno)
                        log_err("ibv_dealloc_pd: %m");
        }
        d->pd = NULL;
        /* A listener has no disconnect to wait for: destroyed here, so the
         * port is free at once for whoever binds it next. */
        if (d->listen_id)
                rdma_destroy_id(d->listen_id);
        d->listen_id = NULL;
        d->verbs = NULL;
        if (d->env) {
                d->env->verbs = NULL;
                d->env->pd = NULL;
        }
        d->have_src = false;
        /* librdmacm keeps a context per device until its last id is gone
         * and it has noticed the device is: rescanning makes it close a
         * removed one now rather than at the next connection. */
        if (d->state != DEVICE_UP) {
                list = rdma_get_devices(NULL);
                if (list)
                        rdma_free_devices(list);
        }
}

int device_open(struct device *d, bool quiet)
{
        int flags, r;

        if (rdma_create_id(d->ch, &d->listen_id, NULL, RDMA_PS_TCP)) {
                r = -errno;
                log_err("rdma_create_id: %m");
                return r;
        }
        /* What connections accepted here inherit on iWARP; on InfiniBand
         * and RoCE they take the connecting side's class (rdmaxferd.conf(5), tos). */
        if (d->cfg.tos >= 0) {
                uint8_t tos = (uint8_t)d->cfg.tos;

                if (rdma_set_option(d->listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)))
                        log_warning("setting tos %u on the listener: %m", tos);
        }
        r = device_bind(d, quiet);
        if (r < 0)
                goto fail;
        r = device_pick(d);
        if (r < 0) {
                if (!quiet)
                        log_err("no RDMA device found (is a driver loaded? `rdma link show`)");
                goto fail;
        }
        snprintf(d->name, sizeof(d->name), "%s", ibv_get_device_name(d->verbs->device));
        /* 0 on the wildcard: every port of the device is ours. */
        d->port_num = d->listen_id->port_num;
        d->pd = ibv_alloc_pd(d->verbs);
        if (!d->pd) {
                r = -errno;
                log_err("ibv_alloc_pd: %m");
                goto fail;
        }
        d->env->verbs = d->verbs;
        d->env->pd = d->pd;
        d->env->dev = d;
        /* A rail whose port is not active carries no lane until it is. */
        if (d->port_num) {
                struct ibv_port_attr pa;

                d->port_down = ibv_query_port(d->verbs, (uint8_t)d->port_num, &pa) == 0 &&
                               pa.state != IBV_PORT_ACTIVE;
        } else {
                d->port_down = false;
        }
        for (unsigned int i = 0; i < d->nmem; i++) {
                r = device_register(d, &d->mem[i]);
                if (r < 0)
                        goto fail;
        }

        flags = fcntl(d->verbs->async_fd, F_GETFL);
        if (flags < 0 || fcntl(d->verbs->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                goto fail;
        }
        d->async_ev = event_new(d->base, d->verbs->async_fd, EV_READ | EV_PERSIST,
                                device_on_async, d);
        if (!d->async_ev || event_add(d->async_ev, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        /* Last: nobody connects before the memory is registered. */
        if (rdma_listen(d->listen_id, DEVICE_BACKLOG)) {
                r = -errno;
                log_err("rdma_listen: %m");
                goto fail;
        }
        return 0;

fail:
        device_close(d);
        return r;
}

static void device_arm_retry(struct device *d, unsigned int ms)
{
        struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

        evtimer_add(d->timer, &tv);
}

/* Lost and nothing left on the device: let go of it, then look for it. */
void device_check(struct device *d)
{
        if (d->state != DEVICE_LOST || d->stopping)
                return;
        if (d->ops->busy(d->owner, d) || reaper_pending(d->reaper))
                return;
        device_close(d);
        d->state = DEVICE_DOWN;
        log_notice("released RDMA device %s; waiting for a device with the listen address", d->name);
        d->backoff_ms = DEVICE_RETRY_MIN_MS;
        device_arm_retry(d, 0);
}

void device_lost(struct device *d, const char *fmt, ...)
{
        char text[256];
        unsigned int n;
        va_list ap;

        if (d->state != DEVICE_UP || d->stopping)
                return;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        d->state = DEVICE_LOST;
        d->lost_usec = clock_usec(CLOCK_MONOTONIC);
        /* The kernel has closed the ids of a removed device itself. */
        reaper_device_gone(d->reaper, true);
        d->stuck_said = false;
        if (d->async_ev)
                event_del(d->async_ev);
        /* No new connections on a device that is going. */
        if (d->listen_id)
                rdma_destroy_id(d->listen_id);
        d->listen_id = NULL;
        n = d->ops->kill_all(d->owner, d, text);
        log_err("%s: failed %u transfer(s); releasing the device", text, n);
        if (d->ops->changed)
                d->ops->changed(d->owner, d, false, text);
        device_check(d);
        /* Something still holds the device: check back while we wait. */
        if (d->state == DEVICE_LOST)
                device_arm_retry(d, 1000);
}

static void device_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct device *d = arg;
        char where[96];

        if (d->stopping)
                return;
        if (d->state == DEVICE_LOST) {
                uint64_t now = clock_usec(CLOCK_MONOTONIC);

                if (!d->stuck_said && now - d->lost_usec > DEVICE_STUCK_USEC) {
                        d->stuck_said = true;
                        log_warning("still releasing RDMA device %s after %.0f s: %u connection(s) "
                                    "being destroyed in the kernel, %s transfer(s) finishing",
                                    d->name, (double)(now - d->lost_usec) / 1e6, reaper_pending(d->reaper),
                                    d->ops->busy(d->owner, d) ? "some" : "no");
                }
                device_arm_retry(d, 1000);
                return;
        }
        if (d->state != DEVICE_DOWN)
                return;
        if (device_open(d, true) < 0) {
                device_arm_retry(d, d->backoff_ms);
                d->backoff_ms = MIN(d->backoff_ms * 2, DEVICE_RETRY_MAX_MS);
                return;
        }
        d->state = DEVICE_UP;
        reaper_device_gone(d->reaper, false);
        device_listen_str(d, where, sizeof(where));
        log_notice("RDMA device %s is back: listening on %s again", d->name, where);
        if (d->ops->changed)
                d->ops->changed(d->owner, d, true, d->name);
}

static void device_port_down(struct device *d, unsigned int port)
{
        char text[256];
        unsigned int n;

        snprintf(text, sizeof(text), "RDMA port %s/%u went down", d->name, port);
        d->port_down = true;
        /* Their ids wait for the port (reaper.h says why). */
        reaper_park(d->reaper, true);
        n = d->ops->kill_all(d->owner, d, text);
        log_err("%s: failed %u transfer(s)", text, n);
}

static void device_on_async(evutil_socket_t fd, short what, void *arg)
{
        struct device *d = arg;
        struct ibv_async_event ev;

        while (d->verbs && d->state == DEVICE_UP && ibv_get_async_event(d->verbs, &ev) == 0) {
                enum ibv_event_type type = ev.event_type;
                unsigned int port = (unsigned int)ev.element.port_num;

                /* Acked at once: destroying a QP waits for its events' acks. */
                ibv_ack_async_event(&ev);
                switch (type) {
                case IBV_EVENT_PORT_ERR:
                        /* Another port of a multi-port device is not ours. */
                        if (d->port_num && port != d->port_num)
                                log_notice("RDMA port %s/%u is down", d->name, port);
                        else
                                device_port_down(d, port);
                        break;
                case IBV_EVENT_PORT_ACTIVE:
                        log_notice("RDMA port %s/%u is active", d->name, port);
                        d->port_down = false;
                        reaper_park(d->reaper, false);
                        break;
                case IBV_EVENT_DEVICE_FATAL:
                        device_lost(d, "RDMA device %s failed (fatal device event)", d->name);
                        return;
                default:
                        log_debug("RDMA device %s: async event %s", d->name, ibv_event_type_str(type));
                        break;
                }
        }
}

int device_init(struct device *d, struct event_base *base, struct rdma_event_channel *ch, struct reaper *reaper,
                struct conn_env *env, const struct device_cfg *cfg, const struct device_ops *ops, void *owner)
{
        *d = (struct device){ .base = base, .ch = ch, .reaper = reaper, .env = env, .cfg = *cfg, .ops = ops,
                              .owner = owner };
        env->dev = d;
        d->timer = evtimer_new(base, device_on_timer, d);
        return d->timer ? 0 : -ENOMEM;
}

unsigned int device_add_mem(struct device *d, void *mem, size_t bytes, const char *what)
{
        assert(d->nmem < DEVICE_MEM_MAX);
        d->mem[d->nmem] = (struct device_mem){ .mem = mem, .bytes = bytes, .what = what };
        return d->nmem++;
}

void device_deinit(struct device *d)
{
        if (d->timer)
                event_free(d->timer);
        d->timer = NULL;
        device_close(d);
}
