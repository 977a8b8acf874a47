#pragma once

/*
 * Partials: what a receiver keeps of an interrupted transfer so that the
 * next attempt of the same transfer sends only what is missing
 * (rdmaxferd(8), RESUMING). Each is two files in the partial directory,
 * both named by partial_key():
 *
 *   KEY.data   the received bytes (the transfer's nameless file, linked)
 *   KEY.rec    the record below, PARTIAL_REC_SIZE bytes, replaced
 *              atomically (temporary file, fsync, rename, directory fsync)
 *
 * A record says only what was fsynced: per lane, how many chunks from the
 * start of its run were written *and* flushed before the record was. Pure
 * encode/decode, matching and the sweep's choice; no I/O here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define PARTIAL_MAGIC           "RDXPART\n"
/* 2: lanes split by 1 MiB blocks (wire version 13); a record of 1 is not read */
#define PARTIAL_VERSION         2
#define PARTIAL_REC_SIZE        1536
#define PARTIAL_KEY_ID_SIZE     32
/* The destination, relative to the incoming directory: a leaf name today;
 * room for a path beneath it for multi-file jobs. */
#define PARTIAL_DEST_MAX        1023
#define PARTIAL_KEY_HEX         33      /* 32 hex digits and a NUL */
/* "KEY.data", "KEY.rec", "KEY.tmp" */
#define PARTIAL_FILE_MAX        (PARTIAL_KEY_HEX + 5)

/* The transfer was verified and published: no data file; the lanes' digests
 * are what was verified (a RESULT that never reached the sender), and the
 * file's digest what was logged then. */
#define PARTIAL_PUBLISHED       0x0001u
/*
 * A tree's staging directory kept for the job's next attempt (rdmaxferd(8),
 * Resuming a tree): KEY.tree, a directory, instead of KEY.data. dest is
 * the tree's DEST (a path), size the job's bytes, source the job's token
 * (its first offer's), lanes 1; the progress is in @tree. Its record is
 * written before each entry's RESULT goes, without an fsync: it holds
 * within one boot of the host (boot_id), which is all a staging
 * directory, synced only when the tree is published, can promise.
 *
 * Published (PARTIAL_TREE | PARTIAL_PUBLISHED): the tree is in place as
 * dest, and its job's last RESULT may not have reached the sender. No
 * KEY.tree; entries and published are job_files; dest_dev and dest_ino
 * are DEST's as published, so that a retry of the job is answered
 * "every entry is here" only while DEST is that directory.
 * Written with an fsync, it holds across boots until partial_retention.
 */
#define PARTIAL_TREE            0x0002u
#define PARTIAL_FLAGS           (PARTIAL_PUBLISHED | PARTIAL_TREE)
#define PARTIAL_BOOT_SIZE       16
/*
 * A file's partial resumed this many times in a row by attempts that
 * ended without a byte more is dropped, and the next attempt starts from
 * nothing (issue 32 M2): each resume gives its sender time to read back
 * what was kept (xfer_grace), and a peer must not take that time for
 * ever by resuming and sending nothing.
 */
#define PARTIAL_IDLE_MAX        3

/* A kept tree's progress: what its entries so far left on the receiver. */
struct partial_tree {
        uint32_t job_files;             /* the job's entries, DEST included */
        uint32_t entries;               /* staged: entries 0 .. entries - 1 */
        uint64_t offered;               /* their bytes */
        uint64_t links_len;             /* bytes of the list of symlinks that hold them */
        uint32_t published;             /* entries answered ok (journal counts) */
        uint32_t packs;
        uint32_t skipped;
        uint8_t boot_id[PARTIAL_BOOT_SIZE];     /* the host's boot the record was written in */
        uint64_t dest_dev, dest_ino;            /* published: DEST's st_dev and st_ino; else 0 */
};

