/* vdist.c - see vdist.h.
 *
 * Scalar references first, then (x86-64 only) the SIMD paths, each
 * function compiled for its instruction set with a target attribute so the
 * rest of the binary stays baseline x86-64; vd_select() installs the best
 * ones the CPU (and the OS, which __builtin_cpu_supports checks through
 * XCR0) supports.
 *
 * Levels:
 *  - VD_AVX2: AVX2+FMA.  float dot with 4 FMA accumulators; int8 dot by
 *    sign-extending to 16 bits (vpmovsxbw) and vpmaddwd (exact: a pair
 *    sums to at most 2 * 128 * 128); float x int8 by vpmovsxbd + cvtdq2ps;
 *    hamming with the POPCNT instruction.
 *  - VD_AVX512: AVX-512 F+BW.  float dot with 4 zmm accumulators and a
 *    masked tail; int8 dot with VNNI vpdpbusd when present (it multiplies
 *    unsigned by signed bytes, so a is offset by 128 (a ^ 0x80 = a + 128
 *    as an unsigned byte) and 128 * sum(b), computed with a second vpdpbusd
 *    against all-ones, is subtracted), else vpmovsxbw + vpmaddwd; hamming
 *    with VPOPCNTDQ when present, else the POPCNT loop. */
#include <string.h>

#include "vdist.h"

float vd_dot_f32_scalar(const float *a, const float *b, uint32_t n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* bfloat16 is the high half of a float32: widening is a shift. */
static inline float bf16_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static inline float split_f32(uint16_t h, uint16_t l)
{
    uint32_t u = ((uint32_t)h << 16) | l;
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* The three split-plane kernels keep vd_dot_f32_scalar's order of
 * additions, so the exact one gives bit for bit what vd_dot_f32 gives on
 * the reassembled vector (at every level: each mirrors its level's f32
 * kernel). */
float vd_dot_f32_bf16_scalar(const float *a, const uint16_t *b, uint32_t n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * bf16_f32(b[i]);
        s1 += a[i + 1] * bf16_f32(b[i + 1]);
        s2 += a[i + 2] * bf16_f32(b[i + 2]);
        s3 += a[i + 3] * bf16_f32(b[i + 3]);
    }
    for (; i < n; i++)
        s0 += a[i] * bf16_f32(b[i]);
    return (s0 + s1) + (s2 + s3);
}

float vd_dot_bf16_scalar(const uint16_t *a, const uint16_t *b, uint32_t n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += bf16_f32(a[i]) * bf16_f32(b[i]);
        s1 += bf16_f32(a[i + 1]) * bf16_f32(b[i + 1]);
        s2 += bf16_f32(a[i + 2]) * bf16_f32(b[i + 2]);
        s3 += bf16_f32(a[i + 3]) * bf16_f32(b[i + 3]);
    }
    for (; i < n; i++)
        s0 += bf16_f32(a[i]) * bf16_f32(b[i]);
    return (s0 + s1) + (s2 + s3);
}

float vd_dot_f32_split_scalar(const float *a, const uint16_t *hi, const uint16_t *lo, uint32_t n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * split_f32(hi[i], lo[i]);
        s1 += a[i + 1] * split_f32(hi[i + 1], lo[i + 1]);
        s2 += a[i + 2] * split_f32(hi[i + 2], lo[i + 2]);
        s3 += a[i + 3] * split_f32(hi[i + 3], lo[i + 3]);
    }
    for (; i < n; i++)
        s0 += a[i] * split_f32(hi[i], lo[i]);
    return (s0 + s1) + (s2 + s3);
}

