#pragma once

/*
 * The daemon's counters since start (`xferctl stats`, the Prometheus
 * textfile): tallies of finished transfers by outcome, their short reason
 * names, a snapshot of them all and its Prometheus text rendering. Pure:
 * no I/O, no clocks.
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

/* The duration histogram's upper bounds (seconds: 0.1, 1, 10, 60, 600,
 * 3600), then +Inf: seconds to hours, as transfers of a file or a tree run. */
#define STATS_DURATION_BOUNDS   6

/* Finished transfers of one direction. */
struct stats_tally {
        uint64_t bytes;                 /* of the transfers done: the files' sizes */
        uint64_t done;                  /* done: verified and published */
        uint64_t files;                 /* the files (a tree's entries) of those done */
        uint64_t failed[STATS_SLOTS];   /* by reason slot; [WIRE_OK] stays 0 */
        /* Every transfer counted above, done or failed, by how long it ran:
         * [i] those within bound i and above bound i - 1 (not cumulative;
         * the text makes them so), [STATS_DURATION_BOUNDS] the longer ones. */
        uint64_t duration[STATS_DURATION_BOUNDS + 1];
        uint64_t duration_usec;         /* their durations summed */
};

/*
 * Count one finished transfer that ran @usec: done when @status is WIRE_OK
 * and not @cancelled (then @bytes are added), else failed by reason.
 * Either way its duration goes into the histogram.
 */
void stats_tally_add(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes,
                     uint64_t usec);
/* The same for a transfer of @files files (a job of several, a tree and
 * its entries: one transfer), counted in files when done. Both sides
 * count a job this way: one transfer, its files, its bytes. */
void stats_tally_add_files(struct stats_tally *t, bool cancelled, unsigned int status, uint64_t bytes,
                           uint64_t usec, uint64_t files);

/* Bound @i of the duration histogram in microseconds (i < STATS_DURATION_BOUNDS). */
uint64_t stats_duration_bound_usec(unsigned int i);

/* The reason's name for a slot ("exists", "cancelled", "unknown"); NULL for WIRE_OK. */
const char *stats_reason_name(unsigned int slot);

/* The directions of a snapshot, as ctl.h's enum ctl_dir numbers them (stats.c checks). */
enum stats_dir {
        STATS_DIR_RECV = 0,
        STATS_DIR_SEND = 1,
        _STATS_DIR_MAX,
};

/*
 * The daemon's numbers at one moment, whoever composes them (the daemon:
 * the engine's and the job table's): what `xferctl stats` shows (the
 * control socket's STATS_INFO is its translation, stats_tally_export())
 * and the metrics file renders (stats_prometheus()).
 */
struct stats_snapshot {
        uint64_t uptime_usec;
        uint64_t start_time_usec;       /* CLOCK_REALTIME when the daemon started (unix time) */
        const char *version;            /* this build's; NULL: none said */
        struct {
                struct stats_tally tally;       /* finished transfers */
                /* Data bytes moved on the wire since start, in chunks, by
                 * every transfer, running or ended, whatever became of it:
                 * a receiver's as they arrive, a sender's as the peer's
                 * adapter acknowledges them. Never goes down. */
                uint64_t wire_bytes;
                uint64_t rate;                  /* bytes/s over the last second (`xferctl stats`) */
                uint32_t active;                /* transfers moving data now */
        } dir[_STATS_DIR_MAX];
        uint32_t queued;                /* jobs waiting to be sent: QUEUED or RETRYING */
        uint32_t ring_held, ring_slots; /* receive ring: slots held by transfers, in all */
        uint32_t pool_held, pool_slots; /* send pool: the same */
        /* The daemon's rails (rdmaxferd.conf listen), in order: each RDMA
         * device, the data bytes its lanes moved each way (as wire_bytes),
         * and whether it carries lanes now. */
        unsigned int nrails;
        struct stats_rail {
                char name[64];
                uint64_t wire_bytes[_STATS_DIR_MAX];
                bool up;
        } rail[4];
};

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
 * Every reason is present for each direction, 0 when none, so increase()
 * sees a series' first failure. Returns the length written (NUL not
 * counted), or -ENOSPC when @cap is too small (STATS_TEXT_MAX always
 * suffices).
 */
#define STATS_TEXT_MAX          16384
int stats_prometheus(char *buf, size_t cap, const struct stats_snapshot *s);
