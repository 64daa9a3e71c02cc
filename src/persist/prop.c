/* prop.c - command propagation; see prop.h for the rules.
 *
 * Per thread: the change counter, the running call's flags, the open unit
 * (its commands serialized in one growable buffer until the outermost
 * unit ends) and the argument builder.  Shared: only the registry of
 * change counters, under reg_mu (thread start/stop and prop_dirty_total,
 * never on the command path). */
#include "prop.h"

#include <pthread.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../net/worker.h"
#include "../server.h"

/* The AOF layer (persist/aof.c); weak so that this file links without it. */
void aof_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens) __attribute__((weak));
/* The replication stream (persist/repl.c), the same way. */
void repl_feed_cmd(int db, int argc, const char *const *argv, const size_t *lens) __attribute__((weak));

_Thread_local unsigned long long prop_dirty PROP_TLS;
_Thread_local unsigned prop_cmd_flags PROP_TLS;
_Thread_local int prop_feed_off;
atomic_int prop_on; /* PROP_ON_* bits: 0 until the AOF or a replica turns feeding on */
void (*prop_sink)(int db, int argc, const char *const *argv, const size_t *lens);

/* ------------------------------------------------------ change counter --- */
#define MAX_COUNTERS 1024
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long *reg[MAX_COUNTERS];
static int nreg;
static unsigned long long retired; /* counts of threads that unregistered */
static _Thread_local int reg_slot = -1;

