/*
 * A SUBMIT and the FILEs of a job of several (ctl.h): each translated into
 * what the job table takes (control-msg.c), which checks it
 * (jobs_spec_check(), jobs_file_check()) before its descriptor is: what a
 * client's file is (regular, its size) is the file system's to answer,
 * off the loop (fdcheck.h), and a FUSE or NFS file may never answer. A
 * job's FILEs are checked up to CONTROL_CHECKS_MAX at once and handed to
 * the job in order; this connection reads the next one only while the job
 * has room for it, and the job says when it has again (control_want_more).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <event2/event.h>

#include "control-int.h"
#include "fdcheck.h"
#include "jobs.h"
#include "log.h"

/* Whether @fd is open for reading, by its own flags (no file system is
 * asked): 0, -EBADF, or fcntl's -errno. */
static int control_fd_readable(int fd)
{
        int fl = fcntl(fd, F_GETFL);

        if (fl < 0)
                return -errno;
        return (fl & O_PATH) || (fl & O_ACCMODE) == O_WRONLY ? -EBADF : 0;
}

/* The first file checked out (a tree's DEST has none): queue the job. Takes @fd_in. */
static void control_submit_checked(struct control_conn *conn, const struct job_spec *spec, int fd_in,
                                   uint64_t size)
{
        _cleanup_(closep) int fd = fd_in;
        struct control *c = conn->c;
        struct ctl_msg m = { .type = CTL_SUBMITTED };
        char why[CTL_TEXT_MAX + 1];
        struct job *job;
        int r;

        /* The check took a while: the daemon may be stopping now. */
        if (!c->accepting) {
                conn_error(conn, -ESHUTDOWN, "daemon is shutting down");
                return;
        }
        r = jobs_submit(c->env.jobs, spec, TAKE_FD(fd), size, &job, why, sizeof(why));
        if (r != 0) {
                conn_error(conn, r == JOBS_USER_QUEUE_FULL ? -EDQUOT : r, "%s", why);
                return;
        }
        if (job->pull)
                log_info("job %" PRIu64 ": %s:%s to be read as its user and sent back here, submitted by uid %u "
                         "pid %d", job->id, job->peer, job->land_path, (unsigned int)conn->cred.uid,
                         (int)conn->cred.pid);
        else if (job->land_path)
                log_info("job %" PRIu64 ": %u file%s (%" PRIu64 " bytes), the first %s, to %s:%s as its user, "
                         "submitted by uid %u pid %d", job->id, job->files, job->files == 1 ? "" : "s", job->size,
                         job->name, job->peer, job->land_path, (unsigned int)conn->cred.uid, (int)conn->cred.pid);
        if (job->files > 1) {
                if (!job->land_path)
                        log_info("job %" PRIu64 ": %u files (%" PRIu64 " bytes), the first %s, to %s submitted by "
                                 "uid %u pid %d", job->id, job->files, job->size, job->name, job->peer,
                                 (unsigned int)conn->cred.uid, (int)conn->cred.pid);
                conn->feed_id = job->id;
        } else if (job->land_path) {
                /* Said above. */
        } else if (job->bwlimit > 0)
                log_info("job %" PRIu64 ": %s (%" PRIu64 " bytes) to %s submitted by uid %u pid %d, "
                         "bwlimit %" PRIu64 " bytes/s", job->id, job->name, size, job->peer,
                         (unsigned int)conn->cred.uid, (int)conn->cred.pid, job->bwlimit);
        else
                log_info("job %" PRIu64 ": %s (%" PRIu64 " bytes) to %s submitted by uid %u pid %d",
                         job->id, job->name, size, job->peer, (unsigned int)conn->cred.uid, (int)conn->cred.pid);
        m.id = job->id;
        conn_reply(conn, &m);
}

/* Read the next FILE if there is room for it in @job, and in the checks;
 * or if the job ended: reading it answers with an ERROR that says so
 * (control_file_checked), so a client blocked handing files over is let
 * go, not left waiting for room that never comes. */
