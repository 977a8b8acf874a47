#pragma once

/*
 * A dry run's items (ctl.h, ITEM) as rsync's --itemize-changes lines, and
 * the summary without them. Pure: no I/O. The 11 characters YXcstpoguax:
 *
 *   Y  '>' a file the send would transfer, 'c' a directory or symlink
 *      made on the receiver, 'h' a hard link, '.' nothing done,
 *      '*' a message ("*deleting")
 *   X  'f' file, 'd' directory, 'L' symlink ('f' for a hard link, as rsync)
 *   then "+++++++++" for a new entry; for a replaced one 'c' where the
 *   digests were compared and differ (a symlink's target differs), 's'
 *   where the sizes differ, 't' where the mtimes do, '.' for each other
 *   (permissions, owner, group, ACLs, xattrs are not compared: '.'); an
 *   entry kept as it is shows spaces.
 *
 * Directories end in "/", a symlink's line " -> TARGET", a hard link's
 * " => TARGET" (its first name), when the caller knows it.
 */

#include <stddef.h>
#include <stdint.h>

#include "ctl.h"

#define ITEMIZE_LINE_MAX        (12 + 4 * CTL_PATH_MAX + 5 + 4 * 4096 + 1)

/*
 * @it's line into @buf (@name and @target as shown: escaped by the
 * caller; @target NULL when not known), or NULL when @level does not show
 * it: 1 (-i) the changes and deletions, 2 (-ii) every entry.
 */
const char *itemize_line(char *buf, size_t len, const struct ctl_item *it, const char *name, const char *target,
                         unsigned int level);

/* What a dry run's items add up to: files it would send and their bytes,
 * entries kept, entries deleted. */
struct itemize_sum {
        uint64_t send, send_bytes, keep, deleted;
};
void itemize_add(struct itemize_sum *s, const struct ctl_item *it);
/* "would send 3 files (12.0 KiB), keep 7, delete 1". */
const char *itemize_summary(char *buf, size_t len, const struct itemize_sum *s);
