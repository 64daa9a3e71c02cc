/* test_fuzz_corpus.c - replays every input in tests/fuzz/corpus/ (seeds and
 * saved fuzzer findings) through fuzz_resp_one(), the body of the libFuzzer
 * target, so each stays a regression test.  Each input runs in a child
 * process with a time and memory limit: a hang or a broken invariant fails
 * the test for that file and the run goes on.  Paths are relative to the
 * current directory, which is the repository root under `make unit`. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_resp_harness.h"
#include "test.h"

#define CORPUS_DIR "tests/fuzz/corpus"

struct corpus_input {
    uint8_t *data;
    size_t size;
};

static void replay_one(void *arg)
{
    struct corpus_input *in = arg;
    fuzz_resp_one(in->data, in->size);
}

static int read_file(const char *path, struct corpus_input *in)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (!f)
        return 0;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 0;
    }
    in->size = (size_t)n;
    in->data = malloc(in->size ? in->size : 1);
    if (in->size && fread(in->data, 1, in->size, f) != in->size) {
        free(in->data);
        fclose(f);
        return 0;
    }
    fclose(f);
    return 1;
}

TEST(test_fuzz_corpus_replays_clean)
{
    DIR *d = opendir(CORPUS_DIR);
    struct dirent *de;
    int files = 0;
    if (!d) {
        test_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)", CORPUS_DIR);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        char path[512], why[128];
        struct corpus_input in;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", CORPUS_DIR, de->d_name);
        if (!read_file(path, &in)) {
            test_fail(__FILE__, __LINE__, "cannot read %s", path);
            continue;
        }
        files++;
        if (test_run_guarded(replay_one, &in, 10, 512, why, sizeof(why)))
            test_fail(__FILE__, __LINE__, "%s: %s", path, why);
        free(in.data);
    }
    closedir(d);
    CHECK(files >= 20);
}

TEST(test_fuzz_corpus_harness_short_inputs)
{
    /* Inputs shorter than the control header, and a header alone. */
    static const uint8_t z[4] = {0, 0, 0, 0};
    for (size_t n = 0; n <= 4; n++)
        fuzz_resp_one(z, n);
    CHECK(1);
}
