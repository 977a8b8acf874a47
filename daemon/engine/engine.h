#pragma once

/*
 * The transfer engine: the rdma_cm listener, the device's PD, the
 * preregistered receive ring and send pool, incoming transfers and the
 * outgoing ones its owner starts. Everything runs on the owner's
 * event_base.
 *
 * The interface is one-way: the owner calls in (start, cancel, ask for
 * progress, stop), the engine answers only through the callbacks it was
 * handed. It never sees the owner's job table or control protocol, and
 * the owner never sees a connection.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "engine-types.h"
#include "stats.h"

struct auth_key;
struct config;
struct event_base;
struct io;
struct engine;
struct engine_send;
struct wire_hop;

/* What the engine tells its owner about itself (from the loop). */
struct engine_ops {
        /*
         * The RDMA device went away (@up false; @text says why: every
         * transfer on it has failed already, engine_send answers
         * ENGINE_SEND_NODEV) or a device carries the listen address again
         * and the engine listens there (@up true; @text is its name).
         */
        void (*device)(void *owner, bool up, const char *text);
};

struct engine_params {
        struct event_base *base;
        /* The owner's disk I/O service, on base: the engine's disk steps
         * go there; it outlives the engine (engine_free). Its depth:
         * engine_io_depth() requests or more. */
        struct io *io;
        /* Read during engine_new(): each layer takes its own copy
         * (engine_reconfigure() replaces them). */
        const struct config *cfg;
        /* Read when needed, never copied: the owner keeps it. */
        const struct auth_key *key;
        const struct engine_ops *ops;   /* may be NULL */
        void *owner;
};

/* The disk requests the engine may have out at once, for the owner's io. */
unsigned int engine_io_depth(const struct config *cfg);

/*
 * Bind and listen on cfg->listen_addr:cfg->port, open the device behind
 * it, allocate the PD, register the receive ring and the send pool.
 * 0 or -errno (the cause is logged). READY=1 may follow a success.
 */
int engine_new(struct engine **out, const struct engine_params *p);

/*
 * Release everything, at any time, whatever is still running, in two
 * steps around the owner's draining of its io (io_free()):
 * engine_quiesce() destroys every queue pair (nothing is written into the
 * ring or read from the pool any more) and calls nothing back from then
 * on; engine_free() releases the rest, completion queues before memory
 * regions before the PD. Transfers still in progress end unpublished.
 * With @keep_memory (io_free() said a disk request never came back), the
 * memory such a request may still use is left to it. Both safe on NULL.
 */
void engine_quiesce(struct engine *e);
void engine_free(struct engine *e, bool keep_memory);

/*
 * A reload: apply what of @cfg can change at run time, each layer taking
 * its copy. max_transfers limits admission in both directions at once
 * (up to what the rings were sized for at start); transfers already in
 * are never evicted. rate_limit applies at once, to the transfers running
 * too; the other keys to what starts or is decided from now on.
 */
void engine_reconfigure(struct engine *e, const struct config *cfg);

/* rdmaxferd --list-partials: what @partial_dir holds, one line to @out
 * per kept transfer (rdmaxferd(8), Resuming); no engine needed. 0, or
 * -errno when the directory cannot be read. */
int engine_print_partials(const char *partial_dir, FILE *out);

/*
 * Begin shutdown: stop listening, fail every incoming transfer (nothing is
 * published) and every outgoing one ("daemon shutting down"; each one's
 * done callback follows). @done(@userdata) runs from the loop once no
 * connection is left.
 */
void engine_stop(struct engine *e, void (*done)(void *userdata), void *userdata);

/* For STATUS=: incoming transfers in progress, and their summed rate in
 * bytes/s since the previous call. */
unsigned int engine_recv_active(const struct engine *e);
uint64_t engine_recv_rate(struct engine *e);

/* What only the engine knows, for the owner's counters (`xferctl stats`). */
struct engine_stats {
        /* Incoming transfers since engine_new, counted once their verdict is
         * decided; a connection that never made an offer is not a transfer. */
        struct stats_tally recv;
        unsigned int recv_active;       /* as engine_recv_active() */
        /* Data bytes moved on the wire since engine_new, by every transfer
         * (a relay's onward sends too), running or ended, whatever became of
         * it: received chunks, and sent ones the peer's adapter acknowledged. */
        uint64_t recv_wire_bytes, send_wire_bytes;
        uint32_t ring_held, ring_slots; /* receive ring: slots held by transfers, in all */
        uint32_t pool_held, pool_slots; /* send pool: the same */
        /* The rails (listen's addresses, in order): device, data bytes
         * each way (as the wire bytes above), whether it carries lanes now. */
        unsigned int nrails;
        struct engine_rail_stats {
                char name[64];
                uint64_t bytes_in, bytes_out;
                bool up;
        } rail[4];
};

/* A snapshot; changes nothing (unlike engine_recv_rate()). */
void engine_stats(const struct engine *e, struct engine_stats *s);



/*
 * Start sending. Admission is decided before anything changes:
 *   0                  started; *@out is the handle until ops->done,
 *   ENGINE_SEND_FULL   the send pool admits no more transfers now (a running
 *                      one must end first; with none running, it never will:
 *                      max_transfers outgrew the pool); nothing started,
 *   ENGINE_SEND_NODEV  the RDMA device is gone; ops->device says when it is
 *                      back; nothing started,
 *   -errno             nothing started (-ESHUTDOWN once stopping).
 * Callbacks come only from the loop, never from inside this call.
 */
int engine_send(struct engine *e, const struct engine_send_req *req,
                const struct engine_send_ops *ops, void *owner, struct engine_send **out);


/* After ops->next answered ENGINE_NEXT_LATER: ask again now (from the loop,
 * not from inside a callback of this transfer). Nothing when it waits for
 * nothing. */
void engine_send_resume(struct engine_send *s);

/* Abort: ops->done follows from the loop with ENGINE_CANCELLED, unless
 * the outcome was already decided. */
void engine_send_cancel(struct engine_send *s);

void engine_send_progress(const struct engine_send *s, struct engine_progress *p);
