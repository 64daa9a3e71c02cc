/* persist/resp_enc.h - the RESP multibulk encoding of a command line, as
 * the AOF (persist/aof.c) and the replication stream (persist/repl.c)
 * write it: "*<argc>\r\n" then "$<len>\r\n<bytes>\r\n" per argument. */
#ifndef HK_PERSIST_RESP_ENC_H
#define HK_PERSIST_RESP_ENC_H

#include <stddef.h>
#include <string.h>

static inline int ull_digits(unsigned long long v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
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
    char tmp[24];
    int n = 0;
    *p++ = c;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
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
