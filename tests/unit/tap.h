#pragma once

/*
 * Minimal TAP producer for the unit tests: meson parses the output
 * (protocol: 'tap'), so each check is one "ok N - what" line and the plan
 * "1..N" comes last, from done_testing().
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;
static int tap_planned = -1;

__attribute__((format(printf, 1, 2)))
static inline void diag(const char *fmt, ...)
{
        va_list ap;

        fputs("# ", stdout);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        fputc('\n', stdout);
        fflush(stdout);
}

__attribute__((format(printf, 4, 0)))
static inline bool tap_result(bool pass, const char *file, int line, const char *fmt, va_list ap)
{
        tap_count++;
        if (!pass)
                tap_failed++;
        printf("%sok %d - ", pass ? "" : "not ", tap_count);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        if (!pass)
                printf("#   failed at %s:%d\n", file, line);
        fflush(stdout);
        return pass;
}

__attribute__((format(printf, 4, 5)))
static inline bool tap_ok(bool pass, const char *file, int line, const char *fmt, ...)
{
        va_list ap;
        bool r;

        va_start(ap, fmt);
        r = tap_result(pass, file, line, fmt, ap);
        va_end(ap);
        return r;
}

__attribute__((format(printf, 5, 6)))
static inline bool tap_is_int(long long got, long long want, const char *file, int line,
                              const char *fmt, ...)
{
        va_list ap;
        bool r;

        va_start(ap, fmt);
        r = tap_result(got == want, file, line, fmt, ap);
        va_end(ap);
        if (!r)
                printf("#   got: %lld\n#   expected: %lld\n", got, want);
        return r;
}

__attribute__((format(printf, 5, 6)))
static inline bool tap_is_str(const char *got, const char *want, const char *file, int line,
                              const char *fmt, ...)
{
        bool pass = got && want && strcmp(got, want) == 0;
        va_list ap;

        va_start(ap, fmt);
        tap_result(pass, file, line, fmt, ap);
        va_end(ap);
        if (!pass)
                printf("#   got: '%s'\n#   expected: '%s'\n", got ? got : "(null)", want ? want : "(null)");
        return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/* Optional up-front plan; done_testing() checks it. */
static inline void plan(int n)
{
        tap_planned = n;
        printf("1..%d\n", n);
        fflush(stdout);
}

/* Prints the plan (unless plan() did) and returns main()'s exit code. */
static inline int done_testing(void)
{
        if (tap_planned < 0)
                printf("1..%d\n", tap_count);
        else if (tap_planned != tap_count) {
                printf("# planned %d tests but ran %d\n", tap_planned, tap_count);
                tap_failed++;
        }
        if (tap_failed)
                printf("# %d of %d tests failed\n", tap_failed, tap_count);
        fflush(stdout);
        return tap_failed ? 1 : 0;
}
