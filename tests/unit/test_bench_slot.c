/* test_bench_slot.c - unit tests for hotkv-benchmark's --cluster key slots
 * (src/tools/benchmark/slot.c): CRC16-XMODEM against its check value and
 * CLUSTER KEYSLOT results of Redis, hash tags, and the parser of -MOVED /
 * -ASK redirects. */
#include <string.h>

#include "test.h"
#include "tools/benchmark/slot.h"

static unsigned slot_of(const char *k)
{
    return bm_key_slot(k, strlen(k));
}

TEST(bench_slot_crc16_check_value)
{
    CHECK_EQ(bm_crc16("123456789", 9), 0x31C3);
    CHECK_EQ(bm_crc16("", 0), 0);
    CHECK_EQ(slot_of("123456789"), 12739);
}

TEST(bench_slot_keyslot_known)
{
    /* CLUSTER KEYSLOT of Redis 7.0 */
    CHECK_EQ(slot_of("foo"), 12182);
    CHECK_EQ(slot_of("bar"), 5061);
    CHECK_EQ(slot_of("hello"), 866);
    CHECK_EQ(slot_of("key:000000000000"), bm_key_slot("key:000000000000", 16));
    CHECK(slot_of("a") < 16384);
}

TEST(bench_slot_hash_tags)
{
    CHECK_EQ(slot_of("{user1000}.following"), slot_of("{user1000}.followers"));
    CHECK_EQ(slot_of("{user1000}.following"), slot_of("user1000"));
    CHECK_EQ(slot_of("foo{bar}zap"), slot_of("bar"));
    /* only the first {...} counts */
    CHECK_EQ(slot_of("foo{bar}{zap}"), slot_of("bar"));
    /* empty tag: the whole key */
    CHECK_EQ(slot_of("foo{}{bar}"), bm_crc16("foo{}{bar}", 10) & 16383);
    CHECK_EQ(slot_of("{}foo"), bm_crc16("{}foo", 5) & 16383);
    /* no closing brace: the whole key */
    CHECK_EQ(slot_of("foo{bar"), bm_crc16("foo{bar", 7) & 16383);
    /* '{' after the '}' */
    CHECK_EQ(slot_of("foo}{bar}"), slot_of("bar"));
    /* {{bar}} hashes "{bar" */
    CHECK_EQ(slot_of("{{bar}}"), slot_of("{bar"));
}

TEST(bench_slot_parse_redirect)
{
    unsigned slot = 0;
    int port = 0;
    char host[64];
    const char *m = "MOVED 3999 127.0.0.1:6381";
    CHECK_EQ(bm_parse_redirect(m, strlen(m), &slot, host, sizeof(host), &port), BM_REDIR_MOVED);
    CHECK_EQ(slot, 3999);
    CHECK_EQ(port, 6381);
    CHECK_STR(host, strlen(host), "127.0.0.1");
    m = "ASK 16383 [::1]:7000";
    CHECK_EQ(bm_parse_redirect(m, strlen(m), &slot, host, sizeof(host), &port), BM_REDIR_ASK);
    CHECK_EQ(slot, 16383);
    CHECK_EQ(port, 7000);
    CHECK_STR(host, strlen(host), "::1");
    m = "MOVED 12 :7001"; /* unknown endpoint: same host */
    CHECK_EQ(bm_parse_redirect(m, strlen(m), &slot, host, sizeof(host), &port), BM_REDIR_MOVED);
    CHECK_EQ(host[0], 0);
    CHECK_EQ(port, 7001);
    m = "MOVED 12 ?:7001";
    CHECK_EQ(bm_parse_redirect(m, strlen(m), &slot, host, sizeof(host), &port), BM_REDIR_MOVED);
    CHECK_EQ(host[0], 0);
    const char *bad[] = {"ERR unknown", "MOVED", "MOVED 16384 h:1", "MOVED x h:1",
                         "MOVED 1 h", "MOVED 1 h:", "MOVED 1 h:99999", "TRYAGAIN x",
                         "CLUSTERDOWN The cluster is down"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_EQ(bm_parse_redirect(bad[i], strlen(bad[i]), &slot, host, sizeof(host), &port),
                 BM_REDIR_NONE);
}
