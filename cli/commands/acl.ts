// `coord acl --prefix '{grid}:' --plugin browser-grid [--plugin obniz] [--set obniz.keyPrefix='{obniz-devices}:'] [--user NAME] [--password-placeholder]`:
// prints one ACL SETUSER command for a Redis user limited to the deployment's
// keys, channels and the commands its plugins send (cli/redis-acl.ts), ready
// for `| redis-cli`. What else the operator must do goes to stderr.
import { UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import { list, text } from '../options.ts';
import { aclSetuser, newPassword, PLUGIN_ACLS } from '../redis-acl.ts';

const USER_NAME = /^[A-Za-z0-9_.-]+$/;

/** `argv`: the command line as typed, since the option parser turns `--prefix ''` into 0. */
export function aclCommand(options: Readonly<Record<string, unknown>>, io: Io, argv: readonly string[]): number {
  const known = Object.keys(PLUGIN_ACLS);
  const names = [...new Set(list(options.plugin))];
  if (!names.length) throw new UsageError(`acl needs --plugin NAME (repeatable): one of ${known.join(', ')}`, { code: 'COORD_ERR_CLI_NO_PLUGIN' });
  for (const name of names) {
    if (!known.includes(name)) throw new UsageError(`acl --plugin ${name}: unknown plugin; the ACL is known for ${known.join(', ')}`, { code: 'COORD_ERR_CLI_UNKNOWN_PLUGIN' });
  }
  const prefix = typedValue(argv, '--prefix') ?? '';
  const own = ownPrefixes(list(options.set), names);
  for (const name of names) {
    if (!(own.get(name) ?? prefix)) {
      throw new UsageError(`acl --prefix is empty: a user limited to the deployment's keys needs the key prefix they share, e.g. --prefix '{grid}:' (or --set ${name}.keyPrefix=…)`, { code: 'COORD_ERR_CLI_ACL_NO_PREFIX' });
    }
  }
  const user = text(options.user) ?? 'coord';
  if (!USER_NAME.test(user)) throw new UsageError(`acl --user ${JSON.stringify(user)}: expected letters, digits, _ . and -`, { code: 'COORD_ERR_CLI_OPTION_VALUE' });
  const password = options.passwordPlaceholder ? undefined : newPassword();
  io.out(aclSetuser({ user, password, plugins: names.map((name) => ({ name, keyPrefix: own.get(name) ?? prefix })) }));
  for (const name of names) {
    const note = PLUGIN_ACLS[name]!.note;
    if (note) io.err(`note: ${note}`);
  }
  return 0;
}

/** `--set <plugin>.keyPrefix=PREFIX` (repeatable): a plugin's own prefix, as `coord run` takes it. */
function ownPrefixes(sets: readonly string[], names: readonly string[]): Map<string, string> {
  const prefixes = new Map<string, string>();
  for (const set of sets) {
    const m = /^([^.=]+)\.keyPrefix=(.+)$/.exec(set);
    if (!m || !names.includes(m[1]!)) throw new UsageError(`acl --set ${set}: expected <plugin>.keyPrefix=PREFIX for a plugin named with --plugin (${names.join(', ')})`, { code: 'COORD_ERR_CLI_OPTION_VALUE' });
    prefixes.set(m[1]!, m[2]!);
  }
  return prefixes;
}

/** The text after the last `--name VALUE` or `--name=VALUE` as typed; undefined when absent or followed by another option. */
function typedValue(argv: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  argv.forEach((arg, i) => {
    if (arg === name) value = argv[i + 1]?.startsWith('--') ? undefined : argv[i + 1];
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
  });
  return value;
}
