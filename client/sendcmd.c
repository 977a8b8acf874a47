#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "esc.h"
#include "filter.h"
#include "hostlist.h"
#include "json.h"
#include "landpath.h"
#include "name.h"
#include "peer.h"
#include "itemize.h"
#include "progress.h"
#include "sendcmd.h"
#include "wire.h"
#include "xferctl.h"

/* --bwlimit: what rdmaxferd.conf's rate_limit allows too. */
#define SENDCMD_BWLIMIT_MAX     (1ull << 40)

/* How long the watch stream may stay silent before we ask for a STATUS ourselves. */
#define SENDCMD_REFRESH_MS      1000

const char sendcmd_help[] =
        "Usage: xferctl send FILE... PEER[:PORT] [--as NAME] [--bwlimit RATE] [--retries N]\n"
        "                    [--skip-existing | --sync=size|digest] [--no-sparse] [--no-wait] [--json]\n"
        "                    [-n [-i]]\n"
        "       xferctl send -r DIR PEER[:PORT] [--to DEST] [--skip-existing | --sync=size|digest]\n"
        "                    [--no-hard-links] [--exclude PATTERN] [--include PATTERN]\n"
        "                    [--exclude-from FILE] [--include-from FILE]\n"
        "                    [--bwlimit RATE] [--no-wait] [--json]\n"
        "       xferctl send [-r] SRC... NODELIST [--parallel N] [--peer-names PATTERN]\n"
        "                    [options as above]\n"
        "       xferctl send [-r] FILE... PEER:/PATH [-X] [-A] [--bwlimit RATE] [--retries N]\n"
        "                    [--no-sparse] [--continue-on-error] [--no-wait] [--json]\n"
        "       xferctl send PEER_A:/PATH PEER_B:/PATH [--overwrite] [--retries N] [--no-wait]\n"
        "\n"
        "Send FILE to the rdmaxferd on PEER. The receiver publishes it in its\n"
        "incoming directory under NAME only once every byte has arrived and the\n"
        "whole-file checksum matches. xferctl opens FILE itself and hands the open\n"
        "file to the local rdmaxferd: you can send exactly what you can read.\n"
        "\n"
        "Several FILEs are one job over one connection to PEER, sent one after\n"
        "the other, each published under its last component as it is verified;\n"
        "the job stops at the first file that fails. xferctl stays until it has\n"
        "handed every file over (leaving earlier cancels the job).\n"
        "\n"
        "PEER is a host name or an IPv4/IPv6 address; write an IPv6 address with\n"
        "a port as [ADDR]:PORT. Without a port, the local rdmaxferd's port (7470\n"
        "unless configured otherwise) is used. A name goes through the peer_names\n"
        "pattern first, which makes the name of a node's RDMA interface from the\n"
        "name a job has (node01 as node01-ib with %h-ib): --peer-names, else\n"
        "$RDMAXFER_PEER_NAMES, else the local rdmaxferd's peer_names; an address\n"
        "is never mapped (xferctl hosts --resolve shows what a NODELIST becomes).\n"
        "\n"
        "NODELIST is several peers: a comma list (a,b:7471) or a Slurm hostlist\n"
        "(node[01-16,20], \"$SLURM_JOB_NODELIST\"; see xferctl hosts), with\n"
        "node[01-16]:PORT giving every host that port. One FILE, or one tree\n"
        "(-r), goes as a relay chain, of 512 peers at most: the local rdmaxferd\n"
        "sends it once, to the first peer, which publishes it and relays it to\n"
        "the next, and so on (a tree entry by entry, each once it is verified;\n"
        "a relay goes around a peer that fails, to the one after it).\n"
        "With --parallel, for several FILEs without -r, and with\n"
        "--skip-existing or --sync (each peer compares against its own copy:\n"
        "a relay cannot skip on another's behalf), the same send goes to each\n"
        "peer directly instead, as its own job from the local rdmaxferd, at\n"
        "most --parallel at once. Each line of output names its peer (one that\n"
        "a chain did not get to: not reached), a last line says which failed.\n"
        "\n"
        "PEER:/PATH, as scp writes it (beta:/scratch/you/x, beta:7471:/x,\n"
        "[fd00::2]:7470:/x), lands the files on PEER as you, owned by you, at\n"
        "PATH instead of in its drop box: with a trailing '/', or for several\n"
        "FILEs, PATH is a directory they go into under their own names; one\n"
        "FILE is PATH itself, unless PATH is a directory on PEER. PATH is\n"
        "absolute, without \"..\", beneath a landing root of PEER's admin. It\n"
        "needs munged on both nodes, with one key: xferctl asks it for a\n"
        "credential that proves to PEER who you are. A file of the name there\n"
        "is replaced only with --overwrite, where you may replace it. With -r\n"
        "and several sources, each lands in PATH as a job of its own. Files\n"
        "and trees may be kept up to date: --skip-existing, --sync (a file\n"
        "that differs is replaced; a tree is merged into the one there, or\n"
        "with --delete put in its place); -n says what a send would do there.\n"
        "Not with --to or --as (xferctl(1), LANDING AS YOURSELF). A source\n"
        "PEER_A:/PATH (a regular file, or with -r a directory) is read there\n"
        "as you and sent by PEER_A straight to PEER_B:/PATH (see xferctl help\n"
        "get).\n"
        "\n"
        "  -r, --recursive\n"
        "                send DIR and everything beneath it (directories, regular files\n"
        "                and symlinks, as links; devices, FIFOs and sockets are skipped\n"
        "                with a warning, and make the exit status 23) as one job, every\n"
        "                entry with its mode (less setuid and setgid) and mtime; the\n"
        "                receiver publishes the whole tree as DEST at once, when every\n"
        "                file is verified, or nothing\n"
        "  -H, --hard-links\n"
        "                with -r (the default): entries of DIR that are one file under\n"
        "                several names arrive as one file under those names, its data\n"
        "                sent once (as rsync -H); only names within the job are linked\n"
        "  --no-hard-links\n"
        "                with -r: send each name of such a file as a copy of its own\n"
        "  -S, --sparse  (the default) a sparse file's holes (what SEEK_DATA skips;\n"
        "                files larger than 1 MiB) are neither read nor sent, and arrive\n"
        "                as holes: a 100 GiB image holding 5 GiB moves 5 GiB\n"
        "  --no-sparse   send every byte of a sparse file, holes as zeros; the\n"
        "                receiver reserves the whole file first\n"
        "  -X, --xattrs  with PEER:/PATH: every file's and directory's user.* extended\n"
        "                attributes land with it (as rsync -X)\n"
        "  -A, --acls    with PEER:/PATH: every file's and directory's POSIX ACLs land\n"
        "                with it, and an entry without one has none there (as rsync -A)\n"
        "  --links safe|all|none\n"
        "                with -r: which symlinks to send: those whose target is relative\n"
        "                and stays beneath DIR (default), all, or none; the others are\n"
        "                skipped with a warning. The receiver's tree_symlinks decides\n"
        "                what it takes\n"
        "  --to DEST     with -r: the tree's name on the receiver, a relative path\n"
        "                beneath its incoming directory (default: DIR's last component);\n"
        "                with several sources (directories or files), required: each\n"
        "                arrives as DEST/its last component\n"
        "  --exclude PATTERN\n"
        "                with -r: leave out what PATTERN matches beneath DIR (rsync's\n"
        "                rules, see xferctl(1) FILTER RULES): \"*.o\" any name, \"build/\"\n"
        "                any directory of that name, \"/tmp\" at DIR's top only, \"a/**\"\n"
        "                everything beneath any a. A directory left out is not walked:\n"
        "                nothing in it is sent. Repeatable; the first rule that matches\n"
        "                an entry decides, none: it is sent. Not said, and not exit 23\n"
        "  --include PATTERN\n"
        "                with -r: send what PATTERN matches, whatever later rules say\n"
        "                (but nothing in a directory left out: it is not walked)\n"
        "  --exclude-from FILE, --include-from FILE\n"
        "                with -r: the rules in FILE (- for standard input), one a line;\n"
        "                blank lines and lines starting with # or ; are ignored, and a\n"
        "                line may start with \"- \" or \"+ \" to exclude or include\n"
        "  --continue-on-error\n"
        "                leave out (with a warning) a FILE, or an entry of DIR, that cannot\n"
        "                be read, send the rest, and exit 23 (without: stop before sending)\n"
        "  --skip-existing\n"
        "                leave alone (and do not send) every file or entry whose name\n"
        "                exists on the receiver; nothing there is replaced. With -r, DEST\n"
        "                may exist as a directory: the tree is merged into it\n"
        "  --sync=size|digest\n"
        "                skip a file the receiver has as a regular file of the same size\n"
        "                (digest: and the same rdmaxfer digest, see xferctl sum); send\n"
        "                one that differs, which replaces it where the receiver's\n"
        "                overwrite is yes (else the job fails). With -r, DEST may exist\n"
        "                as a directory: the tree is merged into it, and nothing the\n"
        "                receiver has beyond what is sent is removed (but see --delete)\n"
        "  --delete      with -r and --sync or --skip-existing: DEST on the receiver\n"
        "                ends with exactly the tree's entries; whatever else it held\n"
        "                (files, directories, symlinks) is removed in the same step that\n"
        "                publishes the tree, never anything outside DEST. The receiver\n"
        "                must allow it (tree_delete = yes); not in a chain. With\n"
        "                --exclude or --include, what they leave out of DEST there stays\n"
        "                (as rsync keeps it; the drop box's only, yet)\n"
        "  --delete-excluded\n"
        "                with --delete and --exclude or --include: remove on the receiver\n"
        "                what the rules leave out too\n"
        "  --overwrite   with PEER:/PATH: replace a file of the name there, as you\n"
        "                may (without: such a send fails at once, \"exists\")\n"
        "  --as NAME     publish under NAME (default: the last component of FILE;\n"
        "                one FILE only)\n"
        "  --bwlimit RATE\n"
        "                send at most RATE bytes per second: digits, then K, M, G or T\n"
        "                for powers of 1024 (8M = 8 MiB/s, about 8.4 MB/s); 0 = no limit.\n"
        "                Bytes, not bits. rdmaxferd's own rate_limit applies too.\n"
        "  --retries N   try at most N more times after a transient failure (0: never;\n"
        "                default: rdmaxferd's retry_max, 5 unless configured otherwise;\n"
        "                a job of several files resumes from its first file not\n"
        "                published; a tree (-r) from DEST, the receiver keeping\n"
        "                what it had verified)\n"
        "  -n, --dry-run ask the receiver what the send would create, replace, keep\n"
        "                and (--delete) delete, under its rules, and move nothing:\n"
        "                a summary line, or the refusal the send would get (and its\n"
        "                exit status). Not with a chain, nor --no-wait\n"
        "  -i, --itemize-changes\n"
        "                with -n: one line an entry, as rsync -i (xferctl(1)): what\n"
        "                would change; -ii every entry\n"
        "  --no-wait     print the job ID and return once the job is queued\n"
        "  --json        print the final job as one JSON object on stdout, the same\n"
        "                shape for one peer or several (xferctl(1), JSON OUTPUT):\n"
        "                {\"peers\":[{\"peer\":...,\"exit\":...,\"job\":{...}},...]}, each job\n"
        "                with its times (RFC 3339) and, for several FILEs, file_results\n"
        "  --parallel N  a NODELIST: send to each peer directly, not as a chain, at\n"
        "                most N at once (1-64, default 8; 1: one after the other)\n"
        "  --peer-names PATTERN\n"
        "                map each peer's name through PATTERN before resolving it:\n"
        "                %h the name, %s its short name (up to the first '.'), %d the\n"
        "                rest (\".example.org\" or nothing), %% a '%'; %h maps nothing\n"
        "                (default: $RDMAXFER_PEER_NAMES, else rdmaxferd's peer_names)\n"
        "  -h, --help    show this help\n"
        "\n"
        "A transient failure (the peer unreachable, busy or restarting, the link\n"
        "down, a timeout) makes rdmaxferd send the file again after a growing\n"
        "delay; a refusal (name, authentication, size, file exists) is final.\n"
        "By default xferctl waits, draws progress on stderr when it is a terminal,\n"
        "says each retry, and prints one summary line. Ctrl-C asks rdmaxferd to\n"
        "cancel the transfer and waits for it to stop; a second Ctrl-C stops waiting.\n"
        "Exit status: 0 only when the receiver verified and published (or, with\n"
        "--skip-existing or --sync, kept) every file;\n"
        "23 when it did, but --continue-on-error left some out, or -r left out\n"
        "what it could not send (each said; not what --exclude left out), or,\n"
        "to a NODELIST, when some peers got everything and others did not;\n"
        "1 failed or cancelled; 2 usage error; 3 rdmaxferd unreachable (to a\n"
        "NODELIST: each peer's code when all have the same).\n";

