#pragma once

/*
 * The received file in the incoming directory: opening it, publishing it
 * (a file, a tree's entries and its staging directory, a pack's entries),
 * and sync's look at what is there already. Private to recv/.
 */

#include "landc.h"
#include "pack.h"
#include "recv-int.h"

/*
 * recv-file.c: the file in the incoming directory, one disk request at a
 * time, none on the loop (a slow or dead NFS incoming directory stalls
 * only its own transfers; cfg io_timeout ends them). Each step's
 * completion starts the next; a transfer that closed meanwhile stops there.
 */
/* Look the name up, open a nameless file, check free space against
 * min_free, reserve: then recv_accept(), or a REFUSE with the reason. */
void recv_file_open(struct recv_xfer *x);
/* A tree's cur: its path in the tree as it lands (DEST's leaf, then beneath it: cur->rel). */
void recv_tree_rel(struct recv_xfer *x);
/* The kept next offer's file: opened now, if it may be (x->early). */
void recv_early_open(struct recv_xfer *x);
/* Cur's file, if it was opened early: its descriptor, now the caller's;
 * RECV_EARLY_WAIT when it is still being opened (the caller's opening
 * runs again once it is: x->early.waiting); -1: open it as ever. */
#define RECV_EARLY_WAIT         (-2)
int recv_early_claim(struct recv_xfer *x);
/* fsync, link under the name (with overwrite: a .part renamed over), fsync
 * the directory: then recv_published(), or a failed RESULT. */
void recv_file_publish(struct recv_xfer *x);
/* Cur's nameless file @fd is made (a user's, by the lander: recv-land.c):
 * free space, its reserve, then the ACCEPT, as for the drop box's. */
void recv_file_opened(struct recv_xfer *x, int fd);

/*
 * recv-land.c: a session that lands as its user (wire.h, Landing as the
 * user), through rdmaxfer-lander (landc.h), which proves the user by the
 * MUNGE credential and does what the user's files need done as them.
 */
/* A LAND part before the first offer, in lane 0's one control buffer. */
void recv_land_part(struct recv_lane *l, const struct wire_land *p);
/* The session's first offer @o: its landing whole (its hash into @o, for
 * the MAC). False when the transfer failed (a protocol error). */
bool recv_land_offer(struct recv_xfer *x, struct wire_offer *o);
/* Whether this node lands users' files (and the first offer @o as a
 * landing may be), and why not: WIRE_OK or a refusal. */
unsigned int recv_land_check(struct recv_xfer *x, const struct wire_offer *o, char *text, size_t len);
/* Cur's file, as the user: the session first, then a nameless file of
 * theirs; then recv_file_opened(). */
void recv_land_open(struct recv_xfer *x);
/* The next offer's file, made early (x->early: its ACCEPT then waits for
 * no round trip to the lander), as recv_early_open() does for a tree's. */
void recv_land_early(struct recv_xfer *x);
/* Sync: what has cur's name there (a tree's entry: at its path in the
 * tree there), as the user sees it (LOOK); then kept (recv_sync_skip) or
 * made as ever. */
void recv_land_look(struct recv_xfer *x);
/* A dry run as the user (x->dry): cur looked at as the user, nothing
 * made; then recv_dry_sent(), recv_sync_skip() or the refusal a real
 * send would meet. */
void recv_land_dry(struct recv_xfer *x);
/* A dry run's --delete: the tree there listed as the user, for recv_dry_names. */
void recv_land_dry_walk(struct recv_xfer *x);
/* A tree's look at PATH/DEST (land_into) answered that PATH is no
 * directory, and PATH was not asked for as one: the tree is PATH itself
 * (land_into now false), true; the answer is something else, false. */
bool recv_land_as_path(struct recv_xfer *x, const struct landmsg *reply);
/* Fin, verified: fsync, then its mode, digest xattr and name, as the
 * user; then recv_partial_published() (no partial: recv_published()). */
void recv_land_publish(struct recv_xfer *x);
/* The entry's attributes on @op (a MKDIR's, a LINK's) as the landing
 * carries them (wire.h, Attributes): LANDMSG_OP_ACLS where it carries
 * ACLs, LANDMSG_OP_XATTRS and the records where the entry has any: @o's,
 * the session's first entry's the landing's own; @xattrs (@len bytes), a
 * packed entry's. Nothing outside such a landing. */
void recv_land_op_attrs(const struct recv_xfer *x, const struct wire_offer *o, struct landmsg_op *op);
void recv_land_op_attrs_of(const struct recv_xfer *x, struct landmsg_op *op, const uint8_t *xattrs, uint16_t len);
/* The transfer is gone: its session ends (the lander forgets it). */
void recv_land_gone(struct recv_xfer *x);

