#pragma once

/*
 * The PEER[:PORT] argument of `xferctl send`: "host", "host:port",
 * "[v6addr]", "[v6addr]:port", or a bare IPv6 address (more than one ':'
 * and no brackets: no port). The control protocol carries a numeric
 * address, so names are resolved here, as the user who typed them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hostlist;

/*
 * Split @spec into @host and *@port (0 when absent: the daemon's default).
 * Pure. Returns 0, or -EINVAL with a reason in @err ("port must be 1..65535").
 */
int peer_split(const char *spec, char *host, size_t hostlen, uint16_t *port,
               char *err, size_t errlen);

/*
 * Resolve @host (a name, or an IPv4/IPv6 literal) to numeric text in @num,
 * taking getaddrinfo's first answer. Returns 0, or -EHOSTUNREACH with
 * getaddrinfo's reason in @err, -ENAMETOOLONG when the numeric text does
 * not fit.
 */
int peer_resolve(const char *host, char *num, size_t numlen, char *err, size_t errlen);

/*
 * The PEER argument of `xferctl send` as a list of peers, each a
 * PEER[:PORT] for peer_split(): one peer, or a Slurm hostlist
 * (common/hostlist.h: "node[01-16,20]", "a,b:7471", "a b"). An argument
 * that starts with '[' is one IPv6 peer. "node[01-04]:7471" or
 * "node[01-04]-ib:7471", a port at the end of the host with the list's
 * last group, gives every host that port (and then no host may name its
 * own). Pure. 0, or -EINVAL, -E2BIG, -ENAMETOOLONG or -ENOMEM with
 * why in @err.
 */
int peer_list(const char *arg, struct hostlist **out, char *err, size_t errlen);

/*
 * Whether @name, a host of a NODELIST (PEER[:PORT]), is the host @self
 * (a node's name: $SLURMD_NODENAME, its host name): the same name, or
 * the one's short name (up to its first '.') the other whole, as
 * node01 and node01.cluster.example; an IPv4 address only as itself. Pure.
 */
bool peer_is_self(const char *name, const char *self);

/*
 * Move the first host of @hl that is @self (peer_is_self) to the front,
 * the others keeping their order. Returns its index before, or -1 when
 * none is. Pure.
 */
long peer_list_self_first(struct hostlist *hl, const char *self);
