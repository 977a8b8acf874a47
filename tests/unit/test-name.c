/* Names from remote peers: one leaf, nothing that escapes the directory; valid UTF-8 where names = utf8. */

#include <string.h>

#include "name.h"
#include "tap.h"

#define CHECK(s, want) check_len(s, sizeof(s) - 1, want, #s)

static void check_len(const char *s, size_t len, enum name_verdict want, const char *what)
{
        enum name_verdict got = name_check_rules(s, len, NAME_RULES_UTF8);

        if (!ok(got == want, "%s -> %s", what, name_verdict_str(want)))
                diag("got %s", name_verdict_str(got));
}

static void test_ok(void)
{
        char max[256];

        CHECK("file.dat", NAME_OK);
        CHECK("a", NAME_OK);
        CHECK("a.", NAME_OK);
        CHECK("a..b", NAME_OK);
        CHECK("with space and-dash_underscore~", NAME_OK);
        CHECK("r\xc3\xa9sum\xc3\xa9.pdf", NAME_OK);             /* résumé */
        CHECK("\xe6\x97\xa5\xe6\x9c\xac.txt", NAME_OK);          /* 日本 */
        CHECK("\xf0\x9f\x93\x81", NAME_OK);                      /* U+1F4C1 */
        CHECK("\xc2\xa0", NAME_OK);                              /* U+00A0, first after C1 */
        CHECK("\xe0\xa0\x80", NAME_OK);                          /* U+0800, shortest 3-byte */
        CHECK("\xed\x9f\xbb", NAME_OK);                          /* U+D7FB, below surrogates */
        CHECK("\xee\x80\x80", NAME_OK);                          /* U+E000, above surrogates (Co) */
        CHECK("\xf0\x90\x80\x80", NAME_OK);                      /* U+10000 */
        CHECK("\xf4\x8f\xbf\xbd", NAME_OK);                      /* U+10FFFD, last one not Cn */

        /* Ordinary names in other scripts, symbols and emoji. */
        CHECK("r\xc3\xa9sum\xc3\xa9.txt", NAME_OK);              /* résumé.txt */
        CHECK("\xe6\x95\xb0\xe6\x8d\xae.bin", NAME_OK);          /* 数据.bin */
        CHECK("\xce\xa9mega", NAME_OK);                          /* Ωmega */
        CHECK("\xf0\x9f\x9a\x80.tar", NAME_OK);                  /* 🚀.tar, So */
        CHECK("\xe2\x9d\xa4\xef\xb8\x8f.txt", NAME_OK);          /* ❤️: U+FE0F is Mn, not Cf */
        CHECK("e\xcc\x81t\xc3\xa9", NAME_OK);                    /* e + U+0301 (Mn) */
        CHECK("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d.txt", NAME_OK);  /* שלום.txt, right-to-left letters */
        CHECK("my report (final) v2.pdf", NAME_OK);
        CHECK(" leading and trailing space ", NAME_OK);
        CHECK("ideographic\xe3\x80\x80space", NAME_OK);          /* U+3000 is Zs, not Zl/Zp */
        /* Private use (Co) is drawn, has no formatting effect and never changes category. */
        CHECK("\xef\xa3\xbf", NAME_OK);                          /* U+F8FF */
        CHECK("\xf3\xb0\x80\x80", NAME_OK);                      /* U+F0000, plane 15 */

        memset(max, 'a', 255);
        check_len(max, 255, NAME_OK, "255 bytes");
        ok(name_check("abc/def", 3) == NAME_OK, "only @len bytes are looked at");
}

