/* lzf.c - see lzf.h.  The compressor is a greedy single-pass matcher over
 * a hash table of 3-byte prefixes (positions within the 8 KB window);
 * literals are gathered in runs of at most 32 bytes.  The table is sized
 * to the input (256 .. 16384 slots), so compressing the many small values
 * of a snapshot does not pay for clearing a large table each time. */
#include "lzf.h"

#include <stdint.h>
#include <string.h>

#define HBITS 14
#define HSIZE (1u << HBITS)
#define MAX_OFF 8192u
#define MAX_LIT 32u
#define MAX_REF (264u) /* 7 + 255 + 2 */

static inline uint32_t h3(const unsigned char *p, unsigned bits)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - bits);
}

/* Emit the literal run in[from..to) (any length) into out at *op. */
static int put_literals(const unsigned char *in, size_t from, size_t to, unsigned char *out, size_t *op, size_t cap)
{
    while (from < to) {
        size_t n = to - from;
        if (n > MAX_LIT)
            n = MAX_LIT;
        if (*op + 1 + n > cap)
            return -1;
        out[(*op)++] = (unsigned char)(n - 1);
        memcpy(out + *op, in + from, n);
        *op += n;
        from += n;
    }
    return 0;
}

size_t lzf_compress(const void *inp, size_t n, void *outp, size_t cap)
{
    const unsigned char *in = inp;
    unsigned char *out = outp;
    uint32_t table[HSIZE]; /* position + 1; 0 = empty */
    size_t i = 0, lit = 0, op = 0;
    if (n == 0)
        return 0;
    /* The table is cleared for every call: size it to the input (at
     * least 2 slots per byte, up to HSIZE), or a 256-byte value would pay
     * for clearing 64 KB (an RDB save compresses millions of them). */
    unsigned bits = 8;
    while (bits < HBITS && ((size_t)1 << bits) < 2 * n)
        bits++;
    memset(table, 0, sizeof(uint32_t) << bits);
    while (i + 2 < n) {
        uint32_t h = h3(in + i, bits);
        size_t ref = table[h];
        table[h] = (uint32_t)(i + 1);
        if (ref && i - (ref - 1) <= MAX_OFF && (ref - 1) < i && memcmp(in + ref - 1, in + i, 3) == 0) {
            size_t r = ref - 1, len = 3, max = n - i;
            if (max > MAX_REF)
                max = MAX_REF;
            /* Extend 8 bytes at a time, then byte by byte. */
            while (len + 8 <= max) {
                uint64_t x, y;
                memcpy(&x, in + r + len, 8);
                memcpy(&y, in + i + len, 8);
                if (x != y) {
                    len += (size_t)__builtin_ctzll(x ^ y) >> 3;
                    goto matched;
                }
                len += 8;
            }
            while (len < max && in[r + len] == in[i + len])
                len++;
        matched:
            if (put_literals(in, lit, i, out, &op, cap) < 0)
                return 0;
            size_t off = i - r - 1, l = len - 2;
            if (op + 3 > cap)
                return 0;
            if (l < 7) {
                out[op++] = (unsigned char)((l << 5) | (off >> 8));
            } else {
                out[op++] = (unsigned char)((7u << 5) | (off >> 8));
                out[op++] = (unsigned char)(l - 7);
            }
            out[op++] = (unsigned char)(off & 0xff);
            /* Index only the last two positions of the match (as liblzf's
             * fast mode): indexing every one made long runs quadratic-ish
             * in cost and bought almost no ratio. */
            size_t end = i + len;
            for (size_t k = end > i + 2 ? end - 2 : i + 1; k < end && k + 2 < n; k++)
                table[h3(in + k, bits)] = (uint32_t)(k + 1);
            i = end;
            lit = i;
            continue;
        }
        i++;
    }
    if (put_literals(in, lit, n, out, &op, cap) < 0)
        return 0;
    return op;
}

size_t lzf_decompress(const void *inp, size_t n, void *outp, size_t outlen)
{
    const unsigned char *ip = inp, *iend = ip + n;
    unsigned char *out = outp, *op = out, *oend = out + outlen;
    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) {
            size_t len = (size_t)ctrl + 1;
            if ((size_t)(iend - ip) < len || (size_t)(oend - op) < len)
                return 0;
            memcpy(op, ip, len);
            op += len;
            ip += len;
            continue;
        }
        size_t len = ctrl >> 5;
        if (len == 7) {
            if (ip >= iend)
                return 0;
            len += *ip++;
        }
        if (ip >= iend)
            return 0;
        size_t off = ((size_t)(ctrl & 0x1f) << 8 | *ip++) + 1;
        len += 2;
        if ((size_t)(op - out) < off || (size_t)(oend - op) < len)
            return 0;
        const unsigned char *ref = op - off;
        if (off >= len) {
            memcpy(op, ref, len);
            op += len;
        } else if (off == 1) {
            memset(op, *ref, len); /* a run of one byte (padding, zeros) */
            op += len;
        } else {
            /* Overlapping: the pattern of `off` bytes repeats; copy it in
             * non-overlapping chunks that double as the output grows. */
            while (len) {
                size_t k = (size_t)(op - ref);
                if (k > len)
                    k = len;
                memcpy(op, ref, k);
                op += k;
                len -= k;
            }
        }
    }
    return op == oend ? outlen : 0;
}
