/*
 * daemon/engine/transport/reaper.c: rdma_destroy_id runs on the worker, never in the
 * caller, however long the kernel takes; the loop hears when the queue has
 * drained; reaper_free() is bounded even when a destroy never returns.
 * a DREQ held back goes from the worker after the id's second.
 * rdma_destroy_id and rdma_disconnect are wrapped (-Wl,--wrap): these machines have no RDMA, and
 * what is under test is the hand-off, not the kernel. The ids are plain
 * structs the wrapper recognises; nothing else of librdmacm is called.
 */

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <event2/event.h>
#include <rdma/rdma_cma.h>

#include "clock.h"
#include "reaper.h"
#include "tap.h"

static pthread_mutex_t gate_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open = true;           /* false: every destroy blocks until opened */
static atomic_int destroyed;
static atomic_int destroyed_on_main;
static pthread_t main_thread;

int __wrap_rdma_destroy_id(struct rdma_cm_id *id);
int __wrap_rdma_disconnect(struct rdma_cm_id *id);

/* rdma_disconnect, wrapped too: when (after its queueing), on which
 * thread, and whether before its destroy. */
static atomic_int disconnected, disconnected_on_main, destroyed_at_disconnect;
static struct rdma_cm_id *disconnect_id;
static uint64_t disconnect_at;

int __wrap_rdma_disconnect(struct rdma_cm_id *id)
{
        if (pthread_equal(pthread_self(), main_thread))
                disconnected_on_main++;
        disconnect_id = id;
        disconnect_at = clock_usec(CLOCK_MONOTONIC);
        destroyed_at_disconnect = destroyed;
        disconnected++;
        return 0;
}

int __wrap_rdma_destroy_id(struct rdma_cm_id *id)
{
        if (pthread_equal(pthread_self(), main_thread))
                destroyed_on_main++;
        pthread_mutex_lock(&gate_mutex);
        while (!gate_open)
                pthread_cond_wait(&gate_cond, &gate_mutex);
        pthread_mutex_unlock(&gate_mutex);
        free(id);
        destroyed++;
        return 0;
}

static void gate(bool open)
{
        pthread_mutex_lock(&gate_mutex);
        gate_open = open;
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_mutex);
}

static struct rdma_cm_id *fake_id(void)
{
        struct rdma_cm_id *id = calloc(1, sizeof(*id));

        id->context = (void *)id;       /* the reaper must clear it */
        return id;
}

/* Entries of /proc/self/@dir: the open fds (the reaper's eventfd among
 * them), or the threads (its worker among them). */
static int proc_count(const char *dir)
{
        char path[64];
        struct dirent *d;
        DIR *p;
        int n = 0;

        snprintf(path, sizeof(path), "/proc/self/%s", dir);
        p = opendir(path);
        if (!p)
                return -1;
        while ((d = readdir(p)))
                n += d->d_name[0] != '.';
        closedir(p);
        return n - (dir[0] == 'f');     /* not opendir's own fd */
}

static int drained_calls;

static void on_drained(void *userdata)
{
        drained_calls++;
        event_base_loopbreak(userdata);
}

/* Run the loop until on_drained breaks it, or @ms pass. */
static void run_loop(struct event_base *base, unsigned int ms)
{
        struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

        event_base_loopexit(base, &tv);
        event_base_dispatch(base);
}

