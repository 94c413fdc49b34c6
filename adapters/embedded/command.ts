// The shape of a command the embedded backend implements itself (instead of ioredis-mock).
import type { Reply } from '../../core/backend.ts';
import type { Dataset } from './dataset.ts';

export interface CommandContext {
  readonly ds: Dataset;
  /** Runs another command in the same dataset, synchronously; `fromScript` applies the rules of redis.call. */
  exec(args: readonly string[], fromScript?: boolean): Reply;
}

/** Runs synchronously, so no other command of the dataset can interleave. Throws ReplyError. */
export type CommandImpl = (ctx: CommandContext, args: readonly string[]) => Reply;
