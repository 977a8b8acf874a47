/*
 * An entry's extended attributes as bytes (xattrs.h).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "macro.h"
#include "xattrs.h"

#define XATTRS_OURS             "user.rdmaxfer."

static bool xattrs_prefixed(const char *name, size_t len, const char *prefix)
{
        size_t n = strlen(prefix);

        return len > n && memcmp(name, prefix, n) == 0;
}

static bool xattrs_is(const char *name, size_t len, const char *what)
{
        return len == strlen(what) && memcmp(name, what, len) == 0;
}

unsigned int xattrs_kind(const char *name, size_t len)
{
        if (len == 0 || len > 255 || memchr(name, '\0', len))
                return 0;
        if (xattrs_prefixed(name, len, XATTRS_OURS) || xattrs_is(name, len, "user.rdmaxfer"))
                return 0;
        if (xattrs_prefixed(name, len, "user."))
                return XATTRS_USER;
        if (xattrs_is(name, len, XATTRS_ACL_ACCESS) || xattrs_is(name, len, XATTRS_ACL_DEFAULT))
                return XATTRS_ACL;
        return 0;
}

int xattrs_next(const uint8_t *buf, size_t len, size_t *off, struct xattr_rec *r)
{
        size_t o = *off;

        if (o >= len)
                return 0;
        if (len - o < XATTRS_RECORD_HEADER)
                return -EBADMSG;
        r->name_len = buf[o];
        r->value_len = (size_t)buf[o + 1] | (size_t)buf[o + 2] << 8;
        o += XATTRS_RECORD_HEADER;
        if (r->name_len == 0 || len - o < r->name_len || len - o - r->name_len < r->value_len)
                return -EBADMSG;
        r->name = (const char *)buf + o;
        r->value = buf + o + r->name_len;
        *off = o + r->name_len + r->value_len;
        return 1;
}

int xattrs_check(const uint8_t *buf, size_t len, unsigned int *which)
{
        struct xattr_rec r, s;
        unsigned int seen = 0, k;
        size_t off = 0, prev = 0;
        int n;

        if (len > XATTRS_BYTES_MAX || (len > 0 && !buf))
                return -EBADMSG;
        while ((n = xattrs_next(buf, len, &off, &r)) > 0) {
                k = xattrs_kind(r.name, r.name_len);
                if (!k)
                        return -EBADMSG;
                /* Each name once: the records before this one. */
                for (size_t o = 0; o < prev;) {
                        if (xattrs_next(buf, prev, &o, &s) <= 0)
                                return -EBADMSG;
                        if (s.name_len == r.name_len && memcmp(s.name, r.name, r.name_len) == 0)
                                return -EBADMSG;
                }
                seen |= k;
                prev = off;
        }
        if (n < 0)
                return n;
        if (which)
                *which = seen;
        return 0;
}

/* @name's record in @buf, or false. */
static bool xattrs_find(const uint8_t *buf, size_t len, const struct xattr_rec *want, struct xattr_rec *r)
{
        size_t off = 0;

        while (xattrs_next(buf, len, &off, r) > 0)
                if (r->name_len == want->name_len && memcmp(r->name, want->name, want->name_len) == 0)
                        return true;
        return false;
}

unsigned int xattrs_differ(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
        struct xattr_rec r, s;
        unsigned int d = 0;
        size_t off = 0;
        int n;

        /* What @a has that @b has with another value or not at all ... */
        while ((n = xattrs_next(a, alen, &off, &r)) > 0)
                if (!xattrs_find(b, blen, &r, &s) || s.value_len != r.value_len ||
                    (r.value_len && memcmp(s.value, r.value, r.value_len) != 0))
                        d |= xattrs_kind(r.name, r.name_len) ?: XATTRS_USER;
        if (n < 0)
                return XATTRS_USER | XATTRS_ACL;
        /* ... and what @b has that @a lacks. */
        for (off = 0; (n = xattrs_next(b, blen, &off, &s)) > 0;)
                if (!xattrs_find(a, alen, &s, &r))
                        d |= xattrs_kind(s.name, s.name_len) ?: XATTRS_USER;
        return n < 0 ? XATTRS_USER | XATTRS_ACL : d;
}

bool xattrs_same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
        return xattrs_differ(a, alen, b, blen) == 0;
}

