#include "partial.h"

#include <assert.h>
#include <errno.h>
#include <string.h>
#include <sodium.h>

#include "bytes.h"
#include "macro.h"
#include "name.h"

/*
 * The record, little-endian:
 *   magic[8] "RDXPART\n", version u32, flags u32, peer[16], key_id[32],
 *   source[16], transfer_id u64, size u64, chunk_size u32, lanes u32,
 *   created u64, updated u64, kept[8] u64, digest[8][16], file_digest[16], dest_len u16,
 *   dest[dest_len], zeros up to idle_resumes u32, the 4 bytes before the
 *   checksum (zero in records of before it, which read as none), then
 *   checksum[16]: BLAKE2b-128 of every byte before it (a torn or foreign
 *   file is not a record).
 * A tree's (PARTIAL_TREE) has its progress where kept[] and digest[0] are:
 *   kept[0..6] = job_files, entries, offered, links_len, published,
 *   packs, skipped; kept[7] zero; digest[0] = boot_id; digest[1] = dest_dev
 *   u64, dest_ino u64 (a published tree's; zero otherwise).
 */
#define PARTIAL_FIXED   (8 + 4 + 4 + WIRE_ADDR_SIZE + PARTIAL_KEY_ID_SIZE + WIRE_SOURCE_SIZE + \
                         8 + 8 + 4 + 4 + 8 + 8 + 8 * WIRE_LANES_MAX + \
                         WIRE_DIGEST_SIZE * (WIRE_LANES_MAX + 1) + 2)
#define PARTIAL_SUM     16
#define PARTIAL_IDLE_AT (PARTIAL_REC_SIZE - PARTIAL_SUM - 4)

static_assert(sizeof(PARTIAL_MAGIC) - 1 == 8, "magic is 8 bytes");
static_assert(PARTIAL_FIXED + PARTIAL_DEST_MAX + 4 + PARTIAL_SUM <= PARTIAL_REC_SIZE, "record fits");

static void partial_sum(const uint8_t *buf, uint8_t out[PARTIAL_SUM])
{
        crypto_generichash(out, PARTIAL_SUM, buf, PARTIAL_REC_SIZE - PARTIAL_SUM, NULL, 0);
}

void partial_encode(void *buf, const struct partial_rec *r)
{
        struct bytes_out o = BYTES_OUT(buf, PARTIAL_REC_SIZE);
        size_t n = strnlen(r->dest, sizeof(r->dest) - 1);

        memset(buf, 0, PARTIAL_REC_SIZE);
        bytes_put_mem(&o, PARTIAL_MAGIC, 8);
        bytes_put_u32(&o, PARTIAL_VERSION);
        bytes_put_u32(&o, r->flags);
        bytes_put_mem(&o, r->peer, WIRE_ADDR_SIZE);
        bytes_put_mem(&o, r->key_id, PARTIAL_KEY_ID_SIZE);
        bytes_put_mem(&o, r->source, WIRE_SOURCE_SIZE);
        bytes_put_u64(&o, r->transfer_id);
        bytes_put_u64(&o, r->size);
        bytes_put_u32(&o, r->chunk_size);
        bytes_put_u32(&o, r->lanes);
        bytes_put_u64(&o, r->created);
        bytes_put_u64(&o, r->updated);
        if (r->flags & PARTIAL_TREE) {
                const struct partial_tree *t = &r->tree;
                uint8_t zero[WIRE_DIGEST_SIZE] = { 0 };

                bytes_put_u64(&o, t->job_files);
                bytes_put_u64(&o, t->entries);
                bytes_put_u64(&o, t->offered);
                bytes_put_u64(&o, t->links_len);
                bytes_put_u64(&o, t->published);
                bytes_put_u64(&o, t->packs);
                bytes_put_u64(&o, t->skipped);
                bytes_put_u64(&o, 0);
                bytes_put_mem(&o, t->boot_id, PARTIAL_BOOT_SIZE);
                bytes_put_u64(&o, t->dest_dev);
                bytes_put_u64(&o, t->dest_ino);
                for (unsigned int k = 2; k < WIRE_LANES_MAX; k++)
                        bytes_put_mem(&o, zero, WIRE_DIGEST_SIZE);
        } else {
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        bytes_put_u64(&o, r->kept[k]);
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        bytes_put_mem(&o, r->digest[k], WIRE_DIGEST_SIZE);
        }
        bytes_put_mem(&o, r->file_digest, WIRE_DIGEST_SIZE);
        bytes_put_u16(&o, (uint16_t)n);
        bytes_put_mem(&o, r->dest, n);
        {
                struct bytes_out t = BYTES_OUT((uint8_t *)buf + PARTIAL_IDLE_AT, 4);

                bytes_put_u32(&t, r->idle_resumes);
        }
        partial_sum(buf, (uint8_t *)buf + PARTIAL_REC_SIZE - PARTIAL_SUM);
}

