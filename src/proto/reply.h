/* reply.h - RESP2/RESP3 reply encoder into a growable byte buffer.
 *
 * A connection owns one struct reply; command handlers append to it and the
 * worker writes it out once per event-loop turn, so a pipeline of N commands
 * costs one write(2).  Every function appends exactly one RESP value (or a
 * header of an aggregate whose elements follow).  The RESP2 forms of RESP3
 * types are chosen inside, so handlers never branch on the protocol:
 * maps become flat arrays, sets arrays, doubles bulk strings, booleans
 * integers, nulls $-1 (or *-1 with reply_null_array).
 *
 * Thread: owned by the connection's worker. */
#ifndef HK_REPLY_H
#define HK_REPLY_H

#include <stddef.h>
#include <string.h>

struct reply {
    char *buf;
    size_t len;
    size_t cap;
    int resp;       /* 2 or 3 */
    int muted;      /* CLIENT REPLY OFF/SKIP: appends are dropped */
    unsigned muted_errors; /* errors dropped while muted (the last one's text: reply_muted_error) */
};
/* The text of the last error a muted reply dropped on this thread (no '-',
 * no CRLF; cut at 255 bytes): a replica's master link is muted, and a
 * failing command of the stream is still reported (cmd/properr.c). */
extern _Thread_local char reply_muted_error[256];

void reply_init(struct reply *r);
void reply_free(struct reply *r);
void reply_reserve(struct reply *r, size_t extra);
/* Drop the first n bytes (already written to the socket). */
void reply_consume(struct reply *r, size_t n);

void reply_raw(struct reply *r, const char *s, size_t len);
void reply_status(struct reply *r, const char *s);            /* +s */
void reply_ok(struct reply *r);
/* Errors: msg is the full text without '-' or CRLF, e.g. "ERR syntax error";
 * newlines in it are replaced by spaces, as Redis does. */
void reply_error(struct reply *r, const char *msg);
void reply_errorf(struct reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(struct reply *r, long long v);
void reply_bulk(struct reply *r, const char *s, size_t len);
void reply_bulk_cstr(struct reply *r, const char *s);
void reply_bulk_ll(struct reply *r, long long v);
void reply_null(struct reply *r);          /* $-1 / _ */
void reply_null_array(struct reply *r);    /* *-1 / _ */
void reply_array(struct reply *r, long long n);
void reply_map(struct reply *r, long long n);   /* n pairs */
void reply_set(struct reply *r, long long n);
void reply_push(struct reply *r, long long n);
void reply_double(struct reply *r, double d);
void reply_bool(struct reply *r, int b);
void reply_verbatim(struct reply *r, const char *s, size_t len, const char *fmt3);
void reply_bignum_str(struct reply *r, const char *s); /* long double as text: bulk in both */

/* Deferred aggregate length: reserve a header, fill it in later.  Used when
 * the element count is known only at the end (KEYS, SCAN). */
size_t reply_defer(struct reply *r);
void reply_defer_array(struct reply *r, size_t mark, long long n);
void reply_defer_map(struct reply *r, size_t mark, long long n);
void reply_defer_set(struct reply *r, size_t mark, long long n);

#endif
