// ioredis-mock, required rather than imported, with fengari left out.
// Node's ESM import of a CommonJS package parses it for export names (its one
// 260 KB bundle), and the bundle requires fengari (Lua in JavaScript, 1.8 MB)
// at load for an EVAL the embedded backend never calls: its scripts run on
// lua-vm.ts. So fengari's two modules are put in the require cache as empty
// ones first; the bundle only reads properties off them at load. Together
// these cut what an embedded backend costs a process to start (a load test's
// first request waits on it). test/embedded-dependencies.test.ts holds the
// pinned version this relies on.
import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let loaded: unknown;

/** The ioredis-mock module (its default export, the RedisMock class). */
export function redisMock(): unknown {
  if (loaded) return loaded;
  const fromMock = createRequire(require.resolve('ioredis-mock'));
  for (const name of ['fengari', 'fengari-interop']) {
    const path = fromMock.resolve(name);
    if (require.cache[path]) continue; // a real one loaded already (someone else's EVAL): keep it
    const empty = new Module(path) as Module & { filename: string; loaded: boolean };
    empty.filename = path;
    empty.loaded = true;
    empty.exports = {};
    require.cache[path] = empty;
  }
  loaded = require('ioredis-mock');
  return loaded;
}
