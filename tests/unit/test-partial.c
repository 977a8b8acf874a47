/* common/partial.c: the resume record, matching, resume points, the sweep. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "partial.h"
#include "tap.h"

static struct partial_rec sample(void)
{
        struct partial_rec r;

        memset(&r, 0, sizeof(r));
        r.peer[10] = r.peer[11] = 0xff;
        r.peer[12] = 10;
        r.peer[15] = 2;
        memset(r.key_id, 0x4b, sizeof(r.key_id));
        memset(r.source, 0x53, sizeof(r.source));
        r.transfer_id = 77;
        r.size = 10 * (uint64_t)WIRE_BLOCK_SIZE + 5;      /* 11 chunks of a block each, the last 5 bytes */
        r.chunk_size = WIRE_BLOCK_SIZE;
        r.lanes = 2;                    /* runs [0, 5) and [5, 11) */
        r.created = 1000;
        r.updated = 2000;
        r.kept[0] = 3;
        r.kept[1] = 5;
        memset(r.file_digest, 0x44, sizeof(r.file_digest));
        snprintf(r.dest, sizeof(r.dest), "big.img");
        return r;
}

static struct partial_offer offer_of(const struct partial_rec *r)
{
        struct partial_offer o;

        memcpy(o.peer, r->peer, sizeof(o.peer));
        memcpy(o.key_id, r->key_id, sizeof(o.key_id));
        memcpy(o.source, r->source, sizeof(o.source));
        o.size = r->size;
        o.chunk_size = r->chunk_size;
        o.dest = r->dest;
        o.job_files = (r->flags & PARTIAL_TREE) ? r->tree.job_files : 0;
        return o;
}

static void test_codec(void)
{
        struct partial_rec r = sample(), back;
        uint8_t buf[PARTIAL_REC_SIZE], tmp[PARTIAL_REC_SIZE];

        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), 0, "a record decodes");
        ok(memcmp(&r, &back, sizeof(r)) == 0, "field for field");
        ok(memcmp(buf, PARTIAL_MAGIC, 8) == 0 && buf[8] == PARTIAL_VERSION, "magic, then the version");
        r.idle_resumes = 2;
        partial_encode(buf, &r);
        ok(partial_decode(buf, sizeof(buf), &back) == 0 && back.idle_resumes == 2, "idle resumes kept (issue 32 M2)");
        ok(buf[PARTIAL_REC_SIZE - 16 - 4] == 2, "in the 4 bytes before the checksum, where older records hold zeros");
        r = sample();

        is_int(partial_decode(buf, sizeof(buf) - 1, &back), -EBADMSG, "a short record is not one");
        memcpy(tmp, buf, sizeof(tmp));
        tmp[200] ^= 1;
        is_int(partial_decode(tmp, sizeof(tmp), &back), -EBADMSG, "a flipped bit fails the checksum");
        memcpy(tmp, buf, sizeof(tmp));
        memset(tmp + 700, 0, sizeof(tmp) - 700);
        is_int(partial_decode(tmp, sizeof(tmp), &back), -EBADMSG, "a torn write fails the checksum");
        memcpy(tmp, buf, sizeof(tmp));
        tmp[0] = 'X';
        is_int(partial_decode(tmp, sizeof(tmp), &back), -EBADMSG, "another magic");

        r.lanes = 0;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "0 lanes refused");
        r = sample();
        r.kept[1] = 7;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a lane kept past its run refused");
        r = sample();
        r.kept[2] = 1;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a lane past lanes keeps nothing");
        r = sample();
        snprintf(r.dest, sizeof(r.dest), "../etc/passwd");
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a destination that climbs out refused");
        r = sample();
        snprintf(r.dest, sizeof(r.dest), "runs/set/big.img");
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), 0, "a tree entry's path is a destination");
        snprintf(r.dest, sizeof(r.dest), "/abs/big.img");
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "an absolute path refused");
        r = sample();
        r.chunk_size = 0;
        is_int(partial_check(&r), -EINVAL, "chunk size 0 refused");
        r = sample();
        r.chunk_size = 3 << 20;
        is_int(partial_check(&r), -EINVAL, "a chunk size that does not divide a block refused");
        r = sample();
        r.size = 2 * (uint64_t)WIRE_BLOCK_SIZE;
        r.kept[0] = r.kept[1] = 0;
        r.lanes = 3;
        is_int(partial_check(&r), -EINVAL, "more lanes than blocks refused");
        r = sample();
        r.flags = 0x80;
        is_int(partial_check(&r), -EINVAL, "an unknown flag refused");
        r = sample();
        memset(r.dest, 'a', PARTIAL_DEST_MAX);
        r.dest[PARTIAL_DEST_MAX] = '\0';
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL,
               "a destination name_check() refuses (too long a leaf) refused, the record still fits");
}

