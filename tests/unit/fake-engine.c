/* A fake transfer engine for test-jobs and test-control-msg: see fake-engine.h. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>

#include "engine.h"
#include "fake-engine.h"
#include "macro.h"
#include "wire.h"

struct engine_send {
        struct engine *e;
        struct fake_send_info info;
        char name[256];
        char peer[96];
        const struct engine_send_ops *ops;
        void *owner;
        struct event *cancel_ev;        /* deferred ENGINE_CANCELLED */
        struct engine_progress progress;
        uint64_t deleted;
        struct engine_send *next;
};

struct engine {
        struct event_base *base;
        struct engine_send *live;
        int cap;
        int fail_next;
        unsigned int n_live, calls, misuse;
        bool in_callback;
};

/* The one fake at a time: a handle the owner should no longer hold is
 * recognised without touching it. */
static struct engine *fake_the;

struct engine *fake_engine_new(struct event_base *base)
{
        struct engine *e = calloc(1, sizeof(*e));

        if (!e || fake_the)
                abort();
        e->base = base;
        e->cap = -1;
        fake_the = e;
        return e;
}

static void fake_send_free(struct engine_send *s)
{
        if (s->cancel_ev)
                event_free(s->cancel_ev);
        safe_close(s->info.fd);
        free(s);
}

void fake_engine_free(struct engine *e)
{
        struct engine_send *s;

        if (!e)
                return;
        while ((s = e->live)) {
                e->live = s->next;
                fake_send_free(s);
        }
        fake_the = NULL;
        free(e);
}

void fake_engine_set_capacity(struct engine *e, int cap)
{
        e->cap = cap;
}

void fake_engine_fail_next(struct engine *e, int err)
{
        e->fail_next = err;
}

unsigned int fake_engine_live(const struct engine *e)
{
        return e->n_live;
}

unsigned int fake_engine_calls(const struct engine *e)
{
        return e->calls;
}

unsigned int fake_engine_misuse(const struct engine *e)
{
        return e->misuse;
}

/* Compares pointers only: @s may be freed memory when the owner misbehaves. */
static bool fake_is_live(const struct engine *e, const struct engine_send *s)
{
        for (const struct engine_send *o = e->live; o; o = o->next)
                if (o == s)
                        return true;
        return false;
}

static void fake_unlink(struct engine_send *s)
{
        struct engine *e = s->e;

        for (struct engine_send **p = &e->live; *p; p = &(*p)->next)
                if (*p == s) {
                        *p = s->next;
                        e->n_live--;
                        return;
                }
        abort();
}

struct engine_send *fake_engine_find(struct engine *e, uint64_t id)
{
        for (struct engine_send *s = e->live; s; s = s->next)
                if (s->info.id == id)
                        return s;
        return NULL;
}

const struct fake_send_info *fake_engine_info(const struct engine_send *s)
{
        return &s->info;
}

static void fake_cancel_cb(evutil_socket_t fd, short what, void *userdata)
{
        fake_engine_done(userdata, ENGINE_CANCELLED, WIRE_OK, "cancelled", 0, 0);
}

int engine_send(struct engine *e, const struct engine_send_req *req,
                const struct engine_send_ops *ops, void *owner, struct engine_send **out)
{
        struct engine_send *s;
        bool pull;
        int fd;

        e->calls++;
        if (e->in_callback)
                e->misuse++;
        if (e->fail_next) {
                int r = e->fail_next;

                e->fail_next = 0;
                return r;
        }
        if (e->cap >= 0 && e->n_live >= (unsigned int)e->cap)
                return ENGINE_SEND_FULL;
        if (req->dst_len > sizeof(s->info.dst) || !req->name || !req->peer || !ops ||
            !ops->phase || !ops->done)
                return -EINVAL;
        /* High, so it never takes a number a test checks to be closed. */
        /* A tree starts with DEST, a directory: no file; a pull has none. */
        pull = req->land && req->land->direction == WIRE_LAND_PULL;
        fd = req->tree || pull ? -1 : fcntl(req->fd, F_DUPFD_CLOEXEC, 512);
        if (fd < 0 && !req->tree && !pull)
                return -errno;

        s = calloc(1, sizeof(*s));
        if (!s)
                abort();
        s->e = e;
        s->ops = ops;
        s->owner = owner;
        s->info.id = req->id;
        s->info.fd = fd;
        s->info.size = req->size;
        s->info.files = req->files;
        s->info.sync = req->sync;
        s->info.delete = req->delete;
        s->info.job_bytes = req->job_bytes;
        s->info.tree = req->tree;
        s->info.has_token = req->tree_token != NULL;
        s->info.has_route = req->route != NULL;
        s->info.route_hops = req->route_hops;
        if (req->route && req->route_hops <= ENGINE_ROUTE_MAX)
                memcpy(s->info.route, req->route, req->route_hops * sizeof(*req->route));
        if (req->tree_token)
                memcpy(s->info.token, req->tree_token, WIRE_SOURCE_SIZE);
        s->info.attempt = req->attempt;
        s->info.bwlimit = req->bwlimit;
        snprintf(s->name, sizeof(s->name), "%s", req->name);
        snprintf(s->peer, sizeof(s->peer), "%s", req->peer);
        s->info.name = s->name;
        s->info.peer = s->peer;
        memcpy(&s->info.dst, req->dst, req->dst_len);
        s->info.dst_len = req->dst_len;
        s->cancel_ev = event_new(e->base, -1, 0, fake_cancel_cb, s);
        if (!s->cancel_ev)
                abort();
        s->next = e->live;
        e->live = s;
        e->n_live++;
        *out = s;
        return 0;
}

