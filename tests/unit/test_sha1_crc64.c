/* test_sha1_crc64.c - the script cache's SHA-1 against FIPS 180 / RFC 3174
 * vectors (and the two Redis's redis.sha1hex test uses), incremental
 * updates across block boundaries, and CRC-64/Jones against its check
 * value and Redis's own test vectors. */
#include <stdio.h>
#include <string.h>

#include "base/crc64.h"
#include "base/sha1.h"
#include "test.h"

static void check_hex(const char *in, size_t len, const char *want)
{
    char got[41];
    sha1_hex(got, in, len);
    CHECK_STR(got, strlen(got), want);
}

TEST(test_sha1_vectors)
{
    check_hex("", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    check_hex("abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
    check_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    check_hex("Pizza & Mandolino", 17, "74822d82031af7493c20eefa13bd07ec4fada82f");
    check_hex("The quick brown fox jumps over the lazy dog", 43, "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST(test_sha1_million_a_incremental)
{
    struct sha1_ctx s;
    unsigned char d[20];
    char chunk[1000];
    static const unsigned char want[20] = {0x34, 0xaa, 0x97, 0x3c, 0xd4, 0xc4, 0xda, 0xa4, 0xf6, 0x1e,
                                           0xeb, 0x2b, 0xdb, 0xad, 0x27, 0x31, 0x65, 0x34, 0x01, 0x6f};
    memset(chunk, 'a', sizeof(chunk));
    sha1_init(&s);
    /* Odd chunk sizes cross block boundaries at every offset. */
    size_t done = 0, step = 1;
    while (done < 1000000) {
        size_t n = step > 1000000 - done ? 1000000 - done : step;
        if (n > sizeof(chunk))
            n = sizeof(chunk);
        sha1_update(&s, chunk, n);
        done += n;
        step = step * 7 % 997 + 1;
    }
    sha1_final(&s, d);
    CHECK_MEM(d, 20, want, 20);
}

TEST(test_sha1_padding_lengths)
{
    /* Lengths around 56 and 64 bytes exercise one- and two-block padding. */
    static const struct {
        size_t n;
        const char *hex;
    } v[] = {
        {55, "cef734ba81a024479e09eb5a75b6ddae62e6abf1"},  {56, "901305367c259952f4e7af8323f480d59f81335b"},
        {63, "0ddc4e0cccd9a12850deb5abb0853a4425559fec"},  {64, "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163"},
        {119, "4300320394f7ee239bcdce7d3b8bcee173a0cd5c"}, {120, "ceb2821639c4b6dcb10bce0e522ca2e608ce056d"},
    };
    char buf[128];
    memset(buf, 'x', sizeof(buf));
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        check_hex(buf, v[i].n, v[i].hex);
}

TEST(test_crc64_vectors)
{
    CHECK(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caull);
    CHECK(crc64(0, "", 0) == 0);
    const char *li = "This is a test of the emergency broadcast system.";
    /* Incremental equals one-shot. */
    uint64_t a = crc64(0, li, strlen(li));
    uint64_t b = crc64(crc64(0, li, 10), li + 10, strlen(li) - 10);
    CHECK(a == b);
    CHECK(a == 0x42153dc5db99540full);
}
