/*
 * rdmaxfer-lander's sessions (lander-int.h): each a job's identity, proven
 * by the MUNGE credential the user's xferctl made (decoded here, through
 * this node's munged), bound to the job and this node, and the identity
 * the lander acts as between a session's requests.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lander-int.h"

int lander_new(struct lander **out, struct lander_settings *s)
{
        struct lander *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->s = *s;
        s->roots.n = 0;         /* ours now */
        l->next_id = 1;
        l->ctx = munge_ctx_create();
        if (!l->ctx || (s->munge_socket && munge_ctx_set(l->ctx, MUNGE_OPT_SOCKET, s->munge_socket) != EMUNGE_SUCCESS)) {
                lander_free(l);
                return -EIO;
        }
        *out = l;
        return 0;
}

void lander_free(struct lander *l)
{
        if (!l)
                return;
        for (unsigned int i = 0; i < LANDER_SESSIONS_MAX; i++)
                if (l->session[i].id != 0)
                        lander_session_end(l, &l->session[i]);
        lander_idle(l);
        if (l->ctx)
                munge_ctx_destroy(l->ctx);
        landfs_roots_free(&l->s.roots);
        free(l);
}

unsigned int lander_sessions(const struct lander *l)
{
        return l->nsessions;
}

void lander_error_reply(struct landmsg *reply, int err, unsigned int verdict, const char *where, const char *fmt, ...)
{
        va_list ap;

        reply->type = LANDMSG_ERROR;
        memset(&reply->error, 0, sizeof(reply->error));
        reply->error.err = (uint32_t)(err < 0 ? -err : err);
        reply->error.verdict = (uint16_t)verdict;
        if (where)
                snprintf(reply->error.where, sizeof(reply->error.where), "%s", where);
        va_start(ap, fmt);
        vsnprintf(reply->error.text, sizeof(reply->error.text), fmt, ap);
        va_end(ap);
}

/* Is one of @s's addresses this node's? */
static bool addrs_local(const struct landmsg_session *s)
{
        struct ifaddrs *ifa = NULL;
        bool found = false;

        if (getifaddrs(&ifa) < 0)
                return false;
        for (struct ifaddrs *i = ifa; i && !found; i = i->ifa_next) {
                uint8_t a[LANDMSG_ADDR_SIZE] = { 0 };

                if (!i->ifa_addr)
                        continue;
                if (i->ifa_addr->sa_family == AF_INET) {
                        const struct sockaddr_in *in = (const void *)i->ifa_addr;

                        a[10] = a[11] = 0xff;
                        memcpy(a + 12, &in->sin_addr, 4);
                } else if (i->ifa_addr->sa_family == AF_INET6) {
                        memcpy(a, &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr, 16);
                } else {
                        continue;
                }
                for (unsigned int k = 0; k < s->naddrs && !found; k++)
                        found = memcmp(a, s->addrs[k], LANDMSG_ADDR_SIZE) == 0;
        }
        freeifaddrs(ifa);
        return found;
}

/* The credential just decoded, past its TTL: made within landing_max_age,
 * between daemons that hold a key. */
static bool session_old_ok(struct lander *l)
{
        time_t made = 0;

        if (!l->s.keyed || l->s.max_age == 0 ||
            munge_ctx_get(l->ctx, MUNGE_OPT_ENCODE_TIME, &made) != EMUNGE_SUCCESS || made <= 0)
                return false;
        return time(NULL) - made <= (time_t)l->s.max_age;
}

/*
 * The identity @s's credential proves, bound to this job: 0 with *@uid
 * and *@gid, or -errno with the reason in @reply.
 */
static int session_identity(struct lander *l, const struct landmsg_session *s, uid_t *uid, gid_t *gid,
                            struct landmsg *reply)
{
        uint8_t want[LANDMSG_BINDING_SIZE];
        void *payload = NULL;
        int plen = 0;
        bool replayed, expired = false;
        munge_err_t e;

