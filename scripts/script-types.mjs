// Writes scripts.gen.ts for each plugin of this project (and the cron example and
// the plugin template) from its Lua headers. Run after a build when a header
// changes: npm run script-types (test/script-types.test.ts fails while one is stale).
import { fileURLToPath } from 'node:url';
import { writeScriptTypes } from '../dist/core/script-types.js';
import { SCRIPT_TYPE_TARGETS } from '../dist/scripts/script-type-targets.js';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [dir, typeName] of Object.entries(SCRIPT_TYPE_TARGETS)) {
  if (writeScriptTypes(`${root}${dir}`, typeName)) console.log(`wrote ${dir}/scripts.gen.ts`);
}
