#pragma once

/*
 * What the files of send/ share beyond the layer's interface (send.h):
 * the data path (send.c), connecting and offering (send-connect.c),
 * packs (send-pack.c) and sync (send-sync.c).
 */

#include "send.h"

extern const struct conn_ops send_conn_ops;

/* send.c */
/*
 * Fail the transfer (the first decision wins), saying whether another
 * attempt may go another way (engine_result.transient): send_fail() for
 * what it may not meet again (the fabric, the peer's state, a deadline,
 * our own resources), send_fail_permanent() for what it would (the
 * receiver's version or protocol, authentication, our own file),
 * send_fail_peer() for a receiver's refusal or verdict, by its status
 * (wire_status_transient()).
 */
void send_fail(struct engine_send *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
void send_fail_permanent(struct engine_send *s, unsigned int status, const char *fmt, ...)
        _printf_(3, 4);
void send_fail_peer(struct engine_send *s, unsigned int status, const char *fmt, ...) _printf_(3, 4);
void send_post_end(struct send_lane *l);
/* A chain's route and its hops' bytes, freed (send_start's, or at the end). */
void send_route_free(struct engine_send *s);
/* Every lane's chunks of this file are acknowledged: only its verdict is left. */
void send_verifying(struct engine_send *s);
/* Post s->offer on lane 0 now, or once a control buffer and a credit are
 * there (offer_pending). */
void send_post_offer(struct engine_send *s);
/* The receiver's messages and our completions on lane @c. */
void send_on_wc(struct conn *c, const struct ibv_wc *wc);
void send_on_batch_end(struct conn *c);
/* A new lane's buffers: 0, XFER_FULL (lane 0: the pool admits no more
 * transfers), or -errno; nothing is left of it on failure. */
int send_lane_new(struct engine_send *s, unsigned int idx, struct send_lane **out);
void send_lane_free(struct xfer_lane *l);
extern const struct xfer_ops send_xfer_ops;

/* send-pack.c */
/*
 * The receiver published what was offered: the session's next entries.
 * Outside a tree, or for an entry that is not small, the next one alone
 * (send_offer_entry); in a tree, the small entries the owner has ready,
 * packed off the loop, then offered as one. Waits (want_next) when the
 * owner has none yet.
 */
void send_take_next(struct engine_send *s);
/* Offer @e, entry @idx, alone; takes its fd. */
void send_offer_entry(struct engine_send *s, uint32_t idx, struct send_entry *e);
/* s->fd, size, name, mode and span are the next offer's (@pack: a pack's,
 * with s->pack.hash): post it. */
void send_offer_next(struct engine_send *s, bool pack);
/* The file offered last is sent (every END posted, every chunk
 * acknowledged): it becomes s->prev, and the next offer goes, once the
 * RESULT of the one before it came. */
void send_sent(struct engine_send *s);
/* The owner's file_done for each entry @sp carried. */
void send_span_done(struct engine_send *s, const struct send_span *sp);
/* Close the descriptors the pack's entries still hold (an index pack's
 * files, until its RESULT or NEED settles them): none left. */
void send_pack_release(struct engine_send *s);
/* Close what the pack still holds; free it. */
void send_pack_free(struct engine_send *s);

/* send-sparse.c */
/* The file in s->fd, statx'd into s->stx, has holes worth mapping. */
bool send_sparse_wanted(const struct engine_send *s);
/* Map it on a worker (s->src_req), then @done: 0, or -errno (nothing started). */
int send_sparse_start(struct engine_send *s, void (*done)(struct io_req *req, int64_t res));
/* The worker's result, from @done: the map is this file's, or not used. */
void send_sparse_mapped(struct engine_send *s, int64_t res);
/* The offer of a mapped file says WIRE_OFFER_SPARSE and its data bytes
 * (s->chunk known), where a chunk is left out. */
void send_sparse_offer(struct engine_send *s, struct wire_offer *o);
/* Before lane @l reads chunk next_read: a hole is skipped (true), or waits
 * for what is in flight to be acknowledged (false); false also when the
 * transfer ended meanwhile. */
bool send_sparse_skip(struct send_lane *l);
/* A lane joined again over another rail goes on from chunk @from of its
 * run (send.c): 0, or -1 when the transfer failed. */
int send_lane_rewind(struct send_lane *l, uint32_t from);
/* ... once the reads out into its buffers are in. */
void send_lane_rewind_ready(struct send_lane *l);
/* A lane joined again that the receiver has whole, END and all: done. */
void send_lane_rejoined_ended(struct send_lane *l, uint32_t resume);
/* xfer_ops.rail_lost (send-connect.c). */
bool send_rail_lost(struct xfer *b, const struct conn_env *on, const char *text);
/* Lane @l's connection failed (@why; the failure's @status): on another
 * rail than lane 0's, its rail's lanes join again over lane 0's
 * (send_rail_lost); on lane 0's, it waits for the rail's word
 * (xfer_lane_wait_rail). false: fail. */
bool send_lane_lost(struct send_lane *l, unsigned int status, const char *why);
/* xfer_ops.rail_silent: the wait is over, the transfer fails. */
void send_rail_silent(struct xfer_lane *l, unsigned int status, const char *text);
/* send-connect.c: every lane of this file is acknowledged: what each
 * rail pair delivered, for the next transfer's lanes (rails_assign). */
void send_rails_measure(struct engine_send *s);
/* send.c: every chunk of @l's run is acknowledged (or left out). */
void send_lane_acked(struct send_lane *l);

/* send-sync.c */
/* The offer's sync flags, WIRE_OFFER_DELETE and WIRE_OFFER_DRY_RUN (a dry
 * run's, with a sync or without); WIRE_OFFER_DIGEST only where @digest (a
 * regular file's offer, or a tree's first, which says the session
 * compares them). */
uint16_t send_sync_flags(const struct engine_send *s, bool digest);
/* The entry now in s->fd, size, dir, link gets a digest in its offer. */
bool send_sync_wants_digest(const struct engine_send *s);
/* s->file_digest for the entry (zero when it needs none): 1 when done
 * now; 0 when it is being computed, then @then(s) from the loop (unless
 * the transfer failed); or -errno. */
int send_sync_digest(struct engine_send *s, void (*then)(struct engine_send *s));
/* WAIT every second while the next file's offer is held up (send-sync.c). */
void send_wait_start(struct engine_send *s);
/* ACCEPT SKIP: the file counts as sent, its RESULT awaited. 0, or -1
 * when the transfer failed (a skip it did not ask for). */
int send_sync_skipped(struct engine_send *s, const struct wire_accept *a);
/* A RESULT "ok" of @sp: count what the receiver kept. */
void send_sync_result(struct engine_send *s, const struct send_span *sp, const struct wire_result *r);
void send_sync_free(struct engine_send *s);
/* An index pack's NEED (lane 0, its MAC checked): the files it names go
 * in a pack for the index's entries (send-pack.c). 0, or -1 when the
 * transfer failed. */
int send_need(struct engine_send *s, const struct wire_need *n);
/* A dry run's GONE (lane 0, its MAC checked): to the owner. 0, or -1
 * when the transfer failed (one out of order, or not asked for). */
int send_dry_gone(struct engine_send *s, const struct wire_gone *g);

/* send-connect.c */
/* The source identity token (wire.h) of a file as statx saw it, @size long. */
void send_source_token(const struct statx *stx, uint64_t size, uint8_t out[WIRE_SOURCE_SIZE]);
/* A file of a session (not a single file's) names its source only when it is
 * larger than a digest group: a receiver keeps nothing of a smaller one
 * (its first checkpoint is at 64 MiB). */
static inline bool send_source_wanted(const struct engine_send *s)
{
        /* A landing is never resumed: its partial would be the user's file in our partial_dir. */
        return !s->dir && !s->link && s->size > WIRE_GROUP_SIZE && !s->land;
}
/* Connect lane @l: an rdma_cm id and address resolution. 0, or -errno
 * when no id could be made (the lane is untouched). */
int send_lane_connect(struct send_lane *l);
/* The receiver accepted on lane 0: connect the other lanes. */
void send_on_accept(struct send_lane *l, const struct wire_accept *a);
/* A lane resumes at chunk @from of its run: hash the kept ones, then pump. 0, or
 * the transfer failed. */
int send_lane_resume(struct send_lane *l, uint32_t from);
