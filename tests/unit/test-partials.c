/* daemon/engine/recv/partials.c: a partial stored, found, refused and
 * removed on a real file system, as the receiver's worker calls do it. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partials.h"
#include "tap.h"

static char dir[] = "/tmp/test-partials-XXXXXX";

static struct partial_rec sample(void)
{
        struct partial_rec r;

        memset(&r, 0, sizeof(r));
        r.peer[10] = r.peer[11] = 0xff;
        r.peer[15] = 7;
        memset(r.source, 0x53, sizeof(r.source));
        r.transfer_id = 9;
        r.size = 3 * 65536 + 100;
        r.chunk_size = 65536;
        r.lanes = 1;
        r.kept[0] = 2;
        r.created = r.updated = 1000;
        snprintf(r.dest, sizeof(r.dest), "x.bin");
        return r;
}

static void job_for(struct partial_job *j, int dirfd, const struct partial_rec *r)
{
        *j = PARTIAL_JOB_NULL;
        j->dirfd = dirfd;
        j->rec = *r;
        partial_key(r, j->key);
        memcpy(j->offer.peer, r->peer, sizeof(j->offer.peer));
        memcpy(j->offer.key_id, r->key_id, sizeof(j->offer.key_id));
        memcpy(j->offer.source, r->source, sizeof(j->offer.source));
        j->offer.size = r->size;
        j->offer.chunk_size = r->chunk_size;
        j->offer.dest = "x.bin";
}

/* Another nameless file: one linked and unlinked again cannot be linked anew. */
static int new_tmp(int fd, char proc[64])
{
        close(fd);
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0640);
        snprintf(proc, 64, "/proc/self/fd/%d", fd);
        return fd;
}

