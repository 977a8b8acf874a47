/* The peer protocol codec: round-trips, the exact byte layout, and every hostile-input class. */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "nodeset.h"
#include "tap.h"
#include "wire.h"
#include "xattrs.h"

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* A RESULT's hop_missing as the wire carries it: 8 u64 words, lowest first. */
static void put_nodeset(uint8_t *p, const struct nodeset *s)
{
        for (unsigned int i = 0; i < NODESET_WORDS; i++)
                put64(p + 8 * i, s->w[i]);
}

/* A set of the given indices, ended by -1. */
static struct nodeset set_of(int first, ...)
{
        struct nodeset s = { { 0 } };
        va_list ap;

        va_start(ap, first);
        for (int k = first; k >= 0; k = va_arg(ap, int))
                nodeset_add(&s, (unsigned int)k);
        va_end(ap);
        return s;
}

/* memset, not an initialiser: round-trip checks memcmp whole structs, padding included. */
static void msg_reset(struct wire_msg *m, int type, uint32_t credits)
{
        memset(m, 0, sizeof(*m));
        m->type = (uint16_t)type;
        m->credits = credits;
}

static struct wire_msg sample_offer(const char *name)
{
        struct wire_msg m;

        msg_reset(&m, WIRE_OFFER, 0);
        m.offer.transfer_id = 0x0102030405060708ull;
        m.offer.size = 1ull << 40;
        m.offer.chunk_size = 1 << 20;
        m.offer.flags = 0;
        m.offer.lanes = 4;
        m.offer.file = 2;
        m.offer.job_files = 3;
        m.offer.job_bytes = (1ull << 40) + 0x0b0c;
        m.offer.mode = 0755;
        m.offer.mtime_ns = 0x1122334455667788ull;
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                m.offer.token[i] = (uint8_t)(0x30 + i);
        for (int i = 0; i < WIRE_SOURCE_SIZE; i++)
                m.offer.source[i] = (uint8_t)(0x40 + i);
        for (int i = 0; i < WIRE_NONCE_SIZE; i++)
                m.offer.nonce[i] = (uint8_t)(0x60 + i);
        for (int i = 0; i < WIRE_MAC_SIZE; i++)
                m.offer.mac[i] = (uint8_t)(0xa0 + i);
        snprintf(m.offer.name, sizeof(m.offer.name), "%s", name);
        return m;
}

/* A hop from its address as IPv6 text (IPv4 as ::ffff:a.b.c.d). */
static struct wire_hop sample_hop(const char *addr, uint16_t port)
{
        struct wire_hop h;

        memset(&h, 0, sizeof(h));
        inet_pton(AF_INET6, addr, h.addr);
        h.port = port;
        return h;
}

static struct wire_msg sample_route(void)
{
        struct wire_msg m;

        msg_reset(&m, WIRE_ROUTE, 0);
        m.route.total = 2;
        m.route.first = 0;
        m.route.hops = 2;
        m.route.hop[0] = sample_hop("::ffff:198.18.0.2", 7471);
        m.route.hop[1] = sample_hop("fd00::3", 7472);
        return m;
}

/* One valid message of every type, for the generic hostile-input loops:
 * out[] holds _WIRE_TYPE_MAX - 1 of them. */
static int sample_messages(struct wire_msg *out)
{
        int n = 0;

        out[n++] = sample_offer("report-2024.dat");
        msg_reset(&out[n], WIRE_ACCEPT, 15);
        out[n].accept.lanes = 3;
        out[n].accept.file = 70000;
        out[n].accept.flags = WIRE_ACCEPT_PUBLISHED;
        out[n].accept.resume[0] = 7;
        out[n].accept.resume[2] = 0xfffffffeu;
        memset(out[n++].accept.mac, 0x3c, WIRE_MAC_SIZE);
        msg_reset(&out[n], WIRE_REFUSE, 3);
        out[n].refuse.status = WIRE_E_EXISTS;
        snprintf(out[n++].refuse.text, sizeof(out[0].refuse.text), "file exists: report-2024.dat");
        msg_reset(&out[n++], WIRE_CREDIT, 64);
        msg_reset(&out[n], WIRE_END, 0);
        out[n].end.file = 9;
        out[n].end.bytes = 123456789;
        memset(out[n].end.digest, 0x5a, WIRE_DIGEST_SIZE);
        memset(out[n++].end.mac, 0xc3, WIRE_MAC_SIZE);
        msg_reset(&out[n], WIRE_RESULT, 1);
        out[n].result.status = WIRE_OK;
        out[n].result.file = 0x01020304;
        out[n].result.bytes = 123456789;
        out[n].result.usec = 2500000;
        memset(out[n].result.mac, 0x99, WIRE_MAC_SIZE);
        snprintf(out[n++].result.text, sizeof(out[0].result.text), "published");
        msg_reset(&out[n], WIRE_WAIT, 0);
        out[n++].wait.file = 0x0a0b0c0d;
        out[n++] = sample_route();
        msg_reset(&out[n], WIRE_PROGRESS, 0);
        out[n].progress.total = 3;
        out[n].progress.first = 0;
        out[n].progress.hops = 3;
        out[n].progress.bytes[0] = 0x0102030405060708ull;
        out[n].progress.bytes[2] = 1;
        n++;
        msg_reset(&out[n], WIRE_GONE, 1);
        out[n].gone.file = 9;
        out[n].gone.seq = 3;
        out[n].gone.kind = WIRE_GONE_LINK;
        memset(out[n].gone.mac, 0x47, WIRE_MAC_SIZE);
        snprintf(out[n++].gone.name, sizeof(out[0].gone.name), "dest/gone");
        msg_reset(&out[n], WIRE_NAME, 0);
        out[n].name.total = 300;
        out[n].name.offset = 256;
        out[n].name.len = 44;
        memset(out[n].name.bytes, 'n', 44);
        n++;
        msg_reset(&out[n], WIRE_LAND, 0);
        out[n].land.total = 600;
        out[n].land.offset = 480;
        out[n].land.len = 120;
        memset(out[n].land.bytes, 0, 120);
        out[n].land.bytes[7] = 0xff;
        n++;
        msg_reset(&out[n], WIRE_NEED, 0);
        out[n].need.file = 40;
        out[n].need.entries = 11;
        out[n].need.needed = 3;
        out[n].need.bits[0] = 0x81;
        out[n].need.bits[1] = 0x04;
        memset(out[n].need.mac, 0x4e, WIRE_MAC_SIZE);
        n++;
        msg_reset(&out[n], WIRE_XATTR, 0);
        out[n].xattr.total = 700;
        out[n].xattr.offset = 480;
        out[n].xattr.len = 220;
        memset(out[n].xattr.bytes, 0, 220);
        out[n].xattr.bytes[3] = 0x7f;
        n++;
        msg_reset(&out[n], WIRE_RULES, 0);
        out[n].rules.total = 12;
        out[n].rules.offset = 0;
        out[n].rules.len = 12;
        memcpy(out[n].rules.bytes, "- *.o\n+ /a/\n", 12);
        n++;
        return n;
}

static void test_status_str(void)
{
        bool all = true, distinct = true;

        for (unsigned int i = 0; i < _WIRE_STATUS_MAX; i++) {
                const char *s = wire_status_str(i);

                if (!s || !*s || !strcmp(s, "unknown status"))
                        all = false;
                for (unsigned int j = 0; j < i; j++)
                        if (!strcmp(s, wire_status_str(j)))
                                distinct = false;
        }
        ok(all, "every wire_status has its own text");
        ok(distinct, "status texts are distinct");
        is_str(wire_status_str(WIRE_E_CHECKSUM), "checksum mismatch", "checksum text");
        is_str(wire_status_str(_WIRE_STATUS_MAX), "unknown status", "status past the end");
        is_str(wire_status_str(~0u), "unknown status", "huge status");
}

/* Which refusals and verdicts of a receiver a sender tries again (rdmaxferd(8), Retrying). */
static void test_status_transient(void)
{
        static const unsigned int transient[] = { WIRE_E_BUSY, WIRE_E_SHUTDOWN, WIRE_E_IO,
                                                  WIRE_E_INTERNAL, WIRE_E_CHECKSUM, WIRE_E_SIZE };
        static const unsigned int permanent[] = { WIRE_OK, WIRE_E_VERSION, WIRE_E_PROTOCOL,
                                                  WIRE_E_DENIED, WIRE_E_AUTH, WIRE_E_NAME,
                                                  WIRE_E_EXISTS, WIRE_E_TOO_LARGE, WIRE_E_NO_SPACE,
                                                  WIRE_E_PERMISSION, _WIRE_STATUS_MAX, ~0u };
        bool all = true;

        for (size_t i = 0; i < ARRAY_SIZE(transient); i++)
                if (!wire_status_transient(transient[i])) {
                        diag("%s should be transient", wire_status_str(transient[i]));
                        all = false;
                }
        ok(all, "busy, shutting down, I/O, internal, checksum and size are transient");
        all = true;
        for (size_t i = 0; i < ARRAY_SIZE(permanent); i++)
                if (wire_status_transient(permanent[i])) {
                        diag("%s should be permanent", wire_status_str(permanent[i]));
                        all = false;
                }
        ok(all, "version, protocol, denied, auth, name, exists, too large, no space, permission and "
           "unknown are not");
        is_int(ARRAY_SIZE(transient) + ARRAY_SIZE(permanent) - 2, _WIRE_STATUS_MAX,
               "every status is classified (a new one must be added here)");
}

/* Hops no relay may pass a file on to, and a route naming one twice. */
static void test_hop_refused(void)
{
        struct wire_hop h[3] = { 0 };

        h[0].addr[10] = h[0].addr[11] = 0xff;
        h[0].addr[12] = 198, h[0].addr[13] = 18, h[0].addr[15] = 2;
        h[0].port = 7470;
        ok(wire_hop_refused(&h[0]) == NULL, "198.18.0.2:7470 may be relayed to");
        h[1] = h[0];
        h[1].addr[12] = 127;
        is_str(wire_hop_refused(&h[1]), "a loopback address", "127.x is loopback");
        memset(h[1].addr + 12, 0, 4);
        is_str(wire_hop_refused(&h[1]), "an unspecified address", "0.0.0.0 is unspecified");
        memset(h[1].addr, 0, sizeof(h[1].addr));
        h[1].addr[15] = 1;
        is_str(wire_hop_refused(&h[1]), "a loopback address", "::1 is loopback");
        h[1].addr[15] = 0;
        is_str(wire_hop_refused(&h[1]), "an unspecified address", ":: is unspecified");
        h[1] = h[0];
        h[1].port = 0;
        is_str(wire_hop_refused(&h[1]), "port 0", "port 0");
        h[1] = h[0];
        h[1].port = 7471;
        h[2] = h[0];
        ok(!wire_route_repeats(h, 1), "another port of the same host is another hop");
        ok(wire_route_repeats(h, 2), "the same host and port again repeats");
}

/* What the user reads as a refusal, and what a failed session's staging is kept for. */
static void test_status_properties(void)
{
        static const unsigned int refusal[] = { WIRE_E_VERSION, WIRE_E_BUSY, WIRE_E_DENIED, WIRE_E_AUTH,
                                                WIRE_E_NAME, WIRE_E_EXISTS, WIRE_E_TOO_LARGE,
                                                WIRE_E_NO_SPACE, WIRE_E_SHUTDOWN, WIRE_E_PERMISSION };
        static const unsigned int not_kept[] = { WIRE_E_VERSION, WIRE_E_DENIED, WIRE_E_AUTH, WIRE_E_NAME,
                                                 WIRE_E_EXISTS, WIRE_E_TOO_LARGE, WIRE_E_NO_SPACE,
                                                 WIRE_E_PERMISSION };
        unsigned int n_refusal = 0, n_kept = 0;
        bool names = true;

        for (unsigned int s = 0; s < _WIRE_STATUS_MAX; s++) {
                n_refusal += wire_status_refusal(s);
                n_kept += wire_status_keeps(s);
                names &= wire_status_name(s) && strlen(wire_status_name(s)) > 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(refusal); i++)
                n_refusal -= wire_status_refusal(refusal[i]);
        for (size_t i = 0; i < ARRAY_SIZE(not_kept); i++)
                n_kept += wire_status_keeps(not_kept[i]) ? 100 : 0;
        is_int(n_refusal, 0, "refusals: version, busy, denied, auth, name, exists, too large, no space, "
               "shutdown, permission; nothing else");
        is_int(n_kept, _WIRE_STATUS_MAX - ARRAY_SIZE(not_kept),
               "a failed session's staging is kept but for what the next attempt would meet again");
        ok(!wire_status_refusal(_WIRE_STATUS_MAX) && !wire_status_keeps(~0u), "an unknown status is neither");
        ok(names, "every status has a name");
        is_str(wire_status_name(WIRE_E_TOO_LARGE), "too_large", "too_large's name");
        ok(wire_status_name(_WIRE_STATUS_MAX) == NULL, "an unknown status has none");
        is_int(wire_status_of_errno(EACCES), WIRE_E_PERMISSION, "EACCES: permission");
        is_int(wire_status_of_errno(EPERM), WIRE_E_PERMISSION, "EPERM: permission");
        is_int(wire_status_of_errno(EROFS), WIRE_E_PERMISSION, "EROFS: permission");
        is_int(wire_status_of_errno(ENOSPC), WIRE_E_NO_SPACE, "ENOSPC: no space");
        is_int(wire_status_of_errno(EDQUOT), WIRE_E_NO_SPACE, "EDQUOT: no space");
        is_int(wire_status_of_errno(ENAMETOOLONG), WIRE_E_NAME, "ENAMETOOLONG: name");
        is_int(wire_status_of_errno(EFBIG), WIRE_E_TOO_LARGE, "EFBIG: too large");
        is_int(wire_status_of_errno(EIO), WIRE_E_IO, "EIO: I/O, which may pass");
        is_int(wire_status_of_errno(ENOMEM), WIRE_E_IO, "ENOMEM: I/O");
}

static void test_private_data(void)
{
        uint8_t buf[64];
        struct wire_hello h = { .flags = 0 }, h2;
        struct wire_welcome w = { .flags = WIRE_WELCOME_AUTH, .credits = 32, .slot_size = 1 << 20, .resume = 21 }, w2;
        struct wire_reject rj = { .status = WIRE_E_DENIED }, rj2;
        bool shorts;

        wire_encode_hello(buf, &h);
        ok(memcmp(buf, "RDRX", 4) == 0, "hello starts with the magic \"RDRX\"");
        ok(buf[4] == WIRE_VERSION && buf[5] == 0, "hello version is little-endian");
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), 0, "hello round-trips");
        ok(h2.magic == WIRE_MAGIC && h2.version == WIRE_VERSION && h2.flags == 0, "hello fields");
        is_int(wire_decode_hello(buf, 56, &h2), 0, "hello with rdma_cm padding accepted");
        ok(h2.lane == 0 && h2.reserved == 0, "a plain hello names no lane");
        shorts = true;
        for (size_t l = 0; l < WIRE_HELLO_SIZE; l++)
                if (wire_decode_hello(buf, l, &h2) != -EBADMSG)
                        shorts = false;
        ok(shorts, "hello shorter than %d bytes is -EBADMSG at every length", WIRE_HELLO_SIZE);
        buf[0] ^= 1;
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "hello with bad magic");
        buf[0] ^= 1;
        put16(buf + 4, 31);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT, "hello v31 is -EPROTONOSUPPORT");
        is_int(h2.version, 31, "and still reports the peer's version");
        put16(buf + 4, 17);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-17 hello (it knows no long path) is -EPROTONOSUPPORT");
        put16(buf + 4, 16);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-16 hello (it knows no dry run) is -EPROTONOSUPPORT");
        put16(buf + 4, 15);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-15 hello (it knows no deleting) is -EPROTONOSUPPORT");
        put16(buf + 4, 13);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-13 hello (a tree's mode 0 was the receiver's own) is -EPROTONOSUPPORT");
        put16(buf + 4, 11);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-11 hello (a relayed tree's DEST malformed) is -EPROTONOSUPPORT");
        put16(buf + 4, 10);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-10 hello (routes of at most 27 hops, a 32-bit hop_missing) is -EPROTONOSUPPORT");
        is_int(h2.version, 10, "and reports version 10");
        put16(buf + 4, 9);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-9 hello (no relay chains: no ROUTE, no hop fields in RESULT) is -EPROTONOSUPPORT");
        is_int(h2.version, 9, "and reports version 9");
        put16(buf + 4, 8);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-8 hello (silent while it verifies: a sender would give up on it) is -EPROTONOSUPPORT");
        put16(buf + 4, 7);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-7 hello (one file in flight: it would refuse a pipelined offer) is -EPROTONOSUPPORT");
        put16(buf + 4, 6);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-6 hello (no tree resuming: it would not skip what was kept) is -EPROTONOSUPPORT");
        put16(buf + 4, 5);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-5 hello (no sync: it would not honour a skip) is -EPROTONOSUPPORT");
        put16(buf + 4, 4);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-4 hello (no packs) is -EPROTONOSUPPORT");
        put16(buf + 4, 3);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT,
               "a version-3 hello (one file per connection) is -EPROTONOSUPPORT");
        is_int(h2.version, 3, "and reports version 3");
        put16(buf + 4, 2);
        is_int(wire_decode_hello(buf, 28, &h2), -EPROTONOSUPPORT, "a 28-byte version-2 hello is -EPROTONOSUPPORT");
        is_int(h2.version, 2, "and reports version 2");
        put16(buf + 4, 1);
        is_int(wire_decode_hello(buf, 8, &h2), -EPROTONOSUPPORT, "an 8-byte version-1 hello is -EPROTONOSUPPORT");
        is_int(h2.version, 1, "and reports version 1");
        put16(buf + 4, WIRE_VERSION);

        h = (struct wire_hello){ .flags = WIRE_HELLO_LANE | WIRE_HELLO_KEY, .lane = 3 };
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                h.token[i] = (uint8_t)(0x80 + i);
        for (int i = 0; i < WIRE_TAG_SIZE; i++)
                h.tag[i] = (uint8_t)(0xd0 + i);
        memset(buf, 0xee, sizeof(buf));
        wire_encode_hello(buf, &h);
        ok(buf[WIRE_HELLO_SIZE] == 0xee, "hello writes exactly %d bytes", WIRE_HELLO_SIZE);
        ok(buf[6] == 3 && buf[8] == 3 && buf[12] == 0x80 && buf[27] == 0x8f && buf[28] == 0xd0 &&
           buf[43] == 0xdf, "lane hello: flags, lane, reserved, token, tag in that order");
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), 0, "lane hello round-trips");
        ok(h2.flags == (WIRE_HELLO_LANE | WIRE_HELLO_KEY) && h2.lane == 3 &&
           memcmp(h2.token, h.token, WIRE_TOKEN_SIZE) == 0 && memcmp(h2.tag, h.tag, WIRE_TAG_SIZE) == 0,
           "lane hello fields, token and tag");
        put16(buf + 8, 0);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "lane hello for lane 0 is -EBADMSG");
        put16(buf + 8, WIRE_LANES_MAX);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "lane hello past WIRE_LANES_MAX is -EBADMSG");
        put16(buf + 6, 0);
        put16(buf + 8, 1);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "a lane number without the lane flag is -EBADMSG");
        put16(buf + 6, WIRE_HELLO_LANE | WIRE_HELLO_REJOIN);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), 0, "a lane joining again (version 23) decodes");
        ok(h2.flags == (WIRE_HELLO_LANE | WIRE_HELLO_REJOIN) && h2.lane == 1, "and says so");
        put16(buf + 8, 0);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), 0, "lane 0 may join again too");
        put16(buf + 6, WIRE_HELLO_REJOIN);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "joining again without the lane flag is -EBADMSG");

        for (int i = 0; i < WIRE_NONCE_SIZE; i++)
                w.nonce[i] = (uint8_t)(i * 7 + 1);
        memset(buf, 0xee, sizeof(buf));
        wire_encode_welcome(buf, &w);
        ok(buf[WIRE_WELCOME_SIZE] == 0xee, "welcome writes exactly %d bytes", WIRE_WELCOME_SIZE);
        is_int(wire_decode_welcome(buf, WIRE_WELCOME_SIZE, &w2), 0, "welcome round-trips");
        ok(w2.flags == WIRE_WELCOME_AUTH && w2.credits == 32 && w2.slot_size == (1u << 20) &&
           memcmp(w2.nonce, w.nonce, WIRE_NONCE_SIZE) == 0, "welcome fields and nonce");
        ok(buf[8] == 32 && buf[9] == 0 && buf[12] == 0 && buf[14] == 0x10, "welcome credits/slot_size little-endian");
        ok(w2.resume == 21 && buf[16] == 21 && buf[17] == 0, "a rejoined lane's resume (version 23), little-endian");
        w.flags = WIRE_WELCOME_AUTH | WIRE_WELCOME_ENDED;
        wire_encode_welcome(buf, &w);
        ok(wire_decode_welcome(buf, WIRE_WELCOME_SIZE, &w2) == 0 && w2.flags == (WIRE_WELCOME_AUTH | WIRE_WELCOME_ENDED) &&
           buf[6] == 3, "a rejoined lane the receiver has whole: WIRE_WELCOME_ENDED round-trips");
        w.flags = WIRE_WELCOME_AUTH;
        wire_encode_welcome(buf, &w);
        shorts = true;
        for (size_t l = 0; l < WIRE_WELCOME_SIZE; l++)
                if (wire_decode_welcome(buf, l, &w2) != -EBADMSG)
                        shorts = false;
        ok(shorts, "welcome truncated at every length is -EBADMSG");
        put16(buf + 4, 0);
        is_int(wire_decode_welcome(buf, WIRE_WELCOME_SIZE, &w2), -EPROTONOSUPPORT, "welcome v0");
        put32(buf, 0);
        is_int(wire_decode_welcome(buf, WIRE_WELCOME_SIZE, &w2), -EBADMSG, "welcome bad magic");

        memset(buf, 0xee, sizeof(buf));
        wire_encode_reject(buf, &rj);
        ok(buf[WIRE_REJECT_SIZE] == 0xee, "reject writes exactly %d bytes", WIRE_REJECT_SIZE);
        is_int(wire_decode_reject(buf, WIRE_REJECT_SIZE, &rj2), 0, "reject round-trips");
        is_int(rj2.status, WIRE_E_DENIED, "reject status");
        shorts = true;
        for (size_t l = 0; l < WIRE_REJECT_SIZE; l++)
                if (wire_decode_reject(buf, l, &rj2) != -EBADMSG)
                        shorts = false;
        ok(shorts, "reject truncated at every length is -EBADMSG");
        /* A v1 receiver rejecting us: we must still read which version it speaks. */
        put16(buf + 4, 1);
        put16(buf + 6, WIRE_E_VERSION);
        is_int(wire_decode_reject(buf, WIRE_REJECT_SIZE, &rj2), -EPROTONOSUPPORT, "reject from v1");
        ok(rj2.version == 1 && rj2.status == WIRE_E_VERSION, "v1 reject still decoded for reporting");
        is_int(wire_decode_hello(NULL, 0, &h2), -EBADMSG, "no private data at all");
}

