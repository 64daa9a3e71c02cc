/* t_hll.c - the HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG,
 * PFSELFTEST, as Redis 7.2 runs them.
 *
 * An HLL is a string value (types/hll.h has the bytes), so the handlers
 * modify the key's entry in place: the value is handed to types/hll.c as
 * a struct hll_buf whose grow() reallocates the entry (and repoints the
 * table slot at it) when a sparse value needs room or turns dense.  A key
 * that does not exist yet is built in a heap buffer and added at the end.
 * Every handler runs with its keys' slot locks held by the dispatcher.
 *
 * Errors as Redis: a non-string key gets the usual WRONGTYPE; a string
 * that is not an HLL (magic, encoding byte, dense length) gets "WRONGTYPE
 * Key is not a valid HyperLogLog string value."; a sparse body that does
 * not decode to 16384 registers gets "INVALIDOBJ Corrupted HLL object
 * detected".
 *
 * Propagation and events as Redis: PFADD and PFMERGE are fed as called
 * when they changed the value (event "pfadd" for both); PFCOUNT feeds
 * itself when it refreshed the cached cardinality (Redis counts that as a
 * change, so the AOF holds the same bytes), without an event; PFDEBUG
 * GETREG/TODENSE are fed when they converted the value. */
#include <string.h>

#include "../base/mem.h"
#include "../persist/prop.h"
#include "../types/hll.h"
#include "commands.h"
#include "notify.h"
#include "t_hll.h"

#define ERR_NOT_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_CORRUPT "INVALIDOBJ Corrupted HLL object detected"

/* A key's value opened for modification. */
struct hll_key {
    struct client *c;
    int ki;           /* argv index of the key */
    long idx;         /* table index of e */
    struct entry *e;  /* NULL: a new key, its value in a heap buffer */
    struct hll_buf b;
};

static int entry_grow(struct hll_buf *b, size_t need)
{
    struct hll_key *k = b->ctx;
    struct entry *e = k->e;
    if ((long long)need > ENTRY_MAX_LEN)
        return -1;
    if (!entry_vlen_fits(e, need)) {
        /* A dense HLL is past the short header's length.  The value is
         * b->len bytes now (at most the capped b->cap: it fits). */
        entry_set_vlen(e, b->len);
        e = entry_to_long(e, 0);
    }
    size_t head = entry_hdr(e) + entry_klen(e);
    e = hk_realloc(e, head + need);
    table_set(ks.dbs[k->c->db]->t[kslot(k->c, k->ki)], k->idx, e);
    k->e = e;
    b->p = (uint8_t *)entry_val(e);
    b->cap = hk_usable(e) - head;
    if (!entry_vlen_fits(e, b->cap))
        b->cap = ENTRY_SHORT_VLEN;
    return 0;
}

static int heap_grow(struct hll_buf *b, size_t need)
{
    b->p = hk_realloc(b->p, need);
    b->cap = need;
    return 0;
}

static void open_existing(struct hll_key *k, struct client *c, int ki, struct entry *e, long idx)
{
    k->c = c;
    k->ki = ki;
    k->e = e;
    k->idx = idx;
    k->b.p = (uint8_t *)entry_val(e);
    k->b.len = entry_vlen(e);
    k->b.cap = hk_usable(e) - entry_hdr(e) - entry_klen(e);
    if (!entry_vlen_fits(e, k->b.cap))
        k->b.cap = ENTRY_SHORT_VLEN; /* past it, entry_grow moves to the long header */
    k->b.grow = entry_grow;
    k->b.ctx = k;
    /* Redis unshares the value first, which leaves it "raw". */
    e->enc = ENC_RAW;
}

static void open_new(struct hll_key *k, struct client *c, int ki)
{
    k->c = c;
    k->ki = ki;
    k->e = NULL;
    k->idx = -1;
    k->b.cap = 64;
    k->b.p = hk_malloc(k->b.cap);
    k->b.len = HLL_EMPTY_SIZE;
    k->b.grow = heap_grow;
    k->b.ctx = k;
    hll_init_empty(k->b.p);
}

