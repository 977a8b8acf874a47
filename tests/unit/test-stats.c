/* common/stats.c: tallies, reason names, export to STATS_INFO, a snapshot's Prometheus text. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "stats.h"
#include "tap.h"

static void test_tally(void)
{
        struct stats_tally t = { 0 };

        stats_tally_add(&t, false, WIRE_OK, 1000);
        stats_tally_add(&t, false, WIRE_OK, 24);
        stats_tally_add(&t, false, WIRE_E_EXISTS, 5000);
        stats_tally_add(&t, true, WIRE_OK, 5000);
        stats_tally_add(&t, true, WIRE_E_PROTOCOL, 5000);
        stats_tally_add(&t, false, 999, 5000);
        ok(t.done == 2 && t.bytes == 1024, "done: two, their bytes only (%llu)", (unsigned long long)t.bytes);
        ok(t.failed[WIRE_E_EXISTS] == 1, "a refusal counts under its status");
        ok(t.failed[STATS_SLOT_CANCELLED] == 2, "cancelled wins over any status");
        ok(t.failed[STATS_SLOT_UNKNOWN] == 1, "a status from a newer peer: unknown");
        ok(t.failed[WIRE_OK] == 0, "nothing failed as ok");

        is_str(stats_reason_name(WIRE_E_TOO_LARGE), "too_large", "too_large");
        is_str(stats_reason_name(STATS_SLOT_CANCELLED), "cancelled", "cancelled");
        ok(stats_reason_name(WIRE_OK) == NULL && stats_reason_name(STATS_SLOTS) == NULL,
           "no name for ok or past the end");
        bool distinct = true, clean = true;
        for (unsigned int i = 1; i < STATS_SLOTS; i++) {
                const char *a = stats_reason_name(i);

                if (!a || strspn(a, "abcdefghijklmnopqrstuvwxyz_") != strlen(a) || strlen(a) > CTL_REASON_MAX)
                        clean = false;
                for (unsigned int j = 1; j < i; j++)
                        if (a && stats_reason_name(j) && !strcmp(a, stats_reason_name(j)))
                                distinct = false;
        }
        ok(distinct && clean, "every reason named, [a-z_] only, distinct");
}

static void test_export(void)
{
        struct stats_tally rt = { 0 }, st = { 0 };
        struct ctl_msg m = { .type = CTL_STATS_INFO };
        uint8_t buf[CTL_MSG_MAX];
        int len;

        stats_tally_add(&rt, false, WIRE_OK, 100000);
        stats_tally_add(&rt, false, WIRE_E_EXISTS, 5000);
        stats_tally_add(&st, true, WIRE_OK, 1);
        is_int(stats_tally_export(&m.stats, CTL_DIR_RECV, &rt), 0, "export recv");
        is_int(stats_tally_export(&m.stats, CTL_DIR_SEND, &st), 0, "export send");
        ok(m.stats.dir[CTL_DIR_RECV].bytes == 100000 && m.stats.dir[CTL_DIR_RECV].files == 1,
           "bytes and files of what was done");
        is_int(m.stats.nreasons, 2, "only the reasons that happened");
        ok(m.stats.reason[0].dir == CTL_DIR_RECV && !strcmp(m.stats.reason[0].name, "exists") &&
           m.stats.reason[0].count == 1, "recv exists 1");
        ok(m.stats.reason[1].dir == CTL_DIR_SEND && !strcmp(m.stats.reason[1].name, "cancelled"),
           "send cancelled 1");
        is_int(stats_failed_total(&m.stats, CTL_DIR_RECV), 1, "failed total, recv");
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0, "what it exports encodes");

        /* Every reason of both directions at once still fits one message. */
        struct ctl_msg all = { .type = CTL_STATS_INFO };
        for (unsigned int k = 1; k < STATS_SLOTS; k++) {
                stats_tally_add(&rt, false, k < _WIRE_STATUS_MAX ? k : 1000, 0);
                stats_tally_add(&st, k == STATS_SLOT_CANCELLED, k < _WIRE_STATUS_MAX ? k : 1000, 0);
        }
        ok(stats_tally_export(&all.stats, CTL_DIR_RECV, &rt) == 0 &&
           stats_tally_export(&all.stats, CTL_DIR_SEND, &st) == 0, "every reason of both directions exports");
        len = ctl_encode(buf, sizeof(buf), &all);
        ok(len > 0, "and encodes (%d bytes)", len);

        struct ctl_stats full = { .nreasons = CTL_STATS_REASONS_MAX };
        is_int(stats_tally_export(&full, CTL_DIR_RECV, &rt), -E2BIG, "no room left: -E2BIG");
}

