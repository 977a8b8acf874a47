#pragma once

/*
 * A list of a tree's entries, without their data: what a relay keeps
 * beside a tree it may continue (daemon/engine/recv/relay.h), so that its next
 * hop can be offered every entry under the origin's index. Pure code.
 *
 * A byte stream of records, one an entry, in order:
 *
 *   type u8 (PACK_DIR, PACK_FILE, PACK_LINK), flags u8 (0, or a link's
 *   PACK_F_HARD), name_len u16, mode u32, mtime_ns u64, size u64, then
 *   name[name_len] ("DEST/a/b", no NUL), then a link's target (size
 *   bytes, no NUL; a hard link's: the tree's name it shares a file with)
 *
 * in the host's byte order: a list never leaves the host that wrote it.
 * A regular file's size is its length; its data is not in the list.
 */

#include <stddef.h>
#include <stdint.h>

#define ENTLIST_HEADER          24

struct entlist {
        uint8_t *buf;
        size_t len, cap;
};

#define ENTLIST_NULL ((struct entlist){ .buf = NULL })

struct entlist_entry {
        uint8_t type;           /* enum pack_type */
        uint8_t flags;          /* PACK_F_HARD on a PACK_LINK, else 0 */
        uint32_t mode;
        uint64_t mtime_ns;
        uint64_t size;          /* a file's length; a symlink's target's; 0 for a directory */
        const char *name;
        size_t name_len;        /* 1 .. WIRE_PATH_MAX */
        const char *target;     /* a symlink's, size bytes; NULL otherwise */
};

/* Append @e's record. 0; -EINVAL for an entry the list cannot hold (an
 * unknown type, a name empty or longer than WIRE_PATH_MAX, a directory
 * with a size, a symlink without a target or one longer than
 * NAME_LINK_MAX, a flag but a link's PACK_F_HARD, a hard link's target
 * longer than WIRE_PATH_MAX); -ENOMEM. */
int entlist_put(struct entlist *l, const struct entlist_entry *e);
/* The record at *@off of @buf (@len bytes), into *@e (pointing into
 * @buf), and *@off past it: 1; 0 at the end; -EBADMSG for a record cut
 * short or one entlist_put() would not have written. */
int entlist_next(const uint8_t *buf, size_t len, size_t *off, struct entlist_entry *e);
/* The bytes the first @n records of @buf take; -EBADMSG when it holds
 * fewer, or a malformed one among them. */
int64_t entlist_span(const uint8_t *buf, size_t len, uint32_t n);
void entlist_free(struct entlist *l);
