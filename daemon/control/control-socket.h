#pragma once

/*
 * The control socket itself: taken from systemd when rdmaxferd.socket
 * activated us, else bound at the configured path with mode 0660 from the
 * moment it exists, after clearing a stale socket a crashed daemon left.
 * And who is at the other end: whether a client sees every user's jobs
 * (root, the daemon's user, admin_group), and how a refused one is told.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "config.h"
#include "ctl.h"

struct control_socket {
        int fd;
        bool activated;                 /* from rdmaxferd.socket: systemd owns the path */
        char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
        dev_t path_dev;                 /* what we bound, so we unlink only our own */
        ino_t path_ino;
        /* admin_group as last looked up: its name (a reload may change it) and gid. */
        char admin_name[CONFIG_GROUP_MAX + 1];
        bool admin_known;
        gid_t admin_gid;
        /* Refusals are logged once a second at most; the others are counted. */
        uint64_t refuse_logged_usec;
        unsigned int refuse_quiet;
};

#define CONTROL_SOCKET_NULL ((struct control_socket){ .fd = -1 })

/* Listening, non-blocking, close-on-exec. 0 or -errno (cause logged). */
int control_socket_open(struct control_socket *s, const char *path);
/* Close it; unlink the path only if we bound it and it is still ours. */
void control_socket_close(struct control_socket *s);

/*
 * Look admin_group @name up: again when @force (start-up, reload), else
 * only if it is not the name looked up last. Logs what it found. NSS may
 * block (LDAP, sssd): never forced per client.
 */
void control_socket_admin_update(struct control_socket *s, const char *name, bool force);

/*
 * Whether the client on @fd sees every user's jobs: root, the daemon's own
 * user, or a member of admin_group @name by its effective gid (@cred, from
 * SO_PEERCRED) or a supplementary group (SO_PEERGROUPS: the kernel's record
 * from connect() time, so no NSS lookup and no blocking).
 */
bool control_socket_sees_all(struct control_socket *s, const char *name, int fd,
                             const struct ucred *cred);

/*
 * Tell a refused client why (@m, an ERROR) on @fd, which the caller then
 * closes. What the client sent is read and dropped first: closing a
 * SOCK_SEQPACKET socket with data unread makes the client's next recv()
 * fail with ECONNRESET before it could read the answer.
 */
void control_socket_refuse(int fd, const struct ctl_msg *m);

/* Log a refusal at @level: one line a second at most, so a client looping
 * on connect cannot flood the journal; the others are counted. */
void control_socket_refuse_log(struct control_socket *s, int level, const struct ucred *cred,
                               const char *why);
