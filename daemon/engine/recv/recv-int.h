#pragma once

/*
 * What the files of recv/ share: a receiving transfer, its lanes and
 * files, and the functions of the data path (recv.c), the session
 * (recv-session.c) and the offer (recv-offer.c). Publishing into the
 * incoming directory is recv-publish.h's, resuming recv-partial.h's.
 */

#include "recv.h"

/* How long to wait for the sender to hang up after RESULT or REFUSE. */
#define RECV_LINGER_SEC         5
/* A connection must make its offer within this long (or peer_timeout if
 * shorter): until then it holds no share of the ring, but a queue pair. */
#define RECV_OFFER_SEC          10
/* Connections that have not made a valid offer yet: at most this many
 * from one host, and in all. */
#define RECV_PENDING_PER_HOST   8
#define RECV_PENDING_MAX        64

/* No chunk is smaller than the smallest slot_size a sender can have: tiny
 * chunks would cost a receive, a write and a credit per few bytes. */
#define RECV_CHUNK_MIN          4096u

/* Beyond one lane, each lane is given at least this many chunks. */
#define RECV_LANE_MIN_CHUNKS    8

/* A transfer that may be resumed makes its progress durable (fsync, then
 * its partial's record) every this many bytes written. */
#define RECV_CKPT_BYTES         (64ull << 20)
/* A landing's next file made before its offer is used for a file this
 * large at most: one larger learns "exists" before its data, not after. */
#define RECV_LAND_AHEAD_MAX     (1ull << 20)

struct recv_lane;
struct relay;

struct recv_slot {
        struct io_req io;
        struct recv_lane *l;
        uint64_t seq;           /* while writing: the chunk's */
        uint32_t len;
        bool writing;
};

/* One connection of a transfer: lane 0 offered, the others joined by the
 * offer's token. Its slots are posted receives; each index is a wr_id. */
struct recv_lane {
        struct xfer_lane base;  /* first */
        struct recv_slot *rs;   /* per index of base.hold */
        uint64_t next_seq;
        uint32_t credits_pending;
        struct wire_end end;
        /* Its rail was lost (recv_lane_detach): no connection, its slots
         * held unposted, until the sender joins it again (WIRE_HELLO_REJOIN). */
        bool detached;
};

/*
 * One offered file of a session (wire.h: at most two in flight). The
 * transfer's cur is the one offered, opened, receiving and verified; once
 * verified, it becomes fin, published by its own disk steps (recv-file.c,
 * recv-pack.c) while the next offer is answered and its data flows into
 * the other. A single file's, and a session's last, is both at once.
 */
#define RECV_DRY_TEXT_MAX       24

struct recv_dry_ino {
        uint64_t dev, ino;      /* ino 0: an empty slot */
};

