/* test_geohash.c - ds/geohash: scores, positions and geohash strings equal
 * to Redis's for known points, the number formats (4-decimal distances
 * rounded half to even, 17-decimal coordinates), neighbour moves and
 * wrap-around, the 3x3 search cover, the in-shape tests, and the two
 * orderings (stable full sort, partial sort correct on its prefix). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds/geohash.h"
#include "test.h"

#define GEO_CHECK_TEXT(buf, n, lit) CHECK_MEM(buf, (size_t)(n), lit, strlen(lit))

TEST(test_geohash_known_scores)
{
    /* Values redis-server 7 gives (GEOADD then ZSCORE). */
    CHECK(geo_score_of(13.361389, 38.115556) == 3479099956230698ULL);
    CHECK(geo_score_of(15.087269, 37.502669) == 3479447370796909ULL);
    CHECK(geo_score_of(-180, GEO_LAT_MIN) == 0);
    /* The north-east corner is one past the last cell on both axes. */
    CHECK(geo_score_of(180, GEO_LAT_MAX) == 13510798882111488ULL);
    struct geo_bits h;
    CHECK(!geo_encode_wgs84(180.0001, 0, 26, &h));
    CHECK(!geo_encode_wgs84(0, 85.06, 26, &h));
    CHECK(!geo_encode_wgs84(0, 0, 0, &h));
    CHECK(!geo_encode_wgs84(0, 0, 33, &h));
}

TEST(test_geohash_decode_and_text)
{
    double xy[2];
    char b[400];
    CHECK(geo_decode_score(3479099956230698.0, xy));
    int n = geo_fmt_coord(b, sizeof(b), xy[0]);
    GEO_CHECK_TEXT(b, n, "13.36138933897018433");
    n = geo_fmt_coord(b, sizeof(b), xy[1]);
    GEO_CHECK_TEXT(b, n, "38.11555639549629859");
    char hs[11];
    CHECK(geo_hash_string(xy, hs));
    CHECK_MEM(hs, 11, "sqc8b49rny0", 11);
    CHECK(geo_decode_score(13510798882111488.0, xy));
    n = geo_fmt_coord(b, sizeof(b), xy[0]);
    GEO_CHECK_TEXT(b, n, "180");
    n = geo_fmt_coord(b, sizeof(b), xy[1]);
    GEO_CHECK_TEXT(b, n, "85.0511287799999991");
    /* Scores no GEOADD made still decode, inside the limits. */
    double odd[] = {-1, -1e300, 1e300, 1e17, 4503599627370496.0, 0.5, HUGE_VAL};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
        CHECK(geo_decode_score(odd[i], xy));
        CHECK(xy[0] >= GEO_LONG_MIN && xy[0] <= GEO_LONG_MAX);
        CHECK(xy[1] >= GEO_LAT_MIN && xy[1] <= GEO_LAT_MAX);
    }
    /* x86-64's conversion: -1 is all ones, huge values the top bit only. */
    double a[2], c[2];
    geo_decode_score(-1, a);
    geo_decode_score(18446744073709549568.0, c); /* 2^64 - 2048, top bits set */
    CHECK(a[0] >= c[0] - 1e-3);
}

