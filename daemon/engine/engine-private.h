#pragma once

/*
 * What lives as long as the engine, shared by the engine's own files: the
 * owner's configuration (by pointer), the CM event channel and listener,
 * the device and PD, the receive ring and send pool with their MRs, the
 * io_uring, and the transfers of each direction (xfer.h).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <event2/event.h>
#include <rdma/rdma_cma.h>

#include "auth.h"
#include "bucket.h"
#include "config.h"
#include "conn.h"
#include "macro.h"
#include "partial.h"
#include "ring.h"
#include "stats.h"
#include "xfer.h"

struct io;
struct partials_sweep;
struct engine_clean;
struct reaper;

/* The engine's hold on its RDMA device (device.c). */
enum engine_dev_state {
        ENGINE_DEV_UP = 0,              /* listening; transfers run */
        ENGINE_DEV_LOST,                /* gone: releasing what was on it */
        ENGINE_DEV_DOWN,                /* released; looking for it again */
};

struct engine {
        struct event_base *base;
        const struct config *cfg;
        const struct auth_key *key;
        const struct engine_ops *ops;
        void *owner;
        struct rdma_event_channel *ch;
        struct event *ch_ev;
        struct rdma_cm_id *listen_id;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
        struct conn_env env;            /* base, verbs, pd, reaper: for connections */
        struct reaper *reaper;          /* rdma_destroy_id off the loop */
        enum engine_dev_state dev_state;
        char dev_name[64];              /* "rxe_beta" */
        unsigned int port_num;          /* the listener's port; 0: any */
        struct event *async_ev;         /* the device's async events */
        struct event *dev_timer;        /* lost: checks; down: looks for the device */
        unsigned int dev_backoff_ms;
        uint64_t dev_lost_usec;
        bool dev_stuck_said;
        uint32_t slot_size;
        /* The process's umask at start (engine_umask), 07777 if unknown:
         * a packed entry made with its mode needs no chmod when none of
         * its bits are masked (recv-pack.c). */
        mode_t umask;
        /* Receive ring: slot_count slots of slot_size, shared out by ring. */
        uint8_t *ring_mem;
        size_t ring_bytes;
        struct ibv_mr *ring_mr;
        struct ring ring;
        /* Send pool: max_transfers shares of send_slots chunks. */
        uint8_t *send_mem;
        size_t send_bytes;
        struct ibv_mr *send_mr;
        struct ring send_ring;
        struct io *io;
        int incoming_fd;                /* O_DIRECTORY of cfg.incoming_dir */
        /* Start-up's sweep of what a crash left there (engine.c), on a
         * worker: until it is done, offers are refused as busy. */
        struct engine_clean *clean;
        bool incoming_clean;
        bool xattr_said;                /* "no user xattrs there", once (recv-file.c) */
        int partial_fd;                 /* O_DIRECTORY of cfg.partial_dir; -1: resuming off */
        uint8_t key_id[PARTIAL_KEY_ID_SIZE];    /* partial_key_id() of our key */
        uint8_t boot_id[PARTIAL_BOOT_SIZE];     /* the host's, for a kept tree's record */
        struct partials_sweep *sweep;
        struct sockaddr_storage src;    /* listen address, source of outgoing connections */
        bool have_src;
        struct xfer *xfers[XFER_DIRS];
        /* cfg rate_limit: each direction's transfers share one (xfer.h, pacing). */
        struct bucket rate_limit[XFER_DIRS];
        struct xfer *dead;              /* ended, waiting for disk requests (xfer.h) */
        struct engine_fstat *fstats;    /* owners' files being checked */
        struct relay *relays;           /* downstreams of relay chains (relay.h) */
        struct stats_tally recv_tally;  /* incoming transfers that offered, since start */
        bool stopping;
        bool freeing;                   /* engine_free: no callbacks */
        void (*stop_done)(void *userdata);
        void *stop_userdata;
        struct event *stop_ev;
};

/* A transfer left the engine's list: finish a stop once none is left. */
void engine_xfer_gone(struct engine *e);

/* device.c */
int engine_device_init(struct engine *e);
void engine_device_deinit(struct engine *e);
/* Bind, pick the device, PD, register ring and pool, async events, listen.
 * 0 or -errno (everything undone); @quiet: a retry, expected to fail. */
int engine_device_open(struct engine *e, bool quiet);
/* The device is gone (printf-style reason): fail everything on it, let go
 * of it, look for it again. Once only, until it is back. */
void engine_device_lost(struct engine *e, const char *fmt, ...) _printf_(2, 3);
/* Progress while lost: called when a transfer or an id is gone. */
void engine_device_check(struct engine *e);

/* recv-accept.c: a CONNECT_REQUEST on the listener. */
void recv_on_connect_request(struct engine *e, struct rdma_cm_id *id,
                             const void *pdata, size_t plen);
/* recv.c, send.c: fail a transfer (the receiver says so on the wire). */
void recv_abort(struct xfer *x, unsigned int status, const char *text);
void send_abort(struct xfer *x, enum engine_outcome outcome, unsigned int status, const char *text);