struct recv_file {
        struct recv_xfer *x;
        /* One step at a time of opening (recv_file_open) or publishing
         * (recv_file_publish), each a disk request of the transfer's. */
        struct io_req req;
        struct wire_offer offer;        /* the file's; name empty when unused */
        int fd;                 /* O_TMPFILE until published */
        /* A pack's data, received into memory rather than into fd (at most
         * PACK_BYTES_MAX): unpacked from here (recv-pack.c). A tree landing
         * as its user has it in a memfd, pack_mem_fd, sealed against
         * resizing, for the lander to make the files from (recv-land-tree.c);
         * else -1. recv_pack_mem_new, recv_pack_mem_free. */
        uint8_t *pack_mem;
        int pack_mem_fd;
        size_t pack_mem_size;   /* its mapping's */
        bool skip;              /* sync: kept as it was: ACCEPT SKIP, no data */
        /* A dry run (recv-dry.c): the verdict its RESULT says ("would
         * create", ...; wire.h, Dry runs), "" until judged. */
        char dry[RECV_DRY_TEXT_MAX + 1];
        uint64_t file_bytes;    /* the file's data received (a sparse file's holes too) */
        uint64_t data_in;       /* a sparse file's data chunks received: within offer.data_bytes */
        uint64_t holes;         /* ... and the bytes of its chunks left out */
        uint64_t t_file;        /* usec: its ACCEPT */
        uint64_t usec;          /* its first-to-last data time, once verified */
        char rel[WIRE_PATH_MAX + 1];    /* the entry's path in the staging directory */
        char proc_path[32];     /* "/proc/self/fd/N" of fd, for linkat */
        char part[INCOMING_PART_MAX];
        int publish_err;        /* a failed rename, reported once its .part is gone */
        uint8_t digest[WIRE_DIGEST_SIZE];       /* the file's, once verified */
        char link_text[WIRE_TEXT_MAX + 1];      /* a worker's refusal of a symlink */
        /* A relayed tree's symlink: its target as the worker read it, for
         * the relay's next hop (relay_tree_staged); a dry run landing as
         * its user, a link's target (recv_land_dry_link). */
        char link_target[NAME_LINK_MAX + 1];
        /* A dry run landing as its user: a hard link's name, the regular
         * file the lander found there (recv_land_dry_link). */
        struct stat link_there;
        /* A tree's file published in one worker call (recv-file.c): the
         * step that failed, no xattr taken, the kept tree's record stored
         * with it (recorded) and what storing it returned. */
        unsigned int step;
        bool no_xattr;
        bool record;
        bool recorded;
        int record_res;
        /* A pack (wire.h): unpacked by a worker (recv-pack.c), which sets
         * these; max_file_size and the job's bytes left copied for it when
         * it starts. */
        uint64_t pack_data;     /* its entries' data bytes */
        uint64_t pack_max_file;
        uint64_t pack_room;
        int pack_symlinks;              /* cfg tree_symlinks when it began (enum config_symlinks);
                                         * a symlink's check too */
        int pack_names;                 /* cfg names when it began (enum name_rules) */
        unsigned int pack_status;       /* enum wire_status of a failure */
        uint32_t pack_skipped;          /* sync: its entries kept as they were (a symlink's: 0 or 1) */
        char pack_why[WIRE_TEXT_MAX + 1];
        /* An index pack's (wire.h, Index packs): the bytes its entries
         * moved in it (pack_data counts the kept files' too), and the
         * files of it this side lacks, for its NEED. */
        uint64_t pack_moved;
        struct wire_need need;
        /* The entries its RESULT settles, where not recv_span()'s: the
         * files an index pack's NEED named settle the index's. */
        uint32_t span;
};

