// The coord command line (cac): core commands, plus the commands plugins add.
// Every error ends as one line on stderr and an exit code (see errors.ts).
// Commands are imported when run, so `coord --help` loads none of them, and
// `coord --version` loads no plugin: every import here is cheap.
import { cac } from 'cac';
import { didYouMean } from '../core/did-you-mean.ts';
import { environment, runtimeName } from '../core/platform.ts';
import type { Plugin } from '../core/plugin.ts';
import { coordVersion } from '../core/version.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { errorLine, exitCodeOf, UsageError } from './errors.ts';
import { processIo, type Io } from './io.ts';
import { addPluginCommands } from './plugin-commands.ts';
import { RUN_OPTIONS, withConfigOptions, withPluginFlags } from './options.ts';
import { pluginOptionSections } from './run-help.ts';

type Options = Readonly<Record<string, unknown>>;

const CORE_COMMANDS = ['run', 'plugins', 'schema', 'inspect', 'conformance', 'config', 'new', 'acl'];

/** Runs one command line (the arguments after `coord`); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    io.err(errorLine(err, environment().COORD_DEBUG === '1'));
    return exitCodeOf(err);
  }
}

async function dispatch(argv: readonly string[], io: Io): Promise<number> {
  const cli = cac('coord');
  const run = cli.command('run', 'Start roles of a plugin in this process until SIGINT/SIGTERM (no --role: all its default roles, standalone)');
  for (const o of RUN_OPTIONS) run.option(o.flags, o.description, { type: [String] });
  withConfigOptions(run).action(async (o: Options) => (await import('./commands/run.ts')).runCommand(o, io));

  cli
    .command('plugins', 'List the plugins: name, version, description, roles')
    .option('--plugin <path>', 'Also list this plugin module (repeatable)', { type: [String] })
    .action(async (o: Options) => (await import('./commands/plugins.ts')).pluginsCommand(o, io));

  cli
    .command('schema', "Print a plugin's keyspace reference and config options")
    .option('--plugin <name>', 'Plugin: a built-in name or a module path')
    .option('--format <format>', 'md or json', { default: 'md' })
    .action(async (o: Options) => (await import('./commands/schema.ts')).schemaCommand(o, io));

  cli.command('inspect', "Check a running deployment's keyspace against a plugin's contract").option('--plugin <name>', 'Plugin: a built-in name or a module path');
  withConfigOptions(last(cli)).action(async (o: Options) => (await import('./commands/inspect.ts')).inspectCommand(o, io));

  cli
    .command('conformance', 'Run the conformance suites: adapter semantics and plugin contracts')
    .option('--adapter <name>', 'Adapter to test (repeatable; default: embedded, and all of them with --redis)', { type: [String] })
    .option('--plugin <name>', 'Plugin whose contract to test (repeatable; default: the built-in ones)', { type: [String] });
  withConfigOptions(last(cli)).action(async (o: Options) => (await import('./commands/conformance.ts')).conformanceCommand(o, io));

  cli
    .command('config', 'Print the effective config (--dump), check a config file (--check FILE) or print its JSON Schema (--schema)')
    .option('--dump', 'Print the effective config as YAML (password masked)')
    .option('--check <file>', 'Check a config file and exit')
    .option('--schema', 'Print the JSON Schema of a config file, for editors')
    .option('--plugin <name>', 'Plugin whose section to include (repeatable; default: the built-in ones)', { type: [String] });
  withConfigOptions(last(cli)).action(async (o: Options) => (await import('./commands/config.ts')).configCommand(o, io));

  cli
    .command('new <what> <name>', 'Make a plugin folder from the template: coord new plugin NAME (passes its own tests as made)')
    .option('--dir <folder>', 'Where to make it (default: ./NAME)')
    .option('--coord <spec>', "The plugin's dev dependency on coordkit: a version range, a tarball or a folder (default: this coord's package folder)")
    .action(async (what: string, name: string, o: Options) => (await import('./commands/new.ts')).newCommand(what, name, o, io));

  cli
    .command('acl', "Print an ACL SETUSER command for a Redis user limited to a deployment's keys, channels and the commands its plugins send")
    .option('--plugin <name>', 'Plugin the user runs (repeatable)', { type: [String] })
    .option('--prefix <keyPrefix>', "Key prefix of the deployment, e.g. '{grid}:'", { type: [String] })
    .option('--set <plugin.keyPrefix=prefix>', "A plugin's own key prefix, when it is not --prefix (repeatable)", { type: [String] })
    .option('--user <name>', 'User name (default: coord)')
    .option('--password-placeholder', 'Write >PASSWORD instead of a new random password')
    .action(async (o: Options) => (await import('./commands/acl.ts')).aclCommand(o, io, argv));

  const first = argv.find((a) => !a.startsWith('-'));
  const versionOnly = first === undefined && argv.some((a) => a === '-v' || a === '--version');
  const runPlugins = first === 'run' ? await commandPlugins(argv) : [];
  withPluginFlags(run, runPlugins);
  const pluginHelp = !versionOnly && (first === undefined || !CORE_COMMANDS.includes(first)) ? addPluginCommands(cli, await commandPlugins(argv, first), CORE_COMMANDS, io) : undefined;

  cli.option('-v, --version', 'Show the version');
  cli.globalCommand.versionNumber = coordVersion; // shown atop --help
  // A plugin's command word lists its commands, each with its own flags, instead of cac's one merged list.
  cli.help((sections) => {
    if (cli.matchedCommand === run) return [...sections, ...pluginOptionSections(runPlugins, namedInRun(argv, runPlugins))];
    const own = pluginHelp?.(cli.matchedCommand?.name);
    return own ? [sections[0]!, { title: 'Usage', body: `  $ coord ${cli.matchedCommand!.name} <command> [options]` }, ...own] : sections;
  });

  const parsed = cli.parse(['coord', 'coord', ...argv], { run: false });
  if (parsed.options.help) return 0; // cac has printed the help
  if (parsed.options.version) {
    io.out(`coord ${coordVersion} (${runtimeName()})`);
    return 0;
  }
  if (!cli.matchedCommand) {
    cli.globalCommand.checkUnknownOptions();
    const word = parsed.args[0];
    if (word === undefined) {
      cli.outputHelp();
      return 0;
    }
    const close = didYouMean(word, cli.commands.map((c) => c.name));
    throw new UsageError(`unknown command "${word}"${close ? `: did you mean "${close}"?` : ''} (see coord --help)`, { code: 'COORD_ERR_CLI_UNKNOWN_COMMAND' });
  }
  const code: unknown = await cli.runMatchedCommand();
  return typeof code === 'number' ? code : 0;
}

function last(cli: ReturnType<typeof cac>) {
  return cli.commands.at(-1)!;
}

/**
 * The built-in plugins: all of them, but for a plugin's command word (`coord
 * grid status`) only those up to the first that has it — the others' entry
 * modules need not load (built-in plugins do not share a command word).
 */
