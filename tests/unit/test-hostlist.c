/*
 * Slurm hostlist expansion (common/hostlist.c).
 *
 * Where the expected values come from: every "slurm" case below is what
 * Slurm 22.05.8's `scontrol show hostnames LIST` printed (Debian bookworm's
 * slurm-client 22.05.8-4+deb12u3, unpacked and run against a two-line
 * slurm.conf; no controller is needed), one host per line, joined here by
 * spaces. Slurm's "Invalid hostlist" is an error here too. The "stricter"
 * cases are inputs where Slurm guesses and we refuse: Slurm's own output is
 * in the comment beside each. The "suffix" cases go past Slurm 22.05,
 * which refuses text after the last group ("Invalid hostlist"): names as
 * sites write their fabric's, as ClusterShell's nodeset and pdsh take
 * them, in the same order as without the suffix.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "hostlist.h"
#include "macro.h"
#include "tap.h"

struct joined {
        char buf[4096];
        size_t len;
        size_t calls;
};

static int join(const char *name, size_t len, void *userdata)
{
        struct joined *j = userdata;

        if (strlen(name) != len)
                return -EIO;
        j->calls++;
        if (j->len + len + 2 > sizeof(j->buf))
                return 0;
        if (j->len)
                j->buf[j->len++] = ' ';
        memcpy(j->buf + j->len, name, len + 1);
        j->len += len;
        return 0;
}

/* @list expands to exactly @want (names joined by one space). */
static void expands(const char *list, const char *want)
{
        struct joined j = {};
        size_t n = 99;
        int r = hostlist_foreach(list, join, &j, &n, NULL);

        if (!ok(r == 0 && n == j.calls && strcmp(j.buf, want) == 0, "'%s' -> %s", list, want))
                diag("r=%d n=%zu calls=%zu got '%s'", r, n, j.calls, j.buf);
}

/* @list (too long to show) is valid and expands to @want names. */
static void expands_count(const char *list, size_t want)
{
        size_t n = 0;
        int r = hostlist_foreach(list, NULL, NULL, &n, NULL);

        ok(r == 0 && n == want, "a list of %zu bytes -> %zu names (got %d, %zu)", strlen(list), want, r, n);
}

/* @list for a TAP line: 40 bytes at most, control and non-ASCII bytes as '?'. */
static const char *shown(const char *list)
{
        static char buf[41];
        size_t i;

        for (i = 0; list[i] && i < sizeof(buf) - 1; i++)
                buf[i] = (unsigned char)list[i] < 0x20 || (unsigned char)list[i] > 0x7e ? '?' : list[i];
        buf[i] = '\0';
        return buf;
}

/* @list is refused with @err and @problem at [@offset, +@len), and @fn never runs. */
static void refused(const char *list, int err, enum hostlist_problem problem, size_t offset,
                    size_t len)
{
        struct hostlist_error e;
        struct joined j = {};
        size_t n = 99;
        int r = hostlist_foreach(list, join, &j, &n, &e);

        if (!ok(r == err && e.problem == problem && e.offset == offset && e.len == len &&
                j.calls == 0 && n == 99,
                "'%s' is refused: %s at %zu+%zu", shown(list), hostlist_problem_str(problem), offset, len))
                diag("r=%d problem=%d (%s) offset=%zu len=%zu calls=%zu", r, e.problem,
                     hostlist_problem_str(e.problem), e.offset, e.len, j.calls);
}

