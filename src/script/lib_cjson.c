/* lib_cjson.c - the `cjson` library for scripts: JSON encoding and decoding
 * with the behaviour of lua-cjson 2.1.0 as bundled with Redis 7.
 *
 * cjson.encode(v) / cjson.decode(s), the settings encode_sparse_array,
 * encode_max_depth, decode_max_depth, encode_number_precision,
 * encode_keep_buffer, encode_invalid_numbers, decode_invalid_numbers (each
 * returns the current setting after applying any arguments), cjson.new()
 * (an independent copy with its own settings), cjson.null (a NULL light
 * userdata that encodes as null and is what null decodes to), _NAME and
 * _VERSION.
 *
 * Encoding: strings are quoted with \" \\ \/ \b \f \n \r \t escaped, the
 * other control bytes and DEL as \u00XX, other bytes as they are; numbers
 * with "%.14g" (encode_number_precision), NaN and infinities rejected by
 * default; a table whose keys are all positive integers is an array (holes
 * as null) unless it is excessively sparse (largest key > ratio * count and
 * > safe: an error by default); any other table is an object whose number
 * keys are quoted; the empty table is {}.  Nesting deeper than
 * encode_max_depth (1000) is an error.
 * Decoding: standard JSON plus, with decode_invalid_numbers (on by
 * default), what strtod() accepts in number position (hex, inf, nan, a
 * leading '+' or zeros); \uXXXX escapes (with UTF-16 surrogate pairs) are
 * converted to UTF-8; arrays become tables with keys 1..n.  Errors read
 * "Expected <what> but found <token> at character <n>".
 *
 * Extensions from the OpenResty lua-cjson (not in Redis 7.0, inert by
 * default): cjson.array_mt (a table with this metatable always encodes as
 * an array), cjson.empty_array_mt (an empty table with it encodes as []),
 * cjson.encode_empty_table_as_object (default on: {} for an empty table)
 * and cjson.decode_array_with_array_mt (default off: decoded arrays get
 * array_mt). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>
#include <lua.h>

#include "libs.h"

#define CJ_NAME "cjson"
#define CJ_VERSION "2.1.0"

/* Registry keys of the two shared metatables. */
static const char cj_array_mt_key = 'a';
static const char cj_empty_array_mt_key = 'e';

struct cj_buf {
    char *p;
    size_t len, cap;
};

/* Per-module settings (upvalue of every function of one cjson table). */
struct cj_cfg {
    int sparse_convert;
    int sparse_ratio;
    int sparse_safe;
    int encode_max_depth;
    int decode_max_depth;
    int encode_invalid; /* 0 off (error), 1 on, 2 as null */
    int decode_invalid;
    int keep_buffer;
    int precision;
    int empty_table_as_object;
    int decode_array_mt;
    struct cj_buf out; /* encoder output, reused when keep_buffer is on */
    char *scratch;     /* decoder: text of the string being decoded */
    size_t scratch_cap;
};

/* The decoder's scratch space is kept between calls (it does not use the
 * Lua stack, whose depth decides where deep nesting fails) unless large. */
#define CJ_SCRATCH_KEEP 65536

static void cj_scratch_trim(struct cj_cfg *cfg)
{
    if (cfg->scratch_cap > CJ_SCRATCH_KEEP) {
        free(cfg->scratch);
        cfg->scratch = NULL;
        cfg->scratch_cap = 0;
    }
}

static struct cj_cfg *cj_config(lua_State *L)
{
    struct cj_cfg *cfg = lua_touserdata(L, lua_upvalueindex(1));
    if (!cfg)
        luaL_error(L, "BUG: Unable to fetch CJSON configuration");
    return cfg;
}

static int cj_cfg_gc(lua_State *L)
{
    struct cj_cfg *cfg = lua_touserdata(L, 1);
    if (cfg) {
        free(cfg->out.p);
        cfg->out.p = NULL;
        cfg->out.len = cfg->out.cap = 0;
        free(cfg->scratch);
        cfg->scratch = NULL;
        cfg->scratch_cap = 0;
    }
    return 0;
}

/* ---- settings ---------------------------------------------------------- */