void prop_thread_register(void)
{
    pthread_mutex_lock(&reg_mu);
    if (reg_slot < 0) {
        for (int i = 0; i < MAX_COUNTERS; i++) {
            if (!reg[i]) {
                reg[i] = &prop_dirty;
                reg_slot = i;
                if (i >= nreg)
                    nreg = i + 1;
                break;
            }
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

static void free_thread_buffers(void);

void prop_thread_unregister(void)
{
    free_thread_buffers();
    pthread_mutex_lock(&reg_mu);
    if (reg_slot >= 0) {
        retired += __atomic_load_n(&prop_dirty, __ATOMIC_RELAXED);
        reg[reg_slot] = NULL;
        reg_slot = -1;
    }
    pthread_mutex_unlock(&reg_mu);
}

unsigned long long prop_dirty_total(void)
{
    pthread_mutex_lock(&reg_mu);
    unsigned long long sum = retired;
    for (int i = 0; i < nreg; i++)
        if (reg[i])
            sum += __atomic_load_n(reg[i], __ATOMIC_RELAXED);
    pthread_mutex_unlock(&reg_mu);
    return sum;
}

/* ----------------------------------------------------------------- sink --- */
/* Where a fed command goes: both (every write), or the replicas only
 * (PUBLISH, Redis's PROPAGATE_REPL). */
enum { TO_ALL = 0, TO_REPL = 1 };

static void sink(int db, int argc, const char *const *argv, const size_t *lens, int to)
{
    if (prop_sink) {
        if (to == TO_ALL)
            prop_sink(db, argc, argv, lens);
        return;
    }
    if (aof_feed_cmd && to == TO_ALL)
        aof_feed_cmd(db, argc, argv, lens);
    if (repl_feed_cmd && (atomic_load_explicit(&prop_on, memory_order_relaxed) & PROP_ON_REPL))
        repl_feed_cmd(db, argc, argv, lens);
}

/* ----------------------------------------------------------------- units --- */
/* Kept commands: [int db][int to][int argc] then per argument [size_t
 * len][bytes]. */
struct unit {
    int depth;
    int nops;
    char *buf;
    size_t len, cap;
};
static _Thread_local struct unit u;

static void unit_reserve(size_t more)
{
    if (u.len + more <= u.cap)
        return;
    size_t cap = u.cap ? u.cap : 4096;
    while (cap < u.len + more)
        cap *= 2;
    u.buf = hk_realloc(u.buf, cap);
    u.cap = cap;
}

static void unit_put(const void *p, size_t n)
{
    memcpy(u.buf + u.len, p, n);
    u.len += n;
}

static void unit_keep(int db, int argc, const char *const *argv, const size_t *lens, int to)
{
    size_t need = 3 * sizeof(int);
    for (int i = 0; i < argc; i++)
        need += sizeof(size_t) + lens[i];
    unit_reserve(need);
    unit_put(&db, sizeof(int));
    unit_put(&to, sizeof(int));
    unit_put(&argc, sizeof(int));
    for (int i = 0; i < argc; i++) {
        unit_put(&lens[i], sizeof(size_t));
        unit_put(argv[i], lens[i]);
    }
    u.nops++;
}

static void unit_flush(void)
{
    if (u.nops > 0) {
        static const char *const multi[1] = {"MULTI"}, *const exec[1] = {"EXEC"};
        static const size_t multi_len[1] = {5}, exec_len[1] = {4};
        /* As Redis: MULTI/EXEC go everywhere, each command where it was
         * fed (the AOF of a transaction with a PUBLISH lacks the PUBLISH). */
        int wrap = u.nops > 1;
        if (wrap)
            sink(-1, 1, multi, multi_len, TO_ALL);
        const char *stack_argv[32];
        size_t stack_lens[32];
        size_t pos = 0;
        for (int k = 0; k < u.nops; k++) {
            int db, to, argc;
            memcpy(&db, u.buf + pos, sizeof(int));
            memcpy(&to, u.buf + pos + sizeof(int), sizeof(int));
            memcpy(&argc, u.buf + pos + 2 * sizeof(int), sizeof(int));
            pos += 3 * sizeof(int);
            const char **argv = argc <= 32 ? stack_argv : hk_malloc(sizeof(char *) * (size_t)argc);
            size_t *lens = argc <= 32 ? stack_lens : hk_malloc(sizeof(size_t) * (size_t)argc);
            for (int i = 0; i < argc; i++) {
                memcpy(&lens[i], u.buf + pos, sizeof(size_t));
                pos += sizeof(size_t);
                argv[i] = u.buf + pos;
                pos += lens[i];
            }
            sink(db, argc, argv, lens, to);
            if (argv != stack_argv) {
                hk_free(argv);
                hk_free(lens);
            }
        }
        if (wrap)
            sink(-1, 1, exec, exec_len, TO_ALL);
    }
    u.nops = 0;
    u.len = 0;
    if (u.cap > 1024 * 1024) {
        /* A big script or transaction: do not keep its buffer per thread. */
        hk_free(u.buf);
        u.buf = NULL;
        u.cap = 0;
    }
}

void prop_unit_begin(void)
{
    u.depth++;
}

void prop_unit_end(void)
{
    if (u.depth <= 0)
        return;
    if (--u.depth == 0)
        unit_flush();
}

/* -------------------------------------------------------------- feeding --- */
static void feed_to(int db, int argc, const char *const *argv, const size_t *lens, int to)
{
    if (db_loading || prop_feed_off || argc <= 0)
        return;
    if (!atomic_load_explicit(&prop_on, memory_order_relaxed) && !prop_sink && u.depth == 0)
        return;
    if (u.depth == 0)
        sink(db, argc, argv, lens, to);
    else
        unit_keep(db, argc, argv, lens, to);
}

void prop_feed(int db, int argc, const char *const *argv, const size_t *lens)
{
    feed_to(db, argc, argv, lens, TO_ALL);
}

void prop_feed_repl(int db, int argc, const char *const *argv, const size_t *lens)
{
    feed_to(db, argc, argv, lens, TO_REPL);
}

void prop_rewrite(struct client *c, int argc, const char *const *argv, const size_t *lens)
{
    prop_prevent();
    prop_feed(c->db, argc, argv, lens);
}

void prop_self(struct client *c)
{
    prop_prevent();
    prop_feed(c->db, c->argc, c->argv, c->argvlen);
}

void prop_call_end_slow(struct client *c, unsigned long long dirty_before, prop_write_fn *is_write)
{
    unsigned f = prop_cmd_flags;
    prop_cmd_flags = 0;
    if (f & PROP_PREVENT)
        return;
    if (!atomic_load_explicit(&prop_on, memory_order_relaxed) && !prop_sink)
        return;
    if (prop_dirty == dirty_before && !(f & PROP_FORCE))
        return;
    if (!is_write(c))
        return;
    prop_feed(c->db, c->argc, c->argv, c->argvlen);
}

void prop_key_expired(int db, const char *key, size_t klen)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, klen};
    int off = prop_feed_off;
    prop_feed_off = 0; /* an expiry is fed whatever a script asked (Redis) */
    prop_feed(db, 2, argv, lens);
    prop_feed_off = off;
}

/* -------------------------------------------------------------- builder --- */
struct builder {
    int db, argc, cap;
    size_t *offs, *lens;
    char *buf;
    size_t len, bcap;
};
static _Thread_local struct builder b;

void prop_op_begin(int db)
{
    b.db = db;
    b.argc = 0;
    b.len = 0;
}

void prop_op_arg(const char *s, size_t n)
{
    if (b.argc == b.cap) {
        b.cap = b.cap ? b.cap * 2 : 16;
        b.offs = hk_realloc(b.offs, sizeof(size_t) * (size_t)b.cap);
        b.lens = hk_realloc(b.lens, sizeof(size_t) * (size_t)b.cap);
    }
    if (b.len + n > b.bcap) {
        size_t cap = b.bcap ? b.bcap : 256;
        while (cap < b.len + n)
            cap *= 2;
        b.buf = hk_realloc(b.buf, cap);
        b.bcap = cap;
    }
    if (n)
        memcpy(b.buf + b.len, s, n);
    b.offs[b.argc] = b.len;
    b.lens[b.argc] = n;
    b.argc++;
    b.len += n;
}

void prop_op_str(const char *s)
{
    prop_op_arg(s, strlen(s));
}

void prop_op_ll(long long v)
{
    char tmp[24];
    int n = ll_to_str(tmp, v);
    prop_op_arg(tmp, (size_t)n);
}

void prop_op_end(void)
{
    if (b.argc <= 0)
        return;
    const char *stack_argv[32] = {0}; /* (initialized: gcc -fsanitize sees a maybe-uninitialized read) */
    const char **argv = b.argc <= 32 ? stack_argv : hk_malloc(sizeof(char *) * (size_t)b.argc);
    for (int i = 0; i < b.argc; i++)
        argv[i] = b.buf + b.offs[i];
    prop_feed(b.db, b.argc, argv, b.lens);
    if (argv != stack_argv)
        hk_free(argv);
    b.argc = 0;
    b.len = 0;
    if (b.bcap > 256 * 1024 || b.cap > 4096) {
        hk_free(b.buf);
        hk_free(b.offs);
        hk_free(b.lens);
        memset(&b, 0, sizeof(b));
    }
}

/* The thread's buffers (its unit is closed). */
static void free_thread_buffers(void)
{
    if (u.depth == 0) {
        hk_free(u.buf);
        u.buf = NULL;
        u.cap = u.len = 0;
        u.nops = 0;
    }
    hk_free(b.buf);
    hk_free(b.offs);
    hk_free(b.lens);
    memset(&b, 0, sizeof(b));
}
