/*
 * Keeping and resuming an interrupted receive (rdmaxferd(8), RESUMING).
 *
 * Keeping: while data arrives, every RECV_CKPT_BYTES written the file is
 * fsynced and then, off the loop, the partial's record is stored with each
 * lane's prefix that was written before the fsync began: only durable
 * progress is ever recorded. The first checkpoint links the nameless file
 * into the partial directory, so a failure, a crash or a stop leaves the
 * partial behind; success replaces it with a "published" record.
 *
 * Resuming: an offer whose partial matches (the same peer address and key,
 * destination, size, chunk size and source token; a relay's offer names
 * no peer address) reopens its file; each
 * lane's kept prefix is read back and hashed through io_uring before the
 * ACCEPT says where each lane resumes, so the lanes' digests, and the
 * whole-file check, cover every byte as before. Nothing is published
 * unless that check passes; a partial whose check fails is removed.
 *
 * A user's file (a landing, recv-land.c) is kept the same way but not in
 * the partial directory: it would be theirs in ours, and on another file
 * system than PATH, where it must be linked. Its nameless file, made by
 * the lander as the user, is held open here (e->land_kept) with the
 * record, never named: only that user's next attempt to the same PATH,
 * with the same identity, takes it back (once the lander has proven the
 * user again), and it goes at a restart, after RECV_LAND_KEPT_SEC (or
 * partial_retention if shorter), or for a newer one past
 * RECV_LAND_KEPT_MAX. Its checkpoints need no fsync to be recorded
 * (nothing outlives the process that holds it), but take one anyway:
 * one path for both.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"

static struct io *recv_io(struct recv_xfer *x)
{
        return x->env->io;
}

static bool recv_source_zero(const uint8_t *p)
{
        uint8_t acc = 0;

        for (unsigned int i = 0; i < WIRE_SOURCE_SIZE; i++)
                acc |= p[i];
        return acc == 0;
}

/* Who offered it, what, and where it goes: the record's identity. Taken
 * at the offer: a lane's id is gone once it is reaped, and a checkpoint
 * may be stored after that. */
void recv_partial_identity(struct recv_xfer *x, struct partial_rec *r)
{
        struct rdma_cm_id *id = x->base.lane[0]->conn.id;
        struct wire_binding bd = { 0 };

        memset(r, 0, sizeof(*r));
        /* A chain's file: whichever node relays it next continues what
         * the last one sent (wire.h, Relay chains); the END digests, over
         * the kept bytes too, say whether they are its bytes. */
        if (!(x->cur->offer.flags & WIRE_OFFER_RELAYED)) {
                (void)wire_binding_set(&bd, rdma_get_peer_addr(id), rdma_get_local_addr(id));
                memcpy(r->peer, bd.sender, sizeof(r->peer));
        }
        memcpy(r->key_id, x->env->key_id, sizeof(r->key_id));
        memcpy(r->source, x->cur->offer.source, sizeof(r->source));
        r->transfer_id = x->cur->offer.transfer_id;
        r->size = x->cur->offer.size;
        r->chunk_size = x->cur->offer.chunk_size;
        /* At most PARTIAL_DEST_MAX bytes: a longer path keeps no partial
         * (recv_partial_lookup), and a tree's DEST is an offer's name. */
        memcpy(r->dest, x->cur->offer.name, strnlen(x->cur->offer.name, PARTIAL_DEST_MAX));
}

void recv_job_init(struct recv_xfer *x)
{
        x->pj.dirfd = x->env->partial_fd;
        x->pj.link_from = NULL;
        x->pj.unlink_data = false;
        x->pj.punch_fd = -1;
        x->pj.rec = x->ident;
        partial_key(&x->pj.rec, x->pj.key);
}

/* ---- lookup ---- */

static void recv_partial_off(struct recv_xfer *x, const char *why)
{
        log_notice("%s: %s: not resumed: %s", x->base.peer, x->cur->offer.name, why);
        x->part_on = false;
        x->part_of = NULL;
        recv_file_open(x);
}

