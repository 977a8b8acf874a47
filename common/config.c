#include "config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl.h"
#include "bucket.h"
#include "macro.h"
#include "wire.h"

enum config_key {
        CONFIG_KEY_LISTEN,
        CONFIG_KEY_PORT,
        CONFIG_KEY_CONTROL_SOCKET,
        CONFIG_KEY_INCOMING_DIR,
        CONFIG_KEY_SLOT_SIZE,
        CONFIG_KEY_SLOT_COUNT,
        CONFIG_KEY_SEND_SLOTS,
        CONFIG_KEY_MAX_TRANSFERS,
        CONFIG_KEY_MAX_TRANSFERS_PER_HOST,
        CONFIG_KEY_LANES,
        CONFIG_KEY_PEER_TIMEOUT,
        CONFIG_KEY_MIN_RATE,
        CONFIG_KEY_RATE_LIMIT,
        CONFIG_KEY_TOS,
        CONFIG_KEY_MAX_FILE_SIZE,
        CONFIG_KEY_MAX_JOB_FILES,
        CONFIG_KEY_MAX_JOB_BYTES,
        CONFIG_KEY_MIN_FREE,
        CONFIG_KEY_IO_TIMEOUT,
        CONFIG_KEY_OVERWRITE,
        CONFIG_KEY_RELAY,
        CONFIG_KEY_TREE_SYMLINKS,
        CONFIG_KEY_TREE_DELETE,
        CONFIG_KEY_NAMES,
        CONFIG_KEY_ALLOW_PEERS,
        CONFIG_KEY_RELAY_PEERS,
        CONFIG_KEY_KEY_FILE,
        CONFIG_KEY_LOG_LEVEL,
        CONFIG_KEY_MAX_CLIENTS_PER_USER,
        CONFIG_KEY_MAX_QUEUED_PER_USER,
        CONFIG_KEY_CLIENT_IDLE_TIMEOUT,
        CONFIG_KEY_ADMIN_GROUP,
        CONFIG_KEY_PEER_NAMES,
        CONFIG_KEY_RETRY_MAX,
        CONFIG_KEY_RETRY_WINDOW,
        CONFIG_KEY_RETRY_DELAY_MAX,
        CONFIG_KEY_METRICS_FILE,
        CONFIG_KEY_METRICS_INTERVAL,
        CONFIG_KEY_PARTIAL_DIR,
        CONFIG_KEY_PARTIAL_RETENTION,
        CONFIG_KEY_PARTIAL_MAX_BYTES,
        CONFIG_KEY_LANDING_ROOTS,
        CONFIG_KEY_ALLOW_ROOT_LANDING,
        CONFIG_KEY_LANDER_SOCKET,
        CONFIG_KEY_LANDING_MAX_AGE,
        _CONFIG_KEY_MAX,
};

#define CONFIG_ERR_MAX 512

struct config_parser {
        struct config cfg;              /* built here, copied out only on success */
        const char *path;
        FILE *f;
        char *line;                     /* getline() buffer */
        size_t linecap;
        unsigned int lineno;
        unsigned int seen[_CONFIG_KEY_MAX];     /* line a key was set on, 0 = not set */
        unsigned int err_line;          /* first error this file found itself; 0 = none */
        int err_code;
        char err[CONFIG_ERR_MAX];
        /* config_load_each(): told of every error, not only the first. */
        void (*each)(void *userdata, unsigned int line, const char *msg);
        void *each_data;
        unsigned int syntax_line;       /* the last line the reader found no '=' on */
};

/* Setters return 0 or -EINVAL with the reason (no key, no line) in @why. */
typedef int (*config_setter)(struct config *cfg, const char *value, char *why, size_t whylen);

/* How a key's value is read; CONFIG_VALUE_CUSTOM keys bring a setter of their own. */
enum config_value {
        CONFIG_VALUE_NUMBER,            /* decimal digits, min..max */
        CONFIG_VALUE_SIZE,              /* bytes, K/M/G/T suffix, min..max; .why says what is wanted */
        CONFIG_VALUE_PATH,              /* absolute path; "" too when .empty_ok */
        CONFIG_VALUE_CUSTOM,
};

struct config_keydef {
        const char *name;
        enum config_value kind;
        size_t offset;                  /* of the field in struct config */
        size_t size;                    /* sizeof the field: integer width, or path buffer */
        uint64_t min, max;
        bool pow2;                      /* SIZE: must be a power of two */
        bool empty_ok;                  /* PATH: "" is allowed */
        const char *why;                /* SIZE: the complaint for a bad value */
        config_setter set;              /* CUSTOM */
};

/* A key named after its field in struct config. */
#define CONFIG_FIELD(f) \
        .name = #f, .offset = offsetof(struct config, f), .size = sizeof(((struct config *)NULL)->f)
#define CONFIG_NUMBER(f, lo, hi) \
        { CONFIG_FIELD(f), .kind = CONFIG_VALUE_NUMBER, .min = (lo), .max = (hi) }
