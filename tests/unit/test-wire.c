/* The peer protocol codec: round-trips, the exact byte layout, and every hostile-input class. */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "wire.h"

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
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                m.offer.token[i] = (uint8_t)(0x30 + i);
        for (int i = 0; i < WIRE_MAC_SIZE; i++)
                m.offer.mac[i] = (uint8_t)(0xa0 + i);
        snprintf(m.offer.name, sizeof(m.offer.name), "%s", name);
        return m;
}

/* One valid message of every type, for the generic hostile-input loops. */
static int sample_messages(struct wire_msg *out)
{
        int n = 0;

        out[n++] = sample_offer("report-2024.dat");
        msg_reset(&out[n], WIRE_ACCEPT, 15);
        out[n++].accept.lanes = 3;
        msg_reset(&out[n], WIRE_REFUSE, 3);
        out[n].refuse.status = WIRE_E_EXISTS;
        snprintf(out[n++].refuse.text, sizeof(out[0].refuse.text), "file exists: report-2024.dat");
        msg_reset(&out[n++], WIRE_CREDIT, 64);
        msg_reset(&out[n], WIRE_END, 0);
        out[n].end.bytes = 123456789;
        memset(out[n++].end.digest, 0x5a, WIRE_DIGEST_SIZE);
        msg_reset(&out[n], WIRE_RESULT, 1);
        out[n].result.status = WIRE_OK;
        out[n].result.bytes = 123456789;
        out[n].result.usec = 2500000;
        snprintf(out[n++].result.text, sizeof(out[0].result.text), "published");
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

static void test_private_data(void)
{
        uint8_t buf[64];
        struct wire_hello h = { .flags = 0 }, h2;
        struct wire_welcome w = { .flags = WIRE_WELCOME_AUTH, .credits = 32, .slot_size = 1 << 20 }, w2;
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
        put16(buf + 4, 3);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EPROTONOSUPPORT, "hello v3 is -EPROTONOSUPPORT");
        is_int(h2.version, 3, "and still reports the peer's version");
        put16(buf + 4, 1);
        is_int(wire_decode_hello(buf, 8, &h2), -EPROTONOSUPPORT, "an 8-byte version-1 hello is -EPROTONOSUPPORT");
        is_int(h2.version, 1, "and reports version 1");
        put16(buf + 4, WIRE_VERSION);

        h = (struct wire_hello){ .flags = WIRE_HELLO_LANE, .lane = 3 };
        for (int i = 0; i < WIRE_TOKEN_SIZE; i++)
                h.token[i] = (uint8_t)(0x80 + i);
        memset(buf, 0xee, sizeof(buf));
        wire_encode_hello(buf, &h);
        ok(buf[WIRE_HELLO_SIZE] == 0xee, "hello writes exactly %d bytes", WIRE_HELLO_SIZE);
        ok(buf[6] == 1 && buf[8] == 3 && buf[12] == 0x80 && buf[27] == 0x8f,
           "lane hello: flags, lane, reserved, token in that order");
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), 0, "lane hello round-trips");
        ok(h2.flags == WIRE_HELLO_LANE && h2.lane == 3 && memcmp(h2.token, h.token, WIRE_TOKEN_SIZE) == 0,
           "lane hello fields and token");
        put16(buf + 8, 0);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "lane hello for lane 0 is -EBADMSG");
        put16(buf + 8, WIRE_LANES_MAX);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "lane hello past WIRE_LANES_MAX is -EBADMSG");
        put16(buf + 6, 0);
        put16(buf + 8, 1);
        is_int(wire_decode_hello(buf, WIRE_HELLO_SIZE, &h2), -EBADMSG, "a lane number without the lane flag is -EBADMSG");

        for (int i = 0; i < WIRE_NONCE_SIZE; i++)
                w.nonce[i] = (uint8_t)(i * 7 + 1);
        memset(buf, 0xee, sizeof(buf));
        wire_encode_welcome(buf, &w);
        ok(buf[WIRE_WELCOME_SIZE] == 0xee, "welcome writes exactly %d bytes", WIRE_WELCOME_SIZE);
        is_int(wire_decode_welcome(buf, WIRE_WELCOME_SIZE, &w2), 0, "welcome round-trips");
        ok(w2.flags == WIRE_WELCOME_AUTH && w2.credits == 32 && w2.slot_size == (1u << 20) &&
           memcmp(w2.nonce, w.nonce, WIRE_NONCE_SIZE) == 0, "welcome fields and nonce");
        ok(buf[8] == 32 && buf[9] == 0 && buf[12] == 0 && buf[14] == 0x10, "welcome credits/slot_size little-endian");
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
        struct wire_msg msgs[8], back;
        uint8_t buf[WIRE_CTRL_MAX];
        int n = sample_messages(msgs);

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
        is_int(len, WIRE_HEADER_SIZE + 74 + WIRE_NAME_MAX, "255-byte name: header + 74 + 255 bytes");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "255-byte name decodes");
        is_int(strlen(back.offer.name), WIRE_NAME_MAX, "and comes back whole");

        struct wire_msg r;

        msg_reset(&r, WIRE_REFUSE, 0);
        memset(r.refuse.text, 'x', WIRE_TEXT_MAX);
        len = wire_encode(buf, sizeof(buf), &r);
        is_int(len, WIRE_HEADER_SIZE + 4 + WIRE_TEXT_MAX, "200-byte refuse text encodes");
        is_int(wire_decode(buf, (size_t)len, &back), 0, "and decodes");
        ok(back.refuse.text[WIRE_TEXT_MAX] == '\0', "decoded text is NUL-terminated");
}

