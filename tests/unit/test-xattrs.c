/*
 * common/xattrs.c: an entry's attributes as bytes (xferctl send -X, -A),
 * and read from and set on a real file of this machine's /tmp (or
 * $TMPDIR), which must keep user xattrs and POSIX ACLs (ext4, xfs, btrfs
 * and tmpfs from Linux 6.6 do).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "macro.h"
#include "posix-acl.h"
#include "tap.h"
#include "xattrs.h"

static void test_records(void)
{
        uint8_t buf[XATTRS_BYTES_MAX + 16], big[300];
        struct xattr_rec r;
        unsigned int which = 0;
        size_t len = 0, off = 0;

        is_int(xattrs_kind("user.a", 6), XATTRS_USER, "user.* is carried (-X)");
        is_int(xattrs_kind(XATTRS_ACL_ACCESS, strlen(XATTRS_ACL_ACCESS)), XATTRS_ACL, "the access ACL (-A)");
        is_int(xattrs_kind(XATTRS_ACL_DEFAULT, strlen(XATTRS_ACL_DEFAULT)), XATTRS_ACL, "the default ACL (-A)");
        is_int(xattrs_kind("user.", 5), 0, "user. with nothing after it is not a name");
        is_int(xattrs_kind("user.rdmaxfer.digest", 20), 0, "the receiver's own digest is never carried");
        is_int(xattrs_kind("trusted.x", 9), 0, "trusted.* is not carried (the lander holds no CAP_SYS_ADMIN)");
        is_int(xattrs_kind("security.selinux", 16), 0, "security.* is the receiving host's");
        is_int(xattrs_kind("system.posix_acl_accessx", 24), 0, "nor any other system.* name");

        ok(xattrs_put(buf, sizeof(buf), &len, "user.a", "1", 1) == 0 &&
           xattrs_put(buf, sizeof(buf), &len, "user.empty", NULL, 0) == 0, "two records");
        is_int(len, 3 + 6 + 1 + 3 + 10, "a record: name_len u8, value_len u16, name, value");
        ok(buf[0] == 6 && buf[1] == 1 && buf[2] == 0 && memcmp(buf + 3, "user.a1", 7) == 0, "in that order");
        ok(xattrs_check(buf, len, &which) == 0 && which == XATTRS_USER, "well formed: of user.*");
        ok(xattrs_next(buf, len, &off, &r) == 1 && r.name_len == 6 && r.value_len == 1 && r.value[0] == '1' &&
           xattrs_next(buf, len, &off, &r) == 1 && r.value_len == 0 && xattrs_next(buf, len, &off, &r) == 0,
           "walked back: both, then the end");
        is_int(xattrs_check(buf, len - 1, NULL), -EBADMSG, "a record cut short");
        is_int(xattrs_check(buf, 2, NULL), -EBADMSG, "a header cut short");
        ok(xattrs_put(buf, sizeof(buf), &len, "user.a", "2", 1) == 0 && xattrs_check(buf, len, NULL) == -EBADMSG,
           "a name twice");
        len = 0;
        ok(xattrs_put(buf, sizeof(buf), &len, "trusted.a", "1", 1) == 0 && xattrs_check(buf, len, NULL) == -EBADMSG,
           "a name of a namespace not carried");
        buf[0] = 0;
        is_int(xattrs_check(buf, len, NULL), -EBADMSG, "an empty name");
        memset(big, 'v', sizeof(big));
        len = 0;
        for (int i = 0; i < 13; i++) {
                char name[16];

                snprintf(name, sizeof(name), "user.x%02d", i);
                if (xattrs_put(buf, XATTRS_BYTES_MAX, &len, name, big, sizeof(big)) < 0)
                        break;
        }
        is_int(len, 13 * (3 + 8 + sizeof(big)), "thirteen records of 300 bytes fit");
        is_int(xattrs_put(buf, XATTRS_BYTES_MAX, &len, "user.z", big, sizeof(big)), -E2BIG,
               "a fourteenth, past XATTRS_BYTES_MAX: -E2BIG");
        ok(xattrs_check(buf, len, NULL) == 0, "the thirteen are well formed");
        is_int(xattrs_check(buf, XATTRS_BYTES_MAX + 1, NULL), -EBADMSG, "more than XATTRS_BYTES_MAX");
        ok(xattrs_check(NULL, 0, &which) == 0 && which == 0, "none at all is well formed");
}

/* Two entries' attributes are the same whatever their order. */
static void test_same(void)
{
        uint8_t a[64], b[64];
        size_t al = 0, bl = 0;

        ok(xattrs_same(NULL, 0, NULL, 0), "none and none: the same");
        (void)xattrs_put(a, sizeof(a), &al, "user.a", "1", 1);
        (void)xattrs_put(a, sizeof(a), &al, "user.b", "22", 2);
        ok(!xattrs_same(a, al, NULL, 0) && !xattrs_same(NULL, 0, a, al), "some and none differ, either way");
        (void)xattrs_put(b, sizeof(b), &bl, "user.b", "22", 2);
        ok(!xattrs_same(a, al, b, bl) && !xattrs_same(b, bl, a, al), "one more attribute differs, either way");
        (void)xattrs_put(b, sizeof(b), &bl, "user.a", "1", 1);
        ok(xattrs_same(a, al, b, bl) && xattrs_same(b, bl, a, al), "the same two in another order: the same");
        b[bl - 1] = '2';
        ok(!xattrs_same(a, al, b, bl), "a value of the same length with another byte differs");
        bl = 0;
        (void)xattrs_put(b, sizeof(b), &bl, "user.b", "22", 2);
        (void)xattrs_put(b, sizeof(b), &bl, "user.a", "", 0);
        ok(!xattrs_same(a, al, b, bl), "an empty value differs from a byte");
        bl = 0;
        (void)xattrs_put(b, sizeof(b), &bl, "user.b", "22", 2);
        (void)xattrs_put(b, sizeof(b), &bl, "user.c", "1", 1);
        ok(!xattrs_same(a, al, b, bl), "as many, one of another name: differ");
        ok(!xattrs_same(a, al - 1, a, al), "records cut short are no match");
}

