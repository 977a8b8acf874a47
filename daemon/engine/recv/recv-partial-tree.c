/*
 * A tree kept for its job's next attempt (rdmaxferd(8), Resuming a tree;
 * wire.h, Resuming a tree).
 *
 * A tree whose first offer carries the job's token, received while
 * resuming is on (partial_dir) and no larger than partial_max_bytes, is
 * staged in the partial directory rather than in incoming_dir: KEY.tree,
 * beside KEY.rec, its record (partials.h; the key names the peer, its key
 * and DEST). Before each entry's RESULT goes, the record says how many
 * entries are staged, so the receiver never holds fewer than the sender
 * saw acknowledged. It is written without an fsync: the staging directory
 * itself is synced once, when the tree is published, so what it holds
 * lasts the daemon's crash or restart but not the host's; the record
 * carries the host's boot id and one of another boot is not trusted.
 *
 * A session that fails for a reason the next attempt may not meet leaves
 * both; that attempt (the same peer and key, DEST, totals, chunk size and
 * token) continues after the last entry recorded, and an entry staged
 * after that record may come again and replace itself. Published, both
 * go; a failure the next attempt would meet again (name, exists, too
 * large, no space, authentication) removes them; expiry and
 * partial_max_bytes are the sweep's, as for a file's partial.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "incoming.h"
#include "log.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"
#include "relay.h"

static struct io *recv_io(struct recv_xfer *x)
{
        return x->env->io;
}

/* x->keep_pj for one operation on the kept tree's record. */
static void recv_keep_job_init(struct recv_xfer *x)
{
        x->keep_pj = PARTIAL_JOB_NULL;
        x->keep_pj.dirfd = x->env->partial_fd;
        x->keep_pj.rec = x->keep_ident;
        partial_key(&x->keep_pj.rec, x->keep_pj.key);
}

static void recv_keep_tree_name(const struct recv_xfer *x, char out[PARTIAL_FILE_MAX])
{
        snprintf(out, PARTIAL_FILE_MAX, "%s.tree", x->keep_pj.key);
}

/* ---- DEST's offer ---- */

static void recv_keep_on_lookup(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        const struct partial_tree *t = &x->keep_pj.rec.tree;
        struct xfer *b = &x->base;

        if (!xfer_io_done(b))
                return;
        if (b->state != XFER_OFFER) {
                safe_close(x->keep_pj.data_fd);
                x->keep_pj.data_fd = -1;
                return;
        }
        if (res == PARTIALS_PUBLISHED) {
                /* Nothing to stage, keep or remove: only DEST's RESULT goes. */
                x->tree_again = x->published_tree = x->keep_off = true;
                x->tree_kept = x->next_file = x->job_files;
                x->tree_kept_bytes = x->offered = t->offered;
                x->files_published = t->published ? t->published - 1 : 0;
                x->packs = t->packs;
                x->files_skipped = t->skipped;
                log_info("%s: %s was published by transfer %" PRIu64 " already; its last RESULT never "
                         "reached the sender", b->peer, x->dest, x->cur->offer.transfer_id);
                recv_accept(x);
                return;
        }
        if (res == PARTIALS_HELD) {
                /* Staged in incoming_dir as any tree: nothing is kept. */
                log_notice("%s: %s: not kept: %s", b->peer, x->dest, x->keep_pj.why);
                x->tree_part = false;
                x->keep_pj.key[0] = '\0';
                recv_file_open(x);
                return;
        }
        if (res == PARTIALS_RESUME) {
                x->stage_fd = x->keep_pj.data_fd;
                x->keep_pj.data_fd = -1;
                x->tree_resumed = x->keep_recorded = true;
                x->tree_kept = x->next_file = t->entries;
                x->tree_kept_bytes = x->offered = t->offered;
                x->tree_links_len = t->links_len;
                /* DEST's own RESULT counts it again. */
                x->files_published = t->published ? t->published - 1 : 0;
                x->packs = t->packs;
                x->files_skipped = t->skipped;
                x->keep_created = x->keep_pj.rec.created;
                log_info("%s: %s: continuing transfer %" PRIu64 ": %u of %u entries (%" PRIu64
                         " bytes) kept from an interrupted attempt", b->peer, x->dest, x->cur->offer.transfer_id,
                         t->entries, x->job_files, t->offered);
        } else if (res < 0 || x->keep_pj.why) {
                log_notice("%s: %s: the kept tree is not continued: %s", b->peer, x->dest,
                           res < 0 ? strerror((int)-res) : x->keep_pj.why);
        }
        recv_file_open(x);
}

