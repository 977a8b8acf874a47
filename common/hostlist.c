#include "hostlist.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

/* One "[...]" of a host: where it is, what it holds, and where a walk is in it. */
struct hl_group {
        const char *open;               /* its '[' */
        const char *close;              /* its ']' */
        /* the walk */
        const char *item_end;           /* the ',' or ']' after the current item */
        uint64_t v, hi;
        size_t width;
};

/*
 * One host of the list ("rack[1-2]-n[01-16]-ib"). Each group prints at least
 * one byte, so a host with more groups than HOSTLIST_NAME_MAX has a name
 * too long anyway: the array never needs to be larger.
 */
struct hl_token {
        const char *start, *end;
        size_t ngroups;
        struct hl_group g[HOSTLIST_NAME_MAX];
};

struct hl_item {
        uint64_t lo, hi;
        size_t width;                   /* digits of lo, leading zeros kept */
};

const char *hostlist_problem_str(enum hostlist_problem p)
{
        switch (p) {
        case HOSTLIST_OK:
                return "ok";
        case HOSTLIST_UNCLOSED:
                return "'[' without its ']'";
        case HOSTLIST_UNOPENED:
                return "']' without its '['";
        case HOSTLIST_NESTED:
                return "'[' inside brackets";
        case HOSTLIST_EMPTY_ITEM:
                return "empty range";
        case HOSTLIST_NOT_A_NUMBER:
                return "not a number or LO-HI range";
        case HOSTLIST_REVERSED:
                return "reversed range (LO greater than HI)";
        case HOSTLIST_NUMBER_TOO_BIG:
                return "number too big";
        case HOSTLIST_BAD_CHAR:
                return "character not allowed in a host name";
        case HOSTLIST_TOO_MANY:
                return "more than 65536 hosts";
        case HOSTLIST_NAME_TOO_LONG:
                return "host name longer than 253 bytes";
        }
        return "unknown problem";
}

static int hl_fail(struct hostlist_error *err, enum hostlist_problem p, const char *list,
                   const char *at, size_t len)
{
        if (err) {
                err->problem = p;
                err->offset = (size_t)(at - list);
                err->len = len;
        }
        switch (p) {
        case HOSTLIST_NUMBER_TOO_BIG:
                return -ERANGE;
        case HOSTLIST_TOO_MANY:
                return -E2BIG;
        case HOSTLIST_NAME_TOO_LONG:
                return -ENAMETOOLONG;
        default:
                return -EINVAL;
        }
}

static bool hl_is_sep(char c)
{
        return c == ',' || c == ' ' || c == '\t';
}

static bool hl_is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Bytes "%0*" PRIu64 prints for @v at @width. */
static size_t hl_numlen(uint64_t v, size_t width)
{
        size_t n = 1;

        while (v >= 10) {
                v /= 10;
                n++;
        }
        return MAX(n, width);
}

