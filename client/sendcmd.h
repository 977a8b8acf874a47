#pragma once

/*
 * xferctl send, shared by sendcmd.c (options, the submit, watching the job,
 * the report) and sendfiles.c (jobs of several files and trees).
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl.h"
#include "json.h"
#include "peernames.h"
#include "xferctl.h"

/* -r: which symlinks are sent (as links, never followed). */
enum sendcmd_links {
        SENDCMD_LINKS_SAFE = 0,         /* relative ones resolving beneath DIR (name_link_check) */
        SENDCMD_LINKS_ALL,
        SENDCMD_LINKS_NONE,
};

/* --parallel: how many peers of a NODELIST are sent to at once. */
#define SENDCMD_PARALLEL_DEFAULT        8
#define SENDCMD_PARALLEL_MAX            64

struct filter_list;
struct hostlist;

struct sendcmd {
        const char *socket_path;
        const char *path;               /* FILE as typed (the first) */
        char **paths;                   /* every FILE */
        unsigned int npaths;
        uint64_t *sizes;                /* as counted before the submit (several files) */
        /* --json, several files: each FILE as given, left out or not (json.h). */
        struct json_file *results;
        unsigned int nresults;
        const char *peer_arg;           /* PEER[:PORT] as typed; in a fan-out's child, its peer */
        /* PEER:/PATH: the PEER part (peer_arg points here); PATH and the
         * credential are in submit (CTL_SUBMIT_LAND). Else NULL. */
        char *land_peer;
        unsigned int parallel;          /* --parallel, or 0 */
        /* A NODELIST sent as a relay chain: its peers in order, the first
         * peer_arg, the others resolved into submit.route; else NULL. */
        const struct hostlist *chain;
        /* The two, escaped for messages (esc_term): a file name may hold anything. */
        const char *path_shown;
        const char *peer_shown;
        const char *as;                 /* --as, or NULL */
        const char *peer_names_opt;     /* --peer-names, or NULL */
        /* The peers' names through peer_names (peernames.h): asked of the
         * daemon once, before a star's children are forked. */
        struct peernames names;
        int retries;                    /* --retries, or -1 */
        bool no_wait;
        bool json;
        bool recursive;                 /* -r: FILE is a directory, sent as a tree */
        bool pull_tree;                 /* xferctl get -r: PATH on the peer may be a directory */
        bool keep_going;                /* --continue-on-error: skip what cannot be read */
        int links;                      /* --links: enum sendcmd_links */
        bool no_hard_links;             /* --no-hard-links: every name of a file a copy */
        bool delete_excluded;           /* --delete-excluded: --delete with filters allowed */
        bool overwrite;                 /* --overwrite: PEER:/PATH replaces a file there */
        int itemize;                    /* -i: 1, -ii: 2 (with --dry-run) */
        /* A dry run's links as the feed handed them over: each target, for -i. */
        struct sendcmd_dry_link {
                char *name, *target;
        } *dry_links;
        unsigned int ndry_links;
        /* -r: --exclude, --include and their -from files' rules, in order
         * (filter.h), or NULL for none; both walks apply them. What they
         * leave out is the user's choice: not left_out, not said. */
        struct filter_list *filters;
        unsigned int unreadable;        /* skipped for it */
        /* -r: entries the receiver could not take as they are (a device,
         * FIFO or socket, a name it refuses, a symlink --links leaves out
         * unless it said none): not sent, and the exit status says so. */
        unsigned int left_out;
        /* -X, -A: entries sent without their attributes (too many bytes
         * of them, or unreadable), said: exit 23 too. */
        unsigned int attrs_lost;
        const char *to;                 /* --to DEST, or NULL: the directory's last component */
        char dest[CTL_NAME_MAX + 1];
        size_t root_len;                /* of FILE as typed: the walk's paths start with it */
        /* -r with several sources: each arrives as DEST/src_leaf. */
        bool multi;
        /* xferctl bcast without -r: every SRC a file (a directory is
         * refused), DEST a directory of their own even for one. */
        bool into;
        char src_leaf[CTL_NAME_MAX + 1];
        uint32_t fed;                   /* tree entries handed over (DEST itself is the first) */
        bool feed_closed;               /* the daemon closed the connection we fed on */
        int feed_sock;
        struct ctl_submit submit;
        uint64_t id;
        sigset_t waitmask;              /* the mask while waiting: SIGINT let through */
        /* Progress display. */
        bool tty;
        size_t drawn;                   /* columns of the progress line on screen */
        unsigned int retry_said;        /* the last attempt whose retry was said */
        /* The job as last seen. */
        struct ctl_job job;
        bool have_job;
        /* A second connection for STATUS when the watch stream is quiet. */
        int poll_sock;
        bool poll_off;
        /* Cancellation. */
        bool cancel_sent;
        sig_atomic_t cancel_at;         /* sendcmd_interrupts when we sent CANCEL */
        /* xferctl get (getcmd.c): DEST as it lands here, or NULL: a send;
         * a copy between two peers (send PEER_A:/X PEER_B:/Y) says "send". */
        const char *get_dest;
        bool get_copy;
        uint16_t get_sync;              /* get --sync, --skip-existing, --delete, -X, -A: CTL_SUBMIT_SYNC_MASK's,
                                         * DELETE, XATTRS, ACLS */
};

