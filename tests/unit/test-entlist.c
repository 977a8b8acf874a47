/* A relay's list of a tree's entries (common/entlist.h): round trips, spans, and every malformed record. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "entlist.h"
#include "macro.h"
#include "name.h"
#include "pack.h"
#include "tap.h"
#include "wire.h"

static int put(struct entlist *l, uint8_t type, const char *name, uint32_t mode, uint64_t mtime, uint64_t size,
               const char *target)
{
        struct entlist_entry e = { .type = type, .mode = mode, .mtime_ns = mtime, .size = size, .name = name,
                                   .name_len = strlen(name), .target = target };

        return entlist_put(l, &e);
}

/* DEST/d, DEST/d/f (1 MiB, 0640, an mtime to the ns), DEST/l -> d/f. */
static void sample(struct entlist *l)
{
        *l = ENTLIST_NULL;
        ok(put(l, PACK_DIR, "DEST/d", 0755, 0, 0, NULL) == 0 &&
           put(l, PACK_FILE, "DEST/d/f", 0640, 1049000000123456789ull, 1u << 20, NULL) == 0 &&
           put(l, PACK_LINK, "DEST/l", 0, 7, 3, "d/f") == 0, "three entries listed");
}

static void test_round_trip(void)
{
        struct entlist l;
        struct entlist_entry e;
        size_t off = 0;

        sample(&l);
        is_int((long long)l.len, 3 * ENTLIST_HEADER + 6 + 8 + 6 + 3, "headers, names and the target, nothing else");
        is_int(entlist_next(l.buf, l.len, &off, &e), 1, "the first");
        ok(e.type == PACK_DIR && e.name_len == 6 && memcmp(e.name, "DEST/d", 6) == 0 && e.mode == 0755 &&
           e.size == 0 && !e.target, "a directory");
        is_int(entlist_next(l.buf, l.len, &off, &e), 1, "the second");
        ok(e.type == PACK_FILE && memcmp(e.name, "DEST/d/f", 8) == 0 && e.mode == 0640 &&
           e.mtime_ns == 1049000000123456789ull && e.size == 1u << 20 && !e.target,
           "a file: its length, mode and mtime; no data");
        is_int(entlist_next(l.buf, l.len, &off, &e), 1, "the third");
        ok(e.type == PACK_LINK && e.size == 3 && e.target && memcmp(e.target, "d/f", 3) == 0 && e.mtime_ns == 7,
           "a symlink with its target");
        is_int(entlist_next(l.buf, l.len, &off, &e), 0, "then the end");
        ok(off == l.len, "at the list's end");
        entlist_free(&l);
        ok(l.buf == NULL && l.len == 0 && l.cap == 0, "freed");
}

static void test_span(void)
{
        struct entlist l;

        sample(&l);
        is_int(entlist_span(l.buf, l.len, 0), 0, "no entries take no bytes");
        is_int(entlist_span(l.buf, l.len, 1), ENTLIST_HEADER + 6, "the first");
        is_int(entlist_span(l.buf, l.len, 2), 2 * ENTLIST_HEADER + 14, "the first two");
        is_int(entlist_span(l.buf, l.len, 3), (long long)l.len, "all three");
        is_int(entlist_span(l.buf, l.len, 4), -EBADMSG, "four: the list holds fewer");
        {
                bool all = true;

                for (size_t cut = 1; cut < l.len; cut++)
                        all &= entlist_span(l.buf, cut, 3) == -EBADMSG;
                ok(all, "a list cut short anywhere does not span its entries");
        }
        is_int(entlist_span(NULL, 0, 0), 0, "an empty list spans none");
        entlist_free(&l);
}

static void test_refused(void)
{
        struct entlist l = ENTLIST_NULL;
        char longname[WIRE_PATH_MAX + 2];
        char *target = malloc(NAME_LINK_MAX + 1);

        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        memset(target, 't', NAME_LINK_MAX + 1);
        is_int(put(&l, 0, "DEST/x", 0, 0, 0, NULL), -EINVAL, "type 0 refused");
        is_int(put(&l, 4, "DEST/x", 0, 0, 0, NULL), -EINVAL, "type 4 refused");
        is_int(put(&l, PACK_FILE, "", 0, 0, 0, NULL), -EINVAL, "an empty name refused");
        is_int(put(&l, PACK_FILE, longname, 0, 0, 0, NULL), -EINVAL, "a name of %d bytes refused", WIRE_PATH_MAX + 1);
        longname[WIRE_PATH_MAX] = '\0';
        is_int(put(&l, PACK_FILE, longname, 0, 0, 0, NULL), 0, "one of %d bytes listed", WIRE_PATH_MAX);
        is_int(put(&l, PACK_DIR, "DEST/x", 0, 0, 1, NULL), -EINVAL, "a directory with a size refused");
        is_int(put(&l, PACK_LINK, "DEST/x", 0, 0, 1, NULL), -EINVAL, "a symlink without its target refused");
        is_int(put(&l, PACK_LINK, "DEST/x", 0, 0, 0, ""), -EINVAL, "a symlink to nothing refused");
        is_int(put(&l, PACK_LINK, "DEST/x", 0, 0, NAME_LINK_MAX + 1, target), -EINVAL,
               "a target of %d bytes refused", NAME_LINK_MAX + 1);
        is_int(put(&l, PACK_LINK, "DEST/x", 0, 0, NAME_LINK_MAX, target), 0, "one of %d bytes listed",
               NAME_LINK_MAX);
        is_int(entlist_span(l.buf, l.len, 2), (long long)l.len, "what was refused left nothing behind");
        free(target);
        entlist_free(&l);
}

