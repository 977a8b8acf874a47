#pragma once

/*
 * The lander's file system layer (issue 33): what a user's landing does to
 * the name space, done as that user. rdmaxferd talks RDMA and parses what
 * peers send, so it never gains a uid switch or a capability; the lander,
 * a small process of its own holding CAP_SETUID and CAP_SETGID and nothing
 * else, takes a MUNGE-proven identity and does here the few operations a
 * landing needs, under that identity: find a directory beneath one of the
 * admin's landing roots, make directories, make a nameless file
 * (O_TMPFILE) to be written, give it a name, open a file to be read.
 *
 * "As the user" is the kernel's own: landfs_become() sets the supplementary
 * groups, the file system gid and the file system uid, so every permission
 * check is the user's (a change of fsuid away from 0 also drops every file
 * system capability from the effective set) and what is made is theirs. The
 * lander is single-threaded: setgroups() is process-wide.
 *
 * Paths. A path is absolute and in normal form (landfs_path_check) and is
 * resolved one component at a time, never through the string: beneath the
 * landing root that holds it (each root opened once, at start-up, by the
 * lander itself), each component opened O_PATH | O_NOFOLLOW as the user. A
 * symlink on the way is followed only when the user or root owns it (a
 * link another user planted, say in /tmp, is the classic race: never), and
 * only to where it stays inside a landing root ("..", an absolute target);
 * 40 links at most, as the kernel's own walk.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Supplementary groups of one identity: NGROUPS_MAX is 65536, a user of
 * more than this many is refused rather than cut short. */
#define LANDFS_GROUPS_MAX       256
#define LANDFS_ROOTS_MAX        16
#define LANDFS_LINKS_MAX        40
#define LANDFS_PATH_MAX         4096

struct landfs_id {
        uid_t uid;
        gid_t gid;
        size_t ngroups;
        gid_t groups[LANDFS_GROUPS_MAX];
};

struct landfs_root {
        char *path;             /* absolute, normal form, no trailing '/' */
        size_t len;
        int fd;                 /* O_PATH | O_DIRECTORY, the lander's own */
};

struct landfs_roots {
        size_t n;
        struct landfs_root root[LANDFS_ROOTS_MAX];
};

#define LANDFS_ROOTS_NULL { .n = 0 }

/*
 * An absolute path in normal form: '/' then components of 1 to 255 bytes
 * separated by one '/', none "." or "..", no trailing '/', shorter than
 * LANDFS_PATH_MAX; "/" alone is not a place anyone lands in. Any bytes but
 * '/' and NUL (names are bytes on Linux; a landing names the user's own
 * files, dotfiles included). true when @path is one.
 */
bool landfs_path_check(const char *path);

/*
 * Add @path (landfs_path_check) to @roots: its own path, opened by the
 * caller (the lander, at start-up) without following a symlink in its last
 * component. 0, -EINVAL (not normal form), -E2BIG (LANDFS_ROOTS_MAX),
 * -EEXIST (inside or around one already there), or open's -errno.
 */
int landfs_roots_add(struct landfs_roots *roots, const char *path);
void landfs_roots_free(struct landfs_roots *roots);
/* The root that holds @path (itself or beneath it), or NULL. */
const struct landfs_root *landfs_roots_find(const struct landfs_roots *roots, const char *path);

/* Become @id for file system access, and back (the caller's own fsuid and
 * fsgid, and no supplementary groups). 0, or -errno (-EPERM without
 * CAP_SETUID and CAP_SETGID, -EINVAL for uid or gid -1). */
int landfs_become(const struct landfs_id *id);
int landfs_unbecome(void);
/* Become @id for good (a walker's, lander/walker.c): groups, real,
 * effective, saved and file system ids, no way back. 0, or -errno. */
int landfs_become_for_good(const struct landfs_id *id);

/* Why a path was refused, beyond an -errno. Positive: see landfs_open_dir. */
enum landfs_verdict {
        LANDFS_OK = 0,
        LANDFS_OUTSIDE_ROOTS,   /* not beneath any landing root (a symlink's target included) */
        LANDFS_FOREIGN_SYMLINK, /* a symlink on the way that neither the user nor root owns */
};

/*
 * Open the directory @path (landfs_path_check's form) as @id (the caller
 * has already landfs_become()d it): beneath the root that holds it, each
 * component as described above; with @create, a missing component is made
 * (mode @mode less setuid, as the user; the caller's umask applies). On
 * LANDFS_OK, *@fd is the directory, O_PATH | O_CLOEXEC (good for *at calls
 * and for O_TMPFILE through openat(fd, ".")). Otherwise *@fd is -1. Either
 * way @where (LANDFS_PATH_MAX bytes) holds the path as resolved, symlinks
 * followed, up to the component that failed, so that an error names it.
 * Returns LANDFS_OK, a positive verdict, or -errno: -EACCES (the user may
 * not search or write there), -ENOTDIR, -ENOENT (without @create), -ELOOP
 * (more than LANDFS_LINKS_MAX links), -ENAMETOOLONG, -EINVAL (@path not
 * normal form).
 */
int landfs_open_dir(const struct landfs_roots *roots, const struct landfs_id *id, const char *path,
                    bool create, mode_t mode, int *fd, char *where);

/*
 * A nameless file (O_TMPFILE, O_RDWR) in the directory @dirfd, mode @mode
 * less setuid and setgid (the umask applies): the fd, or -errno. Made as
 * whoever the caller became, so owned by them.
 */
int landfs_tmpfile(int dirfd, mode_t mode);

/*
 * Give the nameless file @fd the name @leaf in @dirfd: linkat through
 * /proc/self/fd (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH, which a
 * changed fsuid drops). Never replaces: -EEXIST when @leaf is there.
 * 0, or -errno.
 */
int landfs_link(int fd, int dirfd, const char *leaf);

/*
 * Remove @name beneath @dirfd and everything under it, as whoever the
 * caller became, @owner (a tree of theirs: a staging directory, a tree
 * replaced), never following a symlink; a directory of @owner's it could
 * not list or empty (0555, 0000) is given @owner's rwx first
 * (incoming_remove_tree_of). 0 (@name not there included), or -errno.
 */
int landfs_remove_tree(int dirfd, const char *name, uid_t owner);
