#pragma once

/* rdmaxferd --list-partials: print what the configured partial_dir holds
 * (rdmaxferd(8), Resuming). An exit status. */
int partials_list(const char *config_path);
