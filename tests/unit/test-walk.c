/* xferctl's walk of a tree (client/walk.c), on a real temporary tree: what
 * it reports, in which order, what it skips and never opens or follows,
 * and what --exclude/--include rules (client/filter.c) leave out of it. */

#include <errno.h>
#include <grp.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tap.h"
#include "walk.h"

static char root[] = "/tmp/rdmaxfer-test-walk.XXXXXX";

/* What the walk said, one line each: "D a/b", "E a/b", "F a/x 3", "L l -> t", "S p mode err". */
static char said[64][512];
static int nsaid;
static int open_fds_in_callbacks;
static int stop_at = -1;

static int on_entry(void *userdata, struct walk_entry *e)
{
        char *line;

        (void)userdata;
        if (stop_at >= 0 && nsaid >= stop_at)
                return -ECANCELED;
        if (nsaid >= 64)
                return -E2BIG;
        line = said[nsaid++];
        switch (e->kind) {
        case WALK_DIR:
                snprintf(line, 512, "D %s %u", e->path, e->depth);
                break;
        case WALK_DIR_END:
                snprintf(line, 512, "E %s", e->path);
                break;
        case WALK_FILE: {
                char buf[16] = "";
                ssize_t n = read(e->fd, buf, sizeof(buf) - 1);

                open_fds_in_callbacks++;
                snprintf(line, 512, "F %s %lld %s", e->path, (long long)e->st.st_size,
                         n > 0 ? buf : "-");
                break;
        }
        case WALK_SYMLINK:
                snprintf(line, 512, "L %s -> %s", e->path, e->target);
                break;
        }
        return 0;
}

static int on_entry_skip_a(void *userdata, struct walk_entry *e)
{
        int r = on_entry(userdata, e);

        return r == 0 && e->kind == WALK_DIR && !strcmp(e->name, "a") ? WALK_SKIP : r;
}

static int on_skip(void *userdata, const char *path, mode_t mode, int err)
{
        (void)userdata;
        if (nsaid >= 64)
                return -E2BIG;
        snprintf(said[nsaid++], 512, "S %s %s %d", path, walk_type_str(mode), err);
        return 0;
}

static const struct walk_ops ops = { .entry = on_entry, .skip = on_skip };

/* Counting (no_open): a file's entry has no descriptor, and its lstat's size. */
static int on_entry_no_open(void *userdata, struct walk_entry *e)
{
        if (e->kind == WALK_FILE) {
                if (nsaid >= 64)
                        return -E2BIG;
                snprintf(said[nsaid++], 512, "F %s %lld fd %d", e->path, (long long)e->st.st_size, e->fd);
                return 0;
        }
        return on_entry(userdata, e);
}

static int on_entry_count(void *userdata, struct walk_entry *e)
{
        (void)e;
        ++*(int *)userdata;
        return 0;
}

/* Both walks of xferctl send -r, reduced to "K path" lines (K: D, E, F, L,
 * or S for a skip), to see that they leave out the same entries. */
static char seen[2][64][512];
static int nseen[2];

static int on_seen(void *userdata, struct walk_entry *e)
{
        int *w = userdata;

        if (nseen[*w] >= 64)
                return -E2BIG;
        snprintf(seen[*w][nseen[*w]++], 512, "%c %s", "DEFL"[e->kind], e->path);
        return 0;
}

static int on_seen_skip(void *userdata, const char *path, mode_t mode, int err)
{
        int *w = userdata;

        if (nseen[*w] >= 64)
                return -E2BIG;
        snprintf(seen[*w][nseen[*w]++], 512, "S %s", path);
        return 0;
}

static int seen_find(int w, const char *line)
{
        for (int i = 0; i < nseen[w]; i++)
                if (!strcmp(seen[w][i], line))
                        return i;
        return -1;
}

static int seen_find_prefix(int w, const char *prefix)
{
        for (int i = 0; i < nseen[w]; i++)
                if (!strncmp(seen[w][i], prefix, strlen(prefix)))
                        return i;
        return -1;
}

/* Walk @name both ways (counting: no_open; feeding: files opened) with
 * @filters, into seen[0] and seen[1]; whether both completed. */
static bool walk_both(int rootfd, const char *name, const struct filter_list *filters)
{
        struct walk_ops count = { .entry = on_seen, .skip = on_seen_skip, .no_open = true, .filters = filters };
        struct walk_ops feed = { .entry = on_seen, .skip = on_seen_skip, .filters = filters };
        int w0 = 0, w1 = 1;

        nseen[0] = nseen[1] = 0;
        return walk_tree(rootfd, name, &count, &w0) == 0 && walk_tree(rootfd, name, &feed, &w1) == 0;
}

