#include "peername.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Text a pattern may hold besides its escapes: a host name's characters. */
static bool peername_literal_ok(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_';
}

int peername_check(const char *pattern, char *why, size_t whylen)
{
        bool host = false;
        size_t n = strlen(pattern);

        if (n == 0)
                return 0;
        if (n > PEERNAME_PATTERN_MAX) {
                snprintf(why, whylen, "longer than %d bytes", PEERNAME_PATTERN_MAX);
                return -EINVAL;
        }
        for (const char *p = pattern; *p; p++) {
                if (*p != '%') {
                        if (!peername_literal_ok(*p)) {
                                snprintf(why, whylen, "'%c' cannot be part of a host name "
                                         "(letters, digits, '-', '.', '_', and %%h, %%s, %%d, %%%%)",
                                         *p >= 0x20 && *p <= 0x7e ? *p : '?');
                                return -EINVAL;
                        }
                        continue;
                }
                p++;
                switch (*p) {
                case 'h':
                case 's':
                        host = true;
                        break;
                case 'd':
                case '%':
                        break;
                default:
                        snprintf(why, whylen, "%%%c is not one of %%h (the name), %%s (its short name), "
                                 "%%d (its domain) or %%%%",
                                 *p >= 0x20 && *p <= 0x7e ? *p : '?');
                        return -EINVAL;
                }
        }
        if (!host) {
                /* Every peer the same name: a mistake, never a mapping. */
                snprintf(why, whylen, "names no host: it needs %%h (the name) or %%s (its short name)");
                return -EINVAL;
        }
        return 0;
}

bool peername_identity(const char *pattern)
{
        return pattern[0] == '\0' || strcmp(pattern, "%h") == 0;
}

bool peername_is_address(const char *name)
{
        struct addrinfo hints = { .ai_family = AF_INET, .ai_flags = AI_NUMERICHOST };
        struct addrinfo *res = NULL;

        /* Only an IPv6 address has a ':'; with a scope ("fe80::1%eth0") too. */
        if (strchr(name, ':'))
                return true;
        /* inet_aton's forms too ("10.1", "0x0a000001"), as getaddrinfo takes them. */
        if (getaddrinfo(name, NULL, &hints, &res) != 0)
                return false;
        freeaddrinfo(res);
        return true;
}

/* @name, @len bytes, into @out as it is. 0 or -ENAMETOOLONG. */
static int peername_copy(const char *name, size_t len, char *out, size_t outlen)
{
        if (len > PEERNAME_NAME_MAX || len >= outlen)
                return -ENAMETOOLONG;
        memcpy(out, name, len + 1);
        return 0;
}

int peername_map(const char *pattern, const char *name, char *out, size_t outlen)
{
        size_t n = 0, len = strlen(name);
        const char *dot = strchr(name, '.');
        size_t short_len = dot ? (size_t)(dot - name) : len;
        int r;

        if (len == 0 || peername_check(pattern, NULL, 0) < 0)
                return -EINVAL;
        if (peername_is_address(name)) {
                r = peername_copy(name, len, out, outlen);
                return r < 0 ? r : PEERNAME_ADDRESS;
        }
        if (peername_identity(pattern))
                return peername_copy(name, len, out, outlen);
        for (const char *p = pattern; *p; p++) {
                const char *part = p;
                size_t plen = 1;

                if (*p == '%') {
                        p++;
                        switch (*p) {
                        case 'h':
                                part = name;
                                plen = len;
                                break;
                        case 's':
                                part = name;
                                plen = short_len;
                                break;
                        case 'd':
                                part = name + short_len;
                                plen = len - short_len;
                                break;
                        default:        /* "%%", checked above */
                                break;
                        }
                }
                if (n + plen > PEERNAME_NAME_MAX || n + plen >= outlen)
                        return -ENAMETOOLONG;
                memcpy(out + n, part, plen);
                n += plen;
        }
        out[n] = '\0';
        return 0;
}
