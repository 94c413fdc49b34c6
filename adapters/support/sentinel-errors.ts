// What the client libraries say when Sentinel does not hand them a master,
// said in one line a user can act on: which sentinel, and why.

const NO_SUCH_MASTER = /^connected to sentinel (\S+) successfully, but got an invalid reply: null$/;
const UNREACHABLE = /^failed to connect to sentinel (\S+) because (.*)$/s;
const ALL_UNREACHABLE = /^All sentinels are unreachable\b.*?(?:Last error: (.*))?$/s;

/** ioredis's summary after every sentinel failed; each sentinel's own error came before it and says more. */
export function isAllSentinelsError(error: unknown): boolean {
  return error instanceof Error && ALL_UNREACHABLE.test(error.message);
}

/** A sentinel error in plain words, or undefined for any other error. */
export function sentinelErrorText(error: unknown, masterName: string): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = error.message;
  let m = NO_SUCH_MASTER.exec(message);
  if (m) return `sentinel ${m[1]} knows no master named "${masterName}" (check the name after the sentinels in the URL, or redis.masterName)`;
  m = UNREACHABLE.exec(message);
  if (m) return `sentinel ${m[1]}: ${m[2]}`;
  m = ALL_UNREACHABLE.exec(message);
  if (m) return `no sentinel named a master "${masterName}"${m[1] ? ` (${m[1]})` : ''}`;
  return undefined;
}
