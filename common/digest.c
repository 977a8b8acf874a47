#include "digest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* For XXH3_state_t on the stack: the header and the library are one package. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>
#ifdef HAVE_XXH_DISPATCH
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
/* libxxhash's runtime dispatch picks AVX2/AVX-512 where the CPU has them;
 * the plain entry point is built for baseline SSE2. Same hash, faster. */
#define digest_xxh3_update XXH3_128bits_update_dispatch
#else
#define digest_xxh3_update XXH3_128bits_update
#endif

static void digest_canonical(XXH128_hash_t h, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH128_canonical_t c;

        /* Canonical form is big-endian, so both hosts compare the same bytes. */
        XXH128_canonicalFromHash(&c, h);
        _Static_assert(sizeof(c.digest) == WIRE_DIGEST_SIZE, "XXH3-128 is 16 bytes");
        memcpy(out, c.digest, WIRE_DIGEST_SIZE);
}

int digest_init_block(struct digest *d, uint64_t block)
{
        XXH3_state_t *st;

        if (block == 0)
                return -EINVAL;
        st = XXH3_createState();
        if (!st)
                return -ENOMEM;
        if (XXH3_128bits_reset(st) != XXH_OK) {
                XXH3_freeState(st);
                return -EINVAL;
        }
        *d = (struct digest){ .state = st, .block = block };
        return 0;
}

int digest_init(struct digest *d)
{
        return digest_init_block(d, DIGEST_BLOCK_SIZE);
}

void digest_deinit(struct digest *d)
{
        if (d->state)
                XXH3_freeState(d->state);
        free(d->hash);
        *d = DIGEST_NULL;
}

int digest_start(struct digest *d, uint64_t offset, uint64_t len)
{
        uint64_t blocks = len / d->block + (len % d->block != 0);

        /* An empty run joins anywhere; any other must start a block. */
        if (len > 0 && offset % d->block != 0)
                return -EINVAL;
        if (blocks > d->cap) {
                void *p;

                if (blocks > SIZE_MAX / WIRE_DIGEST_SIZE)
                        return -ENOMEM;
                p = realloc(d->hash, (size_t)blocks * WIRE_DIGEST_SIZE);
                if (!p)
                        return -ENOMEM;
                d->hash = p;
                d->cap = (size_t)blocks;
        }
        d->nhash = 0;
        d->in_block = 0;
        (void)XXH3_128bits_reset(d->state);
        return 0;
}

/* The current block is whole: its hash goes on the list, the next begins. */
static int digest_close_block(struct digest *d)
{
        if (d->nhash == d->cap) {
                size_t cap = d->cap ? d->cap * 2 : 16;
                void *p;

                if (cap > SIZE_MAX / WIRE_DIGEST_SIZE)
                        return -ENOMEM;
                p = realloc(d->hash, cap * WIRE_DIGEST_SIZE);
                if (!p)
                        return -ENOMEM;
                d->hash = p;
                d->cap = cap;
        }
        digest_canonical(XXH3_128bits_digest(d->state), d->hash[d->nhash++]);
        d->in_block = 0;
        (void)XXH3_128bits_reset(d->state);
        return 0;
}

int digest_update(struct digest *d, const void *data, size_t len)
{
        const uint8_t *p = data;

        /* The update only fails on a NULL state or a NULL buffer with a
         * length: both caller bugs. */
        while (len > 0) {
                size_t n = (size_t)MIN((uint64_t)len, d->block - d->in_block);
                int r;

                (void)digest_xxh3_update(d->state, p, n);
                d->in_block += n;
                p += n;
                len -= n;
                if (d->in_block == d->block && (r = digest_close_block(d)) < 0)
                        return r;
        }
        return 0;
}

/* Adds run @d's block hashes, its short last block's too, to @outer. */
static void digest_feed(XXH3_state_t *outer, const struct digest *d)
{
        uint8_t last[WIRE_DIGEST_SIZE];

        if (d->nhash > 0)
                (void)XXH3_128bits_update(outer, d->hash, d->nhash * WIRE_DIGEST_SIZE);
        if (d->in_block > 0) {
                digest_canonical(XXH3_128bits_digest(d->state), last);
                (void)XXH3_128bits_update(outer, last, sizeof(last));
        }
}

void digest_join(const struct digest *const *run, unsigned int n, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH3_state_t outer;

        /* Over 16 bytes per 64 MiB: the plain entry point is plenty. */
        XXH3_INITSTATE(&outer);
        (void)XXH3_128bits_reset(&outer);
        for (unsigned int k = 0; k < n; k++)
                digest_feed(&outer, run[k]);
        digest_canonical(XXH3_128bits_digest(&outer), out);
}

void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE])
{
        digest_join(&d, 1, out);
}

void digest_hex(const uint8_t in[WIRE_DIGEST_SIZE], char out[DIGEST_HEX_SIZE])
{
        static const char hex[] = "0123456789abcdef";

        for (size_t i = 0; i < WIRE_DIGEST_SIZE; i++) {
                out[2 * i] = hex[in[i] >> 4];
                out[2 * i + 1] = hex[in[i] & 0x0f];
        }
        out[2 * WIRE_DIGEST_SIZE] = '\0';
}

static int digest_nibble(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

int digest_parse(const char *hex, size_t len, uint8_t out[WIRE_DIGEST_SIZE])
{
        if (len != 2 * WIRE_DIGEST_SIZE)
                return -EINVAL;
        for (size_t i = 0; i < WIRE_DIGEST_SIZE; i++) {
                int hi = digest_nibble(hex[2 * i]), lo = digest_nibble(hex[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -EINVAL;
                out[i] = (uint8_t)(hi << 4 | lo);
        }
        return 0;
}
