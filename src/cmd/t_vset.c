/* t_vset.c - vector sets: VADD VREM VSIM VCARD VDIM VEMB VINFO VLINKS
 * VSETATTR VGETATTR VRANDMEMBER VISMEMBER VRANGE, with Redis 8.4's
 * arguments, replies (RESP2 and RESP3) and error strings.
 *
 * A vector-set key's entry (type OBJ_VSET, encoding VSET_ENC) points at a
 * struct vset, the value of types/vset.h (index, elements, attributes, lex
 * order, projection); this file parses arguments, calls it and replies.
 *
 * Locking (types/vset.h, docs/architecture.md "Vector sets"):
 *  - Writers (VADD VREM VSETATTR) are ordinary keyed commands: the
 *    dispatcher holds the key's slot lock; the type layer takes the set's
 *    rwlock in write mode around the mutation (the lock is
 *    writer-preferring).
 *  - VSIM is CMD_SELF_LOCKING: it takes the key's slot lock itself, looks
 *    the key up, takes a reference, drops the slot lock (outside a lock
 *    context: EXEC and scripts hold their slots until they end, and then
 *    slot_lock_self / slot_unlock_self leave them alone), and searches
 *    under the read lock, so searches on every worker run in parallel and
 *    no slot lock is held while one runs.  The reference keeps the set
 *    alive if the key is deleted meanwhile; the last reference frees it.
 *  - The other readers (VCARD VDIM VEMB ...) run under the slot lock like
 *    any read: every writer needs that lock, and VSIM never writes, so
 *    they need no set lock.
 *  - Order: slot lock, then set lock.  Nothing waits for a slot lock while
 *    holding a set lock. */
#include "t_vset.h"

#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/object.h"
#include "../ds/vexpr.h"
#include "../types/vset.h"
#include "commands.h"
#include "multi.h"
#include "notify.h"
#include "tracking.h"

#define VSET_MAX_DIM (1u << 16)   /* largest vector dimension accepted */
#define VSET_DEFAULT_M 16
#define VSET_MIN_M 4
#define VSET_MAX_M 4096
#define VSET_BUILD_EF 200         /* VADD EF default */
#define VSET_SEARCH_EF 100        /* VSIM EF default */
#define VSET_MAX_EF 1000000
#define VSET_COUNT 10             /* VSIM COUNT default */
#define VSET_MAX_PROJ (1ull << 26) /* floats in a REDUCE matrix */

/* A vector argument: [REDUCE dim] FP32 blob | VALUES n v1..vn at argv[i]
 * (REDUCE only when allow_reduce).  Returns the floats (caller frees) and
 * sets *dim, *reduce (0 = none) and *used (arguments consumed), or NULL
 * when the specification is invalid (Redis: "invalid vector
 * specification").  Components must be finite. */
static float *parse_vector(struct client *c, int i, int allow_reduce, uint32_t *dim, uint32_t *reduce, int *used)
{
    int n = 0;
    float *v = NULL;
    *reduce = 0;
    if (allow_reduce && c->argc > i + 2 && arg_is(c, i, "REDUCE")) {
        long long r;
        if (!str_to_ll(c->argv[i + 1], c->argvlen[i + 1], &r) || r <= 0)
            return NULL;
        *reduce = r > VSET_MAX_DIM ? VSET_MAX_DIM + 1 : (uint32_t)r;
        i += 2;
        n += 2;
    }
    if (i >= c->argc)
        return NULL;
    if (arg_is(c, i, "FP32")) {
        if (c->argc < i + 2)
            return NULL;
        size_t len = c->argvlen[i + 1];
        if (len % 4 || len < 4 || len / 4 > VSET_MAX_DIM)
            return NULL;
        *dim = (uint32_t)(len / 4);
        v = hk_malloc(len);
        memcpy(v, c->argv[i + 1], len);
        n += 2;
    } else if (arg_is(c, i, "VALUES")) {
        long long d;
        if (c->argc < i + 2 || !str_to_ll(c->argv[i + 1], c->argvlen[i + 1], &d) || d < 1 || d > VSET_MAX_DIM)
            return NULL;
        if (c->argc < i + 2 + d)
            return NULL;
        *dim = (uint32_t)d;
        v = hk_malloc(sizeof(float) * (size_t)d);
        for (long long j = 0; j < d; j++) {
            double x;
            if (!str_to_d(c->argv[i + 2 + j], c->argvlen[i + 2 + j], &x)) {
                hk_free(v);
                return NULL;
            }
            v[j] = (float)x;
        }
        n += (int)d + 2;
    } else {
        return NULL;
    }
    for (uint32_t j = 0; j < *dim; j++) {
        if (!isfinite(v[j])) {
            hk_free(v);
            return NULL;
        }
    }
    /* REDUCE to at most the input dimension; and a projection matrix of
     * at most 2^26 floats (256 MB), where Redis would try any size. */
    if (*reduce && (*reduce > *dim || (uint64_t)*reduce * *dim > VSET_MAX_PROJ)) {
        hk_free(v);
        return NULL;
    }
    *used = n;
    return v;
}

