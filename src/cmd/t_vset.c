/* t_vset.c - vector sets: VADD VREM VSIM VCARD VDIM VEMB VINFO VLINKS
 * VSETATTR VGETATTR VRANDMEMBER VISMEMBER VRANGE, with Redis 8.4's
 * arguments, replies (RESP2 and RESP3) and error strings.
 *
 * A vector-set key's entry (type OBJ_VSET, encoding VSET_ENC) points at a
 * struct vset:
 *  - the HNSW index (ds/hnsw.h), whose node payloads are the elements;
 *  - the elements: one allocation each (dict link, attributes, node id,
 *    name bytes), indexed by name in an intrusive hash (ds/dict.h) and
 *    kept in byte order by the lex index below (VRANGE, VRANDMEMBER's
 *    walk, the persistence walk);
 *  - the REDUCE projection when the set has one.
 * Vectors are L2-normalised before they reach the index (their norm is
 * kept there for VEMB); the index's distance is 1 - cosine (0..2) and the
 * reported similarity 1 - distance / 2.
 *
 * Memory per element beyond the index node: the element (24 bytes + name,
 * rounded by the allocator), one hash bucket (8-16 bytes) and one lex-index
 * slot (8 bytes in leaves kept between 1/4 and full).
 *
 * Locking (t_vset.h, docs/architecture.md "Vector sets"):
 *  - Writers (VADD VREM VSETATTR) are ordinary keyed commands: the
 *    dispatcher holds the key's slot lock; they take the set's rwlock in
 *    write mode around the mutation (the lock is writer-preferring).
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
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/object.h"
#include "../ds/dict.h"
#include "../ds/vexpr.h"
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

/* ---------------------------------------------------------- elements --- */
struct vattr {
    uint32_t len;
    char s[];
};

struct velem {
    struct dict_link link; /* first: a dict_link * is a struct velem * */
    struct vattr *attr;    /* JSON attributes, NULL when none */
    uint32_t id;           /* its node in the index */
    uint32_t nlen;
    char name[];
};

static const char *ve_key(const struct dict_link *it, size_t *len)
{
    const struct velem *e = (const struct velem *)it;
    *len = e->nlen;
    return e->name;
}

static const struct dict_type velem_dict_type = {ve_key};

static int lexcmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* ------------------------------------------------------- lex index ---
 * The elements in byte order of their names: a sorted array of leaves,
 * each a sorted array of up to LEX_LEAF_MAX element pointers.  Seek = a
 * binary search over the leaves' last names, then one inside the leaf;
 * insert/remove move at most one leaf's pointers (a full leaf splits in
 * two, a leaf that gets small merges with its right neighbour). */
#define LEX_LEAF_MAX 128

struct lexleaf {
    uint32_t n, cap;
    struct velem *e[];
};

struct lexidx {
    struct lexleaf **leaf;
    uint32_t nleaf, cap;
    size_t bytes; /* usable bytes of the leaves and the leaf array */
};

static struct lexleaf *leaf_new(uint32_t cap)
{
    struct lexleaf *l = hk_malloc(sizeof(*l) + sizeof(struct velem *) * cap);
    l->n = 0;
    l->cap = cap;
    return l;
}

static void lex_set_leaf_array(struct lexidx *x, uint32_t cap)
{
    if (x->leaf)
        x->bytes -= hk_usable(x->leaf);
    x->leaf = hk_realloc(x->leaf, sizeof(struct lexleaf *) * cap);
    x->cap = cap;
    x->bytes += hk_usable(x->leaf);
}

/* Put leaf l at index i of the leaf array. */
static void lex_insert_leaf(struct lexidx *x, uint32_t i, struct lexleaf *l)
{
    if (x->nleaf == x->cap)
        lex_set_leaf_array(x, x->cap ? x->cap * 2 : 4);
    memmove(x->leaf + i + 1, x->leaf + i, sizeof(*x->leaf) * (x->nleaf - i));
    x->leaf[i] = l;
    x->nleaf++;
    x->bytes += hk_usable(l);
}

