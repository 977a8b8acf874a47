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
