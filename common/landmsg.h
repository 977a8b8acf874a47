#pragma once

/*
 * The lander protocol (issue 33): rdmaxferd and rdmaxfer-lander over an
 * AF_UNIX SOCK_SEQPACKET socket, one datagram a message. The daemon asks,
 * the lander answers each request in order, echoing its id; a descriptor
 * travels with a message by SCM_RIGHTS.
 *
 * Every message: a 16-byte header (magic "XLND", version, type, id,
 * payload length), little-endian, then the payload. A lander answers a
 * version it does not speak with ERROR (EPROTONOSUPPORT) and closes.
 *
 *   daemon -> lander                         lander -> daemon
 *   SESSION {direction, token, addrs,        SESSION_OK {session, uid, gid, user} | ERROR
 *            cred, dest}
 *   MKDIR {session, mode, path, [leaf],      OK | ERROR
 *          [xattrs]}
 *   TMPFILE {session, mode, path, [leaf]}    FD + fd (O_TMPFILE, O_RDWR) | ERROR
 *                                            (with a leaf: EEXIST when the directory has it)
 *   LINK {session, flags, [mode], path,      OK | ERROR
 *         leaf, [digest], [xattrs]} + fd
 *   SETATTR {session, flags, mode, mtime,    OK | ERROR
 *            xattr, path} + fd (or a directory's path)
 *   SYMLINK {session, flags, path, leaf,     OK | ERROR
 *            target}
 *   HARDLINK {session, flags, path, leaf,    OK | ERROR
 *             target}
 *   PUBLISH {session, flags, [leaf]}         OK | PUBLISHED {deleted} (with DELETE) | ERROR
 *   DISCARD {session}                        OK | ERROR
 *   OPEN_READ {session, path}                FD + fd (O_RDONLY) | ERROR
 *   END {session}                            OK | ERROR
 *   BATCH {session, count, ops} + one fd     FDS {count, kept} + one fd a TMPFILE | ERROR
 *         a LINK, in order
 *   WALK {session}                           FD + the walker's socket | ERROR
 *   LOOK {session, flags, [path], leaf}      FD {[xattrs]} + a regular file there, O_RDONLY |
 *                                            OK (nothing has the name) | ERROR
 *   MEM {session} + a sealed memfd           OK | ERROR
 *   CREATE {session, flags, mode, [mtime],   OK | ERROR (in a BATCH: FDS, none)
 *           path, leaf, digest, [xattrs],
 *           offset, length}
 *
 *   on a walker's socket, walker -> daemon:  WALK_HEAD {entries, bytes},
 *                                            WALK_ENTRY {kind, mode, size, mtime,
 *                                            path, target} (+ fd: a FILE's),
 *                                            ..., then OK; or ERROR at any point
 *
 * A BATCH is a tree's chunk in one message (version 3): up to
 * LANDMSG_BATCH_MAX MKDIR, TMPFILE, LINK and (version 9) CREATE requests
 * of one session, each as it would be alone (its type, then its payload), the
 * descriptors of its LINKs with it (SCM_RIGHTS, in order: at most
 * LANDMSG_BATCH_MAX, below the kernel's 253). The lander does them in
 * order, as the user, and answers once: FDS, with the descriptor of each
 * TMPFILE in order; or the first one's ERROR, nothing after it done, and
 * no descriptor (what came before it stays made, as if asked alone: the
 * tree is discarded).
 *
 * A session is one job's identity, proven by the MUNGE credential @cred
 * that the user's xferctl made: the lander decodes it through its own
 * munged, so that the daemon, which only carries it, can never make the
 * lander act as a user who did not ask. The credential's payload binds
 * it to the job (landmsg_binding): the direction, its flags (whether the
 * user allows replacing), DEST (the absolute path the user named), the
 * job's token and the addresses of the nodes it may be used on, one of
 * which must be this host's. Every request
 * after it names a path relative to DEST ("" for DEST itself), walked as
 * that user beneath the admin's landing roots.
 *
 * A tree lands whole or not at all, as the drop box's do: it is built in
 * the job's staging directory, a sibling of DEST named for the job's token
 * (".rdmaxfer-stage-" and its 32 hex digits: the same job's next attempt
 * finds what the last one made), owned by the user and mode 0700 as the
 * daemon asks; a request with LANDMSG_OP_STAGE names a path in it instead.
 * PUBLISH syncs the file system and renames it to DEST in one step
 * (replacing an existing DEST only with LANDMSG_PUBLISH_REPLACE: exchanged,
 * then the old tree removed); DISCARD removes it. With LANDMSG_OP_INTO the
 * tree lands in DEST, a directory, rather than as DEST: the staging
 * directory is made in DEST and PUBLISH names it DEST/leaf.
 *
 * Beneath the staging directory nothing is followed: no symlink, whoever
 * owns it (a tree's symlinks are made there, by the peer's say, and a
 * later request must not go through one).
 *
 * A tree pulled (version 4; xferctl get -r): a PULL session whose
 * credential carries LANDMSG_SESSION_TREE may OPEN_READ a directory (FD:
 * it, read-only) as well as a file, and then WALK it. The lander forks a
 * walker that becomes the user for good (setgroups, setresgid,
 * setresuid: no identity to switch back to) and answers with the other
 * end of a SOCK_SEQPACKET pair. On it the walker walks DEST twice, as
 * xferctl send -r does (common/walk.h: nothing followed, only what the
 * user may read): the first time it counts (WALK_HEAD: the entries
 * beneath DEST, DEST not among them, and their bytes), the second it
 * sends each entry in order (WALK_ENTRY, a regular file with its
 * descriptor, O_RDONLY), and OK after the last. ERROR ends it at any
 * point: an entry that cannot be sent (a device, FIFO or socket; one the
 * user may not read; a name too long), with its path, is found while
 * counting, before anything is sent; a tree that changed between the two
 * walks is found by the second. The walker blocks while the daemon does
 * not read, and exits when it closes its end.
 *
 * Files kept up to date (version 4; xferctl send --sync=size|digest FILE PEER:/PATH):
 * LOOK, in a landing session whose credential carries
 * LANDMSG_SESSION_SYNC, says what has @leaf's name in DEST (or with
 * LANDMSG_OP_PARENT, DEST's own name in its parent), as the user: a
 * regular file, opened read-only (FD: the daemon compares its size, and
 * its bytes' digest, with what is offered); nothing (OK); or ERROR:
 * EEXIST for another type, EACCES where the user may not read it (its
 * where: that file), or why DEST could not be walked.
 *
 * A tree kept up to date (version 5; xferctl send -r --sync DIR PEER:/PATH):
 * LOOK with a @path looks beneath DEST, at @path/@leaf, walking @path
 * without following anything (as beneath a staging directory): where a
 * directory of it is not there, or is no directory, nothing has the name
 * (OK). The tree is staged as any, less the files LOOK showed the same,
 * and PUBLISH with LANDMSG_PUBLISH_MERGE merges it into the tree that has
 * its name, a directory: every entry of the old tree the staged one lacks
 * is hard-linked into it as the user (a directory made and filled the
 * same way), the two exchanged in one step, what appeared in the old tree
 * meanwhile moved over, and the old tree's rest removed. Nothing the
 * staged tree lacks is lost; a name both have holds the sent entry. A
 * small file comes in a pack, its data whatever the tree there has: its
 * LINK into the staging directory (with LANDMSG_LINK_KEEP_*) first looks
 * at the file the tree there has at its path, as LOOK does, and where
 * that is the same, links it in its place (the same inode kept, the new
 * one dropped), a BATCH's FDS counting those kept; so does a symlink's
 * SYMLINK at the end (version 10), the symlink there kept where it
 * points where the sent one does (FDS {0, kept 1}). An
 * old entry the user may not link (another's file, with
 * protected_hardlinks) is moved over after the exchange instead, as what
 * appeared meanwhile is (incoming.h, incoming_merge_publish).
 *
 * Mirrored (--delete; version 5): what the tree there keeps is put into
 * the staged tree by the daemon, a file at a time: a HARDLINK in the
 * staging directory whose target the staged tree lacks links the target
 * as the tree there has it (walked as LOOK walks, a regular file only),
 * so a kept file names itself. PUBLISH with LANDMSG_PUBLISH_DELETE (and
 * REPLACE) then exchanges the two, counts what the old tree has that the
 * new one lacks (a directory and each entry in it), removes the old
 * tree, and answers PUBLISHED with that count: the deleted entries.
 *
 * Dry runs (version 7; xferctl send -n FILE... PEER:/PATH, -r DIR): a
 * session whose credential carries LANDMSG_SESSION_DRY may only LOOK, as
 * a sync's (at DEST's name in its parent or in DEST, or at a path beneath
 * it), and END: nothing is made, opened for writing or removed. Its LOOK
 * that finds nothing also says whether the user could make the name
 * there: ERROR EACCES, its where the directory, where the user may not
 * write in it or search it. The daemon says from those looks what a real
 * send would create, replace and keep. A link offered is looked at once
 * its target has come (version 10): a symlink's LOOK with
 * LANDMSG_LOOK_LINK says what the symlink there points at; a hard link's
 * LOOKs at its name and at the entry it links (both regular files, the
 * same inode: kept).
 *
 * Deleting, dry (version 8; xferctl send -n -r --sync --delete DIR
 * PEER:/PATH): a dry session whose credential carries
 * LANDMSG_SESSION_DELETE may WALK too, the tree at @path (DEST itself, or
 * with LANDMSG_OP_INTO, DEST/@path). The walker then walks once, as the
 * user, for names only: each entry beneath the tree as a WALK_ENTRY
 * {kind, path} (FILE, DIR, SYMLINK or OTHER: a device, FIFO or socket;
 * nothing opened, no descriptor, no count first), a directory's
 * WALK_DIR_END after its entries, then OK; ERROR where a directory cannot
 * be read. The daemon holds those names against the ones offered: what
 * the tree there has and the sent one lacks is what deleting would
 * remove. Only a credential made for --delete lets a daemon list a tree
 * (and, from version 8, PUBLISH with LANDMSG_PUBLISH_DELETE: a sync's
 * credential alone removes nothing).
 *
 * A pack's files made whole (version 9): MEM hands a landing session the
 * memory the daemon received a pack into, a memfd sealed against
 * shrinking and growing (F_SEAL_SHRINK, F_SEAL_GROW) of at most
 * LANDMSG_MEM_MAX bytes; the lander maps it read-only, in place of the
 * one before. A CREATE in the staging directory then makes a file from
 * @length bytes of it at @offset, as the user, in one step: created by
 * its name (O_EXCL: EEXIST where the name is taken), its data written
 * from the memory, then what a LINK sets (its digest, attributes, mode,
 * mtime), or with LANDMSG_LINK_KEEP_* made nameless and kept where the
 * tree there has the same file, as a LINK keeps it. One request a file
 * where TMPFILE and LINK were two, and no descriptor crossing the socket:
 * a chunk of a tree's small files is one BATCH, one round trip. The
 * lander reads the memory only within the size it mapped (write(2) into
 * the file it makes; keeping, a comparison with the file there), and
 * sealed, the memory cannot shrink under the mapping: nothing the daemon
 * does to it meanwhile can fault the lander.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LANDMSG_MAGIC           0x444e4c58u     /* "XLND" little-endian */
