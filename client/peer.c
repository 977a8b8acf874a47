#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "esc.h"
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
