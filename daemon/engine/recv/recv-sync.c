/*
 * Sync (wire.h, version 6): an offer with a sync flag is first held
 * against what the incoming directory has under its name, off the loop:
 *
 *   a worker looks the name up (in a tree merged into an existing DEST,
 *   the path beneath it, every directory opened without following a
 *   symlink) and decides: send it (nothing there; a directory where a
 *   directory is offered; a file that differs, where overwrite allows),
 *   keep it (skip), or refuse (another type; differs and overwrite off);
 *   with a digest to compare and no user.rdmaxfer.digest on the file, the
 *   file is left open and its digest computed through io_uring (rehash.h).
 *
 * A kept entry is answered with ACCEPT SKIP and, at once, its RESULT
 * (recv_published, or in a tree recv_tree_entry_done): no data, no END.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <event2/event.h>

#include "auth.h"
#include "clock.h"
#include "incoming.h"
#include "log.h"
#include "name.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"

/* A worker's verdict on the offered entry. */
enum {
        RECV_SYNC_SEND = 0,     /* offered as if nothing were there */
        RECV_SYNC_SKIP,         /* the receiver has it: kept */
        RECV_SYNC_HASH,         /* same size, no digest stored: compute it (sync_fd) */
        RECV_SYNC_REFUSE,       /* WIRE_E_EXISTS, sync_why */
};

bool recv_sync_wanted(const struct recv_xfer *x)
{
        const struct wire_offer *o = &x->cur->offer;

        /* DEST itself is looked at when the tree begins; a pack's entries
         * when it is unpacked. */
        /* A landing's, the lander looks (recv-land.c). */
        if (!x->sync || x->sync_probed || (o->flags & WIRE_OFFER_PACK) || x->landing)
                return false;
        return x->tree ? x->merge && o->file > 0 : true;
}

/* The stored digest of @fd, when it has a well-formed one. */
static bool recv_sync_xattr(int fd, uint8_t out[WIRE_DIGEST_SIZE])
{
        char hex[DIGEST_HEX_SIZE];
        ssize_t n = fgetxattr(fd, DIGEST_XATTR, hex, sizeof(hex));

        return n == 2 * WIRE_DIGEST_SIZE && digest_parse(hex, (size_t)n, out) == 0;
}

/* The entry differs from what is there: sent, where overwrite allows. */
static int64_t recv_sync_differs(struct recv_xfer *x)
{
        if (x->overwrite)
                return RECV_SYNC_SEND;
        snprintf(x->sync_why, sizeof(x->sync_why), "%.*s: exists and differs; overwrite is off on the receiver",
                 WIRE_TEXT_MAX - 60, x->cur->offer.name);
        return RECV_SYNC_REFUSE;
}

/*
 * On a worker: the name's entry, and the verdict (or -errno). Reads
 * x->cur->offer, overwrite and sync; writes only x->sync_fd and sync_why.
 */