#define LANDMSG_VERSION         10
#define LANDMSG_HEADER_SIZE     16
/* A MUNGE credential is base64 text ("MUNGE:...:"); one with the
 * binding's payload is some 200 bytes. */
#define LANDMSG_CRED_MAX        2048
#define LANDMSG_PATH_MAX        4095    /* DEST, absolute; a request's path, relative */
#define LANDMSG_LEAF_MAX        255
#define LANDMSG_USER_MAX        255
#define LANDMSG_TEXT_MAX        255
/* A relay chain's nodes (ctl.h's CTL_NODES_MAX), each as 16 bytes: an
 * IPv6 address, or an IPv4 one mapped (::ffff:a.b.c.d). */
#define LANDMSG_ADDRS_MAX       512
#define LANDMSG_ADDR_SIZE       16
#define LANDMSG_TOKEN_SIZE      16
/* A BATCH: its requests, and their bytes (each op's type and payload);
 * a chunk of a tree's small files fits (128 LINKs of 4 KiB files with
 * short names are some 13 KiB), a longer one goes in two. */
#define LANDMSG_BATCH_MAX       128
#define LANDMSG_BATCH_BYTES     16384
/* MEM's memory, at most: a pack's (pack.h, PACK_BYTES_MAX) and more. */
#define LANDMSG_MEM_MAX         (16u << 20)
#define LANDMSG_MSG_MAX         (LANDMSG_HEADER_SIZE + 12 + LANDMSG_BATCH_BYTES)     /* a BATCH's, the longest */

