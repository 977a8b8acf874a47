/* allow_peers: CIDR parsing and matching, IPv4, IPv6 and v4-mapped peers. */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

#include "acl.h"
#include "tap.h"

/* Does @list allow the peer with numeric address @addr? */
static bool allows(const char *list, const char *addr)
{
        struct acl acl;
        char bad[64];
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(7470) };
        struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(7470) };

        if (acl_parse(&acl, list, bad, sizeof(bad)) < 0)
                return false;
        if (inet_pton(AF_INET, addr, &sin.sin_addr) == 1)
                return acl_allows(&acl, (struct sockaddr *)&sin);
        if (inet_pton(AF_INET6, addr, &sin6.sin6_addr) == 1)
                return acl_allows(&acl, (struct sockaddr *)&sin6);
        return false;
}

static void expect_bad(const char *list, int err, const char *token)
{
        struct acl acl;
        char bad[64] = "unset";
        int r = acl_parse(&acl, list, bad, sizeof(bad));

        if (!ok(r == err && !strcmp(bad, token) && acl.n == 0, "'%s' is refused, blaming '%s'", list, token))
                diag("r=%d bad='%s' n=%zu", r, bad, acl.n);
}

static void test_parse(void)
{
        struct acl acl;
        char bad[64];
        uint8_t want[16] = { 10 };

        is_int(acl_parse(&acl, "", bad, sizeof(bad)), 0, "empty list parses");
        is_int(acl.n, 0, "to no entries");
        is_int(acl_parse(&acl, " ,\t, ", bad, sizeof(bad)), 0, "separators only");
        is_int(acl_parse(&acl, NULL, bad, sizeof(bad)), 0, "NULL list");

        is_int(acl_parse(&acl, "10.1.2.3/8", bad, sizeof(bad)), 0, "10.1.2.3/8 parses");
        ok(acl.n == 1 && acl.entries[0].family == AF_INET && acl.entries[0].prefix == 8 &&
           memcmp(acl.entries[0].addr, want, 16) == 0, "host bits are masked to 10.0.0.0/8");

        is_int(acl_parse(&acl, "192.0.2.1, 2001:db8::/32 ,fe80::1/10\t198.51.100.0/24", bad, sizeof(bad)), 0,
               "mixed list with comma, space and tab separators");
        is_int(acl.n, 4, "four entries");
        ok(acl.entries[0].prefix == 32 && acl.entries[1].family == AF_INET6 && acl.entries[1].prefix == 32,
           "bare address is a /32; v6 prefix kept");
        ok(acl.entries[2].addr[0] == 0xfe && acl.entries[2].addr[1] == 0x80 && acl.entries[2].addr[15] == 0,
           "fe80::1/10 masked to fe80::");

        is_int(acl_parse(&acl, "::ffff:10.0.0.0/104", bad, sizeof(bad)), 0, "v4-mapped entry parses");
        ok(acl.n == 1 && acl.entries[0].family == AF_INET && acl.entries[0].prefix == 8,
           "and is stored as the IPv4 10.0.0.0/8");

        expect_bad("10.0.0.0/33", -EINVAL, "10.0.0.0/33");
        expect_bad("::/129", -EINVAL, "::/129");
        expect_bad("10.0.0.0/", -EINVAL, "10.0.0.0/");
        expect_bad("10.0.0.0/-1", -EINVAL, "10.0.0.0/-1");
        expect_bad("10.0.0.0/8x", -EINVAL, "10.0.0.0/8x");
        expect_bad("10.0.0.0/+8", -EINVAL, "10.0.0.0/+8");
        expect_bad("10.0.0.0/99999999999", -EINVAL, "10.0.0.0/99999999999");
        expect_bad("192.0.2.1, host.example", -EINVAL, "host.example");
        expect_bad("10.0.0.256", -EINVAL, "10.0.0.256");
        expect_bad("1.2.3", -EINVAL, "1.2.3");
        expect_bad("10.0.0.0/8/8", -EINVAL, "10.0.0.0/8/8");
        expect_bad("/8", -EINVAL, "/8");
        expect_bad("fe80::1%eth0", -EINVAL, "fe80::1%eth0");

        char longtok[200];
        memset(longtok, '1', sizeof(longtok) - 1);
        longtok[sizeof(longtok) - 1] = '\0';
        is_int(acl_parse(&acl, longtok, bad, sizeof(bad)), -EINVAL, "an over-long token is refused");
        is_int(strlen(bad), sizeof(bad) - 1, "and the blamed token is truncated to fit");

        is_int(acl_parse(&acl, "10.0.0.0/0", bad, sizeof(bad)), 0, "prefix 0 is allowed");
        is_int(acl_parse(&acl, "::1/128, 10.0.0.1/32, 10.0.0.0/008", bad, sizeof(bad)), 0, "maximum prefixes");

        char list[64 * 16 + 32] = "";
        for (int i = 0; i < ACL_MAX; i++) {
                char one[20];

                snprintf(one, sizeof(one), "10.0.%d.0/24,", i);
                strcat(list, one);
        }
        is_int(acl_parse(&acl, list, bad, sizeof(bad)), 0, "%d entries fit", ACL_MAX);
        is_int(acl.n, ACL_MAX, "all kept");
        strcat(list, "10.1.0.0/16");
        is_int(acl_parse(&acl, list, bad, sizeof(bad)), -E2BIG, "%d entries is -E2BIG", ACL_MAX + 1);
        is_int(acl.n, 0, "and leaves the list empty");

        is_int(acl_parse(&acl, "10.0.0.0/33", NULL, 0), -EINVAL, "no buffer for the bad token is fine");
}

