/* ds/geohash.c - see geohash.h.  The arithmetic follows Redis 7.2's
 * geohash.c / geohash_helper.c / geo.c operation for operation (the
 * results must be bit-identical); the code is our own. */
#include "geohash.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/mem.h"

/* Degrees <-> radians with one constant, multiplied in and divided out
 * (Redis's deg_rad / rad_deg: not the same roundings as * M_PI / 180). */
#define GEO_D_R (M_PI / 180.0)
static inline double to_rad(double deg)
{
    return deg * GEO_D_R;
}
static inline double to_deg(double rad)
{
    return rad / GEO_D_R;
}

/* Half the length of the Mercator world, metres: radii above it need the
 * coarsest cells. */
#define GEO_MERCATOR_MAX 20037726.37

/* ------------------------------------------------------------ bit play --- */

/* Spread the 32 bits of v to the even bit positions of a 64-bit word. */
static inline uint64_t spread32(uint32_t v)
{
    uint64_t x = v;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* The inverse: gather the even bits of x into 32 bits. */
static inline uint32_t gather32(uint64_t x)
{
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

static const struct geo_range lon_std = {GEO_LONG_MIN, GEO_LONG_MAX};
static const struct geo_range lat_std = {GEO_LAT_MIN, GEO_LAT_MAX};

static inline int range_zero(const struct geo_range *r)
{
    return r->min == 0 && r->max == 0;
}

int geo_encode(const struct geo_range *lon_r, const struct geo_range *lat_r, double lon, double lat, uint8_t step,
               struct geo_bits *out)
{
    if (!out || step > 32 || step == 0 || !lat_r || !lon_r || range_zero(lat_r) || range_zero(lon_r))
        return 0;
    if (lon > GEO_LONG_MAX || lon < GEO_LONG_MIN || lat > GEO_LAT_MAX || lat < GEO_LAT_MIN)
        return 0;
    out->bits = 0;
    out->step = step;
    if (lat < lat_r->min || lat > lat_r->max || lon < lon_r->min || lon > lon_r->max)
        return 0;
    double lat_off = (lat - lat_r->min) / (lat_r->max - lat_r->min);
    double lon_off = (lon - lon_r->min) / (lon_r->max - lon_r->min);
    lat_off *= (double)(1ULL << step);
    lon_off *= (double)(1ULL << step);
    /* Truncated to 32 bits as Redis does (both offsets are in [0, 2^step]). */
    out->bits = spread32((uint32_t)lat_off) | (spread32((uint32_t)lon_off) << 1);
    return 1;
}

int geo_encode_wgs84(double lon, double lat, uint8_t step, struct geo_bits *out)
{
    return geo_encode(&lon_std, &lat_std, lon, lat, step, out);
}

int geo_decode(const struct geo_range *lon_r, const struct geo_range *lat_r, struct geo_bits hash,
               struct geo_area *area)
{
    if ((hash.bits == 0 && hash.step == 0) || !area || range_zero(lat_r) || range_zero(lon_r))
        return 0;
    area->hash = hash;
    uint8_t step = hash.step;
    uint32_t ilat = gather32(hash.bits);
    uint32_t ilon = gather32(hash.bits >> 1);
    double lat_scale = lat_r->max - lat_r->min;
    double lon_scale = lon_r->max - lon_r->min;
    double cells = (double)(1ULL << step);
    area->lat.min = lat_r->min + (ilat * 1.0 / cells) * lat_scale;
    area->lat.max = lat_r->min + ((ilat + 1) * 1.0 / cells) * lat_scale;
    area->lon.min = lon_r->min + (ilon * 1.0 / cells) * lon_scale;
    area->lon.max = lon_r->min + ((ilon + 1) * 1.0 / cells) * lon_scale;
    return 1;
}

/* (uint64_t)d as x86-64 code computes it, defined for every d: below 2^63
 * a signed truncation (out of range: the "integer indefinite" 2^63),
 * above it the truncation of d - 2^63 with the top bit flipped. */
static uint64_t score_to_u64(double d)
{
    const double two63 = 9223372036854775808.0;
    if (!(d >= two63)) {
        if (d >= -two63 && d == d)
            return (uint64_t)(int64_t)d;
        return 1ULL << 63;
    }
    double t = d - two63;
    uint64_t r = t < two63 ? (uint64_t)(int64_t)t : 1ULL << 63;
    return r ^ (1ULL << 63);
}

int geo_decode_score(double score, double xy[2])
{
    struct geo_bits h = {score_to_u64(score), GEO_STEP_MAX};
    struct geo_area a;
    if (!geo_decode(&lon_std, &lat_std, h, &a))
        return 0;
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GEO_LONG_MAX)
        xy[0] = GEO_LONG_MAX;
    if (xy[0] < GEO_LONG_MIN)
        xy[0] = GEO_LONG_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX)
        xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN)
        xy[1] = GEO_LAT_MIN;
    return 1;
}

