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

/* Fixed parts of each payload, before its variable fields. */
#define SESSION_FIXED           (1 + 1 + 2 + LANDMSG_TOKEN_SIZE + 2 + 2)
#define SESSION_OK_FIXED        (8 + 4 + 4 + 1)
#define OP_FIXED                (8 + 4 + 4 + 8 + 2 + 1 + 2) /* session, mode, flags, mtime; path, leaf, target lengths */
#define SETATTR_FIXED           (8 + 4 + 4 + 8 + 1 + 2 + 2)     /* ...; xattr and path lengths */
#define ERROR_FIXED             (4 + 2 + 2 + 1)

static_assert(LANDMSG_HEADER_SIZE + SESSION_FIXED + LANDMSG_ADDRS_MAX * LANDMSG_ADDR_SIZE + LANDMSG_CRED_MAX +
              LANDMSG_PATH_MAX <= LANDMSG_MSG_MAX, "a SESSION fits");
static_assert(LANDMSG_HEADER_SIZE + OP_FIXED + 2 * LANDMSG_PATH_MAX + LANDMSG_LEAF_MAX <= LANDMSG_MSG_MAX,
              "an op fits");
static_assert(LANDMSG_HEADER_SIZE + SETATTR_FIXED + LANDMSG_XATTR_NAME_MAX + LANDMSG_XATTR_VALUE_MAX +
              LANDMSG_PATH_MAX <= LANDMSG_MSG_MAX, "a SETATTR fits");
