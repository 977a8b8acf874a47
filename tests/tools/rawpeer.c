/*
 * rawpeer: a deliberately misbehaving rdmaxfer sender, for tests. It speaks
 * the peer protocol through common/wire.h like rdmaxferd does (rawconn.c),
 * then breaks it in one chosen way (MODE) and reports how the receiver
 * answered. Exit 0 when the receiver reacted as a hardened receiver must,
 * 1 when it did not (or the test could not run), 2 on a usage error.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "config.h"
#include "digest.h"
#include "macro.h"
#include "pack.h"
#include "rawconn.h"
#include "wire.h"
#include "xattrs.h"

#define RAWPEER_CHUNK_MAX       16384u
/* trickle: a chunk this often by default, just inside the default peer_timeout. */
#define RAWPEER_TRICKLE_SEC     29

struct rawpeer_opts {
        const char *src;
        const char *dst;
        unsigned int port;
        int timeout_s;                  /* verdict wait; 0 = the mode's default */
        const char *key_file;
        int every_s;                    /* trickle: seconds between chunks; 0 = the default */
        unsigned int listen_port;       /* relay: where the sender comes to us */
        const char *target;             /* tree-kept-link: where its symlink points */
};

/* ---- the modes --------------------------------------------------------- */

enum act {
        ACT_HELLO,              /* the hello is the violation; REJECT expected */
        ACT_NAME,               /* OFFER with a name the receiver must refuse */
        ACT_HUGE,
        ACT_TINY_CHUNK,
        ACT_OFFER_TWICE,
        ACT_GARBAGE_CTRL,
        ACT_DATA_FIRST,
        ACT_OUT_OF_ORDER,
        ACT_BAD_CHECKSUM,
        ACT_SHORT,
        ACT_VANISH,
        ACT_OVERSIZE,
        ACT_IDLE,
        ACT_STALL,
        ACT_LANE_TRESPASS,
        ACT_TRICKLE,
        ACT_REPLAY_NONCE,
        ACT_RELAY_OFFER,
        ACT_BAD_LANE_MAC,
        ACT_BAD_END_MAC,
        ACT_RELAY,
        ACT_VERDICT_TRICKLE,
        ACT_HONEST,
        ACT_NEXT_WRONG_FILE,
        ACT_NEXT_MORE_BYTES,
        ACT_NEXT_BAD_MAC,
        ACT_NEXT_PIPELINED,
        ACT_NEXT_THIRD,
        ACT_NEXT_WAIT,
        ACT_TREE_DEST,
        ACT_TREE_OUTSIDE,
        ACT_TREE_DIR_SOURCE,
        ACT_TREE_LINK_SHADOW,
        ACT_TREE_LINK_UNDER,
        ACT_TREE_PLANTED,
        ACT_PACK_DOTDOT,
        ACT_PACK_PAST_END,
        ACT_PACK_HASH,
        ACT_PACK_LINK_OUTSIDE,
        ACT_PACK_HARD_DIR,
        ACT_PACK_HARD_OTHER,
        ACT_PACK_XATTRS,        /* a drop box's pack whose file carries attributes (wire 27) */
        ACT_XATTR_PART,         /* an XATTR part before a drop box tree's entry */
        ACT_PUBLISHED_RETRY,
        ACT_RESUME_IDLE,
        ACT_TREE_PUBLISHED_RETRY,
        ACT_TREE_KEPT_LINK,
        ACT_ROUTE_HASH,
        ACT_ROUTE_UNNAMED,
        ACT_ROUTE_LOOPBACK,
        ACT_ROUTE_REPEAT,
        ACT_ROUTE_OUTSIDE,
        ACT_ROUTE_TWICE,
        ACT_ROUTE_REST_ORDER,
        ACT_ROUTE_REST_HASH,
        ACT_ROUTE_REST_MISSING,
};

struct mode {
        const char *name;
        enum act act;
        enum rawconn_hello hello;
        const char *file;               /* name to offer */
        unsigned int chunks;            /* file size in chunks (the last is half a chunk) */
        uint16_t verdict;               /* WIRE_REFUSE or WIRE_RESULT (REJECT for ACT_HELLO) */
        unsigned int expect;            /* status the verdict must carry */
        bool hangup_ok;                 /* hanging up (or failing our send) instead is also right */
        int timeout_s;                  /* default verdict wait */
        const char *help;
};

