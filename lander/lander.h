#pragma once

/*
 * rdmaxfer-lander's service (issue 33): the requests of the lander
 * protocol (landmsg.h) answered, one at a time, on the file system layer
 * (fs/landfs.h). It holds the sessions: each one a job's identity, proven
 * by a MUNGE credential it decodes itself, bound to that job and to this
 * node, and the DEST every request of the session stays beneath.
 *
 * A session's credential is remembered (a digest of it, its binding and
 * identity) until it expires, so that the same job's next attempt, which
 * presents it again, is let in although munged calls it replayed; any
 * other use of it is not.
 */

#include <stdbool.h>
#include <stdint.h>

#include "landfs.h"
#include "landmsg.h"

#define LANDER_SESSIONS_MAX     256     /* at once, every connection together (5 KiB each) */

struct lander_settings {
        struct landfs_roots roots;      /* the lander's own: lander_new takes them */
        bool allow_root;                /* allow_root_landing */
        /* landing_max_age, where the daemons hold a key_file (keyed): how
         * long after its making a job's expired credential still proves
         * that job (SECURITY.md, Waiting past the TTL); 0: never. */
        uint32_t max_age;
        bool keyed;
        char roots_text[4096];          /* landing_roots as configured, for messages */
        const char *munge_socket;       /* NULL: MUNGE's default */
};

struct lander;

/* 0, -ENOMEM, or -EIO (MUNGE's context). Takes @s->roots (left empty). */
int lander_new(struct lander **out, struct lander_settings *s);
void lander_free(struct lander *l);

/*
 * Answer @req, which came on connection @conn with the descriptor @fd (-1:
 * none; always taken): *@reply, and *@reply_fd a descriptor to send with
 * it (-1: none; the caller closes it once sent). Never fails: whatever is
 * wrong is an ERROR that says why.
 */
void lander_handle(struct lander *l, unsigned int conn, const struct landmsg *req, int fd, struct landmsg *reply,
                   int *reply_fd);

/*
 * Answer the BATCH @req, which came on connection @conn with the @nfds
 * descriptors @fds (its LINKs', in order; always taken): each of its
 * requests as lander_handle would, in order, until one is refused; then
 * *@reply, FDS with the *@nreply descriptors in @reply_fds (one each
 * TMPFILE, LANDMSG_BATCH_MAX room; the caller closes them once sent), or
 * the refused one's ERROR and none.
 */
void lander_handle_batch(struct lander *l, unsigned int conn, const struct landmsg *req, int *fds, size_t nfds,
                         struct landmsg *reply, int *reply_fds, size_t *nreply);

/*
 * Nothing is waiting: the lander is itself again (its own fsuid, fsgid, no
 * supplementary groups). lander_handle leaves it as the user of the
 * request it answered, so that the next one of the same session, which
 * usually follows at once, needs no switch; whoever calls it calls this
 * before it waits for more. Exits the process if it cannot: it never goes
 * on as someone else.
 */
void lander_idle(struct lander *l);

/* Connection @conn is gone: its sessions end. */
void lander_conn_closed(struct lander *l, unsigned int conn);

/* Sessions open now. */
unsigned int lander_sessions(const struct lander *l);