/* Each header field made what entlist_put() never writes. */
static void test_malformed(void)
{
        struct entlist l;
        struct entlist_entry e;
        uint8_t *bad;
        size_t off;
        uint16_t u16;
        uint64_t u64;

        sample(&l);
        bad = malloc(l.len);
        /* The third record (the symlink) starts at 2 headers and 14 bytes of names. */
        const size_t third = 2 * ENTLIST_HEADER + 14;
        struct {
                size_t at;
                int what;       /* 0 type, 1 zero, 2 name_len, 3 size */
                uint64_t v;
                const char *why;
        } cases[] = {
                { 0, 0, 0, "type 0" },
                { 0, 0, 9, "type 9" },
                { 0, 1, 1, "the reserved byte set" },
                { 0, 2, 0, "a name of 0 bytes" },
                { 0, 2, WIRE_PATH_MAX + 1, "a name longer than WIRE_PATH_MAX" },
                { 0, 2, 200, "a name past the list's end" },
                { 0, 3, 5, "a directory with a size" },
                { third, 3, 0, "a symlink of no target" },
                { third, 3, NAME_LINK_MAX + 1, "a target longer than NAME_LINK_MAX" },
                { third, 3, 4, "a target past the list's end" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                memcpy(bad, l.buf, l.len);
                switch (cases[i].what) {
                case 0:
                        bad[cases[i].at] = (uint8_t)cases[i].v;
                        break;
                case 1:
                        bad[cases[i].at + 1] = (uint8_t)cases[i].v;
                        break;
                case 2:
                        u16 = (uint16_t)cases[i].v;
                        memcpy(bad + cases[i].at + 2, &u16, sizeof(u16));
                        break;
                default:
                        u64 = cases[i].v;
                        memcpy(bad + cases[i].at + 16, &u64, sizeof(u64));
                        break;
                }
                /* Walked to where it breaks, never reading past the list (ASan). */
                off = 0;
                while (entlist_next(bad, l.len, &off, &e) == 1)
                        ;
                is_int(entlist_span(bad, l.len, 3), -EBADMSG, "%s: malformed", cases[i].why);
        }
        free(bad);
        entlist_free(&l);
}

/* A hard link: a link's record with PACK_F_HARD, its file's name as its target. */
static void test_hard_link(void)
{
        struct entlist l = ENTLIST_NULL;
        struct entlist_entry e = { .type = PACK_LINK, .flags = PACK_F_HARD, .name = "DEST/h", .name_len = 6,
                                   .size = 8, .target = "DEST/d/f" };
        size_t off = 0;

        is_int(entlist_put(&l, &e), 0, "a hard link listed");
        e.type = PACK_FILE;
        is_int(entlist_put(&l, &e), -EINVAL, "the flag on a file's record refused");
        e = (struct entlist_entry){ .type = PACK_LINK, .flags = 0x80, .name = "DEST/h", .name_len = 6, .size = 1,
                                    .target = "x" };
        is_int(entlist_put(&l, &e), -EINVAL, "an unknown flag refused");
        is_int(entlist_next(l.buf, l.len, &off, &e), 1, "read back");
        ok(e.type == PACK_LINK && e.flags == PACK_F_HARD && e.size == 8 && memcmp(e.target, "DEST/d/f", 8) == 0,
           "with its flag and its file's name");
        l.buf[1] = 0x80;
        off = 0;
        is_int(entlist_next(l.buf, l.len, &off, &e), -EBADMSG, "an unknown flag is malformed");
        entlist_free(&l);
}

int main(void)
{
        test_round_trip();
        test_span();
        test_refused();
        test_malformed();
        test_hard_link();
        done_testing();
}
