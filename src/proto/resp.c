/* resp.c - see resp.h.  Lengths are parsed with a hand-written loop rather
 * than strtol: on pipelined GETs length parsing is a fifth of the work. */
#include "resp.h"

#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

void resp_parser_init(struct resp_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->argv_cap = 16;
    p->argv = hk_malloc(sizeof(*p->argv) * (size_t)p->argv_cap);
    p->bulk_len = -1;
    p->max_bulk = 512LL * 1024 * 1024;
}

void resp_parser_free(struct resp_parser *p)
{
    hk_free(p->argv);
    p->argv = NULL;
}

void resp_parser_shrink(struct resp_parser *p, int cap)
{
    if (p->argc == 0 && p->argv_cap > cap) {
        p->argv_cap = cap;
        p->argv = hk_realloc(p->argv, sizeof(*p->argv) * (size_t)cap);
    }
}

void resp_parser_reset(struct resp_parser *p)
{
    p->argc = 0;
    p->in_mbulk = 0;
    p->mb_left = 0;
    p->bulk_len = -1;
    p->pos = 0;
    p->need = 0;
    p->consumed = 0;
}

static void push_arg(struct resp_parser *p, size_t off, size_t len)
{
    if (p->argc == p->argv_cap) {
        p->argv_cap *= 2;
        p->argv = hk_realloc(p->argv, sizeof(*p->argv) * (size_t)p->argv_cap);
    }
    p->argv[p->argc].off = off;
    p->argv[p->argc].len = len;
    p->argc++;
}

/* Split an inline line in place: whitespace-separated words, "double quoted"
 * with \n \r \t \b \a \\ \" \xHH escapes, 'single quoted' with \' only. A
 * closing quote must be followed by a space or the end. */
static int split_inline(struct resp_parser *p, char *buf, size_t start, size_t end)
{
    size_t i = start;
    while (1) {
        while (i < end && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\v' || buf[i] == '\f'))
            i++;
        /* A NUL ends the line, as it ends the C string Redis splits. */
        if (i >= end || buf[i] == '\0')
            return 0;
        size_t w = i, arg = i;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (i >= end)
                    return -1;
                if (buf[i] == '\\' && i + 3 < end && buf[i + 1] == 'x' &&
                    strchr("0123456789abcdefABCDEF", buf[i + 2]) && buf[i + 2] &&
                    strchr("0123456789abcdefABCDEF", buf[i + 3]) && buf[i + 3]) {
                    char hx[3] = {buf[i + 2], buf[i + 3], 0};
                    buf[w++] = (char)strtol(hx, NULL, 16);
                    i += 4;
                } else if (buf[i] == '\\' && i + 1 < end) {
                    char c;
                    i++;
                    switch (buf[i]) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = buf[i]; break;
                    }
                    buf[w++] = c;
                    i++;
                } else if (buf[i] == '"') {
                    if (i + 1 < end && !(buf[i + 1] == ' ' || buf[i + 1] == '\t' || buf[i + 1] == '\n' || buf[i + 1] == '\r'))
                        return -1;
                    i++;
                    done = 1;
                } else {
                    buf[w++] = buf[i++];
                }
            } else if (insq) {
                if (i >= end)
                    return -1;
                if (buf[i] == '\\' && i + 1 < end && buf[i + 1] == '\'') {
                    buf[w++] = '\'';
                    i += 2;
                } else if (buf[i] == '\'') {
                    if (i + 1 < end && !(buf[i + 1] == ' ' || buf[i + 1] == '\t' || buf[i + 1] == '\n' || buf[i + 1] == '\r'))
                        return -1;
                    i++;
                    done = 1;
                } else {
                    buf[w++] = buf[i++];
                }
            } else {
                if (i >= end) {
                    done = 1;
                    break;
                }
                switch (buf[i]) {
                case ' ': case '\n': case '\r': case '\t': case '\0':
                    done = 1;
                    break;
                case '"':
                    inq = 1;
                    i++;
                    break;
                case '\'':
                    insq = 1;
                    i++;
                    break;
                default:
                    buf[w++] = buf[i++];
                    break;
                }
            }
        }
        push_arg(p, arg, w - arg);
    }
}

static int parse_inline(struct resp_parser *p, char *buf, size_t len)
{
    char *nl = memchr(buf, '\n', len);
    size_t end;
    if (!nl) {
        if (len > RESP_INLINE_MAX)
            return RESP_E_INLINE_TOO_BIG;
        return RESP_INCOMPLETE;
    }
    end = (size_t)(nl - buf);
    p->consumed = end + 1;
    if (end > 0 && buf[end - 1] == '\r')
        end--;
    p->argc = 0;
    if (split_inline(p, buf, 0, end) < 0)
        return RESP_E_UNBALANCED;
    return RESP_OK;
}

/* Parse "<digits>\r\n" (with an optional '-') starting at buf[pos],
 * stopping at the '\r'.  Returns 1 with *out and *next set (past the
 * "\r\n"), 0 if the line is not complete yet, -1 if malformed (a
 * non-digit before '\r', or too long).  No memchr and no strtol: this is
 * the hottest loop of a pipelined GET. */
