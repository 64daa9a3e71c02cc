/* test_resp.c - unit tests for the RESP request parser (src/proto/resp.c):
 * multibulk and inline commands, resumable parsing over growing prefixes,
 * pipelines, every error code, the unauthenticated limits, empty
 * multibulks, and reads past the end of the buffer (guard page). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/resp.h"
#include "test.h"

/* Parse a C-string-free byte buffer (copied, since inline parsing writes
 * into it) with a fresh parser. */
struct parsed {
    int rc;
    int argc;
    size_t consumed;
    char bad_char;
    char *buf;
    struct resp_arg argv[64];
};

static void parse_once(struct parsed *r, const char *req, size_t len, int auth, long long max_bulk)
{
    struct resp_parser p;
    resp_parser_init(&p);
    p.authenticated = auth;
    if (max_bulk)
        p.max_bulk = max_bulk;
    r->buf = malloc(len ? len : 1);
    memcpy(r->buf, req, len);
    r->rc = resp_parse(&p, r->buf, len);
    r->argc = p.argc;
    r->consumed = p.consumed;
    r->bad_char = p.bad_char;
    for (int i = 0; i < p.argc && i < 64; i++)
        r->argv[i] = p.argv[i];
    resp_parser_free(&p);
}

#define PARSE(r, lit) parse_once((r), (lit), sizeof(lit) - 1, 1, 0)

static void parsed_free(struct parsed *r)
{
    free(r->buf);
    r->buf = NULL;
}

#define CHECK_ARG(r, i, lit) CHECK_MEM((r)->buf + (r)->argv[i].off, (r)->argv[i].len, lit, sizeof(lit) - 1)

TEST(test_resp_whole_command)
{
    struct parsed r;
    static const char req[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nhello\r\n";
    PARSE(&r, req);
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 3);
    CHECK_EQ(r.consumed, sizeof(req) - 1);
    CHECK_ARG(&r, 0, "SET");
    CHECK_ARG(&r, 1, "key");
    CHECK_ARG(&r, 2, "hello");
    parsed_free(&r);
}

TEST(test_resp_binary_and_empty_bulks)
{
    struct parsed r;
    static const char req[] = "*3\r\n$4\r\nECHO\r\n$0\r\n\r\n$6\r\n\r\n\0\xff\r\n\r\n";
    PARSE(&r, req);
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 3);
    CHECK_EQ(r.consumed, sizeof(req) - 1);
    CHECK_ARG(&r, 1, "");
    CHECK_ARG(&r, 2, "\r\n\0\xff\r\n");
    parsed_free(&r);
}

TEST(test_resp_many_args_grow_argv)
{
    char req[8192];
    size_t n = (size_t)snprintf(req, sizeof(req), "*100\r\n");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(req + n, sizeof(req) - n, "$%d\r\n%0*d\r\n", i < 10 ? 1 : 2, i < 10 ? 1 : 2, i);
    struct resp_parser p;
    resp_parser_init(&p);
    p.authenticated = 1;
    CHECK_EQ(resp_parse(&p, req, n), RESP_OK);
    CHECK_EQ(p.argc, 100);
    CHECK_EQ(p.consumed, n);
    for (int i = 0; i < p.argc && i < 100; i++) {
        char want[8];
        int wl = snprintf(want, sizeof(want), "%d", i);
        CHECK_MEM(req + p.argv[i].off, p.argv[i].len, want, (size_t)wl);
    }
    resp_parser_free(&p);
}

static const char *const valid_reqs[] = {
    "*1\r\n$4\r\nPING\r\n",
    "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
    "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n",
    "*2\r\n$3\r\nGET\r\n$12\r\n0123456789ab\r\n",
    "PING\r\n",
    "PING\n",
    "SET k v\r\n",
    "SET \"a b\" 'c d'\r\n",
    "ECHO \"\\x41\\n\"\r\n",
};

