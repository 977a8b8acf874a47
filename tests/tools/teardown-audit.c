/*
 * teardown-audit.so, LD_PRELOADed into rdmaxferd by the testbed's sanitizer
 * scenario, checks what LeakSanitizer cannot: LSan only reports memory
 * nothing points to, and librdmacm keeps every cm_id in a global table, so
 * a connection left behind (its QP, CQ, MR, completion channel) stays
 * reachable and unreported; a descriptor left open is no memory at all.
 *
 * On stderr, each line starting "teardown-audit:", it reports
 *   - every verbs destroy that fails (EBUSY: something still uses the
 *     object, so the order was wrong);
 *   - at exit, each kind of verbs object (PD, MR, CQ, completion channel,
 *     QP) with objects created and never destroyed;
 *   - at exit, each descriptor opened since start and still open, except
 *     those libraries keep for the life of the process: librdmacm's device
 *     contexts (/dev/infiniband/uverbs*, with their async-event fd) and
 *     sd-journal's datagram socket. Completion channels are counted above.
 *
 * Built without sanitizers (it only forwards calls and reads /proc).
 * Pointer types are void *: the wrappers look at no field, and verbs.h
 * would turn the name ibv_reg_mr into a macro.
 */

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum audit_kind { AUDIT_PD, AUDIT_MR, AUDIT_CQ, AUDIT_CHANNEL, AUDIT_QP, _AUDIT_MAX };

static const char *const audit_names[_AUDIT_MAX] = {
        [AUDIT_PD] = "PD",
        [AUDIT_MR] = "MR",
        [AUDIT_CQ] = "CQ",
        [AUDIT_CHANNEL] = "completion channel",
        [AUDIT_QP] = "QP",
};

/* rdmaxferd has one thread: no locking. */
static long audit_live[_AUDIT_MAX];

#define AUDIT_FDS_MAX   1024
static bool audit_fd_inherited[AUDIT_FDS_MAX];

static void *audit_next(const char *name)
{
        void *f = dlsym(RTLD_NEXT, name);

        if (!f) {
                fprintf(stderr, "teardown-audit: cannot find %s: %s\n", name, dlerror());
                abort();
        }
        return f;
}

