/* The token bucket of bandwidth limits: fill, burst, debt, time, rate changes. */

#include <stdint.h>

#include "bucket.h"
#include "tap.h"

#define SEC 1000000ull
#define MSEC 1000ull
#define KIB 1024ull
#define MIB (1024ull * 1024)

/* Send @chunk-sized chunks as the bucket allows, waking when it says, for
 * @usec from @t: the bytes sent. */
static uint64_t run(struct bucket *b, uint64_t *t, uint64_t usec, uint64_t chunk)
{
        uint64_t end = *t + usec, sent = 0;

        while (*t < end) {
                uint64_t wait = bucket_wait(b, *t);

                if (wait == 0) {
                        bucket_take(b, chunk);
                        sent += chunk;
                        continue;
                }
                *t += wait;
        }
        return sent;
}

static void test_unlimited(void)
{
        struct bucket b = { 0 };

        ok(!bucket_limited(&b), "a zeroed bucket limits nothing");
        is_int((long long)bucket_wait(&b, 0), 0, "never waits");
        bucket_take(&b, UINT64_MAX);
        is_int((long long)bucket_wait(&b, 1), 0, "whatever was taken");
        bucket_set(&b, 0, MIB, 5 * SEC);
        ok(!bucket_limited(&b), "rate 0: no limit");
        is_int((long long)bucket_wait(&b, 0), 0, "even with the clock behind");
}

static void test_rate(void)
{
        struct bucket b = { 0 };
        uint64_t t = 100 * SEC, sent;

        bucket_set(&b, 8 * MIB, 2 * MIB, t);
        ok(bucket_limited(&b), "limited");
        /* Full at first: two chunks, and a third into debt. */
        for (sent = 0; bucket_wait(&b, t) == 0; sent += MIB)
                bucket_take(&b, MIB);
        is_int((long long)sent, (long long)(3 * MIB), "the burst and one chunk go at once");
        is_int((long long)bucket_wait(&b, t), (long long)(SEC / 8), "then one chunk's time");
        /* 10 s at 8 MiB/s: 80 chunks, less the one owed. */
        sent = run(&b, &t, 10 * SEC, MIB);
        ok(sent >= 79 * MIB && sent <= 80 * MIB, "10 s at 8 MiB/s: %llu MiB",
           (unsigned long long)(sent / MIB));
        /* Chunks that do not divide the rate: the long run is still the rate. */
        bucket_set(&b, 3000000, 100000, t);
        sent = run(&b, &t, 60 * SEC, 65536);
        ok(sent >= 180000000 - 65536 && sent <= 180000000 + 100000 + 2 * 65536,
           "3 MB/s in 64 KiB chunks over 60 s: %llu bytes", (unsigned long long)sent);
        /* A tiny rate, exact too. */
        bucket_set(&b, 7, 1, t);
        sent = run(&b, &t, 1000 * SEC, 1);
        ok(sent >= 7000 && sent <= 7002, "7 bytes/s over 1000 s: %llu", (unsigned long long)sent);
}

static void test_waits(void)
{
        struct bucket b = { 0 };
        uint64_t t = 0;

        bucket_set(&b, MIB, MIB, t);
        bucket_take(&b, MIB);
        is_int((long long)bucket_wait(&b, t), 0, "empty is not in debt");
        bucket_take(&b, 1);
        /* One byte at 1 MiB/s: under a usec, rounded up. */
        is_int((long long)bucket_wait(&b, t), 1, "one byte of debt: 1 usec");
        bucket_take(&b, MIB / 2);
        is_int((long long)bucket_wait(&b, t), (long long)(SEC / 2 + 1), "half a MiB more: half a second");
        is_int((long long)bucket_wait(&b, t + SEC / 4), (long long)(SEC / 4 + 1), "a quarter later");
        is_int((long long)bucket_wait(&b, t + SEC), 0, "paid");
        /* The clock going back adds nothing and takes nothing. */
        bucket_take(&b, MIB);
        is_int((long long)bucket_wait(&b, t + SEC), (long long)(SEC / 2 + 1), "half a MiB of debt again");
        is_int((long long)bucket_wait(&b, t), (long long)(SEC / 2 + 1), "a stale now: the same debt");
}

