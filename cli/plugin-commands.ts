// Registers plugins' own commands (PluginCommand) with cac. A command named
// with several words ('grid status') is registered under its first word and
// dispatched on the rest, since cac matches one word.
import type { CAC } from 'cac';
import { didYouMean } from '../core/did-you-mean.ts';
import type { Plugin, PluginCommand } from '../core/plugin.ts';
import { UsageError } from './errors.ts';
import type { Io } from './io.ts';
import { withConfigOptions } from './options.ts';

interface Entry {
  plugin: Plugin;
  command: PluginCommand;
  words: string[];
}

/** The help of a command word plugins added (`coord grid --help`): each of its commands with its own flags, then the deployment flags they share. */
export type PluginHelp = (word: string | undefined) => { title?: string; body: string }[] | undefined;

export function addPluginCommands(cli: CAC, plugins: readonly Plugin[], reserved: readonly string[], io: Io): PluginHelp {
  const helps = new Map<string, { title?: string; body: string }[]>();
  const byWord = new Map<string, Entry[]>();
  for (const plugin of plugins) {
    for (const command of plugin.commands ?? []) {
      const words = command.name.trim().split(/\s+/);
      if (reserved.includes(words[0]!)) continue; // a core command keeps its name
      const entries = byWord.get(words[0]!) ?? [];
      if (entries.some((e) => e.words.join(' ') === words.join(' '))) continue; // first plugin wins
      entries.push({ plugin, command, words });
      byWord.set(words[0]!, entries);
    }
  }
  for (const [word, entries] of byWord) {
    const nested = entries.some((e) => e.words.length > 1);
    const description = nested
      ? entries.map((e) => `${e.words.slice(1).join(' ') || word}: ${e.command.description}`).join('; ')
      : entries[0]!.command.description;
    const cmd = cli.command(nested ? `${word} [...words]` : word, `${description} (plugin ${entries[0]!.plugin.name})`);
    const seen = new Set<string>();
    for (const { command } of entries) {
      for (const o of command.options ?? []) {
        if (seen.has(o.flags)) continue;
        seen.add(o.flags);
        cmd.option(o.flags, o.description, o.default === undefined ? undefined : { default: o.default });
      }
    }
    cmd.option('--plugin <path>', 'Plugin module that adds this command, when it is not built in', { type: [String] });
    withConfigOptions(cmd);
    helps.set(word, helpSections(word, entries, cmd.options.filter((o) => !seen.has(o.rawName))));
    cmd.action(async (...params: unknown[]) => {
      const options = params.at(-1) as Record<string, unknown>;
      const words = nested ? [word, ...((params[0] as string[] | undefined) ?? [])] : [word];
      const entry = match(entries, words);
      if (!entry) {
        const names = entries.map((e) => e.words.join(' '));
        const close = didYouMean(words.slice(0, 2).join(' '), names);
        throw new UsageError(`unknown command "${words.join(' ')}"${close ? `: did you mean "${close}"?` : ''} (have: ${names.join(', ')})`, { code: 'COORD_ERR_CLI_UNKNOWN_COMMAND' });
      }
      // The tools (config, backend, logger) are imported when a command runs: `coord --help` needs none of them.
      const { commandTools } = await import('./command-tools.ts');
      const code = await entry.command.run(options, words.slice(entry.words.length), commandTools(entry.plugin, options, io, entry.command.name));
      return typeof code === 'number' ? code : 0;
    });
  }
  return (word) => (word === undefined ? undefined : helps.get(word));
}

function helpSections(word: string, entries: readonly Entry[], shared: readonly { rawName: string; description: string }[]): { title?: string; body: string }[] {
  const rows = (list: readonly { flags: string; description: string }[], indent: string) => {
    const width = Math.max(...list.map((o) => o.flags.length));
    return list.map((o) => `${indent}${o.flags.padEnd(width)}  ${o.description}`).join('\n');
  };
  const commands = entries.map(({ plugin, command }) => {
    const own = command.options?.length ? `\n${rows(command.options, '      ')}` : '';
    return `  $ coord ${command.name}\n      ${command.description} (plugin ${plugin.name})${own}`;
  });
  return [
    { title: 'Commands', body: commands.join('\n\n') },
    { title: `Options of every ${word} command`, body: rows([...shared.map((o) => ({ flags: o.rawName, description: o.description })), { flags: '-h, --help', description: 'Display this message' }], '  ') },
  ];
}

/** The entry whose words begin the typed words, the longest such. */
function match(entries: readonly Entry[], words: readonly string[]): Entry | undefined {
  return entries
    .filter((e) => e.words.every((w, i) => words[i] === w))
    .sort((a, b) => b.words.length - a.words.length)[0];
}