/* Pin the byte layout: a change here breaks interop with deployed daemons. */
static void test_golden(void)
{
        static const uint8_t end[] = {
                0x52, 0x44, 0x52, 0x58, 0x02, 0x00, 0x05, 0x00,  /* magic, v2, END */
                0x18, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,  /* len 24, credits 7 */
                0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  /* bytes */
                0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,  /* digest */
        };
        static const uint8_t refuse[] = {
                0x52, 0x44, 0x52, 0x58, 0x02, 0x00, 0x03, 0x00,
                0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
                0x07, 0x00, 0x03, 0x00, 'a', '.', 'b',          /* EXISTS, 3, "a.b" */
        };
        struct wire_msg m = { .type = WIRE_END, .credits = 7 };
        uint8_t buf[WIRE_CTRL_MAX];
        int len;

        m.end.bytes = 0x0102030405060708ull;
        for (int i = 0; i < WIRE_DIGEST_SIZE; i++)
                m.end.digest[i] = (uint8_t)i;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(end) && memcmp(buf, end, sizeof(end)) == 0, "END matches the documented bytes");

        m = (struct wire_msg){ .type = WIRE_REFUSE, .credits = 2 };
        m.refuse.status = WIRE_E_EXISTS;
        strcpy(m.refuse.text, "a.b");
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == sizeof(refuse) && memcmp(buf, refuse, sizeof(refuse)) == 0, "REFUSE matches the documented bytes");

        struct wire_msg o = sample_offer("x");
        len = wire_encode(buf, sizeof(buf), &o);
        ok(len == 16 + 74 + 1 && buf[6] == WIRE_OFFER && buf[8] == 75 && buf[16] == 0x08 && buf[23] == 0x01 &&
           buf[16 + 13] == 0x01 && buf[16 + 18] == 0x10 && buf[16 + 20] == 0 && buf[16 + 22] == 1 &&
           buf[16 + 24] == 4 && buf[16 + 25] == 0 && buf[16 + 26] == 0x30 && buf[16 + 41] == 0x3f &&
           buf[16 + 42] == 0xa0 && buf[16 + 73] == 0xa0 + 31 && buf[16 + 74] == 'x',
           "OFFER: id, size, chunk, flags, name_len, lanes, token, mac, name in that order");

        m = (struct wire_msg){ .type = WIRE_ACCEPT, .credits = 16 };
        m.accept.lanes = 4;
        len = wire_encode(buf, sizeof(buf), &m);
        ok(len == 18 && buf[6] == WIRE_ACCEPT && buf[8] == 2 && buf[12] == 16 && buf[16] == 4 && buf[17] == 0,
           "ACCEPT: header, then lanes");
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
        bad = (struct wire_msg){ .type = WIRE_ACCEPT };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "an ACCEPT of 0 lanes refused");
        bad = (struct wire_msg){ .type = WIRE_RESULT };
        memset(bad.result.text, 't', sizeof(bad.result.text));
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "unterminated result text refused");
        bad = (struct wire_msg){ .type = 0 };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "type 0 refused");
        bad = (struct wire_msg){ .type = _WIRE_TYPE_MAX };
        is_int(wire_encode(buf, sizeof(buf), &bad), -EINVAL, "unknown type refused");
}

