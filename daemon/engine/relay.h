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
 * Memory stays bounded by the rings: the upstream's slots go back once
 * written, as ever; the downstream reads through the page cache into its
 * share of the send pool. A slower downstream leaves the difference on
 * the relay's disk, not in its memory.
 */

#include <stdbool.h>
#include <stdint.h>

struct engine;
struct recv_xfer;
struct relay;
struct wire_result;

/* @x accepted a routed offer (x->route): start the downstream, or record
 * why it could not be (the relay's own copy goes on either way). Sets
 * x->relay. */
void relay_start(struct recv_xfer *x);
/* Upstream chunk @seq is written to the file. */
void relay_written(struct relay *r, uint64_t seq);
/* The relay's own copy is verified: the downstream's ENDs may go. */
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
void relay_free_all(struct engine *e);

/* The downstream's side (send.c): whether the bytes [@off, @off + @len)
 * are written, and whether its ENDs may go. */
bool relay_readable(const struct relay *r, uint64_t off, uint64_t len);
bool relay_may_end(const struct relay *r);
