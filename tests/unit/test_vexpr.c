/* test_vexpr.c - the FILTER expression language of vector sets (ds/vexpr.h):
 * arithmetic and precedence, comparisons and type coercions, logic, the
 * "in" operator on tuples, JSON arrays and strings, string escapes (the
 * cases of Redis's filter_expr.py, filter_double_not.py and
 * filter_string_escape.py), JSON attribute parsing (booleans, null,
 * missing fields, invalid and non-object JSON, laziness), syntax errors
 * and the error reply text, deep nesting and huge inputs, concurrent
 * evaluation of one compiled filter, a differential test against random
 * fully parenthesised expressions, and a fuzz of random bytes. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ds/vexpr.h"
#include "test.h"

/* Compile expr (must succeed) and evaluate it on json (NULL: no attributes). */
static int ev(const char *expr, const char *json)
{
    char err[256];
    struct vexpr *e = vexpr_compile(expr, strlen(expr), err, sizeof(err));
    if (!e) {
        test_fail(__FILE__, __LINE__, "compile failed: %s", err);
        return -1;
    }
    int r = vexpr_eval(e, json, json ? strlen(json) : 0);
    vexpr_free(e);
    return r;
}

/* 1 if expr does not compile. */
static int bad(const char *expr)
{
    struct vexpr *e = vexpr_compile(expr, strlen(expr), NULL, 0);
    if (e) {
        vexpr_free(e);
        return 0;
    }
    return 1;
}

#define T(expr) CHECK_EQ(ev(expr, "{}"), 1)
#define F(expr) CHECK_EQ(ev(expr, "{}"), 0)
#define TJ(expr, json) CHECK_EQ(ev(expr, json), 1)
#define FJ(expr, json) CHECK_EQ(ev(expr, json), 0)

TEST(test_vexpr_arithmetic_and_precedence)
{
    T("(5+2)*3 == 21");
    T("2 + 3 * 4 == 14");
    T("(2 + 3) * 4 == 20");
    T("10 - 2 - 3 == 5");     /* left associative */
    T("100 / 10 / 5 == 2");
    T("2 ** 3 ** 2 == 512");  /* right associative */
    T("(2 ** 3) ** 2 == 64");
    T("2 * 3 ** 2 == 18");    /* ** above * */
    T("7 % 3 == 1");
    T("-7 % 3 == -1");        /* fmod */
    T("7.5 % 2 == 1.5");
    T("2 ** -1 == 0.5");
    T("-2 ** 2 == 4");        /* -2 is one number */
    T("5 - -3 == 8");
    T("5-3 == 2");
    T("5 -3 == 2");           /* after a value '-' is an operator */
    T("(1) -1 == 0");         /* and after ')' too */
    T("(-1) == -1");
    T("1.5 * 2 == 3");
    T("1e3 == 1000");
    T("2E2 == 200");
    T("1. == 1");
    T("0.5 + 0.25 == 0.75");
    T("007 == 7");
    T("1 / 0 > 1000000");     /* +inf */
    T("-1 / 0 < -1000000");
    T("0 / 0");               /* NaN is not 0: true, as in Redis */
    F("0 / 0 == 0 / 0");
    T("1 + 2 > 2 and 0 or 1");
    T("1 or 0 and 0");        /* and binds tighter than or */
    F("(1 or 0) and 0");
    F("not 0 and 0");         /* (not 0) and 0 */
    T("!1 == 0");             /* (!1) == 0 */
    T("!(1 == 0)");
    F("!2 ** 2");             /* (!2) ** 2 */
    T("2 ** !0 == 2");
    T("1 + 2 * 3 - 4 / 2 == 5");
    T("3 > 2 == 1");          /* same level, left to right */
    T("1 < 2 < 3");
    T("3 > 2 > 1 == 0");      /* (3 > 2) > 1 is 1 > 1 */
    T("5");
    F("0");
    T("-0.5");
    F("0.0");
}

TEST(test_vexpr_comparisons_and_coercions)
{
    T("3 > 2");
    F("2 > 3");
    T("2 >= 2");
    T("1 < 2");
    F("2 <= 1");
    T("1 == 1.0");
    T("1 != 2");
    T("'abc' == 'abc'");
    T("\"abc\" == 'abc'");
    T("'abc' != 'abd'");
    F("'a' == 'a '");
    T("'' == ''");
    T("'10' == 10");          /* mixed: the string as a number */
    T("10 == '10'");
    T("'1e1' == 10");
    T("' 12' == 12");         /* strtod skips leading spaces */
    T("'12 ' == 0");          /* not wholly a number: 0 */
    T("'abc' == 0");
    T("'abc' > -1");          /* ordering is numeric */
    T("'5' < '10'");
    F("'b' > 'a'");
    T("'3' + '4' == 7");
    T("'x' * 5 == 0");
    T("null == null");
    F("null == 0");
    T("null != 0");
    F("0 == null");
    F("null == ''");
    F("null");
    T("!null");
    T("null + 1 == 1");       /* null as a number is 0 */
    T("[1] == 0");            /* a tuple as a number is 0 */
    F("[1] == 1");
    F("''");
    T("'x'");
    T("'0'");                 /* non-empty string: true */
    T("[1]");
    T("[]");
    T("!!'x'");
}

