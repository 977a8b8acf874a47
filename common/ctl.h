#pragma once

/*
 * The local control protocol between xferctl and rdmaxferd, over an
 * AF_UNIX SOCK_SEQPACKET socket (one datagram = one message).
 *
 * Every message: 12-byte header (magic, version, type, payload length),
 * little-endian, then the payload. The daemon answers a version mismatch
 * with CTL_ERROR (-EPROTONOSUPPORT) and closes. Version 2 added SUBMIT's
 * and JOB's bwlimit, SUBMIT's retries, JOB's attempt numbers, the RETRYING
 * state and STATS. Version 3 added jobs of several files: SUBMIT's files
 * and job_bytes, FILE, JOB's files_done and files_total. Version 4 added
 * sync; version 5 relay chains: SUBMIT's route, JOB's nodes, route and
 * bytes per node (below), and CTL_MSG_MAX 4096; version 6 chains of up
 * to 512 nodes: JOB's nodes_missing a set of 512 bits (nodeset.h), and
 * CTL_MSG_MAX 32768 for the route and bytes of such a chain; version 8
 * SETTINGS, what the daemon's configuration says to its clients (the
 * pattern of peer_names, peername.h); version 9 JOB's times (created,
 * started, ended) and CTL_MSG_MAX 32832 for them.
 *
 *   client -> daemon                      daemon -> client
 *   SUBMIT + fd (SCM_RIGHTS)             SUBMITTED {id}     | ERROR
 *   FILE {id, size, flags, name} + fd    (nothing)          | ERROR, then close
 *   STATUS {id}                          JOB                | ERROR
 *   WATCH {id}                           JOB ... until the job's state is final
 *   LIST                                 JOB ... then LIST_END
 *   CANCEL {id}                          OK                 | ERROR
 *   STATS                                STATS_INFO         | ERROR
 *   SETTINGS                             SETTINGS_INFO      | ERROR
 *   ITEMS {id}                           ITEM ... then LIST_END | ERROR
 *
 * A dry run (SUBMIT flag DRY_RUN, version 10) moves nothing: the peer
 * says what a real send would do with each entry (wire.h, Dry runs), and
 * the daemon keeps each verdict with the job, in order, until the job
 * goes; ITEMS asks for them (any time: those so far), one ITEM each.
 *
 * A version 1 daemon answers every version 2 message, STATS included,
 * with that ERROR; nothing was released with version 2 before all of it.
 *
 * A job of several files (SUBMIT files > 1; the first file comes with the
 * SUBMIT, job_bytes is every file's size summed) is one session to the
 * peer (wire.h). After SUBMITTED, the same connection hands over the
 * others in order, one FILE each with its descriptor, and stays open until
 * the last is handed over: the daemon reads the next FILE only while it
 * holds fewer than JOBS_FILES_AHEAD of the job's files not yet sent, so
 * neither side holds more than that many descriptors. A bad FILE gets an
 * ERROR and fails the job; a connection closed before the last FILE
 * cancels it. Such a job is not retried. A tree (CTL_SUBMIT_TREE) is
 * such a job whose SUBMIT names DEST and carries no descriptor; its FILEs
 * name "DEST/...", a directory (CTL_FILE_DIR, no descriptor) before what
 * it holds, a symlink (CTL_FILE_LINK) with a descriptor of a file holding
 * its target, which goes to the receiver like a file's data.
 *
 * A relay chain (SUBMIT route not empty; wire.h, Relay chains) is a job
 * of one regular file or one tree, without sync (ctl_submit_chain_ok()):
 * the daemon sends it once, to host, which publishes it and relays it to
 * the route's first hop, and so on; a relay whose next hop fails goes
 * around it, to the hop after. A tree goes down the chain as one
 * session, each relay forwarding every entry it has verified. Its JOB numbers the chain's nodes from 1, host,
 * then the route's hops in order, says how many bytes each has so far,
 * which did not publish the file and why the first of those did not.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodeset.h"
#include "peername.h"

#define CTL_MAGIC               0x4c544358u     /* "XCTL" little-endian */
#define CTL_VERSION             19      /* 2: bwlimit, retries, attempts, RETRYING; STATS;
                                         * 3: jobs of several files (FILE);
                                         * 4: sync (SUBMIT flags, JOB files_skipped);
                                         * 5: relay chains (SUBMIT route, JOB nodes, route,
                                         *    node_bytes);
                                         * 6: chains of 512 nodes (JOB nodes_missing 64
                                         *    bytes, CTL_MSG_MAX 32768);
                                         * 7: a tree's DEST mode and mtime (SUBMIT);
                                         * 8: SETTINGS (peer_names);
                                         * 9: deleting (SUBMIT flag DELETE, JOB deleted);
                                         *    SUBMIT flag NO_SPARSE; JOB created_us,
                                         *    started_us, ended_us; CTL_MSG_MAX 32832;
                                         * 10: dry runs (SUBMIT flag DRY_RUN; ITEMS, ITEM);
                                         * 11: a tree's paths of up to CTL_PATH_MAX bytes
                                         *    (FILE, ITEM);
                                         * 12: landing as the user (SUBMIT flags LAND,
                                         *    LAND_DIR, LAND_REPLACE, land_path, land_cred,
                                         *    land_token;
                                         *    CTL_MSG_MAX 36864);
                                         * 13: pulls (SUBMIT flag PULL, back_port, back_host,
                                         *    back_path, back_cred; SETTINGS_INFO listen;
                                         *    CTL_MSG_MAX 43008);
                                         * 14: rails (STATS_INFO rails, JOB rails);
                                         * 15: JOB land, land_path, back_path;
                                         *    CTL_MSG_MAX 51200;
                                         * 16: a tree pulled (SUBMIT flag PULL_TREE);
                                         * 17: attributes (SUBMIT flags XATTRS, ACLS,
                                         *    xattrs; FILE flag XATTRS, xattrs);
                                         * 18: ITEM changes[5] ('a', 'x': a dry
                                         *    run's attributes);
                                         * 19: a deleting tree's rules (SUBMIT flag
                                         *    RULES, rules) */