/* Another transfer here, ended or not, on the kept tree of @x's key. */
static bool recv_keep_same(const struct recv_xfer *x, const struct recv_xfer *o)
{
        return o->tree_part && strcmp(o->keep_pj.key, x->keep_pj.key) == 0;
}

void recv_keep_lookup(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        static const uint8_t zero[WIRE_SOURCE_SIZE];
        bool relayed = x->cur->offer.flags & WIRE_OFFER_RELAYED;
        struct recv_xfer *holder;
        int r;

        /* A relayed tree too (wire.h, Relay chains): whichever node
         * relays it next continues after what this one kept. */
        x->tree_part = partials_on(recv_xfer_of(b)->env, x->job_bytes) &&
                       memcmp(x->cur->offer.source, zero, sizeof(zero)) != 0 && !x->landing;
        if (!x->tree_part) {
                recv_file_open(x);
                return;
        }
        recv_partial_identity(x, &x->keep_ident);
        x->keep_ident.flags = PARTIAL_TREE;
        x->keep_ident.size = x->job_bytes;
        x->keep_ident.lanes = 1;
        x->keep_ident.tree.job_files = x->job_files;
        recv_keep_job_init(x);
        /* One session at a time on a kept tree. An attempt that overtook
         * the one still being torn down here is refused (busy: it
         * retries); a relay's offer, going around a hop, waits for the
         * failed hop's session here to store its last record (as a
         * relayed file does: recv_partial_released), or, that session
         * still receiving, is staged as any tree. */
        holder = recv_other(x, recv_keep_same);
        if (holder && !relayed) {
                x->tree_part = false;
                x->keep_pj.key[0] = '\0';
                recv_fail(x, WIRE_E_BUSY, "an earlier attempt of this tree is still ending here");
                return;
        }
        if (holder && holder->base.state != XFER_CLOSING && !holder->base.dead) {
                log_notice("%s: %s: not kept: another transfer here is receiving it", b->peer, x->dest);
                x->tree_part = false;
                x->keep_pj.key[0] = '\0';
                recv_file_open(x);
                return;
        }
        if (holder) {
                if (!x->part_waiting) {
                        log_info("%s: %s: waiting for the transfer that ended before it here to store "
                                 "its progress", b->peer, x->dest);
                        xfer_arm_timer(b, (int)MAX(1u, xfer_peer_timeout(b) / 2));
                }
                x->part_waiting = true;
                return;
        }
        x->part_waiting = false;
        memcpy(x->keep_pj.boot_id, recv_xfer_of(b)->env->boot_id, sizeof(x->keep_pj.boot_id));
        memcpy(x->keep_pj.offer.peer, x->keep_ident.peer, sizeof(x->keep_pj.offer.peer));
        memcpy(x->keep_pj.offer.key_id, x->keep_ident.key_id, sizeof(x->keep_pj.offer.key_id));
        memcpy(x->keep_pj.offer.source, x->cur->offer.source, sizeof(x->keep_pj.offer.source));
        x->keep_pj.offer.size = x->job_bytes;
        x->keep_pj.offer.chunk_size = x->cur->offer.chunk_size;
        x->keep_pj.offer.dest = x->dest;
        x->keep_pj.offer.job_files = x->job_files;
        x->keep_pj.dest_dirfd = recv_xfer_of(b)->env->incoming_fd;
        x->keep_pj.data_fd = -1;
        x->cur->req.done = recv_keep_on_lookup;
        r = io_call(recv_io(x), &x->cur->req, partials_lookup, &x->keep_pj);
        if (r < 0) {
                /* Staged in incoming_dir as any tree: nothing is kept. */
                log_warning("%s: looking for a kept tree: %s", b->peer, strerror(-r));
                x->tree_part = false;
                recv_file_open(x);
                return;
        }
        xfer_io_start(b, "looking for a kept tree");
}

