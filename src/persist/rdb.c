/* rdb.c - RDB primitives (sinks, sources, lengths, strings, doubles) and
 * whole snapshot files: save (header, aux fields, functions, databases,
 * EOF, CRC-64) and load into the keyspace.  Value encodings are in
 * rdb_types.c (streams: rdb_stream.c).  See rdb.h for the format. */
#include "rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../db/table.h"
#include "../base/crc64.h"
#include "../net/worker.h"
#include "../server.h"
#include "lzf.h"

#define OUT_BUF (64 * 1024)
#define IN_BUF (256 * 1024)
/* LZF cannot expand data more than this (a 264-byte match from 2 bytes). */
#define LZF_MAX_RATIO 133

/* ============================================================== sink === */

void rdb_out_init_fd(struct rdb_out *o, int fd)
{
    memset(o, 0, sizeof(*o));
    o->fd = fd;
    o->cap = OUT_BUF;
    o->buf = hk_malloc(o->cap);
    o->checksum = 1;
}

void rdb_out_init_mem(struct rdb_out *o)
{
    memset(o, 0, sizeof(*o));
    o->fd = -1;
    o->checksum = 1;
}

void rdb_out_free(struct rdb_out *o)
{
    hk_free(o->buf);
    o->buf = NULL;
    o->len = o->cap = o->crc_pos = 0;
}

static void out_crc_update(struct rdb_out *o)
{
    if (o->checksum && o->len > o->crc_pos)
        o->crc = crc64(o->crc, o->buf + o->crc_pos, o->len - o->crc_pos);
    o->crc_pos = o->len;
}

uint64_t rdb_out_crc(struct rdb_out *o)
{
    out_crc_update(o);
    return o->checksum ? o->crc : 0;
}

