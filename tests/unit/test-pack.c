/* The pack format (common/pack.h): round trips, the byte layout, and every malformed pack. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "name.h"
#include "pack.h"
#include "tap.h"
#include "xattrs.h"

static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static int append(struct pack_writer *w, uint8_t type, const char *name, uint32_t mode, uint64_t mtime,
                  const char *data, uint64_t size)
{
        struct pack_entry e = { .type = type, .mode = mode, .mtime_ns = mtime, .size = size,
                                .name = name, .name_len = strlen(name) };
        uint8_t *p;
        int r;

        r = pack_append(w, &e, &p);
        if (r == 0 && size)
                memcpy(p, data, size);
        return r;
}

/* A small pack of three records, its bytes in *@len. */
static uint8_t *sample(size_t *len, uint8_t hash[PACK_HASH_SIZE])
{
        struct pack_writer w;
        uint8_t *out;

        pack_writer_init(&w);
        append(&w, PACK_DIR, "dest/a", 0755, 0, NULL, 0);
        append(&w, PACK_FILE, "dest/a/hello.txt", 0644, 1234567890123456789ull, "hello", 5);
        append(&w, PACK_FILE, "dest/a/\xc3\xa9t\xc3\xa9", 0600, 1, NULL, 0);
        pack_writer_hash(&w, hash);
        *len = w.len;
        out = TAKE_PTR(w.buf);
        pack_writer_deinit(&w);
        return out;
}

static void test_round_trip(void)
{
        uint8_t hash[PACK_HASH_SIZE], h2[PACK_HASH_SIZE];
        struct pack_reader r;
        struct pack_entry e;
        const char *why = NULL;
        size_t len;
        uint8_t *p = sample(&len, hash);

        is_int(len, 3 * PACK_RECORD_HEADER + 6 + 16 + 5 + 12, "three records' bytes");
        /* The layout: type, flags, name_len, mode, mtime_ns, size, name, data. */
        ok(p[0] == PACK_DIR && p[1] == 0 && p[2] == 6 && p[3] == 0, "first header's type and name length");
        ok(memcmp(p + PACK_RECORD_HEADER, "dest/a", 6) == 0, "first name follows its header");

        pack_reader_init(&r, p, len, 3);
        is_int(pack_next(&r, &e), PACK_ENTRY, "first record");
        ok(e.type == PACK_DIR && e.mode == 0755 && e.size == 0 && e.name_len == 6 &&
           memcmp(e.name, "dest/a", 6) == 0 && !e.data, "a directory");
        is_int(pack_next(&r, &e), PACK_ENTRY, "second record");
        ok(e.type == PACK_FILE && e.mode == 0644 && e.mtime_ns == 1234567890123456789ull && e.size == 5 &&
           memcmp(e.data, "hello", 5) == 0 && e.name_len == 16, "a file and its data");
        is_int(pack_next(&r, &e), PACK_ENTRY, "third record");
        ok(e.size == 0 && !e.data && e.mtime_ns == 1, "an empty file with a UTF-8 name");
        is_int(pack_next(&r, &e), PACK_END, "then the end");
        pack_reader_hash(&r, h2);
        ok(memcmp(hash, h2, PACK_HASH_SIZE) == 0, "reader's hash is the writer's");
        is_int(pack_check(p, len, 3, hash, &why), 0, "pack_check passes it");

        /* The hash covers the headers and names, not the data. */
        p[PACK_RECORD_HEADER + 6 + PACK_RECORD_HEADER + 16] ^= 1;
        is_int(pack_check(p, len, 3, hash, &why), 0, "data is the offer digest's to cover");
        p[PACK_RECORD_HEADER + 6 + 4] ^= 1;     /* the file's mode */
        is_int(pack_check(p, len, 3, hash, &why), -EBADMSG, "a changed mode breaks the hash");
        ok(why && strstr(why, "hash"), "and says so: %s", why ? why : "(null)");
        free(p);
}

