#pragma once

/*
 * The daemon's counters since start (`xferctl stats`, the Prometheus
 * textfile): tallies of finished transfers by outcome, their short reason
 * names, and the Prometheus text rendering of a snapshot. Pure: no I/O,
 * no clocks.
 *
 * A reason is a failed transfer's wire status by a short name ("exists",
 * "checksum", ...: stats_reason_name()), or "cancelled" (a user cancelled
 * it), or "unknown" (a status this build has no name for, from a newer
 * peer). Names are [a-z_] only: they go into JSON keys and Prometheus
 * label values as they are.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* The snapshot (ctl.h); only declared here, so the engine can keep a tally
 * without seeing the control protocol. */
struct ctl_stats;

/* Tally slots: each wire status but WIRE_OK, then these two. */
#define STATS_SLOT_UNKNOWN      _WIRE_STATUS_MAX
#define STATS_SLOT_CANCELLED    (_WIRE_STATUS_MAX + 1)
#define STATS_SLOTS             (_WIRE_STATUS_MAX + 2)

/* Finished transfers of one direction. */
struct stats_tally {
        uint64_t bytes;                 /* of the transfers done: the files' sizes */
        uint64_t done;                  /* done: verified and published */
        uint64_t failed[STATS_SLOTS];   /* by reason slot; [WIRE_OK] stays 0 */
};

/*
 * Count one finished transfer: done when @status is WIRE_OK and not
 * @cancelled (then @bytes are added), else failed by reason.
 */
void stats_tally_add(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes);

/* The reason's name for a slot ("exists", "cancelled", "unknown"); NULL for WIRE_OK. */
const char *stats_reason_name(unsigned int slot);

/*
 * Append @t's non-zero reasons to @s->reason for direction @dir (enum
 * ctl_dir), and set its bytes and files. -E2BIG when they do not all fit
 * (those that fit are in).
 */
int stats_tally_export(struct ctl_stats *s, unsigned int dir, const struct stats_tally *t);

/* Failed transfers of @dir in @s, all reasons. */
uint64_t stats_failed_total(const struct ctl_stats *s, unsigned int dir);

/*
 * @s in the Prometheus text exposition format (version 0.0.4), with HELP
 * and TYPE lines; metric names are documented in rdmaxferd(8), METRICS.
 * Every known reason is present for each direction, 0 when none, so
 * increase() sees a series' first failure. Returns the length written
 * (NUL not counted), or -ENOSPC when @cap is too small (STATS_TEXT_MAX
 * always suffices).
 */
#define STATS_TEXT_MAX          8192
int stats_prometheus(char *buf, size_t cap, const struct ctl_stats *s);