int32_t vd_dot_i8_scalar(const int8_t *a, const int8_t *b, uint32_t n)
{
    int32_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

float vd_dot_f32_i8_scalar(const float *a, const int8_t *b, uint32_t n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * (float)b[i];
        s1 += a[i + 1] * (float)b[i + 1];
        s2 += a[i + 2] * (float)b[i + 2];
        s3 += a[i + 3] * (float)b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * (float)b[i];
    return (s0 + s1) + (s2 + s3);
}

uint32_t vd_hamming_scalar(const uint64_t *a, const uint64_t *b, uint32_t nwords)
{
    uint32_t s = 0;
    for (uint32_t i = 0; i < nwords; i++)
        s += (uint32_t)__builtin_popcountll(a[i] ^ b[i]);
    return s;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define T_AVX2 __attribute__((target("avx2,fma,popcnt")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,popcnt")))
#define T_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma")))
#define T_VPOPCNT __attribute__((target("avx512f,avx512bw,avx512vpopcntdq,popcnt")))

/* ------------------------------------------------------------- AVX2+FMA */

T_AVX2 static inline float hsum256_ps(__m256 v)
{
    __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

T_AVX2 static inline int32_t hsum256_epi32(__m256i v)
{
    __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(1, 0, 3, 2)));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(x);
}

T_AVX2 static float dot_f32_avx2(const float *a, const float *b, uint32_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum256_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* 8 bf16 -> 8 floats; 8 split pairs -> 8 floats. */
T_AVX2 static inline __m256 bf16x8_ps(const uint16_t *p)
{
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

T_AVX2 static inline __m256 splitx8_ps(const uint16_t *h, const uint16_t *l)
{
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)h));
    __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)l));
    return _mm256_castsi256_ps(_mm256_or_si256(_mm256_slli_epi32(w, 16), x));
}

#define DOT_AVX2_BODY(LA, LB, TAIL)                                     \
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();          \
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();          \
    uint32_t i = 0;                                                     \
    for (; i + 32 <= n; i += 32) {                                      \
        s0 = _mm256_fmadd_ps(LA(i), LB(i), s0);                         \
        s1 = _mm256_fmadd_ps(LA(i + 8), LB(i + 8), s1);                 \
        s2 = _mm256_fmadd_ps(LA(i + 16), LB(i + 16), s2);               \
        s3 = _mm256_fmadd_ps(LA(i + 24), LB(i + 24), s3);               \
    }                                                                   \
    for (; i + 8 <= n; i += 8)                                          \
        s0 = _mm256_fmadd_ps(LA(i), LB(i), s0);                         \
    float s = hsum256_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3))); \
    for (; i < n; i++)                                                  \
        s += TAIL;                                                      \
    return s;

T_AVX2 static float dot_f32_bf16_avx2(const float *a, const uint16_t *b, uint32_t n)
{
#define LA(k) _mm256_loadu_ps(a + (k))
#define LB(k) bf16x8_ps(b + (k))
    DOT_AVX2_BODY(LA, LB, a[i] * bf16_f32(b[i]))
#undef LA
#undef LB
}

T_AVX2 static float dot_bf16_avx2(const uint16_t *a, const uint16_t *b, uint32_t n)
{
#define LA(k) bf16x8_ps(a + (k))
#define LB(k) bf16x8_ps(b + (k))
    DOT_AVX2_BODY(LA, LB, bf16_f32(a[i]) * bf16_f32(b[i]))
#undef LA
#undef LB
}

T_AVX2 static float dot_f32_split_avx2(const float *a, const uint16_t *hi, const uint16_t *lo, uint32_t n)
{
#define LA(k) _mm256_loadu_ps(a + (k))
#define LB(k) splitx8_ps(hi + (k), lo + (k))
    DOT_AVX2_BODY(LA, LB, a[i] * split_f32(hi[i], lo[i]))
#undef LA
#undef LB
}

T_AVX2 static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, uint32_t n)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i + 16)));
        __m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i + 16)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x0, y0));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(x1, y1));
    }
    for (; i + 16 <= n; i += 16) {
        __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x, y));
    }
    int32_t s = hsum256_epi32(_mm256_add_epi32(s0, s1));
    for (; i < n; i++)
        s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

/* 8 int8 -> 8 floats. */
T_AVX2 static inline __m256 i8x8_to_ps(const int8_t *p)
{
    int64_t w;
    __builtin_memcpy(&w, p, 8);
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(w)));
}

T_AVX2 static float dot_f32_i8_avx2(const float *a, const int8_t *b, uint32_t n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    uint32_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), i8x8_to_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), i8x8_to_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), i8x8_to_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), i8x8_to_ps(b + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), i8x8_to_ps(b + i), s0);
    float s = hsum256_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++)
        s += a[i] * (float)b[i];
    return s;
}

/* POPCNT instruction (the scalar reference compiles to a bit-trick
 * sequence on baseline x86-64). */
