// bench/load-scenario.mjs as TypeScript: the start-up bench runs both, since a
// .ts scenario is loaded through a TypeScript loader.
import type { Scenario } from '../plugins/load-test/public.ts';

const scenario: Scenario = {
  params: { baseUrl: 'http://127.0.0.1:1' },
  steps: [{ name: 'get', run: (user) => user.http.get('/', { metric: 'GET /' }) }],
};
export default scenario;
