/* rdmaxferd.conf parsing: defaults, every key, and errors that name file:line:key. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "tap.h"

static char dir[] = "/tmp/test-config-XXXXXX";
static char path[PATH_MAX];

static void write_conf(const char *text)
{
        FILE *f = fopen(path, "w");

        if (!f)
                abort();
        fputs(text, f);
        fclose(f);
}

/* Load @text over the defaults; *err gets the message. */
static int load(const char *text, struct config *cfg, char *err, size_t errlen)
{
        config_init(cfg);
        write_conf(text);
        return config_load(cfg, path, err, errlen);
}

/* The message must start "PATH:LINE: KEY: " and contain @why. */
static void expect_error(const char *text, int line, const char *key, const char *why)
{
        struct config cfg;
        char err[512], want[PATH_MAX + 128];
        int r = load(text, &cfg, err, sizeof(err));

        if (key)
                snprintf(want, sizeof(want), "%s:%d: %s: ", path, line, key);
        else
                snprintf(want, sizeof(want), "%s:%d: ", path, line);
        if (!ok(r == -EINVAL && strncmp(err, want, strlen(want)) == 0 && strstr(err, why),
                "error for %s on line %d: \"%s\"", key ? key : "(line)", line, why))
                diag("r=%d err=\"%s\" want prefix \"%s\"", r, err, want);
}

/* The whole message must be "PATH" + @msg, and the result -EINVAL. */
static void expect_message(const char *text, const char *msg)
{
        struct config cfg;
        char err[512], want[PATH_MAX + 256];
        int r = load(text, &cfg, err, sizeof(err));

        snprintf(want, sizeof(want), "%s%s", path, msg);
        if (!ok(r == -EINVAL && strcmp(err, want) == 0, "message \"%s\"", msg))
                diag("r=%d err=\"%s\"", r, err);
}

static void test_defaults(void)
{
        struct config c;

        config_init(&c);
        ok(c.listen_addr[0] == '\0', "listen: any");
        is_int(c.port, 7470, "port 7470");
        is_str(c.control_socket, "/run/rdmaxferd/control.sock", "control_socket");
        is_str(c.incoming_dir, "/var/lib/rdmaxferd/incoming", "incoming_dir");
        is_int(c.slot_size, 1 << 20, "slot_size 1M");
        is_int(c.slot_count, 64, "slot_count 64");
        is_int(c.send_slots, 16, "send_slots 16");
        is_int(c.max_transfers, 4, "max_transfers 4");
        is_int(c.max_transfers_per_host, 0, "max_transfers_per_host unset");
        is_int(config_per_host(&c), 4, "unset: one host may take max_transfers");
        c.max_transfers_per_host = 2;
        is_int(config_per_host(&c), 2, "set: its value");
        c.max_transfers_per_host = 0;
        is_int(c.lanes, 4, "lanes 4");
        is_int(c.peer_timeout, 30, "peer_timeout 30 s");
        is_int(c.min_rate, 1 << 20, "min_rate 1 MiB/s");
        is_int(c.rate_limit, 0, "rate_limit: none");
        is_int(c.tos, -1, "tos: left to the kernel");
        ok(c.max_file_size == 1ull << 40, "max_file_size 1 TiB");
        is_int(c.max_job_files, 1000000, "max_job_files a million");
        ok(c.max_job_bytes == 16ull << 40, "max_job_bytes 16 TiB");
        is_int(c.min_free, 1ull << 30, "min_free 1G");
        is_int(c.io_timeout, 60, "io_timeout 60 s");
        ok(!c.overwrite, "overwrite off");
        ok(!c.tree_delete, "tree_delete off");
        ok(c.landing_roots[0] == '\0', "landing_roots: none, no user landing");
        ok(!c.allow_root_landing, "allow_root_landing off");
        is_str(c.lander_socket, "/run/rdmaxfer-lander.sock", "lander_socket: the socket unit's");
        is_int(c.allow_peers.n, 0, "allow_peers: anyone");
        ok(c.key_file[0] == '\0', "no key file");
        is_int(c.log_level, CONFIG_LOG_INFO, "log_level info");
        is_int(c.retry_max, 5, "retry_max 5");
        is_int(c.retry_window, 600, "retry_window 600 s");
        is_int(c.retry_delay_max, 60, "retry_delay_max 60 s");

        char err[256];
        is_int(load("", &c, err, sizeof(err)), 0, "an empty file is fine");
        is_int(c.port, 7470, "and leaves the defaults");
        config_deinit(&c);
}

