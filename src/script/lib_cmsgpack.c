/* lib_cmsgpack.c - the `cmsgpack` library for scripts: MessagePack encoding
 * and decoding with the behaviour of lua-cmsgpack 0.4.0 as bundled with
 * Redis.
 *
 *   cmsgpack.pack(v1, v2, ...)        the encodings of every argument, concatenated
 *   cmsgpack.unpack(s)                every value encoded in s
 *   cmsgpack.unpack_one(s [, off])    next_offset, value
 *   cmsgpack.unpack_limit(s, n [, off])  next_offset, up to n values
 * Offsets are 0-based byte positions; the returned offset is -1 once the
 * whole input has been consumed.  (unpack_limit(s, 0) and unpack_limit(s,
 * 0, 0) behave like unpack: no offset is returned.)
 *
 * Encoding: nil, booleans; a number equal to a 64-bit integer as the
 * smallest integer format that holds it (positive fixint, uint8..uint64,
 * negative fixint, int8..int64), any other number as float 32 when that is
 * exact, else float 64; strings as fixstr / str8 / str16 / str32; a table
 * whose keys are exactly 1..n as an array, any other table as a map (keys
 * and values in the table's traversal order); any other type as nil.
 * A table nested inside 16 others is encoded as nil (so circular
 * references end).
 * Decoding: uint 64 values of 2^63 and more come back negative (read as
 * int 64); bin and ext types and the unused byte 0xc1 are rejected ("Bad
 * data format in input."); a truncated input gives "Missing bytes in
 * input."; nil or NaN as a map key is an error ("table index is nil"). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "libs.h"

#define MP_MAX_NESTING 16

/* ---- encoding ---------------------------------------------------------- */

/* The output of one pack() call.  Kept in a userdata with a __gc so an
 * error (memory, stack) cannot leak it. */
struct mp_out {
    unsigned char *buf;
    size_t len, cap;
};

static int mp_out_gc(lua_State *L)
{
    struct mp_out *o = lua_touserdata(L, 1);
    free(o->buf);
    o->buf = NULL;
    return 0;
}

/* Sandbox (script_int.h): the running script's busy/kill check, and the
 * output bound (proto-max-bulk-len): tables that share subtables can
 * describe an output far larger than memory. */
void hk_lua_tick(lua_State *L);
size_t hk_lua_max_string(void);
#define MP_TICK_STEPS 4096
/* Values encoded or decoded since the last check (per thread: scripts run
 * in parallel on different threads). */
static _Thread_local unsigned mp_steps;

static void mp_tick(lua_State *L)
{
    if (++mp_steps >= MP_TICK_STEPS) {
        mp_steps = 0;
        hk_lua_tick(L);
    }
}