TEST(test_vexpr_logic_and_not)
{
    T("1 and 1");
    F("1 and 0");
    T("0 or 1");
    F("0 or 0");
    T("1 && 2");
    F("0 && 1");
    T("0 || 3");
    F("0 || ''");
    T("not 0");
    F("not 1");
    T("!0");
    F("!1");
    /* filter_double_not.py: consecutive prefix operators nest. */
    T("!!1");
    T("not not 1");
    F("!!!1");
    F("!!0");
    T("not !1 == 1");
    const char *a1 = "{\"active\": true, \"n\": 5}";
    const char *a2 = "{\"active\": false, \"n\": 0}";
    TJ("!!.active", a1);
    FJ("!!.active", a2);
    TJ("not not .active", a1);
    FJ("!!!.active", a1);
    TJ("!!!.active", a2);
    TJ("!!.n == 1", a1);      /* !! binds tighter than == */
    FJ("!!.n == 1", a2);
    TJ("!.active or !!.active", a1);
    TJ("!.active or !!.active", a2);
    TJ(".n > 1 and not not .active", a1);
    FJ(".n > 1 and not not .active", a2);
    TJ("!(.n == 0)", a1);
    /* As in Redis, a prefix operator with its operand before it still
     * compiles (the postfix program is the same). */
    F("1 !");
    T("0 not");
}

TEST(test_vexpr_in_operator)
{
    T("2 in [1, 2, 3]");
    F("4 in [1, 2, 3]");
    T("'b' in ['a', \"b\"]");
    T("'2' in [1, 2]");       /* element equality: mixed is numeric */
    T("2 in ['2']");
    F("2 in []");
    T("1 in [1,]");           /* trailing comma accepted */
    T("-1 in [ -1 , 0 ]");
    T("0.5 in [1e0, 0.5]");
    F("null in [1]");
    T("'lic' in 'Alice'");
    T("'Ali' in 'Alice'");
    T("'ice' in 'Alice'");
    T("'Alice' in 'Alice'");
    F("'Alicex' in 'Alice'");
    F("'xyz' in 'Alice'");
    T("'' in 'Alice'");
    T("'' in ''");
    F("'Alice' in ''");
    F("1 in 'a1'");           /* substring needs two strings */
    F("'x' in 5");
    F("[1] in [1]");          /* a tuple equals numbers as 0 */
    T("[1] in [0]");
    T("2 in [1, 2] and 'a' in 'cat'");

    const char *j = "{\"tags\": [\"a\", \"b\\\"c\", 7, true, null, [1, [2]], \"\"],"
                    " \"name\": \"Alice\", \"age\": 25, \"s\": \"\"}";
    TJ("'a' in .tags", j);
    TJ("'b\"c' in .tags", j);
    TJ("'c' in .tags", j);    /* quirk kept from Redis: 'c' and the nested array are both 0 */
    FJ("'c' in .e", "{\"e\": [\"a\", \"b\\\"c\", 7, \"\"]}");
    TJ("7 in .tags", j);
    TJ("'7' in .tags", j);
    TJ("1 in .tags", j);      /* true is 1 */
    TJ("null in .tags", j);
    TJ("'' in .tags", j);
    TJ("0 in .tags", j);      /* '' and the nested array are 0 as numbers */
    FJ("3 in .tags", j);
    TJ(".age in [25, 35]", j);
    FJ(".age in [26, 35]", j);
    TJ(".name in ['Alice', 'David']", j);
    TJ("'lic' in .name", j);
    FJ(".name in ''", j);
    FJ(".name in .s", j);
    TJ(".s in .name", j);
    TJ("\"\" in .name && \"\" in \"\"", j);
    FJ("'x' in .age", j);
    TJ(".tags", j);           /* arrays are true */
    TJ(".tags == 0", j);
    TJ("'a' in .e", "{\"e\": [\"a\"]}");
    FJ("'a' in .e", "{\"e\": []}");
    FJ("'a' in .e", "{\"e\": [ ]}");
    TJ("2 in .e", "{\"e\":[1,2,3]}");
    TJ("-2.5 in .e", "{\"e\": [ 1 , -2.5e0 ]}");
    /* Invalid arrays make the field unreadable: no match at all. */
    FJ("1 in .e", "{\"e\": [1, 2,]}");
    FJ("1 in .e", "{\"e\": [1 2]}");
    FJ("1 in .e", "{\"e\": [1, {\"a\": 1}]}");
    FJ("1 in .e", "{\"e\": [1, tru]}");
    FJ("1 in .e", "{\"e\": [1, truex]}");
    FJ("1 in .e", "{\"e\": [1, [2]");
    FJ("1 in .e", "{\"e\": [1, \"x]");
    FJ("1 in .e", "{\"e\": [,1]}");
    FJ(".e", "{\"e\": [1, 2,]}");
    /* Escaped strings longer than the stack scratch space. */
    char big[4096];
    int n = snprintf(big, sizeof(big), "{\"e\": [");
    for (int i = 0; i < 3; i++) {
        big[n++] = '"';
        for (int k = 0; k < 600; k++) {
            if (k % 50 == 0) {
                big[n++] = '\\';
                big[n++] = 'n';
            } else {
                big[n++] = 'a';
            }
        }
        big[n++] = '0' + i;
        big[n++] = '"';
        big[n++] = ',';
    }
    n--;
    n += snprintf(big + n, sizeof(big) - (size_t)n, "], \"s\": \"x\\ty\"}");
    CHECK(n < (int)sizeof(big));
    char expr[2048];
    int m = snprintf(expr, sizeof(expr), "'");
    for (int k = 0; k < 600; k++) {
        if (k % 50 == 0) {
            expr[m++] = '\\';
            expr[m++] = 'n';
        } else {
            expr[m++] = 'a';
        }
    }
    snprintf(expr + m, sizeof(expr) - (size_t)m, "2' in .e and .s == 'x\\ty'");
    TJ(expr, big);
    expr[m] = '3';
    FJ(expr, big);
}