static void test_full(void)
{
        struct config c;
        char err[512];
        int r;

        r = load("# rdmaxferd.conf\n"
                 "; both comment styles\n"
                 "\n"
                 "listen = 198.18.0.1\n"
                 "port=7471\n"
                 "  control_socket = /run/x/ctl.sock\n"
                 "\tincoming_dir = /srv/in\n"
                 "slot_size = 256K\n"
                 "slot_count = 128\r\n"
                 "send_slots = 32\n"
                 "max_transfers = 64\n"
                 "lanes = 2\n"
                 "min_rate = 64K\n"
                 "max_file_size = 2G\n"
                 "max_job_files = 0\n"
                 "max_job_bytes = 3T\n"
                 "overwrite = yes\n"
                 "allow_peers = 198.18.0.0/15, fd00::/8\n"
                 "key_file = \"/etc/rdmaxferd/key\"\n"
                 "log_level = debug ; inline comment\n",
                 &c, err, sizeof(err));
        if (!is_int(r, 0, "a file using every key loads"))
                diag("%s", err);
        is_str(c.listen_addr, "198.18.0.1", "listen");
        is_int(c.port, 7471, "port");
        is_str(c.control_socket, "/run/x/ctl.sock", "indented line is a key, not a continuation");
        is_str(c.incoming_dir, "/srv/in", "tab-indented line");
        is_int(c.slot_size, 256 * 1024, "slot_size 256K");
        is_int(c.slot_count, 128, "CRLF line");
        is_int(c.send_slots, 32, "send_slots");
        is_int(c.max_transfers, 64, "max_transfers = slot_count / 2 is allowed");
        is_int(c.lanes, 2, "lanes");
        is_int(c.min_rate, 64 * 1024, "min_rate 64K");
        is_int(c.max_job_files, 0, "max_job_files 0: no limit");
        ok(c.max_job_bytes == 3ull << 40, "max_job_bytes 3T");
        is_int(c.max_file_size, 2ull << 30, "max_file_size 2G");
        ok(c.overwrite, "overwrite yes");
        is_int(c.allow_peers.n, 2, "two peers");
        is_str(c.key_file, "/etc/rdmaxferd/key", "quotes stripped");
        is_int(c.log_level, CONFIG_LOG_DEBUG, "inline ';' comment stripped");

        r = load("listen = fd00::1\nmax_file_size = 1T\nkey_file = \"\"\nslot_size=16m\n", &c, err, sizeof(err));
        is_int(r, 0, "IPv6 listen, 1T, empty quoted key_file");
        is_str(c.listen_addr, "fd00::1", "IPv6 listen address");
        is_int(c.max_file_size, 1ull << 40, "T is 2^40");
        ok(c.key_file[0] == '\0', "key_file \"\" means none");
        is_int(c.slot_size, 16 << 20, "lower-case suffix, 16M is the limit");

        r = load("listen =\nallow_peers =\n", &c, err, sizeof(err));
        ok(r == 0 && c.listen_addr[0] == '\0' && c.allow_peers.n == 0, "empty listen and allow_peers mean any");

        /* Where a relay passes a chain's file on: allow_peers unless relay_peers says. */
        r = load("allow_peers = 198.18.0.0/24\n", &c, err, sizeof(err));
        ok(r == 0 && config_relay_peers(&c) == &c.allow_peers, "relay_peers unset: allow_peers");
        r = load("allow_peers = 198.18.0.0/24\nrelay_peers = 10.0.0.0/8\n", &c, err, sizeof(err));
        ok(r == 0 && config_relay_peers(&c) == &c.relay_peers && c.relay_peers.n == 1, "relay_peers given: its own");
        r = load("allow_peers = 198.18.0.0/24\nrelay_peers =\n", &c, err, sizeof(err));
        ok(r == 0 && config_relay_peers(&c) == &c.relay_peers && c.relay_peers.n == 0,
           "relay_peers empty: any host, whatever allow_peers says");
        expect_error("relay_peers = 10.0.0.0/33\n", 1, "relay_peers", "is not an address");

        /* landing_roots: kept in normal form, one space between. */
        r = load("landing_roots =  /scratch\t/home /tmp  /dev/shm \nallow_root_landing = yes\n", &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.landing_roots, "/scratch /home /tmp /dev/shm") == 0 && c.allow_root_landing,
           "landing_roots: four directories; allow_root_landing yes");
        r = load("lander_socket = /tmp/l.sock\n", &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.lander_socket, "/tmp/l.sock") == 0, "lander_socket set");
        expect_error("lander_socket = l.sock\n", 1, "lander_socket", "absolute");
        expect_error("lander_socket =\n", 1, "lander_socket", "");
        r = load("landing_roots =\n", &c, err, sizeof(err));
        ok(r == 0 && c.landing_roots[0] == '\0', "landing_roots empty: none");
        expect_error("landing_roots = scratch\n", 1, "landing_roots", "'scratch' is not an absolute directory");
        expect_error("landing_roots = /scratch /\n", 1, "landing_roots", "'/' is not");
        expect_error("landing_roots = /scratch/\n", 1, "landing_roots", "'/scratch/' is not");
        expect_error("landing_roots = /a/../etc\n", 1, "landing_roots", "'/a/../etc' is not");
        expect_error("landing_roots = /a//b\n", 1, "landing_roots", "'/a//b' is not");
        expect_error("landing_roots = /1 /2 /3 /4 /5 /6 /7 /8 /9 /10 /11 /12 /13 /14 /15 /16 /17\n", 1,
                     "landing_roots", "more than 16 directories");
        expect_error("allow_root_landing = maybe\n", 1, "allow_root_landing", "");

        /* relay: peers (the default, decided per chain, recv-offer.c), yes or no. */
        r = load("", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_PEERS && config_relay_peers(&c)->n == 0,
           "relay unset: peers, among no one while allow_peers is empty");
        r = load("relay = no\n", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_NO, "relay = no");
        r = load("relay = yes\n", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_YES, "relay = yes");
        r = load("relay = true\n", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_YES, "relay = true, as any boolean");
        r = load("relay = 0\n", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_NO, "relay = 0");
        r = load("relay = Peers\nallow_peers = 198.18.0.0/24\n", &c, err, sizeof(err));
        ok(r == 0 && c.relay == CONFIG_RELAY_PEERS && config_relay_peers(&c) == &c.allow_peers,
           "relay = peers (any case), bounded by allow_peers");
        expect_error("relay = maybe\n", 1, "relay", "yes, no or peers");
        expect_error("relay =\n", 1, "relay", "yes, no or peers");

        static const struct {
                const char *v;
                bool want;
        } bools[] = { { "yes", true }, { "no", false }, { "true", true }, { "false", false },
                      { "1", true }, { "0", false }, { "YES", true } };
        for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
                char text[64];

                snprintf(text, sizeof(text), "overwrite = %s\n", bools[i].v);
                r = load(text, &c, err, sizeof(err));
                ok(r == 0 && c.overwrite == bools[i].want, "overwrite = %s", bools[i].v);
        }

        r = load("", &c, err, sizeof(err));
        ok(r == 0 && c.tree_symlinks == CONFIG_SYMLINKS_SAFE, "tree_symlinks: safe by default");
        r = load("tree_symlinks = any\n", &c, err, sizeof(err));
        ok(r == 0 && c.tree_symlinks == CONFIG_SYMLINKS_ANY, "tree_symlinks = any");
        r = load("tree_symlinks = all\n", &c, err, sizeof(err));
        ok(r == 0 && c.tree_symlinks == CONFIG_SYMLINKS_ANY, "tree_symlinks = all (xferctl's --links all) is any");
        r = load("tree_symlinks = None\n", &c, err, sizeof(err));
        ok(r == 0 && c.tree_symlinks == CONFIG_SYMLINKS_NONE, "tree_symlinks = None");
        expect_error("tree_symlinks = yes\n", 1, "tree_symlinks", "safe, any or none");
        r = load("", &c, err, sizeof(err));
        ok(r == 0 && c.names == CONFIG_NAMES_ANY, "names: any by default");
        r = load("names = UTF8\n", &c, err, sizeof(err));
        ok(r == 0 && c.names == CONFIG_NAMES_UTF8, "names = UTF8");
        r = load("names = strict\n", &c, err, sizeof(err));
        ok(r == 0 && c.names == CONFIG_NAMES_STRICT, "names = strict");
        expect_error("names = latin1\n", 1, "names", "must be any, utf8 or strict");
        r = load("tree_delete = yes\n", &c, err, sizeof(err));
        ok(r == 0 && c.tree_delete, "tree_delete = yes");
        r = load("tree_delete = no\n", &c, err, sizeof(err));
        ok(r == 0 && !c.tree_delete, "tree_delete = no");
        expect_error("tree_delete = some\n", 1, "tree_delete", "yes or no");

        static const struct {
                const char *v;
                int want;
        } levels[] = { { "err", CONFIG_LOG_ERR }, { "warning", CONFIG_LOG_WARNING },
                       { "notice", CONFIG_LOG_NOTICE }, { "info", CONFIG_LOG_INFO } };
        for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
                char text[64];

                snprintf(text, sizeof(text), "log_level = %s\n", levels[i].v);
                r = load(text, &c, err, sizeof(err));
                ok(r == 0 && c.log_level == levels[i].want, "log_level = %s", levels[i].v);
        }
}