static void recv_on_lookup_done(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);
        struct xfer *b = &x->base;
        const char *why = x->pj.why;

        /* Gone: recv_gone() closed what the lookup opened. */
        if (!xfer_io_done(b))
                return;
        if (b->state != XFER_OFFER) {
                safe_close(x->pj.data_fd);
                x->pj.data_fd = -1;
                return;
        }
        if (res == PARTIALS_PUBLISHED && x->pj.rec.transfer_id == x->cur->offer.transfer_id &&
            x->pj.rec.lanes <= x->cur->offer.lanes && x->job_files == 1) {
                /* The same transfer again: its RESULT never reached the sender. */
                x->found = x->pj.rec;
                x->published_match = true;
                recv_plan(x);
                log_info("%s: %s was published by transfer %" PRIu64 " already; checking the "
                         "sender's digests against it", b->peer, x->cur->offer.name, x->cur->offer.transfer_id);
                recv_accept(x);
                return;
        }
        if (res == PARTIALS_HELD) {
                recv_partial_off(x, why);
                return;
        }
        if (res == PARTIALS_RESUME) {
                x->found = x->pj.rec;
                x->cur->fd = x->pj.data_fd;
                x->pj.data_fd = -1;
                x->part_linked = true;
                x->created = x->found.created;
                snprintf(x->cur->proc_path, sizeof(x->cur->proc_path), "/proc/self/fd/%d", x->cur->fd);
        } else if (res < 0 || why) {
                log_notice("%s: %s: not resumed: %s", b->peer, x->cur->offer.name,
                           res < 0 ? strerror((int)-res) : why);
        }
        recv_plan(x);
        if (x->resumed)
                log_info("%s: %s: resuming, %" PRIu64 " of %" PRIu64 " bytes kept from an "
                         "interrupted attempt", b->peer, x->cur->offer.name, x->resumed, x->cur->offer.size);
        recv_file_open(x);
}

struct recv_xfer *recv_other(struct recv_xfer *x, bool (*match)(const struct recv_xfer *x, const struct recv_xfer *o))
{
        struct recv_env *e = x->env;
        struct xfer *lists[] = { e->xe->xfers[XFER_RECV], e->xe->dead };

        for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
                for (struct xfer *b = lists[i]; b; b = b->next) {
                        if (b->dir == XFER_RECV && b != &x->base && match(x, recv_xfer_of(b)))
                                return recv_xfer_of(b);
                }
        }
        return NULL;
}

/* Another transfer here with the partial of @x's identity: the same file
 * relayed by another node (a relay's offer names no peer), or a retry
 * that overtook the failure of the attempt before it. */
static bool recv_partial_same(const struct recv_xfer *x, const struct recv_xfer *o)
{
        char key[PARTIAL_KEY_HEX], other[PARTIAL_KEY_HEX];

        if (!o->part_of)
                return false;
        partial_key(&x->ident, key);
        partial_key(&o->ident, other);
        return strcmp(key, other) == 0;
}

