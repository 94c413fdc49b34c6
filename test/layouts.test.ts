// The documented Redis layouts ship in the package's own docs
// (docs/layouts/<plugin>.md, named after the systems), up to date with the
// contracts, and `coord schema` points there — never at a file users do not have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { layoutPages } from '../scripts/layout-pages.ts';
import { buildIfStale } from './support/build.ts';
import { coordSync, root } from './support/cli.ts';

t.before(() => buildIfStale());

t.test('each page is current with its contract (node scripts/layouts.mjs writes them)', async (t) => {
  const pages = await layoutPages();
  t.same(pages.map(([file]) => file), ['browser-grid', 'webdriver', 'load-test', 'obniz'].map((p) => `docs/layouts/${p}.md`));
  for (const [file, text] of pages) t.equal(readFileSync(join(root, file), 'utf8'), text, `${file} is current`);
  const systems = ['playwright-distributed', 'WebGrid', 'vikhry', 'obniz-app-sdk'];
  pages.forEach(([file, text], i) => t.match(text, new RegExp(`^# The ${systems[i]} Redis layout`), `${file} names ${systems[i]}`));
});

t.test('coord schema names the shipped page, in markdown and JSON', async (t) => {
  for (const plugin of ['browser-grid', 'webdriver', 'load-test', 'obniz']) {
    const md = coordSync(['schema', '--plugin', plugin]);
    t.equal(md.status, 0, md.stderr);
    t.match(md.stdout, `Documented layout: \`docs/layouts/${plugin}.md\` (in the coordkit package).`);
    t.notMatch(md.stdout, /shared\/seeds|\.\.\/shared|seed \d/, 'no path users do not have');
    const json = JSON.parse(coordSync(['schema', '--plugin', plugin, '--format', 'json']).stdout) as { contract: { source: string } };
    t.equal(json.contract.source, `docs/layouts/${plugin}.md`);
  }
});