#define CONFIG_PATH(f, empty_allowed) \
        { CONFIG_FIELD(f), .kind = CONFIG_VALUE_PATH, .empty_ok = (empty_allowed) }
#define CONFIG_CUSTOM(key, setter) \
        { .name = (key), .kind = CONFIG_VALUE_CUSTOM, .set = (setter) }

void config_init(struct config *cfg)
{
        *cfg = (struct config){
                .listen_addr = "",
                .nrails = 1,
                .port = CONFIG_DEFAULT_PORT,
                .control_socket = "/run/rdmaxferd/control.sock",
                .lander_socket = "/run/rdmaxfer-lander.sock",
                .incoming_dir = "/var/lib/rdmaxferd/incoming",
                .slot_size = 1024 * 1024,
                .slot_count = 64,
                .send_slots = 16,
                .max_transfers = 4,
                .lanes = 4,
                .peer_timeout = 30,
                /* A tenth of what a transfer gets on a 1 GbE link shared 8 ways
                 * (rdmaxferd(8), Deadlines): never an honest transfer. */
                .min_rate = 1024 * 1024,
                .rate_limit = 0,
                .tos = -1,
                /* Larger than what most sites move as one file, and one offer
                 * cannot ask for a multi-TiB array. */
                .max_file_size = 1ull << 40,
                /* A job of several files (one session): checked on its first
                 * offer. A million files, 16 TiB: rdmaxferd.conf(5). */
                .max_job_files = 1000000,
                .max_job_bytes = 16ull << 40,
                /* What a host needs to keep working when an offer would fill
                 * the disk (journal, package updates, logins): rdmaxferd.conf(5). */
                .min_free = 1ull << 30,
                .io_timeout = 60,
                .overwrite = false,
                /* A sender may empty DEST of what it lacks (--delete) only
                 * where the admin says so: rdmaxferd.conf(5). */
                .tree_delete = false,
                /* A chain relays among the hosts of allow_peers (its sender
                 * and every hop), and nowhere while it names none: a cluster
                 * that lists its fabric stages jobs (xferctl bcast) with no
                 * relay set on any node. rdmaxferd.conf(5), SECURITY.md. */
                .relay = CONFIG_RELAY_PEERS,
                .allow_peers = { .n = 0 },
                .key_file = "",
                .log_level = CONFIG_LOG_INFO,
                /* One user can neither take every control connection nor the whole queue. */
                .max_clients_per_user = 32,
                .max_queued_per_user = 64,
                .client_idle_timeout = 60,
                .admin_group = "",
                .peer_names = "",
                /* Rides out a daemon restart or a link flap (1 + 2 + 4 + 8 + 16 s of
                 * waiting), and gives up on a peer that is gone for good. */
                .retry_max = 5,
                .retry_window = 600,
                .landing_max_age = 24 * 3600,
                .retry_delay_max = 60,
                .metrics_file = "",
                /* node_exporter's own scrape interval is commonly 15 s. */
                .metrics_interval = 15,
                /* Beside incoming_dir (the same file system: a partial is
                 * linked, not copied), out of its readers' sight. */
                .partial_dir = "/var/lib/rdmaxferd/partial",
                /* Long enough for a weekend's outage and the retries after it. */
                .partial_retention = 3 * 24 * 3600,
                .partial_max_bytes = 64ull << 30,
        };
}

void config_deinit(struct config *cfg)
{
        /* Owns no resources today; cleared so a stale config is not mistaken for a live one. */
        memset(cfg, 0, sizeof(*cfg));
}

_printf_(3, 4)
static void config_why(char *why, size_t whylen, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
}

/* Decimal digits only: strtoul would take "-1", " 1" and "0x10". */
static int config_parse_u64(const char *s, uint64_t *out, const char **end)
{
        uint64_t v = 0;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
                unsigned int d = (unsigned int)(*p - '0');

                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        *out = v;
        *end = p;
        return 0;
}

/* "1M" = 1048576: suffixes K, M, G, T are powers of 1024, either case. */
int config_parse_size(const char *s, uint64_t *out)
{
        const char *end;
        unsigned int shift = 0;
        uint64_t v;
        int r;

        r = config_parse_u64(s, &v, &end);
        if (r < 0)
                return r;
        switch (*end) {
        case '\0':
                break;
        case 'K': case 'k':
                shift = 10;
                break;
        case 'M': case 'm':
                shift = 20;
                break;
        case 'G': case 'g':
                shift = 30;
                break;
        case 'T': case 't':
                shift = 40;
                break;
        default:
                return -EINVAL;
        }
        if (shift) {
                if (end[1] != '\0')
                        return -EINVAL;
                if (v > (UINT64_MAX >> shift))
                        return -ERANGE;
                v <<= shift;
        }
        *out = v;
        return 0;
}

static int config_set_path(char *dst, size_t cap, bool empty_ok, const char *value,
                           char *why, size_t whylen)
{
        size_t n = strlen(value);

        if (n == 0 && empty_ok) {
                dst[0] = '\0';
                return 0;
        }
        if (value[0] != '/') {
                config_why(why, whylen, "must be an absolute path");
                return -EINVAL;
        }
        if (n >= cap) {
                config_why(why, whylen, "path is longer than %zu bytes", cap - 1);
                return -EINVAL;
        }
        memcpy(dst, value, n + 1);
        return 0;
}