/* ---------------------------------------------------------- lookups --- */
/* The vector set at argv[1] for a command run under its slot lock: NULL
 * when absent; *bad set (and WRONGTYPE replied) for another type.  Write
 * lookups count no hit/miss (as Redis). */
static struct vset *vlookup(struct client *c, int write, int *bad)
{
    struct entry *e = db_get(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], write ? LK_NOSTATS : 0);
    *bad = 0;
    if (!e)
        return NULL;
    if (e->type != OBJ_VSET) {
        *bad = 1;
        reply_error(&c->out, ERR_WRONGTYPE);
        return NULL;
    }
    return entry_ptr(e);
}

/* ------------------------------------------------------------- VADD --- */
void vadd_command(struct client *c)
{
    uint32_t dim = 0, reduce = 0;
    int used = 0;
    float *v = parse_vector(c, 2, 1, &dim, &reduce, &used);
    if (!v) {
        reply_error(&c->out, "ERR invalid vector specification");
        return;
    }
    if (c->argc - 2 - used < 1) {
        hk_free(v);
        reply_arity_error(c);
        return;
    }
    int ei = 2 + used;
    long long ef = VSET_BUILD_EF, m = VSET_DEFAULT_M;
    int quant = HNSW_Q8, ai = -1;
    for (int j = ei + 1; j < c->argc; j++) {
        if (arg_is(c, j, "CAS")) {
            /* Redis runs the neighbour search in a thread; here the insert
             * is synchronous, which CAS allows (it always succeeds). */
        } else if (arg_is(c, j, "EF") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &ef) || ef <= 0 || ef > VSET_MAX_EF) {
                hk_free(v);
                reply_error(&c->out, "ERR invalid EF");
                return;
            }
            j++;
        } else if (arg_is(c, j, "M") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &m) || m < VSET_MIN_M || m > VSET_MAX_M) {
                hk_free(v);
                reply_error(&c->out, "ERR invalid M");
                return;
            }
            j++;
        } else if (arg_is(c, j, "SETATTR") && j + 1 < c->argc) {
            ai = ++j;
        } else if (arg_is(c, j, "NOQUANT")) {
            quant = HNSW_F32;
        } else if (arg_is(c, j, "BIN")) {
            quant = HNSW_BIN;
        } else if (arg_is(c, j, "Q8")) {
            quant = HNSW_Q8;
        } else {
            hk_free(v);
            reply_error(&c->out, "ERR invalid option after element");
            return;
        }
    }

    int bad;
    struct vset *vs = vlookup(c, 1, &bad);
    if (bad) {
        hk_free(v);
        return;
    }
    if (!vs) {
        uint32_t sdim = reduce ? reduce : dim;
        vs = vset_new(dim, quant, (uint32_t)m, reduce);
        if (reduce) {
            float *pv = vset_project(vs, v);
            hk_free(v);
            v = pv;
        }
        db_add(c->db, kslot(c, 1), entry_new_obj(OBJ_VSET, VSET_ENC, c->argv[1], c->argvlen[1], vs, -1));
        dim = sdim;
    } else {
        struct hnsw *h = vs->h;
        uint32_t sdim = hnsw_dim(h);
        if (hnsw_quant(h) != quant) {
            hk_free(v);
            reply_error(&c->out, "ERR asked quantization mismatch with existing vector set");
            return;
        }
        if (hnsw_m(h) != (uint32_t)m) {
            hk_free(v);
            reply_error(&c->out, "ERR asked M value mismatch with existing vector set");
            return;
        }
        if ((!vs->proj && sdim != dim) || (vs->proj && sdim != reduce)) {
            hk_free(v);
            reply_errorf(&c->out, "ERR Vector dimension mismatch - got %d but set has %d", (int)dim, (int)sdim);
            return;
        }
        if (reduce && !vs->proj) {
            hk_free(v);
            reply_error(&c->out, "ERR cannot add projection to existing set without projection");
            return;
        }
        if (reduce && reduce != sdim) {
            hk_free(v);
            reply_error(&c->out, "ERR projection dimension mismatch with existing set");
            return;
        }
        if (vs->proj) {
            if (dim != vs->reduce_from) {
                hk_free(v);
                reply_errorf(&c->out, "ERR Input dimension mismatch for projection - got %d but projection expects %d",
                             (int)dim, (int)vs->reduce_from);
                return;
            }
            float *pv = vset_project(vs, v);
            hk_free(v);
            v = pv;
            dim = sdim;
        }
    }

    float l2 = vset_normalize(v, dim);
    int added = vset_add(vs, c->argv[ei], c->argvlen[ei], v, l2, ai >= 0, ai >= 0 ? c->argv[ai] : NULL,
                         ai >= 0 ? c->argvlen[ai] : 0, (uint32_t)ef);
    hk_free(v);
    /* Redis replicates only additions; an update changes the set too, so
     * it is signalled (WATCH, tracking) and fed to the AOF as well. */
    KEY_SIGNAL(c, 1);
    reply_bool(&c->out, added);
}

