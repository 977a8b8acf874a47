/* xferctl's pure output formatting: sizes, rates, ETA, the progress line and the summary. */

#include <stdint.h>
#include <string.h>

#include "progress.h"
#include "tap.h"

static void test_size(void)
{
        char b[32];

        is_str(progress_size(b, sizeof(b), 0), "0 B", "0 bytes");
        is_str(progress_size(b, sizeof(b), 1023), "1023 B", "below 1 KiB stays in bytes");
        is_str(progress_size(b, sizeof(b), 1024), "1.0 KiB", "1 KiB");
        is_str(progress_size(b, sizeof(b), 1536), "1.5 KiB", "1.5 KiB");
        is_str(progress_size(b, sizeof(b), 1048575), "1.0 MiB", "rounds up into the next unit, never 1024.0 KiB");
        is_str(progress_size(b, sizeof(b), 1073741824), "1.0 GiB", "1 GiB");
        is_str(progress_size(b, sizeof(b), 256ull << 20), "256.0 MiB", "256 MiB");
        is_str(progress_size(b, sizeof(b), UINT64_MAX), "16.0 EiB", "the largest count");
        is_str(progress_size(b, 4, 1073741824), "1.0", "truncated to the buffer, NUL-terminated");
}

static void test_rates(void)
{
        char b[32];

        ok(progress_mbps(0, 0) == 0.0, "no time: 0 MB/s, no division by zero");
        ok(progress_mbps(1000000, 1000000) == 1.0, "10^6 bytes in 1 s is 1 MB/s (decimal)");
        ok(progress_mbps(1073741824, 20400000) > 52.63 && progress_mbps(1073741824, 20400000) < 52.64,
           "1 GiB in 20.4 s is 52.6 MB/s");

        is_int(progress_permille(0, 100), 0, "nothing done");
        is_int(progress_permille(999, 1000), 999, "rounds down: 99.9%%");
        is_int(progress_permille(999999, 1000000), 999, "never shows 100%% before the end");
        is_int(progress_permille(1000, 1000), 1000, "done");
        is_int(progress_permille(2000, 1000), 1000, "capped at 100%%");
        is_int(progress_permille(0, 0), 1000, "an empty file is complete");
        is_int(progress_permille(1ull << 62, 1ull << 63), 500, "huge sizes do not overflow");

        is_str(progress_seconds(b, sizeof(b), 20400000), "20.4 s", "seconds, one decimal");
        is_str(progress_seconds(b, sizeof(b), 42000), "0.042 s", "below a second, milliseconds");

        is_str(progress_eta(b, sizeof(b), 100, 0), "--:--", "no rate yet: unknown");
        is_str(progress_eta(b, sizeof(b), 0, 100), "0:00", "nothing left");
        is_str(progress_eta(b, sizeof(b), 101, 100), "0:02", "rounds up");
        is_str(progress_eta(b, sizeof(b), 754, 1), "12:34", "minutes");
        is_str(progress_eta(b, sizeof(b), 3723, 1), "1:02:03", "hours");
        is_str(progress_eta(b, sizeof(b), 100 * 3600, 1), ">99h", "too long to matter");
        is_str(progress_eta(b, sizeof(b), UINT64_MAX, 1), ">99h", "no overflow");
}

