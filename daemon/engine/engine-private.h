#pragma once

/* The engine's state, shared by engine.c, conn.c, recv.c and send.c only. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <event2/event.h>
#include <rdma/rdma_cma.h>

#include "ring.h"

struct daemon;
struct io;
struct recv_xfer;
struct sender;

struct engine {
        struct daemon *d;
        struct event_base *base;
        struct rdma_event_channel *ch;
        struct event *ch_ev;
        struct rdma_cm_id *listen_id;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
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
        struct recv_xfer *recvs;
        struct sender *senders;
        bool stopping;
        void (*stop_done)(struct daemon *d);
        struct event *stop_ev;
};

/* Called by recv.c/send.c when a connection is gone, to finish a stop. */
void engine_conn_gone(struct engine *e);

/* recv.c */
void recv_on_connect_request(struct engine *e, struct rdma_cm_id *id,
                             const void *pdata, size_t plen);
void recv_abort(struct recv_xfer *x, unsigned int status, const char *text);
struct recv_xfer *recv_next(struct recv_xfer *x);

/* send.c */
void sender_abort(struct sender *s, int state, unsigned int status, const char *text);
struct sender *sender_next(struct sender *s);
