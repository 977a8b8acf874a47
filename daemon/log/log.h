#pragma once

/*
 * Operational log lines. Under systemd (JOURNAL_STREAM set) each line goes
 * to stderr with a "<N>" priority prefix, which journald turns into the
 * entry's PRIORITY; elsewhere it is plain text on stderr. Per-transfer
 * records with structured fields go through journal.h instead.
 */

#include <stdbool.h>
#include <syslog.h>

#include "macro.h"

void log_set_level(int level);          /* LOG_ERR .. LOG_DEBUG */
int log_get_level(void);
/* True when stderr is this process's journal stream (JOURNAL_STREAM matches). */
bool log_journal_stream(void);
void log_msg(int level, const char *fmt, ...) _printf_(2, 3);

#define log_err(...)     log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)
