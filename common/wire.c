#include "wire.h"

#include <assert.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "macro.h"
#include "nodeset.h"
#include "xattrs.h"

/*
 * Control message layouts, after the 16-byte header
 * (magic u32, version u16, type u16, length u32, credits u32):
 *
 *   OFFER   transfer_id u64, size u64, chunk_size u32, flags u16,
 *           name_len u16, lanes u16, file u32, job_files u32, job_bytes u64,
 *           mode u32, mtime_ns u64, token[16], source[16], nonce[32], mac[32],
 *           pack_entries u32, pack_hash[32], digest[16], route_hash[32],
 *           data_bytes u64, name[name_len]
 *   ACCEPT  lanes u16, flags u16, file u32, resume[8] u32, mac[32]
 *   REFUSE  status u16, text_len u16, text[text_len]
 *   CREDIT  (empty)
 *   END     file u32, bytes u64, digest[16], mac[32]
 *   RESULT  status u16, text_len u16, file u32, bytes u64, usec u64, hops u16,
 *           hop_failed u16, hop_status u16, hop_missing[8] u64, mac[32], text[text_len]
 *   WAIT    file u32
 *   ROUTE   total u16, first u16, hops u16, then per hop: addr[16], port u16
 *   PROGRESS total u16, first u16, hops u16, then per hop: bytes u64
 *   GONE    file u32, seq u32, kind u16, name_len u16, mac[32], name[name_len]
 *   NAME    total u16, offset u16, len u16, bytes[len]
 *   LAND    total u16, offset u16, len u16, bytes[len] (wire_land_encode's)
 *   XATTR   total u16, offset u16, len u16, bytes[len] (xattrs.h's records)
 *
 * An OFFER with WIRE_OFFER_LONG_NAME has name_len 0 and no name: the NAME
 * parts before it carry the path (its MAC input has the whole path).
 *
 * Strings carry no NUL on the wire; length is the header's payload length,
 * which must equal the fixed part plus the string length exactly.
 */
#define WIRE_OFFER_FIXED        (8 + 8 + 4 + 2 + 2 + 2 + 4 + 4 + 8 + 4 + 8 + WIRE_TOKEN_SIZE + \
                                 WIRE_SOURCE_SIZE + WIRE_NONCE_SIZE + WIRE_MAC_SIZE + 4 + \
                                 WIRE_PACK_HASH_SIZE + WIRE_DIGEST_SIZE + WIRE_ROUTE_HASH_SIZE + 8)
#define WIRE_ACCEPT_LEN         (2 + 2 + 4 + 4 * WIRE_LANES_MAX + WIRE_MAC_SIZE)
/* ...and with WIRE_ACCEPT_RAILS, its rails. */
#define WIRE_ACCEPT_RAILS_LEN(n) (1u + (uint32_t)(n) * WIRE_HOP_LEN)
#define WIRE_REFUSE_FIXED       (2 + 2)
#define WIRE_END_LEN            (4 + 8 + WIRE_DIGEST_SIZE + WIRE_MAC_SIZE)
#define WIRE_RESULT_FIXED       (2 + 2 + 4 + 8 + 8 + 2 + 2 + 2 + NODESET_WIRE_SIZE + WIRE_MAC_SIZE)
#define WIRE_WAIT_LEN           4
#define WIRE_HOP_LEN            (WIRE_ADDR_SIZE + 2)
#define WIRE_ROUTE_LEN(n)       (6u + (uint32_t)(n) * WIRE_HOP_LEN)
#define WIRE_PROGRESS_LEN(n)    (6u + (uint32_t)(n) * 8u)
#define WIRE_BINDING_LEN        (2 * WIRE_ADDR_SIZE + 2)
#define WIRE_GONE_FIXED         (4 + 4 + 2 + 2 + WIRE_MAC_SIZE)
#define WIRE_NEED_FIXED         (4 + 2 + 2 + WIRE_MAC_SIZE)
#define WIRE_NEED_BITS(n)       (((uint32_t)(n) + 7u) / 8u)
#define WIRE_NAME_FIXED         (2 + 2 + 2)
#define WIRE_LAND_PART_FIXED    (2 + 2 + 2)

/* The MAC labels: each names the role that MACs and the message. None is
 * a prefix of another. */
#define WIRE_LABEL_OFFER        "rdmaxfer-v4 sender offer"
#define WIRE_LABEL_NEXT         "rdmaxfer-v4 sender next offer"
#define WIRE_LABEL_SESSION      "rdmaxfer-v4 session"
#define WIRE_LABEL_ACCEPT       "rdmaxfer-v4 receiver accept"
#define WIRE_LABEL_LANE         "rdmaxfer-v4 sender lane"
#define WIRE_LABEL_END          "rdmaxfer-v4 sender end"
#define WIRE_LABEL_RESULT       "rdmaxfer-v4 receiver result"
#define WIRE_LABEL_GONE         "rdmaxfer-v4 receiver gone"
#define WIRE_LABEL_NEED         "rdmaxfer-v4 receiver need"
#define WIRE_LABEL_LEN(l)       (sizeof(l) - 1)

static_assert(WIRE_HEADER_SIZE == 4 + 2 + 2 + 4 + 4, "wire header layout");
static_assert(WIRE_HELLO_SIZE == 4 + 2 + 2 + 2 + 2 + WIRE_TOKEN_SIZE + WIRE_TAG_SIZE, "hello layout");
static_assert(WIRE_WELCOME_SIZE == 4 + 2 + 2 + 4 + 4 + 4 + WIRE_NONCE_SIZE, "welcome layout");
static_assert(WIRE_REJECT_SIZE == 4 + 2 + 2 + 4, "reject layout");
static_assert(WIRE_HELLO_SIZE <= 56 && WIRE_WELCOME_SIZE <= 196 && WIRE_REJECT_SIZE <= 148,
              "rdma_cm private data limits");
static_assert(WIRE_HEADER_SIZE + WIRE_OFFER_FIXED + WIRE_NAME_MAX <= WIRE_CTRL_MAX, "offer fits");
static_assert(WIRE_HEADER_SIZE + WIRE_RESULT_FIXED + WIRE_TEXT_MAX <= WIRE_CTRL_MAX, "result fits");
static_assert(WIRE_HEADER_SIZE + WIRE_ROUTE_LEN(WIRE_ROUTE_PART_MAX) <= WIRE_CTRL_MAX, "a route's part fits");
static_assert(WIRE_HEADER_SIZE + WIRE_PROGRESS_LEN(WIRE_PROGRESS_PART_MAX) <= WIRE_CTRL_MAX,
              "a progress window fits");
static_assert(WIRE_ROUTE_MAX + 1 <= NODESET_MAX, "hop_missing has a bit per hop");
static_assert(WIRE_PATH_MAX <= UINT16_MAX && WIRE_TEXT_MAX <= UINT16_MAX, "u16 lengths");
static_assert(WIRE_HEADER_SIZE + WIRE_NAME_FIXED + WIRE_NAME_PART_MAX <= WIRE_CTRL_MAX, "a name's part fits");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_OFFER) + WIRE_NONCE_SIZE + WIRE_BINDING_LEN +
              WIRE_OFFER_FIXED - WIRE_MAC_SIZE + WIRE_PATH_MAX <= WIRE_MAC_INPUT_MAX, "offer mac input bound");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_RESULT) + 2 + WIRE_RESULT_FIXED - WIRE_MAC_SIZE + WIRE_TEXT_MAX <=
              WIRE_MAC_INPUT_MAX, "result mac input bound");
static_assert(WIRE_HEADER_SIZE + WIRE_GONE_FIXED + WIRE_NAME_MAX <= WIRE_CTRL_MAX, "gone fits");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_GONE) + WIRE_GONE_FIXED - WIRE_MAC_SIZE + WIRE_NAME_MAX <= WIRE_MAC_INPUT_MAX,
              "gone mac input bound");
static_assert(WIRE_HEADER_SIZE + WIRE_NEED_FIXED + WIRE_NEED_BITS(WIRE_NEED_ENTRIES_MAX) <= WIRE_CTRL_MAX,
              "need fits");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_NEED) + WIRE_NEED_FIXED - WIRE_MAC_SIZE +
              WIRE_NEED_BITS(WIRE_NEED_ENTRIES_MAX) <= WIRE_MAC_INPUT_MAX, "need mac input bound");
static_assert(WIRE_TAG_SIZE <= WIRE_MAC_SIZE, "a tag is a truncated MAC");
static_assert(WIRE_HEADER_SIZE + WIRE_LAND_PART_FIXED + WIRE_LAND_PART_MAX <= WIRE_CTRL_MAX, "a landing's part fits");
static_assert(WIRE_LAND_MAX <= UINT16_MAX, "u16 landing lengths");
static_assert(WIRE_LAND_BACK_FIXED + WIRE_LAND_CRED_MAX + WIRE_PATH_MAX >= 2 + WIRE_XATTRS_MAX,
              "a push's attributes fit where a pull's way back does");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_OFFER) + WIRE_NONCE_SIZE + WIRE_BINDING_LEN + WIRE_OFFER_FIXED -
              WIRE_MAC_SIZE + WIRE_PATH_MAX + WIRE_LAND_HASH_SIZE + 2 + WIRE_XATTRS_HASH_SIZE <= WIRE_MAC_INPUT_MAX,
              "attributes mac input bound");
static_assert(WIRE_LABEL_LEN(WIRE_LABEL_OFFER) + WIRE_NONCE_SIZE + WIRE_BINDING_LEN + WIRE_OFFER_FIXED -
              WIRE_MAC_SIZE + WIRE_NAME_MAX + WIRE_LAND_HASH_SIZE <= WIRE_MAC_INPUT_MAX, "landing mac input bound");

static_assert(WIRE_LABEL_LEN(WIRE_LABEL_OFFER) + WIRE_NONCE_SIZE + WIRE_BINDING_LEN + WIRE_OFFER_FIXED -
              WIRE_MAC_SIZE + WIRE_PATH_MAX + 2 + WIRE_XATTRS_HASH_SIZE + 2 + WIRE_RULES_HASH_SIZE <=
              WIRE_MAC_INPUT_MAX, "rules mac input bound");