/* recv-pull.c (wire.h, Pulls): whether a pull's offer is one, its file
 * to go to a node the credential names, as a relay may (WIRE_OK, or a
 * status with why in @text);
 * once the user is proven, the file opened as them and sent back; whether
 * that send runs (the sender hears a CREDIT a second); the pull decided
 * or gone first: its send cancelled. */
unsigned int recv_pull_check(struct recv_xfer *x, const struct wire_offer *o, char *text, size_t len);
void recv_pull_open(struct recv_xfer *x);
bool recv_pull_waiting(const struct recv_xfer *x);
void recv_pull_detach(struct recv_xfer *x);
/* Ask @req of the lander for @x (@fd: -1, or one it is to have), @done
 * told with x: false when nothing could be asked (then @x has failed). */
bool recv_land_ask(struct recv_xfer *x, const struct landmsg *req, int fd, landc_done_fn done, const char *what);
/* What asking the lander returned (@r), for @x: false, @x failed, when
 * nothing was asked; else its disk request @what starts. */
bool recv_land_asked(struct recv_xfer *x, int r, const char *what);
/* Fail @x with the lander's refusal @reply of @doing, said as the user's:
 * where and why, as a status the sender retries only when it was ours. */
void recv_land_refused(struct recv_xfer *x, const char *doing, const struct landmsg *reply);
/* The wire status of the lander's errno @err (a refusal the sender does
 * not retry where the user's files are why). */
unsigned int recv_land_status(uint32_t err);

/*
 * recv-land-tree.c: a tree that lands as its user, staged as the user in
 * a staging directory of theirs and published whole.
 */
/* Cur's entry: DEST's staging directory (the session first), a file's
 * nameless file; then recv_accept() or recv_file_opened(). */
void recv_land_tree_open(struct recv_xfer *x);
/* Fin, verified: a directory made, a file named with its mode and mtime;
 * then recv_tree_entry_done(). */
void recv_land_tree_publish(struct recv_xfer *x);
/* Fin, kept (sync) in a tree that deletes: the file there linked into the
 * staged tree under its name, as the user; then recv_tree_entry_done(). */
void recv_land_tree_keep(struct recv_xfer *x);
/* A dry run's link (fin) in a tree there, its target read
 * (fin->link_target: a symlink's, or a hard link's file's staged name):
 * what the tree there has at its name looked at as the user, the verdict
 * said (fin->dry; "skipped" where it is the same link); then
 * recv_tree_entry_done(). recv_tree_link_keep's RECV_LINK_LOOK. */
#define RECV_LINK_LOOK  2
/* recv_tree_link_keep's, a dry run into the drop box: a hard link whose
 * two names there are one file (fin->link_there; fin->dry says it would
 * be replaced): kept unless recv_dry_replaced() says that file is not. */
#define RECV_LINK_SAME  3
void recv_land_dry_link(struct recv_xfer *x);
/* After the last entry: links, directories' modes, PUBLISH, DEST's mode;
 * then recv_published(). */
void recv_land_tree_end(struct recv_xfer *x);
/* The transfer is gone: what it staged is discarded. */
void recv_land_tree_gone(struct recv_xfer *x);
/* A pack of fin's, landed as the user: its plan made (on the loop, before
 * unpacking: 0 or -ENOMEM); on the unpacking worker, each directory and
 * file of it added in order (@rel: DEST's leaf, then what follows); once
 * unpacked, made by the lander in chunks; then recv_tree_entry_done(). */
int recv_land_pack_new(struct recv_xfer *x);
int recv_land_pack_plan(struct recv_xfer *x, const struct pack_entry *e, const char *rel);
void recv_land_pack_go(struct recv_xfer *x);
/* Fin's pack plan, and the descriptors it holds, gone. Safe without one. */
void recv_land_pack_free(struct recv_xfer *x);

/*
 * What the tree's list holds (x->links_fd), an entry a record: a symlink
 * to make at the end (target_len > 0, mode 0, its target follows its
 * name), a hard link to make then (target_len > 0, mode S_IFREG, the
 * staged name of its file follows), or a mode and mtime to set at the
 * end (target_len 0; mode has the entry's type, S_IFDIR or S_IFREG, and
 * mtime_ns 0 leaves the mtime alone).
 */
struct recv_link_rec {
        uint16_t rel_len, target_len;
        uint32_t mode;
        uint64_t mtime_ns;
};
/* On a worker: the list's record at @off into @rec, @rel and @target
 * (NUL-terminated): the next record's offset, or -EIO for a list that
 * does not hold one. */
int64_t recv_tree_list_read(const struct recv_xfer *x, uint64_t off, struct recv_link_rec *rec,
                            char rel[static WIRE_PATH_MAX + 1], char target[static NAME_LINK_MAX + 1]);

