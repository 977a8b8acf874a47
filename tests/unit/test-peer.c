/* xferctl's PEER[:PORT] parsing (pure) and numeric resolution of literals. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ctl.h"
#include "hostlist.h"
#include "macro.h"
#include "peer.h"
#include "tap.h"

static void check(const char *spec, const char *host, unsigned int port)
{
        char h[CTL_HOST_MAX + 1] = "", err[128] = "";
        uint16_t p = 12345;
        int r = peer_split(spec, h, sizeof(h), &p, err, sizeof(err));

        ok(r == 0 && strcmp(h, host) == 0 && p == port, "'%s' -> '%s' port %u (got %d '%s' %u %s)",
           spec, host, port, r, h, (unsigned int)p, err);
}

static void bad(const char *spec, const char *why)
{
        char h[CTL_HOST_MAX + 1], err[128] = "";
        uint16_t p;
        int r = peer_split(spec, h, sizeof(h), &p, err, sizeof(err));

        ok(r == -EINVAL && err[0] != '\0', "'%s' refused: %s (%s)", spec, why, err);
}

/* peer_list(@arg) gives exactly @want, space-separated. */
static void list(const char *arg, const char *want)
{
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        char got[512] = "", err[128] = "";
        int r = peer_list(arg, &hl, err, sizeof(err));

        for (size_t i = 0; r == 0 && i < hl->n; i++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", hl->names[i]);
        ok(r == 0 && strcmp(got, want) == 0, "list '%s' -> '%s' (got %d '%s' %s)", arg, want, r, got, err);
}

static void list_bad(const char *arg, const char *why)
{
        struct hostlist *hl = NULL;
        char err[128] = "";
        int r = peer_list(arg, &hl, err, sizeof(err));

        ok(r < 0 && err[0] && !hl, "list '%s' refused: %s (%s)", arg, why, err);
        hostlist_free(hl);
}

static void test_list(void)
{
        list("beta", "beta");
        list("beta:7471", "beta:7471");
        list("fd00::2", "fd00::2");
        list("[fd00::2]:7470", "[fd00::2]:7470");
        list("[fe80::1%eth0]", "[fe80::1%eth0]");
        list("node[01-03]", "node01 node02 node03");
        list("node[01-02,7],login1", "node01 node02 node7 login1");
        list("a,b:7471", "a b:7471");
        list("a b", "a b");
        list("node[1-2]:7471", "node1:7471 node2:7471");
        list("rack[1-2]-n[1-2]:9", "rack1-n1:9 rack1-n2:9 rack2-n1:9 rack2-n2:9");
        list("198.18.0.2,198.18.0.3", "198.18.0.2 198.18.0.3");
        /* Text after the last group (the fabric's names), with the list's port too. */
        list("node[1-2]-ib", "node1-ib node2-ib");
        list("node[01-02]-ib:7471", "node01-ib:7471 node02-ib:7471");
        list("rack[1-2]-n[1-2]-ib0:9", "rack1-n1-ib0:9 rack1-n2-ib0:9 rack2-n1-ib0:9 rack2-n2-ib0:9");
        list("n[1-2].ib,login1:7471", "n1.ib n2.ib login1:7471");
        list("node[1-2]-ib,a:7471", "node1-ib node2-ib a:7471");

        list_bad("", "no host");
        list_bad(" , ", "only separators");
        list_bad("node[3-1]", "a reversed range");
        list_bad("node[1-2", "unclosed");
        list_bad("node[1-2]-ib]", "a ']' after the last group");
        list_bad("a:1,node[1-2]-ib:7471", "a host's own port beside the list's, after a suffix");
        list_bad("node[1-2]-ib:0", "port 0 for the list, after a suffix");
        list_bad("a:1,node[1-2]:7471", "a host's own port beside the list's");
        list_bad("node[1-2]:0", "port 0 for the list");
        list_bad("node[1-2]:70000", "a port past 65535 for the list");
}

/* @arg's hosts after peer_list_self_first(@self): @want (space-separated), @moved its return. */
static void self_first(const char *arg, const char *self, const char *want, long moved)
{
        struct hostlist *hl = NULL;
        char err[128], got[512] = "";
        size_t o = 0;
        long r = -2;

        if (peer_list(arg, &hl, err, sizeof(err)) == 0) {
                r = peer_list_self_first(hl, self);
                for (size_t i = 0; i < hl->n && o < sizeof(got); i++)
                        o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s", i ? " " : "", hl->names[i]);
        }
        ok(r == moved && strcmp(got, want) == 0, "'%s' with self '%s': %s (got '%s', %ld)", arg, self, want, got, r);
        hostlist_free(hl);
}

/* xferctl bcast: the node running it goes first in the chain. */
static void test_self(void)
{
        ok(peer_is_self("node01", "node01"), "a name is itself");
        ok(peer_is_self("node01:7471", "node01"), "with a port");
        ok(peer_is_self("node01", "node01.cluster.example"), "the short name of the host name");
        ok(peer_is_self("node01.cluster.example", "node01"), "the whole name of a short host name");
        ok(!peer_is_self("node01.a", "node01.b"), "two whole names that differ");
        ok(!peer_is_self("node010", "node01"), "a longer name");
        ok(!peer_is_self("node01-ib", "node01"), "a suffix is another name");
        ok(!peer_is_self("node01", ""), "no self");
        ok(peer_is_self("10.0.0.1", "10.0.0.1"), "an address as itself");
        ok(!peer_is_self("10.0.0.1", "10"), "not an address by its first number");
        ok(!peer_is_self("10", "10.0.0.1"), "nor the other way");

        self_first("node[01-04]", "node03", "node03 node01 node02 node04", 2);
        self_first("node[01-04]", "node01", "node01 node02 node03 node04", 0);
        self_first("node[01-04]", "login1", "node01 node02 node03 node04", -1);
        self_first("node[01-04]:7471", "node04.cluster", "node04:7471 node01:7471 node02:7471 node03:7471", 3);
        self_first("b,a,c,a", "a", "a b c a", 1);
}

int main(void)
{
        test_list();
        test_self();
        char num[CTL_HOST_MAX + 1], err[128];

        check("beta", "beta", 0);
        check("beta:7471", "beta", 7471);
        check("198.18.0.2", "198.18.0.2", 0);
        check("198.18.0.2:1", "198.18.0.2", 1);
        check("198.18.0.2:65535", "198.18.0.2", 65535);
        check("fd00::2", "fd00::2", 0);
        check("::1", "::1", 0);
        check("[fd00::2]", "fd00::2", 0);
        check("[fd00::2]:7470", "fd00::2", 7470);
        check("[fe80::1%eth0]:7470", "fe80::1%eth0", 7470);

        bad("", "empty");
        bad(":7470", "no host");
        bad("[]:7470", "empty brackets");
        bad("[fd00::2", "unclosed bracket");
        bad("[fd00::2]7470", "junk after the bracket");
        bad("beta:", "empty port");
        bad("beta:0", "port 0");
        bad("beta:65536", "port too large");
        bad("beta:+1", "sign");
        bad("beta:0x10", "hex");
        bad("beta: 1", "space");
        bad("beta:99999999999999999999", "overflowing port");
        bad("a-very-long-host-name-that-does-not-fit-in-the-control-protocol-field.example", "too long");

        ok(peer_resolve("127.0.0.1", num, sizeof(num), err, sizeof(err)) == 0 &&
           strcmp(num, "127.0.0.1") == 0, "IPv4 literal stays numeric");
        ok(peer_resolve("::1", num, sizeof(num), err, sizeof(err)) == 0 && strcmp(num, "::1") == 0,
           "IPv6 literal stays numeric");
        ok(peer_resolve("0:0:0:0:0:0:0:1", num, sizeof(num), err, sizeof(err)) == 0 &&
           strcmp(num, "::1") == 0, "IPv6 literal in canonical form");
        ok(peer_resolve("bad..name", num, sizeof(num), err, sizeof(err)) == -EHOSTUNREACH && err[0],
           "an unresolvable name says why (%s)", err);
        ok(peer_resolve("127.0.0.1", num, 4, err, sizeof(err)) == -ENAMETOOLONG,
           "a result that does not fit is refused");
        return done_testing();
}
