#include "landmsg.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <sodium.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "macro.h"
#include "name.h"
#include "scm.h"
#include "xattrs.h"

/* Fixed parts of each payload, before its variable fields. */
#define SESSION_FIXED           (1 + 1 + 2 + LANDMSG_TOKEN_SIZE + 2 + 2)
#define SESSION_OK_FIXED        (8 + 4 + 4 + 1)
#define OP_FIXED                (8 + 4 + 4 + 8 + 2 + 1 + 2) /* session, mode, flags, mtime; path, leaf, target lengths */
#define OP_DATA_SIZE            (8 + 8)         /* a CREATE's data: offset, length */
#define SETATTR_FIXED           (8 + 4 + 4 + 8 + 1 + 2 + 2)     /* ...; xattr and path lengths */
#define ERROR_FIXED             (4 + 2 + 2 + 1)
#define BATCH_FIXED             (8 + 2 + 2)     /* session, count, the body's length */
#define WALK_HEAD_SIZE          (4 + 8)
#define WALK_ENTRY_FIXED        (1 + 4 + 8 + 8 + 2 + 2 + 2)     /* kind, mode, size, mtime; path, target and
                                                                 * attributes' lengths */

static_assert(LANDMSG_HEADER_SIZE + SESSION_FIXED + LANDMSG_ADDRS_MAX * LANDMSG_ADDR_SIZE + LANDMSG_CRED_MAX +
              LANDMSG_PATH_MAX <= LANDMSG_MSG_MAX, "a SESSION fits");
static_assert(LANDMSG_HEADER_SIZE + OP_FIXED + 2 * LANDMSG_PATH_MAX + LANDMSG_LEAF_MAX + 2 + LANDMSG_XATTRS_MAX +
              OP_DATA_SIZE <= LANDMSG_MSG_MAX, "an op fits");
static_assert(2 + OP_FIXED + 2 * LANDMSG_PATH_MAX + LANDMSG_LEAF_MAX + 2 + LANDMSG_XATTRS_MAX + OP_DATA_SIZE <=
              LANDMSG_BATCH_BYTES, "an op fits a BATCH");
static_assert(LANDMSG_XATTRS_MAX == XATTRS_BYTES_MAX, "an entry's attributes fit an op");
static_assert(LANDMSG_HEADER_SIZE + SETATTR_FIXED + LANDMSG_XATTR_NAME_MAX + LANDMSG_XATTR_VALUE_MAX +
              LANDMSG_PATH_MAX <= LANDMSG_MSG_MAX, "a SETATTR fits");
static_assert(LANDMSG_HEADER_SIZE + ERROR_FIXED + LANDMSG_PATH_MAX + LANDMSG_TEXT_MAX <= LANDMSG_MSG_MAX,
              "an ERROR fits");
static_assert(LANDMSG_HEADER_SIZE + BATCH_FIXED + LANDMSG_BATCH_BYTES <= LANDMSG_MSG_MAX, "a BATCH fits");
static_assert(LANDMSG_HEADER_SIZE + WALK_ENTRY_FIXED + 2 * LANDMSG_PATH_MAX + LANDMSG_XATTRS_MAX <= LANDMSG_MSG_MAX,
              "a WALK_ENTRY fits");
static_assert(LANDMSG_BATCH_BYTES <= UINT16_MAX, "a BATCH's length is a u16");
static_assert(LANDMSG_BATCH_MAX <= 253, "a BATCH's descriptors fit one message (SCM_MAX_FD)");

static bool cred_ok(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (s[i] < 0x21 || s[i] > 0x7e)
                        return false;
        return true;
}

/* A request's path: "" (DEST itself) or relative, in name_path_check's form. */
static bool rel_ok(const char *s, size_t n)
{
        return n == 0 || name_path_check(s, n, NULL) == NAME_OK;
}

static bool session_ok(const struct landmsg_session *s, size_t cred_len, size_t dest_len)
{
        return (s->direction == LANDMSG_PUSH || s->direction == LANDMSG_PULL) &&
               (s->flags & ~_LANDMSG_SESSION_FLAGS) == 0 &&
               (!(s->flags & LANDMSG_SESSION_TREE) || s->direction == LANDMSG_PULL) &&
               (!(s->flags & (LANDMSG_SESSION_SYNC | LANDMSG_SESSION_DRY)) || s->direction == LANDMSG_PUSH) &&
               (!(s->flags & LANDMSG_SESSION_DELETE) || (s->flags & LANDMSG_SESSION_SYNC)) &&
               s->naddrs >= 1 &&
               s->naddrs <= LANDMSG_ADDRS_MAX && cred_len <= LANDMSG_CRED_MAX && cred_ok(s->cred, cred_len) &&
               dest_len >= 2 && dest_len <= LANDMSG_PATH_MAX && s->dest[0] == '/';
}

