/*
 * Control's translation between the control protocol and the jobs' model
 * (daemon/control/control-msg.c): every job state mapped, to the state of
 * the same name and the same rules; a SUBMIT's and a FILE's wire form
 * (flags, the route's text) into what jobs take, and what is refused
 * there; a job jobs made from a SUBMIT back into a JOB that the codec
 * takes; the daemon's counters into a STATS_INFO. Jobs run on a fake
 * engine (fake-engine.c).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <event2/event.h>

#include "control-msg.h"
#include "ctl.h"
#include "fake-engine.h"
#include "jobs.h"
#include "stats.h"
#include "tap.h"
#include "xattrs.h"

static void test_states(void)
{
        bool named = true, distinct = true, final = true, rules = true;

        for (unsigned int s = 0; s < _JOB_STATE_MAX; s++) {
                enum ctl_job_state c = control_job_state((enum job_state)s);

                if (strcmp(ctl_job_state_str(c), job_state_str((enum job_state)s)) != 0) {
                        diag("%s is %s", job_state_str((enum job_state)s), ctl_job_state_str(c));
                        named = false;
                }
                if (ctl_job_state_final(c) != job_state_final((enum job_state)s))
                        final = false;
                for (unsigned int t = 0; t < _JOB_STATE_MAX; t++) {
                        if (t != s && control_job_state((enum job_state)t) == c)
                                distinct = false;
                        if (ctl_job_transition_ok(c, control_job_state((enum job_state)t)) !=
                            job_state_transition_ok((enum job_state)s, (enum job_state)t)) {
                                diag("%s -> %s", job_state_str((enum job_state)s), job_state_str((enum job_state)t));
                                rules = false;
                        }
                }
        }
        ok(named, "every job state is the protocol's state of the same name");
        ok(distinct, "no two job states are one protocol state");
        ok(final, "the same states are final");
        ok(rules, "the same moves are allowed, every pair of states");
        is_int(_JOB_STATE_MAX, _CTL_JOB_STATE_MAX, "the protocol has no state the jobs lack");
        is_str(ctl_job_state_str(control_job_state(_JOB_STATE_MAX)), "unknown", "no state: unknown");
}

static struct ctl_submit *submit_new(uint16_t flags, const char *route)
{
        struct ctl_submit *s = calloc(1, sizeof(*s));

        if (!s)
                abort();
        s->flags = flags;
        snprintf(s->host, sizeof(s->host), "192.0.2.1");
        snprintf(s->name, sizeof(s->name), "runs/set");
        snprintf(s->route, sizeof(s->route), "%s", route);
        return s;
}

static void test_submit(void)
{
        struct ctl_submit *s = submit_new(CTL_SUBMIT_TREE | CTL_SUBMIT_RETRIES | CTL_SUBMIT_SYNC_SIZE, "");
        struct control_spec *c = NULL;
        char why[CTL_TEXT_MAX + 1];

        s->port = 7471;
        s->files = 3;
        s->job_bytes = 30;
        s->mode = 0755;
        s->mtime_ns = 1234;
        s->bwlimit = 1 << 20;
        s->retries = 4;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), 0, "a SUBMIT is a job");
        ok(!strcmp(c->spec.host, "192.0.2.1") && !strcmp(c->spec.name, "runs/set") && c->spec.port == 7471 &&
           c->spec.files == 3 && c->spec.job_bytes == 30 && c->spec.mode == 0755 && c->spec.mtime_ns == 1234 &&
           c->spec.bwlimit == 1 << 20 && c->spec.uid == 1000, "its peer, name, numbers and submitter");
        ok(c->spec.tree && c->spec.own_retries && c->spec.retries == 4 && c->spec.sync == JOB_SYNC_SIZE &&
           !c->spec.route && c->spec.route_hops == 0, "its flags: a tree, its own retries, sync by size, no chain");
        free(c);

        s->flags = 0;
        c = NULL;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), 0, "no flags");
        ok(!c->spec.tree && !c->spec.own_retries && c->spec.sync == JOB_SYNC_NONE, "a file, the daemon's retries, no sync");
        free(c);
        s->flags = CTL_SUBMIT_SKIP_EXISTING;
        c = NULL;
        ok(control_spec_new(s, 0, &c, why, sizeof(why)) == 0 && c->spec.sync == JOB_SYNC_SKIP_EXISTING,
           "--skip-existing");
        free(c);
        s->flags = CTL_SUBMIT_SYNC_DIGEST;
        c = NULL;
        ok(control_spec_new(s, 0, &c, why, sizeof(why)) == 0 && c->spec.sync == JOB_SYNC_DIGEST, "--sync digest");
        ok(!c->spec.delete, "and no deleting");
        free(c);
        s->flags = CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_DIGEST | CTL_SUBMIT_DELETE;
        c = NULL;
        ok(control_spec_new(s, 0, &c, why, sizeof(why)) == 0 && c->spec.delete && c->spec.tree &&
           c->spec.sync == JOB_SYNC_DIGEST, "-r --sync digest --delete");
        free(c);
        c = NULL;
        s->flags = CTL_SUBMIT_TREE | CTL_SUBMIT_DELETE;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "--delete without a sync is refused");
        ok(strstr(why, "--sync or --skip-existing") != NULL, "saying why: %s", why);
        s->flags = CTL_SUBMIT_SKIP_EXISTING | CTL_SUBMIT_DELETE;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "--delete without a tree is refused");

        c = NULL;
        s->flags = CTL_SUBMIT_SKIP_EXISTING | CTL_SUBMIT_SYNC_SIZE;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "--skip-existing and --sync at once are refused");
        s->flags = CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_SYNC_DIGEST;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "two ways of --sync are refused");
        /* Every bit of the flags has a meaning since version 19. */
        s->flags = CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_DELETE | CTL_SUBMIT_RULES;
        memcpy(s->rules, "- *.o\n+ /keep/\n", 15);
        s->rules_len = 15;
        ok(control_spec_new(s, 0, &c, why, sizeof(why)) == 0 && c->spec.rules &&
           strcmp(c->spec.rules, "- *.o\n+ /keep/\n") == 0, "--delete with rules: the job has them, whole");
        free(c);
        c = NULL;
        s->flags |= CTL_SUBMIT_LAND;
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "rules with a landing are refused");
        ok(strstr(why, "drop box") != NULL, "saying why: %s", why);
        ok(!c, "nothing is made of a refused SUBMIT");
        s->rules_len = 0;
        free(s);

        s = submit_new(0, "192.0.2.2:7471,[fd00::3],192.0.2.4");
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), 0, "a chain's SUBMIT");
        ok(c->spec.route_hops == 3 && c->spec.route == c->hops && !strcmp(c->hops[0].host, "192.0.2.2") &&
           c->hops[0].port == 7471 && !strcmp(c->hops[1].host, "fd00::3") && c->hops[1].port == 0 &&
           !strcmp(c->hops[2].host, "192.0.2.4") && c->hops[2].port == 0,
           "its route's hops, the ports it names (0: the daemon's)");
        free(c);
        c = NULL;
        snprintf(s->route, sizeof(s->route), "192.0.2.2,");
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -EINVAL, "a route with an empty hop is refused");
        is_str(why, "bad chain route: expected ADDR:PORT or [IPV6]:PORT, comma separated", "as a bad route");
        s->route[0] = '\0';
        for (unsigned int i = 0; i <= CTL_ROUTE_HOPS_MAX; i++)
                if (ctl_route_add(s->route, sizeof(s->route), "10.1.1.1", 0) < 0)
                        break;
        strcat(s->route, ",10.1.1.1");
        is_int(control_spec_new(s, 0, &c, why, sizeof(why)), -E2BIG, "a route of 512 hops is refused");
        is_str(why, "a chain has at most 512 nodes (the peer and 511 more)", "saying how many a chain has");
        free(s);

        /* Landing as the user: several files go into PATH; one tree may be PATH itself. */
        s = submit_new(CTL_SUBMIT_LAND, "");
        s->files = 3;
        snprintf(s->land_path, sizeof(s->land_path), "/scratch/alice/in");
        snprintf(s->land_cred, sizeof(s->land_cred), "MUNGE:x:");
        s->land_token[0] = 1;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           (c->spec.land->flags & WIRE_LAND_DIR), "three files to PEER:/PATH: into PATH, a directory (%s)", why);
        free(c);
        c = NULL;
        s->flags |= CTL_SUBMIT_TREE;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           !(c->spec.land->flags & WIRE_LAND_DIR), "a tree of three entries: PATH's to say (%s)", why);
        free(c);
        c = NULL;
        s->flags |= CTL_SUBMIT_LAND_DIR;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           (c->spec.land->flags & WIRE_LAND_DIR), "a tree to PEER:/PATH/: into PATH (%s)", why);
        free(c);
        c = NULL;

        /* -X, -A: the first entry's attributes ride in the landing. */
        s->flags = CTL_SUBMIT_LAND | CTL_SUBMIT_TREE | CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS;
        s->xattrs_len = 0;
        (void)xattrs_put(s->xattrs, sizeof(s->xattrs), &(size_t){ 0 }, "user.k", "v", 1);
        s->xattrs_len = 3 + 6 + 1;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           c->spec.land->flags == (WIRE_LAND_XATTRS | WIRE_LAND_ACLS) && c->spec.land->xattrs_len == 10 &&
           memcmp(c->spec.land->xattrs, s->xattrs, 10) == 0, "-X -A: the landing carries them, DEST's with it (%s)",
           why);
        free(c);
        c = NULL;
        /* Kept up to date: a file kept is one whose attributes are the same too. */
        s->flags |= CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_DELETE;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           c->spec.land->flags == (WIRE_LAND_XATTRS | WIRE_LAND_ACLS), "-X -A with --sync --delete (%s)", why);
        free(c);
        c = NULL;
        s->flags = (s->flags & ~(CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_DELETE)) | CTL_SUBMIT_DRY_RUN;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.dry_run && c->spec.land &&
           c->spec.land->flags == (WIRE_LAND_XATTRS | WIRE_LAND_ACLS),
           "-X -A with --dry-run: what they would change is said too (%s)", why);
        free(c);
        c = NULL;
        s->flags = CTL_SUBMIT_XATTRS;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "-X into the drop box is refused");
        s->xattrs_len = 0;

        /* One file down a chain: the landing names every node, in order. */
        s->flags = CTL_SUBMIT_LAND;
        s->files = 1;
        snprintf(s->host, sizeof(s->host), "10.1.1.1");
        snprintf(s->route, sizeof(s->route), "10.1.1.2:7471,[fd00::3]");
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land && c->spec.land->naddrs == 3 &&
           c->spec.land->addrs[1][15] == 2 && c->spec.land->addrs[2][0] == 0xfd && c->spec.land->addrs[2][15] == 3,
           "a chain's landing names the peer and each hop, as xferctl bound them (%s)", why);
        free(c);
        c = NULL;
        s->route[0] = '\0';

        /* A pull: the peer reads PATH, the file comes back to DEST. */
        s->flags = CTL_SUBMIT_LAND | CTL_SUBMIT_PULL | CTL_SUBMIT_LAND_DIR | CTL_SUBMIT_LAND_REPLACE;
        s->files = 0;
        snprintf(s->land_path, sizeof(s->land_path), "/scratch/alice/a.bin");
        snprintf(s->back_host, sizeof(s->back_host), "10.1.1.9");
        snprintf(s->back_path, sizeof(s->back_path), "/home/alice/in");
        snprintf(s->back_cred, sizeof(s->back_cred), "MUNGE:back:");
        s->bwlimit = 8u << 20;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c->spec.land &&
           c->spec.land->back_bwlimit == 8u << 20 &&
           c->spec.land->direction == WIRE_LAND_PULL && c->spec.land->flags == 0 && c->spec.land->naddrs == 2 &&
           c->spec.land->addrs[1][15] == 9 && c->spec.land->back_addr[15] == 9 &&
           c->spec.land->back_flags == (WIRE_LAND_DIR | WIRE_LAND_REPLACE) &&
           strcmp(c->spec.land->back_path, "/home/alice/in") == 0 && strcmp(c->spec.land->back_cred, "MUNGE:back:") == 0 &&
           c->spec.no_sparse, "a pull: read PATH as the user, naming both nodes; DIR, REPLACE and --bwlimit are "
           "the way back's (%s)",
           why);
        free(c);
        c = NULL;
        s->flags |= CTL_SUBMIT_SYNC_DIGEST;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), 0, "a pull kept up to date here (--sync)");
        ok(c && c->spec.sync == JOB_SYNC_DIGEST, "its sync the job's, for the send back (%s)", why);
        free(c);
        c = NULL;
        s->flags |= CTL_SUBMIT_DELETE;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "a file's pull that deletes is refused");
        s->flags |= CTL_SUBMIT_PULL_TREE;
        ok(control_spec_new(s, 1000, &c, why, sizeof(why)) == 0 && c && c->spec.delete &&
           c->spec.land->flags == WIRE_LAND_TREE, "a tree's pull that syncs may delete (%s)", why);
        free(c);
        c = NULL;
        s->flags &= (uint16_t)~(CTL_SUBMIT_DELETE | CTL_SUBMIT_PULL_TREE);
        s->flags |= CTL_SUBMIT_TREE;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "a pull of a tree is refused");
        is_str(why, "a pull is of one file or tree, not dry-run or along a chain, deleting only for a tree that syncs",
               "saying what a pull is");
        s->flags &= (uint16_t)~(CTL_SUBMIT_TREE | CTL_SUBMIT_SYNC_DIGEST);
        s->back_host[0] = '\0';
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "a pull without this node's address");
        s->flags = CTL_SUBMIT_PULL;
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "PULL without LAND is refused");
        s->flags = CTL_SUBMIT_LAND;
        snprintf(s->back_host, sizeof(s->back_host), "10.1.1.9");
        is_int(control_spec_new(s, 1000, &c, why, sizeof(why)), -EINVAL, "a way back on a push is refused");
        free(s);
}

