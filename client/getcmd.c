/*
 * xferctl get PEER:/PATH DEST: the file at PATH on PEER, read there as
 * the user who asks, lands here as that user at DEST (issue 33, wire.h
 * Pulls). Here: the arguments read, this node's address as PEER sees it,
 * and two MUNGE credentials of one token: one that lets PEER's lander
 * read PATH as us (for PEER and this node), one that lets ours land the
 * file at DEST (for this node). The job itself is a send's (sendcmd_go)
 * that carries no file.
 */

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "esc.h"
#include "landcred.h"
#include "landpath.h"
#include "macro.h"
#include "name.h"
#include "peer.h"
#include "sendcmd.h"
#include "wire.h"
#include "xferctl.h"

const char getcmd_help[] =
        "Usage: xferctl get [-r] [-X] [-A] PEER[:PORT]:/PATH... DEST [--overwrite]\n"
        "                   [--skip-existing | --sync=size|digest [--delete]] [--bwlimit RATE]\n"
        "                   [--retries N] [--no-wait] [--json]\n"
        "\n"
        "Fetch the regular file PATH (with -r, the directory PATH and everything\n"
        "in it) from PEER's rdmaxferd, read there as you, and land it here as you\n"
        "at DEST: the counterpart of xferctl send [-r] SRC PEER:/PATH, with the\n"
        "same rules on both sides. What you could not read on PEER yourself is\n"
        "refused with PEER's reason, and nothing is sent. Both nodes need user\n"
        "landing on (landing_roots) and munged, and PATH and DEST must lie\n"
        "beneath their landing roots.\n"
        "\n"
        "DEST is a directory the file or tree goes into under its own name (DEST\n"
        "ends with '/', or is a directory here), or else its new name. What is\n"
        "there already is kept and the get fails, unless --overwrite (and you may\n"
        "replace it yourself). A file or a tree lands whole or not at all, with\n"
        "its modes (less setuid and setgid), mtimes, symlinks and hard links, its\n"
        "data verified. A tree with a device, FIFO or socket in it, or a file you\n"
        "may not read, is refused: the error names it.\n"
        "\n"
        "Several sources (from one PEER or several, as scp takes them) go into\n"
        "DEST, a directory here, each as a job of its own, one after the other:\n"
        "one that fails is said and the others still come; the last line names\n"
        "those that did not, and the exit status is then 23 if some did.\n"
        "\n"
        "Options:\n"
        "  -r, --recursive\n"
        "                 PATH may be a directory: fetch its tree\n"
        "  --overwrite    replace what has that name at DEST\n"
        "  -X, --xattrs   the user.* extended attributes of every file and directory\n"
        "                 come too (as rsync -X)\n"
        "  -A, --acls     their POSIX ACLs come too, and one without has none here\n"
        "                 (as rsync -A)\n"
        "  --sync=size|digest\n"
        "                 keep DEST up to date: a file there of the same size (and\n"
        "                 with digest, the same bytes) is kept and not sent again,\n"
        "                 one that differs is replaced; with -r the tree is merged\n"
        "                 into the one at DEST (what only DEST has stays)\n"
        "  --skip-existing\n"
        "                 the same, keeping whatever file DEST has of a name\n"
        "  --delete       with -r and --sync or --skip-existing: the tree at DEST ends\n"
        "                 with exactly PATH's entries, whatever else it held removed\n"
        "                 (as you) in the step that publishes it\n"
        "  --bwlimit RATE PEER sends it at most RATE bytes/s (K, M, G, T: powers of 1024)\n"
        "  --retries N    attempts after the first (default: the daemon's retry_max)\n"
        "  --no-wait      print the job id and return; see xferctl status ID\n"
        "  --json         the job's outcome as JSON on stdout\n"
        "  --peer-names PATTERN\n"
        "                 map PEER's name as send does (peer_names)\n"
        "  -h, --help     show this help\n"
        "\n"
        "Not yet: --dry-run.\n"
        "Exit status as send's. See xferctl(1), Users and identity.\n";

/* The address the local rdmaxferd listens on and connects from ("" for
 * any) into @out. -1 or an exit code (said). */
