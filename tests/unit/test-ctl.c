/* The control protocol: codec, hostile input, and send/recv with fd passing over SOCK_SEQPACKET. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "macro.h"
#include "tap.h"
#include "xattrs.h"


/* What a decode defines: the type and its member (ctl_msg_size). */
static bool same_msg(const struct ctl_msg *a, const struct ctl_msg *b)
{
        return a->type == b->type && memcmp(a, b, ctl_msg_size(b->type)) == 0;
}
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

static uint64_t get64(const uint8_t *p)
{
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

static void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* Where a JOB's fields are: nodes_missing's 8 words, the string lengths
 * after them, node_bytes after its 188 fixed bytes. */
#define JOB_MISSING             (CTL_HEADER_SIZE + 112)
#define JOB_LENS                (JOB_MISSING + NODESET_WIRE_SIZE)
#define JOB_NODE_BYTES          (CTL_HEADER_SIZE + 194)

/* A set of the nodes whose bits are in @bits (the first 64 nodes). */
static struct nodeset set_of(uint64_t bits)
{
        struct nodeset s = { { bits } };

        return s;
}

/* @s as a JOB carries it, at @p. */
static void put_set(uint8_t *p, const struct nodeset *s)
{
        for (int i = 0; i < NODESET_WORDS; i++)
                put64(p + 8 * i, s->w[i]);
}

/*
 * @buf, an encoded JOB of @len bytes with @from node_bytes, given @to of
 * them instead, each @fill, the header's length kept consistent (its
 * nodes field is the caller's): the new length.
 */
static int job_node_bytes_resize(uint8_t *buf, int len, unsigned int from, unsigned int to, uint64_t fill)
{
        uint8_t *p = buf + JOB_NODE_BYTES;

        memmove(p + 8 * to, p + 8 * from, (size_t)len - JOB_NODE_BYTES - 8 * from);
        for (unsigned int k = 0; k < to; k++)
                put64(p + 8 * k, fill);
        len += 8 * ((int)to - (int)from);
        put32(buf + 8, (uint32_t)(len - CTL_HEADER_SIZE));
        return len;
}

static void msg_reset(struct ctl_msg *m, int type)
{
        memset(m, 0, sizeof(*m));
        m->type = (uint16_t)type;
}

static void stats_sample(struct ctl_msg *m)
{
        msg_reset(m, CTL_STATS_INFO);
        m->stats.uptime_usec = 3723000000ull;
        m->stats.dir[CTL_DIR_RECV] = (struct ctl_stats_dir){ .bytes = 1ull << 40, .files = 7,
                                                             .rate = 104200000, .active = 2 };
        m->stats.dir[CTL_DIR_SEND] = (struct ctl_stats_dir){ .bytes = 100000, .files = 1,
                                                             .rate = 0, .active = 1 };
        m->stats.queued = 3;
        m->stats.ring_held = 12;
        m->stats.ring_slots = 64;
        m->stats.pool_held = 64;
        m->stats.pool_slots = 64;
        m->stats.nreasons = 3;
        m->stats.reason[0] = (struct ctl_stats_reason){ .dir = CTL_DIR_RECV, .count = 1, .name = "exists" };
        m->stats.reason[1] = (struct ctl_stats_reason){ .dir = CTL_DIR_SEND, .count = 1, .name = "exists" };
        m->stats.reason[2] = (struct ctl_stats_reason){ .dir = CTL_DIR_SEND, .count = 1ull << 63,
                                                        .name = "cancelled" };
        m->stats.nrails = 2;
        m->stats.rail[0] = (struct ctl_stats_rail){ .up = 1, .bytes = { 5, 6 }, .name = "rxe_alpha" };
        m->stats.rail[1] = (struct ctl_stats_rail){ .up = 0, .bytes = { 1ull << 40, 0 }, .name = "rxe_alpha2" };
}

static int sample_messages(struct ctl_msg *out)
{
        static const int empty[] = { CTL_LIST, CTL_LIST_END, CTL_OK };
        static const int with_id[] = { CTL_SUBMITTED, CTL_STATUS, CTL_WATCH, CTL_CANCEL };
        int n = 0;

        msg_reset(&out[n], CTL_SUBMIT);
        out[n].submit.port = 7470;
        out[n].submit.flags = CTL_SUBMIT_RETRIES;
        out[n].submit.bwlimit = 8ull << 20;
        out[n].submit.retries = 0x0203;
        out[n].submit.files = 0x0a0b0c0d;
        out[n].submit.job_bytes = 0x1112131415161718ull;
        out[n].submit.mode = 01750;
        out[n].submit.mtime_ns = 0x2122232425262728ull;
        strcpy(out[n].submit.host, "fd00::2");
        strcpy(out[n].submit.name, "backup.tar");
        strcpy(out[n++].submit.route, "198.18.0.3:7471,[fd00::4]");
        for (size_t i = 0; i < sizeof(with_id) / sizeof(with_id[0]); i++) {
                msg_reset(&out[n], with_id[i]);
                out[n++].id = 0x1122334455667788ull + i;
        }
        for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++)
                msg_reset(&out[n++], empty[i]);
        msg_reset(&out[n], CTL_JOB);
        out[n].job.id = 42;
        out[n].job.state = CTL_JOB_DONE;
        out[n].job.status = 11;
        out[n].job.bytes_done = 1000;
        out[n].job.bytes_total = 2000;
        out[n].job.usec = 3000;
        out[n].job.rate = 4000;
        out[n].job.bwlimit = 0x0102030405060708ull;
        out[n].job.attempt = 0x0506;
        out[n].job.attempts = 0x0708;
        out[n].job.retry_usec = 0x1122334455667788ull;
        out[n].job.created_us = 1764963173123456ull;
        out[n].job.started_us = 0x0102030405060708ull;
        out[n].job.ended_us = 0;
        out[n].job.files_done = 0x01020304;
        out[n].job.files_total = 0x05060708;
        out[n].job.files_skipped = 0x0a0b0c0d;
        out[n].job.deleted = 0x24232221;
        /* A chain of 4 that went around node 2 and lost node 4 too. */
        out[n].job.nodes = 4;
        out[n].job.nodes_ok = 2;
        out[n].job.node_failed = 2;
        out[n].job.node_status = 0x0107;
        out[n].job.nodes_missing = set_of(0x0a);
        /* Those that published have every byte, node 2 got some, node 4 none. */
        out[n].job.node_bytes[0] = 2000;
        out[n].job.node_bytes[1] = 700;
        out[n].job.node_bytes[2] = 2000;
        strcpy(out[n].job.route, "[fd00::4]:7470,198.18.0.3:7471,198.18.0.5:7470");
        strcpy(out[n].job.peer, "198.18.0.2:7470");
        strcpy(out[n].job.name, "backup.tar");
        strcpy(out[n].job.text, "checksum mismatch");
        strcpy(out[n].job.node_peer, "[fd00::4]:7470");
        strcpy(out[n++].job.node_text, "file exists");
        msg_reset(&out[n], CTL_ERROR);
        out[n].error.code = -ENOENT;
        strcpy(out[n++].error.text, "no such job");
        msg_reset(&out[n++], CTL_STATS);
        stats_sample(&out[n++]);
        msg_reset(&out[n], CTL_FILE);
        out[n].file.id = 42;
        out[n].file.size = 1ull << 33;
        out[n].file.flags = CTL_FILE_DIR;
        out[n].file.mode = 0755;
        out[n].file.mtime_ns = 0x0102030405060708ull;
        strcpy(out[n++].file.name, "part-0002.parquet");
        msg_reset(&out[n++], CTL_SETTINGS);
        msg_reset(&out[n], CTL_SETTINGS_INFO);
        strcpy(out[n++].settings.peer_names, "%s-ib%d");
        /* A dry run's items (version 10), asked for by the job's id; a
         * file that would be replaced, its sizes and mtimes differing. */
        msg_reset(&out[n], CTL_ITEMS);
        out[n++].id = 0x8877665544332211ull;
        msg_reset(&out[n], CTL_ITEM);
        out[n].item.id = 0x0102030405060708ull;
        out[n].item.seq = 0x11121314;
        out[n].item.verdict = CTL_WOULD_REPLACE;
        out[n].item.kind = CTL_ITEM_FILE;
        memcpy(out[n].item.changes, ".st.x", 6);
        out[n].item.size = 1ull << 40;
        strcpy(out[n++].item.name, "dest/a/changed.txt");
        /* Landing as the user (version 12): where, the credential, the token. */
        msg_reset(&out[n], CTL_SUBMIT);
        out[n].submit.flags = CTL_SUBMIT_LAND | CTL_SUBMIT_LAND_DIR;
        out[n].submit.files = 2;
        out[n].submit.job_bytes = 8192;
        strcpy(out[n].submit.host, "198.18.0.2");
        strcpy(out[n].submit.name, "a.dat");
        strcpy(out[n].submit.land_path, "/scratch/alice/run 1");
        strcpy(out[n].submit.land_cred, "MUNGE:AwQFAAB5cEtu7Jw:");
        for (int i = 0; i < CTL_LAND_TOKEN_SIZE; i++)
                out[n].submit.land_token[i] = (uint8_t)(0xa0 + i);
        n++;
        return n;
}

static void test_states(void)
{
        bool distinct = true;

        for (unsigned int i = 0; i < _CTL_JOB_STATE_MAX; i++)
                for (unsigned int j = 0; j < i; j++)
                        if (!strcmp(ctl_job_state_str(i), ctl_job_state_str(j)))
                                distinct = false;
        ok(distinct, "job state names are distinct");
        is_str(ctl_job_state_str(CTL_JOB_VERIFYING), "verifying", "verifying");
        is_str(ctl_job_state_str(99), "unknown", "unknown state");
        ok(ctl_job_state_final(CTL_JOB_DONE) && ctl_job_state_final(CTL_JOB_FAILED) &&
           ctl_job_state_final(CTL_JOB_CANCELLED), "done/failed/cancelled are final");
        ok(!ctl_job_state_final(CTL_JOB_QUEUED) && !ctl_job_state_final(CTL_JOB_CONNECTING) &&
           !ctl_job_state_final(CTL_JOB_SENDING) && !ctl_job_state_final(CTL_JOB_VERIFYING) &&
           !ctl_job_state_final(CTL_JOB_RETRYING), "the others are not");
        is_str(ctl_job_state_str(CTL_JOB_RETRYING), "retrying", "retrying");
}

static void test_transitions(void)
{
        /* Every legal move, from each state; anything else is refused. */
        static const struct {
                int from;
                const char *to;         /* one letter per state: q c s v d f x r */
        } legal[] = {
                { CTL_JOB_QUEUED, "csvdfx" },
                { CTL_JOB_CONNECTING, "svdfxr" },
                { CTL_JOB_SENDING, "vdfxr" },
                { CTL_JOB_VERIFYING, "dfxr" },
                { CTL_JOB_DONE, "" },
                { CTL_JOB_FAILED, "" },
                { CTL_JOB_CANCELLED, "" },
                { CTL_JOB_RETRYING, "qdfx" },
        };
        static const char letters[_CTL_JOB_STATE_MAX + 1] = "qcsvdfxr";

        for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++) {
                bool right = true;

                for (int to = 0; to < _CTL_JOB_STATE_MAX; to++)
                        if (ctl_job_transition_ok((unsigned int)legal[i].from, (unsigned int)to) !=
                            (strchr(legal[i].to, letters[to]) != NULL))
                                right = false;
                ok(right, "from %s: exactly to \"%s\"", ctl_job_state_str((unsigned int)legal[i].from),
                   legal[i].to);
        }
        ok(!ctl_job_transition_ok(CTL_JOB_QUEUED, CTL_JOB_QUEUED), "no move to the same state");
        ok(!ctl_job_transition_ok(CTL_JOB_RETRYING, CTL_JOB_CONNECTING),
           "a retry queues first: RETRYING never starts directly");
        ok(!ctl_job_transition_ok(_CTL_JOB_STATE_MAX, CTL_JOB_DONE) &&
           !ctl_job_transition_ok(CTL_JOB_QUEUED, _CTL_JOB_STATE_MAX), "unknown states are refused");
}

/* A route of @hops hops, 10.0.0.1:7470 and on. */
static void route_of(char *route, size_t size, unsigned int hops)
{
        char host[24];

        memset(route, 0, size);         /* what a decode leaves past the NUL */
        for (unsigned int i = 0; i < hops; i++) {
                snprintf(host, sizeof(host), "10.0.0.%u", i + 1);
                ctl_route_add(route, size, host, 7470);
        }
}

