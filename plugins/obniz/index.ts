// obniz: one worker per IoT device, spread over slave processes through Redis,
// wire-compatible with obniz-app-sdk 1.5 (keys, values, channels, messages).
import { findUp } from '../../core/paths.ts';
import type { Plugin } from '../../core/plugin.ts';
import { commands } from './commands.ts';
import { checkConfig, configEnv, configFlags, configSchema, type ObnizConfig } from './config.ts';
import { contract, type ObnizKeys } from './contract.ts';
import { managerRole } from './roles/manager.ts';
import { masterRole } from './roles/master.ts';
import { slaveRole } from './roles/slave.ts';
import { scenarios } from './scenarios.ts';

const plugin: Plugin<ObnizConfig, ObnizKeys> = {
  name: 'obniz',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'One worker per obniz device, spread and re-spread over slave processes by managers (obniz-app-sdk compatible)',
  contract,
  scripts: findUp(import.meta.url, 'plugins/obniz/lua'),
  config: { schema: configSchema, env: configEnv, flags: configFlags, check: checkConfig },
  roles: { master: masterRole, manager: managerRole, slave: slaveRole },
  defaultRoles: ['master'],
  scenarios,
  commands,
};

export default plugin;
