/* Receive-ring accounting: shares, exhaustion, and aborts on misuse. */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring.h"
#include "tap.h"

static void test_init(void)
{
        struct ring r = RING_NULL;

        is_int(ring_init(&r, 0, 0), -EINVAL, "0 slots refused");
        is_int(ring_init(&r, 8, 0), -EINVAL, "share 0 refused");
        is_int(ring_init(&r, 8, 9), -EINVAL, "share > count refused");
        is_int(ring_init(&r, 8, 8), 0, "share == count is fine");
        is_int(ring_free(&r), 8, "all free");
        ring_deinit(&r);
        ring_deinit(&r);
        struct ring z = RING_NULL;
        ring_deinit(&z);
        ok(true, "deinit safe twice and on RING_NULL");
}

static void test_shares(void)
{
        struct ring r = RING_NULL;
        uint32_t a[4], b[4], c[4], d[4], e[4];
        uint8_t seen[16] = { 0 };
        bool unique = true;

        ring_init(&r, 16, 4);
        is_int(ring_take_share(&r, a), 0, "first share");
        is_int(ring_take_share(&r, b), 0, "second share");
        is_int(ring_take_share(&r, c), 0, "third share");
        is_int(ring_take_share(&r, d), 0, "fourth share");
        is_int(ring_free(&r), 0, "ring empty");
        is_int(ring_take_share(&r, e), RING_FULL, "fifth is RING_FULL");

        uint32_t *all[] = { a, b, c, d };
        for (int s = 0; s < 4; s++)
                for (int i = 0; i < 4; i++) {
                        if (all[s][i] >= 16 || seen[all[s][i]])
                                unique = false;
                        else
                                seen[all[s][i]] = 1;
                }
        ok(unique, "every slot handed out exactly once");
        ok(a[0] == 0 && a[3] == 3, "a fresh ring hands out 0, 1, 2, ...");

        ring_put(&r, b[0]);
        ring_put(&r, b[1]);
        ring_put(&r, b[2]);
        is_int(ring_take_share(&r, e), RING_FULL, "3 free slots are not a share of 4");
        ring_put(&r, b[3]);
        is_int(ring_take_share(&r, e), 0, "after the fourth put a share is available");
        ok(e[0] != e[1] && e[0] < 16, "re-used slots are valid");

        for (int i = 0; i < 4; i++) {
                ring_put(&r, a[i]);
                ring_put(&r, c[i]);
                ring_put(&r, d[i]);
                ring_put(&r, e[i]);
        }
        is_int(ring_free(&r), 16, "all slots back");
        ring_deinit(&r);
}

/* Run @fn in a child; true when it died of SIGABRT. */
static bool aborts(void (*fn)(void))
{
        int status;
        pid_t pid;

        fflush(stdout);
        pid = fork();
        if (pid == 0) {
                /* Keep the expected abort message out of the test log. */
                if (!freopen("/dev/null", "w", stderr))
                        _exit(3);
                fn();
                _exit(0);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
                return false;
        return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void double_put(void)
{
        struct ring r;
        uint32_t s[2];

        ring_init(&r, 4, 2);
        ring_take_share(&r, s);
        ring_put(&r, s[0]);
        ring_put(&r, s[0]);
}

static void put_never_taken(void)
{
        struct ring r;

        ring_init(&r, 4, 2);
        ring_put(&r, 3);
}

static void put_out_of_range(void)
{
        struct ring r;
        uint32_t s[2];

        ring_init(&r, 4, 2);
        ring_take_share(&r, s);
        ring_put(&r, 4);
}

static void put_ok(void)
{
        struct ring r;
        uint32_t s[2];

        ring_init(&r, 4, 2);
        ring_take_share(&r, s);
        ring_put(&r, s[0]);
        ring_put(&r, s[1]);
        ring_deinit(&r);
}

static void test_abort(void)
{
        ok(aborts(double_put), "double put aborts (SIGABRT)");
        ok(aborts(put_never_taken), "put of a slot never taken aborts");
        ok(aborts(put_out_of_range), "put of an out-of-range slot aborts");
        ok(!aborts(put_ok), "correct puts do not");
}

int main(void)
{
        test_init();
        test_shares();
        test_abort();
        return done_testing();
}
