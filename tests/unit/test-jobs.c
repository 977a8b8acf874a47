/*
 * The job layer's policy (daemon/jobs/, its library) against a fake
 * engine (fake-engine.c): what a job may be asked (jobs_spec_check),
 * scheduling and max_transfers, a full send pool, start errors, cancel,
 * the queue limit (global and per user), retention, watchers, retries
 * (backoff, limits, cancel), a job's files and its feeder, chains, and
 * that a job's state only ever moves forward within an attempt. The real
 * engine is tested on SoftRoCE.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <event2/event.h>

#include "config.h"
#include "ctl.h"
#include "engine.h"
#include "fake-engine.h"
#include "jobs.h"
#include "log.h"
#include "macro.h"
#include "stats.h"
#include "tap.h"
#include "wire.h"

/* ---- every notification a job's watcher sees ---- */

#define REC_MAX         600
#define REC_SEQ_MAX     16

struct rec {
        uint64_t id;
        int last;                       /* state at watch time, then the last one seen */
        unsigned int n;
        int seq[REC_SEQ_MAX];
};

static struct rec recs[REC_MAX];
static unsigned int n_recs;
static unsigned int rec_backwards, rec_repeats, rec_notes;

static void rec_cb(struct job *job, void *userdata)
{
        struct rec *r = userdata;

        if ((int)job->state == r->last)
                rec_repeats++;
        else if (!job_state_transition_ok((enum job_state)r->last, job->state))
                rec_backwards++;
        r->last = job->state;
        if (r->n < REC_SEQ_MAX)
                r->seq[r->n] = job->state;
        r->n++;
        rec_notes++;
        /* What control.c does: stop watching once final, from inside the callback. */
        if (job_state_final(job->state))
                job_unwatch(job, rec_cb, r);
}

static struct rec *rec_find(uint64_t id)
{
        for (unsigned int i = 0; i < n_recs; i++)
                if (recs[i].id == id)
                        return &recs[i];
        abort();
}

/* True when the watcher saw exactly these states, in this order. */
static bool rec_is(uint64_t id, unsigned int n, const int *want)
{
        struct rec *r = rec_find(id);

        if (r->n != n)
                return false;
        for (unsigned int i = 0; i < n; i++)
                if (r->seq[i] != want[i])
                        return false;
        return true;
}

#define SEQ(id, ...) rec_is((id), sizeof((int[]){ __VA_ARGS__ }) / sizeof(int), (int[]){ __VA_ARGS__ })

/* ---- fixture ---- */

struct fx {
        const char *name;
        struct event_base *base;
        struct jobs_cfg cfg;
        struct engine *engine;
        struct jobs *jobs;
        int fds_before;
};

static int count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        int n = 0;

        if (!d)
                abort();
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n - 1;   /* the directory's own */
}

static bool fd_closed(int fd)
{
        return fcntl(fd, F_GETFD) < 0 && errno == EBADF;
}

/* The jobs' configuration as the daemon's defaults make it (daemon.c). */
static void fx_cfg_defaults(struct jobs_cfg *jc)
{
        struct config c;

        config_init(&c);
        *jc = (struct jobs_cfg){
                .port = c.port,
                .max_transfers = c.max_transfers,
                .max_queued_per_user = c.max_queued_per_user,
                .retry_max = c.retry_max,
                .retry_window = c.retry_window,
                .retry_delay_max = c.retry_delay_max,
                .slot_size = c.slot_size,
                .peer_timeout = c.peer_timeout,
        };
        config_deinit(&c);
}

/* A reload: f->cfg, as the test changed it, replaces the jobs' copy. */
static void fx_reload(struct fx *f)
{
        jobs_reconfigure(f->jobs, &f->cfg);
}

static void fx_setup(struct fx *f, const char *name, unsigned int max_transfers)
{
        memset(f, 0, sizeof(*f));
        f->name = name;
        f->fds_before = count_fds();
        n_recs = 0;
        rec_backwards = rec_repeats = rec_notes = 0;
        diag("%s", name);
        f->base = event_base_new();
        if (!f->base)
                abort();
        fx_cfg_defaults(&f->cfg);
        f->cfg.max_transfers = max_transfers;
        /* The per-user queue limit has a case of its own; elsewhere only the global one counts. */
        f->cfg.max_queued_per_user = JOBS_QUEUED_MAX;
        f->engine = fake_engine_new(f->base);
        if (jobs_new(&f->jobs, f->base, f->engine, &f->cfg) < 0)
                abort();
}

static void fx_teardown(struct fx *f)
{
        is_int(rec_backwards, 0, "%s: no watcher saw a state go backwards (%u notifications)",
               f->name, rec_notes);
        is_int(rec_repeats, 0, "%s: every notification is a change", f->name);
        is_int(fake_engine_misuse(f->engine), 0, "%s: engine contract kept", f->name);
        /* The daemon's order: the engine (no callbacks) before the jobs it points at. */
        fake_engine_free(f->engine);
        jobs_free(f->jobs);
        event_base_free(f->base);
        is_int(count_fds(), f->fds_before, "%s: no descriptor leaked", f->name);
}

/* Run what is ready on the loop (the deferred scheduler, cancels), a few rounds. */
static void run(struct fx *f)
{
        for (int i = 0; i < 4; i++)
                event_base_loop(f->base, EVLOOP_NONBLOCK);
}

static int make_file(uint64_t size)
{
        int fd = memfd_create("test-jobs", MFD_CLOEXEC);

        if (fd < 0 || ftruncate(fd, (off_t)size) < 0)
                abort();
        return fd;
}

#define TEST_UID        1000            /* the submitter unless a case says otherwise */

/* jobs_submit() of @s as @s->uid, or TEST_UID where it names none: the
 * job's id into *@id; its reason, when refused, into last_why. */
static char last_why[256];

static int submit_spec(struct fx *f, const struct job_spec *s, int fd, uint64_t size, uint64_t *id)
{
        struct job_spec c = *s;
        struct job *job = NULL;
        int r;

        if (!c.uid)
                c.uid = TEST_UID;
        r = jobs_submit(f->jobs, &c, fd, size, &job, last_why, sizeof(last_why));
        if (r == 0)
                *id = job->id;
        return r;
}

/* jobs_add_file() of a file of @kind: 0 once taken (how many more the job
 * takes then in last_room), or what it returned. */
static int last_room;

static int add_file(struct job *job, int fd, uint64_t size, const char *name, enum job_file_kind kind,
                    uint32_t mode, uint64_t mtime_ns)
{
        struct job_file_spec f = { .name = name, .kind = kind, .size = size, .mode = mode, .mtime_ns = mtime_ns };
        int r = jobs_add_file(job, fd, &f);

        if (r < 0)
                return r;
        last_room = r;
        return 0;
}

/* Submit a @size-byte file as @uid; the recorder watches the job from the start. */
static int submit_as(struct fx *f, uid_t uid, const char *host, uint16_t port, const char *name,
                     uint64_t size, uint64_t *id, int *fd_out)
{
        struct job_spec s = { .port = port, .uid = uid };
        int fd = make_file(size), r;
        struct job *job;

        snprintf(s.host, sizeof(s.host), "%s", host);
        snprintf(s.name, sizeof(s.name), "%s", name);
        if (fd_out)
                *fd_out = fd;
        r = jobs_submit(f->jobs, &s, fd, size, &job, last_why, sizeof(last_why));
        if (r != 0)
                return r;
        *id = job->id;
        if (!job || n_recs >= REC_MAX)
                abort();
        recs[n_recs] = (struct rec){ .id = *id, .last = job->state };
        if (job_watch(job, rec_cb, &recs[n_recs]) < 0)
                abort();
        n_recs++;
        return 0;
}

static int submit(struct fx *f, const char *host, uint16_t port, const char *name,
                  uint64_t size, uint64_t *id, int *fd_out)
{
        return submit_as(f, TEST_UID, host, port, name, size, id, fd_out);
}

static uint64_t submit_ok(struct fx *f, uint64_t size, int *fd_out)
{
        uint64_t id = 0;

        if (submit(f, "192.0.2.1", 0, "file.bin", size, &id, fd_out) < 0)
                abort();
        return id;
}

static struct job *job_of(struct fx *f, uint64_t id)
{
        struct job *job = jobs_find(f->jobs, id);

        if (!job)
                abort();
        return job;
}

static int state_of(struct fx *f, uint64_t id)
{
        return job_of(f, id)->state;
}

static struct engine_send *xfer_of(struct fx *f, uint64_t id)
{
        struct engine_send *s = fake_engine_find(f->engine, id);

        if (!s)
                abort();
        return s;
}

static void finish_ok(struct fx *f, uint64_t id)
{
        struct job *job = job_of(f, id);

        fake_engine_done(xfer_of(f, id), ENGINE_DONE, WIRE_OK, "", job->size, 1000);
}

static unsigned int count_running(struct fx *f)
{
        unsigned int n = 0;

        for (struct job *job = jobs_first(f->jobs); job; job = job->next)
                n += job->state == JOB_CONNECTING || job->state == JOB_SENDING ||
                     job->state == JOB_VERIFYING;
        return n;
}

static unsigned int count_table(struct fx *f)
{
        unsigned int n = 0;

        for (struct job *job = jobs_first(f->jobs); job; job = job->next)
                n++;
        return n;
}

static bool same_file(int a, int b)
{
        struct stat sa, sb;

        return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
}

/* ---- the cases ---- */

static void test_lifecycle(void)
{
        struct fx f;
        const struct fake_send_info *info;
        const struct sockaddr_in *sin;
        const struct sockaddr_in6 *sin6;
        struct in6_addr a6;
        struct engine_send *s;
        struct job *job;
        uint64_t id, id6;
        int fd, fd6;

        fx_setup(&f, "lifecycle", 4);
        f.cfg.port = 7471;
        fx_reload(&f);
        is_int(submit(&f, "192.0.2.1", 0, "a.bin", 1000, &id, &fd), 0, "submit");
        job = job_of(&f, id);
        is_int(job->state, JOB_QUEUED, "queued by jobs_submit");
        is_int(fake_engine_calls(f.engine), 0, "the engine is asked only from the loop");
        run(&f);
        is_int(job->state, JOB_CONNECTING, "started: connecting");
        s = fake_engine_find(f.engine, id);
        ok(s && job->xfer == s, "the engine's handle is kept in job->xfer");
        info = fake_engine_info(s);
        is_int(info->size, 1000, "request: the size the control layer checked");
        is_str(info->name, "a.bin", "request: name");
        is_str(info->peer, "192.0.2.1:7471", "request: peer, default port from the config");
        sin = (const struct sockaddr_in *)&info->dst;
        ok(info->dst_len == sizeof(*sin) && sin->sin_family == AF_INET &&
           ntohs(sin->sin_port) == 7471 && sin->sin_addr.s_addr == inet_addr("192.0.2.1"),
           "request: resolved IPv4 address and default port");
        ok(info->fd != fd && same_file(info->fd, fd), "the engine got the job's file");

        fake_engine_set_progress(s, 300, 100);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        is_int(job->state, JOB_SENDING, "phase SENDING -> sending");
        fake_engine_set_progress(s, 400, 2000);
        job_refresh(job);
        ok(job->bytes_done == 400 && job->usec == 2000, "job_refresh asks the engine for progress");
        fake_engine_phase(s, ENGINE_PHASE_VERIFYING);
        is_int(job->state, JOB_VERIFYING, "phase VERIFYING -> verifying");
        ok(!fd_closed(fd), "the job's fd stays open while it runs");
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 1000, 4000);
        is_int(job->state, JOB_DONE, "outcome DONE -> done");
        ok(!job->xfer, "handle dropped at done");
        ok(job->bytes_done == 1000 && job->usec == 4000, "bytes and time from the result");
        is_int(job->rate, 250000, "a finished job shows its average rate");
        ok(job->status == WIRE_OK && job->text[0] == '\0', "status ok, no text");
        ok(fd_closed(fd), "the job's fd is closed once final");
        job_refresh(job);
        is_int(job->bytes_done, 1000, "job_refresh on a finished job keeps the result");
        ok(SEQ(id, JOB_CONNECTING, JOB_SENDING, JOB_VERIFYING, JOB_DONE),
           "watcher saw connecting, sending, verifying, done");
        is_int(jobs_active(f.jobs), 0, "nothing active");

        /* IPv6, an empty file (straight to VERIFYING), and a failure with the receiver's reason. */
        is_int(submit(&f, "2001:db8::2", 9000, "b.bin", 0, &id6, &fd6), 0, "submit (IPv6)");
        run(&f);
        s = xfer_of(&f, id6);
        info = fake_engine_info(s);
        is_str(info->peer, "[2001:db8::2]:9000", "IPv6 peer in brackets, explicit port");
        sin6 = (const struct sockaddr_in6 *)&info->dst;
        inet_pton(AF_INET6, "2001:db8::2", &a6);
        ok(info->dst_len == sizeof(*sin6) && sin6->sin6_family == AF_INET6 &&
           ntohs(sin6->sin6_port) == 9000 && memcmp(&sin6->sin6_addr, &a6, sizeof(a6)) == 0,
           "request: resolved IPv6 address and port");
        fake_engine_phase(s, ENGINE_PHASE_VERIFYING);
        is_int(state_of(&f, id6), JOB_VERIFYING, "connecting -> verifying (SENDING skipped)");
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        is_int(state_of(&f, id6), JOB_VERIFYING, "a late SENDING never moves the job back");
        fake_engine_done(s, ENGINE_FAILED, WIRE_E_CHECKSUM, "whole-file checksum mismatch", 0, 10);
        job = job_of(&f, id6);
        ok(job->state == JOB_FAILED && job->status == WIRE_E_CHECKSUM,
           "outcome FAILED -> failed, with the engine's status");
        is_str(job->text, "whole-file checksum mismatch", "and its text");
        ok(fd_closed(fd6), "fd closed after failure");
        ok(SEQ(id6, JOB_CONNECTING, JOB_VERIFYING, JOB_FAILED),
           "watcher saw connecting, verifying, failed");
        fx_teardown(&f);
}

static int feeds;
static struct fx f_several;

static void feed_cb(void *owner, struct job *job)
{
        (void)owner;
        (void)job;
        feeds++;
}

/* A job of several files: handed over in order, at most JOBS_FILES_AHEAD
 * held, the engine waits for the client and is resumed, one session. */
