#include "pack.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "macro.h"
#include "name.h"
#include "xattrs.h"

static_assert(PACK_RECORD_HEADER == 1 + 1 + 2 + 4 + 8 + 8, "pack record header layout");
static_assert(PACK_HASH_SIZE == crypto_hash_sha256_BYTES, "the pack hash is SHA-256");
static_assert(PACK_NAME_MAX <= UINT16_MAX, "u16 name length");

void pack_writer_init(struct pack_writer *w)
{
        *w = PACK_WRITER_NULL;
        crypto_hash_sha256_init(&w->h);
}

void pack_writer_deinit(struct pack_writer *w)
{
        free(w->buf);
        *w = PACK_WRITER_NULL;
}

uint64_t pack_record_size(uint64_t name_len, uint64_t size)
{
        return PACK_RECORD_HEADER + name_len + size;
}

uint64_t pack_xattrs_size(const struct pack_entry *e)
{
        return (e->flags & PACK_F_XATTRS) ? 2u + (uint64_t)e->xattrs_len : 0;
}

uint64_t pack_data_len(const struct pack_entry *e)
{
        return (e->flags & PACK_F_INDEX) ? PACK_INDEX_DATA : e->size;
}

/* Flags a record of type @type may carry. */
static uint8_t pack_flags_allowed(uint8_t type)
{
        return type == PACK_LINK ? PACK_F_HARD : type == PACK_FILE ? PACK_F_INDEX | PACK_F_XATTRS : PACK_F_XATTRS;
}

static void pack_put_header(uint8_t out[PACK_RECORD_HEADER], const struct pack_entry *e)
{
        struct bytes_out o = BYTES_OUT(out, PACK_RECORD_HEADER);

        bytes_put_u8(&o, e->type);
        bytes_put_u8(&o, e->flags);
        bytes_put_u16(&o, (uint16_t)e->name_len);
        bytes_put_u32(&o, e->mode);
        bytes_put_u64(&o, e->mtime_ns);
        bytes_put_u64(&o, e->size);
}

int pack_append(struct pack_writer *w, const struct pack_entry *e, uint8_t **data)
{
        uint64_t need;
        uint8_t *rec;

        if ((e->type != PACK_DIR && e->type != PACK_FILE && e->type != PACK_LINK) || e->mode > 07777 ||
            e->name_len == 0 || e->name_len > PACK_NAME_MAX || (e->type == PACK_DIR && e->size != 0) ||
            (e->type == PACK_LINK && (e->mode != 0 || e->size == 0 || e->size > NAME_LINK_MAX)) ||
            (e->flags & ~pack_flags_allowed(e->type)) || ((e->flags & PACK_F_HARD) && e->size > PACK_NAME_MAX) ||
            memchr(e->name, '\0', e->name_len) ||
            ((e->flags & PACK_F_XATTRS) ? e->xattrs_len == 0 || xattrs_check(e->xattrs, e->xattrs_len, NULL) < 0
                                        : e->xattrs_len != 0))
                return -EINVAL;
        /* Each term is bounded above, so the sum cannot wrap. */
        if (pack_data_len(e) > PACK_BYTES_MAX)
                return -EFBIG;
        need = pack_record_size(e->name_len, pack_data_len(e)) + pack_xattrs_size(e);
        if (w->count >= PACK_ENTRIES_MAX || need > PACK_BYTES_MAX - w->len)
                return -EFBIG;
        if (w->len + need > w->cap) {
                size_t cap = MAX((size_t)(w->len + need), MIN(2 * w->cap, (size_t)PACK_BYTES_MAX));
                uint8_t *p = realloc(w->buf, cap);

                if (!p)
                        return -ENOMEM;
                w->buf = p;
                w->cap = cap;
        }
        rec = w->buf + w->len;
        pack_put_header(rec, e);
        memcpy(rec + PACK_RECORD_HEADER, e->name, e->name_len);
        if (e->flags & PACK_F_XATTRS) {
                rec[PACK_RECORD_HEADER + e->name_len] = (uint8_t)e->xattrs_len;
                rec[PACK_RECORD_HEADER + e->name_len + 1] = (uint8_t)(e->xattrs_len >> 8);
                memcpy(rec + PACK_RECORD_HEADER + e->name_len + 2, e->xattrs, e->xattrs_len);
        }
        crypto_hash_sha256_update(&w->h, rec, PACK_RECORD_HEADER + e->name_len + pack_xattrs_size(e));
        if (data)
                *data = pack_data_len(e) ? rec + PACK_RECORD_HEADER + e->name_len + pack_xattrs_size(e) : NULL;
        w->len += (size_t)need;
        w->count++;
        return 0;
}

void pack_writer_hash(const struct pack_writer *w, uint8_t out[PACK_HASH_SIZE])
{
        crypto_hash_sha256_state h = w->h;

        crypto_hash_sha256_final(&h, out);
}

void pack_reader_init(struct pack_reader *r, const void *buf, size_t len, uint32_t entries)
{
        *r = (struct pack_reader){ .buf = buf, .len = len, .entries = entries };
        crypto_hash_sha256_init(&r->h);
}