static void test_file(void)
{
        struct ctl_file f = { .id = 1, .size = 5, .mode = 0644, .mtime_ns = 99 };
        struct job_file_spec j;

        snprintf(f.name, sizeof(f.name), "set/a");
        ok(control_file_spec(&f, &j) == 0 && j.kind == JOB_FILE_REGULAR && j.name == f.name && j.size == 5 &&
           j.mode == 0644 && j.mtime_ns == 99, "a FILE is a regular file, its name, size, mode and mtime");
        f.flags = CTL_FILE_DIR;
        ok(control_file_spec(&f, &j) == 0 && j.kind == JOB_FILE_DIR && j.size == 0,
           "CTL_FILE_DIR: a directory, whatever size the client said");
        f.flags = CTL_FILE_LINK;
        ok(control_file_spec(&f, &j) == 0 && j.kind == JOB_FILE_LINK, "CTL_FILE_LINK: a symlink");
        f.flags = CTL_FILE_LINK | CTL_FILE_DIR;
        is_int(control_file_spec(&f, &j), -EINVAL, "a symlink is not a directory");
        f.flags = CTL_FILE_LINK | CTL_FILE_HARD;
        ok(control_file_spec(&f, &j) == 0 && j.kind == JOB_FILE_HARDLINK, "CTL_FILE_HARD: a hard link");
        f.flags = CTL_FILE_HARD;
        is_int(control_file_spec(&f, &j), -EINVAL, "CTL_FILE_HARD without CTL_FILE_LINK is refused");
        f.flags = 0x80;
        is_int(control_file_spec(&f, &j), -EINVAL, "an unknown flag is refused");
}

