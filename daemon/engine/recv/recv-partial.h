#pragma once

/*
 * Resuming: a file's partial kept and continued (recv-partial.c), a tree
 * kept for the job's next attempt (recv-partial-tree.c), both in the partial
 * directory (partials.h, the store). Private to recv/.
 */

#include "recv-int.h"

/* recv-partial.c: keeping and resuming (partials.h). */
/* Who offered what, and where it goes (taken at the offer): a record's identity. */
void recv_partial_identity(struct recv_xfer *x, struct partial_rec *r);
/* x->pj for one operation on the partial named by x->ident. */
void recv_job_init(struct recv_xfer *x);
/* Look for a partial of this transfer, then recv_file_open() or the ACCEPT. */
void recv_partial_lookup(struct recv_xfer *x);
/* With the ACCEPT: each lane that resumes reads its kept part back and
 * hashes it; it gets no credits until then (recv_credits_take). */
void recv_partial_rehash(struct recv_xfer *x);
/* Lane @l now exists: where it resumes, and its digest of the kept part. */
void recv_partial_lane(struct recv_xfer *x, struct recv_lane *l);
/* After a write: a checkpoint, when RECV_CKPT_BYTES more were written. */
void recv_partial_checkpoint(struct recv_xfer *x);
/* The transfer fails in DATA: one last checkpoint of what is written. */
void recv_partial_final(struct recv_xfer *x);
/* Published: keep a record that says so (for a retry whose RESULT was
 * lost), then recv_published(). */
void recv_partial_published(struct recv_xfer *x);
/* The data is bad (checksum, size): the partial goes. */
void recv_partial_drop(struct recv_xfer *x);
/* A later file of a session that resumes: each lane's kept part is read
 * back and hashed before the ACCEPT, which recv_accept() then sends (the
 * sender may still hold credits from the file before, so its data could
 * come before a lane's digest had the kept part). True when started. */
bool recv_partial_prehash(struct recv_xfer *x);
/* A session's next file: nothing of the last one's partial is left in x. */
void recv_partial_reset(struct recv_xfer *x);
/* A tree's entry is in the staging directory: its partial goes, then
 * recv_tree_entry_done(). */
void recv_partial_staged(struct recv_xfer *x);
void recv_partial_free(struct recv_xfer *x);
/* @x is gone: a lookup that waited for the partial it held may look now. */
void recv_partial_released(struct recv_xfer *x);
/* Another receive here that @match says holds what @x is after, ended
 * ones too (CLOSING, or dead: their last checkpoint, or a write, may be
 * out); NULL if none. */
struct recv_xfer *recv_other(struct recv_xfer *x, bool (*match)(const struct recv_xfer *x, const struct recv_xfer *o));
/* The deadline of a lookup that waits (part_waiting): it goes on without
 * the partial. */
void recv_partial_wait_over(struct recv_xfer *x);

/* A user's file (recv-land.c): kept held open here, not in partial_dir. */
/* Whether @x's file may be kept: one file, pushed to this node alone. */
bool recv_land_keeps(const struct recv_xfer *x);
/* A checkpoint of it, x->pj.rec: 0 or -errno. */
int recv_land_kept_store(struct recv_xfer *x);
/* Cur's kept file, once the lander has proven the user and its TMPFILE
 * checked the name: its descriptor (x->found set), or -1 (none; one of
 * another source, or landed otherwise, goes). */
int recv_land_kept_take(struct recv_xfer *x);
/* Published, or its data is bad: what was kept of it goes. */
void recv_land_kept_drop(struct recv_xfer *x);

/* recv-partial-tree.c: a tree kept for the job's next attempt (wire.h, Resuming a tree). */
/* A kept tree's list of symlinks, in its staging directory beside DEST's
 * leaf (which is never this name: recv_name_reserved()). */
#define RECV_KEEP_LINKS         ".links"
/* A relayed kept tree's list of entries (common/entlist.h), beside them. */
#define RECV_KEEP_ENTRIES       ".entries"
/* DEST's offer: look for a kept tree of this job (x->tree_resumed), then
 * recv_file_open(). */
void recv_keep_lookup(struct recv_xfer *x);
/* On a worker, at DEST: the staging directory in the partial directory,
 * made (or the kept one, its list of symlinks cut back to the record's,
 * and a relay's list of entries read back into ents_kept): x->stage_fd,
 * top_fd, links_fd, ents_fd. 0 or -errno. */
int recv_keep_stage(struct recv_xfer *x);
/* On a worker: fin's record (keep_pj), after a relay's entries of it
 * (ents_new). What partials_store() returns. */
int64_t recv_keep_store(void *arg);
/* An entry is answered ok, not the last: the record first, then
 * recv_published_now(). */
void recv_keep_record(struct recv_xfer *x);
/* The record is due for fin (a kept tree, not its last entry, not
 * recorded yet); its fields in keep_pj, for partials_store() on a worker
 * (recv_keep_record, or recv-file.c with the entry's own steps); then
 * what the store returned. */
bool recv_keep_due(const struct recv_xfer *x);
void recv_keep_prepare(struct recv_xfer *x);
void recv_keep_stored(struct recv_xfer *x, int64_t res);
/* The tree is in place: what is left of its staging directory goes and
 * its record says it was published, for a retry whose last RESULT was
 * lost (on a worker: touches x->stage_fd, links_fd, keep_pj). */
void recv_keep_published(struct recv_xfer *x);
/* The transfer is gone without publishing: the kept tree stays for the
 * next attempt after a failure that one may not meet again, else goes. */
void recv_keep_gone(struct recv_xfer *x);
