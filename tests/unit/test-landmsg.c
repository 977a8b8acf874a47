/*
 * The lander protocol (common/landmsg.c): every message round-trips, every
 * field out of its bounds is refused on both sides, a message cut short
 * or with a byte too many is refused, another version is told apart, the
 * binding of a credential changes with every field it covers, a BATCH
 * holds only what it may (and as many as fit), and descriptors travel
 * with a message over a real socket pair, one or a BATCH's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landmsg.h"
#include "macro.h"
#include "tap.h"
#include "xattrs.h"

static uint8_t buf[LANDMSG_MSG_MAX + 16];

static struct landmsg *msg_new(uint16_t type)
{
        struct landmsg *m = calloc(1, sizeof(*m));

        if (!m)
                abort();
        m->type = type;
        m->id = 77;
        return m;
}

static void session_fill(struct landmsg_session *s)
{
        s->direction = LANDMSG_PUSH;
        s->naddrs = 2;
        memset(s->token, 0xa5, sizeof(s->token));
        s->addrs[0][10] = s->addrs[0][11] = 0xff;
        s->addrs[0][12] = 198;
        s->addrs[0][13] = 18;
        s->addrs[0][15] = 2;
        s->addrs[1][0] = 0xfd;
        strcpy(s->cred, "MUNGE:AwQFAAD3cfWmJvx+ckSAVt4RPs7y:");
        strcpy(s->dest, "/scratch/alice/run1");
}

/* Encode @m, decode it again: the same message, every byte. */
static bool round_trip(const struct landmsg *m)
{
        struct landmsg *back = msg_new(0);
        int n = landmsg_encode(buf, sizeof(buf), m);
        bool same = n > 0 && landmsg_decode(buf, (size_t)n, back) == 0 && back->type == m->type &&
                    back->id == m->id;

        if (same) {
                switch (m->type) {
                case LANDMSG_SESSION:
                        same = memcmp(&back->session, &m->session, sizeof(m->session)) == 0;
                        break;
                case LANDMSG_SESSION_OK:
                        same = memcmp(&back->session_ok, &m->session_ok, sizeof(m->session_ok)) == 0;
                        break;
                case LANDMSG_ERROR:
                        same = memcmp(&back->error, &m->error, sizeof(m->error)) == 0;
                        break;
                case LANDMSG_SETATTR:
                        same = memcmp(&back->setattr, &m->setattr, sizeof(m->setattr)) == 0;
                        break;
                case LANDMSG_WALK_HEAD:
                        same = memcmp(&back->walk_head, &m->walk_head, sizeof(m->walk_head)) == 0;
                        break;
                case LANDMSG_WALK_ENTRY:
                        same = memcmp(&back->walk_entry, &m->walk_entry, sizeof(m->walk_entry)) == 0;
                        break;
                case LANDMSG_OK:
                        break;
                case LANDMSG_FD:
                        same = back->fd.xattrs_len == m->fd.xattrs_len &&
                               memcmp(back->fd.xattrs, m->fd.xattrs, m->fd.xattrs_len) == 0;
                        break;
                default:
                        same = memcmp(&back->op, &m->op, sizeof(m->op)) == 0;
                }
        }
        free(back);
        return same;
}

