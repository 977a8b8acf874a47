/*
 * Lane 0's offer: the name, the key proof, the chunk size and the size
 * are checked; only then is the transfer admitted to the receive ring (a
 * connection that has not made a valid offer holds no share and does not
 * count against max_transfers). The file is opened (O_TMPFILE), its free
 * space checked and reserved off the loop (recv-file.c); then the transfer
 * is accepted with the lanes it is granted, or refused with the reason.
 */

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "device.h"
#include "incoming.h"
#include "log.h"
#include "name.h"
#include "pace.h"
#include "pack.h"
#include "config.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"
#include "relay.h"

/*
 * How many lanes to grant: as many as asked for, but about *lanes* queue
 * pairs in all, split between the transfers receiving now (this one
 * included), and only while each lane still gets a fair run of chunks and
 * a 1 MiB block of its own (runs start on block boundaries, wire.h).
 * Concurrent transfers already use several queue pairs; striping them too
 * would only shrink every lane's window.
 */
static unsigned int recv_lanes_grant(const struct recv_xfer *x)
{
        const struct xfer *b = &x->base;
        /* The lanes serve the whole session: the job's bytes decide, one
         * lane per block of them at most (each file's runs split by its own
         * blocks, and a lane's run may be empty). */
        uint64_t chunks = x->job_bytes / x->cur->offer.chunk_size + (x->job_bytes % x->cur->offer.chunk_size != 0);
        uint64_t by_size = MIN(chunks / RECV_LANE_MIN_CHUNKS, wire_blocks(x->job_bytes));
        unsigned int share = xfer_lanes_share(x->env->xe, b->ring->conns), rails = 0;
        unsigned int n;

        /* A sender with rails, to a receiver with rails: a lane for each
         * of ours at least (wire.h, Rails), however many transfers share. */
        for (unsigned int i = 0; x->rails && i < x->env->ndev; i++)
                rails += device_usable(&x->env->dev[i]);
        n = MIN((unsigned int)x->cur->offer.lanes, MAX(share, rails > 1 ? rails : 1u));

        return (unsigned int)MAX(1u, MIN((uint64_t)n, by_size));
}

void recv_plan(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct wire_offer *o = &x->cur->offer;

        if (x->planned)
                return;
        x->planned = true;
        b->size = o->size;
        b->chunk = o->chunk_size;
        b->nchunks = DIV_ROUND_UP(o->size, o->chunk_size);
        /* A later file of the session keeps its lanes; it resumes what a
         * partial of it holds (wire.h). */
        if (o->file > 0) {
                if (x->found.lanes > 0)
                        x->resumed = partial_resume(&x->found, b->nlanes, x->resume);
                return;
        }
        /* A skipped first file: the session goes on over lane 0 alone (a
         * lane joins only a transfer whose data flows). */
        if (x->cur->skip) {
                xfer_set_lanes(b, 1);
                return;
        }
        if (x->published_match) {
                /* The lanes it was published over: their digests are recorded. */
                xfer_set_lanes(b, x->found.lanes);
                for (unsigned int k = 0; k < b->nlanes; k++) {
                        uint64_t first, end;

                        wire_lane_range(b->nchunks, b->chunk, b->nlanes, k, &first, &end);
                        x->resume[k] = (uint32_t)(end - first);
                }
                x->resumed = o->size;
                return;
        }
        /* Lane 0 keeps what it has; it is due its part of the transfer's. */
        xfer_set_lanes(b, recv_lanes_grant(x));
        if (x->found.lanes > 0)
                x->resumed = partial_resume(&x->found, b->nlanes, x->resume);
}

/*
 * The first ACCEPT to a sender with rails names ours (wire.h, Rails): the
 * one lane 0 came in on first, then the others that carry connections
 * now. Nothing with one rail: every lane comes where lane 0 did.
 */