TEST(test_vexpr_strings_and_escapes)
{
    /* filter_string_escape.py */
    const char *j1 = "{\"dq\": \"a\\\"b\", \"sq\": \"O'Brien\", \"bs\": \"x\\\\y\", \"nl\": \"l1\\nl2\"}";
    const char *j2 = "{\"dq\": \"ab\", \"sq\": \"OBrien\", \"bs\": \"xy\", \"nl\": \"l1l2\"}";
    const char *cases[] = {
        ".dq == \"a\\\"b\"", ".sq == 'O\\'Brien'", ".bs == \"x\\\\y\"", ".nl == \"l1\\nl2\"",
        "\"\\\"b\" in .dq", ".dq in [\"zzz\", \"a\\\"b\"]", "'a\"b' == .dq", ".sq == \"O'Brien\"",
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        CHECK_EQ(ev(cases[i], j1), 1);
        CHECK_EQ(ev(cases[i], j2), 0);
    }
    T("'a\\tb' == \"a\tb\"");
    T("'a\\rb' == \"a\rb\"");
    T("'\\q' == 'q'");         /* other escapes: the character itself */
    T("'\\\\' == \"\\\\\"");
    F("'\\\\' == '\\\\\\\\'");
    T("'it\\'s' == \"it's\"");
    T("'\"' == \"\\\"\"");
    T("'' == \"\"");
    /* JSON escapes: \" \\ \n \r \t decoded; \uXXXX, \/ ... keep the char. */
    TJ(".s == 'u0041'", "{\"s\": \"\\u0041\"}");
    TJ(".s == '/'", "{\"s\": \"\\/\"}");
    TJ(".s == 'a\\tb\\rc'", "{\"s\": \"a\\tb\\rc\"}");
    TJ(".s == 'bf'", "{\"s\": \"\\b\\f\"}");
    TJ(".s == ''", "{\"s\": \"\"}");
    FJ(".s", "{\"s\": \"\"}");
    TJ(".s", "{\"s\": \"0\"}");
    TJ(".s == 12.5", "{\"s\": \"12.5\"}");
    TJ(".s > 100", "{\"s\": \"1e3\"}");
    TJ(".s == 0", "{\"s\": \"12abc\"}");
    /* Raw newlines and bytes >= 0x80 pass through. */
    TJ(".s == 'caf\xc3\xa9\n'", "{\"s\": \"caf\xc3\xa9\n\"}");
    /* A string of 256+ characters is 0 as a number. */
    char j[600];
    int n = snprintf(j, sizeof(j), "{\"s\": \"");
    for (int i = 0; i < 300; i++)
        j[n++] = '0';
    snprintf(j + n, sizeof(j) - (size_t)n, "1\"}");
    TJ(".s == 0", j);
    j[n - 50] = '\0';
    strcat(j, "1\"}");
    TJ(".s == 1", j);
}

