/* crc64.c - table-driven reflected CRC-64/Jones (see crc64.h).  The table
 * is built once on first use; building it twice concurrently is harmless
 * (both threads write the same values). */
#include "crc64.h"

#include <stdatomic.h>

#define POLY_REFLECTED 0x95ac9329ac4bc9b5ull /* 0xad93d23594c935a9 bit-reversed */

static uint64_t table[256];
static atomic_int table_ready;

static void build(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t v = i;
        for (int b = 0; b < 8; b++)
            v = (v & 1) ? (v >> 1) ^ POLY_REFLECTED : v >> 1;
        table[i] = v;
    }
    atomic_store(&table_ready, 1);
}

uint64_t crc64(uint64_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    if (!atomic_load(&table_ready))
        build();
    while (len--)
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}
