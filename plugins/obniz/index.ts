// obniz: one worker per IoT device, spread over slave processes through Redis,
// wire-compatible with obniz-app-sdk 1.5 (keys, values, channels, messages).
import { findUp, type Plugin } from '../../entries/plugin.ts';
import { commands } from './commands.ts';
import { checkConfig, configEnv, configFlags, configSchema, type ObnizConfig } from './config.ts';
import { contract, type ObnizKeys } from './contract.ts';

const plugin: Plugin<ObnizConfig, ObnizKeys> = {
  name: 'obniz',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'One worker per obniz device, spread and re-spread over slave processes by managers (obniz-app-sdk compatible)',
  contract,
  scripts: findUp(import.meta.url, 'plugins/obniz/lua'),
  config: { schema: configSchema, env: configEnv, flags: configFlags, check: checkConfig },
  // Each role's code is imported when the role starts: loading the plugin (coord --help, coord plugins) stays cheap.
  roles: {
    master: async (ctx) => (await import('./roles/master.ts')).masterRole(ctx),
    manager: async (ctx) => (await import('./roles/manager.ts')).managerRole(ctx),
    slave: async (ctx) => (await import('./roles/slave-host.ts')).slaveRole(ctx),
  },
  defaultRoles: ['master'],
  scenarios: async () => (await import('./scenarios.ts')).scenarios,
  commands,
};

export default plugin;