static int64_t recv_sync_probe(void *arg)
{
        struct recv_xfer *x = arg;
        const struct wire_offer *o = &x->cur->offer;
        int dirfd = x->env->incoming_fd, pfd = dirfd, fd;
        const char *leaf = o->name, *slash = x->tree ? strrchr(o->name, '/') : NULL;
        bool dir = o->flags & WIRE_OFFER_DIR;
        uint8_t have[WIRE_DIGEST_SIZE];
        struct stat st;
        int r;

        if (slash) {
                char parent[WIRE_PATH_MAX + 1];

                snprintf(parent, sizeof(parent), "%.*s", (int)(slash - o->name), o->name);
                pfd = incoming_open_beneath(dirfd, parent, false);
                /* No such directory in the old DEST: nothing there. */
                if (pfd == -ENOENT || pfd == -ENOTDIR)
                        return RECV_SYNC_SEND;
                if (pfd < 0)
                        return pfd;
                leaf = slash + 1;
        }
        r = fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
        x->sync_had = r == 0;
        if (r == 0)
                x->sync_st = st;
        if (r == -ENOENT) {
                r = RECV_SYNC_SEND;
                goto out;
        }
        if (r < 0)
                goto out;
        if (dir != !!S_ISDIR(st.st_mode)) {
                snprintf(x->sync_why, sizeof(x->sync_why), "%.*s: exists as a %s", WIRE_TEXT_MAX - 40, o->name,
                         S_ISDIR(st.st_mode) ? "directory" : "file");
                r = RECV_SYNC_REFUSE;
                goto out;
        }
        /* A directory in both is merged into. */
        if (dir) {
                r = RECV_SYNC_SEND;
                goto out;
        }
        if (x->sync & WIRE_OFFER_SKIP_EXISTING) {
                r = RECV_SYNC_SKIP;
                goto out;
        }
        /* A symlink's target is its data: one that is there as a symlink is
         * compared once it has arrived (recv_sync_link). */
        /* A hard link's name, too, is compared once it has arrived (recv_sync_hard). */
        if (((o->flags & WIRE_OFFER_LINK) && S_ISLNK(st.st_mode)) ||
            ((o->flags & WIRE_OFFER_HARD) && S_ISREG(st.st_mode))) {
                r = RECV_SYNC_SEND;
                goto out;
        }
        if (!S_ISREG(st.st_mode) || (o->flags & WIRE_OFFER_LINK) || (uint64_t)st.st_size != o->size) {
                r = (int)recv_sync_differs(x);
                goto out;
        }
        if (!(x->sync & WIRE_OFFER_DIGEST) || o->size == 0) {
                r = RECV_SYNC_SKIP;
                goto out;
        }
        fd = openat(pfd, leaf, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        /* A copy we may not read (mode 000: the sender's own mode) cannot
         * be compared: it is replaced, as a packed entry's is (recv-pack.c). */
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
                r = (int)recv_sync_differs(x);
                goto out;
        }
        if (fd < 0) {
                r = -errno;
                goto out;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != o->size) {
                close(fd);
                r = (int)recv_sync_differs(x);
                goto out;
        }
        if (recv_sync_xattr(fd, have)) {
                close(fd);
                r = memcmp(have, o->digest, WIRE_DIGEST_SIZE) == 0 ? RECV_SYNC_SKIP : (int)recv_sync_differs(x);
                goto out;
        }
        x->sync_fd = fd;
        r = RECV_SYNC_HASH;
out:
        if (pfd != dirfd)
                close(pfd);
        return r;
}

void recv_answer_skip(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        const struct wire_offer *o = &x->cur->offer;

        x->cur->skip = true;
        recv_plan(x);
        /* A skipped first file: the other lanes would join only for its
         * data, so the session goes on over lane 0 alone (wire.h, Sync). */
        if (o->file == 0)
                xfer_set_lanes(b, 1);
        xfer_set_state(b, XFER_DATA);
        /* Nothing resumes: the sender takes no run of it at all. */
        memset(x->resume, 0, sizeof(x->resume));
        if (recv_send_accept(x, WIRE_ACCEPT_SKIP) < 0)
                return;
        log_debug("%s: %s: %s (file %u of %u, transfer %" PRIu64 ")", b->peer, o->name,
                  x->cur->dry[0] ? x->cur->dry : "there already, skipped", o->file + 1, o->job_files,
                  o->transfer_id);
        xfer_set_state(b, XFER_FINISHING);
        recv_tick_start(x);
        /* Its RESULT after the file before it (recv_file_publish). */
        recv_verified(x);
}

/* The entry is kept: ACCEPT SKIP, then its RESULT as for a published one. */
void recv_sync_skip(struct recv_xfer *x)
{
        x->files_skipped++;
        if (x->dry)
                snprintf(x->cur->dry, sizeof(x->cur->dry), "skipped");
        recv_answer_skip(x);
}

static void recv_sync_verdict(struct recv_xfer *x, int64_t res)
{
        char text[WIRE_TEXT_MAX + 1];

        switch (res) {
        case RECV_SYNC_SEND:
                /* A dry run says what a real one would make (recv-dry.c). */
                if (x->dry && !(x->cur->offer.flags & WIRE_OFFER_LINK)) {
                        recv_dry_sent(x);
                        return;
                }
                recv_file_open(x);
                return;
        case RECV_SYNC_SKIP:
                recv_sync_skip(x);
                return;
        case RECV_SYNC_REFUSE:
                recv_fail(x, WIRE_E_EXISTS, x->sync_why);
                return;
        default:
                snprintf(text, sizeof(text), "looking at the existing %.*s: %s", WIRE_TEXT_MAX - 60,
                         x->cur->offer.name, strerror((int)-res));
                recv_fail(x, wire_status_of_errno((int)-res), text);
                return;
        }
}