void recv_partial_lookup(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_xfer *holder;
        int r;

        if (x->tree && x->cur->offer.file == 0) {
                recv_keep_lookup(x);
                return;
        }
        /* A file whose offer names its source (a single file, or a large
         * one in a session: rdmaxferd(8), Resuming); a user's file only
         * alone (recv_land_keeps). */
        x->part_on = (x->landing ? recv_land_keeps(x) : partials_on(recv_xfer_of(b)->env, x->cur->offer.size)) &&
                     !recv_source_zero(x->cur->offer.source) && strlen(x->cur->offer.name) <= PARTIAL_DEST_MAX;
        x->part_of = x->part_on ? x->cur : NULL;
        if (!x->part_on) {
                recv_file_open(x);
                return;
        }
        recv_partial_identity(x, &x->ident);
        /* A transfer that ended here is let finish with the partial: its
         * last checkpoint is what a relay going around it continues from
         * (recv_partial_released). A relayed file's partial is not had by
         * two transfers still receiving, from two nodes. */
        holder = recv_other(x, recv_partial_same);
        if (holder && holder->base.state != XFER_CLOSING && (x->cur->offer.flags & WIRE_OFFER_RELAYED)) {
                recv_partial_off(x, "another transfer here is receiving it");
                return;
        }
        if (holder && holder->base.state == XFER_CLOSING) {
                /* Once: well inside the sender's wait for our ACCEPT,
                 * however many such transfers come and go meanwhile. */
                if (!x->part_waiting) {
                        log_info("%s: %s: waiting for the transfer that ended before it here to "
                                 "store its progress", b->peer, x->cur->offer.name);
                        xfer_arm_timer(b, (int)MAX(1u, xfer_peer_timeout(b) / 2));
                }
                x->part_waiting = true;
                return;
        }
        x->part_waiting = false;
        /* A user's: taken once the lander has proven the user (recv-land.c). */
        if (x->landing) {
                recv_file_open(x);
                return;
        }
        recv_job_init(x);
        memcpy(x->pj.offer.peer, x->pj.rec.peer, sizeof(x->pj.offer.peer));
        memcpy(x->pj.offer.key_id, x->pj.rec.key_id, sizeof(x->pj.offer.key_id));
        memcpy(x->pj.offer.source, x->cur->offer.source, sizeof(x->pj.offer.source));
        x->pj.offer.size = x->cur->offer.size;
        x->pj.offer.chunk_size = x->cur->offer.chunk_size;
        x->pj.offer.dest = x->cur->offer.name;
        x->pj.data_fd = -1;
        x->cur->req.done = recv_on_lookup_done;
        r = io_call(recv_io(x), &x->cur->req, partials_lookup, &x->pj);
        if (r < 0) {
                /* Not resuming is no reason to refuse. */
                log_warning("%s: looking for a partial: %s", b->peer, strerror(-r));
                x->part_on = false;
                recv_file_open(x);
                return;
        }
        xfer_io_start(b, "looking for a partial");
}

/* ---- hashing what is kept ---- */

/* Lane @k's kept part is in its digest: it may receive now. */
static void recv_lane_takes_pre(struct recv_xfer *x, struct recv_lane *l)
{
        unsigned int k = l->base.idx;

        if (x->rh_busy[k] || !x->pre[k].state)
                return;
        digest_deinit(&l->base.digest);
        l->base.digest = x->pre[k];
        x->pre[k] = DIGEST_NULL;
}

static void recv_on_rehashed(struct rehash *h, int r)
{
        struct recv_xfer *x = recv_xfer_of(h->x);
        struct recv_lane *l;
        char text[WIRE_TEXT_MAX + 1];

        if (x->base.state != XFER_DATA && !(x->prehashing && x->base.state == XFER_OFFER))
                return;
        if (r < 0) {
                /* The next attempt sends everything. */
                snprintf(text, sizeof(text), "reading back the kept part of lane %u: %s", h->idx,
                         strerror(-r));
                recv_partial_drop(x);
                recv_fail(x, WIRE_E_IO, text);
                return;
        }
        x->rh_busy[h->idx] = false;
        if (x->prehashing) {
                for (unsigned int k = 0; k < x->base.nlanes; k++)
                        if (x->rh_busy[k])
                                return;
                x->prehashing = false;
                x->prehashed = true;
                if (x->sync_tick)
                        evtimer_del(x->sync_tick);
                recv_accept(x);
                return;
        }
        l = recv_lane(x, h->idx);
        if (l) {
                recv_lane_takes_pre(x, l);
                recv_credits_flush(l);
        }
}

