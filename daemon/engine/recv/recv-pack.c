/*
 * A pack of a tree's entries (wire.h "Packs", common/pack.h), received
 * whole into memory (at most PACK_BYTES_MAX; recv.c copies each chunk
 * there, not into a file) and verified by its block digest like any
 * file, is unpacked here, on a worker: checked whole (its records, their count, the pack hash
 * the offer's MAC covered) before anything is made, then each entry made
 * beneath the staging directory under the rules an entry offered alone is
 * held to: beneath DEST, a directory by mkdirat, a file created O_EXCL by
 * openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS (where the kernel
 * or the unit's seccomp filter allows; openat O_NOFOLLOW else), its mode less
 * setuid, setgid and group or other write, its mtime, and its digest in
 * user.rdmaxfer.digest; a symlink held to tree_symlinks and kept in the
 * job's list of links, made at the end (recv-file.c). Any bad entry fails the job; the staging
 * directory goes as for any failed tree, so nothing of it is visible.
 * In a sync job merged into an existing DEST (recv-sync.c), each entry is
 * first held against the old DEST's: one kept is not made in the staging
 * directory (the merge links the old one in; deleting, it is linked in
 * at once, recv_sync_keep); in a job that compares
 * digests the entry's bytes, at hand, are compared with the old file's.
 * Like a tree's file offered alone, an entry gets no fsync of its own:
 * the tree's syncfs before its rename covers it (recv-file.c).
 */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "io.h"
#include "landmsg.h"
#include "log.h"
#include "name.h"
#include "pack.h"
#include "recv-int.h"
#include "recv-partial.h"
#include "recv-publish.h"

_printf_(3, 4)
static int recv_pack_bad(struct recv_xfer *x, unsigned int status, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(x->fin->pack_why, sizeof(x->fin->pack_why), fmt, ap);
        va_end(ap);
        x->fin->pack_status = status;
        return -EINVAL;
}

static int recv_pack_errno(struct recv_xfer *x, const char *what, const struct pack_entry *e, int err)
{
        unsigned int status = wire_status_of_errno(err);

        if (err == EEXIST)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "an entry of the tree came twice: %.*s",
                                     (int)e->name_len, e->name);
        /* A symlink or a file where a directory should be: the peer's doing. */
        if (err == ELOOP || err == ENOTDIR || err == EXDEV || err == ENOENT)
                status = WIRE_E_NAME;
        return recv_pack_bad(x, status, "%s %.*s: %s", what, (int)e->name_len, e->name, strerror(err));
}

static int recv_pack_write_all(int fd, const uint8_t *p, uint64_t n)
{
        while (n > 0) {
                ssize_t w = write(fd, p, n);

                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                p += w;
                n -= (uint64_t)w;
        }
        return 0;
}