static void test_refused(void)
{
        char big[300];

        check_len("", 0, NAME_EMPTY, "\"\"");
        ok(name_check(NULL, 0) == NAME_EMPTY, "NULL");
        memset(big, 'a', sizeof(big));
        check_len(big, 256, NAME_TOO_LONG, "256 bytes");
        check_len(big, sizeof(big), NAME_TOO_LONG, "300 bytes");

        CHECK(".", NAME_DOT);
        CHECK("..", NAME_DOT);
        /* Dotfiles arrive by default; names = strict refuses them. */
        CHECK(".hidden", NAME_OK);
        CHECK("...", NAME_OK);
        CHECK(".git", NAME_OK);
        ok(name_check_rules(".hidden", 7, NAME_RULES_STRICT) == NAME_HIDDEN, "strict: \".hidden\" is hidden");
        ok(name_check_rules("...", 3, NAME_RULES_STRICT) == NAME_HIDDEN, "strict: \"...\" is hidden");
        ok(name_check_rules("..", 2, NAME_RULES_UTF8) == NAME_DOT && name_check_rules(".", 1, NAME_RULES_UTF8) == NAME_DOT,
           "\".\" and \"..\" are refused by either rules");
        ok(name_check_rules("visible", 7, NAME_RULES_STRICT) == NAME_OK, "strict: a plain name is fine");
        CHECK("../etc/passwd", NAME_SLASH);      /* the path is the telling reason */
        CHECK("a/b", NAME_SLASH);
        CHECK("/etc/passwd", NAME_SLASH);
        CHECK("x/../y", NAME_SLASH);
        CHECK("dir/", NAME_SLASH);
        CHECK("a\0b", NAME_CONTROL);
        CHECK("trailing-nul\0", NAME_CONTROL);
        CHECK("line\nbreak", NAME_CONTROL);
        CHECK("tab\there", NAME_CONTROL);
        CHECK("\x1b[31mred", NAME_CONTROL);
        CHECK("del\x7f", NAME_CONTROL);
        CHECK("csi\xc2\x9b" "31m", NAME_CONTROL);                  /* U+009B */
        CHECK("\xc2\x80", NAME_CONTROL);                         /* U+0080 */
        CHECK("nel\xc2\x85", NAME_CONTROL);                      /* U+0085, C1 NEXT LINE (Cc) */
        CHECK("\xc2\x9f", NAME_CONTROL);                         /* U+009F, last C1 */

        /* Invisible or reordering format characters (Cf) and separators (Zl, Zp). */
        CHECK("invoice\xe2\x80\xaetxt.exe", NAME_FORMAT);        /* U+202E: "invoiceexe.txt" */
        CHECK("\xe2\x80\xadx", NAME_FORMAT);                     /* U+202D LRO */
        CHECK("\xe2\x80\xaax", NAME_FORMAT);                     /* U+202A LRE */
        CHECK("a\xe2\x80\x8b" "b", NAME_FORMAT);                 /* U+200B ZERO WIDTH SPACE */
        CHECK("a\xe2\x80\x8c" "b", NAME_FORMAT);                 /* U+200C ZWNJ */
        CHECK("a\xe2\x80\x8d" "b", NAME_FORMAT);                 /* U+200D ZWJ (so emoji sequences) */
        CHECK("a\xe2\x80\x8e" "b", NAME_FORMAT);                 /* U+200E LRM */
        CHECK("a\xe2\x80\x8f" "b", NAME_FORMAT);                 /* U+200F RLM */
        CHECK("a\xe2\x81\xa6" "b", NAME_FORMAT);                 /* U+2066 LRI */
        CHECK("a\xe2\x81\xa7" "b", NAME_FORMAT);                 /* U+2067 RLI */
        CHECK("a\xe2\x81\xa8" "b", NAME_FORMAT);                 /* U+2068 FSI */
        CHECK("a\xe2\x81\xa9" "b", NAME_FORMAT);                 /* U+2069 PDI */
        CHECK("a\xe2\x81\xa0" "b", NAME_FORMAT);                 /* U+2060 WORD JOINER */
        CHECK("\xef\xbb\xbf" "file", NAME_FORMAT);               /* U+FEFF BOM / ZWNBSP */
        CHECK("soft\xc2\xadhyphen", NAME_FORMAT);                /* U+00AD SOFT HYPHEN */
        CHECK("a\xd8\x9c" "b", NAME_FORMAT);                     /* U+061C ARABIC LETTER MARK */
        CHECK("a\xf3\xa0\x80\x81", NAME_FORMAT);                 /* U+E0001 LANGUAGE TAG */
        CHECK("line\xe2\x80\xa8sep", NAME_FORMAT);               /* U+2028 (Zl) */
        CHECK("para\xe2\x80\xa9sep", NAME_FORMAT);               /* U+2029 (Zp) */

        /* Unassigned (Cn), noncharacters included: their future category is unknown. */
        CHECK("\xcd\xb8", NAME_UNASSIGNED);                      /* U+0378 */
        CHECK("a\xf3\xa0\x82\x80", NAME_UNASSIGNED);             /* U+E0080 */
        CHECK("\xef\xb7\x90", NAME_UNASSIGNED);                  /* U+FDD0, noncharacter */
        CHECK("\xef\xbf\xbe", NAME_UNASSIGNED);                  /* U+FFFE, noncharacter */
        CHECK("\xef\xbf\xbf", NAME_UNASSIGNED);                  /* U+FFFF, noncharacter */
        /* Valid UTF-8 (so not NAME_UTF8), but a noncharacter. */
        CHECK("\xf4\x8f\xbf\xbf", NAME_UNASSIGNED);              /* U+10FFFF */

        /* The first offending code point decides. */
        CHECK("\xe2\x80\xae\n", NAME_FORMAT);
        CHECK("\n\xe2\x80\xae", NAME_CONTROL);
        CHECK("\xe2\x80\xae\xff", NAME_FORMAT);
        CHECK("\xff\xe2\x80\xae", NAME_UTF8);
        CHECK("\xcd\xb8\xe2\x80\xae", NAME_UNASSIGNED);
        /* Whole-name rules still come first. */
        ok(name_check_rules(".\xe2\x80\xae", 4, NAME_RULES_STRICT) == NAME_HIDDEN, "strict: hidden before format");
        CHECK(".\xe2\x80\xae", NAME_FORMAT);
        CHECK("\xe2\x80\xae/x", NAME_SLASH);

        CHECK("\xc0\xaf", NAME_UTF8);                            /* overlong '/' */
        CHECK("\xc1\xbf", NAME_UTF8);                            /* overlong 2-byte */
        CHECK("\xe0\x80\xaf", NAME_UTF8);                        /* overlong 3-byte '/' */
        CHECK("\xe0\x9f\xbf", NAME_UTF8);                        /* overlong U+07FF */
        CHECK("\xf0\x80\x80\xaf", NAME_UTF8);                    /* overlong 4-byte '/' */
        CHECK("\xf0\x8f\xbf\xbf", NAME_UTF8);                    /* overlong U+FFFF */
        CHECK("\xed\xa0\x80", NAME_UTF8);                        /* U+D800 */
        CHECK("\xed\xbf\xbf", NAME_UTF8);                        /* U+DFFF */
        CHECK("\xf4\x90\x80\x80", NAME_UTF8);                    /* U+110000 */
        CHECK("\xf5\x80\x80\x80", NAME_UTF8);
        CHECK("\xff", NAME_UTF8);
        CHECK("\xfe", NAME_UTF8);
        CHECK("a\x80", NAME_UTF8);                               /* stray continuation */
        CHECK("\xe2\x82", NAME_UTF8);                            /* truncated at the end */
        CHECK("\xe2\x82x", NAME_UTF8);                           /* interrupted */
        CHECK("\xc3(", NAME_UTF8);
        CHECK("latin1-\xe9t\xe9", NAME_UTF8);
        check_len("\xe2\x82\xac", 2, NAME_UTF8, "sequence cut by @len");
}