int partial_check(const struct partial_rec *r)
{
        uint64_t nchunks, first, end;
        size_t n = strnlen(r->dest, sizeof(r->dest));

        if ((r->flags & ~PARTIAL_FLAGS) || r->lanes == 0 || r->lanes > WIRE_LANES_MAX ||
            r->chunk_size == 0 || WIRE_GROUP_SIZE % r->chunk_size != 0 || n == 0 ||
            n > PARTIAL_DEST_MAX)
                return -EINVAL;
        if (r->flags & PARTIAL_TREE) {
                const struct partial_tree *t = &r->tree;

                if (r->lanes != 1 || t->job_files < 2 ||
                    t->entries == 0 || t->entries > t->job_files || t->offered > r->size ||
                    t->published > t->entries || t->skipped > t->entries || t->packs > t->entries ||
                    name_path_check(r->dest, n, NULL) != NAME_OK)
                        return -EINVAL;
                /* Published: every entry, and the directory it is. */
                if ((r->flags & PARTIAL_PUBLISHED) ?
                            t->entries != t->job_files || t->published != t->job_files || t->dest_ino == 0 :
                            t->dest_dev != 0 || t->dest_ino != 0)
                        return -EINVAL;
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        if (r->kept[k] != 0)
                                return -EINVAL;
                return 0;
        }
        /* Every lane has a block of its own (wire_lane_range). */
        if (r->lanes > MAX(wire_blocks(r->size), 1u))
                return -EINVAL;
        /* A leaf, or a tree's entry: a path beneath incoming_dir. */
        if (name_check(r->dest, n) != NAME_OK && name_path_check(r->dest, n, NULL) != NAME_OK)
                return -EINVAL;
        nchunks = r->size / r->chunk_size + (r->size % r->chunk_size != 0);
        if (nchunks > UINT32_MAX)
                return -EINVAL;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                if (k >= r->lanes) {
                        if (r->kept[k] != 0)
                                return -EINVAL;
                        continue;
                }
                wire_lane_range(nchunks, r->chunk_size, r->lanes, k, &first, &end);
                if (r->kept[k] > end - first)
                        return -EINVAL;
        }
        return 0;
}

