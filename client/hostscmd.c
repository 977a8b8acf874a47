/*
 * xferctl hosts: a Slurm hostlist, one host a line (common/hostlist.h), each
 * name as xferctl send would use it: through peer_names (peernames.h),
 * and with --resolve its address beside it.
 */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "hostlist.h"
#include "peer.h"
#include "peernames.h"
#include "xferctl.h"

const char hostscmd_help[] =
        "Usage: xferctl hosts [--resolve] [--peer-names PATTERN] [NODELIST]\n"
        "\n"
        "Print the hosts of a Slurm hostlist one per line, in order, as\n"
        "`scontrol show hostnames` does: \"node[01-03,7]\" is node01, node02,\n"
        "node03 and node7; text may follow the last group (\"node[01-04]-ib\").\n"
        "Without NODELIST, $SLURM_JOB_NODELIST. At most 65536 hosts of 253 bytes\n"
        "each; a list that breaks a rule prints nothing and exits 2.\n"
        "\n"
        "Each name is printed as xferctl send uses it: through the peer_names\n"
        "pattern (node01 as node01-ib with %h-ib): --peer-names, else\n"
        "$" PEERNAMES_ENV ", else the local rdmaxferd's peer_names, asked when\n"
        "some host is not an address (without a daemon to ask, names are printed\n"
        "as given, and stderr says so). An address is never mapped.\n"
        "\n"
        "  --resolve     print each name's address beside it, as send resolves it;\n"
        "                one that does not resolve gets \"-\" and its reason on\n"
        "                stderr, and the exit status is 1\n"
        "  --peer-names PATTERN\n"
        "                map names through PATTERN: %h the name, %s its short name\n"
        "                (up to the first '.'), %d the rest (\".example.org\" or\n"
        "                nothing), %% a '%'; %h maps nothing\n"
        "  -h, --help    show this help\n";

struct hosts {
        struct peernames names;
        bool resolve;
        bool unresolved;                /* some name did not resolve */
        int exit;                       /* why a walk stopped: an exit code */
};

/*
 * @spec (PEER[:PORT], one host of the list) as send takes it: its host
 * through peer_names into @name, its port kept in @port. -1, or an exit
 * code (said).
 */
static int hosts_map(struct hosts *h, const char *spec, char *host, size_t hostlen, char *name,
                     size_t namelen, uint16_t *port, bool *mapped)
{
        char err[256];

        if (peer_split(spec, host, hostlen, port, err, sizeof(err)) < 0) {
                _cleanup_(freep) char *shown = esc_term_dup(spec);

                xferctl_say("hosts: bad peer '%s': %s", shown ? shown : "?", err);
                return XFERCTL_EXIT_USAGE;
        }
        return peernames_map(&h->names, host, name, namelen, mapped);
}

/* The first walk: every host maps, or the list prints nothing. */
static int hosts_check(const char *spec, size_t len _unused_, void *userdata)
{
        struct hosts *h = userdata;
        char host[HOSTLIST_NAME_MAX + 1], name[PEERNAME_NAME_MAX + 1];
        uint16_t port;
        bool mapped;

        h->exit = hosts_map(h, spec, host, sizeof(host), name, sizeof(name), &port, &mapped);
        return h->exit >= 0 ? -ECANCELED : 0;
}

static int hosts_print(const char *spec, size_t len _unused_, void *userdata)
{
        struct hosts *h = userdata;
        char host[HOSTLIST_NAME_MAX + 1], name[PEERNAME_NAME_MAX + 1];
        char num[CTL_HOST_MAX + 1], err[256], portstr[8] = "";
        uint16_t port;
        bool mapped;

        /* Checked by the first walk: the same again. */
        h->exit = hosts_map(h, spec, host, sizeof(host), name, sizeof(name), &port, &mapped);
        if (h->exit >= 0)
                return -ECANCELED;
        if (port)
                snprintf(portstr, sizeof(portstr), ":%u", (unsigned int)port);
        if (!h->resolve) {
                if (printf("%s%s\n", name, portstr) < 0)
                        return errno > 0 ? -errno : -EIO;
                return 0;
        }
        if (peer_resolve(name, num, sizeof(num), err, sizeof(err)) < 0) {
                peernames_say_unresolved(&h->names, host, name, mapped, err);
                h->unresolved = true;
                snprintf(num, sizeof(num), "-");
        }
        if (printf("%s%s %s\n", name, portstr, num) < 0)
                return errno > 0 ? -errno : -EIO;
        /* Line by line, so that the reasons on stderr sit beside their lines. */
        if (fflush(stdout) != 0)
                return -errno;
        return 0;
}

