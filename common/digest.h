#pragma once

/*
 * A file's digest, the same whatever the lane count (RDMAXFER_DIGEST, the
 * xattr user.rdmaxfer.digest, `xferctl sum`), in two levels:
 *
 *   cut the file into blocks of B = DIGEST_BLOCK_SIZE (1 MiB) bytes,
 *   [iB, (i+1)B), the last one short; h_i = XXH3-128 of block i in its
 *   canonical (big-endian) 16 bytes; group them by S = DIGEST_SUPER_BLOCKS
 *   (64), so that group j is the file's 64 MiB [jSB, (j+1)SB), the last
 *   one short; s_j = XXH3-128, canonical, of h_jS || ... (the group's
 *   hashes in order); digest = XXH3-128, canonical, of s_0 || s_1 || ...
 *   in order. An empty file has no blocks: its digest is XXH3-128 of
 *   nothing (99aa06d3014798d86001c324468d497f).
 *
 * So `split -b 64M --filter='split -b 1M --filter=xxh128sum | cut -c1-32 |
 * tr a-f A-F | basenc --base16 -d | xxh128sum | cut -c1-32' FILE | tr a-f
 * A-F | basenc --base16 -d | xxh128sum` prints it too (xferctl(1)).
 *
 * Lanes start on block boundaries (wire_lane_range), so each hashes whole
 * blocks of its own run, and a file as small as a few MiB is striped over
 * every lane; a lane's run may start or end inside a group. A run keeps
 * the hashes of the blocks of a group it shares with another run (at most
 * S at either end) and one hash per whole group: 16 bytes per 64 MiB, so a
 * terabyte file costs a lane 256 KiB. A run's own digest (END's) is the
 * definition above applied to its blocks, grouped as they are in the file;
 * the file's is assembled from the runs in order (digest_join). A
 * one-lane transfer's lane digest is the file's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define DIGEST_BLOCK_SIZE       WIRE_BLOCK_SIZE
#define DIGEST_SUPER_BLOCKS     64
/* Where the receiver keeps a published file's digest: its 32 hex digits,
 * lower case, no newline (rdmaxferd(8)). */
#define DIGEST_XATTR            "user.rdmaxfer.digest"

struct digest {
        void *state;            /* XXH3_state_t over the current block, opaque here */
        uint64_t block;         /* B: DIGEST_BLOCK_SIZE but in tests */
        uint64_t super;         /* S: DIGEST_SUPER_BLOCKS but in tests */
        uint64_t first;         /* the run's first block */
        uint64_t blocks;        /* its whole blocks hashed so far */
        uint64_t in_block;      /* bytes of the current block hashed so far */
        /* Hashes of the run's blocks in the group it starts inside (ended
         * by another run's), and of those of the group it is in now,
         * begun at that group's start: S each. */
        uint8_t (*head)[WIRE_DIGEST_SIZE];
        uint8_t (*open)[WIRE_DIGEST_SIZE];
        size_t nhead, nopen;
        uint8_t (*group)[WIRE_DIGEST_SIZE];     /* the whole groups' s_j */
        size_t ngroup, cap;
        uint8_t zero[WIRE_DIGEST_SIZE];         /* h of a block of zeros, once zero_known */
        bool zero_known;
};

#define DIGEST_NULL ((struct digest){ .state = NULL })
#define DIGEST_HEX_SIZE (WIRE_DIGEST_SIZE * 2 + 1)

/* A digest at offset 0 of an empty run: 0 or -ENOMEM. */
int digest_init(struct digest *d);
/* The same with blocks of @block bytes (> 0), @super to a group (> 0), for
 * tests: 0, -EINVAL or -ENOMEM. */
int digest_init_block(struct digest *d, uint64_t block, uint64_t super);
void digest_deinit(struct digest *d);           /* safe on DIGEST_NULL */
/*
 * Start over for a run of the file that begins at @offset and is about
 * @len bytes: room for its group hashes is taken now (16 bytes per group),
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
 * @len bytes of zeros, as digest_update() of them would be: a hole of a
 * sparse file, never read. A whole block of them costs a stored hash
 * (computed the first time), not the hashing of a megabyte.
 */
int digest_zeros(struct digest *d, uint64_t len);
/*
 * The run's digest so far, canonical bytes: the definition above over its
 * blocks (the last, short one included), grouped as in the file. Does not
 * end the run.
 */
void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE]);
/*
 * The file's digest from its runs (lanes), @n of them, in file order,
 * each complete and each beginning where the one before it ends: the
 * definition above over all their blocks. With one run, the same as
 * digest_final().
 */
void digest_join(const struct digest *const *run, unsigned int n, uint8_t out[WIRE_DIGEST_SIZE]);
/* The digest of a whole file held in memory, @len bytes at @data: the same
 * as a run over it, with nothing allocated (a packed entry's). */
void digest_buffer(const void *data, uint64_t len, uint8_t out[WIRE_DIGEST_SIZE]);
void digest_hex(const uint8_t in[WIRE_DIGEST_SIZE], char out[DIGEST_HEX_SIZE]);
/* 32 hex digits (either case) to 16 bytes: 0 or -EINVAL. */
int digest_parse(const char *hex, size_t len, uint8_t out[WIRE_DIGEST_SIZE]);
