/* test_vdist.c - the distance kernels (src/ds/vdist.c): every SIMD level
 * this CPU offers (vd_select), and inside AVX-512 the fallbacks without
 * VNNI and without VPOPCNTDQ, checked against the scalar references on
 * random data of every length 0..300 plus 1536 and 4096, at unaligned
 * addresses, and with extreme values (int8 -128 / 127 everywhere: the
 * 32-bit int8 dot must be exact).  Float results must be within a relative
 * tolerance of a double-precision sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "ds/vdist.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* uniform in [-1, 1) */
static float rndf(void)
{
    return (float)((double)(rnd() >> 11) / (double)(1ull << 52) - 1.0);
}

#define MAXN 4096
#define PAD 64

struct bufs {
    float fa[MAXN + PAD], fb[MAXN + PAD];
    int8_t ia[MAXN + PAD], ib[MAXN + PAD];
    uint64_t wa[MAXN + PAD], wb[MAXN + PAD];
};

static const uint32_t big_lengths[] = {511, 512, 513, 1023, 1536, 4095, 4096};

/* One configuration of the dispatch, a name for messages. */
struct variant {
    int level;
    unsigned disable;
    const char *name;
};

static int variants(struct variant *v)
{
    int n = 0, top = vd_select(VD_AVX512);
    for (int l = VD_SCALAR; l <= top; l++)
        v[n++] = (struct variant){l, 0, l == VD_AVX512 ? "avx512" : l == VD_AVX2 ? "avx2" : "scalar"};
    if (top == VD_AVX512) {
        v[n++] = (struct variant){VD_AVX512, VD_NO_VNNI, "avx512-novnni"};
        v[n++] = (struct variant){VD_AVX512, VD_NO_VPOPCNTDQ, "avx512-novpopcntdq"};
    }
    return n;
}

static double dot_exact_f(const float *a, const float *b, uint32_t n, double *absum)
{
    double s = 0, t = 0;
    for (uint32_t i = 0; i < n; i++) {
        s += (double)a[i] * (double)b[i];
        t += fabs((double)a[i] * (double)b[i]);
    }
    *absum = t;
    return s;
}

static double dot_exact_fi(const float *a, const int8_t *b, uint32_t n, double *absum)
{
    double s = 0, t = 0;
    for (uint32_t i = 0; i < n; i++) {
        s += (double)a[i] * (double)b[i];
        t += fabs((double)a[i] * (double)b[i]);
    }
    *absum = t;
    return s;
}

/* |got - want| within the rounding a float sum over 4 accumulators may
 * accumulate ((n/4 + 8) ulps of the sum of |products|), at least 2e-5 of
 * it: an element dropped or counted twice in a 4096-long vector (1/4096 =
 * 2.4e-4 of that sum here) still fails. */
static int close_rel(double got, double want, double absum, uint32_t n)
{
    double rel = (n / 4.0 + 8) * 5.96e-8;
    if (rel < 2e-5)
        rel = 2e-5;
    return fabs(got - want) <= rel * absum + 1e-30;
}

/* Check all four kernels (as currently selected) on the buffers at
 * element offsets oa / ob for length n; reports the first few failures. */
