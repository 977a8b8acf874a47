#pragma once

/*
 * Bounds-checked little-endian cursors for the wire and control codecs.
 * Callers check lengths against the message type first; the cursors check
 * again so a layout mistake turns into a failed encode/decode, not an
 * overrun.
 */

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bytes_out {
        uint8_t *p;
        size_t cap;
        size_t off;
        bool overflow;
};

struct bytes_in {
        const uint8_t *p;
        size_t len;
        size_t off;
        bool underflow;
};

#define BYTES_OUT(buf, n) ((struct bytes_out){ .p = (uint8_t *)(buf), .cap = (n) })
#define BYTES_IN(buf, n) ((struct bytes_in){ .p = (const uint8_t *)(buf), .len = (n) })

static inline void bytes_put_mem(struct bytes_out *o, const void *src, size_t n)
{
        if (o->overflow || n > o->cap - o->off) {
                o->overflow = true;
                return;
        }
        if (n > 0)
                memcpy(o->p + o->off, src, n);
        o->off += n;
}

static inline void bytes_put_u8(struct bytes_out *o, uint8_t v)
{
        bytes_put_mem(o, &v, 1);
}

static inline void bytes_put_u16(struct bytes_out *o, uint16_t v)
{
        v = htole16(v);
        bytes_put_mem(o, &v, sizeof(v));
}

static inline void bytes_put_u32(struct bytes_out *o, uint32_t v)
{
        v = htole32(v);
        bytes_put_mem(o, &v, sizeof(v));
}

static inline void bytes_put_u64(struct bytes_out *o, uint64_t v)
{
        v = htole64(v);
        bytes_put_mem(o, &v, sizeof(v));
}

static inline void bytes_get_mem(struct bytes_in *in, void *dst, size_t n)
{
        if (in->underflow || n > in->len - in->off) {
                in->underflow = true;
                memset(dst, 0, n);
                return;
        }
        if (n > 0)
                memcpy(dst, in->p + in->off, n);
        in->off += n;
}

static inline uint8_t bytes_get_u8(struct bytes_in *in)
{
        uint8_t v;

        bytes_get_mem(in, &v, sizeof(v));
        return v;
}

static inline uint16_t bytes_get_u16(struct bytes_in *in)
{
        uint16_t v;

        bytes_get_mem(in, &v, sizeof(v));
        return le16toh(v);
}

static inline uint32_t bytes_get_u32(struct bytes_in *in)
{
        uint32_t v;

        bytes_get_mem(in, &v, sizeof(v));
        return le32toh(v);
}

static inline uint64_t bytes_get_u64(struct bytes_in *in)
{
        uint64_t v;

        bytes_get_mem(in, &v, sizeof(v));
        return le64toh(v);
}

/*
 * Copy an @n-byte string out of the message into @dst (capacity @cap, at
 * least n + 1) and NUL-terminate it. False on an embedded NUL: the text
 * would silently differ from what the peer meant.
 */
static inline bool bytes_get_str(struct bytes_in *in, char *dst, size_t cap, size_t n)
{
        if (n >= cap) {
                in->underflow = true;
                return false;
        }
        bytes_get_mem(in, dst, n);
        dst[n] = '\0';
        return !in->underflow && memchr(dst, '\0', n) == NULL;
}
