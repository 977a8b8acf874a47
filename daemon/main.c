/* rdmaxferd: parse the command line, then daemon_run(). */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-build.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: rdmaxferd [OPTIONS]\n"
                "\n"
                "RDMA file-transfer daemon: receives files into its incoming directory\n"
                "and sends the files xferctl submits over its control socket.\n"
                "\n"
                "  -c, --config PATH   configuration file (default %s;\n"
                "                      if that is absent, built-in defaults apply)\n"
                "      --check-config  parse the configuration and key file, report, exit\n"
                "      --list-partials list the interrupted transfers kept for resuming, exit\n"
                "  -h, --help          show this help\n"
                "      --version       show the version\n",
                CONFIG_DEFAULT_PATH);
}

/* --check-config's errors, every one, to print in line order. */
struct check_errors {
        struct check_error {
                unsigned int line;
                char *msg;
        } *e;
        size_t n, cap;
        bool lost;                      /* out of memory: some not kept */
};

static void check_error_add(void *userdata, unsigned int line, const char *msg)
{
        struct check_errors *c = userdata;

        if (c->n == c->cap) {
                size_t cap = c->cap ? 2 * c->cap : 16;
                struct check_error *e = reallocarray(c->e, cap, sizeof(*e));

                if (!e) {
                        c->lost = true;
                        return;
                }
                c->e = e;
                c->cap = cap;
        }
        c->e[c->n].msg = strdup(msg);
        if (!c->e[c->n].msg) {
                c->lost = true;
                return;
        }
        c->e[c->n++].line = line;
}

static int check_error_cmp(const void *a, const void *b)
{
        const struct check_error *x = a, *y = b;

        return (x->line > y->line) - (x->line < y->line);
}

static int check_config(const char *path)
{
        const char *shown = path ? path : CONFIG_DEFAULT_PATH;
        struct check_errors c = { 0 };
        struct config cfg;
        struct auth_key key = { 0 };
        char err[1024];
        int r;

        r = daemon_load_config_each(path, &cfg, &key, check_error_add, &c, err, sizeof(err));
        auth_key_clear(&key);
        config_deinit(&cfg);
        /* Every error of the file, in line order; else the one there is (the key file's, ...). */
        qsort(c.e, c.n, sizeof(*c.e), check_error_cmp);
        for (size_t i = 0; i < c.n; i++) {
                fprintf(stderr, "rdmaxferd: %s\n", c.e[i].msg);
                free(c.e[i].msg);
        }
        free(c.e);
        if (r < 0) {
                if (c.n == 0)
                        fprintf(stderr, "rdmaxferd: %s\n", err);
                else if (c.n > 1)
                        fprintf(stderr, "rdmaxferd: %s: %zu errors%s\n", shown, c.n,
                                c.lost ? " (and more, out of memory)" : "");
                return EXIT_FAILURE;
        }
        if (r == DAEMON_CONFIG_DEFAULTS)
                printf("rdmaxferd: %s: not found; built-in defaults apply\n", shown);
        else
                printf("rdmaxferd: %s: ok\n", shown);
        return EXIT_SUCCESS;
}

static int list_partials(const char *path)
{
        struct config cfg;
        struct auth_key key = { 0 };
        char err[1024];
        int r;

        r = daemon_load_config(path, &cfg, &key, err, sizeof(err));
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
        r = engine_print_partials(cfg.partial_dir, stdout);
        if (r < 0)
                fprintf(stderr, "rdmaxferd: partial_dir %s: %s\n", cfg.partial_dir, strerror(-r));
        config_deinit(&cfg);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char *argv[])
{
        enum { OPT_CHECK_CONFIG = 0x100, OPT_VERSION, OPT_LIST_PARTIALS };
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
                { "list-partials", no_argument, NULL, OPT_LIST_PARTIALS },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {}
        };
        const char *config_path = NULL;
        int c, check = 0;

        while ((c = getopt_long(argc, argv, "c:h", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        config_path = optarg;
                        break;
                case OPT_CHECK_CONFIG:
                        check = 1;
                        break;
                case OPT_LIST_PARTIALS:
                        check = 2;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                case OPT_VERSION:
                        printf("rdmaxferd %s\n", RDMAXFER_VERSION);
                        return EXIT_SUCCESS;
                default:
                        fprintf(stderr, "Try 'rdmaxferd --help'.\n");
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "rdmaxferd: unexpected argument '%s'\nTry 'rdmaxferd --help'.\n",
                        argv[optind]);
                return 2;
        }

        if (check == 2)
                return list_partials(config_path);
        if (check)
                return check_config(config_path);
        return daemon_run(config_path);
}
