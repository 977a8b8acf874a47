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

/* @cred, made for @direction, @dest, the job's token and the nodes
 * @addrs, with the session @flags: "CRED uid=... binding=ok|wrong". */
static void note_cred(FILE *f, const char *tag, const char *cred, const uint8_t *token, unsigned int direction,
                      const char *dest, const char *const *addrs, unsigned int naddrs, unsigned int flags)
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
        ls.direction = (uint8_t)direction;
        ls.flags = (uint8_t)flags;
        ls.naddrs = (uint16_t)naddrs;
        memcpy(ls.token, token, sizeof(ls.token));
        snprintf(ls.dest, sizeof(ls.dest), "%s", dest);
        e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
        munge_ctx_get(ctx, MUNGE_OPT_TTL, &ttl);
        munge_ctx_get(ctx, MUNGE_OPT_UID_RESTRICTION, &restriction);
        if (e != EMUNGE_SUCCESS) {
                fprintf(f, "%s error=%s\n", tag, munge_ctx_strerror(ctx) ?: munge_strerror(e));
        } else {
                bool bound = len == LANDMSG_BINDING_SIZE;

                for (unsigned int k = 0; k < naddrs; k++)
                        bound = bound && landmsg_addr_parse(addrs[k], ls.addrs[k]) == 0;
                bound = bound && landmsg_binding(&ls, want) == 0 && memcmp(payload, want, sizeof(want)) == 0;

                fprintf(f, "%s uid=%u ttl=%d restriction=%u binding=%s\n", tag, (unsigned int)uid, ttl,
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

                        const uint16_t known = CTL_SUBMIT_LAND | CTL_SUBMIT_LAND_DIR | CTL_SUBMIT_TREE |
                                               CTL_SUBMIT_PULL | CTL_SUBMIT_LAND_REPLACE | CTL_SUBMIT_PULL_TREE |
                                               CTL_SUBMIT_SYNC_MASK | CTL_SUBMIT_DELETE | CTL_SUBMIT_XATTRS |
                                               CTL_SUBMIT_ACLS | CTL_SUBMIT_DRY_RUN;
                        bool pull = s->flags & CTL_SUBMIT_PULL;

                        fprintf(f, "SUBMIT flags=%s%s%s%s%s%s%s%s%s%s%s%s%s%s host=%s port=%u name=%s files=%u path=%s",
                                s->flags & CTL_SUBMIT_LAND ? "LAND" : "-",
                                s->flags & CTL_SUBMIT_LAND_DIR ? ",LAND_DIR" : "",
                                s->flags & CTL_SUBMIT_LAND_REPLACE ? ",LAND_REPLACE" : "",
                                s->flags & CTL_SUBMIT_TREE ? ",TREE" : "", pull ? ",PULL" : "",
                                s->flags & CTL_SUBMIT_PULL_TREE ? ",PULL_TREE" : "",
                                s->flags & CTL_SUBMIT_SKIP_EXISTING ? ",SKIP_EXISTING" : "",
                                s->flags & CTL_SUBMIT_SYNC_SIZE ? ",SYNC_SIZE" : "",
                                s->flags & CTL_SUBMIT_SYNC_DIGEST ? ",SYNC_DIGEST" : "",
                                s->flags & CTL_SUBMIT_DELETE ? ",DELETE" : "",
                                s->flags & CTL_SUBMIT_XATTRS ? ",XATTRS" : "",
                                s->flags & CTL_SUBMIT_ACLS ? ",ACLS" : "",
                                s->flags & CTL_SUBMIT_DRY_RUN ? ",DRY_RUN" : "",
                                s->flags & ~known ? ",OTHER" : "", s->host, (unsigned int)s->port, s->name,
                                (unsigned int)s->files, s->land_path);
                        if (pull)
                                fprintf(f, " back=%s:%u:%s", s->back_host, (unsigned int)s->back_port,
                                        s->back_path);
                        if (s->flags & (CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS))
                                fprintf(f, " xattrs=%u", (unsigned int)s->xattrs_len);
                        fputc('\n', f);
                        /* The nodes it names: the peer, then the way back or a chain's hops. */
                        static struct ctl_hop hops[CTL_ROUTE_HOPS_MAX];
                        static const char *addrs[1 + CTL_ROUTE_HOPS_MAX];
                        unsigned int n = 0;
                        int nh = ctl_route_parse(s->route, hops, CTL_ROUTE_HOPS_MAX);

                        addrs[n++] = s->host;
                        if (pull)
                                addrs[n++] = s->back_host;
                        for (int k = 0; k < nh; k++)
                                addrs[n++] = hops[k].host;
                        if (s->route[0])
                                fprintf(f, "ROUTE %s\n", s->route);
                        if (s->flags & CTL_SUBMIT_LAND)
                                note_cred(f, "CRED", s->land_cred, s->land_token,
                                          pull ? LANDMSG_PULL : LANDMSG_PUSH, s->land_path, addrs, n,
                                          (!pull && (s->flags & CTL_SUBMIT_LAND_REPLACE) ? LANDMSG_SESSION_REPLACE : 0) |
                                          (!pull && (s->flags & CTL_SUBMIT_SYNC_MASK) ? LANDMSG_SESSION_SYNC : 0) |
                                          (!pull && (s->flags & CTL_SUBMIT_DRY_RUN) ? LANDMSG_SESSION_DRY : 0) |
                                          (!pull && (s->flags & CTL_SUBMIT_DELETE) ? LANDMSG_SESSION_DELETE : 0) |
                                          ((s->flags & CTL_SUBMIT_PULL_TREE) ? LANDMSG_SESSION_TREE : 0));
                        if (pull) {
                                const char *back[] = { s->back_host };

                                /* A pull kept up to date here: the way back's landing syncs. */
                                note_cred(f, "BACK", s->back_cred, s->land_token, LANDMSG_PUSH, s->back_path,
                                          back, 1,
                                          ((s->flags & CTL_SUBMIT_LAND_REPLACE) ? LANDMSG_SESSION_REPLACE : 0) |
                                          ((s->flags & CTL_SUBMIT_SYNC_MASK) ? LANDMSG_SESSION_SYNC : 0) |
                                          ((s->flags & CTL_SUBMIT_DELETE) ? LANDMSG_SESSION_DELETE : 0));
                        }
                        rep = (struct ctl_msg){ .type = CTL_SUBMITTED, .id = 7 };
                } else if (m.type == CTL_SETTINGS) {
                        /* Where it says it listens: $FAKE_LISTEN, or any. */
                        rep = (struct ctl_msg){ .type = CTL_SETTINGS_INFO };
                        snprintf(rep.settings.listen, sizeof(rep.settings.listen), "%s",
                                 getenv("FAKE_LISTEN") ?: "");
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