void recv_partial_rehash(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        uint64_t first, end;
        int r;

        for (unsigned int k = 0; k < b->nlanes && (b->state == XFER_DATA || x->prehashing); k++) {
                if (!x->rh_busy[k])
                        continue;
                wire_lane_range(b->nchunks, b->chunk, b->nlanes, k, &first, &end);
                r = digest_init(&x->pre[k]);
                if (r == 0)
                        r = digest_start(&x->pre[k], MIN(first * b->chunk, b->size),
                                         wire_run_bytes(b->size, b->chunk, first, end));
                x->rh[k].idx = k;
                if (r == 0)
                        r = rehash_start(&x->rh[k], b, &x->pre[k], x->cur->fd, first * x->cur->offer.chunk_size,
                                         MIN((first + x->resume[k]) * x->cur->offer.chunk_size, x->cur->offer.size),
                                         recv_on_rehashed);
                if (r < 0) {
                        recv_fail(x, WIRE_E_INTERNAL, "reading back the kept part: cannot start");
                        return;
                }
        }
}

void recv_partial_lane(struct recv_xfer *x, struct recv_lane *l)
{
        l->next_seq = l->base.first_seq + x->resume[l->base.idx];
        recv_lane_takes_pre(x, l);
}

/* ---- checkpoints ---- */

/* Chunks of lane @k's run written so far: up to the first still being
 * written (writes complete in any order). */
static uint64_t recv_lane_written(struct recv_xfer *x, unsigned int k)
{
        struct recv_lane *l = recv_lane(x, k);
        uint64_t w;

        if (!l)
                return x->resume[k];
        w = l->next_seq;
        for (uint32_t i = 0; i < l->base.hold.cap; i++)
                if (l->rs[i].writing && l->rs[i].seq < w)
                        w = l->rs[i].seq;
        return w - l->base.first_seq;
}

static void recv_ckpt_done(struct recv_xfer *x)
{
        x->ckpt_busy = false;
        if (x->drop_pending) {
                x->drop_pending = false;
                recv_partial_drop(x);
        }
        if (x->finish_waiting) {
                x->finish_waiting = false;
                recv_finish(x);
        }
}

static void recv_ckpt_failed(struct recv_xfer *x, const char *what, int64_t res)
{
        log_warning("%s: %s: %s: %s; this transfer will not resume", x->base.peer, x->part_of->offer.name,
                    what, strerror((int)-res));
        x->part_on = false;
        recv_ckpt_done(x);
}

static void recv_on_ckpt_stored(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, part_req);

        if (!xfer_io_done(&x->base))
                return;
        if (res < 0) {
                recv_ckpt_failed(x, "storing its progress", res);
                return;
        }
        if (!x->part_linked) {
                x->part_linked = true;
                /* One more partial: the cap may want an old one gone. */
                partials_sweep(x->env);
        }
        log_debug("%s: %s: %" PRIu64 " bytes durable", x->base.peer, x->part_of->offer.name,
                  partial_kept_bytes(&x->pj.rec));
        recv_ckpt_done(x);
}

static void recv_on_ckpt_synced(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, part_req);
        struct xfer *b = &x->base;
        int r = 0;

        /* What was written before the fsync began is on disk now. Stored even
         * when the transfer failed meanwhile, and even once it has ended (a
         * last checkpoint): the store is queued before this request counts
         * as done, so the transfer's memory stays until it is back. */
        if (res >= 0) {
                recv_job_init(x);
                x->pj.rec.lanes = b->nlanes;
                x->pj.rec.created = x->created;
                x->pj.rec.updated = clock_usec(CLOCK_REALTIME) / 1000000u;
                memcpy(x->pj.rec.kept, x->kept, sizeof(x->kept));
                /* Progress clears the count; one more attempt without a byte adds to it. */
                x->pj.rec.idle_resumes = x->ckpt_idle ? x->found.idle_resumes + 1 : 0;
                x->pj.link_from = x->part_linked ? NULL : x->part_of->proc_path;
                /* Nothing more will be written: the rest of the reservation goes back. */
                x->pj.punch_fd = x->ckpt_last ? x->part_of->fd : -1;
                x->part_req.done = recv_on_ckpt_stored;
                if (x->landing)
                        r = recv_land_kept_store(x);
                else if ((r = io_call(recv_io(x), &x->part_req, partials_store, &x->pj)) == 0)
                        xfer_io_start(b, "storing a checkpoint");
        }
        if (!xfer_io_done(b))
                return;
        if (res < 0)
                recv_ckpt_failed(x, "fsync of its progress", res);
        else if (r < 0)
                recv_ckpt_failed(x, "storing its progress", r);
        else if (x->landing)
                recv_ckpt_done(x);
}

