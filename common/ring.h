#pragma once

/*
 * Accounting for the receive ring: which slots are free, and how many each
 * connection may hold. Pure bookkeeping; the memory and its MR live in the
 * daemon.
 */

#include <stdbool.h>
#include <stdint.h>

struct ring {
        uint32_t count;         /* slots in the ring */
        uint32_t share;         /* slots granted to one connection */
        uint32_t nfree;
        uint32_t *stack;        /* free slot indices */
        uint8_t *used;          /* per slot: 1 while taken, catches double puts */
};

#define RING_NULL ((struct ring){ 0 })

/* @count slots, @share per connection (1 <= share <= count). 0 or -errno. */
int ring_init(struct ring *r, uint32_t count, uint32_t share);
void ring_deinit(struct ring *r);               /* safe on RING_NULL */

/* Take a whole share for a new connection into @slots (share entries).
 * Returns 0, or RING_FULL (positive) when fewer than share slots are free. */
enum { RING_FULL = 1 };
int ring_take_share(struct ring *r, uint32_t *slots);
/* Give one slot back. Aborts on a slot that is out of range or not taken. */
void ring_put(struct ring *r, uint32_t slot);
uint32_t ring_free(const struct ring *r);
