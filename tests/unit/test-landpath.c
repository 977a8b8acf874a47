/*
 * xferctl send's PEER:/PATH (client/landpath.c): where the argument splits,
 * PATH's normal form and each rule it refuses by; and, against the
 * lander's own rule (landfs_path_check), that what xferctl sends is what
 * a receiver takes and that a path already in normal form stays as it is.
 */

#include <string.h>

#include "landfs.h"
#include "landpath.h"
#include "tap.h"

/* @arg splits into @peer and @path; @peer NULL: no split. */
static void split(const char *arg, const char *peer, const char *path)
{
        const char *colon = landpath_split(arg);

        if (!peer) {
                ok(!colon, "'%s' is a PEER, no PATH (split at %s)", arg, colon ? colon : "nothing");
                return;
        }
        ok(colon && (size_t)(colon - arg) == strlen(peer) && strncmp(arg, peer, strlen(peer)) == 0 &&
           strcmp(colon + 1, path) == 0, "'%s' is PEER '%s', PATH '%s' (split at %s)", arg, peer, path,
           colon ? colon : "nothing");
}

static void normal(const char *path, const char *want, bool want_dir)
{
        char out[LANDPATH_MAX + 1];
        bool dir = !want_dir;
        enum landpath_verdict v = landpath_normal(path, out, &dir);

        ok(v == LANDPATH_OK && strcmp(out, want) == 0 && dir == want_dir && landfs_path_check(out),
           "'%.60s' -> '%.60s'%s, as the lander takes it (%.60s)", path, want,
           want_dir ? ", a directory" : "", v == LANDPATH_OK ? out : landpath_verdict_str(v));
}

static void refused(const char *path, enum landpath_verdict want, const char *why)
{
        char out[LANDPATH_MAX + 1];
        bool dir;
        enum landpath_verdict v = landpath_normal(path, out, &dir);

        ok(v == want, "'%.60s%s' refused: %s (%s)", path, strlen(path) > 60 ? "..." : "", why,
           landpath_verdict_str(v));
}

static void test_split(void)
{
        split("beta:/scratch/alice/x", "beta", "/scratch/alice/x");
        split("beta:7471:/scratch/x", "beta:7471", "/scratch/x");
        split("[fd00::2]:7470:/scratch/x", "[fd00::2]:7470", "/scratch/x");
        split("[fd00::2]:/scratch/x", "[fd00::2]", "/scratch/x");
        split("10.0.0.2:/x", "10.0.0.2", "/x");
        split("beta:/", "beta", "/");
        split(":/x", "", "/x");
        /* The first ":/": PATH may hold another. */
        split("beta:/a:/b", "beta", "/a:/b");
        /* A NODELIST splits too (and is refused later, for being several). */
        split("node[01-04]:/x", "node[01-04]", "/x");
        /* Today's peers and their errors stay as they are. */
        split("beta", NULL, NULL);
        split("beta:7470", NULL, NULL);
        split("beta:", NULL, NULL);
        split("beta:x/y", NULL, NULL);
        split("[fd00::2]:7470", NULL, NULL);
        split("fd00::2", NULL, NULL);
        split("node[01-16]:7470", NULL, NULL);
        split("[fd00:/x]", NULL, NULL);
        split("[fd00::2", NULL, NULL);
}