T_AVX2 static uint32_t hamming_popcnt(const uint64_t *a, const uint64_t *b, uint32_t nwords)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    uint32_t i = 0;
    for (; i + 4 <= nwords; i += 4) {
        s0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
        s1 += (uint64_t)__builtin_popcountll(a[i + 1] ^ b[i + 1]);
        s2 += (uint64_t)__builtin_popcountll(a[i + 2] ^ b[i + 2]);
        s3 += (uint64_t)__builtin_popcountll(a[i + 3] ^ b[i + 3]);
    }
    for (; i < nwords; i++)
        s0 += (uint64_t)__builtin_popcountll(a[i] ^ b[i]);
    return (uint32_t)(s0 + s1 + s2 + s3);
}

/* -------------------------------------------------------------- AVX-512 */

T_AVX512 static float dot_f32_avx512(const float *a, const float *b, uint32_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    uint32_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), _mm512_loadu_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), _mm512_loadu_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16)
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s1);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s2);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

T_AVX512 static inline __m512 bf16x16_ps(const uint16_t *p)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

T_AVX512 static inline __m512 bf16x16_ps_m(__mmask16 m, const uint16_t *p)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

T_AVX512 static inline __m512 splitx16_ps(const uint16_t *h, const uint16_t *l)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)h));
    __m512i x = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)l));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_slli_epi32(w, 16), x));
}

T_AVX512 static inline __m512 splitx16_ps_m(__mmask16 m, const uint16_t *h, const uint16_t *l)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, h));
    __m512i x = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, l));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_slli_epi32(w, 16), x));
}

#define DOT_AVX512_BODY(LA, LB, LAM, LBM)                                         \
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();                    \
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();                    \
    uint32_t i = 0;                                                               \
    for (; i + 64 <= n; i += 64) {                                                \
        s0 = _mm512_fmadd_ps(LA(i), LB(i), s0);                                   \
        s1 = _mm512_fmadd_ps(LA(i + 16), LB(i + 16), s1);                         \
        s2 = _mm512_fmadd_ps(LA(i + 32), LB(i + 32), s2);                         \
        s3 = _mm512_fmadd_ps(LA(i + 48), LB(i + 48), s3);                         \
    }                                                                             \
    for (; i + 16 <= n; i += 16)                                                  \
        s1 = _mm512_fmadd_ps(LA(i), LB(i), s1);                                   \
    if (i < n) {                                                                  \
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);                           \
        s2 = _mm512_fmadd_ps(LAM(m, i), LBM(m, i), s2);                           \
    }                                                                             \
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));

T_AVX512 static float dot_f32_bf16_avx512(const float *a, const uint16_t *b, uint32_t n)
{
#define LA(k) _mm512_loadu_ps(a + (k))
#define LB(k) bf16x16_ps(b + (k))
#define LAM(m, k) _mm512_maskz_loadu_ps(m, a + (k))
#define LBM(m, k) bf16x16_ps_m(m, b + (k))
    DOT_AVX512_BODY(LA, LB, LAM, LBM)
#undef LA
#undef LB
#undef LAM
#undef LBM
}

T_AVX512 static float dot_bf16_avx512(const uint16_t *a, const uint16_t *b, uint32_t n)
{
#define LA(k) bf16x16_ps(a + (k))
#define LB(k) bf16x16_ps(b + (k))
#define LAM(m, k) bf16x16_ps_m(m, a + (k))
#define LBM(m, k) bf16x16_ps_m(m, b + (k))
    DOT_AVX512_BODY(LA, LB, LAM, LBM)
#undef LA
#undef LB
#undef LAM
#undef LBM
}

T_AVX512 static float dot_f32_split_avx512(const float *a, const uint16_t *hi, const uint16_t *lo, uint32_t n)
{
#define LA(k) _mm512_loadu_ps(a + (k))
#define LB(k) splitx16_ps(hi + (k), lo + (k))
#define LAM(m, k) _mm512_maskz_loadu_ps(m, a + (k))
#define LBM(m, k) splitx16_ps_m(m, hi + (k), lo + (k))
    DOT_AVX512_BODY(LA, LB, LAM, LBM)
#undef LA
#undef LB
#undef LAM
#undef LBM
}

