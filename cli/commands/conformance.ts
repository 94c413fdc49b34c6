// `coord conformance [--adapter A]… [--plugin P]… [--redis URL]`: runs the
// shared suites (adapter semantics, plugin contracts) in this process on
// coord's own runner (conformance/suite-run.ts: node:assert, nothing to
// install) and prints one row per section.
import { adapterNames, backendOptions, createBackend } from '../../adapters/index.ts';
import { type CoordConfig, loadConfig } from '../../core/config.ts';
import { pluginKeyPrefix } from '../../core/key-prefix.ts';
import { environment } from '../../core/platform.ts';
import type { Plugin } from '../../core/plugin.ts';
import { adapterSuite } from '../../conformance/adapter-suite.ts';
import { contractSuite } from '../../conformance/contract-suite.ts';
import { type SectionOutcome, SuiteRun } from '../../conformance/suite-run.ts';
import type { SuiteTest } from '../../conformance/suite-test.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugins } from '../load-plugin.ts';
import { configFlags, list, text } from '../options.ts';

interface Suite {
  name: string;
  run(t: SuiteTest): Promise<void>;
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
    if (!(adapterNames as readonly string[]).includes(adapter)) throw new UsageError(`unknown adapter "${adapter}": expected one of ${adapterNames.join(', ')}`, { code: 'COORD_ERR_CLI_OPTION_VALUE' });
    if (adapter !== 'embedded' && !url) throw new UsageError(`adapter ${adapter} needs --redis URL (a Redis the suites may write to, under their own key prefix)`, { code: 'COORD_ERR_CLI_NO_REDIS' });
  }

  const make = (adapter: string) => () =>
    createBackend(adapter === 'embedded' ? { adapter } : { ...backendOptions(config.redis), adapter, clientName: 'coord-conformance' });
  const suites: Suite[] = [
    ...adapters.map((adapter) => ({ name: `adapter ${adapter}`, run: (t: SuiteTest) => adapterSuite(t, { name: adapter, make: make(adapter) }) })),
    ...plugins.flatMap((plugin) =>
      adapters.map((adapter) => ({
        name: `contract ${plugin.name} on ${adapter}`,
        run: (t: SuiteTest) => contractSuite(t, { plugin, name: adapter, make: make(adapter), ...pluginSection(config, plugin.name) }),
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
  const rows: Row[] = [];
  for (const suite of suites) {
    const sections: string[] = [];
    // Sections are named '<adapter>: <section>' or '<plugin> on <adapter>: <scenario>'; the suite column says that already.
    const root = new SuiteRun(suite.name, (section) => {
      sections.push(section.name);
      rows.push(rowOf(suite.name, section.name.replace(/^[^:]+: /, ''), section));
    });
    try {
      await suite.run(root);
    } catch (err) {
      root.fail(`the suite threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    }
    // A suite that failed outside its sections (it threw, or could not connect) gets a row of its own.
    const own = root.outcome.failures.filter((f) => !sections.some((name) => f.startsWith(`${name} › `)));
    if (own.length) rows.push({ suite: suite.name, section: '(suite)', pass: 0, fail: own.length, skip: 0, failures: own });
  }
  return rows;
}

function rowOf(suite: string, section: string, outcome: SectionOutcome): Row {
  return { suite, section, pass: outcome.pass, fail: outcome.fail, skip: outcome.skip, failures: outcome.failures };
}

function table(rows: readonly Row[]): string {
  const head = ['suite', 'section', 'pass', 'fail', 'skip'];
  const cells = [head, ...rows.map((r) => [r.suite, r.section, String(r.pass), String(r.fail), String(r.skip)])];
  const widths = head.map((_h, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells.map((c) => c.map((v, i) => (i >= 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

/** A plugin's prefix (its own keyPrefix, else redis.keyPrefix) and its section without it, which its own schema does not know. */
function pluginSection(config: Readonly<CoordConfig>, name: string): { keyPrefix: string; config: Record<string, unknown> } {
  const { keyPrefix: _own, ...section } = config.plugins[name] ?? {};
  return { keyPrefix: pluginKeyPrefix(config, name).prefix, config: section };
}
