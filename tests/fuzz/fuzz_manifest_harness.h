/* fuzz_manifest_harness.h - the multi-part AOF manifest parser
 * (aof_manifest_load, persist/aof.c; also used by hotkv-check-aof).
 *
 * Input: the manifest file's text (seeds: manifests the server wrote, by
 * tests/fuzz/make_seeds.py).  It is written to a memfd and parsed through
 * /proc/self/fd/N.  A parsed manifest must be coherent: names set, types
 * b/h/i as listed, and freeing it must release everything. */
#ifndef HK_FUZZ_MANIFEST_HARNESS_H
#define HK_FUZZ_MANIFEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "persist/aof.h"

static inline void fuzz_manifest_one(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    struct aof_manifest am;
    fuzz_memfd_path("hotkv-fuzz-manifest", data, size, path, sizeof(path));
    memset(&am, 0, sizeof(am));
    err[0] = 0;
    int rc = aof_manifest_load(path, &am, err, sizeof(err));
    FZ_CHECK(rc == 0 || rc == -1);
    if (rc < 0) {
        FZ_CHECK(err[0] != 0);
    } else {
        if (am.base.name)
            FZ_CHECK(am.base.type == 'b' && strlen(am.base.name) > 0);
        FZ_CHECK(am.nhist >= 0 && am.nincr >= 0);
        for (int i = 0; i < am.nhist; i++)
            FZ_CHECK(am.hist[i].name != NULL && am.hist[i].type == 'h');
        for (int i = 0; i < am.nincr; i++) {
            FZ_CHECK(am.incr[i].name != NULL && am.incr[i].type == 'i');
            FZ_CHECK(am.incr[i].seq <= am.incr_seq);
        }
    }
    aof_manifest_free(&am);
}

#endif