bool landmsg_is_op(uint16_t type)
{
        switch (type) {
        case LANDMSG_MKDIR:
        case LANDMSG_TMPFILE:
        case LANDMSG_LINK:
        case LANDMSG_OPEN_READ:
        case LANDMSG_END:
        case LANDMSG_SYMLINK:
        case LANDMSG_HARDLINK:
        case LANDMSG_PUBLISH:
        case LANDMSG_DISCARD:
        case LANDMSG_WALK:
        case LANDMSG_LOOK:
        case LANDMSG_MEM:
        case LANDMSG_CREATE:
                return true;
        default:
                return false;
        }
}

/* A digest's text: 1 to 64 lowercase hex digits. */
static bool hex_ok(const char *s, size_t n)
{
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* What each op type carries: a path, a leaf, a target, a mode, flags. */
static bool op_ok(uint16_t type, const struct landmsg_op *op, size_t path_len, size_t leaf_len, size_t target_len)
{
        uint32_t stage = op->flags & LANDMSG_OP_STAGE, parent = op->flags & LANDMSG_OP_PARENT;
        uint32_t into = op->flags & LANDMSG_OP_INTO;
        uint32_t attrs = op->flags & (LANDMSG_OP_XATTRS | LANDMSG_OP_ACLS);
        uint32_t rest = op->flags & ~(LANDMSG_OP_STAGE | LANDMSG_OP_PARENT | LANDMSG_OP_INTO | LANDMSG_OP_XATTRS |
                                      LANDMSG_OP_ACLS);
        bool named = name_check(op->leaf, leaf_len) == NAME_OK;

        if (op->session == 0 || path_len > LANDMSG_PATH_MAX || leaf_len > LANDMSG_LEAF_MAX ||
            target_len > LANDMSG_PATH_MAX || !rel_ok(op->path, path_len))
                return false;
        /* Attributes (version 6): a directory's as it is made, a file's
         * before its name; read with what OPEN_READ and WALK give, and
         * (version 7) LOOK. */
        if (attrs && type != LANDMSG_MKDIR && type != LANDMSG_LINK && type != LANDMSG_CREATE &&
            type != LANDMSG_OPEN_READ && type != LANDMSG_WALK && type != LANDMSG_LOOK)
                return false;
        /* Data in the session's memory: a CREATE's, within the most there is. */
        if (type == LANDMSG_CREATE ? op->data_len > LANDMSG_MEM_MAX || op->data_off > LANDMSG_MEM_MAX - op->data_len
                                   : op->data_off != 0 || op->data_len != 0)
                return false;
        /* DEST's parent: one file, DEST itself, and nothing in a stage. */
        if (parent && (stage || into || path_len != 0 ||
                       (type != LANDMSG_TMPFILE && type != LANDMSG_LINK && type != LANDMSG_LOOK)))
                return false;
        /* Into DEST: a tree's, in its staging directory, or its end. */
        if (into && !stage && type != LANDMSG_PUBLISH && type != LANDMSG_DISCARD)
                return false;
        if (type != LANDMSG_MKDIR && type != LANDMSG_TMPFILE && type != LANDMSG_CREATE && op->mode != 0 &&
            !(type == LANDMSG_LINK && (op->flags & LANDMSG_LINK_MODE)))
                return false;
        if (op->mtime_ns != 0 && type != LANDMSG_SYMLINK &&
            !((type == LANDMSG_LINK || type == LANDMSG_CREATE) && (op->flags & LANDMSG_LINK_MTIME)))
                return false;
        switch (type) {
        case LANDMSG_MKDIR:
                /* A leaf only for the staging directory itself: its name to be. */
                return (op->mode & ~07777u) == 0 && rest == 0 &&
                       (leaf_len == 0 || (named && stage && path_len == 0)) && target_len == 0;
        case LANDMSG_TMPFILE:
                return (op->mode & ~07777u) == 0 && rest == 0 && (leaf_len == 0 || named) && target_len == 0;
        case LANDMSG_CREATE:
                /* A tree's file, in its staging directory: a LINK's, its
                 * mode always, but for replacing (the staging directory is
                 * new) and a sync of its own (PUBLISH syncs the tree). */
                if (!stage || !(rest & LANDMSG_LINK_MODE) || (rest & (LANDMSG_LINK_REPLACE | LANDMSG_LINK_SYNC)))
                        return false;
                /* fall through */
        case LANDMSG_LINK:
                /* Keeping the file there: one way, in a staging directory. */
                if ((rest & _LANDMSG_LINK_KEEP) &&
                    (!stage || ((rest & _LANDMSG_LINK_KEEP) & ((rest & _LANDMSG_LINK_KEEP) - 1)) != 0))
                        return false;
                /* Its user.* compared too: keeping what is the same (a sync). */
                if ((rest & LANDMSG_LINK_KEEP_XATTRS) &&
                    !(rest & (LANDMSG_LINK_KEEP_SIZE | LANDMSG_LINK_KEEP_BYTES)))
                        return false;
                return (rest & ~(uint32_t)_LANDMSG_LINK_FLAGS) == 0 && named && (op->mode & ~07777u) == 0 &&
                       ((rest & LANDMSG_LINK_DIGEST) ? hex_ok(op->target, target_len) : target_len == 0);
        case LANDMSG_SYMLINK:
                /* Keeping the one there (version 10): one way, in a staging directory. */
                if ((rest & ~(uint32_t)_LANDMSG_LINK_KEEP) ||
                    ((rest & _LANDMSG_LINK_KEEP) && (!stage || (rest & (rest - 1)) != 0)))
                        return false;
                return named && target_len > 0;
        case LANDMSG_HARDLINK:
                return rest == 0 && named && target_len > 0 && rel_ok(op->target, target_len);
        case LANDMSG_OPEN_READ:
                return (op->flags & ~attrs) == 0 && leaf_len == 0 && target_len == 0;
        case LANDMSG_PUBLISH:
                return !stage &&
                       (rest & ~(LANDMSG_PUBLISH_REPLACE | LANDMSG_PUBLISH_MERGE | LANDMSG_PUBLISH_DELETE)) == 0 &&
                       (!(rest & LANDMSG_PUBLISH_DELETE) ||
                        (rest & (LANDMSG_PUBLISH_REPLACE | LANDMSG_PUBLISH_MERGE)) == LANDMSG_PUBLISH_REPLACE) &&
                       path_len == 0 &&
                       (into ? named : leaf_len == 0) && target_len == 0;
        case LANDMSG_DISCARD:
                return (op->flags & ~LANDMSG_OP_INTO) == 0 && leaf_len == 0 && path_len == 0 && target_len == 0;
        case LANDMSG_WALK:
                /* With a path (version 8), DEST's tree of that name: a dry run's. */
                return (op->flags & ~attrs) == 0 && leaf_len == 0 && target_len == 0;
        case LANDMSG_END:
                return op->flags == 0 && leaf_len == 0 && path_len == 0 && target_len == 0;
        case LANDMSG_LOOK:
                /* With a path, beneath DEST (a tree's entry, version 5);
                 * a symlink's target answered (version 10). */
                return (op->flags & ~(LANDMSG_OP_PARENT | LANDMSG_LOOK_LINK | attrs)) == 0 && named &&
                       target_len == 0;
        case LANDMSG_MEM:
                return op->flags == 0 && leaf_len == 0 && path_len == 0 && target_len == 0;
        default:
                return false;
        }
}

static bool setattr_ok(const struct landmsg_setattr *a, size_t xname_len, size_t path_len)
{
        uint32_t f = a->flags;

        return a->session != 0 && (f & (LANDMSG_SET_MODE | LANDMSG_SET_MTIME | LANDMSG_SET_XATTR)) != 0 &&
               (f & ~(uint32_t)_LANDMSG_SET_FLAGS) == 0 && path_len <= LANDMSG_PATH_MAX &&
               ((f & LANDMSG_SET_AT_PATH) ? rel_ok(a->path, path_len) : path_len == 0 && !(f & LANDMSG_OP_STAGE)) &&
               (!(f & LANDMSG_OP_INTO) || (f & LANDMSG_OP_STAGE)) &&
               (a->mode & ~07777u) == 0 && ((f & LANDMSG_SET_MODE) || a->mode == 0) &&
               ((f & LANDMSG_SET_MTIME) || a->mtime_ns == 0) && a->xlen <= LANDMSG_XATTR_VALUE_MAX &&
               ((f & LANDMSG_SET_XATTR) ? xname_len > 5 && xname_len <= LANDMSG_XATTR_NAME_MAX &&
                                                  strncmp(a->xname, "user.", 5) == 0
                                        : xname_len == 0 && a->xlen == 0);
}

/* Attributes read as the user (FD's, WALK_ENTRY's): of what is carried. */
static bool read_xattrs_ok(const uint8_t *buf, size_t len)
{
        unsigned int which;

        return len == 0 || (len <= LANDMSG_XATTRS_MAX && xattrs_check(buf, len, &which) == 0 &&
                            (which & ~(unsigned int)(XATTRS_USER | XATTRS_ACL)) == 0);
}

/* What each kind of walked entry carries. */
static bool walk_entry_ok(const struct landmsg_walk_entry *e, size_t path_len, size_t target_len)
{
        if (path_len == 0 || path_len > LANDMSG_PATH_MAX || target_len > LANDMSG_PATH_MAX ||
            !rel_ok(e->path, path_len) || (e->mode & ~07777u) != 0 || !read_xattrs_ok(e->xattrs, e->xattrs_len) ||
            (e->xattrs_len && e->kind != LANDMSG_WALK_FILE && e->kind != LANDMSG_WALK_DIR))
                return false;
        switch (e->kind) {
        case LANDMSG_WALK_FILE:
                return target_len == 0;
        case LANDMSG_WALK_DIR:
                return target_len == 0 && e->size == 0;
        case LANDMSG_WALK_SYMLINK:
                return target_len > 0 && e->size == target_len && e->mode == 0;
        case LANDMSG_WALK_HARDLINK:
                return target_len > 0 && rel_ok(e->target, target_len) && e->size == 0 && e->mode == 0 &&
                       e->mtime_ns == 0;
        case LANDMSG_WALK_OTHER:
        case LANDMSG_WALK_DIR_END:
                return target_len == 0 && e->size == 0 && e->mode == 0 && e->mtime_ns == 0;
        default:
                return false;
        }
}

static size_t field_len(const char *s, size_t size)
{
        return strnlen(s, size);
}

/* MKDIR's and LINK's attributes (version 6): after the strings, with LANDMSG_OP_XATTRS. */
static bool op_xattrs_ok(uint16_t type, const struct landmsg_op *op)
{
        unsigned int which;

        if (!(op->flags & LANDMSG_OP_XATTRS) || type == LANDMSG_OPEN_READ || type == LANDMSG_WALK ||
            type == LANDMSG_LOOK)
                return op->xattrs_len == 0;     /* a read's request carries none */
        return (type == LANDMSG_MKDIR || type == LANDMSG_LINK || type == LANDMSG_CREATE) &&
               op->xattrs_len <= LANDMSG_XATTRS_MAX &&
               xattrs_check(op->xattrs, op->xattrs_len, &which) == 0 &&
               (which & ~(unsigned int)(XATTRS_USER | XATTRS_ACL)) == 0;
}

/* An op's payload size, its three lengths in @l, or -EINVAL (op_ok). */
static int op_size(uint16_t type, const struct landmsg_op *op, size_t l[static 3])
{
        l[0] = field_len(op->path, sizeof(op->path));
        l[1] = field_len(op->leaf, sizeof(op->leaf));
        l[2] = field_len(op->target, sizeof(op->target));
        if (!op_ok(type, op, l[0], l[1], l[2]) || !op_xattrs_ok(type, op))
                return -EINVAL;
        return (int)(OP_FIXED + l[0] + l[1] + l[2] + ((op->flags & LANDMSG_OP_XATTRS) ? 2u + op->xattrs_len : 0) +
                     (type == LANDMSG_CREATE ? OP_DATA_SIZE : 0));
}

static void op_put(struct bytes_out *o, uint16_t type, const struct landmsg_op *op, const size_t l[static 3])
{
        bytes_put_u64(o, op->session);
        bytes_put_u32(o, op->mode);
        bytes_put_u32(o, op->flags);
        bytes_put_u64(o, op->mtime_ns);
        bytes_put_u16(o, (uint16_t)l[0]);
        bytes_put_u8(o, (uint8_t)l[1]);
        bytes_put_u16(o, (uint16_t)l[2]);
        bytes_put_mem(o, op->path, l[0]);
        bytes_put_mem(o, op->leaf, l[1]);
        bytes_put_mem(o, op->target, l[2]);
        if (op->flags & LANDMSG_OP_XATTRS) {
                bytes_put_u16(o, op->xattrs_len);
                bytes_put_mem(o, op->xattrs, op->xattrs_len);
        }
        if (type == LANDMSG_CREATE) {
                bytes_put_u64(o, op->data_off);
                bytes_put_u64(o, op->data_len);
        }
}

/* An op's payload of @type from @in into @op: whether it is one (op_ok). */
static bool op_get(struct bytes_in *in, uint16_t type, struct landmsg_op *op)
{
        uint16_t l1, l2, l3;

        op->session = bytes_get_u64(in);
        op->mode = bytes_get_u32(in);
        op->flags = bytes_get_u32(in);
        op->mtime_ns = bytes_get_u64(in);
        l1 = bytes_get_u16(in);
        l2 = bytes_get_u8(in);
        l3 = bytes_get_u16(in);
        if (!bytes_get_str(in, op->path, sizeof(op->path), l1) || !bytes_get_str(in, op->leaf, sizeof(op->leaf), l2) ||
            !bytes_get_str(in, op->target, sizeof(op->target), l3))
                return false;
        if (op->flags & LANDMSG_OP_XATTRS) {
                op->xattrs_len = bytes_get_u16(in);
                if (op->xattrs_len > LANDMSG_XATTRS_MAX)
                        return false;
                bytes_get_mem(in, op->xattrs, op->xattrs_len);
                if (in->underflow)
                        return false;
        }
        if (type == LANDMSG_CREATE) {
                op->data_off = bytes_get_u64(in);
                op->data_len = bytes_get_u64(in);
                if (in->underflow)
                        return false;
        }
        return op_ok(type, op, l1, l2, l3) && op_xattrs_ok(type, op);
}

/* What a BATCH may hold. */
static bool batch_type_ok(uint16_t type)
{
        return type == LANDMSG_MKDIR || type == LANDMSG_TMPFILE || type == LANDMSG_LINK || type == LANDMSG_CREATE;
}

int landmsg_batch_next(const struct landmsg_batch *b, size_t *off, uint16_t *type, struct landmsg_op *op)
{
        struct bytes_in in;

        if (*off >= b->len)
                return 0;
        in = (struct bytes_in)BYTES_IN(b->body + *off, b->len - *off);
        /* Not the whole of it (some 12 KiB, each op of a chunk decoded
         * twice): what op_get does not always set. */
        landmsg_op_init(op, 0);
        *type = bytes_get_u16(&in);
        if (!batch_type_ok(*type) || !op_get(&in, *type, op) || in.underflow || op->session != b->session)
                return -EBADMSG;
        *off += in.off;
        return 1;
}

/* @b's body: exactly @b->count requests of its session; *@links, its LINKs. */
static bool batch_ok(const struct landmsg_batch *b, uint16_t *links)
{
        struct landmsg_op op;
        size_t off = 0, n = 0;
        uint16_t type;
        int r;

        *links = 0;
        if (b->session == 0 || b->count == 0 || b->count > LANDMSG_BATCH_MAX || b->len > LANDMSG_BATCH_BYTES)
                return false;
        while ((r = landmsg_batch_next(b, &off, &type, &op)) == 1) {
                n++;
                *links += type == LANDMSG_LINK;
        }
        return r == 0 && n == b->count;
}

void landmsg_batch_init(struct landmsg *m, uint64_t session)
{
        m->type = LANDMSG_BATCH;
        m->batch.session = session;
        m->batch.count = m->batch.links = m->batch.len = 0;
}

int landmsg_batch_add(struct landmsg *m, uint16_t type, const struct landmsg_op *op)
{
        struct landmsg_batch *b = &m->batch;
        struct bytes_out o;
        size_t l[3];
        int size;

        if (m->type != LANDMSG_BATCH || !batch_type_ok(type) || op->session != b->session)
                return -EINVAL;
        size = op_size(type, op, l);
        if (size < 0)
                return size;
        if (b->count >= LANDMSG_BATCH_MAX || b->len + 2 + (size_t)size > LANDMSG_BATCH_BYTES)
                return -ENOSPC;
        o = (struct bytes_out)BYTES_OUT(b->body + b->len, LANDMSG_BATCH_BYTES - b->len);
        bytes_put_u16(&o, type);
        op_put(&o, type, op, l);
        if (o.overflow)
                return -ENOSPC;
        b->len = (uint16_t)(b->len + o.off);
        b->count++;
        b->links += type == LANDMSG_LINK;
        return 0;
}

int landmsg_encode(void *buf, size_t cap, const struct landmsg *m)
{
        struct bytes_out o = BYTES_OUT(buf, cap);
        size_t l1 = 0, l2 = 0, plen = 0;

        size_t l[3];
        uint16_t links;
        int size;

        if (landmsg_is_op(m->type)) {
                size = op_size(m->type, &m->op, l);
                if (size < 0)
                        return size;
                plen = (size_t)size;
        }
        switch (landmsg_is_op(m->type) ? 0 : m->type) {
        case 0:
                break;
        case LANDMSG_SESSION:
                l1 = field_len(m->session.cred, sizeof(m->session.cred));
                l2 = field_len(m->session.dest, sizeof(m->session.dest));
                if (!session_ok(&m->session, l1, l2))
                        return -EINVAL;
                plen = SESSION_FIXED + (size_t)m->session.naddrs * LANDMSG_ADDR_SIZE + l1 + l2;
                break;
        case LANDMSG_SESSION_OK:
                l1 = field_len(m->session_ok.user, sizeof(m->session_ok.user));
                if (m->session_ok.session == 0 || l1 > LANDMSG_USER_MAX)
                        return -EINVAL;
                plen = SESSION_OK_FIXED + l1;
                break;
        case LANDMSG_SETATTR:
                l1 = field_len(m->setattr.xname, sizeof(m->setattr.xname));
                l2 = field_len(m->setattr.path, sizeof(m->setattr.path));
                if (!setattr_ok(&m->setattr, l1, l2))
                        return -EINVAL;
                plen = SETATTR_FIXED + l1 + m->setattr.xlen + l2;
                break;
        case LANDMSG_OK:
                plen = 0;
                break;
        case LANDMSG_FD:
                /* Attributes or none: a plain one is empty, as ever. */
                if (!read_xattrs_ok(m->fd.xattrs, m->fd.xattrs_len))
                        return -EINVAL;
                plen = m->fd.xattrs_len ? 2u + m->fd.xattrs_len : 0;
                break;
        case LANDMSG_BATCH:
                if (!batch_ok(&m->batch, &links) || links != m->batch.links)
                        return -EINVAL;
                plen = BATCH_FIXED + m->batch.len;
                break;
        case LANDMSG_FDS:
                if (m->fds.count > LANDMSG_BATCH_MAX || m->fds.kept > LANDMSG_BATCH_MAX)
                        return -EINVAL;
                plen = 4;
                break;
        case LANDMSG_PUBLISHED:
                plen = 8;
                break;
        case LANDMSG_WALK_HEAD:
                if (m->walk_head.entries == UINT32_MAX)
                        return -EINVAL;
                plen = WALK_HEAD_SIZE;
                break;
        case LANDMSG_WALK_ENTRY:
                l1 = field_len(m->walk_entry.path, sizeof(m->walk_entry.path));
                l2 = field_len(m->walk_entry.target, sizeof(m->walk_entry.target));
                if (!walk_entry_ok(&m->walk_entry, l1, l2))
                        return -EINVAL;
                plen = WALK_ENTRY_FIXED + l1 + l2 + m->walk_entry.xattrs_len;
                break;
        case LANDMSG_ERROR:
                l1 = field_len(m->error.where, sizeof(m->error.where));
                l2 = field_len(m->error.text, sizeof(m->error.text));
                if (m->error.err == 0 || l1 > LANDMSG_PATH_MAX || l2 > LANDMSG_TEXT_MAX)
                        return -EINVAL;
                plen = ERROR_FIXED + l1 + l2;
                break;
        default:
                return -EINVAL;
        }
        if (LANDMSG_HEADER_SIZE + plen > cap)
                return -ENOBUFS;

        bytes_put_u32(&o, LANDMSG_MAGIC);
        bytes_put_u16(&o, LANDMSG_VERSION);
        bytes_put_u16(&o, m->type);
        bytes_put_u32(&o, m->id);
        bytes_put_u32(&o, (uint32_t)plen);
        if (landmsg_is_op(m->type))
                op_put(&o, m->type, &m->op, l);
        switch (m->type) {
        case LANDMSG_BATCH:
                bytes_put_u64(&o, m->batch.session);
                bytes_put_u16(&o, m->batch.count);
                bytes_put_u16(&o, m->batch.len);
                bytes_put_mem(&o, m->batch.body, m->batch.len);
                break;
        case LANDMSG_FDS:
                bytes_put_u16(&o, m->fds.count);
                bytes_put_u16(&o, m->fds.kept);
                break;
        case LANDMSG_PUBLISHED:
                bytes_put_u64(&o, m->published.deleted);
                break;
        case LANDMSG_WALK_HEAD:
                bytes_put_u32(&o, m->walk_head.entries);
                bytes_put_u64(&o, m->walk_head.bytes);
                break;
        case LANDMSG_WALK_ENTRY:
                bytes_put_u8(&o, m->walk_entry.kind);
                bytes_put_u32(&o, m->walk_entry.mode);
                bytes_put_u64(&o, m->walk_entry.size);
                bytes_put_u64(&o, m->walk_entry.mtime_ns);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_u16(&o, m->walk_entry.xattrs_len);
                bytes_put_mem(&o, m->walk_entry.path, l1);
                bytes_put_mem(&o, m->walk_entry.target, l2);
                bytes_put_mem(&o, m->walk_entry.xattrs, m->walk_entry.xattrs_len);
                break;
        case LANDMSG_FD:
                if (m->fd.xattrs_len) {
                        bytes_put_u16(&o, m->fd.xattrs_len);
                        bytes_put_mem(&o, m->fd.xattrs, m->fd.xattrs_len);
                }
                break;
        case LANDMSG_SESSION:
                bytes_put_u8(&o, m->session.direction);
                bytes_put_u8(&o, m->session.flags);
                bytes_put_u16(&o, m->session.naddrs);
                bytes_put_mem(&o, m->session.token, LANDMSG_TOKEN_SIZE);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_mem(&o, m->session.addrs, (size_t)m->session.naddrs * LANDMSG_ADDR_SIZE);
                bytes_put_mem(&o, m->session.cred, l1);
                bytes_put_mem(&o, m->session.dest, l2);
                break;
        case LANDMSG_SESSION_OK:
                bytes_put_u64(&o, m->session_ok.session);
                bytes_put_u32(&o, m->session_ok.uid);
                bytes_put_u32(&o, m->session_ok.gid);
                bytes_put_u8(&o, (uint8_t)l1);
                bytes_put_mem(&o, m->session_ok.user, l1);
                break;
        case LANDMSG_SETATTR:
                bytes_put_u64(&o, m->setattr.session);
                bytes_put_u32(&o, m->setattr.flags);
                bytes_put_u32(&o, m->setattr.mode);
                bytes_put_u64(&o, m->setattr.mtime_ns);
                bytes_put_u8(&o, (uint8_t)l1);
                bytes_put_u16(&o, m->setattr.xlen);
                bytes_put_u16(&o, (uint16_t)l2);
                bytes_put_mem(&o, m->setattr.xname, l1);
                bytes_put_mem(&o, m->setattr.xvalue, m->setattr.xlen);
                bytes_put_mem(&o, m->setattr.path, l2);
                break;
        case LANDMSG_ERROR:
                bytes_put_u32(&o, m->error.err);
                bytes_put_u16(&o, m->error.verdict);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u8(&o, (uint8_t)l2);
                bytes_put_mem(&o, m->error.where, l1);
                bytes_put_mem(&o, m->error.text, l2);
                break;
        }
        return o.overflow ? -ENOBUFS : (int)o.off;
}

int landmsg_decode(const void *buf, size_t len, struct landmsg *m)
{
        struct bytes_in in = BYTES_IN(buf, len);
        uint32_t magic, plen;
        uint16_t version, l1, l2;
        bool ok = true;

        memset(m, 0, sizeof(*m));
        if (!buf || len < LANDMSG_HEADER_SIZE || len > LANDMSG_MSG_MAX)
                return -EBADMSG;
        magic = bytes_get_u32(&in);
        version = bytes_get_u16(&in);
        m->type = bytes_get_u16(&in);
        m->id = bytes_get_u32(&in);
        plen = bytes_get_u32(&in);
        if (magic != LANDMSG_MAGIC)
                return -EBADMSG;
        if (version != LANDMSG_VERSION)
                return -EPROTONOSUPPORT;
        if (plen != len - LANDMSG_HEADER_SIZE)
                return -EBADMSG;

        switch (landmsg_is_op(m->type) ? 0 : m->type) {
        case LANDMSG_SESSION: {
                struct landmsg_session *s = &m->session;

                s->direction = bytes_get_u8(&in);
                s->flags = bytes_get_u8(&in);
                ok = (s->flags & ~_LANDMSG_SESSION_FLAGS) == 0;
                s->naddrs = bytes_get_u16(&in);
                bytes_get_mem(&in, s->token, LANDMSG_TOKEN_SIZE);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                if (!ok || s->naddrs < 1 || s->naddrs > LANDMSG_ADDRS_MAX)
                        return -EBADMSG;
                bytes_get_mem(&in, s->addrs, (size_t)s->naddrs * LANDMSG_ADDR_SIZE);
                ok = bytes_get_str(&in, s->cred, sizeof(s->cred), l1) &&
                     bytes_get_str(&in, s->dest, sizeof(s->dest), l2) && session_ok(s, l1, l2);
                break;
        }
        case LANDMSG_SESSION_OK:
                m->session_ok.session = bytes_get_u64(&in);
                m->session_ok.uid = bytes_get_u32(&in);
                m->session_ok.gid = bytes_get_u32(&in);
                l1 = bytes_get_u8(&in);
                ok = bytes_get_str(&in, m->session_ok.user, sizeof(m->session_ok.user), l1) &&
                     m->session_ok.session != 0;
                break;
        case 0:         /* an op (landmsg_is_op) */
                ok = op_get(&in, m->type, &m->op);
                break;
        case LANDMSG_BATCH:
                m->batch.session = bytes_get_u64(&in);
                m->batch.count = bytes_get_u16(&in);
                m->batch.len = bytes_get_u16(&in);
                if (m->batch.len > LANDMSG_BATCH_BYTES)
                        return -EBADMSG;
                bytes_get_mem(&in, m->batch.body, m->batch.len);
                ok = !in.underflow && batch_ok(&m->batch, &m->batch.links);
                break;
        case LANDMSG_FDS:
                m->fds.count = bytes_get_u16(&in);
                m->fds.kept = bytes_get_u16(&in);
                ok = m->fds.count <= LANDMSG_BATCH_MAX && m->fds.kept <= LANDMSG_BATCH_MAX;
                break;
        case LANDMSG_PUBLISHED:
                m->published.deleted = bytes_get_u64(&in);
                break;
        case LANDMSG_WALK_HEAD:
                m->walk_head.entries = bytes_get_u32(&in);
                m->walk_head.bytes = bytes_get_u64(&in);
                ok = m->walk_head.entries != UINT32_MAX;
                break;
        case LANDMSG_WALK_ENTRY: {
                struct landmsg_walk_entry *e = &m->walk_entry;

                e->kind = bytes_get_u8(&in);
                e->mode = bytes_get_u32(&in);
                e->size = bytes_get_u64(&in);
                e->mtime_ns = bytes_get_u64(&in);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                e->xattrs_len = bytes_get_u16(&in);
                ok = e->xattrs_len <= LANDMSG_XATTRS_MAX && bytes_get_str(&in, e->path, sizeof(e->path), l1) &&
                     bytes_get_str(&in, e->target, sizeof(e->target), l2);
                if (ok)
                        bytes_get_mem(&in, e->xattrs, e->xattrs_len);
                ok = ok && walk_entry_ok(e, l1, l2);
                break;
        }
        case LANDMSG_SETATTR:
                m->setattr.session = bytes_get_u64(&in);
                m->setattr.flags = bytes_get_u32(&in);
                m->setattr.mode = bytes_get_u32(&in);
                m->setattr.mtime_ns = bytes_get_u64(&in);
                l1 = bytes_get_u8(&in);
                m->setattr.xlen = bytes_get_u16(&in);
                l2 = bytes_get_u16(&in);
                if (m->setattr.xlen > LANDMSG_XATTR_VALUE_MAX)
                        return -EBADMSG;
                ok = bytes_get_str(&in, m->setattr.xname, sizeof(m->setattr.xname), l1);
                bytes_get_mem(&in, m->setattr.xvalue, m->setattr.xlen);
                ok = ok && bytes_get_str(&in, m->setattr.path, sizeof(m->setattr.path), l2) &&
                     setattr_ok(&m->setattr, l1, l2);
                break;
        case LANDMSG_OK:
                break;
        case LANDMSG_FD:
                /* Empty, or (version 6) the attributes read. */
                if (len > LANDMSG_HEADER_SIZE) {
                        m->fd.xattrs_len = bytes_get_u16(&in);
                        ok = m->fd.xattrs_len >= 1 && m->fd.xattrs_len <= LANDMSG_XATTRS_MAX;
                        if (ok)
                                bytes_get_mem(&in, m->fd.xattrs, m->fd.xattrs_len);
                        ok = ok && read_xattrs_ok(m->fd.xattrs, m->fd.xattrs_len);
                }
                break;
        case LANDMSG_ERROR:
                m->error.err = bytes_get_u32(&in);
                m->error.verdict = bytes_get_u16(&in);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u8(&in);
                ok = bytes_get_str(&in, m->error.where, sizeof(m->error.where), l1) &&
                     bytes_get_str(&in, m->error.text, sizeof(m->error.text), l2) && m->error.err != 0;
                break;
        default:
                return -EBADMSG;
        }
        /* Every byte accounted for: nothing trails a message. */
        if (!ok || in.underflow || in.off != len)
                return -EBADMSG;
        return 0;
}

int landmsg_binding(const struct landmsg_session *s, uint8_t out[static LANDMSG_BINDING_SIZE])
{
        static const char prefix[16] = "rdmaxfer-land-1";
        static const uint8_t key[] = "rdmaxfer lander binding, version 1";
        crypto_generichash_state st;
        uint8_t head[1 + 1 + 2 + 2];
        size_t dest_len = strnlen(s->dest, sizeof(s->dest));
        struct bytes_out o = BYTES_OUT(head, sizeof(head));

        if (s->naddrs < 1 || s->naddrs > LANDMSG_ADDRS_MAX || dest_len > LANDMSG_PATH_MAX)
                return -EINVAL;
        bytes_put_u8(&o, s->direction);
        bytes_put_u8(&o, s->flags);
        bytes_put_u16(&o, (uint16_t)dest_len);
        bytes_put_u16(&o, s->naddrs);
        if (crypto_generichash_init(&st, key, sizeof(key) - 1, 32) < 0)
                return -EIO;
        crypto_generichash_update(&st, head, sizeof(head));
        crypto_generichash_update(&st, (const uint8_t *)s->dest, dest_len);
        crypto_generichash_update(&st, s->token, LANDMSG_TOKEN_SIZE);
        crypto_generichash_update(&st, &s->addrs[0][0], (size_t)s->naddrs * LANDMSG_ADDR_SIZE);
        memcpy(out, prefix, sizeof(prefix));
        return crypto_generichash_final(&st, out + sizeof(prefix), 32) < 0 ? -EIO : 0;
}

int landmsg_addr_parse(const char *text, uint8_t out[static LANDMSG_ADDR_SIZE])
{
        struct in_addr in;

        memset(out, 0, LANDMSG_ADDR_SIZE);
        if (inet_pton(AF_INET, text, &in) == 1) {
                out[10] = out[11] = 0xff;
                memcpy(out + 12, &in, sizeof(in));
                return 0;
        }
        return inet_pton(AF_INET6, text, out) == 1 ? 0 : -EINVAL;
}

int landmsg_send_fds(int sock, const struct landmsg *m, const int *fds, size_t nfds)
{
        uint8_t buf[LANDMSG_MSG_MAX];
        int len = landmsg_encode(buf, sizeof(buf), m);

        return len < 0 ? len : scm_send_fds(sock, buf, (size_t)len, fds, nfds, 0);
}

int landmsg_send(int sock, const struct landmsg *m, int fd)
{
        return landmsg_send_fds(sock, m, &fd, fd >= 0 ? 1 : 0);
}

int landmsg_recv_fds(int sock, struct landmsg *m, int *fds, size_t max, size_t *nfds)
{
        uint8_t buf[LANDMSG_MSG_MAX];
        ssize_t n;
        int r;

        n = scm_recv_fds(sock, buf, sizeof(buf), fds, max, nfds);
        if (n < 0)
                return (int)n;
        r = landmsg_decode(buf, (size_t)n, m);
        if (r < 0) {
                for (size_t i = 0; i < *nfds; i++)
                        safe_close(fds[i]);
                *nfds = 0;
        }
        return r;
}

int landmsg_recv(int sock, struct landmsg *m, int *fd)
{
        size_t n = 0;
        int r = landmsg_recv_fds(sock, m, fd, 1, &n);

        if (n == 0)
                *fd = -1;
        return r;
}
