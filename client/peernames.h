#pragma once

/*
 * Which peer_names pattern (common/peername.h) a command maps its peers'
 * names through, and the mapping with its messages. The first that is
 * set wins: the command's --peer-names, $RDMAXFER_PEER_NAMES (when not
 * empty), the local rdmaxferd's peer_names (rdmaxferd.conf(5)), asked
 * over the control socket (SETTINGS) only when a name that is not an
 * address first needs it, so that numeric peers never need the daemon.
 */

#include <stdbool.h>
#include <stddef.h>

#include "peername.h"

#define PEERNAMES_ENV           "RDMAXFER_PEER_NAMES"

struct hostlist;

/* Where the pattern came from. */
enum peernames_source {
        PEERNAMES_UNKNOWN = 0,          /* not yet asked */
        PEERNAMES_OPTION,
        PEERNAMES_ENV_VAR,
        PEERNAMES_DAEMON,
        PEERNAMES_NONE,                 /* the daemon could not be asked (lenient): names as given */
};

/* Embedded in a command's state: copying it copies what it knows. */
struct peernames {
        const char *socket_path;
        const char *prefix;             /* of its messages: "" or "hosts: " */
        /* hosts: a daemon that cannot be asked leaves names as given (said
         * once); send needs the daemon anyway, so there it is an error. */
        bool lenient;
        enum peernames_source source;
        char pattern[PEERNAME_PATTERN_MAX + 1];
};

/*
 * Start @pn, its messages starting with @prefix: @opt is --peer-names
 * (NULL: not given), checked now, as is $RDMAXFER_PEER_NAMES. -1, or
 * XFERCTL_EXIT_USAGE after saying what is wrong with the pattern.
 */
int peernames_init(struct peernames *pn, const char *prefix, const char *socket_path, const char *opt,
                   bool lenient);

/* Whether some host of @hl (each a PEER[:PORT]) is a name, not an address:
 * one that peer_names may map. */
bool peernames_wanted(const struct hostlist *hl);

/* Ask the daemon now unless the pattern is known. -1, or an exit code (said). */
int peernames_load(struct peernames *pn);

/*
 * @host (a PEER's, without its port) through the pattern into @out
 * (asking the daemon for it first when needed), and whether that changed
 * it in *@mapped. -1, or an exit code (said, naming @host).
 */
int peernames_map(struct peernames *pn, const char *host, char *out, size_t outlen, bool *mapped);

/*
 * "cannot resolve peer 'node01-ib' (from node01 by --peer-names %h-ib):
 * WHY", or without the part in brackets when @mapped is false.
 */
void peernames_say_unresolved(const struct peernames *pn, const char *host, const char *name,
                              bool mapped, const char *why);
