/* The progress floor's windows and arithmetic (pace.h). */

#include <inttypes.h>
#include <stdio.h>

#include "pace.h"

#define USEC_PER_SEC 1000000u

void pace_open(struct pace *p, uint64_t now, uint64_t bytes)
{
        p->t0 = now;
        p->bytes0 = bytes;
}

static uint64_t pace_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t pace_due(uint64_t rate, uint64_t usec)
{
        uint64_t sec = usec / USEC_PER_SEC, frac = usec % USEC_PER_SEC;
        uint64_t whole, part;

        if (sec > 0 && rate > UINT64_MAX / sec)
                return UINT64_MAX;
        whole = rate * sec;
        /* rate * frac / 10^6 without the product: each term fits in 64 bits. */
        part = (rate / USEC_PER_SEC) * frac + (rate % USEC_PER_SEC) * frac / USEC_PER_SEC;
        return pace_add(whole, part);
}

int pace_check(struct pace *p, uint64_t now, uint64_t bytes, uint64_t min_rate, uint64_t window,
               uint64_t *wait)
{
        /* A clock that went nowhere (or a caller's stale now) opens nothing early. */
        uint64_t elapsed = now > p->t0 ? now - p->t0 : 0;

        if (window == 0)
                window = 1;
        if (elapsed < window) {
                *wait = window - elapsed;
                return 0;
        }
        p->moved = bytes > p->bytes0 ? bytes - p->bytes0 : 0;
        p->elapsed = elapsed;
        if (min_rate > 0 && p->moved < pace_due(min_rate, elapsed))
                return PACE_SLOW;
        pace_open(p, now, bytes);
        *wait = window;
        return 0;
}

void pace_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        unsigned int u = 0;

        if (bytes < 1024) {
                snprintf(buf, len, "%" PRIu64 " bytes", bytes);
                return;
        }
        while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >> (10 * (u + 2)) > 0)
                u++;
        if (bytes % (1ull << (10 * (u + 1))) == 0)
                snprintf(buf, len, "%" PRIu64 " %s", bytes >> (10 * (u + 1)), units[u]);
        else
                snprintf(buf, len, "%.1f %s", (double)bytes / (double)(1ull << (10 * (u + 1))),
                         units[u]);
}

void pace_reason(const struct pace *p, uint64_t min_rate, char *buf, size_t len)
{
        char moved[32], rate[32];

        pace_fmt_bytes(moved, sizeof(moved), p->moved);
        pace_fmt_bytes(rate, sizeof(rate), min_rate);
        snprintf(buf, len, "%s in the last %.1f s, min_rate %s/s", moved,
                 (double)p->elapsed / USEC_PER_SEC, rate);
}
