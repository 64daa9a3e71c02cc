/* base/sha256.h - SHA-256 (FIPS 180-4), for ACL password hashes. */
#ifndef HK_SHA256_H
#define HK_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* The 64-character lower-case hex digest of data into out[65]. */
void sha256_hex(const void *data, size_t len, char out[65]);
/* The raw 32-byte digest. */
void sha256_raw(const void *data, size_t len, unsigned char out[32]);

#endif