enum landmsg_type {
        LANDMSG_SESSION = 1,
        LANDMSG_SESSION_OK = 2,
        LANDMSG_MKDIR = 3,
        LANDMSG_TMPFILE = 4,
        LANDMSG_LINK = 5,
        LANDMSG_OPEN_READ = 6,
        LANDMSG_END = 7,
        LANDMSG_OK = 8,
        LANDMSG_FD = 9,
        LANDMSG_ERROR = 10,
        LANDMSG_SETATTR = 11,
        LANDMSG_SYMLINK = 12,
        LANDMSG_HARDLINK = 13,
        LANDMSG_PUBLISH = 14,
        LANDMSG_DISCARD = 15,
        LANDMSG_BATCH = 16,
        LANDMSG_FDS = 17,
        LANDMSG_WALK = 18,              /* version 4 */
        LANDMSG_WALK_HEAD = 19,
        LANDMSG_WALK_ENTRY = 20,
        LANDMSG_LOOK = 21,
        LANDMSG_PUBLISHED = 22,         /* version 5 */
        LANDMSG_MEM = 23,               /* version 9 */
        LANDMSG_CREATE = 24,
        _LANDMSG_TYPE_MAX,
};

enum landmsg_direction {
        LANDMSG_PUSH = 1,       /* files land as the user (xferctl send ... PEER:/path) */
        LANDMSG_PULL = 2,       /* files are read as the user (xferctl get PEER:/path) */
};

