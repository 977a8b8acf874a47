/*
 * xferctl send's jobs of several files: FILE... (counted, then handed over
 * one FILE each) and -r DIR (walked twice with walk.c: counted, then handed
 * over entry by entry). See ctl.h for the protocol, sendcmd.h for the rest.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "esc.h"
#include "hardlinks.h"
#include "name.h"
#include "sendcmd.h"
#include "walk.h"
#include "xattrs.h"
#include "xferctl.h"

static const char *sendcmd_file_type(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFDIR:  return "a directory";
        case S_IFCHR:  return "a character device";
        case S_IFBLK:  return "a block device";
        case S_IFIFO:  return "a pipe";
        case S_IFSOCK: return "a socket";
        default:       return "not a regular file";
        }
}

/* Open @path as the user, a regular file: -1 with *@out and *@size set, or an exit code. */
int sendcmd_open_path(const char *path, int *out, uint64_t *size)
{
        _cleanup_(closep) int fd = -1;
        _cleanup_(freep) char *shown = esc_term_dup(path);
        struct stat st;

        if (!shown) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        /* O_NONBLOCK so a FIFO cannot hang us before we see what it is. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                xferctl_say("cannot open %s: %s", shown, strerror(errno));
                return XFERCTL_EXIT_USAGE;
        }
        if (fstat(fd, &st) < 0) {
                xferctl_say("cannot stat %s: %s", shown, strerror(errno));
                return XFERCTL_EXIT_USAGE;
        }
        if (S_ISDIR(st.st_mode)) {
                xferctl_say("cannot send %s: it is a directory (send a tree with -r)", shown);
                return XFERCTL_EXIT_USAGE;
        }
        if (!S_ISREG(st.st_mode)) {
                xferctl_say("cannot send %s: it is %s; only regular files can be sent",
                            shown, sendcmd_file_type(st.st_mode));
                return XFERCTL_EXIT_USAGE;
        }
        /* The daemon shares this open file description: hand it over blocking. */
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
                xferctl_say("cannot send %s: %s", shown, strerror(errno));
                return XFERCTL_EXIT_USAGE;
        }
        *out = TAKE_FD(fd);
        *size = (uint64_t)st.st_size;
        return -1;
}


static int sendcmd_cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Several FILEs: each must be a regular file with an acceptable leaf name,
 * no two the same (the receiver would refuse the second); count the bytes.
 * Returns -1 or an exit code.
 */
