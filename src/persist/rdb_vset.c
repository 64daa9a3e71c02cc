/* rdb_vset.c - vector sets (OBJ_VSET, cmd/t_vset.h) in the RDB format
 * (files, DUMP/RESTORE payloads, AOF preambles), and module values in
 * general.
 *
 * Redis 8 keeps vector sets in a module ("vectorset"), so its files hold
 * them as module values (type byte 7).  We do the same under our own
 * module type, "hotkv-vec" encoding version 1, so a Redis server or tool
 * reading one of our files sees an unknown module type (a clear error, or
 * with redis-check-rdb a value it can walk over) rather than garbage.
 *
 * The value, after the type byte and the key:
 *
 *   module id       length: rdb_module_type_id("hotkv-vec", 1)
 *   UINT dim        stored (possibly reduced) dimension, 1..65536
 *   UINT quant      0 float32 (NOQUANT), 1 int8 (Q8), 2 binary (BIN)
 *   UINT M          links per node above level 0 (2*M at level 0)
 *   UINT reduce     input dimension of a REDUCE set, 0 for none
 *   [STRING proj]   only when reduce > 0: the projection matrix,
 *                   reduce x dim float32 little-endian (as t_vset.h keeps it)
 *   STRING ...      the graph: hnsw_save's bytes (ds/hnsw.h) cut into
 *                   chunks of at most 256 KiB, as many STRING items as it
 *                   takes; the graph knows its own length, so the chunks
 *                   end where hnsw_load stops reading, and the next item
 *                   is the UINT below
 *   UINT count      number of elements (= live nodes of the graph)
 *   count x (STRING name, STRING attributes ("" = none), UINT node id)
 *   EOF
 *
 * (each item preceded by its opcode, RDB_MODULE_OPCODE_*, as rdb.h says).
 * The graph is saved as it is, links included, so loading rebuilds
 * nothing: VLINKS and VSIM answer exactly as before the save.  Loading
 * validates everything (hnsw_load checks the graph: ids, levels, link
 * symmetry, entry point; vset_load_elem / vset_load_done check that every
 * live node carries exactly one element and names are unique); any damage
 * refuses the value with a message and frees what was built.
 *
 * Other module types (a Redis 8 "vectorset" value, RedisJSON ...) are
 * refused with Redis's message for a module it has no type for, or, for
 * hotkv-check-rdb (in->skip_modules), walked over with the opcode framing,
 * as redis-check-rdb does. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../types/vset.h"
#include "../db/object.h"
#include "../ds/hnsw.h"
#include "rdb.h"

#define GRAPH_CHUNK (256 * 1024)
#define VSET_MAX_DIM 65536u /* Redis's VSET_MAX_VECTOR_DIM */
#define VSET_MAX_PROJ_LOAD (1ull << 26) /* floats in a REDUCE matrix (VADD's limit) */

/* ---------------------------------------------------------- type ids --- */

static const char id_charset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                 "abcdefghijklmnopqrstuvwxyz"
                                 "0123456789-_";

uint64_t rdb_module_type_id(const char *name, int encver)
{
    if (strlen(name) != 9 || encver < 0 || encver > 1023)
        return 0;
    uint64_t id = 0;
    for (int i = 0; i < 9; i++) {
        const char *p = strchr(id_charset, name[i]);
        if (!p)
            return 0;
        id = id << 6 | (uint64_t)(p - id_charset);
    }
    return id << 10 | (uint64_t)encver;
}

void rdb_module_type_name(uint64_t id, char *name)
{
    id >>= 10;
    for (int i = 8; i >= 0; i--) {
        name[i] = id_charset[id & 63];
        id >>= 6;
    }
    name[9] = 0;
}

/* (Computed each time: a few character look-ups, and no shared state for
 * DUMPs running on several threads.) */
static uint64_t vset_module_id(void)
{
    return rdb_module_type_id(RDB_VSET_MODULE_NAME, RDB_VSET_ENCVER);
}

/* ------------------------------------------------------------- save --- */

static int w_uint(struct rdb_out *o, uint64_t v)
{
    return rdb_w_len(o, RDB_MODULE_OPCODE_UINT) < 0 ? -1 : rdb_w_len(o, v);
}

/* The graph's bytes, gathered into chunks written as STRING items. */
struct gwriter {
    struct rdb_out *o;
    unsigned char *buf;
    size_t len;
};

