/*
 * What a transfer is, whichever way it goes: its lanes and their holdings,
 * its state, its timer, its verdict and its teardown (xfer.h).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "clock.h"
#include "io.h"
#include "log.h"
#include "xfer.h"

static const char *const xfer_state_names[] = {
        [XFER_RESOLVING] = "resolving",
        [XFER_CONNECTING] = "connecting",
        [XFER_OFFER] = "offer",
        [XFER_DATA] = "data",
        [XFER_FINISHING] = "finishing",
        [XFER_CLOSING] = "closing",
};

static const char *const xfer_dir_names[] = {
        [XFER_RECV] = "receive",
        [XFER_SEND] = "send",
};

void xfer_set_state(struct xfer *x, enum xfer_state state)
{
        static const uint8_t legal[] = {
                [XFER_RESOLVING] = 1u << XFER_CONNECTING | 1u << XFER_CLOSING,
                [XFER_CONNECTING] = 1u << XFER_OFFER | 1u << XFER_CLOSING,
                [XFER_OFFER] = 1u << XFER_DATA | 1u << XFER_CLOSING,
                /* Back to OFFER: the session's next file (wire.h). */
                [XFER_DATA] = 1u << XFER_FINISHING | 1u << XFER_OFFER | 1u << XFER_CLOSING,
                [XFER_FINISHING] = 1u << XFER_OFFER | 1u << XFER_CLOSING,
                [XFER_CLOSING] = 0,
        };

        if (x->state == state)
                return;
        if (!(legal[x->state] & (1u << state))) {
                log_err("%s: illegal %s state change %s -> %s", x->peer, xfer_dir_names[x->dir],
                        xfer_state_names[x->state], xfer_state_names[state]);
                abort();
        }
        log_debug("%s: %s %s -> %s", x->peer, xfer_dir_names[x->dir], xfer_state_names[x->state],
                  xfer_state_names[state]);
        x->state = state;
}

static void xfer_free_timers(struct xfer *x)
{
        if (x->timer)
                event_free(x->timer);
        x->timer = NULL;
        if (x->pace_timer)
                event_free(x->pace_timer);
        x->pace_timer = NULL;
        if (x->rail_timer)
                event_free(x->rail_timer);
        x->rail_timer = NULL;
}

static void xfer_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct xfer *x = arg;

        x->ops->timeout(x);
}

static void xfer_on_rail_wait(evutil_socket_t fd, short what, void *arg)
{
        struct xfer *x = arg;

        if (x->decided || x->state == XFER_CLOSING)
                return;
        for (unsigned int k = 0; k < x->nlanes; k++) {
                if (x->lane[k] && x->lane[k]->broken) {
                        log_notice("%s: lane %u's rail said nothing in %u ms: its break ends the transfer",
                                   x->peer, k, XFER_RAIL_WAIT_MS);
                        x->ops->rail_silent(x->lane[k], x->rail_status, x->rail_text);
                        return;
                }
        }
}

void xfer_lane_wait_rail(struct xfer_lane *l, unsigned int status, const char *text)
{
        struct xfer *x = l->x;
        struct timeval tv = { XFER_RAIL_WAIT_MS / 1000, XFER_RAIL_WAIT_MS % 1000 * 1000 };

        if (l->broken)
                return;
        l->broken = true;
        log_info("%s: lane %u broke (%s); waiting up to %u ms for its rail's word", x->peer, l->idx, text,
                 XFER_RAIL_WAIT_MS);
        if (evtimer_pending(x->rail_timer, NULL))
                return;
        x->rail_status = status;
        snprintf(x->rail_text, sizeof(x->rail_text), "%s", text);
        evtimer_add(x->rail_timer, &tv);
}

/* The rail's word came: no lane waits for it any more, or the timer
 * stands for those that still do. */
static void xfer_rail_settled(struct xfer *x)
{
        for (unsigned int k = 0; k < x->nlanes; k++)
                if (x->lane[k] && x->lane[k]->broken)
                        return;
        evtimer_del(x->rail_timer);
}

static void xfer_on_pace(evutil_socket_t fd, short what, void *arg)
{
        struct xfer *x = arg;
        unsigned int first = x->pace_first;

        /* Lanes take turns at being first: one lane never starves the others. */
        x->pace_first = (first + 1) % MAX(x->nlanes, 1u);
        x->ops->paced(x, first % MAX(x->nlanes, 1u));
}