static void test_round_trips(void)
{
        struct landmsg *m = msg_new(LANDMSG_SESSION);

        session_fill(&m->session);
        ok(round_trip(m), "SESSION");
        m->session.naddrs = LANDMSG_ADDRS_MAX;
        memset(m->session.cred, 'A', LANDMSG_CRED_MAX);
        memset(m->session.dest + 1, 'd', LANDMSG_PATH_MAX - 1);
        ok(round_trip(m), "SESSION at every bound");
        free(m);

        m = msg_new(LANDMSG_SESSION_OK);
        m->session_ok = (struct landmsg_session_ok){ .session = 9, .uid = 61001, .gid = 61001, .user = "alice" };
        ok(round_trip(m), "SESSION_OK");
        free(m);

        static const uint16_t ops[] = { LANDMSG_MKDIR, LANDMSG_TMPFILE, LANDMSG_OPEN_READ };
        for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
                m = msg_new(ops[i]);
                m->op.session = 3;
                m->op.mode = ops[i] == LANDMSG_OPEN_READ ? 0 : 0640;
                strcpy(m->op.path, "a/.hidden/b c");
                ok(round_trip(m), "op %u with a path", ops[i]);
                memset(m->op.path, 0, sizeof(m->op.path));
                ok(round_trip(m), "op %u on DEST itself", ops[i]);
                free(m);
        }
        m = msg_new(LANDMSG_LINK);
        m->op.session = 3;
        strcpy(m->op.path, "sub");
        strcpy(m->op.leaf, "data.bin");
        ok(round_trip(m), "LINK");
        m->op.flags = LANDMSG_LINK_REPLACE | LANDMSG_LINK_SYNC;
        ok(round_trip(m), "LINK, replacing, syncing");
        m->op.flags = 1u << 5;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK with an unknown flag: not encoded");
        m->op.flags = LANDMSG_LINK_MTIME | LANDMSG_OP_STAGE | LANDMSG_OP_INTO;
        m->op.mtime_ns = 1234567890123456789ull;
        ok(round_trip(m), "LINK with its mtime, in a staging directory in DEST");
        m->op.flags = LANDMSG_OP_STAGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an mtime without LINK_MTIME: not encoded");
        m->op.mtime_ns = 0;
        m->op.flags = LANDMSG_OP_INTO;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "OP_INTO outside a staging directory: not encoded");
        m->op.flags = 0;
        free(m);
        m = msg_new(LANDMSG_MKDIR);
        m->op.session = 3;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_INTO;
        strcpy(m->op.leaf, "run1");
        ok(round_trip(m), "MKDIR of the staging directory, with the name it is to have");
        strcpy(m->op.path, "a");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MKDIR of an entry with a leaf: not encoded");
        memset(m->op.path, 0, sizeof(m->op.path));
        m->op.flags = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MKDIR outside a staging directory with a leaf: not "
               "encoded");
        free(m);
        m = msg_new(LANDMSG_SYMLINK);
        m->op.session = 3;
        m->op.flags = LANDMSG_OP_STAGE;
        strcpy(m->op.path, "a/b");
        strcpy(m->op.leaf, "l");
        strcpy(m->op.target, "../../x y/../z");
        ok(round_trip(m), "SYMLINK in the staging directory, any target");
        m->op.mtime_ns = 1;
        ok(round_trip(m), "SYMLINK with its mtime");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE;
        ok(round_trip(m), "SYMLINK keeping the one there (version 10)");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_ANY;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SYMLINK keeping two ways: not encoded");
        m->op.flags = LANDMSG_LINK_KEEP_ANY;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SYMLINK keeping, not in a staging directory: not encoded");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SYMLINK with a LINK's other flag: not encoded");
        m->op.flags = LANDMSG_OP_STAGE;
        m->op.mtime_ns = 0;
        m->type = LANDMSG_HARDLINK;
        memset(m->op.target, 0, sizeof(m->op.target));
        strcpy(m->op.target, "a/c/f");
        ok(round_trip(m), "HARDLINK");
        strcpy(m->op.target, "../f");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "HARDLINK to '../f': not encoded");
        m->type = LANDMSG_SYMLINK;
        memset(m->op.target, 0, sizeof(m->op.target));
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SYMLINK without a target: not encoded");
        free(m);
        m = msg_new(LANDMSG_PUBLISH);
        m->op.session = 3;
        m->op.flags = LANDMSG_PUBLISH_REPLACE;
        ok(round_trip(m), "PUBLISH, replacing");
        m->op.flags = LANDMSG_OP_STAGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH with OP_STAGE: not encoded");
        m->op.flags = 0;
        strcpy(m->op.path, "x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH with a path: not encoded");
        memset(m->op.path, 0, sizeof(m->op.path));
        m->op.flags = LANDMSG_OP_INTO;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH into DEST without the name: not encoded");
        strcpy(m->op.leaf, "run1");
        ok(round_trip(m), "PUBLISH into DEST as run1");
        m->op.flags = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH as DEST with a name: not encoded");
        memset(m->op.leaf, 0, sizeof(m->op.leaf));
        m->type = LANDMSG_DISCARD;
        ok(round_trip(m), "DISCARD");
        m->op.flags = LANDMSG_OP_INTO;
        ok(round_trip(m), "DISCARD of a staging directory in DEST");
        m->op.flags = 0;
        m->type = LANDMSG_MKDIR;
        m->op.flags = LANDMSG_LINK_REPLACE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MKDIR with LINK's flag: not encoded");
        free(m);
        m = msg_new(LANDMSG_SETATTR);
        m->setattr.session = 3;
        m->setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_AT_PATH | LANDMSG_OP_STAGE;
        m->setattr.mode = 0555;
        strcpy(m->setattr.path, "a/b");
        ok(round_trip(m), "SETATTR of a directory in the staging directory, by its path");
        m->setattr.flags = LANDMSG_SET_MODE | LANDMSG_OP_STAGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SETATTR with a path but no SET_AT_PATH: not encoded");
        m->setattr.flags = LANDMSG_SET_AT_PATH;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SETATTR that sets nothing: not encoded");
        free(m);
        m = msg_new(LANDMSG_SETATTR);
        m->setattr.session = 3;
        m->setattr.flags = LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_XATTR;
        m->setattr.mode = 0444;
        m->setattr.mtime_ns = 981173106123456789ull;
        strcpy(m->setattr.xname, "user.rdmaxfer.digest");
        m->setattr.xlen = LANDMSG_XATTR_VALUE_MAX;
        memset(m->setattr.xvalue, 0x61, LANDMSG_XATTR_VALUE_MAX);
        ok(round_trip(m), "SETATTR of mode, mtime and an xattr of LANDMSG_XATTR_VALUE_MAX bytes");
        m->setattr.flags = LANDMSG_SET_MODE;
        m->setattr.mtime_ns = 0;
        memset(m->setattr.xname, 0, sizeof(m->setattr.xname));
        m->setattr.xlen = 0;
        memset(m->setattr.xvalue, 0, sizeof(m->setattr.xvalue));
        ok(round_trip(m), "SETATTR of a mode alone");
        m->setattr.flags = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SETATTR of nothing: not encoded");
        m->setattr.flags = LANDMSG_SET_XATTR;
        m->setattr.mode = 0;
        strcpy(m->setattr.xname, "trusted.x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an xattr outside user.*: not encoded");
        strcpy(m->setattr.xname, "user.");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "'user.' alone: not encoded");
        strcpy(m->setattr.xname, "user.x");
        m->setattr.mtime_ns = 5;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an mtime without SET_MTIME: not encoded");
        free(m);
        m = msg_new(LANDMSG_END);
        m->op.session = 3;
        ok(round_trip(m), "END");
        m->type = LANDMSG_OK;
        ok(round_trip(m), "OK");
        m->type = LANDMSG_FD;
        memset(&m->fd, 0, sizeof(m->fd));
        ok(round_trip(m), "FD");
        free(m);
        m = msg_new(LANDMSG_ERROR);
        m->error = (struct landmsg_error){ .err = EACCES, .verdict = 2, .where = "/scratch/evil",
                                           .text = "a symlink bob owns" };
        ok(round_trip(m), "ERROR");
        free(m);
}

