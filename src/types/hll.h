/* types/hll.h - the HyperLogLog value: Redis's own byte layout, so that a
 * key written here reads the same in redis-server (DUMP/RESTORE, RDB) and
 * the reverse.
 *
 * An HLL is an ordinary string value.  Its bytes:
 *   0..3   "HYLL"
 *   4      encoding: HLL_DENSE (0) or HLL_SPARSE (1)
 *   5..7   unused (kept as found)
 *   8..15  cached cardinality, little endian; bit 7 of byte 15 set means
 *          "stale, recompute"
 *   16..   the registers: 16384 of them (P = 14), each the length of the
 *          0...01 run (1..51) seen in the 50 hash bits left after the index.
 * Dense: 16384 6-bit fields packed from the least significant bit of each
 * byte up, 12288 bytes, so a dense value is exactly HLL_DENSE_SIZE bytes.
 * Sparse: a run-length code over the registers, opcodes
 *   00xxxxxx           ZERO   1..64 registers at 0
 *   01xxxxxx yyyyyyyy  XZERO  1..16384 registers at 0 (14-bit length - 1)
 *   1vvvvvxx           VAL    1..4 registers at value 1..32
 * that must cover exactly 16384 registers.  A sparse value becomes dense
 * when a register needs a value above 32 or the value would grow past
 * hll-sparse-max-bytes; never the other way.
 *
 * The hash is MurmurHash64A (seed 0xadc83b19, blocks read little endian),
 * the register is the low 14 bits, and the estimate is Otmar Ertl's
 * improved estimator ("New cardinality estimation algorithms for
 * HyperLogLog sketches", arXiv:1702.01284), as Redis 5+ computes it, so
 * every PFCOUNT answer equals redis-server's.
 *
 * Every function bounds its reads by the length it is given: a hostile
 * value is reported (-1 / *invalid) and never read past its end.  Nothing
 * here knows a client or a key; the command layer (cmd/t_hll.c) holds the
 * key's slot lock, replies, notifies and propagates. */
#ifndef HK_TYPES_HLL_H
#define HK_TYPES_HLL_H

#include <stddef.h>
#include <stdint.h>

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGISTERS (1 << HLL_P)
#define HLL_BITS 6
#define HLL_REGISTER_MAX ((1 << HLL_BITS) - 1)
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * HLL_BITS + 7) / 8)
#define HLL_DENSE 0
#define HLL_SPARSE 1
#define HLL_SPARSE_VAL_MAX 32
/* An empty HLL: the header and one XZERO:16384 opcode. */
#define HLL_EMPTY_SIZE (HLL_HDR_SIZE + 2)

/* hll-sparse-max-bytes (config/config.c; Redis's default 3000).  Read
 * relaxed by every worker at each sparse update; a change applies to the
 * next update. */
extern long long hll_sparse_max_bytes;

/* A value being modified in place.  The owner (the command layer: the
 * key's entry) provides grow(), which makes at least `need` bytes
 * available at p (it may move p and must keep the first len bytes) and
 * returns 0, or -1 when it cannot.  len is the value's length; the caller
 * stores it back after the update. */
struct hll_buf {
    uint8_t *p;
    size_t len, cap;
    int (*grow)(struct hll_buf *b, size_t need);
    void *ctx;
};

/* Redis's hash of an element (MurmurHash64A as Redis runs it: blocks
 * read little endian on every platform). */
uint64_t hll_murmur64a(const void *key, size_t len, uint32_t seed);
/* Register index (*reg) and run length (1..51) of an element. */
int hll_pattern(const void *ele, size_t len, long *reg);

/* Whether bytes are an HLL as Redis's PFADD/PFCOUNT/PFMERGE accept it: at
 * least the header, the magic, a known encoding, and a dense value of
 * exactly HLL_DENSE_SIZE bytes (the sparse body is checked as it is read).
 * Otherwise the command answers WRONGTYPE ... not a valid HyperLogLog. */
int hll_is_valid(const uint8_t *v, size_t len);
static inline int hll_encoding(const uint8_t *v)
{
    return v[4];
}

/* Write an empty sparse HLL (HLL_EMPTY_SIZE bytes) at out. */
void hll_init_empty(uint8_t *out);

/* Cached cardinality: 1 and *card when valid, 0 when stale. */
int hll_cache_get(const uint8_t *v, uint64_t *card);
void hll_cache_set(uint8_t *v, uint64_t card);
void hll_cache_invalidate(uint8_t *v);

/* Add an element / raise register reg to count: 1 a register changed, 0
 * nothing to do, -1 the sparse body is corrupt (or grow() failed).  A
 * sparse value may be promoted to dense as a side effect.  The cache is
 * not touched: the caller invalidates it once per command (as Redis). */
int hll_add(struct hll_buf *b, const void *ele, size_t len);
int hll_set(struct hll_buf *b, long reg, uint8_t count);
/* Sparse -> dense: 1 converted, 0 already dense, -1 corrupt (b unchanged). */
int hll_to_dense(struct hll_buf *b);

/* max[i] = MAX(max[i], register i of v): 0, or -1 for a corrupt sparse body.
 * v must pass hll_is_valid(). */
int hll_merge(uint8_t *max, const uint8_t *v, size_t len);
/* The estimate of a valid v; *invalid set (when not NULL) if its sparse
 * body does not cover exactly 16384 registers. */
uint64_t hll_count(const uint8_t *v, size_t len, int *invalid);
/* The estimate of HLL_REGISTERS byte-wide registers (a PFCOUNT union). */
uint64_t hll_count_registers(const uint8_t *regs);
/* The same, and regs is all zeros again afterwards (only the non-zero
 * words are written): a union buffer kept zeroed between calls needs no
 * 16 KB clear per PFCOUNT. */
uint64_t hll_count_registers_clear(uint8_t *regs);

/* A PFCOUNT union, one per thread, kept between calls: max[] is all zeros
 * between uses.  Sparse merges list each register they make non-zero in
 * touched[] (a register is listed at most once: only its 0 -> non-zero
 * step adds it), so counting and clearing visit those registers alone; a
 * dense merge sets full, and then counting scans all 16384. */
struct hll_union {
    uint8_t max[HLL_REGISTERS];
    uint16_t touched[HLL_REGISTERS];
    uint32_t nt;
    int full;
};
/* Merge valid v into u: 0, or -1 for a corrupt sparse body (then call
 * hll_union_reset). */
int hll_union_add(struct hll_union *u, const uint8_t *v, size_t len);
/* The union's estimate; u is empty again afterwards. */
uint64_t hll_union_count(struct hll_union *u);
void hll_union_reset(struct hll_union *u);

/* Dense register access (regs: the 12288 bytes after the header). */
unsigned hll_dense_get(const uint8_t *regs, long i);
void hll_dense_set(uint8_t *regs, long i, unsigned val);

/* PFDEBUG DECODE's text of a sparse body ("z:N", "Z:N", "v:V,N" separated
 * by spaces), malloc'd (hk_malloc) in *out; returns its length. */
size_t hll_sparse_describe(const uint8_t *v, size_t len, char **out);

/* PFSELFTEST: 0, or -1 with the TESTFAILED message in err. */
int hll_selftest(char *err, size_t errlen);

#endif
