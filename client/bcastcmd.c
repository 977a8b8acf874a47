/*
 * xferctl bcast: sbcast's habit over rdmaxfer. The same send as
 * `send -r SRC... NODELIST --to slurm/JOBID/DEST`, with the nodes and the
 * job taken from the Slurm job it runs in (or --nodes and --job), the
 * node that runs it moved to the front of the chain so that it has its
 * copy too, and files sent into DEST as a directory. The directory
 * slurm/JOBID is the prolog's to make and the epilog's to remove
 * (contrib/slurm, rdmaxferd.8 Slurm staging).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esc.h"
#include "hostlist.h"
#include "macro.h"
#include "peer.h"
#include "xferctl.h"

/* Beneath incoming_dir: the jobs' directories (slurm-prolog makes them). */
#define BCAST_TOP               "slurm"
/* A Slurm job id: decimal, as $SLURM_JOB_ID has it (an array task's own id). */
#define BCAST_JOB_MAX           20

const char bcastcmd_help[] =
        "Usage: xferctl bcast [-r] [--nodes NODELIST] [--job ID] [send options] SRC... DEST\n"
        "\n"
        "Stage SRC on every node of a Slurm job, as sbcast does, through rdmaxfer:\n"
        "each node's rdmaxferd publishes it as\n"
        "\n"
        "    INCOMING/" BCAST_TOP "/JOBID/DEST\n"
        "\n"
        "where INCOMING is that node's incoming_dir (/var/lib/rdmaxferd/incoming\n"
        "by default). The directory " BCAST_TOP "/JOBID is made before the job by the\n"
        "rdmaxfer Slurm prolog and removed with everything in it after the job by\n"
        "the epilog (rdmaxferd(8), Slurm staging); a node whose prolog did not\n"
        "run makes it as it receives (as any DEST's parents), and keeps it\n"
        "until an epilog removes it.\n"
        "\n"
        "The nodes are $SLURM_JOB_NODELIST (or --nodes), the job $SLURM_JOB_ID\n"
        "(or --job); outside a job both options are needed. The send goes down\n"
        "a relay chain as `xferctl send` sends to a NODELIST (one copy leaves\n"
        "this node; each node passes it on, see relay in rdmaxferd.conf(5)),\n"
        "with this node first when it is one of the nodes ($SLURMD_NODENAME,\n"
        "else its host name, short or whole): it gets its copy as the others do.\n"
        "A node that is not in the list gets none.\n"
        "\n"
        "  -r, --recursive\n"
        "                SRC is a directory: it arrives as DEST (several sources: each\n"
        "                as DEST/its last component)\n"
        "  (without -r)  each SRC is a file: they arrive in the directory DEST, each\n"
        "                as DEST/its last component, one file too\n"
        "  --nodes NODELIST\n"
        "                the nodes, a Slurm hostlist (default: $SLURM_JOB_NODELIST)\n"
        "  --job ID      the job's id, decimal (default: $SLURM_JOB_ID)\n"
        "  -h, --help    show this help\n"
        "\n"
        "DEST is a relative path, the last argument. The other options are\n"
        "send's (--bwlimit, --retries, --peer-names, --exclude, --json, ...; not\n"
        "--to nor --as): see xferctl send --help. Exit status as send's to a\n"
        "NODELIST: 0 every node has it, 23 some do, 1 none, 2 usage.\n";

/* This node's name as Slurm knows it: $SLURMD_NODENAME, else the host name. */
static void bcast_self(char *buf, size_t len)
{
        const char *env = getenv("SLURMD_NODENAME");

        if (env && *env) {
                snprintf(buf, len, "%s", env);
                return;
        }
        if (gethostname(buf, len) < 0)
                buf[0] = '\0';
        buf[len - 1] = '\0';
}

/*
 * @arg's hosts as one comma list, this node's first when it is one of
 * them. NULL and said when the list is bad (*@exit set).
 */
static char *bcast_nodes(const char *arg, int *exit)
{
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        char self[256], err[256];
        size_t len = 1;
        char *out, *p;
        int r;

        r = peer_list(arg, &hl, err, sizeof(err));
        if (r < 0) {
                _cleanup_(freep) char *shown = esc_term_dup(arg);

                if (r == -ENOMEM)
                        xferctl_say("out of memory");
                else
                        xferctl_say("bcast: bad node list '%s': %s", shown ? shown : "?", err);
                *exit = r == -ENOMEM ? XFERCTL_EXIT_FAILED : XFERCTL_EXIT_USAGE;
                return NULL;
        }
        bcast_self(self, sizeof(self));
        peer_list_self_first(hl, self);
        for (size_t i = 0; i < hl->n; i++)
                len += strlen(hl->names[i]) + 1;
        out = malloc(len);
        if (!out) {
                xferctl_say("out of memory");
                *exit = XFERCTL_EXIT_FAILED;
                return NULL;
        }
        p = out;
        for (size_t i = 0; i < hl->n; i++) {
                if (p != out)
                        *p++ = ',';
                p = stpcpy(p, hl->names[i]);
        }
        *p = '\0';
        return out;
}

