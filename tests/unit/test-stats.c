/* common/stats.c: tallies, reason names, export to STATS_INFO, a snapshot's Prometheus text. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "macro.h"
#include "stats.h"
#include "tap.h"

static void test_tally(void)
{
        struct stats_tally t = { 0 };

        stats_tally_add(&t, false, WIRE_OK, 1000, 0);
        stats_tally_add(&t, false, WIRE_OK, 24, 0);
        stats_tally_add(&t, false, WIRE_E_EXISTS, 5000, 0);
        stats_tally_add(&t, true, WIRE_OK, 5000, 0);
        stats_tally_add(&t, true, WIRE_E_PROTOCOL, 5000, 0);
        stats_tally_add(&t, false, 999, 5000, 0);
        ok(t.done == 2 && t.bytes == 1024, "done: two, their bytes only (%llu)", (unsigned long long)t.bytes);
        is_int(t.files, 2, "a file each");
        stats_tally_add_files(&t, false, WIRE_OK, 76, 0, 40);
        stats_tally_add_files(&t, false, WIRE_E_IO, 76, 0, 40);
        ok(t.done == 3 && t.files == 42 && t.bytes == 1100, "a job of 40 files: one transfer, 40 files");
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

        stats_tally_add(&rt, false, WIRE_OK, 100000, 0);
        stats_tally_add(&rt, false, WIRE_E_EXISTS, 5000, 0);
        stats_tally_add(&st, true, WIRE_OK, 1, 0);
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
                stats_tally_add(&rt, false, k < _WIRE_STATUS_MAX ? k : 1000, 0, 0);
                stats_tally_add(&st, k == STATS_SLOT_CANCELLED, k < _WIRE_STATUS_MAX ? k : 1000, 0, 0);
        }
        ok(stats_tally_export(&all.stats, CTL_DIR_RECV, &rt) == 0 &&
           stats_tally_export(&all.stats, CTL_DIR_SEND, &st) == 0, "every reason of both directions exports");
        len = ctl_encode(buf, sizeof(buf), &all);
        ok(len > 0, "and encodes (%d bytes)", len);

        struct ctl_stats full = { .nreasons = CTL_STATS_REASONS_MAX };
        is_int(stats_tally_export(&full, CTL_DIR_RECV, &rt), -E2BIG, "no room left: -E2BIG");
}

static const char expected[] =
        "# HELP rdmaxfer_transferred_bytes_total Data bytes moved on the wire by every transfer, running or ended, whatever its result.\n"
        "# TYPE rdmaxfer_transferred_bytes_total counter\n"
        "rdmaxfer_transferred_bytes_total{direction=\"recv\"} 123456789\n"
        "rdmaxfer_transferred_bytes_total{direction=\"send\"} 987654321\n"
        "# HELP rdmaxfer_received_bytes_total Bytes of the files received, verified and published.\n"
        "# TYPE rdmaxfer_received_bytes_total counter\n"
        "rdmaxfer_received_bytes_total 100000\n"
        "# HELP rdmaxfer_sent_bytes_total Bytes of the files sent that the receiver verified and published.\n"
        "# TYPE rdmaxfer_sent_bytes_total counter\n"
        "rdmaxfer_sent_bytes_total 100000\n"
        "# HELP rdmaxfer_files_total Files (a tree's entries) of the transfers done, by direction.\n"
        "# TYPE rdmaxfer_files_total counter\n"
        "rdmaxfer_files_total{direction=\"recv\"} 1\n"
        "rdmaxfer_files_total{direction=\"send\"} 7\n"
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
        "# HELP rdmaxfer_transfer_duration_seconds Finished transfers, done or failed, by the seconds they ran.\n"
        "# TYPE rdmaxfer_transfer_duration_seconds histogram\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"0.1\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"1\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"10\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"60\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"600\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"3600\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"recv\",le=\"+Inf\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_sum{direction=\"recv\"} 0.050000\n"
        "rdmaxfer_transfer_duration_seconds_count{direction=\"recv\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"0.1\"} 1\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"1\"} 1\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"10\"} 2\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"60\"} 3\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"600\"} 3\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"3600\"} 3\n"
        "rdmaxfer_transfer_duration_seconds_bucket{direction=\"send\",le=\"+Inf\"} 4\n"
        "rdmaxfer_transfer_duration_seconds_sum{direction=\"send\"} 7262.500000\n"
        "rdmaxfer_transfer_duration_seconds_count{direction=\"send\"} 4\n"
        "# HELP rdmaxfer_transfers_active Transfers moving data now.\n"
        "# TYPE rdmaxfer_transfers_active gauge\n"
        "rdmaxfer_transfers_active{direction=\"recv\"} 2\n"
        "rdmaxfer_transfers_active{direction=\"send\"} 1\n"
        "# HELP rdmaxfer_jobs_queued Send jobs waiting: for a free transfer slot, or to retry.\n"
        "# TYPE rdmaxfer_jobs_queued gauge\n"
        "rdmaxfer_jobs_queued 3\n"
        "# HELP rdmaxfer_ring_slots Slots of the receive ring (recv) and the send pool (send), held by transfers or free.\n"
        "# TYPE rdmaxfer_ring_slots gauge\n"
        "rdmaxfer_ring_slots{ring=\"recv\",state=\"held\"} 12\n"
        "rdmaxfer_ring_slots{ring=\"recv\",state=\"free\"} 52\n"
        "rdmaxfer_ring_slots{ring=\"send\",state=\"held\"} 16\n"
        "rdmaxfer_ring_slots{ring=\"send\",state=\"free\"} 48\n"
        "# HELP rdmaxfer_start_time_seconds When the daemon started, in seconds since the Unix epoch.\n"
        "# TYPE rdmaxfer_start_time_seconds gauge\n"
        "rdmaxfer_start_time_seconds 1764950400.123456\n"
        "# HELP rdmaxfer_build_info Always 1; the daemon's version in its label.\n"
        "# TYPE rdmaxfer_build_info gauge\n"
        "rdmaxfer_build_info{version=\"0.9.0\"} 1\n"
        "# HELP rdmaxfer_rail_transferred_bytes_total Data bytes moved on the wire over each rail (RDMA device), by direction.\n"
        "# TYPE rdmaxfer_rail_transferred_bytes_total counter\n"
        "rdmaxfer_rail_transferred_bytes_total{rail=\"mlx5_0\",direction=\"recv\"} 100000000\n"
        "rdmaxfer_rail_transferred_bytes_total{rail=\"mlx5_0\",direction=\"send\"} 987654321\n"
        "rdmaxfer_rail_transferred_bytes_total{rail=\"mlx5_1\",direction=\"recv\"} 23456789\n"
        "rdmaxfer_rail_transferred_bytes_total{rail=\"mlx5_1\",direction=\"send\"} 0\n"
        "# HELP rdmaxfer_rail_up 1 while the rail's RDMA device is up and its port active, else 0.\n"
        "# TYPE rdmaxfer_rail_up gauge\n"
        "rdmaxfer_rail_up{rail=\"mlx5_0\"} 1\n"
        "rdmaxfer_rail_up{rail=\"mlx5_1\"} 0\n"
        ;

static void sample(struct stats_snapshot *s)
{
        struct stats_tally *rt = &s->dir[STATS_DIR_RECV].tally, *st = &s->dir[STATS_DIR_SEND].tally;

        memset(s, 0, sizeof(*s));
        /* Durations: a bound itself is within it (le), 7200 s is past the last. */
        stats_tally_add(rt, false, WIRE_OK, 100000, 50000);
        stats_tally_add(rt, false, WIRE_E_EXISTS, 5000, 0);
        /* A job of 7 files (a tree: DEST and 6 entries) is one transfer. */
        stats_tally_add_files(st, false, WIRE_OK, 100000, 2500000, 7);
        stats_tally_add(st, false, WIRE_E_EXISTS, 5000, 0);
        stats_tally_add(st, true, WIRE_OK, 5000, 7200000000);
        stats_tally_add(st, false, 200, 5000, 60000000);
        s->uptime_usec = 3723456789;
        s->start_time_usec = 1764950400123456;
        s->version = "0.9.0";
        s->dir[STATS_DIR_RECV].wire_bytes = 123456789;
        s->dir[STATS_DIR_SEND].wire_bytes = 987654321;
        s->dir[STATS_DIR_RECV].rate = 104200000;
        s->dir[STATS_DIR_RECV].active = 2;
        s->dir[STATS_DIR_SEND].rate = 51000000;
        s->dir[STATS_DIR_SEND].active = 1;
        s->queued = 3;
        s->ring_held = 12;
        s->ring_slots = 64;
        s->pool_held = 16;
        s->pool_slots = 64;
        /* Two rails; the second's port went down after it carried some. */
        s->nrails = 2;
        s->rail[0] = (struct stats_rail){ .name = "mlx5_0", .wire_bytes = { 100000000, 987654321 }, .up = true };
        s->rail[1] = (struct stats_rail){ .name = "mlx5_1", .wire_bytes = { 23456789, 0 }, .up = false };
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

        /* A version's quote and backslash are escaped in its label. */
        s.version = "1.0 \"x\\y\"";
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0 && strstr(buf, "rdmaxfer_build_info{version=\"1.0 \\\"x\\\\y\\\"\"} 1\n"),
           "the version label escaped");
        s.version = NULL;
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0 && strstr(buf, "rdmaxfer_build_info{version=\"\"} 1\n"), "no version: an empty label");

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
        s.version = "0.9.0";
        /* Every rail's name at its longest, each byte one the label escapes
         * into two; the names unterminated first (stats.c bounds them). */
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0, "unterminated rail names are cut at their field (%d bytes)", len);
        for (unsigned int i = 0; i < ARRAY_SIZE(s.rail); i++) {
                memset(s.rail[i].name, '"', sizeof(s.rail[i].name) - 1);
                s.rail[i].name[sizeof(s.rail[i].name) - 1] = '\0';
        }
        len = stats_prometheus(buf, sizeof(buf), &s);
        ok(len > 0, "the largest snapshot fits STATS_TEXT_MAX (%d bytes)", len);
}

