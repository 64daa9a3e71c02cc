/* properr.c - propagation-error-behavior (properr.h has the rules). */
#include "properr.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "../base/log.h"
#include "../server.h"
#include "cmd.h"

static atomic_ullong loading_errors;

void propagation_error(struct client *c, int from_aof, const char *err, size_t n, const char *cmdname)
{
    const char *from = from_aof ? "server" : "replica", *to = from_aof ? "AOF-loading-client" : "master";
    if (!cmdname)
        cmdname = "<unknown>";
    log_msg(LL_WARNING, "== CRITICAL == This %s is sending an error to its %s: '%.*s' after processing the command '%s'",
            from, to, (int)(n > 512 ? 512 : n), err, cmdname);
    if (!from_aof && c && c->w) /* the loader's client has a worker of its own, not counted by INFO */
        STAT_ADD(c->w->stats.unexpected_errors, 1);
    else
        atomic_fetch_add_explicit(&loading_errors, 1, memory_order_relaxed);
    int b = __atomic_load_n(&cfg.propagation_error_behavior, __ATOMIC_RELAXED);
    int panic = from_aof ? b == PROP_ERR_PANIC
                         : b != PROP_ERR_IGNORE && __atomic_load_n(&cfg.replica_read_only, __ATOMIC_RELAXED);
    if (panic) {
        log_msg(LL_WARNING, "Guru Meditation: This %s panicked sending an error to its %s after processing the command '%s'",
                from, to, cmdname);
        abort();
    }
}

unsigned long long propagation_errors_loading(void)
{
    return atomic_load_explicit(&loading_errors, memory_order_relaxed);
}

void propagation_errors_reset(void)
{
    atomic_store_explicit(&loading_errors, 0, memory_order_relaxed);
}
