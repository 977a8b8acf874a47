/* A list of a tree's entries (entlist.h). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "entlist.h"
#include "macro.h"
#include "name.h"
#include "pack.h"
#include "wire.h"

struct entlist_rec {
        uint8_t type, flags;
        uint16_t name_len;
        uint32_t mode;
        uint64_t mtime_ns, size;
};

_Static_assert(sizeof(struct entlist_rec) == ENTLIST_HEADER, "a record's header is 24 bytes");

static bool entlist_ok(uint8_t type, uint8_t flags, size_t name_len, uint64_t size)
{
        if (type != PACK_DIR && type != PACK_FILE && type != PACK_LINK)
                return false;
        if ((flags & ~PACK_F_HARD) || (flags && (type != PACK_LINK || size > WIRE_PATH_MAX)))
                return false;
        if (name_len == 0 || name_len > WIRE_PATH_MAX)
                return false;
        if (type == PACK_DIR && size != 0)
                return false;
        return type != PACK_LINK || (size > 0 && size <= NAME_LINK_MAX);
}

int entlist_put(struct entlist *l, const struct entlist_entry *e)
{
        struct entlist_rec h;
        size_t tlen, need;

        if (!entlist_ok(e->type, e->flags, e->name_len, e->size) || (e->type == PACK_LINK && !e->target))
                return -EINVAL;
        h = (struct entlist_rec){ .type = e->type, .flags = e->flags, .name_len = (uint16_t)e->name_len, .mode = e->mode,
                                  .mtime_ns = e->mtime_ns, .size = e->size };
        tlen = e->type == PACK_LINK ? (size_t)e->size : 0;
        need = sizeof(h) + e->name_len + tlen;
        if (l->cap - l->len < need) {
                size_t cap = MAX(l->cap ? 2 * l->cap : 4096, l->len + need);
                uint8_t *n = realloc(l->buf, cap);

                if (!n)
                        return -ENOMEM;
                l->buf = n;
                l->cap = cap;
        }
        memcpy(l->buf + l->len, &h, sizeof(h));
        memcpy(l->buf + l->len + sizeof(h), e->name, e->name_len);
        if (tlen)
                memcpy(l->buf + l->len + sizeof(h) + e->name_len, e->target, tlen);
        l->len += need;
        return 0;
}

int entlist_next(const uint8_t *buf, size_t len, size_t *off, struct entlist_entry *e)
{
        struct entlist_rec h;
        size_t left = len - *off, tlen;

        if (left == 0)
                return 0;
        if (left < sizeof(h))
                return -EBADMSG;
        memcpy(&h, buf + *off, sizeof(h));
        if (!entlist_ok(h.type, h.flags, h.name_len, h.size))
                return -EBADMSG;
        tlen = h.type == PACK_LINK ? (size_t)h.size : 0;
        if (left - sizeof(h) < h.name_len + tlen)
                return -EBADMSG;
        *e = (struct entlist_entry){ .type = h.type, .flags = h.flags, .mode = h.mode, .mtime_ns = h.mtime_ns, .size = h.size,
                                     .name = (const char *)buf + *off + sizeof(h), .name_len = h.name_len };
        if (tlen)
                e->target = e->name + h.name_len;
        *off += sizeof(h) + h.name_len + tlen;
        return 1;
}

int64_t entlist_span(const uint8_t *buf, size_t len, uint32_t n)
{
        struct entlist_entry e;
        size_t off = 0;

        for (uint32_t i = 0; i < n; i++)
                if (entlist_next(buf, len, &off, &e) != 1)
                        return -EBADMSG;
        return (int64_t)off;
}

void entlist_free(struct entlist *l)
{
        free(l->buf);
        *l = ENTLIST_NULL;
}
