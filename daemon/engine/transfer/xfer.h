#pragma once

/*
 * One transfer model for both directions. A transfer is striped over up
 * to WIRE_LANES_MAX lanes; a lane is one RC connection with its own
 * holding of a ring (the receive ring, or the send pool), its own run of
 * chunks, in order, and its own digest. What the lanes share is here: the
 * state, the lane split, the timer, feeding lanes that hold nothing, the
 * verdict (the first decision wins), hanging up, and teardown once the
 * last lane is reaped. The receive side (recv*.c) and the send side
 * (send*.c) embed these and add their data path.
 */

#include <stdbool.h>
#include <stdint.h>
#include <event2/event.h>

#include "auth.h"
#include "bucket.h"
#include "conn.h"
#include "digest.h"
#include "engine-types.h"
#include "macro.h"
#include "pace.h"
#include "rails.h"
#include "ring.h"
#include "wire.h"

struct io;
struct xfer;

enum xfer_dir {
        XFER_RECV,
        XFER_SEND,
        XFER_DIRS,
};

/* The transfer layer's part of the configuration, a copy the owner
 * replaces whole on a reload (xfer_env_reconfigure). */
struct xfer_cfg {
        unsigned int peer_timeout;      /* s: the peer's silence */
        unsigned int io_timeout;        /* s: our own disk's */
        uint64_t min_rate;              /* bytes/s every transfer is held to; 0: none */
        uint64_t rate_limit;            /* bytes/s for each direction's transfers together; 0: none */
        unsigned int lanes;             /* queue pairs of each direction, shared by its transfers */
        uint32_t slot_size;             /* bytes, for the rate limit's burst */
};

/* What the transfer layer calls its owner back for; on the loop. */
struct xfer_env_ops {
        /* A transfer left its list, or its last disk request came back:
         * a stop, or a lost device, may be done waiting. */
        void (*gone)(void *owner);
};

/*
 * The transfer layer's context: the loop, the disk, the connections' env,
 * what each direction's lanes hold slots of, both directions' transfers
 * and their shared rate limit. The owner (the engine) fills it and hands
 * it to each transfer (xfer_init); a transfer never sees the owner.
 */
struct xfer_env {
        struct event_base *base;
        struct io *io;
        const struct conn_env *conn;
        struct xfer_cfg cfg;
        struct ring *ring[XFER_DIRS];   /* the receive ring, the send pool */
        struct xfer *xfers[XFER_DIRS];
        struct xfer *dead;              /* ended, waiting for disk requests */
        /* cfg rate_limit: each direction's transfers share one (pacing). */
        struct bucket rate_limit[XFER_DIRS];
        /* Data bytes each direction moved on the wire since start, of any
         * transfer, whatever became of it (a chunk received; a chunk the
         * peer's adapter acknowledged): never goes down (engine_stats). */
        uint64_t wire_bytes[XFER_DIRS];
        const struct xfer_env_ops *ops;
        void *owner;
};

/* Replace @env's configuration with @cfg: a new rate limit applies at
 * once, to the transfers running too (xfer_pace_kick). */
void xfer_env_reconfigure(struct xfer_env *env, const struct xfer_cfg *cfg);

enum xfer_state {
        XFER_RESOLVING,         /* sender: address, then route (lane 0) */
        XFER_CONNECTING,        /* sender: connecting; receiver: accepted, not yet ESTABLISHED */
        XFER_OFFER,             /* sender: offer sent; receiver: waiting for it */
        XFER_DATA,
        XFER_FINISHING,         /* every END; sender: waiting for RESULT, receiver: fsync, publish
                                 * (then OFFER again for the session's next file) */
        XFER_CLOSING,           /* decided: hanging up */
};

/* Longer than any text a verdict carries on the wire (WIRE_TEXT_MAX). */
#define XFER_TEXT_MAX           255