/* While its copy is read for its digest, the sender, waiting for the
 * ACCEPT, hears every second that the receiver is at it: an empty CREDIT,
 * which it counts as progress (wire.h, Sync). So it does while the
 * receiver verifies and publishes, every END in (version 9). */
static void recv_sync_on_tick(evutil_socket_t fd, short what, void *arg)
{
        static const struct timeval second = { .tv_sec = 1 };
        struct recv_xfer *x = arg;
        struct recv_lane *l0 = recv_lane(x, 0);
        struct wire_msg m = { .type = WIRE_CREDIT };
        bool reading = (x->sync_fd >= 0 || x->prehashing || recv_pull_waiting(x)) && x->base.state == XFER_OFFER;

        if ((!reading && x->base.state != XFER_FINISHING) || !l0)
                return;
        if (conn_ctrl_free(&l0->base.conn) >= 2)
                (void)conn_send_ctrl(&l0->base.conn, &m);
        evtimer_add(x->sync_tick, &second);
}

static void recv_sync_hashed(struct rehash *h, int r)
{
        struct recv_xfer *x = container_of(h, struct recv_xfer, sync_rh);
        uint8_t have[WIRE_DIGEST_SIZE];

        safe_close(x->sync_fd);
        x->sync_fd = -1;
        if (x->sync_tick)
                evtimer_del(x->sync_tick);
        if (x->base.state != XFER_OFFER)
                return;
        if (r < 0) {
                recv_sync_verdict(x, r);
                return;
        }
        digest_final(&x->sync_d, have);
        recv_sync_verdict(x, memcmp(have, x->cur->offer.digest, WIRE_DIGEST_SIZE) == 0 ? RECV_SYNC_SKIP :
                                                                                recv_sync_differs(x));
}

static void recv_on_sync_probed(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!xfer_io_done(&x->base) || x->base.state != XFER_OFFER) {
                safe_close(x->sync_fd);
                x->sync_fd = -1;
                return;
        }
        if (res != RECV_SYNC_HASH) {
                recv_sync_verdict(x, res);
                return;
        }
        recv_sync_hash(x);
}

void recv_sync_hash(struct recv_xfer *x)
{
        int r;

        /* Off the loop too: through io_uring, a piece at a time. */
        digest_deinit(&x->sync_d);
        rehash_deinit(&x->sync_rh);
        r = digest_init(&x->sync_d);
        if (r == 0)
                r = digest_start(&x->sync_d, 0, x->cur->offer.size);
        if (r == 0)
                r = rehash_start(&x->sync_rh, &x->base, &x->sync_d, x->sync_fd, 0, x->cur->offer.size,
                                 recv_sync_hashed);
        if (r < 0) {
                safe_close(x->sync_fd);
                x->sync_fd = -1;
                recv_sync_verdict(x, r);
                return;
        }
        recv_tick_start(x);
}

void recv_tick_start(struct recv_xfer *x)
{
        static const struct timeval second = { .tv_sec = 1 };

        if (!x->sync_tick)
                x->sync_tick = evtimer_new(x->env->base, recv_sync_on_tick, x);
        if (x->sync_tick)
                evtimer_add(x->sync_tick, &second);
}

void recv_sync_probe_start(struct recv_xfer *x)
{
        int r;

        x->sync_probed = true;
        x->sync_why[0] = '\0';
        x->sync_had = false;
        /* The worker reads this copy, not cfg (a reload may replace it). */
        x->overwrite = x->env->cfg.overwrite;
        x->cur->req.done = recv_on_sync_probed;
        r = io_call(x->env->io, &x->cur->req, recv_sync_probe, x);
        if (r < 0) {
                recv_sync_verdict(x, r);
                return;
        }
        xfer_io_start(&x->base, "looking at the existing entry");
}

