/*
 * The session's next offer: one entry, or in a tree a pack of small ones
 * (common/pack.h, wire.h "Packs"). Small entries, directories and files
 * of at most PACK_FILE_MAX bytes, are taken from the owner while it has
 * them ready, up to PACK_ENTRIES_MAX and PACK_BYTES_MAX; a worker then
 * reads each file whole into the pack, in memory, which goes through the
 * data path as that offer's file (the lanes copy their chunks from it:
 * no file, no disk request). So a 4 KiB file costs neither an offer's
 * round trip nor a disk request on the loop of its own.
 *
 * Every descriptor taken from the owner is ours: the worker closes the
 * pack's once read, send_pack_free() whatever is still held.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "log.h"
#include "name.h"
#include "send-int.h"

static void send_entry_close(struct send_entry *e)
{
        safe_close(e->fd);
        e->fd = -1;
        free(e->lname);
        e->lname = NULL;
        free(e->xattrs);
        e->xattrs = NULL;
        e->xattrs_len = 0;
}

static const char *send_entry_name(const struct send_entry *e)
{
        return e->lname ?: e->name;
}

void send_pack_release(struct engine_send *s)
{
        struct send_pack *p = &s->pack;

        for (uint32_t i = 0; p->e && i < p->n; i++)
                send_entry_close(&p->e[i]);
        p->n = 0;
        p->bytes = p->data = 0;
}

void send_pack_free(struct engine_send *s)
{
        struct send_pack *p = &s->pack;

        send_pack_release(s);
        free(p->e);
        p->e = NULL;
        /* Called once no worker has it (send_gone). */
        free(p->mem);
        p->mem = NULL;
        p->built = false;
        free(s->pack_mem);
        s->pack_mem = NULL;
        free(s->sizes);
        s->sizes = NULL;
        if (p->have_held)
                send_entry_close(&p->held);
        p->have_held = false;
}

void send_span_done(struct engine_send *s, const struct send_span *sp)
{
        struct xfer *b = &s->base;

        if (!s->ops->file_done)
                return;
        /* One entry; or DEST of a tree the receiver kept, whose span is
         * every entry it holds (the last of them settles them all). */
        if (!(sp->flags & WIRE_OFFER_PACK)) {
                s->ops->file_done(s->owner, sp->file + sp->span - 1, sp->skipping ? 0 : sp->span_bytes);
                return;
        }
        /* The owner may cancel from its callback: then no more. */
        for (uint32_t i = 0; i < sp->span && (b->state != XFER_CLOSING || b->outcome == ENGINE_DONE); i++)
                s->ops->file_done(s->owner, sp->file + i, sp->sizes[i]);
}

/* Bytes of the file being sent posted and not acknowledged yet. */
static uint64_t send_unacked(const struct engine_send *s)
{
        const struct xfer *b = &s->base;
        uint64_t n = 0;

        if (s->skipping)
                return 0;
        for (unsigned int k = 0; k < b->nlanes; k++) {
                const struct send_lane *l = b->lane[k] ? send_lane_of(b->lane[k]) : NULL;

                if (l && l->next_done < l->base.end_seq)
                        n += wire_run_bytes(s->size, s->chunk, l->next_done, l->base.end_seq);
        }
        return n;
}

/* The offer sent becomes s->prev: what its RESULT settles. 0 or -ENOMEM. */
static int send_span_keep(struct engine_send *s)
{
        struct send_span *sp = &s->prev;

        if ((s->offer.flags & WIRE_OFFER_PACK) && !sp->sizes) {
                sp->sizes = calloc(PACK_ENTRIES_MAX, sizeof(*sp->sizes));
                if (!sp->sizes)
                        return -ENOMEM;
        }
        sp->file = s->file;
        sp->span = s->span;
        sp->flags = s->offer.flags;
        sp->skipping = s->skipping;
        sp->span_bytes = s->span_bytes;
        if (s->dry)
                snprintf(sp->name, sizeof(sp->name), "%s", s->name);
        if (sp->flags & WIRE_OFFER_PACK)
                memcpy(sp->sizes, s->sizes, s->span * sizeof(*sp->sizes));
        sp->on = true;
        s->kept = true;
        /* A skipped file moved nothing; a pack's headers are not the job's
         * bytes. What is not acknowledged yet is added as it is. */
        s->bytes_before += s->skipping ? 0 : s->span_bytes;
        s->base.bytes = s->bytes_before - MIN(s->bytes_before, send_unacked(s));
        return 0;
}