/* A chain SUBMIT through jobs and back: what a client reads of it. */
static void test_job(void)
{
        static struct ctl_msg m, back;
        static uint8_t buf[CTL_MSG_MAX];
        struct event_base *base = event_base_new();
        struct engine *engine = fake_engine_new(base);
        struct jobs_cfg cfg = { .port = 7470, .max_transfers = 1, .max_queued_per_user = 8, .retry_max = 2,
                                .retry_window = 60, .retry_delay_max = 1, .slot_size = 1 << 20,
                                .peer_timeout = 30 };
        struct ctl_submit *s = submit_new(0, "192.0.2.2:7471,[fd00::3]");
        struct control_spec *c = NULL;
        struct jobs *jobs;
        struct job *job;
        char why[CTL_TEXT_MAX + 1];
        int len;

        if (!base || jobs_new(&jobs, base, engine, &cfg) < 0)
                abort();
        snprintf(s->name, sizeof(s->name), "c.bin");
        if (control_spec_new(s, 1000, &c, why, sizeof(why)) < 0)
                abort();
        is_int(jobs_submit(jobs, &c->spec, memfd_create("c", MFD_CLOEXEC), 0, &job, why, sizeof(why)), 0,
               "the chain's job is queued");
        control_job_msg(&m, job);
        ok(m.type == CTL_JOB && m.job.id == job->id && m.job.state == CTL_JOB_QUEUED && !strcmp(m.job.name, "c.bin") &&
           !strcmp(m.job.peer, "192.0.2.1:7470") && m.job.attempt == 1 && m.job.attempts == 3 &&
           m.job.files_total == 1, "a JOB: its id, state, name, peer, attempts and files");
        is_str(m.job.route, "192.0.2.2:7471,[fd00::3]:7470", "its route as a SUBMIT writes one, every port given");
        ok(m.job.nodes == 3 && nodeset_count(&m.job.nodes_missing) == 3, "3 nodes, every one missing while queued");
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && !strcmp(back.job.route, m.job.route) &&
           back.job.nodes == 3, "the codec takes it, and gives it back");
        is_int(ctl_route_parse(m.job.route, NULL, CTL_ROUTE_HOPS_MAX), 2, "and its route reads as two hops");
        is_int(jobs_cancel(jobs, job->id), 0, "cancelled");
        control_job_msg(&m, job);
        ok(m.job.state == CTL_JOB_CANCELLED && !strcmp(m.job.text, "cancelled"), "a JOB says so");
        ok(m.job.land == CTL_JOB_LAND_NONE && !m.job.land_path[0] && !m.job.back_path[0],
           "the drop box's: no landing in it");
        free(c);
        c = NULL;
        free(s);

        /* A pull's JOB says what it reads there and where it lands (version 15). */
        s = submit_new(CTL_SUBMIT_LAND | CTL_SUBMIT_PULL, "");
        s->files = 1;
        snprintf(s->name, sizeof(s->name), "a.bin");
        snprintf(s->land_path, sizeof(s->land_path), "/scratch/alice/a.bin");
        snprintf(s->land_cred, sizeof(s->land_cred), "MUNGE:x:");
        s->land_token[0] = 1;
        snprintf(s->back_host, sizeof(s->back_host), "10.1.1.9");
        snprintf(s->back_path, sizeof(s->back_path), "/home/alice/in");
        snprintf(s->back_cred, sizeof(s->back_cred), "MUNGE:back:");
        if (control_spec_new(s, 1000, &c, why, sizeof(why)) < 0)
                abort();
        is_int(jobs_submit(jobs, &c->spec, -1, 0, &job, why, sizeof(why)), 0, "a pull is queued (%s)", why);
        control_job_msg(&m, job);
        ok(m.job.land == CTL_JOB_LAND_PULL && !strcmp(m.job.land_path, "/scratch/alice/a.bin") &&
           !strcmp(m.job.back_path, "/home/alice/in"), "its JOB: read at PATH there, landed at DEST");
        len = ctl_encode(buf, sizeof(buf), &m);
        ok(len > 0 && ctl_decode(buf, (size_t)len, &back) == 0 && back.job.land == CTL_JOB_LAND_PULL &&
           !strcmp(back.job.back_path, "/home/alice/in"), "the codec takes it");
        free(c);
        free(s);
        fake_engine_free(engine);
        jobs_free(jobs);
        event_base_free(base);
}