/* Checks there are at most nargs arguments and pads the stack with nils. */
static struct cj_cfg *cj_setting_args(lua_State *L, int nargs)
{
    luaL_argcheck(L, lua_gettop(L) <= nargs, nargs + 1, "found too many arguments");
    while (lua_gettop(L) < nargs)
        lua_pushnil(L);
    return cj_config(L);
}

/* An integer setting in [min, max]; pushes the (new) value. */
static void cj_int_setting(lua_State *L, int idx, int *setting, int min, int max)
{
    if (!lua_isnil(L, idx)) {
        lua_Integer v = luaL_checkinteger(L, idx);
        char msg[64];
        snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
        luaL_argcheck(L, v >= min && v <= max, 1, msg);
        *setting = (int)v;
    }
    lua_pushinteger(L, *setting);
}

/* An option setting: a boolean (false = 0, true = 1) or one of the names
 * in opts (NULL: "off", "on").  Pushes the value back, as a boolean when it
 * is 0 or 1, else as its name. */
static void cj_enum_setting(lua_State *L, int idx, int *setting, const char *const *opts)
{
    static const char *const onoff[] = {"off", "on", NULL};
    if (!opts)
        opts = onoff;
    if (!lua_isnil(L, idx)) {
        if (lua_isboolean(L, idx))
            *setting = lua_toboolean(L, idx);
        else
            *setting = luaL_checkoption(L, idx, NULL, opts);
    }
    if (*setting == 0 || *setting == 1)
        lua_pushboolean(L, *setting);
    else
        lua_pushstring(L, opts[*setting]);
}

static int cj_encode_sparse_array(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 3);
    cj_enum_setting(L, 1, &cfg->sparse_convert, NULL);
    cj_int_setting(L, 2, &cfg->sparse_ratio, 0, INT_MAX);
    cj_int_setting(L, 3, &cfg->sparse_safe, 0, INT_MAX);
    return 3;
}

static int cj_encode_max_depth(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_int_setting(L, 1, &cfg->encode_max_depth, 1, INT_MAX);
    return 1;
}

static int cj_decode_max_depth(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_int_setting(L, 1, &cfg->decode_max_depth, 1, INT_MAX);
    return 1;
}

static int cj_encode_number_precision(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_int_setting(L, 1, &cfg->precision, 1, 14);
    return 1;
}

static int cj_encode_keep_buffer(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_enum_setting(L, 1, &cfg->keep_buffer, NULL);
    if (!cfg->keep_buffer) {
        free(cfg->out.p);
        cfg->out.p = NULL;
        cfg->out.len = cfg->out.cap = 0;
    }
    return 1;
}

static int cj_encode_invalid_numbers(lua_State *L)
{
    static const char *const opts[] = {"off", "on", "null", NULL};
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_enum_setting(L, 1, &cfg->encode_invalid, opts);
    return 1;
}

static int cj_decode_invalid_numbers(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_enum_setting(L, 1, &cfg->decode_invalid, NULL);
    return 1;
}

static int cj_encode_empty_table_as_object(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_enum_setting(L, 1, &cfg->empty_table_as_object, NULL);
    return 1;
}

static int cj_decode_array_with_array_mt(lua_State *L)
{
    struct cj_cfg *cfg = cj_setting_args(L, 1);
    cj_enum_setting(L, 1, &cfg->decode_array_mt, NULL);
    return 1;
}

/* ---- encoding ---------------------------------------------------------- */

struct cj_enc {
    lua_State *L;
    struct cj_cfg *cfg;
    struct cj_buf *b;
    unsigned steps; /* values encoded: every CJ_TICK_STEPS the busy/kill check */
};

/* Sandbox (script_int.h): the busy/kill check of the running script, and
 * the output bound (proto-max-bulk-len).  A table graph that reuses the
 * same subtables can describe an output far larger than memory. */
void hk_lua_tick(lua_State *L);
size_t hk_lua_max_string(void);
#define CJ_TICK_STEPS 4096

static void cj_release_output(struct cj_enc *e)
{
    if (!e->cfg->keep_buffer) {
        free(e->b->p);
        e->b->p = NULL;
        e->b->len = e->b->cap = 0;
    }
}