/* A pulled tree's walker (version 4): WALK, its count and its entries. */
static void test_walk(void)
{
        struct landmsg *m = msg_new(LANDMSG_SESSION);
        struct landmsg_walk_entry *e;
        int n;

        session_fill(&m->session);
        m->session.flags = LANDMSG_SESSION_TREE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SESSION_TREE on a PUSH: not encoded");
        m->session.flags = LANDMSG_SESSION_SYNC;
        ok(round_trip(m), "SESSION_SYNC on a PUSH");
        m->session.flags = LANDMSG_SESSION_TREE;
        m->session.direction = LANDMSG_PULL;
        ok(round_trip(m), "SESSION_TREE on a PULL");
        m->session.flags = LANDMSG_SESSION_SYNC;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SESSION_SYNC on a PULL: not encoded");
        m->session.flags = LANDMSG_SESSION_DRY;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SESSION_DRY on a PULL: not encoded");
        m->session.direction = LANDMSG_PUSH;
        m->session.flags = LANDMSG_SESSION_DRY | LANDMSG_SESSION_SYNC | LANDMSG_SESSION_REPLACE;
        ok(round_trip(m), "SESSION_DRY on a PUSH, with a sync's flags (version 7)");
        free(m);

        m = msg_new(LANDMSG_WALK);
        m->op.session = 5;
        ok(round_trip(m), "WALK");
        strcpy(m->op.path, "a");
        ok(round_trip(m), "WALK of a tree beneath DEST (version 8: a dry run's list of names)");
        strcpy(m->op.path, "a/../b");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "WALK of a path with '..': not encoded");
        free(m);

        m = msg_new(LANDMSG_LOOK);
        m->op.session = 5;
        strcpy(m->op.leaf, "a.dat");
        ok(round_trip(m), "LOOK");
        m->op.flags = LANDMSG_OP_PARENT;
        ok(round_trip(m), "LOOK in DEST's parent");
        memset(m->op.leaf, 0, sizeof(m->op.leaf));
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK without a name: not encoded");
        strcpy(m->op.leaf, "a.dat");
        strcpy(m->op.path, "sub");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK in DEST's parent with a path: not encoded");
        m->op.flags = 0;
        strcpy(m->op.path, "run1/sub");
        ok(round_trip(m), "LOOK at a path beneath DEST (a tree's entry, version 5)");
        strcpy(m->op.path, "run1/../x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK at a path with '..': not encoded");
        strcpy(m->op.path, "run1/sub");
        m->op.flags = LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        ok(round_trip(m), "LOOK asking for the file's attributes (version 7)");
        m->op.xattrs_len = 3;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK carrying attributes of its own: not encoded");
        m->op.xattrs_len = 0;
        m->op.flags = LANDMSG_LOOK_LINK;
        ok(round_trip(m), "LOOK asking for a symlink's target (version 10)");
        strcpy(m->op.target, "x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK carrying a target: not encoded");
        m->op.target[0] = '\0';
        m->op.flags = LANDMSG_LOOK_LINK << 1;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LOOK with a flag no version has: not encoded");
        free(m);

        m = msg_new(LANDMSG_PUBLISH);
        m->op.session = 5;
        m->op.flags = LANDMSG_PUBLISH_MERGE;
        ok(round_trip(m), "PUBLISH merging into the tree there (version 5)");
        m->op.flags = LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_REPLACE | LANDMSG_OP_INTO;
        strcpy(m->op.leaf, "run1");
        ok(round_trip(m), "PUBLISH merging, replacing what differs, into DEST/run1");
        m->op.flags = LANDMSG_PUBLISH_DELETE | LANDMSG_PUBLISH_REPLACE | LANDMSG_OP_INTO;
        ok(round_trip(m), "PUBLISH deleting what the source lacks (version 5)");
        m->op.flags = LANDMSG_PUBLISH_DELETE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH_DELETE without REPLACE: not encoded");
        m->op.flags = LANDMSG_PUBLISH_DELETE | LANDMSG_PUBLISH_REPLACE | LANDMSG_PUBLISH_MERGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH_DELETE with MERGE: not encoded");
        m->op.flags = 1u << 3;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "PUBLISH with an unknown flag: not encoded");
        free(m);

        m = msg_new(LANDMSG_LINK);
        m->op.session = 5;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_BYTES;
        strcpy(m->op.leaf, "f.dat");
        ok(round_trip(m), "LINK keeping the same file there, in a staging directory (version 5)");
        m->op.flags = LANDMSG_LINK_KEEP_SIZE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK_KEEP outside a staging directory: not encoded");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_ANY;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK keeping by two rules: not encoded");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_XATTRS | LANDMSG_OP_ACLS;
        ok(round_trip(m), "LINK keeping the file there only with the same attributes (version 7)");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_ANY | LANDMSG_LINK_KEEP_XATTRS;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL,
               "LINK_KEEP_XATTRS with KEEP_ANY (--skip-existing keeps whatever is there): not encoded");
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_KEEP_XATTRS;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK_KEEP_XATTRS alone: not encoded");
        free(m);

        m = msg_new(LANDMSG_PUBLISHED);
        m->published.deleted = UINT64_MAX;
        ok(round_trip(m), "PUBLISHED, its count at its bound");
        free(m);

        m = msg_new(LANDMSG_WALK_HEAD);
        m->walk_head = (struct landmsg_walk_head){ .entries = UINT32_MAX - 1, .bytes = UINT64_MAX };
        ok(round_trip(m), "WALK_HEAD at its bounds");
        m->walk_head.entries = UINT32_MAX;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "WALK_HEAD of UINT32_MAX entries: not encoded");
        free(m);

        m = msg_new(LANDMSG_WALK_ENTRY);
        e = &m->walk_entry;
        *e = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_FILE, .mode = 0444, .size = 1ull << 40,
                                          .mtime_ns = 1700000000123456789ull, .path = ".git/objects/ab/cd" };
        ok(round_trip(m), "WALK_ENTRY: a read-only file beneath a dotted directory");
        memset(e->path, 'p', LANDMSG_PATH_MAX);
        for (size_t k = 200; k < LANDMSG_PATH_MAX; k += 201)
                e->path[k] = '/';
        e->kind = LANDMSG_WALK_SYMLINK;
        e->mode = 0;
        memset(e->target, 't', LANDMSG_PATH_MAX);
        e->size = LANDMSG_PATH_MAX;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && round_trip(m), "a symlink's: path and target of %d bytes each (%d)", LANDMSG_PATH_MAX, n);
        e->size = 3;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a symlink whose size is not its target's: not encoded");
        *e = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_HARDLINK, .path = "b", .target = "a/x" };
        ok(round_trip(m), "a hard link's: the entry it shares a file with");
        strcpy(e->target, "../x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a hard link to ../x: not encoded");
        *e = (struct landmsg_walk_entry){ .kind = LANDMSG_WALK_DIR, .mode = 0700, .path = "d", .size = 1 };
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a directory with a size: not encoded");
        e->size = 0;
        e->mode = 010000;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a mode beyond 07777: not encoded");
        e->mode = 0700;
        memset(e->path, 0, sizeof(e->path));
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an entry without a path: not encoded");
        strcpy(e->path, "/abs");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an absolute path: not encoded");
        strcpy(e->path, "d");
        e->kind = 9;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an unknown kind: not encoded");
        /* The decoder holds to the same: a hand-made kind 9 refused. */
        e->kind = LANDMSG_WALK_DIR;
        n = landmsg_encode(buf, sizeof(buf), m);
        buf[LANDMSG_HEADER_SIZE] = 9;
        is_int(n > 0 ? landmsg_decode(buf, (size_t)n, m) : n, -EBADMSG, "decoded: an unknown kind refused");
        free(m);
}

