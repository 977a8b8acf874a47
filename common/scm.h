#pragma once

/*
 * Descriptors with a message over an AF_UNIX socket (SCM_RIGHTS), for the
 * control and lander protocols: one a message (scm_send, scm_recv), or up
 * to SCM_FDS_MAX (scm_send_fds, scm_recv_fds: the lander's batches).
 */

#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>

/* Room for one descriptor in a message's control data. */
union scm_one {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
};

/* Attach @fd (-1: nothing) to @msg, @control being its buffer. */
void scm_attach(struct msghdr *msg, union scm_one *control, int fd);

/*
 * Send the @len bytes at @buf as one record, with @fd (-1: none), and
 * @flags beside MSG_NOSIGNAL (a vanished peer is -EPIPE, not SIGPIPE);
 * EINTR is tried again. 0, -EMSGSIZE when not all of it went (a
 * SOCK_SEQPACKET socket sends whole records or none), or -errno (-EAGAIN
 * with MSG_DONTWAIT).
 */
int scm_send(int sock, const void *buf, size_t len, int fd, int flags);

/* The kernel's own limit on descriptors in one message (SCM_MAX_FD). */
#define SCM_FDS_MAX     253

/* scm_send with @nfds descriptors (0 .. SCM_FDS_MAX; else -EINVAL). */
int scm_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds, int flags);

/*
 * Receive one record of at most @cap bytes into @buf, and the descriptor
 * that came with it into *@fd (-1: none; any more are closed). Its
 * length, or -ECONNRESET (the other end closed), -EBADMSG (longer than
 * @cap), -EMFILE (a descriptor the kernel could not install: out of
 * them), -errno (-EAGAIN on a non-blocking socket). EINTR is tried again.
 */
ssize_t scm_recv(int sock, void *buf, size_t cap, int *fd);
/* scm_recv keeping up to @max descriptors in @fds (*@nfds of them, in
 * the order sent; any more are closed). The same errors, where -EMFILE
 * says some could not be installed. */
ssize_t scm_recv_fds(int sock, void *buf, size_t cap, int *fds, size_t max, size_t *nfds);

/* The descriptors @msg brought: the first, or -1; any others are closed
 * (no leak on any path: take them before anything else is checked). */
int scm_take_fds(struct msghdr *msg);