/* A file of the pack beneath the staging directory, whole. 0 or -EINVAL with pack_why. */
static int recv_pack_file(struct recv_xfer *x, const char *rel, const struct pack_entry *e)
{
        /* Made with its mode (no chmod after, unless the umask masks some
         * of it), or with what the daemon needs of it until the end. */
        mode_t want = recv_tree_mode(e->mode), mode = recv_tree_staged_mode(want, false);
        bool chmod_after = mode & x->env->umask;
        struct open_how how = {
                .flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                .mode = mode,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
        };
        _cleanup_(closep) int fd = -1;
        uint8_t sum[WIRE_DIGEST_SIZE];
        char hex[DIGEST_HEX_SIZE];
        struct timespec ts[2];
        int r;

        /* Continuing a kept tree, one staged after its last record may be
         * there: it goes, and the file is made anew, never written
         * through whatever has its name. */
        if (x->tree_resumed && unlinkat(x->stage_fd, rel, 0) < 0 && errno != ENOENT)
                return recv_pack_errno(x, "replacing", e, errno);
        fd = incoming_openat2(x->stage_fd, rel, &how);
        /* Without openat2 (an older kernel, or a seccomp filter that does
         * not know it: systemd's answers ENOSYS): the staging directory is
         * ours, 0700, holds no symlink (none is ever made in it) and @rel
         * passed name_path_check(), so the plain walk stays beneath it. */
        if (fd == -ENOSYS) {
                fd = openat(x->stage_fd, rel, (int)how.flags, (mode_t)how.mode);
                if (fd < 0)
                        fd = -errno;
        }
        if (fd < 0)
                return recv_pack_errno(x, "creating", e, -fd);
        r = recv_pack_write_all(fd, e->data, e->size);
        if (r < 0)
                return recv_pack_errno(x, "writing", e, -r);
        /* The digest a file offered alone gets, over the same bytes. */
        digest_buffer(e->data, e->size, sum);
        digest_hex(sum, hex);
        if (fsetxattr(fd, DIGEST_XATTR, hex, strlen(hex), 0) < 0 && errno != EOPNOTSUPP)
                return recv_pack_errno(x, "storing " DIGEST_XATTR " of", e, errno);
        if (chmod_after && fchmod(fd, mode) < 0)
                return recv_pack_errno(x, "mode of", e, errno);
        if (mode != want && (r = recv_tree_attr_add(x, rel, S_IFREG | want, 0)) < 0)
                return recv_pack_errno(x, "listing the mode of", e, -r);
        if (e->mtime_ns) {
                ts[0].tv_sec = ts[1].tv_sec = (time_t)(e->mtime_ns / 1000000000u);
                ts[0].tv_nsec = ts[1].tv_nsec = (long)(e->mtime_ns % 1000000000u);
                if (futimens(fd, ts) < 0)
                        return recv_pack_errno(x, "mtime of", e, errno);
        }
        return 0;
}

/* The old DEST's file (@fd, @size bytes, the entry's size) holds the entry's bytes. */
static bool recv_pack_same(int fd, const struct pack_entry *e)
{
        uint8_t buf[65536];
        uint64_t off = 0;

        while (off < e->size) {
                ssize_t n = pread(fd, buf, (size_t)MIN((uint64_t)sizeof(buf), e->size - off), (off_t)off);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0 || memcmp(buf, e->data + off, (size_t)n) != 0)
                        return false;
                off += (uint64_t)n;
        }
        return true;
}

/* The old DEST's file (@fd, the entry's size) has the digest an index
 * record (@e, PACK_F_INDEX) carries. */
static bool recv_pack_same_digest(int fd, const struct pack_entry *e)
{
        uint8_t sum[WIRE_DIGEST_SIZE];

        static_assert(PACK_INDEX_DATA == WIRE_DIGEST_SIZE, "an index record's data is a digest");
        return io_digest_whole(fd, e->size, sum) == 0 && memcmp(sum, e->data, WIRE_DIGEST_SIZE) == 0;
}

/*
 * Sync: entry @e against the old DEST's. 0: make it; 1: keep the old one
 * (not made); or -EINVAL with pack_why (another type, or it differs and
 * overwrite is off).
 */