/* Expected outcomes of sendcmd_wait(), besides 0 (a message) and -errno. */
enum {
        SENDCMD_TIMEOUT = 1,
        SENDCMD_INTERRUPTED = 2,
};

/* Ctrl-C presses; the only state a signal handler may touch. */
static volatile sig_atomic_t sendcmd_interrupts;

static void sendcmd_on_sigint(int sig)
{
        sendcmd_interrupts++;
}

static void sendcmd_clear(struct sendcmd *sc)
{
        /* Spaces, not an escape sequence: works on any terminal. */
        if (sc->drawn > 0) {
                fprintf(stderr, "\r%*s\r", (int)sc->drawn, "");
                sc->drawn = 0;
        }
}

/* The bytes the bar shows: a relay chain's are its slowest node's
 * (xferctl(1)), as the relays last reported them. */
static uint64_t sendcmd_done(const struct ctl_job *j)
{
        uint64_t done = j->bytes_done;

        for (unsigned int k = 0; k < j->nodes && k < CTL_NODES_MAX; k++)
                done = MIN(done, j->node_bytes[k]);
        return done;
}

static void sendcmd_draw(struct sendcmd *sc)
{
        const struct ctl_job *j = &sc->job;
        char state[64], when[32];
        struct progress p = {
                .state = ctl_job_state_str(j->state),
                .peer = j->peer,
                .done = sendcmd_done(j),
                .total = j->bytes_total,
                .usec = j->usec,
                .rate = j->rate,
                .data = j->state == CTL_JOB_SENDING || j->state == CTL_JOB_VERIFYING,
        };
        unsigned int width = 80;
        struct winsize ws;
        char line[512];
        size_t len;

        if (!sc->tty || !sc->have_job)
                return;
        if (j->state == CTL_JOB_RETRYING) {
                snprintf(state, sizeof(state), "retrying %s (attempt %u of %u)",
                         progress_in(when, sizeof(when), j->retry_usec), (unsigned int)j->attempt,
                         (unsigned int)j->attempts);
                p.state = state;
        }
        /* One column short of the edge, so the terminal never wraps the line. */
        if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
                width = ws.ws_col - 1u;
        progress_line(line, sizeof(line), &p, width);
        len = strlen(line);
        fprintf(stderr, "\r%s%*s", line, sc->drawn > len ? (int)(sc->drawn - len) : 0, "");
        sc->drawn = MAX(len, sc->drawn);
}

