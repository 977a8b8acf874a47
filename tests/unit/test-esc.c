/* xferctl's escaping of untrusted text for the terminal (client/esc.c). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "peer.h"
#include "tap.h"

static const char *term(const char *s)
{
        static char buf[ESC_TERM_SIZE(256)];

        return esc_term(buf, sizeof(buf), s);
}

/* True when @s is free of C0, DEL, C1 bytes and ESC: what may reach a terminal. */
static bool inert(const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return false;
        for (const char *p = s; *p;) {
                uint32_t cp;
                size_t n = esc_utf8_decode(p, &cp);

                if (n == 0 || esc_cp_unsafe(cp))
                        return false;
                p += n;
        }
        return true;
}

static void test_decode(void)
{
        uint32_t cp = 0;

        is_int(esc_utf8_decode("A", &cp), 1, "ASCII is one byte");
        is_int(cp, 'A', "... U+0041");
        is_int(esc_utf8_decode("\xc3\xa9", &cp), 2, "é is two bytes");
        is_int(cp, 0xe9, "... U+00E9");
        is_int(esc_utf8_decode("\xe2\x80\xae", &cp), 3, "U+202E is three bytes");
        is_int(cp, 0x202e, "... U+202E");
        is_int(esc_utf8_decode("\xf0\x9f\x93\x81", &cp), 4, "an emoji is four bytes");
        is_int(cp, 0x1f4c1, "... U+1F4C1");
        is_int(esc_utf8_decode("\xc2\x9b", &cp), 2, "C1 CSI encoded in UTF-8 is valid UTF-8");
        is_int(cp, 0x9b, "... U+009B");
        is_int(esc_utf8_decode("\x9b", &cp), 0, "a raw C1 byte is not UTF-8");
        is_int(esc_utf8_decode("\xc0\x80", &cp), 0, "overlong NUL");
        is_int(esc_utf8_decode("\xe0\x80\x9b", &cp), 0, "overlong CSI");
        is_int(esc_utf8_decode("\xf0\x80\x80\x9b", &cp), 0, "4-byte overlong CSI");
        is_int(esc_utf8_decode("\xed\xa0\x80", &cp), 0, "a surrogate");
        is_int(esc_utf8_decode("\xf4\x90\x80\x80", &cp), 0, "beyond U+10FFFF");
        is_int(esc_utf8_decode("\xe2\x80", &cp), 0, "cut short by the NUL");
        is_int(esc_utf8_decode("\xff", &cp), 0, "0xff never appears in UTF-8");

        ok(esc_cp_unsafe(0x1b) && esc_cp_unsafe(0x7f) && esc_cp_unsafe(0x80) &&
           esc_cp_unsafe(0x9f), "C0, DEL, C1 are unsafe");
        ok(!esc_cp_unsafe(0x20) && !esc_cp_unsafe(0x7e) && !esc_cp_unsafe(0xa0) &&
           !esc_cp_unsafe(0xe9), "space, '~', NBSP, é are fine");
        ok(esc_cp_unsafe(0x200b) && esc_cp_unsafe(0x200f) && esc_cp_unsafe(0x202a) &&
           esc_cp_unsafe(0x202e) && esc_cp_unsafe(0x2066) && esc_cp_unsafe(0x2069) &&
           esc_cp_unsafe(0x061c) && esc_cp_unsafe(0xfeff), "bidi and zero-width characters are unsafe");
        ok(!esc_cp_unsafe(0x200a) && !esc_cp_unsafe(0x2010) && !esc_cp_unsafe(0x202f) &&
           !esc_cp_unsafe(0x2070) && !esc_cp_unsafe(0xfffd), "their neighbours are fine");
}