#define CTL_HEADER_SIZE         12
#define CTL_RAILS_MAX           4       /* as rdmaxferd.conf's listen addresses */
#define CTL_RAIL_NAME_MAX       63      /* an RDMA device's name */
#define CTL_RAILS_STR_MAX       (CTL_RAILS_MAX * (CTL_RAIL_NAME_MAX + 1) - 1)   /* "a,b,c,d" */
/* A SUBMIT or JOB with a route of CTL_ROUTE_HOPS_MAX hops at their
 * longest, and a JOB's bytes for every node, fit (ctl.c proves it). */
#define CTL_MSG_MAX             51200
#define CTL_HOST_MAX            63      /* numeric address text, no NUL */
#define CTL_NAME_MAX            255
#define CTL_LAND_PATH_MAX       4095    /* landmsg.h's LANDMSG_PATH_MAX */
#define CTL_LAND_CRED_MAX       2048    /* landmsg.h's LANDMSG_CRED_MAX */
#define CTL_LAND_TOKEN_SIZE     16      /* landmsg.h's LANDMSG_TOKEN_SIZE */
/* An entry's attributes (xattrs.h's XATTRS_BYTES_MAX): a FILE's, a SUBMIT's. */
#define CTL_XATTRS_MAX          4095
#define CTL_RULES_MAX           4095    /* wire.h's WIRE_RULES_MAX */
/* A tree's entry, "DEST/a/b" (wire.h's WIRE_PATH_MAX): a FILE's, an ITEM's. */
#define CTL_PATH_MAX            4095
#define CTL_TEXT_MAX            255
#define CTL_RETRIES_MAX         100     /* SUBMIT retries: attempts after the first */
#define CTL_PEER_NAMES_MAX      PEERNAME_PATTERN_MAX    /* SETTINGS_INFO peer_names */
/* A chain: the hops after host at most (wire.h's WIRE_ROUTE_MAX,
 * engine.h's ENGINE_ROUTE_MAX), so 1 + that many nodes in all: as many
 * as a struct nodeset holds. */
#define CTL_ROUTE_HOPS_MAX      511
#define CTL_NODES_MAX           (1 + CTL_ROUTE_HOPS_MAX)
/* A hop's text at its longest: "[" IPv6 text (45) "]:" port (5). */
#define CTL_HOP_MAX             53
/* SUBMIT route: every hop at its longest, comma separated, no NUL. */
#define CTL_ROUTE_MAX           (CTL_ROUTE_HOPS_MAX * (CTL_HOP_MAX + 1) - 1)

