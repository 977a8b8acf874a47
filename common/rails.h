#pragma once

/*
 * Rails: a node's RDMA devices, each with an address of its own
 * (rdmaxferd.conf(5), listen), and how a transfer's lanes are spread over
 * them (wire.h, Rails). Pure: the daemon's transport layer says which of
 * its rails are up and what their subnets are; this pairs them.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* A node's rails, at most (as many as an ACCEPT names). */
#define RAILS_MAX       4

/* One of this node's rails, as pairing sees it. */
struct rails_local {
        struct sockaddr_storage addr;   /* its address */
        unsigned int prefix;            /* its subnet's prefix length; 0: not known */
        bool up;                        /* device up, port active */
};

/* A lane's way: this node's rail @local to the peer's rail @remote. */
struct rails_pair {
        uint8_t local, remote;
};

/*
 * Pair this node's rails @local with the peer's @remote (an ACCEPT's: the
 * one lane 0 arrived on first). Pair 0 is lane 0's own way, rail @first
 * to remote[0], whatever their subnets (it is connected already). Then
 * each other rail that is up, in order, with the first remote rail in its
 * subnet that no pair has yet. Into @out (RAILS_MAX of them): how many.
 */
unsigned int rails_pair(const struct rails_local *local, unsigned int nlocal, unsigned int first,
                        const struct sockaddr_storage *remote, unsigned int nremote,
                        struct rails_pair *out);

/*
 * Spread @nlanes lanes (1..64) over @npairs pairs (1..RAILS_MAX) in
 * proportion to what each pair delivered, @rate (bytes/s; 0: not measured,
 * counted as the mean of those that were, or all alike when none was):
 * every pair gets a lane while there are lanes for all, the rest go by
 * largest remainder. With rates alike (or none), lane k goes over pair
 * k mod @npairs. Lane 0 is always on pair 0 (its way is lane 0's). Into
 * @lane_pair[@nlanes].
 */
void rails_assign(const uint64_t *rate, unsigned int npairs, unsigned int nlanes, uint8_t *lane_pair);

/* Whether @a and @b, of one family, agree in their first @prefix bits. */
bool rails_same_subnet(const struct sockaddr *a, const struct sockaddr *b, unsigned int prefix);

/* The prefix length of a netmask (its leading one bits). */
unsigned int rails_prefix_of(const struct sockaddr *mask);