int partial_decode(const void *buf, size_t len, struct partial_rec *r)
{
        struct bytes_in in = BYTES_IN(buf, len);
        uint8_t magic[8], sum[PARTIAL_SUM];
        uint32_t version;
        uint16_t n;

        if (len != PARTIAL_REC_SIZE)
                return -EBADMSG;
        bytes_get_mem(&in, magic, sizeof(magic));
        if (memcmp(magic, PARTIAL_MAGIC, sizeof(magic)) != 0)
                return -EBADMSG;
        partial_sum(buf, sum);
        if (sodium_memcmp(sum, (const uint8_t *)buf + PARTIAL_REC_SIZE - PARTIAL_SUM, PARTIAL_SUM) != 0)
                return -EBADMSG;
        version = bytes_get_u32(&in);
        if (version != PARTIAL_VERSION)
                return -EPROTONOSUPPORT;
        memset(r, 0, sizeof(*r));
        r->flags = bytes_get_u32(&in);
        bytes_get_mem(&in, r->peer, WIRE_ADDR_SIZE);
        bytes_get_mem(&in, r->key_id, PARTIAL_KEY_ID_SIZE);
        bytes_get_mem(&in, r->source, WIRE_SOURCE_SIZE);
        r->transfer_id = bytes_get_u64(&in);
        r->size = bytes_get_u64(&in);
        r->chunk_size = bytes_get_u32(&in);
        r->lanes = bytes_get_u32(&in);
        r->created = bytes_get_u64(&in);
        r->updated = bytes_get_u64(&in);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                r->kept[k] = bytes_get_u64(&in);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                bytes_get_mem(&in, r->digest[k], WIRE_DIGEST_SIZE);
        bytes_get_mem(&in, r->file_digest, WIRE_DIGEST_SIZE);
        if (r->flags & PARTIAL_TREE) {
                struct partial_tree *t = &r->tree;
                struct bytes_in d = BYTES_IN(r->digest[1], WIRE_DIGEST_SIZE);

                /* Counts of 32 bits where the file's are 64: larger is damage. */
                if (r->kept[0] > UINT32_MAX || r->kept[1] > UINT32_MAX || r->kept[4] > UINT32_MAX ||
                    r->kept[5] > UINT32_MAX || r->kept[6] > UINT32_MAX || r->kept[7] != 0)
                        return -EINVAL;
                t->job_files = (uint32_t)r->kept[0];
                t->entries = (uint32_t)r->kept[1];
                t->offered = r->kept[2];
                t->links_len = r->kept[3];
                t->published = (uint32_t)r->kept[4];
                t->packs = (uint32_t)r->kept[5];
                t->skipped = (uint32_t)r->kept[6];
                memcpy(t->boot_id, r->digest[0], PARTIAL_BOOT_SIZE);
                t->dest_dev = bytes_get_u64(&d);
                t->dest_ino = bytes_get_u64(&d);
                memset(r->kept, 0, sizeof(r->kept));
                memset(r->digest, 0, sizeof(r->digest));
        }
        n = bytes_get_u16(&in);
        if (n == 0 || n > PARTIAL_DEST_MAX || !bytes_get_str(&in, r->dest, sizeof(r->dest), n))
                return -EINVAL;
        {
                struct bytes_in t = BYTES_IN((const uint8_t *)buf + PARTIAL_IDLE_AT, 4);

                r->idle_resumes = bytes_get_u32(&t);
        }
        return partial_check(r);
}

void partial_key_id(const uint8_t *key, size_t len, uint8_t out[PARTIAL_KEY_ID_SIZE])
{
        static const char label[] = "rdmaxfer partial key id";

        if (len == 0) {
                memset(out, 0, PARTIAL_KEY_ID_SIZE);
                return;
        }
        /* BLAKE2b keys are at most 64 bytes: a longer key is hashed first. */
        if (len > crypto_generichash_KEYBYTES_MAX) {
                uint8_t k[crypto_generichash_KEYBYTES_MAX];

                crypto_generichash(k, sizeof(k), key, len, NULL, 0);
                crypto_generichash(out, PARTIAL_KEY_ID_SIZE, (const uint8_t *)label, sizeof(label) - 1,
                                   k, sizeof(k));
                sodium_memzero(k, sizeof(k));
                return;
        }
        crypto_generichash(out, PARTIAL_KEY_ID_SIZE, (const uint8_t *)label, sizeof(label) - 1, key, len);
}

void partial_key(const struct partial_rec *r, char out[PARTIAL_KEY_HEX])
{
        static const char label[] = "rdmaxfer partial";
        crypto_generichash_state st;
        uint8_t h[(PARTIAL_KEY_HEX - 1) / 2];

        crypto_generichash_init(&st, NULL, 0, sizeof(h));
        crypto_generichash_update(&st, (const uint8_t *)label, sizeof(label));
        crypto_generichash_update(&st, r->peer, WIRE_ADDR_SIZE);
        crypto_generichash_update(&st, r->key_id, PARTIAL_KEY_ID_SIZE);
        crypto_generichash_update(&st, (const uint8_t *)r->dest, strnlen(r->dest, sizeof(r->dest)));
        /* A tree's DEST and a file of that name are two partials. */
        if (r->flags & PARTIAL_TREE)
                crypto_generichash_update(&st, (const uint8_t *)"/", 1);
        crypto_generichash_final(&st, h, sizeof(h));
        sodium_bin2hex(out, PARTIAL_KEY_HEX, h, sizeof(h));
}

static bool partial_zero(const uint8_t *p, size_t n)
{
        uint8_t acc = 0;

        for (size_t i = 0; i < n; i++)
                acc |= p[i];
        return acc == 0;
}

