/*
 * One worker thread with a queue under a mutex. The loop counts what it
 * queued and what the worker reports done (an eventfd counter), so
 * reaper_pending() needs no lock and @drained runs on the loop.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <event2/event.h>

#include "clock.h"
#include "log.h"
#include "macro.h"
#include "reaper.h"

/* A destroy slower than this is worth a line in the log. */
#define REAPER_SLOW_USEC        (5 * 1000000ull)

struct reaper_item {
        struct reaper_item *next;
        struct rdma_cm_id *id;
        uint64_t queued;                /* usec, CLOCK_MONOTONIC */
        bool disconnect;                /* its DREQ still to send (reaper_destroy_id) */
};

struct reaper {
        pthread_t thread;
        bool started;
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        struct reaper_item *head, **tail;       /* under mutex */
        bool quit;                              /* under mutex */
        bool parked;                            /* under mutex: destroy nothing for now */
        bool device_gone;                       /* under mutex: destroy whatever the ports say */
        bool orphaned;                          /* under mutex: reaper_free() gave up; the worker frees */
        bool exiting;                           /* under mutex: the worker frees nothing; reaper_free() joins */
        uint64_t busy_since;                    /* under mutex */
        int efd;                                /* worker -> loop: ids destroyed */
        struct event *ev;
        unsigned int pending;                   /* loop only */
        void (*drained)(void *userdata);
        void *userdata;
};

/* How often a worker waiting for a port to come back looks again (the
 * port's ACTIVE event also wakes it, through reaper_park()). */
#define REAPER_PORT_POLL_MS     500
/*
 * An id waits this long after it was queued before its port is asked: a
 * link that goes down errors the QPs on it some milliseconds before the
 * port says PORT_ERR (ibv_query_port still answers ACTIVE), and a
 * transfer that a QP error ended is torn down in that window.
 */
#define REAPER_SETTLE_USEC      (1 * 1000000ull)

/*
 * Whether @id may be destroyed now: its port is ACTIVE (or it has none:
 * never bound to a device). A port that is down, or whose state cannot
 * be told, waits: destroying a connected id then makes ib_cm send a DREQ
 * that never completes (cm_destroy_id_wait_timeout), and the device's
 * removal waits for it for ever. Whatever ended the transfer first (a QP
 * or completion error, a timeout, a cancel, PORT_ERR) does not matter.
 */
static bool reaper_port_ready(struct rdma_cm_id *id)
{
        struct ibv_port_attr attr;

        if (!id->verbs || !id->port_num)
                return true;
        if (ibv_query_port(id->verbs, id->port_num, &attr))
                return false;
        return attr.state == IBV_PORT_ACTIVE;
}

static void reaper_timeout_at(struct timespec *ts, unsigned int ms);

/* What is left once the worker is gone (or never started), the queue emptied. */
static void reaper_release(struct reaper *r)
{
        if (r->efd >= 0)
                close(r->efd);
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->mutex);
        free(r);
}

static void *reaper_main(void *arg)
{
        struct reaper *r = arg;
        bool orphaned;

        pthread_mutex_lock(&r->mutex);
        for (;;) {
                struct reaper_item *it;
                uint64_t t0, took, one = 1;

                while ((!r->head || r->parked) && !r->quit)
                        pthread_cond_wait(&r->cond, &r->mutex);
                if (!r->head)
                        break;
                /* Settled, its port up: else wait (or for the device to go). */
                if (!r->quit && !r->device_gone) {
                        uint64_t now = clock_usec(CLOCK_MONOTONIC);

                        /* Settled: the DREQ a failed completion held back goes now. */
                        if (r->head->disconnect && now >= r->head->queued + REAPER_SETTLE_USEC) {
                                r->head->disconnect = false;
                                if (rdma_disconnect(r->head->id) && errno != EINVAL)
                                        log_debug("rdma_disconnect: %m");
                        }
                        if (now < r->head->queued + REAPER_SETTLE_USEC || !reaper_port_ready(r->head->id)) {
                                struct timespec ts;

                                reaper_timeout_at(&ts, REAPER_PORT_POLL_MS);
                                pthread_cond_timedwait(&r->cond, &r->mutex, &ts);
                                continue;
                        }
                }
                it = r->head;
                r->head = it->next;
                if (!r->head)
                        r->tail = &r->head;
                t0 = clock_usec(CLOCK_MONOTONIC);
                r->busy_since = t0;
                pthread_mutex_unlock(&r->mutex);

                if (rdma_destroy_id(it->id))
                        log_warning("rdma_destroy_id: %m");
                took = clock_usec(CLOCK_MONOTONIC) - t0;
                if (took > REAPER_SLOW_USEC)
                        log_warning("destroying an RDMA connection took %.1f s in the kernel",
                                    (double)took / 1e6);
                free(it);

                /* Idle before the loop hears: once drained, nothing is busy. */
                pthread_mutex_lock(&r->mutex);
                r->busy_since = 0;
                if (write(r->efd, &one, sizeof(one)) < 0)
                        log_err("reaper: eventfd: %m");
        }
        /* Whichever of reaper_free() and this sees the other's flag frees. */
        orphaned = r->orphaned;
        r->exiting = true;
        pthread_mutex_unlock(&r->mutex);
        if (orphaned)
                reaper_release(r);
        return NULL;
}