/* A chain's nodes: what encode and decode both refuse. */
static void test_job_nodes(const struct ctl_msg *sample)
{
        enum { ALL3 = 0x7, AS_NODES = -1 };
        static const uint64_t ALL28 = (UINT64_C(1) << 28) - 1;
        static const struct {
                uint8_t state;
                uint16_t nodes;
                uint64_t missing;               /* the first 64 nodes' bits */
                uint16_t nodes_ok, node_failed;
                int hops;                       /* the route's; AS_NODES: nodes - 1 */
                bool good;
                const char *what;
        } cases[] = {
                { CTL_JOB_DONE, 0, 0, 0, 0, AS_NODES, true, "no chain" },
                { CTL_JOB_DONE, 2, 0, 2, 0, AS_NODES, true, "a chain of 2, both published" },
                { CTL_JOB_DONE, 4, 0x2, 3, 2, AS_NODES, true, "4 nodes, around the failed node 2" },
                { CTL_JOB_DONE, 4, 0xa, 2, 2, AS_NODES, true, "4 nodes, 2 failed, 4 not reached" },
                { CTL_JOB_DONE, 4, 0x4, 3, 0, AS_NODES, true, "4 nodes, node 3 missing, none named" },
                { CTL_JOB_DONE, 28, 1u << 27, 27, 28, AS_NODES, true, "28 nodes, the last failed" },
                { CTL_JOB_DONE, 28, ALL28 & ~UINT64_C(1), 1, 2, AS_NODES, true,
                  "28 nodes, only the peer published" },
                { CTL_JOB_DONE, 64, UINT64_C(1) << 63, 63, 64, AS_NODES, true, "64 nodes, the last failed" },
                { CTL_JOB_FAILED, 28, ALL28, 0, 1, AS_NODES, true, "28 nodes, the first failed" },
                { CTL_JOB_SENDING, 3, ALL3, 0, 0, AS_NODES, true, "3 nodes, not final yet" },
                { CTL_JOB_RETRYING, 3, ALL3, 0, 0, AS_NODES, true, "3 nodes, retrying" },
                { CTL_JOB_CANCELLED, 3, ALL3, 0, 0, AS_NODES, true, "3 nodes, cancelled" },
                { CTL_JOB_DONE, 1, 0, 1, 0, 0, false, "a chain of 1 node" },
                { CTL_JOB_DONE, 29, 0, 29, 0, 27, false, "29 nodes, a route of 27 hops" },
                { CTL_JOB_DONE, 0, 0, 1, 0, 0, false, "no chain, one published" },
                { CTL_JOB_DONE, 0, 0, 0, 1, 0, false, "no chain, one failed" },
                { CTL_JOB_DONE, 0, 1, 0, 0, 0, false, "no chain, one missing" },
                { CTL_JOB_DONE, 0, 0, 0, 0, 1, false, "no chain, a route" },
                { CTL_JOB_DONE, 3, 0, 3, 0, 1, false, "3 nodes, a route of 1 hop" },
                { CTL_JOB_DONE, 3, 0, 3, 0, 3, false, "3 nodes, a route of 3 hops" },
                { CTL_JOB_DONE, 3, 0x8, 2, 0, AS_NODES, false, "a missing bit past the last node" },
                { CTL_JOB_DONE, 28, UINT64_C(1) << 31, 27, 0, AS_NODES, false, "missing bit 31 of 28 nodes" },
                { CTL_JOB_DONE, 28, UINT64_C(1) << 63, 27, 0, AS_NODES, false, "missing bit 63 of 28 nodes" },
                { CTL_JOB_DONE, 3, 0x4, 3, 3, AS_NODES, false, "nodes_ok more than the bits leave" },
                { CTL_JOB_DONE, 3, 0x4, 1, 3, AS_NODES, false, "nodes_ok fewer than the bits leave" },
                { CTL_JOB_DONE, 3, 0x6, 1, 3, AS_NODES, false, "node_failed not the first missing" },
                { CTL_JOB_DONE, 3, 0, 3, 2, AS_NODES, false, "node_failed with none missing" },
                { CTL_JOB_DONE, 3, 0x2, 2, 4, AS_NODES, false, "node_failed past the last node" },
                { CTL_JOB_DONE, 3, ALL3, 0, 1, AS_NODES, false, "done, the peer did not publish" },
                { CTL_JOB_FAILED, 3, 0x6, 1, 2, AS_NODES, false, "failed, the peer published" },
                { CTL_JOB_FAILED, 3, ALL3, 0, 0, AS_NODES, false, "failed, no node named" },
                { CTL_JOB_CANCELLED, 3, ALL3, 0, 1, AS_NODES, false, "cancelled, a node named failed" },
                { CTL_JOB_CANCELLED, 3, 0x6, 1, 2, AS_NODES, false, "cancelled, the peer published" },
                { CTL_JOB_SENDING, 3, 0, 3, 0, AS_NODES, false, "sending, every node published" },
                { CTL_JOB_RETRYING, 3, ALL3, 0, 1, AS_NODES, false, "retrying, a node named failed" },
        };
        uint8_t buf[CTL_MSG_MAX], tmp[CTL_MSG_MAX];
        struct ctl_msg j = *sample, m;
        int len;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int hops = cases[i].hops == AS_NODES ? cases[i].nodes - 1 : cases[i].hops;

                j = *sample;
                j.job.state = cases[i].state;
                j.job.nodes = cases[i].nodes;
                j.job.nodes_missing = set_of(cases[i].missing);
                j.job.nodes_ok = cases[i].nodes_ok;
                j.job.node_failed = cases[i].node_failed;
                route_of(j.job.route, sizeof(j.job.route), hops > 0 ? (unsigned int)hops : 0);
                /* Every byte where a node published, half where not. */
                memset(j.job.node_bytes, 0, sizeof(j.job.node_bytes));
                for (unsigned int k = 0; k < cases[i].nodes && k < CTL_NODES_MAX; k++)
                        j.job.node_bytes[k] = nodeset_has(&j.job.nodes_missing, k) ? j.job.bytes_total / 2
                                                                                   : j.job.bytes_total;
                if (cases[i].good) {
                        int l = ctl_encode(tmp, sizeof(tmp), &j);

                        ok(l > 0 && ctl_decode(tmp, (size_t)l, &m) == 0 && same_msg(&m, &j),
                           "JOB nodes: %s round-trips", cases[i].what);
                } else {
                        is_int(ctl_encode(tmp, sizeof(tmp), &j), -EINVAL, "JOB nodes: %s: encoding is -EINVAL",
                               cases[i].what);
                }
                /* The bytes of a good twin with the same strings, then this case's fields. */
                j.job.state = CTL_JOB_DONE;
                j.job.nodes = hops > 0 ? (uint16_t)(hops + 1) : 0;
                j.job.nodes_missing = set_of(0);
                j.job.nodes_ok = j.job.nodes;
                j.job.node_failed = 0;
                for (unsigned int k = 0; k < CTL_NODES_MAX; k++)
                        j.job.node_bytes[k] = k < j.job.nodes ? j.job.bytes_total : 0;
                len = ctl_encode(tmp, sizeof(tmp), &j);
                /* As many node_bytes as this case's nodes, each the total: none refused for its own. */
                if (len > 0)
                        len = job_node_bytes_resize(tmp, len, j.job.nodes, cases[i].nodes, j.job.bytes_total);
                tmp[CTL_HEADER_SIZE + 8] = cases[i].state;
                put16(tmp + CTL_HEADER_SIZE + 104, cases[i].nodes);
                put16(tmp + CTL_HEADER_SIZE + 106, cases[i].nodes_ok);
                put16(tmp + CTL_HEADER_SIZE + 108, cases[i].node_failed);
                put_set(tmp + JOB_MISSING, &(struct nodeset){ { cases[i].missing } });
                /* A good case made so decodes: only the fields make a bad one bad. */
                is_int(len > 0 ? ctl_decode(tmp, (size_t)len, &m) : len, cases[i].good ? 0 : -EBADMSG,
                       "JOB nodes: %s: decoding is %s", cases[i].what, cases[i].good ? "0" : "-EBADMSG");
        }

        len = ctl_encode(buf, sizeof(buf), sample);
        /* A node_peer_len past its field, the total kept consistent. */
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + JOB_LENS + 6, 14 + 11);
        put16(tmp + JOB_LENS + 8, 0);
        is_int(ctl_decode(tmp, (size_t)len, &m), 0, "moving the node_peer/node_text split decodes");
        is_str(m.job.node_peer, "[fd00::4]:7470file exists", "and node_peer follows its length");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + JOB_LENS + 8, 0xffff);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB node_text_len 65535");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + JOB_LENS + 10, 0xffff);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB route_len 65535");
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 47] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB node_text with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 1] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB route with embedded NUL");
        /* The route's split moved into node_text: a hop short of the nodes. */
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + JOB_LENS + 8, 11 + 15);
        put16(tmp + JOB_LENS + 10, 46 - 15);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB whose route is a hop short of its nodes");
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 4] = 'x';     /* the last hop's port: "x470" */
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB whose route does not parse");
        j = *sample;
        memset(j.job.route, 'r', sizeof(j.job.route));
        is_int(ctl_encode(tmp, sizeof(tmp), &j), -EINVAL, "unterminated route is -EINVAL");
}

/* A chain's bytes per node: what encode and decode both refuse. */
/* @sample's JOB, made one of no chain: no nodes, route or node bytes. */
static void job_no_chain(struct ctl_msg *j, const struct ctl_msg *sample)
{
        *j = *sample;
        j->job.nodes = j->job.nodes_ok = j->job.node_failed = 0;
        j->job.nodes_missing = set_of(0);
        j->job.route[0] = '\0';
        memset(j->job.node_bytes, 0, sizeof(j->job.node_bytes));
}

