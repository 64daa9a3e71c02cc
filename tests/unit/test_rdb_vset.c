/* test_rdb_vset.c - vector sets in the RDB format (persist/rdb_vset.c)
 * without a server: module type ids (Redis's scheme), the value's bytes
 * (type 7, module id, opcode framing), round trips of every quantization,
 * with REDUCE, deleted nodes (id holes) and attributes, where the loaded
 * graph must be the saved one (links, levels, entry point, stored
 * vectors); values of other module types refused (or walked over for the
 * checker); and damaged values (random bit flips, every truncation) that
 * must be refused or load into a valid set, never crash or leak. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "types/vset.h"
#include "db/db.h"
#include "db/object.h"
#include "ds/hnsw.h"
#include "persist/rdb.h"
#include "test.h"

static uint64_t rs = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static float frnd(void)
{
    return (float)((double)(rnd() >> 11) / (double)(1ULL << 53)) * 2.0f - 1.0f;
}

/* A set of n random vectors (every 5th one deleted again when holes),
 * attributes on every other element, projection when rf > 0. */
static struct entry *mk_vset(int quant, uint32_t dim, uint32_t m, uint32_t n, uint32_t rf, int holes)
{
    struct hnsw *h = hnsw_new(dim, quant, m);
    float *v = hk_malloc(dim * sizeof(float));
    uint32_t *ids = hk_malloc((n ? n : 1) * sizeof(uint32_t));
    for (uint32_t i = 0; i < n; i++) {
        double s = 0;
        for (uint32_t j = 0; j < dim; j++) {
            v[j] = frnd() * 4;
            s += (double)v[j] * v[j];
        }
        float l2 = (float)sqrt(s);
        for (uint32_t j = 0; j < dim; j++)
            v[j] /= l2;
        ids[i] = hnsw_insert(h, v, l2, NULL, 64);
    }
    if (holes)
        for (uint32_t i = 0; i < n; i += 5)
            hnsw_delete(h, ids[i]);
    float *proj = NULL;
    if (rf) {
        proj = hk_malloc((size_t)rf * dim * sizeof(float));
        for (size_t i = 0; i < (size_t)rf * dim; i++)
            proj[i] = frnd();
    }
    struct vset *vs = vset_create(h, rf, proj);
    for (uint32_t i = 0; i < n; i++) {
        if (holes && i % 5 == 0)
            continue;
        char name[32], attr[64];
        int nl = snprintf(name, sizeof(name), "ele:%u", i);
        int al = snprintf(attr, sizeof(attr), "{\"i\":%u,\"g\":\"x\"}", i);
        CHECK_EQ(vset_load_elem(vs, name, (size_t)nl, i % 2 ? attr : NULL, i % 2 ? (size_t)al : 0, ids[i]), 0);
    }
    char err[128];
    CHECK_EQ(vset_load_done(vs, err, sizeof(err)), 0);
    hk_free(v);
    hk_free(ids);
    hk_free(proj);
    return entry_new_obj(OBJ_VSET, ENC_RAW, "k", 1, vs, -1);
}

struct erec {
    char *name, *attr;
    size_t nlen, alen;
    int set;
};

struct ecoll {
    struct erec *v;
    uint32_t cap;
    uint64_t n;
};

static void coll_fn(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    struct ecoll *c = ctx;
    c->n++;
    if (id >= c->cap || c->v[id].set)
        return;
    c->v[id].set = 1;
    c->v[id].name = hk_memdup(name, nlen ? nlen : 1);
    c->v[id].nlen = nlen;
    c->v[id].attr = attr && alen ? hk_memdup(attr, alen) : NULL;
    c->v[id].alen = attr ? alen : 0;
}

static void coll(struct vset *vs, struct ecoll *c)
{
    c->cap = hnsw_max_id(vset_index(vs));
    c->v = hk_calloc((c->cap ? c->cap : 1) * sizeof(*c->v));
    c->n = 0;
    vset_foreach(vs, coll_fn, c);
}

static void coll_free(struct ecoll *c)
{
    for (uint32_t i = 0; i < c->cap; i++) {
        hk_free(c->v[i].name);
        hk_free(c->v[i].attr);
    }
    hk_free(c->v);
}

