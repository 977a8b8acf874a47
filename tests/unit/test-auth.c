/* Pre-shared key: key file rules, HMAC and HKDF known answers, the layouts' known answers, and
 * that every bound field (address, role, nonce, lane, digest ...) changes its MAC. */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "nodeset.h"
#include "tap.h"
#include "wire.h"

static char dir[] = "/tmp/test-auth-XXXXXX";

static const char *key_file(const char *name, const char *text, mode_t mode)
{
        static char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                abort();
        fchmod(fd, mode);
        close(fd);
        return path;
}

static void hex2bin(const char *hex, uint8_t *out, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned int b;

                sscanf(hex + 2 * i, "%2x", &b);
                out[i] = (uint8_t)b;
        }
}

/* RFC 4231 vectors through the same streaming calls auth.c uses. */
static void test_rfc4231(void)
{
        uint8_t want[32], got[32], key1[20];
        crypto_auth_hmacsha256_state st;

        hex2bin("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", want, 32);
        crypto_auth_hmacsha256_init(&st, (const uint8_t *)"Jefe", 4);
        crypto_auth_hmacsha256_update(&st, (const uint8_t *)"what do ya want for nothing?", 28);
        crypto_auth_hmacsha256_final(&st, got);
        ok(memcmp(got, want, 32) == 0, "RFC 4231 test case 2");

        memset(key1, 0x0b, sizeof(key1));
        hex2bin("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", want, 32);
        crypto_auth_hmacsha256_init(&st, key1, sizeof(key1));
        crypto_auth_hmacsha256_update(&st, (const uint8_t *)"Hi There", 8);
        crypto_auth_hmacsha256_final(&st, got);
        ok(memcmp(got, want, 32) == 0, "RFC 4231 test case 1");
}

static struct wire_offer sample_offer(void)
{
        struct wire_offer o;

        memset(&o, 0, sizeof(o));
        o.transfer_id = 77;
        o.size = 5ull << 30;
        o.chunk_size = 1 << 20;
        o.lanes = 2;
        o.file = 0;
        o.job_files = 3;
        o.job_bytes = 6ull << 30;
        memset(o.token, 0x17, sizeof(o.token));
        memset(o.source, 0x29, sizeof(o.source));
        strcpy(o.name, "db-dump.sql.zst");
        return o;
}

static struct wire_binding sample_binding(void)
{
        struct sockaddr_in snd = { .sin_family = AF_INET, .sin_port = htons(50123) };
        struct sockaddr_in rcv = { .sin_family = AF_INET, .sin_port = htons(7470) };
        struct wire_binding bd;

        inet_pton(AF_INET, "198.18.0.1", &snd.sin_addr);
        inet_pton(AF_INET, "198.18.0.2", &rcv.sin_addr);
        if (wire_binding_set(&bd, (struct sockaddr *)&snd, (struct sockaddr *)&rcv) < 0)
                abort();
        return bd;
}

static void sample_key(struct auth_key *key)
{
        memset(key, 0, sizeof(*key));
        key->len = 32;
        for (size_t i = 0; i < key->len; i++)
                key->bytes[i] = (uint8_t)(i * 13 + 5);
}

/* RFC 5869 test cases 1 and 3, through auth_hkdf_sha256. */
static void test_hkdf(void)
{
        uint8_t ikm[22], salt[13], info[10], want[42], got[42];

        memset(ikm, 0x0b, sizeof(ikm));
        for (int i = 0; i < 13; i++)
                salt[i] = (uint8_t)i;
        for (int i = 0; i < 10; i++)
                info[i] = (uint8_t)(0xf0 + i);
        hex2bin("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865", want, 42);
        is_int(auth_hkdf_sha256(got, 42, salt, 13, ikm, 22, info, 10), 0, "HKDF: RFC 5869 case 1 runs");
        ok(memcmp(got, want, 42) == 0, "HKDF: RFC 5869 case 1 (two blocks, the second cut short)");
        hex2bin("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8", want, 42);
        auth_hkdf_sha256(got, 42, NULL, 0, ikm, 22, NULL, 0);
        ok(memcmp(got, want, 42) == 0, "HKDF: RFC 5869 case 3 (no salt, no info)");
        is_int(auth_hkdf_sha256(got, 255 * 32 + 1, salt, 13, ikm, 22, info, 10), -EINVAL,
               "HKDF: more than 255 blocks is -EINVAL");
}