static int recv_pack_sync(struct recv_xfer *x, const struct pack_entry *e, struct recv_sync_dirs *dirs)
{
        char name[WIRE_NAME_MAX + 1], *slash;
        bool differs;
        struct stat st;
        int pfd, fd, r;

        snprintf(name, sizeof(name), "%.*s", (int)e->name_len, e->name);
        slash = strrchr(name, '/');
        *slash = '\0';
        /* The cache's: not closed here. */
        pfd = incoming_dircache_open(&dirs->old, name);
        *slash = '/';
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return recv_pack_errno(x, "looking at the old", e, -pfd);
        r = fstatat(pfd, slash + 1, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return recv_pack_errno(x, "looking at the old", e, -r);
        if ((e->type == PACK_DIR) != !!S_ISDIR(st.st_mode))
                return recv_pack_bad(x, WIRE_E_EXISTS, "%.*s: exists as a %s", (int)e->name_len, e->name,
                                     S_ISDIR(st.st_mode) ? "directory" : "file");
        if (e->type == PACK_DIR)
                return 0;       /* merged into */
        if (x->sync & WIRE_OFFER_SKIP_EXISTING)
                return 1;
        if (e->type == PACK_LINK && S_ISLNK(st.st_mode)) {
                r = recv_sync_link(x, name, (const char *)e->data, (size_t)e->size);
                if (r == -EEXIST)
                        return recv_pack_bad(x, WIRE_E_EXISTS, "%s: exists and differs; overwrite is off on the "
                                             "receiver", name);
                return r < 0 ? recv_pack_errno(x, "looking at the old", e, -r) : r;
        }
        if (e->flags & PACK_F_HARD) {
                r = recv_sync_hard(x, name, (const char *)e->data, (size_t)e->size);
                if (r == -EEXIST)
                        return recv_pack_bad(x, WIRE_E_EXISTS, "%s: exists and differs; overwrite is off on the "
                                             "receiver", name);
                return r < 0 ? recv_pack_errno(x, "looking at the old", e, -r) : 0;
        }
        differs = !S_ISREG(st.st_mode) || e->type == PACK_LINK || (uint64_t)st.st_size != e->size;
        if (!differs && (x->sync & WIRE_OFFER_DIGEST)) {
                fd = openat(pfd, slash + 1, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
                differs = fd < 0 || !((e->flags & PACK_F_INDEX) ? recv_pack_same_digest(fd, e) : recv_pack_same(fd, e));
                safe_close(fd);
        }
        if (!differs)
                return 1;
        if (!x->overwrite)
                return recv_pack_bad(x, WIRE_E_EXISTS, "%.*s: exists and differs; overwrite is off on the receiver",
                                     (int)e->name_len, e->name);
        return 0;
}

/*
 * An index pack's file @e, record @k (wire.h, Index packs): kept, as a
 * packed file the old DEST has would be (1), or one this side lacks,
 * named in the NEED (0); -EINVAL with pack_why. Only in a sync of the
 * drop box, never among the files a NEED named.
 */
static int recv_pack_index(struct recv_xfer *x, const struct pack_entry *e, uint32_t k, struct recv_sync_dirs *dirs)
{
        struct wire_need *nd = &x->fin->need;
        int s = 0;

        if (!(x->sync & (WIRE_OFFER_SYNC | WIRE_OFFER_SKIP_EXISTING)) || x->landing || x->dry || x->relay ||
            x->fin->span)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "an index record outside a sync's index pack");
        if (x->fin->offer.pack_entries > PACK_INDEX_ENTRIES_MAX)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "an index pack of more than %u entries",
                                     PACK_INDEX_ENTRIES_MAX);
        if (e->size > PACK_FILE_MAX)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "an indexed file larger than a pack carries");
        if (x->merge) {
                s = recv_pack_sync(x, e, dirs);
                if (s < 0)
                        return s;
        }
        if (s == 1) {
                if (recv_deleting(x)) {
                        char name[WIRE_NAME_MAX + 1];
                        int err;

                        snprintf(name, sizeof(name), "%.*s", (int)e->name_len, e->name);
                        err = recv_sync_keep(x, name, dirs);
                        if (err < 0)
                                return recv_pack_errno(x, "keeping the existing", e, -err);
                }
                x->fin->pack_skipped++;
                return 1;
        }
        nd->file = x->fin->offer.file;
        nd->entries = (uint16_t)x->fin->offer.pack_entries;
        nd->bits[k / 8] |= (uint8_t)(1u << (k % 8));
        nd->needed++;
        return 0;
}

/* Every record, checked, then made. Touches x->fin->fd, offer, dest, stage_fd,
 * and fin's pack_* (pack_room: the job's bytes left when it began);
 * nothing else runs on them meanwhile. */
