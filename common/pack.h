#pragma once

/*
 * A pack: several small entries of a tree (wire.h) carried as one offer's
 * data, so a 4 KiB file costs neither a round trip nor a slot of its own.
 * Pure code: the sender's daemon builds one in memory, the receiver's
 * parses one it has received whole.
 *
 * A pack is a byte stream of records, one per entry, in the order the
 * entries would have been offered (a directory before what it holds):
 *
 *   type u8 (PACK_DIR, PACK_FILE, PACK_LINK), flags u8 (0, or a link's
 *   PACK_F_HARD), name_len u16, mode u32 (07777 at most; 0 for a
 *   symlink), mtime_ns u64, size u64 (0 for a directory; 1 ..
 *   NAME_LINK_MAX for a symlink, 1 .. PACK_NAME_MAX for a hard link),
 *   then name[name_len] ("DEST/a/b", no NUL), then the file's size bytes
 *   (a symlink's: its target; a hard link's: the name of the tree's
 *   regular file it is another name of, "DEST/c/d"; no NUL)
 *
 * A PACK_DIR's or PACK_FILE's record with PACK_F_XATTRS (wire version 27,
 * wire.h's Attributes) has, between its name and its data, xattrs_len u16
 * (1 .. XATTRS_BYTES_MAX) and the entry's attributes (xattrs.h's records,
 * xattrs_check()ed), which the pack hash covers with the name.
 *
 * A PACK_FILE with PACK_F_INDEX (an index pack's, wire version 24: wire.h,
 * "Index packs") carries not the file's bytes but PACK_INDEX_DATA bytes,
 * the file's digest (digest.h) or zeros, and size is still the file's.
 *
 * integers little-endian. Nothing follows the last record. The pack hash
 * is SHA-256 over every record's header and name in order (not the data:
 * the offer's block digest covers that), carried in the pack's OFFER so
 * the session MAC covers the names, modes and sizes as it covers a single
 * entry's offer.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#define PACK_RECORD_HEADER      24
#define PACK_HASH_SIZE          32
/* At most this many entries and bytes (headers, names and data) in one
 * pack: what a receiver reads into memory to unpack it. */
#define PACK_ENTRIES_MAX        4096u
#define PACK_BYTES_MAX          (8u << 20)
/* Files up to this size go into packs; larger ones are offered alone.
 * Half of PACK_BYTES_MAX, so two always fit: one session carries one
 * file at a time, and under TCG a file offered alone costs a chunk's
 * whole latency plus the verdict's and the next offer's round trips
 * (~40 ms), where a pack's extra copies of its bytes cost far less. */
#define PACK_FILE_MAX           (PACK_BYTES_MAX / 2)
/* The same for a job that skips what the receiver has (xferctl send
 * --sync, --skip-existing) and does not index its packs (wire.h, Index
 * packs; a sender of version 24 indexes every such job's): a packed
 * file's data moves whether or not the receiver keeps its own copy, so
 * only files this small, whose data costs less than asking, go into
 * packs; larger ones are offered alone, and the receiver can skip them
 * before their data moves. */
#define PACK_SYNC_FILE_MAX      (256u << 10)
/* A name's bytes, as an offer's (WIRE_NAME_MAX). */
#define PACK_NAME_MAX           255

enum pack_type {
        PACK_DIR = 1,
        PACK_FILE = 2,
        PACK_LINK = 3,          /* wire version 9 */
};

/* A PACK_LINK's flag (wire version 15): not a symlink but a hard link,
 * its data the name of an earlier regular file of the same tree. */
#define PACK_F_HARD             0x01u
/* A PACK_FILE's flag (wire version 24): the file is indexed, not carried;
 * its data is PACK_INDEX_DATA bytes, its digest or zeros. */
#define PACK_F_INDEX            0x02u
#define PACK_INDEX_DATA         16
/* A directory's or file's flag (wire version 27): its attributes follow its name. */
#define PACK_F_XATTRS           0x04u
/* An index pack holds at most this many entries: the receiver's NEED
 * answers each with a bit (wire.h, WIRE_NEED_ENTRIES_MAX). */
#define PACK_INDEX_ENTRIES_MAX  2048u