static void test_duration(void)
{
        struct stats_tally t = { 0 };

        stats_tally_add(&t, false, WIRE_OK, 1, stats_duration_bound_usec(0));
        stats_tally_add(&t, false, WIRE_OK, 1, stats_duration_bound_usec(0) + 1);
        stats_tally_add(&t, false, WIRE_E_IO, 1, stats_duration_bound_usec(STATS_DURATION_BOUNDS - 1) + 1);
        stats_tally_add(&t, true, WIRE_OK, 1, 3);
        ok(t.duration[0] == 2 && t.duration[1] == 1 && t.duration[STATS_DURATION_BOUNDS] == 1,
           "a bound is within its bucket, a microsecond more is in the next; failed and cancelled count too");
        ok(t.duration_usec == 2 * stats_duration_bound_usec(0) + 1 + stats_duration_bound_usec(STATS_DURATION_BOUNDS - 1) + 1 + 3,
           "the durations summed");
        bool rising = true;
        for (unsigned int i = 1; i < STATS_DURATION_BOUNDS; i++)
                rising = rising && stats_duration_bound_usec(i) > stats_duration_bound_usec(i - 1);
        ok(rising, "the bounds rise");
}

int main(int argc, char **argv)
{
        /* --print: the sample snapshot's text, for test-prometheus-parse.py
         * (a real parser's opinion of it). */
        if (argc == 2 && !strcmp(argv[1], "--print")) {
                char buf[STATS_TEXT_MAX];
                struct stats_snapshot s;
                int len;

                sample(&s);
                len = stats_prometheus(buf, sizeof(buf), &s);
                if (len < 0)
                        return 1;
                fwrite(buf, 1, (size_t)len, stdout);
                return 0;
        }
        test_tally();
        test_export();
        test_prometheus();
        test_duration();
        return done_testing();
}