static void test_bounds(void)
{
        struct landmsg *m = msg_new(LANDMSG_SESSION);
        int n;

        session_fill(&m->session);
        m->session.naddrs = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "SESSION with no address: not encoded");
        m->session.naddrs = LANDMSG_ADDRS_MAX + 1;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... with more than LANDMSG_ADDRS_MAX");
        m->session.naddrs = 1;
        m->session.flags = 0x80;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... an unknown flag");
        m->session.flags = 0;
        m->session.direction = 3;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... an unknown direction");
        m->session.direction = LANDMSG_PULL;
        strcpy(m->session.cred, "MUNGE: x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... a credential that is not printable ASCII");
        m->session.cred[0] = '\0';
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... no credential");
        strcpy(m->session.cred, "MUNGE:x:");
        strcpy(m->session.dest, "scratch");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... a relative DEST");
        strcpy(m->session.dest, "/");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... DEST '/'");
        strcpy(m->session.dest, "/x");
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0, "... and with all that right, encoded");
        /* The decoder refuses what the encoder would not write. */
        buf[LANDMSG_HEADER_SIZE] = 7;
        is_int(landmsg_decode(buf, (size_t)n, m), -EBADMSG, "a direction of 7 on the wire: EBADMSG");
        free(m);

        m = msg_new(LANDMSG_MKDIR);
        m->op.session = 1;
        m->op.mode = 010000;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MKDIR with a mode beyond 07777");
        m->op.mode = 0755;
        strcpy(m->op.path, "../x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a path with '..'");
        strcpy(m->op.path, "/x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an absolute path");
        strcpy(m->op.path, "a//b");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a path with '//'");
        strcpy(m->op.path, "a");
        m->op.session = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "session 0");
        m->op.session = 1;
        m->type = LANDMSG_LINK;
        m->op.mode = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK without a leaf");
        strcpy(m->op.leaf, "a/b");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK with a leaf holding '/'");
        strcpy(m->op.leaf, "..");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "LINK with '..'");
        /* LINK with the file's mode and digest (one round trip to publish). */
        m->op.flags = LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_LINK_SYNC;
        m->op.mode = 0444;
        strcpy(m->op.leaf, "b.dat");
        strcpy(m->op.target, "0123456789abcdef0123456789abcdef");
        ok(landmsg_encode(buf, sizeof(buf), m) > 0, "LINK with a mode and a digest: encoded");
        m->op.flags = LANDMSG_LINK_DIGEST;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a mode without LINK_MODE: refused");
        m->op.mode = 0;
        strcpy(m->op.target, "0123456789ABCDEF");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a digest that is not lowercase hex: refused");
        m->op.flags = 0;
        strcpy(m->op.target, "00");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a digest without LINK_DIGEST: refused");
        m->op.target[0] = '\0';

        /* One file that is DEST itself: TMPFILE and LINK in DEST's parent only. */
        strcpy(m->op.leaf, "b.dat");
        m->op.path[0] = '\0';
        m->op.flags = LANDMSG_OP_PARENT;
        ok(landmsg_encode(buf, sizeof(buf), m) > 0, "LINK in DEST's parent: encoded");
        m->type = LANDMSG_TMPFILE;
        ok(landmsg_encode(buf, sizeof(buf), m) > 0, "TMPFILE there, with the name it is to have: encoded");
        strcpy(m->op.path, "a");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... but not beneath it (a path)");
        m->op.path[0] = '\0';
        m->op.flags |= LANDMSG_OP_STAGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "... nor in the staging directory");
        m->op.flags = LANDMSG_OP_PARENT;
        m->type = LANDMSG_MKDIR;
        m->op.leaf[0] = '\0';
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MKDIR in DEST's parent: never");
        m->type = LANDMSG_SYMLINK;
        strcpy(m->op.leaf, "b.dat");
        strcpy(m->op.target, "x");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "nor SYMLINK");
        m->op.target[0] = '\0';
        m->op.flags = 0;
        m->type = LANDMSG_TMPFILE;
        strcpy(m->op.leaf, "a/b");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "TMPFILE's name is one name");
        m->op.leaf[0] = '\0';
        strcpy(m->op.path, "a");
        m->type = LANDMSG_END;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "END with a path");
        m->type = LANDMSG_ERROR;
        memset(&m->error, 0, sizeof(m->error));
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "ERROR with errno 0");
        m->type = 99;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an unknown type");
        free(m);
}

