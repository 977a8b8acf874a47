/*
 * sanitizer-canary leak|ub|heap|teardown: deliberately wrong, so that the
 * testbed's sanitizer scenario can show that its checks catch what they
 * look for (a check that cannot fail proves nothing). Built only with ASan.
 *   leak   loses a heap block (LeakSanitizer, at exit)
 *   ub     overflows a signed int (UBSan)
 *   heap   reads one byte past a heap block (AddressSanitizer)
 *   teardown  deallocates a PD while an MR still holds it, and exits with
 *             both alive and a descriptor open (teardown-audit.so)
 */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static void *volatile canary_block;

/*
 * LeakSanitizer scans the dead part of the stack too: a copy of the pointer
 * left there by malloc or by this frame would keep the block "reachable".
 * So the pointer lives in a global that is cleared, and the stack below
 * main is overwritten before exit.
 */
static __attribute__((noinline)) void lose_block(void)
{
        canary_block = malloc(4242);
}

static __attribute__((noinline)) void scrub_stack(void)
{
        volatile char pad[16384];

        for (size_t i = 0; i < sizeof(pad); i++)
                pad[i] = 0;
}

static int teardown_wrong(void)
{
        static char buf[4096];
        struct ibv_device **list = ibv_get_device_list(NULL);
        struct ibv_context *ctx;
        struct ibv_pd *pd;

        if (!list || !list[0]) {
                fprintf(stderr, "sanitizer-canary: no RDMA device\n");
                return 1;
        }
        ctx = ibv_open_device(list[0]);
        pd = ctx ? ibv_alloc_pd(ctx) : NULL;
        if (!pd || !ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)) {
                fprintf(stderr, "sanitizer-canary: cannot set up a PD and an MR\n");
                return 1;
        }
        printf("ibv_dealloc_pd with an MR registered: %s\n", strerror(ibv_dealloc_pd(pd)));
        if (open("/dev/null", O_RDONLY | O_CLOEXEC) < 0)
                return 1;
        return 0;
}

int main(int argc, char *argv[])
{
        const char *what = argc > 1 ? argv[1] : "";

        if (strcmp(what, "leak") == 0) {
                lose_block();
                canary_block = NULL;
                scrub_stack();
        } else if (strcmp(what, "ub") == 0) {
                volatile int big = INT_MAX;

                printf("%d\n", big + argc);
        } else if (strcmp(what, "heap") == 0) {
                char *volatile b = malloc(8);

                printf("%d\n", b[8]);
                free(b);
        } else if (strcmp(what, "teardown") == 0) {
                return teardown_wrong();
        } else {
                fprintf(stderr, "usage: sanitizer-canary leak|ub|heap|teardown\n");
                return 2;
        }
        return 0;
}