/*
 * On a worker: a relay's top directory (DEST's, beneath which it opens
 * the entries it offers) and its list of entries: made new, or that of
 * the kept tree read back, every entry the record counts (cut back to
 * them: the later ones come again). A list that holds fewer (damaged, or
 * removed) is lost: the tree goes on here, as kept, but its relay cannot
 * offer the entries it kept (ents_lost), and no list is written further.
 */
static int recv_keep_top(struct recv_xfer *x)
{
        uint32_t want = x->tree_resumed ? x->tree_kept - 1 : 0;
        struct stat st;
        int64_t span;
        int fd;

        if (!x->route_on)
                return 0;
        x->top_fd = openat(x->stage_fd, x->cur->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (x->top_fd < 0)
                return -errno;
        fd = openat(x->stage_fd, RECV_KEEP_ENTRIES,
                    O_RDWR | O_NOFOLLOW | O_CLOEXEC | (x->tree_resumed ? 0 : O_CREAT | O_TRUNC), 0600);
        if (fd < 0 && (errno != ENOENT || !x->tree_resumed))
                return -errno;
        x->ents_fd = fd;
        if (!x->tree_resumed)
                return 0;
        if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size > SIZE_MAX / 2)
                goto lost;
        x->ents_kept.cap = (size_t)st.st_size;
        x->ents_kept.buf = malloc(MAX(x->ents_kept.cap, 1u));
        if (!x->ents_kept.buf)
                return -ENOMEM;
        while (x->ents_kept.len < x->ents_kept.cap) {
                ssize_t n = pread(fd, x->ents_kept.buf + x->ents_kept.len, x->ents_kept.cap - x->ents_kept.len,
                                  (off_t)x->ents_kept.len);

                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                x->ents_kept.len += (size_t)n;
        }
        span = entlist_span(x->ents_kept.buf, x->ents_kept.len, want);
        if (span < 0)
                goto lost;
        x->ents_kept.len = (size_t)span;
        x->ents_len = (uint64_t)span;
        return ftruncate(fd, (off_t)span) < 0 ? -errno : 0;

lost:
        x->ents_lost = true;
        entlist_free(&x->ents_kept);
        safe_close(x->ents_fd);
        x->ents_fd = -1;
        return 0;
}