uint64_t geo_score_of(double lon, double lat)
{
    struct geo_bits h = {0, 0};
    geo_encode_wgs84(lon, lat, GEO_STEP_MAX, &h);
    return geo_align52(h);
}

/* Move one cell along an axis (the longitude bits are the odd ones), with
 * wrap-around: add or subtract one in the axis's bits only, by filling the
 * other axis's bits with ones so the carry (or borrow) runs through them. */
static void move_axis(struct geo_bits *h, int d, int lon_axis)
{
    if (d == 0)
        return;
    const uint64_t odd = 0xaaaaaaaaaaaaaaaaULL, even = 0x5555555555555555ULL;
    uint64_t mine = h->bits & (lon_axis ? odd : even);
    uint64_t other = h->bits & (lon_axis ? even : odd);
    unsigned shift = 64 - h->step * 2;
    uint64_t fill = (lon_axis ? even : odd) >> shift;
    if (d > 0)
        mine = mine + (fill + 1);
    else
        mine = (mine | fill) - (fill + 1);
    mine &= (lon_axis ? odd : even) >> shift;
    h->bits = mine | other;
}

void geo_neighbors(const struct geo_bits *h, struct geo_neighbors *n)
{
    static const struct {
        size_t off;
        int dx, dy;
    } dirs[8] = {
        {offsetof(struct geo_neighbors, east), 1, 0},
        {offsetof(struct geo_neighbors, west), -1, 0},
        {offsetof(struct geo_neighbors, south), 0, -1},
        {offsetof(struct geo_neighbors, north), 0, 1},
        {offsetof(struct geo_neighbors, north_west), -1, 1},
        {offsetof(struct geo_neighbors, north_east), 1, 1},
        {offsetof(struct geo_neighbors, south_east), 1, -1},
        {offsetof(struct geo_neighbors, south_west), -1, -1},
    };
    for (int i = 0; i < 8; i++) {
        struct geo_bits *c = (struct geo_bits *)((char *)n + dirs[i].off);
        *c = *h;
        move_axis(c, dirs[i].dx, 1);
        move_axis(c, dirs[i].dy, 0);
    }
}

/* ---------------------------------------------------------- search area --- */

/* Cell size (bits per axis) for a search radius at a latitude: the
 * smallest cells still at least as wide as the radius, coarser near the
 * poles. */
static int steps_for_radius(double meters, double lat)
{
    if (meters == 0)
        return 26;
    int step = 1;
    while (meters < GEO_MERCATOR_MAX) {
        meters *= 2;
        step++;
    }
    step -= 2;
    if (lat > 66 || lat < -66) {
        step--;
        if (lat > 80 || lat < -80)
            step--;
    }
    if (step < 1)
        step = 1;
    if (step > 26)
        step = 26;
    return step;
}

/* The shape's bounding box (bounds: min lon, min lat, max lon, max lat).
 * The longitude half-width is taken at the latitude edge nearer the pole. */