static void test_errors(void)
{
        expect_error("port = 7470\nprot = 1\n", 2, "prot", "unknown key");
        expect_error("port = 0\n", 1, "port", "1 to 65535");
        expect_error("port = 65536\n", 1, "port", "1 to 65535");
        expect_error("port = 70x\n", 1, "port", "whole number");
        expect_error("port = -1\n", 1, "port", "whole number");
        expect_error("port = 18446744073709551617\n", 1, "port", "whole number");
        expect_error("port = 7470 # trailing hash\n", 1, "port", "whole number");
        expect_error("\n\nslot_size = 3000\n", 3, "slot_size", "power of two");
        expect_error("slot_size = 5K\n", 1, "slot_size", "power of two");
        expect_error("slot_size = 2K\n", 1, "slot_size", "between 4K and 16M");
        expect_error("slot_size = 32M\n", 1, "slot_size", "between 4K and 16M");
        expect_error("slot_size = 1MB\n", 1, "slot_size", "power of two");
        expect_error("slot_count = 1\n", 1, "slot_count", "2 to 4096");
        expect_error("slot_count = 4097\n", 1, "slot_count", "2 to 4096");
        expect_error("send_slots = 0\n", 1, "send_slots", "2 to 4096");
        expect_error("max_transfers = 0\n", 1, "max_transfers", "1 to");
        expect_error("lanes = 0\n", 1, "lanes", "1 to 8");
        expect_error("lanes = 9\n", 1, "lanes", "1 to 8");
        expect_error("peer_timeout = 0\n", 1, "peer_timeout", "1 to 3600");
        expect_error("peer_timeout = 3601\n", 1, "peer_timeout", "1 to 3600");
        expect_error("max_file_size = 1P\n", 1, "max_file_size", "suffix");
        expect_error("io_timeout = 0\n", 1, "io_timeout", "1 to 3600");
        expect_error("io_timeout = 3601\n", 1, "io_timeout", "1 to 3600");
        expect_error("min_free = 5%\n", 1, "min_free", "0 for no floor");
        expect_error("min_free = 1P\n", 1, "min_free", "suffix");
        expect_error("max_file_size = 99999999999T\n", 1, "max_file_size", "suffix");
        expect_error("max_file_size = \n", 1, "max_file_size", "size");
        expect_error("min_rate = 2T\n", 1, "min_rate", "up to 1T");
        expect_error("min_rate = 1M/s\n", 1, "min_rate", "bytes per second");
        expect_error("min_rate = -1\n", 1, "min_rate", "0 for no floor");
        expect_error("overwrite = maybe\n", 1, "overwrite", "yes or no");
        expect_error("listen = localhost\n", 1, "listen", "numeric IPv4 or IPv6");
        expect_error("listen = 10.0.0.256\n", 1, "listen", "numeric");
        expect_error("control_socket = run/ctl.sock\n", 1, "control_socket", "absolute path");
        expect_error("control_socket = /run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\n", 1, "control_socket", "longer than 107");
        expect_error("incoming_dir = incoming\n", 1, "incoming_dir", "absolute path");
        expect_error("incoming_dir =\n", 1, "incoming_dir", "absolute path");
        expect_error("key_file = key.hex\n", 1, "key_file", "absolute path");
        expect_error("allow_peers = 10.0.0.0/33\n", 1, "allow_peers", "'10.0.0.0/33'");
        expect_error("allow_peers = 10.0.0.0/8, example.com\n", 1, "allow_peers", "'example.com'");
        expect_error("log_level = loud\n", 1, "log_level", "err, warning");
        expect_error("port = 1\nlisten = ::1\nport = 2\n", 3, "port", "duplicate key (first set on line 1)");
        expect_error("port = 1\n  port = 2\n", 2, "port", "duplicate");
        expect_error("port = 1\n[daemon]\nport = 2\n", 2, NULL, "sections are not supported");
        expect_error("[daemon]\n", 1, NULL, "sections are not supported");
        expect_error("port = 1\njust some words\n", 2, NULL, "expected 'key = value'");
        expect_error("= 7470\n", 1, NULL, "expected 'key = value'");
        /* The first error wins, whichever kind it is. */
        expect_error("bogus\nport = 0\n", 1, NULL, "expected 'key = value'");
        expect_error("port = 0\nbogus\n", 1, "port", "1 to 65535");

        char longline[600];
        snprintf(longline, sizeof(longline), "port = 1\nincoming_dir = /%0500d\n", 0);
        expect_error(longline, 2, NULL, "line is longer than");

        /* Cross-key: blamed on max_transfers' line. */
        expect_error("\nmax_transfers = 33\n", 2, "max_transfers", "slot_count is 64");
        expect_error("slot_count = 8\nmax_transfers = 5\n", 2, "max_transfers", "max_transfers * 2 <= slot_count");
        expect_error("slot_count = 6\n", 1, "max_transfers", "slot_count is 6");
        expect_error("max_transfers = 3\n\nmax_transfers_per_host = 4\n", 3, "max_transfers_per_host",
                     "more than max_transfers");
        expect_error("max_transfers_per_host = 2049\n", 1, "max_transfers_per_host", "0 to 2048");
}

