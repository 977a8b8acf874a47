/*
 * Sparse maps (common/sparse.h): the chunks a sender skips and the bytes
 * it sends, against maps written by hand; and the map of real files made
 * with holes (ftruncate, pwrite at offsets, FALLOC_FL_PUNCH_HOLE) in the
 * test's directory, checked against what the file reads: every byte the
 * map leaves out reads as zero.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "macro.h"
#include "sparse.h"
#include "tap.h"

static void test_next_data(void)
{
        struct sparse_extent ext[] = { { 10, 20 }, { 4096, 4100 }, { 9000, 12288 } };
        struct sparse_map m = { .ext = ext, .n = ARRAY_SIZE(ext) };
        uint64_t size = 20000;
        uint32_t cur = 0;

        /* Chunks of 1024: data in chunks 0, 4, 8..11; 12..19 are a hole. */
        is_int(sparse_next_data(&m, &cur, 0, 1024, size), 0, "chunk 0 holds [10, 20)");
        is_int(sparse_next_data(&m, &cur, 1, 1024, size), 4, "from chunk 1 the next data is chunk 4");
        is_int(sparse_next_data(&m, &cur, 4, 1024, size), 4, "chunk 4 holds [4096, 4100)");
        is_int(sparse_next_data(&m, &cur, 5, 1024, size), 8, "chunk 8 holds 9000");
        is_int(sparse_next_data(&m, &cur, 11, 1024, size), 11, "chunk 11 ends at 12288");
        is_int(sparse_next_data(&m, &cur, 12, 1024, size), 20, "nothing after: the chunk count");
        cur = 0;
        is_int(sparse_next_data(&m, &cur, 9, 1024, size), 9, "a cursor from 0 can start mid-map");
        is_int(sparse_chunk_bytes(&m, 1024, size), 1024 + 1024 + 4 * 1024, "bytes sent with 1 KiB chunks");
        is_int(sparse_chunk_bytes(&m, 4096, size), 4096 + 4096 + 4096, "bytes sent with 4 KiB chunks");
        is_int(sparse_chunk_bytes(&m, 1 << 20, size), size, "one chunk: the whole file");
        ok(sparse_map_has_holes(&m, size), "the map has holes");

        /* The last chunk, short, holding the data. */
        struct sparse_extent tail[] = { { 19990, 20000 } };
        struct sparse_map t = { .ext = tail, .n = 1 };

        cur = 0;
        is_int(sparse_next_data(&t, &cur, 0, 1024, size), 19, "data only in the short last chunk");
        is_int(sparse_chunk_bytes(&t, 1024, size), size - 19 * 1024, "its bytes: the short chunk's");

        struct sparse_map none = SPARSE_MAP_NULL;

        cur = 0;
        is_int(sparse_next_data(&none, &cur, 0, 1024, size), 20, "all hole: nothing to send");
        is_int(sparse_chunk_bytes(&none, 1024, size), 0, "all hole: no bytes");
}

/* Every byte outside the map reads as zero; the map covers the data written. */
static bool map_matches(int fd, const struct sparse_map *m, uint64_t size, const uint64_t (*data)[2], size_t ndata)
{
        uint8_t buf[4096];

        for (size_t k = 0; k < ndata; k++) {
                bool in = false;

                for (uint32_t e = 0; e < m->n; e++)
                        in |= m->ext[e].start <= data[k][0] && data[k][1] <= m->ext[e].end;
                if (!in)
                        return false;
        }
        for (uint64_t off = 0; off < size; off += sizeof(buf)) {
                size_t n = (size_t)MIN((uint64_t)sizeof(buf), size - off);

                if (pread(fd, buf, n, (off_t)off) != (ssize_t)n)
                        return false;
                for (size_t i = 0; i < n; i++) {
                        bool in = false;

                        if (!buf[i])
                                continue;
                        for (uint32_t e = 0; e < m->n; e++)
                                in |= m->ext[e].start <= off + i && off + i < m->ext[e].end;
                        if (!in)
                                return false;
                }
        }
        return true;
}

