/* rdb_check.c - hotkv-check-rdb <file>: read a snapshot from end to end
 * the way loading would (every value is decoded and validated, nothing is
 * added to a keyspace) and report what it holds: version, aux fields,
 * functions, per-database key counts by type, expires, the checksum.  A
 * broken file is reported with the offset and the problem, what was being
 * read, and exit status 1, as redis-check-rdb does. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "../db/db.h"
#include "../db/object.h"
#include "../base/crc64.h"
#include "rdb.h"

#define NTYPES 8 /* OBJ_STRING .. OBJ_VSET */

struct dbstat {
    unsigned long long keys, expires, expired, by_type[NTYPES], elems, modules;
};

static const char *obj_type_name(int t)
{
    switch (t) {
    case OBJ_STRING: return "string";
    case OBJ_LIST: return "list";
    case OBJ_SET: return "set";
    case OBJ_ZSET: return "zset";
    case OBJ_HASH: return "hash";
    case OBJ_STREAM: return "stream";
    case OBJ_VSET: return "vectorset";
    default: return "other";
    }
}

static int check_fail(struct rdb_in *in, const char *doing, const char *key, size_t klen, int type)
{
    printf("--- RDB ERROR DETECTED ---\n");
    if (in->failed)
        printf("[error] %s\n", in->err);
    else
        printf("[offset %llu] Unknown error\n", rdb_in_offset(in));
    printf("[additional info] While doing: %s\n", doing);
    if (key)
        printf("[additional info] Reading key '%.*s'\n", (int)(klen > 128 ? 128 : klen), key);
    if (type >= 0)
        printf("[additional info] Reading type %d (%s)\n", type, rdb_type_name(type));
    printf("[info] RDB check failed\n");
    return 1;
}

