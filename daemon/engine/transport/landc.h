#pragma once

/*
 * The daemon's side of the lander protocol (landmsg.h; issue 33): one
 * connection to rdmaxfer-lander on the event loop. Requests are queued
 * and written as the socket takes them; the lander answers in order, and
 * each answer goes to the callback of the request it echoes. Nothing
 * blocks the loop: a lander that is slow to answer holds only the
 * requests behind it.
 *
 * A lander that goes away (killed, restarted) fails every request still
 * waiting with an ERROR of ECONNRESET, and its sessions with it (they
 * were that connection's); the next request connects again (the socket
 * unit starts a new lander). A session therefore never outlives the
 * connection it was opened on: whoever held one opens it again.
 */

#include <stddef.h>
#include <stdint.h>

#include "landmsg.h"

struct event_base;
struct landc;

#define LANDC_PENDING_MAX       1024    /* requests queued or awaiting an answer */

/*
 * Told of @req's answer, on the loop: @reply (an ERROR when the lander
 * refused, or went away: err ECONNRESET, or could not be reached: the
 * connect's errno; those two with verdict LANDC_UNREACHABLE), and @fd, a
 * descriptor that came with it (-1: none), now the callee's.
 */
#define LANDC_UNREACHABLE       0xffff
typedef void (*landc_done_fn)(void *arg, const struct landmsg *reply, int fd);

int landc_new(struct landc **out, struct event_base *base, const char *path);
/* Every request still waiting is dropped without its callback. Safe on NULL. */
void landc_free(struct landc *c);

/*
 * Queue @req (copied; its id is landc's) with @fd (-1: none; dup'ed, the
 * caller keeps its own): 0, -EBUSY (LANDC_PENDING_MAX waiting), -ENOMEM,
 * or -EINVAL (@req does not encode). The lander is connected first if
 * it is not. @done is called exactly once, never from within landc_ask.
 */
int landc_ask(struct landc *c, const struct landmsg *req, int fd, landc_done_fn done, void *arg);

/*
 * A BATCH's answer (landmsg.h): FDS with its @nfds descriptors @fds (one
 * each TMPFILE, in order; now the callee's), or an ERROR (as above) and
 * none.
 */
typedef void (*landc_batch_fn)(void *arg, const struct landmsg *reply, int *fds, size_t nfds);

/*
 * Queue the BATCH @req (copied) with its @nfds descriptors @fds (its
 * LINKs', in order), which it takes whatever it returns: 0, -EBUSY,
 * -ENOMEM or -EINVAL, as landc_ask. @done is called exactly once, never
 * from within.
 */
int landc_ask_batch(struct landc *c, const struct landmsg *req, int *fds, size_t nfds, landc_batch_fn done,
                    void *arg);

/* Requests queued or awaiting an answer. */
unsigned int landc_pending(const struct landc *c);