TEST(test_resp_every_prefix_incomplete)
{
    for (size_t q = 0; q < sizeof(valid_reqs) / sizeof(valid_reqs[0]); q++) {
        size_t len = strlen(valid_reqs[q]);
        for (size_t k = 0; k < len; k++) {
            struct parsed r;
            parse_once(&r, valid_reqs[q], k, 1, 0);
            if (r.rc != RESP_INCOMPLETE)
                test_fail(__FILE__, __LINE__, "request %zu, prefix %zu/%zu: rc %d, want INCOMPLETE",
                          q, k, len, r.rc);
            parsed_free(&r);
        }
        struct parsed r;
        parse_once(&r, valid_reqs[q], len, 1, 0);
        CHECK_EQ(r.rc, RESP_OK);
        CHECK_EQ(r.consumed, len);
        parsed_free(&r);
    }
}

TEST(test_resp_byte_at_a_time_resumes)
{
    for (size_t q = 0; q < sizeof(valid_reqs) / sizeof(valid_reqs[0]); q++) {
        size_t len = strlen(valid_reqs[q]);
        struct parsed whole;
        struct resp_parser p;
        char *buf = malloc(len);
        int rc = RESP_INCOMPLETE;
        size_t k;
        parse_once(&whole, valid_reqs[q], len, 1, 0);
        memcpy(buf, valid_reqs[q], len);
        resp_parser_init(&p);
        p.authenticated = 1;
        for (k = 1; k <= len; k++) {
            rc = resp_parse(&p, buf, k);
            if (rc != RESP_INCOMPLETE)
                break;
            /* Asking again with no new byte changes nothing. */
            rc = resp_parse(&p, buf, k);
            if (rc != RESP_INCOMPLETE)
                break;
        }
        CHECK_EQ(rc, RESP_OK);
        CHECK_EQ(k, len);
        CHECK_EQ(p.consumed, len);
        CHECK_EQ(p.argc, whole.argc);
        for (int i = 0; i < p.argc && i < whole.argc; i++)
            CHECK_MEM(buf + p.argv[i].off, p.argv[i].len, whole.buf + whole.argv[i].off,
                      whole.argv[i].len);
        resp_parser_free(&p);
        parsed_free(&whole);
        free(buf);
    }
}

TEST(test_resp_incomplete_reports_need)
{
    static char req[] = "*2\r\n$3\r\nGET\r\n$5\r\nhel";
    struct resp_parser p;
    resp_parser_init(&p);
    p.authenticated = 1;
    CHECK_EQ(resp_parse(&p, req, sizeof(req) - 1), RESP_INCOMPLETE);
    CHECK_EQ(p.need, 13 + 4 + 5 + 2);
    resp_parser_free(&p);
}

/* Parse a buffer holding several commands the way a connection does. */
static int parse_all(char *buf, size_t len, int auth, char out[][32], int max_out, int *rc_end)
{
    struct resp_parser p;
    size_t pos = 0;
    int n = 0;
    resp_parser_init(&p);
    p.authenticated = auth;
    *rc_end = RESP_INCOMPLETE;
    while (pos < len) {
        int rc = resp_parse(&p, buf + pos, len - pos);
        if (rc != RESP_OK) {
            *rc_end = rc;
            break;
        }
        /* Record the command as its arguments joined by '|'. */
        if (n < max_out) {
            size_t o = 0;
            out[n][0] = '\0';
            for (int i = 0; i < p.argc; i++) {
                o += (size_t)snprintf(out[n] + o, 32 - o, "%s%.*s", i ? "|" : "",
                                      (int)p.argv[i].len, buf + pos + p.argv[i].off);
                if (o >= 32)
                    break;
            }
        }
        n++;
        pos += p.consumed;
        resp_parser_reset(&p);
    }
    if (pos == len)
        *rc_end = RESP_OK;
    resp_parser_free(&p);
    return n;
}