/* Every numeric key at its limits, and stored at the width of its field. */
static void test_numbers(void)
{
        struct config c;
        char err[512];
        int r;

        /* Reverse field order: a store wider than its field would clobber one set before it. */
        r = load("max_file_size = 18446744073709551615\n"
                 "lanes = 8\n"
                 "max_transfers = 2048\n"
                 "send_slots = 4096\n"
                 "slot_count = 4096\n"
                 "slot_size = 4096\n"
                 "port = 65535\n", &c, err, sizeof(err));
        if (!is_int(r, 0, "every numeric key at its maximum (slot_size at its minimum)"))
                diag("%s", err);
        ok(c.max_file_size == UINT64_MAX, "max_file_size 2^64 - 1");
        is_int(c.lanes, 8, "lanes 8");
        is_int(c.max_transfers, 2048, "max_transfers 2048");
        is_int(c.send_slots, 4096, "send_slots 4096");
        is_int(c.slot_count, 4096, "slot_count 4096");
        is_int(c.slot_size, 4096, "slot_size 4096, no suffix");
        is_int(c.port, 65535, "port 65535");
        ok(c.listen_addr[0] == '\0', "listen untouched");
        is_str(c.control_socket, "/run/rdmaxferd/control.sock", "control_socket untouched");
        ok(!c.overwrite && c.log_level == CONFIG_LOG_INFO, "overwrite and log_level untouched");

        r = load("slot_count = 2\nmax_transfers = 1\nsend_slots = 2\nlanes = 1\nport = 1\n",
                 &c, err, sizeof(err));
        ok(r == 0 && c.slot_count == 2 && c.max_transfers == 1 && c.send_slots == 2 && c.lanes == 1 &&
           c.port == 1, "every numeric key at its minimum");

        r = load("port = 007\n", &c, err, sizeof(err));
        ok(r == 0 && c.port == 7, "leading zeros are decimal, not octal");
        r = load("max_file_size = 0\nslot_size = 8k\n", &c, err, sizeof(err));
        ok(r == 0 && c.max_file_size == 0 && c.slot_size == 8192, "max_file_size 0, slot_size 8k");
        r = load("min_rate = 0\n", &c, err, sizeof(err));
        ok(r == 0 && c.min_rate == 0, "min_rate 0: no floor");
        r = load("min_rate = 1T\n", &c, err, sizeof(err));
        ok(r == 0 && c.min_rate == 1ull << 40, "min_rate up to 1T");
        r = load("min_free = 4M\nio_timeout = 5\n", &c, err, sizeof(err));
        ok(r == 0 && c.min_free == 4u << 20 && c.io_timeout == 5, "min_free 4M, io_timeout 5 s");
        r = load("min_free = 0\n", &c, err, sizeof(err));
        ok(r == 0 && c.min_free == 0, "min_free 0: no floor");
        r = load("max_file_size = 12345\n", &c, err, sizeof(err));
        ok(r == 0 && c.max_file_size == 12345, "max_file_size in plain bytes");
        r = load("max_file_size = 16777215T\n", &c, err, sizeof(err));
        ok(r == 0 && c.max_file_size == 16777215ull << 40, "the largest size in T");
        r = load("key_file =\n", &c, err, sizeof(err));
        ok(r == 0 && c.key_file[0] == '\0', "key_file with no value means none");

        /* sun_path holds 107 bytes and the NUL. */
        char text[256], sock[128];
        snprintf(sock, sizeof(sock), "/%0106d", 0);
        snprintf(text, sizeof(text), "control_socket = %s\n", sock);
        r = load(text, &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.control_socket, sock) == 0, "control_socket of 107 bytes fits");

        expect_error("send_slots = 4097\n", 1, "send_slots", "2 to 4096");
        expect_error("max_transfers = 2049\n", 1, "max_transfers", "1 to 2048");
        expect_error("port = 1K\n", 1, "port", "whole number");
        expect_error("slot_count = 1k\n", 1, "slot_count", "whole number");
        expect_error("lanes = +1\n", 1, "lanes", "whole number");
        expect_error("max_file_size = 16777216T\n", 1, "max_file_size", "suffix");
        expect_error("max_file_size = 18446744073709551616\n", 1, "max_file_size", "suffix");
        expect_error("max_file_size = 1KB\n", 1, "max_file_size", "suffix");
        expect_error("slot_size = 0\n", 1, "slot_size", "power of two");
        expect_error("slot_size = 4K4\n", 1, "slot_size", "power of two");

        /* The exact wording, for the keys that share one parser. */
        expect_message("port = 0\n", ":1: port: must be a whole number from 1 to 65535");
        expect_message("\nlanes = 9\n", ":2: lanes: must be a whole number from 1 to 8");
        expect_message("slot_size = 3000\n", ":1: slot_size: must be a power of two between 4K and 16M");
        expect_message("max_file_size = 1P\n",
                       ":1: max_file_size: must be a size in bytes (suffix K, M, G or T), 0 for no limit");
        expect_message("incoming_dir = in\n", ":1: incoming_dir: must be an absolute path");
        expect_message("min_rate = 1x\n",
                       ":1: min_rate: must be bytes per second (suffix K, M, G or T) up to 1T, 0 for no floor");
        snprintf(text, sizeof(text), "control_socket = %s0\n", sock);
        expect_message(text, ":1: control_socket: path is longer than 107 bytes");
}

