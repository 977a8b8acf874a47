#pragma once

/*
 * A file's digest, the same whatever the lane count (RDMAXFER_DIGEST, the
 * xattr user.rdmaxfer.digest, `xferctl sum`):
 *
 *   cut the file into blocks of B = WIRE_BLOCK_SIZE (64 MiB) bytes,
 *   [iB, (i+1)B), the last one short; h_i = XXH3-128 of block i in its
 *   canonical (big-endian) 16 bytes; digest = XXH3-128, canonical, of
 *   h_0 || h_1 || ... in order. An empty file has no blocks: its digest
 *   is XXH3-128 of nothing (99aa06d3014798d86001c324468d497f).
 *
 * So `split -b 64M --filter=xxh128sum FILE | cut -c1-32 | tr a-f A-F |
 * basenc --base16 -d | xxh128sum` prints it too (xferctl(1)). Lanes start on block boundaries
 * (wire_lane_range), so each hashes whole blocks of its own run; a lane's
 * digest (END's) is XXH3-128 over its run's block hashes, and the file's
 * is assembled from the lanes' block hashes in order (digest_join). A
 * one-lane transfer's lane digest is the file's.
 */

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define DIGEST_BLOCK_SIZE       WIRE_BLOCK_SIZE
/* Where the receiver keeps a published file's digest: its 32 hex digits,
 * lower case, no newline (rdmaxferd(8)). */
#define DIGEST_XATTR            "user.rdmaxfer.digest"

struct digest {
        void *state;            /* XXH3_state_t over the current block, opaque here */
        uint64_t block;         /* B: DIGEST_BLOCK_SIZE but in tests */
        uint64_t in_block;      /* bytes of the current block hashed so far */
        uint8_t (*hash)[WIRE_DIGEST_SIZE];      /* the finished blocks' */
        size_t nhash, cap;
};

#define DIGEST_NULL ((struct digest){ .state = NULL })
#define DIGEST_HEX_SIZE (WIRE_DIGEST_SIZE * 2 + 1)

/* A digest at offset 0 of an empty run: 0 or -ENOMEM. */
int digest_init(struct digest *d);
/* The same with blocks of @block bytes (> 0), for tests: 0, -EINVAL or -ENOMEM. */
int digest_init_block(struct digest *d, uint64_t block);
void digest_deinit(struct digest *d);           /* safe on DIGEST_NULL */
/*
 * Start over for a run of the file that begins at @offset and is about
 * @len bytes: room for its block hashes is taken now (16 bytes per block),
 * so digest_update() of up to @len bytes never allocates. 0, -EINVAL when
 * @offset is not on a block boundary and @len > 0 (the run could not be
 * joined), or -ENOMEM.
 */
int digest_start(struct digest *d, uint64_t offset, uint64_t len);
/*
 * The run's next bytes, in file order. 0; -ENOMEM only past the @len that
 * digest_start() made room for (growing the list failed; the digest is
 * then unusable).
 */
int digest_update(struct digest *d, const void *data, size_t len);
/*
 * The run's digest so far, canonical bytes: XXH3-128 over the hashes of
 * its blocks (the last, short one included). Does not end the run.
 */
void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE]);
/*
 * The file's digest from its runs (lanes), @n of them, in file order,
 * each complete: XXH3-128 over all their block hashes in order. With one
 * run, the same as digest_final().
 */
void digest_join(const struct digest *const *run, unsigned int n, uint8_t out[WIRE_DIGEST_SIZE]);
void digest_hex(const uint8_t in[WIRE_DIGEST_SIZE], char out[DIGEST_HEX_SIZE]);
/* 32 hex digits (either case) to 16 bytes: 0 or -EINVAL. */
int digest_parse(const char *hex, size_t len, uint8_t out[WIRE_DIGEST_SIZE]);