static void test_several_files(void)
{
        struct job_spec cs = { .files = 4, .job_bytes = 100 + 200 + 0 + 300 };
        struct engine_send_file ef;
        const struct fake_send_info *info;
        struct engine_send *s;
        struct job *job;
        uint64_t id;
        int fd0, fds[3], r;
        char name[16];

        fx_setup(&f_several, "several files", 4);
        fd0 = make_file(100);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "first.bin");
        is_int(submit_spec(&f_several, &cs, fd0, 100, &id), 0, "submit a job of 4 files");
        job = job_of(&f_several, id);
        ok(job->files == 4 && job->files_in == 1 && job->size == 600 && job->first_size == 100,
           "it counts 4 files, 1 handed over, 600 bytes in all, 100 in the first");
        ok(job_attempts(job) > 1, "a job of several files is retried (%u attempts)", job_attempts(job));
        ok(!job_files_complete(job) && job_files_room(job) == JOBS_FILES_AHEAD, "room for the others");
        jobs_set_feeder(job->jobs, feed_cb, NULL);
        run(&f_several);
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->files == 4 && info->job_bytes == 600 && info->size == 100,
           "the engine is asked for one session: 4 files, 600 bytes, the first of 100");

        /* The engine is first to ask: nothing there yet. */
        is_int(fake_engine_next(s, 1, &ef), ENGINE_NEXT_LATER, "file 2 asked before it came: later");
        fds[0] = make_file(200);
        is_int(add_file(job, fds[0], 200, "second.bin", JOB_FILE_REGULAR, 0, 0), 0, "file 2 handed over");
        ok(last_room > 0 && (unsigned int)last_room == job_files_room(job),
           "jobs_add_file says how many more it takes now (%d)", last_room);
        is_int(info->resumes, 1, "and the waiting engine is resumed");
        feeds = 0;
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 1, &ef), 0, "then it has file 2");
        ok(ef.fd >= 0 && same_file(ef.fd, fds[0]) && ef.size == 200 && !strcmp(ef.name, "second.bin"),
           "the same file, its size and name");
        safe_close(ef.fd);
        is_int(feeds, 1, "the feeder hears there is room again");
        fake_engine_file_done(s, 1, 200);
        is_int(job->files_done, 2, "files done count what the receiver published");

        /* More than the job announced is refused. */
        fds[1] = make_file(0);
        is_int(add_file(job, fds[1], 0, "empty", JOB_FILE_REGULAR, 0, 0), 0, "file 3 (empty) handed over");
        fds[2] = make_file(301);
        is_int(add_file(job, fds[2], 301, "fourth.bin", JOB_FILE_REGULAR, 0, 0), -E2BIG, "a last file past job_bytes is refused");
        /* Running: the look-ahead the descriptor limit allows (jobs.h). */
        ok(job_files_room(job) >= JOBS_FILES_AHEAD - 1 && job_files_room(job) <= JOBS_FILES_AHEAD_MAX - 1,
           "one held ahead, of a running job's look-ahead (%u left)", job_files_room(job));
        fds[2] = make_file(300);
        is_int(add_file(job, fds[2], 300, "fourth.bin", JOB_FILE_REGULAR, 0, 0), 0, "the last file handed over");
        ok(job_files_complete(job) && job_files_room(job) == 0 && last_room == 0, "every file is in");
        r = add_file(job, make_file(0), 0, "fifth", JOB_FILE_REGULAR, 0, 0);
        is_int(r, -E2BIG, "a fifth is refused");
        jobs_feed_end(job, NULL);
        is_int(job->state, JOB_CONNECTING, "the client may go once every file is in");
        feeds = 0;
        for (uint32_t k = 2; k < 4; k++) {
                ef = (struct engine_send_file){ .fd = -1 };
                is_int(fake_engine_next(s, k, &ef), 0, "file %u taken", k + 1);
                snprintf(name, sizeof(name), "%s", ef.name);
                safe_close(ef.fd);
        }
        is_str(name, "fourth.bin", "in the order handed over");
        is_int(feeds, 0, "a job with every file in wants no more");
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 600, 1000);
        is_int(job->state, JOB_DONE, "done");
        fx_teardown(&f_several);
}

/*
 * A job of several files retried: each attempt is a new session from the
 * first file not published (the one the engine was on, kept open by the
 * job, or the next the client hands over), with the files and bytes left;
 * what was published is not sent again.
 */
static void wait_retry(struct fx *f, uint64_t id, int ms);

/* Sync: the SUBMIT's flag becomes the engine's way, on every attempt; the
 * files the receiver kept are counted across attempts. */
static void test_sync_job(void)
{
        struct job_spec cs = { .files = 3, .job_bytes = 30, .sync = JOB_SYNC_DIGEST };
        struct engine_send_file ef;
        struct engine_send *s;
        struct job *job;
        uint64_t id;

        fx_setup(&f_several, "sync", 4);
        f_several.cfg.retry_max = 3;
        f_several.cfg.retry_delay_max = 1;
        fx_reload(&f_several);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "a");
        /* Two ways at once are the SUBMIT's flags, refused by control (test-control-msg). */
        cs.sync = (enum job_sync)(JOB_SYNC_DIGEST + 1);
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), -EINVAL,
               "sync: a way the jobs do not know is refused");
        is_str(last_why, "unknown sync 4", "sync: saying which");
        cs.sync = JOB_SYNC_NONE;
        cs.delete = true;
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), -EINVAL, "sync: deleting without a sync refused");
        cs.sync = JOB_SYNC_DIGEST;
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), -EINVAL,
               "sync: deleting outside a tree refused");
        is_str(last_why, "deleting is for a tree sent with --sync or --skip-existing", "sync: saying why");
        cs.delete = false;
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), 0, "sync: submitted");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        is_int(fake_engine_info(s)->sync, ENGINE_SYNC_DIGEST, "sync: the engine compares digests");
        is_int(add_file(job, make_file(10), 10, "b", JOB_FILE_REGULAR, 0, 0), 0, "sync: file 2 in");
        fake_engine_file_done(s, 0, 0);
        fake_engine_set_skipped(s, 1);
        job_refresh(job);
        ok(job->files_done == 1 && job->files_skipped == 1, "sync: file 1 skipped, counted while running");
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 1, &ef), 0, "sync: the engine takes file 2");
        safe_close(ef.fd);
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        ok(job->state == JOB_RETRYING && job->files_skipped == 1, "sync: retrying, 1 skipped so far");
        wait_retry(&f_several, id, 2000);
        s = xfer_of(&f_several, id);
        ok(s && fake_engine_info(s)->sync == ENGINE_SYNC_DIGEST, "sync: the retry keeps the way");
        is_int(add_file(job, make_file(10), 10, "c", JOB_FILE_REGULAR, 0, 0), 0, "sync: file 3 in");
        fake_engine_file_done(s, 0, 0);
        fake_engine_file_done(s, 1, 10);
        fake_engine_set_skipped(s, 1);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 10, 100);
        ok(job->state == JOB_DONE && job->files_done == 3 && job->files_skipped == 2,
           "sync: done, 3 files of which 2 skipped, over two attempts");
        fx_teardown(&f_several);
}

/* Deleting: a tree's SUBMIT with a sync and delete gets the engine's
 * delete on every attempt, and the job the count the receiver said. */
static void test_delete_job(void)
{
        struct job_spec cs = { .tree = true, .files = 2, .job_bytes = 10, .sync = JOB_SYNC_SIZE, .delete = true };
        struct engine_send_file ef;
        struct engine_send *s;
        struct job *job;
        uint64_t id;

        fx_setup(&f_several, "delete", 4);
        f_several.cfg.retry_max = 3;
        f_several.cfg.retry_delay_max = 1;
        fx_reload(&f_several);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "runs/set");
        is_int(submit_spec(&f_several, &cs, -1, 0, &id), 0, "delete: a synced tree submitted");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        ok(s && fake_engine_info(s)->delete && fake_engine_info(s)->sync == ENGINE_SYNC_SIZE,
           "delete: the engine deletes, and syncs by size");
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        wait_retry(&f_several, id, 2000);
        s = xfer_of(&f_several, id);
        ok(s && fake_engine_info(s)->delete, "delete: the retry deletes too");
        is_int(add_file(job, make_file(10), 10, "runs/set/a", JOB_FILE_REGULAR, 0644, 0), 0, "delete: entry 1 in");
        fake_engine_file_done(s, 0, 0);
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 1, &ef), 0, "delete: the engine takes entry 1");
        safe_close(ef.fd);
        fake_engine_file_done(s, 1, 10);
        fake_engine_set_deleted(s, 7);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 10, 100);
        ok(job->state == JOB_DONE && job->deleted == 7, "delete: done, 7 deleted on the receiver");
        fx_teardown(&f_several);
}

static void test_several_files_retry(void)
{
        struct job_spec cs = { .files = 4, .job_bytes = 100 + 200 + 300 + 400 };
        const struct fake_send_info *info;
        struct engine_send_file ef;
        struct engine_send *s;
        struct job *job;
        uint64_t id;
        int fd0, fd1, fd2, fd3;

        fx_setup(&f_several, "several files, retried", 4);
        f_several.cfg.retry_max = 3;
        f_several.cfg.retry_delay_max = 1;
        fx_reload(&f_several);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "first.bin");
        fd0 = make_file(100);
        is_int(submit_spec(&f_several, &cs, fd0, 100, &id), 0, "retry: submit 4 files");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        fd1 = make_file(200);
        is_int(add_file(job, fd1, 200, "second.bin", JOB_FILE_REGULAR, 0, 0), 0, "retry: file 2 in");
        fake_engine_file_done(s, 0, 100);
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 1, &ef), 0, "retry: the engine takes file 2");
        safe_close(ef.fd);
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        ok(job->state == JOB_RETRYING && job->files_done == 1,
           "retry: a transient failure on file 2 retries, 1 file published");

        wait_retry(&f_several, id, 2000);
        is_int(state_of(&f_several, id), JOB_CONNECTING, "retry: attempt 2 starts");
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->files == 3 && info->job_bytes == 900 && info->size == 200 &&
           strcmp(info->name, "second.bin") == 0,
           "retry: a session of the 3 files left, 900 bytes, from second.bin (%u, %llu, %s)", info->files,
           (unsigned long long)info->job_bytes, info->name);
        fd2 = make_file(300);
        is_int(add_file(job, fd2, 300, "third.bin", JOB_FILE_REGULAR, 0, 0), 0, "retry: file 3 in");
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 1, &ef), 0, "retry: the session's file 2 is the job's third");
        ok(ef.size == 300 && strcmp(ef.name, "third.bin") == 0, "retry: third.bin");
        safe_close(ef.fd);
        fake_engine_set_progress(s, 250, 1000);
        job_refresh(job);
        is_int(job->bytes_done, 350, "retry: progress counts what attempt 1 published");
        fake_engine_file_done(s, 0, 200);
        fake_engine_file_done(s, 1, 300);
        is_int(job->files_done, 3, "retry: files done count across attempts");

        /* Failing before the client handed the next one over: the next
         * attempt waits queued for it, holding nothing of the engine's. */
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "no progress from receiver for 30 s");
        is_int(job->state, JOB_RETRYING, "retry: failed again between two files");
        wait_retry(&f_several, id, 2000);
        run(&f_several);
        ok(state_of(&f_several, id) == JOB_QUEUED && fake_engine_live(f_several.engine) == 0,
           "retry: queued, not started, until the client hands file 4 over");
        fd3 = make_file(400);
        is_int(add_file(job, fd3, 400, "fourth.bin", JOB_FILE_REGULAR, 0, 0), 0, "retry: file 4 in");
        run(&f_several);
        is_int(state_of(&f_several, id), JOB_CONNECTING, "retry: attempt 3 starts");
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->files == 1 && info->job_bytes == 400 && info->size == 400 && same_file(info->fd, fd3) &&
           strcmp(info->name, "fourth.bin") == 0, "retry: a session of the last file alone");
        fake_engine_file_done(s, 0, 400);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 400, 1000);
        ok(job->state == JOB_DONE && job->files_done == 4 && job->bytes_done == 1000,
           "retry: done, 4 files, 1000 bytes");
        ok(fd_closed(fd0), "retry: the job's descriptors are closed");
        fx_teardown(&f_several);
}

/* The job fails while its client still hands files over: the feeder hears,
 * so the client is not left waiting for room. */
static void test_several_files_end_feeder(void)
{
        struct job_spec cs = { .files = 3, .job_bytes = 30 };
        struct job *job;
        uint64_t id;

        fx_setup(&f_several, "several files, the job ends while fed", 4);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "a");
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), 0, "fed: submit 3 files");
        job = job_of(&f_several, id);
        job->retries = 0;
        jobs_set_feeder(job->jobs, feed_cb, NULL);
        run(&f_several);
        feeds = 0;
        fake_engine_fail(xfer_of(&f_several, id), WIRE_E_NAME, false, "file name refused");
        ok(job->state == JOB_FAILED && feeds == 1, "fed: the job failed, and its feeder heard once (%d)",
           feeds);
        is_int(job_files_room(job), 0, "fed: no room in a final job");
        fx_teardown(&f_several);
}

/* The client goes away before the last file: the job is cancelled, its files closed. */
static void test_several_files_gone(void)
{
        struct job_spec cs = { .files = 3, .job_bytes = 30 };
        struct job *job;
        uint64_t id;
        int fd1;

        fx_setup(&f_several, "several files, client gone", 4);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "a");
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), 0, "submit 3 files");
        cs.job_bytes = 5;
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), -EINVAL,
               "job_bytes below the first file's size is refused");
        job = job_of(&f_several, id);
        run(&f_several);
        fd1 = make_file(10);
        is_int(add_file(job, fd1, 10, "b", JOB_FILE_REGULAR, 0, 0), 0, "file 2 in");
        jobs_feed_end(job, NULL);
        run(&f_several);
        is_int(job->state, JOB_CANCELLED, "cancelled when the client goes before file 3");
        ok(fd_closed(fd1), "the file held ahead is closed");
        is_int(add_file(job, make_file(1), 1, "c", JOB_FILE_REGULAR, 0, 0), -EALREADY, "nothing more once final");
        fx_teardown(&f_several);
}

/*
 * The client's connection fails before the last file (rdmaxferd out of
 * descriptors, control.c): the job fails with that reason, not
 * "cancelled", once the engine has the files held; a queued one at once.
 */
