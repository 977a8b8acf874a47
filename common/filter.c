#include "filter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

struct filter_rule {
        char *pattern;          /* less its prefix, leading and trailing slashes */
        char *stem;             /* "dir" of "dir/" + "***", which matches the directory too; else NULL */
        enum filter_kind kind;
        bool anchored;          /* it started with "/" */
        bool dir_only;          /* it ended with "/" */
        bool wild;              /* "*", "?" or "[" in it: a pattern, backslashes quote */
        bool slash;             /* a "/" inside it */
        bool starstar;          /* a "**" in it: may match across components */
        bool starstar_prefix;   /* it starts with "**" */
};

/* filter_wild()'s answers. The two aborts prune the backtracking: no
 * later start of an enclosing star can do better. */
enum {
        WILD_MATCH,
        WILD_NOMATCH,
        WILD_ABORT_ALL,         /* the text ran out: no shorter rest can match */
        WILD_ABORT_TO_STARSTAR, /* a "*" met a "/": only an enclosing "**" may go on */
};

/* [:name:] for an ASCII byte; -1 for an unknown name. */
static int filter_ctype(const char *name, size_t len, unsigned char c)
{
        static const char *const names[] = { "alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                             "lower", "print", "punct", "space", "upper", "xdigit" };
        bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
        bool graph = c > ' ' && c < 0x7f;
        unsigned int i;

        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == len && !memcmp(names[i], name, len))
                        break;
        switch (i) {
        case 0:  return lower || upper || digit;
        case 1:  return lower || upper;
        case 2:  return c == ' ' || c == '\t';
        case 3:  return c < ' ' || c == 0x7f;
        case 4:  return digit;
        case 5:  return graph;
        case 6:  return lower;
        case 7:  return graph || c == ' ';
        case 8:  return graph && !lower && !upper && !digit;
        case 9:  return c == ' ' || (c >= '\t' && c <= '\r');
        case 10: return upper;
        case 11: return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        default: return -1;
        }
}

/*
 * The bracket expression at @p (just past its "["), as fnmatch(3) reads
 * one: "!" or "^" first negates, a "]" first is a member, "a-z" a range,
 * "\x" quotes x, "[:alpha:]" a class. Returns what follows its "]", with
 * *@hit whether @c is in it ("/" never is), or NULL when there is no
 * "]" (the "[" is then a plain byte). *@bad is set for an unknown class.
 */
static const char *filter_class(const char *p, unsigned char c, bool *hit, bool *bad)
{
        bool neg = false, found = false;
        const char *first;

        if (*p == '!' || *p == '^') {
                neg = true;
                p++;
        }
        first = p;
        while (*p != ']' || p == first) {
                unsigned char lo, hi;

                if (!*p)
                        return NULL;
                if (p[0] == '[' && p[1] == ':') {
                        const char *end = strstr(p + 2, ":]");

                        if (end) {
                                int in = filter_ctype(p + 2, (size_t)(end - p - 2), c);

                                if (in < 0)
                                        *bad = true;
                                found |= in > 0;
                                p = end + 2;
                                continue;
                        }
                }
                if (*p == '\\' && p[1])
                        p++;
                lo = (unsigned char)*p++;
                hi = lo;
                if (p[0] == '-' && p[1] && p[1] != ']') {
                        p++;
                        if (*p == '\\' && p[1])
                                p++;
                        hi = (unsigned char)*p++;
                }
                found |= lo <= c && c <= hi;
        }
        *hit = c != '/' && found != neg;
        return p + 1;
}

