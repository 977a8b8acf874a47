#pragma once

/*
 * Making untrusted text safe to print. Job names, peers and result texts
 * come from rdmaxferd, and through it from a remote peer or a file name:
 * printed raw, an ESC or CSI could drive the user's terminal, a CR could
 * overwrite the line, a bidi override could reorder what is shown. Pure:
 * no I/O, no locale (input is taken as UTF-8 whatever LC_CTYPE says).
 *
 * Terminal form (esc_term), chosen to stay readable and unambiguous:
 *   "\"                                         -> "\\"
 *   TAB, LF, CR                                 -> "\t", "\n", "\r"
 *   other C0 bytes (0x00..0x1f) and DEL (0x7f)  -> "\xNN" (ESC is "\x1b")
 *   a byte that is not part of valid UTF-8      -> "\xNN" (so a raw C1 byte
 *     such as 0x9b, and each byte of an overlong, surrogate, out-of-range
 *     or truncated sequence)
 *   a valid sequence for a code point in esc_cp_unsafe()'s set
 *     (C1 U+0080..U+009F, bidi and invisible format characters)
 *                                               -> "\uNNNN" ("\u202e")
 *   anything else, i.e. printable UTF-8 ("é", CJK, emoji) is kept as is.
 * Hex digits are lower case. The result is ASCII plus printable UTF-8.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Bytes esc_term() needs for any input of @n bytes, NUL included ("\xNN" per byte). */
#define ESC_TERM_SIZE(n)        (4 * (size_t)(n) + 1)

/*
 * Decode the UTF-8 sequence at @s (NUL-terminated). Returns its length
 * (1..4) with the code point in *@cp, or 0 when @s does not start a valid
 * sequence: a stray continuation byte, 0xc0/0xc1/0xf5..0xff, an overlong
 * form, a surrogate, a code point past U+10FFFF, or a sequence cut short
 * (by the NUL too, so this never reads past it). @s must not be at the NUL.
 */
size_t esc_utf8_decode(const char *s, uint32_t *cp);

/*
 * Whether code point @cp must not reach a terminal as itself: C0 controls,
 * DEL, C1 controls (U+0080..U+009F), U+061C ARABIC LETTER MARK,
 * U+200B..U+200F (zero-width space/joiners, LRM, RLM), U+2028..U+202E (line
 * and paragraph separators, LRE, RLE, PDF, LRO, RLO), U+2060..U+206F (word
 * joiner, invisible operators, LRI, RLI, FSI, PDI, deprecated format
 * characters), U+FEFF (zero-width no-break space) and U+FFF9..U+FFFB
 * (interlinear annotation).
 */
bool esc_cp_unsafe(uint32_t cp);

/*
 * @s in terminal form (see above) in @buf, NUL-terminated. When @len is
 * too small the result is cut before the first escape or character that
 * does not fit whole; ESC_TERM_SIZE(strlen(@s)) always suffices. Returns
 * @buf, so a call can sit inside a printf(). A NULL @s is "".
 */
const char *esc_term(char *buf, size_t len, const char *s);

/* esc_term() into a string of its own, for text of any length; free() it. NULL on ENOMEM. */
char *esc_term_dup(const char *s);

/* The columns @s (esc_term()'s output: valid UTF-8) takes on a terminal:
 * a wide character (CJK) two, a combining one none. */
int esc_width(const char *s);
/* @s, then spaces up to @width columns (none when it is wider). */
void esc_print_padded(FILE *f, const char *s, int width);
