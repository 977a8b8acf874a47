/* xferctl's PEER[:PORT] parsing (pure) and numeric resolution of literals. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ctl.h"
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

int main(void)
{
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
