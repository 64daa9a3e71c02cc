/* test_listpack.c - the listpack encoding: every integer and string
 * encoding at its boundaries, backlen sizes (walks in both directions
 * across 1- to 3-byte backlens), random edits checked against a plain
 * array model, seek with negative indexes, find with skip, the saturated
 * count, and validation of corrupt inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "ds/listpack.h"
#include "test.h"

/* Render an element as text (integers in decimal). */
static size_t text(const unsigned char *lp, size_t pos, char *buf)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s) {
        memcpy(buf, v.s, v.len);
        return v.len;
    }
    return (size_t)sprintf(buf, "%lld", v.ll);
}

TEST(test_listpack_integer_encodings_round_trip)
{
    static const long long vals[] = {0, 1, 127, 128, -1, -4096, 4095, 4096, -4097, 32767, -32768, 32768,
                                     8388607, -8388608, 8388608, 2147483647LL, -2147483648LL, 2147483648LL,
                                     9223372036854775807LL, -9223372036854775807LL - 1};
    static const size_t sizes[] = {1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 9, 9, 9};
    unsigned char *lp = lp_new();
    size_t n = sizeof(vals) / sizeof(vals[0]);
    for (size_t i = 0; i < n; i++) {
        size_t before = lp_bytes(lp);
        char s[32];
        int l = snprintf(s, sizeof(s), "%lld", vals[i]);
        lp = lp_append(lp, s, (size_t)l);
        /* encoding + data + a 1-byte backlen */
        CHECK_EQ(lp_bytes(lp) - before, sizes[i] + 1);
    }
    CHECK_EQ(lp_count(lp), n);
    size_t p = lp_first(lp);
    for (size_t i = 0; i < n; i++, p = lp_next(lp, p)) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK(v.s == NULL);
        CHECK_EQ(v.ll, vals[i]);
    }
    CHECK_EQ(p, LP_NONE);
    CHECK(lp_validate(lp, lp_bytes(lp)));
    lp_free(lp);
}

TEST(test_listpack_strings_and_noncanonical_numbers)
{
    unsigned char *lp = lp_new();
    const char *strs[] = {"", "a", "01", "+1", "-0", " 1", "1.5", "99999999999999999999"};
    for (size_t i = 0; i < 8; i++)
        lp = lp_append(lp, strs[i], strlen(strs[i]));
    size_t p = lp_first(lp);
    for (size_t i = 0; i < 8; i++, p = lp_next(lp, p)) {
        struct lp_val v;
        lp_get(lp, p, &v);
        CHECK(v.s != NULL);
        CHECK_MEM(v.s, v.len, strs[i], strlen(strs[i]));
    }
    lp_free(lp);
}

TEST(test_listpack_string_length_boundaries_and_backlen)
{
    static const size_t lens[] = {63, 64, 125, 126, 127, 4095, 4096, 16380, 16390, 70000};
    unsigned char *lp = lp_new();
    char *buf = malloc(70001);
    for (size_t i = 0; i < 10; i++) {
        memset(buf, 'a' + (int)i, lens[i]);
        lp = lp_append(lp, buf, lens[i]);
    }
    /* Forward and backward walks agree. */
    size_t fwd[10], k = 0;
    for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p))
        fwd[k++] = p;
    CHECK_EQ(k, 10);
    k = 10;
    for (size_t p = lp_last(lp); p != LP_NONE; p = lp_prev(lp, p))
        CHECK_EQ(p, fwd[--k]);
    CHECK_EQ(k, 0);
    for (size_t i = 0; i < 10; i++) {
        struct lp_val v;
        lp_get(lp, fwd[i], &v);
        CHECK_EQ(v.len, lens[i]);
        CHECK(v.s[0] == 'a' + (int)i && v.s[v.len - 1] == 'a' + (int)i);
    }
    CHECK(lp_validate(lp, lp_bytes(lp)));
    free(buf);
    lp_free(lp);
}

