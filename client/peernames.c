/* xferctl's peer_names: which pattern applies, and the names it makes (peernames.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "hostlist.h"
#include "peer.h"
#include "peernames.h"
#include "xferctl.h"

/* "--peer-names %h-ib", for messages: where the pattern came from. */
static const char *peernames_origin(const struct peernames *pn, char *buf, size_t len)
{
        switch (pn->source) {
        case PEERNAMES_OPTION:
                snprintf(buf, len, "--peer-names %s", pn->pattern);
                break;
        case PEERNAMES_ENV_VAR:
                snprintf(buf, len, PEERNAMES_ENV "=%s", pn->pattern);
                break;
        case PEERNAMES_DAEMON:
                snprintf(buf, len, "rdmaxferd's peer_names = %s", pn->pattern);
                break;
        default:
                snprintf(buf, len, "no peer_names");
                break;
        }
        return buf;
}

/* @value of @what (the option or the variable) as the pattern. -1 or an exit code. */
static int peernames_take(struct peernames *pn, enum peernames_source source, const char *what,
                          const char *value)
{
        char why[192];

        if (peername_check(value, why, sizeof(why)) < 0) {
                _cleanup_(freep) char *shown = esc_term_dup(value);

                xferctl_say("%s%s '%s': %s", pn->prefix, what, shown ? shown : "?", why);
                return XFERCTL_EXIT_USAGE;
        }
        /* Checked: it fits. */
        snprintf(pn->pattern, sizeof(pn->pattern), "%s", value);
        pn->source = source;
        return -1;
}

int peernames_init(struct peernames *pn, const char *prefix, const char *socket_path, const char *opt,
                   bool lenient)
{
        const char *env = getenv(PEERNAMES_ENV);

        *pn = (struct peernames){
                .socket_path = socket_path,
                .prefix = prefix,
                .lenient = lenient,
        };
        /* The option wins over the environment, which wins over the daemon. */
        if (opt)
                return peernames_take(pn, PEERNAMES_OPTION, "--peer-names", opt);
        if (env && *env)
                return peernames_take(pn, PEERNAMES_ENV_VAR, PEERNAMES_ENV, env);
        return -1;
}

bool peernames_wanted(const struct hostlist *hl)
{
        for (size_t i = 0; i < hl->n; i++) {
                char host[256], err[128];
                uint16_t port;

                /* One that does not split is said when it is sent to; a name, surely. */
                if (peer_split(hl->names[i], host, sizeof(host), &port, err, sizeof(err)) < 0 ||
                    !peername_is_address(host))
                        return true;
        }
        return false;
}

/* Without a daemon to ask: send stops, hosts goes on with names as given. */
static int peernames_unasked(struct peernames *pn, const char *why, int code)
{
        if (!pn->lenient) {
                xferctl_say("%s", why);
                return code;
        }
        xferctl_say("%s%s; names are shown as given (--peer-names PATTERN or " PEERNAMES_ENV
                    " to map them without it)", pn->prefix, why);
        pn->source = PEERNAMES_NONE;
        pn->pattern[0] = '\0';
        return -1;
}

