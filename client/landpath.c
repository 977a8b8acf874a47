#include <string.h>

#include "landpath.h"

const char *landpath_split(const char *arg)
{
        unsigned int depth = 0;

        /* "[fd00::2]" holds colons, never ":/"; a hostlist's ranges neither. */
        for (const char *p = arg; *p; p++) {
                if (*p == '[')
                        depth++;
                else if (*p == ']' && depth > 0)
                        depth--;
                else if (*p == ':' && p[1] == '/' && depth == 0)
                        return p;
        }
        return NULL;
}

enum landpath_verdict landpath_normal(const char *path, char out[static LANDPATH_MAX + 1], bool *dir)
{
        enum landpath_verdict whole = LANDPATH_OK;
        const char *p = path;
        size_t len = 0;

        *dir = false;
        if (*p != '/')
                return LANDPATH_RELATIVE;
        while (*p) {
                const char *c;
                size_t n;

                while (*p == '/')
                        p++;
                c = p;
                p += strcspn(p, "/");
                n = (size_t)(p - c);
                if (n == 0 || (n == 1 && c[0] == '.')) {
                        /* Nothing, or "." at the end: what came before, a directory. */
                        if (*p == '\0')
                                *dir = true;
                        continue;
                }
                /* Not resolved here: the peer's ".." may be a symlink's parent, and
                 * the lander walks each component itself. */
                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return LANDPATH_DOTDOT;
                if (n > LANDPATH_COMPONENT_MAX)
                        return LANDPATH_COMPONENT_LONG;
                *dir = false;
                /* Keep looking past the length: a ".." later is the likelier mistake. */
                if (whole == LANDPATH_OK && len + 1 + n > LANDPATH_MAX) {
                        whole = LANDPATH_TOO_LONG;
                        continue;
                }
                if (whole == LANDPATH_OK) {
                        out[len++] = '/';
                        memcpy(out + len, c, n);
                        len += n;
                }
        }
        if (whole != LANDPATH_OK)
                return whole;
        if (len == 0)
                return LANDPATH_ROOT;
        out[len] = '\0';
        return LANDPATH_OK;
}

const char *landpath_verdict_str(enum landpath_verdict v)
{
        switch (v) {
        case LANDPATH_OK:
                return "in normal form";
        case LANDPATH_RELATIVE:
                return "not absolute: PATH starts with '/', as in PEER:/scratch/you";
        case LANDPATH_DOTDOT:
                return "'..' is not allowed in PATH: name the directory itself";
        case LANDPATH_COMPONENT_LONG:
                return "a component of PATH is longer than 255 bytes";
        case LANDPATH_ROOT:
                return "'/' itself is no place to land in: name a directory beneath it";
        case LANDPATH_TOO_LONG:
                return "PATH is longer than 4095 bytes";
        }
        return "not a PATH";
}