static void recv_ckpt_start(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        int r;

        memset(x->kept, 0, sizeof(x->kept));
        for (unsigned int k = 0; k < b->nlanes; k++)
                x->kept[k] = recv_lane_written(x, k);
        if (!x->created)
                x->created = clock_usec(CLOCK_REALTIME) / 1000000u;
        x->ckpt_bytes = x->bytes_written;
        x->part_req.done = recv_on_ckpt_synced;
        r = io_fsync(recv_io(x), &x->part_req, x->part_of->fd);
        if (r < 0)
                return;         /* the ring is full: the next write tries again */
        x->ckpt_busy = true;
        xfer_io_start(b, "syncing a checkpoint");
}

void recv_partial_checkpoint(struct recv_xfer *x)
{
        if (x->part_on && !x->ckpt_busy && x->base.state == XFER_DATA &&
            x->bytes_written - x->ckpt_bytes >= RECV_CKPT_BYTES)
                recv_ckpt_start(x);
}

void recv_partial_final(struct recv_xfer *x)
{
        /* What was written since the last checkpoint is kept too: the
         * transfer is failing, not the disk. */
        if (!x->part_on || x->ckpt_busy || x->base.state != XFER_DATA || x->part_of->fd < 0)
                return;
        if (x->bytes_written > x->ckpt_bytes) {
                x->ckpt_last = true;
                recv_ckpt_start(x);
        } else if (x->resumed > 0 && x->bytes_written == x->resumed) {
                /* Resumed, and it ends without a byte more: counted in
                 * the record (partial.h, PARTIAL_IDLE_MAX). */
                x->ckpt_last = x->ckpt_idle = true;
                recv_ckpt_start(x);
        }
}

/* ---- the end ---- */

static void recv_on_published_stored(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!xfer_io_done(&x->base) || x->base.state == XFER_CLOSING || !x->fin)
                return;
        if (res < 0)
                log_warning("%s: %s: recording that it was published: %s", x->base.peer,
                            x->fin->offer.name, strerror((int)-res));
        recv_published(x);
}

/* The file being published had a partial (fin is part_of): its partial
 * goes, then @then. */
static void recv_partial_remove(struct recv_xfer *x, void (*then)(struct recv_xfer *x));

void recv_partial_published(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_file *f = x->fin;
        int r;

        if (!x->part_on || x->part_of != f) {
                recv_published(x);
                return;
        }
        /* A user's: what was kept of it goes; no record of its publication
         * (a retry whose RESULT was lost finds the file there). */
        if (x->landing) {
                recv_land_kept_drop(x);
                recv_published(x);
                return;
        }
        /* A retry is checked against a published record only in a job of
         * one file (the lanes have moved on to the next one here). */
        if (x->job_files > 1) {
                recv_partial_remove(x, recv_published);
                return;
        }
        /* No data, each lane's verified digest: what a retry is checked against. */
        recv_job_init(x);
        x->pj.rec.flags = PARTIAL_PUBLISHED;
        x->pj.rec.lanes = b->nlanes;
        x->pj.rec.created = x->created ?: clock_usec(CLOCK_REALTIME) / 1000000u;
        x->pj.rec.updated = clock_usec(CLOCK_REALTIME) / 1000000u;
        for (unsigned int k = 0; k < b->nlanes; k++) {
                uint64_t first, end;

                wire_lane_range(b->nchunks, b->chunk, b->nlanes, k, &first, &end);
                x->pj.rec.kept[k] = end - first;
                memcpy(x->pj.rec.digest[k], recv_lane(x, k)->end.digest, WIRE_DIGEST_SIZE);
        }
        memcpy(x->pj.rec.file_digest, f->digest, WIRE_DIGEST_SIZE);
        x->pj.unlink_data = x->part_linked;
        f->req.done = recv_on_published_stored;
        r = io_call(recv_io(x), &f->req, partials_store, &x->pj);
        if (r < 0) {
                recv_published(x);
                return;
        }
        xfer_io_start(b, "recording the publication");
}