/* 0, or the errno of a failed write. */
static int write_fd(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (w == 0)
            return ENOSPC;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_all(struct rdb_out *o, const unsigned char *p, size_t n)
{
    if (o->tee_n > 0) {
        int live = 0, e = EPIPE;
        for (int i = 0; i < o->tee_n; i++) {
            if (o->tee_dead[i])
                continue;
            int rc = write_fd(o->tee_fds[i], p, n);
            if (rc) {
                o->tee_dead[i] = 1;
                e = rc;
            } else {
                live++;
            }
        }
        if (!live) {
            o->err = e;
            return -1;
        }
        return 0;
    }
    int rc = write_fd(o->fd, p, n);
    if (rc) {
        o->err = rc;
        return -1;
    }
    return 0;
}

static int out_sync_maybe(struct rdb_out *o)
{
    if (o->fsync_every && o->written - o->synced >= o->fsync_every) {
        if (fdatasync(o->fd) < 0 && errno != EINVAL) {
            o->err = errno;
            return -1;
        }
        o->synced = o->written;
    }
    return 0;
}

int rdb_out_flush(struct rdb_out *o)
{
    if (o->err)
        return -1;
    if (o->fd < 0 || o->len == 0)
        return 0;
    out_crc_update(o);
    if (write_all(o, o->buf, o->len) < 0)
        return -1;
    o->len = o->crc_pos = 0;
    return out_sync_maybe(o);
}

int rdb_w_raw(struct rdb_out *o, const void *p, size_t n)
{
    if (o->err)
        return -1;
    if (o->fd < 0) {
        if (n > o->cap - o->len) {
            if (n > SIZE_MAX - o->len) {
                o->err = ENOMEM;
                return -1;
            }
            size_t nc = hk_grow_cap(o->cap, o->len + n, 256, 1);
            o->buf = hk_realloc(o->buf, nc);
            o->cap = nc;
        }
        memcpy(o->buf + o->len, p, n);
        o->len += n;
        o->written += n;
        return 0;
    }
    if (o->len + n > o->cap && rdb_out_flush(o) < 0)
        return -1;
    if (n >= o->cap) {
        /* Big block: straight to the file (the buffer is empty now). */
        if (o->checksum)
            o->crc = crc64(o->crc, p, n);
        if (write_all(o, p, n) < 0)
            return -1;
        o->written += n;
        return out_sync_maybe(o);
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    o->written += n;
    return 0;
}

int rdb_w_type(struct rdb_out *o, unsigned char t)
{
    if (rdb_w_raw(o, &t, 1) < 0)
        return -1;
    if (o->pending_key) {
        const char *k = o->pending_key;
        o->pending_key = NULL;
        return rdb_w_str(o, k, o->pending_klen);
    }
    return 0;
}

int rdb_w_len(struct rdb_out *o, uint64_t len)
{
    unsigned char b[9];
    if (len < 64) {
        b[0] = (unsigned char)len;
        return rdb_w_raw(o, b, 1);
    }
    if (len < 16384) {
        b[0] = (unsigned char)(0x40 | (len >> 8));
        b[1] = (unsigned char)len;
        return rdb_w_raw(o, b, 2);
    }
    if (len <= UINT32_MAX) {
        b[0] = RDB_32BITLEN;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        return rdb_w_raw(o, b, 5);
    }
    b[0] = RDB_64BITLEN;
    for (int i = 0; i < 8; i++)
        b[1 + i] = (unsigned char)(len >> (56 - 8 * i));
    return rdb_w_raw(o, b, 9);
}

/* The integer encodings of v (8, 16 or 32 bits); 0 if it does not fit. */
static size_t enc_int(long long v, unsigned char *b)
{
    if (v >= INT8_MIN && v <= INT8_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT8;
        b[1] = (unsigned char)(v & 0xff);
        return 2;
    }
    if (v >= INT16_MIN && v <= INT16_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT16;
        b[1] = (unsigned char)(v & 0xff);
        b[2] = (unsigned char)((v >> 8) & 0xff);
        return 3;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
        b[0] = (RDB_ENCVAL << 6) | RDB_ENC_INT32;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (unsigned char)(((unsigned long long)v >> (8 * i)) & 0xff);
        return 5;
    }
    return 0;
}

/* Raw or LZF (when o->compress and it saves at least 4 bytes, as Redis). */
static int w_str_nointenc(struct rdb_out *o, const void *s, size_t n)
{
    if (o->compress && n > 20) {
        size_t cap = n - 4;
        unsigned char stackbuf[1024], *buf = cap <= sizeof(stackbuf) ? stackbuf : hk_malloc(cap);
        size_t c = lzf_compress(s, n, buf, cap);
        int r = 1;
        if (c) {
            unsigned char t = (RDB_ENCVAL << 6) | RDB_ENC_LZF;
            r = (rdb_w_raw(o, &t, 1) < 0 || rdb_w_len(o, c) < 0 || rdb_w_len(o, n) < 0 || rdb_w_raw(o, buf, c) < 0)
                    ? -1
                    : 0;
        }
        if (buf != stackbuf)
            hk_free(buf);
        if (r <= 0)
            return r;
    }
    if (rdb_w_len(o, n) < 0)
        return -1;
    return n ? rdb_w_raw(o, s, n) : 0;
}

int rdb_w_blob(struct rdb_out *o, const void *s, size_t n)
{
    return w_str_nointenc(o, s, n);
}

int rdb_w_str(struct rdb_out *o, const void *s, size_t n)
{
    if (n > 0 && n <= 11) {
        long long v;
        unsigned char b[5];
        size_t k;
        if (str_to_ll(s, n, &v) && (k = enc_int(v, b)) != 0)
            return rdb_w_raw(o, b, k);
    }
    return w_str_nointenc(o, s, n);
}

int rdb_w_ll_str(struct rdb_out *o, long long v)
{
    unsigned char b[5];
    size_t k = enc_int(v, b);
    if (k)
        return rdb_w_raw(o, b, k);
    char buf[32];
    int n = ll_to_str(buf, v);
    if (rdb_w_len(o, (uint64_t)n) < 0)
        return -1;
    return rdb_w_raw(o, buf, (size_t)n);
}

int rdb_w_double_bin(struct rdb_out *o, double d)
{
    unsigned char b[8];
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    return rdb_w_raw(o, b, 8);
}

int rdb_w_millis(struct rdb_out *o, long long ms)
{
    unsigned char b[8];
    uint64_t u = (uint64_t)ms;
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    return rdb_w_raw(o, b, 8);
}

/* ============================================================ source === */

unsigned long long rdb_sanitizations;
_Atomic unsigned long long *rdb_keys_done;

void rdb_in_init_fd(struct rdb_in *in, int fd)
{
    memset(in, 0, sizeof(*in));
    in->fd = fd;
    in->cap = IN_BUF;
    in->buf = hk_malloc(in->cap);
    in->mem = in->buf;
    in->checksum = 1;
    in->version = RDB_VERSION_MAX;
    in->fd_start = lseek(fd, 0, SEEK_CUR);
    struct stat sb;
    in->fsize = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && in->fd_start >= 0 ? (long long)sb.st_size : -1;
}

void rdb_in_init_mem(struct rdb_in *in, const void *p, size_t n)
{
    memset(in, 0, sizeof(*in));
    in->fd = -1;
    in->mem = p;
    in->len = n;
    in->checksum = 1;
    in->version = RDB_VERSION_MAX;
    in->fd_start = -1;
    in->fsize = -1;
}

void rdb_in_free(struct rdb_in *in)
{
    if (in->fd >= 0 && in->fd_start >= 0)
        (void)lseek(in->fd, in->fd_start + (off_t)rdb_in_offset(in), SEEK_SET);
    hk_free(in->buf);
    in->buf = NULL;
    in->mem = NULL;
    in->len = in->pos = in->crc_pos = 0;
}

static void in_crc_update(struct rdb_in *in)
{
    if (in->checksum && in->pos > in->crc_pos)
        in->crc = crc64(in->crc, in->mem + in->crc_pos, in->pos - in->crc_pos);
    in->crc_pos = in->pos;
}

uint64_t rdb_in_crc(struct rdb_in *in)
{
    in_crc_update(in);
    return in->crc;
}

static void vfail_at(struct rdb_in *in, unsigned long long off, const char *fmt, va_list ap)
{
    char msg[200];
    if (in->failed)
        return;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    snprintf(in->err, sizeof(in->err), "%s at offset %llu", msg, off);
    in->failed = 1;
}

void rdb_in_fail(struct rdb_in *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(in, rdb_in_offset(in), fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 3, 4))) static void fail_at(struct rdb_in *in, unsigned long long off, const char *fmt,
                                                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail_at(in, off, fmt, ap);
    va_end(ap);
}

static void fail_short(struct rdb_in *in, int rerr)
{
    if (rerr)
        rdb_in_fail(in, "Read error: %s", strerror(rerr));
    else
        rdb_in_fail(in, "Unexpected end of file (the file is truncated)");
}

/* Make at least need bytes (need <= cap) available at mem + pos: 0 / -1. */
static int in_fill(struct rdb_in *in, size_t need)
{
    if (in->len - in->pos >= need)
        return 0;
    if (in->fd < 0) {
        fail_short(in, 0);
        return -1;
    }
    in_crc_update(in);
    size_t keep = in->len - in->pos;
    memmove(in->buf, in->buf + in->pos, keep);
    in->base += in->pos;
    in->pos = in->crc_pos = 0;
    in->len = keep;
    while (in->len < need) {
        ssize_t r = read(in->fd, in->buf + in->len, in->cap - in->len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            fail_short(in, errno);
            return -1;
        }
        if (r == 0) {
            fail_short(in, 0);
            return -1;
        }
        in->len += (size_t)r;
    }
    return 0;
}

int rdb_r_raw(struct rdb_in *in, void *p, size_t n)
{
    if (in->failed)
        return -1;
    if (n == 0)
        return 0;
    if (in->fd < 0 || n <= in->cap / 2) {
        if (in_fill(in, n) < 0)
            return -1;
        memcpy(p, in->mem + in->pos, n);
        in->pos += n;
        return 0;
    }
    /* A big read on an fd: what is buffered, then straight into p. */
    size_t have = in->len - in->pos;
    if (have >= n) { /* the buffer already holds all of it */
        memcpy(p, in->mem + in->pos, n);
        in->pos += n;
        return 0;
    }
    memcpy(p, in->mem + in->pos, have);
    in->pos = in->len;
    in_crc_update(in);
    in->base += in->len;
    in->pos = in->len = in->crc_pos = 0;
    size_t got = have;
    while (got < n) {
        ssize_t r = read(in->fd, (char *)p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            in->base += got - have;
            fail_short(in, errno);
            return -1;
        }
        if (r == 0) {
            in->base += got - have;
            fail_short(in, 0);
            return -1;
        }
        got += (size_t)r;
    }
    if (in->checksum)
        in->crc = crc64(in->crc, (char *)p + have, n - have);
    in->base += n - have;
    return 0;
}

int rdb_r_type(struct rdb_in *in, int *t)
{
    unsigned char b;
    if (rdb_r_raw(in, &b, 1) < 0)
        return -1;
    *t = b;
    return 0;
}

int rdb_r_len(struct rdb_in *in, uint64_t *len, int *is_encoded)
{
    unsigned char b[8];
    if (is_encoded)
        *is_encoded = 0;
    if (rdb_r_raw(in, b, 1) < 0)
        return -1;
    int kind = (b[0] & 0xc0) >> 6;
    if (kind == RDB_ENCVAL) {
        if (!is_encoded) {
            rdb_in_fail(in, "Unexpected encoded length 0x%02x", b[0]);
            return -1;
        }
        *is_encoded = 1;
        *len = b[0] & 0x3f;
        return 0;
    }
    if (kind == RDB_6BITLEN) {
        *len = b[0] & 0x3f;
        return 0;
    }
    if (kind == RDB_14BITLEN) {
        unsigned char c;
        if (rdb_r_raw(in, &c, 1) < 0)
            return -1;
        *len = (uint64_t)(b[0] & 0x3f) << 8 | c;
        return 0;
    }
    if (b[0] == RDB_32BITLEN) {
        if (rdb_r_raw(in, b, 4) < 0)
            return -1;
        *len = (uint64_t)b[0] << 24 | (uint64_t)b[1] << 16 | (uint64_t)b[2] << 8 | b[3];
        return 0;
    }
    if (b[0] == RDB_64BITLEN) {
        if (rdb_r_raw(in, b, 8) < 0)
            return -1;
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | b[i];
        *len = v;
        return 0;
    }
    rdb_in_fail(in, "Unknown length encoding 0x%02x", b[0]);
    return -1;
}

/* Bytes left in the source when known (memory, or a regular file): the
 * guard against allocating what a corrupt length claims. */
int rdb_in_room(struct rdb_in *in, uint64_t n)
{
    if (in->fd < 0)
        return n <= in->len - in->pos;
    if (in->fsize >= 0) {
        unsigned long long off = (unsigned long long)in->fd_start + rdb_in_offset(in);
        return (unsigned long long)in->fsize >= off && n <= (unsigned long long)in->fsize - off;
    }
    return n <= (1ULL << 40);
}

uint64_t rdb_in_left(struct rdb_in *in)
{
    if (in->fd < 0)
        return in->len - in->pos;
    if (in->fsize >= 0) {
        unsigned long long off = (unsigned long long)in->fd_start + rdb_in_offset(in);
        return (unsigned long long)in->fsize >= off ? (unsigned long long)in->fsize - off : 0;
    }
    return UINT64_MAX;
}

int rdb_check_count(struct rdb_in *in, uint64_t n, unsigned minsz, const char *what)
{
    uint64_t left = rdb_in_left(in);
    if (minsz == 0)
        minsz = 1;
    if (left != UINT64_MAX && n > left / minsz) {
        rdb_in_fail(in, "Unexpected end of file (the file is truncated): %s count %llu, %llu bytes left", what,
                    (unsigned long long)n, (unsigned long long)left);
        return -1;
    }
    return 0;
}

int rdb_r_count(struct rdb_in *in, uint64_t *n, unsigned minsz, const char *what)
{
    if (rdb_r_len(in, n, NULL) < 0)
        return -1;
    return rdb_check_count(in, *n, minsz, what);
}

size_t rdb_presize(struct rdb_in *in, uint64_t n)
{
    uint64_t left = rdb_in_left(in);
    if (n > left)
        n = left;
    return n > RDB_PRESIZE_MAX ? (size_t)RDB_PRESIZE_MAX : (size_t)n;
}

int rdb_r_lzf_head(struct rdb_in *in, uint64_t *clen, uint64_t *ulen)
{
    if (rdb_r_len(in, clen, NULL) < 0 || rdb_r_len(in, ulen, NULL) < 0)
        return -1;
    if (!rdb_in_room(in, *clen)) {
        fail_short(in, 0);
        return -1;
    }
    if (*clen == 0 || *ulen == 0 || *ulen / LZF_MAX_RATIO > *clen || *ulen > RDB_MAX_STRING) {
        rdb_in_fail(in, "Invalid LZF lengths (compressed %llu, original %llu)", (unsigned long long)*clen,
                    (unsigned long long)*ulen);
        return -1;
    }
    return 0;
}

int rdb_r_lzf_body(struct rdb_in *in, uint64_t clen, void *dst, uint64_t ulen)
{
    size_t got;
    if (in->failed)
        return -1;
    if (in->fd < 0 || clen <= in->cap / 2) {
        /* Straight from the source's buffer. */
        if (in_fill(in, clen) < 0)
            return -1;
        got = lzf_decompress(in->mem + in->pos, clen, dst, ulen);
        if (got == ulen)
            in->pos += clen;
    } else {
        unsigned char *c = hk_malloc(clen);
        if (rdb_r_raw(in, c, clen) < 0) {
            hk_free(c);
            return -1;
        }
        got = lzf_decompress(c, clen, dst, ulen);
        hk_free(c);
    }
    if (got != ulen) {
        rdb_in_fail(in, "Invalid LZF compressed string");
        return -1;
    }
    return 0;
}

unsigned char *rdb_r_str(struct rdb_in *in, size_t *lenp)
{
    uint64_t len;
    int enc;
    if (rdb_r_len(in, &len, &enc) < 0)
        return NULL;
    return rdb_r_str_rest(in, len, enc, lenp);
}

unsigned char *rdb_r_str_rest(struct rdb_in *in, uint64_t len, int enc, size_t *lenp)
{
    if (enc) {
        unsigned char b[4];
        long long v;
        switch (len) {
        case RDB_ENC_INT8:
            if (rdb_r_raw(in, b, 1) < 0)
                return NULL;
            v = (int8_t)b[0];
            break;
        case RDB_ENC_INT16:
            if (rdb_r_raw(in, b, 2) < 0)
                return NULL;
            v = (int16_t)(uint16_t)(b[0] | b[1] << 8);
            break;
        case RDB_ENC_INT32:
            if (rdb_r_raw(in, b, 4) < 0)
                return NULL;
            v = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
            break;
        case RDB_ENC_LZF: {
            uint64_t clen, ulen;
            if (rdb_r_lzf_head(in, &clen, &ulen) < 0)
                return NULL;
            unsigned char *u = hk_malloc(ulen + 1);
            if (rdb_r_lzf_body(in, clen, u, ulen) < 0) {
                hk_free(u);
                return NULL;
            }
            u[ulen] = 0;
            *lenp = ulen;
            return u;
        }
        default:
            rdb_in_fail(in, "Unknown RDB string encoding type %llu", (unsigned long long)len);
            return NULL;
        }
        char tmp[24];
        int n = ll_to_str(tmp, v);
        unsigned char *s = hk_malloc((size_t)n + 1);
        memcpy(s, tmp, (size_t)n);
        s[n] = 0;
        *lenp = (size_t)n;
        return s;
    }
    if (!rdb_in_room(in, len)) {
        fail_short(in, 0);
        return NULL;
    }
    if (len > RDB_MAX_STRING) {
        rdb_in_fail(in, "String of %llu bytes is too long", (unsigned long long)len);
        return NULL;
    }
    unsigned char *s = hk_malloc(len + 1);
    if (rdb_r_raw(in, s, len) < 0) {
        hk_free(s);
        return NULL;
    }
    s[len] = 0;
    *lenp = len;
    return s;
}

int rdb_r_skip_str(struct rdb_in *in)
{
    size_t n;
    unsigned char *s = rdb_r_str(in, &n);
    if (!s)
        return -1;
    hk_free(s);
    return 0;
}

int rdb_r_double_bin(struct rdb_in *in, double *d)
{
    unsigned char b[8];
    if (rdb_r_raw(in, b, 8) < 0)
        return -1;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | b[i];
    memcpy(d, &u, 8);
    return 0;
}

int rdb_r_double_str(struct rdb_in *in, double *d)
{
    unsigned char l;
    char buf[256];
    if (rdb_r_raw(in, &l, 1) < 0)
        return -1;
    switch (l) {
    case 253: *d = 0.0 / 0.0; return 0;
    case 254: *d = 1.0 / 0.0; return 0;
    case 255: *d = -1.0 / 0.0; return 0;
    default:
        if (rdb_r_raw(in, buf, l) < 0)
            return -1;
        buf[l] = 0;
        char *end;
        *d = strtod(buf, &end);
        if (l == 0 || *end) {
            rdb_in_fail(in, "Invalid double value");
            return -1;
        }
        return 0;
    }
}

int rdb_r_millis(struct rdb_in *in, long long *ms)
{
    unsigned char b[8];
    if (rdb_r_raw(in, b, 8) < 0)
        return -1;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | b[i];
    *ms = (long long)u;
    return 0;
}

/* ============================================================= files === */

int rdb_lru_mode(void)
{
    if (db_lfu_mode)
        return 2;
    const char *p = cfg.maxmemory_policy;
    return p && strstr(p, "lru") ? 1 : 0;
}

void rdb_save_opts_from_cfg(struct rdb_save_opts *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->version = __atomic_load_n(&cfg.rdb_version, __ATOMIC_RELAXED);
    if (opt->version < 10 || opt->version > RDB_VERSION_MAX)
        opt->version = RDB_VERSION_DEFAULT;
    opt->compress = __atomic_load_n(&cfg.rdbcompression, __ATOMIC_RELAXED);
    opt->checksum = __atomic_load_n(&cfg.rdbchecksum, __ATOMIC_RELAXED);
    opt->key_save_delay_us = __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED);
    opt->repl = rdb_repl_mark;
}