static const char expected[] =
        "# HELP rdmaxfer_received_bytes_total Bytes of the files received, verified and published.\n"
        "# TYPE rdmaxfer_received_bytes_total counter\n"
        "rdmaxfer_received_bytes_total 100000\n"
        "# HELP rdmaxfer_sent_bytes_total Bytes of the files sent that the receiver verified and published.\n"
        "# TYPE rdmaxfer_sent_bytes_total counter\n"
        "rdmaxfer_sent_bytes_total 100000\n"
        "# HELP rdmaxfer_transfers_total Finished transfers by direction and result: ok, or why they failed.\n"
        "# TYPE rdmaxfer_transfers_total counter\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"ok\"} 1\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"version\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"protocol\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"busy\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"denied\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"auth\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"name\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"exists\"} 1\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"too_large\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"no_space\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"io\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"checksum\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"size\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"shutdown\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"internal\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"permission\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"recv\",result=\"unknown\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"ok\"} 1\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"version\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"protocol\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"busy\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"denied\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"auth\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"name\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"exists\"} 1\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"too_large\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"no_space\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"io\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"checksum\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"size\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"shutdown\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"internal\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"permission\"} 0\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"unknown\"} 1\n"
        "rdmaxfer_transfers_total{direction=\"send\",result=\"cancelled\"} 1\n"
        "# HELP rdmaxfer_transfers_active Transfers moving data now.\n"
        "# TYPE rdmaxfer_transfers_active gauge\n"
        "rdmaxfer_transfers_active{direction=\"recv\"} 2\n"
        "rdmaxfer_transfers_active{direction=\"send\"} 1\n"
        "# HELP rdmaxfer_rate_bytes_per_second Bytes per second moved by the active transfers over the last second.\n"
        "# TYPE rdmaxfer_rate_bytes_per_second gauge\n"
        "rdmaxfer_rate_bytes_per_second{direction=\"recv\"} 104200000\n"
        "rdmaxfer_rate_bytes_per_second{direction=\"send\"} 51000000\n"
        "# HELP rdmaxfer_jobs_queued Send jobs waiting: for a free transfer slot, or to retry.\n"
        "# TYPE rdmaxfer_jobs_queued gauge\n"
        "rdmaxfer_jobs_queued 3\n"
        "# HELP rdmaxfer_ring_slots Slots of the receive ring (recv) and the send pool (send), held by transfers or free.\n"
        "# TYPE rdmaxfer_ring_slots gauge\n"
        "rdmaxfer_ring_slots{ring=\"recv\",state=\"held\"} 12\n"
        "rdmaxfer_ring_slots{ring=\"recv\",state=\"free\"} 52\n"
        "rdmaxfer_ring_slots{ring=\"send\",state=\"held\"} 16\n"
        "rdmaxfer_ring_slots{ring=\"send\",state=\"free\"} 48\n"
        "# HELP rdmaxfer_uptime_seconds Seconds since the daemon started.\n"
        "# TYPE rdmaxfer_uptime_seconds gauge\n"
        "rdmaxfer_uptime_seconds 3723.456\n"
        ;

static void sample(struct stats_snapshot *s)
{
        struct stats_tally *rt = &s->dir[STATS_DIR_RECV].tally, *st = &s->dir[STATS_DIR_SEND].tally;

        memset(s, 0, sizeof(*s));
        stats_tally_add(rt, false, WIRE_OK, 100000);
        stats_tally_add(rt, false, WIRE_E_EXISTS, 5000);
        stats_tally_add(st, false, WIRE_OK, 100000);
        stats_tally_add(st, false, WIRE_E_EXISTS, 5000);
        stats_tally_add(st, true, WIRE_OK, 5000);
        stats_tally_add(st, false, 200, 5000);
        s->uptime_usec = 3723456789;
        s->dir[STATS_DIR_RECV].rate = 104200000;
        s->dir[STATS_DIR_RECV].active = 2;
        s->dir[STATS_DIR_SEND].rate = 51000000;
        s->dir[STATS_DIR_SEND].active = 1;
        s->queued = 3;
        s->ring_held = 12;
        s->ring_slots = 64;
        s->pool_held = 16;
        s->pool_slots = 64;
}

static void test_prometheus(void)
{
        char buf[STATS_TEXT_MAX];
        struct stats_snapshot s;
        int len;

        sample(&s);
        len = stats_prometheus(buf, sizeof(buf), &s);
        is_int(len, (long long)strlen(expected), "the text's length");
        if (!is_str(buf, expected, "the exact text"))
                diag("got:\n%s", buf);
        is_int(stats_prometheus(buf, (size_t)len, &s), -ENOSPC, "one byte short (the NUL): -ENOSPC");
        is_int(stats_prometheus(buf, (size_t)len + 1, &s), len, "exactly enough");
        is_int(stats_prometheus(buf, 0, &s), -ENOSPC, "no room at all");

        /* Each reason's series counts its own tally slot. */
        s.dir[STATS_DIR_RECV].tally.failed[WIRE_E_IO] = 4;
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0 && strstr(buf, "rdmaxfer_transfers_total{direction=\"recv\",result=\"io\"} 4\n"),
           "a reason's count is its slot's");
        ok(!strstr(buf, "direction=\"recv\",result=\"cancelled\""), "a receiver has no cancelled series");

        /* Every sample line: a name, optional labels, one space, a number; a TYPE before each family. */
        bool good = true;
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] == '#')
                        continue;
                const char *sp = strrchr(line, ' ');
                if (!sp || strncmp(line, "rdmaxfer_", 9) || strspn(sp + 1, "0123456789.") != strlen(sp + 1))
                        good = false;
        }
        ok(good, "every sample line is NAME{LABELS} NUMBER");

        /* A big ring and every counter at its largest still fit STATS_TEXT_MAX. */
        memset(&s, 0xff, sizeof(s));
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0, "the largest snapshot fits STATS_TEXT_MAX (%d bytes)", len);
}

int main(void)
{
        test_tally();
        test_export();
        test_prometheus();
        return done_testing();
}
