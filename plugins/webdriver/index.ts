// webdriver: a W3C WebDriver grid for Selenium and WebdriverIO clients, on
// the Redis layout WebGrid documents. Clients: new Builder().usingServer('http://HOST:4444').
import { findUp } from '../../core/paths.ts';
import type { Plugin } from '../../core/plugin.ts';
import { commands } from './commands.ts';
import { checkConfig, configEnv, configSchema, type WebDriverConfig } from './config.ts';
import { contract, type WebDriverKeys } from './contract.ts';
import { apiRole } from './roles/api.ts';
import { gcRole } from './roles/gc.ts';
import { managerRole } from './roles/manager.ts';
import { nodeRole } from './roles/node.ts';
import { orchestratorRole } from './roles/orchestrator.ts';
import { proxyRole } from './roles/proxy.ts';
import { storageRole } from './roles/storage.ts';
import { scenarios } from './scenarios.ts';

const plugin: Plugin<WebDriverConfig, WebDriverKeys> = {
  name: 'webdriver',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'A W3C WebDriver grid (Selenium, WebdriverIO): proxy, managers, orchestrators with one Chromium node per session, API, gc and storage of screen recordings over Redis',
  contract,
  scripts: findUp(import.meta.url, 'plugins/webdriver/lua'),
  config: { schema: configSchema, env: configEnv, check: checkConfig },
  roles: { orchestrator: orchestratorRole, manager: managerRole, proxy: proxyRole, api: apiRole, gc: gcRole, node: nodeRole, storage: storageRole },
  defaultRoles: ['orchestrator', 'manager', 'proxy', 'api', 'gc', 'storage'],
  scenarios,
  commands,
};

export default plugin;
