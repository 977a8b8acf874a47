#pragma once

/*
 * The control socket itself: taken from systemd when rdmaxferd.socket
 * activated us, else bound at the configured path with mode 0660 from the
 * moment it exists, after clearing a stale socket a crashed daemon left.
 */

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct control_socket {
        int fd;
        bool activated;                 /* from rdmaxferd.socket: systemd owns the path */
        char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
        dev_t path_dev;                 /* what we bound, so we unlink only our own */
        ino_t path_ino;
};

#define CONTROL_SOCKET_NULL ((struct control_socket){ .fd = -1 })

/* Listening, non-blocking, close-on-exec. 0 or -errno (cause logged). */
int control_socket_open(struct control_socket *s, const char *path);
/* Close it; unlink the path only if we bound it and it is still ours. */
void control_socket_close(struct control_socket *s);

/*
 * admin_group's gid: digits are the gid itself, a name is looked up with
 * getgrnam_r(). 0, -ENOENT when there is no such group, or -errno. NSS may
 * block (LDAP, sssd): call it at start-up and on reload, never per client.
 */
int control_socket_group_gid(const char *name, gid_t *gid);

/*
 * Whether the client on @fd is in group @gid: its effective gid (@cred,
 * from SO_PEERCRED) or one of its supplementary groups (SO_PEERGROUPS: the
 * kernel's record from connect() time, so no NSS lookup and no blocking).
 * 1, 0, or -errno.
 */
int control_socket_peer_in_group(int fd, const struct ucred *cred, gid_t gid);
