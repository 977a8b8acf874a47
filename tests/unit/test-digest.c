/*
 * The block digest (digest.h): against the library's one-shot XXH3-128 of
 * each block and of each group of block hashes (what xxh128sum prints for
 * them), whatever the pieces it is fed in, and the same when the file is
 * cut into lanes as wire.h cuts it, for 1..8 lanes and sizes around block
 * and group boundaries, runs starting inside groups included.
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

/*
 * The definition, spelled out, for the blocks of a run of @len bytes that
 * starts at block @first of the file: XXH3-128 of the groups' XXH3-128s in
 * order, each of its blocks' XXH3-128s, blocks grouped by their index in
 * the file (@super to a group).
 */
static void reference_at(const uint8_t *data, uint64_t len, uint64_t first, uint64_t block, uint64_t super,
                         uint8_t out[WIRE_DIGEST_SIZE])
{
        uint64_t n = len / block + (len % block != 0), ns = 0, in = 0;
        uint8_t *h = malloc(n * WIRE_DIGEST_SIZE + 1), *g = malloc(n * WIRE_DIGEST_SIZE + 1);

        for (uint64_t i = 0; i < n; i++) {
                oneshot(data + i * block, MIN(block, len - i * block), h + in * WIRE_DIGEST_SIZE);
                in++;
                if ((first + i + 1) % super == 0 || i + 1 == n) {
                        oneshot(h, in * WIRE_DIGEST_SIZE, g + ns++ * WIRE_DIGEST_SIZE);
                        in = 0;
                }
        }
        oneshot(g, ns * WIRE_DIGEST_SIZE, out);
        free(h);
        free(g);
}

static void reference(const uint8_t *data, uint64_t len, uint64_t block, uint64_t super,
                      uint8_t out[WIRE_DIGEST_SIZE])
{
        reference_at(data, len, 0, block, super, out);
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
        is_int(d.block, 1ull << 20, "the block is 1 MiB");
        is_int(d.super, 64, "64 blocks to a group");
        digest_final(&d, got);
        digest_hex(got, hex);
        /* xxh128sum of an empty file: no blocks, so XXH3-128 of nothing. */
        is_str(hex, "99aa06d3014798d86001c324468d497f", "an empty file: XXH3-128 of nothing");

        digest_update(&d, "abc", 3);
        digest_final(&d, got);
        oneshot("abc", 3, want);
        oneshot(want, sizeof(want), want);
        oneshot(want, sizeof(want), want);
        ok(memcmp(got, want, sizeof(got)) == 0, "\"abc\": XXH3-128 of its group's of its block's XXH3-128");
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
        ok(d.state == NULL && d.head == NULL && d.open == NULL && d.group == NULL, "deinit clears the state");
        digest_deinit(&d);
        ok(true, "deinit is safe twice and on DIGEST_NULL");
}