/* The wording of the errors that are not about one key's value. */
static void test_line_errors(void)
{
        FILE *f;

        expect_message("port = 1\nprot = 2\n", ":2: prot: unknown key");
        expect_message("port = 1\n\nport = 2\n", ":3: port: duplicate key (first set on line 1)");
        expect_message("[daemon]\n", ":1: sections are not supported; write plain 'key = value' lines");
        expect_message("port = 1\nwords\n", ":2: expected 'key = value'");
        expect_message("= 1\n", ":1: expected 'key = value'");

        char longline[600];
        snprintf(longline, sizeof(longline), "incoming_dir = /%0500d\n", 0);
        expect_message(longline, ":1: line is longer than 198 bytes");

        /* fputs() would stop at the NUL: write the bytes themselves. */
        struct config c;
        char err[512], want[PATH_MAX + 64];
        int r;

        f = fopen(path, "w");
        if (!f)
                abort();
        fwrite("port = 1\nlanes\0 = 2\n", 1, 21, f);
        fclose(f);
        config_init(&c);
        r = config_load(&c, path, err, sizeof(err));
        snprintf(want, sizeof(want), "%s:2: line contains a NUL byte", path);
        if (!ok(r == -EINVAL && strcmp(err, want) == 0, "message \":2: line contains a NUL byte\""))
                diag("r=%d err=\"%s\"", r, err);
}

/* config_load_each(): every error of a file, each with its line. */
struct each_seen {
        unsigned int n, lines[16];
        char last[512];
};

static void each_add(void *userdata, unsigned int line, const char *msg)
{
        struct each_seen *e = userdata;

        if (e->n < 16)
                e->lines[e->n] = line;
        e->n++;
        snprintf(e->last, sizeof(e->last), "%s", msg);
}

static void test_every_error(void)
{
        struct each_seen e = { 0 };
        struct config c;
        char err[512];
        int r;

        config_init(&c);
        write_conf("slot_size = 3K\nbogus = 1\n[s]\nport = 1\nport = 2\nno separator\nlanes = x\n"
                   "# a comment\n\nmax_transfers = 4\n");
        r = config_load_each(&c, path, each_add, &e, err, sizeof(err));
        is_int(r, -EINVAL, "a file of six bad lines is refused");
        is_int(e.n, 6, "each of the six is told");
        ok(e.n == 6 && e.lines[0] == 1 && e.lines[1] == 2 && e.lines[2] == 3 && e.lines[3] == 5 &&
           e.lines[4] == 6 && e.lines[5] == 7, "in line order: 1, 2, 3, 5, 6, 7");
        ok(strstr(e.last, ":7: lanes: ") != NULL, "each with its message as config_load gives it: %s", e.last);
        ok(strstr(err, ":1: slot_size: ") != NULL, "and the first is the one returned: %s", err);

        /* The same file through config_load(): the first, as ever. */
        config_init(&c);
        r = config_load(&c, path, err, sizeof(err));
        ok(r == -EINVAL && strstr(err, ":1: slot_size: ") != NULL, "config_load says the first only");

        /* A good file: nothing told. */
        e = (struct each_seen){ 0 };
        config_init(&c);
        write_conf("port = 7470\n");
        r = config_load_each(&c, path, each_add, &e, err, sizeof(err));
        ok(r == 0 && e.n == 0 && c.port == 7470, "a good file: loaded, nothing told");
}

