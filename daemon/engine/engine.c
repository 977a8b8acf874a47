/*
 * The engine's composition (engine.h): what lives as long as the daemon,
 * and the layers it wires together, each with its own context:
 *
 *   transport/  the rdma_cm event channel (ours), the device with its
 *               listener, PD and registered memory (device), connections'
 *               env, the id reaper; the owner's io_uring (io)
 *   transfer/   both directions' transfers (xfer_env): the receive ring,
 *               the send pool, the shared rate limit, the deadlines
 *   send/       the sending side (send_env)
 *   recv/       the receiving side (recv_env), relays included
 *
 * It dispatches CM events to the connection they belong to, answers the
 * layers' calls back (a transfer gone, the device lost), and turns the
 * owner's configuration into each layer's own copy.
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/mempolicy.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <event2/event.h>

#include "clock.h"
#include "config.h"
#include "conn.h"
#include "device.h"
#include "engine.h"
#include "incoming.h"
#include "io.h"
#include "landc.h"
#include "log.h"
#include "partials.h"
#include "reaper.h"
#include "recv.h"
#include "relay.h"
#include "send.h"
#include "xfer.h"

struct engine_clean;

struct engine {
        struct event_base *base;
        const struct engine_ops *ops;
        void *owner;
        char incoming_dir[PATH_MAX];    /* for messages */
        struct rdma_event_channel *ch;
        struct event *ch_ev;
        /* The rails: a device per listen address, each with the env its
         * connections are made on (base, verbs, pd, reaper) and a reaper
         * of its own (a port down parks only its ids). dev[0] is the
         * node's address; a connection not yet on a device is on it. */
        struct conn_env env[CONFIG_RAILS_MAX];
        struct reaper *reaper[CONFIG_RAILS_MAX];
        struct device dev[CONFIG_RAILS_MAX];
        unsigned int ndev;
        /* Receive ring: slot_count slots of slot_size, shared out by ring;
         * send pool: max_transfers shares of send_slots chunks. */
        uint8_t *ring_mem;
        size_t ring_bytes;
        struct ring ring;
        uint8_t *send_mem;
        size_t send_bytes;
        struct ring send_ring;
        /* The layers' contexts. */
        struct xfer_env xe;
        struct send_env se;
        struct recv_env re;
        /* Start-up's sweep of what a crash left in incoming_dir, on a
         * worker: until it is done, offers are refused as busy. */
        struct engine_clean *clean;
        bool stopping;
        bool freeing;                   /* engine_free: no callbacks */
        void (*stop_done)(void *userdata);
        void *stop_userdata;
        struct event *stop_ev;
};

/* The rail whose listener @id is, or NULL. */
static struct device *engine_listener_of(struct engine *e, const struct rdma_cm_id *id)
{
        for (unsigned int i = 0; i < e->ndev; i++)
                if (id && e->dev[i].listen_id == id)
                        return &e->dev[i];
        return NULL;
}

/* The rail an id is on: its listener's, or its device's (the first rail
 * while it is on none, or on a device no rail holds: with the wildcard). */
/* The rail @id is on: its listener's, or the one whose device it is on;
 * NULL for none (an id of a device already released, whose removal the
 * rails heard of first: not another rail's). */
static struct device *engine_rail_of(struct engine *e, const struct rdma_cm_id *id)
{
        struct device *d = engine_listener_of(e, id);

