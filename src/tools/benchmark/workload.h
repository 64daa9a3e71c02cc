/* workload.h - request templates for hotkv-benchmark.
 *
 * A template is a command line such as "SET key:__rand_int__ __data__":
 * split on blanks (double or single quotes group words), each word one RESP
 * argument.  __rand_int__ becomes a key index drawn from the key pattern,
 * written as 12 decimal digits with leading zeros (redis-benchmark's
 * %012d), a fresh draw for every occurrence; __data__ becomes --data-size
 * bytes of 'x'.  The template is compiled once into its RESP bytes plus the
 * offsets of the 12-digit key slots, so encoding a request is a memcpy and
 * a few digit patches.
 *
 * A workload is a cycle of templates: one template, or a SET:GET ratio
 * such as 1:10 (one SET, then ten GETs, per connection, each connection
 * starting at a different point of the cycle). */
#ifndef HK_BM_WORKLOAD_H
#define HK_BM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define BM_KEY_DIGITS 12
#define BM_KEY_MAX 999999999999ULL

struct bm_template {
    char *text;        /* the template as given */
    char *bytes;       /* RESP encoding, key slots filled with zeros */
    size_t len;
    size_t *key_offs;  /* offsets of the 12-digit key slots in bytes */
    int nkeys;
    int argc;          /* words of the command */
    size_t cmd_off, cmd_len;         /* the command name in bytes */
    size_t arg1_off, arg1_len;       /* the first argument (argc >= 2): the key in --cluster */
};

struct bm_workload {
    char *name;                  /* "get", "custom", "ratio 1:10", ... */
    struct bm_template *t;
    int nt;
    int *cycle;                  /* template index per position */
    int ncycle;
};

/* Compile a template; returns 0, or -1 with a message in err. */
int bm_template_compile(struct bm_template *t, const char *text, size_t data_size, char *err,
                        size_t errcap);
void bm_template_free(struct bm_template *t);

/* Named workloads: the twelve commands of BENCHMARKS.md (set get mget setnx
 * append incr lpush rpush sadd hset mset ping), in redis-benchmark's form
 * where it has the command.  Returns the template text or NULL. */
const char *bm_named_workload(const char *name);
/* Comma-separated list of the names, for --help. */
const char *bm_named_list(void);

/* Build a workload: from a template (single), or a SET:GET ratio. */
int bm_workload_single(struct bm_workload *w, const char *name, const char *text,
                       size_t data_size, char *err, size_t errcap);
int bm_workload_ratio(struct bm_workload *w, unsigned sets, unsigned gets, size_t data_size,
                      char *err, size_t errcap);
void bm_workload_free(struct bm_workload *w);

/* Write key index k as 12 digits at dst. */
static inline void bm_put_key(char *dst, uint64_t k)
{
    for (int i = BM_KEY_DIGITS - 1; i >= 0; i--) {
        dst[i] = (char)('0' + k % 10);
        k /= 10;
    }
}

/* Allocation that aborts with a message when memory runs out. */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);

#endif