/* ------------------------------------------------------------- VREM --- */
void vrem_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 1, &bad);
    if (bad)
        return;
    struct velem *e = vs ? vset_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_bool(&c->out, 0);
        return;
    }
    if (vset_remove(vs, e))
        db_del(c->db, kslot(c, 1), c->argv[1], c->argvlen[1]); /* drops the key's reference */
    KEY_SIGNAL(c, 1);
    reply_bool(&c->out, 1);
}

/* ------------------------------------------------------- VSETATTR --- */
void vsetattr_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 1, &bad);
    if (bad)
        return;
    struct velem *e = vs ? vset_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_bool(&c->out, 0);
        return;
    }
    vset_set_attr(vs, e, c->argv[3], c->argvlen[3]);
    KEY_SIGNAL(c, 1);
    reply_bool(&c->out, 1);
}

/* ------------------------------------------------------------- VSIM --- */
struct vsim_filter {
    const struct vexpr *x;
};

static int vsim_filter_fn(void *payload, void *ctx)
{
    const struct velem *e = payload;
    const struct vsim_filter *f = ctx;
    if (!e || !e->attr)
        return 0;
    return vexpr_eval(f->x, e->attr->s, e->attr->len);
}

static void reply_busy_vsim(struct client *c)
{
    reply_error(&c->out, atomic_load(&script_busy) == 2
                             ? "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
                             : "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
}

/* The search itself, under the set's read lock. */
static void vsim_run(struct client *c, struct vset *vs)
{
    struct hnsw *h = vs->h;
    uint32_t sdim = hnsw_dim(h), dim = 0;
    float *q = NULL;
    int vargs;

    if (arg_is(c, 2, "ELE")) {
        struct velem *e = vset_find(vs, c->argv[3], c->argvlen[3]);
        if (!e) {
            reply_error(&c->out, "ERR element not found in set");
            return;
        }
        q = hk_malloc(sizeof(float) * sdim);
        hnsw_get_vector(h, e->id, q);
        dim = sdim;
        vargs = 2;
    } else {
        uint32_t reduce;
        q = parse_vector(c, 2, 0, &dim, &reduce, &vargs);
        if (!q) {
            reply_error(&c->out, "ERR invalid vector specification");
            return;
        }
        if (vs->proj && dim != sdim) {
            if (dim != vs->reduce_from) {
                hk_free(q);
                reply_errorf(&c->out, "ERR Input dimension mismatch for projection - got %d but projection expects %d",
                             (int)dim, (int)vs->reduce_from);
                return;
            }
            float *pq = vset_project(vs, q);
            hk_free(q);
            q = pq;
            dim = sdim;
        }
    }
    if (dim != sdim) {
        hk_free(q);
        reply_errorf(&c->out, "ERR Vector dimension mismatch - got %d but set has %d", (int)dim, (int)sdim);
        return;
    }

    int withscores = 0, withattribs = 0, truth = 0;
    long long count = VSET_COUNT, ef = 0, filter_ef = 0;
    double eps = 2.0;
    struct vexpr *fx = NULL;
    for (int j = 2 + vargs; j < c->argc;) {
        const char *err = NULL;
        if (arg_is(c, j, "WITHSCORES")) {
            withscores = 1;
            j++;
        } else if (arg_is(c, j, "WITHATTRIBS")) {
            withattribs = 1;
            j++;
        } else if (arg_is(c, j, "TRUTH")) {
            truth = 1;
            j++;
        } else if (arg_is(c, j, "NOTHREAD")) {
            j++; /* every search runs on the client's worker anyway */
        } else if (arg_is(c, j, "COUNT") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &count) || count <= 0)
                err = "ERR invalid COUNT";
            j += 2;
        } else if (arg_is(c, j, "EPSILON") && j + 1 < c->argc) {
            if (!str_to_d(c->argv[j + 1], c->argvlen[j + 1], &eps) || !(eps > 0))
                err = "ERR invalid EPSILON";
            j += 2;
        } else if (arg_is(c, j, "EF") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &ef) || ef <= 0 || ef > VSET_MAX_EF)
                err = "ERR invalid EF";
            j += 2;
        } else if (arg_is(c, j, "FILTER-EF") && j + 1 < c->argc) {
            if (!str_to_ll(c->argv[j + 1], c->argvlen[j + 1], &filter_ef) || filter_ef <= 0)
                err = "ERR invalid FILTER-EF";
            j += 2;
        } else if (arg_is(c, j, "FILTER") && j + 1 < c->argc) {
            const char *s = c->argv[j + 1];
            size_t len = c->argvlen[j + 1], pos = 0;
            if (fx)
                vexpr_free(fx);
            fx = vexpr_compile_at(s, len, &pos);
            if (!fx) {
                if (pos >= len)
                    pos = 0;
                /* Redis prints the rest of the expression as a C string. */
                const char *nul = memchr(s + pos, 0, len - pos);
                size_t rest = nul ? (size_t)(nul - (s + pos)) : len - pos;
                hk_free(q);
                reply_errorf(&c->out, "ERR syntax error in FILTER expression near: %.*s", (int)rest, s + pos);
                return;
            }
            j += 2;
        } else {
            err = "ERR syntax error in VSIM command";
        }
        if (err) {
            hk_free(q);
            if (fx)
                vexpr_free(fx);
            reply_error(&c->out, err);
            return;
        }
    }
    if (filter_ef == 0)
        filter_ef = count > LLONG_MAX / 100 ? LLONG_MAX : count * 100;

    /* Exploration: EF (100 by default), at least COUNT, at most the set. */
    uint64_t card = hnsw_count(h);
    if (ef == 0)
        ef = VSET_SEARCH_EF;
    if (count > ef)
        ef = count;
    if ((uint64_t)ef > card)
        ef = (long long)card;
    uint32_t k = (uint64_t)count < card ? (uint32_t)count : (uint32_t)card;
    vset_normalize(q, sdim);
    struct hnsw_result *res = hk_malloc(sizeof(*res) * (k ? k : 1));
    struct vsim_filter f = {fx};
    uint32_t found = 0;
    if (k > 0) {
        if (truth)
            found = hnsw_search_exact(h, q, k, fx ? vsim_filter_fn : NULL, fx ? &f : NULL, res);
        else
            found = hnsw_search(h, q, k, (uint32_t)ef, fx ? vsim_filter_fn : NULL, fx ? &f : NULL,
                                fx ? (uint64_t)filter_ef : 0, res);
    }
    uint32_t n = 0;
    while (n < found && res[n].dist / 2 <= eps)
        n++;

    int resp3 = c->out.resp == 3;
    if (resp3 && (withscores || withattribs))
        reply_map(&c->out, n);
    else
        reply_array(&c->out, (long long)n * (1 + withscores + withattribs));
    for (uint32_t i = 0; i < n; i++) {
        const struct velem *e = hnsw_payload(h, res[i].id);
        reply_bulk(&c->out, e->name, e->nlen);
        if (resp3 && withscores && withattribs)
            reply_array(&c->out, 2);
        if (withscores) {
            double d = res[i].dist;
            d = d < 0 ? 0 : d > 2 ? 2 : d; /* float rounding around identical / opposite vectors */
            reply_double(&c->out, 1.0 - d / 2.0);
        }
        if (withattribs) {
            if (e->attr)
                reply_bulk(&c->out, e->attr->s, e->attr->len);
            else
                reply_null(&c->out);
        }
    }
    hk_free(res);
    hk_free(q);
    if (fx)
        vexpr_free(fx);
}