static_assert(WIRE_RULES_MAX <= UINT16_MAX, "u16 rules lengths");

/* What a status means: its name, its text, and the flags below. */
enum {
        WIRE_STATUS_TRANSIENT = 1 << 0,
        WIRE_STATUS_REFUSAL = 1 << 1,
        WIRE_STATUS_KEEPS = 1 << 2,
};

static const struct {
        const char *name;       /* stable: a JSON key and a Prometheus label value */
        const char *text;
        unsigned int flags;
} wire_status_info[_WIRE_STATUS_MAX] = {
        /* A receive that ends without a verdict of its own (torn down). */
        [WIRE_OK] = { "ok", "ok", WIRE_STATUS_KEEPS },
        [WIRE_E_VERSION] = { "version", "protocol version not supported", WIRE_STATUS_REFUSAL },
        [WIRE_E_PROTOCOL] = { "protocol", "protocol error", WIRE_STATUS_KEEPS },
        [WIRE_E_BUSY] = { "busy", "receiver busy",
                           WIRE_STATUS_TRANSIENT | WIRE_STATUS_REFUSAL | WIRE_STATUS_KEEPS },
        [WIRE_E_DENIED] = { "denied", "peer not allowed", WIRE_STATUS_REFUSAL },
        [WIRE_E_AUTH] = { "auth", "authentication failed", WIRE_STATUS_REFUSAL },
        [WIRE_E_NAME] = { "name", "file name not acceptable", WIRE_STATUS_REFUSAL },
        [WIRE_E_EXISTS] = { "exists", "file exists", WIRE_STATUS_REFUSAL },
        [WIRE_E_TOO_LARGE] = { "too_large", "file too large", WIRE_STATUS_REFUSAL },
        /*
         * Not transient: space comes back when somebody on the receiver
         * acts, not within a retry window, and each attempt would resend
         * the file into a disk that is already short.
         */
        [WIRE_E_NO_SPACE] = { "no_space", "no space left on receiver", WIRE_STATUS_REFUSAL },
        [WIRE_E_IO] = { "io", "receiver I/O error", WIRE_STATUS_TRANSIENT | WIRE_STATUS_KEEPS },
        [WIRE_E_CHECKSUM] = { "checksum", "checksum mismatch", WIRE_STATUS_TRANSIENT | WIRE_STATUS_KEEPS },
        [WIRE_E_SIZE] = { "size", "size mismatch", WIRE_STATUS_TRANSIENT | WIRE_STATUS_KEEPS },
        [WIRE_E_SHUTDOWN] = { "shutdown", "receiver shutting down",
                              WIRE_STATUS_TRANSIENT | WIRE_STATUS_REFUSAL | WIRE_STATUS_KEEPS },
        [WIRE_E_INTERNAL] = { "internal", "internal error", WIRE_STATUS_TRANSIENT | WIRE_STATUS_KEEPS },
        /* Permissions change when somebody acts, as space does. */
        [WIRE_E_PERMISSION] = { "permission", "permission denied on the receiver", WIRE_STATUS_REFUSAL },
};

static unsigned int wire_status_flags(unsigned int status)
{
        return status < _WIRE_STATUS_MAX ? wire_status_info[status].flags : 0;
}

const char *wire_status_name(unsigned int status)
{
        return status < _WIRE_STATUS_MAX ? wire_status_info[status].name : NULL;
}

const char *wire_status_str(unsigned int status)
{
        /* A newer peer may send a status this build does not know. */
        if (status >= _WIRE_STATUS_MAX || !wire_status_info[status].text)
                return "unknown status";
        return wire_status_info[status].text;
}

bool wire_status_transient(unsigned int status)
{
        return wire_status_flags(status) & WIRE_STATUS_TRANSIENT;
}

bool wire_status_refusal(unsigned int status)
{
        return wire_status_flags(status) & WIRE_STATUS_REFUSAL;
}

bool wire_status_keeps(unsigned int status)
{
        return wire_status_flags(status) & WIRE_STATUS_KEEPS;
}

unsigned int wire_status_of_errno(int err)
{
        switch (err) {
        case ENOSPC:
        case EDQUOT:
                return WIRE_E_NO_SPACE;
        case EACCES:
        case EPERM:
        case EROFS:
                return WIRE_E_PERMISSION;
        case ENAMETOOLONG:
                return WIRE_E_NAME;
        case EFBIG:
                return WIRE_E_TOO_LARGE;
        default:
                return WIRE_E_IO;
        }
}

/* ---- rdma_cm private data ---------------------------------------------- */

void wire_encode_hello(void *buf, const struct wire_hello *h)
{
        struct bytes_out o = BYTES_OUT(buf, WIRE_HELLO_SIZE);

        bytes_put_u32(&o, WIRE_MAGIC);
        bytes_put_u16(&o, WIRE_VERSION);
        bytes_put_u16(&o, h->flags);
        bytes_put_u16(&o, h->lane);
        bytes_put_u16(&o, h->reserved);
        bytes_put_mem(&o, h->token, WIRE_TOKEN_SIZE);
        bytes_put_mem(&o, h->tag, WIRE_TAG_SIZE);
        assert(!o.overflow && o.off == WIRE_HELLO_SIZE);
}

int wire_decode_hello(const void *buf, size_t len, struct wire_hello *h)
{
        struct bytes_in in = BYTES_IN(buf, len);

        memset(h, 0, sizeof(*h));
        /* rdma_cm may hand us more than we sent (padding); never less. Every
         * version's hello starts with magic and version: read that far to
         * report the version. */
        if (!buf || len < 8)
                return -EBADMSG;
        h->magic = bytes_get_u32(&in);
        h->version = bytes_get_u16(&in);
        h->flags = bytes_get_u16(&in);
        if (h->magic != WIRE_MAGIC)
                return -EBADMSG;
        if (h->version != WIRE_VERSION)
                return -EPROTONOSUPPORT;
        if (len < WIRE_HELLO_SIZE)
                return -EBADMSG;
        h->lane = bytes_get_u16(&in);
        h->reserved = bytes_get_u16(&in);
        bytes_get_mem(&in, h->token, WIRE_TOKEN_SIZE);
        bytes_get_mem(&in, h->tag, WIRE_TAG_SIZE);
        /* Lane 0 is the connection that offers; a lane hello names another. */
        /* (Or lane 0 joining again: version 23.) */
        if ((h->flags & WIRE_HELLO_LANE) ?
            (h->lane == 0 && !(h->flags & WIRE_HELLO_REJOIN)) || h->lane >= WIRE_LANES_MAX : h->lane != 0)
                return -EBADMSG;
        /* Only a lane that was connected rejoins. */
        if ((h->flags & WIRE_HELLO_REJOIN) && !(h->flags & WIRE_HELLO_LANE))
                return -EBADMSG;
        return 0;
}

void wire_encode_welcome(void *buf, const struct wire_welcome *w)
{
        struct bytes_out o = BYTES_OUT(buf, WIRE_WELCOME_SIZE);

        bytes_put_u32(&o, WIRE_MAGIC);
        bytes_put_u16(&o, WIRE_VERSION);
        bytes_put_u16(&o, w->flags);
        bytes_put_u32(&o, w->credits);
        bytes_put_u32(&o, w->slot_size);
        bytes_put_u32(&o, w->resume);
        bytes_put_mem(&o, w->nonce, WIRE_NONCE_SIZE);
        assert(!o.overflow && o.off == WIRE_WELCOME_SIZE);
}

int wire_decode_welcome(const void *buf, size_t len, struct wire_welcome *w)
{
        struct bytes_in in = BYTES_IN(buf, len);

        memset(w, 0, sizeof(*w));
        if (!buf || len < WIRE_WELCOME_SIZE)
                return -EBADMSG;
        w->magic = bytes_get_u32(&in);
        w->version = bytes_get_u16(&in);
        w->flags = bytes_get_u16(&in);
        w->credits = bytes_get_u32(&in);
        w->slot_size = bytes_get_u32(&in);
        w->resume = bytes_get_u32(&in);
        bytes_get_mem(&in, w->nonce, WIRE_NONCE_SIZE);
        if (w->magic != WIRE_MAGIC)
                return -EBADMSG;
        if (w->version != WIRE_VERSION)
                return -EPROTONOSUPPORT;
        return 0;
}

void wire_encode_reject(void *buf, const struct wire_reject *r)
{
        struct bytes_out o = BYTES_OUT(buf, WIRE_REJECT_SIZE);

        bytes_put_u32(&o, WIRE_MAGIC);
        bytes_put_u16(&o, WIRE_VERSION);
        bytes_put_u16(&o, r->status);
        bytes_put_u32(&o, r->reserved);
        assert(!o.overflow && o.off == WIRE_REJECT_SIZE);
}

int wire_decode_reject(const void *buf, size_t len, struct wire_reject *r)
{
        struct bytes_in in = BYTES_IN(buf, len);

        memset(r, 0, sizeof(*r));
        if (!buf || len < WIRE_REJECT_SIZE)
                return -EBADMSG;
        r->magic = bytes_get_u32(&in);
        r->version = bytes_get_u16(&in);
        r->status = bytes_get_u16(&in);
        r->reserved = bytes_get_u32(&in);
        if (r->magic != WIRE_MAGIC)
                return -EBADMSG;
        if (r->version != WIRE_VERSION)
                return -EPROTONOSUPPORT;
        return 0;
}

/* ---- control messages over the QP -------------------------------------- */

/* Length of a string field that must fit the wire limit; -EINVAL if not. */
static int wire_str_len(const char *s, size_t field_size, size_t min, size_t max)
{
        size_t n = strnlen(s, field_size);

        if (n < min || n > max)
                return -EINVAL;
        return (int)n;
}

/* A pack's fields only with WIRE_OFFER_PACK, and then its entries within
 * the job (in 64 bits: file + entries must not wrap). */
