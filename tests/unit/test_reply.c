/* test_reply.c - unit tests for the reply encoder (src/proto/reply.c): the
 * exact bytes of every function in RESP2 and RESP3, deferred lengths,
 * muting and buffer growth, and a round trip of random nested values
 * through a small reply parser written here. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/reply.h"
#include "test.h"

/* The buffer holds exactly the C string want; then empty it. */
#define CHECK_OUT(r, want)                                  \
    do {                                                    \
        CHECK_MEM((r)->buf, (r)->len, want, sizeof(want) - 1); \
        (r)->len = 0;                                       \
    } while (0)

static void both(struct reply *r2, struct reply *r3)
{
    reply_init(r2);
    reply_init(r3);
    r3->resp = 3;
}

TEST(test_reply_simple_types)
{
    struct reply r2, r3;
    both(&r2, &r3);
    CHECK_EQ(r2.resp, 2);
    reply_status(&r2, "PONG");
    CHECK_OUT(&r2, "+PONG\r\n");
    reply_ok(&r3);
    CHECK_OUT(&r3, "+OK\r\n");
    reply_error(&r2, "ERR bad\r\nthing\n");
    CHECK_OUT(&r2, "-ERR bad  thing \r\n");
    reply_errorf(&r3, "ERR %s %d", "x", 42);
    CHECK_OUT(&r3, "-ERR x 42\r\n");
    reply_int(&r2, 0);
    reply_int(&r2, -42);
    reply_int(&r2, LLONG_MAX);
    reply_int(&r2, LLONG_MIN);
    CHECK_OUT(&r2, ":0\r\n:-42\r\n:9223372036854775807\r\n:-9223372036854775808\r\n");
    reply_int(&r3, 7);
    CHECK_OUT(&r3, ":7\r\n");
    reply_raw(&r2, "raw\r\n", 5);
    CHECK_OUT(&r2, "raw\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_bulk)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_bulk(&r2, "abc", 3);
    CHECK_OUT(&r2, "$3\r\nabc\r\n");
    reply_bulk(&r3, "", 0);
    CHECK_OUT(&r3, "$0\r\n\r\n");
    reply_bulk(&r2, "a\0\r\n", 4);
    CHECK_OUT(&r2, "$4\r\na\0\r\n\r\n");
    reply_bulk_cstr(&r3, "hello");
    CHECK_OUT(&r3, "$5\r\nhello\r\n");
    reply_bulk_ll(&r2, -1234);
    CHECK_OUT(&r2, "$5\r\n-1234\r\n");
    reply_bulk_ll(&r2, LLONG_MIN);
    CHECK_OUT(&r2, "$20\r\n-9223372036854775808\r\n");
    reply_bignum_str(&r3, "1234567890123456789012");
    CHECK_OUT(&r3, "$22\r\n1234567890123456789012\r\n");
    reply_bignum_str(&r2, "-1.5");
    CHECK_OUT(&r2, "$4\r\n-1.5\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_nulls)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_null(&r2);
    CHECK_OUT(&r2, "$-1\r\n");
    reply_null(&r3);
    CHECK_OUT(&r3, "_\r\n");
    reply_null_array(&r2);
    CHECK_OUT(&r2, "*-1\r\n");
    reply_null_array(&r3);
    CHECK_OUT(&r3, "_\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_aggregates)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_array(&r2, 3);
    CHECK_OUT(&r2, "*3\r\n");
    reply_array(&r3, 0);
    CHECK_OUT(&r3, "*0\r\n");
    /* A map is a flat array of 2n elements in RESP2. */
    reply_map(&r2, 2);
    reply_bulk(&r2, "a", 1);
    reply_int(&r2, 1);
    reply_bulk(&r2, "b", 1);
    reply_int(&r2, 2);
    CHECK_OUT(&r2, "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n");
    reply_map(&r3, 2);
    CHECK_OUT(&r3, "%2\r\n");
    reply_set(&r2, 5);
    CHECK_OUT(&r2, "*5\r\n");
    reply_set(&r3, 5);
    CHECK_OUT(&r3, "~5\r\n");
    reply_push(&r2, 3);
    CHECK_OUT(&r2, "*3\r\n");
    reply_push(&r3, 3);
    CHECK_OUT(&r3, ">3\r\n");
    reply_array(&r3, 1234567890123LL);
    CHECK_OUT(&r3, "*1234567890123\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_double)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_double(&r3, 3.5);
    CHECK_OUT(&r3, ",3.5\r\n");
    reply_double(&r2, 3.5);
    CHECK_OUT(&r2, "$3\r\n3.5\r\n");
    reply_double(&r3, -2.25);
    CHECK_OUT(&r3, ",-2.25\r\n");
    reply_double(&r3, 0.0);
    CHECK_OUT(&r3, ",0\r\n");
    reply_double(&r2, 1024);
    CHECK_OUT(&r2, "$4\r\n1024\r\n");
    reply_double(&r3, INFINITY);
    CHECK_OUT(&r3, ",inf\r\n");
    reply_double(&r3, -INFINITY);
    CHECK_OUT(&r3, ",-inf\r\n");
    reply_double(&r2, INFINITY);
    CHECK_OUT(&r2, "$3\r\ninf\r\n");
    reply_double(&r2, -INFINITY);
    CHECK_OUT(&r2, "$4\r\n-inf\r\n");
    /* Any finite double reads back exactly. */
    static const double vals[] = {0.1, 1.0 / 3.0, 1e300, -1e-300, 5e-324, 1.7976931348623157e308,
                                  123456789.123456789, -0.5};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        char text[64];
        reply_double(&r3, vals[i]);
        CHECK(r3.len > 3 && r3.buf[0] == ',' && r3.len - 3 < sizeof(text));
        memcpy(text, r3.buf + 1, r3.len - 3);
        text[r3.len - 3] = '\0';
        CHECK(r3.buf[r3.len - 2] == '\r' && r3.buf[r3.len - 1] == '\n');
        if (strtod(text, NULL) != vals[i])
            test_fail(__FILE__, __LINE__, "double %.17g encoded as \"%s\"", vals[i], text);
        r3.len = 0;
    }
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_bool)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_bool(&r3, 1);
    reply_bool(&r3, 0);
    CHECK_OUT(&r3, "#t\r\n#f\r\n");
    reply_bool(&r2, 5);
    reply_bool(&r2, 0);
    CHECK_OUT(&r2, ":1\r\n:0\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_verbatim)
{
    struct reply r2, r3;
    both(&r2, &r3);
    reply_verbatim(&r3, "Some string", 11, "txt");
    CHECK_OUT(&r3, "=15\r\ntxt:Some string\r\n");
    reply_verbatim(&r2, "Some string", 11, "txt");
    CHECK_OUT(&r2, "$11\r\nSome string\r\n");
    reply_verbatim(&r3, "", 0, "mkd");
    CHECK_OUT(&r3, "=4\r\nmkd:\r\n");
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_deferred_lengths)
{
    struct reply r2, r3;
    size_t m;
    both(&r2, &r3);
    /* Filled with a short header: the gap closes. */
    m = reply_defer(&r2);
    reply_bulk(&r2, "a", 1);
    reply_bulk(&r2, "bc", 2);
    reply_defer_array(&r2, m, 2);
    CHECK_OUT(&r2, "*2\r\n$1\r\na\r\n$2\r\nbc\r\n");
    /* Nothing after the placeholder. */
    m = reply_defer(&r3);
    reply_defer_array(&r3, m, 0);
    CHECK_OUT(&r3, "*0\r\n");
    /* After earlier output, and nested. */
    reply_int(&r2, 1);
    m = reply_defer(&r2);
    size_t inner = reply_defer(&r2);
    reply_int(&r2, 2);
    reply_defer_set(&r2, inner, 1);
    reply_int(&r2, 3);
    reply_defer_array(&r2, m, 2);
    CHECK_OUT(&r2, ":1\r\n*2\r\n*1\r\n:2\r\n:3\r\n");
    m = reply_defer(&r3);
    inner = reply_defer(&r3);
    reply_int(&r3, 2);
    reply_defer_set(&r3, inner, 1);
    reply_defer_map(&r3, m, 1);
    CHECK_OUT(&r3, "%1\r\n~1\r\n:2\r\n");
    m = reply_defer(&r2);
    reply_defer_map(&r2, m, 3);
    CHECK_OUT(&r2, "*6\r\n");
    /* Large counts, up to the widest header. */
    m = reply_defer(&r3);
    reply_int(&r3, 5);
    reply_defer_array(&r3, m, 1234567890123LL);
    CHECK_OUT(&r3, "*1234567890123\r\n:5\r\n");
    m = reply_defer(&r3);
    reply_defer_array(&r3, m, LLONG_MAX);
    CHECK_OUT(&r3, "*9223372036854775807\r\n");
    m = reply_defer(&r3);
    reply_bulk(&r3, "x", 1);
    reply_defer_map(&r3, m, 4000000000LL);
    CHECK_OUT(&r3, "%4000000000\r\n$1\r\nx\r\n");
    m = reply_defer(&r2);
    reply_defer_map(&r2, m, 4000000000LL);
    CHECK_OUT(&r2, "*8000000000\r\n");
    /* Many elements after the placeholder, across a buffer growth. */
    m = reply_defer(&r2);
    for (int i = 0; i < 10000; i++)
        reply_int(&r2, i);
    reply_defer_array(&r2, m, 10000);
    CHECK(r2.len > 16 * 1024);
    CHECK(memcmp(r2.buf, "*10000\r\n:0\r\n:1\r\n", 16) == 0);
    CHECK(memcmp(r2.buf + r2.len - 7, ":9999\r\n", 7) == 0);
    reply_free(&r2);
    reply_free(&r3);
}

TEST(test_reply_muted)
{
    struct reply r;
    reply_init(&r);
    r.muted = 1;
    reply_ok(&r);
    reply_status(&r, "x");
    reply_error(&r, "ERR x");
    reply_int(&r, 1);
    reply_bulk(&r, "a", 1);
    reply_null(&r);
    reply_array(&r, 2);
    reply_map(&r, 2);
    reply_double(&r, 1.5);
    reply_bool(&r, 1);
    reply_verbatim(&r, "a", 1, "txt");
    size_t m = reply_defer(&r);
    reply_defer_array(&r, m, 3);
    CHECK_EQ(r.len, 0);
    r.muted = 0;
    reply_ok(&r);
    CHECK_OUT(&r, "+OK\r\n");
    reply_free(&r);
}

TEST(test_reply_growth_and_consume)
{
    struct reply r;
    size_t big = 100000;
    char *s = malloc(big);
    for (size_t i = 0; i < big; i++)
        s[i] = (char)('a' + i % 26);
    reply_init(&r);
    reply_ok(&r);
    reply_bulk(&r, s, big);
    CHECK_EQ(r.len, 5 + 9 + big + 2);
    CHECK(r.cap >= r.len);
    CHECK(memcmp(r.buf + 5, "$100000\r\n", 9) == 0);
    CHECK(memcmp(r.buf + 14, s, big) == 0);
    reply_consume(&r, 5);
    CHECK(memcmp(r.buf, "$100000\r\n", 9) == 0);
    CHECK_EQ(r.len, 9 + big + 2);
    reply_consume(&r, r.len);
    CHECK_EQ(r.len, 0);
    reply_ok(&r);
    CHECK_OUT(&r, "+OK\r\n");
    /* A huge buffer is given back once drained. */
    char *huge = calloc(1, 3 * 1024 * 1024);
    reply_bulk(&r, huge, 3 * 1024 * 1024);
    reply_consume(&r, r.len);
    CHECK(r.cap <= 1024 * 1024);
    reply_reserve(&r, 100);
    CHECK(r.cap >= r.len + 100);
    free(huge);
    free(s);
    reply_free(&r);
}

/* ---- Round trip: random values -> encoder -> tiny parser -> compare ---- */

enum { V_INT, V_BULK, V_NULL, V_NULLARR, V_STATUS, V_ERROR, V_DOUBLE, V_BOOL, V_VERBATIM,
       V_ARRAY, V_MAP, V_SET, V_PUSH, V_NTYPES };

struct val {
    int type;
    long long n;         /* int, bool, element count (pairs for a map) */
    double d;
    char s[40];
    size_t slen;
    int defer;           /* aggregate written with a deferred header */
    struct val *kids;    /* n elements; 2n for a map */
};

static unsigned long long rt_rng = 88172645463325252ULL;
static unsigned long long rt_next(void)
{
    rt_rng ^= rt_rng << 13;
    rt_rng ^= rt_rng >> 7;
    rt_rng ^= rt_rng << 17;
    return rt_rng;
}

static void gen(struct val *v, int depth)
{
    memset(v, 0, sizeof(*v));
    v->type = (int)(rt_next() % (depth < 4 ? V_NTYPES : V_ARRAY));
    switch (v->type) {
    case V_INT:
        v->n = (long long)rt_next();
        break;
    case V_BOOL:
        v->n = (long long)(rt_next() & 1);
        break;
    case V_DOUBLE: {
        unsigned long long bits;
        do {
            bits = rt_next();
            memcpy(&v->d, &bits, sizeof(v->d));
        } while (isnan(v->d));
        if (rt_next() % 8 == 0)
            v->d = rt_next() & 1 ? INFINITY : -INFINITY;
        break;
    }
    case V_BULK:
    case V_VERBATIM:
    case V_STATUS:
    case V_ERROR:
        v->slen = (size_t)(rt_next() % sizeof(v->s));
        for (size_t i = 0; i < v->slen; i++) {
            unsigned char c = (unsigned char)rt_next();
            if (v->type == V_STATUS || v->type == V_ERROR)
                c = (unsigned char)(' ' + c % 95); /* no CR/LF in simple strings */
            v->s[i] = (char)c;
        }
        if (v->type == V_ERROR && v->slen == 0)
            v->s[v->slen++] = 'E';
        break;
    case V_ARRAY:
    case V_MAP:
    case V_SET:
    case V_PUSH: {
        long long cnt = (long long)(rt_next() % 5);
        size_t nk = (size_t)(v->type == V_MAP ? cnt * 2 : cnt);
        v->n = cnt;
        v->defer = (int)(rt_next() & 1);
        v->kids = nk ? calloc(nk, sizeof(struct val)) : NULL;
        for (size_t i = 0; i < nk; i++)
            gen(&v->kids[i], depth + 1);
        break;
    }
    default:
        break;
    }
}

static void val_free(struct val *v)
{
    size_t nk = (size_t)(v->type == V_MAP ? v->n * 2 : v->n);
    if (v->kids) {
        for (size_t i = 0; i < nk; i++)
            val_free(&v->kids[i]);
        free(v->kids);
    }
}

static void encode(struct reply *r, const struct val *v)
{
    char sbuf[48];
    switch (v->type) {
    case V_INT: reply_int(r, v->n); return;
    case V_BOOL: reply_bool(r, (int)v->n); return;
    case V_DOUBLE: reply_double(r, v->d); return;
    case V_BULK: reply_bulk(r, v->s, v->slen); return;
    case V_VERBATIM: reply_verbatim(r, v->s, v->slen, "txt"); return;
    case V_NULL: reply_null(r); return;
    case V_NULLARR: reply_null_array(r); return;
    case V_STATUS:
    case V_ERROR:
        memcpy(sbuf, v->s, v->slen);
        sbuf[v->slen] = '\0';
        if (v->type == V_STATUS)
            reply_status(r, sbuf);
        else
            reply_error(r, sbuf);
        return;
    default:
        break;
    }
    size_t nk = (size_t)(v->type == V_MAP ? v->n * 2 : v->n), mark = 0;
    if (v->defer) {
        if (v->type == V_PUSH) {
            reply_push(r, v->n); /* there is no deferred push */
        } else {
            mark = reply_defer(r);
        }
    } else if (v->type == V_ARRAY) {
        reply_array(r, v->n);
    } else if (v->type == V_MAP) {
        reply_map(r, v->n);
    } else if (v->type == V_SET) {
        reply_set(r, v->n);
    } else {
        reply_push(r, v->n);
    }
    for (size_t i = 0; i < nk; i++)
        encode(r, &v->kids[i]);
    if (v->defer) {
        if (v->type == V_ARRAY)
            reply_defer_array(r, mark, v->n);
        else if (v->type == V_MAP)
            reply_defer_map(r, mark, v->n);
        else if (v->type == V_SET)
            reply_defer_set(r, mark, v->n);
    }
}

/* The tiny reply parser. */
struct node {
    char t;              /* the type byte */
    long long n;         /* number / count / bulk length (-1: null) */
    const char *s;       /* line or bulk payload */
    size_t slen;
    struct node *kids;
    size_t nkids;
};

static int read_line(const char *b, size_t len, size_t *pos, const char **s, size_t *slen)
{
    size_t i = *pos;
    while (i + 1 < len && !(b[i] == '\r' && b[i + 1] == '\n'))
        i++;
    if (i + 1 >= len)
        return 0;
    *s = b + *pos;
    *slen = i - *pos;
    *pos = i + 2;
    return 1;
}

static int line_ll(const char *s, size_t n, long long *out)
{
    char tmp[32];
    char *end;
    if (n == 0 || n >= sizeof(tmp))
        return 0;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    *out = strtoll(tmp, &end, 10);
    return *end == '\0';
}

static void node_free(struct node *nd)
{
    for (size_t i = 0; i < nd->nkids; i++)
        node_free(&nd->kids[i]);
    free(nd->kids);
}

static int parse_reply(const char *b, size_t len, size_t *pos, struct node *nd)
{
    const char *line;
    size_t ll;
    memset(nd, 0, sizeof(*nd));
    if (*pos >= len)
        return 0;
    nd->t = b[(*pos)++];
    if (!read_line(b, len, pos, &line, &ll))
        return 0;
    switch (nd->t) {
    case '+': case '-': case ',': case '#': case '_':
        nd->s = line;
        nd->slen = ll;
        return nd->t != '_' || ll == 0;
    case ':':
        return line_ll(line, ll, &nd->n);
    case '$': case '=':
        if (!line_ll(line, ll, &nd->n))
            return 0;
        if (nd->n < 0)
            return nd->t == '$' && nd->n == -1;
        if ((size_t)nd->n + 2 > len - *pos)
            return 0;
        nd->s = b + *pos;
        nd->slen = (size_t)nd->n;
        *pos += (size_t)nd->n;
        if (b[*pos] != '\r' || b[*pos + 1] != '\n')
            return 0;
        *pos += 2;
        return 1;
    case '*': case '%': case '~': case '>':
        if (!line_ll(line, ll, &nd->n))
            return 0;
        if (nd->n < 0)
            return nd->t == '*' && nd->n == -1;
        nd->nkids = (size_t)(nd->t == '%' ? nd->n * 2 : nd->n);
        if (nd->nkids > 1000)
            return 0;
        nd->kids = calloc(nd->nkids ? nd->nkids : 1, sizeof(struct node));
        for (size_t i = 0; i < nd->nkids; i++)
            if (!parse_reply(b, len, pos, &nd->kids[i])) {
                nd->nkids = i + 1;
                return 0;
            }
        return 1;
    default:
        return 0;
    }
}

static int text_is_double(const char *s, size_t n, double d)
{
    char tmp[64];
    if (n == 0 || n >= sizeof(tmp))
        return 0;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    if (isinf(d))
        return strcmp(tmp, d > 0 ? "inf" : "-inf") == 0;
    char *end;
    double x = strtod(tmp, &end);
    return *end == '\0' && x == d;
}

/* Does the parsed node match the value as protocol resp encodes it? */
static int matches(const struct val *v, const struct node *nd, int resp)
{
    int r3 = resp == 3;
    switch (v->type) {
    case V_INT:
        return nd->t == ':' && nd->n == v->n;
    case V_BOOL:
        if (r3)
            return nd->t == '#' && nd->slen == 1 && nd->s[0] == (v->n ? 't' : 'f');
        return nd->t == ':' && nd->n == v->n;
    case V_DOUBLE:
        if (r3)
            return nd->t == ',' && text_is_double(nd->s, nd->slen, v->d);
        return nd->t == '$' && nd->n >= 0 && text_is_double(nd->s, nd->slen, v->d);
    case V_BULK:
        return nd->t == '$' && nd->n >= 0 && nd->slen == v->slen && memcmp(nd->s, v->s, v->slen) == 0;
    case V_VERBATIM:
        if (r3)
            return nd->t == '=' && nd->slen == v->slen + 4 && memcmp(nd->s, "txt:", 4) == 0 &&
                   memcmp(nd->s + 4, v->s, v->slen) == 0;
        return nd->t == '$' && nd->slen == v->slen && memcmp(nd->s, v->s, v->slen) == 0;
    case V_STATUS:
    case V_ERROR:
        return nd->t == (v->type == V_STATUS ? '+' : '-') && nd->slen == v->slen &&
               memcmp(nd->s, v->s, v->slen) == 0;
    case V_NULL:
        return r3 ? nd->t == '_' : (nd->t == '$' && nd->n == -1);
    case V_NULLARR:
        return r3 ? nd->t == '_' : (nd->t == '*' && nd->n == -1);
    default:
        break;
    }
    char want = '*';
    if (r3)
        want = v->type == V_MAP ? '%' : v->type == V_SET ? '~' : v->type == V_PUSH ? '>' : '*';
    size_t nk = (size_t)(v->type == V_MAP ? v->n * 2 : v->n);
    if (nd->t != want || nd->nkids != nk)
        return 0;
    for (size_t i = 0; i < nk; i++)
        if (!matches(&v->kids[i], &nd->kids[i], resp))
            return 0;
    return 1;
}

TEST(test_reply_round_trip_random_nested)
{
    int bad = 0;
    for (int iter = 0; iter < 3000 && bad < 5; iter++) {
        struct val v;
        struct reply r;
        struct node pre = {0}, nd = {0}, post = {0};
        int resp = iter % 2 ? 3 : 2;
        size_t pos = 0;
        gen(&v, 0);
        reply_init(&r);
        r.resp = resp;
        reply_int(&r, iter); /* something before, so marks are not 0 */
        encode(&r, &v);
        reply_status(&r, "END");
        int ok = parse_reply(r.buf, r.len, &pos, &pre) && pre.t == ':' && pre.n == iter;
        ok = ok && parse_reply(r.buf, r.len, &pos, &nd);
        ok = ok && matches(&v, &nd, resp);
        ok = ok && parse_reply(r.buf, r.len, &pos, &post) && post.t == '+' && post.slen == 3;
        node_free(&pre);
        node_free(&nd);
        node_free(&post);
        ok = ok && pos == r.len;
        if (!ok) {
            test_fail(__FILE__, __LINE__, "iteration %d (RESP%d): value does not round-trip", iter, resp);
            test_fail_mem(__FILE__, __LINE__, "encoded", r.buf, r.len, "", 0);
            bad++;
        }
        reply_free(&r);
        val_free(&v);
    }
}