static void test_job_node_bytes(const struct ctl_msg *sample)
{
        static const struct {
                uint8_t state;
                unsigned int node;              /* 1..: the one to set */
                uint64_t bytes;
                const char *what;
        } bad[] = {
                { CTL_JOB_DONE, 2, 2001, "a missing node's bytes over the total" },
                { CTL_JOB_DONE, 1, 1999, "a published node short of the total" },
                { CTL_JOB_DONE, 3, 0, "a published node with none" },
                { CTL_JOB_SENDING, 4, UINT64_MAX, "a running node's bytes over the total" },
        };
        uint8_t buf[CTL_MSG_MAX + 16], tmp[CTL_MSG_MAX + 16];
        struct ctl_msg j = *sample, m;
        int len, l;

        len = ctl_encode(buf, sizeof(buf), &j);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 && m.job.node_bytes[0] == 2000 &&
           m.job.node_bytes[1] == 700 && m.job.node_bytes[2] == 2000 && m.job.node_bytes[3] == 0 &&
           m.job.node_bytes[4] == 0, "JOB node_bytes: a node each, none past them");

        /* A chain on its way: every node missing, each as far as it got. */
        j.job.state = CTL_JOB_SENDING;
        j.job.nodes_missing = set_of(0xf);
        j.job.nodes_ok = 0;
        j.job.node_failed = 0;
        j.job.node_status = 0;
        memset(j.job.node_peer, 0, sizeof(j.job.node_peer));
        memset(j.job.node_text, 0, sizeof(j.job.node_text));
        j.job.node_bytes[0] = 1500;
        j.job.node_bytes[1] = 1000;
        j.job.node_bytes[2] = 500;
        j.job.node_bytes[3] = 0;
        l = ctl_encode(tmp, sizeof(tmp), &j);
        ok(l > 0 && ctl_decode(tmp, (size_t)l, &m) == 0 && same_msg(&m, &j),
           "JOB node_bytes: a running chain's round-trip");
        j.job.node_bytes[0] = j.job.node_bytes[1] = j.job.node_bytes[2] = j.job.bytes_total;
        l = ctl_encode(tmp, sizeof(tmp), &j);
        ok(l > 0 && ctl_decode(tmp, (size_t)l, &m) == 0 && m.job.node_bytes[2] == 2000,
           "JOB node_bytes: a node with every byte, not yet published");

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                j = *sample;
                if (bad[i].state != CTL_JOB_DONE) {
                        j.job.state = bad[i].state;
                        j.job.nodes_missing = set_of(0xf);
                        j.job.nodes_ok = 0;
                        j.job.node_failed = 0;
                }
                j.job.node_bytes[bad[i].node - 1] = bad[i].bytes;
                is_int(ctl_encode(tmp, sizeof(tmp), &j), -EINVAL, "JOB node_bytes: %s: encoding is -EINVAL",
                       bad[i].what);
                memcpy(tmp, buf, (size_t)len);
                tmp[CTL_HEADER_SIZE + 8] = bad[i].state;
                if (bad[i].state != CTL_JOB_DONE) {
                        put16(tmp + CTL_HEADER_SIZE + 106, 0);
                        put16(tmp + CTL_HEADER_SIZE + 108, 0);
                        put_set(tmp + JOB_MISSING, &(struct nodeset){ { 0xf } });
                }
                /* The total itself is good for any node: only the bytes make it bad. */
                put64(tmp + JOB_NODE_BYTES + 8 * (bad[i].node - 1), 2000);
                l = ctl_decode(tmp, (size_t)len, &m);
                put64(tmp + JOB_NODE_BYTES + 8 * (bad[i].node - 1), bad[i].bytes);
                is_int(l == 0 ? ctl_decode(tmp, (size_t)len, &m) : 1, -EBADMSG,
                       "JOB node_bytes: %s: decoding is -EBADMSG", bad[i].what);
        }

        /* What only the encoder can be asked: bytes for no node. */
        j = *sample;
        j.job.node_bytes[4] = 1;
        is_int(ctl_encode(tmp, sizeof(tmp), &j), -EINVAL, "JOB node_bytes: bytes past the last node: -EINVAL");
        job_no_chain(&j, sample);
        l = ctl_encode(tmp, sizeof(tmp), &j);
        ok(l > 0 && l == len - 4 * 8 - 46 && ctl_decode(tmp, (size_t)l, &m) == 0,
           "JOB node_bytes: no chain, none carried");
        j.job.node_bytes[0] = 1;
        is_int(ctl_encode(tmp, sizeof(tmp), &j), -EINVAL, "JOB node_bytes: no chain with bytes: -EINVAL");

        /* The count of node_bytes is the nodes field's, whatever the length says. */
        memcpy(tmp, buf, (size_t)len);
        l = job_node_bytes_resize(tmp, len, 4, 3, 2000);
        is_int(ctl_decode(tmp, (size_t)l, &m), -EBADMSG, "JOB of 4 nodes with 3 node_bytes");
        memcpy(tmp, buf, (size_t)len);
        l = job_node_bytes_resize(tmp, len, 4, 5, 2000);
        is_int(ctl_decode(tmp, (size_t)l, &m), -EBADMSG, "JOB of 4 nodes with 5 node_bytes");
        memcpy(tmp, buf, (size_t)len);
        l = job_node_bytes_resize(tmp, len, 4, 0, 0);
        is_int(ctl_decode(tmp, (size_t)l, &m), -EBADMSG, "JOB of 4 nodes with none");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + 8, (uint32_t)(len - CTL_HEADER_SIZE - 8));
        is_int(ctl_decode(tmp, (size_t)len - 8, &m), -EBADMSG, "JOB of 4 nodes 8 bytes short of its route");
        /* 0xffff nodes: refused on the count, before any of them is read. */
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + CTL_HEADER_SIZE + 104, 0xffff);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB of 65535 nodes");
        job_no_chain(&j, sample);
        l = ctl_encode(tmp, sizeof(tmp), &j);
        l = l > 0 ? job_node_bytes_resize(tmp, l, 0, 1, 0) : l;
        is_int(l > 0 ? ctl_decode(tmp, (size_t)l, &m) : l, -EBADMSG, "JOB of no chain with a node's bytes");
}

/* SUBMIT's route: built by the client, split by the daemon. */
static void test_route(void)
{
        static const char v6[] = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255";
        static const struct {
                const char *route;
                int n;
                const char *host1;
                uint16_t port1;
        } cases[] = {
                { "", 0, NULL, 0 },
                { "198.18.0.3", 1, "198.18.0.3", 0 },
                { "198.18.0.3:7471", 1, "198.18.0.3", 7471 },
                { "[fd00::4]", 1, "fd00::4", 0 },
                { "[fd00::4]:65535", 1, "fd00::4", 65535 },
                { "fd00::4", 1, "fd00::4", 0 },         /* bare IPv6: no port, as peer.h has it */
                { "198.18.0.3:7471,[fd00::4]:1,10.0.0.1", 3, "198.18.0.3", 7471 },
                { ",198.18.0.3", -EINVAL, NULL, 0 },
                { "198.18.0.3,", -EINVAL, NULL, 0 },
                { "198.18.0.3,,10.0.0.1", -EINVAL, NULL, 0 },
                { "[fd00::4", -EINVAL, NULL, 0 },
                { "[fd00::4]7471", -EINVAL, NULL, 0 },
                { "[fd00::4]:", -EINVAL, NULL, 0 },
                { "[]:7471", -EINVAL, NULL, 0 },
                { "198.18.0.3:0", -EINVAL, NULL, 0 },
                { "198.18.0.3:65536", -EINVAL, NULL, 0 },
                { "198.18.0.3:+1", -EINVAL, NULL, 0 },
                { "198.18.0.3:", -EINVAL, NULL, 0 },
                { ":7471", -EINVAL, NULL, 0 },
                { "a]b", -EINVAL, NULL, 0 },
                { "[a[b]:1", -EINVAL, NULL, 0 },
                { "a23456789012345678901234567890123456789012345678901234", -EINVAL, NULL, 0 },
        };
        struct ctl_hop hops[CTL_ROUTE_HOPS_MAX + 1];
        char route[CTL_ROUTE_MAX + 1] = "", small[32] = "";
        bool all = true;
        int n;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                n = ctl_route_parse(cases[i].route, hops, CTL_ROUTE_HOPS_MAX);
                if (n > 0 && cases[i].host1)
                        ok(n == cases[i].n && !strcmp(hops[0].host, cases[i].host1) &&
                           hops[0].port == cases[i].port1, "route '%s': %d hops, the first %s port %u",
                           cases[i].route, n, hops[0].host, (unsigned int)hops[0].port);
                else
                        is_int(n, cases[i].n, "route '%s'", cases[i].route);
        }
        is_int(ctl_route_parse("10.0.0.1,10.0.0.2", hops, 1), -E2BIG, "more hops than asked for is -E2BIG");

        /* The longest hop there is, CTL_ROUTE_HOPS_MAX times: CTL_ROUTE_MAX exactly. */
        for (int i = 0; i < CTL_ROUTE_HOPS_MAX; i++)
                if (ctl_route_add(route, sizeof(route), v6, 65535) != 0)
                        all = false;
        ok(all && strlen(route) == CTL_ROUTE_MAX, "%d of the longest IPv6 hops fill CTL_ROUTE_MAX (%zu)",
           CTL_ROUTE_HOPS_MAX, strlen(route));
        is_int(ctl_route_add(route, sizeof(route), "10.0.0.1", 0), -E2BIG, "one hop more is -E2BIG");
        n = ctl_route_parse(route, hops, CTL_ROUTE_HOPS_MAX);
        all = n == CTL_ROUTE_HOPS_MAX;
        for (int i = 0; all && i < n; i++)
                all = !strcmp(hops[i].host, v6) && hops[i].port == 65535;
        ok(all, "and parse back as they went in");

        is_int(ctl_route_add(small, sizeof(small), "198.18.0.3", 7471), 0, "an IPv4 hop");
        is_int(ctl_route_add(small, sizeof(small), "fd00::4", 0), 0, "an IPv6 hop, no port");
        is_str(small, "198.18.0.3:7471,[fd00::4]", "comma separated, IPv6 bracketed");
        is_int(ctl_route_add(small, sizeof(small), "198.18.0.5", 7471), -ENAMETOOLONG,
               "a hop that does not fit is -ENAMETOOLONG");
        is_str(small, "198.18.0.3:7471,[fd00::4]", "and leaves the route as it was");
        is_int(ctl_route_add(small, sizeof(small), "", 0), -EINVAL, "an empty host is -EINVAL");
        is_int(ctl_route_add(small, sizeof(small), "a,b", 0), -EINVAL, "a host with a comma is -EINVAL");
        is_int(ctl_route_add(small, sizeof(small), "[a]", 0), -EINVAL, "a host with brackets is -EINVAL");
}

