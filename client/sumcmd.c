/* xferctl sum: the block digest of local files (digest.h), as RDMAXFER_DIGEST has it. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "digest.h"
#include "esc.h"
#include "xferctl.h"

/* Large sequential reads: the hash runs at several GB/s. */
#define SUMCMD_READ_SIZE        (4u << 20)

const char sumcmd_help[] =
        "Usage: xferctl sum [--cached] [FILE...]\n"
        "\n"
        "Print the rdmaxfer digest of each FILE (\"-\" or none: standard input) as\n"
        "DIGEST, two spaces, FILE: the value a transfer logs as RDMAXFER_DIGEST and\n"
        "the receiver stores in the xattr " DIGEST_XATTR ". It is the XXH3-128\n"
        "of the file's 64 MiB groups' hashes, each the XXH3-128 of its 1 MiB\n"
        "blocks' XXH3-128s, so any copy can be checked with standard tools too\n"
        "(xferctl(1) has the recipe). Needs no daemon.\n"
        "\n"
        "  --cached    print the file's " DIGEST_XATTR " when it has one instead of\n"
        "              reading the file (it says what the file was when received,\n"
        "              not what it is now)\n"
        "  -h, --help  show this help\n"
        "\n"
        "Exit status: 0 every FILE summed; 1 one or more could not be read (each\n"
        "said why); 2 usage error.\n";

/* The xattr, when @fd has a well-formed one: true and @out. */
static bool sum_cached(int fd, uint8_t out[WIRE_DIGEST_SIZE])
{
        char hex[2 * WIRE_DIGEST_SIZE + 1];
        ssize_t n = fgetxattr(fd, DIGEST_XATTR, hex, sizeof(hex));

        return n == 2 * WIRE_DIGEST_SIZE && digest_parse(hex, (size_t)n, out) == 0;
}

/*
 * A sparse file (fewer blocks than bytes), @size long, into @d: its holes,
 * found with SEEK_DATA and SEEK_HOLE, hashed as the zeros they read as
 * (digest_zeros) and never read, the rest read as data. 0 or -errno.
 */
static int sum_sparse(int fd, uint64_t size, uint8_t *buf, struct digest *d)
{
        uint64_t pos = 0, data_end = 0;
        int r;

        for (;;) {
                ssize_t n;

                if (pos >= data_end) {
                        off_t dd = lseek(fd, (off_t)pos, SEEK_DATA), hh;

                        if (dd < 0 && errno != ENXIO)
                                return -errno;
                        /* No data from here on: a hole to what fstat said the end was. */
                        if (dd < 0)
                                return pos < size ? digest_zeros(d, size - pos) : 0;
                        if ((uint64_t)dd > pos && (r = digest_zeros(d, (uint64_t)dd - pos)) < 0)
                                return r;
                        pos = (uint64_t)dd;
                        hh = lseek(fd, dd, SEEK_HOLE);
                        data_end = hh > dd ? (uint64_t)hh : UINT64_MAX;
                }
                n = pread(fd, buf, (size_t)MIN((uint64_t)SUMCMD_READ_SIZE, data_end - pos), (off_t)pos);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                r = digest_update(d, buf, (size_t)n);
                if (r < 0)
                        return r;
                pos += (uint64_t)n;
        }
}

/* Reads @fd to its end: 0 or -errno. */
static int sum_fd(int fd, uint8_t *buf, uint8_t out[WIRE_DIGEST_SIZE])
{
        _cleanup_(digest_deinit) struct digest d = DIGEST_NULL;
        struct stat st;
        bool reg;
        int r;

        r = digest_init(&d);
        if (r < 0)
                return r;
        /* Room for the block hashes now when the size is known; a pipe grows it. */
        reg = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (reg && (r = digest_start(&d, 0, (uint64_t)st.st_size)) < 0)
                return r;
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        if (reg && (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size) {
                r = sum_sparse(fd, (uint64_t)st.st_size, buf, &d);
                if (r < 0)
                        return r;
                digest_final(&d, out);
                return 0;
        }
        for (;;) {
                ssize_t n = read(fd, buf, SUMCMD_READ_SIZE);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                r = digest_update(&d, buf, (size_t)n);
                if (r < 0)
                        return r;
        }
        digest_final(&d, out);
        return 0;
}

/* Like the *sum tools: a name with a backslash or a newline is escaped and
 * its line starts with a backslash. */
static void sum_print(const uint8_t digest[WIRE_DIGEST_SIZE], const char *name)
{
        char hex[DIGEST_HEX_SIZE];
        bool esc = strpbrk(name, "\\\n") != NULL;

        digest_hex(digest, hex);
        printf("%s%s  ", esc ? "\\" : "", hex);
        for (const char *p = name; *p; p++) {
                if (esc && *p == '\\')
                        fputs("\\\\", stdout);
                else if (esc && *p == '\n')
                        fputs("\\n", stdout);
                else
                        putchar(*p);
        }
        putchar('\n');
}

/* Says why @path has no digest; the name escaped (esc_term), as in every message. */
static void sum_say(const char *path, int err)
{
        _cleanup_(freep) char *shown = esc_term_dup(path);

        xferctl_say("%s: %s", shown ? shown : "(file)", strerror(err));
}

/* One FILE: true when its digest was printed, else said why. */
static bool sum_one(const char *path, bool cached, uint8_t *buf)
{
        _cleanup_(closep) int fd = -1;
        uint8_t digest[WIRE_DIGEST_SIZE];
        bool stdin_ = strcmp(path, "-") == 0;
        int r;

        fd = stdin_ ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                sum_say(path, errno);
                return false;
        }
        if (!(cached && sum_cached(fd, digest))) {
                r = sum_fd(fd, buf, digest);
                if (r < 0) {
                        sum_say(path, -r);
                        return false;
                }
        }
        sum_print(digest, path);
        return true;
}

int sumcmd_run(const char *socket_path, int argc, char **argv)
{
        static const struct option opts[] = {
                { "cached", no_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        static char *const dash[] = { (char *)"-" };
        char *const *files = dash;
        bool cached = false, all = true;
        uint8_t *buf;
        int c, nfiles = 1;

        (void)socket_path;
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'c':
                        cached = true;
                        break;
                case 'h':
                        fputs(sumcmd_help, stdout);
                        return XFERCTL_EXIT_OK;
                default:
                        xferctl_say_bad_option(argv, optopt);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (optind < argc) {
                files = argv + optind;
                nfiles = argc - optind;
        }
        buf = malloc(SUMCMD_READ_SIZE);
        if (!buf) {
                xferctl_say("%s", strerror(ENOMEM));
                return XFERCTL_EXIT_FAILED;
        }
        for (int i = 0; i < nfiles; i++)
                all &= sum_one(files[i], cached, buf);
        free(buf);
        if (fflush(stdout) != 0 || ferror(stdout)) {
                xferctl_say("writing the digests: %s", strerror(errno));
                return XFERCTL_EXIT_FAILED;
        }
        return all ? XFERCTL_EXIT_OK : XFERCTL_EXIT_FAILED;
}