struct rdb_repl_mark rdb_repl_mark;

static int w_aux_n(struct rdb_out *o, const char *k, const char *v, size_t vl)
{
    if (rdb_w_type(o, RDB_OPCODE_AUX) < 0 || rdb_w_str(o, k, strlen(k)) < 0)
        return -1;
    return rdb_w_str(o, v, vl);
}

static int w_aux(struct rdb_out *o, const char *k, const char *v)
{
    return w_aux_n(o, k, v, strlen(v));
}

static int w_aux_ll(struct rdb_out *o, const char *k, long long v)
{
    char b[32];
    int n = ll_to_str(b, v);
    return w_aux_n(o, k, b, (size_t)n);
}

/* ------------------------------------------------ function libraries --- */
/* Set before main() (script/function.c's constructor) and never changed:
 * read without synchronisation. */
static const struct rdb_fn_hooks *fn_hooks;

void rdb_set_fn_hooks(const struct rdb_fn_hooks *h)
{
    fn_hooks = h;
}

int rdb_fn_foreach_lib(int (*cb)(void *arg, const char *code, size_t len), void *arg)
{
    return fn_hooks ? fn_hooks->foreach_lib(cb, arg) : 0;
}

int rdb_fn_load_lib(const char *code, size_t len, int replace, char *err, size_t errlen)
{
    if (fn_hooks)
        return fn_hooks->load_lib(code, len, replace, err, errlen);
    snprintf(err, errlen, "functions are not available");
    return -1;
}