static bool wire_offer_pack_ok(const struct wire_offer *o)
{
        static const uint8_t zero[WIRE_PACK_HASH_SIZE];

        if (!(o->flags & WIRE_OFFER_PACK))
                return o->pack_entries == 0 && memcmp(o->pack_hash, zero, WIRE_PACK_HASH_SIZE) == 0;
        return o->pack_entries > 0 && (uint64_t)o->file + o->pack_entries <= o->job_files;
}

/* A digest only with WIRE_OFFER_DIGEST, which needs WIRE_OFFER_SYNC and
 * never goes with a pack. */
static bool wire_offer_digest_ok(const struct wire_offer *o)
{
        static const uint8_t zero[WIRE_DIGEST_SIZE];

        if (!(o->flags & WIRE_OFFER_DIGEST))
                return memcmp(o->digest, zero, WIRE_DIGEST_SIZE) == 0;
        return (o->flags & WIRE_OFFER_SYNC) && !(o->flags & WIRE_OFFER_PACK);
}

/* Deleting only in a tree that syncs (version 16), or (version 27) a
 * landing's offer that asks for one: a pull's (the receiver holds it to
 * a tree's pull, and refuses it on a file). */
static bool wire_offer_delete_ok(const struct wire_offer *o)
{
        if (!(o->flags & WIRE_OFFER_DELETE))
                return true;
        return (o->flags & (WIRE_OFFER_TREE | WIRE_OFFER_LAND)) &&
               (o->flags & (WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC));
}

/* A dry run's offer (version 17): never a pack's, a route's nor a relay's. */
static bool wire_offer_dry_ok(const struct wire_offer *o)
{
        if (!(o->flags & WIRE_OFFER_DRY_RUN))
                return true;
        return !(o->flags & (WIRE_OFFER_PACK | WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED));
}

/* A path over WIRE_NAME_MAX bytes comes in NAME parts (version 18): only a
 * later offer of a tree, never a pack's. */
static bool wire_offer_long_ok(const struct wire_offer *o)
{
        if (!(o->flags & WIRE_OFFER_LONG_NAME))
                return true;
        return (o->flags & WIRE_OFFER_TREE) && o->file > 0 && !(o->flags & WIRE_OFFER_PACK);
}

/* Landing as the user (version 19): the session's first offer, of a
 * regular file (version 21: along a chain too) or (version 20) a tree's
 * DEST, and nothing a landing does not do yet. */
static bool wire_offer_land_ok(const struct wire_offer *o)
{
        static const uint8_t zero[WIRE_SOURCE_SIZE];

        if (!(o->flags & WIRE_OFFER_LAND))
                return true;
        /* Version 21: a regular file's down a chain (a route, or relayed). */
        if ((o->flags & (WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED)) && (o->flags & WIRE_OFFER_TREE))
                return false;
        /* Version 23: a regular file's alone, straight to its node, may
         * name its source (it may resume there, as the user's). */
        /* Version 25: files (not a tree), straight to their node, may sync
         * with what is there; version 26: a tree too, deleting what the
         * source lacks or not; version 28: be a dry run; version 29: one
         * that says what deleting would remove. */
        return o->file == 0 &&
               (memcmp(o->source, zero, WIRE_SOURCE_SIZE) == 0 ||
                !(o->flags & (WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED))) &&
               !(o->flags & WIRE_OFFER_TREE) == !(o->flags & WIRE_OFFER_DIR) &&
               (!(o->flags & WIRE_OFFER_SYNC_FLAGS) || !(o->flags & (WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED))) &&
               !(o->flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK | WIRE_OFFER_LONG_NAME));
}

/* An XATTR part (version 27): within an entry's attributes, in range. */
static bool wire_parts_ok(const struct wire_land *p, uint16_t max)
{
        return p->total >= 1 && p->total <= max && p->len >= 1 && p->len <= WIRE_LAND_PART_MAX &&
               p->offset < p->total && p->len <= p->total - p->offset;
}

static bool wire_xattr_part_ok(const struct wire_land *p)
{
        return wire_parts_ok(p, WIRE_XATTRS_MAX);
}

/* The offer's name: up to WIRE_NAME_MAX bytes in it, or WIRE_OFFER_LONG_NAME's longer path. */
static int wire_offer_name_len(const struct wire_offer *o)
{
        if (o->flags & WIRE_OFFER_LONG_NAME)
                return wire_str_len(o->name, sizeof(o->name), WIRE_NAME_MAX + 1, WIRE_PATH_MAX);
        return wire_str_len(o->name, sizeof(o->name), 1, WIRE_NAME_MAX);
}

/* A RESULT's account of a route: within WIRE_ROUTE_MAX hops, the first
 * missing one named exactly when one is. */
/* A NEED's count, within range, says how many bits are set, and no bit
 * past its entries is. */
static bool wire_need_ok(const struct wire_need *nd)
{
        unsigned int set = 0;

        if (nd->entries == 0 || nd->entries > WIRE_NEED_ENTRIES_MAX || nd->needed > nd->entries)
                return false;
        for (unsigned int k = 0; k < WIRE_NEED_BITS(nd->entries); k++)
                set += (unsigned int)__builtin_popcount(nd->bits[k]);
        if (nd->entries % 8 && (nd->bits[nd->entries / 8] >> (nd->entries % 8)))
                return false;
        return set == nd->needed;
}

static bool wire_result_hops_ok(const struct wire_result *r)
{
        unsigned int missing = nodeset_count(&r->hop_missing);

        if (r->hops + missing > WIRE_ROUTE_MAX || !nodeset_below(&r->hop_missing, WIRE_ROUTE_MAX))
                return false;
        return r->hop_failed == (unsigned int)(nodeset_first(&r->hop_missing) + 1);
}

/* A part of a route (or of its progress): @n of the route's @total
 * from @first on, within what one message carries. */
static bool wire_part_ok(unsigned int total, unsigned int first, unsigned int n, unsigned int max)
{
        return total >= 1 && total <= WIRE_ROUTE_MAX && n >= 1 && n <= max && first + n <= total;
}

/* A route hash only with WIRE_OFFER_ROUTE. */
static bool wire_offer_route_ok(const struct wire_offer *o)
{
        static const uint8_t zero[WIRE_ROUTE_HASH_SIZE];

        return (o->flags & WIRE_OFFER_ROUTE) ||
               memcmp(o->route_hash, zero, WIRE_ROUTE_HASH_SIZE) == 0;
}

/* A relay's flag only on a session's first offer: of a job of one
 * regular file, or a tree's DEST (version 12), never with sync. Resuming
 * across senders is for a chain's file or tree, nothing else. */
static bool wire_offer_relayed_ok(const struct wire_offer *o)
{
        uint16_t tree = WIRE_OFFER_TREE | WIRE_OFFER_DIR;

        if (!(o->flags & WIRE_OFFER_RELAYED))
                return true;
        if (o->file != 0 || (o->flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK | WIRE_OFFER_SYNC_FLAGS)))
                return false;
        if ((o->flags & tree) == tree)
                return o->job_files >= 2;
        return o->job_files == 1 && !(o->flags & tree);
}

/* A sparse file's offer (version 16): a regular file's, alone (no pack,
 * no link, no directory) and not along a chain, its data bytes within its
 * size; data_bytes zero without the flag. */
static bool wire_offer_sparse_ok(const struct wire_offer *o)
{
        if (!(o->flags & WIRE_OFFER_SPARSE))
                return o->data_bytes == 0;
        if (o->flags & (WIRE_OFFER_DIR | WIRE_OFFER_PACK | WIRE_OFFER_LINK | WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED))
                return false;
        return o->data_bytes <= o->size;
}

/* WIRE_OFFER_RAILS: on a session's first offer only. */
static bool wire_offer_rails_ok(const struct wire_offer *o)
{
        return !(o->flags & WIRE_OFFER_RAILS) || o->file == 0;
}

/* An ACCEPT's rails (WIRE_ACCEPT_RAILS), as on the wire and in its MAC. */
static void wire_put_rails(struct bytes_out *out, const struct wire_accept *a)
{
        unsigned int n = MIN(a->nrails, WIRE_RAILS_MAX);

        bytes_put_u8(out, (uint8_t)n);
        for (unsigned int k = 0; k < n; k++) {
                bytes_put_mem(out, a->rails[k].addr, WIRE_ADDR_SIZE);
                bytes_put_u16(out, a->rails[k].port);
        }
}

/* An ACCEPT's flags: known ones, SKIP never with PUBLISHED nor resuming,
 * RESUMED alone, with resume[0] > 0 and every other resume[] zero. */
static bool wire_accept_flags_ok(const struct wire_accept *a)
{
        if ((a->flags & ~WIRE_ACCEPT_FLAGS) != 0)
                return false;
        if ((a->flags & WIRE_ACCEPT_RAILS) ? a->nrails == 0 || a->nrails > WIRE_RAILS_MAX : a->nrails != 0)
                return false;
        if (a->flags & WIRE_ACCEPT_RESUMED) {
                if ((a->flags & ~WIRE_ACCEPT_RAILS) != WIRE_ACCEPT_RESUMED || a->resume[0] == 0)
                        return false;
                for (unsigned int k = 1; k < WIRE_LANES_MAX; k++)
                        if (a->resume[k] != 0)
                                return false;
                return true;
        }
        if (!(a->flags & WIRE_ACCEPT_SKIP))
                return true;
        if (a->flags & WIRE_ACCEPT_PUBLISHED)
                return false;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (a->resume[k] != 0)
                        return false;
        return true;
}

