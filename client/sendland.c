/*
 * xferctl send FILE... PEER:/PATH (and send -r SRC... PEER:/PATH): the
 * files land on PEER as the user who sends them, at PATH (issue 33),
 * rather than in PEER's drop box. Here: the argument read, what this
 * first version cannot do refused before anything is counted or sent,
 * the MUNGE credential that proves to the peer's lander who asks, and
 * several sources with -r, one job each. The send itself is sendcmd's.
 */

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "esc.h"
#include "landcred.h"
#include "landpath.h"
#include "macro.h"
#include "sendcmd.h"

static_assert(sizeof(((struct ctl_submit *)0)->land_path) == LANDPATH_MAX + 1, "PATH fits a SUBMIT");
static_assert(sizeof(((struct landcred *)0)->cred) == sizeof(((struct ctl_submit *)0)->land_cred) &&
              sizeof(((struct landcred *)0)->token) == sizeof(((struct ctl_submit *)0)->land_token),
              "a credential fits a SUBMIT");

/* Whether what has a file's name at PATH is replaced: --overwrite, or
 * --sync (a file that differs; --skip-existing keeps what is there), or
 * --delete (the tree there is put in the new one's place). */
static bool sendland_replaces(const struct sendcmd *sc)
{
        return sc->overwrite ||
               (sc->submit.flags & (CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_SYNC_DIGEST | CTL_SUBMIT_DELETE));
}

/* What a landing cannot go with yet: the option, and what to do instead. -1 or XFERCTL_EXIT_USAGE. */
static int sendland_refuse(const struct sendcmd *sc, unsigned int nfiles)
{
        if (sc->to) {
                xferctl_say("send: --to names a tree in PEER's drop box, PEER:/PATH where files land "
                            "as you: one or the other");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->as) {
                xferctl_say("send: --as names a file in PEER's drop box; with PEER:/PATH, PATH names it "
                            "(PEER:/DIR/NAME)");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->recursive && nfiles > 1 && sc->json) {
                xferctl_say("send: -r with several sources to PEER:/PATH lands each as a job of its own: "
                            "--json describes one job (send each with its own xferctl send -r --json)");
                return XFERCTL_EXIT_USAGE;
        }
        return -1;
}

int sendland_sources(struct sendcmd *sc, int (*one)(struct sendcmd *each, const char *src, void *arg), void *arg)
{
        unsigned int landed = 0, failed = 0;
        int first = -1, rc;
        _cleanup_(freep) char *missed = NULL;
        size_t len = 0;

        for (unsigned int i = 0; i < sc->npaths; i++) {
                struct sendcmd each = *sc;

                each.paths = &sc->paths[i];
                each.npaths = 1;
                rc = one(&each, sc->paths[i], arg);
                if (rc == XFERCTL_EXIT_OK || rc == XFERCTL_EXIT_PARTIAL) {
                        landed++;
                        continue;
                }
                failed++;
                if (first < 0)
                        first = rc;
                /* The local daemon gone: the others would meet it too. */
                if (rc == XFERCTL_EXIT_UNREACHABLE)
                        return rc;
                _cleanup_(freep) char *shown = esc_term_dup(sc->paths[i]);
                char *grown = shown ? realloc(missed, len + strlen(shown) + 3) : NULL;

                if (grown) {
                        len += (size_t)sprintf(grown + len, "%s%s", len ? ", " : "", shown);
                        missed = grown;
                }
        }
        if (failed == 0)
                return XFERCTL_EXIT_OK;
        xferctl_say("%u of %u sources did not land (above): %s", failed, landed + failed, missed ? missed : "?");
        return landed > 0 ? XFERCTL_EXIT_PARTIAL : first;
}

/* sendland_each's: @src a tree if a directory here, else a file. */
static int sendland_one(struct sendcmd *each, const char *src, void *arg)
{
        int (*one)(struct sendcmd *) = *(int (**)(struct sendcmd *))arg;
        struct stat st;

        each->path = src;
        /* A directory as a tree into PATH, anything else as a file into
         * it (a symlink named here is followed, as send FILE does). */
        each->recursive = lstat(src, &st) == 0 && S_ISDIR(st.st_mode);
        return one(each);
}

