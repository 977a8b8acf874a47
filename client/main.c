#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xferctl.h"

int main(int argc, char **argv)
{
        static const struct option opts[] = {
                { "socket", required_argument, NULL, 's' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {}
        };
        const char *socket_path = NULL;
        int c;

        /* A daemon that goes away mid-request is an error to report, not a signal to die of. */
        signal(SIGPIPE, SIG_IGN);

        opterr = 0;
        /* '+': stop at the command; its own options are parsed by the command. */
        while ((c = getopt_long(argc, argv, "+:hs:V", opts, NULL)) != -1) {
                switch (c) {
                case 's':
                        socket_path = optarg;
                        break;
                case 'h':
                        xferctl_usage(stdout);
                        return XFERCTL_EXIT_OK;
                case 'V':
                        printf("xferctl %s\n", RDMAXFER_VERSION);
                        return XFERCTL_EXIT_OK;
                case ':':
                        xferctl_say("option '%s' needs an argument (see xferctl --help)",
                                    argv[optind - 1]);
                        return XFERCTL_EXIT_USAGE;
                default:
                        if (optopt && strncmp(argv[optind - 1], "--", 2) != 0)
                                xferctl_say("unknown option '-%c' (see xferctl --help)", optopt);
                        else
                                xferctl_say("unknown option '%s' (see xferctl --help)",
                                            argv[optind - 1]);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                xferctl_usage(stderr);
                return XFERCTL_EXIT_USAGE;
        }

        /* The flag wins over the environment, which wins over the default. */
        if (!socket_path || !*socket_path)
                socket_path = getenv(XFERCTL_SOCKET_ENV);
        if (!socket_path || !*socket_path)
                socket_path = XFERCTL_SOCKET_DEFAULT;

        return xferctl_run(socket_path, argc - optind, argv + optind);
}