/* Without VNNI: sign-extend 32 bytes to 16-bit lanes, vpmaddwd. */
T_AVX512 static int32_t dot_i8_avx512bw(const int8_t *a, const int8_t *b, uint32_t n)
{
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
    uint32_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i)));
        __m512i y0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i)));
        __m512i x1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(a + i + 32)));
        __m512i y1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(b + i + 32)));
        s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x0, y0));
        s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(x1, y1));
    }
    while (i < n) {
        uint32_t k = n - i < 32 ? n - i : 32;
        __mmask32 m = k == 32 ? 0xffffffffu : (__mmask32)((1u << k) - 1);
        __m512i x = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, a + i));
        __m512i y = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, b + i));
        s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x, y));
        i += k;
    }
    return _mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
}

/* VNNI: vpdpbusd(acc, u, s) adds 4 products u8 * s8 per 32-bit lane.
 * sum a*b = sum (a+128)*b - 128 * sum b, with a+128 = a ^ 0x80 as u8.
 * Exact: each lane gains at most 4 * 255 * 128 per step. */
T_VNNI static int32_t dot_i8_vnni(const int8_t *a, const int8_t *b, uint32_t n)
{
    const __m512i off = _mm512_set1_epi8((char)0x80), ones = _mm512_set1_epi8(1);
    __m512i p0 = _mm512_setzero_si512(), p1 = _mm512_setzero_si512();
    __m512i q0 = _mm512_setzero_si512(), q1 = _mm512_setzero_si512();
    uint32_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(a + i), off);
        __m512i y0 = _mm512_loadu_si512(b + i);
        __m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(a + i + 64), off);
        __m512i y1 = _mm512_loadu_si512(b + i + 64);
        p0 = _mm512_dpbusd_epi32(p0, x0, y0);
        q0 = _mm512_dpbusd_epi32(q0, ones, y0);
        p1 = _mm512_dpbusd_epi32(p1, x1, y1);
        q1 = _mm512_dpbusd_epi32(q1, ones, y1);
    }
    while (i < n) {
        uint32_t k = n - i < 64 ? n - i : 64;
        __mmask64 m = k == 64 ? ~0ull : (((__mmask64)1 << k) - 1);
        /* masked-off bytes: a' = 0 ^ 0x80, b = 0 -> product 0 */
        __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, a + i), off);
        __m512i y = _mm512_maskz_loadu_epi8(m, b + i);
        p0 = _mm512_dpbusd_epi32(p0, x, y);
        q0 = _mm512_dpbusd_epi32(q0, ones, y);
        i += k;
    }
    __m512i p = _mm512_add_epi32(p0, p1), q = _mm512_add_epi32(q0, q1);
    return _mm512_reduce_add_epi32(_mm512_sub_epi32(p, _mm512_slli_epi32(q, 7)));
}

/* 16 int8 -> 16 floats. */
T_AVX512 static inline __m512 i8x16_to_ps(const int8_t *p)
{
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

T_AVX512 static float dot_f32_i8_avx512(const float *a, const int8_t *b, uint32_t n)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    uint32_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), i8x16_to_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), i8x16_to_ps(b + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 32), i8x16_to_ps(b + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 48), i8x16_to_ps(b + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16)
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), i8x16_to_ps(b + i), s1);
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 y = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i)));
        s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), y, s2);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

T_VPOPCNT static uint32_t hamming_vpopcnt(const uint64_t *a, const uint64_t *b, uint32_t nwords)
{
    __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
    uint32_t i = 0;
    for (; i + 16 <= nwords; i += 16) {
        __m512i x0 = _mm512_xor_si512(_mm512_loadu_si512(a + i), _mm512_loadu_si512(b + i));
        __m512i x1 = _mm512_xor_si512(_mm512_loadu_si512(a + i + 8), _mm512_loadu_si512(b + i + 8));
        s0 = _mm512_add_epi64(s0, _mm512_popcnt_epi64(x0));
        s1 = _mm512_add_epi64(s1, _mm512_popcnt_epi64(x1));
    }
    if (i + 8 <= nwords) {
        __m512i x = _mm512_xor_si512(_mm512_loadu_si512(a + i), _mm512_loadu_si512(b + i));
        s0 = _mm512_add_epi64(s0, _mm512_popcnt_epi64(x));
        i += 8;
    }
    if (i < nwords) {
        __mmask8 m = (__mmask8)((1u << (nwords - i)) - 1);
        __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi64(m, a + i), _mm512_maskz_loadu_epi64(m, b + i));
        s1 = _mm512_add_epi64(s1, _mm512_popcnt_epi64(x));
    }
    return (uint32_t)_mm512_reduce_add_epi64(_mm512_add_epi64(s0, s1));
}

