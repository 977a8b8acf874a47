#pragma once

/*
 * Files arriving in the incoming directory. A transfer writes into a file
 * with no name (O_TMPFILE), reserved to its full size up front, and gets a
 * name only once it is complete: nothing half-written is ever visible, and
 * an abort at any point (or a crash) leaves nothing behind. Names here are
 * leaves already checked by name_check().
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "name.h"

enum incoming_verdict {
        INCOMING_OK = 0,
        INCOMING_NO_SPACE,      /* not enough free space (or quota) */
        INCOMING_IO,            /* any other failure: see the -errno */
};

/*
 * Would a file of @size bytes leave at least @min_free of the @avail bytes
 * free (statvfs's f_bavail * f_frsize)? INCOMING_OK or INCOMING_NO_SPACE.
 * The daemon asks before any data moves, so a full disk is a refusal, not
 * a failure at 90 %, and an offer never eats into what the host needs.
 */
enum incoming_verdict incoming_space_verdict(uint64_t avail, uint64_t size, uint64_t min_free);

/* What fallocate's result means for the transfer: a file system that
 * cannot reserve (-EOPNOTSUPP) is fine, write errors will still tell. */
enum incoming_verdict incoming_reserve_verdict(int r);

/*
 * Publishing. The file is written nameless (O_TMPFILE) and linked under its
 * name once fsynced: link() never replaces, so without overwrite an
 * existing name is kept (EEXIST). With overwrite, there is no call that
 * links a nameless file over a name, so it is linked under a temporary
 * name, ".rdmaxfer-<tag>.part", and renamed over: the name holds the old
 * file or the new one, never neither. A crash between the two leaves the
 * temporary name behind; the daemon removes those at start-up
 * (incoming_clean_parts). Peers cannot send a name starting with ".".
 */
#define INCOMING_PART_MAX       48
void incoming_part_name(char buf[static INCOMING_PART_MAX], uint64_t tag);
/* Is @name one of ours (".rdmaxfer-" digits ".part")? */
bool incoming_is_part(const char *name);
/* What every name the daemon makes directly beneath incoming_dir starts
 * with: a peer's name never does (recv-offer.c). */
#define INCOMING_RESERVED_PREFIX        ".rdmaxfer-"

/*
 * Remove every incoming_is_part() entry directly beneath @dirfd, then fsync
 * the directory. @removed(@name, @r) is told of each (r: 0 or -errno).
 * Returns how many were removed, or -errno when the directory cannot be
 * read. Blocking: the engine runs it on a worker at start-up.
 */
int incoming_clean_parts(int dirfd, void (*removed)(const char *name, int r));

struct open_how;

/*
 * openat2(2) of @path beneath @dirfd with @how: the descriptor, or -errno;
 * -ENOSYS where the kernel has none, or a seccomp filter refuses it (one
 * that cannot read the struct answers ENOSYS or EPERM: systemd's
 * RestrictSUIDSGID= does). That answer is remembered: later calls return
 * -ENOSYS without asking, so a caller's plain openat() fallback costs one
 * system call a file, not two.
 */
int incoming_openat2(int dirfd, const char *path, const struct open_how *how);

/*
 * A job's destination beneath the incoming directory @dirfd (DEST, already
 * accepted by name_path_check()): open the directory @path, with @create
 * making each missing component (mode 0755), one component at a time with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV). A symlink anywhere on the way, the last component
 * included, is -ELOOP; a file where a directory should be -ENOTDIR;
 * another file system -EXDEV; a path name_path_check() refuses -EINVAL.
 * Returns the directory's fd (O_CLOEXEC) or -errno. Blocking: off the loop.
 */
int incoming_open_beneath(int dirfd, const char *path, bool create);

/*
 * The directory last opened beneath a root (incoming_open_beneath, never
 * creating), kept open for the next entry: a tree's entries come in
 * order, so consecutive ones mostly share their directory, and a walk of
 * every component for each costs more than the entry itself. A failure
 * is not kept. For a walk over directories nobody else renames meanwhile
 * (the daemon's own). Zeroed, then incoming_dircache_init().
 */
struct incoming_dircache {
        int root;
        int fd;
        char path[NAME_PATH_MAX + 1];
};

void incoming_dircache_init(struct incoming_dircache *c, int root);
/* The directory @path beneath c->root: a descriptor the cache owns
 * (valid until the next call or incoming_dircache_done), or -errno. */
int incoming_dircache_open(struct incoming_dircache *c, const char *path);
void incoming_dircache_done(struct incoming_dircache *c);