static void test_round_trips(void)
{
        struct wire_msg msgs[_WIRE_TYPE_MAX], back;
        uint8_t buf[WIRE_CTRL_MAX];
        int n = sample_messages(msgs);

        is_int(n, _WIRE_TYPE_MAX - 1, "one sample message of every type");
        for (int i = 0; i < n; i++) {
                int len = wire_encode(buf, sizeof(buf), &msgs[i]);

                ok(len >= WIRE_HEADER_SIZE && len <= WIRE_CTRL_MAX, "type %d encodes (%d bytes)", msgs[i].type, len);
                is_int(wire_decode(buf, (size_t)len, &back), 0, "type %d decodes", msgs[i].type);
                ok(memcmp(&back, &msgs[i], sizeof(back)) == 0, "type %d round-trips field for field", msgs[i].type);
        }

        /* The largest OFFER: a 255-byte multibyte name still fits WIRE_CTRL_MAX. */
        struct wire_msg big = sample_offer("");
        for (int i = 0; i < WIRE_NAME_MAX; i++)
                big.offer.name[i] = (char)(i % 3 == 0 ? 0xe2 : i % 3 == 1 ? 0x82 : 0xac);
        big.offer.name[WIRE_NAME_MAX] = '\0';
        int len = wire_encode(buf, sizeof(buf), &big);
        is_int(len, WIRE_HEADER_SIZE + 242 + WIRE_NAME_MAX, "255-byte name: header + 242 + 255 bytes");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "255-byte name decodes");
        is_int(strlen(back.offer.name), WIRE_NAME_MAX, "and comes back whole");

        struct wire_msg r;

        msg_reset(&r, WIRE_REFUSE, 0);
        memset(r.refuse.text, 'x', WIRE_TEXT_MAX);
        len = wire_encode(buf, sizeof(buf), &r);
        is_int(len, WIRE_HEADER_SIZE + 4 + WIRE_TEXT_MAX, "200-byte refuse text encodes");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        ok(back.refuse.text[WIRE_TEXT_MAX] == '\0', "decoded text is NUL-terminated");

        /* The largest ROUTE part: WIRE_ROUTE_PART_MAX hops, the last of a
         * route of WIRE_ROUTE_MAX, still fit WIRE_CTRL_MAX. */
        struct wire_msg rt;

        msg_reset(&rt, WIRE_ROUTE, 0);
        rt.route.total = WIRE_ROUTE_MAX;
        rt.route.first = WIRE_ROUTE_MAX - WIRE_ROUTE_PART_MAX;
        rt.route.hops = WIRE_ROUTE_PART_MAX;
        for (int i = 0; i < WIRE_ROUTE_PART_MAX; i++) {
                memset(rt.route.hop[i].addr, 0xf0 + i % 16, WIRE_ADDR_SIZE);
                rt.route.hop[i].port = (uint16_t)(0xff00 + i);
        }
        len = wire_encode(buf, sizeof(buf), &rt);
        is_int(len, WIRE_HEADER_SIZE + 6 + WIRE_ROUTE_PART_MAX * 18, "%d-hop ROUTE part: header + 6 + %d * 18 bytes",
               WIRE_ROUTE_PART_MAX, WIRE_ROUTE_PART_MAX);
        ok(len <= WIRE_CTRL_MAX, "and fits WIRE_CTRL_MAX");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "the %d-hop ROUTE part decodes", WIRE_ROUTE_PART_MAX);
        ok(memcmp(&back, &rt, sizeof(back)) == 0 && back.route.total == WIRE_ROUTE_MAX &&
           back.route.first == WIRE_ROUTE_MAX - WIRE_ROUTE_PART_MAX,
           "and comes back hop for hop, with the route's total and where the part starts");

        /* The first part of that route, and its short last one. */
        rt.route.first = 0;
        len = wire_encode(buf, sizeof(buf), &rt);
        ok(len == WIRE_HEADER_SIZE + 6 + WIRE_ROUTE_PART_MAX * 18 && wire_decode(buf, (size_t)len, &back) == 0 &&
           memcmp(&back, &rt, sizeof(back)) == 0, "the first part of a %d-hop route round-trips", WIRE_ROUTE_MAX);
        msg_reset(&rt, WIRE_ROUTE, 0);
        rt.route.total = WIRE_ROUTE_MAX;
        rt.route.first = WIRE_ROUTE_MAX / WIRE_ROUTE_PART_MAX * WIRE_ROUTE_PART_MAX;
        rt.route.hops = WIRE_ROUTE_MAX % WIRE_ROUTE_PART_MAX;
        for (int i = 0; i < rt.route.hops; i++)
                rt.route.hop[i] = sample_hop("fd00::7", (uint16_t)(9000 + i));
        len = wire_encode(buf, sizeof(buf), &rt);
        ok(len == WIRE_HEADER_SIZE + 6 + (WIRE_ROUTE_MAX % WIRE_ROUTE_PART_MAX) * 18 &&
           wire_decode(buf, (size_t)len, &back) == 0 && memcmp(&back, &rt, sizeof(back)) == 0,
           "its last part, hops %d .. %d, round-trips", rt.route.first, WIRE_ROUTE_MAX - 1);

        /* A relay's RESULT: its hop fields round-trip. */
        msg_reset(&r, WIRE_RESULT, 2);
        r.result.status = WIRE_E_NO_SPACE;
        r.result.file = 5;
        r.result.bytes = 1 << 20;
        r.result.usec = 777;
        r.result.hops = 2;
        r.result.hop_failed = 3;
        r.result.hop_status = WIRE_E_NO_SPACE;
        r.result.hop_missing = set_of(2, -1);
        memset(r.result.mac, 0x42, WIRE_MAC_SIZE);
        snprintf(r.result.text, sizeof(r.result.text), "hop 3: no space");
        len = wire_encode(buf, sizeof(buf), &r);
        is_int(len, WIRE_HEADER_SIZE + 126 + 15, "RESULT with hop fields: header + 126 + text");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        ok(memcmp(&back, &r, sizeof(back)) == 0 && back.result.hops == 2 && back.result.hop_failed == 3 &&
           back.result.hop_status == WIRE_E_NO_SPACE && nodeset_has(&back.result.hop_missing, 2) &&
           nodeset_count(&back.result.hop_missing) == 1,
           "hops, hop_failed, hop_status and hop_missing round-trip");
        r.result.hops = WIRE_ROUTE_MAX;
        r.result.hop_failed = 0;
        r.result.hop_status = 0;
        r.result.hop_missing = (struct nodeset){ { 0 } };
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && back.result.hops == WIRE_ROUTE_MAX,
           "a RESULT of %d hops all published round-trips", WIRE_ROUTE_MAX);
        r.result.hops = WIRE_ROUTE_MAX - 1;
        r.result.hop_failed = WIRE_ROUTE_MAX;
        r.result.hop_missing = set_of(WIRE_ROUTE_MAX - 1, -1);
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && back.result.hop_failed == WIRE_ROUTE_MAX &&
           nodeset_equal(&back.result.hop_missing, &r.result.hop_missing),
           "a RESULT whose last hop of %d failed round-trips", WIRE_ROUTE_MAX);

        /* Gone around: hops 2 and 5 missing, the rest of the route published. */
        r.result.hops = WIRE_ROUTE_MAX - 2;
        r.result.hop_failed = 2;
        r.result.hop_status = WIRE_E_IO;
        r.result.hop_missing = set_of(1, 4, -1);
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len == WIRE_HEADER_SIZE + 126 + 15 && wire_decode(buf, (size_t)len, &back) == 0 &&
           memcmp(&back, &r, sizeof(back)) == 0 && back.result.hop_missing.w[0] == 0x12 &&
           back.result.hop_failed == 2,
           "a RESULT of %d hops published, hops 2 and 5 missing, round-trips", WIRE_ROUTE_MAX - 2);

        /* Far past the 32 hops a version-10 hop_missing could name. */
        r.result.hops = WIRE_ROUTE_MAX - 1;
        r.result.hop_failed = 300;
        r.result.hop_missing = set_of(299, -1);
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && memcmp(&back, &r, sizeof(back)) == 0 &&
           nodeset_has(&back.result.hop_missing, 299) && nodeset_count(&back.result.hop_missing) == 1,
           "a RESULT of a %d-hop route, hop 300 missing (bit 299, hop_failed 300), round-trips", WIRE_ROUTE_MAX);
        r.result.hops = WIRE_ROUTE_MAX - 2;
        r.result.hop_missing = set_of(299, WIRE_ROUTE_MAX - 1, -1);
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && memcmp(&back, &r, sizeof(back)) == 0 &&
           nodeset_has(&back.result.hop_missing, 299) && nodeset_has(&back.result.hop_missing, WIRE_ROUTE_MAX - 1) &&
           nodeset_count(&back.result.hop_missing) == 2 && back.result.hop_failed == 300,
           "hops 300 and %d missing (bits 299 and %d) round-trip", WIRE_ROUTE_MAX, WIRE_ROUTE_MAX - 1);
        r.result.hops = 0;
        r.result.hop_failed = 1;
        r.result.hop_missing = nodeset_first_n(WIRE_ROUTE_MAX);
        len = wire_encode(buf, sizeof(buf), &r);
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && memcmp(&back, &r, sizeof(back)) == 0 &&
           nodeset_count(&back.result.hop_missing) == WIRE_ROUTE_MAX,
           "a RESULT whose %d hops are all missing round-trips", WIRE_ROUTE_MAX);
}

/* Pin the byte layout: a change here breaks interop with deployed daemons. */
static void test_golden(void)
{
        static const uint8_t end[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x05, 0x00,  /* magic, v30, END */
                0x3c, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,  /* len 60, credits 7 */
                0x2a, 0x00, 0x00, 0x00,                          /* file 42 */
                0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  /* bytes */
                0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,  /* digest */
                0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,  /* mac */
                0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf,
                0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7,
                0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf,
        };
        static const uint8_t refuse[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x03, 0x00,  /* magic, v30, REFUSE */
                0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                0x07, 0x00, 0x03, 0x00, 'a', '.', 'b',          /* EXISTS, 3, "a.b" */
        };
        static const uint8_t route[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x08, 0x00,  /* magic, v30, ROUTE */
                0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* len 42, credits 0 */
                0x02, 0x00, 0x00, 0x00, 0x02, 0x00,              /* total 2, first 0, hops 2 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* ::ffff:198.18.0.2 */
                0x00, 0x00, 0xff, 0xff, 0xc6, 0x12, 0x00, 0x02,
                0x2f, 0x1d,                                      /* port 7471 */
                0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* fd00::3 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
                0x30, 0x1d,                                      /* port 7472 */
        };
        /* A later part: hop 27 of a route of 300, alone (total, first and hops differ). */
        static const uint8_t route_part[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x08, 0x00,  /* magic, v30, ROUTE */
                0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* len 24, credits 0 */
                0x2c, 0x01, 0x1b, 0x00, 0x01, 0x00,              /* total 300, first 27, hops 1 */
                0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* fd00::1c */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1c,
                0x4b, 0x1d,                                      /* port 7499 */
        };
        static const uint8_t result[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x06, 0x00,  /* magic, v30, RESULT */
                0x80, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  /* len 128 (126 + text), credits 1 */
                0x0c, 0x00, 0x02, 0x00,                          /* SIZE, text_len 2 */
                0x07, 0x00, 0x00, 0x00,                          /* file 7 */
                0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* bytes 5 */
                0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* usec 6 */
                0x0b, 0x00, 0x0c, 0x00, 0x0e, 0x0d,              /* hops 11, hop_failed 12, hop_status */
                0x00, 0x08, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00,  /* hop_missing word 0: bits 11, 18, 25 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* word 1 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* word 2 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* word 3 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  /* word 4: bit 300 (256 + 44) */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* word 5 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* word 6 */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  /* word 7: bit 510 (448 + 62) */
                0x77, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* mac */
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x88,
                'z', 'z',                                        /* text */
        };
        struct wire_msg m = { .type = WIRE_END, .credits = 7 };
        uint8_t buf[WIRE_CTRL_MAX];
        int len;

        m.end.file = 42;
        m.end.bytes = 0x0102030405060708ull;
        for (int i = 0; i < WIRE_DIGEST_SIZE; i++)
                m.end.digest[i] = (uint8_t)i;
        for (int i = 0; i < WIRE_MAC_SIZE; i++)
                m.end.mac[i] = (uint8_t)(0xc0 + i);
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(end) && memcmp(buf, end, sizeof(end)) == 0, "END matches the documented bytes");

        m = (struct wire_msg){ .type = WIRE_REFUSE, .credits = 2 };
        m.refuse.status = WIRE_E_EXISTS;
        strcpy(m.refuse.text, "a.b");
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(refuse) && memcmp(buf, refuse, sizeof(refuse)) == 0, "REFUSE matches the documented bytes");

        m = sample_route();
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(route) && memcmp(buf, route, sizeof(route)) == 0,
           "ROUTE of 2 hops matches the documented bytes");
        msg_reset(&m, WIRE_ROUTE, 0);
        m.route.total = 300;
        m.route.first = 27;
        m.route.hops = 1;
        m.route.hop[0] = sample_hop("fd00::1c", 7499);
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(route_part) && memcmp(buf, route_part, sizeof(route_part)) == 0,
           "a later ROUTE part (total 300, first 27, hops 1) matches the documented bytes");

        struct wire_msg o = sample_offer("x");
        len = wire_encode(buf, sizeof(buf), &o);
        ok(len == 16 + 242 + 1 && buf[6] == WIRE_OFFER && buf[8] == 243 && buf[16] == 0x08 && buf[23] == 0x01 &&
           buf[16 + 13] == 0x01 && buf[16 + 18] == 0x10 && buf[16 + 20] == 0 && buf[16 + 22] == 1 &&
           buf[16 + 24] == 4 && buf[16 + 25] == 0 && buf[16 + 26] == 2 && buf[16 + 29] == 0 &&
           buf[16 + 30] == 3 && buf[16 + 34] == 0x0c && buf[16 + 35] == 0x0b && buf[16 + 39] == 0x01 &&
           buf[16 + 42] == 0xed && buf[16 + 43] == 0x01 && buf[16 + 46] == 0x88 && buf[16 + 53] == 0x11 &&
           buf[16 + 54] == 0x30 && buf[16 + 69] == 0x3f &&
           buf[16 + 70] == 0x40 && buf[16 + 85] == 0x4f &&
           buf[16 + 86] == 0x60 && buf[16 + 117] == 0x60 + 31 &&
           buf[16 + 118] == 0xa0 && buf[16 + 149] == 0xa0 + 31 && buf[16 + 150] == 0 &&
           buf[16 + 185] == 0 && buf[16 + 201] == 0 && buf[16 + 202] == 0 && buf[16 + 233] == 0 &&
           buf[16 + 234] == 0 && buf[16 + 241] == 0 && buf[16 + 242] == 'x',
           "OFFER: id, size, chunk, flags, name_len, lanes, file, job_files, job_bytes, mode, mtime_ns, "
           "token, source, nonce, mac, pack_entries, pack_hash, digest, route_hash, name in that order");
        o.offer.flags = WIRE_OFFER_ROUTE;
        for (int i = 0; i < WIRE_ROUTE_HASH_SIZE; i++)
                o.offer.route_hash[i] = (uint8_t)(0xe0 + i);
        len = wire_encode(buf, sizeof(buf), &o);
        ok(len == 16 + 242 + 1 && buf[16 + 20] == 0x80 && buf[16 + 21] == 0 && buf[16 + 201] == 0 &&
           buf[16 + 202] == 0xe0 && buf[16 + 233] == 0xff && buf[16 + 234] == 0 && buf[16 + 241] == 0 && buf[16 + 242] == 'x',
           "a routed OFFER: its flag, and route_hash after the digest, before the name");
        o.offer.flags = WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED;
        o.offer.file = 0;
        o.offer.job_files = 1;
        len = wire_encode(buf, sizeof(buf), &o);
        ok(len == 16 + 242 + 1 && buf[16 + 20] == 0x80 && buf[16 + 21] == 0x01 && buf[16 + 26] == 0 &&
           buf[16 + 30] == 1, "a relay's routed OFFER of one file: flags 0x0180, little-endian");
        o.offer.file = 2;
        o.offer.job_files = 3;
        o.offer.flags = 0;
        memset(o.offer.route_hash, 0, WIRE_ROUTE_HASH_SIZE);
        o.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        o.offer.file = 1;
        o.offer.pack_entries = 0x0102;
        o.offer.job_files = 0x0103;
        memset(o.offer.pack_hash, 0xcd, WIRE_PACK_HASH_SIZE);
        len = wire_encode(buf, sizeof(buf), &o);
        ok(len == 16 + 242 + 1 && buf[16 + 150] == 0x02 && buf[16 + 151] == 0x01 && buf[16 + 154] == 0xcd &&
           buf[16 + 185] == 0xcd && buf[16 + 20] == 0x05, "a pack's OFFER: its flag, entries and hash");

        m = (struct wire_msg){ .type = WIRE_ACCEPT, .credits = 16 };
        m.accept.lanes = 4;
        m.accept.flags = WIRE_ACCEPT_PUBLISHED;
        m.accept.file = 0x0a0b0c0d;
        m.accept.resume[0] = 0x01020304;
        m.accept.resume[3] = 9;
        m.accept.mac[0] = 0x77;
        m.accept.mac[31] = 0x88;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == 16 + 72 && buf[6] == WIRE_ACCEPT && buf[8] == 72 && buf[12] == 16 && buf[16] == 4 && buf[17] == 0 &&
           buf[18] == 1 && buf[19] == 0 && buf[20] == 0x0d && buf[23] == 0x0a && buf[24] == 0x04 &&
           buf[27] == 0x01 && buf[36] == 9 && buf[56] == 0x77 && buf[87] == 0x88,
           "ACCEPT: header, then lanes, flags, file, resume[8], then mac");

        m = (struct wire_msg){ .type = WIRE_RESULT, .credits = 1 };
        m.result.status = WIRE_E_SIZE;
        m.result.file = 7;
        m.result.bytes = 5;
        m.result.usec = 6;
        m.result.hops = 0x0b;
        m.result.hop_failed = 0x0c;
        m.result.hop_status = 0x0d0e;
        /* Hops 12 (the first), 19, 26, 301 and 511. */
        m.result.hop_missing = set_of(11, 18, 25, 300, 510, -1);
        m.result.mac[0] = 0x77;
        m.result.mac[31] = 0x88;
        strcpy(m.result.text, "zz");
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(result) && memcmp(buf, result, sizeof(result)) == 0,
           "RESULT: status, text_len, file, bytes, usec, hops, hop_failed, hop_status, hop_missing (8 u64 words, "
           "lowest first), mac, text in that order");
        is_int(wire_decode(result, sizeof(result), &m), 0, "and the documented bytes decode");
        ok(m.result.hops == 11 && m.result.hop_failed == 12 && nodeset_count(&m.result.hop_missing) == 5 &&
           nodeset_has(&m.result.hop_missing, 300) && nodeset_has(&m.result.hop_missing, 510) &&
           m.result.mac[0] == 0x77 && m.result.mac[31] == 0x88 && !strcmp(m.result.text, "zz"),
           "to the same hop fields, mac and text");
}