static void conn_feed_more(struct control_conn *conn, const struct job *job)
{
        if (conn->dead || conn->eof || conn->checking || conn->checks_n >= CONTROL_CHECKS_MAX ||
            (job_files_room(job) <= conn->checks_n && !job_state_final(job->state)))
                return;
        event_add(conn->read_ev, NULL);
}

void control_want_more(void *owner, struct job *job)
{
        struct control *c = owner;

        for (struct control_conn *conn = c->conns; conn; conn = conn->next)
                if (!conn->dead && conn->feed_id == job->id) {
                        conn_feed_more(conn, job);
                        return;
                }
}

void conn_check_drop(struct control_conn *conn)
{
        if (conn->checking)
                fdcheck_cancel(conn->checking);
        conn->checking = NULL;
        free(conn->submit);
        conn->submit = NULL;
        for (; conn->checks_n > 0; conn->checks_n--) {
                struct control_check *k = &conn->checks[conn->checks_first];

                if (k->h)
                        fdcheck_cancel(k->h);
                k->h = NULL;
                k->fd = safe_close(k->fd);
                conn->checks_first = (conn->checks_first + 1) % CONTROL_CHECKS_MAX;
        }
}

void conn_feed_end(struct control_conn *conn)
{
        struct job *job;

        if (!conn->feed_id)
                return;
        job = jobs_find(conn->c->env.jobs, conn->feed_id);
        conn->feed_id = 0;
        /* Before its last file: the job cannot finish, so it is cancelled,
         * or fails when it was not the client's doing. */
        if (job)
                jobs_feed_end(job, conn->feed_why);
}

/* Back to reading requests after a check, whatever its end. */
static void conn_check_end(struct control_conn *conn)
{
        conn->checking = NULL;
        if (conn->dead)
                return;
        event_add(conn->read_ev, NULL);
        conn_idle_arm(conn);
}

/* A FILE's descriptor checked out (or not): the job's, or the job fails. */
static void control_file_checked(struct control_conn *conn, struct control_check *k)
{
        _cleanup_(closep) int fd = TAKE_FD(k->fd);
        struct job *job = jobs_find(conn->c->env.jobs, conn->feed_id);
        const char *name = k->file.name;
        char why[CTL_TEXT_MAX + CTL_PATH_MAX + 64];
        struct job_file_spec f;
        int r = 0;

        if (!job || job_state_final(job->state)) {
                if (job && job->text[0])
                        conn_error(conn, -ECANCELED, "job %" PRIu64 " %s before its file %s: %s", job->id,
                                   ctl_job_state_str(control_job_state(job->state)), name, job->text);
                else
                        conn_error(conn, -ECANCELED, "the job ended before its file %s", name);
                conn_close(conn);
                return;
        }
        /* Its flags were checked when it came (control_file). */
        (void)control_file_spec(&k->file, &f);
        f.size = k->size;
        /* A landing's file keeps its mode, as the daemon sees it. */
        if (job->land_path && f.kind == JOB_FILE_REGULAR)
                f.mode = k->mode;
        if (k->res < 0)
                snprintf(why, sizeof(why), "cannot stat %s: %s", name, strerror(-k->res));
        else if (!k->regular)
                snprintf(why, sizeof(why), "%s is not a regular file", name);
        else if (k->size != k->file.size && f.kind != JOB_FILE_DIR)
                snprintf(why, sizeof(why), "%s: %" PRIu64 " bytes, the client said %" PRIu64, name, k->size,
                         k->file.size);
        else if ((r = jobs_add_file(job, TAKE_FD(fd), &f)) < 0)
                snprintf(why, sizeof(why), "%s: %s", name,
                         r == -E2BIG ? "more files or bytes than the job announced" : strerror(-r));
        else
                why[0] = '\0';
        if (why[0]) {
                /* The job cannot be what the client announced: it ends here. */
                conn_error(conn, -EINVAL, "%s", why);
                conn_close(conn);
                return;
        }
        if (job_files_complete(job)) {
                conn->feed_id = 0;
                conn_idle_arm(conn);
        } else if ((unsigned int)r <= conn->checks_n) {
                event_del(conn->read_ev);
        }
}

