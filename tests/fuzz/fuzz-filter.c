/*
 * libFuzzer harness for xferctl send -r's rules (client/filter.c). The
 * input is an --exclude-from file, then a NUL, then paths, one a line.
 * Whatever it is: no crash, no read past it, no input that takes seconds
 * (libFuzzer's timeout); the file loads or fails with one of filter.h's
 * errors, a NUL-terminated message and never more than FILTER_RULES_MAX
 * rules; each path is included or excluded, the root always included,
 * and a list cleared by "!" includes everything.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *nul = memchr(data, '\0', size);
        size_t rules_len = nul ? (size_t)(nul - data) : size;
        struct filter_list l = FILTER_LIST_NULL;
        char err[512], *paths, *line, *save = NULL;
        FILE *f;
        int r;

        /* An empty buffer is no stream for fmemopen: an empty file. */
        f = rules_len ? fmemopen((void *)data, rules_len, "r") : fopen("/dev/null", "re");
        if (!f)
                abort();
        memset(err, 'x', sizeof(err));
        r = filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err));
        fclose(f);
        if (r < 0 && ((r != -EINVAL && r != -ENAMETOOLONG && r != -E2BIG && r != -ENOMEM && r != -EIO) ||
                      !memchr(err, '\0', sizeof(err))))
                abort();
        if (l.n > FILTER_RULES_MAX)
                abort();

        paths = malloc(size - rules_len + 1);
        if (!paths)
                abort();
        memcpy(paths, data + rules_len, size - rules_len);
        paths[size - rules_len] = '\0';
        /* The NUL that ended the rules, if any, is no part of the paths. */
        for (line = strtok_r(nul ? paths + 1 : paths, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                for (int dir = 0; dir < 2; dir++) {
                        enum filter_kind k = filter_match(&l, line, dir);

                        if (k != FILTER_INCLUDE && k != FILTER_EXCLUDE)
                                abort();
                }
        }
        if (filter_match(&l, "", true) != FILTER_INCLUDE)
                abort();
        if (filter_add(&l, FILTER_EXCLUDE, "!", err, sizeof(err)) != 0 || l.n != 0 ||
            filter_match(&l, "a/b", false) != FILTER_INCLUDE)
                abort();
        filter_list_deinit(&l);
        free(paths);
        return 0;
}