static void test_stats(void)
{
        static struct ctl_msg m;
        static uint8_t buf[CTL_MSG_MAX];
        struct stats_snapshot s = { .uptime_usec = 5, .queued = 3, .ring_held = 1, .ring_slots = 8,
                                    .pool_held = 2, .pool_slots = 9 };

        stats_tally_add(&s.dir[STATS_DIR_RECV].tally, false, WIRE_OK, 100, 0);
        stats_tally_add(&s.dir[STATS_DIR_RECV].tally, false, WIRE_E_EXISTS, 7, 0);
        stats_tally_add(&s.dir[STATS_DIR_SEND].tally, true, WIRE_OK, 7, 0);
        s.dir[STATS_DIR_RECV].rate = 11;
        s.dir[STATS_DIR_SEND].active = 4;
        is_int(control_stats_msg(&m, &s), 0, "the counters as a STATS_INFO");
        ok(m.type == CTL_STATS_INFO && m.stats.uptime_usec == 5 && m.stats.queued == 3 && m.stats.ring_held == 1 &&
           m.stats.ring_slots == 8 && m.stats.pool_held == 2 && m.stats.pool_slots == 9, "its totals");
        ok(m.stats.dir[CTL_DIR_RECV].bytes == 100 && m.stats.dir[CTL_DIR_RECV].files == 1 &&
           m.stats.dir[CTL_DIR_RECV].rate == 11 && m.stats.dir[CTL_DIR_SEND].active == 4,
           "each direction's bytes, files, rate and transfers");
        ok(m.stats.nreasons == 2 && stats_failed_total(&m.stats, CTL_DIR_RECV) == 1 &&
           stats_failed_total(&m.stats, CTL_DIR_SEND) == 1, "and its reasons");
        ok(ctl_encode(buf, sizeof(buf), &m) > 0, "it encodes");
}

int main(void)
{
        test_states();
        test_submit();
        test_file();
        test_job();
        test_stats();
        return done_testing();
}