static void test_writer_limits(void)
{
        struct pack_writer w;
        char name[PACK_NAME_MAX + 2];
        uint8_t *data;
        int r = 0;

        pack_writer_init(&w);
        is_int(append(&w, 4, "d/x", 0, 0, NULL, 0), -EINVAL, "unknown type");
        is_int(append(&w, PACK_FILE, "d/x", 010000, 0, NULL, 0), -EINVAL, "mode past 07777");
        is_int(append(&w, PACK_FILE, "", 0, 0, NULL, 0), -EINVAL, "empty name");
        memset(name, 'a', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        is_int(append(&w, PACK_FILE, name, 0, 0, NULL, 0), -EINVAL, "name too long");
        is_int(pack_append(&w, &(struct pack_entry){ .type = PACK_DIR, .size = 1, .name = "d/x",
                                                      .name_len = 3 }, &data),
               -EINVAL, "a directory with data");
        is_int(pack_append(&w, &(struct pack_entry){ .type = PACK_FILE, .size = PACK_BYTES_MAX,
                                                      .name = "d/x", .name_len = 3 }, &data),
               -EFBIG, "more than PACK_BYTES_MAX");
        is_int(w.count, 0, "nothing appended by a refusal");
        for (unsigned int i = 0; i < PACK_ENTRIES_MAX && r == 0; i++)
                r = append(&w, PACK_DIR, "d/x", 0, 0, NULL, 0);
        is_int(r, 0, "PACK_ENTRIES_MAX entries");
        is_int(append(&w, PACK_DIR, "d/x", 0, 0, NULL, 0), -EFBIG, "and not one more");
        pack_writer_deinit(&w);
        pack_writer_deinit(&w);
        ok(w.buf == NULL, "deinit twice is safe");
}

/* Check one malformed pack: refused, with a reason. */
static void bad(const uint8_t *p, size_t len, uint32_t entries, const char *what)
{
        struct pack_reader r;
        struct pack_entry e;
        int n;

        pack_reader_init(&r, p, len, entries);
        while ((n = pack_next(&r, &e)) == PACK_ENTRY)
                ;
        ok(n == -EBADMSG && r.why, "%s: refused (%s)", what, r.why ? r.why : "no reason");
        /* A failed reader stays failed. */
        is_int(pack_next(&r, &e), -EBADMSG, "%s: and stays refused", what);
}

static void test_malformed(void)
{
        uint8_t hash[PACK_HASH_SIZE];
        size_t len, second = PACK_RECORD_HEADER + 6;
        uint8_t *p = sample(&len, hash), q[256];
        const char *why = NULL;

        if (len + 8 > sizeof(q)) {
                ok(false, "the sample pack fits the test's buffer");
                free(p);
                return;
        }

        bad(p, len, 2, "more records than announced");
        bad(p, len, 4, "fewer records than announced");
        bad(p, len - 1, 3, "the last record cut short");
        bad(p, 10, 1, "a short header");
        memcpy(q, p, len);
        memset(q + len, 0, 8);
        bad(q, len + 8, 3, "trailing bytes");

        memcpy(q, p, len);
        q[second] = 7;
        bad(q, len, 3, "an unknown type");
        memcpy(q, p, len);
        q[second + 1] = 1;
        bad(q, len, 3, "unknown flags");
        memcpy(q, p, len);
        q[second + 5] = 0x10;   /* mode 010644 */
        bad(q, len, 3, "a mode past 07777");
        memcpy(q, p, len);
        put64(q + 16, 1);       /* the directory's size */
        bad(q, len, 3, "a directory with data");
        memcpy(q, p, len);
        put16(q + second + 2, 0);
        bad(q, len, 3, "an empty name");
        memcpy(q, p, len);
        put16(q + second + 2, 300);
        bad(q, len, 3, "a name length past PACK_NAME_MAX");
        memcpy(q, p, len);
        put16(q + 2, 200);
        bad(q, 60, 3, "a name past the end");
        memcpy(q, p, len);
        put64(q + second + 16, 6);
        bad(q, len, 3, "data one past the end");
        memcpy(q, p, len);
        put64(q + second + 16, UINT64_MAX);
        bad(q, len, 3, "a size that would wrap");
        memcpy(q, p, len);
        memcpy(q + PACK_RECORD_HEADER, "de/../", 6);
        bad(q, len, 3, "a '..' component");
        memcpy(q, p, len);
        q[PACK_RECORD_HEADER] = '/';
        bad(q, len, 3, "an absolute name");
        memcpy(q, p, len);
        memcpy(q + PACK_RECORD_HEADER, "dest/.", 6);
        bad(q, len, 3, "a hidden component");
        memcpy(q, p, len);
        q[PACK_RECORD_HEADER + 5] = '\0';
        bad(q, len, 3, "a NUL in a name");
        memcpy(q, p, len);
        q[PACK_RECORD_HEADER + 5] = '\xff';
        {
                /* Any bytes but '/' and NUL make a name (names = any); a
                 * receiver's stricter names rule is its own, at unpack. */
                struct pack_reader r;
                struct pack_entry e;
                int n, k = 0;

                pack_reader_init(&r, q, len, 3);
                while ((n = pack_next(&r, &e)) == PACK_ENTRY)
                        k += e.name_len == 6 && (uint8_t)e.name[5] == 0xff;
                ok(n == PACK_END && k == 1, "a name that is not UTF-8 is read as its bytes");
        }
        bad(p, 0, 1, "an empty pack that announces an entry");

        memcpy(q, p, len);
        memcpy(q + PACK_RECORD_HEADER, "dest/b", 6);
        is_int(pack_check(q, len, 3, hash, &why), -EBADMSG, "a renamed entry fails pack_check");
        ok(why && strstr(why, "hash"), "on the hash");
        is_int(pack_check(p, len, 2, hash, &why), -EBADMSG, "pack_check: the count too");
        free(p);
}

/* Symlinks (wire version 9): the target is the data; no mode; 1 .. NAME_LINK_MAX bytes, no NUL. */
static void test_links(void)
{
        uint8_t hash[PACK_HASH_SIZE];
        static uint8_t big[2 * PACK_RECORD_HEADER + NAME_LINK_MAX + 64];
        struct pack_writer w;
        struct pack_reader r;
        struct pack_entry e;
        const char *why = NULL;
        char target[NAME_LINK_MAX + 2];
        size_t len, at;
        uint8_t *p;

        pack_writer_init(&w);
        is_int(append(&w, PACK_LINK, "d/l", 0, 42, "../x", 4), 0, "a symlink goes into a pack");
        is_int(append(&w, PACK_FILE, "d/f", 0644, 0, "hi", 2), 0, "then a file");
        is_int(append(&w, PACK_LINK, "d/m", 0777, 0, "x", 1), -EINVAL, "a symlink with a mode");
        is_int(append(&w, PACK_LINK, "d/m", 0, 0, NULL, 0), -EINVAL, "a symlink without a target");
        memset(target, 'a', sizeof(target) - 1);
        target[sizeof(target) - 1] = '\0';
        is_int(append(&w, PACK_LINK, "d/m", 0, 0, target, NAME_LINK_MAX + 1), -EINVAL,
               "a target past NAME_LINK_MAX");
        is_int(append(&w, PACK_LINK, "d/m", 0, 0, target, NAME_LINK_MAX), 0, "a target of NAME_LINK_MAX bytes");
        is_int(w.count, 3, "three appended");
        pack_writer_hash(&w, hash);
        p = w.buf;
        len = w.len;

        pack_reader_init(&r, p, len, 3);
        is_int(pack_next(&r, &e), PACK_ENTRY, "the symlink read back");
        ok(e.type == PACK_LINK && e.mode == 0 && e.mtime_ns == 42 && e.size == 4 && memcmp(e.data, "../x", 4) == 0,
           "its target and mtime");
        is_int(pack_next(&r, &e), PACK_ENTRY, "the file after it");
        ok(e.type == PACK_FILE && e.size == 2 && memcmp(e.data, "hi", 2) == 0, "is intact");
        is_int(pack_next(&r, &e), PACK_ENTRY, "the longest target");
        ok(e.type == PACK_LINK && e.size == NAME_LINK_MAX, "read whole");
        is_int(pack_check(p, len, 3, hash, &why), 0, "pack_check passes it");

        /* The first record, broken as a hostile sender might. */
        at = PACK_RECORD_HEADER + 3;    /* its data, the target */
        if (len > sizeof(big)) {
                ok(false, "the pack fits the test's buffer");
                pack_writer_deinit(&w);
                return;
        }
        memcpy(big, p, len);
        big[4] = 0x01;                  /* mode 01 */
        bad(big, len, 3, "a symlink with a mode");
        memcpy(big, p, len);
        big[at + 1] = '\0';
        bad(big, len, 3, "a NUL in a target");
        memcpy(big, p, len);
        put64(big + 16, 0);
        bad(big, len, 3, "a symlink without a target");
        /* A lone record whose target is one past NAME_LINK_MAX, all there. */
        memcpy(big, p, PACK_RECORD_HEADER + 3);
        put64(big + 16, NAME_LINK_MAX + 1);
        memset(big + PACK_RECORD_HEADER + 3, 'a', NAME_LINK_MAX + 1);
        bad(big, PACK_RECORD_HEADER + 3 + NAME_LINK_MAX + 1, 1, "a target past NAME_LINK_MAX");
        pack_writer_deinit(&w);
}

/* A hard link (PACK_F_HARD): its data is a tree's name, checked as one. */
static void test_hard_links(void)
{
        uint8_t hash[PACK_HASH_SIZE], *p;
        struct pack_writer w;
        struct pack_reader r;
        struct pack_entry e = { .type = PACK_LINK, .flags = PACK_F_HARD, .name = "D/h", .name_len = 3, .size = 3 };
        const char *why = NULL;
        char big[PACK_NAME_MAX + 2];

        pack_writer_init(&w);
        is_int(append(&w, PACK_FILE, "D/f", 0444, 5, "data", 4), 0, "a file");
        is_int(pack_append(&w, &e, &p), 0, "then a hard link to it");
        memcpy(p, "D/f", 3);
        e.type = PACK_FILE;
        is_int(pack_append(&w, &e, &p), -EINVAL, "a hard link's flag on a file is refused");
        e = (struct pack_entry){ .type = PACK_LINK, .flags = 0x02, .name = "D/g", .name_len = 3, .size = 1 };
        is_int(pack_append(&w, &e, &p), -EINVAL, "an unknown flag is refused");
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        e = (struct pack_entry){ .type = PACK_LINK, .flags = PACK_F_HARD, .name = "D/g", .name_len = 3,
                                 .size = PACK_NAME_MAX + 1 };
        is_int(pack_append(&w, &e, &p), -EINVAL, "a hard link's target past PACK_NAME_MAX is refused");
        pack_writer_hash(&w, hash);
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), PACK_ENTRY, "the file read back");
        ok(e.type == PACK_FILE && e.flags == 0, "without a flag");
        is_int(pack_next(&r, &e), PACK_ENTRY, "the hard link read back");
        ok(e.type == PACK_LINK && e.flags == PACK_F_HARD && e.size == 3 && memcmp(e.data, "D/f", 3) == 0,
           "with its flag and its file's name");
        is_int(pack_check(w.buf, w.len, 2, hash, &why), 0, "pack_check passes it");

        /* Its target as a hostile sender might write it: not a name. */
        memcpy(w.buf + w.len - 3, "../", 3);
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), PACK_ENTRY, "the file");
        is_int(pack_next(&r, &e), -EBADMSG, "a hard link to \"../\" is malformed");
        ok(r.why && strstr(r.why, "hard link"), "... and says so: %s", r.why ? r.why : "(none)");
        /* The flag on a file's record. */
        w.buf[1] = PACK_F_HARD;
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), -EBADMSG, "a flag on a file's record is malformed");
        pack_writer_deinit(&w);
}

