#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "macro.h"
#include "textfile.h"

struct textfile {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        pthread_t thread;
        /* Under lock: */
        bool started;
        bool quit;                      /* textfile_free: the thread ends */
        bool orphaned;                  /* and frees the writer: it was busy */
        bool pending;                   /* the mailbox holds a text */
        char path[PATH_MAX];
        char text[TEXTFILE_TEXT_MAX];
        size_t len;
        uint64_t busy_since;            /* CLOCK_MONOTONIC usec; 0: idle */
        int err;
        const char *err_what;
        /* The thread's own copy, touched by nobody else. */
        char wpath[PATH_MAX];
        char wtext[TEXTFILE_TEXT_MAX];
        size_t wlen;
};

int textfile_write(const char *path, const char *text, size_t len, const char **what)
{
        const char *slash = strrchr(path, '/');
        char tmp[PATH_MAX];
        _cleanup_(closep) int fd = -1;
        size_t off = 0;
        int n;

        *what = "creating";
        if (!slash || !slash[1])
                return -EINVAL;
        /* Hidden and not *.prom: a collector that lists the directory skips it. */
        n = snprintf(tmp, sizeof(tmp), "%.*s/.%s.tmp", (int)(slash - path), path, slash + 1);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return -ENAMETOOLONG;
        /* O_NOFOLLOW: a link planted under the temporary name is not followed. */
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        /* The unit's UMask=0027 would keep node_exporter's user out; the numbers are no secret. */
        if (fchmod(fd, 0644) < 0)
                goto fail;
        *what = "writing";
        while (off < len) {
                ssize_t w = write(fd, text + off, len - off);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        goto fail;
                off += (size_t)w;
        }
        /*
         * No fsync: the rename alone makes readers see a whole file, and a
         * file lost to a crash is rewritten an interval after the restart
         * (the counters start over anyway). A flush every interval would
         * cost the disk for nothing.
         */
        if (close(TAKE_FD(fd)) < 0) {
                n = -errno;
                unlink(tmp);
                return n;
        }
        *what = "renaming";
        if (rename(tmp, path) < 0) {
                n = -errno;
                unlink(tmp);
                return n;
        }
        return 0;

fail:
        n = -errno;
        unlink(tmp);
        return n;
}

static void textfile_destroy(struct textfile *t)
{
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->cond);
        free(t);
}

static void *textfile_thread(void *arg)
{
        struct textfile *t = arg;
        bool orphaned;

        pthread_mutex_lock(&t->lock);
        for (;;) {
                const char *what = NULL;
                int r;

                while (!t->pending && !t->quit)
                        pthread_cond_wait(&t->cond, &t->lock);
                if (t->quit)
                        break;
                memcpy(t->wpath, t->path, sizeof(t->wpath));
                memcpy(t->wtext, t->text, t->len);
                t->wlen = t->len;
                t->pending = false;
                t->busy_since = clock_usec(CLOCK_MONOTONIC) ?: 1;
                pthread_mutex_unlock(&t->lock);

                r = textfile_write(t->wpath, t->wtext, t->wlen, &what);

                pthread_mutex_lock(&t->lock);
                t->busy_since = 0;
                t->err = r;
                t->err_what = what;
        }
        orphaned = t->orphaned;
        pthread_mutex_unlock(&t->lock);
        if (orphaned)
                textfile_destroy(t);
        return NULL;
}

int textfile_new(struct textfile **out)
{
        struct textfile *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        pthread_mutex_init(&t->lock, NULL);
        pthread_cond_init(&t->cond, NULL);
        *out = t;
        return 0;
}

/* Under lock. Signals stay with the loop's thread (libevent's handlers). */
static int textfile_start(struct textfile *t)
{
        sigset_t all, old;
        int r;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&t->thread, NULL, textfile_thread, t);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
                return -r;
        t->started = true;
        return 0;
}

int textfile_post(struct textfile *t, const char *path, const char *text, size_t len)
{
        size_t plen = strlen(path);
        int r = 0;

        if (len > sizeof(t->text) || plen >= sizeof(t->path) || path[0] != '/')
                return -EINVAL;
        pthread_mutex_lock(&t->lock);
        if (!t->started)
                r = textfile_start(t);
        if (r == 0) {
                memcpy(t->path, path, plen + 1);
                memcpy(t->text, text, len);
                t->len = len;
                t->pending = true;
                pthread_cond_signal(&t->cond);
        }
        pthread_mutex_unlock(&t->lock);
        return r;
}

int textfile_state(struct textfile *t, const char **what, uint64_t *busy_usec)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC);
        int r;

        pthread_mutex_lock(&t->lock);
        r = t->err;
        *what = t->err_what ?: "";
        *busy_usec = t->busy_since && now > t->busy_since ? now - t->busy_since : 0;
        pthread_mutex_unlock(&t->lock);
        return r;
}

void textfile_free(struct textfile *t)
{
        pthread_t thread;
        bool started, orphan;

        if (!t)
                return;
        pthread_mutex_lock(&t->lock);
        t->quit = true;
        started = t->started;
        thread = t->thread;
        /* A write in progress may never return (a dead mount): leave it the writer. */
        orphan = t->orphaned = started && t->busy_since;
        pthread_cond_signal(&t->cond);
        pthread_mutex_unlock(&t->lock);
        /* Orphaned, @t is the thread's from here on: touch it no more. */
        if (orphan) {
                pthread_detach(thread);
                return;
        }
        if (started)
                pthread_join(thread, NULL);
        textfile_destroy(t);
}
