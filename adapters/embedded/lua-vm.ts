/// <reference path="./fengari.d.ts" />
// One Lua state (fengari, Lua 5.3) per embedded dataset, converting values the way
// Redis converts them between Lua and replies. ioredis-mock's own Lua glue makes a
// new state per call and gets these conversions wrong (floats, {err=…}, nil holes,
// booleans, nil → false), so scripts run here instead, with redis.call going to the
// same synchronous command engine as everything else.
import { createHash } from 'node:crypto';
import fengari, { type LuaState } from 'fengari';
import { ReplyError, type Reply } from '../../core/backend.ts';
import { LUA_PRELUDE } from './lua-prelude.ts';
import { toReplyError } from './reply-error.ts';

const { lua, lauxlib, lualib, to_luastring } = fengari;
const decoder = new TextDecoder();

/** Commands whose string reply is a status reply, which Lua sees as {ok = …}. */
const STATUS_REPLIES = new Set(['set', 'setex', 'psetex', 'mset', 'hmset', 'lset', 'ltrim', 'rename', 'ping', 'type', 'flushdb', 'flushall', 'xgroup']);

/** Runs one command for redis.call; throws ReplyError. */
export type LuaCommandRunner = (args: string[]) => Reply;

export class LuaVm {
  private readonly L: LuaState;
  private readonly compiled = new Map<string, number>();

  constructor(run: LuaCommandRunner) {
    const L = (this.L = lauxlib.luaL_newstate());
    lualib.luaL_openlibs(L);
    lua.lua_createtable(L, 0, 8);
    this.setFunction('call', (L) => this.redisCall(L, run, false));
    this.setFunction('pcall', (L) => this.redisCall(L, run, true));
    this.setFunction('sha1hex', (L) => {
      lua.lua_pushstring(L, to_luastring(createHash('sha1').update(this.stringAt(L, 1)).digest('hex')));
      return 1;
    });
    lua.lua_setglobal(L, to_luastring('redis'));
    const status = lauxlib.luaL_loadbuffer(L, to_luastring(LUA_PRELUDE), null, to_luastring('@prelude'));
    if (status !== lua.LUA_OK || lua.lua_pcall(L, 0, 0, 0) !== lua.LUA_OK) {
      throw new Error(`embedded Lua prelude failed: ${this.stringAt(L, -1)}`);
    }
  }

