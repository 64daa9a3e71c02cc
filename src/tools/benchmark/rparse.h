/* rparse.h - incremental RESP2/RESP3 reply parser for hotkv-benchmark.
 *
 * It does not build values: it finds where each top-level reply ends, says
 * whether it is an error (-ERR / !blob error), and for a top-level array or
 * push remembers where its first BM_RP_ELEMS string elements are (pub/sub
 * messages), and for a top-level integer its value (PUBLISH receivers).
 *
 * Contract: call bm_rp_parse() with buf at the start of the current reply
 * and len the bytes available.  BM_RP_INCOMPLETE: call again later with the
 * same start and more bytes (progress is kept).  BM_RP_DONE: *out holds the
 * reply, out->len its size in bytes; offsets in out->elem are relative to
 * buf.  BM_RP_ERR: the stream is not RESP (the connection must be dropped).
 * Attributes (|) are skipped; streamed types (?) are refused. */
#ifndef HK_BM_RPARSE_H
#define HK_BM_RPARSE_H

#include <stddef.h>

#define BM_RP_ELEMS 4
#define BM_RP_MAX_DEPTH 32
#define BM_RP_MAX_LINE (64 * 1024)

enum { BM_RP_INCOMPLETE = 0, BM_RP_DONE = 1, BM_RP_ERR = -1 };

struct bm_rp_str {
    size_t off;
    size_t len;
};

struct bm_reply {
    char type;             /* first byte of the top-level reply */
    int is_error;          /* - or ! at top level */
    size_t len;            /* bytes of the whole reply */
    long long integer;     /* value of a top-level : reply */
    struct bm_rp_str msg;  /* error text, or top-level simple/bulk string */
    int nelem;             /* captured elements of a top-level array/push */
    struct bm_rp_str elem[BM_RP_ELEMS];
};

struct bm_rparser {
    size_t pos;
    int depth;
    long long left[BM_RP_MAX_DEPTH];
    unsigned char attr[BM_RP_MAX_DEPTH];
    long long top_n;       /* element count of the top-level aggregate */
    struct bm_reply cur;
};

void bm_rp_init(struct bm_rparser *p);
int bm_rp_parse(struct bm_rparser *p, const char *buf, size_t len, struct bm_reply *out);

#endif
