/* The fake daemons' socket and accept loop (fake-daemon.h). */

#include "fake-daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "macro.h"

int fake_daemon_run(const char *who, const char *path, mode_t mode, void (*serve)(int fd, void *arg), void *arg)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int lfd;

        if (strlen(path) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "%s: socket path too long: %s\n", who, path);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || (mode && chmod(path, mode) < 0) ||
            listen(lfd, 16) < 0) {
                perror(who);
                return 1;
        }
        for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

                if (fd < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "%s: accept: %s\n", who, strerror(errno));
                        return 1;
                }
                serve(fd, arg);
                safe_close(fd);
        }
}
