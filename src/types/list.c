/* list.c - the list value layer (types/list.h).
 *
 * A list value is one of two structures (entry->enc):
 *  - ENC_LISTPACK: a single listpack (ds/listpack.h); small lists.
 *  - ENC_QUICKLIST: a quicklist (ds/quicklist.h), a linked list of
 *    listpack nodes; lists larger than one node.
 * Conversions follow Redis 7.2: before elements are added, a listpack that
 * would outgrow one quicklist node (list-max-listpack-size, counting the
 * raw bytes of the new elements) becomes a quicklist; after elements are
 * removed, a quicklist reduced to one packed node holding at most half a
 * node's limit becomes a listpack again (the half avoids flapping).
 *
 * No client here: the commands are in cmd/t_list.c.  Callers hold the
 * key's slot lock. */
#include <stdint.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/object.h"
#include "../ds/listpack.h"
#include "../ds/quicklist.h"
#include "list.h"
#include "types.h"

int list_compress_depth = 0;

/* ---------------------------------------------------------- type ops ---
 * (list_length in list.h is list_len on an entry) */

static void list_free(void *p, uint8_t enc)
{
    if (enc == ENC_QUICKLIST)
        ql_free(p);
    else
        lp_free(p);
}

static void *list_dup(const void *p, uint8_t enc)
{
    if (enc == ENC_QUICKLIST)
        return ql_dup(p);
    return hk_memdup(p, lp_bytes(p));
}

static size_t list_mem(const void *p, uint8_t enc)
{
    if (enc == ENC_QUICKLIST)
        return ql_mem(p);
    return hk_usable((void *)p);
}

static size_t list_len(const void *p, uint8_t enc)
{
    if (enc == ENC_QUICKLIST)
        return ((const struct quicklist *)p)->count;
    return lp_count(p);
}

static size_t list_effort(const void *p, uint8_t enc)
{
    if (enc == ENC_QUICKLIST)
        return ((const struct quicklist *)p)->len;
    return 1;
}

const struct type_ops list_type_ops = {list_free, list_dup, list_mem, list_len, list_effort};

/* -------------------------------------------------------- conversions --- */

void list_grow_check(struct entry *e, size_t bytes, size_t n)
{
    unsigned char *lp;
    struct quicklist *ql;
    if (e->enc != ENC_LISTPACK)
        return;
    lp = entry_ptr(e);
    if (!ql_exceeds(list_max_listpack_size, lp_bytes(lp) + bytes, lp_count(lp) + n))
        return;
    ql = ql_new(list_max_listpack_size, list_compress_depth);
    if (lp_count(lp))
        ql_append_lp(ql, lp);
    else
        lp_free(lp);
    entry_set_ptr(e, ql, ENC_QUICKLIST);
}

/* A quicklist of one packed node within the limits (halved when
 * shrinking) gives back that node's listpack; NULL otherwise. */
static unsigned char *ql_to_lp(struct quicklist *ql, int shrinking)
{
    size_t szl, cntl;
    if (ql->len != 1 || (ql->head->flags & QLN_PLAIN))
        return NULL;
    ql_node_limit(list_max_listpack_size, &szl, &cntl);
    if (shrinking) {
        szl /= 2;
        cntl /= 2;
    }
    if (ql->head->sz > szl || ql->count > cntl)
        return NULL;
    return ql_take_single(ql);
}

void list_shrink_check(struct entry *e)
{
    unsigned char *lp;
    if (e->enc != ENC_QUICKLIST)
        return;
    lp = ql_to_lp(entry_ptr(e), 1);
    if (lp)
        entry_set_ptr(e, lp, ENC_LISTPACK);
}

/* ----------------------------------------------------------- elements --- */

void list_push(struct entry *e, int where, const char *s, size_t len)
{
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        lp = where == QL_HEAD ? lp_prepend(lp, s, len) : lp_append(lp, s, len);
        entry_set_ptr(e, lp, ENC_LISTPACK);
    } else {
        ql_push(entry_ptr(e), where, s, len);
    }
}

size_t list_push_many(struct entry *e, int where, const char *const *s, const size_t *len, int n)
{
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        for (int j = 0; j < n; j++)
            lp = where == QL_HEAD ? lp_prepend(lp, s[j], len[j]) : lp_append(lp, s[j], len[j]);
        entry_set_ptr(e, lp, ENC_LISTPACK);
        return lp_count(lp);
    }
    struct quicklist *ql = entry_ptr(e);
    for (int j = 0; j < n; j++)
        ql_push(ql, where, s[j], len[j]);
    return ql->count;
}

