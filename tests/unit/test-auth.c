/* Pre-shared key: key file rules, HMAC known answers, and tamper detection of OFFERs. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
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
        memset(o.token, 0x17, sizeof(o.token));
        strcpy(o.name, "db-dump.sql.zst");
        return o;
}

static void test_mac(void)
{
        struct auth_key key = { .len = 32 }, other;
        uint8_t nonce[WIRE_NONCE_SIZE], nonce2[WIRE_NONCE_SIZE], want[32];
        uint8_t input[WIRE_MAC_INPUT_MAX], buf[WIRE_CTRL_MAX];
        struct wire_offer o = sample_offer(), t;
        struct wire_msg m, back;
        int n;

        for (size_t i = 0; i < key.len; i++)
                key.bytes[i] = (uint8_t)(i * 13 + 5);
        auth_nonce(nonce);
        auth_nonce(nonce2);
        ok(memcmp(nonce, nonce2, sizeof(nonce)) != 0, "two nonces differ");

        auth_offer_mac(&key, nonce, &o, o.mac);
        /* Second path: HMAC the documented input with the one-shot API. */
        n = wire_offer_mac_input(input, sizeof(input), nonce, &o);
        crypto_auth_hmacsha256_state st;
        crypto_auth_hmacsha256_init(&st, key.bytes, key.len);
        crypto_auth_hmacsha256_update(&st, input, (unsigned long long)n);
        crypto_auth_hmacsha256_final(&st, want);
        ok(memcmp(o.mac, want, 32) == 0, "auth_offer_mac is HMAC-SHA256(key, wire_offer_mac_input)");
        is_int(auth_offer_verify(&key, nonce, &o), 0, "a fresh MAC verifies");

        /* Through the wire and back: what the receiver decodes still verifies. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer = o;
        n = wire_encode(buf, sizeof(buf), &m);
        ok(n > 0 && wire_decode(buf, (size_t)n, &back) == 0, "offer crosses the wire");
        is_int(auth_offer_verify(&key, nonce, &back.offer), 0, "and verifies at the receiver");

        t = o;
        t.transfer_id++;
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "changed transfer_id is caught");
        t = o;
        t.size--;
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "changed size is caught");
        t = o;
        t.chunk_size = 4096;
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "changed chunk_size is caught");
        t = o;
        t.flags = 1;
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "changed flags are caught");
        t = o;
        t.name[0] = 'D';
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "changed name is caught");
        t = o;
        strcat(t.name, "x");
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "longer name is caught");
        t = o;
        t.mac[31] ^= 1;
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "flipped MAC bit is caught");
        is_int(auth_offer_verify(&key, nonce2, &o), -EACCES, "replay under another nonce is caught");
        other = key;
        other.bytes[0] ^= 1;
        is_int(auth_offer_verify(&other, nonce, &o), -EACCES, "another key is refused");
        other = key;
        other.len = 31;
        is_int(auth_offer_verify(&other, nonce, &o), -EACCES, "a truncated key is refused");
        other.len = 0;
        is_int(auth_offer_verify(&other, nonce, &o), -EACCES, "no key configured fails closed");

        t = o;
        t.name[0] = '\0';
        auth_offer_mac(&key, nonce, &t, t.mac);
        is_int(auth_offer_verify(&key, nonce, &t), -EACCES, "an unencodable offer never verifies");

        auth_key_clear(&key);
        bool zero = key.len == 0;
        for (size_t i = 0; i < sizeof(key.bytes); i++)
                zero = zero && key.bytes[i] == 0;
        ok(zero, "auth_key_clear wipes the key");
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
        test_mac();
        test_key_file();

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                diag("could not remove %s", dir);
        return done_testing();
}