void recv_sync_free(struct recv_xfer *x)
{
        if (x->sync_tick)
                event_free(x->sync_tick);
        x->sync_tick = NULL;
        safe_close(x->sync_fd);
        x->sync_fd = -1;
        rehash_deinit(&x->sync_rh);
        digest_deinit(&x->sync_d);
}

int recv_sync_link(struct recv_xfer *x, const char *name, const char *target, size_t len)
{
        const char *slash = strrchr(name, '/');
        char parent[WIRE_PATH_MAX + 1], have[NAME_LINK_MAX + 1];
        ssize_t n;
        int pfd;

        if (!slash)
                return 0;
        snprintf(parent, sizeof(parent), "%.*s", (int)(slash - name), name);
        pfd = incoming_open_beneath(x->env->incoming_fd, parent, false);
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return pfd;
        n = readlinkat(pfd, slash + 1, have, sizeof(have));
        close(pfd);
        /* Nothing there, or not a symlink (the probe held that to overwrite). */
        if (n < 0)
                return errno == ENOENT || errno == EINVAL ? 0 : -errno;
        if ((size_t)n == len && memcmp(have, target, len) == 0)
                return 1;
        return x->overwrite ? 0 : -EEXIST;
}

int recv_sync_keep(struct recv_xfer *x, const char *name, struct recv_sync_dirs *dirs)
{
        const char *slash = strrchr(name, '/'), *leaf;
        char parent[WIRE_PATH_MAX + 1], rel[WIRE_PATH_MAX + 1], target[NAME_LINK_MAX + 1];
        _cleanup_(closep) int ofd_own = -1, nfd_own = -1;
        size_t dlen = strlen(x->dest);
        struct stat st;
        int ofd, nfd, r;
        ssize_t n;

        /* An entry's name is beneath DEST (recv-offer.c): "DEST/...". */
        if (!slash || strncmp(name, x->dest, dlen) != 0 || name[dlen] != '/')
                return -EINVAL;
        leaf = slash + 1;
        snprintf(parent, sizeof(parent), "%.*s", (int)(slash - name), name);
        ofd = dirs ? incoming_dircache_open(&dirs->old, parent) :
                     (ofd_own = incoming_open_beneath(x->env->incoming_fd, parent, false));
        if (ofd < 0)
                return ofd;
        /* The same path in the stage: DEST's leaf, then what follows DEST. */
        snprintf(rel, sizeof(rel), "%s%.*s", name_leaf(x->dest), (int)(slash - name - dlen), name + dlen);
        nfd = dirs ? incoming_dircache_open(&dirs->stage, rel) :
                     (nfd_own = incoming_open_beneath(x->stage_fd, rel, false));
        if (nfd < 0)
                return nfd;
        r = incoming_keep_link(ofd, leaf, nfd, leaf, x->tree_resumed);
        if (r != -ELOOP || fstatat(ofd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                return r;
        /* A symlink: made at the end, so no later entry goes through it. */
        n = readlinkat(ofd, leaf, target, sizeof(target));
        if (n < 0)
                return -errno;
        if (n == 0 || (size_t)n > NAME_LINK_MAX)
                return -ENAMETOOLONG;
        snprintf(rel, sizeof(rel), "%s%s", name_leaf(x->dest), name + dlen);
        return recv_tree_link_add(x, rel, target, (size_t)n,
                                  (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec);
}

int recv_sync_hard(struct recv_xfer *x, const char *name, const char *target, size_t len)
{
        char file[WIRE_PATH_MAX + 1];
        struct stat have, want;
        int r;

        r = incoming_stat_beneath(x->env->incoming_fd, name, &have);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        snprintf(file, sizeof(file), "%.*s", (int)MIN(len, (size_t)WIRE_PATH_MAX), target);
        if (S_ISREG(have.st_mode) && incoming_stat_beneath(x->env->incoming_fd, file, &want) == 0 &&
            have.st_dev == want.st_dev && have.st_ino == want.st_ino)
                return 0;
        return x->overwrite ? 0 : -EEXIST;
}
