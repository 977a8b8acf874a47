/*
 * libFuzzer harness for the name rules: name_check() (names = any) and
 * name_check_rules() by utf8 and strict must each agree with a
 * second reading of name.h's rules that decodes UTF-8 with libunistring's
 * u8_mbtoucr() instead of name.c's own decoder, so an overlong form, a
 * surrogate or a truncated sequence that one of them lets through shows up
 * as a disagreement. name_leaf() must return a slash-free suffix.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unictype.h>
#include <unistr.h>

#include "name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static enum name_verdict reference(const uint8_t *s, size_t len, enum name_rules rules)
{
        if (len == 0)
                return NAME_EMPTY;
        if (len > 255)
                return NAME_TOO_LONG;
        if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
                return NAME_DOT;
        if (memchr(s, '/', len))
                return NAME_SLASH;
        /* Any bytes but '/' and NUL make a name. */
        if (rules == NAME_RULES_ANY)
                return memchr(s, '\0', len) ? NAME_CONTROL : NAME_OK;
        /* A dotfile is any other name but under names = strict. */
        if (s[0] == '.' && rules == NAME_RULES_STRICT)
                return NAME_HIDDEN;
        for (size_t i = 0; i < len;) {
                ucs4_t uc;
                int n = u8_mbtoucr(&uc, s + i, len - i);

                if (n <= 0)
                        return NAME_UTF8;
                if (uc_is_general_category(uc, UC_CATEGORY_Cc))
                        return NAME_CONTROL;
                if (uc_is_general_category(uc, UC_CATEGORY_Cf) ||
                    uc_is_general_category(uc, UC_CATEGORY_Zl) ||
                    uc_is_general_category(uc, UC_CATEGORY_Zp))
                        return NAME_FORMAT;
                if (uc_is_general_category(uc, UC_CATEGORY_Cn))
                        return NAME_UNASSIGNED;
                i += (size_t)n;
        }
        return NAME_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        enum name_verdict v, want;
        const char *why, *leaf;
        char *copy;

        v = name_check_rules((const char *)data, size, NAME_RULES_STRICT);
        want = reference(data, size, NAME_RULES_STRICT);
        if (v != want) {
                fprintf(stderr, "name_check_rules(strict) says %d (%s), the rules say %d (%s)\n", v,
                        name_verdict_str(v), want, name_verdict_str(want));
                abort();
        }
        v = name_check_rules((const char *)data, size, NAME_RULES_UTF8);
        want = reference(data, size, NAME_RULES_UTF8);
        if (v != want) {
                fprintf(stderr, "name_check_rules(utf8) says %d (%s), the rules say %d (%s)\n", v,
                        name_verdict_str(v), want, name_verdict_str(want));
                abort();
        }
        v = name_check((const char *)data, size);
        want = reference(data, size, NAME_RULES_ANY);
        if (v != want) {
                fprintf(stderr, "name_check says %d (%s), the rules say %d (%s)\n", v,
                        name_verdict_str(v), want, name_verdict_str(want));
                abort();
        }
        why = name_verdict_str(v);
        if (!why || why[0] == '\0' || (v == NAME_OK) != (strcmp(why, "ok") == 0))
                abort();

        /* name_leaf() reads a C string: the input up to its first NUL. */
        copy = malloc(size + 1);
        if (!copy)
                abort();
        memcpy(copy, data, size);
        copy[size] = '\0';
        leaf = name_leaf(copy);
        if (leaf < copy || leaf > copy + strlen(copy) || strchr(leaf, '/') ||
            (leaf != copy && leaf[-1] != '/') || (leaf == copy && strchr(copy, '/')))
                abort();
        free(copy);
        return 0;
}
