#pragma once

/*
 * rdmaxferd.conf: "key = value" lines, '#' or ';' comments (';' also after
 * a value), parsed with libinih. No [sections]; leading whitespace is
 * ignored; a line may hold at most 198 bytes (libinih's line buffer). A
 * value may be wrapped in one pair of double quotes (key_file = "").
 * Unknown keys, bad values and duplicate keys are errors that name the
 * file, line and key. conf/rdmaxferd.conf documents every key.
 */

#include <stdbool.h>
#include <stdint.h>
#include <limits.h>

#include "acl.h"
#include "peername.h"

#define CONFIG_DEFAULT_PATH     RDMAXFER_SYSCONFDIR "/rdmaxferd/rdmaxferd.conf"
#define CONFIG_DEFAULT_PORT     7470
#define CONFIG_GROUP_MAX        63      /* admin_group: bytes of a group name */

enum config_log_level {
        CONFIG_LOG_ERR = 3,
        CONFIG_LOG_WARNING = 4,
        CONFIG_LOG_NOTICE = 5,
        CONFIG_LOG_INFO = 6,
        CONFIG_LOG_DEBUG = 7,
};

/* What a tree's symlinks may point at (rdmaxferd.conf(5)). */
enum config_symlinks {
        CONFIG_SYMLINKS_SAFE = 0,       /* relative, resolving beneath DEST (name_link_check) */
        CONFIG_SYMLINKS_ANY,            /* anything: stored, never followed by the daemon */
        CONFIG_SYMLINKS_NONE,           /* a tree with a symlink is refused */
};

/*
 * Whether a receiver passes a chain's file on (rdmaxferd.conf(5), Relay
 * chains; SECURITY.md). PEERS decides per chain, not per node: it relays
 * only within a bounded set of hosts the admin already trusts.
 */
enum config_relay {
        CONFIG_RELAY_NO = 0,            /* refuse every route */
        CONFIG_RELAY_YES,               /* every hop in relay_peers */
        CONFIG_RELAY_PEERS,             /* and the sender too, and relay_peers not everyone */
};

/* Which names a receiver takes (rdmaxferd.conf(5); common/name.h). */
enum config_names {
        CONFIG_NAMES_ANY = 0,           /* NAME_RULES_ANY: any bytes but '/' and NUL */
        CONFIG_NAMES_UTF8,              /* NAME_RULES_UTF8: printable UTF-8, dotfiles too */
        CONFIG_NAMES_STRICT,            /* NAME_RULES_STRICT: and no leading '.' */
};

/* landing_roots: at most this many directories, in this many bytes. */
#define CONFIG_LANDING_ROOTS_MAX        16
#define CONFIG_LANDING_ROOTS_LEN        4096

/* listen: at most this many addresses, one rail (RDMA device) each. */
#define CONFIG_RAILS_MAX                4