        if (landmsg_binding(s, want) < 0) {
                lander_error_reply(reply, EINVAL, 0, NULL, "a session that binds nothing");
                return -EINVAL;
        }
        *uid = (uid_t)-1;
        *gid = (gid_t)-1;
        e = munge_decode(s->cred, l->ctx, &payload, &plen, uid, gid);
        /* Decoded on this node before: munged still says whose it is and
         * what it binds (munge(3)). The same job's next attempt presents
         * it again, to this lander or, after a restart, to the next one:
         * its binding decides, as for a fresh one (SECURITY.md). */
        replayed = e == EMUNGE_CRED_REPLAYED && payload;
        /* Past its TTL: the job waited or retried that long. Within
         * landing_max_age of its making, and only between daemons that
         * prove a key_file to each other, its binding still decides
         * (SECURITY.md, Waiting past the TTL). */
        if (e == EMUNGE_CRED_EXPIRED && payload && *uid != (uid_t)-1 && session_old_ok(l))
                expired = true;
        if (e != EMUNGE_SUCCESS && !replayed && !expired) {
                free(payload);
                if (e == EMUNGE_SOCKET) {
                        lander_error_reply(reply, EHOSTDOWN, 0, NULL,
                                    "munged is not reachable on the receiving node (%s): is munge.service running?",
                                    munge_ctx_strerror(l->ctx) ?: munge_strerror(e));
                        return -EHOSTDOWN;
                }
                if (e == EMUNGE_CRED_EXPIRED) {
                        lander_error_reply(reply, ETIME, 0, NULL, "MUNGE refused the credential: %s (%s)",
                                    munge_ctx_strerror(l->ctx) ?: munge_strerror(e),
                                    !l->s.keyed ? "a job may outlive its credential only between daemons with "
                                                  "a key_file" :
                                    l->s.max_age ? "made longer ago than landing_max_age" :
                                                   "landing_max_age is 0");
                        return -ETIME;
                }
                lander_error_reply(reply, EPERM, 0, NULL, "MUNGE refused the credential: %s",
                            munge_ctx_strerror(l->ctx) ?: munge_strerror(e));
                return -EPERM;
        }
        if (plen != LANDMSG_BINDING_SIZE || sodium_memcmp(payload, want, sizeof(want)) != 0) {
                free(payload);
                if (expired) {
                        lander_error_reply(reply, EPERM, 0, NULL, "the credential has expired, and was made for another "
                                    "job (its destination, token or nodes differ)");
                        return -EPERM;
                }
                lander_error_reply(reply, EPERM, 0, NULL, "%s (its destination, token or nodes differ)",
                            replayed ? "MUNGE: the credential was used before (replayed), for another job"
                                     : "the credential was made for another job");
                return -EPERM;
        }
        free(payload);
        if (expired)
                fprintf(stderr, "<5>uid %u: a credential past its TTL proves its own job still (landing_max_age "
                        "%u s)\n", (unsigned int)*uid, (unsigned int)l->s.max_age);
        return 0;
}


/* @ss's parent, leaf and staging directory (struct lander_session). */
static void session_stage(const struct lander *l, struct lander_session *ss, const uint8_t token[LANDMSG_TOKEN_SIZE])
{
        const char *slash = strrchr(ss->dest, '/');
        int n;

        snprintf(ss->leaf, sizeof(ss->leaf), "%s", slash + 1);
        n = snprintf(ss->stage_name, sizeof(ss->stage_name), ".rdmaxfer-stage-");
        for (int i = 0; i < LANDMSG_TOKEN_SIZE; i++)
                n += snprintf(ss->stage_name + n, sizeof(ss->stage_name) - (size_t)n, "%02x", token[i]);
        if (snprintf(ss->stage_in, sizeof(ss->stage_in), "%s/%s", ss->dest, ss->stage_name) >=
            (int)sizeof(ss->stage_in))
                ss->stage_in[0] = '\0';
        memcpy(ss->parent, ss->dest, (size_t)(slash - ss->dest));
        ss->parent[slash - ss->dest] = '\0';
        if (!ss->parent[0] || !landfs_roots_find(&l->s.roots, ss->parent) ||
            snprintf(ss->stage, sizeof(ss->stage), "%s/%s", ss->parent, ss->stage_name) >= (int)sizeof(ss->stage))
                ss->parent[0] = ss->stage[0] = '\0';
}