struct xfer_lane {
        struct conn conn;       /* first: the conn callbacks are handed this */
        struct xfer *x;
        unsigned int idx;
        bool established;
        bool ended;             /* its END: received, or posted */
        /* Its connection broke on a rail whose port may be going down:
         * it waits for the rail's word (xfer_lane_wait_rail). */
        bool broken;
        struct ring_hold hold;  /* its slots of x->ring */
        uint64_t first_seq, end_seq;    /* its run of chunks */
        struct digest digest;   /* over its run's blocks, in order (xfer_lane_run) */
};

struct xfer_ops {
        /* A lane in DATA that holds no slot: try to get it going (slots
         * just came back to the ring, and nothing of its own will). */
        void (*feed)(struct xfer_lane *l);
        /* The timer fired (the transfer's deadline for its state). */
        void (*timeout)(struct xfer *x);
        /* The verdict was just decided: the journal entry. */
        void (*log)(struct xfer *x);
        /* Free what the side added to a lane (the lane itself too). */
        void (*lane_free)(struct xfer_lane *l);
        /* The last lane is reaped, every connection released: tell the
         * owner (optional). Disk requests may still be out (x->ios). */
        void (*ended)(struct xfer *x);
        /* Ask the kernel to give up the disk requests still out (optional):
         * the transfer is decided and nobody waits for them. */
        void (*cancel_io)(struct xfer *x);
        /* Ended, and no disk request is out: release the rest and free @x. */
        void (*gone)(struct xfer *x);
        /* The pace timer fired (xfer_pace_take): what waited for the
         * bucket may go now, lanes from @first on, round the rest. */
        void (*paced)(struct xfer *x, unsigned int first);
        /* The rail of @on is gone under @x (port down, device removed),
         * lane 0's is not: true when @x goes on without it (its lanes
         * there torn down, to join again over another rail: wire.h,
         * Rails), false to have it fail (xfer_kill). Optional. */
        bool (*rail_lost)(struct xfer *x, const struct conn_env *on, const char *text);
        /* Lane @l waited for its rail's word (xfer_lane_wait_rail) and
         * none came: it fails the transfer with @status and @text, as it
         * would have at once. Needed by a side that waits. */
        void (*rail_silent)(struct xfer_lane *l, unsigned int status, const char *text);
};

struct xfer {
        const struct xfer_ops *ops;
        struct xfer_env *env;
        struct xfer *next;      /* env's list of this direction */
        enum xfer_dir dir;
        enum xfer_state state;
        struct ring *ring;      /* what lanes hold slots of */
        char peer[80];          /* lane 0's address, or "host:port" */
        struct xfer_lane *lane[WIRE_LANES_MAX];
        unsigned int nlanes;    /* granted (1 until the ACCEPT) */
        unsigned int rails;     /* the rails its lanes went over: a bit per device.h's idx */
        uint8_t rail_lanes[RAILS_MAX];  /* how many over each */
        unsigned int rails_lost;        /* rails lost under it, its lanes there joined again elsewhere */
        unsigned int nlive;     /* lanes not yet reaped */
        unsigned int nended;
        uint8_t nonce[WIRE_NONCE_SIZE]; /* the receiver's, Nr */
        struct auth_session session;    /* with a key: from the offer on (wire.h) */
        uint64_t size;          /* the file's bytes, with the chunk size (the OFFER's) */
        uint32_t chunk;
        uint64_t nchunks;
        uint64_t bytes;         /* data moved: received, or acknowledged */
        uint64_t t_start;       /* usec, CLOCK_MONOTONIC: data starts */
        uint64_t t_last;        /* last data moved */
        uint64_t rate_bytes, rate_t;    /* engine_recv_rate's last sample */
        uint64_t t_progress;    /* usec: the peer last did anything (xfer_progress, or set
                                 * with t_last on the data path) */
        struct pace pace;       /* the min_rate window over bytes (xfer_check_pace) */
        uint64_t grace_until;   /* usec: resumed, the peer re-reads until about then (xfer_grace) */
        struct event *timer;
        /* A lane broken on a rail that may be going down (xfer_lane_wait_rail):
         * how long it waits, and what fails the transfer if nothing comes. */
        struct event *rail_timer;
        unsigned int rail_status;
        char rail_text[XFER_TEXT_MAX + 1];
        /* Pacing: its own limit (a job's --bwlimit; rate 0: none) and the
         * timer a lane that found no tokens waits on, one per transfer. */
        struct bucket bucket;
        struct event *pace_timer;
        unsigned int pace_first;        /* the lane served first when it fires next */
        /* Disk requests in flight, any lane's or the transfer's own: what
         * they read into or write from, the lanes' slots and the transfer
         * itself, stays until the last is back (xfer_io_done), even after
         * the transfer ended. */
        unsigned int ios;
        uint64_t t_io;          /* usec: one last completed, or the first went out */
        const char *io_what;    /* what the latest does, for the deadline's reason */
        bool dead;              /* ended, on env's dead list until ios is 0 */
        /* The verdict, once decided: the first decision wins. */
        bool decided;
        enum engine_outcome outcome;
        unsigned int status;    /* enum wire_status */
        bool transient;         /* FAILED: another attempt may succeed (engine_result) */
        char text[XFER_TEXT_MAX + 1];
};

