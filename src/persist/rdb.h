/* rdb.h - Redis's RDB format: the byte-level primitives, value encoding
 * (DUMP bodies), and whole snapshot files, read and written compatibly with
 * Redis 6.2 .. 8 (RDB versions 9 .. 12; written: 10, 11 or 12).
 *
 * A file is "REDIS" + 4 decimal digits of version, aux fields (opcode 250),
 * then per database SELECTDB (254) + RESIZEDB (251) and its keys, each
 * optionally preceded by EXPIRETIME_MS (252), IDLE (248) or FREQ (249),
 * then a type byte, the key as a string and the value; functions are
 * FUNCTION2 (245) records; EOF (255) and a CRC-64/Jones of everything
 * before it, little-endian (0 = not computed).
 *
 * Lengths: 00xxxxxx (6 bits), 01xxxxxx xxxxxxxx (14 bits, big-endian),
 * 0x80 + 4 bytes BE, 0x81 + 8 bytes BE; 11xxxxxx is a special string
 * encoding: 0/1/2 = 8/16/32-bit integer (little-endian), 3 = LZF
 * (compressed length, original length, data).
 *
 * Sinks and sources: struct rdb_out writes to a buffered fd or to memory
 * with a running CRC-64 and a sticky error; struct rdb_in reads from a
 * buffered fd or from memory, tracks the offset and records the first
 * problem as "<problem> at offset N" (every read after a failure fails). */
#ifndef HK_RDB_H
#define HK_RDB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../db/entry.h"

/* Value types (the byte before a key). */
#define RDB_TYPE_STRING 0
#define RDB_TYPE_LIST 1
#define RDB_TYPE_SET 2
#define RDB_TYPE_ZSET 3
#define RDB_TYPE_HASH 4
#define RDB_TYPE_ZSET_2 5
#define RDB_TYPE_MODULE_PRE_GA 6
#define RDB_TYPE_MODULE_2 7
#define RDB_TYPE_HASH_ZIPMAP 9
#define RDB_TYPE_LIST_ZIPLIST 10
#define RDB_TYPE_SET_INTSET 11
#define RDB_TYPE_ZSET_ZIPLIST 12
#define RDB_TYPE_HASH_ZIPLIST 13
#define RDB_TYPE_LIST_QUICKLIST 14
#define RDB_TYPE_STREAM_LISTPACKS 15
#define RDB_TYPE_HASH_LISTPACK 16
#define RDB_TYPE_ZSET_LISTPACK 17
#define RDB_TYPE_LIST_QUICKLIST_2 18
#define RDB_TYPE_STREAM_LISTPACKS_2 19
#define RDB_TYPE_SET_LISTPACK 20
#define RDB_TYPE_STREAM_LISTPACKS_3 21
#define RDB_TYPE_HASH_METADATA_PRE_GA 22
#define RDB_TYPE_HASH_LISTPACK_EX_PRE_GA 23
#define RDB_TYPE_HASH_METADATA 24
#define RDB_TYPE_HASH_LISTPACK_EX 25
#define RDB_TYPE_MAX 25
/* A value type byte (module types included: 7 loads HotKV's vector sets,
 * 6 is refused). */
#define rdb_is_object_type(t) (((t) >= 0 && (t) <= 7) || ((t) >= 9 && (t) <= RDB_TYPE_MAX))

/* Opcodes. */
#define RDB_OPCODE_SLOT_INFO 244
#define RDB_OPCODE_FUNCTION2 245
#define RDB_OPCODE_FUNCTION_PRE_GA 246
#define RDB_OPCODE_MODULE_AUX 247
#define RDB_OPCODE_IDLE 248
#define RDB_OPCODE_FREQ 249
#define RDB_OPCODE_AUX 250
#define RDB_OPCODE_RESIZEDB 251
#define RDB_OPCODE_EXPIRETIME_MS 252
#define RDB_OPCODE_EXPIRETIME 253
#define RDB_OPCODE_SELECTDB 254
#define RDB_OPCODE_EOF 255

/* Module values (RDB_TYPE_MODULE_2): after the key, the 64-bit module type
 * id as a length (Redis's scheme: a 9-character name from the alphabet
 * A-Z a-z 0-9 - _, 6 bits per character, first character in the high
 * bits, then a 10-bit encoding version), then the body as a sequence of
 * (opcode, item) pairs ending with the EOF opcode, so a reader that does not
 * know the module can still walk over it.  Opcodes and items are lengths:
 * UINT/SINT + a length, FLOAT + 4 bytes LE, DOUBLE + 8 bytes LE, STRING + a
 * string.  HotKV's vector sets are module type "hotkv-vec" (rdb_vset.c). */