TEST(test_geohash_number_formats)
{
    char b[400];
    int n = geo_fmt_distance(b, 0);
    GEO_CHECK_TEXT(b, n, "0.0000");
    n = geo_fmt_distance(b, -0.0);
    GEO_CHECK_TEXT(b, n, "0.0000");
    n = geo_fmt_distance(b, 1.23456);
    GEO_CHECK_TEXT(b, n, "1.2346");
    n = geo_fmt_distance(b, 0.03125); /* 312.5: llrint rounds half to even */
    GEO_CHECK_TEXT(b, n, "0.0312");
    n = geo_fmt_distance(b, 0.09375); /* 937.5 */
    GEO_CHECK_TEXT(b, n, "0.0938");
    n = geo_fmt_distance(b, 1e-9);
    GEO_CHECK_TEXT(b, n, "0.0000");
    n = geo_fmt_distance(b, 166274.15156960033);
    GEO_CHECK_TEXT(b, n, "166274.1516");
    n = geo_fmt_distance(b, -2.5);
    GEO_CHECK_TEXT(b, n, "-2.5000");
    n = geo_fmt_coord(b, sizeof(b), -0.0);
    GEO_CHECK_TEXT(b, n, "0");
    n = geo_fmt_coord(b, sizeof(b), 1.5);
    GEO_CHECK_TEXT(b, n, "1.5");
    n = geo_fmt_coord(b, sizeof(b), -12.25);
    GEO_CHECK_TEXT(b, n, "-12.25");
    n = geo_fmt_coord(b, sizeof(b), 1e300); /* long, but fits */
    CHECK(n > 300 && b[n - 1] != '.');
    n = geo_fmt_coord(b, 8, 1e300); /* does not fit: empty */
    CHECK_EQ(n, 0);
}

TEST(test_geohash_distance)
{
    double d = geo_distance(13.361389338970184, 38.1155563954963, 15.087267458438873, 37.50266842333162);
    char b[32];
    int n = geo_fmt_distance(b, d / 1000);
    GEO_CHECK_TEXT(b, n, "166.2742");
    CHECK(geo_distance(1, 2, 1, 2) == 0);
    /* Same meridian: the latitude shortcut. */
    CHECK(fabs(geo_distance(5, 0, 5, 1) - GEO_EARTH_RADIUS_M * M_PI / 180) < 1e-6);
    CHECK(geo_lat_distance(0, 1) == geo_lat_distance(1, 0));
    /* Half the equator. */
    CHECK(fabs(geo_distance(0, 0, 180, 0) - GEO_EARTH_RADIUS_M * M_PI) < 1e-3);
}

TEST(test_geohash_neighbors_wrap)
{
    struct geo_bits h;
    CHECK(geo_encode_wgs84(0.1, 0.1, 3, &h));
    struct geo_neighbors nb;
    geo_neighbors(&h, &nb);
    /* East then west (and north then south) come back. */
    struct geo_neighbors back;
    geo_neighbors(&nb.east, &back);
    CHECK(back.west.bits == h.bits && back.west.step == 3);
    geo_neighbors(&nb.north, &back);
    CHECK(back.south.bits == h.bits);
    geo_neighbors(&nb.north_east, &back);
    CHECK(back.south_west.bits == h.bits);
    /* All 9 cells distinct at step 3. */
    struct geo_bits cells[9] = {h, nb.north, nb.south, nb.east, nb.west, nb.north_east, nb.north_west,
                                nb.south_east, nb.south_west};
    for (int i = 0; i < 9; i++)
        for (int j = i + 1; j < 9; j++)
            CHECK(cells[i].bits != cells[j].bits);
    /* The last column's east neighbour is column 0 (wrap at 180). */
    struct geo_bits e;
    CHECK(geo_encode_wgs84(179.9, 0.1, 3, &e));
    geo_neighbors(&e, &nb);
    struct geo_bits w;
    CHECK(geo_encode_wgs84(-179.9, 0.1, 3, &w));
    CHECK(nb.east.bits == w.bits);
    /* A cell's score range holds the points inside it. */
    uint64_t lo, hi, s = geo_score_of(0.1, 0.1);
    CHECK(geo_encode_wgs84(0.1, 0.1, 10, &h));
    geo_cell_scores(h, &lo, &hi);
    CHECK(lo <= s && s < hi);
}

