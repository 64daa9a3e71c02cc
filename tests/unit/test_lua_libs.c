/* test_lua_libs.c - unit tests for the Lua libraries scripts get
 * (src/script/lib_{cjson,cmsgpack,struct,bit}.c): each case runs a Lua
 * snippet in a fresh lua_State with the four libraries opened and compares
 * what it returns with what Redis 7.0.15's bundled libraries return for
 * the same snippet.
 *
 * The expected strings were produced by running every snippet, wrapped as
 * below, through EVAL on redis-server 7.0.15 (the wrapper is the same Lua
 * text on both sides, so even line numbers and stack depths match).  The
 * wrapper calls the snippet under pcall and renders the outcome as
 *   OK v1 v2 ...      values returned, each as  s"text"  (bytes outside
 *                     printable ASCII as \xHH), n:<%.17g>, true, false, nil,
 *                     NULL (cjson.null), {[k]=v,...} (sorted), or a type name
 *   ERR s"message"    the error, with any "user_script:N: " prefix removed.
 * The cases under "corpus" are generated inputs (mutated JSON, random
 * MessagePack bytes, struct formats and data, bit operands) kept with
 * Redis's answers as a regression corpus.
 *
 * Not comparable with Redis, and so checked by hand further down: the
 * OpenResty cjson extensions HotKV adds (array_mt, empty_array_mt,
 * encode_empty_table_as_object, decode_array_with_array_mt), the openers'
 * contract with the script engine, and large inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "script/libs.h"
#include "test.h"

struct lua_case {
    const char *src;  /* Lua statements (the body of a function) */
    const char *want; /* the rendering described above */
};

static const char lua_prelude[] =
    "\n"
    "local function esc(s)\n"
    "  return (s:gsub('[^%w%p ]', function(c) return string.format('\\\\x%02x', c:byte()) end))\n"
    "end\n"
    "local ser\n"
    "ser = function(v, d)\n"
    "  d = d or 0\n"
    "  local t = type(v)\n"
    "  if t == 'string' then return 's\"' .. esc(v) .. '\"'\n"
    "  elseif t == 'number' then\n"
    "    if v ~= v then return 'n:nan' end\n"
    "    return 'n:' .. string.format('%.17g', v)\n"
    "  elseif t == 'nil' then return 'nil'\n"
    "  elseif t == 'boolean' then return tostring(v)\n"
    "  elseif t == 'userdata' then if v == cjson.null then return 'NULL' else return 'userdata' end\n"
    "  elseif t == 'table' then\n"
    "    if d > 40 then return '{...}' end\n"
    "    local parts = {}\n"
    "    for k, x in pairs(v) do parts[#parts+1] = '[' .. ser(k, d+1) .. ']=' .. ser(x, d+1) end\n"
    "    table.sort(parts)\n"
    "    local mt = getmetatable(v)\n"
    "    local mts = ''\n"
    "    if mt ~= nil then\n"
    "      if mt == cjson.array_mt then mts = 'array_mt' elseif mt == cjson.empty_array_mt then mts = 'empty_array_mt' else mts = 'mt' end\n"
    "    end\n"
    "    return mts .. '{' .. table.concat(parts, ',') .. '}'\n"
    "  else return t end\n"
    "end\n"
    "local function pack(...) return {n = select('#', ...), ...} end\n"
    "local r = pack(pcall(function()\n";

static const char lua_postlude[] =
    "\n"
    "end))\n"
    "cjson.encode_sparse_array(false, 2, 10) cjson.encode_max_depth(1000) cjson.decode_max_depth(1000)\n"
    "cjson.encode_number_precision(14) cjson.encode_keep_buffer(true) cjson.encode_invalid_numbers(false) cjson.decode_invalid_numbers(true)\n"
    "local out = {}\n"
    "if not r[1] then\n"
    "  local m = r[2]\n"
    "  if type(m) == 'string' then m = m:gsub('^user_script:%d+: ', '') end\n"
    "  return 'ERR ' .. ser(m)\n"
    "end\n"
    "for i = 2, r.n do out[#out+1] = ser(r[i]) end\n"
    "return 'OK ' .. table.concat(out, ' ')\n";

static void open_lib(lua_State *L, lua_CFunction f, const char *name)
{
    lua_pushcfunction(L, f);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

/* A state like the script engine's: base, table, string, math + ours. */
static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    open_lib(L, luaopen_base, "");
    open_lib(L, luaopen_table, LUA_TABLIBNAME);
    open_lib(L, luaopen_string, LUA_STRLIBNAME);
    open_lib(L, luaopen_math, LUA_MATHLIBNAME);
    open_lib(L, hk_luaopen_cjson, "cjson");
    open_lib(L, hk_luaopen_struct, "struct");
    open_lib(L, hk_luaopen_cmsgpack, "cmsgpack");
    open_lib(L, hk_luaopen_bit, "bit");
    lua_settop(L, 0);
    return L;
}

/* Runs the wrapped snippet; returns a malloc'd copy of the rendering (or of
 * the error if the wrapper itself failed). */
static char *run_wrapped(const char *src, size_t *len)
{
    lua_State *L = new_state();
    luaL_Buffer b;
    const char *s;
    char *out;

    if (!L)
        return NULL;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, lua_prelude);
    luaL_addstring(&b, src);
    luaL_addstring(&b, lua_postlude);
    luaL_pushresult(&b);
    s = lua_tolstring(L, -1, len);
    if (luaL_loadbuffer(L, s, *len, "=user_script") == 0)
        lua_pcall(L, 0, 1, 0);
    s = lua_tolstring(L, -1, len);
    if (!s) {
        s = "(no string result)";
        *len = strlen(s);
    }
    out = malloc(*len + 1);
    if (out) {
        memcpy(out, s, *len);
        out[*len] = '\0';
    }
    lua_close(L);
    return out;
}

static void run_cases(const char *file, int line, const struct lua_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *got = run_wrapped(cases[i].src, &len);
        if (!got) {
            test_fail(file, line, "case %zu: out of memory", i);
            continue;
        }
        if (len != strlen(cases[i].want) || memcmp(got, cases[i].want, len) != 0)
            test_fail(file, line, "case %zu: %s\n    got:  %.600s\n    want: %.600s", i,
                      cases[i].src, got, cases[i].want);
        free(got);
    }
}

#define RUN_CASES(arr) run_cases(__FILE__, __LINE__, arr, sizeof(arr) / sizeof(arr[0]))

/* ---- cases checked against redis-server 7.0.15 ------------------------- */

static const struct lua_case cases_bit[] = {
    {"return bit.tobit(1), bit.tobit(-1), bit.tobit(2^31), bit.tobit(2^32), bit.tobit(2^32+"
     "5), bit.tobit(-2^31-1), bit.tobit(0.5), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-0."
     "5), bit.tobit(-1.5)",
     "OK n:1 n:-1 n:-2147483648 n:0 n:5 n:2147483647 n:0 n:2 n:2 n:0 n:-2"},
    {"return bit.tobit(2^52), bit.tobit(2^53+3), bit.tobit(1e300), bit.tobit(-1e300), bit.t"
     "obit(1/0), bit.tobit(0/0), bit.tobit(-(1/0))",
     "OK n:0 n:2 n:-2013235812 n:-2013235812 n:0 n:0 n:0"},
    {"return bit.tobit(\"0x10\"), bit.tobit(\"  12  \"), bit.tobit(\"1e3\")",
     "OK n:16 n:12 n:1000"},
    {"return bit.tobit(\"abc\")",
     "ERR s\"bad argument #1 to 'tobit' (number expected, got string)\""},
    {"return bit.tobit()",
     "ERR s\"bad argument #1 to 'tobit' (number expected, got no value)\""},
    {"return bit.tobit({})",
     "ERR s\"bad argument #1 to 'tobit' (number expected, got table)\""},
    {"return bit.tobit(nil)",
     "ERR s\"bad argument #1 to 'tobit' (number expected, got nil)\""},
    {"return bit.band(), 1",
     "ERR s\"bad argument #1 to 'band' (number expected, got no value)\""},
    {"return bit.band(1, \"x\")",
     "ERR s\"bad argument #2 to 'band' (number expected, got string)\""},
    {"return bit.band(1, nil)",
     "ERR s\"bad argument #2 to 'band' (number expected, got nil)\""},
    {"return bit.bor(1, 2, nil)",
     "ERR s\"bad argument #3 to 'bor' (number expected, got nil)\""},
    {"return bit.tohex(1), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -2), bit.tohex("
     "0x12345678, 4), bit.tohex(0x12345678, -10), bit.tohex(1, 0), bit.tohex(65535, -214748"
     "3648), bit.tohex(65535, 2147483647), bit.tohex(1, 2^32+3)",
     "OK s\"00000001\" s\"ffffffff\" s\"ff\" s\"FF\" s\"5678\" s\"12345678\" s\"\" s\"0000F"
     "FFF\" s\"0000ffff\" s\"001\""},
    {"return bit.tohex(1, nil)",
     "ERR s\"bad argument #2 to 'tohex' (number expected, got nil)\""},
    {"return bit.bnot(0), bit.bnot(-1), bit.bnot(12345), bit.bnot(2^31)",
     "OK n:-1 n:0 n:-12346 n:2147483647"},
    {"return bit.band(0xff, 0x0f), bit.band(-1, -2, -4), bit.bor(1,2,4,8,16,32,64,128), bit"
     ".bxor(1,2), bit.bxor(-1, 1), bit.band(1), bit.bor(-1), bit.bxor(5)",
     "OK n:15 n:-4 n:255 n:3 n:-2 n:1 n:-1 n:5"},
    {"return bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.lshift(1, -1), bi"
     "t.lshift(-1, 4), bit.rshift(-1, 1), bit.rshift(-1, 0), bit.rshift(-1, 31), bit.rshift"
     "(-1, 32), bit.arshift(-256, 4), bit.arshift(-1, 31), bit.arshift(2^31, 1), bit.arshif"
     "t(256, 4), bit.arshift(-1, 0)",
     "OK n:-2147483648 n:1 n:2 n:-2147483648 n:-16 n:2147483647 n:-1 n:1 n:-1 n:-16 n:-1 n:"
     "-1073741824 n:16 n:-1"},
    {"return bit.rol(0x12345678, 4), bit.rol(0x12345678, 0), bit.rol(0x12345678, 32), bit.r"
     "ol(0x12345678, 36), bit.ror(0x12345678, 4), bit.ror(1, 1), bit.ror(1, 0), bit.rol(-1,"
     " 7)",
     "OK n:591751041 n:305419896 n:305419896 n:591751041 n:-2128394905 n:-2147483648 n:1 n:"
     "-1"},
    {"return bit.bswap(0x12345678), bit.bswap(-1), bit.bswap(1), bit.bswap(0x80)",
     "OK n:2018915346 n:-1 n:16777216 n:-2147483648"},
    {"return bit.lshift(1)",
     "ERR s\"bad argument #2 to 'lshift' (number expected, got no value)\""},
    {"return bit.rshift(1.7, 1.6), bit.lshift(3, \"2\"), bit.band(2^40 + 7, 3)",
     "OK n:0 n:12 n:3"},
    {"local t = {} for k, v in pairs(bit) do t[#t+1] = k end table.sort(t) return table.con"
     "cat(t, ',')",
     "OK s\"arshift,band,bnot,bor,bswap,bxor,lshift,rol,ror,rshift,tobit,tohex\""},
};

static const struct lua_case cases_struct_pack[] = {
    {"return struct.pack('>i', 1), struct.pack('<i', 1), struct.pack('i', -2), struct.pack("
     "'>I2', 65535), struct.pack('<h', -1), struct.pack('>H', 0x1234)",
     "OK s\"\\x00\\x00\\x00\\x01\" s\"\\x01\\x00\\x00\\x00\" s\"\\xfe\\xff\\xff\\xff\" s\"\\"
     "xff\\xff\" s\"\\xff\\xff\" s\"\\x124\""},
    {"return struct.pack('bBhHlLT', -1, 255, -2, 65534, -3, 2^40, 7)",
     "OK s\"\\xff\\xff\\xfe\\xff\\xfe\\xff\\xfd\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\x0"
     "0\\x00\\x00\\x00\\x01\\x00\\x00\\x07\\x00\\x00\\x00\\x00\\x00\\x00\\x00\""},
    {"return struct.pack('>i3', 0x123456), struct.pack('<i3', -1), struct.pack('>i1', 300),"
     " struct.pack('>I8', 2^64), struct.pack('>I8', 2^63), struct.pack('>i8', -2^63), struc"
     "t.pack('>I8', 0/0), struct.pack('>i8', -1e300), struct.pack('>I8', 1e300)",
     "OK s\"\\x124V\" s\"\\xff\\xff\\xff\" s\",\" s\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x"
     "00\" s\"\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x00\" s\"\\x80\\x00\\x00\\x00\\x00\\x00\\"
     "x00\\x00\" s\"\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\x00\" s\"\\x80\\x00\\x00\\x00\\x00"
     "\\x00\\x00\\x00\" s\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\""},
    {"return struct.pack('<i10', -1), struct.pack('>i10', -1), struct.pack('>I16', 2^56+1),"
     " struct.pack('<I9', 2^63 + 2^62)",
     "OK s\"\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x00\\x00\" s\"\\x00\\x00\\xff\\xff\\x"
     "ff\\xff\\xff\\xff\\xff\\xff\" s\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\"
     "x00\\x00\\x00\\x00\\x00\\x00\" s\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\xc0\\x00\""},
    {"return struct.pack('>i33', 1)",
     "ERR s\"integral size 33 is larger than limit of 32\""},
    {"return struct.pack('>i32', 1)",
     "OK s\"\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x0"
     "0\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\""},
    {"return struct.pack('>i0', 1), struct.pack('>I0', 1)",
     "OK s\"\" s\"\""},
    {"return struct.pack('i99999999999', 1)",
     "ERR s\"integral size overflow\""},
    {"return struct.pack('i2147483647', 1)",
     "ERR s\"integral size 2147483647 is larger than limit of 32\""},
    {"return struct.pack('i2147483648', 1)",
     "ERR s\"integral size overflow\""},
    {"return struct.pack('>f', 1.5), struct.pack('<d', 1.5), struct.pack('>d', -0.1), struc"
     "t.pack('f', 0.1), struct.pack('>f', 1/0), struct.pack('>f', 1e300)",
     "OK s\"\?\\xc0\\x00\\x00\" s\"\\x00\\x00\\x00\\x00\\x00\\x00\\xf8\?\" s\"\\xbf\\xb9\\x"
     "99\\x99\\x99\\x99\\x99\\x9a\" s\"\\xcd\\xcc\\xcc=\" s\"\\x7f\\x80\\x00\\x00\" s\"\\x7"
     "f\\x80\\x00\\x00\""},
    {"return struct.pack('c', 'abc'), struct.pack('c2', 'abc'), struct.pack('c0', 'abc'), s"
     "truct.pack('s', 'abc'), struct.pack('s', ''), struct.pack('c0', '')",
     "OK s\"a\" s\"ab\" s\"abc\" s\"abc\\x00\" s\"\\x00\" s\"\""},
    {"return struct.pack('c5', 'abc')",
     "ERR s\"bad argument #3 to 'pack' (string too short)\""},
    {"return struct.pack('ic5', 1, 'abc')",
     "ERR s\"bad argument #4 to 'pack' (string too short)\""},
    {"return struct.pack('s', 1234)",
     "OK s\"1234\\x00\""},
    {"return struct.pack('s', {})",
     "ERR s\"bad argument #2 to 'pack' (string expected, got table)\""},
    {"return struct.pack('i', 'abc')",
     "ERR s\"bad argument #2 to 'pack' (number expected, got string)\""},
    {"return struct.pack('i')",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"return struct.pack('x'), struct.pack('xxbx', 1), struct.pack(' > i < i ', 1, 1), stru"
     "ct.pack('=i', 1)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '=')\""},
    {"return struct.pack('!4 b i', 1, 2), struct.pack('!b h', 1, 2), struct.pack('!2 b d', "
     "1, 2), struct.pack('!8 b d', 1, 2), struct.pack('! b d', 1, 2), struct.pack('!4 b i3'"
     ", 1, 2), struct.pack('!4 b c3 i', 1, 'abc', 2)",
     "OK s\"\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00\" s\"\\x01\\x00\\x02\\x00\" s\"\\x01\\"
     "x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00@\" s\"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00"
     "\\x00\\x00\\x00\\x00\\x00\\x00\\x00@\" s\"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x"
     "00\\x00\\x00\\x00\\x00\\x00\\x00@\" s\"\\x01\\x00\\x00\\x02\\x00\\x00\" s\"\\x01abc\\"
     "x02\\x00\\x00\\x00\""},
    {"return struct.pack('!3 i', 1)",
     "ERR s\"alignment 3 is not a power of 2\""},
    {"return struct.pack('!0 i', 1)",
     "ERR s\"alignment 0 is not a power of 2\""},
    {"return struct.pack('!16 b d', 1, 2)",
     "OK s\"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00@\""},
    {"return struct.pack('z', 1)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option 'z')\""},
    {"return struct.pack('i', 1, 2, 3)",
     "OK s\"\\x01\\x00\\x00\\x00\""},
    {"return struct.pack()",
     "ERR s\"bad argument #1 to 'pack' (string expected, got no value)\""},
    {"return struct.pack(12, 1)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '1')\""},
    {"return struct.pack('')",
     "OK s\"\""},
    {"return struct.pack('>i', 2^31), struct.pack('>i', -2^31 - 1), struct.pack('>b', 1.7),"
     " struct.pack('>b', -1.7), struct.pack('>I', -1)",
     "OK s\"\\x80\\x00\\x00\\x00\" s\"\\x7f\\xff\\xff\\xff\" s\"\\x01\" s\"\\xff\" s\"\\xff"
     "\\xff\\xff\\xff\""},
    {"return struct.pack('c', 'a', 'b'), struct.pack('s', 'a\\0b')",
     "OK s\"a\" s\"a\\x00b\\x00\""},
    {"local t = {} for k, v in pairs(struct) do t[#t+1] = k end table.sort(t) return table."
     "concat(t, ',')",
     "OK s\"pack,size,unpack\""},
};

