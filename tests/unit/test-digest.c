/*
 * The block digest (digest.h): against the library's one-shot XXH3-128 of
 * each block (what xxh128sum prints for the block), whatever the pieces it
 * is fed in, and the same when the file is cut into lanes as wire.h cuts
 * it, for 1..8 lanes and sizes around block boundaries.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "digest.h"
#include "macro.h"
#include "tap.h"

/* Independent path: the library's one-shot call, in canonical (big-endian) form. */
static void oneshot(const void *data, size_t len, uint8_t out[WIRE_DIGEST_SIZE])
{
        XXH128_canonical_t c;

        XXH128_canonicalFromHash(&c, XXH3_128bits(data, len));
        memcpy(out, c.digest, WIRE_DIGEST_SIZE);
}

/* The definition, spelled out: XXH3-128 of the blocks' XXH3-128s in order. */
static void reference(const uint8_t *data, uint64_t len, uint64_t block, uint8_t out[WIRE_DIGEST_SIZE])
{
        uint64_t n = len / block + (len % block != 0);
        uint8_t *h = malloc(n * WIRE_DIGEST_SIZE + 1);

        for (uint64_t i = 0; i < n; i++)
                oneshot(data + i * block, MIN(block, len - i * block), h + i * WIRE_DIGEST_SIZE);
        oneshot(h, n * WIRE_DIGEST_SIZE, out);
        free(h);
}

static uint8_t *make_data(size_t len)
{
        uint8_t *data = malloc(len ? len : 1);
        uint32_t x = 2463534242u;

        for (size_t i = 0; i < len; i++) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                data[i] = (uint8_t)x;
        }
        return data;
}

/* Feeds [off, off + len) in pieces of @piece bytes, or irregular ones for 0. */
static int feed(struct digest *d, const uint8_t *data, uint64_t off, uint64_t len, size_t piece)
{
        size_t step = 1;

        for (uint64_t done = 0; done < len;) {
                size_t n = (size_t)MIN(len - done, piece ? piece : step);

                if (digest_update(d, data + off + done, n) < 0)
                        return -1;
                done += n;
                step = step * 7 % 10007 + 1;
        }
        return 0;
}

static void test_known(void)
{
        struct digest d = DIGEST_NULL;
        uint8_t got[WIRE_DIGEST_SIZE], want[WIRE_DIGEST_SIZE];
        char hex[DIGEST_HEX_SIZE];

        is_int(digest_init(&d), 0, "init");
        is_int(d.block, 64ull << 20, "the block is 64 MiB");
        digest_final(&d, got);
        digest_hex(got, hex);
        /* xxh128sum of an empty file: no blocks, so XXH3-128 of nothing. */
        is_str(hex, "99aa06d3014798d86001c324468d497f", "an empty file: XXH3-128 of nothing");

        digest_update(&d, "abc", 3);
        digest_final(&d, got);
        oneshot("abc", 3, want);
        oneshot(want, sizeof(want), want);
        ok(memcmp(got, want, sizeof(got)) == 0, "\"abc\": XXH3-128 of the one block's XXH3-128");
        digest_hex(got, hex);
        is_int(strlen(hex), 32, "hex is 32 characters");
        ok(strspn(hex, "0123456789abcdef") == 32, "lower-case hex");

        XXH128_hash_t h = XXH3_128bits(want, 0);
        oneshot(NULL, 0, want);
        ok(want[0] == (uint8_t)(h.high64 >> 56) && want[15] == (uint8_t)h.low64,
           "canonical form: high 64 bits first, big-endian");

        is_int(digest_parse(hex, strlen(hex), want), 0, "hex parses back");
        ok(memcmp(got, want, sizeof(got)) == 0, "to the same bytes");
        is_int(digest_parse("99AA06D3014798D86001C324468D497F", 32, want), 0, "upper case parses");
        is_int(digest_parse(hex, 31, want), -EINVAL, "31 digits: -EINVAL");
        is_int(digest_parse("99aa06d3014798d86001c324468d497g", 32, want), -EINVAL, "a non-digit: -EINVAL");
        digest_deinit(&d);
        ok(d.state == NULL && d.hash == NULL, "deinit clears the state");
        digest_deinit(&d);
        ok(true, "deinit is safe twice and on DIGEST_NULL");
}

/* One run over the whole file, small blocks, many ways of feeding it. */
static void test_blocks(void)
{
        static const uint64_t block = 1000;
        static const uint64_t lens[] = { 0, 1, 999, 1000, 1001, 3005, 2000, 64 * 1000 + 17 };
        static const size_t pieces[] = { 0, 1, 7, 999, 1000, 1001, 4096, 100000 };
        uint8_t *data = make_data(100000), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        bool all = true;

        for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
                reference(data, lens[i], block, want);
                for (size_t p = 0; p < ARRAY_SIZE(pieces); p++) {
                        struct digest d = DIGEST_NULL;

                        if (digest_init_block(&d, block) < 0 || digest_start(&d, 0, lens[i]) < 0 ||
                            feed(&d, data, 0, lens[i], pieces[p]) < 0)
                                abort();
                        digest_final(&d, got);
                        if (memcmp(got, want, sizeof(got)) != 0) {
                                diag("len %" PRIu64 " piece %zu differs", lens[i], pieces[p]);
                                all = false;
                        }
                        digest_deinit(&d);
                }
        }
        ok(all, "any feeding equals XXH3-128 over the blocks' one-shot XXH3-128s");

        /* Without room taken (a stream of unknown length): the list grows. */
        struct digest d = DIGEST_NULL;
        digest_init_block(&d, 10);
        is_int(feed(&d, data, 0, 100000, 333), 0, "10000 blocks with no room taken first");
        digest_final(&d, got);
        reference(data, 100000, 10, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "grow as they come, same digest");

        /* final does not end the run. */
        digest_start(&d, 0, 0);
        feed(&d, data, 0, 15, 0);
        digest_final(&d, got);
        reference(data, 15, 10, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "final mid-run: the digest so far, short block included");
        feed(&d, data, 15, 10, 0);
        digest_final(&d, got);
        reference(data, 25, 10, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "and the run goes on after it");

        data[24] ^= 1;
        reference(data, 25, 10, got);
        ok(memcmp(got, want, sizeof(got)) != 0, "one flipped bit changes the digest");

        is_int(digest_start(&d, 15, 10), -EINVAL, "a run that starts mid-block: -EINVAL");
        is_int(digest_start(&d, 15, 0), 0, "an empty run starts anywhere");
        is_int(digest_start(&d, 20, 10), 0, "a run on a block boundary");
        is_int(digest_init_block(&(struct digest){ 0 }, 0), -EINVAL, "a zero block: -EINVAL");
        digest_deinit(&d);
        free(data);
}

