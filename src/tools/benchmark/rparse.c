/* rparse.c - see rparse.h. */
#include "rparse.h"

#include <string.h>

void bm_rp_init(struct bm_rparser *p)
{
    memset(p, 0, sizeof(*p));
}

/* Parse a signed decimal [s, e); 0 on success. */
static int parse_ll(const char *s, const char *e, long long *out)
{
    int neg = 0;
    long long v = 0;
    if (s < e && (*s == '-' || *s == '+')) {
        neg = *s == '-';
        s++;
    }
    if (s == e)
        return -1;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (0x7fffffffffffffffLL - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

static void capture(struct bm_rparser *p, size_t off, size_t len)
{
    /* An element directly inside the top-level array or push. */
    if (p->depth == 1 && !p->attr[0] && (p->cur.type == '*' || p->cur.type == '>')) {
        long long idx = p->top_n - p->left[0];
        if (idx >= 0 && idx < BM_RP_ELEMS) {
            p->cur.elem[idx].off = off;
            p->cur.elem[idx].len = len;
            if (idx + 1 > p->cur.nelem)
                p->cur.nelem = (int)idx + 1;
        }
    }
}

int bm_rp_parse(struct bm_rparser *p, const char *buf, size_t len, struct bm_reply *out)
{
    for (;;) {
        size_t pos = p->pos;
        if (pos >= len)
            return BM_RP_INCOMPLETE;
        const char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl) {
            if (len - pos > BM_RP_MAX_LINE)
                return BM_RP_ERR;
            return BM_RP_INCOMPLETE;
        }
        size_t eol = (size_t)(nl - buf); /* index of '\n' */
        if (eol == pos || buf[eol - 1] != '\r')
            return BM_RP_ERR;
        const char *ls = buf + pos + 1, *le = buf + eol - 1; /* line after the type byte */
        size_t next = eol + 1;
        char t = buf[pos];
        long long n;
        int top = p->depth == 0;

        if (top) {
            memset(&p->cur, 0, sizeof(p->cur));
            p->cur.type = t;
        }
        switch (t) {
        case '+':
        case '-':
        case ':':
        case '_':
        case ',':
        case '#':
        case '(':
            if (top) {
                p->cur.msg.off = (size_t)(ls - buf);
                p->cur.msg.len = (size_t)(le - ls);
                if (t == '-')
                    p->cur.is_error = 1;
                if (t == ':' && parse_ll(ls, le, &p->cur.integer) < 0)
                    return BM_RP_ERR;
            }
            capture(p, (size_t)(ls - buf), (size_t)(le - ls));
            p->pos = next;
            break;
        case '$':
        case '=':
        case '!':
            if (parse_ll(ls, le, &n) < 0 || n < -1 || (n == -1 && t != '$'))
                return BM_RP_ERR;
            if (n >= 0) {
                if (len - next < (size_t)n + 2)
                    return BM_RP_INCOMPLETE; /* header re-read next time */
                if (buf[next + (size_t)n] != '\r' || buf[next + (size_t)n + 1] != '\n')
                    return BM_RP_ERR;
                if (top) {
                    p->cur.msg.off = next;
                    p->cur.msg.len = (size_t)n;
                    if (t == '!')
                        p->cur.is_error = 1;
                }
                capture(p, next, (size_t)n);
                next += (size_t)n + 2;
            }
            p->pos = next;
            break;
        case '*':
        case '~':
        case '>':
        case '%':
        case '|':
            if (parse_ll(ls, le, &n) < 0 || n < -1 || (n == -1 && t != '*'))
                return BM_RP_ERR;
            if (t == '%' || t == '|')
                n *= 2;
            p->pos = next;
            if (n > 0) {
                if (p->depth == BM_RP_MAX_DEPTH)
                    return BM_RP_ERR;
                if (top)
                    p->top_n = n;
                p->attr[p->depth] = t == '|';
                p->left[p->depth++] = n;
                continue; /* the aggregate completes with its last element */
            }
            if (t == '|')
                continue; /* an empty attribute: the reply follows */
            break;
        default:
            return BM_RP_ERR;
        }
        /* One element is complete: close the aggregates it completes. */
        for (;;) {
            if (p->depth == 0) {
                *out = p->cur;
                out->len = p->pos;
                p->pos = 0;
                p->top_n = 0;
                return BM_RP_DONE;
            }
            if (--p->left[p->depth - 1] > 0)
                break;
            p->depth--;
            if (p->attr[p->depth])
                break; /* an attribute is not an element: its owner follows */
        }
    }
}
