#pragma once

/*
 * The send layer: the sending side of a transfer (xfer.h). One struct
 * engine_send per transfer started (the owner's handle, engine.h); one
 * struct send_lane per connection of it. This header is the layer's
 * interface: its context, the types a relay above reads, and the ways in;
 * what only send/'s files share is send-int.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sys/stat.h>
#include <rdma/rdma_cma.h>

#include "device.h"
#include "engine-types.h"
#include "io.h"
#include "pack.h"
#include "rails.h"
#include "rehash.h"
#include "sparse.h"
#include "wire.h"
#include "xfer.h"

#define SEND_CTRL_RECVS         16
#define SEND_RESOLVE_MS         5000
#define SEND_LINGER_SEC         5

enum send_buf_state { BUF_FREE, BUF_READING, BUF_READY, BUF_POSTED };

struct auth_key;
struct send_lane;

/* The send layer's part of the configuration, a copy the owner replaces
 * whole on a reload (a connection takes it when it is made). */
struct send_cfg {
        int tos;                        /* -1: none */
};

/* Peers whose rails the send layer remembers (send_env.peer_rails). */
#define SEND_PEER_RAILS_MAX     16
/* What a file must give each rail pair to measure what the pair delivers. */
#define SEND_RAILS_MEASURE_MIN  (8u << 20)
/* How long new transfers leave out a rail a lane could not connect over. */
#define SEND_RAIL_AVOID_SEC     60u

/* The send layer's context: what it needs beside the transfer layer's. */
struct send_env {
        struct xfer_env *xe;
        struct rdma_event_channel *ch;  /* the owner's, for each lane's id */
        struct device *dev;             /* the rails (dev[0] the node's address): sources, keys */
        unsigned int ndev;
        unsigned int pool_mem, ring_mem;        /* their indices in dev->mem */
        uint8_t *pool;                  /* the send pool: a slot of slot_size per buffer */
        uint32_t slot_size;
        const struct auth_key *key;
        struct send_cfg cfg;
        /* The rails peers named in their ACCEPTs (wire.h, Rails), by the
         * address sent to, most recent first: lane 0 goes over another
         * rail of ours to one of them while our first rail is down. */
        struct send_peer_rails {
                struct sockaddr_storage peer;   /* as the job named it; ss_family 0: unused */
                struct sockaddr_storage rail[RAILS_MAX];
                unsigned int nrails;
                /* What a transfer's lanes from our rail i to its rail[j]
                 * delivered together, bytes/s, averaged over transfers
                 * (send_rails_measure); 0: not measured. */
                uint64_t rate[RAILS_MAX][RAILS_MAX];
        } peer_rails[SEND_PEER_RAILS_MAX];
};

/*
 * A send whose data is not read from its file but passed on as it comes
 * in: a relay's (recv/relay.h), from its upstream's receive slots. The
 * send asks its source, @src, through these (on the loop).
 */
struct send_source_ops {
        /* Whether @len bytes at @off are written upstream (verified or
         * not): the send reads them from its file only then. */
        bool (*readable)(void *src, uint64_t off, uint64_t len);
        /* The upstream's receive slot holding chunk @seq of lane @lane,
         * written, or NULL (read it from the file when readable). */
        const uint8_t *(*slot)(void *src, unsigned int lane, uint64_t seq);
        /* Chunk @seq of lane @lane, sent from its slot, is acknowledged. */
        void (*sent)(void *src, unsigned int lane, uint64_t seq);
        /* Whether the lanes may end the file: the source verified it. */
        bool (*may_end)(void *src);
};

struct send_buf {
        struct io_req io;
        struct send_lane *l;
        uint64_t seq;
        uint32_t len;
        enum send_buf_state state;
        /* A relay's downstream (relay.h): the upstream's receive slot the
         * chunk is sent from, or NULL (the buffer's own pool slot). */
        const uint8_t *fwd;
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
        /* Resumed: the run's kept chunks are hashed from our file before
         * the lane sends (rehash.h). */
        struct rehash rh;
        bool rehashing;
        uint32_t sparse_cur;    /* a sparse file's: the lane's place in its map */
        /* Its rail was lost: connecting again over lane 0's (rejoin),
         * then going back to where the receiver has its run (rewind_from),
         * once no read into its buffers is out (rewind_waiting). */
        bool rejoin, rewind_waiting;
        uint32_t rewind_from;
        /* This file's: bytes acknowledged, when its first chunk went and
         * when its last was acknowledged (a rail pair's rate,
         * send_rails_measure); usec, 0: not yet. */
        uint64_t file_bytes, t_begin, t_acked;
};

