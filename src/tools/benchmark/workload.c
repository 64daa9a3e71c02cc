/* workload.c - see workload.h. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The tool's allocation policy (shared with engine.c): out of memory is
 * fatal, with a message. */
void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "hotkv-benchmark: out of memory\n");
        abort();
    }
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "hotkv-benchmark: out of memory\n");
        abort();
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

/* Growable byte buffer for compiling. */
struct gbuf {
    char *p;
    size_t len, cap;
};

static void gb_put(struct gbuf *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            fprintf(stderr, "hotkv-benchmark: out of memory\n");
            abort();
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void gb_fill(struct gbuf *b, char c, size_t n)
{
    char chunk[256];
    memset(chunk, c, sizeof(chunk));
    while (n) {
        size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
        gb_put(b, chunk, k);
        n -= k;
    }
}

static void gb_fmt(struct gbuf *b, const char *prefix, size_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%s%zu\r\n", prefix, v);
    gb_put(b, tmp, (size_t)n);
}

#define RAND_TOKEN "__rand_int__"
#define DATA_TOKEN "__data__"

/* Split text into words (quotes group); returns the count, words in *out
 * (malloc'd strings), or -1 on an unbalanced quote. */
static int split_words(const char *text, char ***out)
{
    int n = 0, cap = 8;
    char **v = xmalloc(sizeof(char *) * (size_t)cap);
    const char *s = text;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
            s++;
        if (!*s)
            break;
        struct gbuf w = {0};
        while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') {
            if (*s == '"' || *s == '\'') {
                char q = *s++;
                const char *e = strchr(s, q);
                if (!e) {
                    free(w.p);
                    for (int i = 0; i < n; i++)
                        free(v[i]);
                    free(v);
                    return -1;
                }
                gb_put(&w, s, (size_t)(e - s));
                s = e + 1;
            } else {
                gb_put(&w, s++, 1);
            }
        }
        gb_put(&w, "", 1);
        if (n == cap) {
            cap *= 2;
            char **nv = realloc(v, sizeof(char *) * (size_t)cap);
            if (!nv)
                abort();
            v = nv;
        }
        v[n++] = w.p;
    }
    *out = v;
    return n;
}

int bm_template_compile(struct bm_template *t, const char *text, size_t data_size, char *err,
                        size_t errcap)
{
    char **words;
    int nw = split_words(text, &words);
    memset(t, 0, sizeof(*t));
    if (nw < 0) {
        snprintf(err, errcap, "unbalanced quotes in command template '%s'", text);
        return -1;
    }
    if (nw == 0) {
        free(words);
        snprintf(err, errcap, "empty command template");
        return -1;
    }
    struct gbuf b = {0};
    size_t kcap = 4;
    t->key_offs = xmalloc(sizeof(size_t) * kcap);
    gb_fmt(&b, "*", (size_t)nw);
    for (int i = 0; i < nw; i++) {
        const char *w = words[i];
        /* Length of the argument once expanded. */
        size_t alen = 0;
        for (const char *s = w; *s;) {
            if (!strncmp(s, RAND_TOKEN, strlen(RAND_TOKEN))) {
                alen += BM_KEY_DIGITS;
                s += strlen(RAND_TOKEN);
            } else if (!strncmp(s, DATA_TOKEN, strlen(DATA_TOKEN))) {
                alen += data_size;
                s += strlen(DATA_TOKEN);
            } else {
                alen++;
                s++;
            }
        }
        gb_fmt(&b, "$", alen);
        if (i == 0) {
            t->cmd_off = b.len;
            t->cmd_len = alen;
        } else if (i == 1) {
            t->arg1_off = b.len;
            t->arg1_len = alen;
        }
        for (const char *s = w; *s;) {
            if (!strncmp(s, RAND_TOKEN, strlen(RAND_TOKEN))) {
                if ((size_t)t->nkeys == kcap) {
                    kcap *= 2;
                    size_t *nk = realloc(t->key_offs, sizeof(size_t) * kcap);
                    if (!nk)
                        abort();
                    t->key_offs = nk;
                }
                t->key_offs[t->nkeys++] = b.len;
                gb_fill(&b, '0', BM_KEY_DIGITS);
                s += strlen(RAND_TOKEN);
            } else if (!strncmp(s, DATA_TOKEN, strlen(DATA_TOKEN))) {
                gb_fill(&b, 'x', data_size);
                s += strlen(DATA_TOKEN);
            } else {
                gb_put(&b, s++, 1);
            }
        }
        gb_put(&b, "\r\n", 2);
        free(words[i]);
    }
    free(words);
    t->argc = nw;
    t->text = xstrdup(text);
    t->bytes = b.p;
    t->len = b.len;
    return 0;
}