/* Digits [@s, @e) as a number; -ERANGE past 2^64 - 1. @s < @e, all digits. */
static int hl_number(const char *s, const char *e, uint64_t *out)
{
        uint64_t v = 0;

        for (; s < e; s++) {
                uint64_t d = (uint64_t)(*s - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *out = v;
        return 0;
}

/*
 * The item at @s ("7", "08-11"), which ends at the next ',' or @close;
 * *@end is set to that ','/']'.
 */
static int hl_item(const char *list, const char *s, const char *close, struct hl_item *it,
                   const char **end, struct hostlist_error *err)
{
        const char *e = s, *dash = NULL;

        while (e < close && *e != ',')
                e++;
        *end = e;
        if (e == s)
                return hl_fail(err, HOSTLIST_EMPTY_ITEM, list, s, 0);
        for (const char *c = s; c < e; c++) {
                if (*c == '-' && !dash) {
                        dash = c;
                        continue;
                }
                if (!hl_is_digit(*c))
                        return hl_fail(err, HOSTLIST_NOT_A_NUMBER, list, s, (size_t)(e - s));
        }
        /* Slurm refuses "-1"; it reads "1-" as 1, which is more likely a typo. */
        if (dash == s || dash == e - 1)
                return hl_fail(err, HOSTLIST_EMPTY_ITEM, list, s, (size_t)(e - s));
        if (hl_number(s, dash ? dash : e, &it->lo) < 0 ||
            (dash && hl_number(dash + 1, e, &it->hi) < 0))
                return hl_fail(err, HOSTLIST_NUMBER_TOO_BIG, list, s, (size_t)(e - s));
        if (!dash)
                it->hi = it->lo;
        if (it->lo > it->hi)
                return hl_fail(err, HOSTLIST_REVERSED, list, s, (size_t)(e - s));
        if (it->hi - it->lo >= HOSTLIST_MAX)
                return hl_fail(err, HOSTLIST_TOO_MANY, list, s, (size_t)(e - s));
        /* Only LO's digits count, as in Slurm: "[1-010]" is 1 .. 10. */
        it->width = (size_t)((dash ? dash : e) - s);
        return 0;
}

/*
 * The next host of the list at *@pos into @t, its brackets matched and its
 * characters checked (not yet the items); t->start is NULL at the end of
 * the list. Advances *@pos past it.
 */
static int hl_scan(const char *list, const char **pos, struct hl_token *t,
                   struct hostlist_error *err)
{
        const char *s = *pos, *open = NULL;

        while (hl_is_sep(*s))
                s++;
        t->start = NULL;
        t->ngroups = 0;
        if (*s == '\0') {
                *pos = s;
                return 0;
        }
        t->start = s;
        for (;; s++) {
                char c = *s;

                if (open) {
                        /* Inside: the items are checked later, except for these. */
                        if (c == '\0')
                                return hl_fail(err, HOSTLIST_UNCLOSED, list, open, (size_t)(s - open));
                        if (c == '[')
                                return hl_fail(err, HOSTLIST_NESTED, list, s, 1);
                        if (c == ']') {
                                t->g[t->ngroups].open = open;
                                t->g[t->ngroups].close = s;
                                t->ngroups++;
                                open = NULL;
                        }
                        continue;
                }
                if (c == '\0' || hl_is_sep(c))
                        break;
                if (c == ']')
                        return hl_fail(err, HOSTLIST_UNOPENED, list, s, 1);
                if (c == '[') {
                        if (t->ngroups == ARRAY_SIZE(t->g))
                                return hl_fail(err, HOSTLIST_NAME_TOO_LONG, list, t->start,
                                               (size_t)(s - t->start));
                        open = s;
                        continue;
                }
                if ((unsigned char)c < 0x21 || (unsigned char)c > 0x7e)
                        return hl_fail(err, HOSTLIST_BAD_CHAR, list, s, 1);
        }
        t->end = s;
        *pos = s;
        return 0;
}

/*
 * Check every item of @t: sets *@hosts to how many names it expands to
 * (at most HOSTLIST_MAX) after checking that none is too long.
 */
static int hl_check(const char *list, const struct hl_token *t, size_t *hosts,
                    struct hostlist_error *err)
{
        size_t n = 1, len = (size_t)(t->end - t->start);

        for (size_t i = 0; i < t->ngroups; i++) {
                const struct hl_group *g = &t->g[i];
                size_t count = 0, longest = 0;
                const char *s = g->open + 1, *e;

                for (;; s = e + 1) {
                        struct hl_item it;
                        int r = hl_item(list, s, g->close, &it, &e, err);

                        if (r < 0)
                                return r;
                        /* Each item is below HOSTLIST_MAX: no overflow before this. */
                        count += (size_t)(it.hi - it.lo) + 1;
                        if (count > HOSTLIST_MAX)
                                return hl_fail(err, HOSTLIST_TOO_MANY, list, g->open,
                                               (size_t)(g->close - g->open + 1));
                        longest = MAX(longest, hl_numlen(it.hi, it.width));
                        if (e == g->close)
                                break;
                }
                /* Every combination is a host, so the longest of each group meet in one. */
                len = len - (size_t)(g->close - g->open + 1) + longest;
                if (n > HOSTLIST_MAX / count)
                        return hl_fail(err, HOSTLIST_TOO_MANY, list, t->start,
                                       (size_t)(t->end - t->start));
                n *= count;
        }
        if (len > HOSTLIST_NAME_MAX)
                return hl_fail(err, HOSTLIST_NAME_TOO_LONG, list, t->start, (size_t)(t->end - t->start));
        *hosts = n;
        return 0;
}

/* Put group @g on the first value of its first item. */
static void hl_group_rewind(struct hl_group *g)
{
        struct hl_item it;

        /* Checked already: cannot fail. */
        (void)hl_item(NULL, g->open + 1, g->close, &it, &g->item_end, NULL);
        g->v = it.lo;
        g->hi = it.hi;
        g->width = it.width;
}

/* Step @g to its next value; false when it wraps around to its first. */
static bool hl_group_step(struct hl_group *g)
{
        struct hl_item it;

        if (g->v < g->hi) {
                g->v++;
                return true;
        }
        if (g->item_end == g->close) {
                hl_group_rewind(g);
                return false;
        }
        (void)hl_item(NULL, g->item_end + 1, g->close, &it, &g->item_end, NULL);
        g->v = it.lo;
        g->hi = it.hi;
        g->width = it.width;
        return true;
}

/*
 * Slurm's order: the last group fastest, then the first, second, ... up to
 * the one before the last (its parser peels groups off from the right and
 * recurses on the prefix). Returns false after the last combination.
 */
static bool hl_token_step(struct hl_token *t)
{
        if (t->ngroups == 0)
                return false;
        if (hl_group_step(&t->g[t->ngroups - 1]))
                return true;
        for (size_t i = 0; i + 1 < t->ngroups; i++)
                if (hl_group_step(&t->g[i]))
                        return true;
        return false;
}

/* The name @t is at now, into @buf (HOSTLIST_NAME_MAX + 1 bytes; checked to fit). */
static size_t hl_token_name(const struct hl_token *t, char *buf)
{
        const char *lit = t->start;
        size_t n = 0;

        for (size_t i = 0; i < t->ngroups; i++) {
                const struct hl_group *g = &t->g[i];

                memcpy(buf + n, lit, (size_t)(g->open - lit));
                n += (size_t)(g->open - lit);
                n += (size_t)snprintf(buf + n, HOSTLIST_NAME_MAX + 1 - n, "%0*" PRIu64,
                                      (int)g->width, g->v);
                lit = g->close + 1;
        }
        memcpy(buf + n, lit, (size_t)(t->end - lit));
        n += (size_t)(t->end - lit);
        buf[n] = '\0';
        return n;
}

int hostlist_foreach(const char *list, hostlist_fn fn, void *userdata, size_t *count,
                     struct hostlist_error *err)
{
        struct hl_token t;
        const char *pos = list;
        size_t total = 0;
        int r;

        if (err)
                *err = (struct hostlist_error){ .problem = HOSTLIST_OK };

        /* All of it first: a caller gets the whole list or an error, never a part. */
        for (;;) {
                size_t n;

                r = hl_scan(list, &pos, &t, err);
                if (r < 0)
                        return r;
                if (!t.start)
                        break;
                r = hl_check(list, &t, &n, err);
                if (r < 0)
                        return r;
                if (n > HOSTLIST_MAX - total)
                        return hl_fail(err, HOSTLIST_TOO_MANY, list, t.start,
                                       (size_t)(t.end - t.start));
                total += n;
        }
        if (count)
                *count = total;
        if (!fn)
                return 0;

        pos = list;
        for (;;) {
                char name[HOSTLIST_NAME_MAX + 1];

                (void)hl_scan(list, &pos, &t, NULL);
                if (!t.start)
                        break;
                for (size_t i = 0; i < t.ngroups; i++)
                        hl_group_rewind(&t.g[i]);
                do {
                        size_t len = hl_token_name(&t, name);

                        r = fn(name, len, userdata);
                        if (r < 0)
                                return r;
                } while (hl_token_step(&t));
        }
        return 0;
}

struct hl_fill {
        struct hostlist *hl;
        char *next;
        size_t bytes;
};

static int hl_measure(const char *name _unused_, size_t len, void *userdata)
{
        struct hl_fill *f = userdata;

        f->bytes += len + 1;
        return 0;
}

static int hl_store(const char *name, size_t len, void *userdata)
{
        struct hl_fill *f = userdata;

        memcpy(f->next, name, len + 1);
        f->hl->names[f->hl->n++] = f->next;
        f->next += len + 1;
        return 0;
}

int hostlist_new(struct hostlist **out, const char *list, struct hostlist_error *err)
{
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        struct hl_fill f = {};
        size_t n;
        int r;

        r = hostlist_foreach(list, hl_measure, &f, &n, err);
        if (r < 0)
                return r;
        /* At most HOSTLIST_MAX x (HOSTLIST_NAME_MAX + 1 + a pointer): about 17 MiB. */
        hl = calloc(1, sizeof(*hl) + n * sizeof(char *) + f.bytes);
        if (!hl)
                return -ENOMEM;
        hl->names = (char **)(hl + 1);
        f.hl = hl;
        f.next = (char *)(hl->names + n);
        r = hostlist_foreach(list, hl_store, &f, NULL, err);
        if (r < 0)
                return r;
        *out = TAKE_PTR(hl);
        return 0;
}

void hostlist_free(struct hostlist *hl)
{
        free(hl);
}
