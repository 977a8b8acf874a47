#pragma once

/*
 * A munged of the unit tests' own (test-lander, test-landc): its key,
 * socket and files in @dir (made here, mode 0711 so that any user reaches
 * the socket), started as root in the foreground, and credentials made
 * through it by any user. Root only; munged from Debian's munge.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "landmsg.h"

/* Start it: true once its socket answers; the socket's path in @sock
 * (@socklen bytes). */
bool munge_fixture_start(const char *dir, char *sock, size_t socklen);
void munge_fixture_stop(void);
/* A credential for @s made by @uid and @gid (a child that becomes them),
 * its payload @s's binding, or @binding_of's when not NULL, into @s->cred. */
void munge_fixture_cred(struct landmsg_session *s, uid_t uid, gid_t gid, const struct landmsg_session *binding_of);
/* ... living @ttl seconds (0: munged's default). */
void munge_fixture_cred_ttl(struct landmsg_session *s, uid_t uid, gid_t gid, const struct landmsg_session *binding_of,
                            int ttl);