TEST(test_vexpr_json_values)
{
    /* filter_expr.py's data. */
    const char *it[] = {
        "{\"age\": 25, \"name\": \"Alice\", \"active\": true, \"scores\": [85, 90, 95], \"city\": \"New York\"}",
        "{\"age\": 30, \"name\": \"Bob\", \"active\": false, \"scores\": [70, 75, 80], \"city\": \"Boston\"}",
        "{\"age\": 35, \"name\": \"Charlie\", \"scores\": [60, 65, 70], \"city\": \"Seattle\"}",
        NULL, /* no attributes */
        "invalid json",
    };
    struct {
        const char *expr;
        unsigned mask; /* bit i: item i matches */
    } cases[] = {
        {".age == 25", 1}, {".age > 25", 6}, {".age <= 30", 3}, {".name == \"Alice\"", 1},
        {".name != \"Alice\"", 6}, {".active", 1}, {".age > 20 and .age < 30", 1},
        {".age < 30 or .age > 35", 1}, {"!(.age == 25)", 6}, {".age in [25, 35]", 5},
        {".name in [\"Alice\", \"David\"]", 1}, {"\"lic\" in .name", 1}, {"\"ork\" in .city", 1},
        {"\"xyz\" in .name", 0}, {"\"\" in .name", 7}, {".name in \"\"", 0},
        {"\"\" in .name && \"\" in \"\"", 7}, {".age + 10 > 40", 4}, {".age * 2 > 60", 4},
        {".age / 5 == 5", 1}, {".age % 2 == 0", 2}, {".age ** 2 > 900", 4},
        {".missing_field == \"value\"", 0}, {".any_field", 0},
        {"(.age > 20 and .age < 40) and (.city == \"Boston\" or .city == \"New York\")", 3},
        {".age > (20 + 10)", 4}, {".scores", 7}, {"85 in .scores", 1}, {"70 in .scores", 6},
        {"1", 7 | 16},   /* no selector: any element with attributes */
        {".active == 0", 2}, {"!.active", 2},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct vexpr *e = vexpr_compile(cases[c].expr, strlen(cases[c].expr), NULL, 0);
        CHECK(e != NULL);
        if (!e)
            continue;
        unsigned got = 0;
        for (int i = 0; i < 5; i++)
            if (vexpr_eval(e, it[i], it[i] ? strlen(it[i]) : 0))
                got |= 1u << i;
        if (got != cases[c].mask)
            test_fail(__FILE__, __LINE__, "%s: mask %u, want %u", cases[c].expr, got, cases[c].mask);
        vexpr_free(e);
    }

    /* Booleans are 1/0, null is its own value. */
    TJ(".b == 1", "{\"b\": true}");
    TJ(".b == 0", "{\"b\": false}");
    TJ(".b + .b == 2", "{\"b\":true}");
    TJ(".x == null", "{\"x\": null}");
    TJ("(.x == null )", "{\"x\": null}");
    FJ(".x", "{\"x\": null}");
    TJ("!.x", "{\"x\": null}");
    FJ(".x == 0", "{\"x\": null}");
    FJ(".b", "{\"b\": truex}");
    TJ(".b", "{\"b\":true}");
    TJ(".b", "{\"b\": true }");
    TJ(".b", "{\"b\": true,\"c\":1}");
    TJ(".b", "{\"b\": true");  /* the rest is never read */
    FJ(".b", "{\"b\": tru");
    FJ(".b == null", "{\"b\": nul}");
    /* Numbers. */
    TJ(".a == -350", "{\"a\": -3.5e2}");
    TJ(".a == 350", "{\"a\": 3.5E+2}");
    TJ(".a == 1e300 * 1e300", "{\"a\": 1e400}");
    TJ(".a == 5", "{\"a\": +5}");
    TJ(".a == 123", "{\"a\": 0123}");
    TJ(".a == 1", "{\"a\": 1x}");      /* like Redis: the value is 1, the rest unread */
    FJ(".a", "{\"a\": 1.2.3}");
    FJ(".a", "{\"a\": -}");
    FJ(".a", "{\"a\": .5}");
    FJ(".a", "{\"a\": x}");
    FJ(".a", "{\"a\": {\"b\": 1}}");   /* objects are not values */
    FJ(".a", "{\"a\": [{\"b\": 1}]}");
    TJ(".a == 12345678901234567890", "{\"a\": 12345678901234567890}");
    TJ(".a == -0", "{\"a\": -0}");
    TJ("1 / .a < 0", "{\"a\": -0}");   /* -0 stays -0 */
    TJ("1 / .a > 0", "{\"a\": 0}");
    /* Keys: the first occurrence wins; values of other keys are skipped
     * without being parsed. */
    TJ(".a == 1", "{\"a\":1,\"a\":2}");
    TJ(".b == 2", "{\"o\": {\"a\": [1, {\"x\": \"}\"}]}, \"b\": 2}");
    TJ(".t == 3", "{\"s\": \"}{][\\\"\", \"t\": 3}");
    TJ(".c == 2", "{\"a\\\"b\": 1, \"c\": 2}");
    FJ(".a", "{\"a\\u0062\": 1}");     /* keys are compared raw */
    TJ(".a-b == 5", "{\"a-b\": 5}");
    TJ(".a_b == 5", "{\"a_b\": 5}");
    TJ(".2x == 1", "{\"2x\": 1}");
    FJ(".A", "{\"a\": 1}");
    TJ(".a == 1", " \t\n{ \"a\" \n: \t1 } ");
    TJ(".a + .b == 3", "{\"a\":1,\"b\":2, @@@");  /* both found before the garbage */
    FJ(".a + .b == 3", "{\"a\":1, @@@ ,\"b\":2}");
    FJ(".b", "{\"a\": {\"x\": 1, \"b\": 2}}");   /* only top-level keys */
    FJ(".b", "{\"a\": 1 \"b\": 2}");
    FJ(".b", "{\"a\" 1, \"b\": 2}");
    FJ(".b", "{a: 1, \"b\": 2}");
    FJ(".b", "{\"a\": 1, \"b\": }");
    FJ(".b", "{\"a\": 1, \"b\":");
    FJ(".b", "{\"a\": [1, 2, \"b\": 2}");
    /* Missing fields: the whole expression is false, whatever else. */
    FJ(".missing or 1", "{\"a\": 1}");
    FJ("not .missing", "{\"a\": 1}");
    FJ(".a or .missing", "{\"a\": 1}");
    FJ(".missing == null", "{\"a\": 1}");
    /* Not an object, empty, or no attributes. */
    FJ(".a", "[1, 2]");
    FJ(".a", "5");
    FJ(".a", "");
    FJ(".a", "  {");
    FJ(".a", "{}");
    FJ(".a", "\"a\"");
    CHECK_EQ(ev("1", NULL), 0);        /* no attributes never match */
    CHECK_EQ(ev(".a", NULL), 0);
    TJ("1", "");                       /* attributes that are not JSON: no selector, no reading */
    TJ("1 + 1 == 2", "garbage");
    /* Binary attributes (NULs) are read by length. */
    {
        static const char js[] = "{\"a\": \"x\0y\", \"b\": 2}";
        struct vexpr *e = vexpr_compile(".b == 2 and .a != 'x'", 21, NULL, 0);
        CHECK(e != NULL);
        if (e) {
            CHECK_EQ(vexpr_eval(e, js, sizeof(js) - 1), 1);
            vexpr_free(e);
        }
    }
}