static const struct lua_case cases_struct_unpack[] = {
    {"return struct.unpack('>i', '\\0\\0\\0\\1'), struct.unpack('<i', '\\255\\255\\255\\255"
     "'), struct.unpack('<I', '\\255\\255\\255\\255'), struct.unpack('>h', '\\128\\0'), str"
     "uct.unpack('>H', '\\128\\0')",
     "OK n:1 n:-1 n:4294967295 n:-32768 n:32768 n:3"},
    {"return struct.unpack('bBhHlLT', struct.pack('bBhHlLT', -1, 255, -2, 65534, -3, 2^40, "
     "7))",
     "OK n:-1 n:255 n:-2 n:65534 n:-3 n:1099511627776 n:7 n:31"},
    {"return struct.unpack('>i3', '\\255\\255\\254'), struct.unpack('<i10', string.rep('\\2"
     "55', 10)), struct.unpack('>i10', '\\0\\0\\128\\0\\0\\0\\0\\0\\0\\1'), struct.unpack('"
     ">I10', '\\1\\2\\0\\0\\0\\0\\0\\0\\0\\1'), struct.unpack('>i9', '\\0\\255\\255\\255\\2"
     "55\\255\\255\\255\\128'), struct.unpack('<i12', '\\128\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\"
     "0')",
     "OK n:-2 n:-1 n:-32767 n:1 n:-128 n:128 n:13"},
    {"return struct.unpack('>i16', string.rep('\\255', 16)), struct.unpack('>i16', string.r"
     "ep('\\0', 15) .. '\\128'), struct.unpack('>i32', string.rep('\\0', 31) .. '\\255'), s"
     "truct.unpack('<I8', string.rep('\\255', 8)), struct.unpack('<i8', string.rep('\\255',"
     " 8))",
     "OK n:-1 n:128 n:255 n:1.8446744073709552e+19 n:-1 n:9"},
    {"return struct.unpack('i', 'abc')",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('i', 'abcdabcd', 5), struct.unpack('i', 'abcdabcd', 6)",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('i', 'abcdabcd', 0)",
     "ERR s\"bad argument #3 to 'unpack' (offset must be 1 or greater)\""},
    {"return struct.unpack('i', 'abcdabcd', -1)",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('b', 'abcdabcd', 9)",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('b', 'abcdabcd', 8), struct.unpack('', 'abc', 4), struct.unpack("
     "'', 'abc', 100)",
     "OK n:100 n:4 n:100"},
    {"return struct.unpack('c0', 'abc')",
     "ERR s\"format 'c0' needs a previous size\""},
    {"return struct.unpack('bc0', '\\3abcdef'), struct.unpack('>hc0', '\\0\\2abcdef'), stru"
     "ct.unpack('c2c1', 'abc'), struct.unpack('c', 'abc')",
     "OK s\"abc\" s\"ab\" s\"ab\" s\"a\" n:2"},
    {"return struct.unpack('bc0', '\\9abc')",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('dc0', struct.pack('d', 1.5) .. 'abc')",
     "OK s\"a\" n:10"},
    {"return struct.unpack('bc0', '\\255abc')",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack('s', 'abc\\0def\\0'), struct.unpack('ss', 'abc\\0def\\0'), struc"
     "t.unpack('s', '\\0')",
     "OK s\"abc\" s\"abc\" s\"\" n:2"},
    {"return struct.unpack('s', 'abc')",
     "ERR s\"unfinished string in data\""},
    {"return struct.unpack('ss', 'abc\\0')",
     "ERR s\"unfinished string in data\""},
    {"return struct.unpack('>f', struct.pack('>f', 1.5)), struct.unpack('<d', struct.pack('"
     "<d', -0.1)), struct.unpack('f', struct.pack('f', 0.1))",
     "OK n:1.5 n:-0.10000000000000001 n:0.10000000149011612 n:5"},
    {"return struct.unpack('x b x b', '\\1\\2\\3\\4'), struct.unpack('!4 b i', struct.pack("
     "'!4 b i', 1, 2)), struct.unpack('=i', '\\1\\0\\0\\0')",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '=')\""},
    {"return struct.unpack('z', 'abc')",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option 'z')\""},
    {"return struct.unpack('i')",
     "ERR s\"bad argument #2 to 'unpack' (string expected, got no value)\""},
    {"return struct.unpack('i', nil)",
     "ERR s\"bad argument #2 to 'unpack' (string expected, got nil)\""},
    {"return struct.unpack('i', 'abcd', 'x')",
     "ERR s\"bad argument #3 to 'unpack' (number expected, got string)\""},
    {"return struct.unpack('i', 'abcd', 1.9), struct.unpack('b', 'abcd', 2.5)",
     "OK n:1684234849 n:98 n:3"},
    {"return struct.unpack('!2 b I3 i', string.rep('\\1', 16))",
     "OK n:1 n:65793 n:16843009 n:11"},
    {"return struct.unpack(string.rep('b', 10000), string.rep('\\1', 10000))",
     "ERR s\"stack overflow (too many results)\""},
    {"return select('#', struct.unpack(string.rep('b', 7000), string.rep('\\1', 7000)))",
     "OK n:7001"},
};

static const struct lua_case cases_struct_size[] = {
    {"return struct.size('i'), struct.size('bhilTfdx'), struct.size('!8 b d'), struct.size("
     "'c10'), struct.size('i7'), struct.size(''), struct.size('  >< ')",
     "OK n:4 n:36 n:16 n:10 n:7 n:0 n:0"},
    {"return struct.size('z')",
     "OK n:0"},
    {"return struct.size('s')",
     "ERR s\"bad argument #1 to 'size' (option 's' has no fixed size)\""},
    {"return struct.size('c0')",
     "ERR s\"bad argument #1 to 'size' (option 'c0' has no fixed size)\""},
    {"return struct.size('!3')",
     "ERR s\"alignment 3 is not a power of 2\""},
    {"return struct.size('i40')",
     "ERR s\"integral size 40 is larger than limit of 32\""},
    {"return struct.size('\?')",
     "ERR s\"bad argument #1 to 'size' (invalid format option '\?')\""},
};

static const struct lua_case cases_cmsgpack_pack[] = {
    {"return cmsgpack.pack(0), cmsgpack.pack(1), cmsgpack.pack(127), cmsgpack.pack(128), cm"
     "sgpack.pack(255), cmsgpack.pack(256), cmsgpack.pack(65535), cmsgpack.pack(65536), cms"
     "gpack.pack(2^32-1), cmsgpack.pack(2^32), cmsgpack.pack(2^53), cmsgpack.pack(2^63-1024"
     ")",
     "OK s\"\\x00\" s\"\\x01\" s\"\\x7f\" s\"\\xcc\\x80\" s\"\\xcc\\xff\" s\"\\xcd\\x01\\x0"
     "0\" s\"\\xcd\\xff\\xff\" s\"\\xce\\x00\\x01\\x00\\x00\" s\"\\xce\\xff\\xff\\xff\\xff\""
     " s\"\\xcf\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x00\" s\"\\xcf\\x00 \\x00\\x00\\x00\\x0"
     "0\\x00\\x00\" s\"\\xcf\\x7f\\xff\\xff\\xff\\xff\\xff\\xfc\\x00\""},
    {"return cmsgpack.pack(-1), cmsgpack.pack(-32), cmsgpack.pack(-33), cmsgpack.pack(-128)"
     ", cmsgpack.pack(-129), cmsgpack.pack(-32768), cmsgpack.pack(-32769), cmsgpack.pack(-2"
     "^31), cmsgpack.pack(-2^31-1), cmsgpack.pack(-2^63), cmsgpack.pack(-1099511627776)",
     "OK s\"\\xff\" s\"\\xe0\" s\"\\xd0\\xdf\" s\"\\xd0\\x80\" s\"\\xd1\\xff\\x7f\" s\"\\xd"
     "1\\x80\\x00\" s\"\\xd2\\xff\\xff\\x7f\\xff\" s\"\\xd2\\x80\\x00\\x00\\x00\" s\"\\xd3\\"
     "xff\\xff\\xff\\xff\\x7f\\xff\\xff\\xff\" s\"\\xd3\\x80\\x00\\x00\\x00\\x00\\x00\\x00\\"
     "x00\" s\"\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\""},
    {"return cmsgpack.pack(0.5), cmsgpack.pack(0.1), cmsgpack.pack(-1.5), cmsgpack.pack(1/0"
     "), cmsgpack.pack(-1/0), cmsgpack.pack(2^63), cmsgpack.pack(2^64), cmsgpack.pack(-2^63"
     "-4096), cmsgpack.pack(1e300), cmsgpack.pack(-0.0), cmsgpack.pack(3.4028234663852886e3"
     "8)",
     "OK s\"\\xca\?\\x00\\x00\\x00\" s\"\\xcb\?\\xb9\\x99\\x99\\x99\\x99\\x99\\x9a\" s\"\\x"
     "ca\\xbf\\xc0\\x00\\x00\" s\"\\xca\\x7f\\x80\\x00\\x00\" s\"\\xca\\xff\\x80\\x00\\x00\""
     " s\"\\xca_\\x00\\x00\\x00\" s\"\\xca_\\x80\\x00\\x00\" s\"\\xcb\\xc3\\xe0\\x00\\x00\\"
     "x00\\x00\\x00\\x02\" s\"\\xcb~7\\xe4<\\x88\\x00u\\x9c\" s\"\\x00\" s\"\\xca\\x7f\\x7f"
     "\\xff\\xff\""},
    {"local n = cmsgpack.pack(0/0) return #n, n:byte(1)",
     "OK n:9 n:203"},
    {"return cmsgpack.pack(''), cmsgpack.pack('abc'), cmsgpack.pack(string.rep('x', 31)):su"
     "b(1,3), cmsgpack.pack(string.rep('x', 32)):sub(1,3), cmsgpack.pack(string.rep('x', 25"
     "5)):sub(1,3), cmsgpack.pack(string.rep('x', 256)):sub(1,4), cmsgpack.pack(string.rep("
     "'x', 65535)):sub(1,4), cmsgpack.pack(string.rep('x', 65536)):sub(1,6)",
     "OK s\"\\xa0\" s\"\\xa3abc\" s\"\\xbfxx\" s\"\\xd9 x\" s\"\\xd9\\xffx\" s\"\\xda\\x01\\"
     "x00x\" s\"\\xda\\xff\\xffx\" s\"\\xdb\\x00\\x01\\x00\\x00x\""},
    {"return cmsgpack.pack({}), cmsgpack.pack({1,2,3}), cmsgpack.pack({[1]=1,[2]=2}), cmsgp"
     "ack.pack({[2]=5}), cmsgpack.pack({a=1}), cmsgpack.pack({1, nil, 3}), cmsgpack.pack({["
     "1.5]=1}), cmsgpack.pack({[0]=1}), cmsgpack.pack({[-1]=1})",
     "OK s\"\\x90\" s\"\\x93\\x01\\x02\\x03\" s\"\\x92\\x01\\x02\" s\"\\x81\\x02\\x05\" s\""
     "\\x81\\xa1a\\x01\" s\"\\x82\\x01\\x01\\x03\\x03\" s\"\\x81\\xca\?\\xc0\\x00\\x00\\x01"
     "\" s\"\\x81\\x00\\x01\" s\"\\x81\\xff\\x01\""},
    {"local t = {} for i = 1, 15 do t[i] = i end local a = cmsgpack.pack(t) t[16] = 16 loca"
     "l b = cmsgpack.pack(t) return a:sub(1,3), b:sub(1,4)",
     "OK s\"\\x9f\\x01\\x02\" s\"\\xdc\\x00\\x10\\x01\""},
    {"local t = {} for i = 1, 65535 do t[i] = 0 end local a = cmsgpack.pack(t) t[65536] = 0"
     " local b = cmsgpack.pack(t) return a:sub(1,4), #a, b:sub(1,6), #b",
     "OK s\"\\xdc\\xff\\xff\\x00\" n:65538 s\"\\xdd\\x00\\x01\\x00\\x00\\x00\" n:65541"},
    {"local t = {} for i = 1, 15 do t['k'..i] = i end local a = cmsgpack.pack(t) t.k16 = 16"
     " local b = cmsgpack.pack(t) return a:sub(1,1), #a, b:sub(1,3), #b",
     "OK s\"\\x8f\" n:67 s\"\\xde\\x00\\x10\" n:74"},
    {"local t = {} for i = 1, 65536 do t['k'..i] = 0 end local a = cmsgpack.pack(t) return "
     "a:sub(1,5), #a",
     "OK s\"\\xdf\\x00\\x01\\x00\\x00\" n:513187"},
    {"return cmsgpack.pack({a=1, b={1,2}, [3]='x', [true]=false})",
     "OK s\"\\x84\\xa1a\\x01\\xc3\\xc2\\x03\\xa1x\\xa1b\\x92\\x01\\x02\""},
    {"return cmsgpack.pack(1, 'a', {}, nil, true)",
     "OK s\"\\x01\\xa1a\\x90\\xc0\\xc3\""},
    {"return cmsgpack.pack()",
     "ERR s\"bad argument #0 to 'pack' (MessagePack pack needs input.)\""},
    {"local a = {x=nil,y=5} local b = {x=a} a['x'] = b local e = cmsgpack.pack(a) local h ="
     " '' for i = 1, #e do h = h .. string.format('%02x', e:byte(i)) end return h",
     "OK s\"82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a1790"
     "5a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0\""},
    {"local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack"
     "(t)",
     "OK s\"\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x91\\x9"
     "1\\xc0\""},
    {"return cmsgpack.unpack(cmsgpack.pack(1, -1, 0.5, 0.1, 'abc', true, false, nil, {1,2,{"
     "a='b'}}))",
     "OK n:1 n:-1 n:0.5 n:0.10000000000000001 s\"abc\" true false nil {[n:1]=n:1,[n:2]=n:2,"
     "[n:3]={[s\"a\"]=s\"b\"}}"},
    {"local t = {} for k, v in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return tabl"
     "e.concat(t, ',')",
     "OK s\"_COPYRIGHT,_DESCRIPTION,_NAME,_VERSION,pack,unpack,unpack_limit,unpack_one\""},
    {"local ok, e = pcall(cmsgpack.pack, unpack({1,2,3,4,5,6,7,8,9,10})) return ok, e",
     "OK true s\"\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08\\x09\\x0a\""},
    {"local big = {} for i = 1, 7000 do big[i] = i end return #cmsgpack.pack(unpack(big))",
     "ERR s\"bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)\""},
    {"return cmsgpack.unpack(cmsgpack.pack(string.rep('x', 40))) == string.rep('x', 40)",
     "OK true"},
    {"local function try(n) local big = {} for i = 1, n do big[i] = i end return pcall(cmsg"
     "pack.pack, unpack(big)) end local lo, hi = 1, 7990 while lo < hi do local m = math.fl"
     "oor((lo + hi + 1) / 2) if try(m) then lo = m else hi = m - 1 end end return lo",
     "OK n:4000"},
    {"return cmsgpack.pack(nil), cmsgpack.pack(true), cmsgpack.pack(false), cmsgpack.pack(t"
     "ype), cmsgpack.pack(cjson.null), cmsgpack.pack(coroutine.create(function() end))",
     "OK s\"\\xc0\" s\"\\xc3\" s\"\\xc2\" s\"\\xc0\" s\"\\xc0\" s\"\\xc0\""},
};