TEST(test_resp_pipeline)
{
    char req[] = "*2\r\n$3\r\nGET\r\n$1\r\na\r\n"
                 "*1\r\n$4\r\nPING\r\n"
                 "ECHO  hi \r\n"
                 "*0\r\n"
                 "*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$2\r\nxy\r\n"
                 "\r\n"
                 "QUIT\n";
    char out[16][32];
    int rc;
    int n = parse_all(req, sizeof(req) - 1, 1, out, 16, &rc);
    CHECK_EQ(rc, RESP_OK);
    CHECK_EQ(n, 7);
    if (n == 7) {
        CHECK_STR(out[0], strlen(out[0]), "GET|a");
        CHECK_STR(out[1], strlen(out[1]), "PING");
        CHECK_STR(out[2], strlen(out[2]), "ECHO|hi");
        CHECK_STR(out[3], strlen(out[3]), "");
        CHECK_STR(out[4], strlen(out[4]), "SET|b|xy");
        CHECK_STR(out[5], strlen(out[5]), "");
        CHECK_STR(out[6], strlen(out[6]), "QUIT");
    }
    /* A partial command at the end waits. */
    char req2[] = "*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI";
    n = parse_all(req2, sizeof(req2) - 1, 1, out, 16, &rc);
    CHECK_EQ(n, 1);
    CHECK_EQ(rc, RESP_INCOMPLETE);
}