/* Payload length for @m, or -EINVAL. Also validates the fields. */
static int wire_payload_len(const struct wire_msg *m)
{
        int n;

        switch (m->type) {
        case WIRE_OFFER:
                /* A zero chunk size has no meaning and would divide by zero later. */
                if (m->offer.chunk_size == 0)
                        return -EINVAL;
                if (m->offer.lanes == 0 || m->offer.lanes > WIRE_LANES_MAX)
                        return -EINVAL;
                if (m->offer.job_files == 0 || m->offer.file >= m->offer.job_files)
                        return -EINVAL;
                if (!wire_offer_pack_ok(&m->offer) || !wire_offer_digest_ok(&m->offer) ||
                    !wire_offer_route_ok(&m->offer) || !wire_offer_relayed_ok(&m->offer) ||
                    !wire_offer_sparse_ok(&m->offer) || !wire_offer_delete_ok(&m->offer) ||
                    !wire_offer_dry_ok(&m->offer) || !wire_offer_long_ok(&m->offer) ||
                    !wire_offer_land_ok(&m->offer) || !wire_offer_rails_ok(&m->offer))
                        return -EINVAL;
                n = wire_offer_name_len(&m->offer);
                if (n < 0)
                        return n;
                return WIRE_OFFER_FIXED + ((m->offer.flags & WIRE_OFFER_LONG_NAME) ? 0 : n);
        case WIRE_ACCEPT:
                if (m->accept.lanes == 0 || m->accept.lanes > WIRE_LANES_MAX ||
                    !wire_accept_flags_ok(&m->accept))
                        return -EINVAL;
                for (unsigned int k = m->accept.lanes; k < WIRE_LANES_MAX; k++)
                        if (m->accept.resume[k] != 0)
                                return -EINVAL;
                return WIRE_ACCEPT_LEN + (m->accept.flags & WIRE_ACCEPT_RAILS ?
                                          WIRE_ACCEPT_RAILS_LEN(m->accept.nrails) : 0);
        case WIRE_CREDIT:
                return 0;
        case WIRE_REFUSE:
                n = wire_str_len(m->refuse.text, sizeof(m->refuse.text), 0, WIRE_TEXT_MAX);
                return n < 0 ? n : WIRE_REFUSE_FIXED + n;
        case WIRE_END:
                return WIRE_END_LEN;
        case WIRE_WAIT:
                return WIRE_WAIT_LEN;
        case WIRE_ROUTE:
                if (!wire_part_ok(m->route.total, m->route.first, m->route.hops, WIRE_ROUTE_PART_MAX))
                        return -EINVAL;
                return WIRE_ROUTE_LEN(m->route.hops);
        case WIRE_PROGRESS:
                if (!wire_part_ok(m->progress.total, m->progress.first, m->progress.hops,
                                  WIRE_PROGRESS_PART_MAX))
                        return -EINVAL;
                return WIRE_PROGRESS_LEN(m->progress.hops);
        case WIRE_RESULT:
                if (!wire_result_hops_ok(&m->result))
                        return -EINVAL;
                n = wire_str_len(m->result.text, sizeof(m->result.text), 0, WIRE_TEXT_MAX);
                return n < 0 ? n : WIRE_RESULT_FIXED + n;
        case WIRE_GONE:
                if (m->gone.kind >= _WIRE_GONE_KIND_MAX)
                        return -EINVAL;
                n = wire_str_len(m->gone.name, sizeof(m->gone.name), 1, WIRE_NAME_MAX);
                return n < 0 ? n : WIRE_GONE_FIXED + n;
        case WIRE_NEED:
                if (!wire_need_ok(&m->need))
                        return -EINVAL;
                return (int)(WIRE_NEED_FIXED + WIRE_NEED_BITS(m->need.entries));
        case WIRE_NAME:
                if (m->name.total <= WIRE_NAME_MAX || m->name.total > WIRE_PATH_MAX || m->name.len == 0 ||
                    m->name.len > WIRE_NAME_PART_MAX || m->name.offset >= m->name.total ||
                    m->name.len > m->name.total - m->name.offset || memchr(m->name.bytes, '\0', m->name.len))
                        return -EINVAL;
                return WIRE_NAME_FIXED + m->name.len;
        case WIRE_LAND:
                if (m->land.total < WIRE_LAND_FIXED || m->land.total > WIRE_LAND_MAX || m->land.len == 0 ||
                    m->land.len > WIRE_LAND_PART_MAX || m->land.offset >= m->land.total ||
                    m->land.len > m->land.total - m->land.offset)
                        return -EINVAL;
                return WIRE_LAND_PART_FIXED + m->land.len;
        case WIRE_XATTR:
                if (!wire_xattr_part_ok(&m->xattr))
                        return -EINVAL;
                return WIRE_LAND_PART_FIXED + m->xattr.len;
        case WIRE_RULES:
                if (!wire_parts_ok(&m->rules, WIRE_RULES_MAX))
                        return -EINVAL;
                return WIRE_LAND_PART_FIXED + m->rules.len;
        default:
                return -EINVAL;
        }
}

int wire_encode(void *buf, size_t cap, const struct wire_msg *m)
{
        struct bytes_out o = BYTES_OUT(buf, cap);
        size_t n, total;
        int plen;

        plen = wire_payload_len(m);
        if (plen < 0)
                return plen;
        total = WIRE_HEADER_SIZE + (size_t)plen;
        if (total > WIRE_CTRL_MAX)
                return -EINVAL;
        if (!buf || cap < total)
                return -EMSGSIZE;

        bytes_put_u32(&o, WIRE_MAGIC);
        bytes_put_u16(&o, WIRE_VERSION);
        bytes_put_u16(&o, m->type);
        bytes_put_u32(&o, (uint32_t)plen);
        bytes_put_u32(&o, m->credits);

        switch (m->type) {
        case WIRE_OFFER:
                n = (m->offer.flags & WIRE_OFFER_LONG_NAME) ? 0 : strlen(m->offer.name);
                bytes_put_u64(&o, m->offer.transfer_id);
                bytes_put_u64(&o, m->offer.size);
                bytes_put_u32(&o, m->offer.chunk_size);
                bytes_put_u16(&o, m->offer.flags);
                bytes_put_u16(&o, (uint16_t)n);
                bytes_put_u16(&o, m->offer.lanes);
                bytes_put_u32(&o, m->offer.file);
                bytes_put_u32(&o, m->offer.job_files);
                bytes_put_u64(&o, m->offer.job_bytes);
                bytes_put_u32(&o, m->offer.mode);
                bytes_put_u64(&o, m->offer.mtime_ns);
                bytes_put_mem(&o, m->offer.token, WIRE_TOKEN_SIZE);
                bytes_put_mem(&o, m->offer.source, WIRE_SOURCE_SIZE);
                bytes_put_mem(&o, m->offer.nonce, WIRE_NONCE_SIZE);
                bytes_put_mem(&o, m->offer.mac, WIRE_MAC_SIZE);
                bytes_put_u32(&o, m->offer.pack_entries);
                bytes_put_mem(&o, m->offer.pack_hash, WIRE_PACK_HASH_SIZE);
                bytes_put_mem(&o, m->offer.digest, WIRE_DIGEST_SIZE);
                bytes_put_mem(&o, m->offer.route_hash, WIRE_ROUTE_HASH_SIZE);
                bytes_put_u64(&o, m->offer.data_bytes);
                bytes_put_mem(&o, m->offer.name, n);
                break;
        case WIRE_ACCEPT:
                bytes_put_u16(&o, m->accept.lanes);
                bytes_put_u16(&o, m->accept.flags);
                bytes_put_u32(&o, m->accept.file);
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        bytes_put_u32(&o, m->accept.resume[k]);
                bytes_put_mem(&o, m->accept.mac, WIRE_MAC_SIZE);
                if (m->accept.flags & WIRE_ACCEPT_RAILS)
                        wire_put_rails(&o, &m->accept);
                break;
        case WIRE_REFUSE:
                n = strlen(m->refuse.text);
                bytes_put_u16(&o, m->refuse.status);
                bytes_put_u16(&o, (uint16_t)n);
                bytes_put_mem(&o, m->refuse.text, n);
                break;
        case WIRE_END:
                bytes_put_u32(&o, m->end.file);
                bytes_put_u64(&o, m->end.bytes);
                bytes_put_mem(&o, m->end.digest, WIRE_DIGEST_SIZE);
                bytes_put_mem(&o, m->end.mac, WIRE_MAC_SIZE);
                break;
        case WIRE_WAIT:
                bytes_put_u32(&o, m->wait.file);
                break;
        case WIRE_ROUTE:
                bytes_put_u16(&o, m->route.total);
                bytes_put_u16(&o, m->route.first);
                bytes_put_u16(&o, m->route.hops);
                for (unsigned int k = 0; k < m->route.hops; k++) {
                        bytes_put_mem(&o, m->route.hop[k].addr, WIRE_ADDR_SIZE);
                        bytes_put_u16(&o, m->route.hop[k].port);
                }
                break;
        case WIRE_PROGRESS:
                bytes_put_u16(&o, m->progress.total);
                bytes_put_u16(&o, m->progress.first);
                bytes_put_u16(&o, m->progress.hops);
                for (unsigned int k = 0; k < m->progress.hops; k++)
                        bytes_put_u64(&o, m->progress.bytes[k]);
                break;
        case WIRE_RESULT:
                n = strlen(m->result.text);
                bytes_put_u16(&o, m->result.status);
                bytes_put_u16(&o, (uint16_t)n);
                bytes_put_u32(&o, m->result.file);
                bytes_put_u64(&o, m->result.bytes);
                bytes_put_u64(&o, m->result.usec);
                bytes_put_u16(&o, m->result.hops);
                bytes_put_u16(&o, m->result.hop_failed);
                bytes_put_u16(&o, m->result.hop_status);
                nodeset_put(&o, &m->result.hop_missing);
                bytes_put_mem(&o, m->result.mac, WIRE_MAC_SIZE);
                bytes_put_mem(&o, m->result.text, n);
                break;
        case WIRE_GONE:
                n = strlen(m->gone.name);
                bytes_put_u32(&o, m->gone.file);
                bytes_put_u32(&o, m->gone.seq);
                bytes_put_u16(&o, m->gone.kind);
                bytes_put_u16(&o, (uint16_t)n);
                bytes_put_mem(&o, m->gone.mac, WIRE_MAC_SIZE);
                bytes_put_mem(&o, m->gone.name, n);
                break;
        case WIRE_NEED:
                bytes_put_u32(&o, m->need.file);
                bytes_put_u16(&o, m->need.entries);
                bytes_put_u16(&o, m->need.needed);
                bytes_put_mem(&o, m->need.mac, WIRE_MAC_SIZE);
                bytes_put_mem(&o, m->need.bits, WIRE_NEED_BITS(m->need.entries));
                break;
        case WIRE_NAME:
                bytes_put_u16(&o, m->name.total);
                bytes_put_u16(&o, m->name.offset);
                bytes_put_u16(&o, m->name.len);
                bytes_put_mem(&o, m->name.bytes, m->name.len);
                break;
        case WIRE_LAND:
        case WIRE_XATTR:
        case WIRE_RULES:
                bytes_put_u16(&o, m->land.total);
                bytes_put_u16(&o, m->land.offset);
                bytes_put_u16(&o, m->land.len);
                bytes_put_mem(&o, m->land.bytes, m->land.len);
                break;
        default:
                break;
        }

        if (o.overflow || o.off != total)
                return -EMSGSIZE;
        return (int)total;
}