static void reaper_on_done(evutil_socket_t fd, short what, void *arg)
{
        struct reaper *r = arg;
        uint64_t n;

        if (read(r->efd, &n, sizeof(n)) != sizeof(n))
                return;
        r->pending = n >= r->pending ? 0 : r->pending - (unsigned int)n;
        if (r->pending == 0 && r->drained)
                r->drained(r->userdata);
}

int reaper_new(struct reaper **out, struct event_base *base,
               void (*drained)(void *userdata), void *userdata)
{
        struct reaper *r;
        int e;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->tail = &r->head;
        r->efd = -1;
        r->drained = drained;
        r->userdata = userdata;
        pthread_mutex_init(&r->mutex, NULL);
        pthread_cond_init(&r->cond, NULL);
        r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (r->efd < 0) {
                e = -errno;
                goto fail;
        }
        r->ev = event_new(base, r->efd, EV_READ | EV_PERSIST, reaper_on_done, r);
        if (!r->ev || event_add(r->ev, NULL) < 0) {
                e = -ENOMEM;
                goto fail;
        }
        e = pthread_create(&r->thread, NULL, reaper_main, r);
        if (e) {
                e = -e;
                goto fail;
        }
        r->started = true;
        *out = r;
        return 0;

fail:
        reaper_free(r, 0);
        return e;
}

static void reaper_timeout_at(struct timespec *ts, unsigned int ms)
{
        clock_gettime(CLOCK_REALTIME, ts);
        ts->tv_sec += ms / 1000;
        ts->tv_nsec += (long)(ms % 1000) * 1000000L;
        if (ts->tv_nsec >= 1000000000L) {
                ts->tv_sec++;
                ts->tv_nsec -= 1000000000L;
        }
}

void reaper_free(struct reaper *r, unsigned int timeout_ms)
{
        if (!r)
                return;
        /* The loop hears nothing more, whoever frees the rest. */
        if (r->ev)
                event_free(r->ev);
        r->ev = NULL;
        if (r->started) {
                struct timespec ts;
                int e;

                pthread_mutex_lock(&r->mutex);
                r->quit = true;
                r->parked = false;
                pthread_cond_signal(&r->cond);
                pthread_mutex_unlock(&r->mutex);
                reaper_timeout_at(&ts, timeout_ms);
                e = pthread_timedjoin_np(r->thread, NULL, &ts);
                if (e) {
                        pthread_mutex_lock(&r->mutex);
                        if (!r->exiting) {
                                /* Stuck in the kernel: the worker keeps its
                                 * queue, and frees the reaper if the destroy
                                 * ever returns; else process exit takes it.
                                 * Not to be touched once the mutex is let go. */
                                log_warning("%u RDMA connection(s) still being destroyed in the kernel "
                                            "after %u ms; leaving them to process exit",
                                            r->pending, timeout_ms);
                                pthread_detach(r->thread);
                                r->orphaned = true;
                                pthread_mutex_unlock(&r->mutex);
                                return;
                        }
                        /* It got out just now, and left the rest to us. */
                        pthread_mutex_unlock(&r->mutex);
                        pthread_join(r->thread, NULL);
                }
        }
        while (r->head) {
                struct reaper_item *it = r->head;

                r->head = it->next;
                rdma_destroy_id(it->id);
                free(it);
        }
        reaper_release(r);
}

void reaper_destroy_id(struct reaper *r, struct rdma_cm_id *id, bool disconnect)
{
        struct reaper_item *it;

        if (!id)
                return;
        id->context = NULL;
        it = malloc(sizeof(*it));
        if (!r || !it) {
                free(it);
                rdma_destroy_id(id);
                return;
        }
        it->id = id;
        it->disconnect = disconnect;
        it->next = NULL;
        it->queued = clock_usec(CLOCK_MONOTONIC);
        r->pending++;
        pthread_mutex_lock(&r->mutex);
        *r->tail = it;
        r->tail = &it->next;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->mutex);
}

void reaper_device_gone(struct reaper *r, bool gone)
{
        pthread_mutex_lock(&r->mutex);
        r->device_gone = gone;
        r->parked = r->parked && !gone;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->mutex);
}

void reaper_park(struct reaper *r, bool parked)
{
        pthread_mutex_lock(&r->mutex);
        r->parked = parked;
        pthread_cond_signal(&r->cond);
        pthread_mutex_unlock(&r->mutex);
}

unsigned int reaper_pending(const struct reaper *r)
{
        return r ? r->pending : 0;
}

uint64_t reaper_busy_since(struct reaper *r)
{
        uint64_t t;

        pthread_mutex_lock(&r->mutex);
        t = r->busy_since;
        pthread_mutex_unlock(&r->mutex);
        return t;
}
