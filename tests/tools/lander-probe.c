/*
 * lander-probe: talks to rdmaxfer-lander as rdmaxferd will, for the
 * testbed (62-lander), with credentials made by Debian's own munge(1):
 *
 *   lander-probe binding [--pull] --dest PATH --token HEX --addr A[,A...] >payload
 *   runuser -u alice -- munge -i payload >cred
 *   runuser -u rdmaxfer -- lander-probe land --cred cred --dest PATH --token HEX --addr A \
 *           [--mkdir REL]... [--put SRC REL/LEAF]...
 *   runuser -u rdmaxfer -- lander-probe read --cred cred --dest PATH --token HEX --addr A >copy
 *
 * Each step prints what happened ("session 1: alice (uid 1001)", "put
 * REL/LEAF"; read's on stderr, its stdout being the file); a refusal
 * prints "lander: STEP: EACCES: WHERE: TEXT" on stderr and exits 1; usage
 * errors exit 2.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "landmsg.h"
#include "macro.h"

static struct landmsg req, reply;
static int sock = -1;

static int hex_token(const char *s, uint8_t out[LANDMSG_TOKEN_SIZE])
{
        if (strlen(s) != 2 * LANDMSG_TOKEN_SIZE)
                return -1;
        for (int i = 0; i < LANDMSG_TOKEN_SIZE; i++)
                if (sscanf(s + 2 * i, "%2hhx", &out[i]) != 1)
                        return -1;
        return 0;
}

static int addrs_parse(char *list, struct landmsg_session *s)
{
        char *save = NULL;

        for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
                if (s->naddrs >= LANDMSG_ADDRS_MAX || landmsg_addr_parse(a, s->addrs[s->naddrs]) < 0)
                        return -1;
                s->naddrs++;
        }
        return s->naddrs ? 0 : -1;
}

static void refused(const char *what)
{
        if (reply.type == LANDMSG_ERROR)
                fprintf(stderr, "lander: %s: %s: %s: %s\n", what, strerrorname_np((int)reply.error.err) ?: "?",
                       reply.error.where[0] ? reply.error.where : "-", reply.error.text);
        else
                fprintf(stderr, "lander: %s: answered with type %u\n", what, reply.type);
        exit(1);
}

static int ask(int fd, int *rfd)
{
        int got = -1, r;

        req.id++;
        r = landmsg_send(sock, &req, fd);
        if (r < 0) {
                fprintf(stderr, "lander-probe: send: %s\n", strerror(-r));
                exit(1);
        }
        r = landmsg_recv(sock, &reply, &got);
        if (r < 0) {
                fprintf(stderr, "lander-probe: receive: %s\n", strerror(-r));
                exit(1);
        }
        if (rfd)
                *rfd = got;
        else
                safe_close(got);
        return reply.type == LANDMSG_ERROR ? -1 : 0;
}

static void op(uint16_t type, uint64_t session, const char *path, mode_t mode, const char *leaf)
{
        req.type = type;
        memset(&req.op, 0, sizeof(req.op));
        req.op.session = session;
        req.op.mode = mode;
        snprintf(req.op.path, sizeof(req.op.path), "%s", path);
        snprintf(req.op.leaf, sizeof(req.op.leaf), "%s", leaf ? leaf : "");
}

static int copy(int from, int to)
{
        char buf[65536];
        ssize_t n;

        while ((n = read(from, buf, sizeof(buf))) > 0)
                if (write(to, buf, (size_t)n) != n)
                        return -1;
        return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "dest", required_argument, NULL, 'd' }, { "token", required_argument, NULL, 't' },
                { "addr", required_argument, NULL, 'a' }, { "cred", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' }, { "mkdir", required_argument, NULL, 'm' },
                { "put", required_argument, NULL, 'p' }, { "pull", no_argument, NULL, 'P' },
                {}
        };
        static struct landmsg_session sess;
        const char *cmd, *cred_path = NULL, *sock_path = "/run/rdmaxfer-lander.sock";
        const char *mkdirs[16], *puts[16][2];
        int nmk = 0, nput = 0, c, rfd;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint64_t session;

        if (argc < 2) {
                fprintf(stderr, "usage: lander-probe binding|land|read [options] (see its source)\n");
                return 2;
        }
        cmd = argv[1];
        optind = 2;
        sess.direction = strcmp(cmd, "read") == 0 ? LANDMSG_PULL : LANDMSG_PUSH;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'd': snprintf(sess.dest, sizeof(sess.dest), "%s", optarg); break;
                case 't': if (hex_token(optarg, sess.token) < 0) return 2; break;
                case 'a': if (addrs_parse(optarg, &sess) < 0) return 2; break;
                case 'c': cred_path = optarg; break;
                case 's': sock_path = optarg; break;
                case 'm': if (nmk < 16) mkdirs[nmk++] = optarg; break;
                case 'p':
                        if (optind >= argc || nput >= 16)
                                return 2;
                        puts[nput][0] = optarg;
                        puts[nput++][1] = argv[optind++];
                        break;
                case 'P': sess.direction = LANDMSG_PULL; break;
                default: return 2;
                }
        }
        if (strcmp(cmd, "binding") == 0) {
                uint8_t b[LANDMSG_BINDING_SIZE];

                if (landmsg_binding(&sess, b) < 0 || fwrite(b, 1, sizeof(b), stdout) != sizeof(b))
                        return 1;
                return 0;
        }
        if (!cred_path || (strcmp(cmd, "land") != 0 && strcmp(cmd, "read") != 0))
                return 2;
        FILE *f = fopen(cred_path, "re");
        if (!f || !fgets(sess.cred, sizeof(sess.cred), f))
                return 2;
        fclose(f);
        sess.cred[strcspn(sess.cred, "\n")] = '\0';

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
        sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                fprintf(stderr, "lander-probe: %s: %m\n", sock_path);
                return 1;
        }
        req.type = LANDMSG_SESSION;
        req.session = sess;
        if (ask(-1, NULL) < 0)
                refused("session");
        session = reply.session_ok.session;
        /* read's stdout is the file: what it says goes to stderr. */
        fprintf(strcmp(cmd, "read") == 0 ? stderr : stdout, "session %llu: %s (uid %u)\n",
                (unsigned long long)session, reply.session_ok.user, reply.session_ok.uid);

        if (strcmp(cmd, "read") == 0) {
                op(LANDMSG_OPEN_READ, session, "", 0, NULL);
                if (ask(-1, &rfd) < 0)
                        refused("read");
                return copy(rfd, STDOUT_FILENO) < 0 ? 1 : 0;
        }
        for (int i = 0; i < nmk; i++) {
                op(LANDMSG_MKDIR, session, mkdirs[i], 0755, NULL);
                if (ask(-1, NULL) < 0)
                        refused("mkdir");
                printf("mkdir %s\n", mkdirs[i][0] ? mkdirs[i] : "(DEST)");
        }
        for (int i = 0; i < nput; i++) {
                char rel[LANDMSG_PATH_MAX + 1], *slash;
                int src = open(puts[i][0], O_RDONLY | O_CLOEXEC);

                snprintf(rel, sizeof(rel), "%s", puts[i][1]);
                slash = strrchr(rel, '/');
                if (src < 0)
                        return 2;
                op(LANDMSG_TMPFILE, session, slash ? (*slash = '\0', rel) : "", 0644, NULL);
                if (ask(-1, &rfd) < 0)
                        refused("tmpfile");
                if (copy(src, rfd) < 0 || fsync(rfd) < 0)
                        return 1;
                op(LANDMSG_LINK, session, slash ? rel : "", 0, slash ? slash + 1 : rel);
                if (ask(rfd, NULL) < 0)
                        refused("link");
                printf("put %s\n", puts[i][1]);
                close(rfd);
                close(src);
        }
        op(LANDMSG_END, session, "", 0, NULL);
        if (ask(-1, NULL) < 0)
                refused("end");
        return 0;
}
