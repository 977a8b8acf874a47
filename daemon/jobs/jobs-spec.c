/*
 * What a job may be asked to do (jobs.h, jobs_spec_check()), checked in
 * one place, and the peer and chain it names, resolved once: every
 * address is numeric, so nothing is asked of the network, and a job that
 * was taken can always start.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bucket.h"
#include "jobs-int.h"
#include "name.h"

/* A node of a chain, where it is in it (0: the peer). */
struct job_node {
        struct wire_hop hop;
        unsigned int index;
};

/* @host:@port as a socket address: 0, or -EINVAL when @host is not a
 * numeric IPv4 or IPv6 address. */
static int job_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
        struct sockaddr_in *sin = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

        memset(ss, 0, sizeof(*ss));
        if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
                sin->sin_family = AF_INET;
                sin->sin_port = htons(port);
                *len = sizeof(*sin);
                return 0;
        }
        if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
                sin6->sin6_family = AF_INET6;
                sin6->sin6_port = htons(port);
                *len = sizeof(*sin6);
                return 0;
        }
        return -EINVAL;
}

/* "HOST:PORT", "[IPV6]:PORT" into @buf: its length, or -ENAMETOOLONG. */
static int job_hostport(char *buf, size_t len, const char *host, uint16_t port)
{
        bool v6 = strchr(host, ':');
        int n = snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : n;
}

/* By address and port, then by place in the chain. */
static int job_node_cmp(const void *a, const void *b)
{
        const struct job_node *x = a, *y = b;
        int r = memcmp(x->hop.addr, y->hop.addr, sizeof(x->hop.addr));

        if (r)
                return r;
        if (x->hop.port != y->hop.port)
                return x->hop.port < y->hop.port ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The peer and a chain's nodes into @nodes (1 + route_hops of them), the
 * peer's socket address into @dst too, each numeric, and none twice (it
 * would receive the job while it relays it to itself): the twin named is
 * the first node in chain order that repeats an earlier one. Sorts a
 * copy. 0 or -errno with why.
 */
static int job_nodes_set(const struct jobs *jobs, const struct job_spec *s, struct job_node *nodes,
                         struct sockaddr_storage *dst, socklen_t *dst_len, char *why, size_t whylen)
{
        size_t n = (size_t)s->route_hops + 1;
        _cleanup_(freep) struct job_node *sorted = NULL;
        const struct job_node *twin = NULL;
        struct sockaddr_storage ss;
        socklen_t len;
        char text[INET6_ADDRSTRLEN];

        for (size_t i = 0; i < n; i++) {
                const char *host = i ? s->route[i - 1].host : s->host;
                uint16_t port = i ? s->route[i - 1].port : s->port;

                if (job_sockaddr(host, port ? port : jobs->cfg.port, i ? &ss : dst, i ? &len : dst_len) < 0 ||
                    wire_hop_set(&nodes[i].hop, (const struct sockaddr *)(i ? &ss : dst)) < 0) {
                        snprintf(why, whylen, "not a numeric IPv4 or IPv6 address%s: %s", i ? " in the chain" : "",
                                 host);
                        return -EINVAL;
                }
                nodes[i].index = (unsigned int)i;
        }
        if (n == 1)
                return 0;
        sorted = malloc(n * sizeof(*sorted));
        if (!sorted) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        memcpy(sorted, nodes, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), job_node_cmp);
        for (size_t i = 1; i < n; i++)
                if (memcmp(sorted[i - 1].hop.addr, sorted[i].hop.addr, sizeof(sorted[i].hop.addr)) == 0 &&
                    sorted[i - 1].hop.port == sorted[i].hop.port && (!twin || sorted[i].index < twin->index))
                        twin = &sorted[i];
        if (!twin)
                return 0;
        if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)twin->hop.addr))
                inet_ntop(AF_INET, twin->hop.addr + 12, text, sizeof(text));
        else
                inet_ntop(AF_INET6, twin->hop.addr, text, sizeof(text));
        snprintf(why, whylen, "the chain names a node twice: %s, port %u (node %u)", text,
                 (unsigned int)twin->hop.port, twin->index + 1);
        return -EINVAL;
}

/* What the job is, but for its peer and chain. */
static int job_shape_check(const struct jobs *jobs, const struct job_spec *s, char *why, size_t whylen)
{
        uint64_t floor = bucket_rate_min(jobs->cfg.slot_size, jobs->cfg.peer_timeout);
        enum name_verdict v;

        if (s->tree && s->files < 2) {
                snprintf(why, whylen, "a tree is DEST and its entries: %" PRIu32 " files", s->files);
                return -EINVAL;
        }
        /* A tree's DEST is a path the receiver checks is beneath its incoming directory. */
        v = s->tree ? name_path_check(s->name, strlen(s->name), NULL) : name_check(s->name, strlen(s->name));
        if (v != NAME_OK) {
                snprintf(why, whylen, "bad %s: %s", s->tree ? "destination" : "name", name_verdict_str(v));
                return -EINVAL;
        }
        if ((unsigned int)s->sync > JOB_SYNC_DIGEST) {
                snprintf(why, whylen, "unknown sync %u", (unsigned int)s->sync);
                return -EINVAL;
        }
        /* A pulled tree is mirrored here by the peer's send back (wire.h, Pulls). */
        if (s->delete && ((!s->tree && !(s->land && s->land->direction == WIRE_LAND_PULL &&
                                         (s->land->flags & WIRE_LAND_TREE))) ||
                          s->sync == JOB_SYNC_NONE)) {
                snprintf(why, whylen, "deleting is for a tree sent with --sync or --skip-existing");
                return -EINVAL;
        }
        if (s->rules && (!s->delete || !s->tree || s->land || !s->rules[0] || strlen(s->rules) > WIRE_RULES_MAX)) {
                snprintf(why, whylen, "rules (--exclude, --include) are kept on the peer only by a tree that "
                         "deletes into its drop box, and at most %d bytes of them", WIRE_RULES_MAX);
                return -EINVAL;
        }
        if (s->own_retries && s->retries > JOB_RETRIES_MAX) {
                snprintf(why, whylen, "retries: %u is more than %u", s->retries, JOB_RETRIES_MAX);
                return -EINVAL;
        }
        /* Slower, and the receiver would hear nothing for longer than its
         * peer_timeout between two chunks (if it is set like ours). */
        if (s->bwlimit > 0 && s->bwlimit < floor) {
                snprintf(why, whylen, "bwlimit %" PRIu64 " bytes/s is too low: one chunk (up to %u bytes) must go "
                         "within peer_timeout (%u s); at least %" PRIu64, s->bwlimit, jobs->cfg.slot_size,
                         jobs->cfg.peer_timeout, floor);
                return -EINVAL;
        }
        return 0;
}