/* Pattern @p against all of @t: a WILD_* answer. */
static int filter_wild(const char *p, const char *t)
{
        for (; *p; p++, t++) {
                const char *next;
                bool any, hit, bad = false;
                int r;

                if (!*t && *p != '*')
                        return WILD_ABORT_ALL;
                switch (*p) {
                case '?':
                        if (*t == '/')
                                return WILD_NOMATCH;
                        break;
                case '[':
                        next = filter_class(p + 1, (unsigned char)*t, &hit, &bad);
                        if (!next) {
                                /* No "]": a plain "[". */
                                if (*t != '[')
                                        return WILD_NOMATCH;
                                break;
                        }
                        if (!hit)
                                return WILD_NOMATCH;
                        p = next - 1;
                        break;
                case '*':
                        any = p[1] == '*';
                        while (*p == '*')
                                p++;
                        if (!*p)
                                return any || !strchr(t, '/') ? WILD_MATCH : WILD_NOMATCH;
                        /* The star takes nothing, then one byte more each time. */
                        for (;; t++) {
                                r = filter_wild(p, t);
                                if (r != WILD_NOMATCH) {
                                        if (!any || r != WILD_ABORT_TO_STARSTAR)
                                                return r;
                                } else if (!any && *t == '/') {
                                        return WILD_ABORT_TO_STARSTAR;
                                }
                                if (!*t)
                                        return WILD_ABORT_ALL;
                        }
                case '\\':
                        /* A lone one at the end (a stem's, of "a\/" + "***") is itself. */
                        if (p[1])
                                p++;
                        /* fall through */
                default:
                        if (*t != *p)
                                return WILD_NOMATCH;
                        break;
                }
        }
        return *t ? WILD_NOMATCH : WILD_MATCH;
}

static bool filter_str(const struct filter_rule *r, const char *pat, const char *text)
{
        return r->wild ? filter_wild(pat, text) == WILD_MATCH : strcmp(pat, text) == 0;
}

/* @pat (the rule's pattern or its stem) against @path, where the rule's
 * anchoring says. */
static bool filter_text(const struct filter_rule *r, const char *pat, const char *path)
{
        const char *s;

        if (r->anchored)
                return filter_str(r, pat, path);
        if (!r->slash && !r->starstar) {
                s = strrchr(path, '/');
                return filter_str(r, pat, s ? s + 1 : path);
        }
        if (r->starstar_prefix) {
                /* "**" takes any start of the path; "**" + "/" also none at all. */
                const char *rest = pat + strspn(pat, "*");

                if (filter_str(r, pat, path))
                        return true;
                if (rest[0] == '\\' && rest[1] == '/')
                        rest++;
                return rest[0] == '/' && filter_str(r, rest + 1, path);
        }
        /* The path's end, from a component's start. */
        for (s = path;; s++) {
                if (filter_str(r, pat, s))
                        return true;
                s = strchr(s, '/');
                if (!s)
                        return false;
        }
}

static bool filter_rule_match(const struct filter_rule *r, const char *path, bool is_dir)
{
        if (r->dir_only && !is_dir)
                return false;
        if (filter_text(r, r->pattern, path))
                return true;
        return r->stem && is_dir && filter_text(r, r->stem, path);
}

enum filter_kind filter_match(const struct filter_list *l, const char *relpath, bool is_dir)
{
        /* The root is never left out. */
        if (!relpath[0])
                return FILTER_INCLUDE;
        for (size_t i = 0; i < l->n; i++)
                if (filter_rule_match(&l->rules[i], relpath, is_dir))
                        return l->rules[i].kind;
        return FILTER_INCLUDE;
}

void filter_list_deinit(struct filter_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->rules[i].pattern);
        free(l->rules);
        *l = FILTER_LIST_NULL;
}

struct filter_list *filter_list_new(void)
{
        return calloc(1, sizeof(struct filter_list));
}

struct filter_list *filter_list_free(struct filter_list *l)
{
        if (l) {
                filter_list_deinit(l);
                free(l);
        }
        return NULL;
}

/* A wild pattern's shape: its "/" and "**", a trailing lone backslash or
 * an unknown class (an error, said in @err). */