static void test_several_files_feed_failed(void)
{
        struct job_spec cs = { .files = 3, .job_bytes = 30 };
        const struct fake_send_info *info;
        struct engine_send_file ef = { .fd = -1 };
        struct engine_send *s;
        struct job *job;
        uint64_t id;

        fx_setup(&f_several, "several files, the feed failed", 4);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "a");
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), 0, "submit 3 files");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        is_int(add_file(job, make_file(10), 10, "b", JOB_FILE_REGULAR, 0, 0), 0, "file 2 in");
        /* The engine waits for file 3 when the feed fails. */
        is_int(fake_engine_next(s, 1, &ef), 0, "file 2 taken");
        safe_close(ef.fd);
        is_int(fake_engine_next(s, 2, &ef), ENGINE_NEXT_LATER, "file 3 not there yet");
        jobs_feed_end(job, "out of file descriptors");
        is_int(job->state, JOB_CONNECTING, "not cancelled: the engine ends it");
        is_int(info->resumes, 1, "the waiting engine is resumed");
        ok(fake_engine_next(s, 2, &ef) < 0, "and told file 3 is never coming");
        fake_engine_fail(s, WIRE_E_INTERNAL, false, "file 3: Too many open files");
        is_int(job->state, JOB_FAILED, "failed, not cancelled");
        ok(strstr(job->text, "file 3: out of file descriptors") != NULL, "with the reason: %s", job->text);
        fx_teardown(&f_several);

        /* Before its attempt started: failed at once. */
        fx_setup(&f_several, "several files, the feed failed while queued", 0);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        is_int(submit_spec(&f_several, &cs, make_file(10), 10, &id), 0, "submit 3 files");
        job = job_of(&f_several, id);
        jobs_feed_end(job, "out of file descriptors");
        is_int(job->state, JOB_FAILED, "a queued job fails at once");
        ok(strstr(job->text, "file 2: out of file descriptors") != NULL, "with the reason: %s", job->text);
        fx_teardown(&f_several);
}

/* A tree: DEST with no descriptor, then its directories and files in order. */
static void test_tree_job(void)
{
        struct job_spec cs = { .files = 4, .job_bytes = 15, .tree = true };
        struct engine_send_file ef;
        const struct fake_send_info *info;
        struct engine_send *s;
        struct job *job;
        uint64_t id;

        fx_setup(&f_several, "tree", 4);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "runs/set");
        is_int(submit_spec(&f_several, &cs, make_file(1), 0, &id), -EINVAL,
               "a tree's SUBMIT carries no descriptor");
        is_int(submit_spec(&f_several, &cs, -1, 0, &id), 0, "a tree of 4 entries");
        job = job_of(&f_several, id);
        ok(job->tree && job->fd < 0 && job->files == 4, "a tree job, no file of its own");
        run(&f_several);
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->files == 4 && info->size == 0 && !strcmp(info->name, "runs/set"),
           "the engine starts with DEST, a directory of 0 bytes");
        is_int(add_file(job, make_file(1), 0, "runs/set/sub", JOB_FILE_DIR, 0, 0), -EINVAL,
               "a directory comes with no descriptor");
        is_int(add_file(job, -1, 0, "runs/set/sub", JOB_FILE_DIR, 0, 0), 0, "a directory entry");
        is_int(add_file(job, make_file(10), 10, "runs/set/sub/f", JOB_FILE_REGULAR, 0640, 1234567), 0, "a file in it");
        is_int(add_file(job, make_file(0), 0, "runs/set/l", JOB_FILE_LINK, 0, 0), -EINVAL,
               "a symlink with an empty target is refused");
        is_int(add_file(job, -1, 5, "runs/set/l", JOB_FILE_LINK, 0, 0), -EINVAL,
               "a symlink is not a directory");
        is_int(add_file(job, make_file(5), 5, "runs/set/l", JOB_FILE_LINK, 0, 0), 0, "a symlink");
        ef = (struct engine_send_file){ .fd = -2 };
        ok(fake_engine_next(s, 1, &ef) == 0 && ef.dir && ef.fd < 0 && !strcmp(ef.name, "runs/set/sub"),
           "the engine gets the directory as one");
        ef = (struct engine_send_file){ .fd = -1 };
        ok(fake_engine_next(s, 2, &ef) == 0 && !ef.dir && ef.fd >= 0 && ef.size == 10 && ef.mode == 0640 &&
           ef.mtime_ns == 1234567 && !ef.link, "then the file, with its mode and mtime");
        safe_close(ef.fd);
        ef = (struct engine_send_file){ .fd = -1 };
        ok(fake_engine_next(s, 3, &ef) == 0 && ef.link && !ef.dir && ef.fd >= 0 && ef.size == 5,
           "then the symlink, its target in its descriptor");
        safe_close(ef.fd);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 15, 100);
        is_int(job->state, JOB_DONE, "done");

        /* Outside a tree, no directory or symlink entries. */
        cs = (struct job_spec){ .files = 2, .job_bytes = 2 };
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "a");
        is_int(submit_spec(&f_several, &cs, make_file(1), 1, &id), 0, "a flat job of 2");
        is_int(add_file(job_of(&f_several, id), -1, 0, "d", JOB_FILE_DIR, 0, 0), -EINVAL, "takes no directory");
        is_int(add_file(job_of(&f_several, id), make_file(1), 1, "l", JOB_FILE_LINK, 0, 0), -EINVAL,
               "takes no symlink");
        jobs_cancel(f_several.jobs, id);
        run(&f_several);
        fx_teardown(&f_several);
}

/*
 * A tree retries (issue 11, item 4): every attempt starts from DEST with
 * the job's token; the entries the receiver has not acknowledged stay
 * ours, so the next attempt offers them again, or lets go of those the
 * receiver kept; one it acknowledged and then lost fails the job.
 */
static void test_tree_retry(void)
{
        struct job_spec cs = { .files = 5, .job_bytes = 60, .tree = true };
        struct engine_send_file ef;
        const struct fake_send_info *info;
        uint8_t token[WIRE_SOURCE_SIZE];
        struct engine_send *s;
        struct job *job;
        int fd2, fd3, fd4;
        uint64_t id;

        fx_setup(&f_several, "tree, retried", 4);
        f_several.cfg.retry_max = 3;
        f_several.cfg.retry_delay_max = 1;
        fx_reload(&f_several);
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "set");
        is_int(submit_spec(&f_several, &cs, -1, 0, &id), 0, "tree retry: a tree of 5 entries");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->tree && info->has_token, "tree retry: the engine gets the job's token");
        memcpy(token, info->token, sizeof(token));
        is_int(add_file(job, -1, 0, "set/d", JOB_FILE_DIR, 0, 0), 0, "tree retry: entry 2, a directory");
        fd2 = make_file(10);
        fd3 = make_file(20);
        fd4 = make_file(30);
        is_int(add_file(job, fd2, 10, "set/d/a", JOB_FILE_REGULAR, 0, 0), 0, "tree retry: entry 3");
        is_int(add_file(job, fd3, 20, "set/d/b", JOB_FILE_REGULAR, 0, 0), 0, "tree retry: entry 4");
        fake_engine_file_done(s, 0, 0);
        for (uint32_t i = 1; i <= 3; i++) {
                ef = (struct engine_send_file){ .fd = -1 };
                is_int(fake_engine_next(s, i, &ef), 0, "tree retry: the engine takes entry %u", i + 1);
                safe_close(ef.fd);
        }
        fake_engine_file_done(s, 1, 0);
        ok(!fd_closed(fd2) && !fd_closed(fd3), "tree retry: entries given but not acknowledged stay ours");
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        ok(job->state == JOB_RETRYING && job->files_done == 2,
           "tree retry: a tree retries after a transient failure, 2 entries acknowledged");

        wait_retry(&f_several, id, 2000);
        is_int(state_of(&f_several, id), JOB_CONNECTING, "tree retry: attempt 2 starts");
        s = xfer_of(&f_several, id);
        info = fake_engine_info(s);
        ok(info->files == 5 && info->job_bytes == 60 && info->size == 0 && !strcmp(info->name, "set") &&
           info->has_token && memcmp(info->token, token, sizeof(token)) == 0,
           "tree retry: from DEST again, the whole job, the same token");
        /* The receiver kept entries 0 .. 2: the engine asks for entry 4 (index 3). */
        fake_engine_file_done(s, 0, 0);
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 3, &ef), 0, "tree retry: the receiver kept 3, the engine asks for entry 4");
        ok(ef.size == 20 && !strcmp(ef.name, "set/d/b") && same_file(ef.fd, fd3), "tree retry: entry 4 again");
        safe_close(ef.fd);
        ok(fd_closed(fd2), "tree retry: the entry the receiver kept is let go");
        is_int(job->files_done, 3, "tree retry: counted done");
        fake_engine_set_progress(s, 0, 1000);
        job_refresh(job);
        is_int(job->bytes_done, 10, "tree retry: and its bytes count as sent");
        ef = (struct engine_send_file){ .fd = -1 };
        is_int(fake_engine_next(s, 4, &ef), ENGINE_NEXT_LATER, "tree retry: entry 5 not handed over yet");
        is_int(add_file(job, fd4, 30, "set/d/c", JOB_FILE_REGULAR, 0, 0), 0, "tree retry: entry 5 in");
        is_int(fake_engine_next(s, 4, &ef), 0, "tree retry: entry 5 taken");
        safe_close(ef.fd);
        fake_engine_file_done(s, 3, 20);
        ok(fd_closed(fd3) && !fd_closed(fd4), "tree retry: acknowledged, let go; in flight, kept");
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        is_int(job->state, JOB_RETRYING, "tree retry: failed again");

        /* The receiver lost what it kept: the engine asks for entry 2 again. */
        wait_retry(&f_several, id, 2000);
        s = xfer_of(&f_several, id);
        fake_engine_file_done(s, 0, 0);
        ef = (struct engine_send_file){ .fd = -1 };
        ok(fake_engine_next(s, 1, &ef) < 0, "tree retry: an entry acknowledged and let go cannot be sent again");
        fake_engine_fail(s, WIRE_E_IO, false, "file 2: Stale file handle");
        is_int(job->state, JOB_FAILED, "tree retry: the job fails, not retried");
        ok(strstr(job->text, "no longer holds entries 2 to 4") != NULL, "tree retry: saying why: %s", job->text);
        ok(fd_closed(fd4), "tree retry: what it held is closed");
        fx_teardown(&f_several);

        /* The receiver had every entry: DEST's verdict ends the job. */
        fx_setup(&f_several, "tree, every entry kept", 4);
        f_several.cfg.retry_max = 3;
        f_several.cfg.retry_delay_max = 1;
        fx_reload(&f_several);
        cs = (struct job_spec){ .files = 3, .job_bytes = 30, .tree = true };
        snprintf(cs.host, sizeof(cs.host), "192.0.2.1");
        snprintf(cs.name, sizeof(cs.name), "set");
        is_int(submit_spec(&f_several, &cs, -1, 0, &id), 0, "tree kept: a tree of 3 entries");
        job = job_of(&f_several, id);
        run(&f_several);
        s = xfer_of(&f_several, id);
        fd2 = make_file(10);
        fd3 = make_file(20);
        is_int(add_file(job, fd2, 10, "set/a", JOB_FILE_REGULAR, 0, 0), 0, "tree kept: entry 2");
        is_int(add_file(job, fd3, 20, "set/b", JOB_FILE_REGULAR, 0, 0), 0, "tree kept: entry 3");
        fake_engine_file_done(s, 0, 0);
        for (uint32_t i = 1; i <= 2; i++) {
                ef = (struct engine_send_file){ .fd = -1 };
                is_int(fake_engine_next(s, i, &ef), 0, "tree kept: the engine takes entry %u", i + 1);
                safe_close(ef.fd);
        }
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        wait_retry(&f_several, id, 2000);
        s = xfer_of(&f_several, id);
        fake_engine_file_done(s, 0, 0);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 0, 100);
        ok(job->state == JOB_DONE && job->files_done == 3 && job->bytes_done == 30,
           "tree kept: done, every entry and byte counted (%u files, %llu bytes)", job->files_done,
           (unsigned long long)job->bytes_done);
        ok(fd_closed(fd2) && fd_closed(fd3), "tree kept: the entries are let go");
        fx_teardown(&f_several);
}

/* xferctl send --bwlimit: kept with the job, handed to the engine. */
static void test_bwlimit(void)
{
        struct job_spec s = { .bwlimit = 8ull << 20 };
        struct fx f;
        struct job *job;
        uint64_t id, id2;

        fx_setup(&f, "bwlimit", 4);
        snprintf(s.host, sizeof(s.host), "192.0.2.1");
        snprintf(s.name, sizeof(s.name), "limited.bin");
        is_int(submit_spec(&f, &s, make_file(10), 10, &id), 0, "submit with a limit");
        is_int(submit(&f, "192.0.2.1", 0, "free.bin", 10, &id2, NULL), 0, "and one without");
        run(&f);
        job = job_of(&f, id);
        is_int((long long)job->bwlimit, 8ll << 20, "the job keeps its limit (for status)");
        is_int((long long)fake_engine_info(fake_engine_find(f.engine, id))->bwlimit, 8ll << 20,
               "the engine is asked for it");
        is_int((long long)fake_engine_info(fake_engine_find(f.engine, id2))->bwlimit, 0,
               "no limit unless asked");
        fake_engine_done(fake_engine_find(f.engine, id), ENGINE_DONE, WIRE_OK, "", 10, 10);
        fake_engine_done(fake_engine_find(f.engine, id2), ENGINE_DONE, WIRE_OK, "", 10, 10);
        run(&f);

        /* Below one chunk (slot_size) per peer_timeout, a tree's too: the receiver would give up. */
        f.cfg.slot_size = 1u << 20;
        f.cfg.peer_timeout = 2;
        fx_reload(&f);
        s.bwlimit = (512u << 10) - 1;
        ok(submit_spec(&f, &s, make_file(10), 10, &id) == -EINVAL && strstr(last_why, "is too low") &&
           strstr(last_why, "at least 524288"), "a bwlimit too low is refused: %s", last_why);
        s = (struct job_spec){ .tree = true, .files = 2, .job_bytes = 1, .bwlimit = 1 };
        snprintf(s.host, sizeof(s.host), "192.0.2.1");
        snprintf(s.name, sizeof(s.name), "runs/set");
        is_int(submit_spec(&f, &s, -1, 0, &id), -EINVAL, "a tree's too");
        fx_teardown(&f);
}