int recv_keep_stage(struct recv_xfer *x)
{
        int pdir = x->env->partial_fd, fd, r;
        char name[PARTIAL_FILE_MAX];

        if (!x->tree_resumed) {
                /* What a crash before the first record left goes. */
                recv_keep_tree_name(x, name);
                r = incoming_remove_tree(pdir, name);
                if (r < 0 && r != -ENOENT)
                        return r;
                if (mkdirat(pdir, name, 0700) < 0)
                        return -errno;
                fd = openat(pdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                x->stage_fd = fd;
                r = recv_tree_mkdir_at(x, x->cur->rel, x->cur->offer.mode, x->cur->offer.mtime_ns);
                if (r < 0)
                        return r;
                return recv_keep_top(x);
        }
        /*
         * An attempt that ended while it published (killed, or a link it
         * could not make) left symlinks in the kept tree, and maybe
         * directories with their final modes: undone first, by the whole
         * list (not only what the record counts), so that nothing this
         * attempt makes beneath the stage can go through a link or meet a
         * directory it may not fill. The end makes them again.
         */
        fd = openat(x->stage_fd, RECV_KEEP_LINKS, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT)
                return -errno;
        if (fd >= 0) {
                struct stat st;

                x->links_fd = fd;
                if (fstat(fd, &st) < 0)
                        return -errno;
                x->links_len = (uint64_t)st.st_size;
                r = recv_tree_unpublish(x);
                if (r < 0)
                        return r;
        }
        /* The symlinks of the entries recorded; the later ones come again. */
        if (x->tree_links_len == 0) {
                safe_close(x->links_fd);
                x->links_fd = -1;
                x->links_len = 0;
                (void)unlinkat(x->stage_fd, RECV_KEEP_LINKS, 0);
        } else {
                if (x->links_fd < 0)
                        return -ENOENT;
                if (ftruncate(x->links_fd, (off_t)x->tree_links_len) < 0)
                        return -errno;
                x->links_len = x->tree_links_len;
        }
        return recv_keep_top(x);
}

int64_t recv_keep_store(void *arg)
{
        struct recv_xfer *x = arg;
        const struct entlist *n = &x->ents_new;

        /* The entries first: a record never counts one the list lacks. */
        if (x->ents_oom)
                return -ENOMEM;
        for (size_t done = 0; done < n->len;) {
                ssize_t w = pwrite(x->ents_fd, n->buf + done, n->len - done, (off_t)(x->ents_len + done));

                if (w < 0)
                        return -errno;
                if (w == 0)
                        return -EIO;
                done += (size_t)w;
        }
        return partials_store(&x->keep_pj);
}

/* ---- each entry ---- */

void recv_keep_stored(struct recv_xfer *x, int64_t res)
{
        if (res < 0) {
                /* Not keeping is no reason to fail: the tree goes on, and
                 * goes if this session fails too. */
                log_warning("%s: %s: recording the kept tree: %s; it is not kept", x->base.peer, x->dest,
                            strerror((int)-res));
                x->keep_off = true;
        } else {
                x->keep_recorded = true;
                x->ents_len += x->ents_new.len;
        }
        x->ents_new.len = 0;
        x->fin->recorded = true;
}

static void recv_keep_on_recorded(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct xfer *b = &x->base;

        if (!xfer_io_done(b) || b->state == XFER_CLOSING || !x->fin)
                return;
        recv_keep_stored(x, res);
        recv_published_now(x);
}

bool recv_keep_due(const struct recv_xfer *x)
{
        const struct recv_file *f = x->fin;

        return x->tree_part && !x->keep_off && !f->recorded && !recv_is_last(x, f);
}

void recv_keep_prepare(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->fin;
        struct partial_tree *t;
        uint64_t now = clock_usec(CLOCK_REALTIME) / 1000000u;

        recv_keep_job_init(x);
        if (!x->keep_created)
                x->keep_created = now;
        x->keep_pj.rec.created = x->keep_created;
        x->keep_pj.rec.updated = now;
        x->keep_pj.nosync = true;
        t = &x->keep_pj.rec.tree;
        /* Up to fin, the entry whose RESULT goes next: not the one offered
         * after it (cur, in flight: wire.h, Pipelining), whose bytes and
         * skip are counted already. A resumed tree's DEST holds what was kept. */
        t->entries = f->offer.file == 0 && x->tree_resumed ? x->tree_kept : f->offer.file + recv_file_span(f);
        t->offered = x->offered;
        t->skipped = x->files_skipped;
        if (x->cur != f && x->cur->offer.name[0]) {
                if (!(x->cur->offer.flags & WIRE_OFFER_PACK))
                        t->offered -= x->cur->offer.size;
                t->skipped -= x->cur->skip;
        }
        /* Cur's symlink is listed only when it is published, after fin's RESULT. */
        t->links_len = x->links_len;
        /* As they will be once this entry's RESULT is counted (recv_journal). */
        t->published = x->files_published + recv_file_span(f);
        t->packs = x->packs + !!(f->offer.flags & WIRE_OFFER_PACK);
        memcpy(t->boot_id, recv_xfer_of(b)->env->boot_id, sizeof(t->boot_id));
        /* A relay's list of entries: fin's, before the record that counts them. */
        x->ents_new.len = 0;
        x->ents_oom = x->ents_fd >= 0 && f->offer.file > 0 && relay_ents_add(&x->ents_new, f) < 0;
}

void recv_keep_record(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->fin;
        int r;

        if (!recv_keep_due(x)) {
                recv_published_now(x);
                return;
        }
        recv_keep_prepare(x);
        f->req.done = recv_keep_on_recorded;
        r = io_call(recv_io(x), &f->req, recv_keep_store, x);
        if (r < 0) {
                recv_keep_stored(x, r);
                recv_published_now(x);
                return;
        }
        xfer_io_start(b, "recording the kept tree");
}

/* ---- the end ---- */

void recv_keep_published(struct recv_xfer *x)
{
        struct recv_env *e = x->env;
        char name[PARTIAL_FILE_MAX];
        struct partial_tree *t;
        struct stat st;

        /* The tree is in place: nothing of it is left to resume. */
        (void)unlinkat(x->stage_fd, RECV_KEEP_LINKS, 0);
        (void)unlinkat(x->stage_fd, RECV_KEEP_ENTRIES, 0);
        recv_keep_tree_name(x, name);
        (void)unlinkat(e->partial_fd, name, AT_REMOVEDIR);
        /* What a retry whose last RESULT was lost is answered from: DEST,
         * this very directory (rdmaxferd(8), Resuming a tree). */
        recv_keep_job_init(x);
        if (incoming_stat_beneath(e->incoming_fd, x->dest, &st) < 0) {
                snprintf(name, sizeof(name), "%s.rec", x->keep_pj.key);
                (void)unlinkat(e->partial_fd, name, 0);
                return;
        }
        x->keep_pj.rec.flags |= PARTIAL_PUBLISHED;
        x->keep_pj.rec.created = x->keep_created ?: clock_usec(CLOCK_REALTIME) / 1000000u;
        x->keep_pj.rec.updated = clock_usec(CLOCK_REALTIME) / 1000000u;
        t = &x->keep_pj.rec.tree;
        t->dest_dev = (uint64_t)st.st_dev;
        t->dest_ino = (uint64_t)st.st_ino;
        t->entries = t->published = x->job_files;
        t->offered = x->offered;
        t->skipped = x->files_skipped;
        t->packs = x->packs + !!(x->fin->offer.flags & WIRE_OFFER_PACK);
        t->links_len = 0;
        memcpy(t->boot_id, e->boot_id, sizeof(t->boot_id));
        x->keep_pj.nosync = false;
        if (partials_store(&x->keep_pj) < 0) {
                /* A retry then meets DEST as existing: the job fails, saying so. */
                snprintf(name, sizeof(name), "%s.rec", x->keep_pj.key);
                (void)unlinkat(e->partial_fd, name, 0);
        }
}

struct recv_keep_drop {
        struct io_req req;      /* first */
        struct partial_job pj;
};

static void recv_keep_on_dropped(struct io_req *req, int64_t res)
{
        struct recv_keep_drop *d = (struct recv_keep_drop *)req;

        if (res < 0)
                log_warning("partial_dir: removing the kept tree %s: %s (the sweep will)", d->pj.key,
                            strerror((int)-res));
        free(d);
}

void recv_keep_gone(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_env *e = recv_xfer_of(b)->env;
        struct recv_keep_drop *d;

        if (!x->tree_part || x->published_tree || !x->keep_pj.key[0])
                return;
        if (x->keep_recorded && !x->keep_off && wire_status_keeps(b->status)) {
                log_info("%s: %s: its staged entries are kept for the job's next attempt (transfer %" PRIu64
                         ", partial_retention %u s)", b->peer, x->dest, recv_named(x)->offer.transfer_id,
                         e->cfg.partial_retention);
                return;
        }
        /* Without a worker (stopping), the record stays for the next
         * attempt or the sweep. */
        if (!e->io || e->freeing)
                return;
        d = calloc(1, sizeof(*d));
        if (!d)
                return;
        d->pj = x->keep_pj;
        d->pj.data_fd = d->pj.punch_fd = -1;
        d->req.done = recv_keep_on_dropped;
        if (io_call(e->io, &d->req, partials_remove, &d->pj) < 0)
                free(d);
}
