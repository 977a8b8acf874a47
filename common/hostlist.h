#pragma once

/*
 * Slurm hostlists ($SLURM_JOB_NODELIST, `scontrol show hostnames`):
 * "node[01-16,20],login1 gpu[1-2]-ib[1-2]" and the like, expanded in the
 * order Slurm expands them (checked against Slurm 22.05's scontrol; the
 * cases are in tests/unit/test-hostlist.c), and the fabric's names as
 * sites write them, with text after the last group ("node[01-04]-ib").
 *
 *   - Hosts are separated by ',', ' ' or '\t'; runs of them count as one.
 *   - "[...]" holds a comma list of N or LO-HI; the width of N or LO keeps
 *     its leading zeros ("node[08-11]": node08 .. node11). Duplicates stay.
 *   - Several groups in one name expand to every combination: the last group
 *     varies fastest, then the first, the second, ... up to the one before
 *     the last, the slowest (Slurm's order; for two groups, plain row order).
 *   - Text may come before, between and after groups: "rack[1-2]-n[1-3]",
 *     "node[01-04]-ib", "rack[1-2]-node[01-16]-ib0", "n[1-2].ib". Slurm
 *     22.05 refuses text after the last group; ClusterShell's nodeset and
 *     pdsh take it, and IB names are often written so.
 *
 * Stricter than Slurm, where Slurm guesses: unbalanced or nested brackets,
 * an empty list or item ("n[]", "n[1,,2]", "n[1-]"), anything but digits in
 * a range (Slurm reads "n[ 1]" as n01), a number past 2^64 - 1, control
 * characters, spaces and bytes above 0x7e in a name are errors. Bounded: at
 * most HOSTLIST_MAX hosts (Slurm has no total limit) of at most
 * HOSTLIST_NAME_MAX bytes each; a list past either is refused whole.
 * Nothing here allocates except hostlist_new().
 */

#include <stdbool.h>
#include <stddef.h>

#define HOSTLIST_MAX            65536
/* The longest DNS name in text form. */
#define HOSTLIST_NAME_MAX       253

enum hostlist_problem {
        HOSTLIST_OK = 0,
        HOSTLIST_UNCLOSED,              /* '[' without ']' */
        HOSTLIST_UNOPENED,              /* ']' without '[' */
        HOSTLIST_NESTED,                /* '[' inside brackets */
        HOSTLIST_EMPTY_ITEM,            /* "[]", "[1,,2]", "[1-]", "[-1]" */
        HOSTLIST_NOT_A_NUMBER,          /* "[a-b]", "[ 1]", "[+1]", "[1-2-3]" */
        HOSTLIST_REVERSED,              /* "[3-1]" */
        HOSTLIST_NUMBER_TOO_BIG,        /* past 2^64 - 1 */
        HOSTLIST_BAD_CHAR,              /* in a name: a control character or a byte > 0x7e */
        HOSTLIST_TOO_MANY,              /* more than HOSTLIST_MAX hosts */
        HOSTLIST_NAME_TOO_LONG,         /* a name longer than HOSTLIST_NAME_MAX */
};

/* Where a list went wrong: bytes from its start, and how many are at fault. */
struct hostlist_error {
        enum hostlist_problem problem;
        size_t offset;
        size_t len;
};

/* "reversed range", ...; never NULL. */
const char *hostlist_problem_str(enum hostlist_problem p);

/*
 * Called once per host, in order, with @name NUL-terminated (@len bytes).
 * A negative return stops the walk and is returned by hostlist_foreach().
 */
typedef int (*hostlist_fn)(const char *name, size_t len, void *userdata);

/*
 * Check all of @list, then call @fn (when not NULL) for each host. @fn is
 * never called for a list that fails the check, so a caller sees all of a
 * list or none of it. Sets *@count (when not NULL) to the number of hosts,
 * 0 for a list of only separators. Returns 0, -EINVAL (syntax), -ERANGE (a
 * number past 2^64 - 1), -E2BIG (more than HOSTLIST_MAX hosts) or
 * -ENAMETOOLONG, with the place in *@err (when not NULL); or @fn's own
 * negative return.
 */
int hostlist_foreach(const char *list, hostlist_fn fn, void *userdata, size_t *count,
                     struct hostlist_error *err);

/* The expanded list in one allocation: @names[0..@n), each NUL-terminated. */
struct hostlist {
        size_t n;
        char **names;
};

/* As hostlist_foreach(), into a new struct hostlist; -ENOMEM too. */
int hostlist_new(struct hostlist **out, const char *list, struct hostlist_error *err);
void hostlist_free(struct hostlist *hl);

static inline void hostlist_freep(struct hostlist **hl)
{
        hostlist_free(*hl);
}
