/* fuzz_bus.c - libFuzzer target; the body is fuzz_bus_one() in
 * fuzz_bus_harness.h (shared with tests/unit/test_fuzz_corpus.c).
 * Built and run by scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_bus_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bus_one(data, size);
    return 0;
}