static int gw_flush(struct gwriter *g)
{
    if (g->len == 0)
        return 0;
    if (rdb_w_len(g->o, RDB_MODULE_OPCODE_STRING) < 0 || rdb_w_blob(g->o, g->buf, g->len) < 0)
        return -1;
    g->len = 0;
    return 0;
}

static int gw_write(void *ctx, const void *p, size_t n)
{
    struct gwriter *g = ctx;
    const unsigned char *s = p;
    while (n) {
        size_t k = GRAPH_CHUNK - g->len;
        if (k > n)
            k = n;
        memcpy(g->buf + g->len, s, k);
        g->len += k;
        s += k;
        n -= k;
        if (g->len == GRAPH_CHUNK && gw_flush(g) < 0)
            return -1;
    }
    return g->o->err ? -1 : 0;
}

struct ewriter {
    struct rdb_out *o;
    uint64_t n;
};

static void w_elem(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    struct ewriter *w = ctx;
    w->n++;
    if (w->o->err)
        return;
    if (rdb_w_len(w->o, RDB_MODULE_OPCODE_STRING) < 0 || rdb_w_str(w->o, name, nlen) < 0 ||
        rdb_w_len(w->o, RDB_MODULE_OPCODE_STRING) < 0 || rdb_w_str(w->o, attr ? attr : "", attr ? alen : 0) < 0)
        return;
    w_uint(w->o, id);
}

static void put_f32le(unsigned char *d, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    d[0] = (unsigned char)u;
    d[1] = (unsigned char)(u >> 8);
    d[2] = (unsigned char)(u >> 16);
    d[3] = (unsigned char)(u >> 24);
}