        if (!d && id->verbs)
                d = device_of_verbs(e->dev, e->ndev, id->verbs);
        return d;
}

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
                struct device *rail = engine_listener_of(e, ev->listen_id ?: id);
                bool listener = rail && id == rail->listen_id;
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
                        if (rail && rail->state == DEVICE_UP)
                                recv_on_connect_request(&e->re, rail, id, pdata, plen);
                        else
                                reaper_destroy_id(rail ? rail->reaper : e->reaper[0], id, false);
                        continue;
                case RDMA_CM_EVENT_DEVICE_REMOVAL:
                        /* On every id of the device; the first one is enough
                         * (the rail is released then: the others find none). */
                        rail = engine_rail_of(e, id);
                        if (rail)
                                device_lost(rail, "RDMA device %s removed", rail->name);
                        continue;
                case RDMA_CM_EVENT_ADDR_CHANGE:
                        if (listener) {
                                device_lost(rail, "the listen address moved off RDMA device %s", rail->name);
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

/*
 * The NUMA node of the device behind listen address @addr, as sysfs says
 * for the network interface that holds it (a RoCE port's netdev, or an
 * IPoIB one: the HCA's PCI function either way); -1 when not known (a
 * wildcard, a virtual interface such as rxe's veth, no NUMA).
 */
static int engine_addr_node(const char *addr)
{
        struct in6_addr a6;
        struct in_addr a4;
        struct ifaddrs *list, *i;
        char path[IF_NAMESIZE + 48], buf[16];
        int node = -1, fam;
        FILE *f;

        fam = inet_pton(AF_INET, addr, &a4) == 1 ? AF_INET : inet_pton(AF_INET6, addr, &a6) == 1 ? AF_INET6 : 0;
        if (!fam || getifaddrs(&list) < 0)
                return -1;
        for (i = list; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != fam)
                        continue;
                if (fam == AF_INET ? memcmp(&((struct sockaddr_in *)i->ifa_addr)->sin_addr, &a4, sizeof(a4)) :
                    memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &a6, sizeof(a6)))
                        continue;
                snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", i->ifa_name);
                f = fopen(path, "re");
                if (f) {
                        if (fgets(buf, sizeof(buf), f))
                                node = atoi(buf);
                        fclose(f);
                }
                break;
        }
        freeifaddrs(list);
        return node;
}

/* The NUMA node every rail's device is on, or -1 (rails on several, or
 * one not known): where the rings go (engine_alloc). */
static int engine_rails_node(const struct config *cfg)
{
        int node = -1;

        for (unsigned int i = 0; i < MAX(1u, MIN(cfg->nrails, (unsigned int)CONFIG_RAILS_MAX)); i++) {
                int n = engine_addr_node(cfg->rails[i]);

                if (n < 0 || (i > 0 && n != node))
                        return -1;
                node = n;
        }
        return node;
}

static void *engine_alloc(size_t bytes, const char *what, int node)
{
        void *p = NULL;

        if (posix_memalign(&p, ENGINE_ALIGN, bytes)) {
                log_err("cannot allocate %s (%zu MiB)", what, bytes >> 20);
                return NULL;
        }
        /* Advice only: without transparent huge pages this is 4 KiB pages. */
        (void)madvise(p, bytes, MADV_HUGEPAGE);
        /* On the rails' node, before a page of it is touched: preferred, not
         * bound (a node short of memory still gives it elsewhere). */
        if (node >= 0 && node < 64) {
                unsigned long mask = 1ul << node;

                if (syscall(SYS_mbind, p, bytes, MPOL_PREFERRED, &mask, 64ul, 0u) < 0)
                        log_warning("%s: cannot prefer NUMA node %d: %m", what, node);
        }
        /* Touch it now: the pages are pinned by registration anyway. */
        memset(p, 0, bytes);
        return p;
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
                            e->incoming_dir, strerror(-c->parts));
        if (c->stages < 0)
                log_warning("incoming_dir %s: looking for leftover staging directories: %s",
                            e->incoming_dir, strerror(-c->stages));
        log_debug("incoming_dir: start-up sweep done (%d .part files, %d staging directories)",
                  c->parts, c->stages);
        safe_close(c->dirfd);
        free(c);
        e->clean = NULL;
        e->re.incoming_clean = true;
}

static int engine_clean_start(struct engine *e)
{
        struct engine_clean *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->e = e;
        c->dirfd = fcntl(e->re.incoming_fd, F_DUPFD_CLOEXEC, 3);
        if (c->dirfd < 0) {
                r = -errno;
                free(c);
                return r;
        }
        c->req.done = engine_on_clean;
        r = io_call(e->xe.io, &c->req, engine_clean_fn, c);
        if (r < 0) {
                log_err("cannot start a worker to sweep incoming_dir: %s", strerror(-r));
                safe_close(c->dirfd);
                free(c);
                return r;
        }
        e->clean = c;
        return 0;
}

/*
 * A rail at start-up: its device, address and NUMA node as sysfs says
 * (rdmaxferd(8), Rails: the rings are one allocation for every rail, on
 * the rails' node when they share one, engine_rails_node; otherwise the
 * log says where each device sits, for an admin who pins the daemon with
 * NUMAPolicy= or numactl).
 */
