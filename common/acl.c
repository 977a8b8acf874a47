#include "acl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

/* Longest token worth parsing: a full IPv6 text form plus "/128". */
#define ACL_TOKEN_MAX (INET6_ADDRSTRLEN + 4)

static const uint8_t acl_v4mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void acl_copy_bad(char *bad, size_t badlen, const char *tok, size_t len)
{
        if (!bad || badlen == 0)
                return;
        if (len >= badlen)
                len = badlen - 1;
        memcpy(bad, tok, len);
        bad[len] = '\0';
}

/* Clear the bits past @prefix so "10.1.2.3/8" is stored (and matched) as 10.0.0.0/8. */
static void acl_mask(uint8_t *addr, size_t addrlen, unsigned int prefix)
{
        for (size_t i = 0; i < addrlen; i++) {
                unsigned int bit = (unsigned int)i * 8;

                if (bit >= prefix)
                        addr[i] = 0;
                else if (prefix - bit < 8)
                        addr[i] &= (uint8_t)(0xff << (8 - (prefix - bit)));
        }
}

static bool acl_prefix_match(const uint8_t *a, const uint8_t *net, unsigned int prefix)
{
        unsigned int full = prefix / 8, rest = prefix % 8;

        if (memcmp(a, net, full) != 0)
                return false;
        if (rest == 0)
                return true;
        return ((a[full] ^ net[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

/* Decimal 0..@max, digits only: "/", "/-1", "/ 8" and "/08x" are all wrong. */
static int acl_parse_prefix(const char *s, unsigned int max, unsigned int *out)
{
        unsigned int v = 0;

        if (*s == '\0')
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (unsigned int)(*s - '0');
                if (v > max)
                        return -EINVAL;
        }
        *out = v;
        return 0;
}

static int acl_parse_entry(struct acl_entry *e, char *tok)
{
        char *slash = strchr(tok, '/');
        unsigned int max;

        memset(e, 0, sizeof(*e));
        if (slash)
                *slash = '\0';

        if (inet_pton(AF_INET, tok, e->addr) == 1) {
                e->family = AF_INET;
                max = 32;
        } else if (inet_pton(AF_INET6, tok, e->addr) == 1) {
                e->family = AF_INET6;
                max = 128;
        } else
                return -EINVAL;

        e->prefix = max;
        if (slash && acl_parse_prefix(slash + 1, max, &e->prefix) < 0)
                return -EINVAL;

        /* "::ffff:10.0.0.0/104" means 10.0.0.0/8: store it the way peers are compared. */
        if (e->family == AF_INET6 && e->prefix >= 96 &&
            memcmp(e->addr, acl_v4mapped_prefix, sizeof(acl_v4mapped_prefix)) == 0) {
                memmove(e->addr, e->addr + 12, 4);
                memset(e->addr + 4, 0, 12);
                e->family = AF_INET;
                e->prefix -= 96;
        }

        acl_mask(e->addr, sizeof(e->addr), e->prefix);
        return 0;
}

int acl_parse(struct acl *acl, const char *list, char *bad, size_t badlen)
{
        static const char sep[] = ", \t\r\n";
        const char *p = list ? list : "";

        memset(acl, 0, sizeof(*acl));
        if (bad && badlen > 0)
                bad[0] = '\0';

        for (;;) {
                char tok[ACL_TOKEN_MAX + 1];
                size_t len;

                p += strspn(p, sep);
                if (*p == '\0')
                        break;
                len = strcspn(p, sep);
                if (len > ACL_TOKEN_MAX) {
                        acl_copy_bad(bad, badlen, p, len);
                        memset(acl, 0, sizeof(*acl));
                        return -EINVAL;
                }
                if (acl->n == ACL_MAX) {
                        acl_copy_bad(bad, badlen, p, len);
                        memset(acl, 0, sizeof(*acl));
                        return -E2BIG;
                }
                memcpy(tok, p, len);
                tok[len] = '\0';
                if (acl_parse_entry(&acl->entries[acl->n], tok) < 0) {
                        acl_copy_bad(bad, badlen, p, len);
                        memset(acl, 0, sizeof(*acl));
                        return -EINVAL;
                }
                acl->n++;
                p += len;
        }
        return 0;
}

/* @sa's address as 16 bytes, IPv4 as ::ffff:a.b.c.d: false for another family. */
static bool acl_addr16(const struct sockaddr *sa, uint8_t out[16])
{
        if (sa->sa_family == AF_INET) {
                memcpy(out, acl_v4mapped_prefix, sizeof(acl_v4mapped_prefix));
                memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
                return true;
        }
        if (sa->sa_family == AF_INET6) {
                memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
                return true;
        }
        return false;
}

bool acl_same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
        uint8_t x[16], y[16];

        return a && b && acl_addr16(a, x) && acl_addr16(b, y) && memcmp(x, y, sizeof(x)) == 0;
}

bool acl_allows(const struct acl *acl, const struct sockaddr *sa)
{
        uint8_t v4[4], v6[16];
        bool have_v4 = false, have_v6 = false;

        if (acl->n == 0)
                return true;
        if (!sa)
                return false;

        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

                memcpy(v4, &sin->sin_addr, 4);
                have_v4 = true;
        } else if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

                memcpy(v6, &sin6->sin6_addr, 16);
                have_v6 = true;
                /* A dual-stack listener reports IPv4 peers as ::ffff:a.b.c.d. */
                if (memcmp(v6, acl_v4mapped_prefix, sizeof(acl_v4mapped_prefix)) == 0) {
                        memcpy(v4, v6 + 12, 4);
                        have_v4 = true;
                }
        } else
                return false;

        for (size_t i = 0; i < acl->n && i < ACL_MAX; i++) {
                const struct acl_entry *e = &acl->entries[i];

                /* Prefix re-checked: an entry not built by acl_parse() must not read past v4[]. */
                if (e->family == AF_INET && have_v4 && e->prefix <= 32 &&
                    acl_prefix_match(v4, e->addr, e->prefix))
                        return true;
                if (e->family == AF_INET6 && have_v6 && e->prefix <= 128 &&
                    acl_prefix_match(v6, e->addr, e->prefix))
                        return true;
        }
        return false;
}
