/* stream.h - the entries of a Redis stream: ID-ordered records of
 * field/value pairs (types/stream.c builds the STREAM type on it, consumer
 * groups included).
 *
 * Layout: a stream is an array of pointers to blocks, in ID order.  A block
 * is one allocation holding a run of consecutive entries packed as bytes:
 *
 *   block:  base id (ms, seq) | last id | used, cap | count, live |
 *           master fields (count; bytes: nmaster x (varint flen, name)) |
 *           entries...
 *   entry:  flags (1 byte: bit 0 = deleted, bit 1 = same fields)
 *           varint ms - base.ms | varint seq
 *           same fields: nmaster x (varint vlen, value bytes)
 *           otherwise:   varint nfields,
 *                        nfields x (varint flen, field bytes, varint vlen, value bytes)
 *
 * The master fields are the field names of the block's first entry; an
 * entry with exactly those names (the usual case: a stream's producers
 * write the same fields) stores only its values, as Redis's listpack
 * nodes do.
 *
 * (varints are LEB128: 7 bits a byte, the high bit says "more".)  IDs only
 * grow, so appends always go to the last block; a new block starts when the
 * last one holds `node_max_entries` entries (deleted ones included) or the
 * entry would take it past `node_max_bytes` bytes (0 = no limit for
 * either): Redis's stream-node-max-entries / stream-node-max-bytes, with the
 * same meaning, so approximate trimming (MAXLEN ~) removes the same whole
 * blocks Redis removes whole listpack nodes.
 *
 * Seek by ID: binary search over the blocks' base IDs (O(log n)), then a
 * walk inside one block (at most node_max_entries entries).  Deletion marks
 * an entry deleted (a tombstone, as Redis does); a block whose entries are
 * all deleted is freed, and a block with more tombstones than live entries
 * is rewritten without them.  Trimming frees whole blocks from the head and
 * marks tombstones in the first block that survives.
 *
 * Not thread-safe: the owner (an entry under its slot lock) serializes. */
#ifndef HK_STREAM_H
#define HK_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct stream_id {
    uint64_t ms, seq;
};

