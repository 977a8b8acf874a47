/* Receive-ring accounting: shares, lending, exhaustion, and aborts on misuse. */

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
        is_int(ring_admit(&r, a), 4, "first share");
        is_int(ring_admit(&r, b), 4, "second share");
        is_int(ring_admit(&r, c), 4, "third share");
        is_int(ring_admit(&r, d), 4, "fourth share");
        is_int(ring_free(&r), 0, "ring empty");
        is_int(ring_admit(&r, e), 0, "a fifth is not admitted");

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
        is_int(ring_admit(&r, e), 0, "free slots are not enough while 4 are in");
        ring_put(&r, b[3]);
        ring_leave(&r);
        is_int(ring_admit(&r, e), 4, "after one leaves, a share is available");
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

/* Grow one connection while the ring lets it; returns how many it took. */
static uint32_t grow(struct ring *r, uint32_t *slots, uint32_t *held)
{
        uint32_t n = 0;

        while (ring_may_grow(r, *held)) {
                if (ring_take(r, &slots[*held]) != 0)
                        break;
                (*held)++;
                n++;
        }
        return n;
}

static void test_lending(void)
{
        struct ring r = RING_NULL;
        uint32_t a[16], b[16], c[16], d[16], e[16];
        uint32_t ha, hb, hc, hd;

        ring_init(&r, 16, 4);
        ha = ring_admit(&r, a);
        is_int(ha, 4, "a lone connection is admitted with a share");
        is_int(ring_target(&r), 16, "alone, its target is the whole ring");
        grow(&r, a, &ha);
        is_int(ha, 13, "it grows to the ring less one slot per connection still admissible");
        is_int(ring_free(&r), 3, "those 3 stay free");
        ok(!ring_may_grow(&r, ha), "and no further");

        hb = ring_admit(&r, b);
        is_int(hb, 1, "a second connection still gets in, with a reserved slot");
        is_int(ring_target(&r), 8, "the target halves");
        ok(ha > ring_target(&r), "the lender is now over it (must shrink)");
        ok(!ring_may_grow(&r, hb), "the newcomer cannot grow into the reserve");

        /* The lender gives back what it holds over the target. */
        while (ha > ring_target(&r))
                ring_put(&r, a[--ha]);
        is_int(ha, 8, "lender shrank to the target");
        is_int(grow(&r, b, &hb), 5, "the newcomer grows as slots come back");
        is_int(hb, 6, "to the target less the reserve for two more");

        hc = ring_admit(&r, c);
        is_int(hc, 1, "third admitted");
        hd = ring_admit(&r, d);
        is_int(hd, 1, "fourth admitted");
        is_int(ring_admit(&r, e), 0, "a fifth is not (count / share connections at most)");
        is_int(ring_free(&r), 0, "ring fully held");
        is_int(ha + hb + hc + hd, 16, "every slot accounted for");

        ring_put(&r, d[0]);
        ring_leave(&r);
        is_int(ring_admit(&r, e), 1, "after one leaves, another gets in");
        ring_put(&r, e[0]);
        ring_leave(&r);
        for (uint32_t i = 0; i < ha; i++)
                ring_put(&r, a[i]);
        for (uint32_t i = 0; i < hb; i++)
                ring_put(&r, b[i]);
        ring_put(&r, c[0]);
        ring_leave(&r);
        ring_leave(&r);
        ring_leave(&r);
        is_int(ring_free(&r), 16, "all back");
        is_int(ring_target(&r), 16, "target with nobody in is the ring");
        ring_deinit(&r);

        /* Four at once, as many as max_transfers: exactly the old fixed shares. */
        ring_init(&r, 16, 4);
        is_int(ring_admit(&r, a), 4, "1st of 4 simultaneous: a share");
        is_int(ring_admit(&r, b), 4, "2nd: a share");
        is_int(ring_admit(&r, c), 4, "3rd: a share");
        is_int(ring_admit(&r, d), 4, "4th: a share");
        ok(!ring_may_grow(&r, 4), "nobody grows past a full house");
        ring_deinit(&r);
}

