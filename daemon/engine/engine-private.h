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
#include "config.h"
#include "conn.h"
#include "ring.h"
#include "xfer.h"

struct io;

struct engine {
        struct event_base *base;
        const struct config *cfg;
        const struct auth_key *key;
        struct rdma_event_channel *ch;
        struct event *ch_ev;
        struct rdma_cm_id *listen_id;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
        struct conn_env env;            /* base, verbs, pd: for connections */
        uint32_t slot_size;
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
        struct sockaddr_storage src;    /* listen address, source of outgoing connections */
        bool have_src;
        struct xfer *xfers[XFER_DIRS];
        struct xfer *dead;              /* ended, waiting for disk requests (xfer.h) */
        struct engine_fstat *fstats;    /* owners' files being checked */
        bool stopping;
        bool freeing;                   /* engine_free: no callbacks */
        void (*stop_done)(void *userdata);
        void *stop_userdata;
        struct event *stop_ev;
};

/* A transfer left the engine's list: finish a stop once none is left. */
void engine_xfer_gone(struct engine *e);

/* recv-accept.c: a CONNECT_REQUEST on the listener. */
void recv_on_connect_request(struct engine *e, struct rdma_cm_id *id,
                             const void *pdata, size_t plen);
/* recv.c, send.c: fail a transfer (the receiver says so on the wire). */
void recv_abort(struct xfer *x, unsigned int status, const char *text);
void send_abort(struct xfer *x, enum engine_outcome outcome, unsigned int status, const char *text);
