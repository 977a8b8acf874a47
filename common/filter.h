#pragma once

/*
 * xferctl send -r's --exclude and --include rules: the subset of rsync's
 * include/exclude patterns that xferctl(1) documents under FILTER RULES.
 * Matched against an entry's path relative to the root of the walk
 * ("a/b/c", no leading slash); the first rule that matches decides, and
 * an entry no rule matches is included.
 *
 *   - "*" is any run of bytes but "/", "**" (two or more stars) any run at
 *     all, "?" one byte but "/", "[...]" a class as fnmatch(3) reads one
 *     ("!" or "^" negates, ranges, [:alpha:] and the like, ASCII only),
 *     never matching "/". A backslash quotes the next byte, but, as in
 *     rsync, only in a pattern that holds "*", "?" or "[": else the
 *     pattern is a plain string, backslashes and all.
 *   - A leading "/" anchors the pattern at the root. Else a pattern with
 *     no "/" (a trailing one aside) and no "**" matches the last
 *     component; one with a "/" or a "**" matches the path's end at a
 *     component boundary ("b/c" matches "a/b/c", not "a/xb/c"); "**"
 *     then "/" at its start may also match nothing ("foo" at the root).
 *   - Trailing slashes make it match directories only; "dir/" + "***"
 *     (three stars or more) matches the directory dir and everything
 *     beneath it. Several leading or trailing slashes are one (in rsync,
 *     such a pattern matches nothing).
 *   - A rule may start with "+ " (include) or "- " (exclude) whatever its
 *     option said; "!" alone clears the rules before it.
 *
 * Bytes, not characters: "?" matches one byte of a UTF-8 name. The rules
 * are bounded: at most FILTER_RULES_MAX, a pattern shorter than PATH_MAX.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define FILTER_RULES_MAX        10000
/* A pattern's length, less than this. */
#define FILTER_PATTERN_MAX      PATH_MAX

enum filter_kind {
        FILTER_INCLUDE = 1,
        FILTER_EXCLUDE = 2,
};

struct filter_rule;

struct filter_list {
        struct filter_rule *rules;
        size_t n, cap;
};

#define FILTER_LIST_NULL        ((struct filter_list){ .rules = NULL })

/* Free every rule; the list is empty and usable again. Safe on FILTER_LIST_NULL. */
void filter_list_deinit(struct filter_list *l);

/* An empty list on the heap, or NULL (ENOMEM); filter_list_free() it. */
struct filter_list *filter_list_new(void);
/* Returns NULL; safe on NULL. */
struct filter_list *filter_list_free(struct filter_list *l);

static inline void filter_list_freep(struct filter_list **l)
{
        filter_list_free(*l);
}

/*
 * Add the rule @text of @kind (an "--exclude PATTERN") at the end of @l,
 * after its "+ " or "- " prefix if it has one, or, for "!", clear @l.
 * Returns 0, or -EINVAL (an empty pattern, "/" alone, a NUL byte, an
 * unknown [:class:]), -ENAMETOOLONG (FILTER_PATTERN_MAX or longer),
 * -E2BIG (FILTER_RULES_MAX already) or -ENOMEM, said in @err.
 */
int filter_add(struct filter_list *l, enum filter_kind kind, const char *text, char *err, size_t errlen);

/*
 * Add the rules of @f (an "--exclude-from FILE"), one a line, in order:
 * a line ends at "\n" or "\r" (so CRLF lines are fine), blank lines and
 * lines that start with "#" or ";" are ignored, and the rest is taken
 * whole, spaces included, as filter_add() takes @text. Returns 0, or
 * filter_add()'s error, with "line N: " in front of its text in @err,
 * or -EIO (a read error) said in @err.
 */
int filter_load(struct filter_list *l, enum filter_kind kind, FILE *f, char *err, size_t errlen);

/*
 * @l as text that filter_list_parse() reads back into the same rules: a line
 * each, "+ " or "- " first, then the pattern ("/" in front where it is
 * anchored, behind where it matches directories only), "\n" after it.
 * Its length (without a NUL, which is written where there is room), or
 * -E2BIG (more than @cap bytes) or -EINVAL (a pattern holding "\n" or
 * "\r", which no line can carry).
 */
ssize_t filter_list_text(const struct filter_list *l, char *buf, size_t cap);
/*
 * The rules of @text (@len bytes, filter_list_text()'s form: no prefix means
 * exclude, as filter_load() reads a line) added to @l, in order. 0, or
 * filter_add()'s error, or -EINVAL for a NUL byte, said in @err with
 * "line N: " in front.
 */
int filter_list_parse(struct filter_list *l, const char *text, size_t len, char *err, size_t errlen);

/* Whether @relpath (no leading "/"; @is_dir: a directory) is included
 * or excluded: by the first rule that matches, else FILTER_INCLUDE. */
enum filter_kind filter_match(const struct filter_list *l, const char *relpath, bool is_dir);
