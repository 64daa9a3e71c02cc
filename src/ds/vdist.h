/* vdist.h - distance kernels for vector sets (float32, int8, binary), with
 * runtime CPU dispatch.
 *
 * Every kernel has a portable scalar reference (vd_*_scalar) that the unit
 * tests check the fast paths against.  vd_init() picks, once, the best
 * implementation the CPU offers: AVX-512 (F+BW, VNNI for int8, VPOPCNTDQ
 * for binary), AVX2+FMA, else scalar.  The dispatch pointers are written
 * once before any worker starts and only read afterwards.
 *
 * Vectors in a set are L2-normalised, so cosine similarity is the dot
 * product; the distance the index orders by is 1 - dot (0..2). */
#ifndef HK_VDIST_H
#define HK_VDIST_H

#include <stddef.h>
#include <stdint.h>

enum { VD_SCALAR = 0, VD_AVX2 = 1, VD_AVX512 = 2 };

/* Dot product of two float vectors of n components. */
extern float (*vd_dot_f32)(const float *a, const float *b, uint32_t n);
/* Dot product of two int8 vectors of n components (exact, 32-bit). */
extern int32_t (*vd_dot_i8)(const int8_t *a, const int8_t *b, uint32_t n);
/* Dot product of a float vector with an int8 vector (asymmetric search of
 * a Q8 set with an unquantised query); the caller applies the scale. */
extern float (*vd_dot_f32_i8)(const float *a, const int8_t *b, uint32_t n);
/* Number of differing bits between two bitmaps of nwords 64-bit words. */
extern uint32_t (*vd_hamming)(const uint64_t *a, const uint64_t *b, uint32_t nwords);
/* Split planes (hnsw.c's float32 sets): a float32 vector kept as its high
 * 16 bits (bfloat16, truncated) in one array and its low 16 bits in
 * another.  Dot product of a float vector with the high plane only (half
 * the bytes; each component's relative error is below 2^-7, so for unit
 * vectors the result is within 2^-7 of the exact dot); of two high
 * planes; and exact, of a float vector with both planes (bit for bit
 * vd_dot_f32 on the reassembled vector). */
extern float (*vd_dot_f32_bf16)(const float *a, const uint16_t *hi, uint32_t n);
extern float (*vd_dot_bf16)(const uint16_t *a, const uint16_t *b, uint32_t n);
extern float (*vd_dot_f32_split)(const float *a, const uint16_t *hi, const uint16_t *lo, uint32_t n);

float vd_dot_f32_scalar(const float *a, const float *b, uint32_t n);
int32_t vd_dot_i8_scalar(const int8_t *a, const int8_t *b, uint32_t n);
float vd_dot_f32_i8_scalar(const float *a, const int8_t *b, uint32_t n);
uint32_t vd_hamming_scalar(const uint64_t *a, const uint64_t *b, uint32_t nwords);
float vd_dot_f32_bf16_scalar(const float *a, const uint16_t *hi, uint32_t n);
float vd_dot_bf16_scalar(const uint16_t *a, const uint16_t *b, uint32_t n);
float vd_dot_f32_split_scalar(const float *a, const uint16_t *hi, const uint16_t *lo, uint32_t n);

/* Pick the kernels for this CPU (idempotent; call before threads start). */
void vd_init(void);
/* Force a level no higher than max_level (tests; VD_SCALAR..VD_AVX512);
 * returns the level actually selected. */
int vd_select(int max_level);
/* vd_select() with optional AVX-512 features turned off (tests of the
 * fallbacks inside the AVX-512 level): VD_NO_VNNI makes the int8 dot use
 * AVX-512BW vpmaddwd, VD_NO_VPOPCNTDQ makes hamming use POPCNT. */
enum { VD_NO_VNNI = 1, VD_NO_VPOPCNTDQ = 2 };
int vd_select_masked(int max_level, unsigned disable);
/* The level in use and its name ("scalar", "avx2", "avx512"). */
int vd_level(void);
const char *vd_level_name(void);

#endif