static void recv_on_dropped(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = container_of(req, struct recv_xfer, part_req);

        (void)xfer_io_done(&x->base);
}

void recv_partial_drop(struct recv_xfer *x)
{
        if (!x->part_on)
                return;
        if (x->ckpt_busy) {
                x->drop_pending = true;
                return;
        }
        x->part_on = false;
        if (x->landing)
                recv_land_kept_drop(x);
        if (!x->part_linked || x->landing)
                return;
        recv_job_init(x);
        x->part_req.done = recv_on_dropped;
        if (io_call(recv_io(x), &x->part_req, partials_remove, &x->pj) == 0)
                xfer_io_start(&x->base, "removing a partial");
        log_notice("%s: %s: its partial is removed; the next attempt sends everything",
                   x->base.peer, x->part_of->offer.name);
}

bool recv_partial_prehash(struct recv_xfer *x)
{
        bool any = false;

        if (x->cur->offer.file == 0 || x->prehashed || x->published_match)
                return false;
        for (unsigned int k = 0; k < x->base.nlanes; k++) {
                x->rh_busy[k] = x->resume[k] > 0;
                any |= x->rh_busy[k];
        }
        if (!any)
                return false;
        x->prehashing = true;
        recv_tick_start(x);
        recv_partial_rehash(x);
        return true;
}

void recv_partial_reset(struct recv_xfer *x)
{
        memset(&x->found, 0, sizeof(x->found));
        memset(x->resume, 0, sizeof(x->resume));
        memset(x->kept, 0, sizeof(x->kept));
        memset(x->rh_busy, 0, sizeof(x->rh_busy));
        x->resumed = 0;
        x->part_on = x->part_linked = x->published_match = false;
        x->part_of = NULL;
        x->drop_pending = x->ckpt_last = false;
        x->prehashing = x->prehashed = false;
        x->part_waiting = false;
        x->created = x->ckpt_bytes = 0;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                digest_deinit(&x->pre[k]);
                rehash_deinit(&x->rh[k]);
        }
}

static void recv_on_partial_removed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!xfer_io_done(&x->base) || x->base.state == XFER_CLOSING || !x->fin)
                return;
        if (res < 0)
                log_warning("%s: %s: removing its partial: %s (the sweep will)", x->base.peer,
                            x->fin->offer.name, strerror((int)-res));
        x->part_then(x);
}

static void recv_partial_remove(struct recv_xfer *x, void (*then)(struct recv_xfer *x))
{
        struct recv_file *f = x->fin;
        int r;

        x->part_on = false;
        if (!x->part_linked) {
                then(x);
                return;
        }
        x->part_linked = false;
        recv_job_init(x);
        x->part_then = then;
        f->req.done = recv_on_partial_removed;
        r = io_call(recv_io(x), &f->req, partials_remove, &x->pj);
        if (r < 0) {
                then(x);
                return;
        }
        xfer_io_start(&x->base, "removing a partial");
}

void recv_partial_staged(struct recv_xfer *x)
{
        if (!x->part_of || x->part_of != x->fin) {
                recv_tree_entry_done(x);
                return;
        }
        recv_partial_remove(x, recv_tree_entry_done);
}

/* From the loop, not from inside the gone transfer's callback. */
static void recv_on_released(evutil_socket_t fd, short what, void *arg)
{
        struct recv_env *e = arg;
        struct xfer *b, *next;

        for (b = e->xe->xfers[XFER_RECV]; b; b = next) {
                struct recv_xfer *x = recv_xfer_of(b);

                /* The lookup may fail it: the list may change behind it. */
                next = b->next;
                if (x->part_waiting && b->state == XFER_OFFER)
                        recv_partial_lookup(x);
        }
}

