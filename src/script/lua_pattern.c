/* lua_pattern.c - string.find, string.match, string.gmatch and string.gsub
 * for the script VMs: Lua 5.1 pattern matching (reference manual §5.4.1),
 * implemented here rather than taken from the system liblua5.1 so that a
 * long match can be interrupted.
 *
 * Why.  Lua runs a count hook only between VM instructions; a pattern with
 * nested quantifiers can keep the stock matcher busy inside one C call for
 * hours, where neither the busy-script machinery nor SCRIPT KILL can reach
 * it.  This matcher counts its steps and every PAT_TICK_STEPS of them calls
 * the hook installed on the running thread (hk_lua_tick), which is the
 * engine's own check: elapsed time, the busy state, serving the worker's
 * other connections, and raising the kill error.  It is also bounded in C
 * recursion (PAT_MAXDEPTH nested items, else "pattern too complex").
 *
 * Semantics follow stock Lua 5.1 exactly, including its error messages and
 * corner cases (a pattern ends at its first NUL byte; find/match clamp init
 * to the subject length; gmatch has no anchor; in a gsub replacement string
 * '%' before a non-digit yields that character), except that the result of
 * gsub is limited to proto-max-bulk-len bytes and that a back-reference to
 * a position capture matches the empty string (stock Lua reads past the
 * subject there).  tests/unit/test_lua_pattern.c compares the two. */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "script_int.h"

#define PAT_ESC '%'
#define PAT_MAXCAPS 32     /* LUA_MAXCAPTURES */
#define PAT_MAXDEPTH 200   /* nested items, as LUAI_MAXCCALLS */
#define PAT_TICK_STEPS 4096

#define CAP_OPEN (-1)     /* capture started, not closed yet */
#define CAP_POSITION (-2) /* "()" */

struct pcap {
    const char *at;
    ptrdiff_t len; /* >= 0, CAP_OPEN or CAP_POSITION */
};

struct mstate {
    lua_State *L;
    const char *subj;     /* subject start */
    const char *subj_end; /* one past its last byte */
    int ncap;
    int depth;
    unsigned steps;
    size_t out; /* gsub: bytes produced so far */
    struct pcap cap[PAT_MAXCAPS];
};

static const char *pm_match(struct mstate *m, const char *s, const char *p);

/* ------------------------------------------------------------ limits --- */
void hk_lua_tick(lua_State *L)
{
    lua_Hook h = lua_gethook(L);
    /* The engine's hooks (count_hook, kill_hook, load_hook) ignore their
     * lua_Debug argument. */
    if (h && (lua_gethookmask(L) & (LUA_MASKCOUNT | LUA_MASKLINE)))
        h(L, NULL);
}

size_t hk_lua_max_string(void)
{
    long long v = __atomic_load_n(&cfg.proto_max_bulk_len, __ATOMIC_RELAXED); /* CONFIG SET */
    if (v <= 0)
        v = 512LL * 1024 * 1024;
    return (size_t)v;
}

static inline void pm_step(struct mstate *m)
{
    if (++m->steps >= PAT_TICK_STEPS) {
        m->steps = 0;
        hk_lua_tick(m->L);
    }
}

static void pm_reset(struct mstate *m)
{
    m->ncap = 0;
    m->depth = 0;
}

static void pm_init(struct mstate *m, lua_State *L, const char *s, size_t len)
{
    m->L = L;
    m->subj = s;
    m->subj_end = s + len;
    m->steps = 0;
    m->out = 0;
    pm_reset(m);
}

/* ----------------------------------------------------- single classes --- */
/* Does byte c belong to class letter cl (%a, %D, ...)?  Any other letter
 * stands for itself. */