/* listen = ADDR [ADDR...]: one address, or one per rail (separated by
 * blanks or commas), numeric, each once; empty: the wildcard, one rail. */
static int config_set_listen(struct config *cfg, const char *value, char *why, size_t whylen)
{
        char addrs[CONFIG_RAILS_MAX][64];
        unsigned int n = 0;
        const char *p = value;

        while (*p) {
                unsigned char buf[sizeof(struct in6_addr)];
                size_t len;

                p += strspn(p, " \t,");
                len = strcspn(p, " \t,");
                if (len == 0)
                        break;
                if (n == CONFIG_RAILS_MAX) {
                        config_why(why, whylen, "at most %u addresses (one per RDMA device)", CONFIG_RAILS_MAX);
                        return -EINVAL;
                }
                if (len >= sizeof(addrs[n])) {
                        config_why(why, whylen, "address is too long");
                        return -EINVAL;
                }
                memcpy(addrs[n], p, len);
                addrs[n][len] = '\0';
                p += len;
                /* rdma_cm binds to an address; resolving names here would make startup depend on DNS. */
                if (inet_pton(AF_INET, addrs[n], buf) != 1 && inet_pton(AF_INET6, addrs[n], buf) != 1) {
                        config_why(why, whylen, "'%s' must be a numeric IPv4 or IPv6 address (or listen "
                                   "empty for any)", addrs[n]);
                        return -EINVAL;
                }
                for (unsigned int i = 0; i < n; i++) {
                        if (!strcmp(addrs[i], addrs[n])) {
                                config_why(why, whylen, "'%s' is named twice", addrs[n]);
                                return -EINVAL;
                        }
                }
                n++;
        }
        memset(cfg->rails, 0, sizeof(cfg->rails));
        memcpy(cfg->rails, addrs, n * sizeof(addrs[0]));
        cfg->nrails = MAX(n, 1u);
        memcpy(cfg->listen_addr, cfg->rails[0], sizeof(cfg->listen_addr));
        return 0;
}

static int config_bool(bool *out, const char *value, char *why, size_t whylen)
{
        if (!strcasecmp(value, "yes") || !strcasecmp(value, "true") || !strcmp(value, "1"))
                *out = true;
        else if (!strcasecmp(value, "no") || !strcasecmp(value, "false") || !strcmp(value, "0"))
                *out = false;
        else {
                config_why(why, whylen, "must be yes or no");
                return -EINVAL;
        }
        return 0;
}

static int config_set_overwrite(struct config *cfg, const char *value, char *why, size_t whylen)
{
        return config_bool(&cfg->overwrite, value, why, whylen);
}

static int config_set_relay(struct config *cfg, const char *value, char *why, size_t whylen)
{
        bool b;

        /* yes and no as every boolean takes them, then peers. */
        if (config_bool(&b, value, why, whylen) == 0) {
                cfg->relay = b ? CONFIG_RELAY_YES : CONFIG_RELAY_NO;
                return 0;
        }
        if (!strcasecmp(value, "peers")) {
                cfg->relay = CONFIG_RELAY_PEERS;
                return 0;
        }
        config_why(why, whylen, "must be yes, no or peers");
        return -EINVAL;
}

static int config_set_tree_delete(struct config *cfg, const char *value, char *why, size_t whylen)
{
        return config_bool(&cfg->tree_delete, value, why, whylen);
}

static int config_set_allow_root_landing(struct config *cfg, const char *value, char *why, size_t whylen)
{
        return config_bool(&cfg->allow_root_landing, value, why, whylen);
}

/* One landing root, @n bytes at @p: absolute, in normal form, not "/". */
static bool config_root_ok(const char *p, size_t n)
{
        size_t comp = 0;

        if (n < 2 || p[0] != '/' || p[n - 1] == '/')
                return false;
        for (size_t i = 1; i <= n; i++) {
                if (i < n && p[i] != '/') {
                        comp++;
                        continue;
                }
                if (comp == 0 || comp > 255 ||
                    (p[i - comp] == '.' && (comp == 1 || (comp == 2 && p[i - 1] == '.'))))
                        return false;
                comp = 0;
        }
        return true;
}

