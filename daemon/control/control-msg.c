/* The control protocol to and from the job table's model (control-msg.h). */

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control-msg.h"
#include "landmsg.h"
#include "macro.h"
#include "stats.h"

/* What a JOB carries of a job fits as it is. */
static_assert(JOB_HOST_MAX == CTL_HOST_MAX && JOB_NAME_MAX == CTL_NAME_MAX && JOB_TEXT_MAX == CTL_TEXT_MAX,
              "a job's texts are a JOB's");
static_assert(sizeof(((struct job *)0)->peer) == sizeof(((struct ctl_job *)0)->peer) &&
              sizeof(((struct job *)0)->node_peer) == sizeof(((struct ctl_job *)0)->node_peer),
              "a job's addresses are a JOB's");
static_assert(JOB_NODES_MAX == CTL_NODES_MAX && JOB_ROUTE_HOPS_MAX == CTL_ROUTE_HOPS_MAX,
              "a chain is as long in a job as in a SUBMIT and a JOB");
static_assert(sizeof(((struct ctl_hop *)0)->host) <= sizeof(((struct job_hop *)0)->host),
              "every hop a route names fits a job's");
static_assert(JOB_RETRIES_MAX == CTL_RETRIES_MAX, "a SUBMIT's retries are a job's");

/* No default: the compiler says when a state of the jobs' is not mapped. */
enum ctl_job_state control_job_state(enum job_state state)
{
        switch (state) {
        case JOB_QUEUED:
                return CTL_JOB_QUEUED;
        case JOB_CONNECTING:
                return CTL_JOB_CONNECTING;
        case JOB_SENDING:
                return CTL_JOB_SENDING;
        case JOB_VERIFYING:
                return CTL_JOB_VERIFYING;
        case JOB_DONE:
                return CTL_JOB_DONE;
        case JOB_FAILED:
                return CTL_JOB_FAILED;
        case JOB_CANCELLED:
                return CTL_JOB_CANCELLED;
        case JOB_RETRYING:
                return CTL_JOB_RETRYING;
        case _JOB_STATE_MAX:
                break;
        }
        return _CTL_JOB_STATE_MAX;      /* no state: ctl_job_state_str() says "unknown" */
}

void control_job_msg(struct ctl_msg *m, const struct job *job)
{
        memset(m, 0, sizeof(*m));
        m->type = CTL_JOB;
        m->job.id = job->id;
        m->job.state = (uint8_t)control_job_state(job->state);
        m->job.status = job->status;
        m->job.bytes_done = job->bytes_done;
        m->job.bytes_total = job->size;
        m->job.usec = job->usec;
        m->job.rate = job->rate;
        m->job.bwlimit = job->bwlimit;
        m->job.attempt = (uint16_t)MIN(job->attempt, UINT16_MAX);
        m->job.attempts = (uint16_t)MIN(job_attempts(job), UINT16_MAX);
        m->job.retry_usec = job_retry_in(job);
        m->job.created_us = job->created_us;
        m->job.started_us = job->started_us;
        m->job.ended_us = job->ended_us;
        m->job.files_done = job->files_done;
        m->job.files_total = job->files;
        m->job.files_skipped = job->files_skipped;
        m->job.deleted = (uint32_t)MIN(job->deleted, (uint64_t)UINT32_MAX);
        snprintf(m->job.peer, sizeof(m->job.peer), "%s", job->peer);
        snprintf(m->job.name, sizeof(m->job.name), "%s", job->name);
        snprintf(m->job.text, sizeof(m->job.text), "%s", job->text);
        m->job.nodes = job->nodes;
        m->job.nodes_ok = job->nodes_ok;
        m->job.node_failed = job->node_failed;
        m->job.node_status = job->node_status;
        m->job.nodes_missing = job->nodes_missing;
        /* A job writes its route as a SUBMIT's, every port given. */
        snprintf(m->job.route, sizeof(m->job.route), "%s", job->route ? job->route : "");
        snprintf(m->job.node_peer, sizeof(m->job.node_peer), "%s", job->node_peer);
        snprintf(m->job.rails, sizeof(m->job.rails), "%.*s", (int)CTL_RAILS_STR_MAX, job->rails);
        /* Where its files land as its user (the drop box: nothing). */
        if (job->land_path) {
                m->job.land = job->pull ? CTL_JOB_LAND_PULL : CTL_JOB_LAND_PUSH;
                snprintf(m->job.land_path, sizeof(m->job.land_path), "%s", job->land_path);
                snprintf(m->job.back_path, sizeof(m->job.back_path), "%s",
                         job->pull && job->back_path ? job->back_path : "");
        }
        snprintf(m->job.node_text, sizeof(m->job.node_text), "%s", job->node_text);
        if (job->node_bytes)
                memcpy(m->job.node_bytes, job->node_bytes, job->nodes * sizeof(job->node_bytes[0]));
}