/* Which of them differ, for a dry run's itemized line ('x', 'a'). */
static void test_differ(void)
{
        static const uint8_t acl1[] = { 2, 0, 0, 0 }, acl2[] = { 2, 0, 0, 1 };
        uint8_t a[128], b[128];
        size_t al = 0, bl = 0;

        (void)xattrs_put(a, sizeof(a), &al, "user.a", "1", 1);
        (void)xattrs_put(a, sizeof(a), &al, XATTRS_ACL_ACCESS, acl1, sizeof(acl1));
        (void)xattrs_put(b, sizeof(b), &bl, XATTRS_ACL_ACCESS, acl1, sizeof(acl1));
        (void)xattrs_put(b, sizeof(b), &bl, "user.a", "1", 1);
        is_int(xattrs_differ(a, al, b, bl), 0, "the same in another order: nothing differs");
        bl = 0;
        (void)xattrs_put(b, sizeof(b), &bl, "user.a", "1", 1);
        (void)xattrs_put(b, sizeof(b), &bl, XATTRS_ACL_ACCESS, acl2, sizeof(acl2));
        is_int(xattrs_differ(a, al, b, bl), XATTRS_ACL, "another ACL: the ACLs differ, not the user.* ones");
        bl = 0;
        (void)xattrs_put(b, sizeof(b), &bl, XATTRS_ACL_ACCESS, acl1, sizeof(acl1));
        is_int(xattrs_differ(a, al, b, bl), XATTRS_USER, "a user.* attribute one lacks: user.* differ");
        (void)xattrs_put(b, sizeof(b), &bl, "user.a", "1", 1);
        (void)xattrs_put(b, sizeof(b), &bl, XATTRS_ACL_DEFAULT, acl1, sizeof(acl1));
        is_int(xattrs_differ(a, al, b, bl), XATTRS_ACL, "a default ACL only the other has: the ACLs differ");
        is_int(xattrs_differ(a, al - 1, b, bl), XATTRS_USER | XATTRS_ACL, "records cut short: both");
}

