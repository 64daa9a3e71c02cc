/* fuzz_function_harness.h - FUNCTION RESTORE payloads (script/function.c:
 * its own reader of FUNCTION2 records, then the libraries' Lua code run
 * under the 500 ms load timeout), called as the command with a client.
 *
 * Input: a FUNCTION DUMP payload WITHOUT its 10-byte footer (seeds by
 * tests/fuzz/make_seeds.py); the harness appends a valid one (version 11,
 * CRC-64).  The restore policy is FLUSH.  When it succeeds, FUNCTION DUMP
 * of the result must restore again (FLUSH).  Every input starts and ends
 * with no library. */
#ifndef HK_FUZZ_FUNCTION_HARNESS_H
#define HK_FUZZ_FUNCTION_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_restore_harness.h"
#include "proto/reply.h"
#include "script/script.h"


/* FUNCTION <sub> [args]: the reply's bytes in *out (caller hk_frees). */
static char *fuzz_function_call(const char *sub, int argc, const char **argv, size_t *lens, size_t *outlen)
{
    const struct cmd *fn = cmd_lookup("function", 8);
    FZ_CHECK(fn != NULL);
    const struct cmd *s = cmd_lookup_sub(fn, sub, strlen(sub));
    FZ_CHECK(s != NULL);
    struct client c;
    fuzz_client_init(&c);
    c.argc = argc;
    c.argv = argv;
    c.argvlen = lens;
    c.cmd = s;
    function_command(&c);
    FZ_CHECK(c.out.len > 0);
    char *r = hk_malloc(c.out.len + 1);
    memcpy(r, c.out.buf, c.out.len);
    r[c.out.len] = 0;
    *outlen = c.out.len;
    reply_free(&c.out);
    return r;
}

static inline void fuzz_function_one(const uint8_t *data, size_t size)
{
    size_t plen, rlen;
    fuzz_server_init();
    fn_rdb_flush_libs();
    unsigned char *payload = fuzz_with_footer(data, size, &plen);
    const char *argv[4] = {"FUNCTION", "RESTORE", (const char *)payload, "FLUSH"};
    size_t lens[4] = {8, 7, plen, 5};
    char *r = fuzz_function_call("restore", 4, argv, lens, &rlen);
    hk_free(payload);
    FZ_CHECK(r[0] == '+' || r[0] == '-');
    if (r[0] == '+') {
        /* FUNCTION DUMP: a bulk string "$<n>\r\n<payload>\r\n". */
        const char *dargv[2] = {"FUNCTION", "DUMP"};
        size_t dlens[2] = {8, 4};
        size_t dlen;
        char *d = fuzz_function_call("dump", 2, dargv, dlens, &dlen);
        FZ_CHECK(d[0] == '$');
        char *nl = strstr(d, "\r\n");
        FZ_CHECK(nl != NULL);
        long n = strtol(d + 1, NULL, 10);
        FZ_CHECK(n >= 10 && (size_t)n + (size_t)(nl + 2 - d) + 2 == dlen);
        const char *rargv[4] = {"FUNCTION", "RESTORE", nl + 2, "FLUSH"};
        size_t rlens[4] = {8, 7, (size_t)n, 5};
        size_t r2len;
        char *r2 = fuzz_function_call("restore", 4, rargv, rlens, &r2len);
        if (r2[0] != '+')
            fprintf(stderr, "fuzz_function: the dump of restored libraries does not restore: %s\n", r2);
        FZ_CHECK(r2[0] == '+');
        hk_free(r2);
        hk_free(d);
    }
    hk_free(r);
    fn_rdb_flush_libs();
}

#endif
