/* vexpr.c - see vexpr.h.
 *
 * Compilation: a tokenizer turns the text into tokens (values and
 * operators), then an operator-precedence pass (shunting-yard) turns them
 * into a postfix program, checking on the way that every operator has its
 * operands and that exactly one value is left: a malformed expression is
 * rejected here, never at run time.  Selectors are collected into a sorted
 * table of distinct field names, and each selector instruction refers to
 * its slot there.
 *
 * Evaluation: one pass over the top-level keys of the JSON object finds
 * where the value of every needed field starts (values of other keys are
 * skipped without being parsed), stopping as soon as all are found; each
 * found value is then parsed strictly.  A missing or unparsable field
 * makes the result 0 straight away, which is what Redis gets too (its
 * program stops at the first selector it cannot resolve, and every
 * selector of the program is always reached: there is no short-circuit).
 * Then the postfix program runs over a small value stack.  Strings point
 * into the JSON text or the compiled expression; only JSON strings with
 * escapes are decoded, into a stack scratch area (heap beyond it).  JSON
 * arrays are validated once (iteratively, any nesting depth) and walked
 * lazily by "in". */
#include "vexpr.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/mem.h"

/* ------------------------------------------------------------------ */
/* Character classes (ASCII, independent of the locale). */

static inline int is_dig(int c)
{
    return c >= '0' && c <= '9';
}