static void cj_reserve(struct cj_enc *e, size_t n)
{
    struct cj_buf *b = e->b;
    size_t cap;
    char *np;

    if (b->cap - b->len >= n)
        return;
    if (n > hk_lua_max_string() - b->len) {
        cj_release_output(e);
        luaL_error(e->L, "Cannot serialise: output larger than proto-max-bulk-len");
    }
    cap = b->cap ? b->cap : 1024;
    while (cap - b->len < n) {
        if (cap > ((size_t)-1) / 2) {
            cj_release_output(e);
            luaL_error(e->L, "Out of memory");
        }
        cap *= 2;
    }
    np = realloc(b->p, cap);
    if (!np) {
        cj_release_output(e);
        luaL_error(e->L, "Out of memory");
    }
    b->p = np;
    b->cap = cap;
}

static void cj_put(struct cj_enc *e, const char *s, size_t n)
{
    cj_reserve(e, n);
    memcpy(e->b->p + e->b->len, s, n);
    e->b->len += n;
}

static void cj_putc(struct cj_enc *e, char c)
{
    cj_reserve(e, 1);
    e->b->p[e->b->len++] = c;
}

/* "Cannot serialise <type of the value at idx>: <why>". */
static void cj_encode_error(struct cj_enc *e, int idx, const char *why)
{
    cj_release_output(e);
    luaL_error(e->L, "Cannot serialise %s: %s", luaL_typename(e->L, idx), why);
}

static void cj_put_string(struct cj_enc *e, int idx)
{
    static const char hex[] = "0123456789abcdef";
    size_t len;
    const char *s = lua_tolstring(e->L, idx, &len);

    cj_reserve(e, len + 2);
    cj_putc(e, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '/': esc = "\\/"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: break;
        }
        if (esc) {
            cj_put(e, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            cj_put(e, u, sizeof(u));
        } else {
            cj_putc(e, (char)c);
        }
    }
    cj_putc(e, '"');
}

static void cj_put_number(struct cj_enc *e, int idx)
{
    double d = (double)lua_tonumber(e->L, idx);
    char num[64];
    int n;

    if (isinf(d) || isnan(d)) {
        if (e->cfg->encode_invalid == 0)
            cj_encode_error(e, idx, "must not be NaN or Inf");
        if (e->cfg->encode_invalid == 2) {
            cj_put(e, "null", 4);
            return;
        }
        if (isnan(d)) { /* never "-nan" */
            cj_put(e, "nan", 3);
            return;
        }
    }
    n = snprintf(num, sizeof(num), "%.*g", e->cfg->precision, d);
    cj_put(e, num, (size_t)n);
}

/* 1 if the table at idx has the registry metatable stored under key. */
static int cj_has_mt(lua_State *L, int idx, const void *key)
{
    int same;
    if (!lua_getmetatable(L, idx))
        return 0;
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    return same;
}

/* For the table at the top of the stack: its largest key when every key
 * is a positive integer (0 for the empty table), -1 when it must be an
 * object.  An excessively sparse array is an error, or an object when
 * encode_sparse_array(true). */
static long long cj_array_length(struct cj_enc *e)
{
    lua_State *L = e->L;
    int max = 0, items = 0;

    lua_pushnil(L);
    while (lua_next(L, -2)) {
        double k;
        if (lua_type(L, -2) == LUA_TNUMBER && (k = (double)lua_tonumber(L, -2)) != 0 &&
            floor(k) == k && k >= 1) {
            /* The key is kept in an int as lua-cjson does, where a key of
             * 2^31 or more comes out as INT_MIN (x86-64) and so makes
             * the table an object. */
            if (k > max)
                max = k < 2147483648.0 ? (int)k : INT_MIN;
            items++;
            lua_pop(L, 1);
            continue;
        }
        lua_pop(L, 2);
        return -1;
    }
    if (e->cfg->sparse_ratio > 0 && max > (long long)items * e->cfg->sparse_ratio &&
        max > e->cfg->sparse_safe) {
        if (!e->cfg->sparse_convert)
            cj_encode_error(e, -1, "excessively sparse array");
        return -1;
    }
    return max;
}

static void cj_encode_value(struct cj_enc *e, int depth);

