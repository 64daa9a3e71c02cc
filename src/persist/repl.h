/* persist/repl.h - replication, the master side (PSYNC-compatible with
 * Redis 7 replicas).  docs/architecture.md, "Replication", has the design.
 *
 * The stream: every write fed by persist/prop.c (in the order the workers
 * executed them, with SELECT where the database changes and MULTI/EXEC
 * kept whole) is appended to the replication buffer, whose bytes are
 * numbered by master_repl_offset.  A replica's socket is handed over by the
 * worker that ran its PSYNC (repl_adopt) and from then on belongs to the
 * replication thread (hotkv-repl), which makes the full sync (a fork child
 * writes an RDB straight to the socket), streams the buffer, reads ACKs and
 * keeps the backlog; workers never write to a replica.
 *
 * Locking: repl_mu (a leaf, internal) guards the buffer, the offsets, the
 * replication ids and the replica list; no I/O happens under it.  The only
 * other lock taken here is the snapshot freeze (persist_fork_ex), by the
 * replication thread holding nothing. */
#ifndef HK_PERSIST_REPL_H
#define HK_PERSIST_REPL_H

#include <stddef.h>

/* prop.c's sink: one command of the stream (db -1: no SELECT needed). */
void repl_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens);

/* The replication thread: started with the workers, stopped at shutdown
 * (replicas are closed). */
void repl_start(void);
void repl_stop(void);

/* What a replica said with REPLCONF before its PSYNC. */
struct repl_hello {
    int listening_port;   /* REPLCONF listening-port (0: none) */
    char ip[64];          /* REPLCONF ip-address, else the peer's address */
    int capa_eof, capa_psync2;
};
/* PSYNC replid offset: take fd (a descriptor of the replica's connection
 * the caller no longer uses) and answer it from the replication thread:
 * +CONTINUE when the history from offset is still in the backlog, else
 * +FULLRESYNC and a full sync.  0, or -1 with a Redis error reply in err
 * (the caller keeps fd). */
int repl_adopt(int fd, const struct repl_hello *h, const char *replid, long long offset, char *err, size_t errlen);

/* The replication id (40 hex digits + NUL) and a new one (DEBUG
 * CHANGE-REPL-ID; the old one becomes the secondary id). */
void repl_replid(char out[41]);
void repl_replid_change(void);
/* The body of INFO replication after "# Replication\r\n" into buf:
 * bytes written (truncated at cap). */
size_t repl_info(char *buf, size_t cap);

/* ROLE: the offset and the online replicas (at most max). */
struct repl_role_entry {
    char ip[64];
    int port;
    long long ack;
};
long long repl_role(struct repl_role_entry *out, int max, int *n);

/* INFO stats sync_full, sync_partial_ok, sync_partial_err. */
void repl_sync_stats(long long out[3]);
/* Bytes the replication buffer holds (INFO memory mem_replication_backlog). */
size_t repl_buffer_bytes(void);

#endif