/* One run over the whole file, small blocks and groups, many ways of feeding it. */
static void test_blocks(void)
{
        static const uint64_t block = 1000, super = 4;
        static const uint64_t lens[] = { 0, 1, 999, 1000, 1001, 3005, 2000, 64 * 1000 + 17 };
        static const size_t pieces[] = { 0, 1, 7, 999, 1000, 1001, 4096, 100000 };
        uint8_t *data = make_data(100000), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        bool all = true;

        for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
                reference(data, lens[i], block, super, want);
                for (size_t p = 0; p < ARRAY_SIZE(pieces); p++) {
                        struct digest d = DIGEST_NULL;

                        if (digest_init_block(&d, block, super) < 0 || digest_start(&d, 0, lens[i]) < 0 ||
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
        ok(all, "any feeding equals XXH3-128 over the groups' over the blocks' one-shot XXH3-128s");

        /* Without room taken (a stream of unknown length): the list grows. */
        struct digest d = DIGEST_NULL;
        digest_init_block(&d, 10, 3);
        is_int(feed(&d, data, 0, 100000, 333), 0, "10000 blocks with no room taken first");
        digest_final(&d, got);
        reference(data, 100000, 10, 3, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "grow as they come, same digest");
        ok(d.ngroup == 3333 && d.nhead == 0 && d.nopen == 1,
           "one hash kept per whole group, the blocks of the open one only (%zu, %zu, %zu)", d.ngroup, d.nhead,
           d.nopen);

        /* final does not end the run. */
        digest_start(&d, 0, 0);
        feed(&d, data, 0, 15, 0);
        digest_final(&d, got);
        reference(data, 15, 10, 3, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "final mid-run: the digest so far, short block included");
        feed(&d, data, 15, 40, 0);
        digest_final(&d, got);
        reference(data, 55, 10, 3, want);
        ok(memcmp(got, want, sizeof(got)) == 0, "and the run goes on after it");

        data[54] ^= 1;
        reference(data, 55, 10, 3, got);
        ok(memcmp(got, want, sizeof(got)) != 0, "one flipped bit changes the digest");

        is_int(digest_start(&d, 15, 10), -EINVAL, "a run that starts mid-block: -EINVAL");
        is_int(digest_start(&d, 15, 0), 0, "an empty run starts anywhere");
        is_int(digest_start(&d, 20, 10), 0, "a run on a block boundary");
        is_int(digest_init_block(&(struct digest){ 0 }, 0, 1), -EINVAL, "a zero block: -EINVAL");
        is_int(digest_init_block(&(struct digest){ 0 }, 1, 0), -EINVAL, "an empty group: -EINVAL");
        digest_deinit(&d);
        free(data);
}

/*
 * Lanes as wire_lane_range cuts a file (blocks split into runs) with a small
 * block and a group of 3 blocks, so that runs start and end inside groups:
 * each lane's run digested on its own, joined in order, equals the whole
 * file's; each lane's own digest is the definition over its blocks,
 * grouped as in the file.
 */
static void test_lanes(void)
{
        static const uint64_t B = 4096, S = 3;
        static const uint64_t lens[] = { 0, 1, B - 1, B, B + 1, 3 * B + 5, 8 * B, 9 * B + 1, 17 * B - 3, 40 * B + 7 };
        uint8_t *data = make_data(41 * B), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        bool joined = true, lane_ok = true, aligned = true, bounded = true;

        for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
                uint64_t nblocks = lens[i] / B + (lens[i] % B != 0);

                for (unsigned int lanes = 1; lanes <= WIRE_LANES_MAX; lanes++) {
                        struct digest d[WIRE_LANES_MAX];
                        const struct digest *run[WIRE_LANES_MAX];

                        for (unsigned int k = 0; k < lanes; k++) {
                                uint64_t first, end, off, len;

                                /* Chunks of a whole block: wire_lane_range's runs in blocks. */
                                wire_lane_range(nblocks, WIRE_BLOCK_SIZE, lanes, k, &first, &end);
                                off = MIN(first * B, lens[i]);
                                len = MIN(end * B, lens[i]) - off;
                                if (digest_init_block(&d[k], B, S) < 0)
                                        abort();
                                if (digest_start(&d[k], off, len) < 0)
                                        aligned = false;
                                feed(&d[k], data, off, len, (size_t)(k * 1000 + 1));
                                run[k] = &d[k];
                                digest_final(&d[k], got);
                                reference_at(data + off, len, first, B, S, want);
                                if (memcmp(got, want, sizeof(got)) != 0)
                                        lane_ok = false;
                                if (d[k].nhead >= S || d[k].nopen >= S || d[k].ngroup > len / B / S)
                                        bounded = false;
                        }
                        reference(data, lens[i], B, S, want);
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
        ok(lane_ok, "a lane's digest: the definition over its blocks, grouped as in the file");
        ok(joined, "joined lanes equal the whole file's digest for 1..8 lanes, 0 .. 40B+7 bytes");
        ok(bounded, "a lane keeps fewer than a group's block hashes at either end, one hash per whole group");
        free(data);
}

/* The real sizes: a file of a 64 MiB group and 5 bytes, over 1 lane, and 2
 * whose second starts inside the first group. */
static void test_real_block(void)
{
        const uint64_t len = DIGEST_SUPER_BLOCKS * DIGEST_BLOCK_SIZE + 5, half = 32 * DIGEST_BLOCK_SIZE;
        uint8_t *data = make_data(len), want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
        uint8_t h[DIGEST_SUPER_BLOCKS][WIRE_DIGEST_SIZE], s[2][WIRE_DIGEST_SIZE];
        struct digest a = DIGEST_NULL, b = DIGEST_NULL;
        const struct digest *run[2] = { &a, &b };

        for (unsigned int i = 0; i < DIGEST_SUPER_BLOCKS; i++)
                oneshot(data + (uint64_t)i * DIGEST_BLOCK_SIZE, DIGEST_BLOCK_SIZE, h[i]);
        oneshot(h, sizeof(h), s[0]);
        oneshot(data + len - 5, 5, h[0]);
        oneshot(h[0], WIRE_DIGEST_SIZE, s[1]);
        oneshot(s, sizeof(s), want);

        digest_init(&a);
        digest_start(&a, 0, len);
        feed(&a, data, 0, len, 1u << 20);
        digest_final(&a, got);
        ok(memcmp(got, want, sizeof(got)) == 0, "64 MiB + 5 bytes: XXH3-128 of its two groups' in order");
        digest_buffer(data, len, got);
        ok(memcmp(got, want, sizeof(got)) == 0, "digest_buffer: the same, in one call");
        {
                static const uint64_t sizes[] = { 0, 1, 4096, DIGEST_BLOCK_SIZE - 1, DIGEST_BLOCK_SIZE,
                                                  DIGEST_BLOCK_SIZE + 1, 3 * DIGEST_BLOCK_SIZE + 7,
                                                  DIGEST_SUPER_BLOCKS * DIGEST_BLOCK_SIZE };
                uint8_t one[WIRE_DIGEST_SIZE], run1[WIRE_DIGEST_SIZE];
                bool same = true;

                for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
                        digest_start(&a, 0, sizes[i]);
                        feed(&a, data, 0, sizes[i], 65536);
                        digest_final(&a, run1);
                        digest_buffer(data, sizes[i], one);
                        same = same && memcmp(one, run1, sizeof(one)) == 0;
                }
                ok(same, "digest_buffer equals a run for 0, 1, 4 KiB and around block and group ends");
        }

        digest_start(&a, 0, half);
        feed(&a, data, 0, half, 1u << 20);
        digest_init(&b);
        is_int(digest_start(&b, half, len - half), 0, "lane 1 starts at 32 MiB, inside the first group");
        feed(&b, data, half, len - half, 65536);
        digest_join(run, 2, got);
        ok(memcmp(got, want, sizeof(got)) == 0, "two lanes join to the same digest");
        is_int(b.nhead, 32, "lane 1 keeps the 32 block hashes it shares a group with lane 0 by");
        digest_deinit(&a);
        digest_deinit(&b);
        free(data);
}

/*
 * digest_zeros() stands for digest_update() of that many zero bytes,
 * wherever the hole starts and ends (inside a block, on its boundary,
 * across groups), mixed with data, with small blocks and with the real
 * 1 MiB ones.
 */
static void test_zeros(void)
{
        static const struct { uint64_t block, super; } shapes[] = { { 64, 4 }, { 100, 3 }, { DIGEST_BLOCK_SIZE, 2 } };

        for (size_t sh = 0; sh < ARRAY_SIZE(shapes); sh++) {
                uint64_t block = shapes[sh].block, super = shapes[sh].super;
                uint64_t len = block * super * 3 + block / 2 + 7;
                uint8_t *data = make_data((size_t)len);
                /* Holes: [a, b) of each pattern zeroed in the data. */
                const uint64_t cuts[][2] = { { 0, block }, { 3, block * 2 + 5 }, { block, block * super * 2 },
                                             { block / 2, len }, { 0, len }, { len - 1, len } };

                for (size_t c = 0; c < ARRAY_SIZE(cuts); c++) {
                        struct digest d;
                        uint8_t want[WIRE_DIGEST_SIZE], got[WIRE_DIGEST_SIZE];
                        uint8_t *z = malloc((size_t)len);

                        memcpy(z, data, (size_t)len);
                        memset(z + cuts[c][0], 0, (size_t)(cuts[c][1] - cuts[c][0]));
                        reference(z, len, block, super, want);
                        if (digest_init_block(&d, block, super) < 0 || digest_start(&d, 0, len) < 0) {
                                ok(0, "digest_init_block");
                                free(z);
                                continue;
                        }
                        digest_update(&d, z, (size_t)cuts[c][0]);
                        is_int(digest_zeros(&d, cuts[c][1] - cuts[c][0]), 0, "zeros");
                        digest_update(&d, z + cuts[c][1], (size_t)(len - cuts[c][1]));
                        digest_final(&d, got);
                        ok(memcmp(got, want, WIRE_DIGEST_SIZE) == 0,
                           "block %" PRIu64 ": a hole [%" PRIu64 ", %" PRIu64 ") of %" PRIu64 " hashes as its zeros",
                           block, cuts[c][0], cuts[c][1], len);
                        /* Twice in one digest: the stored hash of a block of zeros is reused. */
                        digest_start(&d, 0, len);
                        digest_update(&d, z, (size_t)cuts[c][0]);
                        digest_zeros(&d, cuts[c][1] - cuts[c][0]);
                        digest_update(&d, z + cuts[c][1], (size_t)(len - cuts[c][1]));
                        digest_final(&d, got);
                        ok(memcmp(got, want, WIRE_DIGEST_SIZE) == 0, "the same after digest_start again");
                        digest_deinit(&d);
                        free(z);
                }
                free(data);
        }
}

int main(void)
{
        test_known();
        test_blocks();
        test_lanes();
        test_real_block();
        test_zeros();
        return done_testing();
}