static void test_encode_errors(void)
{
        struct wire_msg m = sample_offer("data.bin"), bad;
        uint8_t buf[WIRE_CTRL_MAX];
        int len = wire_encode(buf, sizeof(buf), &m);
        bool all = true;

        for (int cap = 0; cap < len; cap++)
                if (wire_encode(buf, (size_t)cap, &m) != -EMSGSIZE)
                        all = false;
        ok(all, "every capacity below %d is -EMSGSIZE", len);

        bad = sample_offer("");
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "empty name refused");
        bad = sample_offer("");
        memset(bad.offer.name, 'a', sizeof(bad.offer.name));
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "unterminated 256-byte name refused");
        bad = sample_offer("x");
        bad.offer.chunk_size = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "chunk_size 0 refused");
        bad = sample_offer("x");
        bad.offer.lanes = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an offer of 0 lanes refused");
        bad.offer.lanes = WIRE_LANES_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an offer past WIRE_LANES_MAX refused");
        bad = sample_offer("x");
        bad.offer.job_files = 0;
        bad.offer.file = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an offer of a job of no files refused");
        bad = sample_offer("x");
        bad.offer.file = bad.offer.job_files;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an offer of a file past the job's refused");
        bad = sample_offer("x");
        bad.offer.pack_entries = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "pack entries without WIRE_OFFER_PACK refused");
        bad = sample_offer("x");
        bad.offer.pack_hash[31] = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a pack hash without WIRE_OFFER_PACK refused");
        bad = sample_offer("x");
        bad.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a pack of no entries refused");
        bad.offer.pack_entries = 2;     /* files 2 and 3 of 3 */
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a pack past the job's files refused");
        bad.offer.pack_entries = 1;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "a pack of the job's last file is fine");
        bad = sample_offer("x");
        bad.offer.route_hash[31] = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a route hash without WIRE_OFFER_ROUTE refused");
        bad.offer.flags = WIRE_OFFER_ROUTE;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with it");

        /* A relay's flag: the first offer of a job of one regular file only. */
        bad = sample_offer("x");
        bad.offer.file = 0;
        bad.offer.job_files = 1;
        bad.offer.flags = WIRE_OFFER_RELAYED;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "a relayed offer of one file is fine");
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_ROUTE;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and with a route (a middle hop's)");
        bad.offer.job_files = 2;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed offer of a job of 2 files refused");
        bad.offer.file = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed later offer refused");
        bad.offer.file = 0;
        bad.offer.job_files = 1;
        {
                /* A tree alone or a directory alone is no tree's DEST. */
                static const uint16_t never[] = {
                        WIRE_OFFER_TREE, WIRE_OFFER_DIR, WIRE_OFFER_TREE | WIRE_OFFER_DIR, WIRE_OFFER_LINK,
                        WIRE_OFFER_SKIP_EXISTING, WIRE_OFFER_SYNC,
                };

                for (size_t i = 0; i < ARRAY_SIZE(never); i++) {
                        bad.offer.flags = (uint16_t)(WIRE_OFFER_RELAYED | never[i]);
                        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
                               "a relayed offer with flag 0x%x refused", (unsigned int)never[i]);
                }
        }
        /* A tree's DEST (version 12): relayed, so the hop gone around resumes it. */
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        bad.offer.size = 0;
        bad.offer.job_files = 5;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "a relayed tree's DEST is fine");
        bad.offer.flags |= WIRE_OFFER_ROUTE;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and with a route");
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SKIP_EXISTING;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed tree's DEST with sync refused");
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_TREE;
        bad.offer.file = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed tree's later entry refused");
        bad.offer.file = 0;
        bad.offer.job_files = 1;
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed offer with a digest to sync by refused");
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        bad.offer.pack_entries = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed pack refused");
        /* Deleting (version 16): a tree's, beside a sync flag, never relayed. */
        bad = sample_offer("d");
        bad.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "a synced tree's DEST with WIRE_OFFER_DELETE is fine");
        bad.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_DELETE;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and an entry's, with --skip-existing");
        bad.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_DELETE;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "WIRE_OFFER_DELETE without a sync flag refused");
        bad.offer.flags = WIRE_OFFER_SYNC | WIRE_OFFER_DELETE;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "WIRE_OFFER_DELETE outside a tree refused");
        bad.offer.flags = WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE;
        bad.offer.file = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a relayed tree's DEST with WIRE_OFFER_DELETE refused");
        bad = (struct wire_msg){ .type = WIRE_ACCEPT };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an ACCEPT of 0 lanes refused");
        bad = (struct wire_msg){ .type = WIRE_RESULT };
        memset(bad.result.text, 't', sizeof(bad.result.text));
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "unterminated result text refused");
        bad = (struct wire_msg){ .type = WIRE_RESULT };
        bad.result.hop_failed = WIRE_ROUTE_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT whose failed hop is past WIRE_ROUTE_MAX refused");
        bad.result.hop_failed = 0;
        bad.result.hops = WIRE_ROUTE_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT of more than WIRE_ROUTE_MAX hops refused");
        bad.result.hops = WIRE_ROUTE_MAX;
        bad.result.hop_failed = 1;
        bad.result.hop_missing = set_of(0, -1);
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT of %d hops published and one failed refused", WIRE_ROUTE_MAX);
        bad.result.hops = 0xffff;
        bad.result.hop_failed = 0xffff;
        bad.result.hop_missing = (struct nodeset){ { 0 } };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT of 65535 hops refused");

        /* hop_missing: bits below WIRE_ROUTE_MAX, the lowest named by hop_failed, counted with hops. */
        bad = (struct wire_msg){ .type = WIRE_RESULT };
        bad.result.hops = 1;
        bad.result.hop_missing = set_of(0, -1);
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT with a hop missing and none failed refused");
        bad.result.hop_failed = 1;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with hop_failed 1");
        bad.result.hop_missing = (struct nodeset){ { 0 } };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT with a hop failed and none missing refused");
        bad.result.hops = WIRE_ROUTE_MAX - 2;
        bad.result.hop_missing = set_of(1, 4, -1);
        bad.result.hop_failed = 5;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT whose failed hop is missing but not the first refused");
        bad.result.hop_failed = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT whose failed hop is before the first missing refused");
        bad.result.hop_failed = 3;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT whose failed hop is after the first missing, and not missing, refused");
        bad.result.hop_failed = 2;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with hop_failed 2");
        bad.result.hops = 0;
        bad.result.hop_missing = set_of(WIRE_ROUTE_MAX, -1);
        bad.result.hop_failed = WIRE_ROUTE_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT missing hop %d refused", WIRE_ROUTE_MAX + 1);
        bad.result.hop_missing = set_of(0, WIRE_ROUTE_MAX, -1);
        bad.result.hop_failed = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT with bit %d of hop_missing set (past WIRE_ROUTE_MAX) refused", WIRE_ROUTE_MAX);
        bad.result.hop_missing = set_of(0, 31, -1);
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "bit 31, past version 10's 27 hops, is fine");
        memset(&bad.result.hop_missing, 0xff, sizeof(bad.result.hop_missing));
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a RESULT with every bit of hop_missing set refused");
        bad.result.hops = WIRE_ROUTE_MAX - 2;
        bad.result.hop_missing = set_of(0, 1, 2, -1);
        bad.result.hop_failed = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT of %d hops published and 3 missing refused", WIRE_ROUTE_MAX - 2);
        bad.result.hops = WIRE_ROUTE_MAX - 3;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with %d published", WIRE_ROUTE_MAX - 3);
        bad.result.hops = 1;
        bad.result.hop_missing = nodeset_first_n(WIRE_ROUTE_MAX);
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT of 1 hop published and %d missing refused", WIRE_ROUTE_MAX);
        bad.result.hops = 0;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with none published");

        /* Far bits: hop_failed is the lowest missing, whichever word holds it. */
        bad.result.hops = WIRE_ROUTE_MAX - 2;
        bad.result.hop_missing = set_of(299, WIRE_ROUTE_MAX - 1, -1);
        bad.result.hop_failed = WIRE_ROUTE_MAX;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a RESULT missing bits 299 and %d, hop_failed %d (not the lowest) refused", WIRE_ROUTE_MAX - 1,
               WIRE_ROUTE_MAX);
        bad.result.hop_failed = 299;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "and with hop_failed 299 (one before it)");
        bad.result.hop_failed = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "and with hop_failed 0");
        bad.result.hop_failed = 300;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with hop_failed 300");
        bad.result.hops = WIRE_ROUTE_MAX - 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "%d published and 2 missing (%d in all) refused", WIRE_ROUTE_MAX - 1, WIRE_ROUTE_MAX + 1);

        /* ROUTE: a part of 1 .. WIRE_ROUTE_PART_MAX hops from first, within the route's 1 .. WIRE_ROUTE_MAX. */
        bad = sample_route();
        bad.route.hops = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of no hops refused");
        bad.route.total = WIRE_ROUTE_MAX;
        bad.route.hops = WIRE_ROUTE_PART_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE part of %d hops refused",
               WIRE_ROUTE_PART_MAX + 1);
        bad.route.hops = WIRE_ROUTE_PART_MAX;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine with %d", WIRE_ROUTE_PART_MAX);
        bad.route.hops = 0xffff;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of 65535 hops refused");
        bad = sample_route();
        bad.route.total = 0;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of a route of no hops refused");
        bad.route.total = WIRE_ROUTE_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of a route of %d hops refused",
               WIRE_ROUTE_MAX + 1);
        bad.route.total = 0xffff;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of a route of 65535 hops refused");
        bad.route.total = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE of 2 hops of a 1-hop route refused");
        bad.route.total = 30;
        bad.route.first = 4;
        bad.route.hops = WIRE_ROUTE_PART_MAX;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL,
               "a ROUTE part past the route's end (total 30, first 4, hops %d) refused", WIRE_ROUTE_PART_MAX);
        bad.route.first = 3;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine from hop 3 (its last %d hops)", WIRE_ROUTE_PART_MAX);
        bad.route.total = WIRE_ROUTE_MAX;
        bad.route.first = 0xffff;
        bad.route.hops = 1;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE part from hop 65535 refused");
        bad.route.first = WIRE_ROUTE_MAX;
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "a ROUTE part from hop %d (past the last) refused",
               WIRE_ROUTE_MAX);
        bad.route.first = WIRE_ROUTE_MAX - 1;
        ok(wire_encode(buf, sizeof(buf), &bad) > 0, "and fine from hop %d, the last", WIRE_ROUTE_MAX - 1);
        bad = sample_route();
        len = wire_encode(buf, sizeof(buf), &bad);
        all = true;
        for (int cap = 0; cap < len; cap++)
                if (wire_encode(buf, (size_t)cap, &bad) != -EMSGSIZE)
                        all = false;
        ok(all, "a ROUTE: every capacity below %d is -EMSGSIZE", len);
        bad = (struct wire_msg){ .type = 0 };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "type 0 refused");
        bad = (struct wire_msg){ .type = _WIRE_TYPE_MAX };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "unknown type refused");
}

