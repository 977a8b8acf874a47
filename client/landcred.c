#include <errno.h>
#include <munge.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "landcred.h"
#include "macro.h"

static void landcred_ctx_destroyp(munge_ctx_t *ctx)
{
        if (*ctx)
                munge_ctx_destroy(*ctx);
}

/* munge_encode's text: libmunge mallocs it; it proves who we are until it expires. */
static void landcred_text_freep(char **text)
{
        if (*text) {
                sodium_memzero(*text, strlen(*text));
                free(*text);
        }
}

int landcred_make(const char *addr, const char *dest, bool replace, const char *munge_socket, struct landcred *out,
                  char *err, size_t errlen)
{
        const char *addrs[] = { addr };
        const struct landcred_req rq = {
                .direction = LANDMSG_PUSH,
                .addrs = addrs,
                .naddrs = 1,
                .dest = dest,
                .replace = replace,
        };

        return landcred_make_for(&rq, munge_socket, out, err, errlen);
}

int landcred_make_for(const struct landcred_req *rq, const char *munge_socket, struct landcred *out, char *err,
                      size_t errlen)
{
        _cleanup_(landcred_ctx_destroyp) munge_ctx_t ctx = NULL;
        _cleanup_(landcred_text_freep) char *text = NULL;
        _cleanup_(freep) struct landmsg_session *s = NULL;
        uint8_t binding[LANDMSG_BINDING_SIZE];
        munge_err_t e;

        if (sodium_init() < 0) {
                snprintf(err, errlen, "libsodium cannot start (no random source?)");
                return -EIO;
        }
        /* Some 14 KiB, for a relay chain's 512 addresses: not on the stack. */
        s = calloc(1, sizeof(*s));
        if (!s) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        s->direction = rq->direction;
        s->flags = (rq->replace ? LANDMSG_SESSION_REPLACE : 0) | (rq->tree ? LANDMSG_SESSION_TREE : 0) |
                   (rq->sync ? LANDMSG_SESSION_SYNC : 0) | (rq->dry ? LANDMSG_SESSION_DRY : 0) |
                   (rq->delete ? LANDMSG_SESSION_DELETE : 0);
        if (rq->naddrs < 1 || rq->naddrs > LANDMSG_ADDRS_MAX) {
                snprintf(err, errlen, "a credential names 1 to %d nodes", LANDMSG_ADDRS_MAX);
                return -EINVAL;
        }
        s->naddrs = (uint16_t)rq->naddrs;
        for (unsigned int k = 0; k < rq->naddrs; k++) {
                const char *addr = rq->addrs[k];
                char shown[ESC_TERM_SIZE(64)];

                if (landmsg_addr_parse(addr, s->addrs[k]) >= 0)
                        continue;
                /* fe80::1%eth0: the scope is this node's name for a link, and the
                 * binding's address is the one the peer finds among its own. */
                if (strchr(addr, '%'))
                        snprintf(err, errlen, "its address '%s' has a scope, which a credential cannot "
                                 "name (not supported yet: use a global or unique local address)",
                                 esc_term(shown, sizeof(shown), addr));
                else
                        snprintf(err, errlen, "'%s' is not a numeric address", esc_term(shown, sizeof(shown), addr));
                return -EINVAL;
        }
        if (strlen(rq->dest) >= sizeof(s->dest)) {
                snprintf(err, errlen, "PATH is longer than %d bytes", LANDMSG_PATH_MAX);
                return -EINVAL;
        }
        strcpy(s->dest, rq->dest);
        if (rq->token)
                memcpy(s->token, rq->token, sizeof(s->token));
        else
                randombytes_buf(s->token, sizeof(s->token));
        if (landmsg_binding(s, binding) < 0) {
                snprintf(err, errlen, "cannot compute the job's binding");
                return -EIO;
        }

        ctx = munge_ctx_create();
        if (!ctx) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        /* A queued or retrying job presents it later: as long as munged allows.
         * Only root decodes it: the receiving node's lander, not a daemon. */
        if (munge_ctx_set(ctx, MUNGE_OPT_TTL, (int)MUNGE_TTL_MAXIMUM) != EMUNGE_SUCCESS ||
            munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)0) != EMUNGE_SUCCESS ||
            (munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, munge_socket) != EMUNGE_SUCCESS)) {
                snprintf(err, errlen, "no MUNGE credential: libmunge refused an option: %s", munge_ctx_strerror(ctx) ?: "?");
                return -EINVAL;
        }
        e = munge_encode(&text, ctx, binding, sizeof(binding));
        if (e == EMUNGE_SOCKET) {
                snprintf(err, errlen, "no MUNGE credential: munged is not reachable (%s); is munged running on "
                         "this node?",
                         munge_ctx_strerror(ctx) ?: munge_strerror(e));
                return -EHOSTDOWN;
        }
        if (e != EMUNGE_SUCCESS) {
                snprintf(err, errlen, "no MUNGE credential: munged refused to make one: %s",
                         munge_ctx_strerror(ctx) ?: munge_strerror(e));
                return e == EMUNGE_NO_MEMORY ? -ENOMEM : -EPERM;
        }
        if (!text || strlen(text) >= sizeof(out->cred)) {
                snprintf(err, errlen, "munged made a MUNGE credential of %zu bytes; a job carries at most %d",
                         text ? strlen(text) : 0, LANDMSG_CRED_MAX);
                return -E2BIG;
        }
        memcpy(out->token, s->token, sizeof(out->token));
        strcpy(out->cred, text);
        return 0;
}