static const struct lua_case cases_cmsgpack_unpack[] = {
    {"return cmsgpack.unpack('')",
     "OK "},
    {"return cmsgpack.unpack('\\192\\192')",
     "OK nil nil"},
    {"return cmsgpack.unpack('\\204')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\193')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\212\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\196\\3abc'), cmsgpack.unpack('\\197\\0\\3abc'), cmsgpack.un"
     "pack('\\198\\0\\0\\0\\3abc'), cmsgpack.unpack('\\217\\3abc')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\199\\1\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\200\\0\\1\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\201\\0\\0\\0\\1\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\213\\1\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\214\\1\\1\\1\\1\\1')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\215\\1' .. string.rep('\\1', 8))",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\216\\1' .. string.rep('\\1', 16))",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'), cmsgpack.unp"
     "ack('\\211\\128\\0\\0\\0\\0\\0\\0\\0'), cmsgpack.unpack('\\211\\255\\255\\255\\255\\2"
     "55\\255\\255\\255'), cmsgpack.unpack('\\208\\128'), cmsgpack.unpack('\\209\\128\\0'),"
     " cmsgpack.unpack('\\210\\128\\0\\0\\0'), cmsgpack.unpack('\\206\\255\\255\\255\\255')"
     ", cmsgpack.unpack('\\224'), cmsgpack.unpack('\\255')",
     "OK n:-1 n:-9.2233720368547758e+18 n:-1 n:-128 n:-32768 n:-2147483648 n:4294967295 n:-"
     "32 n:-1"},
    {"return cmsgpack.unpack('\\202\\127\\128\\0\\0'), cmsgpack.unpack('\\202\\255\\192\\0\\"
     "0') ~= cmsgpack.unpack('\\202\\255\\192\\0\\0')",
     "OK n:inf true"},
    {"return cmsgpack.unpack('\\145')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\146\\1')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\129\\1')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\129\\192\\1')",
     "ERR s\"table index is nil\""},
    {"return cmsgpack.unpack('\\129\\203\\255\\248\\0\\0\\0\\0\\0\\0\\1')",
     "ERR s\"table index is NaN\""},
    {"return cmsgpack.unpack('\\129\\1\\192')",
     "OK {}"},
    {"return cmsgpack.unpack('\\130\\1\\2\\1\\3')",
     "OK {[n:1]=n:3}"},
    {"return cmsgpack.unpack('\\220\\0\\2\\1\\2'), cmsgpack.unpack('\\221\\0\\0\\0\\1\\7'),"
     " cmsgpack.unpack('\\222\\0\\1\\1\\2'), cmsgpack.unpack('\\223\\0\\0\\0\\1\\1\\2')",
     "OK {[n:1]=n:1,[n:2]=n:2} {[n:1]=n:7} {[n:1]=n:2} {[n:1]=n:2}"},
    {"return cmsgpack.unpack('\\221\\255\\255\\255\\255')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\163ab')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\218\\0')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack('\\219\\255\\255\\255\\255abc')",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack(123)",
     "OK n:49 n:50 n:51"},
    {"return cmsgpack.unpack()",
     "ERR s\"bad argument #1 to 'unpack' (string expected, got no value)\""},
    {"return cmsgpack.unpack({})",
     "ERR s\"bad argument #1 to 'unpack' (string expected, got table)\""},
    {"return cmsgpack.unpack(string.rep('\\145', 100) .. '\\1')",
     "OK {[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1"
     "]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]"
     "={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={[n:1]="
     "{[n:1]={[n:1]={[n:1]={[n:1]={[n:1]={...}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}"},
    {"local ok, e = pcall(cmsgpack.unpack, string.rep('\\145', 10000) .. '\\1') return ok, "
     "type(e) == 'string' and e or type(e)",
     "OK false s\"stack overflow (in function mp_decode_to_lua_array)\""},
    {"local ok, e = pcall(cmsgpack.unpack, string.rep('\\129\\161a', 3000) .. '\\1') return"
     " ok, type(e) == 'string' and e or type(e)",
     "OK true s\"table\""},
    {"return select('#', cmsgpack.unpack(string.rep('\\1', 7000)))",
     "OK n:7000"},
    {"return select('#', cmsgpack.unpack(string.rep('\\1', 9000)))",
     "ERR s\"stack overflow (too many return values at once; use unpack_one or unpack_limit"
     " instead.)\""},
    {"return cmsgpack.unpack('\\196\\3abc')",
     "ERR s\"Bad data format in input.\""},
    {"return cmsgpack.unpack('\\217\\3abc')",
     "OK s\"abc\""},
    {"return cmsgpack.unpack('\\197\\0\\3abc')",
     "ERR s\"Bad data format in input.\""},
    {"local function try(n) return pcall(cmsgpack.unpack, string.rep('\\1', n)) end local l"
     "o, hi = 1, 9000 while lo < hi do local m = math.floor((lo + hi + 1) / 2) if try(m) th"
     "en lo = m else hi = m - 1 end end return lo",
     "OK n:7999"},
    {"local function try(n) return pcall(cmsgpack.unpack, string.rep('\\145', n) .. '\\1') "
     "end local lo, hi = 1, 20000 while lo < hi do local m = math.floor((lo + hi + 1) / 2) "
     "if try(m) then lo = m else hi = m - 1 end end return lo",
     "OK n:3999"},
    {"local function try(n) return pcall(cmsgpack.unpack, string.rep('\\129\\161a', n) .. '"
     "\\1') end local lo, hi = 1, 20000 while lo < hi do local m = math.floor((lo + hi + 1)"
     " / 2) if try(m) then lo = m else hi = m - 1 end end return lo",
     "OK n:3999"},
    {"local function try(n) return pcall(cmsgpack.unpack, string.rep('\\129\\145', n) .. '\\"
     "1') end local lo, hi = 1, 20000 while lo < hi do local m = math.floor((lo + hi + 1) /"
     " 2) if try(m) then lo = m else hi = m - 1 end end return lo",
     "OK n:1"},
    {"return pcall(cmsgpack.unpack, string.rep('\\129\\161a', 20000) .. '\\1')",
     "OK false s\"stack overflow (too many return values at once; use unpack_one or unpack_"
     "limit instead.)\""},
    {"return pcall(cmsgpack.unpack, string.rep('\\129', 20000) .. '\\1')",
     "OK false s\"stack overflow (too many return values at once; use unpack_one or unpack_"
     "limit instead.)\""},
};

static const struct lua_case cases_cmsgpack_offsets[] = {
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))",
     "OK n:1 n:1"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)",
     "OK n:2 n:2"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)",
     "OK n:-1 n:3"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)",
     "OK n:-1"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 4)",
     "ERR s\"Start offset 4 greater than input length 3.\""},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)",
     "ERR s\"Invalid request to unpack with offset of -1 and limit of 3.\""},
    {"return cmsgpack.unpack_one('')",
     "OK n:-1"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1), 'x')",
     "ERR s\"bad argument #2 to 'unpack_one' (number expected, got string)\""},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1), 0, 'extra')",
     "OK n:-1 n:1"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)",
     "OK n:2 n:1 n:2"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)",
     "OK n:-1 n:3"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)",
     "OK n:1 n:2 n:3"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 1)",
     "OK n:1"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 10)",
     "OK n:-1 n:1 n:2 n:3"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1)",
     "ERR s\"Invalid request to unpack with offset of 0 and limit of 3.\""},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))",
     "ERR s\"bad argument #2 to 'unpack_limit' (number expected, got no value)\""},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 1, 1.5)",
     "OK n:2 n:2"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2^32 + 1)",
     "ERR s\"Start offset 1 greater than input length 3.\""},
    {"return pcall(cmsgpack.unpack_limit, string.rep('\\1', 9000), 8500)",
     "OK false s\"stack overflow (too many return values at once; use unpack_one or unpack_"
     "limit instead.)\""},
    {"return select('#', cmsgpack.unpack_limit(string.rep('\\1', 9000), 7997))",
     "OK n:7998"},
    {"local function try(n) return pcall(cmsgpack.unpack_limit, string.rep('\\1', 9000), n)"
     " end local lo, hi = 1, 9000 while lo < hi do local m = math.floor((lo + hi + 1) / 2) "
     "if try(m) then lo = m else hi = m - 1 end end return lo",
     "OK n:7998"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2^32+1)",
     "OK n:-1 n:1 n:2 n:3"},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -2^32+1)",
     "ERR s\"Invalid request to unpack with offset of 0 and limit of 3.\""},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2^31)",
     "OK n:-1 n:1 n:2 n:3"},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -2^32)",
     "ERR s\"Invalid request to unpack with offset of 0 and limit of 3.\""},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -2^32+1)",
     "ERR s\"Invalid request to unpack with offset of 1 and limit of 3.\""},
    {"return cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2^32)",
     "ERR s\"Start offset 0 greater than input length 3.\""},
    {"return pcall(cmsgpack.unpack_limit, string.rep('\\1', 9000), 7999)",
     "OK false s\"stack overflow (in function mp_unpack_full)\""},
    {"return cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 2^32)",
     "ERR s\"Start offset 0 greater than input length 3.\""},
};

static const struct lua_case cases_cjson_limits[] = {
    {"local function try(n) local t = {} for i = 1, n do t = {t} end return pcall(cjson.enc"
     "ode, t) end cjson.encode_max_depth(100000) local lo, hi = 1, 20000 while lo < hi do l"
     "ocal m = math.floor((lo + hi + 1) / 2) if try(m) then lo = m else hi = m - 1 end end "
     "return lo, select(2, try(lo + 1))",
     "OK n:7996 s\"Cannot serialise, excessive nesting (7998)\""},
    {"local function try(n) local t = {} for i = 1, n do t = {a=t} end return pcall(cjson.e"
     "ncode, t) end cjson.encode_max_depth(100000) local lo, hi = 1, 20000 while lo < hi do"
     " local m = math.floor((lo + hi + 1) / 2) if try(m) then lo = m else hi = m - 1 end en"
     "d return lo, select(2, try(lo + 1))",
     "OK n:3998 s\"Cannot serialise, excessive nesting (4000)\""},
    {"local function try(n) return pcall(cjson.decode, string.rep('[', n) .. string.rep(']'"
     ", n)) end cjson.decode_max_depth(100000) local lo, hi = 1, 20000 while lo < hi do loc"
     "al m = math.floor((lo + hi + 1) / 2) if try(m) then lo = m else hi = m - 1 end end re"
     "turn lo, select(2, try(lo + 1))",
     "OK n:7998 s\"Found too many nested data structures (7999) at character 7999\""},
    {"local function try(n) return pcall(cjson.decode, string.rep('{\"a\":', n) .. '1' .. s"
     "tring.rep('}', n)) end cjson.decode_max_depth(100000) local lo, hi = 1, 20000 while l"
     "o < hi do local m = math.floor((lo + hi + 1) / 2) if try(m) then lo = m else hi = m -"
     " 1 end end return lo, select(2, try(lo + 1))",
     "OK n:3999 s\"Found too many nested data structures (4000) at character 19996\""},
};

