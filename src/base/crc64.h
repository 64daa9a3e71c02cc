/* crc64.h - CRC-64/Jones (reflected, polynomial 0xad93d23594c935a9, init 0,
 * no final xor): the checksum that ends Redis's DUMP payloads, which
 * FUNCTION DUMP / RESTORE exchange.  crc64(0, "123456789", 9) ==
 * 0xe9c6d914c4b8d9ca. */
#ifndef HK_CRC64_H
#define HK_CRC64_H

#include <stddef.h>
#include <stdint.h>

uint64_t crc64(uint64_t crc, const void *data, size_t len);

#endif
