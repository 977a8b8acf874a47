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
