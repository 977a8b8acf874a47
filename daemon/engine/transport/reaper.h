#pragma once

/*
 * rdma_destroy_id off the event loop. Destroying an id can sleep in the
 * kernel for as long as ib_cm waits on a disconnect request it could not
 * send (cm_destroy_id in DREQ_SENT while the port is down: seen for
 * minutes, and uninterruptibly, on Debian's 6.1 rxe), so the loop hands
 * ids to one worker thread and hears back through an eventfd. Nothing
 * else of the engine runs there.
 */

#include <stdbool.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

struct event_base;
struct reaper;

/* @drained runs on the loop whenever the queue has become empty. */
int reaper_new(struct reaper **out, struct event_base *base,
               void (*drained)(void *userdata), void *userdata);
/*
 * Stop the worker: waits up to @timeout_ms for the queue to empty, then
 * leaves what is left (a destroy stuck in the kernel) to the worker and
 * says so in the log: should the destroy return, the worker finishes the
 * queue and frees the reaper itself; if not, process exit takes it. Either
 * way @drained runs no more. Safe on NULL.
 */
void reaper_free(struct reaper *r, unsigned int timeout_ms);

/*
 * Queue @id (its context is cleared first: no event is dispatched for it
 * any more). Never blocks. Out of memory: destroyed on the spot, as before.
 * @disconnect: its DREQ is not sent yet (a completion failed just before,
 * conn.c): the worker sends it once the id has waited its second, whatever
 * the port says then (down: it fails fast, no route), then waits for the
 * port as for any id.
 */
void reaper_destroy_id(struct reaper *r, struct rdma_cm_id *id, bool disconnect);

/*
 * Parked, the worker destroys nothing and ids wait in the queue: while a
 * port is down, destroying an established id makes ib_cm send a DREQ that
 * never completes, and the destroy (then the device's removal) waits for
 * it for ever. Unparked when the port is back or the device goes. Parked
 * or not, an id waits a second after it is queued, then the worker asks
 * its port (ibv_query_port) and waits while it is not ACTIVE: a transfer
 * that a QP error ended just before the port's PORT_ERR arrived would
 * otherwise be destroyed in that window.
 */
void reaper_park(struct reaper *r, bool parked);
/* The device is gone (@gone true: the kernel closed its ids itself, so
 * every id is destroyed whatever its port says), or back (false). */
void reaper_device_gone(struct reaper *r, bool gone);

/* Ids queued or being destroyed. */
unsigned int reaper_pending(const struct reaper *r);
/* Microseconds (CLOCK_MONOTONIC) the current destroy started, 0 when idle. */
uint64_t reaper_busy_since(struct reaper *r);