void bm_template_free(struct bm_template *t)
{
    free(t->text);
    free(t->bytes);
    free(t->key_offs);
    memset(t, 0, sizeof(*t));
}

#define MGET10 "MGET" " key:__rand_int__" " key:__rand_int__" " key:__rand_int__" \
    " key:__rand_int__" " key:__rand_int__" " key:__rand_int__" " key:__rand_int__" \
    " key:__rand_int__" " key:__rand_int__" " key:__rand_int__"
#define KV " key:__rand_int__ __data__"
#define MSET10 "MSET" KV KV KV KV KV KV KV KV KV KV

static const struct {
    const char *name;
    const char *text;
} named[] = {
    {"set", "SET key:__rand_int__ __data__"},
    {"get", "GET key:__rand_int__"},
    {"mget", MGET10},
    {"setnx", "SETNX key:__rand_int__ __data__"},
    {"append", "APPEND key:__rand_int__ __data__"},
    {"incr", "INCR counter:__rand_int__"},
    {"lpush", "LPUSH mylist __data__"},
    {"rpush", "RPUSH mylist __data__"},
    {"sadd", "SADD myset element:__rand_int__"},
    {"hset", "HSET myhash element:__rand_int__ __data__"},
    {"mset", MSET10},
    {"ping", "PING"},
};

const char *bm_named_workload(const char *name)
{
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
        if (!strcasecmp(named[i].name, name))
            return named[i].text;
    }
    return NULL;
}

const char *bm_named_list(void)
{
    return "set,get,mget,setnx,append,incr,lpush,rpush,sadd,hset,mset,ping";
}

int bm_workload_single(struct bm_workload *w, const char *name, const char *text,
                       size_t data_size, char *err, size_t errcap)
{
    memset(w, 0, sizeof(*w));
    w->t = xmalloc(sizeof(*w->t));
    if (bm_template_compile(&w->t[0], text, data_size, err, errcap) < 0) {
        free(w->t);
        w->t = NULL;
        return -1;
    }
    w->nt = 1;
    w->cycle = xmalloc(sizeof(int));
    w->cycle[0] = 0;
    w->ncycle = 1;
    w->name = xstrdup(name);
    return 0;
}

int bm_workload_ratio(struct bm_workload *w, unsigned sets, unsigned gets, size_t data_size,
                      char *err, size_t errcap)
{
    char name[64];
    memset(w, 0, sizeof(*w));
    if (sets + gets == 0 || sets > 1000 || gets > 1000) {
        snprintf(err, errcap, "--ratio wants SET:GET with 0..1000 each, not both 0");
        return -1;
    }
    w->t = xmalloc(sizeof(*w->t) * 2);
    if (bm_template_compile(&w->t[0], "SET key:__rand_int__ __data__", data_size, err, errcap) <
            0 ||
        bm_template_compile(&w->t[1], "GET key:__rand_int__", data_size, err, errcap) < 0)
        abort(); /* fixed templates */
    w->nt = 2;
    w->ncycle = (int)(sets + gets);
    w->cycle = xmalloc(sizeof(int) * (size_t)w->ncycle);
    /* Spread the SETs evenly over the cycle. */
    for (int i = 0; i < w->ncycle; i++) {
        unsigned before = (unsigned)((unsigned long long)i * sets / (unsigned)w->ncycle);
        unsigned after = (unsigned)((unsigned long long)(i + 1) * sets / (unsigned)w->ncycle);
        w->cycle[i] = after > before ? 0 : 1;
    }
    snprintf(name, sizeof(name), "set:get %u:%u", sets, gets);
    w->name = xstrdup(name);
    return 0;
}

void bm_workload_free(struct bm_workload *w)
{
    for (int i = 0; i < w->nt; i++)
        bm_template_free(&w->t[i]);
    free(w->t);
    free(w->cycle);
    free(w->name);
    memset(w, 0, sizeof(*w));
}