int rdb_check_main(int argc, char **argv)
{
    if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "Usage: %s <rdb-file-name>\n", argv[0]);
        return 1;
    }
    const char *path = argv[1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    printf("[offset 0] Checking RDB file %s\n", path);
    if (fd < 0) {
        printf("--- RDB ERROR DETECTED ---\n[offset 0] Cannot open %s: %s\n[info] RDB check failed\n", path,
               strerror(errno));
        return 1;
    }
    static struct dbstat dbs[MAX_DBS];
    memset(dbs, 0, sizeof(dbs));
    struct rdb_in in;
    rdb_in_init_fd(&in, fd);
    char hdr[10];
    int rc = 0, dbi = 0, nfuncs = 0, maxdb = -1;
    long long expire = -1, now = time_ms();
    unsigned long long total = 0;
    if (rdb_r_raw(&in, hdr, 9) < 0) {
        rc = check_fail(&in, "check-header", NULL, 0, -1);
        goto out;
    }
    hdr[9] = 0;
    int ver = atoi(hdr + 5);
    if (memcmp(hdr, "REDIS", 5) != 0) {
        rdb_in_fail(&in, "Wrong signature trying to load DB from file");
        rc = check_fail(&in, "check-header", NULL, 0, -1);
        goto out;
    }
    if (ver < RDB_VERSION_MIN_READ || ver > RDB_VERSION_MAX) {
        rdb_in_fail(&in, "Can't handle RDB format version %s", hdr + 5);
        rc = check_fail(&in, "check-header", NULL, 0, -1);
        goto out;
    }
    in.version = ver;
    in.now_ms = 1; /* keep every hash field: a checker reports, it does not expire */
    in.skip_modules = 1; /* values of module types we do not know: walked over, as redis-check-rdb */
    printf("[offset 9] RDB version %d\n", ver);
    for (;;) {
        int t;
        unsigned long long at = rdb_in_offset(&in);
        if (rdb_r_type(&in, &t) < 0) {
            rc = check_fail(&in, "read-type", NULL, 0, -1);
            goto out;
        }
        if (t == RDB_OPCODE_EOF)
            break;
        switch (t) {
        case RDB_OPCODE_EXPIRETIME: {
            unsigned char b[4];
            if (rdb_r_raw(&in, b, 4) < 0) {
                rc = check_fail(&in, "read-expire", NULL, 0, -1);
                goto out;
            }
            expire = (long long)(int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                          (uint32_t)b[3] << 24) *
                     1000;
            continue;
        }
        case RDB_OPCODE_EXPIRETIME_MS:
            if (rdb_r_millis(&in, &expire) < 0) {
                rc = check_fail(&in, "read-expire", NULL, 0, -1);
                goto out;
            }
            continue;
        case RDB_OPCODE_FREQ: {
            unsigned char f;
            if (rdb_r_raw(&in, &f, 1) < 0) {
                rc = check_fail(&in, "read-freq", NULL, 0, -1);
                goto out;
            }
            continue;
        }
        case RDB_OPCODE_IDLE: {
            uint64_t v;
            if (rdb_r_len(&in, &v, NULL) < 0) {
                rc = check_fail(&in, "read-idle", NULL, 0, -1);
                goto out;
            }
            continue;
        }
        case RDB_OPCODE_SELECTDB: {
            uint64_t v;
            if (rdb_r_len(&in, &v, NULL) < 0) {
                rc = check_fail(&in, "read-db", NULL, 0, -1);
                goto out;
            }
            if (v >= MAX_DBS) {
                rdb_in_fail(&in, "Database number %llu out of range (at most %d)", (unsigned long long)v, MAX_DBS);
                rc = check_fail(&in, "read-db", NULL, 0, -1);
                goto out;
            }
            dbi = (int)v;
            if (dbi > maxdb)
                maxdb = dbi;
            printf("[offset %llu] Selecting DB ID %d\n", at, dbi);
            continue;
        }
        case RDB_OPCODE_RESIZEDB: {
            uint64_t a, b;
            if (rdb_r_len(&in, &a, NULL) < 0 || rdb_r_len(&in, &b, NULL) < 0) {
                rc = check_fail(&in, "read-resizedb", NULL, 0, -1);
                goto out;
            }
            printf("[offset %llu] Size hint: %llu keys, %llu expires\n", at, (unsigned long long)a,
                   (unsigned long long)b);
            continue;
        }
        case RDB_OPCODE_SLOT_INFO: {
            uint64_t a;
            for (int i = 0; i < 3; i++)
                if (rdb_r_len(&in, &a, NULL) < 0) {
                    rc = check_fail(&in, "read-slot-info", NULL, 0, -1);
                    goto out;
                }
            continue;
        }
        case RDB_OPCODE_AUX: {
            size_t kl, vl;
            unsigned char *k = rdb_r_str(&in, &kl), *v = k ? rdb_r_str(&in, &vl) : NULL;
            if (!v) {
                hk_free(k);
                rc = check_fail(&in, "read-aux", NULL, 0, -1);
                goto out;
            }
            printf("[offset %llu] AUX FIELD %s = '%.*s'\n", at, (char *)k, (int)(vl > 200 ? 200 : vl), (char *)v);
            hk_free(k);
            hk_free(v);
            continue;
        }
        case RDB_OPCODE_FUNCTION2: {
            size_t cl;
            unsigned char *code = rdb_r_str(&in, &cl);
            if (!code) {
                rc = check_fail(&in, "read-function", NULL, 0, -1);
                goto out;
            }
            const char *nl = memchr(code, '\n', cl);
            int hl = nl ? (int)(nl - (char *)code) : (int)(cl > 80 ? 80 : cl);
            printf("[offset %llu] Function library: %.*s (%zu bytes)\n", at, hl, (char *)code, cl);
            nfuncs++;
            hk_free(code);
            continue;
        }
        case RDB_OPCODE_FUNCTION_PRE_GA:
            rdb_in_fail(&in, "Pre-release function format not supported");
            rc = check_fail(&in, "read-function", NULL, 0, -1);
            goto out;
        case RDB_OPCODE_MODULE_AUX:
            rdb_in_fail(&in, "Module auxiliary data is not supported");
            rc = check_fail(&in, "read-module-aux", NULL, 0, -1);
            goto out;
        default: break;
        }
        if (!rdb_is_object_type(t)) {
            rdb_in_fail(&in, "Unknown RDB value type %d", t);
            rc = check_fail(&in, "read-type", NULL, 0, -1);
            goto out;
        }
        size_t kl;
        unsigned char *key = rdb_r_str(&in, &kl);
        if (!key) {
            rc = check_fail(&in, "read-key", NULL, 0, t);
            goto out;
        }
        struct entry *e = rdb_load_value(&in, t, (char *)key, kl, -1);
        if (!e && (in.failed || !in.empty_key)) {
            rc = check_fail(&in, "read-object-value", (char *)key, kl, t);
            hk_free(key);
            goto out;
        }
        if (e) {
            struct dbstat *d = &dbs[dbi];
            d->keys++;
            total++;
            if (e->type < NTYPES)
                d->by_type[e->type]++;
            d->elems += e->type == OBJ_STRING ? 1 : obj_len(e);
            if (expire >= 0) {
                d->expires++;
                if (expire <= now)
                    d->expired++;
            }
            entry_free(e);
        } else if (in.empty_key == 3) {
            struct dbstat *d = &dbs[dbi];
            d->keys++;
            d->modules++;
            total++;
            printf("[offset %llu] Module value of type '%s' in key '%.*s': not checked (unknown module type; "
                   "loading this file will fail)\n",
                   at, in.module_name, (int)(kl > 128 ? 128 : kl), (char *)key);
            if (expire >= 0) {
                d->expires++;
                if (expire <= now)
                    d->expired++;
            }
        } else {
            printf("[offset %llu] Empty key '%.*s' (skipped when loading)\n", at, (int)(kl > 128 ? 128 : kl),
                   (char *)key);
        }
        hk_free(key);
        if (dbi > maxdb)
            maxdb = dbi;
        expire = -1;
    }
    if (ver >= 5) {
        uint64_t want = rdb_in_crc(&in);
        unsigned char b[8];
        unsigned long long at = rdb_in_offset(&in);
        if (rdb_r_raw(&in, b, 8) < 0) {
            rc = check_fail(&in, "read-checksum", NULL, 0, -1);
            goto out;
        }
        uint64_t got = 0;
        for (int i = 7; i >= 0; i--)
            got = got << 8 | b[i];
        if (got == 0) {
            printf("[offset %llu] RDB file was saved with checksum disabled: no check performed.\n", at);
        } else if (got != want) {
            snprintf(in.err, sizeof(in.err), "RDB CRC error: expected %016llx, computed %016llx at offset %llu",
                     (unsigned long long)got, (unsigned long long)want, at);
            in.failed = 1;
            rc = check_fail(&in, "check-sum", NULL, 0, -1);
            goto out;
        } else {
            printf("[offset %llu] Checksum OK\n", at);
        }
    }
    {
        char probe;
        if (read(fd, &probe, 1) == 1 || in.pos < in.len)
            printf("[offset %llu] Note: the file has extra bytes after the end of the RDB\n", rdb_in_offset(&in));
    }
    printf("[offset %llu] \\o/ RDB looks OK! \\o/\n", rdb_in_offset(&in));
    for (int i = 0; i <= maxdb; i++) {
        struct dbstat *d = &dbs[i];
        if (!d->keys)
            continue;
        printf("[info] db %d: %llu keys (", i, d->keys);
        int first = 1;
        for (int t = 0; t < NTYPES; t++)
            if (d->by_type[t]) {
                printf("%s%s %llu", first ? "" : ", ", obj_type_name(t), d->by_type[t]);
                first = 0;
            }
        if (d->modules)
            printf("%sunknown module %llu", first ? "" : ", ", d->modules);
        printf("), %llu elements, %llu expires, %llu already expired\n", d->elems, d->expires, d->expired);
    }
    printf("[info] %llu keys read\n", total);
    printf("[info] %d function libraries\n", nfuncs);
out:
    rdb_in_free(&in);
    close(fd);
    return rc;
}