static void test_rate_timer(void)
{
        struct timeval wait = { 1, 300000 };
        struct engine_send *s;
        struct job *job;
        struct fx f;
        uint64_t id;

        fx_setup(&f, "rate timer", 1);
        id = submit_ok(&f, 4000000, NULL);
        run(&f);
        s = xfer_of(&f, id);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 2000000, 900000);
        job = job_of(&f, id);
        is_int(job->bytes_done, 0, "progress is not pushed: nobody asked yet");
        /* The rate timer ticks once a second from jobs_new(). */
        event_base_loopexit(f.base, &wait);
        event_base_dispatch(f.base);
        is_int(job->bytes_done, 2000000, "the rate timer refreshed the progress");
        ok(job->rate >= 1000000 && job->rate <= 4000000,
           "rate from the refreshed bytes (%llu B/s for 2 MB in about a second)",
           (unsigned long long)job->rate);
        is_int(jobs_rate_total(f.jobs), job->rate, "jobs_rate_total sums the running job");
        finish_ok(&f, id);
        fx_teardown(&f);
}

static void test_max_transfers(void)
{
        unsigned int active, queued;
        uint64_t id[5];
        struct fx f;

        fx_setup(&f, "max_transfers", 2);
        for (int i = 0; i < 5; i++)
                id[i] = submit_ok(&f, 100, NULL);
        run(&f);
        ok(state_of(&f, id[0]) == JOB_CONNECTING && state_of(&f, id[1]) == JOB_CONNECTING &&
           state_of(&f, id[2]) == JOB_QUEUED && state_of(&f, id[4]) == JOB_QUEUED,
           "the first two start, in submission order");
        is_int(count_running(&f), 2, "2 running with max_transfers = 2");
        is_int(fake_engine_live(f.engine), 2, "the engine runs 2");
        jobs_counts(f.jobs, &active, &queued);
        ok(active == 2 && queued == 3, "jobs_counts: 2 active, 3 queued");

        fake_engine_phase(xfer_of(&f, id[1]), ENGINE_PHASE_SENDING);
        finish_ok(&f, id[0]);
        is_int(state_of(&f, id[2]), JOB_QUEUED, "the next starts from the loop, not inside done");
        run(&f);
        is_int(state_of(&f, id[2]), JOB_CONNECTING, "a finished job makes room for the next");
        is_int(count_running(&f), 2, "still 2 running");

        f.cfg.max_transfers = 3;        /* SIGHUP */
        fx_reload(&f);
        run(&f);
        is_int(count_running(&f), 3, "raised max_transfers: 3 running");
        is_int(state_of(&f, id[4]), JOB_QUEUED, "the fifth still waits");

        f.cfg.max_transfers = 1;
        fx_reload(&f);
        finish_ok(&f, id[1]);
        run(&f);
        is_int(state_of(&f, id[4]), JOB_QUEUED, "lowered max_transfers: 2 running > 1, none starts");
        finish_ok(&f, id[2]);
        run(&f);
        is_int(state_of(&f, id[4]), JOB_QUEUED, "1 running = 1, none starts");
        finish_ok(&f, id[3]);
        run(&f);
        is_int(state_of(&f, id[4]), JOB_CONNECTING, "none running: the fifth starts");
        finish_ok(&f, id[4]);
        is_int(fake_engine_calls(f.engine), 5, "each job handed to the engine once");
        fx_teardown(&f);
}

static void test_pool_full(void)
{
        unsigned int active, queued;
        uint64_t id[3], lone;
        struct job *job;
        struct fx f;
        int fd;

        fx_setup(&f, "pool full", 4);
        fake_engine_set_capacity(f.engine, 1);
        for (int i = 0; i < 3; i++)
                id[i] = submit_ok(&f, 100, NULL);
        run(&f);
        is_int(state_of(&f, id[0]), JOB_CONNECTING, "the first starts");
        is_int(state_of(&f, id[1]), JOB_QUEUED, "ENGINE_SEND_FULL: the second stays queued");
        is_int(rec_find(id[1])->n, 0, "and never moved (no connecting-then-queued)");
        is_int(state_of(&f, id[2]), JOB_QUEUED, "the third waits too");
        is_int(fake_engine_calls(f.engine), 2, "scheduling stops at the first FULL");
        jobs_counts(f.jobs, &active, &queued);
        ok(active == 1 && queued == 2, "counts: 1 active, 2 queued");
        run(&f);
        is_int(fake_engine_calls(f.engine), 2, "no retry while nothing ended");

        finish_ok(&f, id[0]);
        run(&f);
        is_int(state_of(&f, id[1]), JOB_CONNECTING, "a running job ended: the second starts");
        is_int(state_of(&f, id[2]), JOB_QUEUED, "the third still waits");
        finish_ok(&f, id[1]);
        run(&f);
        is_int(state_of(&f, id[2]), JOB_CONNECTING, "then the third");
        finish_ok(&f, id[2]);
        ok(SEQ(id[1], JOB_CONNECTING, JOB_DONE), "the waiting job's watcher saw connecting, done");

        /* Nothing of ours runs, yet the pool is full: it never frees, so fail. */
        fake_engine_set_capacity(f.engine, 0);
        lone = 0;
        is_int(submit(&f, "192.0.2.1", 0, "lone", 10, &lone, &fd), 0, "submit with none running");
        run(&f);
        job = job_of(&f, lone);
        is_int(job->state, JOB_FAILED, "FULL with none running: failed, not queued forever");
        ok(strstr(job->text, "cannot start: ") == job->text && strstr(job->text, "send pool"),
           "with a reason: %s", job->text);
        is_int(job->status, WIRE_E_INTERNAL, "status internal");
        ok(fd_closed(fd), "its fd closed");
        fx_teardown(&f);
}

static void test_start_errors(void)
{
        char want[CTL_TEXT_MAX + 1];
        uint64_t a, b, bad = 0;
        unsigned int calls;
        struct job *job;
        struct fx f;
        int fd, fdbad;

        fx_setup(&f, "start errors", 2);
        fake_engine_fail_next(f.engine, -ENOMEM);
        a = submit_ok(&f, 10, &fd);
        b = submit_ok(&f, 10, NULL);
        run(&f);
        job = job_of(&f, a);
        is_int(job->state, JOB_FAILED, "engine_send -ENOMEM: failed");
        snprintf(want, sizeof(want), "cannot start: %s", strerror(ENOMEM));
        is_str(job->text, want, "text names the error");
        is_int(job->status, WIRE_E_INTERNAL, "status internal");
        ok(!job->xfer && fd_closed(fd), "no handle, fd closed");
        ok(SEQ(a, JOB_FAILED), "queued -> failed directly");
        is_int(state_of(&f, b), JOB_CONNECTING, "the next job still starts");

        /* The peer is resolved at the submit (numeric only): a job that is taken can start. */
        calls = fake_engine_calls(f.engine);
        is_int(submit(&f, "example.invalid", 0, "x", 10, &bad, &fdbad), -EINVAL, "a non-numeric host is refused");
        run(&f);
        ok(bad == 0 && count_table(&f) == 2, "bad address: no job in the table");
        is_str(last_why, "not a numeric IPv4 or IPv6 address: example.invalid", "with a clear text");
        is_int(fake_engine_calls(f.engine), calls, "the engine is not asked");
        ok(fd_closed(fdbad), "its fd closed");
        finish_ok(&f, b);
        fx_teardown(&f);
}

static void test_cancel_queued(void)
{
        struct job *job;
        uint64_t a, b;
        struct fx f;
        int fd;

        fx_setup(&f, "cancel queued", 1);
        a = submit_ok(&f, 10, NULL);
        b = submit_ok(&f, 10, &fd);
        run(&f);
        is_int(state_of(&f, b), JOB_QUEUED, "b waits");
        is_int(jobs_cancel(f.jobs, b), 0, "cancel b");
        job = job_of(&f, b);
        is_int(job->state, JOB_CANCELLED, "cancelled at once");
        ok(job->status == WIRE_OK && strcmp(job->text, "cancelled") == 0, "status ok, text 'cancelled'");
        ok(fd_closed(fd), "its fd closed");
        ok(SEQ(b, JOB_CANCELLED), "watcher saw cancelled");
        is_int(jobs_cancel(f.jobs, b), -EALREADY, "cancel again: -EALREADY");
        is_int(jobs_cancel(f.jobs, 42), -ENOENT, "unknown id: -ENOENT");
        finish_ok(&f, a);
        run(&f);
        is_int(fake_engine_calls(f.engine), 1, "the cancelled job never reached the engine");
        fx_teardown(&f);
}

static void test_cancel_running(void)
{
        struct engine_send *s;
        struct job *job;
        uint64_t a, b, c;
        struct fx f;
        int fd;

        fx_setup(&f, "cancel running", 1);
        a = submit_ok(&f, 1000, &fd);
        run(&f);
        s = xfer_of(&f, a);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 100, 50);
        is_int(jobs_cancel(f.jobs, a), 0, "cancel a running job");
        is_int(jobs_cancel(f.jobs, a), 0, "cancel it again");
        is_int(fake_engine_info(s)->cancels, 1, "engine_send_cancel called once");
        job = job_of(&f, a);
        is_int(job->state, JOB_SENDING, "still sending until the engine's done");
        ok(!fd_closed(fd), "fd still open");
        run(&f);        /* the fake delivers ENGINE_CANCELLED from the loop */
        is_int(job->state, JOB_CANCELLED, "outcome CANCELLED -> cancelled");
        is_str(job->text, "cancelled", "text from the engine");
        ok(!job->xfer && fd_closed(fd), "handle dropped, fd closed");
        is_int(jobs_cancel(f.jobs, a), -EALREADY, "cancel after the end: -EALREADY");
        ok(SEQ(a, JOB_CONNECTING, JOB_SENDING, JOB_CANCELLED),
           "watcher saw connecting, sending, cancelled");

        /* The outcome was decided before the cancel took: the engine's word counts. */
        b = submit_ok(&f, 1000, NULL);
        run(&f);
        s = xfer_of(&f, b);
        fake_engine_phase(s, ENGINE_PHASE_VERIFYING);
        is_int(jobs_cancel(f.jobs, b), 0, "cancel while verifying");
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 1000, 100);
        run(&f);
        is_int(state_of(&f, b), JOB_DONE, "done anyway: the outcome comes from the engine");

        c = submit_ok(&f, 1000, NULL);
        run(&f);
        is_int(jobs_cancel(f.jobs, c), 0, "cancel while connecting");
        run(&f);
        ok(SEQ(c, JOB_CONNECTING, JOB_CANCELLED), "connecting -> cancelled");
        fx_teardown(&f);
}

static int keeper_calls;

static void keeper_cb(struct job *job, void *userdata)
{
        keeper_calls++;
}

static void test_retention(void)
{
        enum { N = JOBS_RETAIN_FINAL + 6 };
        uint64_t running, id[N], extra, last = 0;
        bool pruned = true, kept = true;
        struct fx f;

        fx_setup(&f, "retention", 1);
        running = submit_ok(&f, 10, NULL);
        run(&f);
        for (int i = 0; i < N; i++)
                id[i] = submit_ok(&f, 10, NULL);
        job_watch(job_of(&f, id[1]), keeper_cb, NULL);
        for (int i = 0; i < N; i++)
                jobs_cancel(f.jobs, id[i]);
        is_int(count_table(&f), N + 1, "nothing pruned before the loop runs");
        run(&f);
        is_int(count_table(&f), JOBS_RETAIN_FINAL + 1, "pruned to JOBS_RETAIN_FINAL final + the running one");
        ok(jobs_find(f.jobs, running), "the running job is kept");
        ok(!jobs_find(f.jobs, id[0]), "the oldest final job is pruned");
        ok(jobs_find(f.jobs, id[1]), "a watched final job is kept");
        for (int i = 2; i < 7; i++)
                pruned &= !jobs_find(f.jobs, id[i]);
        ok(pruned, "the next oldest unwatched ones are pruned in its place");
        for (int i = 7; i < N; i++)
                kept &= jobs_find(f.jobs, id[i]) != NULL;
        ok(kept, "the newest are kept");

        job_unwatch(job_of(&f, id[1]), keeper_cb, NULL);
        extra = submit_ok(&f, 10, NULL);
        jobs_cancel(f.jobs, extra);
        run(&f);
        ok(!jobs_find(f.jobs, id[1]) && jobs_find(f.jobs, id[7]),
           "unwatched, it is the oldest and goes next");
        is_int(count_table(&f), JOBS_RETAIN_FINAL + 1, "still JOBS_RETAIN_FINAL final");

        /* The table's tail survived pruning: a new job is appended at the end. */
        extra = submit_ok(&f, 10, NULL);
        for (struct job *job = jobs_first(f.jobs); job; job = job->next)
                last = job->id;
        is_int(last, extra, "a new job goes to the end of the table");
        is_int(keeper_calls, 1, "the keeper was told of the cancel");
        finish_ok(&f, running);
        run(&f);
        fx_teardown(&f);
}

struct once {
        struct job *job;
        int calls;
};

static void once_cb(struct job *job, void *userdata)
{
        struct once *o = userdata;

        o->calls++;
        job_unwatch(job, once_cb, o);
}

static int counter_calls;

static void counter_cb(struct job *job, void *userdata)
{
        counter_calls++;
}

static void test_unwatch_in_notify(void)
{
        struct once o1 = { 0 }, o2 = { 0 };
        struct engine_send *s;
        struct job *job;
        uint64_t a;
        struct fx f;

        fx_setup(&f, "unwatch in notify", 1);
        a = submit_ok(&f, 10, NULL);
        job = job_of(&f, a);
        /* Watchers are called newest first: o2, counter, o1, then the recorder. */
        job_watch(job, once_cb, &o1);
        job_watch(job, counter_cb, NULL);
        job_watch(job, once_cb, &o2);
        run(&f);
        ok(o1.calls == 1 && o2.calls == 1 && counter_calls == 1,
           "all three told of connecting; two unwatched themselves");
        s = xfer_of(&f, a);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        ok(o1.calls == 1 && o2.calls == 1, "the self-unwatched ones are not called again");
        is_int(counter_calls, 2, "the remaining watcher still is");
        job_unwatch(job, counter_cb, NULL);
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 10, 10);
        is_int(counter_calls, 2, "unwatched outside a notify: not called");
        ok(SEQ(a, JOB_CONNECTING, JOB_SENDING, JOB_DONE), "the recorder saw it all");
        fx_teardown(&f);
}