static void lex_drop_leaf(struct lexidx *x, uint32_t i)
{
    x->bytes -= hk_usable(x->leaf[i]);
    hk_free(x->leaf[i]);
    memmove(x->leaf + i, x->leaf + i + 1, sizeof(*x->leaf) * (x->nleaf - i - 1));
    x->nleaf--;
    if (x->nleaf == 0) {
        x->bytes -= hk_usable(x->leaf);
        hk_free(x->leaf);
        x->leaf = NULL;
        x->cap = 0;
    } else if (x->cap > 8 && x->nleaf < x->cap / 4) {
        lex_set_leaf_array(x, x->cap / 2);
    }
}

static struct lexleaf *leaf_resize(struct lexidx *x, uint32_t i, uint32_t cap)
{
    struct lexleaf *l = x->leaf[i];
    x->bytes -= hk_usable(l);
    l = hk_realloc(l, sizeof(*l) + sizeof(struct velem *) * cap);
    l->cap = cap;
    x->bytes += hk_usable(l);
    x->leaf[i] = l;
    return l;
}

/* Is element e before the bound (k, kl)?  excl: also when equal (the
 * bound itself is excluded, so equal elements come "before" it). */
static int before(const struct velem *e, const char *k, size_t kl, int excl)
{
    int c = lexcmp(e->name, e->nlen, k, kl);
    return c < 0 || (excl && c == 0);
}

/* Where the first element not before (k, kl) is: *li leaf, return the
 * position in it (== its n when every element is before the bound). */
static uint32_t lex_seek(const struct lexidx *x, const char *k, size_t kl, int excl, uint32_t *li)
{
    uint32_t lo = 0, hi = x->nleaf - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct lexleaf *l = x->leaf[mid];
        if (before(l->e[l->n - 1], k, kl, excl))
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct lexleaf *l = x->leaf[lo];
    uint32_t a = 0, b = l->n;
    while (a < b) {
        uint32_t mid = a + (b - a) / 2;
        if (before(l->e[mid], k, kl, excl))
            a = mid + 1;
        else
            b = mid;
    }
    *li = lo;
    return a;
}

static void lex_insert(struct lexidx *x, struct velem *e)
{
    uint32_t li, p;
    if (x->nleaf == 0) {
        lex_insert_leaf(x, 0, leaf_new(4));
        li = 0;
        p = 0;
    } else {
        p = lex_seek(x, e->name, e->nlen, 0, &li);
    }
    struct lexleaf *l = x->leaf[li];
    if (l->n == LEX_LEAF_MAX) {
        /* Split: the upper half moves to a new leaf after this one. */
        uint32_t half = l->n / 2;
        struct lexleaf *r = leaf_new(LEX_LEAF_MAX);
        r->n = l->n - half;
        memcpy(r->e, l->e + half, sizeof(*r->e) * r->n);
        l->n = half;
        lex_insert_leaf(x, li + 1, r);
        if (p > half) {
            li++;
            p -= half;
            l = r;
        }
    }
    if (l->n == l->cap)
        l = leaf_resize(x, li, l->cap * 2 > LEX_LEAF_MAX ? LEX_LEAF_MAX : l->cap * 2);
    memmove(l->e + p + 1, l->e + p, sizeof(*l->e) * (l->n - p));
    l->e[p] = e;
    l->n++;
}

/* Append e, known to sort after every element (COPY, in order). */
static void lex_append(struct lexidx *x, struct velem *e)
{
    struct lexleaf *l = x->nleaf ? x->leaf[x->nleaf - 1] : NULL;
    if (!l || l->n == LEX_LEAF_MAX) {
        lex_insert_leaf(x, x->nleaf, leaf_new(LEX_LEAF_MAX));
        l = x->leaf[x->nleaf - 1];
    }
    l->e[l->n++] = e;
}