static void test_codec(void)
{
        /* 32 KiB each: not on the stack. */
        static struct ctl_msg msgs[20];
        struct ctl_msg back, m;
        uint8_t buf[CTL_MSG_MAX + 16], tmp[CTL_MSG_MAX + 16];
        int n = sample_messages(msgs);

        for (int i = 0; i < n; i++) {
                int len = ctl_encode(buf, sizeof(buf), &msgs[i]);
                int t = msgs[i].type;
                bool all = true;

                ok(len >= CTL_HEADER_SIZE && len <= CTL_MSG_MAX, "type %d encodes (%d bytes)", t, len);
                is_int(ctl_decode(buf, (size_t)len, &back), 0, "type %d decodes", t);
                ok(same_msg(&back, &msgs[i]), "type %d round-trips", t);

                for (int l = 0; l < len; l++)
                        if (ctl_decode(buf, (size_t)l, &m) != -EBADMSG)
                                all = false;
                ok(all, "type %d truncated at every length is -EBADMSG", t);
                all = true;
                for (int cap = 0; cap < len; cap++)
                        if (ctl_encode(tmp, (size_t)cap, &msgs[i]) != -EMSGSIZE)
                                all = false;
                ok(all, "type %d: every short buffer is -EMSGSIZE", t);

                memcpy(tmp, buf, (size_t)len);
                tmp[len] = 'x';
                is_int(ctl_decode(tmp, (size_t)len + 1, &m), -EBADMSG, "type %d with a trailing byte", t);
                memcpy(tmp, buf, (size_t)len);
                tmp[0] ^= 0xff;
                is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d with wrong magic", t);
                memcpy(tmp, buf, (size_t)len);
                put16(tmp + 4, CTL_VERSION + 1);
                is_int(ctl_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT, "type %d from version 3", t);
                put16(tmp + 4, 1);
                is_int(ctl_decode(tmp, (size_t)len, &m), -EPROTONOSUPPORT, "type %d from version 1", t);
                memcpy(tmp, buf, (size_t)len);
                put32(tmp + 8, (uint32_t)(len - CTL_HEADER_SIZE + 1));
                is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "type %d length field mismatch", t);
        }

        int types[] = { 0, _CTL_TYPE_MAX, 0xffff };
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
                msg_reset(&m, CTL_OK);
                int len = ctl_encode(buf, sizeof(buf), &m);

                put16(buf + 6, (uint16_t)types[i]);
                is_int(ctl_decode(buf, (size_t)len, &m), -EBADMSG, "unknown type %d", types[i]);
        }
        msg_reset(&m, 0);
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "encoding type 0 is -EINVAL");

        /* ITEM: id, seq, verdict, kind, changes[5], size, the name's length, the name;
         * a verdict, a kind or a change letter out of range is refused. */
        {
                struct ctl_msg it;
                int ilen, at = CTL_HEADER_SIZE + 8 + 4;

                msg_reset(&it, CTL_ITEM);
                it.item.id = 7;
                it.item.verdict = CTL_WOULD_DELETE;
                it.item.kind = CTL_ITEM_DIR;
                memcpy(it.item.changes, ".....", 6);
                strcpy(it.item.name, "dest/old");
                ilen = ctl_encode(buf, sizeof(buf), &it);
                is_int(ilen, CTL_HEADER_SIZE + 8 + 4 + 1 + 1 + 5 + 8 + 2 + 8, "ITEM: 29 fixed bytes, then the name");
                memcpy(tmp, buf, (size_t)ilen);
                tmp[at] = _CTL_VERDICT_MAX;
                is_int(ctl_decode(tmp, (size_t)ilen, &m), -EBADMSG, "ITEM: an unknown verdict");
                memcpy(tmp, buf, (size_t)ilen);
                tmp[at + 1] = _CTL_ITEM_KIND_MAX;
                is_int(ctl_decode(tmp, (size_t)ilen, &m), -EBADMSG, "ITEM: an unknown kind");
                memcpy(tmp, buf, (size_t)ilen);
                tmp[at + 2] = 'x';
                is_int(ctl_decode(tmp, (size_t)ilen, &m), -EBADMSG, "ITEM: a change letter out of its place");
                memcpy(tmp, buf, (size_t)ilen);
                tmp[at + 6] = 'x';
                is_int(ctl_decode(tmp, (size_t)ilen, &m), -EBADMSG, "ITEM: 'x' in a deletion's letters");
        }

        /* SUBMIT: port, flags, bwlimit, the lengths, retries, then the strings. */
        struct ctl_msg s = msgs[0];
        int len = ctl_encode(buf, sizeof(buf), &s);
        const int lens = CTL_HEADER_SIZE + 12, host = CTL_HEADER_SIZE + 72;

        is_int(len, host + 7 + 10 + 25, "SUBMIT: 72 fixed bytes, then host, name and route");
        ok(buf[CTL_HEADER_SIZE + 32] == 0xe8 && buf[CTL_HEADER_SIZE + 33] == 0x03 &&
           buf[CTL_HEADER_SIZE + 35] == 0 && buf[CTL_HEADER_SIZE + 36] == 0x28 && buf[CTL_HEADER_SIZE + 43] == 0x21,
           "SUBMIT mode u32 and mtime_ns u64 after route_len, little-endian");
        ok(buf[CTL_HEADER_SIZE + 30] == 25 && buf[CTL_HEADER_SIZE + 31] == 0 &&
           memcmp(buf + host + 17, "198.18.0.3:7471,[fd00::4]", 25) == 0,
           "route_len u16 after job_bytes, the route after the name");
        ok(buf[CTL_HEADER_SIZE + 18] == 0x0d && buf[CTL_HEADER_SIZE + 21] == 0x0a &&
           buf[CTL_HEADER_SIZE + 22] == 0x18 && buf[CTL_HEADER_SIZE + 29] == 0x11,
           "SUBMIT files u32 and job_bytes u64 after retries, little-endian");
        ok(buf[CTL_HEADER_SIZE + 4] == 0 && buf[CTL_HEADER_SIZE + 6] == 0x80 &&
           buf[CTL_HEADER_SIZE + 11] == 0, "SUBMIT bwlimit is a little-endian u64 after flags");

        memcpy(tmp, buf, (size_t)len);
        tmp[host + 2] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "SUBMIT host with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        tmp[host + 7 + 9] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "SUBMIT name with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 1] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "SUBMIT route with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + CTL_HEADER_SIZE + 30, 24);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "SUBMIT route_len one short of the payload");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + lens, 8);    /* host_len +1, name_len -1: same total */
        put16(tmp + lens + 2, 9);
        is_int(ctl_decode(tmp, (size_t)len, &m), 0, "moving the host/name split still decodes");
        is_str(m.submit.host, "fd00::2b", "and the host follows host_len exactly");

        ok(m.submit.flags == CTL_SUBMIT_RETRIES && m.submit.retries == 0x0203,
           "flags and retries little-endian after the lengths");
        ok(buf[CTL_HEADER_SIZE + 16] == 0x03 && buf[CTL_HEADER_SIZE + 17] == 0x02,
           "retries at offset 16, after the lengths");

        /* Landing (version 12): the lengths after mtime_ns, the token, and
         * the path and credential after the route. */
        {
                struct ctl_msg l = msgs[n - 1];
                int ll = ctl_encode(buf, sizeof(buf), &l);
                const int lpath = (int)strlen(l.submit.land_path), lcred = (int)strlen(l.submit.land_cred);

                is_int(ll, host + 10 + 5 + lpath + lcred, "SUBMIT with LAND: its path and credential at the end");
                ok(buf[CTL_HEADER_SIZE + 44] == lpath && buf[CTL_HEADER_SIZE + 45] == 0 &&
                   buf[CTL_HEADER_SIZE + 46] == lcred && buf[CTL_HEADER_SIZE + 47] == 0 &&
                   buf[CTL_HEADER_SIZE + 48] == 0xa0 && buf[CTL_HEADER_SIZE + 63] == 0xaf,
                   "land_path_len, land_cred_len u16 after mtime_ns, then the 16-byte token");
                ok(memcmp(buf + ll - lcred - lpath, "/scratch/alice/run 1", (size_t)lpath) == 0 &&
                   memcmp(buf + ll - lcred, "MUNGE:", 6) == 0, "the path, then the credential, last");
                memcpy(tmp, buf, (size_t)ll);
                tmp[ll - 1] = '\0';
                is_int(ctl_decode(tmp, (size_t)ll, &m), -EBADMSG, "SUBMIT credential with embedded NUL");
                /* A pull (version 13): the way back's three lengths after
                 * the token, its host, path and credential last. */
                l.submit.flags |= CTL_SUBMIT_PULL;
                strcpy(l.submit.back_host, "198.18.0.1");
                strcpy(l.submit.back_path, "/home/alice/in");
                strcpy(l.submit.back_cred, "MUNGE:back:");
                l.submit.back_port = 7472;
                ll = ctl_encode(buf, sizeof(buf), &l);
                is_int(ll, host + 10 + 5 + lpath + lcred + 10 + 14 + 11, "SUBMIT with PULL: the way back at the end");
                ok(buf[CTL_HEADER_SIZE + 64] == 10 && buf[CTL_HEADER_SIZE + 66] == 14 &&
                   buf[CTL_HEADER_SIZE + 68] == 11 && buf[CTL_HEADER_SIZE + 70] == (7472 & 0xff) &&
                   buf[CTL_HEADER_SIZE + 71] == (7472 >> 8) &&
                   memcmp(buf + ll - 35, "198.18.0.1/home/alice/inMUNGE:back:", 35) == 0,
                   "back_host_len, back_path_len, back_cred_len, back_port after the token; the three strings last");
                ok(ctl_decode(buf, (size_t)ll, &m) == 0 && strcmp(m.submit.back_path, "/home/alice/in") == 0 &&
                   m.submit.back_port == 7472 &&
                   strcmp(m.submit.back_cred, "MUNGE:back:") == 0 && strcmp(m.submit.back_host, "198.18.0.1") == 0 &&
                   m.submit.flags == l.submit.flags, "and decodes to the same");
                memcpy(tmp, buf, (size_t)ll);
                put16(tmp + CTL_HEADER_SIZE + 68, 12);
                is_int(ctl_decode(tmp, (size_t)ll, &m), -EBADMSG, "SUBMIT back_cred_len past the payload");
                l = msgs[n - 1];
                ll = ctl_encode(buf, sizeof(buf), &l);
                memcpy(tmp, buf, (size_t)ll);
                put16(tmp + CTL_HEADER_SIZE + 44, (uint16_t)(lpath + 1));
                is_int(ctl_decode(tmp, (size_t)ll, &m), -EBADMSG, "SUBMIT land_path_len past the payload");
                put16(tmp + CTL_HEADER_SIZE + 46, (uint16_t)(lcred - 1));
                is_int(ctl_decode(tmp, (size_t)ll, &m), 0, "moving the path/credential split still decodes");
                msg_reset(&l, CTL_SUBMIT);
                memset(l.submit.land_path, '/', sizeof(l.submit.land_path));
                is_int(ctl_encode(buf, sizeof(buf), &l), -EINVAL, "unterminated land_path is -EINVAL");
                msg_reset(&l, CTL_SUBMIT);
                memset(l.submit.land_cred, 'M', sizeof(l.submit.land_cred));
                is_int(ctl_encode(buf, sizeof(buf), &l), -EINVAL, "unterminated land_cred is -EINVAL");
                len = ctl_encode(buf, sizeof(buf), &s);
        }

        /* A 64-byte host with consistent lengths is still too long. */
        memcpy(tmp, buf, (size_t)host);
        memset(tmp + host, 'h', 64);
        put16(tmp + lens, 64);
        put16(tmp + lens + 2, 0);
        put16(tmp + CTL_HEADER_SIZE + 30, 0);
        put32(tmp + 8, (uint32_t)(host - CTL_HEADER_SIZE + 64));
        is_int(ctl_decode(tmp, host + 64, &m), -EBADMSG, "SUBMIT with a 64-byte host");
        put16(tmp + lens, 63);
        put16(tmp + lens + 2, 1);
        is_int(ctl_decode(tmp, host + 64, &m), 0, "63-byte host is the limit");

        msg_reset(&s, CTL_SUBMIT);
        memset(s.submit.host, 'a', sizeof(s.submit.host));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "unterminated host is -EINVAL");
        msg_reset(&s, CTL_SUBMIT);
        memset(s.submit.name, 'n', sizeof(s.submit.name));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "unterminated name is -EINVAL");
        msg_reset(&s, CTL_SUBMIT);
        memset(s.submit.route, 'r', sizeof(s.submit.route));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "unterminated route is -EINVAL");

        /* Every string at its longest: a route of CTL_ROUTE_MAX bytes still fits. */
        s = msgs[0];
        memset(s.submit.host, 'h', CTL_HOST_MAX);
        memset(s.submit.name, 'n', CTL_NAME_MAX);
        memset(s.submit.route, 'r', CTL_ROUTE_MAX);
        memset(s.submit.land_path, '/', CTL_LAND_PATH_MAX);
        memset(s.submit.land_cred, 'M', CTL_LAND_CRED_MAX);
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len > 0 && len <= CTL_MSG_MAX, "SUBMIT with every string at its limit fits (%d bytes)", len);
        ok(ctl_decode(buf, (size_t)len, &m) == 0 && same_msg(&m, &s), "and round-trips");
        /* One byte more of route, the lengths consistent: too long. */
        memcpy(tmp, buf, (size_t)len);
        tmp[len] = 'r';
        put16(tmp + CTL_HEADER_SIZE + 30, CTL_ROUTE_MAX + 1);
        put32(tmp + 8, (uint32_t)(len + 1 - CTL_HEADER_SIZE));
        is_int(ctl_decode(tmp, (size_t)len + 1, &m), -EBADMSG, "SUBMIT with a route of CTL_ROUTE_MAX + 1 bytes");

        /* The sync flags travel as any SUBMIT flag. */
        s = msgs[0];
        s.submit.flags = CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_DIGEST;
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 &&
           m.submit.flags == (CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_DIGEST) && buf[CTL_HEADER_SIZE + 2] == 0x12,
           "SUBMIT with --sync=digest's flag round-trips, little-endian after port");
        ok((CTL_SUBMIT_SYNC_MASK & (CTL_SUBMIT_RETRIES | CTL_SUBMIT_TREE)) == 0 &&
           (_CTL_SUBMIT_FLAGS & CTL_SUBMIT_SYNC_MASK) == CTL_SUBMIT_SYNC_MASK, "the sync flags are known bits of their own");

        /* JOB. */
        struct ctl_msg j = msgs[8];
        len = ctl_encode(buf, sizeof(buf), &j);
        is_int(len, CTL_HEADER_SIZE + 194 + 4 * 8 + 15 + 10 + 17 + 14 + 11 + 46,
               "JOB: 194 fixed bytes, a u64 per node, then peer, name, text, node_peer, node_text, route, rails, "
               "land_path and back_path");
        memcpy(tmp, buf, (size_t)len);
        ok(tmp[CTL_HEADER_SIZE + 44] == 0x08 && tmp[CTL_HEADER_SIZE + 51] == 0x01,
           "JOB bwlimit is a little-endian u64 after rate");
        ok(tmp[CTL_HEADER_SIZE + 52] == 0x06 && tmp[CTL_HEADER_SIZE + 54] == 0x08 &&
           tmp[CTL_HEADER_SIZE + 56] == 0x88 && tmp[CTL_HEADER_SIZE + 63] == 0x11,
           "then attempt u16, attempts u16 and retry_usec u64, little-endian");
        ok(get64(tmp + CTL_HEADER_SIZE + 64) == 1764963173123456ull &&
           tmp[CTL_HEADER_SIZE + 72] == 0x08 && tmp[CTL_HEADER_SIZE + 79] == 0x01 &&
           get64(tmp + CTL_HEADER_SIZE + 80) == 0,
           "then created_us, started_us and ended_us u64, little-endian (version 9)");
        ok(tmp[CTL_HEADER_SIZE + 88] == 0x04 && tmp[CTL_HEADER_SIZE + 91] == 0x01 &&
           tmp[CTL_HEADER_SIZE + 92] == 0x08 && tmp[CTL_HEADER_SIZE + 95] == 0x05,
           "then files_done u32 and files_total u32, little-endian");
        ok(tmp[CTL_HEADER_SIZE + 96] == 0x0d && tmp[CTL_HEADER_SIZE + 99] == 0x0a,
           "then files_skipped u32, little-endian");
        ok(tmp[CTL_HEADER_SIZE + 100] == 0x21 && tmp[CTL_HEADER_SIZE + 103] == 0x24,
           "then deleted u32, little-endian (version 9)");
        ok(tmp[CTL_HEADER_SIZE + 104] == 4 && tmp[CTL_HEADER_SIZE + 106] == 2 && tmp[CTL_HEADER_SIZE + 108] == 2 &&
           tmp[CTL_HEADER_SIZE + 110] == 0x07 && tmp[CTL_HEADER_SIZE + 111] == 0x01,
           "then nodes, nodes_ok, node_failed and node_status u16, little-endian");
        {
                bool zero = true;

                for (int i = 1; i < NODESET_WIRE_SIZE; i++)
                        zero = zero && tmp[JOB_MISSING + i] == 0;
                ok(tmp[JOB_MISSING] == 0x0a && zero, "then nodes_missing, 8 little-endian u64, lowest first");
        }
        ok(tmp[JOB_LENS] == 15 && tmp[JOB_LENS + 2] == 10 && tmp[JOB_LENS + 4] == 17 &&
           tmp[JOB_LENS + 6] == 14 && tmp[JOB_LENS + 8] == 11 && tmp[JOB_LENS + 10] == 46 &&
           tmp[JOB_LENS + 12] == 0 && tmp[JOB_LENS + 13] == 0 && tmp[JOB_LENS + 14] == 0 && tmp[JOB_LENS + 16] == 0,
           "then the nine string lengths (rails, land_path, back_path empty)");
        {
                struct ctl_msg r = msgs[8];
                int rl;

                snprintf(r.job.rails, sizeof(r.job.rails), "rxe_alpha,rxe_alpha2");
                rl = ctl_encode(tmp, sizeof(tmp), &r);
                ok(rl == len + 20 && memcmp(tmp + rl - 20, "rxe_alpha,rxe_alpha2", 20) == 0 && tmp[JOB_LENS + 12] == 20 &&
                   ctl_decode(tmp, (size_t)rl, &m) == 0 && !strcmp(m.job.rails, "rxe_alpha,rxe_alpha2"),
                   "a JOB's rails come after the route and round-trip (version 14)");
                r = msgs[8];
                r.job.land = CTL_JOB_LAND_PULL;
                snprintf(r.job.land_path, sizeof(r.job.land_path), "/scratch/alice/out.h5");
                snprintf(r.job.back_path, sizeof(r.job.back_path), "/home/alice/in/");
                rl = ctl_encode(tmp, sizeof(tmp), &r);
                ok(rl == len + 21 + 15 && tmp[CTL_HEADER_SIZE + 9] == CTL_JOB_LAND_PULL && tmp[JOB_LENS + 14] == 21 &&
                   tmp[JOB_LENS + 16] == 15 && memcmp(tmp + rl - 36, "/scratch/alice/out.h5/home/alice/in/", 36) == 0 &&
                   ctl_decode(tmp, (size_t)rl, &m) == 0 && m.job.land == CTL_JOB_LAND_PULL &&
                   !strcmp(m.job.land_path, "/scratch/alice/out.h5") && !strcmp(m.job.back_path, "/home/alice/in/"),
                   "a pull's JOB: land (the reserved byte of before), land_path and back_path last (version 15)");
                tmp[CTL_HEADER_SIZE + 9] = CTL_JOB_LAND_PUSH;
                is_int(ctl_decode(tmp, (size_t)rl, &m), -EBADMSG, "a push with a way back is -EBADMSG");
                tmp[CTL_HEADER_SIZE + 9] = _CTL_JOB_LAND_MAX;
                is_int(ctl_decode(tmp, (size_t)rl, &m), -EBADMSG, "an unknown land is -EBADMSG");
                tmp[CTL_HEADER_SIZE + 9] = CTL_JOB_LAND_NONE;
                is_int(ctl_decode(tmp, (size_t)rl, &m), -EBADMSG, "the drop box with paths is -EBADMSG");
                r.job.land = CTL_JOB_LAND_PUSH;
                r.job.back_path[0] = '\0';
                r.job.land_path[0] = 's';
                is_int(ctl_encode(tmp, sizeof(tmp), &r), -EINVAL, "a relative land_path is -EINVAL");
                r.job.land_path[0] = '/';
                rl = ctl_encode(tmp, sizeof(tmp), &r);
                ok(rl > 0 && ctl_decode(tmp, (size_t)rl, &m) == 0 && m.job.land == CTL_JOB_LAND_PUSH &&
                   !m.job.back_path[0], "a push's JOB: its path, no way back");
                memcpy(tmp, buf, (size_t)len);
        }
        ok(tmp[JOB_NODE_BYTES] == 0xd0 && tmp[JOB_NODE_BYTES + 1] == 0x07 && tmp[JOB_NODE_BYTES + 7] == 0 &&
           tmp[JOB_NODE_BYTES + 8] == 0xbc && tmp[JOB_NODE_BYTES + 9] == 0x02 && tmp[JOB_NODE_BYTES + 16] == 0xd0 &&
           tmp[JOB_NODE_BYTES + 24] == 0 && tmp[JOB_NODE_BYTES + 31] == 0,
           "then node_bytes, a little-endian u64 for each of the 4 nodes");
        ok(memcmp(tmp + JOB_NODE_BYTES + 32, "198.18.0.2:7470backup.tar", 25) == 0, "then the peer and the name");
        ok(memcmp(tmp + len - 25 - 46, "[fd00::4]:7470file exists", 25) == 0 &&
           memcmp(tmp + len - 46, "[fd00::4]:7470,198.18.0.3:7471,198.18.0.5:7470", 46) == 0,
           "node_peer and node_text, then the route last");
        tmp[CTL_HEADER_SIZE + 8] = _CTL_JOB_STATE_MAX;
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "JOB with an unknown state");
        j.job.state = _CTL_JOB_STATE_MAX;
        is_int(ctl_encode(buf, sizeof(buf), &j), -EINVAL, "encoding an unknown state is -EINVAL");
        j = msgs[8];
        memset(j.job.text, 't', sizeof(j.job.text));
        is_int(ctl_encode(buf, sizeof(buf), &j), -EINVAL, "unterminated job text is -EINVAL");
        j = msgs[8];
        memset(j.job.node_text, 't', sizeof(j.job.node_text));
        is_int(ctl_encode(buf, sizeof(buf), &j), -EINVAL, "unterminated node_text is -EINVAL");
        j = msgs[8];
        memset(j.job.peer, '1', sizeof(j.job.peer) - 1);
        memset(j.job.name, 'n', CTL_NAME_MAX);
        memset(j.job.text, 't', CTL_TEXT_MAX);
        memset(j.job.node_peer, '1', sizeof(j.job.node_peer) - 1);
        memset(j.job.node_text, 't', CTL_TEXT_MAX);
        /* The longest route: CTL_ROUTE_HOPS_MAX of the longest hops. */
        j.job.route[0] = '\0';
        for (int i = 0; i < CTL_ROUTE_HOPS_MAX; i++)
                ctl_route_add(j.job.route, sizeof(j.job.route), "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
                              65535);
        j.job.nodes = CTL_NODES_MAX;
        j.job.nodes_missing = set_of(0);
        nodeset_add(&j.job.nodes_missing, CTL_NODES_MAX - 1);
        j.job.nodes_ok = CTL_NODES_MAX - 1;
        j.job.node_failed = CTL_NODES_MAX;
        for (int k = 0; k < CTL_NODES_MAX; k++)
                j.job.node_bytes[k] = j.job.bytes_total - (k == CTL_NODES_MAX - 1);
        memset(j.job.rails, 'r', CTL_RAILS_STR_MAX);
        j.job.land = CTL_JOB_LAND_PULL;
        memset(j.job.land_path, '/', CTL_LAND_PATH_MAX);
        memset(j.job.back_path, '/', CTL_LAND_PATH_MAX);
        len = ctl_encode(buf, sizeof(buf), &j);
        ok(len > 0 && len <= CTL_MSG_MAX && strlen(j.job.route) == CTL_ROUTE_MAX,
           "JOB with every string at its limit, a route of %d hops and %d nodes' bytes, fits (%d bytes)",
           CTL_ROUTE_HOPS_MAX, CTL_NODES_MAX, len);
        is_int(ctl_decode(buf, (size_t)len, &m), 0, "and decodes");
        ok(m.job.bwlimit == 0x0102030405060708ull && m.job.attempt == 0x0506 && m.job.attempts == 0x0708 &&
           m.job.retry_usec == 0x1122334455667788ull, "JOB carries bwlimit, attempt, attempts and retry_usec");
        j = msgs[8];
        j.job.state = CTL_JOB_RETRYING;
        j.job.nodes_missing = set_of(0xf);
        j.job.nodes_ok = 0;
        j.job.node_failed = 0;
        len = ctl_encode(buf, sizeof(buf), &j);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 && m.job.state == CTL_JOB_RETRYING,
           "JOB in RETRYING round-trips");
        test_job_nodes(&msgs[8]);
        test_job_node_bytes(&msgs[8]);

        /* ERROR text. */
        struct ctl_msg e = msgs[9];
        len = ctl_encode(buf, sizeof(buf), &e);
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + CTL_HEADER_SIZE + 4, 0xffff);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "ERROR text_len 65535");
        ok(buf[CTL_HEADER_SIZE] == 0xfe && buf[CTL_HEADER_SIZE + 3] == 0xff, "ERROR code is little-endian -errno");

        msg_reset(&m, CTL_OK);
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len == CTL_HEADER_SIZE && memcmp(buf, "XCTL", 4) == 0 && buf[4] == CTL_VERSION && buf[6] == CTL_OK && buf[8] == 0,
           "OK is a bare header: \"XCTL\", the version, type, length 0");

        /* FILE: id, size, name_len, name. */
        struct ctl_msg fm = msgs[12];
        len = ctl_encode(buf, sizeof(buf), &fm);
        is_int(len, CTL_HEADER_SIZE + 32 + 17, "FILE: 32 fixed bytes, then the name");
        ok(buf[CTL_HEADER_SIZE] == 42 && buf[CTL_HEADER_SIZE + 12] == 2 && buf[CTL_HEADER_SIZE + 16] == CTL_FILE_DIR &&
           buf[CTL_HEADER_SIZE + 18] == 17 && buf[CTL_HEADER_SIZE + 20] == 0xed && buf[CTL_HEADER_SIZE + 21] == 0x01 &&
           buf[CTL_HEADER_SIZE + 24] == 0x08 && buf[CTL_HEADER_SIZE + 31] == 0x01 && buf[CTL_HEADER_SIZE + 32] == 'p',
           "FILE: id u64, size u64, flags u16, name_len u16, mode u32, mtime_ns u64, little-endian");
        memcpy(tmp, buf, (size_t)len);
        tmp[len - 1] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "FILE name with embedded NUL");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + CTL_HEADER_SIZE + 18, 18);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "FILE name_len beyond the payload");
        /* A decode fills its type's part, zeroed first, and leaves the rest:
         * the daemon reads a tree's entries one FILE each. */
        memset(&m, 0xa5, sizeof(m));
        is_int(ctl_decode(buf, (size_t)len, &m), 0, "FILE decodes into a message used before");
        ok(same_msg(&m, &fm), "its type and member as sent, the name's tail zeroed");
        ok(ctl_msg_size(CTL_FILE) < sizeof(m) / 4 && ((uint8_t *)&m)[ctl_msg_size(CTL_FILE)] == 0xa5 &&
           ((uint8_t *)&m)[sizeof(m) - 1] == 0xa5, "the rest left as it was (%zu of %zu bytes written)",
           ctl_msg_size(CTL_FILE), sizeof(m));
        msg_reset(&fm, CTL_FILE);
        memset(fm.file.name, 'n', sizeof(fm.file.name));
        is_int(ctl_encode(buf, sizeof(buf), &fm), -EINVAL, "unterminated FILE name is -EINVAL");
        /* A tree's entry of CTL_PATH_MAX bytes (version 11): "DEST/" and 4090 more. */
        memcpy(fm.file.name, "DEST/", 5);
        fm.file.name[CTL_PATH_MAX] = '\0';
        len = ctl_encode(buf, sizeof(buf), &fm);
        is_int(len, CTL_HEADER_SIZE + 32 + CTL_PATH_MAX, "a FILE of a %d-byte path encodes", CTL_PATH_MAX);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 && strlen(m.file.name) == CTL_PATH_MAX &&
           memcmp(m.file.name, "DEST/nnn", 8) == 0, "and comes back whole");
        is_int(ctl_decode(NULL, 0, &m), -EBADMSG, "NULL buffer");
}

