#pragma once

/*
 * A descriptor with a message over an AF_UNIX socket (SCM_RIGHTS), for the
 * control and lander protocols: one descriptor a message at most.
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

/*
 * Receive one record of at most @cap bytes into @buf, and the descriptor
 * that came with it into *@fd (-1: none; any more are closed). Its
 * length, or -ECONNRESET (the other end closed), -EBADMSG (longer than
 * @cap), -EMFILE (a descriptor the kernel could not install: out of
 * them), -errno (-EAGAIN on a non-blocking socket). EINTR is tried again.
 */
#define SCM_FDS_ROOM    8       /* descriptors a record may bring before the rest are cut */
ssize_t scm_recv(int sock, void *buf, size_t cap, int *fd);

/* The descriptors @msg brought: the first, or -1; any others are closed
 * (no leak on any path: take them before anything else is checked). */
int scm_take_fds(struct msghdr *msg);
