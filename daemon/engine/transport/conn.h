#pragma once

/*
 * What an incoming transfer and an outgoing sender share: an rdma_cm id, an
 * RC QP, its CQ and completion channel, the CQ event on the loop, a few
 * registered buffers for control messages, and deferred teardown. The owner
 * (recv.c, send.c) supplies callbacks.
 */

#include <stdbool.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include "wire.h"

struct conn;
struct device;
struct reaper;

/* What connections are made on: the loop, the device and its PD (the
 * engine's, which outlive every connection), and who destroys ids. One
 * per rail (device.h): a connection takes its rail's once its id is bound
 * to a device. */
struct conn_env {
        struct event_base *base;
        struct ibv_context *verbs;
        struct ibv_pd *pd;
        struct reaper *reaper;
        struct device *dev;             /* the rail: its registered memory's keys */
};

/* High bit of a wr_id marks a control-message buffer; the rest is its index. */
#define CONN_WRID_CTRL          (1ull << 63)
#define CONN_CTRL_BUFS          16

struct conn_ops {
        /* A CM event for this connection; the event is already acked, and
         * its private data (if any) copied into @pdata/@plen. */
        void (*cm_event)(struct conn *c, enum rdma_cm_event_type type, int status,
                         const void *pdata, size_t plen);
        /* One work completion, success or error. */
        void (*wc)(struct conn *c, const struct ibv_wc *wc);
        /* After a batch of completions: a moment to post batched work. */
        void (*wc_batch_end)(struct conn *c);
        /* Teardown finished: the QP, CQ and id are gone; free the owner. */
        void (*reaped)(struct conn *c);
};

struct conn {
        const struct conn_ops *ops;
        const struct conn_env *env;
        struct rdma_cm_id *id;
        struct ibv_comp_channel *chan;
        struct ibv_cq *cq;
        struct event *cq_ev;
        struct event *reap_ev;
        unsigned int cq_unacked;
        char peer[80];                  /* "198.18.0.1:7470" */
        /* Control messages out: small registered buffers, each in use until
         * its (always signalled) send completes. Receive side too, on senders. */
        uint8_t (*ctrl)[WIRE_CTRL_MAX];
        struct ibv_mr *ctrl_mr;
        uint32_t ctrl_busy;             /* bitmap of CONN_CTRL_BUFS send buffers */
        unsigned int ctrl_recvs;        /* how many of ctrl[] are receive buffers */
        bool disconnecting;
        bool wc_error;                  /* a completion failed: the QP is in error */
        bool disconnect_late;           /* the reaper sends the DREQ (conn_disconnect) */
        bool reaping;
        unsigned int holds;             /* outstanding disk I/O and the like: reap waits */
};

/* Initialise @c around @id (context is set to @c). */
void conn_init(struct conn *c, const struct conn_env *env, const struct conn_ops *ops,
               struct rdma_cm_id *id);

/*
 * Create the completion channel, CQ and QP on the env's PD, sized for
 * @send_wr/@recv_wr, the control buffers (@ctrl_recvs of them are posted as
 * receives now), and the CQ event. 0 or -errno.
 */
int conn_setup_qp(struct conn *c, unsigned int send_wr, unsigned int recv_wr, unsigned int ctrl_recvs);

/* Post a control message (always signalled). 0, -ENOBUFS when no buffer
 * is free (a caller can retry after a completion), or -errno. */
int conn_send_ctrl(struct conn *c, const struct wire_msg *m);
unsigned int conn_ctrl_free(const struct conn *c);
/* Handle a completion whose wr_id has CONN_WRID_CTRL: frees send buffers,
 * returns the control receive buffer's bytes (reposting is conn_repost_ctrl). */
const void *conn_ctrl_buf(struct conn *c, uint64_t wr_id);
void conn_ctrl_send_done(struct conn *c, uint64_t wr_id);
int conn_repost_ctrl(struct conn *c, uint64_t wr_id);

/* Destroy the QP now: no more completions, no more DMA into buffers. */
void conn_destroy_qp(struct conn *c);
/* Release everything at once, without callbacks; the id goes to the
 * reaper (never destroyed on the loop). */
void conn_teardown(struct conn *c);

/* rdma_disconnect once; the DISCONNECTED event follows. */
void conn_disconnect(struct conn *c);
/* Schedule teardown from the loop (never frees inside the caller). Runs
 * once holds drops to zero; ends with ops->reaped. */
void conn_reap(struct conn *c);
void conn_hold(struct conn *c);
void conn_unhold(struct conn *c);

/* Connection parameters for rdma_connect/rdma_accept: @pdata as private
 * data, and the same retry policy on both sides. */
void conn_param(struct rdma_conn_param *p, const void *pdata, size_t plen);

/* Format a sockaddr as "addr:port". */
void conn_format_addr(const struct sockaddr *sa, char *buf, size_t len);