static int getcmd_listen(const struct sendcmd *sc, char *out, size_t outlen)
{
        struct ctl_msg req = { .type = CTL_SETTINGS }, rep = { .type = 0 };
        _cleanup_(closep) int sock = -1;
        int fd = -1, r;

        sock = xferctl_connect(sc->socket_path, true);
        if (sock < 0)
                return XFERCTL_EXIT_UNREACHABLE;
        r = ctl_send(sock, &req, -1);
        if (r >= 0)
                r = ctl_recv(sock, &rep, &fd);
        safe_close(fd);
        if (r < 0) {
                xferctl_say_io(r);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (rep.type == CTL_ERROR) {
                xferctl_say_error("asking rdmaxferd where it listens", &rep.error);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        if (rep.type != CTL_SETTINGS_INFO) {
                xferctl_say_unexpected(&rep);
                return XFERCTL_EXIT_UNREACHABLE;
        }
        snprintf(out, outlen, "%s", rep.settings.listen);
        return -1;
}

/* This node's address as @host (numeric) sees it: the local rdmaxferd's
 * listen address, where it has one (its connections come from there), or
 * else the source the kernel picks for @host, as rdma_cm does for the
 * pull's connection. -1 or an exit code. */
static int getcmd_local_addr(const struct sendcmd *sc, const char *host, char *out, size_t outlen)
{
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST };
        struct addrinfo *ai = NULL;
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        _cleanup_(closep) int s = -1;
        int r;

        r = getcmd_listen(sc, out, outlen);
        if (r >= 0)
                return r;
        if (out[0] && strcmp(out, "0.0.0.0") != 0 && strcmp(out, "::") != 0)
                return -1;
        /* A UDP connect sends nothing; it only routes. */
        r = getaddrinfo(host, "7470", &hints, &ai);
        if (r != 0) {
                xferctl_say("get: '%s': %s", host, gai_strerror(r));
                return XFERCTL_EXIT_USAGE;
        }
        s = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen) < 0 ||
            getsockname(s, (struct sockaddr *)&ss, &sl) < 0 ||
            getnameinfo((struct sockaddr *)&ss, sl, out, (socklen_t)outlen, NULL, 0, NI_NUMERICHOST) != 0) {
                xferctl_say("get: no route from this node to %s: %s", host, strerror(errno));
                freeaddrinfo(ai);
                return XFERCTL_EXIT_FAILED;
        }
        freeaddrinfo(ai);
        return -1;
}

/*
 * DEST, relative to the working directory or not, into @out: absolute,
 * its directory's real path (so "..", "." and symlinks there mean what
 * they mean here), then its last component as typed.
 */