static void test_decode_hostile(void)
{
        struct wire_msg msgs[_WIRE_TYPE_MAX], m;
        uint8_t buf[WIRE_CTRL_MAX + 64], tmp[WIRE_CTRL_MAX + 64];
        int n = sample_messages(msgs);

        for (int i = 0; i < n; i++) {
                int len = wire_encode(buf, sizeof(buf), &msgs[i]);
                int t = msgs[i].type;
                bool all = true;

                for (int l = 0; l < len; l++)
                        if (wire_decode(buf, (size_t)l, &m) != -EBADMSG)
                                all = false;
                ok(all, "type %d truncated at every length 0..%d is -EBADMSG", t, len - 1);

                memcpy(tmp, buf, (size_t)len);
                tmp[len] = 0;
                is_int(wire_decode(tmp, (size_t)len + 1, &m), -EBADMSG, "type %d with a trailing byte", t);
                put32(tmp + 8, (uint32_t)(len + 1 - WIRE_HEADER_SIZE));
                is_int(wire_decode(tmp, (size_t)len + 1, &m), -EBADMSG,
                       "type %d padded with length field to match", t);

                memcpy(tmp, buf, (size_t)len);
                tmp[3] ^= 0x80;
                is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d with wrong magic", t);

                memcpy(tmp, buf, (size_t)len);
                put16(tmp + 4, WIRE_VERSION + 1);
                is_int(wire_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT,
                       "type %d from version %d", t, WIRE_VERSION + 1);
                put16(tmp + 4, WIRE_VERSION - 1);
                is_int(wire_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT,
                       "type %d from version %d", t, WIRE_VERSION - 1);
                put16(tmp + 4, 0xffff);
                is_int(wire_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT, "type %d from version 65535", t);

                memcpy(tmp, buf, (size_t)len);
                put32(tmp + 8, (uint32_t)(len - WIRE_HEADER_SIZE + 1));
                is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d length field too large", t);
                put32(tmp + 8, 0xffffffffu);
                is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d length field 4G", t);
                if (len > WIRE_HEADER_SIZE) {
                        put32(tmp + 8, (uint32_t)(len - WIRE_HEADER_SIZE - 1));
                        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d length field too small", t);
                }
        }

        /* Unknown types, with a plausible empty payload. */
        int types[] = { 0, _WIRE_TYPE_MAX, 0x100, 0xffff };
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
                struct wire_msg a = { .type = WIRE_CREDIT };
                int len = wire_encode(buf, sizeof(buf), &a);

                put16(buf + 6, (uint16_t)types[i]);
                is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "unknown type %d", types[i]);
        }

        /* Empty types must be empty. */
        struct wire_msg a = { .type = WIRE_CREDIT };
        int len = wire_encode(buf, sizeof(buf), &a);
        buf[len] = 0;
        put32(buf + 8, 1);
        is_int(wire_decode(buf, (size_t)len + 1, &m), -EBADMSG, "CREDIT with a payload byte");

        /* END is fixed-size. */
        struct wire_msg e = msgs[4];
        len = wire_encode(buf, sizeof(buf), &e);
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + 8, 23);
        is_int(wire_decode(tmp, (size_t)len - 1, &m), -EBADMSG, "END with 23-byte payload");

        /* OFFER names. */
        struct wire_msg o = sample_offer("abc");
        len = wire_encode(buf, sizeof(buf), &o);
        const int nl = WIRE_HEADER_SIZE + 22, name = WIRE_HEADER_SIZE + 242;

        memcpy(tmp, buf, (size_t)len);
        tmp[name + 1] = '\0';
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER name with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + nl, 0);
        put32(tmp + 8, 242);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE + 242, &m), -EBADMSG, "OFFER with empty name");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + nl, 4);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER name_len beyond the payload");
        put16(tmp + nl, 2);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER name_len short of the payload");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + WIRE_HEADER_SIZE + 16, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER with chunk_size 0");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + WIRE_HEADER_SIZE + 24, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER of 0 lanes");
        put16(tmp + WIRE_HEADER_SIZE + 24, WIRE_LANES_MAX + 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER of more than WIRE_LANES_MAX lanes");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + WIRE_HEADER_SIZE + 30, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER of a job of no files");
        put32(tmp + WIRE_HEADER_SIZE + 30, 2);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER of file 2 (from 0) of a 2-file job");
        put32(tmp + WIRE_HEADER_SIZE + 30, 0xffffffffu);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "OFFER of file 2 of a 2^32-1-file job decodes");
        ok(m.offer.file == 2 && m.offer.job_files == 0xffffffffu && m.offer.job_bytes == (1ull << 40) + 0x0b0c,
           "with the session fields");
        /* A relay's flag where it makes no sense is malformed, not a refusal. */
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_RELAYED);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a relayed OFFER of file 3 of 3");
        put32(tmp + WIRE_HEADER_SIZE + 26, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a relayed OFFER of file 1 of 3");
        put32(tmp + WIRE_HEADER_SIZE + 30, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "a relayed OFFER of file 1 of 1 decodes");
        ok(m.offer.flags == WIRE_OFFER_RELAYED, "with its flag");
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_DIR);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a relayed tree's DEST of a job of 1 entry");
        put32(tmp + WIRE_HEADER_SIZE + 30, 3);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "a relayed tree's DEST of 3 entries decodes (version 12)");
        ok(m.offer.flags == (WIRE_OFFER_RELAYED | WIRE_OFFER_TREE | WIRE_OFFER_DIR), "with its flags");
        /* Deleting where it means nothing is malformed too. */
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_DELETE);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a tree's OFFER with WIRE_OFFER_DELETE alone");
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_SYNC | WIRE_OFFER_DELETE);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a file's OFFER with WIRE_OFFER_DELETE");
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "a synced tree's DEST with WIRE_OFFER_DELETE decodes");
        ok(m.offer.flags == (WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE), "with its flags");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + WIRE_HEADER_SIZE + 150, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER with pack entries but no pack flag");
        memcpy(tmp, buf, (size_t)len);
        tmp[WIRE_HEADER_SIZE + 185] = 1;
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER with a pack hash but no pack flag");
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_TREE | WIRE_OFFER_PACK);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a pack OFFER of no entries");
        put32(tmp + WIRE_HEADER_SIZE + 150, 2);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a pack OFFER past the job's files (2 + 2 > 3)");
        put32(tmp + WIRE_HEADER_SIZE + 30, 0xffffffffu);
        put32(tmp + WIRE_HEADER_SIZE + 150, 0xffffffffu);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "a pack OFFER whose file + entries would wrap");
        put32(tmp + WIRE_HEADER_SIZE + 150, 0xfffffffdu);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "a pack OFFER of the job's last entries decodes");
        ok(m.offer.pack_entries == 0xfffffffdu && m.offer.pack_hash[31] == 1 &&
           m.offer.flags == (WIRE_OFFER_TREE | WIRE_OFFER_PACK), "with its pack fields");

        /* The route hash only with WIRE_OFFER_ROUTE. */
        memcpy(tmp, buf, (size_t)len);
        tmp[WIRE_HEADER_SIZE + 202] = 1;
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER with a route hash but no route flag");
        memcpy(tmp, buf, (size_t)len);
        tmp[WIRE_HEADER_SIZE + 233] = 0x80;
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG,
               "OFFER with the route hash's last byte set, no route flag");
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_ROUTE);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "OFFER with the route flag and a route hash decodes");
        ok(m.offer.flags == WIRE_OFFER_ROUTE && m.offer.route_hash[31] == 0x80 && m.offer.route_hash[0] == 0 &&
           !strcmp(m.offer.name, "abc"), "with its route hash, and the name after it");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + WIRE_HEADER_SIZE + 20, WIRE_OFFER_ROUTE);
        ok(wire_decode(tmp, (size_t)len, &m) == 0 && m.offer.flags == WIRE_OFFER_ROUTE,
           "the route flag with a zero hash decodes (the receiver judges it)");

        /* ACCEPT grants 1 .. WIRE_LANES_MAX lanes. */
        struct wire_msg acc = msgs[1];
        len = wire_encode(buf, sizeof(buf), &acc);
        put16(buf + WIRE_HEADER_SIZE, 0);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT of 0 lanes");
        put16(buf + WIRE_HEADER_SIZE, WIRE_LANES_MAX + 1);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT of more than WIRE_LANES_MAX lanes");
        len = wire_encode(buf, sizeof(buf), &acc);
        put32(buf + WIRE_HEADER_SIZE + 8 + 4 * 3, 1);       /* lanes, flags, file, then resume[3] */
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT resuming a lane it did not grant");
        len = wire_encode(buf, sizeof(buf), &acc);
        put16(buf + WIRE_HEADER_SIZE + 2, 0x8000);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT with an unknown flag");
        acc.accept.resume[5] = 1;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT resuming a lane not granted is refused");
        acc = msgs[1];
        acc.accept.flags = WIRE_ACCEPT_SKIP;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT SKIP that resumes is refused");
        memset(acc.accept.resume, 0, sizeof(acc.accept.resume));
        len = wire_encode(buf, sizeof(buf), &acc);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 && m.accept.flags == WIRE_ACCEPT_SKIP,
           "an ACCEPT SKIP resuming nothing round-trips");
        put32(buf + WIRE_HEADER_SIZE + 8, 1);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT SKIP with a lane resuming");
        len = wire_encode(buf, sizeof(buf), &acc);
        put16(buf + WIRE_HEADER_SIZE + 2, WIRE_ACCEPT_SKIP | WIRE_ACCEPT_PUBLISHED);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT SKIP with PUBLISHED");
        acc.accept.flags = WIRE_ACCEPT_SKIP | WIRE_ACCEPT_PUBLISHED;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT SKIP with PUBLISHED is refused");

        /* RESUMED (version 7): alone, resume[0] the entries kept, the rest zero. */
        acc = msgs[1];
        memset(acc.accept.resume, 0, sizeof(acc.accept.resume));
        acc.accept.flags = WIRE_ACCEPT_RESUMED;
        acc.accept.resume[0] = 1234;
        len = wire_encode(buf, sizeof(buf), &acc);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 && m.accept.flags == WIRE_ACCEPT_RESUMED &&
           m.accept.resume[0] == 1234, "an ACCEPT RESUMED of 1234 entries round-trips");
        put32(buf + WIRE_HEADER_SIZE + 8 + 4, 1);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT RESUMED with a second resume[] set");
        len = wire_encode(buf, sizeof(buf), &acc);
        put32(buf + WIRE_HEADER_SIZE + 8, 0);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT RESUMED of no entries");
        acc.accept.flags = WIRE_ACCEPT_RESUMED | WIRE_ACCEPT_SKIP;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT RESUMED with SKIP is refused");
        acc.accept.flags = WIRE_ACCEPT_RESUMED | WIRE_ACCEPT_PUBLISHED;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT RESUMED with PUBLISHED is refused");
        acc.accept.flags = WIRE_ACCEPT_RESUMED;
        acc.accept.resume[0] = 0;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT RESUMED of no entries is refused");

        /* Rails (version 22): an ACCEPT names 1 .. WIRE_RAILS_MAX of the receiver's. */
        acc = msgs[1];
        acc.accept.flags = WIRE_ACCEPT_RAILS;
        memset(acc.accept.resume, 0, sizeof(acc.accept.resume));
        acc.accept.nrails = 2;
        acc.accept.rails[0] = sample_hop("::ffff:198.18.0.2", 7470);
        acc.accept.rails[1] = sample_hop("::ffff:198.18.1.2", 7470);
        len = wire_encode(buf, sizeof(buf), &acc);
        ok(len == WIRE_HEADER_SIZE + 72 + 1 + 2 * 18 && buf[WIRE_HEADER_SIZE + 72] == 2 &&
           buf[WIRE_HEADER_SIZE + 72 + 1 + 18 + 14] == 1 && buf[WIRE_HEADER_SIZE + 72 + 1 + 16] == 0x2e &&
           buf[WIRE_HEADER_SIZE + 72 + 1 + 17] == 0x1d, "an ACCEPT's rails: their count, then address and port each, after the mac");
        ok(wire_decode(buf, (size_t)len, &m) == 0 && m.accept.nrails == 2 && m.accept.rails[1].port == 7470 &&
           !memcmp(m.accept.rails[1].addr, acc.accept.rails[1].addr, WIRE_ADDR_SIZE), "and round-trip");
        is_int(wire_decode(buf, (size_t)len - 1, &m), -EBADMSG, "an ACCEPT one byte short of its rails");
        buf[WIRE_HEADER_SIZE + 72] = 3;
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "an ACCEPT naming more rails than it holds");
        buf[WIRE_HEADER_SIZE + 72] = 2;
        memcpy(buf + WIRE_HEADER_SIZE + 72 + 1 + 18, buf + WIRE_HEADER_SIZE + 72 + 1, 18);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "an ACCEPT naming one rail twice");
        acc.accept.rails[1] = sample_hop("::ffff:127.0.0.1", 7470);
        len = wire_encode(buf, sizeof(buf), &acc);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == -EBADMSG, "an ACCEPT naming a loopback rail");
        acc.accept.nrails = 0;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT with the rails flag and none is refused");
        acc.accept.nrails = WIRE_RAILS_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "an ACCEPT of more than WIRE_RAILS_MAX rails is refused");
        acc.accept.flags = 0;
        acc.accept.nrails = 1;
        is_int(wire_encode(buf, sizeof(buf), &acc), -EINVAL, "rails without the flag are refused");
        acc.accept.flags = WIRE_ACCEPT_RAILS | WIRE_ACCEPT_RESUMED;
        acc.accept.resume[0] = 3;
        acc.accept.rails[0] = sample_hop("::ffff:198.18.0.2", 7470);
        len = wire_encode(buf, sizeof(buf), &acc);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 && m.accept.flags == (WIRE_ACCEPT_RAILS | WIRE_ACCEPT_RESUMED),
           "rails go with RESUMED");
        {
                struct wire_msg ro = sample_offer("r.dat");

                ro.offer.flags = WIRE_OFFER_RAILS;
                ro.offer.file = 0;
                len = wire_encode(buf, sizeof(buf), &ro);
                ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 && m.offer.flags == WIRE_OFFER_RAILS,
                   "a first OFFER with WIRE_OFFER_RAILS round-trips");
                ro.offer.file = 1;
                is_int(wire_encode(buf, sizeof(buf), &ro), -EINVAL, "WIRE_OFFER_RAILS on a later offer is refused");
        }

        /* The digest only with WIRE_OFFER_DIGEST, that only with SYNC and no pack. */
        struct wire_msg so = sample_offer("s.dat");
        so.offer.flags = WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        memset(so.offer.digest, 0xd1, WIRE_DIGEST_SIZE);
        len = wire_encode(buf, sizeof(buf), &so);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 && m.offer.digest[0] == 0xd1 &&
           m.offer.digest[15] == 0xd1 && m.offer.flags == (WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST),
           "an OFFER with a digest round-trips");
        put16(buf + WIRE_HEADER_SIZE + 20, WIRE_OFFER_SYNC);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "a digest without WIRE_OFFER_DIGEST");
        put16(buf + WIRE_HEADER_SIZE + 20, WIRE_OFFER_DIGEST);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "WIRE_OFFER_DIGEST without WIRE_OFFER_SYNC");
        so.offer.flags = WIRE_OFFER_SYNC;
        is_int(wire_encode(buf, sizeof(buf), &so), -EINVAL, "an OFFER with a stray digest is refused");
        so.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        so.offer.pack_entries = 1;
        is_int(wire_encode(buf, sizeof(buf), &so), -EINVAL, "a pack with a digest is refused");
        so.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK | WIRE_OFFER_SKIP_EXISTING;
        memset(so.offer.digest, 0, WIRE_DIGEST_SIZE);
        len = wire_encode(buf, sizeof(buf), &so);
        ok(len > 0 && wire_decode(buf, (size_t)len, &m) == 0 &&
           m.offer.flags == (WIRE_OFFER_TREE | WIRE_OFFER_PACK | WIRE_OFFER_SKIP_EXISTING),
           "a pack with WIRE_OFFER_SKIP_EXISTING round-trips");
        len = wire_encode(buf, sizeof(buf), &o);

        /* A 256-byte name, length fields consistent: still too long. */
        memcpy(tmp, buf, (size_t)name);
        memset(tmp + name, 'n', 256);
        put16(tmp + nl, 256);
        put32(tmp + 8, 242 + 256);
        is_int(wire_decode(tmp, (size_t)name + 256, &m), -EBADMSG, "OFFER with a 256-byte name");
        put16(tmp + nl, 255);
        put32(tmp + 8, 242 + 255);
        is_int(wire_decode(tmp, (size_t)name + 255, &m), 0, "the same with 255 bytes is fine");

        /* REFUSE and RESULT text. */
        struct wire_msg r = msgs[2];
        len = wire_encode(buf, sizeof(buf), &r);
        memcpy(tmp, buf, (size_t)len);
        tmp[WIRE_HEADER_SIZE + 4 + 3] = '\0';
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "REFUSE text with embedded NUL");
        memcpy(tmp, buf, WIRE_HEADER_SIZE + 4);
        memset(tmp + WIRE_HEADER_SIZE + 4, 't', 201);
        put16(tmp + WIRE_HEADER_SIZE + 2, 201);
        put32(tmp + 8, 4 + 201);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE + 4 + 201, &m), -EBADMSG, "REFUSE with 201-byte text");

        struct wire_msg res = msgs[5];
        len = wire_encode(buf, sizeof(buf), &res);
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 1] = '\0';
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT text with trailing NUL");
        put16(tmp + WIRE_HEADER_SIZE + 2, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT text_len 0 with text bytes present");

        /* RESULT's hop fields: hops + count(hop_missing) <= WIRE_ROUTE_MAX, no bit at WIRE_ROUTE_MAX or
         * above, and hop_failed 0 with none missing, else the first missing. hop_missing is 8 u64
         * words at payload offset 30, lowest first; the mac follows at 94, the text at 126. */
        const int hops = WIRE_HEADER_SIZE + 24, failed = WIRE_HEADER_SIZE + 26, missing = WIRE_HEADER_SIZE + 30;
        struct nodeset ns;

        memcpy(tmp, buf, (size_t)len);
        put16(tmp + failed, WIRE_ROUTE_MAX + 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT whose failed hop is past WIRE_ROUTE_MAX");
        put16(tmp + failed, 0xffff);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT whose failed hop is 65535");
        put16(tmp + failed, 0);
        put16(tmp + hops, WIRE_ROUTE_MAX + 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT of more than WIRE_ROUTE_MAX hops");
        put16(tmp + hops, WIRE_ROUTE_MAX);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "RESULT of WIRE_ROUTE_MAX hops, none failed, decodes");
        is_int(m.result.hops, WIRE_ROUTE_MAX, "with its hops");
        put16(tmp + failed, 1);
        put64(tmp + missing, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT of WIRE_ROUTE_MAX hops and one more failed");
        put16(tmp + hops, WIRE_ROUTE_MAX - 1);
        put16(tmp + failed, WIRE_ROUTE_MAX);
        put16(tmp + WIRE_HEADER_SIZE + 28, WIRE_E_IO);
        put64(tmp + missing, 0);
        put64(tmp + missing + 8 * 7, UINT64_C(1) << (WIRE_ROUTE_MAX - 1 - 7 * 64));
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "RESULT whose hop %d of %d failed decodes", WIRE_ROUTE_MAX,
               WIRE_ROUTE_MAX);
        ok(m.result.hops == WIRE_ROUTE_MAX - 1 && m.result.hop_failed == WIRE_ROUTE_MAX &&
           m.result.hop_status == WIRE_E_IO && nodeset_has(&m.result.hop_missing, WIRE_ROUTE_MAX - 1) &&
           nodeset_count(&m.result.hop_missing) == 1 &&
           m.result.mac[0] == 0x99 && m.result.mac[WIRE_MAC_SIZE - 1] == 0x99 && !strcmp(m.result.text, "published"),
           "with its hop fields (bit %d in the last word), the mac after them, and the text after the mac",
           WIRE_ROUTE_MAX - 1);

        ns = set_of(1, 4, -1);
        put16(tmp + hops, WIRE_ROUTE_MAX - 2);
        put16(tmp + failed, 2);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "RESULT of %d hops, hops 2 and 5 missing, decodes",
               WIRE_ROUTE_MAX - 2);
        ok(m.result.hops == WIRE_ROUTE_MAX - 2 && m.result.hop_failed == 2 && nodeset_equal(&m.result.hop_missing, &ns),
           "with its hop fields");
        put16(tmp + failed, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT with hops missing and none failed");
        put16(tmp + failed, 5);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT whose failed hop is missing but not the first");
        put16(tmp + failed, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT whose failed hop is before the first missing");
        put16(tmp + failed, 3);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG,
               "RESULT whose failed hop is after the first missing, and not missing");
        put16(tmp + failed, 2);
        ns = (struct nodeset){ { 0 } };
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT with a hop failed and none missing");

        /* Far bits, as the words carry them. */
        put16(tmp + hops, WIRE_ROUTE_MAX - 1);
        put16(tmp + failed, 300);
        tmp[missing + 8 * 4 + 5] = 0x10;        /* word 4 (bits 256 ..), byte 5, bit 4: bit 300 */
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT missing bit 300 with hop_failed 300");
        put16(tmp + failed, 301);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "and with hop_failed 301 it decodes");
        ok(nodeset_has(&m.result.hop_missing, 300) && nodeset_count(&m.result.hop_missing) == 1 &&
           m.result.mac[0] == 0x99, "word 4, byte 5, 0x10 is bit 300: the words are little-endian, lowest first");
        ns = set_of(299, WIRE_ROUTE_MAX - 1, -1);
        put16(tmp + hops, WIRE_ROUTE_MAX - 2);
        put16(tmp + failed, 300);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "RESULT of %d hops, hops 300 and %d missing, decodes",
               WIRE_ROUTE_MAX - 2, WIRE_ROUTE_MAX);
        ok(nodeset_equal(&m.result.hop_missing, &ns) && m.result.hop_failed == 300, "with both bits");
        put16(tmp + failed, WIRE_ROUTE_MAX);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "the same naming hop %d failed (not the lowest)",
               WIRE_ROUTE_MAX);
        put16(tmp + failed, 300);
        put16(tmp + hops, WIRE_ROUTE_MAX - 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "the same with %d published (%d in all)",
               WIRE_ROUTE_MAX - 1, WIRE_ROUTE_MAX + 1);

        ns = set_of(WIRE_ROUTE_MAX, -1);
        put16(tmp + hops, 0);
        put16(tmp + failed, WIRE_ROUTE_MAX + 1);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT missing hop %d", WIRE_ROUTE_MAX + 1);
        ns = set_of(0, WIRE_ROUTE_MAX, -1);
        put16(tmp + failed, 1);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT with bit %d of hop_missing set",
               WIRE_ROUTE_MAX);
        memset(tmp + missing, 0xff, NODESET_WIRE_SIZE);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT with every bit of hop_missing set");
        ns = nodeset_first_n(WIRE_ROUTE_MAX);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "RESULT with all %d hops missing decodes", WIRE_ROUTE_MAX);
        ok(nodeset_count(&m.result.hop_missing) == WIRE_ROUTE_MAX && m.result.hop_failed == 1, "with every bit");
        put16(tmp + hops, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT of 1 hop published and %d missing",
               WIRE_ROUTE_MAX);
        ns = set_of(0, 1, 2, -1);
        put16(tmp + hops, WIRE_ROUTE_MAX - 2);
        put_nodeset(tmp + missing, &ns);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "RESULT of %d hops published and 3 missing",
               WIRE_ROUTE_MAX - 2);
        put16(tmp + hops, WIRE_ROUTE_MAX - 3);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "the same with %d published decodes", WIRE_ROUTE_MAX - 3);

        /* ROUTE: total u16, first u16, hops u16; a part of 1 .. WIRE_ROUTE_PART_MAX hops, first + hops
         * within the route's 1 .. WIRE_ROUTE_MAX, and a length that agrees with them. */
        struct wire_msg rt = msgs[7];
        const int rtotal = WIRE_HEADER_SIZE, rfirst = WIRE_HEADER_SIZE + 2, rh = WIRE_HEADER_SIZE + 4;

        is_int(rt.type, WIRE_ROUTE, "sample 7 is the ROUTE");
        len = wire_encode(buf, sizeof(buf), &rt);
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + rh, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 0 hops (with 2 hops' bytes)");
        put32(tmp + 8, 6);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE + 6, &m), -EBADMSG, "ROUTE of 0 hops, nothing after");
        put32(tmp + 8, 4);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE + 4, &m), -EBADMSG, "ROUTE cut before its hop count");
        put32(tmp + 8, 0);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE, &m), -EBADMSG, "ROUTE with no payload at all");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + rh, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 1 hop with 2 hops' bytes");
        put16(tmp + rh, 3);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 3 hops with 2 hops' bytes");
        put16(tmp + rh, 0xffff);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 65535 hops with 2 hops' bytes");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + 8, (uint32_t)(len - WIRE_HEADER_SIZE - 18));
        is_int(wire_decode(tmp, (size_t)len - 18, &m), -EBADMSG, "ROUTE of 2 hops with 1 hop's bytes");
        put32(tmp + 8, (uint32_t)(len - WIRE_HEADER_SIZE - 1));
        is_int(wire_decode(tmp, (size_t)len - 1, &m), -EBADMSG, "ROUTE of 2 hops a byte short");

        /* total and first, edited to disagree with hops (the length agreeing). */
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + rtotal, 0);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of a route of 0 hops");
        put16(tmp + rtotal, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 2 hops of a 1-hop route");
        put16(tmp + rtotal, WIRE_ROUTE_MAX + 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of a route of %d hops", WIRE_ROUTE_MAX + 1);
        put16(tmp + rtotal, 0xffff);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of a route of 65535 hops");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + rfirst, 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of hops 1 and 2 of a 2-hop route");
        put16(tmp + rfirst, 0xffff);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE from hop 65535");
        put16(tmp + rtotal, WIRE_ROUTE_MAX);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE from hop 65535 of a %d-hop route",
               WIRE_ROUTE_MAX);
        put16(tmp + rfirst, WIRE_ROUTE_MAX - 2);
        is_int(wire_decode(tmp, (size_t)len, &m), 0, "ROUTE of the last 2 hops of a %d-hop route decodes",
               WIRE_ROUTE_MAX);
        ok(m.route.total == WIRE_ROUTE_MAX && m.route.first == WIRE_ROUTE_MAX - 2 && m.route.hops == 2 &&
           m.route.hop[1].port == 7472, "with its total, first and hops");
        put16(tmp + rfirst, WIRE_ROUTE_MAX - 1);
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "ROUTE of 2 hops from the last of a %d-hop route",
               WIRE_ROUTE_MAX);

        /* WIRE_ROUTE_PART_MAX + 1 hops, length agreeing: one hop too many for a part. */
        const int over = WIRE_HEADER_SIZE + 6 + (WIRE_ROUTE_PART_MAX + 1) * 18;

        memcpy(tmp, buf, WIRE_HEADER_SIZE);
        memset(tmp + WIRE_HEADER_SIZE, 0x11, (size_t)over - WIRE_HEADER_SIZE);
        put16(tmp + rtotal, WIRE_ROUTE_MAX);
        put16(tmp + rfirst, 0);
        put16(tmp + rh, WIRE_ROUTE_PART_MAX + 1);
        put32(tmp + 8, (uint32_t)(over - WIRE_HEADER_SIZE));
        is_int(wire_decode(tmp, (size_t)over, &m), -EBADMSG, "ROUTE part of %d hops", WIRE_ROUTE_PART_MAX + 1);
        put16(tmp + rh, WIRE_ROUTE_PART_MAX);
        put32(tmp + 8, (uint32_t)(over - 18 - WIRE_HEADER_SIZE));
        is_int(wire_decode(tmp, (size_t)over - 18, &m), 0, "the same with %d hops decodes", WIRE_ROUTE_PART_MAX);
        ok(m.route.hops == WIRE_ROUTE_PART_MAX && m.route.hop[WIRE_ROUTE_PART_MAX - 1].port == 0x1111 &&
           m.route.hop[WIRE_ROUTE_PART_MAX - 1].addr[15] == 0x11, "with its last hop");
        put16(tmp + rtotal, WIRE_ROUTE_PART_MAX - 1);
        is_int(wire_decode(tmp, (size_t)over - 18, &m), -EBADMSG, "and is -EBADMSG as a part of a %d-hop route",
               WIRE_ROUTE_PART_MAX - 1);

        /* Strings come back NUL-terminated whatever the struct held before. */
        len = wire_encode(buf, sizeof(buf), &o);
        memset(&m, 0xaa, sizeof(m));
        is_int(wire_decode(buf, (size_t)len, &m), 0, "decode into a dirty struct");
        ok(m.offer.name[3] == '\0' && !strcmp(m.offer.name, "abc"), "name copied and NUL-terminated");
        is_int(wire_decode(NULL, 0, &m), -EBADMSG, "NULL buffer");
}

static struct wire_binding sample_binding(void)
{
        struct wire_binding bd;