/* CMD_SELF_LOCKING (see the header comment): the dispatcher runs it with
 * no lock; EXEC and scripts (cmd_call) inside their lock context, where
 * slot_lock_self/slot_unlock_self keep the context's locks. */
void vsim_command(struct client *c)
{
    unsigned s = key_slot(c->argv[1], c->argvlen[1]);
    int ctx = lockctx_active();
    if (ctx) {
        slot_lock_self(s);
    } else if (!spin_trylock(&ks.locks[s]) && db_lock_one_ex(s, 1) < 0) {
        reply_busy_vsim(c);
        return;
    }
    struct entry *e = db_get(c->db, s, c->argv[1], c->argvlen[1], 0);
    struct vset *vs = NULL;
    if (!e) {
        reply_array(&c->out, 0);
    } else if (e->type != OBJ_VSET) {
        reply_error(&c->out, ERR_WRONGTYPE);
    } else {
        vs = entry_ptr(e);
        vset_incref(vs);
    }
    if (!ctx) {
        tracking_remember_keys(c); /* cmd_call does it inside a context */
        spin_unlock(&ks.locks[s]);
    }
    if (!vs)
        return;
    vset_rdlock(vs);
    vsim_run(c, vs);
    vset_unlock(vs);
    vset_decref(vs);
}