enum ctl_type {
        CTL_SUBMIT = 1,
        CTL_SUBMITTED = 2,
        CTL_STATUS = 3,
        CTL_WATCH = 4,
        CTL_LIST = 5,
        CTL_LIST_END = 6,
        CTL_CANCEL = 7,
        CTL_OK = 8,
        CTL_JOB = 9,
        CTL_ERROR = 10,
        CTL_STATS = 11,
        CTL_STATS_INFO = 12,
        CTL_FILE = 13,
        CTL_SETTINGS = 14,
        CTL_SETTINGS_INFO = 15,
        CTL_ITEMS = 16,                 /* version 10: a dry run's verdicts */
        CTL_ITEM = 17,
        _CTL_TYPE_MAX,
};

enum ctl_job_state {
        CTL_JOB_QUEUED = 0,
        CTL_JOB_CONNECTING = 1,
        CTL_JOB_SENDING = 2,
        CTL_JOB_VERIFYING = 3,  /* all data sent, waiting for the receiver's verdict */
        CTL_JOB_DONE = 4,
        CTL_JOB_FAILED = 5,
        CTL_JOB_CANCELLED = 6,
        CTL_JOB_RETRYING = 7,   /* an attempt failed transiently; the next one waits its delay */
        _CTL_JOB_STATE_MAX,
};

/* JOB land (version 15): where a job's files land as its user. */
enum ctl_job_land {
        CTL_JOB_LAND_NONE = 0,  /* the peer's drop box */
        CTL_JOB_LAND_PUSH = 1,  /* at land_path on the peer */
        CTL_JOB_LAND_PULL = 2,  /* read at land_path on the peer, landed at back_path */
        _CTL_JOB_LAND_MAX,
};

/* "queued", "connecting", ...; never NULL. */
const char *ctl_job_state_str(unsigned int state);
/* True for DONE, FAILED, CANCELLED. */
bool ctl_job_state_final(unsigned int state);
/*
 * Whether a job may move from @from to @to. Within an attempt states only
 * move forward: QUEUED, CONNECTING, SENDING, VERIFYING (either of the two
 * middle ones may be skipped), then a final state or RETRYING. RETRYING
 * ends an attempt: it moves on to QUEUED (the next attempt) or to a final
 * state (cancelled, or the daemon stopping). Nothing leaves a final state.
 */
bool ctl_job_transition_ok(unsigned int from, unsigned int to);

