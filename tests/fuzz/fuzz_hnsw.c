/* fuzz_hnsw.c - libFuzzer target; the body is fuzz_hnsw_one() in
 * fuzz_hnsw_harness.h (shared with tests/unit/test_fuzz_corpus.c).
 * Built and run by scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_hnsw_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_hnsw_one(data, size);
    return 0;
}