/* The submit made (sc->submit, @fd its first file or -1), signals set up,
 * the job watched to its end and reported (or its id, --no-wait): the
 * exit code. Takes @fd. */
int sendcmd_go(struct sendcmd *sc, int fd);
/* @host (a PEER's, no port) through peer_names, then resolved into @num
 * (numeric text). -1, or an exit code (said). */
int sendcmd_resolve(struct sendcmd *sc, const char *host, char *num, size_t numlen);
/* --retries (--bwlimit) @arg of @cmd ("send", "get") into sc->retries
 * (sc->submit.bwlimit): -1, or XFERCTL_EXIT_USAGE (said). */
int sendcmd_bwlimit_opt(struct sendcmd *sc, const char *cmd, const char *arg);
/* --sync @arg (size, digest) of @cmd into sc->submit.flags: -1, or XFERCTL_EXIT_USAGE (said). */
int sendcmd_sync_opt(struct sendcmd *sc, const char *cmd, const char *arg);
int sendcmd_retries_opt(struct sendcmd *sc, const char *cmd, const char *arg);
/* getcmd.c: a pull's end, said (sendcmd's report for a get). */
int getcmd_report(struct sendcmd *sc);
/* getcmd.c: xferctl send PEER_A:/X PEER_B:/Y, parsed as a send (its
 * source the one path, PEER_B and Y in land_peer and the submit): PEER_A
 * asked to send X to PEER_B, as the user on both. The exit code. */
int getcmd_copy(struct sendcmd *sc);

/* A finished job that published what was sent: whether something was
 * left out of it (unreadable, or not sendable), said on stderr. */
static inline bool sendcmd_left_out_say(const struct sendcmd *sc)
{
        if (sc->unreadable > 0)
                xferctl_say("%u could not be read and %s not sent", sc->unreadable,
                            sc->unreadable == 1 ? "was" : "were");
        if (sc->left_out > 0)
                xferctl_say("%u %s not sent (said above)", sc->left_out,
                            sc->left_out == 1 ? "entry was" : "entries were");
        if (sc->attrs_lost > 0)
                xferctl_say("%u %s sent without %s attributes (said above)", sc->attrs_lost,
                            sc->attrs_lost == 1 ? "entry was" : "entries were", sc->attrs_lost == 1 ? "its" : "their");
        return sc->unreadable > 0 || sc->left_out > 0 || sc->attrs_lost > 0;
}

/*
 * xferctl send FILE... PEER:/PATH (sendland.c). @arg, the last argument,
 * when it holds ":/": PATH normalised into sc->submit with CTL_SUBMIT_LAND
 * (and LAND_DIR for a trailing '/' or @nfiles > 1), PEER into
 * sc->land_peer; the options a landing cannot go with yet refused. -1
 * (@arg is a PEER as ever, or the landing is set), or an exit code (said).
 */
