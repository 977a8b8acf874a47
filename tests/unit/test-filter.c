/* xferctl send -r's --exclude/--include rules (client/filter.c): rsync's
 * pattern rules as xferctl(1) documents them, the -from files' lines, the
 * limits; and the matcher against fnmatch(3) and a naive one, at random. */

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "tap.h"

static char err[512];

/* A list of @n rules, "-" or "+" then a space then the pattern, in order. */
static struct filter_list rules(int n, ...)
{
        struct filter_list l = FILTER_LIST_NULL;
        va_list ap;

        va_start(ap, n);
        for (int i = 0; i < n; i++) {
                const char *text = va_arg(ap, const char *);

                if (filter_add(&l, FILTER_EXCLUDE, text, err, sizeof(err)) < 0) {
                        diag("cannot add '%s': %s", text, err);
                        abort();
                }
        }
        va_end(ap);
        return l;
}

/* Whether the one exclude rule @pat excludes @path (a directory when @dir). */
static bool ex(const char *pat, const char *path, bool dir)
{
        struct filter_list l = rules(1, pat);
        bool r = filter_match(&l, path, dir) == FILTER_EXCLUDE;

        filter_list_deinit(&l);
        return r;
}

#define F false
#define D true

/* ---- a naive reference for the random tests: plain recursion, no pruning ---- */

static bool ref_class(const char **pp, char c)
{
        const char *p = *pp, *first;
        bool neg = false, found = false;

        if (*p == '!' || *p == '^')
                neg = true, p++;
        first = p;
        while (*p != ']' || p == first) {
                char lo, hi;

                if (*p == '\\' && p[1])
                        p++;
                lo = hi = *p++;
                if (p[0] == '-' && p[1] && p[1] != ']') {
                        p++;
                        if (*p == '\\' && p[1])
                                p++;
                        hi = *p++;
                }
                found |= (unsigned char)lo <= (unsigned char)c && (unsigned char)c <= (unsigned char)hi;
        }
        *pp = p + 1;
        return c != '/' && found != neg;
}

/* No "[:": the random patterns have none. An unclosed "[" is a plain byte. */
static bool ref(const char *p, const char *t)
{
        if (!*p)
                return !*t;
        if (p[0] == '*' && p[1] == '*') {
                while (*p == '*')
                        p++;
                for (;; t++) {
                        if (ref(p, t))
                                return true;
                        if (!*t)
                                return false;
                }
        }
        if (*p == '*') {
                for (p++;; t++) {
                        if (ref(p, t))
                                return true;
                        if (!*t || *t == '/')
                                return false;
                }
        }
        if (!*t)
                return false;
        if (*p == '?')
                return *t != '/' && ref(p + 1, t + 1);
        if (*p == '[') {
                const char *q = p + 1;
                bool closed = false;

                /* Closed: a "]" past the first member, escapes skipped. */
                if (*q == '!' || *q == '^')
                        q++;
                for (const char *s = q; *s; s++) {
                        if (*s == '\\' && s[1]) {
                                s++;
                                continue;
                        }
                        if (*s == ']' && s != q) {
                                closed = true;
                                break;
                        }
                }
                if (closed) {
                        q = p + 1;
                        return ref_class(&q, *t) && ref(q, t + 1);
                }
                return *t == '[' && ref(p + 1, t + 1);
        }
        if (*p == '\\' && p[1])
                p++;
        return *t == *p && ref(p + 1, t + 1);
}

static unsigned long long rng = 88172645463325252ull;

static unsigned int rnd(unsigned int n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (unsigned int)(rng % n);
}

static void random_str(char *buf, size_t max, const char *alphabet)
{
        size_t n = rnd((unsigned int)max), k = strlen(alphabet);

        for (size_t i = 0; i < n; i++)
                buf[i] = alphabet[rnd((unsigned int)k)];
        buf[n] = '\0';
}

