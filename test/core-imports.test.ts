// Core stands alone: no module under core/ imports an adapter, the CLI, a
// plugin or a package entry (entries/ wires core to the adapters), not even a
// type, not even lazily. The caller hands startProcess a backend.
import t from 'tap';
// @ts-expect-error: a plain script (scripts/import-graph.mjs), without type declarations
import { importGraph } from '../scripts/import-graph.mjs';

const OUTSIDE = /^(adapters|cli|plugins|entries)\//;

/** The edges of a graph that leave core for a folder it must not reach. */
function forbidden(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, imports]) => imports.filter((i) => OUTSIDE.test(i)).map((i) => `${file} → ${i}`));
}

t.test('the walk sees every kind of import', async (t) => {
  const graph = importGraph('core') as Map<string, string[]>;
  t.ok(graph.size >= 20, `walked ${graph.size} modules`);
  t.ok(graph.get('core/runtime.ts')?.includes('core/config.ts'), 'a static import, by path from the root');
  t.ok(graph.get('core/plugin.ts')?.includes('core/runtime.ts'), 'a type-only import');
  t.ok(graph.get('core/di.ts')?.includes('tsyringe'), 'a package, by name');
  t.same(
    forbidden(new Map([['core/x.ts', ['core/y.ts', 'adapters/index.ts', 'cli/app.ts', 'plugins/index.ts', 'entries/embed.ts', 'semver']]])),
    ['core/x.ts → adapters/index.ts', 'core/x.ts → cli/app.ts', 'core/x.ts → plugins/index.ts', 'core/x.ts → entries/embed.ts'],
    'an edge out of core is caught',
  );
});

t.test('no module under core/ imports adapters/, cli/, plugins/ or entries/', async (t) => {
  t.same(forbidden(importGraph('core') as Map<string, string[]>), [], 'no edge out of core');
});
