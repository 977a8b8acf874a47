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
        ok(rails_lane_pair(0, n) == 0 && rails_lane_pair(1, n) == 1 && rails_lane_pair(2, n) == 0 &&
           rails_lane_pair(3, n) == 1, "four lanes: two on each pair, lane 0 on its own");

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

int main(void)
{
        test_subnets();
        test_pairs();
        return done_testing();
}