/* A session's flags, which its credential's binding covers: what the
 * user asked for, not the daemon's to add. */
enum {
        /* xferctl send --overwrite: LINK and PUBLISH may replace (as the user may). */
        LANDMSG_SESSION_REPLACE = 1 << 0,
        /* xferctl get -r (a PULL's only): DEST may be a directory, read
         * whole (OPEN_READ, WALK). */
        LANDMSG_SESSION_TREE = 1 << 1,
        /* xferctl send --sync, --skip-existing (a PUSH's only): what has a
         * file's name in DEST may be looked at, read-only (LOOK). */
        LANDMSG_SESSION_SYNC = 1 << 2,
        /* xferctl send --dry-run (a PUSH's only; version 7): LOOK and END
         * only, nothing made (landmsg.h's top, Dry runs). */
        LANDMSG_SESSION_DRY = 1 << 3,
        /* xferctl send --delete (a PUSH's, with SYNC; version 8): PUBLISH
         * may delete what the sent tree lacks; a dry run's may WALK for
         * the names there (landmsg.h's top, Deleting, dry). */
        LANDMSG_SESSION_DELETE = 1 << 4,
        _LANDMSG_SESSION_FLAGS = LANDMSG_SESSION_REPLACE | LANDMSG_SESSION_TREE | LANDMSG_SESSION_SYNC |
                                 LANDMSG_SESSION_DRY | LANDMSG_SESSION_DELETE,
};

struct landmsg_session {
        uint8_t direction;      /* enum landmsg_direction */
        uint8_t flags;          /* LANDMSG_SESSION_* */
        uint16_t naddrs;        /* 1 .. LANDMSG_ADDRS_MAX */
        uint8_t token[LANDMSG_TOKEN_SIZE];
        uint8_t addrs[LANDMSG_ADDRS_MAX][LANDMSG_ADDR_SIZE];
        char cred[LANDMSG_CRED_MAX + 1];        /* printable ASCII */
        char dest[LANDMSG_PATH_MAX + 1];        /* begins with '/' */
};

struct landmsg_session_ok {
        uint64_t session;       /* not 0 */
        uint32_t uid, gid;
        char user[LANDMSG_USER_MAX + 1];        /* the local user database's name, "" if none */
};

/* A path in the job's staging directory, not DEST: MKDIR, TMPFILE, LINK,
 * SYMLINK, HARDLINK, SETATTR. */
#define LANDMSG_OP_STAGE        (1u << 8)
/* TMPFILE, LINK: in DEST's parent, path "", and a LINK's leaf is DEST's
 * own: one file that is DEST itself (xferctl send FILE PEER:/dir/name,
 * where /dir/name is no directory). Nothing else in the parent: the
 * credential names DEST, not its siblings. */