void rdb_fn_flush_libs(void)
{
    if (fn_hooks)
        fn_hooks->flush_libs();
}

/* Libraries of an async load, installed when its dataset is swapped in. */
struct rdb_libs {
    size_t n, cap;
    unsigned char **code;
    size_t *len;
};

struct rdb_libs *rdb_libs_new(void)
{
    return hk_calloc(sizeof(struct rdb_libs));
}

void rdb_libs_add(struct rdb_libs *l, unsigned char *code, size_t len)
{
    if (l->n == l->cap) {
        l->cap = hk_grow_cap(l->cap, l->n + 1, 8, sizeof(*l->code));
        l->code = hk_realloc(l->code, hk_array_bytes(l->cap, sizeof(*l->code)));
        l->len = hk_realloc(l->len, hk_array_bytes(l->cap, sizeof(*l->len)));
    }
    l->code[l->n] = code;
    l->len[l->n++] = len;
}

int rdb_libs_install(struct rdb_libs *l, char *err, size_t errlen)
{
    rdb_fn_flush_libs();
    for (size_t i = 0; i < l->n; i++)
        if (rdb_fn_load_lib((char *)l->code[i], l->len[i], 0, err, errlen) < 0)
            return -1;
    return 0;
}

void rdb_libs_free(struct rdb_libs *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        hk_free(l->code[i]);
    hk_free(l->code);
    hk_free(l->len);
    hk_free(l);
}

