/* sha1.h - SHA-1 (FIPS 180-4) for the script cache: EVAL bodies are named
 * by the hex SHA-1 of their text, and redis.sha1hex() exposes it to Lua. */
#ifndef HK_SHA1_H
#define HK_SHA1_H

#include <stddef.h>
#include <stdint.h>

struct sha1_ctx {
    uint32_t h[5];
    uint64_t total;        /* bytes hashed so far */
    unsigned char blk[64]; /* pending partial block */
    size_t used;
};

void sha1_init(struct sha1_ctx *s);
void sha1_update(struct sha1_ctx *s, const void *data, size_t len);
void sha1_final(struct sha1_ctx *s, unsigned char out[20]);
/* One-shot: 40 lower-case hex digits and a NUL into out[41]. */
void sha1_hex(char out[41], const void *data, size_t len);

#endif