void list_pop_end(struct entry *e, int where, size_t pos)
{
    if (e->enc == ENC_LISTPACK)
        entry_set_ptr(e, lp_delete(entry_ptr(e), pos, 1, NULL), ENC_LISTPACK);
    else
        ql_pop(entry_ptr(e), where);
}

int list_replace(struct entry *e, long long index, const char *s, size_t len)
{
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        size_t pos = lp_seek(lp, index);
        if (pos == LP_NONE)
            return 0;
        entry_set_ptr(e, lp_replace(lp, pos, s, len), ENC_LISTPACK);
        return 1;
    }
    return ql_replace(entry_ptr(e), index, s, len);
}

int list_insert(struct entry *e, const struct list_needle *pivot, int after, const char *s, size_t len)
{
    int found = 0;
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        for (size_t pos = lp_first(lp); pos != LP_NONE; pos = lp_next(lp, pos)) {
            if (list_elem_eq(lp, pos, pivot)) {
                lp = lp_insert(lp, after ? lp_next(lp, pos) : pos, s, len);
                entry_set_ptr(e, lp, ENC_LISTPACK);
                return 1;
            }
        }
        return 0;
    }
    struct ql_iter it;
    if (ql_iter_start(&it, entry_ptr(e), 0, 1)) {
        do {
            if (list_elem_eq(it.lp, it.pos, pivot)) {
                ql_iter_insert(&it, after, s, len);
                found = 1;
                break;
            }
        } while (ql_iter_next(&it));
    }
    ql_iter_end(&it);
    return found;
}

void list_del_range(struct entry *e, size_t start, size_t n)
{
    if (!n)
        return;
    if (e->enc == ENC_LISTPACK) {
        unsigned char *lp = entry_ptr(e);
        lp = lp_delete(lp, lp_seek(lp, (long long)start), n, NULL);
        entry_set_ptr(e, lp, ENC_LISTPACK);
    } else {
        ql_del_range(entry_ptr(e), start, n);
    }
}

int list_iter_start(struct list_iter *it, struct entry *e, long long index, int fwd)
{
    it->fwd = fwd;
    if (e->enc == ENC_QUICKLIST) {
        int ok = ql_iter_start(&it->qi, entry_ptr(e), index, fwd);
        it->isql = 1;
        it->lp = it->qi.lp;
        it->pos = it->qi.pos;
        return ok;
    }
    it->isql = 0;
    it->lp = entry_ptr(e);
    it->pos = lp_seek(it->lp, index);
    return it->pos != LP_NONE;
}

int list_iter_del(struct list_iter *it, struct entry *e)
{
    size_t next;
    if (it->isql) {
        int ok = ql_iter_del(&it->qi);
        it->lp = it->qi.lp;
        it->pos = it->qi.pos;
        return ok;
    }
    it->lp = lp_delete(it->lp, it->pos, 1, &next);
    entry_set_ptr(e, it->lp, ENC_LISTPACK);
    if (it->fwd)
        it->pos = next;
    else
        it->pos = next == LP_NONE ? lp_last(it->lp) : lp_prev(it->lp, next);
    return it->pos != LP_NONE;
}

/* --------------------------------------------------- cross-type access --- */

void list_visit(struct entry *e, obj_visit_fn fn, void *arg)
{
    struct list_iter it;
    char buf[32];
    int ok = list_iter_start(&it, e, 0, 1);
    while (ok) {
        struct lp_val v;
        int stop;
        lp_get(it.lp, it.pos, &v);
        if (v.s)
            stop = fn(arg, (const char *)v.s, v.len);
        else
            stop = fn(arg, buf, (size_t)ll_to_str(buf, v.ll));
        if (stop)
            break;
        ok = list_iter_next(&it);
    }
    list_iter_end(&it);
}

void *list_build(const char *const *s, const size_t *len, size_t n, uint8_t *enc)
{
    struct quicklist *ql = ql_new(list_max_listpack_size, list_compress_depth);
    unsigned char *lp;
    for (size_t i = 0; i < n; i++)
        ql_push(ql, QL_TAIL, s[i], len[i]);
    if (n == 0) {
        ql_free(ql);
        *enc = ENC_LISTPACK;
        return lp_new();
    }
    lp = ql_to_lp(ql, 0);
    if (lp) {
        *enc = ENC_LISTPACK;
        return lp;
    }
    *enc = ENC_QUICKLIST;
    return ql;
}
