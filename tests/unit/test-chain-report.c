/*
 * xferctl send's report of a relay chain (client/fanout.c,
 * sendcmd_chain_report): a finished job's nodes as the lines a user
 * reads, for a file and for a tree (-r), and the exit code. stdout is
 * caught in a memfd; xferctl_say, what goes to stderr, is ours here.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostlist.h"
#include "sendcmd.h"
#include "tap.h"
#include "wire.h"
#include "xferctl.h"

static char said[4096];

void xferctl_say(const char *fmt, ...)
{
        size_t len = strlen(said);
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(said + len, sizeof(said) - len, fmt, ap);
        va_end(ap);
        len = strlen(said);
        if (len + 1 < sizeof(said)) {
                said[len] = '\n';
                said[len + 1] = '\0';
        }
}

/* sendcmd_chain_report(@sc), its stdout in @out. Returns its exit code. */
static int report(const struct sendcmd *sc, char *out, size_t size)
{
        int fd = memfd_create("chain-report", MFD_CLOEXEC), saved = dup(STDOUT_FILENO), r;
        ssize_t n;

        if (fd < 0 || saved < 0)
                abort();
        said[0] = '\0';
        fflush(stdout);
        dup2(fd, STDOUT_FILENO);
        r = sendcmd_chain_report(sc);
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
        n = pread(fd, out, size - 1, 0);
        out[n > 0 ? n : 0] = '\0';
        close(fd);
        return r;
}

/* A finished chain of @nodes nodes, node @failed (0: none) failed and the
 * ones in @missing (bit k: node k + 1) without it; a job of 30 bytes in
 * 4 entries when @tree, else a file of 10 bytes. */
static void chain_job(struct ctl_job *j, unsigned int nodes, uint64_t missing, unsigned int failed, bool tree)
{
        uint64_t size = tree ? 30 : 10;

        memset(j, 0, sizeof(*j));
        j->state = (missing & 1) ? CTL_JOB_FAILED : CTL_JOB_DONE;
        j->bytes_total = size;
        j->bytes_done = (missing & 1) ? 0 : size;
        j->usec = 1000000;
        j->files_total = tree ? 4 : 1;
        j->files_done = (missing & 1) ? 0 : j->files_total;
        snprintf(j->peer, sizeof(j->peer), "10.0.0.1:7470");
        snprintf(j->name, sizeof(j->name), "%s", tree ? "runs" : "c.bin");
        j->nodes = (uint16_t)nodes;
        for (unsigned int k = 0; k < nodes; k++) {
                if (missing & (1ull << k)) {
                        nodeset_add(&j->nodes_missing, k);
                        j->node_bytes[k] = size / 2;
                } else {
                        j->node_bytes[k] = size;
                        j->nodes_ok++;
                }
        }
        j->node_failed = (uint16_t)failed;
        if (failed) {
                j->node_status = WIRE_E_EXISTS;
                snprintf(j->node_peer, sizeof(j->node_peer), "10.0.0.%u:7470", failed);
                snprintf(j->node_text, sizeof(j->node_text), "%s exists", tree ? "runs" : "c.bin");
        }
}

int main(void)
{
        struct hostlist_error err;
        struct hostlist *hl = NULL;
        struct sendcmd sc = { .recursive = true };
        char out[4096];
        int r;

        if (hostlist_new(&hl, "node[01-03]", &err) < 0 || hl->n != 3)
                abort();
        sc.chain = hl;

        /* A tree; node 3 refused it. */
        chain_job(&sc.job, 3, 0x4, 3, true);
        r = report(&sc, out, sizeof(out));
        is_int(r, XFERCTL_EXIT_PARTIAL, "tree, node 3 failed: exit 23");
        ok(strstr(out, "node01: sent runs (4 entries) (30 bytes) to 10.0.0.1:7470 in ") == out,
           "tree: the first node's line names DEST and its entries, as one peer's does");
        ok(strstr(out, "\nnode02: sent runs (4 entries, 30 bytes), relayed by node01\n") != NULL,
           "tree: the second's says who relayed it");
        ok(strstr(out, "\n3 peers: 2 sent, 1 failed (node03)\n") != NULL, "tree: the summary names node03");
        is_str(said, "node03: send runs to 10.0.0.3:7470 failed: runs exists\n", "tree: node03's failure, why");

        /* Every node. */
        chain_job(&sc.job, 3, 0, 0, true);
        r = report(&sc, out, sizeof(out));
        ok(r == XFERCTL_EXIT_OK && strstr(out, "\nnode03: sent runs (4 entries, 30 bytes), relayed by node02\n") &&
           strstr(out, "\n3 peers: every one sent\n") && !said[0], "tree, every node: exit 0, every one sent");

        /* --continue-on-error left entries out: every node lacks them. */
        sc.unreadable = 2;
        r = report(&sc, out, sizeof(out));
        is_int(r, XFERCTL_EXIT_PARTIAL, "tree, 2 left out: exit 23");
        is_str(said, "2 could not be read and were not sent\n", "tree: said once");
        sc.unreadable = 0;

        /* Node 1 refused: none has it. */
        chain_job(&sc.job, 3, 0x7, 1, true);
        r = report(&sc, out, sizeof(out));
        ok(r == XFERCTL_EXIT_FAILED && strstr(out, "3 peers: 0 sent, 3 failed (node01 node02 node03)\n") == out,
           "tree, node 1 failed: exit 1, none sent");
        ok(strstr(said, "node01: send runs to 10.0.0.1:7470 failed: runs exists\n") == said &&
           strstr(said, "\nnode02: not reached\n") && strstr(said, "\nnode03: not reached\n"),
           "tree: the others not reached");

        /* A file, as before. */
        sc.recursive = false;
        chain_job(&sc.job, 3, 0x2, 2, false);
        r = report(&sc, out, sizeof(out));
        ok(r == XFERCTL_EXIT_PARTIAL && strstr(out, "node01: sent c.bin (10 bytes) to 10.0.0.1:7470 in ") == out &&
           strstr(out, "\nnode03: sent c.bin (10 bytes), relayed by node01\n"),
           "a file: its name and bytes, no entries");

        hostlist_free(hl);
        return done_testing();
}
