#include "ring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

int ring_take_share(struct ring *r, uint32_t *slots)
{
        if (r->nfree < r->share)
                return RING_FULL;
        for (uint32_t i = 0; i < r->share; i++) {
                uint32_t slot = r->stack[--r->nfree];

                r->used[slot] = 1;
                slots[i] = slot;
        }
        return 0;
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
