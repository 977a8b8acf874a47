#pragma once

/*
 * Each layer's configuration, copied from the daemon's (daemon-config.c):
 * what the layer uses of @cfg into @out, at start and on every reload.
 */

#include "config.h"

struct control_cfg;
struct jobs_cfg;
struct metrics_cfg;

void daemon_jobs_cfg(const struct config *cfg, struct jobs_cfg *out);
void daemon_control_cfg(const struct config *cfg, struct control_cfg *out);
void daemon_metrics_cfg(const struct config *cfg, struct metrics_cfg *out);
