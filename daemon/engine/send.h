#pragma once

/*
 * The sending side of a transfer (xfer.h), shared by send.c (the data
 * path: buffers, posts, completions, the verdict) and send-connect.c
 * (starting, connecting its lanes, the offer). One struct sender per
 * transfer the owner started (the engine_send handle); one struct
 * send_lane per connection of it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine.h"
#include "io.h"
#include "wire.h"
#include "xfer.h"

#define SEND_CTRL_RECVS         16
#define SEND_RESOLVE_MS         5000
#define SEND_LINGER_SEC         5
/* A receiver that has every END must answer within this long (it fsyncs);
 * every other wait is cfg peer_timeout (xfer_arm_deadline). */
#define SEND_VERDICT_SEC        300

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
 * One connection of the transfer: lane 0 offers, the others join with the
 * offer's token. Each reads, hashes and posts its own run of chunks.
 * Buffers, by index: base.hold gives each its pool slot; the free ones
 * that have a slot are stacked in spare. The buffer of chunk seq,
 * next_done <= seq < next_read, is inflight[seq % hold.cap].
 */
struct send_lane {
        struct xfer_lane base;  /* first */
        struct send_buf *bufs;
        uint32_t *spare;
        uint32_t nspare;
        uint32_t *inflight;
        uint64_t next_read, next_post, next_done;
        uint32_t credits;
        uint32_t unsignaled;
};

/* What the owner asked for, copied: the engine never looks back at it. */
struct engine_send {
        struct xfer base;       /* first */
        const struct engine_send_ops *ops;
        void *owner;
        uint64_t id;
        unsigned int attempt;   /* the owner's, for the journal */
        int fd;                 /* our own duplicate */
        uint64_t size;
        char name[WIRE_NAME_MAX + 1];
        struct sockaddr_storage dst;
        uint8_t token[WIRE_TOKEN_SIZE];
        uint32_t chunk;
        uint64_t bwlimit;       /* bytes/s, 0: none (base.bucket) */
        uint32_t signal_every;
        uint64_t bytes_done;    /* acknowledged */
        unsigned int ndone;     /* lanes whose every chunk is acknowledged */
        uint8_t digest[WIRE_DIGEST_SIZE];       /* the file's, once every END is out */
};

static inline struct engine_send *sender_of(struct xfer *x)
{
        return container_of(x, struct engine_send, base);
}

static inline struct send_lane *send_lane_of(struct xfer_lane *l)
{
        return container_of(l, struct send_lane, base);
}

extern const struct conn_ops send_conn_ops;

/* send.c */
/*
 * Fail the transfer (the first decision wins), saying whether another
 * attempt may go another way (engine_result.transient): send_fail() for
 * what it may not meet again (the fabric, the peer's state, a deadline,
 * our own resources), send_fail_permanent() for what it would (the
 * receiver's version or protocol, authentication, our own file),
 * send_fail_peer() for a receiver's refusal or verdict, by its status
 * (wire_status_transient()).
 */
void send_fail(struct engine_send *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
void send_fail_permanent(struct engine_send *s, unsigned int status, const char *fmt, ...)
        _printf_(3, 4);
void send_fail_peer(struct engine_send *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
/* The data may flow: lane @l starts reading and posting as credits come. */
void send_pump(struct send_lane *l);
void send_post_end(struct send_lane *l);
/* The receiver accepted a transfer of nothing: END at once. */
void send_accept_empty(struct send_lane *l);
/* The receiver's messages and our completions on lane @c. */
void send_on_wc(struct conn *c, const struct ibv_wc *wc);
void send_on_batch_end(struct conn *c);
/* A new lane's buffers: 0, XFER_FULL (lane 0: the pool admits no more
 * transfers), or -errno; nothing is left of it on failure. */
int send_lane_new(struct engine_send *s, unsigned int idx, struct send_lane **out);
void send_lane_free(struct xfer_lane *l);
extern const struct xfer_ops send_xfer_ops;

/* send-connect.c */
/* engine_send(): admitted, copied, lane 0 resolving. */
int send_start(struct engine *e, const struct engine_send_req *req,
               const struct engine_send_ops *ops, void *owner, struct engine_send **out);
/* Connect lane @l: an rdma_cm id and address resolution. 0, or -errno
 * when no id could be made (the lane is untouched). */
int send_lane_connect(struct send_lane *l);
/* The receiver accepted on lane 0: connect the other lanes. */
void send_on_accept(struct send_lane *l, const struct wire_accept *a);