struct recv_xfer {
        struct xfer base;       /* first */
        struct recv_env *env;
        bool admitted;          /* its offer was valid: lane 0 holds a share */
        bool rails;             /* the sender has rails: lanes from its other addresses (wire.h) */
        /* The files in flight (struct recv_file): cur is never NULL, fin
         * while one is being published (cur itself for the last). */
        struct recv_file files[WIRE_IN_FLIGHT_MAX];
        struct recv_file *cur, *fin;
        bool fin_waiting;       /* cur is verified and waits for fin's RESULT */
        /* The next file's OFFER, come while cur still finished (wire.h). */
        bool next_on;
        /* An index pack's NEED went (wire.h, Index packs): the next offer
         * (next_file, the index's own) is the files it named, need_count
         * of them in a pack, settling need_span entries; need_skipped of
         * them were kept, which its RESULT counts. */
        bool need_on;
        uint32_t need_span, need_count, need_skipped;
        bool need_waiting;      /* its NEED waits for a control buffer (recv_need_pump) */
        struct wire_offer next;
        /* The next offer's long path, as its NAME parts come (wire.h,
         * Long paths): lname_len of lname_total bytes so far. */
        char lname[WIRE_PATH_MAX + 1];
        uint16_t lname_len, lname_total;
        /* The next offer's attributes, in XATTR parts before it (wire.h,
         * Attributes): xattrs_len of xattrs_total bytes so far. */
        uint8_t xattrs[WIRE_XATTRS_MAX];
        uint16_t xattrs_len, xattrs_total;
        /*
         * That offer's file opened early (recv-file.c, recv_early_open): a
         * tree's entry with data, an O_TMPFILE whose space is checked and
         * reserved while cur's last data still comes, so that its ACCEPT
         * need not wait for three disk steps once cur is verified. Only an
         * optimisation: anything amiss, and the file is opened as ever.
         */
        struct recv_early {
                struct io_req req;
                enum { RECV_EARLY_NONE, RECV_EARLY_BUSY, RECV_EARLY_READY } state;
                bool waiting;           /* cur's opening waits for it */
                bool failed;            /* open as ever */
                int fd;
                uint32_t file;          /* the offer's index */
                uint64_t size;
                bool pack;              /* received into memory: no space reserved */
                /* A landing's, made before its offer came (recv-land.c): for
                 * a file of any size up to RECV_LAND_AHEAD_MAX, its name not
                 * checked (a name that exists fails at LINK, after its data). */
                bool ahead;
                struct statvfs vfs;
        } early;
        /* The session (wire.h): what the first offer announced, and how far it got. */
        uint32_t job_files;
        uint64_t job_bytes;
        uint32_t chunk;         /* every file's chunk size */
        uint8_t token[WIRE_TOKEN_SIZE]; /* the first offer's: the lanes' hellos carry it */
        /* A tree (wire.h): built in stage_name beneath the incoming
         * directory, renamed into place as dest at the end. */
        bool tree;
        bool published_tree;    /* renamed into place: nothing to remove */
        bool overwrite;         /* cfg overwrite when the tree began, for the workers */
        char dest[WIRE_NAME_MAX + 1];
        char stage_name[INCOMING_STAGE_MAX];
        int stage_fd;
        /* A relayed tree's DEST, its top directory in the staging
         * directory: it stays the same directory once the tree is renamed
         * into place, so the relay opens its entries beneath it. */
        int top_fd;
        /* A relayed tree kept for the job's next attempt (recv-partial-tree.c):
         * its entries' records (common/entlist.h) in RECV_KEEP_ENTRIES, ents_len
         * bytes of them recorded; fin's, written with its record; and
         * those read back when it resumed, for the relay to offer. */
        int ents_fd;
        uint64_t ents_len;
        struct entlist ents_new, ents_kept;
        bool ents_oom;                  /* fin's could not be listed: not recorded */
        bool ents_lost;                 /* the kept list held fewer than the record: not relayed */
        /* The tree's symlinks, checked as each arrived and made only once
         * every other entry is in (recv-file.c): an O_TMPFILE of records. */
        int links_fd;
        uint64_t links_len;
        int tree_err;           /* a worker's step: 0 or -errno */
        bool attrs_set;         /* a relayed tree's modes, set once published (recv_tree_finish) */
        bool dest_attr;         /* DEST's own mode and mtime, set once it is in place */
        int dest_attr_err;      /* ... and what setting them returned */
        uint32_t dest_mode;
        uint64_t dest_mtime_ns;
        uint32_t next_file;     /* the index the next OFFER must carry */
        uint64_t t_between;     /* usec: the previous file's RESULT went (xfer_wait_overdue) */
        uint32_t files_published;
        uint32_t packs;         /* published */
        uint64_t offered;       /* bytes of the files offered so far */
        uint64_t bytes_written;
        uint64_t holes;                 /* the job's sparse files' chunks left out (wire.h version 16) */
        uint64_t published_bytes;       /* a session of several: its files' bytes published, for the tally */
        unsigned int writes;    /* in flight */
        struct statx stx;       /* the name's lookup */
        struct statvfs vfs;     /* free space, from a worker */
        int vfs_err;
        /*
         * Resuming (recv-partial.c). The partial state is one file's at a
         * time, part_of's: cur's from its lookup on; it goes with it when
         * it is verified, and the next offer waits until that file is
         * published (recv-session.c). One partial operation is out at a
         * time: the lookup (the file's req, before the ACCEPT), a
         * checkpoint (part_req: fsync, then the record), the published
         * record or removal once published (the file's req) or a removal
         * (part_req, once nothing else is out).
         */
        bool planned;           /* nchunks, lanes and resume[] are set */
        bool part_on;           /* a partial of part_of may be kept */
        struct recv_file *part_of;      /* set with part_on, until recv_partial_reset() */
        void (*part_then)(struct recv_xfer *x); /* once part_of's partial is removed */
        bool part_linked;       /* its file is in the partial directory */
        bool published_match;   /* a retry of a transfer published already */
        bool ckpt_busy, finish_waiting;
        bool ckpt_last;                 /* the checkpoint out is the failing transfer's last */
        bool ckpt_idle;                 /* ... of a resumed attempt that got not a byte more */
        struct partial_job pj;
        struct io_req part_req;
        struct partial_rec ident;       /* who offered what: every record's identity */
        struct partial_rec found;       /* what the lookup found */
        uint64_t created;               /* the partial's, CLOCK_REALTIME s */
        uint64_t ckpt_bytes;            /* bytes_written when the last checkpoint began */
        uint64_t kept[WIRE_LANES_MAX];  /* that checkpoint's: chunks written, per lane */
        uint32_t resume[WIRE_LANES_MAX];        /* chunks kept from the lane's first */
        uint64_t resumed;               /* bytes not sent again */
        struct digest pre[WIRE_LANES_MAX];      /* the kept part's, until the lane has it */
        struct rehash rh[WIRE_LANES_MAX];
        bool rh_busy[WIRE_LANES_MAX];   /* the lane's kept part is being read back: no credits */
        bool drop_pending;              /* drop the partial once the checkpoint is stored */
        /* Another transfer here that ended still holds the partial this
         * offer's lookup would open (a relayed file's failed hop, its last
         * checkpoint on its way): the lookup waits until it is gone. */
        bool part_waiting;
        /* A later file of a session reads its kept parts back before its
         * ACCEPT (recv_partial_prehash): while at it, and once done. */
        bool prehashing, prehashed;
        /*
         * A tree kept for the job's next attempt (recv-partial-tree.c): its
         * staging directory is KEY.tree in the partial directory (ident's
         * key), its record stored before each entry's RESULT goes. A
         * session that continues a kept tree starts at entry tree_kept,
         * and an entry staged after the last record may come again.
         */
        bool tree_part;
        bool tree_resumed;
        /* DEST's offer is a retry of this very job, whose tree the kept
         * record says was published here already (its last RESULT was
         * lost): DEST's ACCEPT says every entry is here, its RESULT is the
         * session's last, nothing is made again. */
        bool tree_again;
        bool keep_recorded;             /* a record of it is stored */
        bool keep_off;                  /* a record could not be stored: not kept */
        struct partial_rec keep_ident;  /* its record's identity (DEST, PARTIAL_TREE) */
        struct partial_job keep_pj;     /* its one operation out at a time */
        uint64_t keep_created;          /* its record's, CLOCK_REALTIME s */
        uint32_t tree_kept;             /* entries held at DEST's offer (ACCEPT resume[0]) */
        uint64_t tree_kept_bytes;       /* their bytes */
        uint64_t tree_links_len;        /* the list of symlinks kept with them */
        uint64_t files_resumed;         /* bytes of the session's files resumed from partials */
        /* Sync (recv-sync.c): the session's sync flags, the first offer's. */
        uint16_t sync;
        bool merge;             /* a tree merged into the DEST that exists */
        uint64_t deleted;       /* WIRE_OFFER_DELETE: entries of the old DEST removed at publish */
        bool sync_probed;       /* the offered entry was held against what is there */
        uint32_t files_skipped;
        int sync_fd;            /* the existing file, while its digest is computed */
        struct event *sync_tick;        /* meanwhile: an empty CREDIT every second */
        struct digest sync_d;
        struct rehash sync_rh;
        char sync_why[WIRE_TEXT_MAX + 1];       /* a worker's refusal */
        /* What the probe found under the name (recv_sync_probe), for a dry run's verdict. */
        bool sync_had;
        struct stat sync_st;
        /*
         * A dry run (WIRE_OFFER_DRY_RUN, recv-dry.c): nothing is made. With
         * WIRE_OFFER_DELETE, the names offered (at most job_files, sorted
         * at the end) and, once the last entry is judged, what the old
         * DEST holds beyond them, sent one GONE each before the last RESULT.
         */
        bool dry;
        unsigned int dry_status;        /* a worker's refusal: enum wire_status, text in sync_why */
        unsigned int dry_attrs;         /* cur's attributes that differ from the file there's (XATTRS_*) */
        char **dry_names;
        uint32_t dry_n, dry_cap;
        bool dry_oom;                   /* a name could not be kept: deleting is not judged */
        char *dry_gone;                 /* records: kind u8, then the name, NUL-terminated */
        size_t dry_gone_len, dry_gone_cap, dry_gone_off;
        uint32_t dry_gone_seq;
        bool dry_pumping;               /* the GONEs are going out (recv_dry_pump) */
        /* Files there a dry run would replace that have more names than
         * one (a hard link to one is not kept): an open-addressed set of
         * device and inode pairs (recv_dry_replacing); full, every hard
         * link is said to be replaced. */
        struct recv_dry_ino *dry_replaced;
        uint32_t dry_replaced_n, dry_replaced_cap;
        bool dry_replaced_full;
        /* A landing's: the lander's walker listing the tree there as the
         * user (landmsg.h, Deleting, dry), read on a worker; or -1. */
        int dry_walk_fd;
        /* A chain (wire.h, Relay chains): the ROUTE that came before the
         * first offer, and once that is accepted, the downstream transfer
         * (relay.h); the last RESULT waits for it (relay_waiting). */
        bool route_on;
        struct wire_route route;
        struct relay *relay;
        bool relay_waiting;
        /*
         * Landing as the user (recv-land.c; wire.h): the LAND parts as they
         * come before the first offer (land_len of land_total bytes), the
         * landing they make (NULL: the drop box), and the lander's session
         * for it (0: none yet), the user it proved, and whether the one
         * file is PATH itself, made in PATH's parent (else it goes into
         * PATH, a directory, under its own name).
         */
        uint8_t *land_buf;
        uint16_t land_len, land_total;
        /* A deleting tree's rules (wire.h, Deleting; version 30): their
         * RULES parts, then, from DEST's offer on, what they exclude is
         * kept (recv_protected); NULL: none. */
        char *rules_buf;
        uint16_t rules_len, rules_total;
        struct filter_list *protect;
        struct wire_landing *landing;
        uint64_t land_session;
        uint32_t land_uid;
        char land_user[256];
        bool land_parent;
        /* A tree that lands as the user (recv-land-tree.c): into PATH, as
         * PATH/DEST (else as PATH itself), its staging directory made (a
         * failure discards it), and the end's links and modes as they go. */
        bool land_into;
        bool land_staged;
        struct recv_land_end *land_end;
        struct recv_land_pack *land_pack;       /* fin's, a pack being landed */
        /* A pull (recv-pull.c): the file read as the user while it is
         * looked at, then its send back (NULL: none running). */
        int pull_fd;
        struct recv_pull *pull;
        uint64_t pull_bytes, pull_usec; /* sent back, once that send is done */
        uint32_t pull_skipped;          /* of what went back, kept there (its sync) */
        /* The pulled file's or tree's own attributes, as the lander read
         * them (get -X, -A), for the send back's landing. */
        uint16_t pull_xattrs_len;
        uint8_t pull_xattrs[WIRE_XATTRS_MAX];
};