static int count(int dirfd, const char *key, const char *ext)
{
        char name[PARTIAL_FILE_MAX];

        snprintf(name, sizeof(name), "%s.%s", key, ext);
        return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int main(void)
{
        struct partial_rec r = sample();
        struct partial_job j;
        char proc[64];
        int dirfd, fd;
        uint8_t buf[100];

        if (!mkdtemp(dir))
                return 1;
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* The transfer's nameless file, as recv-file.c makes it. */
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0640);
        if (dirfd < 0 || fd < 0) {
                diag("no O_TMPFILE here: %m");
                plan(0);
                return done_testing();
        }
        ok(ftruncate(fd, (off_t)r.size) == 0 && pwrite(fd, "kept", 4, 0) == 4, "a nameless file of the size");
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);

        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_NONE, "nothing to find at first");
        j.link_from = proc;
        is_int(partials_store(&j), 0, "first checkpoint: link and record");
        ok(count(dirfd, j.key, "data") && count(dirfd, j.key, "rec") && !count(dirfd, j.key, "tmp"),
           "KEY.data and KEY.rec, no temporary left");
        r.kept[0] = 3;
        job_for(&j, dirfd, &r);
        is_int(partials_store(&j), 0, "a later checkpoint: the record only");

        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_RESUME, "the same transfer is found");
        ok(j.data_fd >= 0 && j.rec.kept[0] == 3 && j.why == NULL, "with its data open and the last record");
        ok(pread(j.data_fd, buf, 4, 0) == 4 && memcmp(buf, "kept", 4) == 0, "the data is the transfer's file");
        close(j.data_fd);

        /* Issue 32 M2: attempts that resume it and bring not a byte more
         * are counted; at PARTIAL_IDLE_MAX it is dropped, sent again whole. */
        r.idle_resumes = PARTIAL_IDLE_MAX - 1;
        job_for(&j, dirfd, &r);
        is_int(partials_store(&j), 0, "stored after idle resumes");
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_RESUME, "%d idle resumes: still resumed", PARTIAL_IDLE_MAX - 1);
        close(j.data_fd);
        r.idle_resumes = PARTIAL_IDLE_MAX;
        job_for(&j, dirfd, &r);
        is_int(partials_store(&j), 0, "one more");
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_NONE, "%d: not resumed", PARTIAL_IDLE_MAX);
        ok(j.why && strstr(j.why, "without a byte more"), "and says why: %s", j.why ? j.why : "(null)");
        ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data"), "the partial is removed");
        r.idle_resumes = 0;
        fd = new_tmp(fd, proc);
        ok(ftruncate(fd, (off_t)r.size) == 0, "a nameless file of the size");
        job_for(&j, dirfd, &r);
        j.link_from = proc;
        is_int(partials_store(&j), 0, "(kept again, for what follows)");

        job_for(&j, dirfd, &r);
        j.offer.peer[15] = 8;
        is_int(partials_lookup(&j), PARTIALS_NONE, "another peer (same files by accident) finds nothing");
        ok(count(dirfd, j.key, "rec"), "and leaves it alone");

        job_for(&j, dirfd, &r);
        j.offer.source[0] ^= 1;
        is_int(partials_lookup(&j), PARTIALS_NONE, "a changed source is not resumed");
        ok(j.why && strstr(j.why, "source"), "and says why: %s", j.why ? j.why : "(null)");
        ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data"), "the stale partial is removed");

        /* Published (linked into place) before the record said so, the
         * daemon gone in between (issue 32 L3): the data is someone's
         * published file now, never written into by a resume. */
        fd = new_tmp(fd, proc);
        ok(ftruncate(fd, (off_t)r.size) == 0, "a nameless file of the size");
        job_for(&j, dirfd, &r);
        j.link_from = proc;
        is_int(partials_store(&j), 0, "a partial");
        {
                char name[PARTIAL_FILE_MAX];

                snprintf(name, sizeof(name), "%s.data", j.key);
                ok(linkat(dirfd, name, dirfd, "published.bin", 0) == 0, "its data linked into place");
        }
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_NONE, "then the same transfer does not resume it");
        ok(j.why && strstr(j.why, "linked elsewhere"), "and says why: %s", j.why ? j.why : "(null)");
        ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data") &&
           faccessat(dirfd, "published.bin", F_OK, AT_SYMLINK_NOFOLLOW) == 0,
           "the partial goes, the published file stays");
        ok(unlinkat(dirfd, "published.bin", 0) == 0, "(cleaned up)");

        /* A chain's partial (no peer in its key, recv_partial_identity):
         * any node's offer reaches it, so another transfer's offer under
         * its name leaves it alone (issue 32 L1); its own still resumes. */
        {
                struct partial_rec c = sample();

                memset(c.peer, 0, sizeof(c.peer));
                fd = new_tmp(fd, proc);
                ok(ftruncate(fd, (off_t)c.size) == 0, "its nameless file, of the size");
                job_for(&j, dirfd, &c);
                j.link_from = proc;
                is_int(partials_store(&j), 0, "a chain's partial");
                job_for(&j, dirfd, &c);
                j.offer.source[0] ^= 1;
                is_int(partials_lookup(&j), PARTIALS_HELD, "another transfer's offer under its name: held");
                ok(count(dirfd, j.key, "rec") && count(dirfd, j.key, "data"), "the chain's partial is still there");
                ok(j.why && strstr(j.why, "expires"), "and the offer is told why: %s", j.why ? j.why : "(null)");
                job_for(&j, dirfd, &c);
                j.offer.size++;
                is_int(partials_lookup(&j), PARTIALS_HELD, "another size under its name: held too");
                job_for(&j, dirfd, &c);
                is_int(partials_lookup(&j), PARTIALS_RESUME, "the chain's own transfer resumes it");
                close(j.data_fd);
                is_int(partials_remove(&j), 0, "removed by its own");
        }

        /* Published: no data, the lanes' digests. */
        r.flags = PARTIAL_PUBLISHED;
        memset(r.digest[0], 0xd1, WIRE_DIGEST_SIZE);
        fd = new_tmp(fd, proc);
        job_for(&j, dirfd, &r);
        j.link_from = proc;
        is_int(partials_store(&j), 0, "a partial again");
        job_for(&j, dirfd, &r);
        j.unlink_data = true;
        is_int(partials_store(&j), 0, "then its published record");
        ok(count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data"), "the data file is gone");
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_PUBLISHED, "a retry finds it published");
        ok(j.rec.digest[0][0] == 0xd1 && j.rec.transfer_id == 9, "with the digests and the transfer id");

        /* A record without its data is no partial. */
        r.flags = 0;
        job_for(&j, dirfd, &r);
        is_int(partials_store(&j), 0, "a record whose data went missing");
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_NONE, "is not resumed");
        ok(!count(dirfd, j.key, "rec"), "and is removed");

        /* A damaged record. */
        fd = new_tmp(fd, proc);
        job_for(&j, dirfd, &r);
        j.link_from = proc;
        is_int(partials_store(&j), 0, "a partial");
        {
                char name[PARTIAL_FILE_MAX];
                int rfd;

                snprintf(name, sizeof(name), "%s.rec", j.key);
                rfd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
                ok(rfd >= 0 && pwrite(rfd, "X", 1, 300) == 1, "whose record is damaged");
                close(rfd);
        }
        job_for(&j, dirfd, &r);
        is_int(partials_lookup(&j), PARTIALS_NONE, "is not resumed");
        ok(j.why != NULL && !count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data"), "and goes, data too");

        fd = new_tmp(fd, proc);
        job_for(&j, dirfd, &r);
        j.link_from = proc;
        is_int(partials_store(&j), 0, "a partial");
        is_int(partials_remove(&j), 0, "removed");
        ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "data"), "both files gone");

        /* A kept tree: KEY.tree, a directory, and its record, of this boot only. */
        {
                struct partial_rec t = sample();
                char name[PARTIAL_FILE_MAX];
                struct stat st;
                int tfd;

                t.flags = PARTIAL_TREE;
                t.kept[0] = 0;
                t.size = 5000;
                snprintf(t.dest, sizeof(t.dest), "runs/set");
                t.tree = (struct partial_tree){ .job_files = 40, .entries = 12, .offered = 3000, .published = 12 };
                memset(t.tree.boot_id, 0xb1, sizeof(t.tree.boot_id));
                job_for(&j, dirfd, &t);
                j.offer.dest = "runs/set";
                j.offer.job_files = 40;
                j.nosync = true;
                snprintf(name, sizeof(name), "%s.tree", j.key);
                ok(mkdirat(dirfd, name, 0700) == 0, "a kept tree: its directory (as recv-partial-tree.c makes it)");
                is_int(partials_store(&j), 0, "and its record");
                ok(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
                   (st.st_mode & 07777) == 0700, "KEY.tree is a private directory");
                tfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ok(tfd >= 0 && mkdirat(tfd, "set", 0755) == 0 && mkdirat(tfd, "set/a", 0755) == 0 &&
                   close(openat(tfd, "set/a/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0640)) == 0,
                   "entries staged in it");
                close(tfd);

                job_for(&j, dirfd, &t);
                j.offer.dest = "runs/set";
                j.offer.job_files = 40;
                memset(j.boot_id, 0xb1, sizeof(j.boot_id));
                is_int(partials_lookup(&j), PARTIALS_RESUME, "the same job, the same boot: found");
                ok(j.data_fd >= 0 && fstat(j.data_fd, &st) == 0 && S_ISDIR(st.st_mode) && j.rec.tree.entries == 12,
                   "its staging directory open, 12 entries kept");
                close(j.data_fd);

                job_for(&j, dirfd, &t);
                j.offer.dest = "runs/set";
                j.offer.job_files = 40;
                memset(j.boot_id, 0xb2, sizeof(j.boot_id));
                is_int(partials_lookup(&j), PARTIALS_NONE, "after a reboot: not trusted");
                ok(j.why && strstr(j.why, "restarted"), "and says why: %s", j.why ? j.why : "(null)");
                ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "tree"), "record and staged tree removed");

                job_for(&j, dirfd, &t);
                j.nosync = true;
                ok(mkdirat(dirfd, name, 0700) == 0, "kept again");
                is_int(partials_store(&j), 0, "with a record");
                tfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ok(tfd >= 0 && mkdirat(tfd, "set", 0755) == 0, "with an entry");
                close(tfd);
                is_int(partials_remove(&j), 0, "removed");
                ok(!count(dirfd, j.key, "rec") && !count(dirfd, j.key, "tree"), "the whole staged tree with it");
        }

        close(fd);
        close(dirfd);
        rmdir(dir);
        return done_testing();
}
