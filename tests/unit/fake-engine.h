#pragma once

/*
 * A stand-in for the transfer engine, for testing the job layer's policy
 * without RDMA: it implements what the job layer (daemon/jobs/) calls from engine.h
 * (engine_send, engine_send_cancel, engine_send_progress) and keeps its
 * contract. Callbacks never come from inside those calls: the test
 * delivers them (fake_engine_phase, fake_engine_done), and a cancel
 * delivers ENGINE_CANCELLED from a deferred event on the loop. Like the
 * real one it duplicates the file descriptor and closes its copy before
 * the done callback.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine.h"
#include "wire.h"

struct event_base;

struct engine *fake_engine_new(struct event_base *base);
/* Drops running transfers without callbacks, like engine_free(). */
void fake_engine_free(struct engine *e);

/* At most @cap transfers at once, else ENGINE_SEND_FULL; -1: no limit. */
void fake_engine_set_capacity(struct engine *e, int cap);
/* The next engine_send() returns @err (a -errno) and starts nothing. */
void fake_engine_fail_next(struct engine *e, int err);

unsigned int fake_engine_live(const struct engine *e);
unsigned int fake_engine_calls(const struct engine *e);     /* engine_send() calls, any result */
/* Contract breaches seen: a call on a handle that is not live, and (the
 * job layer's own rule: it starts jobs from the loop) engine_send() from
 * inside one of the engine's callbacks. */
unsigned int fake_engine_misuse(const struct engine *e);

/* The live transfer for job @id, or NULL. */
struct engine_send *fake_engine_find(struct engine *e, uint64_t id);

/* What the owner asked for. */
struct fake_send_info {
        uint64_t id;
        int fd;                         /* the engine's duplicate */
        uint64_t size;
        const char *name;
        const char *peer;
        struct sockaddr_storage dst;
        socklen_t dst_len;
        unsigned int attempt;
        uint64_t bwlimit;
        uint32_t files;                 /* engine_send_req's */
        unsigned int sync;              /* engine_send_req's, enum engine_sync */
        bool delete;                    /* engine_send_req's */
        uint64_t job_bytes;
        bool tree;                      /* engine_send_req's */
        bool has_token;                 /* tree_token was given: it is in token */
        uint8_t token[WIRE_SOURCE_SIZE];
        struct wire_hop route[ENGINE_ROUTE_MAX];        /* engine_send_req's, copied */
        unsigned int route_hops;
        bool has_route;                 /* route was not NULL */
        unsigned int cancels;           /* engine_send_cancel() calls */
        unsigned int resumes;           /* engine_send_resume() calls */
};
const struct fake_send_info *fake_engine_info(const struct engine_send *s);

void fake_engine_set_progress(struct engine_send *s, uint64_t bytes, uint64_t usec);
/* A chain's relays' last word: @hops hops (engine_progress.hops), each
 * hop's bytes from @bytes (hop_bytes; at most ENGINE_ROUTE_MAX taken). */
void fake_engine_set_hops(struct engine_send *s, unsigned int hops, const uint64_t *bytes);
/* Files the receiver kept so far (sync): in the progress and the result. */
void fake_engine_set_skipped(struct engine_send *s, uint32_t skipped);
/* What the receiver deleted (--delete): the result's, when it is done. */
void fake_engine_set_deleted(struct engine_send *s, uint64_t deleted);
void fake_engine_phase(struct engine_send *s, enum engine_phase phase);
/* ops->next for file @index (the caller owns f->fd on 0), ops->file_done. */
int fake_engine_next(struct engine_send *s, uint32_t index, struct engine_send_file *f);
void fake_engine_file_done(struct engine_send *s, uint32_t index, uint64_t bytes);
/* Release, then the done callback; @s is gone afterwards. */
void fake_engine_done(struct engine_send *s, enum engine_outcome outcome, unsigned int status,
                      const char *text, uint64_t bytes, uint64_t usec);
/* ENGINE_DONE for a chain: @hops of its route published, @hop_missing
 * those that did not (bit k: route[k]), @hop_failed the first of them. */
void fake_engine_done_chain(struct engine_send *s, uint64_t bytes, uint32_t hops, struct nodeset hop_missing,
                            uint32_t hop_failed, unsigned int hop_status, const char *hop_text);
/* fake_engine_done() with ENGINE_FAILED, saying whether it is transient. */
void fake_engine_fail(struct engine_send *s, unsigned int status, bool transient, const char *text);