/* --------------------------------------------------- plain readers --- */
void vcard_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (!bad)
        reply_int(&c->out, vs ? (long long)vset_card(vs) : 0);
}

void vdim_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    if (!vs)
        reply_error(&c->out, "ERR key does not exist");
    else
        reply_int(&c->out, hnsw_dim(vs->h));
}

void vemb_command(struct client *c)
{
    int raw = 0;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(c, j, "RAW")) {
            raw = 1;
        } else {
            reply_error(&c->out, "ERR invalid option");
            return;
        }
    }
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    struct velem *e = vs ? vset_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_null(&c->out);
        return;
    }
    struct hnsw *h = vs->h;
    int quant = hnsw_quant(h);
    if (raw) {
        size_t len;
        float range = 0;
        const void *p = hnsw_raw(h, e->id, &len, &range);
        float *tmp = hk_malloc(sizeof(float) * hnsw_dim(h));
        float l2 = hnsw_get_vector(h, e->id, tmp);
        hk_free(tmp);
        reply_array(&c->out, quant == HNSW_Q8 ? 4 : 3);
        reply_status(&c->out, vset_quant_name(quant));
        reply_bulk(&c->out, p, len);
        reply_double(&c->out, l2);
        if (quant == HNSW_Q8)
            reply_double(&c->out, range);
        return;
    }
    uint32_t dim = hnsw_dim(h);
    float *v = hk_malloc(sizeof(float) * dim);
    float l2 = hnsw_get_vector(h, e->id, v);
    reply_array(&c->out, dim);
    for (uint32_t i = 0; i < dim; i++) {
        /* De-normalised, as Redis returns it; binary vectors as +-1. */
        float x = quant == HNSW_BIN ? (v[i] > 0 ? 1.0f : -1.0f) : v[i] * l2;
        reply_double(&c->out, x);
    }
    hk_free(v);
}

