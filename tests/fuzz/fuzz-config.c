/*
 * libFuzzer harness for the rdmaxferd.conf parser: arbitrary file contents
 * load or are refused with -EINVAL and a one-line "PATH..." message, leaving
 * the caller's config untouched; whatever loads obeys every documented
 * range and cross-key rule, and loading the same file again over the result
 * gives the same config.
 *
 * config_load() only takes a path, so the input goes into one memfd that
 * is reopened through /proc/self/fd: no disk, no file per input.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static void setup(void)
{
        memfd = memfd_create("fuzz-config", MFD_CLOEXEC);
        if (memfd < 0) {
                perror("memfd_create");
                abort();
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
}

static void put_input(const uint8_t *data, size_t size)
{
        if (ftruncate(memfd, 0) < 0 || (size > 0 && pwrite(memfd, data, size, 0) != (ssize_t)size)) {
                perror("memfd write");
                abort();
        }
}

static bool str_in(const char *s, size_t cap)
{
        return memchr(s, '\0', cap) != NULL;
}

static bool path_ok(const char *s, size_t cap, bool empty_ok)
{
        return str_in(s, cap) && (s[0] == '/' || (empty_ok && s[0] == '\0'));
}

/* "" (none), a gid below (gid_t)-1, or a name of [A-Za-z0-9._@$-] not starting with '-'. */
static bool admin_group_ok(const char *s, size_t cap)
{
        size_t n;

        if (!str_in(s, cap))
                return false;
        n = strlen(s);
        if (n == 0)
                return true;
        if (strspn(s, "0123456789") == n) {
                uint64_t gid = 0;

                for (; *s; s++) {
                        gid = gid * 10 + (uint64_t)(*s - '0');
                        if (gid >= UINT32_MAX)
                                return false;
                }
                return true;
        }
        return s[0] != '-' &&
               strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@$") == n;
}

/* What config.h promises about a config that loaded. */
static bool config_valid(const struct config *c)
{
        unsigned char buf[sizeof(struct in6_addr)];

        if (!str_in(c->listen_addr, sizeof(c->listen_addr)))
                return false;
        if (c->listen_addr[0] != '\0' && inet_pton(AF_INET, c->listen_addr, buf) != 1 &&
            inet_pton(AF_INET6, c->listen_addr, buf) != 1)
                return false;
        if (!path_ok(c->control_socket, sizeof(c->control_socket), false) ||
            !path_ok(c->incoming_dir, sizeof(c->incoming_dir), false) ||
            !path_ok(c->key_file, sizeof(c->key_file), true))
                return false;
        if (c->port == 0)
                return false;
        if (c->slot_size < 4096 || c->slot_size > 16 * 1024 * 1024 || (c->slot_size & (c->slot_size - 1)))
                return false;
        if (c->slot_count < 2 || c->slot_count > 4096 || c->send_slots < 2 || c->send_slots > 4096)
                return false;
        if (c->max_transfers < 1 || (uint64_t)c->max_transfers * 2 > c->slot_count)
                return false;
        if (c->lanes < 1 || c->lanes > WIRE_LANES_MAX || c->peer_timeout < 1 || c->peer_timeout > 3600)
                return false;
        if (c->min_rate > 1ull << 40)
                return false;
        if (c->log_level < CONFIG_LOG_ERR || c->log_level > CONFIG_LOG_DEBUG)
                return false;
        if (c->max_clients_per_user < 1 || c->max_clients_per_user > 64 ||
            c->max_queued_per_user < 1 || c->max_queued_per_user > 256 ||
            c->client_idle_timeout < 1 || c->client_idle_timeout > 3600)
                return false;
        if (!admin_group_ok(c->admin_group, sizeof(c->admin_group)))
                return false;
        if (c->allow_peers.n > ACL_MAX)
                return false;
        for (size_t i = 0; i < c->allow_peers.n; i++) {
                const struct acl_entry *e = &c->allow_peers.entries[i];

                if (!(e->family == AF_INET && e->prefix <= 32) &&
                    !(e->family == AF_INET6 && e->prefix <= 128))
                        return false;
        }
        return true;
}

/* Field by field: padding and the bytes past a string's NUL are not the parser's business. */
static bool config_equal(const struct config *a, const struct config *b)
{
        if (strcmp(a->listen_addr, b->listen_addr) || strcmp(a->control_socket, b->control_socket) ||
            strcmp(a->incoming_dir, b->incoming_dir) || strcmp(a->key_file, b->key_file) ||
            strcmp(a->admin_group, b->admin_group))
                return false;
        if (a->port != b->port || a->slot_size != b->slot_size || a->slot_count != b->slot_count ||
            a->send_slots != b->send_slots || a->max_transfers != b->max_transfers ||
            a->lanes != b->lanes || a->peer_timeout != b->peer_timeout || a->min_rate != b->min_rate ||
            a->max_file_size != b->max_file_size || a->overwrite != b->overwrite ||
            a->log_level != b->log_level || a->max_clients_per_user != b->max_clients_per_user ||
            a->max_queued_per_user != b->max_queued_per_user ||
            a->client_idle_timeout != b->client_idle_timeout || a->allow_peers.n != b->allow_peers.n)
                return false;
        for (size_t i = 0; i < a->allow_peers.n && i < ACL_MAX; i++) {
                const struct acl_entry *x = &a->allow_peers.entries[i], *y = &b->allow_peers.entries[i];

                if (x->family != y->family || x->prefix != y->prefix ||
                    memcmp(x->addr, y->addr, sizeof(x->addr)) != 0)
                        return false;
        }
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct config defaults, cfg, again;
        char err[512];
        int r;

        if (memfd < 0)
                setup();
        put_input(data, size);

        config_init(&defaults);
        cfg = defaults;
        memset(err, 'x', sizeof(err));
        r = config_load(&cfg, path, err, sizeof(err));
        if (!str_in(err, sizeof(err)))
                abort();

        if (r != 0) {
                /* A refused file names itself on one line and changes nothing. */
                if (r != -EINVAL || strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))
                        abort();
                if (!config_equal(&cfg, &defaults))
                        abort();
                return 0;
        }

        if (err[0] != '\0' || !config_valid(&cfg))
                abort();
        /* Every key the file sets overrides; the rest keep the (now loaded) values. */
        again = cfg;
        if (config_load(&again, path, NULL, 0) != 0 || !config_equal(&again, &cfg))
                abort();
        return 0;
}