static bool walks_agree(void)
{
        if (nseen[0] != nseen[1])
                return false;
        for (int i = 0; i < nseen[0]; i++)
                if (strcmp(seen[0][i], seen[1][i]))
                        return false;
        return true;
}

static int find(const char *prefix)
{
        for (int i = 0; i < nsaid; i++)
                if (!strncmp(said[i], prefix, strlen(prefix)))
                        return i;
        return -1;
}

static int find_eq(const char *line)
{
        for (int i = 0; i < nsaid; i++)
                if (!strcmp(said[i], line))
                        return i;
        return -1;
}

static void put(const char *rel, const char *content)
{
        char p[512];
        int fd;

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || (content && write(fd, content, strlen(content)) < 0))
                abort();
        close(fd);
}

static void mkd(const char *rel)
{
        char p[512];

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        if (mkdir(p, 0755) < 0)
                abort();
}

/* As root: walk "tree" in a child that is nobody (uid and gid 65534, no
 * groups), so a mode-000 file is unreadable as it is to a user. 0 when
 * the walk reported it skipped with EACCES, else what went wrong. */
static int walk_as_nobody(int rootfd, const struct walk_ops *wops)
{
        int status;
        pid_t pid;

        /* mkdtemp's 0700: nobody may look up "tree" in it without search permission. */
        if (fchmod(rootfd, 0711) < 0)
                return -errno;
        fflush(stdout);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                nsaid = 0;
                if (walk_tree(rootfd, "tree", wops, NULL) < 0)
                        _exit(3);
                _exit(find("S tree/secret a regular file -13") >= 0 ? 0 : 1);
        }
        if (waitpid(pid, &status, 0) < 0 || fchmod(rootfd, 0700) < 0)
                return -errno;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
        char p[512], q[512];
        int rootfd, r, sock;
        struct sockaddr_un sun = { .sun_family = AF_UNIX };

        if (!mkdtemp(root)) {
                printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
                return 0;
        }
        /* tree/ a/ b/ deep.txt, empty-dir/, empty.bin, données été.txt,
         * link-in -> a/b/deep.txt, link-out -> /etc/passwd, fifo, sock,
         * secret (mode 000). */
        mkd("tree");
        mkd("tree/a");
        mkd("tree/a/b");
        put("tree/a/b/deep.txt", "deep");
        mkd("tree/empty-dir");
        put("tree/empty.bin", NULL);
        put("tree/données été.txt", "utf8");
        snprintf(p, sizeof(p), "%s/tree/link-in", root);
        ok(symlink("a/b/deep.txt", p) == 0, "a symlink within the tree");
        snprintf(p, sizeof(p), "%s/tree/link-out", root);
        ok(symlink("/etc/passwd", p) == 0, "a symlink out of it");
        snprintf(p, sizeof(p), "%s/tree/fifo", root);
        ok(mkfifo(p, 0644) == 0, "a FIFO");
        snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/tree/sock", root);
        sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ok(sock >= 0 && bind(sock, (struct sockaddr *)&sun, sizeof(sun)) == 0, "a socket");
        put("tree/secret", "no");
        snprintf(p, sizeof(p), "%s/tree/secret", root);
        chmod(p, 0);

        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = walk_tree(rootfd, "tree", &ops, NULL);
        is_int(r, 0, "the walk completes");
        for (int i = 0; i < nsaid; i++)
                diag("%s", said[i]);

        is_int(find("D tree 0"), 0, "the root directory comes first, at depth 0");
        ok(find_eq("E tree") == nsaid - 1, "and its end last");
        ok(find("D tree/a 1") >= 0 && find("D tree/a/b 2") >= 0, "nested directories, with their depth");
        ok(find("D tree/a 1") < find("D tree/a/b 2") && find("D tree/a/b 2") < find("F tree/a/b/deep.txt") &&
           find("F tree/a/b/deep.txt") < find_eq("E tree/a/b") && find_eq("E tree/a/b") < find_eq("E tree/a"),
           "depth first: a directory, its entries, its end, then its parent's end");
        ok(find("F tree/a/b/deep.txt 4 deep") >= 0, "a file: its size, and it is open for reading");
        ok(find("D tree/empty-dir 1") >= 0 && find_eq("E tree/empty-dir") == find("D tree/empty-dir 1") + 1,
           "an empty directory: its start and end");
        ok(find("F tree/empty.bin 0 -") >= 0, "an empty file");
        ok(find("F tree/données été.txt 4 utf8") >= 0, "a UTF-8 name");
        ok(find("L tree/link-in -> a/b/deep.txt") >= 0, "a symlink within: read, not followed");
        ok(find("L tree/link-out -> /etc/passwd") >= 0, "a symlink out: read, not followed");
        ok(find("F tree/link") < 0, "no symlink was opened as a file");
        ok(find("S tree/fifo a FIFO 0") >= 0, "the FIFO is skipped, never opened (the walk did not hang)");
        ok(find("S tree/sock a socket 0") >= 0, "the socket is skipped");
        if (geteuid() == 0) {
                /* root reads a mode-000 file (CAP_DAC_OVERRIDE): the same walk as nobody. */
                is_int(walk_as_nobody(rootfd, &ops), 0, "an unreadable file (walked as nobody): skipped with EACCES");
        } else {
                ok(find("S tree/secret a regular file -13") >= 0, "an unreadable file: skipped with EACCES");
        }
        is_int(open_fds_in_callbacks, geteuid() == 0 ? 4 : 3, "files handed over open");

        /* A callback stops the walk, and every descriptor is closed. */
        nsaid = 0;
        stop_at = 3;
        is_int(walk_tree(rootfd, "tree", &ops, NULL), -ECANCELED, "a callback's error stops the walk");
        stop_at = -1;
        nsaid = 0;
        is_int(walk_tree(rootfd, "tree", &(struct walk_ops){ .entry = on_entry_skip_a, .skip = on_skip }, NULL),
               0, "a walk that skips a directory");
        ok(find("D tree/a 1") >= 0 && find("D tree/a/b") < 0 && find_eq("E tree/a") < 0 && find_eq("E tree") == nsaid - 1,
           "WALK_SKIP: the directory is reported, its entries and end are not, the rest goes on");
        nsaid = 0;
        is_int(walk_tree(rootfd, "none", &ops, NULL), 0, "a missing root is reported as a skip");
        ok(find("S none") == 0 && strstr(said[0], "-2"), "with ENOENT");
        nsaid = 0;
        is_int(walk_tree(rootfd, "tree/a/b/deep.txt", &ops, NULL), 0, "a single file walks as itself");
        ok(nsaid == 1 && find("F tree/a/b/deep.txt") == 0, "one entry");

        /* Counting: the same entries, no file opened; an unreadable one skipped. */
        nsaid = 0;
        open_fds_in_callbacks = 0;
        is_int(walk_tree(rootfd, "tree", &(struct walk_ops){ .entry = on_entry_no_open, .skip = on_skip,
                                                              .no_open = true }, NULL),
               0, "a counting walk completes");
        ok(find_eq("F tree/a/b/deep.txt 4 fd -1") >= 0 && find_eq("F tree/empty.bin 0 fd -1") >= 0,
           "counting: files with their sizes, none opened");
        ok(find("D tree/a 1") >= 0 && find("L tree/link-in -> a/b/deep.txt") >= 0 &&
           find("S tree/fifo a FIFO 0") >= 0, "counting: directories, symlinks and skips as ever");
        if (geteuid() == 0)
                ok(find_eq("F tree/secret 2 fd -1") >= 0, "counting, as root: the mode-000 file is readable");
        else
                ok(find("S tree/secret a regular file -13") >= 0, "counting: an unreadable file skipped with EACCES");

        /* Filters: what they exclude is never opened nor reported, a
         * directory not walked into; both walks leave out the same. */
        {
                struct filter_list fl = FILTER_LIST_NULL;
                static const char *const ex[] = { "a/", "fifo", "sock", "secret", "link-o*", "locked/",
                                                  "+ keep.log", "*.log" };
                char err[256];
                bool added = true;

                mkd("tree/locked");
                put("tree/locked/inside", "x");
                put("tree/keep.log", "k");
                put("tree/drop.log", "d");
                snprintf(p, sizeof(p), "%s/tree/locked", root);
                chmod(p, 0);
                for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++)
                        added &= filter_add(&fl, FILTER_EXCLUDE, ex[i], err, sizeof(err)) == 0;
                ok(added, "the rules");
                ok(walk_both(rootfd, "tree", &fl), "both walks complete with rules");
                for (int i = 0; i < nseen[1]; i++)
                        diag("%s", seen[1][i]);
                ok(walks_agree(), "the counting and the feeding walk see the same entries");
                ok(seen_find(1, "D tree") == 0 && seen_find(1, "E tree") == nseen[1] - 1, "the root is walked");
                ok(seen_find_prefix(1, "D tree/a") < 0 && seen_find_prefix(1, "F tree/a/") < 0 &&
                   seen_find_prefix(1, "E tree/a") < 0, "an excluded directory: neither it nor its entries");
                ok(seen_find_prefix(1, "S tree/fifo") < 0 && seen_find_prefix(1, "S tree/sock") < 0,
                   "an excluded FIFO and socket: not even skipped");
                ok(seen_find_prefix(1, "S tree/secret") < 0 && seen_find_prefix(1, "F tree/secret") < 0,
                   "an excluded unreadable file: not reported");
                ok(seen_find_prefix(1, "S tree/locked") < 0 && seen_find_prefix(1, "D tree/locked") < 0,
                   "an excluded directory nobody may open: never opened");
                ok(seen_find(1, "L tree/link-in") >= 0 && seen_find(1, "L tree/link-out") < 0,
                   "a symlink by its name: link-in walked, link-out not");
                ok(seen_find(1, "F tree/keep.log") >= 0 && seen_find(1, "F tree/drop.log") < 0,
                   "'+ keep.log' before '*.log': the first that matches decides");
                ok(seen_find(1, "D tree/empty-dir") >= 0 && seen_find(1, "F tree/empty.bin") >= 0 &&
                   seen_find(1, "F tree/données été.txt") >= 0, "the rest is walked as ever");
                filter_list_deinit(&fl);

                /* Anchored at the root the walk was given, trailing slashes and all. */
                ok(filter_add(&fl, FILTER_EXCLUDE, "/empty.bin", err, sizeof(err)) == 0 &&
                   filter_add(&fl, FILTER_EXCLUDE, "/b/", err, sizeof(err)) == 0, "anchored rules");
                ok(walk_both(rootfd, "tree//", &fl) && walks_agree(), "walking 'tree//'");
                ok(seen_find(1, "F tree///empty.bin") < 0 && seen_find(1, "D tree///a") >= 0 &&
                   seen_find(1, "D tree///a/b") >= 0, "'/empty.bin' is the root's; '/b/' is not a/b");
                ok(walk_both(rootfd, "tree/a", &fl) && walks_agree() && seen_find(1, "D tree/a/b") < 0,
                   "walking tree/a, '/b/' is its b");
                filter_list_deinit(&fl);

                /* The root itself is never left out. */
                ok(filter_add(&fl, FILTER_EXCLUDE, "*", err, sizeof(err)) == 0, "'*'");
                ok(walk_both(rootfd, "tree", &fl) && nseen[1] == 2 && seen_find(1, "D tree") == 0 &&
                   seen_find(1, "E tree") == 1, "leaves the root alone, empty");
                ok(walk_both(rootfd, "tree/keep.log", &fl) && nseen[1] == 1 && seen_find(1, "F tree/keep.log") == 0,
                   "a single file given as the root is walked");
                filter_list_deinit(&fl);

                chmod(p, 0755);
                snprintf(p, sizeof(p), "rm -rf '%s/tree/locked' '%s/tree/keep.log' '%s/tree/drop.log'", root, root,
                         root);
                if (system(p) != 0)
                        diag("could not clean up");
        }

        /* Too deep: refused, not a stack overflow. */
        strcpy(q, "tree/d");
        mkd("tree/d");
        for (int i = 1; i <= WALK_DEPTH_MAX; i++) {
                strcat(q, "/d");
                mkd(q);
        }
        nsaid = 0;
        stop_at = -1;
        {
                int n = 0;

                r = walk_tree(rootfd, "tree/d", &(struct walk_ops){ .entry = on_entry_count, .skip = on_skip },
                              &n);
                is_int(r, -ELOOP, "a tree deeper than %d levels is refused", WALK_DEPTH_MAX);
                is_int(n, WALK_DEPTH_MAX, "after the levels it may walk");
        }

        close(sock);
        close(rootfd);
        snprintf(p, sizeof(p), "rm -rf '%s'", root);
        if (system(p) != 0)
                diag("could not remove %s", root);
        return done_testing();
}