/* Set up @x and put it on @env's list for @dir. 0 or -errno (then
 * nothing to undo but free(@x)). */
int xfer_init(struct xfer *x, struct xfer_env *env, enum xfer_dir dir, const struct xfer_ops *ops,
              const char *peer);
struct xfer *xfer_first(struct xfer_env *env, enum xfer_dir dir);
/* Undo xfer_init() of a transfer that never got a lane (no callback);
 * the caller frees its own object. */
void xfer_discard(struct xfer *x);

/*
 * Lane @l's connection broke (a completion error, DISCONNECTED) on a
 * rail that other rails may stand in for: a link that goes down errors
 * the queue pairs on it some milliseconds before its port says PORT_ERR,
 * so the lane waits XFER_RAIL_WAIT_MS for the device layer's word
 * (xfer_ops.rail_lost, which joins it again elsewhere and clears
 * l->broken). Nothing posts on it meanwhile. If the port stays up, the
 * transfer fails with @status and @text (xfer_ops.rail_silent).
 */
#define XFER_RAIL_WAIT_MS       2000
void xfer_lane_wait_rail(struct xfer_lane *l, unsigned int status, const char *text);

/* Change state; aborts on a transition that is not legal. */
void xfer_set_state(struct xfer *x, enum xfer_state state);
void xfer_arm_timer(struct xfer *x, int sec);

/*
 * The deadline on the peer (cfg peer_timeout): every wait before the
 * verdict ends when the peer has done nothing for that long. Arm it on
 * entering a state (it counts from then); a side calls xfer_progress()
 * whenever the peer does something. xfer_peer_silent() is for the timeout
 * op: true when the peer has been silent for peer_timeout (the transfer
 * should fail), else it re-arms for the time left and returns false.
 */
void xfer_arm_deadline(struct xfer *x);
void xfer_progress(struct xfer *x);
bool xfer_peer_silent(struct xfer *x);
/*
 * A wait the peer keeps alive with messages (sync: WAIT, or a receiver's
 * empty CREDIT while it reads a file for its digest) still has an end:
 * true once it began @since (usec, CLOCK_MONOTONIC) longer ago than
 * peer_timeout plus @bytes read at cfg min_rate or XFER_REREAD_FLOOR,
 * whichever is faster, and never longer than XFER_WAIT_MAX times
 * peer_timeout (10 min by default): what a peer says it is reading (a
 * job's bytes left are its own claim) cannot hold a slot for longer.
 */
#define XFER_WAIT_MAX           20u
bool xfer_wait_overdue(const struct xfer *x, uint64_t since, uint64_t bytes);
/* That wait's length, usec. */
uint64_t xfer_wait_limit(const struct xfer *x, uint64_t bytes);
unsigned int xfer_peer_timeout(const struct xfer *x);

