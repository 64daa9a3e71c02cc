/* fuzz_resp.c - libFuzzer target for the RESP request parser
 * (src/proto/resp.c).  The body lives in fuzz_resp_harness.h so that the
 * unit tests replay tests/fuzz/corpus/ through exactly the same code.
 * Built and run by scripts/fuzz.sh. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_resp_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_resp_one(data, size);
    return 0;
}
