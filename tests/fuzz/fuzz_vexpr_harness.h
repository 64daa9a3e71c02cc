/* fuzz_vexpr_harness.h - VSIM FILTER expressions (ds/vexpr.c): compile,
 * then evaluate against JSON attribute strings.
 *
 * Input: the expression, then optionally a NUL byte and JSON attribute
 * documents separated by NUL bytes.  The expression is evaluated against
 * those and against a fixed set of attribute strings (objects with
 * numbers, strings, arrays, nesting, escapes; and broken JSON).  Every
 * buffer handed to vexpr is an exactly-sized heap copy, so a read past its
 * end is caught by AddressSanitizer.
 *
 * Checks: vexpr_compile and vexpr_compile_at agree; a failure carries the
 * syntax error text and a position inside the expression; evaluation
 * answers 0 or 1, the same every time, and 0 for an element without
 * attributes. */
#ifndef HK_FUZZ_VEXPR_HARNESS_H
#define HK_FUZZ_VEXPR_HARNESS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ds/vexpr.h"
#include "fuzz_common.h"

static const char *const fuzz_vexpr_docs[] = {
    "{}",
    "{\"a\": 1, \"b\": 2.5, \"year\": 1995, \"genre\": \"action\", \"rating\": 3}",
    "{\"a\": -3e2, \"s\": \"x\\\"y\\\\z\\n\", \"t\": true, \"f\": false, \"n\": null}",
    "{\"arr\": [1, \"two\", [3, [4]], null, true], \"a\": \"12\", \"b\": \"\"}",
    "{\"o\": {\"a\": 1}, \"a\": [], \"name\": \"\\u00e9t\\u00e9\"}",
    "{\"a\": 1, \"a\": 2, \"year\": \"1990\", \"x-y\": 7, \"_\": 0}",
    "{\"a\": 1e400, \"b\": -0, \"c\": 0.000001, \"d\": 123456789012345678901234567890}",
    "{\"a\": ",
    "[1, 2, 3]",
    "{\"a\": \"unterminated",
    "{\"a\" 1}",
    "   {  \"year\"  :  2000  ,  \"genre\"  :  \"drama\"  }   ",
    "not json at all",
    "",
};

static char *fuzz_vexpr_copy(const void *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    FZ_CHECK(c != NULL);
    memcpy(c, p, n);
    return c;
}

static void fuzz_vexpr_eval(const struct vexpr *e, const char *doc, size_t len)
{
    char *j = fuzz_vexpr_copy(doc, len);
    int r1 = vexpr_eval(e, j, len);
    int r2 = vexpr_eval(e, j, len);
    FZ_CHECK(r1 == 0 || r1 == 1);
    FZ_CHECK(r1 == r2);
    free(j);
}

static inline void fuzz_vexpr_one(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t elen = nul ? (size_t)(nul - data) : size;
    char *expr = fuzz_vexpr_copy(data, elen);
    char err[256];
    size_t errpos = (size_t)-1;
    struct vexpr *e = vexpr_compile(expr, elen, err, sizeof(err));
    struct vexpr *e2 = vexpr_compile_at(expr, elen, &errpos);
    FZ_CHECK((e == NULL) == (e2 == NULL));
    if (!e) {
        FZ_CHECK(strncmp(err, VEXPR_ERR_SYNTAX, strlen(VEXPR_ERR_SYNTAX)) == 0);
        FZ_CHECK(errpos <= elen);
        free(expr);
        return;
    }
    FZ_CHECK(vexpr_nfields(e) == vexpr_nfields(e2));
    FZ_CHECK(vexpr_eval(e, NULL, 0) == 0);
    for (size_t i = 0; i < sizeof(fuzz_vexpr_docs) / sizeof(fuzz_vexpr_docs[0]); i++) {
        const char *d = fuzz_vexpr_docs[i];
        fuzz_vexpr_eval(e, d, strlen(d));
        /* the same document cut short */
        if (strlen(d) > 2)
            fuzz_vexpr_eval(e2, d, strlen(d) / 2);
    }
    if (nul) {
        const uint8_t *p = nul + 1, *end = data + size;
        while (p <= end) {
            const uint8_t *q = memchr(p, 0, (size_t)(end - p));
            size_t n = q ? (size_t)(q - p) : (size_t)(end - p);
            fuzz_vexpr_eval(e, (const char *)p, n);
            if (!q)
                break;
            p = q + 1;
        }
    }
    vexpr_free(e);
    vexpr_free(e2);
    free(expr);
}

#endif