static int recv_pack_make(struct recv_xfer *x, const uint8_t *buf, size_t len, struct recv_sync_dirs *dirs)
{
        size_t dlen = strlen(x->dest);
        const char *leaf = name_leaf(x->dest), *why = NULL;
        struct pack_reader r;
        struct pack_entry e;
        char rel[WIRE_NAME_MAX + 1];
        enum name_verdict nv;
        uint64_t data = 0, moved = 0;
        uint32_t k = 0;
        int n;

        if (pack_check(buf, len, x->fin->offer.pack_entries, x->fin->offer.pack_hash, &why) < 0)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "a bad pack: %s", why);
        pack_reader_init(&r, buf, len, x->fin->offer.pack_entries);
        for (; (n = pack_next(&r, &e)) == PACK_ENTRY; k++) {
                /* Beneath DEST, as an entry offered alone must be. */
                if (e.name_len <= dlen + 1 || memcmp(e.name, x->dest, dlen) != 0 || e.name[dlen] != '/')
                        return recv_pack_bad(x, WIRE_E_NAME, "a packed entry is not beneath the job's destination");
                /* pack_next() held it to the rules every receiver takes; names = strict has more. */
                nv = name_path_check_rules(e.name, e.name_len, NULL, x->fin->pack_names);
                if (nv != NAME_OK)
                        return recv_pack_bad(x, WIRE_E_NAME, "%.*s: %s", (int)MIN(e.name_len, 200u), e.name,
                                             name_verdict_str(nv));
                if (e.size > x->fin->pack_room - data)
                        return recv_pack_bad(x, WIRE_E_PROTOCOL, "a pack: more bytes than the job announced");
                if (x->fin->pack_max_file && e.size > x->fin->pack_max_file)
                        return recv_pack_bad(x, WIRE_E_TOO_LARGE, "%.*s: %" PRIu64 " bytes is over max_file_size",
                                             (int)e.name_len, e.name, e.size);
                /* Attributes come with a landing that carries them (wire.h, Attributes). */
                if (e.xattrs_len &&
                    (!x->landing || !wire_land_xattrs_ok(x->landing->flags, e.xattrs, e.xattrs_len)))
                        return recv_pack_bad(x, WIRE_E_PROTOCOL, "%.*s: attributes the session does not carry",
                                             (int)MIN(e.name_len, 200u), e.name);
                /* DEST's leaf, then what follows DEST: shorter than the name. */
                snprintf(rel, sizeof(rel), "%s%.*s", leaf, (int)(e.name_len - dlen), e.name + dlen);
                if (e.flags & PACK_F_INDEX) {
                        int s = recv_pack_index(x, &e, k, dirs);

                        if (s < 0)
                                return s;
                        /* Kept: its bytes are the job's as a sent one's are. */
                        data += s == 1 ? e.size : 0;
                        continue;
                }
                data += e.size;
                moved += e.size;
                if (x->merge) {
                        int s = recv_pack_sync(x, &e, dirs);

                        if (s < 0)
                                return s;
                        if (s == 1 && recv_deleting(x)) {
                                char name[WIRE_NAME_MAX + 1];
                                int err;

                                /* The new DEST is the stage's: the kept one goes in. */
                                snprintf(name, sizeof(name), "%.*s", (int)e.name_len, e.name);
                                err = recv_sync_keep(x, name, dirs);
                                if (err < 0)
                                        return recv_pack_errno(x, "keeping the existing", &e, -err);
                        }
                        if (s == 1) {
                                x->fin->pack_skipped++;
                                continue;
                        }
                }
                /* As the user: the lander makes them (recv-land-tree.c), in order. */
                if (x->landing && e.type != PACK_LINK) {
                        int err = recv_land_pack_plan(x, &e, rel);

                        if (err < 0)
                                return recv_pack_errno(x, e.type == PACK_DIR ? "listing" : "planning", &e, -err);
                        continue;
                }
                if (e.type == PACK_DIR) {
                        int err = recv_tree_mkdir_at(x, rel, e.mode, e.mtime_ns);

                        if (err < 0)
                                return recv_pack_errno(x, "making", &e, -err);
                        continue;
                }
                if (e.type == PACK_LINK && (e.flags & PACK_F_HARD)) {
                        char trel[WIRE_PATH_MAX + 1], name[WIRE_NAME_MAX + 1];
                        const char *no;
                        int err;

                        /* Made at the end, with the symlinks. */
                        snprintf(name, sizeof(name), "%.*s", (int)e.name_len, e.name);
                        no = recv_tree_hard_refused(x, name, (const char *)e.data, (size_t)e.size,
                                                    x->fin->pack_names, trel);
                        if (no)
                                return recv_pack_bad(x, WIRE_E_NAME, "hard link %.*s: %s",
                                                     (int)MIN(e.name_len, 100u), e.name, no);
                        err = recv_tree_hard_add(x, rel, trel);
                        if (err < 0)
                                return recv_pack_errno(x, "keeping the hard link", &e, -err);
                        continue;
                }
                if (e.type == PACK_LINK) {
                        char target[NAME_LINK_MAX + 1];
                        const char *no;
                        int err;

                        /* Kept for the end, as a symlink offered alone (recv-file.c). */
                        memcpy(target, e.data, (size_t)e.size);
                        target[e.size] = '\0';
                        no = recv_tree_link_refused(rel, target, (size_t)e.size, x->fin->pack_symlinks);
                        if (no)
                                return recv_pack_bad(x, WIRE_E_NAME, "symlink %.*s: %s", (int)MIN(e.name_len, 100u),
                                                     e.name, no);
                        err = recv_tree_link_add(x, rel, target, (size_t)e.size, e.mtime_ns);
                        if (err < 0)
                                return recv_pack_errno(x, "keeping the symlink", &e, -err);
                        continue;
                }
                if (recv_pack_file(x, rel, &e) < 0)
                        return -EINVAL;
        }
        if (n < 0)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "a bad pack: %s", r.why);
        x->fin->pack_data = data;
        x->fin->pack_moved = moved;
        return 0;
}

