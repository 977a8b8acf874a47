#include "ctl.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "bytes.h"
#include "landmsg.h"
#include "macro.h"
#include "scm.h"
#include "xattrs.h"

/*
 * Payload layouts, after the 12-byte header
 * (magic u32, version u16, type u16, length u32):
 *
 *   SUBMIT     port u16, flags u16, bwlimit u64, host_len u16, name_len u16,
 *              retries u16, files u32, job_bytes u64, route_len u16,
 *              mode u32, mtime_ns u64, land_path_len u16, land_cred_len u16,
 *              land_token[16], back_host_len u16, back_path_len u16,
 *              back_cred_len u16, back_port u16, host, name, route, land_path, land_cred,
 *              back_host, back_path, back_cred
 *   FILE       id u64, size u64, flags u16, name_len u16, mode u32, mtime_ns u64, name
 *   SUBMITTED, STATUS, WATCH, CANCEL   id u64
 *   LIST, LIST_END, OK                 (empty)
 *   JOB        id u64, state u8, land u8, status u16, bytes_done u64,
 *              bytes_total u64, usec u64, rate u64, bwlimit u64,
 *              attempt u16, attempts u16, retry_usec u64, created_us u64,
 *              started_us u64, ended_us u64, files_done u32,
 *              files_total u32, files_skipped u32, deleted u32, nodes u16, nodes_ok u16,
 *              node_failed u16, node_status u16, nodes_missing 8 x u64
 *              (nodeset.h: bit k of word k / 64 for node k + 1),
 *              peer_len u16, name_len u16, text_len u16, node_peer_len u16,
 *              node_text_len u16, route_len u16, rails_len u16,
 *              land_path_len u16, back_path_len u16, nodes times
 *              node_bytes u64 (none for no chain), peer, name, text,
 *              node_peer, node_text, route, rails, land_path, back_path
 *   ERROR      code i32, text_len u16, text
 *   STATS      (empty)
 *   STATS_INFO uptime_usec u64, then for recv and send: bytes u64,
 *              files u64, rate u64, active u32; then queued u32,
 *              ring_held u32, ring_slots u32, pool_held u32,
 *              pool_slots u32, nreasons u16, and nreasons times
 *              { dir u8, count u64, name_len u8, name }
 *   ITEMS      id u64
 *   ITEM       id u64, seq u32, verdict u8, kind u8, changes[5], size u64,
 *              name_len u16, name
 *   SETTINGS   (empty)
 *   SETTINGS_INFO  peer_names_len u16, listen_len u16, peer_names, listen
 *
 * Strings carry no NUL; the payload length must equal the fixed part plus
 * the string lengths exactly. Empty strings are allowed here: whether an
 * empty host or name is acceptable is the daemon's call, with a clear ERROR.
 */
#define CTL_SUBMIT_FIXED        (2 + 2 + 8 + 2 + 2 + 2 + 4 + 8 + 2 + 4 + 8 + 2 + 2 + CTL_LAND_TOKEN_SIZE + 2 + 2 + 2 + 2)
#define CTL_FILE_FIXED          (8 + 8 + 2 + 2 + 4 + 8)
#define CTL_ID_LEN              8
#define CTL_JOB_FIXED           (8 + 1 + 1 + 2 + 8 + 8 + 8 + 8 + 8 + 2 + 2 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 4 + \
                                 2 + 2 + 2 + 2 + NODESET_WIRE_SIZE + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2 + 2)
#define CTL_ERROR_FIXED         (4 + 2)
#define CTL_PEER_MAX            (sizeof(((struct ctl_job *)0)->peer) - 1)
#define CTL_STATS_DIR_LEN       (8 + 8 + 8 + 4)
#define CTL_STATS_FIXED         (8 + _CTL_DIR_MAX * CTL_STATS_DIR_LEN + 5 * 4 + 2)
#define CTL_REASON_FIXED        (1 + 8 + 1)
#define CTL_RAIL_FIXED          (1 + 8 * _CTL_DIR_MAX + 1)
#define CTL_SETTINGS_FIXED      4
#define CTL_ITEM_FIXED          (8 + 4 + 1 + 1 + 5 + 8 + 2)

static_assert(CTL_HEADER_SIZE == 4 + 2 + 2 + 4, "ctl header layout");
static_assert(CTL_HEADER_SIZE + CTL_JOB_FIXED + 8 * CTL_NODES_MAX + 2 * CTL_PEER_MAX + CTL_NAME_MAX +
              2 * CTL_TEXT_MAX + CTL_ROUTE_MAX + CTL_RAILS_STR_MAX + 2 * CTL_LAND_PATH_MAX <= CTL_MSG_MAX,
              "job fits");
static_assert(CTL_NODES_MAX == NODESET_MAX, "nodes_missing has a bit per node");
static_assert(CTL_NODES_MAX <= UINT16_MAX, "u16 nodes");
static_assert(CTL_ROUTE_MAX <= UINT16_MAX, "u16 route length");
static_assert(CTL_HEADER_SIZE + CTL_SUBMIT_FIXED + CTL_HOST_MAX + CTL_NAME_MAX + CTL_ROUTE_MAX +
              2 * (CTL_LAND_PATH_MAX + CTL_LAND_CRED_MAX) + CTL_HOST_MAX <= CTL_MSG_MAX, "submit fits");
static_assert(CTL_LAND_PATH_MAX == LANDMSG_PATH_MAX && CTL_LAND_CRED_MAX == LANDMSG_CRED_MAX &&
              CTL_LAND_TOKEN_SIZE == LANDMSG_TOKEN_SIZE, "what a SUBMIT carries, a SESSION carries");
static_assert(CTL_HOP_MAX == 1 + (INET6_ADDRSTRLEN - 1) + 2 + 5, "a hop's text at its longest");
static_assert(CTL_HEADER_SIZE + CTL_SUBMIT_FIXED + CTL_HOST_MAX + CTL_NAME_MAX + CTL_ROUTE_MAX +
              2 * (CTL_LAND_PATH_MAX + CTL_LAND_CRED_MAX) + CTL_HOST_MAX + 2 + CTL_XATTRS_MAX <= CTL_MSG_MAX,
              "a submit with attributes fits");
static_assert(CTL_HEADER_SIZE + CTL_FILE_FIXED + CTL_PATH_MAX + 2 + CTL_XATTRS_MAX <= CTL_BATCH_BYTES,
              "a file with attributes fits a batch");
static_assert(CTL_XATTRS_MAX == XATTRS_BYTES_MAX && CTL_XATTRS_MAX <= UINT16_MAX, "u16 attributes");
static_assert(CTL_HEADER_SIZE + CTL_SUBMIT_FIXED + CTL_HOST_MAX + CTL_NAME_MAX + CTL_ROUTE_MAX +
              2 * (CTL_LAND_PATH_MAX + CTL_LAND_CRED_MAX) + CTL_HOST_MAX + 2 + CTL_XATTRS_MAX + 2 + CTL_RULES_MAX <=
              CTL_MSG_MAX, "a submit with attributes and rules fits");

