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
        RECV_FINISHING,         /* END seen; draining writes, fsync, publish */
        RECV_CLOSING,           /* verdict sent or connection lost */
};

struct recv_slot {
        struct io_req io;
        struct recv_xfer *x;
        uint32_t slot;          /* index into the engine's ring */
        uint32_t len;
};

struct recv_xfer {
        struct conn conn;
        struct recv_xfer *next;
        enum recv_state state;
        struct ring_hold hold;  /* its ring slots; the index is the wr_id */
        struct recv_slot *rs;   /* per index */
        uint8_t nonce[WIRE_NONCE_SIZE];
        struct wire_offer offer;
        int fd;
        uint64_t nchunks;
        uint64_t next_seq;
        uint64_t bytes_recv;
        uint64_t bytes_written;
        unsigned int writes;    /* in flight */
        uint32_t credits_pending;
        struct wire_end end;
        struct digest digest;
        struct io_req file_req;        /* fallocate, then fsync: never both */
        uint64_t t_start;       /* usec, CLOCK_MONOTONIC, when ACCEPT went out */
        uint64_t t_last;        /* last data arrival */
        uint64_t rate_bytes, rate_t;
        uint64_t stall_mark;            /* bytes_recv when the stall timer last fired */
        struct event *timer;
        unsigned int status;    /* verdict once decided */
        char text[WIRE_TEXT_MAX + 1];
        bool logged;
};

extern const struct conn_ops recv_ops;

/* Admit @x to the ring (ring_admit): the slots it starts with, 0 when the
 * ring admits no more connections, or -ENOMEM. */
int recv_slots_admit(struct recv_xfer *x, struct ring *ring);
void recv_slots_free(struct recv_xfer *x);

int recv_post_slot(struct recv_xfer *x, uint32_t i);
void recv_arm_timer(struct recv_xfer *x, int sec);
void recv_on_timer(evutil_socket_t fd, short what, void *arg);
