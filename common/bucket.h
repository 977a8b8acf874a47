#pragma once

/*
 * A token bucket for bandwidth limits (cfg rate_limit, xferctl send
 * --bwlimit): it fills at @rate bytes per second up to @burst bytes, and
 * a chunk may go whenever the bucket is not in debt, taking its size out
 * of it (which may put it in debt). So the granularity is one chunk, the
 * bytes let through over any time t are at most burst + one chunk +
 * rate * t, and the long-run rate is exactly @rate whatever the chunk
 * size. Pure arithmetic on the caller's clock (usec); exact at any rate
 * (the level is kept in millionths of a byte). A zeroed bucket, or rate
 * 0, limits nothing and never needs a clock.
 */

#include <stdbool.h>
#include <stdint.h>

struct bucket {
        uint64_t rate;          /* bytes/s; 0: no limit */
        uint64_t burst;         /* bytes it holds at most */
        int64_t level;          /* millionths of a byte; < 0: in debt */
        uint64_t t;             /* usec: the level as of then */
};

/* What a bucket may hold, and the most one take may charge (2^40). */
#define BUCKET_BYTES_MAX        (1ull << 40)
/* The burst a limit gets: this many chunks, or this long at the rate, whichever
 * is more (a timer wakes a few ms late; what came due meanwhile is not lost). */
#define BUCKET_BURST_CHUNKS     2u
#define BUCKET_BURST_MSEC       20u

/*
 * Set the rate and burst at @now. The level so far is brought up to date
 * at the old rate, then kept (at most the new burst); a bucket that
 * limited nothing starts full. @rate and @burst are capped at
 * BUCKET_BYTES_MAX; burst 0 is taken as 1.
 */
void bucket_set(struct bucket *b, uint64_t rate, uint64_t burst, uint64_t now);

static inline bool bucket_limited(const struct bucket *b)
{
        return b->rate != 0;
}

/* Usec until something may go at @now: 0 when the bucket is not in debt
 * (always, with no limit). */
uint64_t bucket_wait(struct bucket *b, uint64_t now);

/* Charge @bytes (capped at BUCKET_BYTES_MAX) that went; no-op without a limit. */
void bucket_take(struct bucket *b, uint64_t bytes);

/* The burst for @rate and chunks of @chunk bytes (BUCKET_BURST_*). */
uint64_t bucket_burst(uint64_t rate, uint64_t chunk);

/* The least rate that moves a chunk of @chunk bytes within @sec seconds
 * (a peer that hears nothing for its peer_timeout gives up). */
uint64_t bucket_rate_min(uint64_t chunk, unsigned int sec);