static int filter_scan(struct filter_rule *r, char *err, size_t errlen)
{
        for (const char *p = r->pattern; *p; p++) {
                const char *next;
                bool hit, bad = false;

                switch (*p) {
                case '\\':
                        if (!p[1]) {
                                snprintf(err, errlen, "a pattern cannot end in a lone backslash");
                                return -EINVAL;
                        }
                        p++;
                        r->slash |= *p == '/';
                        break;
                case '/':
                        r->slash = true;
                        break;
                case '*':
                        r->starstar |= p[1] == '*';
                        p += strspn(p, "*") - 1;
                        break;
                case '[':
                        next = filter_class(p + 1, 'a', &hit, &bad);
                        if (bad) {
                                snprintf(err, errlen, "an unknown character class (the known: [:alnum:], "
                                         "[:alpha:], [:blank:], [:cntrl:], [:digit:], [:graph:], [:lower:], "
                                         "[:print:], [:punct:], [:space:], [:upper:], [:xdigit:])");
                                return -EINVAL;
                        }
                        if (next)
                                p = next - 1;
                        break;
                }
        }
        return 0;
}

int filter_add(struct filter_list *l, enum filter_kind kind, const char *text, char *err, size_t errlen)
{
        struct filter_rule r = { .kind = kind };
        size_t len, stars;
        char *p;
        int ret;

        /* rsync's prefixes, on an option's pattern and a file's line alike. */
        if ((text[0] == '+' || text[0] == '-') && text[1] == ' ') {
                r.kind = text[0] == '+' ? FILTER_INCLUDE : FILTER_EXCLUDE;
                text += 2;
        } else if (!strcmp(text, "!")) {
                filter_list_deinit(l);
                return 0;
        }
        len = strlen(text);
        if (len >= FILTER_PATTERN_MAX) {
                snprintf(err, errlen, "a pattern of %zu bytes: the most is %d", len, FILTER_PATTERN_MAX - 1);
                return -ENAMETOOLONG;
        }
        if (l->n >= FILTER_RULES_MAX) {
                snprintf(err, errlen, "more than %d rules", FILTER_RULES_MAX);
                return -E2BIG;
        }
        r.anchored = text[0] == '/';
        text += strspn(text, "/");
        len = strlen(text);
        while (len > 0 && text[len - 1] == '/') {
                r.dir_only = true;
                len--;
        }
        if (len == 0) {
                snprintf(err, errlen, "an empty pattern (\"/\" alone included) matches nothing");
                return -EINVAL;
        }
        /* The pattern, then for "dir/" + "***" its stem, in one allocation. */
        p = malloc(2 * len + 2);
        if (!p) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        memcpy(p, text, len);
        p[len] = '\0';
        r.pattern = p;
        r.wild = strpbrk(p, "*?[") != NULL;
        if (r.wild) {
                ret = filter_scan(&r, err, errlen);
                if (ret < 0) {
                        free(p);
                        return ret;
                }
                r.starstar_prefix = !r.anchored && !strncmp(p, "**", 2);
                /* Three stars or more after the last "/", as rsync reads them. */
                stars = len;
                while (stars > 0 && p[stars - 1] == '*')
                        stars--;
                if (len - stars >= 3 && stars > 1 && p[stars - 1] == '/') {
                        r.stem = p + len + 1;
                        memcpy(r.stem, p, stars - 1);
                        r.stem[stars - 1] = '\0';
                }
        } else {
                r.slash = strchr(p, '/') != NULL;
        }
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 16;
                struct filter_rule *rules = realloc(l->rules, cap * sizeof(*rules));

                if (!rules) {
                        free(p);
                        snprintf(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                l->rules = rules;
                l->cap = cap;
        }
        l->rules[l->n++] = r;
        return 0;
}

/* One line of filter_load()'s: 0 or filter_add()'s error, "line N: " in @err. */
static int filter_line(struct filter_list *l, enum filter_kind kind, const char *line, size_t len,
                       uintmax_t n, char *err, size_t errlen)
{
        char why[256];
        int r;

        if (len == 0 || line[0] == '#' || line[0] == ';')
                return 0;
        if (len >= FILTER_PATTERN_MAX) {
                snprintf(err, errlen, "line %ju: longer than %d bytes", n, FILTER_PATTERN_MAX - 1);
                return -ENAMETOOLONG;
        }
        if (strlen(line) != len) {
                snprintf(err, errlen, "line %ju: a NUL byte", n);
                return -EINVAL;
        }
        r = filter_add(l, kind, line, why, sizeof(why));
        if (r < 0)
                snprintf(err, errlen, "line %ju: %s", n, why);
        return r;
}

ssize_t filter_list_text(const struct filter_list *l, char *buf, size_t cap)
{
        size_t off = 0;

        for (size_t i = 0; i < l->n; i++) {
                const struct filter_rule *r = &l->rules[i];
                size_t n = strlen(r->pattern);

                if (strpbrk(r->pattern, "\n\r"))
                        return -EINVAL;
                /* "- " or "+ ", "/", the pattern, "/", "\n" */
                if (n + 5 > cap - MIN(off, cap) || off + n + 5 > SSIZE_MAX)
                        return -E2BIG;
                off += (size_t)snprintf(buf + off, cap - off, "%c %s%s%s\n", r->kind == FILTER_INCLUDE ? '+' : '-',
                                        r->anchored ? "/" : "", r->pattern, r->dir_only ? "/" : "");
        }
        if (off < cap)
                buf[off] = '\0';
        return (ssize_t)off;
}

int filter_list_parse(struct filter_list *l, const char *text, size_t len, char *err, size_t errlen)
{
        char line[FILTER_PATTERN_MAX + 2];
        size_t start = 0;
        unsigned int n = 0;

        while (start < len) {
                const char *nl = memchr(text + start, '\n', len - start);
                size_t end = nl ? (size_t)(nl - text) : len, ll = end - start;
                char why[256];
                int r;

                n++;
                if (ll >= sizeof(line) - 1 || memchr(text + start, '\0', ll)) {
                        snprintf(err, errlen, "line %u: %s", n, ll >= sizeof(line) - 1 ? "too long" : "a NUL byte");
                        return ll >= sizeof(line) - 1 ? -ENAMETOOLONG : -EINVAL;
                }
                memcpy(line, text + start, ll);
                line[ll] = '\0';
                start = end + 1;
                if (ll == 0)
                        continue;
                r = filter_add(l, FILTER_EXCLUDE, line, why, sizeof(why));
                if (r < 0) {
                        snprintf(err, errlen, "line %u: %s", n, why);
                        return r;
                }
        }
        return 0;
}

int filter_load(struct filter_list *l, enum filter_kind kind, FILE *f, char *err, size_t errlen)
{
        /* A longer line is refused: its length is all that is kept of it. */
        char line[FILTER_PATTERN_MAX + 1];
        size_t len = 0;
        uintmax_t n = 1;
        int c, prev = 0, r;

        for (;;) {
                c = getc(f);
                if (c != EOF && c != '\n' && c != '\r') {
                        if (len < sizeof(line) - 1)
                                line[len] = (char)c;
                        len++;
                        prev = c;
                        continue;
                }
                /* "\r\n" ends one line, not two. */
                if (!(c == '\n' && prev == '\r')) {
                        line[MIN(len, sizeof(line) - 1)] = '\0';
                        r = filter_line(l, kind, line, len, n, err, errlen);
                        if (r < 0)
                                return r;
                        n++;
                }
                if (c == EOF)
                        break;
                len = 0;
                prev = c;
        }
        if (ferror(f)) {
                snprintf(err, errlen, "line %ju: cannot read: %s", n, strerror(errno ? errno : EIO));
                return -EIO;
        }
        return 0;
}