/* ctl_submit.flags */
enum {
        CTL_SUBMIT_RETRIES = 1 << 0,    /* retries is set; else the daemon's retry_max */
        CTL_SUBMIT_TREE = 1 << 1,       /* a tree: name is DEST, a relative path, the tree's top
                                         * directory (no fd); FILEs give what is beneath it */
        /* Sync (xferctl send --skip-existing, --sync; wire.h): at most one. */
        CTL_SUBMIT_SKIP_EXISTING = 1 << 2,      /* an entry whose name exists on the receiver is kept */
        CTL_SUBMIT_SYNC_SIZE = 1 << 3,  /* a regular file of the same size is kept; others replace */
        CTL_SUBMIT_SYNC_DIGEST = 1 << 4,        /* ... of the same size and digest (digest.h) */
        CTL_SUBMIT_SYNC_MASK = CTL_SUBMIT_SKIP_EXISTING | CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_SYNC_DIGEST,
        /* xferctl send --delete: with CTL_SUBMIT_TREE and one of the sync
         * flags, DEST ends with only the tree's entries (wire.h, Deleting);
         * never in a chain. A daemon before it refuses the unknown bit. */
        CTL_SUBMIT_DELETE = 1 << 5,
        /* Every chunk of a sparse file sent, holes too (xferctl send
         * --no-sparse; wire.h, Sparse files). A daemon before it refuses
         * the bit as unknown. */
        CTL_SUBMIT_NO_SPARSE = 1 << 6,
        /* xferctl send --dry-run: the peer judges every entry, nothing
         * moves; the verdicts by ITEMS. Never in a chain. */
        CTL_SUBMIT_DRY_RUN = 1 << 7,
        /* xferctl send FILE... PEER:/PATH: the files land as the submitting
         * user at land_path on the peer, land_cred (MUNGE) proving who asks
         * (landmsg.h); name is the first file's leaf. */
        CTL_SUBMIT_LAND = 1 << 8,
        /* With LAND: PATH is a directory the files go into under their own
         * names (it ended with '/', or several files go); without, one file
         * is PATH itself unless PATH is a directory there. */
        CTL_SUBMIT_LAND_DIR = 1 << 9,
        /* With LAND (xferctl send --overwrite): a file of the name there is
         * replaced, where the user may replace it themselves. */
        CTL_SUBMIT_LAND_REPLACE = 1 << 10,
        /* xferctl get PEER:/PATH DEST (with LAND): the peer reads the file
         * at land_path as the submitting user (land_cred, a PULL
         * credential for host and back_host) and sends it back here, where
         * it lands as that user at back_path (back_cred, a PUSH credential
         * for back_host, this node as the peer sees it; LAND_DIR and
         * LAND_REPLACE are the way back's). No file comes with it. */
        CTL_SUBMIT_PULL = 1 << 11,
        /* With PULL (xferctl get -r): PATH may be a directory, fetched
         * whole as a tree (land_cred says so too). Still one offer here. */
        CTL_SUBMIT_PULL_TREE = 1 << 12,
        /* With LAND, not PULL (xferctl send -X, -A; version 17): the
         * entries carry their user.* extended attributes, their POSIX
         * ACLs (xattrs.h); the first file's or
         * DEST's in the SUBMIT's xattrs, a FILE's with CTL_FILE_XATTRS. */
        CTL_SUBMIT_XATTRS = 1 << 13,
        CTL_SUBMIT_ACLS = 1 << 14,
        /* With TREE and DELETE, not LAND (xferctl send --delete with
         * --exclude or --include; version 19): rules_len bytes of the
         * rules as text (filter.h, filter_list_text), whose excluded
         * entries the peer keeps (wire.h, Deleting). */
        CTL_SUBMIT_RULES = 1 << 15,
        /* Every bit of the u16 is taken: another flag needs a wider field
         * (a version of its own). */
        _CTL_SUBMIT_FLAGS = CTL_SUBMIT_RETRIES | CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_MASK | CTL_SUBMIT_DELETE |
                            CTL_SUBMIT_NO_SPARSE | CTL_SUBMIT_DRY_RUN | CTL_SUBMIT_LAND | CTL_SUBMIT_LAND_DIR |
                            CTL_SUBMIT_LAND_REPLACE | CTL_SUBMIT_PULL | CTL_SUBMIT_PULL_TREE | CTL_SUBMIT_XATTRS |
                            CTL_SUBMIT_ACLS | CTL_SUBMIT_RULES,
};

/* ctl_file.flags */
enum {
        CTL_FILE_DIR = 1 << 0,          /* in a tree: a directory (no fd, size 0) */
        CTL_FILE_LINK = 1 << 1,         /* in a tree: a symlink; the fd's file (a memfd of
                                         * the client's) holds its target, 1..NAME_LINK_MAX bytes */
        CTL_FILE_HARD = 1 << 2,         /* with CTL_FILE_LINK: a hard link; the fd's file holds the
                                         * name ("DEST/a/b") of an earlier regular file of the tree */
        CTL_FILE_XATTRS = 1 << 3,       /* version 17: xattrs holds the entry's attributes */
        _CTL_FILE_FLAGS = CTL_FILE_DIR | CTL_FILE_LINK | CTL_FILE_HARD | CTL_FILE_XATTRS,
};