/* On a worker: the pack, received into memory (recv.c), then its entries made. */
static int64_t recv_pack_worker(void *arg)
{
        struct recv_xfer *x = arg;
        struct recv_sync_dirs dirs;
        int r;

        if (!x->fin->pack_mem)
                return recv_pack_bad(x, WIRE_E_PROTOCOL, "a pack without data");
        incoming_dircache_init(&dirs.old, x->env->incoming_fd);
        incoming_dircache_init(&dirs.stage, x->stage_fd);
        r = recv_pack_make(x, x->fin->pack_mem, (size_t)x->fin->offer.size, &dirs);
        incoming_dircache_done(&dirs.old);
        incoming_dircache_done(&dirs.stage);
        return r;
}

/*
 * An index pack with files this side lacks (wire.h, Index packs): its
 * NEED goes rather than its RESULT, and the next offer must be the pack
 * of those files, for the same first entry; that one's RESULT settles
 * the index's entries. Nothing is published meanwhile.
 */
static void recv_need_start(struct recv_xfer *x)
{
        struct recv_file *f = x->fin;

        /* The sender waits for the NEED before it offers anything more. */
        if (x->next_on || (x->cur != f && x->cur->offer.name[0])) {
                recv_fail(x, WIRE_E_PROTOCOL, "an offer came before the index pack's NEED");
                return;
        }
        x->need_on = true;
        x->need_span = recv_file_span(f);
        x->need_count = f->need.needed;
        x->need_skipped = f->pack_skipped;
        x->next_file = f->offer.file;
        x->need_waiting = true;
        recv_need_pump(x);
}

void recv_need_pump(struct recv_xfer *x)
{
        struct xfer *b = &x->base;
        struct recv_lane *l0 = recv_lane(x, 0);
        struct recv_file *f = x->fin;
        struct wire_msg m = { .type = WIRE_NEED };
        int r;

        if (!x->need_waiting || b->state == XFER_CLOSING || !l0 || !f)
                return;
        m.need = f->need;
        if (b->session.on)
                auth_need_mac(&b->session, &m.need, m.need.mac);
        r = conn_send_ctrl(&l0->base.conn, &m);
        if (r == -ENOBUFS)
                return;         /* again once a control buffer is free */
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "cannot send an index pack's NEED");
                return;
        }
        x->need_waiting = false;
        log_debug("%s: %s: entries %u to %u: %u files needed", b->peer, x->dest, f->offer.file + 1,
                  f->offer.file + recv_file_span(f), f->need.needed);
        /* Done with: no RESULT of its own. */
        safe_close(f->fd);
        f->fd = -1;
        recv_pack_mem_free(f);
        f->offer.name[0] = '\0';
        x->fin = NULL;
        /* It was to be the session's last: its files come first. */
        if (x->cur == f) {
                (void)recv_session_next(x);
                return;
        }
        /* Their offer's wait starts now, not when the index came in. */
        xfer_arm_deadline(b);
}