static void test_line(void)
{
        struct progress p = {
                .state = "sending",
                .peer = "198.18.0.2:7470",
                .done = 512ull << 20,
                .total = 1ull << 30,
                .usec = 10200000,
                .rate = 52600000,
                .data = 1,
        };
        char b[256];

        progress_line(b, sizeof(b), &p, 0);
        ok(strncmp(b, "sending", 7) == 0 && strstr(b, " [=========>") != NULL,
           "starts with the state and a bar: '%s'", b);
        ok(strstr(b, " 50.0%") != NULL, "percentage");
        ok(strstr(b, "512.0 MiB/1.0 GiB") != NULL, "done and total");
        ok(strstr(b, "52.6 MB/s") != NULL, "rate in MB/s");
        ok(strstr(b, "10.2 s") != NULL, "elapsed seconds beside the rate");
        ok(strstr(b, "ETA 0:11") != NULL, "time left from the recent rate");

        progress_line(b, sizeof(b), &p, 79);
        ok(strlen(b) <= 79, "fits 79 columns (%zu)", strlen(b));
        ok(strchr(b, '[') != NULL, "with a bar at 79 columns");

        progress_line(b, sizeof(b), &p, 50);
        ok(strlen(b) <= 50, "fits 50 columns (%zu)", strlen(b));
        ok(strchr(b, '[') == NULL, "no bar when it does not fit");

        p.rate = 0;
        progress_line(b, sizeof(b), &p, 0);
        ok(strstr(b, "52.6 MB/s") != NULL, "no recent rate: the average (512 MiB in 10.2 s)");

        p.done = 0;
        p.usec = 0;
        progress_line(b, sizeof(b), &p, 0);
        ok(strstr(b, "ETA --:--") != NULL && strstr(b, "0.0 MB/s") != NULL, "just started: '%s'", b);

        p.state = "verifying";
        p.done = p.total;
        p.usec = 20400000;
        progress_line(b, sizeof(b), &p, 0);
        ok(strstr(b, "100.0%") != NULL && strstr(b, "ETA") == NULL, "verifying: full, no ETA: '%s'", b);

        p.state = "connecting";
        p.data = 0;
        is_str(progress_line(b, sizeof(b), &p, 0), "connecting (198.18.0.2:7470)", "a state without data");
        p.peer = NULL;
        is_str(progress_line(b, sizeof(b), &p, 0), "connecting", "no peer known");
        is_str(progress_line(b, sizeof(b), &p, 4), "conn", "cut at the width as a last resort");

        p.peer = "10.0.0.1\r\x1b[2K\xe2\x80\xae";
        is_str(progress_line(b, sizeof(b), &p, 0), "connecting (10.0.0.1\\r\\x1b[2K\\u202e)",
               "the peer from the daemon is escaped");
        p.peer = "\xc3\xa9\xc3\xa9";
        is_str(progress_line(b, sizeof(b), &p, 0), "connecting (\xc3\xa9\xc3\xa9)", "UTF-8 in the peer is kept");
        is_str(progress_line(b, sizeof(b), &p, 15), "connecting (\xc3\xa9", "never cut inside a UTF-8 sequence");
}

static void test_in(void)
{
        char b[32];

        is_str(progress_in(b, sizeof(b), 0), "now", "nothing left to wait");
        is_str(progress_in(b, sizeof(b), 1), "in 1 s", "a microsecond rounds up: never 'in 0 s'");
        is_str(progress_in(b, sizeof(b), 8000000), "in 8 s", "whole seconds");
        is_str(progress_in(b, sizeof(b), 7000001), "in 8 s", "rounded up");
        is_str(progress_in(b, sizeof(b), UINT64_MAX), "in 18446744073710 s", "no overflow");
}

static void test_summary(void)
{
        char b[256];

        is_str(progress_summary(b, sizeof(b), "foo.dat", "198.18.0.2:7470", 1073741824, 20400000),
               "sent foo.dat (1073741824 bytes) to 198.18.0.2:7470 in 20.4 s: 52.6 MB/s",
               "the summary line");
        is_str(progress_summary(b, sizeof(b), "empty", "[fd00::2]:7470", 0, 1500),
               "sent empty (0 bytes) to [fd00::2]:7470 in 0.002 s: 0.0 MB/s", "an empty file");
        is_str(progress_summary(b, sizeof(b), "x\x1b]0;t\x07\xe2\x80\xae" "y", "1.2.3.4\r:1", 1, 1000000),
               "sent x\\x1b]0;t\\x07\\u202ey (1 bytes) to 1.2.3.4\\r:1 in 1.0 s: 0.0 MB/s",
               "name and peer from the daemon are escaped");
        is_str(progress_summary(b, sizeof(b), "r\xc3\xa9sum\xc3\xa9.pdf", "198.18.0.2:7470", 0, 1000000),
               "sent r\xc3\xa9sum\xc3\xa9.pdf (0 bytes) to 198.18.0.2:7470 in 1.0 s: 0.0 MB/s",
               "a UTF-8 name is kept");
}

int main(void)
{
        test_size();
        test_rates();
        test_line();
        test_in();
        test_summary();
        return done_testing();
}