static_assert(CTL_HEADER_SIZE + CTL_STATS_FIXED +
              CTL_STATS_REASONS_MAX * (CTL_REASON_FIXED + CTL_REASON_MAX) +
              1 + CTL_RAILS_MAX * (CTL_RAIL_FIXED + CTL_RAIL_NAME_MAX) <= CTL_MSG_MAX,
              "stats fit");
static_assert(CTL_RAIL_NAME_MAX <= UINT8_MAX, "u8 rail name length");
static_assert(CTL_REASON_MAX <= UINT8_MAX, "u8 reason length");
static_assert(CTL_HEADER_SIZE + CTL_SETTINGS_FIXED + CTL_PEER_NAMES_MAX + CTL_HOST_MAX <= CTL_MSG_MAX,
              "settings fit");

static const char *const ctl_job_state_text[_CTL_JOB_STATE_MAX] = {
        [CTL_JOB_QUEUED] = "queued",
        [CTL_JOB_CONNECTING] = "connecting",
        [CTL_JOB_SENDING] = "sending",
        [CTL_JOB_VERIFYING] = "verifying",
        [CTL_JOB_DONE] = "done",
        [CTL_JOB_FAILED] = "failed",
        [CTL_JOB_CANCELLED] = "cancelled",
        [CTL_JOB_RETRYING] = "retrying",
};

const char *ctl_job_state_str(unsigned int state)
{
        if (state >= _CTL_JOB_STATE_MAX || !ctl_job_state_text[state])
                return "unknown";
        return ctl_job_state_text[state];
}

bool ctl_job_state_final(unsigned int state)
{
        return state == CTL_JOB_DONE || state == CTL_JOB_FAILED || state == CTL_JOB_CANCELLED;
}

bool ctl_job_transition_ok(unsigned int from, unsigned int to)
{
        if (from >= _CTL_JOB_STATE_MAX || to >= _CTL_JOB_STATE_MAX || ctl_job_state_final(from))
                return false;
        if (from == CTL_JOB_RETRYING)
                return to == CTL_JOB_QUEUED || ctl_job_state_final(to);
        if (to == CTL_JOB_RETRYING)
                /* Only an attempt that ran can fail transiently. */
                return from != CTL_JOB_QUEUED;
        /* The attempt's states and the final ones are numbered in their order. */
        return to > from;
}

/* strnlen bounded by the field, or -EINVAL when longer than @max. */
/* A SUBMIT's attributes come after its strings (version 17). */
static bool ctl_submit_has_xattrs(const struct ctl_submit *s)
{
        return s->flags & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS);
}

/* A deleting tree's rules (version 19): text, a rule a line, no NUL. */
static bool ctl_rules_ok(const struct ctl_submit *s)
{
        if (!(s->flags & CTL_SUBMIT_RULES))
                return s->rules_len == 0;
        return s->rules_len >= 1 && s->rules_len <= CTL_RULES_MAX && !memchr(s->rules, '\0', s->rules_len) &&
               (s->flags & (CTL_SUBMIT_TREE | CTL_SUBMIT_DELETE)) == (CTL_SUBMIT_TREE | CTL_SUBMIT_DELETE);
}

/* Attributes as xattrs.h has them, where @present says they may be; none otherwise. */
static bool ctl_xattrs_ok(bool present, const uint8_t *buf, size_t len)
{
        if (!present)
                return len == 0;
        return len <= CTL_XATTRS_MAX && xattrs_check(buf, len, NULL) == 0;
}

static int ctl_str_len(const char *s, size_t field_size, size_t max)
{
        size_t n = strnlen(s, field_size);

        if (n > max)
                return -EINVAL;
        return (int)n;
}

int ctl_route_add(char *route, size_t size, const char *host, uint16_t port)
{
        size_t len = strnlen(route, size), hops = len > 0;
        char hop[CTL_HOP_MAX + 2];
        bool v6 = strchr(host, ':');
        int n;

        if (len >= size)
                return -ENAMETOOLONG;
        if (!host[0] || strpbrk(host, "[],"))
                return -EINVAL;
        for (const char *c = route; *c; c++)
                hops += *c == ',';
        if (hops >= CTL_ROUTE_HOPS_MAX)
                return -E2BIG;
        if (port)
                n = snprintf(hop, sizeof(hop), "%s%s%s%s:%u", len ? "," : "", v6 ? "[" : "", host,
                             v6 ? "]" : "", (unsigned int)port);
        else
                n = snprintf(hop, sizeof(hop), "%s%s%s%s", len ? "," : "", v6 ? "[" : "", host,
                             v6 ? "]" : "");
        if (n < 0 || (size_t)n > CTL_HOP_MAX + (len > 0) || len + (size_t)n >= size)
                return -ENAMETOOLONG;
        memcpy(route + len, hop, (size_t)n + 1);
        return 0;
}

/* "PORT" (1..65535, digits only) of @len bytes at @s: the port, or 0. */
static uint16_t ctl_port(const char *s, size_t len)
{
        unsigned int v = 0;

        if (len == 0 || len > 5)
                return 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return 0;
                v = v * 10 + (unsigned int)(s[i] - '0');
        }
        return v <= UINT16_MAX ? (uint16_t)v : 0;
}

/* One hop, @len bytes at @s, as peer.h's PEER[:PORT] (a bare IPv6
 * address, two colons or more and no brackets, has no port). */
static int ctl_hop_parse(const char *s, size_t len, struct ctl_hop *h)
{
        const char *host = s, *colon;
        size_t hlen = len;

        h->port = 0;
        if (len == 0 || len > CTL_HOP_MAX)
                return -EINVAL;
        if (s[0] == '[') {
                const char *close = memchr(s, ']', len);

                if (!close)
                        return -EINVAL;
                host = s + 1;
                hlen = (size_t)(close - host);
                if (close + 1 < s + len) {
                        if (close[1] != ':')
                                return -EINVAL;
                        h->port = ctl_port(close + 2, (size_t)(s + len - close - 2));
                        if (!h->port)
                                return -EINVAL;
                }
        } else if ((colon = memchr(s, ':', len)) && !memchr(colon + 1, ':', (size_t)(s + len - colon - 1))) {
                hlen = (size_t)(colon - s);
                h->port = ctl_port(colon + 1, len - hlen - 1);
                if (!h->port)
                        return -EINVAL;
        }
        if (hlen == 0 || memchr(host, '[', hlen) || memchr(host, ']', hlen))
                return -EINVAL;
        memcpy(h->host, host, hlen);
        h->host[hlen] = '\0';
        return 0;
}

