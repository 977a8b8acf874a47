#pragma once

/*
 * The walk of a tree to send, as the user who runs it: xferctl's (send
 * -r), and the lander's walker of a tree a peer pulls, which becomes the
 * user whose credential asked (lander/walker.c).
 * Every directory is opened relative to its parent's descriptor (openat
 * with O_DIRECTORY | O_NOFOLLOW), every file relative to its directory's
 * (O_NOFOLLOW), never by a path: an entry swapped for a symlink while we
 * walk is not followed, and we can only send what the user can read. A
 * symlink is read (readlinkat), never followed. Devices, FIFOs and
 * sockets are never opened: they are reported as skipped, as is what
 * cannot be opened or read.
 *
 * Depth first, in readdir order; memory is one open directory per level,
 * at most WALK_DEPTH_MAX levels, whatever the number of entries. An entry
 * readdir says is a regular file or a directory is opened straight away
 * (the descriptor's fstat says what it is); others are looked at first
 * (fstatat), so a file costs an open, an fstat and a close.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "filter.h"

/* An entry 128 levels down is as deep as an offer's 255 bytes can name
 * ("DEST/a/b/...": 128 components of one byte); anything deeper could
 * never be sent. */
#define WALK_DEPTH_MAX          128

enum walk_kind {
        WALK_DIR,               /* a directory: its entries follow, then WALK_DIR_END */
        WALK_DIR_END,
        WALK_FILE,
        WALK_SYMLINK,
};

struct walk_entry {
        enum walk_kind kind;
        unsigned int depth;     /* 0: the root walk_tree() was given */
        const char *name;       /* the leaf */
        const char *path;       /* from the root, for messages (not for opening) */
        int fd;                 /* WALK_FILE: open for reading; the callback may take it (set -1) */
        /* WALK_FILE, WALK_DIR: the file or directory open (O_RDONLY), for
         * its attributes while the callback runs; not the callback's to
         * close. -1 otherwise. */
        int attr_fd;
        const char *target;     /* WALK_SYMLINK: what it points at, as stored */
        struct stat st;         /* of the open file, the directory, or the link itself */
};

/* walk_ops.entry's answer for a WALK_DIR: go on, but not into it. */
#define WALK_SKIP               1

struct walk_ops {
        /* Each entry; 0 to go on (WALK_SKIP: a directory's entries and end
         * are not walked), negative to stop (walk_tree returns it). */
        int (*entry)(void *userdata, struct walk_entry *e);
        /* What is not sent: a device, FIFO or socket (@err 0, @mode says
         * which), or what cannot be opened or read (@err -errno). 0 to go
         * on, negative to stop (walk_tree returns it). */
        int (*skip)(void *userdata, const char *path, mode_t mode, int err);
        /* Counting only: a regular file is not opened (its entry's fd is
         * -1, st its lstat); one the user may not read (faccessat,
         * AT_EACCESS) is skipped with -EACCES. */
        bool no_open;
        /* Rules (filter.h), or NULL: an entry beneath the root that they
         * exclude is left out in silence, before it is opened: neither
         * entry nor skip hears of it, and a directory is not walked into.
         * Its path is matched from the root, which is never left out. */
        const struct filter_list *filters;
};

/*
 * Walk @name beneath @dirfd (AT_FDCWD for the working directory): a
 * directory (its whole tree), a regular file or a symlink (itself). 0,
 * a callback's negative value, or -errno when @name itself cannot be
 * opened, or the tree is deeper than WALK_DEPTH_MAX (-ELOOP).
 */
int walk_tree(int dirfd, const char *name, const struct walk_ops *ops, void *userdata);

/* "a directory", "a FIFO", ... for a skip message; never NULL. */
const char *walk_type_str(mode_t mode);

/* An entry's mtime for the receiver, ns since the epoch (a symlink's is
 * lstat's); before 1970, or past 2554: 0, not kept. */
uint64_t walk_mtime_ns(const struct stat *st);
