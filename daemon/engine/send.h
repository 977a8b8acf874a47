#pragma once

/*
 * An outgoing transfer, shared by send.c (the data path: buffers, posts,
 * completions, the verdict) and send-connect.c (connecting its lanes, the
 * offer, teardown). One struct sender per running job; one struct
 * send_lane per connection of it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "conn.h"
#include "ctl.h"
#include "digest.h"
#include "io.h"
#include "ring.h"
#include "wire.h"

struct engine;
struct job;

#define SEND_CTRL_RECVS         16
#define SEND_RESOLVE_MS         5000
#define SEND_LINGER_SEC         5
/* A receiver that accepted must answer END within this long (it fsyncs). */
#define SEND_VERDICT_SEC        300
/* ...and answer an OFFER within this long. */
#define SEND_OFFER_SEC          30

enum send_state {
        SEND_RESOLVING,         /* address, then route (lane 0) */
        SEND_CONNECTING,
        SEND_OFFERED,
        SEND_DATA,
        SEND_VERIFYING,         /* every lane's END posted, waiting for RESULT */
        SEND_CLOSING,
};

enum send_buf_state { BUF_FREE, BUF_READING, BUF_READY, BUF_POSTED };

struct send_lane;

struct send_buf {
        struct io_req io;
        struct send_lane *l;
        uint64_t seq;
        uint32_t len;
        enum send_buf_state state;
};

/*
 * One connection of the job: lane 0 offers, the others join with the
 * offer's token. Each reads, hashes and posts its own run of chunks.
 */
struct send_lane {
        struct conn conn;       /* first: the conn callbacks are handed this */
        struct sender *s;
        unsigned int idx;
        bool established;
        /* Buffers, by index: hold gives each its pool slot; the free ones
         * that have a slot are stacked in spare. The buffer of chunk seq,
         * next_done <= seq < next_read, is inflight[seq % hold.cap]. */
        struct ring_hold hold;
        struct send_buf *bufs;
        uint32_t *spare;
        uint32_t nspare;
        uint32_t *inflight;
        uint64_t first_seq, end_seq;    /* its run of chunks */
        uint64_t next_read, next_post, next_done;
        uint32_t credits;
        uint32_t unsignaled;
        bool end_posted;
        struct digest digest;   /* over its run, in order */
};

struct sender {
        struct engine *e;
        struct sender *next;
        struct job *job;
        enum send_state state;
        struct send_lane *lane[WIRE_LANES_MAX];
        unsigned int nlanes;    /* granted (1 until the ACCEPT) */
        unsigned int nlive;     /* lanes not yet reaped */
        unsigned int ndone;     /* lanes whose every chunk is acknowledged */
        unsigned int nended;    /* lanes whose END is posted */
        struct sockaddr_storage dst;
        uint8_t token[WIRE_TOKEN_SIZE];
        uint32_t chunk;
        uint64_t nchunks;
        uint32_t signal_every;
        uint8_t nonce[WIRE_NONCE_SIZE];
        uint64_t t_start, t_last;
        struct event *timer;
        uint8_t digest[WIRE_LANES_MAX][WIRE_DIGEST_SIZE];
        /* The outcome, once known; job_finish gets it after teardown. */
        bool decided;
        enum ctl_job_state final;
        unsigned int status;
        char text[CTL_TEXT_MAX + 1];
};

extern const struct conn_ops send_ops;

/* send.c */
void send_set_state(struct sender *s, enum send_state state);
void send_fail(struct sender *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
void send_arm_timer(struct sender *s, int sec);
void send_on_timer(evutil_socket_t fd, short what, void *arg);
/* Admit lane @l to the send pool (lane 0) or join it (the others): the
 * per-buffer arrays and the first buffers. 0, or -errno (-EBUSY: the pool
 * admits no more jobs). */
int send_bufs_admit(struct send_lane *l, struct ring *pool);
void send_lane_free(struct send_lane *l);          /* safe on NULL */
/* Pump each lane that holds no buffer (after buffers went back to the pool). */
void send_feed_starved(struct engine *e);
/* Read into free buffers and post what is ready, as credits allow. */
void send_pump(struct send_lane *l);
void send_on_wc(struct conn *c, const struct ibv_wc *wc);
void send_on_batch_end(struct conn *c);

/* send-connect.c */
/* A new lane: buffers from the pool, an rdma_cm id, address resolution
 * started. 0 or -errno (-EBUSY: the pool admits no more jobs); on failure
 * nothing of the lane is left. */
int send_lane_new(struct sender *s, unsigned int idx);