static void recv_accept_rails(const struct recv_xfer *x, struct wire_accept *a)
{
        const struct recv_env *e = x->env;
        const struct device *d0 = x->base.lane[0]->conn.env->dev;
        unsigned int n = 0;

        if (e->ndev < 2 || !d0)
                return;
        for (unsigned int pass = 0; pass < 2; pass++) {
                for (unsigned int i = 0; i < e->ndev && n < WIRE_RAILS_MAX; i++) {
                        const struct device *d = &e->dev[i];
                        struct sockaddr_storage ss;

                        if ((pass == 0) != (d == d0) || !device_usable(d) || !d->have_src)
                                continue;
                        memcpy(&ss, &d->src, sizeof(ss));
                        if (ss.ss_family == AF_INET)
                                ((struct sockaddr_in *)&ss)->sin_port = htons(d->cfg.port);
                        else
                                ((struct sockaddr_in6 *)&ss)->sin6_port = htons(d->cfg.port);
                        if (wire_hop_set(&a->rails[n], (const struct sockaddr *)&ss) == 0)
                                n++;
                }
        }
        if (n > 1) {
                a->flags |= WIRE_ACCEPT_RAILS;
                a->nrails = (uint8_t)n;
        }
}

int recv_send_accept(struct recv_xfer *x, uint16_t flags)
{
        struct xfer *b = &x->base;
        struct recv_lane *l0 = recv_lane(x, 0);
        struct wire_msg m = { .type = WIRE_ACCEPT };
        int r;

        m.accept.lanes = (uint16_t)b->nlanes;
        m.accept.flags = flags;
        m.accept.file = x->cur->offer.file;
        memcpy(m.accept.resume, x->resume, sizeof(uint32_t) * b->nlanes);
        /* DEST's, continuing a kept tree: its entries are here (wire.h). */
        if (flags & WIRE_ACCEPT_RESUMED) {
                memset(m.accept.resume, 0, sizeof(m.accept.resume));
                m.accept.resume[0] = x->tree_kept;
        }
        if (x->cur->offer.file == 0 && x->rails)
                recv_accept_rails(x, &m.accept);
        if (b->session.on)
                auth_accept_mac(&b->session, &m.accept, m.accept.mac);
        m.credits = recv_credits_take(l0);
        r = conn_send_ctrl(&l0->base.conn, &m);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, strerror(-r));
                return r;
        }
        x->cur->t_file = b->t_last = clock_usec(CLOCK_MONOTONIC);
        if (x->cur->offer.file == 0)
                b->t_start = x->cur->t_file;
        return 0;
}

/* The file is open and its space reserved (or the file system cannot reserve). */
void recv_accept(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct wire_offer *o = &x->cur->offer;

        recv_plan(x);
        /* A later file's kept parts first (recv-partial.c): then here again. */
        if (recv_partial_prehash(x))
                return;
        /* A lane reading back its kept part gets no credits until it is done. */
        for (unsigned int k = 0; k < b->nlanes; k++)
                x->rh_busy[k] = x->resume[k] > 0 && !x->published_match && !x->prehashed;
        /* Lane 0 takes its run now; in a later file of the session every
         * lane is up and takes its run of this file. */
        for (unsigned int k = 0; k < b->nlanes; k++) {
                struct recv_lane *l = recv_lane(x, k);

                if (!l)
                        continue;       /* joins later, and takes its run then */
                if (xfer_lane_run(&l->base) < 0) {
                        recv_fail(x, WIRE_E_INTERNAL, "no memory for the block digests");
                        return;
                }
                recv_partial_lane(x, l);
        }
        xfer_set_state(b, XFER_DATA);
        /* Kept bytes count as received: END's and the verdict's counts are the file's. */
        x->bytes_written = x->cur->file_bytes = x->resumed;
        x->cur->data_in = x->cur->holes = 0;
        b->bytes += x->resumed;
        if (recv_send_accept(x, x->published_match                  ? WIRE_ACCEPT_PUBLISHED :
                                (x->tree_resumed || x->tree_again) && o->file == 0 ? WIRE_ACCEPT_RESUMED :
                                                                  0) < 0)
                return;
        xfer_arm_deadline(b);
        xfer_grace(b, x->resumed);
        /* A chain's file goes on while it comes in (relay.h). */
        if (x->route_on && o->file == 0) {
                relay_start(x);
                if (b->state == XFER_CLOSING)
                        return;
        }
        if (o->file > 0) {
                if (x->relay)
                        relay_tree_stream(x->relay);
                recv_lanes_flush(x);
                log_debug("%s: receiving %s (%" PRIu64 " bytes, file %u of %u, transfer %" PRIu64 ", %" PRIu64
                          " bytes kept)", b->peer, o->name, o->size, o->file + 1, o->job_files, o->transfer_id,
                          x->resumed);
                x->ckpt_bytes = x->bytes_written;
                recv_partial_rehash(x);
                return;
        }
        log_info("%s: receiving %s (%" PRIu64 " bytes, %" PRIu64 " chunks of %u over %u lane%s, transfer %" PRIu64
                 ", %" PRIu64 " bytes kept)", b->peer, o->name, o->size, b->nchunks, o->chunk_size, b->nlanes,
                 b->nlanes == 1 ? "" : "s", o->transfer_id, x->resumed);
        x->ckpt_bytes = x->bytes_written;
        recv_partial_rehash(x);
}

