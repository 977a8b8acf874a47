#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "clock.h"
#include "control-socket.h"
#include "log.h"
#include "macro.h"

/* Linux 4.13; older libc headers may lack the name. */
#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

static void strv_free(char **l)
{
        if (!l)
                return;
        for (char **p = l; *p; p++)
                free(*p);
        free(l);
}

/* 1 with *out set when systemd passed our socket, 0 when not activated, or -errno. */
static int control_from_systemd(int *out)
{
        char **names = NULL;
        int n, fd = -1, r;

        n = sd_listen_fds_with_names(1, &names);
        if (n < 0) {
                log_err("control: socket activation: %s", strerror(-n));
                return n;
        }
        if (n == 0) {
                strv_free(names);
                return 0;
        }
        for (int i = 0; i < n; i++)
                if (names && names[i] && strcmp(names[i], "control") == 0)
                        fd = SD_LISTEN_FDS_START + i;
        if (fd < 0 && n == 1)
                fd = SD_LISTEN_FDS_START;
        for (int i = 0; i < n; i++) {
                if (SD_LISTEN_FDS_START + i == fd)
                        continue;
                log_warning("control: closing unexpected socket-activation fd %d (%s)",
                            SD_LISTEN_FDS_START + i, names && names[i] ? names[i] : "?");
                close(SD_LISTEN_FDS_START + i);
        }
        strv_free(names);
        if (fd < 0) {
                log_err("control: socket activation passed %d sockets, none named \"control\"", n);
                return -EBADF;
        }

        r = sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0);
        if (r <= 0) {
                log_err("control: the activated socket is not a listening AF_UNIX SOCK_SEQPACKET socket");
                close(fd);
                return r < 0 ? r : -ENOTSOCK;
        }
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
            fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        *out = fd;
        return 1;
}

static int mkdir_parents(const char *path, mode_t mode)
{
        char buf[sizeof(((struct sockaddr_un *)0)->sun_path)];
        char *slash;

        snprintf(buf, sizeof(buf), "%s", path);
        slash = strrchr(buf, '/');
        if (!slash || slash == buf)
                return 0;
        *slash = '\0';
        for (char *p = buf + 1; ; p++) {
                bool last = *p == '\0';

                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (last)
                        return 0;
                *p = '/';
        }
}

/*
 * A socket file left by a crashed daemon is removed; one somebody still
 * listens on means another rdmaxferd runs with this config: refuse.
 */
static int control_clear_stale(const char *path, const struct sockaddr_un *sa)
{
        _cleanup_(closep) int probe = -1;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode)) {
                log_err("control: %s exists and is not a socket", path);
                return -EEXIST;
        }
        probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (probe < 0)
                return -errno;
        if (connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EAGAIN) {
                log_err("control: another rdmaxferd is already listening on %s", path);
                return -EADDRINUSE;
        }
        if (errno != ECONNREFUSED) {
                int r = -errno;

                log_err("control: cannot probe %s: %s", path, strerror(-r));
                return r;
        }
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        log_notice("control: removed stale socket %s", path);
        return 0;
}