static int save_fn_cb(void *arg, const char *code, size_t len)
{
    struct rdb_out *o = arg;
    if (rdb_w_type(o, RDB_OPCODE_FUNCTION2) < 0)
        return -1;
    return rdb_w_str(o, code, len);
}

static int save_db(struct rdb_out *o, const struct rdb_save_opts *opt, int dbi, int lru)
{
    struct db *d = ks.dbs[dbi];
    unsigned long long n = 0, ne = 0;
    if (!d)
        return 0;
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = d->t[s];
        if (t) {
            n += t->used;
            ne += t->expires;
        }
    }
    if (n == 0)
        return 0;
    if (rdb_w_type(o, RDB_OPCODE_SELECTDB) < 0 || rdb_w_len(o, (uint64_t)dbi) < 0 ||
        rdb_w_type(o, RDB_OPCODE_RESIZEDB) < 0 || rdb_w_len(o, n) < 0 || rdb_w_len(o, ne) < 0)
        return -1;
    for (unsigned s = 0; s < NSLOTS; s++) {
        struct table *t = d->t[s];
        if (!t)
            continue;
        for (uint32_t i = 0; i < t->cap; i++) {
            if (!table_full(t, i))
                continue;
            struct entry *e = table_get(t, i);
            long long exp = entry_expire(e);
            if (exp >= 0 && (rdb_w_type(o, RDB_OPCODE_EXPIRETIME_MS) < 0 || rdb_w_millis(o, exp) < 0))
                return -1;
            if (lru == 1) {
                uint64_t idle = ((uint64_t)lru_clock_now - entry_lru(e)) & 0xffffff;
                if (rdb_w_type(o, RDB_OPCODE_IDLE) < 0 || rdb_w_len(o, idle) < 0)
                    return -1;
            } else if (lru == 2) {
                unsigned char f = (unsigned char)lfu_decr_and_return(entry_lru(e));
                if (rdb_w_type(o, RDB_OPCODE_FREQ) < 0 || rdb_w_raw(o, &f, 1) < 0)
                    return -1;
            }
            /* The value's type byte comes before the key: rdb_w_type
             * writes the pending key right after it. */
            o->pending_key = entry_key(e);
            o->pending_klen = entry_klen(e);
            if (rdb_save_value(o, e, opt->version) < 0)
                return -1;
            if (rdb_keys_done) /* the parent reads it for INFO (snapshot.c) */
                atomic_fetch_add_explicit(rdb_keys_done, 1, memory_order_relaxed);
            if (opt->key_save_delay_us)
                usleep((useconds_t)opt->key_save_delay_us);
        }
    }
    return 0;
}

