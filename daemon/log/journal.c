/*
 * One structured journald entry per finished transfer. Built as an iovec
 * list for sd_journal_sendv() so that optional fields (digest, error) are
 * simply absent rather than empty.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "esc.h"
#include "journal.h"
#include "macro.h"
#include "log.h"
#include "msgid.h"
#include "wire.h"

#define JOURNAL_FIELDS_MAX      32
#define JOURNAL_FIELD_SIZE      2048

double journal_mbps(uint64_t bytes, uint64_t usec)
{
        if (usec == 0)
                return 0.0;
        /* bytes per microsecond is 10^6 bytes per second. */
        return (double)bytes / (double)usec;
}


struct journal_entry {
        struct iovec iov[JOURNAL_FIELDS_MAX];
        char buf[JOURNAL_FIELDS_MAX][JOURNAL_FIELD_SIZE];
        size_t n;
};

static void journal_add(struct journal_entry *j, const char *fmt, ...) _printf_(2, 3);

static void journal_add(struct journal_entry *j, const char *fmt, ...)
{
        va_list ap;
        int len;

        if (j->n >= JOURNAL_FIELDS_MAX)
                return;
        va_start(ap, fmt);
        len = vsnprintf(j->buf[j->n], JOURNAL_FIELD_SIZE, fmt, ap);
        va_end(ap);
        if (len < 0)
                return;
        if (len >= JOURNAL_FIELD_SIZE)
                len = JOURNAL_FIELD_SIZE - 1;
        j->iov[j->n] = (struct iovec){ j->buf[j->n], (size_t)len };
        j->n++;
}