TEST(test_listpack_random_edits_match_model)
{
    enum { MAXN = 400 };
    char *model[MAXN];
    size_t mlen[MAXN], n = 0;
    unsigned char *lp = lp_new();
    unsigned seed = 12345;
    char buf[300], got[300];
    for (int round = 0; round < 20000; round++) {
        seed = seed * 1103515245 + 12345;
        unsigned op = (seed >> 16) % 4;
        size_t len;
        if ((seed >> 8) & 1)
            len = (size_t)sprintf(buf, "%d", (int)((seed >> 3) % 100000) - 50000);
        else {
            len = (seed >> 5) % 200;
            for (size_t i = 0; i < len; i++)
                buf[i] = (char)('a' + (i + seed) % 26);
        }
        if ((op == 0 || n == 0) && n < MAXN) { /* insert at a random index */
            size_t at = n ? (seed >> 12) % (n + 1) : 0;
            size_t pos = at == n ? LP_NONE : lp_seek(lp, (long long)at);
            lp = lp_insert(lp, pos, buf, len);
            memmove(model + at + 1, model + at, (n - at) * sizeof(char *));
            memmove(mlen + at + 1, mlen + at, (n - at) * sizeof(size_t));
            model[at] = malloc(len + 1);
            memcpy(model[at], buf, len);
            mlen[at] = len;
            n++;
        } else if (op == 1 && n > 0) { /* replace */
            size_t at = (seed >> 12) % n;
            lp = lp_replace(lp, lp_seek(lp, (long long)at), buf, len);
            free(model[at]);
            model[at] = malloc(len + 1);
            memcpy(model[at], buf, len);
            mlen[at] = len;
        } else if (n > 0) { /* delete 1..3 */
            size_t at = (seed >> 12) % n, cnt = 1 + (seed >> 20) % 3, nx;
            if (at + cnt > n)
                cnt = n - at;
            lp = lp_delete(lp, lp_seek(lp, (long long)at), cnt, &nx);
            CHECK_EQ(nx, at + cnt < n ? lp_seek(lp, (long long)at) : LP_NONE);
            for (size_t i = 0; i < cnt; i++)
                free(model[at + i]);
            memmove(model + at, model + at + cnt, (n - at - cnt) * sizeof(char *));
            memmove(mlen + at, mlen + at + cnt, (n - at - cnt) * sizeof(size_t));
            n -= cnt;
        }
        if (round % 97 == 0 || round == 19999) {
            CHECK_EQ(lp_count(lp), n);
            CHECK(lp_validate(lp, lp_bytes(lp)));
            size_t i = 0;
            for (size_t p = lp_first(lp); p != LP_NONE; p = lp_next(lp, p), i++) {
                size_t gl = text(lp, p, got);
                CHECK_MEM(got, gl, model[i], mlen[i]);
            }
            CHECK_EQ(i, n);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(model[i]);
    lp_free(lp);
}

TEST(test_listpack_seek_find_and_eq)
{
    unsigned char *lp = lp_new();
    const char *kv[] = {"name", "joe", "age", "42", "42", "x", "city", "rome"};
    for (int i = 0; i < 8; i++)
        lp = lp_append(lp, kv[i], strlen(kv[i]));
    char got[32];
    CHECK_STR(got, text(lp, lp_seek(lp, -1), got), "rome");
    CHECK_STR(got, text(lp, lp_seek(lp, 3), got), "42");
    CHECK_EQ(lp_seek(lp, 8), LP_NONE);
    CHECK_EQ(lp_seek(lp, -9), LP_NONE);
    /* skip=1: only keys; "42" as a key is the 5th element, not the 4th. */
    CHECK_EQ(lp_find(lp, lp_first(lp), "42", 2, 1), lp_seek(lp, 4));
    CHECK_EQ(lp_find(lp, lp_first(lp), "42", 2, 0), lp_seek(lp, 3));
    CHECK_EQ(lp_find(lp, lp_first(lp), "joe", 3, 1), LP_NONE);
    CHECK(lp_eq(lp, lp_seek(lp, 3), "42", 2));
    CHECK(!lp_eq(lp, lp_seek(lp, 3), "042", 3));
    CHECK(lp_eq(lp, lp_seek(lp, 0), "name", 4));
    lp = lp_prepend(lp, "first", 5);
    CHECK_STR(got, text(lp, lp_first(lp), got), "first");
    lp_free(lp);
}

TEST(test_listpack_count_saturates_at_65535)
{
    /* 65,530 one-byte integers laid out by hand (7-bit uint encoding, then
     * a backlen of 1), so the test does not pay 65,530 growing reallocs
     * (quadratic copying: 40 s under ASan); then appends cross 65,535. */
    enum { N0 = 65530 };
    size_t bytes = 6 + 2 * (size_t)N0 + 1;
    unsigned char *lp = malloc(bytes);
    lp[0] = (unsigned char)bytes;
    lp[1] = (unsigned char)(bytes >> 8);
    lp[2] = (unsigned char)(bytes >> 16);
    lp[3] = (unsigned char)(bytes >> 24);
    lp[4] = (unsigned char)N0;
    lp[5] = (unsigned char)(N0 >> 8);
    for (size_t i = 0; i < N0; i++) {
        lp[6 + 2 * i] = (unsigned char)(i % 100);
        lp[7 + 2 * i] = 1;
    }
    lp[bytes - 1] = 0xFF;
    CHECK(lp_validate(lp, lp_bytes(lp)));
    CHECK_EQ(lp_count(lp), N0);
    for (int i = 0; i < 10; i++)
        lp = lp_append_int(lp, 1000 + i);
    CHECK_EQ(lp_count(lp), N0 + 10);
    CHECK_EQ(lp[4] | lp[5] << 8, 65535);
    CHECK(lp_validate(lp, lp_bytes(lp)));
    struct lp_val v;
    lp_get(lp, lp_last(lp), &v);
    CHECK_EQ(v.ll, 1009);
    size_t nx;
    lp = lp_delete(lp, lp_first(lp), 10000, &nx);
    CHECK_EQ(lp_count(lp), N0 + 10 - 10000);
    CHECK_EQ(lp[4] | lp[5] << 8, N0 + 10 - 10000);
    lp_get(lp, nx, &v);
    CHECK_EQ(v.ll, 10000 % 100);
    CHECK(lp_validate(lp, lp_bytes(lp)));
    lp_free(lp);
}

TEST(test_listpack_validate_rejects_corruption)
{
    unsigned char *lp = lp_new();
    lp = lp_append(lp, "hello", 5);
    lp = lp_append_int(lp, 1000);
    size_t n = lp_bytes(lp);
    unsigned char *bad = malloc(n);
    CHECK(lp_validate(lp, n));
    CHECK(!lp_validate(lp, n - 1));
    memcpy(bad, lp, n);
    bad[n - 1] = 0; /* no EOF */
    CHECK(!lp_validate(bad, n));
    memcpy(bad, lp, n);
    bad[LP_HDR] = 0x80 | 40; /* string length past the end */
    CHECK(!lp_validate(bad, n));
    memcpy(bad, lp, n);
    bad[LP_HDR + 6] ^= 1; /* backlen of "hello" */
    CHECK(!lp_validate(bad, n));
    memcpy(bad, lp, n);
    bad[4] = 3; /* wrong count */
    CHECK(!lp_validate(bad, n));
    free(bad);
    lp_free(lp);
}

/* Blobs from outside: every truncation and every single-byte change of a
 * listpack holding every encoding is either refused by lp_validate or, if
 * accepted, can be walked both ways and read element by element within
 * its bytes (exact-size copies: a sanitizer build catches any read past
 * them), with lp_count equal to what the walk finds. */
TEST(test_listpack_validate_hostile_blobs)
{
    unsigned char *lp = lp_new();
    char big[5000];
    memset(big, 'q', sizeof(big));
    lp = lp_append(lp, "7", 1);
    lp = lp_append(lp, "-1000", 5);
    lp = lp_append(lp, "30000", 5);
    lp = lp_append(lp, "8000000", 7);
    lp = lp_append(lp, "2000000000", 10);
    lp = lp_append(lp, "9000000000000", 13);
    lp = lp_append(lp, "short", 5);
    lp = lp_append(lp, big, 100);
    lp = lp_append(lp, big, sizeof(big));
    lp = lp_append(lp, "", 0);
    size_t n = lp_bytes(lp);
    CHECK(lp_validate(lp, n));
    unsigned accepted = 0;
    for (size_t cut = 0; cut < n; cut += (cut < 64 || cut > n - 64) ? 1 : 97) {
        unsigned char *c = hk_memdup(lp, cut ? cut : 1);
        CHECK(!lp_validate(c, cut));
        hk_free(c);
    }
    for (size_t at = 0; at < n; at += (at < 200 || at > n - 64) ? 1 : 61) {
        for (int v = 0; v < 256; v += 17) {
            unsigned char *c = hk_memdup(lp, n);
            c[at] = (unsigned char)v;
            if (lp_validate(c, n)) {
                size_t cnt = 0, last = LP_NONE;
                for (size_t p = lp_first(c); p != LP_NONE; p = lp_next(c, p)) {
                    struct lp_val x;
                    lp_get(c, p, &x);
                    CHECK(p < n);
                    if (x.s)
                        CHECK((size_t)(x.s - c) + x.len < n);
                    last = p;
                    cnt++;
                }
                CHECK_EQ(cnt, lp_count(c));
                size_t back = 0;
                for (size_t p = last; p != LP_NONE; p = lp_prev(c, p))
                    back++;
                CHECK_EQ(back, cnt);
                accepted++;
            }
            hk_free(c);
        }
    }
    CHECK(accepted > 0); /* some changes keep it valid (data bytes) */
    lp_free(lp);
}