void recv_partial_released(struct recv_xfer *x)
{
        struct recv_env *e = x->env;

        /* A file's partial, or a kept tree (recv_keep_lookup). */
        if ((!x->part_of && !x->tree_part) || e->freeing)
                return;
        for (struct xfer *b = e->xe->xfers[XFER_RECV]; b; b = b->next)
                if (recv_xfer_of(b)->part_waiting) {
                        (void)event_base_once(e->base, -1, EV_TIMEOUT, recv_on_released, e,
                                              &(const struct timeval){ 0 });
                        return;
                }
}

void recv_partial_wait_over(struct recv_xfer *x)
{
        x->part_waiting = false;
        if (x->tree && x->cur->offer.file == 0) {
                log_notice("%s: %s: not kept: the transfer before it here still holds the kept tree",
                           x->base.peer, x->dest);
                x->tree_part = false;
                x->keep_pj.key[0] = '\0';
                recv_file_open(x);
                return;
        }
        recv_partial_off(x, "the transfer before it here still holds its partial");
}

void recv_partial_free(struct recv_xfer *x)
{
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                digest_deinit(&x->pre[k]);
                rehash_deinit(&x->rh[k]);
        }
}

/* ---- a user's file ---- */

bool recv_land_keeps(const struct recv_xfer *x)
{
        /* One file pushed to this node alone: a relay's has no sender in
         * its identity, and a session's files move on over the lanes. */
        return x->landing && !x->tree && x->job_files == 1 && x->landing->direction == WIRE_LAND_PUSH &&
               !(x->cur->offer.flags & (WIRE_OFFER_RELAYED | WIRE_OFFER_ROUTE));
}

static void recv_land_kept_clear(struct recv_land_kept *k)
{
        safe_close(k->fd);
        free(k->path);
        *k = (struct recv_land_kept){ .fd = -1 };
}

static void recv_on_land_kept_timer(evutil_socket_t fd, short what, void *arg);

/* Let go of what is past its time; the timer again for the next. */
static void recv_land_kept_expire(struct recv_env *e)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC), next = 0;

        for (unsigned int i = 0; i < RECV_LAND_KEPT_MAX; i++) {
                struct recv_land_kept *k = &e->land_kept[i];

                if (!k->key[0])
                        continue;
                if (k->expires <= now) {
                        log_info("a partial of uid %u's file in %s is let go (kept %u s)", k->uid, k->path,
                                 MIN(RECV_LAND_KEPT_SEC, e->cfg.partial_retention));
                        recv_land_kept_clear(k);
                        continue;
                }
                if (!next || k->expires < next)
                        next = k->expires;
        }
        if (!next) {
                if (e->land_kept_timer)
                        evtimer_del(e->land_kept_timer);
                return;
        }
        if (!e->land_kept_timer)
                e->land_kept_timer = evtimer_new(e->base, recv_on_land_kept_timer, e);
        if (e->land_kept_timer)
                evtimer_add(e->land_kept_timer, &(struct timeval){ .tv_sec = (time_t)((next - now) / 1000000u) + 1 });
}

static void recv_on_land_kept_timer(evutil_socket_t fd, short what, void *arg)
{
        recv_land_kept_expire(arg);
}

/* @x's entry: its identity's key, its user, its PATH; NULL if none. */
static struct recv_land_kept *recv_land_kept_find(struct recv_xfer *x)
{
        char key[PARTIAL_KEY_HEX];

        partial_key(&x->ident, key);
        for (unsigned int i = 0; i < RECV_LAND_KEPT_MAX; i++) {
                struct recv_land_kept *k = &x->env->land_kept[i];

                if (k->key[0] && strcmp(k->key, key) == 0 && k->uid == x->land_uid &&
                    strcmp(k->path, x->landing->path) == 0)
                        return k;
        }
        return NULL;
}