static void test_queue_limit_and_stop(void)
{
        unsigned int active, queued;
        uint64_t first, id, queued_ids[JOBS_QUEUED_MAX], run_id = 0;
        bool all_cancelled = true;
        int fd, first_fd, last_fd = -1;
        struct job *job;
        struct fx f;

        fx_setup(&f, "queue limit, stop", 1);
        first = submit_ok(&f, 10, &first_fd);
        run(&f);
        for (int i = 0; i < JOBS_QUEUED_MAX; i++)
                queued_ids[i] = submit_ok(&f, 10, NULL);
        jobs_counts(f.jobs, &active, &queued);
        ok(active == 1 && queued == JOBS_QUEUED_MAX, "1 running and JOBS_QUEUED_MAX queued accepted");
        is_int(submit(&f, "192.0.2.1", 0, "over", 10, &id, &fd), -EBUSY, "one more: -EBUSY");
        ok(fd_closed(fd), "the refused fd is closed");

        /* The limit counts waiting jobs, not all of them. */
        finish_ok(&f, first);
        run(&f);
        is_int(state_of(&f, queued_ids[0]), JOB_CONNECTING, "the next one runs");
        run_id = queued_ids[0];
        is_int(submit(&f, "192.0.2.1", 0, "fits", 10, &id, &last_fd), 0, "room for one more in the queue");
        is_int(submit(&f, "192.0.2.1", 0, "over", 10, &id, &fd), -EBUSY, "then -EBUSY again");

        jobs_stop(f.jobs);
        for (job = jobs_first(f.jobs); job; job = job->next)
                if (job->id != first && job->id != run_id)
                        all_cancelled &= job->state == JOB_CANCELLED &&
                                         strcmp(job->text, "daemon shutting down") == 0;
        ok(all_cancelled, "jobs_stop cancels every queued job (\"daemon shutting down\")");
        ok(fd_closed(last_fd), "their fds are closed");
        is_int(state_of(&f, run_id), JOB_CONNECTING, "the running one is left to the engine");
        ok(fake_engine_info(xfer_of(&f, run_id))->cancels == 0, "and not cancelled by the job layer");
        is_int(submit(&f, "192.0.2.1", 0, "late", 10, &id, &fd), -ESHUTDOWN, "submit while stopping: -ESHUTDOWN");
        ok(fd_closed(fd), "and its fd is closed");
        /* engine_stop() fails running transfers; that done starts nothing. */
        fake_engine_done(xfer_of(&f, run_id), ENGINE_FAILED, WIRE_E_SHUTDOWN, "daemon shutting down", 0, 0);
        is_int(state_of(&f, run_id), JOB_FAILED, "the running one ends as the engine says");
        run(&f);
        is_int(fake_engine_calls(f.engine), 2, "nothing started while stopping");
        fx_teardown(&f);
}

/* One user cannot take the whole queue: cfg.max_queued_per_user per uid, root included. */
static void test_queue_per_user(void)
{
        enum { ALICE = 1001, BOB = 1002 };
        uint64_t running, a[3], b[2], id;
        unsigned int active, queued;
        bool filled = true;
        int fd;
        struct job *job;
        struct fx f;

        fx_setup(&f, "queue limit per user", 1);
        f.cfg.max_queued_per_user = 3;
        fx_reload(&f);
        is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "run", 10, &running, NULL), 0, "alice's first job");
        run(&f);
        is_int(state_of(&f, running), JOB_CONNECTING, "it runs, so it is not queued");
        job = job_of(&f, running);
        is_int(job->uid, ALICE, "the job records its submitter");
        for (int i = 0; i < 3; i++)
                is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "a", 10, &a[i], NULL), 0,
                       "alice queues job %d of 3", i + 1);
        is_int(jobs_queued_by(f.jobs, ALICE), 3, "jobs_queued_by: alice has 3 waiting");
        is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "over", 10, &id, &fd), JOBS_USER_QUEUE_FULL,
               "alice's fourth: JOBS_USER_QUEUE_FULL");
        ok(fd_closed(fd), "the refused fd is closed");
        is_int(submit_as(&f, BOB, "192.0.2.1", 0, "b", 10, &b[0], NULL), 0, "bob still queues");
        is_int(submit_as(&f, BOB, "192.0.2.1", 0, "b", 10, &b[1], NULL), 0, "and again");
        is_int(jobs_queued_by(f.jobs, BOB), 2, "bob has 2 waiting");
        is_int(jobs_queued_by(f.jobs, 4242), 0, "a user with no jobs has none");
        is_int(job_of(&f, b[0])->uid, BOB, "bob's job is bob's");

        /* Only waiting jobs count: one of alice's leaving the queue frees a place. */
        is_int(jobs_cancel(f.jobs, a[0]), 0, "cancel one of alice's queued jobs");
        is_int(jobs_queued_by(f.jobs, ALICE), 2, "alice has 2 waiting");
        is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "again", 10, &id, NULL), 0, "so she may queue one more");
        is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "over", 10, &id, NULL), JOBS_USER_QUEUE_FULL,
               "and then no more");
        finish_ok(&f, running);
        run(&f);
        is_int(state_of(&f, a[1]), JOB_CONNECTING, "her next job starts");
        is_int(jobs_queued_by(f.jobs, ALICE), 2, "a started job no longer counts");
        is_int(submit_as(&f, ALICE, "192.0.2.1", 0, "fits", 10, &id, NULL), 0, "room for one more");

        /* No exemption for root: its jobs are mostly scripts, the likeliest to run away. */
        for (int i = 0; i < 3; i++)
                filled &= submit_as(&f, 0, "192.0.2.1", 0, "root", 10, &id, NULL) == 0;
        ok(filled, "root queues 3");
        is_int(submit_as(&f, 0, "192.0.2.1", 0, "root", 10, &id, NULL), JOBS_USER_QUEUE_FULL,
               "root has the same limit");

        /* A reload that lowers the limit drops nothing; it refuses until the user is below it. */
        f.cfg.max_queued_per_user = 1;
        fx_reload(&f);
        is_int(jobs_queued_by(f.jobs, BOB), 2, "lowered: bob keeps his 2 queued jobs");
        is_int(submit_as(&f, BOB, "192.0.2.1", 0, "b", 10, &id, NULL), JOBS_USER_QUEUE_FULL,
               "but may queue no more");
        is_int(submit_as(&f, 4242, "192.0.2.1", 0, "c", 10, &id, NULL), 0, "a third user queues one");

        /* The global limit still holds whatever the per-user one allows. */
        f.cfg.max_queued_per_user = JOBS_QUEUED_MAX;
        fx_reload(&f);
        jobs_counts(f.jobs, &active, &queued);
        for (uid_t u = 2000; queued < JOBS_QUEUED_MAX; u++, queued++)
                filled &= submit_as(&f, u, "192.0.2.1", 0, "fill", 10, &id, NULL) == 0;
        ok(filled, "other users fill the rest of the queue, one job each");
        is_int(submit_as(&f, 9999, "192.0.2.1", 0, "over", 10, &id, &fd), -EBUSY,
               "a full queue is -EBUSY for a user with nothing queued");
        ok(fd_closed(fd), "its fd is closed");
        jobs_stop(f.jobs);
        finish_ok(&f, a[1]);
        run(&f);
        fx_teardown(&f);
}

/* jobs_free with jobs running and queued: every descriptor closed (checked by teardown). */
static void test_free_busy(void)
{
        struct fx f;

        fx_setup(&f, "free while busy", 1);
        submit_ok(&f, 10, NULL);
        submit_ok(&f, 10, NULL);
        submit_ok(&f, 10, NULL);
        run(&f);
        is_int(fake_engine_live(f.engine), 1, "one running, two queued");
        fx_teardown(&f);
}

/* ---- retries ---- */

/* Run the loop until job @id leaves RETRYING (its timer), at most @ms, then
 * let the scheduler start what it may. */
static void wait_retry(struct fx *f, uint64_t id, int ms)
{
        struct timeval step = { 0, 20000 };

        for (int t = 0; t < ms && state_of(f, id) == JOB_RETRYING; t += 20) {
                event_base_loopexit(f->base, &step);
                event_base_dispatch(f->base);
        }
        run(f);
}

static bool between(uint64_t v, uint64_t lo, uint64_t hi)
{
        return v >= lo && v <= hi;
}

/* A transient failure waits in RETRYING with the fd open and no place held,
 * then queues again and the same transfer is offered again; after
 * 1 + retry_max attempts the job fails, saying so. */
static void test_retry_transient(void)
{
        const struct fake_send_info *info;
        struct engine_send *s;
        unsigned int active, queued;
        uint64_t id, other, delay;
        struct job *job;
        struct fx f;
        int fd;

        fx_setup(&f, "retry a transient failure", 1);
        f.cfg.retry_max = 2;
        f.cfg.retry_delay_max = 1;
        fx_reload(&f);
        id = submit_ok(&f, 1000, &fd);
        other = submit_ok(&f, 10, NULL);
        run(&f);
        s = xfer_of(&f, id);
        is_int(fake_engine_info(s)->attempt, 1, "the engine is told attempt 1");
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_fail(s, WIRE_E_INTERNAL, true, "RDMA port rxe0/1 went down");
        job = job_of(&f, id);
        is_int(job->state, JOB_RETRYING, "transient failure: retrying");
        ok(!job->xfer && !fd_closed(fd), "no engine handle, the file stays open");
        ok(job->attempt == 2 && job_attempts(job) == 3, "attempt 2 of 3 next (%u of %u)", job->attempt,
           job_attempts(job));
        ok(job->status == WIRE_E_INTERNAL && strcmp(job->text, "RDMA port rxe0/1 went down") == 0,
           "it shows the failure's status and reason");
        delay = job_retry_in(job);
        ok(between(delay, 750000, 1000000), "first delay 1 s, up to a quarter less (%llu us)",
           (unsigned long long)delay);
        is_int(jobs_retrying(f.jobs), 1, "jobs_retrying counts it");
        jobs_counts(f.jobs, &active, &queued);
        ok(active == 0 && queued == 1, "not active: counts 0 active, 1 queued (the other job)");
        is_int(jobs_waiting(f.jobs), 2, "stats' queued figure counts it with the queued job");
        run(&f);
        is_int(state_of(&f, other), JOB_CONNECTING,
               "a retrying job holds no place in max_transfers: the next job starts");
        is_int(fake_engine_live(f.engine), 1, "and nothing of the engine's");

        wait_retry(&f, id, 2000);
        is_int(state_of(&f, id), JOB_QUEUED, "its delay over, it queues again (max_transfers is full)");
        ok(job->status == WIRE_OK && job->text[0] == '\0', "a new attempt starts with no reason shown");
        finish_ok(&f, other);
        run(&f);
        is_int(state_of(&f, id), JOB_CONNECTING, "then starts");
        s = xfer_of(&f, id);
        info = fake_engine_info(s);
        ok(info->id == id && info->attempt == 2, "the same transfer id is offered again, as attempt 2");
        ok(same_file(info->fd, fd) && info->size == 1000 && strcmp(info->name, "file.bin") == 0,
           "the same file, size and name");

        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "no progress from receiver for 30 s");
        ok(job->state == JOB_RETRYING && job->attempt == 3, "failed again: retrying, attempt 3");
        delay = job_retry_in(job);
        ok(between(delay, 750000, 1000000), "the doubled delay is capped at retry_delay_max 1 s (%llu us)",
           (unsigned long long)delay);
        wait_retry(&f, id, 2000);
        is_int(state_of(&f, id), JOB_CONNECTING, "attempt 3 starts at once with a free place");
        is_int(fake_engine_info(xfer_of(&f, id))->attempt, 3, "as attempt 3");
        fake_engine_fail(xfer_of(&f, id), WIRE_E_SHUTDOWN, true, "refused by peer: shutting down");
        is_int(job->state, JOB_FAILED, "the last attempt failed: failed");
        is_str(job->text, "refused by peer: shutting down (gave up after 3 attempts)", "saying how many");
        is_int(job->status, WIRE_E_SHUTDOWN, "with the last status");
        ok(fd_closed(fd), "the file is closed once final");
        is_int(jobs_retrying(f.jobs), 0, "nothing retrying");
        is_int(jobs_waiting(f.jobs), 0, "nothing waiting");
        ok(SEQ(id, JOB_CONNECTING, JOB_SENDING, JOB_RETRYING, JOB_QUEUED,
               JOB_CONNECTING, JOB_RETRYING, JOB_QUEUED, JOB_CONNECTING,
               JOB_FAILED), "watcher saw each attempt, RETRYING and QUEUED between them");
        fx_teardown(&f);
}

/* 1 s, then 2 s (each up to a quarter less); a cancel in RETRYING ends it at once. */
static void test_retry_backoff_cancel(void)
{
        unsigned int calls;
        uint64_t id, delay;
        struct job *job;
        struct fx f;
        int fd;

        fx_setup(&f, "backoff, cancel while retrying", 1);
        id = submit_ok(&f, 1000, &fd);
        run(&f);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        job = job_of(&f, id);
        is_int(job_attempts(job), 6, "default retry_max 5: 6 attempts");
        delay = job_retry_in(job);
        ok(between(delay, 750000, 1000000), "after attempt 1: about 1 s (%llu us)", (unsigned long long)delay);
        wait_retry(&f, id, 2000);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        delay = job_retry_in(job);
        ok(between(delay, 1400000, 2000000), "after attempt 2: about 2 s (%llu us)", (unsigned long long)delay);

        calls = fake_engine_calls(f.engine);
        is_int(jobs_cancel(f.jobs, id), 0, "cancel while retrying");
        is_int(job->state, JOB_CANCELLED, "cancelled at once");
        is_str(job->text, "cancelled", "text 'cancelled'");
        ok(fd_closed(fd), "its file is closed");
        is_int(jobs_cancel(f.jobs, id), -EALREADY, "cancel again: -EALREADY");
        wait_retry(&f, id, 200);
        {
                struct timeval t = { 2, 100000 };

                event_base_loopexit(f.base, &t);
                event_base_dispatch(f.base);
        }
        is_int(fake_engine_calls(f.engine), calls, "no attempt after the cancel, its delay long over");
        ok(SEQ(id, JOB_CONNECTING, JOB_RETRYING, JOB_QUEUED, JOB_CONNECTING,
               JOB_RETRYING, JOB_CANCELLED), "retrying -> cancelled");
        fx_teardown(&f);
}

/* A permanent failure never retries; nor does a cancel, nor a failure
 * that comes after the user asked to cancel. */
