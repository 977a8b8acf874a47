/*
 * Sync on the sending side (wire.h, version 6): the job's sync flags on
 * every offer; with ENGINE_SYNC_DIGEST, each regular file's digest
 * (digest.h), computed before its offer off the loop (rehash.h reads the
 * file through io_uring); an ACCEPT SKIP (no lane runs, every lane counts
 * as ended, the RESULT is waited for as after a sent file); and the count
 * of entries the receiver kept.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "send-int.h"

uint16_t send_sync_flags(const struct engine_send *s, bool digest)
{
        /* engine_send() took deleting only for a tree that syncs. */
        uint16_t del = (s->delete ? WIRE_OFFER_DELETE : 0) | (s->dry ? WIRE_OFFER_DRY_RUN : 0);

        switch (s->sync) {
        case ENGINE_SYNC_SKIP_EXISTING:
                return WIRE_OFFER_SKIP_EXISTING | del;
        case ENGINE_SYNC_SIZE:
                return WIRE_OFFER_SYNC | del;
        case ENGINE_SYNC_DIGEST:
                return WIRE_OFFER_SYNC | (digest ? WIRE_OFFER_DIGEST : 0) | del;
        default:
                /* A dry run is one whether or not it syncs. */
                return s->dry ? WIRE_OFFER_DRY_RUN : 0;
        }
}

bool send_sync_wants_digest(const struct engine_send *s)
{
        return s->sync == ENGINE_SYNC_DIGEST && !s->dir && !s->link && s->fd >= 0;
}

/*
 * While a later file is read for its digest, or the owner has not handed
 * it over yet (ENGINE_NEXT_LATER: a relay's tree entry not yet staged
 * there, a client's next file), the receiver, waiting for its offer,
 * hears every second that it is coming (wire.h, WAIT). The owner's wait
 * has deadlines of its own: a relay's upstream transfer, a job's client.
 */
static void send_on_wait(evutil_socket_t fd, short what, void *arg)
{
        static const struct timeval second = { .tv_sec = 1 };
        struct engine_send *s = arg;
        struct xfer *b = &s->base;
        struct send_lane *l0 = b->lane[0] ? send_lane_of(b->lane[0]) : NULL;
        struct wire_msg m = { .type = WIRE_WAIT };
        bool digest = s->digest_busy && b->state == XFER_OFFER && s->file > 0;
        bool owner = s->want_next && b->state != XFER_CLOSING && s->file + s->span < s->files;

        if (!digest && !owner)
                return;
        /* Without a credit it waits for the next second (the receiver
         * gives each WAIT's back at once). */
        if (l0 && l0->credits > 0) {
                m.wait.file = digest ? s->file : s->file + s->span;
                if (conn_send_ctrl(&l0->base.conn, &m) == 0)
                        l0->credits--;
        }
        evtimer_add(s->wait_ev, &second);
}

void send_wait_start(struct engine_send *s)
{
        static const struct timeval second = { .tv_sec = 1 };

        if (!s->wait_ev)
                s->wait_ev = evtimer_new(s->env->xe->base, send_on_wait, s);
        if (!s->wait_ev)
                log_warning("transfer %" PRIu64 ": no timer for WAIT: the receiver may give up on "
                            "a long wait for the next file", s->id);
        else if (!evtimer_pending(s->wait_ev, NULL))
                evtimer_add(s->wait_ev, &second);
}

static void send_sync_hashed(struct rehash *h, int r)
{
        struct engine_send *s = container_of(h, struct engine_send, sync_rh);

        s->digest_busy = false;
        if (s->wait_ev)
                evtimer_del(s->wait_ev);
        if (r < 0) {
                send_fail_permanent(s, WIRE_E_IO, "%s: reading it for its digest: %s", s->name, strerror(-r));
                return;
        }
        digest_final(&s->sync_d, s->file_digest);
        s->digest_then(s);
}

int send_sync_digest(struct engine_send *s, void (*then)(struct engine_send *s))
{
        int r;

        memset(s->file_digest, 0, sizeof(s->file_digest));
        if (!send_sync_wants_digest(s))
                return 1;
        digest_deinit(&s->sync_d);
        /* A buffer sized for another file's range must not be reused. */
        rehash_deinit(&s->sync_rh);
        r = digest_init(&s->sync_d);
        if (r == 0)
                r = digest_start(&s->sync_d, 0, s->size);
        if (r < 0)
                return r;
        if (s->size == 0) {
                digest_final(&s->sync_d, s->file_digest);
                return 1;
        }
        s->digest_then = then;
        r = rehash_start(&s->sync_rh, &s->base, &s->sync_d, s->fd, 0, s->size, send_sync_hashed);
        if (r < 0)
                return r;
        s->digest_busy = true;
        /* A later file: the session's receiver waits meanwhile. */
        if (s->file > 0)
                send_wait_start(s);
        return 0;
}

