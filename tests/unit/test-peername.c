/* Peer names to fabric names (common/peername.c): patterns and what they make. */

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "peername.h"
#include "tap.h"

/* @pattern takes @name to @want (0: mapped, PEERNAME_ADDRESS: kept as an address). */
static void maps(const char *pattern, const char *name, const char *want, int want_r)
{
        char out[PEERNAME_NAME_MAX + 1] = "";
        int r = peername_map(pattern, name, out, sizeof(out));

        ok(r == want_r && strcmp(out, want) == 0, "'%s' maps %s to %s%s (got %d '%s')", pattern, name, want,
           want_r == PEERNAME_ADDRESS ? ", an address" : "", r, out);
}

static void good(const char *pattern)
{
        char why[192] = "";

        ok(peername_check(pattern, why, sizeof(why)) == 0, "'%s' is a pattern (%s)", pattern, why);
}

static void bad(const char *pattern, const char *because, const char *says)
{
        char why[192] = "";
        int r = peername_check(pattern, why, sizeof(why));

        ok(r == -EINVAL && strstr(why, says), "'%s' is refused: %s (%s)", pattern, because, why);
}

static void test_check(void)
{
        char longest[PEERNAME_PATTERN_MAX + 2];

        good("");
        good("%h");
        good("%h-ib");
        good("i%h");
        good("%s.ib0");
        good("%s-ib%d");
        good("%h_ib.fabric.example");
        good("%%%h");
        good("%s%h");

        bad("ib", "names no host", "names no host");
        bad("%d-ib", "a domain alone names no host", "names no host");
        bad("%%h", "%% then h is a '%' and an h", "names no host");
        bad("%x", "an unknown escape", "%x is not one of");
        bad("%H", "escapes are lower case", "%H is not one of");
        bad("%h%", "a '%' at the end", "is not one of");
        bad("%h:7471", "a port is the peer's, not the name's", "':' cannot be part of a host name");
        bad("%h ib", "a space", "' ' cannot be part");
        bad("%h/ib", "a slash", "'/' cannot be part");
        bad("%h,x", "a comma would make a list", "',' cannot be part");
        bad("%h\n", "a control character, shown as ?", "'?' cannot be part");
        bad("%h\xc3\xa9", "a byte above 0x7e, shown as ?", "'?' cannot be part");

        memset(longest, 'a', sizeof(longest));
        memcpy(longest, "%h", 2);
        longest[PEERNAME_PATTERN_MAX] = '\0';
        good(longest);
        longest[PEERNAME_PATTERN_MAX] = 'a';
        longest[PEERNAME_PATTERN_MAX + 1] = '\0';
        bad(longest, "65 bytes", "longer than 64 bytes");

        ok(peername_check("%x", NULL, 0) == -EINVAL, "no room for why: still refused");
        ok(peername_identity("") && peername_identity("%h") && !peername_identity("%h-ib") &&
           !peername_identity("%s"), "\"\" and %%h map nothing; %%s does (it drops a domain)");
}

static void test_map(void)
{
        char name[PEERNAME_NAME_MAX + 8], out[PEERNAME_NAME_MAX + 1];

        /* The sites' forms (issue 36): node01-ib, node01.ib0, inode01. */
        maps("%h-ib", "node01", "node01-ib", 0);
        maps("%h.ib0", "node01", "node01.ib0", 0);
        maps("i%h", "node01", "inode01", 0);
        /* A domain: %h keeps it where it is, %s drops it, %d puts it back after. */
        maps("%h-ib", "node01.example.org", "node01.example.org-ib", 0);
        maps("%s-ib", "node01.example.org", "node01-ib", 0);
        maps("%s-ib%d", "node01.example.org", "node01-ib.example.org", 0);
        maps("%s-ib%d", "node01", "node01-ib", 0);
        maps("%s-ib%d", "node01.", "node01-ib.", 0);
        maps("%s.ib%d", "gpu7.cluster", "gpu7.ib.cluster", 0);
        maps("%%%h", "n1", "%n1", 0);
        maps("%h-%h", "n1", "n1-n1", 0);
        /* Nothing to map. */
        maps("", "node01", "node01", 0);
        maps("%h", "node01.example.org", "node01.example.org", 0);
        /* An address is never mapped, whatever the pattern. */
        maps("%h-ib", "198.18.0.2", "198.18.0.2", PEERNAME_ADDRESS);
        maps("%h-ib", "127.1", "127.1", PEERNAME_ADDRESS);
        maps("%h-ib", "2130706433", "2130706433", PEERNAME_ADDRESS);
        maps("%h-ib", "fd00::2", "fd00::2", PEERNAME_ADDRESS);
        maps("%h-ib", "fe80::1%eth0", "fe80::1%eth0", PEERNAME_ADDRESS);
        maps("%h-ib", "::ffff:198.18.0.2", "::ffff:198.18.0.2", PEERNAME_ADDRESS);
        maps("", "198.18.0.2", "198.18.0.2", PEERNAME_ADDRESS);
        /* Names that look numeric but are not addresses are mapped. */
        maps("%h-ib", "198.18.0.2.example", "198.18.0.2.example-ib", 0);
        maps("%h-ib", "1node", "1node-ib", 0);
        ok(peername_is_address("10.0.0.1") && peername_is_address("::1") && !peername_is_address("node01") &&
           !peername_is_address("10.0.0.256"), "peername_is_address: 10.0.0.1, ::1; not node01, 10.0.0.256");

        /* Limits: the name, the pattern, the room. */
        ok(peername_map("%h-ib", "", out, sizeof(out)) == -EINVAL, "an empty name is refused");
        ok(peername_map("%x", "n1", out, sizeof(out)) == -EINVAL, "a bad pattern is refused");
        memset(name, 'a', 250);
        name[250] = '\0';
        ok(peername_map("%h-ib", name, out, sizeof(out)) == 0 && strlen(out) == 253,
           "250 bytes + -ib: 253, the longest name");
        name[250] = 'a';
        name[251] = '\0';
        ok(peername_map("%h-ib", name, out, sizeof(out)) == -ENAMETOOLONG, "251 bytes + -ib: too long");
        memset(name, 'a', 254);
        name[254] = '\0';
        ok(peername_map("", name, out, sizeof(out)) == -ENAMETOOLONG, "254 bytes, not mapped: too long");
        ok(peername_map("%h-ib", "node01", out, 9) == -ENAMETOOLONG &&
           peername_map("%h-ib", "node01", out, 10) == 0 && strcmp(out, "node01-ib") == 0,
           "the room given is respected: 9 bytes do not hold node01-ib, 10 do");
        ok(peername_map("%h-ib", "10.0.0.1", out, 8) == -ENAMETOOLONG, "an address too");
}

int main(void)
{
        test_check();
        test_map();
        return done_testing();
}