static void test_decode_hostile(void)
{
        struct wire_msg msgs[8], m;
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
                is_int(wire_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT, "type %d from version 2", t);
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
        const int nl = WIRE_HEADER_SIZE + 22, name = WIRE_HEADER_SIZE + 74;

        memcpy(tmp, buf, (size_t)len);
        tmp[name + 1] = '\0';
        is_int(wire_decode(tmp, (size_t)len, &m), -EBADMSG, "OFFER name with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + nl, 0);
        put32(tmp + 8, 74);
        is_int(wire_decode(tmp, WIRE_HEADER_SIZE + 74, &m), -EBADMSG, "OFFER with empty name");
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

        /* ACCEPT grants 1 .. WIRE_LANES_MAX lanes. */
        struct wire_msg acc = msgs[1];
        len = wire_encode(buf, sizeof(buf), &acc);
        put16(buf + WIRE_HEADER_SIZE, 0);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT of 0 lanes");
        put16(buf + WIRE_HEADER_SIZE, WIRE_LANES_MAX + 1);
        is_int(wire_decode(buf, (size_t)len, &m), -EBADMSG, "ACCEPT of more than WIRE_LANES_MAX lanes");
        len = wire_encode(buf, sizeof(buf), &o);

        /* A 256-byte name, length fields consistent: still too long. */
        memcpy(tmp, buf, (size_t)name);
        memset(tmp + name, 'n', 256);
        put16(tmp + nl, 256);
        put32(tmp + 8, 74 + 256);
        is_int(wire_decode(tmp, (size_t)name + 256, &m), -EBADMSG, "OFFER with a 256-byte name");
        put16(tmp + nl, 255);
        put32(tmp + 8, 74 + 255);
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

        /* Strings come back NUL-terminated whatever the struct held before. */
        len = wire_encode(buf, sizeof(buf), &o);
        memset(&m, 0xaa, sizeof(m));
        is_int(wire_decode(buf, (size_t)len, &m), 0, "decode into a dirty struct");
        ok(m.offer.name[3] == '\0' && !strcmp(m.offer.name, "abc"), "name copied and NUL-terminated");
        is_int(wire_decode(NULL, 0, &m), -EBADMSG, "NULL buffer");
}

static void test_mac_input(void)
{
        struct wire_msg m = sample_offer("f.txt");
        struct wire_offer o = m.offer, o2;
        uint8_t nonce[WIRE_NONCE_SIZE], a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        int la, lb;

        for (int i = 0; i < WIRE_NONCE_SIZE; i++)
                nonce[i] = (uint8_t)(0x30 + i);
        la = wire_offer_mac_input(a, sizeof(a), nonce, &o);
        is_int(la, 17 + 32 + 42 + 5, "MAC input is label + nonce + 42 bytes of fields + name");
        ok(memcmp(a, "rdmaxfer-offer-v2", 17) == 0, "starts with the label");
        ok(memcmp(a + 17, nonce, 32) == 0, "then the nonce");
        ok(a[49] == 0x08 && a[56] == 0x01 && a[62] == 0x01 && a[67] == 0x10 && a[71] == 5 &&
           a[73] == 4 && a[75] == 0x30 && a[90] == 0x3f && memcmp(a + 91, "f.txt", 5) == 0,
           "then the offer fields little-endian, as on the wire");

        o2 = o;
        memset(o2.mac, 0, sizeof(o2.mac));
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &o2);
        ok(la == lb && memcmp(a, b, (size_t)la) == 0, "the MAC field is not part of its own input");

        o2 = o;
        o2.size++;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &o2);
        ok(la == lb && memcmp(a, b, (size_t)la) != 0, "the size is covered");
        o2 = o;
        o2.flags = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &o2);
        ok(memcmp(a, b, (size_t)la) != 0, "the flags are covered");
        o2 = o;
        o2.lanes = 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &o2);
        ok(memcmp(a, b, (size_t)la) != 0, "the lanes are covered");
        o2 = o;
        o2.token[15] ^= 1;
        lb = wire_offer_mac_input(b, sizeof(b), nonce, &o2);
        ok(memcmp(a, b, (size_t)la) != 0, "the lane token is covered");

        is_int(wire_offer_mac_input(a, (size_t)la - 1, nonce, &o), -EMSGSIZE, "one byte short is -EMSGSIZE");
        o2 = o;
        o2.name[0] = '\0';
        is_int(wire_offer_mac_input(a, sizeof(a), nonce, &o2), -EINVAL, "empty name is -EINVAL");
        memset(o2.name, 'z', sizeof(o2.name));
        is_int(wire_offer_mac_input(a, sizeof(a), nonce, &o2), -EINVAL, "unterminated name is -EINVAL");
        memset(o2.name, 'z', WIRE_NAME_MAX);
        o2.name[WIRE_NAME_MAX] = '\0';
        is_int(wire_offer_mac_input(a, sizeof(a), nonce, &o2), WIRE_MAC_INPUT_MAX, "longest input is WIRE_MAC_INPUT_MAX");
}

