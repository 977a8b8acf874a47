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

/* 0, or -EINVAL when the offer cannot be encoded (then nothing is MACed). */
static int auth_compute(const struct auth_key *key, const uint8_t nonce[WIRE_NONCE_SIZE],
                        const struct wire_offer *o, uint8_t mac[WIRE_MAC_SIZE])
{
        uint8_t input[WIRE_MAC_INPUT_MAX];
        crypto_auth_hmacsha256_state st;
        int n;

        static_assert(crypto_auth_hmacsha256_BYTES == WIRE_MAC_SIZE, "HMAC-SHA256 is 32 bytes");

        n = wire_offer_mac_input(input, sizeof(input), nonce, o);
        if (n < 0)
                return n;
        crypto_auth_hmacsha256_init(&st, key->bytes, key->len);
        crypto_auth_hmacsha256_update(&st, input, (unsigned long long)n);
        crypto_auth_hmacsha256_final(&st, mac);
        sodium_memzero(&st, sizeof(st));
        return 0;
}

void auth_offer_mac(const struct auth_key *key, const uint8_t nonce[WIRE_NONCE_SIZE],
                    const struct wire_offer *o, uint8_t mac[WIRE_MAC_SIZE])
{
        /* An offer wire_encode() would refuse never leaves; a zero MAC never verifies either. */
        if (auth_compute(key, nonce, o, mac) < 0)
                memset(mac, 0, WIRE_MAC_SIZE);
}

int auth_offer_verify(const struct auth_key *key, const uint8_t nonce[WIRE_NONCE_SIZE],
                      const struct wire_offer *o)
{
        uint8_t want[WIRE_MAC_SIZE];
        int r;

        /* Asked to check a proof with no key configured: fail closed. */
        if (key->len == 0)
                return -EACCES;
        if (auth_compute(key, nonce, o, want) < 0)
                return -EACCES;
        r = crypto_verify_32(want, o->mac) == 0 ? 0 : -EACCES;
        sodium_memzero(want, sizeof(want));
        return r;
}