static void test_strings(void)
{
        bool all = true;

        for (int v = NAME_OK; v <= NAME_PATH_LONG; v++)
                for (int w = NAME_OK; w < v; w++)
                        if (!name_verdict_str(v) || !strcmp(name_verdict_str(v), name_verdict_str(w)))
                                all = false;
        ok(all, "every verdict has its own text");
        ok(name_verdict_str((enum name_verdict)99) != NULL, "unknown verdict still has text");
        ok(strstr(name_verdict_str(NAME_FORMAT), "Cf") != NULL, "format verdict names its categories");
        ok(strstr(name_verdict_str(NAME_UNASSIGNED), "Cn") != NULL,
           "unassigned verdict names its category");
        ok(NAME_UTF8 == 7 && NAME_FORMAT == 8 && NAME_UNASSIGNED == 9,
           "existing verdict values kept, new ones appended");

        is_str(name_leaf("a/b/c.dat"), "c.dat", "leaf of a relative path");
        is_str(name_leaf("/abs/file"), "file", "leaf of an absolute path");
        is_str(name_leaf("plain"), "plain", "no slash");
        is_str(name_leaf("dir/"), "", "trailing slash gives \"\"");
        ok(name_check(name_leaf("dir/"), 0) == NAME_EMPTY, "which name_check refuses");
        is_str(name_leaf("./.bashrc"), ".bashrc", "hidden leaf is returned as is");
        ok(name_check_rules(".bashrc", 7, NAME_RULES_STRICT) == NAME_HIDDEN,
           "and judged by the rules (strict: refused), not by name_leaf");
}