int rdb_save(struct rdb_out *o, const struct rdb_save_opts *opt)
{
    char hdr[16];
    int ver = opt->version;
    if (ver < 1 || ver > RDB_VERSION_MAX)
        ver = RDB_VERSION_DEFAULT;
    o->compress = opt->compress;
    o->checksum = opt->checksum;
    snprintf(hdr, sizeof(hdr), "REDIS%04d", ver);
    if (rdb_w_raw(o, hdr, 9) < 0)
        return -1;
    if (w_aux(o, "redis-ver", REDIS_COMPAT_VERSION) < 0 || w_aux_ll(o, "redis-bits", 64) < 0 ||
        w_aux_ll(o, "ctime", (long long)time(NULL)) < 0 || w_aux_ll(o, "used-mem", (long long)mem_used()) < 0 ||
        w_aux_ll(o, "aof-base", opt->aof_preamble ? 1 : 0) < 0)
        return -1;
    if (opt->repl.id[0] &&
        (w_aux_ll(o, "repl-stream-db", opt->repl.stream_db) < 0 || w_aux(o, "repl-id", opt->repl.id) < 0 ||
         w_aux_ll(o, "repl-offset", opt->repl.offset) < 0))
        return -1;
    if (!opt->no_functions && rdb_fn_foreach_lib(save_fn_cb, o) < 0)
        return -1;
    int lru = rdb_lru_mode();
    for (int i = 0; i < ks.ndb && !opt->no_data; i++)
        if (save_db(o, opt, i, lru) < 0)
            return -1;
    if (rdb_w_type(o, RDB_OPCODE_EOF) < 0)
        return -1;
    uint64_t crc = rdb_out_crc(o);
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(crc >> (8 * i));
    return rdb_w_raw(o, b, 8);
}

static void dir_of(const char *path, char *dir, size_t cap)
{
    const char *sl = strrchr(path, '/');
    if (!sl) {
        snprintf(dir, cap, ".");
    } else if (sl == path) {
        snprintf(dir, cap, "/");
    } else {
        size_t n = (size_t)(sl - path);
        if (n >= cap)
            n = cap - 1;
        memcpy(dir, path, n);
        dir[n] = 0;
    }
}

