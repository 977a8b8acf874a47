#pragma once

/*
 * Where a sparse file's data is (issue: sparse files, wire.h version 16).
 *
 * A file whose blocks cover less than its length (st_blocks * 512 <
 * st_size) has holes: ranges that read as zeros and take no room. Its map
 * is the list of its data extents as SEEK_DATA and SEEK_HOLE report them,
 * byte-exact, in file order; a sender skips every chunk that lies wholly
 * in a hole (those chunks are neither read nor sent) and feeds its digest
 * the zeros instead (digest_zeros). The map is bounded: past
 * SPARSE_EXTENTS_MAX extents the rest of the file counts as data (sent as
 * it reads, holes and all), so a file of millions of tiny extents costs
 * 16 bytes an extent up to that bound and no more.
 *
 * Pure but for sparse_map_build(), which reads a file's extents with
 * lseek (blocking: on a worker).
 */

#include <stdbool.h>
#include <stdint.h>

#define SPARSE_EXTENTS_MAX      4096u

struct sparse_extent {
        uint64_t start, end;            /* data: [start, end), end > start */
};

struct sparse_map {
        struct sparse_extent *ext;
        uint32_t n;
};

#define SPARSE_MAP_NULL ((struct sparse_map){ .ext = NULL })

/*
 * The map of @fd's first @size bytes, into *@m (emptied first): 0; or
 * -errno (-ENOMEM; an lseek's error but ENXIO, which means "no data past
 * here"). A file system that cannot tell holes reports all of it as data:
 * one extent.
 */
int sparse_map_build(int fd, uint64_t size, struct sparse_map *m);
void sparse_map_free(struct sparse_map *m);
/* Whether the map leaves anything of @size out (a hole worth a chunk is
 * not guaranteed: sparse_chunk_bytes() says what is sent). */
bool sparse_map_has_holes(const struct sparse_map *m, uint64_t size);
/*
 * The first chunk at or after @seq (chunks of @chunk bytes, a power of two
 * or not) that holds a byte of data, or DIV_ROUND_UP(@size, @chunk) when
 * none does. *@cursor is the caller's place in the map (0 to start;
 * queries for increasing @seq walk it forward, so a lane's run costs one
 * pass over the map).
 */
uint64_t sparse_next_data(const struct sparse_map *m, uint32_t *cursor, uint64_t seq, uint32_t chunk,
                          uint64_t size);
/* The bytes of the chunks that hold data: what a sender sends of the file. */
uint64_t sparse_chunk_bytes(const struct sparse_map *m, uint32_t chunk, uint64_t size);