struct config {
        char listen_addr[64];           /* listen = numeric IPv4/IPv6; "" = any; the first rail's */
        /* listen = ADDR ADDR...: every rail's address, listen_addr first;
         * nrails 1 with the wildcard. */
        char rails[CONFIG_RAILS_MAX][64];
        unsigned int nrails;
        uint16_t port;                  /* port = 1..65535 */
        char control_socket[108];       /* control_socket = absolute path */
        char incoming_dir[PATH_MAX];    /* incoming_dir = absolute path */
        uint32_t slot_size;             /* slot_size = 4K..16M, power of two, K/M suffix */
        uint32_t slot_count;            /* slot_count = 2..4096 */
        uint32_t send_slots;            /* send_slots = 2..4096, per outgoing job */
        uint32_t max_transfers;         /* max_transfers = 1..slot_count/2 (each way) */
        /* max_transfers_per_host = 0..max_transfers: receiving from one
         * host at once; 0: max_transfers (config_per_host) */
        uint32_t max_transfers_per_host;
        uint32_t lanes;                 /* lanes = 1..8, queue pairs per transfer */
        uint32_t peer_timeout;          /* peer_timeout = 1..3600 s without progress from the peer */
        uint64_t min_rate;              /* min_rate = bytes/s over each peer_timeout, K/M/G/T, 0 = none */
        uint64_t rate_limit;            /* rate_limit = bytes/s each direction, K/M/G/T, 0 = none */
        int tos;                        /* tos = 0..255 on rdma_cm ids; -1 (empty) = left alone */
        uint64_t max_file_size;         /* max_file_size = bytes, K/M/G/T suffix, 0 = none */
        uint32_t max_job_files;         /* max_job_files = files in one incoming job, 0 = none */
        uint64_t max_job_bytes;         /* max_job_bytes = bytes in one incoming job, K/M/G/T, 0 = none */
        uint64_t min_free;              /* min_free = bytes, K/M/G/T suffix, left free in incoming_dir */
        uint32_t io_timeout;            /* io_timeout = 1..3600 s a disk request may take */
        bool overwrite;                 /* overwrite = yes|no */
        int relay;                      /* relay = no|yes|peers (enum config_relay; default no) */
        int tree_symlinks;              /* tree_symlinks = safe|any|none (enum config_symlinks) */
        bool tree_delete;               /* tree_delete = yes|no: a synced tree may remove what its
                                         * source lacks (xferctl send --delete; default no) */
        int names;                      /* names = any|utf8|strict (enum config_names) */
        struct acl allow_peers;         /* allow_peers = CIDR list, empty = any */
        struct acl relay_peers;         /* relay_peers = CIDR list a relay sends on to, empty = any */
        bool relay_peers_set;           /* ... given; unset: allow_peers (config_relay_peers) */
        char key_file[PATH_MAX];        /* key_file = path, "" = no key */
        int log_level;                  /* log_level = err|warning|notice|info|debug */
        uint32_t max_clients_per_user;  /* max_clients_per_user = 1..64 control connections per uid */
        uint32_t max_queued_per_user;   /* max_queued_per_user = 1..256 queued jobs per uid */
        uint32_t client_idle_timeout;   /* client_idle_timeout = 1..3600 s without a request */
        char admin_group[CONFIG_GROUP_MAX + 1]; /* admin_group = group name or gid; "" = none */
        /* peer_names = a pattern (peername.h) xferctl maps peers' names through; "" = none */
        char peer_names[PEERNAME_PATTERN_MAX + 1];
        uint32_t retry_max;             /* retry_max = 0..100 attempts after the first, 0 = never retry */
        uint32_t retry_window;          /* retry_window = 1..604800 s after a job's first failure */
        uint32_t retry_delay_max;       /* retry_delay_max = 1..3600 s, the backoff's cap */
        char metrics_file[PATH_MAX];    /* metrics_file = absolute path of a file; "" = none */
        uint32_t metrics_interval;      /* metrics_interval = 1..3600 s between writes */
        char partial_dir[PATH_MAX];     /* partial_dir = absolute path; "" = never resume */
        uint32_t partial_retention;     /* partial_retention = 1..31536000 s a partial is kept */
        uint64_t partial_max_bytes;     /* partial_max_bytes = bytes, K/M/G/T, all partials; 0 = none */
        /* landing_roots = absolute directories, space separated, a user's
         * files may land beneath (rdmaxfer-lander); "" = no user landing.
         * Kept in normal form, one space between. */
        char landing_roots[CONFIG_LANDING_ROOTS_LEN];
        bool allow_root_landing;        /* allow_root_landing = yes|no: uid 0 may land files */
        /* landing_max_age = 0..2592000 s: a job's MUNGE credential past its
         * TTL still proves the job within this long of its making, where
         * key_file is set (rdmaxfer-lander); 0 = MUNGE's TTL alone. */
        uint32_t landing_max_age;
        char lander_socket[108];        /* lander_socket = absolute path: rdmaxfer-lander's */
};

/* The hosts a relay may pass a chain's file on to: relay_peers, or
 * where it is not set, allow_peers. */
/* The transfers one host may have received at once: max_transfers_per_host,
 * or unset (0), max_transfers: no cap of its own. */
static inline uint32_t config_per_host(const struct config *cfg)
{
        return cfg->max_transfers_per_host ? cfg->max_transfers_per_host : cfg->max_transfers;
}

static inline const struct acl *config_relay_peers(const struct config *cfg)
{
        return cfg->relay_peers_set ? &cfg->relay_peers : &cfg->allow_peers;
}

/* Fill @cfg with the built-in defaults. */
void config_init(struct config *cfg);
void config_deinit(struct config *cfg);

/*
 * Parse @path over the defaults already in @cfg. Returns 0, or -errno with
 * a one-line message in @err ("/etc/rdmaxferd/rdmaxferd.conf:12: slot_size:
 * must be a power of two between 4K and 16M"). A missing file is -ENOENT.
 * Checks cross-key rules (max_transfers * 2 <= slot_count) after parsing.
 */
int config_load(struct config *cfg, const char *path, char *err, size_t errlen);
/*
 * The same, and @each is told of every error as it is found, each with
 * its line and the message config_load() would give for it alone (a
 * line that is not 'key = value', an unknown or duplicate key, a bad
 * value), for rdmaxferd --check-config; the cross-key rules only when
 * every line was good (they would judge values that were refused).
 * Lines come in order, but for inih's own first refusal, told last.
 */
int config_load_each(struct config *cfg, const char *path,
                     void (*each)(void *userdata, unsigned int line, const char *msg), void *userdata,
                     char *err, size_t errlen);

/*
 * A byte count or a rate in bytes per second as the configuration writes
 * it (xferctl send --bwlimit too): decimal digits, then optionally one of
 * K, M, G, T (either case), powers of 1024. 0, -EINVAL or -ERANGE.
 */
int config_parse_size(const char *s, uint64_t *out);
