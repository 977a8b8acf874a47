#pragma once

/*
 * One structured journald entry per finished transfer, on each side
 * (sd_journal_send). MESSAGE_IDs live in msgid.h and are explained in
 * systemd/rdmaxferd.catalog.
 */

#include <stdbool.h>
#include <stdint.h>

struct journal_xfer {
        const char *direction;  /* "send" or "recv" */
        uint64_t id;            /* sender's transfer id */
        unsigned int attempt;   /* send: the job's attempt (1, 2, ...); 0: not counted */
        const char *peer;       /* "198.18.0.1:7470" */
        const char *file;       /* leaf name */
        uint64_t bytes;         /* bytes moved (the file size on success, resumed bytes included) */
        uint64_t resumed;       /* of those, kept from an interrupted attempt: not sent again */
        uint64_t holes;         /* of those, a sparse file's holes: never sent (wire.h version 16) */
        uint64_t usec;          /* first send .. last completion (send), first .. last data (recv) */
        unsigned int status;    /* enum wire_status; WIRE_OK on success */
        const char *text;       /* cause on failure ("ibv_wc: transport retry counter exceeded"), or NULL */
        const char *digest;     /* XXH3-128 hex, or NULL */
        unsigned int lanes;     /* queue pairs it was striped over (0: never got that far) */
        const char *rails;      /* the RDMA devices they went over, "rxe_a,rxe_b"; NULL or "": none */
        const char *rail_lanes; /* how many lanes over each of several, "3,1"; NULL or "": one rail */
        const char *rails_lost; /* rails lost under it, its lanes joined again over others; NULL or "" */
        unsigned int files;     /* a job of several files: how many were published (0: one file) */
        unsigned int files_total;       /* and how many it held */
        unsigned int packs;     /* recv, a tree: offers that carried a pack of entries (wire.h) */
        unsigned int skipped;   /* sync: entries the receiver had already, not sent (of files) */
        uint64_t deleted;       /* a tree with --delete: entries of the old DEST removed */
        bool cancelled;         /* stopped by the user: logged as a failure, RESULT "cancelled" */
        /* A relay chain (wire.h): recv, the next hop it relayed to; send,
         * the hops after the peer, how many published the file too, and
         * the first that did not ("198.18.0.4:7471: why"), or NULL. */
        const char *relay;
        unsigned int hops, hops_ok;
        const char *hop_failed;
        /* send, a relay's downstream: of bytes, those sent straight from
         * the receive ring (the rest was read back from its copy). */
        bool relayed;
        uint64_t forwarded;
        /* recv, landed as a user (wire.h, Landing as the user): where, and
         * as whom (land_user may be ""); NULL: the drop box. */
        const char *land_path;
        const char *land_user;
        unsigned int land_uid;
        /* recv, a pull (wire.h, Pulls): land_path was read as the user and
         * sent back (bytes of it, in usec): RDMAXFER_PULLED, not LANDED. */
        bool pull;
};

/*
 * Logs e.g. MESSAGE="received foo.dat (1073741824 bytes) from 198.18.0.1:7470
 * in 20.400 s: 52.6 MB/s" with RDMAXFER_ID, RDMAXFER_DIRECTION,
 * RDMAXFER_PEER, RDMAXFER_FILE, RDMAXFER_BYTES, RDMAXFER_USEC,
 * RDMAXFER_MBPS (10^6 bytes/s, one decimal), RDMAXFER_RESULT ("ok" or the
 * wire_status_str text, or "cancelled"), RDMAXFER_STATUS (number),
 * RDMAXFER_RESUMED_BYTES (bytes not sent again; MB/s counts only the rest),
 * RDMAXFER_LANES, RDMAXFER_ATTEMPT, RDMAXFER_DIGEST and RDMAXFER_ERROR when set;
 * for a job of several files (files_total > 1) the one entry of the job,
 * with RDMAXFER_FILES (published), RDMAXFER_FILES_TOTAL and
 * RDMAXFER_FILES_PER_SEC (one decimal), its MESSAGE counting files, and
 * RDMAXFER_PACKS when some came in packs; RDMAXFER_SKIPPED when a sync
 * job skipped any (xferctl send --sync, --skip-existing); RDMAXFER_DELETED
 * on a tree's entry, either side, when --delete removed any (also in MESSAGE,
 * "N deleted"). A relay's entry has
 * RDMAXFER_RELAY (the next hop); a chain's sender's RDMAXFER_NODES (the
 * peer and the hops after it), RDMAXFER_NODES_OK (those that published)
 * and RDMAXFER_NODE_FAILED when one did not; a relay's own send entry,
 * RDMAXFER_FORWARDED_BYTES. A receiver's entry of files that landed as
 * their user has RDMAXFER_UID, RDMAXFER_USER and RDMAXFER_LANDED (the path
 * the user named). Success means status ==
 * WIRE_OK and not cancelled; anything else gets MSGID_XFER_FAILED and
 * PRIORITY=warning.
 */
void journal_xfer(const struct journal_xfer *x);

/* MB/s as 10^6 bytes per second; 0 when usec is 0. */
double journal_mbps(uint64_t bytes, uint64_t usec);
