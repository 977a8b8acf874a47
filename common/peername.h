#pragma once

/*
 * Peer names to fabric names. The names a user has for the nodes (those
 * in $SLURM_JOB_NODELIST) mostly resolve to the management Ethernet; the
 * same node's RDMA address has a name of its own, made from the first by
 * a site's rule ("node01" -> "node01-ib"). A pattern says that rule, and
 * xferctl puts every peer's name through it before resolving it
 * (rdmaxferd.conf(5) peer_names, xferctl(1) --peer-names):
 *
 *   %h  the name as given                  node01.example.org
 *   %s  its short name, up to the first .  node01
 *   %d  the rest, from that . on, or ""    .example.org
 *   %%  a '%'
 *
 * "%h-ib" makes node01-ib, "i%h" inode01, "%s.ib0" node01.ib0, and
 * "%s-ib%d" node01-ib.example.org from node01.example.org (and node01-ib
 * from node01). Other text is a host name's: letters, digits, '-', '.'
 * and '_'. A pattern names the host (%h or %s) at least once. "" and
 * "%h" map every name to itself. A name that is an address (IPv4, or
 * any name with a ':', which only an IPv6 address has) is never mapped.
 */

#include <stdbool.h>
#include <stddef.h>

/* Bytes of a pattern, at most. */
#define PEERNAME_PATTERN_MAX    64
/* Bytes of a mapped name, at most: the longest DNS name in text form
 * (hostlist.h's HOSTLIST_NAME_MAX). */
#define PEERNAME_NAME_MAX       253

/* peername_map()'s expected outcome besides 0: @name was an address, copied as it is. */
enum {
        PEERNAME_ADDRESS = 1,
};

/* Whether @pattern is one peername_map() takes. 0, or -EINVAL with why in
 * @why (which may be NULL with @whylen 0). */
int peername_check(const char *pattern, char *why, size_t whylen);

/* Whether @pattern maps every name to itself ("" or "%h"). */
bool peername_identity(const char *pattern);

/* Whether @name is an address, as getaddrinfo() takes one without asking
 * DNS: IPv4 (inet_aton's forms too: "10.1"), or anything with a ':'. */
bool peername_is_address(const char *name);

/*
 * @name through @pattern into @out (@outlen bytes, NUL included).
 * Returns 0 (mapped; the same name for an identity pattern),
 * PEERNAME_ADDRESS (@name is an address: copied unchanged), -EINVAL (an
 * empty @name, or a pattern peername_check() refuses) or -ENAMETOOLONG
 * (longer than PEERNAME_NAME_MAX, or than @out holds).
 */
int peername_map(const char *pattern, const char *name, char *out, size_t outlen);
