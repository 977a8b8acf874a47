/* The token bucket of bandwidth limits (bucket.h). */

#include "bucket.h"
#include "macro.h"

#define MICRO   1000000u

/* The level when full, in millionths of a byte: at most 2^40 * 10^6 < 2^60. */
static int64_t bucket_cap(const struct bucket *b)
{
        return (int64_t)(b->burst * MICRO);
}

/* Bring the level up to @now at the current rate. */
static void bucket_fill(struct bucket *b, uint64_t now)
{
        uint64_t elapsed, need;
        int64_t cap = bucket_cap(b);

        /* A clock that went back (or a caller's stale now) adds nothing. */
        if (now <= b->t)
                return;
        elapsed = now - b->t;
        b->t = now;
        if (b->level >= cap)
                return;
        /* rate * elapsed may not fit: compare against what fills it first. */
        need = (uint64_t)(cap - b->level);
        if (elapsed >= need / b->rate + 1)
                b->level = cap;
        else
                b->level += (int64_t)(b->rate * elapsed);
        if (b->level > cap)
                b->level = cap;
}

void bucket_set(struct bucket *b, uint64_t rate, uint64_t burst, uint64_t now)
{
        bool was = bucket_limited(b);

        if (was)
                bucket_fill(b, now);
        b->rate = MIN(rate, BUCKET_BYTES_MAX);
        b->burst = MAX(1u, MIN(burst, BUCKET_BYTES_MAX));
        b->t = now;
        if (!was || b->level > bucket_cap(b))
                b->level = bucket_cap(b);
}

uint64_t bucket_wait(struct bucket *b, uint64_t now)
{
        if (!bucket_limited(b))
                return 0;
        bucket_fill(b, now);
        if (b->level >= 0)
                return 0;
        /* Rounded up: at that usec the debt is paid. */
        return ((uint64_t)-b->level + b->rate - 1) / b->rate;
}

void bucket_take(struct bucket *b, uint64_t bytes)
{
        if (!bucket_limited(b))
                return;
        /* The debt stays above -2^40 bytes: a take only follows a level >= 0. */
        b->level -= (int64_t)(MIN(bytes, BUCKET_BYTES_MAX) * MICRO);
}

uint64_t bucket_burst(uint64_t rate, uint64_t chunk)
{
        uint64_t by_chunks = MIN(chunk, BUCKET_BYTES_MAX) * BUCKET_BURST_CHUNKS;
        uint64_t by_time = MIN(rate, BUCKET_BYTES_MAX) / 1000u * BUCKET_BURST_MSEC;

        return MIN(MAX(by_chunks, by_time), BUCKET_BYTES_MAX);
}

uint64_t bucket_rate_min(uint64_t chunk, unsigned int sec)
{
        if (sec == 0)
                sec = 1;
        return (chunk + sec - 1) / sec;
}