struct ctl_submit {
        uint16_t port;                  /* 0: the daemon's default port */
        uint16_t flags;                 /* CTL_SUBMIT_*; the daemon refuses unknown bits */
        uint64_t bwlimit;               /* bytes/s for this job, 0: none (xferctl send --bwlimit) */
        uint16_t retries;               /* with CTL_SUBMIT_RETRIES: attempts after the first */
        uint32_t files;                 /* files in the job (0 or 1: this one); the others by FILE */
        uint64_t job_bytes;             /* with files > 1: every file's size summed */
        uint32_t mode;                  /* a tree's DEST: the source directory's mode (07777 bits) */
        uint64_t mtime_ns;              /* ... and mtime (0: none) */
        char host[CTL_HOST_MAX + 1];    /* numeric IPv4/IPv6 address */
        char name[CTL_NAME_MAX + 1];    /* leaf name to publish under (the first file's) */
        /* A relay chain: the nodes after host, in order, comma separated,
         * each a numeric "ADDR:PORT" or "[IPV6]:PORT" (ctl_route_add());
         * ADDR or [IPV6] alone: the daemon's default port. "": no chain. */
        char route[CTL_ROUTE_MAX + 1];
        /* With CTL_SUBMIT_LAND: where on the peer (absolute, normal form:
         * landfs_path_check), the MUNGE credential xferctl made as the
         * user (printable; its payload is landmsg_binding() of this job:
         * PUSH, land_path, land_token, host), and the job's token. */
        char land_path[CTL_LAND_PATH_MAX + 1];
        char land_cred[CTL_LAND_CRED_MAX + 1];
        uint8_t land_token[CTL_LAND_TOKEN_SIZE];
        /* With CTL_SUBMIT_PULL: the way back (above); "" otherwise. Its
         * port: the daemon's there (0: this daemon's own, as for a get). */
        uint16_t back_port;
        char back_host[CTL_HOST_MAX + 1];
        char back_path[CTL_LAND_PATH_MAX + 1];
        char back_cred[CTL_LAND_CRED_MAX + 1];
        /* With CTL_SUBMIT_XATTRS or _ACLS: the first file's or DEST's
         * attributes (xattrs.h), 0 .. CTL_XATTRS_MAX bytes. */
        uint16_t xattrs_len;
        uint8_t xattrs[CTL_XATTRS_MAX];
        /* With CTL_SUBMIT_RULES: the rules' text, 1 .. CTL_RULES_MAX bytes, no NUL. */
        uint16_t rules_len;
        char rules[CTL_RULES_MAX];
};

/* One hop of a SUBMIT route, split (ctl_route_parse()). */
struct ctl_hop {
        char host[CTL_HOP_MAX + 1];     /* as written, without brackets; not checked numeric */
        uint16_t port;                  /* 0: none given, the daemon's default port */
};

/*
 * Append @host (numeric text; an IPv6 one gets brackets) and @port (0:
 * none) to the route in @route, a string of @size bytes, comma separated.
 * 0, or -EINVAL (an empty @host, or one with a bracket or comma), -E2BIG
 * when it would hold more than CTL_ROUTE_HOPS_MAX hops, -ENAMETOOLONG
 * when it would not fit in @size (left as it was in either case).
 */
int ctl_route_add(char *route, size_t size, const char *host, uint16_t port);
/*
 * Split @route into @hops, at most @max of them (@hops NULL: only count
 * and check them). Returns how many (0 for ""), or -EINVAL (an empty hop,
 * an unclosed bracket, a hop longer than CTL_HOP_MAX, a port not in
 * 1..65535) or -E2BIG (more than @max). Pure: whether each host is a
 * numeric address is the caller's to ask.
 */
int ctl_route_parse(const char *route, struct ctl_hop *hops, unsigned int max);

/*
 * A route one hop at a time, for callers that would rather not hold
 * CTL_ROUTE_HOPS_MAX struct ctl_hop (28 KiB) at once:
 *
 *     struct ctl_route_iter it = CTL_ROUTE_ITER(route);
 *     while ((r = ctl_route_next(&it, &hop)) > 0) ...
 *
 * 1 with the next hop in @hop, 0 past the last ("" has none), -EINVAL for
 * a bad hop (as ctl_route_parse() says; the count is the caller's to
 * check).
 */
struct ctl_route_iter {
        const char *at;                 /* the next hop's text; NULL: none left */
};
#define CTL_ROUTE_ITER(route) ((struct ctl_route_iter){ .at = (route)[0] ? (route) : NULL })
int ctl_route_next(struct ctl_route_iter *it, struct ctl_hop *hop);

/*
 * Whether @s's job is one a relay chain carries (its route aside): one
 * regular file (files 0 or 1), or one tree (CTL_SUBMIT_TREE), and no sync
 * flag (each node's copy differs: a relay cannot skip on another's
 * behalf). Not several plain files.
 */
bool ctl_submit_chain_ok(const struct ctl_submit *s);

