#pragma once

/*
 * Rules for a file name proposed by a remote peer: one path component,
 * 1..255 bytes, not "." or "..", no '/' and no NUL. That is all a name
 * must be (NAME_RULES_ANY: what the file system takes, as rsync sends
 * it: leading dots, control characters and bytes that are not UTF-8 too;
 * whatever prints one escapes it, esc.h). A receiver may ask for more
 * (rdmaxferd.conf(5), names): NAME_RULES_UTF8, no control characters
 * (Unicode Cc: < 0x20, 0x7f, and the C1 range U+0080..U+009F), valid
 * shortest-form UTF-8 (no overlongs, no surrogates, nothing above
 * U+10FFFF), no invisible formatting characters or line separators (Cf,
 * Zl, Zp: U+202E, U+200B, U+FEFF, U+2028, ...) and no unassigned code
 * points or noncharacters (Cn), by libunistring's tables (private use, Co,
 * is allowed); NAME_RULES_STRICT, all that and no leading '.'.
 *
 * Past the whole-name rules (empty, length, dots, '/', NUL), the first
 * offending code point decides the verdict.
 */

#include <stdbool.h>
#include <stddef.h>

enum name_verdict {
        NAME_OK = 0,
        NAME_EMPTY,
        NAME_TOO_LONG,
        NAME_DOT,               /* "." or ".." */
        NAME_HIDDEN,            /* leading '.' */
        NAME_SLASH,
        NAME_CONTROL,           /* NUL or control byte */
        NAME_UTF8,
        NAME_FORMAT,            /* Unicode Cf, Zl or Zp */
        NAME_UNASSIGNED,        /* Unicode Cn, noncharacters included */
        NAME_ABSOLUTE,          /* a path: leading '/' */
        NAME_PATH_FORM,         /* a path: empty component ("a//b", trailing '/') */
        NAME_PATH_LONG,         /* a path: too many bytes or components */
};

/* Which names a receiver takes (rdmaxferd.conf(5), names; above). */
enum name_rules {
        NAME_RULES_ANY = 0,
        NAME_RULES_UTF8,
        NAME_RULES_STRICT,
};

/* Check @len bytes at @name (need not be NUL-terminated) by @rules. */
enum name_verdict name_check_rules(const char *name, size_t len, enum name_rules rules);
/* By NAME_RULES_ANY: what a sender offers, and any receiver's floor. */
enum name_verdict name_check(const char *name, size_t len);
const char *name_verdict_str(enum name_verdict v);

/*
 * A destination a peer proposes for a job beneath the incoming directory
 * (DEST), or an entry's path beneath it: a relative path of components
 * joined by single '/', at most NAME_PATH_MAX bytes (NAME_PATH_DEPTH_MAX
 * components is what that many bytes can hold: depth alone never refuses
 * a path), each component acceptable to
 * name_check() (so no ".", "..", hidden or empty one). *@bad, when not
 * NULL, gets the offset of the component that decided a refusal. Whether
 * a component is a symlink on disk is incoming_open_beneath()'s to see.
 */
#define NAME_PATH_MAX           4095    /* PATH_MAX less its NUL (wire.h: WIRE_PATH_MAX) */
#define NAME_PATH_DEPTH_MAX     ((NAME_PATH_MAX + 1) / 2)
enum name_verdict name_path_check_rules(const char *path, size_t len, size_t *bad, enum name_rules rules);
enum name_verdict name_path_check(const char *path, size_t len, size_t *bad);

/*
 * The leaf of a local path, for xferctl's default name ("a/b/c.dat" ->
 * "c.dat"); a pointer into @path. "dir/" gives "", which name_check()
 * refuses as NAME_EMPTY.
 */
const char *name_leaf(const char *path);

/*
 * A symlink's target in a tree, @len bytes at @target, for a link whose
 * directory is @depth directories beneath the tree's top (a link "DEST/l"
 * is at depth 0, "DEST/a/b/l" at 2):
 *   NAME_LINK_SAFE     relative, a run of ".." components no longer than
 *                      @depth, then only names: it resolves beneath the
 *                      top, through the tree's other safe links too (none
 *                      goes up after going down, so none climbs out of a
 *                      directory it entered through a link),
 *   NAME_LINK_OUTSIDE  absolute, or more ".." than @depth, or ".." after
 *                      a name ("a/../.." may leave the tree through a),
 *   NAME_LINK_BAD      not a target at all: empty, a NUL, longer than
 *                      NAME_LINK_MAX.
 */
#define NAME_LINK_MAX           4095
enum name_link_verdict {
        NAME_LINK_SAFE = 0,
        NAME_LINK_OUTSIDE,
        NAME_LINK_BAD,
};
enum name_link_verdict name_link_check(const char *target, size_t len, unsigned int depth);