/* A holding keeps each slot under a stable index through growth and release. */
static void test_hold(void)
{
        struct ring r = RING_NULL;
        struct ring_hold a = RING_HOLD_NULL, b = RING_HOLD_NULL, c = RING_HOLD_NULL;
        uint32_t i, n = 0;
        bool distinct = true;

        ring_init(&r, 8, 2);            /* up to 4 connections */
        is_int(ring_hold_admit(&a, &r), 2, "admitted with a share");
        ok(a.cap == 8 && a.held == 2, "capacity is the ring, 2 held");
        ok(a.slot[0] != RING_NO_SLOT && a.slot[1] != RING_NO_SLOT && a.slot[2] == RING_NO_SLOT,
           "the share sits at indices 0 and 1");
        while (ring_hold_grow(&a, &r, &i)) {
                if (i != 2 + n)
                        distinct = false;
                n++;
        }
        ok(distinct, "growth hands out indices 2, 3, ... in order");
        is_int(a.held, 5, "alone it grows to 8 less 3 reserved");
        ok(!ring_hold_over(&a, &r), "alone it is not over its due");

        is_int(ring_hold_admit(&b, &r), 1, "a newcomer gets a reserved slot");
        ok(ring_hold_over(&a, &r), "the lender is now over 8 / 2");
        ring_hold_release(&a, &r, 3);
        ok(a.slot[3] == RING_NO_SLOT && a.held == 4, "released index 3");
        ok(!ring_hold_over(&a, &r), "4 is its due");
        ok(ring_hold_grow(&b, &r, &i) && i == 1, "the newcomer grows into the next index");
        ok(!ring_hold_grow(&b, &r, &i), "but not into the 2 slots reserved for the others");
        is_int(ring_free(&r), 2, "2 free");

        ring_hold_leave(&b, &r);
        ring_hold_free(&b);
        ok(ring_hold_grow(&a, &r, &i) && i == 3, "a released index is reused first");
        ring_hold_leave(&a, &r);
        ring_hold_free(&a);
        is_int(ring_free(&r), 8, "leaving gives every slot back");
        is_int(ring_hold_admit(&c, &r), 2, "and the ring admits afresh");
        ring_hold_leave(&c, &r);
        ring_hold_free(&c);
        ring_hold_free(&c);
        ok(true, "free is safe twice");
        ring_deinit(&r);
}

/* The lanes of one transfer: each is due its part of the transfer's due. */
static void test_lanes(void)
{
        struct ring r = RING_NULL;
        struct ring_hold l0 = RING_HOLD_NULL, l1 = RING_HOLD_NULL, other = RING_HOLD_NULL;
        uint32_t i;

        ring_init(&r, 16, 4);           /* up to 4 transfers */
        is_int(ring_hold_admit(&l0, &r), 4, "lane 0 is admitted with a share");
        ring_hold_set_lanes(&l0, 2);
        is_int(ring_hold_target(&l0, &r), 8, "alone, each of 2 lanes is due 16 / 2");
        is_int(ring_hold_join(&l1, &r), 0, "lane 1 joins");
        ring_hold_set_lanes(&l1, 2);
        ok(l1.held == 0 && r.conns == 1, "with no slot, and not counted as a transfer");
        while (ring_hold_grow(&l1, &r, &i))
                ;
        is_int(l1.held, 8, "lane 1 grows to its due");
        while (ring_hold_grow(&l0, &r, &i))
                ;
        is_int(l0.held, 5, "lane 0 grows into what is left but the 3 reserved");
        is_int(ring_hold_admit(&other, &r), 1, "another transfer still gets in");
        is_int(ring_hold_target(&l0, &r), 4, "now each lane is due 16 / 2 / 2");
        ok(ring_hold_over(&l0, &r) && ring_hold_over(&l1, &r), "both lanes are over it");
        ring_hold_leave(&l1, &r);
        is_int(r.conns, 2, "a lane leaving does not count as a transfer leaving");
        ring_hold_leave(&l1, &r);
        ok(l1.held == 0 && r.conns == 2, "leaving twice is harmless");
        ring_hold_leave(&l0, &r);
        ring_hold_leave(&other, &r);
        is_int(ring_free(&r), 16, "every slot back");
        is_int(r.conns, 0, "no transfer left");
        ring_hold_free(&l0);
        ring_hold_free(&l1);
        ring_hold_free(&other);
        ring_deinit(&r);
}

static void leave_unadmitted(void)
{
        struct ring r;

        ring_init(&r, 4, 2);
        ring_leave(&r);
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
        ring_admit(&r, s);
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
        ring_admit(&r, s);
        ring_put(&r, 4);
}

static void put_ok(void)
{
        struct ring r;
        uint32_t s[2];

        ring_init(&r, 4, 2);
        ring_admit(&r, s);
        ring_put(&r, s[0]);
        ring_put(&r, s[1]);
        ring_deinit(&r);
}

