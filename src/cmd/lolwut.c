/* lolwut.c - LOLWUT [VERSION v] [columns] [rows]: a little generative art
 * of HotKV's own, and the version.  The picture is a field of heat: each
 * column burns at its own height, flickering by a hash of its position,
 * hotter (denser glyphs) toward the bottom.  Every VERSION draws the same
 * art (HotKV has only one), sized by the optional columns (1..1000,
 * default 64) and rows (1..200, default 16). */
#include <stdint.h>
#include <stdio.h>

#include "../base/mem.h"
#include "../base/util.h"
#include "cmd.h"

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static int arg_count(struct client *c, int i, long long lo, long long hi, long long *out)
{
    long long v;
    if (!str_to_ll(c->argv[i], c->argvlen[i], &v)) {
        reply_error(&c->out, ERR_NOT_INT);
        return -1;
    }
    *out = v < lo ? lo : v > hi ? hi : v;
    return 0;
}

void lolwut_command(struct client *c)
{
    int a = 1;
    long long cols = 64, rows = 16, ver;
    if (c->argc >= 3 && arg_is(c, 1, "version")) {
        if (!str_to_ll(c->argv[2], c->argvlen[2], &ver)) {
            reply_error(&c->out, ERR_NOT_INT);
            return;
        }
        a = 3;
    }
    if (a < c->argc && arg_count(c, a, 1, 1000, &cols) < 0)
        return;
    if (a + 1 < c->argc && arg_count(c, a + 1, 1, 200, &rows) < 0)
        return;

    static const char glyph[] = " .:-=+*#%@";
    const int ng = (int)sizeof(glyph) - 1;
    size_t cap = (size_t)(cols + 1) * (size_t)rows + 128;
    char *out = hk_malloc(cap), *p = out;
    for (long long r = 0; r < rows; r++) {
        for (long long x = 0; x < cols; x++) {
            /* This column's flame reaches a height between a third and all
             * of the picture; below its tip the heat grows to the bottom. */
            uint32_t h = mix32((uint32_t)x * 2654435761U);
            long long top = (long long)(rows / 3) + (long long)(h % (uint32_t)(rows - rows / 3 + 1));
            long long depth = r - (rows - top);
            int g = 0;
            if (depth >= 0) {
                g = 1 + (int)(depth * (ng - 1) / (top > 0 ? top : 1));
                g += (int)(mix32(h ^ (uint32_t)(r * 40503)) % 3) - 1; /* flicker */
                g = g < 1 ? 1 : g >= ng ? ng - 1 : g;
            }
            *p++ = glyph[g];
        }
        *p++ = '\n';
    }
    p += snprintf(p, cap - (size_t)(p - out), "\nHotKV ver. %s (speaks Redis %s)\n", HOTKV_VERSION,
                  REDIS_COMPAT_VERSION);
    reply_verbatim(&c->out, out, (size_t)(p - out), "txt");
    hk_free(out);
}