#define RDB_MODULE_OPCODE_EOF 0
#define RDB_MODULE_OPCODE_SINT 1
#define RDB_MODULE_OPCODE_UINT 2
#define RDB_MODULE_OPCODE_FLOAT 3
#define RDB_MODULE_OPCODE_DOUBLE 4
#define RDB_MODULE_OPCODE_STRING 5
#define RDB_VSET_MODULE_NAME "hotkv-vec"
#define RDB_VSET_ENCVER 1
/* The id of module type name (9 characters of the alphabet) with encoding
 * version encver (0..1023); 0 when the name or version is invalid. */
uint64_t rdb_module_type_id(const char *name, int encver);
/* The 9-character name of a module type id (name: 10 bytes). */
void rdb_module_type_name(uint64_t id, char *name);

/* Length prefixes and string encodings. */
#define RDB_6BITLEN 0
#define RDB_14BITLEN 1
#define RDB_32BITLEN 0x80
#define RDB_64BITLEN 0x81
#define RDB_ENCVAL 3
#define RDB_ENC_INT8 0
#define RDB_ENC_INT16 1
#define RDB_ENC_INT32 2
#define RDB_ENC_LZF 3

/* Quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2). */
#define RDB_QL_PLAIN 1
#define RDB_QL_PACKED 2

/* Versions: the newest we read, and the ones we write. */
#define RDB_VERSION_MAX 12
#define RDB_VERSION_MIN_READ 1
#define RDB_VERSION_DEFAULT 11

/* ------------------------------------------------------------- sink --- */
struct rdb_out {
    int fd;                     /* -1: memory sink */
    unsigned char *buf;         /* memory: everything written; fd: pending bytes */
    size_t len, cap;
    size_t crc_pos;             /* buf[crc_pos..len) not yet in crc */
    uint64_t crc;               /* CRC-64 of the bytes before crc_pos (when checksum) */
    unsigned long long written; /* bytes written so far (both kinds) */
    int compress;               /* rdb_w_str LZF-compresses strings > 20 bytes when it pays */
    int checksum;               /* keep the running CRC (default 1) */
    int err;                    /* sticky: errno of the first failed write (ENOSPC, EIO ...) */
    /* fd sinks: fdatasync every this many bytes (0 = never; rdb-save-incremental-fsync) */
    unsigned long long fsync_every, synced;
    /* Files put the key between a value's type byte and its payload: when
     * set, the next rdb_w_type writes this key (as a string) right after
     * the type byte and clears it.  rdb_save sets it before each value, so
     * value writers (rdb_save_value, rdb_save_stream) stay key-agnostic. */
    const char *pending_key;
    size_t pending_klen;
    /* fd sinks: with tee_n > 0 every write goes to each of tee_fds[] that
     * has not failed (tee_dead[i] set on its first failed write), instead
     * of fd; an error only when all have failed.  One snapshot streamed to
     * several replicas at once (persist/repl.c). */
    const int *tee_fds;
    int *tee_dead;
    int tee_n;
};

void rdb_out_init_fd(struct rdb_out *o, int fd);
void rdb_out_init_mem(struct rdb_out *o);   /* o->buf/o->len readable after */
int rdb_out_flush(struct rdb_out *o);       /* 0 / -1 (memory sinks: always 0) */
void rdb_out_free(struct rdb_out *o);
/* The CRC-64 of everything written so far (0 when checksum is off). */
uint64_t rdb_out_crc(struct rdb_out *o);

/* All return 0, or -1 once o->err is set (then every later call too). */
int rdb_w_raw(struct rdb_out *o, const void *p, size_t n);
int rdb_w_type(struct rdb_out *o, unsigned char t);
int rdb_w_len(struct rdb_out *o, uint64_t len);
/* A string: integer-encoded when it is the canonical form of a value that
 * fits 32 bits, LZF-compressed when o->compress and it pays, else raw. */
int rdb_w_str(struct rdb_out *o, const void *s, size_t n);
/* A string written raw or LZF, never integer-encoded (listpacks, intsets). */
int rdb_w_blob(struct rdb_out *o, const void *s, size_t n);
int rdb_w_ll_str(struct rdb_out *o, long long v); /* an integer as a string object */
int rdb_w_double_bin(struct rdb_out *o, double d);
int rdb_w_millis(struct rdb_out *o, long long ms); /* 8 bytes LE */