/* The FILEs checked, oldest first, to the job, up to the first still out;
 * then reading goes on while there is room. */
static void control_checks_drain(struct control_conn *conn)
{
        struct job *job;

        while (!conn->dead && conn->checks_n > 0 && conn->checks[conn->checks_first].done) {
                struct control_check k = conn->checks[conn->checks_first];

                conn->checks_first = (conn->checks_first + 1) % CONTROL_CHECKS_MAX;
                conn->checks_n--;
                control_file_checked(conn, &k);
        }
        if (conn->dead)
                return;
        /* The client handed its last FILE over and went: it is done now. */
        if (conn->eof && conn->checks_n == 0) {
                conn_close(conn);
                return;
        }
        conn_idle_arm(conn);
        job = conn->feed_id ? jobs_find(conn->c->env.jobs, conn->feed_id) : NULL;
        if (job && !conn->eof && !conn->checking && conn->checks_n < CONTROL_CHECKS_MAX &&
            job_files_room(job) > conn->checks_n)
                event_add(conn->read_ev, NULL);
}

static void control_on_file_fstat(void *userdata, int fd, int res, uint32_t mode, uint64_t size)
{
        struct control_check *k = userdata;

        k->h = NULL;
        k->fd = fd;
        k->done = true;
        k->res = res;
        k->regular = S_ISREG(mode);
        k->mode = mode & 07777;
        k->size = size;
        control_checks_drain(k->conn);
}

static void control_on_fstat(void *userdata, int fd_in, int res, uint32_t mode, uint64_t size)
{
        _cleanup_(closep) int fd = fd_in;
        struct control_conn *conn = userdata;
        _cleanup_(freep) struct control_spec *spec = TAKE_PTR(conn->submit);

        conn_check_end(conn);
        if (res < 0)
                conn_error(conn, res, "cannot stat the file: %s", strerror(-res));
        else if (!S_ISREG(mode))
                conn_error(conn, -EINVAL, "not a regular file");
        else {
                /* A landing's first file keeps its mode (a tree's DEST came with its own). */
                if (spec->spec.land)
                        spec->spec.mode = mode & 07777;
                control_submit_checked(conn, &spec->spec, TAKE_FD(fd), size);
        }
}

void conn_check_timeout(struct control_conn *conn)
{
        unsigned int t = conn->c->env.cfg.io_timeout;

        log_warning("control: %s of uid %u pid %d did not answer a stat within %u s",
                    conn->checking ? "the file" : "a file", (unsigned int)conn->cred.uid, (int)conn->cred.pid, t);
        if (conn->checking) {
                conn_check_drop(conn);
                conn_check_end(conn);
                conn_error(conn, -ETIMEDOUT, "checking the file: no answer within %u s", t);
                return;
        }
        /* A FILE of a job of several: the job cannot go on without it.
         * First: saying it to a client that has gone closes the connection. */
        conn->feed_why = "a file handed over did not answer a stat within io_timeout";
        conn_error(conn, -ETIMEDOUT, "checking %s: no answer within %u s", conn->checks[conn->checks_first].file.name,
                   t);
        conn_close(conn);
}

