#pragma once

/*
 * The pre-shared key and what is proven with it (wire.h, "Authentication"):
 * HMAC-SHA256 (libsodium) of the OFFER under the key, the session key
 * derived from it with HKDF-SHA256, and the MACs of ACCEPT, lane hellos,
 * END and RESULT under the session key. Checks are constant time; keys
 * are wiped when cleared.
 */

#include <stdbool.h>
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

/* A transfer's session key S; on is false until it is derived. */
struct auth_session {
        bool on;
        uint8_t key[WIRE_MAC_SIZE];
};

/* MAC of @o (its mac field ignored) under @key, the receiver's nonce
 * @rnonce and lane 0's binding @b, into @mac. */
void auth_offer_mac(const struct auth_key *key, const uint8_t rnonce[WIRE_NONCE_SIZE],
                    const struct wire_binding *b, const struct wire_offer *o,
                    uint8_t mac[WIRE_MAC_SIZE]);

/* Constant-time check of @o->mac. Returns 0 or -EACCES (also with no key). */
int auth_offer_verify(const struct auth_key *key, const uint8_t rnonce[WIRE_NONCE_SIZE],
                      const struct wire_binding *b, const struct wire_offer *o);

/* S from @key, @rnonce, the offer's nonce and its MAC (made or verified
 * before). 0, or -EACCES with no key (then @s is off). */
int auth_session_derive(struct auth_session *s, const struct auth_key *key,
                        const uint8_t rnonce[WIRE_NONCE_SIZE], const struct wire_offer *o);
void auth_session_clear(struct auth_session *s);        /* wipes the key */

/* The MACs under S; each verify is constant time and returns 0 or -EACCES
 * (also when S is off). @lane: the lane the message travels on. */
void auth_accept_mac(const struct auth_session *s, const struct wire_accept *a,
                     uint8_t mac[WIRE_MAC_SIZE]);
int auth_accept_verify(const struct auth_session *s, const struct wire_accept *a);
/* A later offer of the session (file > 0; wire.h). */
void auth_next_offer_mac(const struct auth_session *s, const struct wire_offer *o,
                         uint8_t mac[WIRE_MAC_SIZE]);
int auth_next_offer_verify(const struct auth_session *s, const struct wire_offer *o);
void auth_lane_tag(const struct auth_session *s, const struct wire_binding *b,
                   const struct wire_hello *h, uint8_t tag[WIRE_TAG_SIZE]);
int auth_lane_verify(const struct auth_session *s, const struct wire_binding *b,
                     const struct wire_hello *h);
void auth_end_mac(const struct auth_session *s, unsigned int lane, const struct wire_end *e,
                  uint8_t mac[WIRE_MAC_SIZE]);
int auth_end_verify(const struct auth_session *s, unsigned int lane, const struct wire_end *e);
void auth_result_mac(const struct auth_session *s, unsigned int lane, const struct wire_result *r,
                     uint8_t mac[WIRE_MAC_SIZE]);
int auth_result_verify(const struct auth_session *s, unsigned int lane, const struct wire_result *r);
/* A dry run's GONE (wire.h, version 17). */
void auth_gone_mac(const struct auth_session *s, const struct wire_gone *g, uint8_t mac[WIRE_MAC_SIZE]);
int auth_gone_verify(const struct auth_session *s, const struct wire_gone *g);
/* An index pack's NEED (wire.h, version 24). */
void auth_need_mac(const struct auth_session *s, const struct wire_need *n, uint8_t mac[WIRE_MAC_SIZE]);
int auth_need_verify(const struct auth_session *s, const struct wire_need *n);

/* HKDF-SHA256 (RFC 5869): extract with @salt, expand with @info into
 * @outlen bytes (at most 255 * 32). 0 or -EINVAL. */
int auth_hkdf_sha256(uint8_t *out, size_t outlen, const uint8_t *salt, size_t saltlen,
                     const uint8_t *ikm, size_t ikmlen, const uint8_t *info, size_t infolen);