/* ----------------------------------------------------------- source --- */
struct rdb_in {
    int fd;                         /* -1: memory source */
    const unsigned char *mem;       /* memory: the data; fd: the buffer */
    unsigned char *buf;             /* fd: owned buffer */
    size_t pos, len, cap;           /* read position / valid bytes in mem */
    size_t crc_pos;                 /* mem[crc_pos..pos) not yet in crc */
    unsigned long long base;        /* offset of mem[0] in the stream */
    long long fd_start;             /* fd: its position when initialized */
    long long fsize;                /* fd: the file's size when regular (else -1) */
    uint64_t crc;
    int checksum;                   /* keep the running CRC (default 1) */
    int version;                    /* RDB version of the data (old encodings) */
    /* Whether the configuration asks for deep sanitization here
     * (sanitize-dump-payload; rdb_deep_for).  Loading checks every blob in
     * full either way (rdb_types.c); this only decides whether the checks
     * count in INFO's dump_payload_sanitizations, as Redis counts its own
     * deep checks. */
    int deep;
    int empty_key;                  /* rdb_load_value: the value was empty (not an error in files) */
    int failed;
    char err[256];                  /* "<problem> at offset N" */
    unsigned long long limit;       /* stop reading past this offset (0: none) */
    long long now_ms;               /* "now" for dropping expired hash fields (0: time_ms()) */
    int allow_dup;                  /* rdb_load_in: existing keys / libraries are replaced */
    /* rdb_load_in into a shadow dataset (db.h) instead of the keyspace:
     * the keys go to `shadow`, the function libraries are kept in `libs`
     * (rdb_libs_*) for the swap, nothing in the keyspace is touched. */
    struct db_shadow *shadow;
    struct rdb_libs *libs;
    /* hotkv-check-rdb: a module value of a type we do not know is walked
     * over (opcode framing) instead of refused; rdb_load_value then returns
     * NULL with empty_key = 3 and the type's name in module_name. */
    int skip_modules;
    char module_name[10];
    /* rdb_load_in: called for each key dropped because its TTL had passed
     * (a master's start-up streams a DEL for it, as Redis's
     * RDBFLAGS_FEED_REPL); NULL: none. */
    void (*on_expired)(void *arg, int db, const char *key, size_t len);
    void *on_expired_arg;
};

/* Deep checks counted for INFO's dump_payload_sanitizations: each blob
 * (listpack, ziplist, zipmap, intset, quicklist node, stream node) read
 * with in->deep set.  Any thread; relaxed. */
extern unsigned long long rdb_sanitizations;
/* Keys written by save_db so far (a snapshot child's progress): a counter
 * in memory shared with the parent (persist/snapshot.c sets it at start-up;
 * NULL: none). */
extern _Atomic unsigned long long *rdb_keys_done;
static inline void rdb_sanitized(const struct rdb_in *in)
{
    if (in->deep)
        __atomic_add_fetch(&rdb_sanitizations, 1, __ATOMIC_RELAXED);
}

void rdb_in_init_fd(struct rdb_in *in, int fd);
void rdb_in_init_mem(struct rdb_in *in, const void *p, size_t n);
/* Release the buffer; an fd source seeks its fd back to just after the last
 * byte consumed (so an AOF reader continues after an RDB preamble). */
void rdb_in_free(struct rdb_in *in);
/* Offset of the next unread byte. */
static inline unsigned long long rdb_in_offset(const struct rdb_in *in)
{
    return in->base + in->pos;
}
/* CRC-64 of every byte consumed so far (when checksum is on). */
uint64_t rdb_in_crc(struct rdb_in *in);

int rdb_r_raw(struct rdb_in *in, void *p, size_t n); /* 0 / -1 (short read sets error) */
int rdb_r_type(struct rdb_in *in, int *t);
int rdb_r_len(struct rdb_in *in, uint64_t *len, int *is_encoded);
/* A string (any encoding) into a new hk_malloc'd buffer, NUL-terminated
 * (not counted in *len); the caller hk_frees it.  NULL on error. */
unsigned char *rdb_r_str(struct rdb_in *in, size_t *len);
/* The rest of a string whose length prefix was read already (rdb_r_len
 * with is_encoded): same result as rdb_r_str. */
unsigned char *rdb_r_str_rest(struct rdb_in *in, uint64_t len, int enc, size_t *lenp);
/* An LZF string after its encoding byte: the lengths (checked: the source
 * can hold clen more bytes, ulen is within LZF's expansion), then the body
 * decompressed into dst (exactly ulen bytes).  0 / -1. */
