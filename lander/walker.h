#pragma once

/*
 * A pulled tree's walker (walker.c; landmsg.h, "A tree pulled"): a child
 * process that becomes @who for good and walks @leaf beneath the
 * directory @pfd, on a SOCK_SEQPACKET pair whose other end is *@out.
 * With @names, once, for the names there only (landmsg.h, "Deleting,
 * dry"): no descriptor, no count, no attributes.
 */

#include <stdbool.h>

#include "landfs.h"

/* 0 with *@out the daemon's end (the caller passes it on and closes
 * it), or -errno (nothing started). The child is nobody's to wait for:
 * the lander leaves SIGCHLD ignored. */
int walker_start(const struct landfs_id *who, int pfd, const char *leaf, unsigned int which, bool names, int *out);
