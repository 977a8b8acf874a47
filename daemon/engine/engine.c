/*
 * The engine owns what lives as long as the daemon: the rdma_cm event
 * channel and listener, the device's PD, the receive ring and send pool
 * (registered once, at start-up, before READY=1), and the io_uring. It
 * dispatches CM events to the connection they belong to, and is where
 * engine.h's interface is implemented.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <event2/event.h>

#include "clock.h"
#include "conn.h"
#include "engine.h"
#include "engine-private.h"
#include "relay.h"
#include "partials.h"
#include "incoming.h"
#include "io.h"
#include "log.h"
#include "reaper.h"
#include "recv.h"
#include "send.h"

static void engine_on_cm(evutil_socket_t fd, short what, void *arg)
{
        struct engine *e = arg;
        struct rdma_cm_event *ev;

        while (rdma_get_cm_event(e->ch, &ev) == 0) {
                enum rdma_cm_event_type type = ev->event;
                struct rdma_cm_id *id = ev->id;
                /* Read before the ack: once acked, an id the reaper is
                 * destroying may be freed under us. */
                struct conn *c = id->context;
                bool listener = id == e->listen_id;
                int status = ev->status;
                uint8_t pdata[256];
                size_t plen = 0;

                /* Private data lives in the event: copy it, then ack at once so
                 * that destroying an id never waits on an unacked event. */
                if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
                        plen = MIN(sizeof(pdata), (size_t)ev->param.conn.private_data_len);
                        memcpy(pdata, ev->param.conn.private_data, plen);
                }
                rdma_ack_cm_event(ev);

                log_debug("cm event %s (status %d)", rdma_event_str(type), status);
                switch (type) {
                case RDMA_CM_EVENT_CONNECT_REQUEST:
                        if (e->dev_state == ENGINE_DEV_UP)
                                recv_on_connect_request(e, id, pdata, plen);
                        else
                                reaper_destroy_id(e->reaper, id);
                        continue;
                case RDMA_CM_EVENT_DEVICE_REMOVAL:
                        /* On every id of the device; the first one is enough. */
                        engine_device_lost(e, "RDMA device %s removed", e->dev_name);
                        continue;
                case RDMA_CM_EVENT_ADDR_CHANGE:
                        if (listener) {
                                engine_device_lost(e, "the listen address moved off RDMA device %s",
                                                   e->dev_name);
                                continue;
                        }
                        break;
                default:
                        break;
                }
                if (!listener && c)
                        c->ops->cm_event(c, type, status, pdata, plen);
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK)
                log_err("rdma_get_cm_event: %m");
}

/* Huge-page aligned: fewer translations for the NIC to cache, and for the CPU. */
#define ENGINE_ALIGN    (2u << 20)

static void *engine_alloc(size_t bytes, const char *what)
{
        void *p = NULL;

        if (posix_memalign(&p, ENGINE_ALIGN, bytes)) {
                log_err("cannot allocate %s (%zu MiB)", what, bytes >> 20);
                return NULL;
        }
        /* Advice only: without transparent huge pages this is 4 KiB pages. */
        (void)madvise(p, bytes, MADV_HUGEPAGE);
        /* Touch it now: the pages are pinned by registration anyway. */
        memset(p, 0, bytes);
        return p;
}

static void engine_on_reaped(void *userdata)
{
        engine_device_check(userdata);
}

static void engine_part_removed(const char *name, int r)
{
        if (r < 0)
                log_warning("incoming_dir: cannot remove %s, left by an interrupted overwrite: %s",
                            name, strerror(-r));
        else
                log_notice("incoming_dir: removed %s, left by an overwrite a crash interrupted", name);
}

static void engine_stage_removed(const char *name, int r)
{
        if (r < 0)
                log_warning("incoming_dir: cannot remove %s, left by a job a crash interrupted: %s",
                            name, strerror(-r));
        else
                log_notice("incoming_dir: removed %s, left by a job a crash interrupted", name);
}

/*
 * What a crash left in incoming_dir: an overwrite cut short between its
 * link and its rename (.part files), a tree job's staging directory
 * (nothing of an unfinished job stays). A crashed 100,000-file tree takes
 * a while to remove, so a worker does it, with its own descriptor (a
 * worker stuck on a dead file system keeps only this); until it is done
 * recv_check_offer() answers "busy", and senders retry.
 */
struct engine_clean {
        struct io_req req;
        struct engine *e;
        int dirfd;
        int parts, stages;      /* removed, or -errno */
};

static int64_t engine_clean_fn(void *arg)
{
        struct engine_clean *c = arg;

        c->parts = incoming_clean_parts(c->dirfd, engine_part_removed);
        c->stages = incoming_clean_stages(c->dirfd, engine_stage_removed);
        return 0;
}