static const struct lua_case cases_cjson_encode[] = {
    {"return cjson.encode({1,2,3}), cjson.encode({}), cjson.encode({a=1}), cjson.encode('a/"
     "b'), cjson.encode('\"\\\\\\b\\f\\n\\r\\t'), cjson.encode('\\0\\1\\31\\127\\128\\255 ~"
     "')",
     "OK s\"[1,2,3]\" s\"{}\" s\"{\"a\":1}\" s\"\"a\\/b\"\" s\"\"\\\"\\\\\\b\\f\\n\\r\\t\"\""
     " s\"\"\\u0000\\u0001\\u001f\\u007f\\x80\\xff ~\"\""},
    {"return cjson.encode(1), cjson.encode(-1), cjson.encode(0.1), cjson.encode(1/3), cjson"
     ".encode(1e15), cjson.encode(1e14), cjson.encode(123456789012345), cjson.encode(123456"
     "78901234), cjson.encode(-0.0), cjson.encode(2^53), cjson.encode(1e-5), cjson.encode(1"
     "e100), cjson.encode(0.5)",
     "OK s\"1\" s\"-1\" s\"0.1\" s\"0.33333333333333\" s\"1e+15\" s\"1e+14\" s\"1.234567890"
     "1234e+14\" s\"12345678901234\" s\"-0\" s\"9.007199254741e+15\" s\"1e-05\" s\"1e+100\""
     " s\"0.5\""},
    {"return cjson.encode(1/0)",
     "ERR s\"Cannot serialise number: must not be NaN or Inf\""},
    {"return cjson.encode(-1/0)",
     "ERR s\"Cannot serialise number: must not be NaN or Inf\""},
    {"return cjson.encode(0/0)",
     "ERR s\"Cannot serialise number: must not be NaN or Inf\""},
    {"return cjson.encode({1/0})",
     "ERR s\"Cannot serialise number: must not be NaN or Inf\""},
    {"return cjson.encode({[1/0]=1})",
     "ERR s\"Cannot serialise number: must not be NaN or Inf\""},
    {"return cjson.encode(nil), cjson.encode(true), cjson.encode(false), cjson.encode(cjson"
     ".null), cjson.encode({cjson.null})",
     "OK s\"null\" s\"true\" s\"false\" s\"null\" s\"[null]\""},
    {"return cjson.encode(type)",
     "ERR s\"Cannot serialise function: type not supported\""},
    {"return cjson.encode({a=type})",
     "ERR s\"Cannot serialise function: type not supported\""},
    {"return cjson.encode(coroutine.create(function() end))",
     "ERR s\"Cannot serialise thread: type not supported\""},
    {"return cjson.encode({[true]=1})",
     "ERR s\"Cannot serialise boolean: table key must be a number or string\""},
    {"return cjson.encode({[{}]=1})",
     "ERR s\"Cannot serialise table: table key must be a number or string\""},
    {"return cjson.encode()",
     "ERR s\"bad argument #1 to 'encode' (expected 1 argument)\""},
    {"return cjson.encode(1, 2)",
     "ERR s\"bad argument #1 to 'encode' (expected 1 argument)\""},
    {"return cjson.encode({1, 2, nil, 4}), cjson.encode({[1]=1, [2]=2, [4]=4}), cjson.encod"
     "e({[1]=1, [10]=1}), cjson.encode({[10]=1}), cjson.encode({[3]=1})",
     "OK s\"[1,2,null,4]\" s\"[1,2,null,4]\" s\"[1,null,null,null,null,null,null,null,null,"
     "1]\" s\"[null,null,null,null,null,null,null,null,null,1]\" s\"[null,null,1]\""},
    {"return cjson.encode({[11]=1})",
     "ERR s\"Cannot serialise table: excessively sparse array\""},
    {"return cjson.encode({[1]=1, [2]=2, [3]=3, [4]=4, [5]=5, [6]=6, [13]=13}), cjson.encod"
     "e({[1]=1, [2]=2, [3]=3, [4]=4, [5]=5, [6]=6, [12]=12})",
     "OK s\"[1,2,3,4,5,6,null,null,null,null,null,null,13]\" s\"[1,2,3,4,5,6,null,null,null"
     ",null,null,12]\""},
    {"return cjson.encode({[2^31]=1})",
     "OK s\"{\"2147483648\":1}\""},
    {"return cjson.encode({[2^31-1]=1})",
     "ERR s\"Cannot serialise table: excessively sparse array\""},
    {"return cjson.encode({[2^40]=1})",
     "OK s\"{\"1099511627776\":1}\""},
    {"return cjson.encode({[1]=1, [2^40]=1})",
     "OK s\"{\"1\":1,\"1099511627776\":1}\""},
    {"return cjson.encode({[1.5]=1}), cjson.encode({[0]=1}), cjson.encode({[-1]=1}), cjson."
     "encode({[1]=1, a=2}):len()",
     "OK s\"{\"1.5\":1}\" s\"{\"0\":1}\" s\"{\"-1\":1}\" n:13"},
    {"local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return cjson.encode"
     "(t):len()",
     "OK n:2000"},
    {"local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return cjson.encod"
     "e(t)",
     "ERR s\"Cannot serialise, excessive nesting (1001)\""},
    {"local t = {} local c = t for i = 1, 1000 do c.a = {} c = c.a end return cjson.encode("
     "t)",
     "ERR s\"Cannot serialise, excessive nesting (1001)\""},
    {"local t = {} t[1] = t return cjson.encode(t)",
     "ERR s\"Cannot serialise, excessive nesting (1001)\""},
    {"return cjson.encode({a={b={c={1,2,{d='e'}}}}})",
     "OK s\"{\"a\":{\"b\":{\"c\":[1,2,{\"d\":\"e\"}]}}}\""},
    {"return cjson.encode({['a\"b']='c\\\\d', [1.5]='x'})",
     "OK s\"{\"a\\\"b\":\"c\\\\d\",\"1.5\":\"x\"}\""},
    {"return cjson.encode({[1]='a', [1.5]='b'}):len()",
     "OK n:19"},
    {"return cjson.decode(cjson.encode({a={1,2,3,{b='c'}}, s='x/y\"z', n=cjson.null})).a[4]"
     ".b",
     "OK s\"c\""},
    {"return cjson.null, type(cjson.null), cjson.decode('null') == cjson.null, cjson.encode"
     "(cjson.decode('[null]'))",
     "OK NULL s\"userdata\" true s\"[null]\""},
    {"return cjson.encode({'\\226\\130\\172', '\\237\\160\\128'}), cjson.decode('\"\\226\\1"
     "30\\172\"')",
     "OK s\"[\"\\xe2\\x82\\xac\",\"\\xed\\xa0\\x80\"]\" s\"\\xe2\\x82\\xac\""},
    {"return cjson.encode(setmetatable({}, {__index=function() return 1 end})), cjson.encod"
     "e(setmetatable({1,2}, {__len=function() return 5 end}))",
     "OK s\"{}\" s\"[1,2]\""},
    {"return cjson.encode({[1]=1, [2]=2, [3]=3, ['3']=4}):len()",
     "OK n:25"},
    {"return cjson.encode(string.rep('x', 100000)):len()",
     "OK n:100002"},
    {"return cjson.encode(123456789.123), cjson.encode(-123.456e-10), cjson.encode(100), cj"
     "son.encode(2^31), cjson.encode(-2^63), cjson.encode(99999999999999), cjson.encode(999"
     "999999999999)",
     "OK s\"123456789.123\" s\"-1.23456e-08\" s\"100\" s\"2147483648\" s\"-9.2233720368548e"
     "+18\" s\"99999999999999\" s\"1e+15\""},
    {"return cjson.encode({[-0.0]=1}), cjson.encode({[1e20]=1})",
     "OK s\"{\"-0\":1}\" s\"{\"1e+20\":1}\""},
};

static const struct lua_case cases_cjson_settings[] = {
    {"cjson.encode_sparse_array(true) return cjson.encode({[11]=1}), cjson.encode({[1]=1, ["
     "20]=2}):len()",
     "OK s\"{\"11\":1}\" n:14"},
    {"cjson.encode_sparse_array(false, 0) return cjson.encode({[20]=1})",
     "OK s\"[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,nul"
     "l,null,null,null,1]\""},
    {"cjson.encode_sparse_array(false, 3, 0) return cjson.encode({[3]=1})",
     "OK s\"[null,null,1]\""},
    {"cjson.encode_sparse_array(false, 3, 0) return cjson.encode({[4]=1})",
     "ERR s\"Cannot serialise table: excessively sparse array\""},
    {"return cjson.encode_sparse_array(true, 5, 20)",
     "OK true n:5 n:20"},
    {"return cjson.encode_sparse_array('on')",
     "OK true n:2 n:10"},
    {"return cjson.encode_sparse_array('yes')",
     "ERR s\"bad argument #1 to 'encode_sparse_array' (invalid option 'yes')\""},
    {"return cjson.encode_sparse_array(1)",
     "ERR s\"bad argument #1 to 'encode_sparse_array' (invalid option '1')\""},
    {"return cjson.encode_sparse_array(nil, -1)",
     "ERR s\"bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 21474"
     "83647)\""},
    {"return cjson.encode_sparse_array(nil, nil, -1)",
     "ERR s\"bad argument #1 to 'encode_sparse_array' (expected integer between 0 and 21474"
     "83647)\""},
    {"return cjson.encode_sparse_array(nil, 'x')",
     "ERR s\"bad argument #2 to 'encode_sparse_array' (number expected, got string)\""},
    {"return cjson.encode_sparse_array(nil, 2.7)",
     "OK false n:2 n:10"},
    {"return cjson.encode_sparse_array(1, 2, 3, 4)",
     "ERR s\"bad argument #4 to 'encode_sparse_array' (found too many arguments)\""},
    {"return cjson.encode_max_depth(0)",
     "ERR s\"bad argument #1 to 'encode_max_depth' (expected integer between 1 and 21474836"
     "47)\""},
    {"return cjson.encode_max_depth(5), cjson.encode_max_depth()",
     "OK n:5 n:5"},
    {"return cjson.encode_max_depth(1, 2)",
     "ERR s\"bad argument #2 to 'encode_max_depth' (found too many arguments)\""},
    {"return cjson.encode_number_precision(15)",
     "ERR s\"bad argument #1 to 'encode_number_precision' (expected integer between 1 and 1"
     "4)\""},
    {"return cjson.encode_number_precision(0)",
     "ERR s\"bad argument #1 to 'encode_number_precision' (expected integer between 1 and 1"
     "4)\""},
    {"cjson.encode_number_precision(3) return cjson.encode(1/3), cjson.encode(12345), cjson"
     ".encode({[1/3]=1})",
     "OK s\"0.333\" s\"1.23e+04\" s\"{\"0.333\":1}\""},
    {"cjson.encode_number_precision(1) return cjson.encode(0.15), cjson.encode(25)",
     "OK s\"0.1\" s\"2e+01\""},
    {"return cjson.encode_keep_buffer(false), cjson.encode({1}), cjson.encode_keep_buffer('"
     "on'), cjson.encode_keep_buffer()",
     "OK false s\"[1]\" true true"},
    {"return cjson.encode_keep_buffer('x')",
     "ERR s\"bad argument #1 to 'encode_keep_buffer' (invalid option 'x')\""},
    {"return cjson.encode_keep_buffer({})",
     "ERR s\"bad argument #1 to 'encode_keep_buffer' (string expected, got table)\""},
    {"return cjson.encode_invalid_numbers(true), cjson.encode(1/0), cjson.encode(-1/0), cjs"
     "on.encode(0/0), cjson.encode(-(0/0)), cjson.encode({[1/0]=1})",
     "OK true s\"inf\" s\"-inf\" s\"nan\" s\"nan\" s\"{\"inf\":1}\""},
    {"return cjson.encode_invalid_numbers('null'), cjson.encode(1/0), cjson.encode(0/0), cj"
     "son.encode({1/0, 2}), cjson.encode({[1/0]=1}), cjson.encode_invalid_numbers()",
     "OK s\"null\" s\"null\" s\"null\" s\"[null,2]\" s\"{\"null\":1}\" s\"null\""},
    {"return cjson.encode_invalid_numbers('off'), cjson.encode_invalid_numbers('on'), cjson"
     ".encode_invalid_numbers(false)",
     "OK false true false"},
    {"return cjson.encode_invalid_numbers('maybe')",
     "ERR s\"bad argument #1 to 'encode_invalid_numbers' (invalid option 'maybe')\""},
    {"return cjson.encode_invalid_numbers(12)",
     "ERR s\"bad argument #1 to 'encode_invalid_numbers' (invalid option '12')\""},
    {"cjson.encode_max_depth(3) return cjson.encode({{{}}})",
     "OK s\"[[{}]]\""},
    {"cjson.encode_max_depth(3) return cjson.encode({{{{}}}})",
     "ERR s\"Cannot serialise, excessive nesting (4)\""},
    {"cjson.encode_max_depth(3) return cjson.encode({{{1}}}), cjson.encode({{{a=1}}})",
     "OK s\"[[[1]]]\" s\"[[{\"a\":1}]]\""},
    {"local c = cjson.new() c.encode_number_precision(3) return c.encode(1/3), cjson.encode"
     "(1/3), c.null == cjson.null",
     "OK s\"0.333\" s\"0.33333333333333\" true"},
    {"local c = cjson.new() return c.encode_max_depth(), c._NAME, c._VERSION",
     "OK n:1000 s\"cjson\" s\"2.1.0\""},
};