static const struct mode modes[] = {
        { "bad-version", ACT_HELLO, HELLO_VERSION, NULL, 0, 0, WIRE_E_VERSION, false, 10,
          "hello with version 99: REJECT, version" },
        { "no-hello", ACT_HELLO, HELLO_NONE, NULL, 0, 0, WIRE_E_PROTOCOL, false, 10,
          "no private data: REJECT, protocol" },
        { "garbage-hello", ACT_HELLO, HELLO_GARBAGE, NULL, 0, 0, WIRE_E_PROTOCOL, false, 10,
          "private data that is not a hello: REJECT, protocol" },
        { "bogus-lane", ACT_HELLO, HELLO_LANE, NULL, 0, 0, WIRE_E_PROTOCOL, false, 10,
          "a lane hello whose token no accepted offer carried: REJECT, protocol" },
        { "name-traversal", ACT_NAME, HELLO_OK, "../escape", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "OFFER \"../escape\": REFUSE, name" },
        { "name-slash", ACT_NAME, HELLO_OK, "a/b", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "OFFER \"a/b\": REFUSE, name" },
        { "name-dotdot", ACT_NAME, HELLO_OK, "..", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "OFFER \"..\": REFUSE, name" },
        { "name-control", ACT_NAME, HELLO_OK, "a\x01" "b", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "OFFER \"a\\x01b\": REFUSE, name" },
        { "name-reserved", ACT_NAME, HELLO_OK, ".rdmaxfer-stage-1", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "OFFER \".rdmaxfer-stage-1\" (the receiver's own kind of name): REFUSE, name" },
        { "huge-offer", ACT_HUGE, HELLO_OK, "huge.dat", 0, WIRE_REFUSE, WIRE_E_TOO_LARGE, false, 10,
          "OFFER of 2^64-1 bytes (more than 2^32 chunks): REFUSE, too large" },
        { "tiny-chunk", ACT_TINY_CHUNK, HELLO_OK, "tiny.dat", 0, WIRE_REFUSE, WIRE_E_PROTOCOL, false, 10,
          "OFFER of 4 KiB in 1-byte chunks: REFUSE, protocol" },
        { "offer-twice", ACT_OFFER_TWICE, HELLO_OK, "twice.dat", 3, WIRE_RESULT, WIRE_E_PROTOCOL, true, 10,
          "a second OFFER while the first transfer runs: RESULT, protocol (or hang-up)" },
        { "garbage-ctrl", ACT_GARBAGE_CTRL, HELLO_OK, NULL, 0, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 10,
          "100 random bytes as a control message: REFUSE, protocol (or hang-up)" },
        { "data-before-offer", ACT_DATA_FIRST, HELLO_OK, NULL, 1, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 10,
          "a data message before any OFFER: REFUSE, protocol (or hang-up)" },
        { "out-of-order", ACT_OUT_OF_ORDER, HELLO_OK, "ooo.dat", 3, WIRE_RESULT, WIRE_E_PROTOCOL, true, 10,
          "OFFER, then chunk 1 before chunk 0: RESULT, protocol (or hang-up)" },
        { "bad-checksum", ACT_BAD_CHECKSUM, HELLO_OK, "badsum.dat", 3, WIRE_RESULT, WIRE_E_CHECKSUM, false, 20,
          "OFFER, all data, END with a wrong digest: RESULT, checksum" },
        { "short", ACT_SHORT, HELLO_OK, "short.dat", 3, WIRE_RESULT, WIRE_E_SIZE, false, 20,
          "OFFER, one chunk less than offered, END: RESULT, size" },
        { "vanish", ACT_VANISH, HELLO_OK, "vanish.dat", 4, WIRE_RESULT, WIRE_OK, false, 10,
          "OFFER, half the data, exit without END (the receiver's log tells)" },
        { "oversize", ACT_OVERSIZE, HELLO_OK, "oversize.dat", 2, WIRE_RESULT, WIRE_E_PROTOCOL, true, 20,
          "OFFER, then a message 4 KiB over the slot size: our send fails or hang-up" },
        { "idle", ACT_IDLE, HELLO_OK, NULL, 0, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 25,
          "connect, never offer: dropped after the receiver's 10 s" },
        { "stall", ACT_STALL, HELLO_OK, "stall.dat", 3, WIRE_RESULT, WIRE_E_PROTOCOL, true, 45,
          "OFFER accepted, then nothing: dropped after the receiver's peer_timeout (30 s)" },
        { "lane-trespass", ACT_LANE_TRESPASS, HELLO_OK, "trespass.dat", 16, WIRE_RESULT, WIRE_E_PROTOCOL, true, 20,
          "OFFER over 2 lanes; lane 1 joins and sends a chunk of lane 0's run: RESULT, protocol (or hang-up)" },
        { "trickle", ACT_TRICKLE, HELLO_OK, "trickle.dat", 256, WIRE_RESULT, WIRE_E_PROTOCOL, false, 120,
          "OFFER accepted, then one chunk every 29 s (--every): RESULT, protocol (sender too slow)" },
        { "key-mismatch", ACT_HELLO, HELLO_OK, NULL, 0, 0, WIRE_E_AUTH, false, 10,
          "a hello that holds a key when the receiver has none, or none when it has one: REJECT, auth" },
        { "replay-nonce", ACT_REPLAY_NONCE, HELLO_OK, "replay.dat", 0, WIRE_REFUSE, WIRE_E_AUTH, false, 10,
          "(--key) an OFFER whose MAC was made for another connection's nonce: REFUSE, auth" },
        { "relay-offer", ACT_RELAY_OFFER, HELLO_OK, "relayed.dat", 0, WIRE_REFUSE, WIRE_E_AUTH, false, 10,
          "(--key) an OFFER whose MAC names another listening port, as one relayed from a host the "
          "sender meant would: REFUSE, auth" },
        { "bad-lane-mac", ACT_BAD_LANE_MAC, HELLO_OK, "badlane.dat", 16, 0, WIRE_E_AUTH, false, 10,
          "(--key) OFFER over 2 lanes; lane 1's hello has the token but a wrong tag: REJECT, auth" },
        { "bad-end-mac", ACT_BAD_END_MAC, HELLO_OK, "badmac.dat", 3, WIRE_RESULT, WIRE_E_AUTH, false, 20,
          "(--key) OFFER, all data, END with the right digest and a wrong MAC: RESULT, auth" },
        { "relay", ACT_RELAY, HELLO_OK, NULL, 0, WIRE_REFUSE, WIRE_E_AUTH, false, 30,
          "(--listen-port N, no key) stand in for a receiver on --dst:N: take a keyed sender's "
          "connection, get a nonce from the receiver at --dst, pass it to the sender and its OFFER to "
          "the receiver (REFUSE, auth), then answer the sender with an ACCEPT that proves nothing "
          "(it must hang up sending nothing past its offer)" },
        { "verdict-trickle", ACT_VERDICT_TRICKLE, HELLO_OK, NULL, 0, 0, 0, true, 120,
          "(--listen-port N; issue 32 L4) stand in for a receiver on --dst:N: accept a sender's empty "
          "file, take its END, then send an empty CREDIT a second and never a verdict: the sender "
          "must hang up (within --timeout)" },
        { "honest", ACT_HONEST, HELLO_OK, "rawpeer-honest.dat", 5, WIRE_RESULT, WIRE_OK, false, 20,
          "a correct transfer, to check rawpeer itself: RESULT, ok" },
        { "next-wrong-file", ACT_NEXT_WRONG_FILE, HELLO_OK, "sess-b.dat", 2, WIRE_REFUSE, WIRE_E_PROTOCOL, false, 20,
          "a session of 3 files: sess-a.dat whole (RESULT ok), then the offer of file 3, not 2: REFUSE, "
          "protocol" },
        { "wait-trickle", ACT_NEXT_WAIT, HELLO_OK, "sess-b.dat", 2, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 300,
          "(issue 32 M1) a session of 3 files announcing 16 TiB: sess-a.dat whole (RESULT ok), then a WAIT "
          "for file 2 every second, for ever: REFUSE, protocol, within 20 x the receiver's peer_timeout" },
        { "next-more-bytes", ACT_NEXT_MORE_BYTES, HELLO_OK, "sess-b.dat", 2, WIRE_REFUSE, WIRE_E_PROTOCOL, false, 20,
          "a session of 3 files announcing 1 byte more than sess-a.dat, which goes whole, then a "
          "4 KiB file 2: REFUSE, protocol" },
        { "tree-dir-source", ACT_TREE_DIR_SOURCE, HELLO_OK, "rawtree", 0, WIRE_REFUSE, WIRE_E_PROTOCOL, false,
          20, "a tree rawtree, then a directory rawtree/d whose offer carries a source token (only a "
          "regular file may resume): REFUSE, protocol (nothing published)" },
        { "next-pipelined", ACT_NEXT_PIPELINED, HELLO_OK, "sess-b.dat", 2, WIRE_RESULT, WIRE_OK, false, 20,
          "a session of 2 files: sess-a.dat whole, and sess-b.dat's offer right after its END, before its "
          "RESULT (version 8): RESULT ok and ACCEPT in either order, then sess-b.dat whole: RESULT ok" },
        { "next-third-offer", ACT_NEXT_THIRD, HELLO_OK, "sess-c.dat", 2, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a session of 3 files: sess-a.dat whole, then at once the offers of sess-b.dat and sess-c.dat, "
          "three files in flight: RESULT (or REFUSE), protocol" },
        { "tree-dest-dotdot", ACT_TREE_DEST, HELLO_OK, "../escape", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "a tree whose DEST is \"../escape\": REFUSE, name" },
        { "tree-dest-abs", ACT_TREE_DEST, HELLO_OK, "/abs", 0, WIRE_REFUSE, WIRE_E_NAME, false, 10,
          "a tree whose DEST is \"/abs\": REFUSE, name" },
        { "tree-outside", ACT_TREE_OUTSIDE, HELLO_OK, "rawtree", 0, WIRE_REFUSE, WIRE_E_NAME, false, 20,
          "a tree rawtree, then an entry \"other/x\" not beneath it: REFUSE, name (nothing published)" },
        { "tree-planted", ACT_TREE_PLANTED, HELLO_OK, "planted/t", 0, WIRE_RESULT, WIRE_E_NAME, false, 20,
          "a tree planted/t (of 2 directories) where the scenario planted a symlink planted -> /tmp "
          "in the incoming directory: RESULT, name (nothing published through it)" },
        { "tree-link-shadow", ACT_TREE_LINK_SHADOW, HELLO_OK, "rawlink", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false,
          20, "a tree rawlink: a symlink rawlink/l -> sub (safe), then a directory rawlink/l of the same "
          "name: RESULT, protocol (the link is never made over it, nothing published)" },
        { "tree-link-under", ACT_TREE_LINK_UNDER, HELLO_OK, "rawlink", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false,
          20, "a tree rawlink: a symlink rawlink/l -> /tmp (the scenario allows any), then a file "
          "rawlink/l/x beneath it: RESULT, protocol (no entry goes through a link: nothing in /tmp)" },
        { "pack-dotdot", ACT_PACK_DOTDOT, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a tree rawpack, then a pack of 2 entries whose file is \"rawpack/../f\": RESULT, protocol "
          "(nothing published)" },
        { "pack-past-end", ACT_PACK_PAST_END, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a tree rawpack, then a pack of 2 entries whose file's size runs 1 byte past the pack: RESULT, "
          "protocol (nothing published)" },
        { "pack-hash", ACT_PACK_HASH, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a tree rawpack, then a well-formed pack of 2 entries whose offer carries another pack hash: "
          "RESULT, protocol (nothing published)" },
        { "pack-link-outside", ACT_PACK_LINK_OUTSIDE, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_NAME, false,
          20, "a tree rawpack, then a pack of 2 entries whose second is a symlink rawpack/d/l -> "
          "../../../etc (tree_symlinks safe): RESULT, name (nothing published)" },
        { "pack-hard-dir", ACT_PACK_HARD_DIR, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a tree rawpack, then a pack of 2 entries: directory rawpack/d and a hard link rawpack/h to it: "
          "RESULT, protocol (nothing published)" },
        { "pack-hard-other", ACT_PACK_HARD_OTHER, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_NAME, false, 20,
          "a tree rawpack, then a pack of 2 entries whose second is a hard link rawpack/d/h to another "
          "tree's file, other/x: RESULT, name (nothing published)" },
        { "pack-xattrs", ACT_PACK_XATTRS, HELLO_OK, "rawpack", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "a tree rawpack into the drop box, then a pack of 2 entries whose file's record carries a user.* "
          "attribute (wire 27, a landing's only): RESULT, protocol (nothing published)" },
        { "xattr-part", ACT_XATTR_PART, HELLO_OK, "rawpack", 1, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 20,
          "a tree rawpack into the drop box, then an XATTR part (wire 27, a landing's only) and the next "
          "offer: REFUSE, protocol (or hang-up; nothing published)" },
        { "next-bad-mac", ACT_NEXT_BAD_MAC, HELLO_OK, "sess-b.dat", 2, WIRE_REFUSE, WIRE_E_AUTH, false, 20,
          "(--key) a session of 3 files: sess-a.dat whole, then file 2's offer with a wrong MAC: REFUSE, "
          "auth" },
        { "published-retry", ACT_PUBLISHED_RETRY, HELLO_OK, "rawpeer-published.dat", 3, WIRE_RESULT, WIRE_OK,
          false, 20,
          "a transfer with a source token (RESULT ok), then on a new connection the same transfer again, "
          "as a sender whose RESULT was lost: ACCEPT published, every lane resumed at its end, only the "
          "ENDs: RESULT ok; then the same name as another transfer: file exists" },
        { "resume-idle", ACT_RESUME_IDLE, HELLO_OK, "rawpeer-idle.dat", 8, WIRE_RESULT, WIRE_OK, false, 20,
          "half a file with a source token, then a hang-up (the receiver keeps a partial); then 3 attempts "
          "that resume it and hang up without a byte (issue 32 M2): the 4th is not resumed" },
        { "route-hash", ACT_ROUTE_HASH, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_PROTOCOL, false, 10,
          "a ROUTE of one hop, then an OFFER whose route hash is another route's: REFUSE, protocol "
          "(auth with --key)" },
        { "route-unnamed", ACT_ROUTE_UNNAMED, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_PROTOCOL, false, 10,
          "a ROUTE of one hop, then an OFFER that names no route: REFUSE, protocol" },
        { "route-loopback", ACT_ROUTE_LOOPBACK, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_DENIED, false, 10,
          "(issue 32 M3; relay = yes) a ROUTE whose hop is 127.0.0.1, named by the offer: REFUSE, denied" },
        { "route-repeat", ACT_ROUTE_REPEAT, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_DENIED, false, 10,
          "(issue 32 M3; relay = yes) a ROUTE that names one hop twice (a loop), named by the offer: "
          "REFUSE, denied" },
        { "route-outside", ACT_ROUTE_OUTSIDE, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_DENIED, false, 10,
          "(issue 32 M3; relay = yes, relay_peers without 198.18.0.99) a ROUTE to 198.18.0.99, named by "
          "the offer: REFUSE, denied" },
        { "route-twice", ACT_ROUTE_TWICE, HELLO_OK, "routed.dat", 0, WIRE_REFUSE, WIRE_E_PROTOCOL, true, 10,
          "two ROUTEs before the offer: REFUSE, protocol (or hang-up)" },
        { "route-rest-order", ACT_ROUTE_REST_ORDER, HELLO_OK, "routed.dat", 1, WIRE_RESULT, WIRE_E_PROTOCOL, true,
          10, "a route of 28 hops: after the ACCEPT, its first part again instead of the rest: RESULT, protocol" },
        { "route-rest-hash", ACT_ROUTE_REST_HASH, HELLO_OK, "routed.dat", 1, WIRE_RESULT, WIRE_E_PROTOCOL, true,
          10, "a route of 28 hops: after the ACCEPT, a last hop the offer's route hash does not cover: RESULT, "
          "protocol" },
        { "route-rest-missing", ACT_ROUTE_REST_MISSING, HELLO_OK, "routed.dat", 1, WIRE_RESULT, WIRE_E_PROTOCOL,
          true, 10, "a route of 28 hops: after the ACCEPT, the data and END without the rest of the route: "
          "RESULT, protocol" },
        { "tree-published-retry", ACT_TREE_PUBLISHED_RETRY, HELLO_OK, "rawpeer-tree", 1, WIRE_RESULT, WIRE_OK,
          false, 20,
          "a tree of 2 entries (DEST and a 100-byte file f) with the job's token, RESULT ok; then on a new "
          "connection the same job again, as a sender whose last RESULT was lost: DEST's ACCEPT says both "
          "entries are there (RESUMED, 2), only DEST's END: RESULT ok, the session's last; then another "
          "job of the same DEST: exists" },
        { "tree-kept-link", ACT_TREE_KEPT_LINK, HELLO_OK, "rawkept", 1, WIRE_RESULT, WIRE_E_PROTOCOL, false, 20,
          "(issue 32, H1; tree_symlinks = any, a kept tree) a tree of 4 entries, DEST, x/, a symlink x/l to "
          "--target and a second symlink of that name: publishing fails (two links of one name) and the "
          "tree is kept; then the same job again, continued after what was kept, whose last entry is a file "
          "x/l/VICTIM: never made through the link an attempt made (RESULT protocol: x/l is not there "
          "now), nothing written where it points" },
};

/* Returned by mode_run when the process should die on the spot. */
enum { MODE_VANISH = 2 };

/*
 * Wait for the receiver's verdict on what we did, unless @ev already says
 * what came first (0: nothing yet). Right: md->verdict with md->expect, or
 * (when md->hangup_ok) a hang-up or a failed send. 0 when right, else 1.
 */
static int expect_verdict(struct rawconn *c, const struct mode *md, int timeout_ms, int ev)
{
        struct wire_msg m;
        unsigned int status;

        if (ev == 0)
                ev = rawconn_next(c, timeout_ms, &m);
        else if (ev == RAWCONN_MSG)
                rawconn_next(c, 0, &m);
        /* A relay tells how its route gets on (PROGRESS): not a verdict. */
        while (ev == RAWCONN_MSG && m.type == WIRE_PROGRESS)
                ev = rawconn_next(c, timeout_ms, &m);
        switch (ev) {
        case RAWCONN_MSG:
                if (m.type == WIRE_RESULT && c->session.on && auth_result_verify(&c->session, 0, &m.result) < 0) {
                        printf("rawpeer: %s: the receiver's RESULT does not prove the key\n", md->name);
                        return 1;
                }
                status = m.type == WIRE_REFUSE ? m.refuse.status : m.result.status;
                if (m.type == md->verdict && status == md->expect)
                        return 0;
                printf("rawpeer: %s: wanted %s with status %u (%s)\n", md->name,
                       md->verdict == WIRE_REFUSE ? "REFUSE" : "RESULT", md->expect,
                       wire_status_str(md->expect));
                return 1;
        case RAWCONN_DISCONNECTED:
        case RAWCONN_SEND_ERROR:
                if (md->hangup_ok)
                        return 0;
                printf("rawpeer: %s: the receiver hung up without a verdict\n", md->name);
                return 1;
        case RAWCONN_TIMEOUT:
                printf("rawpeer: %s: no reaction within %d s\n", md->name, timeout_ms / 1000);
                return 1;
        default:
                fprintf(stderr, "rawpeer: %s: %s\n", md->name, strerror(ev < 0 ? -ev : EINVAL));
                return 1;
        }
}

static uint16_t offer_flags;     /* the next first offer's (a tree's: WIRE_OFFER_TREE | DIR) */

/* Post the first OFFER @o_msg (its MAC made here, with a key); 0 once
 * ACCEPTed (the ACCEPT in *@acc if not NULL), else the rawconn_event (a
 * message stays queued) or -errno. */
