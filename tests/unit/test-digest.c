/* Whole-file checksum: XXH3-128 known answers, and streaming equal to one-shot across chunk boundaries. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "digest.h"
#include "tap.h"

/* Independent path: the library's one-shot call, in canonical (big-endian) form. */
static void oneshot(const void *data, size_t len, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH128_canonical_t c;

        XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
        memcpy(out, c.digest, WIRE_DIGEST_SIZE);
}

static void streamed(const uint8_t *data, size_t len, size_t chunk, uint8_t out[WIRE_DIGEST_SIZE])
{
        struct digest d = DIGEST_NULL;

        if (digest_init(&d) < 0)
                abort();
        for (size_t off = 0; off < len; off += chunk)
                digest_update(&d, data + off, len - off < chunk ? len - off : chunk);
        digest_final(&d, out);
        digest_deinit(&d);
}

static void test_known(void)
{
        uint8_t got[WIRE_DIGEST_SIZE], want[WIRE_DIGEST_SIZE];
        char hex[DIGEST_HEX_SIZE];

        streamed((const uint8_t *)"", 0, 1, got);
        digest_hex(got, hex);
        /* xxh128sum of an empty file. */
        is_str(hex, "99aa06d3014798d86001c324468d497f", "XXH3-128 of nothing");

        streamed((const uint8_t *)"abc", 3, 3, got);
        oneshot("abc", 3, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "\"abc\" matches the one-shot XXH3_128bits");
        digest_hex(got, hex);
        is_int(strlen(hex), 32, "hex is 32 characters");
        ok(strspn(hex, "0123456789abcdef") == 32, "lower-case hex");

        XXH128_hash_t h = XXH3_128bits("abc", 3);
        ok(got[0] == (uint8_t)(h.high64 >> 56) && got[15] == (uint8_t)h.low64,
           "canonical form: high 64 bits first, big-endian");
}

static void test_streaming(void)
{
        static const size_t chunks[] = { 1, 3, 7, 16, 63, 64, 65, 128, 239, 240, 241, 1024, 4096, 65536 };
        const size_t len = 300000;
        uint8_t *data = malloc(len), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        uint32_t x = 2463534242u;
        bool all;

        for (size_t i = 0; i < len; i++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                data[i] = (uint8_t)x;
        }

        static const size_t lens[] = { 0, 1, 16, 17, 128, 129, 240, 241, 1024, 1025, 300000 };
        all = true;
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
                oneshot(data, lens[l], want);
                for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
                        streamed(data, lens[l], chunks[c], got);
                        if (memcmp(got, want, sizeof(got)) != 0) {
                                diag("len %zu chunk %zu differs", lens[l], chunks[c]);
                                all = false;
                        }
                }
        }
        ok(all, "streaming equals one-shot for every length/chunk combination");

        /* Irregular chunks, as completions arrive. */
        struct digest d = DIGEST_NULL;
        size_t off = 0, step = 1;
        digest_init(&d);
        while (off < len) {
                size_t n = step < len - off ? step : len - off;

                digest_update(&d, data + off, n);
                off += n;
                step = step * 7 % 10007 + 1;
        }
        digest_final(&d, got);
        oneshot(data, len, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "irregular chunk sizes");

        /* final does not end the stream: a progress digest, then more data. */
        digest_deinit(&d);
        digest_init(&d);
        digest_update(&d, data, 1000);
        digest_final(&d, got);
        oneshot(data, 1000, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "final mid-stream is the digest so far");
        digest_update(&d, data + 1000, 1000);
        digest_update(&d, NULL, 0);
        digest_final(&d, got);
        oneshot(data, 2000, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "and the stream continues after it");

        data[1999] ^= 1;
        oneshot(data, 2000, got);
        ok(memcmp(got, want, sizeof(got)) != 0, "one flipped bit changes the digest");

        digest_deinit(&d);
        ok(d.state == NULL, "deinit clears the state");
        digest_deinit(&d);
        struct digest z = DIGEST_NULL;
        digest_deinit(&z);
        ok(true, "deinit is safe twice and on DIGEST_NULL");
        free(data);
}

/* A striped transfer's digest: its one lane's, or XXH3-128 of the lanes' in order. */
static void test_lanes(void)
{
        uint8_t lane[3][WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE], want[WIRE_DIGEST_SIZE], swapped[3][WIRE_DIGEST_SIZE];

        oneshot("first run", 9, lane[0]);
        oneshot("second run", 10, lane[1]);
        oneshot("third run", 9, lane[2]);
        digest_lanes((const uint8_t (*)[WIRE_DIGEST_SIZE])lane, 1, got);
        ok(memcmp(got, lane[0], sizeof(got)) == 0, "one lane: the file's own digest");
        digest_lanes((const uint8_t (*)[WIRE_DIGEST_SIZE])lane, 3, got);
        oneshot(lane, sizeof(lane), want);
        ok(memcmp(got, want, sizeof(got)) == 0, "three lanes: XXH3-128 of the lane digests in order");
        memcpy(swapped[0], lane[1], WIRE_DIGEST_SIZE);
        memcpy(swapped[1], lane[0], WIRE_DIGEST_SIZE);
        memcpy(swapped[2], lane[2], WIRE_DIGEST_SIZE);
        digest_lanes((const uint8_t (*)[WIRE_DIGEST_SIZE])swapped, 3, want);
        ok(memcmp(got, want, sizeof(got)) != 0, "the lane order counts");
}

int main(void)
{
        test_known();
        test_streaming();
        test_lanes();
        return done_testing();
}