/* The next file of a job of several (the descriptor comes with it). */
struct ctl_file {
        uint64_t id;                    /* SUBMITTED's */
        uint64_t size;                  /* what the client's fstat said; the daemon checks */
        uint16_t flags;                 /* CTL_FILE_*; the daemon refuses unknown bits */
        uint32_t mode;                  /* in a tree: permission bits to keep (07777), 0: none */
        uint64_t mtime_ns;              /* in a tree: a file's mtime, ns since the epoch, 0: none */
        char name[CTL_PATH_MAX + 1];    /* leaf name to publish under; in a tree "DEST/a/b" */
        /* With CTL_FILE_XATTRS: 1 .. CTL_XATTRS_MAX bytes (xattrs.h). */
        uint16_t xattrs_len;
        uint8_t xattrs[CTL_XATTRS_MAX];
};

struct ctl_job {
        uint64_t id;
        uint8_t state;                  /* enum ctl_job_state */
        uint8_t land;                   /* version 15: CTL_JOB_LAND_*, 0: the drop box */
        uint16_t status;                /* enum wire_status when FAILED */
        uint64_t bytes_done;            /* bytes whose send completed */
        uint64_t bytes_total;
        uint64_t usec;                  /* since the first data was posted */
        uint64_t rate;                  /* recent rate, bytes per second */
        uint64_t bwlimit;               /* the job's own limit, bytes/s; 0: none */
        uint16_t attempt;               /* the attempt running, next (RETRYING) or last; 1 is the first */
        uint16_t attempts;              /* at most this many, as things stand (1 + retries) */
        uint64_t retry_usec;            /* RETRYING: the next attempt starts in this long; else 0 */
        /* Microseconds since the epoch (CLOCK_REALTIME), 0: not yet: the
         * job submitted, its first attempt begun, the job final. */
        uint64_t created_us, started_us, ended_us;
        uint32_t files_done;            /* files the receiver published */
        uint32_t files_total;           /* files in the job (1 for a single file) */
        uint32_t files_skipped;         /* of files_done, those the receiver had already (sync) */
        uint32_t deleted;               /* DONE, a tree with CTL_SUBMIT_DELETE: what the receiver
                                         * removed from DEST (its entries, a directory's too;
                                         * UINT32_MAX: that many or more) */
        char peer[CTL_HOST_MAX + 1 + 6];/* "198.18.0.2:7470" */
        char name[CTL_NAME_MAX + 1];
        char text[CTL_TEXT_MAX + 1];    /* error or result text (RETRYING: the last failure's), may be empty */
        /*
         * A relay chain (above): its nodes, 1 + the route's hops
         * (0: the job is no chain, and the others below are 0 or "" too).
         * nodes_missing has bit k set while node k + 1 has not published
         * the file (every bit until the job is final); nodes_ok counts
         * those that did. A relay goes around a node that fails, so the
         * nodes after a missing one may have published. node_failed is
         * the first missing node (1 .. nodes, 1 being host; 0: none
         * failed), with its enum wire_status, "ADDR:PORT" and why (""
         * when the status says it all); the other missing ones carry no
         * reason of their own: not reached. DONE means node 1 published:
         * nodes_ok < nodes then is a partial chain. FAILED: node 1 did
         * not (node_failed 1, the job's own status and text), nor did
         * any other; CANCELLED: none did, node_failed 0. The codec
         * insists on nodes_ok = nodes - count(nodes_missing), no bit at
         * or past nodes, node_failed 0 or the lowest bit set + 1, and
         * those two ends.
         */
        uint16_t nodes;
        uint16_t nodes_ok;
        uint16_t node_failed;
        uint16_t node_status;
        struct nodeset nodes_missing;
        char node_peer[CTL_HOST_MAX + 1 + 6];
        char node_text[CTL_TEXT_MAX + 1];
        /* The nodes after the peer, as SUBMIT's route with every port
         * given ("" with nodes 0; else nodes - 1 hops). */
        char route[CTL_ROUTE_MAX + 1];
        /* Version 14: the RDMA devices its lanes go over, comma-separated
         * ("rxe_alpha,rxe_alpha2"); empty before it connects. */
        char rails[CTL_RAILS_STR_MAX + 1];
        /* Version 15, with land: the path on the peer its files land at
         * (PUSH) or are read from (PULL), and a pull's path where they
         * land ("" for PUSH), as the submitting user either way. */
        char land_path[CTL_LAND_PATH_MAX + 1];
        char back_path[CTL_LAND_PATH_MAX + 1];
        /*
         * A chain's bytes per node, [k] for node k + 1: node 1's are
         * bytes_done, the others' what the relays last reported (about
         * once a second; 0 before they have). Once final, a node that
         * published has bytes_total, the others what they had. The codec
         * carries nodes of them and insists that none is over
         * bytes_total, that a published node's is bytes_total (DONE), and
         * that those past nodes are 0.
         */
        uint64_t node_bytes[CTL_NODES_MAX];
};