static_assert(LANDMSG_HEADER_SIZE + ERROR_FIXED + LANDMSG_PATH_MAX + LANDMSG_TEXT_MAX <= LANDMSG_MSG_MAX,
              "an ERROR fits");

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
               (s->flags & ~_LANDMSG_SESSION_FLAGS) == 0 && s->naddrs >= 1 &&
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
        uint32_t rest = op->flags & ~(LANDMSG_OP_STAGE | LANDMSG_OP_PARENT | LANDMSG_OP_INTO);
        bool named = name_check(op->leaf, leaf_len) == NAME_OK;

        if (op->session == 0 || path_len > LANDMSG_PATH_MAX || leaf_len > LANDMSG_LEAF_MAX ||
            target_len > LANDMSG_PATH_MAX || !rel_ok(op->path, path_len))
                return false;
        /* DEST's parent: one file, DEST itself, and nothing in a stage. */
        if (parent && (stage || into || path_len != 0 || (type != LANDMSG_TMPFILE && type != LANDMSG_LINK)))
                return false;
        /* Into DEST: a tree's, in its staging directory, or its end. */
        if (into && !stage && type != LANDMSG_PUBLISH && type != LANDMSG_DISCARD)
                return false;
        if (type != LANDMSG_MKDIR && type != LANDMSG_TMPFILE && op->mode != 0 &&
            !(type == LANDMSG_LINK && (op->flags & LANDMSG_LINK_MODE)))
                return false;
        if (op->mtime_ns != 0 && type != LANDMSG_SYMLINK &&
            !(type == LANDMSG_LINK && (op->flags & LANDMSG_LINK_MTIME)))
                return false;
        switch (type) {
        case LANDMSG_MKDIR:
                /* A leaf only for the staging directory itself: its name to be. */
                return (op->mode & ~07777u) == 0 && rest == 0 &&
                       (leaf_len == 0 || (named && stage && path_len == 0)) && target_len == 0;
        case LANDMSG_TMPFILE:
                return (op->mode & ~07777u) == 0 && rest == 0 && (leaf_len == 0 || named) && target_len == 0;
        case LANDMSG_LINK:
                return (rest & ~(uint32_t)_LANDMSG_LINK_FLAGS) == 0 && named && (op->mode & ~07777u) == 0 &&
                       ((rest & LANDMSG_LINK_DIGEST) ? hex_ok(op->target, target_len) : target_len == 0);
        case LANDMSG_SYMLINK:
                return rest == 0 && named && target_len > 0;
        case LANDMSG_HARDLINK:
                return rest == 0 && named && target_len > 0 && rel_ok(op->target, target_len);
        case LANDMSG_OPEN_READ:
                return op->flags == 0 && leaf_len == 0 && target_len == 0;
        case LANDMSG_PUBLISH:
                return !stage && (rest & ~LANDMSG_PUBLISH_REPLACE) == 0 && path_len == 0 &&
                       (into ? named : leaf_len == 0) && target_len == 0;
        case LANDMSG_DISCARD:
                return (op->flags & ~LANDMSG_OP_INTO) == 0 && leaf_len == 0 && path_len == 0 && target_len == 0;
        case LANDMSG_END:
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

static size_t field_len(const char *s, size_t size)
{
        return strnlen(s, size);
}

int landmsg_encode(void *buf, size_t cap, const struct landmsg *m)
{
        struct bytes_out o = BYTES_OUT(buf, cap);
        size_t l1 = 0, l2 = 0, l3 = 0, plen = 0;

        if (landmsg_is_op(m->type)) {
                l1 = field_len(m->op.path, sizeof(m->op.path));
                l2 = field_len(m->op.leaf, sizeof(m->op.leaf));
                l3 = field_len(m->op.target, sizeof(m->op.target));
                if (!op_ok(m->type, &m->op, l1, l2, l3))
                        return -EINVAL;
                plen = OP_FIXED + l1 + l2 + l3;
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
        case LANDMSG_FD:
                plen = 0;
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
        if (landmsg_is_op(m->type)) {
                bytes_put_u64(&o, m->op.session);
                bytes_put_u32(&o, m->op.mode);
                bytes_put_u32(&o, m->op.flags);
                bytes_put_u64(&o, m->op.mtime_ns);
                bytes_put_u16(&o, (uint16_t)l1);
                bytes_put_u8(&o, (uint8_t)l2);
                bytes_put_u16(&o, (uint16_t)l3);
                bytes_put_mem(&o, m->op.path, l1);
                bytes_put_mem(&o, m->op.leaf, l2);
                bytes_put_mem(&o, m->op.target, l3);
        }
        switch (m->type) {
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
        uint16_t version, l1, l2, l3;
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
                m->op.session = bytes_get_u64(&in);
                m->op.mode = bytes_get_u32(&in);
                m->op.flags = bytes_get_u32(&in);
                m->op.mtime_ns = bytes_get_u64(&in);
                l1 = bytes_get_u16(&in);
                l2 = bytes_get_u8(&in);
                l3 = bytes_get_u16(&in);
                ok = bytes_get_str(&in, m->op.path, sizeof(m->op.path), l1) &&
                     bytes_get_str(&in, m->op.leaf, sizeof(m->op.leaf), l2) &&
                     bytes_get_str(&in, m->op.target, sizeof(m->op.target), l3) &&
                     op_ok(m->type, &m->op, l1, l2, l3);
                break;
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
        case LANDMSG_FD:
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

int landmsg_send(int sock, const struct landmsg *m, int fd)
{
        uint8_t buf[LANDMSG_MSG_MAX];
        int len = landmsg_encode(buf, sizeof(buf), m);

        return len < 0 ? len : scm_send(sock, buf, (size_t)len, fd, 0);
}

int landmsg_recv(int sock, struct landmsg *m, int *fd)
{
        uint8_t buf[LANDMSG_MSG_MAX];
        _cleanup_(closep) int passed = -1;
        ssize_t n;
        int r;

        *fd = -1;
        n = scm_recv(sock, buf, sizeof(buf), &passed);
        if (n < 0)
                return (int)n;
        r = landmsg_decode(buf, (size_t)n, m);
        if (r < 0)
                return r;
        *fd = TAKE_FD(passed);
        return 0;
}