/* The runs of chunks the lanes carry: contiguous, in order, covering all. */
static void test_lane_range(void)
{
        static const uint64_t sizes[] = { 1, 7, 8, 9, 31, 32, 33, 1024, 1025, 4294967295ull };
        bool tiled = true, balanced = true, nonempty = true;
        uint64_t first, end;

        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                for (unsigned int lanes = 1; lanes <= WIRE_LANES_MAX; lanes++) {
                        uint64_t next = 0, lo = UINT64_MAX, hi = 0;

                        for (unsigned int k = 0; k < lanes; k++) {
                                wire_lane_range(sizes[i], lanes, k, &first, &end);
                                if (first != next || end < first)
                                        tiled = false;
                                if (end == first && sizes[i] >= lanes)
                                        nonempty = false;
                                lo = end - first < lo ? end - first : lo;
                                hi = end - first > hi ? end - first : hi;
                                next = end;
                        }
                        if (next != sizes[i])
                                tiled = false;
                        if (hi - lo > 1)
                                balanced = false;
                }
        ok(tiled, "lane runs are contiguous, in lane order, and cover every chunk once");
        ok(balanced, "lane runs differ by at most one chunk");
        ok(nonempty, "no lane is empty while there are as many chunks as lanes");
        wire_lane_range(1024, 1, 0, &first, &end);
        ok(first == 0 && end == 1024, "one lane carries everything");
        wire_lane_range(1024, 4, 2, &first, &end);
        ok(first == 512 && end == 768, "lane 2 of 4 carries chunks 512..767");

        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 0, 11), 10 * 4096 + 100, "all runs: the file size");
        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 8, 11), 2 * 4096 + 100, "the last run ends short");
        is_int(wire_run_bytes(10 * 4096 + 100, 4096, 3, 5), 2 * 4096, "a middle run is whole chunks");
        is_int(wire_run_bytes(0, 4096, 0, 0), 0, "an empty file has no bytes");
        ok(wire_run_bytes(4294967295ull * 16777216ull, 16777216u, 0, 4294967295ull) == 4294967295ull * 16777216ull,
           "2^32 - 1 chunks of 16 MiB do not overflow");
}

int main(void)
{
        test_status_str();
        test_private_data();
        test_round_trips();
        test_golden();
        test_encode_errors();
        test_decode_hostile();
        test_mac_input();
        test_lane_range();
        return done_testing();
}