int xfer_init(struct xfer *x, struct xfer_env *e, enum xfer_dir dir, const struct xfer_ops *ops,
              const char *peer)
{
        x->ops = ops;
        x->env = e;
        x->dir = dir;
        /* A receiver's transfer begins with a connection request. */
        x->state = dir == XFER_RECV ? XFER_CONNECTING : XFER_RESOLVING;
        x->ring = e->ring[dir];
        x->nlanes = 1;
        snprintf(x->peer, sizeof(x->peer), "%s", peer);
        x->timer = evtimer_new(e->base, xfer_on_timer, x);
        x->pace_timer = evtimer_new(e->base, xfer_on_pace, x);
        x->rail_timer = evtimer_new(e->base, xfer_on_rail_wait, x);
        if (!x->timer || !x->pace_timer || !x->rail_timer) {
                xfer_free_timers(x);
                return -ENOMEM;
        }
        x->next = e->xfers[dir];
        e->xfers[dir] = x;
        return 0;
}

struct xfer *xfer_first(struct xfer_env *e, enum xfer_dir dir)
{
        return e->xfers[dir];
}

static void xfer_unlink(struct xfer *x)
{
        for (struct xfer **p = &x->env->xfers[x->dir]; *p; p = &(*p)->next)
                if (*p == x) {
                        *p = x->next;
                        return;
                }
}

static void xfer_arm_usec_on(struct event *ev, uint64_t usec)
{
        struct timeval tv = {
                .tv_sec = (time_t)(usec / 1000000u),
                .tv_usec = (suseconds_t)(usec % 1000000u),
        };

        evtimer_add(ev, &tv);
}

void xfer_arm_timer(struct xfer *x, int sec)
{
        struct timeval tv = { .tv_sec = sec };

        evtimer_add(x->timer, &tv);
}

unsigned int xfer_peer_timeout(const struct xfer *x)
{
        return x->env->cfg.peer_timeout;
}

void xfer_progress(struct xfer *x)
{
        x->t_progress = clock_usec(CLOCK_MONOTONIC);
}

/* The timer fires by io_timeout at the latest (its op checks what is due). */
static void xfer_arm_disk_deadline(struct xfer *x)
{
        struct timeval now, due, io = { .tv_sec = x->env->cfg.io_timeout };

        event_base_gettimeofday_cached(x->env->base, &now);
        timeradd(&now, &io, &due);
        if (evtimer_pending(x->timer, &now) && timercmp(&now, &due, <=))
                return;
        evtimer_add(x->timer, &io);
}

void xfer_io_start(struct xfer *x, const char *what)
{
        if (x->ios++ == 0) {
                x->t_io = clock_usec(CLOCK_MONOTONIC);
                if (x->state != XFER_CLOSING)
                        xfer_arm_disk_deadline(x);
        }
        x->io_what = what;
}

static void xfer_bury(struct xfer *x);

bool xfer_io_done(struct xfer *x)
{
        x->ios--;
        x->t_io = clock_usec(CLOCK_MONOTONIC);
        if (!x->dead)
                return true;
        if (x->ios == 0) {
                for (struct xfer **p = &x->env->dead; *p; p = &(*p)->next)
                        if (*p == x) {
                                *p = x->next;
                                break;
                        }
                log_debug("%s: the last disk request of an ended transfer came back", x->peer);
                xfer_bury(x);
        }
        return false;
}

bool xfer_disk_stalled(struct xfer *x)
{
        uint64_t limit = (uint64_t)x->env->cfg.io_timeout * 1000000u;
        uint64_t quiet, wait;
        struct timeval tv;

        if (x->ios == 0)
                return false;
        quiet = clock_usec(CLOCK_MONOTONIC) - x->t_io;
        if (quiet >= limit)
                return true;
        /* Check the peer again within peer_timeout: the disk may come back
         * and leave a silent peer to be found. */
        wait = MIN(limit - quiet, (uint64_t)xfer_peer_timeout(x) * 1000000u);
        tv.tv_sec = (time_t)(wait / 1000000u);
        tv.tv_usec = (suseconds_t)(wait % 1000000u);
        evtimer_add(x->timer, &tv);
        return false;
}

