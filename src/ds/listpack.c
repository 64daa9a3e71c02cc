/* listpack.c - see listpack.h for the format and the contract. */
#include "listpack.h"

#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

static inline uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline void set_bytes(unsigned char *lp, size_t n)
{
    wr32(lp, (uint32_t)n);
}

static inline unsigned raw_count(const unsigned char *lp)
{
    return (unsigned)lp[4] | (unsigned)lp[5] << 8;
}

static inline void set_count(unsigned char *lp, size_t n)
{
    unsigned v = n >= 65535 ? 65535 : (unsigned)n;
    lp[4] = (unsigned char)v;
    lp[5] = (unsigned char)(v >> 8);
}

unsigned char *lp_new(void)
{
    unsigned char *lp = hk_malloc(LP_HDR + 1);
    set_bytes(lp, LP_HDR + 1);
    set_count(lp, 0);
    lp[LP_HDR] = LP_EOF;
    return lp;
}

void lp_free(unsigned char *lp)
{
    hk_free(lp);
}

size_t lp_bytes(const unsigned char *lp)
{
    return rd32(lp);
}

/* ----------------------------------------------------- entry decoding --- */

/* Size of <encoding+data> of the entry at p (p[0] != EOF). */
static size_t enc_size(const unsigned char *p)
{
    unsigned char b = p[0];
    if (b < 0x80)
        return 1;
    if ((b & 0xC0) == 0x80)
        return 1 + (size_t)(b & 0x3F);
    if ((b & 0xE0) == 0xC0)
        return 2;
    if ((b & 0xF0) == 0xE0)
        return 2 + (((size_t)(b & 0x0F) << 8) | p[1]);
    switch (b) {
    case 0xF0: return 5 + (size_t)rd32(p + 1);
    case 0xF1: return 3;
    case 0xF2: return 4;
    case 0xF3: return 5;
    case 0xF4: return 9;
    default: return 0; /* invalid */
    }
}

static size_t backlen_size(size_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

static void backlen_write(unsigned char *p, size_t l)
{
    size_t n = backlen_size(l);
    /* Most significant group first (no continuation bit), then the lower
     * groups each with the bit set: readable from the right. */
    for (size_t i = 0; i < n; i++) {
        size_t shift = 7 * (n - 1 - i);
        unsigned char v = (unsigned char)((l >> shift) & 127);
        p[i] = (unsigned char)(i == 0 ? v : (v | 128));
    }
}

/* Decode the backlen whose last byte is at p; *nbytes gets its size. */
static size_t backlen_read(const unsigned char *p, size_t *nbytes)
{
    size_t v = 0, shift = 0, n = 0;
    for (;;) {
        v |= (size_t)(p[0] & 127) << shift;
        n++;
        if (!(p[0] & 128) || n == 5)
            break;
        shift += 7;
        p--;
    }
    *nbytes = n;
    return v;
}

static inline size_t entry_total(const unsigned char *p)
{
    size_t e = enc_size(p);
    return e + backlen_size(e);
}

size_t lp_first(const unsigned char *lp)
{
    return lp[LP_HDR] == LP_EOF ? LP_NONE : LP_HDR;
}

size_t lp_next(const unsigned char *lp, size_t pos)
{
    size_t n = pos + entry_total(lp + pos);
    return lp[n] == LP_EOF ? LP_NONE : n;
}

size_t lp_prev(const unsigned char *lp, size_t pos)
{
    size_t nb, e;
    if (pos <= LP_HDR)
        return LP_NONE;
    e = backlen_read(lp + pos - 1, &nb);
    return pos - nb - e;
}

size_t lp_last(const unsigned char *lp)
{
    size_t end = lp_bytes(lp) - 1; /* the EOF byte */
    return end == LP_HDR ? LP_NONE : lp_prev(lp, end);
}

size_t lp_count(const unsigned char *lp)
{
    unsigned c = raw_count(lp);
    size_t n = 0;
    if (c != 65535)
        return c;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p))
        n++;
    return n;
}