/* An entry of a tree the owner handed over, not offered yet: ours to close. */
struct send_entry {
        int fd;                 /* -1: a directory, or closed already */
        bool dir;
        bool link;              /* a symlink: fd holds its target (never packed) */
        bool hard;              /* with link: a hard link, fd holds the tree's name it shares */
        uint32_t mode;
        uint64_t mtime_ns;
        uint64_t size;
        /* "DEST/a/b": up to PACK_NAME_MAX bytes here, a longer path (never
         * packed, at most WIRE_PATH_MAX) in lname, ours to free. */
        char name[PACK_NAME_MAX + 1];
        char *lname;
        uint8_t *xattrs;        /* its attributes (xattrs_len bytes), ours to free; NULL: none */
        uint16_t xattrs_len;
};

/*
 * A pack being gathered or built (send-pack.c): entries taken from the
 * owner in order; then, on a worker, read whole into a pack in memory,
 * which becomes an offer's data (pack_mem). The next one is built while the offer
 * before it is in flight (building, then built), and offered once that
 * one is sent. @held is an entry taken that did not go in (too large, or
 * past the pack's limits): offered next.
 */
struct send_pack {
        struct send_entry *e;   /* PACK_ENTRIES_MAX of them, once a tree needs them */
        uint32_t first;         /* the index of e[0] in the job */
        uint32_t n;
        uint64_t bytes;         /* the pack's, records so far */
        uint64_t data;          /* the entries' data bytes */
        struct send_entry held;
        bool have_held;
        bool building;          /* the worker has it */
        bool built;             /* mem, hash and len are its, not offered yet */
        bool offer_built;       /* offer it as soon as it is built */
        /* An index pack (wire.h, Index packs): its regular files are
         * indexed, not carried, their descriptors kept for the pack of
         * those the receiver needs; digest: each with its digest. */
        bool index, index_digest;
        uint32_t records;       /* the pack offered: its records (an index's NEED's: fewer than its span) */
        uint8_t *mem;           /* the pack built, len bytes (the worker's until it is back) */
        /* The worker's: in while building, out once it is back. */
        struct io_req req;
        uint8_t hash[PACK_HASH_SIZE];
        uint64_t len;
        char why[XFER_TEXT_MAX + 1];
};

/*
 * An offer whose every END is posted and every chunk acknowledged, its
 * RESULT still to come while the next one goes (wire.h, version 7: two in
 * flight at most): what that RESULT settles, the owner's file_done of
 * each entry it carried.
 */
struct send_span {
        bool on;
        bool skipping;          /* the receiver skipped it (ACCEPT SKIP) */
        uint16_t flags;         /* its offer's */
        uint32_t file, span;
        uint64_t span_bytes;
        uint64_t *sizes;        /* a pack's entries' (PACK_ENTRIES_MAX, once one is sent) */
        char name[WIRE_PATH_MAX + 1];   /* a dry run's: the entry's, for its verdict */
};