void xfer_disk_text(const struct xfer *x, char *buf, size_t len)
{
        snprintf(buf, len, "%s: no progress for %u s", x->io_what ?: "disk I/O",
                 x->env->cfg.io_timeout);
}

enum xfer_stall xfer_stalled(struct xfer *x)
{
        if (xfer_disk_stalled(x))
                return XFER_STALL_DISK;
        if (x->ios > 0)
                return XFER_WAITING;
        /* The peer may still be reading back what was kept (xfer_grace). */
        if (x->grace_until && clock_usec(CLOCK_MONOTONIC) < x->grace_until) {
                xfer_arm_timer(x, (int)MIN((x->grace_until - clock_usec(CLOCK_MONOTONIC)) / 1000000u + 1,
                                           (uint64_t)x->env->cfg.io_timeout));
                return XFER_WAITING;
        }
        return xfer_peer_silent(x) ? XFER_STALL_PEER : XFER_WAITING;
}

void xfer_arm_deadline(struct xfer *x)
{
        xfer_progress(x);
        /* Entering a state: the rate window (only judged in DATA) starts too. */
        pace_open(&x->pace, x->t_progress, x->bytes);
        xfer_arm_timer(x, (int)xfer_peer_timeout(x));
}

static void xfer_arm_usec(struct xfer *x, uint64_t usec)
{
        xfer_arm_usec_on(x->timer, usec);
}

bool xfer_peer_silent(struct xfer *x)
{
        uint64_t limit = (uint64_t)xfer_peer_timeout(x) * 1000000u;
        uint64_t quiet = clock_usec(CLOCK_MONOTONIC) - x->t_progress;

        if (quiet >= limit)
                return true;
        /* Wake up exactly when it would have been silent that long. */
        xfer_arm_usec(x, limit - quiet);
        return false;
}

uint64_t xfer_wait_limit(const struct xfer *x, uint64_t bytes)
{
        uint64_t rate = MAX(x->env->cfg.min_rate, XFER_REREAD_FLOOR);
        uint64_t pt = xfer_peer_timeout(x);

        return (pt + MIN(bytes / rate, pt * (XFER_WAIT_MAX - 1u))) * 1000000u;
}

bool xfer_wait_overdue(const struct xfer *x, uint64_t since, uint64_t bytes)
{
        return clock_usec(CLOCK_MONOTONIC) - since > xfer_wait_limit(x, bytes);
}

/*
 * cfg min_rate, or half of what our own limits leave this transfer if
 * that is lower: the daemon's rate_limit is shared by the transfers of
 * its direction moving data, and pacing is only exact over the long run.
 */
static uint64_t xfer_min_rate(const struct xfer *x)
{
        const struct bucket *all = &x->env->rate_limit[x->dir];
        uint64_t least = x->env->cfg.min_rate, lim = 0;

        if (bucket_limited(all)) {
                unsigned int n = 0;

                for (const struct xfer *o = x->env->xfers[x->dir]; o; o = o->next)
                        n += o->state == XFER_DATA;
                lim = all->rate / MAX(n, 1u);
        }
        if (bucket_limited(&x->bucket) && (lim == 0 || x->bucket.rate < lim))
                lim = x->bucket.rate;
        if (lim > 0 && least > lim / 2)
                least = lim / 2;
        return least;
}

static enum xfer_pace xfer_check_rate(struct xfer *x, char *text, size_t len)
{
        uint64_t limit = (uint64_t)xfer_peer_timeout(x) * 1000000u;
        uint64_t now = clock_usec(CLOCK_MONOTONIC);
        uint64_t quiet = now - x->t_progress, wait;
        uint64_t least = xfer_min_rate(x);

        /* Silence first: it is the plainer reason, and its own deadline. */
        if (quiet >= limit)
                return XFER_PACE_SILENT;
        if (pace_check(&x->pace, now, x->bytes, least, limit, &wait) == PACE_SLOW) {
                pace_reason(&x->pace, least, text, len);
                return XFER_PACE_SLOW;
        }
        xfer_arm_usec(x, MIN(wait, limit - quiet));
        return XFER_PACE_OK;
}

void xfer_grace(struct xfer *x, uint64_t bytes)
{
        if (bytes > 0)
                x->grace_until = clock_usec(CLOCK_MONOTONIC) + bytes / XFER_REREAD_FLOOR * 1000000u +
                                 bytes % XFER_REREAD_FLOOR * 1000000u / XFER_REREAD_FLOOR + 1000000u;
}

