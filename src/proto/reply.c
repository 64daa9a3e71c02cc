/* reply.c - see reply.h. */
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>

#include "../base/mem.h"
#include "../base/util.h"

void reply_init(struct reply *r)
{
    r->cap = 16 * 1024;
    r->buf = hk_malloc(r->cap);
    r->len = 0;
    r->resp = 2;
    r->muted = 0;
    r->muted_errors = 0;
}

void reply_free(struct reply *r)
{
    hk_free(r->buf);
    r->buf = NULL;
    r->len = r->cap = 0;
}

void reply_reserve(struct reply *r, size_t extra)
{
    if (r->len + extra <= r->cap)
        return;
    size_t nc = r->cap * 2;
    while (nc < r->len + extra)
        nc *= 2;
    r->buf = hk_realloc(r->buf, nc);
    r->cap = nc;
}

void reply_consume(struct reply *r, size_t n)
{
    if (n >= r->len) {
        r->len = 0;
        /* Give back memory after a huge reply; keep the common 16 KB. */
        if (r->cap > 1024 * 1024) {
            hk_free(r->buf);
            r->cap = 16 * 1024;
            r->buf = hk_malloc(r->cap);
        }
        return;
    }
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
}

static inline void put(struct reply *r, const char *s, size_t n)
{
    reply_reserve(r, n);
    memcpy(r->buf + r->len, s, n);
    r->len += n;
}

/* Append "<t><num>\r\n". */
static inline void header(struct reply *r, char t, long long n)
{
    reply_reserve(r, 24);
    char *p = r->buf + r->len;
    *p++ = t;
    p += ll_to_str(p, n);
    *p++ = '\r';
    *p++ = '\n';
    r->len = (size_t)(p - r->buf);
}

void reply_raw(struct reply *r, const char *s, size_t len)
{
    if (r->muted)
        return;
    put(r, s, len);
}

void reply_status(struct reply *r, const char *s)
{
    if (r->muted)
        return;
    size_t n = strlen(s);
    reply_reserve(r, n + 3);
    r->buf[r->len++] = '+';
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    r->buf[r->len++] = '\r';
    r->buf[r->len++] = '\n';
}

void reply_ok(struct reply *r)
{
    if (r->muted)
        return;
    put(r, "+OK\r\n", 5);
}

_Thread_local char reply_muted_error[256];

void reply_error(struct reply *r, const char *msg)
{
    if (r->muted) {
        r->muted_errors++;
        snprintf(reply_muted_error, sizeof(reply_muted_error), "%s", msg);
        return;
    }
    size_t n = strlen(msg);
    reply_reserve(r, n + 3);
    r->buf[r->len++] = '-';
    for (size_t i = 0; i < n; i++)
        r->buf[r->len++] = (msg[i] == '\r' || msg[i] == '\n') ? ' ' : msg[i];
    r->buf[r->len++] = '\r';
    r->buf[r->len++] = '\n';
}

void reply_errorf(struct reply *r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    reply_error(r, buf);
}

void reply_int(struct reply *r, long long v)
{
    if (r->muted)
        return;
    header(r, ':', v);
}

void reply_bulk(struct reply *r, const char *s, size_t len)
{
    if (r->muted)
        return;
    reply_reserve(r, len + 24);
    char *p = r->buf + r->len;
    *p++ = '$';
    p += ull_to_str(p, len);
    *p++ = '\r';
    *p++ = '\n';
    memcpy(p, s, len);
    p += len;
    *p++ = '\r';
    *p++ = '\n';
    r->len = (size_t)(p - r->buf);
}

void reply_bulk_cstr(struct reply *r, const char *s)
{
    reply_bulk(r, s, strlen(s));
}

void reply_bulk_ll(struct reply *r, long long v)
{
    char b[24];
    int n = ll_to_str(b, v);
    reply_bulk(r, b, (size_t)n);
}

