/*
 * Pairing a node's rails with a peer's (rails.h).
 */

#include <netinet/in.h>
#include <string.h>

#include "macro.h"
#include "rails.h"

/* The address bytes of @sa and how many there are; NULL for another family. */
static const uint8_t *rails_bytes(const struct sockaddr *sa, unsigned int *len)
{
        if (sa->sa_family == AF_INET) {
                *len = 4;
                return (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
        }
        if (sa->sa_family == AF_INET6) {
                *len = 16;
                return (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        }
        return NULL;
}

bool rails_same_subnet(const struct sockaddr *a, const struct sockaddr *b, unsigned int prefix)
{
        unsigned int la, lb, full, rest;
        const uint8_t *pa, *pb;

        if (a->sa_family != b->sa_family || prefix == 0)
                return false;
        pa = rails_bytes(a, &la);
        pb = rails_bytes(b, &lb);
        if (!pa || !pb || prefix > la * 8)
                return false;
        full = prefix / 8;
        rest = prefix % 8;
        if (memcmp(pa, pb, full) != 0)
                return false;
        return rest == 0 || ((pa[full] ^ pb[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

unsigned int rails_prefix_of(const struct sockaddr *mask)
{
        unsigned int len, n = 0;
        const uint8_t *p = mask ? rails_bytes(mask, &len) : NULL;

        for (unsigned int i = 0; p && i < len; i++) {
                uint8_t b = p[i];

                while (b & 0x80) {
                        n++;
                        b = (uint8_t)(b << 1);
                }
                if (p[i] != 0xff)
                        break;
        }
        return n;
}

unsigned int rails_pair(const struct rails_local *local, unsigned int nlocal, unsigned int first,
                        const struct sockaddr_storage *remote, unsigned int nremote,
                        struct rails_pair *out)
{
        bool taken[RAILS_MAX] = { false };
        unsigned int n = 0;

        nlocal = MIN(nlocal, (unsigned int)RAILS_MAX);
        nremote = MIN(nremote, (unsigned int)RAILS_MAX);
        if (first >= nlocal || nremote == 0)
                return 0;
        out[n++] = (struct rails_pair){ .local = (uint8_t)first, .remote = 0 };
        taken[0] = true;
        for (unsigned int i = 0; i < nlocal; i++) {
                if (i == first || !local[i].up)
                        continue;
                for (unsigned int j = 0; j < nremote; j++) {
                        if (taken[j] || !rails_same_subnet((const struct sockaddr *)&local[i].addr,
                                                           (const struct sockaddr *)&remote[j], local[i].prefix))
                                continue;
                        taken[j] = true;
                        out[n++] = (struct rails_pair){ .local = (uint8_t)i, .remote = (uint8_t)j };
                        break;
                }
        }
        return n;
}

void rails_assign(const uint64_t *rate, unsigned int npairs, unsigned int nlanes, uint8_t *lane_pair)
{
        unsigned int count[RAILS_MAX] = { 0 }, left[RAILS_MAX], sum = 0, known = 0;
        double share[RAILS_MAX], total = 0, mean = 0;

        npairs = MAX(1u, MIN(npairs, (unsigned int)RAILS_MAX));
        for (unsigned int p = 0; p < npairs; p++) {
                mean += (double)rate[p];
                known += rate[p] != 0;
        }
        mean = known ? mean / known : 1;
        for (unsigned int p = 0; p < npairs; p++) {
                share[p] = rate[p] ? (double)rate[p] : mean;
                total += share[p];
        }
        /* Each pair's due, a lane at least, whole lanes down; then the
         * lanes still to give, or to take back, by remainder. */
        for (unsigned int p = 0; p < npairs; p++) {
                share[p] = share[p] * nlanes / total;
                count[p] = nlanes >= npairs ? MAX(1u, (unsigned int)share[p]) : p < nlanes;
                sum += count[p];
        }
        while (sum != nlanes) {
                unsigned int best = npairs;

                for (unsigned int p = 0; p < npairs; p++) {
                        double rem = share[p] - count[p];

                        if (sum < nlanes ? best == npairs || rem > share[best] - count[best] :
                            count[p] > 1 && (best == npairs || rem < share[best] - count[best]))
                                best = p;
                }
                if (sum < nlanes) {
                        count[best]++;
                        sum++;
                } else {
                        count[best]--;
                        sum--;
                }
        }
        /* Laid out round the pairs, pair 0 first: lane 0 on its own way,
         * and with counts alike, lane k on pair k mod npairs. */
        memcpy(left, count, sizeof(left));
        for (unsigned int k = 0, p = 0; k < nlanes; p = (p + 1) % npairs) {
                if (left[p] == 0)
                        continue;
                left[p]--;
                lane_pair[k++] = (uint8_t)p;
        }
}
