#pragma once

/*
 * What control's files share: the socket and its connections. control.c
 * holds the connections (accepting, limits, reading and dispatch, idle
 * and refused clients, replies); control-submit.c a SUBMIT and a job's
 * FILEs (their descriptors checked, the files fed to the job);
 * control-list.c the queries (STATUS, WATCH, LIST, CANCEL, STATS, SETTINGS);
 * control-msg.c the translation between ctl messages and jobs' model.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <event2/event.h>

#include "control.h"
#include "control-msg.h"
#include "control-socket.h"
#include "macro.h"

struct fdcheck;

/* A job of several files: how many of its FILEs' descriptors may be
 * checked off the loop at once (control_file). */
#define CONTROL_CHECKS_MAX      32

/* One FILE whose descriptor is being checked: it becomes the job's once it
 * and every FILE before it checked out (a directory needs no check). */
struct control_check {
        struct control_conn *conn;
        struct fdcheck *h;              /* while the kernel has it, with the descriptor */
        struct ctl_file file;
        int fd;                         /* handed back by the check; -1 until then */
        bool done;
        bool regular;
        uint32_t mode;          /* its permission bits, as the daemon saw them */
        int res;
        uint64_t size;
};

struct control_conn {
        struct control *c;
        int fd;
        struct ucred cred;
        struct event *read_ev;
        struct event *write_ev;         /* armed only while a LIST waits for room */
        struct event *idle_ev;          /* client_idle_timeout; for a refused one, its wait */
        struct job *watch;              /* job this client WATCHes, or NULL */
        bool sees_all;                  /* root, the daemon's user or admin_group: every job */
        bool refusing;                  /* over a limit: gets @refusal once its request is in */
        struct ctl_error refusal;       /* not a whole ctl_msg: 32 KiB a connection */
        bool listing;
        uint64_t list_next;             /* id of the next job to LIST (ids rise in table order) */
        /* ITEMS streams as LIST does (listing): the job's id, the next item. */
        uint64_t items_id;
        uint32_t items_next;
        bool dead;                      /* closed; freed by reap_ev */
        /* A SUBMIT whose file is being checked off the loop (a FUSE or NFS
         * file may never answer): reading waits, idle_ev is its deadline.
         * Its job is allocated for as long (a route makes it 32 KiB). */
        struct fdcheck *checking;       /* has the SUBMIT's descriptor */
        struct control_spec *submit;
        /* The job of several files this client hands its files to (ctl.h):
         * reading waits while the job holds as many as it takes. */
        uint64_t feed_id;
        const char *feed_why;           /* why the feed ended, when not the client's doing */
        char feed_text[CTL_TEXT_MAX + 1];       /* an ERROR said on the feed: feed_why then */
        /* Its FILEs in order, a ring of CONTROL_CHECKS_MAX (allocated with
         * the first): reading waits while it is full, or holds as many as
         * the job has room for; io_timeout without an answer ends them. */
        struct control_check *checks;
        unsigned int checks_first, checks_n;
        bool eof;                       /* the client is done: closed once they are in */
        struct control_conn *next;
};

struct control {
        struct control_env env;         /* env.cfg: control's own copy */
        struct control_socket sock;
        bool accepting;                 /* SUBMIT allowed */
        struct event *accept_ev;
        struct event *accept_retry_ev;  /* after EMFILE: pause instead of spinning */
        struct event *tick_ev;
        struct event *reap_ev;
        struct control_conn *conns;
        unsigned int n_conns, n_watching;
        unsigned int n_refusing;        /* refused connections waiting for their request */
};

/* control.c */
/* Idle means no request in progress and no watch (control.c). */
void conn_idle_arm(struct control_conn *conn);
/* Closed now, freed from a deferred event. */
void conn_close(struct control_conn *conn);
/* A reply the client waits for: if it cannot be sent, the connection is closed. */
int conn_reply(struct control_conn *conn, const struct ctl_msg *m);
int conn_error(struct control_conn *conn, int code, const char *fmt, ...) _printf_(3, 4);

/* control-submit.c */
void control_submit(struct control_conn *conn, const struct ctl_submit *s, int fd);
void control_file(struct control_conn *conn, const struct ctl_file *f, int fd);
/* The job table's feeder callback (jobs_set_feeder()). */
void control_want_more(void *owner, struct job *job);
/* Stop waiting for the files' checks (closing, timing out). */
void conn_check_drop(struct control_conn *conn);
/* This client hands its job no more files. */
void conn_feed_end(struct control_conn *conn);
/* The SUBMIT's file, or the first of the FILEs, did not answer within io_timeout. */
void conn_check_timeout(struct control_conn *conn);

/* control-list.c */
void control_status(struct control_conn *conn, uint64_t id);
void control_watch(struct control_conn *conn, uint64_t id);
void control_cancel(struct control_conn *conn, uint64_t id);
void control_list(struct control_conn *conn);
void control_items(struct control_conn *conn, uint64_t id);
/* A LIST (or ITEMS) paused on a full socket: go on (the socket has room). */
void control_list_continue(struct control_conn *conn);
void control_stats(struct control_conn *conn);
void control_settings(struct control_conn *conn);
void conn_unwatch(struct control_conn *conn);
/* Progress for the watchers of running jobs (tick_ev). */
void control_tick_cb(evutil_socket_t fd, short what, void *userdata);