/*
 * While data flows, the deadline also holds the peer to cfg min_rate:
 * x->bytes (received, or acknowledged) must grow by min_rate bytes/s
 * over each window of peer_timeout, the first opened by
 * xfer_arm_deadline() (common/pace.h). Where our own limit (pacing) is
 * lower, the floor is half of it: what we hold back is not the peer's fault. For the timeout op in DATA:
 * XFER_PACE_SILENT as xfer_peer_silent(), XFER_PACE_SLOW with "12 KiB in
 * the last 30.0 s, min_rate 1 MiB/s" in @text (the transfer should
 * fail), else it re-arms for the nearer of the two and returns
 * XFER_PACE_OK. Both read the configuration as it is now (a reload
 * applies to the window open). Our own disk comes first: with a disk
 * request out for io_timeout, XFER_PACE_DISK with xfer_disk_text() in
 * @text; with one out for less, XFER_PACE_OK (the peer is not judged).
 */
enum xfer_pace {
        XFER_PACE_OK,
        XFER_PACE_SILENT,
        XFER_PACE_SLOW,
        XFER_PACE_DISK,
};
enum xfer_pace xfer_check_pace(struct xfer *x, char *text, size_t len);

/*
 * A resumed transfer: after the ACCEPT, each side reads back and hashes
 * the @bytes kept before its lanes move data (rehash.h), and neither can
 * see the other's progress meanwhile. Both sides give the other @bytes at
 * XFER_REREAD_FLOOR bytes/s before xfer_check_pace() judges it; when that
 * is over the deadline's windows start afresh.
 */
#define XFER_REREAD_FLOOR       (64ull << 20)
void xfer_grace(struct xfer *x, uint64_t bytes);

/*
 * Pacing (cfg rate_limit, per direction; a job's bwlimit, per transfer):
 * before a chunk goes (a sender posts it, a receiver credits its slot),
 * xfer_pace_take(): true when it may go now, both buckets charged; false
 * when either is in debt, and the transfer's pace timer is armed for when
 * both are paid (ops->paced then). Without a limit it reads no clock.
 * xfer_pace_on(): whether either limit is in force.
 */
bool xfer_pace_on(const struct xfer *x);
bool xfer_pace_take(struct xfer *x, uint64_t bytes);
/* The transfer's own limit (bytes/s, 0: none) for chunks of @chunk bytes. */
void xfer_pace_set(struct xfer *x, uint64_t rate, uint64_t chunk);
/* A reload changed rate_limit: every transfer that waits looks again now. */
void xfer_pace_kick(struct xfer_env *env);

/*
 * The deadline on our own disk (cfg io_timeout). xfer_io_start() before
 * queueing a disk request (@what: "reading the file", for the reason);
 * xfer_io_done() first thing in its callback: false when the transfer has
 * ended meanwhile (the callback must touch nothing, and may have been the
 * last thing keeping the transfer's memory).
 *
 * xfer_disk_stalled() is for the timeout op: true when requests are out
 * and none completed for io_timeout (the transfer should fail with
 * xfer_disk_text()); else, with requests out, it re-arms the timer. While
 * our own disk holds a transfer up, the peer's silence is not the peer's
 * fault: xfer_stalled() checks the disk first and the peer only when no
 * disk request is out.
 */
void xfer_io_start(struct xfer *x, const char *what);
bool xfer_io_done(struct xfer *x);
bool xfer_disk_stalled(struct xfer *x);
void xfer_disk_text(const struct xfer *x, char *buf, size_t len);
enum xfer_stall { XFER_WAITING, XFER_STALL_DISK, XFER_STALL_PEER };
enum xfer_stall xfer_stalled(struct xfer *x);