void control_submit(struct control_conn *conn, const struct ctl_submit *s, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        _cleanup_(freep) struct control_spec *spec = NULL;
        struct control *c = conn->c;
        char why[CTL_TEXT_MAX + 1];
        int r;

        if (!c->accepting) {
                conn_error(conn, -ESHUTDOWN, "daemon is shutting down");
                return;
        }
        r = control_spec_new(s, conn->cred.uid, &spec, why, sizeof(why));
        if (r >= 0)
                r = jobs_spec_check(c->env.jobs, &spec->spec, why, sizeof(why));
        if (r < 0) {
                conn_error(conn, r, "%s", why);
                return;
        }
        /* A tree's DEST is no file, nor is a pull's: nothing to check (the
         * job table refuses a descriptor that came with it). */
        if (spec->spec.tree || (s->flags & CTL_SUBMIT_PULL)) {
                control_submit_checked(conn, &spec->spec, TAKE_FD(fd), 0);
                return;
        }
        if (fd < 0) {
                conn_error(conn, -EINVAL, "no file descriptor came with the request");
                return;
        }
        r = control_fd_readable(fd);
        if (r == -EBADF) {
                conn_error(conn, r, "file descriptor is not open for reading");
                return;
        }
        if (r < 0) {
                conn_error(conn, r, "cannot inspect the file descriptor: %s", strerror(-r));
                return;
        }
        /* What the file is (regular, its size) is the file system's to
         * answer, off the loop; this client's requests wait meanwhile. */
        r = fdcheck_start(c->env.fdchecks, TAKE_FD(fd), control_on_fstat, conn, &conn->checking);
        if (r < 0) {
                conn_error(conn, r, "cannot stat the file: %s", strerror(-r));
                return;
        }
        conn->submit = TAKE_PTR(spec);
        event_del(conn->read_ev);
}

void control_file(struct control_conn *conn, const struct ctl_file *f, int fd_in)
{
        _cleanup_(closep) int fd = fd_in;
        const char *shown = f->name[0] ? f->name : "(no name)";
        struct job *job = conn->feed_id ? jobs_find(conn->c->env.jobs, conn->feed_id) : NULL;
        char why[CTL_TEXT_MAX + 1];
        struct job_file_spec spec;
        struct control_check *k;
        int r;

        if (!job || f->id != conn->feed_id) {
                conn_error(conn, -EINVAL, "FILE for job %" PRIu64 ", which takes no files from this "
                           "connection", f->id);
                conn_close(conn);
                return;
        }
        if (control_file_spec(f, &spec) < 0 || (spec.kind == JOB_FILE_DIR && fd >= 0)) {
                conn_error(conn, -EINVAL, "%s: bad FILE flags 0x%x", shown, (unsigned int)f->flags);
                conn_close(conn);
                return;
        }
        if (jobs_file_check(job, &spec, why, sizeof(why)) < 0) {
                conn_error(conn, -EINVAL, "%s", why);
                conn_close(conn);
                return;
        }
        if (spec.kind != JOB_FILE_DIR && (fd < 0 || control_fd_readable(fd) < 0)) {
                conn_error(conn, -EINVAL, "%s: no descriptor open for reading", shown);
                conn_close(conn);
                return;
        }
        if (!conn->checks)
                conn->checks = calloc(CONTROL_CHECKS_MAX, sizeof(*conn->checks));
        if (!conn->checks || conn->checks_n >= CONTROL_CHECKS_MAX) {
                conn_error(conn, -ENOMEM, "%s: no room to check it", f->name);
                conn_close(conn);
                return;
        }
        /* In order behind the FILEs still checked; a directory needs no check. */
        k = &conn->checks[(conn->checks_first + conn->checks_n) % CONTROL_CHECKS_MAX];
        *k = (struct control_check){ .conn = conn, .file = *f, .fd = -1, .done = spec.kind == JOB_FILE_DIR,
                                     .regular = true };
        if (!k->done) {
                r = fdcheck_start(conn->c->env.fdchecks, TAKE_FD(fd), control_on_file_fstat, k, &k->h);
                if (r < 0) {
                        conn_error(conn, r, "cannot stat %s: %s", f->name, strerror(-r));
                        conn_close(conn);
                        return;
                }
        }
        conn->checks_n++;
        if (conn->checks_n >= CONTROL_CHECKS_MAX || job_files_room(job) <= conn->checks_n)
                event_del(conn->read_ev);
        control_checks_drain(conn);
}