static void test_file_errors(void)
{
        struct config c, before;
        char err[512], missing[PATH_MAX + 16];
        int r;

        config_init(&c);
        snprintf(missing, sizeof(missing), "%s/nope.conf", dir);
        r = config_load(&c, missing, err, sizeof(err));
        is_int(r, -ENOENT, "missing file is -ENOENT");
        ok(strstr(err, missing) && strstr(err, "No such file"), "message names the file: %s", err);

        r = config_load(&c, dir, err, sizeof(err));
        ok(r < 0, "a directory is refused (%d: %s)", r, err);

        /* A failed load leaves the configuration as it was. */
        config_init(&c);
        c.port = 1234;
        memcpy(&before, &c, sizeof(c));
        write_conf("port = 999\nslot_count = 3\nnonsense = 1\n");
        r = config_load(&c, path, err, sizeof(err));
        ok(r == -EINVAL && memcmp(&c, &before, sizeof(c)) == 0, "failed load leaves cfg untouched");

        /* Loading over existing values (not over the defaults) keeps what the file leaves out. */
        write_conf("slot_count = 16\n");
        r = config_load(&c, path, err, sizeof(err));
        ok(r == 0 && c.port == 1234 && c.slot_count == 16, "load applies over the values already in cfg");

        write_conf("port = 1\n");
        r = config_load(&c, path, NULL, 0);
        is_int(r, 0, "no error buffer is fine");
        write_conf("port = 0\n");
        r = config_load(&c, path, err, 8);
        ok(r == -EINVAL && strlen(err) == 7, "message truncated to the buffer");
}

/* The control socket's per-user keys: max_clients_per_user, max_queued_per_user,
 * client_idle_timeout, admin_group. */
static void test_control_keys(void)
{
        struct config c;
        char err[512];
        int r;

        config_init(&c);
        is_int(c.max_clients_per_user, 32, "max_clients_per_user 32 by default");
        is_int(c.max_queued_per_user, 64, "max_queued_per_user 64 by default");
        is_int(c.client_idle_timeout, 60, "client_idle_timeout 60 s by default");
        ok(c.admin_group[0] == '\0', "no admin_group by default");

        r = load("admin_group = rdmaxfer-admins\n"
                 "client_idle_timeout = 3600\n"
                 "max_queued_per_user = 256\n"
                 "max_clients_per_user = 64\n", &c, err, sizeof(err));
        if (!is_int(r, 0, "every control key at its maximum"))
                diag("%s", err);
        is_int(c.max_clients_per_user, 64, "max_clients_per_user 64");
        is_int(c.max_queued_per_user, 256, "max_queued_per_user 256");
        is_int(c.client_idle_timeout, 3600, "client_idle_timeout 3600");
        is_str(c.admin_group, "rdmaxfer-admins", "admin_group");
        is_int(c.log_level, CONFIG_LOG_INFO, "a neighbouring key untouched");

        r = load("max_clients_per_user = 1\nmax_queued_per_user = 1\nclient_idle_timeout = 1\n",
                 &c, err, sizeof(err));
        ok(r == 0 && c.max_clients_per_user == 1 && c.max_queued_per_user == 1 &&
           c.client_idle_timeout == 1, "and at their minimum");

        static const struct {
                const char *v, *want;
        } groups[] = {
                { "wheel", "wheel" }, { "\"\"", "" }, { "", "" }, { "1234", "1234" },
                { "0", "0" }, { "4294967294", "4294967294" }, { "Domain_Admins@ad.example", "Domain_Admins@ad.example" },
                { "host$", "host$" }, { "a.b-c_d", "a.b-c_d" },
                { "\"xfer-ops\"", "xfer-ops" },
        };
        for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
                char text[128];

                snprintf(text, sizeof(text), "admin_group = %s\n", groups[i].v);
                r = load(text, &c, err, sizeof(err));
                ok(r == 0 && strcmp(c.admin_group, groups[i].want) == 0, "admin_group = %s", groups[i].v);
        }
        char name[80], text[128];
        memset(name, 'g', 63);
        name[63] = '\0';
        snprintf(text, sizeof(text), "admin_group = %s\n", name);
        r = load(text, &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.admin_group, name) == 0, "admin_group of 63 bytes fits");

        expect_error("max_clients_per_user = 0\n", 1, "max_clients_per_user", "1 to 64");
        expect_error("max_clients_per_user = 65\n", 1, "max_clients_per_user", "1 to 64");
        expect_error("max_queued_per_user = 0\n", 1, "max_queued_per_user", "1 to 256");
        expect_error("max_queued_per_user = 257\n", 1, "max_queued_per_user", "1 to 256");
        expect_error("client_idle_timeout = 0\n", 1, "client_idle_timeout", "1 to 3600");
        expect_error("client_idle_timeout = 3601\n", 1, "client_idle_timeout", "1 to 3600");
        expect_error("client_idle_timeout = 10s\n", 1, "client_idle_timeout", "whole number");
        expect_error("admin_group = wheel staff\n", 1, "admin_group", "group name");
        expect_error("admin_group = a,b\n", 1, "admin_group", "group name");
        expect_error("admin_group = a:b\n", 1, "admin_group", "group name");
        expect_error("admin_group = -x\n", 1, "admin_group", "not starting with '-'");
        expect_error("admin_group = ../etc\n", 1, "admin_group", "group name");
        expect_error("admin_group = 4294967295\n", 1, "admin_group", "gid must be below 4294967295");
        expect_error("admin_group = 99999999999999999999999\n", 1, "admin_group", "gid must be below");
        strcat(name, "g");
        snprintf(text, sizeof(text), "admin_group = %s\n", name);
        expect_message(text, ":1: admin_group: group name is longer than 63 bytes");
        expect_message("\nmax_queued_per_user = 300\n",
                       ":2: max_queued_per_user: must be a whole number from 1 to 256");
        expect_error("max_queued_per_user = 8\nmax_queued_per_user = 9\n", 2, "max_queued_per_user",
                     "duplicate key");
        config_deinit(&c);
}

