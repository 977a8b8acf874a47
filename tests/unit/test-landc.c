/*
 * The daemon's connection to rdmaxfer-lander (transport/landc.c) on a
 * libevent loop, against the real rdmaxfer-lander program (its path is the
 * first argument) and a munged of the test's own: a session, a nameless
 * file and its name through the loop, requests answered in order; a
 * lander that goes away fails what waits on it with ECONNRESET and the
 * next request reaches a new one; a lander that is not there is an error
 * told from the loop, never from within landc_ask; the queue is bounded.
 * Needs root and munged (SKIP without either).
 */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landc.h"
#include "macro.h"
#include "munge-fixture.h"
#include "tap.h"

static char base[2048], msock[4200], lsock[4200], conf[4200];
static const char *lander_exe;
static pid_t lander_pid = -1;
static struct event_base *evb;
static uid_t nobody_uid;
static gid_t nobody_gid;

struct answer {
        bool done;
        int order;
        struct landmsg reply;
        int fd;
};
static int answers;

static void on_done(void *arg, const struct landmsg *reply, int fd)
{
        struct answer *a = arg;

        a->done = true;
        a->order = ++answers;
        a->reply = *reply;
        a->fd = fd;
}

static bool in_ask;
static void on_done_check(void *arg, const struct landmsg *reply, int fd)
{
        struct answer *a = arg;

        on_done(arg, reply, fd);
        if (in_ask)
                a->order = -1;  /* called from within landc_ask: wrong */
}

/* Run the loop until @a is answered (at most 10 s). */
static bool wait_for(struct answer *a)
{
        for (int i = 0; i < 1000 && !a->done; i++) {
                struct timeval tv = { 0, 10000 };

                event_base_loopexit(evb, &tv);
                event_base_dispatch(evb);
        }
        return a->done;
}