/* max_transfers, not count / share, limits admission; it may change at run time. */
static void test_conns_max(void)
{
        struct ring r = RING_NULL;
        uint32_t s[6][2];

        /* slot_count 12, max_transfers 5: a share of 2 would admit 6. */
        ring_init(&r, 12, 12 / 5);
        is_int(r.conns_max, 6, "count / share alone would admit 6");
        ring_set_conns_max(&r, 5);
        for (int i = 0; i < 5; i++)
                is_int(ring_admit(&r, s[i]), 2, "admitted within max_transfers");
        is_int(ring_admit(&r, s[5]), 0, "the sixth is refused at max_transfers = 5");

        /* Lowered at run time: nobody is evicted, newcomers wait until below. */
        ring_set_conns_max(&r, 3);
        is_int(r.conns, 5, "lowering evicts nobody");
        for (int i = 0; i < 2; i++) {
                for (int k = 0; k < 2; k++)
                        ring_put(&r, s[i][k]);
                ring_leave(&r);
        }
        is_int(ring_admit(&r, s[0]), 0, "3 in, limit 3: still refused");
        for (int k = 0; k < 2; k++)
                ring_put(&r, s[2][k]);
        ring_leave(&r);
        is_int(ring_admit(&r, s[0]), 2, "below the new limit: admitted");

        /* Raised: never past count / share, and never to 0. */
        ring_set_conns_max(&r, 100);
        is_int(r.conns_max, 6, "raising stops at count / share");
        ring_set_conns_max(&r, 0);
        is_int(r.conns_max, 1, "0 means 1");
        ring_deinit(&r);
}

/* A connection let in before it proved anything holds nothing and is not
 * counted; once it is admitted it holds a share like any other. */
static void test_promote(void)
{
        struct ring r = RING_NULL;
        struct ring_hold a = RING_HOLD_NULL, b = RING_HOLD_NULL, p = RING_HOLD_NULL;
        uint32_t i;

        ring_init(&r, 8, 4);
        is_int(ring_hold_join(&p, &r), 0, "pending connection joins");
        is_int(p.held, 0, "it holds nothing");
        is_int(r.conns, 0, "and is not counted");
        is_int(ring_hold_admit(&a, &r), 4, "a running transfer still gets its share");
        is_int(ring_hold_target(&a, &r), 8, "and its due is the whole ring: the pending one costs nothing");
        is_int(ring_hold_promote(&p, &r), 4, "promoted: a share");
        ok(p.counted && r.conns == 2, "promoted is counted");
        ok(p.slot[0] != RING_NO_SLOT && p.slot[3] != RING_NO_SLOT && p.slot[4] == RING_NO_SLOT,
           "its slots sit under indices 0..3");
        ok(ring_hold_grow(&p, &r, &i) == false, "ring full: no growth");
        ring_hold_release(&p, &r, 3);
        is_int(p.held, 3, "release works on promoted slots");
        ring_hold_leave(&p, &r);
        is_int(r.conns, 1, "leave uncounts it");
        is_int(ring_free(&r), 4, "and returns every slot");

        /* Promotion refused when the ring admits no more. */
        ring_hold_free(&p);
        is_int(ring_hold_admit(&b, &r), 4, "second transfer");
        is_int(ring_hold_join(&p, &r), 0, "another pending one");
        is_int(ring_hold_promote(&p, &r), 0, "full: not promoted");
        ok(!p.counted && p.held == 0 && p.nunused == p.cap, "and still an empty join");
        ring_hold_leave(&p, &r);
        is_int(r.conns, 2, "leaving an unpromoted join uncounts nobody");
        ring_hold_leave(&a, &r);
        ring_hold_leave(&b, &r);
        is_int(ring_free(&r), 8, "all back");
        ring_hold_free(&a);
        ring_hold_free(&b);
        ring_hold_free(&p);
        ring_deinit(&r);
}

static void test_abort(void)
{
        ok(aborts(double_put), "double put aborts (SIGABRT)");
        ok(aborts(put_never_taken), "put of a slot never taken aborts");
        ok(aborts(put_out_of_range), "put of an out-of-range slot aborts");
        ok(!aborts(put_ok), "correct puts do not");
        ok(aborts(leave_unadmitted), "leaving without being admitted aborts");
}

int main(void)
{
        test_init();
        test_shares();
        test_lending();
        test_hold();
        test_lanes();
        test_conns_max();
        test_promote();
        test_abort();
        return done_testing();
}