static void test_match(void)
{
        ok(allows("", "203.0.113.9"), "empty list allows IPv4");
        ok(allows("", "2001:db8::9"), "empty list allows IPv6");

        ok(allows("10.0.0.0/8", "10.255.1.2"), "10/8 allows 10.255.1.2");
        ok(!allows("10.0.0.0/8", "11.0.0.1"), "10/8 denies 11.0.0.1");
        ok(!allows("10.0.0.0/8", "9.255.255.255"), "10/8 denies 9.255.255.255");
        ok(allows("10.0.0.0/25", "10.0.0.127"), "/25: last address inside");
        ok(!allows("10.0.0.0/25", "10.0.0.128"), "/25: first address outside");
        ok(allows("10.0.0.0/31", "10.0.0.1"), "/31 pair");
        ok(!allows("10.0.0.0/31", "10.0.0.2"), "/31 stops there");
        ok(allows("192.0.2.7", "192.0.2.7"), "bare address matches itself");
        ok(!allows("192.0.2.7", "192.0.2.8"), "and nothing else");
        ok(allows("128.0.0.0/1", "255.1.1.1") && !allows("128.0.0.0/1", "127.255.255.255"), "/1");
        ok(allows("0.0.0.0/0", "1.2.3.4"), "0/0 allows any IPv4");
        ok(!allows("0.0.0.0/0", "2001:db8::1"), "but no IPv6");

        ok(allows("10.0.0.0/8", "::ffff:10.1.2.3"), "v4-mapped peer matches an IPv4 entry");
        ok(!allows("10.0.0.0/8", "::ffff:11.1.2.3"), "v4-mapped peer outside is denied");
        ok(allows("::ffff:10.0.0.0/104", "10.9.9.9"), "v4-mapped entry matches a plain IPv4 peer");
        ok(!allows("10.0.0.0/8", "::a01:203"), "IPv4-compatible (not mapped) v6 is not IPv4");

        ok(allows("2001:db8::/32", "2001:db8:ffff::1"), "2001:db8::/32 inside");
        ok(!allows("2001:db8::/32", "2001:db9::1"), "2001:db8::/32 outside");
        ok(!allows("2001:db8::/32", "10.0.0.1"), "IPv6 entry denies IPv4 peer");
        ok(allows("fe80::/10", "febf::1") && !allows("fe80::/10", "fec0::1"), "fe80::/10 bit boundary");
        ok(allows("::1", "::1") && !allows("::1", "::2"), "::1/128");
        ok(allows("::/0", "2001:db8::1"), "::/0 allows any IPv6");
        ok(allows("10.0.0.0/8, fd00::/8", "fd12::1") && allows("10.0.0.0/8, fd00::/8", "10.0.0.1"),
           "mixed list allows both families");

        struct acl acl;
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        acl_parse(&acl, "0.0.0.0/0, ::/0", NULL, 0);
        ok(!acl_allows(&acl, (struct sockaddr *)&sun), "non-IP peer is denied by a non-empty list");
        ok(!acl_allows(&acl, NULL), "no address is denied");
}

/* The same address whatever its form; ports aside. */
static void test_same_addr(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(1) };
        struct sockaddr_in6 b = { .sin6_family = AF_INET6, .sin6_port = htons(2) };

        inet_pton(AF_INET, "198.18.0.2", &a.sin_addr);
        inet_pton(AF_INET6, "::ffff:198.18.0.2", &b.sin6_addr);
        ok(acl_same_addr((struct sockaddr *)&a, (struct sockaddr *)&b), "IPv4 and its ::ffff: form, other ports");
        inet_pton(AF_INET6, "::ffff:198.18.0.3", &b.sin6_addr);
        ok(!acl_same_addr((struct sockaddr *)&a, (struct sockaddr *)&b), "another address");
        ok(!acl_same_addr((struct sockaddr *)&a, NULL), "NULL is no address");
}

int main(void)
{
        test_parse();
        test_match();
        test_same_addr();
        return done_testing();
}