void reply_null(struct reply *r)
{
    if (r->muted)
        return;
    if (r->resp == 3)
        put(r, "_\r\n", 3);
    else
        put(r, "$-1\r\n", 5);
}

void reply_null_array(struct reply *r)
{
    if (r->muted)
        return;
    if (r->resp == 3)
        put(r, "_\r\n", 3);
    else
        put(r, "*-1\r\n", 5);
}

void reply_array(struct reply *r, long long n)
{
    if (r->muted)
        return;
    header(r, '*', n);
}

void reply_map(struct reply *r, long long n)
{
    if (r->muted)
        return;
    if (r->resp == 3)
        header(r, '%', n);
    else
        header(r, '*', n * 2);
}

void reply_set(struct reply *r, long long n)
{
    if (r->muted)
        return;
    header(r, r->resp == 3 ? '~' : '*', n);
}

void reply_push(struct reply *r, long long n)
{
    if (r->muted)
        return;
    header(r, r->resp == 3 ? '>' : '*', n);
}

void reply_double(struct reply *r, double d)
{
    char b[64];
    int n;
    if (r->muted)
        return;
    n = d_to_str(b, sizeof(b), d);
    if (r->resp == 3) {
        reply_reserve(r, (size_t)n + 3);
        r->buf[r->len++] = ',';
        memcpy(r->buf + r->len, b, (size_t)n);
        r->len += (size_t)n;
        r->buf[r->len++] = '\r';
        r->buf[r->len++] = '\n';
    } else {
        reply_bulk(r, b, (size_t)n);
    }
}

void reply_bool(struct reply *r, int b)
{
    if (r->muted)
        return;
    if (r->resp == 3)
        put(r, b ? "#t\r\n" : "#f\r\n", 4);
    else
        put(r, b ? ":1\r\n" : ":0\r\n", 4);
}

void reply_verbatim(struct reply *r, const char *s, size_t len, const char *fmt3)
{
    if (r->muted)
        return;
    if (r->resp == 3) {
        header(r, '=', (long long)len + 4);
        put(r, fmt3, 3);
        put(r, ":", 1);
        put(r, s, len);
        put(r, "\r\n", 2);
    } else {
        reply_bulk(r, s, len);
    }
}

void reply_bignum_str(struct reply *r, const char *s)
{
    reply_bulk_cstr(r, s);
}

/* A deferred header is written as a placeholder of fixed size and patched:
 * the final header is shorter or equal, and the gap is closed by a memmove
 * of what follows.  Fine for the rare commands that need it. */
#define DEFER_SPACE 24
size_t reply_defer(struct reply *r)
{
    size_t mark = r->len;
    if (r->muted)
        return (size_t)-1;
    reply_reserve(r, DEFER_SPACE);
    r->len += DEFER_SPACE;
    return mark;
}

static void defer_fill(struct reply *r, size_t mark, char t, long long n)
{
    char h[DEFER_SPACE];
    int hl;
    if (mark == (size_t)-1)
        return;
    h[0] = t;
    hl = 1 + ll_to_str(h + 1, n);
    h[hl++] = '\r';
    h[hl++] = '\n';
    memmove(r->buf + mark + hl, r->buf + mark + DEFER_SPACE, r->len - mark - DEFER_SPACE);
    memcpy(r->buf + mark, h, (size_t)hl);
    r->len -= (size_t)(DEFER_SPACE - hl);
}

void reply_defer_array(struct reply *r, size_t mark, long long n)
{
    defer_fill(r, mark, '*', n);
}

void reply_defer_map(struct reply *r, size_t mark, long long n)
{
    if (r->resp == 3)
        defer_fill(r, mark, '%', n);
    else
        defer_fill(r, mark, '*', n * 2);
}

void reply_defer_set(struct reply *r, size_t mark, long long n)
{
    defer_fill(r, mark, r->resp == 3 ? '~' : '*', n);
}