/* What the owner asked for, copied: the engine never looks back at it. */
struct engine_send {
        struct xfer base;       /* first */
        struct send_env *env;
        const struct engine_send_ops *ops;
        void *owner;
        uint64_t id;
        unsigned int attempt;   /* the owner's, for the journal */
        int fd;                 /* our own duplicate, of the file being sent */
        uint8_t *pack_mem;      /* or, the pack being sent, in memory (then fd is -1) */
        uint64_t size;          /* that file's */
        char name[WIRE_PATH_MAX + 1];
        uint16_t name_sent;     /* bytes of the offer's long path posted in NAMEs */
        /* The entry offered alone's attributes (wire.h, Attributes), posted
         * in XATTR parts before its offer (xattrs_sent of them so far). */
        uint8_t xattrs[WIRE_XATTRS_MAX];
        uint16_t xattrs_len, xattrs_sent;
        bool land_xattrs;       /* the landing carries attributes: entries may have them */
        /* The session (wire.h): the job's files, one at a time. */
        uint32_t files;         /* in the job, >= 1 */
        bool tree;              /* a tree (wire.h): every offer carries WIRE_OFFER_TREE */
        bool dir;               /* the entry being sent is a directory */
        bool link;              /* ... a symlink, its target the data */
        bool hard;              /* ... with link: a hard link, the name it shares the data */
        uint32_t mode;          /* its mode and mtime, for the offer (0: none) */
        uint64_t mtime_ns;
        uint64_t job_bytes;     /* announced in the first offer */
        uint32_t file;          /* the one being sent (a pack's first entry) */
        uint32_t span;          /* entries the offer carries: 1, or a pack's */
        uint64_t span_bytes;    /* their data bytes */
        uint64_t *sizes;        /* a pack's: its entries' (PACK_ENTRIES_MAX) */
        char dest[WIRE_NAME_MAX + 1];   /* a tree's DEST: a pack's offer's name */
        struct send_pack pack;
        uint64_t bytes_before;  /* the files before it, all sent (their RESULTs may be out) */
        struct send_span prev;  /* the last one sent, until its RESULT */
        bool kept;              /* the one being sent is prev now: its RESULT is awaited */
        /* Index packs (wire.h): the job syncs a tree into the peer's drop
         * box (index_mode); the offer in flight is an index pack, and
         * nothing is offered after it before its NEED or RESULT
         * (indexing); the pack offered is the files its NEED named, which
         * settles the index's need_span entries. */
        bool index_mode, indexing;
        uint32_t index_file;    /* with indexing: the index pack's first entry */
        uint32_t need_span;
        /* The next file's ACCEPT came before the last chunks of the one
         * before were acknowledged: its lanes start once they are. */
        bool accept_waiting;
        struct wire_accept accept;
        uint32_t files_ok;      /* entries with a RESULT "ok" */
        bool offer_pending;     /* the next offer waits for a control buffer or a credit */
        uint64_t t_offer;       /* usec: the offer went (its answer's wait, xfer_wait_overdue) */
        uint64_t t_ended;       /* usec: the last END went, or the route moved on (the verdict's wait) */
        bool want_next;         /* the owner answered ENGINE_NEXT_LATER */
        struct wire_offer offer;        /* the latest offer */
        struct sockaddr_storage dst;
        /* The lanes' ways over the rails (wire.h, Rails): lane k goes from
         * rail pair[lane_pair[k]].local to rail_dst[pair.remote], lanes
         * spread by what each pair delivered before (rails_assign); npairs
         * 0: every lane as lane 0, from dev[0] to dst. */
        struct rails_pair pair[RAILS_MAX];
        unsigned int npairs;
        uint8_t lane_pair[WIRE_LANES_MAX];
        bool rails_shared;      /* another send moved data when this file's lanes started */
        unsigned int rejoins;   /* lanes joined again over another rail (at most 2 x lanes) */
        struct sockaddr_storage rail_dst[RAILS_MAX];
        /* Lane 0's way (send_lane_connect): the others' with no pairs. */
        const struct device *way_src;
        struct sockaddr_storage way_dst;
        uint8_t token[WIRE_TOKEN_SIZE];
        uint32_t chunk;
        uint64_t bwlimit;       /* bytes/s, 0: none (base.bucket) */
        uint32_t signal_every;
        uint64_t bytes_done;    /* acknowledged */
        unsigned int ndone;     /* lanes whose every chunk is acknowledged */
        uint8_t digest[WIRE_DIGEST_SIZE];       /* the file's, once every END is out */
        /* The source identity token (wire.h): statx of our file, through
         * io_uring, before lane 0 connects; zero if it could not be had. */
        struct io_req src_req;
        struct statx stx;
        bool src_ready, connect_waiting;
        uint8_t source[WIRE_SOURCE_SIZE];
        uint64_t resumed;       /* bytes the receiver kept: not sent again */
        /* Sync (send-sync.c): the job's way, enum engine_sync. */
        unsigned int sync;
        bool delete;            /* WIRE_OFFER_DELETE on every offer (a tree's, with sync) */
        uint64_t deleted;       /* ... and what the receiver removed, its last RESULT says */
        bool dry;               /* WIRE_OFFER_DRY_RUN on every offer: no pack, no data */
        uint32_t gone_seen;     /* a dry run's GONEs so far (send-sync.c) */
        bool skipping;          /* the receiver skipped the offer (ACCEPT SKIP) */
        bool digest_busy;       /* the file's digest is being computed */
        struct event *wait_ev;  /* meanwhile, between two files: WAIT every second */
        uint32_t skipped;       /* entries the receiver kept, so far */
        uint8_t file_digest[WIRE_DIGEST_SIZE];  /* the offered file's, with ENGINE_SYNC_DIGEST */
        struct digest sync_d;
        struct rehash sync_rh;
        void (*digest_then)(struct engine_send *s);
        /* A chain (wire.h, Relay chains): the route_hops hops after the
         * receiver (NULL: none), the first ROUTE part before the first
         * offer (route_pending until it went), the rest on lane 0 once it
         * is accepted (route_sent: hops posted so far); what the last
         * RESULT said of them, and what the receiver's PROGRESS did. */
        struct wire_hop *route;
        uint16_t route_hops, route_sent;
        bool route_pending;
        /* Landing as the user (wire.h): the landing's bytes (NULL: the
         * peer's drop box), posted in LAND parts before the session's first
         * offer (land_sent of them so far), and their hash, in that offer's
         * MAC. Each file offered carries its mode (its statx's); none a
         * source token. */
        uint8_t *land;
        uint16_t land_len, land_sent;
        /* A deleting tree's rules (wire.h, Deleting): posted in RULES parts
         * before its first offer (rules_sent of them so far), their hash in
         * that offer's MAC; NULL: none. */
        uint8_t *rules;
        uint16_t rules_len, rules_sent;
        uint8_t land_hash[WIRE_LAND_HASH_SIZE];
        uint16_t hops, hop_failed, hop_status;
        struct nodeset hop_missing;
        char hop_text[WIRE_TEXT_MAX + 1];
        uint64_t *hop_bytes;            /* route_hops of them */
        /* A relay's downstream (recv/relay.h): reads and ENDs wait for
         * its source; forwarded: the bytes sent straight from its slots. */
        const struct send_source_ops *src_ops;
        void *src;
        uint64_t forwarded;
        /* A relay's (a file's, or a tree's: relay NULL): its offer says
         * WIRE_OFFER_RELAYED and carries the origin's token. */
        bool relayed;
        /* Sparse files (send-sparse.c): the map of the file being offered
         * (sparse_mapped: it is this file's), the bytes of holes left out
         * over the job; no_sparse: the owner wants every chunk sent. */
        struct sparse_map sparse;
        bool sparse_mapped;
        bool no_sparse;
        uint64_t holes;
        /* A pull (wire.h, Pulls): the offer asks for the peer's file; no
         * data goes, and the ACCEPT that ends the wait skips it. */
        bool pull;
};