void send_sent(struct engine_send *s)
{
        struct xfer *b = &s->base;

        /* Every END posted; the acknowledgements may still come (the next
         * offer's lanes start once they are in: send_on_accept). */
        if ((b->state != XFER_DATA && b->state != XFER_FINISHING) || b->nended < b->nlanes)
                return;
        if (!s->kept) {
                /* Two in flight at most: the one before awaits its RESULT. */
                if (s->prev.on)
                        return;
                if (send_span_keep(s) < 0) {
                        send_fail(s, WIRE_E_INTERNAL, "file %u: out of memory", s->file + 1);
                        return;
                }
        }
        /* The last: its RESULT, on every lane, ends the session. Outside a
         * tree the owner keeps the file sent for a retry until it is
         * published (jobs.c): the next one is asked for after its RESULT.
         * After an index pack, its NEED or RESULT says what comes next. */
        if (s->file + s->span >= s->files || (!s->tree && s->prev.on) || s->indexing)
                return;
        send_take_next(s);
}

/*
 * Entry @idx: the one held back, or the owner's next, checked and copied.
 * 0; ENGINE_NEXT_LATER; or -1 when the transfer failed (or the owner
 * cancelled from its callback).
 */
static int send_entry_take(struct engine_send *s, uint32_t idx, struct send_entry *out)
{
        struct engine_send_file f = { .fd = -1 };
        struct xfer *b = &s->base;
        const char *why = NULL;
        unsigned int status = WIRE_E_IO;
        int r;

        if (s->pack.have_held) {
                *out = s->pack.held;
                s->pack.held.fd = -1;
                s->pack.held.lname = NULL;
                s->pack.held.xattrs = NULL;
                s->pack.have_held = false;
                return 0;
        }
        r = s->ops->next(s->owner, idx, &f);
        /* The owner may have cancelled from its callback. */
        if (b->state == XFER_CLOSING) {
                if (r == 0)
                        safe_close(f.fd);
                return -1;
        }
        if (r == ENGINE_NEXT_LATER)
                return r;
        if (r < 0) {
                send_fail_permanent(s, WIRE_E_IO, "file %u: %s", idx + 1, strerror(-r));
                return -1;
        }
        /* Ours now, whatever happens. */
        *out = (struct send_entry){ .fd = f.fd, .dir = f.dir, .link = f.link, .hard = f.link && f.hard,
                                    .size = f.size,
                                    .mode = s->tree || s->land ? f.mode & 07777 : 0,
                                    .mtime_ns = s->tree ? f.mtime_ns : 0 };
        if (f.dir ? !s->tree || f.size != 0 || f.link :
                    f.fd < 0 || (f.link && (!s->tree || f.size == 0 ||
                                            f.size > (f.hard ? WIRE_PATH_MAX : NAME_LINK_MAX)))) {
                why = f.dir || f.link ? "a directory or symlink outside a tree" : "no descriptor";
        } else if (!f.name || !f.name[0] || strlen(f.name) > (s->tree ? WIRE_PATH_MAX : WIRE_NAME_MAX) ||
                   (idx == 0 && strlen(f.name) > WIRE_NAME_MAX)) {
                why = "no name to send it under";
                status = WIRE_E_NAME;
        } else if (f.size > s->job_bytes - MIN(s->job_bytes, s->bytes_before + s->pack.data +
                                                   (s->kept || s->skipping ? 0 : s->span_bytes))) {
                why = "more bytes than the job announced";
                status = WIRE_E_SIZE;
        } else if (f.size / s->chunk + (f.size % s->chunk != 0) > UINT32_MAX) {
                why = "needs more than 2^32 chunks";
                status = WIRE_E_TOO_LARGE;
        } else if (f.xattrs_len && (!s->land_xattrs || f.link || f.xattrs_len > WIRE_XATTRS_MAX)) {
                why = "attributes where the landing carries none";
                status = WIRE_E_INTERNAL;
        }
        if (why) {
                send_entry_close(out);
                send_fail_permanent(s, status, "file %u: %s", idx + 1, why);
                return -1;
        }
        if (strlen(f.name) > PACK_NAME_MAX) {
                out->lname = strdup(f.name);
                if (!out->lname) {
                        send_entry_close(out);
                        send_fail(s, WIRE_E_INTERNAL, "file %u: out of memory", idx + 1);
                        return -1;
                }
        } else {
                memcpy(out->name, f.name, strlen(f.name) + 1);
        }
        if (f.xattrs_len) {
                out->xattrs = malloc(f.xattrs_len);
                if (!out->xattrs) {
                        send_entry_close(out);
                        send_fail(s, WIRE_E_INTERNAL, "file %u: out of memory", idx + 1);
                        return -1;
                }
                memcpy(out->xattrs, f.xattrs, f.xattrs_len);
                out->xattrs_len = f.xattrs_len;
        }
        return 0;
}