static int check_all(struct bufs *B, uint32_t n, uint32_t oa, uint32_t ob, const char *vname, const char *what)
{
    int bad = 0;
    double absum, want;
    const float *fa = B->fa + oa, *fb = B->fb + ob;
    const int8_t *ia = B->ia + oa, *ib = B->ib + ob;
    const uint64_t *wa = B->wa + oa, *wb = B->wb + ob;

    want = dot_exact_f(fa, fb, n, &absum);
    float gf = vd_dot_f32(fa, fb, n), sf = vd_dot_f32_scalar(fa, fb, n);
    if (!close_rel(gf, want, absum, n) || !close_rel(sf, want, absum, n)) {
        test_fail(__FILE__, __LINE__, "%s %s dot_f32 n=%u off=%u/%u: got %.9g scalar %.9g exact %.9g", vname,
                  what, n, oa, ob, gf, sf, want);
        bad++;
    }
    int32_t gi = vd_dot_i8(ia, ib, n), si = vd_dot_i8_scalar(ia, ib, n);
    int64_t wi = 0;
    for (uint32_t i = 0; i < n; i++)
        wi += (int64_t)ia[i] * ib[i];
    if (gi != si || (int64_t)si != wi) {
        test_fail(__FILE__, __LINE__, "%s %s dot_i8 n=%u off=%u/%u: got %d scalar %d exact %lld", vname, what,
                  n, oa, ob, gi, si, (long long)wi);
        bad++;
    }
    want = dot_exact_fi(fa, ib, n, &absum);
    float gfi = vd_dot_f32_i8(fa, ib, n), sfi = vd_dot_f32_i8_scalar(fa, ib, n);
    if (!close_rel(gfi, want, absum, n) || !close_rel(sfi, want, absum, n)) {
        test_fail(__FILE__, __LINE__, "%s %s dot_f32_i8 n=%u off=%u/%u: got %.9g scalar %.9g exact %.9g",
                  vname, what, n, oa, ob, gfi, sfi, want);
        bad++;
    }
    /* split planes of fb (and of fa): exact = vd_dot_f32 bit for bit;
     * the high plane alone = the dot with the truncated floats */
    static uint16_t ha[MAXN + PAD], hb[MAXN + PAD], lb[MAXN + PAD];
    double want_b = 0, want_bb = 0, abs_b = 0, abs_bb = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t ua, ub;
        memcpy(&ua, fa + i, 4);
        memcpy(&ub, fb + i, 4);
        ha[i] = (uint16_t)(ua >> 16);
        hb[i] = (uint16_t)(ub >> 16);
        lb[i] = (uint16_t)ub;
        uint32_t ta = ua & 0xFFFF0000u, tb = ub & 0xFFFF0000u;
        float xa, xb;
        memcpy(&xa, &ta, 4);
        memcpy(&xb, &tb, 4);
        want_b += (double)fa[i] * xb;
        abs_b += fabs((double)fa[i] * xb);
        want_bb += (double)xa * xb;
        abs_bb += fabs((double)xa * xb);
    }
    float gsp = vd_dot_f32_split(fa, hb, lb, n), ssp = vd_dot_f32_split_scalar(fa, hb, lb, n);
    if (memcmp(&gsp, &gf, 4) != 0 || memcmp(&ssp, &sf, 4) != 0) {
        test_fail(__FILE__, __LINE__, "%s %s dot_f32_split n=%u off=%u/%u: got %.9g (f32 %.9g) scalar %.9g (%.9g)",
                  vname, what, n, oa, ob, gsp, gf, ssp, sf);
        bad++;
    }
    float gb = vd_dot_f32_bf16(fa, hb, n), sb = vd_dot_f32_bf16_scalar(fa, hb, n);
    if (!close_rel(gb, want_b, abs_b, n) || !close_rel(sb, want_b, abs_b, n)) {
        test_fail(__FILE__, __LINE__, "%s %s dot_f32_bf16 n=%u off=%u/%u: got %.9g scalar %.9g exact %.9g", vname,
                  what, n, oa, ob, gb, sb, want_b);
        bad++;
    }
    float gbb = vd_dot_bf16(ha, hb, n), sbb = vd_dot_bf16_scalar(ha, hb, n);
    if (!close_rel(gbb, want_bb, abs_bb, n) || !close_rel(sbb, want_bb, abs_bb, n)) {
        test_fail(__FILE__, __LINE__, "%s %s dot_bf16 n=%u off=%u/%u: got %.9g scalar %.9g exact %.9g", vname,
                  what, n, oa, ob, gbb, sbb, want_bb);
        bad++;
    }
    uint32_t gh = vd_hamming(wa, wb, n), sh = vd_hamming_scalar(wa, wb, n);
    uint64_t wh = 0;
    for (uint32_t i = 0; i < n; i++)
        for (int k = 0; k < 64; k++)
            wh += ((wa[i] ^ wb[i]) >> k) & 1;
    if (gh != sh || sh != wh) {
        test_fail(__FILE__, __LINE__, "%s %s hamming nwords=%u off=%u/%u: got %u scalar %u exact %llu", vname,
                  what, n, oa, ob, gh, sh, (unsigned long long)wh);
        bad++;
    }
    return bad;
}

static void fill_random(struct bufs *B)
{
    for (int i = 0; i < MAXN + PAD; i++) {
        B->fa[i] = rndf();
        B->fb[i] = rndf();
        B->ia[i] = (int8_t)(rnd() >> 56);
        B->ib[i] = (int8_t)(rnd() >> 56);
        B->wa[i] = rnd();
        B->wb[i] = rnd();
    }
}

/* Every length 0..300 and the big ones, at offsets 0 and odd offsets (no
 * 16/32/64-byte alignment), for every level. */