int rdb_r_lzf_head(struct rdb_in *in, uint64_t *clen, uint64_t *ulen);
int rdb_r_lzf_body(struct rdb_in *in, uint64_t clen, void *dst, uint64_t ulen);
/* Could the source still hold n more bytes?  (Memory sources and regular
 * files know their size: the guard against allocating what a corrupt
 * length claims.) */
int rdb_in_room(struct rdb_in *in, uint64_t n);
/* Untrusted counts and sizes (element counts, node counts ...):
 * rdb_in_left is how many bytes the source still holds (UINT64_MAX when
 * unknown: a pipe).  rdb_r_count reads a count (rdb_r_len, not encoded)
 * of things that each take at least minsz bytes of input, and fails the
 * source when the input left cannot hold that many: a count is checked
 * before anything is allocated or looped on.  rdb_presize is what a
 * structure may be presized for from a count that passed: at most the
 * bytes left and at most RDB_PRESIZE_MAX (it grows past that as elements
 * really arrive).  No string (nor LZF result) is bigger than
 * RDB_MAX_STRING. */
#define RDB_PRESIZE_MAX ((uint64_t)1 << 20)
#define RDB_MAX_STRING ((uint64_t)1 << 32)
uint64_t rdb_in_left(struct rdb_in *in);
int rdb_r_count(struct rdb_in *in, uint64_t *n, unsigned minsz, const char *what);
int rdb_check_count(struct rdb_in *in, uint64_t n, unsigned minsz, const char *what); /* the bound alone */
size_t rdb_presize(struct rdb_in *in, uint64_t n);
int rdb_r_double_bin(struct rdb_in *in, double *d);
/* The old ZSET (type 3) text double: 1 length byte (253 nan, 254 inf, 255 -inf). */
int rdb_r_double_str(struct rdb_in *in, double *d);
int rdb_r_millis(struct rdb_in *in, long long *ms);
/* Records "<problem> at offset N" (the first problem only) and fails the source. */
void rdb_in_fail(struct rdb_in *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read and discard a string: 0 / -1. */
int rdb_r_skip_str(struct rdb_in *in);

/* ----------------------------------------------------------- values --- */
/* Type byte + payload of one entry (also the DUMP body).  version decides
 * which encodings may be used (see rdb_types.c). */
int rdb_save_value(struct rdb_out *o, struct entry *e, int version);
/* The payload of a value of rdb type t: a new entry for key (expire as
 * given, -1 none), or NULL with in's error set, or NULL with in->empty_key
 * (a value without elements, or a hash whose every field had expired). */
struct entry *rdb_load_value(struct rdb_in *in, int t, const char *key, size_t klen, long long expire);
/* Skip a value of rdb type t without building it (hotkv-check-rdb counts
 * elements through it): 0 / -1.  *elems gets the element count. */
int rdb_skip_value(struct rdb_in *in, int t, unsigned long long *elems);
/* Name of an rdb type ("string", "quicklist2" ...), "unknown" otherwise. */
const char *rdb_type_name(int t);

/* Vector sets (rdb_vset.c): the module value (type byte 7 + id + body)
 * of an OBJ_VSET entry, and the body's loader (after the type byte; reads
 * the module id first).  Values of other module types are refused, or
 * skipped with in->skip_modules. */
int rdb_save_vset(struct rdb_out *o, struct entry *e);
struct entry *rdb_load_module(struct rdb_in *in, const char *key, size_t klen, long long expire);

/* Streams (helper S, rdb_stream.c). */
int rdb_save_stream(struct rdb_out *o, struct entry *e, int version);  /* writes type byte + payload */
void *rdb_load_stream(struct rdb_in *in, int t, uint8_t *enc);         /* the structure for entry_new_obj */

/* ------------------------------------------------------------ files --- */
/* The replication history a snapshot stands for: aux fields repl-id,
 * repl-offset and repl-stream-db (id "" : none written), so that a
 * restarted master or replica resumes with a partial resync.  Set by
 * persist/snapshot.c while the keyspace is frozen; rdb_save_opts_from_cfg
 * copies it (a fork child inherits it). */
struct rdb_repl_mark {
    char id[41];
    long long offset;
    int stream_db;
};
extern struct rdb_repl_mark rdb_repl_mark;
struct rdb_save_opts {
    int version, compress, checksum;
    int aof_preamble;              /* aux aof-base 1 */
    long long key_save_delay_us;   /* rdb-key-save-delay (tests) */
    struct rdb_repl_mark repl;     /* repl-* aux fields (id "": none) */
    int no_data, no_functions;     /* leave the keys / the function libraries out (REPLCONF rdb-filter-only) */
};
/* Fill opts from the configuration (rdb-version, rdbcompression, rdbchecksum, delay). */
void rdb_save_opts_from_cfg(struct rdb_save_opts *opt);
/* The whole snapshot: header .. EOF + checksum.  The keyspace must be
 * frozen (a fork child, or the caller holds db_lock_all). */
int rdb_save(struct rdb_out *o, const struct rdb_save_opts *opt);
/* rdb_save into path via "temp-<pid>.rdb" in the same directory, fsync,
 * rename, fsync of the directory.  0, or -1 with err filled. */
int rdb_save_file(const char *path, const struct rdb_save_opts *opt, char *err, size_t errlen);

struct rdb_load_stats {
    int version;
    unsigned long long keys, expired, empty; /* empty: empty keys skipped */
    long long ctime;
    char redis_ver[32];
    int aof_base;
    long long used_mem;
    struct rdb_repl_mark repl; /* repl-id (40 hex digits, else ""), repl-offset, repl-stream-db */
};
/* Load a file into the keyspace (the caller guarantees exclusive access:
 * before workers start, or all locks held).  0; -1 with err naming the
 * offset and problem; -2 when the file does not exist.  A key or function
 * library that exists already is an error ("Duplicate key ..."), except
 * with RDB_LOAD_ALLOW_DUP (DEBUG RELOAD NOFLUSH), where the file's wins. */
int rdb_load_file(const char *path, struct rdb_load_stats *st, char *err, size_t errlen);
#define RDB_LOAD_ALLOW_DUP 1
int rdb_load_file_flags(const char *path, int flags, struct rdb_load_stats *st, char *err, size_t errlen);
/* rdb_load_file with rdb_in.on_expired set (see there). */
int rdb_load_file_expired(const char *path, struct rdb_load_stats *st, char *err, size_t errlen,
                          void (*on_expired)(void *arg, int db, const char *key, size_t len), void *arg);
/* Load from an open source (AOF preamble): 0 / -1 (in->err). */
int rdb_load_in(struct rdb_in *in, struct rdb_load_stats *st);

/* Function libraries.  They live in script/ (above persist/), so snapshots
 * (rdb.c: FUNCTION2 records; aof.c: FUNCTION LOAD in a rewrite;
 * snapshot.c: DEBUG RELOAD's flush) reach them through these hooks, which
 * script/function.c registers before main() (a constructor: every program
 * that links it, the unit tests and fuzz targets too, has them from the
 * start).  With none registered there are no libraries: nothing to save or
 * flush, and a library in a file cannot be loaded (an error). */
struct rdb_fn_hooks {
    /* cb on the code of every library in load order, stopping at (and
     * returning) a negative result; the caller holds the script mutex or
     * is a fork child. */
    int (*foreach_lib)(int (*cb)(void *arg, const char *code, size_t len), void *arg);
    /* Create a library from its code (the caller has exclusive access):
     * 0, or -1 with err filled (a name already loaded is an error unless
     * replace). */
    int (*load_lib)(const char *code, size_t len, int replace, char *err, size_t errlen);
    /* Drop every library (DEBUG RELOAD before loading; script mutex held). */
    void (*flush_libs)(void);
};
void rdb_set_fn_hooks(const struct rdb_fn_hooks *h);
/* The registered hooks, or their no-library defaults (persist/ only). */
int rdb_fn_foreach_lib(int (*cb)(void *arg, const char *code, size_t len), void *arg);
int rdb_fn_load_lib(const char *code, size_t len, int replace, char *err, size_t errlen);
void rdb_fn_flush_libs(void);
/* The libraries an async load (rdb_in.libs) read: kept (add takes code),
 * then installed in place of every current library (keyspace frozen). */
struct rdb_libs;
struct rdb_libs *rdb_libs_new(void);
void rdb_libs_add(struct rdb_libs *l, unsigned char *code, size_t len);
int rdb_libs_install(struct rdb_libs *l, char *err, size_t errlen);
void rdb_libs_free(struct rdb_libs *l);

/* hotkv-check-rdb <file> (rdb_check.c; main.c dispatches on argv[0]). */
int rdb_check_main(int argc, char **argv);

/* The idle/frequency opcodes we write for a key in this maxmemory-policy:
 * 1 = IDLE (an LRU policy), 2 = FREQ (LFU), 0 none. */
int rdb_lru_mode(void);
/* Set a loaded entry's LRU/LFU field from an IDLE (seconds, -1 none) or
 * FREQ (0..255, -1 none) as Redis does: the frequency under an LFU policy,
 * else the idle time. */
void rdb_apply_lru(struct entry *e, long long idle, int freq);

#endif