static int send_offer_msg(struct rawconn *c, const struct wire_msg *o_msg, struct wire_accept *acc)
{
        struct wire_msg o = *o_msg, m;
        int ev;

        if (c->key.len) {
                auth_nonce(o.offer.nonce);
                auth_offer_mac(&c->key, c->welcome.nonce, &c->binding, &o.offer, o.offer.mac);
                auth_session_derive(&c->session, &c->key, c->welcome.nonce, &o.offer);
        }
        ev = rawconn_send_ctrl(c, &o);
        if (ev != 0)
                return ev;
        /* Look at the answer without taking it: a refusal is the caller's to judge. */
        ev = rawconn_wait(c, 10000);
        if (ev == RAWCONN_MSG && rawconn_peek(c)->type == WIRE_ACCEPT) {
                rawconn_next(c, 0, &m);
                if (c->session.on && auth_accept_verify(&c->session, &m.accept) < 0) {
                        printf("rawpeer: the receiver's ACCEPT does not prove the key\n");
                        return -EACCES;
                }
                if (acc)
                        *acc = m.accept;
                return 0;
        }
        return ev;
}

/* Post an OFFER for @lanes lanes (its token: c->token); 0 once ACCEPTed
 * (granted lanes in *@granted if not NULL), else as send_offer_msg(). */
static int send_offer_job(struct rawconn *c, const char *name, uint32_t chunk, uint64_t size,
                          uint16_t lanes, uint16_t *granted, uint32_t job_files, uint64_t job_bytes)
{
        struct wire_msg o = { .type = WIRE_OFFER };
        struct wire_accept a;
        int ev;

        o.offer.flags = offer_flags;
        /* A tree's DEST, as xferctl offers one made by mkdir. */
        o.offer.mode = (offer_flags & WIRE_OFFER_TREE) ? 0755 : 0;
        o.offer.transfer_id = (uint64_t)getpid();
        o.offer.size = size;
        o.offer.chunk_size = chunk;
        o.offer.lanes = lanes;
        o.offer.job_files = job_files;
        o.offer.job_bytes = job_bytes;
        memcpy(o.offer.token, c->token, WIRE_TOKEN_SIZE);
        snprintf(o.offer.name, sizeof(o.offer.name), "%s", name);
        ev = send_offer_msg(c, &o, &a);
        if (ev == 0 && granted)
                *granted = a.lanes;
        return ev;
}

static int send_offer_lanes(struct rawconn *c, const char *name, uint32_t chunk, uint64_t size,
                            uint16_t lanes, uint16_t *granted)
{
        return send_offer_job(c, name, chunk, size, lanes, granted, 1, size);
}

static int send_offer(struct rawconn *c, const char *name, uint32_t chunk, uint64_t size)
{
        return send_offer_lanes(c, name, chunk, size, 1, NULL);
}

/*
 * A session of 3 files: the first, sess-a.dat, honestly and whole (its
 * RESULT "ok" on lane 0, the session open), then a later offer that breaks
 * the session's rules as md->act says. 0 when the receiver refused it as
 * it must, else 1.
 */
/* A directory entry of a tree, after its ACCEPT: only ENDs, then its RESULT
 * (left queued when @last: the caller judges the verdict). 0, or 1 (said). */
static int tree_dir_done(struct rawconn *c, const struct mode *md, uint32_t file, int timeout_ms, bool last)
{
        struct wire_msg end = { .type = WIRE_END }, m;
        struct digest d = DIGEST_NULL;
        int r;

        if (digest_init(&d) < 0)
                return 1;
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.file = file;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        r = rawconn_send_ctrl(c, &end);
        if (r == 0 && last)
                return 0;
        if (r == 0)
                r = rawconn_next(c, timeout_ms, &m);
        if (r != RAWCONN_MSG || m.type != WIRE_RESULT || m.result.status != WIRE_OK || m.result.file != file) {
                printf("rawpeer: %s: no RESULT ok for entry %u (event %d)\n", md->name, file + 1, r);
                return 1;
        }
        return 0;
}

/* The offer after a route-* mode's ROUTE: one chunk of md->file. */
static void route_offer(const struct rawconn *c, const struct mode *md, uint32_t chunk, struct wire_msg *o)
{
        o->offer.transfer_id = (uint64_t)getpid();
        o->offer.size = chunk;
        o->offer.chunk_size = chunk;
        o->offer.lanes = 1;
        o->offer.job_files = 1;
        o->offer.job_bytes = chunk;
        memcpy(o->offer.token, c->token, WIRE_TOKEN_SIZE);
        snprintf(o->offer.name, sizeof(o->offer.name), "%s", md->file);
}

/* A relay chain's ROUTE (route-*, wire.h "Relay chains"), then what
 * breaks its rules. 0 when the receiver refused as it must, else 1. */
static int route_hostile(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        struct sockaddr_in hop = {
                .sin_family = AF_INET,
                .sin_port = htons(7471),
                .sin_addr.s_addr = htonl(0xc6120063),   /* 198.18.0.99: never reached */
        };
        struct wire_msg rt = { .type = WIRE_ROUTE }, o = { .type = WIRE_OFFER };
        int r;

        rt.route.total = 1;
        rt.route.hops = 1;
        if (md->act == ACT_ROUTE_LOOPBACK)
                hop.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        wire_hop_set(&rt.route.hop[0], (const struct sockaddr *)&hop);
        if (md->act == ACT_ROUTE_REPEAT) {
                rt.route.total = rt.route.hops = 2;
                rt.route.hop[1] = rt.route.hop[0];
        }
        r = rawconn_send_ctrl(c, &rt);
        /* The second waits for the CREDIT the first earns. */
        if (r == 0 && md->act == ACT_ROUTE_TWICE)
                r = rawconn_send_ctrl(c, &rt);
        if (r != 0 || md->act == ACT_ROUTE_TWICE)
                return expect_verdict(c, md, timeout_ms, r);
        route_offer(c, md, chunk, &o);
        if (md->act == ACT_ROUTE_HASH) {
                rt.route.hop[0].port++;
                o.offer.flags = WIRE_OFFER_ROUTE;
                wire_route_hash(rt.route.hop, rt.route.hops, o.offer.route_hash);
        }
        /* Named by the offer, hash and all: only where it goes is wrong. */
        if (md->act == ACT_ROUTE_LOOPBACK || md->act == ACT_ROUTE_REPEAT || md->act == ACT_ROUTE_OUTSIDE) {
                o.offer.flags = WIRE_OFFER_ROUTE;
                wire_route_hash(rt.route.hop, rt.route.hops, o.offer.route_hash);
        }
        r = send_offer_msg(c, &o, NULL);
        if (r == 0) {
                printf("rawpeer: %s: the receiver ACCEPTED the offer\n", md->name);
                return 1;
        }
        return expect_verdict(c, md, timeout_ms, r);
}

/*
 * A route longer than one ROUTE message (route-rest-*, wire.h "Relay
 * chains", version 11): its first part and an offer that names the whole
 * route, accepted; then the rest out of order, or with a hop the offer's
 * hash does not cover, or not at all before lane 0's END. Every hop is
 * 198.18.0.99, never reached: the receiver relays only a whole route.
 */
static int route_rest(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        struct wire_hop route[WIRE_ROUTE_PART_MAX + 1];
        struct wire_msg rt = { .type = WIRE_ROUTE }, o = { .type = WIRE_OFFER }, end = { .type = WIRE_END };
        struct digest d;
        int r;

        for (unsigned int k = 0; k < ARRAY_SIZE(route); k++) {
                struct sockaddr_in hop = {
                        .sin_family = AF_INET,
                        .sin_port = htons((uint16_t)(7471 + k)),
                        .sin_addr.s_addr = htonl(0xc6120063),
                };

                wire_hop_set(&route[k], (const struct sockaddr *)&hop);
        }
        rt.route.total = ARRAY_SIZE(route);
        rt.route.hops = WIRE_ROUTE_PART_MAX;
        memcpy(rt.route.hop, route, WIRE_ROUTE_PART_MAX * sizeof(*route));
        r = rawconn_send_ctrl(c, &rt);
        if (r != 0)
                return expect_verdict(c, md, timeout_ms, r);
        o.offer.flags = WIRE_OFFER_ROUTE;
        route_offer(c, md, chunk, &o);
        wire_route_hash(route, ARRAY_SIZE(route), o.offer.route_hash);
        r = send_offer_msg(c, &o, NULL);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept an offer of a 28-hop route\n", md->name);
                if (r == RAWCONN_MSG)
                        expect_verdict(c, md, 0, r);    /* prints it */
                return 1;
        }
        switch (md->act) {
        case ACT_ROUTE_REST_ORDER:
                rt.route.hops = 1;      /* hop 0 again, where hop 27 is due */
                return expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &rt));
        case ACT_ROUTE_REST_HASH:
                route[WIRE_ROUTE_PART_MAX].port++;
                rt.route.first = WIRE_ROUTE_PART_MAX;
                rt.route.hops = 1;
                rt.route.hop[0] = route[WIRE_ROUTE_PART_MAX];
                return expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &rt));
        default:
                break;
        }
        r = rawconn_send_chunk(c, chunk, chunk, 0);
        if (r != 0)
                return expect_verdict(c, md, timeout_ms, r);
        if (digest_init(&d) < 0)
                return 1;
        digest_update(&d, rawconn_data(c), chunk);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.bytes = chunk;
        return expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &end));
}

/* Trees with a hostile destination or entry (tree-*). */
static int tree_hostile(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        struct wire_msg o = { .type = WIRE_OFFER };
        int r;

        offer_flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        r = send_offer_job(c, md->file, chunk, 0, 1, NULL, 2, 0);
        offer_flags = 0;
        if (md->act == ACT_TREE_DEST) {
                if (r == 0)
                        printf("rawpeer: %s: the receiver ACCEPTED the destination\n", md->name);
                return r == 0 ? 1 : expect_verdict(c, md, timeout_ms, r);
        }
        if (r != 0 || tree_dir_done(c, md, 0, timeout_ms, false) != 0) {
                printf("rawpeer: %s: the receiver did not take the tree's DEST %s\n", md->name, md->file);
                return 1;
        }
        o.offer.transfer_id = (uint64_t)getpid();
        o.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        o.offer.mode = 0755;
        o.offer.chunk_size = chunk;
        o.offer.lanes = 1;
        o.offer.file = 1;
        o.offer.job_files = 2;
        snprintf(o.offer.name, sizeof(o.offer.name), "%s",
                 md->act == ACT_TREE_OUTSIDE ? "other/x" : md->act == ACT_TREE_DIR_SOURCE ? "rawtree/d" : "planted/t/d");
        if (md->act == ACT_TREE_DIR_SOURCE)
                memset(o.offer.source, 0x5a, WIRE_SOURCE_SIZE);
        if (c->session.on)
                auth_next_offer_mac(&c->session, &o.offer, o.offer.mac);
        r = rawconn_send_ctrl(c, &o);
        if (md->act == ACT_TREE_OUTSIDE || md->act == ACT_TREE_DIR_SOURCE)
                return expect_verdict(c, md, timeout_ms, r);
        if (r == 0)
                r = rawconn_next(c, timeout_ms, &(struct wire_msg){ 0 });
        if (r != RAWCONN_MSG) {
                printf("rawpeer: %s: no ACCEPT for the tree's second directory (event %d)\n", md->name, r);
                return 1;
        }
        /* The last entry: the tree is renamed into place, through the planted symlink. */
        if (tree_dir_done(c, md, 1, timeout_ms, true) != 0)
                return 1;
        return expect_verdict(c, md, timeout_ms, 0);
}

/*
 * A tree (pack-*): DEST, then one pack of its 2 other entries (a
 * directory and a 100-byte file), offered, sent and ENDed as an honest
 * sender would, but broken as md->act says. 0 when the receiver's verdict
 * is md's, else 1.
 */
static int next_offer(struct rawconn *c, const char *name, uint16_t flags, uint64_t size, uint32_t file,
                      uint32_t files, uint64_t job_bytes, uint32_t chunk);

