/* aof_check.c - hotkv-check-aof: check an append-only file and optionally
 * cut a truncated tail.
 *
 *   hotkv-check-aof [--fix] [--yes] [--truncate-to-timestamp <unix-secs>] <file.manifest | file.aof>
 *
 * A manifest (Redis 7 multi-part AOF): the base file (an RDB, or commands)
 * and every incr file listed, in order; only the last file may be cut.  A
 * single file (Redis < 7): commands, possibly after an RDB preamble.
 *
 * Commands are checked for RESP framing ("*<argc>", then "$<len>", payload,
 * CRLF), MULTI/EXEC pairing, and #-annotations.  The report names the offset
 * and line of the first problem, and how far the file is valid.  --fix cuts
 * the file there (a MULTI without its EXEC is cut before the MULTI), after
 * asking y/N on the terminal unless --yes is given.  --truncate-to-timestamp
 * cuts the last file at the first #TS annotation later than the given time
 * (aof-timestamp-enabled yes).  Exit status: 0 valid (or fixed), 1 not. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aof.h"
#include "rdb.h"

enum { CK_OK = 0, CK_EMPTY, CK_TRUNCATED, CK_TS_TRUNCATED };

static int opt_fix, opt_yes;
static long long opt_ts;                /* --truncate-to-timestamp (0: none) */
static char problem[512];
static long long problem_at;
static long long cur_line;