enum xfer_pace xfer_check_pace(struct xfer *x, char *text, size_t len)
{
        /* Our own disk holding the transfer up is not the peer's fault. */
        if (xfer_disk_stalled(x)) {
                xfer_disk_text(x, text, len);
                return XFER_PACE_DISK;
        }
        if (x->grace_until) {
                uint64_t now = clock_usec(CLOCK_MONOTONIC);

                if (now < x->grace_until) {
                        xfer_arm_usec(x, MIN(x->grace_until - now, (uint64_t)x->env->cfg.io_timeout * 1000000u));
                        return XFER_PACE_OK;
                }
                /* The peer has read back what was kept: from now on, as ever. */
                x->grace_until = 0;
                xfer_arm_deadline(x);
                return XFER_PACE_OK;
        }
        /* A request of ours in flight, not stalled (xfer_disk_stalled armed
         * the timer for as much as peer_timeout): the peer is judged once
         * it is back, within a second, not a whole window later. */
        if (x->ios > 0) {
                xfer_arm_usec(x, MIN((uint64_t)1000000u, (uint64_t)xfer_peer_timeout(x) * 1000000u));
                return XFER_PACE_OK;
        }
        return xfer_check_rate(x, text, len);
}

bool xfer_pace_on(const struct xfer *x)
{
        return bucket_limited(&x->bucket) || bucket_limited(&x->env->rate_limit[x->dir]);
}

bool xfer_pace_take(struct xfer *x, uint64_t bytes)
{
        struct bucket *all = &x->env->rate_limit[x->dir];
        uint64_t now, wait;

        if (!xfer_pace_on(x))
                return true;
        now = clock_usec(CLOCK_MONOTONIC);
        /* Both or neither: a chunk held back by one limit costs the other nothing. */
        wait = MAX(bucket_wait(&x->bucket, now), bucket_wait(all, now));
        if (wait > 0) {
                xfer_arm_usec_on(x->pace_timer, wait);
                return false;
        }
        bucket_take(&x->bucket, bytes);
        bucket_take(all, bytes);
        return true;
}

void xfer_pace_set(struct xfer *x, uint64_t rate, uint64_t chunk)
{
        if (rate == 0 && !bucket_limited(&x->bucket))
                return;
        bucket_set(&x->bucket, rate, bucket_burst(rate, chunk), clock_usec(CLOCK_MONOTONIC));
}

void xfer_pace_kick(struct xfer_env *e)
{
        static const struct timeval now = { 0, 0 };

        for (int dir = 0; dir < XFER_DIRS; dir++)
                for (struct xfer *x = e->xfers[dir]; x; x = x->next)
                        if (x->pace_timer && evtimer_pending(x->pace_timer, NULL))
                                evtimer_add(x->pace_timer, &now);
}

int xfer_lane_init(struct xfer_lane *l, struct xfer *x, unsigned int idx, bool admit)
{
        int r;

        l->x = x;
        l->idx = idx;
        l->digest = DIGEST_NULL;
        l->hold = RING_HOLD_NULL;
        r = digest_init(&l->digest);
        if (r < 0)
                return r;
        if (!admit)
                r = ring_hold_join(&l->hold, x->ring);
        else if ((r = ring_hold_admit(&l->hold, x->ring)) >= 0)
                r = r == 0 ? XFER_FULL : 0;
        if (r != 0)
                return r;
        ring_hold_set_lanes(&l->hold, x->nlanes);
        return 0;
}

int xfer_lane_admit(struct xfer_lane *l)
{
        if (ring_hold_promote(&l->hold, l->x->ring) == 0)
                return XFER_FULL;
        ring_hold_set_lanes(&l->hold, l->x->nlanes);
        return 0;
}

void xfer_lane_deinit(struct xfer_lane *l)
{
        digest_deinit(&l->digest);
        ring_hold_free(&l->hold);
}

void xfer_lane_add(struct xfer_lane *l)
{
        l->x->lane[l->idx] = l;
        l->x->nlive++;
}

int xfer_lane_next_file(struct xfer_lane *l)
{
        l->ended = false;
        l->first_seq = l->end_seq = 0;
        digest_deinit(&l->digest);
        return digest_init(&l->digest);
}

