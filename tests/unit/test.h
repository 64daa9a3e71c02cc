/* test.h - the unit-test framework shared by the tests in tests/unit: TEST() defines
 * and registers a test function, CHECK/CHECK_EQ/CHECK_MEM report file:line
 * on failure and keep going, test_run_guarded() runs a body in a child
 * process so a hang, crash or runaway allocation fails one test instead of
 * killing the run.  The runner is in test_main.c. */
#ifndef HK_TEST_H
#define HK_TEST_H

#include <stddef.h>

typedef void (*test_fn)(void);

void test_register(const char *name, test_fn fn);
void test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void test_fail_mem(const char *file, int line, const char *what, const void *a, size_t alen,
                   const void *b, size_t blen);
/* Failures seen so far in the running test. */
int test_current_failures(void);

/* Register at load time; tests run sorted by name. */
/* The sanitizer tiers of `make test` run this suite too, several times
 * slower: long randomised tests scale their rounds with TEST_SCALE (a
 * quarter under ASan or TSan). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_SANITIZER 1
#endif
#endif
#ifndef TEST_SANITIZER
#define TEST_SANITIZER 0
#endif
#define TEST_SCALE(n) (TEST_SANITIZER ? ((n) + 3) / 4 : (n))

#define TEST(name)                                                  \
    static void name(void);                                         \
    __attribute__((constructor)) static void name##_register(void)  \
    {                                                               \
        test_register(#name, name);                                 \
    }                                                               \
    static void name(void)

#define CHECK(cond)                                                 \
    do {                                                            \
        if (!(cond))                                                \
            test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);      \
    } while (0)

/* Integer equality (both sides as long long). */
#define CHECK_EQ(a, b)                                                          \
    do {                                                                        \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);         \
        if (check_a_ != check_b_)                                               \
            test_fail(__FILE__, __LINE__, "CHECK_EQ(%s, %s): %lld != %lld", #a, \
                      #b, check_a_, check_b_);                                  \
    } while (0)

/* Byte-string equality; a may hold NULs, b too. */
#define CHECK_MEM(a, alen, b, blen)                                               \
    do {                                                                          \
        size_t check_al_ = (size_t)(alen), check_bl_ = (size_t)(blen);            \
        if (check_al_ != check_bl_ || memcmp((a), (b), check_al_) != 0)           \
            test_fail_mem(__FILE__, __LINE__, #a " == " #b, (a), check_al_, (b),  \
                          check_bl_);                                             \
    } while (0)

/* a (with length) equals the C string b. */
#define CHECK_STR(a, alen, b) CHECK_MEM(a, alen, b, strlen(b))

/* Run fn(arg) in a forked child limited to timeout_s seconds and mem_mb MB
 * of address space.  Returns 0 if it ran to the end without a failed CHECK;
 * otherwise 1, and *why (if not NULL) says what happened ("timed out after
 * 5 s", "killed by signal 11", "1 check(s) failed"). */
int test_run_guarded(void (*fn)(void *), void *arg, unsigned timeout_s, size_t mem_mb,
                     char *why, size_t why_cap);

#endif
