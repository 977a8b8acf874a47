#pragma once

#include <stddef.h>

#include "auth.h"
#include "config.h"

/*
 * Parse nothing, run everything: the daemon's whole life. Returns an exit
 * code. @config_path NULL means CONFIG_DEFAULT_PATH, where a missing file
 * means built-in defaults; a file named explicitly must exist.
 *
 * SIGHUP reloads it (runtime-safe keys only): each layer gets its own
 * copy of what it uses (jobs_reconfigure(), control_reconfigure(),
 * metrics_reconfigure(), engine_reconfigure()), replaced whole.
 */
int daemon_run(const char *config_path);

enum daemon_config_source {
        DAEMON_CONFIG_FILE = 0,         /* read from the file */
        DAEMON_CONFIG_DEFAULTS = 1,     /* default path absent: built-in defaults */
};

/* The systemd credential that holds the key when key_file is unset. */
#define DAEMON_KEY_CREDENTIAL   "rdmaxfer.key"

/*
 * Defaults, then @path over them (NULL: the default path), then the key
 * file it names, or without one the credential DAEMON_KEY_CREDENTIAL in
 * $CREDENTIALS_DIRECTORY if it is there. Returns an enum daemon_config_source, or -errno with one
 * line in @err naming the file, line and key.
 */
int daemon_load_config(const char *path, struct config *cfg, struct auth_key *key,
                       char *err, size_t errlen);
/* The same, with every error of the file told to @each (config_load_each()):
 * rdmaxferd --check-config. */
int daemon_load_config_each(const char *path, struct config *cfg, struct auth_key *key,
                            void (*each)(void *userdata, unsigned int line, const char *msg), void *userdata,
                            char *err, size_t errlen);
