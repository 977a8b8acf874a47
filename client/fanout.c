/*
 * xferctl send to several peers (a NODELIST, peer.h), two ways.
 *
 * A relay chain, what one regular file or one tree (-r) goes as: one
 * job in the local rdmaxferd, to the first peer, which relays the file
 * (or every entry of the tree) to the second, and so on (ctl.h); the
 * sender's link carries it once. Its report is the star's, a line per
 * peer and the summary, from the job's nodes.
 *
 * A star, for what a chain cannot carry (several plain files, sync) or
 * with --parallel: one child process per peer, each the very single-peer
 * send (its own job in the local rdmaxferd, its retries, its report), at
 * most --parallel at once. The children's output comes back through
 * pipes and is shown line by line, each line naming its peer; with --json
 * the children's objects are gathered into one. Each child is in a
 * process group of its own, so a Ctrl-C reaches it once, passed on by us.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "esc.h"
#include "hostlist.h"
#include "json.h"
#include "peer.h"
#include "progress.h"
#include "sendcmd.h"
#include "wire.h"
#include "xferctl.h"

/* What one child may print on stdout with --json: one job object. */
#define FANOUT_JSON_MAX         (1u << 20)
#define FANOUT_LINE_MAX         4096

struct fanout_stream {
        int fd;                         /* read end, -1 once at EOF */
        char *buf;                      /* a partial line, or (--json stdout) everything */
        size_t len, cap;
        bool truncated;
};

struct fanout_child {
        const char *peer;               /* as expanded from the list */
        pid_t pid;                      /* 0: not started; -1: reaped */
        struct fanout_stream out, err;
        int exit;
};

static volatile sig_atomic_t fanout_interrupts;

static void fanout_on_sigint(int sig)
{
        fanout_interrupts++;
}

/* One line of a child's, named: "xferctl: PEER: ..." for its messages,
 * "PEER: ..." for what it printed on stdout. */
static void fanout_line(const struct fanout_child *c, FILE *f, const char *line, size_t len)
{
        static const char said[] = "xferctl: ";
        char peer[ESC_TERM_SIZE(HOSTLIST_NAME_MAX + 8)];

        esc_term(peer, sizeof(peer), c->peer);
        if (len >= sizeof(said) - 1 && memcmp(line, said, sizeof(said) - 1) == 0)
                fprintf(f, "xferctl: %s: %.*s\n", peer, (int)(len - (sizeof(said) - 1)),
                        line + sizeof(said) - 1);
        else
                fprintf(f, "%s: %.*s\n", peer, (int)len, line);
}

static int fanout_grow(struct fanout_stream *s, size_t want)
{
        char *p;

        if (want <= s->cap)
                return 0;
        want = MAX(want, 2 * s->cap);
        p = realloc(s->buf, want);
        if (!p)
                return -ENOMEM;
        s->buf = p;
        s->cap = want;
        return 0;
}

/* Read what a child wrote on @s: whole lines shown on @f, or, when @f is
 * NULL, kept whole (bounded). 0 at EOF, 1 for more to come. */
static int fanout_read(struct fanout_child *c, struct fanout_stream *s, FILE *f)
{
        char chunk[4096];
        ssize_t n = read(s->fd, chunk, sizeof(chunk));
        size_t start = 0;

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 1;
        if (n <= 0) {
                if (f && s->len)
                        fanout_line(c, f, s->buf, s->len);
                s->len = f ? 0 : s->len;
                s->fd = safe_close(s->fd);
                return 0;
        }
        if (!f) {
                if (s->len + (size_t)n > FANOUT_JSON_MAX || fanout_grow(s, s->len + (size_t)n) < 0) {
                        s->truncated = true;
                        return 1;
                }
                memcpy(s->buf + s->len, chunk, (size_t)n);
                s->len += (size_t)n;
                return 1;
        }
        for (size_t i = 0; i < (size_t)n; i++) {
                if (chunk[i] != '\n')
                        continue;
                if (s->len) {
                        if (fanout_grow(s, s->len + i - start) == 0) {
                                memcpy(s->buf + s->len, chunk + start, i - start);
                                fanout_line(c, f, s->buf, s->len + i - start);
                        }
                        s->len = 0;
                } else {
                        fanout_line(c, f, chunk + start, i - start);
                }
                start = i + 1;
        }
        /* The rest waits for its newline; a line past the bound is cut. */
        if (start < (size_t)n) {
                size_t rest = MIN((size_t)n - start, FANOUT_LINE_MAX - MIN(s->len, FANOUT_LINE_MAX));

                if (rest && fanout_grow(s, s->len + rest) == 0) {
                        memcpy(s->buf + s->len, chunk + start, rest);
                        s->len += rest;
                }
        }
        return 1;
}