static int control_bind(struct control_socket *s, const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_(closep) int fd = -1;
        struct stat st;
        mode_t old;
        int r;

        if (path[0] != '/' || strlen(path) >= sizeof(sa.sun_path)) {
                log_err("control: bad socket path \"%s\"", path);
                return -EINVAL;
        }
        memcpy(sa.sun_path, path, strlen(path) + 1);

        /* systemd's RuntimeDirectory= makes it; a manual run may not have it yet. */
        r = mkdir_parents(path, 0750);
        if (r < 0) {
                log_err("control: cannot create the directory of %s: %s", path, strerror(-r));
                return r;
        }
        r = control_clear_stale(path, &sa);
        if (r < 0)
                return r;

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* Mode 0660 from the moment it exists: no window where others could connect. */
        old = umask(0117);
        r = bind(fd, (const struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0) {
                r = -errno;
                log_err("control: cannot bind %s: %s", path, strerror(-r));
                return r;
        }
        if (listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                unlink(path);
                log_err("control: cannot listen on %s: %s", path, strerror(-r));
                return r;
        }
        if (lstat(path, &st) == 0) {
                s->path_dev = st.st_dev;
                s->path_ino = st.st_ino;
        }
        snprintf(s->path, sizeof(s->path), "%s", path);
        s->fd = TAKE_FD(fd);
        return 0;
}

int control_socket_open(struct control_socket *s, const char *path)
{
        int fd = -1, r;

        r = control_from_systemd(&fd);
        if (r < 0)
                return r;
        if (r > 0) {
                s->fd = fd;
                s->activated = true;
                log_info("control: using the socket passed by systemd");
                return 0;
        }
        r = control_bind(s, path);
        if (r < 0)
                return r;
        log_info("control: listening on %s", s->path);
        return 0;
}

void control_socket_close(struct control_socket *s)
{
        struct stat st;

        /* Only the socket we bound, and only if nobody replaced it meanwhile. */
        if (!s->activated && s->path[0] && lstat(s->path, &st) == 0 &&
            st.st_dev == s->path_dev && st.st_ino == s->path_ino)
                unlink(s->path);
        s->fd = safe_close(s->fd);
}

/* admin_group's gid: digits are the gid itself, a name is looked up. 0, -ENOENT or -errno. */
static int control_group_gid(const char *name, gid_t *gid)
{
        _cleanup_(freep) char *buf = NULL;
        struct group grp, *found = NULL;
        size_t cap = 4096;
        int r;

        if (!name[0])
                return -EINVAL;
        /* rdmaxferd.conf allows digits only as a gid (config.c checked its range). */
        if (strspn(name, "0123456789") == strlen(name)) {
                *gid = (gid_t)strtoul(name, NULL, 10);
                return 0;
        }
        for (;;) {
                char *p = realloc(buf, cap);

                if (!p)
                        return -ENOMEM;
                buf = p;
                r = getgrnam_r(name, &grp, buf, cap, &found);
                if (r != ERANGE)
                        break;
                /* A group with a very long member list; give up past 1 MiB. */
                if (cap >= 1024 * 1024)
                        return -ERANGE;
                cap *= 2;
        }
        if (r != 0)
                return -r;
        if (!found)
                return -ENOENT;
        *gid = grp.gr_gid;
        return 0;
}

/* Whether the client on @fd has @gid as its effective or a supplementary group. 1, 0 or -errno. */
static int control_peer_in_group(int fd, const struct ucred *cred, gid_t gid)
{
        _cleanup_(freep) gid_t *heap = NULL;
        gid_t stack[64], *groups = stack;
        socklen_t len = sizeof(stack);

        if (cred->gid == gid)
                return 1;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
                if (errno != ERANGE)
                        return -errno;
                /* The kernel said how much room the list needs. */
                heap = malloc(len);
                if (!heap)
                        return -ENOMEM;
                groups = heap;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
                        return -errno;
        }
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (groups[i] == gid)
                        return 1;
        return 0;
}

void control_socket_admin_update(struct control_socket *s, const char *name, bool force)
{
        int r;

        if (!force && strcmp(name, s->admin_name) == 0)
                return;
        snprintf(s->admin_name, sizeof(s->admin_name), "%s", name);
        s->admin_known = false;
        if (!name[0])
                return;
        r = control_group_gid(name, &s->admin_gid);
        if (r < 0) {
                log_warning("control: admin_group = %s: %s; only root sees every user's jobs", name,
                            r == -ENOENT ? "no such group" : strerror(-r));
                return;
        }
        s->admin_known = true;
        if (s->admin_gid == getegid())
                log_warning("control: admin_group = %s is the daemon's own group: everyone who may use "
                            "the control socket sees every user's jobs", name);
        else
                log_info("control: members of group %s (gid %u) see every user's jobs", name,
                         (unsigned int)s->admin_gid);
}

bool control_socket_sees_all(struct control_socket *s, const char *name, int fd,
                             const struct ucred *cred)
{
        int r;

        if (cred->uid == 0 || cred->uid == geteuid())
                return true;
        /* A reload that changed the name without control_reconfigure(): once, not per client. */
        control_socket_admin_update(s, name, false);
        if (!s->admin_known)
                return false;
        r = control_peer_in_group(fd, cred, s->admin_gid);
        if (r < 0) {
                log_warning("control: cannot read the groups of client uid %u pid %d: %s; "
                            "it sees only its own jobs", (unsigned int)cred->uid, (int)cred->pid,
                            strerror(-r));
                return false;
        }
        return r > 0;
}

void control_socket_refuse(int fd, const struct ctl_msg *m)
{
        for (int i = 0; i < 8; i++) {
                struct ctl_msg junk;
                int pfd = -1, r = ctl_recv(fd, &junk, &pfd);

                safe_close(pfd);
                /* A malformed message was still taken off the queue. */
                if (r < 0 && r != -EBADMSG && r != -EPROTONOSUPPORT)
                        break;
        }
        (void)ctl_send(fd, m, -1);
}

void control_socket_refuse_log(struct control_socket *s, int level, const struct ucred *cred,
                               const char *why)
{
        uint64_t now = clock_usec(CLOCK_MONOTONIC);
        char more[64] = "";

        if (s->refuse_logged_usec && now - s->refuse_logged_usec < 1000000) {
                s->refuse_quiet++;
                return;
        }
        if (s->refuse_quiet)
                snprintf(more, sizeof(more), " (and %u more refused since the last such line)",
                         s->refuse_quiet);
        log_msg(level, "control: refusing client uid %u pid %d: %s%s", (unsigned int)cred->uid,
                (int)cred->pid, why, more);
        s->refuse_logged_usec = now;
        s->refuse_quiet = 0;
}
