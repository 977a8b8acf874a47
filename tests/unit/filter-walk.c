/* For test-filter-rsync.sh: the entries xferctl send -r walks beneath DIR
 * with the rules given the way its options give them (client/walk.c's
 * counting walk with client/filter.c), a "TYPE PATH" line each (d, f or l;
 * PATH relative to DIR), as find -printf '%y %P\n' prints a copy. */

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "walk.h"

static size_t root_len;

static int on_entry(void *userdata, struct walk_entry *e)
{
        if (e->depth == 0 || e->kind == WALK_DIR_END)
                return 0;
        printf("%c %s\n", e->kind == WALK_DIR ? 'd' : e->kind == WALK_FILE ? 'f' : 'l', e->path + root_len + 1);
        return 0;
}

int main(int argc, char **argv)
{
        struct filter_list l = FILTER_LIST_NULL;
        struct walk_ops ops = { .entry = on_entry, .no_open = true, .filters = &l };
        char err[512];
        int r = 0;

        if (argc < 2 || argc % 2) {
                fprintf(stderr, "usage: filter-walk DIR [--exclude|--include|--exclude-from|--include-from ARG]...\n");
                return 2;
        }
        for (int i = 2; i < argc && r == 0; i += 2) {
                enum filter_kind kind = strncmp(argv[i], "--exclude", 9) ? FILTER_INCLUDE : FILTER_EXCLUDE;
                FILE *f;

                if (!strstr(argv[i], "-from")) {
                        r = filter_add(&l, kind, argv[i + 1], err, sizeof(err));
                        continue;
                }
                f = fopen(argv[i + 1], "re");
                if (!f) {
                        snprintf(err, sizeof(err), "cannot open %s", argv[i + 1]);
                        r = -1;
                        break;
                }
                r = filter_load(&l, kind, f, err, sizeof(err));
                fclose(f);
        }
        if (r < 0) {
                fprintf(stderr, "filter-walk: %s\n", err);
                filter_list_deinit(&l);
                return 2;
        }
        root_len = strlen(argv[1]);
        r = walk_tree(AT_FDCWD, argv[1], &ops, NULL);
        filter_list_deinit(&l);
        return r < 0 ? 1 : 0;
}