static void lex_remove(struct lexidx *x, const struct velem *e)
{
    uint32_t li, p = lex_seek(x, e->name, e->nlen, 0, &li);
    struct lexleaf *l = x->leaf[li];
    if (p >= l->n || l->e[p] != e)
        return; /* not indexed (cannot happen) */
    memmove(l->e + p, l->e + p + 1, sizeof(*l->e) * (l->n - p - 1));
    l->n--;
    if (l->n == 0) {
        lex_drop_leaf(x, li);
        return;
    }
    if (li + 1 < x->nleaf && l->n + x->leaf[li + 1]->n <= LEX_LEAF_MAX / 2) {
        struct lexleaf *r = x->leaf[li + 1];
        if (l->cap < l->n + r->n)
            l = leaf_resize(x, li, LEX_LEAF_MAX / 2);
        memcpy(l->e + l->n, r->e, sizeof(*r->e) * r->n);
        l->n += r->n;
        lex_drop_leaf(x, li + 1);
    } else if (l->cap >= 16 && l->n <= l->cap / 4) {
        leaf_resize(x, li, l->cap / 2);
    }
}

static void lex_free(struct lexidx *x)
{
    for (uint32_t i = 0; i < x->nleaf; i++)
        hk_free(x->leaf[i]);
    hk_free(x->leaf);
    memset(x, 0, sizeof(*x));
}

/* ------------------------------------------------------------- sets --- */
struct vset {
    atomic_uint refs;
    pthread_rwlock_t lock;
    struct hnsw *h;
    struct dict *names;      /* name -> struct velem */
    struct lexidx lex;
    float *proj;             /* REDUCE: dim rows of reduce_from floats */
    uint32_t reduce_from;    /* input dimension of the projection, 0 = none */
    uint64_t uid;            /* VINFO vset-uid */
    uint64_t nattr;          /* elements with attributes */
    size_t elem_bytes;       /* usable bytes of the elements and attributes */
};

static atomic_ullong vset_next_uid;

static struct vset *vset_alloc(struct hnsw *h, uint32_t reduce_from, const float *proj)
{
    struct vset *vs = hk_calloc(sizeof(*vs));
    pthread_rwlockattr_t a;
    pthread_rwlockattr_init(&a);
    /* Writer-preferring: a VADD waits for the running searches only, not
     * for the ones that start after it. */
    pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&vs->lock, &a);
    pthread_rwlockattr_destroy(&a);
    atomic_init(&vs->refs, 1);
    vs->h = h;
    vs->names = dict_new(&velem_dict_type, 0);
    if (reduce_from && proj) {
        size_t n = (size_t)reduce_from * hnsw_dim(h);
        vs->proj = hk_memdup(proj, sizeof(float) * n);
        vs->reduce_from = reduce_from;
    }
    vs->uid = atomic_fetch_add(&vset_next_uid, 1);
    return vs;
}

static void velem_free(struct dict_link *it)
{
    struct velem *e = (struct velem *)it;
    hk_free(e->attr);
    hk_free(e);
}

static void vset_destroy(struct vset *vs)
{
    dict_free(vs->names, velem_free);
    lex_free(&vs->lex);
    hnsw_free(vs->h);
    hk_free(vs->proj);
    pthread_rwlock_destroy(&vs->lock);
    hk_free(vs);
}

void vset_incref(struct vset *vs)
{
    atomic_fetch_add_explicit(&vs->refs, 1, memory_order_relaxed);
}

void vset_decref(struct vset *vs)
{
    if (atomic_fetch_sub_explicit(&vs->refs, 1, memory_order_acq_rel) == 1)
        vset_destroy(vs);
}

static struct vattr *vattr_new(const char *s, size_t len)
{
    if (len == 0)
        return NULL;
    struct vattr *a = hk_malloc(sizeof(*a) + len);
    a->len = (uint32_t)len;
    memcpy(a->s, s, len);
    return a;
}

static size_t attr_bytes(struct vattr *a)
{
    return a ? hk_usable(a) : 0;
}

