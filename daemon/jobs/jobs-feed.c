/*
 * The files of a job of several (jobs.h): the feeder hands them over in
 * order (jobs_add_file), a ring holds them until the engine asks for them
 * (ops->next; ENGINE_NEXT_LATER when none is there yet, and
 * engine_send_resume() once one is), and the feeder hears when there is
 * room again (want_more). A tree's entries stay in the ring until the
 * receiver acknowledged them, so that a retry can offer them again; a
 * plain job keeps the file the engine is on, for a retry to start from.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "jobs-int.h"
#include "log.h"
#include "name.h"

/* The engine's view of a file held. */
static void job_file_export(const struct job_file *a, int fd, struct engine_send_file *f)
{
        *f = (struct engine_send_file){ .fd = fd, .size = a->size, .name = job_file_name(a),
                                        .dir = a->kind == JOB_FILE_DIR,
                                        .link = a->kind == JOB_FILE_LINK || a->kind == JOB_FILE_HARDLINK,
                                        .hard = a->kind == JOB_FILE_HARDLINK,
                                        .mode = a->mode, .mtime_ns = a->mtime_ns, .xattrs = a->xattrs,
                                        .xattrs_len = a->xattrs_len };
}

/* The engine took one of @job's files: its feeder may hand over another. */
static void job_want_more(struct job *job)
{
        struct jobs *jobs = job->jobs;

        if (job_entry(job)->fed && jobs->want_more)
                jobs->want_more(jobs->feeder, job);
}

void job_ahead_drop(struct job_entry *e)
{
        while (e->ahead_n > 0) {
                safe_close(e->ahead[e->ahead_first].fd);
                job_file_let_go(&e->ahead[e->ahead_first]);
                e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
                e->ahead_n--;
        }
}

void job_ring_pop(struct job *job, bool skipped)
{
        struct job_entry *e = job_entry(job);
        struct job_file *a = &e->ahead[e->ahead_first];

        if (skipped) {
                e->published += a->size;
                e->base_bytes += a->size;
        }
        safe_close(a->fd);
        job_file_let_go(a);
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        if (e->given > 0)
                e->given--;
        job->files_done = MAX(job->files_done, e->ring_index + 1);
        e->ring_index++;
}

/*
 * How many of its client's files a job may hold that the engine has not
 * taken: every one is a descriptor. A running job, whose tree's small
 * files the engine packs (engine.h), gets jobs->ahead_max; a waiting one
 * only JOBS_FILES_AHEAD, so JOBS_QUEUED_MAX of them stay within the
 * reserve jobs_new() sized ahead_max around.
 */
static unsigned int job_ahead_max(const struct job *job)
{
        return job->xfer ? job->jobs->ahead_max : JOBS_FILES_AHEAD;
}

/* The ring full: twice the room, in order from 0. */
static int job_ahead_grow(struct job_entry *e)
{
        unsigned int cap = e->ahead_cap ? 2 * e->ahead_cap : JOBS_FILES_AHEAD;
        struct job_file *a = calloc(cap, sizeof(*a));

        if (!a)
                return -ENOMEM;
        for (unsigned int i = 0; i < e->ahead_n; i++)
                a[i] = e->ahead[(e->ahead_first + i) % e->ahead_cap];
        free(e->ahead);
        e->ahead = a;
        e->ahead_cap = cap;
        e->ahead_first = 0;
        return 0;
}

/* A tree's entry @index for the engine: entries before it that the
 * receiver kept are let go; the entry stays ours until acknowledged. */
static int jobs_on_next_entry(struct job *job, uint32_t index, struct engine_send_file *f)
{
        struct job_entry *e = job_entry(job);
        struct job_file *a;
        int fd = -1;

        if (index < e->ring_index) {
                /* Acknowledged, let go, and now asked for again: the
                 * receiver lost what it held (a landing's tree it never
                 * keeps: recv-land-tree.c). Not transient: jobs_on_done. */
                if (job->land_path)
                        snprintf(e->feed_why, sizeof(e->feed_why),
                                 "a tree that lands as its user starts over after a failed attempt, and "
                                 "entries %u to %u had gone already; nothing of it was published: send "
                                 "the tree again", index + 1, e->ring_index);
                else
                        snprintf(e->feed_why, sizeof(e->feed_why),
                                 "the receiver no longer holds entries %u to %u it had acknowledged "
                                 "(its kept tree expired or was lost); send the tree again",
                                 index + 1, e->ring_index);
                return -ESTALE;
        }
        /* The attempt's first after DEST: what the receiver kept goes. */
        if (e->given == 0)
                while (e->ring_index < index && e->ahead_n > 0)
                        job_ring_pop(job, true);
        if (e->given != index - e->ring_index && !(e->given == 0 && e->ahead_n == 0))
                return -EINVAL;         /* the engine asks in order */
        if (e->given >= e->ahead_n) {
                if (e->feed_why[0])
                        return -EMFILE; /* never coming: jobs_on_done says why */
                e->want_next = true;
                return ENGINE_NEXT_LATER;
        }
        a = &e->ahead[(e->ahead_first + e->given) % e->ahead_cap];
        if (a->fd >= 0) {
                fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3);
                if (fd < 0)
                        return -errno;
        }
        job_file_export(a, fd, f);
        log_debug("job %" PRIu64 ": entry %u of %u, %s (%" PRIu64 " bytes)", job->id, index + 1, job->files,
                  job_file_name(a), a->size);
        e->given++;
        job_want_more(job);
        return 0;
}