/* A route of @hops IPv4 hops with ports, 10.0.x.y:7470 and on. */
static void route_long(char *route, size_t size, unsigned int hops)
{
        char host[24];

        memset(route, 0, size);
        for (unsigned int i = 0; i < hops; i++) {
                snprintf(host, sizeof(host), "10.0.%u.%u", (i + 1) / 256, (i + 1) % 256);
                ctl_route_add(route, size, host, 7470);
        }
}

/* The longest chain: 511 hops after the peer, 512 nodes (version 6). */
static void test_chain_512(void)
{
        static struct ctl_msg s, j, m;
        static uint8_t buf[CTL_MSG_MAX], tmp[CTL_MSG_MAX];
        static char route[CTL_ROUTE_MAX + 32];
        struct ctl_route_iter it;
        struct ctl_hop hop;
        int len, n, r;

        /* SUBMIT: 511 hops go, and come back as they went. */
        msg_reset(&s, CTL_SUBMIT);
        strcpy(s.submit.host, "10.0.0.1");
        strcpy(s.submit.name, "image.raw");
        route_long(s.submit.route, sizeof(s.submit.route), CTL_ROUTE_HOPS_MAX);
        is_int(ctl_route_parse(s.submit.route, NULL, CTL_ROUTE_HOPS_MAX), 511, "a route of 511 hops parses");
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 && same_msg(&m, &s),
           "SUBMIT with a route of 511 hops round-trips (%d bytes)", len);
        is_int(ctl_route_add(s.submit.route, sizeof(s.submit.route), "10.0.2.0", 7470), -E2BIG,
               "a 512th hop is -E2BIG for the client");
        /* One more, written by hand: the daemon's parse refuses it. */
        snprintf(route, sizeof(route), "%s,10.0.2.0:7470", s.submit.route);
        is_int(ctl_route_parse(route, NULL, CTL_ROUTE_HOPS_MAX), -E2BIG, "a route of 512 hops is -E2BIG");
        n = 0;
        it = CTL_ROUTE_ITER(route);
        while ((r = ctl_route_next(&it, &hop)) > 0)
                n++;
        ok(r == 0 && n == 512 && !strcmp(hop.host, "10.0.2.0") && hop.port == 7470,
           "one hop at a time, it is 512 hops, the last 10.0.2.0:7470 (the count is the caller's)");
        it = CTL_ROUTE_ITER("10.0.0.1,");
        ok(ctl_route_next(&it, &hop) == 1 && ctl_route_next(&it, &hop) == -EINVAL,
           "one hop at a time, a trailing comma is -EINVAL");
        it = CTL_ROUTE_ITER("");
        is_int(ctl_route_next(&it, &hop), 0, "one hop at a time, \"\" has none");

        /* JOB: 512 nodes, node 301 failed and went around; the others published. */
        msg_reset(&j, CTL_JOB);
        j.job.id = 7;
        j.job.state = CTL_JOB_DONE;
        j.job.bytes_done = j.job.bytes_total = 1u << 20;
        strcpy(j.job.peer, "10.0.0.1:7470");
        strcpy(j.job.name, "image.raw");
        route_long(j.job.route, sizeof(j.job.route), CTL_ROUTE_HOPS_MAX);
        j.job.nodes = CTL_NODES_MAX;
        nodeset_add(&j.job.nodes_missing, 300);
        j.job.nodes_ok = CTL_NODES_MAX - 1;
        j.job.node_failed = 301;
        j.job.node_status = 7;
        strcpy(j.job.node_peer, "10.0.1.45:7470");
        strcpy(j.job.node_text, "disk full");
        for (unsigned int k = 0; k < CTL_NODES_MAX; k++)
                j.job.node_bytes[k] = k == 300 ? 4096 : j.job.bytes_total;
        len = ctl_encode(buf, sizeof(buf), &j);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &m) == 0 && same_msg(&m, &j),
           "JOB of 512 nodes, node 301 missing, round-trips (%d bytes)", len);
        ok(len > 0 && buf[JOB_MISSING + 8 * 4 + 5] == 0x10, "node 301 is bit 300: word 4, bit 44");
        ok(nodeset_has(&m.job.nodes_missing, 300) && nodeset_count(&m.job.nodes_missing) == 1 &&
           m.job.node_bytes[511] == j.job.bytes_total && m.job.node_bytes[300] == 4096,
           "and decodes to the same set and bytes");

        /* What the codec refuses of it, encoded and as bytes. */
        static const struct {
                unsigned int add;               /* another missing node's bit (0: none) */
                uint16_t nodes_ok, node_failed, nodes;
                const char *what;
        } bad[] = {
                { 400, 510, 401, 512, "node_failed 401, not the lowest missing (301)" },
                { 100, 510, 301, 512, "node_failed 301 with node 101 missing too" },
                { 0, 510, 301, 512, "nodes_ok one fewer than the set leaves" },
                { 0, 511, 0, 512, "node 301 missing, none named (node_failed 0): good" },
                { 0, 300, 301, 300, "a bit at nodes (300 nodes, bit 300)" },
                { 0, 299, 301, 299, "a bit past nodes (299 nodes, bit 300)" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                bool good = bad[i].node_failed == 0;
                struct ctl_msg *b = &s;         /* reused: SUBMIT is done with */

                *b = j;
                if (bad[i].add)
                        nodeset_add(&b->job.nodes_missing, bad[i].add);
                b->job.nodes_ok = bad[i].nodes_ok;
                b->job.node_failed = bad[i].node_failed;
                if (bad[i].nodes != CTL_NODES_MAX) {
                        b->job.nodes = bad[i].nodes;
                        route_long(b->job.route, sizeof(b->job.route), bad[i].nodes - 1u);
                        for (unsigned int k = bad[i].nodes; k < CTL_NODES_MAX; k++)
                                b->job.node_bytes[k] = 0;
                }
                if (bad[i].add)
                        b->job.node_bytes[bad[i].add] = 0;
                r = ctl_encode(tmp, sizeof(tmp), b);
                if (good) {
                        ok(r > 0 && ctl_decode(tmp, (size_t)r, &m) == 0, "JOB of 512 nodes: %s", bad[i].what);
                        continue;
                }
                is_int(r, -EINVAL, "JOB of 512 nodes: %s: encoding is -EINVAL", bad[i].what);
                /* The good one's bytes with this one's fields. */
                memcpy(tmp, buf, (size_t)len);
                put16(tmp + CTL_HEADER_SIZE + 106, b->job.nodes_ok);
                put16(tmp + CTL_HEADER_SIZE + 108, b->job.node_failed);
                put_set(tmp + JOB_MISSING, &b->job.nodes_missing);
                if (bad[i].add)
                        put64(tmp + JOB_NODE_BYTES + 8 * bad[i].add, 0);
                r = len;
                if (bad[i].nodes != CTL_NODES_MAX) {
                        /* As many node_bytes and hops as its nodes: only the set is wrong. */
                        struct ctl_msg g = *b;

                        g.job.nodes_missing = (struct nodeset){ { 0 } };
                        nodeset_add(&g.job.nodes_missing, 1);
                        g.job.nodes_ok = (uint16_t)(g.job.nodes - 1);
                        g.job.node_failed = 2;
                        g.job.node_bytes[1] = 0;
                        r = ctl_encode(tmp, sizeof(tmp), &g);
                        ok(r > 0 && ctl_decode(tmp, (size_t)r, &m) == 0, "JOB of %u nodes, node 2 missing, is good",
                           (unsigned int)g.job.nodes);
                        put16(tmp + CTL_HEADER_SIZE + 106, b->job.nodes_ok);
                        put_set(tmp + JOB_MISSING, &b->job.nodes_missing);
                }
                is_int(r > 0 ? ctl_decode(tmp, (size_t)r, &m) : r, -EBADMSG,
                       "JOB of 512 nodes: %s: decoding is -EBADMSG", bad[i].what);
        }
        /* Not final yet: every node missing, bits 0 .. 511. */
        s = j;
        s.job.state = CTL_JOB_SENDING;
        s.job.nodes_missing = nodeset_first_n(CTL_NODES_MAX);
        s.job.nodes_ok = 0;
        s.job.node_failed = 0;
        for (unsigned int k = 0; k < CTL_NODES_MAX; k++)
                s.job.node_bytes[k] = k;
        r = ctl_encode(tmp, sizeof(tmp), &s);
        ok(r > 0 && ctl_decode(tmp, (size_t)r, &m) == 0 && nodeset_count(&m.job.nodes_missing) == 512,
           "JOB of 512 nodes on its way, every bit set, round-trips");
        s.job.nodes_missing.w[7] &= ~(UINT64_C(1) << 63);
        is_int(ctl_encode(tmp, sizeof(tmp), &s), -EINVAL, "and with node 512's bit clear, not final: -EINVAL");
}

