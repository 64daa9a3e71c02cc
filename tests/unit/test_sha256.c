/* test_sha256.c - ACL password hashes (base/sha256.c) against FIPS 180-4
 * vectors, with lengths around the padding boundaries (55, 56, 63, 64,
 * 119 bytes) where the length field spills into a second block. */
#include <string.h>

#include "base/sha256.h"
#include "test.h"

static void check(const char *in, const char *want)
{
    char got[65];
    sha256_hex(in, strlen(in), got);
    CHECK_STR(got, strlen(got), want);
}

static void check_hex_a(size_t n, const char *want)
{
    char buf[1000], got[65];
    memset(buf, 'a', n);
    sha256_hex(buf, n, got);
    CHECK_STR(got, strlen(got), want);
}

TEST(test_sha256_vectors)
{
    check("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    check("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    check_hex_a(63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
    check_hex_a(64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
    check_hex_a(119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
    check_hex_a(1000, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}
