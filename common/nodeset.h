#pragma once

/*
 * A set of a chain's nodes or a route's hops, by index (0 .. NODESET_MAX
 * - 1): which did not publish a file (wire_result.hop_missing,
 * engine_result.hop_missing, ctl_job.nodes_missing). A chain has at most
 * NODESET_MAX nodes: the sender's peer and WIRE_ROUTE_MAX hops after it.
 * On the wire and in the control protocol a set travels as its
 * NODESET_WORDS 64-bit words, lowest first (nodeset_put, nodeset_get).
 */

#include <stdbool.h>
#include <stdint.h>

#include "bytes.h"

#define NODESET_MAX             512
#define NODESET_WORDS           (NODESET_MAX / 64)
#define NODESET_WIRE_SIZE       (NODESET_WORDS * 8)

struct nodeset {
        uint64_t w[NODESET_WORDS];
};

static inline void nodeset_add(struct nodeset *s, unsigned int k)
{
        if (k < NODESET_MAX)
                s->w[k / 64] |= UINT64_C(1) << (k % 64);
}

static inline bool nodeset_has(const struct nodeset *s, unsigned int k)
{
        return k < NODESET_MAX && (s->w[k / 64] >> (k % 64) & 1);
}

static inline unsigned int nodeset_count(const struct nodeset *s)
{
        unsigned int n = 0;

        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                n += (unsigned int)__builtin_popcountll(s->w[i]);
        return n;
}

static inline bool nodeset_empty(const struct nodeset *s)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                if (s->w[i])
                        return false;
        return true;
}

/* The lowest index in @s, or -1 when it is empty. */
static inline int nodeset_first(const struct nodeset *s)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                if (s->w[i])
                        return (int)(i * 64 + (unsigned int)__builtin_ctzll(s->w[i]));
        return -1;
}

/* Whether every index in @s is below @n. */
static inline bool nodeset_below(const struct nodeset *s, unsigned int n)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++) {
                uint64_t allowed = n >= (i + 1) * 64 ? UINT64_MAX
                                 : n <= i * 64       ? 0
                                                     : (UINT64_C(1) << (n - i * 64)) - 1;

                if (s->w[i] & ~allowed)
                        return false;
        }
        return true;
}

/* Indices 0 .. @n - 1, and none above. */
static inline struct nodeset nodeset_first_n(unsigned int n)
{
        struct nodeset s = { { 0 } };

        for (unsigned int k = 0; k < n && k < NODESET_MAX; k++)
                nodeset_add(&s, k);
        return s;
}

static inline bool nodeset_equal(const struct nodeset *a, const struct nodeset *b)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                if (a->w[i] != b->w[i])
                        return false;
        return true;
}

static inline void nodeset_put(struct bytes_out *o, const struct nodeset *s)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                bytes_put_u64(o, s->w[i]);
}

static inline void nodeset_get(struct bytes_in *in, struct nodeset *s)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                s->w[i] = bytes_get_u64(in);
}
