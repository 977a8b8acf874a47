/* xferctl stats: the daemon's counters since it started. */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "progress.h"
#include "stats.h"
#include "xferctl.h"

const char statscmd_help[] =
        "Usage: xferctl stats [--json]\n"
        "\n"
        "Show rdmaxferd's counters since it started: files and bytes received and\n"
        "sent, failed transfers by reason, transfers and rates now, jobs queued,\n"
        "how much of the receive ring and the send pool is in use, and each rail\n"
        "(RDMA device): up or down, and the bytes it carried each way. Every user\n"
        "of the control socket sees the same numbers: they name no job or file.\n"
        "\n"
        "  --json      one JSON object instead of text\n"
        "  -h, --help  show this help\n"
        "\n"
        "Sizes: KiB, MiB, GiB are powers of 1024; rates: MB/s is 10^6 bytes/s.\n";

/* "3723 s (1 h 02 min)"; just "42 s" under a minute. */
static const char *stats_uptime(char *buf, size_t len, uint64_t usec)
{
        uint64_t s = usec / 1000000, d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;

        if (s < 60)
                snprintf(buf, len, "%" PRIu64 " s", s);
        else if (d)
                snprintf(buf, len, "%" PRIu64 " s (%" PRIu64 " d %" PRIu64 " h %02" PRIu64 " min)",
                         s, d, h, m);
        else if (h)
                snprintf(buf, len, "%" PRIu64 " s (%" PRIu64 " h %02" PRIu64 " min)", s, h, m);
        else
                snprintf(buf, len, "%" PRIu64 " s (%" PRIu64 " min)", s, m);
        return buf;
}

static void stats_print_dir(const struct ctl_stats *s, unsigned int dir, const char *label)
{
        const struct ctl_stats_dir *d = &s->dir[dir];
        uint64_t failed = stats_failed_total(s, dir);
        const char *sep = " (";
        char size[32];

        printf("%-14s%" PRIu64 " file%s, %s (%" PRIu64 " bytes)\n", label, d->files,
               d->files == 1 ? "" : "s", progress_size(size, sizeof(size), d->bytes), d->bytes);
        printf("  %-12s%" PRIu64, "failed:", failed);
        /* Names are [a-z0-9_] (ctl_decode checks): nothing to escape. */
        for (size_t i = 0; i < s->nreasons; i++) {
                if (s->reason[i].dir != dir)
                        continue;
                printf("%s%s %" PRIu64, sep, s->reason[i].name, s->reason[i].count);
                sep = ", ";
        }
        printf("%s\n", failed ? ")" : "");
}

static void stats_print(const struct ctl_stats *s)
{
        const struct ctl_stats_dir *in = &s->dir[CTL_DIR_RECV], *out = &s->dir[CTL_DIR_SEND];
        char up[64];

        printf("%-14s%s\n", "uptime:", stats_uptime(up, sizeof(up), s->uptime_usec));
        stats_print_dir(s, CTL_DIR_RECV, "received:");
        stats_print_dir(s, CTL_DIR_SEND, "sent:");
        printf("%-14s%" PRIu32 " transfer%s, %.1f MB/s\n", "incoming now:", in->active,
               in->active == 1 ? "" : "s", (double)in->rate / 1e6);
        printf("%-14s%" PRIu32 " transfer%s, %.1f MB/s, %" PRIu32 " queued\n", "outgoing now:",
               out->active, out->active == 1 ? "" : "s", (double)out->rate / 1e6, s->queued);
        printf("%-14s%" PRIu32 " of %" PRIu32 " slots held\n", "receive ring:", s->ring_held,
               s->ring_slots);
        printf("%-14s%" PRIu32 " of %" PRIu32 " slots held\n", "send pool:", s->pool_held,
               s->pool_slots);
        /* Names are printable with no blank (ctl_decode checks). */
        for (unsigned int i = 0; i < s->nrails && i < CTL_RAILS_MAX; i++) {
                const struct ctl_stats_rail *r = &s->rail[i];
                char rx[32], tx[32];

                printf("%-14s%s %s, %s received, %s sent\n", i ? "" : "rails:", r->name, r->up ? "up" : "DOWN",
                       progress_size(rx, sizeof(rx), r->bytes[CTL_DIR_RECV]),
                       progress_size(tx, sizeof(tx), r->bytes[CTL_DIR_SEND]));
        }
}

int statscmd_run(const char *socket_path, int argc, char **argv)
{
        struct ctl_msg req = { .type = CTL_STATS }, rep;
        _cleanup_(closep) int sock = -1;
        bool json = false;
        int first, r;

        r = xferctl_parse_opts(argc, argv, statscmd_help, &json, &first);
        if (r >= 0)
                return r;
        if (first != argc) {
                xferctl_say("stats: unexpected argument '%s'", argv[first]);
                return XFERCTL_EXIT_USAGE;
        }

        sock = xferctl_connect(socket_path, true);
        if (sock < 0 || xferctl_call(sock, &req, -1, &rep) < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        if (rep.type == CTL_ERROR) {
                /* A daemon from before STATS takes it for a malformed message. */
                if (rep.error.code == -EBADMSG)
                        xferctl_say("stats: rdmaxferd does not know this request (is it older than xferctl?)");
                else
                        xferctl_say_error("stats", &rep.error);
                return XFERCTL_EXIT_FAILED;
        }
        if (rep.type != CTL_STATS_INFO) {
                xferctl_say_unexpected(&rep);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (json) {
                json_stats(stdout, &rep.stats);
                fputc('\n', stdout);
        } else {
                stats_print(&rep.stats);
        }
        return XFERCTL_EXIT_OK;
}
