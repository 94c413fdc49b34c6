// The pages of docs/layouts/ (see layouts.mjs): one per built-in plugin.
import { contractMarkdown } from '../core/contract-doc.ts';
import { builtinPlugins } from '../plugins/index.ts';

/** The system whose documented Redis layout each built-in plugin implements. */
const SYSTEMS: Record<string, { system: string; what: string }> = {
  'browser-grid': { system: 'playwright-distributed', what: "a Playwright browser grid: its worker registry, counters, shutdown commands and the selector and reaper scripts' keys" },
  webdriver: { system: 'WebGrid', what: 'a W3C WebDriver session grid: sessions, orchestrators, slots, queues, the session log and metrics' },
  'load-test': { system: 'vikhry', what: 'a distributed load-testing tool: test lifecycle and epoch, commands, users, resources and metrics' },
  obniz: { system: 'obniz-app-sdk', what: 'device workers spread over slave processes: sync, heartbeats, assignment and relocation' },
};

/** [path relative to the package, text] for each built-in plugin. */
export async function layoutPages(): Promise<[string, string][]> {
  const pages: [string, string][] = [];
  for (const [name, load] of Object.entries(builtinPlugins)) {
    const { system, what } = SYSTEMS[name]!;
    const plugin = await load();
    const reference = contractMarkdown({ ...plugin.contract, source: undefined })
      .replace(/^# Keyspace of plugin .*\n\n(Documented layout: .*\n\n)?/, '')
      .replace(/^#/gm, '##');
    const head = [
      `# The ${system} Redis layout (plugin \`${name}\`)`,
      '',
      `The plugin \`${name}\` keeps the Redis layout ${system} documents for ${what}, so its`,
      `processes and ${system}'s own can share one Redis. Below: every key of that layout under its`,
      "documented name, and coord's additions (marked as extensions), as the plugin's contract declares",
      `them and the conformance suite checks them. \`coord schema --plugin ${name}\` prints the same.`,
      '',
      '',
    ].join('\n');
    pages.push([`docs/layouts/${name}.md`, head + reference]);
  }
  return pages;
}
