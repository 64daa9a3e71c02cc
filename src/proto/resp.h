/* resp.h - incremental RESP request parser (multibulk and inline).
 *
 * Contract (three-way, as picohttpparser): resp_parse() returns RESP_OK when
 * one whole command has been parsed (p->consumed bytes of buf, p->argc
 * arguments at p->argv[i] as offsets into buf), RESP_INCOMPLETE when more
 * bytes are needed (progress is kept in *p, so calling again with the same
 * buf start and more bytes resumes without re-scanning), or a negative
 * RESP_E* code.  The parser never allocates except to grow p->argv, never
 * writes replies, and reads nothing beyond buf[len-1].  Inline commands are
 * unescaped in place, which is why buf is not const.
 *
 * Thread: a parser belongs to one connection; no shared state. */
#ifndef HK_RESP_H
#define HK_RESP_H

#include <stddef.h>

enum {
    RESP_OK = 0,
    RESP_INCOMPLETE = 1,
    RESP_E_INLINE_TOO_BIG = -1,
    RESP_E_UNBALANCED = -2,
    RESP_E_MBULK_COUNT_TOO_BIG = -3,
    RESP_E_MBULK_LEN = -4,
    RESP_E_UNAUTH_MBULK = -5,
    RESP_E_BULK_COUNT_TOO_BIG = -6,
    RESP_E_EXPECTED_DOLLAR = -7,
    RESP_E_BULK_LEN = -8,
    RESP_E_UNAUTH_BULK = -9,
};

/* Inline requests and header lines longer than this are refused
 * (PROTO_INLINE_MAX_SIZE in Redis): it bounds the work of scanning for a
 * newline in garbage. */
#define RESP_INLINE_MAX (64 * 1024)
/* Before AUTH, a client may send at most 10 arguments of at most 16 KB: an
 * unauthenticated peer cannot make us allocate much. */
#define RESP_UNAUTH_MAX_ARGS 10
#define RESP_UNAUTH_MAX_BULK 16384

struct resp_arg {
    size_t off;
    size_t len;
};

struct resp_parser {
    /* outputs */
    struct resp_arg *argv;
    int argc;
    int argv_cap;
    size_t consumed;
    size_t need;        /* with INCOMPLETE: total bytes the command needs, if known */
    char bad_char;      /* with RESP_E_EXPECTED_DOLLAR */
    /* resumable state */
    int in_mbulk;
    long long mb_left;
    long long bulk_len; /* -1: awaiting a $ header */
    size_t pos;
    /* limits (set by the owner) */
    long long max_bulk;
    int authenticated;
};

void resp_parser_init(struct resp_parser *p);
void resp_parser_free(struct resp_parser *p);
/* Forget a partially parsed command (call after RESP_OK before the next). */
void resp_parser_reset(struct resp_parser *p);
/* Give back a huge argv array (after a command with many arguments) when
 * no command is half-parsed. */
void resp_parser_shrink(struct resp_parser *p, int cap);
int resp_parse(struct resp_parser *p, char *buf, size_t len);
/* Text of an error code, e.g. "invalid bulk length" (no prefix). */
const char *resp_strerror(int code);

#endif
