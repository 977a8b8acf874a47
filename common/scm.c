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

int scm_send(int sock, const void *buf, size_t len, int fd, int flags)
{
        union scm_one control;
        struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        scm_attach(&msg, &control, fd);
        do
                n = sendmsg(sock, &msg, MSG_NOSIGNAL | flags);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EMSGSIZE;
}

int scm_take_fds(struct msghdr *msg)
{
        int keep = -1;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
                size_t nfds;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nfds; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (keep < 0)
                                keep = fd;
                        else
                                safe_close(fd);
                }
        }
        return keep;
}

ssize_t scm_recv(int sock, void *buf, size_t cap, int *fd)
{
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int) * SCM_FDS_ROOM)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = cap };
        struct msghdr msg;
        int passed;
        ssize_t n;

        *fd = -1;
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
        passed = scm_take_fds(&msg);
        if (n == 0 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                safe_close(passed);
                /* With room for SCM_FDS_ROOM, a descriptor is cut when the
                 * kernel could not install it: out of them (RLIMIT_NOFILE). */
                return n == 0 ? -ECONNRESET : (msg.msg_flags & MSG_TRUNC) ? -EBADMSG : -EMFILE;
        }
        *fd = passed;
        return n;
}
