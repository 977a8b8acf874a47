/*
 * The partial directory on disk: lookup, store and removal of one partial
 * (each a worker call of its transfer's), and the sweep (a worker call of
 * the engine's, at start and then every PARTIALS_SWEEP_SEC and after a new
 * partial is made) that removes what expired, what does not fit
 * partial_max_bytes (oldest first), damaged records and leftovers.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sodium.h>
#include <unistd.h>

#include "clock.h"
#include "esc.h"
#include "incoming.h"
#include "io.h"
#include "log.h"
#include "partials.h"
#include "recv-int.h"

#define PARTIALS_SWEEP_SEC      3600
/* At most this many partials are weighed against partial_max_bytes by one
 * sweep (expired ones all go); more are left to the next. */
#define PARTIALS_SWEEP_MAX      4096
/* A data file with no record, or a record's temporary, younger than this may
 * belong to a transfer storing its first record right now. */
#define PARTIALS_ORPHAN_SEC     600

struct partials_sweep {
        struct io_req req;
        struct recv_env *e;
        int dirfd;
        uint64_t now, retention, max_bytes;
        bool busy, again;
        /* Keys of the partials transfers are writing now: never removed
         * (their file must still be linkable when they publish). */
        char (*active)[PARTIAL_KEY_HEX];
        unsigned int nactive;
        unsigned int removed, kept, bad;
        uint64_t kept_bytes;
        struct event *timer;
};

static void partials_name(char out[PARTIAL_FILE_MAX], const char *key, const char *ext)
{
        snprintf(out, PARTIAL_FILE_MAX, "%s.%s", key, ext);
}

static void partials_unlink(int dirfd, const char *key, const char *ext)
{
        char name[PARTIAL_FILE_MAX];

        partials_name(name, key, ext);
        (void)unlinkat(dirfd, name, 0);
}

/* A partial all gone: its record first (a crash in between leaves data
 * without a record, which the sweep removes), then its data file or kept
 * tree, whichever it has. 0, or the tree's removal's -errno. */
static int partials_drop(int dirfd, const char *key)
{
        char name[PARTIAL_FILE_MAX];
        int r;

        partials_unlink(dirfd, key, "rec");
        partials_unlink(dirfd, key, "data");
        partials_name(name, key, "tree");
        r = incoming_remove_tree(dirfd, name);
        return r == -ENOENT ? 0 : r;
}