static const struct lua_case cases_cjson_decode[] = {
    {"return cjson.decode('[1,2,3]'), cjson.decode('{\"a\":1,\"b\":[true,false,null]}'), cj"
     "son.decode('\"abc\"'), cjson.decode('123'), cjson.decode('-1.5e3'), cjson.decode('tru"
     "e'), cjson.decode('null'), cjson.decode('  [ ]  '), cjson.decode('{}')",
     "OK {[n:1]=n:1,[n:2]=n:2,[n:3]=n:3} {[s\"a\"]=n:1,[s\"b\"]={[n:1]=true,[n:2]=false,[n:"
     "3]=NULL}} s\"abc\" n:123 n:-1500 true NULL {} {}"},
    {"return cjson.decode('')",
     "ERR s\"Expected value but found T_END at character 1\""},
    {"return cjson.decode('   ')",
     "ERR s\"Expected value but found T_END at character 4\""},
    {"return cjson.decode('x')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('[1 2]')",
     "ERR s\"Expected comma or array end but found T_NUMBER at character 4\""},
    {"return cjson.decode('[1,]')",
     "ERR s\"Expected value but found T_ARR_END at character 4\""},
    {"return cjson.decode('{\"a\" 1}')",
     "ERR s\"Expected colon but found T_NUMBER at character 6\""},
    {"return cjson.decode('{\"a\":1,}')",
     "ERR s\"Expected object key string but found T_OBJ_END at character 8\""},
    {"return cjson.decode('{1:1}')",
     "ERR s\"Expected object key string but found T_NUMBER at character 2\""},
    {"return cjson.decode('{\"a\":1 \"b\"}')",
     "ERR s\"Expected comma or object end but found T_STRING at character 8\""},
    {"return cjson.decode('[1] x')",
     "ERR s\"Expected the end but found invalid token at character 5\""},
    {"return cjson.decode('1 2')",
     "ERR s\"Expected the end but found T_NUMBER at character 3\""},
    {"return cjson.decode('\"abc')",
     "ERR s\"Expected value but found unexpected end of string at character 5\""},
    {"return cjson.decode('\"a\\\\x\"')",
     "ERR s\"Expected value but found invalid escape code at character 3\""},
    {"return cjson.decode('\"a\\\\u12\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 3\""},
    {"return cjson.decode('\"a\\\\u12g4\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 3\""},
    {"return cjson.decode('\"\\\\u0041\\\\u00e9\\\\u20ac\\\\ud83d\\\\ude00\\\\u0000z\"')",
     "OK s\"A\\xc3\\xa9\\xe2\\x82\\xac\\xf0\\x9f\\x98\\x80\\x00z\""},
    {"return cjson.decode('\"\\\\ud83d\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\ud83dx\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\ud83d\\\\u0041\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\ude00\\\\ud83d\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\ud83d\\\\ude0\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\ud83d\\\\\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('\"\\\\/\\\\\"\\\\\\\\\\\\b\\\\f\\\\n\\\\r\\\\t\"')",
     "OK s\"/\"\\\\x08\\x0c\\x0a\\x0d\\x09\""},
    {"return cjson.decode('\"a\\1\\127b\"'), cjson.decode('\"tab\\there\"')",
     "OK s\"a\\x01\\x7fb\" s\"tab\\x09here\""},
    {"return cjson.decode('tru')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('truex')",
     "ERR s\"Expected the end but found invalid token at character 5\""},
    {"return cjson.decode('nul')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('-')",
     "ERR s\"Expected value but found invalid number at character 1\""},
    {"return cjson.decode('-a')",
     "ERR s\"Expected value but found invalid number at character 1\""},
    {"return cjson.decode('+1'), cjson.decode('0x10'), cjson.decode('-0x10'), cjson.decode("
     "'010'), cjson.decode('1.'), cjson.decode('.5')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('.5')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('+1'), cjson.decode('0x10'), cjson.decode('-0x10'), cjson.decode("
     "'010'), cjson.decode('1.'), cjson.decode('1e5'), cjson.decode('1E+2'), cjson.decode('"
     "-0')",
     "OK n:1 n:16 n:-16 n:10 n:1 n:100000 n:100 n:-0"},
    {"return cjson.decode('inf'), cjson.decode('-inf'), cjson.decode('Infinity'), cjson.dec"
     "ode('-Infinity'), cjson.decode('INF')",
     "OK n:inf n:-inf n:inf n:-inf n:inf"},
    {"local v = cjson.decode('nan') return v ~= v",
     "OK true"},
    {"local v = cjson.decode('NaN') return v ~= v",
     "OK true"},
    {"local v = cjson.decode('[nan]') return v[1] ~= v[1]",
     "OK true"},
    {"return cjson.decode('infinite')",
     "ERR s\"Expected the end but found invalid token at character 4\""},
    {"return cjson.decode('1e')",
     "ERR s\"Expected the end but found invalid token at character 2\""},
    {"return cjson.decode('1.5e+')",
     "ERR s\"Expected the end but found invalid token at character 4\""},
    {"return cjson.decode('0x')",
     "ERR s\"Expected the end but found invalid token at character 2\""},
    {"return cjson.decode('0x1p4')",
     "OK n:16"},
    {"return cjson.decode('1e400'), cjson.decode('-1e400'), cjson.decode('1e-400')",
     "OK n:inf n:-inf n:0"},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('1')",
     "OK n:1"},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('+1')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('0x10')",
     "ERR s\"Expected value but found invalid number at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('010')",
     "ERR s\"Expected value but found invalid number at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('inf')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('-inf')",
     "ERR s\"Expected value but found invalid number at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('nan')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"cjson.decode_invalid_numbers(false) return cjson.decode('[1, 0.5, -0, 0]')",
     "OK {[n:1]=n:1,[n:2]=n:0.5,[n:3]=n:-0,[n:4]=n:0}"},
    {"return cjson.decode_invalid_numbers('off'), cjson.decode_invalid_numbers('on'), cjson"
     ".decode_invalid_numbers()",
     "OK false true true"},
    {"return cjson.decode('1\\0garbage')",
     "ERR s\"JSON parser does not support UTF-16 or UTF-32\""},
    {"return cjson.decode('\\0\\0')",
     "ERR s\"JSON parser does not support UTF-16 or UTF-32\""},
    {"return cjson.decode('a\\0')",
     "ERR s\"JSON parser does not support UTF-16 or UTF-32\""},
    {"return cjson.decode('\\0')",
     "ERR s\"Expected value but found T_END at character 1\""},
    {"return cjson.decode('\"\\0\"')",
     "ERR s\"JSON parser does not support UTF-16 or UTF-32\""},
    {"return cjson.decode()",
     "ERR s\"bad argument #1 to 'decode' (expected 1 argument)\""},
    {"return cjson.decode('1', '2')",
     "ERR s\"bad argument #1 to 'decode' (expected 1 argument)\""},
    {"return cjson.decode({})",
     "ERR s\"bad argument #1 to 'decode' (string expected, got table)\""},
    {"return cjson.decode(12)",
     "OK n:12"},
    {"return cjson.decode(nil)",
     "ERR s\"bad argument #1 to 'decode' (string expected, got nil)\""},
    {"return cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)) ~= nil",
     "OK true"},
    {"return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
     "ERR s\"Found too many nested data structures (1001) at character 1001\""},
    {"return cjson.decode(string.rep('{\"a\":', 1001) .. '1' .. string.rep('}', 1001))",
     "ERR s\"Found too many nested data structures (1001) at character 5001\""},
    {"return cjson.decode('  ' .. string.rep('[', 1001))",
     "ERR s\"Found too many nested data structures (1001) at character 1003\""},
    {"cjson.decode_max_depth(2) return cjson.decode('[[1]]')",
     "OK {[n:1]={[n:1]=n:1}}"},
    {"cjson.decode_max_depth(2) return cjson.decode('[[[1]]]')",
     "ERR s\"Found too many nested data structures (3) at character 3\""},
    {"cjson.decode_max_depth(2) return cjson.decode('[{\"a\":{}}]')",
     "ERR s\"Found too many nested data structures (3) at character 7\""},
    {"return cjson.decode_max_depth(0)",
     "ERR s\"bad argument #1 to 'decode_max_depth' (expected integer between 1 and 21474836"
     "47)\""},
    {"return cjson.decode('{\"a\":1,\"a\":2}'), cjson.decode('{\"1\":1}'), cjson.decode('[n"
     "ull,null]'), cjson.decode('[1,null]')",
     "OK {[s\"a\"]=n:2} {[s\"1\"]=n:1} {[n:1]=NULL,[n:2]=NULL} {[n:1]=n:1,[n:2]=NULL}"},
    {"return cjson.decode('\\t\\r\\n [\\n1\\r,\\t2]')",
     "OK {[n:1]=n:1,[n:2]=n:2}"},
    {"return cjson.decode('[1,2\\f]')",
     "ERR s\"Expected comma or array end but found invalid token at character 5\""},
    {"return cjson.decode('[1,2,3'), 1",
     "ERR s\"Expected comma or array end but found T_END at character 7\""},
    {"return cjson.decode('{\"a\":1'), 1",
     "ERR s\"Expected comma or object end but found T_END at character 7\""},
    {"return cjson.decode('{\"a\"'), 1",
     "ERR s\"Expected colon but found T_END at character 5\""},
    {"return cjson.decode('{'), 1",
     "ERR s\"Expected object key string but found T_END at character 2\""},
    {"return cjson.decode('['), 1",
     "ERR s\"Expected value but found T_END at character 2\""},
    {"return cjson.decode(']'), 1",
     "ERR s\"Expected value but found T_ARR_END at character 1\""},
    {"return cjson.decode('}'), 1",
     "ERR s\"Expected value but found T_OBJ_END at character 1\""},
    {"return cjson.decode(':'), 1",
     "ERR s\"Expected value but found T_COLON at character 1\""},
    {"return cjson.decode(','), 1",
     "ERR s\"Expected value but found T_COMMA at character 1\""},
    {"return cjson.decode('[:]'), 1",
     "ERR s\"Expected value but found T_COLON at character 2\""},
    {"return cjson.decode('{\"a\":}'), 1",
     "ERR s\"Expected value but found T_OBJ_END at character 6\""},
    {"return cjson.decode('{\"a\"::1}'), 1",
     "ERR s\"Expected value but found T_COLON at character 6\""},
    {"return cjson.decode('{,}'), 1",
     "ERR s\"Expected object key string but found T_COMMA at character 2\""},
    {"return cjson.decode('[,]'), 1",
     "ERR s\"Expected value but found T_COMMA at character 2\""},
    {"return cjson.decode('\"\\\\'), 1",
     "ERR s\"Expected value but found invalid escape code at character 2\""},
    {"return cjson.decode('\"\\\\u'), 1",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.decode('[1,2]]'), 1",
     "ERR s\"Expected the end but found T_ARR_END at character 6\""},
    {"return cjson.decode('{\"a\":[1,{\"b\":2]}'), 1",
     "ERR s\"Expected comma or object end but found T_ARR_END at character 15\""},
    {"return cjson.decode('\\239\\187\\191[1]'), 1",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('  \"abc\" xyz'), 1",
     "ERR s\"Expected the end but found invalid token at character 9\""},
    {"return cjson.decode('\"abc\"x'), 1",
     "ERR s\"Expected the end but found invalid token at character 6\""},
    {"return cjson.decode('-Infinity'), cjson.decode('-nan') ~= 0",
     "OK n:-inf true"},
    {"return cjson.decode('Nan') ~= 0",
     "OK true"},
    {"return cjson.decode('nil')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('falsey')",
     "ERR s\"Expected the end but found invalid token at character 6\""},
    {"return cjson.decode('fals')",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode('Infinityx')",
     "ERR s\"Expected the end but found invalid token at character 9\""},
    {"return cjson.decode('1.0'), cjson.decode('0'), cjson.decode('-0.0'), cjson.decode('00"
     "'), cjson.decode('00.5'), cjson.decode('1e+2.5')",
     "ERR s\"Expected the end but found invalid token at character 5\""},
};