/*
 * Wait for one message on @sock, letting SIGINT in only while waiting so a
 * press is never lost between a check and the wait. Returns 0 with @m
 * filled, SENDCMD_TIMEOUT after @timeout_ms (-1: none), SENDCMD_INTERRUPTED
 * on Ctrl-C, or -errno.
 */
static int sendcmd_wait(struct sendcmd *sc, int sock, int timeout_ms, struct ctl_msg *m)
{
        struct pollfd pfd = { .fd = sock, .events = POLLIN };
        struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
        int fd = -1, r;

        r = ppoll(&pfd, 1, timeout_ms < 0 ? NULL : &ts, &sc->waitmask);
        if (r < 0)
                return errno == EINTR ? SENDCMD_INTERRUPTED : -errno;
        if (r == 0)
                return SENDCMD_TIMEOUT;
        r = ctl_recv(sock, m, &fd);
        safe_close(fd);
        return r;
}

static void sendcmd_signals(struct sendcmd *sc)
{
        struct sigaction sa = { .sa_handler = sendcmd_on_sigint }, old;
        sigset_t block;

        sigemptyset(&sa.sa_mask);
        /* No SA_RESTART: ppoll() must return EINTR. */
        sigaction(SIGINT, &sa, &old);
        if (old.sa_handler == SIG_IGN)
                /* Started with SIGINT ignored (nohup, a background job): keep it so. */
                sigaction(SIGINT, &old, NULL);

        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &sc->waitmask);
        sigdelset(&sc->waitmask, SIGINT);
}

/*
 * --exclude or --include (@kind) PATTERN @arg, or with @from their -from
 * FILE @arg ("-": standard input, which can be read once), into
 * sc->filters, in the order given. Returns -1 or an exit code.
 */
static int sendcmd_filter_opt(struct sendcmd *sc, enum filter_kind kind, bool from, const char *arg,
                              bool *stdin_read)
{
        const char *opt = kind == FILTER_EXCLUDE ? (from ? "--exclude-from" : "--exclude")
                                                 : (from ? "--include-from" : "--include");
        _cleanup_(freep) char *shown = esc_term_dup(arg);
        char err[512], why[ESC_TERM_SIZE(sizeof(err))];
        FILE *f = NULL;
        int r;

        if (!sc->filters)
                sc->filters = filter_list_new();
        if (!sc->filters || !shown) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        if (!from) {
                r = filter_add(sc->filters, kind, arg, err, sizeof(err));
        } else if (!strcmp(arg, "-") && *stdin_read) {
                xferctl_say("send: %s -: standard input is read once, for the first", opt);
                return XFERCTL_EXIT_USAGE;
        } else {
                f = strcmp(arg, "-") ? fopen(arg, "re") : stdin;
                if (!f) {
                        xferctl_say("send: %s '%s': %s", opt, shown, strerror(errno));
                        return XFERCTL_EXIT_USAGE;
                }
                *stdin_read |= f == stdin;
                r = filter_load(sc->filters, kind, f, err, sizeof(err));
                if (f != stdin)
                        fclose(f);
        }
        if (r < 0) {
                /* The text may quote the pattern: escaped, as any name. */
                xferctl_say("send: %s '%s': %s", opt, shown, esc_term(why, sizeof(why), err));
                return r == -ENOMEM ? XFERCTL_EXIT_FAILED : XFERCTL_EXIT_USAGE;
        }
        return -1;
}

int sendcmd_sync_opt(struct sendcmd *sc, const char *cmd, const char *arg)
{
        char shown[ESC_TERM_SIZE(32)];

        if (!strcmp(arg, "size")) {
                sc->submit.flags |= CTL_SUBMIT_SYNC_SIZE;
                return -1;
        }
        if (!strcmp(arg, "digest")) {
                sc->submit.flags |= CTL_SUBMIT_SYNC_DIGEST;
                return -1;
        }
        xferctl_say("%s: --sync '%s': expected size or digest", cmd, esc_term(shown, sizeof(shown), arg));
        return XFERCTL_EXIT_USAGE;
}

int sendcmd_bwlimit_opt(struct sendcmd *sc, const char *cmd, const char *arg)
{
        if (config_parse_size(arg, &sc->submit.bwlimit) < 0 || sc->submit.bwlimit > SENDCMD_BWLIMIT_MAX) {
                _cleanup_(freep) char *bad = esc_term_dup(arg);

                xferctl_say("%s: --bwlimit '%s': expected bytes per second up to 1T, e.g. 8M (K, M, G, T are "
                            "powers of 1024), or 0 for no limit", cmd, bad ? bad : "?");
                return XFERCTL_EXIT_USAGE;
        }
        return -1;
}

int sendcmd_retries_opt(struct sendcmd *sc, const char *cmd, const char *arg)
{
        unsigned int n = 0;
        const char *p = arg;

        /* Digits only, and not more than the daemon takes. */
        for (; *p >= '0' && *p <= '9' && n <= CTL_RETRIES_MAX; p++)
                n = n * 10 + (unsigned int)(*p - '0');
        if (*p || p == arg || n > CTL_RETRIES_MAX) {
                char shown[ESC_TERM_SIZE(32)];

                xferctl_say("%s: --retries '%s': expected a number from 0 to %u", cmd,
                            esc_term(shown, sizeof(shown), arg), CTL_RETRIES_MAX);
                return XFERCTL_EXIT_USAGE;
        }
        sc->retries = (int)n;
        return -1;
}