#define LANDMSG_OP_PARENT       (1u << 9)
/* Every op on a tree, and its PUBLISH and DISCARD: the tree lands in
 * DEST (a directory) as DEST/leaf, its staging directory in DEST, rather
 * than as DEST, staged beside it. */
#define LANDMSG_OP_INTO         (1u << 10)
/* PUBLISH's: an existing DEST is replaced (else EEXIST). */
/* MKDIR, LINK (version 6; xferctl send -X, -A): xattrs_len bytes of the
 * entry's attributes (xattrs.h: user.* and POSIX ACLs) follow the op's
 * strings, and are set as the user: on a directory once it is made, on a
 * file before its mode, digest and name (so a read-only mode takes them;
 * the ACLs last, then the mode, whose group bits are the ACL's mask).
 * With LANDMSG_OP_ACLS too, an ACL the records lack is removed from the
 * entry (one a directory's default ACL gave it), so its ACLs are the
 * sender's. */
#define LANDMSG_OP_XATTRS       (1u << 11)
#define LANDMSG_OP_ACLS         (1u << 12)
/* On OPEN_READ and WALK of a PULL session (version 6; xferctl get -X, -A)
 * the same flags ask to read them, as the user: the FD answer carries the
 * file's or directory's (user.* for LANDMSG_OP_XATTRS, its ACLs for
 * _ACLS), each WALK_ENTRY of a file or directory its own. One that takes
 * more than LANDMSG_XATTRS_MAX bytes is an ERROR (E2BIG) naming it.
 * So does LOOK of a landing session (version 7; -X, -A with --sync): the
 * file's FD answer carries its attributes, which the daemon compares with
 * the sender's (a file whose attributes differ is sent again). */
#define LANDMSG_XATTRS_MAX      4095
/* LOOK's (version 10; a dry run's look at a symlink it was offered): a
 * symlink that has the name is answered WALK_ENTRY {SYMLINK, mode 0,
 * size: its target's length, its mtime, path: the leaf, its target}, read
 * as the user, rather than ERROR EEXIST; anything else as LOOK answers
 * it. The daemon compares it with the symlink offered, as the drop box's
 * sync does (recv_sync_link): the same target is kept. */
#define LANDMSG_LOOK_LINK       (1u << 14)      /* past LANDMSG_LINK_KEEP_XATTRS */
/* LOOK's ERROR (EEXIST) text where a directory has the name. */
#define LANDMSG_LOOK_DIR        "exists as a directory"
#define LANDMSG_PUBLISH_REPLACE (1u << 0)
/* PUBLISH's, in a session that may LOOK (version 5): an existing DEST,
 * a directory, is merged into (neither EEXIST nor replaced). */
#define LANDMSG_PUBLISH_MERGE   (1u << 1)
/* PUBLISH's, with REPLACE and not MERGE, in a session that may LOOK
 * (version 5): the old DEST's entries the new one lacks are deleted, and
 * counted (PUBLISHED). */
#define LANDMSG_PUBLISH_DELETE  (1u << 2)