static void engine_rail_say(const struct device *d)
{
        char path[128], node[16] = "";
        FILE *f;

        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", d->name);
        f = fopen(path, "re");
        if (f) {
                if (!fgets(node, sizeof(node), f))
                        node[0] = '\0';
                fclose(f);
        }
        node[strcspn(node, "\n")] = '\0';
        log_info("rail %u: RDMA device %s, %s:%u, NUMA node %s", d->idx + 1, d->name, d->cfg.listen_addr,
                 d->cfg.port, node[0] && strcmp(node, "-1") ? node : "not known");
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


/* ---- the layers' calls back ---- */

/* A transfer left its list (xfer_env): a lost device may let go now, a stop be done. */
static void engine_check_all(struct engine *e)
{
        for (unsigned int i = 0; i < e->ndev; i++)
                device_check(&e->dev[i]);
}

static void engine_xfer_gone(void *owner)
{
        struct engine *e = owner;

        engine_check_all(e);
        if (e->stopping && !xfer_any(&e->xe) && e->stop_ev)
                event_active(e->stop_ev, 0, 0);
}

static const struct xfer_env_ops engine_xfer_env_ops = {
        .gone = engine_xfer_gone,
};

static void engine_on_reaped(void *userdata)
{
        struct engine *e = userdata;

        engine_check_all(e);
}

/* With one rail every transfer is on it; with more, those with a lane on @d. */
static const struct conn_env *engine_env_of(struct engine *e, struct device *d)
{
        return e->ndev > 1 ? d->env : NULL;
}

static unsigned int engine_dev_kill_all(void *owner, struct device *d, const char *text)
{
        struct engine *e = owner;

        return xfer_kill_all(&e->xe, engine_env_of(e, d), WIRE_E_INTERNAL, text);
}

static bool engine_dev_busy(void *owner, struct device *d)
{
        struct engine *e = owner;

        return xfer_on(&e->xe, engine_env_of(e, d));
}

static void engine_dev_changed(void *owner, struct device *d, bool up, const char *text)
{
        struct engine *e = owner;

        /* Another rail's loss leaves the node reachable: its transfers
         * fail (and retry over the rest), nothing waits for it. */
        if (d == &e->dev[0] && e->ops && e->ops->device)
                e->ops->device(e->owner, up, text);
}

static const struct device_ops engine_device_ops = {
        .kill_all = engine_dev_kill_all,
        .busy = engine_dev_busy,
        .changed = engine_dev_changed,
};

/* ---- configuration: each layer's own copy ---- */

static void engine_cfg_xfer(const struct config *cfg, struct xfer_cfg *out)
{
        *out = (struct xfer_cfg){
                .peer_timeout = cfg->peer_timeout,
                .io_timeout = cfg->io_timeout,
                .min_rate = cfg->min_rate,
                .rate_limit = cfg->rate_limit,
                .lanes = cfg->lanes,
                .slot_size = cfg->slot_size,
        };
}

static void engine_cfg_recv(const struct config *cfg, struct recv_cfg *out)
{
        *out = (struct recv_cfg){
                .allow_peers = cfg->allow_peers,
                .relay_peers = *config_relay_peers(cfg),
                .relay = cfg->relay,
                .overwrite = cfg->overwrite,
                .tree_symlinks = cfg->tree_symlinks,
                .tree_delete = cfg->tree_delete,
                .names = cfg->names == CONFIG_NAMES_STRICT ? NAME_RULES_STRICT :
                         cfg->names == CONFIG_NAMES_UTF8   ? NAME_RULES_UTF8 :
                                                             NAME_RULES_ANY,
                .log_level = cfg->log_level,
                .max_transfers = cfg->max_transfers,
                .per_host = config_per_host(cfg),
                .max_job_files = cfg->max_job_files,
                .max_file_size = cfg->max_file_size,
                .max_job_bytes = cfg->max_job_bytes,
                .min_free = cfg->min_free,
                .partial_max_bytes = cfg->partial_max_bytes,
                .partial_retention = cfg->partial_retention,
        };
        snprintf(out->partial_dir, sizeof(out->partial_dir), "%s", cfg->partial_dir);
        out->user_landing = cfg->landing_roots[0] != '\0';
        snprintf(out->lander_socket, sizeof(out->lander_socket), "%s", cfg->lander_socket);
}

unsigned int engine_io_depth(const struct config *cfg)
{
        return cfg->slot_count + cfg->send_slots * cfg->max_transfers + 16;
}

int engine_new(struct engine **out, const struct engine_params *p)
{
        const struct config *cfg = p->cfg;
        struct device_cfg dcfg = { .port = cfg->port, .tos = cfg->tos };
        struct xfer_cfg xcfg;
        char names[CONFIG_RAILS_MAX * 66] = "";
        struct engine *e;
        int flags, node, r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->base = p->base;
        e->ops = p->ops;
        e->owner = p->owner;
        snprintf(e->incoming_dir, sizeof(e->incoming_dir), "%s", cfg->incoming_dir);
        e->ndev = MAX(1u, MIN(cfg->nrails, (unsigned int)CONFIG_RAILS_MAX));
        e->ring = RING_NULL;
        e->send_ring = RING_NULL;
        engine_cfg_xfer(cfg, &xcfg);
        e->xe = (struct xfer_env){ .base = e->base, .io = p->io, .conn = &e->env[0],
                                   .ring = { [XFER_RECV] = &e->ring, [XFER_SEND] = &e->send_ring },
                                   .ops = &engine_xfer_env_ops, .owner = e };
        xfer_env_reconfigure(&e->xe, &xcfg);
        e->se = (struct send_env){ .xe = &e->xe, .dev = e->dev, .ndev = e->ndev, .key = p->key, .slot_size = cfg->slot_size,
                                   .cfg = { .tos = cfg->tos } };
        e->re = (struct recv_env){ .xe = &e->xe, .send = &e->se, .base = e->base, .io = p->io, .dev = e->dev, .ndev = e->ndev,
                                   .ring = &e->ring, .slot_size = cfg->slot_size, .key = p->key,
                                   .incoming_fd = -1, .partial_fd = -1, .umask = engine_umask() };
        engine_cfg_recv(cfg, &e->re.cfg);

        e->re.incoming_fd = open(cfg->incoming_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (e->re.incoming_fd < 0) {
                r = -errno;
                log_err("incoming_dir %s: %m", cfg->incoming_dir);
                goto fail;
        }
        r = partials_open(&e->re, cfg->incoming_dir);
        if (r < 0)
                goto fail;

        e->ring_bytes = (size_t)cfg->slot_size * cfg->slot_count;
        node = engine_rails_node(cfg);
        e->ring_mem = engine_alloc(e->ring_bytes, "receive ring", node);
        e->send_bytes = (size_t)cfg->slot_size * cfg->send_slots * cfg->max_transfers;
        e->send_mem = engine_alloc(e->send_bytes, "send pool", node);
        if (node >= 0)
                log_info("the rings (%zu MiB) are on NUMA node %d, where every rail's device is",
                         (e->ring_bytes + e->send_bytes) >> 20, node);
        if (!e->ring_mem || !e->send_mem) {
                r = -ENOMEM;
                goto fail;
        }
        e->re.ring_mem = e->ring_mem;
        e->se.pool = e->send_mem;
        r = ring_init(&e->ring, cfg->slot_count, cfg->slot_count / cfg->max_transfers);
        if (r < 0)
                goto fail;
        /* A share of slot_count / max_transfers may leave room for one more. */
        ring_set_conns_max(&e->ring, cfg->max_transfers);
        r = ring_init(&e->send_ring, cfg->send_slots * cfg->max_transfers, cfg->send_slots);
        if (r < 0)
                goto fail;

        for (unsigned int i = 0; i < e->ndev; i++) {
                r = reaper_new(&e->reaper[i], e->base, engine_on_reaped, e);
                if (r < 0) {
                        log_err("cannot start the connection reaper: %s", strerror(-r));
                        goto fail;
                }
                e->env[i] = (struct conn_env){ .base = e->base, .reaper = e->reaper[i] };
        }

        e->ch = rdma_create_event_channel();
        if (!e->ch) {
                r = -errno;
                log_err("rdma_create_event_channel: %m (is /dev/infiniband/rdma_cm there and allowed?)");
                goto fail;
        }
        e->se.ch = e->ch;
        flags = fcntl(e->ch->fd, F_GETFL);
        if (flags < 0 || fcntl(e->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                r = -errno;
                goto fail;
        }
        /* Every rail registers the ring and the pool: a lane posts from
         * them with its own rail's keys. Each must open at start-up. */
        for (unsigned int i = 0; i < e->ndev; i++) {
                struct device *d = &e->dev[i];

                snprintf(dcfg.listen_addr, sizeof(dcfg.listen_addr), "%s", cfg->rails[i]);
                r = device_init(d, e->base, e->ch, e->reaper[i], &e->env[i], &dcfg, &engine_device_ops, e);
                if (r < 0)
                        goto fail;
                d->idx = i;
                e->re.ring_idx = e->se.ring_mem = device_add_mem(d, e->ring_mem, e->ring_bytes, "receive ring");
                e->se.pool_mem = device_add_mem(d, e->send_mem, e->send_bytes, "send pool");
                r = device_open(d, false);
                if (r < 0)
                        goto fail;
                /* A rail is a device: two addresses of one would share its
                 * ports and register everything twice for nothing. */
                for (unsigned int j = 0; j < i; j++) {
                        if (e->dev[j].verbs == d->verbs) {
                                log_err("listen: %s and %s are both on RDMA device %s: give one address "
                                        "per device (rdmaxferd.conf(5), listen)", cfg->rails[j], cfg->rails[i],
                                        d->name);
                                r = -EINVAL;
                                goto fail;
                        }
                }
                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", d->name);
                if (e->ndev > 1)
                        engine_rail_say(d);
        }

        e->ch_ev = event_new(e->base, e->ch->fd, EV_READ | EV_PERSIST, engine_on_cm, e);
        if (!e->ch_ev || event_add(e->ch_ev, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        /* Last: nothing of ours is out on a worker when a step fails. */
        r = engine_clean_start(e);
        if (r < 0)
                goto fail;
        log_info("RDMA device%s %s: receive ring %u x %u bytes (%zu MiB), %u per connection "
                 "(more while fewer receive); send pool %u x %u bytes (%zu MiB)",
                 e->ndev > 1 ? "s" : "", names, cfg->slot_count, cfg->slot_size,
                 e->ring_bytes >> 20, e->ring.share, cfg->send_slots * cfg->max_transfers,
                 cfg->slot_size, e->send_bytes >> 20);
        *out = e;
        return 0;

fail:
        engine_quiesce(e);
        engine_free(e, false);
        return r;
}

/* How long engine_free() waits for ids still being destroyed. */
#define ENGINE_REAPER_WAIT_MS   3000u

void engine_quiesce(struct engine *e)
{
        if (!e)
                return;
        e->freeing = true;
        for (unsigned int i = 0; i < e->ndev; i++)
                e->dev[i].stopping = true;
        e->re.freeing = true;
        if (e->stop_ev)
                event_free(e->stop_ev);
        e->stop_ev = NULL;
        if (e->ch_ev)
                event_free(e->ch_ev);
        e->ch_ev = NULL;
        /*
         * Transfers still running (a second signal, a failed start): their
         * queue pairs go first, so nothing is written into the ring or read
         * from the pool any more. The owner then drains the disk I/O
         * (io_free), whose callbacks are not run, before engine_free().
         */
        xfer_kill_qps(&e->xe);
}

void engine_free(struct engine *e, bool keep)
{
        if (!e)
                return;
        /*
         * A disk request the kernel would not give up (a FUSE server that
         * never answers, a hard NFS mount) may still write into a transfer
         * or a slot of the ring or pool: with @keep that memory is left to
         * it. The process exits anyway (the kernel holds it until the
         * request returns, or the file system is aborted).
         */
        /* Its callback never ran; a worker stuck in it keeps it. */
        if (e->clean && !keep) {
                safe_close(e->clean->dirfd);
                free(e->clean);
        }
        /* Each connection's CQ, MR, channel and id, and the transfers themselves. */
        xfer_free_all(&e->xe, keep);
        relay_free_all(&e->re);
        partials_close(&e->re, keep);
        recv_land_kept_free_all(&e->re);
        landc_free(e->re.landc);
        e->re.landc = NULL;
        /* The ids, bounded: one stuck in the kernel is left to exit. */
        for (unsigned int i = 0; i < CONFIG_RAILS_MAX; i++) {
                reaper_free(e->reaper[i], ENGINE_REAPER_WAIT_MS);
                e->reaper[i] = NULL;
        }
        for (unsigned int i = 0; i < e->ndev; i++)
                device_deinit(&e->dev[i]);
        ring_deinit(&e->send_ring);
        if (!keep)
                free(e->send_mem);
        ring_deinit(&e->ring);
        if (!keep)
                free(e->ring_mem);
        if (e->ch)
                rdma_destroy_event_channel(e->ch);
        safe_close(e->re.incoming_fd);
        free(e);
}

void engine_reconfigure(struct engine *e, const struct config *cfg)
{
        struct xfer_cfg xcfg;

        ring_set_conns_max(&e->ring, cfg->max_transfers);
        ring_set_conns_max(&e->send_ring, cfg->max_transfers);
        /* Each layer its own copy, replaced whole; a worker reads none. */
        engine_cfg_xfer(cfg, &xcfg);
        xfer_env_reconfigure(&e->xe, &xcfg);
        engine_cfg_recv(cfg, &e->re.cfg);
        e->se.cfg.tos = cfg->tos;
}

static void engine_on_stopped(evutil_socket_t fd, short what, void *arg)
{
        struct engine *e = arg;

        if (e->stop_done)
                e->stop_done(e->stop_userdata);
}

void engine_stop(struct engine *e, void (*done)(void *userdata), void *userdata)
{
        struct xfer *x, *xn;

        if (e->stopping)
                return;
        e->stopping = true;
        for (unsigned int i = 0; i < e->ndev; i++)
                e->dev[i].stopping = true;
        e->re.stopping = true;
        e->stop_done = done;
        e->stop_userdata = userdata;
        e->stop_ev = event_new(e->base, -1, 0, engine_on_stopped, e);

        /* No new connections: the listeners go first. */
        for (unsigned int i = 0; i < e->ndev; i++) {
                if (e->dev[i].listen_id) {
                        rdma_destroy_id(e->dev[i].listen_id);
                        e->dev[i].listen_id = NULL;
                }
        }
        /* Reaping is deferred, so nothing leaves the lists under us. */
        for (x = xfer_first(&e->xe, XFER_RECV); x; x = xn) {
                xn = x->next;
                recv_abort(x, WIRE_E_SHUTDOWN, NULL);
        }
        for (x = xfer_first(&e->xe, XFER_SEND); x; x = xn) {
                xn = x->next;
                send_abort(x, ENGINE_FAILED, WIRE_E_SHUTDOWN, "daemon shutting down");
        }
        engine_xfer_gone(e);
}

unsigned int engine_recv_active(const struct engine *e)
{
        unsigned int n = 0;

        for (const struct xfer *x = e->xe.xfers[XFER_RECV]; x; x = x->next)
                n += x->state == XFER_DATA || x->state == XFER_FINISHING;
        return n;
}

uint64_t engine_recv_rate(struct engine *e)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC), sum = 0;

        /* Rate since the previous call (STATUS= asks about once a second). */
        for (struct xfer *x = e->xe.xfers[XFER_RECV]; x; x = x->next) {
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
                .recv = e->re.recv_tally,
                .recv_active = engine_recv_active(e),
                .recv_wire_bytes = e->xe.wire_bytes[XFER_RECV],
                .send_wire_bytes = e->xe.wire_bytes[XFER_SEND],
                .ring_held = e->ring.count - e->ring.nfree,
                .ring_slots = e->ring.count,
                .pool_held = e->send_ring.count - e->send_ring.nfree,
                .pool_slots = e->send_ring.count,
        };
        static_assert(ARRAY_SIZE(s->rail) == CONFIG_RAILS_MAX, "a rail's stats each");
        s->nrails = e->ndev;
        for (unsigned int i = 0; i < e->ndev; i++) {
                const struct device *d = &e->dev[i];

                /* A rail down keeps its last device's name. */
                s->rail[i] = (struct engine_rail_stats){ .bytes_in = d->bytes_in, .bytes_out = d->bytes_out,
                                                         .up = device_usable(d) };
                snprintf(s->rail[i].name, sizeof(s->rail[i].name), "%s",
                         d->name[0] ? d->name : d->cfg.listen_addr);
        }
}

int engine_send(struct engine *e, const struct engine_send_req *req,
                const struct engine_send_ops *ops, void *owner, struct engine_send **out)
{
        if (e->stopping)
                return -ESHUTDOWN;
        if (e->dev[0].state != DEVICE_UP)
                return ENGINE_SEND_NODEV;
        /* Only the engine's own relays speak for another's source. */
        if (req->relay_source)
                return -EINVAL;
        return send_start(&e->se, req, ops, owner, NULL, NULL, out);
}

void engine_send_resume(struct engine_send *s)
{
        send_resume(s);
}

void engine_send_cancel(struct engine_send *s)
{
        send_cancel(s);
}

void engine_send_progress(const struct engine_send *s, struct engine_progress *p)
{
        send_progress(s, p);
        device_names(s->env->dev, s->env->ndev, s->base.rails, p->rails, sizeof(p->rails));
        /* A pull sends nothing: its file comes back here, a transfer of
         * the same id from the node it asked (wire.h, Pulls). */
        if (s->pull)
                recv_pull_progress(&container_of(s->env, struct engine, se)->re, s->id,
                                   (const struct sockaddr *)&s->dst, &p->bytes, &p->total);
}

int engine_print_partials(const char *partial_dir, FILE *out)
{
        return partials_print(partial_dir, out);
}