int recv_land_kept_store(struct recv_xfer *x)
{
        struct recv_env *e = x->env;
        struct recv_land_kept *k = recv_land_kept_find(x), *old = NULL;
        char *path;
        int fd;

        if (!k) {
                for (unsigned int i = 0; i < RECV_LAND_KEPT_MAX && !k; i++)
                        if (!e->land_kept[i].key[0])
                                k = &e->land_kept[i];
                        else if (!old || e->land_kept[i].expires < old->expires)
                                old = &e->land_kept[i];
                if (!k) {
                        log_info("a partial of uid %u's file in %s is let go for a newer one (%u are kept at most)",
                                 old->uid, old->path, RECV_LAND_KEPT_MAX);
                        recv_land_kept_clear(old);
                        k = old;
                }
                path = strdup(x->landing->path);
                fd = fcntl(x->part_of->fd, F_DUPFD_CLOEXEC, 3);
                if (!path || fd < 0) {
                        free(path);
                        safe_close(fd);
                        return path ? -errno : -ENOMEM;
                }
                *k = (struct recv_land_kept){ .uid = x->land_uid, .parent = x->land_parent, .path = path, .fd = fd };
                partial_key(&x->ident, k->key);
        }
        k->rec = x->pj.rec;
        k->expires = clock_usec(CLOCK_MONOTONIC) +
                     (uint64_t)MIN(RECV_LAND_KEPT_SEC, e->cfg.partial_retention) * 1000000u;
        x->part_linked = true;
        log_debug("%s: %s: %" PRIu64 " bytes kept for uid %u", x->base.peer, x->part_of->offer.name,
                  partial_kept_bytes(&k->rec), k->uid);
        recv_land_kept_expire(e);
        return 0;
}

int recv_land_kept_take(struct recv_xfer *x)
{
        struct partial_offer o = { .dest = x->cur->offer.name, .size = x->cur->offer.size,
                                   .chunk_size = x->cur->offer.chunk_size };
        struct recv_land_kept *k;
        enum partial_match m;
        int fd;

        recv_land_kept_expire(x->env);
        if (!x->part_on || x->part_of != x->cur || !(k = recv_land_kept_find(x)))
                return -1;
        /* The same file from the same sender (its source token), as a
         * partial in partial_dir is matched; another goes. */
        memcpy(o.peer, x->ident.peer, sizeof(o.peer));
        memcpy(o.key_id, x->ident.key_id, sizeof(o.key_id));
        memcpy(o.source, x->cur->offer.source, sizeof(o.source));
        m = partial_match(&k->rec, &o);
        if (m != PARTIAL_MATCH) {
                log_notice("%s: %s: not resumed: %s", x->base.peer, x->cur->offer.name, partial_match_str(m));
                recv_land_kept_clear(k);
                return -1;
        }
        /* Landed as PATH itself then, into PATH now (or the other way): PATH
         * changed in between; the file goes as new. */
        if (k->parent != x->land_parent) {
                log_notice("%s: %s: not resumed: %s is no longer what it was", x->base.peer, x->cur->offer.name,
                           x->landing->path);
                recv_land_kept_clear(k);
                return -1;
        }
        x->found = k->rec;
        x->created = k->rec.created;
        x->part_linked = true;
        fd = k->fd;
        k->fd = -1;
        recv_land_kept_clear(k);
        log_info("%s: %s: resuming, %" PRIu64 " of %" PRIu64 " bytes kept from an interrupted attempt (uid %u)",
                 x->base.peer, x->cur->offer.name, partial_kept_bytes(&x->found), x->cur->offer.size, x->land_uid);
        return fd;
}

void recv_land_kept_drop(struct recv_xfer *x)
{
        struct recv_land_kept *k = x->part_linked ? recv_land_kept_find(x) : NULL;

        if (k)
                recv_land_kept_clear(k);
        x->part_linked = false;
}

void recv_land_kept_free_all(struct recv_env *e)
{
        for (unsigned int i = 0; i < RECV_LAND_KEPT_MAX; i++)
                if (e->land_kept[i].key[0])
                        recv_land_kept_clear(&e->land_kept[i]);
        if (e->land_kept_timer)
                event_free(e->land_kept_timer);
        e->land_kept_timer = NULL;
}