static int pack_hostile(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        _cleanup_(pack_writer_deinit) struct pack_writer w = PACK_WRITER_NULL;
        struct wire_msg o = { .type = WIRE_OFFER }, end = { .type = WIRE_END }, m;
        char dir[64], file[64];
        struct digest d = DIGEST_NULL;
        uint8_t *data = NULL, *buf;
        int r;

        offer_flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        r = send_offer_job(c, md->file, chunk, 0, 1, NULL, 3, 100);
        offer_flags = 0;
        if (r != 0 || tree_dir_done(c, md, 0, timeout_ms, false) != 0) {
                printf("rawpeer: %s: the receiver did not take the tree's DEST %s\n", md->name, md->file);
                return 1;
        }
        snprintf(dir, sizeof(dir), "%s/d", md->file);
        snprintf(file, sizeof(file), "%s/%s", md->file, md->act == ACT_PACK_DOTDOT ? "../f" : "d/f");
        /* An entry's attributes in a part before its offer, in a session
         * that lands nothing as a user. */
        if (md->act == ACT_XATTR_PART) {
                m = (struct wire_msg){ .type = WIRE_XATTR };
                m.xattr.total = m.xattr.len = 3 + 6 + 1;
                memcpy(m.xattr.bytes, "\x06\x01\x00user.kv", 10);
                r = rawconn_send_ctrl(c, &m);
                if (r == 0)
                        r = next_offer(c, dir, WIRE_OFFER_TREE | WIRE_OFFER_DIR, 0, 1, 3, 100, chunk);
                return expect_verdict(c, md, timeout_ms, r);
        }
        pack_writer_init(&w);
        if (md->act == ACT_PACK_LINK_OUTSIDE) {
                static const char outside[] = "../../../etc";

                snprintf(file, sizeof(file), "%s/d/l", md->file);
                if (pack_append(&w, &(struct pack_entry){ .type = PACK_DIR, .mode = 0755, .name = dir,
                                                          .name_len = strlen(dir) }, NULL) < 0 ||
                    pack_append(&w, &(struct pack_entry){ .type = PACK_LINK, .size = sizeof(outside) - 1,
                                                          .name = file, .name_len = strlen(file) }, &data) < 0)
                        return 1;
                memcpy(data, outside, sizeof(outside) - 1);
        } else if (md->act == ACT_PACK_HARD_DIR || md->act == ACT_PACK_HARD_OTHER) {
                /* A hard link's data is its file's name: the directory, or another tree's. */
                const char *target = md->act == ACT_PACK_HARD_DIR ? dir : "other/x";

                snprintf(file, sizeof(file), "%s/%s", md->file, md->act == ACT_PACK_HARD_DIR ? "h" : "d/h");
                if (pack_append(&w, &(struct pack_entry){ .type = PACK_DIR, .mode = 0755, .name = dir,
                                                          .name_len = strlen(dir) }, NULL) < 0 ||
                    pack_append(&w, &(struct pack_entry){ .type = PACK_LINK, .flags = PACK_F_HARD,
                                                          .size = strlen(target), .name = file,
                                                          .name_len = strlen(file) }, &data) < 0)
                        return 1;
                memcpy(data, target, strlen(target));
        } else {
                uint8_t x[32];
                size_t xl = 0;

                /* A landing's attributes, where none go (ACT_PACK_XATTRS). */
                (void)xattrs_put(x, sizeof(x), &xl, "user.k", "v", 1);
                if (pack_append(&w, &(struct pack_entry){ .type = PACK_DIR, .mode = 0755, .name = dir,
                                                          .name_len = strlen(dir) }, NULL) < 0 ||
                    pack_append(&w, &(struct pack_entry){ .type = PACK_FILE, .mode = 0644, .size = 100,
                                                          .name = file, .name_len = strlen(file),
                                                          .flags = md->act == ACT_PACK_XATTRS ? PACK_F_XATTRS : 0,
                                                          .xattrs = md->act == ACT_PACK_XATTRS ? x : NULL,
                                                          .xattrs_len = md->act == ACT_PACK_XATTRS ? (uint16_t)xl : 0 },
                                &data) < 0)
                        return 1;
                memset(data, 0x61, 100);
        }
        o.offer.pack_entries = 2;
        pack_writer_hash(&w, o.offer.pack_hash);
        if (md->act == ACT_PACK_HASH)
                o.offer.pack_hash[0] ^= 0x01;
        /* The file's size field, the last 8 bytes of its header. */
        if (md->act == ACT_PACK_PAST_END)
                data[-(ptrdiff_t)strlen(file) - 8] += 1;
        /* Our data area (rawconn_alloc_send's), written before it is posted. */
        buf = (uint8_t *)rawconn_data(c);
        memcpy(buf, w.buf, w.len);
        o.offer.transfer_id = (uint64_t)getpid();
        o.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        o.offer.size = w.len;
        o.offer.chunk_size = chunk;
        o.offer.lanes = 1;
        o.offer.file = 1;
        o.offer.job_files = 3;
        o.offer.job_bytes = 100;
        snprintf(o.offer.name, sizeof(o.offer.name), "%s", md->file);
        if (c->session.on)
                auth_next_offer_mac(&c->session, &o.offer, o.offer.mac);
        r = rawconn_send_ctrl(c, &o);
        if (r == 0)
                r = rawconn_next(c, timeout_ms, &m);
        if (r != RAWCONN_MSG || m.type != WIRE_ACCEPT || m.accept.file != 1) {
                printf("rawpeer: %s: no ACCEPT for the pack (event %d)\n", md->name, r);
                return 1;
        }
        r = rawconn_send_chunk(c, w.len, chunk, 0);
        if (r != 0)
                return expect_verdict(c, md, timeout_ms, r);
        if (digest_init(&d) < 0)
                return 1;
        digest_update(&d, buf, w.len);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.file = 1;
        end.end.bytes = w.len;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        return expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &end));
}

/* A later OFFER of the session, @flags beside WIRE_OFFER_TREE's: 0, or what
 * rawconn_send_ctrl() said. */
static int next_offer(struct rawconn *c, const char *name, uint16_t flags, uint64_t size, uint32_t file,
                      uint32_t files, uint64_t job_bytes, uint32_t chunk)
{
        struct wire_msg o = { .type = WIRE_OFFER };

        o.offer.transfer_id = (uint64_t)getpid();
        o.offer.flags = flags;
        /* A tree's entries carry their modes exact (wire.h, version 14): a
         * directory's and a file's as mkdir and an editor make them. */
        if ((flags & WIRE_OFFER_TREE) && !(flags & (WIRE_OFFER_LINK | WIRE_OFFER_PACK)))
                o.offer.mode = (flags & WIRE_OFFER_DIR) ? 0755 : 0644;
        o.offer.size = size;
        o.offer.chunk_size = chunk;
        o.offer.lanes = 1;
        o.offer.file = file;
        o.offer.job_files = files;
        o.offer.job_bytes = job_bytes;
        snprintf(o.offer.name, sizeof(o.offer.name), "%s", name);
        if (c->session.on)
                auth_next_offer_mac(&c->session, &o.offer, o.offer.mac);
        return rawconn_send_ctrl(c, &o);
}

/* A later offer of a tree session: entry @file of @files, @flags, @size bytes. 0 once ACCEPTed. */
static int tree_offer_next(struct rawconn *c, const char *name, uint16_t flags, uint64_t size, uint32_t file,
                           uint32_t files, uint64_t job_bytes, uint32_t chunk, int timeout_ms)
{
        struct wire_msg m;
        int r;

        r = next_offer(c, name, (uint16_t)(WIRE_OFFER_TREE | flags), size, file, files, job_bytes, chunk);
        if (r == 0)
                r = rawconn_next(c, timeout_ms, &m);
        return r == RAWCONN_MSG && m.type == WIRE_ACCEPT && m.accept.file == file ? 0 : 1;
}

/* Entry @file's data, @len bytes of @data in one chunk, then its END; its
 * RESULT ok unless @last (left for the caller). 0, or 1. */
static int tree_data_done(struct rawconn *c, const void *data, size_t len, uint32_t file, uint32_t chunk,
                          int timeout_ms, bool last)
{
        struct wire_msg end = { .type = WIRE_END }, m;
        struct digest d = DIGEST_NULL;
        int r;

        memcpy(rawconn_data_fill(c), data, len);
        r = rawconn_send_chunk(c, len, chunk, 0);
        if (r != 0 || digest_init(&d) < 0)
                return 1;
        digest_update(&d, data, len);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.file = file;
        end.end.bytes = len;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        r = rawconn_send_ctrl(c, &end);
        if (r != 0)
                return 1;
        if (last)
                return 0;
        r = rawconn_next(c, timeout_ms, &m);
        return r == RAWCONN_MSG && m.type == WIRE_RESULT && m.result.status == WIRE_OK && m.result.file == file ?
               0 : 1;
}

/*
 * A tree of 3 entries whose second is a symlink rawlink/l, and whose third
 * would use that name: a directory of the same name (tree-link-shadow) or
 * a file beneath it (tree-link-under). The receiver makes links only at
 * the end, each where no link is on the way: the job fails, nothing is
 * published, nothing is written where the link points.
 */
static int tree_link(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        const char *target = md->act == ACT_TREE_LINK_UNDER ? "/tmp" : "sub";
        static const char x[] = "gotcha\n";
        uint64_t job_bytes = strlen(target) + sizeof(x) - 1;

        offer_flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        if (send_offer_job(c, md->file, chunk, 0, 1, NULL, 3, job_bytes) != 0 ||
            tree_dir_done(c, md, 0, timeout_ms, false) != 0) {
                offer_flags = 0;
                printf("rawpeer: %s: the receiver did not take the tree's DEST %s\n", md->name, md->file);
                return 1;
        }
        offer_flags = 0;
        if (tree_offer_next(c, "rawlink/l", WIRE_OFFER_LINK, strlen(target), 1, 3, job_bytes, chunk,
                            timeout_ms) != 0 ||
            tree_data_done(c, target, strlen(target), 1, chunk, timeout_ms, false) != 0) {
                printf("rawpeer: %s: the receiver did not take the symlink rawlink/l -> %s\n", md->name, target);
                return 1;
        }
        printf("rawpeer: %s: symlink rawlink/l -> %s taken\n", md->name, target);
        if (md->act == ACT_TREE_LINK_SHADOW) {
                if (tree_offer_next(c, "rawlink/l", WIRE_OFFER_DIR, 0, 2, 3, job_bytes, chunk, timeout_ms) != 0 ||
                    tree_dir_done(c, md, 2, timeout_ms, true) != 0) {
                        printf("rawpeer: %s: no ACCEPT for the directory rawlink/l\n", md->name);
                        return 1;
                }
                return expect_verdict(c, md, timeout_ms, 0);
        }
        /* Beneath the link: refused at once, or failing when it is put in place. */
        if (tree_offer_next(c, "rawlink/l/x", 0, sizeof(x) - 1, 2, 3, job_bytes, chunk, timeout_ms) != 0)
                return expect_verdict(c, md, timeout_ms, RAWCONN_MSG);
        if (tree_data_done(c, x, sizeof(x) - 1, 2, chunk, timeout_ms, true) != 0)
                return 1;
        return expect_verdict(c, md, timeout_ms, 0);
}

/*
 * Version 7: sess-a.dat's END is out; the next offer goes at once, before
 * its RESULT (and with ACT_NEXT_THIRD a third one too, which the receiver
 * must refuse). Its RESULT and the next ACCEPT may come in either order;
 * then sess-b.dat goes whole (@end: sess-a.dat's, the same bytes).
 */
