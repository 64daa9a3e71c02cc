/* errorstats.h - INFO errorstats: error replies counted by their code, the
 * first word of the message (ERR, WRONGTYPE, NOSCRIPT, ...), as Redis 7. */
#ifndef HK_CMD_ERRORSTATS_H
#define HK_CMD_ERRORSTATS_H

#include <stddef.h>

/* Count one error reply; reply points at its '-' (n bytes readable).  A
 * message without a space in its first 32 bytes counts as ERR (Redis). */
void errorstat_add_reply(const char *reply, size_t n);
void errorstat_add(const char *code, size_t len);
/* INFO errorstats lines, sorted by code ("errorstat_ERR:count=3\r\n"). */
void errorstat_info(void (*emit)(void *arg, const char *line), void *arg);
void errorstat_reset(void); /* CONFIG RESETSTAT */

#endif
