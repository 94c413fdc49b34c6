// __NAME__: a coord plugin. Everything it contributes, in one screen.
//   coord run --plugin ./__NAME__
import type { Plugin } from 'coordkit/plugin';
import { checkConfig, configEnv, configSchema, type Config } from './config.ts';
import { contract, type Keys } from './contract.ts';
import { memberRole } from './roles/member.ts';
import { scenarios } from './scenarios.ts';

const plugin: Plugin<Config, Keys> = {
  name: '__NAME__',
  version: '0.1.0',
  coord: '__COORD_RANGE__',
  description: 'TODO: one sentence on what __NAME__ does',
  contract,
  scripts: new URL('./lua/', import.meta.url),
  config: { schema: configSchema, env: configEnv, check: checkConfig },
  roles: { member: memberRole },
  scenarios,
};

export default plugin;
