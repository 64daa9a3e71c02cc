/* lib_struct.c - the `struct` library for scripts: struct.pack(fmt, ...),
 * struct.unpack(fmt, data [, pos]) and struct.size(fmt), converting between
 * Lua values and binary strings the way the struct library bundled with
 * Redis does.
 *
 * Format characters:
 *   >  <       big / little endian for what follows (native at the start)
 *   ![n]       maximum alignment n (a power of 2; default: 8); starts at 1
 *   b B        signed / unsigned char          h H   short (2 bytes)
 *   l L        long (8 bytes)                  T     size_t (8 bytes)
 *   i[n] I[n]  signed / unsigned n-byte integer (default 4, at most 32)
 *   f d        float / double                  x     one zero byte
 *   c[n]       n raw bytes (default 1); c0 packs the whole string, and on
 *              unpack takes its length from the integer read just before
 *   s          a zero-terminated string        ' '   ignored
 * Integers travel through a 64-bit value: packed wider than 8 bytes they
 * are zero-filled above the low 8 bytes, and unpacked wider than 8 bytes
 * only the low 8 bytes count.  unpack returns the values read followed by
 * the position just past them. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "libs.h"

#define ST_MAX_INT_SIZE 32
#define ST_MAX_ALIGN 8

enum { ST_LITTLE = 0, ST_BIG = 1 };

/* Parsing state of one format string. */
struct st_fmt {
    lua_State *L;
    const char *p;
    int endian;
    int align;
};

static int st_native_endian(void)
{
    const uint16_t probe = 1;
    unsigned char first;
    memcpy(&first, &probe, 1);
    return first ? ST_LITTLE : ST_BIG;
}

static void st_init(struct st_fmt *f, lua_State *L, const char *fmt)
{
    f->L = L;
    f->p = fmt;
    f->endian = st_native_endian();
    f->align = 1;
}

/* An optional decimal count after an option; dflt when absent. */
static int st_count(struct st_fmt *f, int dflt)
{
    int v = 0;
    if (!isdigit((unsigned char)*f->p))
        return dflt;
    while (isdigit((unsigned char)*f->p)) {
        int d = *f->p - '0';
        if (v > INT_MAX / 10 || v * 10 > INT_MAX - d)
            luaL_error(f->L, "integral size overflow");
        v = v * 10 + d;
        f->p++;
    }
    return v;
}

/* Byte size of option opt (reading its count, if any); 0 for options that
 * take no room or whose size depends on the data. */
static size_t st_size(struct st_fmt *f, int opt)
{
    switch (opt) {
    case 'b': case 'B': return sizeof(char);
    case 'h': case 'H': return sizeof(short);
    case 'l': case 'L': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)st_count(f, 1);
    case 'i':
    case 'I': {
        int n = st_count(f, (int)sizeof(int));
        if (n > ST_MAX_INT_SIZE)
            luaL_error(f->L, "integral size %d is larger than limit of %d", n, ST_MAX_INT_SIZE);
        return (size_t)n;
    }
    default:
        return 0;
    }
}

/* Padding that puts an item of the given size at its alignment when the
 * output (or input) is at offset pos. */
static size_t st_padding(const struct st_fmt *f, int opt, size_t size, size_t pos)
{
    size_t a = size;
    if (size == 0 || opt == 'c')
        return 0;
    if (a > (size_t)f->align)
        a = (size_t)f->align;
    return (a - (pos & (a - 1))) & (a - 1);
}

/* Options that change the state rather than describe data; any other
 * character is an invalid option. */
static void st_control(struct st_fmt *f, int opt)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        f->endian = ST_BIG;
        return;
    case '<':
        f->endian = ST_LITTLE;
        return;
    case '!': {
        int a = st_count(f, ST_MAX_ALIGN);
        if (a <= 0 || (a & (a - 1)) != 0)
            luaL_error(f->L, "alignment %d is not a power of 2", a);
        f->align = a;
        return;
    }
    default:
        luaL_argerror(f->L, 1, lua_pushfstring(f->L, "invalid format option '%c'", opt));
    }
}

/* Double to 64 bits the way the x86-64 conversion instructions do it:
 * out-of-range values (and NaN) give the "integer indefinite" pattern. */
static uint64_t st_to_i64_bits(double d)
{
    if (d != d || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        return UINT64_C(1) << 63;
    return (uint64_t)(int64_t)d;
}

static uint64_t st_to_u64_bits(double d)
{
    if (d >= 9223372036854775808.0)
        return st_to_i64_bits(d - 9223372036854775808.0) ^ (UINT64_C(1) << 63);
    return st_to_i64_bits(d); /* NaN too */
}

static void st_put_int(luaL_Buffer *b, lua_Number n, int endian, size_t size)
{
    uint64_t v = n < 0 ? st_to_i64_bits(n) : st_to_u64_bits(n);
    char bytes[ST_MAX_INT_SIZE];
    for (size_t i = 0; i < size; i++) {
        size_t at = endian == ST_LITTLE ? i : size - 1 - i;
        bytes[at] = (char)(v & 0xff);
        v = i < 7 ? v >> 8 : 0;
    }
    luaL_addlstring(b, bytes, size);
}

/* Copy n bytes of a float/double into host order from the requested one
 * (or back: the operation is its own inverse). */
static void st_fix_order(void *p, size_t n, int endian)
{
    unsigned char *c = p;
    if (endian == st_native_endian())
        return;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = c[i];
        c[i] = c[n - 1 - i];
        c[n - 1 - i] = t;
    }
}