/* peer_names: a pattern xferctl maps peers' names through (peername.h). */
static void test_peer_names(void)
{
        static const char *const good[] = { "%h-ib", "i%h", "%s.ib0", "%s-ib%d", "%h", "%%%h" };
        struct config c;
        char err[512], text[128];
        int r;

        config_init(&c);
        ok(c.peer_names[0] == '\0', "no peer_names by default: names as given");
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                snprintf(text, sizeof(text), "peer_names = %s\n", good[i]);
                r = load(text, &c, err, sizeof(err));
                ok(r == 0 && strcmp(c.peer_names, good[i]) == 0, "peer_names = %s", good[i]);
        }
        r = load("peer_names =\n", &c, err, sizeof(err));
        ok(r == 0 && c.peer_names[0] == '\0', "peer_names = (empty): none");
        r = load("peer_names = \"%h-ib\"\n", &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.peer_names, "%h-ib") == 0, "peer_names = \"%%h-ib\" (quoted)");
        r = load("peer_names = %h-ib ; the fabric's names\n", &c, err, sizeof(err));
        ok(r == 0 && strcmp(c.peer_names, "%h-ib") == 0, "a ';' comment after the pattern");

        expect_message("peer_names = ib\n",
                       ":1: peer_names: names no host: it needs %h (the name) or %s (its short name)");
        expect_error("peer_names = %x-ib\n", 1, "peer_names", "%x is not one of");
        expect_error("peer_names = %h:7471\n", 1, "peer_names", "':' cannot be part of a host name");
        expect_error("peer_names = %h ib\n", 1, "peer_names", "' ' cannot be part of a host name");
        snprintf(text, sizeof(text), "peer_names = %%h%063d\n", 0);
        expect_error(text, 1, "peer_names", "longer than 64 bytes");
        expect_error("peer_names = %h-ib\npeer_names = %h-ib\n", 2, "peer_names", "duplicate key");
        config_deinit(&c);
}

/* The sender's retries: retry_max, retry_window, retry_delay_max. */
static void test_retry_keys(void)
{
        struct config c;
        char err[512];
        int r;

        config_init(&c);
        r = load("retry_max = 0\nretry_window = 1\nretry_delay_max = 3600\n", &c, err, sizeof(err));
        ok(r == 0 && c.retry_max == 0 && c.retry_window == 1 && c.retry_delay_max == 3600,
           "retry_max 0 (never), retry_window 1 s, retry_delay_max 3600 s");
        r = load("retry_max = 100\nretry_window = 604800\nretry_delay_max = 1\n", &c, err, sizeof(err));
        ok(r == 0 && c.retry_max == CTL_RETRIES_MAX && c.retry_window == 604800 && c.retry_delay_max == 1,
           "the upper bounds: 100 retries (what xferctl send --retries takes), a week");
        expect_error("retry_max = 101\n", 1, "retry_max", "0 to 100");
        expect_error("retry_max = -1\n", 1, "retry_max", "whole number");
        expect_error("retry_window = 0\n", 1, "retry_window", "1 to 604800");
        expect_error("retry_window = 10m\n", 1, "retry_window", "whole number");
        expect_error("retry_delay_max = 0\n", 1, "retry_delay_max", "1 to 3600");
        expect_error("retry_delay_max = 3601\n", 1, "retry_delay_max", "1 to 3600");
        config_deinit(&c);
}

/* rate_limit and tos: sharing the fabric. */
static void test_fabric_keys(void)
{
        struct config c;
        char err[512];
        int r;

        config_init(&c);
        r = load("rate_limit = 100M\ntos = 32\n", &c, err, sizeof(err));
        ok(r == 0 && c.rate_limit == 100ull << 20 && c.tos == 32, "rate_limit 100M is 100 MiB/s, tos 32");
        r = load("rate_limit = 12345678\n", &c, err, sizeof(err));
        ok(r == 0 && c.rate_limit == 12345678, "rate_limit in plain bytes/s");
        r = load("rate_limit = 0\ntos = 0\n", &c, err, sizeof(err));
        ok(r == 0 && c.rate_limit == 0 && c.tos == 0, "rate_limit 0: none; tos 0 is a value");
        r = load("tos = 255\n", &c, err, sizeof(err));
        ok(r == 0 && c.tos == 255, "tos 255");
        r = load("tos =\n", &c, err, sizeof(err));
        ok(r == 0 && c.tos == -1, "empty tos: left to the kernel again");
        r = load("tos = \"\"\n", &c, err, sizeof(err));
        ok(r == 0 && c.tos == -1, "tos = \"\" too");
        r = load("rate_limit = 1T\n", &c, err, sizeof(err));
        ok(r == 0 && c.rate_limit == 1ull << 40, "rate_limit up to 1T");

        expect_error("rate_limit = 2T\n", 1, "rate_limit", "up to 1T");
        expect_error("rate_limit = 10Mbit\n", 1, "rate_limit", "bytes per second");
        expect_message("rate_limit = -1\n",
                       ":1: rate_limit: must be bytes per second (suffix K, M, G or T) up to 1T, 0 for no limit");
        expect_error("tos = 256\n", 1, "tos", "0 to 255");
        expect_error("tos = 0x20\n", 1, "tos", "0 to 255");
        expect_error("tos = -1\n", 1, "tos", "0 to 255");
        expect_error("tos = ef\n", 1, "tos", "DSCP");
        /* Each of max_transfers must move one slot within peer_timeout: 4 x 1M in 30 s
         * needs 139811 bytes/s. */
        expect_message("port = 1\nrate_limit = 139810\n",
                       ":2: rate_limit: 139810 bytes/s shared by max_transfers (4) would take longer "
                       "than peer_timeout (30 s) over one slot of 1048576 bytes each; at least 139811, "
                       "or 0 for no limit");
        r = load("rate_limit = 139811\n", &c, err, sizeof(err));
        ok(r == 0 && c.rate_limit == 139811, "one slot each within peer_timeout is enough");
        r = load("rate_limit = 4K\nslot_size = 4K\npeer_timeout = 1\nmax_transfers = 1\n", &c, err,
                 sizeof(err));
        ok(r == 0, "4K/s with 4K slots, one transfer and 1 s: allowed");
        expect_error("rate_limit = 4K\nslot_size = 4K\npeer_timeout = 1\nmax_transfers = 2\n", 1,
                     "rate_limit", "max_transfers (2)");
        expect_error("rate_limit = 4K\npeer_timeout = 1\n", 1, "rate_limit", "peer_timeout");
}

