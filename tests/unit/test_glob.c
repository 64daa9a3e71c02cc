/* test_glob.c - glob_match (base/util.c), the matcher behind KEYS, SCAN /
 * HSCAN / SSCAN / ZSCAN MATCH, PSUBSCRIBE, PUBSUB CHANNELS and CONFIG GET:
 * a table of pattern/subject pairs whose expected results were taken from
 * redis-server 7.0 (KEYS <pattern> against a database holding only the
 * subject), the nocase variant, and hostile patterns that must finish fast
 * and without deep recursion (issue 15). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../src/base/util.h"
#include "test.h"

struct glob_case {
    const char *pat, *s;
    int match;
};

/* Hand-picked edge cases first (unterminated and empty classes, ranges
 * ending in ']', reversed ranges, trailing backslashes), then pairs drawn
 * at random from the alphabet "ab*?[]^-\". */
static const struct glob_case cases[] = {
    {"a[", "a[", 0},
    {"[a", "a", 1},
    {"[]", "]", 0},
    {"[]a]", "a", 0},
    {"[^]", "x", 1},
    {"[a-]", "-", 0},
    {"[a-]", "b", 0},
    {"[z-a]", "q", 1},
    {"\\", "\\", 1},
    {"a\\", "a\\", 1},
    {"[\\", "\\", 1},
    {"[a-\\]", "]", 1},
    {"[!a]", "b", 0},
    {"[^a-c]", "b", 0},
    {"*[", "x[", 0},
    {"[[]", "[", 1},
    {"[a-c-e]", "d", 0},
    {"[a-c-e]", "-", 1},
    {"\?*\?", "ab", 1},
    {"**a**", "xa", 1},
    {"[^", "", 0},
    {"[^", "x", 1},
    {"b[", "b***\\", 0},
    {"-a^", "\\", 0},
    {"", "*^]b[a", 0},
    {"", "\?", 0},
    {"", "]\\a\?", 0},
    {"-\\\?", "[]]*", 0},
    {"^\\b*", "^", 0},
    {"]", "\?\\\?]^^", 0},
    {"^a-\?^^*", "[\?[b*", 0},
    {"*\\^]-a-a", "^", 0},
    {"**\\\?a\?", "\?\?]\\\?[", 0},
    {"[\\a^\\", "-\?\?]", 0},
    {"-]\\\?\\^", "*", 0},
    {"]a\\\\]", "*a]-", 0},
    {"*b\\[abba", "*a^]^", 0},
    {"*", "[^b--", 1},
    {"*[[-", "[**ba", 0},
    {"]^\?[", "b^\?]", 0},
    {"\?a^*a*", "*", 0},
    {"^\\\?\\-\?\\a", "\\[\\a^-", 0},
    {"[bb", "^", 0},
    {"*^[*", "a\?a]*-", 0},
    {"^\?]b\?^\?-", "b", 0},
    {"\\-a]^[", "a-]", 0},
    {"*]^\?[", "b\\\?[\?", 0},
    {"\?bab***", "\?]^[\?", 0},
    {"]]b[", "]*-", 0},
    {"]a^b^**]", "b", 0},
    {"\\\?b[][", "\?", 0},
    {"[", "ba^a", 0},
    {"", "\\", 0},
    {"\?", "]", 1},
    {"b-*\?*b", "\\\\", 0},
    {"\\[-]b\?]a", "aa^", 0},
    {"^]^bb", "[*b^", 0},
    {"\\-]", "^-\?]^", 0},
    {"]b[", "b*", 0},
    {"]", "]\\^a[-", 0},
    {"[\?]b\\", "b]]a]", 0},
    {"[\\bbaa", "^", 0},
    {"-*b\\]", "b\?--", 0},
    {"][", "b\?", 0},
    {"\?*\\a", "[\?", 0},
    {"[^\\", "-a", 0},
    {"b-^", "\?^\?", 0},
    {"-a^]*[-", "a\\aa[", 0},
    {"**", "^^\\\\-", 1},
    {"-", "a-", 0},
    {"\\-\?\?]--\?", "\\[\?", 0},
    {"\?ab\\", "[-\?]^^", 0},
    {"]*-b", "b\?\\--", 0},
    {"\?a-^", "[\\\?-", 0},
    {"a\\b[b[b*", "b*]\\\\\\", 0},
    {"-*", "*]b", 0},
    {"\\^b[[\?", "\\\?a]\?", 0},
    {"aa\?[\?*[", "-\?]^^", 0},
    {"-*\\]", "*\\b]\\]", 0},
    {"aba\\", "^", 0},
    {"\\]", "^", 0},
    {"]\\]ab-", "*[^\?\\", 0},
    {"-b^^\?", "\?a^\?]*", 0},
    {"[*-\\\?]\\a", "\\\\\\[", 0},
    {"\?", "^a\\-", 0},
    {"*ba][^", "\?^-", 0},
    {"-*-\\a[\\", "b\\b", 0},
    {"-a*\\*", "b", 0},
    {"[[\?\\\?\?", "[^bb\?[", 0},
    {"\\a*[\\[]", "]\\\?\\-", 0},
    {"]\?[\?a^]", "\\]^", 0},
    {"*-*", "^", 0},
    {"***-][^", "]b]^b", 0},
    {"^", "[*", 0},
    {"a", "aa", 0},
    {"a-\\", "*[^b-b", 0},
    {"\?--", "\\-]]", 0},
    {"\\^\?-", "^[*b", 0},
    {"aaa", "*", 0},
    {"[\?^**", "aa\\-", 0},
    {"^[*b-[aa", "\?", 0},
    {"", "-a^b\\", 0},
    {"a", "*-", 0},
    {"\?-^]", "^^]]a-", 0},
    {"\\\\a]\\", "\\\?]\?", 0},
    {"b[b[*b", "-a]\\aa", 0},
    {"-", "\?[b[a", 0},
    {"a-", "-\\*a\?", 0},
    {"[]b[", "a", 0},
    {"[]*[^b", "^", 0},
    {"\?", "\?\?][", 0},
    {"^-b*-", "\?\?\?\?a", 0},
    {"*\?]^", "\?[b\\[-", 0},
    {"[", "\?", 0},
    {"[]][]", "\?\?a\?", 0},
    {"]", "[[", 0},
    {"[", "**[\\", 0},
    {"a", "-a\?*^", 0},
    {"]]]", "\\^*[\?\?", 0},
    {"*[", "]", 0},
    {"*^", "a", 0},
    {"[", "b]^b\?", 0},
    {"\?", "-", 1},
    {"a]-[\?\?-\?", "\\*[\?", 0},
    {"b[^", "]a\?\\", 0},
    {"b^\\^a]-a", "]^a\?", 0},
    {"\\", "[\?\?", 0},
    {"^\\\\^", "^*^-\?", 0},
    {"*\\*[a^a", "[\\\\^a", 0},
    {"a", "\\", 0},
    {"[]-]", "\\*b*", 0},
    {"^*a*[", "[-", 0},
    {"[\\[^", "^\\[*", 0},
    {"-^^", "bb-]-]", 0},
    {"", "^", 0},
    {"b^", "-ab\\", 0},
    {"", "]\?\\[a", 0},
    {"\\", "\\b^^-*", 0},
    {"", "b\\", 0},
    {"-", "^\?*\\b*", 0},
    {"^", "]-", 0},
    {"^\\[-\\\?]-", "ba[", 0},
    {"\\-[b", "]", 0},
    {"[\?^**[\?^", "\?a\?", 0},
    {"^[[-[[-\?", "*[", 0},
    {"]**-\\*a", "\?[", 0},
    {"*\?]--]b*", "-^]b\?a", 0},
    {"b\?", "]\?^\\[a", 0},
    {"", "]b]", 0},
    {"][\\^", "ab[[-b", 0},
    {"a]bb", "b^", 0},
    {"[\\a]a", "b-", 0},
    {"\?b][a\\", "[b[", 0},
    {"[^", "b\?*\\\?", 0},
    {"\?[\\*a\\", "b-]", 0},
    {"[\\a", "^\?^\?", 0},
    {"*^b]", "b\?[\?", 0},
    {"\\a[-**b*", "]*[[^-", 0},
    {"-^", "b-^^", 0},
    {"", "a-\\\?b", 0},
    {"^^[]^^-", "a", 0},
    {"a", "aab-", 0},
    {"]\\[]-\?\?b", "\?[-ba", 0},
    {"][a^^", "\\[^[", 0},
    {"\?\\*a]b\\", "-\?*[ba", 0},
    {"^*^\?b\?]", "[]", 0},
    {"-]-\?^-^", "\?b*^--", 0},
    {"", "\\bab", 0},
    {"^\\", "^--\?", 0},
    {"a", "*\\]", 0},
    {"^a\\\?^**]", "]b\?\?--", 0},
    {"a\\\?^\?a", "\?]\?\?b", 0},
    {"-ba", "\\b\?b", 0},
    {"\\\?aa[-[", "\\", 0},
    {"*\\", "[\?*\?\\", 1},
    {"^^\?-[]*[", "^-", 0},
    {"]", "[-^^^[", 0},
    {"-a**[\?", "]b\?", 0},
    {"^\?*", "\?*\\]b", 0},
    {"a", "a\\", 0},
    {"**\\\\b\?", "\\-^]", 0},
    {"*\?[*]-", "\?^b", 0},
    {"\?-a[b]-[", "aa[", 0},
    {"bb", "\\]", 0},
    {"\\^b", "]\\\?-^", 0},
    {"", "b]\\*\?]", 0},
    {"*\\\\\?", "\\", 0},
    {"^^[-", "b--\?a*", 0},
    {"", "]\\\?[", 0},
    {"ba^", "*", 0},
    {"\\\?\\", "\\\?", 0},
    {"\?]b]a", "*a", 0},
    {"[-", "a\?", 0},
    {"^", "b\\\?^\\", 0},
    {"-a\\-", "a\\^", 0},
    {"\\[b]^", "\\\?", 0},
    {"", "ba\?ab", 0},
    {"]\\a]b", "*b\?", 0},
    {"\\\\a*]]\?", "--b", 0},
    {"\\^]][]", "ab]", 0},
    {"\\[bb", "-^\\b", 0},
    {"\\[", "]]b", 0},
    {"-a\\[", "]\?b\?[[", 0},
    {"*a-]", "aa[\\-", 0},
    {"\\^*\?\?b*\\", "b", 0},
    {"\?a]-", "[[]a", 0},
    {"", "a-^\?", 0},
    {"", "]", 0},
    {"*", "a\?]]*", 1},
    {"-\\]]", "\\b", 0},
    {"*\?[", "\\*[a*", 0},
    {"b^\?\\-", "\?\?*", 0},
    {"-*[\\[^\\", "^^^aa", 0},
    {"]\?\\-\?-]", "-\\\\a", 0},
    {"a", "^\?a", 0},
    {"a]][", "a]b[", 0},
    {"b", "-^\\[]a", 0},
    {"][", "^\\\\\?*", 0},
    {"^", "]a", 0},
    {"\?\?^", "\\]-^[a", 0},
    {"-**a", "[\\\?[", 0},
    {"h?llo", "hello", 1},
    {"h*llo", "heeeello", 1},
    {"h[ae]llo", "hillo", 0},
    {"h[^e]llo", "hallo", 1},
    {"h[a-b]llo", "hbllo", 1},
    {"user:*:name", "user:1000:name", 1},
    {"*\\*", "abc*", 1},
    {"a*a*a*b", "aaaaaaaaaa", 0},
    {"a*a*a*a", "aaaaaaaaaa", 1},
};