int wire_decode(const void *buf, size_t len, struct wire_msg *m)
{
        struct bytes_in in = BYTES_IN(buf, len);
        uint32_t magic, plen;
        uint16_t version, n;

        memset(m, 0, sizeof(*m));
        if (!buf || len < WIRE_HEADER_SIZE)
                return -EBADMSG;

        magic = bytes_get_u32(&in);
        version = bytes_get_u16(&in);
        m->type = bytes_get_u16(&in);
        plen = bytes_get_u32(&in);
        m->credits = bytes_get_u32(&in);
        if (magic != WIRE_MAGIC)
                return -EBADMSG;
        /* Another version's layouts are unknown: stop before reading further. */
        if (version != WIRE_VERSION)
                return -EPROTONOSUPPORT;
        if (plen != len - WIRE_HEADER_SIZE)
                return -EBADMSG;

        switch (m->type) {
        case WIRE_OFFER:
                if (plen < WIRE_OFFER_FIXED)
                        return -EBADMSG;
                m->offer.transfer_id = bytes_get_u64(&in);
                m->offer.size = bytes_get_u64(&in);
                m->offer.chunk_size = bytes_get_u32(&in);
                m->offer.flags = bytes_get_u16(&in);
                n = bytes_get_u16(&in);
                m->offer.lanes = bytes_get_u16(&in);
                m->offer.file = bytes_get_u32(&in);
                m->offer.job_files = bytes_get_u32(&in);
                m->offer.job_bytes = bytes_get_u64(&in);
                m->offer.mode = bytes_get_u32(&in);
                m->offer.mtime_ns = bytes_get_u64(&in);
                bytes_get_mem(&in, m->offer.token, WIRE_TOKEN_SIZE);
                bytes_get_mem(&in, m->offer.source, WIRE_SOURCE_SIZE);
                bytes_get_mem(&in, m->offer.nonce, WIRE_NONCE_SIZE);
                bytes_get_mem(&in, m->offer.mac, WIRE_MAC_SIZE);
                m->offer.pack_entries = bytes_get_u32(&in);
                bytes_get_mem(&in, m->offer.pack_hash, WIRE_PACK_HASH_SIZE);
                bytes_get_mem(&in, m->offer.digest, WIRE_DIGEST_SIZE);
                bytes_get_mem(&in, m->offer.route_hash, WIRE_ROUTE_HASH_SIZE);
                m->offer.data_bytes = bytes_get_u64(&in);
                /* With WIRE_OFFER_LONG_NAME no name: the NAME parts had it. */
                if ((m->offer.flags & WIRE_OFFER_LONG_NAME) ? n != 0 || !wire_offer_long_ok(&m->offer) :
                    n == 0 || n > WIRE_NAME_MAX)
                        return -EBADMSG;
                if (plen != WIRE_OFFER_FIXED + (uint32_t)n ||
                    m->offer.chunk_size == 0 || m->offer.lanes == 0 ||
                    m->offer.lanes > WIRE_LANES_MAX || m->offer.job_files == 0 ||
                    m->offer.file >= m->offer.job_files || !wire_offer_pack_ok(&m->offer) ||
                    !wire_offer_digest_ok(&m->offer) || !wire_offer_route_ok(&m->offer) ||
                    !wire_offer_relayed_ok(&m->offer) || !wire_offer_sparse_ok(&m->offer) ||
                    !wire_offer_delete_ok(&m->offer) || !wire_offer_dry_ok(&m->offer) ||
                    !wire_offer_land_ok(&m->offer) || !wire_offer_rails_ok(&m->offer))
                        return -EBADMSG;
                if (n > 0 && !bytes_get_str(&in, m->offer.name, sizeof(m->offer.name), n))
                        return -EBADMSG;
                break;
        case WIRE_ACCEPT:
                if (plen < WIRE_ACCEPT_LEN)
                        return -EBADMSG;
                m->accept.lanes = bytes_get_u16(&in);
                m->accept.flags = bytes_get_u16(&in);
                m->accept.file = bytes_get_u32(&in);
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                        m->accept.resume[k] = bytes_get_u32(&in);
                bytes_get_mem(&in, m->accept.mac, WIRE_MAC_SIZE);
                if (m->accept.flags & WIRE_ACCEPT_RAILS) {
                        if (plen < WIRE_ACCEPT_LEN + WIRE_ACCEPT_RAILS_LEN(0))
                                return -EBADMSG;
                        m->accept.nrails = bytes_get_u8(&in);
                        if (m->accept.nrails == 0 || m->accept.nrails > WIRE_RAILS_MAX ||
                            plen != WIRE_ACCEPT_LEN + WIRE_ACCEPT_RAILS_LEN(m->accept.nrails))
                                return -EBADMSG;
                        for (unsigned int k = 0; k < m->accept.nrails; k++) {
                                bytes_get_mem(&in, m->accept.rails[k].addr, WIRE_ADDR_SIZE);
                                m->accept.rails[k].port = bytes_get_u16(&in);
                                if (wire_hop_refused(&m->accept.rails[k]) ||
                                    wire_route_repeats(m->accept.rails, k))
                                        return -EBADMSG;
                        }
                } else if (plen != WIRE_ACCEPT_LEN) {
                        return -EBADMSG;
                }
                if (m->accept.lanes == 0 || m->accept.lanes > WIRE_LANES_MAX ||
                    !wire_accept_flags_ok(&m->accept))
                        return -EBADMSG;
                /* Lanes not granted resume nothing. */
                for (unsigned int k = m->accept.lanes; k < WIRE_LANES_MAX; k++)
                        if (m->accept.resume[k] != 0)
                                return -EBADMSG;
                break;
        case WIRE_CREDIT:
                if (plen != 0)
                        return -EBADMSG;
                break;
        case WIRE_REFUSE:
                if (plen < WIRE_REFUSE_FIXED)
                        return -EBADMSG;
                m->refuse.status = bytes_get_u16(&in);
                n = bytes_get_u16(&in);
                if (n > WIRE_TEXT_MAX || plen != WIRE_REFUSE_FIXED + (uint32_t)n)
                        return -EBADMSG;
                if (!bytes_get_str(&in, m->refuse.text, sizeof(m->refuse.text), n))
                        return -EBADMSG;
                break;
        case WIRE_END:
                if (plen != WIRE_END_LEN)
                        return -EBADMSG;
                m->end.file = bytes_get_u32(&in);
                m->end.bytes = bytes_get_u64(&in);
                bytes_get_mem(&in, m->end.digest, WIRE_DIGEST_SIZE);
                bytes_get_mem(&in, m->end.mac, WIRE_MAC_SIZE);
                break;
        case WIRE_WAIT:
                if (plen != WIRE_WAIT_LEN)
                        return -EBADMSG;
                m->wait.file = bytes_get_u32(&in);
                break;
        case WIRE_ROUTE:
                if (plen < WIRE_ROUTE_LEN(1))
                        return -EBADMSG;
                m->route.total = bytes_get_u16(&in);
                m->route.first = bytes_get_u16(&in);
                m->route.hops = bytes_get_u16(&in);
                if (!wire_part_ok(m->route.total, m->route.first, m->route.hops, WIRE_ROUTE_PART_MAX) ||
                    plen != WIRE_ROUTE_LEN(m->route.hops))
                        return -EBADMSG;
                for (unsigned int k = 0; k < m->route.hops; k++) {
                        bytes_get_mem(&in, m->route.hop[k].addr, WIRE_ADDR_SIZE);
                        m->route.hop[k].port = bytes_get_u16(&in);
                }
                break;
        case WIRE_PROGRESS:
                if (plen < WIRE_PROGRESS_LEN(1))
                        return -EBADMSG;
                m->progress.total = bytes_get_u16(&in);
                m->progress.first = bytes_get_u16(&in);
                m->progress.hops = bytes_get_u16(&in);
                if (!wire_part_ok(m->progress.total, m->progress.first, m->progress.hops,
                                  WIRE_PROGRESS_PART_MAX) ||
                    plen != WIRE_PROGRESS_LEN(m->progress.hops))
                        return -EBADMSG;
                for (unsigned int k = 0; k < m->progress.hops; k++)
                        m->progress.bytes[k] = bytes_get_u64(&in);
                break;
        case WIRE_RESULT:
                if (plen < WIRE_RESULT_FIXED)
                        return -EBADMSG;
                m->result.status = bytes_get_u16(&in);
                n = bytes_get_u16(&in);
                m->result.file = bytes_get_u32(&in);
                m->result.bytes = bytes_get_u64(&in);
                m->result.usec = bytes_get_u64(&in);
                m->result.hops = bytes_get_u16(&in);
                m->result.hop_failed = bytes_get_u16(&in);
                m->result.hop_status = bytes_get_u16(&in);
                nodeset_get(&in, &m->result.hop_missing);
                bytes_get_mem(&in, m->result.mac, WIRE_MAC_SIZE);
                if (!wire_result_hops_ok(&m->result))
                        return -EBADMSG;
                if (n > WIRE_TEXT_MAX || plen != WIRE_RESULT_FIXED + (uint32_t)n)
                        return -EBADMSG;
                if (!bytes_get_str(&in, m->result.text, sizeof(m->result.text), n))
                        return -EBADMSG;
                break;
        case WIRE_GONE:
                if (plen < WIRE_GONE_FIXED)
                        return -EBADMSG;
                m->gone.file = bytes_get_u32(&in);
                m->gone.seq = bytes_get_u32(&in);
                m->gone.kind = bytes_get_u16(&in);
                n = bytes_get_u16(&in);
                bytes_get_mem(&in, m->gone.mac, WIRE_MAC_SIZE);
                if (m->gone.kind >= _WIRE_GONE_KIND_MAX || n == 0 || n > WIRE_NAME_MAX ||
                    plen != WIRE_GONE_FIXED + (uint32_t)n)
                        return -EBADMSG;
                if (!bytes_get_str(&in, m->gone.name, sizeof(m->gone.name), n))
                        return -EBADMSG;
                break;
        case WIRE_NEED:
                if (plen < WIRE_NEED_FIXED)
                        return -EBADMSG;
                m->need.file = bytes_get_u32(&in);
                m->need.entries = bytes_get_u16(&in);
                m->need.needed = bytes_get_u16(&in);
                bytes_get_mem(&in, m->need.mac, WIRE_MAC_SIZE);
                if (m->need.entries == 0 || m->need.entries > WIRE_NEED_ENTRIES_MAX ||
                    plen != WIRE_NEED_FIXED + WIRE_NEED_BITS(m->need.entries))
                        return -EBADMSG;
                bytes_get_mem(&in, m->need.bits, WIRE_NEED_BITS(m->need.entries));
                if (!wire_need_ok(&m->need))
                        return -EBADMSG;
                break;
        case WIRE_NAME:
                if (plen < WIRE_NAME_FIXED)
                        return -EBADMSG;
                m->name.total = bytes_get_u16(&in);
                m->name.offset = bytes_get_u16(&in);
                m->name.len = bytes_get_u16(&in);
                if (m->name.total <= WIRE_NAME_MAX || m->name.total > WIRE_PATH_MAX || m->name.len == 0 ||
                    m->name.len > WIRE_NAME_PART_MAX || m->name.offset >= m->name.total ||
                    m->name.len > m->name.total - m->name.offset || plen != WIRE_NAME_FIXED + (uint32_t)m->name.len)
                        return -EBADMSG;
                bytes_get_mem(&in, m->name.bytes, m->name.len);
                if (memchr(m->name.bytes, '\0', m->name.len))
                        return -EBADMSG;
                break;
        case WIRE_LAND:
                if (plen < WIRE_LAND_PART_FIXED)
                        return -EBADMSG;
                m->land.total = bytes_get_u16(&in);
                m->land.offset = bytes_get_u16(&in);
                m->land.len = bytes_get_u16(&in);
                if (m->land.total < WIRE_LAND_FIXED || m->land.total > WIRE_LAND_MAX || m->land.len == 0 ||
                    m->land.len > WIRE_LAND_PART_MAX || m->land.offset >= m->land.total ||
                    m->land.len > m->land.total - m->land.offset ||
                    plen != WIRE_LAND_PART_FIXED + (uint32_t)m->land.len)
                        return -EBADMSG;
                bytes_get_mem(&in, m->land.bytes, m->land.len);
                break;
        case WIRE_XATTR:
                if (plen < WIRE_LAND_PART_FIXED)
                        return -EBADMSG;
                m->xattr.total = bytes_get_u16(&in);
                m->xattr.offset = bytes_get_u16(&in);
                m->xattr.len = bytes_get_u16(&in);
                if (!wire_xattr_part_ok(&m->xattr) || plen != WIRE_LAND_PART_FIXED + (uint32_t)m->xattr.len)
                        return -EBADMSG;
                bytes_get_mem(&in, m->xattr.bytes, m->xattr.len);
                break;
        case WIRE_RULES:
                if (plen < WIRE_LAND_PART_FIXED)
                        return -EBADMSG;
                m->rules.total = bytes_get_u16(&in);
                m->rules.offset = bytes_get_u16(&in);
                m->rules.len = bytes_get_u16(&in);
                if (!wire_parts_ok(&m->rules, WIRE_RULES_MAX) || plen != WIRE_LAND_PART_FIXED + (uint32_t)m->rules.len)
                        return -EBADMSG;
                bytes_get_mem(&in, m->rules.bytes, m->rules.len);
                break;
        default:
                return -EBADMSG;
        }

        if (in.underflow || in.off != len)
                return -EBADMSG;
        return 0;
}