static void fail_at(long long off, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_at(long long off, const char *fmt, ...)
{
    if (problem[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof(problem), fmt, ap);
    va_end(ap);
    problem_at = off;
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(1);
}

/* "<c><number>\r\n": 1 and *v, 0 at EOF or on a problem (recorded). */
static int read_prefixed(FILE *f, char c, long long *v)
{
    char buf[1100];
    long long at = ftello(f);
    if (!fgets(buf, sizeof(buf), f)) {
        fail_at(at, "end of file where a '%c' line was expected", c);
        return 0;
    }
    if (buf[0] != c) {
        fail_at(at, "expected '%c' at the start of a line, found '%c' (0x%02x)", c, buf[0], (unsigned char)buf[0]);
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtoll(buf + 1, &end, 10);
    if (errno || end == buf + 1) {
        fail_at(at, "bad number after '%c'", c);
        return 0;
    }
    if (end[0] != '\r' || end[1] != '\n') {
        fail_at(at, "the '%c' line does not end with CRLF", c);
        return 0;
    }
    cur_line++;
    return 1;
}

/* One bulk string; the first 16 bytes are kept in head (NUL-terminated). */
static int read_bulk(FILE *f, char *head, size_t headcap)
{
    long long len;
    if (!read_prefixed(f, '$', &len))
        return 0;
    long long at = ftello(f);
    if (len < 0 || len > LLONG_MAX / 2) {
        fail_at(at, "bulk length %lld out of range", len);
        return 0;
    }
    char chunk[65536];
    long long left = len;
    size_t hn = 0;
    while (left > 0) {
        size_t want = left > (long long)sizeof(chunk) ? sizeof(chunk) : (size_t)left;
        size_t got = fread(chunk, 1, want, f);
        if (hn + 1 < headcap) {
            size_t k = got < headcap - 1 - hn ? got : headcap - 1 - hn;
            memcpy(head + hn, chunk, k);
            hn += k;
        }
        if (got < want) {
            fail_at(at, "expected %lld bytes of payload, the file ends after %lld", len, len - left + (long long)got);
            return 0;
        }
        left -= (long long)got;
    }
    head[hn] = 0;
    char crlf[2];
    at = ftello(f);
    if (fread(crlf, 1, 2, f) != 2) {
        fail_at(at, "end of file where the CRLF after a payload was expected");
        return 0;
    }
    if (crlf[0] != '\r' || crlf[1] != '\n') {
        fail_at(at, "expected CRLF after a payload, found %02x%02x", (unsigned char)crlf[0], (unsigned char)crlf[1]);
        return 0;
    }
    cur_line++;
    return 1;
}

/* One command; *multi counts an open MULTI. */
static int check_command(FILE *f, const char *name, int *multi)
{
    long long argc;
    long long at = ftello(f);
    if (!read_prefixed(f, '*', &argc))
        return 0;
    if (argc < 1) {
        fail_at(at, "a command with %lld arguments", argc);
        return 0;
    }
    for (long long i = 0; i < argc; i++) {
        char head[16];
        if (!read_bulk(f, head, sizeof(head)))
            return 0;
        if (i == 0) {
            if (!strcasecmp(head, "multi")) {
                if ((*multi)++) {
                    fail_at(at, "MULTI inside a MULTI in %s", name);
                    return 0;
                }
            } else if (!strcasecmp(head, "exec")) {
                if (--(*multi)) {
                    fail_at(at, "EXEC without MULTI in %s", name);
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* The RDB part of a base file (or of an old preamble AOF): walk the
 * opcodes and values without building anything, and check the CRC.  Leaves
 * f just after the RDB.  1 ok, 0 broken (printed). */
static int check_rdb_part(FILE *f, const char *name)
{
    int fd = fileno(f);
    if (lseek(fd, 0, SEEK_SET) < 0)
        return 0;
    struct rdb_in in;
    rdb_in_init_fd(&in, fd);
    unsigned char hdr[9];
    unsigned long long keys = 0;
    if (rdb_r_raw(&in, hdr, 9) < 0 || memcmp(hdr, "REDIS", 5) != 0) {
        printf("%s: not an RDB file (bad header)\n", name);
        rdb_in_free(&in);
        return 0;
    }
    char vbuf[5] = {(char)hdr[5], (char)hdr[6], (char)hdr[7], (char)hdr[8], 0};
    int version = atoi(vbuf);
    in.version = version;
    if (version < 1 || version > RDB_VERSION_MAX) {
        printf("%s: unsupported RDB version %d\n", name, version);
        rdb_in_free(&in);
        return 0;
    }
    int ok = 0;
    for (;;) {
        int t;
        if (rdb_r_type(&in, &t) < 0)
            break;
        if (t == RDB_OPCODE_EOF) {
            uint64_t crc = rdb_in_crc(&in);
            unsigned char cb[8];
            if (version >= 5) {
                if (rdb_r_raw(&in, cb, 8) < 0)
                    break;
                uint64_t want = 0;
                for (int i = 7; i >= 0; i--)
                    want = (want << 8) | cb[i];
                if (want != 0 && want != crc) {
                    rdb_in_fail(&in, "RDB CRC mismatch (file %016llx, computed %016llx)", (unsigned long long)want,
                                (unsigned long long)crc);
                    break;
                }
            }
            ok = 1;
            break;
        }
        uint64_t a, b;
        unsigned char raw[8];
        switch (t) {
        case RDB_OPCODE_AUX:
            if (rdb_r_skip_str(&in) < 0 || rdb_r_skip_str(&in) < 0)
                goto out;
            continue;
        case RDB_OPCODE_RESIZEDB:
            if (rdb_r_len(&in, &a, NULL) < 0 || rdb_r_len(&in, &b, NULL) < 0)
                goto out;
            continue;
        case RDB_OPCODE_SELECTDB:
        case RDB_OPCODE_IDLE:
            if (rdb_r_len(&in, &a, NULL) < 0)
                goto out;
            continue;
        case RDB_OPCODE_FREQ:
            if (rdb_r_raw(&in, raw, 1) < 0)
                goto out;
            continue;
        case RDB_OPCODE_EXPIRETIME_MS:
            if (rdb_r_raw(&in, raw, 8) < 0)
                goto out;
            continue;
        case RDB_OPCODE_EXPIRETIME:
            if (rdb_r_raw(&in, raw, 4) < 0)
                goto out;
            continue;
        case RDB_OPCODE_FUNCTION2:
            if (rdb_r_skip_str(&in) < 0)
                goto out;
            continue;
        case RDB_OPCODE_SLOT_INFO:
            if (rdb_r_len(&in, &a, NULL) < 0 || rdb_r_len(&in, &a, NULL) < 0 || rdb_r_len(&in, &a, NULL) < 0)
                goto out;
            continue;
        case RDB_OPCODE_MODULE_AUX:
        case RDB_OPCODE_FUNCTION_PRE_GA:
            rdb_in_fail(&in, "unsupported RDB opcode %d", t);
            goto out;
        default:
            break;
        }
        if (!rdb_is_object_type(t) || t == RDB_TYPE_MODULE_PRE_GA) {
            rdb_in_fail(&in, "unknown RDB value type %d", t);
            goto out;
        }
        unsigned long long elems;
        if (rdb_r_skip_str(&in) < 0 || rdb_skip_value(&in, t, &elems) < 0)
            goto out;
        keys++;
    }
out:
    if (!ok) {
        printf("RDB part of %s is broken: %s\n", name, in.failed ? in.err : "unexpected error");
        rdb_in_free(&in);
        return 0;
    }
    printf("RDB part of %s is valid: version %d, %llu keys, %llu bytes\n", name, version, keys, rdb_in_offset(&in));
    rdb_in_free(&in); /* seeks fd just after the RDB */
    fseeko(f, lseek(fd, 0, SEEK_CUR), SEEK_SET);
    return 1;
}

static int ask_yes(void)
{
    if (opt_yes)
        return 1;
    char buf[16];
    printf("Continue? [y/N]: ");
    fflush(stdout);
    return fgets(buf, sizeof(buf), stdin) && (buf[0] == 'y' || buf[0] == 'Y');
}

static int check_file(const char *name, const char *path, int last, int preamble)
{
    FILE *f = fopen(path, "r+");
    if (!f)
        die("Cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) < 0)
        die("Cannot stat %s: %s", path, strerror(errno));
    long long size = (long long)st.st_size;
    if (size == 0) {
        fclose(f);
        return CK_EMPTY;
    }
    problem[0] = 0;
    cur_line = 1;
    if (preamble && !check_rdb_part(f, name))
        die("The RDB part of %s is broken, it cannot be fixed by cutting its tail.", name);
    int multi = 0;
    long long ok_up_to = ftello(f), ok_line = 1;
    for (;;) {
        if (!multi) {
            ok_up_to = ftello(f);
            ok_line = cur_line;
        }
        int c = fgetc(f);
        if (c == EOF)
            break;
        ungetc(c, f);
        if (c == '#') {
            char buf[1100];
            long long at = ftello(f);
            if (!fgets(buf, sizeof(buf), f))
                break;
            cur_line++;
            if (opt_ts && !strncmp(buf, "#TS:", 4)) {
                long long ts = strtoll(buf + 4, NULL, 10);
                if (ts > opt_ts) {
                    if (at == 0)
                        die("%s has nothing before timestamp %lld", name, opt_ts);
                    if (!last)
                        die("Cannot cut %s at timestamp %lld: it is not the last file of the AOF", name, opt_ts);
                    if (ftruncate(fileno(f), at) < 0)
                        die("Cannot truncate %s: %s", name, strerror(errno));
                    fclose(f);
                    printf("%s: cut at offset %lld (timestamp %lld)\n", name, at, ts);
                    return CK_TS_TRUNCATED;
                }
            }
            continue;
        }
        if (c != '*') {
            fail_at(ftello(f), "expected '*' or '#' at the start of a command, found 0x%02x", (unsigned)c);
            break;
        }
        if (!check_command(f, name, &multi))
            break;
    }
    if (!problem[0] && multi)
        fail_at(ftello(f), "the file ends inside a MULTI (no EXEC)");
    if (problem[0])
        printf("0x%016llx (offset %lld): %s\n", (unsigned long long)problem_at, problem_at, problem);
    long long diff = size - ok_up_to;
    if (opt_ts && diff == 0) {
        fclose(f);
        printf("%s: nothing after timestamp %lld\n", name, opt_ts);
        return CK_OK;
    }
    printf("%s: size %lld, valid up to offset %lld (line %lld), %lld bytes after it\n", name, size, ok_up_to, ok_line,
           diff);
    /* The same in redis-check-aof's summary form, which scripts and
     * Redis's own tests read. */
    printf("AOF analyzed: filename=%s, size=%lld, ok_up_to=%lld, ok_up_to_line=%lld, diff=%lld\n", name, size,
           ok_up_to, ok_line, diff);
    if (diff > 0) {
        if (!opt_fix)
            die("%s is not valid. Use --fix to cut it at offset %lld.", name, ok_up_to);
        if (!last)
            die("Cannot cut %s: it is not the last file of the AOF", name);
        printf("This cuts %s from %lld to %lld bytes (%lld bytes dropped).\n", name, size, ok_up_to, diff);
        if (!ask_yes())
            die("Aborting...");
        if (ftruncate(fileno(f), ok_up_to) < 0)
            die("Cannot truncate %s: %s", name, strerror(errno));
        fclose(f);
        printf("Successfully truncated AOF %s\n", name);
        return CK_TRUNCATED;
    }
    fclose(f);
    return CK_OK;
}

static void report(int rc, const char *name, const char *what)
{
    if (rc == CK_OK)
        printf("%s %s is valid\n", what, name);
    else if (rc == CK_EMPTY)
        printf("%s %s is empty\n", what, name);
    else if (rc == CK_TRUNCATED)
        printf("%s %s was cut at its last valid command\n", what, name);
    else if (rc == CK_TS_TRUNCATED)
        printf("%s %s was cut at timestamp %lld\n", what, name, opt_ts);
}

static int is_rdb(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("Cannot open %s: %s", path, strerror(errno));
    char sig[5];
    int r = fread(sig, 1, 5, f) == 5 && !memcmp(sig, "REDIS", 5);
    fclose(f);
    return r;
}

static int is_manifest(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("Cannot open %s: %s", path, strerror(errno));
    char buf[1100];
    int r = 0;
    while (fgets(buf, sizeof(buf), f)) {
        if (buf[0] == '#')
            continue;
        if (!strncmp(buf, "file", 4))
            r = 1;
        break;
    }
    fclose(f);
    return r;
}

int aof_check_main(int argc, char **argv)
{
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--fix"))
            opt_fix = 1;
        else if (!strcmp(argv[i], "--yes") || !strcmp(argv[i], "-y"))
            opt_yes = 1;
        else if (!strcmp(argv[i], "--truncate-to-timestamp") && i + 1 < argc) {
            char *end;
            errno = 0;
            opt_ts = strtoll(argv[++i], &end, 10);
            if (errno || *end || opt_ts <= 0)
                die("Invalid timestamp, aborting...");
        } else if (argv[i][0] == '-' || file) {
            file = NULL;
            break;
        } else
            file = argv[i];
    }
    if (!file) {
        printf("Usage: %s [--fix] [--yes] [--truncate-to-timestamp <unix-time>] <file.manifest|file.aof>\n", argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (is_manifest(file)) {
        char tmp[PATH_MAX + 1];
        snprintf(tmp, sizeof(tmp), "%s", file);
        const char *dir = dirname(tmp);
        struct aof_manifest am;
        char err[600];
        printf("Checking a multi-part AOF (manifest %s)\n", file);
        if (aof_manifest_load(file, &am, err, sizeof(err)) < 0)
            die("Bad manifest: %s", err);
        int total = (am.base.name ? 1 : 0) + am.nincr, num = 0;
        char path[PATH_MAX * 2];
        if (am.base.name) {
            snprintf(path, sizeof(path), "%s/%s", dir, am.base.name);
            int pre = is_rdb(path);
            printf("Checking the base file %s (%s)\n", am.base.name, pre ? "RDB" : "commands");
            report(check_file(am.base.name, path, ++num == total, pre), am.base.name, "Base AOF");
        }
        for (int i = 0; i < am.nincr; i++) {
            snprintf(path, sizeof(path), "%s/%s", dir, am.incr[i].name);
            printf("Checking the incr file %s\n", am.incr[i].name);
            report(check_file(am.incr[i].name, path, ++num == total, 0), am.incr[i].name, "Incr AOF");
        }
        aof_manifest_free(&am);
        printf("The manifest and every AOF file it lists are valid\n");
        return 0;
    }
    int pre = is_rdb(file);
    printf("Checking a single-file AOF%s\n", pre ? " with an RDB preamble" : "");
    report(check_file(file, file, 1, pre), file, "AOF");
    return 0;
}