static void test_framing(void)
{
        struct landmsg *m = msg_new(LANDMSG_LINK), *d = msg_new(0);
        bool all = true;
        int n;

        m->op.session = 5;
        strcpy(m->op.path, "x/y");
        strcpy(m->op.leaf, "f");
        n = landmsg_encode(buf, sizeof(buf), m);
        for (int cut = 0; cut < n; cut++)
                all = all && landmsg_decode(buf, (size_t)cut, d) == -EBADMSG;
        ok(all, "every prefix of a LINK: EBADMSG");
        buf[n] = 0;
        is_int(landmsg_decode(buf, (size_t)n + 1, d), -EBADMSG, "a byte more than its length says: EBADMSG");
        buf[12]++;      /* the payload length */
        buf[n] = 'g';
        is_int(landmsg_decode(buf, (size_t)n + 1, d), -EBADMSG,
               "a byte more, the length saying so, the leaf's length not: EBADMSG");
        buf[12]--;
        buf[0] ^= 1;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "another magic: EBADMSG");
        buf[0] ^= 1;
        buf[4] = 1;
        is_int(landmsg_decode(buf, (size_t)n, d), -EPROTONOSUPPORT, "version 1 (no mtime in an op): EPROTONOSUPPORT");
        ok(d->id == 77 && d->type == LANDMSG_LINK, "with the id and type to answer");
        buf[4] = 2;
        is_int(landmsg_decode(buf, (size_t)n, d), -EPROTONOSUPPORT, "version 2 (no BATCH): EPROTONOSUPPORT");
        buf[4] = LANDMSG_VERSION;
        /* The path "x/y" begins after session, mode, flags, mtime and the three lengths. */
        ok(buf[LANDMSG_HEADER_SIZE + 8 + 4 + 4 + 8 + 2 + 1 + 2 + 1] == '/', "(the path's second byte found)");
        buf[LANDMSG_HEADER_SIZE + 8 + 4 + 4 + 8 + 2 + 1 + 2 + 1] = 0;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "a NUL inside a path: EBADMSG");
        free(m);
        free(d);
}

static void test_binding(void)
{
        struct landmsg_session *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        uint8_t x[LANDMSG_BINDING_SIZE], y[LANDMSG_BINDING_SIZE];

        session_fill(a);
        *b = *a;
        ok(landmsg_binding(a, x) == 0 && landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) == 0,
           "one job, one binding");
        ok(memcmp(x, "rdmaxfer-land-1", 16) == 0, "which says what it is");
        strcpy(b->cred, "MUNGE:other:");
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) == 0, "the credential itself is not in it");
        b->direction = LANDMSG_PULL;
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "another direction: another binding");
        *b = *a;
        b->flags = LANDMSG_SESSION_REPLACE;
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "replacing allowed: another binding");
        *b = *a;
        strcpy(b->dest, "/scratch/alice/run2");
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "another DEST: another");
        *b = *a;
        b->token[15] ^= 1;
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "another token: another");
        *b = *a;
        b->addrs[1][15] = 1;
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "another address: another");
        *b = *a;
        b->naddrs = 1;
        ok(landmsg_binding(b, y) == 0 && memcmp(x, y, sizeof(x)) != 0, "one address fewer: another");
        free(a);
        free(b);
}

/* xferctl's binding and the daemons' SESSION name an address alike. */
static void test_addr(void)
{
        static const uint8_t v4[LANDMSG_ADDR_SIZE] = { [10] = 0xff, [11] = 0xff, [12] = 198, [13] = 18, [14] = 0,
                                                        [15] = 2 };
        static const uint8_t v6[LANDMSG_ADDR_SIZE] = { 0xfd, 0, [15] = 2 };
        uint8_t a[LANDMSG_ADDR_SIZE];

        ok(landmsg_addr_parse("198.18.0.2", a) == 0 && memcmp(a, v4, sizeof(a)) == 0, "IPv4: mapped");
        ok(landmsg_addr_parse("fd00::2", a) == 0 && memcmp(a, v6, sizeof(a)) == 0, "IPv6: as it is");
        ok(landmsg_addr_parse("::ffff:198.18.0.2", a) == 0 && memcmp(a, v4, sizeof(a)) == 0,
           "IPv4 written mapped: the same bytes");
        is_int(landmsg_addr_parse("beta", a), -EINVAL, "a name: EINVAL (xferctl resolves it first)");
        is_int(landmsg_addr_parse("[fd00::2]", a), -EINVAL, "brackets: EINVAL");
        is_int(landmsg_addr_parse("", a), -EINVAL, "nothing: EINVAL");
}

/* A tree's file in a BATCH: @type, session 9, in dir "d", leaf @leaf. */
static void batch_op(struct landmsg_op *op, uint16_t type, const char *leaf)
{
        memset(op, 0, sizeof(*op));
        op->session = 9;
        op->flags = LANDMSG_OP_STAGE;
        strcpy(op->path, "d");
        if (type == LANDMSG_LINK) {
                op->flags |= LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_LINK_MTIME;
                op->mode = 0644;
                op->mtime_ns = 1234567890123456789ull;
                strcpy(op->leaf, leaf);
                memset(op->target, 'a', 64);
        } else {
                op->mode = type == LANDMSG_MKDIR ? 0700 : 0600;
        }
}