/* Larger than max_file_size (0: no limit): true, and why in @text. */
static bool recv_over_max_file_size(const struct recv_env *e, const struct wire_offer *o, char *text, size_t len)
{
        char limit[32];

        if (!e->cfg.max_file_size || o->size <= e->cfg.max_file_size)
                return false;
        pace_fmt_bytes(limit, sizeof(limit), e->cfg.max_file_size);
        snprintf(text, len, "%" PRIu64 " bytes is over the receiver's max_file_size of %s", o->size, limit);
        return true;
}

/*
 * Names of the receiver's own beside what a peer names: what it keeps in
 * incoming_dir while it receives (common/incoming.c: .rdmaxfer-N.part,
 * .rdmaxfer-stage-N, swept at start) and beside a staged tree's top
 * (RECV_KEEP_LINKS, RECV_KEEP_ENTRIES). Dotfiles arrive (names = utf8):
 * these few do not.
 */
static bool recv_name_reserved(const char *name, bool tree)
{
        const char *leaf = name_leaf(name);

        return strncmp(name, INCOMING_RESERVED_PREFIX, strlen(INCOMING_RESERVED_PREFIX)) == 0 ||
               (tree && (strcmp(leaf, RECV_KEEP_LINKS) == 0 || strcmp(leaf, RECV_KEEP_ENTRIES) == 0));
}