static int getcmd_dest(const char *arg, char out[static LANDPATH_MAX + 1], bool *dir)
{
        _cleanup_(freep) char *copy = strdup(arg), *real = NULL, *abs = NULL, *shown = NULL;
        enum landpath_verdict v;
        struct stat st;
        char *slash, *leaf;

        if (!copy) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        shown = esc_term_dup(arg);
        /* An existing directory (DEST/ too) is the place itself. */
        if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
                real = realpath(arg, NULL);
                leaf = NULL;
                *dir = true;
        } else {
                while ((slash = strrchr(copy, '/')) && slash[1] == '\0' && slash > copy)
                        *slash = '\0';
                slash = strrchr(copy, '/');
                leaf = slash ? slash + 1 : copy;
                if (slash == copy)
                        real = strdup("/");
                else if (slash) {
                        *slash = '\0';
                        real = realpath(copy, NULL);
                } else {
                        real = realpath(".", NULL);
                }
                if (real && (!strcmp(leaf, ".") || !strcmp(leaf, ".."))) {
                        xferctl_say("get: DEST '%.200s': name the directory itself", shown ? shown : "?");
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (!real) {
                xferctl_say("get: DEST '%.200s': its directory: %s", shown ? shown : "?", strerror(errno));
                return XFERCTL_EXIT_USAGE;
        }
        if (asprintf(&abs, "%s/%s", real, leaf ? leaf : "") < 0) {
                abs = NULL;
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        v = landpath_normal(abs, out, dir);
        /* DEST/ names a directory, there or not (then the peer says so). */
        if (!leaf || arg[strlen(arg) - 1] == '/')
                *dir = true;
        if (v != LANDPATH_OK) {
                xferctl_say("get: DEST '%.200s': %s", shown ? shown : "?", landpath_verdict_str(v));
                return XFERCTL_EXIT_USAGE;
        }
        return -1;
}

static int getcmd_parse(struct sendcmd *sc, int argc, char **argv, const char **src, const char **dest)
{
        static const struct option opts[] = {
                { "overwrite", no_argument, NULL, 'O' },
                { "recursive", no_argument, NULL, 'r' },
                { "sync", required_argument, NULL, 'Y' },
                { "skip-existing", no_argument, NULL, 'E' },
                { "delete", no_argument, NULL, 'D' },
                { "xattrs", no_argument, NULL, 'X' },
                { "acls", no_argument, NULL, 'A' },
                { "bwlimit", required_argument, NULL, 'b' },
                { "retries", required_argument, NULL, 'y' },
                { "no-wait", no_argument, NULL, 'w' },
                { "json", no_argument, NULL, 'j' },
                { "peer-names", required_argument, NULL, 'N' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":hrXA", opts, NULL)) != -1) {
                switch (c) {
                case 'O':
                        sc->overwrite = true;
                        break;
                case 'Y':
                        r = sendcmd_sync_opt(sc, "get", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'E':
                        sc->submit.flags |= CTL_SUBMIT_SKIP_EXISTING;
                        break;
                case 'D':
                        sc->submit.flags |= CTL_SUBMIT_DELETE;
                        break;
                case 'X':
                        sc->submit.flags |= CTL_SUBMIT_XATTRS;
                        break;
                case 'A':
                        sc->submit.flags |= CTL_SUBMIT_ACLS;
                        break;
                case 'b':
                        r = sendcmd_bwlimit_opt(sc, "get", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'y':
                        r = sendcmd_retries_opt(sc, "get", optarg);
                        if (r >= 0)
                                return r;
                        break;
                case 'w':
                        sc->no_wait = true;
                        break;
                case 'j':
                        sc->json = true;
                        break;
                case 'N':
                        sc->peer_names_opt = optarg;
                        break;
                case 'h':
                        fputs(getcmd_help, stdout);
                        return XFERCTL_EXIT_OK;
                case 'r':
                        sc->pull_tree = true;
                        break;
                case ':':
                        xferctl_say_bad_option(argv, ':');
                        return XFERCTL_EXIT_USAGE;
                default:
                        xferctl_say_bad_option(argv, optopt);
                        return XFERCTL_EXIT_USAGE;
                }
        }
        if (argc - optind < 2 || !argv[argc - 1][0]) {
                xferctl_say("get: expected PEER:/PATH and DEST (see xferctl help get)");
                return XFERCTL_EXIT_USAGE;
        }
        if (__builtin_popcount(sc->submit.flags & CTL_SUBMIT_SYNC_MASK) > 1) {
                xferctl_say("get: --skip-existing and --sync are one or the other (and --sync once)");
                return XFERCTL_EXIT_USAGE;
        }
        if ((sc->submit.flags & CTL_SUBMIT_DELETE) && (!sc->pull_tree || !(sc->submit.flags & CTL_SUBMIT_SYNC_MASK))) {
                xferctl_say("get: --delete is for a tree (-r) kept up to date (--sync or --skip-existing): it "
                            "removes what DEST holds beyond PATH's tree");
                return XFERCTL_EXIT_USAGE;
        }
        /* Kept for the pull's own submit (getcmd_pull fills it afresh). */
        sc->get_sync = sc->submit.flags & (CTL_SUBMIT_SYNC_MASK | CTL_SUBMIT_DELETE | CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS);
        *src = argv[optind];
        *dest = argv[argc - 1];
        sc->paths = &argv[optind];
        sc->npaths = (unsigned int)(argc - optind - 1);
        return -1;
}

/* The two credentials, of one fresh token, into the submit. -1 or an exit code. */
static int getcmd_creds(struct sendcmd *sc)
{
        struct ctl_submit *s = &sc->submit;
        uint8_t token[LANDMSG_TOKEN_SIZE];
        const char *both[] = { s->host, s->back_host }, *back[] = { s->back_host };
        struct landcred_req rq = {
                .direction = LANDMSG_PULL,
                .addrs = both,
                .naddrs = 2,
                .dest = s->land_path,
                .tree = sc->pull_tree,
                .token = token,
        };
        struct landcred lc;
        char err[512];
        int r;

        randombytes_buf(token, sizeof(token));
        r = landcred_make_for(&rq, NULL, &lc, err, sizeof(err));
        if (r >= 0) {
                memcpy(s->land_token, lc.token, sizeof(lc.token));
                memcpy(s->land_cred, lc.cred, sizeof(lc.cred));
                rq = (struct landcred_req){
                        .direction = LANDMSG_PUSH,
                        .addrs = back,
                        .naddrs = 1,
                        .dest = s->back_path,
                        .replace = s->flags & CTL_SUBMIT_LAND_REPLACE,
                        .sync = s->flags & CTL_SUBMIT_SYNC_MASK,
                        .delete = s->flags & CTL_SUBMIT_DELETE,
                        .token = token,
                };
                r = landcred_make_for(&rq, NULL, &lc, err, sizeof(err));
                if (r >= 0)
                        memcpy(s->back_cred, lc.cred, sizeof(lc.cred));
        }
        /* They vouch for us until they expire: no second copy left about. */
        sodium_memzero(&lc, sizeof(lc));
        if (r < 0) {
                xferctl_say("cannot get as yourself from %s: %s", sc->peer_shown, err);
                return XFERCTL_EXIT_FAILED;
        }
        return -1;
}

int getcmd_report(struct sendcmd *sc)
{
        const struct ctl_job *j = &sc->job;
        char text[ESC_TERM_SIZE(sizeof(j->text))];
        const char *cause = j->text[0] ? esc_term(text, sizeof(text), j->text) : wire_status_str(j->status);
        int rc = j->state == CTL_JOB_DONE ? XFERCTL_EXIT_OK : XFERCTL_EXIT_FAILED;

        if (sc->json) {
                json_peer_open(stdout, sc->peer_arg, rc);
                json_job(stdout, j);
                json_peer_close(stdout);
                fputc('\n', stdout);
        }
        switch (j->state) {
        case CTL_JOB_DONE:
                /* Kept up to date: what was there already, what went (the
                 * peer's send back said so). */
                if (!sc->json) {
                        char kept[64] = "";

                        if (j->files_skipped && j->deleted)
                                snprintf(kept, sizeof(kept), " (%u kept, %llu deleted)", (unsigned int)j->files_skipped,
                                         (unsigned long long)j->deleted);
                        else if (j->files_skipped)
                                snprintf(kept, sizeof(kept), " (%u kept)", (unsigned int)j->files_skipped);
                        else if (j->deleted)
                                snprintf(kept, sizeof(kept), " (%llu deleted)", (unsigned long long)j->deleted);
                        printf("%s:%s -> %s%s\n", sc->peer_shown, sc->path_shown, sc->get_dest, kept);
                }
                break;
        case CTL_JOB_CANCELLED:
                xferctl_say("%s %s from %s cancelled%s%s", sc->get_copy ? "send" : "get", sc->path_shown,
                            sc->peer_shown, j->text[0] ? ": " : "", j->text[0] ? cause : "");
                break;
        default:
                xferctl_say("%s %s from %s failed: %s%s", sc->get_copy ? "send" : "get", sc->path_shown,
                            sc->peer_shown, !j->text[0] && wire_status_refusal(j->status) ? "refused by peer: " : "",
                            cause);
                break;
        }
        return rc;
}

/*
 * The pull of @src (PEER:/PATH) to @to: this node (@to_peer NULL, @to the
 * DEST typed here) or @to_peer, where @to is its normal PATH already
 * (@to_dir: a directory). sc's options are the user's. The exit code.
 */
static int getcmd_pull(struct sendcmd *sc, const char *src, const char *to_peer, const char *to, bool to_dir)
{
        _cleanup_(freep) char *peer = NULL, *path_shown = NULL, *peer_shown = NULL, *dest_shown = NULL, *landed = NULL;
        const char *colon = landpath_split(src), *verb = to_peer ? "send" : "get";
        struct ctl_submit *s = &sc->submit;
        char host[256], err[256];
        enum landpath_verdict v;
        bool dir = false, dest_dir = to_dir;
        int r;

        if (!colon) {
                _cleanup_(freep) char *shown = esc_term_dup(src);

                xferctl_say("%s: '%s' is not PEER:/PATH (an absolute PATH on PEER)", verb, shown ? shown : "?");
                return XFERCTL_EXIT_USAGE;
        }
        v = landpath_normal(colon + 1, s->land_path, &dir);
        /* PATH/ names a directory: only -r fetches one. */
        if (v == LANDPATH_OK && dir && !sc->pull_tree)
                v = LANDPATH_ROOT;
        if (v != LANDPATH_OK) {
                _cleanup_(freep) char *shown = esc_term_dup(colon + 1);

                xferctl_say("%s: PEER:/PATH '%.200s': %s", verb, shown ? shown : "?",
                            dir && v == LANDPATH_ROOT ? "names a directory: -r fetches a tree"
                                                      : landpath_verdict_str(v));
                return XFERCTL_EXIT_USAGE;
        }
        if (to_peer)
                snprintf(s->back_path, sizeof(s->back_path), "%s", to);
        else {
                r = getcmd_dest(to, s->back_path, &dest_dir);
                if (r >= 0)
                        return r;
        }
        peer = strndup(src, (size_t)(colon - src));
        path_shown = esc_term_dup(s->land_path);
        peer_shown = peer ? esc_term_dup(peer) : NULL;
        /* Where it lands, as the report says it. */
        if (asprintf(&landed, "%s%s%s%s%s", to_peer ? to_peer : "", to_peer ? ":" : "", s->back_path,
                     dest_dir ? "/" : "", dest_dir ? strrchr(s->land_path, '/') + 1 : "") < 0)
                landed = NULL;
        dest_shown = landed ? esc_term_dup(landed) : NULL;
        if (!peer || !path_shown || !peer_shown || !dest_shown) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        sc->peer_arg = peer;
        sc->path = s->land_path;
        sc->path_shown = path_shown;
        sc->peer_shown = peer_shown;
        sc->get_dest = dest_shown;
        sc->get_copy = to_peer != NULL;
        /* Its name on the way: PATH's own, as a send's would be. */
        snprintf(s->name, sizeof(s->name), "%s", strrchr(s->land_path, '/') + 1);
        if (name_check(s->name, strlen(s->name)) != NAME_OK) {
                xferctl_say("%s: cannot fetch %s: %s", verb, path_shown,
                            name_verdict_str(name_check(s->name, strlen(s->name))));
                return XFERCTL_EXIT_USAGE;
        }
        /* --sync replaces what differs, as the user's credential for
         * here says (as send --sync to PEER:/PATH does). */
        s->flags = CTL_SUBMIT_LAND | CTL_SUBMIT_PULL | (dest_dir ? CTL_SUBMIT_LAND_DIR : 0) |
                   (sc->overwrite || (sc->get_sync & (CTL_SUBMIT_SYNC_SIZE | CTL_SUBMIT_SYNC_DIGEST |
                                                      CTL_SUBMIT_DELETE))
                            ? CTL_SUBMIT_LAND_REPLACE : 0) |
                   (sc->pull_tree ? CTL_SUBMIT_PULL_TREE : 0) | sc->get_sync;
        if (sc->retries >= 0) {
                s->flags |= CTL_SUBMIT_RETRIES;
                s->retries = (uint16_t)sc->retries;
        }
        r = peernames_init(&sc->names, "", sc->socket_path, sc->peer_names_opt, false);
        if (r >= 0)
                return r;
        if (peer_split(peer, host, sizeof(host), &s->port, err, sizeof(err)) < 0) {
                xferctl_say("bad peer '%s': %s (expected HOST, HOST:PORT or [IPV6]:PORT)", peer_shown, err);
                return XFERCTL_EXIT_USAGE;
        }
        r = sendcmd_resolve(sc, host, s->host, sizeof(s->host));
        if (r >= 0)
                return r;
        if (to_peer) {
                _cleanup_(freep) char *shown = esc_term_dup(to_peer);

                if (peer_split(to_peer, host, sizeof(host), &s->back_port, err, sizeof(err)) < 0) {
                        xferctl_say("bad peer '%s': %s (expected HOST, HOST:PORT or [IPV6]:PORT)",
                                    shown ? shown : "?", err);
                        return XFERCTL_EXIT_USAGE;
                }
                r = sendcmd_resolve(sc, host, s->back_host, sizeof(s->back_host));
        } else {
                r = getcmd_local_addr(sc, s->host, s->back_host, sizeof(s->back_host));
        }
        if (r >= 0)
                return r;
        r = getcmd_creds(sc);
        if (r >= 0)
                return r;
        return sendcmd_go(sc, -1);
}

int getcmd_copy(struct sendcmd *sc)
{
        _cleanup_(freep) char *to_peer = sc->land_peer ? strdup(sc->land_peer) : NULL;
        char to[LANDPATH_MAX + 1];
        bool dir = sc->submit.flags & CTL_SUBMIT_LAND_DIR;
        uint64_t bwlimit;

        if (!to_peer) {
                xferctl_say("out of memory");
                return XFERCTL_EXIT_FAILED;
        }
        if (sc->npaths != 1) {
                xferctl_say("send: from PEER:/PATH, one source goes: a copy between two peers is a pull");
                return XFERCTL_EXIT_USAGE;
        }
        /* The peer walks the tree as get -r's walker does: as it is. */
        if (sc->recursive && (sc->filters || sc->links != SENDCMD_LINKS_SAFE || sc->no_hard_links ||
                              sc->keep_going)) {
                xferctl_say("send: -r from PEER:/PATH takes the tree as it is there (every entry, symlinks "
                            "and hard links as they are): no --exclude, --include, --links, --no-hard-links "
                            "or --continue-on-error");
                return XFERCTL_EXIT_USAGE;
        }
        /* Kept up to date on PEER_B as a get keeps DEST (the pull syncs
         * its send on, a tree mirrored with --delete); dry runs are not a
         * pull's yet. */
        if (sc->submit.flags & CTL_SUBMIT_DRY_RUN || sc->itemize) {
                xferctl_say("send: a copy from PEER:/PATH goes without --dry-run or --itemize-changes (not "
                            "supported yet)");
                return XFERCTL_EXIT_USAGE;
        }
        sc->get_sync = sc->submit.flags & (CTL_SUBMIT_SYNC_MASK | CTL_SUBMIT_DELETE | CTL_SUBMIT_XATTRS | CTL_SUBMIT_ACLS);
        /* A pull's -r: nothing of it walked here. */
        sc->pull_tree = sc->recursive;
        sc->recursive = false;
        snprintf(to, sizeof(to), "%s", sc->submit.land_path);
        /* The pull's own submit, from nothing of the send's but its options. */
        bwlimit = sc->submit.bwlimit;
        memset(&sc->submit, 0, sizeof(sc->submit));
        sc->submit.bwlimit = bwlimit;
        return getcmd_pull(sc, sc->paths[0], to_peer, to, dir);
}

static int getcmd_one(struct sendcmd *each, const char *src, void *arg)
{
        return getcmd_pull(each, src, NULL, *(const char **)arg, true);
}

/* get SRC... DEST with several sources: each into DEST, a directory here,
 * as a job of its own (sendland_sources). */
static int getcmd_several(struct sendcmd *sc, const char *dest)
{
        struct stat st;

        if (sc->json) {
                xferctl_say("get: several sources are a job each: --json describes one job (get each "
                            "with its own xferctl get --json)");
                return XFERCTL_EXIT_USAGE;
        }
        if (stat(dest, &st) < 0 || !S_ISDIR(st.st_mode)) {
                _cleanup_(freep) char *shown = esc_term_dup(dest);

                xferctl_say("get: several sources go into DEST, a directory here: '%.200s' is %s",
                            shown ? shown : "?", errno == ENOENT ? "not there" : "no directory");
                return XFERCTL_EXIT_USAGE;
        }
        return sendland_sources(sc, getcmd_one, &dest);
}

int getcmd_run(const char *socket_path, int argc, char **argv)
{
        struct sendcmd sc = {
                .socket_path = socket_path,
                .retries = -1,
                .poll_sock = -1,
                .feed_sock = -1,
        };
        const char *src = NULL, *dest = NULL;
        int r;

        r = getcmd_parse(&sc, argc, argv, &src, &dest);
        if (r >= 0)
                return r;
        if (sc.npaths > 1)
                return getcmd_several(&sc, dest);
        return getcmd_pull(&sc, src, NULL, dest, false);
}