TEST(vdist_random_all_levels)
{
    struct bufs *B = malloc(sizeof(*B));
    CHECK(B != NULL);
    if (!B)
        return;
    fill_random(B);
    struct variant v[8];
    int nv = variants(v);
    static const uint32_t offs[][2] = {{0, 0}, {1, 3}, {3, 1}, {7, 5}};
    for (int k = 0; k < nv; k++) {
        CHECK_EQ(vd_select_masked(v[k].level, v[k].disable), v[k].level);
        CHECK_EQ(vd_level(), v[k].level);
        int bad = 0;
        for (uint32_t n = 0; n <= 300 && bad < 5; n++)
            for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
                bad += check_all(B, n, offs[o][0], offs[o][1], v[k].name, "random");
        for (size_t j = 0; j < sizeof(big_lengths) / sizeof(big_lengths[0]) && bad < 5; j++)
            for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
                bad += check_all(B, big_lengths[j], offs[o][0], offs[o][1], v[k].name, "random");
    }
    vd_init();
    free(B);
}

/* int8 extremes (exact int32 result), all-ones / all-zero bitmaps, floats
 * of mixed magnitudes. */
TEST(vdist_extremes)
{
    struct bufs *B = malloc(sizeof(*B));
    CHECK(B != NULL);
    if (!B)
        return;
    struct variant v[8];
    int nv = variants(v);
    static const int8_t pairs[][2] = {{-128, -128}, {-128, 127}, {127, 127}, {127, -128}, {-1, -128}, {0, -128}};
    for (int k = 0; k < nv; k++) {
        vd_select_masked(v[k].level, v[k].disable);
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++) {
            for (int i = 0; i < MAXN + PAD; i++) {
                B->ia[i] = pairs[p][0];
                B->ib[i] = pairs[p][1];
                B->fa[i] = (i & 1) ? 1e3f : -1e-3f;
                B->fb[i] = (i % 3) ? 3e2f : -7e-4f;
                B->wa[i] = p & 1 ? ~0ull : 0;
                B->wb[i] = p & 2 ? ~0ull : 0x8000000000000001ull;
            }
            char what[32];
            snprintf(what, sizeof(what), "extreme %d/%d", pairs[p][0], pairs[p][1]);
            int bad = 0;
            for (uint32_t n = 0; n <= 300 && bad < 5; n++)
                bad += check_all(B, n, n & 3, (n >> 2) & 3, v[k].name, what);
            for (size_t j = 0; j < sizeof(big_lengths) / sizeof(big_lengths[0]) && bad < 5; j++)
                bad += check_all(B, big_lengths[j], 1, 2, v[k].name, what);
        }
        /* the largest magnitude an int8 dot of 4096 components reaches */
        for (int i = 0; i < MAXN; i++)
            B->ia[i] = B->ib[i] = -128;
        CHECK_EQ(vd_dot_i8(B->ia, B->ib, MAXN), 4096LL * 16384);
        for (int i = 0; i < MAXN; i++)
            B->ib[i] = 127;
        CHECK_EQ(vd_dot_i8(B->ia, B->ib, MAXN), -4096LL * 16256);
        /* alternating signs cancel exactly */
        for (int i = 0; i < MAXN; i++) {
            B->ia[i] = (i & 1) ? 127 : -128;
            B->ib[i] = (i & 1) ? -128 : -128;
        }
        CHECK_EQ(vd_dot_i8(B->ia, B->ib, 300), 150LL * (-127 * 128) + 150LL * 16384);
    }
    vd_init();
    free(B);
}

/* vd_init picks the best level; names; a level above the CPU's clamps. */
TEST(vdist_dispatch)
{
    vd_init();
    int best = vd_level();
    CHECK(best >= VD_SCALAR && best <= VD_AVX512);
    CHECK_EQ(vd_select(VD_AVX512), best);
    CHECK_EQ(vd_select(VD_SCALAR), VD_SCALAR);
    CHECK(vd_dot_f32 == vd_dot_f32_scalar);
    CHECK(vd_dot_i8 == vd_dot_i8_scalar);
    CHECK(vd_dot_f32_i8 == vd_dot_f32_i8_scalar);
    CHECK(vd_hamming == vd_hamming_scalar);
    CHECK(strcmp(vd_level_name(), "scalar") == 0);
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        CHECK(best >= VD_AVX2);
        CHECK_EQ(vd_select(VD_AVX2), VD_AVX2);
        CHECK(vd_dot_f32 != vd_dot_f32_scalar);
        CHECK(vd_dot_i8 != vd_dot_i8_scalar);
        CHECK(strcmp(vd_level_name(), "avx2") == 0);
    }
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
        CHECK_EQ(best, VD_AVX512);
        CHECK_EQ(vd_select(VD_AVX512), VD_AVX512);
        CHECK(strcmp(vd_level_name(), "avx512") == 0);
    }
#endif
    vd_init();
    CHECK_EQ(vd_level(), best);
}
