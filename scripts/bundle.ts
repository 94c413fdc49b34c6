// Build step (npm run build, npm test), after tsc: what the package runs — the
// `coord` bin and every public entry — bundled by esbuild into dist/bundle/,
// with the code they share in common chunks. Node would otherwise resolve,
// read and compile some 70 modules one by one for `coord grid status`
// (measured: the bundle costs that command ~20 ms less CPU, 10% of it).
// All entries are bundled together so they share one copy of each module: a
// user's plugin importing `coordkit/plugin` gets the classes the CLI checks
// errors against. Packages stay external (npm installs them).
// dist/bundle/ sits at the depth of dist/core/, so a module's `../validators/`
// and findUp() land where they do from the unbundled build.
// Run on the compiled dist/: node dist/scripts/bundle.js
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../', import.meta.url));

/** Entry name (its file in dist/bundle/) → the module tsc compiled. */
const bundleEntries: Record<string, string> = {
  coord: 'cli/main.js',
  coordkit: 'entries/coordkit.js',
  plugin: 'entries/plugin.js',
  embed: 'entries/embed.js',
  adapter: 'entries/adapter.js',
  'load-test': 'plugins/load-test/public.js',
  conformance: 'conformance/index.js',
  'adapter-ioredis': 'adapters/ioredis.js',
  'adapter-node-redis': 'adapters/node-redis.js',
  'adapter-embedded': 'adapters/embedded.js',
  // loaded by URL beside the module that loads them (a worker thread, module hooks)
  'user-thread': 'plugins/load-test/users/user-thread.js',
  'typescript-hooks': 'core/typescript-hooks.js',
  'package-hooks': 'core/package-hooks.js',
};

const outdir = `${dist}bundle`;
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints: Object.fromEntries(Object.entries(bundleEntries).map(([name, file]) => [name, dist + file])),
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  chunkNames: 'chunk-[hash]',
  logLevel: 'warning',
  metafile: true,
});
console.log(`bundle: ${Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js')).length} files written to dist/bundle`);