/* ---- what the MACs cover ------------------------------------------------ */

/* The canonical 16 bytes of an IP address: IPv4 as ::ffff:a.b.c.d, so a
 * dual-stack listener's view of an IPv4 peer equals the peer's own. */
static int wire_addr16(uint8_t *out, const struct sockaddr *sa, uint16_t *port)
{
        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

                memset(out, 0, 10);
                out[10] = out[11] = 0xff;
                memcpy(out + 12, &in->sin_addr, 4);
                *port = ntohs(in->sin_port);
                return 0;
        }
        if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

                memcpy(out, &in6->sin6_addr, WIRE_ADDR_SIZE);
                *port = ntohs(in6->sin6_port);
                return 0;
        }
        return -EAFNOSUPPORT;
}

int wire_binding_set(struct wire_binding *b, const struct sockaddr *sender,
                     const struct sockaddr *receiver)
{
        struct wire_binding t = { .port = 0 };
        uint16_t ephemeral;

        memset(b, 0, sizeof(*b));
        if (!sender || !receiver || wire_addr16(t.sender, sender, &ephemeral) < 0 ||
            wire_addr16(t.receiver, receiver, &t.port) < 0)
                return -EAFNOSUPPORT;
        *b = t;
        return 0;
}

static void wire_put_binding(struct bytes_out *out, const struct wire_binding *b)
{
        bytes_put_mem(out, b->sender, WIRE_ADDR_SIZE);
        bytes_put_mem(out, b->receiver, WIRE_ADDR_SIZE);
        bytes_put_u16(out, b->port);
}

static int wire_mac_done(const struct bytes_out *out, size_t total)
{
        if (out->overflow || out->off != total)
                return -EMSGSIZE;
        return (int)total;
}

/* An OFFER's fields but the MAC, in wire order. */
static void wire_put_offer_fields(struct bytes_out *out, const struct wire_offer *o, size_t n)
{
        bytes_put_u64(out, o->transfer_id);
        bytes_put_u64(out, o->size);
        bytes_put_u32(out, o->chunk_size);
        bytes_put_u16(out, o->flags);
        bytes_put_u16(out, (uint16_t)n);
        bytes_put_u16(out, o->lanes);
        bytes_put_u32(out, o->file);
        bytes_put_u32(out, o->job_files);
        bytes_put_u64(out, o->job_bytes);
        bytes_put_u32(out, o->mode);
        bytes_put_u64(out, o->mtime_ns);
        bytes_put_mem(out, o->token, WIRE_TOKEN_SIZE);
        bytes_put_mem(out, o->source, WIRE_SOURCE_SIZE);
        bytes_put_mem(out, o->nonce, WIRE_NONCE_SIZE);
        bytes_put_u32(out, o->pack_entries);
        bytes_put_mem(out, o->pack_hash, WIRE_PACK_HASH_SIZE);
        bytes_put_mem(out, o->digest, WIRE_DIGEST_SIZE);
        bytes_put_mem(out, o->route_hash, WIRE_ROUTE_HASH_SIZE);
        bytes_put_u64(out, o->data_bytes);
        bytes_put_mem(out, o->name, n);
        /* Not on the wire: what the LAND parts before it carried, whole;
         * the XATTR parts' (version 27). */
        if (o->flags & WIRE_OFFER_LAND)
                bytes_put_mem(out, o->land_hash, WIRE_LAND_HASH_SIZE);
        if (o->xattrs_len) {
                bytes_put_u16(out, o->xattrs_len);
                bytes_put_mem(out, o->xattrs_hash, WIRE_XATTRS_HASH_SIZE);
        }
        /* The RULES parts' (version 30). */
        if (o->rules_len) {
                bytes_put_u16(out, o->rules_len);
                bytes_put_mem(out, o->rules_hash, WIRE_RULES_HASH_SIZE);
        }
}

/* What an offer's MAC input holds beyond its fields on the wire. */
static size_t wire_offer_mac_extra(const struct wire_offer *o)
{
        return ((o->flags & WIRE_OFFER_LAND) ? WIRE_LAND_HASH_SIZE : 0) +
               (o->xattrs_len ? 2 + WIRE_XATTRS_HASH_SIZE : 0) + (o->rules_len ? 2 + WIRE_RULES_HASH_SIZE : 0);
}

int wire_offer_mac_input(void *buf, size_t cap, const uint8_t rnonce[WIRE_NONCE_SIZE],
                         const struct wire_binding *b, const struct wire_offer *o)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total;
        int n;

        n = wire_offer_name_len(o);
        if (n < 0)
                return n;
        total = WIRE_LABEL_LEN(WIRE_LABEL_OFFER) + WIRE_NONCE_SIZE + WIRE_BINDING_LEN +
                (WIRE_OFFER_FIXED - WIRE_MAC_SIZE) + (size_t)n + wire_offer_mac_extra(o);
        if (!buf || cap < total)
                return -EMSGSIZE;

        /* Same field order and encoding as the OFFER itself, minus the MAC. */
        bytes_put_mem(&out, WIRE_LABEL_OFFER, WIRE_LABEL_LEN(WIRE_LABEL_OFFER));
        bytes_put_mem(&out, rnonce, WIRE_NONCE_SIZE);
        wire_put_binding(&out, b);
        wire_put_offer_fields(&out, o, (size_t)n);
        return wire_mac_done(&out, total);
}