/* -X, -A: what they go with, so far. -1 or XFERCTL_EXIT_USAGE. */
static int sendcmd_attrs_refuse(const struct sendcmd *sc)
{
        const uint16_t f = sc->submit.flags;
        const char *what = (f & CTL_SUBMIT_XATTRS) && (f & CTL_SUBMIT_ACLS) ? "-X and -A" :
                           (f & CTL_SUBMIT_XATTRS) ? "--xattrs (-X)" : "--acls (-A)";

        if (!(f & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS)))
                return -1;
        if (sc->into || !(f & CTL_SUBMIT_LAND)) {
                xferctl_say("send: %s: attributes go only with files that land as you (PEER:/PATH); "
                            "the drop box sets its own (xferctl(1), Attributes)", what);
                return XFERCTL_EXIT_USAGE;
        }
        return -1;
}

/* --delete with --exclude or --include: the rules into the SUBMIT, for
 * the receiver to keep what they leave out (ctl.h, CTL_SUBMIT_RULES).
 * Returns -1, or an exit code (said). */
static int sendcmd_rules(struct sendcmd *sc)
{
        ssize_t n;

        if (sc->submit.flags & CTL_SUBMIT_LAND) {
                xferctl_say("send: --delete with --exclude or --include to PEER:/PATH would remove there what "
                            "the rules leave out (rsync keeps it; a landing cannot yet): say --delete-excluded "
                            "to remove it, or send to the drop box");
                return XFERCTL_EXIT_USAGE;
        }
        n = filter_list_text(sc->filters, sc->submit.rules, sizeof(sc->submit.rules));
        if (n == 0)
                return -1;      /* "!" cleared them: none to keep by */
        if (n < 0) {
                xferctl_say("send: --delete keeps on the receiver what --exclude and --include leave out, "
                            "and %s: say --delete-excluded to remove it instead",
                            n == -EINVAL ? "a rule with a line break cannot go there"
                                         : "these rules are more than the 4095 bytes that can go there");
                return XFERCTL_EXIT_USAGE;
        }
        sc->submit.flags |= CTL_SUBMIT_RULES;
        sc->submit.rules_len = (uint16_t)n;
        return -1;
}

