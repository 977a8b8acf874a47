/*
 * libFuzzer harness for the pack parser (common/pack.h). The input's first
 * two bytes are the entry count the offer would announce (little-endian),
 * the rest the pack. Whatever the bytes, pack_next() must stay within the
 * pack; a pack it accepts must be rebuilt byte for byte by the writer from
 * the entries it returned, with the same pack hash, and pack_check() must
 * agree with it.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t h1[PACK_HASH_SIZE] = { 0 }, h2[PACK_HASH_SIZE];
        struct pack_writer w;
        struct pack_reader r;
        struct pack_entry e;
        const uint8_t *p;
        const char *why;
        uint32_t entries;
        size_t len;
        int n;

        if (size < 2)
                return 0;
        entries = (uint32_t)data[0] | (uint32_t)data[1] << 8;
        p = data + 2;
        len = size - 2;
        pack_writer_init(&w);
        pack_reader_init(&r, p, len, entries);
        while ((n = pack_next(&r, &e)) == PACK_ENTRY) {
                uint8_t *d;

                if (e.name < (const char *)p || e.name + e.name_len > (const char *)p + len ||
                    (e.data && (e.data < p || e.data + pack_data_len(&e) > p + len)) ||
                    (e.xattrs && (e.xattrs < p || e.xattrs + e.xattrs_len > p + len)))
                        abort();
                /* The writer refuses what no pack may hold: over the limits is fine. */
                if (pack_append(&w, &e, &d) < 0)
                        break;
                if (pack_data_len(&e))
                        memcpy(d, e.data, pack_data_len(&e));
        }
        if (n == PACK_END) {
                if (w.len != len || (len > 0 && memcmp(w.buf, p, len) != 0)) {
                        fprintf(stderr, "an accepted pack does not round-trip\n");
                        abort();
                }
                pack_reader_hash(&r, h1);
                pack_writer_hash(&w, h2);
                if (memcmp(h1, h2, PACK_HASH_SIZE) != 0 || pack_check(p, len, entries, h1, &why) != 0)
                        abort();
        } else if (n < 0) {
                if (!r.why || pack_check(p, len, entries, h1, &why) == 0)
                        abort();
        }
        pack_writer_deinit(&w);
        return 0;
}