/* The offer's own fields: WIRE_OK, or the refusal's status and @text. */
static unsigned int recv_check_offer(struct recv_xfer *x, const struct wire_offer *o,
                                     char *text, size_t len)
{
        const struct recv_env *e = x->env;
        bool tree = o->flags & WIRE_OFFER_TREE;
        enum name_verdict nv = tree ? name_path_check_rules(o->name, strlen(o->name), NULL, e->cfg.names) :
                                      name_check_rules(o->name, strlen(o->name), e->cfg.names);
        struct rdma_cm_id *id = x->base.lane[0]->conn.id;
        /* wire_decode() held a relay's flag to a single file already. */
        uint16_t flags = o->flags & ~(WIRE_OFFER_SYNC_FLAGS | WIRE_OFFER_ROUTE | WIRE_OFFER_RELAYED |
                                      WIRE_OFFER_SPARSE | WIRE_OFFER_DRY_RUN | WIRE_OFFER_LAND | WIRE_OFFER_RAILS);
        struct wire_binding bd;
        uint8_t hash[WIRE_ROUTE_HASH_SIZE];
        unsigned int status;

        text[0] = '\0';
        /* The proof first: an unproven peer learns nothing of our rules. */
        if (e->key->len > 0 &&
            (wire_binding_set(&bd, rdma_get_peer_addr(id), rdma_get_local_addr(id)) < 0 ||
             auth_offer_verify(e->key, x->base.nonce, &bd, o) < 0 ||
             auth_session_derive(&x->base.session, e->key, x->base.nonce, o) < 0)) {
                snprintf(text, len, "pre-shared key proof does not match "
                         "(another key, or an offer made for another connection)");
                if (nv != NAME_OK)
                        snprintf(x->cur->offer.name, sizeof(x->cur->offer.name), "(rejected name)");
                return WIRE_E_AUTH;
        }
        if (nv != NAME_OK) {
                /* Don't echo a hostile name into logs as if it were a file. */
                snprintf(text, len, "%s", name_verdict_str(nv));
                snprintf(x->cur->offer.name, sizeof(x->cur->offer.name), "(rejected name)");
                return WIRE_E_NAME;
        }
        /* A user's directory holds none of ours: a landing may take any name. */
        if (!x->landing && recv_name_reserved(o->name, tree)) {
                snprintf(text, len, "a name this receiver keeps for itself (.rdmaxfer-* in incoming_dir; "
                         "%s or %s as a tree's last component)", RECV_KEEP_LINKS, RECV_KEEP_ENTRIES);
                return WIRE_E_NAME;
        }
        /* A route is the one the offer names (with a key, under its MAC). */
        if (!(o->flags & WIRE_OFFER_ROUTE) != !x->route_on) {
                snprintf(text, len, x->route_on ? "a route, and an offer that names none" :
                                                  "an offer that names a route that did not come");
                return WIRE_E_PROTOCOL;
        }
        if (x->route_on) {
                /* A longer route's hash waits for its last part (relay_route_in). */
                if (x->route.hops < x->route.total)
                        memcpy(hash, o->route_hash, sizeof(hash));
                else
                        wire_route_hash(x->route.hop, x->route.total, hash);
                if (memcmp(hash, o->route_hash, sizeof(hash)) != 0) {
                        snprintf(text, len, "the route is not the one the offer names");
                        return e->key->len > 0 ? WIRE_E_AUTH : WIRE_E_PROTOCOL;
                }
                if (e->cfg.relay == CONFIG_RELAY_NO) {
                        snprintf(text, len, "this node does not relay (relay = no)");
                        return WIRE_E_DENIED;
                }
                /* relay = peers: the chain stays within the hosts the admin
                 * named, the one that sent it included (SECURITY.md). */
                if (e->cfg.relay == CONFIG_RELAY_PEERS && e->cfg.relay_peers.n == 0) {
                        snprintf(text, len, "this node relays only among named peers (relay = peers), "
                                 "and its allow_peers (relay_peers) names none: set allow_peers, or relay = yes");
                        return WIRE_E_DENIED;
                }
                if (e->cfg.relay == CONFIG_RELAY_PEERS && !acl_allows(&e->cfg.relay_peers, rdma_get_peer_addr(id))) {
                        snprintf(text, len, "this node relays only among named peers (relay = peers), "
                                 "and the sender is not in its relay_peers");
                        return WIRE_E_DENIED;
                }
                status = relay_route_refused(e, x->route.hop, 0, x->route.hops, text, len);
                if (status != WIRE_OK)
                        return status;
                if ((!tree && o->job_files != 1) || (o->flags & WIRE_OFFER_SYNC_FLAGS)) {
                        snprintf(text, len, "a route carries one regular file or one tree, without sync");
                        return WIRE_E_PROTOCOL;
                }
        }
        status = recv_land_check(x, o, text, len);
        if (status != WIRE_OK)
                return status;
        if (!e->incoming_clean) {
                snprintf(text, len, "starting up: removing what a crash left in incoming_dir");
                return WIRE_E_BUSY;
        }
        if (o->chunk_size < RECV_CHUNK_MIN || o->chunk_size > e->slot_size) {
                snprintf(text, len, "chunk size out of range");
                return WIRE_E_PROTOCOL;
        }
        if (o->file != 0 || o->size > o->job_bytes) {
                snprintf(text, len, "the first offer of a session is not its first file");
                return WIRE_E_PROTOCOL;
        }
        /* A tree starts with DEST, a directory, in a session of more; the
         * sync flags are the session's (one way of syncing at most). */
        if (flags & ~(WIRE_OFFER_TREE | WIRE_OFFER_DIR) ||
            (tree ? flags != (WIRE_OFFER_TREE | WIRE_OFFER_DIR) || o->size != 0 || o->job_files < 2 :
                    flags != 0) ||
            ((o->flags & WIRE_OFFER_SKIP_EXISTING) && (o->flags & WIRE_OFFER_SYNC))) {
                snprintf(text, len, "offer flags 0x%x not understood", (unsigned int)o->flags);
                return WIRE_E_PROTOCOL;
        }
        /* Removing what the sender lacks is the admin's to allow (wire_decode()
         * held the flag to a tree that syncs): not retried, the sender says why.
         * Not in a tree that lands as its user: that one removes only what
         * the user may, as the user, in a tree the user named. */
        if ((o->flags & WIRE_OFFER_DELETE) && !(o->flags & WIRE_OFFER_LAND) && !e->cfg.tree_delete) {
                snprintf(text, len, "deleting is off on the receiver (tree_delete)");
                return WIRE_E_PERMISSION;
        }
        /* Lanes start on digest block boundaries, which must be chunk
         * boundaries (or the chunks block boundaries): a power of two no
         * larger than a digest group. */
        if (WIRE_GROUP_SIZE % o->chunk_size != 0) {
                snprintf(text, len, "chunk size %u does not divide the %u-byte digest group",
                         o->chunk_size, WIRE_GROUP_SIZE);
                return WIRE_E_PROTOCOL;
        }
        /* Not DIV_ROUND_UP: size + chunk - 1 would wrap for a hostile size. */
        if (o->size / o->chunk_size + (o->size % o->chunk_size != 0) > UINT32_MAX) {
                snprintf(text, len, "more than 2^32 chunks");
                return WIRE_E_TOO_LARGE;
        }
        if (recv_over_max_file_size(e, o, text, len))
                return WIRE_E_TOO_LARGE;
        /* A job's totals, before any data moves (after the file's own,
         * whose reasons a single file's sender knows; a single file is held
         * to max_file_size only). */
        if (o->job_files > 1 && e->cfg.max_job_files && o->job_files > e->cfg.max_job_files) {
                snprintf(text, len, "%" PRIu32 " files in one job is over the receiver's max_job_files of %" PRIu32,
                         o->job_files, e->cfg.max_job_files);
                return WIRE_E_TOO_LARGE;
        }
        if (o->job_files > 1 && e->cfg.max_job_bytes && o->job_bytes > e->cfg.max_job_bytes) {
                char limit[32];

                pace_fmt_bytes(limit, sizeof(limit), e->cfg.max_job_bytes);
                snprintf(text, len, "%" PRIu64 " bytes in one job is over the receiver's max_job_bytes of %s",
                         o->job_bytes, limit);
                return WIRE_E_TOO_LARGE;
        }
        return WIRE_OK;
}