static int pm_class(int c, int cl)
{
    int in;
    switch (tolower(cl)) {
    case 'a': in = isalpha(c); break;
    case 'c': in = iscntrl(c); break;
    case 'd': in = isdigit(c); break;
    case 'l': in = islower(c); break;
    case 'p': in = ispunct(c); break;
    case 's': in = isspace(c); break;
    case 'u': in = isupper(c); break;
    case 'w': in = isalnum(c); break;
    case 'x': in = isxdigit(c); break;
    case 'z': in = (c == 0); break;
    default: return cl == c;
    }
    in = in != 0;
    return isupper(cl) ? !in : in;
}

/* Set [..] from open (its '[') to close (its ']'). */
static int pm_set(int c, const char *open, const char *close)
{
    const char *q = open + 1;
    int hit = 1;
    if (*q == '^') {
        hit = 0;
        q++;
    }
    while (q < close) {
        unsigned char a = (unsigned char)q[0];
        if (a == PAT_ESC) {
            if (pm_class(c, (unsigned char)q[1]))
                return hit;
            q += 2;
        } else if (q[1] == '-' && q + 2 < close) {
            if (a <= c && c <= (unsigned char)q[2])
                return hit;
            q += 3;
        } else {
            if (a == c)
                return hit;
            q++;
        }
    }
    return !hit;
}

/* One past the single-character class starting at p. */
static const char *pm_class_end(struct mstate *m, const char *p)
{
    char first = *p++;
    if (first == PAT_ESC) {
        if (*p == '\0')
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (first != '[')
        return p;
    if (*p == '^')
        p++;
    /* The byte right after "[" or "[^" is a member even when it is ']'. */
    for (;;) {
        if (*p == '\0')
            luaL_error(m->L, "malformed pattern (missing ']')");
        char ch = *p++;
        if (ch == PAT_ESC && *p != '\0')
            p++;
        if (*p == ']')
            return p + 1;
    }
}

/* Does the byte at s (if any) match the class [p, ep)? */
static int pm_single(struct mstate *m, const char *s, const char *p, const char *ep)
{
    if (s >= m->subj_end)
        return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.':
        return 1;
    case PAT_ESC:
        return pm_class(c, (unsigned char)p[1]);
    case '[':
        return pm_set(c, p, ep - 1);
    default:
        return (unsigned char)*p == c;
    }
}

/* ------------------------------------------------------ pattern items --- */
/* %bxy at s; p points at x. */
static const char *pm_balance(struct mstate *m, const char *s, const char *p)
{
    if (p[0] == '\0' || p[1] == '\0')
        luaL_error(m->L, "unbalanced pattern");
    if (s >= m->subj_end || *s != p[0])
        return NULL;
    char open = p[0], close = p[1];
    size_t level = 1;
    for (s++; s < m->subj_end; s++) {
        pm_step(m);
        if (*s == close) {
            if (--level == 0)
                return s + 1;
        } else if (*s == open) {
            level++;
        }
    }
    return NULL;
}

/* %1 .. %9 at s. */
static const char *pm_backref(struct mstate *m, const char *s, int digit)
{
    int i = digit - '1';
    if (i < 0 || i >= m->ncap || m->cap[i].len == CAP_OPEN)
        luaL_error(m->L, "invalid capture index");
    size_t len = m->cap[i].len == CAP_POSITION ? 0 : (size_t)m->cap[i].len;
    if ((size_t)(m->subj_end - s) < len || memcmp(m->cap[i].at, s, len) != 0)
        return NULL;
    return s + len;
}

/* Greedy repetition (* and +): the longest run first, then shorter. */
static const char *pm_greedy(struct mstate *m, const char *s, const char *p, const char *ep)
{
    size_t run = 0;
    while (pm_single(m, s + run, p, ep)) {
        run++;
        pm_step(m);
    }
    for (;;) {
        const char *r = pm_match(m, s + run, ep + 1);
        if (r || run == 0)
            return r;
        run--;
    }
}