TEST(test_vexpr_many_fields)
{
    /* 40 distinct fields (binary search, heap slots) in shuffled order. */
    char expr[4096], json[4096];
    int n = 0, m = 0, order[40];
    long sum = 0;
    for (int i = 0; i < 40; i++) {
        n += snprintf(expr + n, sizeof(expr) - (size_t)n, "%s.f%d", i ? " + " : "", i);
        order[i] = i;
        sum += i * 3;
    }
    snprintf(expr + n, sizeof(expr) - (size_t)n, " + .f7 - .f7 == %ld", sum);
    unsigned s = 12345;
    for (int i = 39; i > 0; i--) {
        s = s * 1103515245u + 12345u;
        int k = (int)((s >> 8) % (unsigned)(i + 1));
        int t = order[i];
        order[i] = order[k];
        order[k] = t;
    }
    m += snprintf(json + m, sizeof(json) - (size_t)m, "{\"zz\": [1, {\"f3\": 0}], ");
    for (int i = 0; i < 40; i++)
        m += snprintf(json + m, sizeof(json) - (size_t)m, "\"f%d\": %d, ", order[i], order[i] * 3);
    snprintf(json + m, sizeof(json) - (size_t)m, "\"f0\": 1000}");
    struct vexpr *e = vexpr_compile(expr, strlen(expr), NULL, 0);
    CHECK(e != NULL);
    if (!e)
        return;
    CHECK_EQ(vexpr_nfields(e), 40);
    CHECK_EQ(vexpr_eval(e, json, strlen(json)), 1);
    /* Drop one key: no match. */
    char *k = strstr(json, "\"f17\"");
    CHECK(k != NULL);
    if (k)
        k[2] = 'x';
    CHECK_EQ(vexpr_eval(e, json, strlen(json)), 0);
    vexpr_free(e);

    e = vexpr_compile(".a + .a * .b - .a", 17, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(vexpr_nfields(e), 2);
        vexpr_free(e);
    }
}