static void mp_put(lua_State *L, struct mp_out *o, const void *p, size_t n)
{
    if (o->cap - o->len < n) {
        if (n > hk_lua_max_string() - o->len)
            luaL_error(L, "cmsgpack: output too large");
        size_t cap = o->cap ? o->cap : 64;
        unsigned char *nb;
        while (cap - o->len < n) {
            if (cap > SIZE_MAX / 2)
                luaL_error(L, "cmsgpack: output too large");
            cap *= 2;
        }
        nb = realloc(o->buf, cap);
        if (!nb)
            luaL_error(L, "cmsgpack: out of memory");
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

/* Type byte followed by v in big-endian order on nbytes bytes. */
static void mp_put_be(lua_State *L, struct mp_out *o, unsigned char type, uint64_t v, int nbytes)
{
    unsigned char b[9];
    b[0] = type;
    for (int i = nbytes; i >= 1; i--) {
        b[i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
    mp_put(L, o, b, (size_t)nbytes + 1);
}

static void mp_put_int(lua_State *L, struct mp_out *o, int64_t v)
{
    if (v >= 0) {
        uint64_t u = (uint64_t)v;
        if (u <= 0x7f) {
            unsigned char c = (unsigned char)u;
            mp_put(L, o, &c, 1);
        } else if (u <= 0xff) {
            mp_put_be(L, o, 0xcc, u, 1);
        } else if (u <= 0xffff) {
            mp_put_be(L, o, 0xcd, u, 2);
        } else if (u <= 0xffffffffu) {
            mp_put_be(L, o, 0xce, u, 4);
        } else {
            mp_put_be(L, o, 0xcf, u, 8);
        }
    } else if (v >= -32) {
        unsigned char c = (unsigned char)(0x100 + v);
        mp_put(L, o, &c, 1);
    } else if (v >= -128) {
        mp_put_be(L, o, 0xd0, (uint64_t)v, 1);
    } else if (v >= -32768) {
        mp_put_be(L, o, 0xd1, (uint64_t)v, 2);
    } else if (v >= INT32_MIN) {
        mp_put_be(L, o, 0xd2, (uint64_t)v, 4);
    } else {
        mp_put_be(L, o, 0xd3, (uint64_t)v, 8);
    }
}

static void mp_put_number(lua_State *L, struct mp_out *o, lua_Number n)
{
    double d = (double)n;
    if (isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
        (double)(int64_t)d == d) {
        mp_put_int(L, o, (int64_t)d);
    } else {
        float f = (float)d;
        if ((double)f == d) {
            uint32_t bits;
            memcpy(&bits, &f, sizeof(bits));
            mp_put_be(L, o, 0xca, bits, 4);
        } else {
            uint64_t bits;
            memcpy(&bits, &d, sizeof(bits));
            mp_put_be(L, o, 0xcb, bits, 8);
        }
    }
}

static void mp_put_str(lua_State *L, struct mp_out *o, const char *s, size_t len)
{
    if (len < 32) {
        unsigned char c = (unsigned char)(0xa0 | len);
        mp_put(L, o, &c, 1);
    } else if (len <= 0xff) {
        mp_put_be(L, o, 0xd9, len, 1);
    } else if (len <= 0xffff) {
        mp_put_be(L, o, 0xda, len, 2);
    } else {
        mp_put_be(L, o, 0xdb, len, 4);
    }
    mp_put(L, o, s, len);
}

/* Array or map header: fix form up to 15 entries, else 16 or 32 bits. */
static void mp_put_header(lua_State *L, struct mp_out *o, int is_map, size_t n)
{
    if (n <= 15) {
        unsigned char c = (unsigned char)((is_map ? 0x80 : 0x90) | n);
        mp_put(L, o, &c, 1);
    } else if (n <= 0xffff) {
        mp_put_be(L, o, is_map ? 0xde : 0xdc, n, 2);
    } else {
        mp_put_be(L, o, is_map ? 0xdf : 0xdd, n, 4);
    }
}

/* 1 if the table at the top of the stack has exactly the keys 1..n. */
static int mp_table_is_array(lua_State *L)
{
    double max = 0;
    size_t count = 0;

    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1); /* the value */
        if (lua_type(L, -1) == LUA_TNUMBER) {
            double k = (double)lua_tonumber(L, -1);
            if (k > 0 && k == floor(k) && k < 9223372036854775808.0) {
                if (k > max)
                    max = k;
                count++;
                continue;
            }
        }
        lua_pop(L, 1); /* the key */
        return 0;
    }
    return max == (double)count;
}

static void mp_encode_top(lua_State *L, struct mp_out *o, int level);

static void mp_encode_table(lua_State *L, struct mp_out *o, int level)
{
    luaL_checkstack(L, 3, "in cmsgpack.pack");
    if (mp_table_is_array(L)) {
        size_t n = lua_objlen(L, -1);
        mp_put_header(L, o, 0, n);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (int)i);
            mp_encode_top(L, o, level + 1);
        }
    } else {
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            n++;
        }
        mp_put_header(L, o, 1, n);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2); /* key, value, key copy */
            mp_encode_top(L, o, level + 1); /* the key copy */
            mp_encode_top(L, o, level + 1); /* the value */
        }
    }
}

