// A Node module hook (module.register) that gives every module coord loads —
// a plugin, a worker, a scenario, wherever it lives — the running coord when
// it imports coord's package by name ('coordkit', 'coordkit/load-test', …):
// the specifier resolves as coord's own package would import itself, so a
// freshly made plugin runs with no install step, and a plugin that has its own
// copy installed still talks to the coord that loads it (one registry, one
// set of classes). Registered by typescript-modules.ts; Deno maps the same
// names in deno.json's import map.
import type { InitializeHook, ResolveHook } from 'node:module';

interface Data {
  /** coord's package name, from its package.json. */
  name: string;
  /** A file inside coord's package (its package.json), as a URL: names resolve from there. */
  parentURL: string;
}

let own: Data | undefined;

export const initialize: InitializeHook<Data> = (data) => {
  own = data;
};

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if (own && (specifier === own.name || specifier.startsWith(`${own.name}/`))) return nextResolve(specifier, { ...context, parentURL: own.parentURL });
  return nextResolve(specifier, context);
};
