/* xferctl hosts: a Slurm hostlist, one host a line (common/hostlist.h). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "hostlist.h"
#include "xferctl.h"

const char hostscmd_help[] =
        "Usage: xferctl hosts [NODELIST]\n"
        "\n"
        "Print the hosts of a Slurm hostlist one per line, in order, as\n"
        "`scontrol show hostnames` does: \"node[01-03,7]\" is node01, node02,\n"
        "node03 and node7. Without NODELIST, $SLURM_JOB_NODELIST. Needs no daemon.\n"
        "At most 65536 hosts of 253 bytes each; a list that breaks a rule prints\n"
        "nothing and exits 2.\n"
        "\n"
        "  -h, --help  show this help\n";

static int hosts_print(const char *name, size_t len, void *userdata _unused_)
{
        if (fwrite(name, 1, len, stdout) != len || putchar('\n') == EOF)
                return errno > 0 ? -errno : -EIO;
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

int hostscmd_run(const char *socket_path _unused_, int argc, char **argv)
{
        struct hostlist_error e;
        const char *list;
        size_t n;
        int first, r;

        r = xferctl_parse_opts(argc, argv, hostscmd_help, NULL, &first);
        if (r >= 0)
                return r;
        if (argc - first > 1) {
                xferctl_say("hosts: expected one NODELIST (quote it: a shell splits on spaces)");
                return XFERCTL_EXIT_USAGE;
        }
        if (argc - first == 1) {
                list = argv[first];
        } else {
                list = getenv("SLURM_JOB_NODELIST");
                if (!list) {
                        xferctl_say("hosts: no NODELIST given, and SLURM_JOB_NODELIST is not set");
                        return XFERCTL_EXIT_USAGE;
                }
        }

        r = hostlist_foreach(list, NULL, NULL, &n, &e);
        if (r < 0) {
                hosts_say_error(list, &e);
                return XFERCTL_EXIT_USAGE;
        }
        if (n == 0) {
                xferctl_say("hosts: NODELIST names no hosts");
                return XFERCTL_EXIT_USAGE;
        }
        r = hostlist_foreach(list, hosts_print, NULL, NULL, NULL);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        if (r < 0) {
                /* `xferctl hosts | head -n 1` is not worth a message. */
                if (r != -EPIPE)
                        xferctl_say("hosts: cannot write the list: %s", strerror(-r));
                return XFERCTL_EXIT_FAILED;
        }
        return XFERCTL_EXIT_OK;
}