void journal_xfer(const struct journal_xfer *x)
{
        static struct journal_entry j;  /* 40 KiB: keep it off the loop's stack */
        char file[ESC_TERM_SIZE(WIRE_NAME_MAX)], text[ESC_TERM_SIZE(WIRE_TEXT_MAX)], peer[128];
        char message[JOURNAL_FIELD_SIZE - 16], mbps[32], fps[32] = "", resumed[96] = "", skipped[64] = "";
        bool recv = x->direction && strcmp(x->direction, "recv") == 0;
        bool ok = x->status == WIRE_OK && !x->cancelled;
        const char *result = ok ? "ok" : x->cancelled ? "cancelled" : wire_status_str(x->status);
        int priority = ok ? LOG_INFO : LOG_WARNING;

        /* Names and texts may come from the network (a refused name is
         * logged too), and a name may be any bytes (names = any): each
         * goes in esc_term()'s form (control bytes, bytes that are not
         * UTF-8 and invisible formatting characters escaped), so an entry
         * stays one line of text, never a blob or a terminal's command. */
        esc_term(file, sizeof(file), x->file);
        esc_term(peer, sizeof(peer), x->peer);
        esc_term(text, sizeof(text), x->text);
        /* MESSAGE and RDMAXFER_MBPS come from the same string: they always agree. */
        if (x->resumed && x->holes)
                snprintf(resumed, sizeof(resumed), ", %" PRIu64 " of them resumed, %" PRIu64 " holes not sent",
                         x->resumed, x->holes);
        else if (x->resumed)
                snprintf(resumed, sizeof(resumed), ", %" PRIu64 " of them resumed", x->resumed);
        else if (x->holes)
                snprintf(resumed, sizeof(resumed), ", %" PRIu64 " of them holes not sent", x->holes);
        /* What moved in this attempt: bytes kept from an earlier one took
         * no time, and a sparse file's holes never moved. */
        snprintf(mbps, sizeof(mbps), "%.1f",
                 journal_mbps(x->bytes - MIN(x->resumed + x->holes, x->bytes), x->usec));

        if (x->skipped)
                snprintf(skipped, sizeof(skipped), ", %u skipped", x->skipped);
        if (x->deleted)
                snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped), ", %" PRIu64 " deleted",
                         x->deleted);
        if (x->files_total > 1) {
                /* One entry for the whole job: count files, name none. */
                snprintf(file, sizeof(file), "%u of %u files", x->files, x->files_total);
                snprintf(fps, sizeof(fps), "%.1f", x->usec ? (double)x->files * 1e6 / (double)x->usec : 0.0);
        }
        if (ok && x->files_total > 1)
                snprintf(message, sizeof(message),
                         "%s %u files%s (%" PRIu64 " bytes) %s %s in %" PRIu64 ".%03" PRIu64 " s: %s MB/s, %s files/s",
                         recv ? "received" : "sent", x->files, skipped, x->bytes, recv ? "from" : "to", peer,
                         x->usec / 1000000, x->usec % 1000000 / 1000, mbps, fps);
        else if (x->pull && x->land_path)
                snprintf(message, sizeof(message), "%s pulled %s as %s: %s (%" PRIu64 " bytes sent back in %" PRIu64
                         ".%03" PRIu64 " s)%s%s", peer, x->land_path, x->land_user && x->land_user[0] ? x->land_user : "?",
                         result, x->bytes, x->usec / 1000000, x->usec % 1000000 / 1000, text[0] ? ": " : "", text);
        else if (ok)
                snprintf(message, sizeof(message),
                         "%s %s (%" PRIu64 " bytes%s%s) %s %s in %" PRIu64 ".%03" PRIu64 " s: %s MB/s",
                         recv ? "received" : "sent", file, x->bytes, resumed, x->skipped ? ", skipped" : "",
                         recv ? "from" : "to", peer,
                         x->usec / 1000000, x->usec % 1000000 / 1000, mbps);
        else
                snprintf(message, sizeof(message),
                         "%s of %s %s %s %s after %" PRIu64 " bytes%s%s%s%s",
                         recv ? "receive" : "send", file, recv ? "from" : "to", peer,
                         x->cancelled ? "cancelled" : "failed", x->bytes,
                         x->cancelled ? "" : ": ", x->cancelled ? "" : result,
                         text[0] ? ": " : "", text);

        j.n = 0;
        journal_add(&j, "MESSAGE=%s", message);
        journal_add(&j, "MESSAGE_ID=%s",
                    !ok ? MSGID_XFER_FAILED : recv ? MSGID_XFER_RECEIVED : MSGID_XFER_SENT);
        journal_add(&j, "PRIORITY=%d", priority);
        journal_add(&j, "SYSLOG_IDENTIFIER=%s", program_invocation_short_name);
        journal_add(&j, "RDMAXFER_ID=%" PRIu64, x->id);
        journal_add(&j, "RDMAXFER_DIRECTION=%s", recv ? "recv" : "send");
        journal_add(&j, "RDMAXFER_PEER=%s", peer);
        journal_add(&j, "RDMAXFER_FILE=%s", file);
        journal_add(&j, "RDMAXFER_BYTES=%" PRIu64, x->bytes);
        journal_add(&j, "RDMAXFER_RESUMED_BYTES=%" PRIu64, x->resumed);
        if (x->holes)
                journal_add(&j, "RDMAXFER_HOLE_BYTES=%" PRIu64, x->holes);
        journal_add(&j, "RDMAXFER_USEC=%" PRIu64, x->usec);
        journal_add(&j, "RDMAXFER_MBPS=%s", mbps);
        journal_add(&j, "RDMAXFER_RESULT=%s", result);
        journal_add(&j, "RDMAXFER_STATUS=%u", x->status);
        if (x->lanes)
                journal_add(&j, "RDMAXFER_LANES=%u", x->lanes);
        if (x->rails && x->rails[0])
                journal_add(&j, "RDMAXFER_RAILS=%s", x->rails);
        if (x->rail_lanes && x->rail_lanes[0])
                journal_add(&j, "RDMAXFER_RAIL_LANES=%s", x->rail_lanes);
        if (x->rails_lost && x->rails_lost[0])
                journal_add(&j, "RDMAXFER_RAILS_LOST=%s", x->rails_lost);
        if (x->attempt)
                journal_add(&j, "RDMAXFER_ATTEMPT=%u", x->attempt);
        if (x->files_total > 1) {
                journal_add(&j, "RDMAXFER_FILES=%u", x->files);
                journal_add(&j, "RDMAXFER_FILES_TOTAL=%u", x->files_total);
                journal_add(&j, "RDMAXFER_FILES_PER_SEC=%s", fps);
                if (x->packs)
                        journal_add(&j, "RDMAXFER_PACKS=%u", x->packs);
        }
        if (x->skipped)
                journal_add(&j, "RDMAXFER_SKIPPED=%u", x->skipped);
        if (x->deleted)
                journal_add(&j, "RDMAXFER_DELETED=%" PRIu64, x->deleted);
        if (x->digest && x->digest[0])
                journal_add(&j, "RDMAXFER_DIGEST=%s", x->digest);
        if (text[0])
                journal_add(&j, "RDMAXFER_ERROR=%s", text);
        if (x->relay)
                journal_add(&j, "RDMAXFER_RELAY=%s", x->relay);
        if (x->land_path) {
                journal_add(&j, x->pull ? "RDMAXFER_PULLED=%s" : "RDMAXFER_LANDED=%s", x->land_path);
                journal_add(&j, "RDMAXFER_UID=%u", x->land_uid);
                if (x->land_user && x->land_user[0])
                        journal_add(&j, "RDMAXFER_USER=%s", x->land_user);
        }
        if (x->relayed)
                journal_add(&j, "RDMAXFER_FORWARDED_BYTES=%" PRIu64, x->forwarded);
        if (x->hops) {
                char failed[ESC_TERM_SIZE(WIRE_TEXT_MAX)];

                journal_add(&j, "RDMAXFER_NODES=%u", x->hops + 1);
                journal_add(&j, "RDMAXFER_NODES_OK=%u", x->hops_ok);
                if (x->hop_failed) {
                        esc_term(failed, sizeof(failed), x->hop_failed);
                        journal_add(&j, "RDMAXFER_NODE_FAILED=%s", failed);
                }
        }

        sd_journal_sendv(j.iov, (int)j.n);

        /* By hand (no journal stream on stderr) the line would otherwise be invisible. */
        if (!log_journal_stream())
                log_msg(priority, "%s", message);
}