void vinfo_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    if (!vs) {
        reply_null_array(&c->out);
        return;
    }
    struct hnsw *h = vs->h;
    int ml = hnsw_max_level(h);
    reply_map(&c->out, 9);
    reply_status(&c->out, "quant-type");
    reply_status(&c->out, vset_quant_name(hnsw_quant(h)));
    reply_status(&c->out, "hnsw-m");
    reply_int(&c->out, hnsw_m(h));
    reply_status(&c->out, "vector-dim");
    reply_int(&c->out, hnsw_dim(h));
    reply_status(&c->out, "projection-input-dim");
    reply_int(&c->out, vs->reduce_from);
    reply_status(&c->out, "size");
    reply_int(&c->out, (long long)vset_card(vs));
    reply_status(&c->out, "max-level");
    reply_int(&c->out, ml < 0 ? 0 : ml);
    reply_status(&c->out, "attributes-count");
    reply_int(&c->out, (long long)vs->nattr);
    reply_status(&c->out, "vset-uid");
    reply_int(&c->out, (long long)vs->uid);
    reply_status(&c->out, "hnsw-max-node-uid");
    reply_int(&c->out, hnsw_max_id(h));
}

void vlinks_command(struct client *c)
{
    int withscores = 0;
    if (c->argc > 4) {
        reply_arity_error(c);
        return;
    }
    if (c->argc == 4) {
        if (!arg_is(c, 3, "WITHSCORES")) {
            reply_arity_error(c);
            return;
        }
        withscores = 1;
    }
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    struct velem *e = vs ? vset_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_null(&c->out);
        return;
    }
    struct hnsw *h = vs->h;
    int level = hnsw_node_level(h, e->id);
    float *v = NULL;
    if (withscores) {
        v = hk_malloc(sizeof(float) * hnsw_dim(h));
        hnsw_get_vector(h, e->id, v);
    }
    reply_array(&c->out, level + 1);
    for (int l = level; l >= 0; l--) {
        const uint32_t *links;
        uint32_t n = hnsw_links(h, e->id, l, &links);
        if (withscores)
            reply_map(&c->out, n);
        else
            reply_array(&c->out, n);
        for (uint32_t i = 0; i < n; i++) {
            const struct velem *o = hnsw_payload(h, links[i]);
            reply_bulk(&c->out, o->name, o->nlen);
            if (withscores) {
                float d = hnsw_distance(h, v, links[i]);
                float sim = 1.0f - d / 2.0f;
                reply_double(&c->out, sim);
            }
        }
    }
    hk_free(v);
}

void vgetattr_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    struct velem *e = vs ? vset_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e || !e->attr)
        reply_null(&c->out);
    else
        reply_bulk(&c->out, e->attr->s, e->attr->len);
}

void vismember_command(struct client *c)
{
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (!bad)
        reply_bool(&c->out, vs && vset_find(vs, c->argv[2], c->argvlen[2]) != NULL);
}