/* A tree's offer is in the staging directory: the next, or the tree into place. */
void recv_tree_entry_done(struct recv_xfer *x);
/* What a tree's entry keeps of its mode: every permission bit and the
 * sticky bit, never setuid or setgid (rdmaxferd(8) Trees). */
mode_t recv_tree_mode(uint32_t mode);
/* The mode @mode's entry has while the tree is staged: the daemon fills a
 * directory (u+rwx), and writes a file's digest, reads it for a relay
 * and replaces it on resume (u+rw); where that differs from @mode, the
 * entry's record in the tree's list sets @mode at the end. */
mode_t recv_tree_staged_mode(mode_t mode, bool dir);
/* On a worker: directory @rel of the tree made in the staging directory
 * (there already, continuing a kept tree), its @mode and
 * @mtime_ns listed for the end. 0 or -errno. */
int recv_tree_mkdir_at(struct recv_xfer *x, const char *rel, uint32_t mode, uint64_t mtime_ns);
/* On a worker: @rel's @mode (with its type: S_IFDIR or S_IFREG) and
 * @mtime_ns (0: none) listed for the end (recv_tree_set_attrs). 0 or -errno. */
int recv_tree_attr_add(struct recv_xfer *x, const char *rel, mode_t mode, uint64_t mtime_ns);
/* On a worker, once nothing more is made in the tree: the listed modes
 * and mtimes, beneath the staging directory @dirfd (@top NULL) or beneath
 * DEST @dirfd, whose leaf is @top. 0 or -errno. */
int recv_tree_set_attrs(struct recv_xfer *x, int dirfd, const char *top);
/* The last entry is published and a relay is done with the tree: its
 * modes and mtimes, then recv_published_now() again. False when there is
 * nothing to do (or it is done). */
bool recv_tree_finish(struct recv_xfer *x);
/* A tree's symlink @rel (DEST's leaf, then the path beneath it) to
 * @target (@len bytes, no NUL), held to @symlinks (cfg tree_symlinks):
 * NULL, or why it is refused. */
const char *recv_tree_link_refused(const char *rel, const char *target, size_t len, int symlinks);
/* What @x's tree's symlinks are held to: tree_symlinks for the drop box;
 * any target for a tree that lands as its user, among the user's own
 * files, where the user could make any symlink themselves. */
int recv_tree_symlinks(const struct recv_xfer *x);
/* A link's data as the send side takes it (engine_send_file.link): a
 * memfd holding @target (a symlink's target, a hard link's file's name).
 * The fd, or -errno. A relay's and a pulled tree's. */
int recv_link_fd(const char *target);
/* A tree's hard link @name ("DEST/a/h") to the tree's file @target
 * (@len bytes, no NUL), held to @names (cfg names): NULL, or why it is
 * refused; @trel gets the file's name in the staging directory (DEST's
 * leaf, then the path beneath it). */
const char *recv_tree_hard_refused(const struct recv_xfer *x, const char *name, const char *target, size_t len,
                                   int names, char trel[static WIRE_PATH_MAX + 1]);
/* On a worker: hard link @rel to the staged file @trel kept for the end,
 * as a symlink is. 0 or -errno. */
int recv_tree_hard_add(struct recv_xfer *x, const char *rel, const char *trel);
/* On a worker, continuing a kept tree: what an earlier attempt that
 * ended while it published left, undone by the list (x->links_len bytes
 * of it): every entry's staged mode back, every symlink it names
 * removed, so that nothing is made through one, and every hard link it
 * made. 0 or -errno. */
int recv_tree_unpublish(struct recv_xfer *x);
/* On a worker: the symlink kept for the end, in the job's list of links
 * (recv-file.c makes them once every entry is in). 0 or -errno. Touches
 * x->links_fd, links_len, stage_fd. */
int recv_tree_link_add(struct recv_xfer *x, const char *rel, const char *target, size_t len, uint64_t mtime_ns);

/* recv-sync.c */
/* While the receiver reads before it answers an offer (its copy for a
 * digest, or a kept part), or verifies and publishes with every END in
 * (XFER_FINISHING), an empty CREDIT every second tells the waiting sender
 * it is at it (wire.h, Sync, Pipelining). */
void recv_tick_start(struct recv_xfer *x);
/* The offered entry is to be held against what is there first. */
bool recv_sync_wanted(const struct recv_xfer *x);
/* Look, off the loop: then recv_file_open() again, the skip (ACCEPT
 * SKIP and the RESULT), or a refusal. */
void recv_sync_probe_start(struct recv_xfer *x);
void recv_sync_free(struct recv_xfer *x);
/* A landing's (recv-land.c), once the lander showed what is there: the
 * offered file is kept (ACCEPT SKIP, its RESULT); or x->sync_fd, the
 * copy there, of the offer's size, is read for its digest (through
 * io_uring), then kept or sent again. */
