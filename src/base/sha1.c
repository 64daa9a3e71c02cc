/* sha1.c - SHA-1 as specified by FIPS 180-4: 512-bit blocks, 80 rounds
 * over a 16-word schedule expanded in place, big-endian length padding. */
#include "sha1.h"

#include <string.h>

static inline uint32_t rol(uint32_t x, unsigned n)
{
    return (x << n) | (x >> (32 - n));
}

static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[16], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int t = 0; t < 80; t++) {
        uint32_t f, k, wt;
        if (t < 16) {
            wt = w[t];
        } else {
            wt = rol(w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ w[t & 15], 1);
            w[t & 15] = wt;
        }
        if (t < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999u;
        } else if (t < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (t < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t tmp = rol(a, 5) + f + e + k + wt;
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = tmp;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void sha1_init(struct sha1_ctx *s)
{
    s->h[0] = 0x67452301u;
    s->h[1] = 0xefcdab89u;
    s->h[2] = 0x98badcfeu;
    s->h[3] = 0x10325476u;
    s->h[4] = 0xc3d2e1f0u;
    s->total = 0;
    s->used = 0;
}

void sha1_update(struct sha1_ctx *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->total += len;
    if (s->used) {
        size_t take = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->blk + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used < 64)
            return;
        block(s->h, s->blk);
        s->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        block(s->h, p);
    memcpy(s->blk, p, len);
    s->used = len;
}

void sha1_final(struct sha1_ctx *s, unsigned char out[20])
{
    uint64_t bits = s->total * 8;
    unsigned char pad[72];
    size_t n = (s->used < 56 ? 56 : 120) - s->used;
    memset(pad, 0, sizeof(pad));
    pad[0] = 0x80;
    for (int i = 0; i < 8; i++)
        pad[n + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_update(s, pad, n + 8);
    for (int i = 0; i < 5; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void sha1_hex(char out[41], const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    struct sha1_ctx s;
    unsigned char d[20];
    sha1_init(&s);
    sha1_update(&s, data, len);
    sha1_final(&s, d);
    for (int i = 0; i < 20; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[40] = 0;
}