/* Lazy repetition (-): the shortest run first. */
static const char *pm_lazy(struct mstate *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = pm_match(m, s, ep + 1);
        if (r)
            return r;
        if (!pm_single(m, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *pm_open_capture(struct mstate *m, const char *s, const char *p, ptrdiff_t kind)
{
    if (m->ncap >= PAT_MAXCAPS)
        luaL_error(m->L, "too many captures");
    int i = m->ncap++;
    m->cap[i].at = s;
    m->cap[i].len = kind;
    const char *r = pm_match(m, s, p);
    if (!r)
        m->ncap = i;
    return r;
}

static const char *pm_close_capture(struct mstate *m, const char *s, const char *p)
{
    int i = m->ncap - 1;
    while (i >= 0 && m->cap[i].len != CAP_OPEN)
        i--;
    if (i < 0)
        luaL_error(m->L, "invalid pattern capture");
    m->cap[i].len = s - m->cap[i].at;
    const char *r = pm_match(m, s, p);
    if (!r)
        m->cap[i].len = CAP_OPEN;
    return r;
}

/* Match pattern p (up to its NUL) at s: the end of the match or NULL.
 * Items that need backtracking recurse; plain items loop. */
static const char *pm_match(struct mstate *m, const char *s, const char *p)
{
    if (++m->depth > PAT_MAXDEPTH)
        luaL_error(m->L, "pattern too complex");
    const char *res;
    for (;;) {
        pm_step(m);
        char pc = p[0];
        if (pc == '\0') {
            res = s;
            break;
        }
        if (pc == '(') {
            res = p[1] == ')' ? pm_open_capture(m, s, p + 2, CAP_POSITION)
                              : pm_open_capture(m, s, p + 1, CAP_OPEN);
            break;
        }
        if (pc == ')') {
            res = pm_close_capture(m, s, p + 1);
            break;
        }
        if (pc == '$' && p[1] == '\0') {
            res = s == m->subj_end ? s : NULL;
            break;
        }
        if (pc == PAT_ESC && p[1] == 'b') {
            s = pm_balance(m, s, p + 2);
            if (!s) {
                res = NULL;
                break;
            }
            p += 4;
            continue;
        }
        if (pc == PAT_ESC && p[1] == 'f') {
            p += 2;
            if (*p != '[')
                luaL_error(m->L, "missing '[' after '%%f' in pattern");
            const char *ep = pm_class_end(m, p);
            int before = s == m->subj ? 0 : (unsigned char)s[-1];
            int here = s < m->subj_end ? (unsigned char)*s : 0;
            if (pm_set(before, p, ep - 1) || !pm_set(here, p, ep - 1)) {
                res = NULL;
                break;
            }
            p = ep;
            continue;
        }
        if (pc == PAT_ESC && isdigit((unsigned char)p[1])) {
            s = pm_backref(m, s, (unsigned char)p[1]);
            if (!s) {
                res = NULL;
                break;
            }
            p += 2;
            continue;
        }
        /* A single-character class, perhaps with a quantifier. */
        const char *ep = pm_class_end(m, p);
        int ok = pm_single(m, s, p, ep);
        char q = *ep;
        if (q == '?') {
            if (ok && (res = pm_match(m, s + 1, ep + 1)) != NULL)
                break;
            p = ep + 1;
            continue;
        }
        if (q == '*') {
            res = pm_greedy(m, s, p, ep);
            break;
        }
        if (q == '+') {
            res = ok ? pm_greedy(m, s + 1, p, ep) : NULL;
            break;
        }
        if (q == '-') {
            res = pm_lazy(m, s, p, ep);
            break;
        }
        if (!ok) {
            res = NULL;
            break;
        }
        s++;
        p = ep;
    }
    m->depth--;
    return res;
}

/* ----------------------------------------------------------- captures --- */
static void pm_push_capture(struct mstate *m, int i, const char *s, const char *e)
{
    if (i >= m->ncap) {
        if (i != 0)
            luaL_error(m->L, "invalid capture index");
        lua_pushlstring(m->L, s, (size_t)(e - s)); /* the whole match */
        return;
    }
    ptrdiff_t len = m->cap[i].len;
    if (len == CAP_OPEN)
        luaL_error(m->L, "unfinished capture");
    if (len == CAP_POSITION)
        lua_pushinteger(m->L, (lua_Integer)(m->cap[i].at - m->subj + 1));
    else
        lua_pushlstring(m->L, m->cap[i].at, (size_t)len);
}

/* Push the captures (or, with none and s given, the whole match). */
static int pm_push_captures(struct mstate *m, const char *s, const char *e)
{
    int n = (m->ncap == 0 && s) ? 1 : m->ncap;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        pm_push_capture(m, i, s, e);
    return n;
}

/* ------------------------------------------------------- find / match --- */
static int pm_has_specials(const char *p)
{
    for (; *p; p++)
        if (strchr("^$*+?.([%-", *p))
            return 1;
    return 0;
}

/* 1-based, negative from the end; 0 for anything before the start. */
static ptrdiff_t pm_relpos(lua_Integer pos, size_t len)
{
    if (pos < 0)
        pos += (lua_Integer)len + 1;
    return pos >= 0 ? (ptrdiff_t)pos : 0;
}

static int pm_find_aux(lua_State *L, int find)
{
    size_t slen, plen;
    const char *s = luaL_checklstring(L, 1, &slen);
    const char *p = luaL_checklstring(L, 2, &plen);
    ptrdiff_t init = pm_relpos(luaL_optinteger(L, 3, 1), slen) - 1;
    if (init < 0)
        init = 0;
    else if ((size_t)init > slen)
        init = (ptrdiff_t)slen;

    if (find && (lua_toboolean(L, 4) || !pm_has_specials(p))) {
        /* Plain substring search (the whole pattern, NULs included). */
        const char *hit = plen == 0 ? s + init : memmem(s + init, slen - (size_t)init, p, plen);
        if (!hit) {
            lua_pushnil(L);
            return 1;
        }
        lua_pushinteger(L, (lua_Integer)(hit - s + 1));
        lua_pushinteger(L, (lua_Integer)(hit - s + (ptrdiff_t)plen));
        return 2;
    }

    struct mstate m;
    pm_init(&m, L, s, slen);
    int anchored = *p == '^';
    if (anchored)
        p++;
    for (size_t at = (size_t)init; at <= slen; at++) {
        pm_reset(&m);
        const char *e = pm_match(&m, s + at, p);
        if (e) {
            if (!find)
                return pm_push_captures(&m, s + at, e);
            lua_pushinteger(L, (lua_Integer)at + 1);
            lua_pushinteger(L, (lua_Integer)(e - s));
            return pm_push_captures(&m, NULL, NULL) + 2;
        }
        if (anchored)
            break;
    }
    lua_pushnil(L);
    return 1;
}

int hk_str_find(lua_State *L)
{
    return pm_find_aux(L, 1);
}

int hk_str_match(lua_State *L)
{
    return pm_find_aux(L, 0);
}

/* ------------------------------------------------------------- gmatch --- */
/* Upvalues: subject, pattern, where the next search starts (0-based). */
static int pm_gmatch_next(lua_State *L)
{
    size_t slen;
    const char *s = lua_tolstring(L, lua_upvalueindex(1), &slen);
    const char *p = lua_tostring(L, lua_upvalueindex(2));
    lua_Integer from = lua_tointeger(L, lua_upvalueindex(3));
    struct mstate m;
    pm_init(&m, L, s, slen);
    for (lua_Integer at = from; at >= 0 && (size_t)at <= slen; at++) {
        pm_reset(&m);
        const char *e = pm_match(&m, s + at, p);
        if (e) {
            lua_Integer next = (lua_Integer)(e - s);
            if (e == s + at)
                next++; /* empty match: move on at least one byte */
            lua_pushinteger(L, next);
            lua_replace(L, lua_upvalueindex(3));
            return pm_push_captures(&m, s + at, e);
        }
    }
    return 0;
}

int hk_str_gmatch(lua_State *L)
{
    luaL_checkstring(L, 1);
    luaL_checkstring(L, 2);
    lua_settop(L, 2);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, pm_gmatch_next, 3);
    return 1;
}

/* --------------------------------------------------------------- gsub --- */
static void pm_out(struct mstate *m, size_t n)
{
    if (n > hk_lua_max_string() - m->out)
        luaL_error(m->L, "resulting string too large");
    m->out += n;
}

/* Replacement string (argument 3) for the match [s, e). */
static void pm_add_string(struct mstate *m, luaL_Buffer *b, const char *s, const char *e)
{
    size_t rlen;
    const char *r = lua_tolstring(m->L, 3, &rlen);
    for (size_t i = 0; i < rlen; i++) {
        char c = r[i];
        if (c != PAT_ESC) {
            pm_out(m, 1);
            luaL_addchar(b, c);
            continue;
        }
        c = r[++i]; /* r[rlen] is the terminating NUL */
        if (!isdigit((unsigned char)c)) {
            pm_out(m, 1);
            luaL_addchar(b, c);
        } else if (c == '0') {
            pm_out(m, (size_t)(e - s));
            luaL_addlstring(b, s, (size_t)(e - s));
        } else {
            size_t n;
            pm_push_capture(m, c - '1', s, e);
            lua_tolstring(m->L, -1, &n);
            pm_out(m, n);
            luaL_addvalue(b);
        }
    }
}

static void pm_add_value(struct mstate *m, luaL_Buffer *b, const char *s, const char *e)
{
    lua_State *L = m->L;
    int t = lua_type(L, 3);
    if (t == LUA_TNUMBER || t == LUA_TSTRING) {
        pm_add_string(m, b, s, e);
        return;
    }
    if (t == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = pm_push_captures(m, s, e);
        lua_call(L, n, 1);
    } else { /* table */
        pm_push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    }
    if (!lua_toboolean(L, -1)) { /* nil or false: keep the match */
        lua_pop(L, 1);
        lua_pushlstring(L, s, (size_t)(e - s));
    } else if (!lua_isstring(L, -1)) {
        luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    }
    size_t n;
    lua_tolstring(L, -1, &n);
    pm_out(m, n);
    luaL_addvalue(b);
}

int hk_str_gsub(lua_State *L)
{
    size_t slen;
    const char *src = luaL_checklstring(L, 1, &slen);
    const char *p = luaL_checkstring(L, 2);
    int rt = lua_type(L, 3);
    int max_n = luaL_optint(L, 4, (int)(slen + 1));
    luaL_argcheck(L, rt == LUA_TNUMBER || rt == LUA_TSTRING || rt == LUA_TFUNCTION || rt == LUA_TTABLE, 3,
                  "string/function/table expected");
    int anchored = *p == '^';
    if (anchored)
        p++;
    struct mstate m;
    pm_init(&m, L, src, slen);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int n = 0;
    while (n < max_n) {
        pm_reset(&m);
        const char *e = pm_match(&m, src, p);
        if (e) {
            n++;
            pm_add_value(&m, &b, src, e);
        }
        if (e && e > src) {
            src = e;
        } else if (src < m.subj_end) {
            pm_out(&m, 1);
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchored)
            break;
    }
    pm_out(&m, (size_t)(m.subj_end - src));
    luaL_addlstring(&b, src, (size_t)(m.subj_end - src));
    luaL_pushresult(&b);
    lua_pushinteger(L, n);
    return 2;
}

void hk_lua_pattern_register(lua_State *L, int idx)
{
    static const luaL_Reg fns[] = {
        {"find", hk_str_find}, {"match", hk_str_match}, {"gmatch", hk_str_gmatch}, {"gsub", hk_str_gsub},
        {NULL, NULL},
    };
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushcfunction(L, f->func);
        lua_setfield(L, idx, f->name);
    }
}