static void bounding_box(struct geo_shape *s)
{
    double lon = s->xy[0], lat = s->xy[1];
    double h = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->height / 2);
    double w = s->conversion * (s->type == GEO_SHAPE_CIRCLE ? s->radius : s->width / 2);
    const double dlat = to_deg(h / GEO_EARTH_RADIUS_M);
    const double dlon_top = to_deg(w / GEO_EARTH_RADIUS_M / cos(to_rad(lat + dlat)));
    const double dlon_bottom = to_deg(w / GEO_EARTH_RADIUS_M / cos(to_rad(lat - dlat)));
    int south = lat < 0;
    s->bounds[0] = south ? lon - dlon_bottom : lon - dlon_top;
    s->bounds[2] = south ? lon + dlon_bottom : lon + dlon_top;
    s->bounds[1] = lat - dlat;
    s->bounds[3] = lat + dlat;
}

static inline void cell_zero(struct geo_bits *b)
{
    b->bits = 0;
    b->step = 0;
}

void geo_search_cells(struct geo_shape *s, struct geo_cover *out)
{
    struct geo_bits hash = {0, 0};
    struct geo_neighbors nb;
    struct geo_area area;
    memset(&area, 0, sizeof(area));

    bounding_box(s);
    double min_lon = s->bounds[0], min_lat = s->bounds[1], max_lon = s->bounds[2], max_lat = s->bounds[3];
    double lon = s->xy[0], lat = s->xy[1];
    /* A box counts by the distance from its centre to a corner. */
    double radius = s->type == GEO_SHAPE_CIRCLE ? s->radius
                                                : sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2));
    radius *= s->conversion;

    int steps = steps_for_radius(radius, lat);
    geo_encode(&lon_std, &lat_std, lon, lat, (uint8_t)steps, &hash);
    geo_neighbors(&hash, &nb);
    geo_decode(&lon_std, &lat_std, hash, &area);

    /* Near a cell edge the estimate can leave part of the shape outside
     * the 3x3 cells: then one step coarser. */
    int coarser = 0;
    {
        struct geo_area n, so, e, w;
        memset(&n, 0, sizeof(n));
        memset(&so, 0, sizeof(so));
        memset(&e, 0, sizeof(e));
        memset(&w, 0, sizeof(w));
        geo_decode(&lon_std, &lat_std, nb.north, &n);
        geo_decode(&lon_std, &lat_std, nb.south, &so);
        geo_decode(&lon_std, &lat_std, nb.east, &e);
        geo_decode(&lon_std, &lat_std, nb.west, &w);
        if (n.lat.max < max_lat)
            coarser = 1;
        if (so.lat.min > min_lat)
            coarser = 1;
        if (e.lon.max < max_lon)
            coarser = 1;
        if (w.lon.min > min_lon)
            coarser = 1;
    }
    if (steps > 1 && coarser) {
        steps--;
        geo_encode(&lon_std, &lat_std, lon, lat, (uint8_t)steps, &hash);
        geo_neighbors(&hash, &nb);
        geo_decode(&lon_std, &lat_std, hash, &area);
    }

    /* Drop the neighbours on a side the shape does not reach. */
    if (steps >= 2) {
        if (area.lat.min < min_lat) {
            cell_zero(&nb.south);
            cell_zero(&nb.south_west);
            cell_zero(&nb.south_east);
        }
        if (area.lat.max > max_lat) {
            cell_zero(&nb.north);
            cell_zero(&nb.north_east);
            cell_zero(&nb.north_west);
        }
        if (area.lon.min < min_lon) {
            cell_zero(&nb.west);
            cell_zero(&nb.south_west);
            cell_zero(&nb.north_west);
        }
        if (area.lon.max > max_lon) {
            cell_zero(&nb.east);
            cell_zero(&nb.south_east);
            cell_zero(&nb.north_east);
        }
    }
    out->hash = hash;
    out->nb = nb;
    out->area = area;
}

void geo_cover_list(const struct geo_cover *c, struct geo_bits cells[9])
{
    cells[0] = c->hash;
    cells[1] = c->nb.north;
    cells[2] = c->nb.south;
    cells[3] = c->nb.east;
    cells[4] = c->nb.west;
    cells[5] = c->nb.north_east;
    cells[6] = c->nb.north_west;
    cells[7] = c->nb.south_east;
    cells[8] = c->nb.south_west;
}

void geo_cell_scores(struct geo_bits cell, uint64_t *min, uint64_t *max)
{
    *min = geo_align52(cell);
    cell.bits++;
    *max = geo_align52(cell);
}