        memset(&bd, 0, sizeof(bd));
        for (int i = 0; i < WIRE_ADDR_SIZE; i++) {
                bd.sender[i] = (uint8_t)(0x10 + i);
                bd.receiver[i] = (uint8_t)(0x20 + i);
        }
        bd.port = 7470;
        return bd;
}

/* Two MAC inputs are not the same bytes. */
static bool differs(const uint8_t *a, int la, const uint8_t *b, int lb)
{
        return la != lb || memcmp(a, b, (size_t)la) != 0;
}

static void test_mac_input(void)
{
        struct wire_msg m = sample_offer("f.txt");
        struct wire_offer o = m.offer, o2;
        struct wire_binding bd = sample_binding(), bd2;
        uint8_t nonce[WIRE_NONCE_SIZE], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        int la, lb;

        for (int i = 0; i < WIRE_NONCE_SIZE; i++)
                nonce[i] = (uint8_t)(0x30 + i);
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o);
        is_int(la, 24 + 32 + 34 + 210 + 5, "OFFER MAC input: label + Nr + binding + 210 bytes of fields + name");
        ok(memcmp(a, "rdmaxfer-v4 sender offer", 24) == 0, "starts with the label, which names the role");
        ok(memcmp(a + 24, nonce, 32) == 0, "then the receiver's nonce");
        ok(a[56] == 0x10 && a[71] == 0x1f && a[72] == 0x20 && a[87] == 0x2f && a[88] == (7470 & 0xff) &&
           a[89] == (7470 >> 8), "then the binding: sender, receiver, port little-endian");
        ok(a[90] == 0x08 && a[97] == 0x01 && a[103] == 0x01 && a[108] == 0x10 && a[112] == 5 &&
           a[114] == 4 && a[116] == 2 && a[120] == 3 && a[124] == 0x0c && a[125] == 0x0b &&
           a[132] == 0xed && a[136] == 0x88 && a[143] == 0x11 &&
           a[144] == 0x30 && a[159] == 0x3f && a[160] == 0x40 && a[175] == 0x4f &&
           a[176] == 0x60 && a[207] == 0x7f && a[208] == 0 && a[244] == 0 && a[259] == 0 && a[260] == 0 &&
           a[291] == 0 && a[292] == 0 && a[299] == 0 && memcmp(a + 300, "f.txt", 5) == 0,
           "then the offer fields little-endian, as on the wire, the sender's nonce among them");
        o2 = o;
        o2.flags = WIRE_OFFER_ROUTE;
        for (int i = 0; i < WIRE_ROUTE_HASH_SIZE; i++)
                o2.route_hash[i] = (uint8_t)(0xe0 + i);
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(lb == la && b[110] == 0x80 && b[259] == 0 && b[260] == 0xe0 && b[291] == 0xff &&
           memcmp(b + 300, "f.txt", 5) == 0, "the route hash comes after the digest, before data_bytes");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o2);
        o2.route_hash[16] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the route hash is covered");
        la = wire_next_offer_mac_input(a, sizeof(a), &o2);
        o2.route_hash[16] ^= 1;
        lb = wire_next_offer_mac_input(b, sizeof(b), &o2);
        ok(differs(a, la, b, lb), "and in a later offer's MAC too");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o);

        o2 = o;
        memset(o2.mac, 0, sizeof(o2.mac));
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(!differs(a, la, b, lb), "the MAC field is not part of its own input");

        o2 = o;
        o2.size++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the size is covered");
        o2 = o;
        o2.flags = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the flags are covered");
        o2 = o;
        o2.lanes = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the lanes are covered");
        o2 = o;
        o2.file = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the file index is covered");
        o2 = o;
        o2.job_files++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the job's file count is covered");
        o2 = o;
        o2.job_bytes++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the job's byte count is covered");
        o2 = o;
        o2.mode = 0600;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the mode is covered");
        o2 = o;
        o2.mtime_ns++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the mtime is covered");
        o2 = o;
        o2.pack_entries = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "a pack's entry count is covered");
        o2 = o;
        o2.pack_hash[7] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "a pack's hash is covered");
        lb = wire_next_offer_mac_input(b, sizeof(b), &o2);
        la = wire_next_offer_mac_input(a, sizeof(a), &o);
        ok(differs(a, la, b, lb), "and in a later offer's MAC too");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o);
        o2 = o;
        o2.flags = WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the sync flags are covered");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o2);
        o2.digest[15] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the digest is covered");
        la = wire_next_offer_mac_input(a, sizeof(a), &o2);
        o2.digest[0] ^= 1;
        lb = wire_next_offer_mac_input(b, sizeof(b), &o2);
        ok(differs(a, la, b, lb), "and in a later offer's MAC too");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o);

        /* A later offer of the session: under S, no nonce or binding of its own. */
        la = wire_next_offer_mac_input(a, sizeof(a), &o);
        ok(la == 29 + 210 + 5 && memcmp(a, "rdmaxfer-v4 sender next offer", 29) == 0 && a[29] == 0x08 &&
           a[29 + 26] == 2 && a[29 + 70] == 0x40 && a[29 + 201] == 0 && memcmp(a + 29 + 210, "f.txt", 5) == 0,
           "next OFFER MAC input: its own label, then the same fields");
        o2 = o;
        o2.file = 1;
        lb = wire_next_offer_mac_input(b, sizeof(b), &o2);
        ok(differs(a, la, b, lb), "next OFFER: the file index is covered");
        o2 = o;
        o2.name[0] = 'g';
        lb = wire_next_offer_mac_input(b, sizeof(b), &o2);
        ok(differs(a, la, b, lb), "next OFFER: the name is covered");
        is_int(wire_next_offer_mac_input(b, (size_t)la - 1, &o), -EMSGSIZE, "next OFFER: one byte short is -EMSGSIZE");
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o);
        o2 = o;
        o2.token[15] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the lane token is covered");
        o2 = o;
        o2.source[0] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the source identity token is covered");
        o2 = o;
        o2.nonce[31] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o2);
        ok(differs(a, la, b, lb), "the sender's nonce is covered");
        nonce[0] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &o);
        nonce[0] ^= 1;
        ok(differs(a, la, b, lb), "the receiver's nonce is covered");
        bd2 = bd;
        bd2.sender[15] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd2, &o);
        ok(differs(a, la, b, lb), "the sender's address is covered");
        bd2 = bd;
        bd2.receiver[15] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd2, &o);
        ok(differs(a, la, b, lb), "the receiver's address is covered");
        bd2 = bd;
        bd2.port++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd2, &o);
        ok(differs(a, la, b, lb), "the receiver's port is covered");

        is_int(wire_offer_mac_input(a, (size_t)la - 1, nonce, &bd, &o), -EMSGSIZE, "one byte short is -EMSGSIZE");
        o2 = o;
        o2.name[0] = '\0';
        is_int(wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o2), -EINVAL, "empty name is -EINVAL");
        memset(o2.name, 'z', sizeof(o2.name));
        is_int(wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o2), -EINVAL, "unterminated name is -EINVAL");
        memset(o2.name, 'z', WIRE_NAME_MAX);
        o2.name[WIRE_NAME_MAX] = '\0';
        o2.flags = WIRE_OFFER_ROUTE;
        memset(o2.route_hash, 0xee, WIRE_ROUTE_HASH_SIZE);
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &o2);
        ok(la == 24 + 32 + 34 + 210 + WIRE_NAME_MAX && la <= WIRE_MAC_INPUT_MAX,
           "the longest input (%d bytes) fits WIRE_MAC_INPUT_MAX", la);
}

static void test_mac_inputs_after_offer(void)
{
        struct wire_binding bd = sample_binding(), bd2;
        struct wire_accept acc = { .lanes = 3 };
        struct wire_hello h = { .flags = WIRE_HELLO_LANE | WIRE_HELLO_KEY, .lane = 2 };
        struct wire_end e = { .bytes = 0x0102030405060708ull }, e2;
        struct wire_result r = { .status = WIRE_E_CHECKSUM, .bytes = 9, .usec = 10, .hops = 2, .hop_failed = 3,
                                 .hop_status = WIRE_E_NO_SPACE }, r2;
        uint8_t mac[WIRE_MAC_SIZE], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        int la, lb;

        memset(mac, 0xab, sizeof(mac));
        la = wire_session_info(a, sizeof(a), mac);
        ok(la == 19 + 32 && memcmp(a, "rdmaxfer-v4 session", 19) == 0 && a[19] == 0xab && a[50] == 0xab,
           "session info: label, then the OFFER's mac");

        memset(acc.mac, 0x11, sizeof(acc.mac));
        la = wire_accept_mac_input(a, sizeof(a), &acc);
        ok(la == 27 + 2 + 2 + 4 + 32 && memcmp(a, "rdmaxfer-v4 receiver accept", 27) == 0 && a[27] == 3 &&
           a[28] == 0 && a[29] == 0 && a[31] == 0,
           "ACCEPT MAC input: label naming the receiver, lanes, flags, file, resume (not the mac)");
        acc.lanes = 2;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "the granted lanes are covered");
        acc.lanes = 3;
        acc.file = 1;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "ACCEPT: the file index is covered");
        acc.resume[2] = 1;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "where a lane resumes is covered");
        acc.resume[2] = 0;
        acc.flags = WIRE_ACCEPT_PUBLISHED;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "the flags are covered");
        acc.flags = WIRE_ACCEPT_RAILS;
        acc.nrails = 2;
        acc.rails[0] = sample_hop("::ffff:198.18.0.2", 7470);
        acc.rails[1] = sample_hop("::ffff:198.18.1.2", 7470);
        la = wire_accept_mac_input(a, sizeof(a), &acc);
        ok(la == 27 + 2 + 2 + 4 + 32 + 1 + 2 * 18, "ACCEPT MAC input with rails: their count and each after resume");
        acc.rails[1].addr[15] ^= 1;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "a rail's address is covered");
        acc.rails[1].addr[15] ^= 1;
        acc.rails[1].port++;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "a rail's port is covered");
        acc.rails[1].port--;
        acc.nrails = 1;
        lb = wire_accept_mac_input(b, sizeof(b), &acc);
        ok(differs(a, la, b, lb), "how many rails is covered");
        acc.flags = 0;
        acc.nrails = 0;

        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                h.token[i] = (uint8_t)(0x80 + i);
        memset(h.tag, 0xee, sizeof(h.tag));
        la = wire_lane_mac_input(a, sizeof(a), &bd, &h);
        ok(la == 23 + 34 + 2 + 2 + 16 && memcmp(a, "rdmaxfer-v4 sender lane", 23) == 0 && a[23] == 0x10 &&
           a[57] == 3 && a[59] == 2 && a[61] == 0x80 && a[76] == 0x8f,
           "lane MAC input: label, binding, flags, lane, token (not the tag)");
        h.lane = 3;
        lb = wire_lane_mac_input(b, sizeof(b), &bd, &h);
        ok(differs(a, la, b, lb), "the lane index is covered");
        h.lane = 2;
        h.token[0] ^= 1;
        lb = wire_lane_mac_input(b, sizeof(b), &bd, &h);
        ok(differs(a, la, b, lb), "the token is covered");
        h.token[0] ^= 1;
        bd2 = bd;
        bd2.sender[0] ^= 1;
        lb = wire_lane_mac_input(b, sizeof(b), &bd2, &h);
        ok(differs(a, la, b, lb), "the lane's own addresses are covered");

        for (int i = 0; i < WIRE_DIGEST_SIZE; i++)
                e.digest[i] = (uint8_t)i;
        memset(e.mac, 0x55, sizeof(e.mac));
        la = wire_end_mac_input(a, sizeof(a), 1, &e);
        ok(la == 22 + 2 + 4 + 8 + 16 && memcmp(a, "rdmaxfer-v4 sender end", 22) == 0 && a[22] == 1 &&
           a[24] == 0 && a[28] == 0x08 && a[35] == 0x01 && a[36] == 0 && a[51] == 15,
           "END MAC input: label, lane, file, bytes, digest (not the mac)");
        e2 = e;
        e2.file = 1;
        lb = wire_end_mac_input(b, sizeof(b), 1, &e2);
        ok(differs(a, la, b, lb), "END: the file index is covered");
        lb = wire_end_mac_input(b, sizeof(b), 2, &e);
        ok(differs(a, la, b, lb), "END: the lane index is covered");
        e2 = e;
        e2.digest[15] ^= 1;
        lb = wire_end_mac_input(b, sizeof(b), 1, &e2);
        ok(differs(a, la, b, lb), "END: the digest is covered");
        e2 = e;
        e2.bytes--;
        lb = wire_end_mac_input(b, sizeof(b), 1, &e2);
        ok(differs(a, la, b, lb), "END: the byte count is covered");
        is_int(wire_end_mac_input(a, sizeof(a), WIRE_LANES_MAX, &e), -EINVAL, "END: a lane past the last is -EINVAL");

        r.hop_missing = set_of(2, 17, 24, 300, -1);   /* word 0 0x01020004; word 4, byte 5, 0x10 */
        strcpy(r.text, "bad");
        memset(r.mac, 0x66, sizeof(r.mac));
        la = wire_result_mac_input(a, sizeof(a), 0, &r);
        ok(la == 27 + 2 + 94 + 3 && memcmp(a, "rdmaxfer-v4 receiver result", 27) == 0 && a[27] == 0 &&
           a[29] == WIRE_E_CHECKSUM && a[31] == 3 && a[33] == 0 && a[37] == 9 && a[45] == 10 &&
           a[53] == 2 && a[54] == 0 && a[55] == 3 && a[56] == 0 && a[57] == WIRE_E_NO_SPACE && a[58] == 0 &&
           a[59] == 0x04 && a[60] == 0x00 && a[61] == 0x02 && a[62] == 0x01 && a[63] == 0 && a[66] == 0 &&
           a[59 + 37] == 0x10 && a[59 + 63] == 0 && memcmp(a + 123, "bad", 3) == 0,
           "RESULT MAC input: label, lane, status, text_len, file, bytes, usec, hops, hop_failed, hop_status, "
           "hop_missing (64 bytes), text (not the mac)");
        {
                int nonzero = 0;

                for (int i = 59; i < 123; i++)
                        nonzero += a[i] != 0;
                is_int(nonzero, 4, "hop_missing's 64 bytes hold its 4 bits and nothing else");
        }
        r2 = r;
        r2.file = 4;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the file index is covered");
        r2 = r;
        r2.status = WIRE_OK;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the status is covered");
        r2 = r;
        r2.text[2] = 'x';
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the text is covered");
        lb = wire_result_mac_input(b, sizeof(b), 1, &r);
        ok(differs(a, la, b, lb), "RESULT: the lane is covered");
        r2 = r;
        r2.hops = 1;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the hops published are covered");
        r2 = r;
        r2.hop_failed = 2;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the failed hop is covered");
        r2 = r;
        r2.hop_status = WIRE_E_IO;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the failed hop's status is covered");
        r2 = r;
        r2.hop_missing.w[0] ^= 1u << 5;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: the missing hops are covered");
        r2 = r;
        r2.hop_missing.w[0] ^= 1u << 24;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: hop_missing's first word's high bits are covered");
        r2 = r;
        r2.hop_missing.w[4] ^= UINT64_C(1) << 44;
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: hop_missing's bit 300 is covered");
        r2 = r;
        nodeset_add(&r2.hop_missing, WIRE_ROUTE_MAX - 1);
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(differs(a, la, b, lb), "RESULT: hop_missing's bit %d, in its last word, is covered", WIRE_ROUTE_MAX - 1);
        r2 = r;
        memset(r2.text, 't', WIRE_TEXT_MAX);
        r2.text[WIRE_TEXT_MAX] = '\0';
        lb = wire_result_mac_input(b, sizeof(b), 0, &r2);
        ok(lb == 27 + 2 + 94 + WIRE_TEXT_MAX && lb <= WIRE_MAC_INPUT_MAX,
           "RESULT: the longest input (%d bytes) fits WIRE_MAC_INPUT_MAX", lb);
        is_int(wire_result_mac_input(a, (size_t)la - 1, 0, &r), -EMSGSIZE, "RESULT: one byte short is -EMSGSIZE");
}

static void test_binding(void)
{
        struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(40000) };
        struct sockaddr_in r4 = { .sin_family = AF_INET, .sin_port = htons(7470) };
        struct sockaddr_in6 r6 = { .sin6_family = AF_INET6, .sin6_port = htons(7470) };
        struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(1) };
        struct sockaddr un = { .sa_family = AF_UNIX };
        struct wire_binding a, b;
        static const uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 1 };

        inet_pton(AF_INET, "198.18.0.1", &s4.sin_addr);
        inet_pton(AF_INET, "198.18.0.2", &r4.sin_addr);
        inet_pton(AF_INET6, "::ffff:198.18.0.2", &r6.sin6_addr);
        inet_pton(AF_INET6, "::ffff:198.18.0.1", &s6.sin6_addr);
        is_int(wire_binding_set(&a, (struct sockaddr *)&s4, (struct sockaddr *)&r4), 0, "IPv4 binding");
        ok(memcmp(a.sender, mapped, 16) == 0 && a.port == 7470, "IPv4 as ::ffff:a.b.c.d; the receiver's port");
        is_int(wire_binding_set(&b, (struct sockaddr *)&s6, (struct sockaddr *)&r6), 0, "IPv6 binding");
        ok(memcmp(&a, &b, sizeof(a)) == 0,
           "a dual-stack view of the same hosts binds the same; the sender's port is not bound");
        r4.sin_port = htons(7471);
        wire_binding_set(&b, (struct sockaddr *)&s4, (struct sockaddr *)&r4);
        ok(b.port == 7471 && memcmp(&a, &b, sizeof(a)) != 0, "another listening port binds differently");
        is_int(wire_binding_set(&b, &un, (struct sockaddr *)&r4), -EAFNOSUPPORT, "not IP: -EAFNOSUPPORT");
}

/* A route's hops from and back to socket addresses, and as log text. */
static void test_hop(void)
{
        struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(7471) };
        struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(7471) };
        struct sockaddr_in6 m6 = { .sin6_family = AF_INET6, .sin6_port = htons(7472) };
        struct sockaddr un = { .sa_family = AF_UNIX };
        static const uint8_t mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 2 };
        static const uint8_t zero[sizeof(struct wire_hop)];
        struct sockaddr_storage ss;
        struct wire_hop h;
        char str[WIRE_HOP_STR_MAX];

        inet_pton(AF_INET, "198.18.0.2", &s4.sin_addr);
        inet_pton(AF_INET6, "fd00::2", &s6.sin6_addr);
        inet_pton(AF_INET6, "::ffff:198.18.0.2", &m6.sin6_addr);

        is_int(wire_hop_set(&h, (struct sockaddr *)&s4), 0, "IPv4 hop");
        ok(memcmp(h.addr, mapped, 16) == 0 && h.port == 7471, "IPv4 as ::ffff:a.b.c.d, with its port");
        is_int(wire_hop_sockaddr(&h, &ss), sizeof(struct sockaddr_in), "and back: a sockaddr_in");
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        ok(in->sin_family == AF_INET && in->sin_port == htons(7471) &&
           in->sin_addr.s_addr == s4.sin_addr.s_addr, "the same address and port");
        wire_hop_str(&h, str, sizeof(str));
        is_str(str, "198.18.0.2:7471", "IPv4 hop text");

        is_int(wire_hop_set(&h, (struct sockaddr *)&s6), 0, "IPv6 hop");
        ok(memcmp(h.addr, &s6.sin6_addr, 16) == 0 && h.port == 7471, "IPv6 as is, with its port");
        is_int(wire_hop_sockaddr(&h, &ss), sizeof(struct sockaddr_in6), "and back: a sockaddr_in6");
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        ok(in6->sin6_family == AF_INET6 && in6->sin6_port == htons(7471) &&
           memcmp(&in6->sin6_addr, &s6.sin6_addr, 16) == 0, "the same address and port");
        wire_hop_str(&h, str, sizeof(str));
        is_str(str, "[fd00::2]:7471", "IPv6 hop text, bracketed");

        is_int(wire_hop_set(&h, (struct sockaddr *)&m6), 0, "a v4-mapped IPv6 hop");
        ok(memcmp(h.addr, mapped, 16) == 0 && h.port == 7472, "is the IPv4 one's address");
        is_int(wire_hop_sockaddr(&h, &ss), sizeof(struct sockaddr_in), "and comes back as IPv4");
        wire_hop_str(&h, str, sizeof(str));
        is_str(str, "198.18.0.2:7472", "and reads as IPv4");

        memset(h.addr, 0xff, WIRE_ADDR_SIZE);
        h.port = 65535;
        wire_hop_str(&h, str, sizeof(str));
        ok(strlen(str) < WIRE_HOP_STR_MAX && str[0] == '[' && !strcmp(str + strlen(str) - 7, "]:65535"),
           "the longest hop text fits WIRE_HOP_STR_MAX (%s)", str);
        wire_hop_str(&h, str, 8);
        is_int(strlen(str), 7, "a short buffer gets a truncated, terminated text");

        memset(&h, 0x5a, sizeof(h));
        is_int(wire_hop_set(&h, &un), -EAFNOSUPPORT, "AF_UNIX: -EAFNOSUPPORT");
        ok(memcmp(&h, zero, sizeof(h)) == 0, "and the hop is left zeroed");
        is_int(wire_hop_set(&h, NULL), -EAFNOSUPPORT, "no address: -EAFNOSUPPORT");
}