void vrandmember_command(struct client *c)
{
    long long count = 1;
    int with_count = c->argc == 3;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (with_count) {
        if (!str_to_ll(c->argv[2], c->argvlen[2], &count)) {
            reply_error(&c->out, "ERR COUNT value is not an integer");
            return;
        }
        /* -LLONG_MIN has no long long value: refused before the key is
         * looked at (Redis 8.4's fix, with core SRANDMEMBER's range). */
        if (count == LLONG_MIN) {
            reply_error(&c->out,
                        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
            return;
        }
        if (count == 0) {
            reply_array(&c->out, 0);
            return;
        }
    }
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    uint64_t card = vs ? vset_card(vs) : 0;
    if (card == 0) {
        if (with_count)
            reply_array(&c->out, 0);
        else
            reply_null(&c->out);
        return;
    }
    struct hnsw *h = vs->h;
    if (!with_count) {
        const struct velem *e = hnsw_payload(h, hnsw_random_node(h, rand64()));
        reply_bulk(&c->out, e->name, e->nlen);
        return;
    }
    int dups = count < 0;
    unsigned long long n = dups ? (unsigned long long)0 - (unsigned long long)count : (unsigned long long)count;
    if (!dups && n > card)
        n = card;
    reply_array(&c->out, (long long)n);
    if (dups) {
        for (unsigned long long i = 0; i < n; i++) {
            const struct velem *e = hnsw_payload(h, hnsw_random_node(h, rand64()));
            reply_bulk(&c->out, e->name, e->nlen);
            /* A huge negative count: stop past 512 MB of pending output
             * and close the client, as HRANDFIELD does. */
            if ((i & 1023) == 1023 && c->out.len > (512ull << 20)) {
                c->flags |= CF_CLOSE_ASAP;
                break;
            }
        }
    } else if ((double)n <= (double)card * 0.2) {
        /* Distinct random nodes: reject repeats with a small id set. */
        size_t cap = 16;
        while (cap < n * 2)
            cap *= 2;
        uint32_t *seen = hk_malloc(sizeof(uint32_t) * cap);
        memset(seen, 0xff, sizeof(uint32_t) * cap);
        unsigned long long got = 0;
        while (got < n) {
            uint32_t id = hnsw_random_node(h, rand64());
            size_t b = (size_t)((id * 2654435761u) & (cap - 1));
            while (seen[b] != UINT32_MAX && seen[b] != id)
                b = (b + 1) & (cap - 1);
            if (seen[b] == id)
                continue;
            seen[b] = id;
            const struct velem *e = hnsw_payload(h, id);
            reply_bulk(&c->out, e->name, e->nlen);
            got++;
        }
        hk_free(seen);
    } else {
        /* Many: a walk in name order from a random element (as Redis,
         * which walks its node list, for the same reason). */
        uint32_t li, p;
        vset_lex_at(&vs->lex, rand64() % card, &li, &p);
        for (unsigned long long i = 0; i < n; i++) {
            const struct velem *e = vs->lex.leaf[li]->e[p];
            reply_bulk(&c->out, e->name, e->nlen);
            if (++p == vs->lex.leaf[li]->n) {
                p = 0;
                if (++li == vs->lex.nleaf)
                    li = 0;
            }
        }
    }
}

/* A VRANGE bound: "-", "+", "[name" or "(name". */
struct vbound {
    int kind; /* 0 string, 1 "-", 2 "+" */
    int excl;
    const char *s;
    size_t len;
};

static int parse_vbound(const char *s, size_t len, struct vbound *b)
{
    memset(b, 0, sizeof(*b));
    if (len == 0)
        return 0;
    if (len == 1 && s[0] == '-') {
        b->kind = 1;
        return 1;
    }
    if (len == 1 && s[0] == '+') {
        b->kind = 2;
        return 1;
    }
    if (s[0] != '[' && s[0] != '(')
        return 0;
    if (len < 2)
        return 0;
    b->excl = s[0] == '(';
    b->s = s + 1;
    b->len = len - 1;
    return 1;
}

void vrange_command(struct client *c)
{
    long long count = -1;
    if (c->argc > 5) {
        reply_arity_error(c);
        return;
    }
    if (c->argc == 5 && !str_to_ll(c->argv[4], c->argvlen[4], &count)) {
        reply_error(&c->out, "ERR invalid COUNT value");
        return;
    }
    struct vbound lo, hi;
    if (!parse_vbound(c->argv[2], c->argvlen[2], &lo)) {
        reply_error(&c->out, "ERR invalid start range format");
        return;
    }
    if (!parse_vbound(c->argv[3], c->argvlen[3], &hi)) {
        reply_error(&c->out, "ERR invalid end range format");
        return;
    }
    if (lo.kind == 2 || hi.kind == 1) {
        reply_error(&c->out, "ERR '-' can only be used as first argument, '+' only as second");
        return;
    }
    int bad;
    struct vset *vs = vlookup(c, 0, &bad);
    if (bad)
        return;
    if (!vs || count == 0) {
        reply_array(&c->out, 0);
        return;
    }
    const struct lexidx *x = &vs->lex;
    uint32_t li = 0, p = 0;
    if (lo.kind == 0)
        p = vset_lex_seek(x, lo.s, lo.len, lo.excl, &li);
    size_t mark = reply_defer(&c->out);
    long long n = 0;
    while (li < x->nleaf && (count < 0 || n < count)) {
        const struct lexleaf *l = x->leaf[li];
        if (p >= l->n) {
            li++;
            p = 0;
            continue;
        }
        const struct velem *e = l->e[p++];
        if (hi.kind == 0) {
            int cmp = vset_namecmp(e->name, e->nlen, hi.s, hi.len);
            if (hi.excl ? cmp >= 0 : cmp > 0)
                break;
        }
        reply_bulk(&c->out, e->name, e->nlen);
        n++;
    }
    reply_defer_array(&c->out, mark, n);
}
