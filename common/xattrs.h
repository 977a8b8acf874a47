#pragma once

/*
 * An entry's extended attributes as bytes (xferctl send -X, -A): what
 * xferctl reads from the entry as its user, what travels with the entry
 * (wire.h, Attributes) and what rdmaxfer-lander sets, as that user, on
 * what lands. Pure code but for xattrs_read() and xattrs_apply(), which
 * call the kernel on a descriptor.
 *
 * A byte stream of records, one an attribute, in any order:
 *
 *   name_len u8, value_len u16 (little-endian), name[name_len] (no NUL),
 *   value[value_len]
 *
 * XATTRS_BYTES_MAX bytes at most in all (what ext4 keeps of an inode's
 * attributes, one block, is about as much). The names are what Linux
 * calls them, each once, of the namespaces rdmaxfer carries:
 *
 *   user.*                      -X (never user.rdmaxfer.*: the receiver's own)
 *   system.posix_acl_access     -A: the POSIX ACL, in the kernel's own
 *   system.posix_acl_default        format, uids and gids as numbers (they
 *                                   map 1:1 across the cluster, as MUNGE
 *                                   assumes)
 *
 * Nothing else: security.* (SELinux labels, capabilities) is the
 * receiving host's to give, not the sender's; trusted.* takes
 * CAP_SYS_ADMIN to set, which rdmaxfer-lander is never given (it holds
 * CAP_SETUID and CAP_SETGID only), so it is not carried either.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XATTRS_BYTES_MAX        4095
#define XATTRS_RECORD_HEADER    3

/* Which namespaces: xattrs_read()'s and xattrs_apply()'s @which. */
enum {
        XATTRS_USER = 1 << 0,
        XATTRS_ACL = 1 << 1,
};

#define XATTRS_ACL_ACCESS       "system.posix_acl_access"
#define XATTRS_ACL_DEFAULT      "system.posix_acl_default"

struct xattr_rec {
        const char *name;       /* name_len bytes, not NUL-terminated */
        size_t name_len;
        const uint8_t *value;
        size_t value_len;
};

/* The namespace of the attribute @name (@len bytes) that rdmaxfer
 * carries (XATTRS_*), or 0 for one it does not. */
unsigned int xattrs_kind(const char *name, size_t len);

/* The record at *@off of @buf (@len bytes) into *@r (pointing into @buf),
 * *@off past it: 1; 0 at the end; -EBADMSG for a record cut short. */
int xattrs_next(const uint8_t *buf, size_t len, size_t *off, struct xattr_rec *r);

/* @buf holds only well-formed records, within XATTRS_BYTES_MAX, each name
 * of a namespace rdmaxfer carries and there once: 0 and *@which (may be
 * NULL) their namespaces; -EBADMSG otherwise. */
int xattrs_check(const uint8_t *buf, size_t len, unsigned int *which);

/* @a and @b (xattrs_check()ed: each name once) hold the same attributes
 * with the same values, in whatever order. */
bool xattrs_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* Where they are not the same: XATTRS_USER where a user.* attribute is
 * in one and not the other or has another value, XATTRS_ACL an ACL (a
 * record cut short: both); 0 where they are. */
unsigned int xattrs_differ(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Append a record to @buf (*@len used of @cap): 0 or -E2BIG. */
int xattrs_put(uint8_t *buf, size_t cap, size_t *len, const char *name, const void *value, size_t value_len);

/*
 * What the open file or directory @fd has of @which, as records into @buf
 * (@cap bytes): their length (0: none); -E2BIG when they take more than
 * @cap (*@need, when not NULL, how many); -errno where the kernel said no
 * (*@bad, when not NULL, the attribute's name, or "" for the list).
 */
int xattrs_read(int fd, unsigned int which, uint8_t *buf, size_t cap, size_t *need, char bad[static 256]);

/*
 * Set @buf's attributes (xattrs_check()ed) on @fd; with XATTRS_ACL in
 * @which, the ACLs @buf lacks are removed (what a directory's default ACL
 * gave a new file), so the entry's ACLs are the sender's exactly. 0 or
 * -errno, *@bad the attribute's name.
 */
int xattrs_apply(int fd, const uint8_t *buf, size_t len, unsigned int which, char bad[static 256]);
