// `coord conformance [--adapter A]… [--plugin P]… [--redis URL]`: runs the
// shared suites (adapter semantics, plugin contracts) in this process through
// tap's Test class and prints one row per section. Needs tap (a dev
// dependency of whoever runs it) and Node: tap does not run under Deno.
import type { Test, TestOpts } from 'tap';
import { adapterNames, createBackend } from '../../adapters/index.ts';
import { loadConfig } from '../../core/config.ts';
import { environment, tapRunsHere } from '../../core/platform.ts';
import type { Plugin } from '../../core/plugin.ts';
import { adapterSuite } from '../../conformance/adapter-suite.ts';
import { contractSuite } from '../../conformance/contract-suite.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugins } from '../load-plugin.ts';
import { configFlags, list, text } from '../options.ts';

interface Suite {
  name: string;
  run(t: Test): Promise<void>;
}

interface Row {
  suite: string;
  section: string;
  pass: number;
  fail: number;
  skip: number;
  failures: string[];
}

export async function conformanceCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  if (!tapRunsHere()) throw new UsageError('conformance runs on Node only (tap does not run under Deno): use npx coord conformance');
  const plugins: Plugin[] = await loadPlugins(list(options.plugin).length ? list(options.plugin) : Object.keys(builtinPlugins));
  const config = loadConfig({
    plugins,
    knownPlugins: Object.keys(builtinPlugins),
    file: text(options.config),
    env: environment(),
    flags: configFlags({ ...options, adapter: undefined }),
    adapters: adapterNames,
  });
  const url = config.redis.url;
  const adapters = list(options.adapter).length ? list(options.adapter) : url ? [...adapterNames] : ['embedded'];
  for (const adapter of adapters) {
    if (!(adapterNames as readonly string[]).includes(adapter)) throw new UsageError(`unknown adapter "${adapter}": expected one of ${adapterNames.join(', ')}`);
    if (adapter !== 'embedded' && !url) throw new UsageError(`adapter ${adapter} needs --redis URL (a Redis the suites may write to, under their own key prefix)`);
  }

  const make = (adapter: string) => () => createBackend({ adapter, url: adapter === 'embedded' ? undefined : url, clientName: 'coord-conformance' });
  const suites: Suite[] = [
    ...adapters.map((adapter) => ({ name: `adapter ${adapter}`, run: (t: Test) => adapterSuite(t, { name: adapter, make: make(adapter) }) })),
    ...plugins.flatMap((plugin) =>
      adapters.map((adapter) => ({
        name: `contract ${plugin.name} on ${adapter}`,
        run: (t: Test) => contractSuite(t, { plugin, name: adapter, make: make(adapter), keyPrefix: config.redis.keyPrefix, config: config.plugins[plugin.name] }),
      })),
    ),
  ];
  const rows = await runSuites(suites);
  io.out(table(rows));
  const failures = rows.flatMap((r) => r.failures.map((f) => `FAIL ${r.suite} › ${r.section} › ${f}`));
  if (failures.length) io.out(['', ...failures].join('\n'));
  const failed = rows.filter((r) => r.fail > 0).length;
  io.out(`\n${rows.length} sections, ${failed} failed`);
  return failed ? 1 : 0;
}

async function runSuites(suites: readonly Suite[]): Promise<Row[]> {
  const { Test, t: tapRoot } = await import('tap').catch((err: { code?: string }) => {
    if (err.code === 'ERR_MODULE_NOT_FOUND') throw new UsageError('conformance needs the tap package: npm install --save-dev tap');
    throw err;
  });
  // Importing tap makes its root test, which times the whole process out after
  // 30 s; the suites here run on their own root and may take longer on a real Redis.
  tapRoot.setTimeout(0);
  const root = new Test({ name: 'coord conformance' } as TestOpts);
  root.on('data', () => {}); // the TAP text is not shown: the table is
  const rows: Row[] = [];
  for (const suite of suites) {
    await root.test(suite.name, async (t) => {
      let sectionFails = 0;
      t.on('subtestEnd', (section) => {
        // Sections are named '<adapter>: <section>' or '<plugin> on <adapter>: <scenario>'; the suite column says that already.
        const row = rowOf(suite.name, section.name.replace(/^[^:]+: /, ''), section);
        if (row.fail) sectionFails += 1;
        rows.push(row);
      });
      try {
        await suite.run(t);
      } finally {
        // A suite that failed outside its sections (it threw, or could not connect) gets a row of its own.
        if (t.counts.fail > sectionFails) {
          const own = rowOf(suite.name, '(suite)', t);
          rows.push({ ...own, failures: own.failures.slice(sectionFails) });
        }
      }
    });
  }
  root.end();
  return rows;
}

function rowOf(suite: string, section: string, t: { counts: { pass: number; fail: number; skip: number }; lists: { fail: { name: string }[] } }): Row {
  return { suite, section, pass: t.counts.pass, fail: t.counts.fail, skip: t.counts.skip, failures: t.lists.fail.map((r) => r.name) };
}

function table(rows: readonly Row[]): string {
  const head = ['suite', 'section', 'pass', 'fail', 'skip'];
  const cells = [head, ...rows.map((r) => [r.suite, r.section, String(r.pass), String(r.fail), String(r.skip)])];
  const widths = head.map((_h, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((v, i) => (i >= 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}
