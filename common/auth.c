#include "auth.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

/* Hex text of a 64-byte key is 128 digits; allow generous whitespace and a newline. */
#define AUTH_FILE_MAX 4096

_printf_(3, 4)
static void auth_err(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (!err || errlen == 0)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

/* sodium_init() is idempotent; 1 means "already done". Only < 0 is a failure. */
static int auth_sodium_ready(void)
{
        return sodium_init() < 0 ? -EIO : 0;
}

static int auth_hexval(unsigned char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static bool auth_isspace(unsigned char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Read the whole (small) file; -EFBIG past AUTH_FILE_MAX. */
static int auth_read_all(int fd, unsigned char *buf, size_t cap, size_t *len)
{
        size_t off = 0;

        for (;;) {
                ssize_t n;

                if (off == cap)
                        return -EFBIG;
                n = read(fd, buf + off, cap - off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                off += (size_t)n;
        }
        *len = off;
        return 0;
}

/* @private: the mode bits that must be clear (the file's own access rules). */
static int auth_key_load_mode(struct auth_key *key, const char *path, mode_t private,
                              char *err, size_t errlen)
{
        unsigned char text[AUTH_FILE_MAX];
        struct auth_key k = { 0 };
        _cleanup_(closep) int fd = -1;
        struct stat st;
        size_t len = 0, digits = 0;
        int hi = -1, r;

        auth_key_clear(key);
        if (auth_sodium_ready() < 0) {
                auth_err(err, errlen, "%s: libsodium failed to initialise", path);
                return -EIO;
        }

        /* O_NOFOLLOW: a symlink planted in place of the key is not followed to some other secret. */
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                if (r == -ELOOP)
                        auth_err(err, errlen, "%s: is a symbolic link; point key_file at the file itself", path);
                else
                        auth_err(err, errlen, "%s: cannot open key file: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                auth_err(err, errlen, "%s: cannot stat key file: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                auth_err(err, errlen, "%s: not a regular file", path);
                return -EINVAL;
        }
        if (st.st_mode & private) {
                auth_err(err, errlen, "%s: key file is accessible by group or others (mode %04o); "
                         "run chmod 600", path, (unsigned int)(st.st_mode & 07777));
                return -EPERM;
        }

        if (st.st_size >= AUTH_FILE_MAX) {
                auth_err(err, errlen, "%s: key file is %lld bytes; a key file is hex text under %d bytes",
                         path, (long long)st.st_size, AUTH_FILE_MAX);
                return -EFBIG;
        }

        /* Still bounded: the file may grow between fstat() and read(). */
        r = auth_read_all(fd, text, sizeof(text), &len);
        if (r < 0) {
                auth_err(err, errlen, "%s: cannot read key file: %s", path, strerror(-r));
                goto out_wipe;
        }

        for (size_t i = 0; i < len; i++) {
                int v;

                if (auth_isspace(text[i]))
                        continue;
                v = auth_hexval(text[i]);
                if (v < 0) {
                        auth_err(err, errlen, "%s: byte %zu is not a hex digit", path, i + 1);
                        r = -EINVAL;
                        goto out_wipe;
                }
                digits++;
                if (hi < 0) {
                        hi = v;
                        continue;
                }
                if (k.len == AUTH_KEY_MAX) {
                        /* Counted on, so the message can say how long it was. */
                        hi = -1;
                        continue;
                }
                k.bytes[k.len++] = (uint8_t)(hi << 4 | v);
                hi = -1;
        }
        if (digits % 2 != 0) {
                auth_err(err, errlen, "%s: odd number of hex digits (%zu)", path, digits);
                r = -EINVAL;
                goto out_wipe;
        }
        if (digits / 2 < AUTH_KEY_MIN || digits / 2 > AUTH_KEY_MAX) {
                auth_err(err, errlen, "%s: key is %zu bytes; it must be %d..%d bytes (%d..%d hex digits)",
                         path, digits / 2, AUTH_KEY_MIN, AUTH_KEY_MAX, 2 * AUTH_KEY_MIN, 2 * AUTH_KEY_MAX);
                r = -EINVAL;
                goto out_wipe;
        }

        *key = k;
        r = 0;
out_wipe:
        sodium_memzero(text, sizeof(text));
        sodium_memzero(&k, sizeof(k));
        return r;
}

int auth_key_load(struct auth_key *key, const char *path, char *err, size_t errlen)
{
        return auth_key_load_mode(key, path, 077, err, errlen);
}

int auth_key_load_credential(struct auth_key *key, const char *path, char *err, size_t errlen)
{
        /* systemd grants the service user read through an ACL, whose mask
         * shows as group bits; the directory is the service's alone. */
        return auth_key_load_mode(key, path, 007, err, errlen);
}

void auth_key_clear(struct auth_key *key)
{
        sodium_memzero(key, sizeof(*key));
}

void auth_nonce(uint8_t nonce[WIRE_NONCE_SIZE])
{
        /* No randomness means every nonce could repeat: not a state to run in. */
        if (auth_sodium_ready() < 0)
                abort();
        randombytes_buf(nonce, WIRE_NONCE_SIZE);
}

/* HMAC-SHA256 of @n bytes of @in under @key; false when there is no
 * input (@n < 0: the message could not be encoded), and then @mac is zero. */
static bool auth_hmac(const uint8_t *key, size_t keylen, const uint8_t *in, int n,
                      uint8_t mac[WIRE_MAC_SIZE])
{
        crypto_auth_hmacsha256_state st;

        static_assert(crypto_auth_hmacsha256_BYTES == WIRE_MAC_SIZE, "HMAC-SHA256 is 32 bytes");

        if (n < 0 || keylen == 0) {
                memset(mac, 0, WIRE_MAC_SIZE);
                return false;
        }
        crypto_auth_hmacsha256_init(&st, key, keylen);
        crypto_auth_hmacsha256_update(&st, in, (unsigned long long)n);
        crypto_auth_hmacsha256_final(&st, mac);
        sodium_memzero(&st, sizeof(st));
        return true;
}

/* Constant-time check of the first @len bytes of @mac: 0 or -EACCES. */
static int auth_check(const uint8_t *key, size_t keylen, const uint8_t *in, int n,
                      const uint8_t *mac, size_t len)
{
        uint8_t want[WIRE_MAC_SIZE];
        int r = -EACCES;

        if (auth_hmac(key, keylen, in, n, want) && sodium_memcmp(want, mac, len) == 0)
                r = 0;
        sodium_memzero(want, sizeof(want));
        return r;
}

void auth_offer_mac(const struct auth_key *key, const uint8_t rnonce[WIRE_NONCE_SIZE],
                    const struct wire_binding *b, const struct wire_offer *o,
                    uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        /* An offer wire_encode() would refuse never leaves; a zero MAC never verifies either. */
        auth_hmac(key->bytes, key->len, in, wire_offer_mac_input(in, sizeof(in), rnonce, b, o), mac);
}

int auth_offer_verify(const struct auth_key *key, const uint8_t rnonce[WIRE_NONCE_SIZE],
                      const struct wire_binding *b, const struct wire_offer *o)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        /* Asked to check a proof with no key configured: fail closed (auth_hmac). */
        return auth_check(key->bytes, key->len, in, wire_offer_mac_input(in, sizeof(in), rnonce, b, o),
                          o->mac, WIRE_MAC_SIZE);
}

int auth_hkdf_sha256(uint8_t *out, size_t outlen, const uint8_t *salt, size_t saltlen,
                     const uint8_t *ikm, size_t ikmlen, const uint8_t *info, size_t infolen)
{
        static const uint8_t zero[WIRE_MAC_SIZE];
        crypto_auth_hmacsha256_state st;
        uint8_t prk[WIRE_MAC_SIZE], t[WIRE_MAC_SIZE];
        size_t done = 0;

        if (outlen > 255 * WIRE_MAC_SIZE)
                return -EINVAL;
        /* Extract: PRK = HMAC(salt, IKM); no salt means HashLen zeros. */
        if (saltlen == 0) {
                salt = zero;
                saltlen = sizeof(zero);
        }
        crypto_auth_hmacsha256_init(&st, salt, saltlen);
        crypto_auth_hmacsha256_update(&st, ikm, ikmlen);
        crypto_auth_hmacsha256_final(&st, prk);
        /* Expand: T(i) = HMAC(PRK, T(i-1) || info || i). */
        for (unsigned int i = 1; done < outlen; i++) {
                uint8_t c = (uint8_t)i;
                size_t n = MIN(outlen - done, sizeof(t));

                crypto_auth_hmacsha256_init(&st, prk, sizeof(prk));
                if (i > 1)
                        crypto_auth_hmacsha256_update(&st, t, sizeof(t));
                crypto_auth_hmacsha256_update(&st, info, infolen);
                crypto_auth_hmacsha256_update(&st, &c, 1);
                crypto_auth_hmacsha256_final(&st, t);
                memcpy(out + done, t, n);
                done += n;
        }
        sodium_memzero(&st, sizeof(st));
        sodium_memzero(prk, sizeof(prk));
        sodium_memzero(t, sizeof(t));
        return 0;
}

int auth_session_derive(struct auth_session *s, const struct auth_key *key,
                        const uint8_t rnonce[WIRE_NONCE_SIZE], const struct wire_offer *o)
{
        uint8_t salt[2 * WIRE_NONCE_SIZE], info[64];
        int n;

        auth_session_clear(s);
        n = wire_session_info(info, sizeof(info), o->mac);
        if (key->len == 0 || n < 0)
                return -EACCES;
        memcpy(salt, rnonce, WIRE_NONCE_SIZE);
        memcpy(salt + WIRE_NONCE_SIZE, o->nonce, WIRE_NONCE_SIZE);
        if (auth_hkdf_sha256(s->key, sizeof(s->key), salt, sizeof(salt), key->bytes, key->len,
                             info, (size_t)n) < 0)
                return -EACCES;
        s->on = true;
        return 0;
}

void auth_session_clear(struct auth_session *s)
{
        sodium_memzero(s, sizeof(*s));
}

/* The session key, or none (length 0: every MAC is zero, no check passes). */
static size_t auth_skey_len(const struct auth_session *s)
{
        return s->on ? sizeof(s->key) : 0;
}

void auth_accept_mac(const struct auth_session *s, const struct wire_accept *a,
                     uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_accept_mac_input(in, sizeof(in), a), mac);
}

int auth_accept_verify(const struct auth_session *s, const struct wire_accept *a)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_accept_mac_input(in, sizeof(in), a),
                          a->mac, WIRE_MAC_SIZE);
}