int ctl_route_next(struct ctl_route_iter *it, struct ctl_hop *hop)
{
        const char *end;

        if (!it->at)
                return 0;
        end = strchr(it->at, ',');
        if (ctl_hop_parse(it->at, end ? (size_t)(end - it->at) : strlen(it->at), hop) < 0)
                return -EINVAL;
        /* "a," ends in an empty hop: the next call says so. */
        it->at = end ? end + 1 : NULL;
        return 1;
}

int ctl_route_parse(const char *route, struct ctl_hop *hops, unsigned int max)
{
        struct ctl_route_iter it = CTL_ROUTE_ITER(route);
        struct ctl_hop scratch;
        unsigned int n = 0;
        int r;

        for (;;) {
                /* More than @max is -E2BIG before the hop past them is looked at. */
                if (it.at && n >= max)
                        return -E2BIG;
                r = ctl_route_next(&it, hops ? &hops[n] : &scratch);
                if (r < 0)
                        return r;
                if (r == 0)
                        return (int)n;
                n++;
        }
}

bool ctl_submit_chain_ok(const struct ctl_submit *s)
{
        if (s->flags & (CTL_SUBMIT_SYNC_MASK | CTL_SUBMIT_DELETE | CTL_SUBMIT_DRY_RUN))
                return false;
        return (s->flags & CTL_SUBMIT_TREE) || s->files <= 1;
}

/* A chain's bytes per node: none over the total, a published node's
 * the total, none past the last node. */
static bool ctl_job_node_bytes_ok(const struct ctl_job *j)
{
        for (unsigned int k = 0; k < CTL_NODES_MAX; k++) {
                if (k >= j->nodes) {
                        if (j->node_bytes[k])
                                return false;
                } else if (j->node_bytes[k] > j->bytes_total ||
                           (!nodeset_has(&j->nodes_missing, k) && j->node_bytes[k] != j->bytes_total)) {
                        return false;
                }
        }
        return true;
}

/*
 * A job's nodes: none (no chain, nothing else set, no route), or 2 ..
 * CTL_NODES_MAX with a route of one hop fewer, a missing bit for no node
 * past the last, nodes_ok what the bits leave, node_failed 0 or the first
 * missing node. Only a DONE job's peer published; any other's missing
 * all of them, and only a FAILED one names a failed node (the peer).
 */
/* A landing names its path, absolute; a pull its way back too, a push
 * none; the drop box neither. */
static bool ctl_job_land_ok(const struct ctl_job *j)
{
        switch (j->land) {
        case CTL_JOB_LAND_NONE:
                return !j->land_path[0] && !j->back_path[0];
        case CTL_JOB_LAND_PUSH:
                return j->land_path[0] == '/' && !j->back_path[0];
        case CTL_JOB_LAND_PULL:
                return j->land_path[0] == '/' && j->back_path[0] == '/';
        default:
                return false;
        }
}

static bool ctl_job_nodes_ok(const struct ctl_job *j)
{
        struct nodeset all;

        if (!ctl_job_node_bytes_ok(j))
                return false;
        if (j->nodes == 0)
                return j->nodes_ok == 0 && j->node_failed == 0 && nodeset_empty(&j->nodes_missing) &&
                       !j->route[0];
        if (j->nodes < 2 || j->nodes > CTL_NODES_MAX)
                return false;
        all = nodeset_first_n(j->nodes);
        if (!nodeset_below(&j->nodes_missing, j->nodes) ||
            j->nodes_ok != j->nodes - nodeset_count(&j->nodes_missing))
                return false;
        if (j->node_failed && j->node_failed != nodeset_first(&j->nodes_missing) + 1)
                return false;
        if (j->state == CTL_JOB_DONE) {
                if (nodeset_has(&j->nodes_missing, 0))
                        return false;
        } else if (!nodeset_equal(&j->nodes_missing, &all) ||
                   (j->node_failed != 0) != (j->state == CTL_JOB_FAILED)) {
                return false;
        }
        /* Counted, not kept: CTL_ROUTE_HOPS_MAX hops would be 28 KiB of stack. */
        return ctl_route_parse(j->route, NULL, CTL_ROUTE_HOPS_MAX) == j->nodes - 1;
}

/* A reason name: 1..CTL_REASON_MAX of [a-z0-9_]. */
static bool ctl_reason_name_ok(const char *s, size_t len)
{
        if (len == 0 || len > CTL_REASON_MAX)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

/*
 * What both sides insist on: nreasons in bounds, each reason counted,
 * named and in a known direction, once per (dir, name), and no ring with
 * more slots held than it has. Returns the reasons' encoded length, or -1.
 */
static int ctl_stats_check(const struct ctl_stats *s)
{
        size_t len = 0;

        if (s->nreasons > CTL_STATS_REASONS_MAX || s->ring_held > s->ring_slots ||
            s->pool_held > s->pool_slots)
                return -1;
        for (size_t i = 0; i < s->nreasons; i++) {
                const struct ctl_stats_reason *r = &s->reason[i];
                size_t n = strnlen(r->name, sizeof(r->name));

                if (r->dir >= _CTL_DIR_MAX || r->count == 0 || !ctl_reason_name_ok(r->name, n))
                        return -1;
                for (size_t j = 0; j < i; j++)
                        if (s->reason[j].dir == r->dir && strcmp(s->reason[j].name, r->name) == 0)
                                return -1;
                len += CTL_REASON_FIXED + n;
        }
        /* The rails (version 14): each a device name, printable, once. */
        if (s->nrails > CTL_RAILS_MAX)
                return -1;
        len += 1;
        for (size_t i = 0; i < s->nrails; i++) {
                const struct ctl_stats_rail *r = &s->rail[i];
                size_t n = strnlen(r->name, sizeof(r->name));

                if (r->up > 1 || n == 0 || n > CTL_RAIL_NAME_MAX)
                        return -1;
                for (size_t k = 0; k < n; k++)
                        if ((unsigned char)r->name[k] <= ' ' || (unsigned char)r->name[k] >= 0x7f)
                                return -1;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(s->rail[j].name, r->name) == 0)
                                return -1;
                len += CTL_RAIL_FIXED + n;
        }
        return (int)len;
}

/* An ITEM's verdict, kind and letters: known, and letters only where a
 * replace has them. */
static bool ctl_item_ok(const struct ctl_item *i)
{
        static const char letters[] = "cstax";

        if (i->verdict >= _CTL_VERDICT_MAX || i->kind >= _CTL_ITEM_KIND_MAX || i->changes[5] != '\0')
                return false;
        for (int k = 0; k < 5; k++)
                if (i->changes[k] != '.' && (i->changes[k] != letters[k] || i->verdict != CTL_WOULD_REPLACE))
                        return false;
        return true;
}