double geo_lat_distance(double lat1, double lat2)
{
    return GEO_EARTH_RADIUS_M * fabs(to_rad(lat2) - to_rad(lat1));
}

double geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double lon1r = to_rad(lon1), lon2r = to_rad(lon2);
    double v = sin((lon2r - lon1r) / 2);
    /* Same meridian: the haversine reduces to the latitude difference. */
    if (v == 0.0)
        return geo_lat_distance(lat1, lat2);
    double lat1r = to_rad(lat1), lat2r = to_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
    return 2.0 * GEO_EARTH_RADIUS_M * asin(sqrt(a));
}

int geo_in_shape(const struct geo_shape *s, double score, double xy[2], double *dist)
{
    if (!geo_decode_score(score, xy))
        return 0;
    if (s->type == GEO_SHAPE_CIRCLE) {
        double r = s->radius * s->conversion;
        /* A great-circle distance is never below the latitude difference:
         * a point whose latitude alone is out of range (with a margin far
         * above rounding) is out, and the haversine (sin, cos, asin) is
         * spared.  Points kept get the same distance as before. */
        if (geo_lat_distance(s->xy[1], xy[1]) > r * (1 + 1e-9))
            return 0;
        *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return !(*dist > r);
    }
    if (s->type == GEO_SHAPE_BOX) {
        double w = s->width * s->conversion, h = s->height * s->conversion;
        /* The cheap latitude test first. */
        if (geo_lat_distance(xy[1], s->xy[1]) > h / 2)
            return 0;
        if (geo_distance(xy[0], xy[1], s->xy[0], xy[1]) > w / 2)
            return 0;
        *dist = geo_distance(s->xy[0], s->xy[1], xy[0], xy[1]);
        return 1;
    }
    return 1;
}

