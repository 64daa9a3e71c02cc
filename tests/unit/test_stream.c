/* test_stream.c - ds/stream.c: append, seek, ranges both ways, delete,
 * trim by MAXLEN and MINID (exact and approximate), against a simple model
 * driven by random operations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds/stream.h"
#include "test.h"

struct ment {
    struct stream_id id;
    int deleted;
    int nf;
    char f[3][16], v[3][24];
};

struct model {
    struct ment *e;
    size_t n, cap;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t model_len(const struct model *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += !m->e[i].deleted;
    return n;
}

static void add_entry(struct stream *s, struct model *m, struct stream_id id)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, sizeof(*m->e) * m->cap);
    }
    struct ment *me = &m->e[m->n++];
    const char *fv[6];
    size_t fvlen[6];
    memset(me, 0, sizeof(*me));
    me->id = id;
    /* Mostly the same two field names (stored once per block as master
     * fields), sometimes others. */
    int usual = rnd() % 4 != 0;
    me->nf = usual ? 2 : 1 + (int)(rnd() % 3);
    for (int i = 0; i < me->nf; i++) {
        if (usual)
            snprintf(me->f[i], sizeof(me->f[i]), "%s", i ? "jobId" : "event");
        else
            snprintf(me->f[i], sizeof(me->f[i]), "f%d", (int)(rnd() % 100));
        snprintf(me->v[i], sizeof(me->v[i]), "v%llu", (unsigned long long)(rnd() % 1000000000ull));
        fv[2 * i] = me->f[i];
        fvlen[2 * i] = strlen(me->f[i]);
        fv[2 * i + 1] = me->v[i];
        fvlen[2 * i + 1] = strlen(me->v[i]);
    }
    stream_append(s, &id, fv, fvlen, (size_t)me->nf);
}

static void check_entry(const struct stream_entry *e, const struct ment *me)
{
    CHECK_EQ(e->id.ms, me->id.ms);
    CHECK_EQ(e->id.seq, me->id.seq);
    CHECK_EQ(e->nfields, me->nf);
    struct stream_entry cur = *e;
    for (int i = 0; i < me->nf && i < (int)e->nfields; i++) {
        const char *f, *v;
        size_t fl, vl;
        stream_entry_field(&cur, &f, &fl, &v, &vl);
        CHECK_MEM(f, fl, me->f[i], strlen(me->f[i]));
        CHECK_MEM(v, vl, me->v[i], strlen(me->v[i]));
    }
}

static void check_range(const struct stream *s, const struct model *m, struct stream_id lo, struct stream_id hi, int rev)
{
    struct stream_iter it;
    struct stream_entry e;
    stream_iter_start(&it, s, &lo, &hi, rev);
    size_t n = m->n;
    for (size_t k = 0; k < n; k++) {
        const struct ment *me = &m->e[rev ? n - 1 - k : k];
        if (me->deleted || sid_cmp(&me->id, &lo) < 0 || sid_cmp(&me->id, &hi) > 0)
            continue;
        if (!stream_iter_next(&it, &e)) {
            CHECK(!"iterator ended early");
            stream_iter_stop(&it);
            return;
        }
        check_entry(&e, me);
    }
    CHECK(!stream_iter_next(&it, &e));
    stream_iter_stop(&it);
}

static void check_all(const struct stream *s, const struct model *m)
{
    struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    CHECK_EQ(s->length, model_len(m));
    check_range(s, m, lo, hi, 0);
    check_range(s, m, lo, hi, 1);
    struct stream_id first = {0, 0}, last = {0, 0};
    int any = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->e[i].deleted)
            continue;
        if (!any)
            first = m->e[i].id;
        last = m->e[i].id;
        any = 1;
    }
    CHECK_EQ(s->first_id.ms, first.ms);
    CHECK_EQ(s->first_id.seq, first.seq);
    struct stream_id l;
    CHECK_EQ(stream_last_entry(s, &l), any);
    CHECK_EQ(l.ms, last.ms);
    CHECK_EQ(l.seq, last.seq);
}

static struct stream_id random_id_near(const struct model *m)
{
    struct stream_id id = {0, 0};
    if (m->n && rnd() % 4) {
        id = m->e[rnd() % m->n].id;
        if (rnd() % 3 == 0)
            sid_incr(&id);
        else if (rnd() % 3 == 0)
            sid_decr(&id);
    } else {
        id.ms = rnd() % 5000;
        id.seq = rnd() % 4;
    }
    return id;
}

TEST(stream_ids)
{
    struct stream_id a = {1, UINT64_MAX}, b = {UINT64_MAX, UINT64_MAX}, z = {0, 0};
    char buf[64];
    CHECK_EQ(sid_incr(&a), 0);
    CHECK_EQ(a.ms, 2);
    CHECK_EQ(a.seq, 0);
    CHECK_EQ(sid_incr(&b), -1);
    CHECK_EQ(sid_decr(&z), -1);
    CHECK_EQ(sid_decr(&a), 0);
    CHECK_EQ(a.ms, 1);
    CHECK(a.seq == UINT64_MAX);
    int n = sid_format(buf, &b);
    CHECK_STR(buf, n, "18446744073709551615-18446744073709551615");
}

