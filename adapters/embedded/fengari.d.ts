// The part of fengari (Lua 5.3 in JavaScript) the embedded backend uses; the package ships no types.
declare module 'fengari' {
  export type LuaState = { readonly __luaState: unique symbol };
  export type LuaString = Uint8Array;

  export function to_luastring(s: string): LuaString;
  export function to_jsstring(s: LuaString): string;

  export const lua: {
    LUA_OK: number;
    LUA_REGISTRYINDEX: number;
    LUA_RIDX_GLOBALS: number;
    LUA_TNIL: number;
    LUA_TBOOLEAN: number;
    LUA_TNUMBER: number;
    LUA_TSTRING: number;
    LUA_TTABLE: number;
    lua_gettop(L: LuaState): number;
    lua_settop(L: LuaState, idx: number): void;
    lua_pop(L: LuaState, n: number): void;
    lua_type(L: LuaState, idx: number): number;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_tointeger(L: LuaState, idx: number): number;
    lua_tonumber(L: LuaState, idx: number): number;
    lua_toboolean(L: LuaState, idx: number): boolean;
    lua_tolstring(L: LuaState, idx: number): LuaString | null;
    lua_pushstring(L: LuaState, s: LuaString): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushnil(L: LuaState): void;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_pushjsfunction(L: LuaState, fn: (L: LuaState) => number): void;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_rawset(L: LuaState, idx: number): void;
    lua_setfield(L: LuaState, idx: number, k: LuaString): void;
    lua_getfield(L: LuaState, idx: number, k: LuaString): number;
    lua_setglobal(L: LuaState, name: LuaString): void;
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_error(L: LuaState): never;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbuffer(L: LuaState, buff: LuaString, size: number | null, name: LuaString): number;
    luaL_ref(L: LuaState, t: number): number;
  };

  export const lualib: {
    luaL_openlibs(L: LuaState): void;
  };
}
