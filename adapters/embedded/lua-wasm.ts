// Lua 5.4 compiled to WebAssembly (glue.wasm of the npm package wasmoon, loaded by
// lua-module.ts), reached through its C API directly: wasmoon's own JS interop
// wraps every value in proxies, which costs more than the scripts, so the
// instance's exports are called as they are. Loading compiles the .wasm once per
// process and is asynchronous, so the embedded backend awaits loadLua() before
// its first command; after that everything here is synchronous.
import { Buffer } from 'node:buffer';
import { UsageError } from '../../core/errors.ts';
import { loadLuaModule } from './lua-module.ts';

/** The raw exports of the Lua build (pointers and sizes are numbers, lua_Integer is a bigint). */
export interface LuaApi {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  /** Makes a JS function a lua_CFunction (its table index). */
  addFunction(fn: (L: number) => number): number;
  _luaL_newstate(): number;
  _luaL_openlibs(L: number): void;
  _luaL_loadbufferx(L: number, buffer: number, size: number, name: number, mode: number): number;
  _luaL_ref(L: number, t: number): number;
  /** Pushes 'chunkname:currentline: ' of the function `level` up the stack. */
  _luaL_where(L: number, level: number): void;
  _lua_gettop(L: number): number;
  _lua_settop(L: number, index: number): void;
  _lua_type(L: number, index: number): number;
  _lua_isinteger(L: number, index: number): number;
  _lua_tointegerx(L: number, index: number, isnum: number): bigint;
  _lua_tonumberx(L: number, index: number, isnum: number): number;
  _lua_toboolean(L: number, index: number): number;
  _lua_tolstring(L: number, index: number, length: number): number;
  _lua_pushnil(L: number): void;
  _lua_pushboolean(L: number, value: number): void;
  _lua_pushinteger(L: number, value: bigint): void;
  _lua_pushnumber(L: number, value: number): void;
  _lua_pushlstring(L: number, pointer: number, length: number): number;
  _lua_pushcclosure(L: number, fn: number, upvalues: number): void;
  _lua_createtable(L: number, arrayPart: number, hashPart: number): void;
  _lua_getfield(L: number, index: number, name: number): number;
  _lua_setfield(L: number, index: number, name: number): void;
  _lua_setglobal(L: number, name: number): void;
  _lua_rawgeti(L: number, index: number, n: bigint): number;
  _lua_rawseti(L: number, index: number, n: bigint): void;
  _lua_rawset(L: number, index: number): void;
  _lua_pcallk(L: number, args: number, results: number, handler: number, context: number, continuation: number): number;
  _lua_error(L: number): number;
}

export const LUA_OK = 0;
export const LUA_REGISTRYINDEX = -1_001_000; // -LUAI_MAXSTACK - 1000 in this build
export const LUA_RIDX_GLOBALS = 2n;
export const LuaType = { nil: 0, boolean: 1, number: 3, string: 4, table: 5 } as const;

let api: LuaApi | undefined;
let loading: Promise<LuaApi> | undefined;

/** Loads the Lua WebAssembly module (once per process). */
export function loadLua(): Promise<LuaApi> {
  loading ??= instantiate();
  return loading;
}

async function instantiate(): Promise<LuaApi> {
  const module = await loadLuaModule();
  const { exports, heap } = module;
  // The C functions under the names emscripten's module gives them (_lua_gettop for lua_gettop).
  const functions = Object.fromEntries(
    Object.keys(exports)
      .filter((name) => name.startsWith('lua') && typeof exports[name] === 'function')
      .map((name) => [`_${name}`, exports[name]]),
  );
  api = Object.defineProperties(
    { ...functions, _malloc: exports.malloc, _free: exports.free, addFunction: module.addFunction },
    {
      // The views are replaced when the memory grows: read them at each use.
      HEAPU8: { get: () => heap.u8 },
      HEAPU32: { get: () => heap.u32 },
    },
  ) as LuaApi;
  return api;
}

/** The loaded module; the embedded backend awaits loadLua() before it runs any command. */
export function luaApi(): LuaApi {
  if (!api) throw new UsageError('the embedded Lua engine is not loaded yet (await loadLua() first)', { code: 'COORD_ERR_EMBEDDED_LUA_NOT_LOADED' });
  return api;
}

export const luaLoaded = (): boolean => api !== undefined;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Moves strings between JavaScript and Lua (UTF-8) through one scratch buffer in the module's memory. */
export class LuaStrings {
  private scratch: number;
  private scratchSize = 4096;
  /** A size_t slot for lua_tolstring's length. */
  private readonly lengthSlot: number;
  private readonly names = new Map<string, number>();
  /** The module's memory as a Buffer, made again when the memory grows. */
  private heapBytes: Buffer | undefined;

  constructor(private readonly lua: LuaApi) {
    this.scratch = lua._malloc(this.scratchSize);
    this.lengthSlot = lua._malloc(8);
  }

  push(L: number, text: string): void {
    const size = this.encode(text); // first: it may move the scratch buffer
    this.lua._lua_pushlstring(L, this.scratch, size);
  }

  /** Writes the text as UTF-8 at `scratch` (valid until the next encode); returns its size in bytes. */
  encode(text: string): number {
    const lua = this.lua;
    const length = text.length;
    if (length * 3 > this.scratchSize) {
      lua._free(this.scratch);
      this.scratchSize = length * 3 * 2;
      this.scratch = lua._malloc(this.scratchSize);
    }
    const heap = lua.HEAPU8;
    const at = this.scratch;
    let i = 0;
    // ASCII (most keys and values) is copied as is; anything else goes through the encoder.
    for (; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) break;
      heap[at + i] = code;
    }
    if (i === length) return length;
    return i + encoder.encodeInto(text.slice(i), heap.subarray(at + i, at + this.scratchSize)).written;
  }

  /** Where encode() wrote. */
  get scratchPointer(): number {
    return this.scratch;
  }

  /** The string (or number, converted in place as Lua does) at `index`. */
  read(L: number, index: number): string {
    const lua = this.lua;
    const pointer = lua._lua_tolstring(L, index, this.lengthSlot);
    if (pointer === 0) return '';
    const length = lua.HEAPU32[this.lengthSlot >> 2]!;
    const heap = lua.HEAPU8;
    const end = pointer + length;
    for (let i = pointer; i < end; i++) {
      if (heap[i]! >= 0x80) return decoder.decode(heap.subarray(pointer, end));
    }
    // ASCII (most keys and values): Buffer's latin1 reading is several times cheaper than TextDecoder, and
    // makes a flat string (one built char by char is a rope that every Map lookup must flatten first)
    if (this.heapBytes?.buffer !== heap.buffer) this.heapBytes = Buffer.from(heap.buffer, heap.byteOffset, heap.byteLength);
    return this.heapBytes.toString('latin1', pointer, end);
  }

  /** A NUL-terminated C string kept for the life of the process (field and global names). */
  name(text: string): number {
    let pointer = this.names.get(text);
    if (pointer === undefined) {
      const bytes = encoder.encode(text);
      pointer = this.lua._malloc(bytes.length + 1);
      this.lua.HEAPU8.set(bytes, pointer);
      this.lua.HEAPU8[pointer + bytes.length] = 0;
      this.names.set(text, pointer);
    }
    return pointer;
  }
}