/* "bad NODELIST 'n[3-1]': reversed range (LO greater than HI) at byte 3: '3-1'" */
static void hosts_say_error(const char *list, const struct hostlist_error *e)
{
        _cleanup_(freep) char *shown = esc_term_dup(list);
        _cleanup_(freep) char *part = strndup(list + e->offset, e->len);
        _cleanup_(freep) char *part_shown = part ? esc_term_dup(part) : NULL;

        if (!shown || !part_shown) {
                xferctl_say("hosts: bad NODELIST: %s", hostlist_problem_str(e->problem));
                return;
        }
        if (e->len > 0)
                xferctl_say("hosts: bad NODELIST '%s': %s at byte %zu: '%s'", shown,
                            hostlist_problem_str(e->problem), e->offset + 1, part_shown);
        else
                xferctl_say("hosts: bad NODELIST '%s': %s at byte %zu", shown,
                            hostlist_problem_str(e->problem), e->offset + 1);
}

/* Options and NODELIST. -1 with *@list set, or an exit code. */
static int hosts_parse(struct hosts *h, const char *socket_path, int argc, char **argv,
                       const char **list)
{
        static const struct option opts[] = {
                { "resolve", no_argument, NULL, 'R' },
                { "peer-names", required_argument, NULL, 'N' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        const char *peer_names = NULL;
        int c;

        optind = 0;     /* glibc: start over on a fresh argv */
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case 'R':
                        h->resolve = true;
                        break;
                case 'N':
                        peer_names = optarg;
                        break;
                case 'h':
                        fputs(hostscmd_help, stdout);
                        return XFERCTL_EXIT_OK;
                case ':':
                        xferctl_say_bad_option(argv, ':');
                        return XFERCTL_EXIT_USAGE;
                default:
                        xferctl_say_bad_option(argv, optopt);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (argc - optind > 1) {
                xferctl_say("hosts: expected one NODELIST (quote it: a shell splits on spaces)");
                return XFERCTL_EXIT_USAGE;
        }
        if (argc - optind == 1) {
                *list = argv[optind];
        } else {
                *list = getenv("SLURM_JOB_NODELIST");
                if (!*list) {
                        xferctl_say("hosts: no NODELIST given, and SLURM_JOB_NODELIST is not set");
                        return XFERCTL_EXIT_USAGE;
                }
        }
        /* Lenient: printing a list needs no daemon; without one, names are as given. */
        return peernames_init(&h->names, "hosts: ", socket_path, peer_names, true);
}

int hostscmd_run(const char *socket_path, int argc, char **argv)
{
        struct hosts h = { .exit = -1 };
        struct hostlist_error e;
        const char *list;
        size_t n;
        int r;

        r = hosts_parse(&h, socket_path, argc, argv, &list);
        if (r >= 0)
                return r;
        r = hostlist_foreach(list, NULL, NULL, &n, &e);
        if (r < 0) {
                hosts_say_error(list, &e);
                return XFERCTL_EXIT_USAGE;
        }
        if (n == 0) {
                xferctl_say("hosts: NODELIST names no hosts");
                return XFERCTL_EXIT_USAGE;
        }
        r = hostlist_foreach(list, hosts_check, &h, NULL, NULL);
        if (r < 0)
                return h.exit >= 0 ? h.exit : XFERCTL_EXIT_FAILED;
        r = hostlist_foreach(list, hosts_print, &h, NULL, NULL);
        if (r == -ECANCELED && h.exit >= 0)
                return h.exit;
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        if (r < 0) {
                /* `xferctl hosts | head -n 1` is not worth a message. */
                if (r != -EPIPE)
                        xferctl_say("hosts: cannot write the list: %s", strerror(-r));
                return XFERCTL_EXIT_FAILED;
        }
        return h.unresolved ? XFERCTL_EXIT_FAILED : XFERCTL_EXIT_OK;
}