static void send_offer_post_next(struct engine_send *s);

static void send_offer_source(struct engine_send *s);
static void send_offer_digest(struct engine_send *s, bool pack);

void send_offer_next(struct engine_send *s, bool pack)
{
        struct xfer *b = &s->base;

        /* The lanes keep the file before's runs until its every chunk is
         * acknowledged and this one is accepted (send_on_accept). */
        b->size = s->size;
        b->nchunks = DIV_ROUND_UP(s->size, s->chunk);
        s->skipping = false;
        s->kept = false;
        s->sparse_mapped = false;
        /* Token and nonce stay zero: the lanes are up, the session key is;
         * the source too, but for a file large enough to resume (below). */
        s->offer = (struct wire_offer){
                .transfer_id = s->id,
                .size = s->size,
                .flags = (uint16_t)((s->tree ? WIRE_OFFER_TREE : 0) | (s->dir ? WIRE_OFFER_DIR : 0) |
                                    (s->link ? WIRE_OFFER_LINK : 0) | (s->hard ? WIRE_OFFER_HARD : 0) |
                                    send_sync_flags(s, !pack && send_sync_wants_digest(s))),
                .chunk_size = s->chunk,
                .lanes = (uint16_t)b->nlanes,
                .file = s->file,
                .job_files = s->files,
                .job_bytes = s->job_bytes,
                .mode = s->mode,
                .mtime_ns = s->mtime_ns,
        };
        if (pack) {
                s->offer.flags |= WIRE_OFFER_PACK;
                s->offer.pack_entries = s->pack.records;
                memcpy(s->offer.pack_hash, s->pack.hash, PACK_HASH_SIZE);
        }
        snprintf(s->offer.name, sizeof(s->offer.name), "%s", s->name);
        /* Its attributes go in XATTR parts before it, its MAC covering them. */
        if (!pack && s->xattrs_len) {
                s->offer.xattrs_len = s->xattrs_len;
                crypto_hash_sha256(s->offer.xattrs_hash, s->xattrs, s->xattrs_len);
        }
        /* A longer path goes in NAME parts before the offer (send_post_offer). */
        if (strlen(s->name) > WIRE_NAME_MAX)
                s->offer.flags |= WIRE_OFFER_LONG_NAME;
        /* OFFER now: no lane posts an END for the new file while its
         * digest is computed (send_pump runs in DATA and FINISHING only). */
        xfer_set_state(b, XFER_OFFER);
        if (!pack && (send_source_wanted(s) || (!s->dir && !s->link && s->size > WIRE_BLOCK_SIZE))) {
                send_offer_source(s);
                return;
        }
        send_offer_digest(s, pack);
}

/* A sparse file's holes are mapped (or not: it is sent whole). */
static void send_on_next_mapped(struct io_req *req, int64_t res)
{
        struct engine_send *s = container_of(req, struct engine_send, src_req);

        if (!xfer_io_done(&s->base) || s->base.state != XFER_OFFER)
                return;
        send_sparse_mapped(s, res);
        send_sparse_offer(s, &s->offer);
        send_offer_digest(s, false);
}

