/*
 * Writes one valid message of every type into DIR/wire and DIR/ctl, and
 * the string-carrying ones once more with every string at its longest, so
 * the fuzzers start from inputs that get past the length checks instead of
 * having to discover each exact layout by chance; likewise a record of
 * each kind into DIR/partial (a file's partial, a published file, a kept
 * tree, a published tree) and lists of a tree's entries into DIR/entlist.
 * And one lander message of every type into DIR/landmsg.
 * tests/fuzz/run-fuzz adds them to each run; tests/fuzz/corpus/{wire,ctl,
 * partial,entlist,landmsg} hold a copy from when the formats last changed (entlist's
 * in the byte order of x86, as a list is in its host's). To renew the copy
 * of F (wire, ctl, partial, entlist or landmsg), from the source tree:
 *   fuzz-seeds DIR && rm -f tests/fuzz/corpus/F/seed-?? && cp DIR/F/seed-?? tests/fuzz/corpus/F/
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl.h"
#include "entlist.h"
#include "landmsg.h"
#include "name.h"
#include "pack.h"
#include "partial.h"
#include "wire.h"
#include "xattrs.h"

static int write_seed(const char *dir, const char *sub, int i, const void *buf, int len)
{
        char path[4096];
        FILE *f;

        if (len < 0)
                return -1;
        snprintf(path, sizeof(path), "%s/%s/seed-%02d", dir, sub, i);
        f = fopen(path, "we");
        if (!f)
                return -1;
        fwrite(buf, 1, (size_t)len, f);
        return fclose(f);
}

static int wire_seeds(const char *dir)
{
        uint8_t buf[WIRE_CTRL_MAX];
        struct wire_msg m;
        int i = 0, r = 0;

        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer.chunk_size = 4096;
        m.offer.size = 12345;
        m.offer.lanes = 2;
        m.offer.file = 1;
        m.offer.job_files = 3;
        m.offer.job_bytes = 40000;
        m.offer.flags = WIRE_OFFER_TREE;
        m.offer.mode = 0644;
        m.offer.mtime_ns = 1700000000123456789ull;
        memset(m.offer.source, 0x73, WIRE_SOURCE_SIZE);
        memset(m.offer.nonce, 0x6e, WIRE_NONCE_SIZE);
        memset(m.offer.mac, 0x6d, WIRE_MAC_SIZE);
        strcpy(m.offer.name, "seed.bin");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* A pack of the job's last two entries. */
        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_PACK;
        m.offer.pack_entries = 2;
        m.offer.mode = 0;
        m.offer.mtime_ns = 0;
        memset(m.offer.pack_hash, 0x68, WIRE_PACK_HASH_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* Sync: a file's offer with its digest. */
        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_SYNC | WIRE_OFFER_DIGEST;
        m.offer.pack_entries = 0;
        memset(m.offer.pack_hash, 0, WIRE_PACK_HASH_SIZE);
        memset(m.offer.digest, 0x64, WIRE_DIGEST_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_ACCEPT;
        m.accept.lanes = 2;
        memset(m.accept.mac, 0x6d, WIRE_MAC_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* A resuming ACCEPT, and one for a transfer already published. */
        m.accept.resume[0] = 100;
        m.accept.resume[1] = 3;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        m.accept.flags = WIRE_ACCEPT_PUBLISHED;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* The receiver has it: a skip. */
        memset(m.accept.resume, 0, sizeof(m.accept.resume));
        m.accept.flags = WIRE_ACCEPT_SKIP;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* A first ACCEPT naming the receiver's two rails (version 22). */
        m.accept.flags = WIRE_ACCEPT_RAILS;
        m.accept.nrails = 2;
        m.accept.rails[0] = (struct wire_hop){ .addr = { [10] = 0xff, [11] = 0xff, 10, 1, 0, 2 }, .port = 7470 };
        m.accept.rails[1] = (struct wire_hop){ .addr = { [10] = 0xff, [11] = 0xff, 10, 2, 0, 2 }, .port = 7470 };
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m.accept, 0, sizeof(m.accept));
        m.type = WIRE_CREDIT;
        m.credits = 8;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_REFUSE;
        m.refuse.status = WIRE_E_NAME;
        strcpy(m.refuse.text, "bad name");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_END;
        m.end.bytes = 12345;
        memset(m.end.mac, 0x6d, WIRE_MAC_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_RESULT;
        memset(m.result.mac, 0x6d, WIRE_MAC_SIZE);
        strcpy(m.result.text, "ok");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_WAIT;
        m.wait.file = 3;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* A relay chain (version 10): the route, its offer, a relay's
         * offer, a relay's RESULT that went around a hop, and its PROGRESS;
         * version 11: a later part of a long route, a window of its progress. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_ROUTE;
        m.route.total = 3;
        m.route.hops = 3;
        for (unsigned int k = 0; k < 3; k++) {
                m.route.hop[k].addr[10] = m.route.hop[k].addr[11] = 0xff;
                m.route.hop[k].addr[15] = (uint8_t)(k + 3);
                m.route.hop[k].port = 7470;
        }
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        m.route.total = 40;
        m.route.first = WIRE_ROUTE_PART_MAX;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer.chunk_size = 1 << 20;
        m.offer.size = 3 << 20;
        m.offer.lanes = 2;
        m.offer.job_files = 1;
        m.offer.job_bytes = 3 << 20;
        m.offer.flags = WIRE_OFFER_ROUTE;
        memset(m.offer.route_hash, 0x72, WIRE_ROUTE_HASH_SIZE);
        strcpy(m.offer.name, "image.sif");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* The same file as a middle relay offers it: relayed, the origin's source. */
        m.offer.flags |= WIRE_OFFER_RELAYED;
        memset(m.offer.source, 0x73, WIRE_SOURCE_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_RESULT;
        m.result.hops = 2;
        nodeset_add(&m.result.hop_missing, 0);
        nodeset_add(&m.result.hop_missing, 300);
        m.result.hop_failed = 1;
        m.result.hop_status = WIRE_E_DENIED;
        memset(m.result.mac, 0x6d, WIRE_MAC_SIZE);
        strcpy(m.result.text, "this node does not relay (relay = no)");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_PROGRESS;
        m.progress.total = 3;
        m.progress.hops = 3;
        m.progress.bytes[0] = 3 << 20;
        m.progress.bytes[1] = 1 << 20;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        m.progress.total = 400;
        m.progress.first = 300;
        m.progress.hops = WIRE_PROGRESS_PART_MAX;
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* Version 12: a tree's DEST as a middle relay offers it. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer.chunk_size = 1 << 20;
        m.offer.lanes = 2;
        m.offer.job_files = 40;
        m.offer.job_bytes = 9 << 20;
        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_DIR | WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED;
        memset(m.offer.route_hash, 0x72, WIRE_ROUTE_HASH_SIZE);
        memset(m.offer.source, 0x74, WIRE_SOURCE_SIZE);
        strcpy(m.offer.name, "dataset");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* Version 17: a dry run's entry with --delete, and what it would remove. */
        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_SYNC | WIRE_OFFER_DELETE | WIRE_OFFER_DRY_RUN;
        memset(m.offer.route_hash, 0, WIRE_ROUTE_HASH_SIZE);
        memset(m.offer.source, 0, WIRE_SOURCE_SIZE);
        m.offer.file = 3;
        strcpy(m.offer.name, "dataset/a");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_GONE;
        m.gone.file = 39;
        m.gone.kind = WIRE_GONE_DIR;
        memset(m.gone.mac, 0x6d, WIRE_MAC_SIZE);
        strcpy(m.gone.name, "dataset/old");
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* Version 18: a long path's last part, and the offer it goes before. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_NAME;
        m.name.total = 700;
        m.name.offset = 480;
        m.name.len = 220;
        memset(m.name.bytes, 'p', 220);
        m.name.bytes[100] = '/';
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer.chunk_size = 1 << 20;
        m.offer.lanes = 1;
        m.offer.file = 5;
        m.offer.job_files = 9;
        m.offer.flags = WIRE_OFFER_TREE | WIRE_OFFER_LONG_NAME;
        memset(m.offer.name, 'p', 700);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));

        /* Version 19: a landing, whole (as its LAND parts assemble it), its
         * one part, and the offer it goes before. */
        {
                static struct wire_landing l = { .direction = WIRE_LAND_PUSH, .flags = WIRE_LAND_DIR, .naddrs = 1,
                                                 .addrs = { { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 } },
                                                 .cred = "MUNGE:AwQFAAB5cEtu7Jw:", .path = "/scratch/alice" };
                static uint8_t whole[WIRE_LAND_MAX];
                int len = wire_land_encode(whole, sizeof(whole), &l);

                r |= write_seed(dir, "wire", i++, whole, len);
                /* Version 21: a pull's, its way back after the path. */
                {
                        static struct wire_landing p = {
                                .direction = WIRE_LAND_PULL, .naddrs = 2,
                                .addrs = { { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 },
                                           { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 } },
                                .cred = "MUNGE:AwQFAAB5cEtu7Jw:", .path = "/scratch/alice/a.bin",
                                .back_port = 7470, .back_flags = WIRE_LAND_DIR,
                                .back_addr = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 },
                                .back_cred = "MUNGE:BwQFAAB5cEtu7Jw:", .back_path = "/home/alice/in",
                        };
                        static uint8_t pulled[WIRE_LAND_MAX];

                        r |= write_seed(dir, "wire", i++, pulled, wire_land_encode(pulled, sizeof(pulled), &p));
                }
                memset(&m, 0, sizeof(m));
                m.type = WIRE_LAND;
                m.land.total = (uint16_t)len;
                m.land.len = (uint16_t)len;
                memcpy(m.land.bytes, whole, (size_t)len);
                r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
                memset(&m, 0, sizeof(m));
                m.type = WIRE_OFFER;
                m.offer.chunk_size = 1 << 20;
                m.offer.lanes = 2;
                m.offer.job_files = 1;
                m.offer.size = m.offer.job_bytes = 4096;
                m.offer.flags = WIRE_OFFER_LAND;
                strcpy(m.offer.name, "data.bin");
                r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        }

        /* Longest strings, most lanes. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_OFFER;
        m.offer.chunk_size = 1 << 20;
        m.offer.size = UINT64_MAX;
        m.offer.lanes = WIRE_LANES_MAX;
        m.offer.file = UINT32_MAX - 1;
        m.offer.job_files = UINT32_MAX;
        m.offer.job_bytes = UINT64_MAX;
        memset(m.offer.name, 'n', WIRE_NAME_MAX);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = WIRE_RESULT;
        m.result.status = WIRE_E_CHECKSUM;
        memset(m.result.text, 't', WIRE_TEXT_MAX);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));

        struct wire_hello h = { 0 };
        struct wire_welcome w = { .credits = 4, .slot_size = 4096 };
        struct wire_reject rj = { .status = WIRE_E_BUSY };
        wire_encode_hello(buf, &h);
        r |= write_seed(dir, "wire", i++, buf, WIRE_HELLO_SIZE);
        h = (struct wire_hello){ .flags = WIRE_HELLO_LANE, .lane = 1 };
        wire_encode_hello(buf, &h);
        r |= write_seed(dir, "wire", i++, buf, WIRE_HELLO_SIZE);
        h = (struct wire_hello){ .flags = WIRE_HELLO_LANE | WIRE_HELLO_KEY, .lane = 7 };
        memset(h.token, 0x74, WIRE_TOKEN_SIZE);
        memset(h.tag, 0x67, WIRE_TAG_SIZE);
        wire_encode_hello(buf, &h);
        r |= write_seed(dir, "wire", i++, buf, WIRE_HELLO_SIZE);
        wire_encode_welcome(buf, &w);
        r |= write_seed(dir, "wire", i++, buf, WIRE_WELCOME_SIZE);
        /* A lane joining again, and the welcome that says where it goes on (version 23). */
        h.flags |= WIRE_HELLO_REJOIN;
        wire_encode_hello(buf, &h);
        r |= write_seed(dir, "wire", i++, buf, WIRE_HELLO_SIZE);
        w.resume = 21;
        w.flags = WIRE_WELCOME_ENDED;
        wire_encode_welcome(buf, &w);
        r |= write_seed(dir, "wire", i++, buf, WIRE_WELCOME_SIZE);
        wire_encode_reject(buf, &rj);
        r |= write_seed(dir, "wire", i++, buf, WIRE_REJECT_SIZE);
        /* Version 24: an index pack's NEED. */
        memset(&m, 0, sizeof(m));
        m.type = WIRE_NEED;
        m.need.file = 12;
        m.need.entries = 20;
        m.need.needed = 2;
        m.need.bits[0] = 0x01;
        m.need.bits[2] = 0x08;
        memset(m.need.mac, 0x6e, WIRE_MAC_SIZE);
        r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        /* Version 27: an entry's attributes in an XATTR part, and a
         * landing that carries the first entry's. */
        {
                static struct wire_landing l = { .direction = WIRE_LAND_PUSH,
                                                 .flags = WIRE_LAND_XATTRS | WIRE_LAND_ACLS, .naddrs = 1,
                                                 .addrs = { { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 } },
                                                 .cred = "MUNGE:AwQFAAB5cEtu7Jw:", .path = "/scratch/alice/t" };
                static uint8_t whole[WIRE_LAND_MAX];
                size_t xl = 0;

                (void)xattrs_put(l.xattrs, sizeof(l.xattrs), &xl, "user.origin", "https://x", 9);
                l.xattrs_len = (uint16_t)xl;
                r |= write_seed(dir, "wire", i++, whole, wire_land_encode(whole, sizeof(whole), &l));
                memset(&m, 0, sizeof(m));
                m.type = WIRE_XATTR;
                m.xattr.total = m.xattr.len = (uint16_t)xl;
                memcpy(m.xattr.bytes, l.xattrs, xl);
                r |= write_seed(dir, "wire", i++, buf, wire_encode(buf, sizeof(buf), &m));
        }
        return r;
}

