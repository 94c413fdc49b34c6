// Expiry commands. ioredis-mock ignores EXPIRE's NX/XX/GT/LT conditions and SET's
// KEEPTTL (so an update with KEEPTTL made a key immortal), and accepts any text as
// a time; these follow Redis 7.
import { ReplyError } from '../../core/backend.ts';
import type { CommandImpl } from './command.ts';
import { mockCommands } from './mock-commands.ts';
import { integerArg, syntaxError, wrongArity, wrongType } from './reply-error.ts';
import { typeOf } from './type-check.ts';

/** EXPIRE (s, relative), PEXPIRE (ms, relative), EXPIREAT (s, absolute), PEXPIREAT (ms, absolute). */
const expireCommand = (name: string, unitMs: number, absolute: boolean): CommandImpl => ({ ds }, args) => {
  const [key, amountText, ...flags] = args;
  if (key === undefined || amountText === undefined) throw wrongArity(name);
  const amount = integerArg(amountText);
  const condition = flags.map((f) => f.toUpperCase());
  if (condition.length > 1 || condition.some((c) => !['NX', 'XX', 'GT', 'LT'].includes(c))) {
    throw new ReplyError(`ERR Unsupported option ${flags.join(' ')}`);
  }
  if (!ds.mock.data.has(key)) return 0;
  const at = absolute ? amount * unitMs : Date.now() + amount * unitMs;
  const current = ds.mock.expires.has(key) ? ds.mock.expires.get(key) : Infinity; // no expiry = never
  const allowed: Record<string, boolean> = {
    NX: current === Infinity,
    XX: current !== Infinity,
    GT: at > current,
    LT: at < current,
  };
  if (condition[0] !== undefined && !allowed[condition[0]]) return 0;
  if (at <= Date.now()) ds.mock.data.delete(key); // a time in the past deletes the key, as in Redis
  else ds.mock.expires.set(key, at);
  return 1;
};

const EXPIRY_OPTIONS = new Set(['EX', 'PX', 'EXAT', 'PXAT']);

/** SET: ioredis-mock's, plus KEEPTTL, WRONGTYPE for GET on a non-string, and checked expiry times. */
const set: CommandImpl = ({ ds }, args) => {
  const [key, value, ...options] = args;
  if (key === undefined || value === undefined) throw wrongArity('set');
  const words = options.map((o) => o.toUpperCase());
  for (let i = 0; i < words.length; i++) {
    if (EXPIRY_OPTIONS.has(words[i]!)) {
      const time = integerArg(options[++i]);
      if (time <= 0) throw new ReplyError("ERR invalid expire time in 'set' command");
    } else if (!['NX', 'XX', 'GET', 'KEEPTTL'].includes(words[i]!)) throw syntaxError();
  }
  const keepTtl = words.includes('KEEPTTL');
  if (keepTtl && words.some((w) => EXPIRY_OPTIONS.has(w))) throw syntaxError();
  if (words.includes('GET') && !['none', 'string'].includes(typeOf(ds.mock.data.get(key)))) throw wrongType();
  const expiry = keepTtl && ds.mock.expires.has(key) ? ds.mock.expires.get(key) : undefined;
  const reply = mockCommands(ds.mock).get('set')!.apply(ds.mock, [key, value, ...words.filter((w) => w !== 'KEEPTTL')]);
  if (expiry !== undefined) ds.mock.expires.set(key, expiry); // its SET clears the expiry whenever it writes
  return reply as string | null;
};

export const expireCommands: Record<string, CommandImpl> = {
  expire: expireCommand('expire', 1000, false),
  pexpire: expireCommand('pexpire', 1, false),
  expireat: expireCommand('expireat', 1000, true),
  pexpireat: expireCommand('pexpireat', 1, true),
  set,
};