/* PROGRESS (version 10; windows of a route, version 11): a relay's word on how far each hop got. */
static void test_progress(void)
{
        static const uint8_t golden[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x09, 0x00,  /* magic, v30, PROGRESS */
                0x16, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* len 22, credits 0 */
                0x05, 0x00, 0x03, 0x00, 0x02, 0x00,              /* total 5, first 3, hops 2 */
                0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  /* hop 3's bytes */
                0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* hop 4's */
        };
        const int ptotal = WIRE_HEADER_SIZE, pfirst = WIRE_HEADER_SIZE + 2, ph = WIRE_HEADER_SIZE + 4;
        struct wire_msg m, back;
        uint8_t buf[WIRE_CTRL_MAX + 64];
        int len;

        msg_reset(&m, WIRE_PROGRESS, 0);
        m.progress.total = 5;
        m.progress.first = 3;
        m.progress.hops = 2;
        m.progress.bytes[0] = 0x0102030405060708ull;
        m.progress.bytes[1] = 42;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == (int)sizeof(golden) && memcmp(buf, golden, sizeof(golden)) == 0,
           "PROGRESS: total u16, first u16, hops u16, then each hop's bytes u64");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        ok(back.progress.total == 5 && back.progress.first == 3 && back.progress.hops == 2 &&
           back.progress.bytes[0] == m.progress.bytes[0] && back.progress.bytes[1] == 42,
           "with its window and its hops' bytes");

        /* A window in the middle of a long route. */
        msg_reset(&m, WIRE_PROGRESS, 0);
        m.progress.total = WIRE_ROUTE_MAX;
        m.progress.first = 480;
        m.progress.hops = 31;
        for (int i = 0; i < 31; i++)
                m.progress.bytes[i] = (uint64_t)(480 + i) << 32 | (uint64_t)i;
        len = wire_encode(buf, sizeof(buf), &m);
        is_int(len, WIRE_HEADER_SIZE + 6 + 8 * 31, "hops 480 .. 510 of a %d-hop route: header + 6 + 31 * 8",
               WIRE_ROUTE_MAX);
        ok(wire_decode(buf, (size_t)len, &back) == 0 && memcmp(&back, &m, sizeof(back)) == 0,
           "and round-trip field for field");

        m.progress.first = 0;
        m.progress.hops = WIRE_PROGRESS_PART_MAX;
        len = wire_encode(buf, sizeof(buf), &m);
        is_int(len, WIRE_HEADER_SIZE + 6 + 8 * WIRE_PROGRESS_PART_MAX, "the largest PROGRESS (%d hops) encodes",
               WIRE_PROGRESS_PART_MAX);
        ok(len <= WIRE_CTRL_MAX, "and fits WIRE_CTRL_MAX");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        m.progress.first = WIRE_ROUTE_MAX - WIRE_PROGRESS_PART_MAX;
        ok(wire_encode(buf, sizeof(buf), &m) > 0, "the route's last %d hops are fine", WIRE_PROGRESS_PART_MAX);
        m.progress.first = WIRE_ROUTE_MAX - WIRE_PROGRESS_PART_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "a window past the route's end is refused");
        m.progress.first = 0;
        m.progress.hops = 0;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "PROGRESS of 0 hops is refused");
        m.progress.hops = WIRE_PROGRESS_PART_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "PROGRESS of %d hops is refused",
               WIRE_PROGRESS_PART_MAX + 1);
        m.progress.hops = 2;
        m.progress.total = 0;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "PROGRESS of a route of 0 hops is refused");
        m.progress.total = WIRE_ROUTE_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "PROGRESS of a route of %d hops is refused",
               WIRE_ROUTE_MAX + 1);
        m.progress.total = 3;
        m.progress.first = 2;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "PROGRESS of hops 2 and 3 of a 3-hop route is refused");

        memcpy(buf, golden, sizeof(golden));
        buf[ph] = 3;    /* 3 hops on 2 hops' bytes */
        is_int(wire_decode(buf, sizeof(golden), &back), -EBADMSG, "a hop count that disagrees with the length");
        buf[ph] = 0;
        buf[8] = 6;
        is_int(wire_decode(buf, WIRE_HEADER_SIZE + 6, &back), -EBADMSG, "0 hops");
        buf[ph] = 2;
        buf[8] = 0x15;
        is_int(wire_decode(buf, sizeof(golden) - 1, &back), -EBADMSG, "a byte short");
        buf[8] = 0x16;
        buf[pfirst] = 4;
        is_int(wire_decode(buf, sizeof(golden), &back), -EBADMSG, "a window past the route's end (4 + 2 > 5)");
        buf[pfirst] = 3;
        put16(buf + ptotal, 0);
        is_int(wire_decode(buf, sizeof(golden), &back), -EBADMSG, "a route of 0 hops");
        put16(buf + ptotal, WIRE_ROUTE_MAX + 1);
        is_int(wire_decode(buf, sizeof(golden), &back), -EBADMSG, "a route of %d hops", WIRE_ROUTE_MAX + 1);
        put16(buf + ptotal, WIRE_ROUTE_MAX);
        is_int(wire_decode(buf, sizeof(golden), &back), 0, "a route of %d hops decodes", WIRE_ROUTE_MAX);

        /* WIRE_PROGRESS_PART_MAX + 1 hops, the length agreeing. */
        const int over = WIRE_HEADER_SIZE + 6 + 8 * (WIRE_PROGRESS_PART_MAX + 1);

        memset(buf + WIRE_HEADER_SIZE, 0, (size_t)over - WIRE_HEADER_SIZE);
        put16(buf + ptotal, WIRE_ROUTE_MAX);
        put16(buf + pfirst, 0);
        put16(buf + ph, WIRE_PROGRESS_PART_MAX + 1);
        put32(buf + 8, (uint32_t)(over - WIRE_HEADER_SIZE));
        is_int(wire_decode(buf, (size_t)over, &back), -EBADMSG, "PROGRESS of %d hops", WIRE_PROGRESS_PART_MAX + 1);
        put16(buf + ph, WIRE_PROGRESS_PART_MAX);
        put32(buf + 8, (uint32_t)(over - 8 - WIRE_HEADER_SIZE));
        is_int(wire_decode(buf, (size_t)over - 8, &back), 0, "the same with %d decodes", WIRE_PROGRESS_PART_MAX);
}

/* Hop k of a long route: ::ffff:198.18.(k >> 8).(k & 255), port 7471 + k. */
static struct wire_hop long_route_hop(unsigned int k)
{
        struct wire_hop h;

        memset(&h, 0, sizeof(h));
        h.addr[10] = h.addr[11] = 0xff;
        h.addr[12] = 198;
        h.addr[13] = 18;
        h.addr[14] = (uint8_t)(k >> 8);
        h.addr[15] = (uint8_t)k;
        h.port = (uint16_t)(7471 + k);
        return h;
}

/* An offer's route_hash: SHA-256 over the count and then every hop of the
 * route, whichever ROUTE part carried it. */
static void test_route_hash(void)
{
        struct wire_msg m = sample_route(), part, back;
        struct wire_route r = m.route, r2;
        struct wire_hop route[WIRE_ROUTE_MAX], got[WIRE_ROUTE_MAX];
        uint8_t h[WIRE_ROUTE_HASH_SIZE], h2[WIRE_ROUTE_HASH_SIZE], want[WIRE_ROUTE_HASH_SIZE];
        uint8_t bytes[2 + 2 * 18], buf[WIRE_CTRL_MAX];
        unsigned int parts = 0, next = 0;
        bool all = true;
        int len;

        /* By hand: hops u16 LE, then per hop addr[16] and port u16 LE. */
        memset(bytes, 0, sizeof(bytes));
        put16(bytes, 2);
        bytes[2 + 10] = bytes[2 + 11] = 0xff;
        bytes[2 + 12] = 198;
        bytes[2 + 13] = 18;
        bytes[2 + 15] = 2;
        put16(bytes + 2 + 16, 7471);
        bytes[20] = 0xfd;
        bytes[20 + 15] = 3;
        put16(bytes + 20 + 16, 7472);
        crypto_hash_sha256(want, bytes, sizeof(bytes));
        wire_route_hash(r.hop, r.hops, h);
        ok(memcmp(h, want, sizeof(h)) == 0, "route hash = SHA-256(hops, then addr and port per hop, LE)");
        /* Python: hashlib.sha256(struct.pack('<H', 2) + ipaddress.IPv6Address('::ffff:198.18.0.2').packed +
         * struct.pack('<H', 7471) + ipaddress.IPv6Address('fd00::3').packed + struct.pack('<H', 7472)). */
        sodium_hex2bin(want, sizeof(want), "9bc2686d6bee7c6b0281a3a7bd2ff75361a7569aebf3cb968a21d1f29fccf568", 64,
                       NULL, NULL, NULL);
        ok(memcmp(h, want, sizeof(h)) == 0, "and its known answer, the same as version 10's for a 2-hop route");
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == WIRE_HEADER_SIZE + 4 + (int)sizeof(bytes) &&
           memcmp(buf + WIRE_HEADER_SIZE + 4, bytes, sizeof(bytes)) == 0,
           "which are a whole route's only ROUTE part's bytes from its hop count on");

        r2 = r;
        r2.hop[2] = sample_hop("fd00::9", 9);
        wire_route_hash(r2.hop, 2, h2);
        ok(memcmp(h, h2, sizeof(h)) == 0, "hops past the count are not hashed");
        r2 = r;
        r2.hop[1].port++;
        wire_route_hash(r2.hop, 2, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "a hop's port changes the hash");
        r2 = r;
        r2.hop[0].addr[15] ^= 1;
        wire_route_hash(r2.hop, 2, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "a hop's address changes the hash");
        r2 = r;
        r2.hop[0] = r.hop[1];
        r2.hop[1] = r.hop[0];
        wire_route_hash(r2.hop, 2, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "the hops' order changes the hash");
        r2 = r;
        wire_route_hash(r2.hop, 1, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "dropping the last hop changes the hash");
        r2.hop[2] = r.hop[1];
        wire_route_hash(r2.hop, 3, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "adding a hop changes the hash");

        /* A route of WIRE_ROUTE_MAX hops. Known answer from Python's hashlib:
         *   b = struct.pack('<H', 511)
         *   for k in range(511):
         *       b += bytes(10) + b'\xff\xff' + bytes([198, 18, k >> 8, k & 255]) + struct.pack('<H', 7471 + k)
         *   hashlib.sha256(b).hexdigest() */
        for (unsigned int k = 0; k < WIRE_ROUTE_MAX; k++)
                route[k] = long_route_hop(k);
        sodium_hex2bin(want, sizeof(want), "5d287e9756c13ab166f8880421708e981998926ecdfa5e4dabada4f109123628", 64,
                       NULL, NULL, NULL);
        wire_route_hash(route, WIRE_ROUTE_MAX, h);
        ok(memcmp(h, want, sizeof(h)) == 0, "a %d-hop route's hash: its known answer", WIRE_ROUTE_MAX);
        route[300].port ^= 1;
        wire_route_hash(route, WIRE_ROUTE_MAX, h2);
        route[300].port ^= 1;
        ok(memcmp(h, h2, sizeof(h)) != 0, "hop 300's port changes it");
        route[WIRE_ROUTE_MAX - 1].addr[15] ^= 1;
        wire_route_hash(route, WIRE_ROUTE_MAX, h2);
        route[WIRE_ROUTE_MAX - 1].addr[15] ^= 1;
        ok(memcmp(h, h2, sizeof(h)) != 0, "the last hop's address changes it");
        wire_route_hash(route, WIRE_ROUTE_MAX - 1, h2);
        ok(memcmp(h, h2, sizeof(h)) != 0, "dropping the last hop changes it");

        /* Sent in parts and put back together, the route hashes the same. */
        memset(got, 0, sizeof(got));
        for (unsigned int first = 0; first < WIRE_ROUTE_MAX; first += WIRE_ROUTE_PART_MAX) {
                msg_reset(&part, WIRE_ROUTE, 0);
                part.route.total = WIRE_ROUTE_MAX;
                part.route.first = (uint16_t)first;
                part.route.hops = (uint16_t)MIN(WIRE_ROUTE_PART_MAX, WIRE_ROUTE_MAX - first);
                memcpy(part.route.hop, route + first, part.route.hops * sizeof(route[0]));
                len = wire_encode(buf, sizeof(buf), &part);
                if (len < 0 || len > WIRE_CTRL_MAX || wire_decode(buf, (size_t)len, &back) != 0 ||
                    back.route.first != next || back.route.total != WIRE_ROUTE_MAX) {
                        all = false;
                        break;
                }
                memcpy(got + back.route.first, back.route.hop, back.route.hops * sizeof(got[0]));
                next = back.route.first + back.route.hops;
                parts++;
        }
        ok(all && next == WIRE_ROUTE_MAX && parts == (WIRE_ROUTE_MAX + WIRE_ROUTE_PART_MAX - 1) / WIRE_ROUTE_PART_MAX,
           "a %d-hop route goes in %u ROUTE parts, in order", WIRE_ROUTE_MAX, parts);
        wire_route_hash(got, next, h2);
        ok(memcmp(h, want, sizeof(h)) == 0 && memcmp(h2, want, sizeof(h2)) == 0,
           "and its hops, put back together, hash to the same known answer");
}

/* The runs of chunks the lanes carry: contiguous, in order, covering all,
 * each starting on a digest block boundary; in units of a block, or of a
 * chunk where chunks are larger. */
static void test_lane_range(void)
{
        static const uint32_t chunks[] = { 4096, 256u << 10, WIRE_BLOCK_SIZE, 16u << 20, WIRE_GROUP_SIZE };
        static const uint64_t blocks[] = { 0, 1, 2, 7, 8, 9, 33, 1024 };
        bool tiled = true, balanced = true, nonempty = true, aligned = true;
        uint64_t first, end;

        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
                uint64_t per = chunks[c] < WIRE_BLOCK_SIZE ? WIRE_BLOCK_SIZE / chunks[c] : 1;

                for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
                        for (int tail = -1; tail <= 1; tail++) {
                                /* Just short of, on, or just past a block boundary. */
                                uint64_t nchunks = blocks[i] * per + (uint64_t)((int64_t)tail);
                                uint64_t nblocks;

                                if ((blocks[i] == 0 && tail < 0) || (per == 1 && tail < 0))
                                        continue;
                                nblocks = (nchunks + per - 1) / per;
                                for (unsigned int lanes = 1; lanes <= WIRE_LANES_MAX; lanes++) {
                                        uint64_t next = 0, lo = UINT64_MAX, hi = 0;

                                        for (unsigned int k = 0; k < lanes; k++) {
                                                wire_lane_range(nchunks, chunks[c], lanes, k, &first, &end);
                                                if (first != next || end < first)
                                                        tiled = false;
                                                if (first % per != 0 && first != nchunks)
                                                        aligned = false;
                                                if (end == first && nblocks >= lanes)
                                                        nonempty = false;
                                                /* In whole blocks, the short last one counting one. */
                                                lo = MIN(lo, (end - first + per - 1) / per);
                                                hi = MAX(hi, (end - first + per - 1) / per);
                                                next = end;
                                        }
                                        if (next != nchunks)
                                                tiled = false;
                                        if (hi - lo > 1)
                                                balanced = false;
                                }
                        }
        }
        ok(tiled, "lane runs are contiguous, in lane order, and cover every chunk once");
        ok(aligned, "every lane run starts on a 1 MiB block boundary (or a larger chunk's)");
        ok(balanced, "lane runs differ by at most one unit");
        ok(nonempty, "no lane is empty while there are as many units as lanes");
        wire_lane_range(1024, 1u << 20, 1, 0, &first, &end);
        ok(first == 0 && end == 1024, "one lane carries everything");
        wire_lane_range(1024, 1u << 20, 4, 2, &first, &end);
        ok(first == 512 && end == 768, "lane 2 of 4 carries chunks 512..767");
        wire_lane_range(8, 1u << 20, 4, 3, &first, &end);
        ok(first == 6 && end == 8, "an 8 MiB file on 4 lanes: 2 MiB each, lane 3 the last two");
        wire_lane_range(50, 4096, 2, 0, &first, &end);
        ok(first == 0 && end == 0, "a file under one block: lane 0 of 2 gets nothing");
        wire_lane_range(50, 4096, 2, 1, &first, &end);
        ok(first == 0 && end == 50, "and lane 1 of 2 all of it (so the receiver grants one lane)");
        wire_lane_range(2 * 256 + 5, 4096, 2, 1, &first, &end);
        ok(first == 256 && end == 2 * 256 + 5, "4 KiB chunks, 3 blocks, the last short, on 2 lanes: lane 1 from block 1");
        wire_lane_range(5, 16u << 20, 2, 1, &first, &end);
        ok(first == 2 && end == 5, "16 MiB chunks: a chunk is the unit, lane 1 of 2 from chunk 2");
        is_int(wire_blocks(0), 0, "an empty file has no blocks");
        is_int(wire_blocks(1), 1, "one byte is one short block");
        is_int(wire_blocks(WIRE_BLOCK_SIZE), 1, "1 MiB is one block");
        is_int(wire_blocks(WIRE_BLOCK_SIZE + 1ull), 2, "1 MiB and a byte are two");

        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 0, 11), 10 * 4096 + 100, "all runs: the file size");
        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 8, 11), 2 * 4096 + 100, "the last run ends short");
        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 3, 5), 2 * 4096, "a middle run is whole chunks");
        is_int(wire_run_bytes(0, 4096, 0, 0), 0, "an empty file has no bytes");
        ok(wire_run_bytes(4294967295ull * 16777216ull, 16777216u, 0, 4294967295ull) == 4294967295ull * 16777216ull,
           "2^32 - 1 chunks of 16 MiB do not overflow");
}

/*
 * Sparse files (version 16): data_bytes goes just before the name, is
 * covered by both MACs, and only a regular file offered alone, not along
 * a chain, may say WIRE_OFFER_SPARSE, within its size; data_bytes is zero
 * without it, on encode and decode alike.
 */