/*
 * A job that publishes a tree under a DEST builds it in a staging
 * directory of its own beneath the incoming directory,
 * ".rdmaxfer-stage-<id>" (mode 0700; hidden, and no peer can send a name
 * starting with '.'), so on the same file system, and renames the
 * finished tree into place in one step at its end
 * (incoming_stage_publish): before that, nothing of the job is visible
 * under DEST. A failed job's staging directory is removed
 * (incoming_remove_tree); one a crash left, at start-up
 * (incoming_clean_stages). All blocking: off the loop.
 */
#define INCOMING_STAGE_MAX      48
void incoming_stage_name(char buf[static INCOMING_STAGE_MAX], uint64_t id);
/* Is @name one of ours (".rdmaxfer-stage-" digits)? */
bool incoming_is_stage(const char *name);
/* Make the staging directory @name beneath @dirfd (0700) and open it:
 * its fd, or -errno (-EEXIST when it is there already). */
int incoming_stage_make(int dirfd, const char *name);
/*
 * Publish @leaf, beneath the staging directory @stagefd, as DEST @path
 * beneath @dirfd (its parent directories opened, or made, by
 * incoming_open_beneath), with renameat2(RENAME_NOREPLACE): 0, or -EEXIST
 * when DEST exists. With @overwrite, an existing DEST is swapped out in
 * the same step (RENAME_EXCHANGE: DEST holds the old tree or the new one,
 * never neither) and the old one, now in the staging directory, removed.
 * Or -errno (incoming_open_beneath's for the path).
 */
int incoming_stage_publish(int dirfd, int stagefd, const char *leaf, const char *path, bool overwrite);
/*
 * Merging (sync: xferctl send -r --sync or --skip-existing) a staged tree
 * into a DEST that exists as a directory. The staging directory holds only
 * what was sent; what the old DEST has beyond it stays, and nothing of it
 * is removed but what a sent entry replaces. In two steps, both on a
 * worker, DEST @path beneath @dirfd, the staged tree @leaf beneath
 * @stagefd:
 *
 * incoming_merge_link: every entry of the old DEST that the staged tree
 * lacks is hard-linked into it (linkat without following: a symlink is
 * linked as a symlink; one that may not be linked, EPERM, say another
 * user's file in a shared directory under fs.protected_hardlinks, is left
 * for the move step), a missing directory made and filled the same
 * way, then given the old one's mode and mtime; directories in both are recursed into;
 * where both have a name, the staged entry wins. Every directory is
 * opened without following a symlink, beneath @dirfd; at most
 * INCOMING_MERGE_DEPTH levels (-ELOOP beyond). A DEST that is not there
 * (any more) is nothing to merge: 0. Nothing of the old DEST changes; on
 * failure (-errno) the job fails and the old DEST stays as it was.
 *
 * incoming_merge_publish: renameat2(RENAME_EXCHANGE) puts the staged
 * tree in place as DEST in one step (readers see the old tree or the new,
 * never a mix; a DEST gone meanwhile: a plain rename), then whatever
 * appeared in the old tree since the link step, or could not be linked,
 * and is missing in the new is moved over (RENAME_NOREPLACE: nothing
 * anyone wrote is lost; such an entry is missing from DEST between the
 * exchange and its move), then
 * the rest of the old tree (replaced files, its directories) is removed.
 * 0, or -errno (the parent's fsync, or the exchange: then nothing moved).
 *
 * With @deleted (xferctl send --delete), the staged tree is all the new
 * DEST holds: the caller skipped incoming_merge_link (it put every entry
 * it keeps into the staging directory itself, incoming_keep_link), and
 * after the exchange nothing is moved over: the old tree is counted into
 * *@deleted (each entry it has that the new one lacks at the same path,
 * a directory's contents too) and removed, which is the deletion. Never
 * anything outside DEST: both walks stay beneath it, without following a
 * symlink.
 */
/*
 * A dry run's --delete (wire.h, Dry runs): what incoming_merge_publish()
 * with @deleted would remove from DEST @path beneath @dirfd, without
 * removing it. Each entry beneath DEST is put to @ops->kept with its path
 * ("DEST/a/b") and mode: INCOMING_GONE (the session did not offer it),
 * it and all it holds go to @ops->gone, what a directory holds before
 * the directory, with its mode, but for what @ops->kept keeps beneath it
 * (asked for each: a --delete's protected entries), and a directory that
 * holds such an entry stays; INCOMING_KEPT_DIR, a directory offered as
 * one, is walked into; INCOMING_KEPT, left alone. Never follows a symlink; a path of
 * INCOMING_GONE_PATH_MAX bytes or more is not walked to. 0, or -errno
 * when DEST cannot be opened.
 */
