/* The min_rate floor: windows, the due arithmetic, and the reason text. */

#include <stdint.h>
#include <string.h>

#include "pace.h"
#include "tap.h"

#define SEC 1000000ull
#define KIB 1024ull
#define MIB (1024ull * 1024)

static void test_due(void)
{
        is_int((long long)pace_due(MIB, 30 * SEC), (long long)(30 * MIB), "1 MiB/s over 30 s");
        is_int((long long)pace_due(MIB, SEC / 2), (long long)(MIB / 2), "half a second");
        is_int((long long)pace_due(1000, 1), 0, "rounds down");
        is_int((long long)pace_due(3000000, 1), 3, "3 MB/s over 1 usec");
        is_int((long long)pace_due(0, 3600 * SEC), 0, "no rate, nothing due");
        ok(pace_due(1ull << 40, 3600 * SEC) == (1ull << 40) * 3600, "1 TiB/s over an hour fits");
        ok(pace_due(UINT64_MAX, 2 * SEC) == UINT64_MAX, "saturates, never wraps");
        ok(pace_due(UINT64_MAX / 2, 2 * SEC + SEC / 2) == UINT64_MAX, "saturates in the sum too");
        ok(pace_due(UINT64_MAX, SEC - 1) < UINT64_MAX, "a part-second at the largest rate fits");
}

/* The trickler of issue 12: one 16 KiB chunk every 29 s, peer_timeout 30. */
static void test_trickler(void)
{
        struct pace p = { 0 };
        uint64_t t = 1000 * SEC, bytes = 0, wait = 0;
        char why[128];

        pace_open(&p, t, bytes);
        bytes += 16 * KIB;
        is_int(pace_check(&p, t + 29 * SEC, bytes, MIB, 30 * SEC, &wait), 0, "window open at 29 s");
        is_int((long long)wait, (long long)SEC, "closes 1 s later");
        is_int(pace_check(&p, t + 30 * SEC, bytes, MIB, 30 * SEC, &wait), PACE_SLOW,
               "16 KiB in 30 s is under 1 MiB/s");
        is_int((long long)p.moved, (long long)(16 * KIB), "moved");
        is_int((long long)p.elapsed, (long long)(30 * SEC), "over 30 s");
        pace_reason(&p, MIB, why, sizeof(why));
        is_str(why, "16 KiB in the last 30.0 s, min_rate 1 MiB/s", "the reason");
        is_int(pace_check(&p, t + 31 * SEC, bytes, MIB, 30 * SEC, &wait), PACE_SLOW,
               "still slow: a slow window is not forgiven by asking again");
        is_int(pace_check(&p, t + 30 * SEC, bytes, 0, 30 * SEC, &wait), 0, "min_rate 0: no floor");
        is_int((long long)wait, (long long)(30 * SEC), "and the next window opens");
        is_int((long long)p.t0, (long long)(t + 30 * SEC), "at now");
}

/* An honest transfer on a slow link: every window passes, one after another. */
static void test_honest(void)
{
        struct pace p = { 0 };
        uint64_t t = 5 * SEC, bytes = 0, wait = 0;
        int slow = 0, closed = 0;

        pace_open(&p, t, bytes);
        /* 2 MiB/s, judged every second as a timer would wake. */
        for (int s = 1; s <= 300; s++) {
                uint64_t t0 = p.t0;

                bytes += 2 * MIB;
                slow += pace_check(&p, t + (uint64_t)s * SEC, bytes, MIB, 30 * SEC, &wait) == PACE_SLOW;
                closed += p.t0 != t0;
        }
        is_int(slow, 0, "2 MiB/s never trips a floor of 1 MiB/s");
        is_int(closed, 10, "300 s are 10 windows of 30 s");
        /* Exactly at the floor passes; one byte under does not. */
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t + 30 * SEC, 30 * MIB, MIB, 30 * SEC, &wait), 0, "exactly min_rate passes");
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t + 30 * SEC, 30 * MIB - 1, MIB, 30 * SEC, &wait), PACE_SLOW,
               "one byte under fails");
        /* A burst then silence: judged over the whole window, not the burst. */
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t + 30 * SEC, MIB, MIB, 30 * SEC, &wait), PACE_SLOW,
               "1 MiB at once, then nothing for 30 s, is slow");
}

/* A timer that wakes late, a window changed by a reload, a clock that stood still. */
static void test_edges(void)
{
        struct pace p = { 0 };
        uint64_t t = 100 * SEC, wait = 0;

        pace_open(&p, t, 1000);
        is_int(pace_check(&p, t + 45 * SEC, 1000 + 40 * MIB, MIB, 30 * SEC, &wait), PACE_SLOW,
               "late timer: judged over the 45 s that passed, 40 MiB is short of 45");
        is_int((long long)p.elapsed, (long long)(45 * SEC), "elapsed is what passed");
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t + 5 * SEC, 0, MIB, 4 * SEC, &wait), PACE_SLOW,
               "a window shortened by a reload closes at once");
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t + 5 * SEC, 0, MIB, 60 * SEC, &wait), 0, "one lengthened stays open");
        is_int((long long)wait, (long long)(55 * SEC), "for the rest of the new length");
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t - SEC, 0, MIB, 30 * SEC, &wait), 0, "now before the window: still open");
        is_int((long long)wait, (long long)(30 * SEC), "for all of it");
        pace_open(&p, t, 0);
        is_int(pace_check(&p, t, 0, MIB, 0, &wait), 0, "a zero window counts as 1 usec");
        is_int((long long)wait, 1, "closing next");
        pace_open(&p, t, 500);
        is_int(pace_check(&p, t + 30 * SEC, 100, MIB, 30 * SEC, &wait), PACE_SLOW,
               "a byte count that went back counts as nothing moved");
        is_int((long long)p.moved, 0, "moved 0");
}

static void test_fmt(void)
{
        char b[32];

        pace_fmt_bytes(b, sizeof(b), 0);
        is_str(b, "0 bytes", "0");
        pace_fmt_bytes(b, sizeof(b), 1023);
        is_str(b, "1023 bytes", "under a KiB");
        pace_fmt_bytes(b, sizeof(b), 12 * KIB);
        is_str(b, "12 KiB", "whole KiB");
        pace_fmt_bytes(b, sizeof(b), MIB + MIB / 2);
        is_str(b, "1.5 MiB", "a fraction");
        pace_fmt_bytes(b, sizeof(b), 1ull << 40);
        is_str(b, "1 TiB", "TiB");
        pace_fmt_bytes(b, sizeof(b), UINT64_MAX);
        is_str(b, "16.0 EiB", "the largest");
}

int main(void)
{
        test_due();
        test_trickler();
        test_honest();
        test_edges();
        test_fmt();
        return done_testing();
}