static float get_f32le(const unsigned char *s)
{
    uint32_t u = (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int rdb_save_vset(struct rdb_out *o, struct entry *e)
{
    struct vset *vs = entry_ptr(e);
    struct hnsw *h = vset_index(vs);
    const float *proj = NULL;
    uint32_t rf = vset_reduce_from(vs, &proj);
    uint32_t dim = hnsw_dim(h);
    if (rdb_w_type(o, RDB_TYPE_MODULE_2) < 0 || rdb_w_len(o, vset_module_id()) < 0 || w_uint(o, dim) < 0 ||
        w_uint(o, (uint64_t)hnsw_quant(h)) < 0 || w_uint(o, hnsw_m(h)) < 0 || w_uint(o, rf) < 0)
        return -1;
    if (rf) {
        size_t n = (size_t)rf * dim;
        unsigned char *b = hk_malloc(n * 4);
        for (size_t i = 0; i < n; i++)
            put_f32le(b + 4 * i, proj[i]);
        int r = rdb_w_len(o, RDB_MODULE_OPCODE_STRING) < 0 || rdb_w_blob(o, b, n * 4) < 0 ? -1 : 0;
        hk_free(b);
        if (r < 0)
            return -1;
    }
    struct gwriter g = {o, hk_malloc(GRAPH_CHUNK), 0};
    int r = hnsw_save(h, gw_write, &g);
    if (r == 0)
        r = gw_flush(&g);
    hk_free(g.buf);
    if (r < 0) {
        if (!o->err)
            o->err = 5; /* EIO: the graph could not be serialized */
        return -1;
    }
    uint64_t card = vset_card(vs);
    if (w_uint(o, card) < 0)
        return -1;
    struct ewriter w = {o, 0};
    vset_foreach(vs, w_elem, &w);
    if (o->err)
        return -1;
    if (w.n != card) {
        o->err = 5; /* EIO: the element table disagrees with its count */
        return -1;
    }
    return rdb_w_len(o, RDB_MODULE_OPCODE_EOF);
}

/* ------------------------------------------------------------- load --- */

/* Read an opcode and check it is the one expected. */
static int r_opcode(struct rdb_in *in, uint64_t want, const char *what)
{
    uint64_t op;
    if (rdb_r_len(in, &op, NULL) < 0)
        return -1;
    if (op != want) {
        rdb_in_fail(in, "Vector set: opcode %llu where the %s was expected", (unsigned long long)op, what);
        return -1;
    }
    return 0;
}

static int r_uint(struct rdb_in *in, uint64_t *v, const char *what)
{
    if (r_opcode(in, RDB_MODULE_OPCODE_UINT, what) < 0)
        return -1;
    return rdb_r_len(in, v, NULL);
}

static unsigned char *r_string(struct rdb_in *in, size_t *len, const char *what)
{
    if (r_opcode(in, RDB_MODULE_OPCODE_STRING, what) < 0)
        return NULL;
    return rdb_r_str(in, len);
}

/* The graph's bytes for hnsw_load, from consecutive STRING items. */
struct greader {
    struct rdb_in *in;
    unsigned char *chunk;
    size_t len, pos;
};

static int gr_read(void *ctx, void *p, size_t n)
{
    struct greader *g = ctx;
    unsigned char *d = p;
    while (n) {
        if (g->pos == g->len) {
            hk_free(g->chunk);
            g->chunk = NULL;
            g->pos = g->len = 0;
            uint64_t op;
            if (rdb_r_len(g->in, &op, NULL) < 0)
                return -1;
            if (op != RDB_MODULE_OPCODE_STRING) {
                rdb_in_fail(g->in, "Vector set: the graph is cut short (opcode %llu inside it)",
                            (unsigned long long)op);
                return -1;
            }
            size_t l;
            g->chunk = rdb_r_str(g->in, &l);
            if (!g->chunk)
                return -1;
            if (l == 0) {
                rdb_in_fail(g->in, "Vector set: empty graph chunk");
                return -1;
            }
            g->len = l;
        }
        size_t k = g->len - g->pos;
        if (k > n)
            k = n;
        memcpy(d, g->chunk + g->pos, k);
        g->pos += k;
        d += k;
        n -= k;
    }
    return 0;
}

/* Walk over a module value's body (after its id): 0 / -1. */
static int skip_module_body(struct rdb_in *in, const char *name)
{
    for (;;) {
        uint64_t op, v;
        unsigned char b[8];
        if (rdb_r_len(in, &op, NULL) < 0)
            return -1;
        switch (op) {
        case RDB_MODULE_OPCODE_EOF: return 0;
        case RDB_MODULE_OPCODE_SINT:
        case RDB_MODULE_OPCODE_UINT:
            if (rdb_r_len(in, &v, NULL) < 0)
                return -1;
            break;
        case RDB_MODULE_OPCODE_FLOAT:
            if (rdb_r_raw(in, b, 4) < 0)
                return -1;
            break;
        case RDB_MODULE_OPCODE_DOUBLE:
            if (rdb_r_raw(in, b, 8) < 0)
                return -1;
            break;
        case RDB_MODULE_OPCODE_STRING:
            if (rdb_r_skip_str(in) < 0)
                return -1;
            break;
        default:
            rdb_in_fail(in, "Unknown module opcode %llu in a value of module type '%s'", (unsigned long long)op, name);
            return -1;
        }
    }
}

static struct entry *load_vset_body(struct rdb_in *in, const char *key, size_t klen, long long expire)
{
    uint64_t dim, quant, m, rf, count;
    char err[256];
    if (r_uint(in, &dim, "dimension") < 0 || r_uint(in, &quant, "quantization") < 0 || r_uint(in, &m, "M") < 0 ||
        r_uint(in, &rf, "REDUCE dimension") < 0)
        return NULL;
    if (dim == 0 || dim > VSET_MAX_DIM || quant > HNSW_BIN || m < 2 || m > 65535 || rf > VSET_MAX_DIM ||
        rf * dim > VSET_MAX_PROJ_LOAD) {
        rdb_in_fail(in, "Vector set: invalid parameters (dim %llu, quantization %llu, M %llu, REDUCE %llu)",
                    (unsigned long long)dim, (unsigned long long)quant, (unsigned long long)m,
                    (unsigned long long)rf);
        return NULL;
    }
    float *proj = NULL;
    if (rf) {
        size_t pl, n = (size_t)rf * (size_t)dim;
        unsigned char *pb = r_string(in, &pl, "projection matrix");
        if (!pb)
            return NULL;
        if (pl != n * 4) {
            hk_free(pb);
            rdb_in_fail(in, "Vector set: projection matrix of %zu bytes for %llu x %llu", pl,
                        (unsigned long long)rf, (unsigned long long)dim);
            return NULL;
        }
        proj = hk_malloc(n * sizeof(float));
        int bad = 0;
        for (size_t i = 0; i < n; i++) {
            proj[i] = get_f32le(pb + 4 * i);
            bad |= !isfinite(proj[i]);
        }
        hk_free(pb);
        if (bad) {
            hk_free(proj);
            rdb_in_fail(in, "Vector set: projection matrix with a non-finite value");
            return NULL;
        }
    }
    struct greader g = {in, NULL, 0, 0};
    err[0] = 0;
    /* The graph's bytes are all in the input still to read, in string
     * items that may be LZF-compressed (at most 133x): its node counts
     * are checked against that. */
    uint64_t left = rdb_in_left(in);
    uint64_t gmax = left > UINT64_MAX / 133 ? UINT64_MAX : left * 133;
    struct hnsw *h = hnsw_load_limit(gr_read, &g, gmax, err, sizeof(err));
    int trailing = g.pos != g.len;
    hk_free(g.chunk);
    if (!h) {
        hk_free(proj);
        if (!in->failed)
            rdb_in_fail(in, "Vector set: invalid graph: %s", err[0] ? err : "unknown error");
        return NULL;
    }
    if (in->failed || trailing || hnsw_dim(h) != dim || hnsw_quant(h) != (int)quant || hnsw_m(h) != m) {
        hnsw_free(h);
        hk_free(proj);
        if (trailing)
            rdb_in_fail(in, "Vector set: trailing bytes after the graph");
        else
            rdb_in_fail(in, "Vector set: the graph's parameters differ from the set's");
        return NULL;
    }
    if (r_uint(in, &count, "element count") < 0 || count != hnsw_count(h)) {
        if (!in->failed)
            rdb_in_fail(in, "Vector set: %llu elements for %llu graph nodes", (unsigned long long)count,
                        (unsigned long long)hnsw_count(h));
        hnsw_free(h);
        hk_free(proj);
        return NULL;
    }
    struct vset *vs = vset_create(h, (uint32_t)rf, proj);
    hk_free(proj);
    for (uint64_t i = 0; i < count; i++) {
        size_t nl, al;
        uint64_t id;
        unsigned char *name = r_string(in, &nl, "element name");
        unsigned char *attr = name ? r_string(in, &al, "element attributes") : NULL;
        if (!attr || r_uint(in, &id, "node id") < 0) {
            hk_free(name);
            hk_free(attr);
            goto fail;
        }
        int r = id > UINT32_MAX ? -1
                                : vset_load_elem(vs, (char *)name, nl, al ? (char *)attr : NULL, al, (uint32_t)id);
        if (r < 0)
            rdb_in_fail(in, "Vector set: element '%.*s' repeated, or node id %llu invalid or taken",
                        (int)(nl > 64 ? 64 : nl), (char *)name, (unsigned long long)id);
        hk_free(name);
        hk_free(attr);
        if (r < 0)
            goto fail;
    }
    err[0] = 0;
    if (vset_load_done(vs, err, sizeof(err)) < 0) {
        rdb_in_fail(in, "Vector set: %s", err[0] ? err : "elements and graph nodes do not match");
        goto fail;
    }
    uint64_t eof;
    if (rdb_r_len(in, &eof, NULL) < 0)
        goto fail;
    if (eof != RDB_MODULE_OPCODE_EOF) {
        rdb_in_fail(in,
                    "The RDB file contains module data for the module '%s' that is not terminated by the proper "
                    "module value EOF marker",
                    RDB_VSET_MODULE_NAME);
        goto fail;
    }
    if (count == 0) {
        vset_decref(vs);
        in->empty_key = 1;
        return NULL;
    }
    return entry_new_obj(OBJ_VSET, VSET_ENC, key, klen, vs, expire);
fail:
    vset_decref(vs);
    return NULL;
}

struct entry *rdb_load_module(struct rdb_in *in, const char *key, size_t klen, long long expire)
{
    uint64_t id;
    if (rdb_r_len(in, &id, NULL) < 0)
        return NULL;
    char name[10];
    rdb_module_type_name(id, name);
    if (id >> 10 != vset_module_id() >> 10) {
        if (in->skip_modules) {
            if (skip_module_body(in, name) < 0)
                return NULL;
            memcpy(in->module_name, name, sizeof(in->module_name));
            in->empty_key = 3;
            return NULL;
        }
        rdb_in_fail(in, "The RDB file contains module data I can't load: no matching module type '%s'", name);
        return NULL;
    }
    if ((id & 1023) != RDB_VSET_ENCVER) {
        rdb_in_fail(in,
                    "The RDB file contains module data for the module type '%s', that the responsible module is not "
                    "able to load (encoding version %d; this server reads %d)",
                    name, (int)(id & 1023), RDB_VSET_ENCVER);
        return NULL;
    }
    return load_vset_body(in, key, klen, expire);
}
