#include "name.h"

#include <stdint.h>
#include <string.h>
#include <unictype.h>

#define NAME_MAX_BYTES 255

/*
 * Length of the UTF-8 sequence at @s (at most @len bytes), or 0 when it is
 * not a shortest-form encoding of a scalar value (overlong forms, UTF-16
 * surrogates and anything above U+10FFFF are all refused). *cp gets the
 * code point.
 */
static size_t name_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
        uint32_t c = s[0], min;
        size_t n;

        if (c < 0x80) {
                *cp = c;
                return 1;
        }
        if (c >= 0xc2 && c <= 0xdf) {
                n = 2;
                c &= 0x1f;
                min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                c &= 0x0f;
                min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                c &= 0x07;
                min = 0x10000;
        } else {
                /* 0x80..0xc1: stray continuation or overlong 2-byte lead; 0xf5+: beyond U+10FFFF. */
                return 0;
        }
        if (n > len)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = (c << 6) | (s[i] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *cp = c;
        return n;
}

/*
 * Categories from libunistring's tables, so they follow its Unicode version
 * rather than a list kept by hand. Cc (C0, DEL and C1: U+009B is CSI to some
 * terminals that show `xferctl list`); Cf, Zl and Zp, which are invisible or
 * move text around ("a" U+202E "txt.exe" shows as "aexe.txt"); Cn, whose
 * rendering and category nobody can promise yet, noncharacters included.
 * Co (private use) is allowed: it is drawn (if only as a box), never changes
 * category, and has no formatting effect.
 */
static enum name_verdict name_code_point(uint32_t cp)
{
        if (uc_is_general_category(cp, UC_CATEGORY_Cc))
                return NAME_CONTROL;
        if (uc_is_general_category(cp, UC_CATEGORY_Cf) ||
            uc_is_general_category(cp, UC_CATEGORY_Zl) ||
            uc_is_general_category(cp, UC_CATEGORY_Zp))
                return NAME_FORMAT;
        if (uc_is_general_category(cp, UC_CATEGORY_Cn))
                return NAME_UNASSIGNED;
        return NAME_OK;
}

enum name_verdict name_check_rules(const char *name, size_t len, enum name_rules rules)
{
        const unsigned char *s = (const unsigned char *)name;

        if (!name || len == 0)
                return NAME_EMPTY;
        if (len > NAME_MAX_BYTES)
                return NAME_TOO_LONG;
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
                return NAME_DOT;
        /* A path is the telling reason for "../x", so before the leading dot. */
        if (memchr(s, '/', len))
                return NAME_SLASH;
        if (rules == NAME_RULES_ANY)
                return memchr(s, '\0', len) ? NAME_CONTROL : NAME_OK;
        if (s[0] == '.' && rules == NAME_RULES_STRICT)
                return NAME_HIDDEN;

        for (size_t i = 0; i < len;) {
                enum name_verdict v;
                uint32_t cp;
                size_t n;

                n = name_utf8_seq(s + i, len - i, &cp);
                if (n == 0)
                        return NAME_UTF8;
                v = name_code_point(cp);
                if (v != NAME_OK)
                        return v;
                i += n;
        }
        return NAME_OK;
}

enum name_verdict name_check(const char *name, size_t len)
{
        return name_check_rules(name, len, NAME_RULES_ANY);
}

const char *name_verdict_str(enum name_verdict v)
{
        switch (v) {
        case NAME_OK:
                return "ok";
        case NAME_EMPTY:
                return "name is empty";
        case NAME_TOO_LONG:
                return "name is longer than 255 bytes";
        case NAME_DOT:
                return "name is \".\" or \"..\"";
        case NAME_HIDDEN:
                return "name starts with '.' (names = strict)";
        case NAME_SLASH:
                return "name contains '/'";
        case NAME_CONTROL:
                return "name contains a NUL, or a control character (names = utf8)";
        case NAME_UTF8:
                return "name is not valid UTF-8 (names = utf8)";
        case NAME_FORMAT:
                return "name contains an invisible formatting character or line separator "
                       "(Unicode Cf, Zl or Zp; names = utf8)";
        case NAME_UNASSIGNED:
                return "name contains an unassigned code point or noncharacter "
                       "(Unicode Cn, by this host's tables; names = utf8)";
        case NAME_ABSOLUTE:
                return "path is absolute";
        case NAME_PATH_FORM:
                return "path has an empty component";
        case NAME_PATH_LONG:
                return "path is too long or too deep";
        }
        return "name is not acceptable";
}

enum name_verdict name_path_check_rules(const char *path, size_t len, size_t *bad, enum name_rules rules)
{
        size_t start = 0, depth = 0;

        if (bad)
                *bad = 0;
        if (!path || len == 0)
                return NAME_EMPTY;
        if (path[0] == '/')
                return NAME_ABSOLUTE;
        if (len > NAME_PATH_MAX)
                return NAME_PATH_LONG;
        while (start <= len) {
                const char *slash = memchr(path + start, '/', len - start);
                size_t end = slash ? (size_t)(slash - path) : len;
                enum name_verdict v;

                if (bad)
                        *bad = start;
                if (end == start)
                        return NAME_PATH_FORM;
                if (++depth > NAME_PATH_DEPTH_MAX)
                        return NAME_PATH_LONG;
                v = name_check_rules(path + start, end - start, rules);
                if (v != NAME_OK)
                        return v;
                if (!slash)
                        break;
                start = end + 1;
        }
        if (bad)
                *bad = 0;
        return NAME_OK;
}

enum name_verdict name_path_check(const char *path, size_t len, size_t *bad)
{
        return name_path_check_rules(path, len, bad, NAME_RULES_ANY);
}

const char *name_leaf(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

enum name_link_verdict name_link_check(const char *target, size_t len, unsigned int depth)
{
        bool named = false;
        size_t i = 0;

        if (len == 0 || len > NAME_LINK_MAX || memchr(target, '\0', len))
                return NAME_LINK_BAD;
        if (target[0] == '/')
                return NAME_LINK_OUTSIDE;
        while (i < len) {
                size_t n = 0;

                while (i + n < len && target[i + n] != '/')
                        n++;
                if (n == 2 && target[i] == '.' && target[i + 1] == '.') {
                        if (named || depth == 0)
                                return NAME_LINK_OUTSIDE;
                        depth--;
                } else if (n > 0 && !(n == 1 && target[i] == '.')) {
                        named = true;
                }
                i += n + 1;
        }
        return NAME_LINK_SAFE;
}