static inline int sid_cmp(const struct stream_id *a, const struct stream_id *b)
{
    if (a->ms != b->ms)
        return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

/* Next / previous ID; -1 (id unchanged) past UINT64_MAX-UINT64_MAX / 0-0. */
int sid_incr(struct stream_id *id);
int sid_decr(struct stream_id *id);
/* "ms-seq" into buf (>= 42 bytes); returns the length. */
int sid_format(char *buf, const struct stream_id *id);

struct sblock;

struct stream {
    struct sblock **blk;          /* blocks in ID order */
    size_t nblk, cap;
    uint64_t length;              /* live entries */
    struct stream_id last_id;     /* last ID added (or set by XSETID) */
    struct stream_id first_id;    /* first live entry, 0-0 when empty */
    struct stream_id max_deleted; /* max_deleted_entry_id */
    uint64_t entries_added;       /* entries ever added */
    void *cgroups;                /* consumer groups: owned by types/stream.c */
};

/* Node limits (stream-node-max-bytes / -entries; 0 = unlimited). */
extern long long stream_node_max_bytes, stream_node_max_entries;

struct stream *stream_new(void);
/* Frees the entries and the struct (not cgroups: the caller's). */
void stream_free(struct stream *s);
/* A copy of the entries and counters (cgroups NULL in the copy). */
struct stream *stream_dup(const struct stream *s);
/* Bytes allocated for the entries (not cgroups). */
size_t stream_mem(const struct stream *s);
/* Number of blocks (the "radix-tree-keys" of XINFO). */
static inline size_t stream_blocks(const struct stream *s)
{
    return s->nblk;
}

/* Append an entry with ID *id (> s->last_id: the caller checks) and
 * nfields field/value pairs fv[0], fv[1], ... (lengths in fvlen).
 * Updates last_id, length, entries_added, first_id. */
void stream_append(struct stream *s, const struct stream_id *id, const char *const *fv, const size_t *fvlen,
                   size_t nfields);

/* Mark the entry with ID *id deleted: 1 if it was there and live.
 * Updates length and first_id (not max_deleted: XDEL's business). */
int stream_delete(struct stream *s, const struct stream_id *id);

/* Trim from the head.  maxlen >= 0: keep at most maxlen entries (MAXLEN);
 * else minid: remove entries with ID < *minid (MINID).  approx: only whole
 * blocks; limit: at most this many entries (0 = no limit), whole blocks
 * only as Redis counts it.  Returns the entries removed. */
long long stream_trim(struct stream *s, long long maxlen, const struct stream_id *minid, int approx, long long limit);

/* ID of the last live entry (0-0 and returns 0 when the stream is empty). */
int stream_last_entry(const struct stream *s, struct stream_id *id);

/* One entry as an iterator returns it; its fields follow p. */
struct stream_entry {
    struct stream_id id;
    uint64_t nfields;
    const unsigned char *p;     /* next value (or field, value) */
    const unsigned char *mf;    /* next master field name, NULL if stored inline */
};
/* The next field/value pair of an entry (call nfields times; advances e). */
void stream_entry_field(struct stream_entry *e, const char **f, size_t *flen, const char **v, size_t *vlen);

/* Iteration over live entries with start <= id <= end, ascending or (rev)
 * descending.  The stream must not change while an iterator is in use. */
struct stream_iter {
    const struct stream *s;
    struct stream_id start, end;
    int rev, done;
    size_t bi;                  /* current block */
    uint32_t off;               /* forward: next entry's offset */
    uint32_t *offs;             /* reverse: entry offsets of block bi */
    uint32_t noffs, offcap;
    int oi;                     /* reverse: next index into offs, -1 = load the block before */
};
void stream_iter_start(struct stream_iter *it, const struct stream *s, const struct stream_id *start,
                       const struct stream_id *end, int rev);
int stream_iter_next(struct stream_iter *it, struct stream_entry *e);
void stream_iter_stop(struct stream_iter *it);

/* Look up one live entry by ID: 1 and *e filled, else 0. */
int stream_get(const struct stream *s, const struct stream_id *id, struct stream_entry *e);

/* Whether some entry with first <= id <= last was deleted (an XDEL
 * tombstone or a trimmed entry) as far as the stream can tell: used for
 * consumer-group lag (Redis's streamRangeHasTombstones). */
int stream_range_has_tombstones(const struct stream *s, const struct stream_id *first, const struct stream_id *last);

/* ---- Persistence (persist/rdb_stream.c): raw access to the blocks. ----
 * A block is what Redis calls a node (one listpack under its master ID):
 * saving writes one node per block, loading makes one block per node, so
 * a stream keeps its node boundaries (and tombstones) across a trip. */
#define STREAM_ENTRY_DELETED 0x01    /* the entry flags, as Redis numbers them */
#define STREAM_ENTRY_SAMEFIELDS 0x02
struct stream_node {
    struct stream_id base;      /* the node's master ID */
    uint32_t count, live;       /* entries (tombstones included) / live ones */
    uint32_t nmaster;           /* master field names */
    const unsigned char *mf;    /* (cursors) */
    const void *blk;
    const unsigned char *p, *end;
};
/* Block i (< stream_blocks(s)). */
void stream_node_open(const struct stream *s, size_t i, struct stream_node *n);
/* The next master field name (call nmaster times). */
void stream_node_master(struct stream_node *n, const char **f, size_t *flen);
/* The next entry, tombstones included (then read its fields with
 * stream_entry_field); *flags gets STREAM_ENTRY_*.  0 past the last. */
int stream_node_next(struct stream_node *n, struct stream_entry *e, unsigned *flags);

/* Loading: stream_load_node starts a new last block with master ID *base
 * (above every ID already in s) and the given master field names; then
 * stream_load_entry appends its entries in ascending ID order (each >=
 * base; deleted ones as tombstones), ignoring the node limits (hint:
 * the bytes the entries are expected to take, 0 if unknown); then
 * stream_load_node_end closes it: frees it when no entry is live, returns
 * the live entries.  The stream's counters (length, last_id, first_id,
 * ...) are the caller's to set.  stream_load_entry returns -1 (nothing
 * added) when the block would pass 4 GiB. */
void stream_load_node(struct stream *s, const struct stream_id *base, const char *const *mf, const size_t *mflen,
                      size_t nmaster, size_t hint);
int stream_load_entry(struct stream *s, const struct stream_id *id, const char *const *fv, const size_t *fvlen,
                      size_t nfields, int deleted);
uint32_t stream_load_node_end(struct stream *s);

#endif