void auth_next_offer_mac(const struct auth_session *s, const struct wire_offer *o,
                         uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_next_offer_mac_input(in, sizeof(in), o), mac);
}

int auth_next_offer_verify(const struct auth_session *s, const struct wire_offer *o)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_next_offer_mac_input(in, sizeof(in), o),
                          o->mac, WIRE_MAC_SIZE);
}

void auth_lane_tag(const struct auth_session *s, const struct wire_binding *b,
                   const struct wire_hello *h, uint8_t tag[WIRE_TAG_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX], mac[WIRE_MAC_SIZE];

        auth_hmac(s->key, auth_skey_len(s), in, wire_lane_mac_input(in, sizeof(in), b, h), mac);
        memcpy(tag, mac, WIRE_TAG_SIZE);
        sodium_memzero(mac, sizeof(mac));
}

int auth_lane_verify(const struct auth_session *s, const struct wire_binding *b,
                     const struct wire_hello *h)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_lane_mac_input(in, sizeof(in), b, h),
                          h->tag, WIRE_TAG_SIZE);
}

void auth_end_mac(const struct auth_session *s, unsigned int lane, const struct wire_end *e,
                  uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_end_mac_input(in, sizeof(in), lane, e), mac);
}

int auth_end_verify(const struct auth_session *s, unsigned int lane, const struct wire_end *e)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_end_mac_input(in, sizeof(in), lane, e),
                          e->mac, WIRE_MAC_SIZE);
}

void auth_result_mac(const struct auth_session *s, unsigned int lane, const struct wire_result *r,
                     uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_result_mac_input(in, sizeof(in), lane, r), mac);
}

int auth_result_verify(const struct auth_session *s, unsigned int lane, const struct wire_result *r)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_result_mac_input(in, sizeof(in), lane, r),
                          r->mac, WIRE_MAC_SIZE);
}

void auth_gone_mac(const struct auth_session *s, const struct wire_gone *g, uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_gone_mac_input(in, sizeof(in), g), mac);
}

int auth_gone_verify(const struct auth_session *s, const struct wire_gone *g)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_gone_mac_input(in, sizeof(in), g), g->mac,
                          WIRE_MAC_SIZE);
}

void auth_need_mac(const struct auth_session *s, const struct wire_need *n, uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        auth_hmac(s->key, auth_skey_len(s), in, wire_need_mac_input(in, sizeof(in), n), mac);
}

int auth_need_verify(const struct auth_session *s, const struct wire_need *n)
{
        uint8_t in[WIRE_MAC_INPUT_MAX];

        return auth_check(s->key, auth_skey_len(s), in, wire_need_mac_input(in, sizeof(in), n), n->mac,
                          WIRE_MAC_SIZE);
}