int wire_next_offer_mac_input(void *buf, size_t cap, const struct wire_offer *o)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total;
        int n;

        n = wire_offer_name_len(o);
        if (n < 0)
                return n;
        total = WIRE_LABEL_LEN(WIRE_LABEL_NEXT) + (WIRE_OFFER_FIXED - WIRE_MAC_SIZE) + (size_t)n +
                wire_offer_mac_extra(o);
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_NEXT, WIRE_LABEL_LEN(WIRE_LABEL_NEXT));
        wire_put_offer_fields(&out, o, (size_t)n);
        return wire_mac_done(&out, total);
}

int wire_session_info(void *buf, size_t cap, const uint8_t offer_mac[WIRE_MAC_SIZE])
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total = WIRE_LABEL_LEN(WIRE_LABEL_SESSION) + WIRE_MAC_SIZE;

        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_SESSION, WIRE_LABEL_LEN(WIRE_LABEL_SESSION));
        bytes_put_mem(&out, offer_mac, WIRE_MAC_SIZE);
        return wire_mac_done(&out, total);
}

int wire_accept_mac_input(void *buf, size_t cap, const struct wire_accept *a)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total = WIRE_LABEL_LEN(WIRE_LABEL_ACCEPT) + WIRE_ACCEPT_LEN - WIRE_MAC_SIZE +
                       (a->flags & WIRE_ACCEPT_RAILS ? WIRE_ACCEPT_RAILS_LEN(MIN(a->nrails, WIRE_RAILS_MAX)) : 0);

        if (!buf || cap < total)
                return -EMSGSIZE;
        /* Where each lane resumes is the receiver's word: the MAC covers it. */
        bytes_put_mem(&out, WIRE_LABEL_ACCEPT, WIRE_LABEL_LEN(WIRE_LABEL_ACCEPT));
        bytes_put_u16(&out, a->lanes);
        bytes_put_u16(&out, a->flags);
        bytes_put_u32(&out, a->file);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                bytes_put_u32(&out, a->resume[k]);
        /* So are the rails the sender will connect to. */
        if (a->flags & WIRE_ACCEPT_RAILS)
                wire_put_rails(&out, a);
        return wire_mac_done(&out, total);
}

int wire_lane_mac_input(void *buf, size_t cap, const struct wire_binding *b,
                        const struct wire_hello *h)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total = WIRE_LABEL_LEN(WIRE_LABEL_LANE) + WIRE_BINDING_LEN + 2 + 2 + WIRE_TOKEN_SIZE;

        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_LANE, WIRE_LABEL_LEN(WIRE_LABEL_LANE));
        wire_put_binding(&out, b);
        bytes_put_u16(&out, h->flags);
        bytes_put_u16(&out, h->lane);
        bytes_put_mem(&out, h->token, WIRE_TOKEN_SIZE);
        return wire_mac_done(&out, total);
}

int wire_end_mac_input(void *buf, size_t cap, unsigned int lane, const struct wire_end *e)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total = WIRE_LABEL_LEN(WIRE_LABEL_END) + 2 + 4 + 8 + WIRE_DIGEST_SIZE;

        if (lane >= WIRE_LANES_MAX)
                return -EINVAL;
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_END, WIRE_LABEL_LEN(WIRE_LABEL_END));
        bytes_put_u16(&out, (uint16_t)lane);
        bytes_put_u32(&out, e->file);
        bytes_put_u64(&out, e->bytes);
        bytes_put_mem(&out, e->digest, WIRE_DIGEST_SIZE);
        return wire_mac_done(&out, total);
}

int wire_result_mac_input(void *buf, size_t cap, unsigned int lane, const struct wire_result *r)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total;
        int n;

        if (lane >= WIRE_LANES_MAX)
                return -EINVAL;
        n = wire_str_len(r->text, sizeof(r->text), 0, WIRE_TEXT_MAX);
        if (n < 0)
                return n;
        total = WIRE_LABEL_LEN(WIRE_LABEL_RESULT) + 2 + (WIRE_RESULT_FIXED - WIRE_MAC_SIZE) + (size_t)n;
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_RESULT, WIRE_LABEL_LEN(WIRE_LABEL_RESULT));
        bytes_put_u16(&out, (uint16_t)lane);
        bytes_put_u16(&out, r->status);
        bytes_put_u16(&out, (uint16_t)n);
        bytes_put_u32(&out, r->file);
        bytes_put_u64(&out, r->bytes);
        bytes_put_u64(&out, r->usec);
        bytes_put_u16(&out, r->hops);
        bytes_put_u16(&out, r->hop_failed);
        bytes_put_u16(&out, r->hop_status);
        nodeset_put(&out, &r->hop_missing);
        bytes_put_mem(&out, r->text, (size_t)n);
        return wire_mac_done(&out, total);
}

int wire_gone_mac_input(void *buf, size_t cap, const struct wire_gone *g)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total;
        int n;

        n = wire_str_len(g->name, sizeof(g->name), 1, WIRE_NAME_MAX);
        if (n < 0)
                return n;
        total = WIRE_LABEL_LEN(WIRE_LABEL_GONE) + (WIRE_GONE_FIXED - WIRE_MAC_SIZE) + (size_t)n;
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_GONE, WIRE_LABEL_LEN(WIRE_LABEL_GONE));
        bytes_put_u32(&out, g->file);
        bytes_put_u32(&out, g->seq);
        bytes_put_u16(&out, g->kind);
        bytes_put_u16(&out, (uint16_t)n);
        bytes_put_mem(&out, g->name, (size_t)n);
        return wire_mac_done(&out, total);
}

int wire_need_mac_input(void *buf, size_t cap, const struct wire_need *nd)
{
        struct bytes_out out = BYTES_OUT(buf, cap);
        size_t total;

        if (!wire_need_ok(nd))
                return -EINVAL;
        total = WIRE_LABEL_LEN(WIRE_LABEL_NEED) + (WIRE_NEED_FIXED - WIRE_MAC_SIZE) + WIRE_NEED_BITS(nd->entries);
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_mem(&out, WIRE_LABEL_NEED, WIRE_LABEL_LEN(WIRE_LABEL_NEED));
        bytes_put_u32(&out, nd->file);
        bytes_put_u16(&out, nd->entries);
        bytes_put_u16(&out, nd->needed);
        bytes_put_mem(&out, nd->bits, WIRE_NEED_BITS(nd->entries));
        return wire_mac_done(&out, total);
}

int wire_hop_set(struct wire_hop *h, const struct sockaddr *sa)
{
        memset(h, 0, sizeof(*h));
        return sa ? wire_addr16(h->addr, sa, &h->port) : -EAFNOSUPPORT;
}

static bool wire_hop_v4(const struct wire_hop *h)
{
        static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

        return memcmp(h->addr, mapped, sizeof(mapped)) == 0;
}

socklen_t wire_hop_sockaddr(const struct wire_hop *h, struct sockaddr_storage *ss)
{
        memset(ss, 0, sizeof(*ss));
        if (wire_hop_v4(h)) {
                struct sockaddr_in *in = (struct sockaddr_in *)ss;

                in->sin_family = AF_INET;
                in->sin_port = htons(h->port);
                memcpy(&in->sin_addr, h->addr + 12, 4);
                return sizeof(*in);
        }
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(h->port);
        memcpy(&in6->sin6_addr, h->addr, WIRE_ADDR_SIZE);
        return sizeof(*in6);
}

const char *wire_hop_refused(const struct wire_hop *h)
{
        static const uint8_t v4_loop = 127, zero[WIRE_ADDR_SIZE] = { 0 };
        static const uint8_t v6_loop[WIRE_ADDR_SIZE] = { [15] = 1 };

        if (h->port == 0)
                return "port 0";
        if (wire_hop_v4(h)) {
                if (h->addr[12] == v4_loop)
                        return "a loopback address";
                if (memcmp(h->addr + 12, zero, 4) == 0)
                        return "an unspecified address";
                return NULL;
        }
        if (memcmp(h->addr, v6_loop, WIRE_ADDR_SIZE) == 0)
                return "a loopback address";
        if (memcmp(h->addr, zero, WIRE_ADDR_SIZE) == 0)
                return "an unspecified address";
        return NULL;
}

bool wire_route_repeats(const struct wire_hop *hops, unsigned int i)
{
        for (unsigned int k = 0; k < i; k++)
                if (hops[k].port == hops[i].port && memcmp(hops[k].addr, hops[i].addr, WIRE_ADDR_SIZE) == 0)
                        return true;
        return false;
}

void wire_hop_str(const struct wire_hop *h, char *buf, size_t len)
{
        char a[INET6_ADDRSTRLEN];

        if (wire_hop_v4(h)) {
                inet_ntop(AF_INET, h->addr + 12, a, sizeof(a));
                snprintf(buf, len, "%s:%u", a, h->port);
        } else {
                inet_ntop(AF_INET6, h->addr, a, sizeof(a));
                snprintf(buf, len, "[%s]:%u", a, h->port);
        }
}

void wire_route_hash(const struct wire_hop *hop, unsigned int n, uint8_t out[WIRE_ROUTE_HASH_SIZE])
{
        crypto_hash_sha256_state st;
        uint8_t buf[WIRE_HOP_LEN];
        struct bytes_out o;

        n = MIN(n, WIRE_ROUTE_MAX);
        o = BYTES_OUT(buf, sizeof(buf));
        bytes_put_u16(&o, (uint16_t)n);
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, buf, o.off);
        for (unsigned int k = 0; k < n; k++) {
                o = BYTES_OUT(buf, sizeof(buf));
                bytes_put_mem(&o, hop[k].addr, WIRE_ADDR_SIZE);
                bytes_put_u16(&o, hop[k].port);
                crypto_hash_sha256_update(&st, buf, o.off);
        }
        crypto_hash_sha256_final(&st, out);
}

/* ---- landing as the user ---------------------------------------------- */

static bool wire_land_cred_ok(const char *s, size_t n)
{
        if (n == 0 || n > WIRE_LAND_CRED_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x21 || s[i] > 0x7e)
                        return false;
        return true;
}

static bool wire_land_path_ok(const char *path, size_t len)
{
        return len >= 2 && len <= WIRE_PATH_MAX && path[0] == '/' && !memchr(path, '\0', len);
}

