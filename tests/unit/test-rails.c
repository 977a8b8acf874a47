/* Rails: subnets, netmasks, and how a transfer's lanes are spread over a
 * node's rails and a peer's (common/rails.c). */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "rails.h"
#include "tap.h"

static struct sockaddr_storage addr(const char *s)
{
        struct sockaddr_storage ss;

        memset(&ss, 0, sizeof(ss));
        if (inet_pton(AF_INET, s, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
                ss.ss_family = AF_INET;
        else if (inet_pton(AF_INET6, s, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
                ss.ss_family = AF_INET6;
        return ss;
}

static bool same(const char *a, const char *b, unsigned int prefix)
{
        struct sockaddr_storage x = addr(a), y = addr(b);

        return rails_same_subnet((struct sockaddr *)&x, (struct sockaddr *)&y, prefix);
}

static unsigned int prefix(const char *mask)
{
        struct sockaddr_storage m = addr(mask);

        return rails_prefix_of((struct sockaddr *)&m);
}

static void test_subnets(void)
{
        ok(same("198.18.0.1", "198.18.0.2", 24), "one /24");
        ok(!same("198.18.0.1", "198.18.1.2", 24), "two /24s");
        ok(same("198.18.0.1", "198.18.1.2", 23), "one /23 holds both");
        ok(same("10.0.0.1", "10.0.0.14", 28) && !same("10.0.0.1", "10.0.0.17", 28), "a /28's edge");
        ok(!same("198.18.0.1", "198.18.0.1", 0), "prefix 0 (not known) pairs nothing");
        ok(!same("198.18.0.1", "fd00::1", 24), "families differ");
        ok(same("fd00:1::1", "fd00:1::2", 64) && !same("fd00:1::1", "fd00:2::1", 64), "IPv6 /64");
        ok(!same("198.18.0.1", "198.18.0.1", 33), "a prefix longer than the address");
        ok(prefix("255.255.255.0") == 24 && prefix("255.255.254.0") == 23 && prefix("255.255.255.255") == 32 &&
           prefix("0.0.0.0") == 0, "IPv4 netmasks");
        ok(prefix("ffff:ffff:ffff:ffff::") == 64, "an IPv6 netmask");
}

static void test_pairs(void)
{
        struct rails_local two[2] = {
                { .addr = addr("198.18.0.1"), .prefix = 24, .up = true },
                { .addr = addr("198.18.1.1"), .prefix = 24, .up = true },
        };
        struct sockaddr_storage peer2[2] = { addr("198.18.0.2"), addr("198.18.1.2") };
        struct sockaddr_storage swapped[2] = { addr("198.18.1.2"), addr("198.18.0.2") };
        struct sockaddr_storage peer1[1] = { addr("198.18.0.2") };
        struct rails_pair p[RAILS_MAX];
        unsigned int n;

        n = rails_pair(two, 2, 0, peer2, 2, p);
        ok(n == 2 && p[0].local == 0 && p[0].remote == 0 && p[1].local == 1 && p[1].remote == 1,
           "two rails each side: rail to rail by subnet");

        /* Lane 0 came in on the receiver's second rail (its ACCEPT names it first). */
        n = rails_pair(two, 2, 1, swapped, 2, p);
        ok(n == 2 && p[0].local == 1 && p[0].remote == 0 && p[1].local == 0 && p[1].remote == 1,
           "lane 0 on the second rail: pair 0 is its way, the first rail pairs with the rest");

        n = rails_pair(two, 2, 0, peer1, 1, p);
        ok(n == 1 && p[0].local == 0 && p[0].remote == 0, "a peer with one rail: every lane on lane 0's way");

        two[1].up = false;
        n = rails_pair(two, 2, 0, peer2, 2, p);
        ok(n == 1, "a rail that is down pairs with nothing");
        two[1].up = true;

        two[1].prefix = 0;
        n = rails_pair(two, 2, 0, peer2, 2, p);
        ok(n == 1, "a rail whose subnet is not known pairs with nothing");
        two[1].prefix = 24;

        {
                struct sockaddr_storage other[2] = { addr("198.18.0.2"), addr("203.0.113.9") };

                n = rails_pair(two, 2, 0, other, 2, p);
                ok(n == 1, "a remote rail in no subnet of ours is not used");
        }
        ok(rails_pair(two, 2, 2, peer2, 2, p) == 0, "lane 0's rail out of range: no pairs");
        ok(rails_pair(two, 2, 0, peer2, 0, p) == 0, "no remote rails: no pairs");
}

/* Lanes over pairs as @rate says: "0101"-style, a digit per lane. */
static bool assigned(const uint64_t *rate, unsigned int npairs, unsigned int nlanes, const char *want)
{
        uint8_t lp[64];
        char got[65];

        memset(lp, 0xff, sizeof(lp));
        rails_assign(rate, npairs, nlanes, lp);
        for (unsigned int k = 0; k < nlanes; k++)
                got[k] = lp[k] < 10 ? (char)('0' + lp[k]) : '?';
        got[nlanes] = '\0';
        if (strcmp(got, want) != 0)
                diag("%u lanes over %u pairs: %s, want %s", nlanes, npairs, got, want);
        return strcmp(got, want) == 0;
}

static void test_assign(void)
{
        const uint64_t none[RAILS_MAX] = { 0 };
        const uint64_t alike[RAILS_MAX] = { 40 << 20, 40 << 20, 40 << 20, 40 << 20 };
        const uint64_t slow2[2] = { 40 << 20, 10 << 20 };
        const uint64_t slow1[2] = { 10 << 20, 40 << 20 };
        const uint64_t crawl[3] = { 100 << 20, 1 << 20, 1 << 20 };
        const uint64_t half[2] = { 30 << 20, 0 };

        ok(assigned(none, 2, 4, "0101"), "nothing measured: lane k on pair k mod 2, as ever");
        ok(assigned(alike, 2, 4, "0101") && assigned(alike, 4, 8, "01230123") && assigned(alike, 3, 4, "0120"),
           "pairs alike: round them, lane 0 first");
        ok(assigned(slow2, 2, 4, "0100"), "the second pair a quarter as fast: one lane of four");
        ok(assigned(slow1, 2, 4, "0111"), "the first a quarter as fast: lane 0 stays on it, the rest go over the other");
        ok(assigned(slow2, 2, 16, "0101010000000000"), "sixteen lanes, 4:1: thirteen and three");
        ok(assigned(crawl, 3, 4, "0120"), "every pair keeps a lane while there are lanes for all");
        ok(assigned(crawl, 3, 2, "01"), "fewer lanes than pairs: the first pairs, one each");
        ok(assigned(slow2, 2, 1, "0"), "one lane: lane 0's way");
        ok(assigned(half, 2, 4, "0101"), "a pair not measured counts as the mean of those that were");
        ok(assigned(slow2, 1, 4, "0000"), "one pair: every lane on it");
}

int main(void)
{
        test_subnets();
        test_pairs();
        test_assign();
        return done_testing();
}