size_t lp_seek(const unsigned char *lp, long long index)
{
    size_t n = lp_count(lp), p;
    if (index < 0)
        index += (long long)n;
    if (index < 0 || (size_t)index >= n)
        return LP_NONE;
    if ((size_t)index < n / 2) {
        p = lp_first(lp);
        while (index-- > 0)
            p = lp_next(lp, p);
    } else {
        p = lp_last(lp);
        for (size_t k = n - 1; k > (size_t)index; k--)
            p = lp_prev(lp, p);
    }
    return p;
}

static long long sign_extend(uint64_t v, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);
    v &= (bits == 64) ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    return (long long)((v ^ m) - m);
}

void lp_get(const unsigned char *lp, size_t pos, struct lp_val *v)
{
    const unsigned char *p = lp + pos;
    unsigned char b = p[0];
    v->s = NULL;
    v->len = 0;
    if (b < 0x80) {
        v->ll = b;
    } else if ((b & 0xC0) == 0x80) {
        v->s = p + 1;
        v->len = b & 0x3F;
    } else if ((b & 0xE0) == 0xC0) {
        v->ll = sign_extend(((uint64_t)(b & 0x1F) << 8) | p[1], 13);
    } else if ((b & 0xF0) == 0xE0) {
        v->s = p + 2;
        v->len = ((size_t)(b & 0x0F) << 8) | p[1];
    } else if (b == 0xF0) {
        v->s = p + 5;
        v->len = rd32(p + 1);
    } else {
        unsigned n = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
        uint64_t u = 0;
        for (unsigned i = 0; i < n; i++)
            u |= (uint64_t)p[1 + i] << (8 * i);
        v->ll = sign_extend(u, 8 * n);
    }
}

int lp_eq(const unsigned char *lp, size_t pos, const char *s, size_t len)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s)
        return v.len == len && memcmp(v.s, s, len) == 0;
    long long ll;
    return str_to_ll(s, len, &ll) && ll == v.ll;
}

/* ----------------------------------------------------- entry encoding --- */

/* Encode the header of an element into h (<= 9 bytes); returns its size
 * and sets *datalen to the string bytes that follow (0 for integers). */
static size_t encode_head(unsigned char *h, const char *s, size_t len, int is_int, long long ll, size_t *datalen)
{
    *datalen = 0;
    if (is_int) {
        if (ll >= 0 && ll <= 127) {
            h[0] = (unsigned char)ll;
            return 1;
        }
        if (ll >= -4096 && ll <= 4095) {
            uint64_t u = (uint64_t)ll & 0x1FFF;
            h[0] = (unsigned char)(0xC0 | (u >> 8));
            h[1] = (unsigned char)(u & 0xFF);
            return 2;
        }
        unsigned n;
        if (ll >= -32768 && ll <= 32767) {
            h[0] = 0xF1;
            n = 2;
        } else if (ll >= -8388608 && ll <= 8388607) {
            h[0] = 0xF2;
            n = 3;
        } else if (ll >= -2147483648LL && ll <= 2147483647LL) {
            h[0] = 0xF3;
            n = 4;
        } else {
            h[0] = 0xF4;
            n = 8;
        }
        for (unsigned i = 0; i < n; i++)
            h[1 + i] = (unsigned char)((uint64_t)ll >> (8 * i));
        return 1 + n;
    }
    (void)s;
    *datalen = len;
    if (len <= 63) {
        h[0] = (unsigned char)(0x80 | len);
        return 1;
    }
    if (len <= 4095) {
        h[0] = (unsigned char)(0xE0 | (len >> 8));
        h[1] = (unsigned char)(len & 0xFF);
        return 2;
    }
    h[0] = 0xF0;
    wr32(h + 1, (uint32_t)len);
    return 5;
}