/* b is a, element for element and node for node. */
static void check_same(struct entry *ea, struct entry *eb)
{
    CHECK_EQ(eb->type, OBJ_VSET);
    struct vset *a = entry_ptr(ea), *b = entry_ptr(eb);
    struct hnsw *ha = vset_index(a), *hb = vset_index(b);
    CHECK_EQ(hnsw_dim(ha), hnsw_dim(hb));
    CHECK_EQ(hnsw_quant(ha), hnsw_quant(hb));
    CHECK_EQ(hnsw_m(ha), hnsw_m(hb));
    CHECK_EQ(hnsw_count(ha), hnsw_count(hb));
    CHECK_EQ(hnsw_entry(ha), hnsw_entry(hb));
    CHECK_EQ(hnsw_max_level(ha), hnsw_max_level(hb));
    CHECK_EQ(vset_card(a), vset_card(b));
    const float *pa, *pb;
    uint32_t ra = vset_reduce_from(a, &pa), rb = vset_reduce_from(b, &pb);
    CHECK_EQ(ra, rb);
    if (ra && ra == rb)
        CHECK_MEM(pa, (size_t)ra * hnsw_dim(ha) * 4, pb, (size_t)rb * hnsw_dim(hb) * 4);
    char err[256];
    CHECK_EQ(hnsw_check(hb, err, sizeof(err)), 0);
    uint32_t maxid = hnsw_max_id(ha) > hnsw_max_id(hb) ? hnsw_max_id(ha) : hnsw_max_id(hb);
    float *va = hk_malloc(hnsw_dim(ha) * sizeof(float)), *vb = hk_malloc(hnsw_dim(ha) * sizeof(float));
    for (uint32_t id = 0; id < maxid; id++) {
        int xa = id < hnsw_max_id(ha) && hnsw_exists(ha, id), xb = id < hnsw_max_id(hb) && hnsw_exists(hb, id);
        CHECK_EQ(xa, xb);
        if (!xa || !xb)
            continue;
        int la = hnsw_node_level(ha, id);
        CHECK_EQ(la, hnsw_node_level(hb, id));
        for (int l = 0; l <= la; l++) {
            const uint32_t *lka, *lkb;
            uint32_t na = hnsw_links(ha, id, l, &lka), nb = hnsw_links(hb, id, l, &lkb);
            CHECK_EQ(na, nb);
            if (na == nb && na)
                CHECK_MEM(lka, na * 4, lkb, nb * 4);
        }
        size_t sa, sb;
        float qa, qb;
        const void *rwa = hnsw_raw(ha, id, &sa, &qa), *rwb = hnsw_raw(hb, id, &sb, &qb);
        CHECK_MEM(rwa, sa, rwb, sb);
        CHECK(qa == qb);
        float l2a = hnsw_get_vector(ha, id, va), l2b = hnsw_get_vector(hb, id, vb);
        CHECK(l2a == l2b);
        CHECK_MEM(va, hnsw_dim(ha) * 4, vb, hnsw_dim(hb) * 4);
        CHECK(hnsw_payload(hb, id) != NULL);
    }
    hk_free(va);
    hk_free(vb);
    struct ecoll ca, cb;
    coll(a, &ca);
    coll(b, &cb);
    CHECK_EQ(ca.n, cb.n);
    CHECK_EQ(ca.cap, cb.cap);
    for (uint32_t i = 0; i < ca.cap && i < cb.cap; i++) {
        CHECK_EQ(ca.v[i].set, cb.v[i].set);
        if (ca.v[i].set && cb.v[i].set) {
            CHECK_MEM(ca.v[i].name, ca.v[i].nlen, cb.v[i].name, cb.v[i].nlen);
            CHECK_EQ(ca.v[i].alen, cb.v[i].alen);
            if (ca.v[i].alen && ca.v[i].alen == cb.v[i].alen)
                CHECK_MEM(ca.v[i].attr, ca.v[i].alen, cb.v[i].attr, cb.v[i].alen);
        }
    }
    coll_free(&ca);
    coll_free(&cb);
    /* Searches answer alike. */
    float *q = hk_malloc(hnsw_dim(ha) * sizeof(float));
    for (int t = 0; t < 5; t++) {
        double s = 0;
        for (uint32_t j = 0; j < hnsw_dim(ha); j++) {
            q[j] = frnd();
            s += (double)q[j] * q[j];
        }
        for (uint32_t j = 0; j < hnsw_dim(ha); j++)
            q[j] /= (float)sqrt(s);
        struct hnsw_result r1[10], r2[10];
        uint32_t n1 = hnsw_search(ha, q, 10, 50, NULL, NULL, 0, r1);
        uint32_t n2 = hnsw_search(hb, q, 10, 50, NULL, NULL, 0, r2);
        CHECK_EQ(n1, n2);
        for (uint32_t i = 0; i < n1 && i < n2; i++) {
            CHECK_EQ(r1[i].id, r2[i].id);
            CHECK(r1[i].dist == r2[i].dist);
        }
    }
    hk_free(q);
}