TEST(test_glob_table_as_redis)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct glob_case *k = &cases[i];
        int got = glob_match(k->pat, strlen(k->pat), k->s, strlen(k->s), 0);
        if (got != k->match)
            test_fail(__FILE__, __LINE__, "glob_match(\"%s\", \"%s\") = %d, want %d", k->pat, k->s, got, k->match);
    }
}

TEST(test_glob_nocase)
{
    CHECK(glob_match("MAXMEMORY*", 10, "maxmemory-policy", 16, 1));
    CHECK(glob_match("[A-C]x", 6, "bX", 2, 1));
    CHECK(glob_match("[^A-C]x", 7, "dX", 2, 1));
    CHECK(!glob_match("[^A-C]x", 7, "bX", 2, 1));
    CHECK(glob_match("?ppend*", 7, "APPENDONLY", 10, 1));
    CHECK(!glob_match("[A-C]x", 6, "bX", 2, 0));
    /* Bytes above 0x7f, in and out of classes: compared as bytes. */
    CHECK(glob_match("\xe9[\xe0-\xef]", 5, "\xe9\xe1", 2, 1));
    CHECK(!glob_match("\xc9", 1, "\xe9", 1, 0));
    CHECK(glob_match("[\\\xe9]", 4, "\xe9", 1, 1));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *repeat(const char *unit, size_t times, const char *tail, size_t *len)
{
    size_t ul = strlen(unit), tl = strlen(tail);
    char *p = malloc(ul * times + tl + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(p + i * ul, unit, ul);
    memcpy(p + ul * times, tail, tl + 1);
    *len = ul * times + tl;
    return p;
}

/* Patterns that blow up a backtracking matcher, and ones long enough to
 * overflow the stack of a recursive one: all finish, in well under a
 * second each even under the sanitizers, with Redis's answers. */
TEST(test_glob_hostile_patterns_are_bounded)
{
    size_t sl, pl;
    char *subj = repeat("a", 100000, "", &sl);
    struct {
        const char *unit;
        size_t times;
        const char *tail;
        int match;
    } hostile[] = {
        {"*a", 60, "*b", 0},      /* exponential for naive backtracking */
        {"*a", 60, "*", 1},
        {"a*", 1000, "", 1},
        {"*", 1000000, "", 1},    /* a million stars: one */
        {"[", 500000, "", 0},     /* one long unterminated class */
        {"[a", 100000, "]", 0},
        {"\\a", 100000, "", 1},   /* escapes, as many as the subject */
        {"?", 100000, "", 1},
        {"?", 100001, "", 0},
        {"*?", 5000, "b", 0},
        {"[^b]", 100000, "", 1},
        {"*aaaaaaaaaaaaaaaa", 1, "b", 0},
    };
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        char *pat = repeat(hostile[i].unit, hostile[i].times, hostile[i].tail, &pl);
        double t = now_s();
        int got = glob_match(pat, pl, subj, sl, (int)(i & 1));
        double took = now_s() - t;
        if (got != hostile[i].match)
            test_fail(__FILE__, __LINE__, "hostile %zu: %d, want %d", i, got, hostile[i].match);
        if (took > 2.0)
            test_fail(__FILE__, __LINE__, "hostile %zu took %.2fs", i, took);
        free(pat);
    }
    free(subj);
}