static int ctl_seeds(const char *dir)
{
        static const int simple[] = { CTL_SUBMITTED, CTL_STATUS, CTL_WATCH, CTL_LIST,
                                      CTL_LIST_END, CTL_CANCEL, CTL_OK };
        /* 32 KiB each: not on the stack. */
        static uint8_t buf[CTL_MSG_MAX];
        static struct ctl_msg m;
        int i = 0, r = 0;

        memset(&m, 0, sizeof(m));
        m.type = CTL_SUBMIT;
        strcpy(m.submit.host, "10.0.0.2");
        strcpy(m.submit.name, "seed.bin");
        m.submit.bwlimit = 8u << 20;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        m.submit.flags = CTL_SUBMIT_RETRIES;
        m.submit.retries = 3;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        for (size_t k = 0; k < sizeof(simple) / sizeof(simple[0]); k++) {
                memset(&m, 0, sizeof(m));
                m.type = (uint16_t)simple[k];
                m.id = 7;
                r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        }
        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.state = CTL_JOB_SENDING;
        m.job.bwlimit = 8u << 20;
        strcpy(m.job.peer, "10.0.0.2:7470");
        strcpy(m.job.name, "seed.bin");
        strcpy(m.job.text, "");
        strcpy(m.job.rails, "mlx5_0,mlx5_1");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        m.job.state = CTL_JOB_RETRYING;
        m.job.status = WIRE_E_BUSY;
        m.job.attempt = 2;
        m.job.attempts = 6;
        m.job.retry_usec = 8000000;
        strcpy(m.job.text, "refused by peer: busy");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        /* A chain of 4 that went around its failed node 2: node 4 has it. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.state = CTL_JOB_DONE;
        m.job.nodes = 4;
        nodeset_add(&m.job.nodes_missing, 1);
        m.job.nodes_ok = 3;
        m.job.node_failed = 2;
        m.job.node_status = WIRE_E_EXISTS;
        strcpy(m.job.peer, "10.0.0.2:7470");
        strcpy(m.job.name, "seed.bin");
        strcpy(m.job.node_peer, "10.0.0.3:7470");
        strcpy(m.job.route, "10.0.0.3:7470,[fd00::4]:7470,10.0.0.5:7471");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        /* A pull's JOB (version 15): what it reads there, where it lands. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.land = CTL_JOB_LAND_PULL;
        strcpy(m.job.peer, "10.0.0.2:7470");
        strcpy(m.job.name, "out.h5");
        strcpy(m.job.land_path, "/scratch/alice/out.h5");
        strcpy(m.job.back_path, "/home/alice/in/");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        /* The longest chain (version 6): 512 nodes, node 301 went around. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.state = CTL_JOB_DONE;
        m.job.bytes_done = m.job.bytes_total = 4096;
        m.job.nodes = CTL_NODES_MAX;
        nodeset_add(&m.job.nodes_missing, 300);
        m.job.nodes_ok = CTL_NODES_MAX - 1;
        m.job.node_failed = 301;
        m.job.node_status = WIRE_E_IO;
        strcpy(m.job.peer, "10.0.0.2:7470");
        strcpy(m.job.name, "seed.bin");
        strcpy(m.job.node_peer, "10.0.1.47:7470");
        for (unsigned int k = 0; k < CTL_ROUTE_HOPS_MAX; k++) {
                char host[24];

                snprintf(host, sizeof(host), "10.0.%u.%u", (k + 3) / 256, (k + 3) % 256);
                ctl_route_add(m.job.route, sizeof(m.job.route), host, 7470);
        }
        for (unsigned int k = 0; k < CTL_NODES_MAX; k++)
                m.job.node_bytes[k] = k == 300 ? 1024 : 4096;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_ERROR;
        m.error.code = -EINVAL;
        strcpy(m.error.text, "no");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));

        /* Longest strings. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_SUBMIT;
        m.submit.port = 65535;
        m.submit.bwlimit = UINT64_MAX;
        memset(m.submit.host, 'h', CTL_HOST_MAX);
        memset(m.submit.name, 'n', CTL_NAME_MAX);
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.state = CTL_JOB_FAILED;
        m.job.status = WIRE_E_IO;
        memset(m.job.peer, 'p', sizeof(m.job.peer) - 1);
        memset(m.job.name, 'n', CTL_NAME_MAX);
        memset(m.job.text, 't', CTL_TEXT_MAX);
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));

        /* STATS and its answer, with a reason each way. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_STATS;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_STATS_INFO;
        m.stats.uptime_usec = 60000000;
        m.stats.dir[CTL_DIR_RECV].bytes = 100000;
        m.stats.dir[CTL_DIR_RECV].files = 1;
        m.stats.dir[CTL_DIR_SEND].rate = 1000000;
        m.stats.dir[CTL_DIR_SEND].active = 1;
        m.stats.queued = 2;
        m.stats.ring_held = 8;
        m.stats.ring_slots = 64;
        m.stats.pool_slots = 64;
        m.stats.nreasons = 2;
        m.stats.reason[0] = (struct ctl_stats_reason){ .dir = CTL_DIR_RECV, .count = 1, .name = "exists" };
        m.stats.reason[1] = (struct ctl_stats_reason){ .dir = CTL_DIR_SEND, .count = 3, .name = "cancelled" };
        /* Two rails (version 14), the second down. */
        m.stats.nrails = 2;
        m.stats.rail[0] = (struct ctl_stats_rail){ .up = 1, .bytes = { 100000, 0 }, .name = "mlx5_0" };
        m.stats.rail[1] = (struct ctl_stats_rail){ .up = 0, .bytes = { 0, 0 }, .name = "mlx5_1" };
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));

        /* A job of several files: its SUBMIT and a FILE. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_SUBMIT;
        strcpy(m.submit.host, "198.18.0.2");
        strcpy(m.submit.name, "a.bin");
        m.submit.files = 3;
        m.submit.job_bytes = 3 << 20;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_FILE;
        m.file.id = 7;
        m.file.size = 1 << 20;
        m.file.mode = 0640;
        m.file.mtime_ns = 1700000000123456789ull;
        strcpy(m.file.name, "b.bin");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));

        /* SETTINGS and its answer (version 8): a pattern, and the longest. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_SETTINGS;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_SETTINGS_INFO;
        strcpy(m.settings.peer_names, "%s-ib%d");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(m.settings.peer_names, 'a', CTL_PEER_NAMES_MAX);
        memcpy(m.settings.peer_names, "%h%%", 4);
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));

        /* A dry run's ITEMS and its ITEMs (version 10): a replaced file, a deletion. */
        memset(&m, 0, sizeof(m));
        m.type = CTL_ITEMS;
        m.id = 7;
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = CTL_ITEM;
        m.item.id = 7;
        m.item.verdict = CTL_WOULD_REPLACE;
        memcpy(m.item.changes, "cs..x", 6);
        m.item.size = 4096;
        strcpy(m.item.name, "dest/a/changed.txt");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        m.item.seq = 1;
        m.item.verdict = CTL_WOULD_DELETE;
        m.item.kind = CTL_ITEM_DIR;
        memcpy(m.item.changes, ".....", 6);
        m.item.size = 0;
        strcpy(m.item.name, "dest/old");
        r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        /* Version 17: a FILE with its attributes, a SUBMIT with its first file's. */
        {
                uint8_t x[64];
                size_t xl = 0;

                (void)xattrs_put(x, sizeof(x), &xl, "user.origin", "https://x", 9);
                memset(&m, 0, sizeof(m));
                m.type = CTL_FILE;
                m.file.id = 7;
                m.file.flags = CTL_FILE_XATTRS;
                strcpy(m.file.name, "DEST/x.dat");
                memcpy(m.file.xattrs, x, xl);
                m.file.xattrs_len = (uint16_t)xl;
                r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
                memset(&m, 0, sizeof(m));
                m.type = CTL_SUBMIT;
                m.submit.flags = CTL_SUBMIT_LAND | CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS;
                m.submit.files = 1;
                strcpy(m.submit.host, "10.0.0.2");
                strcpy(m.submit.name, "x.dat");
                strcpy(m.submit.land_path, "/scratch/alice/x.dat");
                strcpy(m.submit.land_cred, "MUNGE:AwQ:");
                m.submit.land_token[0] = 1;
                memcpy(m.submit.xattrs, x, xl);
                m.submit.xattrs_len = (uint16_t)xl;
                r |= write_seed(dir, "ctl", i++, buf, ctl_encode(buf, sizeof(buf), &m));
        }
        return r;
}

