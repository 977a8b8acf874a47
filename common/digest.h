#pragma once

/* Whole-file checksum: streaming XXH3-128 (libxxhash). */

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

struct digest {
        void *state;            /* XXH3_state_t, opaque here */
};

#define DIGEST_NULL ((struct digest){ .state = NULL })
#define DIGEST_HEX_SIZE (WIRE_DIGEST_SIZE * 2 + 1)

int digest_init(struct digest *d);              /* 0 or -ENOMEM */
void digest_deinit(struct digest *d);           /* safe on DIGEST_NULL */
void digest_update(struct digest *d, const void *data, size_t len);
/* Canonical (big-endian) bytes of the hash so far. */
void digest_final(const struct digest *d, uint8_t out[WIRE_DIGEST_SIZE]);
/*
 * The transfer's digest from its lanes' (each over its run of the file, in
 * order): the lane's own for one lane, so a one-lane transfer's digest is
 * the file's XXH3-128; else XXH3-128 over the lane digests in lane order.
 */
void digest_lanes(const uint8_t (*lane)[WIRE_DIGEST_SIZE], unsigned int n, uint8_t out[WIRE_DIGEST_SIZE]);
void digest_hex(const uint8_t in[WIRE_DIGEST_SIZE], char out[DIGEST_HEX_SIZE]);
