#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "esc.h"
#include "json.h"
#include "progress.h"
#include "wire.h"
#include "xferctl.h"

struct xferctl_cmd {
        const char *name;
        int (*run)(const char *socket_path, int argc, char **argv);
        const char *help;
};

static const char list_help[] =
        "Usage: xferctl list [--json]\n"
        "\n"
        "List the jobs rdmaxferd knows: queued and running sends, and the most\n"
        "recent finished ones.\n"
        "\n"
        "  --json      one JSON array of job objects instead of a table\n"
        "  -h, --help  show this help\n";

static const char status_help[] =
        "Usage: xferctl status ID [--json]\n"
        "\n"
        "Show one job: state, peer, name, bytes, time, rate and result; for a job\n"
        "waiting to retry, the attempt, when it starts and why the last one failed;\n"
        "for a relay chain, how many of its nodes published the file, each\n"
        "node's bytes so far and what became of it, which one failed first,\n"
        "and why, and which others did not get it.\n"
        "Exits 0 when the job exists, whatever its state.\n"
        "\n"
        "  --json      one JSON object instead of text\n"
        "  -h, --help  show this help\n";

static const char help_help[] =
        "Usage: xferctl help [COMMAND]\n"
        "\n"
        "Show the usage of xferctl, or of COMMAND. Every command also takes\n"
        "-h/--help.\n"
        "\n"
        "  -h, --help  show this help\n";

static const char cancel_help[] =
        "Usage: xferctl cancel ID\n"
        "\n"
        "Ask rdmaxferd to cancel a queued, retrying or running job. The receiver\n"
        "publishes nothing for a cancelled transfer.\n"
        "\n"
        "  -h, --help  show this help\n";

void xferctl_usage(FILE *f)
{
        fputs("Usage: xferctl [--socket PATH] COMMAND [ARGS...]\n"
              "\n"
              "Send files over RDMA through the local rdmaxferd.\n"
              "\n"
              "Commands:\n"
              "  send [-r] SRC... PEER[:PORT]|NODELIST [--as NAME] [--to DEST]\n"
              "       [--bwlimit RATE] [--retries N] [--skip-existing | --sync=size|digest]\n"
              "       [--parallel N] [--peer-names PATTERN] [--no-wait] [--json]\n"
              "                       send files, or trees with -r, to PEER's rdmaxferd (or to\n"
              "                       several peers: one file down a relay chain, else to\n"
              "                       each), showing progress (help send)\n"
              "  send FILE... PEER[:PORT]:/PATH [--bwlimit RATE] [--retries N] [--no-wait]\n"
              "                       land files on PEER as you, at PATH (help send)\n"
              "  get PEER[:PORT]:/PATH DEST [--overwrite] [--bwlimit RATE] [--retries N]\n"
              "       [--no-wait]\n"
              "                       fetch a file from PEER, read there and landed here as\n"
              "                       you (help get)\n"
              "  list [--json]        list queued, running and recent jobs\n"
              "  status ID [--json]   show one job\n"
              "  cancel ID            cancel a queued, retrying or running job\n"
              "  stats [--json]       show the daemon's counters since it started\n"
              "  sum [--cached] [FILE...]\n"
              "                       print FILEs' digests, as RDMAXFER_DIGEST has them\n"
              "  hosts [--resolve] [NODELIST]\n"
              "                       print a Slurm hostlist (node[01-16]-ib) one host a\n"
              "                       line, each name as send maps it (peer_names);\n"
              "                       --resolve: with its address\n"
              "  bcast [-r] [--nodes NODELIST] [--job ID] SRC... DEST\n"
              "                       stage SRC on every node of a Slurm job, as\n"
              "                       slurm/JOBID/DEST in each one's incoming directory\n"
              "  help [COMMAND]       show help for a command\n"
              "\n"
              "Options (before the command):\n"
              "  -s, --socket PATH    rdmaxferd's control socket (default: $" XFERCTL_SOCKET_ENV ",\n"
              "                       else " XFERCTL_SOCKET_DEFAULT ")\n"
              "  -h, --help           show this help\n"
              "  -V, --version        show the version\n"
              "\n"
              "Exit status: 0 success; 1 transfer failed or cancelled, or rdmaxferd refused\n"
              "the request; 2 usage error (nothing was submitted); 3 rdmaxferd unreachable.\n"
              "See xferctl(1).\n", f);
}

