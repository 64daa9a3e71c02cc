/* repl.c - REPLCONF, PSYNC and ROLE: a replica's handshake with this
 * server as its master (the replication itself is persist/repl.c).
 *
 * A replica connects as a client, may AUTH, says REPLCONF listening-port /
 * ip-address / capa, then PSYNC replid offset.  PSYNC hands a duplicate of
 * the socket to the replication thread (repl_adopt) and closes this client
 * without a word: from then on only the replication thread talks to the
 * replica (docs/architecture.md, "Replication"). */
#include "repl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../net/client.h"
#include "../persist/repl.h"
#include "../proto/reply.h"

static int word(const struct client *c, int i, const char *w)
{
    return c->argvlen[i] == strlen(w) && !strncasecmp(c->argv[i], w, c->argvlen[i]);
}

static struct repl_hello *hello(struct client *c)
{
    if (!c->repl_hello)
        c->repl_hello = hk_calloc(sizeof(struct repl_hello));
    return c->repl_hello;
}

void repl_client_gone(struct client *c)
{
    hk_free(c->repl_hello);
    c->repl_hello = NULL;
}

/* REPLCONF <option> <value> [<option> <value> ...] */
void replconf_command(struct client *c)
{
    if ((c->argc % 2) == 0) {
        reply_error(&c->out, ERR_SYNTAX);
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        if (word(c, i, "listening-port")) {
            long long port;
            if (arg_ll(c, i + 1, &port) < 0)
                return;
            hello(c)->listening_port = (int)port;
        } else if (word(c, i, "ip-address")) {
            size_t n = c->argvlen[i + 1];
            if (n >= sizeof(((struct repl_hello *)0)->ip)) {
                reply_error(&c->out, "ERR REPLCONF ip-address provided by replica instance is too long");
                return;
            }
            memcpy(hello(c)->ip, c->argv[i + 1], n);
            hello(c)->ip[n] = 0;
        } else if (word(c, i, "capa")) {
            if (c->argvlen[i + 1] == 3 && !strncasecmp(c->argv[i + 1], "eof", 3))
                hello(c)->capa_eof = 1;
            else if (c->argvlen[i + 1] == 6 && !strncasecmp(c->argv[i + 1], "psync2", 6))
                hello(c)->capa_psync2 = 1;
            /* other capabilities: ignored, as Redis does */
        } else if (word(c, i, "ack") || word(c, i, "fack") || word(c, i, "getack")) {
            /* From a client that is not a replica of ours (ACKs of adopted
             * replicas go to the replication thread): nothing to do, and
             * no reply, as in Redis. */
            return;
        } else if (word(c, i, "rdb-only") || word(c, i, "rdb-filter-only")) {
            /* Redis's "give me only the RDB" (redis-cli --rdb): not done
             * here; refused rather than half done. */
            reply_errorf(&c->out, "ERR Unrecognized REPLCONF option: %.*s", (int)c->argvlen[i], c->argv[i]);
            return;
        } else {
            reply_errorf(&c->out, "ERR Unrecognized REPLCONF option: %.*s", (int)c->argvlen[i], c->argv[i]);
            return;
        }
    }
    reply_ok(&c->out);
}

/* PSYNC replicationid offset */
void psync_command(struct client *c)
{
    long long offset;
    char idbuf[64];
    if (c->tls) {
        /* The replication thread speaks plain TCP only so far. */
        reply_error(&c->out, "ERR Replication over TLS is not supported yet");
        return;
    }
    if (c->out.len > c->sent) {
        reply_error(&c->out, "ERR SYNC and PSYNC are invalid with pending output");
        return;
    }
    if (c->argvlen[1] >= sizeof(idbuf)) {
        reply_error(&c->out, "ERR invalid replication id");
        return;
    }
    memcpy(idbuf, c->argv[1], c->argvlen[1]);
    idbuf[c->argvlen[1]] = 0;
    /* A bad offset is a full resync, as Redis reads it. */
    char *end;
    char num[32];
    size_t n = c->argvlen[2] < sizeof(num) - 1 ? c->argvlen[2] : sizeof(num) - 1;
    memcpy(num, c->argv[2], n);
    num[n] = 0;
    offset = strtoll(num, &end, 10);
    if (end == num || *end)
        offset = -1;
    struct repl_hello h = {0};
    if (c->repl_hello)
        h = *c->repl_hello;
    if (!h.ip[0]) { /* the peer's address, without the port */
        const char *colon = strrchr(c->addr, ':');
        size_t al = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
        if (al >= sizeof(h.ip))
            al = sizeof(h.ip) - 1;
        memcpy(h.ip, c->addr, al);
        h.ip[al] = 0;
    }
    int fd = dup(c->fd);
    if (fd < 0) {
        reply_errorf(&c->out, "ERR could not take the connection: %s", strerror(errno));
        return;
    }
    char err[128];
    if (repl_adopt(fd, &h, idbuf, offset, err, sizeof(err)) < 0) {
        close(fd);
        reply_error(&c->out, err);
        return;
    }
    /* The connection now belongs to the replication thread: this client
     * goes quietly (its descriptor closes, the socket stays open). */
    c->out.muted = 1;
    client_close_asap(c);
}

/* ROLE */
void role_command(struct client *c)
{
    struct repl_role_entry e[64];
    int n;
    long long off = repl_role(e, 64, &n);
    reply_array(&c->out, 3);
    reply_bulk_cstr(&c->out, "master");
    reply_int(&c->out, off);
    reply_array(&c->out, n);
    for (int i = 0; i < n; i++) {
        reply_array(&c->out, 3);
        reply_bulk_cstr(&c->out, e[i].ip);
        reply_bulk_ll(&c->out, e[i].port);
        reply_bulk_ll(&c->out, e[i].ack);
    }
}
