#pragma once

/*
 * Pure formatting for xferctl's output: no I/O, no clocks, no locale.
 * Sizes are IEC (1 KiB = 2^10 bytes); rates are MB/s (10^6 bytes/s), and a
 * rate is always printed beside its byte count and seconds where there is
 * room. Every function writes a NUL-terminated string into @buf (truncated
 * to @len) and returns @buf, so calls can sit inside a printf().
 */

#include <stddef.h>
#include <stdint.h>

/* "0 B", "1023 B", "1.0 KiB", "512.0 MiB", "1.5 GiB", up to EiB. */
const char *progress_size(char *buf, size_t len, uint64_t bytes);

/* MB/s (10^6 bytes/s): bytes per microsecond. 0.0 when @usec is 0. */
double progress_mbps(uint64_t bytes, uint64_t usec);

/* Per mille of @done in @total, rounded down and capped at 1000; 1000 when @total is 0. */
unsigned int progress_permille(uint64_t done, uint64_t total);

/* Seconds with one decimal ("20.4 s"), three below one second ("0.042 s"). */
const char *progress_seconds(char *buf, size_t len, uint64_t usec);

/*
 * Time left at @rate bytes/s for @remaining bytes, rounded up: "0:05",
 * "12:34", "1:02:03"; "--:--" when @rate is 0, ">99h" beyond 99 hours.
 */
const char *progress_eta(char *buf, size_t len, uint64_t remaining, uint64_t rate);

struct progress {
        const char *state;      /* "sending", "verifying", "queued", ... */
        const char *peer;       /* "198.18.0.2:7470", or NULL */
        uint64_t done;          /* bytes */
        uint64_t total;         /* bytes */
        uint64_t usec;          /* since the first data was posted */
        uint64_t rate;          /* recent bytes/s; 0: use the average */
        int data;               /* non-zero: the state moves data (show bytes, %, rate) */
};

/*
 * The single updating line xferctl draws on a terminal, at most @width
 * columns (0: no limit), e.g.
 *   "sending [=====>     ]  50.0%  512.0 MiB/1.0 GiB  52.6 MB/s  10.2 s  ETA 0:10"
 * or, for a state that moves no data, "connecting to 198.18.0.2:7470".
 * The bar is left out when the line would not fit with it; the line is
 * cut at @width as a last resort, never inside a UTF-8 sequence. The peer
 * is escaped for the terminal (esc_term()); the rest is plain ASCII.
 */
const char *progress_line(char *buf, size_t len, const struct progress *p, unsigned int width);

/* When something starts @usec from now: "in 8 s" (seconds rounded up), or "now". */
const char *progress_in(char *buf, size_t len, uint64_t usec);

/*
 * "sent foo.dat (1073741824 bytes) to 198.18.0.2:7470 in 20.4 s: 52.6 MB/s",
 * with @name and @peer escaped for the terminal (esc_term()).
 */
const char *progress_summary(char *buf, size_t len, const char *name, const char *peer,
                             uint64_t bytes, uint64_t usec);