void xferctl_say(const char *fmt, ...)
{
        va_list ap;

        fflush(stdout);
        fputs("xferctl: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int xferctl_connect(const char *socket_path, bool say)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *hint = "";
        int fd, r;

        if (strlen(socket_path) >= sizeof(sa.sun_path)) {
                if (say)
                        xferctl_say("control socket path is too long: %s", socket_path);
                return -1;
        }
        memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                if (say)
                        xferctl_say("cannot create a socket: %s", strerror(errno));
                return -1;
        }
        /* A SUBMIT of a long chain is 28 KiB: room for it whatever wmem_default says (best effort). */
        (void)ctl_socket_setup(fd);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                return fd;

        r = errno;
        safe_close(fd);
        if (!say)
                return -1;
        switch (r) {
        case ENOENT:
        case ECONNREFUSED:
                hint = " (is rdmaxferd running?)";
                break;
        case EACCES:
        case EPERM:
                /* The socket and its directory belong to group rdmaxfer. */
                hint = " (are you in the rdmaxfer group? After usermod -aG rdmaxfer USER, log in again)";
                break;
        case EPROTOTYPE:
                hint = " (not an rdmaxferd control socket)";
                break;
        }
        xferctl_say("cannot connect to rdmaxferd at %s: %s%s", socket_path, strerror(r), hint);
        return -1;
}

void xferctl_say_io(int r)
{
        switch (r) {
        case -ECONNRESET:
        case -EPIPE:
                xferctl_say("rdmaxferd closed the control connection");
                break;
        case -EBADMSG:
                xferctl_say("malformed message from rdmaxferd");
                break;
        case -EPROTONOSUPPORT:
                xferctl_say("rdmaxferd speaks another control protocol version (xferctl speaks %d)",
                            CTL_VERSION);
                break;
        default:
                xferctl_say("talking to rdmaxferd: %s", strerror(-r));
                break;
        }
}

void xferctl_say_unexpected(const struct ctl_msg *m)
{
        xferctl_say("unexpected message type %u from rdmaxferd", (unsigned int)m->type);
}

int xferctl_send(int sock, const struct ctl_msg *req, int fd)
{
        int r = ctl_send(sock, req, fd);

        if (r < 0) {
                xferctl_say_io(r);
                return -1;
        }
        return 0;
}

int xferctl_recv(int sock, struct ctl_msg *rep)
{
        int fd = -1, r;

        r = ctl_recv(sock, rep, &fd);
        /* The daemon never passes us descriptors; do not leak one if it did. */
        safe_close(fd);
        if (r < 0) {
                xferctl_say_io(r);
                return -1;
        }
        if (rep->type == CTL_ERROR && rep->error.code == -EPROTONOSUPPORT) {
                xferctl_say_io(-EPROTONOSUPPORT);
                return -1;
        }
        return 0;
}

int xferctl_call(int sock, const struct ctl_msg *req, int fd, struct ctl_msg *rep)
{
        if (xferctl_send(sock, req, fd) < 0)
                return -1;
        return xferctl_recv(sock, rep);
}

void xferctl_say_error(const char *what, const struct ctl_error *e)
{
        char text[ESC_TERM_SIZE(sizeof(e->text))];

        if (e->text[0])
                xferctl_say("%s: %s", what, esc_term(text, sizeof(text), e->text));
        else
                xferctl_say("%s: %s", what, strerror(e->code < 0 ? -e->code : e->code));
}

void xferctl_say_bad_option(char **argv, int opt)
{
        const char *arg = argv[optind - 1];

        if (opt == ':')
                xferctl_say("%s: option '%s' needs an argument (see xferctl %s --help)",
                            argv[0], arg, argv[0]);
        else if (opt > 0 && strncmp(arg, "--", 2) != 0)
                xferctl_say("%s: unknown option '-%c' (see xferctl %s --help)",
                            argv[0], opt, argv[0]);
        else
                xferctl_say("%s: unknown option '%s' (see xferctl %s --help)",
                            argv[0], arg, argv[0]);
}

int xferctl_parse_id(const char *s, uint64_t *id)
{
        uint64_t v = 0;

        if (*s == '\0')
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        if (v == 0)
                return -EINVAL;
        *id = v;
        return 0;
}