/*
 * Known answers for the layouts of wire.h, computed independently (Python's
 * hmac and hashlib from the documented layout): a change of a label, a
 * field's order or width breaks interoperability and shows here.
 *
 * The RESULT ones (version 11: hop_missing is 8 u64 words, 64 bytes), in
 * Python, with S the session key below (itself re-derived there as
 * HMAC(HMAC(Nr || Ns, K), "rdmaxfer-v4 session" || offer mac || 0x01)):
 *   def result_mac(lane, status, file, nbytes, usec, hops, failed, hstatus, bits, text):
 *       m = sum(1 << b for b in bits)
 *       miss = b''.join(struct.pack('<Q', m >> (64 * w) & (2**64 - 1)) for w in range(8))
 *       t = text.encode()
 *       inp = (b'rdmaxfer-v4 receiver result' + struct.pack('<HHHIQQHHH', lane, status, len(t),
 *              file, nbytes, usec, hops, failed, hstatus) + miss + t)
 *       return hmac.new(S, inp, hashlib.sha256).hexdigest()
 *   result_mac(0, 0, 2, 5 << 30, 2500000, 0, 0, 0, [], '')
 *   result_mac(1, 0, 0, 5 << 30, 2500000, 509, 300, 10, [299, 510], 'hop 300: receiver I/O error')
 * The same model with the version-10 u32 hop_missing gives back the old
 * answer, 0cd41eca...cf3a6cf.
 *
 * Version 16 put data_bytes (u64) between route_hash and the name of an
 * OFFER: every answer below moved with it (the session key is derived
 * from the offer's MAC). The model without that field still gives
 * version 15's (offer 2de24bfd...5ba73f68, session 00596abb...20169b9c).
 */
