#pragma once

/*
 * A temporary directory tree of the tests' own, owned as each test says
 * (test-landfs, test-lander): tmptree_base holds its path; at("a/b") is
 * a path beneath it (four such at once), mk() makes a directory with its
 * owner and mode exactly, ln() a symlink with its owner. Root only.
 */

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmptree_base[4096];

static inline const char *at(const char *rel)
{
        static char buf[4][2 * sizeof(tmptree_base)];
        static int i;

        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmptree_base, rel);
        return buf[i];
}

static inline void mk(const char *rel, mode_t mode, uid_t uid, gid_t gid)
{
        if (mkdir(at(rel), mode) < 0 || chown(at(rel), uid, gid) < 0 || chmod(at(rel), mode) < 0) {
                fprintf(stderr, "mkdir %s: %m\n", at(rel));
                exit(1);
        }
}

static inline void ln(const char *target, const char *rel, uid_t uid)
{
        if (symlink(target, at(rel)) < 0 || lchown(at(rel), uid, uid) < 0) {
                fprintf(stderr, "symlink %s: %m\n", at(rel));
                exit(1);
        }
}

/* Make the tree's top from @tmpl (mkdtemp's), mode 0711: 0 or -1. */
static inline int tmptree_make(char *tmpl)
{
        if (!mkdtemp(tmpl) || !realpath(tmpl, tmptree_base) || chmod(tmptree_base, 0711) < 0)
                return -1;
        return 0;
}

static inline void tmptree_remove(void)
{
        char cmd[sizeof(tmptree_base) + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmptree_base);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", tmptree_base);
}