/* Encodes the value at the top of the stack and pops it. */
static void mp_encode_top(lua_State *L, struct mp_out *o, int level)
{
    mp_tick(L);
    int t = lua_type(L, -1);
    if (t == LUA_TTABLE && level >= MP_MAX_NESTING)
        t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        mp_put_str(L, o, s, len);
        break;
    }
    case LUA_TBOOLEAN: {
        unsigned char c = lua_toboolean(L, -1) ? 0xc3 : 0xc2;
        mp_put(L, o, &c, 1);
        break;
    }
    case LUA_TNUMBER:
        mp_put_number(L, o, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        mp_encode_table(L, o, level);
        break;
    default: {
        unsigned char c = 0xc0;
        mp_put(L, o, &c, 1);
        break;
    }
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    struct mp_out *o;

    if (nargs == 0)
        return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    o = lua_newuserdata(L, sizeof(*o));
    memset(o, 0, sizeof(*o));
    lua_newtable(L);
    lua_pushcfunction(L, mp_out_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    /* Stack: args..., out.  Encode each argument in turn. */
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        mp_encode_top(L, o, 0);
    }
    lua_pushlstring(L, (const char *)o->buf, o->len);
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
    return 1;
}

/* ---- decoding ---------------------------------------------------------- */

enum { MP_OK = 0, MP_EOF, MP_BADFMT };

struct mp_in {
    const unsigned char *p;
    size_t left;
    int err;
};

static int mp_need(struct mp_in *in, size_t n)
{
    if (in->left < n) {
        in->err = MP_EOF;
        return 0;
    }
    return 1;
}

static uint64_t mp_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static void mp_decode_value(lua_State *L, struct mp_in *in);

/* Pushes a table of n entries (arrays: keys 1..n), or leaves in->err set
 * with the partly built table pushed. */
static void mp_decode_container(lua_State *L, struct mp_in *in, int is_map, uint64_t n)
{
    /* Arrays reserve room for the table and an index; a map's table takes
     * the slot its value reserved, and its keys and values reserve their
     * own.  (Where these checks fail decides which nesting depth is an
     * error, and with which message.) */
    if (!is_map)
        luaL_checkstack(L, 2, "in function mp_decode_to_lua_array");
    lua_newtable(L);
    for (uint64_t i = 1; i <= n; i++) {
        if (is_map) {
            mp_decode_value(L, in);
            if (in->err)
                return;
        } else {
            lua_pushnumber(L, (lua_Number)i);
        }
        mp_decode_value(L, in);
        if (in->err)
            return;
        lua_settable(L, -3);
    }
}

/* Pushes the next value; on error in->err is set (and one value, nil or
 * a partial one, is still pushed). */