static int session_pipelined(struct rawconn *c, const struct mode *md, uint32_t chunk, uint64_t size,
                             uint64_t job_bytes, struct wire_msg *end, int timeout_ms)
{
        bool third = md->act == ACT_NEXT_THIRD, result0 = false, accept1 = false;
        uint32_t files = third ? 3 : 2;
        struct wire_msg m;
        int r;

        r = next_offer(c, "sess-b.dat", 0, size, 1, files, job_bytes, chunk);
        if (r == 0 && third)
                r = next_offer(c, md->file, 0, size, 2, files, job_bytes, chunk);
        if (r != 0)
                return expect_verdict(c, md, timeout_ms, r);
        while (third || !result0 || !accept1) {
                unsigned int status;

                r = rawconn_next(c, timeout_ms, &m);
                if (r != RAWCONN_MSG)
                        return expect_verdict(c, md, timeout_ms, r);
                status = m.type == WIRE_REFUSE ? m.refuse.status : m.type == WIRE_RESULT ? m.result.status : 0;
                if (m.type == WIRE_RESULT && status == WIRE_OK && m.result.file == 0 && !result0 &&
                    (!c->session.on || auth_result_verify(&c->session, 0, &m.result) == 0)) {
                        printf("rawpeer: %s: sess-a.dat published\n", md->name);
                        result0 = true;
                        continue;
                }
                if (m.type == WIRE_ACCEPT && m.accept.file == 1 && !accept1 &&
                    (!c->session.on || auth_accept_verify(&c->session, &m.accept) == 0)) {
                        printf("rawpeer: %s: sess-b.dat accepted%s\n", md->name,
                               result0 ? "" : " before sess-a.dat's RESULT");
                        accept1 = true;
                        continue;
                }
                if (third && (m.type == WIRE_REFUSE || m.type == WIRE_RESULT) && status == WIRE_E_PROTOCOL) {
                        printf("rawpeer: %s: the third file in flight was refused\n", md->name);
                        return 0;
                }
                printf("rawpeer: %s: unexpected message %u (status %u)\n", md->name, m.type, status);
                return 1;
        }
        for (uint32_t seq = 0; seq < 2; seq++) {
                r = rawconn_send_chunk(c, size, chunk, seq);
                if (r != 0)
                        return expect_verdict(c, md, timeout_ms, r);
        }
        end->end.file = 1;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end->end, end->end.mac);
        r = rawconn_send_ctrl(c, end);
        return expect_verdict(c, md, timeout_ms, r);
}

static int session_next(struct rawconn *c, const struct mode *md, uint32_t chunk, int timeout_ms)
{
        uint64_t size = (uint64_t)chunk + chunk / 2;
        uint32_t files = md->act == ACT_NEXT_PIPELINED ? 2 : 3;
        uint64_t job_bytes = md->act == ACT_NEXT_MORE_BYTES ? size + 1 :
                             md->act == ACT_NEXT_WAIT ? 16ull << 40 : files * size;
        struct wire_msg o = { .type = WIRE_OFFER }, end = { .type = WIRE_END }, m;
        struct digest d = DIGEST_NULL;
        int r;

        r = send_offer_job(c, "sess-a.dat", chunk, size, 1, NULL, files, job_bytes);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept the session's first offer\n", md->name);
                return 1;
        }
        for (uint32_t seq = 0; seq < 2; seq++) {
                r = rawconn_send_chunk(c, size, chunk, seq);
                if (r != 0)
                        return expect_verdict(c, md, timeout_ms, r);
        }
        if (digest_init(&d) < 0)
                return 1;
        digest_update(&d, rawconn_data(c), size);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.bytes = size;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        r = rawconn_send_ctrl(c, &end);
        if (r == 0 && (md->act == ACT_NEXT_PIPELINED || md->act == ACT_NEXT_THIRD))
                return session_pipelined(c, md, chunk, size, job_bytes, &end, timeout_ms);
        if (r == 0)
                r = rawconn_next(c, timeout_ms, &m);
        if (r != RAWCONN_MSG || m.type != WIRE_RESULT || m.result.status != WIRE_OK || m.result.file != 0 ||
            (c->session.on && auth_result_verify(&c->session, 0, &m.result) < 0)) {
                printf("rawpeer: %s: no proven RESULT ok for the session's first file (event %d)\n", md->name, r);
                return 1;
        }
        printf("rawpeer: %s: sess-a.dat published, the session goes on\n", md->name);
        if (md->act == ACT_NEXT_WAIT) {
                struct wire_msg w = { .type = WIRE_WAIT, .wait.file = 1 };
                uint64_t t0 = clock_usec(CLOCK_MONOTONIC);

                /* "The next file is coming", a second at a time, for as
                 * long as the receiver listens (or our verdict wait). */
                do {
                        r = rawconn_send_ctrl(c, &w);
                        if (r == 0)
                                r = rawconn_wait(c, 1000);
                } while (r == RAWCONN_TIMEOUT && clock_usec(CLOCK_MONOTONIC) - t0 < (uint64_t)timeout_ms * 1000u);
                printf("rawpeer: %s: WAIT a second for %.1f s, then: event %d\n", md->name,
                       (double)(clock_usec(CLOCK_MONOTONIC) - t0) / 1e6, r);
                return expect_verdict(c, md, timeout_ms, r == RAWCONN_TIMEOUT ? RAWCONN_TIMEOUT : r);
        }
        o.offer.transfer_id = (uint64_t)getpid();
        o.offer.size = md->act == ACT_NEXT_MORE_BYTES ? 4096 : size;
        o.offer.chunk_size = chunk;
        o.offer.lanes = 1;
        o.offer.file = md->act == ACT_NEXT_WRONG_FILE ? 2 : 1;
        o.offer.job_files = 3;
        o.offer.job_bytes = job_bytes;
        snprintf(o.offer.name, sizeof(o.offer.name), "%s", md->file);
        if (c->session.on)
                auth_next_offer_mac(&c->session, &o.offer, o.offer.mac);
        if (md->act == ACT_NEXT_BAD_MAC)
                o.offer.mac[0] ^= 0x01;
        r = rawconn_send_ctrl(c, &o);
        if (r == 0) {
                r = rawconn_wait(c, timeout_ms);
                if (r == RAWCONN_MSG && rawconn_peek(c)->type == WIRE_ACCEPT) {
                        printf("rawpeer: %s: the receiver ACCEPTED the offer\n", md->name);
                        return 1;
                }
        }
        return expect_verdict(c, md, timeout_ms, r);
}

/*
 * A valid offer over two lanes (with a fresh token), and @l1 made ready to
 * join as lane 1 with that token and the session. 0, or 1 (said why). The
 * offer is for at least 128 MiB whatever @size: a lane is granted only
 * with 8 chunks and a block of its own (wire.h).
 */
static int offer_two_lanes(struct rawconn *c, const struct mode *md, uint32_t chunk, uint64_t size,
                           struct rawconn *l1)
{
        uint16_t granted = 0;
        int r;

        size = MAX(size, 2ull * WIRE_GROUP_SIZE);
        if (getrandom(c->token, sizeof(c->token), 0) != (ssize_t)sizeof(c->token))
                memset(c->token, 0x42, sizeof(c->token));
        r = send_offer_lanes(c, md->file, chunk, size, 2, &granted);
        if (r != 0 || granted != 2) {
                printf("rawpeer: %s: the receiver did not grant 2 lanes (%d, %u)\n", md->name, r, granted);
                return 1;
        }
        l1->lane = 1;
        memcpy(l1->token, c->token, sizeof(l1->token));
        l1->session = c->session;
        return 0;
}

/*
 * Offer over two lanes, connect lane 1 with the offer's token, and send on
 * it a chunk of lane 0's run: the receiver must fail the transfer.
 */
static int lane_trespass(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                         uint32_t chunk, uint64_t size, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn l1 = RAWCONN_NULL;
        struct wire_reject rj;
        int r;

        if (offer_two_lanes(c, md, chunk, size, &l1))
                return 1;
        l1.claim_key = c->key.len > 0;
        if (rawconn_setup(&l1, o->src, o->dst, o->port) < 0 ||
            rawconn_connect(&l1, HELLO_LANE, &rj) != 0 || rawconn_alloc_send(&l1, chunk) < 0) {
                printf("rawpeer: %s: lane 1 could not join\n", md->name);
                return 1;
        }
        /* Chunk 0 is lane 0's; lane 1's run starts half-way. */
        r = rawconn_send_chunk(&l1, chunk, chunk, 0);
        r = expect_verdict(c, md, timeout_ms, r);
        if (l1.established && !l1.disconnected)
                rdma_disconnect(l1.id);
        return r;
}

/*
 * One chunk, then nothing for @o->every_s, and again: never silent for a
 * whole peer_timeout, and never done (the last chunk is never sent). The
 * receiver must cut it off with a RESULT.
 */
static int trickle(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                   uint32_t chunk, uint64_t size, int timeout_ms)
{
        int every_ms = 1000 * (o->every_s ? o->every_s : RAWPEER_TRICKLE_SEC);
        uint64_t t0 = clock_usec(CLOCK_MONOTONIC);
        uint32_t seq;
        int r;

        for (seq = 0; seq + 1 < md->chunks; seq++) {
                r = rawconn_send_chunk(c, size, chunk, seq);
                if (r == 0 && clock_usec(CLOCK_MONOTONIC) - t0 < (uint64_t)timeout_ms * 1000)
                        r = rawconn_wait(c, every_ms);
                if (r == RAWCONN_TIMEOUT)
                        continue;
                if (r == 0)
                        break;          /* out of time */
                printf("rawpeer: %s: %u chunks of %u bytes in %.1f s, then:\n", md->name, seq + 1,
                       chunk, (double)(clock_usec(CLOCK_MONOTONIC) - t0) / 1e6);
                return expect_verdict(c, md, timeout_ms, r);
        }
        printf("rawpeer: %s: still accepted after %.1f s of a chunk every %d s\n", md->name,
               (double)(clock_usec(CLOCK_MONOTONIC) - t0) / 1e6, every_ms / 1000);
        return 1;
}

/* An OFFER carrying a MAC made for another nonce (@other, a second
 * connection) or another binding (relay-offer): it must be refused. */
static int replayed_offer(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                          uint32_t chunk, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn other = RAWCONN_NULL;
        struct wire_msg m = { .type = WIRE_OFFER };
        struct wire_binding bd = c->binding;
        const uint8_t *nonce = c->welcome.nonce;
        struct wire_reject rj;
        int r;

        if (md->act == ACT_REPLAY_NONCE) {
                /* The connection the offer was "captured" on: its own nonce. */
                other.claim_key = true;
                if (rawconn_setup(&other, o->src, o->dst, o->port) < 0 ||
                    rawconn_connect(&other, HELLO_OK, &rj) != 0) {
                        printf("rawpeer: %s: the second connection failed\n", md->name);
                        return 1;
                }
                nonce = other.welcome.nonce;
                bd = other.binding;
        } else {
                /* As the receiver's neighbour at the next port would have seen it. */
                bd.port++;
        }
        m.offer.transfer_id = (uint64_t)getpid();
        m.offer.size = 4096;
        m.offer.chunk_size = chunk;
        m.offer.lanes = 1;
        m.offer.job_files = 1;
        m.offer.job_bytes = 4096;
        snprintf(m.offer.name, sizeof(m.offer.name), "%s", md->file);
        auth_nonce(m.offer.nonce);
        auth_offer_mac(&c->key, nonce, &bd, &m.offer, m.offer.mac);
        r = expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &m));
        if (other.established && !other.disconnected)
                rdma_disconnect(other.id);
        return r;
}

/* A valid 2-lane offer, then lane 1 with the token and a wrong tag. */
static int bad_lane_mac(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                        uint32_t chunk, uint64_t size)
{
        _cleanup_(rawconn_deinit) struct rawconn l1 = RAWCONN_NULL;
        struct wire_reject rj;
        int r;

        if (offer_two_lanes(c, md, chunk, size, &l1))
                return 1;
        l1.claim_key = true;
        l1.bad_tag = true;
        if (rawconn_setup(&l1, o->src, o->dst, o->port) < 0)
                return 1;
        r = rawconn_connect(&l1, HELLO_LANE, &rj);
        if (r == RAWCONN_REJECTED && rj.status == md->expect)
                return 0;
        printf("rawpeer: %s: wanted lane 1 REJECTed with status %u (%s)\n", md->name, md->expect,
               wire_status_str(md->expect));
        return 1;
}

