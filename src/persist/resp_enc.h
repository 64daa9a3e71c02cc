/* persist/resp_enc.h - the RESP multibulk encoding of a command line, as
 * the AOF (persist/aof.c) and the replication stream (persist/repl.c)
 * write it: "*<argc>\r\n" then "$<len>\r\n<bytes>\r\n" per argument. */
#ifndef HK_PERSIST_RESP_ENC_H
#define HK_PERSIST_RESP_ENC_H

#include <stddef.h>
#include <string.h>

/* Decimal digits of v: compares for the lengths a command's arguments
 * have (this runs for every argument of every write streamed). */
static inline int ull_digits(unsigned long long v)
{
    if (v < 10)
        return 1;
    if (v < 100)
        return 2;
    if (v < 1000)
        return 3;
    if (v < 10000)
        return 4;
    int n = 4;
    for (v /= 10000; v; v /= 10)
        n++;
    return n;
}

/* Bytes of the RESP multibulk encoding of argv. */
static inline size_t cmd_bytes(int argc, const size_t *lens)
{
    size_t n = 1 + (size_t)ull_digits((unsigned long long)argc) + 2;
    for (int i = 0; i < argc; i++)
        n += 1 + (size_t)ull_digits(lens[i]) + 2 + lens[i] + 2;
    return n;
}

static inline char *put_count(char *p, char c, unsigned long long v)
{
    *p++ = c;
    if (v < 10) {
        *p++ = (char)('0' + v);
    } else if (v < 100) {
        p[0] = (char)('0' + v / 10);
        p[1] = (char)('0' + v % 10);
        p += 2;
    } else {
        char *e = p + ull_digits(v);
        for (char *q = e; q > p; v /= 10)
            *--q = (char)('0' + v % 10);
        p = e;
    }
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

static inline char *put_cmd(char *p, int argc, const char *const *argv, const size_t *lens)
{
    p = put_count(p, '*', (unsigned long long)argc);
    for (int i = 0; i < argc; i++) {
        p = put_count(p, '$', lens[i]);
        memcpy(p, argv[i], lens[i]);
        p += lens[i];
        *p++ = '\r';
        *p++ = '\n';
    }
    return p;
}

#endif