double xferctl_job_mbps(const struct ctl_job *job)
{
        if ((job->state == CTL_JOB_SENDING || job->state == CTL_JOB_VERIFYING) && job->rate)
                return (double)job->rate / 1e6;
        return progress_mbps(job->bytes_done, job->usec);
}

int xferctl_parse_opts(int argc, char **argv, const char *help, bool *json, int *first)
{
        static const struct option opts[] = {
                { "help", no_argument, NULL, 'h' },
                { "json", no_argument, NULL, 'j' },
                {}
        };
        int c;

        optind = 0;     /* glibc: start over on a fresh argv */
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'h':
                        fputs(help, stdout);
                        return XFERCTL_EXIT_OK;
                case 'j':
                        if (json) {
                                *json = true;
                                break;
                        }
                        xferctl_say_bad_option(argv, 0);
                        return XFERCTL_EXIT_USAGE;
                default:
                        xferctl_say_bad_option(argv, optopt);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        *first = optind;
        return -1;
}

/*
 * status and cancel: their options, one job ID into req->id, then @req and
 * its reply in @rep. Returns -1 to go on with @rep, or an exit code.
 */
static int job_call(const char *socket_path, int argc, char **argv, const char *help, bool *json,
                    struct ctl_msg *req, struct ctl_msg *rep)
{
        _cleanup_(closep) int sock = -1;
        int first, r;

        r = xferctl_parse_opts(argc, argv, help, json, &first);
        if (r >= 0)
                return r;
        if (argc - first != 1) {
                xferctl_say("%s: expected one job ID (see xferctl %s --help)", argv[0], argv[0]);
                return XFERCTL_EXIT_USAGE;
        }
        if (xferctl_parse_id(argv[first], &req->id) < 0) {
                xferctl_say("%s: '%s' is not a job ID (a number from `xferctl list`)",
                            argv[0], argv[first]);
                return XFERCTL_EXIT_USAGE;
        }

