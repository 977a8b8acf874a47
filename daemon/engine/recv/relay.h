#pragma once

/*
 * A relay (wire.h, Relay chains): a receiver whose offer came with a
 * ROUTE passes the file on to the route's first hop while it receives it.
 * The downstream transfer is an engine_send of the engine's own, reading
 * the file being written (its O_TMPFILE), each chunk only once the
 * upstream's bytes there are written (the gate), and its ENDs only once
 * the relay's own copy is verified: a relay never vouches for bytes it
 * did not check. Its RESULT upstream waits for the downstream's, and
 * carries what became of the rest of the route.
 *
 * Relay without copies: once a chunk is written, the upstream's receive
 * slot that holds it is held (relay_hold) and the downstream sends the
 * chunk straight from it (the ring and the send pool are registered on
 * the same PD); the slot, and so the upstream's credit, goes back only
 * once that send is complete (relay_sent). Memory stays bounded by the
 * rings. A relay holds at most half of an upstream lane's slots: past
 * that, a chunk's slot goes back at once, so a downstream that lags (or
 * stalls until its own deadlines fail it) never starves the upstream of
 * credits, and its sender is never blamed for it. Such a chunk, one that
 * came in before the downstream could send it (while it connects, or
 * goes around a failed hop), or one whose run the downstream splits
 * otherwise (another chunk size or lane count), is read back from the
 * relay's file instead, through the page cache into the downstream's
 * share of the send pool: the difference waits on the relay's disk.
 *
 * A tree goes on as a session of its own: each entry once it is staged
 * here, read from the relay's copy; but a regular file the session would
 * offer alone (too large for a pack) is handed on as soon as the upstream
 * accepts it, and relayed as a single file is while it comes in: gated,
 * sent from the held slots, its ENDs once it is verified.
 */

#include <stdbool.h>
#include <stdint.h>

struct recv_env;
struct entlist;
struct recv_file;
struct recv_lane;
struct recv_xfer;
struct relay;
struct wire_result;
struct wire_route;

/* A relayed tree's entries as a node of its chain keeps them with its
 * kept tree (recv-partial-tree.c; common/entlist.h), so that a relay whose
 * upstream resumes that tree can offer its next hop the entries it kept
 * as well as those still to come, under the same indices: @f's (one, or
 * a pack's) appended to @out. 0 or -ENOMEM. */
int relay_ents_add(struct entlist *out, const struct recv_file *f);

/* @x accepted a routed offer (x->route): start the downstream, or record
 * why it could not be (the relay's own copy goes on either way). Sets
 * x->relay. A tree's relay first takes the entries its receiver kept from
 * an earlier attempt (x->ents_kept). */
void relay_start(struct recv_xfer *x);
/* A relayed tree's entry (or a pack's entries), @f, is staged here: the
 * next hop's session may offer it (relay_tree_next). Nothing for a single
 * file's relay, or for DEST. */
void relay_tree_staged(struct relay *r, const struct recv_file *f);
/* The upstream accepted a relayed tree's entry (its cur): a regular file
 * the next hop's session would offer alone is handed to it before it is
 * staged, if it asks, and read while it comes in, gated as a single
 * file's relay is (relay_readable, relay_may_end) until it is verified.
 * Nothing for any other entry. */
void relay_tree_stream(struct relay *r);
/* The next part of the route came (wire.h, Relay chains): kept; once the
 * route is whole and its hash the offer's, the downstream starts. A part
 * out of order or a hash that differs fails the upstream transfer. */
void relay_route_in(struct relay *r, const struct wire_route *part);
/*
 * Whether hops @from .. @to - 1 of @hops may be relayed to from here:
 * WIRE_OK, or WIRE_E_DENIED with why in @text: a loopback or unspecified
 * address, a hop the route names twice, this node itself, or a host
 * outside relay_peers (checked at every relay: an origin's word is not
 * enough). Hops before @from were checked already.
 */
unsigned int relay_route_refused(const struct recv_env *e, const struct wire_hop *hops, unsigned int from,
                                 unsigned int to, char *text, size_t len);
/* Whether every part of the route came. */
bool relay_route_whole(const struct relay *r);
/* Upstream chunk @seq is written to the file. */
void relay_written(struct relay *r, uint64_t seq);
/* The relay's own copy (a tree's: of the entry coming in) is verified:
 * the downstream's ENDs may go. */
void relay_verified(struct relay *r);
/* The downstream's outcome is known. */
bool relay_settled(const struct relay *r);
/* The RESULT's hop fields and text (a settled relay's). */
void relay_result(const struct relay *r, struct wire_result *m);
/* The next hop, "198.18.0.3:7471", for logs and the journal. */
const char *relay_next(const struct relay *r);
/* The upstream transfer ended (@x->relay is cleared): a downstream still
 * running is cancelled unless @x published (then it had settled). */
void relay_detach(struct recv_xfer *x);
/* engine_free(): what is left, without callbacks. */
void relay_free_all(struct recv_env *e);

/* Upstream chunk @seq, in slot @i of lane @l, is written: true when the
 * relay holds the slot for the downstream to send it from (then it comes
 * back through recv_slot_forwarded), false when it may go back now. */
bool relay_hold(struct relay *r, struct recv_lane *l, uint32_t i, uint64_t seq);
/* The downstream reads through the relay as its source (send.h,
 * struct send_source_ops): whether bytes are written, a chunk's bytes in
 * a held slot and that slot back once sent from, whether its ENDs may go. */
