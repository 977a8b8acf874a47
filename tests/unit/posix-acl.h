#pragma once

/*
 * A POSIX ACL as the kernel stores it in system.posix_acl_access (and
 * _default): version 2 (u32), then (tag u16, perm u16, id u32) entries,
 * little-endian. This one: user::@owner (its rwx bits, 6: rw-),
 * user:@uid:r--, group::r--, mask::r--, other::---: not equivalent to a
 * mode, so the kernel keeps it; the mode that goes with it is
 * 0@owner40.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define POSIX_ACL_BYTES         (4 + 5 * 8)

static inline size_t posix_acl_bytes(uint8_t out[static POSIX_ACL_BYTES], uint32_t uid, uint16_t owner)
{
        const struct {
                uint16_t tag, perm;
        } e[] = { { 0x01, 0 }, { 0x02, 4 }, { 0x04, 4 }, { 0x10, 4 }, { 0x20, 0 } };
        size_t n = 4;

        memset(out, 0, POSIX_ACL_BYTES);
        out[0] = 2;
        for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++, n += 8) {
                uint32_t id = e[i].tag == 0x02 ? uid : 0xffffffffu;

                out[n] = (uint8_t)e[i].tag;
                out[n + 2] = (uint8_t)(e[i].tag == 0x01 ? owner : e[i].perm);
                out[n + 4] = (uint8_t)id;
                out[n + 5] = (uint8_t)(id >> 8);
                out[n + 6] = (uint8_t)(id >> 16);
                out[n + 7] = (uint8_t)(id >> 24);
        }
        return n;
}