static void test_batch(void)
{
        struct landmsg *m = msg_new(0), *d = msg_new(0);
        struct landmsg_op *op = calloc(1, sizeof(*op));
        size_t off = 0, k;
        uint16_t type;
        char leaf[16];
        bool all = true;
        int n, r;

        landmsg_batch_init(m, 9);
        m->id = 5;
        batch_op(op, LANDMSG_MKDIR, "");
        is_int(landmsg_batch_add(m, LANDMSG_MKDIR, op), 0, "a BATCH: a MKDIR");
        batch_op(op, LANDMSG_TMPFILE, "");
        is_int(landmsg_batch_add(m, LANDMSG_TMPFILE, op), 0, "a TMPFILE");
        batch_op(op, LANDMSG_LINK, "f");
        is_int(landmsg_batch_add(m, LANDMSG_LINK, op), 0, "a LINK with its mode, mtime and digest");
        is_int(landmsg_batch_add(m, LANDMSG_SYMLINK, op), -EINVAL, "a SYMLINK: not in a BATCH (EINVAL)");
        op->session = 8;
        is_int(landmsg_batch_add(m, LANDMSG_LINK, op), -EINVAL, "another session's: EINVAL");
        op->session = 9;
        op->leaf[0] = '\0';
        is_int(landmsg_batch_add(m, LANDMSG_LINK, op), -EINVAL, "a LINK without a leaf (op_ok): EINVAL");
        ok(m->batch.count == 3 && m->batch.links == 1, "three, one a LINK");
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && memcmp(m, d, sizeof(*m)) == 0,
           "round trip (%d bytes)", n);
        ok(landmsg_batch_next(&d->batch, &off, &type, op) == 1 && type == LANDMSG_MKDIR && op->mode == 0700 &&
           strcmp(op->path, "d") == 0, "read back: the MKDIR");
        ok(landmsg_batch_next(&d->batch, &off, &type, op) == 1 && type == LANDMSG_TMPFILE, "the TMPFILE");
        ok(landmsg_batch_next(&d->batch, &off, &type, op) == 1 && type == LANDMSG_LINK && strcmp(op->leaf, "f") == 0 &&
           op->mtime_ns == 1234567890123456789ull && strlen(op->target) == 64, "the LINK, whole");
        is_int(landmsg_batch_next(&d->batch, &off, &type, op), 0, "then the end");
        for (int cut = 0; cut < n; cut++)
                all = all && landmsg_decode(buf, (size_t)cut, d) == -EBADMSG;
        ok(all, "every prefix of a BATCH: EBADMSG");
        /* The count: the header's bytes 16..23 are the session, 24..25 the count. */
        buf[LANDMSG_HEADER_SIZE + 8]++;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "a count one more than it holds: EBADMSG");
        buf[LANDMSG_HEADER_SIZE + 8] -= 2;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "one less: EBADMSG");
        buf[LANDMSG_HEADER_SIZE + 8]++;
        buf[LANDMSG_HEADER_SIZE]++;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "its ops of another session than its own: EBADMSG");
        buf[LANDMSG_HEADER_SIZE]--;
        /* The first op's type, after the fixed part. */
        buf[LANDMSG_HEADER_SIZE + 12] = LANDMSG_SYMLINK;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "a SYMLINK in it: EBADMSG");
        buf[LANDMSG_HEADER_SIZE + 12] = LANDMSG_BATCH;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "a BATCH in it: EBADMSG");

        landmsg_batch_init(m, 9);
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an empty BATCH does not encode");
        for (k = 0, r = 0; r == 0; k++) {
                snprintf(leaf, sizeof(leaf), "f%05zu", k);
                batch_op(op, LANDMSG_LINK, leaf);
                r = landmsg_batch_add(m, LANDMSG_LINK, op);
        }
        ok(r == -ENOSPC && m->batch.count == LANDMSG_BATCH_MAX, "LINKs of short names: %d fit, then ENOSPC",
           LANDMSG_BATCH_MAX);
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->batch.links == LANDMSG_BATCH_MAX,
           "and it round-trips (%d bytes)", n);
        landmsg_batch_init(m, 9);
        for (k = 0, r = 0; r == 0; k++) {
                batch_op(op, LANDMSG_TMPFILE, "");
                memset(op->path, 'p', 200);
                r = landmsg_batch_add(m, LANDMSG_TMPFILE, op);
        }
        ok(r == -ENOSPC && m->batch.count < LANDMSG_BATCH_MAX && m->batch.len <= LANDMSG_BATCH_BYTES,
           "long paths: %u fit in %d bytes, then ENOSPC", m->batch.count, LANDMSG_BATCH_BYTES);

        m->type = LANDMSG_FDS;
        m->fds.count = 3;
        m->fds.kept = 2;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n == LANDMSG_HEADER_SIZE + 4 && landmsg_decode(buf, (size_t)n, d) == 0 && d->fds.count == 3 &&
           d->fds.kept == 2, "FDS {3, kept 2} round-trips");
        m->fds.kept = LANDMSG_BATCH_MAX + 1;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "FDS keeping more than a BATCH holds: EINVAL");
        m->fds.kept = 0;
        m->fds.count = LANDMSG_BATCH_MAX + 1;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "FDS of more than a BATCH holds: EINVAL");
        free(op);
        free(m);
        free(d);
}

/* A BATCH's descriptors, and its answer's, over a socket pair. */
static void test_socket_fds(void)
{
        struct landmsg *m = msg_new(LANDMSG_FDS), *got = msg_new(0);
        int sv[2], fds[LANDMSG_BATCH_MAX], rfds[LANDMSG_BATCH_MAX];
        size_t n = 0;
        bool all = true;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        for (int i = 0; i < LANDMSG_BATCH_MAX; i++)
                fds[i] = open(i % 2 ? "/dev/null" : "/dev/zero", O_RDONLY | O_CLOEXEC);
        m->fds.count = LANDMSG_BATCH_MAX;
        is_int(landmsg_send_fds(sv[0], m, fds, LANDMSG_BATCH_MAX), 0, "FDS sent with %d descriptors",
               LANDMSG_BATCH_MAX);
        is_int(landmsg_recv_fds(sv[1], got, rfds, LANDMSG_BATCH_MAX, &n), 0, "received");
        ok(got->type == LANDMSG_FDS && n == LANDMSG_BATCH_MAX, "all of them");
        for (size_t i = 0; i < n; i++) {
                struct stat a, b;

                all = all && fstat(fds[i], &a) == 0 && fstat(rfds[i], &b) == 0 && a.st_rdev == b.st_rdev;
                safe_close(rfds[i]);
        }
        ok(all, "in the order sent");
        is_int(landmsg_send_fds(sv[0], m, fds, 4), 0, "four sent");
        is_int(landmsg_recv_fds(sv[1], got, rfds, 2, &n), 0, "received with room for two");
        ok(n == 2 && fcntl(rfds[0], F_GETFD) >= 0 && fcntl(rfds[1], F_GETFD) >= 0, "two kept (the others closed)");
        safe_close(rfds[0]);
        safe_close(rfds[1]);
        for (int i = 0; i < LANDMSG_BATCH_MAX; i++)
                safe_close(fds[i]);
        safe_close(sv[0]);
        safe_close(sv[1]);
        free(m);
        free(got);
}

