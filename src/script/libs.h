/* libs.h - the Lua 5.1 C libraries that Redis exposes to scripts, written
 * for HotKV: cjson (lib_cjson.c), cmsgpack (lib_cmsgpack.c), struct
 * (lib_struct.c) and bit (lib_bit.c).  Each opener creates a new table,
 * sets it as the global of the library's name, leaves it on the stack and
 * returns 1, like a luaopen_* function (package.loaded is not touched); it
 * may be called with lua_call/lua_pcall (any arguments are ignored) or
 * directly.  Behaviour follows
 * the libraries bundled with Redis 7.0 as seen from a script (formats,
 * limits, error texts). */
#ifndef HK_SCRIPT_LIBS_H
#define HK_SCRIPT_LIBS_H

#include <lua.h>

int hk_luaopen_cjson(lua_State *L);
int hk_luaopen_cmsgpack(lua_State *L);
int hk_luaopen_struct(lua_State *L);
int hk_luaopen_bit(lua_State *L);

#endif