static void path_is(const char *p, enum name_verdict want, size_t want_bad, const char *what)
{
        size_t bad = 99;
        enum name_verdict v = name_path_check(p, strlen(p), &bad);

        if (!ok(v == want && bad == want_bad, "path %s", what))
                diag("'%s': got %s at %zu, want %s at %zu", p, name_verdict_str(v), bad,
                     name_verdict_str(want), want_bad);
}

/* DEST: a relative path beneath the incoming directory; every hostile form refused. */
static void test_paths(void)
{
        char long_path[NAME_PATH_MAX + 2], deep[2 * (NAME_PATH_DEPTH_MAX + 1) + 1];

        path_is("dataset", NAME_OK, 0, "of one component");
        path_is("runs/2024/données", NAME_OK, 0, "of three, UTF-8 included");
        path_is("../x", NAME_DOT, 0, "'../x' is refused at its first component");
        path_is("a/../../b", NAME_DOT, 2, "'a/../../b': at the '..'");
        path_is("a/./b", NAME_DOT, 2, "'a/./b': '.' is not a component either");
        path_is("/abs", NAME_ABSOLUTE, 0, "'/abs' is absolute");
        path_is("a//b", NAME_PATH_FORM, 2, "'a//b' has an empty component");
        path_is("a/b/", NAME_PATH_FORM, 4, "a trailing '/' is an empty component");
        path_is("a/.hidden/b", NAME_OK, 0, "a hidden component is fine");
        ok(name_path_check_rules("a/.hidden/b", 11, NULL, NAME_RULES_STRICT) == NAME_HIDDEN,
           "strict: a hidden component is refused");
        ok(name_path_check("a/b/c", 3, NULL) == NAME_OK && name_path_check("a/b/c", 2, NULL) == NAME_PATH_FORM,
           "@len cuts the path");
        ok(name_path_check_rules("a/\xe2\x80\xae", 5, NULL, NAME_RULES_UTF8) == NAME_FORMAT,
           "utf8: a format character in a component");
        ok(name_path_check_rules("ok/bad\x01", 7, NULL, NAME_RULES_UTF8) == NAME_CONTROL,
           "utf8: a control character in a component");
        ok(name_path_check("a/\xe2\x80\xae/ok/bad\x01/caf\xe9", 18, NULL) == NAME_OK,
           "any, the floor: the same components, and Latin-1");
        ok(name_path_check("", 0, NULL) == NAME_EMPTY && name_path_check(NULL, 3, NULL) == NAME_EMPTY,
           "empty and NULL");
        memset(long_path, 'a', sizeof(long_path));
        for (size_t i = 200; i < sizeof(long_path); i += 201)
                long_path[i] = '/';
        long_path[NAME_PATH_MAX] = '\0';
        ok(name_path_check(long_path, NAME_PATH_MAX, NULL) == NAME_OK, "%d bytes is the limit", NAME_PATH_MAX);
        long_path[NAME_PATH_MAX] = 'a';
        long_path[NAME_PATH_MAX + 1] = '\0';
        ok(name_path_check(long_path, NAME_PATH_MAX + 1, NULL) == NAME_PATH_LONG, "one more is too long");
        for (int i = 0; i < NAME_PATH_DEPTH_MAX + 1; i++) {
                deep[2 * i] = 'd';
                deep[2 * i + 1] = '/';
        }
        deep[2 * NAME_PATH_DEPTH_MAX - 1] = '\0';
        ok(name_path_check(deep, strlen(deep), NULL) == NAME_OK, "%d components (%zu bytes) pass",
           NAME_PATH_DEPTH_MAX, strlen(deep));
        /* An entry of a tree 128 deep, in the 255 bytes of an offer's name. */
        deep[255] = '\0';
        ok(name_path_check(deep, strlen(deep), NULL) == NAME_OK, "128 components in 255 bytes pass");
        deep[255] = '/';
        deep[2 * NAME_PATH_DEPTH_MAX - 1] = '/';
        deep[2 * NAME_PATH_DEPTH_MAX + 1] = '\0';
        ok(name_path_check(deep, strlen(deep), NULL) == NAME_PATH_LONG, "one more is too long (%zu bytes)",
           strlen(deep));
}

