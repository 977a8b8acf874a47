#pragma once

/*
 * xferctl send -r's hard links: the regular files of a tree that have
 * several names, each by its (st_dev, st_ino), with the receiver's name
 * of the first entry the walk met ("DEST/a/b"). A later name of the same
 * file goes as a hard link to that one (wire.h, Hard links), its data
 * sent once. Only files with st_nlink > 1 are asked about, so the table
 * holds one name for each file that has several, and no more. Pure code.
 */

#include <stdint.h>
#include <sys/types.h>

struct hardlinks;

/* An empty table, or NULL (out of memory). */
struct hardlinks *hardlinks_new(void);
void hardlinks_free(struct hardlinks *h);
static inline void hardlinks_freep(struct hardlinks **h)
{
        hardlinks_free(*h);
}
/* Forget every file (a walk starts again). */
void hardlinks_clear(struct hardlinks *h);

/*
 * The file @dev, @ino met under @name: 1 with *@first the name it was
 * first met under (owned by the table, valid until it is cleared or
 * freed); 0 when it is new, @name then recorded as its first; -ENOMEM.
 */
int hardlinks_seen(struct hardlinks *h, dev_t dev, ino_t ino, const char *name, const char **first);