int sendcmd_count(struct sendcmd *sc)
{
        _cleanup_(freep) const char **names = calloc(sc->npaths, sizeof(*names));
        uint64_t total = 0;

        sc->sizes = calloc(sc->npaths, sizeof(*sc->sizes));
        if (sc->json)
                sc->results = calloc(sc->npaths, sizeof(*sc->results));
        if (!names || !sc->sizes || (sc->json && !sc->results)) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        for (unsigned int i = 0; i < sc->npaths; i++) {
                const char *name = name_leaf(sc->paths[i]);
                enum name_verdict v = name_check(name, strlen(name));
                int fd = -1, r;

                /* --continue-on-error: what cannot be opened is left out, and said. */
                if (sc->keep_going) {
                        fd = open(sc->paths[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                        if (fd < 0) {
                                _cleanup_(freep) char *shown = esc_term_dup(sc->paths[i]);

                                if (sc->results)
                                        sc->results[sc->nresults++] = (struct json_file){ .path = sc->paths[i],
                                                                                         .err = errno };
                                xferctl_say("cannot open %s: %s; not sent", shown ? shown : "?", strerror(errno));
                                sc->unreadable++;
                                memmove(&sc->paths[i], &sc->paths[i + 1], (sc->npaths - i - 1) * sizeof(*sc->paths));
                                sc->npaths--;
                                i--;
                                continue;
                        }
                        fd = safe_close(fd);
                }
                r = sendcmd_open_path(sc->paths[i], &fd, &sc->sizes[i]);
                safe_close(fd);
                if (r >= 0)
                        return r;
                if (v != NAME_OK) {
                        _cleanup_(freep) char *bad = esc_term_dup(name);

                        xferctl_say("cannot send '%s': %s", bad ? bad : "?", name_verdict_str(v));
                        return XFERCTL_EXIT_USAGE;
                }
                if (sc->sizes[i] > UINT64_MAX - total) {
                        xferctl_say("too many bytes in one job");
                        return XFERCTL_EXIT_USAGE;
                }
                total += sc->sizes[i];
                names[i] = name;
                if (sc->results)
                        sc->results[sc->nresults++] = (struct json_file){ .path = sc->paths[i], .name = name,
                                                                         .size = sc->sizes[i] };
        }
        if (sc->npaths == 0) {
                xferctl_say("nothing could be read: nothing sent");
                return XFERCTL_EXIT_FAILED;
        }
        sc->path = sc->paths[0];
        qsort(names, sc->npaths, sizeof(*names), sendcmd_cmp_str);
        for (unsigned int i = 1; i < sc->npaths; i++) {
                if (!strcmp(names[i - 1], names[i])) {
                        _cleanup_(freep) char *bad = esc_term_dup(names[i]);

                        xferctl_say("two files named '%s': each is published under its last "
                                    "component, send them separately", bad ? bad : "?");
                        return XFERCTL_EXIT_USAGE;
                }
        }
        sc->submit.files = sc->npaths;
        sc->submit.job_bytes = total;
        return -1;
}

/*
 * Handing a file over failed (@r): the daemon closed the connection. Its
 * ERROR, if it could still be read, says why, unless it only says the job
 * ended: the job's own report (sendcmd_watch) says how, and with what
 * reason, whichever of the two the socket still held.
 */
static void sendcmd_feed_closed(int sock, int r)
{
        struct ctl_msg rep = { .type = 0 };
        int pfd = -1;

        if (ctl_recv(sock, &rep, &pfd) == 0 && rep.type == CTL_ERROR) {
                if (rep.error.code != -ECANCELED)
                        xferctl_say_error("send", &rep.error);
        } else if (r != -EPIPE && r != -ECONNRESET) {
                xferctl_say_io(r);
        }
        safe_close(pfd);
}

/*
 * Hand the files after the first over on @sock, one FILE each, in order;
 * the daemon reads the next only when it has room, so this blocks as it
 * must. Returns -1 or an exit code.
 */
int sendcmd_feed(struct sendcmd *sc, int sock)
{
        struct ctl_msg m;

        for (unsigned int i = 1; i < sc->npaths; i++) {
                _cleanup_(freep) char *shown = esc_term_dup(sc->paths[i]);
                _cleanup_(closep) int fd = -1;
                uint64_t size;
                int r;

                r = sendcmd_open_path(sc->paths[i], &fd, &size);
                if (r >= 0) {
                        xferctl_say("job %" PRIu64 " is cancelled", sc->id);
                        return XFERCTL_EXIT_FAILED;
                }
                if (size != sc->sizes[i]) {
                        xferctl_say("%s changed size while being sent (%" PRIu64 " bytes, then %" PRIu64
                                    "); job %" PRIu64 " is cancelled", shown ? shown : "?", sc->sizes[i],
                                    size, sc->id);
                        return XFERCTL_EXIT_FAILED;
                }
                /* Only .file is encoded (sendcmd_feed_entry). */
                m.type = CTL_FILE;
                m.file = (struct ctl_file){ .id = sc->id, .size = size };
                snprintf(m.file.name, sizeof(m.file.name), "%s", name_leaf(sc->paths[i]));
                sendcmd_attrs_read(sc, fd, sc->paths[i], m.file.xattrs, &m.file.xattrs_len);
                if (m.file.xattrs_len)
                        m.file.flags |= CTL_FILE_XATTRS;
                r = ctl_send(sock, &m, fd);
                if (r >= 0)
                        continue;
                /* The job's report follows. */
                sendcmd_feed_closed(sock, r);
                return -1;
        }
        return -1;
}

/* ---- -X, -A ---- */

void sendcmd_attrs_read(struct sendcmd *sc, int fd, const char *path, uint8_t *buf, uint16_t *len)
{
        const uint16_t f = sc->submit.flags;
        unsigned int which = ((f & CTL_SUBMIT_XATTRS) ? XATTRS_USER : 0) | ((f & CTL_SUBMIT_ACLS) ? XATTRS_ACL : 0);
        _cleanup_(freep) char *shown = NULL;
        char bad[256];
        size_t need;
        int n;

        *len = 0;
        if (!which)
                return;
        n = xattrs_read(fd, which, buf, XATTRS_BYTES_MAX, &need, bad);
        if (n >= 0) {
                *len = (uint16_t)n;
                return;
        }
        /* Sent all the same, without them: said, and exit 23. */
        shown = esc_term_dup(path);
        if (n == -E2BIG)
                xferctl_say("%s: its extended attributes and ACLs take %zu bytes, more than the %u that go "
                            "with an entry; sent without them", shown ? shown : "?", need, XATTRS_BYTES_MAX);
        else
                xferctl_say("%s: cannot read its attributes%s%s%s: %s; sent without them", shown ? shown : "?",
                            bad[0] ? " (" : "", bad, bad[0] ? ")" : "", strerror(-n));
        sc->attrs_lost++;
}

/* ---- -r: a tree ---- */

struct sendcmd_walk {
        struct sendcmd *sc;
        uint32_t entries;
        uint64_t bytes;
        int exit;                       /* an exit code once decided, else -1 */
        struct ctl_batch *batch;        /* feeding: the FILEs not sent yet */
        struct hardlinks *hard;         /* the files met with several names; NULL: --no-hard-links */
};

/* Whether regular file @e is one met before under another name (both
 * walks meet them in the same order): 1 with *@first that name, 0, or an
 * exit code with k->exit set. */
static int sendcmd_hard_link(struct sendcmd_walk *k, const struct walk_entry *e, const char *name,
                             const char **first)
{
        int r;

        *first = NULL;
        if (!k->hard || e->kind != WALK_FILE || e->st.st_nlink < 2)
                return 0;
        r = hardlinks_seen(k->hard, e->st.st_dev, e->st.st_ino, name, first);
        if (r < 0) {
                xferctl_say("out of memory");
                k->exit = XFERCTL_EXIT_FAILED;
                return -ENOMEM;
        }
        return r;
}

/* The entry's name on the receiver: DEST, then its path below FILE. */
static int sendcmd_tree_name(const struct sendcmd *sc, const struct walk_entry *e, char *buf, size_t len)
{
        int n = sc->multi ? snprintf(buf, len, "%s/%s%s", sc->dest, sc->src_leaf, e->path + sc->root_len) :
                            snprintf(buf, len, "%s%s", sc->dest, e->path + sc->root_len);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Whether the receiver would take the entry's name (each component by
 * name_check(), the whole under CTL_PATH_MAX): @buf gets it. Both walks
 * ask, so they skip the same entries. */
static bool sendcmd_tree_ok(const struct sendcmd *sc, const struct walk_entry *e, char *buf, size_t len)
{
        return sendcmd_tree_name(sc, e, buf, len) == 0 && name_path_check(buf, strlen(buf), NULL) == NAME_OK;
}

/* Whether a symlink of the tree is sent (--links), saying why not when
 * @say (the count says it; the feed asks again in silence). */
static bool sendcmd_link_wanted(const struct sendcmd *sc, const struct walk_entry *e, bool say)
{
        /* Its directory's depth beneath DEST: one less than the walk's (DIR
         * is DEST), or the walk's with several sources (DEST/src_leaf). */
        enum name_link_verdict v = name_link_check(e->target, strlen(e->target),
                                                   sc->multi ? e->depth : e->depth - 1);
        const char *why = NULL;

        if (sc->links == SENDCMD_LINKS_NONE)
                why = "a symlink (--links none)";
        else if (v == NAME_LINK_BAD)
                why = "a symlink whose target cannot be sent";
        else if (v != NAME_LINK_SAFE && sc->links != SENDCMD_LINKS_ALL)
                why = "a symlink pointing outside the tree (--links all sends it)";
        if (why && say) {
                _cleanup_(freep) char *shown = esc_term_dup(e->path);

                xferctl_say("skipping %s: %s", shown ? shown : "?", why);
        }
        return !why;
}

static int sendcmd_count_entry(void *userdata, struct walk_entry *e)
{
        struct sendcmd_walk *k = userdata;
        char name[CTL_PATH_MAX + 1];
        const char *first;
        int r;

        if (e->kind == WALK_DIR_END)
                return 0;
        if (e->depth == 0 && e->kind == WALK_DIR && k->sc->into) {
                xferctl_say("cannot bcast %s: it is a directory (bcast -r sends a tree)", k->sc->path_shown);
                k->exit = XFERCTL_EXIT_USAGE;
                return -EISDIR;
        }
        if (e->depth == 0 && e->kind != WALK_DIR && !k->sc->multi) {
                xferctl_say("cannot send %s with -r: it is %s, not a directory", k->sc->path_shown,
                            walk_type_str(e->st.st_mode));
                k->exit = XFERCTL_EXIT_USAGE;
                return -ENOTDIR;
        }
        /* DEST is the directory: its mode and mtime go with the SUBMIT. */
        if (e->depth == 0 && !k->sc->multi) {
                k->sc->submit.mode = (uint32_t)(e->st.st_mode & 07777);
                k->sc->submit.mtime_ns = walk_mtime_ns(&e->st);
                sendcmd_attrs_read(k->sc, e->attr_fd, e->path, k->sc->submit.xattrs, &k->sc->submit.xattrs_len);
        }
        if (e->kind == WALK_SYMLINK && e->depth > 0 && !sendcmd_link_wanted(k->sc, e, true)) {
                /* --links none asked for it; any other leaves out what the tree has. */
                k->sc->left_out += k->sc->links != SENDCMD_LINKS_NONE;
                return 0;
        }
        if (!sendcmd_tree_ok(k->sc, e, name, sizeof(name))) {
                _cleanup_(freep) char *shown = esc_term_dup(e->path);
                enum name_verdict v = name_check(e->name, strlen(e->name));

                /* DEST itself was checked; beneath it, what the receiver would refuse is not sent. */
                xferctl_say("skipping %s: %s", shown ? shown : "?",
                            v != NAME_OK ? name_verdict_str(v) : "its path on the receiver would be too long");
                k->sc->left_out++;
                return e->kind == WALK_DIR ? WALK_SKIP : 0;
        }
        r = sendcmd_hard_link(k, e, name, &first);
        if (r < 0)
                return r;
        if (first) {
                /* Its data is its first name's: what goes is that name. */
                k->bytes += strlen(first);
        } else if (e->kind == WALK_FILE) {
                if ((uint64_t)e->st.st_size > UINT64_MAX - k->bytes) {
                        k->exit = XFERCTL_EXIT_USAGE;
                        return -EOVERFLOW;
                }
                k->bytes += (uint64_t)e->st.st_size;
        }
        /* A symlink's data is its target. */
        if (e->kind == WALK_SYMLINK)
                k->bytes += strlen(e->target);
        if (++k->entries == UINT32_MAX) {
                xferctl_say("too many entries in one tree");
                k->exit = XFERCTL_EXIT_USAGE;
                return -E2BIG;
        }
        return 0;
}

static int sendcmd_count_skip(void *userdata, const char *path, mode_t mode, int err)
{
        struct sendcmd_walk *k = userdata;
        _cleanup_(freep) char *shown = esc_term_dup(path);

        if (err == 0) {
                xferctl_say("skipping %s: it is %s", shown ? shown : "?", walk_type_str(mode));
                k->sc->left_out++;
                return 0;
        }
        if (k->sc->keep_going) {
                xferctl_say("cannot read %s: %s; not sent", shown ? shown : "?", strerror(-err));
                k->sc->unreadable++;
                return 0;
        }
        /* Without --continue-on-error the job stops before it starts. */
        xferctl_say("cannot read %s: %s", shown ? shown : "?", strerror(-err));
        k->exit = XFERCTL_EXIT_FAILED;
        return err;
}

/* @path's last component, trailing slashes aside, into @buf. */
static void sendcmd_src_leaf(const char *path, char *buf, size_t len)
{
        size_t n = strlen(path);
        char tmp[PATH_MAX];

        while (n > 1 && path[n - 1] == '/')
                n--;
        snprintf(tmp, sizeof(tmp), "%.*s", (int)MIN(n, sizeof(tmp) - 1), path);
        snprintf(buf, len, "%s", name_leaf(tmp));
}

/* Source @i of several: its leaf, where its walk's paths start. Returns
 * -1, or an exit code when the receiver could not take its name. */
static int sendcmd_src_begin(struct sendcmd *sc, unsigned int i)
{
        enum name_verdict v;

        sc->path = sc->paths[i];
        sc->root_len = strlen(sc->path);
        if (!sc->multi)
                return -1;
        sendcmd_src_leaf(sc->path, sc->src_leaf, sizeof(sc->src_leaf));
        v = name_check(sc->src_leaf, strlen(sc->src_leaf));
        if (v != NAME_OK) {
                _cleanup_(freep) char *shown = esc_term_dup(sc->path), *dest = esc_term_dup(sc->dest);

                xferctl_say("cannot send %s into %s: its name: %s", shown ? shown : "?", dest ? dest : "?",
                            name_verdict_str(v));
                return XFERCTL_EXIT_USAGE;
        }
        for (unsigned int j = 0; j < i; j++) {
                char other[CTL_NAME_MAX + 1];

                sendcmd_src_leaf(sc->paths[j], other, sizeof(other));
                if (strcmp(other, sc->src_leaf) == 0) {
                        _cleanup_(freep) char *shown = esc_term_dup(sc->src_leaf);

                        xferctl_say("send: two sources named %s would land as one in %s", shown ? shown : "?",
                                    sc->dest);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        return -1;
}

/* -r: DEST, then the tree counted (entries, bytes) for the SUBMIT; with
 * several sources, each beneath DEST. Returns -1 or an exit code. */
int sendcmd_tree_prepare(struct sendcmd *sc)
{
        /* The feed walks with the same rules: both leave out the same entries. */
        const struct walk_ops ops = { .entry = sendcmd_count_entry, .skip = sendcmd_count_skip,
                                      .no_open = true, .filters = sc->filters };
        _cleanup_(hardlinks_freep) struct hardlinks *hard = sc->no_hard_links ? NULL : hardlinks_new();
        struct sendcmd_walk k = { .sc = sc, .exit = -1, .hard = hard };
        enum name_verdict v;
        int r;

        if (!sc->no_hard_links && !hard) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        sc->multi = sc->npaths > 1 || sc->into;
        /* DEST is the directory's last component by default. */
        if (sc->to)
                snprintf(sc->dest, sizeof(sc->dest), "%s", sc->to);
        else
                sendcmd_src_leaf(sc->path, sc->dest, sizeof(sc->dest));
        v = name_path_check(sc->dest, strlen(sc->dest), NULL);
        if (v != NAME_OK || (sc->to && strlen(sc->to) >= sizeof(sc->dest))) {
                _cleanup_(freep) char *bad = esc_term_dup(sc->to ? sc->to : sc->dest);

                xferctl_say("destination '%s': %s (a relative path beneath the receiver's incoming "
                            "directory; choose one with --to DEST)", bad ? bad : "?",
                            v != NAME_OK ? name_verdict_str(v) : "too long");
                return XFERCTL_EXIT_USAGE;
        }
        /* With several sources, DEST is a directory of their own, with the
         * mode mkdir would give it here (its mtime: when it is made). */
        if (sc->multi) {
                mode_t mask = umask(0);

                umask(mask);
                sc->submit.mode = 0777 & ~(uint32_t)mask;
                k.entries = 1;
        }
        for (unsigned int i = 0; i < sc->npaths; i++) {
                r = sendcmd_src_begin(sc, i);
                if (r >= 0)
                        return r;
                r = walk_tree(AT_FDCWD, sc->path, &ops, &k);
                if (k.exit >= 0)
                        return k.exit;
                if (r < 0) {
                        _cleanup_(freep) char *shown = esc_term_dup(sc->path);

                        xferctl_say("cannot send %s: %s", shown ? shown : "?", strerror(-r));
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (k.entries < 2) {
                xferctl_say("cannot send %s: no entry in it can be sent%s", sc->path_shown,
                            sc->filters ? " (after --exclude and --include)" : "");
                return XFERCTL_EXIT_USAGE;
        }
        /* What the receiver has of an entry not sent here would go with
         * --delete, as if the source had lost it: nothing is deleted
         * then (rsync's rule after an I/O error), and the exit is 23. */
        if ((sc->submit.flags & CTL_SUBMIT_DELETE) && (sc->left_out || sc->unreadable)) {
                _cleanup_(freep) char *dest = esc_term_dup(sc->dest);

                xferctl_say("--delete: %u %s not sent (above), and the receiver would remove its copy: "
                            "nothing in %s is deleted", sc->left_out + sc->unreadable,
                            sc->left_out + sc->unreadable == 1 ? "entry is" : "entries are", dest ? dest : "?");
                sc->submit.flags &= (uint16_t)~(CTL_SUBMIT_DELETE | CTL_SUBMIT_RULES);
                sc->submit.rules_len = 0;
        }
        sc->submit.flags |= CTL_SUBMIT_TREE;
        sc->submit.files = k.entries;
        sc->submit.job_bytes = k.bytes;
        return -1;
}

/* -n -i: a link's target, for its line (best effort: without, none shown). */
static void sendcmd_dry_link_add(struct sendcmd *sc, const char *name, const char *target)
{
        struct sendcmd_dry_link *v = realloc(sc->dry_links, (sc->ndry_links + 1) * sizeof(*v));

        if (!v)
                return;
        sc->dry_links = v;
        v[sc->ndry_links].name = strdup(name);
        v[sc->ndry_links].target = strdup(target);
        if (v[sc->ndry_links].name && v[sc->ndry_links].target) {
                sc->ndry_links++;
                return;
        }
        free(v[sc->ndry_links].name);
        free(v[sc->ndry_links].target);
}

static int sendcmd_feed_entry(void *userdata, struct walk_entry *e)
{
        struct sendcmd_walk *k = userdata;
        struct sendcmd *sc = k->sc;
        /* Not zeroed whole: only .file is encoded, and all 32 KiB a file
         * cost more than the rest of its record. */
        struct ctl_msg m;
        _cleanup_(closep) int link_fd = -1;
        const char *first;
        int r;

        m.type = CTL_FILE;
        m.file = (struct ctl_file){ .id = sc->id };

        /* DEST came with the SUBMIT. */
        if (e->kind == WALK_DIR_END || (e->depth == 0 && !sc->multi) ||
            (e->kind == WALK_SYMLINK && !sendcmd_link_wanted(sc, e, false)))
                return 0;
        if (!sendcmd_tree_ok(sc, e, m.file.name, sizeof(m.file.name)))
                return e->kind == WALK_DIR ? WALK_SKIP : 0;     /* said when counting */
        /* The receiver keeps the mode (less setuid and setgid) and the mtime
         * (a directory's once everything in it is made). */
        m.file.mode = (uint32_t)(e->st.st_mode & 07777);
        m.file.mtime_ns = walk_mtime_ns(&e->st);
        r = sendcmd_hard_link(k, e, m.file.name, &first);
        if (r < 0)
                return r;
        if (e->kind == WALK_DIR) {
                m.file.flags = CTL_FILE_DIR;
        } else if (e->kind == WALK_SYMLINK || first) {
                /* A symlink's target goes as its data, in a file of its
                 * own; a hard link's, the name of its file. */
                const char *data = first ? first : e->target;
                size_t len = strlen(data);

                errno = EIO;
                link_fd = memfd_create("xferctl-link", MFD_CLOEXEC);
                if (link_fd < 0 || write(link_fd, data, len) != (ssize_t)len) {
                        xferctl_say("cannot hand a link over: %s", strerror(errno));
                        k->exit = XFERCTL_EXIT_FAILED;
                        return -EIO;
                }
                m.file.flags = first ? CTL_FILE_LINK | CTL_FILE_HARD : CTL_FILE_LINK;
                if (sc->itemize)
                        sendcmd_dry_link_add(sc, m.file.name, data);
                m.file.size = len;
                m.file.mode = 0;
                m.file.mtime_ns = first ? 0 : m.file.mtime_ns;
        } else {
                m.file.size = (uint64_t)e->st.st_size;
        }
        /* -X, -A: a directory's, a file's (a hard link's are its first name's). */
        if (e->attr_fd >= 0 && !first) {
                sendcmd_attrs_read(sc, e->attr_fd, e->path, m.file.xattrs, &m.file.xattrs_len);
                if (m.file.xattrs_len)
                        m.file.flags |= CTL_FILE_XATTRS;
        }
        /* The batch takes the descriptor: it goes with up to
         * CTL_BATCH_MAX others in one system call. */
        if (e->kind == WALK_FILE && !first) {
                r = ctl_batch_add(k->batch, &m, e->fd);
                e->fd = -1;
        } else {
                r = ctl_batch_add(k->batch, &m, link_fd);
                link_fd = -1;
        }
        if (r >= 0) {
                k->entries++;
                return 0;
        }
        sendcmd_feed_closed(sc->feed_sock, r);
        sc->feed_closed = true;
        return r;
}

static int sendcmd_feed_skip(void *userdata, const char *path, mode_t mode, int err)
{
        struct sendcmd_walk *k = userdata;

        if (err == 0 || k->sc->keep_going)
                return 0;       /* said when counting */
        k->exit = XFERCTL_EXIT_FAILED;
        return sendcmd_count_skip(userdata, path, mode, err);
}

/* -r: walk again, handing every entry over in order on @sock. -1 or an exit code. */
int sendcmd_feed_tree(struct sendcmd *sc, int sock)
{
        const struct walk_ops ops = { .entry = sendcmd_feed_entry, .skip = sendcmd_feed_skip,
                                      .filters = sc->filters };
        _cleanup_(freep) struct ctl_batch *batch = malloc(sizeof(*batch));
        _cleanup_(hardlinks_freep) struct hardlinks *hard = sc->no_hard_links ? NULL : hardlinks_new();
        struct sendcmd_walk k = { .sc = sc, .exit = -1, .entries = 1, .batch = batch, .hard = hard };
        int r;

        if (!batch || (!sc->no_hard_links && !hard)) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        ctl_batch_init(batch, sock);
        sc->feed_sock = sock;
        for (unsigned int i = 0; i < sc->npaths; i++) {
                /* Checked when counting. */
                (void)sendcmd_src_begin(sc, i);
                r = walk_tree(AT_FDCWD, sc->path, &ops, &k);
                /* What is still held goes before anything is decided on it. */
                if (!sc->feed_closed && k.exit < 0 && r >= 0 && (r = ctl_batch_flush(batch)) < 0) {
                        sendcmd_feed_closed(sock, r);
                        sc->feed_closed = true;
                }
                ctl_batch_drop(batch);
                /* The daemon ended it: the job's report follows. */
                if (sc->feed_closed)
                        return -1;
                if (k.exit >= 0 || r < 0) {
                        xferctl_say("job %" PRIu64 " is cancelled", sc->id);
                        return k.exit >= 0 ? k.exit : XFERCTL_EXIT_FAILED;
                }
        }
        /* Fewer than counted: the job would wait for ever; closing cancels it. */
        if (k.entries != sc->submit.files) {
                xferctl_say("%s changed while being sent (%u entries counted, then %u); job %" PRIu64
                            " is cancelled", sc->path_shown, sc->submit.files, k.entries, sc->id);
                return XFERCTL_EXIT_FAILED;
        }
        return -1;
}