TEST(test_geohash_cover_and_shapes)
{
    struct geo_shape s;
    memset(&s, 0, sizeof(s));
    s.type = GEO_SHAPE_CIRCLE;
    s.xy[0] = 15;
    s.xy[1] = 37;
    s.radius = 200;
    s.conversion = 1000;
    struct geo_cover cov;
    geo_search_cells(&s, &cov);
    struct geo_bits cells[9];
    geo_cover_list(&cov, cells);
    CHECK(cells[0].step >= 1 && cells[0].step <= 26);
    CHECK(s.bounds[0] < 15 && s.bounds[2] > 15 && s.bounds[1] < 37 && s.bounds[3] > 37);
    /* Every point inside the circle lies in one of the cover's cells. */
    srand(5);
    for (int k = 0; k < 2000; k++) {
        double lon = 15 + (rand() / (double)RAND_MAX - 0.5) * 5, lat = 37 + (rand() / (double)RAND_MAX - 0.5) * 4;
        uint64_t sc = geo_score_of(lon, lat);
        double xy[2], dist;
        if (!geo_in_shape(&s, (double)sc, xy, &dist))
            continue;
        CHECK(dist <= 200000);
        int in = 0;
        for (int i = 0; i < 9; i++) {
            if (cells[i].bits == 0 && cells[i].step == 0)
                continue;
            uint64_t lo, hi;
            geo_cell_scores(cells[i], &lo, &hi);
            in |= lo <= sc && sc < hi;
        }
        CHECK(in);
    }
    /* A box: inside by latitude and longitude distance, dist from centre. */
    s.type = GEO_SHAPE_BOX;
    s.width = 100;
    s.height = 10;
    double xy[2], dist;
    CHECK(geo_in_shape(&s, (double)geo_score_of(15.4, 37), xy, &dist));
    CHECK(!geo_in_shape(&s, (double)geo_score_of(15, 37.2), xy, &dist));
    CHECK(!geo_in_shape(&s, (double)geo_score_of(15.7, 37), xy, &dist));
    /* A huge radius: the coarsest step, still a valid cover. */
    s.type = GEO_SHAPE_CIRCLE;
    s.radius = 1e9;
    geo_search_cells(&s, &cov);
    CHECK(cov.hash.step == 1);
}

static int by_dist(const void *a, const void *b)
{
    const struct geo_point *x = a, *y = b;
    return x->dist > y->dist ? 1 : x->dist < y->dist ? -1 : 0;
}

TEST(test_geohash_sorts)
{
    enum { N = 300 };
    struct geo_point p[N], q[N];
    srand(11);
    for (int round = 0; round < TEST_SCALE(40); round++) {
        size_t n = 1 + (size_t)(rand() % N);
        int ties = round % 2;
        for (size_t i = 0; i < n; i++) {
            memset(&p[i], 0, sizeof(p[i]));
            p[i].dist = ties ? (double)(rand() % 7) : rand() / (double)RAND_MAX;
            p[i].ref = i;
        }
        /* Full sort: stable (ties keep insertion order). */
        memcpy(q, p, n * sizeof(*p));
        geo_sort_points(q, n, 0, n);
        for (size_t i = 1; i < n; i++) {
            CHECK(q[i - 1].dist <= q[i].dist);
            if (q[i - 1].dist == q[i].dist)
                CHECK(q[i - 1].ref < q[i].ref);
        }
        memcpy(q, p, n * sizeof(*p));
        geo_sort_points(q, n, 1, n);
        for (size_t i = 1; i < n; i++) {
            CHECK(q[i - 1].dist >= q[i].dist);
            if (q[i - 1].dist == q[i].dist)
                CHECK(q[i - 1].ref < q[i].ref);
        }
        /* Partial: the first keep are the keep smallest, in order. */
        size_t keep = 1 + (size_t)(rand() % (int)n);
        struct geo_point ref[N];
        memcpy(ref, p, n * sizeof(*p));
        qsort(ref, n, sizeof(*ref), by_dist);
        memcpy(q, p, n * sizeof(*p));
        geo_sort_points(q, n, 0, keep);
        for (size_t i = 0; i < keep && i < n; i++)
            CHECK(q[i].dist == ref[i].dist);
        /* Still a permutation. */
        unsigned char seen[N] = {0};
        for (size_t i = 0; i < n; i++)
            seen[q[i].ref]++;
        for (size_t i = 0; i < n; i++)
            CHECK(seen[i] == 1);
    }
}