static void cj_put_array(struct cj_enc *e, int depth, long long len)
{
    cj_putc(e, '[');
    for (long long i = 1; i <= len; i++) {
        if (i > 1)
            cj_putc(e, ',');
        lua_rawgeti(e->L, -1, (int)i);
        cj_encode_value(e, depth);
        lua_pop(e->L, 1);
    }
    cj_putc(e, ']');
}

static void cj_put_object(struct cj_enc *e, int depth)
{
    lua_State *L = e->L;
    int first = 1;

    cj_putc(e, '{');
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        int kt = lua_type(L, -2);
        if (!first)
            cj_putc(e, ',');
        first = 0;
        if (kt == LUA_TNUMBER) {
            cj_putc(e, '"');
            cj_put_number(e, -2);
            cj_put(e, "\":", 2);
        } else if (kt == LUA_TSTRING) {
            cj_put_string(e, -2);
            cj_putc(e, ':');
        } else {
            cj_encode_error(e, -2, "table key must be a number or string");
        }
        cj_encode_value(e, depth);
        lua_pop(L, 1);
    }
    cj_putc(e, '}');
}

static void cj_put_table(struct cj_enc *e, int depth)
{
    lua_State *L = e->L;
    long long len;

    depth++;
    if (depth > e->cfg->encode_max_depth || !lua_checkstack(L, 3)) {
        cj_release_output(e);
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
    }
    if (cj_has_mt(L, -1, &cj_array_mt_key)) {
        cj_put_array(e, depth, (long long)lua_objlen(L, -1));
        return;
    }
    len = cj_array_length(e);
    if (len > 0 || (len == 0 && !e->cfg->empty_table_as_object) ||
        (len == 0 && cj_has_mt(L, -1, &cj_empty_array_mt_key)))
        cj_put_array(e, depth, len);
    else
        cj_put_object(e, depth);
}

/* Appends the value at the top of the stack (left there). */
static void cj_encode_value(struct cj_enc *e, int depth)
{
    lua_State *L = e->L;
    if (++e->steps >= CJ_TICK_STEPS) {
        e->steps = 0;
        hk_lua_tick(L);
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        cj_put_string(e, -1);
        break;
    case LUA_TNUMBER:
        cj_put_number(e, -1);
        break;
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, -1))
            cj_put(e, "true", 4);
        else
            cj_put(e, "false", 5);
        break;
    case LUA_TTABLE:
        cj_put_table(e, depth);
        break;
    case LUA_TNIL:
        cj_put(e, "null", 4);
        break;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, -1) == NULL) {
            cj_put(e, "null", 4);
            break;
        }
        /* fall through */
    default:
        cj_encode_error(e, -1, "type not supported");
    }
}

static int cj_encode(lua_State *L)
{
    struct cj_cfg *cfg = cj_config(L);
    struct cj_enc e = {L, cfg, &cfg->out};

    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    cfg->out.len = 0;
    cj_encode_value(&e, 0);
    lua_pushlstring(L, cfg->out.p ? cfg->out.p : "", cfg->out.len);
    cj_release_output(&e);
    return 1;
}

/* ---- decoding ---------------------------------------------------------- */

enum cj_tok_type {
    T_OBJ_BEGIN, T_OBJ_END, T_ARR_BEGIN, T_ARR_END, T_STRING, T_NUMBER, T_BOOLEAN,
    T_NULL, T_COLON, T_COMMA, T_END, T_WHITESPACE, T_ERROR, T_UNKNOWN
};

static const char *const cj_tok_names[] = {
    "T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
    "T_NUMBER",    "T_BOOLEAN", "T_NULL",      "T_COLON",   "T_COMMA",
    "T_END",       "T_WHITESPACE", "T_ERROR",  "T_UNKNOWN",
};

struct cj_tok {
    enum cj_tok_type type;
    size_t at; /* 0-based offset, reported 1-based */
    const char *err; /* T_ERROR */
    double num;
    int boolean;
    size_t slen; /* T_STRING: the text is in the parser's scratch */
};

struct cj_dec {
    lua_State *L;
    struct cj_cfg *cfg;
    const char *data; /* NUL-terminated (a Lua string) */
    const char *p;
    char *scratch; /* decoded string text; never longer than the input */
    int depth;
    unsigned steps; /* values decoded: every CJ_TICK_STEPS the busy/kill check */
};