static int pack_bad(struct pack_reader *r, const char *why)
{
        r->why = why;
        /* A reader that failed stays failed. */
        r->off = r->len + 1;
        return -EBADMSG;
}

int pack_next(struct pack_reader *r, struct pack_entry *e)
{
        struct bytes_in in;
        uint8_t flags;
        size_t left;

        if (r->off > r->len)
                return -EBADMSG;
        left = r->len - r->off;
        if (left == 0)
                return r->count == r->entries ? PACK_END : pack_bad(r, "fewer entries than announced");
        if (r->count >= r->entries)
                return pack_bad(r, "bytes after the last entry");
        if (left < PACK_RECORD_HEADER)
                return pack_bad(r, "a record header cut short");
        in = BYTES_IN(r->buf + r->off, PACK_RECORD_HEADER);
        *e = (struct pack_entry){ .type = bytes_get_u8(&in) };
        flags = bytes_get_u8(&in);
        e->name_len = bytes_get_u16(&in);
        e->mode = bytes_get_u32(&in);
        e->mtime_ns = bytes_get_u64(&in);
        e->size = bytes_get_u64(&in);
        if (e->type != PACK_DIR && e->type != PACK_FILE && e->type != PACK_LINK)
                return pack_bad(r, "an entry of unknown type");
        if (flags & ~pack_flags_allowed(e->type))
                return pack_bad(r, "an entry with unknown flags");
        e->flags = flags;
        if (e->mode > 07777)
                return pack_bad(r, "an entry's mode has more than permission bits");
        if (e->type == PACK_DIR && e->size != 0)
                return pack_bad(r, "a directory entry with data");
        if (e->type == PACK_LINK && e->mode != 0)
                return pack_bad(r, "a symlink entry with a mode");
        if (e->type == PACK_LINK && (e->size == 0 || e->size > (flags ? PACK_NAME_MAX : NAME_LINK_MAX)))
                return pack_bad(r, "a symlink entry's target length out of range");
        left -= PACK_RECORD_HEADER;
        if (e->name_len == 0 || e->name_len > PACK_NAME_MAX)
                return pack_bad(r, "an entry's name length out of range");
        if (e->name_len > left)
                return pack_bad(r, "an entry's name past the end of the pack");
        e->name = (const char *)r->buf + r->off + PACK_RECORD_HEADER;
        if (name_path_check(e->name, e->name_len, NULL) != NAME_OK)
                return pack_bad(r, "an entry's name is not acceptable");
        left -= e->name_len;
        if (e->flags & PACK_F_XATTRS) {
                const uint8_t *x = (const uint8_t *)e->name + e->name_len;

                if (left < 2)
                        return pack_bad(r, "an entry's attributes past the end of the pack");
                e->xattrs_len = (uint16_t)(x[0] | x[1] << 8);
                e->xattrs = x + 2;
                if (e->xattrs_len == 0 || e->xattrs_len > left - 2)
                        return pack_bad(r, "an entry's attributes past the end of the pack");
                if (xattrs_check(e->xattrs, e->xattrs_len, NULL) < 0)
                        return pack_bad(r, "an entry's attributes are not well formed");
                left -= 2u + e->xattrs_len;
        }
        if (pack_data_len(e) > left)
                return pack_bad(r, "an entry's data past the end of the pack");
        e->data = pack_data_len(e) ? (const uint8_t *)e->name + e->name_len + pack_xattrs_size(e) : NULL;
        if (e->type == PACK_LINK && memchr(e->data, '\0', (size_t)e->size))
                return pack_bad(r, "a symlink entry's target holds a NUL");
        if ((e->flags & PACK_F_HARD) && name_path_check((const char *)e->data, (size_t)e->size, NULL) != NAME_OK)
                return pack_bad(r, "a hard link entry's target is not an acceptable name");
        crypto_hash_sha256_update(&r->h, r->buf + r->off, PACK_RECORD_HEADER + e->name_len + pack_xattrs_size(e));
        r->off += PACK_RECORD_HEADER + e->name_len + (size_t)pack_xattrs_size(e) + (size_t)pack_data_len(e);
        r->count++;
        return PACK_ENTRY;
}

void pack_reader_hash(const struct pack_reader *r, uint8_t out[PACK_HASH_SIZE])
{
        crypto_hash_sha256_state h = r->h;

        crypto_hash_sha256_final(&h, out);
}

int pack_check(const void *buf, size_t len, uint32_t entries, const uint8_t hash[PACK_HASH_SIZE],
               const char **why)
{
        struct pack_reader r;
        struct pack_entry e;
        uint8_t h[PACK_HASH_SIZE];
        int n;

        pack_reader_init(&r, buf, len, entries);
        while ((n = pack_next(&r, &e)) == PACK_ENTRY)
                ;
        if (n < 0) {
                *why = r.why;
                return n;
        }
        pack_reader_hash(&r, h);
        /* Public values on both sides; nothing secret to time. */
        if (memcmp(h, hash, PACK_HASH_SIZE) != 0) {
                *why = "the pack hash does not match its entries";
                return -EBADMSG;
        }
        return 0;
}
