#pragma once

/*
 * Accounting for a ring of preregistered buffers (the receive ring, the
 * send pool): which slots are free, and how many each connection may hold.
 * Pure bookkeeping; the memory and its MR live in the daemon.
 *
 * A connection is admitted with up to @share slots (ring_admit), may grow
 * towards count / connections while slots are free, and must shrink back
 * to that when more connections arrive. Growth always leaves one free slot
 * for each connection that could still be admitted, so admission never
 * waits for a lender to shrink: a newcomer starts small and grows as the
 * lender's slots come back. With as many connections as count / share,
 * everyone holds exactly a share.
 */

#include <stdbool.h>
#include <stdint.h>

struct ring {
        uint32_t count;         /* slots in the ring */
        uint32_t share;         /* slots a connection is admitted with */
        uint32_t nfree;
        uint32_t *stack;        /* free slot indices */
        uint8_t *used;          /* per slot: 1 while taken, catches double puts */
        uint32_t conns;         /* admitted by ring_admit, not yet left */
        uint32_t conns_max;     /* count / share */
};

#define RING_NULL ((struct ring){ 0 })

/* @count slots, @share per connection (1 <= share <= count). 0 or -errno. */
int ring_init(struct ring *r, uint32_t count, uint32_t share);
/*
 * Admit at most @n connections (the configured limit, which may change at
 * run time), but never more than count / share. Lowering it below the
 * connections in refuses newcomers until enough have left; nobody admitted
 * is evicted.
 */
void ring_set_conns_max(struct ring *r, uint32_t n);
void ring_deinit(struct ring *r);               /* safe on RING_NULL */

enum { RING_FULL = 1 };

/* Give one slot back. Aborts on a slot that is out of range or not taken. */
void ring_put(struct ring *r, uint32_t slot);
uint32_t ring_free(const struct ring *r);

/* Admit a connection: up to share slots into @slots (share
 * entries). Returns how many were taken, or 0 (nothing taken, not admitted)
 * when conns_max connections are in. */
uint32_t ring_admit(struct ring *r, uint32_t *slots);
/* An admitted connection is gone (its slots are put back separately). */
void ring_leave(struct ring *r);
/* The most slots one admitted connection should hold now. */
uint32_t ring_target(const struct ring *r);
/* May a connection that holds @held slots take one more (ring_take)? */
bool ring_may_grow(const struct ring *r, uint32_t held);
/* One free slot into @slot: 0, or RING_FULL. */
int ring_take(struct ring *r, uint32_t *slot);

/*
 * One connection's holding, with each slot under a stable index (a
 * receive's wr_id, a send buffer's number): cap = ring size entries, so it
 * can grow to any size the ring allows without moving anything.
 */
#define RING_NO_SLOT UINT32_MAX

struct ring_hold {
        uint32_t cap;
        uint32_t held;          /* indices that have a slot */
        uint32_t div;           /* lanes its transfer is striped over: its due is 1/div */
        bool counted;           /* admitted (ring_admit), not joined */
        uint32_t *slot;         /* per index: its ring slot, or RING_NO_SLOT */
        uint32_t *unused;       /* indices without a slot, stacked */
        uint32_t nunused;
};

#define RING_HOLD_NULL ((struct ring_hold){ 0 })

/* Admit to @r (ring_admit); the first slots get indices 0, 1, ... Returns
 * how many, 0 when not admitted, or -ENOMEM. ring_hold_free() in any case. */
int ring_hold_admit(struct ring_hold *h, struct ring *r);
/*
 * Another lane of an admitted transfer: no slot yet and not counted as a
 * connection, so it grows only from what the ring lends. 0 or -ENOMEM.
 */
int ring_hold_join(struct ring_hold *h, struct ring *r);
/*
 * Admit a joined holding that holds nothing yet (a connection that was let
 * in before it proved anything): ring_admit's slots under indices 0, 1, ...
 * Returns how many, 0 when not admitted (still joined, holding nothing).
 */
uint32_t ring_hold_promote(struct ring_hold *h, struct ring *r);
/* A transfer striped over @lanes lanes: each lane's due is 1/@lanes of it. */
void ring_hold_set_lanes(struct ring_hold *h, uint32_t lanes);
/* The most slots this holding should have now: ring_target / lanes, at least 1. */
uint32_t ring_hold_target(const struct ring_hold *h, const struct ring *r);
/* Borrow one more slot if @r lends it and the holding is under its due:
 * true, its index in @index. */
bool ring_hold_grow(struct ring_hold *h, struct ring *r, uint32_t *index);
/* Give back the slot at @index. */
void ring_hold_release(struct ring_hold *h, struct ring *r, uint32_t index);
/* Holding more than its due (ring_hold_target) now that others are in? */
bool ring_hold_over(const struct ring_hold *h, const struct ring *r);
/* Every slot back, and leave @r if admitted; after an admit that returned
 * > 0 or a join that returned 0. */
void ring_hold_leave(struct ring_hold *h, struct ring *r);
void ring_hold_free(struct ring_hold *h);               /* safe on RING_HOLD_NULL */