enum { INCOMING_GONE = 0, INCOMING_KEPT, INCOMING_KEPT_DIR };
#define INCOMING_GONE_PATH_MAX  4096
struct incoming_gone_ops {
        int (*kept)(void *arg, const char *path, mode_t mode);
        void (*gone)(void *arg, const char *path, mode_t mode);
};
int incoming_dry_gone(int dirfd, const char *path, const struct incoming_gone_ops *ops, void *arg);

#define INCOMING_MERGE_DEPTH    128     /* levels of a DEST merged into (a sync); deeper: -ELOOP */
int incoming_merge_link(int dirfd, const char *path, int stagefd, const char *leaf);
/*
 * Before a merge or a mirror of the old DEST (@path beneath @dirfd) by
 * the staged tree (@leaf in @stagefd): -EEXIST when a name beneath both is
 * a directory in one and something else in the other (where a merge or a
 * mirror would lose a directory's contents, or put a directory over a
 * file), its path beneath DEST into @where ("/a/b"); 0 when none is (or
 * there is no old DEST); or -errno. Nothing followed, nothing changed.
 */
int incoming_merge_conflict(int dirfd, const char *path, int stagefd, const char *leaf, char *where,
                            size_t wherelen);
int incoming_merge_publish(int dirfd, int stagefd, const char *leaf, const char *path, uint64_t *deleted);
/*
 * Deleting with rules (xferctl send --delete with --exclude or
 * --include, as rsync's receiver protects what they leave out): before
 * incoming_merge_publish() with @deleted, every entry of the old DEST
 * (@path beneath @dirfd) that the staged tree (@leaf in @stagefd) lacks
 * and @rules exclude (filter_match() on its path beneath DEST) is
 * hard-linked into it, an excluded directory with everything in it (as
 * incoming_merge_link links, but one that may not be linked fails it:
 * no move step takes it over); a directory the staged tree lacks and the
 * rules do not exclude is walked for such entries, and made (its old
 * mode and mtime) only where it holds one. So the publish keeps them,
 * and does not count them deleted. Nothing followed, nothing of the old
 * DEST changed. 0 (no old DEST: nothing to keep), or -errno.
 */
struct filter_list;
int incoming_merge_protect(int dirfd, const char *path, int stagefd, const char *leaf,
                           const struct filter_list *rules);
/* ... the old tree's rest removed as incoming_remove_tree_of(@owner) does
 * (rdmaxfer-lander: the user's, as the user). */
int incoming_merge_publish_of(int dirfd, int stagefd, const char *leaf, const char *path, uint64_t *deleted,
                              uid_t owner);
/*
 * Deleting: the entry @leaf beneath @oldfd (a directory of the old DEST),
 * kept by a sync, hard-linked as @newleaf beneath @newfd (its directory
 * in the staging directory), without following it. An entry already
 * there that is the same file is fine; with @replace (a kept tree
 * continued: what an earlier attempt staged may come again), another one
 * is replaced. 0, -ENOENT when the old entry is gone, -EISDIR for a
 * directory (a sync never keeps one: it is merged into), -ELOOP for a
 * symlink (the caller makes it anew at the end, so that none is in the
 * staging directory while entries are made there), -EEXIST, -ESTALE when
 * the old name was given to another entry meanwhile, or -errno.
 */
int incoming_keep_link(int oldfd, const char *leaf, int newfd, const char *newleaf, bool replace);

/* What @path (name_path_check()'s form) beneath @dirfd is, every
 * directory on the way opened without following a symlink
 * (incoming_open_beneath), the last component not followed either: 0
 * with @st, or -errno (-ENOENT: not there; -ELOOP or -ENOTDIR: a symlink
 * or a file on the way). */
int incoming_stat_beneath(int dirfd, const char *path, struct stat *st);

/* Remove @name beneath @dirfd with everything under it, never following a
 * symlink (at most 256 levels deep, else -ELOOP). 0, or the first -errno. */
int incoming_remove_tree(int dirfd, const char *name);
/* The same for a caller acting as @owner (the lander, its fsuid a user's):
 * @owner's directories are the ones given rwx to be emptied. */
int incoming_remove_tree_of(int dirfd, const char *name, uid_t owner);
/* Start-up: remove every incoming_is_stage() directory directly beneath
 * @dirfd with its contents; @removed(@name, @r) is told of each. How many
 * were removed, or -errno when the directory cannot be read. */
int incoming_clean_stages(int dirfd, void (*removed)(const char *name, int r));