int ctl_encode(void *buf, size_t cap, const struct ctl_msg *m)
{
        struct bytes_out o = BYTES_OUT(buf, cap);
        int l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0, l8 = 0, l9 = 0;
        size_t plen;

        switch (m->type) {
        case CTL_SUBMIT:
                l1 = ctl_str_len(m->submit.host, sizeof(m->submit.host), CTL_HOST_MAX);
                l2 = ctl_str_len(m->submit.name, sizeof(m->submit.name), CTL_NAME_MAX);
                l3 = ctl_str_len(m->submit.route, sizeof(m->submit.route), CTL_ROUTE_MAX);
                l4 = ctl_str_len(m->submit.land_path, sizeof(m->submit.land_path), CTL_LAND_PATH_MAX);
                l5 = ctl_str_len(m->submit.land_cred, sizeof(m->submit.land_cred), CTL_LAND_CRED_MAX);
                l7 = ctl_str_len(m->submit.back_host, sizeof(m->submit.back_host), CTL_HOST_MAX);
                l8 = ctl_str_len(m->submit.back_path, sizeof(m->submit.back_path), CTL_LAND_PATH_MAX);
                l9 = ctl_str_len(m->submit.back_cred, sizeof(m->submit.back_cred), CTL_LAND_CRED_MAX);
                if (l1 < 0 || l2 < 0 || l3 < 0 || l4 < 0 || l5 < 0 || l7 < 0 || l8 < 0 || l9 < 0)
                        return -EINVAL;
                if (!ctl_xattrs_ok(ctl_submit_has_xattrs(&m->submit), m->submit.xattrs, m->submit.xattrs_len) ||
                    !ctl_rules_ok(&m->submit))
                        return -EINVAL;
                plen = CTL_SUBMIT_FIXED + (size_t)l1 + (size_t)l2 + (size_t)l3 + (size_t)l4 + (size_t)l5 +
                       (size_t)l7 + (size_t)l8 + (size_t)l9 +
                       (ctl_submit_has_xattrs(&m->submit) ? 2u + m->submit.xattrs_len : 0) +
                       ((m->submit.flags & CTL_SUBMIT_RULES) ? 2u + m->submit.rules_len : 0);
                break;
        case CTL_FILE:
                l1 = ctl_str_len(m->file.name, sizeof(m->file.name), CTL_PATH_MAX);
                if (l1 < 0 || !ctl_xattrs_ok(m->file.flags & CTL_FILE_XATTRS, m->file.xattrs, m->file.xattrs_len) ||
                    ((m->file.flags & CTL_FILE_XATTRS) && m->file.xattrs_len == 0))
                        return -EINVAL;
                plen = CTL_FILE_FIXED + (size_t)l1 + ((m->file.flags & CTL_FILE_XATTRS) ? 2u + m->file.xattrs_len : 0);
                break;
        case CTL_SUBMITTED:
        case CTL_STATUS:
        case CTL_WATCH:
        case CTL_CANCEL:
        case CTL_ITEMS:
                plen = CTL_ID_LEN;
                break;
        case CTL_ITEM:
                l1 = ctl_str_len(m->item.name, sizeof(m->item.name), CTL_PATH_MAX);
                if (l1 < 0 || !ctl_item_ok(&m->item))
                        return -EINVAL;
                plen = CTL_ITEM_FIXED + (size_t)l1;
                break;
        case CTL_LIST:
        case CTL_LIST_END:
        case CTL_OK:
        case CTL_STATS:
        case CTL_SETTINGS:
                plen = 0;
                break;
        case CTL_SETTINGS_INFO:
                l1 = ctl_str_len(m->settings.peer_names, sizeof(m->settings.peer_names), CTL_PEER_NAMES_MAX);
                l2 = ctl_str_len(m->settings.listen, sizeof(m->settings.listen), CTL_HOST_MAX);
                if (l1 < 0 || l2 < 0 || peername_check(m->settings.peer_names, NULL, 0) < 0)
                        return -EINVAL;
                plen = CTL_SETTINGS_FIXED + (size_t)l1 + (size_t)l2;
                break;
        case CTL_STATS_INFO:
                l1 = ctl_stats_check(&m->stats);
                if (l1 < 0)
                        return -EINVAL;
                plen = CTL_STATS_FIXED + (size_t)l1;
                break;
        case CTL_JOB:
                l1 = ctl_str_len(m->job.peer, sizeof(m->job.peer), CTL_PEER_MAX);
                l2 = ctl_str_len(m->job.name, sizeof(m->job.name), CTL_NAME_MAX);
                l3 = ctl_str_len(m->job.text, sizeof(m->job.text), CTL_TEXT_MAX);
                l4 = ctl_str_len(m->job.node_peer, sizeof(m->job.node_peer), CTL_PEER_MAX);
                l5 = ctl_str_len(m->job.node_text, sizeof(m->job.node_text), CTL_TEXT_MAX);
                l6 = ctl_str_len(m->job.route, sizeof(m->job.route), CTL_ROUTE_MAX);
                l7 = ctl_str_len(m->job.rails, sizeof(m->job.rails), CTL_RAILS_STR_MAX);
                l8 = ctl_str_len(m->job.land_path, sizeof(m->job.land_path), CTL_LAND_PATH_MAX);
                l9 = ctl_str_len(m->job.back_path, sizeof(m->job.back_path), CTL_LAND_PATH_MAX);
                if (l1 < 0 || l2 < 0 || l3 < 0 || l4 < 0 || l5 < 0 || l6 < 0 || l7 < 0 || l8 < 0 || l9 < 0)
                        return -EINVAL;
                /* After the lengths: the route is read as a string. */
                if (m->job.state >= _CTL_JOB_STATE_MAX || !ctl_job_nodes_ok(&m->job) || !ctl_job_land_ok(&m->job))
                        return -EINVAL;
                plen = CTL_JOB_FIXED + 8u * m->job.nodes + (size_t)l1 + (size_t)l2 + (size_t)l3 + (size_t)l4 +
                       (size_t)l5 + (size_t)l6 + (size_t)l7 + (size_t)l8 + (size_t)l9;
                break;
        case CTL_ERROR:
                l1 = ctl_str_len(m->error.text, sizeof(m->error.text), CTL_TEXT_MAX);
                if (l1 < 0)
                        return -EINVAL;
                plen = CTL_ERROR_FIXED + (size_t)l1;
                break;
        default:
                return -EINVAL;
        }

        if (!buf || cap < CTL_HEADER_SIZE + plen)
                return -EMSGSIZE;

        bytes_put_u32(&o, CTL_MAGIC);
        bytes_put_u16(&o, CTL_VERSION);
        bytes_put_u16(&o, m->type);
        bytes_put_u32(&o, (uint32_t)plen);

        switch (m->type) {
        case CTL_SUBMIT:
                bytes_put_u16(&o, m->submit.port);
                bytes_put_u16(&o, m->submit.flags);
                bytes_put_u64(&o, m->submit.bwlimit);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_u16(&o, m->submit.retries);
                bytes_put_u32(&o, m->submit.files);
                bytes_put_u64(&o, m->submit.job_bytes);
                bytes_put_u16(&o, (uint16_t)l3);
                bytes_put_u32(&o, m->submit.mode);
                bytes_put_u64(&o, m->submit.mtime_ns);
                bytes_put_u16(&o, (uint16_t)l4);
                bytes_put_u16(&o, (uint16_t)l5);
                bytes_put_mem(&o, m->submit.land_token, CTL_LAND_TOKEN_SIZE);
                bytes_put_u16(&o, (uint16_t)l7);
                bytes_put_u16(&o, (uint16_t)l8);
                bytes_put_u16(&o, (uint16_t)l9);
                bytes_put_u16(&o, m->submit.back_port);
                bytes_put_mem(&o, m->submit.host, (size_t)l1);
                bytes_put_mem(&o, m->submit.name, (size_t)l2);
                bytes_put_mem(&o, m->submit.route, (size_t)l3);
                bytes_put_mem(&o, m->submit.land_path, (size_t)l4);
                bytes_put_mem(&o, m->submit.land_cred, (size_t)l5);
                bytes_put_mem(&o, m->submit.back_host, (size_t)l7);
                bytes_put_mem(&o, m->submit.back_path, (size_t)l8);
                bytes_put_mem(&o, m->submit.back_cred, (size_t)l9);
                if (ctl_submit_has_xattrs(&m->submit)) {
                        bytes_put_u16(&o, m->submit.xattrs_len);
                        bytes_put_mem(&o, m->submit.xattrs, m->submit.xattrs_len);
                }
                if (m->submit.flags & CTL_SUBMIT_RULES) {
                        bytes_put_u16(&o, m->submit.rules_len);
                        bytes_put_mem(&o, m->submit.rules, m->submit.rules_len);
                }
                break;
        case CTL_FILE:
                bytes_put_u64(&o, m->file.id);
                bytes_put_u64(&o, m->file.size);
                bytes_put_u16(&o, m->file.flags);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u32(&o, m->file.mode);
                bytes_put_u64(&o, m->file.mtime_ns);
                bytes_put_mem(&o, m->file.name, (size_t)l1);
                if (m->file.flags & CTL_FILE_XATTRS) {
                        bytes_put_u16(&o, m->file.xattrs_len);
                        bytes_put_mem(&o, m->file.xattrs, m->file.xattrs_len);
                }
                break;
        case CTL_SUBMITTED:
        case CTL_STATUS:
        case CTL_WATCH:
        case CTL_CANCEL:
        case CTL_ITEMS:
                bytes_put_u64(&o, m->id);
                break;
        case CTL_ITEM:
                bytes_put_u64(&o, m->item.id);
                bytes_put_u32(&o, m->item.seq);
                bytes_put_u8(&o, m->item.verdict);
                bytes_put_u8(&o, m->item.kind);
                bytes_put_mem(&o, m->item.changes, 5);
                bytes_put_u64(&o, m->item.size);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_mem(&o, m->item.name, (size_t)l1);
                break;
        case CTL_JOB:
                bytes_put_u64(&o, m->job.id);
                bytes_put_u8(&o, m->job.state);
                bytes_put_u8(&o, m->job.land);
                bytes_put_u16(&o, m->job.status);
                bytes_put_u64(&o, m->job.bytes_done);
                bytes_put_u64(&o, m->job.bytes_total);
                bytes_put_u64(&o, m->job.usec);
                bytes_put_u64(&o, m->job.rate);
                bytes_put_u64(&o, m->job.bwlimit);
                bytes_put_u16(&o, m->job.attempt);
                bytes_put_u16(&o, m->job.attempts);
                bytes_put_u64(&o, m->job.retry_usec);
                bytes_put_u64(&o, m->job.created_us);
                bytes_put_u64(&o, m->job.started_us);
                bytes_put_u64(&o, m->job.ended_us);
                bytes_put_u32(&o, m->job.files_done);
                bytes_put_u32(&o, m->job.files_total);
                bytes_put_u32(&o, m->job.files_skipped);
                bytes_put_u32(&o, m->job.deleted);
                bytes_put_u16(&o, m->job.nodes);
                bytes_put_u16(&o, m->job.nodes_ok);
                bytes_put_u16(&o, m->job.node_failed);
                bytes_put_u16(&o, m->job.node_status);
                nodeset_put(&o, &m->job.nodes_missing);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_u16(&o, (uint16_t)l3);
                bytes_put_u16(&o, (uint16_t)l4);
                bytes_put_u16(&o, (uint16_t)l5);
                bytes_put_u16(&o, (uint16_t)l6);
                bytes_put_u16(&o, (uint16_t)l7);
                bytes_put_u16(&o, (uint16_t)l8);
                bytes_put_u16(&o, (uint16_t)l9);
                for (unsigned int k = 0; k < m->job.nodes; k++)
                        bytes_put_u64(&o, m->job.node_bytes[k]);
                bytes_put_mem(&o, m->job.peer, (size_t)l1);
                bytes_put_mem(&o, m->job.name, (size_t)l2);
                bytes_put_mem(&o, m->job.text, (size_t)l3);
                bytes_put_mem(&o, m->job.node_peer, (size_t)l4);
                bytes_put_mem(&o, m->job.node_text, (size_t)l5);
                bytes_put_mem(&o, m->job.route, (size_t)l6);
                bytes_put_mem(&o, m->job.rails, (size_t)l7);
                bytes_put_mem(&o, m->job.land_path, (size_t)l8);
                bytes_put_mem(&o, m->job.back_path, (size_t)l9);
                break;
        case CTL_ERROR:
                bytes_put_u32(&o, (uint32_t)m->error.code);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_mem(&o, m->error.text, (size_t)l1);
                break;
        case CTL_SETTINGS_INFO:
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_mem(&o, m->settings.peer_names, (size_t)l1);
                bytes_put_mem(&o, m->settings.listen, (size_t)l2);
                break;
        case CTL_STATS_INFO:
                bytes_put_u64(&o, m->stats.uptime_usec);
                for (size_t d = 0; d < _CTL_DIR_MAX; d++) {
                        bytes_put_u64(&o, m->stats.dir[d].bytes);
                        bytes_put_u64(&o, m->stats.dir[d].files);
                        bytes_put_u64(&o, m->stats.dir[d].rate);
                        bytes_put_u32(&o, m->stats.dir[d].active);
                }
                bytes_put_u32(&o, m->stats.queued);
                bytes_put_u32(&o, m->stats.ring_held);
                bytes_put_u32(&o, m->stats.ring_slots);
                bytes_put_u32(&o, m->stats.pool_held);
                bytes_put_u32(&o, m->stats.pool_slots);
                bytes_put_u16(&o, m->stats.nreasons);
                for (size_t i = 0; i < m->stats.nreasons; i++) {
                        const struct ctl_stats_reason *r = &m->stats.reason[i];
                        size_t n = strlen(r->name);

                        bytes_put_u8(&o, r->dir);
                        bytes_put_u64(&o, r->count);
                        bytes_put_u8(&o, (uint8_t)n);
                        bytes_put_mem(&o, r->name, n);
                }
                bytes_put_u8(&o, m->stats.nrails);
                for (size_t i = 0; i < m->stats.nrails; i++) {
                        const struct ctl_stats_rail *r = &m->stats.rail[i];
                        size_t n = strlen(r->name);

                        bytes_put_u8(&o, r->up);
                        for (size_t d = 0; d < _CTL_DIR_MAX; d++)
                                bytes_put_u64(&o, r->bytes[d]);
                        bytes_put_u8(&o, (uint8_t)n);
                        bytes_put_mem(&o, r->name, n);
                }
                break;
        default:
                break;
        }

        if (o.overflow || o.off != CTL_HEADER_SIZE + plen)
                return -EMSGSIZE;
        return (int)o.off;
}

