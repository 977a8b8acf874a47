#include "digest.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

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

int digest_init_block(struct digest *d, uint64_t block, uint64_t super)
{
        XXH3_state_t *st;
        void *open;

        if (block == 0 || super == 0 || super > SIZE_MAX / WIRE_DIGEST_SIZE)
                return -EINVAL;
        st = XXH3_createState();
        open = malloc((size_t)super * WIRE_DIGEST_SIZE);
        if (!st || !open) {
                XXH3_freeState(st);
                free(open);
                return -ENOMEM;
        }
        (void)XXH3_128bits_reset(st);
        /* head: only for a run that starts inside a group (digest_start). */
        *d = (struct digest){ .state = st, .block = block, .super = super, .open = open };
        return 0;
}

int digest_init(struct digest *d)
{
        return digest_init_block(d, DIGEST_BLOCK_SIZE, DIGEST_SUPER_BLOCKS);
}

void digest_deinit(struct digest *d)
{
        if (d->state)
                XXH3_freeState(d->state);
        free(d->head);
        free(d->open);
        free(d->group);
        *d = DIGEST_NULL;
}

static int digest_reserve(struct digest *d, size_t n)
{
        void *p;

        if (n <= d->cap)
                return 0;
        if (n > SIZE_MAX / WIRE_DIGEST_SIZE)
                return -ENOMEM;
        p = realloc(d->group, n * WIRE_DIGEST_SIZE);
        if (!p)
                return -ENOMEM;
        d->group = p;
        d->cap = n;
        return 0;
}

int digest_start(struct digest *d, uint64_t offset, uint64_t len)
{
        uint64_t groups = len / d->block / d->super + 1;
        int r;

        /* An empty run joins anywhere; any other must start a block. */
        if (len > 0 && offset % d->block != 0)
                return -EINVAL;
        if (groups > SIZE_MAX || (r = digest_reserve(d, (size_t)groups)) < 0)
                return groups > SIZE_MAX ? -ENOMEM : r;
        if (!d->head && offset / d->block % d->super != 0 &&
            !(d->head = malloc((size_t)d->super * WIRE_DIGEST_SIZE)))
                return -ENOMEM;
        d->first = offset / d->block;
        d->blocks = 0;
        d->in_block = 0;
        d->nhead = d->nopen = d->ngroup = 0;
        (void)XXH3_128bits_reset(d->state);
        return 0;
}

/* Block @i of the file: is it in the group the run starts inside? */
static bool digest_in_head(const struct digest *d, uint64_t i)
{
        return d->first % d->super != 0 && i / d->super == d->first / d->super;
}

/* A whole block's hash @h goes where its group's are kept. */
static int digest_put_block(struct digest *d, const uint8_t h[WIRE_DIGEST_SIZE])
{
        bool head = digest_in_head(d, d->first + d->blocks);
        int r;

        /* Room for the group it completes, before anything changes. */
        if (!head && d->nopen + 1 == d->super && d->ngroup == d->cap &&
            (r = digest_reserve(d, d->cap ? d->cap * 2 : 16)) < 0)
                return r;
        memcpy(head ? d->head[d->nhead++] : d->open[d->nopen++], h, WIRE_DIGEST_SIZE);
        d->blocks++;
        d->in_block = 0;
        (void)XXH3_128bits_reset(d->state);
        /* A group begun in the run is whole: one hash stands for it. */
        if (d->nopen == d->super) {
                digest_canonical(XXH3_128bits(d->open, d->nopen * WIRE_DIGEST_SIZE), d->group[d->ngroup++]);
                d->nopen = 0;
        }
        return 0;
}