async function builtins(word: string | undefined): Promise<Plugin[]> {
  const loads = Object.values(builtinPlugins);
  if (word === undefined) return Promise.all(loads.map((load) => load()));
  const plugins: Plugin[] = [];
  for (const load of loads) {
    const plugin = await load();
    plugins.push(plugin);
    if (plugin.commands?.some((c) => c.name.trim().split(/\s+/)[0] === word)) return plugins;
  }
  return plugins;
}

/** The names of the plugins `coord run --help` describes in full: built-in ones named with --plugin, and those loaded from a path or package. */
function namedInRun(argv: readonly string[], plugins: readonly Plugin[]): string[] {
  const builtin = Object.keys(builtinPlugins);
  const named = flagValues(argv, '--plugin').filter((spec) => builtin.includes(spec));
  return [...named, ...plugins.map((p) => p.name).filter((name) => !builtin.includes(name))];
}

function flagValues(argv: readonly string[], name: string): string[] {
  return argv.flatMap((a, i) => (a === name ? [argv[i + 1] ?? ''] : a.startsWith(`${name}=`) ? [a.slice(name.length + 1)] : []));
}

/**
 * The plugins whose commands and run flags to offer: the built-in ones, any named with
 * --plugin (a path or a package) and the modules of the --config file. One
 * that fails to load offers none (its error shows when it is used). The
 * built-in ones are not checked here (registerPlugin, with its schema compile
 * and Lua parse, runs when one is used): that keeps `coord --help` fast.
 */
async function commandPlugins(argv: readonly string[], word?: string): Promise<Plugin[]> {
  const flag = (name: string) => flagValues(argv, name);
  const named = flag('--plugin').filter((spec) => spec && !Object.hasOwn(builtinPlugins, spec));
  const configs = flag('--config');
  const { namedPlugins } = configs.length ? await import('./deployment.ts') : { namedPlugins: () => [] };
  const modules = configs.flatMap((file) => namedPlugins(file).filter((n) => n.spec !== n.name).map((n) => n.spec));
  const plugins = await builtins(word);
  if (named.length || modules.length) {
    const { loadPlugin } = await import('./load-plugin.ts');
    for (const spec of [...named, ...modules]) {
      try {
        plugins.push(await loadPlugin(spec));
      } catch {
        // listed by `coord plugins` with its error
      }
    }
  }
  return plugins;
}
