/* test_main.c - the unit-test runner: the registry behind TEST(), the
 * failure reporting behind CHECK*, the fork-based guard, and main(), which
 * runs every registered test (or those whose name contains argv[1]) and
 * ends with "N passed, M failed", exiting 1 if any failed. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"
#include "test.h"

#define MAX_TESTS 1024
/* Exit status of a guarded child whose CHECKs failed (1 is taken by the
 * sanitizers). */
#define CHILD_CHECK_FAILED 99

struct test_case {
    const char *name;
    test_fn fn;
};

static struct test_case tests[MAX_TESTS];
static int ntests;
static int cur_failures;
static const char *cur_name = "?";

void test_register(const char *name, test_fn fn)
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "too many tests (raise MAX_TESTS)\n");
        exit(2);
    }
    tests[ntests].name = name;
    tests[ntests].fn = fn;
    ntests++;
}

int test_current_failures(void)
{
    return cur_failures;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stdout, "%s:%d: %s: ", file, line, cur_name);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    cur_failures++;
}

/* Print up to 80 bytes, C-escaped. */
static void print_escaped(const void *p, size_t n)
{
    const unsigned char *s = p;
    fputc('"', stdout);
    for (size_t i = 0; i < n && i < 80; i++) {
        if (s[i] == '\r')
            fputs("\\r", stdout);
        else if (s[i] == '\n')
            fputs("\\n", stdout);
        else if (s[i] == '"' || s[i] == '\\')
            fprintf(stdout, "\\%c", s[i]);
        else if (s[i] < 32 || s[i] >= 127)
            fprintf(stdout, "\\x%02x", s[i]);
        else
            fputc(s[i], stdout);
    }
    fputc('"', stdout);
    if (n > 80)
        fprintf(stdout, "...(%zu bytes)", n);
}

void test_fail_mem(const char *file, int line, const char *what, const void *a, size_t alen,
                   const void *b, size_t blen)
{
    fprintf(stdout, "%s:%d: %s: CHECK_MEM(%s): ", file, line, cur_name, what);
    print_escaped(a, alen);
    fputs(" != ", stdout);
    print_escaped(b, blen);
    fputc('\n', stdout);
    cur_failures++;
}

int test_run_guarded(void (*fn)(void *), void *arg, unsigned timeout_s, size_t mem_mb,
                     char *why, size_t why_cap)
{
    int status;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        if (why)
            snprintf(why, why_cap, "fork failed");
        return 1;
    }
    if (pid == 0) {
        /* The limit is on top of what the process already maps. */
        struct rlimit rl;
        unsigned long vm_pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f) {
            if (fscanf(f, "%lu", &vm_pages) != 1)
                vm_pages = 0;
            fclose(f);
        }
        rl.rlim_cur = rl.rlim_max =
            (rlim_t)vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)mem_mb * 1024 * 1024;
        setrlimit(RLIMIT_AS, &rl);
        signal(SIGALRM, SIG_DFL);
        alarm(timeout_s);
        cur_failures = 0;
        fn(arg);
        fflush(stdout);
        _exit(cur_failures ? CHILD_CHECK_FAILED : 0);
    }
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (why) {
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            snprintf(why, why_cap, "timed out after %u s", timeout_s);
        else if (WIFSIGNALED(status))
            snprintf(why, why_cap, "killed by signal %d (%s)", WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
        else if (WEXITSTATUS(status) == CHILD_CHECK_FAILED)
            snprintf(why, why_cap, "check(s) failed in the child");
        else
            snprintf(why, why_cap, "exited with status %d (a sanitizer report?)",
                     WEXITSTATUS(status));
    }
    return 1;
}

static int cmp_test(const void *a, const void *b)
{
    return strcmp(((const struct test_case *)a)->name, ((const struct test_case *)b)->name);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    server_wire(); /* the hooks between layers, as the server has them */
    qsort(tests, (size_t)ntests, sizeof(tests[0]), cmp_test);
    for (int i = 0; i < ntests; i++) {
        if (filter && !strstr(tests[i].name, filter))
            continue;
        cur_name = tests[i].name;
        cur_failures = 0;
        tests[i].fn();
        if (cur_failures) {
            failed++;
            printf("FAIL %s\n", tests[i].name);
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
