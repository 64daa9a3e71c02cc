/* test_resp_enc.c - persist/resp_enc.h, the RESP multibulk encoding the
 * AOF and the replication stream write: ull_digits, put_count, cmd_bytes
 * and put_cmd against snprintf, for every length below 100000 and each
 * side of every power of ten. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "persist/resp_enc.h"
#include "test.h"

static int count_ok(unsigned long long v)
{
    char buf[32], ref[32];
    char *e = put_count(buf, '$', v);
    int n = snprintf(ref, sizeof(ref), "$%llu\r\n", v);
    if (e - buf != n || memcmp(buf, ref, (size_t)n) != 0)
        return 0;
    return ull_digits(v) == n - 3;
}

TEST(resp_enc_counts)
{
    for (unsigned long long u = 0; u < 100000; u++) {
        if (!count_ok(u)) {
            test_fail(__FILE__, __LINE__, "put_count/ull_digits(%llu) wrong", u);
            return;
        }
    }
    for (unsigned long long p = 10;; p *= 10) {
        for (unsigned long long u = p - 2; u <= p + 2; u++)
            CHECK(count_ok(u));
        if (p > ULLONG_MAX / 10)
            break;
    }
    CHECK(count_ok(ULLONG_MAX));
}

TEST(resp_enc_command)
{
    static char big[12345];
    memset(big, 'x', sizeof(big));
    const char *av[4] = {"SET", "key:1", big, ""};
    size_t al[4] = {3, 5, sizeof(big), 0};
    static char out[13000], ref[13000];
    size_t n = cmd_bytes(4, al);
    char *e = put_cmd(out, 4, av, al);
    CHECK_EQ((long long)(e - out), (long long)n);
    int r = snprintf(ref, sizeof(ref), "*4\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$12345\r\n%.*s\r\n$0\r\n\r\n",
                     (int)sizeof(big), big);
    CHECK_EQ((long long)r, (long long)n);
    CHECK(memcmp(out, ref, n) == 0);
}