TEST(test_resp_inline_words)
{
    struct parsed r;
    PARSE(&r, "  SET\tk  v \r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 3);
    CHECK_EQ(r.consumed, 13);
    CHECK_ARG(&r, 0, "SET");
    CHECK_ARG(&r, 1, "k");
    CHECK_ARG(&r, 2, "v");
    parsed_free(&r);
    PARSE(&r, "PING\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 1);
    CHECK_EQ(r.consumed, 5);
    parsed_free(&r);
    /* Empty and blank lines are empty commands. */
    PARSE(&r, "\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 0);
    CHECK_EQ(r.consumed, 2);
    parsed_free(&r);
    PARSE(&r, "   \t \n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 0);
    CHECK_EQ(r.consumed, 6);
    parsed_free(&r);
}

TEST(test_resp_inline_quotes)
{
    struct parsed r;
    PARSE(&r, "SET \"a key\" 'it''s'\r\n");
    CHECK_EQ(r.rc, RESP_E_UNBALANCED); /* a quote must be followed by a space */
    parsed_free(&r);
    PARSE(&r, "SET \"a key\" 'a b' \"\" ''\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 5);
    CHECK_ARG(&r, 0, "SET");
    CHECK_ARG(&r, 1, "a key");
    CHECK_ARG(&r, 2, "a b");
    CHECK_ARG(&r, 3, "");
    CHECK_ARG(&r, 4, "");
    parsed_free(&r);
    /* A quote inside a word opens a quoted part of the same word. */
    PARSE(&r, "ab\"c d\"\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 1);
    CHECK_ARG(&r, 0, "abc d");
    parsed_free(&r);
    /* A closing quote at the end of the line needs nothing after it. */
    PARSE(&r, "GET \"k\"\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 2);
    CHECK_ARG(&r, 1, "k");
    parsed_free(&r);
}

TEST(test_resp_inline_escapes)
{
    struct parsed r;
    PARSE(&r, "ECHO \"\\x41\\x4a\\x7e\\n\\r\\t\\b\\a\\\\\\\"\\q\" x\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 3);
    CHECK_ARG(&r, 1, "AJ~\n\r\t\b\a\\\"q");
    CHECK_ARG(&r, 2, "x");
    parsed_free(&r);
    /* \x needs two hex digits; otherwise the x is just escaped. */
    PARSE(&r, "\"\\xZZ\" \"\\x4\"\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 2);
    CHECK_ARG(&r, 0, "xZZ");
    CHECK_ARG(&r, 1, "x4");
    parsed_free(&r);
    PARSE(&r, "\"\\x00\\xff\"\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 1);
    CHECK_ARG(&r, 0, "\0\xff");
    parsed_free(&r);
    /* Single quotes: only \' is an escape. */
    PARSE(&r, "'it\\'s' 'a\\nb'\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 2);
    CHECK_ARG(&r, 0, "it's");
    CHECK_ARG(&r, 1, "a\\nb");
    parsed_free(&r);
    /* Outside quotes a backslash is an ordinary byte. */
    PARSE(&r, "a\\x41\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 1);
    CHECK_ARG(&r, 0, "a\\x41");
    parsed_free(&r);
}

TEST(test_resp_inline_unbalanced)
{
    static const char *const bad[] = {
        "SET \"abc\r\n", "SET 'abc\r\n", "\"\r\n", "'\n", "ECHO \"a\"b\r\n",
        "ECHO 'a'b\r\n", "ECHO \"abc\\\"\r\n", "ECHO \"\\\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct parsed r;
        parse_once(&r, bad[i], strlen(bad[i]), 1, 0);
        if (r.rc != RESP_E_UNBALANCED)
            test_fail(__FILE__, __LINE__, "case %zu: rc %d, want RESP_E_UNBALANCED", i, r.rc);
        parsed_free(&r);
    }
    CHECK(strcmp(resp_strerror(RESP_E_UNBALANCED), "unbalanced quotes in request") == 0);
}

/* An inline line with a NUL byte must still parse in bounded time. */
static void nul_body(void *arg)
{
    const char *req = arg;
    size_t len = strlen(req) + strlen(req + strlen(req) + 1) + 1;
    struct parsed r;
    parse_once(&r, req, len, 1, 0);
    CHECK(r.rc == RESP_OK || r.rc < 0);
    if (r.rc == RESP_OK) {
        CHECK_EQ(r.consumed, len);
        CHECK(r.argc <= 3);
        if (r.argc > 0 && strcmp(req, "GET k") == 0)
            CHECK_ARG(&r, 0, "GET");
    }
    parsed_free(&r);
}

TEST(test_resp_inline_nul_byte_terminates)
{
    static char with_word[] = "GET k\0v\r\n";
    static char bare[] = "\0\n";
    char why[128];
    if (test_run_guarded(nul_body, with_word, 5, 256, why, sizeof(why)))
        test_fail(__FILE__, __LINE__, "inline \"GET k\\0v\\r\\n\": %s", why);
    if (test_run_guarded(nul_body, bare, 5, 256, why, sizeof(why)))
        test_fail(__FILE__, __LINE__, "inline \"\\0\\n\": %s", why);
}

TEST(test_resp_error_mbulk_len)
{
    static const char *const bad[] = {
        "*abc\r\n", "*\r\n", "*1x\r\n", "* 1\r\n", "*-\r\n", "*99999999999999999999\r\n",
        "*2147483648\r\n", /* over INT_MAX, as Redis */
        /* Past LLONG_MAX: must not wrap to a negative (= empty) count. */
        "*9223372036854775808\r\n", "*9999999999999999999\r\n",
        "*18446744073709551616\r\n", "*-9223372036854775809\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct parsed r;
        parse_once(&r, bad[i], strlen(bad[i]), 1, 0);
        if (r.rc != RESP_E_MBULK_LEN)
            test_fail(__FILE__, __LINE__, "\"%.*s\": rc %d, want RESP_E_MBULK_LEN",
                      (int)strlen(bad[i]) - 2, bad[i], r.rc);
        parsed_free(&r);
    }
    struct parsed r;
    PARSE(&r, "*1048576\r\n");
    CHECK_EQ(r.rc, RESP_INCOMPLETE); /* a large count is fine when authenticated */
    parsed_free(&r);
    CHECK(strcmp(resp_strerror(RESP_E_MBULK_LEN), "invalid multibulk length") == 0);
}

/* A count line that never ends: refused once past RESP_INLINE_MAX, as
 * "too big ... count string" (Redis) or, since no count has that many
 * digits, as an invalid length as soon as that is certain. */
TEST(test_resp_error_mbulk_count_too_big)
{
    size_t len = RESP_INLINE_MAX + 10;
    char *req = malloc(len);
    req[0] = '*';
    memset(req + 1, '1', len - 1);
    struct parsed r;
    parse_once(&r, req, len, 1, 0);
    CHECK(r.rc == RESP_E_MBULK_COUNT_TOO_BIG || r.rc == RESP_E_MBULK_LEN);
    parsed_free(&r);
    free(req);
    CHECK(strcmp(resp_strerror(RESP_E_MBULK_COUNT_TOO_BIG), "too big mbulk count string") == 0);
}

TEST(test_resp_error_bulk_count_too_big)
{
    size_t len = 4 + RESP_INLINE_MAX + 10;
    char *req = malloc(len);
    memcpy(req, "*1\r\n$", 5);
    memset(req + 5, '1', len - 5);
    struct parsed r;
    parse_once(&r, req, len, 1, 0);
    CHECK(r.rc == RESP_E_BULK_COUNT_TOO_BIG || r.rc == RESP_E_BULK_LEN);
    parsed_free(&r);
    free(req);
    CHECK(strcmp(resp_strerror(RESP_E_BULK_COUNT_TOO_BIG), "too big bulk count string") == 0);
}

TEST(test_resp_error_bulk_len)
{
    static const char *const bad[] = {
        "*1\r\n$abc\r\n", "*1\r\n$\r\n", "*1\r\n$-1\r\n", "*1\r\n$-5\r\n", "*1\r\n$1x\r\n",
        "*2\r\n$3\r\nGET\r\n$99999999999999999999\r\n",
        "*1\r\n$9223372036854775808\r\n", "*1\r\n$18446744073709551615\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct parsed r;
        parse_once(&r, bad[i], strlen(bad[i]), 1, 0);
        if (r.rc != RESP_E_BULK_LEN)
            test_fail(__FILE__, __LINE__, "case %zu: rc %d, want RESP_E_BULK_LEN", i, r.rc);
        parsed_free(&r);
    }
    /* Against max_bulk. */
    struct parsed r;
    parse_once(&r, "*1\r\n$101\r\n", 10, 1, 100);
    CHECK_EQ(r.rc, RESP_E_BULK_LEN);
    parsed_free(&r);
    parse_once(&r, "*1\r\n$100\r\n", 10, 1, 100);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    /* Default limit: 512 MB. */
    PARSE(&r, "*1\r\n$536870913\r\n");
    CHECK_EQ(r.rc, RESP_E_BULK_LEN);
    parsed_free(&r);
    PARSE(&r, "*1\r\n$536870912\r\n");
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    CHECK(strcmp(resp_strerror(RESP_E_BULK_LEN), "invalid bulk length") == 0);
}

TEST(test_resp_error_expected_dollar)
{
    struct parsed r;
    PARSE(&r, "*1\r\n:5\r\n");
    CHECK_EQ(r.rc, RESP_E_EXPECTED_DOLLAR);
    CHECK_EQ(r.bad_char, ':');
    parsed_free(&r);
    PARSE(&r, "*2\r\n$3\r\nGET\r\nfoo\r\n");
    CHECK_EQ(r.rc, RESP_E_EXPECTED_DOLLAR);
    CHECK_EQ(r.bad_char, 'f');
    parsed_free(&r);
    CHECK(strstr(resp_strerror(RESP_E_EXPECTED_DOLLAR), "expected '$'") != NULL);
}

TEST(test_resp_unauthenticated_limits)
{
    struct parsed r;
    parse_once(&r, "*11\r\n", 5, 0, 0);
    CHECK_EQ(r.rc, RESP_E_UNAUTH_MBULK);
    parsed_free(&r);
    parse_once(&r, "*10\r\n", 5, 0, 0);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    parse_once(&r, "*11\r\n", 5, 1, 0);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    parse_once(&r, "*1\r\n$16385\r\n", 12, 0, 0);
    CHECK_EQ(r.rc, RESP_E_UNAUTH_BULK);
    parsed_free(&r);
    parse_once(&r, "*1\r\n$16384\r\n", 12, 0, 0);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    parse_once(&r, "*1\r\n$16385\r\n", 12, 1, 0);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    /* Within the limits, an unauthenticated AUTH parses. */
    parse_once(&r, "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n", 22, 0, 0);
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 2);
    parsed_free(&r);
    CHECK(strcmp(resp_strerror(RESP_E_UNAUTH_MBULK), "unauthenticated multibulk length") == 0);
    CHECK(strcmp(resp_strerror(RESP_E_UNAUTH_BULK), "unauthenticated bulk length") == 0);
}

TEST(test_resp_inline_too_big)
{
    char *req = malloc(RESP_INLINE_MAX + 2);
    memset(req, 'a', RESP_INLINE_MAX + 2);
    struct parsed r;
    parse_once(&r, req, RESP_INLINE_MAX + 1, 1, 0);
    CHECK_EQ(r.rc, RESP_E_INLINE_TOO_BIG);
    parsed_free(&r);
    parse_once(&r, req, RESP_INLINE_MAX, 1, 0);
    CHECK_EQ(r.rc, RESP_INCOMPLETE);
    parsed_free(&r);
    free(req);
    CHECK(strcmp(resp_strerror(RESP_E_INLINE_TOO_BIG), "too big inline request") == 0);
    CHECK(strcmp(resp_strerror(12345), "unknown error") == 0);
}

TEST(test_resp_empty_multibulk)
{
    struct parsed r;
    PARSE(&r, "*0\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 0);
    CHECK_EQ(r.consumed, 4);
    parsed_free(&r);
    PARSE(&r, "*-1\r\n*1\r\n$4\r\nPING\r\n");
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.argc, 0);
    CHECK_EQ(r.consumed, 5);
    parsed_free(&r);
    /* Even unauthenticated. */
    parse_once(&r, "*0\r\n", 4, 0, 0);
    CHECK_EQ(r.rc, RESP_OK);
    CHECK_EQ(r.consumed, 4);
    parsed_free(&r);
}

/* Guard page: every prefix of each request is placed so that its last
 * byte is the last byte before a PROT_NONE page; a read past len faults. */
static const char *const guard_reqs[] = {
    "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
    "*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
    "SET \"a b\" 'c\\'d' \"\\x41\\x4\" x\r\n",
    "ECHO \"\\x4",
    "ECHO \"\\",
    "ECHO 'a\\",
    "ECHO \"a\"",
    "*1\r\n:1\r\n",
    "*1\r\n$abc\r\n",
    "*-1\r\n",
    "   \r\n",
};

static void guard_body(void *arg)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    (void)arg;
    CHECK(map != MAP_FAILED);
    if (map == MAP_FAILED)
        return;
    CHECK(mprotect(map + pg, (size_t)pg, PROT_NONE) == 0);
    char *end = map + pg;
    for (size_t q = 0; q < sizeof(guard_reqs) / sizeof(guard_reqs[0]); q++) {
        size_t len = strlen(guard_reqs[q]);
        /* Each prefix on its own, fresh parser. */
        for (size_t k = 1; k <= len; k++) {
            struct resp_parser p;
            resp_parser_init(&p);
            p.authenticated = q & 1;
            memcpy(end - k, guard_reqs[q], k);
            (void)resp_parse(&p, end - k, k);
            resp_parser_free(&p);
        }
        /* The whole request at the end, fed byte by byte to one parser. */
        struct resp_parser p;
        resp_parser_init(&p);
        p.authenticated = 1;
        memcpy(end - len, guard_reqs[q], len);
        for (size_t k = 1; k <= len; k++)
            if (resp_parse(&p, end - len, k) != RESP_INCOMPLETE)
                break;
        resp_parser_free(&p);
    }
    munmap(map, (size_t)pg * 2);
}

TEST(test_resp_guard_page_no_overread)
{
    char why[128];
    if (test_run_guarded(guard_body, NULL, 10, 256, why, sizeof(why)))
        test_fail(__FILE__, __LINE__, "guard page run: %s", why);
}

TEST(test_resp_reset_between_commands)
{
    /* After a partial command, reset forgets it: the next buffer parses
     * from scratch. */
    char a[] = "*2\r\n$3\r\nGET\r\n$5\r\nab";
    char b[] = "*1\r\n$4\r\nPING\r\n";
    struct resp_parser p;
    resp_parser_init(&p);
    p.authenticated = 1;
    CHECK_EQ(resp_parse(&p, a, sizeof(a) - 1), RESP_INCOMPLETE);
    resp_parser_reset(&p);
    CHECK_EQ(resp_parse(&p, b, sizeof(b) - 1), RESP_OK);
    CHECK_EQ(p.argc, 1);
    CHECK_EQ(p.consumed, sizeof(b) - 1);
    resp_parser_free(&p);
}