static enum job_sync control_sync(uint16_t flags)
{
        if (flags & CTL_SUBMIT_SKIP_EXISTING)
                return JOB_SYNC_SKIP_EXISTING;
        if (flags & CTL_SUBMIT_SYNC_SIZE)
                return JOB_SYNC_SIZE;
        if (flags & CTL_SUBMIT_SYNC_DIGEST)
                return JOB_SYNC_DIGEST;
        return JOB_SYNC_NONE;
}

/*
 * A SUBMIT's landing as its user, for the peer's lander (wire.h, Landing
 * as the user): the credential and the path xferctl bound it to, and the
 * peer's address, which xferctl bound it to too (landmsg_binding): the
 * lander there checks all of it; here, only the form.
 */
static int control_land(const struct ctl_submit *s, struct wire_landing *l, char *why, size_t whylen)
{
        static const uint8_t zero[CTL_LAND_TOKEN_SIZE];
        bool pull = s->flags & CTL_SUBMIT_PULL;
        uint8_t dir = (uint8_t)(((s->flags & CTL_SUBMIT_LAND_DIR) || (s->files > 1 && !(s->flags & CTL_SUBMIT_TREE))
                                         ? WIRE_LAND_DIR
                                         : 0) |
                                ((s->flags & CTL_SUBMIT_LAND_REPLACE) ? WIRE_LAND_REPLACE : 0));
        struct wire_landing *form;
        int r;

        memset(l, 0, sizeof(*l));
        if (s->land_path[0] != '/' || !s->land_cred[0] || memcmp(s->land_token, zero, sizeof(zero)) == 0) {
                snprintf(why, whylen, "landing as the user needs an absolute path, a MUNGE credential and a token");
                return -EINVAL;
        }
        if (!pull && (s->back_host[0] || s->back_path[0] || s->back_cred[0] || s->back_port)) {
                snprintf(why, whylen, "a way back (back_host, back_port, back_path, back_cred) is a pull's only");
                return -EINVAL;
        }
        l->direction = pull ? WIRE_LAND_PULL : WIRE_LAND_PUSH;
        /* Several files go into PATH; one file or one tree may be PATH
         * itself. A pull's are its way back's. */
        l->flags = pull ? ((s->flags & CTL_SUBMIT_PULL_TREE) ? WIRE_LAND_TREE : 0) : dir;
        /* -X, -A (wire.h, Attributes): a push's first file's or DEST's
         * ride in the landing; a pull asks the peer to send them back. */
        if (s->flags & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS)) {
                l->flags |= (uint8_t)(((s->flags & CTL_SUBMIT_XATTRS) ? WIRE_LAND_XATTRS : 0) |
                                      ((s->flags & CTL_SUBMIT_ACLS) ? WIRE_LAND_ACLS : 0));
                l->xattrs_len = pull ? 0 : s->xattrs_len;
                memcpy(l->xattrs, s->xattrs, l->xattrs_len);
        }
        l->naddrs = 1;
        if (landmsg_addr_parse(s->host, l->addrs[0]) < 0) {
                snprintf(why, whylen, "not a numeric IPv4 or IPv6 address: %s", s->host);
                return -EINVAL;
        }
        /* A chain's every node, in order after the peer, as xferctl bound
         * them (one regular file: jobs_spec_check). */
        if (!pull) {
                struct ctl_route_iter it = CTL_ROUTE_ITER(s->route);
                struct ctl_hop hop;

                while (ctl_route_next(&it, &hop) > 0) {
                        if (l->naddrs >= WIRE_LAND_ADDRS_MAX || landmsg_addr_parse(hop.host, l->addrs[l->naddrs]) < 0) {
                                snprintf(why, whylen, "a chain's node is not a numeric address: %s", hop.host);
                                return -EINVAL;
                        }
                        l->naddrs++;
                }
        }
        memcpy(l->token, s->land_token, sizeof(l->token));
        snprintf(l->cred, sizeof(l->cred), "%s", s->land_cred);
        snprintf(l->path, sizeof(l->path), "%s", s->land_path);
        if (pull) {
                /* The file comes back to this node, as the peer sees it: the
                 * credential names both (wire.h, Pulls). */
                if (s->back_path[0] != '/' || !s->back_cred[0] ||
                    landmsg_addr_parse(s->back_host, l->back_addr) < 0) {
                        snprintf(why, whylen, "a pull needs this node's numeric address, an absolute path "
                                 "and a MUNGE credential to land it");
                        return -EINVAL;
                }
                memcpy(l->addrs[1], l->back_addr, sizeof(l->back_addr));
                l->naddrs = 2;
                l->back_flags = dir;
                l->back_port = s->back_port;
                /* --bwlimit: the peer's send of the file, there being none here. */
                l->back_bwlimit = s->bwlimit;
                snprintf(l->back_cred, sizeof(l->back_cred), "%s", s->back_cred);
                snprintf(l->back_path, sizeof(l->back_path), "%s", s->back_path);
        }
        /* What the wire carries: a credential of printable ASCII, say. A
         * get's port (0) is the job table's to fill: where this daemon listens. */
        form = malloc(sizeof(*form));
        if (!form) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        *form = *l;
        if (pull && !form->back_port)
                form->back_port = 1;
        r = wire_land_encode(NULL, 0, form);
        free(form);
        if (r == -EINVAL) {
                snprintf(why, whylen, "the landing's credential, path or attributes are malformed");
                return -EINVAL;
        }
        return 0;
}