TEST(test_vexpr_syntax_errors)
{
    const char *bads[] = {
        "", "   ", "(", ")", "(1", "1)", "((1)", "(1))", "1 +", "+ 1", "1 2", "()", "1 ==", "== 1",
        "and", "1 and", ".a .b", ".a.b", "@", "#", "{", "1 = 1", "1 & 1", "1 | 1", "'abc",
        "\"abc", "'abc\\'", "[1, 2", "[1 2]", "[a]", "[.a]", "[[1]]", "[1,,2]", "[,1]", "[-]",
        "[null]", "true", "false", "AND", "Null", "..a", ".a.", "(.)", ". 1", "1e-5", "1e+5", "1.2.3", "1e",
        "nul", "nullx", "null null", "(.a == null)", "1 ! 2", "!", "not", "1 in", "in [1]",
        "**2", "1 **", "- 1", "-", "1 - - 1", ".a ===1", "1 <> 2", "1 =< 2", "1 ! = 2",
        "andy", "1 andd 1", "1 orr 0", "1 or", "notx", "1 === 1", "5 $ 3", "1,2", "[1],",
        "(1)(2)", "1 (2)", "!()", "1 + ()",
    };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
        if (!bad(bads[i]))
            test_fail(__FILE__, __LINE__, "compiled: \"%s\"", bads[i]);
    const char *goods[] = {
        "1", ".a", "null", "(.a == null )", "[1,]", "1 !", "-1", "(-1)", "!-1", "'a'", "[]",
        "[ ]", "!!!1", "((((1))))", "1-1", "1--1", ".a-1", "not(1)", "1 in[1]", "1or 0",
        ".a==-1", "2**-1", "1 *-1", "'x'in'y'", "\t1\n", "1.e5", "1E5", "[1, 'a', \"b\", -2.5]",
    };
    for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++)
        if (bad(goods[i]))
            test_fail(__FILE__, __LINE__, "did not compile: \"%s\"", goods[i]);
    /* A '.' ending the text is an empty selector: it compiles (as in
     * Redis) and never matches. */
    CHECK(!bad("."));
    CHECK(!bad("1 or ."));
    FJ(".", "{\"\": 1}");
    FJ("1 or .", "{\"\": 1}");
    /* ".a-1" is the key "a-1", "1--1" is 1 - (-1). */
    TJ(".a-1 == 7", "{\"a-1\": 7, \"a\": 1}");
    T("1--1 == 2");
    T("1 *-1 == -1");
    T("'x'in'xy'");
    T("1or 0");

    /* Where the error message starts (Redis's errpos). */
    struct {
        const char *expr;
        size_t pos;
    } at[] = {
        {"1 + @", 4},       /* unknown character: there */
        {"1 @ 2", 2},
        {"'abc", 0},        /* unterminated: at the end, so the whole text */
        {".a == foo", 0},   /* unknown word at the end */
        {".a == foo bar", 9},
        {"(1", 0},          /* structural errors quote everything */
        {"1 2", 0},
        {"1 +", 0},
        {"[1 2]", 3},
        {"[1, a]", 4},
        {"1e-5 + 1", 2},    /* the number run "1e" failed */
        {"x == 1", 1},
    };
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        size_t pos = 999;
        struct vexpr *e = vexpr_compile_at(at[i].expr, strlen(at[i].expr), &pos);
        CHECK(e == NULL);
        vexpr_free(e);
        if (pos != at[i].pos)
            test_fail(__FILE__, __LINE__, "%s: errpos %zu, want %zu", at[i].expr, pos, at[i].pos);
    }
    char err[128];
    CHECK(vexpr_compile("1 + @x", 6, err, sizeof(err)) == NULL);
    CHECK_STR(err, strlen(err), "ERR syntax error in FILTER expression near: @x");
    CHECK(vexpr_compile("(1\r\n", 4, err, sizeof(err)) == NULL);
    CHECK_STR(err, strlen(err), "ERR syntax error in FILTER expression near: (1  ");
    CHECK(vexpr_compile("(.a", 3, err, 20) == NULL);
    CHECK_STR(err, strlen(err), "ERR syntax error in");
    CHECK(vexpr_compile(NULL, 0, err, sizeof(err)) == NULL);
    CHECK_STR(err, strlen(err), VEXPR_ERR_SYNTAX);
    CHECK(strncmp(VEXPR_ERR_SYNTAX, "ERR syntax error in FILTER expression near: ", 44) == 0);

    /* The expression ends at a NUL byte, like the C string Redis compiles. */
    struct vexpr *e = vexpr_compile("1\0 garbage (", 12, NULL, 0);
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(vexpr_eval(e, "{}", 2), 1);
        vexpr_free(e);
    }
    CHECK(vexpr_compile("(\0)", 3, err, sizeof(err)) == NULL);
    CHECK_STR(err, strlen(err), "ERR syntax error in FILTER expression near: (");
}