  /** Compiles a script once (by SHA); throws the ReplyError Redis gives for a script that does not compile. */
  compile(sha: string, source: string): void {
    if (this.compiled.has(sha)) return;
    const L = this.L;
    if (lauxlib.luaL_loadbuffer(L, to_luastring(source), null, to_luastring('@user_script')) !== lua.LUA_OK) {
      const message = this.stringAt(L, -1);
      lua.lua_pop(L, 1);
      throw new ReplyError(`ERR Error compiling script (new function): ${message}`);
    }
    this.compiled.set(sha, lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));
  }

  /** Runs a compiled script with KEYS and ARGV; returns its reply or throws ReplyError. */
  run(sha: string, keys: readonly string[], args: readonly string[]): Reply {
    const L = this.L;
    const ref = this.compiled.get(sha);
    if (ref === undefined) throw new ReplyError('NOSCRIPT No matching script. Please use EVAL.');
    const base = lua.lua_gettop(L);
    try {
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, lua.LUA_RIDX_GLOBALS);
      this.rawSetList(L, 'KEYS', keys); // rawset: the globals table refuses ordinary writes
      this.rawSetList(L, 'ARGV', args);
      lua.lua_pop(L, 1);
      if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) throw this.errorAt(L, -1);
      return this.toReply(L, -1);
    } finally {
      lua.lua_settop(L, base);
    }
  }

  private setFunction(name: string, fn: (L: LuaState) => number): void {
    lua.lua_pushjsfunction(this.L, fn);
    lua.lua_setfield(this.L, -2, to_luastring(name));
  }

  private rawSetList(L: LuaState, name: string, values: readonly string[]): void {
    lua.lua_pushstring(L, to_luastring(name));
    lua.lua_createtable(L, values.length, 0);
    values.forEach((v, i) => {
      lua.lua_pushstring(L, to_luastring(v));
      lua.lua_rawseti(L, -2, i + 1);
    });
    lua.lua_rawset(L, -3);
  }

  /** redis.call / redis.pcall: arguments must be strings or numbers; errors raise (call) or return {err = …} (pcall). */
  private redisCall(L: LuaState, run: LuaCommandRunner, protectedCall: boolean): number {
    let reply: Reply;
    let status = false;
    try {
      const count = lua.lua_gettop(L);
      if (count === 0) throw new ReplyError('ERR Please specify at least one argument for this redis lib call');
      const args: string[] = [];
      for (let i = 1; i <= count; i++) {
        const type = lua.lua_type(L, i);
        if (type === lua.LUA_TNUMBER) args.push(this.numberText(L, i));
        else if (type === lua.LUA_TSTRING) args.push(this.stringAt(L, i));
        else throw new ReplyError('ERR Lua redis lib command arguments must be strings or integers');
      }
      reply = run(args);
      status = STATUS_REPLIES.has(args[0]!.toLowerCase()) && typeof reply === 'string';
    } catch (error) {
      lua.lua_createtable(L, 0, 1);
      lua.lua_pushstring(L, to_luastring(toReplyError(error).message));
      lua.lua_setfield(L, -2, to_luastring('err'));
      if (protectedCall) return 1;
      return lua.lua_error(L);
    }
    if (status) {
      lua.lua_createtable(L, 0, 1);
      lua.lua_pushstring(L, to_luastring(reply as string));
      lua.lua_setfield(L, -2, to_luastring('ok'));
    } else this.pushReply(L, reply);
    return 1;
  }

  /** A reply as Lua sees it: nil → false, integers → integers, arrays → tables. */
  private pushReply(L: LuaState, reply: Reply): void {
    if (reply === null) lua.lua_pushboolean(L, false);
    else if (typeof reply === 'number') {
      if (Number.isInteger(reply)) lua.lua_pushinteger(L, reply);
      else lua.lua_pushnumber(L, reply);
    } else if (typeof reply === 'string') lua.lua_pushstring(L, to_luastring(reply));
    else {
      lua.lua_createtable(L, reply.length, 0);
      reply.forEach((item, i) => {
        this.pushReply(L, item);
        lua.lua_rawseti(L, -2, i + 1);
      });
    }
  }

  /** A Lua value as Redis replies it: numbers truncated to integers, true → 1, false/nil → nil,
   *  {err = …} → error, {ok = …} → status, other tables → their array part up to the first nil. */
  private toReply(L: LuaState, idx: number): Reply {
    const at = lua.lua_gettop(L) + idx + 1; // absolute index, stable while pushing
    switch (lua.lua_type(L, at)) {
      case lua.LUA_TNUMBER:
        return lua.lua_isinteger(L, at) ? lua.lua_tointeger(L, at) : Math.trunc(lua.lua_tonumber(L, at));
      case lua.LUA_TSTRING:
        return this.stringAt(L, at);
      case lua.LUA_TBOOLEAN:
        return lua.lua_toboolean(L, at) ? 1 : null;
      case lua.LUA_TTABLE: {
        const err = this.stringField(L, at, 'err');
        if (err !== undefined) throw new ReplyError(err);
        const ok = this.stringField(L, at, 'ok');
        if (ok !== undefined) return ok;
        const out: Reply[] = [];
        for (let i = 1; ; i++) {
          const type = lua.lua_rawgeti(L, at, i);
          if (type === lua.LUA_TNIL) {
            lua.lua_pop(L, 1);
            return out;
          }
          try {
            out.push(this.toReply(L, -1));
          } finally {
            lua.lua_pop(L, 1);
          }
        }
      }
      default:
        return null;
    }
  }

  private stringField(L: LuaState, at: number, name: string): string | undefined {
    const type = lua.lua_getfield(L, at, to_luastring(name));
    const value = type === lua.LUA_TSTRING ? this.stringAt(L, -1) : undefined;
    lua.lua_pop(L, 1);
    return value;
  }

  /** What a failed script raised, as the reply error Redis sends. */
  private errorAt(L: LuaState, idx: number): ReplyError {
    if (lua.lua_type(L, idx) === lua.LUA_TTABLE) {
      const err = this.stringField(L, lua.lua_gettop(L) + idx + 1, 'err');
      if (err !== undefined) return new ReplyError(err);
    }
    if (lua.lua_type(L, idx) === lua.LUA_TSTRING) return new ReplyError(`ERR ${this.stringAt(L, idx)}`);
    return new ReplyError('ERR the script raised an error that is not a string');
  }

  private stringAt(L: LuaState, idx: number): string {
    const bytes = lua.lua_tolstring(L, idx);
    return bytes ? decoder.decode(bytes) : '';
  }

  /** Lua 5.3 prints 3.0 as "3.0"; Redis's Lua (one number type) sends "3". */
  private numberText(L: LuaState, idx: number): string {
    if (lua.lua_isinteger(L, idx)) return String(lua.lua_tointeger(L, idx));
    const n = lua.lua_tonumber(L, idx);
    return Number.isInteger(n) ? n.toFixed(0) : String(n);
  }
}