struct partial_rec {
        uint32_t flags;
        /* Who offered it: the peer's address (IPv4 as ::ffff:a.b.c.d; zero
         * for a relay's offer, which any node of the chain may continue)
         * and, with a pre-shared key, partial_key_id() of that key (zero
         * without). */
        uint8_t peer[WIRE_ADDR_SIZE];
        uint8_t key_id[PARTIAL_KEY_ID_SIZE];
        uint8_t source[WIRE_SOURCE_SIZE];       /* the OFFER's */
        uint64_t transfer_id;                   /* for the admin's listing only */
        uint64_t size;
        uint32_t chunk_size;
        uint32_t lanes;                         /* 1 .. WIRE_LANES_MAX */
        uint64_t created, updated;              /* CLOCK_REALTIME seconds */
        /* Per lane of @lanes: chunks from the first of its run
         * (wire_lane_range) written and fsynced. */
        uint64_t kept[WIRE_LANES_MAX];
        uint8_t digest[WIRE_LANES_MAX][WIRE_DIGEST_SIZE];  /* PUBLISHED only */
        uint8_t file_digest[WIRE_DIGEST_SIZE];  /* PUBLISHED only: the file's (digest.h) */
        /* TREE only (kept[] is zero then): on disk where kept[] and
         * digest[0] are for a file. */
        struct partial_tree tree;
        char dest[PARTIAL_DEST_MAX + 1];
        /* A file's: attempts in a row that resumed it and ended without
         * a byte more (PARTIAL_IDLE_MAX); zero in a record written before. */
        uint32_t idle_resumes;
};

/* Exactly PARTIAL_REC_SIZE bytes into @buf; @r must be valid (partial_check). */
void partial_encode(void *buf, const struct partial_rec *r);
/*
 * 0; -EBADMSG when the bytes are not a whole record (size, magic,
 * checksum); -EPROTONOSUPPORT for another version; -EINVAL when the fields
 * do not hold together (partial_check).
 */
int partial_decode(const void *buf, size_t len, struct partial_rec *r);
/* The fields hold together: lanes, chunk size, each lane's kept within its
 * run, the destination a name name_check() accepts (a tree's: a path
 * name_path_check() accepts, its entries within 1 .. job_files, lanes 1,
 * kept[] zero, its bytes within size), known flags. 0 or -EINVAL. */
int partial_check(const struct partial_rec *r);

/* What names a key without revealing it: a keyed hash of a fixed label. */
void partial_key_id(const uint8_t *key, size_t len, uint8_t out[PARTIAL_KEY_ID_SIZE]);
/* The files' common name: a hash of peer, key id, destination and whether
 * it is a tree, in hex. */
void partial_key(const struct partial_rec *r, char out[PARTIAL_KEY_HEX]);

/* What a new offer brings, to compare with a record. */
struct partial_offer {
        uint8_t peer[WIRE_ADDR_SIZE];
        uint8_t key_id[PARTIAL_KEY_ID_SIZE];
        uint8_t source[WIRE_SOURCE_SIZE];
        uint64_t size;
        uint32_t chunk_size;
        const char *dest;
        uint32_t job_files;     /* a tree's (0: a file): a kept tree's must be the same */
};

enum partial_match {
        PARTIAL_MATCH = 0,
        PARTIAL_OTHER_PEER,     /* another address, or another key (or none) */
        PARTIAL_OTHER_FILE,     /* another destination, size, chunk size or count of entries */
        PARTIAL_OTHER_SOURCE,   /* the source changed (or the sender gave none) */
};
enum partial_match partial_match(const struct partial_rec *r, const struct partial_offer *o);
const char *partial_match_str(enum partial_match m);

/*
 * Where each of @lanes new lanes resumes: the chunks from the first of its
 * run that the record's lanes together hold (their kept prefixes are
 * intervals of the file; a new lane keeps what is contiguous from its own
 * first chunk). Lanes past @lanes get 0. Returns the bytes not to be sent
 * again.
 */
uint64_t partial_resume(const struct partial_rec *r, unsigned int lanes,
                        uint32_t resume[WIRE_LANES_MAX]);
/* Bytes the record's lanes hold. */
uint64_t partial_kept_bytes(const struct partial_rec *r);

/*
 * The sweep: which partials go. Those not updated for @retention seconds,
 * then, oldest first, as many as it takes to bring the rest to at most
 * @max_bytes. Sets @remove on each that goes; returns how many.
 */
struct partial_entry {
        uint64_t updated;       /* CLOCK_REALTIME seconds */
        uint64_t bytes;         /* on disk */
        bool remove;
};
unsigned int partial_sweep_select(struct partial_entry *e, size_t n, uint64_t now,
                                  uint64_t retention, uint64_t max_bytes);