struct pack_entry {
        uint8_t type;           /* enum pack_type */
        uint8_t flags;          /* PACK_F_HARD on a PACK_LINK, else 0 */
        uint32_t mode;          /* permission bits, 07777 at most, exact (a symlink: 0) */
        uint64_t mtime_ns;      /* a file's mtime, ns since the epoch; 0: not kept */
        uint64_t size;          /* data bytes; 0 for a directory, the target's for a symlink;
                                 * an indexed file's (PACK_F_INDEX) size, its data PACK_INDEX_DATA */
        const char *name;       /* name_len bytes, no NUL in a parsed pack */
        size_t name_len;
        const uint8_t *data;    /* parsed: the data within the pack */
        const uint8_t *xattrs;  /* with PACK_F_XATTRS: xattrs_len bytes (xattrs.h); else NULL, 0 */
        uint16_t xattrs_len;
};

/* A pack being built, in memory. */
struct pack_writer {
        uint8_t *buf;
        size_t len, cap;
        uint32_t count;
        crypto_hash_sha256_state h;
};

#define PACK_WRITER_NULL ((struct pack_writer){ .buf = NULL })

void pack_writer_init(struct pack_writer *w);
void pack_writer_deinit(struct pack_writer *w);         /* safe on PACK_WRITER_NULL */

/* The room a record of @e (name and data) takes in a pack. */
uint64_t pack_record_size(uint64_t name_len, uint64_t size);
/* The bytes @e's attributes take in its record (PACK_F_XATTRS: 2 + xattrs_len; else 0). */
uint64_t pack_xattrs_size(const struct pack_entry *e);
/* The bytes of @e's data in its record: its size, or an indexed file's PACK_INDEX_DATA. */
uint64_t pack_data_len(const struct pack_entry *e);

/*
 * Append @e's record: its header and name now, and room for its data,
 * *@data (NULL for an empty one), which the caller fills before the next
 * append (that may move the pack). 0; -EINVAL for a bad entry (type, mode, name empty or longer
 * than PACK_NAME_MAX, a directory with data, a symlink with a mode or
 * PACK_F_XATTRS without attributes or with ones xattrs_check() refuses,
 * without a target or one longer than NAME_LINK_MAX, a flag but a link's
 * PACK_F_HARD or a file's PACK_F_INDEX, a hard link's target longer than
 * PACK_NAME_MAX); the data room of an indexed file is PACK_INDEX_DATA; -EFBIG when the pack would
 * grow past PACK_ENTRIES_MAX or PACK_BYTES_MAX; -ENOMEM.
 */
int pack_append(struct pack_writer *w, const struct pack_entry *e, uint8_t **data);
/* The pack hash of what is appended so far. */
void pack_writer_hash(const struct pack_writer *w, uint8_t out[PACK_HASH_SIZE]);

/* Walks a pack in memory, trusting none of its lengths. */
struct pack_reader {
        const uint8_t *buf;
        size_t len, off;
        uint32_t count, entries;
        crypto_hash_sha256_state h;
        const char *why;        /* after -EBADMSG: what is wrong, for people */
};

/* Read the @len bytes at @buf, which must hold exactly @entries records. */
void pack_reader_init(struct pack_reader *r, const void *buf, size_t len, uint32_t entries);

enum {
        PACK_END = 0,           /* every record read, the pack well formed */
        PACK_ENTRY = 1,         /* *@e is the next record (pointing into the pack) */
};

/*
 * The next record: PACK_ENTRY, PACK_END after the last one when the pack
 * holds the count announced and nothing more, or -EBADMSG (r->why says
 * what: a short header, an unknown type or flag, a mode past 07777, a
 * directory with data, a symlink with a mode or whose target is empty,
 * longer than NAME_LINK_MAX or holds a NUL, a hard link whose target
 * name_path_check() refuses, a name that name_path_check() refuses, data past the end, more or fewer records than announced,
 * trailing bytes). Where a symlink's target may point is the receiver's
 * to judge (name_link_check(), tree_symlinks), not the pack's.
 */
int pack_next(struct pack_reader *r, struct pack_entry *e);
/* After PACK_END: the pack hash of every record read. */
void pack_reader_hash(const struct pack_reader *r, uint8_t out[PACK_HASH_SIZE]);

/*
 * Check a whole pack: well formed as pack_next() sees it, @entries
 * records, and its pack hash @hash. 0, or -EBADMSG with *@why set.
 */
int pack_check(const void *buf, size_t len, uint32_t entries, const uint8_t hash[PACK_HASH_SIZE],
               const char **why);