static int st_pack(lua_State *L)
{
    struct st_fmt f;
    luaL_Buffer b;
    int arg = 2;
    size_t total = 0;

    st_init(&f, L, luaL_checkstring(L, 1));
    lua_pushnil(L); /* keeps the arguments apart from the buffer's slots */
    luaL_buffinit(L, &b);
    while (*f.p) {
        int opt = (unsigned char)*f.p++;
        size_t size = st_size(&f, opt);
        size_t pad = st_padding(&f, opt, size, total);
        total += pad;
        while (pad--)
            luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
        case 'T': case 'i': case 'I':
            st_put_int(&b, luaL_checknumber(L, arg++), f.endian, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float v = (float)luaL_checknumber(L, arg++);
            st_fix_order(&v, sizeof(v), f.endian);
            luaL_addlstring(&b, (const char *)&v, sizeof(v));
            break;
        }
        case 'd': {
            double v = (double)luaL_checknumber(L, arg++);
            st_fix_order(&v, sizeof(v), f.endian);
            luaL_addlstring(&b, (const char *)&v, sizeof(v));
            break;
        }
        case 'c':
        case 's': {
            size_t len;
            const char *s = luaL_checklstring(L, arg++, &len);
            if (size == 0)
                size = len;
            /* The reported position is one past the string's (as in the
             * library Redis bundles). */
            luaL_argcheck(L, len >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            st_control(&f, opt);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static lua_Number st_get_int(const unsigned char *p, int endian, int is_signed, size_t size)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++)
        v = (v << 8) | p[endian == ST_BIG ? i : size - 1 - i];
    if (is_signed) {
        /* Sign extension from bit size*8-1; the shift count wraps at 64
         * as on x86-64 (only matters for sizes above 8). */
        uint64_t mask = ~UINT64_C(0) << ((size * 8 - 1) & 63);
        if (v & mask)
            v |= mask;
        return (lua_Number)(int64_t)v;
    }
    return (lua_Number)v;
}

static int st_unpack(lua_State *L)
{
    struct st_fmt f;
    size_t len;
    const char *data;
    size_t pos;
    int nres = 0;

    st_init(&f, L, luaL_checkstring(L, 1));
    data = luaL_checklstring(L, 2, &len);
    /* As size_t, so a negative start wraps around and fails the bounds
     * check below as "data string too short". */
    pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
    pos--;
    while (*f.p) {
        int opt = (unsigned char)*f.p++;
        size_t size = st_size(&f, opt);
        pos += st_padding(&f, opt, size, pos);
        luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
        case 'T': case 'i': case 'I':
            lua_pushnumber(L, st_get_int((const unsigned char *)data + pos, f.endian,
                                         islower(opt), size));
            nres++;
            break;
        case 'x':
            break;
        case 'f': {
            float v;
            memcpy(&v, data + pos, sizeof(v));
            st_fix_order(&v, sizeof(v), f.endian);
            lua_pushnumber(L, (lua_Number)v);
            nres++;
            break;
        }
        case 'd': {
            double v;
            memcpy(&v, data + pos, sizeof(v));
            st_fix_order(&v, sizeof(v), f.endian);
            lua_pushnumber(L, (lua_Number)v);
            nres++;
            break;
        }
        case 'c':
            if (size == 0) {
                /* c0: the length is the value just unpacked. */
                if (nres == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                size = (size_t)lua_tonumber(L, -1);
                lua_pop(L, 1);
                nres--;
                luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            nres++;
            break;
        case 's': {
            const char *end = memchr(data + pos, '\0', len - pos);
            if (end == NULL)
                luaL_error(L, "unfinished string in data");
            size = (size_t)(end - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            nres++;
            break;
        }
        default:
            st_control(&f, opt);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)(pos + 1));
    return nres + 1;
}

static int st_sizeof(lua_State *L)
{
    struct st_fmt f;
    size_t pos = 0;

    st_init(&f, L, luaL_checkstring(L, 1));
    while (*f.p) {
        int opt = (unsigned char)*f.p++;
        size_t size = st_size(&f, opt);
        pos += st_padding(&f, opt, size, pos);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt))
            st_control(&f, opt);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

static const luaL_Reg st_funcs[] = {
    {"pack", st_pack},
    {"unpack", st_unpack},
    {"size", st_sizeof},
    {NULL, NULL},
};

int hk_luaopen_struct(lua_State *L)
{
    lua_newtable(L);
    luaL_register(L, NULL, st_funcs);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "struct");
    return 1;
}