static void test_vectors(void)
{
        struct auth_key key;
        struct wire_offer o = sample_offer();
        struct wire_binding bd = sample_binding();
        struct auth_session sess = { 0 };
        struct wire_accept acc = { .lanes = 2, .file = 1, .resume = { 5, 7 } };
        struct wire_hello h = { .flags = WIRE_HELLO_LANE | WIRE_HELLO_KEY, .lane = 1 };
        struct wire_end e = { .file = 1, .bytes = 12345 };
        struct wire_result r = { .status = WIRE_OK, .file = 2, .bytes = 5ull << 30, .usec = 2500000 };
        struct wire_offer next = { .transfer_id = 77, .size = 1 << 20, .chunk_size = 1 << 20, .lanes = 2,
                                   .file = 1, .job_files = 3, .job_bytes = 6ull << 30 };
        uint8_t nr[WIRE_NONCE_SIZE], want[WIRE_MAC_SIZE], got[WIRE_MAC_SIZE], tag[WIRE_TAG_SIZE];

        sample_key(&key);
        for (int i = 0; i < WIRE_NONCE_SIZE; i++) {
                nr[i] = (uint8_t)(0x30 + i);
                o.nonce[i] = (uint8_t)(0x60 + i);
        }
        auth_offer_mac(&key, nr, &bd, &o, o.mac);
        hex2bin("6c07c090080b3c9d581064151bcaae59de8899fee1cba2ef8bb9d8f9f012b140", want, 32);
        ok(memcmp(o.mac, want, 32) == 0, "OFFER MAC known answer");
        /* A relay's offer of a single file: the flag's bit in flags' second byte. */
        {
                struct wire_offer rel = o;

                rel.flags = WIRE_OFFER_RELAYED;
                rel.job_files = 1;
                rel.job_bytes = rel.size;
                auth_offer_mac(&key, nr, &bd, &rel, rel.mac);
                hex2bin("f96e4f551e15d876e2e4057c7cde6ed917bfed6b8b2be14072be926c52d6118f", want, 32);
                ok(memcmp(rel.mac, want, 32) == 0, "a relayed OFFER's MAC known answer");
        }
        /* A sparse file's offer: its flag, and data_bytes before the name. */
        {
                struct wire_offer sp = o;

                sp.flags = WIRE_OFFER_SPARSE;
                sp.data_bytes = 3u << 20;
                auth_offer_mac(&key, nr, &bd, &sp, sp.mac);
                hex2bin("e2cf2e2115ba184d41fbadec76587ddfd2550b5234884ab4fdc8f74e4694ab06", want, 32);
                ok(memcmp(sp.mac, want, 32) == 0, "a sparse file's OFFER MAC known answer");
        }
        is_int(auth_session_derive(&sess, &key, nr, &o), 0, "session key derived");
        hex2bin("6647518c6f3e12ab1010469a223459a694451b5b70313edd6044639abd85bb74", want, 32);
        ok(sess.on && memcmp(sess.key, want, 32) == 0, "session key known answer (HKDF of K, Nr || Ns, the OFFER's mac)");
        auth_accept_mac(&sess, &acc, got);
        hex2bin("21e17ac4fed78380b4a1afc7f46d0cf30f1bddb670905ded1f334b4e39edae04", want, 32);
        ok(memcmp(got, want, 32) == 0, "ACCEPT MAC known answer");
        memset(h.token, 0x17, WIRE_TOKEN_SIZE);
        auth_lane_tag(&sess, &bd, &h, tag);
        hex2bin("ab6b69ba13bd6e2d734d1a057ffce5de", want, 16);
        ok(memcmp(tag, want, 16) == 0, "lane hello tag known answer (16 bytes)");
        for (int i = 0; i < WIRE_DIGEST_SIZE; i++)
                e.digest[i] = (uint8_t)i;
        auth_end_mac(&sess, 1, &e, got);
        memcpy(e.mac, got, 32);
        hex2bin("def53824ba2a3bb08e5ab947264ec26e1fa7f71de2dde680987cffba638ffda5", want, 32);
        ok(memcmp(got, want, 32) == 0, "END MAC known answer");
        auth_result_mac(&sess, 0, &r, got);
        memcpy(r.mac, got, 32);
        hex2bin("4a05b1ce9825dfd6c409244eaa13de45e4da362957cea99b337afc800f7ef612", want, 32);
        ok(memcmp(got, want, 32) == 0, "RESULT MAC known answer (64 zero bytes of hop_missing)");
        /* A relay's RESULT on lane 1: hops 300 and 511 of a 511-hop route missing. */
        {
                struct wire_result rel = { .status = WIRE_OK, .file = 0, .bytes = 5ull << 30, .usec = 2500000,
                                           .hops = WIRE_ROUTE_MAX - 2, .hop_failed = 300, .hop_status = WIRE_E_IO };
                uint8_t mac2[WIRE_MAC_SIZE];

                nodeset_add(&rel.hop_missing, 299);
                nodeset_add(&rel.hop_missing, WIRE_ROUTE_MAX - 1);
                strcpy(rel.text, "hop 300: receiver I/O error");
                auth_result_mac(&sess, 1, &rel, rel.mac);
                hex2bin("433d469ad637678a9fd0c23d1522f101c8df36702232a941818dacd001e1eac6", want, 32);
                ok(memcmp(rel.mac, want, 32) == 0, "a relay's RESULT MAC known answer (hop_missing bits 299, 510)");
                is_int(auth_result_verify(&sess, 1, &rel), 0, "and it verifies");
                rel.hop_missing.w[299 / 64] ^= UINT64_C(1) << (299 % 64);
                rel.hop_missing.w[300 / 64] ^= UINT64_C(1) << (300 % 64);
                auth_result_mac(&sess, 1, &rel, mac2);
                ok(memcmp(mac2, rel.mac, 32) != 0, "a hop_missing with bit 300 for bit 299 MACs differently");
                is_int(auth_result_verify(&sess, 1, &rel), -EACCES, "and does not verify under the other's MAC");
        }
        strcpy(next.name, "second.bin");
        auth_next_offer_mac(&sess, &next, next.mac);
        hex2bin("20aad06f421b9d954739d9713ef2a8130b214d83eff3f1205db6fffccaa23103", want, 32);
        ok(memcmp(next.mac, want, 32) == 0, "a later OFFER's MAC known answer (under S)");
        is_int(auth_next_offer_verify(&sess, &next), 0, "and it verifies");
        next.file = 2;
        is_int(auth_next_offer_verify(&sess, &next), -EACCES, "the same offer as another file's does not");
        next.file = 1;
        is_int(auth_next_offer_verify(&(struct auth_session){ .on = false }, &next), -EACCES,
               "nor without a session key");
        e.file = 2;
        is_int(auth_end_verify(&sess, 1, &e), -EACCES, "an END for another file does not verify");
        r.file = 2;
        is_int(auth_result_verify(&sess, 0, &r), 0, "the RESULT verifies");
        r.hops = 1;
        is_int(auth_result_verify(&sess, 0, &r), -EACCES,
               "a RESULT that says another thing of the route (hops) does not verify");
        r.hops = 0;
        r.hop_failed = 1;
        is_int(auth_result_verify(&sess, 0, &r), -EACCES, "nor one that names another failed hop");
        r.hop_failed = 0;
        nodeset_add(&r.hop_missing, 1);
        is_int(auth_result_verify(&sess, 0, &r), -EACCES, "nor one that says another hop is missing");
        r.hop_missing = (struct nodeset){ { 0 } };
        nodeset_add(&r.hop_missing, 300);
        is_int(auth_result_verify(&sess, 0, &r), -EACCES, "nor one that says hop 301 is missing (bit 300)");
        r.hop_missing = (struct nodeset){ { 0 } };
        is_int(auth_result_verify(&sess, 0, &r), 0, "the RESULT as it was verifies again");
        r.file = 1;
        is_int(auth_result_verify(&sess, 0, &r), -EACCES, "a RESULT for another file does not verify");
        /* A relay chain's route travels under the OFFER's MAC, as its hash. */
        is_int(auth_offer_verify(&key, nr, &bd, &o), 0, "the OFFER verifies");
        o.flags |= WIRE_OFFER_ROUTE;
        is_int(auth_offer_verify(&key, nr, &bd, &o), -EACCES, "the same OFFER naming a route does not");
        o.route_hash[31] ^= 1;
        auth_offer_mac(&key, nr, &bd, &o, o.mac);
        is_int(auth_offer_verify(&key, nr, &bd, &o), 0, "one MACed with its route hash does");
        o.route_hash[0] ^= 1;
        is_int(auth_offer_verify(&key, nr, &bd, &o), -EACCES, "and with another route's hash does not: "
               "no hop can be spliced in");
        /* So is a relay's flag: nobody on the path makes an offer resume
         * another node's partial, nor stops a relay's from doing so. */
        o.route_hash[0] ^= 1;
        is_int(auth_offer_verify(&key, nr, &bd, &o), 0, "the routed OFFER verifies");
        o.flags |= WIRE_OFFER_RELAYED;
        is_int(auth_offer_verify(&key, nr, &bd, &o), -EACCES, "the same OFFER marked relayed does not");
        auth_offer_mac(&key, nr, &bd, &o, o.mac);
        is_int(auth_offer_verify(&key, nr, &bd, &o), 0, "one MACed as relayed does");
        o.flags &= (uint16_t)~WIRE_OFFER_RELAYED;
        is_int(auth_offer_verify(&key, nr, &bd, &o), -EACCES, "and with the flag stripped does not");
        auth_session_clear(&sess);
        auth_key_clear(&key);
}

