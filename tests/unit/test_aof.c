/* test_aof.c - the AOF manifest parser (persist/aof.c: aof_manifest_load):
 * Redis 7's "file <name> seq <n> type <b|h|i>" lines, quoted names,
 * comments, and the errors that refuse a manifest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist/aof.h"
#include "test.h"

static int load_text(const char *text, struct aof_manifest *am, char *err, size_t errlen)
{
    char path[] = "/tmp/hotkv-test-manifest-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return -2;
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) {
        close(fd);
        unlink(path);
        return -2;
    }
    close(fd);
    int rc = aof_manifest_load(path, am, err, errlen);
    unlink(path);
    return rc;
}

TEST(aof_manifest_basic)
{
    struct aof_manifest am;
    char err[256];
    int rc = load_text("file appendonly.aof.3.base.rdb seq 3 type b\n"
                       "file appendonly.aof.2.base.aof seq 2 type h\n"
                       "# a comment\n"
                       "file appendonly.aof.5.incr.aof seq 5 type i\n"
                       "file appendonly.aof.6.incr.aof seq 6 type i\n",
                       &am, err, sizeof(err));
    CHECK_EQ(rc, 0);
    if (rc)
        return;
    CHECK(am.base.name && !strcmp(am.base.name, "appendonly.aof.3.base.rdb"));
    CHECK_EQ(am.base.seq, 3);
    CHECK_EQ(am.base_seq, 3);
    CHECK_EQ(am.nhist, 1);
    CHECK_EQ(am.nincr, 2);
    CHECK(!strcmp(am.incr[1].name, "appendonly.aof.6.incr.aof"));
    CHECK_EQ(am.incr_seq, 6);
    aof_manifest_free(&am);
}

TEST(aof_manifest_quoted_and_extra_keys)
{
    struct aof_manifest am;
    char err[256];
    /* Quoted names (spaces, escapes) and unknown key/value pairs (forward
     * compatibility) are accepted; keys in any order. */
    int rc = load_text("type b seq 1 file \"my aof\\x41.aof.1.base.rdb\"\n"
                       "file 'x y.aof.1.incr.aof' seq 1 type i future value\n",
                       &am, err, sizeof(err));
    CHECK_EQ(rc, 0);
    if (rc)
        return;
    CHECK(!strcmp(am.base.name, "my aofA.aof.1.base.rdb"));
    CHECK_EQ(am.nincr, 1);
    CHECK(!strcmp(am.incr[0].name, "x y.aof.1.incr.aof"));
    aof_manifest_free(&am);
}

TEST(aof_manifest_errors)
{
    static const char *bad[] = {
        "",                                                           /* empty */
        "file a seq 1\n",                                             /* too few words */
        "file a seq 1 type b extra\n",                                /* odd count */
        "file a seq 1 type b\nfile b seq 2 type b\n",                 /* two bases */
        "file a seq 2 type i\nfile b seq 2 type i\n",                 /* seq not increasing */
        "file dir/a seq 1 type b\n",                                  /* a path */
        "file a seq 1 type x\n",                                      /* unknown type */
        "file a seq 0 type i\n",                                      /* no seq */
        "file \"unterminated seq 1 type b\n",                         /* quotes */
        "   \n",                                                      /* blank line */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct aof_manifest am;
        char err[256] = "";
        int rc = load_text(bad[i], &am, err, sizeof(err));
        if (rc != -1)
            test_fail(__FILE__, __LINE__, "manifest %zu accepted: %s", i, bad[i]);
        CHECK(err[0] != 0);
    }
}
