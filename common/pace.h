#pragma once

/*
 * A floor on a transfer's progress (cfg min_rate): time is cut into
 * consecutive windows, each as long as the window in force when it is
 * judged (cfg peer_timeout), and a window that closes having moved less
 * than min_rate bytes per second over its length fails the transfer. It
 * catches the peer that keeps a transfer alive with one chunk (or one
 * credit) just inside every deadline. Pure arithmetic on the caller's
 * clock and byte count: the data path only counts bytes, and the clock
 * is read when a window is judged.
 */

#include <stddef.h>
#include <stdint.h>

struct pace {
        uint64_t t0;            /* usec: the current window opened */
        uint64_t bytes0;        /* the byte count then */
        /* The last window judged (its bytes and length). */
        uint64_t moved, elapsed;
};

/* Open a window at @now (usec), @bytes moved so far. */
void pace_open(struct pace *p, uint64_t now, uint64_t bytes);

/*
 * Judge at @now with @bytes moved in all, against @min_rate bytes/s (0: no
 * floor) over windows of @window usec (at least 1). While the window is
 * open: 0, and *@wait is the usec until it closes. Once it closed: its
 * bytes and length go to p->moved and p->elapsed, and either it moved
 * enough, the next opens at @now and 0 with *@wait = @window, or it did
 * not: PACE_SLOW (the window stays as it was).
 */
enum { PACE_SLOW = 1 };
int pace_check(struct pace *p, uint64_t now, uint64_t bytes, uint64_t min_rate, uint64_t window,
               uint64_t *wait);

/* Bytes due over @usec at @rate bytes/s, rounded down; saturates. */
uint64_t pace_due(uint64_t rate, uint64_t usec);

/* "12 KiB in the last 30.0 s, min_rate 1 MiB/s" for a PACE_SLOW verdict. */
void pace_reason(const struct pace *p, uint64_t min_rate, char *buf, size_t len);

/* "512 bytes", "12 KiB", "1.5 MiB", "2 TiB": powers of 1024, one decimal when not whole. */
void pace_fmt_bytes(char *buf, size_t len, uint64_t bytes);