/* Symlink targets in a tree: safe only when they cannot resolve outside it. */
static void test_links(void)
{
        static const struct {
                const char *target;
                unsigned int depth;
                enum name_link_verdict want;
        } cases[] = {
                { "b", 0, NAME_LINK_SAFE },
                { "a/b/c.dat", 0, NAME_LINK_SAFE },
                { "./a//b/", 0, NAME_LINK_SAFE },
                { ".", 0, NAME_LINK_SAFE },
                { "../x", 1, NAME_LINK_SAFE },
                { "../../x/y", 2, NAME_LINK_SAFE },
                { "./../x", 1, NAME_LINK_SAFE },
                { "..", 1, NAME_LINK_SAFE },
                { "../x", 0, NAME_LINK_OUTSIDE },
                { "..", 0, NAME_LINK_OUTSIDE },
                { "../../../x", 2, NAME_LINK_OUTSIDE },
                { "/etc/passwd", 5, NAME_LINK_OUTSIDE },
                { "/", 0, NAME_LINK_OUTSIDE },
                /* Through a link "a" (safe itself), ".." climbs from where a points. */
                { "a/..", 3, NAME_LINK_OUTSIDE },
                { "a/../b", 3, NAME_LINK_OUTSIDE },
                { "x/y/../../..", 5, NAME_LINK_OUTSIDE },
                { "..a/b", 0, NAME_LINK_SAFE },
                { "a/...", 0, NAME_LINK_SAFE },
                { "", 0, NAME_LINK_BAD },
        };
        char big[NAME_LINK_MAX + 2];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                is_int(name_link_check(cases[i].target, strlen(cases[i].target), cases[i].depth), cases[i].want,
                       "link %s at depth %u", cases[i].target, cases[i].depth);
        is_int(name_link_check("a\0b", 3, 0), NAME_LINK_BAD, "link: a NUL in the target");
        memset(big, 'a', sizeof(big));
        is_int(name_link_check(big, NAME_LINK_MAX, 0), NAME_LINK_SAFE, "link: NAME_LINK_MAX bytes");
        is_int(name_link_check(big, NAME_LINK_MAX + 1, 0), NAME_LINK_BAD, "link: one byte more");
}

/* names = any, the default and every receiver's floor: what the file system takes. */
static void test_any(void)
{
        static const char *const fine[] = {
                "latin1-\xe9t\xe9", "\xc3(", "line\nbreak", "\x1b[31mred", "del\x7f", "invoice\xe2\x80\xaetxt.exe",
                "\xef\xbf\xbe", ".hidden", "-rf", " ", "back\\slash", "\xff\xfe",
        };
        char big[256];

        for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
                ok(name_check(fine[i], strlen(fine[i])) == NAME_OK &&
                   name_check_rules(fine[i], strlen(fine[i]), NAME_RULES_ANY) == NAME_OK,
                   "any: name %zu is taken", i);
        }
        ok(name_check_rules("line\nbreak", 10, NAME_RULES_UTF8) == NAME_CONTROL &&
           name_check_rules("\xff\xfe", 2, NAME_RULES_STRICT) == NAME_UTF8, "utf8 and strict still refuse them");
        ok(name_check("a\0b", 3) == NAME_CONTROL, "any: a NUL is not");
        ok(name_check("a/b", 3) == NAME_SLASH && name_check("..", 2) == NAME_DOT && name_check(".", 1) == NAME_DOT &&
           name_check("", 0) == NAME_EMPTY, "any: '/', \".\", \"..\" and \"\" are not");
        memset(big, '\xe9', sizeof(big));
        ok(name_check(big, 255) == NAME_OK && name_check(big, 256) == NAME_TOO_LONG, "any: 255 bytes, not 256");
}

int main(void)
{
        test_any();
        test_links();
        test_ok();
        test_paths();
        test_refused();
        test_strings();
        return done_testing();
}