/* Replace e's attributes by a (NULL: none), keeping the counts. */
static void elem_set_attr(struct vset *vs, struct velem *e, struct vattr *a)
{
    if (e->attr) {
        vs->nattr--;
        vs->elem_bytes -= attr_bytes(e->attr);
        hk_free(e->attr);
    }
    e->attr = a;
    if (a) {
        vs->nattr++;
        vs->elem_bytes += attr_bytes(a);
    }
}

/* A new element record attached to node id: hash, lex index, payload. */
static struct velem *elem_add(struct vset *vs, const char *name, size_t nlen, struct vattr *a, uint32_t id)
{
    struct velem *e = hk_malloc(sizeof(*e) + nlen);
    e->attr = NULL;
    e->id = id;
    e->nlen = (uint32_t)nlen;
    memcpy(e->name, name, nlen);
    vs->elem_bytes += hk_usable(e);
    elem_set_attr(vs, e, a);
    dict_add(vs->names, &e->link);
    lex_insert(&vs->lex, e);
    return e;
}

static void elem_del(struct vset *vs, struct velem *e)
{
    lex_remove(&vs->lex, e);
    dict_remove(vs->names, e->name, e->nlen);
    elem_set_attr(vs, e, NULL);
    vs->elem_bytes -= hk_usable(e);
    hk_free(e);
}

static struct velem *elem_find(const struct vset *vs, const char *name, size_t nlen)
{
    return (struct velem *)dict_find(vs->names, name, nlen);
}

/* ------------------------------------------------ persistence API --- */
struct vset *vset_create(struct hnsw *h, uint32_t reduce_from, const float *proj)
{
    return vset_alloc(h, reduce_from, proj);
}

int vset_load_elem(struct vset *vs, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    if (nlen > UINT32_MAX || alen > UINT32_MAX || id >= hnsw_max_id(vs->h) || !hnsw_exists(vs->h, id) ||
        hnsw_payload(vs->h, id) != NULL || elem_find(vs, name, nlen))
        return -1;
    struct velem *e = elem_add(vs, name, nlen, attr ? vattr_new(attr, alen) : NULL, id);
    hnsw_set_payload(vs->h, id, e);
    return 0;
}

int vset_load_done(struct vset *vs, char *err, size_t errlen)
{
    if ((uint64_t)dict_size(vs->names) != hnsw_count(vs->h)) {
        if (err && errlen)
            snprintf(err, errlen, "vector set has %llu elements for %llu index nodes",
                     (unsigned long long)dict_size(vs->names), (unsigned long long)hnsw_count(vs->h));
        return -1;
    }
    return 0;
}

struct hnsw *vset_index(const struct vset *vs)
{
    return vs->h;
}

uint32_t vset_reduce_from(const struct vset *vs, const float **proj)
{
    if (proj)
        *proj = vs->proj;
    return vs->reduce_from;
}

void vset_foreach(const struct vset *vs, vset_elem_fn fn, void *ctx)
{
    for (uint32_t i = 0; i < vs->lex.nleaf; i++) {
        const struct lexleaf *l = vs->lex.leaf[i];
        for (uint32_t j = 0; j < l->n; j++) {
            const struct velem *e = l->e[j];
            fn(ctx, e->name, e->nlen, e->attr ? e->attr->s : NULL, e->attr ? e->attr->len : 0, e->id);
        }
    }
}

uint64_t vset_card(const struct vset *vs)
{
    return dict_size(vs->names);
}

/* COPY: a deep copy (the caller holds the source's slot lock, so no writer
 * runs; searches only read). */