/* The source token is in (or could not be had: the file is sent whole). */
static void send_on_next_source(struct io_req *req, int64_t res)
{
        struct engine_send *s = container_of(req, struct engine_send, src_req);

        if (!xfer_io_done(&s->base) || s->base.state != XFER_OFFER)
                return;
        if (res == 0 && send_source_wanted(s))
                send_source_token(&s->stx, s->size, s->offer.source);
        if (res == 0 && send_sparse_wanted(s) && send_sparse_start(s, send_on_next_mapped) == 0)
                return;
        if (res < 0)
                log_debug("transfer %" PRIu64 ": file %u: statx: %s; it cannot resume", s->id, s->file + 1,
                          strerror((int)-res));
        send_offer_digest(s, false);
}

/* A large file's source token, off the loop, before its offer (wire.h:
 * a receiver that kept a part of it from an earlier attempt resumes it). */
static void send_offer_source(struct engine_send *s)
{
        static const char empty[] = "";

        s->src_req.done = send_on_next_source;
        if (io_statx(s->env->xe->io, &s->src_req, s->fd, empty, AT_EMPTY_PATH, &s->stx) < 0) {
                send_offer_digest(s, false);
                return;
        }
        xfer_io_start(&s->base, "looking at the file");
}

static void send_offer_digest(struct engine_send *s, bool pack)
{
        int r;

        /* Sync by digest: the file's, off the loop, before the offer goes. */
        r = pack ? 1 : send_sync_digest(s, send_offer_post_next);
        if (r < 0) {
                send_fail_permanent(s, WIRE_E_IO, "file %u: its digest: %s", s->file + 1, strerror(-r));
                return;
        }
        if (r == 1)
                send_offer_post_next(s);
}

static void send_pack_prebuild(struct engine_send *s);

/* The next offer, complete (its digest too): post it; the pack after it
 * is built meanwhile. */
static void send_offer_post_next(struct engine_send *s)
{
        struct xfer *b = &s->base;

        if (s->offer.flags & WIRE_OFFER_DIGEST)
                memcpy(s->offer.digest, s->file_digest, WIRE_DIGEST_SIZE);
        if (b->session.on)
                auth_next_offer_mac(&b->session, &s->offer, s->offer.mac);
        xfer_set_state(b, XFER_OFFER);
        xfer_arm_deadline(b);
        send_post_offer(s);
        send_pack_prebuild(s);
}

void send_offer_entry(struct engine_send *s, uint32_t idx, struct send_entry *e)
{
        safe_close(s->fd);
        s->fd = e->fd;
        free(s->pack_mem);
        s->pack_mem = NULL;
        e->fd = -1;
        s->size = e->size;
        s->dir = e->dir;
        s->link = e->link;
        s->hard = e->hard;
        s->mode = e->mode;
        s->mtime_ns = e->mtime_ns;
        snprintf(s->name, sizeof(s->name), "%s", send_entry_name(e));
        free(e->lname);
        e->lname = NULL;
        s->xattrs_len = e->xattrs_len;
        if (e->xattrs_len)
                memcpy(s->xattrs, e->xattrs, e->xattrs_len);
        free(e->xattrs);
        e->xattrs = NULL;
        e->xattrs_len = 0;
        s->file = idx;
        s->span = 1;
        s->span_bytes = e->size;
        send_offer_next(s, false);
}

/*
 * On a worker: every entry's record, each file read whole (it must still
 * be the size the owner counted), into a pack in memory (p->mem, p->len:
 * the lanes copy their chunks from there). Touches only @arg, the pack;
 * closes every descriptor in it. 0, or -errno with p->why.
 */
