/* A dry run's items as rsync's --itemize-changes lines (client/itemize.c). */

#include <string.h>

#include "itemize.h"
#include "tap.h"

static struct ctl_item item(unsigned int verdict, unsigned int kind, const char *changes, uint64_t size)
{
        struct ctl_item it = { .verdict = (uint8_t)verdict, .kind = (uint8_t)kind, .size = size };

        memcpy(it.changes, changes, sizeof(it.changes));
        return it;
}

static const char *line(const struct ctl_item *it, const char *target, unsigned int level)
{
        static char buf[ITEMIZE_LINE_MAX];

        return itemize_line(buf, sizeof(buf), it, "d/x", target, level) ?: "(none)";
}

int main(void)
{
        struct ctl_item it;
        struct itemize_sum s = { 0 };
        char buf[128];

        it = item(CTL_WOULD_CREATE, CTL_ITEM_FILE, ".....", 5);
        is_str(line(&it, NULL, 1), ">f+++++++++ d/x", "a new file");
        itemize_add(&s, &it);
        it = item(CTL_WOULD_REPLACE, CTL_ITEM_FILE, ".st..", 7);
        is_str(line(&it, NULL, 1), ">f.st...... d/x", "a file replaced, its size and mtime differing");
        itemize_add(&s, &it);
        it = item(CTL_WOULD_REPLACE, CTL_ITEM_FILE, "c....", 7);
        is_str(line(&it, NULL, 1), ">fc........ d/x", "one whose digest differs");
        it = item(CTL_WOULD_REPLACE, CTL_ITEM_FILE, "...ax", 7);
        is_str(line(&it, NULL, 1), ">f.......ax d/x", "one whose ACLs and user.* attributes differ: rsync's a, x");
        it = item(CTL_WOULD_REPLACE, CTL_ITEM_FILE, "..t.x", 7);
        is_str(line(&it, NULL, 1), ">f..t.....x d/x", "its mtime and user.* attributes");
        it = item(CTL_WOULD_CREATE, CTL_ITEM_DIR, ".....", 0);
        is_str(line(&it, NULL, 1), "cd+++++++++ d/x/", "a new directory");
        itemize_add(&s, &it);
        it = item(CTL_WOULD_CREATE, CTL_ITEM_LINK, ".....", 3);
        is_str(line(&it, "../t", 1), "cL+++++++++ d/x -> ../t", "a new symlink and its target");
        is_str(line(&it, NULL, 1), "cL+++++++++ d/x", "without the target where it is not known");
        it = item(CTL_WOULD_REPLACE, CTL_ITEM_LINK, "c.t..", 3);
        is_str(line(&it, "t", 1), "cLc.t...... d/x -> t", "a symlink whose target changed");
        it = item(CTL_WOULD_CREATE, CTL_ITEM_HARD, ".....", 3);
        is_str(line(&it, "d/a", 1), "hf+++++++++ d/x => d/a", "a hard link");
        it = item(CTL_WOULD_DELETE, CTL_ITEM_FILE, ".....", 0);
        is_str(line(&it, NULL, 1), "*deleting   d/x", "a file deleted");
        itemize_add(&s, &it);
        it = item(CTL_WOULD_DELETE, CTL_ITEM_DIR, ".....", 0);
        is_str(line(&it, NULL, 1), "*deleting   d/x/", "a directory deleted");
        it = item(CTL_WOULD_KEEP, CTL_ITEM_FILE, ".....", 9);
        is_str(line(&it, NULL, 1), "(none)", "a kept file: not with -i");
        is_str(line(&it, NULL, 2), ".f          d/x", "with -ii, in spaces");
        itemize_add(&s, &it);
        it = item(CTL_WOULD_MERGE, CTL_ITEM_DIR, ".....", 0);
        is_str(line(&it, NULL, 1), "(none)", "a directory merged into: not with -i");
        is_str(line(&it, NULL, 2), ".d          d/x/", "with -ii");
        it = item(_CTL_VERDICT_MAX, CTL_ITEM_FILE, ".....", 0);
        is_str(line(&it, NULL, 2), "(none)", "an unknown verdict prints nothing");
        is_str(itemize_summary(buf, sizeof(buf), &s), "would send 2 files (12 B), keep 1, delete 1",
               "the summary: files and bytes to send (not directories), kept, deleted");
        return done_testing();
}