int geo_hash_string(const double xy[2], char out[11])
{
    static const char b32[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    static const struct geo_range lon_r = {-180, 180}, lat_r = {-90, 90};
    struct geo_bits h = {0, 0};
    if (!geo_encode(&lon_r, &lat_r, xy[0], xy[1], GEO_STEP_MAX, &h))
        return 0;
    for (int i = 0; i < 10; i++)
        out[i] = b32[(h.bits >> (52 - (i + 1) * 5)) & 0x1f];
    out[10] = '0'; /* 52 bits fill 10.4 characters: the rest is zero */
    return 1;
}

/* --------------------------------------------------------- number text --- */

int geo_fmt_distance(char *buf, double d)
{
    if (d == 0) {
        memcpy(buf, "0.0000", 7);
        return 6;
    }
    long long sv = llrint(d * 10000.0);
    unsigned long long v = sv < 0 ? 0ULL - (unsigned long long)sv : (unsigned long long)sv;
    return snprintf(buf, 32, "%s%llu.%04llu", sv < 0 ? "-" : "", v / 10000, v % 10000);
}

int geo_fmt_coord(char *buf, size_t cap, double d)
{
    if (isinf(d)) {
        const char *s = d > 0 ? "inf" : "-inf";
        return snprintf(buf, cap, "%s", s);
    }
    if (isnan(d))
        return snprintf(buf, cap, "nan");
    int n = snprintf(buf, cap, "%.17Lf", (long double)d);
    if (n < 0 || (size_t)n >= cap) {
        if (cap)
            buf[0] = 0;
        return 0;
    }
    if (memchr(buf, '.', (size_t)n)) {
        while (buf[n - 1] == '0')
            n--;
        if (buf[n - 1] == '.')
            n--;
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        n = 1;
    }
    buf[n] = 0;
    return n;
}

/* ------------------------------------------------------------- results --- */

static inline int cmp_dist(const struct geo_point *a, const struct geo_point *b, int desc)
{
    int r = a->dist > b->dist ? 1 : a->dist == b->dist ? 0 : -1;
    return desc ? -r : r;
}

static inline void pswap(struct geo_point *a, struct geo_point *b)
{
    struct geo_point t = *a;
    *a = *b;
    *b = t;
}

/* Swap the n-element blocks at a and b, element by element. */
static inline void block_swap(struct geo_point *a, struct geo_point *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pswap(a + i, b + i);
}

static inline struct geo_point *median3(struct geo_point *a, struct geo_point *b, struct geo_point *c, int desc)
{
    if (cmp_dist(a, b, desc) < 0)
        return cmp_dist(b, c, desc) < 0 ? b : (cmp_dist(a, c, desc) < 0 ? c : a);
    return cmp_dist(b, c, desc) > 0 ? b : (cmp_dist(a, c, desc) < 0 ? a : c);
}

/* Bentley & McIlroy's three-way quicksort (as in BSD qsort), recursing
 * only into partitions that overlap elements [lo, hi] of the whole array:
 * what Redis's pqsort does for COUNT, ties included. */
static void partial_qsort(struct geo_point *a, size_t n, int desc, const struct geo_point *lo,
                          const struct geo_point *hi)
{
    for (;;) {
        if (n < 7) {
            for (struct geo_point *m = a + 1; m < a + n; m++)
                for (struct geo_point *l = m; l > a && cmp_dist(l - 1, l, desc) > 0; l--)
                    pswap(l, l - 1);
            return;
        }
        struct geo_point *pm = a + n / 2;
        if (n > 7) {
            struct geo_point *pl = a, *pn = a + (n - 1);
            if (n > 40) {
                size_t d = n / 8;
                pl = median3(pl, pl + d, pl + 2 * d, desc);
                pm = median3(pm - d, pm, pm + d, desc);
                pn = median3(pn - 2 * d, pn - d, pn, desc);
            }
            pm = median3(pl, pm, pn, desc);
        }
        pswap(a, pm);
        struct geo_point *pa = a + 1, *pb = a + 1, *pc = a + (n - 1), *pd = a + (n - 1);
        for (;;) {
            int r;
            while (pb <= pc && (r = cmp_dist(pb, a, desc)) <= 0) {
                if (r == 0)
                    pswap(pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = cmp_dist(pc, a, desc)) >= 0) {
                if (r == 0)
                    pswap(pc, pd--);
                pc--;
            }
            if (pb > pc)
                break;
            pswap(pb++, pc--);
        }
        struct geo_point *pn = a + n;
        size_t r = (size_t)(pa - a) < (size_t)(pb - pa) ? (size_t)(pa - a) : (size_t)(pb - pa);
        if (r > 0)
            block_swap(a, pb - r, r);
        r = (size_t)(pd - pc) < (size_t)(pn - pd - 1) ? (size_t)(pd - pc) : (size_t)(pn - pd - 1);
        if (r > 0)
            block_swap(pb, pn - r, r);
        /* The part below the pivot, then the part above it (a loop). */
        size_t nl = (size_t)(pb - pa);
        if (nl > 1) {
            const struct geo_point *e = a + nl - 1;
            if (!((lo < a && hi < a) || (lo > e && hi > e)))
                partial_qsort(a, nl, desc, lo, hi);
        }
        size_t nr = (size_t)(pd - pc);
        if (nr <= 1)
            return;
        a = pn - nr;
        n = nr;
        const struct geo_point *e = a + n - 1;
        if ((lo < a && hi < a) || (lo > e && hi > e))
            return;
    }
}

/* Stable top-down merge sort (glibc's qsort keeps equal elements in
 * their original order). */
static void merge_sort(struct geo_point *p, struct geo_point *tmp, size_t n, int desc)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(p, tmp, h, desc);
    merge_sort(p + h, tmp, n - h, desc);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_dist(&p[i], &p[j], desc) <= 0 ? p[i++] : p[j++];
    while (i < h)
        tmp[k++] = p[i++];
    memcpy(p, tmp, k * sizeof(*p));
}

void geo_sort_points(struct geo_point *p, size_t n, int desc, size_t keep)
{
    if (n < 2)
        return;
    if (keep >= n) {
        struct geo_point *tmp = hk_malloc(n * sizeof(*tmp));
        merge_sort(p, tmp, n, desc);
        hk_free(tmp);
        return;
    }
    if (keep == 0)
        return;
    partial_qsort(p, n, desc, p, p + (keep - 1));
}