/*
 * Lanes as wire_lane_range cuts a file (blocks split into runs) with a small
 * block: each lane's run digested on its own, joined in order, equals the
 * whole file's; each lane's own digest is XXH3-128 of its blocks' hashes.
 */
static void test_lanes(void)
{
        static const uint64_t B = 4096;
        static const uint64_t lens[] = { 0, 1, B - 1, B, B + 1, 3 * B + 5, 8 * B, 9 * B + 1, 17 * B - 3 };
        uint8_t *data = make_data(17 * B), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        bool joined = true, lane_ok = true, aligned = true;

        for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
                uint64_t nblocks = lens[i] / B + (lens[i] % B != 0);

                reference(data, lens[i], B, want);
                for (unsigned int lanes = 1; lanes <= WIRE_LANES_MAX; lanes++) {
                        struct digest d[WIRE_LANES_MAX];
                        const struct digest *run[WIRE_LANES_MAX];

                        for (unsigned int k = 0; k < lanes; k++) {
                                uint64_t first, end, off, len;

                                /* Chunks of a whole block: wire_lane_range's runs in blocks. */
                                wire_lane_range(nblocks, WIRE_BLOCK_SIZE, lanes, k, &first, &end);
                                off = MIN(first * B, lens[i]);
                                len = MIN(end * B, lens[i]) - off;
                                if (digest_init_block(&d[k], B) < 0)
                                        abort();
                                if (digest_start(&d[k], off, len) < 0)
                                        aligned = false;
                                feed(&d[k], data, off, len, (size_t)(k * 1000 + 1));
                                run[k] = &d[k];
                                digest_final(&d[k], got);
                                reference(data + off, len, B, want);
                                if (memcmp(got, want, sizeof(got)) != 0)
                                        lane_ok = false;
                        }
                        reference(data, lens[i], B, want);
                        digest_join(run, lanes, got);
                        if (memcmp(got, want, sizeof(got)) != 0) {
                                diag("len %" PRIu64 " over %u lanes differs", lens[i], lanes);
                                joined = false;
                        }
                        for (unsigned int k = 0; k < lanes; k++)
                                digest_deinit(&d[k]);
                }
        }
        ok(aligned, "every lane run starts on a block boundary");
        ok(lane_ok, "a lane's digest: XXH3-128 of its blocks' XXH3-128s");
        ok(joined, "joined lanes equal the whole file's digest for 1..8 lanes, 0 .. 17B-3 bytes");
        free(data);
}

/* The real 64 MiB block: a file of one block and 5 bytes, over 1 and 2 lanes. */
static void test_real_block(void)
{
        const uint64_t len = DIGEST_BLOCK_SIZE + 5;
        uint8_t *data = make_data(len), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        uint8_t h[2][WIRE_DIGEST_SIZE];
        struct digest a = DIGEST_NULL, b = DIGEST_NULL;
        const struct digest *run[2] = { &a, &b };

        oneshot(data, DIGEST_BLOCK_SIZE, h[0]);
        oneshot(data + DIGEST_BLOCK_SIZE, 5, h[1]);
        oneshot(h, sizeof(h), want);

        digest_init(&a);
        digest_start(&a, 0, len);
        feed(&a, data, 0, len, 1u << 20);
        digest_final(&a, got);
        ok(memcmp(got, want, sizeof(got)) == 0, "64 MiB + 5 bytes: XXH3-128 of the two blocks' in order");

        digest_start(&a, 0, DIGEST_BLOCK_SIZE);
        feed(&a, data, 0, DIGEST_BLOCK_SIZE, 1u << 20);
        digest_init(&b);
        is_int(digest_start(&b, DIGEST_BLOCK_SIZE, 5), 0, "lane 1 starts at 64 MiB");
        feed(&b, data, DIGEST_BLOCK_SIZE, 5, 5);
        digest_join(run, 2, got);
        ok(memcmp(got, want, sizeof(got)) == 0, "two lanes join to the same digest");
        digest_final(&a, got);
        oneshot(h[0], WIRE_DIGEST_SIZE, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "lane 0's own digest: XXH3-128 of its one block's");
        digest_deinit(&a);
        digest_deinit(&b);
        free(data);
}

int main(void)
{
        test_known();
        test_blocks();
        test_lanes();
        test_real_block();
        return done_testing();
}
