// load-test: distributed load tests with virtual users, coordinated through
// Redis (vikhry's execution model). A scenario module defines the users'
// steps; `coord load run` runs a test in one command, or an orchestrator and
// any number of workers run as `coord run --plugin load-test [--role …]`.
import { findUp, type Plugin } from '../../entries/plugin.ts';
import { commands } from './commands/commands.ts';
import { checkConfig, configEnv, configFlags, configSchema, type LoadTestConfig, PLUGIN_NAME } from './config.ts';
import { contract, type LoadTestKeys } from './contract.ts';

const plugin: Plugin<LoadTestConfig, LoadTestKeys> = {
  name: PLUGIN_NAME,
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'Distributed load tests: an orchestrator, workers running virtual users, live results merged from HDR histograms',
  contract,
  scripts: findUp(import.meta.url, 'plugins/load-test/lua'),
  config: { schema: configSchema, env: configEnv, flags: configFlags, check: checkConfig },
  // Each role's code is imported when the role starts: loading the plugin (coord --help, coord plugins) stays cheap.
  roles: {
    orchestrator: async (ctx) => (await import('./roles/orchestrator.ts')).orchestratorRole(ctx),
    worker: async (ctx) => (await import('./roles/workers.ts')).workersRole(ctx),
  },
  defaultRoles: ['worker', 'orchestrator'],
  scenarios: async () => (await import('./conformance-scenarios.ts')).scenarios,
  commands,
};

export default plugin;