int main(void)
{
        struct filter_list l = FILTER_LIST_NULL;
        char big[FILTER_PATTERN_MAX + 2];
        FILE *f;
        int r;

        /* ---- no rules, and the root ---- */
        is_int(filter_match(&l, "a/b", false), FILTER_INCLUDE, "no rule: included");
        l = rules(1, "*");
        is_int(filter_match(&l, "", true), FILTER_INCLUDE, "the root (an empty path) is never excluded");
        is_int(filter_match(&l, "x", false), FILTER_EXCLUDE, "'*' excludes everything beneath it");
        filter_list_deinit(&l);

        /* ---- "*", "?" ---- */
        ok(ex("*.o", "a.o", F) && ex("*.o", "src/lib/a.o", F), "'*.o' matches a name at any depth");
        ok(ex("*.o", "obj.o", D), "a directory too (no trailing slash)");
        ok(!ex("*.o", "a.o/b", F) && !ex("*.o", "a.c", F), "only the last component");
        ok(ex("*", ".hidden", F), "'*' matches a leading dot (no special case, as rsync)");
        ok(ex("a*", "a", F), "'*' matches nothing too");
        ok(!ex("/a*c", "ab/c", F) && ex("/a*c", "abbc", F), "'*' never crosses '/'");
        ok(ex("/a/*/c", "a/b/c", F) && !ex("/a/*/c", "a/b/x/c", F), "'*' is one component's");
        ok(ex("a?c", "abc", F) && !ex("a?c", "ac", F) && !ex("a?c", "abbc", F), "'?' is one byte");
        ok(!ex("/a?c", "a/c", F), "'?' never matches '/'");
        ok(ex("??", "é", F), "bytes, not characters: a two-byte UTF-8 letter is two '?'");

        /* ---- "**" ---- */
        ok(ex("/a/**", "a/b", F) && ex("/a/**", "a/b/c/d", F), "'/a/**' matches everything beneath a");
        ok(!ex("/a/**", "a", D), "but not a itself");
        ok(ex("a/**/z", "a/b/c/z", F) && ex("a/**/z", "x/a/b/z", F), "'a/**/z' across components, at any depth");
        ok(!ex("a/**/z", "a/z", F), "'a/**/z' needs one component between (rsync's rule)");
        ok(ex("**/foo", "foo", F) && ex("**/foo", "a/b/foo", F), "'**/foo' matches foo at the root and deeper");
        ok(!ex("**/foo", "afoo", F) && !ex("**/foo", "a/bfoo", F), "'**/foo': a whole last component");
        ok(ex("**foo", "a/bfoo", F) && ex("**foo", "foo", F), "'**foo': any end");
        ok(!ex("/**/foo", "foo", F) && ex("/**/foo", "a/foo", F), "'/**/foo' anchored: one directory at least");
        ok(ex("a**z", "a/b/z", F) && !ex("a**z", "xa/b/z", F), "'a**z' from a component's start");
        ok(ex("logs/**.log", "x/logs/a/b.log", F), "'**' then text");
        ok(ex("***", "a/b", F) && ex("x/***", "x/y/z", F), "three stars are two and one: anything");

        /* ---- "dir/" then "***" ---- */
        ok(ex("dir/***", "dir", D), "'dir/***': the directory itself");
        ok(ex("dir/***", "dir/a", F) && ex("dir/***", "dir/a/b", D), "and everything beneath it");
        ok(ex("dir/***", "x/dir", D) && ex("dir/***", "x/dir/y", F), "at any depth");
        ok(!ex("dir/***", "dir", F), "not a file named dir");
        ok(!ex("dir/***", "dirx", D) && !ex("dir/***", "xdir", D), "nor another name");
        ok(ex("/dir/***", "dir", D) && !ex("/dir/***", "x/dir", D), "anchored too");
        ok(ex("dir/****", "dir", D) && ex("dir/****", "dir/a/b", F), "four stars are three (rsync)");
        ok(!ex("dir/**", "dir", D) && ex("dir**", "dir", D), "two are not: not the directory (but dir** is)");
        ok(ex("a/b/***", "x/a/b", D) && !ex("a/b/***", "b", D), "'a/b/***' is a/b's");

        /* ---- classes ---- */
        ok(ex("[abc].txt", "b.txt", F) && !ex("[abc].txt", "d.txt", F), "'[abc]'");
        ok(ex("[a-c]x", "bx", F) && !ex("[a-c]x", "dx", F), "a range");
        ok(ex("[!a]x", "bx", F) && !ex("[!a]x", "ax", F), "'!' negates");
        ok(ex("[^a]x", "bx", F) && !ex("[^a]x", "ax", F), "'^' negates");
        ok(ex("[]]x", "]x", F) && ex("[!]]x", "ax", F) && !ex("[!]]x", "]x", F), "']' first is a member");
        ok(ex("[a-]x", "-x", F) && ex("[a-]x", "ax", F), "'-' last is a member");
        ok(ex("[\\]a]*", "]b", F) && ex("[\\!]*", "!x", F), "a backslash quotes in a class");
        ok(ex("[[:digit:]]*", "7up", F) && !ex("[[:digit:]]*", "up", F), "[:digit:]");
        ok(ex("[[:upper:][:digit:]]", "Q", F) && !ex("[[:upper:][:digit:]]", "q", F), "two classes in one");
        ok(ex("[![:alpha:]]*", "_a", F) && !ex("[![:alpha:]]*", "a_", F), "a negated class");
        ok(!ex("/a[!x]b", "a/b", F) && !ex("/a[/]b", "a/b", F), "a class never matches '/'");
        ok(ex("[ab*", "[ab-and-more", F), "an unclosed '[' is a plain byte");
        ok(ex("[z-a]*", "-", F) == false, "a reversed range matches nothing");
        r = filter_add(&l, FILTER_EXCLUDE, "[[:vowel:]]", err, sizeof(err));
        is_int(r, -EINVAL, "an unknown class is refused");
        ok(strstr(err, "unknown character class") != NULL, "and said: %s", err);

        /* ---- backslashes ---- */
        ok(ex("\\*.txt", "*.txt", F) && !ex("\\*.txt", "a.txt", F), "'\\*' is a star");
        ok(ex("a\\?b", "a?b", F) && !ex("a\\?b", "axb", F), "'\\?' is a question mark");
        ok(ex("x\\[1]", "x[1]", F) && !ex("x\\[1]", "x1", F), "'\\[' is a bracket");
        ok(ex("foo\\bar", "foo\\bar", F) && !ex("foo\\bar", "foobar", F),
           "no wildcard: a plain string, its backslash a backslash (rsync)");
        ok(ex("foo\\bar*", "foobar.c", F) && !ex("foo\\bar*", "foo\\bar.c", F),
           "with a wildcard, a backslash quotes ('\\b' is 'b')");
        ok(ex("foo\\\\bar*", "foo\\bar.c", F), "'\\\\' is a backslash");
        r = filter_add(&l, FILTER_EXCLUDE, "ab*\\", err, sizeof(err));
        is_int(r, -EINVAL, "a wild pattern ending in a lone backslash is refused (%s)", err);

        /* ---- anchoring ---- */
        ok(ex("/foo", "foo", F) && !ex("/foo", "a/foo", F), "'/foo': at the root only");
        ok(ex("foo", "foo", F) && ex("foo", "a/b/foo", D), "'foo': at any depth");
        ok(!ex("foo", "afoo", F) && !ex("foo", "foox", F), "a whole name");
        ok(ex("a/b", "a/b", F) && ex("a/b", "x/y/a/b", F), "'a/b': the path's end");
        ok(!ex("a/b", "xa/b", F) && !ex("a/b", "a/b/c", F), "from a component's start, to the end");
        ok(ex("/a/b", "a/b", F) && !ex("/a/b", "x/a/b", F), "'/a/b': from the root");
        ok(ex("a*/b?", "x/ab/bc", F) && !ex("a*/b?", "x/ab/c/bc", F), "a wild pattern with a '/'");
        ok(ex("//a", "a", F), "several leading slashes are one");

        /* ---- trailing slash ---- */
        ok(ex("build/", "build", D) && !ex("build/", "build", F), "'build/': a directory only");
        ok(ex("build/", "x/y/build", D), "at any depth");
        ok(ex("/build/", "build", D) && !ex("/build/", "x/build", D), "'/build/': at the root only");
        ok(ex("a/b/", "x/a/b", D) && !ex("a/b/", "x/a/b", F), "'a/b/'");
        ok(ex("*.d//", "x.d", D) && !ex("*.d//", "x.d", F), "several trailing slashes are one");

        /* ---- first match wins ---- */
        l = rules(2, "+ keep.log", "*.log");
        ok(filter_match(&l, "logs/keep.log", false) == FILTER_INCLUDE &&
           filter_match(&l, "logs/other.log", false) == FILTER_EXCLUDE &&
           filter_match(&l, "logs/x.txt", false) == FILTER_INCLUDE, "an include before an exclude wins");
        filter_list_deinit(&l);
        l = rules(2, "*.log", "+ keep.log");
        is_int(filter_match(&l, "keep.log", false), FILTER_EXCLUDE, "after it, it does not");
        filter_list_deinit(&l);
        l = rules(3, "+ */", "+ *.c", "*");
        ok(filter_match(&l, "a", true) == FILTER_INCLUDE && filter_match(&l, "a/b.c", false) == FILTER_INCLUDE &&
           filter_match(&l, "a/b.h", false) == FILTER_EXCLUDE, "rsync's '+ */' '+ *.c' '- *': only .c files");
        filter_list_deinit(&l);

        /* ---- kinds and prefixes ---- */
        is_int(filter_add(&l, FILTER_INCLUDE, "x", err, sizeof(err)), 0, "an include");
        is_int(filter_match(&l, "x", false), FILTER_INCLUDE, "includes");
        is_int(filter_add(&l, FILTER_INCLUDE, "- y", err, sizeof(err)), 0, "'- ' in an include");
        is_int(filter_match(&l, "y", false), FILTER_EXCLUDE, "is an exclude");
        is_int(filter_add(&l, FILTER_EXCLUDE, "+ z", err, sizeof(err)), 0, "'+ ' in an exclude");
        is_int(filter_add(&l, FILTER_EXCLUDE, "z", err, sizeof(err)), 0, "then z excluded");
        is_int(filter_match(&l, "z", false), FILTER_INCLUDE, "the '+ ' came first");
        is_int(filter_add(&l, FILTER_EXCLUDE, "-x", err, sizeof(err)), 0, "'-x' (no space) is a pattern");
        is_int(filter_match(&l, "-x", false), FILTER_EXCLUDE, "matching '-x'");
        is_int(filter_add(&l, FILTER_EXCLUDE, "!", err, sizeof(err)), 0, "'!'");
        ok(l.n == 0 && filter_match(&l, "y", false) == FILTER_INCLUDE, "clears the rules");
        is_int(filter_add(&l, FILTER_EXCLUDE, "- !", err, sizeof(err)), 0, "'- !'");
        is_int(filter_match(&l, "!", false), FILTER_EXCLUDE, "is a pattern '!'");
        filter_list_deinit(&l);

        /* ---- refusals and limits ---- */
        is_int(filter_add(&l, FILTER_EXCLUDE, "", err, sizeof(err)), -EINVAL, "an empty pattern is refused");
        ok(strstr(err, "empty") != NULL, "said: %s", err);
        is_int(filter_add(&l, FILTER_EXCLUDE, "/", err, sizeof(err)), -EINVAL, "'/' alone too");
        is_int(filter_add(&l, FILTER_EXCLUDE, "- ", err, sizeof(err)), -EINVAL, "'- ' alone too");
        memset(big, 'a', FILTER_PATTERN_MAX - 1);
        big[FILTER_PATTERN_MAX - 1] = '\0';
        is_int(filter_add(&l, FILTER_EXCLUDE, big, err, sizeof(err)), 0, "a pattern of PATH_MAX - 1 bytes");
        big[FILTER_PATTERN_MAX - 1] = 'a';
        big[FILTER_PATTERN_MAX] = '\0';
        is_int(filter_add(&l, FILTER_EXCLUDE, big, err, sizeof(err)), -ENAMETOOLONG, "PATH_MAX bytes: refused");
        ok(strstr(err, "4095") != NULL, "said: %s", err);
        filter_list_deinit(&l);
        for (r = 0; r < FILTER_RULES_MAX && r >= 0; r++)
                if (filter_add(&l, FILTER_EXCLUDE, "*.o", err, sizeof(err)) < 0)
                        r = -2;
        ok(r == FILTER_RULES_MAX && l.n == FILTER_RULES_MAX, "%d rules", FILTER_RULES_MAX);
        is_int(filter_add(&l, FILTER_EXCLUDE, "*.o", err, sizeof(err)), -E2BIG, "one more: refused");
        ok(strstr(err, "10000") != NULL, "said: %s", err);
        is_int(filter_add(&l, FILTER_EXCLUDE, "!", err, sizeof(err)), 0, "'!' still clears a full list");
        filter_list_deinit(&l);
        filter_list_deinit(&l);
        ok(1, "deinit twice, and on an empty list");
        {
                struct filter_list *h = filter_list_new();

                ok(h && filter_add(h, FILTER_EXCLUDE, "x", err, sizeof(err)) == 0 &&
                   filter_match(h, "x", false) == FILTER_EXCLUDE, "a list on the heap");
                ok(filter_list_free(h) == NULL && filter_list_free(NULL) == NULL, "freed, and NULL is fine");
        }

        /* ---- -from files ---- */
        {
                static const char text[] = "# a comment\n"
                                           "; another\n"
                                           "\n"
                                           "*.o\n"
                                           "+ keep.log\r\n"
                                           "\r\n"
                                           "*.log\r"
                                           "trail \n"
                                           "  #not-a-comment\n"
                                           "build/";

                f = fmemopen((void *)text, sizeof(text) - 1, "r");
                is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), 0, "a -from file loads");
                fclose(f);
                is_int(l.n, 6, "comments ('#', ';') and blank lines (CRLF too) ignored: 6 rules");
                ok(filter_match(&l, "a/x.o", false) == FILTER_EXCLUDE, "its '*.o'");
                ok(filter_match(&l, "keep.log", false) == FILTER_INCLUDE &&
                   filter_match(&l, "other.log", false) == FILTER_EXCLUDE,
                   "'+ keep.log' (CRLF), then '*.log' (a lone CR ends a line): in the file's order");
                ok(filter_match(&l, "trail ", false) == FILTER_EXCLUDE &&
                   filter_match(&l, "trail", false) == FILTER_INCLUDE, "trailing spaces are the pattern's (rsync)");
                ok(filter_match(&l, "  #not-a-comment", false) == FILTER_EXCLUDE,
                   "a '#' after spaces is not a comment");
                ok(filter_match(&l, "build", true) == FILTER_EXCLUDE, "the last line without a newline");
                filter_list_deinit(&l);
        }
        {
                static const char text[] = "+ *.c\n*\n";

                f = fmemopen((void *)text, sizeof(text) - 1, "r");
                is_int(filter_load(&l, FILTER_INCLUDE, f, err, sizeof(err)), 0, "an --include-from file");
                fclose(f);
                ok(filter_match(&l, "a.c", false) == FILTER_INCLUDE && filter_match(&l, "a.h", false) == FILTER_INCLUDE,
                   "its plain lines are includes");
                filter_list_deinit(&l);
        }
        {
                static const char text[] = "a\n\n# c\nb\n/\nc\n";

                f = fmemopen((void *)text, sizeof(text) - 1, "r");
                is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), -EINVAL, "a bad line fails the load");
                fclose(f);
                is_str(err, "line 5: an empty pattern (\"/\" alone included) matches nothing", "naming its line");
                filter_list_deinit(&l);
        }
        {
                static const char text[] = "a\r\nb\r\n\r\nc[[:x:]]\n";

                f = fmemopen((void *)text, sizeof(text) - 1, "r");
                is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), -EINVAL, "an unknown class");
                fclose(f);
                ok(!strncmp(err, "line 4: ", 8), "CRLF lines are counted once each: %s", err);
                filter_list_deinit(&l);
        }
        {
                static const char text[] = "a\nb\0c\n";

                f = fmemopen((void *)text, sizeof(text) - 1, "r");
                is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), -EINVAL, "a NUL byte is refused");
                fclose(f);
                is_str(err, "line 2: a NUL byte", "said");
                filter_list_deinit(&l);
        }
        {
                char *text = malloc(3 * FILTER_PATTERN_MAX);

                snprintf(text, 3 * FILTER_PATTERN_MAX, "ok\n");
                memset(text + 3, 'x', 2 * FILTER_PATTERN_MAX);
                text[3 + 2 * FILTER_PATTERN_MAX] = '\n';
                f = fmemopen(text, 4 + 2 * FILTER_PATTERN_MAX, "r");
                is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), -ENAMETOOLONG,
                       "a line of 2 x PATH_MAX bytes is refused");
                fclose(f);
                is_str(err, "line 2: longer than 4095 bytes", "said, without holding it");
                filter_list_deinit(&l);
                free(text);
        }
        f = fopen("/dev/null", "re");
        is_int(filter_load(&l, FILTER_EXCLUDE, f, err, sizeof(err)), 0, "an empty file");
        fclose(f);
        is_int(l.n, 0, "adds nothing");

        /* ---- at random: one-component wildcards against fnmatch(FNM_PATHNAME) ---- */
        {
                int bad = 0, n = 0;

                for (int i = 0; i < 200000; i++) {
                        char pat[16], anch[20], text[16];
                        bool want, got;

                        random_str(pat, 10, "ab/*?[]!^-\\");
                        random_str(text, 10, "ab/*?[]!-\\");
                        /* A plain string (no wildcard) is rsync's literal; "**" is
                         * ours. glibc reads a '/' inside brackets, a quoted '/' and
                         * an unclosed '[' before a '-' its own ways. */
                        if (!strpbrk(pat, "*?[") || strstr(pat, "**") || (strchr(pat, '[') && strchr(pat, '/')) ||
                            strstr(pat, "\\/") || (strrchr(pat, '[') && !strchr(strrchr(pat, '['), ']')))
                                continue;
                        {
                                size_t len = strlen(pat);
                                size_t k = 0;

                                /* A lone trailing backslash is refused; trailing slashes are ours. */
                                while (k < len && pat[len - 1 - k] == '\\')
                                        k++;
                                if (k % 2 || pat[len - 1] == '/' || pat[0] == '/')
                                        continue;
                        }
                        snprintf(anch, sizeof(anch), "/%s", pat);
                        if (filter_add(&l, FILTER_EXCLUDE, anch, err, sizeof(err)) < 0) {
                                diag("refused '%s': %s", anch, err);
                                bad++;
                                continue;
                        }
                        if (!text[0])
                                text[0] = 'a', text[1] = '\0';
                        got = filter_match(&l, text, false) == FILTER_EXCLUDE;
                        want = fnmatch(pat, text, FNM_PATHNAME) == 0;
                        if (got != want && bad++ < 10)
                                diag("'%s' vs '%s': fnmatch %d, ours %d", pat, text, want, got);
                        filter_list_deinit(&l);
                        n++;
                }
                is_int(bad, 0, "%d random anchored patterns agree with fnmatch(FNM_PATHNAME)", n);
        }

        /* ---- at random: "**" and the unanchored forms against a naive matcher ---- */
        {
                int bad = 0, n = 0;

                for (int i = 0; i < 200000; i++) {
                        char pat[16], text[16], buf[40];
                        bool want = false, got;
                        size_t len;

                        random_str(pat, 9, "ab/**?[]!\\");
                        random_str(text, 10, "ab/");
                        len = strlen(pat);
                        if (!strpbrk(pat, "*?[") || !len || pat[0] == '/' || pat[len - 1] == '/' ||
                            pat[len - 1] == '\\' || strstr(pat, "[:") || !text[0] || text[0] == '/' ||
                            text[strlen(text) - 1] == '/' || strstr(text, "//"))
                                continue;
                        if (filter_add(&l, FILTER_EXCLUDE, pat, err, sizeof(err)) < 0) {
                                diag("refused '%s': %s", pat, err);
                                bad++;
                                continue;
                        }
                        got = filter_match(&l, text, false) == FILTER_EXCLUDE;
                        /* rsync's reading: no "/" and no "**": the last component;
                         * "**" first: "/" + the path; else the path's end from a
                         * component's start. */
                        if (!strchr(pat, '/') && !strstr(pat, "**")) {
                                const char *s = strrchr(text, '/');

                                want = ref(pat, s ? s + 1 : text);
                        } else if (!strncmp(pat, "**", 2)) {
                                snprintf(buf, sizeof(buf), "/%s", text);
                                want = ref(pat, buf);
                        } else {
                                for (const char *s = text; s; s = strchr(s, '/'), s = s ? s + 1 : NULL)
                                        want |= ref(pat, s);
                        }
                        if (got != want && bad++ < 10)
                                diag("'%s' vs '%s': naive %d, ours %d", pat, text, want, got);
                        filter_list_deinit(&l);
                        n++;
                }
                is_int(bad, 0, "%d random unanchored patterns agree with a naive matcher", n);
        }

        /* ---- no blow-up: stars against a long path that almost matches ---- */
        {
                char path[2048], pat[64];

                memset(path, 'a', sizeof(path) - 1);
                for (size_t i = 100; i < sizeof(path) - 1; i += 100)
                        path[i] = '/';
                path[sizeof(path) - 1] = '\0';
                snprintf(pat, sizeof(pat), "/a**a**a**a**a**a**a**a**a**a**b");
                l = rules(1, pat);
                is_int(filter_match(&l, path, false), FILTER_INCLUDE, "'a**a**...**b' on 2 KiB of a: no match, quickly");
                filter_list_deinit(&l);
                l = rules(1, "*a*a*a*a*a*a*a*a*a*a*a*b");
                is_int(filter_match(&l, path, false), FILTER_INCLUDE, "'*a*a*...*b' too");
                filter_list_deinit(&l);
        }

        /* ---- as text and back (a --delete's rules for the receiver) ---- */
        {
                static const char *const given[] = { "*.o", "+ keep.o", "/build/", "- cache/***", "a//b//",
                                                     "- !", "#x", "+ **/src/*.c" };
                static const char *const paths[] = { "x.o", "keep.o", "build", "d/build", "cache", "cache/z",
                                                     "a/b", "!", "#x", "p/src/m.c", "src/m.c", "q" };
                struct filter_list a = FILTER_LIST_NULL, b = FILTER_LIST_NULL;
                char text[512], why[256];
                ssize_t n;
                int same = 0;

                for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
                        if (filter_add(&a, FILTER_EXCLUDE, given[i], why, sizeof(why)) < 0)
                                abort();
                n = filter_list_text(&a, text, sizeof(text));
                ok(n > 0 && (size_t)n == strlen(text) && text[n - 1] == '\n', "rules as text:\n%s", text);
                is_int(filter_list_parse(&b, text, (size_t)n, why, sizeof(why)), 0, "read back (%s)", why);
                is_int((int)b.n, (int)a.n, "as many rules");
                for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
                        for (int dir = 0; dir < 2; dir++)
                                same += filter_match(&a, paths[i], dir) == filter_match(&b, paths[i], dir);
                is_int(same, (int)(2 * sizeof(paths) / sizeof(paths[0])), "every path matched alike");
                is_int((int)filter_list_text(&a, text, 20), -E2BIG, "text too long for its buffer: E2BIG");
                filter_list_deinit(&b);
                ok(filter_add(&b, FILTER_EXCLUDE, "a\nb", why, sizeof(why)) == 0 &&
                   filter_list_text(&b, text, sizeof(text)) == -EINVAL, "a pattern with a newline: no text (EINVAL)");
                filter_list_deinit(&b);
                is_int(filter_list_parse(&b, "- a\n\n+ b", 8, why, sizeof(why)), 0, "an empty line, no last newline: fine");
                is_int((int)b.n, 2, "two rules");
                filter_list_deinit(&b);
                is_int(filter_list_parse(&b, "- a\0b\n", 6, why, sizeof(why)), -EINVAL, "a NUL: EINVAL (%s)", why);
                filter_list_deinit(&a);
                filter_list_deinit(&b);
        }

        return done_testing();
}