int xfer_lane_run(struct xfer_lane *l)
{
        const struct xfer *x = l->x;

        wire_lane_range(x->nchunks, x->chunk, x->nlanes, l->idx, &l->first_seq, &l->end_seq);
        /* Its group hashes' room now, not on the data path: bounded by the
         * file size (16 bytes per 64 MiB, digest.h). */
        return digest_start(&l->digest, MIN(l->first_seq * x->chunk, x->size),
                            wire_run_bytes(x->size, x->chunk, l->first_seq, l->end_seq));
}

bool xfer_digest(const struct xfer *x, uint8_t out[WIRE_DIGEST_SIZE])
{
        const struct digest *run[WIRE_LANES_MAX];

        for (unsigned int k = 0; k < x->nlanes; k++) {
                if (!x->lane[k]) {
                        memset(out, 0, WIRE_DIGEST_SIZE);
                        return false;
                }
                run[k] = &x->lane[k]->digest;
        }
        digest_join(run, x->nlanes, out);
        return true;
}

void xfer_set_lanes(struct xfer *x, unsigned int nlanes)
{
        x->nlanes = nlanes;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (x->lane[k])
                        ring_hold_set_lanes(&x->lane[k]->hold, nlanes);
}

unsigned int xfer_lanes_share(const struct xfer_env *e, unsigned int transfers)
{
        return MAX(1u, e->cfg.lanes / MAX(transfers, 1u));
}

void xfer_feed_starved(struct xfer_env *e, enum xfer_dir dir)
{
        for (struct xfer *x = e->xfers[dir]; x; x = x->next) {
                if (x->state != XFER_DATA)
                        continue;
                for (unsigned int k = 0; k < x->nlanes; k++) {
                        struct xfer_lane *l = x->lane[k];

                        if (l && l->hold.held == 0 && !l->ended && !l->conn.reaping)
                                x->ops->feed(l);
                }
        }
}

bool xfer_decide(struct xfer *x, enum engine_outcome outcome, unsigned int status,
                 const char *text)
{
        if (x->decided)
                return false;
        x->decided = true;
        x->outcome = outcome;
        x->status = status;
        snprintf(x->text, sizeof(x->text), "%s", text ?: "");
        x->ops->log(x);
        return true;
}

bool xfer_decide_transient(struct xfer *x, unsigned int status, const char *text)
{
        /* Set first: the journal entry is written while deciding. */
        if (x->decided)
                return false;
        x->transient = true;
        return xfer_decide(x, ENGINE_FAILED, status, text);
}

void xfer_hangup(struct xfer *x)
{
        if (x->state != XFER_CLOSING)
                xfer_set_state(x, XFER_CLOSING);
        /* Nobody waits for them now; whatever the kernel can interrupt, it may. */
        if (x->ios > 0 && x->ops->cancel_io)
                x->ops->cancel_io(x);
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                struct xfer_lane *l = x->lane[k];

                if (!l)
                        continue;
                conn_disconnect(&l->conn);
                /* The receiver has nothing left to hear; a sender waits for
                 * the receiver's side of the hang-up. */
                if (x->dir == XFER_RECV || !l->established)
                        conn_reap(&l->conn);
        }
}

void xfer_reap_all(struct xfer *x)
{
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (x->lane[k])
                        conn_reap(&x->lane[k]->conn);
}

void xfer_kill(struct xfer *x, unsigned int status, const char *text)
{
        xfer_decide_transient(x, status, text);
        if (x->state != XFER_CLOSING)
                xfer_set_state(x, XFER_CLOSING);
        xfer_reap_all(x);
}

/* Whether @x has a lane on @on (NULL: any transfer has). */
static bool xfer_is_on(const struct xfer *x, const struct conn_env *on)
{
        if (!on)
                return true;
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (x->lane[k] && x->lane[k]->conn.env == on)
                        return true;
        return false;
}

bool xfer_on(const struct xfer_env *env, const struct conn_env *on)
{
        for (int dir = 0; dir < XFER_DIRS; dir++)
                for (const struct xfer *x = env->xfers[dir]; x; x = x->next)
                        if (xfer_is_on(x, on))
                                return true;
        return false;
}