/* An index pack's file (PACK_F_INDEX, wire version 24): its size, a digest for data. */
static void test_index(void)
{
        uint8_t hash[PACK_HASH_SIZE], hash2[PACK_HASH_SIZE], *p;
        struct pack_writer w;
        struct pack_reader r;
        struct pack_entry e = { .type = PACK_FILE, .flags = PACK_F_INDEX, .mode = 0644, .name = "D/big",
                                .name_len = 5, .size = 3u << 20 };
        const char *why = NULL;

        pack_writer_init(&w);
        is_int(append(&w, PACK_DIR, "D/d", 0755, 0, NULL, 0), 0, "a directory");
        is_int(pack_append(&w, &e, &p), 0, "an indexed file of 3 MiB");
        ok(p != NULL && w.len == 2 * PACK_RECORD_HEADER + 3 + 5 + PACK_INDEX_DATA,
           "takes its header, name and PACK_INDEX_DATA bytes, not its size");
        if (p)
                memset(p, 0xd1, PACK_INDEX_DATA);
        e.type = PACK_DIR;
        e.size = 0;
        is_int(pack_append(&w, &e, &p), -EINVAL, "the index flag on a directory is refused");
        e.type = PACK_LINK;
        e.size = 2;
        e.mode = 0;
        is_int(pack_append(&w, &e, &p), -EINVAL, "and on a link");
        pack_writer_hash(&w, hash);
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), PACK_ENTRY, "the directory read back");
        is_int(pack_next(&r, &e), PACK_ENTRY, "the indexed file read back");
        ok(e.type == PACK_FILE && e.flags == PACK_F_INDEX && e.size == 3u << 20 && pack_data_len(&e) == PACK_INDEX_DATA &&
           e.data && e.data[0] == 0xd1 && e.data[PACK_INDEX_DATA - 1] == 0xd1, "its size, its digest as data");
        is_int(pack_next(&r, &e), PACK_END, "and nothing after");
        is_int(pack_check(w.buf, w.len, 2, hash, &why), 0, "pack_check passes it");
        /* The flag is in the hash: an indexed file is not a carried one. */
        w.buf[PACK_RECORD_HEADER + 3 + 1] = 0;
        is_int(pack_check(w.buf, w.len, 2, hash, &why), -EBADMSG, "without its flag, the record reads as data past the end");
        w.buf[PACK_RECORD_HEADER + 3 + 1] = PACK_F_INDEX;
        w.buf[PACK_RECORD_HEADER + 3 + 16] ^= 1;
        pack_reader_init(&r, w.buf, w.len, 2);
        while (pack_next(&r, &e) == PACK_ENTRY)
                ;
        pack_reader_hash(&r, hash2);
        ok(memcmp(hash, hash2, PACK_HASH_SIZE) != 0, "its size is in the pack hash");
        pack_writer_deinit(&w);
}

