/*
 * A landing's MUNGE credential as xferctl makes it (client/landcred.c),
 * through a munged of the test's own: made as the user who runs it, its
 * payload the job's binding (landmsg_binding) with a fresh token, the
 * longest lifetime munged allows, decodable by root only (the receiving
 * node's lander); and what xferctl says when munged is not there or the
 * peer's address cannot be bound. Root only (munged, other users).
 */

#include <errno.h>
#include <munge.h>
#include <pwd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landcred.h"
#include "munge-fixture.h"
#include "tap.h"
#include "tmptree.h"

static char sock[4200];
static uid_t nobody_uid;
static gid_t nobody_gid;

struct decoded {
        munge_err_t e;
        uid_t uid;
        int ttl;
        uid_t restriction;
        int len;
        uint8_t payload[LANDMSG_BINDING_SIZE];
};

/* Decode @cred through the fixture's munged, as whoever runs this. */
static struct decoded decode(const char *cred)
{
        struct decoded d = { .e = EMUNGE_SNAFU };
        munge_ctx_t ctx = munge_ctx_create();
        void *payload = NULL;
        gid_t gid;

        munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock);
        d.e = munge_decode(cred, ctx, &payload, &d.len, &d.uid, &gid);
        munge_ctx_get(ctx, MUNGE_OPT_TTL, &d.ttl);
        munge_ctx_get(ctx, MUNGE_OPT_UID_RESTRICTION, &d.restriction);
        if (payload && d.len == LANDMSG_BINDING_SIZE)
                memcpy(d.payload, payload, sizeof(d.payload));
        free(payload);
        munge_ctx_destroy(ctx);
        return d;
}

/* The binding a lander computes for a push of @dest to @addr with @token. */
static void binding_of(const char *addr, const char *dest, const uint8_t *token, uint8_t flags,
                       uint8_t out[LANDMSG_BINDING_SIZE])
{
        static struct landmsg_session s;

        memset(&s, 0, sizeof(s));
        s.direction = LANDMSG_PUSH;
        s.flags = flags;
        s.naddrs = 1;
        landmsg_addr_parse(addr, s.addrs[0]);
        memcpy(s.token, token, LANDMSG_TOKEN_SIZE);
        snprintf(s.dest, sizeof(s.dest), "%s", dest);
        landmsg_binding(&s, out);
}

/* @fn in a child that became nobody: its exit status (0 passes). */
static int as_nobody(int (*fn)(void *), void *arg)
{
        pid_t pid = fork();
        int status;

        if (pid == 0) {
                if (setgid(nobody_gid) < 0 || setuid(nobody_uid) < 0)
                        _exit(100);
                _exit(fn(arg));
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status);
}

static int decode_refused(void *cred)
{
        struct decoded d = decode(cred);

        return d.e == EMUNGE_CRED_UNAUTHORIZED ? 0 : 1 + (int)d.e;
}

/* As nobody: a credential into the pipe's write end @arg. */
static int make_into(void *arg)
{
        static struct landcred lc;
        char err[512];
        int fd = *(int *)arg;

        if (landcred_make("fd00::2", "/scratch/nobody/x", false, sock, &lc, err, sizeof(err)) < 0)
                return 1;
        return write(fd, &lc, sizeof(lc)) == (ssize_t)sizeof(lc) ? 0 : 2;
}