/* Replace del bytes at pos with a new element (s or integer). */
static unsigned char *splice(unsigned char *lp, size_t pos, size_t del, const char *s, size_t len, int is_int,
                             long long ll, long count_delta)
{
    unsigned char h[9];
    size_t dl, hl = encode_head(h, s, len, is_int, ll, &dl);
    size_t enc = hl + dl, bl = backlen_size(enc), ins = enc + bl;
    size_t total = lp_bytes(lp), ntotal = total - del + ins;
    size_t tail = total - pos - del;
    size_t old_count = lp_count(lp);

    if (ins > del)
        lp = hk_realloc(lp, ntotal);
    memmove(lp + pos + ins, lp + pos + del, tail);
    if (ins < del)
        lp = hk_realloc(lp, ntotal);
    memcpy(lp + pos, h, hl);
    if (dl)
        memcpy(lp + pos + hl, s, dl);
    backlen_write(lp + pos + enc, enc);
    set_bytes(lp, ntotal);
    set_count(lp, (size_t)((long)old_count + count_delta));
    return lp;
}

static unsigned char *put(unsigned char *lp, size_t pos, size_t del, const char *s, size_t len, long delta)
{
    long long ll;
    int is_int = len <= 20 && str_to_ll(s, len, &ll);
    return splice(lp, pos, del, s, len, is_int, is_int ? ll : 0, delta);
}

unsigned char *lp_append(unsigned char *lp, const char *s, size_t len)
{
    return put(lp, lp_bytes(lp) - 1, 0, s, len, 1);
}

unsigned char *lp_prepend(unsigned char *lp, const char *s, size_t len)
{
    return put(lp, LP_HDR, 0, s, len, 1);
}

unsigned char *lp_append_int(unsigned char *lp, long long v)
{
    return splice(lp, lp_bytes(lp) - 1, 0, NULL, 0, 1, v, 1);
}

unsigned char *lp_insert(unsigned char *lp, size_t pos, const char *s, size_t len)
{
    if (pos == LP_NONE)
        return lp_append(lp, s, len);
    return put(lp, pos, 0, s, len, 1);
}

unsigned char *lp_replace(unsigned char *lp, size_t pos, const char *s, size_t len)
{
    return put(lp, pos, entry_total(lp + pos), s, len, 0);
}

unsigned char *lp_delete(unsigned char *lp, size_t pos, size_t n, size_t *next)
{
    size_t end = pos, k = 0, total = lp_bytes(lp), old_count = lp_count(lp);
    while (k < n && lp[end] != LP_EOF) {
        end += entry_total(lp + end);
        k++;
    }
    memmove(lp + pos, lp + end, total - end);
    lp = hk_realloc(lp, total - (end - pos));
    set_bytes(lp, total - (end - pos));
    set_count(lp, old_count - k);
    if (next)
        *next = lp[pos] == LP_EOF ? LP_NONE : pos;
    return lp;
}

size_t lp_find(const unsigned char *lp, size_t pos, const char *s, size_t len, unsigned skip)
{
    long long ll = 0;
    int s_is_int = len <= 20 && str_to_ll(s, len, &ll);
    unsigned skipped = 0;
    const unsigned char *p;
    if (pos == LP_NONE)
        return LP_NONE;
    p = lp + pos; /* not before the check: lp + LP_NONE overflows */
    while (*p != LP_EOF) {
        unsigned char b = p[0];
        size_t enc;
        if ((b & 0xC0) == 0x80) {
            /* Short string (6-bit length): the common case, compared in place
             * (length, then last byte, then the rest) without decoding. */
            enc = 1 + (size_t)(b & 0x3F);
            if (skipped == 0 && !s_is_int && enc - 1 == len &&
                (len == 0 || (p[len] == (unsigned char)s[len - 1] && memcmp(p + 1, s, len) == 0)))
                return (size_t)(p - lp);
        } else {
            enc = enc_size(p);
            if (skipped == 0) {
                struct lp_val v;
                lp_get(lp, (size_t)(p - lp), &v);
                if (v.s ? (!s_is_int && v.len == len && memcmp(v.s, s, len) == 0) : (s_is_int && v.ll == ll))
                    return (size_t)(p - lp);
            }
        }
        skipped = skipped ? skipped - 1 : skip;
        p += enc + (enc <= 127 ? 1 : backlen_size(enc));
    }
    return LP_NONE;
}