enum partial_match partial_match(const struct partial_rec *r, const struct partial_offer *o)
{
        if (memcmp(r->peer, o->peer, WIRE_ADDR_SIZE) != 0 ||
            sodium_memcmp(r->key_id, o->key_id, PARTIAL_KEY_ID_SIZE) != 0)
                return PARTIAL_OTHER_PEER;
        if (strncmp(r->dest, o->dest, sizeof(r->dest)) != 0 || r->size != o->size ||
            r->chunk_size != o->chunk_size || !(r->flags & PARTIAL_TREE) != !o->job_files ||
            ((r->flags & PARTIAL_TREE) && r->tree.job_files != o->job_files))
                return PARTIAL_OTHER_FILE;
        /* A sender that cannot name its source never resumes. */
        if (partial_zero(o->source, WIRE_SOURCE_SIZE) ||
            memcmp(r->source, o->source, WIRE_SOURCE_SIZE) != 0)
                return PARTIAL_OTHER_SOURCE;
        return PARTIAL_MATCH;
}

const char *partial_match_str(enum partial_match m)
{
        switch (m) {
        case PARTIAL_MATCH:
                return "same transfer";
        case PARTIAL_OTHER_PEER:
                return "offered by another peer or key";
        case PARTIAL_OTHER_FILE:
                return "another size or chunk size";
        case PARTIAL_OTHER_SOURCE:
                return "the source file changed";
        }
        return "?";
}

static uint64_t partial_nchunks(const struct partial_rec *r)
{
        return r->size / r->chunk_size + (r->size % r->chunk_size != 0);
}

uint64_t partial_kept_bytes(const struct partial_rec *r)
{
        uint64_t nchunks = partial_nchunks(r), first, end, bytes = 0;

        for (unsigned int k = 0; k < r->lanes && k < WIRE_LANES_MAX; k++) {
                wire_lane_range(nchunks, r->chunk_size, r->lanes, k, &first, &end);
                bytes += wire_run_bytes(r->size, r->chunk_size, first, first + MIN(r->kept[k], end - first));
        }
        return bytes;
}

uint64_t partial_resume(const struct partial_rec *r, unsigned int lanes,
                        uint32_t resume[WIRE_LANES_MAX])
{
        uint64_t nchunks = partial_nchunks(r), bytes = 0;
        uint64_t lo[WIRE_LANES_MAX], hi[WIRE_LANES_MAX];

        memset(resume, 0, sizeof(uint32_t) * WIRE_LANES_MAX);
        for (unsigned int k = 0; k < r->lanes && k < WIRE_LANES_MAX; k++) {
                uint64_t end;

                wire_lane_range(nchunks, r->chunk_size, r->lanes, k, &lo[k], &end);
                hi[k] = lo[k] + MIN(r->kept[k], end - lo[k]);
        }
        for (unsigned int j = 0; j < lanes && j < WIRE_LANES_MAX; j++) {
                uint64_t first, end, pos;
                bool moved = true;

                wire_lane_range(nchunks, r->chunk_size, lanes, j, &first, &end);
                pos = first;
                /* Follow the kept intervals from this lane's first chunk on. */
                while (moved && pos < end) {
                        moved = false;
                        for (unsigned int k = 0; k < r->lanes && k < WIRE_LANES_MAX; k++)
                                if (lo[k] <= pos && pos < hi[k]) {
                                        pos = MIN(hi[k], end);
                                        moved = true;
                                }
                }
                resume[j] = (uint32_t)(pos - first);
                bytes += wire_run_bytes(r->size, r->chunk_size, first, pos);
        }
        return bytes;
}

unsigned int partial_sweep_select(struct partial_entry *e, size_t n, uint64_t now,
                                  uint64_t retention, uint64_t max_bytes)
{
        uint64_t total = 0;
        unsigned int removed = 0;

        for (size_t i = 0; i < n; i++) {
                /* A clock set back makes nothing look older than it is. */
                e[i].remove = now > e[i].updated && now - e[i].updated >= retention;
                if (e[i].remove)
                        removed++;
                else
                        total += e[i].bytes;
        }
        while (total > max_bytes) {
                size_t oldest = n;

                for (size_t i = 0; i < n; i++)
                        if (!e[i].remove && (oldest == n || e[i].updated < e[oldest].updated))
                                oldest = i;
                if (oldest == n)
                        break;
                e[oldest].remove = true;
                total -= e[oldest].bytes;
                removed++;
        }
        return removed;
}