/* SETTINGS_INFO: its layout, and a pattern xferctl would refuse is refused here too. */
static void test_settings(void)
{
        uint8_t buf[CTL_MSG_MAX + 16], tmp[CTL_MSG_MAX + 16];
        struct ctl_msg s, m;
        int len;

        msg_reset(&s, CTL_SETTINGS_INFO);
        strcpy(s.settings.peer_names, "%h-ib");
        len = ctl_encode(buf, sizeof(buf), &s);
        is_int(len, CTL_HEADER_SIZE + 4 + 5, "SETTINGS_INFO: peer_names_len, listen_len, peer_names");
        ok(buf[CTL_HEADER_SIZE] == 5 && buf[CTL_HEADER_SIZE + 1] == 0 && buf[CTL_HEADER_SIZE + 2] == 0 &&
           memcmp(buf + CTL_HEADER_SIZE + 4, "%h-ib", 5) == 0, "peer_names_len little-endian, then the text");

        memcpy(tmp, buf, (size_t)len);
        tmp[CTL_HEADER_SIZE + 4 + 2] = ':';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a pattern with a ':' is refused");
        memcpy(tmp, buf, (size_t)len);
        tmp[CTL_HEADER_SIZE + 4 + 1] = 'x';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a pattern with an unknown escape (%%x-ib)");
        memcpy(tmp, buf, (size_t)len);
        tmp[CTL_HEADER_SIZE + 4 + 1] = '\0';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a pattern with a NUL");
        memcpy(tmp, buf, (size_t)len);
        tmp[CTL_HEADER_SIZE] = 6;
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a length past the end");

        msg_reset(&s, CTL_SETTINGS_INFO);
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len == CTL_HEADER_SIZE + 4 && ctl_decode(buf, (size_t)len, &m) == 0 && m.settings.peer_names[0] == '\0',
           "no peer_names: an empty string, round-trips");
        /* The listen address (version 13), after the pattern. */
        strcpy(s.settings.listen, "198.18.0.1");
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len == CTL_HEADER_SIZE + 4 + 10 && buf[CTL_HEADER_SIZE + 2] == 10 &&
           memcmp(buf + CTL_HEADER_SIZE + 4, "198.18.0.1", 10) == 0 && ctl_decode(buf, (size_t)len, &m) == 0 &&
           strcmp(m.settings.listen, "198.18.0.1") == 0, "listen_len, then listen after peer_names, round-trips");
        memset(s.settings.listen, '1', sizeof(s.settings.listen));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "an unterminated listen is -EINVAL");
        memset(s.settings.listen, 0, sizeof(s.settings.listen));

        memset(s.settings.peer_names, 'a', CTL_PEER_NAMES_MAX);
        memcpy(s.settings.peer_names, "%h", 2);
        s.settings.peer_names[CTL_PEER_NAMES_MAX] = '\0';
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len == CTL_HEADER_SIZE + 4 + CTL_PEER_NAMES_MAX && ctl_decode(buf, (size_t)len, &m) == 0 &&
           same_msg(&m, &s), "the longest pattern round-trips (%d bytes)", len);
        /* One byte more, by hand: the decoder's own bound. */
        memcpy(tmp, buf, (size_t)len);
        tmp[len] = 'a';
        put16(tmp + CTL_HEADER_SIZE, CTL_PEER_NAMES_MAX + 1);
        put32(tmp + 8, (uint32_t)(len + 1 - CTL_HEADER_SIZE));
        is_int(ctl_decode(tmp, (size_t)len + 1, &m), -EBADMSG, "a pattern past CTL_PEER_NAMES_MAX");

        strcpy(s.settings.peer_names, "ib");
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "encoding a pattern that names no host is -EINVAL");
        memset(s.settings.peer_names, 'a', sizeof(s.settings.peer_names));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "encoding an unterminated pattern is -EINVAL");
}