static void test_key(void)
{
        struct partial_rec a = sample(), b = sample();
        char ka[PARTIAL_KEY_HEX], kb[PARTIAL_KEY_HEX];
        uint8_t id1[PARTIAL_KEY_ID_SIZE], id2[PARTIAL_KEY_ID_SIZE], zero[PARTIAL_KEY_ID_SIZE] = { 0 };
        uint8_t key[100];

        partial_key(&a, ka);
        is_int(strlen(ka), 32, "32 hex digits");
        b.size++;
        b.source[0] ^= 1;
        b.kept[0] = 0;
        partial_key(&b, kb);
        is_str(kb, ka, "size, source and progress do not move the files: a new attempt finds them");
        b = sample();
        b.peer[15] = 3;
        partial_key(&b, kb);
        ok(strcmp(ka, kb) != 0, "another peer, other files");
        b = sample();
        b.key_id[0] ^= 1;
        partial_key(&b, kb);
        ok(strcmp(ka, kb) != 0, "another key, other files");
        b = sample();
        snprintf(b.dest, sizeof(b.dest), "big.img2");
        partial_key(&b, kb);
        ok(strcmp(ka, kb) != 0, "another destination, other files");

        memset(key, 0x11, sizeof(key));
        partial_key_id(key, 32, id1);
        partial_key_id(key, 32, id2);
        ok(memcmp(id1, id2, sizeof(id1)) == 0, "a key's id is stable");
        key[31] ^= 1;
        partial_key_id(key, 32, id2);
        ok(memcmp(id1, id2, sizeof(id1)) != 0, "another key, another id");
        ok(memcmp(id1, key, 32) != 0, "the id is not the key");
        partial_key_id(key, 0, id2);
        ok(memcmp(id2, zero, sizeof(zero)) == 0, "no key: zero");
        partial_key_id(key, sizeof(key), id2);
        ok(memcmp(id2, zero, sizeof(zero)) != 0, "a key longer than BLAKE2b's still has an id");
}

static void test_match(void)
{
        struct partial_rec r = sample();
        struct partial_offer o = offer_of(&r);

        is_int(partial_match(&r, &o), PARTIAL_MATCH, "the same transfer matches");
        o.peer[15] = 9;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_PEER, "another address does not");
        o = offer_of(&r);
        o.key_id[31] ^= 1;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_PEER, "another key does not");
        memset(o.key_id, 0, sizeof(o.key_id));
        is_int(partial_match(&r, &o), PARTIAL_OTHER_PEER, "no key, for a partial made with one, does not");
        o = offer_of(&r);
        o.source[3] ^= 1;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_SOURCE, "a changed source does not");
        o = offer_of(&r);
        memset(o.source, 0, sizeof(o.source));
        memset(r.source, 0, sizeof(r.source));
        is_int(partial_match(&r, &o), PARTIAL_OTHER_SOURCE, "a zero source token never matches");
        r = sample();
        o = offer_of(&r);
        o.size--;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_FILE, "another size does not");
        o = offer_of(&r);
        o.chunk_size = 65536;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_FILE, "another chunk size does not");
        o = offer_of(&r);
        o.dest = "other.img";
        is_int(partial_match(&r, &o), PARTIAL_OTHER_FILE, "another destination does not");
        ok(strlen(partial_match_str(PARTIAL_OTHER_SOURCE)) > 0, "each has words");
}

/* A relayed file's partial names no peer (wire.h, Relay chains): any
 * relayed offer of it matches, an offer straight from a node never. */