int main(void)
{
        struct event_base *base = event_base_new();
        struct rdma_cm_id *ids[8];
        struct reaper *r = NULL;
        uint64_t t0, took;
        int fds0, threads;

        main_thread = pthread_self();
        fds0 = proc_count("fd");
        ok(reaper_new(&r, base, on_drained, base) == 0, "reaper_new");

        /* A destroy that hangs in the kernel does not hang the caller. */
        gate(false);
        t0 = clock_usec(CLOCK_MONOTONIC);
        for (int i = 0; i < 8; i++) {
                ids[i] = fake_id();
                reaper_destroy_id(r, ids[i], false);
        }
        took = clock_usec(CLOCK_MONOTONIC) - t0;
        ok(took < 500000, "queueing 8 ids while the kernel is stuck returns at once (%llu us)",
           (unsigned long long)took);
        ok(reaper_pending(r) == 8, "8 pending");
        /* A loaded machine may start the worker late: wait for it, bounded. */
        for (t0 = clock_usec(CLOCK_MONOTONIC); !reaper_busy_since(r) &&
             clock_usec(CLOCK_MONOTONIC) - t0 < 10000000;)
                usleep(10000);
        ok(reaper_busy_since(r) != 0, "the worker is inside a destroy");
        ok(destroyed == 0, "nothing destroyed while the kernel is stuck");
        run_loop(base, 200);
        ok(drained_calls == 0, "no drained callback while ids are pending");

        /* The kernel lets go: everything is destroyed, the loop hears once. */
        gate(true);
        run_loop(base, 5000);
        ok(destroyed == 8, "all 8 destroyed (%d)", destroyed);
        ok(drained_calls >= 1, "drained callback ran on the loop");
        ok(reaper_pending(r) == 0, "none pending");
        ok(destroyed_on_main == 0, "no destroy ran on the loop's thread");
        ok(reaper_busy_since(r) == 0, "the worker is idle");

        /* Again, to see the counter and the callback rearm. */
        drained_calls = 0;
        reaper_destroy_id(r, fake_id(), false);
        run_loop(base, 5000);
        ok(destroyed == 9 && drained_calls == 1, "a later id is destroyed and drains again");

        /* Parked (a port is down): ids wait, and go once unparked. */
        drained_calls = 0;
        reaper_park(r, true);
        reaper_destroy_id(r, fake_id(), false);
        run_loop(base, 200);
        ok(destroyed == 9 && reaper_pending(r) == 1, "parked: the id waits in the queue");
        reaper_park(r, false);
        run_loop(base, 5000);
        ok(destroyed == 10 && drained_calls == 1, "unparked: destroyed, and the loop hears");
        /* The device gone: parked or not, destroyed at once (the kernel
         * closed its ids itself). */
        drained_calls = 0;
        reaper_park(r, true);
        reaper_destroy_id(r, fake_id(), false);
        run_loop(base, 200);
        ok(destroyed == 10 && reaper_pending(r) == 1, "parked again: the id waits");
        reaper_device_gone(r, true);
        run_loop(base, 5000);
        ok(destroyed == 11 && drained_calls == 1, "the device gone: destroyed, and the loop hears");
        reaper_device_gone(r, false);

        /* A completion failed just before (conn.c): its DREQ goes from the
         * worker, once the id has waited its second, before the destroy. */
        drained_calls = 0;
        {
                struct rdma_cm_id *late = fake_id();
                uint64_t queued = clock_usec(CLOCK_MONOTONIC);

                reaper_destroy_id(r, late, true);
                run_loop(base, 300);
                ok(disconnected == 0 && destroyed == 11, "not disconnected, nor destroyed, within its second");
                run_loop(base, 5000);
                ok(disconnected == 1 && disconnect_id == late, "then disconnected");
                ok(disconnect_at >= queued + 1000000, "a second or more after it was queued (%llu us)",
                   (unsigned long long)(disconnect_at - queued));
                ok(disconnected_on_main == 0 && destroyed_at_disconnect == 11, "on the worker, before its destroy");
                ok(destroyed == 12 && drained_calls == 1, "then destroyed, and the loop hears");
        }
        ok(disconnected == 1, "no other id was disconnected by the reaper");

        /* Freeing with a destroy stuck for good: bounded, and says so. */
        gate(false);
        reaper_destroy_id(r, fake_id(), false);
        usleep(50000);
        t0 = clock_usec(CLOCK_MONOTONIC);
        reaper_free(r, 300);
        took = clock_usec(CLOCK_MONOTONIC) - t0;
        ok(took >= 250000 && took < 2000000, "reaper_free with a stuck destroy returns after its "
           "timeout (%llu us)", (unsigned long long)took);
        ok(destroyed == 12, "the stuck one was not counted as destroyed");
        ok(proc_count("fd") == fds0 + 1, "its eventfd is left to the stuck destroy");
        /* The worker's and any the sanitizer runtime started. */
        threads = proc_count("task");

        /* The kernel lets go at last: the worker finishes and frees the
         * reaper (LeakSanitizer checks the memory at exit). */
        drained_calls = 0;
        gate(true);
        for (t0 = clock_usec(CLOCK_MONOTONIC); (proc_count("fd") != fds0 || proc_count("task") != threads - 1) &&
             clock_usec(CLOCK_MONOTONIC) - t0 < 10000000;)
                usleep(10000);
        ok(destroyed == 13, "the stuck destroy returned, on the worker");
        ok(proc_count("fd") == fds0 && proc_count("task") == threads - 1,
           "the worker closed the eventfd and exited (%d fds, %d threads; %d and %d expected)",
           proc_count("fd"), proc_count("task"), fds0, threads - 1);
        run_loop(base, 100);
        ok(drained_calls == 0, "the freed reaper's loop event is gone");

        /* A fresh reaper frees at once when idle; NULL is safe. */
        ok(reaper_new(&r, base, NULL, NULL) == 0, "second reaper");
        reaper_destroy_id(r, fake_id(), false);
        t0 = clock_usec(CLOCK_MONOTONIC);
        reaper_free(r, 3000);
        took = clock_usec(CLOCK_MONOTONIC) - t0;
        ok(took < 1000000, "an idle reaper frees without waiting out its timeout (%llu us)",
           (unsigned long long)took);
        ok(destroyed == 14, "the queued id was destroyed before the free returned");
        ok(proc_count("fd") == fds0 && proc_count("task") == threads - 1, "and everything of it is gone");
        reaper_free(NULL, 0);
        ok(true, "reaper_free(NULL) is a no-op");

        event_base_free(base);
        return done_testing();
}