/* Start @c: a child that sends to its peer as `xferctl send ... PEER`
 * would, then exits with that command's code. 0 or -errno. */
static int fanout_start(struct fanout_child *c, struct sendcmd *sc, int (*one)(struct sendcmd *sc))
{
        int out[2], err[2];
        pid_t pid;

        if (pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(err, O_CLOEXEC) < 0) {
                int r = -errno;

                close(out[0]);
                close(out[1]);
                return r;
        }
        /* What we have buffered must not be written twice. */
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(out[0]);
                close(out[1]);
                close(err[0]);
                close(err[1]);
                return r;
        }
        if (pid == 0) {
                struct sigaction dfl = { .sa_handler = SIG_DFL };

                /* Our Ctrl-C is the parent's to pass on, once. */
                (void)setpgid(0, 0);
                sigemptyset(&dfl.sa_mask);
                sigaction(SIGINT, &dfl, NULL);
                if (dup2(out[1], STDOUT_FILENO) < 0 || dup2(err[1], STDERR_FILENO) < 0)
                        _exit(XFERCTL_EXIT_FAILED);
                sc->peer_arg = c->peer;
                exit(one(sc));
        }
        (void)setpgid(pid, pid);
        close(out[1]);
        close(err[1]);
        c->pid = pid;
        c->out.fd = out[0];
        c->err.fd = err[0];
        return 0;
}

/*
 * The job in what our child printed for its one peer (json_peer_open():
 * {"peers":[{"peer":PEER,"exit":N,"job":JOB}]}): JOB's first byte, and its
 * length in *@len; NULL when it printed something else (none, too much).
 */
static const char *fanout_child_job(const struct fanout_child *c, size_t *len)
{
        const struct fanout_stream *s = &c->out;
        _cleanup_(freep) char *head = NULL;
        size_t hlen = 0, n = s->len, k;
        FILE *f;

        while (n && (s->buf[n - 1] == '\n' || s->buf[n - 1] == ' '))
                n--;
        if (s->truncated || !(f = open_memstream(&head, &hlen)))
                return NULL;
        json_peer_open(f, c->peer, 0);
        fclose(f);
        /* Everything up to "exit": as we would write it; the digits; ,"job":. */
        k = (size_t)(strstr(head, "\"exit\":") - head) + strlen("\"exit\":");
        if (n < k + 3 || memcmp(s->buf, head, k) != 0)
                return NULL;
        k += s->buf[k] == '-';
        while (k < n && s->buf[k] >= '0' && s->buf[k] <= '9')
                k++;
        if (n < k + 7 + 3 || memcmp(s->buf + k, ",\"job\":", 7) != 0 || memcmp(s->buf + n - 3, "}]}", 3) != 0)
                return NULL;
        k += 7;
        *len = n - 3 - k;
        return s->buf[k] == '{' && s->buf[n - 4] == '}' ? s->buf + k : NULL;
}

/* Every child's object, in the list's order, as one (json.h):
 * {"peers":[{"peer":"node01","exit":0,"job":{...}},...]} */
static void fanout_json(struct fanout_child *c, size_t n)
{
        fputs("{\"peers\":[", stdout);
        for (size_t i = 0; i < n; i++) {
                const char *job;
                size_t len = 0;

                fputs(i ? ",{\"peer\":" : "{\"peer\":", stdout);
                json_string(stdout, c[i].peer);
                printf(",\"exit\":%d,\"job\":", c[i].exit);
                /* Our own child's job, or null when it printed none (or too much). */
                job = fanout_child_job(&c[i], &len);
                if (job)
                        fwrite(job, 1, len, stdout);
                else
                        fputs("null", stdout);
                fputc('}', stdout);
        }
        fputs("]}\n", stdout);
}