static void cj_token_error(struct cj_dec *d, struct cj_tok *t, const char *what)
{
    t->type = T_ERROR;
    t->at = (size_t)(d->p - d->data);
    t->err = what;
}

static int cj_hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)s[i], h;
        if (c >= '0' && c <= '9')
            h = c - '0';
        else if (c >= 'a' && c <= 'f')
            h = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            h = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* At "\uXXXX" (d->p on the backslash): appends the UTF-8 of the escape (a
 * surrogate pair takes two escapes) at out and advances d->p past it.
 * Returns the bytes written, or -1 when the escape is invalid. */
static int cj_unicode_escape(struct cj_dec *d, char *out)
{
    int cp = cj_hex4(d->p + 2), used = 6;

    if (cp < 0)
        return -1;
    if ((cp & 0xf800) == 0xd800) {
        int lo;
        if (cp & 0x400) /* a low surrogate first */
            return -1;
        if (d->p[6] != '\\' || d->p[7] != 'u')
            return -1;
        lo = cj_hex4(d->p + 8);
        if (lo < 0 || (lo & 0xfc00) != 0xdc00)
            return -1;
        cp = 0x10000 + (((cp & 0x3ff) << 10) | (lo & 0x3ff));
        used = 12;
    }
    d->p += used;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* d->p is on the opening quote. */
static void cj_string_token(struct cj_dec *d, struct cj_tok *t)
{
    size_t n = 0;

    d->p++;
    for (;;) {
        char c = *d->p;
        if (c == '"')
            break;
        if (c == '\0') {
            cj_token_error(d, t, "unexpected end of string");
            return;
        }
        if (c == '\\') {
            switch (d->p[1]) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                int w = cj_unicode_escape(d, d->scratch + n);
                if (w < 0) {
                    cj_token_error(d, t, "invalid unicode escape code");
                    return;
                }
                n += (size_t)w;
                continue;
            }
            default:
                cj_token_error(d, t, "invalid escape code");
                return;
            }
            d->p++;
        }
        d->scratch[n++] = c;
        d->p++;
    }
    d->p++;
    t->type = T_STRING;
    t->slen = n;
}

/* Not strict JSON: a leading '+', a leading zero followed by a digit or
 * 'x', inf or nan (either case, after an optional '-'). */
