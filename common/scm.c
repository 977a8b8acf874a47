#include "scm.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "macro.h"

void scm_attach(struct msghdr *msg, union scm_one *control, int fd)
{
        struct cmsghdr *cmsg;

        if (fd < 0)
                return;
        memset(control, 0, sizeof(*control));
        msg->msg_control = control->buf;
        msg->msg_controllen = sizeof(control->buf);
        cmsg = CMSG_FIRSTHDR(msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
}

int scm_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds, int flags)
{
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * SCM_FDS_MAX)];
        } control;
        struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        struct cmsghdr *cmsg;
        ssize_t n;

        if (nfds > SCM_FDS_MAX)
                return -EINVAL;
        if (nfds > 0) {
                memset(&control, 0, sizeof(control));
                msg.msg_control = control.buf;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
                cmsg = CMSG_FIRSTHDR(&msg);
                cmsg->cmsg_level = SOL_SOCKET;
                cmsg->cmsg_type = SCM_RIGHTS;
                cmsg->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
                memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * nfds);
        }
        do
                n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EMSGSIZE;
}

int scm_send(int sock, const void *buf, size_t len, int fd, int flags)
{
        return scm_send_fds(sock, buf, len, &fd, fd >= 0 ? 1 : 0, flags);
}

/* Every descriptor @msg brought: the first @max into @fds, the rest closed. */
static size_t scm_take_some(struct msghdr *msg, int *fds, size_t max)
{
        size_t kept = 0;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
                size_t n;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < n; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (kept < max)
                                fds[kept++] = fd;
                        else
                                safe_close(fd);
                }
        }
        return kept;
}

int scm_take_fds(struct msghdr *msg)
{
        int keep = -1;

        scm_take_some(msg, &keep, 1);
        return keep;
}

ssize_t scm_recv_fds(int sock, void *buf, size_t cap, int *fds, size_t max, size_t *nfds)
{
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * SCM_FDS_MAX)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = cap };
        struct msghdr msg;
        ssize_t n;

        *nfds = 0;
        do {
                msg = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                                       .msg_controllen = sizeof(control.buf) };
                n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
                /* A peer that closed with something of ours unread leaves
                 * ECONNRESET here once (the kernel's sk_err), ahead of the
                 * records it sent before closing, which are still queued:
                 * those come first (a client's last FILEs; its job is not
                 * cancelled for them), then the end. */
                if (n < 0 && errno == ECONNRESET) {
                        msg = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                                               .msg_controllen = sizeof(control.buf) };
                        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
                        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                                errno = ECONNRESET;
                }
        } while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        /* Taken before anything is checked: no descriptor leaks on an error. */
        *nfds = scm_take_some(&msg, fds, max);
        if (n == 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                for (size_t i = 0; i < *nfds; i++)
                        safe_close(fds[i]);
                *nfds = 0;
                /* With room for SCM_FDS_MAX, a descriptor is cut when the
                 * kernel could not install it: out of them (RLIMIT_NOFILE). */
                return n == 0 ? -ECONNRESET : (msg.msg_flags & MSG_TRUNC) ? -EBADMSG : -EMFILE;
        }
        return n;
}

ssize_t scm_recv(int sock, void *buf, size_t cap, int *fd)
{
        size_t n = 0;
        ssize_t r;

        *fd = -1;
        r = scm_recv_fds(sock, buf, cap, fd, 1, &n);
        if (n == 0)
                *fd = -1;
        return r;
}
