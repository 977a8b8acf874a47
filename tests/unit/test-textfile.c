/*
 * The metrics file's writer (daemon/textfile.c): the atomic write itself
 * (temporary file beside it, mode 0644 whatever the umask, renamed over;
 * nothing left behind on failure), and the thread behind the mailbox.
 */

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "textfile.h"

static char dir[] = "/tmp/test-textfile-XXXXXX";

static char *slurp(const char *path)
{
        static char buf[4096];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return NULL;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static unsigned int entries(void)
{
        char cmd[PATH_MAX + 32];
        unsigned int n = 0;
        FILE *p;

        snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
        p = popen(cmd, "r");
        if (!p || fscanf(p, "%u", &n) != 1)
                abort();
        pclose(p);
        return n;
}

static void test_write(void)
{
        char path[PATH_MAX], tmp[PATH_MAX];
        const char *what = NULL;
        struct stat st;
        char *got;

        snprintf(path, sizeof(path), "%s/rdmaxferd.prom", dir);
        snprintf(tmp, sizeof(tmp), "%s/.rdmaxferd.prom.tmp", dir);
        umask(0077);
        is_int(textfile_write(path, "a 1\n", 4, &what), 0, "first write");
        got = slurp(path);
        ok(got && strcmp(got, "a 1\n") == 0, "the file holds the text");
        ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644, "mode 0644 despite umask 077 (%o)",
           (unsigned int)(st.st_mode & 07777));
        ok(access(tmp, F_OK) < 0, "no temporary file left");

        ino_t before = st.st_ino;
        is_int(textfile_write(path, "b 22\n", 5, &what), 0, "second write");
        got = slurp(path);
        ok(got && strcmp(got, "b 22\n") == 0, "replaced whole, not appended");
        ok(stat(path, &st) == 0 && st.st_ino != before, "a new file renamed over the old one");
        is_int(entries(), 1, "one file in the directory");

        /* A planted link under the temporary name is not followed. */
        char victim[PATH_MAX];
        snprintf(victim, sizeof(victim), "%s/victim", dir);
        if (symlink(victim, tmp) < 0)
                abort();
        is_int(textfile_write(path, "c 3\n", 4, &what), -ELOOP, "a link at the temporary name: -ELOOP");
        is_str(what, "creating", "while creating");
        ok(access(victim, F_OK) < 0, "nothing written through it");
        unlink(tmp);

        /* A directory that is not there: nothing created, the step named. */
        char nodir[PATH_MAX];
        snprintf(nodir, sizeof(nodir), "%s/missing/x.prom", dir);
        is_int(textfile_write(nodir, "d\n", 2, &what), -ENOENT, "missing directory: -ENOENT");
        is_str(what, "creating", "while creating");

        /* Renaming onto a directory fails, and the temporary file goes. */
        char sub[PATH_MAX];
        snprintf(sub, sizeof(sub), "%s/sub", dir);
        if (mkdir(sub, 0755) < 0)
                abort();
        is_int(textfile_write(sub, "e\n", 2, &what), -EISDIR, "a directory in the way: -EISDIR");
        is_str(what, "renaming", "while renaming");
        is_int(entries(), 2, "the temporary file removed (the file and sub remain)");
        rmdir(sub);
        is_int(textfile_write("/", "f\n", 2, &what), -EINVAL, "no file name: -EINVAL");
        unlink(path);
}

/* Poll until the writer has produced @want in @path, up to 5 s. */
static bool wait_text(const char *path, const char *want)
{
        for (int i = 0; i < 500; i++) {
                const char *got = slurp(path);

                if (got && strcmp(got, want) == 0)
                        return true;
                nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
        }
        return false;
}

static void test_thread(void)
{
        char path[PATH_MAX], bad[PATH_MAX];
        struct textfile *t = NULL;
        const char *what;
        uint64_t busy;
        char big[TEXTFILE_TEXT_MAX + 1];

        snprintf(path, sizeof(path), "%s/m.prom", dir);
        snprintf(bad, sizeof(bad), "%s/missing/m.prom", dir);
        is_int(textfile_new(&t), 0, "a writer");
        is_int(textfile_state(t, &what, &busy), 0, "no write yet, no error");
        ok(busy == 0, "and not busy");
        is_int(textfile_post(t, path, "x 1\n", 4), 0, "post");
        ok(wait_text(path, "x 1\n"), "the thread wrote it");
        for (int i = 0; i < 50; i++) {
                char text[32];
                int n = snprintf(text, sizeof(text), "x %d\n", i);

                textfile_post(t, path, text, (size_t)n);
        }
        ok(wait_text(path, "x 49\n"), "after many posts, the last text is what stays");

        is_int(textfile_post(t, bad, "y\n", 2), 0, "post to a path that cannot be written");
        int r = 0;
        for (int i = 0; i < 500 && r == 0; i++) {
                r = textfile_state(t, &what, &busy);
                if (r == 0)
                        nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
        }
        is_int(r, -ENOENT, "the writer reports the failure");
        is_str(what, "creating", "and its step");
        is_int(textfile_post(t, path, "z\n", 2), 0, "a good path again");
        ok(wait_text(path, "z\n"), "written");
        for (int i = 0; i < 500 && textfile_state(t, &what, &busy) != 0; i++)
                nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
        is_int(textfile_state(t, &what, &busy), 0, "and the error is over");

        memset(big, 'a', sizeof(big));
        is_int(textfile_post(t, path, big, sizeof(big)), -EINVAL, "a text over TEXTFILE_TEXT_MAX: -EINVAL");
        is_int(textfile_post(t, "relative", "a", 1), -EINVAL, "a relative path: -EINVAL");
        textfile_free(t);
        ok(true, "freed (joined: it was idle)");
        unlink(path);

        /* Freed before its first post: no thread to stop. */
        is_int(textfile_new(&t), 0, "another writer");
        textfile_free(t);
        textfile_free(NULL);
        ok(true, "freed without a thread, and NULL");
}

int main(void)
{
        if (!mkdtemp(dir))
                return 1;
        test_write();
        test_thread();
        rmdir(dir);
        return done_testing();
}