static void test_socket(void)
{
        struct landmsg *m = msg_new(LANDMSG_FD), *got = msg_new(0);
        int sv[2], fd = -1, rfd = -1;
        struct stat st1, st2;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                abort();
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        is_int(landmsg_send(sv[0], m, fd), 0, "an FD sent with a descriptor");
        is_int(landmsg_recv(sv[1], got, &rfd), 0, "received");
        ok(got->type == LANDMSG_FD && got->id == 77 && rfd >= 0 && rfd != fd && fstat(fd, &st1) == 0 &&
           fstat(rfd, &st2) == 0 && st1.st_ino == st2.st_ino, "the same message, the same file");
        ok((fcntl(rfd, F_GETFD) & FD_CLOEXEC) != 0, "close-on-exec");
        safe_close(rfd);
        ok(write(sv[0], "XLND", 4) == 4, "a broken message written");
        is_int(landmsg_recv(sv[1], got, &rfd), -EBADMSG, "EBADMSG");
        ok(rfd == -1, "and no descriptor");
        safe_close(sv[0]);
        is_int(landmsg_recv(sv[1], got, &rfd), -ECONNRESET, "the other end closed: ECONNRESET");
        safe_close(sv[1]);
        safe_close(fd);
        free(m);
        free(got);
}

/* Attributes (version 6, xferctl send -X, -A): a MKDIR's and a LINK's. */
static void test_attrs(void)
{
        struct landmsg *m = msg_new(LANDMSG_LINK), *d = msg_new(0), *b = msg_new(0);
        uint8_t x[64];
        size_t xl = 0, off = 0;
        uint16_t type;
        int n, n0;

        ok(xattrs_put(x, sizeof(x), &xl, "user.k", "v", 1) == 0 &&
           xattrs_put(x, sizeof(x), &xl, XATTRS_ACL_DEFAULT, "\x02\0\0\0", 4) == 0, "two records");
        m->op.session = 3;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE;
        m->op.mode = 0444;
        strcpy(m->op.leaf, "f");
        n0 = landmsg_encode(buf, sizeof(buf), m);
        m->op.flags |= LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        memcpy(m->op.xattrs, x, xl);
        m->op.xattrs_len = (uint16_t)xl;
        n = landmsg_encode(buf, sizeof(buf), m);
        is_int(n, n0 + 2 + (int)xl, "a LINK with attributes: their length and records after its strings");
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->op.xattrs_len == xl &&
           memcmp(d->op.xattrs, x, xl) == 0 && d->op.flags == m->op.flags, "and round-trips");
        is_int(landmsg_decode(buf, (size_t)n - 1, d), -EBADMSG, "cut short: -EBADMSG");
        m->type = LANDMSG_MKDIR;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_ACLS;
        m->op.xattrs_len = 0;
        m->op.mode = 0700;
        m->op.leaf[0] = '\0';
        strcpy(m->op.path, "d");
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->op.flags == m->op.flags && d->op.xattrs_len == 0,
           "a MKDIR with ACLs carried but none of its own");
        m->op.xattrs_len = (uint16_t)xl;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "records without LANDMSG_OP_XATTRS: -EINVAL");
        m->type = LANDMSG_TMPFILE;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS;
        m->op.mode = 0600;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a TMPFILE carries none");
        m->type = LANDMSG_LINK;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS;
        m->op.mode = 0;
        strcpy(m->op.leaf, "f");
        m->op.path[0] = '\0';
        xl = 0;
        ok(xattrs_put(x, sizeof(x), &xl, "trusted.k", "v", 1) == 0, "a trusted.* record");
        memcpy(m->op.xattrs, x, xl);
        m->op.xattrs_len = (uint16_t)xl;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "is not the lander's to set: -EINVAL");
        /* Read (get -X, -A): OPEN_READ and WALK ask, FD and WALK_ENTRY carry them. */
        m->type = LANDMSG_OPEN_READ;
        memset(&m->op, 0, sizeof(m->op));
        m->op.session = 3;
        m->op.flags = LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->op.flags == m->op.flags,
           "an OPEN_READ that asks for the attributes");
        m->type = LANDMSG_WALK;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->op.flags == m->op.flags, "a WALK that does");
        m->type = LANDMSG_TMPFILE;
        m->op.mode = 0600;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a TMPFILE may not ask");
        m->type = LANDMSG_FD;
        memset(&m->fd, 0, sizeof(m->fd));
        xl = 0;
        (void)xattrs_put(m->fd.xattrs, sizeof(m->fd.xattrs), &xl, "user.k", "v", 1);
        m->fd.xattrs_len = (uint16_t)xl;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n == LANDMSG_HEADER_SIZE + 2 + (int)xl && landmsg_decode(buf, (size_t)n, d) == 0 && d->fd.xattrs_len == xl &&
           memcmp(d->fd.xattrs, m->fd.xattrs, xl) == 0, "an FD with the file's attributes");
        m->fd.xattrs[0] = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "malformed ones: -EINVAL");
        m->type = LANDMSG_WALK_ENTRY;
        memset(&m->walk_entry, 0, sizeof(m->walk_entry));
        m->walk_entry.kind = LANDMSG_WALK_DIR;
        m->walk_entry.mode = 0755;
        strcpy(m->walk_entry.path, "d");
        xl = 0;
        (void)xattrs_put(m->walk_entry.xattrs, sizeof(m->walk_entry.xattrs), &xl, XATTRS_ACL_DEFAULT, "\x02\0\0\0", 4);
        m->walk_entry.xattrs_len = (uint16_t)xl;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->walk_entry.xattrs_len == xl &&
           memcmp(d->walk_entry.xattrs, m->walk_entry.xattrs, xl) == 0, "a directory's WALK_ENTRY with its default ACL");
        m->walk_entry.kind = LANDMSG_WALK_SYMLINK;
        strcpy(m->walk_entry.target, "t");
        m->walk_entry.size = 1;
        m->walk_entry.mode = 0;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a symlink's carries none");
        /* In a BATCH, with its descriptor as any LINK. */
        memset(&m->op, 0, sizeof(m->op));
        m->type = LANDMSG_LINK;
        m->op.session = 3;
        m->op.flags = LANDMSG_OP_STAGE | LANDMSG_OP_XATTRS;
        strcpy(m->op.leaf, "f");
        xl = 0;
        (void)xattrs_put(x, sizeof(x), &xl, "user.k", "v", 1);
        memcpy(m->op.xattrs, x, xl);
        m->op.xattrs_len = (uint16_t)xl;
        landmsg_batch_init(b, 3);
        is_int(landmsg_batch_add(b, LANDMSG_LINK, &m->op), 0, "a BATCH takes a LINK with attributes");
        n = landmsg_encode(buf, sizeof(buf), b);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->batch.links == 1 &&
           landmsg_batch_next(&d->batch, &off, &type, &m->op) == 1 && type == LANDMSG_LINK &&
           m->op.xattrs_len == xl && memcmp(m->op.xattrs, x, xl) == 0, "and gives it back whole");
        free(m);
        free(d);
        free(b);
}