static int config_set_landing_roots(struct config *cfg, const char *value, char *why, size_t whylen)
{
        char out[CONFIG_LANDING_ROOTS_LEN];
        size_t o = 0, count = 0;
        const char *p = value;

        while (*p) {
                size_t n;

                p += strspn(p, " \t");
                n = strcspn(p, " \t");
                if (n == 0)
                        break;
                if (!config_root_ok(p, n)) {
                        config_why(why, whylen, "'%.*s' is not an absolute directory in normal form "
                                   "(no '.', '..', '//' or trailing '/'; not '/')", (int)MIN(n, 256), p);
                        return -EINVAL;
                }
                if (++count > CONFIG_LANDING_ROOTS_MAX) {
                        config_why(why, whylen, "more than %d directories", CONFIG_LANDING_ROOTS_MAX);
                        return -EINVAL;
                }
                if (o + (o > 0) + n >= sizeof(out)) {
                        config_why(why, whylen, "longer than %d bytes", CONFIG_LANDING_ROOTS_LEN - 1);
                        return -EINVAL;
                }
                if (o > 0)
                        out[o++] = ' ';
                memcpy(out + o, p, n);
                o += n;
                p += n;
        }
        out[o] = '\0';
        memcpy(cfg->landing_roots, out, o + 1);
        return 0;
}

/*
 * @value, one of the @n words in @words (any case), into *@out as its
 * index; else the words in the reason ("must be a, b or c").
 */
static int config_enum(int *out, const char *const *words, size_t n, const char *value, char *why, size_t whylen)
{
        size_t o = 0;

        for (size_t i = 0; i < n; i++)
                if (!strcasecmp(value, words[i])) {
                        *out = (int)i;
                        return 0;
                }
        o += (size_t)snprintf(why, whylen, "must be");
        for (size_t i = 0; i < n && o < whylen; i++)
                o += (size_t)snprintf(why + o, whylen - o, "%s%s", i == 0 ? " " : i + 1 == n ? " or " : ", ", words[i]);
        return -EINVAL;
}

static int config_set_tree_symlinks(struct config *cfg, const char *value, char *why, size_t whylen)
{
        static const char *const words[] = {
                [CONFIG_SYMLINKS_SAFE] = "safe",
                [CONFIG_SYMLINKS_ANY] = "any",
                [CONFIG_SYMLINKS_NONE] = "none",
        };

        /* xferctl send --links names it "all": either word will do. */
        if (!strcasecmp(value, "all"))
                value = words[CONFIG_SYMLINKS_ANY];
        return config_enum(&cfg->tree_symlinks, words, ARRAY_SIZE(words), value, why, whylen);
}

static int config_set_names(struct config *cfg, const char *value, char *why, size_t whylen)
{
        static const char *const words[] = {
                [CONFIG_NAMES_ANY] = "any",
                [CONFIG_NAMES_UTF8] = "utf8",
                [CONFIG_NAMES_STRICT] = "strict",
        };

        return config_enum(&cfg->names, words, ARRAY_SIZE(words), value, why, whylen);
}

static int config_set_acl(struct acl *acl, const char *value, char *why, size_t whylen)
{
        char bad[64];
        int r;

        r = acl_parse(acl, value, bad, sizeof(bad));
        if (r == -E2BIG) {
                config_why(why, whylen, "more than %d entries", ACL_MAX);
                return -EINVAL;
        }
        if (r < 0) {
                config_why(why, whylen, "'%s' is not an address or address/prefix", bad);
                return -EINVAL;
        }
        return 0;
}

static int config_set_allow_peers(struct config *cfg, const char *value, char *why, size_t whylen)
{
        return config_set_acl(&cfg->allow_peers, value, why, whylen);
}

static int config_set_relay_peers(struct config *cfg, const char *value, char *why, size_t whylen)
{
        int r = config_set_acl(&cfg->relay_peers, value, why, whylen);

        cfg->relay_peers_set = r == 0;
        return r;
}

static int config_set_log_level(struct config *cfg, const char *value, char *why, size_t whylen)
{
        static const struct {
                const char *name;
                int level;
        } levels[] = {
                { "err", CONFIG_LOG_ERR },
                { "error", CONFIG_LOG_ERR },
                { "warning", CONFIG_LOG_WARNING },
                { "warn", CONFIG_LOG_WARNING },
                { "notice", CONFIG_LOG_NOTICE },
                { "info", CONFIG_LOG_INFO },
                { "debug", CONFIG_LOG_DEBUG },
        };

        for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
                if (!strcasecmp(value, levels[i].name)) {
                        cfg->log_level = levels[i].level;
                        return 0;
                }
        config_why(why, whylen, "must be one of err, warning, notice, info, debug");
        return -EINVAL;
}

/* The TOS byte of our rdma_cm ids, or empty: the kernel's default (no call). */
static int config_set_tos(struct config *cfg, const char *value, char *why, size_t whylen)
{
        const char *end;
        uint64_t v;

        if (value[0] == '\0') {
                cfg->tos = -1;
                return 0;
        }
        if (config_parse_u64(value, &v, &end) < 0 || *end != '\0' || v > 255) {
                config_why(why, whylen, "must be a whole number from 0 to 255 (the IP TOS byte: "
                                        "DSCP * 4), or empty to leave it to the kernel");
                return -EINVAL;
        }
        cfg->tos = (int)v;
        return 0;
}

/*
 * A group name as NSS may hold one (POSIX portable names, plus '@' and '$'
 * of domain and machine accounts), or a numeric gid. Only its form is
 * checked here: whether the group exists is the daemon's business.
 */
