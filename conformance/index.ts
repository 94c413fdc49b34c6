// The shared conformance suites, for third-party adapters and plugins:
//   import { adapterSuite, contractSuite } from 'coordkit/conformance';
//   t.test('my adapter', (t) => adapterSuite(t, { name: 'mine', make: () => createMyBackend() }));
//   t.test('my plugin', (t) => contractSuite(t, { plugin, name: 'embedded', make: () => createBackend({}) }));
export { adapterSuite, type AdapterSuiteOptions } from './adapter-suite.ts';
export { contractSuite, type ContractSuiteOptions } from './contract-suite.ts';
export { scenarioContext, pluginConfig, type ScenarioContextOptions } from './scenario-context.ts';