        sock = xferctl_connect(socket_path, true);
        if (sock < 0 || xferctl_call(sock, req, -1, rep) < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        return -1;
}

static const char *job_progress(char *buf, size_t len, const struct ctl_job *job)
{
        unsigned int pm = progress_permille(job->bytes_done, job->bytes_total);
        char size[32], when[32];

        if (job->state == CTL_JOB_RETRYING) {
                snprintf(buf, len, "retry %u/%u %s", (unsigned int)job->attempt,
                         (unsigned int)job->attempts, progress_in(when, sizeof(when), job->retry_usec));
                return buf;
        }

        snprintf(buf, len, "%u.%u%% of %s", pm / 10, pm % 10,
                 progress_size(size, sizeof(size), job->bytes_total));
        return buf;
}

static const char *job_rate(char *buf, size_t len, const struct ctl_job *job)
{
        if (job->state == CTL_JOB_SENDING || job->state == CTL_JOB_VERIFYING ||
            job->state == CTL_JOB_DONE)
                snprintf(buf, len, "%.1f MB/s", xferctl_job_mbps(job));
        else
                snprintf(buf, len, "-");
        return buf;
}

static void list_print(const struct ctl_job *jobs, size_t n)
{
        char peer[ESC_TERM_SIZE(sizeof(jobs->peer))], name[ESC_TERM_SIZE(sizeof(jobs->name))];
        char text[ESC_TERM_SIZE(sizeof(jobs->text))];
        int wid = 2, wpeer = 4, wname = 4;
        char id[24], progress[48], rate[32];

        /* Widths from the escaped text, which is what is printed, in the
         * columns a terminal gives it (a CJK name takes two a character). */
        for (size_t i = 0; i < n; i++) {
                int l = snprintf(id, sizeof(id), "%" PRIu64, jobs[i].id);

                wid = MAX(wid, l);
                wpeer = MAX(wpeer, esc_width(esc_term(peer, sizeof(peer), jobs[i].peer)));
                /* A very long name overflows its column rather than widen every row. */
                esc_term(name, sizeof(name), jobs[i].name);
                wname = MAX(wname, MIN(40, esc_width(name)));
        }
        printf("%-*s  %-10s  %-*s  %-*s  %-20s  %s\n", wid, "ID", "STATE", wpeer, "PEER",
               wname, "NAME", "PROGRESS", "RATE");
        for (size_t i = 0; i < n; i++) {
                const struct ctl_job *j = &jobs[i];

                printf("%*" PRIu64 "  %-10s  ", wid, j->id, ctl_job_state_str(j->state));
                esc_print_padded(stdout, esc_term(peer, sizeof(peer), j->peer), wpeer);
                fputs("  ", stdout);
                esc_print_padded(stdout, esc_term(name, sizeof(name), j->name), wname);
                printf("  %-20s  %s\n", job_progress(progress, sizeof(progress), j), job_rate(rate, sizeof(rate), j));
                /* Why it waits, under its row: the table stays one row per job above it. */
                if (j->state == CTL_JOB_RETRYING && j->text[0])
                        printf("%*s  last failure: %s\n", wid, "", esc_term(text, sizeof(text), j->text));
        }
}

static int cmd_list(const char *socket_path, int argc, char **argv)
{
        struct ctl_msg req = { .type = CTL_LIST }, rep;
        _cleanup_(freep) struct ctl_job *jobs = NULL;
        _cleanup_(closep) int sock = -1;
        size_t n = 0, cap = 0;
        bool json = false;
        int first, r;

        r = xferctl_parse_opts(argc, argv, list_help, &json, &first);
        if (r >= 0)
                return r;
        if (first != argc) {
                xferctl_say("list: unexpected argument '%s'", argv[first]);
                return XFERCTL_EXIT_USAGE;
        }

        sock = xferctl_connect(socket_path, true);
        if (sock < 0 || xferctl_send(sock, &req, -1) < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        for (;;) {
                if (xferctl_recv(sock, &rep) < 0)
                        return XFERCTL_EXIT_UNREACHABLE;
                if (rep.type == CTL_LIST_END)
                        break;
                if (rep.type == CTL_ERROR) {
                        xferctl_say_error("list", &rep.error);
                        return XFERCTL_EXIT_FAILED;
                }
                if (rep.type != CTL_JOB) {
                        xferctl_say_unexpected(&rep);
                        return XFERCTL_EXIT_UNREACHABLE;
                }
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        struct ctl_job *p = realloc(jobs, ncap * sizeof(*jobs));

                        if (!p) {
                                xferctl_say("out of memory");
                                return XFERCTL_EXIT_FAILED;
                        }
                        jobs = p;
                        cap = ncap;
                }
                jobs[n++] = rep.job;
        }

        if (json) {
                fputc('[', stdout);
                for (size_t i = 0; i < n; i++) {
                        if (i > 0)
                                fputc(',', stdout);
                        json_job(stdout, &jobs[i]);
                }
                fputs("]\n", stdout);
        } else {
                list_print(jobs, n);
        }
        return XFERCTL_EXIT_OK;
}

/* Why a chain's node failed: its text, else what its status means. */
static const char *node_cause(char *buf, size_t len, const struct ctl_job *j)
{
        return j->node_text[0] ? esc_term(buf, len, j->node_text) : wire_status_str(j->node_status);
}

/* Node @k's address, escaped for the terminal (node 0 is the job's
 * peer, the others the route's hops, @n of them in @hops). */
static const char *node_addr(char *buf, size_t len, const struct ctl_job *j, const struct ctl_hop *hops, int n,
                             unsigned int k)
{
        char hop[sizeof(j->peer)];

        if (k == 0)
                snprintf(hop, sizeof(hop), "%s", j->peer);
        else if ((int)k > n)
                snprintf(hop, sizeof(hop), "node %u", k + 1);
        else if (strchr(hops[k - 1].host, ':'))
                snprintf(hop, sizeof(hop), "[%s]:%u", hops[k - 1].host, (unsigned int)hops[k - 1].port);
        else
                snprintf(hop, sizeof(hop), "%s:%u", hops[k - 1].host, (unsigned int)hops[k - 1].port);
        return esc_term(buf, len, hop);
}

/*
 * A chain's route split, for node_addr(): its hops on the heap (up to
 * 511 of them, 28 KiB), NULL without memory (node_addr() then says
 * "node N"); *@n how many there are.
 */
static struct ctl_hop *status_hops(const struct ctl_job *j, int *n)
{
        struct ctl_hop *hops = j->nodes > 1 ? calloc(j->nodes - 1u, sizeof(*hops)) : NULL;