/* Deep nesting and big inputs: nothing recurses, nothing is quadratic. */
TEST(test_vexpr_deep_and_huge)
{
    enum { D = 50000 };
    char *s = malloc(4 * (size_t)D + 64);
    size_t n = 0;
    for (int i = 0; i < D; i++)
        s[n++] = '(';
    s[n++] = '1';
    for (int i = 0; i < D; i++)
        s[n++] = ')';
    s[n] = '\0';
    CHECK_EQ(ev(s, "{}"), 1);
    s[n - 1] = ' ';
    CHECK(bad(s));

    n = 0;
    for (int i = 0; i < D; i++)
        s[n++] = '!';
    memcpy(s + n, "0", 2);
    CHECK_EQ(ev(s, "{}"), 0); /* D (even) times ! over 0 */
    s[0] = ' ';
    CHECK_EQ(ev(s, "{}"), 1);

    /* 2**(1**(1**...)): a deep value stack (heap path). */
    n = 0;
    memcpy(s, "2", 1);
    n = 1;
    for (int i = 0; i < D / 4; i++) {
        memcpy(s + n, "**1", 3);
        n += 3;
    }
    memcpy(s + n, " == 2", 6);
    CHECK_EQ(ev(s, "{}"), 1);

    /* 1+1+...+1: long but shallow. */
    n = 0;
    for (int i = 0; i < D / 2; i++) {
        memcpy(s + n, "1+", 2);
        n += 2;
    }
    snprintf(s + n, 32, "0 == %d", D / 2);
    CHECK_EQ(ev(s, "{}"), 1);
    free(s);

    /* JSON: a 1M-deep array value, a huge skipped value, a key at the end. */
    enum { J = 1000000 };
    char *j = malloc(2 * (size_t)J + 256);
    n = (size_t)sprintf(j, "{\"a\": ");
    for (int i = 0; i < J; i++)
        j[n++] = '[';
    for (int i = 0; i < J; i++)
        j[n++] = ']';
    n += (size_t)sprintf(j + n, ", \"b\": 3}");
    TJ(".a", j);
    TJ(".b == 3", j);
    TJ(".a and .b == 3 and 0 in .a", j);
    j[n - 10] = ' '; /* drop one ']' of the array */
    FJ(".a", j);
    n = (size_t)sprintf(j, "{\"x\": \"");
    memset(j + n, 'y', J);
    n += J;
    n += (size_t)sprintf(j + n, "\", \"arr\": [");
    for (int i = 0; i < 100000; i++)
        n += (size_t)sprintf(j + n, "%d,", i);
    n += (size_t)sprintf(j + n, "\"end\"], \"z\": 1}");
    TJ(".z == 1 and 'end' in .arr and 99999 in .arr and 'yyyy' in .x", j);
    FJ("-1 in .arr and .z", j);
    free(j);
}

/* Many threads evaluating one compiled expression. */
struct thr_arg {
    const struct vexpr *e;
    const char **docs;
    const int *want;
    int ndocs, iters, errors;
};

static void *thr_main(void *p)
{
    struct thr_arg *a = p;
    for (int it = 0; it < a->iters; it++)
        for (int d = 0; d < a->ndocs; d++)
            if (vexpr_eval(a->e, a->docs[d], strlen(a->docs[d])) != a->want[d])
                a->errors++;
    return NULL;
}

TEST(test_vexpr_threads_share_a_filter)
{
    const char *expr = ".year > 1990 and .genre == \"action\" and ('x' in .tags or .n * 2 > 10)";
    const char *docs[] = {
        "{\"year\": 1995, \"genre\": \"action\", \"tags\": [\"a\", \"x\"], \"n\": 1}",
        "{\"year\": 1985, \"genre\": \"action\", \"tags\": [\"x\"], \"n\": 1}",
        "{\"year\": 2000, \"genre\": \"act\\u0069on\", \"tags\": [], \"n\": 9}",
        "{\"n\": 6, \"tags\": [\"\\\\y\"], \"genre\": \"action\", \"year\": 1991.5}",
        "{\"year\": 2001, \"genre\": \"action\", \"tags\": [\"y\"], \"n\": 5}",
        "not json",
    };
    int want[6];
    struct vexpr *e = vexpr_compile(expr, strlen(expr), NULL, 0);
    CHECK(e != NULL);
    if (!e)
        return;
    for (int d = 0; d < 6; d++)
        want[d] = vexpr_eval(e, docs[d], strlen(docs[d]));
    CHECK_EQ(want[0], 1);
    CHECK_EQ(want[1], 0);
    CHECK_EQ(want[2], 0);
    CHECK_EQ(want[3], 1);
    CHECK_EQ(want[4], 0);
    CHECK_EQ(want[5], 0);
    enum { NT = 4 };
    pthread_t th[NT];
    struct thr_arg args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (struct thr_arg){e, docs, want, 6, 3000, 0};
        CHECK_EQ(pthread_create(&th[i], NULL, thr_main, &args[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(args[i].errors, 0);
    }
    vexpr_free(e);
}

/* Differential test: random fully parenthesised numeric expressions over
 * fields, evaluated here directly and by vexpr. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static const double field_vals[4] = {3, -2, 0.5, 0};

/* Append a random expression of at most depth levels to buf; return its
 * value computed with the language's rules. */
static double gen(char *buf, size_t *n, size_t cap, int depth)
{
    int kind = depth <= 0 ? (int)(rnd() % 2) : (int)(rnd() % 6);
    if (kind == 0) {
        int v = (int)(rnd() % 21) - 10;
        *n += (size_t)snprintf(buf + *n, cap - *n, "%d", v);
        return v;
    }
    if (kind == 1) {
        int f = (int)(rnd() % 4);
        *n += (size_t)snprintf(buf + *n, cap - *n, ".f%d", f);
        return field_vals[f];
    }
    if (kind == 2) {
        *n += (size_t)snprintf(buf + *n, cap - *n, rnd() % 2 ? "!(" : "not (");
        double a = gen(buf, n, cap, depth - 1);
        *n += (size_t)snprintf(buf + *n, cap - *n, ")");
        return !(a != 0);
    }
    static const char *ops[] = {"+", "-", "*", "/", "%", "**", ">", ">=", "<", "<=", "==", "!=", "and", "or", "&&", "||"};
    int op = (int)(rnd() % 16);
    *n += (size_t)snprintf(buf + *n, cap - *n, "(");
    double a = gen(buf, n, cap, depth - 1);
    *n += (size_t)snprintf(buf + *n, cap - *n, ") %s (", ops[op]);
    double b = gen(buf, n, cap, depth - 1);
    *n += (size_t)snprintf(buf + *n, cap - *n, ")");
    switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return fmod(a, b);
    case 5: return pow(a, b);
    case 6: return a > b;
    case 7: return a >= b;
    case 8: return a < b;
    case 9: return a <= b;
    case 10: return a == b;
    case 11: return a != b;
    case 12: case 14: return (a != 0) && (b != 0);
    default: return (a != 0) || (b != 0);
    }
}

TEST(test_vexpr_differential_random)
{
    const char *json = "{\"f0\": 3, \"f1\": -2, \"f2\": 0.5, \"f3\": 0}";
    char buf[8192];
    int mismatches = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = 0;
        double want = gen(buf, &n, sizeof(buf), 1 + (int)(rnd() % 6));
        if (n >= sizeof(buf) - 1)
            continue;
        struct vexpr *e = vexpr_compile(buf, n, NULL, 0);
        if (!e) {
            test_fail(__FILE__, __LINE__, "did not compile: %s", buf);
            break;
        }
        int got = vexpr_eval(e, json, strlen(json));
        if (got != (want != 0) && mismatches++ < 5)
            test_fail(__FILE__, __LINE__, "%s: got %d want %d", buf, got, want != 0);
        vexpr_free(e);
    }
}

