/* fuzz_resp_harness.h - the one body shared by the libFuzzer target
 * (tests/fuzz/fuzz_resp.c) and the corpus replay unit test
 * (tests/unit/test_fuzz_corpus.c), so every saved input stays a test.
 *
 * Input layout: 4 control bytes, then the bytes a client sends.
 *   byte 0: bit 0 authenticated; bits 1-2 max_bulk (1 MB, 64, 16 KB, 1 MB);
 *           bit 3 sometimes call again with no new bytes.
 *   byte 1: largest chunk is 1 + (byte & 0x3f) bytes ('@' = byte at a time).
 *   byte 2-3: seed of the chunk-size generator.
 * The payload is parsed twice: as one buffer, and as a connection would see
 * it, arriving in chunks, with the parser resumed on the same buffer start.
 * Both runs must yield the same commands and the same final result (but
 * see the RESP_INLINE_MAX exception at the end), and every result must
 * satisfy the parser's contract (resp.h), checked against an independent
 * reading of the count and length headers.  Each call gets
 * an exactly-sized heap copy of the unconsumed bytes so that a read past
 * len is caught by AddressSanitizer.  A broken invariant aborts. */
#ifndef HK_FUZZ_RESP_HARNESS_H
#define HK_FUZZ_RESP_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/resp.h"

#define FUZZ_CHECK(cond)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "fuzz_resp: invariant failed at %s:%d: %s\n",         \
                    __FILE__, __LINE__, #cond);                                   \
            abort();                                                              \
        }                                                                         \
    } while (0)

/* A growable record of what a run produced, for comparing two runs. */
struct fuzz_log {
    uint8_t *b;
    size_t len, cap;
};

static void fuzz_log_put(struct fuzz_log *l, const void *p, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap : 256;
        while (cap < l->len + n)
            cap *= 2;
        l->b = realloc(l->b, cap);
        FUZZ_CHECK(l->b != NULL);
        l->cap = cap;
    }
    memcpy(l->b + l->len, p, n);
    l->len += n;
}

static void fuzz_log_u64(struct fuzz_log *l, uint64_t v)
{
    fuzz_log_put(l, &v, sizeof(v));
}

static uint32_t fuzz_rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

/* Independent reading of a RESP header number: buf[s..e) holds an
 * optional '-' and decimal digits.  Returns 1 and *out if it is a number
 * that fits a long long, 0 if it is not (or overflows). */