static void mp_decode_value(lua_State *L, struct mp_in *in)
{
    unsigned char t;
    size_t n;

    mp_tick(L);
    luaL_checkstack(L, 1,
                    "too many return values at once; use unpack_one or unpack_limit instead.");
    if (!mp_need(in, 1)) {
        lua_pushnil(L);
        return;
    }
    t = in->p[0];
    if (t <= 0x7f) { /* positive fixint */
        lua_pushnumber(L, t);
        in->p++, in->left--;
        return;
    }
    if (t >= 0xe0) { /* negative fixint */
        lua_pushnumber(L, (int)t - 256);
        in->p++, in->left--;
        return;
    }
    if (t >= 0x80 && t <= 0x9f) { /* fixmap, fixarray */
        in->p++, in->left--;
        mp_decode_container(L, in, t < 0x90, t & 0x0f);
        return;
    }
    if (t >= 0xa0 && t <= 0xbf) { /* fixstr */
        n = t & 0x1f;
        if (!mp_need(in, 1 + n)) {
            lua_pushnil(L);
            return;
        }
        lua_pushlstring(L, (const char *)in->p + 1, n);
        in->p += 1 + n, in->left -= 1 + n;
        return;
    }
    switch (t) {
    case 0xc0:
        lua_pushnil(L);
        in->p++, in->left--;
        return;
    case 0xc2:
    case 0xc3:
        lua_pushboolean(L, t == 0xc3);
        in->p++, in->left--;
        return;
    case 0xca: { /* float 32 */
        uint32_t bits;
        float f;
        if (!mp_need(in, 5))
            break;
        bits = (uint32_t)mp_be(in->p + 1, 4);
        memcpy(&f, &bits, sizeof(f));
        lua_pushnumber(L, (lua_Number)f);
        in->p += 5, in->left -= 5;
        return;
    }
    case 0xcb: { /* float 64 */
        uint64_t bits;
        double d;
        if (!mp_need(in, 9))
            break;
        bits = mp_be(in->p + 1, 8);
        memcpy(&d, &bits, sizeof(d));
        lua_pushnumber(L, (lua_Number)d);
        in->p += 9, in->left -= 9;
        return;
    }
    case 0xcc: case 0xcd: case 0xce: case 0xcf: { /* uint 8..64 */
        int w = 1 << (t - 0xcc);
        if (!mp_need(in, 1 + (size_t)w))
            break;
        /* uint 64 is read as a signed 64-bit value, as lua-cmsgpack does:
         * 2^63 and above come back negative. */
        lua_pushnumber(L, (lua_Number)(int64_t)mp_be(in->p + 1, w));
        in->p += 1 + w, in->left -= 1 + (size_t)w;
        return;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: { /* int 8..64 */
        int w = 1 << (t - 0xd0);
        uint64_t v;
        if (!mp_need(in, 1 + (size_t)w))
            break;
        v = mp_be(in->p + 1, w);
        if (w < 8 && (v >> (w * 8 - 1)) & 1)
            v |= ~UINT64_C(0) << (w * 8);
        lua_pushnumber(L, (lua_Number)(int64_t)v);
        in->p += 1 + w, in->left -= 1 + (size_t)w;
        return;
    }
    case 0xd9: case 0xda: case 0xdb: { /* str 8/16/32 */
        int w = 1 << (t - 0xd9);
        if (!mp_need(in, 1 + (size_t)w))
            break;
        n = (size_t)mp_be(in->p + 1, w);
        if (!mp_need(in, 1 + (size_t)w + n))
            break;
        lua_pushlstring(L, (const char *)in->p + 1 + w, n);
        in->p += 1 + w + n, in->left -= 1 + (size_t)w + n;
        return;
    }
    case 0xdc: case 0xdd: case 0xde: case 0xdf: { /* array / map 16, 32 */
        int w = (t & 1) ? 4 : 2;
        if (!mp_need(in, 1 + (size_t)w))
            break;
        n = (size_t)mp_be(in->p + 1, w);
        in->p += 1 + w, in->left -= 1 + (size_t)w;
        mp_decode_container(L, in, t >= 0xde, n);
        return;
    }
    default:
        in->err = MP_BADFMT;
        break;
    }
    lua_pushnil(L);
}

/* Decodes up to limit values from argument 1 starting at byte offset;
 * limit 0 with offset 0 means all values and no offset result.  Numbers
 * in the error messages show only their low 32 bits (and the "limit" is
 * in fact the input length), as in lua-cmsgpack. */
static int mp_unpack_full(lua_State *L, long long limit, long long offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    struct mp_in in;
    int all = limit == 0 && offset == 0;
    long long count;

    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                          (int)offset, (int)len);
    if ((unsigned long long)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", (int)offset,
                          (int)len);
    if (all)
        limit = INT_MAX;
    in.p = (const unsigned char *)s + offset;
    in.left = len - (size_t)offset;
    in.err = MP_OK;
    for (count = 0; in.left > 0 && count < limit; count++) {
        mp_decode_value(L, &in);
        if (in.err == MP_EOF)
            return luaL_error(L, "Missing bytes in input.");
        if (in.err == MP_BADFMT)
            return luaL_error(L, "Bad data format in input.");
    }
    if (all)
        return (int)count;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, in.left == 0 ? -1 : (lua_Integer)(len - in.left));
    lua_insert(L, 2); /* offset first, then the values */
    return (int)count + 1;
}

static int mp_unpack(lua_State *L)
{
    return mp_unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L)
{
    long long offset = (long long)luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return mp_unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    long long limit = (long long)luaL_checkinteger(L, 2);
    long long offset = (long long)luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return mp_unpack_full(L, limit, offset);
}

static const luaL_Reg mp_funcs[] = {
    {"pack", mp_pack},
    {"unpack", mp_unpack},
    {"unpack_one", mp_unpack_one},
    {"unpack_limit", mp_unpack_limit},
    {NULL, NULL},
};

int hk_luaopen_cmsgpack(lua_State *L)
{
    lua_newtable(L);
    luaL_register(L, NULL, mp_funcs);
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    lua_pushvalue(L, -1);
    lua_setglobal(L, "cmsgpack");
    return 1;
}