static int cpu_level(int *vnni, int *vpopcnt)
{
    __builtin_cpu_init();
    *vnni = *vpopcnt = 0;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("popcnt")) {
        *vnni = __builtin_cpu_supports("avx512vnni") != 0;
        *vpopcnt = __builtin_cpu_supports("avx512vpopcntdq") != 0;
        return VD_AVX512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("popcnt"))
        return VD_AVX2;
    return VD_SCALAR;
}
#endif /* __x86_64__ */

float (*vd_dot_f32)(const float *, const float *, uint32_t) = vd_dot_f32_scalar;
int32_t (*vd_dot_i8)(const int8_t *, const int8_t *, uint32_t) = vd_dot_i8_scalar;
float (*vd_dot_f32_i8)(const float *, const int8_t *, uint32_t) = vd_dot_f32_i8_scalar;
uint32_t (*vd_hamming)(const uint64_t *, const uint64_t *, uint32_t) = vd_hamming_scalar;
float (*vd_dot_f32_bf16)(const float *, const uint16_t *, uint32_t) = vd_dot_f32_bf16_scalar;
float (*vd_dot_bf16)(const uint16_t *, const uint16_t *, uint32_t) = vd_dot_bf16_scalar;
float (*vd_dot_f32_split)(const float *, const uint16_t *, const uint16_t *, uint32_t) = vd_dot_f32_split_scalar;

static int level_now = VD_SCALAR;

int vd_select_masked(int max_level, unsigned disable)
{
    int level = VD_SCALAR;
    vd_dot_f32 = vd_dot_f32_scalar;
    vd_dot_i8 = vd_dot_i8_scalar;
    vd_dot_f32_i8 = vd_dot_f32_i8_scalar;
    vd_hamming = vd_hamming_scalar;
    vd_dot_f32_bf16 = vd_dot_f32_bf16_scalar;
    vd_dot_bf16 = vd_dot_bf16_scalar;
    vd_dot_f32_split = vd_dot_f32_split_scalar;
#if defined(__x86_64__)
    int vnni, vpopcnt;
    level = cpu_level(&vnni, &vpopcnt);
    if (disable & VD_NO_VNNI)
        vnni = 0;
    if (disable & VD_NO_VPOPCNTDQ)
        vpopcnt = 0;
    if (level > max_level)
        level = max_level < VD_SCALAR ? VD_SCALAR : max_level;
    if (level == VD_AVX2) {
        vd_dot_f32 = dot_f32_avx2;
        vd_dot_i8 = dot_i8_avx2;
        vd_dot_f32_i8 = dot_f32_i8_avx2;
        vd_hamming = hamming_popcnt;
        vd_dot_f32_bf16 = dot_f32_bf16_avx2;
        vd_dot_bf16 = dot_bf16_avx2;
        vd_dot_f32_split = dot_f32_split_avx2;
    } else if (level == VD_AVX512) {
        vd_dot_f32 = dot_f32_avx512;
        vd_dot_i8 = vnni ? dot_i8_vnni : dot_i8_avx512bw;
        vd_dot_f32_i8 = dot_f32_i8_avx512;
        vd_hamming = vpopcnt ? hamming_vpopcnt : hamming_popcnt;
        vd_dot_f32_bf16 = dot_f32_bf16_avx512;
        vd_dot_bf16 = dot_bf16_avx512;
        vd_dot_f32_split = dot_f32_split_avx512;
    }
#else
    (void)max_level;
    (void)disable;
#endif
    level_now = level;
    return level;
}

int vd_select(int max_level)
{
    return vd_select_masked(max_level, 0);
}

void vd_init(void)
{
    vd_select(VD_AVX512);
}

int vd_level(void)
{
    return level_now;
}

const char *vd_level_name(void)
{
    return level_now == VD_AVX512 ? "avx512" : level_now == VD_AVX2 ? "avx2" : "scalar";
}
