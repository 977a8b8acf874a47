#pragma once

#include <stdbool.h>
#include <event2/event.h>

#include "auth.h"
#include "config.h"

struct engine;
struct jobs;
struct control;

struct daemon {
        struct event_base *base;
        const char *config_path;
        struct config cfg;
        struct auth_key key;            /* from cfg.key_file; len 0 when none */
        struct engine *engine;
        struct jobs *jobs;
        struct control *control;
        bool stopping;
};

/* Parse nothing, run everything: the daemon's whole life. Returns an exit code. */
int daemon_run(const char *config_path);