TEST(stream_model_random)
{
    for (int round = 0; round < 6; round++) {
        struct stream *s = stream_new();
        struct model m = {NULL, 0, 0};
        struct stream_id next = {1, 0};
        long long saved_e = stream_node_max_entries, saved_b = stream_node_max_bytes;
        stream_node_max_entries = round % 3 == 0 ? 100 : round % 3 == 1 ? 7 : 0;
        stream_node_max_bytes = round % 2 ? 4096 : 300;
        for (int op = 0; op < 4000; op++) {
            unsigned r = (unsigned)(rnd() % 100);
            if (r < 55) {
                if (rnd() % 2)
                    next.ms += 1 + rnd() % 3, next.seq = rnd() % 3;
                else
                    next.seq++;
                add_entry(s, &m, next);
            } else if (r < 72) {
                struct stream_id id = random_id_near(&m);
                int want = 0;
                for (size_t i = 0; i < m.n; i++)
                    if (!sid_cmp(&m.e[i].id, &id) && !m.e[i].deleted) {
                        m.e[i].deleted = 1;
                        want = 1;
                    }
                CHECK_EQ(stream_delete(s, &id), want);
            } else if (r < 78) {
                /* MAXLEN, exact or approximate (with or without LIMIT) */
                size_t len = model_len(&m);
                long long maxlen = len ? (long long)(rnd() % (len + 1)) : 0;
                int approx = (int)(rnd() % 2);
                long long limit = approx && rnd() % 2 ? (long long)(rnd() % 50) : 0;
                long long del = stream_trim(s, maxlen, NULL, approx, limit);
                if (!approx)
                    CHECK_EQ(del, len > (size_t)maxlen ? (long long)len - maxlen : 0);
                else
                    CHECK(len - (size_t)del >= (size_t)maxlen || del == 0);
                if (limit)
                    CHECK(del <= limit);
                long long k = del;
                for (size_t i = 0; i < m.n && k > 0; i++)
                    if (!m.e[i].deleted) {
                        m.e[i].deleted = 1;
                        k--;
                    }
            } else if (r < 83) {
                /* MINID */
                struct stream_id minid = random_id_near(&m);
                int approx = (int)(rnd() % 2);
                long long want = 0;
                for (size_t i = 0; i < m.n; i++)
                    if (!m.e[i].deleted && sid_cmp(&m.e[i].id, &minid) < 0)
                        want++;
                long long del = stream_trim(s, -1, &minid, approx, 0);
                if (!approx)
                    CHECK_EQ(del, want);
                else
                    CHECK(del <= want);
                long long k = del;
                for (size_t i = 0; i < m.n && k > 0; i++)
                    if (!m.e[i].deleted) {
                        m.e[i].deleted = 1;
                        k--;
                    }
            } else if (r < 95) {
                struct stream_id a = random_id_near(&m), b = random_id_near(&m);
                check_range(s, &m, a, b, (int)(rnd() % 2));
                if (sid_cmp(&a, &b) > 0)
                    check_range(s, &m, b, a, (int)(rnd() % 2));
                struct stream_entry e;
                int want = -1;
                for (size_t i = 0; i < m.n; i++)
                    if (!sid_cmp(&m.e[i].id, &a))
                        want = (int)i;
                int got = stream_get(s, &a, &e);
                CHECK_EQ(got, want >= 0 && !m.e[want].deleted);
                if (got && want >= 0)
                    check_entry(&e, &m.e[want]);
            } else {
                check_all(s, &m);
                struct stream *d = stream_dup(s);
                check_all(d, &m);
                CHECK(stream_mem(d) > 0);
                stream_free(d);
            }
        }
        check_all(s, &m);
        CHECK_EQ(s->entries_added, m.n);
        CHECK_EQ(s->last_id.ms, m.n ? m.e[m.n - 1].id.ms : 0);
        stream_free(s);
        free(m.e);
        stream_node_max_entries = saved_e;
        stream_node_max_bytes = saved_b;
    }
}

TEST(stream_trim_approx_whole_blocks)
{
    struct stream *s = stream_new();
    struct model m = {NULL, 0, 0};
    long long saved = stream_node_max_entries;
    stream_node_max_entries = 10;
    for (uint64_t i = 1; i <= 95; i++)
        add_entry(s, &m, (struct stream_id){i, 0});
    CHECK_EQ(stream_blocks(s), 10);
    /* ~ 55: only whole blocks of 10 go, so 40 are removed (55 would need
     * part of a block). */
    CHECK_EQ(stream_trim(s, 55, NULL, 1, 0), 40);
    CHECK_EQ(s->length, 55);
    CHECK_EQ(s->first_id.ms, 41);
    /* LIMIT 15: one block at most. */
    CHECK_EQ(stream_trim(s, 0, NULL, 1, 15), 10);
    /* exact */
    CHECK_EQ(stream_trim(s, 3, NULL, 0, 0), 42);
    CHECK_EQ(s->length, 3);
    CHECK_EQ(s->first_id.ms, 93);
    struct stream_id minid = {95, 0};
    CHECK_EQ(stream_trim(s, -1, &minid, 0, 0), 2);
    CHECK_EQ(s->first_id.ms, 95);
    CHECK_EQ(stream_delete(s, &minid), 1);
    CHECK_EQ(s->length, 0);
    CHECK_EQ(stream_blocks(s), 0);
    CHECK_EQ(s->first_id.ms, 0);
    CHECK_EQ(s->last_id.ms, 95);
    stream_node_max_entries = saved;
    stream_free(s);
    free(m.e);
}
