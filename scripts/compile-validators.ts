// Build step (npm run build, npm test): the config validators of the schemas a
// command builds for one built-in plugin (coord run --plugin P, coord P status)
// or none, compiled ahead of time so those commands do not load ajv
// (core/config-validator.ts). Run on the compiled dist/: node dist/scripts/compile-validators.js
import { rmSync } from 'node:fs';
import { adapterNames } from '../adapters/index.ts';
import { configSchema } from '../core/config.ts';
import { writeValidators } from '../core/config-validator.ts';
import { builtinPlugins } from '../plugins/index.ts';

const dir = new URL('../validators/', import.meta.url);
rmSync(dir, { recursive: true, force: true }); // a schema that changed leaves no stale file behind
const plugins = await Promise.all(Object.values(builtinPlugins).map((load) => load()));
const schemas = [configSchema([], adapterNames), ...plugins.map((plugin) => configSchema([plugin], adapterNames))];
const files = writeValidators(schemas, dir);
console.log(`config validators: ${files.length} written to dist/validators`);