/* Directions in STATS_INFO. */
enum ctl_dir {
        CTL_DIR_RECV = 0,
        CTL_DIR_SEND = 1,
        _CTL_DIR_MAX,
};

#define CTL_REASON_MAX          23      /* bytes of a reason name */
#define CTL_STATS_REASONS_MAX   40

/* Failed transfers of one direction for one reason (common/stats.h names them). */
struct ctl_stats_reason {
        uint8_t dir;                    /* enum ctl_dir */
        uint64_t count;                 /* > 0 */
        char name[CTL_REASON_MAX + 1];  /* 1 or more of [a-z0-9_] */
};

struct ctl_stats_dir {
        uint64_t bytes;                 /* of the transfers done */
        uint64_t files;                 /* transfers done: verified and published */
        uint64_t rate;                  /* bytes/s over the last second */
        uint32_t active;                /* transfers moving data now */
};


/* A rail: its RDMA device, the data bytes its lanes moved each way, and
 * whether it carries connections now (version 14). */
struct ctl_stats_rail {
        uint8_t up;                     /* 0 or 1 */
        uint64_t bytes[_CTL_DIR_MAX];
        char name[CTL_RAIL_NAME_MAX + 1];       /* "rxe_alpha": 1 or more printable bytes */
};

/* The daemon's counters since it started; no job, peer or file in it. */
struct ctl_stats {
        uint64_t uptime_usec;
        struct ctl_stats_dir dir[_CTL_DIR_MAX];
        uint32_t queued;                /* jobs waiting to be sent: QUEUED or RETRYING */
        uint32_t ring_held, ring_slots; /* receive ring: slots held by transfers, in all */
        uint32_t pool_held, pool_slots; /* send pool: the same */
        uint16_t nreasons;
        struct ctl_stats_reason reason[CTL_STATS_REASONS_MAX];  /* each (dir, name) once */
        uint8_t nrails;                 /* 0 .. CTL_RAILS_MAX */
        struct ctl_stats_rail rail[CTL_RAILS_MAX];
};

/*
 * What rdmaxferd.conf says to the daemon's clients, for every user of the
 * socket: nothing in it names a job, peer, file or user.
 */
struct ctl_settings {
        /* peer_names: the pattern xferctl maps peers' names through
         * (peername.h; the codec insists peername_check() takes it), ""
         * for none. */
        char peer_names[CTL_PEER_NAMES_MAX + 1];
        /* listen (version 13): the numeric address the daemon listens on
         * and connects from, "" for any; a pull's way back names it. */
        char listen[CTL_HOST_MAX + 1];
};

/* A dry run's verdict on an entry (ITEM). */
enum ctl_verdict {
        CTL_WOULD_CREATE = 0,
        CTL_WOULD_REPLACE,
        CTL_WOULD_KEEP,                 /* the peer has it (sync): skipped */
        CTL_WOULD_MERGE,                /* a directory there, merged into */
        CTL_WOULD_DELETE,               /* --delete: the peer's, beyond the tree */
        _CTL_VERDICT_MAX,
};

enum ctl_item_kind {
        CTL_ITEM_FILE = 0,
        CTL_ITEM_DIR,
        CTL_ITEM_LINK,                  /* a symlink */
        CTL_ITEM_HARD,                  /* a hard link */
        CTL_ITEM_OTHER,                 /* a device, fifo or socket (only deleted) */
        _CTL_ITEM_KIND_MAX,
};