void lander_session_open(struct lander *l, unsigned int conn, const struct landmsg_session *s,
                           struct landmsg *reply)
{
        struct lander_session *ss = NULL;
        struct passwd pw, *pwp = NULL;
        static char pwbuf[16384];
        gid_t groups[LANDFS_GROUPS_MAX];
        int ngroups = LANDFS_GROUPS_MAX, r;
        uid_t uid;
        gid_t gid;

        /* munged and the user database are asked as the lander. */
        lander_idle(l);
        if (l->s.roots.n == 0) {
                lander_error_reply(reply, EPERM, 0, NULL, "user landing is off on this node: its landing_roots is empty");
                return;
        }
        if (session_identity(l, s, &uid, &gid, reply) < 0)
                return;
        if (!addrs_local(s)) {
                lander_error_reply(reply, EPERM, 0, NULL, "the credential names none of this node's addresses");
                return;
        }
        if (uid == 0 && !l->s.allow_root) {
                lander_error_reply(reply, EPERM, 0, NULL, "root does not land files here (allow_root_landing is off)");
                return;
        }
        if (!landfs_path_check(s->dest)) {
                lander_error_reply(reply, EINVAL, 0, s->dest, "not an absolute path in normal form");
                return;
        }
        if (!landfs_roots_find(&l->s.roots, s->dest)) {
                lander_error_reply(reply, EPERM, LANDFS_OUTSIDE_ROOTS, s->dest, "not beneath this node's landing_roots (%s)",
                            l->s.roots_text);
                return;
        }
        r = getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp);
        if (r != 0 || !pwp) {
                /* Not there, or the user database could not say (ERANGE: an
                 * entry of more than 16 KiB; EIO: sssd or LDAP away). */
                if (r == 0 || r == ENOENT || r == ESRCH)
                        lander_error_reply(reply, ENOENT, 0, NULL, "uid %u is no user on this node", (unsigned int)uid);
                else
                        lander_error_reply(reply, r, 0, NULL, "uid %u: the user database: %s", (unsigned int)uid,
                                    strerror(r));
                return;
        }
        if (getgrouplist(pw.pw_name, gid, groups, &ngroups) < 0) {
                lander_error_reply(reply, E2BIG, 0, NULL, "%s is in more than %d groups", pw.pw_name, LANDFS_GROUPS_MAX);
                return;
        }
        for (unsigned int i = 0; i < LANDER_SESSIONS_MAX && !ss; i++)
                if (l->session[i].id == 0)
                        ss = &l->session[i];
        if (!ss) {
                lander_error_reply(reply, ENOSPC, 0, NULL, "the lander holds %d sessions already", LANDER_SESSIONS_MAX);
                return;
        }
        memset(ss, 0, sizeof(*ss));
        ss->stage_fd = -1;
        ss->kept_fd = -1;
        ss->id = l->next_id++;
        ss->conn = conn;
        ss->direction = s->direction;
        ss->flags = s->flags;
        ss->who.uid = uid;
        ss->who.gid = gid;
        ss->who.ngroups = (size_t)ngroups;
        memcpy(ss->who.groups, groups, (size_t)ngroups * sizeof(gid_t));
        snprintf(ss->user, sizeof(ss->user), "%s", pw.pw_name);
        snprintf(ss->dest, sizeof(ss->dest), "%s", s->dest);
        session_stage(l, ss, s->token);
        l->nsessions++;

        reply->type = LANDMSG_SESSION_OK;
        memset(&reply->session_ok, 0, sizeof(reply->session_ok));
        reply->session_ok.session = ss->id;
        reply->session_ok.uid = uid;
        reply->session_ok.gid = gid;
        snprintf(reply->session_ok.user, sizeof(reply->session_ok.user), "%s", pw.pw_name);
}