static struct entry *load(const unsigned char *p, size_t n, struct rdb_in *in)
{
    int t;
    rdb_in_init_mem(in, p, n);
    if (rdb_r_type(in, &t) < 0 || !rdb_is_object_type(t))
        return NULL;
    return rdb_load_value(in, t, "k", 1, -1);
}

TEST(test_rdb_vset_module_type_ids)
{
    /* Redis's scheme: 6 bits per character (A-Z a-z 0-9 - _), first in the
     * high bits, then 10 bits of encoding version. */
    CHECK(rdb_module_type_id("hotkv-vec", 1) == 0x868b64bfebde7001ULL);
    CHECK(rdb_module_type_id("vectorset", 0) == 0xbde72da2bb1eb400ULL);
    CHECK(rdb_module_type_id("ReJSON-RL", 3) == 0x45e25238df912c03ULL);
    CHECK(rdb_module_type_id("AAAAAAAAA", 1023) == 1023);
    CHECK(rdb_module_type_id("hotkv.vec", 1) == 0);
    CHECK(rdb_module_type_id("hotkv-ve", 1) == 0);
    CHECK(rdb_module_type_id("hotkv-vecs", 1) == 0);
    CHECK(rdb_module_type_id("hotkv-vec", 1024) == 0);
    CHECK(rdb_module_type_id("hotkv-vec", -1) == 0);
    char name[10];
    rdb_module_type_name(0x868b64bfebde7001ULL, name);
    CHECK_STR(name, strlen(name), "hotkv-vec");
    rdb_module_type_name(rdb_module_type_id("__--09azZ", 7), name);
    CHECK_STR(name, strlen(name), "__--09azZ");
}

TEST(test_rdb_vset_value_bytes)
{
    struct entry *e = mk_vset(HNSW_Q8, 8, 4, 20, 0, 0);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    /* type 7, then the 64-bit module id (0x81 + 8 bytes big-endian) */
    static const unsigned char head[] = {7, 0x81, 0x86, 0x8b, 0x64, 0xbf, 0xeb, 0xde, 0x70, 0x01,
                                         2, 8,        /* UINT dim 8 */
                                         2, 1,        /* UINT quant Q8 */
                                         2, 4,        /* UINT M 4 */
                                         2, 0,        /* UINT reduce 0 */
                                         5};          /* STRING: the graph */
    CHECK(o.len > sizeof(head));
    CHECK_MEM(o.buf, sizeof(head), head, sizeof(head));
    CHECK_EQ(o.buf[o.len - 1], RDB_MODULE_OPCODE_EOF);
    /* A checker that does not know the module walks over it exactly. */
    struct rdb_in in;
    int t;
    rdb_in_init_mem(&in, o.buf, o.len);
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    uint64_t id, op;
    CHECK_EQ(rdb_r_len(&in, &id, NULL), 0);
    int strings = 0, uints = 0;
    for (;;) {
        CHECK_EQ(rdb_r_len(&in, &op, NULL), 0);
        if (in.failed || op == RDB_MODULE_OPCODE_EOF)
            break;
        if (op == RDB_MODULE_OPCODE_UINT) {
            uint64_t v;
            CHECK_EQ(rdb_r_len(&in, &v, NULL), 0);
            uints++;
        } else {
            CHECK_EQ(op, RDB_MODULE_OPCODE_STRING);
            CHECK_EQ(rdb_r_skip_str(&in), 0);
            strings++;
        }
    }
    CHECK(!in.failed);
    CHECK_EQ(in.pos, o.len);
    CHECK_EQ(uints, 4 + 1 + 20);     /* params, count, node ids */
    CHECK(strings >= 1 + 2 * 20);   /* graph chunk(s), names and attributes */
    rdb_out_free(&o);
    entry_free(e);
}

