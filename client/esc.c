#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>
#include <uniwidth.h>

#include "esc.h"

size_t esc_utf8_decode(const char *str, uint32_t *cp)
{
        const unsigned char *s = (const unsigned char *)str;
        uint32_t c;
        size_t n;

        if (s[0] < 0x80) {
                *cp = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                n = 2, c = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                n = 3, c = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                n = 4, c = s[0] & 0x07;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                /* A NUL terminator fails this test too, so we never read past it. */
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and code points past U+10FFFF. */
        if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
            (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
                return 0;
        *cp = c;
        return n;
}

bool esc_cp_unsafe(uint32_t cp)
{
        return cp < 0x20 ||
               (cp >= 0x7f && cp <= 0x9f) ||
               cp == 0x061c ||
               (cp >= 0x200b && cp <= 0x200f) ||
               (cp >= 0x2028 && cp <= 0x202e) ||
               (cp >= 0x2060 && cp <= 0x206f) ||
               cp == 0xfeff ||
               (cp >= 0xfff9 && cp <= 0xfffb);
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
