#include "sparse.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "macro.h"

void sparse_map_free(struct sparse_map *m)
{
        free(m->ext);
        *m = SPARSE_MAP_NULL;
}

static int sparse_add(struct sparse_map *m, uint32_t *cap, uint64_t start, uint64_t end)
{
        if (m->n == *cap) {
                uint32_t c = *cap ? MIN(*cap * 2, SPARSE_EXTENTS_MAX) : 16;
                void *p = realloc(m->ext, c * sizeof(*m->ext));

                if (!p)
                        return -ENOMEM;
                m->ext = p;
                *cap = c;
        }
        m->ext[m->n++] = (struct sparse_extent){ .start = start, .end = end };
        return 0;
}

int sparse_map_build(int fd, uint64_t size, struct sparse_map *m)
{
        uint32_t cap = 0;
        uint64_t off = 0;
        int r;

        sparse_map_free(m);
        while (off < size) {
                off_t d = lseek(fd, (off_t)off, SEEK_DATA), h;

                if (d < 0 && errno == ENXIO)
                        break;                  /* a hole to the end */
                if (d < 0)
                        goto fail_errno;
                if ((uint64_t)d >= size)
                        break;
                /* The last one the map holds takes the rest of the file. */
                if (m->n + 1 == SPARSE_EXTENTS_MAX) {
                        r = sparse_add(m, &cap, (uint64_t)d, size);
                        if (r < 0)
                                goto fail;
                        break;
                }
                h = lseek(fd, d, SEEK_HOLE);
                if (h < 0)
                        goto fail_errno;
                /* The file shrank meanwhile: what is left counts as data. */
                if (h <= d)
                        h = (off_t)size;
                r = sparse_add(m, &cap, (uint64_t)d, MIN((uint64_t)h, size));
                if (r < 0)
                        goto fail;
                off = (uint64_t)h;
        }
        return 0;

fail_errno:
        r = -errno;
fail:
        sparse_map_free(m);
        return r;
}

bool sparse_map_has_holes(const struct sparse_map *m, uint64_t size)
{
        uint64_t data = 0;

        for (uint32_t k = 0; k < m->n; k++)
                data += m->ext[k].end - m->ext[k].start;
        return data < size;
}

uint64_t sparse_next_data(const struct sparse_map *m, uint32_t *cursor, uint64_t seq, uint32_t chunk,
                          uint64_t size)
{
        uint64_t nchunks = DIV_ROUND_UP(size, (uint64_t)chunk);

        /* Extents that end at or before the chunk's start are behind it. */
        while (*cursor < m->n && m->ext[*cursor].end <= seq * chunk)
                (*cursor)++;
        if (*cursor == m->n || seq >= nchunks)
                return nchunks;
        return MAX(seq, m->ext[*cursor].start / chunk);
}

uint64_t sparse_chunk_bytes(const struct sparse_map *m, uint32_t chunk, uint64_t size)
{
        uint64_t nchunks = DIV_ROUND_UP(size, (uint64_t)chunk), bytes = 0, seq = 0;
        uint32_t cur = 0;

        for (;;) {
                uint64_t end;

                seq = sparse_next_data(m, &cur, seq, chunk, size);
                if (seq >= nchunks)
                        return bytes;
                /* The chunks up to the one holding the extent's last byte. */
                end = MIN(DIV_ROUND_UP(m->ext[cur].end, (uint64_t)chunk), nchunks);
                bytes += MIN(end * chunk, size) - seq * chunk;
                seq = end;
        }
}