/* A pack's files made whole (version 9): MEM alone, CREATE in a BATCH
 * or alone, each with what it may carry and nothing else. */
static void test_create(void)
{
        struct landmsg *m = msg_new(LANDMSG_MEM), *d = msg_new(0), *b = msg_new(0);
        struct landmsg_op *op = calloc(1, sizeof(*op));
        size_t off = 0;
        uint16_t type;
        int n;

        landmsg_op_init(&m->op, 9);
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n == LANDMSG_HEADER_SIZE + 29 && landmsg_decode(buf, (size_t)n, d) == 0 && d->type == LANDMSG_MEM &&
           d->op.session == 9, "MEM {session 9} round-trips (%d bytes)", n);
        strcpy(m->op.path, "d");
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MEM with a path: EINVAL");
        landmsg_op_init(&m->op, 9);
        m->op.data_len = 1;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "MEM with data: EINVAL (a CREATE's only)");

        landmsg_op_init(op, 9);
        op->flags = LANDMSG_OP_STAGE | LANDMSG_LINK_MODE | LANDMSG_LINK_DIGEST | LANDMSG_LINK_MTIME;
        op->mode = 0444;
        op->mtime_ns = 1234567890123456789ull;
        strcpy(op->path, "d");
        strcpy(op->leaf, ".hidden");
        memset(op->target, 'b', 64);
        op->data_off = 8u << 20;
        op->data_len = 4096;
        landmsg_batch_init(b, 9);
        is_int(landmsg_batch_add(b, LANDMSG_CREATE, op), 0, "a BATCH takes a CREATE");
        is_int(landmsg_batch_add(b, LANDMSG_MEM, op), -EINVAL, "not a MEM");
        n = landmsg_encode(buf, sizeof(buf), b);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->batch.links == 0 &&
           landmsg_batch_next(&d->batch, &off, &type, &m->op) == 1 && type == LANDMSG_CREATE &&
           m->op.data_off == (8u << 20) && m->op.data_len == 4096 && m->op.mode == 0444 &&
           m->op.mtime_ns == 1234567890123456789ull && strcmp(m->op.leaf, ".hidden") == 0 &&
           strlen(m->op.target) == 64, "and gives it back whole, its data's place too (no descriptor with it)");
        /* The last 8 bytes are its length: past the most memory there is. */
        buf[n - 1] = 0x7f;
        is_int(landmsg_decode(buf, (size_t)n, d), -EBADMSG, "a length past LANDMSG_MEM_MAX: EBADMSG");

        m->type = LANDMSG_CREATE;
        m->op = *op;
        n = landmsg_encode(buf, sizeof(buf), m);
        ok(n > 0 && landmsg_decode(buf, (size_t)n, d) == 0 && d->op.data_len == 4096, "CREATE alone round-trips");
        m->op.data_off = LANDMSG_MEM_MAX - 4095;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "data ending past LANDMSG_MEM_MAX: EINVAL");
        m->op.data_off = UINT64_MAX - 100;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "an offset that wraps: EINVAL");
        m->op = *op;
        m->op.flags &= ~LANDMSG_OP_STAGE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "not in a staging directory: EINVAL");
        m->op = *op;
        m->op.flags &= ~LANDMSG_LINK_MODE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "without its mode: EINVAL");
        m->op = *op;
        m->op.flags |= LANDMSG_LINK_REPLACE;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "replacing: EINVAL (the staging directory is new)");
        m->op = *op;
        m->op.flags |= LANDMSG_LINK_SYNC;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "with a sync of its own: EINVAL (PUBLISH syncs)");
        m->op = *op;
        m->op.flags |= LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_BYTES;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "keeping two ways: EINVAL");
        m->op = *op;
        m->op.leaf[0] = '\0';
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "without a name: EINVAL");
        m->op = *op;
        m->type = LANDMSG_LINK;
        is_int(landmsg_encode(buf, sizeof(buf), m), -EINVAL, "a LINK with data: EINVAL");
        m->op.data_off = m->op.data_len = 0;
        ok(landmsg_encode(buf, sizeof(buf), m) > 0, "(without, it encodes)");
        free(op);
        free(m);
        free(d);
        free(b);
}

int main(void)
{
        test_round_trips();
        test_walk();
        test_bounds();
        test_framing();
        test_binding();
        test_addr();
        test_batch();
        test_socket();
        test_socket_fds();
        test_attrs();
        test_create();
        return done_testing();
}