static int64_t send_pack_build(void *arg)
{
        struct send_pack *p = arg;
        _cleanup_(pack_writer_deinit) struct pack_writer w = PACK_WRITER_NULL;
        int r = 0;

        pack_writer_init(&w);
        for (uint32_t i = 0; i < p->n; i++) {
                struct send_entry *e = &p->e[i];
                bool indexed = p->index && !e->dir && !e->link;
                struct pack_entry pe = { .type = e->dir ? PACK_DIR : e->link ? PACK_LINK : PACK_FILE,
                                         .flags = (e->hard ? PACK_F_HARD : indexed ? PACK_F_INDEX : 0) |
                                                  (e->xattrs_len ? PACK_F_XATTRS : 0),
                                         .mode = e->link ? 0 : e->mode, .mtime_ns = e->mtime_ns, .size = e->size,
                                         .name = e->name, .name_len = strlen(e->name), .xattrs = e->xattrs,
                                         .xattrs_len = e->xattrs_len };
                uint8_t *data = NULL;

                if (r < 0) {
                        send_entry_close(e);
                        continue;
                }
                if (indexed) {
                        /* Kept open for the pack of what the receiver lacks. */
                        r = pack_append(&w, &pe, &data);
                        if (r == 0 && p->index_digest)
                                r = io_digest_whole(e->fd, e->size, data);
                        else if (r == 0)
                                memset(data, 0, PACK_INDEX_DATA);
                        if (r == -ESTALE)
                                snprintf(p->why, sizeof(p->why), "%s: file changed while being sent", e->name);
                        else if (r < 0)
                                snprintf(p->why, sizeof(p->why), "%s: indexing: %s", e->name, strerror(-r));
                        continue;
                }
                r = pack_append(&w, &pe, &data);
                if (r < 0) {
                        snprintf(p->why, sizeof(p->why), "%s: packing: %s", e->name, strerror(-r));
                        send_entry_close(e);
                        continue;
                }
                if (e->dir)
                        continue;
                r = io_read_whole(e->fd, data, e->size);
                if (r == -ESTALE)
                        snprintf(p->why, sizeof(p->why), "%s: file changed while being sent", e->name);
                else if (r < 0)
                        snprintf(p->why, sizeof(p->why), "%s: reading: %s", e->name, strerror(-r));
                if (r == 0 && e->link && memchr(data, '\0', e->size)) {
                        r = -EINVAL;
                        snprintf(p->why, sizeof(p->why), "%s: a symlink's target holds a NUL", e->name);
                }
                send_entry_close(e);
        }
        if (r < 0)
                return r;
        pack_writer_hash(&w, p->hash);
        p->len = w.len;
        p->mem = TAKE_PTR(w.buf);
        return 0;
}

/* The pack built is the next offer's. */
static void send_pack_offer(struct engine_send *s)
{
        struct send_pack *p = &s->pack;

        p->built = p->offer_built = false;
        s->file = p->first;
        s->indexing = p->index;
        s->index_file = p->first;
        p->records = p->n;
        if (s->need_span) {
                /* What an index's NEED named: it settles the index's
                 * entries (s->sizes, send_need). */
                s->span = s->need_span;
                s->need_span = 0;
                s->span_bytes = p->data;
        } else if (p->index) {
                /* Its files move only once the receiver says it lacks them. */
                s->span = p->n;
                s->span_bytes = 0;
                for (uint32_t i = 0; i < p->n; i++) {
                        s->sizes[i] = p->e[i].link ? p->e[i].size : 0;
                        s->span_bytes += s->sizes[i];
                }
        } else {
                s->span = p->n;
                s->span_bytes = p->data;
                for (uint32_t i = 0; i < p->n; i++)
                        s->sizes[i] = p->e[i].size;
        }
        safe_close(s->fd);
        s->fd = -1;
        free(s->pack_mem);
        s->pack_mem = TAKE_PTR(p->mem);
        s->size = p->len;
        s->dir = false;
        s->link = false;
        s->hard = false;
        s->mode = 0;
        s->mtime_ns = 0;
        s->xattrs_len = 0;
        snprintf(s->name, sizeof(s->name), "%s", s->dest);
        log_debug("transfer %" PRIu64 ": entries %u to %u in %s of %" PRIu64 " bytes", s->id, s->file + 1,
                  s->file + s->span, p->index ? "an index pack" : "a pack", p->len);
        send_offer_next(s, true);
}

static void send_on_pack_built(struct io_req *req, int64_t res)
{
        struct engine_send *s = container_of(req, struct engine_send, pack.req);
        struct send_pack *p;

        /* An ended transfer may be gone once its last request is back
         * (send_gone frees the pack). */
        if (!xfer_io_done(&s->base) || s->base.state == XFER_CLOSING)
                return;
        p = &s->pack;
        p->building = false;
        if (res < 0) {
                send_fail_permanent(s, WIRE_E_IO, "%s", p->why[0] ? p->why : strerror((int)-res));
                return;
        }
        p->built = true;
        if (p->offer_built)
                send_pack_offer(s);
}

