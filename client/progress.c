#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "esc.h"
#include "macro.h"
#include "progress.h"

#define PROGRESS_BAR_MAX        30      /* columns inside the brackets */
#define PROGRESS_BAR_MIN        10      /* narrower than this is noise: leave it out */
#define PROGRESS_BAR_DEFAULT    20      /* when the width is unknown */
#define PROGRESS_STATE_COLS     9       /* "verifying": the bar starts in one place */
#define PROGRESS_TAIL_COLS      56      /* a typical tail: the bar keeps its width as numbers grow */
/* Room for a job's peer and name from the control protocol, escaped (ctl.h: 69 and 255 bytes). */
#define PROGRESS_PEER_ESC       ESC_TERM_SIZE(128)
#define PROGRESS_NAME_ESC       ESC_TERM_SIZE(256)

const char *progress_size(char *buf, size_t len, uint64_t bytes)
{
        static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v = (double)bytes;
        size_t i = 0;

        if (bytes < 1024) {
                snprintf(buf, len, "%" PRIu64 " B", bytes);
                return buf;
        }
        /* Move up a unit before "%.1f" would round to 1024.0 of this one. */
        while (i + 1 < sizeof(units) / sizeof(units[0]) && v >= 1024.0 - 0.05) {
                v /= 1024.0;
                i++;
        }
        snprintf(buf, len, "%.1f %s", v, units[i]);
        return buf;
}

double progress_mbps(uint64_t bytes, uint64_t usec)
{
        /* Bytes per microsecond is exactly 10^6 bytes per second. */
        return usec ? (double)bytes / (double)usec : 0.0;
}

unsigned int progress_permille(uint64_t done, uint64_t total)
{
        if (total == 0 || done >= total)
                return 1000;
        /* long double keeps 64 bits of mantissa: no overflow, exact enough to round down. */
        return (unsigned int)((long double)done * 1000.0L / (long double)total);
}

const char *progress_seconds(char *buf, size_t len, uint64_t usec)
{
        if (usec < 1000000)
                snprintf(buf, len, "%.3f s", (double)usec / 1e6);
        else
                snprintf(buf, len, "%.1f s", (double)usec / 1e6);
        return buf;
}

const char *progress_eta(char *buf, size_t len, uint64_t remaining, uint64_t rate)
{
        uint64_t secs;

        if (rate == 0) {
                snprintf(buf, len, "--:--");
                return buf;
        }
        secs = remaining / rate + (remaining % rate != 0);
        if (secs > 99 * 3600)
                snprintf(buf, len, ">99h");
        else if (secs >= 3600)
                snprintf(buf, len, "%u:%02u:%02u", (unsigned int)(secs / 3600),
                         (unsigned int)(secs / 60 % 60), (unsigned int)(secs % 60));
        else
                snprintf(buf, len, "%u:%02u", (unsigned int)(secs / 60), (unsigned int)(secs % 60));
        return buf;
}

static void progress_bar(char *out, size_t cols, unsigned int permille)
{
        size_t fill = (size_t)permille * cols / 1000;

        for (size_t i = 0; i < cols; i++)
                out[i] = i < fill ? '=' : ' ';
        if (fill < cols && fill > 0)
                out[fill - 1] = '>';
        out[cols] = '\0';
}

const char *progress_line(char *buf, size_t len, const struct progress *p, unsigned int width)
{
        char tail[192], done[32], total[32], eta[32] = "";
        char bar[PROGRESS_BAR_MAX + 1];
        const char *state = p->state ? p->state : "";
        uint64_t rate, remaining;
        unsigned int pm;
        size_t fixed, cols = 0;
        int statew;

        if (len == 0)
                return buf;

        if (!p->data) {
                char peer[PROGRESS_PEER_ESC];

                if (p->peer && *p->peer)
                        snprintf(buf, len, "%s (%s)", state,
                                 esc_term(peer, sizeof(peer), p->peer));
                else
                        snprintf(buf, len, "%s", state);
                goto fit;
        }

        rate = p->rate;
        if (rate == 0 && p->usec > 0)
                rate = (uint64_t)((long double)p->done * 1e6L / (long double)p->usec);
        remaining = p->done < p->total ? p->total - p->done : 0;
        if (remaining > 0) {
                char t[16];

                snprintf(eta, sizeof(eta), "  ETA %s", progress_eta(t, sizeof(t), remaining, rate));
        }
        pm = progress_permille(p->done, p->total);
        /* One decimal for the seconds, so the line does not jump around as it updates. */
        snprintf(tail, sizeof(tail), " %3u.%u%%  %s/%s  %.1f MB/s  %.1f s%s",
                 pm / 10, pm % 10,
                 progress_size(done, sizeof(done), p->done),
                 progress_size(total, sizeof(total), p->total),
                 (double)rate / 1e6, (double)p->usec / 1e6, eta);

        statew = (int)MAX(strlen(state), PROGRESS_STATE_COLS);
        fixed = (size_t)statew + MAX(strlen(tail), PROGRESS_TAIL_COLS) + 3;     /* " [" "]" */
        if (width == 0)
                cols = PROGRESS_BAR_DEFAULT;
        else if (width >= fixed + PROGRESS_BAR_MIN)
                cols = MIN(width - fixed, PROGRESS_BAR_MAX);

        if (cols > 0) {
                progress_bar(bar, cols, pm);
                snprintf(buf, len, "%-*s [%s]%s", statew, state, bar, tail);
        } else {
                snprintf(buf, len, "%s%s", state, tail);
        }

fit:
        if (width > 0 && strlen(buf) > width) {
                size_t cut = width < len ? width : len - 1;

                /* Not inside a UTF-8 sequence (the peer may hold one). */
                while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80)
                        cut--;
                buf[cut] = '\0';
        }
        return buf;
}

const char *progress_in(char *buf, size_t len, uint64_t usec)
{
        /* Rounded up: "in 0 s" would read as "now" while it is not. */
        if (usec == 0)
                snprintf(buf, len, "now");
        else
                snprintf(buf, len, "in %" PRIu64 " s", usec / 1000000 + (usec % 1000000 != 0));
        return buf;
}

const char *progress_summary(char *buf, size_t len, const char *name, const char *peer,
                             uint64_t bytes, uint64_t usec)
{
        char secs[32], n[PROGRESS_NAME_ESC], pe[PROGRESS_PEER_ESC];

        snprintf(buf, len, "sent %s (%" PRIu64 " bytes) to %s in %s: %.1f MB/s",
                 esc_term(n, sizeof(n), name), bytes, esc_term(pe, sizeof(pe), peer),
                 progress_seconds(secs, sizeof(secs), usec),
                 progress_mbps(bytes, usec));
        return buf;
}
