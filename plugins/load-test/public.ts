// coordkit's entry for load-test scenario authors:
//   import { defineScenario } from 'coordkit/load-test';
//   export default defineScenario({ steps: [ … ] });
// The scenario API only (scenario.ts holds it with the checks the plugin runs).
export { defineScenario } from './scenario/scenario.ts';
export type { Resource, ResourceFactory, Scenario, Step, VirtualUser } from './scenario/scenario.ts';
