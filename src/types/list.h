/* list.h - the list value layer: its encodings (listpack, quicklist) and
 * their conversions, element primitives (push, pop, range delete, replace,
 * insert), iteration, type_ops, and the cross-module entry points SORT and
 * persist/ use.  No client here: the command handlers (cmd/t_list.c),
 * cmd/t_sort.c, persist/ and the unit tests use it.  Encodings and
 * conversion rules are described at the top of types/list.c.
 *
 * e is always an OBJ_LIST entry; its structure pointer is updated in place
 * when an operation reallocates or converts it.  where is QL_HEAD or
 * QL_TAIL (ds/quicklist.h) for both encodings. */
#ifndef HK_TYPES_LIST_H
#define HK_TYPES_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../base/util.h"
#include "../db/object.h"
#include "../ds/listpack.h"
#include "../ds/quicklist.h"

/* list-compress-depth (Redis's name and default 0): quicklists created
 * from now on keep this many nodes at each end uncompressed and LZ-compress
 * the nodes between.  Registered by config.c; read when a list converts. */
extern int list_compress_depth;

/* Number of elements. */
static inline size_t list_length(struct entry *e)
{
    const void *p = entry_ptr(e);
    if (e->enc == ENC_QUICKLIST)
        return ((const struct quicklist *)p)->count;
    return lp_count(p);
}

/* ---------------------------------------------------------- conversions --- */

/* Before adding n elements of `bytes` raw bytes: a listpack that would
 * exceed one quicklist node becomes a quicklist. */
void list_grow_check(struct entry *e, size_t bytes, size_t n);
/* After removing elements: a quicklist reduced to one small packed node
 * goes back to a listpack. */
void list_shrink_check(struct entry *e);

/* ------------------------------------------------------------ elements --- */

/* Push one element / n elements (in argument order) at where; the caller
 * ran list_grow_check.  list_push_many returns the new length. */
void list_push(struct entry *e, int where, const char *s, size_t len);
size_t list_push_many(struct entry *e, int where, const char *const *s, const size_t *len, int n);
/* Delete n elements from index start (0 <= start < length). */
void list_del_range(struct entry *e, size_t start, size_t n);
/* The listpack and position of the element at the head or tail (the list
 * is not empty). */
static inline const unsigned char *list_end(struct entry *e, int where, size_t *pos)
{
    if (e->enc == ENC_LISTPACK) {
        const unsigned char *lp = entry_ptr(e);
        *pos = where == QL_HEAD ? lp_first(lp) : lp_last(lp);
        return lp;
    }
    return ql_end(entry_ptr(e), where, pos);
}
/* Delete the element at the head or tail; pos is what list_end gave for
 * it (nothing changed in between). */
void list_pop_end(struct entry *e, int where, size_t pos);
/* LSET: replace the element at index; 0 if out of range. */
int list_replace(struct entry *e, long long index, const char *s, size_t len);

/* A value to compare elements with (LREM, LPOS, LINSERT): integers stored
 * in a listpack compare by value with the canonical decimal form. */
struct list_needle {
    const char *s;
    size_t len;
    int isint;
    long long ll;
};

static inline void list_needle_init(struct list_needle *nd, const char *s, size_t len)
{
    nd->s = s;
    nd->len = len;
    nd->isint = len <= 20 && str_to_ll(s, len, &nd->ll);
}

static inline int list_elem_eq(const unsigned char *lp, size_t pos, const struct list_needle *nd)
{
    struct lp_val v;
    lp_get(lp, pos, &v);
    if (v.s)
        return v.len == nd->len && memcmp(v.s, nd->s, nd->len) == 0;
    return nd->isint && v.ll == nd->ll;
}

/* LINSERT: insert s before (after = 0) or after the first element equal to
 * pivot; 1 if found (and inserted), 0 if not. */
int list_insert(struct entry *e, const struct list_needle *pivot, int after, const char *s, size_t len);

/* ------------------------------------------------------------ iteration ---
 * An iterator over either encoding: the current element is (lp, pos). */
struct list_iter {
    struct ql_iter qi;
    unsigned char *lp;
    size_t pos;
    int fwd, isql;
};

/* Start at index (negative: from the tail), forwards or backwards; 1 if
 * there is an element there.  list_iter_end must follow in any case. */
int list_iter_start(struct list_iter *it, struct entry *e, long long index, int fwd);

static inline int list_iter_next(struct list_iter *it)
{
    if (it->isql) {
        int ok = ql_iter_next(&it->qi);
        it->lp = it->qi.lp;
        it->pos = it->qi.pos;
        return ok;
    }
    it->pos = it->fwd ? lp_next(it->lp, it->pos) : lp_prev(it->lp, it->pos);
    return it->pos != LP_NONE;
}

/* Delete the current element and move on (listpack: e gets the new
 * pointer).  1 if there is a following element. */
int list_iter_del(struct list_iter *it, struct entry *e);

static inline void list_iter_end(struct list_iter *it)
{
    if (it->isql)
        ql_iter_end(&it->qi);
}

/* --------------------------------------------------- cross-type access --- */

/* Every element head to tail as a string (integers formatted); fn returns
 * nonzero to stop.  SORT, AOF rewrite. */
void list_visit(struct entry *e, obj_visit_fn fn, void *arg);
/* A list structure holding s[0..n-1] in order (SORT STORE, RDB tests);
 * *enc gets its encoding (listpack or quicklist by the thresholds). */
void *list_build(const char *const *s, const size_t *len, size_t n, uint8_t *enc);

#endif
