/* digest.c - value digests for DEBUG DIGEST (digest.h). */
#include "digest.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/sha1.h"
#include "../base/util.h"
#include "../ds/stream.h"
#include "hash.h"
#include "list.h"
#include "set.h"
#include "vset.h"
#include "zset.h"

/* d ^= SHA1(data): order-independent. */
static void xor_digest(unsigned char *d, const void *p, size_t n)
{
    struct sha1_ctx s;
    unsigned char h[DIGEST_LEN];
    sha1_init(&s);
    sha1_update(&s, p, n);
    sha1_final(&s, h);
    for (int i = 0; i < DIGEST_LEN; i++)
        d[i] ^= h[i];
}

/* d = SHA1(d ^ SHA1(data)): order matters. */
static void mix_digest(unsigned char *d, const void *p, size_t n)
{
    struct sha1_ctx s;
    xor_digest(d, p, n);
    sha1_init(&s);
    sha1_update(&s, d, DIGEST_LEN);
    sha1_final(&s, d);
}

/* A score as its shortest text that reads back as the same double (what
 * Redis 7.2 writes with fpconv_dtoa). */
static int score_text(char *buf, size_t cap, double v)
{
    if (v != v)
        return snprintf(buf, cap, "nan");
    if (v == 1.0 / 0.0 || v == -1.0 / 0.0)
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    /* The fewest significant digits that read back as v ... */
    int p = 1;
    for (; p < 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    /* ... laid out as %.17g lays numbers out: plain notation for decimal
     * exponents -4..16, else exponent notation (30 is "30", not "3e+01"). */
    char e[32];
    snprintf(e, sizeof(e), "%.*e", p - 1, v);
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 >= -4 && exp10 < 17 && exp10 + 1 > p)
        p = exp10 + 1;
    return snprintf(buf, cap, "%.*g", p, v);
}

static int mix_elem(void *arg, const char *s, size_t len)
{
    mix_digest(arg, s, len);
    return 0;
}

static int xor_elem(void *arg, const char *s, size_t len)
{
    xor_digest(arg, s, len);
    return 0;
}

static int zset_elem(void *arg, const char *s, size_t len, double score)
{
    unsigned char ed[DIGEST_LEN] = {0};
    char buf[64];
    int n = score_text(buf, sizeof(buf), score);
    mix_digest(ed, s, len);
    mix_digest(ed, buf, (size_t)n);
    xor_digest(arg, ed, DIGEST_LEN);
    return 0;
}

static int hash_elem(void *arg, const char *f, size_t flen, const char *v, size_t vlen, long long ttl)
{
    (void)ttl;
    unsigned char ed[DIGEST_LEN] = {0};
    mix_digest(ed, f, flen);
    mix_digest(ed, v, vlen);
    xor_digest(arg, ed, DIGEST_LEN);
    return 0;
}

static void vset_elem(void *ctx, const char *name, size_t nlen, const char *attr, size_t alen, uint32_t id)
{
    (void)id;
    unsigned char ed[DIGEST_LEN] = {0};
    mix_digest(ed, name, nlen);
    if (attr)
        mix_digest(ed, attr, alen);
    xor_digest(ctx, ed, DIGEST_LEN);
}

void digest_value(unsigned char d[DIGEST_LEN], struct entry *e)
{
    uint32_t type = htonl(e->type);
    mix_digest(d, &type, sizeof(type));
    switch (e->type) {
    case OBJ_STRING:
        mix_digest(d, entry_val(e), entry_vlen(e));
        break;
    case OBJ_LIST:
        list_visit(e, mix_elem, d);
        break;
    case OBJ_SET:
        set_visit(e, xor_elem, d);
        break;
    case OBJ_ZSET:
        zset_visit(e, 0, zset_elem, d);
        break;
    case OBJ_HASH:
        hash_visit_fields(e, hash_elem, d);
        break;
    case OBJ_STREAM: {
        const struct stream *s = entry_ptr(e);
        struct stream_iter it;
        struct stream_entry se;
        struct stream_id lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        stream_iter_start(&it, s, &lo, &hi, 0);
        while (stream_iter_next(&it, &se)) {
            char id[48];
            int n = snprintf(id, sizeof(id), "%llu.%llu", (unsigned long long)se.id.ms, (unsigned long long)se.id.seq);
            mix_digest(d, id, (size_t)n);
            for (uint64_t i = 0; i < se.nfields; i++) {
                const char *f, *v;
                size_t fl, vl;
                stream_entry_field(&se, &f, &fl, &v, &vl);
                mix_digest(d, f, fl);
                mix_digest(d, v, vl);
            }
        }
        stream_iter_stop(&it);
        break;
    }
    case OBJ_VSET: {
        unsigned char md[DIGEST_LEN] = {0};
        vset_foreach(entry_ptr(e), vset_elem, md);
        xor_digest(d, md, DIGEST_LEN);
        break;
    }
    default:
        break;
    }
    if (e->flags & E_HAS_EXPIRE)
        xor_digest(d, "!!expire!!", 10);
}

void digest_key_value(unsigned char d[DIGEST_LEN], struct entry *e)
{
    memset(d, 0, DIGEST_LEN);
    mix_digest(d, entry_key(e), entry_klen(e));
    digest_value(d, e);
}

void digest_db_begin(unsigned char final[DIGEST_LEN], int db)
{
    uint32_t aux = htonl((uint32_t)db);
    mix_digest(final, &aux, sizeof(aux));
}

void digest_add_key(unsigned char acc[DIGEST_LEN], const unsigned char kd[DIGEST_LEN])
{
    xor_digest(acc, kd, DIGEST_LEN);
}

void digest_xor(unsigned char final[DIGEST_LEN], const unsigned char acc[DIGEST_LEN])
{
    for (int i = 0; i < DIGEST_LEN; i++)
        final[i] ^= acc[i];
}

void digest_hex(char out[2 * DIGEST_LEN + 1], const unsigned char d[DIGEST_LEN])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < DIGEST_LEN; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * DIGEST_LEN] = 0;
}