static void recv_on_unpacked(struct io_req *req, int64_t res)
{
        struct recv_xfer *x = recv_of_file_req(req);

        if (!xfer_io_done(&x->base) || x->base.state == XFER_CLOSING || !x->fin)
                return;
        if (res < 0) {
                recv_fail(x, x->fin->pack_status ?: WIRE_E_INTERNAL, x->fin->pack_why);
                return;
        }
        /* A later offer, checked while this one unpacked, may have taken
         * what its entries now say they are: the job said less than it sends.
         * Every path that adds to offered checks first, so offered never
         * passes job_bytes and job_bytes - offered never wraps. */
        if (x->fin->pack_data > x->job_bytes - x->offered) {
                recv_fail(x, WIRE_E_PROTOCOL, "a pack: more bytes than the job announced");
                return;
        }
        x->offered += x->fin->pack_data;
        x->files_skipped += x->fin->pack_skipped;
        /* The job's bytes are its files' (RDMAXFER_BYTES), not the pack's
         * headers and names too: its data is all in (recv_finish). */
        x->base.bytes -= x->fin->offer.size - x->fin->pack_moved;
        /* Its RESULT counts what the index before it kept too. */
        if (x->fin->span)
                x->fin->pack_skipped += x->need_skipped;
        if (x->fin->need.needed) {
                recv_need_start(x);
                return;
        }
        if (x->landing) {
                recv_land_pack_go(x);
                return;
        }
        recv_tree_entry_done(x);
}

/* A landing's pack is handed to the lander whole (MEM), which takes no more. */
static_assert(PACK_BYTES_MAX <= LANDMSG_MEM_MAX, "a pack fits the memory a lander maps");

int recv_pack_mem_new(struct recv_xfer *x)
{
        const size_t size = (size_t)x->cur->offer.size;
        _cleanup_(closep) int fd = -1;
        void *p;

        if (!x->landing || size == 0) {
                x->cur->pack_mem = malloc(MAX(size, 1u));
                return x->cur->pack_mem ? 0 : -ENOMEM;
        }
        fd = memfd_create("rdmaxfer-pack", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        /* Sealed: the lander maps what it is handed, and it can neither
         * shrink under that mapping nor grow past it (landmsg.h, MEM). */
        if (ftruncate(fd, (off_t)size) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return -errno;
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        x->cur->pack_mem = p;
        x->cur->pack_mem_size = size;
        x->cur->pack_mem_fd = TAKE_FD(fd);
        return 0;
}

void recv_pack_mem_free(struct recv_file *f)
{
        if (f->pack_mem_fd >= 0) {
                munmap(f->pack_mem, f->pack_mem_size);
                f->pack_mem_fd = safe_close(f->pack_mem_fd);
        } else {
                free(f->pack_mem);
        }
        f->pack_mem = NULL;
}

void recv_pack_unpack(struct recv_xfer *x)
{
        int r;

        x->fin->pack_max_file = x->env->cfg.max_file_size;
        x->fin->pack_symlinks = recv_tree_symlinks(x);
        x->fin->pack_names = x->env->cfg.names;
        x->fin->pack_status = 0;
        x->fin->pack_why[0] = '\0';
        x->fin->pack_data = x->fin->pack_moved = 0;
        x->fin->pack_skipped = 0;
        memset(&x->fin->need, 0, sizeof(x->fin->need));
        /* A copy: the next file's offer may add to offered meanwhile. */
        x->fin->pack_room = x->job_bytes - MIN(x->offered, x->job_bytes);
        /* The worker reads this copy, not cfg (a reload may replace it). */
        if (x->merge)
                x->overwrite = x->env->cfg.overwrite;
        if (x->landing && recv_land_pack_new(x) < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "unpacking: out of memory");
                return;
        }
        x->fin->req.done = recv_on_unpacked;
        r = io_call(x->env->io, &x->fin->req, recv_pack_worker, x);
        if (r < 0) {
                recv_fail(x, WIRE_E_INTERNAL, "unpacking: cannot start a worker");
                return;
        }
        xfer_io_start(&x->base, "unpacking");
}
