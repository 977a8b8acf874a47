/* The files of a tree with several names (hardlinks.h): open addressing,
 * linear probing, grown at half full. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hardlinks.h"

struct hardlinks_slot {
        dev_t dev;
        ino_t ino;
        char *name;             /* NULL: free */
};

struct hardlinks {
        struct hardlinks_slot *slot;
        size_t cap, n;          /* cap a power of two, 0 until the first */
};

struct hardlinks *hardlinks_new(void)
{
        return calloc(1, sizeof(struct hardlinks));
}

void hardlinks_clear(struct hardlinks *h)
{
        for (size_t i = 0; i < h->cap; i++)
                free(h->slot[i].name);
        free(h->slot);
        h->slot = NULL;
        h->cap = h->n = 0;
}

void hardlinks_free(struct hardlinks *h)
{
        if (!h)
                return;
        hardlinks_clear(h);
        free(h);
}

static size_t hardlinks_hash(dev_t dev, ino_t ino)
{
        /* splitmix64's finaliser: inode numbers come in runs. */
        uint64_t z = (uint64_t)ino ^ ((uint64_t)dev * 0x9e3779b97f4a7c15u);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return (size_t)(z ^ (z >> 31));
}

static struct hardlinks_slot *hardlinks_find(struct hardlinks_slot *slot, size_t cap, dev_t dev, ino_t ino)
{
        size_t i = hardlinks_hash(dev, ino) & (cap - 1);

        while (slot[i].name && (slot[i].dev != dev || slot[i].ino != ino))
                i = (i + 1) & (cap - 1);
        return &slot[i];
}

static int hardlinks_grow(struct hardlinks *h)
{
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct hardlinks_slot *slot = calloc(cap, sizeof(*slot));

        if (!slot)
                return -ENOMEM;
        for (size_t i = 0; i < h->cap; i++)
                if (h->slot[i].name)
                        *hardlinks_find(slot, cap, h->slot[i].dev, h->slot[i].ino) = h->slot[i];
        free(h->slot);
        h->slot = slot;
        h->cap = cap;
        return 0;
}

int hardlinks_seen(struct hardlinks *h, dev_t dev, ino_t ino, const char *name, const char **first)
{
        struct hardlinks_slot *s;

        if (h->cap) {
                s = hardlinks_find(h->slot, h->cap, dev, ino);
                if (s->name) {
                        *first = s->name;
                        return 1;
                }
        }
        if ((h->n + 1) * 2 > h->cap && hardlinks_grow(h) < 0)
                return -ENOMEM;
        s = hardlinks_find(h->slot, h->cap, dev, ino);
        s->name = strdup(name);
        if (!s->name)
                return -ENOMEM;
        s->dev = dev;
        s->ino = ino;
        h->n++;
        *first = NULL;
        return 0;
}
