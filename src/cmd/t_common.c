/* t_common.c - see t_common.h. */
#include "t_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"
#include "../base/util.h"

int scan_opts(struct client *c, long long *count, const char **pat, size_t *plen, int *novalues)
{
    for (int i = 3; i < c->argc;) {
        int left = c->argc - i;
        if (arg_is(c, i, "count") && left >= 2) {
            if (arg_ll(c, i + 1, count) < 0)
                return -1;
            if (*count < 1) {
                reply_error(&c->out, ERR_SYNTAX);
                return -1;
            }
            i += 2;
        } else if (arg_is(c, i, "match") && left >= 2) {
            *pat = c->argv[i + 1];
            *plen = c->argvlen[i + 1];
            if (*plen == 1 && (*pat)[0] == '*')
                *pat = NULL;
            i += 2;
        } else if (arg_is(c, i, "novalues")) {
            if (!novalues) {
                reply_error(&c->out, "ERR NOVALUES option can only be used in HSCAN");
                return -1;
            }
            *novalues = 1;
            i++;
        } else {
            reply_error(&c->out, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

void reply_scan_empty(struct client *c)
{
    reply_array(&c->out, 2);
    reply_bulk(&c->out, "0", 1);
    reply_array(&c->out, 0);
}

int getkeys_numkeys(struct client *c, int *idx, int max, int ni, int dst, int after)
{
    long long n;
    int k = 0;
    if (ni >= c->argc || !str_to_ll(c->argv[ni], c->argvlen[ni], &n) || n < 1 || n > c->argc - ni - 1 - after)
        return 0;
    if (dst && k < max)
        idx[k++] = dst;
    for (long long i = 0; i < n && k < max; i++)
        idx[k++] = ni + 1 + (int)i;
    return k;
}

/* A double argument as Redis reads a score (getDoubleFromObject /
 * string2d): the whole buffer, no leading space, no overflow to infinity or
 * underflow to zero, no NaN. */
int arg_parse_double(const char *s, size_t len, double *out)
{
    char buf[256], *heap = NULL, *p = buf, *end;
    if (len == 0 || isspace((unsigned char)s[0]))
        return 0;
    if (len >= sizeof(buf))
        p = heap = hk_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    errno = 0;
    double v = strtod(p, &end);
    int ok = (size_t)(end - p) == len && !isnan(v) &&
             !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO));
    if (heap)
        hk_free(heap);
    if (ok)
        *out = v;
    return ok;
}