int rdb_save_file(const char *path, const struct rdb_save_opts *opt, char *err, size_t errlen)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 64];
    dir_of(path, dir, sizeof(dir));
    snprintf(tmp, sizeof(tmp), "%s/temp-%d.rdb", dir, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "Failed opening the temp RDB file %s (in server root dir %s) for saving: %s", tmp,
                 dir, strerror(errno));
        return -1;
    }
    struct rdb_out o;
    rdb_out_init_fd(&o, fd);
    if (__atomic_load_n(&cfg.rdb_save_incremental_fsync, __ATOMIC_RELAXED))
        o.fsync_every = 4 * 1024 * 1024;
    int r = rdb_save(&o, opt);
    if (r == 0)
        r = rdb_out_flush(&o);
    int e = o.err;
    rdb_out_free(&o);
    if (r == 0 && fsync(fd) < 0) {
        r = -1;
        e = errno;
    }
    if (close(fd) < 0 && r == 0) {
        r = -1;
        e = errno;
    }
    if (r < 0) {
        snprintf(err, errlen, "Write error saving DB on disk: %s", strerror(e ? e : EIO));
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) < 0) {
        snprintf(err, errlen, "Error moving temp DB file %s on the final destination %s: %s", tmp, path,
                 strerror(errno));
        unlink(tmp);
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* ----------------------------------------------------------- loading --- */

void rdb_apply_lru(struct entry *e, long long idle, int freq)
{
    if (db_lfu_mode) {
        if (freq >= 0)
            entry_set_lru(e, (lfu_init() & ~(uint32_t)0xff) | (uint32_t)freq);
    } else if (idle >= 0) {
        entry_set_lru(e, (uint32_t)(((long long)lru_clock_now - idle) & 0xffffff));
    }
}

int rdb_load_in(struct rdb_in *in, struct rdb_load_stats *st)
{
    char hdr[10];
    int dbi = 0;
    long long expire = -1, idle = -1;
    int freq = -1;
    long long now = in->now_ms ? in->now_ms : time_ms();
    long long t_last = mono_us();
    memset(st, 0, sizeof(*st));
    /* Loading a file or a full sync: deep sanitization counts only with
     * sanitize-dump-payload yes ("clients" skips loading, as Redis). */
    in->deep = __atomic_load_n(&cfg.sanitize_dump_payload, __ATOMIC_RELAXED) == 1;
    if (rdb_r_raw(in, hdr, 9) < 0)
        return -1;
    hdr[9] = 0;
    if (memcmp(hdr, "REDIS", 5) != 0) {
        rdb_in_fail(in, "Wrong signature trying to load DB from file");
        return -1;
    }
    int ver = atoi(hdr + 5);
    int digits = 1;
    for (int i = 5; i < 9; i++)
        digits &= hdr[i] >= '0' && hdr[i] <= '9';
    if (!digits || ver < RDB_VERSION_MIN_READ || ver > RDB_VERSION_MAX) {
        rdb_in_fail(in, "Can't handle RDB format version %s", hdr + 5);
        return -1;
    }
    in->version = st->version = ver;
    for (;;) {
        int t;
        if (rdb_r_type(in, &t) < 0)
            return -1;
        switch (t) {
        case RDB_OPCODE_EXPIRETIME: {
            unsigned char b[4];
            if (rdb_r_raw(in, b, 4) < 0)
                return -1;
            expire = (long long)(int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                          (uint32_t)b[3] << 24) *
                     1000;
            continue;
        }
        case RDB_OPCODE_EXPIRETIME_MS:
            if (rdb_r_millis(in, &expire) < 0)
                return -1;
            continue;
        case RDB_OPCODE_FREQ: {
            unsigned char f;
            if (rdb_r_raw(in, &f, 1) < 0)
                return -1;
            freq = f;
            continue;
        }
        case RDB_OPCODE_IDLE: {
            uint64_t v;
            if (rdb_r_len(in, &v, NULL) < 0)
                return -1;
            idle = (long long)(v & 0xffffff);
            continue;
        }
        case RDB_OPCODE_EOF:
            goto eof;
        case RDB_OPCODE_SELECTDB: {
            uint64_t v;
            if (rdb_r_len(in, &v, NULL) < 0)
                return -1;
            if (v >= (uint64_t)ks.ndb) {
                rdb_in_fail(in, "FATAL: Data file was created with a Redis server configured to handle more than "
                                "%d databases. Exiting",
                            ks.ndb);
                return -1;
            }
            dbi = (int)v;
            continue;
        }
        case RDB_OPCODE_RESIZEDB: {
            uint64_t a, b;
            if (rdb_r_len(in, &a, NULL) < 0 || rdb_r_len(in, &b, NULL) < 0)
                return -1;
            continue;
        }
        case RDB_OPCODE_SLOT_INFO: {
            uint64_t a;
            for (int i = 0; i < 3; i++)
                if (rdb_r_len(in, &a, NULL) < 0)
                    return -1;
            continue;
        }
        case RDB_OPCODE_AUX: {
            size_t kl, vl;
            unsigned char *k = rdb_r_str(in, &kl), *v = k ? rdb_r_str(in, &vl) : NULL;
            if (!v) {
                hk_free(k);
                return -1;
            }
            if (!strcmp((char *)k, "redis-ver")) {
                snprintf(st->redis_ver, sizeof(st->redis_ver), "%s", (char *)v);
                log_msg(LL_NOTICE, "Loading RDB produced by version %s", (char *)v);
            } else if (!strcmp((char *)k, "ctime")) {
                st->ctime = strtoll((char *)v, NULL, 10);
                long long age = (long long)time(NULL) - st->ctime;
                log_msg(LL_NOTICE, "RDB age %lld seconds", age < 0 ? 0 : age);
            } else if (!strcmp((char *)k, "used-mem")) {
                st->used_mem = strtoll((char *)v, NULL, 10);
                log_msg(LL_NOTICE, "RDB memory usage when created %.2f Mb", (double)st->used_mem / (1024 * 1024));
            } else if (!strcmp((char *)k, "aof-base") || !strcmp((char *)k, "aof-preamble")) {
                st->aof_base = atoi((char *)v) != 0;
            } else if (!strcmp((char *)k, "repl-id")) {
                if (strlen((char *)v) == 40)
                    memcpy(st->repl.id, v, 41);
            } else if (!strcmp((char *)k, "repl-offset")) {
                st->repl.offset = strtoll((char *)v, NULL, 10);
            } else if (!strcmp((char *)k, "repl-stream-db")) {
                long long d = strtoll((char *)v, NULL, 10);
                st->repl.stream_db = d >= 0 && d < ks.ndb ? (int)d : 0;
            } else if (!strcmp((char *)k, "redis-bits") || !strcmp((char *)k, "lua")) {
                /* known, nothing to do */
            } else {
                log_msg(LL_DEBUG, "Unrecognized RDB AUX field: '%s'", (char *)k);
            }
            hk_free(k);
            hk_free(v);
            continue;
        }
        case RDB_OPCODE_MODULE_AUX:
            rdb_in_fail(in, "The RDB file contains AUX module data I can't load: modules are not supported");
            return -1;
        case RDB_OPCODE_FUNCTION_PRE_GA:
            rdb_in_fail(in, "Pre-release function format not supported");
            return -1;
        case RDB_OPCODE_FUNCTION2: {
            size_t cl;
            char ferr[256];
            unsigned long long at = rdb_in_offset(in);
            unsigned char *code = rdb_r_str(in, &cl);
            if (!code)
                return -1;
            if (in->libs) { /* installed at the swap (rdb_libs_install) */
                rdb_libs_add(in->libs, code, cl);
                continue;
            }
            int r = rdb_fn_load_lib((char *)code, cl, in->allow_dup, ferr, sizeof(ferr));
            hk_free(code);
            if (r < 0) {
                fail_at(in, at, "Failed loading library: %s", ferr);
                return -1;
            }
            continue;
        }
        default:
            break;
        }
        /* A key-value pair. */
        if (!rdb_is_object_type(t)) {
            fail_at(in, rdb_in_offset(in) - 1, "Unknown RDB value type %d", t);
            return -1;
        }
        if (t == RDB_TYPE_MODULE_PRE_GA) {
            fail_at(in, rdb_in_offset(in) - 1, "Pre-release module format not supported");
            return -1;
        }
        size_t kl;
        unsigned char *key = rdb_r_str(in, &kl);
        if (!key)
            return -1;
        in->empty_key = 0;
        struct entry *e = rdb_load_value(in, t, (char *)key, kl, expire);
        if (!e) {
            if (!in->failed && in->empty_key) {
                log_msg(LL_WARNING, "rdbLoadObject skipping empty key: %.*s", (int)(kl > 128 ? 128 : kl),
                        (char *)key);
                st->empty++;
                hk_free(key);
                expire = idle = -1;
                freq = -1;
                continue;
            }
            hk_free(key);
            return -1;
        }
        if (expire >= 0 && expire <= now && !db_loading) { /* an AOF base keeps them: its incr files may use them */
            st->expired++;
            if (in->on_expired)
                in->on_expired(in->on_expired_arg, dbi, (const char *)key, kl);
            entry_free(e);
        } else {
            unsigned slot = key_slot((char *)key, kl);
            long idx;
            if (in->shadow) {
                idx = db_shadow_find(in->shadow, dbi, slot, (char *)key, kl);
                if (idx >= 0) {
                    entry_free(e);
                    rdb_in_fail(in, "Duplicate key '%.*s' found in RDB file", (int)(kl > 128 ? 128 : kl), (char *)key);
                    hk_free(key);
                    return -1;
                }
                rdb_apply_lru(e, idle, freq);
                db_shadow_add(in->shadow, dbi, slot, e);
                st->keys++;
                goto next;
            }
            if (db_get_idx(dbi, slot, (char *)key, kl, LK_NOSTATS | LK_NOTOUCH | LK_NOEXPIRE, &idx)) {
                if (in->allow_dup) {
                    rdb_apply_lru(e, idle, freq);
                    db_replace(dbi, slot, idx, e);
                    st->keys++;
                    goto next;
                }
                entry_free(e);
                rdb_in_fail(in, "Duplicate key '%.*s' found in RDB file", (int)(kl > 128 ? 128 : kl), (char *)key);
                hk_free(key);
                return -1;
            }
            rdb_apply_lru(e, idle, freq);
            db_add(dbi, slot, e);
            st->keys++;
        }
    next:
        hk_free(key);
        expire = idle = -1;
        freq = -1;
        long long delay = __atomic_load_n(&cfg.key_load_delay, __ATOMIC_RELAXED);
        if (delay > 0)
            usleep((useconds_t)delay);
        if (((st->keys + st->expired) & 1023) == 0) {
            long long t_now = mono_us();
            if (t_now - t_last >= 2000000) {
                t_last = t_now;
                log_msg(LL_NOTICE, "Loading: %llu keys", st->keys);
            }
        }
    }
eof:
    if (ver >= 5) {
        uint64_t want = rdb_in_crc(in);
        unsigned char b[8];
        if (rdb_r_raw(in, b, 8) < 0)
            return -1;
        uint64_t got = 0;
        for (int i = 7; i >= 0; i--)
            got = got << 8 | b[i];
        if (got == 0) {
            log_msg(LL_WARNING, "RDB file was saved with checksum disabled: no check performed.");
        } else if (__atomic_load_n(&cfg.rdbchecksum, __ATOMIC_RELAXED) && in->checksum && got != want) {
            fail_at(in, rdb_in_offset(in) - 8, "Wrong RDB checksum expected: (%llx) got: (%llx): RDB CRC error", (unsigned long long)got,
                        (unsigned long long)want);
            return -1;
        }
    }
    if (st->empty)
        log_msg(LL_NOTICE, "Done loading RDB, keys loaded: %llu, keys expired: %llu, empty keys skipped: %llu.",
                st->keys, st->expired, st->empty);
    else
        log_msg(LL_NOTICE, "Done loading RDB, keys loaded: %llu, keys expired: %llu.", st->keys, st->expired);
    return 0;
}

int rdb_load_file(const char *path, struct rdb_load_stats *st, char *err, size_t errlen)
{
    return rdb_load_file_flags(path, 0, st, err, errlen);
}

static int load_file(const char *path, int flags, struct rdb_load_stats *st, char *err, size_t errlen,
                     void (*on_expired)(void *, int, const char *, size_t), void *arg);

int rdb_load_file_flags(const char *path, int flags, struct rdb_load_stats *st, char *err, size_t errlen)
{
    return load_file(path, flags, st, err, errlen, NULL, NULL);
}

int rdb_load_file_expired(const char *path, struct rdb_load_stats *st, char *err, size_t errlen,
                          void (*on_expired)(void *arg, int db, const char *key, size_t len), void *arg)
{
    return load_file(path, 0, st, err, errlen, on_expired, arg);
}

static int load_file(const char *path, int flags, struct rdb_load_stats *st, char *err, size_t errlen,
                     void (*on_expired)(void *, int, const char *, size_t), void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            snprintf(err, errlen, "%s", strerror(errno));
            return -2;
        }
        snprintf(err, errlen, "Fatal error loading the DB: %s", strerror(errno));
        return -1;
    }
    struct rdb_in in;
    rdb_in_init_fd(&in, fd);
    in.allow_dup = (flags & RDB_LOAD_ALLOW_DUP) != 0;
    in.on_expired = on_expired;
    in.on_expired_arg = arg;
    int r = rdb_load_in(&in, st);
    if (r < 0)
        snprintf(err, errlen, "%s", in.err);
    rdb_in_free(&in);
    close(fd);
    return r;
}
