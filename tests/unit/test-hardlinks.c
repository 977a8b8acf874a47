/* xferctl send -r's table of files with several names (client/hardlinks.c):
 * the first name a file is met under is every later one's, files are
 * told apart by device and inode both, and the table holds many. */

#include <stdio.h>
#include <string.h>

#include "hardlinks.h"
#include "tap.h"

int main(void)
{
        struct hardlinks *h = hardlinks_new();
        const char *first = "unset";
        char name[64];
        int bad = 0;

        ok(h, "a table");
        is_int(hardlinks_seen(h, 1, 42, "DEST/a", &first), 0, "a file met once is new");
        ok(first == NULL, "... with no first name");
        is_int(hardlinks_seen(h, 1, 42, "DEST/b", &first), 1, "met again under another name");
        is_str(first, "DEST/a", "... its first name");
        is_int(hardlinks_seen(h, 1, 42, "DEST/c/d", &first), 1, "a third name");
        is_str(first, "DEST/a", "... the first one still");
        is_int(hardlinks_seen(h, 2, 42, "DEST/e", &first), 0, "the same inode on another device is another file");
        is_int(hardlinks_seen(h, 1, 43, "DEST/f", &first), 0, "another inode on the device is another file");
        is_int(hardlinks_seen(h, 2, 42, "DEST/g", &first), 1, "the second device's file met again");
        is_str(first, "DEST/e", "... under its own first name");

        /* Many files, each met twice: the table grows and loses none. */
        for (unsigned int i = 0; i < 100000; i++) {
                snprintf(name, sizeof(name), "DEST/n%u", i);
                bad += hardlinks_seen(h, 7, (ino_t)i * 4096, name, &first) != 0;
        }
        is_int(bad, 0, "100,000 files recorded, each new");
        for (unsigned int i = 0; i < 100000; i++) {
                snprintf(name, sizeof(name), "DEST/n%u", i);
                bad += hardlinks_seen(h, 7, (ino_t)i * 4096, "DEST/other", &first) != 1 ||
                       strcmp(first, name) != 0;
        }
        is_int(bad, 0, "each met again under its first name");

        hardlinks_clear(h);
        is_int(hardlinks_seen(h, 1, 42, "DEST/z", &first), 0, "cleared: a file met before is new again");
        hardlinks_free(h);
        hardlinks_free(NULL);
        return done_testing();
}