static int partial_seed(const char *dir, int i, const struct partial_rec *r)
{
        uint8_t buf[PARTIAL_REC_SIZE];

        /* A seed the decoder refuses would only waste the fuzzer's time. */
        if (partial_check(r) != 0) {
                errno = EINVAL;
                return -1;
        }
        partial_encode(buf, r);
        return write_seed(dir, "partial", i, buf, PARTIAL_REC_SIZE);
}

static int partial_seeds(const char *dir)
{
        static struct partial_rec r;
        int i = 0, rc = 0;
        size_t n;

        /* A file's partial from 10.0.0.2 over 2 lanes, 3 and 5 blocks kept. */
        memset(&r, 0, sizeof(r));
        r.peer[10] = r.peer[11] = 0xff;
        r.peer[12] = 10;
        r.peer[15] = 2;
        memset(r.source, 0x53, sizeof(r.source));
        r.transfer_id = 77;
        r.size = 10 * (uint64_t)WIRE_BLOCK_SIZE + 5;
        r.chunk_size = WIRE_BLOCK_SIZE;
        r.lanes = 2;
        r.created = 1700000000;
        r.updated = 1700000100;
        r.kept[0] = 3;
        r.kept[1] = 5;
        strcpy(r.dest, "big.img");
        rc |= partial_seed(dir, i++, &r);
        /* With a key, every lane, chunks smaller than a block, a tree's entry. */
        memset(r.key_id, 0x4b, sizeof(r.key_id));
        r.size = 64 * (uint64_t)WIRE_BLOCK_SIZE;
        r.chunk_size = 256 << 10;
        r.lanes = WIRE_LANES_MAX;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                r.kept[k] = 4 * k;
        strcpy(r.dest, "runs/2026/set/part-0001.h5");
        rc |= partial_seed(dir, i++, &r);
        /* A relay's offer (no peer), one lane, an empty file. */
        memset(&r.peer, 0, sizeof(r.peer));
        memset(&r.key_id, 0, sizeof(r.key_id));
        memset(r.kept, 0, sizeof(r.kept));
        r.size = 0;
        r.chunk_size = WIRE_BLOCK_SIZE;
        r.lanes = 1;
        strcpy(r.dest, "empty");
        rc |= partial_seed(dir, i++, &r);
        /* Published: the lanes' digests and the file's. */
        r.flags = PARTIAL_PUBLISHED;
        r.peer[10] = r.peer[11] = 0xff;
        r.peer[15] = 9;
        r.size = 3 * (uint64_t)WIRE_BLOCK_SIZE;
        r.lanes = 3;
        for (unsigned int k = 0; k < 3; k++) {
                r.kept[k] = 1;
                memset(r.digest[k], 0x61 + (int)k, WIRE_DIGEST_SIZE);
        }
        memset(r.file_digest, 0x44, sizeof(r.file_digest));
        strcpy(r.dest, "image.sif");
        rc |= partial_seed(dir, i++, &r);

        /* A kept tree: its progress, the boot it holds within. */
        memset(&r, 0, sizeof(r));
        r.flags = PARTIAL_TREE;
        r.peer[10] = r.peer[11] = 0xff;
        r.peer[12] = 10;
        r.peer[15] = 2;
        memset(r.source, 0x74, sizeof(r.source));
        r.transfer_id = 78;
        r.size = 5000000;
        r.chunk_size = WIRE_BLOCK_SIZE;
        r.lanes = 1;
        r.created = 1700000000;
        r.updated = 1700000200;
        r.tree = (struct partial_tree){ .job_files = 10001, .entries = 4321, .offered = 4000000,
                                        .links_len = 77, .published = 4000, .packs = 3, .skipped = 9 };
        memset(r.tree.boot_id, 0xb0, sizeof(r.tree.boot_id));
        strcpy(r.dest, "runs/2026/set");
        rc |= partial_seed(dir, i++, &r);
        /* Published: every entry, and the directory it is. */
        r.flags = PARTIAL_TREE | PARTIAL_PUBLISHED;
        r.tree.entries = r.tree.published = r.tree.job_files;
        r.tree.offered = r.size;
        r.tree.dest_dev = 2049;
        r.tree.dest_ino = 1234567;
        rc |= partial_seed(dir, i++, &r);
        /* The longest DEST: components of 255 bytes. */
        r.flags = PARTIAL_TREE;
        r.tree.published = 10;
        r.tree.dest_dev = r.tree.dest_ino = 0;
        memset(r.dest, 'd', PARTIAL_DEST_MAX);
        r.dest[PARTIAL_DEST_MAX] = '\0';
        for (n = 255; n < PARTIAL_DEST_MAX; n += 256)
                r.dest[n] = '/';
        rc |= partial_seed(dir, i++, &r);
        return rc;
}