static void test_burst_cap(void)
{
        struct bucket b = { 0 };
        uint64_t t = 0, sent;

        bucket_set(&b, MIB, 2 * MIB, t);
        run(&b, &t, 1, MIB);
        /* Idle for an hour: it holds the burst, no more. */
        t += 3600 * SEC;
        for (sent = 0; bucket_wait(&b, t) == 0; sent += MIB)
                bucket_take(&b, MIB);
        is_int((long long)sent, (long long)(3 * MIB), "after an hour idle: burst + one chunk");
        /* A huge jump at the largest rate neither wraps nor overflows. */
        bucket_set(&b, 0, 0, t);
        bucket_set(&b, UINT64_MAX, UINT64_MAX, t);
        is_int((long long)b.rate, (long long)BUCKET_BYTES_MAX, "rate capped");
        is_int((long long)b.burst, (long long)BUCKET_BYTES_MAX, "burst capped");
        bucket_take(&b, UINT64_MAX);
        bucket_take(&b, 0);
        is_int((long long)bucket_wait(&b, t), 0, "a full bucket pays a capped take");
        bucket_take(&b, BUCKET_BYTES_MAX);
        is_int((long long)bucket_wait(&b, t), (long long)SEC, "then owes a second");
        is_int((long long)bucket_wait(&b, UINT64_MAX), 0, "the far future: paid");
        ok(b.level == (int64_t)(BUCKET_BYTES_MAX * 1000000u), "and full, no more");
        /* burst 0 is one byte. */
        bucket_set(&b, 10, 0, t);
        is_int((long long)b.burst, 1, "burst 0 is 1");
}

static void test_reload(void)
{
        struct bucket b = { 0 };
        uint64_t t = 0, sent;

        bucket_set(&b, 8 * MIB, MIB, t);
        run(&b, &t, 5 * SEC, MIB);
        /* Faster: the debt so far is counted at the old rate, then the new one. */
        bucket_set(&b, 16 * MIB, MIB, t);
        ok(bucket_wait(&b, t) <= SEC / 16, "the wait shrinks with a faster rate");
        sent = run(&b, &t, 10 * SEC, MIB);
        ok(sent >= 159 * MIB && sent <= 162 * MIB, "16 MiB/s for 10 s: %llu MiB",
           (unsigned long long)(sent / MIB));
        /* Slower. */
        bucket_set(&b, 2 * MIB, MIB, t);
        sent = run(&b, &t, 10 * SEC, MIB);
        ok(sent >= 19 * MIB && sent <= 22 * MIB, "2 MiB/s for 10 s: %llu MiB",
           (unsigned long long)(sent / MIB));
        /* Off, on: starts full again. */
        bucket_set(&b, 0, MIB, t);
        is_int((long long)bucket_wait(&b, t), 0, "off: no wait");
        bucket_take(&b, 100 * MIB);
        bucket_set(&b, 4 * MIB, 2 * MIB, t);
        for (sent = 0; bucket_wait(&b, t) == 0; sent += MIB)
                bucket_take(&b, MIB);
        is_int((long long)sent, (long long)(3 * MIB), "on again: full, what went unlimited is not owed");
        /* A smaller burst clips a full bucket. */
        t += 10 * SEC;
        bucket_set(&b, 4 * MIB, MIB / 2, t);
        ok(b.level == (int64_t)(MIB / 2 * 1000000u), "the level clipped to the new burst");
}

static void test_policy(void)
{
        is_int((long long)bucket_burst(8 * MIB, MIB), (long long)(2 * MIB), "8 MiB/s, 1 MiB chunks: two chunks");
        is_int((long long)bucket_burst(10ull << 30, MIB), (long long)((10ull << 30) / 1000 * 20),
               "10 GiB/s: 20 ms worth");
        ok(bucket_burst(UINT64_MAX, UINT64_MAX) == BUCKET_BYTES_MAX, "capped");
        is_int((long long)bucket_rate_min(MIB, 30), (long long)((MIB + 29) / 30), "1 MiB per 30 s");
        is_int((long long)bucket_rate_min(4096, 0), 4096, "0 s counts as 1");
}

int main(void)
{
        test_unlimited();
        test_rate();
        test_waits();
        test_burst_cap();
        test_reload();
        test_policy();
        return done_testing();
}
