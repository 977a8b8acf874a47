/*
 * A relay chain's account (jobs.h): the bytes each node has while it
 * runs, and once its peer published, which nodes did not and why the
 * first of those did not.
 */

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "jobs-int.h"
#include "log.h"

/* A SUBMIT's route is what engine_send_req.route and a ROUTE carry
 * (wire.h's WIRE_ROUTE_MAX is ENGINE_ROUTE_MAX, 511, once the engine has
 * caught up; the engine refuses what its wire cannot carry). */
static_assert(JOB_ROUTE_HOPS_MAX == ENGINE_ROUTE_MAX, "a chain's progress has a count per hop");
static_assert(WIRE_ROUTE_MAX <= JOB_ROUTE_HOPS_MAX, "every route a ROUTE carries can be submitted");
static_assert(JOB_NODES_MAX == 1 + ENGINE_ROUTE_MAX, "engine_result.hop_missing bit k is node k + 2");
static_assert(JOB_NODES_MAX <= NODESET_MAX, "a chain's nodes fit a nodeset");

/* A chain's every node, as nodes_missing has them; none for no chain. */
struct nodeset job_nodes_all(const struct job *job)
{
        return nodeset_first_n(job->nodes);
}

/* What a chain job allocates (jobs_spec_apply), on a job of any kind. */
void job_chain_free(struct job_entry *e)
{
        free(e->job.route);
        free(e->job.node_bytes);
        free(e->route);
        e->job.route = NULL;
        e->job.node_bytes = NULL;
        e->route = NULL;
}

/*
 * A running chain's bytes per node: node 1's are the session's own, each
 * later node's what the relays last said of its hop (engine.h): bytes
 * of the whole job, a tree's every entry as a file's. None is shown past
 * the job's size, whatever a relay claims.
 */
void job_nodes_refresh(struct job *job, const struct engine_progress *p)
{
        unsigned int hops = MIN(p->hops, (unsigned int)ENGINE_ROUTE_MAX);

        job->node_bytes[0] = MIN(job->bytes_done, job->size);
        for (unsigned int k = 0; k + 1u < job->nodes; k++)
                job->node_bytes[k + 1] = k < hops ? MIN(p->hop_bytes[k], job->size) : 0;
}

/*
 * A chain whose peer published: which of the route's hops did not
 * (engine.h; a relay goes around a hop that fails, so any may have), and
 * why the first of those did not. Where the engine's numbers do not add
 * up, a hop is missing if anything it says makes it so: its bit, being
 * hop_failed, or lying past the count, in route order, of those the bits
 * leave published (the first of those then failed unheard of).
 */
void job_chain_done(struct job *job, const struct engine_result *r)
{
        struct job_entry *e = job_entry(job);
        struct nodeset missing = { { 0 } };
        const char *why = r->hop_text ? r->hop_text : "";
        unsigned int status = r->hop_status, failed, left;

        /* Bits past the route are none of its hops: left out. */
        for (unsigned int k = 0; k < e->route_hops; k++)
                if (nodeset_has(&r->hop_missing, k))
                        nodeset_add(&missing, k);
        if (r->hop_failed > 0 && r->hop_failed <= e->route_hops)
                nodeset_add(&missing, r->hop_failed - 1);
        left = r->hops;
        for (unsigned int k = 0; k < e->route_hops; k++) {
                if (nodeset_has(&missing, k))
                        continue;
                if (left > 0)
                        left--;
                else
                        nodeset_add(&missing, k);
        }
        failed = (unsigned int)(nodeset_first(&missing) + 1);
        if (!nodeset_equal(&missing, &r->hop_missing) || failed != r->hop_failed ||
            r->hops + nodeset_count(&missing) != e->route_hops)
                log_warning("job %" PRIu64 ": the engine's account of the chain does not add up (%" PRIu32
                            " of %u hops published, %u missing, hop_failed %" PRIu32 "): taken as %u "
                            "missing, hop_failed %u", job->id, r->hops, e->route_hops,
                            nodeset_count(&r->hop_missing), r->hop_failed, nodeset_count(&missing), failed);
        if (failed && failed != r->hop_failed) {
                status = WIRE_E_INTERNAL;
                why = "no word from it";
        }
        /* The engine logged how far it got (RDMAXFER_NODES_OK): this is for the client.
         * A node that published has every byte; the others keep what
         * the last refresh saw (the engine's result has no bytes per hop).
         * Route hop k is node k + 2: bit k + 1 of nodes_missing, the
         * peer's bit 0 clear (it published: the job is DONE). */
        job->nodes_missing = (struct nodeset){ { 0 } };
        for (unsigned int k = 0; k < e->route_hops; k++)
                if (nodeset_has(&missing, k))
                        nodeset_add(&job->nodes_missing, k + 1);
        for (unsigned int k = 0; k < job->nodes; k++)
                if (!nodeset_has(&job->nodes_missing, k))
                        job->node_bytes[k] = job->size;
        job->nodes_ok = (uint16_t)(job->nodes - nodeset_count(&job->nodes_missing));
        job->node_failed = 0;
        job->node_status = WIRE_OK;
        job->node_peer[0] = job->node_text[0] = '\0';
        if (!failed)
                return;
        job->node_failed = (uint16_t)(1 + failed);
        job->node_status = (uint16_t)(status ? status : WIRE_E_INTERNAL);
        wire_hop_str(&e->route[failed - 1], job->node_peer, sizeof(job->node_peer));
        snprintf(job->node_text, sizeof(job->node_text), "%s", why);
}

/* A chain's route for the journal: whole while short, else its ends
 * (512 nodes' addresses would make a 28 KiB line; `xferctl status`
 * lists them). */
void job_log_chain(const struct job *job)
{
        const char *first_end = strchr(job->route, ','), *last = strrchr(job->route, ',');

        if (job->nodes <= 8 || !first_end || !last)
                log_info("job %" PRIu64 ": a chain of %u nodes: %s relays it to %s", job->id,
                         (unsigned int)job->nodes, job->peer, job->route);
        else
                log_info("job %" PRIu64 ": a chain of %u nodes: %s relays it to %.*s, and on to %s (%u hops "
                         "between)", job->id, (unsigned int)job->nodes, job->peer, (int)(first_end - job->route),
                         job->route, last + 1, (unsigned int)job->nodes - 3);
}

