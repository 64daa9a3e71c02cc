/* ds/geohash.h - the geohash arithmetic behind the GEO commands: Redis's
 * 52-bit interleaved scores, the 3x3 box cover of a search area, the
 * haversine distance, the in-shape tests, the output number formats and
 * the two result orderings Redis produces.
 *
 * Everything here must give the same bits as Redis 7.2 (src/geohash.c,
 * geohash_helper.c, geo.c), because a geo set is a plain sorted set whose
 * scores reach RDB files and ZRANGE, and because clients compare GEOPOS /
 * GEODIST output digit for digit.  So the floating-point expressions keep
 * Redis's order of operations and constants (the build has no FMA
 * contraction: -std=c11, no -march).
 *
 * Conventions: xy[0] is the longitude, xy[1] the latitude, in degrees.  A
 * score is the 52-bit hash (step 26 per axis, latitude range
 * +-GEO_LAT_MAX) as a double.  The latitude bits sit in the even
 * positions, the longitude bits in the odd ones.  Pure functions, no
 * state, any thread. */
#ifndef HK_DS_GEOHASH_H
#define HK_DS_GEOHASH_H

#include <stddef.h>
#include <stdint.h>

#define GEO_STEP_MAX 26 /* bits per axis: 52 in all */
/* EPSG:900913 limits: the Web Mercator square. */
#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LONG_MIN -180
#define GEO_LONG_MAX 180
/* Redis's earth radius (the quadratic mean radius of WGS-84), metres. */
#define GEO_EARTH_RADIUS_M 6372797.560856

/* A cell: step bits per axis, interleaved.  {0, 0} means "no cell" (a
 * neighbour dropped from a search). */
struct geo_bits {
    uint64_t bits;
    uint8_t step;
};

struct geo_range {
    double min, max;
};

struct geo_area {
    struct geo_bits hash;
    struct geo_range lon, lat;
};

/* Encode (lon, lat) at step bits per axis over the given ranges; 0 when
 * the point lies outside the GEO_* limits or the ranges (Redis's
 * geohashEncode, including which of its checks come first). */
int geo_encode(const struct geo_range *lon_r, const struct geo_range *lat_r, double lon, double lat, uint8_t step,
               struct geo_bits *out);
/* Over the standard GEO ranges. */
int geo_encode_wgs84(double lon, double lat, uint8_t step, struct geo_bits *out);
/* The cell's bounds; 0 for the "no cell" hash. */
int geo_decode(const struct geo_range *lon_r, const struct geo_range *lat_r, struct geo_bits hash,
               struct geo_area *area);
/* The hash shifted to 52 bits: a score (or score bound). */
static inline uint64_t geo_align52(struct geo_bits h)
{
    return h.bits << (52 - h.step * 2);
}
/* A score's position (the centre of its step-26 cell, clamped to the
 * limits).  Scores that no GEOADD made decode as Redis decodes them: the
 * double is converted to an unsigned 64-bit integer with x86-64's rules
 * for out-of-range values.  Returns 1. */
int geo_decode_score(double score, double xy[2]);
/* GEOADD's score for a valid position. */
uint64_t geo_score_of(double lon, double lat);

/* The 8 neighbours of a cell, wrapping around at the edges. */
struct geo_neighbors {
    struct geo_bits north, east, west, south, north_east, south_east, north_west, south_west;
};
void geo_neighbors(const struct geo_bits *h, struct geo_neighbors *n);

/* ---------------------------------------------------------- search area --- */
enum { GEO_SHAPE_CIRCLE = 1, GEO_SHAPE_BOX = 2 };

struct geo_shape {
    int type;
    double xy[2];       /* centre */
    double conversion;  /* metres per unit */
    double radius;      /* circle, in units */
    double width, height; /* box, in units */
    double bounds[4];   /* set by geo_search_cells: min lon, min lat, max lon, max lat */
};

/* The search cover: the centre cell and its neighbours, those that cannot
 * hold a point of the shape zeroed. */
struct geo_cover {
    struct geo_bits hash;
    struct geo_neighbors nb;
    struct geo_area area;
};
void geo_search_cells(struct geo_shape *shape, struct geo_cover *out);
/* The 9 cells in the order they are scanned: centre, N, S, E, W, NE, NW,
 * SE, SW. */
void geo_cover_list(const struct geo_cover *c, struct geo_bits cells[9]);
/* Score range [*min, *max) of every point inside a cell. */
void geo_cell_scores(struct geo_bits cell, uint64_t *min, uint64_t *max);

/* Great-circle distance in metres (haversine, Redis's shortcut for equal
 * longitudes included). */
double geo_distance(double lon1, double lat1, double lon2, double lat2);
/* Metres along a meridian between two latitudes. */
double geo_lat_distance(double lat1, double lat2);
/* Whether the point at score lies in the shape: 1 with its position and
 * its distance from the centre (metres), else 0. */
int geo_in_shape(const struct geo_shape *shape, double score, double xy[2], double *dist);

/* GEOHASH's 11-character base32 text of a position (re-encoded over the
 * standard -90..90 latitude range; the 11th character is always '0').
 * out gets 11 bytes, no NUL.  0 if the position cannot be encoded. */
int geo_hash_string(const double xy[2], char out[11]);

/* --------------------------------------------------------- number text --- */
/* A distance as GEODIST / WITHDIST print it: rounded to 4 decimals
 * (llrint of d * 10000, so ties go to even).  buf >= 32; returns length. */
int geo_fmt_distance(char *buf, double d);
/* A coordinate as GEOPOS / WITHCOORD print it in Redis 7.2: the long
 * double printed with 17 decimals, trailing zeros (and a bare '.') cut,
 * "-0" as "0".  buf >= 400; returns the length. */
int geo_fmt_coord(char *buf, size_t cap, double d);

/* ------------------------------------------------------------- results --- */
/* One search hit.  ref is the caller's (an index into its own array). */
struct geo_point {
    double lon, lat;
    double dist;
    double score;
    size_t ref;
};

/* Order hits by distance (desc: farthest first) as Redis does:
 * keep == n is glibc's qsort (a stable merge sort), keep < n is Redis's
 * partial quicksort (Bentley-McIlroy, sorting just enough for the first
 * keep elements to be right), which orders ties its own way.  Allocates
 * scratch for the merge sort (n elements). */
void geo_sort_points(struct geo_point *p, size_t n, int desc, size_t keep);

#endif