/* The function this one wraps, found on first use. */
#define AUDIT_NEXT(fn) \
        static __typeof__(fn) *next; \
        if (!next) \
                next = (__typeof__(fn) *)audit_next(#fn)

/* A destroy returned r (0 or an errno value, as verbs does). */
static int audit_destroyed(enum audit_kind k, const char *call, int r)
{
        if (r)
                fprintf(stderr, "teardown-audit: %s failed: %s (the %s is still in use)\n", call,
                        strerror(r), audit_names[k]);
        else
                audit_live[k]--;
        return r;
}

static void *audit_created(enum audit_kind k, void *obj)
{
        if (obj)
                audit_live[k]++;
        return obj;
}

void *ibv_alloc_pd(void *context);
void *ibv_alloc_pd(void *context)
{
        AUDIT_NEXT(ibv_alloc_pd);
        return audit_created(AUDIT_PD, next(context));
}

int ibv_dealloc_pd(void *pd);
int ibv_dealloc_pd(void *pd)
{
        AUDIT_NEXT(ibv_dealloc_pd);
        return audit_destroyed(AUDIT_PD, "ibv_dealloc_pd", next(pd));
}

void *ibv_reg_mr(void *pd, void *addr, size_t length, int access);
void *ibv_reg_mr(void *pd, void *addr, size_t length, int access)
{
        AUDIT_NEXT(ibv_reg_mr);
        return audit_created(AUDIT_MR, next(pd, addr, length, access));
}

int ibv_dereg_mr(void *mr);
int ibv_dereg_mr(void *mr)
{
        AUDIT_NEXT(ibv_dereg_mr);
        return audit_destroyed(AUDIT_MR, "ibv_dereg_mr", next(mr));
}

void *ibv_create_cq(void *context, int cqe, void *cq_context, void *channel, int comp_vector);
void *ibv_create_cq(void *context, int cqe, void *cq_context, void *channel, int comp_vector)
{
        AUDIT_NEXT(ibv_create_cq);
        return audit_created(AUDIT_CQ, next(context, cqe, cq_context, channel, comp_vector));
}

int ibv_destroy_cq(void *cq);
int ibv_destroy_cq(void *cq)
{
        AUDIT_NEXT(ibv_destroy_cq);
        return audit_destroyed(AUDIT_CQ, "ibv_destroy_cq", next(cq));
}

void *ibv_create_comp_channel(void *context);
void *ibv_create_comp_channel(void *context)
{
        AUDIT_NEXT(ibv_create_comp_channel);
        return audit_created(AUDIT_CHANNEL, next(context));
}

int ibv_destroy_comp_channel(void *channel);
int ibv_destroy_comp_channel(void *channel)
{
        AUDIT_NEXT(ibv_destroy_comp_channel);
        return audit_destroyed(AUDIT_CHANNEL, "ibv_destroy_comp_channel", next(channel));
}

/* rdma_create_qp and rdma_destroy_qp go through these (librdmacm calls them). */
void *ibv_create_qp(void *pd, void *attr);
void *ibv_create_qp(void *pd, void *attr)
{
        AUDIT_NEXT(ibv_create_qp);
        return audit_created(AUDIT_QP, next(pd, attr));
}

int ibv_destroy_qp(void *qp);
int ibv_destroy_qp(void *qp)
{
        AUDIT_NEXT(ibv_destroy_qp);
        return audit_destroyed(AUDIT_QP, "ibv_destroy_qp", next(qp));
}

/* Calls fn(fd, target) for each open descriptor but the directory's own. */
static void audit_each_fd(void (*fn)(int fd, const char *target))
{
        DIR *dir = opendir("/proc/self/fd");
        struct dirent *de;

        if (!dir) {
                fprintf(stderr, "teardown-audit: cannot list /proc/self/fd: %m\n");
                return;
        }
        while ((de = readdir(dir))) {
                char path[300], target[PATH_MAX];
                int fd = atoi(de->d_name);
                ssize_t n;

                if (de->d_name[0] == '.' || fd == dirfd(dir))
                        continue;
                snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
                n = readlink(path, target, sizeof(target) - 1);
                target[n < 0 ? 0 : n] = '\0';
                fn(fd, target);
        }
        closedir(dir);
}

static void audit_fd_at_start(int fd, const char *target)
{
        if (fd >= 0 && fd < AUDIT_FDS_MAX)
                audit_fd_inherited[fd] = true;
}

/* sd-journal's socket: the one AF_UNIX datagram socket libsystemd keeps. */
static bool audit_fd_is_dgram(int fd)
{
        int type = 0, domain = 0;
        socklen_t len = sizeof(type);

        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
                return false;
        len = sizeof(domain);
        return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
               domain == AF_UNIX && type == SOCK_DGRAM;
}

static void audit_fd_at_exit(int fd, const char *target)
{
        if (fd >= 0 && fd < AUDIT_FDS_MAX && audit_fd_inherited[fd])
                return;
        if (strncmp(target, "/dev/infiniband/uverbs", 22) == 0 ||
            strcmp(target, "anon_inode:[infinibandevent]") == 0 ||
            audit_fd_is_dgram(fd))
                return;
        fprintf(stderr, "teardown-audit: fd %d still open at exit: %s\n", fd, target);
}

static __attribute__((constructor)) void audit_at_start(void)
{
        audit_each_fd(audit_fd_at_start);
}

static __attribute__((destructor)) void audit_at_exit(void)
{
        for (int k = 0; k < _AUDIT_MAX; k++)
                if (audit_live[k])
                        fprintf(stderr, "teardown-audit: %ld %s(s) still alive at exit\n",
                                audit_live[k], audit_names[k]);
        audit_each_fd(audit_fd_at_exit);
}
