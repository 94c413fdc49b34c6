// `coord schema --plugin P [--format md|json]`: the plugin's keyspace
// reference (from its contract) and its config options.
import { contractJson, contractMarkdown, describeSchema } from '../../core/contract-doc.ts';
import type { JsonSchema } from '../../core/contract.ts';
import type { Plugin } from '../../core/plugin.ts';
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { loadPlugin } from '../load-plugin.ts';
import { text } from '../options.ts';

export async function schemaCommand(options: Readonly<Record<string, unknown>>, io: Io): Promise<number> {
  const spec = text(options.plugin);
  if (!spec) throw new UsageError('schema needs --plugin NAME (see coord plugins)', { code: 'COORD_ERR_CLI_NO_PLUGIN' });
  const format = text(options.format) ?? 'md';
  if (format !== 'md' && format !== 'json') throw new UsageError(`--format ${format}: expected md or json`, { code: 'COORD_ERR_CLI_OPTION_VALUE' });
  const plugin = await loadPlugin(spec);
  if (format === 'json') {
    const json = { plugin: plugin.name, version: plugin.version, contract: contractJson(plugin.contract), config: { schema: plugin.config.schema, env: plugin.config.env ?? {} } };
    io.out(JSON.stringify(json, null, 2));
  } else {
    io.out(`${contractMarkdown(plugin.contract).trimEnd()}\n\n${configMarkdown(plugin)}`);
  }
  return 0;
}

/** The plugin's config options as a markdown table (the section under plugins.<name> in a config file). */
function configMarkdown(plugin: Plugin): string {
  const properties = Object.entries((plugin.config.schema.properties ?? {}) as Record<string, JsonSchema>);
  const envOf = Object.fromEntries(Object.entries(plugin.config.env ?? {}).map(([env, path]) => [path, env]));
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    `## Config of plugin \`${plugin.name}\``,
    '',
    `Set under \`plugins.${plugin.name}\` in a config file, with \`--set ${plugin.name}.NAME=VALUE\`, or by the environment variable shown.`,
    '',
    '| option | accepts | environment |',
    '|---|---|---|',
    ...properties.map(([name, schema]) => `| \`${name}\` | ${cell(describeSchema(schema))} | ${envOf[name] ? `\`${envOf[name]}\`` : ''} |`),
    '',
  ].join('\n');
}