/* The entries the offer carries: a pack's, or 1. */
static inline uint32_t recv_span(const struct wire_offer *o)
{
        return o->flags & WIRE_OFFER_PACK ? o->pack_entries : 1;
}

/* The entries @f's RESULT settles. */
static inline uint32_t recv_file_span(const struct recv_file *f)
{
        return f->span ?: recv_span(&f->offer);
}

/* Merged into an existing DEST that is to hold only the tree's entries
 * (wire.h, Deleting): each one kept goes into the staging directory as
 * it is decided (recv_sync_keep), and nothing else of the old DEST does. */
static inline bool recv_deleting(const struct recv_xfer *x)
{
        return x->merge && (x->sync & WIRE_OFFER_DELETE) && !x->dry;
}

/* A tree that lands as its user, deleting what the source lacks: the
 * files it keeps linked into the staged tree, which then takes the old
 * one's place (recv-land-tree.c). */
static inline bool recv_land_deleting(const struct recv_xfer *x)
{
        return x->landing && x->tree && (x->sync & WIRE_OFFER_DELETE) && !x->dry;
}

/* Whether @f's RESULT is the session's last. */
static inline bool recv_is_last(const struct recv_xfer *x, const struct recv_file *f)
{
        return x->tree_again || f->offer.file + recv_file_span(f) >= x->job_files;
}