static void test_retry_permanent(void)
{
        struct job *job;
        uint64_t a, b, c, d;
        struct fx f;

        fx_setup(&f, "no retry for permanent failures", 4);
        f.cfg.retry_delay_max = 1;
        fx_reload(&f);
        a = submit_ok(&f, 10, NULL);
        b = submit_ok(&f, 10, NULL);
        c = submit_ok(&f, 10, NULL);
        d = submit_ok(&f, 10, NULL);
        run(&f);
        fake_engine_fail(xfer_of(&f, a), WIRE_E_EXISTS, false, "refused by peer: file exists");
        job = job_of(&f, a);
        is_int(job->state, JOB_FAILED, "file exists: failed at once");
        is_str(job->text, "refused by peer: file exists", "the reason as it came");
        ok(SEQ(a, JOB_CONNECTING, JOB_FAILED), "never retrying");

        fake_engine_done(xfer_of(&f, b), ENGINE_CANCELLED, WIRE_OK, "cancelled", 0, 0);
        is_int(state_of(&f, b), JOB_CANCELLED, "cancelled by the engine: cancelled");

        is_int(jobs_cancel(f.jobs, c), 0, "cancel a running job");
        fake_engine_fail(xfer_of(&f, c), WIRE_E_INTERNAL, true, "peer disconnected");
        is_int(state_of(&f, c), JOB_FAILED, "a transient failure decided before the cancel: failed, not retried");

        /* Attempt 2 meets a permanent refusal: the text says which attempt. */
        fake_engine_fail(xfer_of(&f, d), WIRE_E_SHUTDOWN, true, "refused by peer: receiver shutting down");
        wait_retry(&f, d, 2000);
        fake_engine_fail(xfer_of(&f, d), WIRE_E_AUTH, false, "refused by peer: authentication failed");
        job = job_of(&f, d);
        is_int(job->state, JOB_FAILED, "attempt 2 refused: failed");
        is_str(job->text, "refused by peer: authentication failed (attempt 2)", "naming the attempt");
        run(&f);
        fx_teardown(&f);
}

/* xferctl send --retries N replaces retry_max for the job. */
static void test_retry_per_job(void)
{
        struct job_spec sub = { .own_retries = true, .retries = 0 };
        struct job *job;
        uint64_t id;
        struct fx f;
        int fd;

        fx_setup(&f, "--retries", 2);
        strcpy(sub.host, "192.0.2.1");
        strcpy(sub.name, "n.bin");
        fd = make_file(10);
        is_int(submit_spec(&f, &sub, fd, 10, &id), 0, "submit with --retries 0");
        run(&f);
        job = job_of(&f, id);
        is_int(job_attempts(job), 1, "one attempt");
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(job->state, JOB_FAILED, "--retries 0: a transient failure is final");
        is_str(job->text, "peer unreachable", "and the text as it came");

        f.cfg.retry_max = 0;
        fx_reload(&f);
        sub.retries = 1;
        is_int(submit_spec(&f, &sub, make_file(10), 10, &id), 0,
               "submit with --retries 1 while retry_max is 0");
        run(&f);
        job = job_of(&f, id);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        ok(job->state == JOB_RETRYING && job_attempts(job) == 2, "retried: attempt 2 of 2");
        is_int(jobs_cancel(f.jobs, id), 0, "cancel it");

        sub.retries = JOB_RETRIES_MAX + 1;
        is_int(submit_spec(&f, &sub, make_file(10), 10, &id), -EINVAL,
               "more than JOB_RETRIES_MAX: -EINVAL");
        /* An unknown SUBMIT flag is control's to refuse (test-control-msg). */
        sub.retries = 1;
        sub.sync = (enum job_sync)99;
        is_int(submit_spec(&f, &sub, make_file(10), 10, &id), -EINVAL, "an unknown sync: -EINVAL");
        fx_teardown(&f);
}

/*
 * A receiver that refuses as busy (max_transfers, max_transfers_per_host)
 * said nothing about the transfer: that attempt is not counted, and the
 * next comes soon (1, 2, then 4 s at most, within retry_delay_max); other
 * failures still count.
 * With --retries 0 nothing is retried, busy or not.
 */
static void test_retry_busy(void)
{
        struct job_spec sub = { .own_retries = true, .retries = 1 };
        struct job *job;
        uint64_t id, delay;
        struct fx f;

        fx_setup(&f, "busy is not an attempt", 2);
        f.cfg.retry_delay_max = 1;
        fx_reload(&f);
        strcpy(sub.host, "192.0.2.1");
        strcpy(sub.name, "b.bin");
        is_int(submit_spec(&f, &sub, make_file(10), 10, &id), 0, "submit with --retries 1");
        run(&f);
        job = job_of(&f, id);
        for (unsigned int k = 1; k <= 4; k++) {
                fake_engine_fail(xfer_of(&f, id), WIRE_E_BUSY, true, "refused by peer: busy");
                ok(job->state == JOB_RETRYING && job->attempt == k + 1 && job_attempts(job) == 2 + k,
                   "busy %u time(s): retrying, attempt %u of %u", k, job->attempt, job_attempts(job));
                delay = job_retry_in(job);
                ok(delay <= 1000000u, "asked again within retry_delay_max (%llu us)", (unsigned long long)delay);
                wait_retry(&f, id, 5000);
                run(&f);
        }
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(job->state, JOB_RETRYING, "a counted failure, its one retry left: retrying");
        wait_retry(&f, id, 2000);
        run(&f);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(job->state, JOB_FAILED, "the second counted failure: failed");
        is_str(job->text, "peer unreachable (gave up after 6 attempts)", "after 4 busy and 2 counted attempts");

        sub.retries = 0;
        is_int(submit_spec(&f, &sub, make_file(10), 10, &id), 0, "submit with --retries 0");
        run(&f);
        job = job_of(&f, id);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_BUSY, true, "refused by peer: busy");
        is_int(job->state, JOB_FAILED, "--retries 0: busy is final too");
        fx_teardown(&f);
}

/* No attempt starts once retry_window has passed since the first failure;
 * the last one may start as it closes. */
static void test_retry_window(void)
{
        struct job *job;
        uint64_t id, delay;
        struct fx f;

        fx_setup(&f, "retry_window", 1);
        f.cfg.retry_window = 2;
        f.cfg.retry_max = 10;
        fx_reload(&f);
        id = submit_ok(&f, 10, NULL);
        run(&f);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        job = job_of(&f, id);
        ok(between(job_retry_in(job), 750000, 1000000), "first retry within the window");
        wait_retry(&f, id, 2000);
        /* About 1 s in: the doubled delay (1.5 s at least) would end past the window. */
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        delay = job_retry_in(job);
        ok(job->state == JOB_RETRYING && job->retry_usec == job->first_fail_usec + 2000000,
           "the next would start after the window: it starts as the window closes (in %llu us)",
           (unsigned long long)delay);
        wait_retry(&f, id, 2000);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(job->state, JOB_FAILED, "the window is over: failed");
        is_str(job->text, "peer unreachable (gave up after 3 attempts: retry_window 2 s is over)",
               "saying why");
        fx_teardown(&f);
}

/* A reload applies to the next decision; stopping cancels the retrying jobs
 * and retries nothing; the queue limits count retrying jobs. */