static void test_relayed(void)
{
        struct partial_rec r = sample(), direct = sample();
        struct partial_offer o;
        char kr[PARTIAL_KEY_HEX], kd[PARTIAL_KEY_HEX];
        uint8_t buf[PARTIAL_REC_SIZE];
        struct partial_rec back;

        memset(r.peer, 0, sizeof(r.peer));
        o = offer_of(&r);
        is_int(partial_match(&r, &o), PARTIAL_MATCH, "a relayed offer matches a relayed file's partial");
        partial_key(&r, kr);
        partial_key(&direct, kd);
        ok(strcmp(kr, kd) != 0, "and it has other files than the same file's sent straight");
        o = offer_of(&direct);
        is_int(partial_match(&r, &o), PARTIAL_OTHER_PEER, "an offer straight from a node does not match it");
        o = offer_of(&r);
        is_int(partial_match(&direct, &o), PARTIAL_OTHER_PEER, "nor a relayed one a partial sent straight");
        o.key_id[0] ^= 1;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_PEER, "a relayed offer under another key does not");
        o = offer_of(&r);
        o.source[0] ^= 1;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_SOURCE, "nor one of another origin's source");
        partial_encode(buf, &r);
        ok(partial_decode(buf, sizeof(buf), &back) == 0 && memcmp(back.peer, r.peer, sizeof(r.peer)) == 0,
           "its record, with no peer, round-trips");
}

static void test_resume(void)
{
        struct partial_rec r = sample();
        uint32_t res[WIRE_LANES_MAX];
        uint64_t bytes;

        is_int(partial_kept_bytes(&r), 8ull * (uint64_t)WIRE_BLOCK_SIZE, "kept: 3 + 5 chunks");
        bytes = partial_resume(&r, 2, res);
        ok(res[0] == 3 && res[1] == 5 && res[2] == 0, "same lanes: where each stopped");
        is_int(bytes, 8ull * (uint64_t)WIRE_BLOCK_SIZE, "bytes not sent again");

        /* One lane now: [0, 11); kept [0, 3) and [5, 10): only the first is contiguous. */
        bytes = partial_resume(&r, 1, res);
        ok(res[0] == 3 && res[1] == 0, "one lane: what is contiguous from the start");
        is_int(bytes, 3ull * (uint64_t)WIRE_BLOCK_SIZE, "and only that is not sent again");

        /* Lane 1 done, the last chunk short. */
        r.kept[0] = 5;
        r.kept[1] = 6;
        bytes = partial_resume(&r, 1, res);
        ok(res[0] == 11, "one lane over two whole runs: everything");
        is_int(bytes, r.size, "every byte, the short last chunk's too");
        /* Three lanes: [0,3) [3,7) [7,11). */
        r.kept[0] = 5;
        r.kept[1] = 1;
        bytes = partial_resume(&r, 3, res);
        ok(res[0] == 3 && res[1] == 3 && res[2] == 0, "three lanes over kept [0,5) and [5,6): 3, 3 (across both), 0");
        is_int(bytes, 6ull * (uint64_t)WIRE_BLOCK_SIZE, "6 chunks not sent again");
        r.kept[0] = 4;
        r.kept[1] = 2;
        bytes = partial_resume(&r, 3, res);
        ok(res[0] == 3 && res[1] == 1 && res[2] == 0, "kept [0,4) and [5,7): lane 1 stops at the gap (chunk 4)");
        is_int(bytes, 4ull * (uint64_t)WIRE_BLOCK_SIZE, "4 chunks not sent again");

        r = sample();
        r.kept[0] = r.kept[1] = 0;
        bytes = partial_resume(&r, 4, res);
        ok(bytes == 0 && res[0] == 0 && res[3] == 0, "nothing kept, nothing resumed");

        r = sample();
        r.size = 0;
        r.kept[0] = r.kept[1] = 0;
        bytes = partial_resume(&r, 1, res);
        ok(bytes == 0 && res[0] == 0, "an empty file resumes nothing");
}