static int entlist_seed(const char *dir, int i, const struct entlist *l, uint16_t want)
{
        uint8_t *buf = malloc(2 + l->len);
        int rc;

        if (!buf)
                return -1;
        /* The count of entries asked for, then the list (fuzz-entlist.c). */
        buf[0] = (uint8_t)want;
        buf[1] = (uint8_t)(want >> 8);
        if (l->len)
                memcpy(buf + 2, l->buf, l->len);
        rc = write_seed(dir, "entlist", i, buf, (int)(2 + l->len));
        free(buf);
        return rc;
}

static int entlist_add(struct entlist *l, uint8_t type, const char *name, uint32_t mode, uint64_t size,
                       const char *target)
{
        struct entlist_entry e = { .type = type, .mode = mode, .mtime_ns = 1700000000123456789ull, .size = size,
                                   .name = name, .name_len = strlen(name), .target = target };

        return entlist_put(l, &e);
}

static int entlist_seeds(const char *dir)
{
        static char name[WIRE_NAME_MAX + 1], target[NAME_LINK_MAX + 1];
        struct entlist l = ENTLIST_NULL;
        int i = 0, rc = 0;

        /* A directory, a file, a symlink: all three asked for, then two. */
        rc |= entlist_add(&l, PACK_DIR, "DEST/d", 0755, 0, NULL);
        rc |= entlist_add(&l, PACK_FILE, "DEST/d/f", 0640, 1 << 20, NULL);
        rc |= entlist_add(&l, PACK_LINK, "DEST/l", 0777, 3, "d/f");
        rc |= entlist_seed(dir, i++, &l, 3);
        rc |= entlist_seed(dir, i++, &l, 2);
        /* More than it holds. */
        rc |= entlist_seed(dir, i++, &l, 4);
        entlist_free(&l);
        /* The longest name and target; an empty file, mode 0. */
        memset(name, 'n', WIRE_NAME_MAX);
        memcpy(name, "DEST/", 5);
        memset(target, 't', NAME_LINK_MAX);
        rc |= entlist_add(&l, PACK_FILE, "DEST/empty", 0, 0, NULL);
        rc |= entlist_add(&l, PACK_LINK, name, 0777, NAME_LINK_MAX, target);
        rc |= entlist_seed(dir, i++, &l, 2);
        entlist_free(&l);
        /* A file and a hard link to it. */
        rc |= entlist_add(&l, PACK_FILE, "DEST/f", 0644, 10, NULL);
        rc |= entlist_put(&l, &(struct entlist_entry){ .type = PACK_LINK, .flags = PACK_F_HARD, .name = "DEST/h",
                                                       .name_len = 6, .size = 6, .target = "DEST/f" });
        rc |= entlist_seed(dir, i++, &l, 2);
        entlist_free(&l);
        /* None. */
        rc |= entlist_seed(dir, i++, &l, 0);
        return rc;
}

