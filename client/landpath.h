#pragma once

/*
 * The destination of `xferctl send FILE... PEER:/PATH` (scp's syntax):
 * the argument split into PEER and PATH, and PATH put in the normal form
 * the receiving node's lander requires (lander/fs/landfs.h,
 * landfs_path_check), so that a mistyped PATH is a usage error here, said
 * with its rule, rather than a refusal from the peer once the files are
 * counted and the job queued. Pure; xferctl does not link the lander.
 */

#include <stdbool.h>

/* PATH normalised, less its NUL: ctl.h's CTL_LAND_PATH_MAX (landfs: shorter than 4096). */
#define LANDPATH_MAX            4095
#define LANDPATH_COMPONENT_MAX  255

enum landpath_verdict {
        LANDPATH_OK = 0,
        LANDPATH_RELATIVE,              /* does not start with '/' */
        LANDPATH_DOTDOT,                /* a ".." component */
        LANDPATH_COMPONENT_LONG,        /* a component of more than 255 bytes */
        LANDPATH_ROOT,                  /* "/" alone, or what normalises to it */
        LANDPATH_TOO_LONG,              /* 4096 bytes or more, normalised */
};

/*
 * The ':' at which @arg, the last argument of xferctl send, splits into
 * PEER (the bytes before it) and PATH (from the '/' after it): the first
 * ":/" outside brackets, as in "beta:/x", "beta:7471:/x",
 * "[fd00::2]:7470:/x". NULL when there is none: @arg is a PEER or a
 * NODELIST, as it always was (no host name holds a '/').
 */
const char *landpath_split(const char *arg);

/*
 * @path in normal form into @out: repeated '/' collapse into one, "."
 * components are dropped, and a trailing '/' (or trailing ".") is dropped
 * and sets *@dir: the user named a directory the files go into. Returns
 * LANDPATH_OK, or the first rule @path breaks (a ".." or an overlong
 * component in the order they come; then the whole: "/" alone, too long);
 * @out is then undefined.
 */
enum landpath_verdict landpath_normal(const char *path, char out[static LANDPATH_MAX + 1], bool *dir);

/* A verdict as the rest of a sentence about PATH ("'..' is not allowed ..."). */
const char *landpath_verdict_str(enum landpath_verdict v);