/* The file a verdict is about: the one being published, else cur. */
static inline struct recv_file *recv_named(struct recv_xfer *x)
{
        return x->fin ?: x->cur;
}

static inline struct recv_xfer *recv_xfer_of(struct xfer *x)
{
        return container_of(x, struct recv_xfer, base);
}

static inline struct recv_lane *recv_lane_of(struct xfer_lane *l)
{
        return container_of(l, struct recv_lane, base);
}

static inline struct recv_lane *recv_lane(struct recv_xfer *x, unsigned int k)
{
        return x->base.lane[k] ? recv_lane_of(x->base.lane[k]) : NULL;
}

extern const struct conn_ops recv_conn_ops;

/* recv.c */
/* A new transfer around lane 0, not admitted to the ring yet: 0 or -errno. */
int recv_xfer_new(struct recv_env *e, const char *peer, struct recv_xfer **out);
/* Lane 0's offer is valid: a share of the ring, posted, credited with the
 * ACCEPT. 0, XFER_FULL (max_transfers receiving), or -errno. */
int recv_admit(struct recv_xfer *x);
/* recv-accept.c: transfers admitted (an offer accepted) from @peer's host,
 * not closing. */
unsigned int recv_admitted_from(struct recv_env *e, const struct sockaddr *peer);
/* How long a new connection has to make its offer. */
unsigned int recv_offer_timeout(const struct recv_xfer *x);
/* A new lane @idx of @x: its slots taken, not yet posted. 0, or -errno. */
int recv_lane_new(struct recv_xfer *x, unsigned int idx, struct recv_lane **out);
/* Post every slot the lane holds and, beyond lane 0, what the ring lends
 * now (pending credits, for its welcome). */
