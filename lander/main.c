/*
 * rdmaxfer-lander: does a user's landing in the name space as that user,
 * for rdmaxferd, which never gains the privilege to (lander.h). Serves
 * the lander protocol on an AF_UNIX SOCK_SEQPACKET socket: the one
 * systemd passes (rdmaxfer-lander.socket), or --socket PATH. Only root
 * and the daemon's user (--daemon-user, "rdmaxfer") may connect.
 * Single-threaded: it changes its file system identity per request.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "config-build.h"
#include "config.h"
#include "lander.h"
#include "macro.h"

#define LANDER_CONNS_MAX        16
#define LANDER_DEFAULT_CONFIG   RDMAXFER_SYSCONFDIR "/rdmaxferd/rdmaxferd.conf"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
        (void)sig;
        stopping = 1;
}

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: rdmaxfer-lander [--config FILE] [--socket PATH] [--daemon-user USER]\n"
                "                       [--munge-socket PATH]\n"
                "\n"
                "Lands files as the users who sent them, for rdmaxferd (rdmaxfer-lander(8)).\n"
                "Started by systemd through rdmaxfer-lander.socket; not run by hand but to test.\n"
                "\n"
                "  --config FILE        rdmaxferd's configuration: landing_roots, allow_root_landing,\n"
                "                       landing_max_age, key_file (default %s)\n"
                "  --socket PATH        listen on PATH instead of the socket systemd passes\n"
                "  --daemon-user USER   the user rdmaxferd runs as, who may connect (default rdmaxfer)\n"
                "  --munge-socket PATH  munged's socket (default MUNGE's own)\n"
                "  -h, --help           this text\n"
                "  --version            the version\n",
                LANDER_DEFAULT_CONFIG);
}

static int listen_on(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
                int r = -errno;

                safe_close(fd);
                return r;
        }
        return fd;
}

/* Open each of @text's roots (space separated) into @roots, saying why not. */
static int roots_open(struct landfs_roots *roots, const char *text)
{
        char buf[CONFIG_LANDING_ROOTS_LEN];
        char *save = NULL;

        snprintf(buf, sizeof(buf), "%s", text);
        for (char *p = strtok_r(buf, " ", &save); p; p = strtok_r(NULL, " ", &save)) {
                int r = landfs_roots_add(roots, p);

                if (r < 0) {
                        fprintf(stderr, "<3>landing root %s: %s%s\n", p, strerror(-r),
                                r == -ELOOP ? " (a symlink on its way: name the real path)"
                                : r == -EEXIST ? " (inside or around another root)" : "");
                        return r;
                }
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "config", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' },
                { "daemon-user", required_argument, NULL, 'u' },
                { "munge-socket", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *config_path = LANDER_DEFAULT_CONFIG, *sock_path = NULL, *daemon_user = "rdmaxfer";
        struct lander_settings settings = { .munge_socket = NULL };
        struct pollfd pfd[1 + LANDER_CONNS_MAX];
        static struct landmsg req, reply;
        struct config cfg;
        struct lander *l = NULL;
        char err[512];
        uid_t daemon_uid = 0;
        struct passwd *pw;
        int c, r, lfd;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'c': config_path = optarg; break;
                case 's': sock_path = optarg; break;
                case 'u': daemon_user = optarg; break;
                case 'm': settings.munge_socket = optarg; break;
                case 'h': usage(stdout); return 0;
                case 'V': printf("rdmaxfer-lander %s\n", RDMAXFER_VERSION); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return 2;
        }
        if (sodium_init() < 0) {
                fprintf(stderr, "<3>libsodium cannot start\n");
                return 1;
        }
        /* Modes exactly as asked: the daemon sends the sender's. */
        umask(0);
        config_init(&cfg);
        r = config_load(&cfg, config_path, err, sizeof(err));
        if (r < 0 && r != -ENOENT) {
                fprintf(stderr, "<3>%s\n", err);
                return 1;
        }
        settings.allow_root = cfg.allow_root_landing;
        snprintf(settings.roots_text, sizeof(settings.roots_text), "%s", cfg.landing_roots);
        settings.max_age = cfg.landing_max_age;
        settings.keyed = cfg.key_file[0] != '\0';
        if (roots_open(&settings.roots, cfg.landing_roots) < 0)
                return 1;
        config_deinit(&cfg);
        pw = getpwnam(daemon_user);
        daemon_uid = pw ? pw->pw_uid : 0;

        if (sock_path) {
                lfd = listen_on(sock_path);
                if (lfd < 0) {
                        fprintf(stderr, "<3>%s: %s\n", sock_path, strerror(-lfd));
                        return 1;
                }
        } else if (sd_listen_fds(1) == 1) {
                lfd = SD_LISTEN_FDS_START;
        } else {
                fprintf(stderr, "<3>no socket: start rdmaxfer-lander.socket, or give --socket PATH\n");
                return 1;
        }
        r = lander_new(&l, &settings);
        if (r < 0) {
                fprintf(stderr, "<3>cannot set up: %s\n", strerror(-r));
                return 1;
        }
        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        signal(SIGPIPE, SIG_IGN);
        /* A pulled tree's walkers (walker.c) are reaped by the kernel. */
        sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = SIG_IGN, .sa_flags = SA_NOCLDWAIT }, NULL);
        fprintf(stderr, "<6>landing beneath %s%s\n", settings.roots_text[0] ? settings.roots_text : "(no landing_roots: "
                "user landing off)", settings.allow_root ? ", root included" : "");
        sd_notify(0, "READY=1\nSTATUS=serving");

        pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (unsigned int i = 1; i <= LANDER_CONNS_MAX; i++)
                pfd[i] = (struct pollfd){ .fd = -1 };
        while (!stopping) {
                /* Back to back, the requests of one session are answered as
                 * its user without a switch between; before it sleeps, the
                 * lander is itself again. */
                r = poll(pfd, 1 + LANDER_CONNS_MAX, 0);
                if (r == 0) {
                        lander_idle(l);
                        r = poll(pfd, 1 + LANDER_CONNS_MAX, -1);
                }
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "<3>poll: %m\n");
                        break;
                }
                if (pfd[0].revents & POLLIN) {
                        struct ucred cred;
                        socklen_t len = sizeof(cred);
                        int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), slot = -1;

                        for (unsigned int i = 1; i <= LANDER_CONNS_MAX && slot < 0; i++)
                                if (pfd[i].fd < 0)
                                        slot = (int)i;
                        if (cfd >= 0 && (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
                                         (cred.uid != 0 && cred.uid != daemon_uid) || slot < 0)) {
                                fprintf(stderr, "<4>refused a connection from uid %u%s\n", (unsigned int)cred.uid,
                                        slot < 0 ? " (too many)" : "");
                                cfd = safe_close(cfd);
                        }
                        if (cfd >= 0)
                                pfd[slot] = (struct pollfd){ .fd = cfd, .events = POLLIN };
                }
                for (unsigned int i = 1; i <= LANDER_CONNS_MAX; i++) {
                        int fds[LANDMSG_BATCH_MAX], rfds[LANDMSG_BATCH_MAX];
                        size_t nfds = 0, nr = 0;

                        if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        r = landmsg_recv_fds(pfd[i].fd, &req, fds, LANDMSG_BATCH_MAX, &nfds);
                        if (r == -EPROTONOSUPPORT) {
                                memset(&reply, 0, sizeof(reply));
                                reply.type = LANDMSG_ERROR;
                                reply.id = req.id;
                                reply.error.err = EPROTONOSUPPORT;
                                snprintf(reply.error.text, sizeof(reply.error.text),
                                         "this lander speaks version %d", LANDMSG_VERSION);
                                landmsg_send(pfd[i].fd, &reply, -1);
                        }
                        if (r < 0) {
                                if (r != -ECONNRESET)
                                        fprintf(stderr, "<4>connection %u: %s: closed\n", i, strerror(-r));
                                lander_conn_closed(l, i);
                                pfd[i].fd = safe_close(pfd[i].fd);
                                continue;
                        }
                        if (req.type == LANDMSG_BATCH) {
                                lander_handle_batch(l, i, &req, fds, nfds, &reply, rfds, &nr);
                        } else {
                                /* One request, one descriptor at most: any more are not its. */
                                while (nfds > 1)
                                        safe_close(fds[--nfds]);
                                lander_handle(l, i, &req, nfds ? fds[0] : -1, &reply, &rfds[0]);
                                nr = rfds[0] >= 0;
                        }
                        if (req.type == LANDMSG_SESSION) {
                                if (reply.type == LANDMSG_SESSION_OK)
                                        fprintf(stderr, "<6>session %llu: %s (uid %u) %s %s\n",
                                                (unsigned long long)reply.session_ok.session, reply.session_ok.user,
                                                reply.session_ok.uid,
                                                req.session.direction == LANDMSG_PULL ? "reads" : "lands in",
                                                req.session.dest);
                                else
                                        fprintf(stderr, "<5>session refused for %s: %s\n", req.session.dest,
                                                reply.error.text);
                        }
                        r = landmsg_send_fds(pfd[i].fd, &reply, rfds, nr);
                        while (nr > 0)
                                safe_close(rfds[--nr]);
                        if (r < 0) {
                                lander_conn_closed(l, i);
                                pfd[i].fd = safe_close(pfd[i].fd);
                        }
                }
        }
        sd_notify(0, "STOPPING=1");
        lander_free(l);
        return 0;
}
