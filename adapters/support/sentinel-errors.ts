// What the client libraries say when Sentinel does not hand them a master,
// said in one line a user can act on: which sentinel, and why.

const NO_SUCH_MASTER = /^connected to sentinel (\S+) successfully, but got an invalid reply: null$/;
const UNREACHABLE = /^failed to connect to sentinel (\S+) because (.*)$/s;
const ALL_UNREACHABLE = /^All sentinels are unreachable\b.*?(?:Last error: (.*))?$/s;

/** ioredis's summary after every sentinel failed; each sentinel's own error came before it and says more. */
export function isAllSentinelsError(error: unknown): boolean {
  return error instanceof Error && ALL_UNREACHABLE.test(error.message);
}

/** node-redis's own wrappings of its node clients' errors: anything else its sentinel client emits came from talking to a sentinel. */
const NODE_CLIENT = /^(Master|Replica|Sentinel) Client \(/;
const FROM_SENTINEL = /^a sentinel: (.*)$/s;

/**
 * node-redis emits what a sentinel answered (ERR No such master…, NOAUTH…)
 * unwrapped, and its sentinel clients' socket errors as bare text: marked
 * here as a sentinel's, so the line does not blame the Redis data nodes.
 */
export function fromSentinel(error: unknown): unknown {
  if (typeof error === 'string') return new Error(`a sentinel: ${error.replace(/^obseve client error: /, '')}`);
  if (error instanceof Error && !NODE_CLIENT.test(error.message)) return new Error(`a sentinel: ${error.message}`, { cause: error });
  return error;
}

/** A sentinel error in plain words, or undefined for any other error. */
export function sentinelErrorText(error: unknown, masterName: string): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = error.message;
  const answered = FROM_SENTINEL.exec(message)?.[1];
  if (answered !== undefined) {
    if (/no such master/i.test(answered)) return noSuchMaster('the sentinels know', masterName);
    return `a sentinel: ${answered}${/^(NOAUTH|WRONGPASS)/.test(answered) ? ' (check redis.sentinelPassword)' : ''}`;
  }
  let m = NO_SUCH_MASTER.exec(message);
  if (m) return noSuchMaster(`sentinel ${m[1]} knows`, masterName);
  m = UNREACHABLE.exec(message);
  if (m && /no such master/i.test(m[2]!)) return noSuchMaster(`sentinel ${m[1]} knows`, masterName);
  // ioredis's sentinel connection reports a refused connect as its command's "Connection is closed.".
  if (m) {
    const why = m[2] === 'Connection is closed.' ? 'not reachable (connection refused or closed)' : m[2]!;
    return `sentinel ${m[1]}: ${why}${/^(NOAUTH|WRONGPASS)/.test(why) ? ' (check redis.sentinelPassword)' : ''}`;
  }
  m = ALL_UNREACHABLE.exec(message);
  if (m) return `no sentinel named a master "${masterName}"${m[1] ? ` (${m[1]})` : ''}`;
  return undefined;
}

function noSuchMaster(who: string, masterName: string): string {
  return `${who} no master named "${masterName}" (check the name after the sentinels in the URL, or redis.masterName)`;
}