/* Store the value back: its length into the entry, or a new key. */
static void close_key(struct hll_key *k)
{
    struct client *c = k->c;
    if (k->e) {
        entry_set_vlen(k->e, k->b.len); /* entry_grow made the header fit */
        return;
    }
    struct entry *e = entry_new(OBJ_STRING, c->argv[k->ki], c->argvlen[k->ki], k->b.len, -1);
    memcpy(entry_val(e), k->b.p, k->b.len);
    e->enc = ENC_RAW;
    db_add(c->db, kslot(c, k->ki), e);
    hk_free(k->b.p);
}

/* The entry at argv[ki] if it is a valid HLL (NULL: absent); replies and
 * returns -1 otherwise. */
static int lookup_hll(struct client *c, int ki, int flags, struct entry **out, long *idx)
{
    struct entry *e = db_get_idx(c->db, kslot(c, ki), c->argv[ki], c->argvlen[ki], flags, idx);
    *out = e;
    if (!e)
        return 0;
    if (e->type != OBJ_STRING) {
        reply_error(&c->out, ERR_WRONGTYPE);
        return -1;
    }
    if (!hll_is_valid((const uint8_t *)entry_val(e), entry_vlen(e))) {
        reply_error(&c->out, ERR_NOT_HLL);
        return -1;
    }
    return 0;
}

void pfadd_command(struct client *c)
{
    struct entry *e;
    long idx;
    struct hll_key k;
    int updated = 0;

    if (lookup_hll(c, 1, LK_NOSTATS, &e, &idx) < 0)
        return;
    if (e) {
        open_existing(&k, c, 1, e, idx);
    } else {
        open_new(&k, c, 1);
        updated = 1;
    }
    for (int j = 2; j < c->argc; j++) {
        int r = hll_add(&k.b, c->argv[j], c->argvlen[j]);
        if (r < 0) {
            /* As Redis: what earlier elements changed stays, unsignalled. */
            close_key(&k);
            reply_error(&c->out, ERR_HLL_CORRUPT);
            return;
        }
        updated += r;
    }
    if (updated)
        hll_cache_invalidate(k.b.p);
    close_key(&k);
    if (updated) {
        KEY_MODIFIED(c, 1, NOTIFY_STRING, "pfadd");
        /* Redis adds one change per updated register (save points). */
        prop_dirty_add((unsigned long long)updated - 1);
    }
    reply_int(&c->out, updated ? 1 : 0);
}

void pfcount_command(struct client *c)
{
    struct entry *e;
    long idx;

    if (c->argc > 2) {
        /* The union: register-wise maximum over every key, no key changed,
         * in this thread's union (types/hll.h), empty between calls. */
        static _Thread_local struct hll_union u;
        for (int j = 1; j < c->argc; j++) {
            int bad = lookup_hll(c, j, 0, &e, &idx) < 0;
            if (!bad && e && hll_union_add(&u, (const uint8_t *)entry_val(e), entry_vlen(e)) < 0) {
                reply_error(&c->out, ERR_HLL_CORRUPT);
                bad = 1;
            }
            if (bad) {
                hll_union_reset(&u);
                return;
            }
        }
        reply_int(&c->out, (long long)hll_union_count(&u));
        return;
    }

    if (lookup_hll(c, 1, 0, &e, &idx) < 0)
        return;
    if (!e) {
        reply_int(&c->out, 0);
        return;
    }
    e->enc = ENC_RAW;
    uint8_t *v = (uint8_t *)entry_val(e);
    uint64_t card;
    if (!hll_cache_get(v, &card)) {
        int invalid = 0;
        card = hll_count(v, entry_vlen(e), &invalid);
        if (invalid) {
            reply_error(&c->out, ERR_HLL_CORRUPT);
            return;
        }
        hll_cache_set(v, card);
        /* Redis: signalModifiedKey and a change, no keyspace event; the
         * command itself is propagated although it is not a write. */
        KEY_SIGNAL(c, 1);
        prop_rewrite(c, c->argc, c->argv, c->argvlen);
    }
    reply_int(&c->out, (long long)card);
}

