/* slot.h - Redis Cluster key slots for hotkv-benchmark's --cluster mode.
 *
 * The slot of a key is CRC16 (the XMODEM variant: polynomial 0x1021, initial
 * value 0, no reflection, no final xor) of the key mod 16384; when the key
 * holds a hash tag, a '{' followed later by a '}' with at least one byte
 * between them, only the bytes between the first '{' and the first '}' after
 * it are hashed.  Known values: "123456789" -> CRC 0x31C3, slot 12739;
 * "foo" -> 12182; "{user1000}.following" and "{user1000}.followers" share a
 * slot; "{}foo" hashes the whole key. */
#ifndef HK_BM_SLOT_H
#define HK_BM_SLOT_H

#include <stddef.h>
#include <stdint.h>

#define BM_NSLOTS 16384

uint16_t bm_crc16(const void *buf, size_t len);
/* The cluster slot (0..16383) of a key. */
unsigned bm_key_slot(const void *key, size_t len);

/* Parse the text of a redirect error reply ("MOVED 3999 127.0.0.1:6381" or
 * "ASK 3999 127.0.0.1:6381", without the leading '-'; the host may be
 * empty, "?" or an IPv6 address, the port is after the last ':').
 * Returns 1 for MOVED, 2 for ASK, 0 if the text is neither or malformed;
 * on success *slot, host (NUL-terminated, at most hostcap-1 bytes) and
 * *port are set. */
enum { BM_REDIR_NONE = 0, BM_REDIR_MOVED = 1, BM_REDIR_ASK = 2 };
int bm_parse_redirect(const char *msg, size_t len, unsigned *slot, char *host, size_t hostcap,
                      int *port);

#endif