/* The current block is whole: hashed, and put. */
static int digest_close_block(struct digest *d)
{
        uint8_t h[WIRE_DIGEST_SIZE];

        digest_canonical(XXH3_128bits_digest(d->state), h);
        return digest_put_block(d, h);
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

/* Zeros for the hasher, a piece at a time: 64 KiB of .rodata. */
static const uint8_t digest_zero_piece[64 << 10];

int digest_zeros(struct digest *d, uint64_t len)
{
        int r;

        while (len > 0) {
                /* Inside a block, or less than one left: hashed as any bytes. */
                if (d->in_block > 0 || len < d->block) {
                        size_t n = (size_t)MIN(MIN(len, d->block - d->in_block), (uint64_t)sizeof(digest_zero_piece));

                        if ((r = digest_update(d, digest_zero_piece, n)) < 0)
                                return r;
                        len -= n;
                        continue;
                }
                /* A whole block of zeros: its hash, once per digest, then copied. */
                if (!d->zero_known) {
                        XXH3_state_t *st = d->state;

                        for (uint64_t left = d->block; left > 0;) {
                                size_t n = (size_t)MIN(left, (uint64_t)sizeof(digest_zero_piece));

                                (void)digest_xxh3_update(st, digest_zero_piece, n);
                                left -= n;
                        }
                        digest_canonical(XXH3_128bits_digest(st), d->zero);
                        (void)XXH3_128bits_reset(st);
                        d->zero_known = true;
                }
                if ((r = digest_put_block(d, d->zero)) < 0)
                        return r;
                len -= d->block;
        }
        return 0;
}

/* Runs joined in order; a group may be assembled from several of them. */
struct digest_joiner {
        XXH3_state_t outer;     /* over the s_j */
        XXH3_state_t group;     /* over the current group's block hashes */
        uint64_t super;
        bool pending;           /* some of them are in @group */
};

static void digest_join_group(struct digest_joiner *j, const uint8_t s[WIRE_DIGEST_SIZE])
{
        (void)XXH3_128bits_update(&j->outer, s, WIRE_DIGEST_SIZE);
}

static void digest_join_pending(struct digest_joiner *j)
{
        uint8_t s[WIRE_DIGEST_SIZE];

        if (!j->pending)
                return;
        digest_canonical(XXH3_128bits_digest(&j->group), s);
        digest_join_group(j, s);
        (void)XXH3_128bits_reset(&j->group);
        j->pending = false;
}

/* Block @i's hash: its group is done after its last block. */
static void digest_join_block(struct digest_joiner *j, const uint8_t h[WIRE_DIGEST_SIZE], uint64_t i)
{
        (void)XXH3_128bits_update(&j->group, h, WIRE_DIGEST_SIZE);
        j->pending = true;
        if ((i + 1) % j->super == 0)
                digest_join_pending(j);
}

static void digest_feed(struct digest_joiner *j, const struct digest *d)
{
        uint64_t i = d->first;
        uint8_t last[WIRE_DIGEST_SIZE];

        for (size_t k = 0; k < d->nhead; k++)
                digest_join_block(j, d->head[k], i++);
        for (size_t k = 0; k < d->ngroup; k++)
                digest_join_group(j, d->group[k]);
        i += d->ngroup * d->super;
        for (size_t k = 0; k < d->nopen; k++)
                digest_join_block(j, d->open[k], i++);
        /* The short last block: the file's last, or a digest taken mid-block. */
        if (d->in_block > 0) {
                digest_canonical(XXH3_128bits_digest(d->state), last);
                digest_join_block(j, last, i);
        }
}

void digest_join(const struct digest *const *run, unsigned int n, uint8_t out[WIRE_DIGEST_SIZE])
{
        struct digest_joiner j = { .super = n > 0 ? run[0]->super : 1 };

        /* Over 16 bytes per MiB: the plain entry point is plenty. */
        XXH3_INITSTATE(&j.outer);
        XXH3_INITSTATE(&j.group);
        (void)XXH3_128bits_reset(&j.outer);
        (void)XXH3_128bits_reset(&j.group);
        for (unsigned int k = 0; k < n; k++)
                digest_feed(&j, run[k]);
        digest_join_pending(&j);
        digest_canonical(XXH3_128bits_digest(&j.outer), out);
}

void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE])
{
        digest_join(&d, 1, out);
}

void digest_buffer(const void *data, uint64_t len, uint8_t out[WIRE_DIGEST_SIZE])
{
        struct digest_joiner j = { .super = DIGEST_SUPER_BLOCKS };
        const uint8_t *p = data;
        uint8_t h[WIRE_DIGEST_SIZE];

        XXH3_INITSTATE(&j.outer);
        XXH3_INITSTATE(&j.group);
        (void)XXH3_128bits_reset(&j.outer);
        (void)XXH3_128bits_reset(&j.group);
        for (uint64_t i = 0, off = 0; off < len; i++, off += DIGEST_BLOCK_SIZE) {
                digest_canonical(XXH3_128bits(p + off, (size_t)MIN((uint64_t)DIGEST_BLOCK_SIZE, len - off)), h);
                digest_join_block(&j, h, i);
        }
        digest_join_pending(&j);
        digest_canonical(XXH3_128bits_digest(&j.outer), out);
}

void digest_hex(const uint8_t in[WIRE_DIGEST_SIZE], char out[DIGEST_HEX_SIZE])
{
        sodium_bin2hex(out, DIGEST_HEX_SIZE, in, WIRE_DIGEST_SIZE);
}

int digest_parse(const char *hex, size_t len, uint8_t out[WIRE_DIGEST_SIZE])
{
        const char *end;
        size_t n;

        /* Exactly 32 hex digits, either case: no separators, nothing after. */
        if (len != 2 * WIRE_DIGEST_SIZE ||
            sodium_hex2bin(out, WIRE_DIGEST_SIZE, hex, len, NULL, &n, &end) != 0 ||
            n != WIRE_DIGEST_SIZE || end != hex + len)
                return -EINVAL;
        return 0;
}
