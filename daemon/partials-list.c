/* rdmaxferd --list-partials: what partial_dir holds, one line per partial. */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "config.h"
#include "daemon.h"
#include "partial.h"
#include "partials-list.h"

static void partials_list_peer(const struct partial_rec *r, char *out, size_t len)
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

static int partials_list_one(int dirfd, const char *name)
{
        uint8_t buf[PARTIAL_REC_SIZE + 1];
        struct partial_rec r;
        char peer[INET6_ADDRSTRLEN], when[32];
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
                printf("%.32s  (unreadable record: %s)\n", name, strerror(-rc));
                return 0;
        }
        partials_list_peer(&r, peer, sizeof(peer));
        t = (time_t)r.updated;
        gmtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        /* A kept tree (or the record of a published one): its entries
         * too, and DEST ends with a slash. */
        if (r.flags & PARTIAL_TREE)
                printf("%.32s  %-9s %" PRIu64 "/%" PRIu64 " bytes  %s  from %s%s  transfer %" PRIu64
                       "  %u/%u entries  %s/\n",
                       name, r.flags & PARTIAL_PUBLISHED ? "published" : "tree", r.tree.offered, r.size, when, peer,
                       r.key_id[0] | r.key_id[1] | r.key_id[2] | r.key_id[3] ? " (key)" : "", r.transfer_id,
                       r.tree.entries, r.tree.job_files, r.dest);
        else
                printf("%.32s  %-9s %" PRIu64 "/%" PRIu64 " bytes  %s  from %s%s  transfer %" PRIu64 "  %s\n",
                       name, r.flags & PARTIAL_PUBLISHED ? "published" : "partial",
                       r.flags & PARTIAL_PUBLISHED ? r.size : partial_kept_bytes(&r), r.size, when, peer,
                       r.key_id[0] | r.key_id[1] | r.key_id[2] | r.key_id[3] ? " (key)" : "", r.transfer_id,
                       r.dest);
        return 0;
}

int partials_list(const char *config_path)
{
        struct config cfg;
        struct auth_key key = { 0 };
        struct dirent *de;
        char err[1024];
        DIR *d;
        int r;

        r = daemon_load_config(config_path, &cfg, &key, err, sizeof(err));
        auth_key_clear(&key);
        if (r < 0) {
                fprintf(stderr, "rdmaxferd: %s\n", err);
                config_deinit(&cfg);
                return EXIT_FAILURE;
        }
        if (!cfg.partial_dir[0]) {
                printf("rdmaxferd: partial_dir is empty: nothing is kept\n");
                config_deinit(&cfg);
                return EXIT_SUCCESS;
        }
        d = opendir(cfg.partial_dir);
        if (!d) {
                fprintf(stderr, "rdmaxferd: partial_dir %s: %s\n", cfg.partial_dir, strerror(errno));
                config_deinit(&cfg);
                return EXIT_FAILURE;
        }
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (n == PARTIAL_KEY_HEX - 1 + 4 && strcmp(de->d_name + n - 4, ".rec") == 0)
                        partials_list_one(dirfd(d), de->d_name);
        }
        closedir(d);
        config_deinit(&cfg);
        return EXIT_SUCCESS;
}
