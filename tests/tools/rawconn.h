#pragma once

/*
 * One blocking connection to an rdmaxferd receiver, for test tools that
 * break the protocol on purpose (rawpeer). Credits are honoured: every send
 * waits for one, so a violation is only ever the intended one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include "auth.h"
#include "wire.h"

#define RAWCONN_RECVS           16      /* receive buffers for the receiver's messages */
#define RAWCONN_SQ_DEPTH        16      /* outstanding sends, one control buffer each */
#define RAWCONN_INBOX           8

/* What happened on the connection; positive, so -errno stays distinct. */
enum rawconn_event {
        RAWCONN_MSG = 1,        /* a control message from the receiver (not CREDIT) */
        RAWCONN_DISCONNECTED,
        RAWCONN_SEND_ERROR,     /* one of our sends completed in error */
        RAWCONN_TIMEOUT,
};

/* How the hello in the connect request is broken, if at all. */
enum rawconn_hello { HELLO_OK, HELLO_VERSION, HELLO_NONE, HELLO_GARBAGE, HELLO_LANE };

struct rawconn {
        struct rdma_event_channel *ec;
        struct rdma_cm_id *listen_id;   /* rawconn_listen(): the passive side */
        struct rdma_cm_id *id;
        struct ibv_pd *pd;
        struct ibv_comp_channel *chan;
        struct ibv_cq *cq;
        unsigned int cq_unacked;
        uint8_t *rbuf;                  /* RAWCONN_RECVS x WIRE_CTRL_MAX */
        struct ibv_mr *rmr;
        uint8_t *sbuf;                  /* RAWCONN_SQ_DEPTH control buffers, then data */
        size_t sbuf_len;
        struct ibv_mr *smr;
        unsigned int ctrl_next;
        unsigned int sends_out;
        struct wire_welcome welcome;
        uint32_t credits;
        bool established;
        bool disconnected;
        bool send_failed;
        enum ibv_wc_status send_error;  /* the first bad send completion */
        struct wire_msg inbox[RAWCONN_INBOX];
        unsigned int inbox_head, inbox_len;
        unsigned int nrecv;             /* messages received, of any kind */
        struct auth_key key;            /* len 0: offers carry no MAC */
        bool claim_key;                 /* say we hold a key without one (a relay) */
        struct wire_binding binding;    /* this connection's ends (wire.h) */
        struct auth_session session;    /* with a key, from our offer on */
        /* HELLO_LANE: the lane and token to present; lane 0 means lane 1
         * with a token no offer carried. With a session, the hello carries
         * its tag, flipped when bad_tag. */
        uint16_t lane;
        uint8_t token[WIRE_TOKEN_SIZE];
        bool bad_tag;
};

#define RAWCONN_NULL ((struct rawconn){ 0 })

void rawconn_deinit(struct rawconn *c);        /* safe on RAWCONN_NULL */

/* Resolve @dst:@port from @src, create the QP, post the receives. 0 or -errno. */
int rawconn_setup(struct rawconn *c, const char *src, const char *dst, unsigned int port);

/*
 * Connect with @hello. Returns 0 when established (c->welcome decoded),
 * RAWCONN_REJECTED with @rj filled when the receiver rejected us, or -errno.
 * Prints the REJECT.
 */
enum { RAWCONN_REJECTED = 1 };
int rawconn_connect(struct rawconn *c, enum rawconn_hello hello, struct wire_reject *rj);

/*
 * The passive side, to stand in for a receiver: listen on @addr:@port;
 * rawconn_accept_req() waits for a connection request (its hello into @h)
 * and sets up its queue pair; rawconn_accept() answers it with @w and
 * waits until it is established. 0 or -errno.
 */
int rawconn_listen(struct rawconn *c, const char *addr, unsigned int port);
int rawconn_accept_req(struct rawconn *c, int timeout_ms, struct wire_hello *h);
int rawconn_accept(struct rawconn *c, const struct wire_welcome *w);

/* One MR for everything we send: control buffers, then @data_len random bytes. */
int rawconn_alloc_send(struct rawconn *c, size_t data_len);
const uint8_t *rawconn_data(const struct rawconn *c);
/* The same area, to put chosen bytes in before a send. */
uint8_t *rawconn_data_fill(struct rawconn *c);

/* Wait up to @timeout_ms until something happened; the message stays queued. */
enum rawconn_event rawconn_wait(struct rawconn *c, int timeout_ms);
/* The queued message rawconn_wait() reported, or NULL. */
const struct wire_msg *rawconn_peek(const struct rawconn *c);
/* Like rawconn_wait(), but takes the message (into @m) and prints it. */
enum rawconn_event rawconn_next(struct rawconn *c, int timeout_ms, struct wire_msg *m);

/*
 * Sends. Each waits for a credit and a send queue entry first; returns 0,
 * or the positive enum rawconn_event that came first (the receiver spoke,
 * failed a send or hung up), or -errno.
 */
int rawconn_send_ctrl(struct rawconn *c, const struct wire_msg *m);
int rawconn_send_raw(struct rawconn *c, const void *bytes, uint32_t len);
/* @len bytes at @off of the data area, as data message @seq. */
int rawconn_send_data(struct rawconn *c, size_t off, uint32_t len, uint32_t seq);
/* Chunk @seq of a file of @size bytes: the data area, cut in @chunk bytes. */
int rawconn_send_chunk(struct rawconn *c, uint64_t size, uint32_t chunk, uint32_t seq);
/* Until every posted send completed: 0, or -EIO on a failure or hang-up. */
int rawconn_flush_sends(struct rawconn *c, int timeout_ms);