static struct vset *vset_dup(const struct vset *src)
{
    struct vset *vs = vset_alloc(hnsw_dup(src->h), src->reduce_from, src->proj);
    dict_expand(vs->names, dict_size(src->names));
    for (uint32_t i = 0; i < src->lex.nleaf; i++) {
        const struct lexleaf *l = src->lex.leaf[i];
        for (uint32_t j = 0; j < l->n; j++) {
            const struct velem *o = l->e[j];
            struct velem *e = hk_malloc(sizeof(*e) + o->nlen);
            e->attr = NULL;
            e->id = o->id;
            e->nlen = o->nlen;
            memcpy(e->name, o->name, o->nlen);
            vs->elem_bytes += hk_usable(e);
            if (o->attr)
                elem_set_attr(vs, e, vattr_new(o->attr->s, o->attr->len));
            dict_add(vs->names, &e->link);
            lex_append(&vs->lex, e);
            hnsw_set_payload(vs->h, e->id, e);
        }
    }
    return vs;
}

/* ------------------------------------------------------ type ops --- */
static void vt_free(void *p, uint8_t enc)
{
    (void)enc;
    vset_decref(p);
}

static void *vt_dup(const void *p, uint8_t enc)
{
    (void)enc;
    return vset_dup(p);
}

static size_t vt_mem(const void *p, uint8_t enc)
{
    (void)enc;
    const struct vset *vs = p;
    size_t n = hk_usable((void *)vs) + hnsw_mem(vs->h) + dict_mem(vs->names) + vs->elem_bytes + vs->lex.bytes;
    if (vs->proj)
        n += hk_usable(vs->proj);
    return n;
}

static size_t vt_len(const void *p, uint8_t enc)
{
    (void)enc;
    return (size_t)vset_card(p);
}

static size_t vt_effort(const void *p, uint8_t enc)
{
    (void)enc;
    const struct vset *vs = p;
    /* element + index node per element, attributes, leaves */
    return 2 * dict_size(vs->names) + vs->nattr + vs->lex.nleaf + 4;
}

const struct type_ops vset_type_ops = {vt_free, vt_dup, vt_mem, vt_len, vt_effort};

/* ------------------------------------------------------- vectors --- */
/* The REDUCE projection from `from` to `to` dimensions, Redis's
 * deterministic choice (so the same VADDs build the same set anywhere):
 * entry (i, j) is +-1/sqrt(from), negative when i & j has an odd number of
 * one bits (a Hadamard-like sign pattern). */
static float *proj_make(uint32_t from, uint32_t to)
{
    float *m = hk_malloc(sizeof(float) * (size_t)from * to);
    float scale = (float)(1.0 / sqrt((double)from));
    for (uint32_t i = 0; i < to; i++)
        for (uint32_t j = 0; j < from; j++)
            m[(size_t)i * from + j] = (__builtin_popcount(i & j) & 1) ? -scale : scale;
    return m;
}

static float *proj_apply(const float *m, uint32_t from, uint32_t to, const float *in)
{
    float *out = hk_malloc(sizeof(float) * to);
    for (uint32_t i = 0; i < to; i++) {
        const float *row = m + (size_t)i * from;
        float s = 0.0f;
        for (uint32_t j = 0; j < from; j++)
            s += row[j] * in[j];
        out[i] = s;
    }
    return out;
}

/* Normalise v in place; returns its former L2 norm (a zero vector stays
 * zero, norm 0). */
static float vec_normalize(float *v, uint32_t dim)
{
    double s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += (double)v[i] * v[i];
    double l2 = sqrt(s);
    if (l2 > 0) {
        float inv = (float)(1.0 / l2);
        if (isinf(inv)) {
            /* A norm below 1/FLT_MAX (denormal components): 1/l2 is not a
             * float, and inf * v[i] would store inf and NaN. */
            for (uint32_t i = 0; i < dim; i++)
                v[i] = (float)((double)v[i] / l2);
        } else {
            for (uint32_t i = 0; i < dim; i++)
                v[i] *= inv;
        }
    }
    return (float)l2;
}

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

