#include "digest.h"

#include <errno.h>
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

int digest_init(struct digest *d)
{
        XXH3_state_t *st;

        st = XXH3_createState();
        if (!st)
                return -ENOMEM;
        if (XXH3_128bits_reset(st) != XXH_OK) {
                XXH3_freeState(st);
                return -EINVAL;
        }
        d->state = st;
        return 0;
}

void digest_deinit(struct digest *d)
{
        if (!d->state)
                return;
        XXH3_freeState(d->state);
        d->state = NULL;
}

void digest_update(struct digest *d, const void *data, size_t len)
{
        /* Only fails on a NULL state or a NULL buffer with a length: both caller bugs. */
        if (len == 0)
                return;
        (void)digest_xxh3_update(d->state, data, len);
}

void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH128_canonical_t c;

        /* Canonical form is big-endian, so both hosts compare the same bytes. */
        XXH128_canonicalFromHash(&c, XXH3_128bits_digest(d->state));
        _Static_assert(sizeof(c.digest) == WIRE_DIGEST_SIZE, "XXH3-128 is 16 bytes");
        for (size_t i = 0; i < WIRE_DIGEST_SIZE; i++)
                out[i] = c.digest[i];
}

void digest_lanes(const uint8_t (*lane)[WIRE_DIGEST_SIZE], unsigned int n, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH128_canonical_t c;

        if (n == 1) {
                for (size_t i = 0; i < WIRE_DIGEST_SIZE; i++)
                        out[i] = lane[0][i];
                return;
        }
        XXH128_canonicalFromHash(&c, XXH3_128bits(lane, (size_t)n * WIRE_DIGEST_SIZE));
        for (size_t i = 0; i < WIRE_DIGEST_SIZE; i++)
                out[i] = c.digest[i];
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