int control_spec_new(const struct ctl_submit *s, uid_t uid, struct control_spec **out, char *why, size_t whylen)
{
        _cleanup_(freep) struct control_spec *c = NULL;
        struct ctl_route_iter it = CTL_ROUTE_ITER(s->route);
        struct ctl_hop hop;
        int n;

        if (s->flags & ~_CTL_SUBMIT_FLAGS) {
                snprintf(why, whylen, "unknown submit flags 0x%x", (unsigned int)s->flags);
                return -EINVAL;
        }
        if ((s->flags & (CTL_SUBMIT_LAND_DIR | CTL_SUBMIT_LAND_REPLACE | CTL_SUBMIT_PULL)) &&
            !(s->flags & CTL_SUBMIT_LAND)) {
                snprintf(why, whylen, "submit flags LAND_DIR, LAND_REPLACE or PULL without LAND");
                return -EINVAL;
        }
        if ((s->flags & CTL_SUBMIT_PULL_TREE) && !(s->flags & CTL_SUBMIT_PULL)) {
                snprintf(why, whylen, "submit flag PULL_TREE without PULL");
                return -EINVAL;
        }
        /* A pull asks for one file or tree, as it is, kept up to date
         * here or not, a tree mirrored (wire.h, Pulls). */
        if ((s->flags & CTL_SUBMIT_PULL) &&
            ((s->flags & (CTL_SUBMIT_TREE | CTL_SUBMIT_DRY_RUN)) || s->files > 1 || s->route[0] ||
             ((s->flags & CTL_SUBMIT_DELETE) &&
              (!(s->flags & CTL_SUBMIT_PULL_TREE) || !(s->flags & CTL_SUBMIT_SYNC_MASK))))) {
                snprintf(why, whylen, "a pull is of one file or tree, not dry-run or along a chain, deleting only "
                         "for a tree that syncs");
                return -EINVAL;
        }
        /* Attributes go with files that land as the user, straight to
         * the peer (wire.h, Attributes). */
        if ((s->flags & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS)) &&
            (!(s->flags & CTL_SUBMIT_LAND) || s->route[0] || ((s->flags & CTL_SUBMIT_PULL) && s->xattrs_len))) {
                snprintf(why, whylen, "attributes (-X, -A) go with files that land as the user, not down a "
                         "chain");
                return -EINVAL;
        }
        if (__builtin_popcount(s->flags & CTL_SUBMIT_SYNC_MASK) > 1) {
                snprintf(why, whylen, "one way of sync at most: submit flags 0x%x", (unsigned int)s->flags);
                return -EINVAL;
        }
        if ((s->flags & CTL_SUBMIT_RULES) && (s->flags & CTL_SUBMIT_LAND)) {
                snprintf(why, whylen, "rules kept on the peer (--delete with --exclude) are the drop box's only");
                return -EINVAL;
        }
        if ((s->flags & CTL_SUBMIT_DELETE) && !(s->flags & CTL_SUBMIT_PULL) &&
            (!(s->flags & CTL_SUBMIT_TREE) || !(s->flags & CTL_SUBMIT_SYNC_MASK))) {
                snprintf(why, whylen, "deleting is for a tree sent with --sync or --skip-existing");
                return -EINVAL;
        }
        n = ctl_route_parse(s->route, NULL, CTL_ROUTE_HOPS_MAX);
        if (n == -E2BIG) {
                snprintf(why, whylen, "a chain has at most %u nodes (the peer and %u more)", CTL_NODES_MAX,
                         CTL_ROUTE_HOPS_MAX);
                return n;
        }
        if (n < 0) {
                snprintf(why, whylen, "bad chain route: expected ADDR:PORT or [IPV6]:PORT, comma separated");
                return n;
        }
        c = calloc(1, sizeof(*c) + (size_t)n * sizeof(c->hops[0]));
        if (!c) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        /* Parsed once already: every hop is there. */
        for (int i = 0; i < n && ctl_route_next(&it, &hop) > 0; i++) {
                snprintf(c->hops[i].host, sizeof(c->hops[i].host), "%s", hop.host);
                c->hops[i].port = hop.port;
        }
        c->spec = (struct job_spec){
                .port = s->port,
                .files = s->files,
                .job_bytes = s->job_bytes,
                .tree = s->flags & CTL_SUBMIT_TREE,
                .mode = s->mode,
                .mtime_ns = s->mtime_ns,
                .sync = control_sync(s->flags),
                .delete = s->flags & CTL_SUBMIT_DELETE,
                .dry_run = s->flags & CTL_SUBMIT_DRY_RUN,
                .bwlimit = s->bwlimit,
                .no_sparse = s->flags & (CTL_SUBMIT_NO_SPARSE | CTL_SUBMIT_PULL),
                .own_retries = s->flags & CTL_SUBMIT_RETRIES,
                .retries = s->retries,
                .route = n ? c->hops : NULL,
                .route_hops = (unsigned int)n,
                .uid = uid,
        };
        snprintf(c->spec.host, sizeof(c->spec.host), "%s", s->host);
        snprintf(c->spec.name, sizeof(c->spec.name), "%s", s->name);
        if (s->flags & CTL_SUBMIT_LAND) {
                n = control_land(s, &c->land, why, whylen);
                if (n < 0)
                        return n;
                c->spec.land = &c->land;
        }
        /* --delete with rules: the peer keeps what they leave out. */
        if (s->flags & CTL_SUBMIT_RULES) {
                memcpy(c->rules, s->rules, s->rules_len);
                c->rules[s->rules_len] = '\0';
                c->spec.rules = c->rules;
        }
        *out = TAKE_PTR(c);
        return 0;
}