unsigned int xfer_kill_all(struct xfer_env *env, const struct conn_env *on, unsigned int status,
                           const char *text)
{
        unsigned int n = 0;

        for (int dir = 0; dir < XFER_DIRS; dir++) {
                struct xfer *x, *xn;

                /* Reaping is deferred, so nothing leaves the list under us. */
                for (x = env->xfers[dir]; x; x = xn) {
                        xn = x->next;
                        if (!xfer_is_on(x, on))
                                continue;
                        if (on && !x->decided && x->ops->rail_lost && x->ops->rail_lost(x, on, text)) {
                                xfer_rail_settled(x);
                                continue;
                        }
                        n += !x->decided;
                        xfer_kill(x, status, text);
                }
        }
        return n;
}

void xfer_env_reconfigure(struct xfer_env *env, const struct xfer_cfg *cfg)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC);

        env->cfg = *cfg;
        /* One bucket each way; a chunk is at most a slot of ours. */
        for (int dir = 0; dir < XFER_DIRS; dir++)
                bucket_set(&env->rate_limit[dir], cfg->rate_limit, bucket_burst(cfg->rate_limit, cfg->slot_size),
                           now);
        xfer_pace_kick(env);
}

static void xfer_free(struct xfer *x)
{
        auth_session_clear(&x->session);
        xfer_free_timers(x);
        x->ops->gone(x);
}

void xfer_discard(struct xfer *x)
{
        xfer_unlink(x);
        auth_session_clear(&x->session);
        xfer_free_timers(x);
}

/* A reaped lane's slots go back to the ring, and the lane goes. */
static void xfer_lane_drop(struct xfer_lane *l)
{
        struct xfer *x = l->x;

        ring_hold_leave(&l->hold, x->ring);
        x->lane[l->idx] = NULL;
        x->ops->lane_free(l);
        xfer_feed_starved(x->env, x->dir);
}

/* Ended, and nothing of the kernel's points into it any more. */
static void xfer_bury(struct xfer *x)
{
        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                if (x->lane[k])
                        xfer_lane_drop(x->lane[k]);
        xfer_free(x);
}

void xfer_lane_reaped(struct conn *c)
{
        struct xfer_lane *l = (struct xfer_lane *)c;
        struct xfer *x = l->x;
        struct xfer_env *e = x->env;

        /* With disk requests out, the slots they read into or write from
         * stay held (and the lane with them) until the last is back. */
        if (x->ios == 0)
                xfer_lane_drop(l);
        if (--x->nlive > 0)
                return;
        xfer_unlink(x);
        if (x->timer)
                evtimer_del(x->timer);
        if (x->pace_timer)
                evtimer_del(x->pace_timer);
        if (x->ops->ended)
                x->ops->ended(x);
        if (x->ios > 0) {
                log_notice("%s: %u disk request%s of the ended transfer still out (%s); its "
                           "buffers stay held until %s back", x->peer, x->ios,
                           x->ios == 1 ? "" : "s", x->io_what ?: "disk I/O",
                           x->ios == 1 ? "it comes" : "they come");
                x->dead = true;
                x->next = e->dead;
                e->dead = x;
        } else {
                xfer_bury(x);
        }
        e->ops->gone(e->owner);
}

void xfer_kill_qps(struct xfer_env *e)
{
        for (int dir = 0; dir < XFER_DIRS; dir++)
                for (struct xfer *x = e->xfers[dir]; x; x = x->next)
                        for (unsigned int k = 0; k < WIRE_LANES_MAX; k++)
                                if (x->lane[k])
                                        conn_destroy_qp(&x->lane[k]->conn);
}

static void xfer_free_list(struct xfer **list, bool keep_memory)
{
        struct xfer *x;

        while ((x = *list)) {
                *list = x->next;
                for (unsigned int k = 0; k < WIRE_LANES_MAX; k++) {
                        struct xfer_lane *l = x->lane[k];

                        if (!l)
                                continue;
                        conn_teardown(&l->conn);
                        if (keep_memory)
                                continue;
                        ring_hold_leave(&l->hold, x->ring);
                        x->lane[k] = NULL;
                        x->ops->lane_free(l);
                }
                x->nlive = 0;
                if (keep_memory) {
                        xfer_free_timers(x);
                        continue;
                }
                xfer_free(x);
        }
}

void xfer_free_all(struct xfer_env *e, bool keep_memory)
{
        for (int dir = 0; dir < XFER_DIRS; dir++)
                xfer_free_list(&e->xfers[dir], keep_memory);
        xfer_free_list(&e->dead, keep_memory);
}