/*
 * Stand in for a receiver (M) between a keyed sender (B, which connects
 * to us) and a keyed receiver (C, at --dst): C's nonce goes to B, B's
 * offer to C. C must refuse it (B's MAC names B -> M, not M -> C), and B,
 * answered with an ACCEPT that proves no key, must hang up without
 * sending anything past its offer. We hold no key.
 */
static int relay(const struct rawpeer_opts *o, const struct mode *md, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn b = RAWCONN_NULL;
        _cleanup_(rawconn_deinit) struct rawconn c = RAWCONN_NULL;
        struct wire_msg m, acc = { .type = WIRE_ACCEPT, .credits = 8 };
        struct wire_welcome w;
        struct wire_reject rj;
        struct wire_hello h;
        int ev;

        if (rawconn_listen(&b, o->dst, o->listen_port) < 0)
                return 1;
        printf("rawpeer: relay: listening on %s:%u\n", o->dst, o->listen_port);
        if (rawconn_accept_req(&b, timeout_ms, &h) < 0)
                return 1;
        if (!(h.flags & WIRE_HELLO_KEY)) {
                printf("rawpeer: relay: the sender holds no key: nothing to relay\n");
                return 1;
        }
        c.claim_key = true;
        if (rawconn_setup(&c, o->src, o->dst, o->port) < 0 || rawconn_connect(&c, HELLO_OK, &rj) != 0 ||
            !(c.welcome.flags & WIRE_WELCOME_AUTH)) {
                printf("rawpeer: relay: no keyed receiver at %s:%u\n", o->dst, o->port);
                return 1;
        }
        if (rawconn_alloc_send(&c, 0) < 0 || rawconn_alloc_send(&b, 0) < 0)
                return 1;
        w = c.welcome;
        w.credits = 1;
        if (rawconn_accept(&b, &w) < 0)
                return 1;
        b.credits = RAWCONN_RECVS;
        ev = rawconn_next(&b, 10000, &m);
        if (ev != RAWCONN_MSG || m.type != WIRE_OFFER) {
                printf("rawpeer: relay: the sender made no offer\n");
                return 1;
        }
        printf("rawpeer: relay: the sender offered %s (%" PRIu64 " bytes), MACed for the receiver's "
               "nonce; passing it on\n", m.offer.name, m.offer.size);
        if (expect_verdict(&c, md, timeout_ms, rawconn_send_ctrl(&c, &m)) != 0) {
                printf("rawpeer: relay: the receiver took the relayed offer\n");
                return 1;
        }
        /* Now the sender: an ACCEPT with credits but no proof of the key. */
        acc.accept.lanes = 1;
        ev = rawconn_send_ctrl(&b, &acc);
        if (ev == 0)
                ev = rawconn_wait(&b, timeout_ms);
        if (ev == RAWCONN_DISCONNECTED && b.nrecv == 1) {
                printf("rawpeer: relay: the sender hung up on the unproven ACCEPT, nothing sent past its offer\n");
                return 0;
        }
        printf("rawpeer: relay: the sender went on (event %d, %u messages from it)\n", ev, b.nrecv);
        return 1;
}

/*
 * verdict-trickle: a receiver that says "still verifying" (an empty
 * CREDIT, as a receiver publishing does every second) for ever after the
 * sender's END, and never gives its RESULT. The sender must give up by
 * itself: 0 when it hung up within @timeout_ms of its END (the time it
 * took printed), else 1.
 */
static int verdict_trickle(const struct rawpeer_opts *o, const struct mode *md, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn b = RAWCONN_NULL;
        struct wire_welcome w = { .credits = RAWCONN_RECVS, .slot_size = WIRE_CTRL_MAX };
        struct wire_msg m, acc = { .type = WIRE_ACCEPT }, credit = { .type = WIRE_CREDIT };
        struct wire_hello h;
        uint64_t t_end;
        unsigned int sent = 0;
        int ev;

        if (rawconn_listen(&b, o->dst, o->listen_port) < 0)
                return 1;
        printf("rawpeer: %s: listening on %s:%u\n", md->name, o->dst, o->listen_port);
        if (rawconn_accept_req(&b, timeout_ms, &h) < 0 || rawconn_alloc_send(&b, 0) < 0 ||
            rawconn_accept(&b, &w) < 0)
                return 1;
        /* The sender reposts a receive for each of our messages it takes. */
        b.credits = UINT32_MAX;
        ev = rawconn_next(&b, 10000, &m);
        if (ev != RAWCONN_MSG || m.type != WIRE_OFFER || m.offer.size != 0) {
                printf("rawpeer: %s: the sender made no offer of an empty file\n", md->name);
                return 1;
        }
        acc.accept.lanes = 1;
        if (rawconn_send_ctrl(&b, &acc) != 0)
                return 1;
        ev = rawconn_next(&b, 10000, &m);
        if (ev != RAWCONN_MSG || m.type != WIRE_END) {
                printf("rawpeer: %s: the sender sent no END (event %d)\n", md->name, ev);
                return 1;
        }
        t_end = clock_usec(CLOCK_MONOTONIC);
        for (;;) {
                uint64_t took = clock_usec(CLOCK_MONOTONIC) - t_end;

                if (took > (uint64_t)timeout_ms * 1000u) {
                        printf("rawpeer: %s: %u empty CREDITs over %.1f s, and the sender still waits\n",
                               md->name, sent, (double)took / 1e6);
                        return 1;
                }
                ev = rawconn_send_ctrl(&b, &credit);
                if (ev == 0) {
                        sent++;
                        ev = rawconn_wait(&b, 1000);
                }
                if (ev == RAWCONN_DISCONNECTED || ev == RAWCONN_SEND_ERROR || ev < 0) {
                        printf("rawpeer: %s: the sender hung up after %u empty CREDITs, %.1f s after "
                               "its END\n", md->name, sent,
                               (double)(clock_usec(CLOCK_MONOTONIC) - t_end) / 1e6);
                        return 0;
                }
                if (ev == RAWCONN_MSG) {
                        (void)rawconn_next(&b, 0, &m);
                        printf("rawpeer: %s: the sender sent a message of type %u while waiting\n",
                               md->name, m.type);
                }
        }
}

/* A new connection to the receiver, for the same transfer again. 0 or 1 (said). */
/* Another connection as @c's sender, with the same key and token, and a
 * send buffer of @data_len bytes for data (0: control messages only). */
static int reconnect(struct rawconn *n, const struct rawconn *c, const struct rawpeer_opts *o,
                     const struct mode *md, size_t data_len)
{
        struct wire_reject rj;

        n->key = c->key;
        memcpy(n->token, c->token, WIRE_TOKEN_SIZE);
        if (rawconn_setup(n, o->src, o->dst, o->port) < 0 || rawconn_connect(n, HELLO_OK, &rj) != 0 ||
            rawconn_alloc_send(n, data_len) < 0) {
                printf("rawpeer: %s: could not connect again\n", md->name);
                return 1;
        }
        return 0;
}

/* Another transfer's offer of the same name, on @other, whose send gave
 * @r: refused (or failed), "exists", then hung up. 0, or 1 (said). */
static int refused_exists(struct rawconn *other, const struct mode *md, int r)
{
        struct wire_msg m;

        if (r != RAWCONN_MSG || rawconn_next(other, 0, &m) != RAWCONN_MSG ||
            (m.type == WIRE_REFUSE ? m.refuse.status : m.type == WIRE_RESULT ? m.result.status : WIRE_OK) !=
                    WIRE_E_EXISTS) {
                printf("rawpeer: %s: wanted another transfer's %s refused, exists (event %d)\n", md->name,
                       md->file, r);
                return 1;
        }
        if (!other->disconnected)
                rdma_disconnect(other->id);
        return 0;
}

/* md->file alone on one lane, as a sender that may retry: @source fills
 * its source token (rdmaxferd(8), Resuming). */
static void retry_offer(struct wire_msg *off, const struct rawconn *c, const struct mode *md, uint32_t chunk,
                        uint64_t size, uint8_t source)
{
        off->offer.transfer_id = (uint64_t)getpid();
        off->offer.size = size;
        off->offer.chunk_size = chunk;
        off->offer.lanes = 1;
        off->offer.job_files = 1;
        off->offer.job_bytes = size;
        memcpy(off->offer.token, c->token, WIRE_TOKEN_SIZE);
        memset(off->offer.source, source, WIRE_SOURCE_SIZE);
        snprintf(off->offer.name, sizeof(off->offer.name), "%s", md->file);
}

/*
 * Resume's "published already" (rdmaxferd(8), Resuming): md->file whole,
 * as a sender that may retry (a source token); then, on a new connection,
 * the same transfer (id, token, name, size) as if its RESULT was lost:
 * ACCEPT with WIRE_ACCEPT_PUBLISHED and every lane at the end of its run,
 * the same ENDs again, RESULT ok. Then the name offered by another
 * transfer: REFUSE (or RESULT), exists. 0 when all of it held, else 1.
 */
static int published_retry(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                           uint32_t chunk, uint64_t size, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn again = RAWCONN_NULL;
        _cleanup_(rawconn_deinit) struct rawconn other = RAWCONN_NULL;
        struct wire_msg off = { .type = WIRE_OFFER }, end = { .type = WIRE_END }, m;
        struct digest d = DIGEST_NULL;
        struct wire_accept a;
        uint64_t first, last;
        int r;

        retry_offer(&off, c, md, chunk, size, 0xa5);

        /* 1. The transfer, whole. */
        r = send_offer_msg(c, &off, &a);
        if (r != 0 || a.lanes != 1 || a.flags != 0 || a.resume[0] != 0) {
                printf("rawpeer: %s: the receiver did not accept %s as a new transfer\n", md->name, md->file);
                return 1;
        }
        for (uint32_t seq = 0; seq < md->chunks; seq++) {
                r = rawconn_send_chunk(c, size, chunk, seq);
                if (r != 0)
                        return expect_verdict(c, md, timeout_ms, r);
        }
        if (digest_init(&d) < 0)
                return 1;
        digest_update(&d, rawconn_data(c), size);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.bytes = size;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        if (expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &end)) != 0)
                return 1;
        printf("rawpeer: %s: transfer %" PRIu64 " published %s; offering it again, as a retry\n", md->name,
               off.offer.transfer_id, md->file);
        if (!c->disconnected)
                rdma_disconnect(c->id);

        /* 2. The same transfer again: published already. */
        if (reconnect(&again, c, o, md, 0) != 0)
                return 1;
        r = send_offer_msg(&again, &off, &a);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept the retry\n", md->name);
                if (r == RAWCONN_MSG)
                        rawconn_next(&again, 0, &m);    /* prints it */
                return 1;
        }
        wire_lane_range(md->chunks, chunk, a.lanes, 0, &first, &last);
        printf("rawpeer: %s: ACCEPT flags 0x%04x, %u lane(s), lane 0 resumes at chunk %u of %" PRIu64 "\n",
               md->name, a.flags, a.lanes, a.resume[0], last - first);
        if (!(a.flags & WIRE_ACCEPT_PUBLISHED) || a.lanes != 1 || a.resume[0] != last - first) {
                printf("rawpeer: %s: wanted ACCEPT published, lane 0 resumed at its end\n", md->name);
                return 1;
        }
        if (again.session.on)
                auth_end_mac(&again.session, 0, &end.end, end.end.mac);
        if (expect_verdict(&again, md, timeout_ms, rawconn_send_ctrl(&again, &end)) != 0)
                return 1;
        printf("rawpeer: %s: RESULT ok for the retry, only its END sent\n", md->name);
        if (!again.disconnected)
                rdma_disconnect(again.id);

        /* 3. Another transfer of the same name: the file exists. */
        if (reconnect(&other, c, o, md, 0) != 0)
                return 1;
        off.offer.transfer_id++;
        r = send_offer_msg(&other, &off, &a);
        if (r == 0) {
                printf("rawpeer: %s: the receiver ACCEPTED another transfer of %s\n", md->name, md->file);
                return 1;
        }
        return refused_exists(&other, md, r);
}