static_assert(CTL_RULES_MAX == WIRE_RULES_MAX, "a SUBMIT's rules are what the wire carries");

void control_item_msg(struct ctl_msg *m, const struct job *job, uint32_t seq)
{
        static const uint8_t verdicts[] = {
                [JOB_WOULD_CREATE] = CTL_WOULD_CREATE, [JOB_WOULD_REPLACE] = CTL_WOULD_REPLACE,
                [JOB_WOULD_KEEP] = CTL_WOULD_KEEP,     [JOB_WOULD_MERGE] = CTL_WOULD_MERGE,
                [JOB_WOULD_DELETE] = CTL_WOULD_DELETE,
        };
        static const uint8_t kinds[] = {
                [JOB_ITEM_FILE] = CTL_ITEM_FILE, [JOB_ITEM_DIR] = CTL_ITEM_DIR, [JOB_ITEM_LINK] = CTL_ITEM_LINK,
                [JOB_ITEM_HARD] = CTL_ITEM_HARD, [JOB_ITEM_OTHER] = CTL_ITEM_OTHER,
        };
        const struct job_item *i = &job->items[seq];

        memset(m, 0, ctl_msg_size(CTL_ITEM));
        m->type = CTL_ITEM;
        m->item.id = job->id;
        m->item.seq = seq;
        m->item.verdict = verdicts[i->verdict];
        m->item.kind = kinds[i->kind];
        /* The codec holds letters to a replace's (ctl.h). */
        memcpy(m->item.changes, i->verdict == JOB_WOULD_REPLACE ? i->changes : ".....", sizeof(m->item.changes));
        m->item.size = i->size;
        snprintf(m->item.name, sizeof(m->item.name), "%s", i->name);
}