/* Room for a pack's entries, and their sizes: 0, or the transfer failed. */
static int send_pack_alloc(struct engine_send *s, uint32_t idx)
{
        struct send_pack *p = &s->pack;

        if (!p->e)
                p->e = calloc(PACK_ENTRIES_MAX, sizeof(*p->e));
        if (!s->sizes)
                s->sizes = calloc(PACK_ENTRIES_MAX, sizeof(*s->sizes));
        if (!p->e || !s->sizes) {
                send_fail(s, WIRE_E_INTERNAL, "file %u: out of memory", idx + 1);
                return -1;
        }
        /* Whatever the pack before still held is settled by now. */
        send_pack_release(s);
        p->why[0] = '\0';
        p->first = idx;
        return 0;
}

/* Entry @e goes into the pack being gathered (true), or not: a large
 * file, or one past the pack's limits. A symlink's target is its data
 * (at most NAME_LINK_MAX bytes). */
static bool send_pack_fits(struct engine_send *s, const struct send_entry *e)
{
        struct send_pack *p = &s->pack;
        uint64_t rec = pack_record_size(strlen(send_entry_name(e)), e->size) + (e->xattrs_len ? 2u + e->xattrs_len : 0);

        /* A dry run offers every entry alone: each gets its own verdict;
         * so is a path a pack's record cannot name. */
        if (s->dry || e->lname)
                return false;
        /* Syncing, a packed file's data moves whether the receiver has
         * it or not; indexed, only if it lacks it. */
        if ((!e->dir && !e->link && e->size > (s->sync && !s->index_mode ? PACK_SYNC_FILE_MAX : PACK_FILE_MAX)) ||
            (e->hard && e->size > PACK_NAME_MAX) ||
            rec > PACK_BYTES_MAX - p->bytes || p->n >= (s->index_mode ? PACK_INDEX_ENTRIES_MAX : PACK_ENTRIES_MAX))
                return false;
        p->e[p->n++] = *e;
        p->bytes += rec;
        p->data += e->size;
        return true;
}

/* The gathered pack to a worker: 0, or the transfer failed. */
static int send_pack_build_start(struct engine_send *s)
{
        struct send_pack *p = &s->pack;
        struct xfer *b = &s->base;
        int r;

        /* The files of an index's NEED are carried (send_need). */
        p->index = false;
        for (uint32_t i = 0; s->index_mode && !s->need_span && i < p->n && !p->index; i++)
                p->index = !p->e[i].dir && !p->e[i].link;
        p->index_digest = s->sync == ENGINE_SYNC_DIGEST;
        p->req.done = send_on_pack_built;
        r = io_call(sender_of(b)->env->xe->io, &p->req, send_pack_build, p);
        if (r < 0) {
                send_fail(s, WIRE_E_INTERNAL, "packing files %u to %u: %s", p->first + 1, p->first + p->n,
                          strerror(-r));
                return -1;
        }
        p->building = true;
        xfer_io_start(b, "reading small files");
        return 0;
}

/*
 * While an offer of a tree is in flight, the small entries after it go
 * into the next pack, built meanwhile (send_take_next offers it once this
 * one is sent). Only what the owner has ready: a large file first is held
 * for then, and so is a lone entry.
 */
static void send_pack_prebuild(struct engine_send *s)
{
        struct send_pack *p = &s->pack;
        uint32_t idx = s->file + s->span;
        struct send_entry e;
        int r;

        /* An index pack's entries stay in the pack until its NEED. */
        if (!s->tree || s->dry || s->indexing || p->building || p->built || p->have_held || idx >= s->files ||
            s->base.state == XFER_CLOSING || send_pack_alloc(s, idx) < 0)
                return;
        while (idx + p->n < s->files && p->n < PACK_ENTRIES_MAX) {
                r = send_entry_take(s, idx + p->n, &e);
                if (r < 0)
                        return;
                if (r == ENGINE_NEXT_LATER)
                        break;
                if (!send_pack_fits(s, &e)) {
                        p->held = e;
                        p->have_held = true;
                        break;
                }
        }
        if (p->n == 1) {
                /* Alone after all: held for then, with what follows it. */
                if (p->have_held) {
                        /* Two to hold: the pack of one is built. */
                        (void)send_pack_build_start(s);
                        return;
                }
                p->held = p->e[0];
                p->e[0].fd = -1;
                p->have_held = true;
                p->n = 0;
                p->data = 0;
                return;
        }
        if (p->n > 1)
                (void)send_pack_build_start(s);
}