static void test_normal(void)
{
        char big[LANDPATH_MAX + 2], comp[LANDPATH_COMPONENT_MAX + 3];

        normal("/scratch/alice/x", "/scratch/alice/x", false);
        normal("/scratch/alice/", "/scratch/alice", true);
        normal("//scratch///alice//x", "/scratch/alice/x", false);
        normal("/scratch/./alice/./x", "/scratch/alice/x", false);
        normal("/scratch/alice/.", "/scratch/alice", true);
        normal("/scratch/alice/./", "/scratch/alice", true);
        normal("/scratch/alice//", "/scratch/alice", true);
        normal("/x", "/x", false);
        normal("/.x/..y/...", "/.x/..y/...", false);
        normal("/a b/caf\xc3\xa9", "/a b/caf\xc3\xa9", false);

        refused("scratch/x", LANDPATH_RELATIVE, "relative");
        refused("", LANDPATH_RELATIVE, "empty");
        refused("./x", LANDPATH_RELATIVE, "relative, with a dot");
        refused("/", LANDPATH_ROOT, "'/' alone");
        refused("//", LANDPATH_ROOT, "'//'");
        refused("/./", LANDPATH_ROOT, "'/./', which is '/'");
        refused("/.", LANDPATH_ROOT, "'/.'");
        refused("/scratch/../etc", LANDPATH_DOTDOT, "'..' in the middle");
        refused("/..", LANDPATH_DOTDOT, "'..' first");
        refused("/scratch/..", LANDPATH_DOTDOT, "'..' last");
        refused("/scratch/../", LANDPATH_DOTDOT, "'..' then '/'");

        memset(comp, 'c', sizeof(comp));
        comp[0] = '/';
        comp[LANDPATH_COMPONENT_MAX + 1] = '\0';
        normal(comp, comp, false);
        comp[LANDPATH_COMPONENT_MAX + 1] = 'c';
        comp[LANDPATH_COMPONENT_MAX + 2] = '\0';
        refused(comp, LANDPATH_COMPONENT_LONG, "a component of 256 bytes");

        /* 4095 bytes is the longest: "/" + 4094, in components of 200. */
        for (size_t i = 0; i < LANDPATH_MAX; i++)
                big[i] = i % 200 == 0 ? '/' : 'b';
        big[LANDPATH_MAX] = '\0';
        normal(big, big, false);
        big[LANDPATH_MAX] = 'b';
        big[LANDPATH_MAX + 1] = '\0';
        refused(big, LANDPATH_TOO_LONG, "4096 bytes");
        /* Long only before it is normalised: fine. */
        {
                static char slashes[2 * LANDPATH_MAX];

                memset(slashes, '/', sizeof(slashes) - 3);
                memcpy(slashes + sizeof(slashes) - 3, "x/", 3);
                normal(slashes, "/x", true);
        }
        /* Too long, then a "..": the ".." is said. */
        {
                static char both[LANDPATH_MAX + 8];

                memcpy(both, big, LANDPATH_MAX + 1);
                memcpy(both + LANDPATH_MAX + 1, "/../y", 6);
                refused(both, LANDPATH_DOTDOT, "too long, but the '..' is said");
        }
}

/* Every path of up to 9 bytes of '/', '.' and 'a' against landfs_path_check:
 * normalised, each is one the lander takes; one it takes is kept as it is. */
static void test_against_landfs(void)
{
        static const char alphabet[] = "/.a";
        unsigned long tried = 0, wrong = 0, kept = 0;
        char path[10], out[LANDPATH_MAX + 1];

        for (size_t len = 1; len < sizeof(path); len++) {
                unsigned long total = 1;

                for (size_t i = 0; i < len; i++)
                        total *= 3;
                for (unsigned long k = 0; k < total; k++) {
                        unsigned long x = k;
                        enum landpath_verdict v;
                        bool dir, taken, bad;

                        for (size_t i = 0; i < len; i++, x /= 3)
                                path[i] = alphabet[x % 3];
                        path[len] = '\0';
                        v = landpath_normal(path, out, &dir);
                        tried++;
                        taken = landfs_path_check(path);
                        kept += taken;
                        bad = (v == LANDPATH_OK && !landfs_path_check(out)) ||
                              (taken && (v != LANDPATH_OK || strcmp(out, path) != 0 || dir));
                        if (bad && wrong++ == 0)
                                diag("first disagreement: '%s' -> %s '%s'", path, landpath_verdict_str(v),
                                     v == LANDPATH_OK ? out : "");
                }
        }
        ok(wrong == 0, "%lu paths agree with landfs_path_check (%lu already in normal form)", tried, kept);
}

int main(void)
{
        test_split();
        test_normal();
        test_against_landfs();
        return done_testing();
}