/* A chain's route text: its hops as the spec names them, each with its
 * port (@port where it names none), comma separated, exactly as long as
 * it needs. */
static char *job_route_text(const struct job_spec *s, uint16_t port)
{
        char one[JOB_PEER_MAX + 1];
        size_t len = 0, at = 0;
        char *text;

        /* Numeric (job_nodes_set()): each fits one. */
        for (unsigned int k = 0; k < s->route_hops; k++)
                len += (size_t)job_hostport(one, sizeof(one), s->route[k].host,
                                            s->route[k].port ? s->route[k].port : port) + 1;
        text = malloc(len);
        if (!text)
                return NULL;
        for (unsigned int k = 0; k < s->route_hops; k++) {
                at += (size_t)job_hostport(text + at, len - at, s->route[k].host,
                                           s->route[k].port ? s->route[k].port : port);
                text[at++] = ',';
        }
        text[len - 1] = '\0';
        return text;
}

int jobs_spec_apply(const struct jobs *jobs, const struct job_spec *s, struct job_entry *e, char *why,
                    size_t whylen)
{
        _cleanup_(freep) struct job_node *nodes = NULL;
        struct sockaddr_storage dst;
        socklen_t dst_len = 0;
        struct job *job;
        int r;

        why[0] = '\0';
        if (s->route_hops > 0 && (s->sync != JOB_SYNC_NONE || s->delete || s->dry_run ||
                                  (!s->tree && s->files > 1))) {
                snprintf(why, whylen, "a chain carries one regular file or one tree (-r), without "
                         "--skip-existing, --sync, --delete or --dry-run");
                return -EINVAL;
        }
        if (s->land && ((s->route_hops > 0 && (s->tree || s->files > 1)) ||
                        (s->sync != JOB_SYNC_NONE && s->route_hops > 0))) {
                snprintf(why, whylen, "files that land as their user (PEER:/PATH) go down a chain only "
                         "as one regular file, without --skip-existing, --sync or --delete");
                return -EINVAL;
        }
        if (s->route_hops > JOB_ROUTE_HOPS_MAX) {
                snprintf(why, whylen, "a chain has at most %u nodes (the peer and %u more)", JOB_NODES_MAX,
                         JOB_ROUTE_HOPS_MAX);
                return -E2BIG;
        }
        nodes = calloc((size_t)s->route_hops + 1, sizeof(*nodes));
        if (!nodes) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        r = job_nodes_set(jobs, s, nodes, &dst, &dst_len, why, whylen);
        if (r < 0)
                return r;
        r = job_shape_check(jobs, s, why, whylen);
        if (r < 0 || !e)
                return r;

        job = &e->job;
        snprintf(job->host, sizeof(job->host), "%s", s->host);
        job->port = s->port ? s->port : jobs->cfg.port;
        if (job_hostport(job->peer, sizeof(job->peer), job->host, job->port) < 0) {
                snprintf(why, whylen, "not a numeric IPv4 or IPv6 address: %s", s->host);
                return -EINVAL;
        }
        e->dst = dst;
        e->dst_len = dst_len;
        if (s->rules && !(e->rules = strdup(s->rules))) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        if (s->land) {
                e->land = malloc(sizeof(*e->land));
                if (!e->land) {
                        snprintf(why, whylen, "out of memory");
                        return -ENOMEM;
                }
                *e->land = *s->land;
                /* A get's file comes back to where this daemon listens; a
                 * copy's goes to the node it names, at its port. */
                if (e->land->direction == WIRE_LAND_PULL) {
                        if (!e->land->back_port)
                                e->land->back_port = jobs->cfg.port;
                        job->pull = true;
                        job->back_path = e->land->back_path;
                }
                job->land_path = e->land->path;
        }
        if (!s->route_hops)
                return 0;
        /* A chain's route, bytes per node and hops, as long as its own. */
        job->route = job_route_text(s, jobs->cfg.port);
        job->node_bytes = calloc((size_t)s->route_hops + 1, sizeof(job->node_bytes[0]));
        e->route = calloc(s->route_hops, sizeof(e->route[0]));
        if (!job->route || !job->node_bytes || !e->route) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        for (unsigned int k = 0; k < s->route_hops; k++)
                e->route[k] = nodes[k + 1].hop;
        e->route_hops = s->route_hops;
        job->nodes = (uint16_t)(1 + s->route_hops);
        job->nodes_missing = job_nodes_all(job);
        return 0;
}

int jobs_spec_check(const struct jobs *jobs, const struct job_spec *spec, char *why, size_t whylen)
{
        return jobs_spec_apply(jobs, spec, NULL, why, whylen);
}
