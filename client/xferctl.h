#pragma once

/*
 * xferctl: the commands, and the helpers they share for talking to
 * rdmaxferd's control socket (common/ctl.h). main.c parses the global
 * options and calls xferctl_run().
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config-build.h"
#include "ctl.h"
#include "macro.h"

/* Exit codes, documented in xferctl(1) and `xferctl --help`. */
enum {
        XFERCTL_EXIT_OK = 0,
        XFERCTL_EXIT_FAILED = 1,        /* transfer failed or cancelled; daemon refused the request */
        XFERCTL_EXIT_USAGE = 2,         /* bad arguments, or FILE/PEER/name unusable; nothing submitted */
        XFERCTL_EXIT_UNREACHABLE = 3,   /* cannot reach rdmaxferd, or lost it / it spoke nonsense */
        XFERCTL_EXIT_PARTIAL = 23,      /* send --continue-on-error: sent, but some could not be read
                                         * (rsync's number for a partial transfer) */
};

/* A relay chain of up to this many nodes gets a line per node from
 * `status` and send's report; a longer one (up to 512) a summary and the
 * lines of the nodes that matter, lest it fill screens (--json: all). */
#define XFERCTL_NODES_LISTED    16

#define XFERCTL_SOCKET_DEFAULT  RDMAXFER_RUNSTATEDIR "/rdmaxferd/control.sock"
#define XFERCTL_SOCKET_ENV      "RDMAXFER_SOCKET"

/* The global usage text (`xferctl --help`). */
void xferctl_usage(FILE *f);

/* Run the command in @argv[0] against the daemon at @socket_path. Returns an exit code. */
int xferctl_run(const char *socket_path, int argc, char **argv);

/* "xferctl: " + the message + newline, on stderr. */
void xferctl_say(const char *fmt, ...) _printf_(1, 2);

/*
 * Connect to the control socket. Returns the socket, or -1 after saying
 * why in one line when @say (with a hint: is the daemon running, is the
 * user in the rdmaxfer group).
 */
int xferctl_connect(const char *socket_path, bool say);

/*
 * Send one request (with @fd attached when >= 0) / receive one reply /
 * both. Each returns 0, or says why not ("lost the connection to
 * rdmaxferd", "rdmaxferd speaks another control protocol version") and
 * returns -1: the daemon is gone or broken, XFERCTL_EXIT_UNREACHABLE.
 */
int xferctl_send(int sock, const struct ctl_msg *req, int fd);
int xferctl_recv(int sock, struct ctl_msg *rep);
int xferctl_call(int sock, const struct ctl_msg *req, int fd, struct ctl_msg *rep);

/* Say why talking to the daemon failed (the -errno from ctl_recv or ctl_send). */
void xferctl_say_io(int r);

/* Say an unexpected reply type. */
void xferctl_say_unexpected(const struct ctl_msg *m);

/* Say a CTL_ERROR reply: "@what: text" (or the errno text when there is none). */
void xferctl_say_error(const char *what, const struct ctl_error *e);

/*
 * Say a getopt failure for the command in argv[0]: @opt is ':' for a
 * missing argument, else optopt (the option is named from argv[optind - 1]
 * when that is a long one).
 */
void xferctl_say_bad_option(char **argv, int opt);

/* A job id from the command line: decimal, > 0. 0 or -EINVAL. */
int xferctl_parse_id(const char *s, uint64_t *id);

/* MB/s for display: the recent rate while data moves, the average once done. */
double xferctl_job_mbps(const struct ctl_job *job);

/*
 * Options every command shares: --help, and --json where @json is not NULL.
 * Leaves the positional arguments in argv[*first..argc). Returns -1 to go
 * on, or an exit code.
 */
int xferctl_parse_opts(int argc, char **argv, const char *help, bool *json, int *first);

/* The `stats` command (statscmd.c). */
int statscmd_run(const char *socket_path, int argc, char **argv);
extern const char statscmd_help[];

/* The `sum` command (sumcmd.c): no daemon needed. */
int sumcmd_run(const char *socket_path, int argc, char **argv);
extern const char sumcmd_help[];

/* The `hosts` command (hostscmd.c): needs no daemon. */
int hostscmd_run(const char *socket_path, int argc, char **argv);
extern const char hostscmd_help[];

/* The `send` command (sendcmd.c). */
int sendcmd_run(const char *socket_path, int argc, char **argv);
extern const char sendcmd_help[];
/* getcmd.c: xferctl get PEER:/PATH DEST. */
int getcmd_run(const char *socket_path, int argc, char **argv);
extern const char getcmd_help[];
/* send, for bcast (bcastcmd.c): with @into, argv's sources are files that
 * arrive in --to DEST as a directory, even one (send -r SRC... --to DEST). */
int sendcmd_run_into(const char *socket_path, int argc, char **argv, bool into);

/* The `bcast` command (bcastcmd.c): send to a Slurm job's nodes, into its directory. */
int bcastcmd_run(const char *socket_path, int argc, char **argv);
extern const char bcastcmd_help[];