static int ctl_decode_stats(struct bytes_in *in, uint32_t plen, struct ctl_stats *s)
{
        size_t len = CTL_STATS_FIXED;

        if (plen < CTL_STATS_FIXED)
                return -1;
        s->uptime_usec = bytes_get_u64(in);
        for (size_t d = 0; d < _CTL_DIR_MAX; d++) {
                s->dir[d].bytes = bytes_get_u64(in);
                s->dir[d].files = bytes_get_u64(in);
                s->dir[d].rate = bytes_get_u64(in);
                s->dir[d].active = bytes_get_u32(in);
        }
        s->queued = bytes_get_u32(in);
        s->ring_held = bytes_get_u32(in);
        s->ring_slots = bytes_get_u32(in);
        s->pool_held = bytes_get_u32(in);
        s->pool_slots = bytes_get_u32(in);
        s->nreasons = bytes_get_u16(in);
        if (s->nreasons > CTL_STATS_REASONS_MAX)
                return -1;
        for (size_t i = 0; i < s->nreasons; i++) {
                struct ctl_stats_reason *r = &s->reason[i];
                uint8_t n;

                /* Each entry's length is checked before its bytes are read. */
                if (plen < len + CTL_REASON_FIXED)
                        return -1;
                r->dir = bytes_get_u8(in);
                r->count = bytes_get_u64(in);
                n = bytes_get_u8(in);
                len += CTL_REASON_FIXED + n;
                if (n > CTL_REASON_MAX || plen < len ||
                    !bytes_get_str(in, r->name, sizeof(r->name), n))
                        return -1;
        }
        if (plen < len + 1)
                return -1;
        s->nrails = bytes_get_u8(in);
        len += 1;
        if (s->nrails > CTL_RAILS_MAX)
                return -1;
        for (size_t i = 0; i < s->nrails; i++) {
                struct ctl_stats_rail *r = &s->rail[i];
                uint8_t n;

                if (plen < len + CTL_RAIL_FIXED)
                        return -1;
                r->up = bytes_get_u8(in);
                for (size_t d = 0; d < _CTL_DIR_MAX; d++)
                        r->bytes[d] = bytes_get_u64(in);
                n = bytes_get_u8(in);
                len += CTL_RAIL_FIXED + n;
                if (n > CTL_RAIL_NAME_MAX || plen < len || !bytes_get_str(in, r->name, sizeof(r->name), n))
                        return -1;
        }
        if (plen != len || ctl_stats_check(s) < 0)
                return -1;
        return 0;
}

