#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unictype.h>
#include <unistr.h>
#include <uniwidth.h>

#include "esc.h"

size_t esc_utf8_decode(const char *str, uint32_t *cp)
{
        ucs4_t uc;
        /* libunistring's strict decoder: overlong forms, surrogates, code
         * points past U+10FFFF and a sequence cut by the NUL all fail. */
        int n = u8_strmbtouc(&uc, (const uint8_t *)str);

        if (n <= 0)
                return 0;
        *cp = uc;
        return (size_t)n;
}

bool esc_cp_unsafe(uint32_t cp)
{
        /* Controls (C0, DEL, C1), format characters (the bidi controls and
         * isolates, zero-width ones, U+FEFF, the interlinear annotation
         * marks, U+00AD) and the line and paragraph separators, from the
         * Unicode tables of the host's libunistring, as common/name.c. */
        return uc_is_general_category(cp, UC_CATEGORY_Cc) || uc_is_general_category(cp, UC_CATEGORY_Cf) ||
               uc_is_general_category(cp, UC_CATEGORY_Zl) || uc_is_general_category(cp, UC_CATEGORY_Zp);
}

const char *esc_term(char *buf, size_t len, const char *str)
{
        const char *s = str ? str : "";
        size_t o = 0;

        if (len == 0)
                return buf;
        while (*s) {
                char e[8];
                const char *out = e;
                size_t n, k;
                uint32_t cp;

                n = esc_utf8_decode(s, &cp);
                if (n == 0) {
                        k = (size_t)snprintf(e, sizeof(e), "\\x%02x", (unsigned char)*s);
                        n = 1;
                } else if (cp == '\\') {
                        k = (size_t)snprintf(e, sizeof(e), "\\\\");
                } else if (cp == '\t' || cp == '\n' || cp == '\r') {
                        k = (size_t)snprintf(e, sizeof(e), "\\%c",
                                             cp == '\t' ? 't' : cp == '\n' ? 'n' : 'r');
                } else if (cp < 0x20 || cp == 0x7f) {
                        k = (size_t)snprintf(e, sizeof(e), "\\x%02x", (unsigned int)cp);
                } else if (esc_cp_unsafe(cp)) {
                        k = (size_t)snprintf(e, sizeof(e), "\\u%04x", (unsigned int)cp);
                } else {
                        out = s;
                        k = n;
                }
                /* Whole escapes and whole characters only: a cut never leaves half of one. */
                if (k >= len - o)
                        break;
                memcpy(buf + o, out, k);
                o += k;
                s += n;
        }
        buf[o] = '\0';
        return buf;
}

char *esc_term_dup(const char *s)
{
        size_t len = ESC_TERM_SIZE(s ? strlen(s) : 0);
        char *buf = malloc(len);

        if (!buf)
                return NULL;
        return (char *)esc_term(buf, len, s);
}

int esc_width(const char *s)
{
        int w = u8_strwidth((const uint8_t *)s, "UTF-8");

        /* Not valid UTF-8 after all: one column a byte, as a terminal would at worst. */
        return w < 0 ? (int)strlen(s) : w;
}

void esc_print_padded(FILE *f, const char *s, int width)
{
        fputs(s, f);
        for (int w = esc_width(s); w < width; w++)
                fputc(' ', f);
}