/* LINK's flags. */
enum {
        /* Replace what has the name: linked under a temporary name first
         * and renamed over it, so the name holds the old file or the new. */
        LANDMSG_LINK_REPLACE = 1 << 0,
        /* fsync the directory once linked (and the file first, when
         * MODE or DIGEST changed it: its data the daemon fsynced before). */
        LANDMSG_LINK_SYNC = 1 << 1,
        /* Before it is linked, as the user: the file's mode (op.mode, less
         * setuid and setgid), and its digest (op.target, hex) as
         * user.rdmaxfer.digest where the file system keeps user xattrs; the
         * xattr first, so that a read-only mode still takes it; the mode
         * left as it is where the file has it already. One round trip for
         * a file's publishing, where SETATTR and LINK were two. */
        LANDMSG_LINK_MODE = 1 << 2,
        LANDMSG_LINK_DIGEST = 1 << 3,
        /* Its mtime (op.mtime_ns), last of what is set before the name. */
        LANDMSG_LINK_MTIME = 1 << 4,
        /* In the staging directory of a session that may LOOK (version 5):
         * the file the tree there has at the same path, when it is the
         * same, is linked instead (landmsg.h's top, a tree kept up to
         * date). At most one: the same size (--sync=size), the same bytes
         * (--sync=digest: compared), or any regular file (--skip-existing). */
        LANDMSG_LINK_KEEP_SIZE = 1 << 5,
        LANDMSG_LINK_KEEP_BYTES = 1 << 6,
        LANDMSG_LINK_KEEP_ANY = 1 << 7,
        _LANDMSG_LINK_KEEP = LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_BYTES | LANDMSG_LINK_KEEP_ANY,
        /* With KEEP_SIZE or KEEP_BYTES (version 7; -X, -A with --sync):
         * kept only where its attributes are the LINK's too, user.* with
         * this flag, the ACLs with LANDMSG_OP_ACLS (the LINK's records, in
         * any order, none where it has none): a file whose attributes
         * changed is the new one, as one whose bytes did. */
        LANDMSG_LINK_KEEP_XATTRS = 1 << 13,     /* past LANDMSG_OP_* */
        /* SYMLINK's too (version 10), in the staging directory of a
         * session that may LOOK: the symlink the tree there has at the same
         * path, where it points where this one would (KEEP_SIZE or
         * KEEP_BYTES; with KEEP_ANY, wherever it points), is linked in its
         * place (linkat: the same inode, its own mtime), and the answer is
         * FDS {0, kept 1}; else the symlink is made as ever (OK). */
        _LANDMSG_LINK_FLAGS = LANDMSG_LINK_REPLACE | LANDMSG_LINK_SYNC | LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST |
                              LANDMSG_LINK_MTIME | _LANDMSG_LINK_KEEP | LANDMSG_LINK_KEEP_XATTRS,
};

/* MKDIR, TMPFILE, LINK, OPEN_READ, END, SYMLINK, HARDLINK, PUBLISH,
 * DISCARD, WALK, LOOK, MEM, CREATE: what each uses of it. CREATE carries
 * LINK's flags (less REPLACE and SYNC), its mode always. */
struct landmsg_op {
        uint64_t session;
        uint32_t mode;          /* MKDIR, TMPFILE, LINK with LANDMSG_LINK_MODE: 07777 bits */
        uint32_t flags;         /* LANDMSG_OP_STAGE; LINK: LANDMSG_LINK_*; PUBLISH: LANDMSG_PUBLISH_* */
        uint64_t mtime_ns;      /* LINK with LANDMSG_LINK_MTIME, SYMLINK (0: left alone); else 0 */
        char path[LANDMSG_PATH_MAX + 1];        /* relative to DEST or the staging directory
                                                 * (name_path_check), "": itself */
        char leaf[LANDMSG_LEAF_MAX + 1];        /* LINK, SYMLINK, HARDLINK: one name (name_check);
                                                 * TMPFILE: "" or the name it is to have;
                                                 * MKDIR of the staging directory itself:
                                                 * "" or the name it is to be published
                                                 * under (EEXIST now, unless replacing);
                                                 * PUBLISH with LANDMSG_OP_INTO: that name */
        /* SYMLINK: the link's target, any bytes; HARDLINK: the entry to
         * link, a path relative to the same place as @path; LINK with
         * LANDMSG_LINK_DIGEST: the file's digest, 1 to 64 hex digits. */
        char target[LANDMSG_PATH_MAX + 1];
        /* MKDIR, LINK, CREATE with LANDMSG_OP_XATTRS: the entry's attributes. */
        uint16_t xattrs_len;
        uint8_t xattrs[LANDMSG_XATTRS_MAX];
        /* CREATE: its data, in the session's memory (MEM). */
        uint64_t data_off, data_len;
};

/* @op emptied for a request of @session: what an encoder reads of it
 * zeroed (its strings' first bytes), without clearing the whole of it. */
static inline void landmsg_op_init(struct landmsg_op *op, uint64_t session)
{
        op->session = session;
        op->mode = op->flags = 0;
        op->mtime_ns = 0;
        op->path[0] = op->leaf[0] = op->target[0] = '\0';
        op->xattrs_len = 0;
        op->data_off = op->data_len = 0;
}

/*
 * SETATTR: what to set on the file that comes with it, a regular file of
 * the session's user, as that user: its mode, its mtime, an extended
 * attribute (the user.* namespace only: what its owner may set).
 */
