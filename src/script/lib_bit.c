/* lib_bit.c - the `bit` library for scripts: the LuaBitOp 1.0.2 API (tobit,
 * tohex, bnot, band, bor, bxor, lshift, rshift, arshift, rol, ror, bswap)
 * with 32-bit two's complement semantics on Lua's double numbers.
 *
 * Every operand goes through the same normalisation: the number is reduced
 * to its low 32 bits by adding 2^52 + 2^51 and reading the low word of the
 * resulting double, which rounds a fractional value to the nearest integer
 * (ties to even) and wraps any value within +-2^51 modulo 2^32.  Results
 * are returned as signed 32-bit integers (-2^31 .. 2^31-1).  Shift and
 * rotate counts use only their low five bits.  Operands that are not
 * numbers (nor strings convertible to numbers) raise the usual
 * "bad argument #n to 'f' (number expected, got T)". */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "libs.h"

/* The low 32 bits of n, rounded and wrapped as described above. */
static uint32_t bit_norm(lua_Number n)
{
    double shifted = (double)n + 6755399441055744.0; /* 2^52 + 2^51 */
    uint64_t raw;
    memcpy(&raw, &shifted, sizeof(raw));
    return (uint32_t)raw;
}

/* Operand idx as 32 bits.  Non-numbers convert to 0, and only a zero
 * result is worth checking: a non-number can never give anything else. */
static uint32_t bit_arg(lua_State *L, int idx)
{
    uint32_t v = bit_norm(lua_tonumber(L, idx));
    if (v == 0 && !lua_isnumber(L, idx))
        luaL_typerror(L, idx, "number");
    return v;
}

static int bit_result(lua_State *L, uint32_t v)
{
    lua_pushnumber(L, (lua_Number)(int32_t)v);
    return 1;
}

static int bit_tobit(lua_State *L)
{
    return bit_result(L, bit_arg(L, 1));
}

static int bit_bnot(lua_State *L)
{
    return bit_result(L, ~bit_arg(L, 1));
}

/* band/bor/bxor take one or more operands. */
enum { OP_AND, OP_OR, OP_XOR };

static int bit_fold(lua_State *L, int op)
{
    int top = lua_gettop(L);
    uint32_t acc = bit_arg(L, 1);
    for (int i = 2; i <= top; i++) {
        uint32_t v = bit_arg(L, i);
        if (op == OP_AND)
            acc &= v;
        else if (op == OP_OR)
            acc |= v;
        else
            acc ^= v;
    }
    return bit_result(L, acc);
}

static int bit_band(lua_State *L)
{
    return bit_fold(L, OP_AND);
}

static int bit_bor(lua_State *L)
{
    return bit_fold(L, OP_OR);
}

static int bit_bxor(lua_State *L)
{
    return bit_fold(L, OP_XOR);
}

static int bit_lshift(lua_State *L)
{
    uint32_t v = bit_arg(L, 1), n = bit_arg(L, 2) & 31;
    return bit_result(L, v << n);
}

static int bit_rshift(lua_State *L)
{
    uint32_t v = bit_arg(L, 1), n = bit_arg(L, 2) & 31;
    return bit_result(L, v >> n);
}

static int bit_arshift(lua_State *L)
{
    uint32_t v = bit_arg(L, 1), n = bit_arg(L, 2) & 31;
    /* Arithmetic shift spelled out so it does not rely on how the
     * compiler shifts negative values. */
    uint32_t r = v >> n;
    if ((v & 0x80000000u) && n)
        r |= ~(0xffffffffu >> n);
    return bit_result(L, r);
}

static int bit_rol(lua_State *L)
{
    uint32_t v = bit_arg(L, 1), n = bit_arg(L, 2) & 31;
    return bit_result(L, n ? (v << n) | (v >> (32 - n)) : v);
}

static int bit_ror(lua_State *L)
{
    uint32_t v = bit_arg(L, 1), n = bit_arg(L, 2) & 31;
    return bit_result(L, n ? (v >> n) | (v << (32 - n)) : v);
}

static int bit_bswap(lua_State *L)
{
    uint32_t v = bit_arg(L, 1);
    uint32_t r = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
    return bit_result(L, r);
}

/* tohex(x [, n]): the low |n| nibbles of x in hex (default 8, at most 8),
 * upper case when n is negative. */
static int bit_tohex(lua_State *L)
{
    static const char lower[] = "0123456789abcdef";
    static const char upper[] = "0123456789ABCDEF";
    uint32_t v = bit_arg(L, 1);
    int32_t n = lua_isnone(L, 2) ? 8 : (int32_t)bit_arg(L, 2);
    const char *digits = lower;
    char out[8];

    if (n < 0) {
        /* -INT32_MIN does not fit: treat it as the largest negative count. */
        n = n == INT32_MIN ? INT32_MAX : -n;
        digits = upper;
    }
    if (n > 8)
        n = 8;
    for (int i = n - 1; i >= 0; i--) {
        out[i] = digits[v & 15];
        v >>= 4;
    }
    lua_pushlstring(L, out, (size_t)n);
    return 1;
}

static const luaL_Reg bit_funcs[] = {
    {"tobit", bit_tobit},   {"bnot", bit_bnot},       {"band", bit_band},
    {"bor", bit_bor},       {"bxor", bit_bxor},       {"lshift", bit_lshift},
    {"rshift", bit_rshift}, {"arshift", bit_arshift}, {"rol", bit_rol},
    {"ror", bit_ror},       {"bswap", bit_bswap},     {"tohex", bit_tohex},
    {NULL, NULL},
};

int hk_luaopen_bit(lua_State *L)
{
    lua_newtable(L);
    luaL_register(L, NULL, bit_funcs);
    lua_pushvalue(L, -1);
    lua_setglobal(L, "bit");
    return 1;
}