int recv_lane_post_all(struct recv_lane *l);
/* Lane @l's rail is gone (@why): its connection torn down, the lane kept
 * for the sender to join again (wire.h, Rails). */
void recv_lane_detach(struct recv_lane *l, const char *why);
/* Whether lane @lane of @x may join again over another rail: one file's
 * data from a sender with rails, the lane not ended. */
bool recv_may_rejoin(const struct recv_xfer *x, unsigned int lane);
/* Of the lane's pending credits, those that may go now (all, without
 * cfg rate_limit), taken off credits_pending; the rest wait for the
 * transfer's pace timer. In DATA only. */
uint32_t recv_credits_take(struct recv_lane *l);
/* Send what credits a lane has pending now (they were held back). */
void recv_credits_flush(struct recv_lane *l);
/* Send the verdict (REFUSE before data, RESULT after) on every lane and
 * wait for the sender to hang up; a failure. */
void recv_fail(struct recv_xfer *x, unsigned int status, const char *text);
struct recv_xfer *recv_of_file_req(struct io_req *req);
/* Lane @l's pending credits, all, now (a WAIT's, or a session's next offer's). */
void recv_credits_return(struct recv_lane *l);
/* A slot a relay held (relay_hold) goes back, once its downstream sent
 * the chunk in it; and that chunk's bytes meanwhile. */
void recv_slot_forwarded(struct recv_lane *l, uint32_t i);
const uint8_t *recv_slot_data(const struct recv_lane *l, uint32_t i);
/* Decide, send the verdict (REFUSE before data, RESULT after) on every
 * lane, then wait for the hang-up. */
void recv_verdict(struct recv_xfer *x, unsigned int status, const char *text);
/* File @f is decided: counted, and its journal entry (at debug level only
 * in a session of several). */
void recv_journal(struct recv_xfer *x, const struct recv_file *f, unsigned int status);
/* The ACCEPT of a later file of the session went out: the credits other
 * lanes held back between files go now. */
void recv_lanes_flush(struct recv_xfer *x);
/* FINISHING: once no write (and no checkpoint) is out, verify, then publish. */
void recv_finish(struct recv_xfer *x);

/* recv-session.c: two files in flight (wire.h, version 7). */
/* An OFFER on lane 0: answered now, kept until cur is verified, or refused. */
void recv_offer_in(struct recv_xfer *x, const struct wire_offer *o);
/* The other file of the pair becomes cur, empty, and the next offer may
 * come: 0, or the transfer has failed. */
int recv_session_next(struct recv_xfer *x);
/* A WAIT for @file may come now. */
bool recv_wait_ok(const struct recv_xfer *x, uint32_t file);
/* Cur is verified (or skipped): it becomes fin and is published, once the
 * file before it is; cur is the next, empty, unless it was the last. */
void recv_verified(struct recv_xfer *x);
/* Fin is published: its RESULT (a kept tree's record stored first:
 * recv_keep_record), then the next file's turn; the last's ends the
 * session. */
void recv_published(struct recv_xfer *x);
void recv_published_now(struct recv_xfer *x);
/* The relay's downstream is settled: a RESULT that waited for it goes. */
void recv_relay_settled(struct recv_xfer *x);

/* recv-offer.c */
/* Lane 0's OFFER: checked, then REFUSE or, once space is reserved, ACCEPT. */
void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o);
/* The chunks, the lanes granted and where each resumes (x->planned). */
void recv_plan(struct recv_xfer *x);
/* The file is open, its space reserved, any kept part hashed: ACCEPT. */
void recv_accept(struct recv_xfer *x);
/* Lane 0's ACCEPT of the offered file with @flags, x->resume and the
 * lanes granted, and the file's clock started: 0, or -errno and the
 * transfer has failed. */
int recv_send_accept(struct recv_xfer *x, uint16_t flags);