enum {
        LANDMSG_SET_MODE = 1 << 0,
        LANDMSG_SET_MTIME = 1 << 1,
        LANDMSG_SET_XATTR = 1 << 2,
        /* No file comes: the directory at @path (a directory's own mode and
         * mtime are set once everything inside it is in). */
        LANDMSG_SET_AT_PATH = 1 << 3,
        _LANDMSG_SET_FLAGS = LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_XATTR | LANDMSG_SET_AT_PATH |
                             LANDMSG_OP_STAGE | LANDMSG_OP_INTO,
};
#define LANDMSG_XATTR_NAME_MAX  255
#define LANDMSG_XATTR_VALUE_MAX 1024

struct landmsg_setattr {
        uint64_t session;
        uint32_t flags;         /* LANDMSG_SET_*, at least one */
        uint32_t mode;          /* 07777 bits */
        uint64_t mtime_ns;      /* since the epoch */
        char xname[LANDMSG_XATTR_NAME_MAX + 1];         /* "user.", then at least one byte */
        uint16_t xlen;
        uint8_t xvalue[LANDMSG_XATTR_VALUE_MAX];
        char path[LANDMSG_PATH_MAX + 1];        /* with LANDMSG_SET_AT_PATH; else "" */
};

/* Why a request was refused: an errno, and for a path the lander
 * refused on its own grounds a verdict (landfs.h's), where it stopped
 * and a sentence for the user. */
struct landmsg_error {
        uint32_t err;           /* a positive errno, not 0 */
        uint16_t verdict;       /* 0, or the lander's own reason */
        char where[LANDMSG_PATH_MAX + 1];
        char text[LANDMSG_TEXT_MAX + 1];
};

/*
 * BATCH: @count requests of @session, encoded back to back in @body (@len
 * bytes): each a u16 type (MKDIR, TMPFILE, LINK or CREATE) and that op's payload,
 * its session @session. Built with landmsg_batch_add, read with
 * landmsg_batch_next; @links, the descriptors it must come with.
 */
struct landmsg_batch {
        uint64_t session;
        uint16_t count;         /* 1 .. LANDMSG_BATCH_MAX */
        uint16_t links;         /* of them LINKs (decoded; not on the wire) */
        uint16_t len;
        uint8_t body[LANDMSG_BATCH_BYTES];
};

/* A walker's count (WALK_HEAD) and entries (WALK_ENTRY), landmsg.h's top. */
struct landmsg_walk_head {
        uint32_t entries;       /* beneath DEST, 0 .. UINT32_MAX - 1 */
        uint64_t bytes;         /* their sizes summed (a symlink's: its target's length) */
};

enum landmsg_walk_kind {
        LANDMSG_WALK_FILE = 1,          /* a regular file: its descriptor comes with it */
        LANDMSG_WALK_DIR = 2,           /* a directory; its entries follow it */
        LANDMSG_WALK_SYMLINK = 3,       /* target: what it points at (size: its length) */
        LANDMSG_WALK_HARDLINK = 4,      /* a regular file met before: target, that entry's path */
        /* A names-only walk's (version 8; Deleting, dry): a device, FIFO or
         * socket; and after a directory's entries, the directory again. */
        LANDMSG_WALK_OTHER = 5,
        LANDMSG_WALK_DIR_END = 6,
};

struct landmsg_walk_entry {
        uint8_t kind;           /* enum landmsg_walk_kind */
        uint32_t mode;          /* 07777 bits (a symlink's, a hard link's: 0) */
        uint64_t size;
        uint64_t mtime_ns;      /* since the epoch, 0: none (a hard link's: 0) */
        char path[LANDMSG_PATH_MAX + 1];        /* beneath DEST, name_path_check's form */
        char target[LANDMSG_PATH_MAX + 1];      /* SYMLINK, HARDLINK; else "" */
        /* A FILE's or DIR's attributes (version 6), where the WALK asked
         * for them (LANDMSG_OP_XATTRS, _ACLS); else 0. */
        uint16_t xattrs_len;
        uint8_t xattrs[LANDMSG_XATTRS_MAX];
};

/* FD's (version 6): an OPEN_READ's answer with LANDMSG_OP_XATTRS or
 * _ACLS asked, the file's or directory's attributes (xattrs.h), read as
 * the user; none else. */
