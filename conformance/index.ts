// coordkit's entry for the shared conformance suites, for third-party adapters and plugins:
//   import { adapterSuite, contractSuite } from 'coordkit/conformance';
//   t.test('my adapter', (t) => adapterSuite(t, { name: 'mine', make: () => createMyBackend() }));
//   t.test('my plugin', (t) => contractSuite(t, { plugin, name: 'embedded', make: () => createBackend({}) }));
// (the suites take tap's `t`, or any SuiteTest), and, for a harness of one's own,
// the keyspace snapshot and the contract check they use.
export { adapterSuite, type AdapterSuiteOptions } from './adapter-suite.ts';
export type { SectionOptions, SuiteTest } from './suite-test.ts';
export { contractSuite, type ContractSuiteOptions } from './contract-suite.ts';
export { scenarioContext, pluginConfig, type ScenarioContextOptions } from './scenario-context.ts';
export { pluginScenarios } from '../core/plugin.ts';
export { snapshotKeyspace, type KeySnapshot, type SnapshotOptions } from '../core/snapshot.ts';
export { checkSnapshot, formatDeviations, matchEntry, type Deviation, type DeviationKind } from '../core/contract-check.ts';
