#pragma once

/*
 * rdmaxfer-lander's own: its sessions (lander-session.c: each a job's
 * identity, proven by a MUNGE credential and bound to the job and this
 * node; the identity it acts as) and the requests done in them
 * (lander.c), sharing the session table and these few calls.
 */

#include <munge.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lander.h"
#include "landfs.h"
#include "landmsg.h"
#include "macro.h"

struct lander_session {
        uint64_t id;                    /* 0: a free slot */
        unsigned int conn;
        uint8_t direction;
        uint8_t flags;                  /* LANDMSG_SESSION_*, as the credential's binding has them */
        struct landfs_id who;
        char user[LANDMSG_USER_MAX + 1];
        char dest[LANDMSG_PATH_MAX + 1];
        /* DEST's parent and leaf, and the job's staging directory: a
         * sibling of DEST named for the token, "" where DEST has no parent
         * beneath a landing root (it is one: no tree lands as a root);
         * or, for a tree that lands in DEST (LANDMSG_OP_INTO), in DEST. */
        char parent[LANDMSG_PATH_MAX + 1];
        char leaf[LANDMSG_LEAF_MAX + 1];
        char stage_name[64];
        char stage[LANDMSG_PATH_MAX + 1];
        char stage_in[LANDMSG_PATH_MAX + 1];
        /* The staging directory this session made, held from its MKDIR
         * to its PUBLISH or DISCARD (stage_hold): every op in it is
         * walked from here, not from a landing root again. -1: none. */
        int stage_fd;
        bool stage_into;                /* made in DEST (LANDMSG_OP_INTO) */
        /* The name it is to be published under (MKDIR's leaf), in DEST
         * with stage_into, else DEST's; "" where none was given. */
        char stage_leaf[LANDMSG_LEAF_MAX + 1];
        dev_t stage_dev;
        ino_t stage_ino;
        /* The memory a MEM handed over, mapped read-only (NULL: none):
         * what its CREATEs' data is read from. */
        const uint8_t *mem;
        size_t mem_size;
        /* The tree there's directory a LINK's or CREATE's keeping looked
         * in last (its path beneath the staging directory's place), held
         * until the staging directory goes; -1: none. */
        int kept_fd;
        char kept_path[LANDMSG_PATH_MAX + 1];
};

struct lander {
        struct lander_settings s;
        munge_ctx_t ctx;
        uint64_t next_id;
        /* The session whose user the lander is now (lander_as), 0: itself. */
        uint64_t as;
        /* A BATCH's request at hand and its answer (16 KiB each: not on the stack). */
        struct landmsg sub, sub_reply;
        /* Of the BATCH at hand, the LINKs that kept the file there (FDS's kept). */
        unsigned int kept;
        unsigned int nsessions;
        struct lander_session session[LANDER_SESSIONS_MAX];
};

/* @reply an ERROR: @err (an errno, either sign), @verdict (landfs's or
 * 0), the path it is about (@where, or NULL) and a sentence. */
_printf_(5, 6)
void lander_error_reply(struct landmsg *reply, int err, unsigned int verdict, const char *where, const char *fmt,
                        ...);
/* SESSION: prove @s's user and open a session for it on @conn, or say why not. */
void lander_session_open(struct lander *l, unsigned int conn, const struct landmsg_session *s,
                         struct landmsg *reply);
/* Connection @conn's session @id, or NULL. */
struct lander_session *lander_session_find(struct lander *l, unsigned int conn, uint64_t id);
/* A session over (END, its connection gone): its slot free again. */
void lander_session_end(struct lander *l, struct lander_session *ss);
/* The staging directory let go of: published, discarded, or the session over. */
void lander_stage_release(struct lander_session *ss);
/* MEM: the session's memory, @fd (landmsg.h), or the refusal in @reply;
 * and let go of, at the session's end. */
void lander_mem(struct lander_session *ss, int fd, struct landmsg *reply);
void lander_mem_release(struct lander_session *ss);
/* Be @ss's user for what follows (false, with why in @reply: not). */
bool lander_as(struct lander *l, const struct lander_session *ss, struct landmsg *reply);