/*
 * A lane's common part: its digest, and its holding of x->ring, admitted
 * (@admit: counts as a transfer and takes a share) or joined (holds
 * nothing, grows only from what the ring lends; xfer_lane_admit() may
 * admit it later). 0, XFER_FULL when the ring admits no more transfers,
 * or -errno; xfer_lane_deinit() in any case.
 */
enum { XFER_FULL = 1 };
int xfer_lane_init(struct xfer_lane *l, struct xfer *x, unsigned int idx, bool admit);
/* Admit a joined lane that holds nothing: 0 or XFER_FULL. */
int xfer_lane_admit(struct xfer_lane *l);
void xfer_lane_deinit(struct xfer_lane *l);
/* Attach a lane to @x and make @x wait for its reaping. */
void xfer_lane_add(struct xfer_lane *l);
/* The session's next file (wire.h): the lane has not ended it, and its
 * digest starts afresh. 0 or -ENOMEM. */
int xfer_lane_next_file(struct xfer_lane *l);
/* Its run of chunks, now that x->size, x->chunk, x->nchunks and x->nlanes
 * are known, and its digest started there: 0 or -ENOMEM. */
int xfer_lane_run(struct xfer_lane *l);
/* The file's digest from every lane's (digest.h), each with its run whole:
 * false (and @out zero) when a lane is gone already. */
bool xfer_digest(const struct xfer *x, uint8_t out[WIRE_DIGEST_SIZE]);
/* Each lane's due is 1/nlanes of what its transfer may hold. */
void xfer_set_lanes(struct xfer *x, unsigned int nlanes);

/* About cfg.lanes queue pairs per direction, split between @transfers
 * transfers: at least one each. */
unsigned int xfer_lanes_share(const struct xfer_env *env, unsigned int transfers);

/* After slots went back to the ring of @dir: feed each starved lane once. */
void xfer_feed_starved(struct xfer_env *env, enum xfer_dir dir);

/* Record the verdict unless one is; true when this call decided it (the
 * journal entry is then written). */
bool xfer_decide(struct xfer *x, enum engine_outcome outcome, unsigned int status,
                 const char *text);
/* xfer_decide() of a failure another attempt may not meet (x->transient):
 * the fabric, the peer's state, a deadline. */
bool xfer_decide_transient(struct xfer *x, unsigned int status, const char *text);
/* Hang up every lane (CLOSING); each is reaped when down. The receiver
 * reaps at once, a sender once the peer's DISCONNECTED arrives (or the
 * linger timer fires). */
void xfer_hangup(struct xfer *x);
/* The linger timer fired: reap whatever is left. */
void xfer_reap_all(struct xfer *x);
/* The fabric is gone under @x (port down, device removed): fail it with
 * @text (transient: the fabric may come back) and tear every lane down
 * now, saying nothing to the peer and waiting for nothing from it. */
void xfer_kill(struct xfer *x, unsigned int status, const char *text);

/* conn_ops.reaped for every lane of both sides. */
void xfer_lane_reaped(struct conn *c);

/*
 * engine_free(): destroy every lane's QP now (no DMA into memory about to
 * go), and after the disk I/O drained, the rest, without callbacks. With
 * @keep_memory (disk requests that never came back), every connection is
 * released but the transfers' memory is left to those requests.
 */
void xfer_kill_qps(struct xfer_env *env);
void xfer_free_all(struct xfer_env *env, bool keep_memory);
/* Fail every transfer of both directions with a lane on @on (NULL: every
 * transfer) with @text, at once, saying nothing to the peers (xfer_kill):
 * how many were not decided yet. */
unsigned int xfer_kill_all(struct xfer_env *env, const struct conn_env *on, unsigned int status,
                           const char *text);
/* Whether either direction has a transfer (ended ones waiting for the
 * disk aside). */
static inline bool xfer_any(const struct xfer_env *env)
{
        return env->xfers[XFER_RECV] || env->xfers[XFER_SEND];
}
/* Whether a transfer has a lane on @on (a rail's env; NULL: xfer_any). */
bool xfer_on(const struct xfer_env *env, const struct conn_env *on);
