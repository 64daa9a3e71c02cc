/* t_common.h - argument parsing and reply helpers the collection type
 * command files (t_hash.c, t_list.c, t_set.c, t_zset.c) share.  Owned by
 * t_common.c. */
#ifndef HK_T_COMMON_H
#define HK_T_COMMON_H

#include <stddef.h>

#include "cmd.h"

/* The options of HSCAN/SSCAN/ZSCAN key cursor [MATCH pattern] [COUNT n]
 * [NOVALUES], read from argv[3] on: *count (left as it is when absent,
 * else >= 1), *pat and *plen (left as they are when absent, NULL for the
 * pattern "*", which matches everything).  novalues: where NOVALUES is
 * allowed (HSCAN), set to 1 when given; NULL elsewhere, where it is an
 * error.  Returns 0, or -1 after replying the error. */
int scan_opts(struct client *c, long long *count, const char **pat, size_t *plen, int *novalues);

/* The reply to a scan of a missing key: cursor 0, no elements. */
void reply_scan_empty(struct client *c);

/* Redis's index rules for a range [*start, *end] over len elements:
 * negative indexes count from the end, then the range is clipped.
 * Returns 0 when it is empty, else 1 with 0 <= *start <= *end < len. */
static inline int index_range(long long *start, long long *end, long long len)
{
    if (*start < 0)
        *start += len;
    if (*end < 0)
        *end += len;
    if (*start < 0)
        *start = 0;
    if (*start > *end || *start >= len)
        return 0;
    if (*end >= len)
        *end = len - 1;
    return 1;
}

/* Key positions for a command with numkeys at argv[ni] and the keys right
 * after it, at least `after` more arguments following them, plus argv[dst]
 * first when dst > 0.  No keys when numkeys is invalid (not an integer,
 * < 1, or more keys than arguments): the handler then replies the error
 * without touching a key. */
int getkeys_numkeys(struct client *c, int *idx, int max, int ni, int dst, int after);

/* A double argument as Redis reads scores and coordinates (whole buffer,
 * no leading space, no overflow or underflow, no NaN): 1 and *out, or 0. */
int arg_parse_double(const char *s, size_t len, double *out);

#endif