static void test_retry_reload_stop(void)
{
        uint64_t a, b, c, id;
        struct job *job;
        struct fx f;
        int fd;

        fx_setup(&f, "retry: reload, queue limits, stop", 4);
        f.cfg.retry_delay_max = 1;
        f.cfg.max_queued_per_user = 1;
        fx_reload(&f);
        a = submit_ok(&f, 10, NULL);
        run(&f);
        fake_engine_fail(xfer_of(&f, a), WIRE_E_INTERNAL, true, "peer unreachable");
        job = job_of(&f, a);
        is_int(job_attempts(job), 6, "6 attempts as configured");
        is_int(jobs_queued_by(f.jobs, TEST_UID), 1, "a retrying job counts as waiting for its user");
        is_int(submit(&f, "192.0.2.1", 0, "over", 10, &id, &fd), JOBS_USER_QUEUE_FULL,
               "so max_queued_per_user 1 refuses another");
        ok(fd_closed(fd), "the refused fd is closed");
        f.cfg.max_queued_per_user = JOBS_QUEUED_MAX;
        f.cfg.retry_max = 1;    /* SIGHUP */
        fx_reload(&f);
        is_int(job_attempts(job), 2, "after a reload to retry_max 1: 2 attempts");
        wait_retry(&f, a, 2000);
        fake_engine_fail(xfer_of(&f, a), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(job->state, JOB_FAILED, "the next decision follows the reload");
        is_str(job->text, "peer unreachable (gave up after 2 attempts)", "saying so");

        f.cfg.retry_max = 5;
        fx_reload(&f);
        b = submit_ok(&f, 10, NULL);
        c = submit_ok(&f, 10, NULL);
        run(&f);
        fake_engine_fail(xfer_of(&f, b), WIRE_E_INTERNAL, true, "peer unreachable");
        is_int(state_of(&f, b), JOB_RETRYING, "b retrying");
        jobs_stop(f.jobs);
        job = job_of(&f, b);
        ok(job->state == JOB_CANCELLED && strcmp(job->text, "daemon shutting down") == 0,
           "stopping cancels a retrying job");
        fake_engine_fail(xfer_of(&f, c), WIRE_E_SHUTDOWN, true, "daemon shutting down");
        is_int(state_of(&f, c), JOB_FAILED, "while stopping, a transient failure is final");
        run(&f);
        fx_teardown(&f);
}

/* The counters `xferctl stats` shows for the send side: every job that ended, once. */
static void test_tally(void)
{
        struct stats_tally t;
        uint64_t a, b, c, d, e, g;
        struct fx f;

        fx_setup(&f, "tally", 2);
        jobs_tally(f.jobs, &t);
        ok(t.done == 0 && t.bytes == 0, "nothing counted at start");
        a = submit_ok(&f, 1000, NULL);
        b = submit_ok(&f, 2000, NULL);
        c = submit_ok(&f, 3000, NULL);
        run(&f);
        finish_ok(&f, a);
        fake_engine_done(xfer_of(&f, b), ENGINE_FAILED, WIRE_E_EXISTS, "refused by peer: file exists",
                         0, 0);
        is_int(jobs_cancel(f.jobs, c), 0, "cancel c while it waits");
        run(&f);
        d = submit_ok(&f, 4000, NULL);
        run(&f);
        is_int(jobs_cancel(f.jobs, d), 0, "cancel d while it runs");
        run(&f);
        /* A failure whose status says nothing is still a failure, of the daemon's own. */
        e = submit_ok(&f, 5000, NULL);
        run(&f);
        fake_engine_done(xfer_of(&f, e), ENGINE_FAILED, WIRE_OK, "lost", 0, 0);
        fake_engine_fail_next(f.engine, -ENOMEM);
        g = submit_ok(&f, 6000, NULL);
        run(&f);
        is_int(state_of(&f, g), JOB_FAILED, "g could not start");

        jobs_tally(f.jobs, &t);
        ok(t.done == 1 && t.bytes == 1000, "one done, its 1000 bytes (%llu)", (unsigned long long)t.bytes);
        ok(t.failed[WIRE_E_EXISTS] == 1, "one refused: exists");
        ok(t.failed[STATS_SLOT_CANCELLED] == 2, "two cancelled, queued and running");
        ok(t.failed[WIRE_E_INTERNAL] == 2, "a failure without a status and a start failure: internal");
        uint64_t all = t.done;
        for (unsigned int k = 0; k < STATS_SLOTS; k++)
                all += t.failed[k];
        is_int(all, 6, "six jobs ended, six counted");
        fx_teardown(&f);
}

/* Submit @s (with @fd of @size bytes, or -1), watched into recs[]: its
 * id, or 0 with the error in *@r_out. */
static uint64_t submit_watched(struct fx *f, const struct job_spec *s, int fd, uint64_t size, int *r_out)
{
        uint64_t id = 0;
        struct job *job;

        *r_out = submit_spec(f, s, fd, size, &id);
        if (*r_out < 0)
                return 0;
        job = jobs_find(f->jobs, id);
        recs[n_recs] = (struct rec){ .id = id, .last = job->state };
        job_watch(job, rec_cb, &recs[n_recs]);
        n_recs++;
        return id;
}

/*
 * @route, a SUBMIT's text (ctl.h), as a job's hops in @s: as
 * ctl_route_parse() splits it (up to one hop too many), or where it cannot,
 * split at each comma as it stands, so that the job sees what is wrong.
 */
static void route_hops(struct job_spec *s, const char *route)
{
        static struct ctl_hop split[JOB_ROUTE_HOPS_MAX + 1];
        static struct job_hop hops[JOB_ROUTE_HOPS_MAX + 1];
        int n = ctl_route_parse(route, split, JOB_ROUTE_HOPS_MAX + 1);

        memset(hops, 0, sizeof(hops));
        for (int k = 0; k < n; k++) {
                memcpy(hops[k].host, split[k].host, strlen(split[k].host));
                hops[k].port = split[k].port;
        }
        s->route_hops = n > 0 ? (unsigned int)n : 0;
        for (const char *at = route; n < 0; at = strchr(at, ',') + 1) {
                size_t len = strcspn(at, ",");

                memcpy(hops[s->route_hops++].host, at, MIN(len, (size_t)JOB_HOST_MAX));
                if (!at[len])
                        break;
        }
        s->route = hops;
}

/* A chain of one file (@files: several, refused), or with @tree, a tree. */
static uint64_t submit_chain(struct fx *f, const char *host, uint16_t port, const char *route, bool tree,
                             enum job_sync sync, uint32_t files, int *r_out)
{
        struct job_spec s = { .port = port, .tree = tree, .sync = sync, .files = files, .job_bytes = 100 };

        snprintf(s.host, sizeof(s.host), "%s", host);
        snprintf(s.name, sizeof(s.name), "%s", "c.bin");
        route_hops(&s, route);
        return submit_watched(f, &s, make_file(10), 10, r_out);
}

/* A set of the nodes whose bits are in @bits (the first 64). */
static struct nodeset set_of(uint64_t bits)
{
        struct nodeset set = { { bits } };

        return set;
}

/* Whether @job's missing nodes are those of @bits, and no other. */
static bool missing_is(const struct job *job, uint64_t bits)
{
        struct nodeset want = set_of(bits);

        return nodeset_equal(&job->nodes_missing, &want);
}

/* What control.c sends of a chain's job makes a JOB ctl_encode() takes. */
static bool job_encodes(const struct job *job)
{
        /* 32 KiB each: not on the stack. */
        static struct ctl_msg m;
        static uint8_t buf[CTL_MSG_MAX];

        memset(&m, 0, sizeof(m));
        m.type = CTL_JOB;
        m.job.state = (uint8_t)job->state;
        m.job.bytes_total = job->size;
        if (job->node_bytes)
                memcpy(m.job.node_bytes, job->node_bytes, job->nodes * sizeof(job->node_bytes[0]));
        m.job.nodes = job->nodes;
        m.job.nodes_ok = job->nodes_ok;
        m.job.node_failed = job->node_failed;
        m.job.node_status = job->node_status;
        m.job.nodes_missing = job->nodes_missing;
        snprintf(m.job.node_peer, sizeof(m.job.node_peer), "%s", job->node_peer);
        snprintf(m.job.route, sizeof(m.job.route), "%s", job->route ? job->route : "");
        return ctl_encode(buf, sizeof(buf), &m) > 0;
}

static void test_chain(void)
{
        const struct fake_send_info *info;
        struct fx f;
        struct job *job;
        uint64_t id;
        char hop[WIRE_HOP_STR_MAX];
        int r;

        fx_setup(&f, "chain", 4);
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2:7471,[fd00::3],192.0.2.4", false, JOB_SYNC_NONE, 0, &r);
        is_int(r, 0, "a chain submits");
        job = job_of(&f, id);
        is_int(job->nodes, 4, "4 nodes");
        is_str(job->route, "192.0.2.2:7471,[fd00::3]:7470,192.0.2.4:7470", "the route with its ports fixed");
        run(&f);
        info = fake_engine_info(xfer_of(&f, id));
        ok(info->has_route && info->route_hops == 3, "the engine got 3 hops");
        wire_hop_str(&info->route[0], hop, sizeof(hop));
        is_str(hop, "192.0.2.2:7471", "hop 1");
        wire_hop_str(&info->route[1], hop, sizeof(hop));
        is_str(hop, "[fd00::3]:7470", "hop 2");
        wire_hop_str(&info->route[2], hop, sizeof(hop));
        is_str(hop, "192.0.2.4:7470", "hop 3");
        ok(missing_is(job, 0xf) && job->nodes_ok == 0 && job->node_failed == 0 && job_encodes(job),
           "before its end: every node missing, none failed");
        /* The peer's relay went around hop 2 (node 3): hops 1 and 3 have it. */
        fake_engine_done_chain(xfer_of(&f, id), 10, 2, set_of(0x2), 2, WIRE_E_EXISTS, "file exists");
        ok(job->state == JOB_DONE && missing_is(job, 0x4) && job->nodes_ok == 3 &&
           job->node_failed == 3 && job->node_status == WIRE_E_EXISTS, "partial: done, 3 of 4, node 3 failed");
        is_str(job->node_peer, "[fd00::3]:7470", "its address");
        is_str(job->node_text, "file exists", "its reason");
        ok(job_encodes(job), "and that makes a JOB");

        /* Hops 1 and 2 missing: node 2 failed, node 3 not reached, node 4 has it. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2:7471,[fd00::3],192.0.2.4", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 1, set_of(0x3), 1, WIRE_E_NO_SPACE, "");
        job = job_of(&f, id);
        ok(missing_is(job, 0x6) && job->nodes_ok == 2 && job->node_failed == 2 &&
           job->node_status == WIRE_E_NO_SPACE && job_encodes(job), "nodes 2 and 3 missing, 2 failed");
        is_str(job->node_peer, "192.0.2.2:7471", "node 2's address");

        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 2, set_of(0), 0, 0, "");
        job = job_of(&f, id);
        ok(job->nodes == 3 && job->nodes_ok == 3 && missing_is(job, 0) && job->node_failed == 0 &&
           job_encodes(job), "every node");

        /* The engine says less than all and no failure: the first unheard failed. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 0, set_of(0), 0, 0, NULL);
        job = job_of(&f, id);
        ok(job->nodes_ok == 1 && missing_is(job, 0x6) && job->node_failed == 2 &&
           job->node_status == WIRE_E_INTERNAL && job_encodes(job), "no word from hops 1 and 2");
        is_str(job->node_text, "no word from it", "said so");

        /* A count short of what the bits leave: those past it, in order, are missing. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3,192.0.2.4", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 1, set_of(0x1), 1, WIRE_E_IO, "disk");
        job = job_of(&f, id);
        ok(job->nodes_ok == 2 && missing_is(job, 0xa) && job->node_failed == 2 &&
           job->node_status == WIRE_E_IO && job_encodes(job), "1 of 3 hops, hop 1 missing: hop 3 is too");
        is_str(job->node_text, "disk", "hop 1 keeps its reason");

        /* A count past what the bits leave: the bits say which. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 2, set_of(0x1), 1, WIRE_E_IO, "disk");
        job = job_of(&f, id);
        ok(job->nodes_ok == 2 && missing_is(job, 0x2) && job->node_failed == 2 && job_encodes(job),
           "2 of 2 hops, hop 1 missing: the bits win");

        /* A hop_failed without its bit is missing all the same. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 2, set_of(0), 2, WIRE_E_IO, "disk");
        job = job_of(&f, id);
        ok(job->nodes_ok == 2 && missing_is(job, 0x4) && job->node_failed == 3 &&
           job->node_status == WIRE_E_IO && job_encodes(job), "hop_failed 2 with no bit: node 3 failed");

        /* hop_failed not the first missing: the first is unheard of, hop_failed's reason unsaid. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 0, set_of(0x3), 2, WIRE_E_IO, "disk");
        job = job_of(&f, id);
        ok(job->nodes_ok == 1 && missing_is(job, 0x6) && job->node_failed == 2 &&
           job->node_status == WIRE_E_INTERNAL && job_encodes(job), "hop_failed past the first missing");

        /* Bits past the route mean nothing. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_done_chain(xfer_of(&f, id), 10, 2, set_of(0x4), 0, 0, NULL);
        job = job_of(&f, id);
        ok(job->nodes_ok == 3 && missing_is(job, 0) && job->node_failed == 0 && job_encodes(job),
           "a missing bit past the route is dropped");

        /* Node 1 fails, permanently. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_DENIED, false, "refused by peer: denied");
        job = job_of(&f, id);
        ok(job->state == JOB_FAILED && job->nodes_ok == 0 && missing_is(job, 0x3) &&
           job->node_failed == 1 && job->node_status == WIRE_E_DENIED && job_encodes(job), "node 1 failed");
        is_str(job->node_peer, "192.0.2.1:7470", "node 1's address");
        is_str(job->node_text, "refused by peer: denied", "the job's reason");

        /* Cancelled while running: none has it, none failed. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        is_int(jobs_cancel(f.jobs, id), 0, "cancel a running chain");
        run(&f);
        job = job_of(&f, id);
        ok(job->state == JOB_CANCELLED && job->nodes_ok == 0 && missing_is(job, 0x7) &&
           job->node_failed == 0 && !job->node_peer[0] && job_encodes(job), "cancelled: every node missing");

        /* Transient: the whole chain again. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        fake_engine_fail(xfer_of(&f, id), WIRE_E_BUSY, true, "busy");
        job = job_of(&f, id);
        ok(job->state == JOB_RETRYING && job->node_failed == 0 && missing_is(job, 0x3) &&
           job_encodes(job), "retrying: no node verdict yet");

        submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", true, JOB_SYNC_NONE, 3, &r);
        is_int(r, -EINVAL, "a tree comes with no descriptor, chain or not");
        submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_NONE, 3, &r);
        is_int(r, -EINVAL, "nor several files");
        submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_SIZE, 0, &r);
        is_int(r, -EINVAL, "nor sync");
        /* A route's text is control's to read (test-control-msg): a hop with no address here. */
        submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,", false, JOB_SYNC_NONE, 0, &r);
        is_int(r, -EINVAL, "nor a hop with no address");
        submit_chain(&f, "192.0.2.1", 0, "not-numeric", false, JOB_SYNC_NONE, 0, &r);
        ok(r == -EINVAL && !strcmp(last_why, "not a numeric IPv4 or IPv6 address in the chain: not-numeric"),
           "a non-numeric hop is refused at the submit, saying so: %s", last_why);
        submit_chain(&f, "192.0.2.1", 7470, "192.0.2.2,[::ffff:192.0.2.1]", false, JOB_SYNC_NONE, 0, &r);
        ok(r == -EINVAL && !strcmp(last_why, "the chain names a node twice: 192.0.2.1, port 7470 (node 3)"),
           "nor a node twice, whichever way it is written: %s", last_why);
        /* The one retrying ends, so nothing is left to the teardown. */
        for (struct job *j = jobs_first(f.jobs); j; j = j->next)
                if (j->state == JOB_RETRYING)
                        jobs_cancel(f.jobs, j->id);
        run(&f);
        fx_teardown(&f);
}

/* A route of @hops hops, 10.1.x.y and on (the daemon's port), in @buf. */
static const char *route_long(char *buf, size_t size, unsigned int hops)
{
        char host[24];

        buf[0] = '\0';
        for (unsigned int i = 0; i < hops; i++) {
                snprintf(host, sizeof(host), "10.1.%u.%u", (i + 1) / 256, (i + 1) % 256);
                ctl_route_add(buf, size, host, 0);
        }
        return buf;
}

/* The longest chain: 512 nodes, the peer and 511 hops. */
static void test_chain_512(void)
{
        static char route[CTL_ROUTE_MAX + 32];
        static uint64_t bytes[ENGINE_ROUTE_MAX];
        const struct fake_send_info *info;
        struct nodeset missing = { { 0 } };
        struct engine_send *s;
        char hop[WIRE_HOP_STR_MAX];
        struct job *job;
        struct fx f;
        uint64_t id;
        size_t len;
        int r;

        fx_setup(&f, "chain of 512", 4);
        id = submit_chain(&f, "10.1.0.0", 0, route_long(route, sizeof(route), 511), false, JOB_SYNC_NONE, 0, &r);
        is_int(r, 0, "a chain of 512 nodes submits");
        job = job_of(&f, id);
        len = strlen(job->route);
        ok(job->nodes == 512 && nodeset_count(&job->nodes_missing) == 512 && job_encodes(job),
           "512 nodes, every one missing while queued");
        ok(len == strlen(route) + 511 * 5 && len + 1 < CTL_ROUTE_MAX,
           "its route holds every hop with its port, and no more than it needs (%zu bytes)", len);
        run(&f);
        s = xfer_of(&f, id);
        info = fake_engine_info(s);
        ok(info->has_route && info->route_hops == 511, "the engine got 511 hops");
        wire_hop_str(&info->route[510], hop, sizeof(hop));
        is_str(hop, "10.1.1.255:7470", "the last one 10.1.1.255:7470");

        /* The relays' word: hop k at k % 10 bytes, the last ones claiming more than the file. */
        for (unsigned int k = 0; k < ENGINE_ROUTE_MAX; k++)
                bytes[k] = k < 500 ? k % 10 : 99;
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 9, 1000);
        fake_engine_set_hops(s, 511, bytes);
        job_refresh(job);
        ok(job->node_bytes[0] == 9 && job->node_bytes[1] == 0 && job->node_bytes[5] == 4 &&
           job->node_bytes[511] == 10 && job_encodes(job), "node k + 2 has hop k's bytes, at most the size");

        /* Hop 299 (node 301) failed; the relay went around it. */
        nodeset_add(&missing, 299);
        fake_engine_done_chain(s, 10, 510, missing, 300, WIRE_E_NO_SPACE, "disk full");
        ok(job->state == JOB_DONE && nodeset_has(&job->nodes_missing, 300) &&
           nodeset_count(&job->nodes_missing) == 1 && job->nodes_ok == 511 && job->node_failed == 301 &&
           job->node_status == WIRE_E_NO_SPACE, "hop_missing bit 299 is nodes_missing bit 300: node 301 failed");
        is_str(job->node_peer, "10.1.1.44:7470", "its address: the route's 300th hop");
        ok(job->node_bytes[300] == 9 && job->node_bytes[301] == 10 && job->node_bytes[511] == 10 &&
           job_encodes(job), "it keeps its bytes, the others have the size, and that makes a JOB");

        /* The engine's numbers not adding up, at the far end of the set. */
        id = submit_chain(&f, "10.1.0.0", 0, route, false, JOB_SYNC_NONE, 0, &r);
        run(&f);
        missing = (struct nodeset){ { 0 } };
        nodeset_add(&missing, 510);
        fake_engine_done_chain(xfer_of(&f, id), 10, 509, missing, 511, WIRE_E_IO, "disk");
        job = job_of(&f, id);
        ok(nodeset_count(&job->nodes_missing) == 2 && nodeset_has(&job->nodes_missing, 510) &&
           nodeset_has(&job->nodes_missing, 511) && job->node_failed == 511 && job->nodes_ok == 510 &&
           job->node_status == WIRE_E_INTERNAL && job_encodes(job),
           "509 of 511 published, hop 511 missing: hop 510 is too, and failed first, unheard of");

        /* 512 hops after the peer: one too many. */
        snprintf(route + strlen(route), sizeof(route) - strlen(route), ",10.1.2.0");
        submit_chain(&f, "10.1.0.0", 0, route, false, JOB_SYNC_NONE, 0, &r);
        ok(r == -E2BIG && !strcmp(last_why, "a chain has at most 512 nodes (the peer and 511 more)"),
           "a chain of 513 nodes is refused: %s", last_why);
        fx_teardown(&f);
}

