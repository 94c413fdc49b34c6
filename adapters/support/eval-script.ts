// EVALSHA first (the script body is sent once per server, not per call), EVAL
// when the server answers NOSCRIPT (first run, after SCRIPT FLUSH or a restart).
import { ReplyError, type Arg, type Command, type Reply, type ScriptSource } from '../../core/backend.ts';

export async function evalWithFallback(
  send: (command: Command) => Promise<Reply>,
  script: ScriptSource,
  keys: readonly string[],
  args: readonly Arg[],
): Promise<Reply> {
  try {
    return await send(['EVALSHA', script.sha, keys.length, ...keys, ...args]);
  } catch (error) {
    if (!(error instanceof ReplyError && error.code === 'NOSCRIPT')) throw error;
    return send(['EVAL', script.lua, keys.length, ...keys, ...args]);
  }
}
