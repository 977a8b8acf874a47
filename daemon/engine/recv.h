#pragma once

/*
 * An incoming transfer, shared by recv.c (the transfer itself) and
 * recv-accept.c (the connection request that creates it).
 */

#include <stdbool.h>
#include <stdint.h>
#include <event2/event.h>

#include "conn.h"
#include "digest.h"
#include "io.h"
#include "ring.h"
#include "wire.h"

/* How long a connected peer may take to make its offer. */
#define RECV_OFFER_TIMEOUT_SEC  30
/* A sender that sends nothing for this long while it holds slots is dropped. */
#define RECV_STALL_SEC          60
/* How long to wait for the sender to hang up after RESULT or REFUSE. */
#define RECV_LINGER_SEC         5

enum recv_state {
        RECV_CONNECTING,        /* accepted, waiting for ESTABLISHED */
        RECV_OFFER_WAIT,
        RECV_DATA,
        RECV_FINISHING,         /* every lane's END seen; draining writes, fsync, publish */
        RECV_CLOSING,           /* verdict sent or connection lost */
};

/* Beyond one lane, each lane is given at least this many chunks. */
#define RECV_LANE_MIN_CHUNKS    8

struct recv_lane;
struct recv_xfer;

struct recv_slot {
        struct io_req io;
        struct recv_lane *l;
        uint32_t len;
};

/*
 * One connection of a transfer: lane 0 is the one that offered, the others
 * joined by the offer's token. Each carries its own run of chunks, in
 * order, from its own slots of the ring, with its own credits and digest.
 */
struct recv_lane {
        struct conn conn;       /* first: the conn callbacks are handed this */
        struct recv_xfer *x;
        unsigned int idx;
        struct ring_hold hold;  /* its ring slots; the index is the wr_id */
        struct recv_slot *rs;   /* per index */
        uint64_t first_seq, end_seq;    /* its run of chunks */
        uint64_t next_seq;
        uint32_t credits_pending;
        struct digest digest;   /* over its run, in order */
        struct wire_end end;
        bool ended;
};

/* An incoming transfer: the file and the verdict, shared by its lanes. */
struct recv_xfer {
        struct engine *e;
        struct recv_xfer *next;
        enum recv_state state;
        char peer[80];          /* lane 0's address */
        struct recv_lane *lane[WIRE_LANES_MAX];
        unsigned int nlanes;    /* granted (1 until the ACCEPT) */
        unsigned int nlive;     /* lanes not yet reaped */
        unsigned int nended;
        uint8_t nonce[WIRE_NONCE_SIZE];
        struct wire_offer offer;
        int fd;
        uint64_t nchunks;
        uint64_t bytes_recv;
        uint64_t bytes_written;
        unsigned int writes;    /* in flight */
        struct io_req file_req;        /* fallocate, then fsync: never both; holds lane 0 */
        uint64_t t_start;       /* usec, CLOCK_MONOTONIC, when ACCEPT went out */
        uint64_t t_last;        /* last data arrival */
        uint64_t rate_bytes, rate_t;
        uint64_t stall_mark;            /* bytes_recv when the stall timer last fired */
        struct event *timer;
        uint8_t digest[WIRE_DIGEST_SIZE];       /* the transfer's, once verified */
        unsigned int status;    /* verdict once decided */
        char text[WIRE_TEXT_MAX + 1];
        bool logged;
};

extern const struct conn_ops recv_ops;

/* A new lane of @x (lane 0 when @x is new) around @id: its slots taken
 * (ring_hold_admit for lane 0, ring_hold_join for the others), not yet
 * posted. Returns the lane, or NULL with *@err set: 0 when the ring admits
 * no more transfers, else -errno. */
struct recv_lane *recv_lane_new(struct recv_xfer *x, unsigned int idx, int *err);
/* Borrow slots while the ring lends and the lane wants more; each one
 * posted and credited. */
void recv_lane_grow(struct recv_lane *l);
void recv_lane_free(struct recv_lane *l);

int recv_post_slot(struct recv_lane *l, uint32_t i);
/* Change state; aborts on a transition that is not legal. */
void recv_set_state(struct recv_xfer *x, enum recv_state state);
/* The transfer whose file_req @req is. */
struct recv_xfer *recv_of_file_req(struct io_req *req);
/* Lane 0's OFFER (recv-accept.c): checked, then REFUSE or ACCEPT follows. */
void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o);
void recv_arm_timer(struct recv_xfer *x, int sec);
void recv_on_timer(evutil_socket_t fd, short what, void *arg);