TEST(test_rdb_vset_roundtrip)
{
    struct {
        int quant;
        uint32_t dim, m, n, rf;
        int holes;
    } cases[] = {
        {HNSW_F32, 16, 8, 300, 0, 0}, {HNSW_Q8, 16, 16, 300, 0, 1}, {HNSW_BIN, 64, 6, 200, 0, 1},
        {HNSW_Q8, 8, 4, 120, 24, 1},  {HNSW_F32, 3, 2, 1, 0, 0},    {HNSW_Q8, 300, 16, 700, 0, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct entry *e = mk_vset(cases[i].quant, cases[i].dim, cases[i].m, cases[i].n, cases[i].rf, cases[i].holes);
        for (int compress = 0; compress <= 1; compress++) {
            struct rdb_out o;
            rdb_out_init_mem(&o);
            o.compress = compress;
            CHECK_EQ(rdb_save_value(&o, e, 10 + compress), 0);
            struct rdb_in in;
            struct entry *l = load(o.buf, o.len, &in);
            CHECK(l != NULL);
            if (!l) {
                printf("case %zu: %s\n", i, in.err);
                rdb_out_free(&o);
                continue;
            }
            CHECK_EQ(in.pos, o.len);
            check_same(e, l);
            /* Saving the loaded set gives the same bytes. */
            struct rdb_out o2;
            rdb_out_init_mem(&o2);
            o2.compress = compress;
            CHECK_EQ(rdb_save_value(&o2, l, 10 + compress), 0);
            CHECK_MEM(o2.buf, o2.len, o.buf, o.len);
            rdb_out_free(&o2);
            entry_free(l);
            rdb_out_free(&o);
        }
        entry_free(e);
    }
}

/* The graph spans several chunks (256 KiB each). */
TEST(test_rdb_vset_big_graph_chunks)
{
    struct entry *e = mk_vset(HNSW_F32, 256, 8, 600, 0, 0);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    CHECK(o.len > 600 * 1024);
    struct rdb_in in;
    struct entry *l = load(o.buf, o.len, &in);
    CHECK(l != NULL);
    if (l) {
        check_same(e, l);
        entry_free(l);
    }
    /* Every truncation of it is refused. */
    for (size_t cut = 1; cut < o.len; cut += 1 + cut / 3) {
        struct entry *x = load(o.buf, o.len - cut, &in);
        CHECK(x == NULL && in.failed);
        if (x)
            entry_free(x);
    }
    rdb_out_free(&o);
    entry_free(e);
}

static unsigned char *foreign(size_t *n, uint64_t id, int bad_opcode)
{
    struct rdb_out o;
    rdb_out_init_mem(&o);
    rdb_w_type(&o, RDB_TYPE_MODULE_2);
    rdb_w_len(&o, id);
    rdb_w_len(&o, RDB_MODULE_OPCODE_UINT);
    rdb_w_len(&o, 123456789);
    rdb_w_len(&o, RDB_MODULE_OPCODE_SINT);
    rdb_w_len(&o, 3);
    rdb_w_len(&o, RDB_MODULE_OPCODE_STRING);
    rdb_w_str(&o, "some string of a module", 23);
    rdb_w_len(&o, RDB_MODULE_OPCODE_DOUBLE);
    rdb_w_double_bin(&o, 2.5);
    rdb_w_len(&o, RDB_MODULE_OPCODE_FLOAT);
    rdb_w_raw(&o, "\0\0\0\0", 4);
    if (bad_opcode)
        rdb_w_len(&o, 9);
    rdb_w_len(&o, RDB_MODULE_OPCODE_EOF);
    *n = o.len;
    return o.buf;
}

TEST(test_rdb_vset_foreign_module_values)
{
    size_t n;
    unsigned char *p = foreign(&n, rdb_module_type_id("vectorset", 0), 0);
    struct rdb_in in;
    CHECK(load(p, n, &in) == NULL);
    CHECK(in.failed);
    CHECK(strstr(in.err, "The RDB file contains module data I can't load: no matching module type 'vectorset'") !=
          NULL);
    /* the checker walks over it */
    int t;
    rdb_in_init_mem(&in, p, n);
    in.skip_modules = 1;
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(!in.failed);
    CHECK_EQ(in.empty_key, 3);
    CHECK_STR(in.module_name, strlen(in.module_name), "vectorset");
    CHECK_EQ(in.pos, n);
    unsigned long long elems = 99;
    rdb_in_init_mem(&in, p, n);
    in.skip_modules = 1;
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    CHECK_EQ(rdb_skip_value(&in, t, &elems), 0);
    CHECK_EQ(elems, 0);
    hk_free(p);
    /* an unknown opcode inside: refused even by the checker */
    p = foreign(&n, rdb_module_type_id("ReJSON-RL", 3), 1);
    rdb_in_init_mem(&in, p, n);
    in.skip_modules = 1;
    CHECK_EQ(rdb_r_type(&in, &t), 0);
    CHECK(rdb_load_value(&in, t, "k", 1, -1) == NULL);
    CHECK(in.failed && strstr(in.err, "Unknown module opcode 9") != NULL);
    hk_free(p);
    /* our module name with another encoding version: refused, clearly */
    struct entry *e = mk_vset(HNSW_F32, 4, 4, 10, 0, 0);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    o.buf[9] = 0x02; /* low byte of the id: encoding version 2 */
    CHECK(load(o.buf, o.len, &in) == NULL);
    CHECK(in.failed && strstr(in.err, "module type 'hotkv-vec'") && strstr(in.err, "encoding version 2"));
    o.buf[9] = 0x00;
    CHECK(load(o.buf, o.len, &in) == NULL && in.failed);
    /* pre-release module values (type 6) */
    o.buf[0] = RDB_TYPE_MODULE_PRE_GA;
    CHECK(load(o.buf, o.len, &in) == NULL);
    CHECK(in.failed && strstr(in.err, "Pre-release module format not supported"));
    rdb_out_free(&o);
    entry_free(e);
}

/* Structural damage the loader must name. */
TEST(test_rdb_vset_damage_refused)
{
    struct entry *e = mk_vset(HNSW_Q8, 8, 4, 40, 0, 0);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    struct rdb_in in;
    unsigned char *c = hk_malloc(o.len + 16);
    /* parameters out of range / disagreeing with the graph */
    static const struct {
        size_t off;
        unsigned char v;
    } pokes[] = {{11, 0}, {11, 9}, {13, 7}, {15, 1}, {15, 5}, {17, 3}, {10, 5}, {18, 2}};
    for (size_t i = 0; i < sizeof(pokes) / sizeof(pokes[0]); i++) {
        memcpy(c, o.buf, o.len);
        c[pokes[i].off] = pokes[i].v;
        struct entry *x = load(c, o.len, &in);
        CHECK(x == NULL && in.failed);
        if (x)
            entry_free(x);
    }
    /* a missing EOF opcode */
    memcpy(c, o.buf, o.len);
    c[o.len - 1] = RDB_MODULE_OPCODE_UINT;
    CHECK(load(c, o.len, &in) == NULL);
    CHECK(in.failed);
    /* every truncation */
    for (size_t n = 0; n < o.len; n++) {
        struct entry *x = load(o.buf, n, &in);
        CHECK(x == NULL);
        if (x)
            entry_free(x);
    }
    hk_free(c);
    rdb_out_free(&o);
    entry_free(e);
}

/* Sanitizer builds (no jemalloc) run slower: fewer rounds there. */
#ifdef HK_NO_JEMALLOC
#define FUZZ_ROUNDS 400
#else
#define FUZZ_ROUNDS 1500
#endif

struct fuzz_arg {
    int quant;
    uint32_t rf;
};

static void fuzz_body(void *arg)
{
    struct fuzz_arg *fa = arg;
    struct entry *e = mk_vset(fa->quant, 8, 4, 60, fa->rf, 1);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    unsigned char *c = hk_malloc(o.len);
    int loaded = 0, refused = 0;
    char err[256];
    for (int it = 0; it < FUZZ_ROUNDS; it++) {
        memcpy(c, o.buf, o.len);
        int flips = 1 + (int)(rnd() % 4);
        for (int f = 0; f < flips; f++) {
            size_t pos = 1 + rnd() % (o.len - 1);
            if (rnd() % 2)
                c[pos] ^= (unsigned char)(1u << (rnd() % 8));
            else
                c[pos] = (unsigned char)rnd();
        }
        size_t n = it % 7 == 0 ? 1 + rnd() % o.len : o.len;
        struct rdb_in in;
        struct entry *x = load(c, n, &in);
        if (x) {
            /* Whatever loads is a valid set. */
            struct vset *vs = entry_ptr(x);
            CHECK_EQ(hnsw_check(vset_index(vs), err, sizeof(err)), 0);
            CHECK_EQ(vset_card(vs), hnsw_count(vset_index(vs)));
            float q[8] = {1, 0, 0, 0, 0, 0, 0, 0};
            struct hnsw_result r[5];
            hnsw_search(vset_index(vs), q, 5, 20, NULL, NULL, 0, r);
            entry_free(x);
            loaded++;
        } else {
            CHECK(in.failed || in.empty_key);
            refused++;
        }
    }
    CHECK(refused > FUZZ_ROUNDS / 15);
    hk_free(c);
    rdb_out_free(&o);
    entry_free(e);
}

/* Random damage, in a child (a crash or runaway allocation fails the test
 * with the reason instead of the run). */
TEST(test_rdb_vset_random_corruption_never_crashes)
{
    struct fuzz_arg args[] = {{HNSW_F32, 0}, {HNSW_Q8, 0}, {HNSW_BIN, 0}, {HNSW_Q8, 16}};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
        char why[128];
        if (test_run_guarded(fuzz_body, &args[i], 60, 512, why, sizeof(why)))
            test_fail(__FILE__, __LINE__, "corruption run %zu: %s", i, why);
    }
}