/* Attributes (PACK_F_XATTRS, wire version 27): between a record's name
 * and its data, under the pack hash. */
static void test_xattrs(void)
{
        uint8_t hash[PACK_HASH_SIZE], hash2[PACK_HASH_SIZE], x[64], *p;
        struct pack_writer w;
        struct pack_reader r;
        struct pack_entry e;
        size_t xl = 0;
        const char *why = NULL;

        ok(xattrs_put(x, sizeof(x), &xl, "user.k", "v1", 2) == 0, "a record of a user.* attribute");
        pack_writer_init(&w);
        e = (struct pack_entry){ .type = PACK_DIR, .flags = PACK_F_XATTRS, .mode = 0755, .name = "D/d",
                                 .name_len = 3, .xattrs = x, .xattrs_len = (uint16_t)xl };
        is_int(pack_append(&w, &e, &p), 0, "a directory with attributes");
        e = (struct pack_entry){ .type = PACK_FILE, .flags = PACK_F_XATTRS, .mode = 0444, .name = "D/d/f",
                                 .name_len = 5, .size = 4, .xattrs = x, .xattrs_len = (uint16_t)xl };
        is_int(pack_append(&w, &e, &p), 0, "a read-only file with attributes");
        memcpy(p, "data", 4);
        is_int(w.len, 2 * PACK_RECORD_HEADER + 3 + 5 + 2 * (2 + xl) + 4, "each: header, name, length, records, data");
        ok(w.buf[PACK_RECORD_HEADER + 3] == xl && w.buf[PACK_RECORD_HEADER + 4] == 0 &&
           memcmp(w.buf + PACK_RECORD_HEADER + 5, x, xl) == 0, "the length little-endian, then the records");
        e = (struct pack_entry){ .type = PACK_LINK, .flags = PACK_F_XATTRS, .name = "D/l", .name_len = 3, .size = 1,
                                 .xattrs = x, .xattrs_len = (uint16_t)xl };
        is_int(pack_append(&w, &e, &p), -EINVAL, "not on a symlink");
        e = (struct pack_entry){ .type = PACK_FILE, .flags = PACK_F_XATTRS, .name = "D/e", .name_len = 3 };
        is_int(pack_append(&w, &e, &p), -EINVAL, "the flag without attributes is refused");
        e = (struct pack_entry){ .type = PACK_FILE, .name = "D/e", .name_len = 3, .xattrs = x,
                                 .xattrs_len = (uint16_t)xl };
        is_int(pack_append(&w, &e, &p), -EINVAL, "attributes without the flag are refused");
        pack_writer_hash(&w, hash);
        pack_reader_init(&r, w.buf, w.len, 2);
        ok(pack_next(&r, &e) == PACK_ENTRY && e.type == PACK_DIR && e.xattrs_len == xl &&
           memcmp(e.xattrs, x, xl) == 0 && e.data == NULL, "the directory read back, its attributes");
        ok(pack_next(&r, &e) == PACK_ENTRY && e.type == PACK_FILE && e.xattrs_len == xl && e.size == 4 &&
           memcmp(e.data, "data", 4) == 0, "the file, its attributes and then its data");
        is_int(pack_check(w.buf, w.len, 2, hash, &why), 0, "pack_check passes it");
        /* The hash covers them: another value, another hash. */
        w.buf[PACK_RECORD_HEADER + 5 + xl - 1] ^= 1;
        pack_reader_init(&r, w.buf, w.len, 2);
        while (pack_next(&r, &e) == PACK_ENTRY)
                ;
        pack_reader_hash(&r, hash2);
        ok(memcmp(hash, hash2, sizeof(hash)) != 0, "the pack hash covers the attributes");
        is_int(pack_check(w.buf, w.len, 2, hash, &why), -EBADMSG, "so pack_check refuses them changed");
        w.buf[PACK_RECORD_HEADER + 5 + xl - 1] ^= 1;
        /* As a hostile sender might write them. */
        w.buf[PACK_RECORD_HEADER + 5] = 0;     /* a record with an empty name */
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), -EBADMSG, "malformed records are refused");
        ok(r.why && strstr(r.why, "attributes"), "... and says so: %s", r.why ? r.why : "(none)");
        w.buf[PACK_RECORD_HEADER + 5] = 6;
        w.buf[PACK_RECORD_HEADER + 3] = 0xff;
        w.buf[PACK_RECORD_HEADER + 4] = 0xff;
        pack_reader_init(&r, w.buf, w.len, 2);
        is_int(pack_next(&r, &e), -EBADMSG, "a length past the pack's end is refused");
        pack_writer_deinit(&w);
}

int main(void)
{
        test_round_trip();
        test_writer_limits();
        test_malformed();
        test_links();
        test_hard_links();
        test_index();
        test_xattrs();
        return done_testing();
}
