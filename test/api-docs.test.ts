// docs/api.md, the API reference, is written by scripts/api-docs.mjs from the
// package's entries and the doc comments of what they export. It must be what
// the generator writes now: a doc comment or an export that changed without
// `node scripts/api-docs.mjs` fails here. And every name has a description,
// and every function, class and value an entry exports shows its use in an
// @example.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
// @ts-expect-error: a plain script (scripts/api-docs.mjs), without type declarations
import { API_FILE, differences, readApi, renderApi, root } from '../scripts/api-docs.mjs';

interface Item {
  name: string;
  kind: string;
  value: boolean;
  external: boolean;
  doc: string;
  examples: string[];
}
interface Entry {
  key: string;
  specifier: string;
  reexports: string[];
  groups: { title: string; names: Item[] }[];
}

const api = readApi() as { name: string; entries: Entry[] };
const items = api.entries.flatMap((entry) => entry.groups.flatMap((g) => g.names.map((item) => ({ entry: entry.specifier, ...item }))));

t.test(`${API_FILE} is what scripts/api-docs.mjs writes from the sources`, async (t) => {
  const found = readFileSync(join(root, API_FILE), 'utf8');
  const wanted = renderApi(api) as string;
  t.same(found === wanted ? [] : differences(found, wanted), [], `${API_FILE} is up to date (else: node scripts/api-docs.mjs)`);
});

t.test('every entry is there, and the plugin kit once, under coordkit/plugin', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string> };
  t.same(
    api.entries.map((e) => e.key),
    Object.keys(pkg.exports).filter((key) => key !== './package.json'),
    'a section per entry of the export map, in its order',
  );
  const main = api.entries.find((e) => e.key === '.')!;
  t.same(main.reexports, ['coordkit/plugin'], "'coordkit' says it re-exports the kit");
  const kit = api.entries.find((e) => e.key === './plugin')!.groups.flatMap((g) => g.names.map((i) => i.name));
  const own = main.groups.flatMap((g) => g.names.map((i) => i.name));
  t.same(own.filter((n) => kit.includes(n)), [], "no kit name is documented again under 'coordkit'");
  t.ok(items.length >= 100, `${items.length} names`);
});

t.test('every function, class and value exported has an @example', async (t) => {
  const values = items.filter((i) => i.value);
  t.ok(values.length >= 60, `${values.length} value exports`);
  const missing = values.filter((i) => !i.examples.some((e) => e.trim())).map((i) => `${i.entry}: ${i.name} (${i.kind})`);
  t.same(missing, [], 'add an @example to the doc comment of each of these');
});

t.test('every exported name has a description', async (t) => {
  const missing = items.filter((i) => !i.doc && !i.external).map((i) => `${i.entry}: ${i.name} (${i.kind})`);
  t.same(missing, [], 'add a doc comment to each of these');
});

t.test('the names issue 31 found undocumented are documented, each with an example', async (t) => {
  for (const name of ['keyBuilders', 'scriptTypesSource', 'silentLogger', 'systemClock', 'mask', 'formatDeviations', 'pluginConfig']) {
    const item = items.find((i) => i.name === name);
    t.ok(item?.doc && item.examples.length, name);
  }
});