size_t ctl_msg_size(uint16_t type)
{
        size_t head = offsetof(struct ctl_msg, submit);

        switch (type) {
        case CTL_SUBMIT:
                return head + sizeof(struct ctl_submit);
        case CTL_FILE:
                return head + sizeof(struct ctl_file);
        case CTL_SUBMITTED:
        case CTL_STATUS:
        case CTL_WATCH:
        case CTL_CANCEL:
        case CTL_ITEMS:
                return head + sizeof(uint64_t);
        case CTL_ITEM:
                return head + sizeof(struct ctl_item);
        case CTL_STATS_INFO:
                return head + sizeof(struct ctl_stats);
        case CTL_SETTINGS_INFO:
                return head + sizeof(struct ctl_settings);
        case CTL_JOB:
                return head + sizeof(struct ctl_job);
        case CTL_ERROR:
                return head + sizeof(struct ctl_error);
        default:
                return head;
        }
}

int ctl_decode(const void *buf, size_t len, struct ctl_msg *m)
{
        struct bytes_in in = BYTES_IN(buf, len);
        uint32_t magic, plen;
        uint16_t version, type, l1, l2, l3, l4, l5, l6, l7, l8, l9;

        m->type = 0;
        if (!buf || len < CTL_HEADER_SIZE)
                return -EBADMSG;

        magic = bytes_get_u32(&in);
        version = bytes_get_u16(&in);
        type = bytes_get_u16(&in);
        plen = bytes_get_u32(&in);
        if (magic != CTL_MAGIC)
                return -EBADMSG;
        if (version != CTL_VERSION)
                return -EPROTONOSUPPORT;
        if (len > CTL_MSG_MAX || plen != len - CTL_HEADER_SIZE)
                return -EBADMSG;
        /* Only what this type fills: a FILE's 296 bytes, not all 32 KiB
         * (zeroing those cost the daemon more than the rest of a tree's
         * entry). */
        memset(m, 0, ctl_msg_size(type));
        m->type = type;

        switch (m->type) {
        case CTL_SUBMIT:
                if (plen < CTL_SUBMIT_FIXED)
                        return -EBADMSG;
                m->submit.port = bytes_get_u16(&in);
                m->submit.flags = bytes_get_u16(&in);
                m->submit.bwlimit = bytes_get_u64(&in);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                m->submit.retries = bytes_get_u16(&in);
                m->submit.files = bytes_get_u32(&in);
                m->submit.job_bytes = bytes_get_u64(&in);
                l3 = bytes_get_u16(&in);
                m->submit.mode = bytes_get_u32(&in);
                m->submit.mtime_ns = bytes_get_u64(&in);
                l4 = bytes_get_u16(&in);
                l5 = bytes_get_u16(&in);
                bytes_get_mem(&in, m->submit.land_token, CTL_LAND_TOKEN_SIZE);
                l7 = bytes_get_u16(&in);
                l8 = bytes_get_u16(&in);
                l9 = bytes_get_u16(&in);
                m->submit.back_port = bytes_get_u16(&in);
                {
                        const uint32_t base = CTL_SUBMIT_FIXED + (uint32_t)l1 + l2 + l3 + l4 + l5 + l7 + l8 + l9;
                        const bool xa = ctl_submit_has_xattrs(&m->submit), ru = m->submit.flags & CTL_SUBMIT_RULES;
                        uint32_t want = base + (xa ? 2u : 0) + (ru ? 2u : 0);

                        if (l1 > CTL_HOST_MAX || l2 > CTL_NAME_MAX || l3 > CTL_ROUTE_MAX || l4 > CTL_LAND_PATH_MAX ||
                            l5 > CTL_LAND_CRED_MAX || l7 > CTL_HOST_MAX || l8 > CTL_LAND_PATH_MAX ||
                            l9 > CTL_LAND_CRED_MAX || ((xa || ru) ? plen < want : plen != want))
                                return -EBADMSG;
                        if (!bytes_get_str(&in, m->submit.host, sizeof(m->submit.host), l1) ||
                            !bytes_get_str(&in, m->submit.name, sizeof(m->submit.name), l2) ||
                            !bytes_get_str(&in, m->submit.route, sizeof(m->submit.route), l3) ||
                            !bytes_get_str(&in, m->submit.land_path, sizeof(m->submit.land_path), l4) ||
                            !bytes_get_str(&in, m->submit.land_cred, sizeof(m->submit.land_cred), l5) ||
                            !bytes_get_str(&in, m->submit.back_host, sizeof(m->submit.back_host), l7) ||
                            !bytes_get_str(&in, m->submit.back_path, sizeof(m->submit.back_path), l8) ||
                            !bytes_get_str(&in, m->submit.back_cred, sizeof(m->submit.back_cred), l9))
                                return -EBADMSG;
                        if (xa) {
                                m->submit.xattrs_len = bytes_get_u16(&in);
                                want += m->submit.xattrs_len;
                                if (m->submit.xattrs_len > CTL_XATTRS_MAX || plen < want)
                                        return -EBADMSG;
                                bytes_get_mem(&in, m->submit.xattrs, m->submit.xattrs_len);
                                if (!ctl_xattrs_ok(true, m->submit.xattrs, m->submit.xattrs_len))
                                        return -EBADMSG;
                        }
                        if (ru) {
                                m->submit.rules_len = bytes_get_u16(&in);
                                want += m->submit.rules_len;
                                if (m->submit.rules_len > CTL_RULES_MAX || plen < want)
                                        return -EBADMSG;
                                bytes_get_mem(&in, m->submit.rules, m->submit.rules_len);
                        }
                        if (plen != want || !ctl_rules_ok(&m->submit))
                                return -EBADMSG;
                }
                break;
        case CTL_FILE:
                if (plen < CTL_FILE_FIXED)
                        return -EBADMSG;
                m->file.id = bytes_get_u64(&in);
                m->file.size = bytes_get_u64(&in);
                m->file.flags = bytes_get_u16(&in);
                l1 = bytes_get_u16(&in);
                m->file.mode = bytes_get_u32(&in);
                m->file.mtime_ns = bytes_get_u64(&in);
                if (l1 > CTL_PATH_MAX || ((m->file.flags & CTL_FILE_XATTRS) ? plen < CTL_FILE_FIXED + (uint32_t)l1 + 2u
                                                                            : plen != CTL_FILE_FIXED + (uint32_t)l1))
                        return -EBADMSG;
                if (!bytes_get_str(&in, m->file.name, sizeof(m->file.name), l1))
                        return -EBADMSG;
                if (m->file.flags & CTL_FILE_XATTRS) {
                        m->file.xattrs_len = bytes_get_u16(&in);
                        if (m->file.xattrs_len == 0 || m->file.xattrs_len > CTL_XATTRS_MAX ||
                            plen != CTL_FILE_FIXED + (uint32_t)l1 + 2u + m->file.xattrs_len)
                                return -EBADMSG;
                        bytes_get_mem(&in, m->file.xattrs, m->file.xattrs_len);
                        if (!ctl_xattrs_ok(true, m->file.xattrs, m->file.xattrs_len))
                                return -EBADMSG;
                }
                break;
        case CTL_SUBMITTED:
        case CTL_STATUS:
        case CTL_WATCH:
        case CTL_CANCEL:
        case CTL_ITEMS:
                if (plen != CTL_ID_LEN)
                        return -EBADMSG;
                m->id = bytes_get_u64(&in);
                break;
        case CTL_ITEM:
                if (plen < CTL_ITEM_FIXED)
                        return -EBADMSG;
                m->item.id = bytes_get_u64(&in);
                m->item.seq = bytes_get_u32(&in);
                m->item.verdict = bytes_get_u8(&in);
                m->item.kind = bytes_get_u8(&in);
                bytes_get_mem(&in, m->item.changes, 5);
                m->item.size = bytes_get_u64(&in);
                l1 = bytes_get_u16(&in);
                if (l1 > CTL_PATH_MAX || plen != CTL_ITEM_FIXED + (uint32_t)l1 || !ctl_item_ok(&m->item) ||
                    !bytes_get_str(&in, m->item.name, sizeof(m->item.name), l1))
                        return -EBADMSG;
                break;
        case CTL_LIST:
        case CTL_LIST_END:
        case CTL_OK:
        case CTL_STATS:
        case CTL_SETTINGS:
                if (plen != 0)
                        return -EBADMSG;
                break;
        case CTL_SETTINGS_INFO:
                if (plen < CTL_SETTINGS_FIXED)
                        return -EBADMSG;
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                if (l1 > CTL_PEER_NAMES_MAX || l2 > CTL_HOST_MAX || plen != CTL_SETTINGS_FIXED + (uint32_t)l1 + l2 ||
                    !bytes_get_str(&in, m->settings.peer_names, sizeof(m->settings.peer_names), l1) ||
                    !bytes_get_str(&in, m->settings.listen, sizeof(m->settings.listen), l2) ||
                    peername_check(m->settings.peer_names, NULL, 0) < 0)
                        return -EBADMSG;
                break;
        case CTL_STATS_INFO:
                if (ctl_decode_stats(&in, plen, &m->stats) < 0)
                        return -EBADMSG;
                break;
        case CTL_JOB:
                if (plen < CTL_JOB_FIXED)
                        return -EBADMSG;
                m->job.id = bytes_get_u64(&in);
                m->job.state = bytes_get_u8(&in);
                m->job.land = bytes_get_u8(&in);
                m->job.status = bytes_get_u16(&in);
                m->job.bytes_done = bytes_get_u64(&in);
                m->job.bytes_total = bytes_get_u64(&in);
                m->job.usec = bytes_get_u64(&in);
                m->job.rate = bytes_get_u64(&in);
                m->job.bwlimit = bytes_get_u64(&in);
                m->job.attempt = bytes_get_u16(&in);
                m->job.attempts = bytes_get_u16(&in);
                m->job.retry_usec = bytes_get_u64(&in);
                m->job.created_us = bytes_get_u64(&in);
                m->job.started_us = bytes_get_u64(&in);
                m->job.ended_us = bytes_get_u64(&in);
                m->job.files_done = bytes_get_u32(&in);
                m->job.files_total = bytes_get_u32(&in);
                m->job.files_skipped = bytes_get_u32(&in);
                m->job.deleted = bytes_get_u32(&in);
                m->job.nodes = bytes_get_u16(&in);
                m->job.nodes_ok = bytes_get_u16(&in);
                m->job.node_failed = bytes_get_u16(&in);
                m->job.node_status = bytes_get_u16(&in);
                nodeset_get(&in, &m->job.nodes_missing);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                l3 = bytes_get_u16(&in);
                l4 = bytes_get_u16(&in);
                l5 = bytes_get_u16(&in);
                l6 = bytes_get_u16(&in);
                l7 = bytes_get_u16(&in);
                l8 = bytes_get_u16(&in);
                l9 = bytes_get_u16(&in);
                /* A node's bytes each: the count is checked before any is read. */
                if (l1 > CTL_PEER_MAX || l2 > CTL_NAME_MAX || l3 > CTL_TEXT_MAX ||
                    l4 > CTL_PEER_MAX || l5 > CTL_TEXT_MAX || l6 > CTL_ROUTE_MAX || l7 > CTL_RAILS_STR_MAX ||
                    l8 > CTL_LAND_PATH_MAX || l9 > CTL_LAND_PATH_MAX || m->job.nodes > CTL_NODES_MAX ||
                    plen != CTL_JOB_FIXED + 8u * m->job.nodes + (uint32_t)l1 + l2 + l3 + l4 + l5 + l6 + l7 + l8 + l9)
                        return -EBADMSG;
                for (unsigned int k = 0; k < m->job.nodes; k++)
                        m->job.node_bytes[k] = bytes_get_u64(&in);
                if (!bytes_get_str(&in, m->job.peer, sizeof(m->job.peer), l1) ||
                    !bytes_get_str(&in, m->job.name, sizeof(m->job.name), l2) ||
                    !bytes_get_str(&in, m->job.text, sizeof(m->job.text), l3) ||
                    !bytes_get_str(&in, m->job.node_peer, sizeof(m->job.node_peer), l4) ||
                    !bytes_get_str(&in, m->job.node_text, sizeof(m->job.node_text), l5) ||
                    !bytes_get_str(&in, m->job.route, sizeof(m->job.route), l6) ||
                    !bytes_get_str(&in, m->job.rails, sizeof(m->job.rails), l7) ||
                    !bytes_get_str(&in, m->job.land_path, sizeof(m->job.land_path), l8) ||
                    !bytes_get_str(&in, m->job.back_path, sizeof(m->job.back_path), l9))
                        return -EBADMSG;
                /* The client keys "watch until final" off the state: reject unknown ones;
                 * and it prints a line per node, as the nodes' fields agree they fare. */
                if (m->job.state >= _CTL_JOB_STATE_MAX || !ctl_job_nodes_ok(&m->job) || !ctl_job_land_ok(&m->job))
                        return -EBADMSG;
                break;
        case CTL_ERROR:
                if (plen < CTL_ERROR_FIXED)
                        return -EBADMSG;
                m->error.code = (int32_t)bytes_get_u32(&in);
                l1 = bytes_get_u16(&in);
                if (l1 > CTL_TEXT_MAX || plen != CTL_ERROR_FIXED + (uint32_t)l1)
                        return -EBADMSG;
                if (!bytes_get_str(&in, m->error.text, sizeof(m->error.text), l1))
                        return -EBADMSG;
                break;
        default:
                return -EBADMSG;
        }

        if (in.underflow || in.off != len)
                return -EBADMSG;
        return 0;
}

