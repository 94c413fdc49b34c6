// coordkit's main entry: `import { … } from 'coordkit'`. The plugin object and
// what its roles get (context, contract, backend, logger, clock, scripts), the
// errors coord throws (each with a stable code), and the calls that check,
// configure and start plugins. Every public name is exported from exactly one
// entry — but this one re-exports 'coordkit/plugin', the plugin kit — and
// test/exports.test.ts holds the lists. Other entries: 'coordkit/plugin'
// (what a plugin's code imports; light), 'coordkit/embed'
// (more for applications that run coord in their own process),
// 'coordkit/adapter' (adapter authors), 'coordkit/load-test' (scenario
// authors), 'coordkit/conformance' (the suites), 'coordkit/adapters/<name>'
// (one backend's factory).

// Everything a plugin's code uses (the plugin kit, also its own light entry 'coordkit/plugin')
export * from './plugin.ts';

// Check, configure and start plugins (startProcess opens the backend the config names when none is given)
export { scriptTypesSource, writeScriptTypes } from '../core/script-types.ts';
export type { RegisteredPlugin } from '../core/runtime.ts';
export { registerPlugin } from '../core/runtime.ts';
export { startProcess } from './start-process.ts';
export type { ConfigInput, CoordConfig } from '../core/config.ts';
export { loadConfig } from '../core/config.ts';
export { createBackend } from '../adapters/index.ts';
