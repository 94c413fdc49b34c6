// ioredis-mock runs every command synchronously but hands out only wrappers that
// return Promises. Lua's redis.call and MULTI need the synchronous emulators: the
// Pipeline constructor passes each one to its _createCommand, so a subclass that
// records them there collects the whole command table once.
import { redisMock } from './redis-mock.ts';
import { ModuleLoadError } from '../../core/errors.ts';
import type { MockInstance } from './dataset.ts';

/** A command emulator: called with the mock instance as `this` and string arguments. */
export type Emulator = (this: MockInstance, ...args: string[]) => unknown;

/** Exports of ioredis-mock's command table that are helpers, not Redis commands. */
const NOT_COMMANDS = new Set(['customCommand', 'defineArgv', 'defineCommand', 'defineKeys', 'defineRedisObject', 'evaluate', 'connect']);

let table: ReadonlyMap<string, Emulator> | undefined;

/** Lower-case command name → emulator. */
export function mockCommands(instance: MockInstance): ReadonlyMap<string, Emulator> {
  if (table) return table;
  const found = new Map<string, Emulator>();
  const Pipeline = (redisMock() as { Pipeline: new (redis: MockInstance) => object }).Pipeline;
  class Recorder extends Pipeline {
    _createCommand(name: string, emulator: Emulator) {
      if (!name.endsWith('Buffer') && !NOT_COMMANDS.has(name)) found.set(name.toLowerCase(), emulator);
      return () => this;
    }
  }
  new Recorder(instance);
  if (!found.has('get') || !found.has('hset')) {
    throw new ModuleLoadError(
      'the installed ioredis-mock is not the version coordkit pins (its package.json): its command emulators could not be found',
      { code: 'COORD_ERR_EMBEDDED_IOREDIS_MOCK' },
    );
  }
  table = found;
  return table;
}
