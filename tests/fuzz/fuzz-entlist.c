/*
 * libFuzzer harness for the tree entry stream (common/entlist.h): the list
 * a relay keeps beside a staged tree and reads back from disk when the
 * tree's job resumes, so its bytes are untrusted. The input's first two
 * bytes are how many entries the kept tree's record says are staged
 * (little-endian), what recv-partial-tree.c asks entlist_span() for; the rest is
 * the list. Whatever the bytes, entlist_next() returns entries within the
 * list that entlist_put() would write, and writes them back byte for byte:
 * the whole list when it reaches the end, the records before the one it
 * refuses otherwise, where it stays; entlist_span() of any count agrees
 * with that walk.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entlist.h"
#include "name.h"
#include "pack.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entry(const uint8_t *buf, size_t len, size_t at, size_t off, const struct entlist_entry *e)
{
        size_t tlen = e->type == PACK_LINK ? (size_t)e->size : 0;

        if (e->type != PACK_DIR && e->type != PACK_FILE && e->type != PACK_LINK)
                abort();
        if (e->name_len == 0 || e->name_len > WIRE_PATH_MAX || e->name != (const char *)buf + at + ENTLIST_HEADER)
                abort();
        if (off != at + ENTLIST_HEADER + e->name_len + tlen || off > len)
                abort();
        if (e->type == PACK_DIR && e->size != 0)
                abort();
        /* A hard link's flag only on a link, whose target is then a name's length at most. */
        if ((e->flags & ~PACK_F_HARD) || (e->flags && (e->type != PACK_LINK || e->size > WIRE_PATH_MAX)))
                abort();
        if (e->type == PACK_LINK ? !e->target || e->target != e->name + e->name_len || e->size == 0 ||
                                           e->size > NAME_LINK_MAX
                                 : e->target != NULL)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct entlist l = ENTLIST_NULL;
        struct entlist_entry e;
        const uint8_t *buf;
        size_t len, off = 0, at, *ends;
        uint32_t want, count = 0;
        int rc;

        if (size < 2)
                return 0;
        want = (uint32_t)data[0] | (uint32_t)data[1] << 8;
        buf = data + 2;
        len = size - 2;
        /* Each record takes more than a header. */
        ends = malloc((len / (ENTLIST_HEADER + 1) + 1) * sizeof(*ends));
        if (!ends)
                return 0;
        for (;;) {
                at = off;
                rc = entlist_next(buf, len, &off, &e);
                if (rc != 1)
                        break;
                check_entry(buf, len, at, off, &e);
                /* What it read, the writer writes. */
                if (entlist_put(&l, &e) != 0 || l.len != off) {
                        fprintf(stderr, "entry %u does not write back\n", count);
                        abort();
                }
                ends[count++] = off;
        }
        if (rc != 0 && rc != -EBADMSG)
                abort();
        /* At the end: every byte; refused: it stays at the bad record. */
        if (off != at || (rc == 0 && off != len) || (rc != 0 && off == len))
                abort();
        if (rc != 0 && (entlist_next(buf, len, &off, &e) != -EBADMSG || off != at))
                abort();
        if (l.len != off || (off > 0 && memcmp(l.buf, buf, off) != 0)) {
                fprintf(stderr, "a list read does not write back byte for byte\n");
                abort();
        }

        /* The span of n records: their bytes while the list holds them. */
        const uint32_t ns[] = { want, 0, count / 2, count, count + 1 };

        for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
                uint32_t n = ns[i];

                if (entlist_span(buf, len, n) != (n == 0 ? 0 : n <= count ? (int64_t)ends[n - 1] : -EBADMSG))
                        abort();
        }
        free(ends);
        entlist_free(&l);
        return 0;
}