void recv_sync_skip(struct recv_xfer *x);
void recv_sync_hash(struct recv_xfer *x);
/* On a worker, a tree merged into an existing DEST: the symlink @name
 * ("DEST/a/l") whose target (@len bytes) has arrived, against what the
 * old DEST has under that name. 1: the very same symlink is there (kept;
 * the merge links it in), 0: make the new one, -EEXIST: it differs and
 * overwrite is off, or -errno. */
int recv_sync_link(struct recv_xfer *x, const char *name, const char *target, size_t len);
/* The same for hard link @name to the tree's file @target ("DEST/c/d",
 * @len bytes): 0 when nothing is there, or the old DEST's @name is
 * already its @target's other name (the end keeps it if the file is
 * kept too), or overwrite is on; -EEXIST: something else is there and
 * overwrite is off; or -errno. */
int recv_sync_hard(struct recv_xfer *x, const char *name, const char *target, size_t len);
/* On a worker, deleting (recv_deleting): the old DEST's entry @name
 * ("DEST/a/b"), which the sync keeps, into the staging directory under
 * the same path (incoming_keep_link), its directory there made already
 * (a sender offers a directory before what it holds); a symlink is not
 * linked in while entries are still made there but added to the list of
 * links with its target and mtime, made at the end as the tree's own. 0
 * or -errno (-ENOENT: gone since it was judged). @dirs: the directories
 * a pack's entries share, kept open across them (NULL: opened for this
 * one). */
struct recv_sync_dirs {
        struct incoming_dircache old;   /* beneath the incoming directory */
        struct incoming_dircache stage; /* beneath the staging directory */
};
int recv_sync_keep(struct recv_xfer *x, const char *name, struct recv_sync_dirs *dirs);

/* The offered entry is answered as a kept one is: ACCEPT SKIP, its
 * RESULT once the file before it is published (recv_verified). */
void recv_answer_skip(struct recv_xfer *x);

/* recv-dry.c: a dry run (wire.h, version 17; x->dry) */
/* Cur's offer checked: judge it, make nothing. */
void recv_dry_offer(struct recv_xfer *x);
/* The probe (or the look) says a real session would send the entry:
 * the verdict ("would create", "would replace CST", "exists"), answered. */
void recv_dry_sent(struct recv_xfer *x);
/* On a worker, where a real session adds fin, a link, to the tree's list:
 * its verdict instead (@same: the very same link is there). 1 kept, 0. */
int recv_dry_link(struct recv_xfer *x, bool same);
/* @f's verdict, a link that differs from what is there (@there, with its
 * mtime), or with nothing there (NULL). */
void recv_dry_link_said(struct recv_file *f, const struct stat *there);
/* Whether the dry run said it would replace @st, a file there with more
 * names than one (recv_dry_say): a hard link to it is replaced too. */
bool recv_dry_replaced(const struct recv_xfer *x, const struct stat *st);
/* On a worker, a dry run merging into the drop box's DEST: whether fin, a
 * hard link to @target ("DEST/c/d", @len bytes), names there the very
 * regular file @target does (its stat in fin->link_there, fin->dry
 * saying it would be replaced). */
bool recv_dry_hard_same(struct recv_xfer *x, const char *target, size_t len);
/* Whether @path ("DEST/a/b", @is_dir: a directory) is what a deleting
 * tree's rules leave out, which the receiver keeps (wire.h, Deleting). */
bool recv_protected(const struct recv_xfer *x, const char *path, bool is_dir);
/* The last entry is judged: what --delete would remove (GONE), then the last RESULT. */
void recv_dry_end(struct recv_xfer *x);
/* A landing's --delete, dry: @fd the lander's walker of the tree there
 * (taken); its names held against those offered, then as recv_dry_end. */
void recv_dry_names(struct recv_xfer *x, int fd);
/* A control buffer of lane 0 is free again: the next GONEs. */
void recv_dry_pump(struct recv_xfer *x);
/* @f's RESULT text in a dry run. */
const char *recv_dry_text(const struct recv_file *f);
void recv_dry_free(struct recv_xfer *x);

/* recv-pack.c */
/* A pack's data is in and verified: its entries into the staging
 * directory, off the loop; then recv_tree_entry_done(), or a failure. */
void recv_pack_unpack(struct recv_xfer *x);
/*
 * The memory cur's pack comes into (offer.size bytes, at most
 * PACK_BYTES_MAX): for a tree landing as its user, a memfd sealed
 * against resizing and mapped here (pack_mem_fd), which the lander is
 * handed to make the files from; else the heap's. 0 or -errno. And
 * @f's let go of (either kind; none: nothing).
 */
int recv_pack_mem_new(struct recv_xfer *x);
void recv_pack_mem_free(struct recv_file *f);
/* An index pack's NEED, once a control buffer is free (wire.h, Index packs). */
void recv_need_pump(struct recv_xfer *x);