/* Read a whole record file; 0, or -errno / -EBADMSG & co. from decode. */
static int partials_read_rec(int dirfd, const char *name, struct partial_rec *rec)
{
        uint8_t buf[PARTIAL_REC_SIZE + 1];
        ssize_t n;
        size_t got = 0;
        int fd, r = 0;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        while (got < sizeof(buf)) {
                n = read(fd, buf + got, sizeof(buf) - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        close(fd);
        return r < 0 ? r : partial_decode(buf, got, rec);
}

/* A chain's (recv_partial_identity): whichever node relays it next may continue it. */
static bool partials_relayed(const struct partial_rec *r)
{
        static const uint8_t none[WIRE_ADDR_SIZE];

        return memcmp(r->peer, none, sizeof(none)) == 0;
}

/* A published tree's DEST is still the directory it published. */
static bool partials_tree_there(const struct partial_job *j)
{
        struct stat st;

        return j->dest_dirfd >= 0 && fstatat(j->dest_dirfd, j->rec.dest, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(st.st_mode) && (uint64_t)st.st_dev == j->rec.tree.dest_dev &&
               (uint64_t)st.st_ino == j->rec.tree.dest_ino;
}

int64_t partials_lookup(void *arg)
{
        struct partial_job *j = arg;
        char name[PARTIAL_FILE_MAX];
        struct stat st;
        int r, fd;

        j->data_fd = -1;
        j->why = NULL;
        partials_name(name, j->key, "rec");
        r = partials_read_rec(j->dirfd, name, &j->rec);
        if (r == -ENOENT)
                return PARTIALS_NONE;
        if (r < 0) {
                j->why = "its record is damaged or of another version; removed";
                goto drop;
        }
        j->match = partial_match(&j->rec, &j->offer);
        if (j->match == PARTIAL_OTHER_PEER)
                return PARTIALS_NONE;   /* another's: a hash collision, left alone */
        /* A relayed record's key names no peer: any node may offer under
         * it, so only its own transfer (the same source) replaces what it
         * kept (issue 32 L1). */
        if (j->match != PARTIAL_MATCH && partials_relayed(&j->rec) && !(j->rec.flags & PARTIAL_PUBLISHED)) {
                j->why = "a chain's partial of another transfer is kept under this name until it expires";
                return PARTIALS_HELD;
        }
        if (j->match != PARTIAL_MATCH) {
                j->why = partial_match_str(j->match);
                goto drop;
        }
        if ((j->rec.flags & PARTIAL_PUBLISHED) && (j->rec.flags & PARTIAL_TREE) && !partials_tree_there(j)) {
                j->why = "the tree it published is no longer there";
                goto drop;
        }
        if (j->rec.flags & PARTIAL_PUBLISHED)
                return PARTIALS_PUBLISHED;
        if (j->rec.flags & PARTIAL_TREE) {
                if (memcmp(j->rec.tree.boot_id, j->boot_id, PARTIAL_BOOT_SIZE) != 0) {
                        j->why = "the host restarted since: what was staged may not have reached the disk";
                        goto drop;
                }
                partials_name(name, j->key, "tree");
                fd = openat(j->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        j->why = "its staging directory is gone";
                        goto drop;
                }
                j->data_fd = fd;
                return PARTIALS_RESUME;
        }
        /* Issue 32 M2: each resume gives the sender time to read back
         * what was kept; a partial that attempts resume and leave without
         * a byte more is not resumed for ever. */
        if (j->rec.idle_resumes >= PARTIAL_IDLE_MAX) {
                static_assert(PARTIAL_IDLE_MAX == 3, "the text says 3");
                j->why = "resumed 3 times in a row without a byte more; dropped, sent again whole";
                goto drop;
        }
        partials_name(name, j->key, "data");
        fd = openat(j->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                j->why = "its data file is gone";
                goto drop;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != j->rec.size) {
                close(fd);
                j->why = "its data file is not the size recorded";
                goto drop;
        }
        /* Published, and the daemon stopped before the record said so
         * (the file is linked into place before KEY.data goes): never
         * write into a file that is someone's published copy. */
        if (st.st_nlink != 1) {
                close(fd);
                j->why = "its data file is linked elsewhere too (published before the record said so)";
                goto drop;
        }
        j->data_fd = fd;
        return PARTIALS_RESUME;
drop:
        (void)partials_drop(j->dirfd, j->key);
        return PARTIALS_NONE;
}

static int partials_write_all(int fd, const uint8_t *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, buf, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

/* The space reserved for what no lane kept goes back: a partial takes
 * what it holds, not the whole file (the size stays, for the lookup). */
static void partials_punch(const struct partial_job *j)
{
        const struct partial_rec *r = &j->rec;
        uint64_t nchunks = r->size / r->chunk_size + (r->size % r->chunk_size != 0), first, end;

        for (unsigned int k = 0; k < r->lanes; k++) {
                uint64_t from, to;

                wire_lane_range(nchunks, r->chunk_size, r->lanes, k, &first, &end);
                from = MIN((first + r->kept[k]) * r->chunk_size, r->size);
                to = MIN(end * r->chunk_size, r->size);
                if (to > from)
                        (void)fallocate(j->punch_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                        (off_t)from, (off_t)(to - from));
        }
}

int64_t partials_store(void *arg)
{
        struct partial_job *j = arg;
        char data[PARTIAL_FILE_MAX], tmp[PARTIAL_FILE_MAX], rec[PARTIAL_FILE_MAX];
        uint8_t buf[PARTIAL_REC_SIZE];
        int fd, r;

        partials_name(data, j->key, "data");
        partials_name(tmp, j->key, "tmp");
        partials_name(rec, j->key, "rec");
        if (j->link_from || j->unlink_data) {
                /* Whatever had the name (a partial of another source) goes. */
                if (unlinkat(j->dirfd, data, 0) < 0 && errno != ENOENT)
                        return -errno;
        }
        if (j->link_from && linkat(AT_FDCWD, j->link_from, j->dirfd, data, AT_SYMLINK_FOLLOW) < 0)
                return -errno;
        if (j->punch_fd >= 0)
                partials_punch(j);
        partial_encode(buf, &j->rec);
        fd = openat(j->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = partials_write_all(fd, buf, sizeof(buf));
        if (r == 0 && !j->nosync && fsync(fd) < 0)
                r = -errno;
        close(fd);
        if (r == 0 && renameat(j->dirfd, tmp, j->dirfd, rec) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(j->dirfd, tmp, 0);
                return r;
        }
        return !j->nosync && fsync(j->dirfd) < 0 ? -errno : 0;
}

int64_t partials_remove(void *arg)
{
        struct partial_job *j = arg;

        int r = partials_drop(j->dirfd, j->key);

        if (r < 0)
                return r;
        return fsync(j->dirfd) < 0 ? -errno : 0;
}

/* ---- the sweep ---- */

struct partials_found {
        char key[PARTIAL_KEY_HEX];
};

static bool partials_key_of(const char *name, const char *ext, char key[PARTIAL_KEY_HEX])
{
        size_t n = strlen(name), x = strlen(ext);

        if (n != PARTIAL_KEY_HEX - 1 + 1 + x || name[PARTIAL_KEY_HEX - 1] != '.' ||
            strcmp(name + PARTIAL_KEY_HEX, ext) != 0 ||
            strspn(name, "0123456789abcdef") != PARTIAL_KEY_HEX - 1)
                return false;
        memcpy(key, name, PARTIAL_KEY_HEX - 1);
        key[PARTIAL_KEY_HEX - 1] = '\0';
        return true;
}

/* Older than PARTIALS_ORPHAN_SEC by mtime: nobody is about to give it a record. */
static bool partials_stale(int dirfd, const char *name, uint64_t now)
{
        struct stat st;

        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
               now > (uint64_t)st.st_mtime + PARTIALS_ORPHAN_SEC;
}

static bool partials_active(const struct partials_sweep *s, const char *key)
{
        for (unsigned int i = 0; i < s->nactive; i++)
                if (strcmp(s->active[i], key) == 0)
                        return true;
        return false;
}

static int64_t partials_sweep_fn(void *arg)
{
        struct partials_sweep *s = arg;
        struct partials_found *found;
        struct partial_entry *ent;
        struct dirent *de;
        size_t n = 0;
        DIR *d;
        int fd;

        s->removed = s->kept = s->bad = 0;
        s->kept_bytes = 0;
        fd = dup(s->dirfd);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        found = calloc(PARTIALS_SWEEP_MAX, sizeof(*found));
        ent = calloc(PARTIALS_SWEEP_MAX, sizeof(*ent));
        if (!found || !ent) {
                free(found);
                free(ent);
                closedir(d);
                return -ENOMEM;
        }
        rewinddir(d);
        while ((de = readdir(d))) {
                char key[PARTIAL_KEY_HEX], other[PARTIAL_FILE_MAX];
                struct partial_rec rec;
                struct stat st;

                if (partials_key_of(de->d_name, "tmp", key)) {
                        if (partials_stale(s->dirfd, de->d_name, s->now)) {
                                (void)unlinkat(s->dirfd, de->d_name, 0);
                                s->bad++;
                        }
                        continue;
                }
                if (partials_key_of(de->d_name, "data", key) || partials_key_of(de->d_name, "tree", key)) {
                        partials_name(other, key, "rec");
                        if (!partials_active(s, key) && faccessat(s->dirfd, other, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
                            partials_stale(s->dirfd, de->d_name, s->now)) {
                                (void)partials_drop(s->dirfd, key);
                                s->bad++;
                        }
                        continue;
                }
                if (!partials_key_of(de->d_name, "rec", key) || partials_active(s, key))
                        continue;
                if (partials_read_rec(s->dirfd, de->d_name, &rec) < 0) {
                        (void)partials_drop(s->dirfd, key);
                        s->bad++;
                        continue;
                }
                /* Expired: gone now, however many there are (records of
                 * published transfers pile up as fast as files arrive); a
                 * kept tree of an earlier boot is not trusted. */
                if ((s->now > rec.updated && s->now - rec.updated >= s->retention) ||
                    ((rec.flags & PARTIAL_TREE) && !(rec.flags & PARTIAL_PUBLISHED) &&
                     memcmp(rec.tree.boot_id, s->e->boot_id, PARTIAL_BOOT_SIZE) != 0)) {
                        (void)partials_drop(s->dirfd, key);
                        s->removed++;
                        continue;
                }
                /* The cap weighs at most so many; the next sweep, the rest. */
                if (n >= PARTIALS_SWEEP_MAX)
                        continue;
                partials_name(other, key, "data");
                memcpy(found[n].key, key, sizeof(key));
                ent[n].updated = rec.updated;
                /* A kept tree weighs what it staged (its record says); a
                 * published one, nothing. */
                if (rec.flags & PARTIAL_TREE)
                        ent[n].bytes = rec.flags & PARTIAL_PUBLISHED ? 0 : rec.tree.offered;
                else
                        ent[n].bytes = fstatat(s->dirfd, other, &st, AT_SYMLINK_NOFOLLOW) == 0 ?
                                       (uint64_t)st.st_blocks * 512 : 0;
                n++;
        }
        closedir(d);
        partial_sweep_select(ent, n, s->now, s->retention, s->max_bytes);
        for (size_t i = 0; i < n; i++) {
                if (ent[i].remove) {
                        (void)partials_drop(s->dirfd, found[i].key);
                        s->removed++;
                } else {
                        s->kept++;
                        s->kept_bytes += ent[i].bytes;
                }
        }
        free(found);
        free(ent);
        return fsync(s->dirfd) < 0 ? -errno : 0;
}

static void partials_sweep_said(struct partials_sweep *s, int64_t res)
{
        if (res < 0)
                log_warning("partial_dir %s: sweeping: %s", s->e->cfg.partial_dir, strerror((int)-res));
        else if (s->removed || s->bad)
                log_notice("partial_dir %s: removed %u partial%s (expired, or over partial_max_bytes) "
                           "and %u leftover%s; %u kept, %" PRIu64 " bytes",
                           s->e->cfg.partial_dir, s->removed, s->removed == 1 ? "" : "s", s->bad,
                           s->bad == 1 ? "" : "s", s->kept, s->kept_bytes);
}

static void partials_sweep_prepare(struct partials_sweep *s)
{
        unsigned int n = 0;

        /* On the loop: the worker reads only this copy. */
        for (struct xfer *b = xfer_first(s->e->xe, XFER_RECV); b; b = b->next)
                n += recv_xfer_of(b)->part_on + recv_xfer_of(b)->tree_part;
        free(s->active);
        s->active = n ? calloc(n, sizeof(*s->active)) : NULL;
        s->nactive = 0;
        for (struct xfer *b = xfer_first(s->e->xe, XFER_RECV); b && s->active; b = b->next) {
                const struct recv_xfer *x = recv_xfer_of(b);

                /* A file's partial, and the tree it is an entry of. */
                if (x->part_on && s->nactive < n)
                        partial_key(&x->ident, s->active[s->nactive++]);
                if (x->tree_part && s->nactive < n)
                        partial_key(&x->keep_ident, s->active[s->nactive++]);
        }
        s->now = clock_usec(CLOCK_REALTIME) / 1000000u;
        s->retention = s->e->cfg.partial_retention;
        s->max_bytes = s->e->cfg.partial_max_bytes;
}

static void partials_on_swept(struct io_req *req, int64_t res)
{
        struct partials_sweep *s = container_of(req, struct partials_sweep, req);

        s->busy = false;
        partials_sweep_said(s, res);
        if (s->again) {
                s->again = false;
                partials_sweep(s->e);
        }
}

void partials_sweep(struct recv_env *e)
{
        struct partials_sweep *s = e->sweep;

        if (!s || e->freeing)
                return;
        if (s->busy) {
                s->again = true;
                return;
        }
        partials_sweep_prepare(s);
        s->req.done = partials_on_swept;
        if (io_call(e->io, &s->req, partials_sweep_fn, s) == 0)
                s->busy = true;
}

static void partials_on_timer(evutil_socket_t fd, short what, void *arg)
{
        struct recv_env *e = arg;
        struct timeval tv = { .tv_sec = PARTIALS_SWEEP_SEC };

        partials_sweep(e);
        evtimer_add(e->sweep->timer, &tv);
}

bool partials_on(const struct recv_env *e, uint64_t size)
{
        return e->partial_fd >= 0 && e->cfg.partial_max_bytes > 0 && size <= e->cfg.partial_max_bytes;
}

/* Whether @sub is @dir or beneath it, by their paths as configured. */
static bool partials_beneath(const char *sub, const char *dir)
{
        size_t n = strlen(dir);

        while (n > 1 && dir[n - 1] == '/')
                n--;
        return strncmp(sub, dir, n) == 0 && (sub[n] == '\0' || sub[n] == '/');
}

/* The host's boot id (a kernel's random one per boot), for a kept tree's
 * record: zero when it cannot be read (then every record matches it, as
 * on a kernel without it). */
static void partials_boot_id(uint8_t out[PARTIAL_BOOT_SIZE])
{
        char text[64];
        const char *end;
        ssize_t len;
        size_t n;
        int fd;

        memset(out, 0, PARTIAL_BOOT_SIZE);
        fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        len = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (len <= 0)
                return;
        text[len] = '\0';
        /* "8c3f...-...-...\n": 32 hex digits, dashes between; anything
         * else counts as none. */
        if (sodium_hex2bin(out, PARTIAL_BOOT_SIZE, text, (size_t)len, "-", &n, &end) != 0 || n != PARTIAL_BOOT_SIZE)
                memset(out, 0, PARTIAL_BOOT_SIZE);
}

int partials_open(struct recv_env *e, const char *incoming_dir)
{
        const struct recv_cfg *cfg = &e->cfg;
        struct timeval tv = { .tv_sec = PARTIALS_SWEEP_SEC };
        struct partials_sweep *s;
        struct stat in, pa;
        int64_t res;

        e->partial_fd = -1;
        partial_key_id(e->key->bytes, e->key->len, e->key_id);
        partials_boot_id(e->boot_id);
        if (!cfg->partial_dir[0] || cfg->partial_max_bytes == 0) {
                log_info("resuming is off (partial_dir or partial_max_bytes unset)");
                return 0;
        }
        if (partials_beneath(cfg->partial_dir, incoming_dir)) {
                log_warning("partial_dir %s is inside incoming_dir: resuming is off "
                            "(readers of incoming_dir must never see a partial)", cfg->partial_dir);
                return 0;
        }
        if (mkdir(cfg->partial_dir, 0700) < 0 && errno != EEXIST) {
                log_warning("partial_dir %s: %m: resuming is off", cfg->partial_dir);
                return 0;
        }
        e->partial_fd = open(cfg->partial_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (e->partial_fd < 0) {
                log_warning("partial_dir %s: %m: resuming is off", cfg->partial_dir);
                return 0;
        }
        /* A partial is the transfer's own nameless file, linked: no copy. */
        if (fstat(e->incoming_fd, &in) < 0 || fstat(e->partial_fd, &pa) < 0 || in.st_dev != pa.st_dev) {
                log_warning("partial_dir %s is not on the file system of incoming_dir %s: "
                            "resuming is off", cfg->partial_dir, incoming_dir);
                safe_close(e->partial_fd);
                e->partial_fd = -1;
                return 0;
        }
        /* Readers of incoming_dir (group rdmaxfer) have no business here. */
        if ((pa.st_mode & 077) && fchmod(e->partial_fd, 0700) < 0)
                log_warning("partial_dir %s: cannot make it private (mode %04o): %m", cfg->partial_dir,
                            pa.st_mode & 07777);
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->e = e;
        s->dirfd = e->partial_fd;
        s->timer = evtimer_new(e->base, partials_on_timer, e);
        if (!s->timer) {
                free(s);
                return -ENOMEM;
        }
        e->sweep = s;
        /* Once now, before any offer can find what expired while we were down. */
        partials_sweep_prepare(s);
        res = partials_sweep_fn(s);
        partials_sweep_said(s, res);
        evtimer_add(s->timer, &tv);
        log_info("partial_dir %s: %u partial%s kept (%" PRIu64 " bytes); interrupted transfers resume",
                 cfg->partial_dir, s->kept, s->kept == 1 ? "" : "s", s->kept_bytes);
        return 0;
}

void partials_close(struct recv_env *e, bool keep)
{
        if (e->sweep) {
                event_free(e->sweep->timer);
                /* A sweep still out on a stuck worker keeps its memory. */
                if (!keep) {
                        free(e->sweep->active);
                        free(e->sweep);
                }
                e->sweep = NULL;
        }
        safe_close(e->partial_fd);
        e->partial_fd = -1;
}

/* ---- rdmaxferd --list-partials ---- */

static void partials_peer_text(const struct partial_rec *r, char *out, size_t len)
{
        static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
        static const uint8_t none[WIRE_ADDR_SIZE];

        /* A relayed file's: any node of its chain may continue it. */
        if (memcmp(r->peer, none, sizeof(none)) == 0)
                snprintf(out, len, "a chain's relay");
        else if (memcmp(r->peer, v4mapped, sizeof(v4mapped)) == 0)
                inet_ntop(AF_INET, r->peer + 12, out, (socklen_t)len);
        else
                inet_ntop(AF_INET6, r->peer, out, (socklen_t)len);
}

static int partials_print_one(int dirfd, const char *name, FILE *out)
{
        uint8_t buf[PARTIAL_REC_SIZE + 1];
        struct partial_rec r;
        char peer[INET6_ADDRSTRLEN], when[32], dest[ESC_TERM_SIZE(PARTIAL_DEST_MAX)];
        struct tm tm;
        time_t t;
        ssize_t n;
        int fd, rc;

        fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        rc = n < 0 ? -errno : partial_decode(buf, (size_t)n, &r);
        if (rc < 0) {
                fprintf(out, "%.32s  (unreadable record: %s)\n", name, strerror(-rc));
                return 0;
        }
        partials_peer_text(&r, peer, sizeof(peer));
        /* A name may be any bytes (names = any): shown escaped. */
        esc_term(dest, sizeof(dest), r.dest);
        t = (time_t)r.updated;
        gmtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        /* A kept tree (or the record of a published one): its entries
         * too, and DEST ends with a slash. */
        if (r.flags & PARTIAL_TREE)
                fprintf(out, "%.32s  %-9s %" PRIu64 "/%" PRIu64 " bytes  %s  from %s%s  transfer %" PRIu64
                       "  %u/%u entries  %s/\n",
                       name, r.flags & PARTIAL_PUBLISHED ? "published" : "tree", r.tree.offered, r.size, when, peer,
                       r.key_id[0] | r.key_id[1] | r.key_id[2] | r.key_id[3] ? " (key)" : "", r.transfer_id,
                       r.tree.entries, r.tree.job_files, dest);
        else
                fprintf(out, "%.32s  %-9s %" PRIu64 "/%" PRIu64 " bytes  %s  from %s%s  transfer %" PRIu64 "  %s\n",
                       name, r.flags & PARTIAL_PUBLISHED ? "published" : "partial",
                       r.flags & PARTIAL_PUBLISHED ? r.size : partial_kept_bytes(&r), r.size, when, peer,
                       r.key_id[0] | r.key_id[1] | r.key_id[2] | r.key_id[3] ? " (key)" : "", r.transfer_id,
                       dest);
        return 0;
}

int partials_print(const char *dir, FILE *out)
{
        struct dirent *de;
        DIR *d;

        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (n == PARTIAL_KEY_HEX - 1 + 4 && strcmp(de->d_name + n - 4, ".rec") == 0)
                        partials_print_one(dirfd(d), de->d_name, out);
        }
        closedir(d);
        return 0;
}