int xattrs_put(uint8_t *buf, size_t cap, size_t *len, const char *name, const void *value, size_t value_len)
{
        size_t nl = strlen(name);

        if (nl == 0 || nl > 255 || value_len > 0xffff || *len > cap ||
            cap - *len < XATTRS_RECORD_HEADER + nl + value_len)
                return -E2BIG;
        buf[*len] = (uint8_t)nl;
        buf[*len + 1] = (uint8_t)value_len;
        buf[*len + 2] = (uint8_t)(value_len >> 8);
        memcpy(buf + *len + XATTRS_RECORD_HEADER, name, nl);
        if (value_len)
                memcpy(buf + *len + XATTRS_RECORD_HEADER + nl, value, value_len);
        *len += XATTRS_RECORD_HEADER + nl + value_len;
        return 0;
}

static void xattrs_bad(char bad[static 256], const char *name)
{
        if (bad)
                snprintf(bad, 256, "%s", name);
}

int xattrs_read(int fd, unsigned int which, uint8_t *buf, size_t cap, size_t *need, char bad[static 256])
{
        _cleanup_(freep) char *names = NULL;
        _cleanup_(freep) uint8_t *value = NULL;
        size_t len = 0, want = 0;
        ssize_t n;

        if (need)
                *need = 0;
        xattrs_bad(bad, "");
        /* The list's size, then the list: it may grow in between. */
        for (int tries = 0;; tries++) {
                n = flistxattr(fd, NULL, 0);
                if (n < 0)
                        return errno == ENOTSUP ? 0 : -errno;
                if (n == 0)
                        return 0;
                free(names);
                names = malloc((size_t)n + 1);
                if (!names)
                        return -ENOMEM;
                n = flistxattr(fd, names, (size_t)n);
                if (n >= 0)
                        break;
                if (errno != ERANGE || tries == 3)
                        return -errno;
        }
        names[n] = '\0';
        value = malloc(0x10000);
        if (!value)
                return -ENOMEM;
        for (char *p = names; p < names + n; p += strlen(p) + 1) {
                size_t nl = strlen(p);
                ssize_t v;

                if (!(xattrs_kind(p, nl) & which))
                        continue;
                v = fgetxattr(fd, p, value, 0x10000);
                if (v < 0) {
                        if (errno == ENODATA)
                                continue;       /* gone meanwhile */
                        xattrs_bad(bad, p);
                        return -errno;
                }
                want += XATTRS_RECORD_HEADER + nl + (size_t)v;
                if (want <= cap && xattrs_put(buf, cap, &len, p, value, (size_t)v) < 0)
                        return -E2BIG;
        }
        if (want > cap) {
                if (need)
                        *need = want;
                return -E2BIG;
        }
        return (int)len;
}

int xattrs_apply(int fd, const uint8_t *buf, size_t len, unsigned int which, char bad[static 256])
{
        static const char *const acls[] = { XATTRS_ACL_ACCESS, XATTRS_ACL_DEFAULT };
        char name[256];
        struct xattr_rec r;
        size_t off;
        int n = 0;

        xattrs_bad(bad, "");
        /* The ACLs last: an access ACL rewrites the mode, which may take
         * away its owner's right to write the others. */
        for (int pass = 0; pass < 2; pass++) {
                off = 0;
                while ((n = xattrs_next(buf, len, &off, &r)) > 0) {
                        if ((xattrs_kind(r.name, r.name_len) == XATTRS_ACL) != (pass == 1))
                                continue;
                        memcpy(name, r.name, r.name_len);
                        name[r.name_len] = '\0';
                        if (fsetxattr(fd, name, r.value, r.value_len, 0) < 0) {
                                xattrs_bad(bad, name);
                                return -errno;
                        }
                }
                if (n < 0)
                        return n;
        }
        if (!(which & XATTRS_ACL))
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(acls); i++) {
                bool have = false;

                off = 0;
                while (xattrs_next(buf, len, &off, &r) > 0)
                        have |= xattrs_is(r.name, r.name_len, acls[i]);
                /* A file has no default ACL (EACCES, or none: ENODATA). */
                if (!have && fremovexattr(fd, acls[i]) < 0 && errno != ENODATA && errno != EACCES &&
                    errno != ENOTSUP) {
                        xattrs_bad(bad, acls[i]);
                        return -errno;
                }
        }
        return 0;
}