struct ctl_item {
        uint64_t id;                    /* the job's */
        uint32_t seq;                   /* its place among the job's items, from 0 */
        uint8_t verdict;                /* enum ctl_verdict */
        uint8_t kind;                   /* enum ctl_item_kind */
        /* WOULD_REPLACE: 'c' (digests differ), 's' (sizes), 't' (mtimes),
         * 'a' (ACLs), 'x' (user.* attributes), each or '.'; the codec
         * insists on those, "....." otherwise. */
        char changes[6];
        uint64_t size;                  /* the entry's bytes as offered; a deletion's 0 */
        char name[CTL_PATH_MAX + 1];    /* "DEST/a/b", a single file's name */
};

struct ctl_error {
        int32_t code;                   /* -errno */
        char text[CTL_TEXT_MAX + 1];
};

struct ctl_msg {
        uint16_t type;                  /* enum ctl_type */
        union {
                struct ctl_submit submit;
                struct ctl_file file;
                uint64_t id;            /* SUBMITTED, STATUS, WATCH, CANCEL, ITEMS */
                struct ctl_item item;
                struct ctl_job job;
                struct ctl_error error;
                struct ctl_stats stats;
                struct ctl_settings settings;
        };
};

/*
 * Encode into @buf; returns the length or -EMSGSIZE / -EINVAL (a string
 * too long, unknown type). Decode checks magic, version, type and the exact
 * length for the type, and that strings are NUL-free and in bounds;
 * returns 0, -EBADMSG or -EPROTONOSUPPORT. It fills the first
 * ctl_msg_size(type) bytes of @m, zeroed first (the type and its member
 * of the union); the rest of @m is left as it was. On failure only
 * m->type may be read (0 unless the header was good).
 */
int ctl_encode(void *buf, size_t cap, const struct ctl_msg *m);
int ctl_decode(const void *buf, size_t len, struct ctl_msg *m);
/* The bytes of a struct ctl_msg a message of @type uses: the type and its
 * member of the union (a FILE: a few hundred of 32 KiB). */
size_t ctl_msg_size(uint16_t type);

/*
 * A control connection's send buffer, raised (as far as net.core.wmem_max
 * lets it) so that a few messages of CTL_MSG_MAX fit: an AF_UNIX
 * SOCK_SEQPACKET send of more than the buffer fails with EMSGSIZE
 * whatever is queued, and a host's wmem_default may be small. 0 or -errno.
 */
int ctl_socket_setup(int sock);

/*
 * Send one message on a SOCK_SEQPACKET socket, with @fd attached via
 * SCM_RIGHTS when @fd >= 0. Receive one message; a passed descriptor is
 * returned in *@fd (-1 if none; extra descriptors are closed). Both return
 * 0, -errno, or for ctl_recv -ECONNRESET on orderly close, -EBADMSG on
 * a truncated or undecodable message and -EMFILE when a descriptor passed
 * could not be taken (our open file limit). @m is as ctl_decode() leaves it.
 */
int ctl_send(int sock, const struct ctl_msg *m, int fd);
int ctl_recv(int sock, struct ctl_msg *m, int *fd);

/*
 * Messages sent several to a sendmmsg(2), each still its own record with
 * its own descriptor, in order (a tree's FILEs: one system call for up to
 * CTL_BATCH_MAX entries instead of one each). ctl_batch_add() encodes @m
 * and takes @fd (-1: none), sending what is held first when the batch is
 * full; ctl_batch_flush() sends what is held. Both return 0 or -errno;
 * a descriptor taken is closed once sent, or by ctl_batch_drop(), which
 * an error leaves to the caller. Each message must encode in
 * CTL_BATCH_BYTES (a FILE takes a few hundred bytes; a SUBMIT with a long
 * route may not fit: -EMSGSIZE, send it with ctl_send()).
 */
#define CTL_BATCH_MAX           32
#define CTL_BATCH_BYTES         16384
struct ctl_batch {
        int sock;
        unsigned int n;
        size_t used;
        size_t off[CTL_BATCH_MAX], len[CTL_BATCH_MAX];
        int fd[CTL_BATCH_MAX];
        uint8_t buf[CTL_BATCH_BYTES];
};
void ctl_batch_init(struct ctl_batch *b, int sock);
int ctl_batch_add(struct ctl_batch *b, const struct ctl_msg *m, int fd);
int ctl_batch_flush(struct ctl_batch *b);
void ctl_batch_drop(struct ctl_batch *b);