struct lander_session *lander_session_find(struct lander *l, unsigned int conn, uint64_t id)
{
        for (unsigned int i = 0; i < LANDER_SESSIONS_MAX; i++)
                if (l->session[i].id == id && l->session[i].conn == conn)
                        return &l->session[i];
        return NULL;
}

/* The staging directory let go of: published, discarded, or the session over. */
void lander_stage_release(struct lander_session *ss)
{
        ss->stage_fd = safe_close(ss->stage_fd);
        ss->kept_fd = safe_close(ss->kept_fd);
        ss->kept_path[0] = '\0';
}

void lander_mem(struct lander_session *ss, int fd, struct landmsg *reply)
{
        const int sealed = F_SEAL_SHRINK | F_SEAL_GROW;
        struct stat st;
        void *p = NULL;
        int seals;

        if (ss->direction != LANDMSG_PUSH || (ss->flags & LANDMSG_SESSION_DRY)) {
                lander_error_reply(reply, EPERM, 0, NULL, "only a landing makes files (not a %s)",
                                   ss->direction == LANDMSG_PUSH ? "dry run" : "reading");
                return;
        }
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                lander_error_reply(reply, EBADF, 0, NULL, "no memory came with it");
                return;
        }
        /* Sealed, it can neither shrink under the mapping nor grow past
         * what was mapped: what is read of it is there. */
        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0 || (seals & sealed) != sealed) {
                lander_error_reply(reply, EPERM, 0, NULL, "memory that is not sealed against resizing "
                                   "(a memfd with F_SEAL_SHRINK and F_SEAL_GROW)");
                return;
        }
        if (st.st_size > (off_t)LANDMSG_MEM_MAX) {
                lander_error_reply(reply, E2BIG, 0, NULL, "memory of %lld bytes, more than %u",
                                   (long long)st.st_size, LANDMSG_MEM_MAX);
                return;
        }
        if (st.st_size > 0) {
                p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
                if (p == MAP_FAILED) {
                        lander_error_reply(reply, errno, 0, NULL, "mapping the memory: %s", strerror(errno));
                        return;
                }
        }
        lander_mem_release(ss);
        ss->mem = p;
        ss->mem_size = (size_t)st.st_size;
        reply->type = LANDMSG_OK;
}

void lander_mem_release(struct lander_session *ss)
{
        if (ss->mem)
                munmap((void *)ss->mem, ss->mem_size);
        ss->mem = NULL;
        ss->mem_size = 0;
}

void lander_session_end(struct lander *l, struct lander_session *ss)
{
        if (l->as == ss->id)
                lander_idle(l);
        lander_stage_release(ss);
        lander_mem_release(ss);
        memset(ss, 0, sizeof(*ss));
        l->nsessions--;
}

void lander_conn_closed(struct lander *l, unsigned int conn)
{
        for (unsigned int i = 0; i < LANDER_SESSIONS_MAX; i++)
                if (l->session[i].id != 0 && l->session[i].conn == conn)
                        lander_session_end(l, &l->session[i]);
}

/*
 * Be @ss's user for what follows, or say why not in @reply. The lander
 * stays that user from one request of the session to the next (the
 * requests of a chunk come back to back), and is itself again before
 * anything else: another session's request (which becomes its own user
 * afresh), a SESSION (munged and the user database are asked as the
 * lander), the end of a session, or a wait for the next request
 * (lander_idle).
 */
bool lander_as(struct lander *l, const struct lander_session *ss, struct landmsg *reply)
{
        int r;

        if (l->as == ss->id)
                return true;
        lander_idle(l);
        r = landfs_become(&ss->who);
        if (r < 0) {
                lander_error_reply(reply, r, 0, NULL, "cannot act as %s: %s", ss->user, strerror(-r));
                return false;
        }
        l->as = ss->id;
        return true;
}

void lander_idle(struct lander *l)
{
        if (l->as == 0)
                return;
        /* Back to the lander's own identity, or out: never go on as someone else. */
        if (landfs_unbecome() < 0) {
                fprintf(stderr, "<2>cannot become the lander again after acting as a user: exiting\n");
                exit(1);
        }
        l->as = 0;
}

/* Why landfs_open_dir refused, for the user. */