/* STATS_INFO: what the decoder insists on, in encoded form. */
static void test_stats(void)
{
        uint8_t buf[CTL_MSG_MAX + 16], tmp[CTL_MSG_MAX + 16];
        const int reasons = CTL_HEADER_SIZE + 8 + 2 * 28 + 20 + 2;
        struct ctl_msg s, m;
        int len;

        stats_sample(&s);
        len = ctl_encode(buf, sizeof(buf), &s);
        is_int(len, reasons + 3 * 10 + 6 + 6 + 9 + 1 + 2 * 18 + 9 + 10,
               "STATS_INFO: fixed part, then three reasons, then two rails");
        ok(buf[reasons - 2] == 3 && buf[reasons - 1] == 0, "nreasons little-endian");
        ok(buf[reasons] == CTL_DIR_RECV && buf[reasons + 9] == 6 && memcmp(buf + reasons + 10, "exists", 6) == 0,
           "a reason: dir, count, name_len, name");

        memcpy(tmp, buf, (size_t)len);
        tmp[reasons] = _CTL_DIR_MAX;
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a reason of an unknown direction");
        memcpy(tmp, buf, (size_t)len);
        memset(tmp + reasons + 1, 0, 8);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a reason counted 0");
        memcpy(tmp, buf, (size_t)len);
        tmp[reasons + 10] = 'E';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a reason name with a capital");
        memcpy(tmp, buf, (size_t)len);
        tmp[reasons + 10] = '\x1b';
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a reason name with an escape");
        memcpy(tmp, buf, (size_t)len);
        tmp[reasons + 16] = CTL_DIR_RECV;        /* the second "exists" becomes the first's twin */
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "the same (dir, reason) twice");
        memcpy(tmp, buf, (size_t)len);
        tmp[reasons + 9] = 5;                    /* shorter name, one byte left over */
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a name_len one short: the rest is misread");
        memcpy(tmp, buf, (size_t)len);
        tmp[reasons + 9] = 200;
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a name_len past the end");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + reasons - 2, 4);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "nreasons one more than there are");
        memcpy(tmp, buf, (size_t)len);
        put16(tmp + reasons - 2, 0xffff);
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "nreasons 65535");
        memcpy(tmp, buf, (size_t)len);
        put32(tmp + reasons - 2 - 20 + 4 * 3, 65);      /* pool_held 65 of 64 */
        is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "more slots held than the pool has");
        {
                /* The rails (version 14): after the reasons. */
                const int rails = reasons + 3 * 10 + 6 + 6 + 9;

                ok(buf[rails] == 2 && buf[rails + 1] == 1 && buf[rails + 2] == 5 && buf[rails + 10] == 6 &&
                   buf[rails + 18] == 9 && memcmp(buf + rails + 19, "rxe_alpha", 9) == 0 &&
                   buf[rails + 28] == 0 && buf[rails + 29 + 5] == 1,
                   "a rail: up, bytes received and sent (u64 each), name_len, name");
                ok(ctl_decode(buf, (size_t)len, &m) == 0 && m.stats.nrails == 2 && m.stats.rail[1].bytes[0] == 1ull << 40 &&
                   !strcmp(m.stats.rail[1].name, "rxe_alpha2") && m.stats.rail[0].up == 1, "and round-trip");
                memcpy(tmp, buf, (size_t)len);
                tmp[rails + 1] = 2;
                is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a rail neither up nor down");
                memcpy(tmp, buf, (size_t)len);
                tmp[rails] = 3;
                is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "nrails one more than there are");
                memcpy(tmp, buf, (size_t)len);
                tmp[rails + 19 + 3] = ' ';
                is_int(ctl_decode(tmp, (size_t)len, &m), -EBADMSG, "a rail name with a blank");
                stats_sample(&s);
                snprintf(s.stats.rail[1].name, sizeof(s.stats.rail[1].name), "rxe_alpha");
                is_int(ctl_encode(tmp, sizeof(tmp), &s), -EINVAL, "encoding one rail twice is -EINVAL");
                s.stats.rail[1].name[0] = '\0';
                is_int(ctl_encode(tmp, sizeof(tmp), &s), -EINVAL, "encoding a rail with no name is -EINVAL");
                stats_sample(&s);
                s.stats.nrails = CTL_RAILS_MAX + 1;
                is_int(ctl_encode(tmp, sizeof(tmp), &s), -EINVAL, "encoding too many rails is -EINVAL");
                stats_sample(&s);
        }

        s.stats.reason[0].name[0] = '\0';
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "encoding an empty reason name is -EINVAL");
        stats_sample(&s);
        memset(s.stats.reason[0].name, 'a', sizeof(s.stats.reason[0].name));
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "encoding an unterminated reason name is -EINVAL");
        stats_sample(&s);
        s.stats.nreasons = CTL_STATS_REASONS_MAX + 1;
        is_int(ctl_encode(buf, sizeof(buf), &s), -EINVAL, "encoding too many reasons is -EINVAL");

        /* The most a daemon can send: every reason, each name at its longest. */
        stats_sample(&s);
        s.stats.nreasons = CTL_STATS_REASONS_MAX;
        for (int i = 0; i < CTL_STATS_REASONS_MAX; i++) {
                struct ctl_stats_reason *r = &s.stats.reason[i];

                r->dir = (uint8_t)(i % 2);
                r->count = UINT64_MAX;
                memset(r->name, 'z', CTL_REASON_MAX);
                r->name[CTL_REASON_MAX] = '\0';
                r->name[0] = (char)('a' + i / 2);
        }
        len = ctl_encode(buf, sizeof(buf), &s);
        ok(len > 0 && len <= CTL_MSG_MAX, "STATS_INFO at its largest fits (%d bytes)", len);
        ok(ctl_decode(buf, (size_t)len, &m) == 0 && same_msg(&m, &s), "and round-trips");
}

static bool same_file(int a, int b)
{
        struct stat sa, sb;

        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* True when the read end sees EOF, i.e. every copy of the write end is closed. */
static bool pipe_closed(int rfd)
{
        char c;

        return read(rfd, &c, 1) == 0;
}

static int raw_send(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * 4)];
        } control;
        struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (nfds > 0) {
                struct cmsghdr *c;

                memset(&control, 0, sizeof(control));
                msg.msg_control = control.buf;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
                c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
        }
        return sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* A pipe whose write end is passed as an fd; failing to make one fails
 * the test, and the caller skips the checks that needed it. */
static bool test_pipe(int p[2])
{
        if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0)
                return true;
        ok(false, "pipe2: %s", strerror(errno));
        return false;
}

static volatile sig_atomic_t got_alarm;

static void on_alarm(int sig)
{
        got_alarm = 1;
}

static void test_socket(void)
{
        static struct ctl_msg msgs[20];
        struct ctl_msg m;
        char path[] = "/tmp/test-ctl-XXXXXX";
        int sv[2], file, fd, p[2], n;
        uint8_t buf[CTL_MSG_MAX];

        n = sample_messages(msgs);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                ok(false, "socketpair: %s", strerror(errno));
                return;
        }
        file = mkstemp(path);
        unlink(path);

        is_int(ctl_send(sv[0], &msgs[0], file), 0, "SUBMIT sent with an fd");
        fd = -2;
        is_int(ctl_recv(sv[1], &m, &fd), 0, "SUBMIT received");
        ok(same_msg(&m, &msgs[0]), "message intact");
        ok(fd >= 0 && fd != file && same_file(fd, file), "the received fd is the same file (st_dev/st_ino)");
        ok(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "received fd is close-on-exec");
        if (fd >= 0)
                close(fd);

        bool all = true;
        for (int i = 0; i < n; i++) {
                fd = -2;
                if (ctl_send(sv[1], &msgs[i], -1) < 0 || ctl_recv(sv[0], &m, &fd) < 0 ||
                    !same_msg(&m, &msgs[i]) || fd != -1)
                        all = false;
        }
        ok(all, "every message type crosses the socket, no fd attached");

        /* Extra descriptors: the first is kept, the rest closed. */
        if (test_pipe(p)) {
                int two[2] = { file, p[1] };
                int len = ctl_encode(buf, sizeof(buf), &msgs[0]);

                raw_send(sv[0], buf, (size_t)len, two, 2);
                is_int(ctl_recv(sv[1], &m, &fd), 0, "message with two fds received");
                ok(fd >= 0 && same_file(fd, file), "first fd handed out");
                if (fd >= 0)
                        close(fd);
                close(p[1]);
                ok(pipe_closed(p[0]), "second fd was closed, not leaked");
                close(p[0]);
        }

        /* A bad message with an fd attached: error, and the fd is not leaked. */
        if (test_pipe(p)) {
                memcpy(buf, "garbage-garbage", 15);
                raw_send(sv[0], buf, 15, &p[1], 1);
                fd = -2;
                is_int(ctl_recv(sv[1], &m, &fd), -EBADMSG, "garbage is -EBADMSG");
                is_int(fd, -1, "and no fd handed out");
                close(p[1]);
                ok(pipe_closed(p[0]), "the attached fd was closed");
                close(p[0]);
        }

        /* Wrong version: distinguishable so the daemon can say so. */
        int len = ctl_encode(buf, sizeof(buf), &msgs[5]);
        put16(buf + 4, CTL_VERSION + 1);
        raw_send(sv[0], buf, (size_t)len, NULL, 0);
        is_int(ctl_recv(sv[1], &m, &fd), -EPROTONOSUPPORT, "other version is -EPROTONOSUPPORT");

        /* Larger than CTL_MSG_MAX: truncated by the kernel, caught by us. */
        {
                static uint8_t big[CTL_MSG_MAX + 100];

                len = ctl_encode(big, sizeof(big), &msgs[5]);
                raw_send(sv[0], big, sizeof(big), NULL, 0);
                is_int(ctl_recv(sv[1], &m, &fd), -EBADMSG, "oversized datagram is -EBADMSG (MSG_TRUNC)");
        }

        /* The largest JOB there is (test_codec's) crosses, once the send
         * buffer is made room for whatever the host's default. */
        {
                static struct ctl_msg big, back;
                int small = 4096, have = 0;
                socklen_t sl = sizeof(have);

                big = msgs[8];
                memset(big.job.peer, '1', sizeof(big.job.peer) - 1);
                memset(big.job.name, 'n', CTL_NAME_MAX);
                memset(big.job.text, 't', CTL_TEXT_MAX);
                memset(big.job.node_peer, '1', sizeof(big.job.node_peer) - 1);
                memset(big.job.node_text, 't', CTL_TEXT_MAX);
                big.job.route[0] = '\0';
                for (int i = 0; i < CTL_ROUTE_HOPS_MAX; i++)
                        ctl_route_add(big.job.route, sizeof(big.job.route),
                                      "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 65535);
                big.job.nodes = CTL_NODES_MAX;
                big.job.nodes_missing = (struct nodeset){ { 0 } };
                big.job.nodes_ok = CTL_NODES_MAX;
                big.job.node_failed = 0;
                for (int k = 0; k < CTL_NODES_MAX; k++)
                        big.job.node_bytes[k] = big.job.bytes_total;
                len = ctl_encode(buf, sizeof(buf), &big);
                ok(len > 32 * 1024, "the largest JOB is %d bytes", len);
                setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
                is_int(ctl_send(sv[1], &big, -1), -EMSGSIZE, "it does not fit a send buffer of 8 KiB");
                is_int(ctl_socket_setup(sv[1]), 0, "ctl_socket_setup raises the send buffer");
                getsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &have, &sl);
                ok(have >= 2 * CTL_MSG_MAX, "to at least two of the largest messages (%d bytes)", have);
                fd = -2;
                ok(ctl_send(sv[1], &big, -1) == 0 && ctl_recv(sv[0], &back, &fd) == 0 &&
                   same_msg(&back, &big) && fd == -1, "and then it crosses intact");
        }

        /* NULL fd pointer: a passed fd is closed rather than leaked. */
        if (test_pipe(p)) {
                is_int(ctl_send(sv[0], &msgs[0], p[1]), 0, "sent with an fd");
                is_int(ctl_recv(sv[1], &m, NULL), 0, "recv without an fd slot");
                close(p[1]);
                ok(pipe_closed(p[0]), "unwanted fd closed");
                close(p[0]);
        }

        /* EINTR: a signal during a blocking recv is retried, not reported. */
        {
                struct sigaction sa = { .sa_handler = on_alarm }, old;
                struct itimerval it = { .it_value = { .tv_usec = 50000 } };
                pid_t pid;
                int status;

                sigaction(SIGALRM, &sa, &old);  /* no SA_RESTART */
                fflush(stdout);
                pid = fork();
                if (pid == 0) {
                        usleep(300000);
                        _exit(ctl_send(sv[0], &msgs[1], -1) == 0 ? 0 : 1);
                }
                setitimer(ITIMER_REAL, &it, NULL);
                is_int(ctl_recv(sv[1], &m, &fd), 0, "recv survives a signal");
                ok(got_alarm, "the signal did arrive during recv");
                waitpid(pid, &status, 0);
                sigaction(SIGALRM, &old, NULL);
        }

        /* Orderly close. */
        close(sv[0]);
        is_int(ctl_recv(sv[1], &m, &fd), -ECONNRESET, "peer closed is -ECONNRESET");
        is_int(ctl_send(sv[1], &msgs[5], -1), -EPIPE, "send to a closed peer is -EPIPE, no SIGPIPE");
        close(sv[1]);
        close(file);
}