void pfmerge_command(struct client *c)
{
    uint8_t max[HLL_REGISTERS];
    struct entry *e;
    long idx;
    int dense = 0;

    memset(max, 0, sizeof(max));
    for (int j = 1; j < c->argc; j++) {
        if (lookup_hll(c, j, 0, &e, &idx) < 0)
            return;
        if (!e)
            continue;
        const uint8_t *v = (const uint8_t *)entry_val(e);
        if (hll_encoding(v) == HLL_DENSE)
            dense = 1;
        if (hll_merge(max, v, entry_vlen(e)) < 0) {
            reply_error(&c->out, ERR_HLL_CORRUPT);
            return;
        }
    }

    /* The destination was checked above as the first source. */
    struct hll_key k;
    e = db_get_idx(c->db, kslot(c, 1), c->argv[1], c->argvlen[1], LK_NOSTATS, &idx);
    if (e)
        open_existing(&k, c, 1, e, idx);
    else
        open_new(&k, c, 1);
    /* A dense source makes the result dense at once (as Redis). */
    if (dense && hll_to_dense(&k.b) < 0) {
        close_key(&k);
        reply_error(&c->out, ERR_HLL_CORRUPT);
        return;
    }
    for (long r = 0; r < HLL_REGISTERS; r++)
        if (max[r])
            hll_set(&k.b, r, max[r]);
    hll_cache_invalidate(k.b.p);
    close_key(&k);
    KEY_MODIFIED(c, 1, NOTIFY_STRING, "pfadd");
    reply_ok(&c->out);
}

void pfselftest_command(struct client *c)
{
    char err[128];
    if (hll_selftest(err, sizeof(err)) < 0)
        reply_error(&c->out, err);
    else
        reply_ok(&c->out);
}

void pfdebug_command(struct client *c)
{
    struct entry *e;
    long idx;
    struct hll_key k;

    if (lookup_hll(c, 2, LK_NOSTATS, &e, &idx) < 0)
        return;
    if (!e) {
        /* Redis checks the key before the subcommand. */
        reply_error(&c->out, "ERR The specified key does not exist");
        return;
    }
    open_existing(&k, c, 2, e, idx);

    if (arg_is(c, 1, "getreg") || arg_is(c, 1, "todense")) {
        int conv = hll_to_dense(&k.b);
        close_key(&k);
        if (conv < 0) {
            reply_error(&c->out, ERR_HLL_CORRUPT);
            return;
        }
        if (conv > 0)
            prop_dirty_add(1); /* a change: fed to the AOF, as Redis */
        if (arg_is(c, 1, "todense")) {
            reply_int(&c->out, conv);
            return;
        }
        const uint8_t *regs = k.b.p + HLL_HDR_SIZE;
        reply_array(&c->out, HLL_REGISTERS);
        for (long r = 0; r < HLL_REGISTERS; r++)
            reply_int(&c->out, hll_dense_get(regs, r));
    } else if (arg_is(c, 1, "decode")) {
        if (hll_encoding(k.b.p) != HLL_SPARSE) {
            reply_error(&c->out, "ERR HLL encoding is not sparse");
            return;
        }
        /* Only a body that decodes to exactly 16384 registers: that bounds
         * it to 16384 opcodes, so the text (8 bytes an opcode at most) is
         * small whatever the stored length; a crafted 500 MB body is not
         * described into a 4 GB reply. */
        int invalid = 0;
        (void)hll_count(k.b.p, k.b.len, &invalid);
        if (invalid) {
            reply_error(&c->out, ERR_HLL_CORRUPT);
            return;
        }
        char *text;
        size_t n = hll_sparse_describe(k.b.p, k.b.len, &text);
        reply_bulk(&c->out, text, n);
        hk_free(text);
    } else if (arg_is(c, 1, "encoding")) {
        reply_status(&c->out, hll_encoding(k.b.p) == HLL_DENSE ? "dense" : "sparse");
    } else {
        reply_errorf(&c->out, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)(c->argvlen[1] > 900 ? 900 : c->argvlen[1]),
                     c->argv[1]);
    }
}