static inline int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int is_sp(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline int is_opchar(int c)
{
    switch (c) {
    case '+': case '-': case '*': case '%': case '/': case '!': case '(':
    case ')': case '<': case '>': case '=': case '|': case '&':
        return 1;
    default:
        return 0;
    }
}

static inline int is_selchar(int c)
{
    return is_alpha(c) || is_dig(c) || c == '_' || c == '-';
}

/* Characters a JSON number may be made of (validity is strtod's call). */
static inline int is_numchar(int c)
{
    return is_dig(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* ------------------------------------------------------------------ */
/* Values and the compiled form. */

enum { V_NUM, V_STR, V_NULL, V_TUP, V_JARR };

struct vtuple;

struct val {
    unsigned char type;
    union {
        double num;
        struct {
            const char *p; /* V_STR: bytes; V_JARR: the '[' */
            size_t n;      /* V_STR: length; V_JARR: bytes up to the JSON's end */
        } s;
        const struct vtuple *tup;
    } u;
};

struct vtuple {
    size_t n;
    struct val v[]; /* numbers and strings only */
};

enum {
    OP_OPAREN, OP_CPAREN, OP_NOT, OP_POW, OP_MUL, OP_DIV, OP_MOD, OP_ADD, OP_SUB,
    OP_GT, OP_GE, OP_LT, OP_LE, OP_EQ, OP_NE, OP_IN, OP_AND, OP_OR,
    OP_COUNT,
    I_PUSH = 100, /* push k */
    I_FIELD,      /* push the value of field slot 'field' */
};

/* Binding strength (higher binds tighter) and operand count per operator. */
static const unsigned char op_prec[OP_COUNT] = {
    [OP_OPAREN] = 7, [OP_CPAREN] = 7, [OP_NOT] = 6, [OP_POW] = 5,
    [OP_MUL] = 4, [OP_DIV] = 4, [OP_MOD] = 4, [OP_ADD] = 3, [OP_SUB] = 3,
    [OP_GT] = 2, [OP_GE] = 2, [OP_LT] = 2, [OP_LE] = 2, [OP_EQ] = 2, [OP_NE] = 2,
    [OP_IN] = 2, [OP_AND] = 1, [OP_OR] = 0,
};
static const unsigned char op_arity[OP_COUNT] = {
    [OP_NOT] = 1, [OP_POW] = 2, [OP_MUL] = 2, [OP_DIV] = 2, [OP_MOD] = 2,
    [OP_ADD] = 2, [OP_SUB] = 2, [OP_GT] = 2, [OP_GE] = 2, [OP_LT] = 2,
    [OP_LE] = 2, [OP_EQ] = 2, [OP_NE] = 2, [OP_IN] = 2, [OP_AND] = 2, [OP_OR] = 2,
};

static const struct {
    const char *name;
    unsigned char len, op;
} op_spell[] = {
    {"(", 1, OP_OPAREN}, {")", 1, OP_CPAREN}, {"!", 1, OP_NOT}, {"not", 3, OP_NOT},
    {"**", 2, OP_POW}, {"*", 1, OP_MUL}, {"/", 1, OP_DIV}, {"%", 1, OP_MOD},
    {"+", 1, OP_ADD}, {"-", 1, OP_SUB}, {">", 1, OP_GT}, {">=", 2, OP_GE},
    {"<", 1, OP_LT}, {"<=", 2, OP_LE}, {"==", 2, OP_EQ}, {"!=", 2, OP_NE},
    {"in", 2, OP_IN}, {"and", 3, OP_AND}, {"&&", 2, OP_AND}, {"or", 2, OP_OR},
    {"||", 2, OP_OR},
};

struct insn {
    unsigned char op;
    uint32_t field;
    struct val k;
};

struct fname {
    const char *p;
    size_t n;
};

struct vexpr {
    struct insn *code;
    size_t ncode;
    size_t maxdepth;     /* deepest the value stack gets */
    struct fname *fields; /* distinct, sorted by (length, bytes) */
    size_t nfields;
    char *src;           /* copy of the text; field names point into it */
    char *pool;          /* decoded string literals */
    int never;           /* reads the empty selector: never matches */
};

/* ------------------------------------------------------------------ */
/* Tokenizer. */

enum { T_VAL, T_SEL, T_OP };

struct token {
    unsigned char type, op;
    struct val v;    /* T_VAL */
    const char *sel; /* T_SEL: name (in the expression copy) */
    size_t sellen;
};

struct lexer {
    const char *s;
    size_t len, i;
    char *pool;
    size_t poolused;
};

static void lex_spaces(struct lexer *lx)
{
    while (lx->i < lx->len && is_sp((unsigned char)lx->s[lx->i]))
        lx->i++;
}

/* A number: digits, '.', 'e'/'E', and '-' as the first character; the
 * whole run must be one strtod number (so "1e-5" is not: the run stops at
 * '-').  On error lx->i is where the scan stopped. */
static int lex_number(struct lexer *lx, double *out)
{
    char buf[256];
    size_t n = 0;
    while (lx->i < lx->len) {
        int c = (unsigned char)lx->s[lx->i];
        if (!(is_dig(c) || c == '.' || c == 'e' || c == 'E' || (n == 0 && c == '-')))
            break;
        if (n == sizeof(buf) - 1)
            return -1;
        buf[n++] = (char)c;
        lx->i++;
    }
    buf[n] = '\0';
    char *end;
    *out = strtod(buf, &end);
    return *end == '\0' ? 0 : -1;
}

/* A quoted string ('...' or "..."), decoded into the pool.  Unterminated:
 * error with lx->i at the end. */
static int lex_string(struct lexer *lx, struct val *v)
{
    char quote = lx->s[lx->i++];
    size_t start = lx->i, close;
    for (;;) {
        if (lx->i >= lx->len)
            return -1;
        char c = lx->s[lx->i];
        if (c == '\\' && lx->i + 1 < lx->len) {
            lx->i += 2;
            continue;
        }
        if (c == quote) {
            close = lx->i++;
            break;
        }
        lx->i++;
    }
    char *dst = lx->pool + lx->poolused, *d = dst;
    for (size_t j = start; j < close; j++) {
        char c = lx->s[j];
        if (c == '\\' && j + 1 < close) {
            c = lx->s[++j];
            c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
        }
        *d++ = c;
    }
    lx->poolused += (size_t)(d - dst);
    v->type = V_STR;
    v->u.s.p = dst;
    v->u.s.n = (size_t)(d - dst);
    return 0;
}

/* A tuple literal: [elem, ...] with number or string elements, a trailing
 * comma allowed, no nesting. */
static int lex_tuple(struct lexer *lx, struct val *v)
{
    size_t cap = 0, n = 0;
    struct val *el = NULL;
    int rc = -1;
    lx->i++; /* '[' */
    for (;;) {
        lex_spaces(lx);
        if (lx->i < lx->len && lx->s[lx->i] == ']') {
            lx->i++;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            el = hk_realloc(el, cap * sizeof(*el));
        }
        int c = lx->i < lx->len ? (unsigned char)lx->s[lx->i] : 0;
        if (is_dig(c) || c == '-') {
            el[n].type = V_NUM;
            if (lex_number(lx, &el[n].u.num) < 0)
                goto out;
        } else if (c == '"' || c == '\'') {
            if (lex_string(lx, &el[n]) < 0)
                goto out;
        } else {
            goto out;
        }
        n++;
        lex_spaces(lx);
        if (lx->i < lx->len && lx->s[lx->i] == ']') {
            lx->i++;
            break;
        }
        if (lx->i >= lx->len || lx->s[lx->i] != ',')
            goto out;
        lx->i++;
    }
    struct vtuple *t = hk_malloc(sizeof(*t) + n * sizeof(struct val));
    t->n = n;
    if (n)
        memcpy(t->v, el, n * sizeof(struct val));
    v->type = V_TUP;
    v->u.tup = t;
    rc = 0;
out:
    hk_free(el);
    return rc;
}

/* An operator (longest spelling that prefixes the run of letters and
 * operator characters) or the literal null (the whole run). */
static inline int is_wordchar(int c)
{
    return is_alpha(c) || is_opchar(c);
}

static int lex_word(struct lexer *lx, struct token *t)
{
    /* Only the first 5 characters of the run matter (operators are at
     * most 3 long, "null" must be the whole run), so look no further: a
     * long run like "!!!!...(((((" stays linear. */
    size_t start = lx->i;
    while (lx->i < lx->len && lx->i - start < 5 && is_wordchar((unsigned char)lx->s[lx->i]))
        lx->i++;
    size_t run = lx->i - start;
    if (run == 4 && memcmp(lx->s + start, "null", 4) == 0) {
        t->type = T_VAL;
        t->v.type = V_NULL;
        return 0;
    }
    size_t best = 0;
    for (size_t k = 0; k < sizeof(op_spell) / sizeof(op_spell[0]); k++) {
        size_t l = op_spell[k].len;
        if (l <= run && l > best && memcmp(op_spell[k].name, lx->s + start, l) == 0) {
            best = l;
            t->op = op_spell[k].op;
        }
    }
    if (best == 0) {
        /* The error position is the end of the whole run. */
        while (lx->i < lx->len && is_wordchar((unsigned char)lx->s[lx->i]))
            lx->i++;
        return -1;
    }
    t->type = T_OP;
    lx->i = start + best;
    return 0;
}

static void free_val(struct val *v)
{
    if (v->type == V_TUP)
        hk_free((void *)v->u.tup);
}

/* Tokenize the whole text; on error *errpos is where it stopped. */
static int tokenize(struct lexer *lx, struct token **out, size_t *ntok, size_t *errpos)
{
    size_t cap = 16, n = 0;
    struct token *tk = hk_malloc(cap * sizeof(*tk));
    for (;;) {
        lex_spaces(lx);
        if (lx->i >= lx->len)
            break;
        /* A '-' starts a number at the beginning and after any operator
         * except ')': "(-1)", "5 - -3", but "(1) -1" is a subtraction. */
        int minus_num = n == 0 || (tk[n - 1].type == T_OP && tk[n - 1].op != OP_CPAREN);
        if (n == cap) {
            cap *= 2;
            tk = hk_realloc(tk, cap * sizeof(*tk));
        }
        struct token *t = &tk[n];
        memset(t, 0, sizeof(*t));
        int c = (unsigned char)lx->s[lx->i];
        int next = lx->i + 1 < lx->len ? (unsigned char)lx->s[lx->i + 1] : 0;
        int rc;
        if (is_dig(c) || (minus_num && c == '-' && is_dig(next))) {
            t->type = T_VAL;
            t->v.type = V_NUM;
            rc = lex_number(lx, &t->v.u.num);
        } else if (c == '"' || c == '\'') {
            t->type = T_VAL;
            rc = lex_string(lx, &t->v);
        } else if (c == '.' && (is_selchar(next) || lx->i + 1 == lx->len)) {
            /* A '.' ending the text is a selector with an empty name
             * (Redis compiles it; it never resolves). */
            size_t start = ++lx->i;
            while (lx->i < lx->len && is_selchar((unsigned char)lx->s[lx->i]))
                lx->i++;
            t->type = T_SEL;
            t->sel = lx->s + start;
            t->sellen = lx->i - start;
            rc = 0;
        } else if (c == '[') {
            t->type = T_VAL;
            rc = lex_tuple(lx, &t->v);
        } else if (is_alpha(c) || is_opchar(c)) {
            rc = lex_word(lx, t);
        } else {
            rc = -1;
        }
        if (rc < 0) {
            *errpos = lx->i;
            for (size_t k = 0; k < n; k++)
                if (tk[k].type == T_VAL)
                    free_val(&tk[k].v);
            hk_free(tk);
            return -1;
        }
        n++;
    }
    *out = tk;
    *ntok = n;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Compilation. */

struct occ {
    const char *p;
    size_t n;
    size_t insn; /* index of the I_FIELD instruction */
};

static int fname_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn)
        return an < bn ? -1 : 1;
    return memcmp(a, b, an);
}

static int occ_cmp(const void *x, const void *y)
{
    const struct occ *a = x, *b = y;
    int c = fname_cmp(a->p, a->n, b->p, b->n);
    if (c)
        return c;
    return a->insn < b->insn ? -1 : a->insn > b->insn;
}

struct emitter {
    struct insn *code;
    size_t ncode;
    size_t items, maxdepth; /* value-stack depth at this point of the program */
};

static int emit_op(struct emitter *em, int op)
{
    int ar = op_arity[op];
    if (em->items < (size_t)ar)
        return -1;
    em->items = em->items - (size_t)ar + 1;
    struct insn *in = &em->code[em->ncode++];
    memset(in, 0, sizeof(*in));
    in->op = (unsigned char)op;
    return 0;
}

void vexpr_free(struct vexpr *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->ncode; i++)
        if (e->code[i].op == I_PUSH)
            free_val(&e->code[i].k);
    hk_free(e->code);
    hk_free(e->fields);
    hk_free(e->src);
    hk_free(e->pool);
    hk_free(e);
}

struct vexpr *vexpr_compile_at(const char *s, size_t len, size_t *errpos)
{
    size_t fullen = len, dummy;
    if (!errpos)
        errpos = &dummy;
    *errpos = 0;
    const char *nul = s ? memchr(s, '\0', len) : NULL;
    if (!s)
        len = 0;
    else if (nul)
        len = (size_t)(nul - s); /* Redis compiles the C string */

    struct vexpr *e = hk_calloc(sizeof(*e));
    e->src = hk_malloc(len + 1);
    if (len)
        memcpy(e->src, s, len);
    e->src[len] = '\0';
    e->pool = hk_malloc(len + 1);

    struct lexer lx = {.s = e->src, .len = len, .pool = e->pool};
    struct token *tk = NULL;
    size_t ntok = 0;
    if (tokenize(&lx, &tk, &ntok, errpos) < 0) {
        if (*errpos >= fullen)
            *errpos = 0;
        vexpr_free(e);
        return NULL;
    }

    /* Operator precedence: values go straight to the program, operators
     * wait on a stack until one binding less tightly arrives. */
    struct emitter em = {.code = hk_malloc((ntok ? ntok : 1) * sizeof(struct insn))};
    unsigned char *ops = hk_malloc(ntok ? ntok : 1);
    size_t nops = 0, nocc = 0;
    struct occ *occ = NULL;
    int bad = 0;
    size_t consumed = 0; /* tokens whose values moved into the program */
    for (size_t i = 0; i < ntok && !bad; i++) {
        struct token *t = &tk[i];
        consumed = i + 1;
        if (t->type != T_OP) {
            struct insn *in = &em.code[em.ncode++];
            memset(in, 0, sizeof(*in));
            if (t->type == T_VAL) {
                in->op = I_PUSH;
                in->k = t->v;
            } else {
                in->op = I_FIELD;
                if (!occ)
                    occ = hk_malloc(ntok * sizeof(*occ));
                occ[nocc++] = (struct occ){t->sel, t->sellen, em.ncode - 1};
            }
            if (++em.items > em.maxdepth)
                em.maxdepth = em.items;
            continue;
        }
        int op = t->op;
        if (op == OP_OPAREN) {
            ops[nops++] = (unsigned char)op;
        } else if (op == OP_CPAREN) {
            for (;;) {
                if (nops == 0) {
                    bad = 1;
                    break;
                }
                int top = ops[--nops];
                if (top == OP_OPAREN)
                    break;
                if (emit_op(&em, top) < 0) {
                    bad = 1;
                    break;
                }
            }
        } else if (op_arity[op] == 1) {
            /* Prefix operators wait for their operand: "!!x" nests. */
            ops[nops++] = (unsigned char)op;
        } else {
            while (nops > 0) {
                int top = ops[nops - 1];
                if (top == OP_OPAREN || op_prec[top] < op_prec[op])
                    break;
                /* ** is right associative: an equal ** stays. */
                if (op == OP_POW && op_prec[top] <= op_prec[op])
                    break;
                nops--;
                if (emit_op(&em, top) < 0) {
                    bad = 1;
                    break;
                }
            }
            ops[nops++] = (unsigned char)op;
        }
    }
    while (!bad && nops > 0) {
        int top = ops[--nops];
        if (top == OP_OPAREN || emit_op(&em, top) < 0)
            bad = 1;
    }
    if (!bad && em.items != 1)
        bad = 1;
    /* Values of tokens never reached belong to nobody yet. */
    for (size_t i = consumed; i < ntok; i++)
        if (tk[i].type == T_VAL)
            free_val(&tk[i].v);
    hk_free(tk);
    hk_free(ops);
    e->code = em.code;
    e->ncode = em.ncode;
    e->maxdepth = em.maxdepth;
    if (bad) {
        hk_free(occ);
        vexpr_free(e);
        return NULL; /* *errpos 0: Redis quotes the whole expression */
    }

    /* Distinct field names, sorted, and each selector's slot. */
    for (size_t i = 0; i < nocc; i++)
        if (occ[i].n == 0)
            e->never = 1;
    if (nocc) {
        qsort(occ, nocc, sizeof(*occ), occ_cmp);
        e->fields = hk_malloc(nocc * sizeof(*e->fields));
        for (size_t i = 0; i < nocc; i++) {
            if (e->nfields == 0 || fname_cmp(e->fields[e->nfields - 1].p, e->fields[e->nfields - 1].n,
                                             occ[i].p, occ[i].n) != 0)
                e->fields[e->nfields++] = (struct fname){occ[i].p, occ[i].n};
            e->code[occ[i].insn].field = (uint32_t)(e->nfields - 1);
        }
    }
    hk_free(occ);
    return e;
}

struct vexpr *vexpr_compile(const char *s, size_t len, char *err, size_t errlen)
{
    size_t pos;
    struct vexpr *e = vexpr_compile_at(s, len, &pos);
    if (!e && err && errlen) {
        const char *rest = s ? s + pos : "";
        size_t restlen = s ? strnlen(rest, len - pos) : 0;
        snprintf(err, errlen, "%s%.*s", VEXPR_ERR_SYNTAX, (int)(restlen > 0x7fffffff ? 0x7fffffff : restlen), rest);
        for (char *c = err; *c; c++)
            if (*c == '\r' || *c == '\n')
                *c = ' ';
    }
    return e;
}

size_t vexpr_nfields(const struct vexpr *e)
{
    return e->nfields;
}

/* ------------------------------------------------------------------ */
/* Scratch space for decoded JSON strings: a stack buffer, then heap blocks
 * (freed on release to a mark, or at the end). */

#define SCRATCH_LOCAL 512

struct heapblk {
    struct heapblk *next;
    char data[];
};

struct scratch {
    size_t used;
    struct heapblk *heap;
    char local[SCRATCH_LOCAL];
};

struct mark {
    size_t used;
    struct heapblk *heap;
};

static char *scratch_alloc(struct scratch *sc, size_t n)
{
    if (n <= SCRATCH_LOCAL - sc->used) {
        char *p = sc->local + sc->used;
        sc->used += n;
        return p;
    }
    struct heapblk *b = hk_malloc(sizeof(*b) + n);
    b->next = sc->heap;
    sc->heap = b;
    return b->data;
}

static void scratch_release(struct scratch *sc, struct mark m)
{
    while (sc->heap != m.heap) {
        struct heapblk *b = sc->heap;
        sc->heap = b->next;
        hk_free(b);
    }
    sc->used = m.used;
}

/* ------------------------------------------------------------------ */
/* JSON: lenient skipping (to pass over values of other keys, as Redis
 * does: only the nesting of the same bracket kind and strings are
 * tracked) and strict parsing of the values the expression reads. */

static inline const char *j_spaces(const char *p, const char *end)
{
    while (p < end && is_sp((unsigned char)*p))
        p++;
    return p;
}

/* p at '"'; returns the position after the closing quote, or NULL. */
static const char *j_skip_string(const char *p, const char *end)
{
    p++;
    while (p < end) {
        if (*p == '\\') {
            if (end - p < 2)
                return NULL;
            p += 2;
            continue;
        }
        if (*p == '"')
            return p + 1;
        p++;
    }
    return NULL;
}

static const char *j_skip_bracketed(const char *p, const char *end, char open, char close)
{
    size_t depth = 1;
    p++;
    while (p < end && depth > 0) {
        if (*p == '"') {
            p = j_skip_string(p, end);
            if (!p)
                return NULL;
            continue;
        }
        if (*p == open)
            depth++;
        else if (*p == close)
            depth--;
        p++;
    }
    return depth == 0 ? p : NULL;
}

static const char *j_skip_value(const char *p, const char *end)
{
    p = j_spaces(p, end);
    if (p >= end)
        return NULL;
    switch (*p) {
    case '"':
        return j_skip_string(p, end);
    case '{':
        return j_skip_bracketed(p, end, '{', '}');
    case '[':
        return j_skip_bracketed(p, end, '[', ']');
    case 't':
        return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: {
        const char *q = p;
        while (q < end && is_numchar((unsigned char)*q))
            q++;
        return q > p ? q : NULL;
    }
    }
}

/* A JSON string at p ('"'): escapes \n \r \t decoded, any other \X is X.
 * Strings without escapes point into the JSON.  Returns the position
 * after it, or NULL (unterminated). */
static const char *j_parse_string(const char *p, const char *end, struct val *v, struct scratch *sc)
{
    const char *start = ++p;
    size_t n = 0;
    int esc = 0;
    while (p < end && *p != '"') {
        if (*p == '\\') {
            if (end - p < 2)
                return NULL;
            esc = 1;
            p += 2;
        } else {
            p++;
        }
        n++;
    }
    if (p >= end)
        return NULL;
    v->type = V_STR;
    v->u.s.n = n;
    if (!esc) {
        v->u.s.p = start;
    } else {
        char *d = scratch_alloc(sc, n ? n : 1);
        v->u.s.p = d;
        for (const char *r = start; r < p; r++) {
            char c = *r;
            if (c == '\\') {
                c = *++r;
                c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
            }
            *d++ = c;
        }
    }
    return p + 1;
}

/* Up to 255 number characters that must form one strtod number. */
static const char *j_parse_number(const char *p, const char *end, double *out)
{
    char buf[256];
    const char *start = p;
    size_t n = 0;
    while (p < end && n < sizeof(buf) - 1 && is_numchar((unsigned char)*p)) {
        p++;
        n++;
    }
    if (n == 0)
        return NULL;
    /* Fast path: an integer of up to 15 digits is exact as a double. */
    size_t k = start[0] == '-';
    if (n > k && n - k <= 15) {
        uint64_t u = 0;
        size_t j = k;
        while (j < n && is_dig((unsigned char)start[j]))
            u = u * 10 + (uint64_t)(start[j++] - '0');
        if (j == n) {
            *out = k ? -(double)u : (double)u;
            return p;
        }
    }
    memcpy(buf, start, n);
    buf[n] = '\0';
    char *ep;
    *out = strtod(buf, &ep);
    return *ep == '\0' ? p : NULL;
}

/* true/false/null must be followed by the end, a space, ',', ']' or '}'. */
static const char *j_parse_literal(const char *p, const char *end, const char *lit, size_t l)
{
    if ((size_t)(end - p) < l || memcmp(p, lit, l) != 0)
        return NULL;
    p += l;
    if (p < end && !is_sp((unsigned char)*p) && *p != ',' && *p != ']' && *p != '}')
        return NULL;
    return p;
}

/* A scalar (not an array or object) at p.  sc may be NULL when only the
 * extent matters (strings are then not decoded). */
static const char *j_parse_scalar(const char *p, const char *end, struct val *v, struct scratch *sc)
{
    switch (*p) {
    case '"':
        if (!sc) {
            v->type = V_STR;
            return j_skip_string(p, end);
        }
        return j_parse_string(p, end, v, sc);
    case 't':
        v->type = V_NUM;
        v->u.num = 1;
        return j_parse_literal(p, end, "true", 4);
    case 'f':
        v->type = V_NUM;
        v->u.num = 0;
        return j_parse_literal(p, end, "false", 5);
    case 'n':
        v->type = V_NULL;
        return j_parse_literal(p, end, "null", 4);
    default:
        if (is_dig((unsigned char)*p) || *p == '-' || *p == '+') {
            v->type = V_NUM;
            return j_parse_number(p, end, &v->u.num);
        }
        return NULL;
    }
}

/* Validate the array at p ('['): elements are scalars or arrays (any
 * depth, walked without recursion), separated by commas, no trailing
 * comma, no objects.  Returns the position after it, or NULL. */
static const char *j_check_array(const char *p, const char *end)
{
    size_t depth = 0;
    struct val tmp;
    for (;;) {
        /* p at '[' */
        depth++;
        p = j_spaces(p + 1, end);
        if (p < end && *p == ']') {
            p++;
            depth--;
            goto after_value;
        }
    value:
        p = j_spaces(p, end);
        if (p >= end)
            return NULL;
        if (*p == '[')
            continue;
        p = j_parse_scalar(p, end, &tmp, NULL);
        if (!p)
            return NULL;
    after_value:
        while (depth > 0) {
            p = j_spaces(p, end);
            if (p >= end)
                return NULL;
            if (*p == ',') {
                p++;
                goto value;
            }
            if (*p != ']')
                return NULL;
            p++;
            depth--;
        }
        return p;
    }
}

/* Walk the elements of an array already validated by j_check_array. */
struct jarr_it {
    const char *p, *end;
    int done;
};

static void jarr_begin(struct jarr_it *it, const struct val *arr)
{
    it->end = arr->u.s.p + arr->u.s.n;
    it->p = j_spaces(arr->u.s.p + 1, it->end);
    it->done = it->p >= it->end || *it->p == ']';
}

static int jarr_next(struct jarr_it *it, struct val *v, struct scratch *sc)
{
    if (it->done)
        return 0;
    const char *p = j_spaces(it->p, it->end), *q;
    if (p >= it->end)
        return it->done = 1, 0;
    if (*p == '[') {
        v->type = V_JARR;
        v->u.s.p = p;
        v->u.s.n = (size_t)(it->end - p);
        q = j_check_array(p, it->end);
    } else {
        q = j_parse_scalar(p, it->end, v, sc);
    }
    if (!q)
        return it->done = 1, 0;
    q = j_spaces(q, it->end);
    if (q < it->end && *q == ',')
        it->p = q + 1;
    else
        it->done = 1;
    return 1;
}

/* The value starting at p (after the key's ':' and spaces). */
static int j_parse_value(const char *p, const char *end, struct val *v, struct scratch *sc)
{
    if (*p == '[') {
        if (!j_check_array(p, end))
            return 0;
        v->type = V_JARR;
        v->u.s.p = p;
        v->u.s.n = (size_t)(end - p);
        return 1;
    }
    return j_parse_scalar(p, end, v, sc) != NULL;
}

static long find_field(const struct vexpr *e, const char *k, size_t kn)
{
    if (e->nfields <= 8) {
        for (size_t i = 0; i < e->nfields; i++)
            if (e->fields[i].n == kn && (kn == 0 || e->fields[i].p[0] == k[0]) &&
                memcmp(e->fields[i].p, k, kn) == 0)
                return (long)i;
        return -1;
    }
    size_t lo = 0, hi = e->nfields;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = fname_cmp(e->fields[mid].p, e->fields[mid].n, k, kn);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Find and parse every field the expression reads; 0 if one is missing or
 * does not parse.  at[] holds NULL on entry. */
static int resolve_fields(const struct vexpr *e, const char *json, size_t jlen, struct val *fv,
                          const char **at, struct scratch *sc)
{
    const char *end = json + jlen;
    const char *p = j_spaces(json, end);
    size_t missing = e->nfields;
    if (p >= end || *p != '{')
        return 0;
    p++;
    while (missing > 0) {
        p = j_spaces(p, end);
        if (p >= end || *p != '"')
            return 0; /* includes '}': the object ended first */
        const char *key = p + 1;
        p = j_skip_string(p, end);
        if (!p)
            return 0;
        size_t kn = (size_t)(p - 1 - key);
        p = j_spaces(p, end);
        if (p >= end || *p != ':')
            return 0;
        p = j_spaces(p + 1, end);
        if (p >= end)
            return 0;
        long f = find_field(e, key, kn);
        if (f >= 0 && !at[f]) {
            at[f] = p;
            if (--missing == 0)
                break;
        }
        p = j_skip_value(p, end);
        if (!p)
            return 0;
        p = j_spaces(p, end);
        if (p >= end || *p != ',')
            return 0;
        p++;
    }
    for (size_t i = 0; i < e->nfields; i++)
        if (!j_parse_value(at[i], end, &fv[i], sc))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Evaluation. */

static double to_num(const struct val *v)
{
    if (v->type == V_NUM)
        return v->u.num;
    if (v->type != V_STR || v->u.s.n >= 256)
        return 0;
    char buf[256];
    memcpy(buf, v->u.s.p, v->u.s.n);
    buf[v->u.s.n] = '\0';
    char *ep;
    double d = strtod(buf, &ep);
    return *ep == '\0' ? d : 0;
}

static int truth(const struct val *v)
{
    switch (v->type) {
    case V_NUM:
        return v->u.num != 0;
    case V_STR:
        return v->u.s.n != 0;
    case V_NULL:
        return 0;
    default:
        return 1;
    }
}

static int equal(const struct val *a, const struct val *b)
{
    if (a->type == V_STR && b->type == V_STR)
        return a->u.s.n == b->u.s.n && (a->u.s.n == 0 || memcmp(a->u.s.p, b->u.s.p, a->u.s.n) == 0);
    if (a->type == V_NUM && b->type == V_NUM)
        return a->u.num == b->u.num;
    if (a->type == V_NULL || b->type == V_NULL)
        return a->type == b->type;
    return to_num(a) == to_num(b);
}

static int in_op(const struct val *a, const struct val *b, struct scratch *sc)
{
    if (b->type == V_TUP) {
        for (size_t i = 0; i < b->u.tup->n; i++)
            if (equal(a, &b->u.tup->v[i]))
                return 1;
        return 0;
    }
    if (b->type == V_JARR) {
        struct jarr_it it;
        struct val el;
        int found = 0;
        jarr_begin(&it, b);
        for (;;) {
            struct mark m = {sc->used, sc->heap};
            if (!jarr_next(&it, &el, sc))
                break;
            found = equal(a, &el);
            scratch_release(sc, m);
            if (found)
                break;
        }
        return found;
    }
    if (a->type == V_STR && b->type == V_STR) {
        if (a->u.s.n == 0)
            return 1;
        if (a->u.s.n > b->u.s.n)
            return 0;
        return memmem(b->u.s.p, b->u.s.n, a->u.s.p, a->u.s.n) != NULL;
    }
    return 0;
}

#define LOCAL_STACK 48
#define LOCAL_FIELDS 16

static int run(const struct vexpr *e, const struct val *fv, struct scratch *sc)
{
    struct val local[LOCAL_STACK];
    struct val *st = e->maxdepth <= LOCAL_STACK ? local : hk_malloc(e->maxdepth * sizeof(*st));
    size_t sp = 0;
    for (size_t i = 0; i < e->ncode; i++) {
        const struct insn *in = &e->code[i];
        struct val *a;
        const struct val *b;
        double r;
        switch (in->op) {
        case I_PUSH:
            st[sp++] = in->k;
            continue;
        case I_FIELD:
            st[sp++] = fv[in->field];
            continue;
        case OP_NOT:
            a = &st[sp - 1];
            r = !truth(a);
            a->type = V_NUM;
            a->u.num = r;
            continue;
        default:
            break;
        }
        b = &st[--sp];
        a = &st[sp - 1];
        switch (in->op) {
        case OP_POW: r = pow(to_num(a), to_num(b)); break;
        case OP_MUL: r = to_num(a) * to_num(b); break;
        case OP_DIV: r = to_num(a) / to_num(b); break;
        case OP_MOD: r = fmod(to_num(a), to_num(b)); break;
        case OP_ADD: r = to_num(a) + to_num(b); break;
        case OP_SUB: r = to_num(a) - to_num(b); break;
        case OP_GT: r = to_num(a) > to_num(b); break;
        case OP_GE: r = to_num(a) >= to_num(b); break;
        case OP_LT: r = to_num(a) < to_num(b); break;
        case OP_LE: r = to_num(a) <= to_num(b); break;
        case OP_EQ: r = equal(a, b); break;
        case OP_NE: r = !equal(a, b); break;
        case OP_IN: r = in_op(a, b, sc); break;
        case OP_AND: r = truth(a) && truth(b); break;
        case OP_OR: r = truth(a) || truth(b); break;
        default: r = 0; break;
        }
        a->type = V_NUM;
        a->u.num = r;
    }
    int res = sp > 0 && truth(&st[0]);
    if (st != local)
        hk_free(st);
    return res;
}

int vexpr_eval(const struct vexpr *e, const char *json, size_t jlen)
{
    if (!json || e->never)
        return 0; /* no attributes: no match */
    struct scratch sc;
    sc.used = 0;
    sc.heap = NULL;
    struct val fv_local[LOCAL_FIELDS];
    const char *at_local[LOCAL_FIELDS];
    struct val *fv = fv_local;
    const char **at = at_local;
    if (e->nfields > LOCAL_FIELDS) {
        fv = hk_malloc(e->nfields * sizeof(*fv));
        at = hk_malloc(e->nfields * sizeof(*at));
    }
    int res = 0;
    if (e->nfields)
        memset(at, 0, e->nfields * sizeof(*at));
    if (e->nfields == 0 || resolve_fields(e, json, jlen, fv, at, &sc))
        res = run(e, fv, &sc);
    scratch_release(&sc, (struct mark){0, NULL});
    if (fv != fv_local) {
        hk_free(fv);
        hk_free(at);
    }
    return res;
}