static void test_sparse_offer(void)
{
        struct wire_msg m = sample_offer("s.img"), d;
        struct wire_binding bd = sample_binding();
        uint8_t buf[WIRE_CTRL_MAX], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX], nonce[WIRE_NONCE_SIZE] = { 0 };
        static const uint16_t bad[] = { WIRE_OFFER_TREE | WIRE_OFFER_DIR, WIRE_OFFER_TREE | WIRE_OFFER_PACK,
                                        WIRE_OFFER_TREE | WIRE_OFFER_LINK, WIRE_OFFER_ROUTE, WIRE_OFFER_RELAYED };
        int len, la, lb;

        m.offer.flags = WIRE_OFFER_SPARSE;
        m.offer.data_bytes = 0x0405060708ull;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == 16 + 242 + 5 && buf[16 + 20] == 0x00 && buf[16 + 21] == 0x04 && buf[16 + 234] == 0x08 &&
           buf[16 + 238] == 0x04 && buf[16 + 241] == 0 && memcmp(buf + 16 + 242, "s.img", 5) == 0,
           "a sparse OFFER: its flag 0x0400, data_bytes little-endian before the name");
        ok(len > 0 && wire_decode(buf, (size_t)len, &d) == 0 && d.offer.data_bytes == m.offer.data_bytes &&
           d.offer.flags == WIRE_OFFER_SPARSE, "and round-trips");
        m.offer.data_bytes = 0;
        ok(wire_encode(buf, sizeof(buf), &m) > 0, "a sparse file of nothing but holes: data_bytes 0");
        m.offer.data_bytes = m.offer.size;
        ok(wire_encode(buf, sizeof(buf), &m) > 0, "data_bytes up to the size");
        m.offer.data_bytes = m.offer.size + 1;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "data_bytes over the size is refused");
        /* The same bytes, hostile: decoded as malformed. */
        m.offer.data_bytes = 1;
        len = wire_encode(buf, sizeof(buf), &m);
        buf[16 + 234 + 7] = 0xff;
        is_int(wire_decode(buf, (size_t)len, &d), -EBADMSG, "a received one over its size is -EBADMSG");
        m.offer.flags = 0;
        m.offer.data_bytes = 5;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "data_bytes without the flag is refused");
        m.offer.data_bytes = 0;
        len = wire_encode(buf, sizeof(buf), &m);
        buf[16 + 234] = 5;
        is_int(wire_decode(buf, (size_t)len, &d), -EBADMSG, "and -EBADMSG received");
        for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
                struct wire_msg x = sample_offer("s.img");

                x.offer.flags = (uint16_t)(bad[k] | WIRE_OFFER_SPARSE);
                x.offer.size = 10;
                x.offer.data_bytes = 1;
                x.offer.job_files = 3;
                if (bad[k] & WIRE_OFFER_PACK) {
                        x.offer.pack_entries = 1;
                        x.offer.pack_hash[0] = 1;
                }
                if (bad[k] & WIRE_OFFER_RELAYED) {
                        x.offer.file = 0;
                        x.offer.job_files = 1;
                }
                is_int(wire_encode(buf, sizeof(buf), &x), -EINVAL, "sparse with flags 0x%04x is refused", bad[k]);
        }
        m = sample_offer("s.img");
        m.offer.flags = WIRE_OFFER_SPARSE;
        m.offer.data_bytes = 4096;
        la = wire_offer_mac_input(a, sizeof(a), nonce, &bd, &m.offer);
        m.offer.data_bytes = 8192;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &bd, &m.offer);
        ok(differs(a, la, b, lb), "the OFFER's MAC covers data_bytes");
        lb = wire_next_offer_mac_input(b, sizeof(b), &m.offer);
        m.offer.data_bytes = 4096;
        la = wire_next_offer_mac_input(a, sizeof(a), &m.offer);
        ok(differs(a, la, b, lb), "and a later offer's");
}

/*
 * Dry runs (version 17): the offer's flag 0x1000, never with a pack, a
 * route or a relay; GONE's layout, its limits and what its MAC covers.
 */
static void test_dry_run(void)
{
        struct wire_msg m = sample_offer("d/f"), d;
        uint8_t buf[WIRE_CTRL_MAX], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        static const uint16_t bad[] = { WIRE_OFFER_TREE | WIRE_OFFER_PACK, WIRE_OFFER_ROUTE, WIRE_OFFER_RELAYED };
        int len, la, lb;

        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE | WIRE_OFFER_DRY_RUN;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len > 0 && buf[16 + 20] == 0x21 && buf[16 + 21] == 0x18, "a dry run's OFFER: its flag 0x1000");
        ok(len > 0 && wire_decode(buf, (size_t)len, &d) == 0 && d.offer.flags == m.offer.flags, "and round-trips");
        m.offer.flags = WIRE_OFFER_DRY_RUN;
        ok(wire_encode(buf, sizeof(buf), &m) > 0, "a single file's dry run, without sync");
        for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
                struct wire_msg x = sample_offer("d/f");

                x.offer.flags = (uint16_t)(bad[k] | WIRE_OFFER_DRY_RUN);
                x.offer.job_files = 3;
                if (bad[k] & WIRE_OFFER_PACK) {
                        x.offer.pack_entries = 1;
                        x.offer.pack_hash[0] = 1;
                }
                if (bad[k] & WIRE_OFFER_RELAYED) {
                        x.offer.file = 0;
                        x.offer.job_files = 1;
                }
                is_int(wire_encode(buf, sizeof(buf), &x), -EINVAL, "a dry run with flags 0x%04x is refused",
                       bad[k]);
                x.offer.flags = bad[k];
                len = wire_encode(buf, sizeof(buf), &x);
                put16(buf + WIRE_HEADER_SIZE + 20, (uint16_t)(bad[k] | WIRE_OFFER_DRY_RUN));
                is_int(len > 0 ? wire_decode(buf, (size_t)len, &d) : len, -EBADMSG, "and -EBADMSG received");
        }

        m = (struct wire_msg){ .type = WIRE_GONE, .credits = 2 };
        m.gone.file = 0x01020304;
        m.gone.seq = 7;
        m.gone.kind = WIRE_GONE_DIR;
        memset(m.gone.mac, 0x6d, WIRE_MAC_SIZE);
        strcpy(m.gone.name, "d/x");
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == 16 + 44 + 3 && buf[6] == WIRE_GONE && buf[16] == 0x04 && buf[19] == 0x01 && buf[20] == 7 &&
           buf[24] == WIRE_GONE_DIR && buf[26] == 3 && buf[28] == 0x6d && memcmp(buf + 60, "d/x", 3) == 0,
           "GONE: file, seq, kind, name_len, mac, name");
        ok(len > 0 && wire_decode(buf, (size_t)len, &d) == 0 && d.gone.file == m.gone.file && d.gone.seq == 7 &&
           d.gone.kind == WIRE_GONE_DIR && strcmp(d.gone.name, "d/x") == 0 && d.credits == 2, "and round-trips");
        buf[24] = _WIRE_GONE_KIND_MAX;
        is_int(wire_decode(buf, (size_t)len, &d), -EBADMSG, "GONE of an unknown kind");
        buf[24] = WIRE_GONE_FILE;
        is_int(wire_decode(buf, (size_t)len - 1, &d), -EBADMSG, "GONE cut short");
        buf[26] = 0;
        is_int(wire_decode(buf, (size_t)len, &d), -EBADMSG, "GONE whose name length is not its payload's");
        m.gone.kind = _WIRE_GONE_KIND_MAX;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "an unknown kind is not encoded");
        m.gone.kind = WIRE_GONE_LINK;
        m.gone.name[0] = '\0';
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "nor an empty name");
        memset(m.gone.name, 'n', WIRE_NAME_MAX);
        m.gone.name[WIRE_NAME_MAX] = '\0';
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == 16 + 44 + WIRE_NAME_MAX && wire_decode(buf, (size_t)len, &d) == 0, "a name of %d bytes fits",
           WIRE_NAME_MAX);

        strcpy(m.gone.name, "d/x");
        la = wire_gone_mac_input(a, sizeof(a), &m.gone);
        ok(la == 25 + 12 + 3 && memcmp(a, "rdmaxfer-v4 receiver gone", 25) == 0, "GONE's MAC input: label, fields, name");
        m.gone.seq = 8;
        lb = wire_gone_mac_input(b, sizeof(b), &m.gone);
        ok(differs(a, la, b, lb), "the MAC covers the sequence number");
        m.gone.seq = 7;
        m.gone.kind = WIRE_GONE_FILE;
        lb = wire_gone_mac_input(b, sizeof(b), &m.gone);
        ok(differs(a, la, b, lb), "the kind");
        m.gone.kind = WIRE_GONE_LINK;
        strcpy(m.gone.name, "d/y");
        lb = wire_gone_mac_input(b, sizeof(b), &m.gone);
        ok(differs(a, la, b, lb), "and the name");
        m.gone.file = 1;
        strcpy(m.gone.name, "d/x");
        lb = wire_gone_mac_input(b, sizeof(b), &m.gone);
        ok(differs(a, la, b, lb), "and the file it precedes");
        is_int(wire_gone_mac_input(b, 10, &m.gone), -EMSGSIZE, "a short buffer is -EMSGSIZE");
}

/* A dry run's RESULT texts: the verdict, and a replace's letters. */
static void test_verdict(void)
{
        char c[6];

        is_int(wire_verdict_parse("would create", c), WIRE_VERDICT_CREATE, "\"would create\"");
        ok(strcmp(c, ".....") == 0, "with no letters");
        is_int(wire_verdict_parse("would replace .st..", c), WIRE_VERDICT_REPLACE, "\"would replace .st..\"");
        ok(strcmp(c, ".st..") == 0, "with its letters");
        is_int(wire_verdict_parse("would replace c....; deleted 3", c), WIRE_VERDICT_REPLACE,
               "and the last RESULT's \"; deleted N\" after it");
        ok(strcmp(c, "c....") == 0, "its letters");
        is_int(wire_verdict_parse("would replace ...ax", c), WIRE_VERDICT_REPLACE,
               "\"would replace ...ax\" (version 29: the attributes differ)");
        ok(strcmp(c, "...ax") == 0, "its ACLs' and user.* attributes' letters");
        is_int(wire_verdict_parse("skipped", c), WIRE_VERDICT_KEPT, "\"skipped\"");
        is_int(wire_verdict_parse("exists; deleted 1", c), WIRE_VERDICT_EXISTS, "\"exists; deleted 1\"");
        is_int(wire_verdict_parse("would replace", c), -EBADMSG, "a replace without its letters");
        is_int(wire_verdict_parse("would replace .st", c), -EBADMSG, "version 28's three letters");
        is_int(wire_verdict_parse("would replace sct..", c), -EBADMSG, "letters out of place");
        is_int(wire_verdict_parse("would replace ...xa", c), -EBADMSG, "a and x out of place");
        is_int(wire_verdict_parse("would create it", c), -EBADMSG, "words after the verdict");
        is_int(wire_verdict_parse("skipped 1", c), -EBADMSG, "a real session's \"skipped 1\"");
        is_int(wire_verdict_parse("", c), -EBADMSG, "nothing");
}

/* Version 18: a tree entry's path of up to WIRE_PATH_MAX bytes, in NAME
 * parts before an offer that carries WIRE_OFFER_LONG_NAME and no name. */
static void test_long_paths(void)
{
        struct wire_msg o = sample_offer(""), back, part;
        uint8_t buf[WIRE_CTRL_MAX], in1[WIRE_MAC_INPUT_MAX], in2[WIRE_MAC_INPUT_MAX];
        char path[WIRE_PATH_MAX + 2], got[WIRE_PATH_MAX + 1];
        size_t have = 0;
        bool parts_ok = true;
        int len, n1, n2, parts = 0;

        /* "dest/" then components of 200 bytes, to exactly WIRE_PATH_MAX bytes. */
        for (int i = 0; i < WIRE_PATH_MAX; i++)
                path[i] = i < 5 ? "dest/"[i] : (i - 5) % 201 == 200 ? '/' : (char)('a' + i % 26);
        path[WIRE_PATH_MAX] = '\0';
        o.offer.flags = WIRE_OFFER_TREE;
        memcpy(o.offer.name, path, WIRE_PATH_MAX + 1);
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a path over %d bytes without WIRE_OFFER_LONG_NAME is refused",
               WIRE_NAME_MAX);
        o.offer.flags |= WIRE_OFFER_LONG_NAME;
        len = wire_encode(buf, sizeof(buf), &o);
        is_int(len, WIRE_HEADER_SIZE + 242, "with it, the offer carries no name: header + 242 bytes");
        is_int(buf[16 + 22] | buf[16 + 23] << 8, 0, "its name_len is 0");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        ok(back.offer.name[0] == '\0' && (back.offer.flags & WIRE_OFFER_LONG_NAME), "to no name, the flag kept");

        /* The MAC covers the whole path: two that differ in the last byte differ there. */
        n1 = wire_next_offer_mac_input(in1, sizeof(in1), &o.offer);
        o.offer.name[WIRE_PATH_MAX - 1] ^= 1;
        n2 = wire_next_offer_mac_input(in2, sizeof(in2), &o.offer);
        o.offer.name[WIRE_PATH_MAX - 1] ^= 1;
        ok(n1 > WIRE_PATH_MAX && n1 == n2 && memcmp(in1, in2, (size_t)n1) != 0,
           "the next offer's MAC input holds the whole path (%d bytes)", n1);
        n1 = wire_offer_mac_input(in1, sizeof(in1), o.offer.nonce, &(struct wire_binding){ 0 }, &o.offer);
        ok(n1 > WIRE_PATH_MAX && n1 <= WIRE_MAC_INPUT_MAX, "and the first offer's fits WIRE_MAC_INPUT_MAX (%d)", n1);

        /* Where the flag may not go. */
        o.offer.file = 0;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "not on a session's first offer");
        o.offer.file = 2;
        o.offer.flags &= (uint16_t)~WIRE_OFFER_TREE;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "not outside a tree");
        o.offer.flags |= WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        o.offer.pack_entries = 1;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "not on a pack");
        o.offer.flags &= (uint16_t)~WIRE_OFFER_PACK;
        o.offer.pack_entries = 0;
        snprintf(o.offer.name, sizeof(o.offer.name), "dest/short");
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "not with a name that fits the offer");
        /* On the wire: the flag with a name of its own, or a long name's flag on a first offer. */
        o.offer.flags = WIRE_OFFER_TREE;
        len = wire_encode(buf, sizeof(buf), &o);
        buf[16 + 20] = (uint8_t)(WIRE_OFFER_TREE | WIRE_OFFER_LONG_NAME);
        buf[16 + 21] = (uint8_t)((WIRE_OFFER_TREE | WIRE_OFFER_LONG_NAME) >> 8);
        is_int(wire_decode(buf, (size_t)len, &back), -EBADMSG, "an offer with the flag and a name of its own is -EBADMSG");

        /* The path in parts of WIRE_NAME_PART_MAX, each a message that fits. */
        while (have < WIRE_PATH_MAX) {
                msg_reset(&part, WIRE_NAME, 0);
                part.name.total = WIRE_PATH_MAX;
                part.name.offset = (uint16_t)have;
                part.name.len = (uint16_t)(WIRE_PATH_MAX - have < WIRE_NAME_PART_MAX ? WIRE_PATH_MAX - have :
                                                                                          WIRE_NAME_PART_MAX);
                memcpy(part.name.bytes, path + have, part.name.len);
                len = wire_encode(buf, sizeof(buf), &part);
                if (len <= 0 || len > WIRE_CTRL_MAX || wire_decode(buf, (size_t)len, &back) != 0 ||
                    back.name.offset != have || back.name.total != WIRE_PATH_MAX)
                        parts_ok = false;
                else
                        memcpy(got + have, back.name.bytes, back.name.len);
                have += part.name.len;
                parts++;
        }
        got[WIRE_PATH_MAX] = '\0';
        ok(parts_ok && parts == 9 && strcmp(got, path) == 0, "%d bytes in %d NAME parts come back whole",
           WIRE_PATH_MAX, parts);

        /* A part out of range. */
        msg_reset(&part, WIRE_NAME, 0);
        part.name.total = WIRE_NAME_MAX;
        part.name.len = 10;
        memset(part.name.bytes, 'p', 10);
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a path that fits an offer needs no NAME");
        part.name.total = WIRE_PATH_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "nor one over WIRE_PATH_MAX");
        part.name.total = 1000;
        part.name.offset = 995;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a part past the path's end");
        part.name.offset = 0;
        part.name.len = 0;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "an empty part");
        part.name.len = WIRE_NAME_PART_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a part over WIRE_NAME_PART_MAX");
        part.name.len = 10;
        len = wire_encode(buf, sizeof(buf), &part);
        is_int(len, WIRE_HEADER_SIZE + 6 + 10, "a part: header, total, offset, len, its bytes");
        buf[WIRE_HEADER_SIZE + 6 + 4] = '\0';
        is_int(wire_decode(buf, (size_t)len, &back), -EBADMSG, "a NUL among its bytes is -EBADMSG");
        part.name.bytes[4] = '\0';
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "and is not encoded");
}