static int cj_nonjson_number(const char *p)
{
    if (*p == '+')
        return 1;
    if (*p == '-')
        p++;
    if (*p == '0')
        return (p[1] | 0x20) == 'x' || (p[1] >= '0' && p[1] <= '9');
    if (*p <= '9')
        return 0;
    return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

static void cj_number_token(struct cj_dec *d, struct cj_tok *t)
{
    char *end;
    double v = strtod(d->p, &end);
    if (end == d->p) {
        cj_token_error(d, t, "invalid number");
        return;
    }
    t->type = T_NUMBER;
    t->num = v;
    d->p = end;
}

static void cj_next_token(struct cj_dec *d, struct cj_tok *t)
{
    unsigned char c;

    while (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r')
        d->p++;
    c = (unsigned char)*d->p;
    t->at = (size_t)(d->p - d->data);
    switch (c) {
    case '\0':
        t->type = T_END;
        return;
    case '{': t->type = T_OBJ_BEGIN; d->p++; return;
    case '}': t->type = T_OBJ_END; d->p++; return;
    case '[': t->type = T_ARR_BEGIN; d->p++; return;
    case ']': t->type = T_ARR_END; d->p++; return;
    case ':': t->type = T_COLON; d->p++; return;
    case ',': t->type = T_COMMA; d->p++; return;
    case '"':
        cj_string_token(d, t);
        return;
    case 'f': case 'i': case 'I': case 'n': case 'N': case 't': case '+':
        break;
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            break;
        cj_token_error(d, t, "invalid token");
        return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (!d->cfg->decode_invalid && cj_nonjson_number(d->p)) {
            cj_token_error(d, t, "invalid number");
            return;
        }
        cj_number_token(d, t);
    } else if (strncmp(d->p, "true", 4) == 0) {
        t->type = T_BOOLEAN;
        t->boolean = 1;
        d->p += 4;
    } else if (strncmp(d->p, "false", 5) == 0) {
        t->type = T_BOOLEAN;
        t->boolean = 0;
        d->p += 5;
    } else if (strncmp(d->p, "null", 4) == 0) {
        t->type = T_NULL;
        d->p += 4;
    } else if (d->cfg->decode_invalid && cj_nonjson_number(d->p)) {
        cj_number_token(d, t);
    } else {
        cj_token_error(d, t, "invalid token");
    }
}

static void cj_parse_error(struct cj_dec *d, const char *expected, const struct cj_tok *t)
{
    const char *found = t->type == T_ERROR ? t->err : cj_tok_names[t->type];
    cj_scratch_trim(d->cfg);
    luaL_error(d->L, "Expected %s but found %s at character %d", expected, found,
               (int)(t->at + 1));
}

static void cj_descend(struct cj_dec *d, int slots)
{
    d->depth++;
    if (d->depth > d->cfg->decode_max_depth || !lua_checkstack(d->L, slots)) {
        cj_scratch_trim(d->cfg);
        luaL_error(d->L, "Found too many nested data structures (%d) at character %d", d->depth,
                   (int)(d->p - d->data));
    }
}

static void cj_value(struct cj_dec *d, struct cj_tok *t);

static void cj_object(struct cj_dec *d)
{
    lua_State *L = d->L;
    struct cj_tok t;

    cj_descend(d, 3);
    lua_newtable(L);
    cj_next_token(d, &t);
    if (t.type == T_OBJ_END) {
        d->depth--;
        return;
    }
    for (;;) {
        if (t.type != T_STRING)
            cj_parse_error(d, "object key string", &t);
        lua_pushlstring(L, d->scratch, t.slen);
        cj_next_token(d, &t);
        if (t.type != T_COLON)
            cj_parse_error(d, "colon", &t);
        cj_next_token(d, &t);
        cj_value(d, &t);
        lua_rawset(L, -3);
        cj_next_token(d, &t);
        if (t.type == T_OBJ_END) {
            d->depth--;
            return;
        }
        if (t.type != T_COMMA)
            cj_parse_error(d, "comma or object end", &t);
        cj_next_token(d, &t);
    }
}

static void cj_array(struct cj_dec *d)
{
    lua_State *L = d->L;
    struct cj_tok t;

    cj_descend(d, 2);
    lua_newtable(L);
    if (d->cfg->decode_array_mt) {
        lua_pushlightuserdata(L, (void *)&cj_array_mt_key);
        lua_rawget(L, LUA_REGISTRYINDEX);
        lua_setmetatable(L, -2);
    }
    cj_next_token(d, &t);
    if (t.type == T_ARR_END) {
        d->depth--;
        return;
    }
    for (int i = 1;; i++) {
        cj_value(d, &t);
        lua_rawseti(L, -2, i);
        cj_next_token(d, &t);
        if (t.type == T_ARR_END) {
            d->depth--;
            return;
        }
        if (t.type != T_COMMA)
            cj_parse_error(d, "comma or array end", &t);
        cj_next_token(d, &t);
    }
}

/* Pushes the value that starts with token t. */
static void cj_value(struct cj_dec *d, struct cj_tok *t)
{
    lua_State *L = d->L;
    if (++d->steps >= CJ_TICK_STEPS) {
        d->steps = 0;
        hk_lua_tick(L);
    }
    switch (t->type) {
    case T_STRING:
        lua_pushlstring(L, d->scratch, t->slen);
        break;
    case T_NUMBER:
        lua_pushnumber(L, (lua_Number)t->num);
        break;
    case T_BOOLEAN:
        lua_pushboolean(L, t->boolean);
        break;
    case T_OBJ_BEGIN:
        cj_object(d);
        break;
    case T_ARR_BEGIN:
        cj_array(d);
        break;
    case T_NULL:
        lua_pushlightuserdata(L, NULL);
        break;
    default:
        cj_parse_error(d, "value", t);
    }
}

static int cj_decode(lua_State *L)
{
    struct cj_dec d;
    struct cj_tok t;
    size_t len;

    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    d.L = L;
    d.cfg = cj_config(L);
    d.data = luaL_checklstring(L, 1, &len);
    d.p = d.data;
    d.depth = 0;
    if (len >= 2 && (d.data[0] == '\0' || d.data[1] == '\0'))
        luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
    /* A decoded string is never longer than the input. */
    if (d.cfg->scratch_cap < len + 1) {
        char *p = realloc(d.cfg->scratch, len + 1);
        if (!p)
            luaL_error(L, "Out of memory");
        d.cfg->scratch = p;
        d.cfg->scratch_cap = len + 1;
    }
    d.scratch = d.cfg->scratch;
    cj_next_token(&d, &t);
    cj_value(&d, &t);
    cj_next_token(&d, &t);
    if (t.type != T_END)
        cj_parse_error(&d, "the end", &t);
    cj_scratch_trim(d.cfg);
    return 1;
}

/* ---- module ------------------------------------------------------------ */

static int cj_new(lua_State *L);

static const luaL_Reg cj_funcs[] = {
    {"encode", cj_encode},
    {"decode", cj_decode},
    {"encode_sparse_array", cj_encode_sparse_array},
    {"encode_max_depth", cj_encode_max_depth},
    {"decode_max_depth", cj_decode_max_depth},
    {"encode_number_precision", cj_encode_number_precision},
    {"encode_keep_buffer", cj_encode_keep_buffer},
    {"encode_invalid_numbers", cj_encode_invalid_numbers},
    {"decode_invalid_numbers", cj_decode_invalid_numbers},
    {"encode_empty_table_as_object", cj_encode_empty_table_as_object},
    {"decode_array_with_array_mt", cj_decode_array_with_array_mt},
    {"new", cj_new},
    {NULL, NULL},
};

/* Pushes the shared metatable stored in the registry under key, creating
 * it on first use. */
static void cj_push_shared_mt(lua_State *L, const void *key)
{
    lua_pushlightuserdata(L, (void *)key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_istable(L, -1))
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, (void *)key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

static void cj_cfg_defaults(struct cj_cfg *cfg)
{
    cfg->sparse_convert = 0;
    cfg->sparse_ratio = 2;
    cfg->sparse_safe = 10;
    cfg->encode_max_depth = 1000;
    cfg->decode_max_depth = 1000;
    cfg->encode_invalid = 0;
    cfg->decode_invalid = 1;
    cfg->keep_buffer = 1;
    cfg->precision = 14;
    cfg->empty_table_as_object = 1;
    cfg->decode_array_mt = 0;
}

/* Pushes a new module table with its own settings. */
static int cj_new(lua_State *L)
{
    struct cj_cfg *cfg;

    lua_newtable(L);
    cfg = lua_newuserdata(L, sizeof(*cfg));
    memset(cfg, 0, sizeof(*cfg));
    cj_cfg_defaults(cfg);
    lua_newtable(L);
    lua_pushcfunction(L, cj_cfg_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    /* table, cfg: each function gets the settings as its upvalue */
    for (const luaL_Reg *r = cj_funcs; r->name; r++) {
        lua_pushvalue(L, -1);
        lua_pushcclosure(L, r->func, 1);
        lua_setfield(L, -3, r->name);
    }
    lua_pop(L, 1);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    cj_push_shared_mt(L, &cj_array_mt_key);
    lua_setfield(L, -2, "array_mt");
    cj_push_shared_mt(L, &cj_empty_array_mt_key);
    lua_setfield(L, -2, "empty_array_mt");
    lua_pushliteral(L, CJ_NAME);
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, CJ_VERSION);
    lua_setfield(L, -2, "_VERSION");
    return 1;
}

/* Registry key of the global cjson module's settings. */
static const char cj_global_cfg_key = 'g';

void hk_cjson_reset(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&cj_global_cfg_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    struct cj_cfg *cfg = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (cfg)
        cj_cfg_defaults(cfg); /* (the buffers stay: keep_buffer is on again) */
}

int hk_luaopen_cjson(lua_State *L)
{
    cj_new(L);
    lua_getfield(L, -1, "encode");
    lua_getupvalue(L, -1, 1);
    lua_pushlightuserdata(L, (void *)&cj_global_cfg_key);
    lua_insert(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_setglobal(L, CJ_NAME);
    return 1;
}