int peernames_load(struct peernames *pn)
{
        struct ctl_msg req = { .type = CTL_SETTINGS }, rep = { .type = 0 };
        _cleanup_(closep) int sock = -1;
        char why[512];
        int fd = -1, r;

        if (pn->source != PEERNAMES_UNKNOWN)
                return -1;
        errno = 0;
        sock = xferctl_connect(pn->socket_path, !pn->lenient);
        if (sock < 0) {
                if (!pn->lenient)
                        return XFERCTL_EXIT_UNREACHABLE;
                snprintf(why, sizeof(why), "cannot ask rdmaxferd at %s for its peer_names: %s",
                         pn->socket_path, errno ? strerror(errno) : "cannot connect");
                return peernames_unasked(pn, why, XFERCTL_EXIT_UNREACHABLE);
        }
        r = ctl_send(sock, &req, -1);
        if (r >= 0)
                r = ctl_recv(sock, &rep, &fd);
        safe_close(fd);
        if (r == -EPROTONOSUPPORT || (r >= 0 && rep.type == CTL_ERROR && rep.error.code == -EPROTONOSUPPORT)) {
                snprintf(why, sizeof(why), "rdmaxferd speaks another control protocol version "
                         "(xferctl speaks %d): cannot ask it for its peer_names", CTL_VERSION);
                return peernames_unasked(pn, why, XFERCTL_EXIT_UNREACHABLE);
        }
        if (r < 0) {
                snprintf(why, sizeof(why), "asking rdmaxferd for its peer_names: %s",
                         r == -ECONNRESET ? "it closed the connection" : strerror(-r));
                return peernames_unasked(pn, why, XFERCTL_EXIT_UNREACHABLE);
        }
        if (rep.type == CTL_ERROR) {
                char text[ESC_TERM_SIZE(sizeof(rep.error.text))];

                snprintf(why, sizeof(why), "rdmaxferd did not say its peer_names: %s",
                         rep.error.text[0] ? esc_term(text, sizeof(text), rep.error.text)
                                           : strerror(-rep.error.code));
                return peernames_unasked(pn, why, XFERCTL_EXIT_FAILED);
        }
        if (rep.type != CTL_SETTINGS_INFO) {
                snprintf(why, sizeof(why), "unexpected message type %u from rdmaxferd",
                         (unsigned int)rep.type);
                return peernames_unasked(pn, why, XFERCTL_EXIT_UNREACHABLE);
        }
        /* ctl_decode() checked it as peername_check() does. */
        memcpy(pn->pattern, rep.settings.peer_names, sizeof(pn->pattern));
        pn->source = PEERNAMES_DAEMON;
        return -1;
}

int peernames_map(struct peernames *pn, const char *host, char *out, size_t outlen, bool *mapped)
{
        char origin[PEERNAME_PATTERN_MAX + 64];
        int r;

        *mapped = false;
        if (peername_is_address(host)) {
                /* Never mapped: no need to know the pattern. */
                if (strlen(host) >= outlen) {
                        xferctl_say("%saddress '%s' is too long", pn->prefix, host);
                        return XFERCTL_EXIT_USAGE;
                }
                memcpy(out, host, strlen(host) + 1);
                return -1;
        }
        r = peernames_load(pn);
        if (r >= 0)
                return r;
        r = peername_map(pn->pattern, host, out, outlen);
        if (r < 0) {
                _cleanup_(freep) char *shown = esc_term_dup(host);

                if (r == -ENAMETOOLONG && peername_identity(pn->pattern))
                        xferctl_say("%speer '%s': a host name is at most %d bytes", pn->prefix,
                                    shown ? shown : "?", PEERNAME_NAME_MAX);
                else if (r == -ENAMETOOLONG)
                        xferctl_say("%speer '%s': its name by %s is longer than %d bytes", pn->prefix,
                                    shown ? shown : "?", peernames_origin(pn, origin, sizeof(origin)),
                                    PEERNAME_NAME_MAX);
                else
                        xferctl_say("%speer '%s': no name to map", pn->prefix, shown ? shown : "?");
                return XFERCTL_EXIT_USAGE;
        }
        *mapped = r == 0 && strcmp(out, host) != 0;
        return -1;
}

void peernames_say_unresolved(const struct peernames *pn, const char *host, const char *name,
                              bool mapped, const char *why)
{
        _cleanup_(freep) char *host_shown = esc_term_dup(host), *name_shown = esc_term_dup(name);
        char origin[PEERNAME_PATTERN_MAX + 64];

        if (mapped)
                xferctl_say("%scannot resolve peer '%s' (from %s by %s): %s", pn->prefix,
                            name_shown ? name_shown : "?", host_shown ? host_shown : "?",
                            peernames_origin(pn, origin, sizeof(origin)), why);
        else
                xferctl_say("%scannot resolve peer '%s': %s", pn->prefix,
                            host_shown ? host_shown : "?", why);
}