struct landmsg_fd {
        uint16_t xattrs_len;
        uint8_t xattrs[LANDMSG_XATTRS_MAX];
};

/* FDS: a BATCH's answer, with @count descriptors (its TMPFILEs'). */
struct landmsg_fds {
        uint16_t count;         /* 0 .. LANDMSG_BATCH_MAX */
        uint16_t kept;          /* of its LINKs, those that kept the file there (version 5) */
};

/* PUBLISHED: a PUBLISH_DELETE's answer. */
struct landmsg_published {
        uint64_t deleted;       /* the old tree's entries the new one lacks */
};

struct landmsg {
        uint16_t type;
        uint32_t id;            /* the request's; its answer echoes it */
        union {
                struct landmsg_session session;
                struct landmsg_session_ok session_ok;
                struct landmsg_op op;
                struct landmsg_setattr setattr;
                struct landmsg_error error;
                struct landmsg_batch batch;
                struct landmsg_fds fds;
                struct landmsg_published published;
                struct landmsg_walk_head walk_head;
                struct landmsg_walk_entry walk_entry;
                struct landmsg_fd fd;
        };
};

/* Whether @type is one of the requests struct landmsg_op carries. */
bool landmsg_is_op(uint16_t type);

/* Encode @m into @buf (@cap bytes): its length, or -EINVAL (a field out
 * of its bounds, an unknown type) or -ENOBUFS. */
int landmsg_encode(void *buf, size_t cap, const struct landmsg *m);
/*
 * Decode the @len bytes at @buf into @m: 0, -EPROTONOSUPPORT (another
 * version: the header's id and type are still in @m, for the answer), or
 * -EBADMSG (anything else wrong: magic, length, a field out of bounds, an
 * unknown type).
 */
int landmsg_decode(const void *buf, size_t len, struct landmsg *m);

/*
 * The payload of a session's MUNGE credential: LANDMSG_BINDING_SIZE bytes,
 * a fixed prefix and a keyed BLAKE2b-256 of the direction, the flags,
 * DEST, the token and the addresses, each with its length, so that no two jobs
 * share one. xferctl puts it in the credential; the lander computes it
 * again from SESSION and compares.
 */
#define LANDMSG_BINDING_SIZE    48
int landmsg_binding(const struct landmsg_session *s, uint8_t out[static LANDMSG_BINDING_SIZE]);
/* A numeric IPv4 or IPv6 address as a session's 16 bytes (IPv4 mapped,
 * ::ffff:a.b.c.d): xferctl's binding and the daemons' SESSION must agree
 * byte for byte. 0, or -EINVAL (not a numeric address). */
int landmsg_addr_parse(const char *text, uint8_t out[static LANDMSG_ADDR_SIZE]);

/*
 * Start @m as an empty BATCH of @session; add @type (MKDIR, TMPFILE,
 * LINK or CREATE) with @op (whose session must be @session) to it: 0, -ENOSPC (it
 * is full: LANDMSG_BATCH_MAX requests, or no room for this one's bytes;
 * send it and start another), or -EINVAL (@op does not encode, or
 * another type or session).
 */
void landmsg_batch_init(struct landmsg *m, uint64_t session);
int landmsg_batch_add(struct landmsg *m, uint16_t type, const struct landmsg_op *op);
/*
 * The request of @b at *@off (0: the first) into @type and @op, *@off
 * moved past it: 1, or 0 after the last. A decoded BATCH holds only
 * requests that decode (landmsg_decode checked each).
 */
int landmsg_batch_next(const struct landmsg_batch *b, size_t *off, uint16_t *type, struct landmsg_op *op);

/* Send @m with @fd (-1: none) on @sock; receive one into @m and *@fd
 * (-1 when none came; any more are closed). 0 or -errno (-ECONNRESET at
 * the end, landmsg_decode's). */
int landmsg_send(int sock, const struct landmsg *m, int fd);
int landmsg_recv(int sock, struct landmsg *m, int *fd);
/* The same with up to @max descriptors (SCM_FDS_MAX at most): @nfds sent,
 * *@nfds received into @fds (any beyond @max are closed). */
int landmsg_send_fds(int sock, const struct landmsg *m, const int *fds, size_t nfds);
int landmsg_recv_fds(int sock, struct landmsg *m, int *fds, size_t max, size_t *nfds);