/* --name VALUE or --name=VALUE at argv[*i]: the value (argv[*i] moved past it), else NULL. */
static const char *bcast_opt(int argc, char **argv, int *i, const char *name, bool *missing)
{
        size_t n = strlen(name);

        if (strncmp(argv[*i], name, n) != 0)
                return NULL;
        if (argv[*i][n] == '=')
                return argv[*i] + n + 1;
        if (argv[*i][n] != '\0')
                return NULL;
        if (*i + 1 >= argc) {
                *missing = true;
                return NULL;
        }
        return argv[++*i];
}

int bcastcmd_run(const char *socket_path, int argc, char **argv)
{
        const char *nodes = getenv("SLURM_JOB_NODELIST"), *job = getenv("SLURM_JOB_ID");
        bool from_env_nodes = true, from_env_job = true, recursive = false, positional = false;
        _cleanup_(freep) char **args = NULL;
        _cleanup_(freep) char *list = NULL;
        char to[CTL_NAME_MAX + 2];
        const char *dest;
        int n = 0, exit = XFERCTL_EXIT_USAGE;

        /* send, -r, --to, DEST, the options and sources, NODELIST, NULL. */
        args = calloc((size_t)argc + 6, sizeof(*args));
        if (!args) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        args[n++] = (char *)"send";
        args[n++] = (char *)"-r";
        args[n++] = (char *)"--to";
        args[n++] = to;
        for (int i = 1; i < argc; i++) {
                const char *v;
                bool missing = false;

                if (!positional && strcmp(argv[i], "--") == 0) {
                        positional = true;
                } else if (!positional && (v = bcast_opt(argc, argv, &i, "--nodes", &missing))) {
                        nodes = v;
                        from_env_nodes = false;
                        continue;
                } else if (!positional && (v = bcast_opt(argc, argv, &i, "--job", &missing))) {
                        job = v;
                        from_env_job = false;
                        continue;
                } else if (missing) {
                        xferctl_say("bcast: option '%s' needs an argument", argv[i]);
                        return XFERCTL_EXIT_USAGE;
                } else if (!positional && (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
                        fputs(bcastcmd_help, stdout);
                        return XFERCTL_EXIT_OK;
                } else if (!positional && (!strcmp(argv[i], "-r") || !strcmp(argv[i], "--recursive"))) {
                        recursive = true;
                        continue;
                } else if (!positional && (!strncmp(argv[i], "--to", 4) || !strncmp(argv[i], "--as", 4))) {
                        xferctl_say("bcast: DEST, the last argument, is where SRC goes (not %s)", argv[i]);
                        return XFERCTL_EXIT_USAGE;
                }
                args[n++] = argv[i];
        }
        /* The last one is DEST; the sources and send's options come before it. */
        if (n < 6) {
                xferctl_say("bcast: expected SRC... and DEST (see xferctl bcast --help)");
                return XFERCTL_EXIT_USAGE;
        }
        dest = args[--n];
        if (dest[0] == '-' && !positional) {
                xferctl_say("bcast: DEST comes last, after the options (see xferctl bcast --help)");
                return XFERCTL_EXIT_USAGE;
        }
        if (dest[0] == '/') {
                _cleanup_(freep) char *shown = esc_term_dup(dest);

                xferctl_say("bcast: DEST '%s' is a path beneath the job's directory on each node, "
                            "not an absolute one", shown ? shown : "?");
                return XFERCTL_EXIT_USAGE;
        }
        if (!job || !*job) {
                xferctl_say(from_env_job ? "bcast: not in a Slurm job ($SLURM_JOB_ID is not set): "
                                           "name the job with --job ID and its nodes with --nodes NODELIST" :
                                           "bcast: --job: empty");
                return XFERCTL_EXIT_USAGE;
        }
        if (strlen(job) > BCAST_JOB_MAX || strspn(job, "0123456789") != strlen(job) || job[0] == '0') {
                _cleanup_(freep) char *shown = esc_term_dup(job);

                xferctl_say("bcast: %s '%s' is not a Slurm job id (decimal, not 0)",
                            from_env_job ? "$SLURM_JOB_ID" : "--job", shown ? shown : "?");
                return XFERCTL_EXIT_USAGE;
        }
        if (!nodes || !*nodes) {
                xferctl_say(from_env_nodes ? "bcast: $SLURM_JOB_NODELIST is not set (not in a Slurm job?): "
                                             "name the nodes with --nodes NODELIST" :
                                             "bcast: --nodes: empty");
                return XFERCTL_EXIT_USAGE;
        }
        if ((size_t)snprintf(to, sizeof(to), BCAST_TOP "/%s/%s", job, dest) >= sizeof(to)) {
                xferctl_say("bcast: DEST is too long (" BCAST_TOP "/JOBID/DEST is at most %d bytes)",
                            CTL_NAME_MAX);
                return XFERCTL_EXIT_USAGE;
        }
        list = bcast_nodes(nodes, &exit);
        if (!list)
                return exit;
        args[n++] = list;
        args[n] = NULL;
        return sendcmd_run_into(socket_path, n, args, !recursive);
}