int sendcmd_fanout(struct sendcmd *sc, const struct hostlist *hl, int (*one)(struct sendcmd *sc))
{
        struct sigaction sa = { .sa_handler = fanout_on_sigint }, old;
        unsigned int parallel = sc->parallel ? sc->parallel : SENDCMD_PARALLEL_DEFAULT;
        _cleanup_(freep) struct fanout_child *c = calloc(hl->n, sizeof(*c));
        _cleanup_(freep) size_t *run = calloc(parallel, sizeof(*run));
        struct pollfd pfd[2 * SENDCMD_PARALLEL_MAX];
        size_t next = 0, running = 0, sent = 0, failed = 0;
        sig_atomic_t passed = 0;
        int same = -1;

        if (!c || !run) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        for (size_t i = 0; i < hl->n; i++)
                c[i] = (struct fanout_child){ .peer = hl->names[i], .out.fd = -1, .err.fd = -1,
                                              .exit = XFERCTL_EXIT_FAILED };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old);
        if (old.sa_handler == SIG_IGN)
                sigaction(SIGINT, &old, NULL);
        if (!sc->json && isatty(STDERR_FILENO))
                xferctl_say("sending to %zu peers, at most %u at once", hl->n, parallel);

        while (next < hl->n || running > 0) {
                /* Interrupted: the running ones are cancelled, no more start. */
                if (fanout_interrupts > passed) {
                        passed = fanout_interrupts;
                        for (size_t k = 0; k < running; k++)
                                kill(c[run[k]].pid, SIGINT);
                        for (; next < hl->n; next++)
                                xferctl_say("%s: not sent: interrupted", c[next].peer);
                }
                for (; next < hl->n && running < parallel; next++) {
                        int r = fanout_start(&c[next], sc, one);

                        if (r < 0)
                                xferctl_say("%s: cannot start its send: %s", c[next].peer, strerror(-r));
                        else
                                run[running++] = next;
                }
                for (size_t k = 0; k < running; k++) {
                        pfd[2 * k] = (struct pollfd){ .fd = c[run[k]].out.fd, .events = POLLIN };
                        pfd[2 * k + 1] = (struct pollfd){ .fd = c[run[k]].err.fd, .events = POLLIN };
                }
                /* A negative fd (at EOF) is left out by poll. */
                if (running > 0 && poll(pfd, 2 * running, 1000) < 0 && errno != EINTR) {
                        xferctl_say("poll: %s", strerror(errno));
                        break;
                }
                for (size_t k = 0; k < running;) {
                        struct fanout_child *ch = &c[run[k]];
                        int status;

                        if (ch->out.fd >= 0 && (pfd[2 * k].revents & (POLLIN | POLLHUP | POLLERR)))
                                (void)fanout_read(ch, &ch->out, sc->json ? NULL : stdout);
                        if (ch->err.fd >= 0 && (pfd[2 * k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                                (void)fanout_read(ch, &ch->err, stderr);
                        /* Reaped once both its pipes are at EOF. */
                        if (ch->out.fd >= 0 || ch->err.fd >= 0) {
                                k++;
                                continue;
                        }
                        if (waitpid(ch->pid, &status, 0) < 0)
                                status = 0x100;
                        ch->pid = -1;
                        ch->exit = WIFEXITED(status) ? WEXITSTATUS(status) : XFERCTL_EXIT_FAILED;
                        /* Its slot goes to the last running; pfd follows. */
                        run[k] = run[--running];
                        pfd[2 * k] = pfd[2 * running];
                        pfd[2 * k + 1] = pfd[2 * running + 1];
                }
        }
        for (size_t i = 0; i < hl->n; i++) {
                bool ok = c[i].exit == XFERCTL_EXIT_OK || c[i].exit == XFERCTL_EXIT_PARTIAL;

                sent += ok;
                failed += !ok;
                same = same == -1 || same == c[i].exit ? c[i].exit : -2;
                free(c[i].err.buf);
        }
        if (sc->json) {
                fanout_json(c, hl->n);
        } else if (failed == 0) {
                printf("%zu peers: every one %s\n", hl->n, sc->no_wait ? "queued" : "sent");
        } else {
                const char *sep = "";

                printf("%zu peers: %zu %s, %zu failed (", hl->n, sent, sc->no_wait ? "queued" : "sent", failed);
                for (size_t i = 0; i < hl->n; i++) {
                        if (c[i].exit == XFERCTL_EXIT_OK || c[i].exit == XFERCTL_EXIT_PARTIAL)
                                continue;
                        printf("%s%s", sep, c[i].peer);
                        sep = " ";
                }
                puts(")");
        }
        for (size_t i = 0; i < hl->n; i++)
                free(c[i].out.buf);
        /* Every peer alike: its code; some sent and some not: partial. */
        if (same >= 0)
                return same;
        return sent > 0 ? XFERCTL_EXIT_PARTIAL : XFERCTL_EXIT_FAILED;
}

bool sendcmd_chain_fits(const struct sendcmd *sc)
{
        /* Sync skips what each node has: a relay cannot skip on another's behalf. */
        return !sc->parallel && (sc->recursive || sc->npaths == 1) &&
               !(sc->submit.flags & CTL_SUBMIT_SYNC_MASK);
}

int sendcmd_chain(struct sendcmd *sc, const struct hostlist *hl, int (*one)(struct sendcmd *sc),
                  int (*resolve)(struct sendcmd *sc, const char *host, char *num, size_t numlen))
{
        char host[256], num[CTL_HOST_MAX + 1], err[256];
        char shown[ESC_TERM_SIZE(HOSTLIST_NAME_MAX + 8)];
        uint16_t port;
        int r;

        if (hl->n > CTL_NODES_MAX) {
                xferctl_say("send: a relay chain takes at most %u peers, the NODELIST has %zu "
                            "(send to each directly with --parallel N)", CTL_NODES_MAX, hl->n);
                return XFERCTL_EXIT_USAGE;
        }
        /* The first is sendcmd_one's to resolve, as a single peer. */
        sc->submit.route[0] = '\0';
        for (size_t i = 1; i < hl->n; i++) {
                esc_term(shown, sizeof(shown), hl->names[i]);
                if (peer_split(hl->names[i], host, sizeof(host), &port, err, sizeof(err)) < 0) {
                        xferctl_say("bad peer '%s': %s (expected HOST, HOST:PORT or [IPV6]:PORT)", shown, err);
                        return XFERCTL_EXIT_USAGE;
                }
                r = resolve(sc, host, num, sizeof(num));
                if (r >= 0)
                        return r;
                /* Numeric and at most CTL_ROUTE_HOPS_MAX: it fits. */
                if (ctl_route_add(sc->submit.route, sizeof(sc->submit.route), num, port) < 0) {
                        xferctl_say("peer '%s': its address %s does not fit the chain", shown, num);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        sc->peer_arg = hl->names[0];
        sc->chain = hl;
        if (!sc->json && isatty(STDERR_FILENO))
                xferctl_say("sending to %zu peers as a relay chain, %s first (--parallel N: to each directly)",
                            hl->n, esc_term(shown, sizeof(shown), hl->names[0]));
        return one(sc);
}

/* What became of a chain's peer @i (0: the first), as the job says. */
enum chain_result {
        CHAIN_PUBLISHED,
        CHAIN_FAILED,
        CHAIN_CANCELLED,
        CHAIN_NOT_REACHED,
};

static enum chain_result chain_result(const struct ctl_job *j, size_t i)
{
        /* ctl_decode() saw to it that nodes <= CTL_NODES_MAX, and that the
         * bits, nodes_ok and node_failed agree. */
        if (i < j->nodes && !nodeset_has(&j->nodes_missing, (unsigned int)i))
                return CHAIN_PUBLISHED;
        if (i + 1 == j->node_failed)
                return CHAIN_FAILED;
        if (i == 0 && j->state == CTL_JOB_CANCELLED)
                return CHAIN_CANCELLED;
        return CHAIN_NOT_REACHED;
}

int sendcmd_chain_report(const struct sendcmd *sc)
{
        static const char *const word[] = {
                [CHAIN_PUBLISHED] = "published",
                [CHAIN_FAILED] = "failed",
                [CHAIN_CANCELLED] = "cancelled",
                [CHAIN_NOT_REACHED] = "not reached",
        };
        const struct hostlist *hl = sc->chain;
        const struct ctl_job *j = &sc->job;
        const char *cause = j->node_text[0] ? j->node_text : wire_status_str(j->node_status);
        /* A long chain: a line for its first peer and each that did not publish, not 512. */
        bool brief = hl->n > XFERCTL_NODES_LISTED;
        char peer[ESC_TERM_SIZE(HOSTLIST_NAME_MAX + 8)], prev[ESC_TERM_SIZE(HOSTLIST_NAME_MAX + 8)];
        char name[ESC_TERM_SIZE(sizeof(j->name))], addr[ESC_TERM_SIZE(sizeof(j->node_peer))];
        char text[ESC_TERM_SIZE(sizeof(j->node_text))], line[2048];
        /* A tree: "DEST (N entries)", as the one-peer report names it. */
        char what[sizeof(j->name) + 32], entries[32] = "";
        size_t sent = 0, from = 0;

        esc_term(name, sizeof(name), j->name);
        if (sc->recursive) {
                snprintf(entries, sizeof(entries), "%u entries, ", (unsigned int)j->files_total);
                snprintf(what, sizeof(what), "%s (%u entries)", j->name, (unsigned int)j->files_total);
        } else {
                snprintf(what, sizeof(what), "%s", j->name);
        }
        for (size_t i = 0; i < hl->n; i++) {
                enum chain_result res = chain_result(j, i);

                esc_term(peer, sizeof(peer), hl->names[i]);
                if (res == CHAIN_PUBLISHED) {
                        if (!sc->json && i == 0)
                                printf("%s: %s\n", peer, progress_summary(line, sizeof(line), what, j->peer,
                                                                          j->bytes_done, j->usec));
                        else if (!sc->json && !brief)
                                printf("%s: sent %s (%s%" PRIu64 " bytes), relayed by %s\n", peer, name,
                                       entries, j->bytes_total, esc_term(prev, sizeof(prev), hl->names[from]));
                        /* A relay goes around a node that fails: the next
                         * that has the file has it from this one. */
                        from = i;
                        sent++;
                } else if (res == CHAIN_FAILED) {
                        xferctl_say("%s: send %s to %s failed: %s", peer, name,
                                    esc_term(addr, sizeof(addr), j->node_peer),
                                    esc_term(text, sizeof(text), cause));
                } else if (res == CHAIN_CANCELLED) {
                        xferctl_say("%s: send %s cancelled", peer, name);
                } else {
                        xferctl_say("%s: %s", peer, word[res]);
                }
        }
        if (sc->json) {
                fputs("{\"peers\":[", stdout);
                for (size_t i = 0; i < hl->n; i++) {
                        enum chain_result res = chain_result(j, i);

                        fputs(i ? ",{\"peer\":" : "{\"peer\":", stdout);
                        json_string(stdout, hl->names[i]);
                        printf(",\"exit\":%d,\"result\":", res == CHAIN_PUBLISHED ? XFERCTL_EXIT_OK
                                                                               : XFERCTL_EXIT_FAILED);
                        json_string(stdout, word[res]);
                        if (res == CHAIN_FAILED) {
                                fputs(",\"text\":", stdout);
                                json_string(stdout, cause);
                        }
                        /* The one job that served them all. */
                        fputs(",\"job\":", stdout);
                        json_job(stdout, j);
                        fputc('}', stdout);
                }
                fputs("]}\n", stdout);
        } else if (sent == hl->n) {
                printf("%zu peers: every one sent\n", hl->n);
        } else {
                const char *sep = "";
                size_t named = 0;

                printf("%zu peers: %zu sent, %zu failed (", hl->n, sent, hl->n - sent);
                for (size_t i = 0; i < hl->n; i++) {
                        if (chain_result(j, i) == CHAIN_PUBLISHED)
                                continue;
                        /* The lines above name them all; the summary stays a line. */
                        if (brief && named == XFERCTL_NODES_LISTED) {
                                printf(" and %zu more", hl->n - sent - named);
                                break;
                        }
                        printf("%s%s", sep, esc_term(peer, sizeof(peer), hl->names[i]));
                        sep = " ";
                        named++;
                }
                puts(")");
        }
        /* -r left some out: every peer lacks them. */
        if (sent > 0 && sendcmd_left_out_say(sc))
                return XFERCTL_EXIT_PARTIAL;
        /* As the star's: all or nothing is its code, some and not others partial. */
        if (sent == hl->n)
                return XFERCTL_EXIT_OK;
        return sent > 0 ? XFERCTL_EXIT_PARTIAL : XFERCTL_EXIT_FAILED;
}