/*
 * Issue 32 M2, the resume's grace: the first half of md->file as a sender
 * that may retry (a source token), then a hang-up: the receiver keeps a
 * partial. Then attempts that resume it (ACCEPT, lane 0 past chunk 0) and
 * hang up without sending a byte, each of which would have had the time
 * to read back what was kept; after 3 (PARTIAL_IDLE_MAX) the next offer is
 * not resumed: ACCEPT with lane 0 at chunk 0. 0 when all of it held.
 */
static int resume_idle(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md, uint32_t chunk,
                       uint64_t size)
{
        struct wire_msg off = { .type = WIRE_OFFER };
        struct wire_accept a;
        int r;

        retry_offer(&off, c, md, chunk, size, 0x5e);

        r = send_offer_msg(c, &off, &a);
        if (r != 0 || a.lanes != 1 || a.resume[0] != 0) {
                printf("rawpeer: %s: the receiver did not accept %s as a new transfer\n", md->name, md->file);
                return 1;
        }
        for (uint32_t seq = 0; seq < md->chunks / 2; seq++) {
                if (rawconn_send_chunk(c, size, chunk, seq) != 0) {
                        printf("rawpeer: %s: sending chunk %u failed\n", md->name, seq);
                        return 1;
                }
        }
        /* Its writes done before the hang-up: what it keeps is what came. */
        sleep(1);
        rdma_disconnect(c->id);
        printf("rawpeer: %s: %u of %u chunks sent, then a hang-up\n", md->name, md->chunks / 2, md->chunks);

        for (unsigned int i = 0; i <= 3; i++) {
                _cleanup_(rawconn_deinit) struct rawconn again = RAWCONN_NULL;

                if (reconnect(&again, c, o, md, 0) != 0)
                        return 1;
                r = send_offer_msg(&again, &off, &a);
                if (r != 0) {
                        printf("rawpeer: %s: attempt %u: the receiver did not accept the retry\n", md->name, i + 2);
                        return 1;
                }
                printf("rawpeer: %s: attempt %u: ACCEPT, lane 0 resumes at chunk %u\n", md->name, i + 2, a.resume[0]);
                if (i < 3 && a.resume[0] == 0) {
                        printf("rawpeer: %s: attempt %u was not resumed; wanted a resume\n", md->name, i + 2);
                        return 1;
                }
                if (i == 3 && a.resume[0] != 0) {
                        printf("rawpeer: %s: resumed after 3 attempts that sent nothing\n", md->name);
                        return 1;
                }
                rdma_disconnect(again.id);
        }
        printf("rawpeer: %s: after 3 idle resumes the partial is gone: sent again from chunk 0\n", md->name);
        return 0;
}

/* DEST's offer, on @c, of a tree job of @files entries and @bytes bytes
 * (its token; @source fills its source token). */
static int tree_dest_offer(struct rawconn *c, const struct mode *md, uint32_t chunk, uint32_t files,
                           uint64_t bytes, uint8_t source, struct wire_accept *a)
{
        struct wire_msg off = { .type = WIRE_OFFER };

        off.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        off.offer.mode = 0755;
        off.offer.transfer_id = (uint64_t)getpid();
        off.offer.chunk_size = chunk;
        off.offer.lanes = 1;
        off.offer.job_files = files;
        off.offer.job_bytes = bytes;
        memcpy(off.offer.token, c->token, WIRE_TOKEN_SIZE);
        memset(off.offer.source, source, WIRE_SOURCE_SIZE);
        snprintf(off.offer.name, sizeof(off.offer.name), "%s", md->file);
        return send_offer_msg(c, &off, a);
}

/*
 * Resuming a tree, "published already" (rdmaxferd(8)): md->file/f, a tree
 * of 2 entries, whole, as a sender that may retry (the job's token on
 * DEST's offer); then, on a new connection, the same job again, as if its
 * last RESULT was lost: DEST's ACCEPT RESUMED with resume[0] = 2 (every
 * entry there), DEST's END, RESULT ok as the session's last. Then another
 * job (another token) to the same DEST: exists. 0 when all of it held.
 */
static int tree_published_retry(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                                uint32_t chunk, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn again = RAWCONN_NULL;
        _cleanup_(rawconn_deinit) struct rawconn other = RAWCONN_NULL;
        char name[WIRE_NAME_MAX + 1];
        uint8_t data[100];
        struct wire_accept a;
        struct wire_msg m;
        int r;

        /* 1. The tree, whole. */
        memset(data, 'r', sizeof(data));
        snprintf(name, sizeof(name), "%s/f", md->file);
        r = tree_dest_offer(c, md, chunk, 2, 100, 0xa6, &a);
        if (r != 0 || a.flags != 0 || tree_dir_done(c, md, 0, timeout_ms, false) != 0 ||
            tree_offer_next(c, name, 0, sizeof(data), 1, 2, sizeof(data), chunk, timeout_ms) != 0 ||
            tree_data_done(c, data, sizeof(data), 1, chunk, timeout_ms, true) != 0) {
                printf("rawpeer: %s: the receiver did not take the tree %s as a new job\n", md->name, md->file);
                return 1;
        }
        r = rawconn_next(c, timeout_ms, &m);
        if (r != RAWCONN_MSG || m.type != WIRE_RESULT || m.result.status != WIRE_OK || m.result.file != 1) {
                printf("rawpeer: %s: no RESULT ok for the tree's last entry (event %d)\n", md->name, r);
                return 1;
        }
        printf("rawpeer: %s: tree %s published; offering the job again, as a retry\n", md->name, md->file);
        if (!c->disconnected)
                rdma_disconnect(c->id);

        /* 2. The same job again: every entry is there. */
        if (reconnect(&again, c, o, md, 0) != 0)
                return 1;
        r = tree_dest_offer(&again, md, chunk, 2, 100, 0xa6, &a);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept the retry\n", md->name);
                if (r == RAWCONN_MSG)
                        rawconn_next(&again, 0, &m);    /* prints it */
                return 1;
        }
        printf("rawpeer: %s: ACCEPT flags 0x%04x, resume[0] %u\n", md->name, a.flags, a.resume[0]);
        if (a.flags != WIRE_ACCEPT_RESUMED || a.resume[0] != 2) {
                printf("rawpeer: %s: wanted ACCEPT resumed with both entries there\n", md->name);
                return 1;
        }
        if (tree_dir_done(&again, md, 0, timeout_ms, true) != 0 || expect_verdict(&again, md, timeout_ms, 0) != 0)
                return 1;
        printf("rawpeer: %s: RESULT ok for DEST, the session's last\n", md->name);
        if (!again.disconnected)
                rdma_disconnect(again.id);

        /* 3. Another job to the same DEST: it exists. */
        if (reconnect(&other, c, o, md, 0) != 0)
                return 1;
        r = tree_dest_offer(&other, md, chunk, 2, 100, 0xa7, &a);
        if (r == 0) {
                printf("rawpeer: %s: the receiver ACCEPTED another job's tree %s\n", md->name, md->file);
                return 1;
        }
        return refused_exists(&other, md, r);
}

/*
 * Issue 32, H1: a kept tree must never hold a symlink the daemon made
 * while a later attempt makes entries beneath it. Attempt 1: DEST, x/, a
 * symlink x/l to @o->target (absolute: tree_symlinks = any), and a second
 * symlink x/l: the links are made when the tree is published, the second
 * fails (two of one name), and the tree stays kept for the job's next
 * attempt (a protocol error may pass). Attempt 2, the same job: DEST's
 * ACCEPT says 3 entries are kept; the 4th offered is a file x/l/VICTIM.
 * The receiver must not make it through x/l: 0 when it is refused (or its
 * publishing fails) and the sender is told, nothing written at @o->target.
 */
static int tree_kept_link(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md,
                          uint32_t chunk, int timeout_ms)
{
        _cleanup_(rawconn_deinit) struct rawconn again = RAWCONN_NULL;
        static const char victim[] = "gotcha\n";
        const char *target = o->target ? o->target : "/tmp";
        uint64_t job_bytes = 2 * strlen(target) + sizeof(victim) - 1;
        char x[WIRE_NAME_MAX + 1], l[WIRE_NAME_MAX + 1], v[WIRE_NAME_MAX + 1];
        struct wire_accept a;
        struct wire_msg m;
        int r;

        snprintf(x, sizeof(x), "%s/x", md->file);
        snprintf(l, sizeof(l), "%s/x/l", md->file);
        snprintf(v, sizeof(v), "%s/x/l/VICTIM", md->file);
        r = tree_dest_offer(c, md, chunk, 4, job_bytes, 0xa8, &a);
        if (r != 0 || tree_dir_done(c, md, 0, timeout_ms, false) != 0 ||
            tree_offer_next(c, x, WIRE_OFFER_DIR, 0, 1, 4, job_bytes, chunk, timeout_ms) != 0 ||
            tree_dir_done(c, md, 1, timeout_ms, false) != 0 ||
            tree_offer_next(c, l, WIRE_OFFER_LINK, strlen(target), 2, 4, job_bytes, chunk, timeout_ms) != 0 ||
            tree_data_done(c, target, strlen(target), 2, chunk, timeout_ms, false) != 0 ||
            tree_offer_next(c, l, WIRE_OFFER_LINK, strlen(target), 3, 4, job_bytes, chunk, timeout_ms) != 0 ||
            tree_data_done(c, target, strlen(target), 3, chunk, timeout_ms, true) != 0) {
                printf("rawpeer: %s: the receiver did not take the first attempt's entries\n", md->name);
                return 1;
        }
        r = rawconn_next(c, timeout_ms, &m);
        if (r != RAWCONN_MSG || m.type != WIRE_RESULT || m.result.status == WIRE_OK) {
                printf("rawpeer: %s: the first attempt was published (event %d)\n", md->name, r);
                return 1;
        }
        printf("rawpeer: %s: first attempt failed as it must: %s: %s\n", md->name, wire_status_str(m.result.status),
               m.result.text);
        if (!c->disconnected)
                rdma_disconnect(c->id);

        if (reconnect(&again, c, o, md, chunk) != 0)
                return 1;
        r = tree_dest_offer(&again, md, chunk, 4, job_bytes, 0xa8, &a);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept the job again\n", md->name);
                return 1;
        }
        printf("rawpeer: %s: ACCEPT flags 0x%04x, resume[0] %u\n", md->name, a.flags, a.resume[0]);
        if (a.flags != WIRE_ACCEPT_RESUMED || a.resume[0] != 3) {
                printf("rawpeer: %s: wanted the kept tree continued after 3 entries\n", md->name);
                return 1;
        }
        if (tree_dir_done(&again, md, 0, timeout_ms, false) != 0)
                return 1;
        /* Refused at once, or its publishing fails: either way a verdict, never ok. */
        r = tree_offer_next(&again, v, 0, sizeof(victim) - 1, 3, 4, job_bytes, chunk, timeout_ms);
        if (r == 0 && tree_data_done(&again, victim, sizeof(victim) - 1, 3, chunk, timeout_ms, true) != 0)
                return 1;
        return expect_verdict(&again, md, timeout_ms, r == 0 ? 0 : RAWCONN_MSG);
}

