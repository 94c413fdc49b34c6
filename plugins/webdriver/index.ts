// webdriver: a W3C WebDriver grid for Selenium and WebdriverIO clients, on
// the Redis layout WebGrid documents. Clients: new Builder().usingServer('http://HOST:4444').
//
// Where things are: roles/ (one file per role), contract.ts (the keyspace),
// scripts.ts (the one caller of lua/*.lua), errors.ts (the grid's coded
// errors), config.ts, auth.ts (tokens and session secrets), access.ts (API
// keys and the grid secret a role checks against); session/
// (capabilities, the session log, timeouts, slots, a node's copy of its keys),
// manager/ (blocking waits, orchestrators' offers), proxy/ (managers, routes,
// HTTP metrics), relay/ (the command relay, BiDi, CDP and WebSocket relays,
// HTTP framing), http/ (serving, hops between processes), node/ (a session's
// node, its chromedriver, the warm pool, node processes), recording/,
// storage/, se/ (Selenium Grid's file, downloads and event extensions),
// views/ (/status, GraphQL, the API's views, the grid page).
import { findUp, type Plugin } from '../../entries/plugin.ts';
import { commands } from './commands.ts';
import { checkConfig, configEnv, configSchema, type WebDriverConfig } from './config.ts';
import { contract, type WebDriverKeys } from './contract.ts';

const plugin: Plugin<WebDriverConfig, WebDriverKeys> = {
  name: 'webdriver',
  version: '0.1.0',
  coord: '^0.1.0',
  description: 'A W3C WebDriver grid (Selenium, WebdriverIO): proxy, managers, orchestrators with one Chromium node per session, API, gc and storage of screen recordings over Redis',
  contract,
  scripts: findUp(import.meta.url, 'plugins/webdriver/lua'),
  config: { schema: configSchema, env: configEnv, check: checkConfig },
  // Each role's code is imported when the role starts: loading the plugin (coord --help, coord plugins) stays cheap.
  roles: {
    orchestrator: async (ctx) => (await import('./roles/orchestrator.ts')).orchestratorRole(ctx),
    manager: async (ctx) => (await import('./roles/manager.ts')).managerRole(ctx),
    proxy: async (ctx) => (await import('./roles/proxy.ts')).proxyRole(ctx),
    api: async (ctx) => (await import('./roles/api.ts')).apiRole(ctx),
    gc: async (ctx) => (await import('./roles/gc.ts')).gcRole(ctx),
    node: async (ctx) => (await import('./roles/node.ts')).nodeRole(ctx),
    storage: async (ctx) => (await import('./roles/storage.ts')).storageRole(ctx),
  },
  defaultRoles: ['orchestrator', 'manager', 'proxy', 'api', 'gc', 'storage'],
  scenarios: async () => (await import('./scenarios.ts')).scenarios,
  commands,
};

export default plugin;
