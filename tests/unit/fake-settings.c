/*
 * A stand-in for rdmaxferd's control socket that knows one request:
 * SETTINGS, answered with the peer_names given (test-peernames-cli.sh).
 *
 *   fake-settings SOCKET PATTERN LOG
 *
 * Binds SOCKET and serves one connection at a time until SIGTERM; each
 * request is a line in LOG ("SETTINGS", or the type's number), each
 * SETTINGS answered with PATTERN, anything else with an ERROR. PATTERN
 * "-old" plays a daemon of the previous control protocol version: it
 * answers every request with its version's ERROR and closes, as such a
 * daemon does.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "fake-daemon.h"
#include "macro.h"

static void note(const char *log, const char *what)
{
        FILE *f = fopen(log, "ae");

        if (!f)
                exit(1);
        fprintf(f, "%s\n", what);
        fclose(f);
}

/* An ERROR as the previous version's daemon sends it: its own version in the header. */
static void answer_old(int fd)
{
        struct ctl_msg m = { .type = CTL_ERROR, .error = { .code = -EPROTONOSUPPORT } };
        uint8_t buf[256];
        int len = ctl_encode(buf, sizeof(buf), &m);

        if (len < 0)
                exit(1);
        buf[4] = CTL_VERSION - 1;
        buf[5] = 0;
        (void)send(fd, buf, (size_t)len, MSG_NOSIGNAL);
}

static void serve(int fd, const char *pattern, const char *log)
{
        for (;;) {
                static struct ctl_msg m, rep;
                uint8_t buf[CTL_MSG_MAX];
                char what[32];
                ssize_t n;
                int r;

                n = recv(fd, buf, sizeof(buf), 0);
                if (n <= 0)
                        return;
                if (!strcmp(pattern, "-old")) {
                        note(log, "OLD");
                        answer_old(fd);
                        return;
                }
                r = ctl_decode(buf, (size_t)n, &m);
                if (r < 0) {
                        note(log, "BAD");
                        return;
                }
                if (m.type != CTL_SETTINGS) {
                        snprintf(what, sizeof(what), "%u", (unsigned int)m.type);
                        note(log, what);
                        rep = (struct ctl_msg){ .type = CTL_ERROR, .error = { .code = -ENOSYS } };
                        if (ctl_send(fd, &rep, -1) < 0)
                                return;
                        continue;
                }
                note(log, "SETTINGS");
                memset(&rep, 0, sizeof(rep));
                rep.type = CTL_SETTINGS_INFO;
                snprintf(rep.settings.peer_names, sizeof(rep.settings.peer_names), "%s", pattern);
                if (ctl_send(fd, &rep, -1) < 0)
                        return;
        }
}

struct fake_settings {
        const char *pattern, *log;
};

static void serve_one(int fd, void *arg)
{
        const struct fake_settings *fs = arg;

        serve(fd, fs->pattern, fs->log);
}

int main(int argc, char **argv)
{
        struct fake_settings fs;

        if (argc != 4) {
                fprintf(stderr, "usage: fake-settings SOCKET PATTERN LOG\n");
                return 2;
        }
        fs = (struct fake_settings){ .pattern = argv[2], .log = argv[3] };
        return fake_daemon_run("fake-settings", argv[1], 0, serve_one, &fs);
}
