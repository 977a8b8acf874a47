/*
 * Operational log lines on stderr. Under systemd, stderr is a journal
 * stream and a "<N>" prefix sets each entry's PRIORITY; elsewhere lines are
 * plain text with the program name, as a user running it by hand expects.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "esc.h"
#include "log.h"

static int log_level = LOG_INFO;
static int log_journal = -1;    /* -1: not yet checked */

/*
 * JOURNAL_STREAM is inherited by children too, so it only counts when it
 * names the very pipe our stderr is (sd_journal_stream_fd(3)).
 */
static bool log_detect_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        uintmax_t dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%ju:%ju", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

bool log_journal_stream(void)
{
        if (log_journal < 0)
                log_journal = log_detect_journal();
        return log_journal;
}

void log_set_level(int level)
{
        if (level < LOG_EMERG)
                level = LOG_EMERG;
        if (level > LOG_DEBUG)
                level = LOG_DEBUG;
        log_level = level;
}

int log_get_level(void)
{
        return log_level;
}

static const char *log_level_word(int level)
{
        switch (level) {
        case LOG_EMERG:
        case LOG_ALERT:
        case LOG_CRIT:
        case LOG_ERR:
                return "error: ";
        case LOG_WARNING:
                return "warning: ";
        case LOG_DEBUG:
                return "debug: ";
        default:
                return "";
        }
}

void log_msg(int level, const char *fmt, ...)
{
        char prefix[32], raw[2048], text[ESC_TERM_SIZE(sizeof(raw))];
        struct iovec iov[3];
        va_list ap;
        int saved = errno, n;

        if (level > log_level)
                return;

        va_start(ap, fmt);
        n = vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        if (n < 0)
                goto out;
        /* One entry per call, and text: a name may be any bytes (names =
         * any), so a newline, a terminal's escape or a byte that is not
         * UTF-8 in one is written escaped (esc.h), never as itself. */
        esc_term(text, sizeof(text), raw);
        n = (int)strlen(text);

        if (log_journal_stream())
                snprintf(prefix, sizeof(prefix), "<%d>", level);
        else
                snprintf(prefix, sizeof(prefix), "rdmaxferd: %s", log_level_word(level));

        /* A single write keeps lines whole. */
        iov[0] = (struct iovec){ prefix, strlen(prefix) };
        iov[1] = (struct iovec){ text, (size_t)n };
        iov[2] = (struct iovec){ "\n", 1 };
        (void)!writev(STDERR_FILENO, iov, 3);
out:
        errno = saved;
}
