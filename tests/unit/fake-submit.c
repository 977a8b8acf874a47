/*
 * A stand-in for rdmaxferd's control socket that takes a SUBMIT and says
 * what it carried, for xferctl send FILE... PEER:/PATH (test-land-cli.sh):
 * the landing's flags, peer, PATH, and its MUNGE credential decoded
 * through this node's munged (libmunge's default socket) and checked
 * against the job's binding, as the receiving node's lander will.
 *
 *   fake-submit SOCKET LOG
 *
 * Binds SOCKET (mode 0666: any user's xferctl may come) and serves one
 * connection at a time until SIGTERM. Each SUBMIT is answered SUBMITTED
 * (job 7) and written to LOG as two lines, each FILE that follows as one:
 *
 *   SUBMIT flags=LAND,LAND_DIR host=10.0.0.2 port=7471 name=a files=2 path=/x
 *   CRED uid=0 ttl=3600 restriction=0 binding=ok
 *   FILE b
 */

#include <errno.h>
#include <munge.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "fake-daemon.h"
#include "landmsg.h"
#include "macro.h"

static void note_cred(FILE *f, const struct ctl_submit *s)
{
        static struct landmsg_session ls;
        uint8_t want[LANDMSG_BINDING_SIZE];
        munge_ctx_t ctx = munge_ctx_create();
        void *payload = NULL;
        int len = 0, ttl = 0;
        uid_t uid = (uid_t)-1, restriction = (uid_t)-1;
        gid_t gid;
        munge_err_t e;

        memset(&ls, 0, sizeof(ls));
        ls.direction = LANDMSG_PUSH;
        ls.naddrs = 1;
        memcpy(ls.token, s->land_token, sizeof(ls.token));
        snprintf(ls.dest, sizeof(ls.dest), "%s", s->land_path);
        e = munge_decode(s->land_cred, ctx, &payload, &len, &uid, &gid);
        munge_ctx_get(ctx, MUNGE_OPT_TTL, &ttl);
        munge_ctx_get(ctx, MUNGE_OPT_UID_RESTRICTION, &restriction);
        if (e != EMUNGE_SUCCESS) {
                fprintf(f, "CRED error=%s\n", munge_ctx_strerror(ctx) ?: munge_strerror(e));
        } else {
                bool bound = landmsg_addr_parse(s->host, ls.addrs[0]) == 0 && landmsg_binding(&ls, want) == 0 &&
                             len == LANDMSG_BINDING_SIZE && memcmp(payload, want, sizeof(want)) == 0;

                fprintf(f, "CRED uid=%u ttl=%d restriction=%u binding=%s\n", (unsigned int)uid, ttl,
                        (unsigned int)restriction, bound ? "ok" : "wrong");
        }
        free(payload);
        munge_ctx_destroy(ctx);
}

static void serve(int fd, const char *log)
{
        for (;;) {
                static struct ctl_msg m, rep;
                int passed = -1, r;
                FILE *f;

                r = ctl_recv(fd, &m, &passed);
                safe_close(passed);
                if (r < 0)
                        return;
                f = fopen(log, "ae");
                if (!f)
                        exit(1);
                if (m.type == CTL_SUBMIT) {
                        const struct ctl_submit *s = &m.submit;

                        fprintf(f, "SUBMIT flags=%s%s%s%s host=%s port=%u name=%s files=%u path=%s\n",
                                s->flags & CTL_SUBMIT_LAND ? "LAND" : "-",
                                s->flags & CTL_SUBMIT_LAND_DIR ? ",LAND_DIR" : "",
                                s->flags & CTL_SUBMIT_TREE ? ",TREE" : "",
                                s->flags & ~(CTL_SUBMIT_LAND | CTL_SUBMIT_LAND_DIR | CTL_SUBMIT_TREE) ? ",OTHER" : "",
                                s->host, (unsigned int)s->port, s->name, (unsigned int)s->files, s->land_path);
                        if (s->flags & CTL_SUBMIT_LAND)
                                note_cred(f, s);
                        rep = (struct ctl_msg){ .type = CTL_SUBMITTED, .id = 7 };
                } else if (m.type == CTL_FILE) {
                        fprintf(f, "FILE %s\n", m.file.name);
                        fclose(f);
                        continue;
                } else {
                        fprintf(f, "%u\n", (unsigned int)m.type);
                        rep = (struct ctl_msg){ .type = CTL_ERROR, .error = { .code = -ENOSYS } };
                }
                fclose(f);
                if (ctl_send(fd, &rep, -1) < 0)
                        return;
        }
}

static void serve_one(int fd, void *log)
{
        serve(fd, log);
}

int main(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "usage: fake-submit SOCKET LOG\n");
                return 2;
        }
        return fake_daemon_run("fake-submit", argv[1], 0666, serve_one, argv[2]);
}