int lp_validate(const unsigned char *lp, size_t size)
{
    size_t p = LP_HDR, n = 0;
    if (size < LP_HDR + 1 || lp_bytes(lp) != size || lp[size - 1] != LP_EOF)
        return 0;
    while (p < size - 1) {
        unsigned char b = lp[p];
        size_t e, bl, got, nb;
        if (b == LP_EOF)
            return 0;
        /* The fixed part of the encoding must fit before reading lengths. */
        if (((b & 0xF0) == 0xE0 && p + 2 > size - 1) || (b == 0xF0 && p + 5 > size - 1))
            return 0;
        e = enc_size(lp + p);
        if (e == 0 || e > size - 1 - p)
            return 0;
        bl = backlen_size(e);
        if (bl > size - 1 - p - e)
            return 0;
        got = backlen_read(lp + p + e + bl - 1, &nb);
        if (got != e || nb != bl)
            return 0;
        p += e + bl;
        n++;
    }
    if (p != size - 1)
        return 0;
    return raw_count(lp) == 65535 ? n >= 65535 : raw_count(lp) == n;
}

/* ----------------------------------------------------------- builder --- */
static void lpb_room(struct lp_builder *b, size_t n)
{
    if (b->len + n <= b->cap)
        return;
    size_t cap = hk_grow_cap(b->cap, b->len + n, 256, 1);
    b->buf = hk_realloc(b->buf, cap);
    b->cap = cap;
}

void lpb_reset(struct lp_builder *b)
{
    lpb_room(b, LP_HDR + 1);
    b->len = LP_HDR;
    b->count = 0;
}

static void lpb_put(struct lp_builder *b, const char *s, size_t len, int is_int, long long ll)
{
    unsigned char h[9];
    size_t dl, hl = encode_head(h, s, len, is_int, ll, &dl);
    size_t enc = hl + dl;
    lpb_room(b, enc + backlen_size(enc) + 1);
    memcpy(b->buf + b->len, h, hl);
    if (dl)
        memcpy(b->buf + b->len + hl, s, dl);
    backlen_write(b->buf + b->len + enc, enc);
    b->len += enc + backlen_size(enc);
    b->count++;
}

void lpb_append(struct lp_builder *b, const char *s, size_t len)
{
    long long ll;
    int is_int = len <= 20 && str_to_ll(s, len, &ll);
    lpb_put(b, s, len, is_int, is_int ? ll : 0);
}

void lpb_append_int(struct lp_builder *b, long long v)
{
    lpb_put(b, NULL, 0, 1, v);
}

const unsigned char *lpb_finish(struct lp_builder *b, size_t *bytes)
{
    lpb_room(b, 1);
    b->buf[b->len] = LP_EOF;
    set_bytes(b->buf, b->len + 1);
    set_count(b->buf, b->count);
    *bytes = b->len + 1;
    return b->buf;
}

void lpb_free(struct lp_builder *b)
{
    hk_free(b->buf);
    b->buf = NULL;
    b->len = b->cap = b->count = 0;
}

/* ------------------------------------------------------------- repr --- */

void lp_repr(const unsigned char *lp, FILE *f, const char *indent)
{
    size_t n = 0;
    fprintf(f, "%slistpack %p: %zu bytes, %zu elements (header count %u)\n", indent, (const void *)lp, lp_bytes(lp),
            lp_count(lp), raw_count(lp));
    for (size_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next(lp, pos), n++) {
        size_t es = enc_size(lp + pos);
        struct lp_val v;
        lp_get(lp, pos, &v);
        fprintf(f, "%s  [%zu] offset %zu, %zu+%zu bytes: ", indent, n, pos, es, backlen_size(es));
        if (!v.s) {
            fprintf(f, "int %lld\n", v.ll);
            continue;
        }
        fprintf(f, "str(%zu) \"", v.len);
        size_t show = v.len < 64 ? v.len : 64;
        for (size_t i = 0; i < show; i++) {
            unsigned char c = v.s[i];
            if (c == '"' || c == '\\')
                fprintf(f, "\\%c", c);
            else if (c >= 32 && c < 127)
                fputc(c, f);
            else
                fprintf(f, "\\x%02x", c);
        }
        fprintf(f, "\"%s\n", show < v.len ? "..." : "");
    }
    fprintf(f, "%s  end (0xFF at offset %zu)\n", indent, lp_bytes(lp) - 1);
}
