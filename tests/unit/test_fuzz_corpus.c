/* test_fuzz_corpus.c - replays every committed input of every libFuzzer
 * target (seeds and saved findings) through the target's body, so each
 * stays a regression test:
 *   tests/fuzz/corpus/           fuzz_resp_one      (fuzz_resp_harness.h)
 *   tests/fuzz/corpus-restore/   fuzz_restore_one   (fuzz_restore_harness.h)
 *   tests/fuzz/corpus-hnsw/      fuzz_hnsw_one      (fuzz_hnsw_harness.h)
 *   tests/fuzz/corpus-rdb/       fuzz_rdb_one       (fuzz_rdb_harness.h)
 *   tests/fuzz/corpus-aof/       fuzz_aof_one       (fuzz_aof_harness.h)
 *   tests/fuzz/corpus-manifest/  fuzz_manifest_one  (fuzz_manifest_harness.h)
 *   tests/fuzz/corpus-function/  fuzz_function_one  (fuzz_function_harness.h)
 *   tests/fuzz/corpus-vexpr/     fuzz_vexpr_one     (fuzz_vexpr_harness.h)
 *   tests/fuzz/corpus-config/    fuzz_config_one    (fuzz_config_harness.h)
 *   tests/fuzz/corpus-bus/       fuzz_bus_one       (fuzz_bus_harness.h)
 * Each input runs in a child process with a time and memory limit (the
 * harnesses set up server state: configuration, keyspace, command table),
 * so a hang or a broken invariant fails the test for that file and the run
 * goes on.  Paths are relative to the current directory, which is the
 * repository root under `make unit`. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/fuzz_aof_harness.h"
#include "../fuzz/fuzz_bus_harness.h"
#include "../fuzz/fuzz_config_harness.h"
#include "../fuzz/fuzz_function_harness.h"
#include "../fuzz/fuzz_hnsw_harness.h"
#include "../fuzz/fuzz_manifest_harness.h"
#include "../fuzz/fuzz_rdb_harness.h"
#include "../fuzz/fuzz_restore_harness.h"
#include "../fuzz/fuzz_resp_harness.h"
#include "../fuzz/fuzz_vexpr_harness.h"
#include "test.h"

struct corpus_input {
    uint8_t *data;
    size_t size;
    void (*fn)(const uint8_t *, size_t);
};

static void replay_one(void *arg)
{
    struct corpus_input *in = arg;
    in->fn(in->data, in->size);
}

/* The AOF harness's directory goes with the child (which _exits). */
static void fuzz_aof_one_and_clean(const uint8_t *data, size_t size)
{
    fuzz_aof_one(data, size);
    fuzz_aof_cleanup();
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

/* Replay every file of dir through fn; returns how many there were. */
static int replay_dir(const char *dir, void (*fn)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    if (!d) {
        test_fail(__FILE__, __LINE__, "cannot open %s (run from the repository root)", dir);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        char path[512], why[128];
        struct corpus_input in;
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!read_file(path, &in)) {
            test_fail(__FILE__, __LINE__, "cannot read %s", path);
            continue;
        }
        in.fn = fn;
        files++;
        if (test_run_guarded(replay_one, &in, 20, 1024, why, sizeof(why)))
            test_fail(__FILE__, __LINE__, "%s: %s", path, why);
        free(in.data);
    }
    closedir(d);
    return files;
}

TEST(test_fuzz_corpus_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus", fuzz_resp_one) >= 20);
}

TEST(test_fuzz_corpus_restore_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-restore", fuzz_restore_one) >= 20);
}

TEST(test_fuzz_corpus_hnsw_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-hnsw", fuzz_hnsw_one) >= 5);
}

TEST(test_fuzz_corpus_rdb_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-rdb", fuzz_rdb_one) >= 10);
}

TEST(test_fuzz_corpus_aof_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-aof", fuzz_aof_one_and_clean) >= 10);
}

TEST(test_fuzz_corpus_manifest_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-manifest", fuzz_manifest_one) >= 3);
}

TEST(test_fuzz_corpus_function_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-function", fuzz_function_one) >= 3);
}

TEST(test_fuzz_corpus_vexpr_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-vexpr", fuzz_vexpr_one) >= 20);
}

TEST(test_fuzz_corpus_config_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-config", fuzz_config_one) >= 3);
}

static void short_inputs(void *arg)
{
    static const uint8_t z[4] = {0, 0, 0, 0};
    (void)arg;
    for (size_t n = 0; n <= 4; n++) {
        fuzz_resp_one(z, n);
        fuzz_restore_one(z, n);
        fuzz_hnsw_one(z, n);
        fuzz_rdb_one(z, n);
        fuzz_aof_one(z, n);
        fuzz_manifest_one(z, n);
        fuzz_function_one(z, n);
        fuzz_vexpr_one(z, n);
        fuzz_config_one(z, n);
    }
    fuzz_aof_cleanup();
}

TEST(test_fuzz_corpus_harness_short_inputs)
{
    /* Inputs shorter than any header, and a header alone, every harness. */
    char why[128];
    if (test_run_guarded(short_inputs, NULL, 20, 1024, why, sizeof(why)))
        test_fail(__FILE__, __LINE__, "short inputs: %s", why);
}

TEST(test_fuzz_corpus_bus_replays_clean)
{
    CHECK(replay_dir("tests/fuzz/corpus-bus", fuzz_bus_one) >= 20);
}
