// One Lua state (Lua 5.4 in WebAssembly, lua-wasm.ts) per embedded dataset,
// converting values the way Redis converts them between Lua and replies, with
// redis.call going to the same synchronous command engine as everything else.
// Lua 5.4 has 64-bit integers, as Redis's replies do; how it differs from Redis's
// Lua 5.1 is written down in lua-prelude.ts.
import { createHash } from 'node:crypto';
import { ReplyError, type Reply } from '../../core/backend.ts';
import { ModuleLoadError } from '../../core/errors.ts';
import { LUA_PRELUDE } from './lua-prelude.ts';
import { LUA_OK, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS, LuaStrings, LuaType, luaApi, type LuaApi } from './lua-wasm.ts';
import { toReplyError } from './reply-error.ts';

/** Commands whose string reply is a status reply, which Lua sees as {ok = …}. */
const STATUS_REPLIES = new Set(['set', 'setex', 'psetex', 'mset', 'hmset', 'lset', 'ltrim', 'rename', 'ping', 'type', 'flushdb', 'flushall', 'xgroup']);

/** Runs one command for redis.call; throws ReplyError. */
export type LuaCommandRunner = (args: string[]) => Reply;

export class LuaVm {
  private readonly lua: LuaApi;
  private readonly strings: LuaStrings;
  private readonly L: number;
  private readonly compiled = new Map<string, number>();
  private readonly chunkName: number;

  constructor(run: LuaCommandRunner) {
    const lua = (this.lua = luaApi());
    const strings = (this.strings = new LuaStrings(lua));
    const L = (this.L = lua._luaL_newstate());
    lua._luaL_openlibs(L);
    this.chunkName = strings.name('@user_script');
    lua._lua_createtable(L, 0, 8);
    this.setFunction('call', (L) => this.redisCall(L, run, false));
    this.setFunction('pcall', (L) => this.redisCall(L, run, true));
    this.setFunction('sha1hex', (L) => {
      strings.push(L, createHash('sha1').update(lua._lua_gettop(L) >= 1 ? strings.read(L, 1) : '').digest('hex'));
      return 1;
    });
    lua._lua_setglobal(L, strings.name('redis'));
    const size = strings.encode(LUA_PRELUDE);
    const status = lua._luaL_loadbufferx(L, strings.scratchPointer, size, strings.name('@prelude'), 0);
    if (status !== LUA_OK || lua._lua_pcallk(L, 0, 0, 0, 0, 0) !== LUA_OK) {
      // Only a Lua build other than the pinned one's gets here.
      throw new ModuleLoadError(`the embedded backend's Lua engine does not start: its prelude failed: ${strings.read(L, -1)}`, {
        code: 'COORD_ERR_EMBEDDED_LUA_LOAD',
      });
    }
    lua._lua_settop(L, 0);
  }

  /** Compiles a script once (by SHA); throws the ReplyError Redis gives for a script that does not compile. */
  compile(sha: string, source: string): void {
    if (this.compiled.has(sha)) return;
    const { lua, L, strings } = this;
    const base = lua._lua_gettop(L);
    try {
      const size = strings.encode(source);
      if (lua._luaL_loadbufferx(L, strings.scratchPointer, size, this.chunkName, 0) !== LUA_OK) {
        throw new ReplyError(`ERR Error compiling script (new function): ${strings.read(L, -1)}`);
      }
      this.compiled.set(sha, lua._luaL_ref(L, LUA_REGISTRYINDEX));
    } finally {
      lua._lua_settop(L, base);
    }
  }

  /** The SHA of the script running now, for the errors redis.call raises. */
  private running = '';

  /** Runs a compiled script with KEYS and ARGV; returns its reply or throws ReplyError. */
  run(sha: string, keys: readonly string[], args: readonly string[]): Reply {
    const { lua, L } = this;
    const ref = this.compiled.get(sha);
    if (ref === undefined) throw new ReplyError('NOSCRIPT No matching script. Please use EVAL.');
    const base = lua._lua_gettop(L);
    this.running = sha;
    try {
      lua._lua_rawgeti(L, LUA_REGISTRYINDEX, BigInt(ref));
      lua._lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
      this.rawSetList('KEYS', keys); // rawset: the globals table refuses ordinary writes
      this.rawSetList('ARGV', args);
      lua._lua_settop(L, -2);
      if (lua._lua_pcallk(L, 0, 1, 0, 0, 0) !== LUA_OK) throw this.errorAt(-1);
      return this.toReply(lua._lua_gettop(L));
    } finally {
      lua._lua_settop(L, base);
    }
  }

  private setFunction(name: string, fn: (L: number) => number): void {
    this.lua._lua_pushcclosure(this.L, this.lua.addFunction(fn), 0);
    this.lua._lua_setfield(this.L, -2, this.strings.name(name));
  }

  private rawSetList(name: string, values: readonly string[]): void {
    const { lua, L, strings } = this;
    strings.push(L, name);
    lua._lua_createtable(L, values.length, 0);
    for (let i = 0; i < values.length; i++) {
      strings.push(L, values[i]!);
      lua._lua_rawseti(L, -2, BigInt(i + 1));
    }
    lua._lua_rawset(L, -3);
  }

