#include "munge-fixture.h"

#include <fcntl.h>
#include <munge.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t munged_pid = -1;
static char munged_sock[4096];

bool munge_fixture_start(const char *dir, char *sock, size_t socklen)
{
        char key[4200];
        unsigned char bytes[1024];
        int fd;

        if (mkdir(dir, 0711) < 0 || chmod(dir, 0711) < 0)
                return false;
        snprintf(key, sizeof(key), "%s/key", dir);
        randombytes_buf(bytes, sizeof(bytes));
        fd = open(key, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, bytes, sizeof(bytes)) != (ssize_t)sizeof(bytes))
                return false;
        close(fd);
        snprintf(munged_sock, sizeof(munged_sock), "%s/sock", dir);
        snprintf(sock, socklen, "%s", munged_sock);
        munged_pid = fork();
        if (munged_pid == 0) {
                char a[4][4300];
                int devnull = open("/dev/null", O_WRONLY);

                snprintf(a[0], sizeof(a[0]), "--socket=%s", munged_sock);
                snprintf(a[1], sizeof(a[1]), "--key-file=%s", key);
                snprintf(a[2], sizeof(a[2]), "--pid-file=%s/pid", dir);
                snprintf(a[3], sizeof(a[3]), "--seed-file=%s/seed", dir);
                dup2(devnull, 1);
                dup2(devnull, 2);
                execlp("munged", "munged", "-F", "-f", a[0], a[1], a[2], a[3], "--log-file=/dev/null", (char *)NULL);
                _exit(127);
        }
        /* Ready when its socket answers. */
        for (int i = 0; i < 100; i++) {
                munge_ctx_t ctx = munge_ctx_create();
                char *cred = NULL;
                munge_err_t e;

                munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munged_sock);
                e = munge_encode(&cred, ctx, NULL, 0);
                free(cred);
                munge_ctx_destroy(ctx);
                if (e == EMUNGE_SUCCESS)
                        return true;
                usleep(100000);
        }
        return false;
}

void munge_fixture_stop(void)
{
        if (munged_pid > 0) {
                kill(munged_pid, SIGTERM);
                waitpid(munged_pid, NULL, 0);
                munged_pid = -1;
        }
}

void munge_fixture_cred(struct landmsg_session *s, uid_t uid, gid_t gid, const struct landmsg_session *binding_of)
{
        munge_fixture_cred_ttl(s, uid, gid, binding_of, 0);
}

void munge_fixture_cred_ttl(struct landmsg_session *s, uid_t uid, gid_t gid, const struct landmsg_session *binding_of,
                            int ttl)
{
        uint8_t binding[LANDMSG_BINDING_SIZE];
        int p[2];
        pid_t pid;
        ssize_t n;

        landmsg_binding(binding_of ? binding_of : s, binding);
        if (pipe(p) < 0)
                abort();
        pid = fork();
        if (pid == 0) {
                munge_ctx_t ctx = munge_ctx_create();
                char *cred = NULL;

                if ((gid && setgid(gid) < 0) || (uid && setuid(uid) < 0))
                        _exit(1);
                munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munged_sock);
                if (ttl > 0)
                        munge_ctx_set(ctx, MUNGE_OPT_TTL, ttl);
                if (munge_encode(&cred, ctx, binding, sizeof(binding)) != EMUNGE_SUCCESS)
                        _exit(2);
                n = write(p[1], cred, strlen(cred));
                _exit(n > 0 ? 0 : 3);
        }
        close(p[1]);
        n = read(p[0], s->cred, LANDMSG_CRED_MAX);
        s->cred[n > 0 ? n : 0] = '\0';
        close(p[0]);
        waitpid(pid, NULL, 0);
}