static void test_term(void)
{
        char small[8];
        char *dup;

        /* Kept as is. */
        is_str(term(""), "", "empty");
        is_str(term(NULL), "", "NULL is empty");
        is_str(term("foo.dat"), "foo.dat", "plain ASCII");
        is_str(term("198.18.0.2:7470 [fd00::2]:7470 ~!\"'$%"), "198.18.0.2:7470 [fd00::2]:7470 ~!\"'$%",
               "printable ASCII punctuation");
        is_str(term("caf\xc3\xa9"), "caf\xc3\xa9", "é passes through");
        is_str(term("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.txt"), "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.txt",
               "CJK passes through");
        is_str(term("\xf0\x9f\x93\x81 \xe2\x82\xac \xc2\xa0"), "\xf0\x9f\x93\x81 \xe2\x82\xac \xc2\xa0",
               "emoji, euro sign, NBSP pass through");
        is_str(term("\xef\xbf\xbd"), "\xef\xbf\xbd", "a real U+FFFD in the input stays");

        /* ESC sequences and C0. */
        is_str(term("\x1b[2J\x1b[31mred"), "\\x1b[2J\\x1b[31mred", "CSI sequences: ESC shown as \\x1b");
        is_str(term("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07", "OSC title sequence with BEL");
        is_str(term("\x1b]8;;http://x\x1b\\link"), "\\x1b]8;;http://x\\x1b\\\\link",
               "OSC 8 hyperlink with ST (ESC \\)");
        is_str(term("ok\rFAKE"), "ok\\rFAKE", "CR cannot rewrite the line");
        is_str(term("a\nb"), "a\\nb", "LF cannot start a fake line");
        is_str(term("a\tb"), "a\\tb", "TAB cannot shift columns");
        is_str(term("abc\b\b\bxyz"), "abc\\x08\\x08\\x08xyz", "backspaces");
        is_str(term("\x01\x0b\x0c\x1f"), "\\x01\\x0b\\x0c\\x1f", "other C0 bytes");
        is_str(term("del\x7f"), "del\\x7f", "DEL");
        is_str(term("a\\x1b"), "a\\\\x1b", "a literal backslash is doubled: output is unambiguous");

        /* C1, both ways. */
        is_str(term("\xc2\x9b" "31m"), "\\u009b31m", "C1 CSI as UTF-8 (U+009B)");
        is_str(term("\xc2\x80\xc2\x85\xc2\x9d\xc2\x9f"), "\\u0080\\u0085\\u009d\\u009f",
               "C1 U+0080, NEL, OSC, APC as UTF-8");
        is_str(term("\x9b" "31m"), "\\x9b31m", "raw C1 CSI byte");
        is_str(term("\x84\x8d\x90"), "\\x84\\x8d\\x90", "other raw C1 bytes");

        /* Invalid UTF-8: each byte that is not part of a valid sequence. */
        is_str(term("a\xff" "b"), "a\\xffb", "a stray byte");
        is_str(term("\xfe\xc0\xc1\xf5"), "\\xfe\\xc0\\xc1\\xf5", "bytes that never appear in UTF-8");
        is_str(term("x\xc3"), "x\\xc3", "truncated two-byte sequence at the end");
        is_str(term("\xe2\x80"), "\\xe2\\x80", "truncated three-byte sequence");
        is_str(term("\xe2\x80z"), "\\xe2\\x80z", "truncated sequence followed by ASCII");
        is_str(term("\xc0\xaf"), "\\xc0\\xaf", "overlong '/'");
        is_str(term("\xe0\x80\x9b"), "\\xe0\\x80\\x9b", "overlong U+009B is not let through as CSI");
        is_str(term("\xc1\x9b"), "\\xc1\\x9b", "overlong ESC '[' is two escaped bytes");
        is_str(term("\xed\xa0\x80"), "\\xed\\xa0\\x80", "a UTF-16 surrogate");
        is_str(term("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF");

        /* Bidi and invisible format characters. */
        is_str(term("invoice\xe2\x80\xae" "fdp.exe"), "invoice\\u202efdp.exe", "RLO (U+202E)");
        is_str(term("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"), "\\u202a\\u202b\\u202c\\u202d",
               "LRE, RLE, PDF, LRO");
        is_str(term("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"), "\\u2066\\u2067\\u2068\\u2069",
               "LRI, RLI, FSI, PDI");
        is_str(term("a\xe2\x80\x8b\xe2\x80\x8c\xe2\x80\x8d\xe2\x80\x8e\xe2\x80\x8f" "b"),
               "a\\u200b\\u200c\\u200d\\u200e\\u200fb", "zero-width characters, LRM, RLM");
        is_str(term("\xd8\x9c\xef\xbb\xbf\xe2\x80\xa8\xe2\x80\xa9"), "\\u061c\\ufeff\\u2028\\u2029",
               "ALM, BOM/ZWNBSP, line and paragraph separators");

        /* A mix, and what comes out is always inert. */
        is_str(term("r\xc3\xa9sum\xc3\xa9\x1b[8m\xe2\x80\xae\xff"), "r\xc3\xa9sum\xc3\xa9\\x1b[8m\\u202e\\xff",
               "a mix keeps the good and escapes the bad");
        {
                char all[256], out[ESC_TERM_SIZE(256)];

                for (int i = 0; i < 255; i++)
                        all[i] = (char)(i + 1);
                all[255] = '\0';
                esc_term(out, sizeof(out), all);
                ok(inert(out), "every byte 0x01..0xff alone: the result is inert");
                /* 28 C0 as \xNN, \t \n \r, 94 printable, "\\", DEL, 128 high bytes as \xNN. */
                is_int(strlen(out), 28 * 4 + 3 * 2 + 94 + 2 + 4 + 128 * 4,
                       "every byte 0x01..0xff alone: sizes add up");
        }

        /* Cut to the buffer, never mid-escape or mid-character. */
        is_str(esc_term(small, sizeof(small), "abcdefghij"), "abcdefg", "plain text is cut at the buffer");
        is_str(esc_term(small, sizeof(small), "abcde\x1b"), "abcde", "an escape that does not fit is left out");
        is_str(esc_term(small, sizeof(small), "abc\x1b" "d"), "abc\\x1b", "an escape that just fits");
        is_str(esc_term(small, sizeof(small), "abcdef\xc3\xa9"), "abcdef", "a character that does not fit");
        is_str(esc_term(small, 1, "abc"), "", "room only for the NUL");
        ok(esc_term(small, 0, "abc") == small, "no room at all: nothing written");

        dup = esc_term_dup("\x1b[0m\xe2\x80\xae");
        is_str(dup, "\\x1b[0m\\u202e", "esc_term_dup");
        free(dup);
}

/* Other pure pieces that echo a string back use the same escaping. */
static void test_users(void)
{
        char host[256], err[256];
        uint16_t port;

        ok(peer_split("beta:7\x1b[2J", host, sizeof(host), &port, err, sizeof(err)) < 0,
           "a port with ESC in it is refused");
        is_str(err, "port '7\\x1b[2J' is not a number in 1..65535", "... and echoed escaped");
}

/* The columns a terminal gives what esc_term() prints (xferctl list's alignment). */
static void test_width(void)
{
        char buf[256], out[64];
        FILE *f;

        is_int(esc_width("abc"), 3, "ASCII: a column a byte");
        is_int(esc_width("\xc3\xa9t\xc3\xa9.txt"), 7, "\"\u00e9t\u00e9.txt\": 7 columns, 9 bytes");
        is_int(esc_width("\xe6\x97\xa5\xe6\x9c\xac"), 4, "two CJK characters: 4 columns, 6 bytes");
        is_int(esc_width("e\xcc\x81"), 1, "e and a combining accent: 1 column");
        is_int(esc_width(esc_term(buf, sizeof(buf), "a\tb")), 4, "an escaped tab (a\\tb as printed, 4 bytes): 4 columns");
        is_int(esc_width(""), 0, "nothing: none");
        f = fmemopen(out, sizeof(out), "w");
        if (!f)
                abort();
        esc_print_padded(f, "\xe6\x97\xa5", 4);
        fputc('|', f);
        esc_print_padded(f, "toolong", 3);
        fputc('|', f);
        fputc('\0', f);
        fclose(f);
        is_str(out, "\xe6\x97\xa5  |toolong|", "padded to 4 columns (one wide character and two spaces); a wider one not cut");
}

int main(void)
{
        test_decode();
        test_term();
        test_users();
        test_width();
        return done_testing();
}