static void lander_start(void)
{
        lander_pid = fork();
        if (lander_pid == 0) {
                execl(lander_exe, lander_exe, "--config", conf, "--socket", lsock, "--munge-socket", msock,
                      "--daemon-user", "root", (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 100 && access(lsock, F_OK) != 0; i++)
                usleep(50000);
        usleep(100000);
}

static void lander_kill(void)
{
        if (lander_pid > 0) {
                kill(lander_pid, SIGKILL);
                waitpid(lander_pid, NULL, 0);
                lander_pid = -1;
        }
        unlink(lsock);
}

static void session_fill(struct landmsg *m, const char *dest)
{
        memset(m, 0, sizeof(*m));
        m->type = LANDMSG_SESSION;
        m->session.direction = LANDMSG_PUSH;
        m->session.naddrs = 1;
        randombytes_buf(m->session.token, sizeof(m->session.token));
        m->session.addrs[0][10] = m->session.addrs[0][11] = 0xff;
        m->session.addrs[0][12] = 127;
        m->session.addrs[0][15] = 1;
        snprintf(m->session.dest, sizeof(m->session.dest), "%s/scratch/%s", base, dest);
        munge_fixture_cred(&m->session, nobody_uid, nobody_gid, NULL);
}

static void op_fill(struct landmsg *m, uint16_t type, uint64_t session, const char *path, const char *leaf)
{
        memset(m, 0, sizeof(*m));
        m->type = type;
        m->op.session = session;
        m->op.mode = type == LANDMSG_MKDIR ? 0755 : type == LANDMSG_TMPFILE ? 0644 : 0;
        snprintf(m->op.path, sizeof(m->op.path), "%s", path);
        snprintf(m->op.leaf, sizeof(m->op.leaf), "%s", leaf ? leaf : "");
}

static struct landmsg req;

static void test_flow(struct landc *c)
{
        static struct answer s, mk[3], tf, ln;
        struct stat st;
        uint64_t sid;

        session_fill(&req, "run1");
        in_ask = true;
        is_int(landc_ask(c, &req, -1, on_done_check, &s), 0, "SESSION asked");
        in_ask = false;
        ok(wait_for(&s) && s.order != -1 && s.reply.type == LANDMSG_SESSION_OK && s.reply.session_ok.uid == nobody_uid,
           "SESSION_OK for nobody, on the loop");
        sid = s.reply.session_ok.session;
        op_fill(&req, LANDMSG_MKDIR, sid, "", NULL);
        landc_ask(c, &req, -1, on_done, &mk[0]);
        op_fill(&req, LANDMSG_MKDIR, sid, "a", NULL);
        landc_ask(c, &req, -1, on_done, &mk[1]);
        op_fill(&req, LANDMSG_MKDIR, sid, "a/b", NULL);
        landc_ask(c, &req, -1, on_done, &mk[2]);
        is_int(landc_pending(c), 3, "three requests in flight at once");
        ok(wait_for(&mk[2]) && mk[0].order < mk[1].order && mk[1].order < mk[2].order &&
           mk[0].reply.type == LANDMSG_OK && mk[2].reply.type == LANDMSG_OK, "answered in order, each to its own");
        op_fill(&req, LANDMSG_TMPFILE, sid, "a/b", NULL);
        landc_ask(c, &req, -1, on_done, &tf);
        ok(wait_for(&tf) && tf.reply.type == LANDMSG_FD && tf.fd >= 0, "TMPFILE: a descriptor back");
        ok(write(tf.fd, "data", 4) == 4, "written on the daemon's side");
        op_fill(&req, LANDMSG_LINK, sid, "a/b", "f.txt");
        landc_ask(c, &req, tf.fd, on_done, &ln);
        safe_close(tf.fd);      /* landc has its own */
        ok(wait_for(&ln) && ln.reply.type == LANDMSG_OK, "LINK with the descriptor");
        char path[4400];
        snprintf(path, sizeof(path), "%s/scratch/run1/a/b/f.txt", base);
        ok(stat(path, &st) == 0 && st.st_uid == nobody_uid && st.st_size == 4, "the file is nobody's, 4 bytes");
        is_int(landc_pending(c), 0, "nothing waits");
}

/* A request asked from another's failure: it must get a connection of
 * its own, not the failure it was asked from. */
static struct landc *retry_c;
static struct landmsg retry_req;
static struct answer retry_ans;
static void on_done_retry(void *arg, const struct landmsg *reply, int fd)
{
        on_done(arg, reply, fd);
        landc_ask(retry_c, &retry_req, -1, on_done, &retry_ans);
}

static void test_gone(struct landc *c)
{
        static struct answer s, w, again, w2;

        session_fill(&req, "run2");
        landc_ask(c, &req, -1, on_done, &s);
        ok(wait_for(&s) && s.reply.type == LANDMSG_SESSION_OK, "a session");
        /* The lander stops answering, then dies with a request waiting. */
        kill(lander_pid, SIGSTOP);
        op_fill(&req, LANDMSG_MKDIR, s.reply.session_ok.session, "", NULL);
        landc_ask(c, &req, -1, on_done, &w);
        for (int i = 0; i < 20; i++)
                event_base_loop(evb, EVLOOP_NONBLOCK);
        ok(!w.done, "a stopped lander: the request waits");
        lander_kill();
        ok(wait_for(&w) && w.reply.type == LANDMSG_ERROR && w.reply.error.err == ECONNRESET &&
           w.reply.error.verdict == LANDC_UNREACHABLE && strstr(w.reply.error.text, "went away"),
           "killed: ECONNRESET, unreachable (%s)", w.reply.error.text);
        lander_start();
        session_fill(&req, "run2");
        landc_ask(c, &req, -1, on_done, &again);
        ok(wait_for(&again) && again.reply.type == LANDMSG_SESSION_OK,
           "the next request reaches the new lander (the job's credential again: its retry)");

        /* Killed again with a request waiting; a new lander is up before the
         * loop hears of it, and the failure's callback asks anew. */
        kill(lander_pid, SIGSTOP);
        op_fill(&req, LANDMSG_MKDIR, again.reply.session_ok.session, "", NULL);
        landc_ask(c, &req, -1, on_done_retry, &w2);
        for (int i = 0; i < 20; i++)
                event_base_loop(evb, EVLOOP_NONBLOCK);
        session_fill(&retry_req, "run3");
        retry_c = c;
        lander_kill();
        lander_start();
        ok(wait_for(&w2) && w2.reply.type == LANDMSG_ERROR && w2.reply.error.err == ECONNRESET, "the waiting one failed");
        ok(wait_for(&retry_ans) && retry_ans.reply.type == LANDMSG_SESSION_OK,
           "what its callback asked went to the new lander, not down with it");
}

static void test_absent(struct event_base *b)
{
        static struct answer a;
        struct landc *c = NULL;
        char nowhere[4300];

        snprintf(nowhere, sizeof(nowhere), "%s/none.sock", base);
        ok(landc_new(&c, b, nowhere) == 0, "a connection to no lander");
        op_fill(&req, LANDMSG_END, 1, "", NULL);
        in_ask = true;
        is_int(landc_ask(c, &req, -1, on_done_check, &a), 0, "asked");
        in_ask = false;
        ok(!a.done, "not answered from within landc_ask");
        ok(wait_for(&a) && a.order != -1 && a.reply.type == LANDMSG_ERROR && a.reply.error.err == ENOENT &&
           a.reply.error.verdict == LANDC_UNREACHABLE && strstr(a.reply.error.text, "cannot reach rdmaxfer-lander"),
           "from the loop, unreachable: %s", a.reply.error.text);
        landc_free(c);
}

static void test_bounded(struct landc *c)
{
        static struct answer a[LANDC_PENDING_MAX + 1];
        int r = 0;

        kill(lander_pid, SIGSTOP);
        op_fill(&req, LANDMSG_END, 99, "", NULL);
        for (int i = 0; i < LANDC_PENDING_MAX && r == 0; i++)
                r = landc_ask(c, &req, -1, on_done, &a[i]);
        is_int(r, 0, "LANDC_PENDING_MAX requests queued");
        is_int(landc_ask(c, &req, -1, on_done, &a[LANDC_PENDING_MAX]), -EBUSY, "one more: EBUSY");
        kill(lander_pid, SIGCONT);
        ok(wait_for(&a[LANDC_PENDING_MAX - 1]) && a[LANDC_PENDING_MAX - 1].reply.type == LANDMSG_ERROR &&
           a[LANDC_PENDING_MAX - 1].reply.error.err == ESRCH, "all answered once it goes on (ESRCH: no such session)");
        op_fill(&req, LANDMSG_LINK, 1, "", "");
        is_int(landc_ask(c, &req, -1, on_done, &a[0]), -EINVAL, "a request that does not encode: EINVAL");
}

int main(int argc, char **argv)
{
        char tmpl[] = "/tmp/test-landc.XXXXXX", dir[4300], cmd[4400];
        struct landc *c = NULL;
        struct passwd *pw;
        FILE *f;

        if (argc != 2)
                return 2;
        lander_exe = argv[1];
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root to start munged and the lander\n");
                return 0;
        }
        if (system("command -v munged >/dev/null") != 0) {
                printf("1..0 # SKIP no munged here (Debian's munge package)\n");
                return 0;
        }
        pw = getpwnam("nobody");
        if (!pw || sodium_init() < 0 || !mkdtemp(tmpl) || !realpath(tmpl, dir) || strlen(dir) >= sizeof(base))
                return 1;
        strcpy(base, dir);
        nobody_uid = pw->pw_uid;
        nobody_gid = pw->pw_gid;
        signal(SIGPIPE, SIG_IGN);
        chmod(base, 0711);
        snprintf(dir, sizeof(dir), "%s/scratch", base);
        if (mkdir(dir, 01777) < 0 || chmod(dir, 01777) < 0)
                return 1;
        snprintf(dir, sizeof(dir), "%s/munge", base);
        if (!munge_fixture_start(dir, msock, sizeof(msock))) {
                printf("not ok 1 - munged started\n");
                munge_fixture_stop();
                return 1;
        }
        snprintf(conf, sizeof(conf), "%s/conf", base);
        snprintf(lsock, sizeof(lsock), "%s/lander.sock", base);
        f = fopen(conf, "we");
        if (!f)
                return 1;
        fprintf(f, "landing_roots = %s/scratch\n", base);
        fclose(f);
        lander_start();
        evb = event_base_new();
        ok(evb && landc_new(&c, evb, lsock) == 0, "a connection to the lander");

        test_flow(c);
        test_gone(c);
        test_absent(evb);
        test_bounded(c);

        landc_free(c);
        event_base_free(evb);
        lander_kill();
        munge_fixture_stop();
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        if (system(cmd) != 0)
                diag("could not remove %s", base);
        return done_testing();
}
