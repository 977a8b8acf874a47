#pragma once

#include <stdint.h>
#include <time.h>

/* Microseconds on @clock: CLOCK_MONOTONIC for durations and rates. */
static inline uint64_t clock_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}