  /** redis.call / redis.pcall: arguments must be strings or numbers; errors raise (call) or return {err = …} (pcall). */
  private redisCall(L: number, run: LuaCommandRunner, protectedCall: boolean): number {
    const { lua, strings } = this;
    let reply: Reply;
    let status = false;
    try {
      const count = lua._lua_gettop(L);
      if (count === 0) throw new ReplyError('ERR Please specify at least one argument for this redis lib call');
      const args: string[] = new Array(count);
      for (let i = 1; i <= count; i++) {
        const type = lua._lua_type(L, i);
        if (type === LuaType.number) args[i - 1] = this.numberText(L, i);
        else if (type === LuaType.string) args[i - 1] = strings.read(L, i);
        else throw new ReplyError('ERR Lua redis lib command arguments must be strings or integers');
      }
      reply = run(args);
      status = typeof reply === 'string' && STATUS_REPLIES.has(args[0]!.toLowerCase());
      lua._lua_settop(L, 0);
      if (status) this.pushTable(L, 'ok', reply as string);
      else this.pushReply(L, reply);
      return 1;
    } catch (error) {
      lua._lua_settop(L, 0);
      let message = toReplyError(error).message;
      if (!protectedCall) {
        // As Redis 7 says where a script's redis.call failed: the line of the call (the runner maps it to the .lua file).
        lua._luaL_where(L, 1);
        const line = /:(\d+):/.exec(strings.read(L, 1))?.[1];
        lua._lua_settop(L, 0);
        if (line) message += ` script: ${this.running}, on @user_script:${line}.`;
      }
      this.pushTable(L, 'err', message);
      if (protectedCall) return 1;
      return lua._lua_error(L); // unwinds to the script's pcall (or the run's): nothing after this runs
    }
  }

  /** Pushes {field = text} on L (the running thread: a script may call from a coroutine). */
  private pushTable(L: number, field: 'ok' | 'err', text: string): void {
    const { lua, strings } = this;
    lua._lua_createtable(L, 0, 1);
    strings.push(L, text);
    lua._lua_setfield(L, -2, strings.name(field));
  }

  /** A reply as Lua sees it: nil → false, integers → integers, arrays → tables. */
  private pushReply(L: number, reply: Reply): void {
    const lua = this.lua;
    if (reply === null) lua._lua_pushboolean(L, 0);
    else if (typeof reply === 'number') {
      if (Number.isSafeInteger(reply)) lua._lua_pushinteger(L, BigInt(reply));
      else lua._lua_pushnumber(L, reply);
    } else if (typeof reply === 'string') this.strings.push(L, reply);
    else {
      lua._lua_createtable(L, reply.length, 0);
      for (let i = 0; i < reply.length; i++) {
        this.pushReply(L, reply[i]!);
        lua._lua_rawseti(L, -2, BigInt(i + 1));
      }
    }
  }

  /** A Lua value as Redis replies it: numbers truncated to integers, true → 1, false/nil → nil,
   *  {err = …} → error, {ok = …} → status, other tables → their array part up to the first nil. */
  private toReply(at: number): Reply {
    const { lua, L } = this;
    switch (lua._lua_type(L, at)) {
      case LuaType.number:
        return lua._lua_isinteger(L, at) ? Number(lua._lua_tointegerx(L, at, 0)) : Math.trunc(lua._lua_tonumberx(L, at, 0));
      case LuaType.string:
        return this.strings.read(L, at);
      case LuaType.boolean:
        return lua._lua_toboolean(L, at) ? 1 : null;
      case LuaType.table: {
        const err = this.stringField(at, 'err');
        if (err !== undefined) throw new ReplyError(err);
        const ok = this.stringField(at, 'ok');
        if (ok !== undefined) return ok;
        const out: Reply[] = [];
        for (let i = 1; ; i++) {
          if (lua._lua_rawgeti(L, at, BigInt(i)) === LuaType.nil) {
            lua._lua_settop(L, -2);
            return out;
          }
          try {
            out.push(this.toReply(lua._lua_gettop(L)));
          } finally {
            lua._lua_settop(L, -2);
          }
        }
      }
      default:
        return null;
    }
  }

  private stringField(at: number, name: string): string | undefined {
    const { lua, L } = this;
    const type = lua._lua_getfield(L, at, this.strings.name(name));
    const value = type === LuaType.string ? this.strings.read(L, -1) : undefined;
    lua._lua_settop(L, -2);
    return value;
  }

  /** What a failed script raised, as the reply error Redis sends. */
  private errorAt(index: number): ReplyError {
    const { lua, L } = this;
    const at = lua._lua_gettop(L) + index + 1;
    if (lua._lua_type(L, at) === LuaType.table) {
      const err = this.stringField(at, 'err');
      if (err !== undefined) return new ReplyError(err);
    }
    if (lua._lua_type(L, at) === LuaType.string) return new ReplyError(`ERR ${this.strings.read(L, at)}`);
    return new ReplyError('ERR the script raised an error that is not a string');
  }

  /** Lua 5.4 prints 3.0 as "3.0"; Redis's Lua (one number type) sends "3". */
  private numberText(L: number, index: number): string {
    const lua = this.lua;
    if (lua._lua_isinteger(L, index)) return String(lua._lua_tointegerx(L, index, 0));
    const n = lua._lua_tonumberx(L, index, 0);
    return Number.isInteger(n) ? n.toFixed(0) : String(n);
  }
}
