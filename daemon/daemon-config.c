/*
 * The daemon's configuration: loading it (the file, then the key file or
 * the systemd credential), and each layer's own copy of what it uses.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-build.h"
#include "control.h"
#include "daemon.h"
#include "daemon-config.h"
#include "jobs.h"
#include "log.h"
#include "metrics.h"

/*
 * Without key_file, the key may come as the systemd credential
 * DAEMON_KEY_CREDENTIAL (LoadCredential= in the unit): systemd, as root,
 * reads the source, which can stay root's own (0600), and hands the
 * service a copy only it can read. 0 (none, or loaded) or -errno.
 */
static int daemon_load_credential(struct auth_key *key, char *err, size_t errlen)
{
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        char path[PATH_MAX];
        int r;

        err[0] = '\0';
        if (!dir || !dir[0])
                return 0;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, DAEMON_KEY_CREDENTIAL) >= sizeof(path))
                return -ENAMETOOLONG;
        if (access(path, F_OK) < 0)
                return errno == ENOENT ? 0 : -errno;
        r = auth_key_load_credential(key, path, err, errlen);
        if (r == 0)
                log_info("pre-shared key from credential %s", DAEMON_KEY_CREDENTIAL);
        return r;
}

int daemon_load_config(const char *path, struct config *cfg, struct auth_key *key,
                       char *err, size_t errlen)
{
        return daemon_load_config_each(path, cfg, key, NULL, NULL, err, errlen);
}

int daemon_load_config_each(const char *path, struct config *cfg, struct auth_key *key,
                            void (*each)(void *userdata, unsigned int line, const char *msg), void *userdata,
                            char *err, size_t errlen)
{
        int source = DAEMON_CONFIG_FILE;
        char kerr[512];
        int r;

        config_init(cfg);
        auth_key_clear(key);
        r = config_load_each(cfg, path ? path : CONFIG_DEFAULT_PATH, each, userdata, err, errlen);
        if (r == -ENOENT && !path) {
                config_init(cfg);
                source = DAEMON_CONFIG_DEFAULTS;
                if (errlen)
                        err[0] = '\0';
        } else if (r < 0) {
                if (errlen && !err[0])
                        snprintf(err, errlen, "%s: %s", path ? path : CONFIG_DEFAULT_PATH,
                                 strerror(-r));
                return r;
        }
        if (cfg->key_file[0]) {
                r = auth_key_load(key, cfg->key_file, kerr, sizeof(kerr));
                if (r < 0) {
                        snprintf(err, errlen, "%s: key_file: %s", path ? path : CONFIG_DEFAULT_PATH,
                                 kerr[0] ? kerr : strerror(-r));
                        return r;
                }
                return source;
        }
        r = daemon_load_credential(key, kerr, sizeof(kerr));
        if (r < 0) {
                snprintf(err, errlen, "credential %s: %s", DAEMON_KEY_CREDENTIAL,
                         kerr[0] ? kerr : strerror(-r));
                return r;
        }
        return source;
}

void daemon_jobs_cfg(const struct config *cfg, struct jobs_cfg *out)
{
        *out = (struct jobs_cfg){
                .port = cfg->port,
                .max_transfers = cfg->max_transfers,
                .max_queued_per_user = cfg->max_queued_per_user,
                .retry_max = cfg->retry_max,
                .retry_window = cfg->retry_window,
                .retry_delay_max = cfg->retry_delay_max,
                .slot_size = cfg->slot_size,
                .peer_timeout = cfg->peer_timeout,
        };
}

void daemon_control_cfg(const struct config *cfg, struct control_cfg *out)
{
        *out = (struct control_cfg){
                .max_clients_per_user = cfg->max_clients_per_user,
                .client_idle_timeout = cfg->client_idle_timeout,
                .io_timeout = cfg->io_timeout,
        };
        snprintf(out->admin_group, sizeof(out->admin_group), "%s", cfg->admin_group);
        snprintf(out->peer_names, sizeof(out->peer_names), "%s", cfg->peer_names);
        snprintf(out->listen, sizeof(out->listen), "%s", cfg->listen_addr);
}

void daemon_metrics_cfg(const struct config *cfg, struct metrics_cfg *out)
{
        *out = (struct metrics_cfg){
                .interval = cfg->metrics_interval,
                .io_timeout = cfg->io_timeout,
        };
        snprintf(out->path, sizeof(out->path), "%s", cfg->metrics_file);
}