int control_file_spec(const struct ctl_file *f, struct job_file_spec *out)
{
        if ((f->flags & ~_CTL_FILE_FLAGS) || (f->flags & CTL_FILE_DIR && f->flags & CTL_FILE_LINK) ||
            ((f->flags & CTL_FILE_HARD) && !(f->flags & CTL_FILE_LINK)))
                return -EINVAL;
        /* A directory's size says nothing: it is none. */
        *out = (struct job_file_spec){
                .name = f->name,
                .kind = f->flags & CTL_FILE_DIR ? JOB_FILE_DIR :
                        f->flags & CTL_FILE_HARD ? JOB_FILE_HARDLINK :
                        f->flags & CTL_FILE_LINK ? JOB_FILE_LINK : JOB_FILE_REGULAR,
                .size = f->flags & CTL_FILE_DIR ? 0 : f->size,
                .mode = f->mode,
                .mtime_ns = f->mtime_ns,
                .xattrs = (f->flags & CTL_FILE_XATTRS) ? f->xattrs : NULL,
                .xattrs_len = (f->flags & CTL_FILE_XATTRS) ? f->xattrs_len : 0,
        };
        return 0;
}

int control_stats_msg(struct ctl_msg *m, const struct stats_snapshot *s)
{
        static const unsigned int dirs[_STATS_DIR_MAX] = {
                [STATS_DIR_RECV] = CTL_DIR_RECV,
                [STATS_DIR_SEND] = CTL_DIR_SEND,
        };
        int r = 0;

        memset(m, 0, sizeof(*m));
        m->type = CTL_STATS_INFO;
        m->stats.uptime_usec = s->uptime_usec;
        for (unsigned int d = 0; d < _STATS_DIR_MAX; d++) {
                m->stats.dir[dirs[d]].rate = s->dir[d].rate;
                m->stats.dir[dirs[d]].active = s->dir[d].active;
                if (stats_tally_export(&m->stats, dirs[d], &s->dir[d].tally) < 0)
                        r = -E2BIG;
        }
        m->stats.queued = s->queued;
        m->stats.ring_held = s->ring_held;
        m->stats.ring_slots = s->ring_slots;
        m->stats.pool_held = s->pool_held;
        m->stats.pool_slots = s->pool_slots;
        m->stats.nrails = (uint8_t)MIN(s->nrails, (unsigned int)CTL_RAILS_MAX);
        for (unsigned int i = 0; i < m->stats.nrails; i++) {
                struct ctl_stats_rail *rail = &m->stats.rail[i];

                rail->up = s->rail[i].up;
                for (unsigned int d = 0; d < _STATS_DIR_MAX; d++)
                        rail->bytes[dirs[d]] = s->rail[i].wire_bytes[d];
                /* A name the decoder takes: printable, no blank (a device's always is). */
                snprintf(rail->name, sizeof(rail->name), "%s", s->rail[i].name);
                for (char *p = rail->name; *p; p++)
                        if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f)
                                *p = '?';
                if (!rail->name[0])
                        snprintf(rail->name, sizeof(rail->name), "rail%u", i);
        }
        return r;
}
