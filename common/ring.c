#include "ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"

int ring_init(struct ring *r, uint32_t count, uint32_t share)
{
        if (count == 0 || share == 0 || share > count)
                return -EINVAL;

        *r = RING_NULL;
        r->stack = calloc(count, sizeof(*r->stack));
        r->used = calloc(count, sizeof(*r->used));
        if (!r->stack || !r->used) {
                ring_deinit(r);
                return -ENOMEM;
        }
        r->count = count;
        r->share = share;
        r->conns_max = count / share;
        /* Pushed highest first, so a fresh ring hands out 0, 1, 2, ... */
        for (uint32_t i = 0; i < count; i++)
                r->stack[i] = count - 1 - i;
        r->nfree = count;
        return 0;
}

void ring_deinit(struct ring *r)
{
        free(r->stack);
        free(r->used);
        *r = RING_NULL;
}

void ring_put(struct ring *r, uint32_t slot)
{
        /*
         * A double put would hand one buffer to two connections: the
         * accounting is already wrong, and carrying on corrupts data.
         */
        if (slot >= r->count || !r->used[slot] || r->nfree >= r->count) {
                fprintf(stderr, "ring_put: slot %u of %u is not taken\n", slot, r->count);
                abort();
        }
        r->used[slot] = 0;
        r->stack[r->nfree++] = slot;
}

uint32_t ring_free(const struct ring *r)
{
        return r->nfree;
}

int ring_take(struct ring *r, uint32_t *slot)
{
        if (r->nfree == 0)
                return RING_FULL;
        *slot = r->stack[--r->nfree];
        r->used[*slot] = 1;
        return 0;
}

/* Free slots kept back for the connections that could still be admitted. */
static uint32_t ring_reserve(const struct ring *r, uint32_t conns)
{
        return conns < r->conns_max ? r->conns_max - conns : 0;
}

uint32_t ring_admit(struct ring *r, uint32_t *slots)
{
        uint32_t keep, n;

        if (r->conns >= r->conns_max)
                return 0;
        /* Growth never eats into the reserve, so this is at least 1. */
        keep = ring_reserve(r, r->conns + 1);
        n = r->nfree > keep ? MIN(r->share, r->nfree - keep) : 0;
        for (uint32_t i = 0; i < n; i++)
                ring_take(r, &slots[i]);
        if (n > 0)
                r->conns++;
        return n;
}

void ring_set_conns_max(struct ring *r, uint32_t n)
{
        r->conns_max = MAX(1u, MIN(n, r->count / r->share));
}

void ring_leave(struct ring *r)
{
        if (r->conns == 0) {
                fprintf(stderr, "ring_leave: no connection admitted\n");
                abort();
        }
        r->conns--;
}

uint32_t ring_target(const struct ring *r)
{
        return r->count / MAX(r->conns, 1u);
}

bool ring_may_grow(const struct ring *r, uint32_t held)
{
        return held < ring_target(r) && r->nfree > ring_reserve(r, r->conns);
}

static int ring_hold_alloc(struct ring_hold *h, struct ring *r)
{
        *h = RING_HOLD_NULL;
        h->slot = calloc(r->count, sizeof(*h->slot));
        h->unused = calloc(r->count, sizeof(*h->unused));
        if (!h->slot || !h->unused)
                return -ENOMEM;
        h->cap = r->count;
        h->div = 1;
        return 0;
}

/* Indices @n.. have no slot; stacked so that n comes out first. */
static void ring_hold_stack_unused(struct ring_hold *h, uint32_t n)
{
        for (uint32_t i = h->cap; i-- > n;) {
                h->slot[i] = RING_NO_SLOT;
                h->unused[h->nunused++] = i;
        }
}

int ring_hold_admit(struct ring_hold *h, struct ring *r)
{
        uint32_t n;
        int e;

        e = ring_hold_alloc(h, r);
        if (e < 0)
                return e;
        n = ring_admit(r, h->slot);
        h->held = n;
        h->counted = n > 0;
        ring_hold_stack_unused(h, n);
        return (int)n;
}

int ring_hold_join(struct ring_hold *h, struct ring *r)
{
        int e;

        e = ring_hold_alloc(h, r);
        if (e < 0)
                return e;
        ring_hold_stack_unused(h, 0);
        return 0;
}

uint32_t ring_hold_promote(struct ring_hold *h, struct ring *r)
{
        uint32_t n;

        if (h->held != 0 || h->counted) {
                fprintf(stderr, "ring_hold_promote: holding is not an empty join\n");
                abort();
        }
        n = ring_admit(r, h->slot);
        if (n == 0) {
                /* ring_admit wrote nothing: the unused stack is intact. */
                return 0;
        }
        h->nunused = 0;
        ring_hold_stack_unused(h, n);
        h->held = n;
        h->counted = true;
        return n;
}

void ring_hold_set_lanes(struct ring_hold *h, uint32_t lanes)
{
        h->div = MAX(lanes, 1u);
}

uint32_t ring_hold_target(const struct ring_hold *h, const struct ring *r)
{
        return MAX(ring_target(r) / MAX(h->div, 1u), 1u);
}

bool ring_hold_grow(struct ring_hold *h, struct ring *r, uint32_t *index)
{
        uint32_t slot, i;

        if (h->nunused == 0 || h->held >= ring_hold_target(h, r) || !ring_may_grow(r, 0) ||
            ring_take(r, &slot) != 0)
                return false;
        i = h->unused[--h->nunused];
        h->slot[i] = slot;
        h->held++;
        *index = i;
        return true;
}

void ring_hold_release(struct ring_hold *h, struct ring *r, uint32_t index)
{
        ring_put(r, h->slot[index]);
        h->slot[index] = RING_NO_SLOT;
        h->unused[h->nunused++] = index;
        h->held--;
}

bool ring_hold_over(const struct ring_hold *h, const struct ring *r)
{
        return h->held > ring_hold_target(h, r);
}

void ring_hold_leave(struct ring_hold *h, struct ring *r)
{
        for (uint32_t i = 0; i < h->cap; i++)
                if (h->slot[i] != RING_NO_SLOT) {
                        ring_put(r, h->slot[i]);
                        h->slot[i] = RING_NO_SLOT;
                        h->unused[h->nunused++] = i;
                }
        h->held = 0;
        if (h->counted)
                ring_leave(r);
        h->counted = false;
}

void ring_hold_free(struct ring_hold *h)
{
        free(h->slot);
        free(h->unused);
        *h = RING_HOLD_NULL;
}