static int config_set_admin_group(struct config *cfg, const char *value, char *why, size_t whylen)
{
        size_t n = strlen(value), digits = strspn(value, "0123456789");

        if (n >= sizeof(cfg->admin_group)) {
                config_why(why, whylen, "group name is longer than %zu bytes", sizeof(cfg->admin_group) - 1);
                return -EINVAL;
        }
        if (n > 0 && digits == n) {
                uint64_t gid;
                const char *end;

                /* (gid_t)-1 means "no group" to the kernel. */
                if (config_parse_u64(value, &gid, &end) < 0 || gid >= UINT32_MAX) {
                        config_why(why, whylen, "gid must be below 4294967295");
                        return -EINVAL;
                }
        } else if (n > 0 && (value[0] == '-' ||
                             strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789._-@$") != n)) {
                config_why(why, whylen, "must be a group name (letters, digits, '.', '_', '-', '@', '$'; "
                                        "not starting with '-') or a numeric gid, or empty for none");
                return -EINVAL;
        }
        memcpy(cfg->admin_group, value, n + 1);
        return 0;
}

/* Checked here; the daemon only hands it to xferctl (ctl.h SETTINGS). */
static int config_set_peer_names(struct config *cfg, const char *value, char *why, size_t whylen)
{
        char reason[192];

        if (peername_check(value, reason, sizeof(reason)) < 0) {
                config_why(why, whylen, "%s", reason);
                return -EINVAL;
        }
        snprintf(cfg->peer_names, sizeof(cfg->peer_names), "%s", value);
        return 0;
}

/* A file's path: the daemon writes a temporary file beside it and renames it over. */
static int config_set_metrics_file(struct config *cfg, const char *value, char *why, size_t whylen)
{
        size_t n = strlen(value);

        if (n > 0 && value[n - 1] == '/') {
                config_why(why, whylen, "must be the path of a file, not of a directory");
                return -EINVAL;
        }
        return config_set_path(cfg->metrics_file, sizeof(cfg->metrics_file), true, value, why, whylen);
}

static const struct config_keydef config_keys[_CONFIG_KEY_MAX] = {
        [CONFIG_KEY_LISTEN]             = CONFIG_CUSTOM("listen", config_set_listen),
        [CONFIG_KEY_PORT]               = CONFIG_NUMBER(port, 1, 65535),
        /* sizeof(control_socket) is sun_path's: a longer path cannot be bound at all. */
        [CONFIG_KEY_CONTROL_SOCKET]     = CONFIG_PATH(control_socket, false),
        [CONFIG_KEY_INCOMING_DIR]       = CONFIG_PATH(incoming_dir, false),
        [CONFIG_KEY_SLOT_SIZE]          = { CONFIG_FIELD(slot_size), .kind = CONFIG_VALUE_SIZE,
                                            .min = 4096, .max = 16 * 1024 * 1024, .pow2 = true,
                                            .why = "must be a power of two between 4K and 16M" },
        [CONFIG_KEY_SLOT_COUNT]         = CONFIG_NUMBER(slot_count, 2, 4096),
        [CONFIG_KEY_SEND_SLOTS]         = CONFIG_NUMBER(send_slots, 2, 4096),
        /* The upper bound against slot_count is checked once every key is known. */
        [CONFIG_KEY_MAX_TRANSFERS]      = CONFIG_NUMBER(max_transfers, 1, 2048),
        [CONFIG_KEY_MAX_TRANSFERS_PER_HOST] = CONFIG_NUMBER(max_transfers_per_host, 0, 2048),
        [CONFIG_KEY_LANES]              = CONFIG_NUMBER(lanes, 1, WIRE_LANES_MAX),
        [CONFIG_KEY_PEER_TIMEOUT]       = CONFIG_NUMBER(peer_timeout, 1, 3600),
        [CONFIG_KEY_MIN_RATE]           = { CONFIG_FIELD(min_rate), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = 1ull << 40,
                                            .why = "must be bytes per second (suffix K, M, G or T) "
                                                   "up to 1T, 0 for no floor" },
        [CONFIG_KEY_RATE_LIMIT]         = { CONFIG_FIELD(rate_limit), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = 1ull << 40,
                                            .why = "must be bytes per second (suffix K, M, G or T) "
                                                   "up to 1T, 0 for no limit" },
        [CONFIG_KEY_TOS]                = CONFIG_CUSTOM("tos", config_set_tos),
        [CONFIG_KEY_MAX_FILE_SIZE]      = { CONFIG_FIELD(max_file_size), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = UINT64_MAX,
                                            .why = "must be a size in bytes (suffix K, M, G or T), "
                                                   "0 for no limit" },
        [CONFIG_KEY_MAX_JOB_FILES]      = CONFIG_NUMBER(max_job_files, 0, UINT32_MAX),
        [CONFIG_KEY_MAX_JOB_BYTES]      = { CONFIG_FIELD(max_job_bytes), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = UINT64_MAX,
                                            .why = "must be a size in bytes (suffix K, M, G or T), "
                                                   "0 for no limit" },
        [CONFIG_KEY_MIN_FREE]           = { CONFIG_FIELD(min_free), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = UINT64_MAX,
                                            .why = "must be a size in bytes (suffix K, M, G or T), "
                                                   "0 for no floor" },
        [CONFIG_KEY_IO_TIMEOUT]         = CONFIG_NUMBER(io_timeout, 1, 3600),
        [CONFIG_KEY_OVERWRITE]          = CONFIG_CUSTOM("overwrite", config_set_overwrite),
        [CONFIG_KEY_RELAY]              = CONFIG_CUSTOM("relay", config_set_relay),
        [CONFIG_KEY_TREE_SYMLINKS]      = CONFIG_CUSTOM("tree_symlinks", config_set_tree_symlinks),
        [CONFIG_KEY_TREE_DELETE]        = CONFIG_CUSTOM("tree_delete", config_set_tree_delete),
        [CONFIG_KEY_NAMES]              = CONFIG_CUSTOM("names", config_set_names),
        [CONFIG_KEY_ALLOW_PEERS]        = CONFIG_CUSTOM("allow_peers", config_set_allow_peers),
        [CONFIG_KEY_RELAY_PEERS]        = CONFIG_CUSTOM("relay_peers", config_set_relay_peers),
        [CONFIG_KEY_KEY_FILE]           = CONFIG_PATH(key_file, true),
        [CONFIG_KEY_LOG_LEVEL]          = CONFIG_CUSTOM("log_level", config_set_log_level),
        /* The upper bounds are the daemon's own caps (CONTROL_CONN_MAX, JOBS_QUEUED_MAX). */
        [CONFIG_KEY_MAX_CLIENTS_PER_USER] = CONFIG_NUMBER(max_clients_per_user, 1, 64),
        [CONFIG_KEY_MAX_QUEUED_PER_USER] = CONFIG_NUMBER(max_queued_per_user, 1, 256),
        [CONFIG_KEY_CLIENT_IDLE_TIMEOUT] = CONFIG_NUMBER(client_idle_timeout, 1, 3600),
        [CONFIG_KEY_ADMIN_GROUP]        = CONFIG_CUSTOM("admin_group", config_set_admin_group),
        [CONFIG_KEY_PEER_NAMES]         = CONFIG_CUSTOM("peer_names", config_set_peer_names),
        /* CTL_RETRIES_MAX, what xferctl send --retries may ask for too. */
        [CONFIG_KEY_RETRY_MAX]          = CONFIG_NUMBER(retry_max, 0, CTL_RETRIES_MAX),
        [CONFIG_KEY_RETRY_WINDOW]       = CONFIG_NUMBER(retry_window, 1, 7 * 24 * 3600),
        [CONFIG_KEY_RETRY_DELAY_MAX]    = CONFIG_NUMBER(retry_delay_max, 1, 3600),
        [CONFIG_KEY_METRICS_FILE]       = CONFIG_CUSTOM("metrics_file", config_set_metrics_file),
        [CONFIG_KEY_METRICS_INTERVAL]   = CONFIG_NUMBER(metrics_interval, 1, 3600),
        /* Empty: no partials kept, no transfer resumed. */
        [CONFIG_KEY_PARTIAL_DIR]        = CONFIG_PATH(partial_dir, true),
        [CONFIG_KEY_PARTIAL_RETENTION]  = CONFIG_NUMBER(partial_retention, 1, 365 * 24 * 3600),
        [CONFIG_KEY_PARTIAL_MAX_BYTES]  = { CONFIG_FIELD(partial_max_bytes), .kind = CONFIG_VALUE_SIZE,
                                            .min = 0, .max = UINT64_MAX,
                                            .why = "must be a size in bytes (suffix K, M, G or T), "
                                                   "0 to keep no partial" },
        [CONFIG_KEY_LANDING_ROOTS]      = CONFIG_CUSTOM("landing_roots", config_set_landing_roots),
        [CONFIG_KEY_ALLOW_ROOT_LANDING] = CONFIG_CUSTOM("allow_root_landing", config_set_allow_root_landing),
        /* sun_path's size, as control_socket's. */
        [CONFIG_KEY_LANDER_SOCKET]      = CONFIG_PATH(lander_socket, false),
        [CONFIG_KEY_LANDING_MAX_AGE]    = CONFIG_NUMBER(landing_max_age, 0, 30 * 24 * 3600),
};

/* A NUMBER or SIZE value, range-checked for @k. 0 or -EINVAL / -ERANGE. */
static int config_parse_uint(const struct config_keydef *k, const char *value, uint64_t *out)
{
        const char *end;
        uint64_t v;
        int r;

        if (k->kind == CONFIG_VALUE_SIZE) {
                r = config_parse_size(value, &v);
        } else {
                r = config_parse_u64(value, &v, &end);
                if (r == 0 && *end != '\0')
                        r = -EINVAL;
        }
        if (r < 0)
                return r;
        if (v < k->min || v > k->max || (k->pow2 && (v & (v - 1)) != 0))
                return -ERANGE;
        *out = v;
        return 0;
}

static void config_store_uint(void *field, size_t size, uint64_t v)
{
        switch (size) {
        case sizeof(uint16_t):
                assert(v <= UINT16_MAX);
                *(uint16_t *)field = (uint16_t)v;
                break;
        case sizeof(uint32_t):
                assert(v <= UINT32_MAX);
                *(uint32_t *)field = (uint32_t)v;
                break;
        case sizeof(uint64_t):
                *(uint64_t *)field = v;
                break;
        default:
                assert(!"config: integer field of an unexpected width");
        }
}

/* Set key @k from @value. 0, or -EINVAL with the reason (no key, no line) in @why. */
static int config_set(struct config *cfg, const struct config_keydef *k, const char *value,
                      char *why, size_t whylen)
{
        void *field = (char *)cfg + k->offset;
        uint64_t v;

        if (k->kind == CONFIG_VALUE_CUSTOM)
                return k->set(cfg, value, why, whylen);
        if (k->kind == CONFIG_VALUE_PATH)
                return config_set_path(field, k->size, k->empty_ok, value, why, whylen);

        if (config_parse_uint(k, value, &v) < 0) {
                if (k->kind == CONFIG_VALUE_SIZE)
                        config_why(why, whylen, "%s", k->why);
                else
                        config_why(why, whylen, "must be a whole number from %llu to %llu",
                                   (unsigned long long)k->min, (unsigned long long)k->max);
                return -EINVAL;
        }
        config_store_uint(field, k->size, v);
        return 0;
}

/* Keep the first error: it is the one the user should fix first (and
 * config_load_each()'s caller hears of every one). */
_printf_(4, 5)
static void config_fail(struct config_parser *p, unsigned int line, int code, const char *fmt, ...)
{
        char msg[CONFIG_ERR_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (p->each)
                p->each(p->each_data, line, msg);
        if (p->err_line != 0)
                return;
        p->err_line = line;
        p->err_code = code;
        memcpy(p->err, msg, sizeof(p->err));
}

/* config_fail() for a syntax or value error: -EINVAL, message prefixed "PATH:LINE: ". */
_printf_(3, 4)
static void config_fail_line(struct config_parser *p, unsigned int line, const char *fmt, ...)
{
        char msg[CONFIG_ERR_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        config_fail(p, line, -EINVAL, "%s:%u: %s", p->path, line, msg);
}

/*
 * Line source for inih. Owning the reads lets us count lines for the
 * messages, refuse [sections] and over-long lines, and strip leading
 * whitespace: inih would otherwise treat an indented line as a continuation
 * of the previous key and report it as a duplicate.
 */
static char *config_reader(char *str, int num, void *stream)
{
        struct config_parser *p = stream;
        const char *s;
        ssize_t n;
        size_t len;

        errno = 0;
        n = getline(&p->line, &p->linecap, p->f);
        if (n < 0) {
                if (ferror(p->f))
                        config_fail(p, p->lineno + 1, errno ? -errno : -EIO, "%s: read error: %s",
                                    p->path, strerror(errno ? errno : EIO));
                return NULL;
        }
        p->lineno++;

        if (memchr(p->line, '\0', (size_t)n)) {
                config_fail_line(p, p->lineno, "line contains a NUL byte");
                s = "\n";
        } else {
                s = p->line + strspn(p->line, " \t");
                if (s[0] == '[') {
                        config_fail_line(p, p->lineno,
                                         "sections are not supported; write plain 'key = value' lines");
                        s = "\n";
                } else if (p->each && s[0] != ';' && s[0] != '#' && strspn(s, " \t\r\n") != strlen(s) &&
                           !strpbrk(s, "=:")) {
                        /* inih tells only of the first such line: every one is told here. */
                        config_fail_line(p, p->lineno, "expected 'key = value'");
                        p->syntax_line = p->lineno;
                        s = "\n";
                }
        }

        len = strlen(s);
        if (num <= 0 || len + 1 > (size_t)num) {
                config_fail_line(p, p->lineno, "line is longer than %d bytes", num > 2 ? num - 2 : 0);
                s = "\n";
                len = 1;
        }
        memcpy(str, s, len + 1);
        return str;
}

static int config_handler(void *user, const char *section, const char *name, const char *value)
{
        struct config_parser *p = user;
        char why[256], unquoted[CONFIG_ERR_MAX];
        size_t vlen = strlen(value);
        int k;

        if (section && section[0] != '\0') {
                config_fail_line(p, p->lineno, "sections are not supported");
                return 0;
        }

        if (name[0] == '\0') {
                config_fail_line(p, p->lineno, "expected 'key = value'");
                return 0;
        }

        for (k = 0; k < _CONFIG_KEY_MAX; k++)
                if (!strcmp(name, config_keys[k].name))
                        break;
        if (k == _CONFIG_KEY_MAX) {
                config_fail_line(p, p->lineno, "%s: unknown key", name);
                return 0;
        }
        if (p->seen[k]) {
                config_fail_line(p, p->lineno, "%s: duplicate key (first set on line %u)",
                                 name, p->seen[k]);
                return 0;
        }
        p->seen[k] = p->lineno;

        /* key_file = "" reads naturally; take one pair of surrounding quotes off. */
        if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"' && vlen - 2 < sizeof(unquoted)) {
                memcpy(unquoted, value + 1, vlen - 2);
                unquoted[vlen - 2] = '\0';
                value = unquoted;
        }

        why[0] = '\0';
        if (config_set(&p->cfg, &config_keys[k], value, why, sizeof(why)) < 0) {
                config_fail_line(p, p->lineno, "%s: %s", name, why);
                return 0;
        }
        return 1;
}

/* Rules that involve more than one key; blamed on the line of the key to change. */
static void config_check(struct config_parser *p)
{
        const struct config *c = &p->cfg;

        if ((uint64_t)c->max_transfers * 2 > c->slot_count) {
                unsigned int line = p->seen[CONFIG_KEY_MAX_TRANSFERS] ? p->seen[CONFIG_KEY_MAX_TRANSFERS]
                                                                      : p->seen[CONFIG_KEY_SLOT_COUNT];
                char where[32] = "";

                if (line)
                        snprintf(where, sizeof(where), ":%u", line);
                config_fail(p, line ? line : 1, -EINVAL,
                            "%s%s: max_transfers: %u transfers need at least %u receive slots, "
                            "but slot_count is %u (max_transfers * 2 <= slot_count)",
                            p->path, where, c->max_transfers, c->max_transfers * 2, c->slot_count);
        }
        if (c->max_transfers_per_host > c->max_transfers) {
                unsigned int line = p->seen[CONFIG_KEY_MAX_TRANSFERS_PER_HOST];

                config_fail(p, line ? line : 1, -EINVAL,
                            "%s:%u: max_transfers_per_host: %u is more than max_transfers (%u)",
                            p->path, line, c->max_transfers_per_host, c->max_transfers);
        }
        /* Shared by max_transfers, each must still move a chunk within
         * peer_timeout, or its peer (or we) would give up between two. */
        if (c->rate_limit > 0 &&
            c->rate_limit < bucket_rate_min((uint64_t)c->slot_size * c->max_transfers, c->peer_timeout)) {
                unsigned int line = p->seen[CONFIG_KEY_RATE_LIMIT];

                config_fail(p, line ? line : 1, -EINVAL,
                            "%s:%u: rate_limit: %llu bytes/s shared by max_transfers (%u) would "
                            "take longer than peer_timeout (%u s) over one slot of %u bytes each; "
                            "at least %llu, or 0 for no limit",
                            p->path, line ? line : 1, (unsigned long long)c->rate_limit,
                            c->max_transfers, c->peer_timeout, c->slot_size,
                            (unsigned long long)bucket_rate_min((uint64_t)c->slot_size * c->max_transfers,
                                                                c->peer_timeout));
        }
}

static void config_parser_freep(struct config_parser **pp)
{
        struct config_parser *p = *pp;

        if (!p)
                return;
        if (p->f)
                fclose(p->f);
        free(p->line);
        free(p);
}

int config_load(struct config *cfg, const char *path, char *err, size_t errlen)
{
        return config_load_each(cfg, path, NULL, NULL, err, errlen);
}

int config_load_each(struct config *cfg, const char *path,
                     void (*each)(void *userdata, unsigned int line, const char *msg), void *userdata,
                     char *err, size_t errlen)
{
        _cleanup_(config_parser_freep) struct config_parser *p = NULL;
        int r;

        if (err && errlen > 0)
                err[0] = '\0';

        p = calloc(1, sizeof(*p));
        if (!p) {
                if (err)
                        snprintf(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
        }
        p->cfg = *cfg;
        p->path = path;
        p->each = each;
        p->each_data = userdata;

        p->f = fopen(path, "re");
        if (!p->f) {
                r = -errno;
                if (err)
                        snprintf(err, errlen, "%s: cannot open configuration file: %s", path, strerror(-r));
                return r;
        }

        r = ini_parse_stream(config_reader, p, config_handler, p);
        if (r == -2 || r == -1) {
                if (err)
                        snprintf(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
        }
        /* inih reports the first line it disliked; ours may be earlier (or inih's may be syntax). */
        if (r > 0 && (p->err_line == 0 || (unsigned int)r < p->err_line)) {
                p->err_line = 0;
                config_fail_line(p, (unsigned int)r, "expected 'key = value'");
        } else if (r > 0 && p->each && (unsigned int)r != p->syntax_line && (unsigned int)r != p->err_line) {
                /* A line inih refused that the reader let through: still told. */
                char msg[CONFIG_ERR_MAX];

                snprintf(msg, sizeof(msg), "%s:%d: expected 'key = value'", p->path, r);
                p->each(p->each_data, (unsigned int)r, msg);
        }
        if (p->err_line == 0)
                config_check(p);
        if (p->err_line != 0) {
                if (err)
                        snprintf(err, errlen, "%s", p->err);
                return p->err_code;
        }

        *cfg = p->cfg;
        return 0;
}