/* Landing as the user (version 19): the landing whole, its parts, the offer. */
static void test_landing(void)
{
        static struct wire_landing l, back;
        static uint8_t whole[WIRE_LAND_MAX + 1];
        struct wire_msg o = sample_offer("data.bin"), part, got;
        uint8_t buf[WIRE_CTRL_MAX], in1[WIRE_MAC_INPUT_MAX], in2[WIRE_MAC_INPUT_MAX];
        uint8_t assembled[WIRE_LAND_MAX];
        size_t have = 0;
        bool parts_ok = true;
        int len, n, n1, n2, parts = 0;

        memset(&l, 0, sizeof(l));
        l.direction = WIRE_LAND_PUSH;
        l.flags = WIRE_LAND_DIR;
        l.naddrs = 2;
        l.addrs[0][10] = l.addrs[0][11] = 0xff;
        l.addrs[0][15] = 2;
        l.addrs[1][0] = 0xfd;
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                l.token[i] = (uint8_t)(0x70 + i);
        strcpy(l.cred, "MUNGE:AwQFAAB5cEtu7Jw:");
        strcpy(l.path, "/scratch/alice/run 1");
        len = wire_land_encode(whole, sizeof(whole), &l);
        is_int(len, WIRE_LAND_FIXED + 2 * WIRE_ADDR_SIZE + 22 + 20, "a landing: fixed part, addresses, credential, path");
        ok(whole[0] == WIRE_LAND_PUSH && whole[1] == WIRE_LAND_DIR && whole[2] == 2 && whole[3] == 0 &&
           whole[4] == 0x70 && whole[20] == 22 && whole[22] == 20,
           "direction, flags, naddrs, token, then the two lengths, little-endian");
        ok(wire_land_decode(whole, (size_t)len, &back) == 0 && memcmp(&back, &l, sizeof(l)) == 0, "and round-trips");
        n = 0;
        for (int k = 0; k < len; k++)
                n += wire_land_decode(whole, (size_t)k, &back) == -EBADMSG;
        is_int(n, len, "cut short anywhere: -EBADMSG");
        is_int(wire_land_decode(whole, (size_t)len + 1, &back), -EBADMSG, "a byte more: -EBADMSG");
        for (int k = 0; k < len; k++)
                if (wire_land_encode(buf, (size_t)k, &l) != -EMSGSIZE)
                        parts_ok = false;
        ok(parts_ok, "every short buffer: -EMSGSIZE");

        back = l;
        back.direction = 3;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "push or pull, no other direction");
        back = l;
        back.back_port = 7470;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a push has no way back");
        back = l;
        back.back_bwlimit = 1;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "nor a rate for one");
        back = l;
        back.flags = 0x80;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "no unknown flag");
        back = l;
        back.naddrs = 0;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "at least one address");
        back.naddrs = WIRE_LAND_ADDRS_MAX + 1;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "at most WIRE_LAND_ADDRS_MAX");
        back = l;
        back.cred[5] = ' ';
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a credential is printable, no space");
        back.cred[0] = '\0';
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "and not empty");
        back = l;
        strcpy(back.path, "scratch/alice");
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a relative path: -EINVAL");
        memcpy(in1, whole, (size_t)len);
        in1[WIRE_LAND_FIXED + 2 * WIRE_ADDR_SIZE + 3] = 0x7f;
        is_int(wire_land_decode(in1, (size_t)len, &back), -EBADMSG, "a control byte in the credential: -EBADMSG");
        memcpy(in1, whole, (size_t)len);
        in1[len - 1] = '\0';
        is_int(wire_land_decode(in1, (size_t)len, &back), -EBADMSG, "a NUL in the path: -EBADMSG");

        /* A pull (version 21): its way back after the path. */
        memset(&l, 0, sizeof(l));
        l.direction = WIRE_LAND_PULL;
        l.naddrs = 2;
        l.addrs[0][15] = 2;
        l.addrs[1][15] = 1;
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                l.token[i] = (uint8_t)(0x70 + i);
        strcpy(l.cred, "MUNGE:AwQFAAB5cEtu7Jw:");
        strcpy(l.path, "/scratch/alice/a.bin");
        l.back_port = 7470;
        l.back_flags = WIRE_LAND_DIR | WIRE_LAND_REPLACE;
        l.back_bwlimit = 8u << 20;
        l.back_addr[15] = 1;
        strcpy(l.back_cred, "MUNGE:BwQFAAB5cEtu7Jw:");
        strcpy(l.back_path, "/home/alice/in");
        len = wire_land_encode(whole, sizeof(whole), &l);
        is_int(len, WIRE_LAND_FIXED + 2 * WIRE_ADDR_SIZE + 22 + 20 + WIRE_LAND_BACK_FIXED + 22 + 14,
               "a pull: the landing, then the way back's fixed part, credential and path");
        n = WIRE_LAND_FIXED + 2 * WIRE_ADDR_SIZE + 22 + 20;
        ok(whole[0] == WIRE_LAND_PULL && whole[n] == (7470 & 0xff) && whole[n + 1] == (7470 >> 8) &&
           whole[n + 2] == (WIRE_LAND_DIR | WIRE_LAND_REPLACE) && whole[n + 3] == 22 && whole[n + 5] == 14 &&
           whole[n + 7] == 0 && whole[n + 9] == 0x80 && whole[n + 14] == 0 && whole[n + 15 + 15] == 1 &&
           memcmp(whole + n + WIRE_LAND_BACK_FIXED, "MUNGE:BwQ", 9) == 0,
           "back_port, back_flags, the two lengths, back_bwlimit (u64), back_addr, back_cred, back_path");
        ok(wire_land_decode(whole, (size_t)len, &back) == 0 && memcmp(&back, &l, sizeof(l)) == 0,
           "and round-trips");
        n = 0;
        for (int k = 0; k < len; k++)
                n += wire_land_decode(whole, (size_t)k, &back) == -EBADMSG;
        is_int(n, len, "a pull cut short anywhere: -EBADMSG");
        back = l;
        back.back_port = 0;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a pull names the port to send back to");
        back = l;
        back.flags = WIRE_LAND_DIR;
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a pull's flags are its way back's");
        back = l;
        back.back_cred[0] = '\0';
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "a pull carries a credential to land with");
        back = l;
        strcpy(back.back_path, "home/alice");
        is_int(wire_land_encode(buf, sizeof(buf), &back), -EINVAL, "and an absolute path");
        whole[0] = WIRE_LAND_PUSH;
        is_int(wire_land_decode(whole, (size_t)len, &back), -EBADMSG, "a push with a way back: -EBADMSG");

        /* The longest landing, a pull's, in parts of WIRE_LAND_PART_MAX, each a message that fits. */
        memset(l.back_cred, 'b', WIRE_LAND_CRED_MAX);
        l.back_cred[WIRE_LAND_CRED_MAX] = '\0';
        memset(l.back_path, 'q', WIRE_PATH_MAX);
        l.back_path[0] = '/';
        l.back_path[WIRE_PATH_MAX] = '\0';
        l.naddrs = WIRE_LAND_ADDRS_MAX;
        memset(l.cred, 'c', WIRE_LAND_CRED_MAX);
        l.cred[WIRE_LAND_CRED_MAX] = '\0';
        memset(l.path, 'p', WIRE_PATH_MAX);
        l.path[0] = '/';
        l.path[WIRE_PATH_MAX] = '\0';
        len = wire_land_encode(whole, sizeof(whole), &l);
        is_int(len, WIRE_LAND_MAX, "the longest landing is WIRE_LAND_MAX bytes");
        parts_ok = true;
        while (have < (size_t)len) {
                msg_reset(&part, WIRE_LAND, 0);
                part.land.total = (uint16_t)len;
                part.land.offset = (uint16_t)have;
                part.land.len = (uint16_t)MIN((size_t)len - have, (size_t)WIRE_LAND_PART_MAX);
                memcpy(part.land.bytes, whole + have, part.land.len);
                n = wire_encode(buf, sizeof(buf), &part);
                if (n <= 0 || n > WIRE_CTRL_MAX || wire_decode(buf, (size_t)n, &got) != 0 ||
                    got.land.offset != have || got.land.total != len)
                        parts_ok = false;
                else
                        memcpy(assembled + have, got.land.bytes, got.land.len);
                have += part.land.len;
                parts++;
        }
        ok(parts_ok && memcmp(assembled, whole, (size_t)len) == 0 && wire_land_decode(assembled, have, &back) == 0,
           "it comes back whole from %d LAND parts", parts);
        msg_reset(&part, WIRE_LAND, 0);
        part.land.total = WIRE_LAND_FIXED - 1;
        part.land.len = 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a part of a whole too short to be a landing");
        part.land.total = WIRE_LAND_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "or too long");
        part.land.total = 100;
        part.land.offset = 95;
        part.land.len = 10;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a part past the whole's end");

        /* The offer: the session's first, of a regular file, nothing resumable. */
        o.offer.file = 0;
        o.offer.job_files = 1;
        memset(o.offer.source, 0, sizeof(o.offer.source));
        o.offer.flags = WIRE_OFFER_LAND;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_LAND),
           "an offer that lands as the user round-trips");
        memset(got.offer.land_hash, 0, sizeof(got.offer.land_hash));
        ok(got.offer.land_hash[0] == 0, "its land hash is not on the wire (the receiver sets it)");
        wire_land_hash(whole, (size_t)len, o.offer.land_hash);
        n1 = wire_offer_mac_input(in1, sizeof(in1), o.offer.nonce, &(struct wire_binding){ 0 }, &o.offer);
        o.offer.land_hash[31] ^= 1;
        n2 = wire_offer_mac_input(in2, sizeof(in2), o.offer.nonce, &(struct wire_binding){ 0 }, &o.offer);
        ok(n1 > 0 && n1 == n2 && memcmp(in1, in2, (size_t)n1) != 0, "the offer's MAC covers the landing's hash");
        o.offer.flags = 0;
        n2 = wire_offer_mac_input(in2, sizeof(in2), o.offer.nonce, &(struct wire_binding){ 0 }, &o.offer);
        is_int(n2, n1 - WIRE_LAND_HASH_SIZE, "and without the flag it is not in it");
        o.offer.flags = WIRE_OFFER_LAND;
        o.offer.source[0] = 1;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && got.offer.source[0] == 1,
           "a landing's regular file names its source: it may resume (version 23)");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_ROUTE;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "down a chain it names none");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        o.offer.job_files = 3;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "nor a tree's DEST");
        o.offer.job_files = 1;
        o.offer.flags = WIRE_OFFER_LAND;
        o.offer.source[0] = 0;
        o.offer.file = 1;
        o.offer.job_files = 2;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "only on the session's first offer");
        o.offer.file = 0;
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR;
        o.offer.job_files = 3;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_TREE),
           "a tree's DEST that lands as the user round-trips (version 20)");
        o.offer.job_files = 1;
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_DIR;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a directory outside a tree: not a landing's");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a pack as the first offer: not a landing's");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_DIGEST),
           "files that land as the user, synced by their digest, round-trip (version 25)");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_SYNC | WIRE_OFFER_ROUTE;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a landing synced: not down a chain");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC;
        o.offer.job_files = 3;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_SYNC) &&
           (got.offer.flags & WIRE_OFFER_TREE), "a landing's tree, synced, round-trips (version 26)");
        o.offer.flags |= WIRE_OFFER_DELETE;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_DELETE),
           "a landing's tree, synced and deleting, round-trips (version 26)");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_ROUTE;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a landing's tree synced: not down a chain");
        o.offer.job_files = 1;
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_ROUTE;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_ROUTE),
           "a regular file that lands as the user down a chain round-trips (version 21)");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_RELAYED;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_RELAYED),
           "and as a relay offers it on, with no source token");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_ROUTE;
        o.offer.job_files = 3;
        is_int(wire_encode(buf, sizeof(buf), &o), -EINVAL, "a landing's tree: not in a chain");
        o.offer.job_files = 1;
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_DRY_RUN;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && (got.offer.flags & WIRE_OFFER_DRY_RUN),
           "a dry run of a landing round-trips (version 28)");
        o.offer.flags = WIRE_OFFER_LAND | WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE |
                        WIRE_OFFER_DRY_RUN;
        o.offer.job_files = 3;
        /* Version 29: the receiver says what deleting would remove, as the user. */
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0 && got.offer.flags == o.offer.flags,
           "a landing's dry run that deletes: round-trips (version 29)");
        o.offer.flags &= (uint16_t)~WIRE_OFFER_DELETE;
        n = wire_encode(buf, sizeof(buf), &o);
        ok(n > 0 && wire_decode(buf, (size_t)n, &got) == 0, "one that syncs a tree: round-trips");
        o.offer.job_files = 1;
}

/* An index pack's NEED (version 24): a bit per record, the count of them, under a MAC. */
/* Attributes (version 27): an entry's in XATTR parts, the offer's MAC
 * covering them; the first entry's in the landing. */
static void test_attributes(void)
{
        static struct wire_landing l, back;
        static uint8_t whole[WIRE_LAND_MAX + 1];
        struct wire_msg o = sample_offer("dest/a"), part, got;
        uint8_t buf[WIRE_CTRL_MAX], in1[WIRE_MAC_INPUT_MAX], in2[WIRE_MAC_INPUT_MAX];
        uint8_t rec[WIRE_XATTRS_MAX];
        size_t rlen = 0;
        int len, n1, n2;

        /* A part: its bytes any (NUL too), within WIRE_XATTRS_MAX. */
        part = (struct wire_msg){ .type = WIRE_XATTR };
        part.xattr.total = WIRE_XATTRS_MAX;
        part.xattr.offset = WIRE_XATTRS_MAX - 15;
        part.xattr.len = 15;
        len = wire_encode(buf, sizeof(buf), &part);
        is_int(len, WIRE_HEADER_SIZE + 6 + 15, "an XATTR part: total, offset, len, then its bytes");
        ok(wire_decode(buf, (size_t)len, &got) == 0 && got.xattr.total == WIRE_XATTRS_MAX &&
           got.xattr.offset == WIRE_XATTRS_MAX - 15 && got.xattr.len == 15, "and round-trips, NULs and all");
        part.xattr.total = WIRE_XATTRS_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a whole past WIRE_XATTRS_MAX does not encode");
        buf[WIRE_HEADER_SIZE] = (uint8_t)((WIRE_XATTRS_MAX + 1) & 0xff);
        buf[WIRE_HEADER_SIZE + 1] = (uint8_t)((WIRE_XATTRS_MAX + 1) >> 8);
        is_int(wire_decode(buf, (size_t)len, &got), -EBADMSG, "nor decodes");
        part.xattr.total = 10;
        part.xattr.offset = 0;
        part.xattr.len = 11;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a part past its whole does not encode");

        /* The offer's MAC input ends with their length and hash. */
        o.offer.flags |= WIRE_OFFER_TREE;
        o.offer.file = 3;
        o.offer.job_files = 5;
        memset(o.offer.source, 0, sizeof(o.offer.source));      /* a tree's entry names none */
        n1 = wire_next_offer_mac_input(in1, sizeof(in1), &o.offer);
        o.offer.xattrs_len = 40;
        memset(o.offer.xattrs_hash, 0xab, sizeof(o.offer.xattrs_hash));
        n2 = wire_next_offer_mac_input(in2, sizeof(in2), &o.offer);
        ok(n1 > 0 && n2 == n1 + 2 + WIRE_XATTRS_HASH_SIZE && memcmp(in1, in2, (size_t)n1) == 0 &&
           in2[n1] == 40 && in2[n1 + 1] == 0 && in2[n1 + 2] == 0xab,
           "an offer with attributes: its MAC input ends with their length and hash");
        o.offer.xattrs_hash[5] ^= 1;
        ok(wire_next_offer_mac_input(in1, sizeof(in1), &o.offer) == n2 && memcmp(in1, in2, (size_t)n2) != 0,
           "so other attributes make another MAC");
        len = wire_encode(buf, sizeof(buf), &o);
        ok(wire_decode(buf, (size_t)len, &got) == 0 && got.offer.xattrs_len == 0,
           "and are not on the wire: the receiver sets them from the parts");

        /* The first entry's, in the landing. */
        ok(xattrs_put(rec, sizeof(rec), &rlen, "user.origin", "https://x", 9) == 0 &&
           xattrs_put(rec, sizeof(rec), &rlen, XATTRS_ACL_ACCESS, "\x02\0\0\0", 4) == 0, "two records");
        memset(&l, 0, sizeof(l));
        l.direction = WIRE_LAND_PUSH;
        l.flags = WIRE_LAND_XATTRS | WIRE_LAND_ACLS;
        l.naddrs = 1;
        l.addrs[0][15] = 2;
        l.token[0] = 1;
        strcpy(l.cred, "MUNGE:AwQ:");
        strcpy(l.path, "/scratch/alice/t");
        memcpy(l.xattrs, rec, rlen);
        l.xattrs_len = (uint16_t)rlen;
        len = wire_land_encode(whole, sizeof(whole), &l);
        is_int(len, (int)(WIRE_LAND_FIXED + WIRE_ADDR_SIZE + 10 + 16 + 2 + rlen),
               "a landing with attributes: its length and records after the path");
        ok(wire_land_decode(whole, (size_t)len, &back) == 0 && back.xattrs_len == rlen &&
           memcmp(back.xattrs, rec, rlen) == 0, "and round-trips");
        is_int(wire_land_decode(whole, (size_t)len - 1, &back), -EBADMSG, "cut short: -EBADMSG");
        l.flags = WIRE_LAND_XATTRS;
        is_int(wire_land_encode(whole, sizeof(whole), &l), -EINVAL, "an ACL needs WIRE_LAND_ACLS");
        l.flags = WIRE_LAND_ACLS;
        is_int(wire_land_encode(whole, sizeof(whole), &l), -EINVAL, "a user.* attribute needs WIRE_LAND_XATTRS");
        l.flags = 0;
        is_int(wire_land_encode(whole, sizeof(whole), &l), -EINVAL, "none without either");
        l.flags = WIRE_LAND_XATTRS | WIRE_LAND_ACLS;
        l.xattrs[0] = 0;
        is_int(wire_land_encode(whole, sizeof(whole), &l), -EINVAL, "a malformed record: -EINVAL");
        l.xattrs_len = 0;
        len = wire_land_encode(whole, sizeof(whole), &l);
        ok(len > 0 && wire_land_decode(whole, (size_t)len, &back) == 0 && back.xattrs_len == 0 &&
           back.flags == (WIRE_LAND_XATTRS | WIRE_LAND_ACLS), "a first entry without any: a zero length");
        ok(wire_land_xattrs_ok(WIRE_LAND_XATTRS | WIRE_LAND_ACLS, rec, rlen) &&
           !wire_land_xattrs_ok(WIRE_LAND_XATTRS, rec, rlen) && wire_land_xattrs_ok(0, NULL, 0),
           "wire_land_xattrs_ok: the namespaces the flags allow");
        l.direction = WIRE_LAND_PULL;
        l.flags = WIRE_LAND_XATTRS;
        is_int(wire_land_encode(whole, sizeof(whole), &l), -EINVAL, "a pull carries none");
}

static void test_need(void)
{
        static const uint8_t doc[] = {
                0x52, 0x44, 0x52, 0x58, 0x1e, 0x00, 0x0d, 0x00,  /* magic, v30, NEED */
                0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  /* len 42, credits 0 */
                0x28, 0x00, 0x00, 0x00, 0x0b, 0x00, 0x03, 0x00,  /* file 40, entries 11, needed 3 */
        };
        struct wire_msg m = { .type = WIRE_NEED }, back;
        uint8_t buf[WIRE_CTRL_MAX], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        int len, la, lb;

        m.need.file = 40;
        m.need.entries = 11;
        m.need.needed = 3;
        m.need.bits[0] = 0x81;
        m.need.bits[1] = 0x04;
        memset(m.need.mac, 0x4e, WIRE_MAC_SIZE);
        len = wire_encode(buf, sizeof(buf), &m);
        is_int(len, 16 + 8 + WIRE_MAC_SIZE + 2, "NEED of 11 records: header, file, entries, needed, mac, 2 bytes of bits");
        ok(len > 0 && memcmp(buf, doc, sizeof(doc)) == 0, "NEED matches the documented bytes");
        ok(len > 0 && buf[24 + WIRE_MAC_SIZE] == 0x81 && buf[25 + WIRE_MAC_SIZE] == 0x04,
           "record k is bit k %% 8 of byte k / 8, after the mac");
        ok(len > 0 && wire_decode(buf, (size_t)len, &back) == 0 && back.need.file == 40 && back.need.entries == 11 &&
           back.need.needed == 3 && back.need.bits[0] == 0x81 && back.need.bits[1] == 0x04,
           "and decodes to the same");
        m.need.needed = 2;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "a count that is not the bits set is not encoded");
        m.need.needed = 3;
        len = wire_encode(buf, sizeof(buf), &m);
        buf[22] = 4;
        is_int(wire_decode(buf, (size_t)len, &back), -EBADMSG, "nor decoded");
        buf[22] = 3;
        buf[25 + WIRE_MAC_SIZE] |= 0x08;
        buf[22] = 4;
        is_int(wire_decode(buf, (size_t)len, &back), -EBADMSG, "a bit past the records is malformed");
        m.need.entries = 0;
        m.need.needed = 0;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "a NEED of no records is not encoded");
        m.need.entries = WIRE_NEED_ENTRIES_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &m), -EINVAL, "nor one of more than WIRE_NEED_ENTRIES_MAX");
        m.need.entries = WIRE_NEED_ENTRIES_MAX;
        memset(m.need.bits, 0xff, sizeof(m.need.bits));
        m.need.needed = WIRE_NEED_ENTRIES_MAX;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len > 0 && len <= WIRE_CTRL_MAX && wire_decode(buf, (size_t)len, &back) == 0 &&
           back.need.needed == WIRE_NEED_ENTRIES_MAX, "the largest NEED fits a control buffer");
        m.need.entries = 11;
        m.need.needed = 3;
        memset(m.need.bits, 0, sizeof(m.need.bits));
        m.need.bits[0] = 0x81;
        m.need.bits[1] = 0x04;
        la = wire_need_mac_input(a, sizeof(a), &m.need);
        m.need.bits[0] = 0x83;
        m.need.bits[1] = 0x00;
        lb = wire_need_mac_input(b, sizeof(b), &m.need);
        ok(la > 0 && lb == la && memcmp(a, b, (size_t)la) != 0, "the MAC input covers which files are needed");
        ok(la > 0 && memcmp(a, "rdmaxfer-v4 receiver need", 25) == 0, "under its own label");
}

/* A deleting tree's rules (version 30): RULES parts, their length and
 * hash under DEST's offer's MAC, never on the wire. */
static void test_rules(void)
{
        struct wire_msg o = sample_offer("dest"), part, got;
        uint8_t buf[WIRE_CTRL_MAX], in1[WIRE_MAC_INPUT_MAX], in2[WIRE_MAC_INPUT_MAX];
        int len, n1, n2;

        part = (struct wire_msg){ .type = WIRE_RULES };
        part.rules.total = WIRE_RULES_MAX;
        part.rules.offset = WIRE_RULES_MAX - 6;
        part.rules.len = 6;
        memcpy(part.rules.bytes, "- x.o\n", 6);
        len = wire_encode(buf, sizeof(buf), &part);
        is_int(len, WIRE_HEADER_SIZE + 6 + 6, "a RULES part: total, offset, len, then its bytes");
        ok(wire_decode(buf, (size_t)len, &got) == 0 && got.type == WIRE_RULES && got.rules.total == WIRE_RULES_MAX &&
           got.rules.len == 6 && memcmp(got.rules.bytes, "- x.o\n", 6) == 0, "and round-trips");
        part.rules.total = WIRE_RULES_MAX + 1;
        is_int(wire_encode(buf, sizeof(buf), &part), -EINVAL, "a whole past WIRE_RULES_MAX does not encode");
        buf[WIRE_HEADER_SIZE] = (uint8_t)((WIRE_RULES_MAX + 1) & 0xff);
        buf[WIRE_HEADER_SIZE + 1] = (uint8_t)((WIRE_RULES_MAX + 1) >> 8);
        is_int(wire_decode(buf, (size_t)len, &got), -EBADMSG, "nor decodes");

        o.offer.flags |= WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE;
        n1 = wire_next_offer_mac_input(in1, sizeof(in1), &o.offer);
        o.offer.rules_len = 300;
        memset(o.offer.rules_hash, 0xcd, sizeof(o.offer.rules_hash));
        n2 = wire_next_offer_mac_input(in2, sizeof(in2), &o.offer);
        ok(n1 > 0 && n2 == n1 + 2 + WIRE_RULES_HASH_SIZE && memcmp(in1, in2, (size_t)n1) == 0 &&
           in2[n1] == (300 & 0xff) && in2[n1 + 1] == (300 >> 8) && in2[n1 + 2] == 0xcd,
           "DEST's offer with rules: its MAC input ends with their length and hash");
        o.offer.rules_hash[0] ^= 1;
        ok(wire_next_offer_mac_input(in1, sizeof(in1), &o.offer) == n2 && memcmp(in1, in2, (size_t)n2) != 0,
           "so other rules make another MAC");
        len = wire_encode(buf, sizeof(buf), &o);
        ok(wire_decode(buf, (size_t)len, &got) == 0 && got.offer.rules_len == 0,
           "and are not on the wire: the receiver sets them from the parts");
}

int main(void)
{
        test_status_str();
        test_status_transient();
        test_status_properties();
        test_hop_refused();
        test_private_data();
        test_round_trips();
        test_golden();
        test_encode_errors();
        test_decode_hostile();
        test_mac_input();
        test_mac_inputs_after_offer();
        test_binding();
        test_hop();
        test_route_hash();
        test_progress();
        test_lane_range();
        test_sparse_offer();
        test_dry_run();
        test_verdict();
        test_long_paths();
        test_landing();
        test_need();
        test_attributes();
        test_rules();
        return done_testing();
}
