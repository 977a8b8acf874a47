/*
 * libFuzzer harness for Slurm hostlists (common/hostlist.c). Whatever the
 * input: no crash, no read past it, and either an error that points inside
 * it, or hosts that keep hostlist.h's promises: at most HOSTLIST_MAX of
 * them, as many as the count says, each 1..HOSTLIST_NAME_MAX bytes of
 * printable ASCII with no separator or bracket, each a list of exactly
 * itself when expanded again, and hostlist_new() giving the same names.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
        size_t calls;
        const struct hostlist *hl;
};

/* Counts calls; there must be none for a list that fails. */
static int one_name(const char *name, size_t len, void *userdata)
{
        struct walk *w = userdata;

        if (strlen(name) != len)
                abort();
        w->calls++;
        return 0;
}

static int same_name(const char *name, size_t len, void *userdata)
{
        const char **want = userdata;

        if (strlen(*want) != len || memcmp(*want, name, len) != 0)
                abort();
        return 0;
}

static int check_name(const char *name, size_t len, void *userdata)
{
        struct walk *w = userdata;
        size_t n = 0;

        if (len == 0 || len > HOSTLIST_NAME_MAX || strlen(name) != len)
                abort();
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)name[i];

                if (c < 0x21 || c > 0x7e || c == ',' || c == '[' || c == ']')
                        abort();
        }
        /* A name is a list of itself. */
        if (hostlist_foreach(name, same_name, &name, &n, NULL) != 0 || n != 1)
                abort();
        if (w->hl && (w->calls >= w->hl->n || strcmp(w->hl->names[w->calls], name) != 0))
                abort();
        w->calls++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct hostlist *hl = NULL;
        struct hostlist_error e;
        struct walk w = {};
        size_t n = 0;
        char *list;
        int r, r2;

        /* hostlist_foreach() reads a C string: the input up to its first NUL. */
        list = malloc(size + 1);
        if (!list)
                abort();
        memcpy(list, data, size);
        list[size] = '\0';

        r = hostlist_foreach(list, NULL, NULL, &n, &e);
        if (r < 0) {
                if ((r != -EINVAL && r != -ERANGE && r != -E2BIG && r != -ENAMETOOLONG) ||
                    e.problem == HOSTLIST_OK || e.offset + e.len > strlen(list) ||
                    !hostlist_problem_str(e.problem))
                        abort();
                /* The callback never sees a list that fails. */
                if (hostlist_foreach(list, one_name, &w, NULL, NULL) != r || w.calls != 0)
                        abort();
                if (hostlist_new(&hl, list, NULL) != r || hl)
                        abort();
                free(list);
                return 0;
        }
        if (r != 0 || n > HOSTLIST_MAX)
                abort();
        r2 = hostlist_new(&hl, list, NULL);
        if (r2 != 0 || hl->n != n)
                abort();
        w.hl = hl;
        if (hostlist_foreach(list, check_name, &w, NULL, NULL) != 0 || w.calls != n)
                abort();
        hostlist_free(hl);
        free(list);
        return 0;
}