static int fuzz_header_value(const char *buf, size_t s, size_t e, long long *out)
{
    int neg = 0;
    unsigned long long v = 0, lim;
    if (s < e && buf[s] == '-') {
        neg = 1;
        s++;
    }
    if (s == e)
        return 0;
    lim = neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX;
    for (; s < e; s++) {
        unsigned d = (unsigned char)buf[s] - (unsigned)'0';
        if (d > 9 || v > (lim - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = neg ? (long long)(0 - v) : (long long)v;
    return 1;
}

/* Check one resp_parse() result against the contract; buf/n are what the
 * parser was given, first its first byte before the call (inline parsing
 * rewrites the buffer in place). */
static void fuzz_resp_check(const struct resp_parser *p, int rc, const char *buf, size_t n, char first)
{
    FUZZ_CHECK(rc == RESP_OK || rc == RESP_INCOMPLETE ||
               (rc <= RESP_E_INLINE_TOO_BIG && rc >= RESP_E_UNAUTH_BULK));
    if (rc == RESP_OK) {
        size_t prev_end = 0, prev_hdr_floor = 0;
        int mbulk = first == '*';
        FUZZ_CHECK(p->consumed > 0); /* else a connection would spin */
        FUZZ_CHECK(p->consumed <= n);
        FUZZ_CHECK(p->argc >= 0 && p->argc <= p->argv_cap);
        FUZZ_CHECK(!p->in_mbulk && p->pos == 0);
        if (mbulk && !p->authenticated)
            FUZZ_CHECK(p->argc <= RESP_UNAUTH_MAX_ARGS);
        if (mbulk) {
            /* The count line "*<n>\r": n arguments, or n <= 0 for an empty
             * request; a count that is not a number must not parse. */
            size_t cr = 1;
            long long count;
            while (cr < p->consumed && buf[cr] != '\r')
                cr++;
            FUZZ_CHECK(cr < p->consumed);
            FUZZ_CHECK(fuzz_header_value(buf, 1, cr, &count));
            if (p->argc == 0)
                FUZZ_CHECK(count <= 0);
            else
                FUZZ_CHECK(count == p->argc);
        }
        for (int i = 0; i < p->argc; i++) {
            size_t off = p->argv[i].off, len = p->argv[i].len;
            FUZZ_CHECK(off <= p->consumed && len <= p->consumed - off);
            FUZZ_CHECK(off >= prev_end); /* ordered, not overlapping */
            prev_end = off + len;
            if (mbulk) {
                /* "$<len>\r?" precedes and two bytes follow: like Redis, the
                 * parser skips the byte after '\r' and the two after the
                 * data without looking at them. */
                FUZZ_CHECK(off >= 4 && buf[off - 2] == '\r');
                {
                    /* ...and the header says exactly len. */
                    size_t d = off - 2;
                    long long hl;
                    while (d > prev_hdr_floor && buf[d - 1] != '$')
                        d--;
                    FUZZ_CHECK(d > prev_hdr_floor && buf[d - 1] == '$');
                    FUZZ_CHECK(fuzz_header_value(buf, d, off - 2, &hl));
                    FUZZ_CHECK(hl >= 0 && (size_t)hl == len);
                    prev_hdr_floor = off + len;
                }
                FUZZ_CHECK(len + 2 <= p->consumed - off);
                FUZZ_CHECK((long long)len <= p->max_bulk);
                if (!p->authenticated)
                    FUZZ_CHECK(len <= RESP_UNAUTH_MAX_BULK);
            }
        }
    } else if (rc == RESP_INCOMPLETE) {
        FUZZ_CHECK(p->pos <= n);
        if (p->in_mbulk)
            FUZZ_CHECK(p->mb_left > 0);
    } else if (rc == RESP_E_EXPECTED_DOLLAR) {
        FUZZ_CHECK(p->bad_char != '$');
    }
    if (rc < 0)
        FUZZ_CHECK(strcmp(resp_strerror(rc), "unknown error") != 0);
}

/* Feed payload[0..size) to a fresh parser.  maxc == 0: all at once;
 * otherwise chunks of 0..maxc bytes (0 only if allow_empty).  Appends the
 * commands and final state to *out. */
static void fuzz_resp_run(const uint8_t *payload, size_t size, int auth, long long max_bulk,
                          unsigned maxc, uint32_t seed, int allow_empty, struct fuzz_log *out)
{
    struct resp_parser p;
    size_t qpos = 0, qlen = maxc ? 0 : size;
    int rc = RESP_INCOMPLETE;
    uint32_t rng = seed ? seed : 0x9e3779b9u;

    resp_parser_init(&p);
    p.authenticated = auth;
    p.max_bulk = max_bulk;
    for (;;) {
        /* Parse every complete command in [qpos, qlen). */
        while (qpos < qlen) {
            size_t n = qlen - qpos;
            char *tmp = malloc(n);
            FUZZ_CHECK(tmp != NULL);
            memcpy(tmp, payload + qpos, n);
            rc = resp_parse(&p, tmp, n);
            fuzz_resp_check(&p, rc, tmp, n, (char)payload[qpos]);
            if (rc == RESP_OK) {
                fuzz_log_u64(out, (uint64_t)p.argc);
                for (int i = 0; i < p.argc; i++) {
                    fuzz_log_u64(out, p.argv[i].len);
                    fuzz_log_put(out, tmp + p.argv[i].off, p.argv[i].len);
                }
                qpos += p.consumed;
                resp_parser_reset(&p);
            }
            free(tmp);
            if (rc != RESP_OK)
                break;
        }
        if (rc < 0 || qlen == size)
            break;
        /* The next chunk from the socket. */
        {
            uint32_t r = fuzz_rng_next(&rng);
            size_t chunk = 1 + r % maxc;
            if (allow_empty && (r >> 24) % 8 == 0)
                chunk = 0;
            if (chunk > size - qlen)
                chunk = size - qlen;
            qlen += chunk;
            if (chunk == 0 && qpos < qlen) {
                /* Nothing new arrived, but the owner may parse again. */
                size_t n = qlen - qpos;
                char *tmp = malloc(n);
                FUZZ_CHECK(tmp != NULL);
                memcpy(tmp, payload + qpos, n);
                rc = resp_parse(&p, tmp, n);
                fuzz_resp_check(&p, rc, tmp, n, (char)payload[qpos]);
                FUZZ_CHECK(rc == RESP_INCOMPLETE);
                free(tmp);
            }
        }
    }
    /* Final state: last result, and how many bytes were left unparsed. */
    fuzz_log_u64(out, (uint64_t)(int64_t)rc);
    fuzz_log_u64(out, (uint64_t)(size - qpos));
    resp_parser_free(&p);
}

static inline void fuzz_resp_one(const uint8_t *data, size_t size)
{
    static const long long bulk_limits[4] = {1024 * 1024, 64, 16384, 1024 * 1024};
    struct fuzz_log whole = {0}, chunked = {0};
    int auth;
    long long max_bulk;
    unsigned maxc;
    uint32_t seed;

    if (size < 4)
        return;
    auth = data[0] & 1;
    max_bulk = bulk_limits[(data[0] >> 1) & 3];
    maxc = 1u + (data[1] & 0x3fu);
    seed = (uint32_t)data[2] << 8 | data[3];
    data += 4;
    size -= 4;

    fuzz_resp_run(data, size, auth, max_bulk, 0, 0, 0, &whole);
    fuzz_resp_run(data, size, auth, max_bulk, maxc, seed, (data - 4)[0] & 8, &chunked);
    if (whole.len != chunked.len || memcmp(whole.b, chunked.b, whole.len) != 0) {
        /* One difference is by design (as in Redis): a line with no newline
         * yet is refused once RESP_INLINE_MAX bytes are buffered, so a
         * longer line is accepted only if its newline arrives in the same
         * read.  Then the chunked run must agree up to that error. */
        int64_t last;
        size_t common = chunked.len - 16;
        memcpy(&last, chunked.b + common, sizeof(last));
        if (!((last == RESP_E_INLINE_TOO_BIG || last == RESP_E_MBULK_COUNT_TOO_BIG ||
               last == RESP_E_BULK_COUNT_TOO_BIG) &&
              size > RESP_INLINE_MAX && common <= whole.len &&
              memcmp(whole.b, chunked.b, common) == 0)) {
            fprintf(stderr, "fuzz_resp: chunked parse differs from whole-buffer parse\n");
            abort();
        }
    }
    free(whole.b);
    free(chunked.b);
}

#endif