static inline int header_num(const char *buf, size_t len, size_t pos, long long *out, size_t *next)
{
    size_t i = pos;
    int neg = 0, bad = 0;
    unsigned long long v = 0;
    if (i < len && buf[i] == '-') {
        neg = 1;
        i++;
    }
    size_t digits_start = i;
    while (i < len) {
        unsigned char ch = (unsigned char)buf[i];
        if ((unsigned)(ch - '0') <= 9u) {
            if (i - digits_start >= 19)
                bad = 1; /* too many digits: invalid, once the line ends */
            else
                v = v * 10 + (ch - '0');
            i++;
            continue;
        }
        if (ch != '\r') {
            /* Garbage: like Redis, judge the line only once it is complete
             * (a missing CR within the limit is "too big ... string"). */
            const char *cr = memchr(buf + i, '\r', len - i);
            if (!cr)
                return 0;
            i = (size_t)(cr - buf);
            bad = 1;
        }
        if (i + 1 >= len)
            return 0;
        /* Canonical decimal only, as Redis's string2ll: no leading zeros,
         * no "-0", and nothing that does not fit (the caller's limits are
         * far below 2^62). */
        if (bad || i == digits_start || v > (1ULL << 62) ||
            (buf[digits_start] == '0' && (i - digits_start > 1 || neg)))
            return -1;
        *out = neg ? -(long long)v : (long long)v;
        *next = i + 2;
        return 1;
    }
    return 0;
}

/* A header line that is still incomplete: too long means garbage. */
static inline int header_too_long(size_t len, size_t pos)
{
    return len - pos > RESP_INLINE_MAX;
}

int resp_parse(struct resp_parser *p, char *buf, size_t len)
{
    size_t pos = p->pos;

    if (!p->in_mbulk) {
        long long n;
        int r;
        if (len == 0)
            return RESP_INCOMPLETE;
        if (buf[0] != '*')
            return parse_inline(p, buf, len);
        r = header_num(buf, len, 1, &n, &pos);
        if (r == 0) {
            if (header_too_long(len, 0))
                return RESP_E_MBULK_COUNT_TOO_BIG;
            return RESP_INCOMPLETE;
        }
        if (r < 0 || n > 1024 * 1024 * 1024) {
            /* A line with a non-digit: Redis reports it only once the
             * line is complete, as "invalid multibulk length". */
            return RESP_E_MBULK_LEN;
        }
        p->argc = 0;
        if (n <= 0) {
            /* "*0" and "*-1" are empty requests: skipped. */
            p->consumed = pos;
            p->pos = 0;
            return RESP_OK;
        }
        if (!p->authenticated && n > RESP_UNAUTH_MAX_ARGS)
            return RESP_E_UNAUTH_MBULK;
        p->in_mbulk = 1;
        p->mb_left = n;
        p->bulk_len = -1;
    }

    /* Work on locals: stores into p->argv could alias p's fields, which
     * would make the compiler reload them on every iteration. */
    long long mb_left = p->mb_left, bulk_len = p->bulk_len;
    int argc = p->argc, rc = RESP_INCOMPLETE;
    while (mb_left > 0) {
        if (bulk_len < 0) {
            long long n;
            size_t next;
            int r;
            if (pos >= len)
                break;
            if (buf[pos] != '$') {
                p->bad_char = buf[pos];
                return RESP_E_EXPECTED_DOLLAR;
            }
            r = header_num(buf, len, pos + 1, &n, &next);
            if (r == 0) {
                if (header_too_long(len, pos))
                    return RESP_E_BULK_COUNT_TOO_BIG;
                break;
            }
            if (r < 0 || n < 0 || n > p->max_bulk)
                return RESP_E_BULK_LEN;
            if (!p->authenticated && n > RESP_UNAUTH_MAX_BULK)
                return RESP_E_UNAUTH_BULK;
            bulk_len = n;
            pos = next;
        }
        if (len - pos < (size_t)bulk_len + 2) {
            p->need = pos + (size_t)bulk_len + 2;
            break;
        }
        if (HK_UNLIKELY(argc == p->argv_cap)) {
            p->argc = argc;
            push_arg(p, pos, (size_t)bulk_len);
        } else {
            p->argv[argc].off = pos;
            p->argv[argc].len = (size_t)bulk_len;
        }
        argc++;
        pos += (size_t)bulk_len + 2;
        bulk_len = -1;
        mb_left--;
    }
    p->argc = argc;
    p->mb_left = mb_left;
    p->bulk_len = bulk_len;
    p->pos = pos;
    if (mb_left > 0)
        return rc;
    p->consumed = pos;
    p->in_mbulk = 0;
    p->pos = 0;
    p->need = 0;
    return RESP_OK;
}

const char *resp_strerror(int code)
{
    switch (code) {
    case RESP_E_INLINE_TOO_BIG: return "too big inline request";
    case RESP_E_UNBALANCED: return "unbalanced quotes in request";
    case RESP_E_MBULK_COUNT_TOO_BIG: return "too big mbulk count string";
    case RESP_E_MBULK_LEN: return "invalid multibulk length";
    case RESP_E_UNAUTH_MBULK: return "unauthenticated multibulk length";
    case RESP_E_BULK_COUNT_TOO_BIG: return "too big bulk count string";
    case RESP_E_EXPECTED_DOLLAR: return "expected '$', got '%c'";
    case RESP_E_BULK_LEN: return "invalid bulk length";
    case RESP_E_UNAUTH_BULK: return "unauthenticated bulk length";
    default: return "unknown error";
    }
}