/* A SESSION of @direction, @flags, for the 198.18.0.2 (and fd00::, with
 * @two) of @token's bytes. */
static void landmsg_seed_session(struct landmsg_session *s, uint8_t direction, uint8_t flags, bool two,
                                 uint8_t token)
{
        s->direction = direction;
        s->flags = flags;
        s->naddrs = two ? 2 : 1;
        memset(s->token, token, sizeof(s->token));
        s->addrs[0][10] = s->addrs[0][11] = 0xff;
        s->addrs[0][12] = 198;
        s->addrs[0][13] = 18;
        s->addrs[0][15] = 2;
        if (two)
                s->addrs[1][0] = 0xfd;
        strcpy(s->cred, "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7y:");
        strcpy(s->dest, "/scratch/alice/run1");
}

static int landmsg_seeds(const char *dir)
{
        static uint8_t buf[LANDMSG_MSG_MAX];
        static struct landmsg m;
        static struct landmsg_op op;
        static const uint16_t ops[] = { LANDMSG_MKDIR, LANDMSG_TMPFILE, LANDMSG_LINK, LANDMSG_OPEN_READ,
                                        LANDMSG_END };
        int i = 0, r = 0;

        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SESSION;
        m.id = 1;
        landmsg_seed_session(&m.session, LANDMSG_PUSH, 0, true, 0x11);
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SESSION_OK;
        m.id = 1;
        m.session_ok = (struct landmsg_session_ok){ .session = 1, .uid = 61001, .gid = 61001, .user = "alice" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
                memset(&m, 0, sizeof(m));
                m.type = ops[k];
                m.id = 2 + (uint32_t)k;
                m.op.session = 1;
                if (ops[k] == LANDMSG_MKDIR || ops[k] == LANDMSG_TMPFILE)
                        m.op.mode = 0640;
                if (ops[k] != LANDMSG_END)
                        strcpy(m.op.path, "sub/.dot/d");
                if (ops[k] == LANDMSG_LINK)
                        strcpy(m.op.leaf, "data.bin");
                r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        }
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_LINK;
        m.op.session = 1;
        m.op.flags = LANDMSG_LINK_REPLACE | LANDMSG_LINK_SYNC;
        strcpy(m.op.leaf, "data.bin");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A tree's file into DEST: staged, its mode and mtime. */
        m.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO | LANDMSG_LINK_MODE | LANDMSG_LINK_MTIME;
        m.op.mode = 0444;
        m.op.mtime_ns = 981173106123456789ull;
        strcpy(m.op.path, "a/b");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_MKDIR;
        m.op.session = 1;
        m.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO;
        m.op.mode = 0700;
        strcpy(m.op.leaf, "run1");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.type = LANDMSG_PUBLISH;
        m.op.flags = LANDMSG_OP_INTO;
        m.op.mode = 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SETATTR;
        m.setattr.session = 1;
        m.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_XATTR;
        m.setattr.mode = 0444;
        m.setattr.mtime_ns = 981173106123456789ull;
        strcpy(m.setattr.xname, "user.rdmaxfer.digest");
        m.setattr.xlen = 4;
        memcpy(m.setattr.xvalue, "abcd", 4);
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SYMLINK;
        m.op.session = 1;
        m.op.flags = LANDMSG_OP_STAGE;
        strcpy(m.op.path, "a");
        strcpy(m.op.leaf, "l");
        strcpy(m.op.target, "../b/f");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.type = LANDMSG_HARDLINK;
        memset(m.op.target, 0, sizeof(m.op.target));
        strcpy(m.op.target, "a/b/f");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_PUBLISH;
        m.op.session = 1;
        m.op.flags = LANDMSG_PUBLISH_REPLACE;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.type = LANDMSG_DISCARD;
        m.op.flags = 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SETATTR;
        m.setattr.session = 1;
        m.setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE;
        m.setattr.mode = 0555;
        strcpy(m.setattr.path, "a/b");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_OK;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.type = LANDMSG_FD;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.type = LANDMSG_ERROR;
        m.error = (struct landmsg_error){ .err = 13, .verdict = 2, .where = "/scratch/evil", .text = "refused" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A tree's chunk: a BATCH of a MKDIR and two TMPFILEs, then one
         * of their LINKs (into DEST, with mode, mtime and digest); FDS. */
        memset(&m, 0, sizeof(m));
        landmsg_batch_init(&m, 1);
        memset(&op, 0, sizeof(op));
        op.session = 1;
        op.flags = LANDMSG_OP_STAGE;
        op.mode = 0700;
        strcpy(op.path, "d");
        r |= landmsg_batch_add(&m, LANDMSG_MKDIR, &op) < 0;
        op.mode = 0600;
        r |= landmsg_batch_add(&m, LANDMSG_TMPFILE, &op) < 0;
        op.path[0] = '\0';
        r |= landmsg_batch_add(&m, LANDMSG_TMPFILE, &op) < 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        landmsg_batch_init(&m, 1);
        op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO | LANDMSG_LINK_MODE | LANDMSG_LINK_MTIME | LANDMSG_LINK_DIGEST;
        op.mode = 0644;
        op.mtime_ns = 1234567890123456789ull;
        strcpy(op.path, "d");
        strcpy(op.leaf, "f0");
        memset(op.target, 'e', 64);
        r |= landmsg_batch_add(&m, LANDMSG_LINK, &op) < 0;
        op.path[0] = '\0';
        strcpy(op.leaf, "f1");
        r |= landmsg_batch_add(&m, LANDMSG_LINK, &op) < 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_FDS;
        m.fds.count = 2;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A pulled tree (version 4): the session that may read one, its
         * WALK, and what the walker says: its count, an entry of each kind. */
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SESSION;
        landmsg_seed_session(&m.session, LANDMSG_PULL, LANDMSG_SESSION_TREE, false, 0x22);
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_WALK;
        m.op.session = 1;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_WALK_HEAD;
        m.walk_head = (struct landmsg_walk_head){ .entries = 4, .bytes = 12345 };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_WALK_ENTRY;
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_DIR, .mode = 0555, .path = ".git",
                                                    .mtime_ns = 981173106123456789ull };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_FILE, .mode = 0444, .size = 12300,
                                                    .path = ".git/HEAD", .mtime_ns = 981173106123456789ull };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_SYMLINK, .size = 10, .path = "l",
                                                    .target = "../up/here" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_HARDLINK, .path = "again",
                                                    .target = ".git/HEAD" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A synced file's look at what is there, in DEST's parent. */
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_LOOK;
        m.op.session = 1;
        m.op.flags = LANDMSG_OP_PARENT;
        strcpy(m.op.leaf, "run1");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A synced tree's (version 5): a look at a path beneath DEST, and
         * the PUBLISH that merges it into the tree there. */
        m.op.flags = 0;
        strcpy(m.op.path, "run1/sub");
        strcpy(m.op.leaf, "f.dat");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_PUBLISH;
        m.op.session = 1;
        m.op.flags = LANDMSG_OP_INTO | LANDMSG_PUBLISH_REPLACE | LANDMSG_PUBLISH_MERGE;
        strcpy(m.op.leaf, "run1");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* ... deleting what the source lacks, and its answer. */
        m.op.flags = LANDMSG_OP_INTO | LANDMSG_PUBLISH_REPLACE | LANDMSG_PUBLISH_DELETE;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_PUBLISHED;
        m.published.deleted = 5;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* A packed file's LINK that keeps the file there, in a BATCH; its answer. */
        landmsg_batch_init(&m, 1);
        memset(&op, 0, sizeof(op));
        op.session = 1;
        op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE | LANDMSG_LINK_KEEP_BYTES;
        op.mode = 0644;
        strcpy(op.path, "d");
        strcpy(op.leaf, "f0");
        r |= landmsg_batch_add(&m, LANDMSG_LINK, &op) < 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_FDS;
        m.fds = (struct landmsg_fds){ .count = 0, .kept = 1 };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* Version 6: a directory made with its attributes, a file linked with its. */
        {
                size_t xl = 0;

                memset(&m, 0, sizeof(m));
                m.type = LANDMSG_MKDIR;
                m.op.session = 1;
                m.op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
                m.op.mode = 0700;
                strcpy(m.op.path, "d");
                (void)xattrs_put(m.op.xattrs, sizeof(m.op.xattrs), &xl, "user.k", "v", 1);
                m.op.xattrs_len = (uint16_t)xl;
                r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
                m.type = LANDMSG_LINK;
                m.op.flags |= LANDMSG_LINK_MODE;
                m.op.mode = 0444;
                strcpy(m.op.leaf, "f");
                r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
                /* Version 7, kept up to date with them: a packed file's
                 * LINK kept only with the same attributes, and a LOOK
                 * that reads them. */
                m.op.flags |= LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_XATTRS;
                r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
                memset(&m, 0, sizeof(m));
                m.type = LANDMSG_LOOK;
                m.op.session = 1;
                m.op.flags = LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
                strcpy(m.op.path, "d");
                strcpy(m.op.leaf, "f");
                r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        }
        /* Version 8, a dry run of --delete: its session, its WALK of the
         * tree in DEST, and the walker's names (a FIFO, a directory's end). */
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_SESSION;
        landmsg_seed_session(&m.session, LANDMSG_PUSH,
                             LANDMSG_SESSION_DRY | LANDMSG_SESSION_SYNC | LANDMSG_SESSION_DELETE, false, 0x23);
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_WALK;
        m.op.session = 1;
        strcpy(m.op.path, "tree");
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_WALK_ENTRY;
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_OTHER, .path = "d/fifo" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        m.walk_entry = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_DIR_END, .path = "d" };
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        /* Version 9, a pack's files made whole: the MEM that hands the
         * pack over, then a BATCH of a MKDIR and two CREATEs (one keeping
         * the file there, one with attributes), and one alone. */
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_MEM;
        landmsg_op_init(&m.op, 1);
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        landmsg_batch_init(&m, 1);
        landmsg_op_init(&op, 1);
        op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO;
        op.mode = 0700;
        strcpy(op.path, "d");
        r |= landmsg_batch_add(&m, LANDMSG_MKDIR, &op) < 0;
        op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO | LANDMSG_LINK_MODE | LANDMSG_LINK_MTIME | LANDMSG_LINK_DIGEST |
                   LANDMSG_LINK_KEEP_BYTES;
        op.mode = 0444;
        op.mtime_ns = 1234567890123456789ull;
        strcpy(op.leaf, ".f0");
        memset(op.target, 'e', 64);
        op.data_off = 4096;
        op.data_len = 4096;
        r |= landmsg_batch_add(&m, LANDMSG_CREATE, &op) < 0;
        op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_OP_XATTRS;
        op.path[0] = '\0';
        strcpy(op.leaf, "f1");
        op.mtime_ns = 0;
        op.data_off = 8192;
        op.data_len = 0;
        {
                size_t xl = 0;

                (void)xattrs_put(op.xattrs, sizeof(op.xattrs), &xl, "user.k", "v", 1);
                op.xattrs_len = (uint16_t)xl;
        }
        r |= landmsg_batch_add(&m, LANDMSG_CREATE, &op) < 0;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        memset(&m, 0, sizeof(m));
        m.type = LANDMSG_CREATE;
        m.op = op;
        r |= write_seed(dir, "landmsg", i++, buf, landmsg_encode(buf, sizeof(buf), &m));
        return r;
}

int main(int argc, char **argv)
{
        static const char *const subs[] = { "wire", "ctl", "partial", "entlist", "landmsg" };
        char path[4096];

        if (argc != 2) {
                fprintf(stderr, "usage: %s DIR\n", argv[0]);
                return 2;
        }
        mkdir(argv[1], 0755);
        for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
                snprintf(path, sizeof(path), "%s/%s", argv[1], subs[k]);
                mkdir(path, 0755);
        }
        if (wire_seeds(argv[1]) != 0 || ctl_seeds(argv[1]) != 0 || partial_seeds(argv[1]) != 0 ||
            entlist_seeds(argv[1]) != 0 || landmsg_seeds(argv[1]) != 0) {
                fprintf(stderr, "%s: cannot write seeds: %s\n", argv[1], strerror(errno));
                return 1;
        }
        return 0;
}