static const char *quant_name(int q)
{
    switch (q) {
    case HNSW_F32: return "f32";
    case HNSW_Q8: return "int8";
    case HNSW_BIN: return "bin";
    default: return "unknown";
    }
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
        float *proj = NULL;
        if (reduce) {
            proj = proj_make(dim, reduce);
            float *pv = proj_apply(proj, dim, reduce, v);
            hk_free(v);
            v = pv;
        }
        vs = vset_alloc(hnsw_new(sdim, quant, (uint32_t)m), 0, NULL);
        vs->proj = proj;
        vs->reduce_from = reduce ? dim : 0;
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
            float *pv = proj_apply(vs->proj, vs->reduce_from, sdim, v);
            hk_free(v);
            v = pv;
            dim = sdim;
        }
    }

    float l2 = vec_normalize(v, dim);
    const char *name = c->argv[ei];
    size_t nlen = c->argvlen[ei];
    int added;
    pthread_rwlock_wrlock(&vs->lock);
    struct velem *e = elem_find(vs, name, nlen);
    if (e) {
        /* Update: the element gets a new node with the new vector. */
        hnsw_delete(vs->h, e->id);
        e->id = hnsw_insert(vs->h, v, l2, e, (uint32_t)ef);
        if (ai >= 0)
            elem_set_attr(vs, e, vattr_new(c->argv[ai], c->argvlen[ai]));
        added = 0;
    } else {
        struct vattr *a = ai >= 0 ? vattr_new(c->argv[ai], c->argvlen[ai]) : NULL;
        e = elem_add(vs, name, nlen, a, 0);
        e->id = hnsw_insert(vs->h, v, l2, e, (uint32_t)ef);
        added = 1;
    }
    pthread_rwlock_unlock(&vs->lock);
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
    struct velem *e = vs ? elem_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_bool(&c->out, 0);
        return;
    }
    pthread_rwlock_wrlock(&vs->lock);
    hnsw_delete(vs->h, e->id);
    elem_del(vs, e);
    int empty = dict_size(vs->names) == 0;
    pthread_rwlock_unlock(&vs->lock);
    if (empty)
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
    struct velem *e = vs ? elem_find(vs, c->argv[2], c->argvlen[2]) : NULL;
    if (!e) {
        reply_bool(&c->out, 0);
        return;
    }
    struct vattr *a = vattr_new(c->argv[3], c->argvlen[3]);
    pthread_rwlock_wrlock(&vs->lock);
    elem_set_attr(vs, e, a);
    pthread_rwlock_unlock(&vs->lock);
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
        struct velem *e = elem_find(vs, c->argv[3], c->argvlen[3]);
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
            float *pq = proj_apply(vs->proj, vs->reduce_from, sdim, q);
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
    vec_normalize(q, sdim);
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
    pthread_rwlock_rdlock(&vs->lock);
    vsim_run(c, vs);
    pthread_rwlock_unlock(&vs->lock);
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
    struct velem *e = vs ? elem_find(vs, c->argv[2], c->argvlen[2]) : NULL;
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
        reply_status(&c->out, quant_name(quant));
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
    reply_status(&c->out, quant_name(hnsw_quant(h)));
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
    struct velem *e = vs ? elem_find(vs, c->argv[2], c->argvlen[2]) : NULL;
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
    struct velem *e = vs ? elem_find(vs, c->argv[2], c->argvlen[2]) : NULL;
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
        reply_bool(&c->out, vs && elem_find(vs, c->argv[2], c->argvlen[2]) != NULL);
}

/* The element at global position pos of the lex order (pos < card). */
static void lex_at(const struct lexidx *x, uint64_t pos, uint32_t *li, uint32_t *p)
{
    uint32_t i = 0;
    while (pos >= x->leaf[i]->n) {
        pos -= x->leaf[i]->n;
        i++;
    }
    *li = i;
    *p = (uint32_t)pos;
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
        lex_at(&vs->lex, rand64() % card, &li, &p);
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
        p = lex_seek(x, lo.s, lo.len, lo.excl, &li);
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
            int cmp = lexcmp(e->name, e->nlen, hi.s, hi.len);
            if (hi.excl ? cmp >= 0 : cmp > 0)
                break;
        }
        reply_bulk(&c->out, e->name, e->nlen);
        n++;
    }
    reply_defer_array(&c->out, mark, n);
}
