#pragma once

/* Peer address allow-list: a list of IPv4/IPv6 prefixes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ACL_MAX 64

struct acl_entry {
        int family;                     /* AF_INET or AF_INET6 */
        uint8_t addr[16];               /* network byte order, masked */
        unsigned int prefix;            /* bits */
};

struct acl {
        size_t n;
        struct acl_entry entries[ACL_MAX];
};

/*
 * Parse a comma- or space-separated list of "addr" or "addr/prefix" into
 * @acl (which is cleared first). Returns 0, -EINVAL (with the bad token
 * copied into @bad) or -E2BIG.
 */
int acl_parse(struct acl *acl, const char *list, char *bad, size_t badlen);

/* An empty list allows everyone. IPv4-mapped IPv6 peers match IPv4 entries. */
bool acl_allows(const struct acl *acl, const struct sockaddr *sa);
/* Whether @a and @b hold the same address (ports aside; an IPv4 one and
 * its ::ffff: form are the same). */
bool acl_same_addr(const struct sockaddr *a, const struct sockaddr *b);
