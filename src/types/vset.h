/* types/vset.h - the VECTOR SET value (Redis 8 VADD/VSIM/...): what an
 * OBJ_VSET key's entry points at, and what persistence (persist/rdb_vset.c,
 * DUMP/RESTORE, the AOF rewrite) needs of it.  The commands are in
 * cmd/t_vset.c; the index is ds/hnsw.h, FILTER is ds/vexpr.h.
 *
 * A struct vset holds:
 *  - the HNSW index (ds/hnsw.h), whose node payloads are the elements;
 *  - the elements: one allocation each (dict link, attributes, node id,
 *    name bytes), indexed by name in an intrusive hash (ds/dict.h) and
 *    kept in byte order by the lex index (VRANGE, VRANDMEMBER's walk, the
 *    persistence walk);
 *  - the REDUCE projection when the set has one.
 * Vectors are L2-normalised before they reach the index (their norm is
 * kept there for VEMB); the index's distance is 1 - cosine (0..2) and the
 * reported similarity 1 - distance / 2.
 *
 * The structs are visible so that the handlers read them without a call
 * per element (VSIM, VRANGE, VRANDMEMBER walk them); only types/vset.c
 * changes them.
 *
 * Ownership and locking (docs/architecture.md, "Vector sets"):
 * - The key's entry holds one reference to its struct vset; a command that
 *   searches without its slot lock (VSIM outside MULTI/scripts) takes
 *   another under the slot lock, drops the slot lock, and releases the
 *   reference when done.  The last reference frees the set.
 * - The set's rwlock guards the index, the element table and attributes:
 *   readers (VSIM) share it (vset_rdlock); the writers here (vset_add,
 *   vset_remove, vset_set_attr) are called with the key's slot lock held
 *   and take it exclusively themselves.  Order: slot lock, then set lock;
 *   nobody holding a set lock waits for a slot lock. */
#ifndef HK_TYPES_VSET_H
#define HK_TYPES_VSET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../db/entry.h"
#include "../ds/dict.h"
#include "../ds/hnsw.h"

/* The entry encoding of a vector-set key (OBJECT ENCODING "raw", as Redis
 * reports a module value). */
#define VSET_ENC ENC_RAW

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

/* The lex index: the elements in byte order of their names, a sorted
 * array of leaves, each a sorted array of up to VSET_LEX_LEAF_MAX element
 * pointers. */
#define VSET_LEX_LEAF_MAX 128

struct lexleaf {
    uint32_t n, cap;
    struct velem *e[];
};

struct lexidx {
    struct lexleaf **leaf;
    uint32_t nleaf, cap;
    size_t bytes; /* usable bytes of the leaves and the leaf array */
};

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

/* Byte order of names (memcmp, then the shorter first). */
static inline int vset_namecmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

/* The element called name, NULL if none. */
static inline struct velem *vset_find(const struct vset *vs, const char *name, size_t nlen)
{
    return (struct velem *)dict_find(vs->names, name, nlen);
}

/* Searches: the set's read lock. */
static inline void vset_rdlock(struct vset *vs)
{
    pthread_rwlock_rdlock(&vs->lock);
}
static inline void vset_unlock(struct vset *vs)
{
    pthread_rwlock_unlock(&vs->lock);
}

/* ------------------------------------------------------------- creation ---
 * vset_new: an empty set for VADD on a missing key, with an index of
 * dimension reduce (REDUCE given) or dim, quantization quant (HNSW_*) and
 * M = m; with reduce, the set's projection from dim to reduce dimensions
 * (Redis's deterministic matrix).  vset_create: for loaders, an empty set
 * owning index h (its dim is the stored, possibly reduced, dimension);
 * reduce_from > 0 with proj (the projection, reduce_from * dim floats,
 * copied: dim rows of reduce_from columns, row-major, as Redis stores it:
 * stored[i] = sum over j of proj[i * reduce_from + j] * input[j]) when the
 * set was made with REDUCE.  Both return the set with one reference. */
struct vset *vset_new(uint32_t dim, int quant, uint32_t m, uint32_t reduce);
struct vset *vset_create(struct hnsw *h, uint32_t reduce_from, const float *proj);

void vset_incref(struct vset *vs);
void vset_decref(struct vset *vs); /* frees on the last reference */

/* -------------------------------------------------------------- vectors --- */
/* An input vector of vs->reduce_from floats through the set's projection:
 * a new vector of the index's dimension (the caller frees it). */
float *vset_project(const struct vset *vs, const float *in);
/* Normalise v in place; returns its former L2 norm (a zero vector stays
 * zero, norm 0). */
float vset_normalize(float *v, uint32_t dim);
/* The name VEMB RAW / VINFO give quantization q (HNSW_*). */
const char *vset_quant_name(int q);

/* ------------------------------------------------------------- elements ---
 * Writers: the caller holds the key's slot lock; each takes the set's
 * write lock around the change. */
/* Add or update element name with vector v (normalised, the index's
 * dimension; l2 its former norm) at build exploration ef.  attr (alen
 * bytes) replaces the attributes when set_attr (alen 0: none); a new
 * element without set_attr has none.  Returns 1 when added, 0 when an
 * existing element got the new vector. */
int vset_add(struct vset *vs, const char *name, size_t nlen, const float *v, float l2, int set_attr, const char *attr,
             size_t alen, uint32_t ef);
/* Remove element e; returns 1 when the set is empty now (the caller
 * deletes the key). */
int vset_remove(struct vset *vs, struct velem *e);
/* Replace e's attributes by attr (alen 0: none). */
void vset_set_attr(struct vset *vs, struct velem *e, const char *attr, size_t alen);

/* ------------------------------------------------------------ lex order --- */
/* Where the first element not before the bound (k, kl) is (excl: equal
 * elements count as before it): *li the leaf, returns the position in it
 * (== its n when every element is before the bound).  The set is not
 * empty. */
uint32_t vset_lex_seek(const struct lexidx *x, const char *k, size_t kl, int excl, uint32_t *li);
/* The element at global position pos of the lex order (pos < card). */
void vset_lex_at(const struct lexidx *x, uint64_t pos, uint32_t *li, uint32_t *p);

/* ---------------------------------------------------------- persistence ---
 * Loading: attach an element record to node id of the set's index: name,
 * optional JSON attributes (attr NULL or alen 0: none).  Returns -1 if the
 * name is already present, the id is not a live node or already has an
 * element.  After the last vset_load_elem, vset_load_done returns -1
 * (message in err) unless every live node has exactly one element. */
int vset_load_elem(struct vset *vs, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id);
int vset_load_done(struct vset *vs, char *err, size_t errlen);

/* Reading a set for saving (the caller holds the key's slot lock, so no
 * writer runs): the index, the projection, and every element in name
 * order. */
struct hnsw *vset_index(const struct vset *vs);
uint32_t vset_reduce_from(const struct vset *vs, const float **proj);
typedef void (*vset_elem_fn)(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id);
void vset_foreach(const struct vset *vs, vset_elem_fn fn, void *ctx);
uint64_t vset_card(const struct vset *vs);

#endif
