#include "stats.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "macro.h"

static_assert(_CTL_DIR_MAX * (STATS_SLOTS - 1) <= CTL_STATS_REASONS_MAX,
              "every reason of both directions fits one STATS_INFO");
static_assert((int)STATS_DIR_RECV == (int)CTL_DIR_RECV && (int)STATS_DIR_SEND == (int)CTL_DIR_SEND &&
              (int)_STATS_DIR_MAX == (int)_CTL_DIR_MAX, "a snapshot's directions are STATS_INFO's");

void stats_tally_add(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes)
{
        if (cancelled) {
                t->failed[STATS_SLOT_CANCELLED]++;
        } else if (status == WIRE_OK) {
                t->done++;
                t->bytes += bytes;
        } else {
                t->failed[status < _WIRE_STATUS_MAX ? status : STATS_SLOT_UNKNOWN]++;
        }
}

const char *stats_reason_name(unsigned int slot)
{
        /* Stable, as wire_status_name()'s: dashboards name them. */
        if (slot == STATS_SLOT_UNKNOWN)
                return "unknown";
        if (slot == STATS_SLOT_CANCELLED)
                return "cancelled";
        return slot == WIRE_OK ? NULL : wire_status_name(slot);
}

int stats_tally_export(struct ctl_stats *s, unsigned int dir, const struct stats_tally *t)
{
        assert(dir < _CTL_DIR_MAX);
        s->dir[dir].bytes = t->bytes;
        s->dir[dir].files = t->done;
        for (unsigned int k = 0; k < STATS_SLOTS; k++) {
                struct ctl_stats_reason *r;

                if (!t->failed[k] || !stats_reason_name(k))
                        continue;
                if (s->nreasons >= CTL_STATS_REASONS_MAX)
                        return -E2BIG;
                r = &s->reason[s->nreasons++];
                r->dir = (uint8_t)dir;
                r->count = t->failed[k];
                snprintf(r->name, sizeof(r->name), "%s", stats_reason_name(k));
        }
        return 0;
}

uint64_t stats_failed_total(const struct ctl_stats *s, unsigned int dir)
{
        uint64_t n = 0;

        for (size_t i = 0; i < s->nreasons; i++)
                if (s->reason[i].dir == dir)
                        n += s->reason[i].count;
        return n;
}

struct stats_out {
        char *buf;
        size_t cap, len;
        bool full;
};

_printf_(2, 3)
static void out_printf(struct stats_out *o, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (o->full)
                return;
        va_start(ap, fmt);
        n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t)n >= o->cap - o->len) {
                o->full = true;
                return;
        }
        o->len += (size_t)n;
}

static void out_head(struct stats_out *o, const char *name, const char *type, const char *help)
{
        out_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *const stats_dir_label[_STATS_DIR_MAX] = {
        [STATS_DIR_RECV] = "recv",
        [STATS_DIR_SEND] = "send",
};

int stats_prometheus(char *buf, size_t cap, const struct stats_snapshot *s)
{
        struct stats_out o = { .buf = buf, .cap = cap };

        if (!buf || cap == 0)
                return -ENOSPC;

        out_head(&o, "rdmaxfer_received_bytes_total", "counter",
                 "Bytes of the files received, verified and published.");
        out_printf(&o, "rdmaxfer_received_bytes_total %" PRIu64 "\n", s->dir[STATS_DIR_RECV].tally.bytes);
        out_head(&o, "rdmaxfer_sent_bytes_total", "counter",
                 "Bytes of the files sent that the receiver verified and published.");
        out_printf(&o, "rdmaxfer_sent_bytes_total %" PRIu64 "\n", s->dir[STATS_DIR_SEND].tally.bytes);

        out_head(&o, "rdmaxfer_transfers_total", "counter",
                 "Finished transfers by direction and result: ok, or why they failed.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++) {
                const char *dir = stats_dir_label[d];

                out_printf(&o, "rdmaxfer_transfers_total{direction=\"%s\",result=\"ok\"} %" PRIu64 "\n",
                           dir, s->dir[d].tally.done);
                for (unsigned int k = 0; k < STATS_SLOTS; k++) {
                        const char *name = stats_reason_name(k);

                        /* A receiver never sees a cancel: the sender's is a protocol failure there. */
                        if (!name || (k == STATS_SLOT_CANCELLED && d == STATS_DIR_RECV))
                                continue;
                        out_printf(&o, "rdmaxfer_transfers_total{direction=\"%s\",result=\"%s\"} %" PRIu64 "\n",
                                   dir, name, s->dir[d].tally.failed[k]);
                }
        }

        out_head(&o, "rdmaxfer_transfers_active", "gauge", "Transfers moving data now.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_printf(&o, "rdmaxfer_transfers_active{direction=\"%s\"} %" PRIu32 "\n",
                           stats_dir_label[d], s->dir[d].active);
        out_head(&o, "rdmaxfer_rate_bytes_per_second", "gauge",
                 "Bytes per second moved by the active transfers over the last second.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_printf(&o, "rdmaxfer_rate_bytes_per_second{direction=\"%s\"} %" PRIu64 "\n",
                           stats_dir_label[d], s->dir[d].rate);
        out_head(&o, "rdmaxfer_jobs_queued", "gauge", "Send jobs waiting: for a free transfer slot, or to retry.");
        out_printf(&o, "rdmaxfer_jobs_queued %" PRIu32 "\n", s->queued);

        out_head(&o, "rdmaxfer_ring_slots", "gauge",
                 "Slots of the receive ring (recv) and the send pool (send), held by transfers or free.");
        out_printf(&o, "rdmaxfer_ring_slots{ring=\"recv\",state=\"held\"} %" PRIu32 "\n", s->ring_held);
        out_printf(&o, "rdmaxfer_ring_slots{ring=\"recv\",state=\"free\"} %" PRIu32 "\n",
                   s->ring_slots > s->ring_held ? s->ring_slots - s->ring_held : 0);
        out_printf(&o, "rdmaxfer_ring_slots{ring=\"send\",state=\"held\"} %" PRIu32 "\n", s->pool_held);
        out_printf(&o, "rdmaxfer_ring_slots{ring=\"send\",state=\"free\"} %" PRIu32 "\n",
                   s->pool_slots > s->pool_held ? s->pool_slots - s->pool_held : 0);

        out_head(&o, "rdmaxfer_uptime_seconds", "gauge", "Seconds since the daemon started.");
        out_printf(&o, "rdmaxfer_uptime_seconds %" PRIu64 ".%03" PRIu64 "\n",
                   s->uptime_usec / 1000000, s->uptime_usec % 1000000 / 1000);

        if (o.full)
                return -ENOSPC;
        return (int)o.len;
}