static const struct lua_case cases_corpus[] = {
    {"return bit.rshift(-8, \"12\")",
     "OK n:1048575"},
    {"return struct.size(\"\\51\\73\\66\\102\")",
     "OK n:9"},
    {"return struct.unpack(\"\\51\\48\\51\\50\\57\", \"\\170\\214\\129\\56\\161\\34\\150\\1"
     "42\\253\\47\\2\\74\\106\\130\\122\\79\\108\\63\\163\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '3')\""},
    {"return bit.lshift(33, -2.5, 31)",
     "OK n:1073741824"},
    {"local p = cmsgpack.pack({[-1]={{{},{[3]=cjson.null}},cjson.null,{[2]=-0.0,[20]={},[-1"
     "]={a=-1,b=string.rep(\"z\", 40),[1]=-0.0,[1.5]=\"s\"}},\"\"},[5]=-0.0}) return p, cms"
     "gpack.unpack(p)",
     "OK s\"\\x82\\xff\\x94\\x92\\x90\\x81\\x03\\xc0\\xc0\\x83\\x02\\x00\\x14\\x90\\xff\\x8"
     "4\\xa1a\\xff\\x01\\x00\\xca\?\\xc0\\x00\\x00\\xa1s\\xa1b\\xd9(zzzzzzzzzzzzzzzzzzzzzzz"
     "zzzzzzzzzzzzzzzzz\\xa0\\x05\\x00\" {[n:-1]={[n:1]={[n:1]={},[n:2]={}},[n:3]={[n:-1]={"
     "[n:1.5]=s\"s\",[n:1]=n:0,[s\"a\"]=n:-1,[s\"b\"]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
     "zzzzzz\"},[n:20]={},[n:2]=n:0},[n:4]=s\"\"},[n:5]=n:0}"},
    {"return cjson.decode(\"\\224\\93\")",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"local p = cmsgpack.pack(3.25) return p, cmsgpack.unpack(p)",
     "OK s\"\\xca@P\\x00\\x00\" n:3.25"},
    {"return struct.pack(\"\\57\\120\\104\\52\\84\\33\", 65537, 1, 255, 65537, \"abcdefgh\""
     ")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '9')\""},
    {"return bit.arshift(-2^31, 2^31, -33)",
     "OK n:-2147483648"},
    {"return cjson.decode(\"\\123\\125\")",
     "OK {}"},
    {"return cmsgpack.unpack(\"\\167\\203\\187\\209\\217\\72\\255\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack_limit(\"\\203\\195\\98\\205\", 0, 2)",
     "OK n:2"},
    {"return struct.unpack(\"\\33\\48\\115\\49\\100\", \"\\9\\154\\110\\216\\47\\241\\4\\24"
     "0\\220\\104\\52\")",
     "ERR s\"alignment 0 is not a power of 2\""},
    {"local p = cmsgpack.pack({{false,{{-2^40,65536},{},{}}},{0.1,-0.0}}) return p, cmsgpac"
     "k.unpack(p)",
     "OK s\"\\x92\\x92\\xc2\\x93\\x92\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\xce\\x0"
     "0\\x01\\x00\\x00\\x90\\x90\\x92\\xcb\?\\xb9\\x99\\x99\\x99\\x99\\x99\\x9a\\x00\" {[n:"
     "1]={[n:1]=false,[n:2]={[n:1]={[n:1]=n:-1099511627776,[n:2]=n:65536},[n:2]={},[n:3]={}"
     "}},[n:2]={[n:1]=n:0.10000000000000001,[n:2]=n:0}}"},
    {"return struct.unpack(\"\\73\\98\\56\", \"\\145\\216\\53\\71\\88\\108\\47\\119\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '8')\""},
    {"return struct.size(\"\\66\\32\\102\\99\\84\\57\\52\")",
     "OK n:14"},
    {"local p = cmsgpack.pack(1e300) return p, cmsgpack.unpack(p)",
     "OK s\"\\xcb~7\\xe4<\\x88\\x00u\\x9c\" n:1.0000000000000001e+300"},
    {"return cmsgpack.unpack_limit(\"\\89\\127\\107\\218\\202\\246\\88\\228\\231\\222\\44\""
     ", 1, 0)",
     "OK n:1 n:89"},
    {"return cjson.encode({{[2]={[5]={-2^40,false},[-1]=\"a/b\\n\"}},0.5,\"a/b\\n\"})",
     "OK s\"[[null,{\"5\":[-1099511627776,false],\"-1\":\"a\\/b\\n\"}],0.5,\"a\\/b\\n\"]\""},
    {"return struct.unpack(\"\\73\\66\\62\\100\\33\\60\", \"\\59\\214\\92\\70\\177\\22\\145"
     "\\130\\153\\247\\230\\161\\114\\180\\234\\67\")",
     "OK n:1180489275 n:177 n:5.7189071910095049e-200 n:14"},
    {"return cjson.decode(\"\\150\\2\\107\\110\\48\\34\\58\\91\\93\\125\")",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cmsgpack.unpack_limit(\"\\159\\10\", 1, 3)",
     "ERR s\"Start offset 3 greater than input length 2.\""},
    {"return struct.pack(\"\\99\\33\", -2^33)",
     "OK s\"-\""},
    {"return struct.unpack(\"\\52\\48\\120\\100\\115\\32\", \"\\86\\78\\167\\46\\119\\201\\"
     "7\\218\\116\\190\\242\\77\\154\\250\\194\\107\\165\\74\\191\\188\\11\\129\\154\\236\\"
     "58\\19\\217\\101\\239\\150\\250\\138\\203\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '4')\""},
    {"return cmsgpack.unpack_limit(\"\\218\", 0, 1)",
     "OK n:-1"},
    {"return struct.size(\"\\84\\84\\50\\50\")",
     "OK n:16"},
    {"return cmsgpack.unpack_limit(\"\\211\\130\\218\\140\", 2, 3)",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.decode(\"\")",
     "ERR s\"Expected value but found T_END at character 1\""},
    {"return cmsgpack.unpack(\"\\54\")",
     "OK n:54"},
    {"return bit.lshift(31)",
     "ERR s\"bad argument #2 to 'lshift' (number expected, got no value)\""},
    {"return bit.ror(0x7fffffff, 1e20)",
     "OK n:2147483647"},
    {"return struct.unpack(\"\\48\", \"\\166\\143\\197\\9\\28\\20\\199\\14\\33\\81\\140\\12"
     "0\\112\\11\\161\\239\\194\\127\\140\\223\\172\\106\\37\\135\\150\\204\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '0')\""},
    {"return cmsgpack.unpack(\"\\177\\233\\195\\222\\203\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack_limit(\"\", 2, 2)",
     "ERR s\"Start offset 2 greater than input length 0.\""},
    {"return cjson.decode(\"\\127\\91\")",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"return cjson.decode(\"\\123\\34\\107\\48\\34\\58\\91\\93\\44\\34\\107\\49\\34\\58\\91"
     "\\123\\34\\107\\48\\34\\114\\91\\34\\120\\92\\47\\121\\34\\44\\48\\120\\49\\102\\44\\"
     "110\\117\\108\\108\\93\\44\\34\\107\\49\\34\\58\\123\\34\\107\\48\\34\\58\\173\\93\\1"
     "25\\44\\107\\50\\34\\58\\91\\93\\125\\93\\44\\34\\107\\50\\34\\58\\123\\34\\107\\48\\"
     "34\\58\\49\\101\\44\\34\\107\\49\\34\\58\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\"
     "34\\58\\116\\114\\117\\101\\44\\34\\107\\49\\34\\58\\34\\120\\92\\47\\121\\34\\125\\1"
     "25\\44\\34\\107\\50\\34\\58\\123\\125\\125\\125\")",
     "ERR s\"Expected colon but found invalid token at character 21\""},
    {"return cmsgpack.unpack_limit(\"\\225\\34\\24\", 1, 2)",
     "OK n:-1 n:24"},
    {"return cmsgpack.unpack(\"\\161\\64\\205\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack_limit(\"\\120\", 1, 1)",
     "OK n:-1"},
    {"return cmsgpack.unpack_limit(\"\\63\\171\\146\\146\\208\", 1, 3)",
     "ERR s\"Missing bytes in input.\""},
    {"return struct.size(\"\\100\\98\")",
     "OK n:9"},
    {"return struct.pack(\"\\32\\72\\33\\98\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"return cmsgpack.unpack(\"\\130\\50\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.encode(65536)",
     "OK s\"65536\""},
    {"return bit.bor(2^32+7, 1, 2^32+7)",
     "OK n:7"},
    {"return cmsgpack.unpack(\"\\251\\52\\209\\206\\207\\162\\195\\200\\20\\162\\166\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack(\"\\218\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack(\"\\202\\162\\161\\211\")",
     "ERR s\"Missing bytes in input.\""},
    {"return struct.pack(\"\\57\")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '9')\""},
    {"return struct.size(\"\\120\\49\\108\\62\\49\")",
     "OK n:9"},
    {"return cjson.decode(\"\\91\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\91\\1"
     "10\\117\\108\\108\\93\\44\\34\\107\\48\\34\\58\\58\\123\\34\\107\\48\\34\\58\\34\\97\\"
     "92\\117\\48\\48\\101\\57\\34\\125\\125\\44\\34\\53\\49\\34\\58\\123\\125\\125\\93\")",
     "ERR s\"Expected value but found T_COLON at character 26\""},
    {"return struct.pack(\"\\120\\102\\62\\56\\49\\108\\48\", 65537)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"return struct.unpack(\"\\104\\60\\99\\104\\32\\115\\105\\62\", \"\\242\\106\\42\\57\\"
     "70\\210\\94\\221\\166\\219\\90\")",
     "ERR s\"unfinished string in data\""},
    {"return cmsgpack.unpack(\"\\207\\239\")",
     "ERR s\"Missing bytes in input.\""},
    {"return struct.pack(\"\\62\\66\\98\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"return cjson.decode(\"\\123\\28\")",
     "ERR s\"Expected object key string but found invalid token at character 2\""},
    {"return struct.pack(\"\\73\\102\\76\\84\\98\\56\", 255, 2^40, 255)",
     "ERR s\"bad argument #5 to 'pack' (number expected, got nil)\""},
    {"return struct.unpack(\"\\104\\52\\50\\66\\73\\60\", \"\\189\\34\\23\\65\\238\\185\\15"
     "1\\90\\206\\98\\156\\120\\113\\240\\221\\74\\34\\201\\230\\195\\41\\57\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '4')\""},
    {"return cjson.encode({{{{b=0.5,[1]=-1,[1.5]=-0.0,[2]=0.5},{},{false,3.25},-129}}})",
     "OK s\"[[[{\"1\":-1,\"2\":0.5,\"1.5\":-0,\"b\":0.5},{},[false,3.25],-129]]]\""},
    {"return cjson.encode({})",
     "OK s\"{}\""},
    {"return cjson.decode(\"\\116\\114\\117\\101\")",
     "OK true"},
    {"local p = cmsgpack.pack(-0.0) return p, cmsgpack.unpack(p)",
     "OK s\"\\x00\" n:0"},
    {"return struct.unpack(\"\\56\\52\\76\\84\\62\\50\", \"\\178\\64\\21\\190\\77\\231\\116"
     "\\168\\123\\188\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '8')\""},
    {"return cjson.decode(\"\\91\\123\\34\\107\\48\\34\\58\\34\\120\\92\\47\\121\\34\\44\\3"
     "4\\107\\49\\34\\58\\123\\125\\125\\44\\91\\93\\93\")",
     "OK {[n:1]={[s\"k0\"]=s\"x/y\",[s\"k1\"]={}},[n:2]={}}"},
    {"return struct.pack(\"\\50\\48\\73\\108\\62\\51\\51\", 1.5, \"abc\")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '2')\""},
    {"return struct.pack(\"\\76\\105\\73\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"return struct.size(\"\\56\\73\\120\\66\")",
     "OK n:6"},
    {"local p = cmsgpack.pack({[5]={\"\",{{},{0.5,\"a/b\\n\",true}}},[1.5]={[1.5]={[\"1\"]="
     "{[3]=1e300,[\"1\"]=-2^40},a=2^31,[1.5]=1,[1]=-0.0},[-1]={a={[5]=\"s\",a=true},[2]=0.5"
     ",[1]={}},[5]={[20]={\"a/b\\n\"},a=false,[-1]=-2^40}},[2]={},[-1]={{[1]=string.rep(\"z"
     "\", 40),[-1]={[\"1\"]=cjson.null},[20]={[20]=-2^40},[2]={b=0.1,[1.5]=\"\",[-1]=3.25}}"
     ",false,1e300,{[\"1\"]={65536,string.rep(\"z\", 40),\"s\",\"\"},b={true},[-1]=-1,[3]=3"
     ".25}}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x84\\x05\\x92\\xa0\\x92\\x90\\x93\\xca\?\\x00\\x00\\x00\\xa4a/b\\x0a\\xc3\\x0"
     "2\\x90\\xca\?\\xc0\\x00\\x00\\x83\\x05\\x83\\xa1a\\xc2\\x14\\x91\\xa4a/b\\x0a\\xff\\x"
     "d3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\xca\?\\xc0\\x00\\x00\\x84\\xa11\\x82\\x03"
     "\\xcb~7\\xe4<\\x88\\x00u\\x9c\\xa11\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\x01"
     "\\x00\\xca\?\\xc0\\x00\\x00\\x01\\xa1a\\xce\\x80\\x00\\x00\\x00\\xff\\x83\\xa1a\\x82\\"
     "x05\\xa1s\\xa1a\\xc3\\x02\\xca\?\\x00\\x00\\x00\\x01\\x90\\xff\\x94\\x84\\x01\\xd9(zz"
     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\\x02\\x83\\xff\\xca@P\\x00\\x00\\xca\?\\xc0\\x"
     "00\\x00\\xa0\\xa1b\\xcb\?\\xb9\\x99\\x99\\x99\\x99\\x99\\x9a\\xff\\x81\\xa11\\xc0\\x1"
     "4\\x81\\x14\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\xc2\\xcb~7\\xe4<\\x88\\x00u"
     "\\x9c\\x84\\xa11\\x94\\xce\\x00\\x01\\x00\\x00\\xd9(zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
     "zzzzzzz\\xa1s\\xa0\\x03\\xca@P\\x00\\x00\\xff\\xff\\xa1b\\x91\\xc3\" {[n:-1]={[n:1]={"
     "[n:-1]={},[n:1]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\",[n:20]={[n:20]=n:-10995"
     "11627776},[n:2]={[n:-1]=n:3.25,[n:1.5]=s\"\",[s\"b\"]=n:0.10000000000000001}},[n:2]=f"
     "alse,[n:3]=n:1.0000000000000001e+300,[n:4]={[n:-1]=n:-1,[n:3]=n:3.25,[s\"1\"]={[n:1]="
     "n:65536,[n:2]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\",[n:3]=s\"s\",[n:4]=s\"\"}"
     ",[s\"b\"]={[n:1]=true}}},[n:1.5]={[n:-1]={[n:1]={},[n:2]=n:0.5,[s\"a\"]={[n:5]=s\"s\""
     ",[s\"a\"]=true}},[n:1.5]={[n:1.5]=n:1,[n:1]=n:0,[s\"1\"]={[n:3]=n:1.0000000000000001e"
     "+300,[s\"1\"]=n:-1099511627776},[s\"a\"]=n:2147483648},[n:5]={[n:-1]=n:-1099511627776"
     ",[n:20]={[n:1]=s\"a/b\\x0a\"},[s\"a\"]=false}},[n:2]={},[n:5]={[n:1]=s\"\",[n:2]={[n:"
     "1]={},[n:2]={[n:1]=n:0.5,[n:2]=s\"a/b\\x0a\",[n:3]=true}}}}"},
    {"return struct.pack(\"\\84\\32\\108\\73\\102\\84\\100\\108\", -2^33)",
     "ERR s\"bad argument #3 to 'pack' (number expected, got nil)\""},
    {"return cmsgpack.unpack(\"\\208\\52\\203\\72\\209\\192\\1\\248\\217\\118\")",
     "ERR s\"Missing bytes in input.\""},
    {"local p = cmsgpack.pack({-2^40}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x91\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\" {[n:1]=n:-1099511627776}"},
    {"local p = cmsgpack.pack(65536) return p, cmsgpack.unpack(p)",
     "OK s\"\\xce\\x00\\x01\\x00\\x00\" n:65536"},
    {"return cmsgpack.unpack_limit(\"\", 1, 2)",
     "ERR s\"Start offset 2 greater than input length 0.\""},
    {"return cjson.decode(\"\\123\\34\\107\\48\\34\\58\\49\\101\\44\\34\\107\\49\\34\\58\\1"
     "23\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\91\\34\\97\\98\\99\\44\\34\\97\\92"
     "\\117\\48\\48\\101\\57\\34\\93\\125\\34\\107\\49\\34\\58\\48\\175\\44\\102\\44\\34\\1"
     "07\\50\\34\\58\\123\\34\\107\\48\\34\\58\\34\\97\\98\\99\\125\\125\\44\\34\\107\\50\\"
     "34\\58\\91\\123\\125\\93\\125\")",
     "ERR s\"Expected comma or object end but found invalid token at character 8\""},
    {"return struct.size(\"\\49\\73\\62\")",
     "OK n:4"},
    {"return cjson.decode(\"\\91\\91\\93\\93\")",
     "OK {[n:1]={}}"},
    {"return struct.pack(\"\\76\\100\\105\\66\", 1, 255, \"\", \"\", 255)",
     "ERR s\"bad argument #4 to 'pack' (number expected, got string)\""},
    {"return struct.size(\"\\48\\32\\98\\33\\98\\73\\98\")",
     "OK n:9"},
    {"return cjson.decode(\"\\43\\50\")",
     "OK n:2"},
    {"return cjson.encode(\"\")",
     "OK s\"\"\"\""},
    {"return struct.size(\"\\104\\120\")",
     "OK n:3"},
    {"return struct.size(\"\\57\\100\\76\\48\")",
     "OK n:16"},
    {"return struct.size(\"\\51\\115\\108\\62\\50\\51\")",
     "ERR s\"bad argument #1 to 'size' (option 's' has no fixed size)\""},
    {"local p = cmsgpack.pack({}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x90\" {}"},
    {"return cjson.decode(\"\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\116\\114\\"
     "117\\101\\44\\34\\107\\49\\34\\58\\48\\49\\44\\34\\107\\50\\34\\58\\91\\123\\125\\93\\"
     "125\\44\\34\\107\\49\\34\\58\\123\\34\\107\\48\\34\\58\\45\\48\\125\\44\\34\\107\\50\\"
     "34\\58\\34\\92\\113\\34\\125\")",
     "ERR s\"Expected value but found invalid escape code at character 58\""},
    {"return struct.pack(\"\\66\\51\\72\", -2^33)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '3')\""},
    {"return cjson.decode(\"\\91\\123\\125\\204\\125\\93\")",
     "ERR s\"Expected comma or array end but found invalid token at character 4\""},
    {"return cmsgpack.unpack_limit(\"\\207\\144\\208\\162\\92\\207\\129\\144\\206\\253\\182"
     "\", 0, 3)",
     "OK n:3"},
    {"return bit.rshift(1e20, \"12\", -1)",
     "OK n:494424"},
    {"return cmsgpack.unpack(\"\\138\\151\\195\\129\\129\\222\\220\\89\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cmsgpack.unpack_limit(\"\\204\\229\\187\\7\\206\", 0, 1)",
     "OK n:1"},
    {"return struct.size(\"\\100\")",
     "OK n:8"},
    {"return struct.pack(\"\\56\\73\\51\\33\\76\")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"return struct.pack(\"\\115\\98\")",
     "ERR s\"bad argument #2 to 'pack' (string expected, got nil)\""},
    {"local p = cmsgpack.pack({[1.5]={},[1]={{2^31,0.5},{},true},[5]=-2^40,[\"1\"]=string.r"
     "ep(\"z\", 40)}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x84\\x01\\x93\\x92\\xce\\x80\\x00\\x00\\x00\\xca\?\\x00\\x00\\x00\\x90\\xc3\\"
     "xa11\\xd9(zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\\xca\?\\xc0\\x00\\x00\\x90\\x05\\x"
     "d3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\" {[n:1.5]={},[n:1]={[n:1]={[n:1]=n:214748"
     "3648,[n:2]=n:0.5},[n:2]={},[n:3]=true},[n:5]=n:-1099511627776,[s\"1\"]=s\"zzzzzzzzzzz"
     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"}"},
    {"return struct.unpack(\"\\76\\105\\73\", \"\\186\\109\\11\\74\\89\\169\\152\\198\\108\\"
     "161\\246\\78\\253\\12\\144\\53\\3\\224\\130\\45\\12\\83\\84\\248\")",
     "OK n:1.4310374016929198e+19 n:1324786028 n:898632957 n:17"},
    {"local p = cmsgpack.pack({{}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x91\\x90\" {[n:1]={}}"},
    {"return struct.unpack(\"\\73\\76\\99\\52\\56\", \"\\126\\11\\139\\166\\127\\62\\207\\1"
     "68\\48\\52\\7\\69\\251\\93\\29\\185\")",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.size(\"\\84\\72\\99\\48\\84\\76\")",
     "ERR s\"bad argument #1 to 'size' (option 'c0' has no fixed size)\""},
    {"return cmsgpack.unpack(\"\\8\\209\\162\\206\")",
     "OK n:8 n:-23858"},
    {"local p = cmsgpack.pack(cjson.null) return p, cmsgpack.unpack(p)",
     "OK s\"\\xc0\" nil"},
    {"return struct.unpack(\"\\115\\98\\57\\32\\99\\66\", \"\\223\\213\\143\\29\\253\\42\\6"
     "2\\6\\108\\73\\81\\207\\77\\208\\115\")",
     "ERR s\"unfinished string in data\""},
    {"return struct.size(\"\\60\\84\")",
     "OK n:8"},
    {"return cjson.decode(\"\\49\\46\\53\\239\\51\")",
     "ERR s\"Expected the end but found invalid token at character 4\""},
    {"return struct.pack(\"\\49\\102\\102\\49\\100\", -2^33, \"abcdefgh\", 1/0, 1/0, \"\", "
     "0/0)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '1')\""},
    {"return cjson.decode(\"\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\43\\50\\4"
     "4\\34\\107\\49\\34\\58\\45\\73\\110\\102\\125\\125\")",
     "OK {[s\"k0\"]={[s\"k0\"]=n:2,[s\"k1\"]=n:-inf}}"},
    {"return cmsgpack.unpack_limit(\"\", 2, 0)",
     "OK n:-1"},
    {"return struct.pack(\"\\62\\52\\62\\48\\62\\52\\100\", -2^33, \"\")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '4')\""},
    {"return cjson.encode({[1.5]={{}}})",
     "OK s\"{\"1.5\":[{}]}\""},
    {"return bit.rol(1.5, -1)",
     "OK n:1"},
    {"return struct.pack(\"\\102\\57\\99\\84\\76\\50\\66\\33\", 1.5, 1.5)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '9')\""},
    {"return cmsgpack.unpack_limit(\"\\66\\5\\194\", 1, 0)",
     "OK n:1 n:66"},
    {"return struct.pack(\"\\33\\73\\100\\56\\104\\51\", 2^40, 65537)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"return struct.unpack(\"\\104\\32\\115\\60\\73\\56\\56\\102\", \"\\38\\187\\114\\255\\"
     "44\\193\\152\\28\\253\\246\\59\\168\\218\\162\\226\\159\\16\\24\\76\\164\\109\\64\\89"
     "\\1\\78\\114\")",
     "ERR s\"unfinished string in data\""},
    {"return cjson.encode(\"s\")",
     "OK s\"\"s\"\""},
    {"return cjson.decode(\"\\34\\50\\120\\92\\47\")",
     "ERR s\"Expected value but found unexpected end of string at character 6\""},
    {"return struct.unpack(\"\\84\\62\\32\", \"\\78\\164\\112\\118\\211\\31\\96\\168\\17\\1"
     "90\\0\\23\\59\\9\\165\\233\\255\\248\\29\\44\\148\\74\\158\\120\\248\\176\\223\\221\\"
     "164\\144\\233\\79\\13\\216\")",
     "OK n:1.2132732389221771e+19 n:9"},
    {"return struct.unpack(\"\\51\\100\\105\\51\\102\\62\", \"\\136\\46\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '3')\""},
    {"return struct.pack(\"\\56\\73\\120\\66\", -2^33, 1.5, 2^40, 255, 1.5)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"return cmsgpack.unpack(\"\\130\\204\\146\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.decode(\"\\91\\159\")",
     "ERR s\"Expected value but found invalid token at character 2\""},
    {"return bit.bnot(2^52+1, -8, 32)",
     "OK n:-1"},
    {"return cmsgpack.unpack_limit(\"\\172\", 1, 4)",
     "ERR s\"Start offset 4 greater than input length 1.\""},
    {"return struct.pack(\"\\60\\98\\57\\99\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"local p = cmsgpack.pack({[-1]=cjson.null,a={[3]={[\"1\"]={0.5,-129,-2^40},[3]=\"s\",["
     "5]={[1]=0.1}}}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x82\\xff\\xc0\\xa1a\\x81\\x03\\x83\\xa11\\x93\\xca\?\\x00\\x00\\x00\\xd1\\xff"
     "\\x7f\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\x05\\x91\\xcb\?\\xb9\\x99\\x99\\x"
     "99\\x99\\x99\\x9a\\x03\\xa1s\" {[s\"a\"]={[n:3]={[n:3]=s\"s\",[n:5]={[n:1]=n:0.100000"
     "00000000001},[s\"1\"]={[n:1]=n:0.5,[n:2]=n:-129,[n:3]=n:-1099511627776}}}}"},
    {"return cmsgpack.unpack_limit(\"\\237\\161\\246\\210\\239\\203\\133\\130\\218\", 3, 3)"
     "",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.decode(\"\\91\\68\\34\\107\\48\\34\\58\\34\\97\\98\\99\\44\\34\\107\\77\\"
     "34\\58\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\116\\114\\117\\101\\44\\3"
     "4\\107\\49\\34\\58\\49\\101\\125\\44\\34\\107\\49\\34\\58\\49\\44\\34\\107\\50\\34\\5"
     "8\\91\\110\\97\\110\\93\\125\\44\\34\\107\\50\\34\\58\\45\\48\\125\\44\\123\\34\\107\\"
     "48\\34\\58\\123\\34\\107\\48\\34\\58\\110\\97\\110\\44\\34\\107\\49\\34\\58\\116\\114"
     "\\117\\101\\125\\125\\93\")",
     "ERR s\"Expected value but found invalid token at character 2\""},
    {"return cjson.decode(\"\\91\")",
     "ERR s\"Expected value but found T_END at character 2\""},
    {"return cjson.encode(0.1)",
     "OK s\"0.1\""},
    {"local p = cmsgpack.pack({[2]={b={b=1e300,[\"1\"]={[20]=string.rep(\"z\", 40),[\"1\"]="
     "\"a/b\\n\",[2]=1},[-1]={[20]=-1,[\"1\"]=1,[2]=string.rep(\"z\", 40)}},a={0.1},[-1]={["
     "-1]=3.25,[1]={[1.5]=-1,[5]=3.25,[20]=-2^40,b=0.1},a={\"\"}},[\"1\"]=cjson.null},[20]="
     "{[1.5]={[5]=1,[2]={0.1}}}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x82\\x02\\x84\\xa1a\\x91\\xcb\?\\xb9\\x99\\x99\\x99\\x99\\x99\\x9a\\xa11\\xc0"
     "\\xff\\x83\\x01\\x84\\x05\\xca@P\\x00\\x00\\x14\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x"
     "00\\x00\\xca\?\\xc0\\x00\\x00\\xff\\xa1b\\xcb\?\\xb9\\x99\\x99\\x99\\x99\\x99\\x9a\\x"
     "ff\\xca@P\\x00\\x00\\xa1a\\x91\\xa0\\xa1b\\x83\\xa11\\x83\\xa11\\xa4a/b\\x0a\\x02\\x0"
     "1\\x14\\xd9(zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\\xff\\x83\\xa11\\x01\\x02\\xd9(z"
     "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\\x14\\xff\\xa1b\\xcb~7\\xe4<\\x88\\x00u\\x9c\\"
     "x14\\x81\\xca\?\\xc0\\x00\\x00\\x82\\x05\\x01\\x02\\x91\\xcb\?\\xb9\\x99\\x99\\x99\\x"
     "99\\x99\\x9a\" {[n:20]={[n:1.5]={[n:2]={[n:1]=n:0.10000000000000001},[n:5]=n:1}},[n:2"
     "]={[n:-1]={[n:-1]=n:3.25,[n:1]={[n:1.5]=n:-1,[n:20]=n:-1099511627776,[n:5]=n:3.25,[s\""
     "b\"]=n:0.10000000000000001},[s\"a\"]={[n:1]=s\"\"}},[s\"a\"]={[n:1]=n:0.1000000000000"
     "0001},[s\"b\"]={[n:-1]={[n:20]=n:-1,[n:2]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
     "\",[s\"1\"]=n:1},[s\"1\"]={[n:20]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\",[n:2]"
     "=n:1,[s\"1\"]=s\"a/b\\x0a\"},[s\"b\"]=n:1.0000000000000001e+300}}}"},
    {"return struct.pack(\"\\120\\32\\105\\51\\32\\98\\105\", 0/0, -1, -1, -2^33, 0/0, -1)",
     "OK s\"\\x00\\x00\\x00\\x00\\xff\\xff\\xff\\xff\\xff\""},
    {"return cjson.decode(\"\\123\\54\\5\")",
     "ERR s\"Expected object key string but found T_NUMBER at character 2\""},
    {"return cmsgpack.unpack(\"\\202\\130\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.encode(0.5)",
     "OK s\"0.5\""},
    {"return struct.unpack(\"\\115\\98\", \"\\169\\211\\200\\37\\106\\165\\65\\45\\48\\28\\"
     "13\\113\\18\\127\\213\\212\\113\\119\\132\\191\\252\\108\\200\\17\\156\\72\\78\\193\\"
     "246\\54\\103\\140\\213\\182\\216\\228\\204\\34\\0\")",
     "ERR s\"bad argument #2 to 'unpack' (data string too short)\""},
    {"return struct.unpack(\"\\52\\99\", \"\\155\\195\\232\\88\\115\\63\\215\\207\\75\\14\\"
     "246\\217\\217\\103\\154\\244\\31\\156\\131\\102\\178\\115\\155\\62\\58\\86\\47\\0\\89"
     "\\124\\7\\168\\87\\230\\28\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '4')\""},
    {"return struct.pack(\"\\108\\60\\105\\62\", \"abcdefgh\", 0/0, 1, 2^40, \"abcdefgh\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got string)\""},
    {"return bit.tobit(2^32+7, -8, \"12\")",
     "OK n:7"},
    {"return struct.size(\"\\76\")",
     "OK n:8"},
    {"return cjson.decode(\"\\123\")",
     "ERR s\"Expected object key string but found T_END at character 2\""},
    {"return bit.tohex(31)",
     "OK s\"0000001f\""},
    {"return cjson.decode(\"\\30\")",
     "ERR s\"Expected value but found invalid token at character 1\""},
    {"local p = cmsgpack.pack({[\"1\"]={[20]={}},[1]=-0.0,[1.5]={[5]={},[1.5]={-129,{},-0.0"
     ",cjson.null}}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x83\\xa11\\x81\\x14\\x90\\xca\?\\xc0\\x00\\x00\\x82\\x05\\x90\\xca\?\\xc0\\x0"
     "0\\x00\\x94\\xd1\\xff\\x7f\\x90\\x00\\xc0\\x01\\x00\" {[n:1.5]={[n:1.5]={[n:1]=n:-129"
     ",[n:2]={},[n:3]=n:0},[n:5]={}},[n:1]=n:0,[s\"1\"]={[n:20]={}}}"},
    {"return struct.pack(\"\\66\\49\\105\", 2^40, 65537, 255)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '1')\""},
    {"return cmsgpack.unpack(\"\\226\\52\\245\\202\\30\\152\\146\\205\\119\\194\")",
     "OK n:-30 n:52 n:-11 n:1.6154341377910525e-20 n:119 false"},
    {"return cmsgpack.unpack(\"\\11\\209\")",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.encode({[2]={}})",
     "OK s\"[null,{}]\""},
    {"return cmsgpack.unpack_limit(\"\", 2, 0)",
     "OK n:-1"},
    {"return bit.band(-33)",
     "OK n:-33"},
    {"return struct.pack(\"\\62\\62\\62\\50\\51\\73\\56\\84\", 255, -1, 255, 1/0, 1/0, 0/0)"
     "",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '2')\""},
    {"return cmsgpack.unpack(\"\\118\")",
     "OK n:118"},
    {"return cmsgpack.unpack_limit(\"\\1\\38\\43\\174\\255\\90\\123\\7\", 0, 3)",
     "OK n:3"},
    {"return struct.pack(\"\\66\\33\\51\", 255)",
     "ERR s\"alignment 3 is not a power of 2\""},
    {"return struct.pack(\"\\60\\62\\51\\84\")",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '3')\""},
    {"return cmsgpack.unpack_limit(\"\\215\\58\\91\", 0, 0)",
     "ERR s\"Bad data format in input.\""},
    {"return cjson.decode(\"\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\91\\123\\"
     "34\\107\\48\\34\\58\\116\\114\\117\\101\\44\\34\\107\\49\\34\\58\\48\\49\\125\\44\\91"
     "\\34\\92\\117\\100\\56\\48\\48\\92\\117\\100\\99\\48\\48\\34\\44\\123\\125\\93\\44\\4"
     "9\\93\\44\\34\\107\\49\\34\\58\\123\\34\\107\\48\\34\\58\\91\\48\\120\\49\\102\\44\\1"
     "16\\114\\117\\101\\44\\34\\120\\92\\47\\121\\34\\93\\125\\125\\44\\34\\107\\49\\34\\5"
     "8\\91\\123\\34\\107\\48\\34\\58\\123\\34\\107\\48\\34\\58\\91\\93\\125\\44\\34\\107\\"
     "49\\34\\58\\91\\48\\49\\44\\110\\117\\108\\108\\93\\44\\34\\107\\50\\34\\58\\123\\34\\"
     "107\\48\\34\\58\\34\\97\\98\\99\\44\\34\\107\\49\\34\\58\\49\\46\\53\\101\\51\\125\\1"
     "25\\44\\91\\93\\93\\44\\34\\107\\50\\58\\34\\92\\117\\100\\56\\48\\48\\92\\117\\100\\"
     "99\\48\\48\\34\\125\")",
     "ERR s\"Expected comma or object end but found invalid token at character 143\""},
    {"return struct.pack(\"\\66\\105\\56\\84\\52\", 255, 65537, 0/0, 1.5, 65537)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '4')\""},
    {"return struct.unpack(\"\\50\\120\\115\", \"\\81\\101\\242\\23\\64\\9\\234\\226\\162\\"
     "180\\46\\203\\2\\41\\233\\116\\93\\98\\146\\251\\52\\41\\158\\174\\235\\6\\219\\137\\"
     "193\\157\\149\\106\\252\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '2')\""},
    {"return cmsgpack.unpack(\"\\146\\234\\247\\232\\2\\217\\35\\210\\38\\206\")",
     "ERR s\"Missing bytes in input.\""},
    {"return struct.size(\"\\56\\66\\99\")",
     "OK n:2"},
    {"return bit.ror(-8, 2^31, -8)",
     "OK n:-8"},
    {"return cmsgpack.unpack_limit(\"\\68\\222\\211\\195\\215\\93\\211\\182\\207\\202\", 1,"
     " 4)",
     "ERR s\"Bad data format in input.\""},
    {"return cjson.encode(1e300)",
     "OK s\"1e+300\""},
    {"return struct.pack(\"\\56\\66\\99\", \"\", 2^40)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"local p = cmsgpack.pack({{},cjson.null}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x92\\x90\\xc0\" {[n:1]={}}"},
    {"return struct.size(\"\\57\\105\\66\\76\")",
     "OK n:13"},
    {"return cjson.encode({{{false,{-129,\"\"},1,{[\"1\"]=true}},string.rep(\"z\", 40),{0.5"
     ",{},{[1]=\"\",[\"1\"]=1e300,a=-0.0}},-1},\"s\"})",
     "OK s\"[[[false,[-129,\"\"],1,{\"1\":true}],\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
     "\",[0.5,{},{\"1\":\"\",\"a\":-0,\"1\":1e+300}],-1],\"s\"]\""},
    {"return struct.pack(\"\\66\\100\\52\\98\\105\", -2^33, 2^40)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '4')\""},
    {"return struct.unpack(\"\\115\", \"\\193\\216\\225\\224\\247\\168\\99\\235\\24\\82\\11"
     "2\\220\\46\\202\\187\\151\\39\\34\\111\\85\\119\")",
     "ERR s\"unfinished string in data\""},
    {"local p = cmsgpack.pack({[\"1\"]={[20]={{a=\"s\",[20]=-0.0,[1.5]=3.25,[5]=1e300},{}},"
     "[1.5]=-1,b=0.5,[3]={{-2^40,\"s\",-129}}},a={2^31},[1]=\"a/b\\n\"}) return p, cmsgpack"
     ".unpack(p)",
     "OK s\"\\x83\\xa11\\x84\\x03\\x91\\x93\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\x00\\x"
     "a1s\\xd1\\xff\\x7f\\xca\?\\xc0\\x00\\x00\\xff\\x14\\x92\\x84\\xa1a\\xa1s\\x05\\xcb~7\\"
     "xe4<\\x88\\x00u\\x9c\\x14\\x00\\xca\?\\xc0\\x00\\x00\\xca@P\\x00\\x00\\x90\\xa1b\\xca"
     "\?\\x00\\x00\\x00\\x01\\xa4a/b\\x0a\\xa1a\\x91\\xce\\x80\\x00\\x00\\x00\" {[n:1]=s\"a"
     "/b\\x0a\",[s\"1\"]={[n:1.5]=n:-1,[n:20]={[n:1]={[n:1.5]=n:3.25,[n:20]=n:0,[n:5]=n:1.0"
     "000000000000001e+300,[s\"a\"]=s\"s\"},[n:2]={}},[n:3]={[n:1]={[n:1]=n:-1099511627776,"
     "[n:2]=s\"s\",[n:3]=n:-129}},[s\"b\"]=n:0.5},[s\"a\"]={[n:1]=n:2147483648}}"},
    {"return struct.pack(\"\\102\")",
     "ERR s\"bad argument #2 to 'pack' (number expected, got nil)\""},
    {"return cmsgpack.unpack(\"\\110\\202\\208\\92\\143\\247\\42\\114\")",
     "OK n:110 n:-14801689600 n:42 n:114"},
    {"return cmsgpack.unpack_limit(\"\\217\\162\\107\\240\\167\\132\\226\\209\", 1, 1)",
     "OK n:4 s\"k\\xf0\""},
    {"return struct.size(\"\\50\\102\\99\\56\\32\")",
     "OK n:12"},
    {"return cjson.encode({-129})",
     "OK s\"[-129]\""},
    {"return cmsgpack.unpack(\"\")",
     "OK "},
    {"return bit.bxor(32, -1, 31)",
     "OK n:-64"},
    {"local p = cmsgpack.pack(65536) return p, cmsgpack.unpack(p)",
     "OK s\"\\xce\\x00\\x01\\x00\\x00\" n:65536"},
    {"return struct.pack(\"\\56\\52\\76\\84\\62\\50\", 1/0, 255, 1.5, \"abc\", 255, -2^33)",
     "ERR s\"bad argument #1 to 'pack' (invalid format option '8')\""},
    {"return cmsgpack.unpack_limit(\"\\163\\144\\161\\110\\1\\214\\146\\207\\210\\252\\159\\"
     "217\", 2, 3)",
     "OK n:5 n:110 n:1"},
    {"return cjson.decode(\"\\91\\45\\69\\93\")",
     "ERR s\"Expected value but found invalid number at character 2\""},
    {"return cjson.encode(-2^40)",
     "OK s\"-1099511627776\""},
    {"return struct.size(\"\\102\\50\\84\\84\\72\")",
     "OK n:22"},
    {"return cjson.encode({[1]={}})",
     "OK s\"[{}]\""},
    {"local p = cmsgpack.pack({{b=string.rep(\"z\", 40)},2^31,{},{[-1]=-0.0,[5]={},[1]=-2^4"
     "0}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x94\\x81\\xa1b\\xd9(zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\\xce\\x80\\x00\\"
     "x00\\x00\\x90\\x83\\x05\\x90\\xff\\x00\\x01\\xd3\\xff\\xff\\xff\\x00\\x00\\x00\\x00\\"
     "x00\" {[n:1]={[s\"b\"]=s\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"},[n:2]=n:2147483"
     "648,[n:3]={},[n:4]={[n:-1]=n:0,[n:1]=n:-1099511627776,[n:5]={}}}"},
    {"local p = cmsgpack.pack({[-1]={1e300,{},1},a={[5]=\"\",[3]=1,[-1]={}},[20]={{{[2]=3.2"
     "5,[\"1\"]=-129}},false}}) return p, cmsgpack.unpack(p)",
     "OK s\"\\x83\\xa1a\\x83\\x05\\xa0\\xff\\x90\\x03\\x01\\xff\\x93\\xcb~7\\xe4<\\x88\\x00"
     "u\\x9c\\x90\\x01\\x14\\x92\\x91\\x82\\x02\\xca@P\\x00\\x00\\xa11\\xd1\\xff\\x7f\\xc2\""
     " {[n:-1]={[n:1]=n:1.0000000000000001e+300,[n:2]={},[n:3]=n:1},[n:20]={[n:1]={[n:1]={["
     "n:2]=n:3.25,[s\"1\"]=n:-129}},[n:2]=false},[s\"a\"]={[n:-1]={},[n:3]=n:1,[n:5]=s\"\"}"
     "}"},
    {"return cjson.decode(\"\\48\\54\")",
     "OK n:6"},
    {"return struct.unpack(\"\\105\\62\\32\", \"\\106\\185\\247\\161\\40\\41\\233\\30\\34\\"
     "53\\203\\172\\60\\221\\228\\82\\26\\225\\136\\198\\210\\84\\120\\69\\168\")",
     "OK n:-1577600662 n:5"},
    {"return cjson.encode(string.rep(\"z\", 40))",
     "OK s\"\"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\"\""},
    {"return cjson.decode(\"\\34\\92\\113\\34\")",
     "ERR s\"Expected value but found invalid escape code at character 2\""},
    {"return struct.unpack(\"\\56\\73\\120\\66\", \"\\64\\96\\232\\44\\77\\73\\62\\109\\58\\"
     "92\\150\\227\\246\\210\\72\\200\\6\\33\\87\\78\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '8')\""},
    {"return struct.pack(\"\\120\\120\\72\\108\\73\", \"\", 0/0, -2^33, 1, 65537, 1.5)",
     "ERR s\"bad argument #2 to 'pack' (number expected, got string)\""},
    {"return cjson.encode({-0.0,{},{{-0.0,{},{[1]=-2^40}},{}},{[\"1\"]={{[1]=1e300,[\"1\"]="
     "cjson.null,[-1]=0.5,[3]=-2^40}},a={[-1]={cjson.null,1e300,-129}}}})",
     "OK s\"[-0,{},[[-0,{},[-1099511627776]],{}],{\"1\":[{\"1\":1e+300,\"3\":-1099511627776"
     ",\"-1\":0.5,\"1\":null}],\"a\":{\"-1\":[null,1e+300,-129]}}]\""},
    {"return struct.unpack(\"\\33\\108\\32\", \"\\240\\180\\223\\136\\103\\41\\216\\127\\24"
     "\\41\\95\\149\\65\\131\\138\\239\\99\\80\\205\\250\")",
     "OK n:9.2121585624410819e+18 n:9"},
    {"local p = cmsgpack.pack(-129) return p, cmsgpack.unpack(p)",
     "OK s\"\\xd1\\xff\\x7f\" n:-129"},
    {"return struct.unpack(\"\\105\\62\\52\\99\", \"\\72\\40\\105\\160\\129\\105\\169\\64\\"
     "171\\186\\194\\202\\235\\122\\174\\145\\106\\242\\19\\202\\161\")",
     "ERR s\"bad argument #1 to 'unpack' (invalid format option '4')\""},
    {"return struct.pack(\"\\66\\100\\102\", 1, 1, 1.5, 2^40, 65537)",
     "OK s\"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\xf0\?\\x00\\x00\\xc0\?\""},
    {"return bit.bswap(2^52+1, 0, -1)",
     "OK n:0"},
    {"return cmsgpack.unpack_limit(\"\\165\\15\\98\\207\\220\\24\\40\\201\\183\", 3, 2)",
     "ERR s\"Missing bytes in input.\""},
    {"return cjson.encode(-129)",
     "OK s\"-129\""},
};

static const struct lua_case cases_mixed[] = {
    {"return cmsgpack.pack({[2^70]=1}), cmsgpack.pack({[1]=1,[2^53]=2}), cmsgpack.pack({[1]"
     "=1,[3]=3,[2]=2})",
     "OK s\"\\x81\\xcab\\x80\\x00\\x00\\x01\" s\"\\x82\\x01\\x01\\xcf\\x00 \\x00\\x00\\x00\\"
     "x00\\x00\\x00\\x02\" s\"\\x93\\x01\\x02\\x03\""},
    {"return cmsgpack.pack({[2^63]=1}), cmsgpack.pack({[1/0]=1})",
     "OK s\"\\x81\\xca_\\x00\\x00\\x00\\x01\" s\"\\x81\\xca\\x7f\\x80\\x00\\x00\\x01\""},
    {"local t = {1,2,3} t[2] = nil return cmsgpack.pack(t), cjson.encode(t)",
     "OK s\"\\x82\\x01\\x01\\x03\\x03\" s\"[1,null,3]\""},
    {"local t = {} t[1] = 1 t[3] = 3 return cmsgpack.pack(t)",
     "OK s\"\\x82\\x01\\x01\\x03\\x03\""},
    {"return cjson.encode({[1]=1, [2]=2, [3]=3, n=3})",
     "OK s\"{\"1\":1,\"2\":2,\"3\":3,\"n\":3}\""},
    {"return cjson.encode({[2^53]=1}), cjson.encode({[1e300]=1})",
     "OK s\"{\"9.007199254741e+15\":1}\" s\"{\"1e+300\":1}\""},
    {"return cjson.encode({'a', 'b', [0.5]=1}):len()",
     "OK n:25"},
    {"return cjson.decode('{\"a\":1,\"b\":2,\"c\":[],\"d\":{}}').d",
     "OK {}"},
    {"return cjson.decode('[' .. string.rep('1,', 5000) .. '1]')[5001]",
     "OK n:1"},
    {"return cjson.encode(cjson.decode('\"\\\\u0000\"'))",
     "OK s\"\"\\u0000\"\""},
    {"return cjson.decode('\"\\\\u0080\\\\u07ff\\\\u0800\\\\uffff\\\\udbff\\\\udfff\"')",
     "OK s\"\\xc2\\x80\\xdf\\xbf\\xe0\\xa0\\x80\\xef\\xbf\\xbf\\xf4\\x8f\\xbf\\xbf\""},
    {"return cjson.decode('\"\\\\uD83D\\\\uDE00\"')",
     "OK s\"\\xf0\\x9f\\x98\\x80\""},
    {"return cjson.decode('\"\\\\uDC00\"')",
     "ERR s\"Expected value but found invalid unicode escape code at character 2\""},
    {"return cjson.encode(string.char(0xe9))",
     "OK s\"\"\\xe9\"\""},
    {"return struct.pack('<d>d', 1.0, 1.0), struct.unpack('<d>d', struct.pack('<d>d', 1.0, "
     "1.0))",
     "OK s\"\\x00\\x00\\x00\\x00\\x00\\x00\\xf0\?\?\\xf0\\x00\\x00\\x00\\x00\\x00\\x00\" n:"
     "1 n:1 n:17"},
    {"return struct.pack('!4 h b d', 1, 2, 3), struct.unpack('!4 h b d', struct.pack('!4 h "
     "b d', 1, 2, 3))",
     "OK s\"\\x01\\x00\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x08@\" n:1 n:2 n:3 n:13"},
    {"return struct.unpack('<!4 b I', '\\1\\0\\0\\0\\2\\0\\0\\0', 1), struct.unpack('b', 'x"
     "yz', 2)",
     "OK n:1 n:121 n:3"},
    {"return struct.unpack('I0', 'abc'), struct.unpack('i1i2', '\\255\\1\\2')",
     "OK n:0 n:-1 n:513 n:4"},
};

TEST(test_lua_libs_bit)
{
    RUN_CASES(cases_bit);
}

TEST(test_lua_libs_struct_pack)
{
    RUN_CASES(cases_struct_pack);
}

TEST(test_lua_libs_struct_unpack)
{
    RUN_CASES(cases_struct_unpack);
}

TEST(test_lua_libs_struct_size)
{
    RUN_CASES(cases_struct_size);
}

TEST(test_lua_libs_cmsgpack_pack)
{
    RUN_CASES(cases_cmsgpack_pack);
}

TEST(test_lua_libs_cmsgpack_unpack)
{
    RUN_CASES(cases_cmsgpack_unpack);
}

TEST(test_lua_libs_cmsgpack_offsets)
{
    RUN_CASES(cases_cmsgpack_offsets);
}

TEST(test_lua_libs_cjson_limits)
{
    RUN_CASES(cases_cjson_limits);
}

TEST(test_lua_libs_cjson_encode)
{
    RUN_CASES(cases_cjson_encode);
}

TEST(test_lua_libs_cjson_settings)
{
    RUN_CASES(cases_cjson_settings);
}

TEST(test_lua_libs_cjson_decode)
{
    RUN_CASES(cases_cjson_decode);
}

TEST(test_lua_libs_corpus)
{
    RUN_CASES(cases_corpus);
}

TEST(test_lua_libs_mixed)
{
    RUN_CASES(cases_mixed);
}

/* ---- checked by hand ---------------------------------------------------- */

/* The OpenResty lua-cjson extensions (absent from Redis, inert by
 * default), the module listing, and large inputs. */
static const struct lua_case cases_extras[] = {
    {"local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return table.concat(t, ',')",
     "OK s\"_NAME,_VERSION,array_mt,decode,decode_array_with_array_mt,decode_invalid_numbers,"
     "decode_max_depth,empty_array_mt,encode,encode_empty_table_as_object,encode_invalid_numbers,"
     "encode_keep_buffer,encode_max_depth,encode_number_precision,encode_sparse_array,new,null\""},
    {"return cjson.encode(setmetatable({}, cjson.array_mt)), cjson.encode(setmetatable({1, 2, 3}, cjson.array_mt)), "
     "cjson.encode(setmetatable({1, a = 2}, cjson.array_mt))",
     "OK s\"[]\" s\"[1,2,3]\" s\"[1]\""},
    {"return cjson.encode(setmetatable({}, cjson.empty_array_mt)), cjson.encode(setmetatable({a = 1}, cjson.empty_array_mt)), "
     "cjson.encode({x = setmetatable({}, cjson.empty_array_mt)}), cjson.encode(setmetatable({}, {}))",
     "OK s\"[]\" s\"{\"a\":1}\" s\"{\"x\":[]}\" s\"{}\""},
    {"return cjson.encode_empty_table_as_object(), cjson.encode_empty_table_as_object(false), cjson.encode({}), "
     "cjson.encode({a = {}}), cjson.encode({{}, 1}), cjson.encode_empty_table_as_object('on'), cjson.encode({})",
     "OK true false s\"[]\" s\"{\"a\":[]}\" s\"[[],1]\" true s\"{}\""},
    {"return cjson.encode_empty_table_as_object('maybe')",
     "ERR s\"bad argument #1 to 'encode_empty_table_as_object' (invalid option 'maybe')\""},
    {"return cjson.decode_array_with_array_mt(), cjson.decode('[1,[]]'), cjson.decode_array_with_array_mt(true), "
     "cjson.decode('[1,[]]'), cjson.decode('{\"a\":[]}'), cjson.encode(cjson.decode('{\"a\":[]}'))",
     "OK false {[n:1]=n:1,[n:2]={}} true array_mt{[n:1]=n:1,[n:2]=array_mt{}} {[s\"a\"]=array_mt{}} "
     "s\"{\"a\":[]}\""},
    {"local c = cjson.new() c.decode_array_with_array_mt(true) "
     "return c.array_mt == cjson.array_mt, c.empty_array_mt == cjson.empty_array_mt, "
     "getmetatable(c.decode('[]')) == cjson.array_mt, getmetatable(cjson.decode('[]'))",
     "OK true true true nil"},
    {"local t = {} for i = 1, 100000 do t[i] = i * 0.5 end local s = cjson.encode(t) local d = cjson.decode(s) "
     "return #s, #d, d[100000], d[3]",
     "OK n:677785 n:100000 n:50000 n:1.5"},
    {"local s = string.rep('\\\\u20ac\\\\n\\\\/', 50000) local d = cjson.decode('\"' .. s .. '\"') "
     "return #d, d:sub(1, 5), #cjson.encode(d)",
     "OK n:250000 s\"\\xe2\\x82\\xac\\x0a/\" n:350002"},
    {"cjson.encode_keep_buffer(false) local ok = pcall(cjson.encode, {f = print or type}) "
     "return ok, cjson.encode({1, 'x'}), cjson.encode(string.rep('a', 5000)):len()",
     "OK false s\"[1,\"x\"]\" n:5002"},
    {"local t = {} for i = 1, 70000 do t[i] = i end local p = cmsgpack.pack(t) local u = cmsgpack.unpack(p) "
     "return p:sub(1, 5), #p, #u, u[70000]",
     "OK s\"\\xdd\\x00\\x01\\x11p\" n:218553 n:70000 n:70000"},
    {"local m = {} for i = 1, 1000 do m['k' .. i] = {i, tostring(i)} end local u = cmsgpack.unpack(cmsgpack.pack(m)) "
     "local n = 0 for k, v in pairs(u) do n = n + 1 assert(v[2] == k:sub(2)) end return n",
     "OK n:1000"},
    {"local s = string.rep('x', 70000) local p = cmsgpack.pack(s) return p:sub(1, 5), cmsgpack.unpack(p) == s",
     "OK s\"\\xdb\\x00\\x01\\x11p\" true"},
};

TEST(test_lua_libs_extras)
{
    RUN_CASES(cases_extras);
}

/* The script engine opens each library with lua_call(f, name): the table
 * must end up in the global of that name and be the function's result. */
TEST(test_lua_libs_openers)
{
    static const struct {
        lua_CFunction open;
        const char *name;
        const char *member;
    } libs[] = {
        {hk_luaopen_cjson, "cjson", "encode"},
        {hk_luaopen_cmsgpack, "cmsgpack", "pack"},
        {hk_luaopen_struct, "struct", "unpack"},
        {hk_luaopen_bit, "bit", "band"},
    };
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        lua_State *L = luaL_newstate();
        CHECK(L != NULL);
        if (!L)
            return;
        /* Called directly, on a bare state (no package library). */
        CHECK_EQ(libs[i].open(L), 1);
        CHECK(lua_istable(L, -1));
        lua_getglobal(L, libs[i].name);
        CHECK(lua_rawequal(L, -1, -2));
        lua_getfield(L, -1, libs[i].member);
        CHECK(lua_iscfunction(L, -1));
        lua_settop(L, 0);
        lua_close(L);
        /* And the way the engine does it. */
        L = luaL_newstate();
        CHECK(L != NULL);
        if (!L)
            return;
        lua_pushcfunction(L, libs[i].open);
        lua_pushstring(L, libs[i].name);
        CHECK_EQ(lua_pcall(L, 1, 1, 0), 0);
        lua_getglobal(L, libs[i].name);
        CHECK(lua_istable(L, -1));
        CHECK(lua_rawequal(L, -1, -2));
        lua_close(L);
    }
}

/* Settings belong to one cjson table: cjson.new() copies start from the
 * defaults and do not affect each other. */
TEST(test_lua_libs_cjson_new_is_independent)
{
    static const struct lua_case cases[] = {
        {"local a, b = cjson.new(), cjson.new() a.encode_number_precision(2) a.encode_max_depth(1) "
         "b.encode_sparse_array(true) "
         "return a.encode(1/3), b.encode(1/3), cjson.encode(1/3), select(2, pcall(a.encode, {{}})), b.encode({[20] = 1}), "
         "pcall(cjson.encode, {[20] = 1})",
         "OK s\"0.33\" s\"0.33333333333333\" s\"0.33333333333333\" "
         "s\"Cannot serialise, excessive nesting (2)\" s\"{\"20\":1}\" false "
         "s\"Cannot serialise table: excessively sparse array\""},
        {"local c = cjson.new() return c.null == cjson.null, c.encode ~= cjson.encode, c.decode('[null]')[1] == cjson.null, "
         "c._NAME, c._VERSION, rawequal(c.new, cjson.new)",
         "OK true true true s\"cjson\" s\"2.1.0\" false"},
    };
    RUN_CASES(cases);
}
