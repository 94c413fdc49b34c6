// EVAL, EVALSHA and SCRIPT for the embedded backend. Each dataset keeps a SHA →
// source cache like a Redis server: EVALSHA of a script never loaded answers
// NOSCRIPT, so the EVALSHA → EVAL fallback of every adapter runs for real here.
import { createHash } from 'node:crypto';
import { ReplyError, type Reply } from '../../core/backend.ts';
import type { CommandContext, CommandImpl } from './command.ts';
import type { Dataset } from './dataset.ts';
import { LuaVm } from './lua-vm.ts';
import { integerArg, syntaxError, wrongArity } from './reply-error.ts';

interface ScriptCache {
  vm: LuaVm;
  sources: Map<string, string>;
}

const caches = new WeakMap<Dataset, ScriptCache>();

function cache(ctx: CommandContext): ScriptCache {
  let found = caches.get(ctx.ds);
  if (!found) {
    found = { vm: new LuaVm((args) => ctx.exec(args, true)), sources: new Map() };
    caches.set(ctx.ds, found);
  }
  return found;
}

const sha1 = (source: string) => createHash('sha1').update(source).digest('hex');

function load(ctx: CommandContext, source: string): string {
  const sha = sha1(source);
  const scripts = cache(ctx);
  scripts.vm.compile(sha, source);
  scripts.sources.set(sha, source);
  return sha;
}

/** Splits `numkeys key… arg…` and runs the script. */
function run(ctx: CommandContext, sha: string, rest: readonly string[]): Reply {
  const numKeys = integerArg(rest[0]);
  if (numKeys < 0) throw new ReplyError("ERR Number of keys can't be negative");
  if (numKeys > rest.length - 1) throw new ReplyError("ERR Number of keys can't be greater than number of args");
  return cache(ctx).vm.run(sha, rest.slice(1, 1 + numKeys), rest.slice(1 + numKeys));
}

const evalCommand: CommandImpl = (ctx, [source, ...rest]) => {
  if (source === undefined || rest.length === 0) throw wrongArity('eval');
  return run(ctx, load(ctx, source), rest);
};

const evalsha: CommandImpl = (ctx, [shaText, ...rest]) => {
  if (shaText === undefined || rest.length === 0) throw wrongArity('evalsha');
  const sha = shaText.toLowerCase();
  if (!cache(ctx).sources.has(sha)) throw new ReplyError('NOSCRIPT No matching script. Please use EVAL.');
  return run(ctx, sha, rest);
};

const script: CommandImpl = (ctx, [sub, ...rest]) => {
  switch (sub?.toUpperCase()) {
    case 'LOAD':
      if (rest.length !== 1) throw wrongArity('script|load');
      return load(ctx, rest[0]!);
    case 'EXISTS':
      return rest.map((sha) => (cache(ctx).sources.has(sha.toLowerCase()) ? 1 : 0));
    case 'FLUSH':
      caches.delete(ctx.ds);
      return 'OK';
    case 'KILL':
      throw new ReplyError('NOTBUSY No scripts in execution right now.');
    default:
      throw syntaxError();
  }
};

export const scriptCommands: Record<string, CommandImpl> = {
  eval: evalCommand,
  eval_ro: evalCommand,
  evalsha,
  evalsha_ro: evalsha,
  script,
};