static void test_slurm(void)
{
        /* Bracket ranges and lists, comma lists, leading zeros. */
        expands("node[1-3,20]", "node1 node2 node3 node20");
        expands("node[08-11]", "node08 node09 node10 node11");
        expands("node[008-11]", "node008 node009 node010 node011");
        expands("node[1-010]", "node1 node2 node3 node4 node5 node6 node7 node8 node9 node10");
        expands("node[9-10]", "node9 node10");
        expands("node[09-10]", "node09 node10");
        expands("n[000-2]", "n000 n001 n002");
        expands("n[10-12,011]", "n10 n11 n12 n011");
        expands("n[1]", "n1");
        expands("n[0]", "n0");
        expands("n[1-1]", "n1");
        expands("[1-3]", "1 2 3");
        expands("n[01-03,7],rack[1-2]-n[1-2]", "n01 n02 n03 n7 rack1-n1 rack1-n2 rack2-n1 rack2-n2");
        /* Separators: ',', ' ', '\t', runs of them, at either end. */
        expands("a,,b", "a b");
        expands(",a", "a");
        expands("a b\tc", "a b c");
        expands("n[01-2], x y", "n01 n02 x y");
        expands("n[1],[2]", "n1 2");
        expands("", "");
        expands(" ,\t", "");
        /* Plain names stay as they are; duplicates stay. */
        expands("foo", "foo");
        expands("foo01,foo1", "foo01 foo1");
        expands("n[1-2],n[2-3]", "n1 n2 n2 n3");
        /* Several groups in one name: the cartesian product, in Slurm's order. */
        expands("rack[1-2]-node[1-3]",
                "rack1-node1 rack1-node2 rack1-node3 rack2-node1 rack2-node2 rack2-node3");
        expands("n[1-2][3-4]", "n13 n14 n23 n24");
        expands("x[1-2]y[3]", "x1y3 x2y3");
        expands("a-[1-2]-b[1]", "a-1-b1 a-2-b1");
        expands("n[1-2,5]x[7,9-10]", "n1x7 n1x9 n1x10 n2x7 n2x9 n2x10 n5x7 n5x9 n5x10");
        /* Three and four groups: not row order; the last fastest, then the first. */
        expands("a[1-2]b[3-4]c[5-6]", "a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 a1b4c6 a2b4c5 a2b4c6");
        expands("a[1-2]b[3-4]c[5-6]d[7-8]",
                "a1b3c5d7 a1b3c5d8 a2b3c5d7 a2b3c5d8 a1b4c5d7 a1b4c5d8 a2b4c5d7 a2b4c5d8 "
                "a1b3c6d7 a1b3c6d8 a2b3c6d7 a2b3c6d8 a1b4c6d7 a1b4c6d8 a2b4c6d7 a2b4c6d8");
        /* Numbers up to 2^64 - 1. */
        expands("n[18446744073709551615]", "n18446744073709551615");
        expands("n[4294967295-4294967296]", "n4294967295 n4294967296");

        /* Slurm's "Invalid hostlist" (and its _parse_single_range errors). */
        refused("n[3-1]", -EINVAL, HOSTLIST_REVERSED, 2, 3);
        refused("n[]", -EINVAL, HOSTLIST_EMPTY_ITEM, 2, 0);
        refused("n[1,,2]", -EINVAL, HOSTLIST_EMPTY_ITEM, 4, 0);
        refused("n[-1]", -EINVAL, HOSTLIST_EMPTY_ITEM, 2, 2);
        refused("n[a-b]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 3);
        refused("n[1-2-3]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 5);
        refused("n[0x1]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 3);
        refused("n[1 ]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 2);
        refused("n[[1-2]]", -EINVAL, HOSTLIST_NESTED, 2, 1);
        refused("n[1-2]]", -EINVAL, HOSTLIST_UNOPENED, 6, 1);
        /* Slurm: "Too many hosts in range `0-65536'"; 0-65535 is its largest. */
        refused("n[0-65536]", -E2BIG, HOSTLIST_TOO_MANY, 2, 7);
        /* The whole list is refused, even when the bad part comes last. */
        refused("a,b,c[2-1]", -EINVAL, HOSTLIST_REVERSED, 6, 3);
}

static void test_suffix(void)
{
        char name[HOSTLIST_NAME_MAX + 16];

        expands("node[01-04]-ib", "node01-ib node02-ib node03-ib node04-ib");
        expands("n[1-2].ib", "n1.ib n2.ib");
        expands("node[1-2].ib,x", "node1.ib node2.ib x");
        expands("node[9-10]-ib0", "node9-ib0 node10-ib0");
        expands("[1-2]-ib", "1-ib 2-ib");
        expands("n[1-2];x", "n1;x n2;x");
        expands("node[01-02]-ib,login1-ib gpu[7]-ib", "node01-ib node02-ib login1-ib gpu7-ib");
        /* Several groups, then text: the order is the groups' alone. */
        expands("rack[1-2]-node[01-02]-ib0", "rack1-node01-ib0 rack1-node02-ib0 rack2-node01-ib0 rack2-node02-ib0");
        expands("a[1-2]b[3-4]c[5-6]-ib",
                "a1b3c5-ib a1b3c6-ib a2b3c5-ib a2b3c6-ib a1b4c5-ib a1b4c6-ib a2b4c5-ib a2b4c6-ib");
        /* The other rules hold after the last group too. */
        refused("n[1-2]-ib]", -EINVAL, HOSTLIST_UNOPENED, 9, 1);
        refused("n[1-2]-ib[", -EINVAL, HOSTLIST_UNCLOSED, 9, 1);
        refused("n[1-2]-ib[3-1]", -EINVAL, HOSTLIST_REVERSED, 10, 3);
        refused("n[1-2]-\x01", -EINVAL, HOSTLIST_BAD_CHAR, 7, 1);
        refused("n[1-2]-caf\xc3\xa9", -EINVAL, HOSTLIST_BAD_CHAR, 10, 1);
        refused("n[0-65536]-ib", -E2BIG, HOSTLIST_TOO_MANY, 2, 7);
        /* The suffix counts in a name's length: 248 + 2 + 3 bytes fit, one more does not. */
        memset(name, 'a', 248);
        strcpy(name + 248, "[10-11]-ib");
        expands_count(name, 2);
        memset(name, 'a', 249);
        strcpy(name + 249, "[10-11]-ib");
        refused(name, -ENAMETOOLONG, HOSTLIST_NAME_TOO_LONG, 0, 259);
}

static void test_stricter(void)
{
        refused("n[1-3", -EINVAL, HOSTLIST_UNCLOSED, 1, 4);                     /* Slurm: n] */
        refused("n1-3]", -EINVAL, HOSTLIST_UNOPENED, 4, 1);                     /* Slurm: n1-3] */
        refused("a]b[1-2]", -EINVAL, HOSTLIST_UNOPENED, 1, 1);                  /* Slurm: a]b1 a]b2 */
        refused("a[b[1-2]", -EINVAL, HOSTLIST_NESTED, 3, 1);                    /* Slurm: a[b1 a[b2 */
        refused("n[1-]", -EINVAL, HOSTLIST_EMPTY_ITEM, 2, 2);                   /* Slurm: n1 */
        refused("n[ 1]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 2);                 /* Slurm: n01 */
        refused("n[+1]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 2, 2);                 /* Slurm: n01 */
        refused("n[1, 2]", -EINVAL, HOSTLIST_NOT_A_NUMBER, 4, 2);               /* Slurm: n1 n02 */
        refused("n[99999999999999999999]", -ERANGE, HOSTLIST_NUMBER_TOO_BIG, 2, 20);
                                                        /* Slurm: n18446744073709551615 */
        refused("a,b\nc", -EINVAL, HOSTLIST_BAD_CHAR, 3, 1);                    /* Slurm: a, "b\nc" */
        refused("caf\xc3\xa9", -EINVAL, HOSTLIST_BAD_CHAR, 3, 1);
        refused("x\x1b[2J", -EINVAL, HOSTLIST_BAD_CHAR, 1, 1);
}

static void test_bounds(void)
{
        char name[HOSTLIST_NAME_MAX + 16], list[2048];
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        struct hostlist_error e;
        size_t n;

        /* The longest relay chain xferctl sends (CTL_NODES_MAX): the
         * list itself holds more; xferctl refuses a chain past it. */
        ok(hostlist_new(&hl, "node[001-512]", NULL) == 0 && hl->n == CTL_NODES_MAX &&
           strcmp(hl->names[0], "node001") == 0 && strcmp(hl->names[511], "node512") == 0,
           "node[001-512] is 512 hosts, node001 .. node512: the longest chain");
        hostlist_free(TAKE_PTR(hl));
        ok(hostlist_new(&hl, "node[001-513]", NULL) == 0 && hl->n == CTL_NODES_MAX + 1 &&
           strcmp(hl->names[512], "node513") == 0, "node[001-513] is 513: one more than a chain takes");
        hostlist_free(TAKE_PTR(hl));

        /* The largest list: Slurm prints the same 65536 names. */
        ok(hostlist_new(&hl, "n[0-65535]", NULL) == 0 && hl->n == HOSTLIST_MAX &&
           strcmp(hl->names[0], "n0") == 0 && strcmp(hl->names[65535], "n65535") == 0,
           "n[0-65535] is 65536 hosts, n0 .. n65535");
        hostlist_free(TAKE_PTR(hl));

        /* Past the cap by products and by sums; Slurm printed all 90000 of the first. */
        refused("r[1-300]-n[1-300]", -E2BIG, HOSTLIST_TOO_MANY, 0, 17);
        refused("a[1-65535],b[1-2]", -E2BIG, HOSTLIST_TOO_MANY, 11, 6);
        refused("a[0-65535],b", -E2BIG, HOSTLIST_TOO_MANY, 11, 1);
        refused("n[1-40000,1-40000]", -E2BIG, HOSTLIST_TOO_MANY, 1, 17);
        refused("n[0-18446744073709551615]", -E2BIG, HOSTLIST_TOO_MANY, 2, 22);
        ok(hostlist_foreach("a[1-256]b[1-256]", NULL, NULL, &n, NULL) == 0 && n == 65536,
           "a[1-256]b[1-256] is 65536 hosts, counted without a callback");

        /* Names: 253 bytes fit, 254 do not, whether typed or expanded. */
        memset(name, 'a', HOSTLIST_NAME_MAX);
        name[HOSTLIST_NAME_MAX] = '\0';
        ok(hostlist_new(&hl, name, NULL) == 0 && hl->n == 1 && strlen(hl->names[0]) == 253,
           "a 253-byte name");
        hostlist_free(TAKE_PTR(hl));
        name[HOSTLIST_NAME_MAX] = 'a';
        name[HOSTLIST_NAME_MAX + 1] = '\0';
        refused(name, -ENAMETOOLONG, HOSTLIST_NAME_TOO_LONG, 0, 254);
        /* An expanded name is as long as its longest number makes it. */
        memset(name, 'a', 252);
        strcpy(name + 251, "[9-10]");
        ok(hostlist_foreach(name, NULL, NULL, &n, &e) == 0 && n == 2, "251 bytes + [9-10] fit");
        memset(name, 'a', 252);
        strcpy(name + 252, "[8-9]");
        ok(hostlist_foreach(name, NULL, NULL, &n, &e) == 0 && n == 2, "252 bytes + [8-9] fit");
        strcpy(name + 252, "[9-10]");
        refused(name, -ENAMETOOLONG, HOSTLIST_NAME_TOO_LONG, 0, 258);
        strcpy(name + 252, "[08-9]");
        refused(name, -ENAMETOOLONG, HOSTLIST_NAME_TOO_LONG, 0, 258);

        /* More groups than a name has room for: refused, not overflowed. */
        list[0] = '\0';
        for (int i = 0; i < 300; i++)
                strcat(list, "[1]");
        refused(list, -ENAMETOOLONG, HOSTLIST_NAME_TOO_LONG, 0, 759);
}

static int stop_at_two(const char *name _unused_, size_t len _unused_, void *userdata)
{
        int *calls = userdata;

        return ++*calls == 2 ? -ECANCELED : 0;
}

static void test_api(void)
{
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        struct hostlist_error e;
        int calls = 0;

        ok(hostlist_new(&hl, "n[1-3],m", NULL) == 0 && hl->n == 4 &&
           strcmp(hl->names[0], "n1") == 0 && strcmp(hl->names[3], "m") == 0,
           "hostlist_new: n1 n2 n3 m");
        hostlist_free(TAKE_PTR(hl));
        ok(hostlist_new(&hl, "", NULL) == 0 && hl->n == 0, "hostlist_new: an empty list");
        hostlist_free(TAKE_PTR(hl));
        ok(hostlist_new(&hl, "n[2-1]", &e) == -EINVAL && !hl && e.problem == HOSTLIST_REVERSED,
           "hostlist_new: an error leaves nothing behind");
        ok(hostlist_foreach("a,b,c", stop_at_two, &calls, NULL, NULL) == -ECANCELED && calls == 2,
           "a callback's error stops the walk and is returned");
        for (int p = HOSTLIST_OK; p <= HOSTLIST_NAME_TOO_LONG; p++)
                if (strcmp(hostlist_problem_str((enum hostlist_problem)p), "unknown problem") == 0)
                        ok(false, "problem %d has a text", p);
        ok(strstr(hostlist_problem_str(HOSTLIST_TOO_MANY), "65536") != NULL,
           "the text of HOSTLIST_TOO_MANY names the cap");
}

int main(void)
{
        test_slurm();
        test_suffix();
        test_stricter();
        test_bounds();
        test_api();
        return done_testing();
}