static void engine_on_clean(struct io_req *req, int64_t res)
{
        struct engine_clean *c = container_of(req, struct engine_clean, req);
        struct engine *e = c->e;

        (void)res;
        if (c->parts < 0)
                log_warning("incoming_dir %s: looking for leftover .part files: %s",
                            e->cfg->incoming_dir, strerror(-c->parts));
        if (c->stages < 0)
                log_warning("incoming_dir %s: looking for leftover staging directories: %s",
                            e->cfg->incoming_dir, strerror(-c->stages));
        log_debug("incoming_dir: start-up sweep done (%d .part files, %d staging directories)",
                  c->parts, c->stages);
        safe_close(c->dirfd);
        free(c);
        e->clean = NULL;
        e->incoming_clean = true;
}

static int engine_clean_start(struct engine *e)
{
        struct engine_clean *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->e = e;
        c->dirfd = fcntl(e->incoming_fd, F_DUPFD_CLOEXEC, 3);
        if (c->dirfd < 0) {
                r = -errno;
                free(c);
                return r;
        }
        c->req.done = engine_on_clean;
        r = io_call(e->io, &c->req, engine_clean_fn, c);
        if (r < 0) {
                log_err("cannot start a worker to sweep incoming_dir: %s", strerror(-r));
                safe_close(c->dirfd);
                free(c);
                return r;
        }
        e->clean = c;
        return 0;
}

/* cfg rate_limit, one bucket each way; a chunk is at most a slot of ours. */
static void engine_set_rate_limit(struct engine *e)
{
        uint64_t rate = e->cfg->rate_limit, now = clock_usec(CLOCK_MONOTONIC);

        for (int dir = 0; dir < XFER_DIRS; dir++)
                bucket_set(&e->rate_limit[dir], rate, bucket_burst(rate, e->slot_size), now);
}

/* The umask, read without changing it (umask(2) cannot, and other
 * threads may create files meanwhile): /proc/self/status has it since
 * Linux 4.7. 07777 when it cannot be told. */
static mode_t engine_umask(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        mode_t um = 07777;
        char line[128];
        unsigned int m;

        while (f && fgets(line, sizeof(line), f)) {
                if (sscanf(line, "Umask: %o", &m) == 1 && m <= 0777) {
                        um = (mode_t)m;
                        break;
                }
        }
        if (f)
                fclose(f);
        return um;
}