int sendland_each(struct sendcmd *sc, int (*one)(struct sendcmd *sc))
{
        return sendland_sources(sc, sendland_one, &one);
}

int sendland_parse(struct sendcmd *sc, const char *arg, unsigned int nfiles)
{
        const char *colon = landpath_split(arg);
        enum landpath_verdict v;
        bool dir;
        int r;

        if (!colon) {
                if (!sc->overwrite)
                        return -1;
                /* The drop box's is its admin's call (overwrite in rdmaxferd.conf). */
                xferctl_say("send: --overwrite is for PEER:/PATH, where files land as you; whether the "
                            "drop box replaces a file is its administrator's setting (overwrite)");
                return XFERCTL_EXIT_USAGE;
        }
        r = sendland_refuse(sc, nfiles);
        if (r >= 0)
                return r;
        v = landpath_normal(colon + 1, sc->submit.land_path, &dir);
        if (v != LANDPATH_OK) {
                _cleanup_(freep) char *shown = esc_term_dup(colon + 1);

                if (!shown) {
                        xferctl_say("out of memory");
                        return XFERCTL_EXIT_FAILED;
                }
                /* A PATH that long is said by its rule, not echoed whole. */
                xferctl_say("send: PEER:/PATH '%.200s%s': %s", shown, strlen(shown) > 200 ? "..." : "",
                            landpath_verdict_str(v));
                return XFERCTL_EXIT_USAGE;
        }
        sc->land_peer = strndup(arg, (size_t)(colon - arg));
        if (!sc->land_peer) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        /* Keeping files up to date replaces the ones that differ: that is
         * what the user asked (the credential says so too). */
        sc->submit.flags |= CTL_SUBMIT_LAND | (sendland_replaces(sc) ? CTL_SUBMIT_LAND_REPLACE : 0);
        /* Several files go into PATH whatever it is; one file (or one
         * tree) is PATH itself, unless the peer finds a directory there
         * (its call, not ours), and then goes into it. */
        if (dir || nfiles > 1)
                sc->submit.flags |= CTL_SUBMIT_LAND_DIR;
        return -1;
}

int sendland_cred(struct sendcmd *sc)
{
        static struct ctl_hop hops[CTL_ROUTE_HOPS_MAX];
        static const char *addrs[1 + CTL_ROUTE_HOPS_MAX];
        struct landcred_req rq = {
                .direction = LANDMSG_PUSH,
                .addrs = addrs,
                .dest = sc->submit.land_path,
                /* As the SUBMIT says (a --delete the walk called off
                 * still replaces what differs: decided at parse time). */
                .replace = sc->submit.flags & CTL_SUBMIT_LAND_REPLACE,
                .sync = sc->submit.flags & CTL_SUBMIT_SYNC_MASK,
                .dry = sc->submit.flags & CTL_SUBMIT_DRY_RUN,
                /* After the walk, which may have called --delete off. */
                .delete = sc->submit.flags & CTL_SUBMIT_DELETE,
        };
        struct landcred lc;
        char err[512];
        int n;

        /* The peer, then a chain's every node after it, as the daemon
         * names them in the landing (control_land). */
        n = ctl_route_parse(sc->submit.route, hops, CTL_ROUTE_HOPS_MAX);
        if (n < 0) {
                xferctl_say("cannot land as yourself along the chain: its route is malformed");
                return XFERCTL_EXIT_FAILED;
        }
        addrs[rq.naddrs++] = sc->submit.host;
        for (int i = 0; i < n; i++)
                addrs[rq.naddrs++] = hops[i].host;
        if (landcred_make_for(&rq, NULL, &lc, err, sizeof(err)) < 0) {
                xferctl_say("cannot land as yourself on %s: %s (without :/PATH the files go to its drop "
                            "box instead)", sc->peer_shown, err);
                return XFERCTL_EXIT_FAILED;
        }
        memcpy(sc->submit.land_token, lc.token, sizeof(lc.token));
        memcpy(sc->submit.land_cred, lc.cred, sizeof(lc.cred));
        /* It vouches for us until it expires: no second copy left about. */
        sodium_memzero(&lc, sizeof(lc));
        return -1;
}
