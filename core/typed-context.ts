// A plugin's role context with its own script and channel types: declared once
// per plugin (its context.ts) from its config, contract and generated
// scripts.gen.ts. The same object the runtime gives every role; only the types
// are narrower, so `ctx.scripts.run('touchWorker', …)` and
// `ctx.channels.capacity({ browserType })` are checked against the Lua headers
// and the contract.
import type { ChannelBuilders, ChannelSpec, ContractSpec, KeySpec } from './contract.ts';
import type { RoleContext } from './plugin.ts';
import type { ScriptShape, TypedScripts } from './scripts.ts';

/**
 * A plugin's role context with its own types: the config `C`, the keys of the
 * contract `Spec`, its channels, and its scripts as scripts.gen.ts declares
 * them (`S`), so `ctx.scripts.run('claimTick', …)` and `ctx.channels.fired(…)`
 * are checked against the Lua headers and the contract. The same object the
 * runtime gives every role; declare it once per plugin (its context.ts).
 *
 * @example
 * import type { TypedContext } from 'coordkit/plugin';
 * import type { CronConfig } from './config.ts';
 * import type { contract } from './contract.ts';
 * import type { CronScripts } from './scripts.gen.ts';
 *
 * export type CronContext = TypedContext<CronConfig, typeof contract, CronScripts>;
 */
export type TypedContext<
  C,
  Spec extends ContractSpec<Record<string, KeySpec>, Readonly<Record<string, ChannelSpec>>>,
  S extends { [N in keyof S]: ScriptShape },
> = Omit<RoleContext<C, Spec['keys']>, 'scripts' | 'channels'> & {
  readonly scripts: TypedScripts<S>;
  readonly channels: ChannelBuilders<NonNullable<Spec['channels']>>;
};