void send_take_next(struct engine_send *s)
{
        struct xfer *b = &s->base;
        struct send_pack *p = &s->pack;
        uint32_t idx = s->file + s->span;
        struct send_entry e;
        int r;

        s->want_next = false;
        /* Built, or being built, while the one before was in flight. */
        if (p->built) {
                send_pack_offer(s);
                return;
        }
        if (p->building) {
                p->offer_built = true;
                return;
        }
        if (!s->tree) {
                r = send_entry_take(s, idx, &e);
                if (r == ENGINE_NEXT_LATER) {
                        /* Our wait is the owner's, not the receiver's fault:
                         * no deadline here; the receiver hears it is coming. */
                        s->want_next = true;
                        if (!s->prev.on)
                                evtimer_del(b->timer);
                        send_wait_start(s);
                }
                if (r == 0)
                        send_offer_entry(s, idx, &e);
                return;
        }
        if (send_pack_alloc(s, idx) < 0)
                return;
        /* Small entries while the owner has them, and the pack has room. */
        while (idx + p->n < s->files && p->n < PACK_ENTRIES_MAX) {
                r = send_entry_take(s, idx + p->n, &e);
                if (r < 0)
                        return;
                if (r == ENGINE_NEXT_LATER && p->n > 0)
                        break;
                if (r == ENGINE_NEXT_LATER) {
                        s->want_next = true;
                        /* The RESULT of the one sent keeps its deadline. */
                        if (!s->prev.on)
                                evtimer_del(b->timer);
                        send_wait_start(s);
                        return;
                }
                if (send_pack_fits(s, &e))
                        continue;
                if (p->n == 0) {
                        /* A large file: alone, as ever. */
                        send_offer_entry(s, idx, &e);
                        return;
                }
                /* The next offer's, after this pack. */
                p->held = e;
                p->have_held = true;
                break;
        }
        if (p->n == 0) {
                send_fail(s, WIRE_E_INTERNAL, "file %u: nothing to offer", idx + 1);
                return;
        }
        if (p->n == 1) {
                /* A pack of one would cost the worker and save nothing. */
                e = p->e[0];
                p->e[0].fd = -1;
                p->n = 0;
                p->data = 0;
                send_offer_entry(s, idx, &e);
                return;
        }
        p->offer_built = true;
        (void)send_pack_build_start(s);
}

int send_need(struct engine_send *s, const struct wire_need *nd)
{
        struct send_pack *p = &s->pack;
        uint32_t n = 0;

        if (!s->indexing || !s->prev.on || !(s->prev.flags & WIRE_OFFER_PACK) || nd->file != s->prev.file ||
            nd->entries != s->prev.span || nd->entries != p->n || p->first != nd->file || nd->needed == 0) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver's NEED of file %u answers no index pack sent",
                                    nd->file + 1);
                return -1;
        }
        for (uint32_t k = 0; k < p->n; k++) {
                struct send_entry *e = &p->e[k];
                bool want = (nd->bits[k / 8] >> (k % 8)) & 1;

                if (want && (e->dir || e->link)) {
                        send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver needs entry %u, not an indexed file",
                                            nd->file + k + 1);
                        return -1;
                }
                if (!want) {
                        send_entry_close(e);
                        continue;
                }
                /* Its bytes are counted once they move. */
                s->sizes[k] = e->size;
                p->e[n++] = *e;
        }
        p->n = n;
        p->data = 0;
        for (uint32_t k = 0; k < n; k++)
                p->data += p->e[k].size;
        log_debug("transfer %" PRIu64 ": entries %u to %u: the receiver lacks %u files", s->id, nd->file + 1,
                  nd->file + nd->entries, n);
        /* The index's RESULT never comes: this pack's settles its entries. */
        s->need_span = s->prev.span;
        s->prev.on = false;
        s->indexing = false;
        p->offer_built = true;
        return send_pack_build_start(s);
}
