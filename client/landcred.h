#pragma once

/*
 * The MUNGE credential of a landing (xferctl send FILE... PEER:/PATH),
 * made by xferctl as the user through this node's munged. Its payload is
 * the job's binding (landmsg_binding: the direction, PATH, a fresh token
 * and the peer's address), so that it proves who asks for this job and
 * no other; only root may decode it (the receiving node's
 * rdmaxfer-lander, never the daemons that carry it); and it lives as
 * long as munged allows, since the job may wait in the queue, and each
 * retry presents it again.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "landmsg.h"

struct landcred {
        uint8_t token[LANDMSG_TOKEN_SIZE];
        char cred[LANDMSG_CRED_MAX + 1];        /* "MUNGE:...:" */
};

/*
 * A push of files to @dest (absolute, normal form) on the node at @addr
 * (numeric text, as the SUBMIT's host) into @out; @replace: the user
 * allows replacing what is there (--overwrite), bound in with the rest. @munge_socket: munged's
 * socket, NULL for libmunge's default. 0, or -EINVAL (@addr not numeric,
 * @dest too long), -EHOSTDOWN (munged not reachable), -EPERM (munged
 * refused), -E2BIG (a credential longer than a SUBMIT carries), -EIO
 * (libsodium) or -ENOMEM, each with a sentence in @err saying why.
 */
int landcred_make(const char *addr, const char *dest, bool replace, const char *munge_socket, struct landcred *out,
                  char *err, size_t errlen);

/* What a credential binds (landmsg_binding), for landcred_make_for(). */
struct landcred_req {
        enum landmsg_direction direction;
        const char *const *addrs;       /* numeric text: the nodes it is for */
        unsigned int naddrs;            /* 1 .. LANDMSG_ADDRS_MAX */
        const char *dest;               /* absolute, normal form */
        bool replace;
        bool tree;                      /* a PULL's: DEST may be a directory, read whole (get -r) */
        bool sync;                      /* a PUSH's: what is in DEST may be looked at (--sync) */
        bool dry;                       /* a PUSH's: only looked at, nothing made (--dry-run) */
        bool delete;                    /* a PUSH's, with sync: what the tree lacks removed (--delete) */
        const uint8_t *token;           /* LANDMSG_TOKEN_SIZE bytes, or NULL: a fresh one */
};

/*
 * As landcred_make(), for any direction and nodes: a pull's (xferctl
 * get) reading credential names the peer and this node, and its landing
 * one, of the same token, this node alone; a chain's, every node.
 */
int landcred_make_for(const struct landcred_req *rq, const char *munge_socket, struct landcred *out, char *err,
                      size_t errlen);