static void test_sweep(void)
{
        struct partial_entry e[4] = {
                { .updated = 100, .bytes = 10 },
                { .updated = 900, .bytes = 20 },
                { .updated = 500, .bytes = 30 },
                { .updated = 1100, .bytes = 40 },      /* from a clock set back */
        };

        is_int(partial_sweep_select(e, 4, 1000, 600, 1000), 1, "one expired");
        ok(e[0].remove && !e[1].remove && !e[2].remove && !e[3].remove, "the one older than the retention");
        is_int(partial_sweep_select(e, 4, 1000, 10000, 60), 2, "over the cap: the oldest go");
        ok(e[0].remove && e[2].remove && !e[1].remove && !e[3].remove, "oldest first, until the rest fit");
        is_int(partial_sweep_select(e, 4, 1000, 10000, 0), 4, "a cap of 0 keeps nothing");
        is_int(partial_sweep_select(e, 4, 1000, 10000, 100), 0, "all fit: none goes");
        is_int(partial_sweep_select(e, 0, 1000, 1, 0), 0, "nothing to sweep");
}

/* A kept tree's record (PARTIAL_TREE): its progress where a file's lanes are. */
static struct partial_rec tree_sample(void)
{
        struct partial_rec r = sample();

        r.flags = PARTIAL_TREE;
        r.lanes = 1;
        memset(r.kept, 0, sizeof(r.kept));
        r.size = 5000000;
        r.chunk_size = 1u << 20;
        r.tree = (struct partial_tree){ .job_files = 10001, .entries = 4321, .offered = 4000000,
                                        .links_len = 77, .published = 4000, .packs = 3, .skipped = 9 };
        memset(r.tree.boot_id, 0xb0, sizeof(r.tree.boot_id));
        snprintf(r.dest, sizeof(r.dest), "runs/2026/set");
        return r;
}

static void test_tree(void)
{
        struct partial_rec r = tree_sample(), back, file = sample();
        uint8_t buf[PARTIAL_REC_SIZE];
        char kt[PARTIAL_KEY_HEX], kf[PARTIAL_KEY_HEX];
        struct partial_offer o;

        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), 0, "a kept tree's record decodes");
        ok(memcmp(&r, &back, sizeof(r)) == 0, "field for field, its progress and boot id too");
        r.tree.entries = r.tree.job_files + 1;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "more entries kept than the job has: refused");
        r = tree_sample();
        r.tree.entries = 0;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "no entry kept (not even DEST): refused");
        r = tree_sample();
        r.tree.offered = r.size + 1;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "more bytes kept than the job has: refused");
        r = tree_sample();
        r.flags |= PARTIAL_PUBLISHED;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL,
               "a published tree's record with entries still to come: refused");
        r.tree.entries = r.tree.published = r.tree.job_files;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a published tree's record without its DEST: refused");
        r.tree.dest_dev = 2049;
        r.tree.dest_ino = 1234567;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), 0, "a published tree's record, every entry, decodes");
        ok(memcmp(&r, &back, sizeof(r)) == 0, "field for field, with the directory it published");
        r = tree_sample();
        r.tree.dest_ino = 1234567;
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a kept tree names no published directory");
        r = tree_sample();
        snprintf(r.dest, sizeof(r.dest), "runs/../etc");
        partial_encode(buf, &r);
        is_int(partial_decode(buf, sizeof(buf), &back), -EINVAL, "a DEST with .. refused");
        r = tree_sample();
        snprintf(r.dest, sizeof(r.dest), "big.img");
        file.flags = 0;
        partial_key(&r, kt);
        partial_key(&file, kf);
        ok(strcmp(kt, kf) != 0, "a tree named big.img and a file named big.img are two partials");

        r = tree_sample();
        o = offer_of(&r);
        is_int(partial_match(&r, &o), PARTIAL_MATCH, "the same tree job matches");
        o.job_files = 10000;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_FILE, "another count of entries does not");
        o.job_files = 0;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_FILE, "a file's offer never matches a kept tree");
        o = offer_of(&r);
        o.source[0] ^= 1;
        is_int(partial_match(&r, &o), PARTIAL_OTHER_SOURCE, "another job's token does not");
        o = offer_of(&file);
        o.job_files = 3;
        is_int(partial_match(&file, &o), PARTIAL_OTHER_FILE, "a tree's offer never matches a file's partial");
}

int main(void)
{
        test_codec();
        test_tree();
        test_key();
        test_match();
        test_relayed();
        test_resume();
        test_sweep();
        return done_testing();
}