static void test_real_file(void)
{
        char path[] = "test-sparse-XXXXXX";
        const uint64_t size = 64 << 20;
        const uint64_t data[][2] = { { 0, 4096 }, { 8 << 20, (8 << 20) + 100 }, { 30 << 20, 33 << 20 } };
        struct sparse_map m = SPARSE_MAP_NULL;
        uint8_t *buf = malloc(3 << 20);
        struct stat st;
        int fd = mkstemp(path);

        if (fd < 0 || !buf) {
                ok(0, "mkstemp: %s", strerror(errno));
                free(buf);
                return;
        }
        unlink(path);
        memset(buf, 0xa5, 3 << 20);
        ok(ftruncate(fd, (off_t)size) == 0, "a 64 MiB file of nothing");
        for (size_t k = 0; k < ARRAY_SIZE(data); k++)
                ok(pwrite(fd, buf, data[k][1] - data[k][0], (off_t)data[k][0]) == (ssize_t)(data[k][1] - data[k][0]),
                   "data at %" PRIu64, data[k][0]);
        is_int(sparse_map_build(fd, size, &m), 0, "its map");
        ok(map_matches(fd, &m, size, data, ARRAY_SIZE(data)), "the map holds the data; the rest reads as zeros");
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < size) {
                /* A file system that tells holes (ext4, xfs, tmpfs, btrfs). */
                ok(sparse_map_has_holes(&m, size), "holes where nothing was written");
                ok(sparse_chunk_bytes(&m, 1 << 20, size) <= 6u << 20, "at most 6 MiB of 1 MiB chunks to send, not 64");
        } else {
                /* One that allocates every block: all of it is data. */
                ok(m.n == 1 && m.ext[0].start == 0 && m.ext[0].end == size, "no holes here: one extent");
                is_int(sparse_chunk_bytes(&m, 1 << 20, size), size, "the whole file is sent");
        }
        /* The map of nothing but a hole, and of a file shorter than it says. */
        is_int(sparse_map_build(fd, 0, &m), 0, "an empty range");
        is_int(m.n, 0, "has no extent");
        ok(ftruncate(fd, 0) == 0 && ftruncate(fd, 1 << 20) == 0, "1 MiB hole");
        is_int(sparse_map_build(fd, 1 << 20, &m), 0, "its map");
        ok(m.n == 0 || (fstat(fd, &st) == 0 && st.st_blocks > 0), "no extent in a file of only a hole");
        is_int(sparse_map_build(fd, 4 << 20, &m), 0, "asked past the end");
        ok(m.n == 0, "still nothing: past EOF is no data");
        sparse_map_free(&m);
        free(buf);
        close(fd);
}

/* Past SPARSE_EXTENTS_MAX extents, the rest counts as data. */
static void test_bound(void)
{
        char path[] = "test-sparse-XXXXXX";
        const uint32_t n = SPARSE_EXTENTS_MAX + 10;
        const uint64_t size = (uint64_t)n * 8192;
        struct sparse_map m = SPARSE_MAP_NULL;
        struct stat st;
        int fd = mkstemp(path);
        bool written = fd >= 0;

        if (fd < 0) {
                ok(0, "mkstemp: %s", strerror(errno));
                return;
        }
        unlink(path);
        written &= ftruncate(fd, (off_t)size) == 0;
        for (uint32_t k = 0; k < n && written; k++)
                written &= pwrite(fd, "x", 1, (off_t)k * 8192) == 1;
        ok(written, "%u one-byte extents 8 KiB apart", n);
        is_int(sparse_map_build(fd, size, &m), 0, "the map");
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_blocks * 512 < size) {
                is_int(m.n, SPARSE_EXTENTS_MAX, "bounded");
                is_int(m.ext[m.n - 1].end, size, "its last extent runs to the end");
        } else {
                ok(m.n == 1, "no holes here: one extent");
                is_int(m.ext[0].end, size, "the whole file");
        }
        sparse_map_free(&m);
        close(fd);
}

int main(void)
{
        test_next_data();
        test_real_file();
        test_bound();
        return done_testing();
}
