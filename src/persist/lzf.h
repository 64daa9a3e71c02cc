/* lzf.h - LZF compression, the format of Redis's compressed RDB strings
 * (our own implementation, written from the format description).
 *
 * The compressed stream is a sequence of:
 *   literal run:    000LLLLL  then L+1 bytes copied as they are (1..32)
 *   back reference: LLLooooo [l] oooooooo
 *       copy len bytes from `off` bytes before the output position, where
 *       len = LLL + 2 (LLL 1..6), or 7 + l + 2 when LLL is 7 (an extra
 *       length byte), and off = (ooooo << 8 | oooooooo) + 1 (1..8192).
 *       The source may overlap the destination (runs). */
#ifndef HK_LZF_H
#define HK_LZF_H

#include <stddef.h>

/* Compress n bytes into out (capacity cap).  Returns the compressed size,
 * or 0 when the result would not fit in cap (incompressible input). */
size_t lzf_compress(const void *in, size_t n, void *out, size_t cap);

/* Decompress n bytes into out, which must become exactly outlen bytes.
 * Returns outlen, or 0 if the input is malformed or does not decode to
 * exactly outlen bytes (never reads or writes out of bounds). */
size_t lzf_decompress(const void *in, size_t n, void *out, size_t outlen);

#endif