static inline struct engine_send *sender_of(struct xfer *x)
{
        return container_of(x, struct engine_send, base);
}

static inline struct send_lane *send_lane_of(struct xfer_lane *l)
{
        return container_of(l, struct send_lane, base);
}

/* The layer's ways in, for the engine's composition and a relay above. */
/* engine_send(): admitted, copied, lane 0 resolving. A relay's downstream
 * (@src_ops and @src, recv/relay.h) reads only what its source has
 * written, offers the source token of what it relays (@req->relay_source,
 * the origin's) with WIRE_OFFER_RELAYED, and ENDs only once the source
 * verified its copy. A tree's relay gives a source too (it gates only the
 * entry that comes in while it is sent; every other is staged) and
 * @req->relay_source: the origin's tree token, offered relayed. */
int send_start(struct send_env *env, const struct engine_send_req *req, const struct engine_send_ops *ops,
               void *owner, const struct send_source_ops *src_ops, void *src, struct engine_send **out);
/* The owner has the next file now (engine_send_resume). */
void send_resume(struct engine_send *s);
/* Fail (or, @outcome DONE, end) @x, saying so on the wire where it can. */
void send_abort(struct xfer *x, enum engine_outcome outcome, unsigned int status, const char *text);
/* engine_send_cancel(), engine_send_progress() (engine.h). */
void send_cancel(struct engine_send *s);
void send_progress(const struct engine_send *s, struct engine_progress *p);
/* The data may flow: lane @l starts reading and posting as credits come
 * (a relay's source has more for it). */
void send_pump(struct send_lane *l);