        *n = hops ? ctl_route_parse(j->route, hops, j->nodes - 1u) : 0;
        return hops;
}

/* A chain's nodes that did not publish, in order: "missing:  ADDR:PORT, ...". */
static void status_missing(const struct ctl_job *j)
{
        char esc[ESC_TERM_SIZE(sizeof(j->peer))];
        _cleanup_(freep) struct ctl_hop *hops = NULL;
        const char *sep = "";
        int n;

        hops = status_hops(j, &n);
        fputs("missing:  ", stdout);
        for (unsigned int k = 0; k < j->nodes; k++) {
                if (!nodeset_has(&j->nodes_missing, k))
                        continue;
                printf("%s%s", sep, node_addr(esc, sizeof(esc), j, hops, n, k));
                sep = ", ";
        }
        putchar('\n');
}

/* A node's line: "  node 2  198.18.0.3:7470  12582912 of 25165824 bytes (50 %)", and
 * once final what became of it. */
static void status_node(const struct ctl_job *j, unsigned int k, int width, const char *addr)
{
        char cause[ESC_TERM_SIZE(sizeof(j->node_text))];
        bool final = ctl_job_state_final(j->state);
        bool failed = final && k + 1 == j->node_failed;
        const char *what = !final                                       ? ""
                           : !nodeset_has(&j->nodes_missing, k)         ? "  published"
                           : failed                                     ? "  failed: "
                           : j->state == CTL_JOB_CANCELLED              ? "  cancelled"
                                                                        : "  not reached";

        /* "node 9  ADDR", "node 301 ADDR": the numbers' column as wide as the chain's. */
        int numw = j->nodes >= 100 ? 4 : 3;

        printf("  node %-*u%-*s  %" PRIu64 " of %" PRIu64 " bytes (%u %%)%s%s\n", numw, k + 1, width, addr,
               j->node_bytes[k], j->bytes_total, progress_permille(j->node_bytes[k], j->bytes_total) / 10,
               what, failed ? node_cause(cause, sizeof(cause), j) : "");
}

/* Whether node @k is one a long chain's status shows (status_nodes). */
static bool status_node_shown(const struct ctl_job *j, unsigned int k, unsigned int slowest)
{
        if (j->nodes <= XFERCTL_NODES_LISTED)
                return true;
        if (ctl_job_state_final(j->state))
                return j->state == CTL_JOB_DONE && nodeset_has(&j->nodes_missing, k);
        return k == slowest;
}

/*
 * A chain's nodes, a line each: "  node 2  198.18.0.3:7470  12582912 of
 * 25165824 bytes (50 %)", and once the job is final what became of the
 * node: "published", "failed: WHY", "not reached" or "cancelled". A chain
 * of more than XFERCTL_NODES_LISTED nodes would fill screens: it gets a line
 * that sums its nodes up, and lines only for the nodes that matter, the
 * slowest while it runs, once done those that did not publish (`status
 * --json` has every node).
 */
static void status_nodes(const struct ctl_job *j)
{
        char addr[ESC_TERM_SIZE(sizeof(j->peer))];
        _cleanup_(freep) struct ctl_hop *hops = NULL;
        unsigned int slowest = 0, full = 0, shown = 0;
        int n, width = 0;

        /* ctl_decode() saw to it that nodes <= CTL_NODES_MAX. */
        for (unsigned int k = 0; k < j->nodes; k++) {
                if (j->node_bytes[k] < j->node_bytes[slowest])
                        slowest = k;
                full += j->node_bytes[k] == j->bytes_total;
        }
        hops = status_hops(j, &n);
        for (unsigned int k = 0; k < j->nodes; k++)
                if (status_node_shown(j, k, slowest))
                        width = MAX(width, (int)strlen(node_addr(addr, sizeof(addr), j, hops, n, k)));
        if (j->nodes > XFERCTL_NODES_LISTED && !ctl_job_state_final(j->state))
                printf("  %u of %u nodes have every byte; the slowest:\n", full, (unsigned int)j->nodes);
        for (unsigned int k = 0; k < j->nodes; k++) {
                if (!status_node_shown(j, k, slowest))
                        continue;
                status_node(j, k, width, node_addr(addr, sizeof(addr), j, hops, n, k));
                shown++;
        }
        if (j->nodes > XFERCTL_NODES_LISTED && ctl_job_state_final(j->state) && shown)
                printf("  (the other %u nodes published; --json lists every node)\n", j->nodes - shown);
}

static void status_print(const struct ctl_job *j)
{
        unsigned int pm = progress_permille(j->bytes_done, j->bytes_total);
        char a[32], b[32], secs[32], esc[ESC_TERM_SIZE(MAX(sizeof(j->name), sizeof(j->text)))];
        char cause[ESC_TERM_SIZE(sizeof(j->node_text))];
        char lpath[ESC_TERM_SIZE(sizeof(j->land_path))], bpath[ESC_TERM_SIZE(sizeof(j->back_path))];

        printf("id:       %" PRIu64 "\n", j->id);
        printf("state:    %s\n", ctl_job_state_str(j->state));
        printf("peer:     %s\n", esc_term(esc, sizeof(esc), j->peer));
        printf("name:     %s\n", esc_term(esc, sizeof(esc), j->name));
        /* Where it lands as its user, rather than in the peer's drop box. */
        if (j->land == CTL_JOB_LAND_PUSH)
                printf("lands:    %s on the peer, as its user\n", esc_term(lpath, sizeof(lpath), j->land_path));
        else if (j->land == CTL_JOB_LAND_PULL)
                printf("pulls:    %s from the peer, into %s, as its user\n",
                       esc_term(lpath, sizeof(lpath), j->land_path), esc_term(bpath, sizeof(bpath), j->back_path));
        if (j->files_total > 1)
                printf("files:    %u of %u\n", (unsigned int)j->files_done, (unsigned int)j->files_total);
        if (j->files_skipped)
                printf("skipped:  %u (the receiver had them already)\n", (unsigned int)j->files_skipped);
        if (j->deleted)
                printf("deleted:  %u (the receiver had them, the source not: --delete)\n", (unsigned int)j->deleted);
        printf("bytes:    %" PRIu64 " of %" PRIu64 " (%u.%u%%; %s of %s)\n",
               j->bytes_done, j->bytes_total, pm / 10, pm % 10,
               progress_size(a, sizeof(a), j->bytes_done),
               progress_size(b, sizeof(b), j->bytes_total));
        printf("time:     %s\n", progress_seconds(secs, sizeof(secs), j->usec));
        if (j->state == CTL_JOB_RETRYING)
                printf("attempt:  %u of %u, starts %s\n", (unsigned int)j->attempt,
                       (unsigned int)j->attempts, progress_in(a, sizeof(a), j->retry_usec));
        else if (j->attempt > 1)
                printf("attempt:  %u of %u\n", (unsigned int)j->attempt, (unsigned int)j->attempts);
        if (j->state == CTL_JOB_SENDING || j->state == CTL_JOB_VERIFYING)
                printf("rate:     %.1f MB/s now, %.1f MB/s average\n", (double)j->rate / 1e6,
                       progress_mbps(j->bytes_done, j->usec));
        else if (j->state == CTL_JOB_DONE)
                printf("rate:     %.1f MB/s average\n", progress_mbps(j->bytes_done, j->usec));
        if (j->bwlimit)
                printf("bwlimit:  %s/s (%" PRIu64 " bytes/s)\n", progress_size(a, sizeof(a), j->bwlimit),
                       j->bwlimit);
        /* The RDMA devices its lanes go over (a daemon's rails). */
        if (j->rails[0])
                printf("rails:    %s\n", esc_term(esc, sizeof(esc), j->rails));
        if (j->nodes && ctl_job_state_final(j->state))
                printf("nodes:    %u of %u published (a relay chain)\n", (unsigned int)j->nodes_ok,
                       (unsigned int)j->nodes);
        else if (j->nodes)
                printf("nodes:    %u (a relay chain)\n", (unsigned int)j->nodes);
        if (j->nodes)
                status_nodes(j);
        if (j->node_failed)
                printf("failed:   node %u, %s: %s\n", (unsigned int)j->node_failed,
                       esc_term(esc, sizeof(esc), j->node_peer), node_cause(cause, sizeof(cause), j));
        /* A relay goes around a node that fails: which others did not
         * publish is not a matter of where the failed one is (when the
         * job did not end done, none did: the count says it all). */
        if (j->nodes && j->nodes <= XFERCTL_NODES_LISTED && j->state == CTL_JOB_DONE &&
            nodeset_count(&j->nodes_missing) > 1)
                status_missing(j);
        if (j->status != WIRE_OK || j->state == CTL_JOB_FAILED)
                printf("status:   %u (%s)\n", (unsigned int)j->status, wire_status_str(j->status));
        if (j->text[0])
                printf("%s%s\n", j->state == CTL_JOB_RETRYING ? "failure:  " : "text:     ",
                       esc_term(esc, sizeof(esc), j->text));
}

static int cmd_status(const char *socket_path, int argc, char **argv)
{
        struct ctl_msg req = { .type = CTL_STATUS }, rep;
        bool json = false;
        int r;

        r = job_call(socket_path, argc, argv, status_help, &json, &req, &rep);
        if (r >= 0)
                return r;
        if (rep.type == CTL_ERROR) {
                if (rep.error.code == -ENOENT)
                        xferctl_say("no job %" PRIu64 " (see xferctl list)", req.id);
                else
                        xferctl_say_error("status", &rep.error);
                return XFERCTL_EXIT_FAILED;
        }
        if (rep.type != CTL_JOB) {
                xferctl_say_unexpected(&rep);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (json) {
                json_job(stdout, &rep.job);
                fputc('\n', stdout);
        } else {
                status_print(&rep.job);
        }
        return XFERCTL_EXIT_OK;
}

static int cmd_cancel(const char *socket_path, int argc, char **argv)
{
        struct ctl_msg req = { .type = CTL_CANCEL }, rep;
        int r;

        r = job_call(socket_path, argc, argv, cancel_help, NULL, &req, &rep);
        if (r >= 0)
                return r;
        if (rep.type == CTL_OK) {
                printf("cancelling job %" PRIu64 "\n", req.id);
                return XFERCTL_EXIT_OK;
        }
        if (rep.type != CTL_ERROR) {
                xferctl_say_unexpected(&rep);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (rep.error.code == -ENOENT)
                xferctl_say("no job %" PRIu64 " (see xferctl list)", req.id);
        else if (rep.error.code == -EALREADY)
                xferctl_say("job %" PRIu64 " has already finished", req.id);
        else
                xferctl_say_error("cancel", &rep.error);
        return XFERCTL_EXIT_FAILED;
}

static int cmd_help(const char *socket_path, int argc, char **argv);

static const struct xferctl_cmd xferctl_cmds[] = {
        { "send", sendcmd_run, sendcmd_help },
        { "get", getcmd_run, getcmd_help },
        { "list", cmd_list, list_help },
        { "status", cmd_status, status_help },
        { "cancel", cmd_cancel, cancel_help },
        { "stats", statscmd_run, statscmd_help },
        { "sum", sumcmd_run, sumcmd_help },
        { "hosts", hostscmd_run, hostscmd_help },
        { "bcast", bcastcmd_run, bcastcmd_help },
        { "help", cmd_help, help_help },
};

static const struct xferctl_cmd *xferctl_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(xferctl_cmds); i++)
                if (strcmp(xferctl_cmds[i].name, name) == 0)
                        return &xferctl_cmds[i];
        return NULL;
}

static int cmd_help(const char *socket_path, int argc, char **argv)
{
        const struct xferctl_cmd *cmd;
        int first, r;

        /* help's own -h/--help, as every command takes it (help help too, below). */
        r = xferctl_parse_opts(argc, argv, help_help, NULL, &first);
        if (r >= 0)
                return r;
        if (first >= argc) {
                xferctl_usage(stdout);
                return XFERCTL_EXIT_OK;
        }
        cmd = xferctl_find(argv[first]);
        if (!cmd) {
                xferctl_say("no such command '%s' (see xferctl --help)", argv[first]);
                return XFERCTL_EXIT_USAGE;
        }
        fputs(cmd->help, stdout);
        return XFERCTL_EXIT_OK;
}

int xferctl_run(const char *socket_path, int argc, char **argv)
{
        const struct xferctl_cmd *cmd = xferctl_find(argv[0]);

        if (!cmd) {
                xferctl_say("unknown command '%s' (see xferctl --help)", argv[0]);
                return XFERCTL_EXIT_USAGE;
        }
        return cmd->run(socket_path, argc, argv);
}