int send_sync_skipped(struct engine_send *s, const struct wire_accept *a)
{
        struct xfer *b = &s->base;

        if ((!s->pull && !(s->offer.flags & (WIRE_OFFER_SKIP_EXISTING | WIRE_OFFER_SYNC | WIRE_OFFER_DRY_RUN))) ||
            (s->file == 0 && a->lanes != 1)) {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver skipped file %u, which it was not asked to "
                                    "(or over %u lanes)", s->file + 1, a->lanes);
                return -1;
        }
        /* No lane runs: the receiver sends no credit for data and expects no END. */
        s->skipping = true;
        for (unsigned int k = 0; k < b->nlanes; k++)
                if (b->lane[k])
                        b->lane[k]->ended = true;
        b->nended = b->nlanes;
        s->t_ended = clock_usec(CLOCK_MONOTONIC);
        s->ndone = b->nlanes;
        if (b->t_start == 0)
                b->t_start = b->t_last = clock_usec(CLOCK_MONOTONIC);
        log_debug("transfer %" PRIu64 ": %s: the receiver has it already, skipped", s->id, s->name);
        send_verifying(s);
        if (b->state == XFER_FINISHING)
                xfer_arm_deadline(b);
        /* Nothing to send: the next offer may go (wire.h, version 7). */
        send_sent(s);
        return 0;
}

/* A dry run's RESULT: its verdict to the owner (a text that says none is
 * a receiver that does not do what it was asked: the verdict is "would
 * create", as a real session's first step would). */
static void send_dry_item(struct engine_send *s, const struct send_span *sp, const struct wire_result *r)
{
        static const enum engine_verdict verdicts[_WIRE_VERDICT_MAX] = {
                [WIRE_VERDICT_CREATE] = ENGINE_WOULD_CREATE,
                [WIRE_VERDICT_REPLACE] = ENGINE_WOULD_REPLACE,
                [WIRE_VERDICT_KEPT] = ENGINE_WOULD_KEEP,
                [WIRE_VERDICT_EXISTS] = ENGINE_WOULD_MERGE,
        };
        struct engine_item it = { .index = sp->file, .size = sp->span_bytes, .name = sp->name };
        int v = wire_verdict_parse(r->text, it.changes);

        if (!s->ops->item)
                return;
        it.verdict = verdicts[v < 0 ? WIRE_VERDICT_CREATE : v];
        it.kind = (sp->flags & WIRE_OFFER_DIR)  ? ENGINE_ITEM_DIR :
                  (sp->flags & WIRE_OFFER_HARD) ? ENGINE_ITEM_HARD :
                  (sp->flags & WIRE_OFFER_LINK) ? ENGINE_ITEM_LINK : ENGINE_ITEM_FILE;
        s->ops->item(s->owner, &it);
}

int send_dry_gone(struct engine_send *s, const struct wire_gone *g)
{
        static const enum engine_item_kind kinds[_WIRE_GONE_KIND_MAX] = {
                [WIRE_GONE_FILE] = ENGINE_ITEM_FILE,
                [WIRE_GONE_DIR] = ENGINE_ITEM_DIR,
                [WIRE_GONE_LINK] = ENGINE_ITEM_LINK,
                [WIRE_GONE_OTHER] = ENGINE_ITEM_OTHER,
        };
        size_t dlen = strlen(s->dest);
        struct engine_item it = { .index = g->file, .verdict = ENGINE_WOULD_DELETE, .kind = kinds[g->kind],
                                  .changes = ".....", .name = g->name };

        /* In order, beneath DEST, before the last RESULT (wire.h, Dry runs). */
        if (!s->dry || !s->delete || g->seq != s->gone_seen || g->file + 1 != s->files ||
            strncmp(g->name, s->dest, dlen) != 0 || g->name[dlen] != '/') {
                send_fail_permanent(s, WIRE_E_PROTOCOL, "receiver's GONE %u (%s) is not one it may send",
                                    g->seq, g->name);
                return -1;
        }
        s->gone_seen++;
        if (s->ops->item)
                s->ops->item(s->owner, &it);
        return 0;
}

void send_sync_result(struct engine_send *s, const struct send_span *sp, const struct wire_result *r)
{
        const char *del = strstr(r->text, "deleted ");
        unsigned long long d;
        unsigned long n;
        char *end;

        /* A dry run's verdict on each entry (wire.h, Dry runs). */
        if (s->dry)
                send_dry_item(s, sp, r);
        /* The tree's last RESULT: what --delete removed (wire.h, Deleting). */
        if (s->delete && del && (del == r->text || (del - r->text >= 2 && !memcmp(del - 2, "; ", 2)))) {
                d = strtoull(del + 8, &end, 10);
                if (*end == '\0' && end != del + 8)
                        s->deleted = d;
        }
        /* A pull's, skipped here as it is: what its send back kept
         * there, "skipped N" (wire.h, Pulls). */
        if (sp->skipping && s->pull) {
                n = strncmp(r->text, "skipped ", 8) == 0 ? strtoul(r->text + 8, &end, 10) : 0;
                if (n > 0 && (*end == '\0' || *end == ';') && n <= UINT32_MAX)
                        s->skipped = (uint32_t)n;
                return;
        }
        if (sp->skipping) {
                s->skipped++;
                return;
        }
        /* A pack's RESULT says how many of its entries were kept, a
         * symlink's whether it was (wire.h). */
        if (!(sp->flags & (WIRE_OFFER_PACK | WIRE_OFFER_LINK)) || strncmp(r->text, "skipped ", 8) != 0)
                return;
        n = strtoul(r->text + 8, &end, 10);
        if ((*end == '\0' || *end == ';') && n <= sp->span)
                s->skipped += (uint32_t)n;
}

void send_sync_free(struct engine_send *s)
{
        if (s->wait_ev)
                event_free(s->wait_ev);
        s->wait_ev = NULL;
        rehash_deinit(&s->sync_rh);
        digest_deinit(&s->sync_d);
}
