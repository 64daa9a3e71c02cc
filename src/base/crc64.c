/* crc64.c - table-driven reflected CRC-64/Jones (see crc64.h), eight bytes
 * per step ("slicing by 8": table k maps a byte k positions further back),
 * so RDB files and DUMP payloads are checksummed at several GB/s.  The
 * tables are built once on first use; building them twice concurrently is
 * harmless (both threads write the same values). */
#include "crc64.h"

#include <stdatomic.h>
#include <string.h>

#define POLY_REFLECTED 0x95ac9329ac4bc9b5ull /* 0xad93d23594c935a9 bit-reversed */

static uint64_t table[8][256];
static atomic_int table_ready;

static void build(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t v = i;
        for (int b = 0; b < 8; b++)
            v = (v & 1) ? (v >> 1) ^ POLY_REFLECTED : v >> 1;
        table[0][i] = v;
    }
    for (unsigned i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            table[k][i] = (table[k - 1][i] >> 8) ^ table[0][table[k - 1][i] & 0xff];
    atomic_store(&table_ready, 1);
}

uint64_t crc64(uint64_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    if (!atomic_load_explicit(&table_ready, memory_order_acquire))
        build();
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        crc ^= w;
        crc = table[7][crc & 0xff] ^ table[6][(crc >> 8) & 0xff] ^ table[5][(crc >> 16) & 0xff] ^
              table[4][(crc >> 24) & 0xff] ^ table[3][(crc >> 32) & 0xff] ^ table[2][(crc >> 40) & 0xff] ^
              table[1][(crc >> 48) & 0xff] ^ table[0][crc >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}
