#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "esc.h"
#include "hostlist.h"
#include "macro.h"
#include "peer.h"

static int peer_port(const char *s, uint16_t *port, char *err, size_t errlen)
{
        char shown[ESC_TERM_SIZE(64)];
        unsigned long v = 0;

        /* strtoul would take "+1", " 1" and "0x1"; a port is plain digits. */
        if (*s == '\0')
                goto bad;
        for (const char *c = s; *c; c++) {
                if (*c < '0' || *c > '9')
                        goto bad;
                v = v * 10 + (unsigned long)(*c - '0');
                if (v > 65535)
                        goto bad;
        }
        if (v == 0)
                goto bad;
        *port = (uint16_t)v;
        return 0;
bad:
        /* Typed, or from a script: escaped like every other string we echo (esc.h). */
        snprintf(err, errlen, "port '%s' is not a number in 1..65535",
                 esc_term(shown, sizeof(shown), s));
        return -EINVAL;
}

static int peer_copy(char *host, size_t hostlen, const char *s, size_t n, char *err, size_t errlen)
{
        if (n == 0) {
                snprintf(err, errlen, "no host");
                return -EINVAL;
        }
        if (n >= hostlen) {
                snprintf(err, errlen, "host name too long");
                return -EINVAL;
        }
        memcpy(host, s, n);
        host[n] = '\0';
        return 0;
}

int peer_split(const char *spec, char *host, size_t hostlen, uint16_t *port,
               char *err, size_t errlen)
{
        const char *colon;
        int r;

        *port = 0;
        if (spec[0] == '[') {
                const char *close = strchr(spec, ']');

                if (!close) {
                        snprintf(err, errlen, "missing ']' after IPv6 address");
                        return -EINVAL;
                }
                r = peer_copy(host, hostlen, spec + 1, (size_t)(close - spec - 1), err, errlen);
                if (r < 0)
                        return r;
                if (close[1] == '\0')
                        return 0;
                if (close[1] != ':') {
                        snprintf(err, errlen, "expected ':PORT' after ']'");
                        return -EINVAL;
                }
                return peer_port(close + 2, port, err, errlen);
        }

        colon = strchr(spec, ':');
        if (colon && strchr(colon + 1, ':'))
                /* Two or more colons and no brackets: a bare IPv6 address, no port. */
                return peer_copy(host, hostlen, spec, strlen(spec), err, errlen);

        r = peer_copy(host, hostlen, spec, colon ? (size_t)(colon - spec) : strlen(spec), err, errlen);
        if (r < 0 || !colon)
                return r;
        return peer_port(colon + 1, port, err, errlen);
}

int peer_resolve(const char *host, char *num, size_t numlen, char *err, size_t errlen)
{
        struct addrinfo hints = {
                .ai_family = AF_UNSPEC,
                /* One entry per address; RDMA CM itself does not care about the type. */
                .ai_socktype = SOCK_STREAM,
        };
        struct addrinfo *res = NULL;
        char text[NI_MAXHOST];
        int r;

        r = getaddrinfo(host, NULL, &hints, &res);
        if (r != 0) {
                snprintf(err, errlen, "%s", r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
                return -EHOSTUNREACH;
        }
        r = getnameinfo(res->ai_addr, res->ai_addrlen, text, sizeof(text), NULL, 0, NI_NUMERICHOST);
        freeaddrinfo(res);
        if (r != 0) {
                snprintf(err, errlen, "%s", gai_strerror(r));
                return -EHOSTUNREACH;
        }
        if (strlen(text) >= numlen) {
                snprintf(err, errlen, "address '%s' is too long", text);
                return -ENAMETOOLONG;
        }
        memcpy(num, text, strlen(text) + 1);
        return 0;
}

/* @n names, each @names[i] then @suffix, in one allocation as hostlist_new()'s. */
static struct hostlist *peer_list_copy(char *const *names, size_t n, const char *suffix)
{
        size_t bytes = 0, slen = strlen(suffix);
        struct hostlist *hl;
        char *next;

        for (size_t i = 0; i < n; i++)
                bytes += strlen(names[i]) + slen + 1;
        hl = calloc(1, sizeof(*hl) + n * sizeof(char *) + bytes);
        if (!hl)
                return NULL;
        hl->n = n;
        hl->names = (char **)(hl + 1);
        next = (char *)(hl->names + n);
        for (size_t i = 0; i < n; i++) {
                hl->names[i] = next;
                next = stpcpy(stpcpy(next, names[i]), suffix) + 1;
        }
        return hl;
}

int peer_list(const char *arg, struct hostlist **out, char *err, size_t errlen)
{
        _cleanup_(hostlist_freep) struct hostlist *hl = NULL;
        _cleanup_(freep) char *list = NULL;
        struct hostlist_error e = { 0 };
        const char *close = strrchr(arg, ']'), *port = NULL;
        char suffix[8] = "";
        int r;

        if (arg[0] == '[') {
                char *one = (char *)arg;

                *out = peer_list_copy(&one, 1, "");
                return *out ? 0 : -ENOMEM;
        }
        /* "node[01-04]:7471", "node[01-04]-ib:7471": the port is every host's. */
        if (close) {
                const char *colon = strrchr(close, ':');

                if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
                    !memchr(close, ',', (size_t)(colon - close)) &&
                    !memchr(close, ' ', (size_t)(colon - close)) &&
                    !memchr(close, '\t', (size_t)(colon - close)))
                        port = colon + 1;
        }
        list = port ? strndup(arg, (size_t)(port - 1 - arg)) : strdup(arg);
        if (!list)
                return -ENOMEM;
        r = hostlist_new(&hl, list, &e);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(err, errlen, "%s at byte %zu", hostlist_problem_str(e.problem), e.offset + 1);
                return r;
        }
        if (hl->n == 0) {
                snprintf(err, errlen, "no host");
                return -EINVAL;
        }
        if (port) {
                uint16_t p;

                if (peer_port(port, &p, err, errlen) < 0)
                        return -EINVAL;
                for (size_t i = 0; i < hl->n; i++) {
                        if (strchr(hl->names[i], ':')) {
                                snprintf(err, errlen, "a port after the list is every host's: "
                                         "no host may name its own");
                                return -EINVAL;
                        }
                }
                snprintf(suffix, sizeof(suffix), ":%u", (unsigned int)p);
                *out = peer_list_copy(hl->names, hl->n, suffix);
                return *out ? 0 : -ENOMEM;
        }
        *out = TAKE_PTR(hl);
        return 0;
}

bool peer_is_self(const char *name, const char *self)
{
        size_t n = strcspn(name, ":"), s = strlen(self), ns = strcspn(name, "."), ss = strcspn(self, ".");

        if (!*self || n == 0)
                return false;
        if (n == s && strncmp(name, self, n) == 0)
                return true;
        /* node01 and node01.cluster.example are one node; 10.0.0.1 and 10 are not. */
        if (strspn(name, "0123456789.") >= n || strspn(self, "0123456789.") == s)
                return false;
        if (ns > n)
                ns = n;
        return ns == ss && strncmp(name, self, ss) == 0 && (ns == n || ss == s);
}

long peer_list_self_first(struct hostlist *hl, const char *self)
{
        for (size_t i = 0; i < hl->n; i++) {
                char *me = hl->names[i];

                if (!peer_is_self(me, self))
                        continue;
                memmove(hl->names + 1, hl->names, i * sizeof(*hl->names));
                hl->names[0] = me;
                return (long)i;
        }
        return -1;
}