/* A later offer of the session: WIRE_OK, or the refusal's status and @text. */
static unsigned int recv_check_next_offer(struct recv_xfer *x, const struct wire_offer *o,
                                          char *text, size_t len)
{
        const struct xfer *b = &x->base;
        const struct recv_env *e = x->env;
        size_t dlen = strlen(x->dest);
        /* wire_decode() held a sparse file's flag to a regular file. */
        uint16_t flags = o->flags & ~(WIRE_OFFER_SYNC_FLAGS | WIRE_OFFER_SPARSE | WIRE_OFFER_DRY_RUN | WIRE_OFFER_LONG_NAME);
        /* A digest goes with a regular file's offer in a session that compares them. */
        bool digest = (x->sync & WIRE_OFFER_DIGEST) && !(flags & (WIRE_OFFER_DIR | WIRE_OFFER_LINK | WIRE_OFFER_PACK));
        enum name_verdict nv = x->tree ? name_path_check_rules(o->name, strlen(o->name), NULL, e->cfg.names) :
                                         name_check_rules(o->name, strlen(o->name), e->cfg.names);

        text[0] = '\0';
        if (b->session.on && auth_next_offer_verify(&b->session, o) < 0) {
                snprintf(text, len, "the offer of file %u does not prove the session key", x->next_file + 1);
                if (nv != NAME_OK)
                        snprintf(x->cur->offer.name, sizeof(x->cur->offer.name), "(rejected name)");
                return WIRE_E_AUTH;
        }
        /* Only a regular file carries a source token (it may resume, wire.h). */
        if (o->file != x->next_file || o->job_files != x->job_files || o->job_bytes != x->job_bytes ||
            o->chunk_size != x->chunk || o->lanes != b->nlanes ||
            ((flags & (WIRE_OFFER_DIR | WIRE_OFFER_LINK | WIRE_OFFER_PACK)) &&
             memcmp(o->source, (uint8_t[WIRE_SOURCE_SIZE]){ 0 }, WIRE_SOURCE_SIZE) != 0) ||
            (o->flags & WIRE_OFFER_SYNC_FLAGS) != ((x->sync & ~WIRE_OFFER_DIGEST) | (digest ? WIRE_OFFER_DIGEST : 0)) ||
            !(o->flags & WIRE_OFFER_DRY_RUN) != !x->dry) {
                snprintf(text, len, "offer of file %u does not follow the session's", x->next_file + 1);
                if (nv != NAME_OK)
                        snprintf(x->cur->offer.name, sizeof(x->cur->offer.name), "(rejected name)");
                return WIRE_E_PROTOCOL;
        }
        if (nv != NAME_OK) {
                snprintf(text, len, "%s", name_verdict_str(nv));
                snprintf(x->cur->offer.name, sizeof(x->cur->offer.name), "(rejected name)");
                return WIRE_E_NAME;
        }
        /* A pack only in a tree, named DEST, within what a receiver reads
         * into memory to unpack it; its entries are checked then. */
        if (o->flags & WIRE_OFFER_PACK) {
                if (!x->tree || flags != (WIRE_OFFER_TREE | WIRE_OFFER_PACK) || o->mode != 0 ||
                    o->mtime_ns != 0) {
                        snprintf(text, len, "offer flags 0x%x not understood", (unsigned int)o->flags);
                        return WIRE_E_PROTOCOL;
                }
                if (strcmp(o->name, x->dest) != 0) {
                        snprintf(text, len, "a pack not named as the job's destination");
                        return WIRE_E_NAME;
                }
                if (o->pack_entries > PACK_ENTRIES_MAX || o->size > PACK_BYTES_MAX) {
                        snprintf(text, len, "a pack of %u entries and %" PRIu64 " bytes is over %u and %u",
                                 o->pack_entries, o->size, PACK_ENTRIES_MAX, PACK_BYTES_MAX);
                        return WIRE_E_PROTOCOL;
                }
                /* The files an index pack's NEED named, and nothing else. */
                if (x->need_on && o->pack_entries != x->need_count) {
                        snprintf(text, len, "a pack of %u entries answers a NEED of %u files", o->pack_entries,
                                 x->need_count);
                        return WIRE_E_PROTOCOL;
                }
                return WIRE_OK;
        }
        if (x->need_on) {
                snprintf(text, len, "entry %u: not the pack of files its index pack's NEED named",
                         x->next_file + 1);
                return WIRE_E_PROTOCOL;
        }
        /* In a tree, every entry is beneath DEST; outside one, no flags. */
        if (x->tree ? (flags & ~(WIRE_OFFER_DIR | WIRE_OFFER_LINK | WIRE_OFFER_HARD)) != WIRE_OFFER_TREE ||
                      ((flags & WIRE_OFFER_DIR) && (o->size != 0 || (flags & WIRE_OFFER_LINK))) ||
                      ((flags & WIRE_OFFER_HARD) && !(flags & WIRE_OFFER_LINK)) ||
                      ((flags & WIRE_OFFER_LINK) &&
                       (o->size == 0 || o->size > ((flags & WIRE_OFFER_HARD) ? WIRE_PATH_MAX : NAME_LINK_MAX))) ||
                      strncmp(o->name, x->dest, dlen) != 0 || o->name[dlen] != '/' :
                      flags != 0) {
                snprintf(text, len, "entry %u is not beneath the job's destination", x->next_file + 1);
                return WIRE_E_NAME;
        }
        if ((o->flags & WIRE_OFFER_LINK) && !(o->flags & WIRE_OFFER_HARD) &&
            recv_tree_symlinks(x) == CONFIG_SYMLINKS_NONE) {
                snprintf(text, len, "%.*s: a symlink, and tree_symlinks is none here", WIRE_TEXT_MAX - 48,
                         o->name);
                return WIRE_E_NAME;
        }
        if (o->size > x->job_bytes - x->offered) {
                snprintf(text, len, "file %u: more bytes than the job announced", x->next_file + 1);
                return WIRE_E_PROTOCOL;
        }
        if (recv_over_max_file_size(e, o, text, len))
                return WIRE_E_TOO_LARGE;
        return WIRE_OK;
}

