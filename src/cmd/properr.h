/* properr.h - propagation-error-behavior (Redis 7): a command that fails
 * where it must not, in a replica's master stream or in the AOF being
 * loaded.  Either is data divergence: the master (or the server that
 * wrote the file) ran it without an error.
 *
 * It is logged ("== CRITICAL == This replica is sending an error to its
 * master: 'ERR ...' after processing the command 'name'", or "This server
 * ... to its AOF-loading-client"), counted in INFO stats
 * unexpected_error_replies, and with propagation-error-behavior panic
 * (stream of a read-only replica, or AOF) or panic-on-replicas (stream of
 * a read-only replica only) the server aborts.  A writable replica's
 * stream may diverge by design: never a panic there.
 *
 * Threads: the master link's worker (cmd/repl.c) or the loader (cmd/replay.c);
 * the count is per worker, or one atomic for the loader. */
#ifndef HK_CMD_PROPERR_H
#define HK_CMD_PROPERR_H

#include <stddef.h>

struct client;
/* err: the error text (no '-', no CRLF); cmdname: the command that ran,
 * or NULL when it did not resolve. */
void propagation_error(struct client *c, int from_aof, const char *err, size_t n, const char *cmdname);
/* INFO stats: the AOF loader's count (the workers' are in their stats). */
unsigned long long propagation_errors_loading(void);
void propagation_errors_reset(void); /* CONFIG RESETSTAT */

#endif
