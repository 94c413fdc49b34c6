// The built-in plugins are plugins like any other: their code imports coord
// only through the plugin kit (entries/plugin.ts, 'coordkit/plugin'), never a
// private module under core/, adapters/ or cli/, nor another plugin's files,
// not even a type. What they can do, a plugin written from docs/plugins.md can.
import t from 'tap';
// @ts-expect-error: a plain script (scripts/import-graph.mjs), without type declarations
import { importGraph } from '../scripts/import-graph.mjs';

const KIT = 'entries/plugin.ts';

/** The edges from a plugin's file to a part of coord that is neither the kit nor the plugin's own folder. */
function forbidden(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, imports]) => {
    const own = file.split('/').slice(0, 2).join('/') + '/'; // plugins/<name>/
    const local = imports.filter((i) => /^(core|adapters|cli|entries|conformance|plugins|scripts)\//.test(i));
    return local.filter((i) => i !== KIT && !i.startsWith(own)).map((i) => `${file} → ${i}`);
  });
}

t.test('the walk sees the plugins and what they import', async (t) => {
  const graph = importGraph('plugins') as Map<string, string[]>;
  t.ok(graph.size >= 100, `walked ${graph.size} modules`);
  t.ok([...graph.values()].some((imports) => imports.includes(KIT)), 'plugins import the kit');
  t.same(
    forbidden(new Map([['plugins/x/a.ts', ['plugins/x/b.ts', KIT, 'core/contract.ts', 'adapters/index.ts', 'plugins/y/c.ts', 'entries/embed.ts', 'ws']]])),
    ['plugins/x/a.ts → core/contract.ts', 'plugins/x/a.ts → adapters/index.ts', 'plugins/x/a.ts → plugins/y/c.ts', 'plugins/x/a.ts → entries/embed.ts'],
    'an edge past the kit is caught',
  );
});

t.test('each built-in plugin imports coord only through the plugin kit', async (t) => {
  const graph = importGraph('plugins') as Map<string, string[]>;
  // plugins/index.ts is the list of built-in plugins, not a plugin.
  graph.delete('plugins/index.ts');
  t.same(forbidden(graph), [], 'no edge from a plugin to private coord code');
});