int engine_new(struct engine **out, const struct engine_params *p)
{
        const struct config *cfg = p->cfg;
        struct engine *e;
        int flags, r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->base = p->base;
        e->cfg = p->cfg;
        e->key = p->key;
        e->ops = p->ops;
        e->owner = p->owner;
        e->incoming_fd = -1;
        e->partial_fd = -1;
        e->ring = RING_NULL;
        e->send_ring = RING_NULL;
        e->slot_size = cfg->slot_size;
        e->umask = engine_umask();
        engine_set_rate_limit(e);

        e->incoming_fd = open(cfg->incoming_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (e->incoming_fd < 0) {
                r = -errno;
                log_err("incoming_dir %s: %m", cfg->incoming_dir);
                goto fail;
        }
        r = partials_open(e);
        if (r < 0)
                goto fail;

        e->ring_bytes = (size_t)cfg->slot_size * cfg->slot_count;
        e->ring_mem = engine_alloc(e->ring_bytes, "receive ring");
        e->send_bytes = (size_t)cfg->slot_size * cfg->send_slots * cfg->max_transfers;
        e->send_mem = engine_alloc(e->send_bytes, "send pool");
        if (!e->ring_mem || !e->send_mem) {
                r = -ENOMEM;
                goto fail;
        }
        r = ring_init(&e->ring, cfg->slot_count, cfg->slot_count / cfg->max_transfers);
        if (r < 0)
                goto fail;
        /* A share of slot_count / max_transfers may leave room for one more. */
        ring_set_conns_max(&e->ring, cfg->max_transfers);
        r = ring_init(&e->send_ring, cfg->send_slots * cfg->max_transfers, cfg->send_slots);
        if (r < 0)
                goto fail;

        r = reaper_new(&e->reaper, e->base, engine_on_reaped, e);
        if (r < 0) {
                log_err("cannot start the connection reaper: %s", strerror(-r));
                goto fail;
        }
        e->env = (struct conn_env){ .base = e->base, .reaper = e->reaper };
        r = engine_device_init(e);
        if (r < 0)
                goto fail;

        e->ch = rdma_create_event_channel();
        if (!e->ch) {
                r = -errno;
                log_err("rdma_create_event_channel: %m (is /dev/infiniband/rdma_cm there and allowed?)");
                goto fail;
        }
        flags = fcntl(e->ch->fd, F_GETFL);
        if (flags < 0 || fcntl(e->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                goto fail;
        }
        r = engine_device_open(e, false);
        if (r < 0)
                goto fail;

        r = io_new(&e->io, e->base, cfg->slot_count + cfg->send_slots * cfg->max_transfers + 16);
        if (r < 0) {
                log_err("cannot set up io_uring: %s", strerror(-r));
                goto fail;
        }

        r = engine_clean_start(e);
        if (r < 0)
                goto fail;

        e->ch_ev = event_new(e->base, e->ch->fd, EV_READ | EV_PERSIST, engine_on_cm, e);
        if (!e->ch_ev || event_add(e->ch_ev, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        log_info("RDMA device %s: receive ring %u x %u bytes (%zu MiB), %u per connection "
                 "(more while fewer receive); send pool %u x %u bytes (%zu MiB)",
                 e->dev_name, cfg->slot_count, cfg->slot_size,
                 e->ring_bytes >> 20, e->ring.share, cfg->send_slots * cfg->max_transfers,
                 cfg->slot_size, e->send_bytes >> 20);
        *out = e;
        return 0;

fail:
        engine_free(e);
        return r;
}

struct engine_fstat {
        struct io_req req;
        struct engine *e;
        int fd;                         /* the owner's, ours until fn */
        struct statx stx;
        engine_fstat_fn fn;             /* NULL once cancelled */
        void *userdata;
        struct engine_fstat *next;      /* e->fstats */
};

static void engine_fstat_unlink(struct engine_fstat *f)
{
        for (struct engine_fstat **p = &f->e->fstats; *p; p = &(*p)->next)
                if (*p == f) {
                        *p = f->next;
                        return;
                }
}

static void engine_on_fstat(struct io_req *req, int64_t res)
{
        struct engine_fstat *f = container_of(req, struct engine_fstat, req);
        engine_fstat_fn fn = f->fn;
        void *userdata = f->userdata;
        bool regular = S_ISREG(f->stx.stx_mode);
        uint64_t size = f->stx.stx_size;
        int fd = f->fd;

        engine_fstat_unlink(f);
        free(f);
        if (!fn) {
                safe_close(fd);
                return;
        }
        fn(userdata, fd, res < 0 ? (int)res : 0, regular, size);
}

int engine_fstat(struct engine *e, int fd, engine_fstat_fn fn, void *userdata,
                 struct engine_fstat **out)
{
        struct engine_fstat *f;
        int r;

        f = calloc(1, sizeof(*f));
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }
        f->fd = fd;
        f->e = e;
        f->fn = fn;
        f->userdata = userdata;
        f->req.done = engine_on_fstat;
        r = io_statx(e->io, &f->req, f->fd, "", AT_EMPTY_PATH, &f->stx);
        if (r < 0) {
                safe_close(f->fd);
                free(f);
                return r;
        }
        f->next = e->fstats;
        e->fstats = f;
        *out = f;
        return 0;
}

void engine_fstat_cancel(struct engine_fstat *f)
{
        f->fn = NULL;
        io_cancel(f->e->io, &f->req);
}

void engine_io_hold(struct engine *e)
{
        io_hold(e->io);
}

void engine_io_release(struct engine *e)
{
        io_release(e->io);
}

static void engine_fstat_free_all(struct engine *e, bool keep)
{
        struct engine_fstat *f;

        while ((f = e->fstats)) {
                e->fstats = f->next;
                if (keep)
                        continue;
                safe_close(f->fd);
                free(f);
        }
}

/* How long engine_free() waits for ids still being destroyed. */
#define ENGINE_REAPER_WAIT_MS   3000u

void engine_free(struct engine *e)
{
        bool keep;

        if (!e)
                return;
        e->freeing = true;
        if (e->stop_ev)
                event_free(e->stop_ev);
        if (e->ch_ev)
                event_free(e->ch_ev);
        /*
         * Transfers still running (a second signal, a failed start): their
         * queue pairs go first, so nothing is written into the ring or read
         * from the pool any more; then the disk I/O in flight drains (its
         * callbacks are not run); then each connection's CQ, MR, channel
         * and id, and the transfers themselves.
         */
        xfer_kill_qps(e);
        /*
         * A disk request the kernel would not give up (a FUSE server that
         * never answers, a hard NFS mount) may still write into a transfer,
         * a slot of the ring or pool, or an fstat: that memory is left to it.
         * The process exits anyway (the kernel holds it until the request
         * returns, or the file system is aborted).
         */
        keep = io_free(e->io) > 0;
        e->io = NULL;
        /* Its callback never ran; a worker stuck in it keeps it. */
        if (e->clean && !keep) {
                safe_close(e->clean->dirfd);
                free(e->clean);
        }
        xfer_free_all(e, keep);
        relay_free_all(e);
        engine_fstat_free_all(e, keep);
        partials_close(e, keep);
        /* The ids, bounded: one stuck in the kernel is left to exit. */
        reaper_free(e->reaper, ENGINE_REAPER_WAIT_MS);
        e->reaper = NULL;
        engine_device_deinit(e);
        ring_deinit(&e->send_ring);
        if (!keep)
                free(e->send_mem);
        ring_deinit(&e->ring);
        if (!keep)
                free(e->ring_mem);
        if (e->ch)
                rdma_destroy_event_channel(e->ch);
        safe_close(e->incoming_fd);
        free(e);
}

void engine_reconfigure(struct engine *e)
{
        ring_set_conns_max(&e->ring, e->cfg->max_transfers);
        ring_set_conns_max(&e->send_ring, e->cfg->max_transfers);
        engine_set_rate_limit(e);
        /* Those waiting for tokens under the old rate look again now. */
        xfer_pace_kick(e);
}

static void engine_on_stopped(evutil_socket_t fd, short what, void *arg)
{
        struct engine *e = arg;

        if (e->stop_done)
                e->stop_done(e->stop_userdata);
}

void engine_xfer_gone(struct engine *e)
{
        engine_device_check(e);
        if (e->stopping && !e->xfers[XFER_RECV] && !e->xfers[XFER_SEND] && e->stop_ev)
                event_active(e->stop_ev, 0, 0);
}

void engine_stop(struct engine *e, void (*done)(void *userdata), void *userdata)
{
        struct xfer *x, *xn;

        if (e->stopping)
                return;
        e->stopping = true;
        e->stop_done = done;
        e->stop_userdata = userdata;
        e->stop_ev = event_new(e->base, -1, 0, engine_on_stopped, e);

        /* No new connections: the listener goes first. */
        if (e->listen_id) {
                rdma_destroy_id(e->listen_id);
                e->listen_id = NULL;
        }
        /* Reaping is deferred, so nothing leaves the lists under us. */
        for (x = xfer_first(e, XFER_RECV); x; x = xn) {
                xn = x->next;
                recv_abort(x, WIRE_E_SHUTDOWN, NULL);
        }
        for (x = xfer_first(e, XFER_SEND); x; x = xn) {
                xn = x->next;
                send_abort(x, ENGINE_FAILED, WIRE_E_SHUTDOWN, "daemon shutting down");
        }
        engine_xfer_gone(e);
}

unsigned int engine_recv_active(const struct engine *e)
{
        unsigned int n = 0;

        for (const struct xfer *x = e->xfers[XFER_RECV]; x; x = x->next)
                n += x->state == XFER_DATA || x->state == XFER_FINISHING;
        return n;
}

uint64_t engine_recv_rate(struct engine *e)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC), sum = 0;

        /* Rate since the previous call (STATUS= asks about once a second). */
        for (struct xfer *x = e->xfers[XFER_RECV]; x; x = x->next) {
                if (x->state != XFER_DATA)
                        continue;
                if (x->rate_t && now > x->rate_t)
                        sum += (x->bytes - x->rate_bytes) * 1000000u / (now - x->rate_t);
                x->rate_bytes = x->bytes;
                x->rate_t = now;
        }
        return sum;
}

void engine_stats(const struct engine *e, struct engine_stats *s)
{
        *s = (struct engine_stats){
                .recv = e->recv_tally,
                .recv_active = engine_recv_active(e),
                .ring_held = e->ring.count - e->ring.nfree,
                .ring_slots = e->ring.count,
                .pool_held = e->send_ring.count - e->send_ring.nfree,
                .pool_slots = e->send_ring.count,
        };
}

int engine_send(struct engine *e, const struct engine_send_req *req,
                const struct engine_send_ops *ops, void *owner, struct engine_send **out)
{
        if (e->stopping)
                return -ESHUTDOWN;
        if (e->dev_state != ENGINE_DEV_UP)
                return ENGINE_SEND_NODEV;
        /* Only the engine's own relays speak for another's source. */
        if (req->relay_source)
                return -EINVAL;
        return send_start(e, req, ops, owner, NULL, out);
}

void engine_send_resume(struct engine_send *s)
{
        send_resume(s);
}

void engine_send_cancel(struct engine_send *s)
{
        send_abort(&s->base, ENGINE_CANCELLED, WIRE_OK, "cancelled");
}

void engine_send_progress(const struct engine_send *s, struct engine_progress *p)
{
        const struct xfer *x = &s->base;

        p->bytes = x->bytes;
        p->usec = x->t_last > x->t_start ? x->t_last - x->t_start : 0;
        p->skipped = s->skipped;
        p->hops = s->route_hops;
        memset(p->hop_bytes, 0, sizeof(p->hop_bytes));
        if (s->route_hops)
                memcpy(p->hop_bytes, s->hop_bytes, s->route_hops * sizeof(*s->hop_bytes));
}
