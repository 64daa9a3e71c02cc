/* digest.h - DEBUG DIGEST / DIGEST-VALUE: a SHA-1 digest of a value, of a
 * key and its value, and of a whole database set, computed from the
 * values' logical content (not their encoding), the way Redis computes it:
 * ordered things (list elements, stream entries, a key's parts) are mixed
 * in order (d = SHA1(d xor SHA1(data))), unordered ones (set members, hash
 * fields, sorted-set members, the keys of a database) are xored, so two
 * servers holding the same data, in any encodings, agree.
 *
 * Vector sets (a module type in Redis) mix each element's name and
 * attributes; their digest is HotKV's own. */
#ifndef HK_TYPES_DIGEST_H
#define HK_TYPES_DIGEST_H

#include "../db/entry.h"

#define DIGEST_LEN 20

/* Mix the value of e (type, content, whether it has a TTL) into d. */
void digest_value(unsigned char d[DIGEST_LEN], struct entry *e);
/* The digest of key + value, as DEBUG DIGEST xors per key. */
void digest_key_value(unsigned char d[DIGEST_LEN], struct entry *e);
/* The dataset digest: per database (in order, non-empty ones only),
 * digest_db_begin mixes its number in, then the keys' digests, each added
 * to an accumulator with digest_add_key (acc ^= SHA1(key digest): order
 * free), are xored in with digest_xor. */
void digest_db_begin(unsigned char final[DIGEST_LEN], int db);
void digest_add_key(unsigned char acc[DIGEST_LEN], const unsigned char kd[DIGEST_LEN]);
void digest_xor(unsigned char final[DIGEST_LEN], const unsigned char acc[DIGEST_LEN]);
/* 40 lower-case hex digits and a NUL. */
void digest_hex(char out[2 * DIGEST_LEN + 1], const unsigned char d[DIGEST_LEN]);

#endif