static void test_mac(void)
{
        struct auth_key key, other;
        struct wire_binding bd = sample_binding(), bd2;
        uint8_t nonce[WIRE_NONCE_SIZE], nonce2[WIRE_NONCE_SIZE], want[32];
        uint8_t input[WIRE_MAC_INPUT_MAX], buf[WIRE_CTRL_MAX];
        struct wire_offer o = sample_offer(), t;
        struct wire_msg m, back;
        int n;

        sample_key(&key);
        auth_nonce(nonce);
        auth_nonce(nonce2);
        ok(memcmp(nonce, nonce2, sizeof(nonce)) != 0, "two nonces differ");
        auth_nonce(o.nonce);

        auth_offer_mac(&key, nonce, &bd, &o, o.mac);
        /* Second path: HMAC the documented input with the streaming API. */
        n = wire_offer_mac_input(input, sizeof(input), nonce, &bd, &o);
        crypto_auth_hmacsha256_state st;
        crypto_auth_hmacsha256_init(&st, key.bytes, key.len);
        crypto_auth_hmacsha256_update(&st, input, (unsigned long long)n);
        crypto_auth_hmacsha256_final(&st, want);
        ok(memcmp(o.mac, want, 32) == 0, "auth_offer_mac is HMAC-SHA256(key, wire_offer_mac_input)");
        is_int(auth_offer_verify(&key, nonce, &bd, &o), 0, "a fresh MAC verifies");

        /* Through the wire and back: what the receiver decodes still verifies. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer = o;
        n = wire_encode(buf, sizeof(buf), &m);
        ok(n > 0 && wire_decode(buf, (size_t)n, &back) == 0, "offer crosses the wire");
        is_int(auth_offer_verify(&key, nonce, &bd, &back.offer), 0, "and verifies at the receiver");

        t = o;
        t.transfer_id++;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed transfer_id is caught");
        t = o;
        t.size--;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed size is caught");
        t = o;
        t.chunk_size = 4096;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed chunk_size is caught");
        t = o;
        t.file = 1;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed file index is caught");
        t = o;
        t.job_files = 2;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed job_files is caught");
        t = o;
        t.job_bytes++;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed job_bytes is caught");
        t = o;
        t.mode = 0700;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed mode is caught");
        t = o;
        t.mtime_ns = 1;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed mtime is caught");
        t = o;
        t.flags = 1;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed flags are caught");
        t = o;
        t.name[0] = 'D';
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed name is caught");
        t = o;
        strcat(t.name, "x");
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "longer name is caught");
        t = o;
        t.nonce[7] ^= 1;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "changed sender nonce is caught");
        t = o;
        t.mac[31] ^= 1;
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "flipped MAC bit is caught");
        is_int(auth_offer_verify(&key, nonce2, &bd, &o), -EACCES, "replay under another receiver nonce is caught");
        bd2 = bd;
        bd2.sender[15] ^= 1;
        is_int(auth_offer_verify(&key, nonce, &bd2, &o), -EACCES, "relayed from another sender address is caught");
        bd2 = bd;
        bd2.receiver[15] ^= 1;
        is_int(auth_offer_verify(&key, nonce, &bd2, &o), -EACCES, "relayed to another receiver address is caught");
        bd2 = bd;
        bd2.port++;
        is_int(auth_offer_verify(&key, nonce, &bd2, &o), -EACCES, "relayed to another listening port is caught");
        other = key;
        other.bytes[0] ^= 1;
        is_int(auth_offer_verify(&other, nonce, &bd, &o), -EACCES, "another key is refused");
        other = key;
        other.len = 31;
        is_int(auth_offer_verify(&other, nonce, &bd, &o), -EACCES, "a truncated key is refused");
        other.len = 0;
        is_int(auth_offer_verify(&other, nonce, &bd, &o), -EACCES, "no key configured fails closed");

        t = o;
        t.name[0] = '\0';
        auth_offer_mac(&key, nonce, &bd, &t, t.mac);
        is_int(auth_offer_verify(&key, nonce, &bd, &t), -EACCES, "an unencodable offer never verifies");

        auth_key_clear(&key);
        bool zero = key.len == 0;
        for (size_t i = 0; i < sizeof(key.bytes); i++)
                zero = zero && key.bytes[i] == 0;
        ok(zero, "auth_key_clear wipes the key");
}

/* The session key and everything MACed under it: each bound field counts. */
static void test_session(void)
{
        struct auth_key key, other;
        struct wire_offer o = sample_offer();
        struct wire_binding bd = sample_binding(), bd2;
        struct auth_session s = { 0 }, s2 = { 0 }, off = { 0 };
        struct wire_accept acc = { .lanes = 2 }, acc2;
        struct wire_hello h = { .flags = WIRE_HELLO_LANE | WIRE_HELLO_KEY, .lane = 1 }, h2;
        struct wire_end e = { .bytes = 4096 }, e2;
        struct wire_result r = { .status = WIRE_OK, .bytes = 4096 }, r2;
        uint8_t nr[WIRE_NONCE_SIZE], nr2[WIRE_NONCE_SIZE];

        sample_key(&key);
        auth_nonce(nr);
        auth_nonce(o.nonce);
        auth_offer_mac(&key, nr, &bd, &o, o.mac);
        is_int(auth_session_derive(&s, &key, nr, &o), 0, "session derived");
        memset(&other, 0, sizeof(other));
        is_int(auth_session_derive(&s2, &other, nr, &o), -EACCES, "no key, no session");
        ok(!s2.on, "and it stays off");

        auth_session_derive(&s2, &key, nr, &o);
        ok(memcmp(s.key, s2.key, sizeof(s.key)) == 0, "both sides derive the same key from the same offer");
        memcpy(nr2, nr, sizeof(nr2));
        nr2[0] ^= 1;
        auth_session_derive(&s2, &key, nr2, &o);
        ok(memcmp(s.key, s2.key, sizeof(s.key)) != 0, "another receiver nonce, another session");
        o.nonce[0] ^= 1;
        auth_session_derive(&s2, &key, nr, &o);
        o.nonce[0] ^= 1;
        ok(memcmp(s.key, s2.key, sizeof(s.key)) != 0, "another sender nonce, another session");
        o.mac[0] ^= 1;
        auth_session_derive(&s2, &key, nr, &o);
        o.mac[0] ^= 1;
        ok(memcmp(s.key, s2.key, sizeof(s.key)) != 0, "another offer (its mac), another session");
        other = key;
        other.bytes[3] ^= 1;
        auth_session_derive(&s2, &other, nr, &o);
        ok(memcmp(s.key, s2.key, sizeof(s.key)) != 0, "another key, another session");

        auth_accept_mac(&s, &acc, acc.mac);
        is_int(auth_accept_verify(&s, &acc), 0, "ACCEPT verifies");
        acc2 = acc;
        acc2.lanes = 1;
        is_int(auth_accept_verify(&s, &acc2), -EACCES, "ACCEPT: changed lanes caught");
        is_int(auth_accept_verify(&s2, &acc), -EACCES, "ACCEPT: another session's key caught");
        is_int(auth_accept_verify(&off, &acc), -EACCES, "ACCEPT: no session fails closed");
        acc2 = acc;
        memset(acc2.mac, 0, sizeof(acc2.mac));
        is_int(auth_accept_verify(&s, &acc2), -EACCES, "ACCEPT: a zero MAC (a keyless receiver) caught");

        memset(h.token, 0x17, sizeof(h.token));
        auth_lane_tag(&s, &bd, &h, h.tag);
        is_int(auth_lane_verify(&s, &bd, &h), 0, "lane hello verifies");
        h2 = h;
        h2.lane = 2;
        is_int(auth_lane_verify(&s, &bd, &h2), -EACCES, "lane hello: another lane index caught");
        h2 = h;
        h2.token[0] ^= 1;
        is_int(auth_lane_verify(&s, &bd, &h2), -EACCES, "lane hello: another token caught");
        h2 = h;
        h2.flags |= WIRE_HELLO_REJOIN;
        is_int(auth_lane_verify(&s, &bd, &h2), -EACCES,
               "lane hello: a first join's tag does not make it one joining again (the flags are covered)");
        h2 = h;
        h2.tag[15] ^= 1;
        is_int(auth_lane_verify(&s, &bd, &h2), -EACCES, "lane hello: a flipped tag bit caught");
        bd2 = bd;
        bd2.sender[12] ^= 1;
        is_int(auth_lane_verify(&s, &bd2, &h), -EACCES, "lane hello: from another address caught");
        is_int(auth_lane_verify(&s2, &bd, &h), -EACCES, "lane hello: another session caught");

        memset(e.digest, 0x42, sizeof(e.digest));
        auth_end_mac(&s, 1, &e, e.mac);
        is_int(auth_end_verify(&s, 1, &e), 0, "END verifies");
        is_int(auth_end_verify(&s, 2, &e), -EACCES, "END: replayed on another lane caught");
        e2 = e;
        e2.digest[15] ^= 1;
        is_int(auth_end_verify(&s, 1, &e2), -EACCES, "END: another digest caught");
        e2 = e;
        e2.bytes++;
        is_int(auth_end_verify(&s, 1, &e2), -EACCES, "END: another byte count caught");
        is_int(auth_end_verify(&s2, 1, &e), -EACCES, "END: another session (another transfer) caught");
        is_int(auth_end_verify(&off, 1, &e), -EACCES, "END: no session fails closed");

        strcpy(r.text, "");
        auth_result_mac(&s, 0, &r, r.mac);
        is_int(auth_result_verify(&s, 0, &r), 0, "RESULT verifies");
        is_int(auth_result_verify(&s, 1, &r), -EACCES, "RESULT: on another lane caught");
        r2 = r;
        r2.status = WIRE_E_CHECKSUM;
        is_int(auth_result_verify(&s, 0, &r2), -EACCES, "RESULT: another status caught");
        r2 = r;
        r2.bytes--;
        is_int(auth_result_verify(&s, 0, &r2), -EACCES, "RESULT: another byte count caught");
        r2 = r;
        strcpy(r2.text, "x");
        is_int(auth_result_verify(&s, 0, &r2), -EACCES, "RESULT: another text caught");
        r2 = r;
        nodeset_add(&r2.hop_missing, 300);
        is_int(auth_result_verify(&s, 0, &r2), -EACCES, "RESULT: a hop_missing differing only in bit 300 caught");
        {
                uint8_t m1[WIRE_MAC_SIZE], m2[WIRE_MAC_SIZE];

                auth_result_mac(&s, 0, &r, m1);
                auth_result_mac(&s, 0, &r2, m2);
                ok(memcmp(m1, m2, sizeof(m1)) != 0, "RESULT: and its MAC differs");
        }
        is_int(auth_result_verify(&s2, 0, &r), -EACCES, "RESULT: forged under another session caught");

        /* The roles are in the labels: the receiver's ACCEPT of 2 lanes
         * and the sender's lane hello never share an input. */
        uint8_t a[WIRE_MAC_INPUT_MAX], b[WIRE_MAC_INPUT_MAX];
        int la = wire_accept_mac_input(a, sizeof(a), &acc), lb = wire_end_mac_input(b, sizeof(b), 0, &e);
        ok(la > 0 && lb > 0 && (la != lb || memcmp(a, b, (size_t)la) != 0), "no two messages' inputs coincide");

        auth_session_clear(&s);
        bool zero = !s.on;
        for (size_t i = 0; i < sizeof(s.key); i++)
                zero = zero && s.key[i] == 0;
        ok(zero, "auth_session_clear wipes the session key");
        auth_session_clear(&s2);
        auth_key_clear(&key);
        auth_key_clear(&other);
}

static void test_key_file(void)
{
        struct auth_key key;
        char err[512];
        int r;

        r = auth_key_load(&key, key_file("k1", "00112233445566778899aabbccddeeff\n", 0600), err, sizeof(err));
        is_int(r, 0, "32 hex digits load");
        ok(key.len == 16 && key.bytes[0] == 0x00 && key.bytes[1] == 0x11 && key.bytes[15] == 0xff,
           "16 bytes, in order");

        r = auth_key_load(&key, key_file("k2", " 0011 2233\t4455 6677\r\n8899 AABB CCDD EEFF\n0102 ", 0400), err,
                          sizeof(err));
        ok(r == 0 && key.len == 18 && key.bytes[10] == 0xaa && key.bytes[17] == 0x02,
           "whitespace anywhere, upper case, mode 0400");

        char max[140];
        memset(max, 'f', 128);
        max[128] = '\0';
        r = auth_key_load(&key, key_file("k3", max, 0600), err, sizeof(err));
        ok(r == 0 && key.len == 64, "128 hex digits is the maximum");
        max[127] = '\0';
        max[126] = '\0';
        strcat(max, "ffff");
        r = auth_key_load(&key, key_file("k4", max, 0600), err, sizeof(err));
        ok(r == -EINVAL && key.len == 0 && strstr(err, "65 bytes"), "130 digits is too long: %s", err);

        r = auth_key_load(&key, key_file("k5", "00112233445566778899aabbccddee", 0600), err, sizeof(err));
        ok(r == -EINVAL && strstr(err, "15 bytes"), "30 digits is too short: %s", err);
        r = auth_key_load(&key, key_file("k6", "00112233445566778899aabbccddeeff0", 0600), err, sizeof(err));
        ok(r == -EINVAL && strstr(err, "odd"), "odd digit count: %s", err);
        r = auth_key_load(&key, key_file("k7", "00112233445566778899aabbccddeefg", 0600), err, sizeof(err));
        ok(r == -EINVAL && strstr(err, "byte 32"), "non-hex digit, with its position: %s", err);
        r = auth_key_load(&key, key_file("k8", "", 0600), err, sizeof(err));
        is_int(r, -EINVAL, "empty file");
        r = auth_key_load(&key, key_file("k9", "0x00112233445566778899aabbccddeeff", 0600), err, sizeof(err));
        is_int(r, -EINVAL, "0x prefix is not hex text");

        const char *p = key_file("k10", "00112233445566778899aabbccddeeff", 0640);
        r = auth_key_load(&key, p, err, sizeof(err));
        ok(r == -EPERM && strstr(err, p) && strstr(err, "0640") && strstr(err, "chmod 600"),
           "group-readable key refused: %s", err);
        ok(key.len == 0, "and no key is left behind");
        r = auth_key_load(&key, key_file("k11", "00112233445566778899aabbccddeeff", 0604), err, sizeof(err));
        is_int(r, -EPERM, "world-readable key refused");
        r = auth_key_load(&key, key_file("k12", "00112233445566778899aabbccddeeff", 0620), err, sizeof(err));
        is_int(r, -EPERM, "group-writable key refused");

        /* A systemd credential: read through an ACL whose mask shows as group bits. */
        r = auth_key_load_credential(&key, key_file("c1", "00112233445566778899aabbccddeeff", 0440), err,
                                     sizeof(err));
        ok(r == 0 && key.len == 16, "credential with group bits (an ACL's mask) loads");
        r = auth_key_load_credential(&key, key_file("c2", "00112233445566778899aabbccddeeff", 0444), err,
                                     sizeof(err));
        ok(r == -EPERM && key.len == 0, "world-readable credential refused: %s", err);
        r = auth_key_load_credential(&key, key_file("c3", "0011", 0400), err, sizeof(err));
        is_int(r, -EINVAL, "a credential is checked like a key file");

        char link[PATH_MAX];
        snprintf(link, sizeof(link), "%s/link", dir);
        unlink(link);
        r = symlink(key_file("k13", "00112233445566778899aabbccddeeff", 0600), link);
        r = auth_key_load(&key, link, err, sizeof(err));
        ok(r == -ELOOP && strstr(err, "symbolic link"), "a symlink is not followed: %s", err);

        char missing[PATH_MAX];
        snprintf(missing, sizeof(missing), "%s/missing", dir);
        r = auth_key_load(&key, missing, err, sizeof(err));
        ok(r == -ENOENT && strstr(err, missing), "missing file is -ENOENT: %s", err);
        chmod(dir, 0700);
        r = auth_key_load(&key, dir, err, sizeof(err));
        ok(r == -EINVAL && strstr(err, "regular file"), "a directory is refused: %s", err);

        char huge[5000];
        memset(huge, ' ', sizeof(huge) - 1);
        huge[sizeof(huge) - 1] = '\0';
        r = auth_key_load(&key, key_file("k14", huge, 0600), err, sizeof(err));
        ok(r == -EFBIG && strstr(err, "4999 bytes"), "an oversized file is refused: %s", err);
}

int main(void)
{
        if (sodium_init() < 0 || !mkdtemp(dir))
                return 1;
        test_rfc4231();
        test_hkdf();
        test_vectors();
        test_mac();
        test_session();
        test_key_file();

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                diag("could not remove %s", dir);
        return done_testing();
}
