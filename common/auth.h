#pragma once

/* Pre-shared key proof: HMAC-SHA256 (libsodium) over a receiver nonce. */

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define AUTH_KEY_MIN    16
#define AUTH_KEY_MAX    64

struct auth_key {
        size_t len;             /* 0: no key configured */
        uint8_t bytes[AUTH_KEY_MAX];
};

/*
 * Load a key file: hex text (32..128 hex digits, whitespace ignored).
 * Refuses a file that is group- or world-readable (-EPERM) so a leaked
 * key is not the default. Returns 0 or -errno, message in @err; on
 * failure @key is left cleared (len 0), so a bad file never leaves a
 * half-read key in use.
 */
int auth_key_load(struct auth_key *key, const char *path, char *err, size_t errlen);
/* The same for a systemd credential (LoadCredential=): group bits may be
 * set (an ACL's mask), others' must not. */
int auth_key_load_credential(struct auth_key *key, const char *path, char *err, size_t errlen);
void auth_key_clear(struct auth_key *key);      /* wipes the bytes */

/* Fill @nonce with fresh random bytes. */
void auth_nonce(uint8_t nonce[WIRE_NONCE_SIZE]);

/* MAC of @o (its mac field ignored) under @key and @nonce, into @mac. */
void auth_offer_mac(const struct auth_key *key, const uint8_t nonce[WIRE_NONCE_SIZE],
                    const struct wire_offer *o, uint8_t mac[WIRE_MAC_SIZE]);

/* Constant-time check of @o->mac. Returns 0 or -EACCES. */
int auth_offer_verify(const struct auth_key *key, const uint8_t nonce[WIRE_NONCE_SIZE],
                      const struct wire_offer *o);