int ctl_socket_setup(int sock)
{
        /* The kernel doubles what it is asked for: 4 x CTL_MSG_MAX here. */
        int want = 2 * CTL_MSG_MAX, have = 0;
        socklen_t len = sizeof(have);

        if (getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &have, &len) < 0)
                return -errno;
        if (have >= 2 * want)
                return 0;
        if (setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want)) < 0)
                return -errno;
        return 0;
}

int ctl_send(int sock, const struct ctl_msg *m, int fd)
{
        uint8_t buf[CTL_MSG_MAX];
        int len;

        len = ctl_encode(buf, sizeof(buf), m);
        if (len < 0)
                return len;
        return scm_send(sock, buf, (size_t)len, fd, 0);
}

void ctl_batch_init(struct ctl_batch *b, int sock)
{
        b->sock = sock;
        b->n = 0;
        b->used = 0;
}

void ctl_batch_drop(struct ctl_batch *b)
{
        for (unsigned int i = 0; i < b->n; i++)
                safe_close(b->fd[i]);
        b->n = 0;
        b->used = 0;
}

int ctl_batch_flush(struct ctl_batch *b)
{
        union scm_one control[CTL_BATCH_MAX];
        struct iovec iov[CTL_BATCH_MAX];
        struct mmsghdr mm[CTL_BATCH_MAX];
        unsigned int done = 0;

        for (unsigned int i = 0; i < b->n; i++) {
                iov[i] = (struct iovec){ .iov_base = b->buf + b->off[i], .iov_len = b->len[i] };
                mm[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
                scm_attach(&mm[i].msg_hdr, &control[i], b->fd[i]);
        }
        while (done < b->n) {
                int n = sendmmsg(b->sock, mm + done, b->n - done, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                /* Sent: the record holds its own copy of the descriptor. */
                for (int i = 0; i < n; i++, done++) {
                        /* SOCK_SEQPACKET sends whole records or fails. */
                        if (mm[done].msg_len != b->len[done])
                                return -EMSGSIZE;
                        safe_close(b->fd[done]);
                        b->fd[done] = -1;
                }
        }
        b->n = 0;
        b->used = 0;
        return 0;
}

int ctl_batch_add(struct ctl_batch *b, const struct ctl_msg *m, int fd)
{
        int len, r;

        len = b->n < CTL_BATCH_MAX ? ctl_encode(b->buf + b->used, sizeof(b->buf) - b->used, m) : -EMSGSIZE;
        if (len == -EMSGSIZE && b->n > 0) {
                r = ctl_batch_flush(b);
                if (r < 0) {
                        safe_close(fd);
                        return r;
                }
                len = ctl_encode(b->buf, sizeof(b->buf), m);
        }
        if (len < 0) {
                safe_close(fd);
                return len;
        }
        b->off[b->n] = b->used;
        b->len[b->n] = (size_t)len;
        b->fd[b->n] = fd;
        b->used += (size_t)len;
        b->n++;
        return 0;
}

/* Take the first passed descriptor, close every other one. */
int ctl_recv(int sock, struct ctl_msg *m, int *fd)
{
        uint8_t buf[CTL_MSG_MAX];
        _cleanup_(closep) int passed = -1;
        ssize_t n;
        int r;

        if (fd)
                *fd = -1;
        m->type = 0;
        n = scm_recv(sock, buf, sizeof(buf), &passed);
        if (n < 0)
                return (int)n;

        r = ctl_decode(buf, (size_t)n, m);
        if (r < 0)
                return r;

        if (fd)
                *fd = TAKE_FD(passed);
        return 0;
}