/* Each node's bytes: while it runs as the engine says, once done the size where published. */
static void test_chain_progress(void)
{
        static const uint64_t hops3[] = { 8, 5, 3 }, over[] = { 99, 5, 3 }, later[] = { 10, 6, 9 };
        struct engine_send *s;
        struct job *job;
        struct fx f;
        uint64_t id;
        int r;

        fx_setup(&f, "chain progress", 4);
        f.cfg.retry_delay_max = 1;
        fx_reload(&f);
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3,192.0.2.4", false, JOB_SYNC_NONE, 0, &r);
        job = job_of(&f, id);
        ok(job->nodes == 4 && job->node_bytes[0] == 0 && job->node_bytes[3] == 0 && job_encodes(job),
           "queued: every node at 0");
        run(&f);
        s = xfer_of(&f, id);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 9, 1000);
        job_refresh(job);
        ok(job->bytes_done == 9 && job->node_bytes[0] == 9 && job->node_bytes[1] == 0 && job->node_bytes[3] == 0 &&
           job_encodes(job), "before the relays report: node 1 its bytes, the others 0");
        fake_engine_set_hops(s, 3, hops3);
        job_refresh(job);
        ok(job->node_bytes[0] == 9 && job->node_bytes[1] == 8 && job->node_bytes[2] == 5 &&
           job->node_bytes[3] == 3 && job_encodes(job), "node k + 2 has hop k's bytes");
        fake_engine_set_hops(s, 3, over);
        job_refresh(job);
        ok(job->node_bytes[1] == 10 && job_encodes(job), "a relay claiming more than the file: the size");
        fake_engine_set_hops(s, 1, later);
        job_refresh(job);
        ok(job->node_bytes[1] == 10 && job->node_bytes[2] == 0 && job->node_bytes[3] == 0 && job_encodes(job),
           "hops the engine has no word of: 0");
        /* The relay went around node 3, which stopped at 6; node 4 had it all. */
        fake_engine_set_hops(s, 3, later);
        fake_engine_phase(s, ENGINE_PHASE_VERIFYING);
        job_refresh(job);
        ok(job->node_bytes[2] == 6 && job->node_bytes[3] == 9 && job_encodes(job), "verifying: as they go");
        fake_engine_done_chain(s, 10, 2, set_of(0x2), 2, WIRE_E_DENIED, "this node does not relay (relay = no)");
        ok(job->state == JOB_DONE && job->node_bytes[0] == 10 && job->node_bytes[1] == 10 &&
           job->node_bytes[2] == 6 && job->node_bytes[3] == 10 && job_encodes(job),
           "done: those that published the size, node 3 what it had");

        /* A chain that fails at node 1 transiently keeps its bytes while it waits, then starts from 0. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_NONE, 0, &r);
        job = job_of(&f, id);
        run(&f);
        s = xfer_of(&f, id);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 7, 1000);
        fake_engine_set_hops(s, 1, hops3 + 1);
        job_refresh(job);
        fake_engine_fail(s, WIRE_E_BUSY, true, "busy");
        ok(job->state == JOB_RETRYING && job->node_bytes[0] == 0 && job->node_bytes[1] == 5 &&
           job_encodes(job), "retrying: node 1 the failed attempt's result, node 2 what it had");
        wait_retry(&f, id, 2000);
        ok(job->state != JOB_RETRYING && job->node_bytes[0] == 0 && job->node_bytes[1] == 0 &&
           job_encodes(job), "the next attempt: every node from 0");
        run(&f);
        s = xfer_of(&f, id);
        fake_engine_fail(s, WIRE_E_DENIED, false, "refused by peer: denied");
        ok(job->state == JOB_FAILED && job_encodes(job), "failed: its bytes still make a JOB");

        /* Cancelled half-way: each keeps what it had. */
        id = submit_chain(&f, "192.0.2.1", 0, "192.0.2.2,192.0.2.3", false, JOB_SYNC_NONE, 0, &r);
        job = job_of(&f, id);
        run(&f);
        s = xfer_of(&f, id);
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        fake_engine_set_progress(s, 6, 1000);
        fake_engine_set_hops(s, 2, hops3 + 1);
        job_refresh(job);
        is_int(jobs_cancel(f.jobs, id), 0, "cancel a chain half-way");
        run(&f);
        ok(job->state == JOB_CANCELLED && job->node_bytes[1] == 5 && job->node_bytes[2] == 3 &&
           job_encodes(job), "cancelled: the nodes keep their bytes");
        fx_teardown(&f);
}

/* A tree of @files entries (DEST and @files - 1 more, 10 bytes a file)
 * as a chain down @route, with @sync. */
static uint64_t submit_tree_chain(struct fx *f, const char *route, enum job_sync sync, uint32_t files, int *r_out)
{
        struct job_spec s = { .tree = true, .sync = sync, .files = files, .job_bytes = 10u * (files - 1) };

        snprintf(s.host, sizeof(s.host), "192.0.2.1");
        snprintf(s.name, sizeof(s.name), "runs/set");
        route_hops(&s, route);
        return submit_watched(f, &s, -1, 0, r_out);
}

/* Entries 2 .. @files of a tree chain's job, handed over, taken by the
 * engine and acknowledged by node 1, 10 bytes a file. */
static void tree_chain_feed(struct job *job, struct engine_send *s, uint32_t files)
{
        struct engine_send_file ef;
        char name[32];

        fake_engine_file_done(s, 0, 0);
        for (uint32_t i = 1; i < files; i++) {
                snprintf(name, sizeof(name), "runs/set/f%u", i);
                if (add_file(job, make_file(10), 10, name, JOB_FILE_REGULAR, 0644, 0) < 0)
                        abort();
                ef = (struct engine_send_file){ .fd = -1 };
                if (fake_engine_next(s, i, &ef) < 0)
                        abort();
                safe_close(ef.fd);
                fake_engine_file_done(s, i, 10);
        }
}

/*
 * A tree down a chain: the engine gets the tree (DEST, every entry, its
 * token) with the route; each node's bytes and verdict are the whole
 * job's, as a file's are; a transient failure sends the whole tree to
 * the whole chain again; sync, or several plain files, make no chain.
 */
static void test_tree_chain(void)
{
        static const uint64_t hops[] = { 20, 5 }, over[] = { 99, 31 }, early[] = { 5, 0 };
        const struct fake_send_info *info;
        uint8_t token[WIRE_SOURCE_SIZE];
        char hop[WIRE_HOP_STR_MAX];
        struct engine_send *s;
        struct job *job;
        struct fx f;
        uint64_t id;
        int r;

        fx_setup(&f, "tree chain", 4);
        f.cfg.retry_max = 3;
        f.cfg.retry_delay_max = 1;
        fx_reload(&f);
        id = submit_tree_chain(&f, "192.0.2.2:7471,[fd00::3]", JOB_SYNC_NONE, 4, &r);
        is_int(r, 0, "tree chain: a tree with a route submits");
        job = job_of(&f, id);
        ok(job->tree && job->files == 4 && job->size == 30 && job->nodes == 3 && missing_is(job, 0x7) &&
           job->node_failed == 0 && job_encodes(job), "tree chain: a tree of 4 entries, 3 nodes, every one missing");
        is_str(job->route, "192.0.2.2:7471,[fd00::3]:7470", "tree chain: the route with its ports fixed");
        run(&f);
        s = xfer_of(&f, id);
        info = fake_engine_info(s);
        ok(info->tree && info->files == 4 && info->job_bytes == 30 && info->size == 0 &&
           !strcmp(info->name, "runs/set") && info->has_token, "tree chain: the engine gets the tree, from DEST");
        memcpy(token, info->token, sizeof(token));
        ok(info->has_route && info->route_hops == 2, "tree chain: and the route, 2 hops");
        wire_hop_str(&info->route[0], hop, sizeof(hop));
        is_str(hop, "192.0.2.2:7471", "tree chain: hop 1");
        wire_hop_str(&info->route[1], hop, sizeof(hop));
        is_str(hop, "[fd00::3]:7470", "tree chain: hop 2");

        /* Node 1 has 25 of the job's bytes, the relays behind it less. */
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        tree_chain_feed(job, s, 4);
        fake_engine_set_progress(s, 25, 1000);
        fake_engine_set_hops(s, 2, hops);
        job_refresh(job);
        ok(job->node_bytes[0] == 25 && job->node_bytes[1] == 20 && job->node_bytes[2] == 5 && job_encodes(job),
           "tree chain: each node's bytes of the whole job (%llu %llu %llu)",
           (unsigned long long)job->node_bytes[0], (unsigned long long)job->node_bytes[1],
           (unsigned long long)job->node_bytes[2]);
        fake_engine_set_hops(s, 2, over);
        job_refresh(job);
        ok(job->node_bytes[1] == 30 && job->node_bytes[2] == 30 && job_encodes(job),
           "tree chain: a relay claiming more than the job: the job's size");
        fake_engine_set_hops(s, 2, hops);
        job_refresh(job);
        /* Node 3 refused DEST (it exists there): nodes 1 and 2 have the tree. */
        fake_engine_done_chain(s, 30, 1, set_of(0x2), 2, WIRE_E_EXISTS, "runs/set exists");
        ok(job->state == JOB_DONE && job->files_done == 4 && job->bytes_done == 30 && missing_is(job, 0x4) &&
           job->nodes_ok == 2 && job->node_failed == 3 && job->node_status == WIRE_E_EXISTS,
           "tree chain: done, 2 of 3 nodes, node 3 failed");
        is_str(job->node_peer, "[fd00::3]:7470", "tree chain: node 3's address");
        is_str(job->node_text, "runs/set exists", "tree chain: its reason");
        ok(job->node_bytes[0] == 30 && job->node_bytes[1] == 30 && job->node_bytes[2] == 5 && job_encodes(job),
           "tree chain: those that published the job's size, node 3 what it had, and that makes a JOB");

        /* Every node. */
        id = submit_tree_chain(&f, "192.0.2.2,192.0.2.3", JOB_SYNC_NONE, 3, &r);
        job = job_of(&f, id);
        run(&f);
        s = xfer_of(&f, id);
        tree_chain_feed(job, s, 3);
        fake_engine_done_chain(s, 20, 2, set_of(0), 0, 0, NULL);
        ok(job->state == JOB_DONE && job->nodes_ok == 3 && missing_is(job, 0) && job->node_failed == 0 &&
           job->node_bytes[2] == 20 && job_encodes(job), "tree chain: every node published");

        /* Transient at node 1: the whole tree to the whole chain again, with its token. */
        id = submit_tree_chain(&f, "192.0.2.2,192.0.2.3", JOB_SYNC_NONE, 3, &r);
        job = job_of(&f, id);
        run(&f);
        s = xfer_of(&f, id);
        memcpy(token, fake_engine_info(s)->token, sizeof(token));
        fake_engine_phase(s, ENGINE_PHASE_SENDING);
        tree_chain_feed(job, s, 2);
        fake_engine_set_progress(s, 10, 1000);
        fake_engine_set_hops(s, 2, early);
        job_refresh(job);
        fake_engine_fail(s, WIRE_E_PROTOCOL, true, "peer disconnected");
        ok(job->state == JOB_RETRYING && job->node_failed == 0 && missing_is(job, 0x7) && job_encodes(job),
           "tree chain: retrying, no node verdict yet");
        wait_retry(&f, id, 2000);
        is_int(job->state, JOB_CONNECTING, "tree chain: attempt 2 starts");
        /* Node 1 keeps what it published (10 bytes, tree_chain_feed), the
         * relays' hops start over; the same after the rate timer's
         * refresh, whenever it fires. */
        ok(job->bytes_done == 10 && job->node_bytes[0] == 10 && job->node_bytes[1] == 0 &&
           job->node_bytes[2] == 0 && job_encodes(job),
           "tree chain: attempt 2: node 1 what it published, the others from 0 (%llu %llu %llu)",
           (unsigned long long)job->node_bytes[0], (unsigned long long)job->node_bytes[1],
           (unsigned long long)job->node_bytes[2]);
        job_refresh(job);
        ok(job->bytes_done == 10 && job->node_bytes[0] == 10 && job->node_bytes[1] == 0 && job->node_bytes[2] == 0,
           "tree chain: the same after a refresh (%llu bytes done)", (unsigned long long)job->bytes_done);
        s = xfer_of(&f, id);
        info = fake_engine_info(s);
        ok(info->tree && info->files == 3 && info->job_bytes == 20 && info->size == 0 && info->attempt == 2 &&
           info->has_token && memcmp(info->token, token, sizeof(token)) == 0 && info->has_route &&
           info->route_hops == 2, "tree chain: from DEST again, the whole job, its token, the whole route");
        fake_engine_fail(s, WIRE_E_DENIED, false, "refused by peer: denied");
        ok(job->state == JOB_FAILED && job->nodes_ok == 0 && missing_is(job, 0x7) && job->node_failed == 1 &&
           job->node_status == WIRE_E_DENIED && job_encodes(job), "tree chain: node 1 refused: failed, none has it");
        is_str(job->node_peer, "192.0.2.1:7470", "tree chain: node 1's address");

        /* What a chain cannot carry. */
        submit_tree_chain(&f, "192.0.2.2", JOB_SYNC_SIZE, 3, &r);
        is_int(r, -EINVAL, "tree chain: no chain for a tree with --sync");
        submit_tree_chain(&f, "192.0.2.2", JOB_SYNC_SKIP_EXISTING, 3, &r);
        is_int(r, -EINVAL, "tree chain: nor with --skip-existing");
        submit_chain(&f, "192.0.2.1", 0, "192.0.2.2", false, JOB_SYNC_NONE, 3, &r);
        is_int(r, -EINVAL, "tree chain: nor for several plain files");
        fx_teardown(&f);
}

/* A pull (xferctl get): no file goes; the peer sends one back to us. */
static void test_pull_job(void)
{
        static struct wire_landing land = {
                .direction = WIRE_LAND_PULL, .naddrs = 2, .cred = "MUNGE:x:", .path = "/scratch/a",
                .back_cred = "MUNGE:y:", .back_path = "/home/a",
        };
        struct job_spec ps = { .files = 1, .land = &land };
        struct fx f;
        struct engine_send *s;
        struct job *job;
        uint64_t id;

        fx_setup(&f, "pull", 4);
        snprintf(ps.host, sizeof(ps.host), "192.0.2.1");
        snprintf(ps.name, sizeof(ps.name), "a");
        is_int(submit_spec(&f, &ps, make_file(10), 10, &id), -EINVAL, "pull: a file with it is refused");
        is_str(last_why, "a pull comes with no descriptor, and is of one file", "pull: saying why");
        is_int(submit_spec(&f, &ps, -1, 0, &id), 0, "pull: submitted without a file");
        job = job_of(&f, id);
        ok(job->pull && strcmp(job->land_path, "/scratch/a") == 0, "pull: the job says what it reads on the peer");
        run(&f);
        s = xfer_of(&f, id);
        ok(s && fake_engine_info(s)->fd == -1 && fake_engine_info(s)->size == 0,
           "pull: the engine sends nothing of ours");
        fake_engine_done(s, ENGINE_DONE, WIRE_OK, "", 0, 1000);
        is_int(job->state, JOB_DONE, "pull: done once the peer says the file landed");
        fx_teardown(&f);
}

int main(void)
{
        test_pull_job();
        test_chain();
        test_chain_progress();
        test_chain_512();
        test_tree_chain();
        test_sync_job();
        test_delete_job();
        log_set_level(getenv("TEST_JOBS_DEBUG") ? LOG_DEBUG : LOG_WARNING);
        test_lifecycle();
        test_rate_timer();
        test_bwlimit();
        test_max_transfers();
        test_pool_full();
        test_start_errors();
        test_cancel_queued();
        test_cancel_running();
        test_retention();
        test_unwatch_in_notify();
        test_queue_limit_and_stop();
        test_queue_per_user();
        test_free_busy();
        test_retry_busy();
        test_retry_transient();
        test_retry_backoff_cancel();
        test_retry_permanent();
        test_retry_per_job();
        test_retry_window();
        test_retry_reload_stop();
        test_tally();
        test_several_files();
        test_several_files_gone();
        test_several_files_feed_failed();
        test_several_files_retry();
        test_several_files_end_feeder();
        test_tree_job();
        test_tree_retry();
        return done_testing();
}