static int sendcmd_parse(struct sendcmd *sc, int argc, char **argv)
{
        static const struct option opts[] = {
                { "as", required_argument, NULL, 'a' },
                { "bwlimit", required_argument, NULL, 'b' },
                { "retries", required_argument, NULL, 'y' },
                { "recursive", no_argument, NULL, 'r' },
                { "continue-on-error", no_argument, NULL, 'k' },
                { "to", required_argument, NULL, 't' },
                { "links", required_argument, NULL, 'l' },
                { "hard-links", no_argument, NULL, 'H' },
                { "no-hard-links", no_argument, NULL, 'L' },
                { "skip-existing", no_argument, NULL, 'E' },
                { "sparse", no_argument, NULL, 'S' },
                { "no-sparse", no_argument, NULL, 'Z' },
                { "sync", required_argument, NULL, 'Y' },
                { "delete", no_argument, NULL, 'D' },
                { "delete-excluded", no_argument, NULL, 'e' },
                { "no-wait", no_argument, NULL, 'w' },
                { "dry-run", no_argument, NULL, 'n' },
                { "itemize-changes", no_argument, NULL, 'i' },
                { "overwrite", no_argument, NULL, 'O' },
                { "json", no_argument, NULL, 'j' },
                { "parallel", required_argument, NULL, 'P' },
                { "peer-names", required_argument, NULL, 'N' },
                { "exclude", required_argument, NULL, 'x' },
                { "include", required_argument, NULL, 'u' },
                { "exclude-from", required_argument, NULL, 'F' },
                { "xattrs", no_argument, NULL, 'X' },
                { "acls", no_argument, NULL, 'A' },
                { "include-from", required_argument, NULL, 'I' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        bool stdin_read = false;
        int c, r;

        optind = 0;     /* glibc: start over on a fresh argv */
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hrHSniXA", opts, NULL)) != -1) {
                switch (c) {
                case 'a':
                        sc->as = optarg;
                        break;
                case 'O':
                        sc->overwrite = true;
                        break;
                case 'b':
                        r = sendcmd_bwlimit_opt(sc, "send", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'r':
                        sc->recursive = true;
                        break;
                case 'S':
                        sc->submit.flags &= (uint16_t)~CTL_SUBMIT_NO_SPARSE;
                        break;
                case 'Z':
                        sc->submit.flags |= CTL_SUBMIT_NO_SPARSE;
                        break;
                case 'E':
                        sc->submit.flags |= CTL_SUBMIT_SKIP_EXISTING;
                        break;
                case 'Y':
                        r = sendcmd_sync_opt(sc, "send", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'D':
                        sc->submit.flags |= CTL_SUBMIT_DELETE;
                        break;
                case 'e':
                        sc->delete_excluded = true;
                        break;
                case 'k':
                        sc->keep_going = true;
                        break;
                case 'H':
                        sc->no_hard_links = false;
                        break;
                case 'L':
                        sc->no_hard_links = true;
                        break;
                case 't':
                        sc->to = optarg;
                        break;
                case 'l':
                        if (!strcmp(optarg, "safe")) {
                                sc->links = SENDCMD_LINKS_SAFE;
                        } else if (!strcmp(optarg, "all")) {
                                sc->links = SENDCMD_LINKS_ALL;
                        } else if (!strcmp(optarg, "none")) {
                                sc->links = SENDCMD_LINKS_NONE;
                        } else {
                                char shown[ESC_TERM_SIZE(32)];

                                xferctl_say("send: --links '%s': expected safe, all or none",
                                            esc_term(shown, sizeof(shown), optarg));
                                return XFERCTL_EXIT_USAGE;
                        }
                        break;
                case 'y':
                        r = sendcmd_retries_opt(sc, "send", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'w':
                        sc->no_wait = true;
                        break;
                case 'n':
                        sc->submit.flags |= CTL_SUBMIT_DRY_RUN;
                        break;
                case 'i':
                        sc->itemize++;
                        break;
                case 'P': {
                        unsigned int n = 0;
                        const char *p = optarg;

                        for (; *p >= '0' && *p <= '9' && n <= SENDCMD_PARALLEL_MAX; p++)
                                n = n * 10 + (unsigned int)(*p - '0');
                        if (*p || p == optarg || n == 0 || n > SENDCMD_PARALLEL_MAX) {
                                char shown[ESC_TERM_SIZE(32)];

                                xferctl_say("send: --parallel '%s': expected a number from 1 to %u",
                                            esc_term(shown, sizeof(shown), optarg), SENDCMD_PARALLEL_MAX);
                                return XFERCTL_EXIT_USAGE;
                        }
                        sc->parallel = n;
                        break;
                }
                case 'j':
                        sc->json = true;
                        break;
                case 'N':
                        sc->peer_names_opt = optarg;
                        break;
                case 'X':
                        sc->submit.flags |= CTL_SUBMIT_XATTRS;
                        break;
                case 'A':
                        sc->submit.flags |= CTL_SUBMIT_ACLS;
                        break;
                case 'x':
                case 'u':
                case 'F':
                case 'I':
                        r = sendcmd_filter_opt(sc, c == 'x' || c == 'F' ? FILTER_EXCLUDE : FILTER_INCLUDE,
                                               c == 'F' || c == 'I', optarg, &stdin_read);
                        if (r >= 0)
                                return r;
                        break;
                case 'h':
                        fputs(sendcmd_help, stdout);
                        return XFERCTL_EXIT_OK;
                case ':':
                        xferctl_say_bad_option(argv, ':');
                        return XFERCTL_EXIT_USAGE;
                default:
                        xferctl_say_bad_option(argv, optopt);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (argc - optind < 2) {
                xferctl_say("send: expected FILE... and PEER (see xferctl send --help)");
                return XFERCTL_EXIT_USAGE;
        }
        /* bcast's last argument is its own NODELIST, never a PATH. */
        if (!sc->into) {
                r = sendland_parse(sc, argv[argc - 1], (unsigned int)(argc - optind - 1));
                if (r >= 0)
                        return r;
        } else if (sc->overwrite) {
                xferctl_say("bcast: --overwrite is for send's PEER:/PATH");
                return XFERCTL_EXIT_USAGE;
        }
        if ((unsigned int)(argc - optind - 1) > 1 && sc->as) {
                xferctl_say("send: --as names one file; several FILEs keep their own names");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->recursive && sc->as) {
                xferctl_say("send: -r publishes under --to DEST, not --as");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->recursive && argc - optind - 1 > 1 && !sc->to && !(sc->submit.flags & CTL_SUBMIT_LAND)) {
                xferctl_say("send: several sources with -r go into one directory on the receiver: "
                            "name it with --to DEST");
                return XFERCTL_EXIT_USAGE;
        }
        if (__builtin_popcount(sc->submit.flags & CTL_SUBMIT_SYNC_MASK) > 1) {
                xferctl_say("send: --skip-existing and --sync are one or the other (and --sync once)");
                return XFERCTL_EXIT_USAGE;
        }
        if ((sc->submit.flags & CTL_SUBMIT_DELETE) && !sc->recursive) {
                xferctl_say("send: --delete is for a tree (-r): it removes what DEST on the receiver "
                            "holds beyond the tree");
                return XFERCTL_EXIT_USAGE;
        }
        if ((sc->submit.flags & CTL_SUBMIT_DELETE) && !(sc->submit.flags & CTL_SUBMIT_SYNC_MASK)) {
                xferctl_say("send: --delete needs --sync or --skip-existing: without them an existing "
                            "DEST is refused, not merged into");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->delete_excluded && !(sc->submit.flags & CTL_SUBMIT_DELETE)) {
                xferctl_say("send: --delete-excluded goes with --delete");
                return XFERCTL_EXIT_USAGE;
        }
        /* What the rules leave out the receiver keeps, as rsync's does
         * unless told --delete-excluded: they go with the job. */
        if ((sc->submit.flags & CTL_SUBMIT_DELETE) && sc->filters && !sc->delete_excluded) {
                r = sendcmd_rules(sc);
                if (r >= 0)
                        return r;
        }
        r = sendcmd_attrs_refuse(sc);
        if (r >= 0)
                return r;
        if (sc->itemize && !(sc->submit.flags & CTL_SUBMIT_DRY_RUN)) {
                xferctl_say("send: --itemize-changes goes with --dry-run (-n)");
                return XFERCTL_EXIT_USAGE;
        }
        if ((sc->submit.flags & CTL_SUBMIT_DRY_RUN) && sc->no_wait) {
                xferctl_say("send: --dry-run waits for the receiver's word: not with --no-wait");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->to && !sc->recursive) {
                xferctl_say("send: --to DEST is for a tree (-r)");
                return XFERCTL_EXIT_USAGE;
        }
        if (sc->filters && !sc->recursive) {
                xferctl_say("send: --exclude, --include and their -from files are for a tree (-r); "
                            "name the FILEs to send instead");
                return XFERCTL_EXIT_USAGE;
        }
        sc->paths = &argv[optind];
        sc->npaths = (unsigned int)(argc - optind - 1);
        sc->path = argv[optind];
        sc->peer_arg = sc->land_peer ? sc->land_peer : argv[argc - 1];
        return -1;
}

/* Open FILE as the user. Returns -1 with *@out set, or an exit code. */
static int sendcmd_open(struct sendcmd *sc, int *out)
{
        uint64_t size;

        return sendcmd_open_path(sc->path, out, &size);
}

/* @host (a PEER's, no port) through peer_names, then resolved into @num
 * (numeric text). -1, or an exit code (said). */
int sendcmd_resolve(struct sendcmd *sc, const char *host, char *num, size_t numlen)
{
        char name[PEERNAME_NAME_MAX + 1], err[256];
        bool mapped;
        int r;

        r = peernames_map(&sc->names, host, name, sizeof(name), &mapped);
        if (r >= 0)
                return r;
        if (peer_resolve(name, num, numlen, err, sizeof(err)) < 0) {
                peernames_say_unresolved(&sc->names, host, name, mapped, err);
                return XFERCTL_EXIT_USAGE;
        }
        return -1;
}

/* Check the name and resolve the peer into sc->submit. Returns -1 or an exit code. */
static int sendcmd_target(struct sendcmd *sc)
{
        const char *name = sc->recursive ? sc->dest : sc->as ? sc->as : name_leaf(sc->path);
        enum name_verdict v = sc->recursive ? name_path_check(name, strlen(name), NULL) :
                                              name_check(name, strlen(name));
        char host[256], err[256];
        int r;

        if (v != NAME_OK) {
                /* A refused name is likely the one with control characters in it. */
                _cleanup_(freep) char *bad = esc_term_dup(name);

                if (!bad)
                        xferctl_say("out of memory");
                else if (sc->as)
                        xferctl_say("--as '%s': %s", bad, name_verdict_str(v));
                else if (sc->submit.flags & CTL_SUBMIT_LAND)
                        xferctl_say("cannot send %s as '%s': %s (rename it first)",
                                    sc->path_shown, bad, name_verdict_str(v));
                else
                        xferctl_say("cannot send %s as '%s': %s (choose a name with --as NAME)",
                                    sc->path_shown, bad, name_verdict_str(v));
                return XFERCTL_EXIT_USAGE;
        }
        /* name_check() caps the length at CTL_NAME_MAX. */
        snprintf(sc->submit.name, sizeof(sc->submit.name), "%s", name);
        if (sc->retries >= 0) {
                sc->submit.flags |= CTL_SUBMIT_RETRIES;
                sc->submit.retries = (uint16_t)sc->retries;
        }

        r = peer_split(sc->peer_arg, host, sizeof(host), &sc->submit.port, err, sizeof(err));
        if (r < 0) {
                xferctl_say("bad peer '%s': %s (expected HOST, HOST:PORT or [IPV6]:PORT)",
                            sc->peer_shown, err);
                return XFERCTL_EXIT_USAGE;
        }
        return sendcmd_resolve(sc, host, sc->submit.host, sizeof(sc->submit.host));
}

/* Submit with the file attached; sets sc->id, and hands the other files
 * over if there are several. Returns -1 or an exit code. */
static int sendcmd_submit(struct sendcmd *sc, int fd)
{
        struct ctl_msg req = { .type = CTL_SUBMIT, .submit = sc->submit }, rep;
        char text[ESC_TERM_SIZE(sizeof(rep.error.text))];
        _cleanup_(closep) int sock = -1;
        int r;

        /* -X, -A: the file's (a tree's DEST's came when it was counted). */
        if (!sc->recursive && fd >= 0)
                sendcmd_attrs_read(sc, fd, sc->path, req.submit.xattrs, &req.submit.xattrs_len);
        sock = xferctl_connect(sc->socket_path, true);
        if (sock < 0 || xferctl_send(sock, &req, fd) < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        /* A first Ctrl-C waits for the id so the job can be cancelled; a second gives up. */
        while ((r = sendcmd_wait(sc, sock, -1, &rep)) == SENDCMD_INTERRUPTED) {
                if (sendcmd_interrupts > 1) {
                        xferctl_say("interrupted before rdmaxferd confirmed the job "
                                    "(see xferctl list)");
                        return XFERCTL_EXIT_FAILED;
                }
        }
        if (r < 0) {
                xferctl_say_io(r);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (rep.type == CTL_ERROR) {
                if (rep.error.code == -EPROTONOSUPPORT) {
                        xferctl_say_io(rep.error.code);
                        return XFERCTL_EXIT_UNREACHABLE;
                }
                xferctl_say("rdmaxferd refused to %s %s %s %s: %s", sc->get_dest ? "get" : "send",
                            sc->path_shown, sc->get_dest ? "from" : "to", sc->peer_shown,
                            rep.error.text[0] ? esc_term(text, sizeof(text), rep.error.text)
                                              : strerror(-rep.error.code));
                return XFERCTL_EXIT_FAILED;
        }
        if (rep.type != CTL_SUBMITTED) {
                xferctl_say_unexpected(&rep);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        sc->id = rep.id;
        if (sc->recursive)
                return sendcmd_feed_tree(sc, sock);
        if (sc->npaths > 1)
                return sendcmd_feed(sc, sock);
        return -1;
}

/* One STATUS request on its own connection. 0, or -1 (said when @say). */
static int sendcmd_fetch(struct sendcmd *sc, int *sock, bool say, struct ctl_job *job)
{
        struct ctl_msg req = { .type = CTL_STATUS, .id = sc->id }, rep = { .type = 0 };
        /* A wedged daemon must not freeze the display: give up on a slow answer. */
        struct timeval tv = { .tv_sec = 2 };
        int fd = -1, r;

        if (*sock < 0) {
                *sock = xferctl_connect(sc->socket_path, say);
                if (*sock < 0)
                        return -1;
                setsockopt(*sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        }
        r = ctl_send(*sock, &req, -1);
        if (r >= 0)
                r = ctl_recv(*sock, &rep, &fd);
        safe_close(fd);
        if (r < 0 || rep.type != CTL_JOB || rep.job.id != sc->id) {
                if (say && r < 0)
                        xferctl_say_io(r);
                else if (say && rep.type == CTL_ERROR)
                        xferctl_say_error("status", &rep.error);
                else if (say)
                        xferctl_say_unexpected(&rep);
                *sock = safe_close(*sock);
                return -1;
        }
        *job = rep.job;
        return 0;
}

/* The watch stream has been quiet: ask ourselves, to keep the display moving. */
static void sendcmd_refresh(struct sendcmd *sc)
{
        struct ctl_job job;

        if (!sc->tty || sc->poll_off || !sc->have_job)
                return;
        if (sendcmd_fetch(sc, &sc->poll_sock, false, &job) < 0) {
                sc->poll_off = true;
                return;
        }
        /* The final state is for the watch stream to deliver; only draw progress. */
        if (!ctl_job_state_final(job.state)) {
                sc->job = job;
                sendcmd_draw(sc);
        }
}

static void sendcmd_cancel(struct sendcmd *sc)
{
        struct ctl_msg req = { .type = CTL_CANCEL, .id = sc->id }, rep;
        _cleanup_(closep) int sock = -1;

        sock = xferctl_connect(sc->socket_path, true);
        if (sock < 0 || xferctl_call(sock, &req, -1, &rep) < 0)
                return;
        /* -EALREADY: it finished meanwhile; the watch stream says how. */
        if (rep.type == CTL_ERROR && rep.error.code != -EALREADY)
                xferctl_say_error("cancel", &rep.error);
        else if (rep.type != CTL_OK && rep.type != CTL_ERROR)
                xferctl_say_unexpected(&rep);
}

/* Ctrl-C while watching. Returns -1 to keep waiting, or an exit code. */
static int sendcmd_interrupted(struct sendcmd *sc)
{
        sendcmd_clear(sc);
        if (!sc->cancel_sent) {
                sc->cancel_sent = true;
                sc->cancel_at = sendcmd_interrupts;
                xferctl_say("interrupted: cancelling job %" PRIu64 ", waiting for rdmaxferd to "
                            "stop it (Ctrl-C again to stop waiting)", sc->id);
                sendcmd_cancel(sc);
                return -1;
        }
        if (sendcmd_interrupts > sc->cancel_at) {
                xferctl_say("stopped waiting; job %" PRIu64 " is being cancelled "
                            "(see xferctl status %" PRIu64 ")", sc->id, sc->id);
                return XFERCTL_EXIT_FAILED;
        }
        return -1;
}

/* A symlink's (or hard link's) target as the feed handed it, or NULL. */
static const char *sendcmd_dry_target(const struct sendcmd *sc, const char *name)
{
        for (unsigned int i = 0; i < sc->ndry_links; i++)
                if (strcmp(sc->dry_links[i].name, name) == 0)
                        return sc->dry_links[i].target;
        return NULL;
}

/* A dry run done: its items (ITEMS), as itemize lines with -i, else
 * summed up in one line. 0, or -1 (said). */
static int sendcmd_dry_report(struct sendcmd *sc)
{
        struct ctl_msg req = { .type = CTL_ITEMS, .id = sc->id }, m;
        struct itemize_sum sum = { 0 };
        _cleanup_(closep) int sock = -1;
        char line[ITEMIZE_LINE_MAX];
        int fd = -1, r;

        sock = xferctl_connect(sc->socket_path, true);
        if (sock < 0 || xferctl_send(sock, &req, -1) < 0)
                return -1;
        for (;;) {
                r = ctl_recv(sock, &m, &fd);
                fd = safe_close(fd);
                if (r < 0) {
                        xferctl_say_io(r);
                        return -1;
                }
                if (m.type == CTL_LIST_END)
                        break;
                if (m.type == CTL_ERROR) {
                        xferctl_say_error("the dry run's items", &m.error);
                        return -1;
                }
                if (m.type != CTL_ITEM || m.item.id != sc->id) {
                        xferctl_say_unexpected(&m);
                        return -1;
                }
                itemize_add(&sum, &m.item);
                if (sc->itemize && !sc->json) {
                        _cleanup_(freep) char *name = esc_term_dup(m.item.name);
                        const char *t = sendcmd_dry_target(sc, m.item.name);
                        _cleanup_(freep) char *target = t ? esc_term_dup(t) : NULL;

                        if (!name)
                                return -1;
                        if (itemize_line(line, sizeof(line), &m.item, name, target, (unsigned int)sc->itemize))
                                puts(line);
                }
        }
        if (!sc->itemize && !sc->json)
                puts(itemize_summary(line, sizeof(line), &sum));
        return 0;
}

/* The final line (or JSON object) for a finished job. Returns the exit code. */
static int sendcmd_report(struct sendcmd *sc)
{
        const struct ctl_job *j = &sc->job;
        char name[ESC_TERM_SIZE(sizeof(j->name))], peer[ESC_TERM_SIZE(sizeof(j->peer))];
        char text[ESC_TERM_SIZE(sizeof(j->text))], line[2048];
        const char *cause = j->text[0] ? esc_term(text, sizeof(text), j->text)
                                       : wire_status_str(j->status);

        if (sc->chain)
                return sendcmd_chain_report(sc);
        if (sc->get_dest)
                return getcmd_report(sc);
        if (sc->json) {
                int rc = j->state != CTL_JOB_DONE ? XFERCTL_EXIT_FAILED :
                         sc->left_out || sc->unreadable || sc->attrs_lost ? XFERCTL_EXIT_PARTIAL : XFERCTL_EXIT_OK;

                /* Every mode's shape: a peers array (json.h). */
                json_peer_open(stdout, sc->peer_arg, rc);
                if (sc->results)
                        json_job_files(stdout, j, sc->results, sc->nresults);
                else
                        json_job(stdout, j);
                json_peer_close(stdout);
                fputc('\n', stdout);
        }
        switch (j->state) {
        case CTL_JOB_DONE:
                /* Nothing moved: what would have, instead. */
                if (sc->submit.flags & CTL_SUBMIT_DRY_RUN)
                        return sendcmd_dry_report(sc) < 0 ? XFERCTL_EXIT_FAILED :
                               sendcmd_left_out_say(sc) ? XFERCTL_EXIT_PARTIAL : XFERCTL_EXIT_OK;
                if (!sc->json && j->files_total > 1) {
                        char files[CTL_NAME_MAX + 80], skipped[sizeof(j->peer) + 80] = "";

                        if (j->files_skipped)
                                snprintf(skipped, sizeof(skipped), ", %u skipped (already on %s)",
                                         (unsigned int)j->files_skipped, j->peer);
                        if (j->deleted)
                                snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped),
                                         ", %u deleted", (unsigned int)j->deleted);
                        if (sc->recursive)
                                snprintf(files, sizeof(files), "%s (%u entries%s)", sc->dest,
                                         (unsigned int)j->files_total, skipped);
                        else
                                snprintf(files, sizeof(files), "%u files%s", (unsigned int)j->files_total,
                                         skipped);
                        puts(progress_summary(line, sizeof(line), files, j->peer, j->bytes_done, j->usec));
                } else if (!sc->json) {
                        char one[CTL_NAME_MAX + sizeof(j->peer) + 48];

                        snprintf(one, sizeof(one), "%s%s%s%s", j->name, j->files_skipped ? ", skipped (already on " : "",
                                 j->files_skipped ? j->peer : "", j->files_skipped ? ")" : "");
                        puts(progress_summary(line, sizeof(line), one, j->peer, j->bytes_done, j->usec));
                }
                return sendcmd_left_out_say(sc) ? XFERCTL_EXIT_PARTIAL : XFERCTL_EXIT_OK;
        case CTL_JOB_CANCELLED:
                xferctl_say("send %s to %s cancelled%s%s", esc_term(name, sizeof(name), j->name),
                            esc_term(peer, sizeof(peer), j->peer), j->text[0] ? ": " : "",
                            j->text[0] ? cause : "");
                return XFERCTL_EXIT_FAILED;
        default:
                /* The daemon's text says it best; without one, say what the status means. */
                xferctl_say("send %s to %s failed: %s%s", esc_term(name, sizeof(name), j->name),
                            esc_term(peer, sizeof(peer), j->peer),
                            !j->text[0] && wire_status_refusal(j->status) ? "refused by peer: " : "",
                            cause);
                return XFERCTL_EXIT_FAILED;
        }
}

/* Say each retry once, on stderr, and keep waiting: the exit status is the last attempt's. */
static void sendcmd_retrying(struct sendcmd *sc)
{
        const struct ctl_job *j = &sc->job;
        char text[ESC_TERM_SIZE(sizeof(j->text))], when[32];

        if (j->state != CTL_JOB_RETRYING || j->attempt <= sc->retry_said)
                return;
        sc->retry_said = j->attempt;
        sendcmd_clear(sc);
        xferctl_say("attempt %u of %u failed: %s; retrying %s", j->attempt - 1u,
                    (unsigned int)j->attempts,
                    j->text[0] ? esc_term(text, sizeof(text), j->text) : wire_status_str(j->status),
                    progress_in(when, sizeof(when), j->retry_usec));
}

static int sendcmd_watch(struct sendcmd *sc)
{
        struct ctl_msg req = { .type = CTL_WATCH, .id = sc->id }, m;
        _cleanup_(closep) int sock = -1;
        int r;

        /* A connection of its own: WATCH holds it until the final state. */
        sock = xferctl_connect(sc->socket_path, true);
        if (sock < 0 || xferctl_send(sock, &req, -1) < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        for (;;) {
                r = sendcmd_wait(sc, sock, sc->tty ? SENDCMD_REFRESH_MS : -1, &m);
                if (r == SENDCMD_INTERRUPTED) {
                        r = sendcmd_interrupted(sc);
                        if (r >= 0)
                                return r;
                        continue;
                }
                if (r == SENDCMD_TIMEOUT) {
                        sendcmd_refresh(sc);
                        continue;
                }
                if (r < 0 || m.type != CTL_JOB || m.job.id != sc->id) {
                        sendcmd_clear(sc);
                        if (r < 0)
                                xferctl_say_io(r);
                        else if (m.type == CTL_ERROR)
                                xferctl_say_error("watching the job", &m.error);
                        else
                                xferctl_say_unexpected(&m);
                        xferctl_say("job %" PRIu64 " may still be running (see xferctl status %"
                                    PRIu64 ")", sc->id, sc->id);
                        return XFERCTL_EXIT_UNREACHABLE;
                }
                sc->job = m.job;
                sc->have_job = true;
                if (ctl_job_state_final(m.job.state))
                        break;
                sendcmd_retrying(sc);
                sendcmd_draw(sc);
        }
        sendcmd_clear(sc);
        return sendcmd_report(sc);
}

/* --no-wait: the id, or with --json the job as it stands now. */
static int sendcmd_queued(struct sendcmd *sc)
{
        int sock = -1;

        if (sc->json) {
                struct ctl_job job;

                if (sendcmd_fetch(sc, &sock, true, &job) < 0)
                        return XFERCTL_EXIT_UNREACHABLE;
                safe_close(sock);
                json_peer_open(stdout, sc->peer_arg, XFERCTL_EXIT_OK);
                json_job(stdout, &job);
                json_peer_close(stdout);
                fputc('\n', stdout);
        } else {
                printf("%" PRIu64 "\n", sc->id);
        }
        return XFERCTL_EXIT_OK;
}

/* One peer, sc->peer_arg: the whole send. Returns the exit code. */
static int sendcmd_one(struct sendcmd *scp)
{
        struct sendcmd sc = *scp;
        _cleanup_(freep) char *path_shown = NULL, *peer_shown = NULL;
        _cleanup_(freep) uint64_t *sizes = NULL;
        _cleanup_(freep) struct json_file *results = NULL;
        _cleanup_(closep) int fd = -1;
        int r;

        path_shown = esc_term_dup(sc.path);
        peer_shown = esc_term_dup(sc.peer_arg);
        if (!path_shown || !peer_shown) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        sc.path_shown = path_shown;
        sc.peer_shown = peer_shown;
        if (sc.npaths > 1 && !sc.recursive) {
                r = sendcmd_count(&sc);
                sizes = sc.sizes;
                results = sc.results;
                if (r >= 0)
                        return r;
                /* --continue-on-error may have left the first out. */
                free(path_shown);
                path_shown = esc_term_dup(sc.path);
                if (!path_shown) {
                        xferctl_say("out of memory");
                        return XFERCTL_EXIT_FAILED;
                }
                sc.path_shown = path_shown;
        }
        if (sc.recursive)
                r = sendcmd_tree_prepare(&sc);
        else
                r = sendcmd_open(&sc, &fd);
        if (r >= 0)
                return r;
        r = sendcmd_target(&sc);
        if (r >= 0)
                return r;
        /* Made last, for the peer just resolved: its lifetime starts here. */
        if (sc.submit.flags & CTL_SUBMIT_LAND) {
                r = sendland_cred(&sc);
                if (r >= 0)
                        return r;
        }

        r = sendcmd_go(&sc, TAKE_FD(fd));
        for (unsigned int i = 0; i < sc.ndry_links; i++) {
                free(sc.dry_links[i].name);
                free(sc.dry_links[i].target);
        }
        free(sc.dry_links);
        return r;
}

int sendcmd_go(struct sendcmd *sc, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        int r;

        sc->tty = !sc->no_wait && isatty(STDERR_FILENO);
        sendcmd_signals(sc);

        r = sendcmd_submit(sc, fd);
        /* The daemon holds its own reference to the file now. */
        fd = safe_close(fd);
        if (r >= 0)
                return r;

        if (sendcmd_interrupts > 0) {
                r = sendcmd_interrupted(sc);
                if (r >= 0)
                        return r;
                if (sc->no_wait)
                        return XFERCTL_EXIT_FAILED;
        } else if (sc->no_wait) {
                return sendcmd_queued(sc);
        }

        r = sendcmd_watch(sc);
        sc->poll_sock = safe_close(sc->poll_sock);
        return r;
}

int sendcmd_run(const char *socket_path, int argc, char **argv)
{
        return sendcmd_run_into(socket_path, argc, argv, false);
}

int sendcmd_run_into(const char *socket_path, int argc, char **argv, bool into)
{
        struct sendcmd sc = {
                .socket_path = socket_path,
                .into = into,
                .retries = -1,
                .poll_sock = -1,
                .feed_sock = -1,
        };
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        _cleanup_(filter_list_freep) struct filter_list *filters = NULL;
        _cleanup_(freep) char *land_peer = NULL;
        char err[256];
        int r;

        r = sendcmd_parse(&sc, argc, argv);
        filters = sc.filters;
        land_peer = sc.land_peer;
        if (r >= 0)
                return r;
        r = peernames_init(&sc.names, "", socket_path, sc.peer_names_opt, false);
        if (r >= 0)
                return r;
        r = peer_list(sc.peer_arg, &hl, err, sizeof(err));
        if (r < 0) {
                _cleanup_(freep) char *shown = esc_term_dup(sc.peer_arg);

                if (r == -ENOMEM)
                        xferctl_say("out of memory");
                else
                        xferctl_say("bad peer list '%s': %s (expected PEER[:PORT] or a Slurm hostlist "
                                    "such as node[01-16]:7470)", shown ? shown : "?", err);
                return r == -ENOMEM ? XFERCTL_EXIT_FAILED : XFERCTL_EXIT_USAGE;
        }
        /* PEER_A:/X PEER_B:/Y, as scp takes it: PEER_A sends X on (a pull). */
        if (hl->n == 1 && sc.land_peer && sc.npaths >= 1 && landpath_split(sc.paths[0]))
                return getcmd_copy(&sc);
        if ((sc.submit.flags & CTL_SUBMIT_LAND) && sc.recursive && sc.npaths > 1) {
                if (hl->n == 1)
                        return sendland_each(&sc, sendcmd_one);
                xferctl_say("send: -r with several sources to NODELIST:/PATH is not supported yet: send "
                            "each to the nodes with its own xferctl send -r SRC NODELIST:/PATH");
                return XFERCTL_EXIT_USAGE;
        }
        if (hl->n == 1)
                return sendcmd_one(&sc);
        /* A relay cannot judge on another node's behalf (wire.h, Dry runs). */
        if ((sc.submit.flags & CTL_SUBMIT_DRY_RUN) && sendcmd_chain_fits(&sc)) {
                xferctl_say("send: --dry-run asks one receiver what it would do; a relay chain's nodes "
                            "cannot be asked: name one peer (or --parallel to ask each)");
                return XFERCTL_EXIT_USAGE;
        }
        /* A landing's one file goes down a chain, its credential naming
         * every node; a landing's tree to each node directly, each with a
         * credential of its own (a relay passes no staged tree of a
         * user's on). */
        if (sendcmd_chain_fits(&sc) && !((sc.submit.flags & CTL_SUBMIT_LAND) && sc.recursive)) {
                if (sc.submit.flags & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS)) {
                        xferctl_say("send: -X and -A are not supported yet down a relay chain: add "
                                    "--parallel N to send to each node directly");
                        return XFERCTL_EXIT_USAGE;
                }
                return sendcmd_chain(&sc, hl, sendcmd_one, sendcmd_resolve);
        }
        /* Several peers: what every one of them would refuse is said once. */
        if (!sc.recursive && !sc.keep_going) {
                for (unsigned int i = 0; i < sc.npaths; i++) {
                        _cleanup_(closep) int fd = -1;
                        uint64_t size;

                        r = sendcmd_open_path(sc.paths[i], &fd, &size);
                        if (r >= 0)
                                return r;
                }
        }
        /* The daemon's peer_names, once, not once for each child. */
        if (peernames_wanted(hl)) {
                r = peernames_load(&sc.names);
                if (r >= 0)
                        return r;
        }
        return sendcmd_fanout(&sc, hl, sendcmd_one);
}