int sendland_parse(struct sendcmd *sc, const char *arg, unsigned int nfiles);
/* The landing's MUNGE credential and token, made as the user for the peer
 * now in sc->submit.host, into sc->submit. -1, or an exit code (said). */
int sendland_cred(struct sendcmd *sc);
/*
 * send -r SRC... PEER:/PATH with several sources: each lands in PATH as
 * a job of its own (a directory as a tree, anything else as a file),
 * one after the other, by @one. 0 every one landed, 23 some did (those
 * that did not named), else the first one's failure.
 */
int sendland_each(struct sendcmd *sc, int (*one)(struct sendcmd *sc));
/* The same for any job a source: @one(each, source, @arg) for each of
 * sc->paths, each a copy of @sc; its exit code tallied as above (get of
 * several sources too). */
int sendland_sources(struct sendcmd *sc, int (*one)(struct sendcmd *each, const char *src, void *arg), void *arg);

/* Open @path as the user, a regular file: -1 with *@out and *@size set, or an exit code. */
int sendcmd_open_path(const char *path, int *out, uint64_t *size);
/* -X, -A: the attributes of @fd (at @path, for messages) that the SUBMIT's
 * flags ask for, into @buf (CTL_XATTRS_MAX bytes) and *@len (0: none);
 * those it cannot read or carry are said, counted in attrs_lost (exit 23),
 * and the entry sent without them. */
void sendcmd_attrs_read(struct sendcmd *sc, int fd, const char *path, uint8_t *buf, uint16_t *len);
/* Several FILEs: checked and counted into sc->submit. -1 or an exit code. */
int sendcmd_count(struct sendcmd *sc);
/* Several FILEs: the others handed over on @sock after the SUBMIT. -1 or an exit code. */
int sendcmd_feed(struct sendcmd *sc, int sock);
/* -r: DEST and the tree counted into sc->submit. -1 or an exit code. */
int sendcmd_tree_prepare(struct sendcmd *sc);
/* -r: every entry handed over on @sock after the SUBMIT. -1 or an exit code. */
int sendcmd_feed_tree(struct sendcmd *sc, int sock);

/*
 * Several peers (a NODELIST): @one(@sc) for each of @hl's, each in a child
 * process with sc->peer_arg its peer, at most sc->parallel at once; their
 * output shown line by line, each line naming its peer (--json: gathered
 * into one object), then a summary line. Returns the exit code: the
 * peers' own when they all have the same, else XFERCTL_EXIT_PARTIAL when
 * some were sent to, else XFERCTL_EXIT_FAILED.
 */
int sendcmd_fanout(struct sendcmd *sc, const struct hostlist *hl, int (*one)(struct sendcmd *sc));

/* Whether a send to several peers goes as a relay chain: one regular
 * FILE, or a tree (-r), with no sync option (each peer's copy differs),
 * and no --parallel asking for the star. */
bool sendcmd_chain_fits(const struct sendcmd *sc);
/*
 * Several peers as a relay chain (ctl.h): @one(@sc), one job, to the
 * first of @hl's peers, which relays the file (or tree) to the next,
 * and so on; the others resolved by @resolve, as @one resolves its peer
 * (a host, no port, through peer_names into numeric text in @num; -1 or
 * an exit code, said). A usage error beyond CTL_NODES_MAX peers. Returns
 * the exit code, as sendcmd_fanout() would.
 */
int sendcmd_chain(struct sendcmd *sc, const struct hostlist *hl, int (*one)(struct sendcmd *sc),
                  int (*resolve)(struct sendcmd *sc, const char *host, char *num, size_t numlen));
/* A chain's finished job (sc->job): a line per peer, or with --json the
 * star's object, then the summary line (and, -r --continue-on-error,
 * what was left out). Returns the exit code. */
int sendcmd_chain_report(const struct sendcmd *sc);