static int mode_run(struct rawconn *c, const struct rawpeer_opts *o, const struct mode *md, int timeout_ms)
{
        uint32_t chunk = MIN(c->welcome.slot_size, RAWPEER_CHUNK_MAX);
        uint64_t size = md->chunks ? (uint64_t)(md->chunks - 1) * chunk + chunk / 2 : 0;
        uint32_t nchunks = md->chunks;
        struct wire_msg end = { .type = WIRE_END };
        struct digest d = DIGEST_NULL;
        uint8_t junk[100];
        int r;

        switch (md->act) {
        case ACT_HELLO:
                return 1;       /* handled at connect */
        case ACT_IDLE:
                return expect_verdict(c, md, timeout_ms, 0);
        case ACT_NAME:
                r = send_offer(c, md->file, chunk, 4096);
                if (r == 0)
                        printf("rawpeer: %s: the receiver ACCEPTED the name\n", md->name);
                return r == 0 ? 1 : expect_verdict(c, md, timeout_ms, r);
        case ACT_HUGE:
                r = send_offer(c, md->file, chunk, UINT64_MAX);
                if (r == 0)
                        printf("rawpeer: %s: the receiver ACCEPTED %" PRIu64 " bytes\n", md->name, UINT64_MAX);
                return r == 0 ? 1 : expect_verdict(c, md, timeout_ms, r);
        case ACT_TINY_CHUNK:
                r = send_offer(c, md->file, 1, 4096);
                if (r == 0)
                        printf("rawpeer: %s: the receiver ACCEPTED 1-byte chunks\n", md->name);
                return r == 0 ? 1 : expect_verdict(c, md, timeout_ms, r);
        case ACT_GARBAGE_CTRL:
                if (getrandom(junk, sizeof(junk), 0) != (ssize_t)sizeof(junk))
                        memset(junk, 0x5a, sizeof(junk));
                junk[0] = (uint8_t)~(WIRE_MAGIC & 0xff);        /* never our magic by chance */
                return expect_verdict(c, md, timeout_ms, rawconn_send_raw(c, junk, sizeof(junk)));
        case ACT_DATA_FIRST:
                return expect_verdict(c, md, timeout_ms, rawconn_send_chunk(c, chunk, chunk, 0));
        case ACT_OVERSIZE:
                /* Chunks as large as a slot, so the offer itself is fine. */
                chunk = c->welcome.slot_size;
                size = (uint64_t)chunk * md->chunks;
                break;
        case ACT_LANE_TRESPASS:
                return lane_trespass(c, o, md, chunk, size, timeout_ms);
        case ACT_REPLAY_NONCE:
        case ACT_RELAY_OFFER:
                return replayed_offer(c, o, md, chunk, timeout_ms);
        case ACT_BAD_LANE_MAC:
                return bad_lane_mac(c, o, md, chunk, size);
        case ACT_NEXT_WRONG_FILE:
        case ACT_NEXT_MORE_BYTES:
        case ACT_NEXT_BAD_MAC:
        case ACT_NEXT_PIPELINED:
        case ACT_NEXT_THIRD:
        case ACT_NEXT_WAIT:
                return session_next(c, md, chunk, timeout_ms);
        case ACT_TREE_DEST:
        case ACT_TREE_OUTSIDE:
        case ACT_TREE_DIR_SOURCE:
        case ACT_TREE_PLANTED:
                return tree_hostile(c, md, chunk, timeout_ms);
        case ACT_TREE_LINK_SHADOW:
        case ACT_TREE_LINK_UNDER:
                return tree_link(c, md, chunk, timeout_ms);
        case ACT_PACK_DOTDOT:
        case ACT_PACK_PAST_END:
        case ACT_PACK_HASH:
        case ACT_PACK_LINK_OUTSIDE:
        case ACT_PACK_HARD_DIR:
        case ACT_PACK_HARD_OTHER:
        case ACT_PACK_XATTRS:
        case ACT_XATTR_PART:
                return pack_hostile(c, md, chunk, timeout_ms);
        case ACT_PUBLISHED_RETRY:
                return published_retry(c, o, md, chunk, size, timeout_ms);
        case ACT_RESUME_IDLE:
                return resume_idle(c, o, md, chunk, size);
        case ACT_TREE_KEPT_LINK:
                return tree_kept_link(c, o, md, chunk, timeout_ms);
        case ACT_TREE_PUBLISHED_RETRY:
                return tree_published_retry(c, o, md, chunk, timeout_ms);
        case ACT_ROUTE_HASH:
        case ACT_ROUTE_UNNAMED:
        case ACT_ROUTE_TWICE:
        case ACT_ROUTE_LOOPBACK:
        case ACT_ROUTE_REPEAT:
        case ACT_ROUTE_OUTSIDE:
                return route_hostile(c, md, chunk, timeout_ms);
        case ACT_ROUTE_REST_ORDER:
        case ACT_ROUTE_REST_HASH:
        case ACT_ROUTE_REST_MISSING:
                return route_rest(c, md, chunk, timeout_ms);
        default:
                break;
        }

        r = send_offer(c, md->file, chunk, size);
        if (r != 0) {
                printf("rawpeer: %s: the receiver did not accept a valid offer\n", md->name);
                if (r == RAWCONN_MSG)
                        expect_verdict(c, md, 0, r);    /* prints it */
                return 1;
        }

        switch (md->act) {
        case ACT_OUT_OF_ORDER:
                return expect_verdict(c, md, timeout_ms, rawconn_send_chunk(c, size, chunk, 1));
        case ACT_OFFER_TWICE:
                r = rawconn_send_chunk(c, size, chunk, 0);
                if (r == 0)
                        r = send_offer(c, md->file, chunk, size);
                if (r == 0)
                        printf("rawpeer: %s: the receiver ACCEPTED a second offer\n", md->name);
                return r == 0 ? 1 : expect_verdict(c, md, timeout_ms, r);
        case ACT_OVERSIZE:
                return expect_verdict(c, md, timeout_ms, rawconn_send_data(c, 0, chunk + 4096, 0));
        case ACT_STALL:
                return expect_verdict(c, md, timeout_ms, 0);
        case ACT_TRICKLE:
                return trickle(c, o, md, chunk, size, timeout_ms);
        case ACT_SHORT:
                nchunks--;
                break;
        case ACT_VANISH:
                nchunks /= 2;
                break;
        default:
                break;
        }
        for (uint32_t seq = 0; seq < nchunks; seq++) {
                r = rawconn_send_chunk(c, size, chunk, seq);
                if (r != 0)
                        return expect_verdict(c, md, timeout_ms, r);
        }
        if (md->act == ACT_VANISH) {
                /* Let the data land, then die without END and without hanging up ourselves. */
                if (rawconn_flush_sends(c, 10000) < 0) {
                        printf("rawpeer: %s: the data did not go out\n", md->name);
                        return 1;
                }
                printf("rawpeer: %s: %u of %u chunks sent, exiting without END\n", md->name, nchunks,
                       md->chunks);
                return MODE_VANISH;
        }

        if (digest_init(&d) < 0)
                return 1;
        digest_update(&d, rawconn_data(c), size);
        digest_final(&d, end.end.digest);
        digest_deinit(&d);
        end.end.bytes = size;
        if (md->act == ACT_BAD_CHECKSUM)
                end.end.digest[0] ^= 0x01;
        if (c->session.on)
                auth_end_mac(&c->session, 0, &end.end, end.end.mac);
        if (md->act == ACT_BAD_END_MAC)
                end.end.mac[0] ^= 0x01;
        return expect_verdict(c, md, timeout_ms, rawconn_send_ctrl(c, &end));
}

static const struct mode *mode_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
                if (strcmp(modes[i].name, name) == 0)
                        return &modes[i];
        return NULL;
}

static void usage(FILE *f)
{
        fprintf(f, "Usage: rawpeer --src ADDR --dst ADDR [--port N] [--timeout SEC] [--key FILE]\n"
                   "               [--every SEC] MODE\n"
                   "               [--listen-port N] MODE\n"
                   "               [--target PATH] tree-kept-link\n"
                   "Connect to the rdmaxferd receiving at ADDR and misbehave as MODE says.\n"
                   "Exit 0 if the receiver reacted as it must, 1 if not, 2 on a usage error.\n\n"
                   "Modes:\n");
        for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
                fprintf(f, "  %-18s %s\n", modes[i].name, modes[i].help);
        fprintf(f, "\nModes marked (--key) need the receiver's key; without it they say so and fail.\n");
}

static int rawpeer_main(const struct rawpeer_opts *o, const struct mode *md)
{
        _cleanup_(rawconn_deinit) struct rawconn c = RAWCONN_NULL;
        struct wire_reject rj;
        size_t data_len;
        int timeout_ms = 1000 * (o->timeout_s ? o->timeout_s : md->timeout_s);
        char err[256];
        int r;

        if (md->act == ACT_RELAY)
                return relay(o, md, timeout_ms);
        if (md->act == ACT_VERDICT_TRICKLE)
                return verdict_trickle(o, md, timeout_ms);
        if (o->key_file && auth_key_load(&c.key, o->key_file, err, sizeof(err)) < 0) {
                fprintf(stderr, "rawpeer: %s\n", err);
                return 1;
        }
        if (!c.key.len && (md->act == ACT_REPLAY_NONCE || md->act == ACT_RELAY_OFFER ||
                           md->act == ACT_BAD_LANE_MAC || md->act == ACT_BAD_END_MAC ||
                           md->act == ACT_NEXT_BAD_MAC)) {
                fprintf(stderr, "rawpeer: %s needs --key\n", md->name);
                return 1;
        }
        if (rawconn_setup(&c, o->src, o->dst, o->port) < 0)
                return 1;
        r = rawconn_connect(&c, md->hello, &rj);
        if (md->act == ACT_HELLO) {
                if (r == RAWCONN_REJECTED && rj.status == md->expect)
                        return 0;
                printf("rawpeer: %s: wanted a REJECT with status %u (%s)\n", md->name, md->expect,
                       wire_status_str(md->expect));
                return 1;
        }
        if (r != 0) {
                printf("rawpeer: %s: could not connect\n", md->name);
                return 1;
        }
        /* The file's bytes; oversize needs one slot and 4 KiB more. */
        data_len = (size_t)md->chunks * RAWPEER_CHUNK_MAX;
        if (md->act == ACT_OVERSIZE)
                data_len = (size_t)c.welcome.slot_size + 4096;
        if (rawconn_alloc_send(&c, data_len) < 0)
                return 1;

        r = mode_run(&c, o, md, timeout_ms);
        if (r == MODE_VANISH) {
                /* No cleanup, no rdma_disconnect: the kernel tears down what we leave. */
                fflush(stdout);
                _exit(0);
        }
        if (c.established && !c.disconnected)
                rdma_disconnect(c.id);
        return r;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "src", required_argument, NULL, 's' },
                { "dst", required_argument, NULL, 'd' },
                { "port", required_argument, NULL, 'p' },
                { "timeout", required_argument, NULL, 't' },
                { "key", required_argument, NULL, 'k' },
                { "every", required_argument, NULL, 'e' },
                { "listen-port", required_argument, NULL, 'l' },
                { "target", required_argument, NULL, 'T' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct rawpeer_opts o = { .port = CONFIG_DEFAULT_PORT };
        const struct mode *md;
        char *endp;
        long v;
        int c, r;

        while ((c = getopt_long(argc, argv, "s:d:p:t:k:e:l:T:h", longopts, NULL)) >= 0) {
                switch (c) {
                case 's':
                        o.src = optarg;
                        break;
                case 'd':
                        o.dst = optarg;
                        break;
                case 'p':
                case 't':
                case 'e':
                case 'l':
                        errno = 0;
                        v = strtol(optarg, &endp, 10);
                        if (errno || *endp || v < 1 || v > (c == 'p' || c == 'l' ? 65535 : 3600)) {
                                fprintf(stderr, "rawpeer: bad --%s: %s\n",
                                        c == 'p' ? "port" : c == 'l' ? "listen-port" :
                                        c == 't' ? "timeout" : "every", optarg);
                                return 2;
                        }
                        if (c == 'p')
                                o.port = (unsigned int)v;
                        else if (c == 'l')
                                o.listen_port = (unsigned int)v;
                        else if (c == 't')
                                o.timeout_s = (int)v;
                        else
                                o.every_s = (int)v;
                        break;
                case 'k':
                        o.key_file = optarg;
                        break;
                case 'T':
                        o.target = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (!o.src || !o.dst || optind != argc - 1) {
                usage(stderr);
                return 2;
        }
        md = mode_find(argv[optind]);
        if (!md) {
                fprintf(stderr, "rawpeer: unknown mode '%s'\n", argv[optind]);
                usage(stderr);
                return 2;
        }
        if ((md->act == ACT_RELAY || md->act == ACT_VERDICT_TRICKLE) != (o.listen_port != 0)) {
                fprintf(stderr, "rawpeer: --listen-port goes with the relay and verdict-trickle modes, "
                        "and only with them\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("rawpeer: %s -> %s:%u, mode %s\n", o.src, o.dst, o.port, md->name);
        r = rawpeer_main(&o, md);
        printf("rawpeer: %s: %s\n", md->name, r == 0 ? "as expected" : "UNEXPECTED");
        return r == 0 ? 0 : 1;
}
