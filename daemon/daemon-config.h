#pragma once

/*
 * Each layer's configuration, copied from the daemon's (daemon-config.c):
 * what the layer uses of @cfg into @out, at start and on every reload.
 */

#include "config.h"

struct metrics_cfg;

void daemon_metrics_cfg(const struct config *cfg, struct metrics_cfg *out);