bool wire_land_xattrs_ok(uint8_t flags, const uint8_t *buf, size_t len)
{
        unsigned int which, allowed = ((flags & WIRE_LAND_XATTRS) ? XATTRS_USER : 0) |
                                      ((flags & WIRE_LAND_ACLS) ? XATTRS_ACL : 0);

        if (len == 0)
                return true;
        return allowed && len <= WIRE_XATTRS_MAX && xattrs_check(buf, len, &which) == 0 && (which & ~allowed) == 0;
}

static bool wire_land_ok(const struct wire_landing *l, size_t cred_len, size_t path_len)
{
        return (l->direction == WIRE_LAND_PUSH || l->direction == WIRE_LAND_PULL) &&
               /* A push's: where and whether to replace; a pull's: a tree or not (version 25). */
               (l->direction == WIRE_LAND_PUSH ? (l->flags & ~_WIRE_LAND_PUSH_FLAGS) == 0
                                               : (l->flags & ~_WIRE_LAND_PULL_FLAGS) == 0) &&
               wire_land_xattrs_ok(l->flags, l->xattrs, l->xattrs_len) &&
               l->naddrs >= 1 && l->naddrs <= WIRE_LAND_ADDRS_MAX && wire_land_cred_ok(l->cred, cred_len) &&
               wire_land_path_ok(l->path, path_len);
}

/* A push with attributes carries the first entry's (maybe none). */
static bool wire_land_has_xattrs(const struct wire_landing *l)
{
        return l->direction == WIRE_LAND_PUSH && (l->flags & (WIRE_LAND_XATTRS | WIRE_LAND_ACLS));
}

/* A pull's way back; a push has none. */
static bool wire_land_back_ok(const struct wire_landing *l, size_t cred_len, size_t path_len)
{
        if (l->direction == WIRE_LAND_PUSH)
                return l->back_port == 0 && l->back_flags == 0 && l->back_bwlimit == 0 && cred_len == 0 &&
                       path_len == 0;
        return l->back_port != 0 && (l->back_flags & ~_WIRE_LAND_FLAGS) == 0 && !(l->flags & ~_WIRE_LAND_PULL_FLAGS) &&
               wire_land_cred_ok(l->back_cred, cred_len) && wire_land_path_ok(l->back_path, path_len);
}

int wire_land_encode(void *buf, size_t cap, const struct wire_landing *l)
{
        struct bytes_out o = BYTES_OUT(buf, cap);
        size_t cred_len = strnlen(l->cred, sizeof(l->cred)), path_len = strnlen(l->path, sizeof(l->path));
        size_t bcred_len = strnlen(l->back_cred, sizeof(l->back_cred));
        size_t bpath_len = strnlen(l->back_path, sizeof(l->back_path));
        bool pull = l->direction == WIRE_LAND_PULL;
        size_t total;

        if (cred_len == sizeof(l->cred) || path_len == sizeof(l->path) || bcred_len == sizeof(l->back_cred) ||
            bpath_len == sizeof(l->back_path) || !wire_land_ok(l, cred_len, path_len) ||
            !wire_land_back_ok(l, bcred_len, bpath_len))
                return -EINVAL;
        total = WIRE_LAND_FIXED + (size_t)l->naddrs * WIRE_ADDR_SIZE + cred_len + path_len +
                (wire_land_has_xattrs(l) ? 2u + l->xattrs_len : 0) +
                (pull ? WIRE_LAND_BACK_FIXED + bcred_len + bpath_len : 0);
        if (!buf || cap < total)
                return -EMSGSIZE;
        bytes_put_u8(&o, l->direction);
        bytes_put_u8(&o, l->flags);
        bytes_put_u16(&o, l->naddrs);
        bytes_put_mem(&o, l->token, WIRE_TOKEN_SIZE);
        bytes_put_u16(&o, (uint16_t)cred_len);
        bytes_put_u16(&o, (uint16_t)path_len);
        bytes_put_mem(&o, l->addrs, (size_t)l->naddrs * WIRE_ADDR_SIZE);
        bytes_put_mem(&o, l->cred, cred_len);
        bytes_put_mem(&o, l->path, path_len);
        if (wire_land_has_xattrs(l)) {
                bytes_put_u16(&o, l->xattrs_len);
                bytes_put_mem(&o, l->xattrs, l->xattrs_len);
        }
        if (pull) {
                bytes_put_u16(&o, l->back_port);
                bytes_put_u8(&o, l->back_flags);
                bytes_put_u16(&o, (uint16_t)bcred_len);
                bytes_put_u16(&o, (uint16_t)bpath_len);
                bytes_put_u64(&o, l->back_bwlimit);
                bytes_put_mem(&o, l->back_addr, WIRE_ADDR_SIZE);
                bytes_put_mem(&o, l->back_cred, bcred_len);
                bytes_put_mem(&o, l->back_path, bpath_len);
        }
        return o.overflow || o.off != total ? -EMSGSIZE : (int)total;
}

int wire_land_decode(const void *buf, size_t len, struct wire_landing *l)
{
        struct bytes_in in = BYTES_IN(buf, len);
        uint16_t cred_len, path_len, bcred_len = 0, bpath_len = 0;
        size_t head;

        memset(l, 0, sizeof(*l));
        if (!buf || len < WIRE_LAND_FIXED || len > WIRE_LAND_MAX)
                return -EBADMSG;
        l->direction = bytes_get_u8(&in);
        l->flags = bytes_get_u8(&in);
        l->naddrs = bytes_get_u16(&in);
        bytes_get_mem(&in, l->token, WIRE_TOKEN_SIZE);
        cred_len = bytes_get_u16(&in);
        path_len = bytes_get_u16(&in);
        if (l->naddrs < 1 || l->naddrs > WIRE_LAND_ADDRS_MAX || cred_len > WIRE_LAND_CRED_MAX ||
            path_len > WIRE_PATH_MAX)
                return -EBADMSG;
        head = WIRE_LAND_FIXED + (size_t)l->naddrs * WIRE_ADDR_SIZE + cred_len + path_len;
        if (l->direction == WIRE_LAND_PULL ? len < head + WIRE_LAND_BACK_FIXED :
            wire_land_has_xattrs(l) ? len < head + 2 : len != head)
                return -EBADMSG;
        bytes_get_mem(&in, l->addrs, (size_t)l->naddrs * WIRE_ADDR_SIZE);
        bytes_get_mem(&in, l->cred, cred_len);
        bytes_get_mem(&in, l->path, path_len);
        if (wire_land_has_xattrs(l)) {
                l->xattrs_len = bytes_get_u16(&in);
                if (l->xattrs_len > WIRE_XATTRS_MAX || len != head + 2u + l->xattrs_len)
                        return -EBADMSG;
                bytes_get_mem(&in, l->xattrs, l->xattrs_len);
        }
        if (l->direction == WIRE_LAND_PULL) {
                l->back_port = bytes_get_u16(&in);
                l->back_flags = bytes_get_u8(&in);
                bcred_len = bytes_get_u16(&in);
                bpath_len = bytes_get_u16(&in);
                l->back_bwlimit = bytes_get_u64(&in);
                if (bcred_len > WIRE_LAND_CRED_MAX || bpath_len > WIRE_PATH_MAX ||
                    len != head + WIRE_LAND_BACK_FIXED + bcred_len + bpath_len)
                        return -EBADMSG;
                bytes_get_mem(&in, l->back_addr, WIRE_ADDR_SIZE);
                bytes_get_mem(&in, l->back_cred, bcred_len);
                bytes_get_mem(&in, l->back_path, bpath_len);
        }
        if (in.underflow || in.off != len || !wire_land_ok(l, cred_len, path_len) ||
            !wire_land_back_ok(l, bcred_len, bpath_len))
                return -EBADMSG;
        return 0;
}

void wire_land_hash(const void *buf, size_t len, uint8_t out[WIRE_LAND_HASH_SIZE])
{
        crypto_hash_sha256(out, buf, len);
}

uint64_t wire_blocks(uint64_t size)
{
        return size / WIRE_BLOCK_SIZE + (size % WIRE_BLOCK_SIZE != 0);
}

void wire_lane_range(uint64_t nchunks, uint32_t chunk, unsigned int lanes, unsigned int k,
                     uint64_t *first, uint64_t *end)
{
        uint64_t per = chunk < WIRE_BLOCK_SIZE ? WIRE_BLOCK_SIZE / chunk : 1;
        uint64_t blocks = nchunks / per + (nchunks % per != 0);

        /* blocks <= nchunks < 2^32 and lanes <= 2^16: no overflow. */
        *first = MIN(blocks * k / lanes * per, nchunks);
        *end = MIN(blocks * (k + 1) / lanes * per, nchunks);
}

uint64_t wire_run_bytes(uint64_t size, uint32_t chunk, uint64_t first, uint64_t end)
{
        /* first, end <= 2^32 and chunk < 2^32: no overflow. */
        return MIN(end * chunk, size) - MIN(first * chunk, size);
}

int wire_verdict_parse(const char *text, char changes[6])
{
        static const char *const words[_WIRE_VERDICT_MAX] = {
                [WIRE_VERDICT_CREATE] = "would create",
                [WIRE_VERDICT_REPLACE] = "would replace ",
                [WIRE_VERDICT_KEPT] = "skipped",
                [WIRE_VERDICT_EXISTS] = "exists",
        };
        static const char letters[] = "cstax";

        memcpy(changes, ".....", 6);
        for (int v = 0; v < _WIRE_VERDICT_MAX; v++) {
                size_t n = strlen(words[v]);
                const char *end = text + n;

                if (strncmp(text, words[v], n) != 0)
                        continue;
                if (v == WIRE_VERDICT_REPLACE) {
                        for (int k = 0; k < 5; k++) {
                                if (end[k] != '.' && end[k] != letters[k])
                                        return -EBADMSG;
                                changes[k] = end[k];
                        }
                        end += 5;
                }
                if (*end != '\0' && strncmp(end, "; ", 2) != 0)
                        return -EBADMSG;
                return v;
        }
        return -EBADMSG;
}
