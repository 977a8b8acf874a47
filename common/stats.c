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

static const uint64_t stats_duration_bounds[STATS_DURATION_BOUNDS] = {
        100000, 1000000, 10000000, 60000000, 600000000, 3600000000,
};
/* The same, as the text's le labels say them. */
static const char *const stats_duration_le[STATS_DURATION_BOUNDS] = {
        "0.1", "1", "10", "60", "600", "3600",
};

uint64_t stats_duration_bound_usec(unsigned int i)
{
        assert(i < STATS_DURATION_BOUNDS);
        return stats_duration_bounds[i];
}

void stats_tally_add(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes,
                     uint64_t usec)
{
        stats_tally_add_files(t, cancelled, status, bytes, usec, 1);
}

void stats_tally_add_files(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes,
                           uint64_t usec, uint64_t files)
{
        unsigned int b = 0;

        while (b < STATS_DURATION_BOUNDS && usec > stats_duration_bounds[b])
                b++;
        t->duration[b]++;
        t->duration_usec += usec;
        if (cancelled) {
                t->failed[STATS_SLOT_CANCELLED]++;
        } else if (status == WIRE_OK) {
                t->done++;
                t->files += files;
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
        s->dir[dir].files = t->files;
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

/* @v as a label value: backslash, quote and newline escaped. */
static void out_label_value(struct stats_out *o, const char *v)
{
        for (; *v; v++) {
                if (*v == '\\' || *v == '"')
                        out_printf(o, "\\%c", *v);
                else if (*v == '\n')
                        out_printf(o, "\\n");
                else
                        out_printf(o, "%c", *v);
        }
}

static void out_seconds(struct stats_out *o, uint64_t usec)
{
        out_printf(o, "%" PRIu64 ".%06" PRIu64, usec / 1000000, usec % 1000000);
}

static void out_duration(struct stats_out *o, const char *dir, const struct stats_tally *t)
{
        const char *name = "rdmaxfer_transfer_duration_seconds";
        uint64_t n = 0;

        for (unsigned int b = 0; b < STATS_DURATION_BOUNDS; b++) {
                n += t->duration[b];
                out_printf(o, "%s_bucket{direction=\"%s\",le=\"%s\"} %" PRIu64 "\n",
                           name, dir, stats_duration_le[b], n);
        }
        n += t->duration[STATS_DURATION_BOUNDS];
        out_printf(o, "%s_bucket{direction=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name, dir, n);
        out_printf(o, "%s_sum{direction=\"%s\"} ", name, dir);
        out_seconds(o, t->duration_usec);
        out_printf(o, "\n%s_count{direction=\"%s\"} %" PRIu64 "\n", name, dir, n);
}

int stats_prometheus(char *buf, size_t cap, const struct stats_snapshot *s)
{
        struct stats_out o = { .buf = buf, .cap = cap };

        if (!buf || cap == 0)
                return -ENOSPC;

        out_head(&o, "rdmaxfer_transferred_bytes_total", "counter",
                 "Data bytes moved on the wire by every transfer, running or ended, whatever its result.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_printf(&o, "rdmaxfer_transferred_bytes_total{direction=\"%s\"} %" PRIu64 "\n",
                           stats_dir_label[d], s->dir[d].wire_bytes);
        out_head(&o, "rdmaxfer_received_bytes_total", "counter",
                 "Bytes of the files received, verified and published.");
        out_printf(&o, "rdmaxfer_received_bytes_total %" PRIu64 "\n", s->dir[STATS_DIR_RECV].tally.bytes);
        out_head(&o, "rdmaxfer_sent_bytes_total", "counter",
                 "Bytes of the files sent that the receiver verified and published.");
        out_printf(&o, "rdmaxfer_sent_bytes_total %" PRIu64 "\n", s->dir[STATS_DIR_SEND].tally.bytes);

        out_head(&o, "rdmaxfer_files_total", "counter",
                 "Files (a tree's entries) of the transfers done, by direction.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_printf(&o, "rdmaxfer_files_total{direction=\"%s\"} %" PRIu64 "\n", stats_dir_label[d],
                           s->dir[d].tally.files);
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
        out_head(&o, "rdmaxfer_transfer_duration_seconds", "histogram",
                 "Finished transfers, done or failed, by the seconds they ran.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_duration(&o, stats_dir_label[d], &s->dir[d].tally);

        out_head(&o, "rdmaxfer_transfers_active", "gauge", "Transfers moving data now.");
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                out_printf(&o, "rdmaxfer_transfers_active{direction=\"%s\"} %" PRIu32 "\n",
                           stats_dir_label[d], s->dir[d].active);
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

        out_head(&o, "rdmaxfer_start_time_seconds", "gauge", "When the daemon started, in seconds since the Unix epoch.");
        out_printf(&o, "rdmaxfer_start_time_seconds ");
        out_seconds(&o, s->start_time_usec);
        out_printf(&o, "\n");
        out_head(&o, "rdmaxfer_build_info", "gauge", "Always 1; the daemon's version in its label.");
        out_printf(&o, "rdmaxfer_build_info{version=\"");
        out_label_value(&o, s->version ? s->version : "");
        out_printf(&o, "\"} 1\n");

        /* Per rail (rdmaxferd.conf listen): one series each, by device name. */
        out_head(&o, "rdmaxfer_rail_transferred_bytes_total", "counter",
                 "Data bytes moved on the wire over each rail (RDMA device), by direction.");
        for (unsigned int i = 0; i < s->nrails && i < ARRAY_SIZE(s->rail); i++) {
                char name[sizeof(s->rail[i].name)];

                /* Terminated whatever the snapshot holds. */
                snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, s->rail[i].name);
                for (unsigned int d = 0; d < _STATS_DIR_MAX; d++) {
                        out_printf(&o, "rdmaxfer_rail_transferred_bytes_total{rail=\"");
                        out_label_value(&o, name);
                        out_printf(&o, "\",direction=\"%s\"} %" PRIu64 "\n", stats_dir_label[d],
                                   s->rail[i].wire_bytes[d]);
                }
        }
        out_head(&o, "rdmaxfer_rail_up", "gauge",
                 "1 while the rail's RDMA device is up and its port active, else 0.");
        for (unsigned int i = 0; i < s->nrails && i < ARRAY_SIZE(s->rail); i++) {
                char name[sizeof(s->rail[i].name)];

                snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, s->rail[i].name);
                out_printf(&o, "rdmaxfer_rail_up{rail=\"");
                out_label_value(&o, name);
                out_printf(&o, "\"} %d\n", s->rail[i].up ? 1 : 0);
        }

        if (o.full)
                return -ENOSPC;
        return (int)o.len;
}
