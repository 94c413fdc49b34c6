// Redis reads option keywords in any case ('nx', 'ex', 'withscores'); ioredis-mock
// compares them upper-case only, so `SET k v nx ex 60` would silently overwrite and
// never expire. Upper-casing the option part of the arguments (never a key, member
// or value) before the emulator runs restores Redis's behaviour.

/** Arguments from this index on are keywords or numbers, safe to upper-case. */
const OPTIONS_FROM: Record<string, number> = {
  set: 2, getex: 1, expire: 2, pexpire: 2, expireat: 2, pexpireat: 2, lpos: 2, lmove: 2, hrandfield: 2,
  zrange: 3, zrevrange: 3, zrangebyscore: 3, zrevrangebyscore: 3, zrangebylex: 3, zrevrangebylex: 3,
};

/** Commands whose keywords lead, right after the key (ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member …). */
const LEADING: Record<string, ReadonlySet<string>> = {
  zadd: new Set(['NX', 'XX', 'GT', 'LT', 'CH', 'INCR']),
  linsert: new Set(['BEFORE', 'AFTER']),
};

export function normaliseOptionCase(command: string, args: readonly string[]): readonly string[] {
  if (Object.hasOwn(OPTIONS_FROM, command)) return args.map((arg, i) => (i >= OPTIONS_FROM[command]! ? arg.toUpperCase() : arg));
  if (!Object.hasOwn(LEADING, command)) return args;
  const leading = LEADING[command]!;
  const out = [...args];
  for (let i = 1; i < out.length && leading.has(out[i]!.toUpperCase()); i++) out[i] = out[i]!.toUpperCase();
  return out;
}