void engine_send_cancel(struct engine_send *s)
{
        if (!fake_the || !fake_is_live(fake_the, s)) {
                fprintf(stderr, "fake engine: engine_send_cancel on a handle that is gone\n");
                if (fake_the)
                        fake_the->misuse++;
                return;
        }
        /* Allowed from inside phase (engine.h); after done the handle is gone. */
        s->info.cancels++;
        event_active(s->cancel_ev, 0, 0);
}

void engine_send_resume(struct engine_send *s)
{
        if (!fake_the || !fake_is_live(fake_the, s)) {
                fprintf(stderr, "fake engine: engine_send_resume on a handle that is gone\n");
                if (fake_the)
                        fake_the->misuse++;
                return;
        }
        if (s->e->in_callback)
                s->e->misuse++;
        s->info.resumes++;
}

int fake_engine_next(struct engine_send *s, uint32_t index, struct engine_send_file *f)
{
        struct engine *e = s->e;
        int r;

        if (!s->ops->next)
                return -ENOSYS;
        e->in_callback = true;
        r = s->ops->next(s->owner, index, f);
        e->in_callback = false;
        return r;
}

void fake_engine_file_done(struct engine_send *s, uint32_t index, uint64_t bytes)
{
        struct engine *e = s->e;

        if (!s->ops->file_done)
                return;
        e->in_callback = true;
        s->ops->file_done(s->owner, index, bytes);
        e->in_callback = false;
}

void engine_send_progress(const struct engine_send *s, struct engine_progress *p)
{
        if (!fake_the || !fake_is_live(fake_the, s)) {
                fprintf(stderr, "fake engine: engine_send_progress on a handle that is gone\n");
                if (fake_the)
                        fake_the->misuse++;
                *p = (struct engine_progress){ 0 };
                return;
        }
        *p = s->progress;
}

void fake_engine_set_progress(struct engine_send *s, uint64_t bytes, uint64_t usec)
{
        s->progress.bytes = bytes;
        s->progress.usec = usec;
}

void fake_engine_set_hops(struct engine_send *s, unsigned int hops, const uint64_t *bytes)
{
        s->progress.hops = hops;
        memset(s->progress.hop_bytes, 0, sizeof(s->progress.hop_bytes));
        for (unsigned int k = 0; k < hops && k < ENGINE_ROUTE_MAX; k++)
                s->progress.hop_bytes[k] = bytes[k];
}

void fake_engine_set_skipped(struct engine_send *s, uint32_t skipped)
{
        s->progress.skipped = skipped;
}

void fake_engine_set_deleted(struct engine_send *s, uint64_t deleted)
{
        s->deleted = deleted;
}

void fake_engine_phase(struct engine_send *s, enum engine_phase phase)
{
        struct engine *e = s->e;

        e->in_callback = true;
        s->ops->phase(s->owner, phase);
        e->in_callback = false;
}

static void fake_finish(struct engine_send *s, const struct engine_result *res)
{
        struct engine *e = s->e;
        struct engine_result r = *res;

        r.skipped = s->progress.skipped;
        r.deleted = s->deleted;

        /* Everything is released before done, as engine.h promises. */
        fake_unlink(s);
        s->info.fd = safe_close(s->info.fd);
        e->in_callback = true;
        s->ops->done(s->owner, &r);
        e->in_callback = false;
        fake_send_free(s);
}

void fake_engine_done(struct engine_send *s, enum engine_outcome outcome, unsigned int status,
                      const char *text, uint64_t bytes, uint64_t usec)
{
        fake_finish(s, &(struct engine_result){
                .outcome = outcome,
                .status = status,
                .text = text,
                .bytes = bytes,
                .usec = usec,
        });
}

void fake_engine_fail(struct engine_send *s, unsigned int status, bool transient, const char *text)
{
        fake_finish(s, &(struct engine_result){
                .outcome = ENGINE_FAILED,
                .status = status,
                .transient = transient,
                .text = text,
        });
}

void fake_engine_done_chain(struct engine_send *s, uint64_t bytes, uint32_t hops, struct nodeset hop_missing,
                            uint32_t hop_failed, unsigned int hop_status, const char *hop_text)
{
        fake_finish(s, &(struct engine_result){
                .outcome = ENGINE_DONE,
                .bytes = bytes,
                .usec = 1000,
                .hops = hops,
                .hop_missing = hop_missing,
                .hop_failed = hop_failed,
                .hop_status = hop_status,
                .hop_text = hop_text,
        });
}