/* What a relay chain carries: one file or one tree, without sync; the
 * daemon's control.c and jobs.c both ask ctl_submit_chain_ok(). */
static void test_chain_kinds(void)
{
        static const struct {
                uint16_t flags;
                uint32_t files;
                bool ok;
                const char *what;
        } cases[] = {
                { 0, 0, true, "one file (files 0)" },
                { 0, 1, true, "one file (files 1)" },
                { CTL_SUBMIT_RETRIES, 1, true, "one file with --retries" },
                { CTL_SUBMIT_TREE, 2, true, "a tree of 2 entries" },
                { CTL_SUBMIT_TREE | CTL_SUBMIT_RETRIES, 100000, true, "a tree of 100000 entries" },
                { 0, 2, false, "several plain files" },
                { CTL_SUBMIT_SKIP_EXISTING, 1, false, "one file with --skip-existing" },
                { CTL_SUBMIT_SYNC_SIZE, 1, false, "one file with --sync=size" },
                { CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_DIGEST, 5, false, "a tree with --sync=digest" },
                { CTL_SUBMIT_TREE | CTL_SUBMIT_SKIP_EXISTING, 5, false, "a tree with --skip-existing" },
                { CTL_SUBMIT_SYNC_SIZE, 3, false, "several files with --sync=size" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct ctl_submit s = { .flags = cases[i].flags, .files = cases[i].files };

                ok(ctl_submit_chain_ok(&s) == cases[i].ok, "a chain %s %s", cases[i].ok ? "carries" : "refuses",
                   cases[i].what);
        }
}

/* Open descriptors of this process: /proc/self/fd's entries. */
static int open_fds(void)
{
        char path[64];
        int n = 0;

        for (int fd = 0; fd < 1024; fd++) {
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                n += access(path, F_OK) == 0;
        }
        return n;
}

/*
 * A tree's FILEs in batches: 70 records (two full batches sent by
 * ctl_batch_add, the rest by ctl_batch_flush), each its own record with
 * its own descriptor, in order; the sender keeps none of them.
 */
static void test_batch(void)
{
        struct ctl_batch *b = malloc(sizeof(*b));
        int sv[2], before, fds[70], got_fd, bad = 0;
        struct ctl_msg m;
        struct stat a, c;

        if (!b || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                ok(false, "socketpair: %s", strerror(errno));
                free(b);
                return;
        }
        /* Room for all 70 records in flight. */
        (void)ctl_socket_setup(sv[0]);
        ctl_batch_init(b, sv[0]);
        for (int i = 0; i < 70; i++) {
                fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
                fstat(fds[i], &a);
        }
        before = open_fds();
        for (int i = 0; i < 70; i++) {
                struct ctl_msg f = { .type = CTL_FILE, .file = { .id = 7, .size = (uint64_t)i } };

                snprintf(f.file.name, sizeof(f.file.name), "dest/f%02d", i);
                if (ctl_batch_add(b, &f, i % 10 == 9 ? -1 : fds[i]) != 0)
                        bad++;
                if (i == 64)
                        is_int(b->n, 1, "a full batch goes as soon as another is added");
        }
        is_int(bad, 0, "70 FILEs added");
        is_int(b->n, 6, "6 held");
        is_int(ctl_batch_flush(b), 0, "flushed");
        is_int(b->n, 0, "none held after");
        is_int(before - open_fds(), 63, "every descriptor taken is closed once sent (63; 7 FILEs had none)");
        bad = 0;
        for (int i = 0; i < 70; i++) {
                got_fd = -2;
                if (ctl_recv(sv[1], &m, &got_fd) != 0 || m.type != CTL_FILE || m.file.size != (uint64_t)i) {
                        bad++;
                        continue;
                }
                if (i % 10 == 9 ? got_fd != -1 : got_fd < 0 || fstat(got_fd, &c) < 0 || c.st_rdev != a.st_rdev)
                        bad++;
                safe_close(got_fd);
        }
        is_int(bad, 0, "received in order, each with its own descriptor (or none)");
        m.type = 0;
        ok(recv(sv[1], &m, sizeof(m), MSG_DONTWAIT) < 0 && errno == EAGAIN, "and nothing more");

        /* A peer gone: -EPIPE, and the caller drops what is held. */
        close(sv[1]);
        {
                struct ctl_msg f = { .type = CTL_FILE, .file = { .id = 7 } };
                int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

                snprintf(f.file.name, sizeof(f.file.name), "dest/x");
                is_int(ctl_batch_add(b, &f, fd), 0, "added while the peer is gone");
                before = open_fds();
                is_int(ctl_batch_flush(b), -EPIPE, "flush: -EPIPE");
                ctl_batch_drop(b);
                is_int(before - open_fds(), 1, "drop closes the descriptor held");
        }
        close(sv[0]);
        free(b);
}

/*
 * A client that closes with a reply of the daemon's unread (xferctl after
 * its last FILE): the kernel leaves ECONNRESET at the daemon's end once,
 * ahead of the FILEs still queued. They are read all the same, then the
 * end: a job is never cancelled for FILEs its client did send (65-tree,
 * CI of 75460fa: "its client went away after 44 of 52 files").
 */
static void test_close_unread(void)
{
        struct ctl_msg m, f = { .type = CTL_FILE, .file = { .id = 7, .size = 1 } };
        struct ctl_msg reply = { .type = CTL_ERROR, .error = { .code = -ECANCELED } };
        int sv[2], got_fd = -1, bad = 0;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                ok(false, "socketpair: %s", strerror(errno));
                return;
        }
        snprintf(f.file.name, sizeof(f.file.name), "dest/f");
        for (int i = 0; i < 3; i++)
                bad += ctl_send(sv[0], &f, -1) != 0;
        bad += ctl_send(sv[1], &reply, -1) != 0;        /* never read by the client */
        close(sv[0]);
        for (int i = 0; i < 3; i++) {
                m.type = 0;
                bad += ctl_recv(sv[1], &m, &got_fd) != 0 || m.type != CTL_FILE;
        }
        is_int(bad, 0, "a client gone with a reply unread: its three FILEs are read all the same");
        is_int(ctl_recv(sv[1], &m, &got_fd), -ECONNRESET, "then the end: -ECONNRESET");
        close(sv[1]);
}

/* Attributes (version 17, xferctl send -X, -A): a FILE's with
 * CTL_FILE_XATTRS, the first file's or DEST's in the SUBMIT. */
static void test_attrs(void)
{
        static struct ctl_msg m, back;
        static uint8_t buf[CTL_MSG_MAX];
        uint8_t x[64];
        size_t xl = 0;
        int len;

        ok(xattrs_put(x, sizeof(x), &xl, "user.k", "v", 1) == 0, "a record");
        msg_reset(&m, CTL_FILE);
        m.file.id = 9;
        m.file.flags = CTL_FILE_XATTRS;
        snprintf(m.file.name, sizeof(m.file.name), "DEST/f");
        memcpy(m.file.xattrs, x, xl);
        m.file.xattrs_len = (uint16_t)xl;
        len = ctl_encode(buf, sizeof(buf), &m);
        is_int(len, (int)(CTL_HEADER_SIZE + 32 + 6 + 2 + xl), "a FILE with attributes: its name, their length, them");
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && same_msg(&back, &m), "and round-trips");
        is_int(ctl_decode(buf, (size_t)len - 1, &back), -EBADMSG, "cut short: -EBADMSG");
        buf[CTL_HEADER_SIZE + 32 + 6 + 2] = 0;  /* a record's empty name */
        is_int(ctl_decode(buf, (size_t)len, &back), -EBADMSG, "malformed records: -EBADMSG");
        m.file.xattrs_len = 0;
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "the flag without attributes: -EINVAL");
        m.file.flags = 0;
        m.file.xattrs_len = (uint16_t)xl;
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "attributes without the flag: -EINVAL");

        msg_reset(&m, CTL_SUBMIT);
        m.submit.flags = CTL_SUBMIT_LAND | CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS;
        m.submit.files = 1;
        snprintf(m.submit.host, sizeof(m.submit.host), "10.0.0.2");
        snprintf(m.submit.name, sizeof(m.submit.name), "f");
        memcpy(m.submit.xattrs, x, xl);
        m.submit.xattrs_len = (uint16_t)xl;
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && same_msg(&back, &m) &&
           back.submit.xattrs_len == xl, "a SUBMIT with its first file's attributes round-trips");
        m.submit.xattrs_len = 0;
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && back.submit.xattrs_len == 0,
           "and with none (the flags, a zero length)");
        m.submit.flags = CTL_SUBMIT_LAND;
        m.submit.xattrs_len = (uint16_t)xl;
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "attributes without -X or -A: -EINVAL");

        /* A deleting tree's rules (version 19), after the attributes' place. */
        msg_reset(&m, CTL_SUBMIT);
        m.submit.flags = CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_DELETE | CTL_SUBMIT_RULES;
        m.submit.files = 3;
        snprintf(m.submit.host, sizeof(m.submit.host), "10.0.0.2");
        snprintf(m.submit.name, sizeof(m.submit.name), "t");
        memcpy(m.submit.rules, "- *.o\n", 6);
        m.submit.rules_len = 6;
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && same_msg(&back, &m) && back.submit.rules_len == 6 &&
           memcmp(back.submit.rules, "- *.o\n", 6) == 0, "a SUBMIT with rules round-trips");
        is_int(ctl_decode(buf, (size_t)len - 1, &back), -EBADMSG, "cut short: -EBADMSG");
        m.submit.rules[2] = '\0';
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "rules with a NUL: -EINVAL");
        m.submit.rules[2] = '*';
        m.submit.flags &= (uint16_t)~CTL_SUBMIT_DELETE;
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "rules without --delete: -EINVAL");
        m.submit.flags |= CTL_SUBMIT_DELETE | CTL_SUBMIT_XATTRS;
        memcpy(m.submit.xattrs, x, xl);
        m.submit.xattrs_len = (uint16_t)xl;
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && same_msg(&back, &m) &&
           back.submit.xattrs_len == xl && back.submit.rules_len == 6, "with attributes too: both round-trip");
        m.submit.flags &= (uint16_t)~CTL_SUBMIT_RULES;
        is_int(ctl_encode(buf, sizeof(buf), &m), -EINVAL, "rules without their flag: -EINVAL");
}

int main(void)
{
        test_states();
        test_transitions();
        test_codec();
        test_route();
        test_chain_512();
        test_chain_kinds();
        test_stats();
        test_settings();
        test_socket();
        test_batch();
        test_close_unread();
        test_attrs();
        return done_testing();
}
