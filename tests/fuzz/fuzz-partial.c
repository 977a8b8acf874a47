/*
 * libFuzzer harness for the partial record decoder (common/partial.h): a
 * record is read back from partial_dir, so its bytes are untrusted. Each
 * input is decoded as it is (any length: a record, or refused with
 * -EBADMSG, -EPROTONOSUPPORT or -EINVAL), then once more cut or
 * zero-padded to PARTIAL_REC_SIZE with its checksum made right, so that
 * mutations reach the fields behind the BLAKE2b sum. A record that decodes
 * passes partial_check(), re-encodes to the same bytes in every field the
 * format defines and decodes again to the same record; and what the daemon
 * does with it stays within it: a file's kept bytes and resume points
 * within its size and each lane's run, the same lanes resuming at least
 * where the record's left off, the record matching its own offer.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>

#include "partial.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The layout (partial.c): magic, version, flags, peer, key id, source,
 * transfer id, size, chunk size, lanes, created, updated, then kept[],
 * digest[] (a tree's progress), the file's digest, dest_len, dest, zeros,
 * and the checksum over everything before it. */
#define DIGEST_AT       (8 + 4 + 4 + WIRE_ADDR_SIZE + PARTIAL_KEY_ID_SIZE + WIRE_SOURCE_SIZE + 8 + 8 + 4 + 4 + \
                         8 + 8 + 8 * WIRE_LANES_MAX)
#define DEST_LEN_AT     (DIGEST_AT + WIRE_DIGEST_SIZE * (WIRE_LANES_MAX + 1))
#define DEST_AT         (DEST_LEN_AT + 2)
#define SUM_SIZE        16
#define SUM_AT          (PARTIAL_REC_SIZE - SUM_SIZE)
#define IDLE_AT         (SUM_AT - 4)     /* idle_resumes u32 */

static void fix_sum(uint8_t *rec)
{
        crypto_generichash(rec + SUM_AT, SUM_SIZE, rec, SUM_AT, NULL, 0);
}

/* What any code reading a record may rely on, for a record that decoded. */
static void check_uses(const struct partial_rec *r)
{
        uint32_t resume[WIRE_LANES_MAX];
        char key[PARTIAL_KEY_HEX];
        struct partial_offer o;
        size_t n = strnlen(r->dest, sizeof(r->dest));

        if (partial_check(r) != 0 || n == 0 || n > PARTIAL_DEST_MAX || r->lanes == 0 || r->lanes > WIRE_LANES_MAX)
                abort();
        partial_key(r, key);
        if (strlen(key) != PARTIAL_KEY_HEX - 1 || strspn(key, "0123456789abcdef") != PARTIAL_KEY_HEX - 1)
                abort();
        memcpy(o.peer, r->peer, sizeof(o.peer));
        memcpy(o.key_id, r->key_id, sizeof(o.key_id));
        memcpy(o.source, r->source, sizeof(o.source));
        o.size = r->size;
        o.chunk_size = r->chunk_size;
        o.dest = r->dest;
        o.job_files = (r->flags & PARTIAL_TREE) ? r->tree.job_files : 0;
        /* A sender without a source never resumes. */
        if (partial_match(r, &o) != (sodium_is_zero(r->source, sizeof(r->source)) ? PARTIAL_OTHER_SOURCE : PARTIAL_MATCH))
                abort();
        (void)strlen(partial_match_str(partial_match(r, &o)));

        if (r->flags & PARTIAL_TREE) {
                const struct partial_tree *t = &r->tree;

                if (r->lanes != 1 || t->entries == 0 || t->entries > t->job_files || t->offered > r->size ||
                    !sodium_is_zero((const uint8_t *)r->kept, sizeof(r->kept)) ||
                    !sodium_is_zero(&r->digest[0][0], sizeof(r->digest)))
                        abort();
                return;
        }
        /* A file's partial: the daemon resumes it over 1 .. WIRE_LANES_MAX lanes. */
        uint64_t nchunks = r->size / r->chunk_size + (r->size % r->chunk_size != 0);
        uint64_t kept = partial_kept_bytes(r), first, end;

        if (kept > r->size)
                abort();
        for (unsigned int lanes = 1; lanes <= WIRE_LANES_MAX; lanes++) {
                uint64_t bytes = partial_resume(r, lanes, resume);

                if (bytes > r->size)
                        abort();
                for (unsigned int j = 0; j < WIRE_LANES_MAX; j++) {
                        if (j >= lanes) {
                                if (resume[j] != 0)
                                        abort();
                                continue;
                        }
                        wire_lane_range(nchunks, r->chunk_size, lanes, j, &first, &end);
                        if (resume[j] > end - first)
                                abort();
                        /* Its own lanes keep at least their own prefixes. */
                        if (lanes == r->lanes && resume[j] < r->kept[j])
                                abort();
                }
                if (lanes == r->lanes && bytes < kept)
                        abort();
        }
}

/* @rec (PARTIAL_REC_SIZE bytes) decoded: the round trip. */
static void check_decoded(const uint8_t *rec, const struct partial_rec *r)
{
        uint8_t want[PARTIAL_REC_SIZE], buf[PARTIAL_REC_SIZE];
        struct partial_rec again;
        size_t n = strlen(r->dest);

        check_uses(r);
        /* What the format defines: not the zeros after dest (up to
         * idle_resumes, the 4 bytes before the sum), nor a tree's unused
         * digests (digest[2..]), which the decoder skips. */
        memcpy(want, rec, sizeof(want));
        memset(want + DEST_AT + n, 0, IDLE_AT - DEST_AT - n);
        if (r->flags & PARTIAL_TREE)
                memset(want + DIGEST_AT + 2 * WIRE_DIGEST_SIZE, 0, (WIRE_LANES_MAX - 2) * WIRE_DIGEST_SIZE);
        fix_sum(want);
        partial_encode(buf, r);
        if (memcmp(buf, want, sizeof(buf)) != 0) {
                fprintf(stderr, "a decoded record does not re-encode to its bytes\n");
                abort();
        }
        if (partial_decode(buf, sizeof(buf), &again) != 0 || memcmp(&again, r, sizeof(again)) != 0) {
                fprintf(stderr, "a re-encoded record does not decode to the same record\n");
                abort();
        }
}

static void decode(const uint8_t *data, size_t size)
{
        struct partial_rec r;
        int rc;

        rc = partial_decode(data, size, &r);
        if (rc == 0) {
                if (size != PARTIAL_REC_SIZE)
                        abort();
                check_decoded(data, &r);
        } else if (rc != -EBADMSG && rc != -EPROTONOSUPPORT && rc != -EINVAL)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t rec[PARTIAL_REC_SIZE] = { 0 };

        decode(data, size);
        memcpy(rec, data, size < SUM_AT ? size : SUM_AT);
        fix_sum(rec);
        decode(rec, sizeof(rec));
        return 0;
}
