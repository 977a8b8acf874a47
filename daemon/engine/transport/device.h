#pragma once

/*
 * The engine's hold on its RDMA device: the listener on the rdma_cm event
 * channel, the PD, the memory registered on it, and the device's async
 * events. The memory behind the registrations is the owner's and lives
 * as long as it does; only the registrations come and go with the device.
 *
 * A port that goes down (IBV_EVENT_PORT_ERR) fails every transfer at once
 * (ops->kill_all) and keeps the rest: the listener stays, and connections
 * work again when the port does. A device that goes away (device_lost():
 * RDMA_CM_EVENT_DEVICE_REMOVAL on any id, IBV_EVENT_DEVICE_FATAL, or the
 * listen address moving) is let go of entirely: transfers fail, the
 * listener goes, and once nothing holds the device any more (ops->busy
 * false, no id being destroyed: device_check()) the registrations, the PD
 * and librdmacm's context for it are released. The kernel waits for
 * exactly that before it finishes removing the device (rxe cannot
 * disassociate a context that is still open). Then a timer tries to bind
 * the listen address again, with backoff, until a device carries it, and
 * the device listens there as at start-up (ops->changed says so).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conn.h"
#include "macro.h"

struct event;
struct event_base;
struct reaper;

/* What the device calls its owner back for; on the loop. */
struct device_ops {
        /* Fail every transfer on @d with @text, saying nothing to the
         * peers: how many were not decided yet. */
        unsigned int (*kill_all)(void *owner, struct device *d, const char *text);
        /* Whether a transfer is still on @d. */
        bool (*busy)(void *owner, struct device *d);
        /* @d went away (@up false, @text why) or is back (@up true, @text
         * its name). Optional. */
        void (*changed)(void *owner, struct device *d, bool up, const char *text);
};

/* The device's part of the configuration, copied: a reload that changes
 * it needs a restart (rdmaxferd.conf(5)). */
struct device_cfg {
        char listen_addr[64];           /* numeric; "" = any */
        uint16_t port;
        int tos;                        /* -1: none */
};

/* Memory registered on the device while it is up (local access only). */
struct device_mem {
        void *mem;
        size_t bytes;
        const char *what;               /* "receive ring", for messages */
        struct ibv_mr *mr;              /* NULL while the device is not up */
};
#define DEVICE_MEM_MAX          2

enum device_state {
        DEVICE_UP = 0,                  /* listening; transfers run */
        DEVICE_LOST,                    /* gone: releasing what was on it */
        DEVICE_DOWN,                    /* released; looking for it again */
};

struct device {
        struct event_base *base;
        struct rdma_event_channel *ch;
        struct reaper *reaper;
        struct conn_env *env;           /* its verbs and pd, while up */
        const struct device_ops *ops;
        void *owner;
        struct device_cfg cfg;
        struct device_mem mem[DEVICE_MEM_MAX];
        unsigned int nmem;
        struct rdma_cm_id *listen_id;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
        enum device_state state;
        char name[64];                  /* "rxe_beta" */
        unsigned int port_num;          /* the listener's port; 0: any */
        struct event *async_ev;
        struct event *timer;            /* lost: checks; down: looks for the device */
        unsigned int backoff_ms;
        uint64_t lost_usec;
        bool stuck_said;
        bool stopping;                  /* its owner stops: no more looking */
        /* The listen address, the source of outgoing connections (port 0). */
        struct sockaddr_storage src;
        bool have_src;
        unsigned int prefix;            /* its subnet's prefix length (getifaddrs); 0: not known */
        bool port_down;                 /* PORT_ERR, no PORT_ACTIVE since */
        unsigned int idx;               /* its rail: listen's how-manieth address */
        /* Data bytes its lanes moved since start: received, and sent as
         * the peer's adapter acknowledged them (never reset: a rail that
         * comes back keeps counting). */
        uint64_t bytes_in, bytes_out;
        /* A lane that could not connect over it: new transfers leave it
         * out until then (usec, CLOCK_MONOTONIC; 0: none). Send's. */
        uint64_t avoid_until;
};

/* Rail @verbs of @n devices at @devs (one per listen address): the one up
 * on that RDMA device, or NULL. */
static inline struct device *device_of_verbs(struct device *devs, unsigned int n, const struct ibv_context *verbs)
{
        for (unsigned int i = 0; i < n; i++)
                if (devs[i].state == DEVICE_UP && devs[i].verbs == verbs)
                        return &devs[i];
        return NULL;
}

/* The names of the rails in @mask (a bit per idx) of @n at @devs,
 * comma-separated, into @buf: "rxe_alpha,rxe_alpha2". */
void device_names(const struct device *devs, unsigned int n, unsigned int mask, char *buf, size_t len);
/* How many lanes went over each rail of @mask, in device_names()' order
 * ("3,1"); "" with fewer than two rails. */
void device_lane_counts(const uint8_t *counts, unsigned int n, unsigned int mask, char *buf, size_t len);

/* Whether @d carries connections now: up, its port active. */
static inline bool device_usable(const struct device *d)
{
        return d->state == DEVICE_UP && !d->port_down;
}

/* Set up @d (nothing opened): 0 or -errno; device_deinit() either way. */
int device_init(struct device *d, struct event_base *base, struct rdma_event_channel *ch, struct reaper *reaper,
                struct conn_env *env, const struct device_cfg *cfg, const struct device_ops *ops, void *owner);
void device_deinit(struct device *d);
/* @bytes at @mem, to be registered whenever the device is up; before
 * device_open(). Its index in d->mem. */
unsigned int device_add_mem(struct device *d, void *mem, size_t bytes, const char *what);
/* Bind, pick the device, PD, register the memory, async events, listen.
 * 0 or -errno (everything undone); @quiet: a retry, expected to fail. */
int device_open(struct device *d, bool quiet);
/* The lkey of d->mem[@idx] (the device is up). */
static inline uint32_t device_lkey(const struct device *d, unsigned int idx)
{
        return d->mem[idx].mr->lkey;
}
/* The device is gone (printf-style reason): fail everything on it, let go
 * of it, look for it again. Once only, until it is back. */
void device_lost(struct device *d, const char *fmt, ...) _printf_(2, 3);
/* Progress while lost: a transfer or an id is gone. */
void device_check(struct device *d);
/* "198.18.0.2:7470", or "*:7470" on the wildcard. */
void device_listen_str(const struct device *d, char *buf, size_t len);