static void test_files(void)
{
        char dir[] = "/tmp/test-xattrs.XXXXXX", path[64], bad[256];
        uint8_t acl[POSIX_ACL_BYTES], buf[XATTRS_BYTES_MAX], got[XATTRS_BYTES_MAX];
        size_t len = 0, alen = posix_acl_bytes(acl, 4242, 6), need = 0;
        unsigned int which = 0;
        _cleanup_(closep) int fd = -1;
        struct stat st;
        ssize_t n;
        int r;

        if (!mkdtemp(dir)) {
                ok(false, "mkdtemp: %s", strerror(errno));
                return;
        }
        snprintf(path, sizeof(path), "%s/f", dir);
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
        ok(fd >= 0, "a file to set them on");
        if (fd < 0)
                goto out;
        if (fsetxattr(fd, "user.probe", "1", 1, 0) < 0 && errno == EOPNOTSUPP) {
                /* This machine's /tmp keeps none: nothing below can be tried. */
                diag("SKIP %s keeps no user xattrs", dir);
                goto out;
        }
        ok(fremovexattr(fd, "user.probe") == 0, "this file system keeps user xattrs");

        ok(xattrs_put(buf, sizeof(buf), &len, XATTRS_ACL_ACCESS, acl, alen) == 0 &&
           xattrs_put(buf, sizeof(buf), &len, "user.origin", "https://example.org/x", 21) == 0,
           "an ACL first in the records, a user.* after it");
        /* The ACL takes the owner's write away (user::rw- is kept here); the
         * user.* must still be set: xattrs_apply puts ACLs last. */
        r = xattrs_apply(fd, buf, len, XATTRS_ACL, bad);
        is_int(r, 0, "set on the file (%s)", r < 0 ? bad : "");
        n = fgetxattr(fd, "user.origin", got, sizeof(got));
        ok(n == 21 && memcmp(got, "https://example.org/x", 21) == 0, "the user.* attribute is there");
        n = fgetxattr(fd, XATTRS_ACL_ACCESS, got, sizeof(got));
        ok(n == (ssize_t)alen && memcmp(got, acl, alen) == 0, "the ACL is there, byte for byte");
        ok(fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0640, "and the mode says its mask as group (0640)");

        n = xattrs_read(fd, XATTRS_USER | XATTRS_ACL, got, sizeof(got), &need, bad);
        ok(n > 0 && xattrs_check(got, (size_t)n, &which) == 0 && which == (XATTRS_USER | XATTRS_ACL) &&
           (size_t)n == len, "read back: both records (%zd bytes)", n);
        n = xattrs_read(fd, XATTRS_USER, got, sizeof(got), &need, bad);
        ok(n > 0 && xattrs_check(got, (size_t)n, &which) == 0 && which == XATTRS_USER, "only the namespaces asked");
        is_int(xattrs_read(fd, XATTRS_USER | XATTRS_ACL, got, 10, &need, bad), -E2BIG, "more than the room: -E2BIG");
        is_int(need, len, "saying how many bytes they take");

        /* -A: an entry the sender has no ACL on loses the one it has here. */
        is_int(xattrs_apply(fd, NULL, 0, XATTRS_ACL, bad), 0, "no records, with ACLs carried");
        ok(fgetxattr(fd, XATTRS_ACL_ACCESS, got, sizeof(got)) < 0 && errno == ENODATA, "the ACL is gone");
        ok(fgetxattr(fd, "user.origin", got, sizeof(got)) == 21, "a user.* is left (not the ACLs' to remove)");

        ok(xattrs_apply(fd, (const uint8_t *)"\x06\x01\x00user.a", 9, 0, bad) == -EBADMSG,
           "records cut short: -EBADMSG, nothing set");
        ok(fgetxattr(fd, "user.a", got, sizeof(got)) < 0 && errno == ENODATA, "(nothing)");
out:
        if (path[0])
                unlink(path);
        rmdir(dir);
}

int main(void)
{
        test_records();
        test_same();
        test_differ();
        test_files();
        return done_testing();
}