void recv_on_offer(struct recv_xfer *x, const struct wire_offer *o)
{
        struct recv_env *e = x->env;
        char text[WIRE_TEXT_MAX + 1];
        unsigned int status;
        int r;

        x->cur->offer = *o;
        x->cur->skip = x->sync_probed = false;
        evtimer_del(x->base.timer);
        if (x->next_file > 0) {
                /* The session's next file: admitted, the lanes up. */
                status = recv_check_next_offer(x, o, text, sizeof(text));
                if (status != WIRE_OK) {
                        recv_fail(x, status, text[0] ? text : NULL);
                        return;
                }
                /* A pack's bytes are its entries' only once unpacked. */
                if (!(o->flags & WIRE_OFFER_PACK))
                        x->offered += o->size;
                /* What a NEED named settles its index's entries. */
                x->cur->span = x->need_on ? x->need_span : 0;
                x->next_file += recv_file_span(x->cur);
                x->need_on = false;
                x->planned = false;
                /* A dry run: judged, nothing made (recv-dry.c). */
                if (x->dry) {
                        recv_dry_offer(x);
                        return;
                }
                /* A partial of it first, when it may have one (recv-partial.c). */
                recv_partial_reset(x);
                recv_partial_lookup(x);
                return;
        }
        status = recv_check_offer(x, o, text, sizeof(text));
        if (status != WIRE_OK) {
                recv_fail(x, status, text[0] ? text : NULL);
                return;
        }
        x->job_files = o->job_files;
        x->job_bytes = o->job_bytes;
        x->chunk = o->chunk_size;
        memcpy(x->token, o->token, WIRE_TOKEN_SIZE);
        x->tree = o->flags & WIRE_OFFER_TREE;
        x->sync = o->flags & WIRE_OFFER_SYNC_FLAGS;
        x->dry = o->flags & WIRE_OFFER_DRY_RUN;
        x->rails = o->flags & WIRE_OFFER_RAILS;
        if (x->tree)
                snprintf(x->dest, sizeof(x->dest), "%s", o->name);
        x->offered = o->size;
        x->next_file = 1;
        /* Only now, the offer valid (and proven, with a key), does the
         * transfer count against max_transfers and take its share; one
         * host never takes them all (issue 32: sessions that hold a slot
         * as long as their claims let them). */
        if (e->cfg.per_host < e->cfg.max_transfers &&
            recv_admitted_from(e, rdma_get_peer_addr(x->base.lane[0]->conn.id)) >= e->cfg.per_host) {
                snprintf(text, sizeof(text), "%u transfers from this host already receiving "
                         "(max_transfers_per_host)", e->cfg.per_host);
                recv_fail(x, WIRE_E_BUSY, text);
                return;
        }
        r = recv_admit(x);
        if (r == XFER_FULL) {
                snprintf(text, sizeof(text), "%u transfers already receiving", e->ring->conns_max);
                recv_fail(x, WIRE_E_BUSY, text);
                return;
        }
        if (r < 0) {
                snprintf(text, sizeof(text), "posting receives: %s", strerror(-r));
                recv_fail(x, WIRE_E_INTERNAL, text);
                return;
        }
        if (x->dry) {
                recv_dry_offer(x);
                return;
        }
        /* A partial of it first (recv-partial.c), then the incoming
         * directory, one disk request at a time. */
        recv_partial_lookup(x);
}