int jobs_on_next(void *owner, uint32_t index, struct engine_send_file *f)
{
        struct job *job = owner;
        struct job_entry *e = job_entry(job);
        struct job_file *a;
        int fd;

        if (job->tree)
                return jobs_on_next_entry(job, index, f);
        if (e->ahead_n == 0 && e->feed_why[0])
                return -EMFILE; /* never coming: jobs_on_done says why */
        if (e->ahead_n == 0) {
                e->want_next = true;
                return ENGINE_NEXT_LATER;
        }
        a = &e->ahead[e->ahead_first];
        /* Ours too, until it is published: a retry starts from it. */
        fd = fcntl(a->fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        /* cur takes what it holds (the ring lets go of it below). */
        safe_close(e->cur.fd);
        job_file_let_go(&e->cur);
        e->cur = *a;
        e->cur.fd = fd;
        e->cur_index = e->base + index;
        /* The engine takes the descriptor. */
        job_file_export(a, a->fd, f);
        log_debug("job %" PRIu64 ": file %u of %u, %s (%" PRIu64 " bytes)", job->id, e->base + index + 1,
                  job->files, a->name, a->size);
        a->fd = -1;
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        job_want_more(job);
        return 0;
}

void jobs_on_file_done(void *owner, uint32_t index, uint64_t bytes)
{
        struct job *job = owner;
        struct job_entry *e = job_entry(job);

        e->published += bytes;
        if (job->tree) {
                /* DEST (index 0) is not in the ring. */
                while (e->ahead_n > 0 && e->ring_index <= index)
                        job_ring_pop(job, false);
                job->files_done = MAX(job->files_done, index + 1);
                return;
        }
        job->files_done = e->base + index + 1;
        if (e->cur.fd >= 0 && e->cur_index < job->files_done)
                e->cur.fd = safe_close(e->cur.fd);
}

int jobs_file_check(const struct job *job, const struct job_file_spec *f, char *why, size_t whylen)
{
        const char *shown = f->name[0] ? f->name : "(no name)";
        size_t len = strnlen(f->name, JOB_PATH_MAX + 1);
        enum name_verdict v;

        if (f->kind != JOB_FILE_REGULAR && !job->tree) {
                snprintf(why, whylen, "%s: a directory or symlink, which only a tree has", shown);
                return -EINVAL;
        }
        if (f->kind == JOB_FILE_LINK && (f->size == 0 || f->size > NAME_LINK_MAX)) {
                snprintf(why, whylen, "%s: a symlink's target of %" PRIu64 " bytes (1 to %u)", shown, f->size,
                         NAME_LINK_MAX);
                return -EINVAL;
        }
        if (f->kind == JOB_FILE_HARDLINK && (f->size == 0 || f->size > JOB_PATH_MAX)) {
                snprintf(why, whylen, "%s: a hard link's target name of %" PRIu64 " bytes (1 to %u)", shown,
                         f->size, JOB_PATH_MAX);
                return -EINVAL;
        }
        /* Attributes go with a landing that asked for them (wire.h,
         * Attributes), on a file or a directory. */
        if (f->xattrs_len &&
            (!job_entry_const(job)->land || f->kind == JOB_FILE_LINK || f->kind == JOB_FILE_HARDLINK ||
             !wire_land_xattrs_ok(job_entry_const(job)->land->flags, f->xattrs, f->xattrs_len))) {
                snprintf(why, whylen, "%s: attributes where the job carries none, or malformed", shown);
                return -EINVAL;
        }
        if (f->kind == JOB_FILE_DIR && f->size != 0) {
                snprintf(why, whylen, "%s: a directory of %" PRIu64 " bytes", shown, f->size);
                return -EINVAL;
        }
        /* In a tree, "DEST/a/b": the receiver checks it is beneath DEST. */
        v = len > (job->tree ? JOB_PATH_MAX : JOB_NAME_MAX) ? NAME_TOO_LONG :
            job->tree ? name_path_check(f->name, len, NULL) : name_check(f->name, len);
        if (v != NAME_OK) {
                snprintf(why, whylen, "%s: %s", shown, name_verdict_str(v));
                return -EINVAL;
        }
        return 0;
}

int jobs_add_file(struct job *job, int fd_in, const struct job_file_spec *f)
{
        _cleanup_(closep) int fd = fd_in;
        struct job_entry *e = job_entry(job);
        char why[JOB_TEXT_MAX + JOB_PATH_MAX + 64];
        struct job_file *a;

        if (job_state_final(job->state))
                return -EALREADY;
        if (job->files_in >= job->files || f->size > job->size - e->bytes_in)
                return -E2BIG;
        if (jobs_file_check(job, f, why, sizeof(why)) < 0 || (f->kind == JOB_FILE_DIR) != (fd < 0))
                return -EINVAL;
        if (e->ahead_n == e->ahead_cap && job_ahead_grow(e) < 0)
                return -ENOMEM;
        a = &e->ahead[(e->ahead_first + e->ahead_n) % e->ahead_cap];
        *a = (struct job_file){ .fd = TAKE_FD(fd), .kind = f->kind, .mode = f->mode, .mtime_ns = f->mtime_ns,
                                .size = f->size };
        if (strlen(f->name) > JOB_NAME_MAX) {
                a->lname = strdup(f->name);
                if (!a->lname) {
                        safe_close(a->fd);
                        return -ENOMEM;
                }
        } else {
                memcpy(a->name, f->name, strlen(f->name) + 1);
        }
        if (f->xattrs_len) {
                a->xattrs = malloc(f->xattrs_len);
                if (!a->xattrs) {
                        safe_close(a->fd);
                        job_file_let_go(a);
                        return -ENOMEM;
                }
                memcpy(a->xattrs, f->xattrs, f->xattrs_len);
                a->xattrs_len = f->xattrs_len;
        }
        e->ahead_n++;
        e->bytes_in += f->size;
        job->files_in++;
        if (job->files_in >= job->files)
                e->fed = false;
        if (e->want_next && job->xfer) {
                e->want_next = false;
                engine_send_resume(job->xfer);
        }
        /* A retry may have waited for the file it starts from. */
        if (job->state == JOB_QUEUED && job->files_done > 0)
                jobs_kick(job->jobs);
        return (int)job_files_room(job);
}

unsigned int job_files_room(const struct job *job)
{
        const struct job_entry *e = container_of(job, struct job_entry, job);

        if (job_state_final(job->state) || job->files_in >= job->files)
                return 0;
        /* A tree's entries given to the engine stay until acknowledged: not counted. */
        return job_ahead_max(job) > e->ahead_n - e->given ? job_ahead_max(job) - (e->ahead_n - e->given) : 0;
}

bool job_files_complete(const struct job *job)
{
        return job->files_in >= job->files;
}

void jobs_set_feeder(struct jobs *jobs, jobs_want_more_fn want_more, void *owner)
{
        jobs->want_more = want_more;
        jobs->feeder = owner;
}

void jobs_feed_end(struct job *job, const char *why)
{
        struct job_entry *e = job_entry(job);

        e->fed = false;
        if (job_state_final(job->state) || job_files_complete(job))
                return;
        if (!why) {
                log_notice("job %" PRIu64 ": its client went away after %u of %u files; cancelling", job->id,
                           job->files_in, job->files);
                (void)jobs_cancel(job->jobs, job->id);
                return;
        }
        /* Not the user's doing: the job fails, with the reason, once the
         * engine has sent what it holds (and asks for what never comes). */
        snprintf(e->feed_why, sizeof(e->feed_why), "file %u: %s", job->files_in + 1, why);
        log_warning("job %" PRIu64 ": %s", job->id, e->feed_why);
        if (!job->xfer) {
                job_finish(job, JOB_FAILED, WIRE_E_INTERNAL, e->feed_why);
                return;
        }
        if (e->want_next) {
                e->want_next = false;
                engine_send_resume(job->xfer);
        }
}

/*
 * What an attempt starts from: the job's first file; in a retry after
 * some files were published, the first one not published (the one the
 * engine was on, or the next the client handed over). NULL while the
 * client has not handed that one over yet: jobs_add_file kicks then.
 */
const struct job_file *job_first_file(struct job *job)
{
        struct job_entry *e = job_entry(job);

        e->base = job->files_done;
        e->base_bytes = e->published;
        e->base_skipped = job->files_skipped;
        /* A tree starts from DEST every time: the receiver says what it
         * kept, the ring has the rest (jobs_on_next_entry). */
        if (job->tree) {
                e->base = 0;
                e->given = 0;
        }
        if (job->files_done == 0 || job->tree) {
                e->first = (struct job_file){ .fd = job->fd, .size = job->first_size };
                snprintf(e->first.name, sizeof(e->first.name), "%s", job->name);
                return &e->first;
        }
        if (e->cur.fd >= 0 && e->cur_index == job->files_done)
                return &e->cur;
        e->cur.fd = safe_close(e->cur.fd);
        if (e->ahead_n == 0)
                return NULL;
        /* The engine takes it as its first file: keep ours as cur. */
        job_file_let_go(&e->cur);
        e->cur = e->ahead[e->ahead_first];
        e->cur_index = job->files_done;
        e->ahead_first = (e->ahead_first + 1) % e->ahead_cap;
        e->ahead_n--;
        job_want_more(job);
        return &e->cur;
}
