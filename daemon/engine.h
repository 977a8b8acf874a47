#pragma once

/*
 * The RDMA side of the daemon: the rdma_cm listener, the device's PD, the
 * preregistered receive ring, incoming transfers, and the senders that run
 * jobs. Everything is driven from the daemon's event_base.
 */

#include <stdint.h>

struct daemon;
struct engine;
struct job;

/*
 * Bind and listen on cfg.listen_addr:cfg.port, open the device behind it,
 * allocate the PD and register the receive ring. Returns 0 or -errno (and
 * logs the cause). READY=1 may be sent once this succeeded.
 */
int engine_new(struct engine **out, struct daemon *d);
void engine_free(struct engine *e);

/*
 * Begin shutdown: stop listening, fail every incoming transfer (nothing is
 * published) and every running job (FAILED, "daemon shutting down").
 * @done is called from the event loop once no connection is left.
 */
void engine_stop(struct engine *e, void (*done)(struct daemon *d));

/* Start running @job (state QUEUED -> CONNECTING). 0 or -errno. */
int engine_send(struct engine *e, struct job *job);
/* Abort a running job; it ends with job_finish(CANCELLED) from the loop. */
void engine_cancel(struct engine *e, struct job *job);

/* For STATUS=: incoming transfers in progress and their summed rate. */
unsigned int engine_recv_active(const struct engine *e);
uint64_t engine_recv_rate(const struct engine *e);      /* bytes/s */