/* Fuzz: random bytes (biased to the language's characters) as expressions
 * and as JSON; nothing may crash, hang or leak. */
static void fuzz_body(void *arg)
{
    (void)arg;
    static const char alpha[] = "().!-+*/%<>=|&[]'\"\\, andortinul0123456789eE.abf_{}:";
    static const char *frags[] = {".a", ".b", " and ", " or ", " in ", "not ", "null", "==", "**",
                                  "[1,'x']", "'s'", "\"q\\\"\"", "(", ")", "-1", "2.5"};
    static const char *jfrags[] = {"{", "}", "[", "]", "\"a\"", "\"b\"", ":", ",", "1", "-2.5e3",
                                   "true", "false", "null", "\"x\\\"y\"", " ", "\"\\", "{\"a\":"};
    char ex[256], js[512];
    uint64_t seed = 0x1234567ull;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long iters = 0;
    for (;;) {
        rng_state = seed + (uint64_t)iters * 0x9e3779b97f4a7c15ull;
        rnd();
        size_t n = 0, lim = rnd() % 60;
        while (n < lim) {
            if (rnd() % 3 == 0) {
                const char *f = frags[rnd() % (sizeof(frags) / sizeof(frags[0]))];
                size_t l = strlen(f);
                if (n + l >= sizeof(ex))
                    break;
                memcpy(ex + n, f, l);
                n += l;
            } else {
                ex[n++] = rnd() % 8 ? alpha[rnd() % (sizeof(alpha) - 1)] : (char)rnd();
            }
        }
        size_t m = 0, jl = rnd() % 40;
        for (size_t k = 0; k < jl; k++) {
            const char *f = jfrags[rnd() % (sizeof(jfrags) / sizeof(jfrags[0]))];
            size_t l = strlen(f);
            if (m + l >= sizeof(js))
                break;
            memcpy(js + m, f, l);
            m += l;
        }
        if (rnd() % 4 == 0 && m > 0)
            js[rnd() % m] = (char)rnd();
        char err[64];
        struct vexpr *e = vexpr_compile(ex, n, err, sizeof(err));
        if (e) {
            int r = vexpr_eval(e, js, m);
            CHECK(r == 0 || r == 1);
            r = vexpr_eval(e, "{\"a\": 1, \"b\": [1, \"x\"]}", 24);
            CHECK(r == 0 || r == 1);
            vexpr_free(e);
        } else {
            CHECK(strncmp(err, "ERR syntax error", 16) == 0);
        }
        iters++;
        if ((iters & 255) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > 700)
                break;
        }
    }
}

TEST(test_vexpr_fuzz)
{
    char why[128];
    if (test_run_guarded(fuzz_body, NULL, 30, 1024, why, sizeof(why)) != 0)
        test_fail(__FILE__, __LINE__, "fuzz: %s", why);
}