/* The same in this process (the sanitizer tier sees leaks here). */
TEST(test_rdb_vset_corruption_no_leak)
{
    struct fuzz_arg a = {HNSW_Q8, 16};
    fuzz_body(&a);
}

/* The graph's node and free-id counts are checked against the bytes the
 * payload still holds before the loader builds anything: a lying count is
 * refused with a message naming it (not a truncation found after
 * allocating for it). */
TEST(test_rdb_vset_graph_counts_bounded_by_input)
{
    struct entry *e = mk_vset(HNSW_F32, 4, 4, 10, 0, 0);
    struct rdb_out o;
    rdb_out_init_mem(&o);
    CHECK_EQ(rdb_save_value(&o, e, 11), 0);
    const unsigned char magic[4] = {0x48, 0x4e, 0x53, 0x57}; /* "HNSW" LE */
    size_t at = 0;
    for (size_t i = 0; i + 4 <= o.len; i++)
        if (memcmp(o.buf + i, magic, 4) == 0) {
            at = i;
            break;
        }
    CHECK(at > 0);
    unsigned char *c = hk_malloc(o.len);
    const uint64_t counts[] = {1ULL << 20, 1ULL << 31, 0xFFFFFFFEULL, 1ULL << 40};
    struct rdb_in in;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        memcpy(c, o.buf, o.len);
        for (int b = 0; b < 8; b++)
            c[at + 20 + b] = (unsigned char)(counts[k] >> (8 * b)); /* node count */
        struct entry *x = load(c, o.len, &in);
        CHECK(x == NULL && in.failed);
        CHECK(strstr(in.err, "too many nodes") != NULL || strstr(in.err, "holds at most") != NULL);
        if (x)
            entry_free(x);
    }
    memcpy(c, o.buf, o.len);
    c[at + 28] = c[at + 29] = c[at + 30] = 0xff; /* free ids: 0x00ffffff */
    struct entry *x = load(c, o.len, &in);
    CHECK(x == NULL && in.failed && strstr(in.err, "holds at most") != NULL);
    if (x)
        entry_free(x);
    hk_free(c);
    rdb_out_free(&o);
    entry_free(e);
}