static void test_made(void)
{
        static struct landcred a, b;
        uint8_t want[LANDMSG_BINDING_SIZE];
        struct decoded d, plain;
        munge_ctx_t ctx;
        char err[512] = "", *cred = NULL;

        ok(landcred_make("10.0.0.2", "/scratch/alice/x", false, sock, &a, err, sizeof(err)) == 0,
           "a credential for a push of /scratch/alice/x to 10.0.0.2 (%s)", err);
        ok(strncmp(a.cred, "MUNGE:", 6) == 0 && strlen(a.cred) < sizeof(a.cred), "MUNGE text, %zu bytes",
           strlen(a.cred));
        d = decode(a.cred);
        ok(d.e == EMUNGE_SUCCESS && d.uid == geteuid(), "decoded by root: made as uid %u (%s)",
           (unsigned int)d.uid, munge_strerror(d.e));
        binding_of("10.0.0.2", "/scratch/alice/x", a.token, 0, want);
        ok(d.len == LANDMSG_BINDING_SIZE && memcmp(d.payload, want, sizeof(want)) == 0,
           "its payload is the job's binding, with the token it handed out (%d bytes)", d.len);
        binding_of("10.0.0.3", "/scratch/alice/x", a.token, 0, want);
        ok(memcmp(d.payload, want, sizeof(want)) != 0, "not another node's binding");
        ok(d.restriction == 0, "only root may decode it (uid restriction %u)", (unsigned int)d.restriction);

        /* munged's default lifetime is shorter than its maximum (300 s, 3600 s). */
        ctx = munge_ctx_create();
        munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock);
        munge_encode(&cred, ctx, NULL, 0);
        munge_ctx_destroy(ctx);
        plain = decode(cred);
        free(cred);
        ok(plain.e == EMUNGE_SUCCESS && d.ttl > plain.ttl, "it lives as long as munged allows: %d s, not "
           "the default %d s", d.ttl, plain.ttl);

        ok(landcred_make("10.0.0.2", "/scratch/alice/x", false, sock, &b, err, sizeof(err)) == 0 &&
           memcmp(a.token, b.token, sizeof(a.token)) != 0 && strcmp(a.cred, b.cred) != 0,
           "the same send again: another token, another credential");
        ok(as_nobody(decode_refused, a.cred) == 0, "another user cannot decode it");

        /* --overwrite is the user's word, in the binding: the daemon cannot add it. */
        ok(landcred_make("10.0.0.2", "/scratch/alice/x", true, sock, &b, err, sizeof(err)) == 0, "with --overwrite");
        d = decode(b.cred);
        binding_of("10.0.0.2", "/scratch/alice/x", b.token, LANDMSG_SESSION_REPLACE, want);
        ok(d.e == EMUNGE_SUCCESS && d.len == LANDMSG_BINDING_SIZE && memcmp(d.payload, want, sizeof(want)) == 0,
           "its binding says replacing is allowed");
        binding_of("10.0.0.2", "/scratch/alice/x", b.token, 0, want);
        ok(memcmp(d.payload, want, sizeof(want)) != 0, "and is not the binding of one that does not");
}

static void test_as_user(void)
{
        static struct landcred lc;
        uint8_t want[LANDMSG_BINDING_SIZE];
        struct decoded d;
        int p[2], r;
        ssize_t n;

        if (pipe(p) < 0)
                abort();
        r = as_nobody(make_into, &p[1]);
        close(p[1]);
        n = read(p[0], &lc, sizeof(lc));
        close(p[0]);
        ok(r == 0 && n == (ssize_t)sizeof(lc), "nobody makes one (exit %d)", r);
        d = decode(lc.cred);
        binding_of("fd00::2", "/scratch/nobody/x", lc.token, 0, want);
        ok(d.e == EMUNGE_SUCCESS && d.uid == nobody_uid && memcmp(d.payload, want, sizeof(want)) == 0,
           "it says nobody (uid %u), for an IPv6 peer's binding (%s)", (unsigned int)d.uid, munge_strerror(d.e));
}

static void test_refused(void)
{
        static struct landcred lc;
        char err[512] = "", gone[sizeof(sock) + 8];

        ok(landcred_make("beta", "/scratch/x", false, sock, &lc, err, sizeof(err)) == -EINVAL &&
           strstr(err, "'beta'"), "a name, not an address: refused (%s)", err);
        err[0] = '\0';
        ok(landcred_make("fe80::1%eth0", "/scratch/x", false, sock, &lc, err, sizeof(err)) == -EINVAL &&
           strstr(err, "scope"), "an address with a scope: refused, saying so (%s)", err);
        snprintf(gone, sizeof(gone), "%s.gone", sock);
        err[0] = '\0';
        ok(landcred_make("10.0.0.2", "/scratch/x", false, gone, &lc, err, sizeof(err)) == -EHOSTDOWN &&
           strstr(err, "no MUNGE credential: munged is not reachable") && strstr(err, "is munged running"),
           "no munged: said (%s)", err);
}

int main(void)
{
        char tmpl[] = "/tmp/test-landcred.XXXXXX";
        struct passwd *pw;

        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root to start munged and to act as another user\n");
                return 0;
        }
        if (system("command -v munged >/dev/null") != 0) {
                printf("1..0 # SKIP no munged here (Debian's munge package)\n");
                return 0;
        }
        pw = getpwnam("nobody");
        if (!pw || sodium_init() < 0 || tmptree_make(tmpl) < 0)
                return 1;
        nobody_uid = pw->pw_uid;
        nobody_gid = pw->pw_gid;
        if (!munge_fixture_start(at("munge"), sock, sizeof(sock))) {
                printf("not ok 1 - munged started on %s\n", sock);
                munge_fixture_stop();
                tmptree_remove();
                return 1;
        }
        test_made();
        test_as_user();
        test_refused();
        munge_fixture_stop();
        tmptree_remove();
        return done_testing();
}
