/* A client's descriptor checked off the loop (fdcheck.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fdcheck.h"
#include "io.h"
#include "macro.h"

struct fdcheck {
        struct io_req req;
        struct fdchecks *cs;
        int fd;                         /* the owner's, ours until fn */
        struct statx stx;
        fdcheck_fn fn;                  /* NULL once cancelled */
        void *userdata;
        struct fdcheck *next;           /* cs->list */
};

static void fdcheck_unlink(struct fdcheck *f)
{
        for (struct fdcheck **p = &f->cs->list; *p; p = &(*p)->next)
                if (*p == f) {
                        *p = f->next;
                        return;
                }
}

static void fdcheck_on_statx(struct io_req *req, int64_t res)
{
        struct fdcheck *f = container_of(req, struct fdcheck, req);
        fdcheck_fn fn = f->fn;
        void *userdata = f->userdata;
        uint32_t mode = f->stx.stx_mode;
        uint64_t size = f->stx.stx_size;
        int fd = f->fd;

        fdcheck_unlink(f);
        free(f);
        if (!fn) {
                safe_close(fd);
                return;
        }
        fn(userdata, fd, res < 0 ? (int)res : 0, mode, size);
}

int fdcheck_start(struct fdchecks *cs, int fd, fdcheck_fn fn, void *userdata, struct fdcheck **out)
{
        struct fdcheck *f;
        int r;

        f = calloc(1, sizeof(*f));
        if (!f) {
                safe_close(fd);
                return -ENOMEM;
        }
        f->fd = fd;
        f->cs = cs;
        f->fn = fn;
        f->userdata = userdata;
        f->req.done = fdcheck_on_statx;
        r = io_statx(cs->io, &f->req, f->fd, "", AT_EMPTY_PATH, &f->stx);
        if (r < 0) {
                safe_close(f->fd);
                free(f);
                return r;
        }
        f->next = cs->list;
        cs->list = f;
        *out = f;
        return 0;
}

void fdcheck_cancel(struct fdcheck *f)
{
        f->fn = NULL;
        io_cancel(f->cs->io, &f->req);
}

void fdchecks_free(struct fdchecks *cs, bool keep)
{
        struct fdcheck *f;

        while ((f = cs->list)) {
                cs->list = f->next;
                if (keep)
                        continue;
                safe_close(f->fd);
                free(f);
        }
}
