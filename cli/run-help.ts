// What `coord run --help` says about the plugins' own options, which are config
// keys (--set PLUGIN.KEY=VALUE, an environment name, or a key in --config)
// rather than flags: each built-in plugin's keys in a line or two, and with
// --plugin P (`coord run --plugin browser-grid --help`) each key of P with its
// default, environment name and what it does.
import type { JsonSchema } from '../core/contract.ts';
import type { Plugin } from '../core/plugin.ts';

export interface HelpSection {
  title?: string;
  body: string;
}

interface Key {
  path: string;
  schema: JsonSchema;
}

/** The sections to add to `coord run --help`: full for the plugins named with --plugin, else a summary of every plugin. */
export function pluginOptionSections(plugins: readonly Plugin[], named: readonly string[]): HelpSection[] {
  const chosen = plugins.filter((p) => named.includes(p.name));
  if (chosen.length) return chosen.map((p) => ({ title: `Options of plugin ${p.name} (--set ${p.name}.KEY=VALUE, the environment name, or plugins.${p.name}.KEY in --config)`, body: details(p) }));
  const width = Math.max(...plugins.map((p) => p.name.length));
  const body = plugins.map((p) => wrap(`  ${p.name.padEnd(width)}  `, keys(p).map((k) => k.path).join(', '))).join('\n');
  return [{ title: 'Options of each plugin (--set PLUGIN.KEY=VALUE; coord run --plugin PLUGIN --help says what each does)', body }];
}

/** Every leaf key of a plugin's config schema (an object with properties is a group, not a key). */
function keys(plugin: Plugin): Key[] {
  const found: Key[] = [];
  const visit = (schema: JsonSchema, path: string) => {
    const properties = schema.properties as Record<string, JsonSchema> | undefined;
    if (schema.type === 'object' && properties && Object.keys(properties).length) {
      for (const [name, child] of Object.entries(properties)) visit(child, path ? `${path}.${name}` : name);
    } else if (path) found.push({ path, schema });
  };
  visit(plugin.config.schema, '');
  return found;
}

function details(plugin: Plugin): string {
  const env = Object.fromEntries(Object.entries(plugin.config.env ?? {}).map(([name, path]) => [path, name]));
  const rows = keys(plugin).map(({ path, schema }) => {
    const notes = [schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : '', env[path] ? `env ${env[path]}` : ''].filter(Boolean).join(', ');
    const description = typeof schema.description === 'string' ? firstSentence(schema.description) : '';
    return { path, text: [description, notes && `(${notes})`].filter(Boolean).join(' ') };
  });
  const width = Math.min(30, Math.max(...rows.map((r) => r.path.length)));
  return rows.map((r) => `  ${r.path.padEnd(width)}  ${r.text}`).join('\n');
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

/** `words` after `lead`, wrapped at 100 columns under the first word. */
function wrap(lead: string, words: string): string {
  const lines: string[] = [];
  let line = lead;
  for (const word of words.split(' ')) {
    if (line.length + word.length > 100 && line.trim()) {
      lines.push(line.trimEnd());
      line = ' '.repeat(lead.length);
    }
    line += `${word} `;
  }
  lines.push(line.trimEnd());
  return lines.join('\n');
}