/* Resuming: partial_dir, partial_retention, partial_max_bytes. */
static void test_partial_keys(void)
{
        struct config c;
        char err[512];
        int r;

        config_init(&c);
        is_str(c.partial_dir, "/var/lib/rdmaxferd/partial", "partial_dir beside incoming by default");
        is_int(c.partial_retention, 3 * 24 * 3600, "partial_retention 3 days");
        ok(c.partial_max_bytes == 64ull << 30, "partial_max_bytes 64G");
        r = load("partial_dir = /srv/rx/.partial\npartial_retention = 60\npartial_max_bytes = 10G\n",
                 &c, err, sizeof(err));
        if (!is_int(r, 0, "the three keys"))
                diag("%s", err);
        ok(!strcmp(c.partial_dir, "/srv/rx/.partial") && c.partial_retention == 60 &&
           c.partial_max_bytes == 10ull << 30, "take their values");
        r = load("partial_dir = \"\"\npartial_max_bytes = 0\npartial_retention = 31536000\n", &c, err, sizeof(err));
        ok(r == 0 && c.partial_dir[0] == '\0' && c.partial_max_bytes == 0 && c.partial_retention == 31536000,
           "partial_dir empty (never resume), no bytes, a year");
        expect_error("partial_dir = partial\n", 1, "partial_dir", "absolute path");
        expect_error("partial_retention = 0\n", 1, "partial_retention", "1 to 31536000");
        expect_error("partial_max_bytes = 1X\n", 1, "partial_max_bytes", "0 to keep no partial");
        config_deinit(&c);
}

/* The Prometheus textfile: metrics_file, metrics_interval. */
static void test_metrics_keys(void)
{
        struct config c;
        char err[512], text[PATH_MAX + 64], long_path[PATH_MAX + 1];
        int r;

        config_init(&c);
        ok(c.metrics_file[0] == '\0', "no metrics_file by default: nothing written");
        is_int(c.metrics_interval, 15, "metrics_interval 15 s by default");

        r = load("metrics_file = /var/lib/prometheus/node-exporter/rdmaxferd.prom\n"
                 "metrics_interval = 3600\n", &c, err, sizeof(err));
        if (!is_int(r, 0, "metrics_file and metrics_interval at its maximum"))
                diag("%s", err);
        is_str(c.metrics_file, "/var/lib/prometheus/node-exporter/rdmaxferd.prom", "metrics_file");
        is_int(c.metrics_interval, 3600, "metrics_interval 3600");
        r = load("metrics_file = \"\"\nmetrics_interval = 1\n", &c, err, sizeof(err));
        ok(r == 0 && c.metrics_file[0] == '\0' && c.metrics_interval == 1, "metrics_file = \"\", interval 1");

        expect_error("metrics_file = rdmaxferd.prom\n", 1, "metrics_file", "absolute path");
        expect_error("metrics_file = /var/lib/prometheus/\n", 1, "metrics_file", "not of a directory");
        expect_error("metrics_interval = 0\n", 1, "metrics_interval", "1 to 3600");
        expect_error("metrics_interval = 3601\n", 1, "metrics_interval", "1 to 3600");
        expect_error("metrics_interval = 15s\n", 1, "metrics_interval", "whole number");
        expect_error("metrics_file = /a\nmetrics_file = /b\n", 2, "metrics_file", "duplicate key");

        /* One byte longer than PATH_MAX allows: said so, not truncated. */
        long_path[0] = '/';
        memset(long_path + 1, 'p', PATH_MAX - 1);
        long_path[PATH_MAX] = '\0';
        snprintf(text, sizeof(text), "metrics_file = %s\n", long_path);
        config_init(&c);
        write_conf(text);
        r = config_load(&c, path, err, sizeof(err));
        ok(r == -EINVAL, "a metrics_file of PATH_MAX bytes is refused (the line is too long for the parser first)");
        config_deinit(&c);
}

int main(void)
{
        if (!mkdtemp(dir))
                return 1;
        snprintf(path, sizeof(path), "%s/rdmaxferd.conf", dir);

        test_defaults();
        test_full();
        test_errors();
        test_numbers();
        test_line_errors();
        test_file_errors();
        test_every_error();
        test_control_keys();
        test_peer_names();
        test_retry_keys();
        test_fabric_keys();
        test_metrics_keys();
        test_partial_keys();

        unlink(path);
        rmdir(dir);
        return done_testing();
}
